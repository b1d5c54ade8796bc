//! Code generation: an operator's [`CudaOp`] and a [`KernelSpec`] in, CUDA C++ out.
//!
//! The source is a prelude (typedefs, the operator wrapped once as `MsOp`, layout
//! `static_assert`s) followed by one kernel family. Rendering is deterministic, so the source
//! itself can key the caches. Entry points are `extern "C"`, named `ms_<op>_<hash>_<kernel>`,
//! so that two operators with the same name never collide.

mod engine;
mod entry;
mod families;
pub mod layout;
mod op;
mod spec;

pub use entry::Entry;
pub use layout::Figure;
pub use spec::{CombineForm, KernelSet, KernelSpec};

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
    /// Where the operator's own snippets are.
    pub snippets: Vec<Snippet>,
    /// The layout figures the source checks, in the order of its `static_assert`s.
    pub layout: Vec<Figure>,
}

/// One of the operator's own snippets in a rendered source (`combine`, `identity`,
/// `prelude`, `param P`, `map`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// Which snippet.
    pub name: String,
    /// Its first line (1-based).
    pub first: usize,
    /// Its last line (1-based, inclusive).
    pub last: usize,
    /// The first line after it that holds code: where NVRTC reports what the snippet leaves
    /// unfinished (a missing `;` or `)`).
    pub next: usize,
}

/// Where an error lies, for [`crate::CompileFailure`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blame {
    /// The snippet.
    pub snippet: String,
    /// The line inside it (1-based).
    pub line: usize,
}

impl Rendered {
    /// The symbol of `entry`, or of its `_mapped` variant when `mapped`
    /// (`ms_sum_i32_1a2b3c4d_tile_scan`).
    pub fn symbol(&self, entry: Entry, mapped: bool) -> String {
        format!("{}_{}", self.prefix, entry.symbol(mapped))
    }

    /// Whether 1-based `line` lies inside one of the operator's snippets.
    pub fn in_snippet(&self, line: usize) -> bool {
        self.snippets
            .iter()
            .any(|s| (s.first..=s.last).contains(&line))
    }

    /// The snippet an NVRTC error at 1-based `line` belongs to, and the line inside it: the
    /// snippet holding the line, or, for a syntax error (`expected ...`) reported on the first
    /// code after a snippet, that snippet's last line, which left the construct unfinished.
    pub fn blame(&self, line: usize, message: &str) -> Option<Blame> {
        let blame = |s: &Snippet, l: usize| Blame {
            snippet: s.name.clone(),
            line: l - s.first + 1,
        };
        if let Some(s) = self
            .snippets
            .iter()
            .find(|s| (s.first..=s.last).contains(&line))
        {
            return Some(blame(s, line));
        }
        let syntax = message.trim_start().starts_with("expected");
        self.snippets
            .iter()
            .find(|s| syntax && s.next == line)
            .map(|s| blame(s, s.last))
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
    layout_checks: String,
    instrument: bool,
    outlined: bool,
    check: bool,
    map: bool,
    map_name: &'a str,
    map_in: &'a str,
    /// What the map returns: the operator's element, or for row scans the values of the
    /// segmented lifting's elements.
    map_out: &'a str,
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
        snippets: Vec::new(),
        layout: Vec::new(),
    }
}

/// Renders the module `spec` for `op`.
pub fn render(op: &CudaOp, spec: &KernelSpec) -> Result<Rendered> {
    op::validate(op)?;
    let prefix = prefix(op);
    let figures = layout::figures(op);
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
            layout_checks: layout::checks(&figures),
            instrument: spec.instrument,
            outlined: spec.combine == CombineForm::Outlined,
            check: spec.set == KernelSet::Check,
            map: op.input.is_some(),
            map_name: op.input.as_ref().map_or("", |m| m.name.as_str()),
            map_in: op.input.as_ref().map_or("", |m| m.in_type.as_str()),
            map_out: match spec.set {
                KernelSet::RowScan { .. } | KernelSet::RowStaged { .. } => {
                    "decltype(((ms_elem*)0)->value)"
                }
                _ => "ms_elem",
            },
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
    if let Some(map) = op.input.as_ref().filter(|m| m.in_size != op.elem_size) {
        // The staged kernels map in place, or widen narrower inputs staged by cp.async; the
        // share scan only maps in place.
        let widens = |s: &crate::tuning::TileShape| {
            crate::tuning::policy::staged_widening(map.in_size, op.elem_size, s)
        };
        const WIDENS: &str =
            "maps in place, or widens by cp.async in the swizzled layout with one chain";
        let refused = match spec.set {
            KernelSet::StagedScan(s) | KernelSet::StagedScanReverse(s) if !widens(&s) => {
                Some(("staged scan", WIDENS))
            }
            KernelSet::StagedReduce(s) if !widens(&s) => Some(("staged reduce", WIDENS)),
            KernelSet::ShareScan { .. } => Some(("share scan", "maps in place")),
            _ => None,
        };
        if let Some((kernel, rule)) = refused {
            return Err(Error::invalid(format!(
                "the {kernel} {rule}: input `{}` ({} bytes) and element `{}` ({} bytes) in {}",
                map.in_type,
                map.in_size,
                op.elem,
                op.elem_size,
                spec.set.name()
            )));
        }
    }
    if let KernelSet::ShareScan { stages, .. } = spec.set {
        if !(1..=crate::tuning::policy::SHARE_STAGES).contains(&stages) {
            return Err(Error::invalid(format!(
                "the share scan takes 1 to {} stage buffers, not {stages}",
                crate::tuning::policy::SHARE_STAGES
            )));
        }
    }
    if let KernelSet::RowStaged { value_size, .. } = spec.set {
        let value = op.layout.field("value").map(|f| f.ty.size);
        if value != Some(value_size) {
            return Err(Error::invalid(format!(
                "the staged row scan of `{}` was asked for {value_size}-byte values, but its elements `{}` are not a segmented lifting of such values",
                op.name, op.elem
            )));
        }
        if let Some(map) = op.input.as_ref().filter(|m| m.in_size != value_size) {
            return Err(Error::invalid(format!(
                "the staged row scan maps in place: input `{}` ({} bytes) and values ({value_size} bytes) differ in size",
                map.in_type, map.in_size
            )));
        }
    }
    let in_size = op.input.as_ref().map_or(op.elem_size, |m| m.in_size);
    let body = families::body(&prefix, spec.set, op.input.is_some(), op.elem_size, in_size)?;
    let source = format!("{prelude}\n{body}");
    let snippets = snippets(&source);
    Ok(Rendered {
        source,
        prefix,
        snippets,
        layout: figures,
    })
}

/// The snippets between `// monoscan:snippet-begin <name>` and `// monoscan:snippet-end`
/// markers (1-based lines, markers excluded; empty snippets left out).
fn snippets(source: &str) -> Vec<Snippet> {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = Vec::new();
    let mut open: Option<(String, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if let Some(name) = t.strip_prefix("// monoscan:snippet-begin") {
            open = Some((name.trim().to_string(), i + 2));
        } else if t.starts_with("// monoscan:snippet-end") {
            if let Some((name, first)) = open.take() {
                // 0-based `i` is the end marker, so the snippet's last line is `i` (1-based).
                if first <= i {
                    let next = (i + 1..lines.len())
                        .find(|&k| {
                            let t = lines[k].trim();
                            !t.is_empty() && !t.starts_with("//")
                        })
                        .map_or(0, |k| k + 1);
                    out.push(Snippet {
                        name,
                        first,
                        last: i,
                        next,
                    });
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
