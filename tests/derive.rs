//! `#[derive(Element)]`: C++ names and definitions of derived structs (primitives, nesting,
//! arrays, generics, tuple structs), their layouts and literals, `ValidAsZeroBits` where every
//! field allows it (zeroed device allocations), NVRTC accepting their layout (the generated
//! `static_assert`s on size, alignment and every field's offset and type), and a
//! non-commutative monoid over a derived struct scanned on the GPU against the sequential CPU
//! scan. NVRTC and GPU parts skip without them
//! (and fail instead under MONOSCAN_REQUIRE_NVRTC=1 / MONOSCAN_REQUIRE_GPU=1).

mod common;

use common::gpu::{gpu, nvrtc, Rng};
use monoscan::codegen::{render, KernelSet, KernelSpec};
use monoscan::jit::{compile, Target};
use monoscan::ops::Flagged;
use monoscan::tuning::{policy, DeviceLimits, Purpose, Tuning};
use monoscan::{cpu, Backend, CudaOp, Element, Monoid, ValidAsZeroBits};
use std::mem::{align_of, size_of};

/// Primitives with padding between them: `a` at 0, `b` at 8, `c` at 16, size 24.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Prims {
    a: u8,
    b: f64,
    c: i16,
}

#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Inner {
    pub x: i32,
    y: u8,
}

/// Nested derived structs, arrays (of primitives and of structs) and a built-in element.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Outer {
    head: Inner,
    grid: [[u16; 3]; 2],
    tail: [Inner; 2],
    flagged: Flagged<i32>,
    r#type: Prims,
}

#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Pair<T: Element> {
    a: T,
    b: T,
}

/// A tuple struct over generic and array fields.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Tuple(f32, Pair<Inner>, [i8; 5]);

#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
#[monoscan(cuda_name = "window_t")]
struct Window<const N: usize> {
    xs: [Pair<u64>; N],
}

