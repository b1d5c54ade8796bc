//! The L2 prefetch and pacing plan of one launch of a TMA kernel (the staged scan and stream
//! compaction on sm_90 and newer): how far ahead of its own tile a block asks L2 for a tile, and
//! when the first wave's copies may be issued (`ms_prefetch` in `templates/lib/tma.cuh`).

use super::{Pace, Tuning};
use crate::error::{Error, Result};

/// Whether the tiles a launch's resident blocks claim at once (its first wave) are also
/// prefetched into L2, as every later tile is, or only loaded directly by their own blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FirstWave {
    /// By the kernel and the launch ([`FirstWave::for_scan`]): the 1-D staged scan prefetches
    /// the first wave of a launch of more than one wave; the other TMA kernels (batched rows,
    /// compaction) leave it out.
    Auto,
    /// Left out: each first-wave tile is read once, by its own block's copy.
    Skip,
    /// Prefetched too: the block claiming tile `t` asks L2 for tile `t + ahead` even where
    /// another block of the first wave copies that tile itself.
    Prefetch,
}

impl FirstWave {
    /// The choice for a launch of the 1-D staged scan of `tiles` tiles when `resident`
    /// blocks fit the device at once: `Auto` prefetches the first wave in launches of more
    /// than one wave (those whose first wave the default pace spaces out) and skips it in
    /// launches of one wave; `Skip` and `Prefetch` stand. On H100s (fractions of copy, the
    /// mean of two runs each way in one process, on each of three machines) prefetching the
    /// first wave of a launch of several waves ran faster: sum i32 at 2^24 elements (1,490 tiles of 44 KiB, 660
    /// resident) 0.914–0.920 against 0.888–0.907, at 2^23 (745 tiles) level to 0.027 faster;
    /// the 16-byte affine maps at 2^21 (745 tiles) 0.810–0.822 against 0.765–0.775 and at
    /// 2^22 0.905–0.920 against 0.862–0.885; level from 2^26 on. In launches of one wave it
    /// was faster on one machine and slower on another (sum i32 at 2^22, 373 tiles: 0.696
    /// against 0.671, and 0.620 against 0.663).
    ///
    /// ```
    /// use monoscan::tuning::FirstWave;
    /// assert_eq!(FirstWave::Auto.for_scan(1490, 660), FirstWave::Prefetch);
    /// assert_eq!(FirstWave::Auto.for_scan(660, 660), FirstWave::Skip);
    /// assert_eq!(FirstWave::Skip.for_scan(10_000, 660), FirstWave::Skip);
    /// assert_eq!(FirstWave::Prefetch.for_scan(1, 660), FirstWave::Prefetch);
    /// ```
    pub fn for_scan(self, tiles: u64, resident: u32) -> FirstWave {
        match self {
            FirstWave::Auto if tiles > u64::from(resident) => FirstWave::Prefetch,
            FirstWave::Auto => FirstWave::Skip,
            chosen => chosen,
        }
    }

    /// The choice's name, as `--first-wave` takes it.
    pub fn name(self) -> &'static str {
        match self {
            FirstWave::Auto => "auto",
            FirstWave::Skip => "skip",
            FirstWave::Prefetch => "prefetch",
        }
    }
}

/// Whether the tiles of a batch of rows (the staged row scan over more than one row) ask L2
/// for the tile [`Tuning::prefetch_kib`] ahead, as the 1-D staged scan's do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowPrefetch {
    /// By the shape ([`RowPrefetch::prefetches`]): every batch except those whose tiles all
    /// start a row.
    Auto,
    /// Every batch prefetches.
    Always,
    /// No batch prefetches.
    Never,
}

