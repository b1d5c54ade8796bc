//! Half-precision inputs (`f16`, `bf16`) scanned and reduced in `f32` through the widening maps,
//! `bool` masks through `count_true`, and half-precision elements of their own.
//!
//! - On the CPU backends (always) and the GPU (skipped without one, failing instead under
//!   MONOSCAN_REQUIRE_GPU=1): integer-valued halves, whose f32 sums are exact in any grouping,
//!   give exactly the integer reference, so every backend gives the same result bit for bit;
//!   random halves stay within the summation bound `n eps sum|x|` of an f64 reference; NaN
//!   and infinities propagate as IEEE says from their position on; a non-commutative operator
//!   (affine maps `y -> -y + x`) keeps order. Lengths at warp, block and tile boundaries.
//! - On the GPU: every one of the 65,536 f16 and bf16 bit patterns widens on the device as
//!   `half` widens it on the host, and the device's f32 -> f16 / bf16 rounding agrees with
//!   `half`'s on a million f32 patterns (ties, subnormals, overflow, NaN).
//! - With NVRTC (no GPU): every kernel family of these maps and operators compiles (the f16
//!   map for sm_75, sm_80 and sm_90, the others for sm_75).

mod common;

use common::gpu::{gpu, nvrtc, Rng};
use monoscan::codegen::{render, KernelSet, KernelSpec};
use monoscan::cpu::{Parallel, Sequential};
use monoscan::half::{bf16, f16};
use monoscan::inputs::{bools_as_bytes, count_true, widen_bf16, widen_f16};
use monoscan::jit::{compile, Target};
use monoscan::ops::{Affine, AffineMap, Flagged, Segmented, Sum};
use monoscan::tuning::{policy, DeviceLimits, Purpose, Tuning};
use monoscan::{Algorithm, Backend, CudaOp, Element, Map, Monoid};

/// Lengths around a warp, a block, the register tiles and the hierarchy levels.
const LENGTHS: [usize; 16] = [
    0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 8192,
];

/// Integer-valued halves in [-1024, 1024]: exact in f16 and in bf16 up to 256. Sums of at
/// most 8192 of them stay below 2^24 in magnitude, so f32 adds them exactly in any order.
fn integers(n: usize, bound: u64, seed: u64) -> Vec<i64> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| rng.below(2 * bound + 1) as i64 - bound as i64)
        .collect()
}

/// A random finite f16 (any exponent, subnormals included).
fn finite_f16(rng: &mut Rng) -> f16 {
    loop {
        let x = f16::from_bits(rng.next_u64() as u16);
        if x.is_finite() {
            return x;
        }
    }
}

/// `x -> (-1, x)`: the affine map `y -> -y + x`. Composition is not commutative; on integers
/// it is exact (every coefficient is ±1 and every offset a signed sum of inputs).
fn to_flip() -> Map<f16, AffineMap<f32>> {
    Map::new(
        "f16_flip",
        "monoscan_affine_float{-1.0f, monoscan_f16_to_f32(x)}",
        |x: &f16| AffineMap::new(-1.0, x.to_f32()),
    )
}

