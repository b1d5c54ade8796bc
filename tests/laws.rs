//! Every built-in operator satisfies the monoid laws under `monoscan::laws`; operators that are
//! not monoids are rejected, with the failing laws named.

mod common;

use common::strategies::*;
use monoscan::laws::{self, Checker, Law, LawFailure};
use monoscan::ops::*;
use monoscan::{ApproxEq, CudaOp, Monoid, Tolerance};
use proptest::prelude::*;

/// The longest input of the split law (the checker's default, stated here because the
/// tolerances below depend on it).
const MAX_LEN: usize = 64;

/// Checks every law; `None` compares exactly (`PartialEq`), `Some` with [`ApproxEq`].
fn assert_monoid<M, S>(m: &M, elems: S, tol: Option<Tolerance>)
where
    M: Monoid,
    M::Elem: ApproxEq,
    S: Strategy<Value = M::Elem> + Clone,
{
    let checker = Checker::new(m).max_len(MAX_LEN);
    let checker = match tol {
        Some(tol) => checker.approx(tol),
        None => checker,
    };
    let failures = checker.check_all(elems);
    let report: Vec<String> = failures.iter().map(ToString::to_string).collect();
    assert!(failures.is_empty(), "{}", report.join("\n"));
}

// Tolerances. `u` is the unit roundoff, `EPSILON / 2`.

/// Products of at most 64 factors of magnitude in `[0.5, 2]` (see [`unit`]): no overflow or
/// underflow, so each side of a law is within `63 u` (relative) of the exact product and the two
/// sides within `126 u = 63 EPSILON` of each other.
const PRODUCT_F32: Tolerance = Tolerance::relative(MAX_LEN as f64 * f32::EPSILON as f64);
const PRODUCT_F64: Tolerance = Tolerance::relative(MAX_LEN as f64 * f64::EPSILON);

/// Sums of at most 64 values of magnitude at most 1000 (see [`modest`]): each side is within
/// `63 u * sum |x|` of the exact sum, whatever the order, so the sides are within
/// `64 EPSILON * 64 * 1000` of each other.
const SUM_F64_ROUNDED: Tolerance = Tolerance {
    rel: 0.0,
    abs: MAX_LEN as f64 * f64::EPSILON * (MAX_LEN as f64 * 1000.0),
};

/// Affine maps with `a` in `[-2, 2]`, `b` in `[-10, 10]`. The identity laws hold exactly. For
/// associativity each term of `b` (at most 40) passes through at most 6 roundings, so the sides
/// differ by less than `6 u * 70`: below `1e-13` in f64, `3e-5` in f32. For split, cancellation
/// in `b` (a result near 0 from terms near 10) rules out a purely relative bound, hence the
/// absolute part. Measured over 10^7 random split cases of up to 64 maps (the checker's
/// distribution): on top of `1e-12` relative, f64 never needed more than `2.8e-13` absolute; on
/// top of `1e-5` relative, f32 never needed more than `2.1e-3`, and more than `1e-3` twice. The
/// tail thins about tenfold per decade, which puts a spurious failure of a 256-case run at about
/// one in 10^6 runs (f64) and one in 10^5 (f32).
const AFFINE_F64: Tolerance = Tolerance {
    rel: 1e-12,
    abs: 1e-11,
};
const AFFINE_F32: Tolerance = Tolerance {
    rel: 1e-5,
    abs: 1e-2,
};

/// One `#[test]` per (operator, type), named `op::type`, for the eight integer types (arbitrary
/// elements, which wrap) and, given their strategies and tolerances, `f32` and `f64`.
macro_rules! scalar_laws {
    ($module:ident, $Op:ident $(, $f32:expr, $t32:expr, $f64:expr, $t64:expr)?) => {
        mod $module {
            use super::*;
            scalar_laws!(@ints $Op, [i8, u8, i16, u16, i32, u32, i64, u64]);
            $(
                #[test]
                fn f32() {
                    assert_monoid(&$Op::<f32>::new(), $f32, $t32);
                }
                #[test]
                fn f64() {
                    assert_monoid(&$Op::<f64>::new(), $f64, $t64);
                }
            )?
        }
    };
    (@ints $Op:ident, [$($t:ident),*]) => {$(
        #[test]
        fn $t() {
            assert_monoid(&$Op::<$t>::new(), any::<$t>(), None);
        }
    )*};
}