/// Preprocesses the `#ifndef`/`#define`/`#endif` guards of a definition, as NVRTC does.
fn preprocess(code: &str) -> String {
    let mut defined = Vec::new();
    let mut skipping = Vec::new(); // one entry per open #ifndef: whether it skips
    let mut out = String::new();
    for line in code.lines() {
        let active = !skipping.contains(&true);
        if let Some(guard) = line.strip_prefix("#ifndef ") {
            skipping.push(defined.contains(&guard.to_string()));
        } else if line == "#endif" {
            skipping.pop().expect("balanced guards");
        } else if let Some(guard) = line.strip_prefix("#define ") {
            if active {
                defined.push(guard.to_string());
            }
        } else if active {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(skipping.is_empty(), "unbalanced guards in\n{code}");
    out
}

/// The structs a definition declares after preprocessing, in order; each at most once.
fn declared<T: Element>() -> Vec<String> {
    let code = preprocess(&T::cuda_definition());
    let names: Vec<String> = code
        .lines()
        .filter_map(|l| l.strip_prefix("struct "))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    for n in &names {
        assert_eq!(
            names.iter().filter(|m| *m == n).count(),
            1,
            "{n} twice in\n{code}"
        );
    }
    names
}

/// A struct that a `macro_rules!` expansion writes derives as one written by hand.
macro_rules! words {
    ($name:ident: [$w:ty; $n:literal]) => {
        #[derive(Element, Clone, Copy, Debug, PartialEq)]
        #[repr(C)]
        struct $name {
            w: [$w; $n],
        }
    };
}
words!(Words3: [u16; 3]);

#[test]
fn a_macro_written_struct_derives() {
    assert_eq!(size_of::<Words3>(), 6);
    assert!(Words3::cuda_definition().contains("struct Words3 { unsigned short w[3]; };"));
}

#[test]
fn names_follow_the_rust_names_and_type_arguments() {
    assert_eq!(Prims::cuda_name(), "Prims");
    assert_eq!(Outer::cuda_name(), "Outer");
    assert_eq!(Pair::<f32>::cuda_name(), "Pair_float");
    assert_eq!(Pair::<u64>::cuda_name(), "Pair_unsigned_long_long");
    assert_eq!(Pair::<Pair<i8>>::cuda_name(), "Pair_Pair_signed_char");
    assert_eq!(Pair::<Inner>::cuda_name(), "Pair_Inner");
    assert_eq!(Tuple::cuda_name(), "Tuple");
    assert_eq!(Window::<3>::cuda_name(), "window_t_3");
}

#[test]
fn definitions_mirror_the_fields() {
    let prims = Prims::cuda_definition();
    assert_eq!(
        prims,
        monoscan::__private::guarded_definition(
            "Prims",
            "struct Prims { unsigned char a; double b; short c; };"
        )
    );
    assert!(Outer::cuda_definition().contains(
        "struct Outer { Inner head; unsigned short grid[2][3]; Inner tail[2]; \
         monoscan_flagged_int flagged; Prims type; };"
    ));
    assert!(Tuple::cuda_definition()
        .contains("struct Tuple { float f0; Pair_Inner f1; signed char f2[5]; };"));
    assert!(Window::<3>::cuda_definition()
        .contains("struct window_t_3 { Pair_unsigned_long_long xs[3]; };"));
}

#[test]
fn nested_structs_come_first_and_once() {
    assert_eq!(declared::<Prims>(), ["Prims"]);
    assert_eq!(
        declared::<Outer>(),
        ["Inner", "monoscan_flagged_int", "Prims", "Outer"]
    );
    assert_eq!(declared::<Tuple>(), ["Inner", "Pair_Inner", "Tuple"]);
    assert_eq!(
        declared::<Pair<Pair<Outer>>>(),
        [
            "Inner",
            "monoscan_flagged_int",
            "Prims",
            "Outer",
            "Pair_Outer",
            "Pair_Pair_Outer"
        ]
    );
    // A struct reached along two paths is declared once after preprocessing, even where its
    // text repeats (here `Inner`, first on its own, then inside `Pair_Inner`).
    #[derive(Element, Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Twice(Inner, Pair<Inner>, Inner);
    assert_eq!(declared::<Twice>(), ["Inner", "Pair_Inner", "Twice"]);
}

#[test]
fn cuda_op_takes_the_layout_from_the_derive() {
    fn check<T: Element>(size: usize, align: usize) {
        let op = CudaOp::new::<T>("t");
        assert_eq!(op.elem, T::cuda_name());
        assert_eq!((op.elem_size, op.elem_align), (size, align));
        assert_eq!(
            (op.elem_size, op.elem_align),
            (size_of::<T>(), align_of::<T>())
        );
        assert_eq!(op.prelude, T::cuda_definition());
    }
    check::<Prims>(24, 8);
    check::<Inner>(8, 4);
    check::<Outer>(72, 8);
    check::<Tuple>(28, 4);
    check::<Window<3>>(48, 8);
}

/// An affine map `x -> a x + b` on `u32`, wrapping (so composition is exactly associative).
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Lin<T: Element> {
    a: T,
    b: T,
}

/// Applying maps in sequence, the last non-zero value of each of two lanes, and a count.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Step {
    map: Lin<u32>,
    last: [i16; 2],
    count: u64,
}

/// Composition of the maps (`a` first), last non-zero wins per lane, counts add. Not
/// commutative in any of its parts but the count.
struct Steps;

impl Monoid for Steps {
    type Elem = Step;
    fn identity(&self) -> Step {
        Step {
            map: Lin { a: 1, b: 0 },
            last: [0, 0],
            count: 0,
        }
    }
    fn combine(&self, x: &Step, y: &Step) -> Step {
        Step {
            map: Lin {
                a: y.map.a.wrapping_mul(x.map.a),
                b: y.map.a.wrapping_mul(x.map.b).wrapping_add(y.map.b),
            },
            last: [0, 1].map(|i| if y.last[i] != 0 { y.last[i] } else { x.last[i] }),
            count: x.count + y.count,
        }
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<Step>("derived_steps")
            .identity("Step{{1u, 0u}, {0, 0}, 0ull}")
            .combine_body(
                "Step r;\n\
                 r.map.a = b.map.a * a.map.a;\n\
                 r.map.b = b.map.a * a.map.b + b.map.b;\n\
                 for (int i = 0; i < 2; ++i) r.last[i] = b.last[i] != 0 ? b.last[i] : a.last[i];\n\
                 r.count = a.count + b.count;\n\
                 return r;",
            )
    }
}

fn steps(n: usize, seed: u64) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let lane = |rng: &mut Rng| match rng.below(3) {
        0 => rng.below(1 << 16) as u16 as i16,
        _ => 0,
    };
    (0..n)
        .map(|_| Step {
            map: Lin {
                a: rng.next_u64() as u32,
                b: rng.next_u64() as u32,
            },
            last: [lane(&mut rng), lane(&mut rng)],
            count: 1,
        })
        .collect()
}