/// The checks every backend passes; `label` names it in failures.
fn exact_on<B: Backend>(backend: &B, label: &str) {
    let sum = Sum::<f32>::new();
    for &n in &LENGTHS {
        let ints = integers(n, 1024, n as u64 + 1);
        let xs: Vec<f16> = ints.iter().map(|&i| f16::from_f32(i as f32)).collect();
        let mut acc = 0i64;
        let want: Vec<f32> = ints
            .iter()
            .map(|&i| {
                acc += i;
                acc as f32
            })
            .collect();
        let got = backend.map_inclusive_scan(&sum, &widen_f16(), &xs).unwrap();
        assert_eq!(got, want, "{label}: f16 inclusive scan, n = {n}");
        let total = backend.map_reduce(&sum, &widen_f16(), &xs).unwrap();
        assert_eq!(total, acc as f32, "{label}: f16 reduce, n = {n}");
        let (ex, t) = backend
            .map_exclusive_scan_total(&sum, &widen_f16(), &xs, 3.0)
            .unwrap();
        let want_ex: Vec<f32> = std::iter::once(3.0)
            .chain(want.iter().map(|w| w + 3.0))
            .take(n)
            .collect();
        assert_eq!(ex, want_ex, "{label}: f16 exclusive scan, n = {n}");
        assert_eq!(t, acc as f32 + 3.0, "{label}: f16 exclusive total, n = {n}");

        // bf16 holds integers up to 256 exactly.
        let ints = integers(n, 256, n as u64 + 7);
        let xs: Vec<bf16> = ints.iter().map(|&i| bf16::from_f32(i as f32)).collect();
        let mut acc = 0i64;
        let want: Vec<f32> = ints
            .iter()
            .map(|&i| {
                acc += i;
                acc as f32
            })
            .collect();
        let got = backend
            .map_inclusive_scan(&sum, &widen_bf16(), &xs)
            .unwrap();
        assert_eq!(got, want, "{label}: bf16 inclusive scan, n = {n}");

        // Non-commutative: y_i = x_i - y_(i-1), from y = 0.
        let ints = integers(n, 1024, n as u64 + 13);
        let xs: Vec<f16> = ints.iter().map(|&i| f16::from_f32(i as f32)).collect();
        let mut y = 0i64;
        let mut sign = 1.0f32;
        let want: Vec<AffineMap<f32>> = ints
            .iter()
            .map(|&i| {
                y = i - y;
                sign = -sign;
                AffineMap::new(sign, y as f32)
            })
            .collect();
        let got = backend
            .map_inclusive_scan(&Affine::<f32>::new(), &to_flip(), &xs)
            .unwrap();
        assert_eq!(got, want, "{label}: f16 affine scan, n = {n}");

        // A mask: exclusive scan of its trues gives their slots, the total their count.
        let mask: Vec<bool> = ints.iter().map(|&i| i % 3 == 0).collect();
        let (slots, kept) = backend
            .map_exclusive_scan_total(&Sum::<u32>::new(), &count_true(), bools_as_bytes(&mask), 0)
            .unwrap();
        let mut k = 0u32;
        for (i, &b) in mask.iter().enumerate() {
            assert_eq!(slots[i], k, "{label}: mask slot {i}, n = {n}");
            k += u32::from(b);
        }
        assert_eq!(kept, k, "{label}: mask count, n = {n}");
    }
}

/// Random finite halves: each prefix within `n eps32 sum|x|` (the bound of any summation
/// order) of the f64 prefix; the affine scan likewise, its multiplications by -1 being exact.
fn rounded_on<B: Backend>(backend: &B, label: &str) {
    for n in [1000usize, 65_537] {
        let mut rng = Rng::new(n as u64);
        let xs: Vec<f16> = (0..n).map(|_| finite_f16(&mut rng)).collect();
        let sums = backend
            .map_inclusive_scan(&Sum::<f32>::new(), &widen_f16(), &xs)
            .unwrap();
        let flips = backend
            .map_inclusive_scan(&Affine::<f32>::new(), &to_flip(), &xs)
            .unwrap();
        let (mut exact, mut y, mut abs) = (0f64, 0f64, 0f64);
        let bound = n as f64 * f64::from(f32::EPSILON);
        for (i, x) in xs.iter().enumerate() {
            let x = f64::from(x.to_f32());
            exact += x;
            y = x - y;
            abs += x.abs();
            let tol = bound * abs;
            assert!(
                (f64::from(sums[i]) - exact).abs() <= tol,
                "{label}: sum prefix {i} of {n}: {} vs {exact} (tolerance {tol})",
                sums[i]
            );
            assert!(
                (f64::from(flips[i].b) - y).abs() <= tol,
                "{label}: affine prefix {i} of {n}: {} vs {y} (tolerance {tol})",
                flips[i].b
            );
            assert_eq!(flips[i].a, if i % 2 == 0 { -1.0 } else { 1.0 });
        }
    }
}

