//! The staged row scan's shape (`templates/row_staged.cu`): its threads per tile by the
//! size of the lifted elements and the number of rows, the residency its registers allow, and
//! the pace of its first wave.

use super::staged_shape;
use crate::error::{Error, Result};
use crate::tuning::{DeviceLimits, Pace, StateLayout, TileShape, Tuning};

/// The staged row scan's TMA form, by the size of the lifting's elements and whether the
/// launch scans one row or several: (registers a thread of its kernel needs, threads per
/// tile). ptxas, `--ptxas-options=-v`, on the row kernels of the built-in operators for sm_90:
/// elements up to 8 bytes (values up to 4 bytes) fit in 32 registers; at 32, 16-byte ones
/// (i64, f64 values) spill 4 to 12 bytes and 24-byte ones (16-byte values) 80 to 126; at 40
/// the latter still spill 16 to 32 bytes, at 48 none do.
///
/// One row (a 1-D reverse scan) takes the largest tiles whose blocks, as many as shared
/// memory allows, leave those registers, as the 1-D staged scan does: 352 threads (5 blocks
/// of 44 KiB tiles per SM), 384 (4 blocks), 320 (4 blocks); sum i32 reverse at 2^28 ran at
/// 0.99 of copy on an H100 with 352 threads against 0.97 with 128. Batches of rows do better
/// with smaller tiles, more of them in flight per SM (sum f32 and affine f32 rows on an H100,
/// fractions of copy against 352 and 384 threads): values up to 4 bytes take 128 threads (16
/// KiB tiles, 13 blocks per SM; 4,096 x 4,096 rows 0.95-0.96 against 0.89-0.90, 16,384 x
/// 1,024 0.87-0.88 against 0.84, 64 x 152,064 0.80 against 0.77; 64, 96 and 160 threads did
/// worse on at least one shape), 8-byte values 256 (32 KiB, 6 blocks; affine rows 0.99
/// against 0.96, 0.92 with 128 threads); 16-byte values keep 320. (An outlined combine,
/// called per use, can still spill: the forward kernel of the 2x2 matrix product mod p
/// spills 144 bytes at 48 registers.)
///
/// Rows given by offsets take the same bounds: their kernel keeps the mask of its tile's row
/// starts in shared memory, which lowers the blocks per SM instead (12 of 128 threads for
/// values of 2 and 4 bytes, 11 for 1 byte, 6 of 256 for 8 bytes), and ptxas reports no
/// spills at the registers those leave (sum u8, f32, i64 and f64, forward and reverse).
pub(super) fn row_staged_registers(lifted_size: usize, rows: u64) -> (u32, u32) {
    match (lifted_size, rows <= 1) {
        (0..=8, true) => (32, 352),
        (0..=8, false) => (32, 128),
        (9..=16, true) => (40, 384),
        (9..=16, false) => (40, 256),
        _ => (48, 320),
    }
}

/// The pace of the first wave of a staged row scan over `rows` rows of `row_len` values in
/// tiles of `tile` values under `pace`: a batch of more than one row whose rows fit in a tile
/// is not paced unless the tuning sets a rate. Its look-backs end at the row starts within a
/// tile or the one before it, and unpaced it ran faster on an H100 (16 KiB tiles of f32 rows,
/// fractions of copy: 4,096 x 4,096 0.97 against 0.95, 16,384 x 1,024 0.91 against 0.88).
/// Rows longer than a tile are paced as the 1-D scan is: their tiles wait for the loads of the
/// tiles before them in the row, which pacing lands in tile order (on an H200, 64 x 152,064
/// f32 rows, 2,376 tiles, paced at about 3,400 GB/s: 0.705 to 0.728 of copy against 0.701 to
/// 0.707 unpaced, four runs each, alternated on two machines). One row is paced as the 1-D
/// scan is. A launch of one wave is never paced ([`crate::tuning::PrefetchPlan::new`]).
///
/// ```
/// use monoscan::tuning::{policy, Pace};
/// assert_eq!(policy::row_pace(Pace::Auto, 1000, 1024, 4096), Pace::Off);
/// assert_eq!(policy::row_pace(Pace::Auto, 4096, 4096, 4096), Pace::Off);
/// assert_eq!(policy::row_pace(Pace::Auto, 64, 152_064, 4096), Pace::Auto);
/// assert_eq!(policy::row_pace(Pace::Auto, 1, 1024, 4096), Pace::Auto);
/// assert_eq!(policy::row_pace(Pace::Gbps(2000), 1000, 1024, 4096), Pace::Gbps(2000));
/// assert_eq!(policy::row_pace(Pace::Off, 64, 152_064, 4096), Pace::Off);
/// ```
pub fn row_pace(pace: Pace, rows: u64, row_len: u64, tile: u64) -> Pace {
    match pace {
        Pace::Auto if rows > 1 && row_len <= tile => Pace::Off,
        p => p,
    }
}

/// Blocks of `threads` threads one SM of sm_90 or newer holds when each thread keeps
/// `registers` registers: an SM's 65,536 registers sit in four quarters of 16,384, a block's
/// warps spread over the quarters, and a warp's registers are allocated 256 at a time, so
/// `__launch_bounds__(threads, blocks)` caps a thread at 16,384 / (32 x ceil(warps / 4))
/// rounded down to a multiple of 8 (32 for five blocks of 352 threads: 14 warps a quarter).
fn blocks_with_registers(threads: u32, registers: u32) -> u32 {
    let warps_per_quarter = 16_384 / (32 * registers.max(8));
    (4 * warps_per_quarter / threads.div_ceil(32).max(1)).max(1)
}

