//! JIT latency: the combine-cost policy, the parallel cache fetches, ahead-of-time warming,
//! and `Scanner::prepare`'s report, over the operator classes of the JIT benchmark
//! (`tests/common/classes.rs`): sum i32, an 8-byte cheap non-commutative map, affine f64, an
//! f64 log-sum-exp (transcendental calls), 16-byte affine maps modulo a prime (64-bit
//! remainders, a parameter) and Welford's moments (24 bytes, f64 divisions).
//!
//! The policy and rendering parts need nothing; the compile and cache parts need NVRTC (they
//! skip without it, fail instead under MONOSCAN_REQUIRE_NVRTC=1); the scans and `prepare` need
//! a GPU (skip without one, fail instead under MONOSCAN_REQUIRE_GPU=1). Expensive combines run
//! outlined: their scans are checked against the sequential reference at every boundary length,
//! unaligned buffers included, and the exact ones also in both forms.

mod common;

use common::classes::{self, AffineModP, Lin32, LinearU32, LogSumExp, ModAffine, Moments, Welford};
use common::gpu::{gpu, gpu_with, nvrtc, Rng};
use common::suite::{gpu_lengths, reference};
use monoscan::cache::{CacheConfig, KernelCache, Origin, Warm};
use monoscan::codegen::{render, CombineForm, KernelSet, KernelSpec};
use monoscan::jit::{self, Target};
use monoscan::ops::{Affine, Sum};
use monoscan::tuning::cost::CombineCost;
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{policy, DeviceLimits, Purpose, Tuning};
use monoscan::{Algorithm, CudaOp, Error, Gpu, Monoid};
use std::sync::{Arc, Barrier};

fn plan(op: &CudaOp, cc: u32) -> Plan {
    Plan::new(op, DeviceLimits::for_arch(cc), &Tuning::default())
}

// ---------------------------------------------------------------------------------------------
// The policy and the generated code (no NVRTC)

#[test]
fn cheap_classes_inline_and_expensive_ones_outline() {
    for (name, op) in classes::all() {
        let cost = CombineCost::of(&op);
        let form = policy::combine_form(&cost, &Tuning::default());
        let expensive = matches!(name, "logsumexp-f64" | "affine-mod-u64" | "welford-f64");
        let want = if expensive {
            CombineForm::Outlined
        } else {
            CombineForm::Inline
        };
        assert_eq!(form, want, "{name}: {cost:?}");
        assert_eq!(plan(&op, 90).combine(), want, "{name}");
    }
    let lse = CombineCost::of(&LogSumExp.cuda());
    assert_eq!(lse.transcendentals, 2);
    let modp = CombineCost::of(&AffineModP::default().cuda());
    assert!(modp.wide_integers && modp.divisions == 2, "{modp:?}");
    assert_eq!(CombineCost::of(&Welford.cuda()).divisions, 2);
}

#[test]
fn the_outlined_form_calls_one_copy_of_the_combine() {
    let set = |op: &CudaOp| KernelSet::SinglePass(plan(op, 90).shape(Purpose::SinglePass).unwrap());
    let lse = LogSumExp.cuda();
    let outlined = render(&lse, &plan(&lse, 90).spec(set(&lse)))
        .unwrap()
        .source;
    assert_eq!(outlined.matches("__noinline__").count(), 1);
    assert_eq!(
        outlined.matches("ms_combine_outlined(").count(),
        2,
        "definition and call"
    );
    assert_eq!(outlined.matches("log1p(").count(), 1);
    // Its block-level steps stay rolled loops (one inlined copy each); the inline form unrolls
    // them.
    assert!(outlined.contains("#define MS_STEP_UNROLL _Pragma(\"unroll 1\")"));
    // The inline form is the source the kernels always had: the operator's combine called
    // directly from MsOp, nothing outlined.
    let inline = render(&lse, &KernelSpec::new(set(&lse))).unwrap().source;
    assert!(!inline.contains("__noinline__") && !inline.contains("ms_combine_outlined"));
    assert!(inline.contains("return ms_user_op::combine(a, b);"));
    assert!(inline.contains("#define MS_STEP_UNROLL _Pragma(\"unroll\")"));
    let sum = Sum::<i32>::new().cuda();
    let spec = plan(&sum, 90).spec(set(&sum));
    assert_eq!(spec, KernelSpec::new(set(&sum)));
    // The tuning can force either form.
    let forced = Plan::new(
        &sum,
        DeviceLimits::for_arch(90),
        &Tuning {
            combine: Some(CombineForm::Outlined),
            ..Tuning::default()
        },
    );
    let src = render(&sum, &forced.spec(set(&sum))).unwrap().source;
    assert!(src.contains("__noinline__"));
}

