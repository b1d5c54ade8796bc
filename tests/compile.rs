//! NVRTC compiles every kernel set of every built-in operator for sm_80 and sm_90, as CUBIN
//! and as PTX; compile errors and layout mismatches give the right error text. Needs NVRTC
//! only (no GPU); skips without it, fails instead under MONOSCAN_REQUIRE_NVRTC=1.

mod common;

use common::gpu::nvrtc;
use monoscan::codegen::{
    render, select_shape, select_staged_shape, textbook_block, tile_shape, KernelSet, KernelSpec,
    Purpose,
};
use monoscan::jit::{compile, Target};
use monoscan::ops::*;
use monoscan::{CudaOp, Element, Error, Monoid};

const TARGETS: [Target; 4] = [
    Target::Cubin(80),
    Target::Cubin(90),
    Target::Ptx(80),
    Target::Ptx(90),
];

fn sets(size: usize, cc: u32) -> Vec<KernelSet> {
    let block = textbook_block(size).unwrap();
    let shape = tile_shape(size, cc, Purpose::Tiles).unwrap();
    let sp = tile_shape(size, cc, Purpose::SinglePass).unwrap();
    let staged = tile_shape(size, cc, Purpose::Staged).unwrap();
    let mut sets = vec![
        KernelSet::TreeReduce { block },
        KernelSet::KoggeStone { block },
        KernelSet::BrentKung { block },
        KernelSet::TiledReduce(shape),
        KernelSet::ReduceThenScan(shape),
        KernelSet::SinglePass(sp),
        KernelSet::OneTile(tile_shape(size, cc, Purpose::OneTile).unwrap()),
        KernelSet::Check,
    ];
    // Elements whose size divides 16 also get the staged scan (sm_80 and newer).
    assert_eq!(staged.staged, cc >= 80 && 16 % size == 0, "size {size}");
    // On sm_90 and newer the staged tiles (one 128-byte run per thread) load by tensor copies.
    assert_eq!(staged.tma, staged.staged && cc >= 90, "size {size}");
    if staged.staged {
        sets.push(KernelSet::SinglePass(staged));
    }
    sets
}

/// Compiles every set of `m` for every target; returns how many modules were built.
fn compile_all<M: Monoid>(m: &M) -> usize {
    if !nvrtc() {
        return 0;
    }
    let op = m.cuda();
    let mut built = 0;
    for target in TARGETS {
        let cc = match target {
            Target::Cubin(cc) | Target::Ptx(cc) => cc,
        };
        for set in sets(op.elem_size, cc) {
            for instrument in [false, true] {
                if instrument
                    && !matches!(
                        set,
                        KernelSet::KoggeStone { .. } | KernelSet::BrentKung { .. }
                    )
                {
                    continue;
                }
                let rendered = render(&op, &KernelSpec { set, instrument }).unwrap();
                let out = compile(&rendered, &op.name, target)
                    .unwrap_or_else(|e| panic!("{} {} for {target:?}: {e}", op.name, set.name()));
                assert!(!out.image.is_empty());
                if let Target::Ptx(_) = target {
                    let text = String::from_utf8(out.image).unwrap();
                    assert!(
                        text.contains(&rendered.entry(set.entries(false)[1])),
                        "entry point missing from PTX"
                    );
                }
                built += 1;
            }
        }
    }
    built
}

macro_rules! compiles {
    ($($name:ident: $op:expr;)*) => {$(
        #[test]
        fn $name() {
            compile_all(&$op);
        }
    )*};
}

compiles! {
    sum_i32: Sum::<i32>::new();
    sum_u8: Sum::<u8>::new();
    sum_f64: Sum::<f64>::new();
    product_u16: Product::<u16>::new();
    min_f32: Min::<f32>::new();
    max_i64: Max::<i64>::new();
    bitxor_u32: BitXor::<u32>::new();
    argmin_f64: ArgMin::<f64>::new();
    argmax_i8: ArgMax::<i8>::new();
    minmax_i32: MinMax::<i32>::new();
    affine_f32: Affine::<f32>::new();
    affine_f64: Affine::<f64>::new();
    matmod: MatMulMod::default();
    seg_sum_f32: Segmented::new(Sum::<f32>::new());
    seg_affine_f64: Segmented::new(Affine::<f64>::new());
    seg_matmod: Segmented::new(MatMulMod::new(7).unwrap());
    seg_seg_max_u64: Segmented::new(Segmented::new(Max::<u64>::new()));
}

#[test]
fn baseline_kernels_compile() {
    if !nvrtc() {
        return;
    }
    let rendered = monoscan::codegen::baseline();
    for target in TARGETS {
        let out = compile(&rendered, "baseline kernels", target)
            .unwrap_or_else(|e| panic!("baseline kernels for {target:?}: {e}"));
        if let Target::Ptx(_) = target {
            let text = String::from_utf8(out.image).unwrap();
            for entry in ["read_pass", "hold"] {
                assert!(
                    text.contains(&rendered.entry(entry)),
                    "{entry} missing from PTX"
                );
            }
        }
    }
}

