//! The layout checks: `static_assert`s that every CUDA element type of an operator has its
//! Rust twin's size and alignment and, for described structs, each field's offset and type;
//! and the probe source whose PTX holds CUDA's own figures, which the JIT compiles when a check
//! fails so that [`crate::Error::Layout`] can show both sides.

use crate::layout::{Layout, Shape};
use crate::monoid::CudaOp;

/// The prefix of every layout check's message.
pub const MESSAGE: &str = "monoscan layout: ";

/// The line that opens the checks in a rendered source (the probe keeps what comes before).
pub const BEGIN: &str =
    "// ---- layout checks: every CUDA element type must match its Rust twin ----";

/// One checked figure of one type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figure {
    /// The C++ type.
    pub cuda_type: String,
    /// What is checked: `size`, `align`, `offset of x`, `type of x`.
    pub figure: String,
    /// Rust's value (`8`; a C++ type such as `short[2]` for `type of`).
    pub rust: String,
    /// A C++ integer constant expression of CUDA's value, for the probe (none for types).
    pub probe: Option<String>,
}

impl Figure {
    /// The message of this figure's `static_assert`.
    pub fn message(&self) -> String {
        format!(
            "{MESSAGE}{}: {} differs from Rust's {}",
            self.cuda_type, self.figure, self.rust
        )
    }

    /// The condition of this figure's `static_assert`.
    fn condition(&self) -> String {
        match &self.probe {
            Some(expr) => format!("{expr} == {}", self.rust),
            None => {
                let member = self.figure.trim_start_matches("type of ");
                format!(
                    "ms_same_type<decltype({}::{member}), {}>::value",
                    self.cuda_type, self.rust
                )
            }
        }
    }
}

/// Every layout an operator's kernels touch: its element type and everything inside it, its
/// nested operators' and its input map's, each C++ name once, inner types first.
fn layouts(op: &CudaOp) -> Vec<&Layout> {
    fn walk<'a>(op: &'a CudaOp, out: &mut Vec<&'a Layout>) {
        for (_, inner) in &op.nested {
            walk(inner, out);
        }
        let mut more = op.layout.all();
        if let Some(map) = &op.input {
            more.extend(map.in_layout.all());
        }
        for l in more {
            if !out.iter().any(|o| o.cuda_name == l.cuda_name) {
                out.push(l);
            }
        }
    }
    let mut out = Vec::new();
    walk(op, &mut out);
    out
}

/// The figures checked for `op`: size and alignment of every type (primitives only where they
/// are the element or input type itself), offset and type of every field of described structs.
pub fn figures(op: &CudaOp) -> Vec<Figure> {
    let own = |name: &str| name == op.elem || op.input.as_ref().is_some_and(|m| m.in_type == name);
    let mut out = Vec::new();
    for l in layouts(op) {
        if matches!(l.shape, Shape::Primitive(_)) && !own(&l.cuda_name) {
            continue;
        }
        let t = &l.cuda_name;
        let figure = |figure: String, rust: String, probe: Option<String>| Figure {
            cuda_type: t.clone(),
            figure,
            rust,
            probe,
        };
        out.push(figure(
            "size".into(),
            l.size.to_string(),
            Some(format!("sizeof({t})")),
        ));
        out.push(figure(
            "align".into(),
            l.align.to_string(),
            Some(format!("alignof({t})")),
        ));
        for f in l.fields() {
            let m = &f.cuda_name;
            out.push(figure(
                format!("offset of {m}"),
                f.offset.to_string(),
                Some(format!("MS_OFFSETOF({t}, {m})")),
            ));
            out.push(figure(format!("type of {m}"), f.cuda_type(), None));
        }
    }
    out
}

/// The helpers the checks and the probe use: `offsetof` (the source includes no headers, and
/// NVRTC's front end spells it `__INTADDR__`) and a type-equality test.
const HELPERS: &str = "\
#ifndef MS_OFFSETOF
#define MS_OFFSETOF(T, m) ((unsigned long long)__INTADDR__(&((T*)0)->m))
#endif
template <class A, class B> struct ms_same_type { static constexpr bool value = false; };
template <class A> struct ms_same_type<A, A> { static constexpr bool value = true; };
";

/// The checks, as C++ to place after every definition.
pub fn checks(figures: &[Figure]) -> String {
    let mut out = format!("{BEGIN}\n{HELPERS}");
    for f in figures {
        out.push_str(&format!(
            "static_assert({}, \"{}\");\n",
            f.condition(),
            f.message()
        ));
    }
    out
}