// ---------------------------------------------------------------------------------------------
// Compiling, the cache, warming (NVRTC, no GPU)

/// Every algorithm's modules: the default path, reduce-then-scan and the textbook families.
fn every_algorithm() -> Vec<Algorithm> {
    vec![
        Algorithm::Auto,
        Algorithm::Hierarchical,
        Algorithm::KoggeStone,
        Algorithm::BrentKung,
    ]
}

#[test]
fn every_class_warms_for_every_family_then_loads_from_disk() {
    if !nvrtc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ops: Vec<CudaOp> = classes::all().into_iter().map(|(_, op)| op).collect();
    let warm = Warm::new([75, 90]).algorithms(every_algorithm());
    let first = KernelCache::new(CacheConfig::dir(dir.path()));
    let report = first.warm(&ops, &warm).unwrap();
    // Every set of every algorithm's plan, once: the staged scan only on sm_90 (sm_75 has no
    // staged kernels), for every class (elements up to 128 bytes of any size).
    let mut want = Vec::new();
    for op in &ops {
        for cc in [75, 90] {
            let p = plan(op, cc);
            for a in every_algorithm() {
                for set in p.sets(a).unwrap() {
                    if !want.contains(&(op.name.clone(), cc, set)) {
                        want.push((op.name.clone(), cc, set));
                    }
                }
            }
        }
    }
    assert_eq!(report.modules.len(), want.len(), "{report}");
    let staged = want
        .iter()
        .filter(|(_, _, s)| matches!(s, KernelSet::StagedScan(_)))
        .count();
    // Cheap combines of 2 to 16 bytes also scan small inputs in tiles of fewer threads.
    let small = ops
        .iter()
        .filter(|op| {
            let cost = CombineCost::of(op);
            let limits = DeviceLimits::for_arch(90);
            policy::small_staged_shape(op.elem_size, &cost, &limits, &Tuning::default())
                .unwrap()
                .is_some()
        })
        .count();
    assert!(small > 0);
    assert_eq!(
        staged,
        ops.len() + small,
        "the staged scan: once per class on sm_90, twice with small-input tiles"
    );
    assert_eq!(report.count(Origin::Compiled), report.modules.len());
    for m in &report.modules {
        let outlined = m.spec.combine == CombineForm::Outlined;
        assert_eq!(
            outlined,
            m.module.label.contains("outlined"),
            "{}",
            m.label()
        );
        assert!(!m.module.compiled.image.is_empty());
    }
    // Warming again finds everything in memory; another cache (a later process) on disk.
    let again = first.warm(&ops, &warm).unwrap();
    assert_eq!(again.count(Origin::Memory), report.modules.len());
    let later = KernelCache::new(CacheConfig::dir(dir.path()));
    let from_disk = later.warm(&ops, &warm).unwrap();
    assert_eq!(
        from_disk.count(Origin::Disk),
        report.modules.len(),
        "{from_disk}"
    );
    assert_eq!(later.stats().compiles, 0);
    for (a, b) in report.modules.iter().zip(&from_disk.modules) {
        assert_eq!(
            a.module.compiled.image,
            b.module.compiled.image,
            "{}",
            a.label()
        );
    }
    assert_eq!(later.list().unwrap().len(), report.modules.len());
}