/// Exact comparison that holds NaN equal to NaN (`PartialEq` does not): for float laws over
/// [`with_specials`] values (NaN, both infinities, both zeros), whose two sides must both be
/// NaN where one is.
const EXACT: Option<Tolerance> = Some(Tolerance::EXACT);

// Every float law test mixes NaN, both infinities and both zeros into its values (Affine only
// the zeros: see its documentation). Dyadic sums are exact (see `DYADIC_K`), so float sums
// compare exactly.
scalar_laws! {
    sum, Sum, with_specials(dyadic::<f32>()), EXACT, with_specials(dyadic::<f64>()), EXACT
}
scalar_laws! {
    product, Product, with_specials(unit::<f32>()), Some(PRODUCT_F32),
    with_specials(unit::<f64>()), Some(PRODUCT_F64)
}
scalar_laws! {
    min, Min, with_specials(finite::<f32>()), EXACT, with_specials(finite::<f64>()), EXACT
}
scalar_laws! {
    max, Max, with_specials(finite::<f32>()), EXACT, with_specials(finite::<f64>()), EXACT
}
scalar_laws! { bitand, BitAnd }
scalar_laws! { bitor, BitOr }
scalar_laws! { bitxor, BitXor }

/// One `#[test]` per line: `name: operator, elements, tolerance;`.
macro_rules! laws {
    ($($name:ident: $op:expr, $elems:expr, $tol:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_monoid(&$op, $elems, $tol);
        }
    )*};
}

/// [`affine`] maps whose coefficients are sometimes `+0.0` or `-0.0`.
fn affine_zeros<T: TestFloat>() -> impl Strategy<Value = AffineMap<T>> + Clone {
    (
        with_zeros(affine::<T>().prop_map(|m| m.a)),
        with_zeros(affine::<T>().prop_map(|m| m.b)),
    )
        .prop_map(|(a, b)| AffineMap::new(a, b))
}

fn mod_7() -> MatMulMod {
    MatMulMod::new(7).unwrap()
}

laws! {
    sum_f64_rounded: Sum::<f64>::new(), with_specials(modest::<f64>()), Some(SUM_F64_ROUNDED);
    argmin_i32: ArgMin::<i32>::new(), indexed(small_i32()), None;
    argmin_f32: ArgMin::<f32>::new(), indexed(with_specials(small_float::<f32>())), EXACT;
    argmin_f64: ArgMin::<f64>::new(), indexed(with_specials(small_float::<f64>())), EXACT;
    argmax_i32: ArgMax::<i32>::new(), indexed(small_i32()), None;
    argmax_f32: ArgMax::<f32>::new(), indexed(with_specials(small_float::<f32>())), EXACT;
    argmax_f64: ArgMax::<f64>::new(), indexed(with_specials(small_float::<f64>())), EXACT;
    minmax_i64: MinMax::<i64>::new(), minmax_pair(prop_oneof![any::<i64>(), small_i64()]), None;
    minmax_f32: MinMax::<f32>::new(), minmax_pair(with_specials(finite::<f32>())), EXACT;
    minmax_f64: MinMax::<f64>::new(), minmax_pair(with_specials(finite::<f64>())), EXACT;
    affine_f32: Affine::<f32>::new(), affine_zeros::<f32>(), Some(AFFINE_F32);
    affine_f64: Affine::<f64>::new(), affine_zeros::<f64>(), Some(AFFINE_F64);
    affine_exact_f32: Affine::<f32>::new(), affine_exact::<f32>(), None;
    matmul_default_prime: MatMulMod::default(), mat2(MatMulMod::default()), None;
    matmul_mod_7: mod_7(), mat2(mod_7()), None;
    segmented_sum_i32: Segmented::new(Sum::<i32>::new()), flagged(any::<i32>()), None;
    segmented_affine_f64:
        Segmented::new(Affine::<f64>::new()), flagged(affine::<f64>()), Some(AFFINE_F64);
    segmented_matmul_default_prime:
        Segmented::new(MatMulMod::default()), flagged(mat2(MatMulMod::default())), None;
    segmented_matmul_mod_7: Segmented::new(mod_7()), flagged(mat2(mod_7())), None;
    segmented_segmented_sum_i64:
        Segmented::new(Segmented::new(Sum::<i64>::new())), flagged(flagged(any::<i64>())), None;
}

