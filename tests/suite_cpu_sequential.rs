//! The sequential CPU reference (`cpu::Sequential` and the `cpu::seq` functions) against the
//! naive fold from the identity, exactly: one test per operator,
//! `cpu_sequential::reference::<operator>`, each running every operation on lengths biased to
//! boundaries and on random inputs (see `common::suite`). Also: the suite's check catches
//! wrong results.

mod common;

use common::affine_maps;
use common::cases::{self, Case};
use common::gpu::Rng;
use common::suite::{check_input, suite, Mapped, SequentialSubject, Subject, Visit};
use monoscan::cpu::{seq, Sequential};
use monoscan::ops::{AffineMap, Mat2};
use monoscan::{Backend, Monoid, Result};
use proptest::strategy::{BoxedStrategy, Just, Strategy};

suite! {
    cpu_sequential {
        reference => Some(SequentialSubject);
    }
    cases: [core_cases, cpu_cases];
}

// The harness catches wrong results: a reordered reduce, and (within the float tolerance) one
// map missing among thousands.

/// The sequential backend with one mistake.
#[derive(Clone, Copy)]
enum Mutant {
    /// `reduce` combines the second half before the first.
    Reordered,
    /// `exclusive_scan_total`'s total leaves out the last element.
    DropsLast,
}

impl Backend for Mutant {
    fn describe(&self) -> String {
        "a wrong backend".to_string()
    }
    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        Ok(match self {
            Mutant::Reordered => {
                let (left, right) = xs.split_at(xs.len() / 2);
                m.combine(&seq::reduce(m, right), &seq::reduce(m, left))
            }
            Mutant::DropsLast => seq::reduce(m, xs),
        })
    }
    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        Sequential.inclusive_scan_in_place(m, xs)
    }
    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        Sequential.exclusive_scan_in_place(m, xs, init)
    }
    fn exclusive_scan_total<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let (scan, total) = seq::exclusive_scan_total(m, xs, init);
        Ok(match self {
            Mutant::DropsLast => {
                let all_but_last = &xs[..xs.len().saturating_sub(1)];
                (scan, m.combine(&init, &seq::reduce(m, all_but_last)))
            }
            Mutant::Reordered => (scan, total),
        })
    }
}

impl Subject for Mutant {
    fn name(&self) -> String {
        "mutant".to_string()
    }
    fn lengths(&self, _: usize) -> Vec<usize> {
        Vec::new()
    }
    fn random_lengths(&self, _: usize) -> BoxedStrategy<usize> {
        Just(0).boxed()
    }
    fn cases(&self) -> u32 {
        1
    }
    fn paths<V: Visit>(&self, visit: &mut V) {
        visit.path("backend", self, Mapped::Fused);
    }
}

#[test]
#[should_panic(expected = "mutant backend n=1009: reduce")]
fn harness_catches_reordering() {
    let case = cases::matmul_mod_7();
    let (xs, init) = case.input(1009, 6);
    check_input(&Mutant::Reordered, &case, &xs, init);
}

#[test]
#[should_panic(expected = "mutant backend n=4099: exclusive_scan_total (total)")]
fn harness_catches_a_dropped_element_within_tolerance() {
    let mut r = Rng::new(7);
    let xs: Vec<AffineMap<f64>> = (0..4099)
        .map(|_| AffineMap::new(r.unit() * 2.0, r.unit() * 10.0))
        .collect();
    let case = Case::new(
        monoscan::ops::Affine::<f64>::new(),
        Just(AffineMap::new(1.0, 0.0)),
        affine_maps,
    );
    check_input(&Mutant::DropsLast, &case, &xs, case.op.identity());
}

/// The mutants are wrong only where they mean to be: the suite passes them on inputs where
/// their mistake makes no difference (one element, a commutative operator, an empty input).
#[test]
fn mutants_are_right_elsewhere() {
    let case = cases::matmul_mod_7();
    let (xs, init) = case.input(1, 6);
    check_input(&Mutant::Reordered, &case, &xs, init);
    let case = cases::sum_i32();
    let (xs, init) = case.input(1009, 6);
    check_input(&Mutant::Reordered, &case, &xs, init);
    let empty: Vec<Mat2> = Vec::new();
    check_input(
        &Mutant::DropsLast,
        &cases::matmul_mod_7(),
        &empty,
        Mat2::new([1, 2, 3, 4]),
    );
}