#[test]
fn a_gpu_newer_than_the_nvrtc_gets_ptx() {
    if !nvrtc() {
        return;
    }
    let info = jit::nvrtc().unwrap();
    let newest = *info.archs.iter().max().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(CacheConfig::dir(dir.path()));
    let report = cache
        .warm(&[Sum::<i32>::new().cuda()], &Warm::new([newest + 10]))
        .unwrap();
    assert!(!report.modules.is_empty());
    for m in &report.modules {
        assert_eq!(m.target, Target::Ptx(newest));
        assert!(std::str::from_utf8(&m.module.compiled.image).is_ok());
    }
    assert!(cache
        .warm(&[Sum::<i32>::new().cuda()], &Warm::new([10]))
        .is_err());
}

#[test]
fn a_broken_operator_fails_the_warm_up_but_not_the_others() {
    if !nvrtc() {
        return;
    }
    let broken = CudaOp::new::<i32>("broken")
        .identity("0")
        .combine_expr("a + undefined_name");
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(CacheConfig::dir(dir.path()));
    let ops = [broken, Sum::<i32>::new().cuda()];
    let err = cache.warm(&ops, &Warm::new([90])).unwrap_err();
    assert!(matches!(err, Error::Compile(_)), "{err}");
    // Sum's modules were compiled all the same.
    let later = KernelCache::new(CacheConfig::dir(dir.path()));
    let report = later.warm(&ops[1..], &Warm::new([90])).unwrap();
    assert_eq!(report.count(Origin::Disk), report.modules.len());
}

#[test]
fn parallel_fetches_compile_each_module_once_and_keep_their_order() {
    if !nvrtc() {
        return;
    }
    let cache = KernelCache::new(CacheConfig::memory_only());
    let op = cache.intern(LinearU32.cuda());
    let p = plan(op.op(), 90);
    let target = Target::Cubin(90);
    let sets = p.sets(Algorithm::Auto).unwrap();
    // Each module twice in one batch: one fetch compiles it, the other waits for it.
    let jobs: Vec<_> = sets
        .iter()
        .chain(&sets)
        .map(|&s| (op.clone(), p.spec(s), target))
        .collect();
    let fetched: Vec<_> = cache
        .fetch_all(&jobs)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(cache.stats().compiles, sets.len() as u64);
    for (f, (_, spec, _)) in fetched.iter().zip(&jobs) {
        assert_eq!(f.spec, *spec);
        assert!(f.module.label.ends_with(&spec.name()), "{}", f.module.label);
    }
    for (a, b) in fetched[..sets.len()].iter().zip(&fetched[sets.len()..]) {
        assert!(Arc::ptr_eq(&a.module, &b.module));
        assert_eq!(
            [a.origin, b.origin]
                .iter()
                .filter(|o| **o == Origin::Compiled)
                .count(),
            1
        );
    }
    // Threads asking for one module at once share one compile.
    let cache = KernelCache::new(CacheConfig::memory_only());
    let spec = p.spec(sets[sets.len() - 1]);
    let start = Barrier::new(4);
    let modules: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    cache.get(&LinearU32.cuda(), spec, target).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(cache.stats().compiles, 1);
    assert!(modules.iter().all(|m| Arc::ptr_eq(m, &modules[0])));
}

#[test]
fn a_memory_hit_is_keyed_by_the_interned_operator() {
    if !nvrtc() {
        return;
    }
    let cache = KernelCache::new(CacheConfig::memory_only());
    let a = cache.intern(Affine::<f64>::new().cuda());
    let b = cache.intern(Affine::<f64>::new().cuda());
    assert!(Arc::ptr_eq(&a, &b));
    let spec = KernelSpec::new(KernelSet::Check);
    let first = cache.fetch(&a, spec, Target::Cubin(90)).unwrap();
    let hit = cache.fetch(&b, spec, Target::Cubin(90)).unwrap();
    assert_eq!(
        (first.origin, hit.origin),
        (Origin::Compiled, Origin::Memory)
    );
    assert!(Arc::ptr_eq(&first.module, &hit.module));
    // Another operator, another module; another target, another module.
    let c = cache.intern(Affine::<f32>::new().cuda());
    assert_ne!(a.id(), c.id());
    assert_eq!(
        cache.fetch(&c, spec, Target::Cubin(90)).unwrap().origin,
        Origin::Compiled
    );
    assert_eq!(
        cache.fetch(&a, spec, Target::Cubin(80)).unwrap().origin,
        Origin::Compiled
    );
    let s = cache.stats();
    assert_eq!((s.memory_hits, s.compiles), (1, 3));
}

