//! The L2 prefetch of the TMA kernels (the staged scan and compaction on sm_90 and newer): how
//! far ahead of its own tile a block asks L2 for a tile, and each launch's plan around its first
//! wave of resident blocks (`ms_prefetch` in `templates/tiled.cu`).

use crate::error::{Error, Result};

/// How far ahead of its own tile a block of the TMA form asks L2 to prefetch, in bytes:
/// 3 MiB, the best of 0, 3, 6 and 9 MiB on an H200 (docs/performance.md: sum i32 0.85 of
/// copy against 0.77 without). Further ahead L2 evicts prefetched tiles before they are
/// claimed: 12 MiB was slower than no prefetch at all.
pub const PREFETCH_BYTES: usize = 3 << 20;

/// The TMA form's prefetch distance in tiles of `tile_bytes`: [`PREFETCH_BYTES`], or
/// `MONOSCAN_PREFETCH_KIB=<KiB>` (0 turns prefetching off; for tuning).
///
/// ```
/// use monoscan::codegen::{prefetch_tiles, tile_shape, Purpose};
/// // The staged scan of i32 on sm_90 loads 44 KiB tiles by tensor copies and, unless
/// // MONOSCAN_PREFETCH_KIB says otherwise, prefetches 3 MiB (69 whole tiles) ahead.
/// let s = tile_shape(4, 90, Purpose::Staged)?;
/// if std::env::var("MONOSCAN_TMA").is_err() && std::env::var("MONOSCAN_STAGED").is_err() {
///     assert!(s.staged && s.tma);
///     assert_eq!((s.block, s.items), (352, 32));
/// }
/// if std::env::var("MONOSCAN_PREFETCH_KIB").is_err() {
///     assert_eq!(prefetch_tiles(s.tile_bytes(4))?, 69);
/// }
/// # Ok::<(), monoscan::Error>(())
/// ```
pub fn prefetch_tiles(tile_bytes: usize) -> Result<u32> {
    let bytes = match std::env::var("MONOSCAN_PREFETCH_KIB") {
        Err(_) => PREFETCH_BYTES,
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(kib) if kib <= 1 << 20 => kib << 10,
            _ => {
                return Err(Error::invalid(format!(
                    "MONOSCAN_PREFETCH_KIB={v}: expected a number of KiB from 0 to 1048576"
                )))
            }
        },
    };
    Ok((bytes / tile_bytes.max(1)) as u32)
}

/// The L2 prefetch plan of one launch of a TMA kernel, passed to it by value (`ms_prefetch` in
/// `templates/tiled.cu`, the same two words).
///
/// The block that claims tile `t` asks L2 for tile `t + ahead`, unless that tile is one of the
/// launch's first `first_wave`: the resident blocks claim those at once and load them directly,
/// and asking L2 for a tile that another block's tensor copy is fetching at the same moment
/// only adds traffic while the whole first wave waits for its data (session 9 on an H200: sum
/// i32 +0.003 of copy). So every tile past the first wave is asked for once. With `first_wave`
/// 0 every block asks; with `ahead` 0 none does.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefetchPlan {
    /// Tiles ahead of its own that a block asks L2 for (0: no prefetching).
    pub ahead: u32,
    /// Tiles the launch's resident blocks claim at once, none of which is prefetched.
    pub first_wave: u32,
}

impl PrefetchPlan {
    /// The plan for tiles of `tile_bytes` when `resident` blocks fit the device at once:
    /// `ahead` is [`prefetch_tiles`]; `MONOSCAN_FIRST_WAVE=0` drops the first-wave rule (every
    /// block prefetches, as before session 9; for comparison).
    ///
    /// ```
    /// use monoscan::codegen::PrefetchPlan;
    /// let vars = ["MONOSCAN_PREFETCH_KIB", "MONOSCAN_FIRST_WAVE"];
    /// if vars.iter().all(|v| std::env::var(v).is_err()) {
    ///     // 24 KiB tiles, 132 SMs of 9 blocks: 128 tiles ahead; the first 1188 tiles are
    ///     // loaded directly, and the blocks of tiles 1060..1188 prefetch tiles 1188..1316.
    ///     let plan = PrefetchPlan::new(24 << 10, 132 * 9)?;
    ///     assert_eq!((plan.ahead, plan.first_wave), (128, 1188));
    ///     assert_eq!(plan.target(0), None);
    ///     assert_eq!(plan.target(1059), None);
    ///     assert_eq!(plan.target(1060), Some(1188));
    ///     assert_eq!(plan.target(5000), Some(5128));
    /// }
    /// # Ok::<(), monoscan::Error>(())
    /// ```
    pub fn new(tile_bytes: usize, resident: u32) -> Result<Self> {
        let ahead = prefetch_tiles(tile_bytes)?;
        let first_wave = match std::env::var("MONOSCAN_FIRST_WAVE").as_deref() {
            Err(_) | Ok("1") => resident,
            Ok("0") => 0,
            Ok(v) => {
                return Err(Error::invalid(format!(
                    "MONOSCAN_FIRST_WAVE={v}: expected 1 (the first wave's tiles are not prefetched) or 0 (every block prefetches)"
                )))
            }
        };
        Ok(PrefetchPlan { ahead, first_wave })
    }

    /// The tile that the block claiming `tile` asks L2 for, if any: the kernel's rule, before
    /// its check that the target is a full tile of the input.
    pub fn target(&self, tile: u32) -> Option<u32> {
        let target = u64::from(tile) + u64::from(self.ahead);
        (self.ahead != 0 && target >= u64::from(self.first_wave))
            .then(|| u32::try_from(target).ok())
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_distance_is_bytes_over_tile_bytes() {
        // (The environment variables are left alone: tests run in parallel.)
        if std::env::var("MONOSCAN_PREFETCH_KIB").is_err() {
            assert_eq!(prefetch_tiles(24 * 1024).unwrap(), 128);
            assert_eq!(prefetch_tiles(32 * 1024).unwrap(), 96);
            assert_eq!(prefetch_tiles(PREFETCH_BYTES * 2).unwrap(), 0);
        }
    }

    /// How often each tile below `tiles` is asked for under `plan`.
    fn asked(plan: PrefetchPlan, tiles: u32) -> Vec<u32> {
        let mut count = vec![0u32; tiles as usize];
        for t in 0..tiles {
            if let Some(u) = plan.target(t).filter(|&u| u < tiles) {
                count[u as usize] += 1;
            }
        }
        count
    }

    #[test]
    fn every_tile_past_the_first_wave_is_prefetched_once() {
        for (ahead, first_wave) in [(128, 1188), (96, 792), (1, 10), (3, 10), (128, 0), (20, 5)] {
            let plan = PrefetchPlan { ahead, first_wave };
            let count = asked(plan, 5000);
            for (u, &c) in count.iter().enumerate() {
                let want = u32::from(u as u32 >= first_wave.max(ahead));
                assert_eq!(c, want, "tile {u} under {plan:?}");
            }
        }
    }

    #[test]
    fn without_a_distance_nothing_is_prefetched() {
        let plan = PrefetchPlan {
            ahead: 0,
            first_wave: 0,
        };
        assert!(asked(plan, 1000).iter().all(|&c| c == 0));
    }
}
