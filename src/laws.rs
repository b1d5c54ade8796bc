//! Checking that an operator is a monoid: the laws as pure functions, and a proptest runner.
//!
//! Call [`check`] (or a configured [`Checker`]) from your own tests with a strategy that
//! generates your elements. Each law is checked on random inputs; a failure names the law and
//! gives the shrunk counterexample.
//!
//! | law | equation |
//! | --- | --- |
//! | associativity | `(a ⊕ b) ⊕ c == a ⊕ (b ⊕ c)` |
//! | left identity | `e ⊕ a == a` |
//! | right identity | `a ⊕ e == a` |
//! | split | `fold(xs) == fold(xs[..k]) ⊕ fold(xs[k..])` for every `k` |
//!
//! The split law is what every parallel algorithm relies on; it follows from the other three,
//! but checking it directly catches operators whose failures only show on longer inputs.
//!
//! ```
//! use monoscan::{laws, ops::Sum};
//! use proptest::prelude::*;
//!
//! laws::check(&Sum::<i64>::new(), any::<i64>()).unwrap();
//!
//! // Subtraction is not a monoid; the checker says which law fails.
//! struct Sub;
//! impl monoscan::Monoid for Sub {
//!     type Elem = i64;
//!     fn identity(&self) -> i64 { 0 }
//!     fn combine(&self, a: &i64, b: &i64) -> i64 { a.wrapping_sub(*b) }
//!     fn cuda(&self) -> monoscan::CudaOp {
//!         monoscan::CudaOp::new::<i64>("sub").identity("0").combine_expr("a - b")
//!     }
//! }
//! let failure = laws::check(&Sub, any::<i64>()).unwrap_err();
//! assert_eq!(failure.law, laws::Law::Associativity);
//! ```

use crate::approx::{ApproxEq, Tolerance};
use crate::cpu::seq;
use crate::monoid::Monoid;
use proptest::collection::vec;
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::fmt;

/// One monoid law.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Law {
    /// `(a ⊕ b) ⊕ c == a ⊕ (b ⊕ c)`.
    Associativity,
    /// `e ⊕ a == a`.
    LeftIdentity,
    /// `a ⊕ e == a`.
    RightIdentity,
    /// `fold(xs) == fold(xs[..k]) ⊕ fold(xs[k..])`.
    Split,
}

impl Law {
    /// Every law, in the order the checker tries them.
    pub const ALL: [Law; 4] = [
        Law::Associativity,
        Law::LeftIdentity,
        Law::RightIdentity,
        Law::Split,
    ];

    /// The equation, for messages.
    pub fn equation(self) -> &'static str {
        match self {
            Law::Associativity => "combine(combine(a, b), c) == combine(a, combine(b, c))",
            Law::LeftIdentity => "combine(identity, a) == a",
            Law::RightIdentity => "combine(a, identity) == a",
            Law::Split => "fold(xs) == combine(fold(xs[..k]), fold(xs[k..]))",
        }
    }
}

impl fmt::Display for Law {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Law::Associativity => "associativity",
            Law::LeftIdentity => "left identity",
            Law::RightIdentity => "right identity",
            Law::Split => "split",
        })
    }
}

/// A law that failed, with the smallest counterexample proptest found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LawFailure {
    /// The law.
    pub law: Law,
    /// The shrunk inputs, as `Debug` prints them.
    pub counterexample: String,
    /// Both sides of the equation for those inputs.
    pub detail: String,
}

impl fmt::Display for LawFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "monoid law `{}` fails: {} does not hold for {}: {}",
            self.law,
            self.law.equation(),
            self.counterexample,
            self.detail
        )
    }
}

impl std::error::Error for LawFailure {}

/// Both sides of associativity for `a, b, c`.
pub fn associativity<M: Monoid>(
    m: &M,
    a: &M::Elem,
    b: &M::Elem,
    c: &M::Elem,
) -> (M::Elem, M::Elem) {
    (
        m.combine(&m.combine(a, b), c),
        m.combine(a, &m.combine(b, c)),
    )
}

/// Both sides of the left identity law for `a`.
pub fn left_identity<M: Monoid>(m: &M, a: &M::Elem) -> (M::Elem, M::Elem) {
    (m.combine(&m.identity(), a), *a)
}

/// Both sides of the right identity law for `a`.
pub fn right_identity<M: Monoid>(m: &M, a: &M::Elem) -> (M::Elem, M::Elem) {
    (m.combine(a, &m.identity()), *a)
}

/// Both sides of the split law for `xs` cut at `k` (`k <= xs.len()`).
pub fn split<M: Monoid>(m: &M, xs: &[M::Elem], k: usize) -> (M::Elem, M::Elem) {
    let (l, r) = xs.split_at(k.min(xs.len()));
    (
        seq::reduce(m, xs),
        m.combine(&seq::reduce(m, l), &seq::reduce(m, r)),
    )
}

/// The longest input [`Checker::max_len`] accepts: proptest draws the split law's inputs up to
/// this length, 256 times per check.
pub const MAX_SPLIT_LEN: usize = 1 << 16;

type Equality<'a, T> = Box<dyn Fn(&T, &T) -> bool + Send + Sync + 'a>;