#[test]
fn outlined_tiles_are_smaller_than_inlined_ones() {
    if !nvrtc() {
        return;
    }
    for op in [LogSumExp.cuda(), AffineModP::default().cuda()] {
        let p = plan(&op, 90);
        let set = KernelSet::OneTile(p.shape(Purpose::OneTile).unwrap());
        let size = |spec: KernelSpec| {
            let r = render(&op, &spec).unwrap();
            jit::compile(&r, &op.name, Target::Cubin(90))
                .unwrap()
                .image
                .len()
        };
        let inline = size(KernelSpec::new(set));
        let outlined = size(p.spec(set));
        assert!(
            outlined < inline,
            "{}: {outlined} vs {inline} bytes",
            op.name
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Scans of every class on the GPU

/// Runs every operation of `algorithm` on `xs` (from `init`), at offsets 0 and 1 (aligned and
/// unaligned buffers), and compares with the sequential reference under `close`.
fn check<M: Monoid>(
    gpu: &Gpu,
    m: &M,
    algorithm: Algorithm,
    xs: &[M::Elem],
    init: M::Elem,
    close: &dyn Fn(&M::Elem, &M::Elem) -> bool,
    what: &str,
) {
    let want = reference(m, xs, init);
    let n = xs.len();
    let same = |op: &str, got: &[M::Elem], want: &[M::Elem]| {
        assert_eq!(got.len(), want.len());
        if let Some(i) = (0..got.len()).find(|&i| !close(&got[i], &want[i])) {
            panic!(
                "{what} {algorithm} n={n} {op}: element {i}: {:?} vs {:?}",
                got[i], want[i]
            );
        }
    };
    let s = gpu.stream();
    for off in [0, 1].into_iter().filter(|&o| o == 0 || n > 0) {
        let padded: Vec<M::Elem> = std::iter::repeat_n(init, off)
            .chain(xs.iter().copied())
            .collect();
        let buf = s.clone_htod(&padded).unwrap();
        let input = buf.slice(off..);
        let scanner = gpu.scanner(m).algorithm(algorithm);
        let mut out = s.clone_htod(&padded).unwrap();
        let mut total = s.clone_htod(&[init]).unwrap();
        {
            let mut view = out.slice_mut(off..);
            scanner.inclusive(&input, &mut view).unwrap();
        }
        same(
            "inclusive",
            &s.clone_dtoh(&out).unwrap()[off..],
            &want.inclusive,
        );
        {
            let mut view = out.slice_mut(off..);
            scanner
                .exclusive_with_total(&input, &mut view, init, &mut total)
                .unwrap();
        }
        same(
            "exclusive",
            &s.clone_dtoh(&out).unwrap()[off..],
            &want.exclusive,
        );
        same("total", &s.clone_dtoh(&total).unwrap(), &[want.total]);
        scanner.reduce(&input, &mut total).unwrap();
        same("reduce", &s.clone_dtoh(&total).unwrap(), &[want.reduce]);
    }
}

/// The lengths at every boundary of `algorithm` on `gpu` for `T`.
fn lengths<T>(gpu: &Gpu, algorithm: Algorithm) -> Vec<usize> {
    gpu_lengths(gpu, algorithm, std::mem::size_of::<T>())
}

const ALGORITHMS: [Algorithm; 3] = [
    Algorithm::Auto,
    Algorithm::Hierarchical,
    Algorithm::BrentKung,
];

fn lin32(seed: u64, n: usize) -> Vec<Lin32> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| Lin32 {
            a: rng.next_u64() as u32,
            b: rng.next_u64() as u32,
        })
        .collect()
}

fn mod_affine(p: u64, seed: u64, n: usize) -> Vec<ModAffine> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| ModAffine {
            a: rng.below(p),
            b: rng.below(p),
        })
        .collect()
}

