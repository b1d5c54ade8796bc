//! Tuning: the typed knobs of the GPU kernels, the device limits they are checked against, and
//! the shape policy that turns both into the tile shape of each kernel family.
//!
//! - [`Tuning`] is what a caller may change: tile shapes, the staged scan's tensor copies, its
//!   L2 prefetch and the pacing of its first wave. Every field has a measured default
//!   ([`Tuning::default`]); [`crate::Gpu::with_tuning`] validates and attaches a value. The
//!   library reads none of these from the environment.
//! - [`DeviceLimits`]: shared memory and threads per block and per SM, as the driver reports
//!   them for a device ([`crate::DeviceInfo::limits`]), or an architecture's published figures
//!   where code is generated without a device ([`DeviceLimits::for_arch`]).
//! - [`policy`]: which [`TileShape`] each kernel family gets for an element size, given the
//!   limits and the tuning. Code generation only renders the shape it is given.
//! - [`ColumnShape`]: the column scan's split of its tiles among threads (picked by
//!   [`policy::column_shape`]).
//! - [`PrefetchPlan`]: the per-launch L2 prefetch and pacing plan of the TMA kernels.
//! - [`cost`]: the static estimate of a combine's cost, from which the policy decides whether
//!   kernels inline the combine or call one outlined copy ([`CombineForm`]).
//! - [`plan`]: one operator's shapes, combine form and kernel sets on one device: which
//!   modules each algorithm and each call size use, for the GPU executor, `prepare` and
//!   ahead-of-time warming alike.

pub mod autotune;
mod columns;
pub mod cost;
mod limits;
mod order;
pub mod plan;
pub mod policy;
mod prefetch;
mod shape;

pub use crate::codegen::CombineForm;
pub use columns::ColumnShape;
pub use limits::DeviceLimits;
pub(crate) use order::Numbering;
pub use order::TileOrder;
pub use policy::Purpose;
pub use prefetch::{FirstWave, PrefetchPlan, RowPrefetch};
pub use shape::{StateLayout, TileShape, STATE_SECTOR};

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// Threads and items per thread of a tile, and optionally the look-back's predecessors per
/// lane: a shape a caller asks for instead of the policy's choice. Parses from
/// `<threads>x<items>[x<lookback>]` (`"256x32"`, `"192x32x2"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShapeChoice {
    /// Threads per block: a multiple of 32, at most 1024.
    pub threads: u32,
    /// Consecutive elements per thread, at least 1.
    pub items: u32,
    /// Predecessors each lane of the look-back warp inspects per step, 1 to 8 (`None`: the
    /// policy's, one).
    pub lookback: Option<u32>,
}

impl ShapeChoice {
    /// `threads` x `items`, the policy's look-back.
    pub fn new(threads: u32, items: u32) -> Self {
        ShapeChoice {
            threads,
            items,
            lookback: None,
        }
    }

    /// The same shape with `lookback` predecessors per lane.
    pub fn with_lookback(mut self, lookback: u32) -> Self {
        self.lookback = Some(lookback);
        self
    }

    fn validate(&self, what: &str, max_items: u32) -> Result<()> {
        let lookback_ok = self.lookback.is_none_or(|lb| (1..=8).contains(&lb));
        if self.threads == 0
            || self.threads % 32 != 0
            || self.threads > 1024
            || self.items == 0
            || self.items > max_items
            || !lookback_ok
        {
            return Err(Error::invalid(format!(
                "{what} shape {self}: threads must be a multiple of 32 up to 1024, items 1 to {max_items}, look-back 1 to 8"
            )));
        }
        Ok(())
    }
}

impl fmt::Display for ShapeChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.threads, self.items)?;
        if let Some(lb) = self.lookback {
            write!(f, "x{lb}")?;
        }
        Ok(())
    }
}

impl FromStr for ShapeChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let parts: Vec<Option<u32>> = s.split('x').map(|p| p.trim().parse().ok()).collect();
        match parts.as_slice() {
            [Some(t), Some(i)] => Ok(ShapeChoice::new(*t, *i)),
            [Some(t), Some(i), Some(lb)] => Ok(ShapeChoice::new(*t, *i).with_lookback(*lb)),
            _ => Err(Error::invalid(format!(
                "shape `{s}`: expected <threads>x<items>[x<lookback>], such as 256x32"
            ))),
        }
    }
}

/// How fast the TMA kernels issue the first wave's tile copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pace {
    /// At [`Tuning::DEFAULT_PACE_SHARE`] of the device's peak DRAM bandwidth (no pacing where
    /// the driver reports no bandwidth); batches of rows that fit in a tile are not paced.
    Auto,
    /// Not paced: every resident block issues its copy at once.
    Off,
    /// At this many GB/s of input (1 to 1,000,000).
    Gbps(u32),
}