/// An infinity from `inf_at` on makes every later prefix infinite; the opposite infinity at
/// `neg_at` makes them NaN from there; a NaN at `nan_at` likewise.
fn specials_on<B: Backend>(backend: &B, label: &str) {
    let n = 3000;
    for (inf_at, neg_at, nan_at) in [
        (0, None, None),
        (700, Some(2100), None),
        (5, None, Some(2999)),
        (1500, None, Some(1500)),
    ] {
        let mut xs: Vec<f16> = integers(n, 100, 3)
            .iter()
            .map(|&i| f16::from_f32(i as f32))
            .collect();
        xs[inf_at] = f16::INFINITY;
        if let Some(k) = neg_at {
            xs[k] = f16::NEG_INFINITY;
        }
        if let Some(k) = nan_at {
            xs[k] = f16::NAN;
        }
        let got = backend
            .map_inclusive_scan(&Sum::<f32>::new(), &widen_f16(), &xs)
            .unwrap();
        let nan_from = neg_at.into_iter().chain(nan_at).min().unwrap_or(n);
        for (i, v) in got.iter().enumerate() {
            if i >= nan_from {
                assert!(v.is_nan(), "{label}: prefix {i} is {v}, expected NaN");
            } else if i >= inf_at {
                assert_eq!(*v, f32::INFINITY, "{label}: prefix {i}");
            } else {
                assert!(v.is_finite(), "{label}: prefix {i} is {v}");
            }
        }
        let total = backend
            .map_reduce(&Sum::<f32>::new(), &widen_f16(), &xs)
            .unwrap();
        assert_eq!(total.is_nan(), nan_from < n, "{label}: total {total}");
    }
}

#[test]
fn half_scans_on_the_sequential_cpu() {
    exact_on(&Sequential, "sequential");
    rounded_on(&Sequential, "sequential");
    specials_on(&Sequential, "sequential");
}

#[test]
fn half_scans_on_the_parallel_cpu() {
    // Small chunks, so that the inputs above span many of them.
    for backend in [Parallel::default(), Parallel::with_min_chunk(64)] {
        exact_on(&backend, "parallel");
        rounded_on(&backend, "parallel");
        specials_on(&backend, "parallel");
    }
}

#[test]
fn half_scans_on_the_gpu() {
    let Some(gpu) = gpu() else { return };
    exact_on(gpu, "gpu");
    rounded_on(gpu, "gpu");
    specials_on(gpu, "gpu");
}

/// The GPU and the CPU give the same bits on integer-valued halves, through every tiled
/// algorithm of the mapped scanner (the Backend calls above take the default one).
#[test]
fn half_scans_match_the_cpu_through_every_tiled_algorithm() {
    let Some(gpu) = gpu() else { return };
    let sum = Sum::<f32>::new();
    for &n in &LENGTHS[1..] {
        let xs: Vec<f16> = integers(n, 1024, n as u64)
            .iter()
            .map(|&i| f16::from_f32(i as f32))
            .collect();
        let want = Parallel::default()
            .map_inclusive_scan(&sum, &widen_f16(), &xs)
            .unwrap();
        let input = gpu.stream().clone_htod(&xs).unwrap();
        for algorithm in [
            Algorithm::Auto,
            Algorithm::Hierarchical,
            Algorithm::SinglePass,
        ] {
            let scanner = gpu.scanner(&sum).mapped(&widen_f16()).algorithm(algorithm);
            let mut out = gpu.stream().alloc_zeros::<f32>(n).unwrap();
            scanner.inclusive(&input, &mut out).unwrap();
            let got = gpu.stream().clone_dtoh(&out).unwrap();
            assert_eq!(got, want, "{algorithm}, n = {n}");
        }
    }
}

/// Each element its own segment: the scan returns the mapped values themselves, so the
/// device's conversion of every input is read back.
fn device_map<In: Element>(map: Map<In, Flagged<f32>>, xs: &[In]) -> Option<Vec<f32>> {
    let gpu = gpu()?;
    let out = gpu
        .map_inclusive_scan(&Segmented::new(Sum::<f32>::new()), &map, xs)
        .unwrap();
    Some(out.into_iter().map(|f| f.value).collect())
}