/// Values in `[-X, X]`.
const X: f64 = 100.0;

fn uniform(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.unit() * X).collect()
}

/// The tolerance of two log-sum-exps of `n` values in `[-X, X]`, in any grouping. Each combine
/// rounds a subtraction, `exp`, `log1p` and an addition: within `eps (3 M + 4)` of its exact
/// value for operands and results of size at most `M = X + ln(n + 2)` (a few ulps of `exp`
/// and `log1p`, whose results are at most 1 and ln 2). The log-sum-exp's partial derivatives
/// are positive and sum to 1, so operand errors pass into a result at most at their largest,
/// and a result that went through `k <= n + 1` combines is within `k` such errors of the
/// exact value; two groupings within twice that.
fn lse_close(n: usize) -> impl Fn(&f64, &f64) -> bool {
    let m = X + ((n + 2) as f64).ln();
    let abs = 2.0 * (n + 1) as f64 * f64::EPSILON * (3.0 * m + 4.0);
    move |a: &f64, b: &f64| monoscan::Tolerance { rel: 0.0, abs }.close(*a, *b)
}

/// The tolerances of two merges of `n` observations in `[-X, X]`. A merge rounds its mean
/// about 4 times, of values at most `3 X` (`|d| <= 2 X`), and its weights sum to 1: means
/// within `12 k eps X` after `k` merges. `m2` adds nonnegative terms, `d^2 na nb / n`, each
/// within `5 eps` of its value plus what the means' errors do to `d^2`: at most
/// `2 |d| (24 k eps X) na nb / n <= 24 n k eps X^2` per merge; `k <= n + 1`.
fn moments_close(n: usize) -> impl Fn(&Moments, &Moments) -> bool {
    let k = (n + 1) as f64;
    let eps = f64::EPSILON;
    let mean = monoscan::Tolerance {
        rel: 0.0,
        abs: 2.0 * 12.0 * k * eps * X,
    };
    let m2 = monoscan::Tolerance {
        rel: 2.0 * 5.0 * k * eps,
        abs: 2.0 * 24.0 * k * k * eps * X * X,
    };
    move |a: &Moments, b: &Moments| a.n == b.n && mean.close(a.mean, b.mean) && m2.close(a.m2, b.m2)
}

fn exact<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b
}

#[test]
fn linear_u32_scans_exactly() {
    let Some(gpu) = gpu() else { return };
    for a in ALGORITHMS {
        for (k, n) in lengths::<Lin32>(gpu, a).into_iter().enumerate() {
            let xs = lin32(k as u64, n);
            check(
                gpu,
                &LinearU32,
                a,
                &xs,
                lin32(99, 1)[0],
                &exact,
                "linear-u32",
            );
        }
    }
}

#[test]
fn modular_affine_maps_scan_exactly_outlined() {
    let Some(gpu) = gpu() else { return };
    let m = AffineModP::default();
    assert_eq!(
        gpu.scanner(&m).prepare().unwrap().modules[0].spec.combine,
        CombineForm::Outlined
    );
    for a in ALGORITHMS {
        for (k, n) in lengths::<ModAffine>(gpu, a).into_iter().enumerate() {
            let xs = mod_affine(m.p, k as u64, n);
            check(
                gpu,
                &m,
                a,
                &xs,
                mod_affine(m.p, 99, 1)[0],
                &exact,
                "affine-mod",
            );
        }
    }
}

#[test]
fn log_sum_exp_scans_within_its_rounding_outlined() {
    let Some(gpu) = gpu() else { return };
    for a in ALGORITHMS {
        for (k, n) in lengths::<f64>(gpu, a).into_iter().enumerate() {
            let xs = uniform(k as u64, n);
            check(gpu, &LogSumExp, a, &xs, -3.5, &lse_close(n), "logsumexp");
        }
    }
}

