//! The typed template context of each kernel family, and the rendering of a family's body.
//!
//! Each family template includes the shared pieces it needs (`templates/lib/*.cuh`), which read
//! their parameters from the family's context: [`TileCtx`] for the register-tile building
//! blocks, [`LookbackCtx`] for the decoupled look-back, [`StagingCtx`] for the shared-memory
//! staging, [`TmaCtx`] for the tensor copies (`lib/tensor_copy.cuh` reads its `tma_boxes`).

use super::engine;
use super::spec::KernelSet;
use crate::error::Result;
use crate::tuning::TileShape;
use serde::Serialize;

/// `lib/textbook.cuh`: threads per block.
#[derive(Serialize)]
struct TextbookCtx<'a> {
    prefix: &'a str,
    block: u32,
}

/// `lib/tile.cuh`: the register tile.
#[derive(Serialize)]
struct TileCtx {
    block: u32,
    items: u32,
}

impl TileCtx {
    fn of(s: &TileShape) -> Self {
        TileCtx {
            block: s.block,
            items: s.items,
        }
    }
}

/// `lib/lookback.cuh`: the window and the state layout.
#[derive(Serialize)]
struct LookbackCtx {
    lookback: u32,
    layout: &'static str,
    /// Bytes of one tile's state (`MS_SLOT`).
    state_slot: u64,
    /// Whether the operator is a segmented lifting (the row kernels): aggregates with the flag
    /// set are inclusive prefixes, and tiles that start a row need no prefix.
    absorbing: bool,
}

impl LookbackCtx {
    /// For a look-back over values of `size` bytes.
    fn of(s: &TileShape, size: usize) -> Self {
        LookbackCtx {
            lookback: s.lookback,
            layout: s.layout.name(),
            state_slot: s.layout.status_bytes(size),
            absorbing: false,
        }
    }

    /// For the row kernels' look-back over the segmented lifting's `size`-byte elements.
    fn rows(s: &TileShape, size: usize) -> Self {
        LookbackCtx {
            absorbing: true,
            ..LookbackCtx::of(s, size)
        }
    }
}

/// `lib/staging.cuh`: the swizzle of the staged buffer, and of the staged inputs where they
/// are narrower than the elements (a widening map in the staged scan or reduce; else the
/// same).
#[derive(Serialize)]
struct StagingCtx {
    swizzle: u32,
    in_swizzle: Option<u32>,
}

impl StagingCtx {
    /// Inputs of the elements' size.
    fn of(swizzle: u32) -> Self {
        StagingCtx {
            swizzle,
            in_swizzle: None,
        }
    }
}

/// The TMA forms of the staged scan: the block state after the tile, the tensor copies'
/// boxes, the residency bound.
#[derive(Serialize)]
struct TmaCtx {
    tma_state: usize,
    tma_boxes: u32,
    min_blocks: u32,
}

/// `lib/run_swizzled.cuh`, `lib/run_linear.cuh` and `lib/run_chains.cuh`: how a staged tile
/// keeps its elements and how each thread folds and scans its run.
#[derive(Serialize)]
struct RunCtx {
    linear: bool,
    /// Elements per access group of the linear layout, and bytes per access.
    group: usize,
    unit: usize,
    /// How threads stagger their accesses to a group's units ([`TileShape::linear_rotation`]).
    rotate: u32,
    rotate_period: u32,
    chains: u32,
}

impl RunCtx {
    fn of(s: &TileShape, elem_size: usize) -> Self {
        // A chain's items are read in whole groups.
        let items = s.items / s.chains.max(1);
        let (rotate, rotate_period) = TileShape::linear_rotation(elem_size, s.items, items);
        RunCtx {
            rotate,
            rotate_period,
            linear: s.linear,
            group: TileShape::linear_group(elem_size, items),
            unit: TileShape::linear_unit(elem_size, items),
            chains: s.chains,
        }
    }
}

/// How a staged family copies full tiles in: `cp_async`, `tensor` (TMA tensor copies of the
/// swizzled layout's 128-byte rows) or `bulk` (one TMA bulk copy of a linear tile).
fn copy_form(s: &TileShape) -> &'static str {
    match (s.tma, s.linear) {
        (false, _) => "cp_async",
        (true, false) => "tensor",
        (true, true) => "bulk",
    }
}

/// The families over register tiles alone: the tiled reduce, reduce-then-scan, the one-tile
/// scan.
#[derive(Serialize)]
struct TiledCtx<'a> {
    prefix: &'a str,
    map: bool,
    /// 1 for the reduce-then-scan from the end (what `MS_REVERSE` says), else 0.
    reverse: u32,
    #[serde(flatten)]
    tile: TileCtx,
}

/// The register single-pass scan.
#[derive(Serialize)]
struct SinglePassCtx<'a> {
    prefix: &'a str,
    map: bool,
    /// 1 for the scan from the end.
    reverse: u32,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    lookback: LookbackCtx,
}

