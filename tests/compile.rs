//! NVRTC compiles every kernel family the library generates: every `KernelSet` variant, in the
//! shapes the shape policy picks (and the staged scan's cp.async form where the TMA one is the
//! default), for every built-in operator over elements of 1 to 24 bytes, with and without a
//! fused input map, for sm_75, sm_80 and sm_90, as CUBIN (and PTX on sm_80 and sm_90); each
//! image holds every entry point of its set. Compile errors and layout mismatches give the right
//! error text. Needs NVRTC only (no GPU); skips without it, fails instead under
//! MONOSCAN_REQUIRE_NVRTC=1.

mod common;

use common::gpu::nvrtc;
use monoscan::codegen::{render, Entry, KernelSet, KernelSpec, Rendered};
use monoscan::jit::{compile, Target};
use monoscan::ops::*;
use monoscan::tuning::cost::CombineCost;
use monoscan::tuning::{policy, DeviceLimits, Purpose, ShapeChoice, TileShape, Tuning};
use monoscan::{CudaMap, CudaOp, Element, Error, Map, Monoid};
use std::collections::BTreeSet;

/// The architectures kernels are generated for here: the oldest NVRTC 13 takes (no staged
/// scan), the first with `cp.async`, the first with tensor copies.
const ARCHS: [u32; 3] = [75, 80, 90];

/// What each architecture is compiled to: CUBIN everywhere, and PTX (what a GPU newer than the
/// NVRTC gets) for the newest.
fn targets(cc: u32) -> Vec<Target> {
    match cc {
        90 => vec![Target::Cubin(90), Target::Ptx(90)],
        _ => vec![Target::Cubin(cc)],
    }
}

/// The family of a set, one number per `KernelSet` variant. No wildcard: a new variant fails
/// to compile here until the sets below include it.
fn family(set: &KernelSet) -> usize {
    match set {
        KernelSet::TreeReduce { .. } => 0,
        KernelSet::KoggeStone { .. } => 1,
        KernelSet::BrentKung { .. } => 2,
        KernelSet::TiledReduce(_) => 3,
        KernelSet::ReduceThenScan(_) => 4,
        KernelSet::SinglePass(_) => 5,
        KernelSet::StagedScan(_) => 6,
        KernelSet::OneTile(_) => 7,
        KernelSet::Select(_) => 8,
        KernelSet::SelectStaged(_) => 9,
        KernelSet::Check => 10,
        KernelSet::RowScan { .. } => 11,
        KernelSet::LanesCopy => 12,
        KernelSet::StagedReduce(_) => 13,
        KernelSet::CombineRate { .. } => 14,
        KernelSet::RowStaged { .. } => 15,
        KernelSet::ColumnScan { .. } => 16,
        KernelSet::ShareScan { .. } => 17,
        KernelSet::StagedScanReverse(_) => 18,
        KernelSet::SinglePassReverse(_) => 19,
        KernelSet::ReduceThenScanReverse(_) => 20,
    }
}
const FAMILIES: usize = 21;

/// Whether `op` is a compaction operator: u32 keep counts with an input map.
fn selects(op: &CudaOp) -> bool {
    op.input.is_some() && op.elem == "unsigned int"
}