fn same_float(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn every_half_widens_on_the_device_as_on_the_host() {
    let halves: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let map = Map::new(
        "f16_each",
        "monoscan_flagged_float{monoscan_f16_to_f32(x), 1u}",
        |x: &f16| Flagged::head(x.to_f32()),
    );
    let Some(got) = device_map(map, &halves) else {
        return;
    };
    for (x, g) in halves.iter().zip(&got) {
        assert!(
            same_float(*g, x.to_f32()),
            "f16 {:#06x}: device {g}, host {}",
            x.to_bits(),
            x.to_f32()
        );
    }
    let brains: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    let map = Map::new(
        "bf16_each",
        "monoscan_flagged_float{monoscan_bf16_to_f32(x), 1u}",
        |x: &bf16| Flagged::head(x.to_f32()),
    );
    let got = device_map(map, &brains).expect("the GPU was there a moment ago");
    for (x, g) in brains.iter().zip(&got) {
        assert!(
            same_float(*g, x.to_f32()),
            "bf16 {:#06x}: device {g}, host {}",
            x.to_bits(),
            x.to_f32()
        );
    }
}

#[test]
fn rounding_to_half_on_the_device_matches_the_host() {
    // Around every f16 and bf16 boundary: each half and the f32s just below, at and above the
    // midpoints next to it, plus random patterns and the specials.
    let mut xs: Vec<f32> = Vec::new();
    for bits in 0..=u16::MAX {
        for base in [
            f16::from_bits(bits).to_f32(),
            bf16::from_bits(bits).to_f32(),
        ] {
            if base.is_finite() {
                let b = base.to_bits();
                xs.extend(
                    [
                        b,
                        b + 1,
                        b + 0x0fff,
                        b + 0x1000,
                        b + 0x1001,
                        b + 0x7fff,
                        b + 0x8000,
                        b + 0x8001,
                    ]
                    .map(f32::from_bits),
                );
            }
        }
    }
    let mut rng = Rng::new(5);
    xs.extend((0..200_000).map(|_| f32::from_bits(rng.next_u64() as u32)));
    xs.extend([
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        65504.0,
        65520.0,
        1e-8,
        f32::MAX,
        f32::MIN_POSITIVE,
    ]);
    let f16_round = Map::new(
        "round_f16",
        "monoscan_flagged_float{monoscan_f16_to_f32(monoscan_f32_to_f16(x)), 1u}",
        |x: &f32| Flagged::head(f16::from_f32(*x).to_f32()),
    )
    .prelude(f16::cuda_definition());
    let Some(got) = device_map(f16_round, &xs) else {
        return;
    };
    for (x, g) in xs.iter().zip(&got) {
        let want = f16::from_f32(*x).to_f32();
        assert!(
            same_float(*g, want),
            "f16 of {x:e} ({:#010x}): device {g}, host {want}",
            x.to_bits()
        );
    }
    let bf16_round = Map::new(
        "round_bf16",
        "monoscan_flagged_float{monoscan_bf16_to_f32(monoscan_f32_to_bf16(x)), 1u}",
        |x: &f32| Flagged::head(bf16::from_f32(*x).to_f32()),
    )
    .prelude(bf16::cuda_definition());
    let got = device_map(bf16_round, &xs).expect("the GPU was there a moment ago");
    for (x, g) in xs.iter().zip(&got) {
        let want = bf16::from_f32(*x).to_f32();
        assert!(
            same_float(*g, want),
            "bf16 of {x:e} ({:#010x}): device {g}, host {want}",
            x.to_bits()
        );
    }
}

/// The largest f16 so far, the first of equal ones: a monoid over `f16` elements themselves
/// (no NaN among its inputs: NaN has no place in the order).
struct MaxF16;

impl Monoid for MaxF16 {
    type Elem = f16;
    fn identity(&self) -> f16 {
        f16::NEG_INFINITY
    }
    fn combine(&self, a: &f16, b: &f16) -> f16 {
        if a.to_f32() >= b.to_f32() {
            *a
        } else {
            *b
        }
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<f16>("max_f16")
            .identity("monoscan_f16{0xfc00}")
            .combine_expr("monoscan_f16_to_f32(a) >= monoscan_f16_to_f32(b) ? a : b")
    }
}

#[test]
fn an_operator_over_f16_elements_matches_the_cpu() {
    let mut rng = Rng::new(11);
    let mut xs: Vec<f16> = (0..100_003).map(|_| finite_f16(&mut rng)).collect();
    // Ties of +0 and -0: the first one seen stays.
    xs[10] = f16::from_f32(-0.0);
    xs[11] = f16::from_f32(0.0);
    let want = Sequential.inclusive_scan(&MaxF16, &xs).unwrap();
    let par = Parallel::with_min_chunk(128)
        .inclusive_scan(&MaxF16, &xs)
        .unwrap();
    let bits = |v: &[f16]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&par), bits(&want));
    let Some(gpu) = gpu() else { return };
    assert_eq!(
        bits(&gpu.inclusive_scan(&MaxF16, &xs).unwrap()),
        bits(&want)
    );
    assert_eq!(
        gpu.reduce(&MaxF16, &xs).unwrap().to_bits(),
        want[want.len() - 1].to_bits()
    );
}

