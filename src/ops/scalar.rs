//! The primitive numbers the built-in operators are generic over.

use crate::element::Element;
use crate::literal;

mod sealed {
    pub trait Sealed {}
}

/// A primitive integer or float: the element type of [`super::Sum`], [`super::Min`] and the
/// other numeric operators.
///
/// Integer arithmetic wraps (two's complement), on the host and on the device alike. Float
/// `min`/`max` follow IEEE 754 `minNum`/`maxNum` (a NaN operand is ignored), as Rust's
/// `f32::min` and CUDA's `fminf` do; NaN is therefore their identity ([`Scalar::min_identity`]),
/// the one value that leaves every operand, NaN included, unchanged.
pub trait Scalar: Element + PartialOrd + sealed::Sealed + serde::Serialize {
    /// The Rust name (`i32`), used in operator names.
    const RUST_NAME: &'static str;
    /// Whether the type is `f32` or `f64`.
    const IS_FLOAT: bool;
    /// `0`.
    fn zero() -> Self;
    /// `1`.
    fn one() -> Self;
    /// The least value (`MIN`, or `-inf` for floats).
    fn lowest() -> Self;
    /// The greatest value (`MAX`, or `+inf`).
    fn highest() -> Self;
    /// The identity of [`Scalar::min_of`]: `MAX`, or NaN for floats (`+inf` is no identity
    /// there: `minNum(+inf, NaN)` is `+inf`, not NaN).
    fn min_identity() -> Self;
    /// The identity of [`Scalar::max_of`]: `MIN`, or NaN for floats.
    fn max_identity() -> Self;
    /// Whether the value is a NaN (never, for integers).
    fn is_nan(self) -> bool;
    /// `a + b`, wrapping for integers.
    fn add(self, other: Self) -> Self;
    /// `a * b`, wrapping for integers.
    fn mul(self, other: Self) -> Self;
    /// The smaller of two values (`minNum` for floats).
    fn min_of(self, other: Self) -> Self;
    /// The larger of two values (`maxNum` for floats).
    fn max_of(self, other: Self) -> Self;
    /// The value as a C++ constant expression of [`Element::cuda_name`]'s type.
    fn literal(self) -> String;
    /// `i` converted exactly, or `None` when the type cannot hold it (floats accept any `i`
    /// and round).
    fn from_u64(i: u64) -> Option<Self>;
    /// The value as `f64` (for tolerances and reports).
    fn to_f64(self) -> f64;
    /// C++ spelling of `x + y` with the host's semantics.
    fn cuda_add(x: &str, y: &str) -> String;
    /// C++ spelling of `x * y` with the host's semantics.
    fn cuda_mul(x: &str, y: &str) -> String;
    /// C++ spelling of `min(x, y)` with the host's semantics.
    fn cuda_min(x: &str, y: &str) -> String;
    /// C++ spelling of `max(x, y)` with the host's semantics.
    fn cuda_max(x: &str, y: &str) -> String;
}

/// A primitive integer: the element type of the bitwise operators.
pub trait Integer: Scalar {
    /// `a & b`.
    fn and(self, other: Self) -> Self;
    /// `a | b`.
    fn or(self, other: Self) -> Self;
    /// `a ^ b`.
    fn xor(self, other: Self) -> Self;
    /// All bits set: the identity of `&`.
    fn all_ones() -> Self;
}

/// `f32` or `f64`: the element type of [`super::Affine`].
pub trait Float: Scalar {
    /// C++ spelling of `x * y` rounded to nearest, never contracted into an FMA (so that the
    /// device computes what the host computes).
    fn cuda_mul_rn(x: &str, y: &str) -> String;
    /// C++ spelling of `x + y` rounded to nearest, never contracted.
    fn cuda_add_rn(x: &str, y: &str) -> String;
}

macro_rules! int_scalar {
    ($($t:ty, $wide:literal, $lit:ident, $as:ty);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const RUST_NAME: &'static str = stringify!($t);
            const IS_FLOAT: bool = false;
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn lowest() -> Self { <$t>::MIN }
            fn highest() -> Self { <$t>::MAX }
            fn min_identity() -> Self { <$t>::MAX }
            fn max_identity() -> Self { <$t>::MIN }
            fn is_nan(self) -> bool { false }
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
            fn min_of(self, other: Self) -> Self { if other < self { other } else { self } }
            fn max_of(self, other: Self) -> Self { if other > self { other } else { self } }
            fn literal(self) -> String { literal::$lit(&<$t>::cuda_name(), self as $as) }
            fn from_u64(i: u64) -> Option<Self> { <$t>::try_from(i).ok() }
            fn to_f64(self) -> f64 { self as f64 }
            fn cuda_add(x: &str, y: &str) -> String {
                format!("({})(({w})({x}) + ({w})({y}))", <$t>::cuda_name(), w = $wide)
            }
            fn cuda_mul(x: &str, y: &str) -> String {
                format!("({})(({w})({x}) * ({w})({y}))", <$t>::cuda_name(), w = $wide)
            }
            fn cuda_min(x: &str, y: &str) -> String { format!("(({y}) < ({x}) ? ({y}) : ({x}))") }
            fn cuda_max(x: &str, y: &str) -> String { format!("(({y}) > ({x}) ? ({y}) : ({x}))") }
        }
        impl Integer for $t {
            fn and(self, other: Self) -> Self { self & other }
            fn or(self, other: Self) -> Self { self | other }
            fn xor(self, other: Self) -> Self { self ^ other }
            fn all_ones() -> Self { !0 }
        }
    )*};
}

