//! Code generation: an operator's [`CudaOp`] and a [`KernelSpec`] in, CUDA C++ out.
//!
//! The source is a prelude (typedefs, the operator wrapped once as `MsOp`, layout
//! `static_assert`s) followed by one kernel family. Rendering is deterministic, so the source
//! itself can key the caches. Entry points are `extern "C"`, named `ms_<op>_<hash>_<kernel>`,
//! so that two operators with the same name never collide.

mod engine;
mod op;
mod prefetch;
mod shape;

pub use prefetch::{prefetch_tiles, PrefetchPlan, PACE_SHARE, PACE_WAVES, PREFETCH_BYTES};
pub use shape::{
    select_shape, select_staged_shape, textbook_block, tile_shape, Purpose, StateLayout, TileShape,
    SMEM_LIMIT,
};

use crate::error::{Error, Result};
use crate::monoid::CudaOp;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Which kernels a module holds. Modules are kept small (one algorithm each) so that a cold
/// compile only pays for what a call needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelSet {
    /// The seed notes' shared-memory reduction (`reduce_tree`), `block` threads per block.
    TreeReduce {
        /// Threads per block (a power of two).
        block: u32,
    },
    /// Kogge-Stone block scans and the hierarchical add-back (`ks_scan`, `add_carry`).
    KoggeStone {
        /// Threads per block = elements per section (a power of two).
        block: u32,
    },
    /// Brent-Kung block scans and the hierarchical add-back (`bk_scan`, `add_carry`).
    BrentKung {
        /// Threads per block; sections hold twice as many elements.
        block: u32,
    },
    /// The tiled reduce (`reduce_tiles`).
    TiledReduce(TileShape),
    /// Reduce-then-scan (`tile_totals`, `tile_scan`): deterministic.
    ReduceThenScan(TileShape),
    /// The single-pass scan (`scan_single_pass`) and the one-tile scan (`tile_scan`).
    SinglePass(TileShape),
    /// The one-tile scan (`tile_scan`) alone, in a tile sized for small inputs: one launch
    /// of one block that carries little padding.
    OneTile(TileShape),
    /// `combine_pairs`, for [`crate::verify`].
    Check,
    /// Stream compaction in one pass, the single-pass scan of the map's keep counts fused with
    /// the scatter (u32 counts; operators with an input map only): `select_staged` (tile
    /// copied into shared memory, sm_80 and newer) when the shape is staged, else
    /// `select_mapped` (tile held in registers).
    Select(TileShape),
}

impl KernelSet {
    /// A short name for messages and cache listings.
    pub fn name(&self) -> String {
        match self {
            KernelSet::TreeReduce { block } => format!("tree-reduce-b{block}"),
            KernelSet::KoggeStone { block } => format!("kogge-stone-b{block}"),
            KernelSet::BrentKung { block } => format!("brent-kung-b{block}"),
            KernelSet::TiledReduce(s) => format!("tiled-reduce-{}", s.name()),
            KernelSet::ReduceThenScan(s) => format!("reduce-then-scan-{}", s.name()),
            KernelSet::SinglePass(s) => format!("single-pass-{}", s.name()),
            KernelSet::OneTile(s) => format!("one-tile-{}", s.name()),
            KernelSet::Check => "check".to_string(),
            KernelSet::Select(s) => format!("select-{}", s.name()),
        }
    }

    /// The entry points (without prefix) the module holds; `mapped` adds the `_mapped`
    /// variants that an operator with an input map gets.
    pub fn entries(&self, mapped: bool) -> Vec<&'static str> {
        let base = self.plain_entries();
        let mut out = base.to_vec();
        if mapped {
            out.extend(base.iter().filter_map(|e| match *e {
                "reduce_tiles" => Some("reduce_tiles_mapped"),
                "tile_totals" => Some("tile_totals_mapped"),
                "tile_scan" => Some("tile_scan_mapped"),
                "scan_single_pass" => Some("scan_single_pass_mapped"),
                "scan_staged" => Some("scan_staged_mapped"),
                _ => None,
            }));
        }
        out
    }

    fn plain_entries(&self) -> &'static [&'static str] {
        match self {
            KernelSet::TreeReduce { .. } => &["fill", "reduce_tree"],
            KernelSet::KoggeStone { .. } => &["fill", "ks_scan", "add_carry"],
            KernelSet::BrentKung { .. } => &["fill", "bk_scan", "add_carry"],
            KernelSet::TiledReduce(_) => &["fill", "reduce_tiles"],
            KernelSet::ReduceThenScan(_) => &["fill", "tile_totals", "tile_scan"],
            KernelSet::SinglePass(s) if s.staged => &["fill", "scan_staged"],
            KernelSet::SinglePass(_) => &["fill", "scan_single_pass", "tile_scan"],
            KernelSet::OneTile(_) => &["fill", "tile_scan"],
            KernelSet::Check => &["fill", "combine_pairs"],
            KernelSet::Select(s) if s.staged => &["fill", "select_staged"],
            KernelSet::Select(_) => &["fill", "select_mapped"],
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
}

impl KernelSpec {
    /// A normal (uninstrumented) module.
    pub fn new(set: KernelSet) -> Self {
        KernelSpec {
            set,
            instrument: false,
        }
    }
}

/// A rendered module.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The complete CUDA C++ source.
    pub source: String,
    /// The prefix of every entry point.
    pub prefix: String,
    /// 1-based inclusive line ranges of the operator's own snippets.
    pub snippet_lines: Vec<(usize, usize)>,
}

