//! Shapes for small inputs: the staged scan's tiles of fewer threads and the staged reduce's
//! shorter runs, so that an input of a few tiles spreads over more SMs.

use super::{chains, staged_reduce_shape, staged_scan_shape, INLINE_MAX_WEIGHT};
use crate::error::Result;
use crate::tuning::cost::CombineCost;
use crate::tuning::{DeviceLimits, ShapeChoice, TileShape, Tuning};

/// Inputs of at most this many bytes take [`small_staged_shape`]'s tiles.
pub const SMALL_INPUT_BYTES: u64 = 1 << 20;

/// Threads per tile of [`small_staged_shape`].
pub const SMALL_TILE_THREADS: u32 = 128;

/// The staged scan's shape for inputs of at most [`SMALL_INPUT_BYTES`]: the runs of
/// [`staged_scan_shape`] in tiles of [`SMALL_TILE_THREADS`] threads, where that shape has
/// more threads (cheap combines of 2, 4, 8 and 16 bytes with the TMA); `None` elsewhere, and
/// where the tuning fixes the staged shape.
///
/// A small input fills few of the large tiles (2^16 `i32` values: six tiles of 352 threads,
/// on a device of 132 SMs), and each block loads, scans and stores its one tile in turn;
/// smaller tiles spread the input over more SMs. On an H100, tiles of 128 threads ran sum
/// i32 at 0.62 / 0.60 / 0.54 of copy at 2^14 / 2^16 / 2^18 elements against 0.53 / 0.50 /
/// 0.53, 2-byte elements at 0.51 / 0.52 / 0.53 against 0.41 / 0.38 / 0.42, 8-byte ones at
/// 0.61 / 0.61 / 0.56 against 0.49 / 0.53 / 0.52, 16-byte affine maps at 0.56 / 0.51 against
/// 0.49 / 0.48 at 2^14 / 2^16; from 4 MiB up the large tiles are as fast or faster (16-byte
/// elements at 2^18: 0.48 against 0.52).
///
/// ```
/// use monoscan::ops::Sum;
/// use monoscan::tuning::{cost::CombineCost, policy, DeviceLimits, Tuning};
/// use monoscan::Monoid;
/// let cheap = CombineCost::of(&Sum::<i32>::new().cuda());
/// let h100 = DeviceLimits::for_arch(90);
/// let s = policy::small_staged_shape(4, &cheap, &h100, &Tuning::default())?.unwrap();
/// assert_eq!((s.block, s.items), (128, 32));
/// # Ok::<(), monoscan::Error>(())
/// ```
pub fn small_staged_shape(
    size: usize,
    cost: &CombineCost,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<Option<TileShape>> {
    if tuning.staged.is_some() || cost.weight > INLINE_MAX_WEIGHT || !matches!(size, 2 | 4 | 8 | 16)
    {
        return Ok(None);
    }
    let base = staged_scan_shape(size, cost, limits, tuning)?;
    if !base.staged || !base.tma || base.linear || base.block <= SMALL_TILE_THREADS {
        return Ok(None);
    }
    let t = Tuning {
        staged: Some(ShapeChoice::new(SMALL_TILE_THREADS, base.items)),
        ..tuning.clone()
    };
    let mut small = staged_scan_shape(size, cost, limits, &t)?;
    small.chains = chains(cost, tuning, &small, size);
    Ok(Some(small))
}

/// Bytes of a thread's run in [`small_reduce_shape`]'s tiles (8 KiB tiles of 256 threads).
pub const SMALL_REDUCE_RUN_BYTES: usize = 32;

/// The staged reduce's shape for an input of `bytes` bytes of at most [`SMALL_INPUT_BYTES`]:
/// the threads of [`staged_reduce_shape`] in runs of [`SMALL_REDUCE_RUN_BYTES`], a quarter
/// of its 128-byte rows, for cheap combines of 1, 2, 4 and 8 bytes (4-byte ones reach the
/// staged reduce only where the register reduce is off); `None` elsewhere, for an input of
/// exactly one of the large tiles, and where the tuning fixes the reduce's tile.
///
/// Their 32-byte rows arrive by cp.async (the tensor copies take whole 128-byte rows).
///
/// A small input fills few of the 32 KiB tiles, and each block waits for its one copy, folds
/// its tile and takes part in the fold of the partials in turn; tiles of 8 KiB spread it over
/// four times the SMs. On an NVIDIA H200 (two runs each, alternated on one machine, inputs
/// of 16 KiB to 1 MiB) they reduced 1-byte elements at 0.67–0.72 of a read pass against
/// 0.58–0.62, 2-byte ones at 0.69–0.73 against 0.64–0.67, and 8-byte ones at 0.69–0.74 against
/// 0.69–0.72. At 2 MiB the two were within 0.04 of each other either way (1-byte elements
/// 0.64–0.65 against 0.60–0.61, 8-byte ones 0.67–0.69 against 0.70), and from 4 MiB up the
/// large tiles are faster (1-byte elements: 0.61 against 0.59; 8-byte ones: 0.72 against
/// 0.61–0.63). An
/// input of one whole large tile is one block's single copy, with no partials to fold: 2-byte
/// elements at 2^14 reduced at 0.86 that way against 0.73 in the small tiles.
///
/// ```
/// use monoscan::ops::Sum;
/// use monoscan::tuning::{cost::CombineCost, policy, DeviceLimits, Tuning};
/// use monoscan::Monoid;
/// let cheap = CombineCost::of(&Sum::<u16>::new().cuda());
/// let (h100, t) = (DeviceLimits::for_arch(90), Tuning::default());
/// // 256 KiB of 2-byte elements: 256 threads of 16 (32 bytes each).
/// let s = policy::small_reduce_shape(2, &cheap, 256 << 10, &h100, &t)?.unwrap();
/// assert_eq!((s.block, s.items), (256, 16));
/// // One whole tile of the large shape (256 x 64), and inputs above 1 MiB: the large shape.
/// assert!(policy::small_reduce_shape(2, &cheap, 32 << 10, &h100, &t)?.is_none());
/// assert!(policy::small_reduce_shape(2, &cheap, 2 << 20, &h100, &t)?.is_none());
/// # Ok::<(), monoscan::Error>(())
/// ```
pub fn small_reduce_shape(
    size: usize,
    cost: &CombineCost,
    bytes: u64,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<Option<TileShape>> {
    if tuning.reduce.is_some()
        || cost.weight > INLINE_MAX_WEIGHT
        || !matches!(size, 1 | 2 | 4 | 8)
        || bytes > SMALL_INPUT_BYTES
    {
        return Ok(None);
    }
    let base = staged_reduce_shape(size, limits, tuning)?;
    if !base.staged || base.linear || bytes == base.tile_bytes(size) as u64 {
        return Ok(None);
    }
    let t = Tuning {
        reduce: Some(ShapeChoice::new(
            base.block,
            (SMALL_REDUCE_RUN_BYTES / size) as u32,
        )),
        ..tuning.clone()
    };
    let small = staged_reduce_shape(size, limits, &t)?;
    Ok(small.staged.then_some(small))
}