/// The staged single-pass scan: its direction, its copies (`cp_async`, `tensor` or `bulk`), its
/// run layout.
#[derive(Serialize)]
struct StagedScanCtx<'a> {
    prefix: &'a str,
    map: bool,
    reverse: u32,
    copy: &'static str,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    lookback: LookbackCtx,
    #[serde(flatten)]
    staging: StagingCtx,
    #[serde(flatten)]
    run: RunCtx,
    #[serde(flatten)]
    tma_form: Option<TmaCtx>,
}

/// The staged reduce: its copies, its run layout, its stages, and its share form's steps.
#[derive(Serialize)]
struct StagedReduceCtx<'a> {
    prefix: &'a str,
    map: bool,
    /// The share scan from the end (0 for the staged reduce).
    reverse: u32,
    copy: &'static str,
    stages: u32,
    tma_boxes: u32,
    /// Whether the share form's stages fit shared memory (else its entry traps).
    shares: bool,
    share_stages: u32,
    share_columns: u32,
    share_unit: usize,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    staging: StagingCtx,
    #[serde(flatten)]
    run: RunCtx,
}

/// Stream compaction: the look-back runs over u32 keep counts.
#[derive(Serialize)]
struct SelectCtx<'a> {
    prefix: &'a str,
    tma: bool,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    lookback: LookbackCtx,
    #[serde(flatten)]
    staging: Option<StagingCtx>,
}

/// Batched row scans: the register tile and the look-back over the lifting's elements.
#[derive(Serialize)]
struct RowScanCtx<'a> {
    prefix: &'a str,
    map: bool,
    reverse: u32,
    segments: u32,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    lookback: LookbackCtx,
}

/// Batched row scans with staged tiles of values: the tile, the look-back over the lifting's
/// elements, the staging of values, and the TMA form's state over lifted elements.
#[derive(Serialize)]
struct RowStagedCtx<'a> {
    prefix: &'a str,
    map: bool,
    reverse: u32,
    segments: bool,
    tma: bool,
    value_size: usize,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    lookback: LookbackCtx,
    #[serde(flatten)]
    staging: StagingCtx,
    #[serde(flatten)]
    tma_form: Option<TmaCtx>,
}

/// Column scans: the block (as a register tile of `rows` items per thread), the look-back over
/// each column's entries, the split of a tile among threads.
#[derive(Serialize)]
struct ColumnScanCtx<'a> {
    prefix: &'a str,
    reverse: u32,
    tma: bool,
    columns: u32,
    strip: u32,
    strips: u64,
    groups: u32,
    rows: u32,
    /// Look-back entries per tile.
    slots: u64,
    /// Dynamic shared memory, bytes (the kernel checks its own layout against it).
    smem: u64,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    lookback: LookbackCtx,
    #[serde(flatten)]
    staging: StagingCtx,
}

/// Lane copies: the entry names only.
#[derive(Serialize)]
struct LanesCopyCtx<'a> {
    prefix: &'a str,
    map: bool,
}

/// The combine-rate kernel: its block, its chains, and the samples it stages in shared memory.
#[derive(Serialize)]
struct CombineRateCtx<'a> {
    prefix: &'a str,
    block: u32,
    chains: u32,
    /// Samples staged per block (a power of two).
    samples: u32,
}

/// Predecessors each thread of a column scan's look-back loads at once: a 524,288 x 32 f32
/// scan ran at 0.89 of a copy with 4 on an H100, 0.71 with 16.
const COLUMN_LOOKBACK: u32 = 4;

/// Samples the combine-rate kernel stages in shared memory per block: 8 KiB of 64-byte
/// elements.
const RATE_SAMPLES: u32 = 128;