// ---------------------------------------------------------------------------------------------
// Operators that are not monoids.

/// `a - b` (wrapping) with identity 0: not associative, and 0 is only a right identity.
struct Sub;

impl Monoid for Sub {
    type Elem = i64;
    fn identity(&self) -> i64 {
        0
    }
    fn combine(&self, a: &i64, b: &i64) -> i64 {
        a.wrapping_sub(*b)
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<i64>("sub")
            .identity("0")
            .combine_expr("(long long)((unsigned long long)a - (unsigned long long)b)")
    }
}

/// `(a + b) / 2` with identity 0: commutative but not associative, and 0 is no identity.
struct Average;

impl Monoid for Average {
    type Elem = f64;
    fn identity(&self) -> f64 {
        0.0
    }
    fn combine(&self, a: &f64, b: &f64) -> f64 {
        (a + b) / 2.0
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<f64>("average")
            .identity("0.0")
            .combine_expr("(a + b) / 2.0")
    }
}

/// Wrapping `a + b`, associative, but with the wrong identity 1.
struct OffByOne;

impl Monoid for OffByOne {
    type Elem = i64;
    fn identity(&self) -> i64 {
        1
    }
    fn combine(&self, a: &i64, b: &i64) -> i64 {
        a.wrapping_add(*b)
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<i64>("off_by_one")
            .identity("1")
            .combine_expr("(long long)((unsigned long long)a + (unsigned long long)b)")
    }
}

/// Asserts that exactly `expected` failed (in [`Law::ALL`] order) and that every failure
/// explains itself: the law's name and equation, a counterexample, both sides.
fn assert_rejected(failures: &[LawFailure], expected: &[Law]) {
    let failed: Vec<Law> = failures.iter().map(|f| f.law).collect();
    assert_eq!(failed, expected, "failures: {failures:#?}");
    for f in failures {
        let text = f.to_string();
        assert!(text.contains(&format!("`{}`", f.law)), "{text}");
        assert!(text.contains(f.law.equation()), "{text}");
        assert!(f.counterexample.contains("= "), "{text}");
        assert!(text.contains(&f.counterexample), "{text}");
        assert!(
            f.detail.contains("left side") && f.detail.contains("right side"),
            "{text}"
        );
    }
}

/// The `i64` after `name = ` in a counterexample such as `a = 1, b = 0, c = -3`.
fn value_of(counterexample: &str, name: &str) -> i64 {
    let start = counterexample
        .find(&format!("{name} = "))
        .expect(counterexample)
        + name.len()
        + 3;
    let rest = &counterexample[start..];
    let end = rest.find(',').unwrap_or(rest.len());
    rest[..end].trim().parse().expect(counterexample)
}