impl RowPrefetch {
    /// Whether a batch of rows of `row_len` values, in tiles of `tile` values, prefetches.
    ///
    /// Under `Auto`, a batch whose every tile starts a row (`row_len` divides `tile`) does not:
    /// none of its tiles looks back, so no tile waits on another and the resident blocks' own
    /// copies keep DRAM busy; a prefetch only adds requests. Measured on one
    /// NVIDIA H200 (three runs each way, alternated, fractions of a copy of the same bytes),
    /// f32 rows of 1,024 values ran at 0.89–0.93 without the prefetch against 0.81–0.84 with it,
    /// rows of 4,096 values at 0.90–0.94 against 0.86–0.90, rows of 64 values and affine-map
    /// rows level; on an NVIDIA H100, 0.944 against 0.89–0.91 for rows of 1,024 values,
    /// 0.94–0.96 against 0.97–0.98 for rows of 4,096 and 0.975 against 0.988 for rows of 64.
    /// Batches whose rows span tiles keep it: their tiles look back as a 1-D scan's do (rows of
    /// 152,000 values ran at 0.88–0.89 without it against 0.91–0.95 on the H200).
    ///
    /// ```
    /// use monoscan::tuning::RowPrefetch;
    /// assert!(!RowPrefetch::Auto.prefetches(1024, 4096));
    /// assert!(!RowPrefetch::Auto.prefetches(4096, 4096));
    /// assert!(RowPrefetch::Auto.prefetches(152_000, 4096));
    /// assert!(RowPrefetch::Auto.prefetches(3000, 4096));
    /// assert!(RowPrefetch::Always.prefetches(1024, 4096));
    /// assert!(!RowPrefetch::Never.prefetches(152_000, 4096));
    /// ```
    pub fn prefetches(self, row_len: u64, tile: u64) -> bool {
        match self {
            RowPrefetch::Auto => row_len == 0 || tile % row_len != 0,
            RowPrefetch::Always => true,
            RowPrefetch::Never => false,
        }
    }

    /// The choice's name, as `--row-prefetch` takes it.
    pub fn name(self) -> &'static str {
        match self {
            RowPrefetch::Auto => "auto",
            RowPrefetch::Always => "always",
            RowPrefetch::Never => "never",
        }
    }
}

/// The L2 prefetch plan of one launch of a TMA kernel, and the pacing of its first wave's
/// copies, passed to it by value (`ms_prefetch` in `templates/lib/tma.cuh`, the same four
/// words).
///
/// The block that claims tile `t` asks L2 for tile `t + ahead`, unless that tile is one of the
/// launch's first `first_wave`: the resident blocks claim those at once and load them directly
/// ([`FirstWave::Skip`], every tile past the first wave asked for once). With `first_wave` 0
/// every block asks ([`FirstWave::Prefetch`]); with `ahead` 0 none does. The block's threads
/// ask for that tile's 128-byte rows (in the staged scan each thread its own) once the block's
/// own copies are issued: a bulk prefetch queued ahead of them delays them.
///
/// The block that claims tile `t < paced` issues its copy and its prefetch no earlier than the
/// launch's clock (the global timer as tile 0's claimant read it) plus `t * pace_ps`, so that
/// the first wave's copies reach DRAM in tile order and land in that order. Otherwise the whole
/// wave lands together several microseconds in and then looks back at once. Pacing only ever
/// delays a copy; it never changes what is read.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefetchPlan {
    /// Tiles ahead of its own that a block asks L2 for (0: no prefetching).
    pub ahead: u32,
    /// Tiles at the start of the launch that are not prefetched: its first wave (the tiles its
    /// resident blocks claim at once) where that is skipped, else 0.
    pub first_wave: u32,
    /// Picoseconds between the earliest issue times of consecutive paced tiles (0: no pacing).
    pub pace_ps: u32,
    /// How many of the launch's first tiles are paced.
    pub paced: u32,
}