/// The body of `set` (everything after the prelude) for an operator of `elem_size`-byte
/// elements, with `_mapped` entries when `map` (reading `in_size`-byte inputs).
pub(super) fn body(
    prefix: &str,
    set: KernelSet,
    map: bool,
    elem_size: usize,
    in_size: usize,
) -> Result<String> {
    let Some(template) = set.template() else {
        return Ok(String::new());
    };
    match set {
        KernelSet::TreeReduce { block }
        | KernelSet::KoggeStone { block }
        | KernelSet::BrentKung { block } => {
            engine::render(template, &TextbookCtx { prefix, block })
        }
        KernelSet::TiledReduce(s)
        | KernelSet::ReduceThenScan(s)
        | KernelSet::ReduceThenScanReverse(s)
        | KernelSet::OneTile(s) => engine::render(
            template,
            &TiledCtx {
                prefix,
                map,
                reverse: u32::from(matches!(set, KernelSet::ReduceThenScanReverse(_))),
                tile: TileCtx::of(&s),
            },
        ),
        KernelSet::SinglePass(s) | KernelSet::SinglePassReverse(s) => engine::render(
            template,
            &SinglePassCtx {
                prefix,
                map,
                reverse: u32::from(matches!(set, KernelSet::SinglePassReverse(_))),
                tile: TileCtx::of(&s),
                lookback: LookbackCtx::of(&s, elem_size),
            },
        ),
        KernelSet::StagedScan(s) | KernelSet::StagedScanReverse(s) => engine::render(
            template,
            &StagedScanCtx {
                prefix,
                map,
                reverse: u32::from(matches!(set, KernelSet::StagedScanReverse(_))),
                copy: copy_form(&s),
                tile: TileCtx::of(&s),
                lookback: LookbackCtx::of(&s, elem_size),
                staging: StagingCtx {
                    swizzle: s.swizzle(elem_size),
                    in_swizzle: (map && in_size < elem_size).then(|| s.swizzle(in_size)),
                },
                run: RunCtx::of(&s, elem_size),
                tma_form: s.tma.then(|| TmaCtx {
                    tma_state: s.tma_state_bytes(elem_size),
                    tma_boxes: s.tma_boxes(),
                    min_blocks: s.min_blocks,
                }),
            },
        ),
        KernelSet::StagedReduce(s) | KernelSet::ShareScan { shape: s, .. } => engine::render(
            template,
            &StagedReduceCtx {
                prefix,
                map,
                reverse: u32::from(matches!(set, KernelSet::ShareScan { reverse: true, .. })),
                copy: copy_form(&s),
                stages: crate::tuning::policy::REDUCE_STAGES,
                tma_boxes: s.tma_boxes(),
                shares: s.shares_fit(elem_size),
                share_stages: match set {
                    KernelSet::ShareScan { stages, .. } => stages,
                    _ => crate::tuning::policy::SHARE_STAGES,
                },
                share_columns: TileShape::share_columns(elem_size),
                share_unit: TileShape::unit(elem_size),
                tile: TileCtx::of(&s),
                staging: StagingCtx {
                    swizzle: s.swizzle(elem_size),
                    // A widening map's inputs in the staged reduce (never in the share scan,
                    // whose rendering refuses one).
                    in_swizzle: (map
                        && in_size < elem_size
                        && matches!(set, KernelSet::StagedReduce(_)))
                    .then(|| s.swizzle(in_size)),
                },
                run: RunCtx::of(&s, elem_size),
            },
        ),
        KernelSet::Select(s) | KernelSet::SelectStaged(s) => {
            let staged = matches!(set, KernelSet::SelectStaged(_));
            engine::render(
                template,
                &SelectCtx {
                    prefix,
                    tma: staged && s.tma,
                    tile: TileCtx::of(&s),
                    // The look-back runs over u32 keep counts.
                    lookback: LookbackCtx::of(&s, 4),
                    staging: staged.then(|| StagingCtx::of(s.swizzle(elem_size))),
                },
            )
        }
        KernelSet::RowScan {
            shape,
            reverse,
            segments,
        } => engine::render(
            template,
            &RowScanCtx {
                prefix,
                map,
                reverse: u32::from(reverse),
                segments: u32::from(segments),
                tile: TileCtx::of(&shape),
                lookback: LookbackCtx::rows(&shape, elem_size),
            },
        ),
        KernelSet::RowStaged {
            shape,
            reverse,
            value_size,
            segments,
        } => engine::render(
            template,
            &RowStagedCtx {
                prefix,
                map,
                reverse: u32::from(reverse),
                segments,
                tma: shape.tma,
                value_size,
                tile: TileCtx::of(&shape),
                // The look-back and the block state run over the lifting's elements.
                lookback: LookbackCtx::rows(&shape, elem_size),
                staging: StagingCtx::of(shape.swizzle(value_size)),
                tma_form: shape.tma.then(|| TmaCtx {
                    tma_state: shape.row_staged_state_bytes(elem_size, segments),
                    tma_boxes: shape.tma_boxes(),
                    min_blocks: shape.min_blocks,
                }),
            },
        ),
        KernelSet::ColumnScan { shape, reverse } => engine::render(
            template,
            &ColumnScanCtx {
                prefix,
                reverse: u32::from(reverse),
                tma: shape.tma,
                columns: shape.columns,
                strip: shape.strip,
                strips: shape.strips(),
                groups: shape.groups,
                rows: shape.rows,
                slots: shape.slots(elem_size),
                smem: shape.smem_bytes(elem_size),
                tile: TileCtx {
                    block: shape.block,
                    items: shape.rows,
                },
                // Unpadded entries: a tile's entries are padded together (`slots`).
                lookback: LookbackCtx {
                    lookback: COLUMN_LOOKBACK,
                    layout: shape.layout.name(),
                    state_slot: shape.layout.entry_bytes(elem_size),
                    absorbing: false,
                },
                staging: StagingCtx::of(0),
            },
        ),
        KernelSet::LanesCopy => engine::render(template, &LanesCopyCtx { prefix, map }),
        KernelSet::CombineRate { block, chains } => engine::render(
            template,
            &CombineRateCtx {
                prefix,
                block,
                chains,
                samples: RATE_SAMPLES,
            },
        ),
        KernelSet::Check => Ok(String::new()),
    }
}