impl Rendered {
    /// The entry point name of `kernel` (`reduce_tree`, `scan_single_pass`, ...).
    pub fn entry(&self, kernel: &str) -> String {
        format!("{}_{kernel}", self.prefix)
    }

    /// Whether 1-based `line` lies inside one of the operator's snippets.
    pub fn in_snippet(&self, line: usize) -> bool {
        self.snippet_lines
            .iter()
            .any(|&(a, b)| (a..=b).contains(&line))
    }
}

#[derive(Serialize)]
struct PreludeCtx<'a> {
    version: &'a str,
    op_name: &'a str,
    family: String,
    prefix: &'a str,
    op_code: String,
    op_struct: &'a str,
    elem: &'a str,
    elem_size: usize,
    elem_align: usize,
    instrument: bool,
    check: bool,
    map: bool,
    map_name: &'a str,
    map_in: &'a str,
    map_in_size: usize,
    map_in_align: usize,
    map_body: String,
}

#[derive(Serialize, Default)]
struct BodyCtx<'a> {
    prefix: &'a str,
    block: u32,
    items: u32,
    layout: &'a str,
    lookback: u32,
    staged: bool,
    tma: bool,
    tma_state: usize,
    /// Tensor copies per tile in the TMA form (`MS_TMA_BOXES`).
    tma_boxes: u32,
    /// Bytes of one tile's single-pass state (`MS_SLOT`).
    state_slot: u64,
    tma_min_blocks: u32,
    swizzle: u32,
    map: bool,
    tree: bool,
    ks: bool,
    bk: bool,
    reduce_tiles: bool,
    tile_totals: bool,
    tile_scan: bool,
    single_pass: bool,
    select: bool,
    select_staged: bool,
    select_tma: bool,
}

fn body(prefix: &str, set: KernelSet, map: bool, elem_size: usize) -> Result<String> {
    let mut ctx = BodyCtx {
        prefix,
        map,
        ..BodyCtx::default()
    };
    match set {
        KernelSet::TreeReduce { block } => {
            ctx.block = block;
            ctx.tree = true;
        }
        KernelSet::KoggeStone { block } => {
            ctx.block = block;
            ctx.ks = true;
        }
        KernelSet::BrentKung { block } => {
            ctx.block = block;
            ctx.bk = true;
        }
        KernelSet::TiledReduce(s)
        | KernelSet::ReduceThenScan(s)
        | KernelSet::SinglePass(s)
        | KernelSet::OneTile(s) => {
            ctx.block = s.block;
            ctx.items = s.items;
            ctx.layout = s.layout.name();
            ctx.lookback = s.lookback;
            ctx.staged = s.staged;
            ctx.tma = s.staged && s.tma;
            ctx.tma_state = s.tma_state_bytes(elem_size);
            ctx.tma_boxes = s.tma_boxes();
            ctx.state_slot = s.layout.status_bytes(elem_size);
            ctx.tma_min_blocks = s.staged_blocks_per_sm(elem_size);
            ctx.swizzle = s.swizzle(elem_size);
            ctx.reduce_tiles = matches!(set, KernelSet::TiledReduce(_));
            ctx.tile_totals = matches!(set, KernelSet::ReduceThenScan(_));
            ctx.tile_scan = !ctx.reduce_tiles && !s.staged;
            ctx.single_pass = matches!(set, KernelSet::SinglePass(_));
        }
        KernelSet::Select(s) => {
            ctx.block = s.block;
            ctx.items = s.items;
            ctx.layout = s.layout.name();
            ctx.lookback = s.lookback;
            ctx.swizzle = s.swizzle(elem_size);
            // The look-back lives in the single-pass section; the register scan it also
            // emits is not loaded.
            ctx.single_pass = true;
            ctx.select = true;
            ctx.select_staged = s.staged;
            ctx.select_tma = s.staged && s.tma;
            // The select kernels look back over u32 keep counts.
            ctx.state_slot = s.layout.status_bytes(4);
        }
        KernelSet::Check => {}
    }
    let template = match set {
        KernelSet::Check => return Ok(String::new()),
        KernelSet::TreeReduce { .. }
        | KernelSet::KoggeStone { .. }
        | KernelSet::BrentKung { .. } => "textbook.cu",
        _ => "tiled.cu",
    };
    engine::render(template, &ctx)
}