// The wide type is unsigned so that overflow wraps instead of being undefined behaviour, and at
// least `unsigned int` so that integer promotion of 8- and 16-bit operands cannot overflow a
// signed `int` either.
int_scalar! {
    i8, "unsigned int", signed, i64;
    u8, "unsigned int", unsigned, u64;
    i16, "unsigned int", signed, i64;
    u16, "unsigned int", unsigned, u64;
    i32, "unsigned int", signed, i64;
    u32, "unsigned int", unsigned, u64;
    i64, "unsigned long long", signed, i64;
    u64, "unsigned long long", unsigned, u64;
}

macro_rules! float_scalar {
    ($($t:ty, $lit:ident, $min:literal, $max:literal, $mul:literal, $add:literal);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const RUST_NAME: &'static str = stringify!($t);
            const IS_FLOAT: bool = true;
            fn zero() -> Self { 0.0 }
            fn one() -> Self { 1.0 }
            fn lowest() -> Self { <$t>::NEG_INFINITY }
            fn highest() -> Self { <$t>::INFINITY }
            fn min_identity() -> Self { <$t>::NAN }
            fn max_identity() -> Self { <$t>::NAN }
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            fn add(self, other: Self) -> Self { self + other }
            fn mul(self, other: Self) -> Self { self * other }
            fn min_of(self, other: Self) -> Self { self.min(other) }
            fn max_of(self, other: Self) -> Self { self.max(other) }
            fn literal(self) -> String { literal::$lit(self) }
            fn from_u64(i: u64) -> Option<Self> { Some(i as $t) }
            fn to_f64(self) -> f64 { self as f64 }
            fn cuda_add(x: &str, y: &str) -> String { format!("(({x}) + ({y}))") }
            fn cuda_mul(x: &str, y: &str) -> String { format!("(({x}) * ({y}))") }
            fn cuda_min(x: &str, y: &str) -> String { format!(concat!($min, "({}, {})"), x, y) }
            fn cuda_max(x: &str, y: &str) -> String { format!(concat!($max, "({}, {})"), x, y) }
        }
        impl Float for $t {
            fn cuda_mul_rn(x: &str, y: &str) -> String { format!(concat!($mul, "({}, {})"), x, y) }
            fn cuda_add_rn(x: &str, y: &str) -> String { format!(concat!($add, "({}, {})"), x, y) }
        }
    )*};
}

float_scalar! {
    f32, f32, "fminf", "fmaxf", "__fmul_rn", "__fadd_rn";
    f64, f64, "fmin", "fmax", "__dmul_rn", "__dadd_rn";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_semantics_wrap() {
        assert_eq!(i8::MAX.add(1), i8::MIN);
        assert_eq!(200u8.mul(2), 144);
        assert_eq!(
            i64::MIN.literal(),
            "((long long)(-9223372036854775807LL - 1LL))"
        );
        assert_eq!(u8::from_u64(256), None);
        assert_eq!(u8::from_u64(255), Some(255));
    }

    #[test]
    fn float_min_ignores_nan() {
        assert_eq!(f32::NAN.min_of(1.0), 1.0);
        assert_eq!(2.0f64.max_of(f64::NAN), 2.0);
    }

    #[test]
    fn min_and_max_identities_leave_every_value() {
        for x in [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            1.5,
            f32::MAX,
        ] {
            let same = |y: f32| y == x || (y.is_nan() && x.is_nan());
            assert!(same(f32::min_identity().min_of(x)), "{x}");
            assert!(same(x.min_of(f32::min_identity())), "{x}");
            assert!(same(f32::max_identity().max_of(x)), "{x}");
            assert!(same(x.max_of(f32::max_identity())), "{x}");
        }
        assert_eq!(i8::MAX.min_of(i8::min_identity()), i8::MAX);
        assert_eq!(u16::min_identity(), u16::MAX);
        assert_eq!(i64::max_identity(), i64::MIN);
    }
}