/// Every set the library generates for `op` on sm_`cc`: the textbook, tiled, single-pass and
/// one-tile families in the policy's shapes (the one-tile scan also in the single-pass shape), the staged scan where the element size and the
/// architecture allow it (by tensor copies on sm_90 by default, by `cp.async` there with
/// `tma: false`), the share scan in one and two stage buffers where its steps fit, compaction's sets for u32 counts with an input map, the lane copies, the
/// combine-rate kernel, and the check set.
fn sets(op: &CudaOp, cc: u32) -> Vec<KernelSet> {
    let size = op.elem_size;
    let limits = DeviceLimits::for_arch(cc);
    let tuning = Tuning::default();
    let no_tma = Tuning {
        tma: false,
        ..Tuning::default()
    };
    let shape =
        |purpose, tuning: &Tuning| policy::tile_shape(size, &limits, tuning, purpose).unwrap();
    let block = policy::textbook_block(size, &limits).unwrap();
    let tiles = shape(Purpose::Tiles, &tuning);
    let mut sets = vec![
        KernelSet::TreeReduce { block },
        KernelSet::KoggeStone { block },
        KernelSet::BrentKung { block },
        KernelSet::TiledReduce(tiles),
        KernelSet::ReduceThenScan(tiles),
        KernelSet::ReduceThenScanReverse(tiles),
        KernelSet::SinglePass(shape(Purpose::SinglePass, &tuning)),
        KernelSet::SinglePassReverse(shape(Purpose::SinglePass, &tuning)),
        KernelSet::OneTile(shape(Purpose::OneTile, &tuning)),
        KernelSet::Check,
    ];
    // Inputs of one single-pass tile: the one-tile scan in the single-pass shape.
    let one_big = KernelSet::OneTile(shape(Purpose::SinglePass, &tuning));
    if !sets.contains(&one_big) {
        sets.push(one_big);
    }
    let cost = CombineCost::of(op);
    let staged = shape(Purpose::Staged, &tuning);
    // Elements of up to 128 bytes get the staged scan (sm_80 and newer); on sm_90 and newer
    // its tiles load by the TMA (tensor copies of 128-byte runs for power-of-two sizes, one
    // bulk copy for the linear layout of the others).
    assert_eq!(staged.staged, cc >= 80 && size <= 128, "size {size}");
    assert_eq!(staged.tma, staged.staged && cc >= 90, "size {size}");
    assert_eq!(
        staged.linear,
        staged.staged && !size.is_power_of_two(),
        "size {size}"
    );
    let in_size = op.input.as_ref().map_or(size, |m| m.in_size);
    if staged.staged && in_size == size {
        for t in [&tuning, &no_tma] {
            let mut s = shape(Purpose::Staged, t);
            assert!(s.staged && s.tma == (cc >= 90 && t.tma), "size {size}");
            s.chains = policy::chains(&cost, t, &s, size);
            for set in [KernelSet::StagedScan(s), KernelSet::StagedScanReverse(s)] {
                if !sets.contains(&set) {
                    sets.push(set);
                }
            }
            let mut r = shape(Purpose::StagedReduce, t);
            // The share scan, in the staged reduce's shape, wherever its steps fit (sm_90),
            // forwards and from the end.
            let mut shares = r;
            shares.chains = policy::chains(&cost, t, &shares, size);
            for (stages, reverse) in [1, policy::SHARE_STAGES]
                .into_iter()
                .flat_map(|s| [(s, false), (s, true)])
            {
                let set = KernelSet::ShareScan {
                    shape: shares,
                    stages,
                    reverse,
                };
                if shares.shares_fit(size) && !sets.contains(&set) {
                    sets.push(set);
                }
            }
            if r.staged && policy::reduce_staged(size, &cost) {
                r.chains = policy::chains(&cost, t, &r, size);
                if !sets.contains(&KernelSet::StagedReduce(r)) {
                    sets.push(KernelSet::StagedReduce(r));
                }
            }
        }
    }
    // A map that widens narrower inputs takes the staged scan and the staged reduce by
    // cp.async, with one chain.
    if staged.staged && in_size < size {
        for t in [&tuning, &no_tma] {
            let mut s = shape(Purpose::Staged, t);
            s.tma = false;
            s.chains = policy::chains(&cost, t, &s, size);
            if policy::staged_widening(in_size, size, &s) {
                for set in [KernelSet::StagedScan(s), KernelSet::StagedScanReverse(s)] {
                    if !sets.contains(&set) {
                        sets.push(set);
                    }
                }
            }
            let mut r = shape(Purpose::StagedReduce, t);
            r.tma = false;
            r.chains = policy::chains(&cost, t, &r, size);
            let set = KernelSet::StagedReduce(r);
            if policy::staged_widening(in_size, size, &r) && !sets.contains(&set) {
                sets.push(set);
            }
        }
    }
    sets.push(KernelSet::LanesCopy);
    // The combine-rate kernel with the most chains the element allows.
    sets.extend(KernelSet::combine_rate_shapes(size).pop());
    if selects(op) {
        sets.push(KernelSet::Select(
            policy::select_shape(in_size, &limits).unwrap(),
        ));
        for t in [&tuning, &no_tma] {
            if let Some(s) = policy::select_staged_shape(in_size, &limits, t).unwrap() {
                let set = KernelSet::SelectStaged(s);
                if !sets.contains(&set) {
                    sets.push(set);
                }
            }
        }
    }
    sets
}

