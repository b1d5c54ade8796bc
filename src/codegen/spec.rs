//! What a module holds: [`KernelSet`] (one kernel family, rendered from one template, with its
//! shape) and [`KernelSpec`]; the entry points of its generated code are [`super::Entry`].

use super::Entry;
use crate::tuning::{ColumnShape, TileShape};

/// Which kernels a module holds: one kernel family, each rendered from its own template.
/// Modules are kept small (one algorithm each) so that a cold compile only pays for what a
/// call needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelSet {
    /// The textbook shared-memory tree reduction (`tree_reduce.cu`), `block` threads per block.
    TreeReduce {
        /// Threads per block (a power of two).
        block: u32,
    },
    /// Kogge-Stone block scans and the hierarchical add-back (`kogge_stone.cu`).
    KoggeStone {
        /// Threads per block = elements per section (a power of two).
        block: u32,
    },
    /// Brent-Kung block scans and the hierarchical add-back (`brent_kung.cu`).
    BrentKung {
        /// Threads per block; sections hold twice as many elements.
        block: u32,
    },
    /// The tiled reduce (`tiled_reduce.cu`).
    TiledReduce(TileShape),
    /// The staged reduce (`staged_reduce.cu`): tiles copied into shared memory through
    /// [`crate::tuning::policy::REDUCE_STAGES`] buffers, sm_80 and newer; elements of any size
    /// up to the staged limit, and expensive combines.
    StagedReduce(TileShape),
    /// The share scan (`share_scan.cu`): each resident thread folds one contiguous share of the
    /// input, then scans it again from its carry; the TMA forms, in the staged reduce's shape
    /// (its share steps), for combines that cost more than the bytes they move; `stages`
    /// stage buffers (1 or 2, [`crate::tuning::policy::share_scan_stages`]). From the end
    /// (`reverse`), the threads, blocks and steps take the shares from the last, and the
    /// module's operator is the opposite monoid ([`crate::ops::Reversed`]), whose forward scan
    /// of the reversed sequence is the reverse scan.
    ShareScan {
        /// The staged reduce's shape.
        shape: TileShape,
        /// Stage buffers per block.
        stages: u32,
        /// Whether the shares are scanned from the end.
        reverse: bool,
    },
    /// Reduce-then-scan (`reduce_then_scan.cu`: tile totals, then each tile from its carry):
    /// deterministic.
    ReduceThenScan(TileShape),
    /// Reduce-then-scan from the end (`reduce_then_scan.cu` with each tile taken from the end
    /// of the input and loaded and stored from its end): the module's operator is the opposite
    /// monoid ([`crate::ops::Reversed`]), and the levels of tile totals above the input run
    /// through the forward module of that operator. What reverse scans run in deterministic
    /// mode.
    ReduceThenScanReverse(TileShape),
    /// The single-pass scan with its tile in registers (`single_pass.cu`). Inputs of one such
    /// tile are scanned by the one-tile scan in the same shape, a module of its own
    /// ([`KernelSet::OneTile`]), so that the two compile in parallel.
    SinglePass(TileShape),
    /// The register-tile single-pass scan from the end (`single_pass.cu` with its tiles
    /// claimed from the last and each loaded and stored from its end): the module's operator
    /// is the opposite monoid ([`crate::ops::Reversed`]). Reverse scans that the staged scan
    /// from the end does not take (buffers off 16 bytes, input maps that change the element
    /// size, one tile) run it.
    SinglePassReverse(TileShape),
    /// The single-pass scan with its tile staged in shared memory, by `cp.async` or (a shape
    /// with `tma`) by tensor copies (`staged_scan.cu`).
    StagedScan(TileShape),
    /// The staged scan from the end (`staged_scan.cu` with its runs and tiles reversed): the
    /// module's operator is the opposite monoid ([`crate::ops::Reversed`]), whose forward scan
    /// of the reversed sequence is the reverse scan.
    StagedScanReverse(TileShape),
    /// The one-tile scan alone: one launch of one block, in a tile sized for small inputs (it
    /// carries little padding) or in the single-pass shape for inputs of one such tile
    /// (`one_tile.cu`).
    OneTile(TileShape),
    /// Stream compaction in one pass with the tile held in registers: the single-pass scan of
    /// the map's keep counts fused with the scatter (`select_registers.cu`; u32 counts,
    /// operators with an input map only).
    Select(TileShape),
    /// Stream compaction with the tile staged in shared memory (`select_staged.cu`; sm_80 and
    /// newer, by one bulk copy per tile on sm_90 and newer).
    SelectStaged(TileShape),
    /// Batched scans of contiguous rows, each restarting at its row's start, as one
    /// single-pass scan of the segmented lifting of the operator with its tile of lifted items
    /// in registers (`row_scan.cu`), where [`KernelSet::RowStaged`] does not apply; `reverse`:
    /// prefixes from the end of each row (the module's operator is then the lifting of the
    /// opposite monoid); `segments`: rows of any length, given by CSR offsets, whose starts
    /// the kernel finds by a binary search of the offsets (`segment_scan`, where rows of one
    /// length are `row_scan`).
    RowScan {
        /// The register tile (of the lifting's elements).
        shape: TileShape,
        /// Whether positions run from the end.
        reverse: bool,
        /// Whether rows are given by offsets.
        segments: bool,
    },
    /// Batched scans of contiguous rows as [`KernelSet::RowScan`] computes them, with each
    /// tile of values staged in shared memory as the staged scan stages its tiles, by
    /// `cp.async` or (a shape with `tma`) by tensor copies (`row_staged.cu`; sm_80 and newer).
    /// The module's operator is the segmented lifting (of the opposite monoid when `reverse`);
    /// memory and the staged tiles hold its values, of `value_size` bytes. `segments`: rows of
    /// any length, given by CSR offsets (`segment_staged`, where rows of one length are
    /// `row_staged`).
    RowStaged {
        /// The staged tile (of values), with the look-back state laid out for the lifting's
        /// elements.
        shape: TileShape,
        /// Whether positions run from the end.
        reverse: bool,
        /// Bytes of one value (1, 2, 4, 8 or 16).
        value_size: usize,
        /// Whether rows are given by offsets.
        segments: bool,
    },
    /// Every column of a row-major `rows x columns` array scanned down, in one pass with a
    /// look-back per column (`column_scan.cu`); `reverse`: from the last row up.
    ColumnScan {
        /// How a tile splits among threads.
        shape: ColumnShape,
        /// Whether rows run from the end.
        reverse: bool,
    },
    /// Copies between a strided layout of lanes and contiguous rows (`lanes_copy.cu`).
    LanesCopy,
    /// The combine-rate kernel (`combine_rate.cu`): `chains` independent chains of combines per
    /// thread, `block` threads per block, measuring how many combines per second the device
    /// sustains for the operator ([`crate::bench::combine_rate`]).
    /// [`KernelSet::combine_rate_shapes`] lists the shapes measured for an element size.
    CombineRate {
        /// Threads per block (a multiple of 32).
        block: u32,
        /// Independent chains per thread.
        chains: u32,
    },
    /// `combine_pairs`, for [`crate::verify`] (the prelude alone).
    Check,
}

