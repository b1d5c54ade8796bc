//! The staged reduce's shapes: which layout its tiles take, and which reductions take it
//! rather than the register-tile reduce.

use super::{linear_items, swizzleable, INLINE_MAX_WEIGHT, LOOKBACK, STAGED_MAX_ELEM};
use crate::error::{Error, Result};
use crate::tuning::cost::CombineCost;
use crate::tuning::{DeviceLimits, StateLayout, TileShape, Tuning};

/// Tile buffers of the staged reduce: while a block folds one, the others are being copied.
pub const REDUCE_STAGES: u32 = 3;

/// The staged reduce's shape in its swizzled form where that applies, the form its share
/// forms need (`staged == false` where it does not apply: before sm_80, or elements larger
/// than [`STAGED_MAX_ELEM`]): tiles of about 32 KiB in the staged scan's layouts
/// (power-of-two sizes as 256 threads of one 128-byte row each, arriving by tensor copies on
/// sm_90; other sizes linear, arriving by one bulk copy), so that two blocks of
/// [`REDUCE_STAGES`] buffers fit an SM.
pub fn staged_reduce_shape(
    size: usize,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<TileShape> {
    reduce_shape_in(size, limits, tuning, false)
}

/// The shape a reduction of `bytes` of `size`-byte elements with a combine of `cost` runs in
/// when it takes the staged reduce: [`staged_reduce_shape`], but in the linear layout (one
/// bulk copy per tile, runs an odd number of units apart) where [`reduce_linear`] says so.
///
/// ```
/// use monoscan::tuning::policy;
/// use monoscan::tuning::{cost::CombineCost, DeviceLimits, Tuning};
/// let (h100, t) = (DeviceLimits::for_arch(90), Tuning::default());
/// let cheap = CombineCost { weight: 1, ..CombineCost::default() };
/// // 1 GiB of 8-byte elements: 256 threads of 15 elements (120 bytes, 15 units apart).
/// let s = policy::reduce_shape(8, &cheap, 1 << 30, &h100, &t)?;
/// assert!(s.staged && s.linear && s.tma);
/// assert_eq!((s.block, s.items), (256, 15));
/// // 1 MiB of them: one 128-byte row per thread, by tensor copies.
/// let s = policy::reduce_shape(8, &cheap, 1 << 20, &h100, &t)?;
/// assert!(s.staged && !s.linear && s.tma);
/// assert_eq!((s.block, s.items), (256, 16));
/// // Before sm_90 both layouts arrive by cp.async: the swizzled one at every size.
/// let s = policy::reduce_shape(8, &cheap, 1 << 30, &DeviceLimits::for_arch(80), &t)?;
/// assert!(s.staged && !s.linear && !s.tma);
/// # Ok::<(), monoscan::Error>(())
/// ```
pub fn reduce_shape(
    size: usize,
    cost: &CombineCost,
    bytes: u64,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<TileShape> {
    if reduce_linear(size, cost, bytes, limits, tuning) {
        linear_reduce_shape(size, limits, tuning)
    } else {
        staged_reduce_shape(size, limits, tuning)
    }
}

/// The staged reduce's shape in the linear layout whatever the size ([`reduce_shape`] for
/// the inputs [`reduce_linear`] takes there).
pub fn linear_reduce_shape(
    size: usize,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Result<TileShape> {
    reduce_shape_in(size, limits, tuning, true)
}

/// The smallest input, in bytes, whose reduction [`reduce_linear`] takes to the linear layout.
pub const LINEAR_REDUCE_MIN_BYTES: u64 = 64 << 20;

/// Whether the staged reduce takes the linear layout for `bytes` of `size`-byte elements with
/// a combine of `cost` where the swizzled one also applies: with the TMA (sm_90 and newer,
/// where the swizzled layout arrives by tensor copies and the linear one by a bulk copy;
/// before, both by cp.async), for cheap combines of power-of-two sizes from 2 to 16 bytes, on
/// inputs of at least [`LINEAR_REDUCE_MIN_BYTES`]. On an H200
/// (medians of 20, alternated on one machine) their reductions at 1 GiB ran at
/// 1.00–1.02 of a read pass that way against 0.90–0.94 in tensor copies of the swizzled
/// layout, as every other size's did; below 64 MiB the linear layout was the slower (2-byte
/// elements at 2^24: 0.61–0.69 against 0.73; 8-byte ones at 2^20: 0.57–0.61 against
/// 0.66–0.68). 1-byte elements reduced faster in the swizzled layout at every size (autotuned,
/// two runs each: 0.86 against 0.82 at 1 GiB, 0.75 against 0.71 at 2^26 elements, 0.53–0.62
/// against 0.45–0.52 from 2^20 to 2^25). 32- and 64-byte elements, whose linear runs would
/// start a multiple of 128 bytes apart, measured no faster. Expensive combines keep the
/// swizzled layout, which their share form reads.
///
/// ```
/// use monoscan::tuning::policy;
/// use monoscan::tuning::{cost::CombineCost, DeviceLimits, Tuning};
/// let (h100, t) = (DeviceLimits::for_arch(90), Tuning::default());
/// let cheap = CombineCost { weight: 1, ..CombineCost::default() };
/// assert!(policy::reduce_linear(2, &cheap, 1 << 30, &h100, &t));
/// assert!(!policy::reduce_linear(1, &cheap, 1 << 30, &h100, &t));
/// assert!(!policy::reduce_linear(2, &cheap, 1 << 20, &h100, &t));
/// ```
pub fn reduce_linear(
    size: usize,
    cost: &CombineCost,
    bytes: u64,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> bool {
    tuning.tma
        && limits.cc >= 90
        && cost.weight <= INLINE_MAX_WEIGHT
        && (2..32).contains(&size)
        && bytes >= LINEAR_REDUCE_MIN_BYTES
}

fn reduce_shape_in(
    size: usize,
    limits: &DeviceLimits,
    tuning: &Tuning,
    linear: bool,
) -> Result<TileShape> {
    let tma = tuning.tma && limits.cc >= 90;
    let size1 = size.max(1);
    let layout = StateLayout::for_size(size);
    let (block, items) = if let Some(c) = tuning.reduce {
        (c.threads, c.items)
    } else if !linear && size1.is_power_of_two() && size1 <= STAGED_MAX_ELEM {
        (256, (128 / size1).max(1) as u32)
    } else {
        let items = linear_items(size1);
        let run = items as usize * size1;
        (((32 * 1024 / run) / 32 * 32).clamp(32, 1024) as u32, items)
    };
    let mut shape = TileShape::new(block, items, layout, LOOKBACK);
    shape.staged = limits.cc >= 80
        && size > 0
        && size <= STAGED_MAX_ELEM
        && shape.tile_bytes(size1) % 16 == 0
        && shape.reduce_smem_bytes(size) <= limits.shared_per_block_optin as usize;
    shape.linear = shape.staged && !swizzleable(size1, items);
    shape.tma = shape.staged && tma && (shape.linear || shape.tma_fits(size));
    if let Some(c) = tuning
        .reduce
        .filter(|_| limits.cc >= 80 && size > 0 && size <= STAGED_MAX_ELEM && !shape.staged)
    {
        return Err(Error::invalid(format!(
            "staged reduce shape {c}: a tile of {} bytes must be whole 16-byte chunks, and its {} stages ({} bytes of shared memory) fit the {} a block may use",
            shape.tile_bytes(size1),
            REDUCE_STAGES,
            shape.reduce_smem_bytes(size),
            limits.shared_per_block_optin
        )));
    }
    Ok(shape)
}

/// Whether reductions of `size`-byte elements with a combine of `cost` take the staged reduce
/// (where it applies) rather than the register-tile reduce: every size but cheap combines of
/// 4 bytes, which the register tile reduces at the read pass's speed and the staged reduce
/// does not (on an H200 at 2^28 elements, 0.99 of a read pass against 0.94 in the swizzled
/// layout, 1.01 in the linear one; but 0.66–0.69 against 0.68–0.71 from 2^14 to 2^22). 1-
/// and 2-byte elements the register tile loads one element per lane and access; larger or
/// odd sizes shrink its tiles, and so the bytes in flight (8- and 16-byte elements on an
/// H200: 1.01–1.02 of a read pass at 1 GiB in the linear staged reduce against 0.84–0.90,
/// and at 2^22 elements 0.80–0.94 against 0.62–0.74); expensive combines the staged reduce
/// folds in chains.
pub fn reduce_staged(size: usize, cost: &CombineCost) -> bool {
    size != 4 || cost.weight > INLINE_MAX_WEIGHT
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuning::cost::samples::cheap;
    use crate::tuning::ShapeChoice;

    #[test]
    fn a_chosen_reduce_shape_holds_in_both_layouts() {
        let hopper = DeviceLimits::for_arch(90);
        let t = Tuning {
            reduce: Some(ShapeChoice::new(224, 12)),
            ..Tuning::default()
        };
        // 7-byte elements: runs of 12 (84 bytes, 21 words apart), small inputs and large alike.
        for bytes in [1 << 20, 1 << 30] {
            let s = reduce_shape(7, &cheap(), bytes, &hopper, &t).unwrap();
            assert_eq!((s.block, s.items), (224, 12));
            assert!(s.staged && s.linear && s.tma, "{s:?}");
        }
        // 8-byte elements in runs of 16 are one 128-byte row each: the swizzled layout at every
        // size, also where the policy's own shapes take the linear one.
        let t = Tuning {
            reduce: Some(ShapeChoice::new(128, 16)),
            ..Tuning::default()
        };
        let small = reduce_shape(8, &cheap(), 1 << 20, &hopper, &t).unwrap();
        assert!(small.staged && !small.linear, "{small:?}");
        let large = reduce_shape(8, &cheap(), 1 << 30, &hopper, &t).unwrap();
        assert_eq!((large.block, large.items, large.linear), (128, 16, false));
        // Stages larger than a block's shared memory: an error naming the shape.
        let huge = Tuning {
            reduce: Some(ShapeChoice::new(1024, 64)),
            ..Tuning::default()
        };
        let e = reduce_shape(8, &cheap(), 1 << 30, &hopper, &huge).unwrap_err();
        assert!(e.to_string().contains("1024x64"), "{e}");
        // Where the staged reduce does not apply (before sm_80) the shape is not checked.
        assert!(
            !staged_reduce_shape(8, &DeviceLimits::for_arch(75), &huge)
                .unwrap()
                .staged
        );
    }
}
