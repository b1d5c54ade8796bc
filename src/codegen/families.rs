//! The typed template context of each kernel family, and the rendering of a family's body.
//!
//! Each family template includes the shared pieces it needs (`templates/lib/*.cuh`), which read
//! their parameters from the family's context: [`TileCtx`] for the register-tile building
//! blocks, [`LookbackCtx`] for the decoupled look-back, [`StagingCtx`] for the shared-memory
//! staging, [`TmaCtx`] for the tensor copies (`lib/tma_copy.cuh` reads its `tma_boxes`).

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
}

impl LookbackCtx {
    /// For a look-back over values of `size` bytes.
    fn of(s: &TileShape, size: usize) -> Self {
        LookbackCtx {
            lookback: s.lookback,
            layout: s.layout.name(),
            state_slot: s.layout.status_bytes(size),
        }
    }
}

/// `lib/staging.cuh`: the swizzle of the staged buffer.
#[derive(Serialize)]
struct StagingCtx {
    swizzle: u32,
}

/// The TMA form of the staged scan: its block state after the tile, its boxes, its residency.
#[derive(Serialize)]
struct TmaCtx {
    tma_state: usize,
    tma_boxes: u32,
    min_blocks: u32,
}

/// The families over register tiles alone: the tiled reduce, reduce-then-scan, the one-tile
/// scan.
#[derive(Serialize)]
struct TiledCtx<'a> {
    prefix: &'a str,
    map: bool,
    #[serde(flatten)]
    tile: TileCtx,
}

/// The register single-pass scan.
#[derive(Serialize)]
struct SinglePassCtx<'a> {
    prefix: &'a str,
    map: bool,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    lookback: LookbackCtx,
}

/// The staged single-pass scan, in its cp.async or TMA form.
#[derive(Serialize)]
struct StagedScanCtx<'a> {
    prefix: &'a str,
    map: bool,
    tma: bool,
    #[serde(flatten)]
    tile: TileCtx,
    #[serde(flatten)]
    lookback: LookbackCtx,
    #[serde(flatten)]
    staging: StagingCtx,
    #[serde(flatten)]
    tma_form: Option<TmaCtx>,
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

/// Lane copies: the entry names only.
#[derive(Serialize)]
struct LanesCopyCtx<'a> {
    prefix: &'a str,
    map: bool,
}

/// The body of `set` (everything after the prelude) for an operator of `elem_size`-byte
/// elements, with `_mapped` entries when `map`.
pub(super) fn body(prefix: &str, set: KernelSet, map: bool, elem_size: usize) -> Result<String> {
    let Some(template) = set.template() else {
        return Ok(String::new());
    };
    match set {
        KernelSet::TreeReduce { block }
        | KernelSet::KoggeStone { block }
        | KernelSet::BrentKung { block } => {
            engine::render(template, &TextbookCtx { prefix, block })
        }
        KernelSet::TiledReduce(s) | KernelSet::ReduceThenScan(s) | KernelSet::OneTile(s) => {
            engine::render(
                template,
                &TiledCtx {
                    prefix,
                    map,
                    tile: TileCtx::of(&s),
                },
            )
        }
        KernelSet::SinglePass(s) => engine::render(
            template,
            &SinglePassCtx {
                prefix,
                map,
                tile: TileCtx::of(&s),
                lookback: LookbackCtx::of(&s, elem_size),
            },
        ),
        KernelSet::StagedScan(s) => engine::render(
            template,
            &StagedScanCtx {
                prefix,
                map,
                tma: s.tma,
                tile: TileCtx::of(&s),
                lookback: LookbackCtx::of(&s, elem_size),
                staging: StagingCtx {
                    swizzle: s.swizzle(elem_size),
                },
                tma_form: s.tma.then(|| TmaCtx {
                    tma_state: s.tma_state_bytes(elem_size),
                    tma_boxes: s.tma_boxes(),
                    min_blocks: s.min_blocks,
                }),
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
                    staging: staged.then(|| StagingCtx {
                        swizzle: s.swizzle(elem_size),
                    }),
                },
            )
        }
        KernelSet::RowScan { shape, reverse } => engine::render(
            template,
            &RowScanCtx {
                prefix,
                map,
                reverse: u32::from(reverse),
                tile: TileCtx::of(&shape),
                lookback: LookbackCtx::of(&shape, elem_size),
            },
        ),
        KernelSet::RowStaged {
            shape,
            reverse,
            value_size,
        } => engine::render(
            template,
            &RowStagedCtx {
                prefix,
                map,
                reverse: u32::from(reverse),
                tma: shape.tma,
                value_size,
                tile: TileCtx::of(&shape),
                // The look-back and the block state run over the lifting's elements.
                lookback: LookbackCtx::of(&shape, elem_size),
                staging: StagingCtx {
                    swizzle: shape.swizzle(value_size),
                },
                tma_form: shape.tma.then(|| TmaCtx {
                    tma_state: shape.tma_state_bytes(elem_size),
                    tma_boxes: shape.tma_boxes(),
                    min_blocks: shape.min_blocks,
                }),
            },
        ),
        KernelSet::LanesCopy => engine::render(template, &LanesCopyCtx { prefix, map }),
        KernelSet::Check => Ok(String::new()),
    }
}
