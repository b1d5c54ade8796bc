//! Tests of the tiling policy, one file per policy: the tiles of the scans and reductions, the
//! staged row kernels, the share scan and reduce, and the tiles of small inputs.

mod rows;
mod shares;
mod small;
mod tiles;

use super::*;

fn hopper() -> DeviceLimits {
    DeviceLimits::for_arch(90)
}

fn shape(size: usize, cc: u32, purpose: Purpose) -> Result<TileShape> {
    tile_shape(
        size,
        &DeviceLimits::for_arch(cc),
        &Tuning::default(),
        purpose,
    )
}