/// Whether `image` (PTX text or a CUBIN) defines the kernel `symbol`.
fn defines(image: &[u8], target: Target, symbol: &str) -> bool {
    let needle = match target {
        Target::Ptx(_) => format!(".entry {symbol}("),
        Target::Cubin(_) => format!(".text.{symbol}\0"),
    };
    image.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Asserts that `image`, compiled from `rendered` (the set `set` of `op`), defines every entry
/// point of the set, and the `_mapped` variants where `op` has an input map.
fn assert_entries(op: &CudaOp, set: KernelSet, rendered: &Rendered, image: &[u8], target: Target) {
    let mapped = op.input.is_some();
    for &entry in set.entries() {
        for variant in [false, true] {
            if variant && !(mapped && entry.mappable()) {
                continue;
            }
            let symbol = rendered.symbol(entry, variant);
            assert!(
                defines(image, target, &symbol),
                "{} {} for {target:?} lacks {symbol}",
                op.name,
                set.name()
            );
        }
    }
}

/// Renders `set` of `op` (instrumented or not, in the combine form the policy picks for it),
/// compiles it for `target` and checks its entry points.
fn build(op: &CudaOp, set: KernelSet, instrument: bool, target: Target) {
    let combine = policy::combine_form(&CombineCost::of(op), &Tuning::default());
    let spec = KernelSpec {
        set,
        instrument,
        combine,
    };
    let rendered = render(op, &spec).unwrap_or_else(|e| panic!("{} {}: {e}", op.name, set.name()));
    let out = compile(&rendered, &op.name, target)
        .unwrap_or_else(|e| panic!("{} {} for {target:?}: {e}", op.name, set.name()));
    assert!(!out.image.is_empty());
    assert_entries(op, set, &rendered, &out.image, target);
}

/// Compiles every set of `op` for every architecture and target; the textbook scans (which
/// `monoscan lab` counts combines of) also instrumented. Returns the families built.
fn compile_all(op: &CudaOp) -> BTreeSet<usize> {
    let mut families = BTreeSet::new();
    if !nvrtc() {
        return families;
    }
    for cc in ARCHS {
        for set in sets(op, cc) {
            let instrumented = matches!(
                set,
                KernelSet::KoggeStone { .. } | KernelSet::BrentKung { .. }
            );
            for target in targets(cc) {
                build(op, set, false, target);
                if instrumented {
                    build(op, set, true, target);
                }
            }
            families.insert(family(&set));
        }
    }
    families
}

macro_rules! compiles {
    ($($name:ident: $op:expr;)*) => {$(
        #[test]
        fn $name() {
            compile_all(&$op.cuda());
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

/// Operators with fused input maps: each set also gets `_mapped` entries. A map that keeps the
/// element size (here the identity the backend suites run, and a selection of i32) takes the
/// staged scan too, and so does one that widens (`u8` flags to `u32` counts, `u16` to `u64`,
/// `f64` to 16-byte affine maps) in the cp.async form; one that narrows is refused the
/// staged scan with a clear error. Maps to u32 counts also get compaction's sets.
fn mapped_ops() -> Vec<CudaOp> {
    let keep64 = Map::new("odd", "(x & 1) ? 1u : 0u", |x: &i64| (*x & 1) as u32);
    let keep32 = Map::new("odd32", "(x & 1) ? 1u : 0u", |x: &i32| (*x & 1) as u32);
    let to_map = Map::new("to_map", "monoscan_affine_double{0.5, x}", |x: &f64| {
        AffineMap::new(0.5, *x)
    });
    let same = Map::new("same", "x", |x: &i32| *x);
    let flags = Map::new("flags", "x != 0 ? 1u : 0u", |x: &u8| u32::from(*x != 0));
    let wide = Map::new("wide", "(unsigned long long)x", |x: &u16| u64::from(*x));
    vec![
        Sum::<u32>::new()
            .cuda()
            .with_input(keep64.as_selection().cuda()),
        Sum::<u32>::new()
            .cuda()
            .with_input(keep32.as_selection().cuda()),
        Affine::<f64>::new().cuda().with_input(to_map.cuda()),
        Sum::<i32>::new().cuda().with_input(same.cuda()),
        Sum::<u32>::new().cuda().with_input(flags.cuda()),
        Sum::<u64>::new().cuda().with_input(wide.cuda()),
    ]
}

#[test]
fn mapped_selection_i64() {
    compile_all(&mapped_ops()[0]);
}

#[test]
fn mapped_selection_i32() {
    compile_all(&mapped_ops()[1]);
}

#[test]
fn mapped_affine_f64_from_f64() {
    compile_all(&mapped_ops()[2]);
}

#[test]
fn mapped_identity_i32() {
    compile_all(&mapped_ops()[3]);
}

#[test]
fn mapped_flags_u8_to_u32() {
    compile_all(&mapped_ops()[4]);
}

#[test]
fn mapped_u16_to_u64() {
    compile_all(&mapped_ops()[5]);
}

/// The batched row scans: modules of the segmented lifting of an operator (of its opposite
/// monoid for reverse scans), with and without an input map to the operator's elements.
fn row_ops() -> Vec<(CudaOp, bool)> {
    fn lifted<M: Monoid + Copy>(m: M) -> [(CudaOp, bool); 2] {
        [
            (Segmented::new(m).cuda(), false),
            (Segmented::new(Reversed::new(m)).cuda(), true),
        ]
    }
    let widen = Map::new("widen_u8", "(int)x", |x: &u8| i32::from(*x));
    let mut ops = Vec::new();
    ops.extend(lifted(Sum::<i32>::new()));
    ops.extend(lifted(Sum::<f32>::new()));
    ops.extend(lifted(Affine::<f64>::new()));
    ops.extend(lifted(MatMulMod::default()));
    ops.extend(lifted(Segmented::new(Max::<u64>::new())));
    for (op, reverse) in lifted(Sum::<i32>::new()) {
        ops.push((op.with_input(widen.cuda()), reverse));
    }
    ops
}

/// The row-scan sets of `row_ops` on sm_`cc`: rows of one length, and rows given by offsets.
fn row_sets(cc: u32) -> Vec<(CudaOp, KernelSet)> {
    let limits = DeviceLimits::for_arch(cc);
    row_ops()
        .into_iter()
        .flat_map(|(op, reverse)| {
            let shape = policy::tile_shape(
                op.elem_size,
                &limits,
                &Tuning::default(),
                Purpose::SinglePass,
            )
            .unwrap();
            [false, true].map(|segments| {
                let set = KernelSet::RowScan {
                    shape,
                    reverse,
                    segments,
                };
                (op.clone(), set)
            })
        })
        .collect()
}

#[test]
fn row_scans_compile() {
    if !nvrtc() {
        return;
    }
    for cc in [80, 90] {
        for (op, set) in row_sets(cc) {
            build(&op, set, false, Target::Cubin(cc));
        }
    }
}

/// The staged row scans: for values of 1, 2, 4, 8 and 16 bytes, forward and reverse (the
/// segmented lifting of the operator, or of its opposite monoid), with and without an input map
/// that keeps the value size, in the shapes the policy gives the lifting on sm_`cc` for a batch
/// of rows and for one row (by tensor copies on sm_90, by `cp.async` on sm_80); a batch as rows
/// of one length and as rows given by offsets.
fn row_staged_sets(cc: u32) -> Vec<(CudaOp, KernelSet)> {
    fn lifted<M: Monoid + Copy>(m: M, map: Option<CudaMap>) -> [(CudaOp, bool, usize); 2] {
        let with = |op: CudaOp| match &map {
            Some(map) => op.with_input(map.clone()),
            None => op,
        };
        let size = std::mem::size_of::<M::Elem>();
        [
            (with(Segmented::new(m).cuda()), false, size),
            (with(Segmented::new(Reversed::new(m)).cuda()), true, size),
        ]
    }
    let as_i32 = Map::new("as_i32", "(int)x", |x: &u32| *x as i32);
    let mut ops = Vec::new();
    ops.extend(lifted(Sum::<u8>::new(), None));
    ops.extend(lifted(Max::<i16>::new(), None));
    ops.extend(lifted(Sum::<f32>::new(), None));
    ops.extend(lifted(Sum::<i32>::new(), Some(as_i32.cuda())));
    ops.extend(lifted(Sum::<i64>::new(), None));
    ops.extend(lifted(Affine::<f32>::new(), None));
    ops.extend(lifted(Affine::<f64>::new(), None));
    ops.extend(lifted(MatMulMod::default(), None));
    ops.extend(lifted(Segmented::new(Max::<u64>::new()), None));
    let limits = DeviceLimits::for_arch(cc);
    let mut sets = Vec::new();
    for (op, reverse, value_size) in ops {
        // A batch of rows, and one row (a 1-D reverse scan), where its tile differs (sm_90).
        let set = |rows| {
            let shape = policy::row_staged_shape(
                value_size,
                op.elem_size,
                rows,
                &limits,
                &Tuning::default(),
            )
            .unwrap()
            .unwrap_or_else(|| panic!("{}: no staged row shape on sm_{cc}", op.name));
            assert_eq!(shape.tma, cc >= 90, "{}", op.name);
            KernelSet::RowStaged {
                shape,
                reverse,
                value_size,
                segments: false,
            }
        };
        let (batch, one) = (set(2), set(1));
        sets.push((op.clone(), batch));
        let shape =
            policy::segment_staged_shape(value_size, op.elem_size, 2, &limits, &Tuning::default())
                .unwrap()
                .unwrap_or_else(|| panic!("{}: no staged segment shape on sm_{cc}", op.name));
        let segments = KernelSet::RowStaged {
            shape,
            reverse,
            value_size,
            segments: true,
        };
        sets.push((op.clone(), segments));
        if one != batch {
            sets.push((op, one));
        }
    }
    sets
}

#[test]
fn staged_row_scans_compile() {
    if !nvrtc() {
        return;
    }
    for cc in [80, 90] {
        for (op, set) in row_staged_sets(cc) {
            for target in targets(cc) {
                build(&op, set, false, target);
            }
        }
    }
    // Tuned shapes of i32 rows on sm_90: the cp.async form, runs of 64 and 256 bytes (swizzle
    // shifts 3 and 4), a TMA tile of one box.
    let limits = DeviceLimits::for_arch(90);
    for tuning in [
        Tuning {
            tma: false,
            ..Tuning::default()
        },
        Tuning {
            staged: Some(ShapeChoice::new(256, 16)),
            ..Tuning::default()
        },
        Tuning {
            staged: Some(ShapeChoice::new(64, 64)),
            ..Tuning::default()
        },
        Tuning {
            staged: Some(ShapeChoice::new(128, 32)),
            ..Tuning::default()
        },
    ] {
        let shape = policy::row_staged_shape(4, 8, 2, &limits, &tuning)
            .unwrap()
            .unwrap();
        assert_eq!(shape.tma, tuning.tma && shape.items == 32, "{shape:?}");
        for reverse in [false, true] {
            let op = if reverse {
                Segmented::new(Reversed::new(Sum::<i32>::new())).cuda()
            } else {
                Segmented::new(Sum::<i32>::new()).cuda()
            };
            for segments in [false, true] {
                let set = KernelSet::RowStaged {
                    shape,
                    reverse,
                    value_size: 4,
                    segments,
                };
                build(&op, set, false, Target::Cubin(90));
            }
        }
    }
}

/// The staged row scan refuses, when rendered, values of another size than its set's and an
/// input map that changes the size (it maps in place).
#[test]
fn staged_row_scans_refuse_other_sizes() {
    let limits = DeviceLimits::for_arch(90);
    let shape = policy::row_staged_shape(4, 8, 2, &limits, &Tuning::default())
        .unwrap()
        .unwrap();
    let set = |value_size| KernelSet::RowStaged {
        shape,
        reverse: false,
        value_size,
        segments: false,
    };
    let f32_rows = Segmented::new(Sum::<f32>::new()).cuda();
    assert!(render(&f32_rows, &KernelSpec::new(set(4))).is_ok());
    let err = render(&f32_rows, &KernelSpec::new(set(8))).unwrap_err();
    assert!(err.to_string().contains("8-byte values"), "{err}");
    let err = render(&Sum::<f32>::new().cuda(), &KernelSpec::new(set(4))).unwrap_err();
    assert!(err.to_string().contains("segmented lifting"), "{err}");
    let widen = Map::new("widen_u8", "(int)x", |x: &u8| i32::from(*x));
    let mapped = Segmented::new(Sum::<i32>::new())
        .cuda()
        .with_input(widen.cuda());
    let err = render(&mapped, &KernelSpec::new(set(4))).unwrap_err();
    assert!(err.to_string().contains("maps in place"), "{err}");
}

/// The share scan renders in one and two stage buffers and refuses other counts.
#[test]
fn share_scans_refuse_other_stage_counts() {
    let limits = DeviceLimits::for_arch(90);
    let op = Sum::<f64>::new().cuda();
    let shape = policy::staged_reduce_shape(8, &limits, &Tuning::default()).unwrap();
    let set = |stages| KernelSet::ShareScan {
        shape,
        stages,
        reverse: false,
    };
    for stages in [1, policy::SHARE_STAGES] {
        let r = render(&op, &KernelSpec::new(set(stages))).unwrap();
        let line = format!("#define MS_SHARE_STAGES {stages}");
        assert!(r.source.contains(&line), "{stages}");
    }
    for stages in [0, policy::SHARE_STAGES + 1] {
        let err = render(&op, &KernelSpec::new(set(stages))).unwrap_err();
        assert!(err.to_string().contains("stage buffers"), "{err}");
    }
}

/// The column scans: elements of 1 to 64 bytes (every look-back state layout), 2 to 1000
/// columns (one and many row groups: both scans of the groups' totals; tiles of whole rows and
/// strips), forward and reverse, in the shape the policy picks on sm_`cc` (a bulk copy of full
/// tiles of whole rows and paced copies on sm_90).
fn column_sets(cc: u32) -> Vec<(CudaOp, KernelSet)> {
    use monoscan::bench::classes::{Affine3U64, Sum8U64};
    let limits = DeviceLimits::for_arch(cc);
    let cases = [
        (Sum::<u8>::new().cuda(), 3),
        (Sum::<i32>::new().cuda(), 32),
        (Sum::<f32>::new().cuda(), 1000),
        (MatMulMod::default().cuda(), 100),
        (Affine::<f64>::new().cuda(), 5),
        (Affine3U64.cuda(), 33),
        (Sum8U64.cuda(), 2),
    ];
    let mut out = Vec::new();
    for (i, (op, columns)) in cases.into_iter().enumerate() {
        let shape = policy::column_shape(columns, op.elem_size, &limits, None).unwrap();
        out.push((
            op,
            KernelSet::ColumnScan {
                shape,
                reverse: i % 2 == 1,
            },
        ));
    }
    out
}

#[test]
fn column_scans_compile() {
    if !nvrtc() {
        return;
    }
    for cc in ARCHS {
        for (op, set) in column_sets(cc) {
            build(&op, set, false, Target::Cubin(cc));
        }
    }
}

/// The sets above span every `KernelSet` variant (and so every template): each family is
/// compiled in every CI run.
#[test]
fn every_kernel_family_is_compiled() {
    let mut families = BTreeSet::new();
    // A 24-byte element: the staged reduce's (sizes other than 1, 2, 4, 8 and 16 bytes).
    let ops = [
        Sum::<i32>::new().cuda(),
        Affine::<f64>::new().cuda(),
        Segmented::new(Affine::<f64>::new()).cuda(),
    ];
    for op in ops.iter().chain(&mapped_ops()) {
        for cc in ARCHS {
            families.extend(sets(op, cc).iter().map(family));
        }
    }
    families.extend(row_sets(90).iter().map(|(_, s)| family(s)));
    families.extend(row_staged_sets(90).iter().map(|(_, s)| family(s)));
    families.extend(column_sets(90).iter().map(|(_, s)| family(s)));
    assert_eq!(families, (0..FAMILIES).collect(), "families compiled");
    // Both forms of the staged scan and of staged compaction on sm_90.
    let staged_forms = |op: &CudaOp| {
        sets(op, 90)
            .into_iter()
            .filter_map(|s| match s {
                KernelSet::StagedScan(s) => Some(("scan", s.tma)),
                KernelSet::SelectStaged(s) => Some(("select", s.tma)),
                _ => None,
            })
            .collect::<BTreeSet<_>>()
    };
    let scans = BTreeSet::from([("scan", false), ("scan", true)]);
    assert_eq!(staged_forms(&Sum::<i32>::new().cuda()), scans);
    let mut both = scans.clone();
    both.extend([("select", false), ("select", true)]);
    assert_eq!(staged_forms(&mapped_ops()[1]), both);
}

/// The instrumented builds `monoscan lab` counts combines with: every scan and reduce family.
#[test]
fn instrumented_builds_compile() {
    if !nvrtc() {
        return;
    }
    for op in [Sum::<i32>::new().cuda(), Affine::<f64>::new().cuda()] {
        for set in sets(&op, 90) {
            if set != KernelSet::Check {
                build(&op, set, true, Target::Cubin(90));
            }
        }
    }
}

#[test]
fn baseline_kernels_compile() {
    if !nvrtc() {
        return;
    }
    let rendered = monoscan::codegen::baseline();
    for cc in ARCHS {
        for target in targets(cc) {
            let out = compile(&rendered, "baseline kernels", target)
                .unwrap_or_else(|e| panic!("baseline kernels for {target:?}: {e}"));
            for entry in ["read_pass", "hold"] {
                let symbol = format!("{}_{entry}", rendered.prefix);
                assert!(
                    defines(&out.image, target, &symbol),
                    "{symbol} missing for {target:?}"
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
    let limits = DeviceLimits::for_arch(90);
    let cases = [
        (Sum::<i32>::new().cuda(), ShapeChoice::new(288, 32)),
        (Sum::<i32>::new().cuda(), ShapeChoice::new(576, 32)),
        (Sum::<i32>::new().cuda(), ShapeChoice::new(1024, 32)),
        (Affine::<f64>::new().cuda(), ShapeChoice::new(288, 8)),
    ];
    for (op, choice) in cases {
        let tuning = Tuning {
            staged: Some(choice),
            ..Tuning::default()
        };
        let shape = policy::tile_shape(op.elem_size, &limits, &tuning, Purpose::Staged).unwrap();
        assert!(
            shape.staged && shape.tma && shape.tma_boxes() > 1,
            "{shape:?}"
        );
        let set = KernelSet::StagedScan(shape);
        for target in targets(90) {
            build(&op, set, false, target);
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
    // NVRTC reports the missing `;` of the snippet's first line on its second.
    assert_eq!(f.snippet.as_deref(), Some("`combine`, line 2"), "{err}");
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
    let Error::Layout(m) = &err else {
        panic!("expected a layout error, got {err}");
    };
    // Both sides of both figures (the hand-written element describes no fields).
    let figures: Vec<(&str, &str, &str, Option<&str>, bool)> = m
        .figures
        .iter()
        .map(|f| {
            (
                f.cuda_type.as_str(),
                f.figure.as_str(),
                f.rust.as_str(),
                f.cuda.as_deref(),
                f.failed,
            )
        })
        .collect();
    assert_eq!(
        figures,
        [
            ("pair_t", "size", "16", Some("8"), true),
            ("pair_t", "align", "8", Some("4"), true)
        ]
    );
    assert!(m.log.contains("monoscan layout"), "{}", m.log);
    let text = err.to_string();
    assert!(
        text.contains("the CUDA declaration of `pair_t` differs from the Rust type"),
        "{text}"
    );
}

/// Rendering refuses, with a clear error, what the kernels cannot do: a staged scan or reduce
/// whose map narrows the element (they map in place) or widens it in the TMA form (the
/// cp.async form takes it), a share scan whose map changes the size, compaction over anything
/// but u32 counts with an input map.
#[test]
fn impossible_sets_are_refused_when_rendered() {
    let limits = DeviceLimits::for_arch(90);
    let shape =
        |size, purpose| policy::tile_shape(size, &limits, &Tuning::default(), purpose).unwrap();
    let mut refused = 0;
    for op in &mapped_ops() {
        let in_size = op.input.as_ref().unwrap().in_size;
        if in_size != op.elem_size {
            let widens = in_size < op.elem_size;
            let scan = |s| KernelSet::StagedScan(s);
            let reduce = |s| KernelSet::StagedReduce(s);
            let reduce_tile = shape(op.elem_size, Purpose::StagedReduce);
            for (set, tile) in [
                (
                    &scan as &dyn Fn(TileShape) -> KernelSet,
                    shape(op.elem_size, Purpose::Staged),
                ),
                (&reduce, reduce_tile),
            ] {
                let tma = TileShape { tma: true, ..tile };
                let err = render(op, &KernelSpec::new(set(tma))).unwrap_err();
                assert!(err.to_string().contains("maps in place"), "{err}");
                let copied = set(TileShape { tma: false, ..tma });
                assert_eq!(
                    render(op, &KernelSpec::new(copied)).is_ok(),
                    widens,
                    "{} {}",
                    op.name,
                    copied.name()
                );
            }
            let shares = KernelSet::ShareScan {
                shape: shape(op.elem_size, Purpose::StagedReduce),
                stages: policy::SHARE_STAGES,
                reverse: false,
            };
            let err = render(op, &KernelSpec::new(shares)).unwrap_err();
            assert!(
                err.to_string().contains("share scan maps in place"),
                "{err}"
            );
            refused += 1;
        }
    }
    assert_eq!(refused, 4);
    let select = KernelSet::Select(policy::select_shape(8, &limits).unwrap());
    let staged_select = KernelSet::SelectStaged(
        policy::select_staged_shape(8, &limits, &Tuning::default())
            .unwrap()
            .unwrap(),
    );
    for set in [select, staged_select] {
        // An operator of 16-byte elements with a map, and u32 counts without one.
        for op in [mapped_ops()[2].clone(), Sum::<u32>::new().cuda()] {
            let err = render(&op, &KernelSpec::new(set)).unwrap_err();
            assert!(err.to_string().contains("4-byte counts"), "{err}");
        }
    }
}

/// Both compaction kernels (the register one and the staged one, in its bulk-copy form on
/// sm_90 and its cp.async form on sm_80) for input elements of every size the staged one takes
/// (1, 2, 4, 8 and 16 bytes), and the register kernel alone for 24-byte elements and on sm_75.
#[test]
fn compaction_kernels_compile_for_every_element_size() {
    if !nvrtc() {
        return;
    }
    fn check<T: Element>(keep: Map<T, u32>) {
        let size = std::mem::size_of::<T>();
        let op = Sum::<u32>::new()
            .cuda()
            .with_input(keep.as_selection().cuda());
        for cc in ARCHS {
            let limits = DeviceLimits::for_arch(cc);
            let staged = policy::select_staged_shape(size, &limits, &Tuning::default()).unwrap();
            let stages = cc >= 80 && [1, 2, 4, 8, 16].contains(&size);
            assert_eq!(staged.is_some(), stages, "{size} bytes on sm_{cc}");
            let mut sets = vec![KernelSet::Select(
                policy::select_shape(size, &limits).unwrap(),
            )];
            if let Some(s) = staged {
                // The staged shape loads by one bulk copy per tile from sm_90 on.
                assert_eq!(s.tma, cc >= 90, "{size} bytes on sm_{cc}");
                assert_eq!(
                    KernelSet::SelectStaged(s).entries(),
                    [Entry::Fill, Entry::SelectStaged]
                );
                sets.push(KernelSet::SelectStaged(s));
            }
            for set in sets {
                for target in targets(cc) {
                    build(&op, set, false, target);
                }
            }
        }
    }
    check(Map::new("odd8", "(x & 1) ? 1u : 0u", |x: &u8| {
        u32::from(x & 1)
    }));
    check(Map::new("neg16", "x < 0 ? 1u : 0u", |x: &i16| {
        u32::from(*x < 0)
    }));
    check(Map::new("neg32", "x < 0 ? 1u : 0u", |x: &i32| {
        u32::from(*x < 0)
    }));
    check(Map::new("pos64", "x > 0.0 ? 1u : 0u", |x: &f64| {
        u32::from(*x > 0.0)
    }));
    check(Map::new(
        "small_mat",
        "x.m[0] < 30u ? 1u : 0u",
        |x: &Mat2| u32::from(x.m[0] < 30),
    ));
    check(Map::new(
        "seg_head",
        "x.flag != 0u ? 1u : 0u",
        |x: &Flagged<AffineMap<f64>>| x.flag,
    ));
}

/// The staged scan's long runs on sm_90 (cheap combines of 20- to 64-byte elements of whole
/// words, in the linear layout): every size class that takes them compiles, the 32- and
/// 64-byte ones with their threads' staggered accesses to a run's units.
#[test]
fn long_runs_of_every_size_class() {
    use monoscan::bench::classes::{visit_sizes, Class, Visit};
    struct LongRuns(Vec<usize>);
    impl Visit for LongRuns {
        type Error = std::convert::Infallible;
        fn visit<C: Class>(&mut self, class: &C) -> Result<(), Self::Error> {
            let op = class.cuda();
            let size = op.elem_size;
            let limits = DeviceLimits::for_arch(90);
            let cost = CombineCost::of(&op);
            let s = policy::staged_scan_shape(size, &cost, &limits, &Tuning::default()).unwrap();
            if s.linear && size >= 20 {
                let (rotations, _) = TileShape::linear_rotation(size, s.items, s.items);
                assert_eq!(rotations > 1, size % 32 == 0, "{size}-byte elements");
                build(&op, KernelSet::StagedScan(s), false, Target::Cubin(90));
                self.0.push(size);
            }
            Ok(())
        }
    }
    if !nvrtc() {
        return;
    }
    let mut long = LongRuns(Vec::new());
    visit_sizes(&mut long).unwrap();
    assert_eq!(long.0, [20, 24, 32, 40, 48, 64]);
}