#[test]
fn log_sum_exp_keeps_nan_and_infinities() {
    let Some(gpu) = gpu() else { return };
    let n = 50_001;
    for a in ALGORITHMS {
        let mut xs = uniform(7, n);
        // The identity (-inf) scattered, +inf at one place: every prefix from it on is +inf.
        for i in (0..n).step_by(97) {
            xs[i] = f64::NEG_INFINITY;
        }
        let mut inf = xs.clone();
        inf[n / 3] = f64::INFINITY;
        let mut nan = xs.clone();
        nan[2 * n / 3] = f64::NAN;
        for (what, xs) in [("-inf", &xs), ("+inf", &inf), ("nan", &nan)] {
            check(
                gpu,
                &LogSumExp,
                a,
                xs,
                f64::NEG_INFINITY,
                &lse_close(n),
                what,
            );
        }
        // All -inf: the identity everywhere.
        let empty = vec![f64::NEG_INFINITY; 3000];
        check(
            gpu,
            &LogSumExp,
            a,
            &empty,
            f64::NEG_INFINITY,
            &lse_close(3000),
            "all -inf",
        );
    }
}

#[test]
fn welford_moments_scan_within_their_rounding_outlined() {
    let Some(gpu) = gpu() else { return };
    for a in ALGORITHMS {
        for (k, n) in lengths::<Moments>(gpu, a).into_iter().enumerate() {
            let xs: Vec<Moments> = uniform(k as u64, n).into_iter().map(Moments::of).collect();
            let init = Moments::of(1.5);
            check(
                gpu,
                &Welford,
                a,
                &xs,
                init,
                &moments_close(n + 1),
                "welford",
            );
        }
    }
}

#[test]
fn welford_moments_keep_nan_and_infinities() {
    let Some(gpu) = gpu() else { return };
    let n = 20_011;
    let xs: Vec<Moments> = uniform(3, n).into_iter().map(Moments::of).collect();
    let close = moments_close(n + 1);
    for a in ALGORITHMS {
        // A NaN observation: every later prefix's mean and m2 are NaN, in any grouping.
        let mut nan = xs.clone();
        nan[n / 2] = Moments::of(f64::NAN);
        check(gpu, &Welford, a, &nan, Welford.identity(), &close, "nan");
        // An infinite observation: later prefixes are infinite or NaN depending on the
        // grouping, never finite; earlier ones are unaffected.
        let mut inf = xs.clone();
        let at = n / 3;
        inf[at] = Moments::of(f64::INFINITY);
        let s = gpu.stream();
        let input = s.clone_htod(&inf).unwrap();
        let mut out = s.clone_htod(&inf).unwrap();
        gpu.scanner(&Welford)
            .algorithm(a)
            .inclusive(&input, &mut out)
            .unwrap();
        let got = s.clone_dtoh(&out).unwrap();
        let want = reference(&Welford, &inf, Welford.identity()).inclusive;
        for i in 0..n {
            if i < at {
                assert!(
                    close(&got[i], &want[i]),
                    "{a} {i}: {:?} vs {:?}",
                    got[i],
                    want[i]
                );
            } else {
                assert!(
                    !got[i].mean.is_finite() && got[i].n == want[i].n,
                    "{a} {i}: {:?}",
                    got[i]
                );
            }
        }
    }
}

