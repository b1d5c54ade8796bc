//! The shape policy: which tile shape each kernel family gets, for an element size on a device,
//! under a [`Tuning`]. Code generation renders whatever shape it is given; every choice of
//! shape lives here.

mod columns;
mod reduce;
mod rows;
mod shares;
mod small;

pub use columns::{column_shape, sized_column_shape, COLUMN_TILE_BYTES, MAX_COLUMNS, STRIP_BYTES};
pub use reduce::{
    linear_reduce_shape, reduce_linear, reduce_shape, reduce_staged, staged_reduce_shape,
    LINEAR_REDUCE_MIN_BYTES, REDUCE_STAGES,
};
pub use rows::{row_pace, row_staged_shape, segment_staged_shape};
pub use shares::{reduce_shares, share_scan_stages, shares, Shares, MIN_SHARE_STEPS, SHARE_STAGES};
pub use small::{
    small_reduce_shape, small_staged_shape, SMALL_INPUT_BYTES, SMALL_REDUCE_RUN_BYTES,
    SMALL_TILE_THREADS,
};

use super::cost::CombineCost;
use super::{CombineForm, DeviceLimits, ShapeChoice, StateLayout, TileShape, Tuning};
use crate::error::{Error, Result};

/// What a tile shape is for: the single-pass scan prefers larger tiles (fewer look-back
/// steps), the reduce and the reduce-then-scan smaller ones (more blocks in flight).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// The single-pass scan with its tile in registers.
    SinglePass,
    /// The tiled reduce and the reduce-then-scan.
    Tiles,
    /// The staged single-pass scan (tiles copied into shared memory; sm_80 and newer).
    Staged,
    /// Inputs that fit one small tile (about 4 KiB): one launch of one block.
    OneTile,
    /// The staged reduce (tiles copied into shared memory through several stages; sm_80 and
    /// newer).
    StagedReduce,
}

impl Purpose {
    /// Every purpose.
    pub const ALL: [Purpose; 5] = [
        Purpose::SinglePass,
        Purpose::Tiles,
        Purpose::Staged,
        Purpose::OneTile,
        Purpose::StagedReduce,
    ];
}

/// One predecessor per lane: wider windows (2 to 8 per lane) were measured slower, their
/// registers costing a resident block per SM.
const LOOKBACK: u32 = 1;

/// The largest estimated combine cost ([`CombineCost::weight`]) the kernels inline. Every
/// built-in operator but the modular matrix product weighs at most 16 (an add weighs 1, an
/// affine composition 3, an arg-min with its NaN ordering 13); one 64-bit remainder weighs 64,
/// one f64 division 32, one f64 `exp` 64.
pub const INLINE_MAX_WEIGHT: u32 = 24;

/// How the kernels call the combine: the tuning's form where it sets one; else inlined when
/// the combine's estimated cost is at most [`INLINE_MAX_WEIGHT`], outlined (one copy, called
/// per use) above it.
///
/// Every tiled kernel unrolls its tile: a thread's items, the warp and block scans, the
/// look-back's window. An inlined expensive combine is copied into every one of those places,
/// and NVRTC's optimizer and ptxas then take seconds: measured with NVRTC 13.0 for sm_90 (on
/// a 2-core machine, one compile at a time), the single-pass module of an f64 log-sum-exp
/// (`exp`, `log1p`) takes 3.6 s inlined and 0.24 s outlined, of 16-byte affine maps modulo a
/// 32-bit prime (64-bit remainders) 3.7 s and 0.30 s, and the latter's tiled reduce 3.2 s and
/// 0.17 s, against 0.14 to 0.39 s for every module of sum i32 (`docs/performance.md`). Cheap combines stay inlined: their
/// generated source, and so their machine code, is what it would be without this policy.
/// Items per thread do not depend on the form: outlined, a tile's code grows by one call per
/// item, and fewer items would add block-level combines per element, which a compute-bound
/// expensive combine pays for in run time. The outlined form still inlines the combine where
/// a call per use costs most and one copy serves many uses: the chained runs of the staged
/// kernels, the block-level steps (warp scans and reductions, the look-back's window fold),
/// kept as rolled loops, and the few combines a thread makes once per tile.
///
/// Bound by memory, an outlined combine can run faster inlined on some devices; the autotuner
/// times that ([`crate::tuning::autotune::Record::combine`]) and a record it writes replaces
/// this choice where the tuning leaves it open.
///
/// ```
/// use monoscan::ops::{MatMulMod, Sum};
/// use monoscan::tuning::{cost::CombineCost, policy, CombineForm, Tuning};
/// use monoscan::Monoid;
/// let t = Tuning::default();
/// let form = |c| policy::combine_form(&c, &t);
/// assert_eq!(form(CombineCost::of(&Sum::<i32>::new().cuda())), CombineForm::Inline);
/// assert_eq!(form(CombineCost::of(&MatMulMod::default().cuda())), CombineForm::Outlined);
/// ```
pub fn combine_form(cost: &CombineCost, tuning: &Tuning) -> CombineForm {
    tuning
        .combine
        .unwrap_or(if cost.weight > INLINE_MAX_WEIGHT {
            CombineForm::Outlined
        } else {
            CombineForm::Inline
        })
}

