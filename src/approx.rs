//! Approximate equality for element types, for comparing float results computed in different
//! orders.
//!
//! Integers (and every exact operator's elements) compare exactly; floats compare within
//! `abs + rel * max(|x|, |y|)`. A scan of `n` floats regrouped by a parallel algorithm differs
//! from the sequential fold by at most about `n * eps * sum |x_i|`, so tests pass that bound as
//! `abs`.

use crate::ops::{AffineMap, Flagged, Indexed, Mat2, MinMaxPair};

/// How close two floats must be: `|x - y| <= abs + rel * max(|x|, |y|)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative part.
    pub rel: f64,
    /// Absolute part.
    pub abs: f64,
}

impl Tolerance {
    /// Exact equality.
    pub const EXACT: Tolerance = Tolerance { rel: 0.0, abs: 0.0 };

    /// A relative tolerance only.
    pub const fn relative(rel: f64) -> Self {
        Tolerance { rel, abs: 0.0 }
    }

    /// Whether `x` and `y` are within the tolerance (NaN equals NaN; infinities must match).
    pub fn close(&self, x: f64, y: f64) -> bool {
        if x == y || (x.is_nan() && y.is_nan()) {
            return true;
        }
        if !x.is_finite() || !y.is_finite() {
            return false;
        }
        (x - y).abs() <= self.abs + self.rel * x.abs().max(y.abs())
    }
}

/// Equality up to a [`Tolerance`] on the float parts of a value.
///
/// ```
/// use monoscan::{ApproxEq, Tolerance};
/// assert!(1.0f64.approx_eq(&(1.0 + 1e-12), Tolerance::relative(1e-9)));
/// assert!(!3i32.approx_eq(&4, Tolerance::relative(0.5))); // integers are exact
/// ```
pub trait ApproxEq {
    /// Whether `self` and `other` are equal up to `tol`.
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool;
}

macro_rules! exact {
    ($($t:ty),*) => {$(
        impl ApproxEq for $t {
            fn approx_eq(&self, other: &Self, _: Tolerance) -> bool { self == other }
        }
    )*};
}
exact!(i8, u8, i16, u16, i32, u32, i64, u64, Mat2);

impl ApproxEq for f32 {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        tol.close(f64::from(*self), f64::from(*other))
    }
}

impl ApproxEq for f64 {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        tol.close(*self, *other)
    }
}

impl<T: ApproxEq> ApproxEq for Indexed<T> {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.index == other.index && self.value.approx_eq(&other.value, tol)
    }
}

impl<T: ApproxEq> ApproxEq for MinMaxPair<T> {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.min.approx_eq(&other.min, tol) && self.max.approx_eq(&other.max, tol)
    }
}

impl<T: ApproxEq> ApproxEq for AffineMap<T> {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.a.approx_eq(&other.a, tol) && self.b.approx_eq(&other.b, tol)
    }
}

impl<T: ApproxEq> ApproxEq for Flagged<T> {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.flag == other.flag && self.value.approx_eq(&other.value, tol)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_bounds() {
        let t = Tolerance {
            rel: 1e-6,
            abs: 1e-3,
        };
        assert!(t.close(0.0, 0.0009));
        assert!(!t.close(0.0, 0.002));
        assert!(t.close(1e9, 1e9 + 100.0));
        assert!(!t.close(f64::INFINITY, 1e308));
        assert!(t.close(f64::NAN, f64::NAN));
    }
}
