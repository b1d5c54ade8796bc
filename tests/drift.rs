//! Two descriptions of one operator drifting apart, caught without a GPU: CUDA structs whose
//! fields are in another order or of another type of the same size, a wrong identity, a
//! CUDA element name that is wrong, a snippet missing a `;`, and struct initialisers in
//! another order than the Rust fields. Each of these used to pass silently or be misreported;
//! each is an error now (NVRTC parts skip without NVRTC, and fail instead under
//! MONOSCAN_REQUIRE_NVRTC=1; the GPU part skips without a GPU).

mod common;

use common::gpu::{gpu, nvrtc};
use monoscan::check::{Device, Kernels};
use monoscan::codegen::{render, KernelSet, KernelSpec};
use monoscan::jit::{compile, Target};
use monoscan::laws::Law;
use monoscan::layout::{FieldLayout, Layout};
use monoscan::{cpu, Backend, CudaOp, Element, Error, LayoutMismatch, Monoid};
use proptest::prelude::*;
use std::mem::offset_of;

fn compile_check(op: &CudaOp) -> monoscan::Result<()> {
    let rendered = render(op, &KernelSpec::new(KernelSet::Check))?;
    compile(&rendered, "check", Target::Cubin(90)).map(|_| ())
}

fn layout_error(op: &CudaOp) -> Box<LayoutMismatch> {
    match compile_check(op) {
        Err(Error::Layout(m)) => m,
        Err(e) => panic!("expected a layout error, got {e}"),
        Ok(()) => panic!("compiled"),
    }
}

/// (figure, Rust, CUDA, failed) of every figure of `t`.
fn figures<'a>(m: &'a LayoutMismatch, t: &str) -> Vec<(&'a str, &'a str, Option<&'a str>, bool)> {
    m.figures
        .iter()
        .filter(|f| f.cuda_type == t)
        .map(|f| {
            (
                f.figure.as_str(),
                f.rust.as_str(),
                f.cuda.as_deref(),
                f.failed,
            )
        })
        .collect()
}

/// Two `long long`s.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Span {
    lo: i64,
    hi: i64,
}

#[test]
fn swapped_fields_of_one_type_are_a_layout_error() {
    if !nvrtc() {
        return;
    }
    // The element's CUDA struct written by hand with the fields the other way round: same
    // size, same alignment.
    let mut op = CudaOp::new::<Span>("spans")
        .identity("Span{0, 0}")
        .combine_expr("b");
    op.prelude = "struct Span { long long hi; long long lo; };".into();
    let m = layout_error(&op);
    assert_eq!(
        figures(&m, "Span"),
        [
            ("size", "16", Some("16"), false),
            ("align", "8", Some("8"), false),
            ("offset of lo", "0", Some("8"), true),
            ("type of lo", "long long", None, false),
            ("offset of hi", "8", Some("0"), true),
            ("type of hi", "long long", None, false),
        ]
    );
    let text = Error::Layout(m).to_string();
    assert!(
        text.contains("the CUDA declaration of `Span` differs from the Rust type"),
        "{text}"
    );
    assert!(text.contains("offset of lo"), "{text}");
}

/// A float and a count.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    x: f32,
    n: u32,
}
// SAFETY: `#[repr(C)]` plain data.
unsafe impl monoscan::DeviceRepr for Sample {}
// SAFETY: deliberately wrong C++ twin (the two 4-byte types exchanged) to test the checks;
// never launched.
unsafe impl Element for Sample {
    fn cuda_name() -> String {
        "Sample".into()
    }
    fn cuda_definition() -> String {
        "struct Sample { unsigned int x; float n; };".into()
    }
    fn cuda_layout() -> Layout {
        Layout::structure::<Self>(vec![
            FieldLayout::new::<f32>("x", "x", offset_of!(Sample, x), &[]),
            FieldLayout::new::<u32>("n", "n", offset_of!(Sample, n), &[]),
        ])
    }
}

#[test]
fn a_float_declared_as_an_unsigned_int_is_a_layout_error() {
    if !nvrtc() {
        return;
    }
    let op = CudaOp::new::<Sample>("samples")
        .identity("Sample{0u, 0.0f}")
        .combine_expr("b");
    let m = layout_error(&op);
    assert_eq!(
        figures(&m, "Sample"),
        [
            ("size", "8", Some("8"), false),
            ("align", "4", Some("4"), false),
            ("offset of x", "0", Some("0"), false),
            ("type of x", "float", None, true),
            ("offset of n", "4", Some("4"), false),
            ("type of n", "unsigned int", None, true),
        ]
    );
}

