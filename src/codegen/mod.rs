//! Code generation: an operator's [`CudaOp`] and a [`KernelSpec`] in, CUDA C++ out.
//!
//! The source is a prelude (typedefs, the operator wrapped once as `MsOp`, layout
//! `static_assert`s) followed by one kernel family. Rendering is deterministic, so the source
//! itself can key the caches. Entry points are `extern "C"`, named `ms_<op>_<hash>_<kernel>`,
//! so that two operators with the same name never collide.

mod engine;
mod families;
mod op;
mod spec;

pub use spec::{CombineForm, Entry, KernelSet, KernelSpec};

use crate::error::{Error, Result};
use crate::monoid::CudaOp;
use serde::Serialize;
use sha2::{Digest, Sha256};

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
    /// The symbol of `entry`, or of its `_mapped` variant when `mapped`
    /// (`ms_sum_i32_1a2b3c4d_tile_scan`).
    pub fn symbol(&self, entry: Entry, mapped: bool) -> String {
        format!("{}_{}", self.prefix, entry.symbol(mapped))
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
    outlined: bool,
    check: bool,
    map: bool,
    map_name: &'a str,
    map_in: &'a str,
    map_in_size: usize,
    map_in_align: usize,
    map_body: String,
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
/// reduce is compared with, and the hold that [`crate::bench::Timer`] queues before each timed
/// run. Its entries are `monoscan_read_pass` and `monoscan_hold`.
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
            outlined: spec.combine == CombineForm::Outlined,
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
    if let KernelSet::Select(_) | KernelSet::SelectStaged(_) = spec.set {
        if op.input.is_none() || op.elem_size != 4 {
            return Err(Error::invalid(
                "the select kernel needs an operator of 4-byte counts with an input map",
            ));
        }
    }
    if let (KernelSet::StagedScan(_), Some(map)) = (spec.set, op.input.as_ref()) {
        if map.in_size != op.elem_size {
            return Err(Error::invalid(format!(
                "the staged scan maps in place: input `{}` ({} bytes) and element `{}` ({} bytes) differ in size",
                map.in_type, map.in_size, op.elem, op.elem_size
            )));
        }
    }
    let body = families::body(&prefix, spec.set, op.input.is_some(), op.elem_size)?;
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
    use crate::monoid::Monoid;
    use crate::ops::{MatMulMod, Sum};

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