#[test]
fn rejects_subtraction() {
    let failures = Checker::new(&Sub).check_all(any::<i64>());
    assert_rejected(
        &failures,
        &[Law::Associativity, Law::LeftIdentity, Law::Split],
    );
    assert!(failures[0].to_string().contains("associativity"));
    assert!(failures[1].to_string().contains("left identity"));
    // The counterexamples are real ones.
    let ce = &failures[0].counterexample;
    let (a, b, c) = (value_of(ce, "a"), value_of(ce, "b"), value_of(ce, "c"));
    let (l, r) = laws::associativity(&Sub, &a, &b, &c);
    assert_ne!(l, r, "{ce}");
    let a = value_of(&failures[1].counterexample, "a");
    assert_ne!(Sub.combine(&0, &a), a);
    // `check` reports the first failing law.
    assert_eq!(
        laws::check(&Sub, any::<i64>()).unwrap_err().law,
        Law::Associativity
    );
}

#[test]
fn rejects_averaging() {
    // Even a loose approximate comparison rejects it: each law is off by a factor of 2 or so.
    let failures = Checker::new(&Average)
        .approx(Tolerance::relative(1e-6))
        .check_all(dyadic::<f64>());
    assert_rejected(&failures, &Law::ALL);
    assert!(failures[2].to_string().contains("right identity"));
    assert!(failures[3].to_string().contains("split"));
}

#[test]
fn rejects_wrong_identity() {
    let failures = Checker::new(&OffByOne).check_all(any::<i64>());
    assert_rejected(
        &failures,
        &[Law::LeftIdentity, Law::RightIdentity, Law::Split],
    );
    let a = value_of(&failures[0].counterexample, "a");
    assert_ne!(OffByOne.combine(&OffByOne.identity(), &a), a);
    // The associative part alone passes.
    assert!(Checker::new(&OffByOne)
        .check_law(Law::Associativity, any::<i64>())
        .is_ok());
}

#[test]
fn rejection_operators_have_device_code() {
    for op in [Sub.cuda(), OffByOne.cuda(), Average.cuda()] {
        assert!(!op.identity.is_empty() && op.combine.starts_with("return ("));
        assert_eq!((op.elem_size, op.elem_align), (8, 8));
    }
}

#[test]
fn pure_law_functions() {
    let sum = Sum::<i64>::new();
    assert_eq!(laws::associativity(&sum, &5, &-3, &7), (9, 9));
    assert_eq!(laws::left_identity(&sum, &5), (5, 5));
    assert_eq!(laws::right_identity(&sum, &5), (5, 5));
    let xs = [10, 3, 2, 8];
    for k in 0..=xs.len() + 1 {
        assert_eq!(laws::split(&sum, &xs, k), (23, 23), "k = {k}");
    }

    // (10 - 3) - 2 = 5, 10 - (3 - 2) = 9.
    assert_eq!(laws::associativity(&Sub, &10, &3, &2), (5, 9));
    assert_eq!(laws::left_identity(&Sub, &5), (-5, 5));
    assert_eq!(laws::right_identity(&Sub, &5), (5, 5));
    // Folds start from the identity: fold([10, 3, 2]) = 0 - 10 - 3 - 2 = -15, and at k = 1,
    // fold([10]) - fold([3, 2]) = -10 - (-5) = -5.
    assert_eq!(laws::split(&Sub, &[10, 3, 2], 1), (-15, -5));
    assert_eq!(laws::split(&Sub, &[10, 3, 2], 0), (-15, 15));
    assert_eq!(laws::split(&Sub, &[10, 3, 2], 3), (-15, -15));

    // A non-commutative monoid: equal sides, though the order matters.
    let m = mod_7();
    let (a, b, c) = (
        Mat2::new([1, 2, 3, 4]),
        Mat2::new([0, 1, 1, 0]),
        Mat2::new([2, 0, 5, 1]),
    );
    let (l, r) = laws::associativity(&m, &a, &b, &c);
    assert_eq!(l, r);
    assert_ne!(l, laws::associativity(&m, &b, &a, &c).0);
    assert_eq!(laws::split(&m, &[a, b, c], 2), (l, l));
}