/// Whether 1-D scans run in the share scan's form: each resident thread folds one contiguous
/// share of the input, then scans it again from its carry (two launches that read the input
/// twice; [`crate::codegen::KernelSet::ShareScan`]). It suits combines that cost more than the
/// bytes they move, and needs the TMA (sm_90 and newer), an input large enough for two steps
/// of 128 bytes per resident thread ([`policy::shares`]), elements whose share steps fit
/// shared memory, and 16-byte aligned input and output; other scans run the single-pass scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShareScan {
    /// The autotuner times it beside the staged shapes for operators with an expensive
    /// combine, and keeps it where it wins.
    Auto,
    /// Never.
    Never,
    /// Every scan where it applies.
    Always,
}

impl ShareScan {
    /// The name the command line takes: `auto`, `never` or `always`.
    pub fn name(self) -> &'static str {
        match self {
            ShareScan::Auto => "auto",
            ShareScan::Never => "never",
            ShareScan::Always => "always",
        }
    }
}

/// The kernels' tuning: a typed value with measured defaults, attached to a [`crate::Gpu`]
/// with [`crate::Gpu::with_tuning`].
///
/// Every `None` shape leaves the choice to the shape policy ([`policy`]), which derives it from
/// the element size and the device's limits. Results never depend on the tuning: every shape
/// and plan computes the same scan (exactly for exact operators), only at another speed.
///
/// ```
/// use monoscan::tuning::{Pace, ShapeChoice, Tuning};
/// let tuning = Tuning {
///     staged: Some("256x32".parse()?),
///     prefetch_kib: 0,
///     pace: Pace::Off,
///     ..Tuning::default()
/// };
/// tuning.validate()?;
/// assert_eq!(tuning.staged, Some(ShapeChoice::new(256, 32)));
/// assert!(Tuning { pace_waves: 65, ..Tuning::default() }.validate().is_err());
/// # Ok::<(), monoscan::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// Register tiles: the single-pass scan's (`Purpose::SinglePass`), the tiled reduce's and
    /// the reduce-then-scan's (`Purpose::Tiles`).
    pub tile: Option<ShapeChoice>,
    /// The one-launch scan of inputs that fit one small tile (`Purpose::OneTile`).
    pub one_tile: Option<ShapeChoice>,
    /// The staged single-pass scan's tile (`Purpose::Staged`, sm_80 and newer).
    pub staged: Option<ShapeChoice>,
    /// Stream compaction's staged tile (items up to 32, a whole number of 16-byte chunks per
    /// thread, a tile within the static shared memory limit).
    pub select: Option<ShapeChoice>,
    /// The staged reduce's tile: threads per block x elements per thread, in both its layouts
    /// and its share form (`None`: the policy's, [`policy::reduce_shape`]). Its tiles must be
    /// whole 16-byte chunks and its stages fit shared memory.
    pub reduce: Option<ShapeChoice>,
    /// The column scan's tile: threads per block x rows per thread (`None`: the autotuner's
    /// where `autotune` is on ([`autotune::columns`]), else the policy's,
    /// [`policy::column_shape`]); a block gets at least one thread per column of a strip.
    pub column: Option<ShapeChoice>,
    /// Whether staged tiles of 128-byte rows arrive by tensor copies (the TMA, sm_90 and newer)
    /// instead of `cp.async`.
    pub tma: bool,
    /// How far ahead of its own tile a block of a TMA kernel asks L2 to prefetch, in KiB
    /// (0: no prefetching; at most 1 GiB).
    pub prefetch_kib: u32,
    /// Whether the tiles the launch's resident blocks claim at once (the first wave) are
    /// prefetched too, or only loaded directly.
    pub first_wave: FirstWave,
    /// Whether batches of rows prefetch too, or only those whose tiles look back
    /// ([`RowPrefetch::prefetches`]).
    pub row_prefetch: RowPrefetch,
    /// The pace of the first waves' tensor copies.
    pub pace: Pace,
    /// How many first waves of tiles are paced (0 to 64; 0: none).
    pub pace_waves: u32,
    /// How the kernels call the operator's combine (`None`: the policy's choice from the
    /// combine's estimated cost, [`policy::combine_form`]; where the policy outlines it and
    /// `autotune` is on, the autotuner also times its fastest shape inlined and keeps the
    /// faster form).
    pub combine: Option<CombineForm>,
    /// Independent chains each thread of the staged scan folds and scans its run in, 1 to 8
    /// (`None`: the policy's choice from the combine's estimated cost, [`policy::chains`]).
    pub chains: Option<u32>,
    /// Whether an operator has its staged-scan shape timed on its first large scan on a
    /// device (the policy's shape among a few others), and the fastest kept beside the kernel
    /// cache ([`autotune`]). Off, or with `staged` or `chains` set, the policy's shape runs.
    /// Column scans are tuned the same way, per strip width and direction, unless `column` is
    /// set ([`autotune::columns`]), and so is the staged reduce's tile on an operator's first
    /// large reduction that it folds tile by tile, unless `reduce` is set ([`autotune::reduce`]).
    pub autotune: bool,
    /// Whether reductions that the staged reduce suits ([`policy::reduce_staged`]: element
    /// sizes other than 4 bytes, expensive combines) run it on sm_80 and newer;
    /// off, they run the register-tile reduce.
    pub staged_reduce: bool,
    /// Whether staged reductions with an expensive combine ([`policy::reduce_shares`]) of
    /// inputs large enough ([`policy::shares`]) run the share form on sm_90 (each thread folds
    /// one contiguous share, the block reduces once) rather than reducing tile by tile.
    pub share_reduce: bool,
    /// Whether folds of contiguous rows of at least half a warp tile of the tiled reduce
    /// (`reduce_lanes`) run its warp folds, each warp folding whole pieces of rows
    /// (`reduce_rows`); off, the row scan kernels fold them without their stores. Off by
    /// default: the warp folds are not yet measured against the row kernels on a GPU.
    pub row_folds: bool,
    /// Whether 1-D scans run in the share scan's form where it applies.
    pub share_scan: ShareScan,
    /// Stage buffers of the share scan, 1 or 2 (`None`: the policy's,
    /// [`policy::share_scan_stages`]). Two let a block's next step arrive while it combines
    /// the current one; one halves its shared memory, so that more blocks reside on an SM.
    pub share_stages: Option<u32>,
    /// How the blocks of the staged 1-D, row and column scans find their tiles: by block index (the
    /// default; a cooperative grid for one wave), by block index for one wave and claimed from
    /// a counter beyond, or always claimed ([`TileOrder`]).
    pub tile_order: TileOrder,
}