/// The shape of the staged row scan (`templates/row_staged.cu`) for values of `value_size`
/// bytes whose segmented lifting has elements of `lifted_size` bytes, in a launch over `rows`
/// rows: the staged scan's tile of values ([`super::Purpose::Staged`]: one 128-byte row per
/// thread, by tensor copies on sm_90), with the look-back state laid out for the lifted
/// elements, and in the TMA form the residency its shared memory allows once the block's
/// state holds lifted warp sums. `None` where the staged scan does not apply to such values
/// (before sm_80, or sizes other than 1, 2, 4, 8 and 16 bytes): the register row kernel runs
/// instead.
///
/// The TMA form asks for as many blocks per SM as shared memory allows
/// (`__launch_bounds__(threads, blocks)`), which caps a thread's registers; its threads per
/// tile depend on the lifted elements' size and on whether there is more than one row (see
/// `row_staged_registers`), chosen so that the bound leaves the lifted elements their
/// registers and the kernel does not spill.
/// A shape the tuning sets is taken as it is, with the blocks its shared memory allows.
///
/// ```
/// use monoscan::tuning::{policy, DeviceLimits, Tuning};
/// let h100 = DeviceLimits::for_arch(90);
/// let t = Tuning::default();
/// // Rows of f32: 4-byte values, the lifting's {value, flag} 8 bytes.
/// let s = policy::row_staged_shape(4, 8, 1000, &h100, &t)?.unwrap();
/// assert!(s.staged && s.tma);
/// assert_eq!((s.block, s.items, s.min_blocks), (128, 32, 13));
/// // One row: the 1-D staged scan's tile.
/// let s = policy::row_staged_shape(4, 8, 1, &h100, &t)?.unwrap();
/// assert_eq!((s.block, s.items, s.min_blocks), (352, 32, 5));
/// // Rows of f64 (16-byte lifted elements) and of 16-byte affine maps (24 bytes lifted).
/// let s = policy::row_staged_shape(8, 16, 1000, &h100, &t)?.unwrap();
/// assert_eq!((s.block, s.items, s.min_blocks), (256, 16, 6));
/// let s = policy::row_staged_shape(16, 24, 1000, &h100, &t)?.unwrap();
/// assert_eq!((s.block, s.items, s.min_blocks), (320, 8, 4));
/// // On sm_80, cp.async and no bound on blocks; 12-byte values are not staged.
/// let a100 = DeviceLimits::for_arch(80);
/// let s = policy::row_staged_shape(4, 8, 1000, &a100, &t)?.unwrap();
/// assert!(s.staged && !s.tma && s.min_blocks == 0);
/// assert!(policy::row_staged_shape(12, 16, 1000, &h100, &t)?.is_none());
/// # Ok::<(), monoscan::Error>(())
/// ```
pub fn row_staged_shape(
    value_size: usize,
    lifted_size: usize,
    rows: u64,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<Option<TileShape>> {
    staged_rows_shape(value_size, lifted_size, rows, false, limits, tuning)
}

/// The shape of the staged row scan over `rows` rows given by offsets (`segment_staged`):
/// [`row_staged_shape`]'s, with the residency of the TMA form that the mask of a tile's row
/// starts in shared memory leaves ([`TileShape::row_staged_state_bytes`]).
///
/// ```
/// use monoscan::tuning::{policy, DeviceLimits, Tuning};
/// let h100 = DeviceLimits::for_arch(90);
/// let t = Tuning::default();
/// let s = policy::segment_staged_shape(4, 8, 1000, &h100, &t)?.unwrap();
/// assert_eq!((s.block, s.items, s.min_blocks), (128, 32, 12));
/// let s = policy::segment_staged_shape(8, 16, 1000, &h100, &t)?.unwrap();
/// assert_eq!((s.block, s.items, s.min_blocks), (256, 16, 6));
/// let s = policy::segment_staged_shape(1, 8, 1000, &h100, &t)?.unwrap();
/// assert_eq!((s.block, s.items, s.min_blocks), (128, 128, 11));
/// # Ok::<(), monoscan::Error>(())
/// ```
pub fn segment_staged_shape(
    value_size: usize,
    lifted_size: usize,
    rows: u64,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<Option<TileShape>> {
    staged_rows_shape(value_size, lifted_size, rows, true, limits, tuning)
}

fn staged_rows_shape(
    value_size: usize,
    lifted_size: usize,
    rows: u64,
    segments: bool,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<Option<TileShape>> {
    let mut shape = staged_shape(
        value_size,
        limits,
        tuning,
        StateLayout::for_size(lifted_size),
    )?;
    // The row kernel stages swizzled tiles of values of one 16-byte chunk at most.
    if !shape.staged || shape.linear || !matches!(value_size, 1 | 2 | 4 | 8 | 16) {
        return Ok(None);
    }
    let (registers, block) = row_staged_registers(lifted_size, rows);
    let own = tuning.staged.is_none() && shape.tma;
    if own {
        shape.block = block;
    }
    let smem = shape.row_staged_smem_bytes(value_size, lifted_size, segments);
    if smem > limits.shared_per_block_optin as usize {
        return Err(Error::invalid(format!(
            "staged row shape {}x{} needs {smem} bytes of shared memory (the device allows {} per block)",
            shape.block, shape.items, limits.shared_per_block_optin
        )));
    }
    if shape.tma {
        shape.min_blocks = limits.blocks_per_sm(shape.block, smem);
        if own {
            shape.min_blocks = shape
                .min_blocks
                .min(blocks_with_registers(shape.block, registers));
        }
    }
    Ok(Some(shape))
}