/// A configured law checker: the equality to use, how many cases, how long the inputs of the
/// split law may be.
///
/// ```
/// use monoscan::{laws::Checker, ops::Affine, ops::AffineMap, Tolerance};
/// use proptest::prelude::*;
///
/// let maps = (-2.0..2.0f64, -10.0..10.0f64).prop_map(|(a, b)| AffineMap::new(a, b));
/// Checker::new(&Affine::<f64>::new())
///     .approx(Tolerance { rel: 1e-12, abs: 1e-12 })
///     .cases(128)
///     .check(maps)
///     .unwrap();
/// ```
pub struct Checker<'a, M: Monoid> {
    m: &'a M,
    eq: Equality<'a, M::Elem>,
    cases: u32,
    max_len: usize,
}

impl<'a, M: Monoid> Checker<'a, M> {
    /// A checker with exact equality (`PartialEq`), 256 cases and split inputs of up to 64
    /// elements.
    pub fn new(m: &'a M) -> Self {
        Checker {
            m,
            eq: Box::new(|a, b| a == b),
            cases: 256,
            max_len: 64,
        }
    }

    /// Compares with `eq` instead of `==`.
    pub fn equality(mut self, eq: impl Fn(&M::Elem, &M::Elem) -> bool + Send + Sync + 'a) -> Self {
        self.eq = Box::new(eq);
        self
    }

    /// Compares with [`ApproxEq`] under `tol` (for float operators).
    pub fn approx(self, tol: Tolerance) -> Self
    where
        M::Elem: ApproxEq,
    {
        self.equality(move |a, b| a.approx_eq(b, tol))
    }

    /// How many random cases per law.
    pub fn cases(mut self, cases: u32) -> Self {
        self.cases = cases.max(1);
        self
    }

    /// The longest input for the split law, at most [`MAX_SPLIT_LEN`] (larger values are
    /// clamped to it).
    pub fn max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len.min(MAX_SPLIT_LEN);
        self
    }

    /// Checks every law; returns the first failure (in [`Law::ALL`] order).
    pub fn check<S>(&self, elems: S) -> Result<(), LawFailure>
    where
        S: Strategy<Value = M::Elem> + Clone,
    {
        match self.check_all(elems).into_iter().next() {
            None => Ok(()),
            Some(f) => Err(f),
        }
    }

    /// Checks every law; returns all failures.
    pub fn check_all<S>(&self, elems: S) -> Vec<LawFailure>
    where
        S: Strategy<Value = M::Elem> + Clone,
    {
        Law::ALL
            .iter()
            .filter_map(|&law| self.check_law(law, elems.clone()).err())
            .collect()
    }

    /// Checks one law.
    pub fn check_law<S>(&self, law: Law, elems: S) -> Result<(), LawFailure>
    where
        S: Strategy<Value = M::Elem> + Clone,
    {
        let m = self.m;
        let holds = |(l, r): (M::Elem, M::Elem)| -> Result<(), TestCaseError> {
            if (self.eq)(&l, &r) {
                Ok(())
            } else {
                Err(TestCaseError::fail(format!(
                    "left side {l:?}, right side {r:?}"
                )))
            }
        };
        let outcome = match law {
            Law::Associativity => {
                let s = (elems.clone(), elems.clone(), elems);
                self.runner()
                    .run(&s, |(a, b, c)| holds(associativity(m, &a, &b, &c)))
                    .map_err(|e| {
                        describe(e, |(a, b, c)| format!("a = {a:?}, b = {b:?}, c = {c:?}"))
                    })
            }
            Law::LeftIdentity => self
                .runner()
                .run(&elems, |a| holds(left_identity(m, &a)))
                .map_err(|e| describe(e, |a| format!("a = {a:?}"))),
            Law::RightIdentity => self
                .runner()
                .run(&elems, |a| holds(right_identity(m, &a)))
                .map_err(|e| describe(e, |a| format!("a = {a:?}"))),
            Law::Split => {
                let s = (vec(elems, 0..=self.max_len), 0.0..=1.0f64);
                self.runner()
                    .run(&s, |(xs, at)| {
                        let k = ((xs.len() as f64) * at).round() as usize;
                        holds(split(m, &xs, k))
                    })
                    .map_err(|e| {
                        describe(e, |(xs, at)| {
                            let k = ((xs.len() as f64) * at).round() as usize;
                            format!("xs = {xs:?}, k = {k}")
                        })
                    })
            }
        };
        outcome.map_err(|(counterexample, detail)| LawFailure {
            law,
            counterexample,
            detail,
        })
    }

    fn runner(&self) -> TestRunner {
        TestRunner::new(Config {
            cases: self.cases,
            failure_persistence: None,
            ..Config::default()
        })
    }
}

fn describe<V>(e: TestError<V>, show: impl Fn(&V) -> String) -> (String, String) {
    match e {
        TestError::Fail(reason, value) => (show(&value), reason.to_string()),
        TestError::Abort(reason) => ("(none)".to_string(), format!("aborted: {reason}")),
    }
}

/// Checks every law with exact equality and default settings; the first failure, if any.
pub fn check<M, S>(m: &M, elems: S) -> Result<(), LawFailure>
where
    M: Monoid,
    S: Strategy<Value = M::Elem> + Clone,
{
    Checker::new(m).check(elems)
}
