//! Helpers shared by the integration tests (`mod common;` in each test file): strategies, the
//! operators of the backend suites ([`cases`]) and of the JIT-latency classes ([`classes`]),
//! the generic suite check ([`suite`]), batched scans against the sequential backend
//! ([`lanes`]), and
//! comparing results exactly or within float tolerances derived from the rounding of the
//! computation.
//!
//! Not every test file uses every item, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod cases;
pub mod classes;
pub mod gpu;
pub mod lanes;
pub mod strategies;
pub mod suite;

use monoscan::cpu::seq;
use monoscan::ops::{AffineMap, Flagged, Float};
use monoscan::{ApproxEq, Monoid, Tolerance};
use std::fmt::Debug;

/// How results are compared with the reference.
#[derive(Clone, Copy, Debug)]
pub enum Cmp {
    /// `==`, except that a NaN equals a NaN (as under [`Tolerance::EXACT`]): the float `Min`,
    /// `Max` and `ArgMin`/`ArgMax` identities are NaN.
    Exact,
    /// [`ApproxEq`] within the tolerance.
    Approx(Tolerance),
}

/// Asserts `got == want` elementwise (under `cmp`), naming the first difference.
pub fn assert_same<T: PartialEq + ApproxEq + Debug>(what: &str, got: &[T], want: &[T], cmp: Cmp) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    let differs = |(g, w): (&T, &T)| match cmp {
        Cmp::Exact => !g.approx_eq(w, Tolerance::EXACT),
        Cmp::Approx(tol) => !g.approx_eq(w, tol),
    };
    if let Some(i) = got.iter().zip(want).position(differs) {
        let (n, g, w) = (got.len(), &got[i], &want[i]);
        match cmp {
            Cmp::Exact => assert_eq!(g, w, "{what}: element {i} of {n}"),
            Cmp::Approx(t) => panic!("{what}: element {i} of {n}: {g:?} vs {w:?}, beyond {t:?}"),
        }
    }
}

// Float tolerances

/// Componentwise absolute value and size of float-bearing elements.
pub trait Magnitude: Copy {
    /// The machine epsilon of the float type.
    const EPS: f64;
    /// Componentwise `|x|`.
    fn abs(self) -> Self;
    /// The largest component of `|x|`.
    fn size(self) -> f64;
}

macro_rules! float_magnitude {
    ($($t:ident),*) => {$(
        impl Magnitude for $t {
            const EPS: f64 = $t::EPSILON as f64;
            fn abs(self) -> Self { $t::abs(self) }
            fn size(self) -> f64 { $t::abs(self) as f64 }
        }
    )*};
}
float_magnitude!(f32, f64);

impl<T: Magnitude + Float> Magnitude for AffineMap<T> {
    const EPS: f64 = T::EPS;
    fn abs(self) -> Self {
        AffineMap::new(self.a.abs(), self.b.abs())
    }
    fn size(self) -> f64 {
        self.a.size().max(self.b.size())
    }
}

impl<T: Magnitude> Magnitude for Flagged<T> {
    const EPS: f64 = T::EPS;
    fn abs(self) -> Self {
        Flagged::new(self.value.abs(), self.flag != 0)
    }
    fn size(self) -> f64 {
        self.value.size()
    }
}

/// `abs = roundings * eps * magnitude`. An evaluation, in any grouping, of a sum of terms of
/// total size `magnitude`, where each term goes through at most `roundings` roundings (relative
/// error at most `eps / 2` each), is within `roundings * eps / 2 * magnitude` of the exact value
/// (to first order); two such evaluations are within twice that. For a sum of `n` values this
/// is `n * eps * sum |x|`.
pub fn rounding_tolerance(roundings: usize, eps: f64, magnitude: f64) -> Tolerance {
    Tolerance {
        rel: 0.0,
        abs: roundings as f64 * eps * magnitude,
    }
}

/// [`rounding_tolerance`] for float sums and compositions of affine maps (segmented or not),
/// whose results are sums of terms. The magnitude is the largest sum of `|term|` over all
/// prefixes, with and without `init`: the same scan over absolute values. Each term is rounded
/// at most `per_element` times per element: 1 for sums; 3 for affine maps (the product of the
/// `a`s, then one multiplication and one addition per level of the grouping).
pub fn scan_tolerance<M>(m: &M, xs: &[M::Elem], init: M::Elem, per_element: usize) -> Cmp
where
    M: Monoid,
    M::Elem: Magnitude,
{
    let abs: Vec<_> = std::iter::once(init)
        .chain(xs.iter().copied())
        .map(Magnitude::abs)
        .collect();
    let largest = |ys: &[M::Elem]| {
        seq::inclusive_scan(m, ys)
            .into_iter()
            .map(Magnitude::size)
            .fold(0.0, f64::max)
    };
    let magnitude = largest(&abs).max(largest(&abs[1..]));
    Cmp::Approx(rounding_tolerance(
        per_element * abs.len(),
        M::Elem::EPS,
        magnitude,
    ))
}

/// For exact operators.
pub fn exact<M: Monoid>(_: &M, _: &[M::Elem], _: M::Elem) -> Cmp {
    Cmp::Exact
}

/// For float results that every grouping computes exactly, NaN included: equal under `==`
/// (so `-0.0` equals `0.0`), or both NaN.
pub fn exact_or_nan<M: Monoid>(_: &M, _: &[M::Elem], _: M::Elem) -> Cmp {
    Cmp::Approx(Tolerance::EXACT)
}

/// For float sums, segmented or not: `n * eps * sum |x|`.
pub fn sums<M: Monoid<Elem: Magnitude>>(m: &M, xs: &[M::Elem], init: M::Elem) -> Cmp {
    scan_tolerance(m, xs, init, 1)
}

/// For compositions of affine maps, segmented or not.
pub fn affine_maps<M: Monoid<Elem: Magnitude>>(m: &M, xs: &[M::Elem], init: M::Elem) -> Cmp {
    scan_tolerance(m, xs, init, 3)
}

/// Products of `n + 1` factors near 1 (with `init`), far from overflow and underflow: each
/// side is within `n u` (relative) of the exact product, so within `(n + 1) eps` of each other.
pub fn products<M: Monoid<Elem: Magnitude>>(_: &M, xs: &[M::Elem], _: M::Elem) -> Cmp {
    Cmp::Approx(Tolerance::relative((xs.len() + 1) as f64 * M::Elem::EPS))
}