impl KernelSet {
    /// A short name for messages and cache listings.
    pub fn name(&self) -> String {
        match self {
            KernelSet::TreeReduce { block } => format!("tree-reduce-b{block}"),
            KernelSet::KoggeStone { block } => format!("kogge-stone-b{block}"),
            KernelSet::BrentKung { block } => format!("brent-kung-b{block}"),
            KernelSet::TiledReduce(s) => format!("tiled-reduce-{}", s.name()),
            KernelSet::StagedReduce(s) => format!("staged-reduce-{}", s.name()),
            KernelSet::ShareScan {
                shape,
                stages,
                reverse,
            } => {
                let reverse = if *reverse { "reverse-" } else { "" };
                if *stages == crate::tuning::policy::SHARE_STAGES {
                    format!("share-scan-{reverse}{}", shape.name())
                } else {
                    format!("share-scan-{reverse}{}-s{stages}", shape.name())
                }
            }
            KernelSet::ReduceThenScan(s) => format!("reduce-then-scan-{}", s.name()),
            KernelSet::ReduceThenScanReverse(s) => {
                format!("reduce-then-scan-reverse-{}", s.name())
            }
            KernelSet::SinglePass(s) => format!("single-pass-{}", s.name()),
            KernelSet::SinglePassReverse(s) => format!("single-pass-reverse-{}", s.name()),
            KernelSet::StagedScan(s) => format!("single-pass-{}", s.name()),
            KernelSet::StagedScanReverse(s) => format!("single-pass-reverse-{}", s.name()),
            KernelSet::OneTile(s) => format!("one-tile-{}", s.name()),
            KernelSet::Select(s) => format!("select-{}", s.name()),
            KernelSet::SelectStaged(s) => format!("select-{}", s.name()),
            KernelSet::RowScan {
                shape,
                reverse,
                segments,
            } => format!(
                "{}-scan-{}{}",
                if *segments { "segment" } else { "row" },
                if *reverse { "reverse-" } else { "" },
                shape.name()
            ),
            KernelSet::RowStaged {
                shape,
                reverse,
                value_size,
                segments,
            } => format!(
                "{}-staged-{}v{value_size}-{}",
                if *segments { "segment" } else { "row" },
                if *reverse { "reverse-" } else { "" },
                shape.name()
            ),
            KernelSet::ColumnScan { shape, reverse } => format!(
                "column-scan-{}{}",
                if *reverse { "reverse-" } else { "" },
                shape.name()
            ),
            KernelSet::LanesCopy => "lanes-copy".to_string(),
            KernelSet::CombineRate { block, chains } => {
                format!("combine-rate-b{block}x{chains}")
            }
            KernelSet::Check => "check".to_string(),
        }
    }

