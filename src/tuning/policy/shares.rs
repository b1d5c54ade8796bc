//! The staged reduce's share form: whether a reduction takes it, and how it splits the input
//! into one contiguous share per resident thread.

use super::INLINE_MAX_WEIGHT;
use crate::tuning::cost::CombineCost;
#[cfg(doc)]
use crate::tuning::TileShape;
use crate::tuning::Tuning;

/// Stage buffers of the share forms: the share scan's hold a step each, the staged reduce's
/// one 128-byte column of a row per thread. Two keep an expensive combine busy and leave
/// shared memory for three blocks of 256 threads per SM where a stage is one column.
pub const SHARE_STAGES: u32 = 2;

/// Stage buffers of the share scan under `tuning`: its `share_stages`, else
/// [`SHARE_STAGES`].
///
/// ```
/// use monoscan::tuning::{policy, Tuning};
/// assert_eq!(policy::share_scan_stages(&Tuning::default()), policy::SHARE_STAGES);
/// let one = Tuning { share_stages: Some(1), ..Tuning::default() };
/// assert_eq!(policy::share_scan_stages(&one), 1);
/// ```
pub fn share_scan_stages(tuning: &Tuning) -> u32 {
    tuning.share_stages.unwrap_or(SHARE_STAGES)
}

/// The fewest steps per share for which the share form runs: below, the input is too small
/// to give every resident thread a run of its own and the per-tile reduce takes it.
pub const MIN_SHARE_STEPS: u64 = 2;

/// Whether reductions with a combine of `cost` take the staged reduce's share form (where it
/// applies: [`TileShape::shares_fit`]): expensive combines, for which the
/// per-tile block reduction, a chain of combines that most threads wait out, costs more
/// than moving the tile. Cheap combines reach the read pass's speed tile by tile.
pub fn reduce_shares(cost: &CombineCost) -> bool {
    cost.weight > INLINE_MAX_WEIGHT
}

/// How the share form splits a reduction of `bytes` bytes among `threads` resident threads
/// in blocks of `block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shares {
    /// Bytes of each share (whole steps).
    pub share_bytes: u64,
    /// Whole shares: one per thread, `rows <= threads`.
    pub rows: u64,
    /// Blocks of the grid (`rows` threads rounded up to whole blocks).
    pub blocks: u64,
    /// Steps per share, each of `step_bytes` (a multiple of 128).
    pub steps: u32,
}

impl Shares {
    /// Bytes past the last whole share (fewer than a share), which the host folds apart.
    pub fn tail_bytes(&self, bytes: u64) -> u64 {
        bytes - self.rows * self.share_bytes
    }
}

/// The share split of `bytes` over at most `threads` threads in blocks of `block`, in steps
/// of `step_bytes` (a multiple of 128: [`TileShape::share_columns`] columns): shares of the
/// fewest steps that leave at most one per thread (the bytes past the last whole one, fewer
/// than a share, are left over), or `None` where that is fewer than [`MIN_SHARE_STEPS`]
/// steps or the tensor map cannot hold it (rows and share bytes below 2^31).
pub fn shares(bytes: u64, threads: u64, block: u32, step_bytes: u64) -> Option<Shares> {
    if threads == 0 || block == 0 || step_bytes == 0 || step_bytes % 128 != 0 {
        return None;
    }
    let steps = bytes.div_ceil(threads.saturating_mul(step_bytes));
    if steps < MIN_SHARE_STEPS {
        return None;
    }
    let share_bytes = steps.checked_mul(step_bytes)?;
    let rows = bytes / share_bytes;
    if rows == 0 || share_bytes > i32::MAX as u64 || rows > i32::MAX as u64 {
        return None;
    }
    Some(Shares {
        share_bytes,
        rows,
        blocks: rows.div_ceil(u64::from(block)),
        steps: steps as u32,
    })
}
