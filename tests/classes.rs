//! The representative operator classes (`monoscan::bench::classes`): the monoid laws for every
//! class on the elements its generator draws (CPU), the parallel CPU backend against the
//! sequential one, and on a GPU every class's inclusive scan, exclusive scan (with its total)
//! and reduction against the sequential CPU backend at every boundary length of the default
//! algorithm and one large length: exactly for the integer classes, within the tolerance
//! derived from the computation for the float ones; log-sum-exp also with infinities and NaN;
//! and every module the default algorithm loads for each class compiles for sm_90. GPU tests
//! skip without a GPU (fail instead under MONOSCAN_REQUIRE_GPU=1), the compile test without
//! NVRTC (MONOSCAN_REQUIRE_NVRTC=1).

mod common;

use common::gpu::gpu;
use common::suite::gpu_lengths;
use monoscan::bench::classes::{self, Class, LogSumExp, Visit};
use monoscan::codegen::{render, KernelSet};
use monoscan::cpu::Parallel;
use monoscan::jit::{compile, Target};
use monoscan::laws::{Checker, LawFailure};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{DeviceLimits, Tuning};
use monoscan::{Algorithm, Backend, Gpu, Map, Monoid};
use proptest::prelude::*;

/// The split law's longest input (the checker's default).
const MAX_LEN: usize = 64;

/// Fails with the first disagreement of `backend` on `xs`.
fn assert_agrees<C: Class, B: Backend>(backend: &B, class: &C, xs: &[C::Elem]) {
    if let Some(m) = classes::check(backend, class, xs)
        .unwrap_or_else(|e| panic!("{} on {}: {e}", C::NAME, backend.describe()))
    {
        panic!("on {}: {m}", backend.describe());
    }
}

#[test]
fn every_class_is_a_monoid() {
    struct Laws(Vec<String>);
    impl Visit for Laws {
        type Error = LawFailure;
        fn visit<C: Class>(&mut self, class: &C) -> Result<(), LawFailure> {
            // One element per seed, drawn as the class's inputs are.
            let elems = any::<u64>().prop_map(move |seed| class.generate(1, seed)[0]);
            // Associativity combines 3 elements, the split law up to MAX_LEN, both sides
            // folded from the identity.
            let tol = class.generated_tolerance(MAX_LEN + 1);
            Checker::new(class)
                .max_len(MAX_LEN)
                .equality(move |a, b| class.agrees(&tol, a, b))
                .check(elems)?;
            self.0.push(C::NAME.to_string());
            Ok(())
        }
    }
    let mut laws = Laws(Vec::new());
    classes::visit_all(&mut laws).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(laws.0, classes::NAMES);
}

#[test]
fn the_exact_comparison_sees_the_order() {
    // A combine with its arguments swapped is still associative (the laws pass it), but it
    // hashes "cd" + "ab" where "ab" + "cd" was meant: the class's comparison with the
    // sequential result sees the difference.
    let h = classes::PolyHash::default();
    let (a, b) = (h.of(b"ab"), h.of(b"cd"));
    let tol = h.generated_tolerance(2);
    assert!(h.agrees(&tol, &h.combine(&a, &b), &h.of(b"abcd")));
    assert!(!h.agrees(&tol, &h.combine(&b, &a), &h.of(b"abcd")));
}

/// Lengths for the CPU backends: around the parallel backend's chunking and one large one.
const CPU_LENGTHS: [usize; 9] = [0, 1, 2, 31, 33, 1000, 4097, 65_537, 1_000_003];

#[test]
fn the_parallel_backend_agrees_with_the_sequential_one() {
    struct Cpu;
    impl Visit for Cpu {
        type Error = std::convert::Infallible;
        fn visit<C: Class>(&mut self, class: &C) -> Result<(), Self::Error> {
            for n in CPU_LENGTHS {
                assert_agrees(&Parallel::default(), class, &class.generate(n, n as u64));
            }
            Ok(())
        }
    }
    let Ok(()) = classes::visit_all(&mut Cpu);
}

#[test]
fn every_class_scans_and_reduces_on_the_gpu_as_on_the_cpu() {
    let Some(gpu) = gpu() else { return };
    struct OnGpu<'a>(&'a Gpu);
    impl Visit for OnGpu<'_> {
        type Error = std::convert::Infallible;
        fn visit<C: Class>(&mut self, class: &C) -> Result<(), Self::Error> {
            let size = std::mem::size_of::<C::Elem>();
            let lengths = gpu_lengths(self.0, Algorithm::Auto, size);
            for &n in &lengths {
                assert_agrees(self.0, class, &class.generate(n, 17 + n as u64));
            }
            eprintln!(
                "{}: {} lengths up to {}",
                C::NAME,
                lengths.len(),
                lengths.last().unwrap()
            );
            Ok(())
        }
    }
    let Ok(()) = classes::visit_all(&mut OnGpu(gpu));
}