    /// The same scan in the same shape run from the end (a module to render for the opposite
    /// monoid, [`crate::ops::Reversed`]): the staged, register-tile, share and reduce-then-scan
    /// scans have such a form. `None` for every other set: a one-tile input is scanned from
    /// the end by the register-tile scan in the single-pass shape, and reductions, the
    /// textbook scans and the batched kernels have no such form (the row and column kernels
    /// take their direction as a field).
    ///
    /// ```
    /// use monoscan::codegen::KernelSet;
    /// use monoscan::tuning::{DeviceLimits, Purpose, Tuning};
    /// use monoscan::{ops::Sum, tuning::plan::Plan, Monoid};
    /// let plan = Plan::new(&Sum::<i32>::new().cuda(), DeviceLimits::for_arch(90), &Tuning::default());
    /// let shape = plan.shape(Purpose::Staged)?;
    /// assert_eq!(KernelSet::StagedScan(shape).reversed(), Some(KernelSet::StagedScanReverse(shape)));
    /// assert_eq!(KernelSet::StagedScanReverse(shape).reversed(), None);
    /// assert_eq!(KernelSet::OneTile(shape).reversed(), None);
    /// # Ok::<(), monoscan::Error>(())
    /// ```
    pub fn reversed(self) -> Option<KernelSet> {
        Some(match self {
            KernelSet::StagedScan(s) => KernelSet::StagedScanReverse(s),
            KernelSet::SinglePass(s) => KernelSet::SinglePassReverse(s),
            KernelSet::ReduceThenScan(s) => KernelSet::ReduceThenScanReverse(s),
            KernelSet::ShareScan {
                shape,
                stages,
                reverse: false,
            } => KernelSet::ShareScan {
                shape,
                stages,
                reverse: true,
            },
            _ => return None,
        })
    }