/// Staged tiles of more than 256 threads load in several tensor copies (a box holds at most
/// 256 rows); the template checks its boxes at compile time.
#[test]
fn staged_tiles_in_several_boxes_compile() {
    if !nvrtc() {
        return;
    }
    use monoscan::codegen::{StateLayout, TileShape};
    let cases: [(CudaOp, u32, u32); 4] = [
        (Sum::<i32>::new().cuda(), 288, 32),
        (Sum::<i32>::new().cuda(), 576, 32),
        (Sum::<i32>::new().cuda(), 1024, 32),
        (Affine::<f64>::new().cuda(), 288, 8),
    ];
    for (op, block, items) in cases {
        let shape = TileShape {
            staged: true,
            tma: true,
            ..TileShape::new(block, items, StateLayout::for_size(op.elem_size), 1)
        };
        assert!(shape.tma_boxes() > 1);
        let set = KernelSet::SinglePass(shape);
        let rendered = render(
            &op,
            &KernelSpec {
                set,
                instrument: false,
            },
        )
        .unwrap();
        for target in [Target::Cubin(90), Target::Ptx(90)] {
            compile(&rendered, &op.name, target)
                .unwrap_or_else(|e| panic!("{} {} for {target:?}: {e}", op.name, set.name()));
        }
    }
}

/// An operator whose snippet has a syntax error.
struct Typo;
impl Monoid for Typo {
    type Elem = i32;
    fn identity(&self) -> i32 {
        0
    }
    fn combine(&self, a: &i32, b: &i32) -> i32 {
        a + b
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<i32>("typo")
            .identity("0")
            .combine_body("int s = a + b\nreturn s;")
    }
}

#[test]
fn a_syntax_error_in_the_snippet_is_reported_with_numbered_source() {
    if !nvrtc() {
        return;
    }
    let op = Typo.cuda();
    let rendered = render(&op, &KernelSpec::new(KernelSet::TreeReduce { block: 256 })).unwrap();
    let err = compile(&rendered, "typo", Target::Cubin(90)).unwrap_err();
    let Error::Compile(f) = &err else {
        panic!("expected a compile error, got {err}")
    };
    assert!(f.in_user_snippet);
    assert!(f.log.contains("error"), "{}", f.log);
    // The excerpt numbers lines and marks the offending one, which holds the snippet.
    let marked = f
        .excerpt
        .lines()
        .find(|l| l.starts_with(">>"))
        .expect("a marked line");
    assert!(
        marked.contains("return s;") || marked.contains("int s = a + b"),
        "{}",
        f.excerpt
    );
    assert_eq!(f.generated, rendered.source);
    let text = err.to_string();
    assert!(
        text.contains("inside the operator's CUDA snippet")
            && text.contains("--gpu-architecture=sm_90"),
        "{text}"
    );
}

/// A Rust element type whose CUDA declaration has the wrong size.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    a: i32,
    b: i64,
}
// SAFETY: plain old data; the mismatch below is in the declared C++ twin, on purpose.
unsafe impl monoscan::DeviceRepr for Pair {}
// SAFETY: deliberately wrong (int, int instead of int, long long) to test the layout check;
// never launched.
unsafe impl Element for Pair {
    fn cuda_name() -> String {
        "pair_t".into()
    }
    fn cuda_definition() -> String {
        "struct pair_t { int a; int b; };".into()
    }
}
struct PairOp;
impl Monoid for PairOp {
    type Elem = Pair;
    fn identity(&self) -> Pair {
        Pair { a: 0, b: 0 }
    }
    fn combine(&self, x: &Pair, y: &Pair) -> Pair {
        Pair {
            a: x.a + y.a,
            b: x.b + y.b,
        }
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<Pair>("pair")
            .identity("pair_t{0, 0}")
            .combine_expr("pair_t{a.a + b.a, a.b + b.b}")
    }
}

#[test]
fn a_layout_mismatch_is_a_layout_error() {
    if !nvrtc() {
        return;
    }
    let rendered = render(
        &PairOp.cuda(),
        &KernelSpec::new(KernelSet::TreeReduce { block: 256 }),
    )
    .unwrap();
    let err = compile(&rendered, "pair", Target::Cubin(90)).unwrap_err();
    match &err {
        Error::Layout {
            cuda_type,
            rust_size,
            rust_align,
            log,
        } => {
            assert_eq!(cuda_type, "pair_t");
            assert_eq!((*rust_size, *rust_align), (16, 8));
            assert!(log.contains("monoscan layout"), "{log}");
        }
        other => panic!("expected a layout error, got {other}"),
    }
    assert!(err
        .to_string()
        .contains("layout mismatch for element `pair_t`"));
}

/// Compiles `set` for `op` to sm_90 PTX and checks that it holds every entry point of the set
/// (mapped variants included).
fn compile_with_entries(op: &CudaOp, set: KernelSet, what: &str) {
    let rendered = render(op, &KernelSpec::new(set)).unwrap();
    let ptx = compile(&rendered, &op.name, Target::Ptx(90)).unwrap();
    let text = String::from_utf8(ptx.image).unwrap();
    for entry in set.entries(true) {
        assert!(
            text.contains(&rendered.entry(entry)),
            "{what}: {} lacks {entry}",
            set.name()
        );
    }
}