impl Tuning {
    /// The default prefetch distance, 3 MiB: the best of 0, 3, 6 and 9 MiB on an H200 (sum
    /// i32 0.85 of copy against 0.77 without). Further ahead L2 evicts prefetched tiles before
    /// they are claimed: 12 MiB was slower than none.
    pub const DEFAULT_PREFETCH_KIB: u32 = 3 << 10;

    /// The default pace of the first wave, as a share of the device's peak DRAM bandwidth:
    /// 0.7, about 3,400 GB/s on an H200, where 3,000 and 3,500 GB/s paced sum i32 at 2^28
    /// best.
    pub const DEFAULT_PACE_SHARE: f64 = 0.7;

    /// Checks every field against its domain.
    pub fn validate(&self) -> Result<()> {
        for (what, shape, max_items) in [
            ("tile", self.tile, 4096),
            ("one-tile", self.one_tile, 4096),
            ("staged", self.staged, 4096),
            ("select", self.select, 32),
            ("reduce", self.reduce, 4096),
            ("column", self.column, 4096),
        ] {
            if let Some(s) = shape {
                s.validate(what, max_items)?;
            }
        }
        if self.one_tile.is_some_and(|s| s.lookback.is_some())
            || self.select.is_some_and(|s| s.lookback.is_some())
            || self.column.is_some_and(|s| s.lookback.is_some())
            || self.reduce.is_some_and(|s| s.lookback.is_some())
        {
            return Err(Error::invalid(
                "the one-tile, select, reduce and column shapes take no look-back part (<threads>x<items>)",
            ));
        }
        if self.prefetch_kib > 1 << 20 {
            return Err(Error::invalid(format!(
                "prefetch distance {} KiB: at most {} KiB (1 GiB)",
                self.prefetch_kib,
                1 << 20
            )));
        }
        if let Pace::Gbps(g) = self.pace {
            if !(1..=1_000_000).contains(&g) {
                return Err(Error::invalid(format!(
                    "pace {g} GB/s: expected 1 to 1000000 (or Pace::Off)"
                )));
            }
        }
        if self.chains.is_some_and(|c| !(1..=8).contains(&c)) {
            return Err(Error::invalid(format!(
                "{} chains: expected 1 to 8",
                self.chains.unwrap_or(0)
            )));
        }
        if self
            .share_stages
            .is_some_and(|s| !(1..=policy::SHARE_STAGES).contains(&s))
        {
            return Err(Error::invalid(format!(
                "{} share-scan stages: expected 1 to {}",
                self.share_stages.unwrap_or(0),
                policy::SHARE_STAGES
            )));
        }
        if self.pace_waves > 64 {
            return Err(Error::invalid(format!(
                "{} paced waves: at most 64",
                self.pace_waves
            )));
        }
        Ok(())
    }
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            tile: None,
            one_tile: None,
            staged: None,
            select: None,
            reduce: None,
            column: None,
            tma: true,
            prefetch_kib: Tuning::DEFAULT_PREFETCH_KIB,
            first_wave: FirstWave::Auto,
            row_prefetch: RowPrefetch::Auto,
            pace: Pace::Auto,
            // One first wave paced better than two or four.
            pace_waves: 1,
            combine: None,
            chains: None,
            autotune: true,
            staged_reduce: true,
            share_reduce: true,
            row_folds: false,
            share_scan: ShareScan::Auto,
            share_stages: None,
            tile_order: TileOrder::BlockIndex,
        }
    }
}