    /// The family's template (`None` for [`KernelSet::Check`], the prelude alone).
    pub fn template(&self) -> Option<&'static str> {
        Some(match self {
            KernelSet::TreeReduce { .. } => "tree_reduce.cu",
            KernelSet::KoggeStone { .. } => "kogge_stone.cu",
            KernelSet::BrentKung { .. } => "brent_kung.cu",
            KernelSet::TiledReduce(_) => "tiled_reduce.cu",
            KernelSet::StagedReduce(_) => "staged_reduce.cu",
            KernelSet::ShareScan { .. } => "share_scan.cu",
            KernelSet::ReduceThenScan(_) | KernelSet::ReduceThenScanReverse(_) => {
                "reduce_then_scan.cu"
            }
            KernelSet::SinglePass(_) | KernelSet::SinglePassReverse(_) => "single_pass.cu",
            KernelSet::StagedScan(_) | KernelSet::StagedScanReverse(_) => "staged_scan.cu",
            KernelSet::OneTile(_) => "one_tile.cu",
            KernelSet::Select(_) => "select_registers.cu",
            KernelSet::SelectStaged(_) => "select_staged.cu",
            KernelSet::RowScan { .. } => "row_scan.cu",
            KernelSet::RowStaged { .. } => "row_staged.cu",
            KernelSet::ColumnScan { .. } => "column_scan.cu",
            KernelSet::LanesCopy => "lanes_copy.cu",
            KernelSet::CombineRate { .. } => "combine_rate.cu",
            KernelSet::Check => return None,
        })
    }

    /// The entry points the module holds (each also `_mapped` where [`Entry::mappable`] and the
    /// operator has an input map).
    pub fn entries(&self) -> &'static [Entry] {
        match self {
            KernelSet::TreeReduce { .. } => &[Entry::Fill, Entry::ReduceTree],
            KernelSet::KoggeStone { .. } => &[Entry::Fill, Entry::KsScan, Entry::AddCarry],
            KernelSet::BrentKung { .. } => &[Entry::Fill, Entry::BkScan, Entry::AddCarry],
            KernelSet::TiledReduce(_) => &[Entry::Fill, Entry::ReduceTiles, Entry::ReduceRows],
            KernelSet::StagedReduce(s) if s.tma => {
                &[Entry::Fill, Entry::ReduceStaged, Entry::ReduceShares]
            }
            KernelSet::StagedReduce(_) => &[Entry::Fill, Entry::ReduceStaged],
            KernelSet::ShareScan { .. } => &[Entry::Fill, Entry::ShareTotals, Entry::ShareScan],
            KernelSet::ReduceThenScan(_) | KernelSet::ReduceThenScanReverse(_) => {
                &[Entry::Fill, Entry::TileTotals, Entry::TileScan]
            }
            KernelSet::SinglePass(_) | KernelSet::SinglePassReverse(_) => {
                &[Entry::Fill, Entry::ScanSinglePass]
            }
            KernelSet::StagedScan(_) | KernelSet::StagedScanReverse(_) => {
                &[Entry::Fill, Entry::ScanStaged]
            }
            KernelSet::OneTile(_) => &[Entry::Fill, Entry::TileScan],
            KernelSet::Select(_) => &[Entry::Fill, Entry::SelectRegisters],
            KernelSet::SelectStaged(_) => &[Entry::Fill, Entry::SelectStaged],
            KernelSet::RowScan {
                segments: false, ..
            } => &[Entry::Fill, Entry::RowScan],
            KernelSet::RowScan { segments: true, .. } => &[Entry::Fill, Entry::SegmentScan],
            KernelSet::RowStaged {
                segments: false, ..
            } => &[Entry::Fill, Entry::RowStaged],
            KernelSet::RowStaged { segments: true, .. } => &[Entry::Fill, Entry::SegmentStaged],
            KernelSet::ColumnScan { .. } => &[Entry::Fill, Entry::ColumnScan],
            KernelSet::LanesCopy => &[Entry::Fill, Entry::Gather, Entry::Scatter],
            KernelSet::CombineRate { .. } => &[Entry::Fill, Entry::CombineRate],
            KernelSet::Check => &[Entry::Fill, Entry::CombinePairs],
        }
    }

    /// Threads per block of the module's kernels (`fill` and `combine_pairs` excepted, which
    /// launch 256).
    pub fn threads(&self) -> u32 {
        match self {
            KernelSet::TreeReduce { block }
            | KernelSet::KoggeStone { block }
            | KernelSet::BrentKung { block }
            | KernelSet::CombineRate { block, .. } => *block,
            KernelSet::TiledReduce(s)
            | KernelSet::StagedReduce(s)
            | KernelSet::ShareScan { shape: s, .. }
            | KernelSet::ReduceThenScan(s)
            | KernelSet::ReduceThenScanReverse(s)
            | KernelSet::SinglePass(s)
            | KernelSet::SinglePassReverse(s)
            | KernelSet::StagedScan(s)
            | KernelSet::StagedScanReverse(s)
            | KernelSet::OneTile(s)
            | KernelSet::Select(s)
            | KernelSet::SelectStaged(s)
            | KernelSet::RowScan { shape: s, .. }
            | KernelSet::RowStaged { shape: s, .. } => s.block,
            KernelSet::ColumnScan { shape, .. } => shape.block,
            KernelSet::LanesCopy | KernelSet::Check => 256,
        }
    }

    /// Dynamic shared memory `entry` launches with, in bytes, for an operator of `elem_size`-byte
    /// elements whose input map (if any) reads `in_size`-byte inputs: the staged kernels' tiles
    /// (and the TMA form's block state), the column scan's tile and block state; 0 for every
    /// other entry. (The staged scan maps in
    /// place, so its tile holds elements; compaction's staged tile holds inputs; the staged
    /// row scan's tile holds values, its block state the lifting's `elem_size`-byte elements.)
    pub fn dynamic_smem(&self, entry: Entry, elem_size: usize, in_size: usize) -> usize {
        match (self, entry) {
            (KernelSet::StagedScan(s) | KernelSet::StagedScanReverse(s), Entry::ScanStaged) => {
                s.staged_smem_bytes(elem_size)
            }
            (KernelSet::StagedReduce(s), Entry::ReduceStaged) => {
                s.reduce_smem_bytes_from(in_size, elem_size)
            }
            (KernelSet::StagedReduce(s), Entry::ReduceShares) if s.shares_fit(elem_size) => {
                s.reduce_shares_smem_bytes(elem_size)
            }
            (KernelSet::ShareScan { shape, stages, .. }, Entry::ShareTotals | Entry::ShareScan)
                if shape.shares_fit(elem_size) =>
            {
                shape.shares_smem_bytes(elem_size, *stages)
            }
            (
                KernelSet::RowStaged {
                    shape,
                    value_size,
                    segments,
                    ..
                },
                Entry::RowStaged | Entry::SegmentStaged,
            ) => shape.row_staged_smem_bytes(*value_size, elem_size, *segments),
            (KernelSet::SelectStaged(s), Entry::SelectStaged) => s.tile_bytes(in_size),
            (KernelSet::ColumnScan { shape, .. }, Entry::ColumnScan) => {
                usize::try_from(shape.smem_bytes(elem_size)).unwrap_or(usize::MAX)
            }
            _ => 0,
        }
    }
}