/// Operators with a fused input map get `_mapped` kernel variants; those of u32 counts, the
/// fused compaction kernel.
#[test]
fn mapped_operators_compile_every_tiled_set() {
    if !nvrtc() {
        return;
    }
    let keep = monoscan::Map::new("odd", "(x & 1) ? 1u : 0u", |x: &i64| (*x & 1) as u32);
    let affine = monoscan::Map::new("to_map", "monoscan_affine_double{0.5, x}", |x: &f64| {
        AffineMap::new(0.5, *x)
    });
    let keep32 = monoscan::Map::new("odd32", "(x & 1) ? 1u : 0u", |x: &i32| (*x & 1) as u32);
    let ops = [
        Sum::<u32>::new()
            .cuda()
            .with_input(keep.as_selection().cuda()),
        Affine::<f64>::new().cuda().with_input(affine.cuda()),
        Sum::<u32>::new()
            .cuda()
            .with_input(keep32.as_selection().cuda()),
    ];
    for op in ops {
        let tiles = tile_shape(op.elem_size, 90, Purpose::Tiles).unwrap();
        let sp = tile_shape(op.elem_size, 90, Purpose::SinglePass).unwrap();
        let staged = tile_shape(op.elem_size, 90, Purpose::Staged).unwrap();
        let mut sets = vec![
            KernelSet::TiledReduce(tiles),
            KernelSet::ReduceThenScan(tiles),
            KernelSet::SinglePass(sp),
            KernelSet::OneTile(tile_shape(op.elem_size, 90, Purpose::OneTile).unwrap()),
        ];
        let in_size = op.input.as_ref().unwrap().in_size;
        if in_size == op.elem_size {
            sets.push(KernelSet::SinglePass(staged));
        } else {
            // The staged scan maps in place: a map that changes the size is refused clearly.
            let err = render(&op, &KernelSpec::new(KernelSet::SinglePass(staged))).unwrap_err();
            assert!(err.to_string().contains("maps in place"), "{err}");
        }
        if op.elem == "unsigned int" {
            sets.push(KernelSet::Select(select_shape(in_size).unwrap()));
            sets.push(KernelSet::Select(
                select_staged_shape(in_size, 90).unwrap().unwrap(),
            ));
        } else {
            // Compaction scans u32 counts: another operator is refused clearly.
            let set = KernelSet::Select(select_shape(in_size).unwrap());
            let err = render(&op, &KernelSpec::new(set)).unwrap_err();
            assert!(err.to_string().contains("4-byte counts"), "{err}");
        }
        for set in sets {
            compile_with_entries(&op, set, &op.name);
        }
    }
}

/// Both compaction kernels (the register one and the staged one) for input elements of every
/// size the staged one takes: 1, 2, 4, 8 and 16 bytes.
#[test]
fn compaction_kernels_compile_for_every_staged_element_size() {
    if !nvrtc() {
        return;
    }
    fn check<T: Element>(keep: monoscan::Map<T, u32>) {
        let size = std::mem::size_of::<T>();
        let op = Sum::<u32>::new()
            .cuda()
            .with_input(keep.as_selection().cuda());
        let staged = select_staged_shape(size, 90).unwrap().unwrap();
        for set in [
            KernelSet::Select(select_shape(size).unwrap()),
            KernelSet::Select(staged),
        ] {
            compile_with_entries(&op, set, &format!("{size} bytes"));
        }
        // The staged shape names the staged entry. On sm_90 it is the TMA form (one bulk copy
        // per tile); sm_80, its oldest target, gets the cp.async form.
        assert_eq!(
            KernelSet::Select(staged).entries(true),
            ["fill", "select_staged"]
        );
        assert!(staged.tma);
        let older = select_staged_shape(size, 80).unwrap().unwrap();
        assert!(!older.tma);
        let rendered = render(&op, &KernelSpec::new(KernelSet::Select(older))).unwrap();
        compile(&rendered, &op.name, Target::Cubin(80)).unwrap();
    }
    check(monoscan::Map::new("odd8", "(x & 1) ? 1u : 0u", |x: &u8| {
        u32::from(x & 1)
    }));
    check(monoscan::Map::new("neg16", "x < 0 ? 1u : 0u", |x: &i16| {
        u32::from(*x < 0)
    }));
    check(monoscan::Map::new("neg32", "x < 0 ? 1u : 0u", |x: &i32| {
        u32::from(*x < 0)
    }));
    check(monoscan::Map::new(
        "pos64",
        "x > 0.0 ? 1u : 0u",
        |x: &f64| u32::from(*x > 0.0),
    ));
    check(monoscan::Map::new(
        "small_mat",
        "x.m[0] < 30u ? 1u : 0u",
        |x: &Mat2| u32::from(x.m[0] < 30),
    ));
}
