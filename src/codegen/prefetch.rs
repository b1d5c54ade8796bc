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
    let kib = env_u32(
        "MONOSCAN_PREFETCH_KIB",
        "KiB",
        (PREFETCH_BYTES >> 10) as u32,
        1 << 20,
    )?;
    Ok((((kib as usize) << 10) / tile_bytes.max(1)) as u32)
}

/// The L2 prefetch plan of one launch of a TMA kernel, and the pacing of its first wave's copies,
/// passed to it by value (`ms_prefetch` in `templates/tiled.cu`, the same four words).
///
/// The block that claims tile `t` asks L2 for tile `t + ahead`, unless that tile is one of the
/// launch's first `first_wave`: the resident blocks claim those at once and load them directly,
/// and asking L2 for a tile that another block's tensor copy is fetching at the same moment
/// only adds traffic while the whole first wave waits for its data (session 9 on an H200: sum
/// i32 +0.003 of copy). So every tile past the first wave is asked for once. With `first_wave`
/// 0 every block asks; with `ahead` 0 none does. The block's threads ask for that tile's
/// 128-byte rows (in the staged scan each thread its own) once the block's own copies are
/// issued: a bulk prefetch ahead of them delayed them (session 11, sum i32 +0.010 of copy on
/// an H200, +0.027 on an H100).
///
/// The block that claims tile `t < paced` issues its copy and its prefetch no earlier than the
/// launch's clock (the global timer as tile 0's claimant read it) plus `t * pace_ps`, so that
/// the first wave's copies reach DRAM in tile order and land in that order. Otherwise the whole
/// wave lands together several microseconds in and then looks back at once (session 11 on an
/// H200: sum i32 +0.006 of copy). Pacing only ever delays a copy; it never changes what is read.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefetchPlan {
    /// Tiles ahead of its own that a block asks L2 for (0: no prefetching).
    pub ahead: u32,
    /// Tiles the launch's resident blocks claim at once, none of which is prefetched.
    pub first_wave: u32,
    /// Picoseconds between the earliest issue times of consecutive paced tiles (0: no pacing):
    /// the block that claims tile `t < paced` issues its copy no earlier than the launch's
    /// clock plus `t * pace_ps`.
    pub pace_ps: u32,
    /// How many of the launch's first tiles are paced.
    pub paced: u32,
}

/// The default pace of a launch's first tiles, as a share of the device's peak DRAM bandwidth:
/// 0.7, about 3,400 GB/s on an H200 (4,800 GB/s peak), where 3,000 and 3,500 GB/s paced sum i32
/// at 2^28 best (docs/performance.md, session 11).
pub const PACE_SHARE: f64 = 0.7;

/// How many first waves of tiles are paced unless `MONOSCAN_PACE_WAVES` says otherwise: one,
/// which paced better than two or four (session 11).
pub const PACE_WAVES: u32 = 1;

/// The pacing of a launch of `tiles` tiles of `tile_bytes` with a first wave of `first_wave`
/// tiles on a device of `mem_gbps` peak DRAM bandwidth: `(pace_ps, paced)`. The rate is
/// [`PACE_SHARE`] of `mem_gbps`, or `MONOSCAN_PACE_GBPS` (input GB/s; 0 turns pacing off, as
/// does an unknown bandwidth); `MONOSCAN_PACE_WAVES` sets how many first waves are paced. A
/// launch that fits in one wave is not paced: no later tile waits for its tiles to end, and
/// pacing only delays its last copies (session 11 on an H200: sum i32 2^22, 373 tiles, 0.52
/// of copy paced against 0.58 unpaced; 2^23, 745 tiles, 0.70 against 0.64).
fn pacing(tile_bytes: usize, tiles: u64, first_wave: u32, mem_gbps: u32) -> Result<(u32, u32)> {
    let auto = (f64::from(mem_gbps) * PACE_SHARE) as u32;
    let gbps = env_u32("MONOSCAN_PACE_GBPS", "GB/s", auto, 1_000_000)?;
    let waves = env_u32("MONOSCAN_PACE_WAVES", "waves", PACE_WAVES, 64)?;
    if gbps == 0 || waves == 0 || tiles <= u64::from(first_wave) {
        return Ok((0, 0));
    }
    // bytes / (GB/s) = ns, so bytes * 1000 / (GB/s) = ps.
    let ps = (tile_bytes as u64 * 1000).div_ceil(u64::from(gbps));
    let pace_ps = u32::try_from(ps).map_err(|_| {
        Error::invalid(format!(
            "MONOSCAN_PACE_GBPS={gbps}: tiles of {tile_bytes} bytes would be paced more than 4 ms apart"
        ))
    })?;
    Ok((pace_ps, first_wave.saturating_mul(waves)))
}