#[test]
fn the_operator_is_a_non_commutative_monoid_on_the_cpu() {
    let xs = steps(3, 1);
    let e = Steps.identity();
    for x in &xs {
        assert_eq!(Steps.combine(&e, x), *x);
        assert_eq!(Steps.combine(x, &e), *x);
    }
    let (a, b, c) = (&xs[0], &xs[1], &xs[2]);
    let left = Steps.combine(&Steps.combine(a, b), c);
    assert_eq!(left, Steps.combine(a, &Steps.combine(b, c)));
    assert_ne!(Steps.combine(a, b), Steps.combine(b, a));
}

#[test]
fn nvrtc_accepts_the_derived_layout() {
    if !nvrtc() {
        return;
    }
    let op = Steps.cuda();
    assert_eq!((op.elem_size, op.elem_align), (24, 8));
    let limits = DeviceLimits::for_arch(90);
    let shape = |p| policy::tile_shape(op.elem_size, &limits, &Tuning::default(), p).unwrap();
    for set in [
        KernelSet::TreeReduce { block: 256 },
        KernelSet::ReduceThenScan(shape(Purpose::Tiles)),
        KernelSet::SinglePass(shape(Purpose::SinglePass)),
        KernelSet::OneTile(shape(Purpose::OneTile)),
        KernelSet::Check,
    ] {
        let rendered = render(&op, &KernelSpec::new(set)).unwrap();
        // The layout checks are there, so compiling proves C++ and Rust agree.
        assert!(rendered.source.contains("sizeof(Step) == 24"));
        assert!(rendered.source.contains("alignof(Step) == 8"));
        assert!(rendered.source.contains("MS_OFFSETOF(Step, count) == 16"));
        assert!(rendered
            .source
            .contains("ms_same_type<decltype(Step::last), short[2]>::value"));
        assert!(rendered
            .source
            .contains("MS_OFFSETOF(Lin_unsigned_int, b) == 4"));
        let out = compile(&rendered, &op.name, Target::Cubin(90))
            .unwrap_or_else(|e| panic!("{}: {e}", set.name()));
        assert!(!out.image.is_empty());
    }
}

#[test]
fn derived_monoid_scans_on_the_gpu_like_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (n, seed) in [(1usize, 2u64), (1000, 3), (1 << 20, 4), (3_000_017, 5)] {
        let xs = steps(n, seed);
        let want = cpu::seq::inclusive_scan(&Steps, &xs);
        let got = gpu.inclusive_scan(&Steps, &xs).unwrap();
        if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
            panic!(
                "n = {n}: first difference at {i}: {:?} != {:?}",
                got[i], want[i]
            );
        }
        assert_eq!(
            gpu.reduce(&Steps, &xs).unwrap(),
            want[n - 1],
            "reduce, n = {n}"
        );
        let init = xs[0];
        let (ex, total) = gpu.exclusive_scan_total(&Steps, &xs, init).unwrap();
        let (want_ex, want_total) = cpu::seq::exclusive_scan_total(&Steps, &xs, init);
        assert!(
            ex == want_ex && total == want_total,
            "exclusive scan, n = {n}"
        );
    }
}