/// Lengths of `size`-byte elements that reduce in the share form on a GPU holding 16,000 to
/// 240,000 threads of it at once: 128 x 720,720 bytes, which shares of 1 to 16 steps of 128
/// or 384 bytes divide (except 9 steps of 384: no bytes past the last share), one element
/// fewer and more, and two lengths with bytes past the last share that do not end on 16 bytes.
fn share_lengths(size: usize) -> Vec<usize> {
    let whole = 128 * 720_720 / size;
    vec![
        whole - 1,
        whole,
        whole + 1,
        3 * whole / 2 + 7,
        2 * whole + 13,
    ]
}

#[test]
fn expensive_reductions_keep_order_in_shares() {
    let Some(gpu) = gpu() else { return };
    struct Shares<'a>(&'a Gpu, usize);
    impl Visit for Shares<'_> {
        type Error = std::convert::Infallible;
        fn visit<C: Class>(&mut self, class: &C) -> Result<(), Self::Error> {
            let plan = Plan::new(&class.cuda(), self.0.info().limits, self.0.tuning());
            let size = std::mem::size_of::<C::Elem>();
            let fits = matches!(
                plan.reduce_set(Algorithm::Auto, u64::MAX).unwrap(),
                KernelSet::StagedReduce(s) if s.shares_fit(size)
            );
            if !(plan.reduce_shares() && fits) {
                return Ok(());
            }
            for n in share_lengths(size) {
                assert_agrees(self.0, class, &class.generate(n, 5 + n as u64));
            }
            self.1 += 1;
            Ok(())
        }
    }
    let mut v = Shares(gpu, 0);
    let Ok(()) = classes::visit_all(&mut v);
    // On sm_90: log-sum-exp, Welford, the non-commutative 2x2 matrices, affine maps mod p and
    // hashes mod p, and 48-byte affine maps.
    if gpu.info().limits.cc >= 90 {
        assert!(v.1 >= 6, "{} classes take the share form", v.1);
    }
}

#[test]
fn a_fused_map_reduces_in_shares_as_its_mapped_input() {
    // The share form's mapped entry against its plain one on the mapped input: the same
    // combines in the same order, so the same bits; and both against the CPU.
    let Some(gpu) = gpu() else { return };
    let map = Map::new("halve", "x * 0.5", |x: &f64| x * 0.5);
    for n in share_lengths(8) {
        let xs = LogSumExp.generate(n, n as u64);
        let mapped: Vec<f64> = xs.iter().map(|x| x * 0.5).collect();
        let fused = gpu.map_reduce(&LogSumExp, &map, &xs).unwrap();
        let plain = gpu.reduce(&LogSumExp, &mapped).unwrap();
        assert_eq!(
            fused.to_bits(),
            plain.to_bits(),
            "{n}: {fused} against {plain}"
        );
        assert_agrees(gpu, &LogSumExp, &mapped);
    }
}

/// Log-sum-exp inputs with the special values the operator defines: the identity `-inf`
/// scattered, then from `at` on `+inf` (every later prefix is `+inf`) or NaN (every later
/// prefix is NaN).
fn special(n: usize, at: usize, value: f64) -> Vec<f64> {
    let mut xs = LogSumExp.generate(n, n as u64);
    for i in (0..n).step_by(7) {
        xs[i] = f64::NEG_INFINITY;
    }
    if at < n {
        xs[at] = value;
    }
    xs
}

#[test]
fn log_sum_exp_keeps_infinities_and_nan() {
    let lengths: Vec<usize> = match gpu() {
        Some(g) => gpu_lengths(g, Algorithm::Auto, 8),
        None => CPU_LENGTHS.to_vec(),
    };
    for &n in &lengths {
        for (at, value) in [(usize::MAX, 0.0), (n / 2, f64::INFINITY), (n / 3, f64::NAN)] {
            let xs = special(n, at, value);
            assert_agrees(&Parallel::default(), &LogSumExp, &xs);
            if let Some(g) = gpu() {
                assert_agrees(g, &LogSumExp, &xs);
            }
        }
    }
    // The reference itself: after a NaN every prefix is NaN, after +inf every one is +inf.
    let xs = special(100, 40, f64::NAN);
    let scan = monoscan::cpu::seq::inclusive_scan(&LogSumExp, &xs);
    assert!(scan[..40].iter().all(|x| !x.is_nan()) && scan[40..].iter().all(|x| x.is_nan()));
    let xs = special(100, 40, f64::INFINITY);
    let scan = monoscan::cpu::seq::inclusive_scan(&LogSumExp, &xs);
    assert!(scan[40..].iter().all(|&x| x == f64::INFINITY));
    assert!(scan[..40].iter().all(|&x| x < f64::INFINITY), "{scan:?}");
}

#[test]
fn every_class_compiles_for_the_default_algorithm() {
    // What `monoscan bench --cases classes` loads on an sm_90 device: every module the default
    // algorithm's plan lists, in the plan's combine form (NVRTC, no GPU).
    if !common::gpu::nvrtc() {
        return;
    }
    for d in classes::all() {
        let plan = Plan::new(&d.cuda, DeviceLimits::for_arch(90), &Tuning::default());
        for set in plan.sets(Algorithm::Auto).unwrap() {
            let rendered = render(&d.cuda, &plan.spec(set)).unwrap();
            compile(&rendered, &set.name(), Target::Cubin(90))
                .unwrap_or_else(|e| panic!("{} {}: {e}", d.name, set.name()));
        }
    }
}
