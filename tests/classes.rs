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
use monoscan::codegen::render;
use monoscan::cpu::Parallel;
use monoscan::jit::{compile, Target};
use monoscan::laws::{Checker, LawFailure};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{DeviceLimits, Tuning};
use monoscan::{Algorithm, Backend, Gpu, Monoid};
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