impl PrefetchPlan {
    /// The plan under `tuning` for a launch of `tiles` tiles of `tile_bytes` when `resident`
    /// blocks fit the device at once, on a device of `mem_gbps` peak DRAM bandwidth (0:
    /// unknown, no pacing unless the tuning sets a rate). [`FirstWave::Auto`] skips the first
    /// wave here; a kernel that prefetches it resolves `Auto` first ([`FirstWave::for_scan`]).
    ///
    /// A launch that fits in one wave is not paced: no later tile waits for its tiles to end,
    /// and pacing would only delay its last copies (on an H200, sum i32 at 2^22, 373 tiles, ran
    /// at 0.52 of copy paced against 0.58 unpaced; at 2^23, 745 tiles, 0.70 against 0.64).
    ///
    /// ```
    /// use monoscan::tuning::{Pace, PrefetchPlan, Tuning};
    /// let t = Tuning::default();
    /// // 24 KiB tiles, 132 SMs of 9 blocks: 3 MiB is 128 tiles ahead; the first 1188 tiles
    /// // are loaded directly, and the blocks of tiles 1060..1188 prefetch tiles 1188..1316.
    /// let plan = PrefetchPlan::new(&t, 24 << 10, 10_000, 132 * 9, 4800)?;
    /// assert_eq!((plan.ahead, plan.first_wave), (128, 1188));
    /// // Those 1188 tiles are paced at 0.7 x 4800 = 3360 GB/s: 24 KiB every 7.32 ns.
    /// assert_eq!((plan.pace_ps, plan.paced), (7315, 1188));
    /// // With an unknown bandwidth, or a launch of one wave, nothing is paced.
    /// assert_eq!(PrefetchPlan::new(&t, 24 << 10, 10_000, 132 * 9, 0)?.pace_ps, 0);
    /// assert_eq!(PrefetchPlan::new(&t, 24 << 10, 1188, 132 * 9, 4800)?.pace_ps, 0);
    /// let off = Tuning { pace: Pace::Off, prefetch_kib: 0, ..Tuning::default() };
    /// assert_eq!(PrefetchPlan::new(&off, 24 << 10, 10_000, 1188, 4800)?.target(5000), None);
    /// assert_eq!(plan.target(1059), None);
    /// assert_eq!(plan.target(1060), Some(1188));
    /// # Ok::<(), monoscan::Error>(())
    /// ```
    pub fn new(
        tuning: &Tuning,
        tile_bytes: usize,
        tiles: u64,
        resident: u32,
        mem_gbps: u32,
    ) -> Result<Self> {
        let ahead = (u64::from(tuning.prefetch_kib) << 10) / tile_bytes.max(1) as u64;
        let first_wave = match tuning.first_wave {
            FirstWave::Prefetch => 0,
            FirstWave::Auto | FirstWave::Skip => resident,
        };
        let gbps = match tuning.pace {
            Pace::Off => 0,
            Pace::Gbps(g) => g,
            Pace::Auto => (f64::from(mem_gbps) * Tuning::DEFAULT_PACE_SHARE) as u32,
        };
        let (pace_ps, paced) = if gbps == 0
            || tuning.pace_waves == 0
            || tiles <= u64::from(resident)
        {
            (0, 0)
        } else {
            // bytes / (GB/s) = ns, so bytes * 1000 / (GB/s) = ps.
            let ps = (tile_bytes as u64)
                .saturating_mul(1000)
                .div_ceil(u64::from(gbps));
            let pace_ps = u32::try_from(ps).map_err(|_| {
                    Error::invalid(format!(
                        "a pace of {gbps} GB/s would space tiles of {tile_bytes} bytes more than 4 ms apart"
                    ))
                })?;
            (pace_ps, resident.saturating_mul(tuning.pace_waves))
        };
        Ok(PrefetchPlan {
            ahead: u32::try_from(ahead).unwrap_or(u32::MAX),
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
        let t = Tuning::default();
        let ahead = |tile_bytes| PrefetchPlan::new(&t, tile_bytes, 10, 1, 0).unwrap().ahead;
        assert_eq!(ahead(24 * 1024), 128);
        assert_eq!(ahead(32 * 1024), 96);
        assert_eq!(ahead(44 * 1024), 69);
        assert_eq!(ahead(6 << 20), 0);
        assert_eq!(ahead(0), 3 << 20);
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

    #[test]
    fn the_tuning_sets_the_plan() {
        let every = Tuning {
            first_wave: FirstWave::Prefetch,
            pace: Pace::Gbps(200),
            pace_waves: 3,
            ..Tuning::default()
        };
        let p = PrefetchPlan::new(&every, 4096, 5000, 1000, 4800).unwrap();
        assert_eq!((p.first_wave, p.pace_ps, p.paced), (0, 20_480, 3000));
        let slow = Tuning {
            pace: Pace::Gbps(1),
            ..Tuning::default()
        };
        // 44 KiB tiles at 1 GB/s: 45 us apart, fine; 8 MiB tiles: more than 4 ms, an error.
        assert!(PrefetchPlan::new(&slow, 44 << 10, 5000, 1000, 0).is_ok());
        assert!(PrefetchPlan::new(&slow, 8 << 20, 5000, 1000, 0).is_err());
        let off = Tuning {
            pace: Pace::Off,
            ..Tuning::default()
        };
        assert_eq!(
            PrefetchPlan::new(&off, 4096, 5000, 1000, 4800)
                .unwrap()
                .paced,
            0
        );
    }
}