/// The entry-point prefix of `op`: its name made an identifier, and a hash of its definition.
pub fn prefix(op: &CudaOp) -> String {
    let mut name = crate::element::ident_fragment(&op.name);
    name.truncate(40);
    let digest = Sha256::digest(format!("{op:?}").as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("ms_{name}_{hash}")
}

/// The module of operator-independent kernels (`templates/baseline.cu`): the read-only pass a
/// reduce is compared with, and the hold that `Gpu::time` queues before each timed run. Its
/// entries are `monoscan_read_pass` and `monoscan_hold`.
pub fn baseline() -> Rendered {
    Rendered {
        source: include_str!("../../templates/baseline.cu").to_string(),
        prefix: "monoscan".to_string(),
        snippet_lines: Vec::new(),
    }
}

/// Renders the module `spec` for `op`.
pub fn render(op: &CudaOp, spec: &KernelSpec) -> Result<Rendered> {
    op::validate(op)?;
    let prefix = prefix(op);
    let prelude = engine::render(
        "prelude.cu",
        &PreludeCtx {
            version: env!("CARGO_PKG_VERSION"),
            op_name: &op.name,
            family: spec.set.name(),
            prefix: &prefix,
            op_code: op::render(op)?,
            op_struct: op::OP_STRUCT,
            elem: &op.elem,
            elem_size: op.elem_size,
            elem_align: op.elem_align,
            instrument: spec.instrument,
            check: spec.set == KernelSet::Check,
            map: op.input.is_some(),
            map_name: op.input.as_ref().map_or("", |m| m.name.as_str()),
            map_in: op.input.as_ref().map_or("", |m| m.in_type.as_str()),
            map_in_size: op.input.as_ref().map_or(0, |m| m.in_size),
            map_in_align: op.input.as_ref().map_or(0, |m| m.in_align),
            map_body: op.input.as_ref().map_or(String::new(), |m| {
                m.body
                    .lines()
                    .map(|l| format!("        {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        },
    )?;
    if let KernelSet::Select(_) = spec.set {
        if op.input.is_none() || op.elem_size != 4 {
            return Err(Error::invalid(
                "the select kernel needs an operator of 4-byte counts with an input map",
            ));
        }
    }
    if let (KernelSet::SinglePass(shape), Some(map)) = (spec.set, op.input.as_ref()) {
        if shape.staged && map.in_size != op.elem_size {
            return Err(Error::invalid(format!(
                "the staged scan maps in place: input `{}` ({} bytes) and element `{}` ({} bytes) differ in size",
                map.in_type, map.in_size, op.elem, op.elem_size
            )));
        }
    }
    let body = body(&prefix, spec.set, op.input.is_some(), op.elem_size)?;
    let source = format!("{prelude}\n{body}");
    let snippet_lines = snippet_lines(&source);
    Ok(Rendered {
        source,
        prefix,
        snippet_lines,
    })
}

fn snippet_lines(source: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, line) in source.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("// monoscan:snippet-begin") {
            start = Some(i + 2);
        } else if t.starts_with("// monoscan:snippet-end") {
            if let Some(s) = start.take() {
                if s <= i {
                    out.push((s, i));
                }
            }
        }
    }
    out
}

/// Numbers the lines of `source`; with `around`, only a few lines around each listed line
/// (marked `>>`), else all of them.
pub fn numbered(source: &str, around: &[usize]) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let width = lines.len().to_string().len();
    let keep = |i: usize| around.is_empty() || around.iter().any(|&l| i + 3 >= l && i <= l + 3);
    let mut out = String::new();
    let mut skipped = false;
    for (k, line) in lines.iter().enumerate() {
        let i = k + 1;
        if keep(i) {
            if skipped {
                out.push_str("   ...\n");
                skipped = false;
            }
            let mark = if around.contains(&i) { ">>" } else { "  " };
            out.push_str(&format!("{mark} {i:>width$} | {line}\n"));
        } else {
            skipped = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{MatMulMod, Sum};
    use crate::Monoid;

    fn textbook() -> KernelSpec {
        KernelSpec::new(KernelSet::TreeReduce { block: 256 })
    }

    #[test]
    fn rendering_is_deterministic_and_marks_snippets() {
        let op = MatMulMod::default().cuda();
        let a = render(&op, &textbook()).unwrap();
        let b = render(&op, &textbook()).unwrap();
        assert_eq!(a.source, b.source);
        let combine_line = a.source.lines().position(|l| l.contains("% P")).unwrap() + 1;
        assert!(a.in_snippet(combine_line));
        let kernel_line = a
            .source
            .lines()
            .position(|l| l.contains("_reduce_tree(const"))
            .unwrap()
            + 1;
        assert!(!a.in_snippet(kernel_line));
        assert!(a
            .source
            .contains("static_assert(sizeof(monoscan_mat2) == 16"));
    }

    #[test]
    fn different_operators_get_different_prefixes() {
        let a = prefix(&MatMulMod::new(7).unwrap().cuda());
        let b = prefix(&MatMulMod::new(11).unwrap().cuda());
        assert_ne!(a, b);
        assert!(a.starts_with("ms_matmod_7_"));
        assert_ne!(
            prefix(&Sum::<i32>::new().cuda()),
            prefix(&Sum::<u32>::new().cuda())
        );
    }

    #[test]
    fn numbering_marks_the_error_lines() {
        let src = (1..=20)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = numbered(&src, &[10]);
        assert!(text.contains(">> 10 | line 10"));
        assert!(text.contains("    7 | line 7"));
        assert!(!text.contains("line 2\n"));
    }
}