impl KernelSet {
    /// Threads per block of the combine-rate kernel.
    pub const RATE_BLOCK: u32 = 256;

    /// The shapes of the combine-rate kernel measured for elements of `elem_size` bytes, 256
    /// threads per block each: 1, 2, 4 and 8 chains per thread, as many of them as keep the
    /// chains within 256 bytes per thread (64 registers). More chains put more independent
    /// combines in flight in each thread; fewer leave room for more resident warps, which is
    /// what hides latency when the combine is an outlined call (calls run one after another).
    /// Which wins depends on the operator and the device, so [`crate::bench::combine_rate`]
    /// measures each and keeps the fastest.
    ///
    /// ```
    /// use monoscan::codegen::KernelSet;
    /// let chains = |size| -> Vec<u32> {
    ///     KernelSet::combine_rate_shapes(size).iter().map(|s| match s {
    ///         KernelSet::CombineRate { chains, .. } => *chains,
    ///         _ => unreachable!(),
    ///     }).collect()
    /// };
    /// assert_eq!(chains(8), [1, 2, 4, 8]);
    /// assert_eq!(chains(48), [1, 2, 4]);
    /// assert_eq!(chains(64), [1, 2, 4]);
    /// assert_eq!(chains(256), [1]);
    /// ```
    pub fn combine_rate_shapes(elem_size: usize) -> Vec<KernelSet> {
        [1u32, 2, 4, 8]
            .into_iter()
            .filter(|&k| k == 1 || k as usize * elem_size <= 256)
            .map(|chains| KernelSet::CombineRate {
                block: Self::RATE_BLOCK,
                chains,
            })
            .collect()
    }
}

/// How the kernels call the operator's combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CombineForm {
    /// Inlined at every use, into fully unrolled tiles: the fastest code for cheap combines,
    /// and what every cheap combine gets.
    #[default]
    Inline,
    /// One non-inlined copy, called with its operands by value: the code of a tile then grows
    /// by a call per use instead of by a copy of the combine, which keeps the compile time of
    /// expensive combines (64-bit remainders, transcendental functions, divisions) near that
    /// of cheap ones. [`crate::tuning::policy::combine_form`] picks it from the combine's
    /// estimated cost.
    Outlined,
}

impl CombineForm {
    /// `inline` or `outlined`.
    pub fn name(self) -> &'static str {
        match self {
            CombineForm::Inline => "inline",
            CombineForm::Outlined => "outlined",
        }
    }
}

impl std::fmt::Display for CombineForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CombineForm {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s {
            "inline" => Ok(CombineForm::Inline),
            "outlined" => Ok(CombineForm::Outlined),
            _ => Err(crate::error::Error::invalid(format!(
                "combine form `{s}`: expected inline or outlined"
            ))),
        }
    }
}

/// What to generate for one operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    /// The kernels.
    pub set: KernelSet,
    /// Count every combine in a device global (`ms_combine_count`): for `monoscan lab` only.
    pub instrument: bool,
    /// How the kernels call the combine.
    pub combine: CombineForm,
}

impl KernelSpec {
    /// A normal (uninstrumented) module with the combine inlined. The form the library picks
    /// for an operator is [`crate::tuning::plan::Plan::spec`]'s.
    pub fn new(set: KernelSet) -> Self {
        KernelSpec {
            set,
            instrument: false,
            combine: CombineForm::Inline,
        }
    }

    /// The same module with the combine in `form`.
    pub fn with_combine(self, form: CombineForm) -> Self {
        KernelSpec {
            combine: form,
            ..self
        }
    }

    /// `single-pass-b256x32x1-packed64`, with ` outlined` and ` instrumented` where they apply.
    pub fn name(&self) -> String {
        let mut name = self.set.name();
        if self.combine == CombineForm::Outlined {
            name.push_str(" outlined");
        }
        if self.instrument {
            name.push_str(" instrumented");
        }
        name
    }
}