/// `var` as a whole number of `unit` from 0 to `max`, or `default` when unset.
fn env_u32(var: &str, unit: &str, default: u32, max: u32) -> Result<u32> {
    match std::env::var(var) {
        Err(_) => Ok(default),
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(x) if x <= max => Ok(x),
            _ => Err(Error::invalid(format!(
                "{var}={v}: expected a whole number of {unit} from 0 to {max}"
            ))),
        },
    }
}

impl PrefetchPlan {
    /// The plan for a launch of `tiles` tiles of `tile_bytes` when `resident` blocks fit the
    /// device at once, on a device of `mem_gbps` peak DRAM bandwidth: `ahead` is
    /// [`prefetch_tiles`]; `MONOSCAN_FIRST_WAVE=0` drops the first-wave rule (every block
    /// prefetches, as before session 9; for comparison); the first wave is paced at
    /// [`PACE_SHARE`] of `mem_gbps`, if the launch has more tiles than one wave, unless
    /// `MONOSCAN_PACE_GBPS` or `MONOSCAN_PACE_WAVES` say otherwise.
    ///
    /// ```
    /// use monoscan::codegen::PrefetchPlan;
    /// let vars = ["MONOSCAN_PREFETCH_KIB", "MONOSCAN_FIRST_WAVE", "MONOSCAN_PACE_GBPS", "MONOSCAN_PACE_WAVES"];
    /// if vars.iter().all(|v| std::env::var(v).is_err()) {
    ///     // 24 KiB tiles, 132 SMs of 9 blocks: 128 tiles ahead; the first 1188 tiles are
    ///     // loaded directly, and the blocks of tiles 1060..1188 prefetch tiles 1188..1316.
    ///     let plan = PrefetchPlan::new(24 << 10, 10_000, 132 * 9, 4800)?;
    ///     assert_eq!((plan.ahead, plan.first_wave), (128, 1188));
    ///     // Those 1188 tiles are paced at 0.7 x 4800 = 3360 GB/s: 24 KiB every 7.32 ns.
    ///     assert_eq!((plan.pace_ps, plan.paced), (7315, 1188));
    ///     // With an unknown bandwidth, or a launch of one wave, nothing is paced.
    ///     assert_eq!(PrefetchPlan::new(24 << 10, 10_000, 132 * 9, 0)?.pace_ps, 0);
    ///     assert_eq!(PrefetchPlan::new(24 << 10, 1188, 132 * 9, 4800)?.pace_ps, 0);
    ///     assert_eq!(plan.target(0), None);
    ///     assert_eq!(plan.target(1059), None);
    ///     assert_eq!(plan.target(1060), Some(1188));
    ///     assert_eq!(plan.target(5000), Some(5128));
    /// }
    /// # Ok::<(), monoscan::Error>(())
    /// ```
    pub fn new(tile_bytes: usize, tiles: u64, resident: u32, mem_gbps: u32) -> Result<Self> {
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
        let (pace_ps, paced) = pacing(tile_bytes, tiles, resident, mem_gbps)?;
        Ok(PrefetchPlan {
            ahead,
            first_wave,
            pace_ps,
            paced,
        })
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
            let plan = PrefetchPlan {
                ahead,
                first_wave,
                pace_ps: 0,
                paced: 0,
            };
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
            pace_ps: 0,
            paced: 0,
        };
        assert!(asked(plan, 1000).iter().all(|&c| c == 0));
    }
}