/// The tile shape for elements of `size` bytes on a device with `limits`, for `purpose`:
/// the tuning's shape where it sets one, else the policy's.
///
/// ```
/// use monoscan::tuning::{policy, DeviceLimits, Purpose, Tuning};
/// let h100 = DeviceLimits::for_arch(90);
/// // The staged scan of i32 on sm_90: 352 threads of one 128-byte row each, by tensor copies.
/// let s = policy::tile_shape(4, &h100, &Tuning::default(), Purpose::Staged)?;
/// assert!(s.staged && s.tma);
/// assert_eq!((s.block, s.items, s.min_blocks), (352, 32, 5));
/// # Ok::<(), monoscan::Error>(())
/// ```
pub fn tile_shape(
    size: usize,
    limits: &DeviceLimits,
    tuning: &Tuning,
    purpose: Purpose,
) -> Result<TileShape> {
    let layout = StateLayout::for_size(size);
    match purpose {
        Purpose::Staged => staged_shape(size, limits, tuning, layout),
        Purpose::StagedReduce => staged_reduce_shape(size, limits, tuning),
        Purpose::OneTile => {
            if let Some(c) = tuning.one_tile {
                return check(
                    TileShape::new(c.threads, c.items, layout, LOOKBACK),
                    size,
                    limits,
                );
            }
            // Up to 256 threads and 4 KiB (1,024 i32, 16 bytes per thread): a one-tile scan's
            // time is launch and memory latency, and fewer padding items shorten its fold and
            // scan.
            let mut shape = TileShape::new(256, (16 / size.max(1)).max(1) as u32, layout, LOOKBACK);
            while (shape.tile_bytes(size) > 4096
                || shape.smem_bytes(size) > limits.shared_per_block as usize)
                && shape.block > 32
            {
                shape.block /= 2;
            }
            check(shape, size, limits)
        }
        Purpose::SinglePass | Purpose::Tiles => {
            if let Some(c) = tuning.tile {
                let lookback = c.lookback.unwrap_or(LOOKBACK);
                return check(
                    TileShape::new(c.threads, c.items, layout, lookback),
                    size,
                    limits,
                );
            }
            // Measured on an H100: the single-pass scan wants large tiles, since its
            // look-back chain, not bandwidth, limits it; the reduce and reduce-then-scan
            // reach bandwidth with about 16 KiB per tile and more blocks in flight.
            let (block, items) = match (purpose, size) {
                (Purpose::SinglePass, 0..=4) => (256, 32),
                (Purpose::SinglePass, 5..=16) => (128, 16),
                (Purpose::SinglePass, 17..=32) => (128, 8),
                (Purpose::Tiles, 0..=1) => (256, 32),
                (Purpose::Tiles, 2) => (256, 24),
                (Purpose::Tiles, 3..=4) => (256, 16),
                (_, 5..=8) => (256, 8),
                // 32 KiB tiles: the deterministic (reduce-then-scan) Affine f64 2^26 on an
                // H200 at 0.626 of copy against 0.570 for 128x8.
                (Purpose::Tiles, 9..=16) => (128, 16),
                (_, 9..=16) => (128, 8),
                (_, 17..=32) => (128, 4),
                (_, 33..=64) => (128, 2),
                _ => (64, 1),
            };
            let mut shape = TileShape::new(block, items, layout, LOOKBACK);
            let limit = limits.shared_per_block as usize;
            while shape.smem_bytes(size) > limit && shape.items > 1 {
                shape.items /= 2;
            }
            while shape.smem_bytes(size) > limit && shape.block > 32 {
                shape.block /= 2;
            }
            check(shape, size, limits)
        }
    }
}