#[test]
fn exact_classes_agree_in_both_combine_forms() {
    for form in [CombineForm::Inline, CombineForm::Outlined] {
        let tuning = Tuning {
            combine: Some(form),
            ..Tuning::default()
        };
        let Some(gpu) = gpu_with(tuning) else { return };
        let m = AffineModP::default();
        let report = gpu.scanner(&m).prepare().unwrap();
        assert!(report.modules.iter().all(|p| p.spec.combine == form));
        for (k, n) in [0, 1, 1000, 4097, 100_003, 3_000_017]
            .into_iter()
            .enumerate()
        {
            let xs = mod_affine(m.p, 50 + k as u64, n);
            check(
                &gpu,
                &m,
                Algorithm::Auto,
                &xs,
                m.identity(),
                &exact,
                "affine-mod",
            );
            let ys = lin32(50 + k as u64, n);
            check(
                &gpu,
                &LinearU32,
                Algorithm::Auto,
                &ys,
                LinearU32.identity(),
                &exact,
                "lin32",
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// `prepare` and first calls on the GPU

/// A GPU of its own over its own cache in `dir` (memory only for `None`), gated like
/// [`gpu`].
fn gpu_over(dir: Option<&std::path::Path>) -> Option<Gpu> {
    gpu()?;
    let config = dir.map_or_else(CacheConfig::memory_only, CacheConfig::dir);
    Some(Gpu::with_cache(0, Arc::new(KernelCache::new(config))).unwrap())
}

#[test]
fn prepare_compiles_then_reads_disk_then_reuses_what_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let Some(cold) = gpu_over(Some(dir.path())) else {
        return;
    };
    for (_, op) in classes::all() {
        let sets = Plan::new(&op, cold.info().limits, cold.tuning())
            .sets(Algorithm::Auto)
            .unwrap()
            .len();
        let m = Opaque(op);
        let report = cold.scanner(&m).prepare().unwrap();
        assert_eq!(report.modules.len(), sets, "{report}");
        assert_eq!(report.count(Origin::Compiled), sets, "{report}");
        assert!(report.wall >= report.modules.iter().map(|p| p.fetch).max().unwrap());
        let again = cold.scanner(&m).prepare().unwrap();
        assert_eq!(again.count(Origin::Loaded), sets, "{again}");
        let Some(warm) = gpu_over(Some(dir.path())) else {
            return;
        };
        let later = warm.scanner(&m).prepare().unwrap();
        assert_eq!(later.count(Origin::Disk), sets, "{later}");
        assert_eq!(warm.cache().stats().compiles, 0);
    }
}

#[test]
fn a_first_small_scan_compiles_one_module() {
    let Some(g) = gpu_over(None) else { return };
    let m = Sum::<i32>::new();
    let xs: Vec<i32> = (0..1024).collect();
    let s = g.stream();
    let input = s.clone_htod(&xs).unwrap();
    let mut out = s.clone_htod(&xs).unwrap();
    let scanner = g.scanner(&m);
    scanner.inclusive(&input, &mut out).unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap()[1023], 1023 * 1024 / 2);
    assert_eq!(g.cache().stats().compiles, 1);
    let info = scanner.kernel_info().unwrap();
    assert!(
        info.iter().all(|k| k.name.starts_with("one-tile")),
        "{info:?}"
    );
    // `prepare_for` a small size compiles the reduce too, and nothing for large inputs.
    let report = g.scanner(&m).prepare_for(1024).unwrap();
    assert_eq!(report.modules.len(), 2);
    assert_eq!(
        (report.count(Origin::Loaded), report.count(Origin::Compiled)),
        (1, 1),
        "{report}"
    );
}

#[test]
fn a_warmed_cache_leaves_prepare_nothing_to_compile() {
    let dir = tempfile::tempdir().unwrap();
    let Some(probe) = gpu_over(None) else { return };
    let cc = probe.info().cc;
    // Warming uses the architecture's published limits: they must be the device's, or the
    // shapes (and so the modules) would differ.
    assert_eq!(probe.info().limits, DeviceLimits::for_arch(cc));
    let ops: Vec<CudaOp> = classes::all().into_iter().map(|(_, op)| op).collect();
    KernelCache::new(CacheConfig::dir(dir.path()))
        .warm(&ops, &Warm::new([cc]))
        .unwrap();
    let Some(g) = gpu_over(Some(dir.path())) else {
        return;
    };
    for op in ops {
        let report = g.scanner(&Opaque(op)).prepare().unwrap();
        assert_eq!(report.count(Origin::Disk), report.modules.len(), "{report}");
    }
    assert_eq!(g.cache().stats().compiles, 0);
}

/// A class operator by its CUDA description alone, for `prepare`, which compiles and loads but
/// launches nothing (its host side and element type are never used): lets one test loop over
/// the classes.
struct Opaque(CudaOp);

impl Monoid for Opaque {
    type Elem = u8;
    fn identity(&self) -> u8 {
        0
    }
    fn combine(&self, _: &u8, _: &u8) -> u8 {
        0
    }
    fn cuda(&self) -> CudaOp {
        self.0.clone()
    }
}