fn zeroable<T: ValidAsZeroBits>() {}

/// A hand-written element that promises nothing about all-zero bits.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Opaque(u32);
// SAFETY: `#[repr(C)]` plain data.
unsafe impl monoscan::DeviceRepr for Opaque {}
// SAFETY: the definition mirrors the one field.
unsafe impl Element for Opaque {
    fn cuda_name() -> String {
        "opaque_t".into()
    }
    fn cuda_definition() -> String {
        "struct opaque_t { unsigned int f0; };".into()
    }
}

/// Derives fine around a field that is not `ValidAsZeroBits` (it only lacks that impl).
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Holder {
    inner: Opaque,
    n: u8,
}

/// A nested definition whose text ends without a line break (as `Opaque`'s does) still leaves
/// every guard at the start of a line: in a derived struct, and in the segmented lifting.
#[test]
fn definitions_without_a_final_line_break_nest() {
    assert_eq!(declared::<Holder>(), ["opaque_t", "Holder"]);
    assert_eq!(
        declared::<Flagged<Opaque>>(),
        ["opaque_t", "monoscan_flagged_opaque_t"]
    );
    assert_eq!(
        declared::<Flagged<Holder>>(),
        ["opaque_t", "Holder", "monoscan_flagged_Holder"]
    );
}

#[test]
fn derived_elements_allow_zeroed_allocations() {
    zeroable::<Prims>();
    zeroable::<Outer>();
    zeroable::<Pair<f32>>();
    zeroable::<Tuple>();
    zeroable::<Window<3>>();
    zeroable::<Step>();
    assert_eq!(Holder::cuda_name(), "Holder");
    let Some(gpu) = gpu() else { return };
    let zeros = gpu.stream().alloc_zeros::<Step>(1000).unwrap();
    let host = gpu.stream().clone_dtoh(&zeros).unwrap();
    let zero = Step {
        map: Lin { a: 0, b: 0 },
        last: [0, 0],
        count: 0,
    };
    assert!(host.iter().all(|s| *s == zero));
}

#[test]
fn layouts_and_literals_follow_the_fields() {
    let l = Outer::cuda_layout();
    let fields: Vec<(&str, &str, usize, &[usize])> = l
        .fields()
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                f.cuda_name.as_str(),
                f.offset,
                f.dims.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            ("head", "head", 0, &[][..]),
            ("grid", "grid", 8, &[2, 3][..]),
            ("tail", "tail", 20, &[2][..]),
            ("flagged", "flagged", 36, &[][..]),
            ("type", "type", 48, &[][..]),
        ]
    );
    assert_eq!(
        Tuple::cuda_layout().fields()[2].cuda_type(),
        "signed char[5]"
    );
    assert_eq!(Tuple::cuda_layout().fields()[1].name, "1");
    let t = Tuple(
        1.5,
        Pair {
            a: Inner { x: -1, y: 2 },
            b: Inner { x: 3, y: 4 },
        },
        [1, 2, 3, 4, 5],
    );
    assert_eq!(
        t.cuda_literal().unwrap(),
        "Tuple{1.5f, Pair_Inner{Inner{((int)-1LL), ((unsigned char)2ULL)}, Inner{((int)3LL), \
         ((unsigned char)4ULL)}}, {((signed char)1LL), ((signed char)2LL), ((signed char)3LL), \
         ((signed char)4LL), ((signed char)5LL)}}"
    );
    // A field type without literals (hand-written) leaves the struct without one.
    assert_eq!(
        Holder {
            inner: Opaque(1),
            n: 0
        }
        .cuda_literal(),
        None
    );
}