/// A Rust element whose C++ name is not the name its definition declares.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Misnamed {
    a: i32,
}
// SAFETY: `#[repr(C)]` plain data.
unsafe impl monoscan::DeviceRepr for Misnamed {}
// SAFETY: deliberately misnamed to test the error; never launched.
unsafe impl Element for Misnamed {
    fn cuda_name() -> String {
        "misnamed".into()
    }
    fn cuda_definition() -> String {
        "struct misnamed_t { int a; };".into()
    }
}

#[test]
fn a_wrong_cuda_name_is_nvrtcs_error_not_a_layout_one() {
    if !nvrtc() {
        return;
    }
    let op = CudaOp::new::<Misnamed>("misnamed")
        .identity("misnamed{0}")
        .combine_expr("b");
    match compile_check(&op) {
        Err(Error::Compile(f)) => {
            // The log quotes the layout checks' lines (which name `monoscan layout`), yet
            // the error is NVRTC's own, kept whole.
            assert!(
                f.log.contains("identifier \"misnamed\" is undefined"),
                "{}",
                f.log
            );
            assert!(f.log.contains("monoscan layout"), "{}", f.log);
        }
        Err(e) => panic!("expected a compile error, got {e}"),
        Ok(()) => panic!("compiled"),
    }
}

#[test]
fn a_snippets_own_assertion_is_not_a_layout_error() {
    if !nvrtc() {
        return;
    }
    // The message reads like a layout check, but the assertion is the snippet's: it is
    // reported as NVRTC's error, blamed on the snippet.
    let op = CudaOp::new::<i32>("asserts").identity("0").combine_body(
        "static_assert(sizeof(int) == 3, \"monoscan layout: int: size differs from Rust's 3\");\n\
             return a + b;",
    );
    let f = compile_error(&op);
    assert!(f.log.contains("static assertion failed"), "{}", f.log);
    assert_eq!(f.snippet.as_deref(), Some("`combine`, line 1"), "{f}");
}

fn compile_error(op: &CudaOp) -> Box<monoscan::CompileFailure> {
    match compile_check(op) {
        Err(Error::Compile(f)) => f,
        Err(e) => panic!("expected a compile error, got {e}"),
        Ok(()) => panic!("compiled"),
    }
}

#[test]
fn a_snippet_missing_a_semicolon_is_blamed_on_its_line() {
    if !nvrtc() {
        return;
    }
    // The last statement of the combine lacks its `;`: NVRTC reports the next token, the
    // generated `}` after the snippet.
    let op = CudaOp::new::<i32>("semi")
        .identity("0")
        .combine_body("int s = a + b;\nreturn s");
    let f = compile_error(&op);
    assert!(f.in_user_snippet, "{f}");
    assert_eq!(f.snippet.as_deref(), Some("`combine`, line 2"), "{f}");
    assert!(
        f.to_string()
            .contains("inside the operator's CUDA snippet: `combine`, line 2"),
        "{f}"
    );
    // Inside a snippet, the line itself.
    let op = CudaOp::new::<i32>("undefined")
        .identity("0")
        .combine_expr("a + c");
    let f = compile_error(&op);
    assert_eq!(f.snippet.as_deref(), Some("`combine`, line 1"), "{f}");
    let op = CudaOp::new::<i32>("id")
        .identity("0 +")
        .combine_expr("a + b");
    let f = compile_error(&op);
    assert_eq!(f.snippet.as_deref(), Some("`identity`, line 1"), "{f}");
    // Generated code stays generated code: an operator whose snippets are fine but whose
    // element type is unknown is not blamed on a snippet line.
    let mut op = CudaOp::new::<i32>("elem").identity("0").combine_expr("a");
    op.elem = "no_such_type".into();
    let f = compile_error(&op);
    assert_eq!(f.snippet, None, "{f}");
}

/// A sum whose identity is 1.
struct OffByOne;