impl fmt::Display for Tuning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = |s: Option<ShapeChoice>| s.map_or("auto".to_string(), |s| s.to_string());
        let pace = match self.pace {
            Pace::Auto => format!("auto ({} of peak DRAM)", Tuning::DEFAULT_PACE_SHARE),
            Pace::Off => "off".to_string(),
            Pace::Gbps(g) => format!("{g} GB/s"),
        };
        write!(
            f,
            "tile {}, one-tile {}, staged {}, select {}, reduce {}, column {}, tma {}, prefetch {} KiB (first wave {}, rows {}), pace {pace} over {} wave(s), combine {}, chains {}, autotune {}, staged reduce {}, share reduce {}, row folds {}, share scan {} ({} stages), tile order {}",
            shape(self.tile),
            shape(self.one_tile),
            shape(self.staged),
            shape(self.select),
            shape(self.reduce),
            shape(self.column),
            if self.tma { "on" } else { "off" },
            self.prefetch_kib,
            self.first_wave.name(),
            self.row_prefetch.name(),
            self.pace_waves,
            self.combine.map_or("auto (by cost)", CombineForm::name),
            self.chains
                .map_or("auto (by cost)".to_string(), |c| c.to_string()),
            if self.autotune { "on" } else { "off" },
            if self.staged_reduce { "on" } else { "off" },
            if self.share_reduce { "on" } else { "off" },
            if self.row_folds { "on" } else { "off" },
            self.share_scan.name(),
            self.share_stages
                .map_or("auto".to_string(), |s| s.to_string()),
            self.tile_order
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_print() {
        let s: ShapeChoice = "352x32".parse().unwrap();
        assert_eq!(s, ShapeChoice::new(352, 32));
        assert_eq!(s.to_string(), "352x32");
        let s: ShapeChoice = " 192 x 32 x 2 ".parse().unwrap();
        assert_eq!(s, ShapeChoice::new(192, 32).with_lookback(2));
        for bad in ["", "128", "128x", "x32", "1x2x3x4", "-1x2"] {
            assert!(bad.parse::<ShapeChoice>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn validation_names_the_bad_field() {
        assert!(Tuning::default().validate().is_ok());
        let bad = [
            Tuning {
                tile: Some(ShapeChoice::new(33, 8)),
                ..Tuning::default()
            },
            Tuning {
                staged: Some(ShapeChoice::new(256, 0)),
                ..Tuning::default()
            },
            Tuning {
                tile: Some(ShapeChoice::new(256, 8).with_lookback(9)),
                ..Tuning::default()
            },
            Tuning {
                select: Some(ShapeChoice::new(128, 33)),
                ..Tuning::default()
            },
            Tuning {
                one_tile: Some(ShapeChoice::new(128, 4).with_lookback(1)),
                ..Tuning::default()
            },
            Tuning {
                reduce: Some(ShapeChoice::new(256, 8).with_lookback(1)),
                ..Tuning::default()
            },
            Tuning {
                prefetch_kib: (1 << 20) + 1,
                ..Tuning::default()
            },
            Tuning {
                pace: Pace::Gbps(0),
                ..Tuning::default()
            },
            Tuning {
                pace_waves: 65,
                ..Tuning::default()
            },
            Tuning {
                chains: Some(0),
                ..Tuning::default()
            },
            Tuning {
                chains: Some(9),
                ..Tuning::default()
            },
            Tuning {
                share_stages: Some(0),
                ..Tuning::default()
            },
            Tuning {
                share_stages: Some(3),
                ..Tuning::default()
            },
        ];
        for t in bad {
            assert!(t.validate().is_err(), "{t:?}");
        }
        let text = Tuning::default().to_string();
        assert!(text.contains("prefetch 3072 KiB"), "{text}");
        assert!(text.contains("share scan auto (auto stages)"), "{text}");
        for stages in [1, 2] {
            let t = Tuning {
                share_stages: Some(stages),
                ..Tuning::default()
            };
            assert!(t.validate().is_ok(), "{t:?}");
        }
    }
}