/// The probe: `source` up to the checks, then an array of CUDA's value of every numeric figure
/// (`ms_layout_probe`, in the order of `figures` without the type figures). `None` when the
/// source has no checks.
pub fn probe(source: &str, figures: &[Figure]) -> Option<String> {
    let cut = source.find(BEGIN)?;
    let values: Vec<&str> = figures.iter().filter_map(|f| f.probe.as_deref()).collect();
    Some(format!(
        "{}{HELPERS}extern \"C\" __device__ unsigned long long ms_layout_probe[] = {{ {} }};\n",
        &source[..cut],
        values.join(", ")
    ))
}

/// Reads the probe's values from its PTX (`.global .align 8 .b8 ms_layout_probe[N] = {...};`,
/// little-endian bytes, trailing zeros left out).
pub fn read_probe(ptx: &str, count: usize) -> Option<Vec<u64>> {
    let line = ptx.lines().find(|l| l.contains("ms_layout_probe["))?;
    let mut bytes = vec![0u8; count * 8];
    if let Some((_, list)) = line.split_once('{') {
        let list = list.split('}').next()?;
        for (k, b) in list
            .split(',')
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .enumerate()
        {
            *bytes.get_mut(k)? = b.parse().ok()?;
        }
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monoid::Monoid;
    use crate::ops::{Flagged, Indexed, Segmented, Sum};

    #[test]
    fn every_field_gets_an_offset_and_a_type_check() {
        let op = CudaOp::new::<Flagged<Indexed<i64>>>("t");
        let figs = figures(&op);
        let names: Vec<String> = figs
            .iter()
            .map(|f| format!("{} {}", f.cuda_type, f.figure))
            .collect();
        assert_eq!(
            names,
            [
                "monoscan_indexed_long_long size",
                "monoscan_indexed_long_long align",
                "monoscan_indexed_long_long offset of value",
                "monoscan_indexed_long_long type of value",
                "monoscan_indexed_long_long offset of index",
                "monoscan_indexed_long_long type of index",
                "monoscan_flagged_monoscan_indexed_long_long size",
                "monoscan_flagged_monoscan_indexed_long_long align",
                "monoscan_flagged_monoscan_indexed_long_long offset of value",
                "monoscan_flagged_monoscan_indexed_long_long type of value",
                "monoscan_flagged_monoscan_indexed_long_long offset of flag",
                "monoscan_flagged_monoscan_indexed_long_long type of flag",
            ]
        );
        let text = checks(&figs);
        assert!(text.contains(
            "static_assert(MS_OFFSETOF(monoscan_flagged_monoscan_indexed_long_long, flag) == 16, \
             \"monoscan layout: monoscan_flagged_monoscan_indexed_long_long: offset of flag \
             differs from Rust's 16\");"
        ));
        assert!(text.contains(
            "ms_same_type<decltype(monoscan_indexed_long_long::index), unsigned long long>::value"
        ));
    }

    #[test]
    fn nested_operators_and_primitive_elements() {
        let op = Segmented::new(Sum::<u16>::new()).cuda();
        let figs = figures(&op);
        // `unsigned short` is only a field type here, so it is not checked on its own.
        assert!(
            figs.iter().all(|f| f.cuda_type != "unsigned short"),
            "{figs:?}"
        );
        let plain = figures(&Sum::<u16>::new().cuda());
        assert_eq!(plain.len(), 2);
        assert_eq!(
            plain[0].message(),
            "monoscan layout: unsigned short: size differs from Rust's 2"
        );
    }

    #[test]
    fn the_probe_reads_little_endian_bytes() {
        let ptx = ".global .align 8 .b8 ms_layout_probe[24] = {32, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 1};";
        assert_eq!(read_probe(ptx, 3), Some(vec![32, 8, 257]));
        assert_eq!(
            read_probe(".global .align 8 .b8 ms_layout_probe[8];", 1),
            Some(vec![0])
        );
        assert_eq!(read_probe("nothing", 1), None);
        let figs = figures(&CudaOp::new::<Indexed<f32>>("t"));
        let source = format!("struct A {{}};\n{}", checks(&figs));
        let p = probe(&source, &figs).unwrap();
        assert!(p.starts_with("struct A {};\n#ifndef MS_OFFSETOF"));
        assert!(p.ends_with(
            "ms_layout_probe[] = { sizeof(monoscan_indexed_float), alignof(monoscan_indexed_float), \
             MS_OFFSETOF(monoscan_indexed_float, value), MS_OFFSETOF(monoscan_indexed_float, index) };\n"
        ));
    }
}