impl Monoid for OffByOne {
    type Elem = i32;
    fn identity(&self) -> i32 {
        1
    }
    fn combine(&self, a: &i32, b: &i32) -> i32 {
        a.wrapping_add(*b)
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<i32>("off_by_one")
            .identity("1")
            .combine_expr("a + b")
    }
}

#[test]
fn a_wrong_identity_is_caught_without_a_gpu() {
    // The CPU backends fold from the identity, as the kernels pad with it: the sum of
    // 1..=10000 comes out one too large on every backend, never silently right.
    let xs: Vec<i32> = (1..=10_000).collect();
    let right = 50_005_000;
    assert_eq!(cpu::Sequential.reduce(&OffByOne, &xs).unwrap(), right + 1);
    assert_eq!(
        cpu::Sequential.inclusive_scan(&OffByOne, &xs).unwrap()[0],
        2
    );
    let par = cpu::Parallel::with_min_chunk(64);
    assert_ne!(par.reduce(&OffByOne, &xs).unwrap(), right);
    assert_ne!(par.inclusive_scan(&OffByOne, &xs).unwrap()[9_999], right);
    // One call says why, without a GPU.
    let report = monoscan::check(&OffByOne, any::<i32>(), 90);
    assert!(!report.passed(), "{report}");
    let laws: Vec<Law> = report.laws.iter().map(|f| f.law).collect();
    assert!(
        laws.contains(&Law::LeftIdentity) && laws.contains(&Law::RightIdentity),
        "{report}"
    );
    assert!(
        report.to_string().contains("combine(identity, a) == a"),
        "{report}"
    );
}

/// A pair of counts.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Counts {
    seen: u32,
    kept: u32,
}

/// Counts added, written once.
struct AddCounts;

#[monoscan::operator]
impl Monoid for AddCounts {
    type Elem = Counts;
    fn identity(&self) -> Counts {
        Counts { seen: 0, kept: 0 }
    }
    fn combine(&self, a: &Counts, b: &Counts) -> Counts {
        Counts {
            kept: a.kept.wrapping_add(b.kept),
            seen: a.seen.wrapping_add(b.seen),
        }
    }
}

/// The same, with a hand-written positional initialiser in the other order.
struct AddCountsByHand;

impl Monoid for AddCountsByHand {
    type Elem = Counts;
    fn identity(&self) -> Counts {
        Counts { seen: 0, kept: 0 }
    }
    fn combine(&self, a: &Counts, b: &Counts) -> Counts {
        AddCounts.combine(a, b)
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<Counts>("counts_by_hand")
            .identity("Counts{0u, 0u}")
            .combine_expr("Counts{a.kept + b.kept, a.seen + b.seen}")
    }
}

#[test]
fn struct_initialisers_follow_the_rust_fields() {
    // Written once, the initialiser is generated in the declared order, whatever order the
    // Rust literal names the fields in.
    let op = AddCounts.cuda();
    assert_eq!(
        op.combine,
        "return Counts{((unsigned int)((unsigned int)((a).seen) + (unsigned int)((b).seen))), \
         ((unsigned int)((unsigned int)((a).kept) + (unsigned int)((b).kept)))};"
    );
    let distinct = Counts { seen: 3, kept: 4 };
    assert_eq!(
        distinct.cuda_literal().unwrap(),
        "Counts{((unsigned int)3ULL), ((unsigned int)4ULL)}"
    );
    if nvrtc() {
        let report = monoscan::check(
            &AddCounts,
            any::<(u32, u32)>().prop_map(|(seen, kept)| Counts { seen, kept }),
            90,
        );
        assert!(
            matches!(report.kernels, Kernels::Compiled { .. }),
            "{report}"
        );
    }
    // Written by hand in the wrong order, the device disagrees, and `check` says where.
    let Some(gpu) = gpu() else { return };
    let report = monoscan::check::Check::new(&AddCountsByHand)
        .gpu(gpu)
        .run(any::<(u32, u32)>().prop_map(|(seen, kept)| Counts { seen, kept }));
    assert!(matches!(report.device, Device::Mismatch(_)), "{report}");
    let report = monoscan::check::Check::new(&AddCounts)
        .gpu(gpu)
        .run(any::<(u32, u32)>().prop_map(|(seen, kept)| Counts { seen, kept }));
    assert!(report.passed() && report.complete(), "{report}");
}