/// Every kernel family a mapped operator gets, in the shapes the policy picks for `cc`.
fn sets(op: &CudaOp, cc: u32) -> Vec<KernelSet> {
    let limits = DeviceLimits::for_arch(cc);
    let tuning = Tuning::default();
    let shape = |purpose| policy::tile_shape(op.elem_size, &limits, &tuning, purpose).unwrap();
    let block = policy::textbook_block(op.elem_size, &limits).unwrap();
    let mut sets = vec![
        KernelSet::TreeReduce { block },
        KernelSet::KoggeStone { block },
        KernelSet::BrentKung { block },
        KernelSet::TiledReduce(shape(Purpose::Tiles)),
        KernelSet::ReduceThenScan(shape(Purpose::Tiles)),
        KernelSet::SinglePass(shape(Purpose::SinglePass)),
        KernelSet::OneTile(shape(Purpose::OneTile)),
        KernelSet::Check,
    ];
    if let Some(map) = &op.input {
        if op.elem == "unsigned int" {
            sets.push(KernelSet::Select(
                policy::select_shape(map.in_size, &limits).unwrap(),
            ));
        }
    }
    sets
}

#[test]
fn half_kernels_compile() {
    if !nvrtc() {
        return;
    }
    let ops = [
        Sum::<f32>::new().cuda().with_input(widen_f16().cuda()),
        Sum::<f32>::new().cuda().with_input(widen_bf16().cuda()),
        Affine::<f32>::new().cuda().with_input(to_flip().cuda()),
        Sum::<u32>::new().cuda().with_input(count_true().cuda()),
        MaxF16.cuda(),
        Segmented::new(MaxF16).cuda(),
    ];
    // The f16 map on every architecture class (no staging, cp.async, tensor copies), the
    // others on the oldest.
    for (i, op) in ops.iter().enumerate() {
        let archs: &[u32] = if i == 0 { &[75, 80, 90] } else { &[75] };
        for &cc in archs {
            for set in sets(op, cc) {
                let rendered = render(op, &KernelSpec::new(set))
                    .unwrap_or_else(|e| panic!("{} {}: {e}", op.name, set.name()));
                let out = compile(&rendered, &op.name, Target::Cubin(cc))
                    .unwrap_or_else(|e| panic!("{} {} for sm_{cc}: {e}", op.name, set.name()));
                for &entry in set.entries() {
                    for mapped in [false, true] {
                        if mapped && !(op.input.is_some() && entry.mappable()) {
                            continue;
                        }
                        let symbol = rendered.symbol(entry, mapped);
                        let needle = format!(".text.{symbol}\0");
                        assert!(
                            out.image
                                .windows(needle.len())
                                .any(|w| w == needle.as_bytes()),
                            "{} {} for sm_{cc} lacks {symbol}",
                            op.name,
                            set.name()
                        );
                    }
                }
            }
        }
    }
}