/// The staged scan's shape for elements of `size` bytes whose combine costs `cost`: the
/// tuning's shape where it sets one; else, for cheap combines of elements of whole 4-byte
/// words from 20 to [`LONG_RUN_MAX_ELEM`] bytes on sm_90, long runs in the linear layout
/// ([`long_run_items`] elements of about [`LONG_RUN_BYTES`] a thread, [`LONG_RUN_THREADS`]
/// threads a tile); else [`tile_shape`]'s.
///
/// A tile's block scan and look-back cost the same per thread whatever its run, so the longer
/// a thread's run, the fewer of those steps each element pays for. For elements up to 16
/// bytes one 128-byte row per thread already keeps them small; a thread's run of a larger
/// element holds a few elements only, and its block-scan steps (a shuffle per word, per step)
/// dominate: on an H100, 1 GiB of 40-byte elements scans at 0.92 of copy in runs of 13
/// against 0.71 in runs of about 128 bytes, 48-byte ones at 0.90 against 0.69, 64-byte ones
/// at 0.83 against 0.47. Expensive combines keep [`tile_shape`]'s runs: a long run is a
/// long chain of their latencies. So do sizes that are not whole words: an odd count of them
/// is no whole number of the linear layout's word groups
/// ([`TileShape::linear_group`]), and the run would be read a byte or two at a time.
///
/// ```
/// use monoscan::ops::Sum;
/// use monoscan::tuning::{cost::CombineCost, policy, DeviceLimits, Tuning};
/// use monoscan::Monoid;
/// let cheap = CombineCost::of(&Sum::<i32>::new().cuda());
/// let h100 = DeviceLimits::for_arch(90);
/// let s = policy::staged_scan_shape(40, &cheap, &h100, &Tuning::default())?;
/// assert!(s.linear && s.tma);
/// assert_eq!((s.block, s.items), (128, 13));
/// # Ok::<(), monoscan::Error>(())
/// ```
pub fn staged_scan_shape(
    size: usize,
    cost: &CombineCost,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<TileShape> {
    let long = tuning.staged.is_none()
        && tuning.tma
        && limits.cc >= 90
        && cost.weight <= INLINE_MAX_WEIGHT
        && (17..=LONG_RUN_MAX_ELEM).contains(&size)
        && size % 4 == 0;
    if !long {
        return tile_shape(size, limits, tuning, Purpose::Staged);
    }
    let t = Tuning {
        staged: Some(ShapeChoice::new(LONG_RUN_THREADS, long_run_items(size))),
        ..tuning.clone()
    };
    // An odd count of elements of 17 bytes or more is never a power-of-two number of
    // 16-byte chunks, so the shape is linear.
    tile_shape(size, limits, &t, Purpose::Staged)
}

/// The largest element that takes [`staged_scan_shape`]'s long runs, in bytes (the largest
/// element size measured).
pub const LONG_RUN_MAX_ELEM: usize = 64;

/// About how many bytes a thread's long run holds ([`staged_scan_shape`]).
pub const LONG_RUN_BYTES: usize = 512;

/// Threads per tile of [`staged_scan_shape`]'s long runs: three tiles of about 64 KiB fit an
/// SM.
pub const LONG_RUN_THREADS: u32 = 128;

/// Elements of `size` bytes in a long run: the odd count nearest [`LONG_RUN_BYTES`] (the
/// larger on a tie). Neighbouring threads' runs then start an odd number of the element's
/// access units apart, in distinct banks, wherever the element is an odd number of units;
/// where it is an even number (32 and 64 bytes in 16-byte units) an odd count still keeps the
/// runs off whole 128-byte periods (64-byte elements on an H100: 0.83 of copy in runs of 9,
/// 0.58 in runs of 12).
///
/// ```
/// use monoscan::tuning::policy::long_run_items;
/// assert_eq!([20, 24, 32, 40, 48, 64].map(long_run_items), [25, 21, 17, 13, 11, 9]);
/// ```
pub fn long_run_items(size: usize) -> u32 {
    let ideal = LONG_RUN_BYTES as f64 / size.max(1) as f64;
    let below = ((ideal.floor() as u32).max(1) - 1) | 1;
    let above = below + 2;
    if ideal - f64::from(below) < f64::from(above) - ideal {
        below
    } else {
        above
    }
}

/// The largest element the staged scan takes, in bytes: beyond it, a thread's element and
/// its running value crowd the registers, and the register kernel runs instead.
pub const STAGED_MAX_ELEM: usize = 128;

/// Whether runs of `items` elements of `size` bytes fit the swizzled layout: a power-of-two
/// size up to [`STAGED_MAX_ELEM`] and a power-of-two number of 16-byte chunks per thread.
fn swizzleable(size: usize, items: u32) -> bool {
    size.is_power_of_two()
        && size <= STAGED_MAX_ELEM
        && (items as usize * size) % 16 == 0
        && (items as usize * size / 16).is_power_of_two()
}

/// Whether the staged scan or reduce in `shape` (staged, its chains set) takes an input map
/// that reads `in_size`-byte inputs for `elem_size`-byte elements, `in_size` less than
/// `elem_size` (a widening map, such as `u8` flags to `u32` counts): the swizzled layout for
/// both (power-of-two sizes, whole power-of-two numbers of 16-byte chunks per run), elements
/// of at most 16 bytes, one chain, copies by `cp.async`. The inputs are staged by `cp.async` (a
/// tensor copy's row is a whole run of elements), so the plan turns the TMA off for such a map.
pub fn staged_widening(in_size: usize, elem_size: usize, shape: &TileShape) -> bool {
    shape.staged
        && !shape.tma
        && !shape.linear
        && shape.chains <= 1
        && in_size < elem_size
        && elem_size <= 16
        && swizzleable(elem_size, shape.items)
        && swizzleable(in_size, shape.items)
}

/// Items per thread of the linear layout for elements of `size` bytes: about 128 bytes a
/// run, a whole number of access groups ([`TileShape::linear_group`]: 4 elements of an odd
/// size, 2 of a size of 2 mod 4, fewer where that exceeds 128 bytes), and an odd number of
/// units between the runs of neighbouring threads where one exists (sizes that are not
/// multiples of 32 bytes), so that a warp's accesses to its runs fall in distinct banks.
fn linear_items(size: usize) -> u32 {
    let size = size.max(1);
    // Groups of at most a run's ideal bytes.
    let mut group = TileShape::linear_group(size, 4) as u32;
    while group > 1 && group as usize * size > 128 {
        group /= 2;
    }
    let unit = TileShape::unit(group as usize * size);
    let ideal = 128.0 / size as f64;
    let near = ((ideal / f64::from(group)).round() as u32).max(1) * group;
    let odd = |i: u32| (i as usize * size / unit) % 2 == 1;
    if odd(near) || (group as usize * size / unit) % 2 == 0 {
        return near;
    }
    // The odd neighbour nearer to the ideal (the smaller on a tie).
    let (below, above) = (near.saturating_sub(group).max(group), near + group);
    if below != near && odd(below) && (ideal - f64::from(below)) <= (f64::from(above) - ideal) {
        below
    } else {
        above
    }
}

/// Threads per tile of the staged scan's linear layout for runs of `run_bytes`: whole warps
/// whose runs fill at most 44 KiB with the TMA (five blocks per SM), 32 KiB without.
pub fn linear_threads(run_bytes: usize, tma: bool) -> u32 {
    let budget = if tma { 44 * 1024 } else { 32 * 1024 };
    ((budget / run_bytes.max(1)) / 32 * 32).clamp(32, 1024) as u32
}

/// The staged scan's shape (`staged == false` when elements of `size` bytes cannot be staged
/// on this device).
///
/// Elements whose size is a power of two (up to 16 bytes; up to 128 with the TMA) keep the
/// swizzled layout: on sm_90 352 threads of one 128-byte row each arrive by tensor copies.
/// Other sizes use the linear layout: runs of about 128 bytes (see [`linear_items`]) in tiles
/// of at most 44 KiB, arriving by one bulk copy on sm_90. Shared memory bounds the residency
/// of elements up to 16 bytes (`min_blocks` asks the compiler to keep registers below it);
/// larger elements leave the registers to the compiler, and the driver's occupancy of the
/// compiled kernel sets the first wave.
fn staged_shape(
    size: usize,
    limits: &DeviceLimits,
    tuning: &Tuning,
    layout: StateLayout,
) -> Result<TileShape> {
    let tma = tuning.tma && limits.cc >= 90;
    let size1 = size.max(1);
    let (block, items, lookback) = match tuning.staged {
        Some(c) => (c.threads, c.items, c.lookback.unwrap_or(LOOKBACK)),
        // Measured on an H200: residency is bounded by shared memory. With cp.async, many
        // blocks of 16 KiB tiles (128 threads, 13 blocks per SM) keep the most bytes in flight
        // for elements up to 8 bytes, and 16-byte elements do best with 32 KiB tiles of 256
        // threads. The TMA form, whose state sits in the tile's buffer, does best with the
        // largest tiles that five blocks fit: 44 KiB, 352 threads of one 128-byte row each
        // (two tensor copies per tile): sum i32 0.895 of copy against 0.887 with 24 KiB tiles
        // of 192 threads. Tiles that leave more shared memory unused lose: 320 threads 0.887,
        // 384 threads 0.881.
        None => match size {
            // 1-byte elements, 128 combines a run, do better in smaller tiles: on an H100
            // 0.94 of copy at 1 GiB with 128 threads (16 KiB, 13 blocks per SM) against 0.92
            // with 256 and 0.89 with 352.
            1 if tma => (128, 128, LOOKBACK),
            1 | 2 | 4 | 8 | 16 if tma => (352, (128 / size) as u32, LOOKBACK),
            32 | 64 | 128 if tma => (352, (128 / size) as u32, LOOKBACK),
            1 | 2 | 4 | 8 => (128, (128 / size) as u32, LOOKBACK),
            16 => (256, 8, LOOKBACK),
            32 | 64 | 128 => (256, (128 / size) as u32, LOOKBACK),
            _ => {
                let items = linear_items(size1);
                (linear_threads(items as usize * size1, tma), items, LOOKBACK)
            }
        },
    };
    let mut shape = TileShape::new(block, items, layout, lookback);
    let whole_chunks = shape.tile_bytes(size1) % 16 == 0;
    shape.staged = limits.cc >= 80 && size > 0 && size <= STAGED_MAX_ELEM && whole_chunks;
    shape.linear = shape.staged && !swizzleable(size1, items);
    shape.tma = shape.staged && tma && (shape.linear || shape.tma_fits(size));
    if shape.block == 0
        || shape.block % 32 != 0
        || shape.block > 1024
        || !(1..=8).contains(&lookback)
    {
        return Err(Error::invalid(format!(
            "staged shape {block}x{items}x{lookback}: threads must be a multiple of 32 up to 1024, look-back 1 to 8"
        )));
    }
    let smem = shape.staged_smem_bytes(size);
    if smem > limits.shared_per_block_optin as usize {
        return Err(Error::invalid(format!(
            "staged shape {block}x{items} needs {smem} bytes of shared memory (the device allows {} per block)",
            limits.shared_per_block_optin
        )));
    }
    if shape.tma {
        // Elements up to 16 bytes: as many blocks per SM as shared memory allows, registers
        // must never lower it. Larger ones: no bound (a bound the registers cannot meet would
        // spill).
        shape.min_blocks = if size <= 16 {
            limits.blocks_per_sm(shape.block, smem)
        } else {
            1
        };
    }
    Ok(shape)
}

/// The chains a thread's run of the staged scan is folded and scanned in
/// (`templates/lib/run_chains.cuh`): the tuning's count where it sets one, else 1 for a cheap
/// combine and 2 for one above [`INLINE_MAX_WEIGHT`], whose latency a single chain waits out
/// combine after combine. A count that does not split the run into whole groups of elements
/// falls back to 1.
pub fn chains(cost: &CombineCost, tuning: &Tuning, shape: &TileShape, size: usize) -> u32 {
    let want = tuning.chains.unwrap_or(if cost.weight > INLINE_MAX_WEIGHT {
        2
    } else {
        1
    });
    let group = if shape.linear {
        1
    } else {
        (16 / size.max(1)).max(1) as u32
    };
    if want > 1 && shape.items % want == 0 && (shape.items / want) % group == 0 {
        want
    } else {
        1
    }
}

fn check(shape: TileShape, size: usize, limits: &DeviceLimits) -> Result<TileShape> {
    if shape.block == 0
        || shape.block % 32 != 0
        || shape.block > 1024
        || shape.items == 0
        || !(1..=8).contains(&shape.lookback)
    {
        return Err(Error::invalid(format!(
            "tile shape {}x{}x{}: threads must be a multiple of 32 up to 1024, items at least 1, look-back 1 to 8",
            shape.block, shape.items, shape.lookback
        )));
    }
    let limit = limits.shared_per_block as usize;
    if shape.smem_bytes(size) > limit {
        return Err(Error::invalid(format!(
            "elements of {size} bytes are too large: a tile of {}x{} needs {} bytes of shared memory (the device allows {limit} per block)",
            shape.block,
            shape.items,
            shape.smem_bytes(size)
        )));
    }
    Ok(shape)
}

/// The tile of stream compaction's register kernel (`select_registers`) for input elements of
/// `in_size` bytes (the kernel scans u32 keep counts): 256 threads of up to 64 bytes each, at
/// most 16 items per thread (one bit each), fewer threads where the transposition buffer of
/// raw elements would pass the static shared memory limit.
pub fn select_shape(in_size: usize, limits: &DeviceLimits) -> Result<TileShape> {
    let limit = limits.shared_per_block as usize;
    let mut shape = TileShape::new(
        256,
        (64 / in_size.max(1)).clamp(1, 16) as u32,
        StateLayout::for_size(4),
        LOOKBACK,
    );
    let smem = |s: &TileShape| {
        (s.block as usize / 32)
            .saturating_mul(33 * s.items as usize)
            .saturating_mul(in_size)
            .saturating_add(64)
    };
    while smem(&shape) > limit && shape.block > 32 {
        shape.block /= 2;
    }
    if smem(&shape) > limit {
        return Err(Error::invalid(format!(
            "elements of {in_size} bytes are too large for fused compaction (at most {} bytes)",
            (limit - 64) / 33
        )));
    }
    check(shape, 4, limits)
}

/// The tile of the staged select kernel (`select_staged`: the tile copied into shared memory,
/// no elements held in registers while the block looks back) for input elements of `in_size`
/// bytes: 128 threads, tiles of 16 KiB (4 KiB and 8 KiB for 1- and 2-byte elements, at most 32
/// rounds per warp: one ballot per lane), or the tuning's `select` shape. `None` where it does
/// not apply (before sm_80, or sizes other than 1, 2, 4, 8 and 16 bytes): the register kernel
/// ([`select_shape`]) runs instead.
pub fn select_staged_shape(
    in_size: usize,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<Option<TileShape>> {
    if limits.cc < 80 || !matches!(in_size, 1 | 2 | 4 | 8 | 16) {
        return Ok(None);
    }
    let ShapeChoice { threads, items, .. } = tuning.select.unwrap_or(ShapeChoice::new(
        128,
        (16 * 1024 / (128 * in_size)).min(32) as u32,
    ));
    let mut shape = TileShape::new(threads, items, StateLayout::for_size(4), LOOKBACK);
    shape.staged = true;
    // One bulk copy per tile and an L2 prefetch ahead (sm_90 and newer), as the staged scan's
    // TMA form.
    shape.tma = limits.cc >= 90 && tuning.tma;
    let bytes = shape.tile_bytes(in_size);
    let limit = limits.shared_per_block as usize;
    if threads == 0
        || threads % 32 != 0
        || threads > 1024
        || !(1..=32).contains(&items)
        || bytes % (16 * threads as usize) != 0
        || bytes > limit
    {
        return Err(Error::invalid(format!(
            "select shape {threads}x{items} for {in_size}-byte elements: threads must be a multiple of 32 up to 1024, items 1 to 32, whole 16-byte chunks per thread and at most {limit} bytes per tile"
        )));
    }
    Ok(Some(shape))
}

/// Threads per block of the textbook kernels for elements of `size` bytes: the largest power
/// of two up to 1024 whose Brent-Kung section (2 x threads elements) fits in static shared
/// memory.
pub fn textbook_block(size: usize, limits: &DeviceLimits) -> Result<u32> {
    let limit = limits.shared_per_block as usize;
    let mut block = 1024u32;
    while block >= 32 && (2 * block as usize + 1).saturating_mul(size) > limit {
        block /= 2;
    }
    if block < 32 {
        return Err(Error::invalid(format!(
            "elements of {size} bytes are too large for the textbook kernels (at most {} bytes)",
            limit / 65
        )));
    }
    Ok(block)
}

#[cfg(test)]
mod tests;
