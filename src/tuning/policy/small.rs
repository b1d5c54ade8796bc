//! The staged scan's shape for small inputs: tiles of fewer threads, so that an input of a
//! few tiles spreads over more SMs.

use super::{chains, staged_scan_shape, INLINE_MAX_WEIGHT};
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
