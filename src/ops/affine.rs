//! Affine maps `x -> a*x + b` under composition: linear recurrences and Horner's rule.

use super::scalar::Float;
use crate::element::{guarded_definition, ident_fragment, CudaInit, Element};
use crate::layout::{FieldLayout, Layout};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use std::marker::PhantomData;

/// The map `x -> a*x + b`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct AffineMap<T> {
    /// The slope.
    pub a: T,
    /// The offset.
    pub b: T,
}

impl<T: Float> AffineMap<T> {
    /// The map `x -> a*x + b`.
    pub fn new(a: T, b: T) -> Self {
        AffineMap { a, b }
    }

    /// `a*x + b`, rounded as two operations (no fused multiply-add), like the device code.
    pub fn apply(&self, x: T) -> T {
        self.a.mul(x).add(self.b)
    }
}

// SAFETY: `#[repr(C)]` of two `T`, matching the C++ struct of `cuda_definition`.
unsafe impl<T: DeviceRepr> DeviceRepr for AffineMap<T> {}

// SAFETY: all-zero bits are a valid `AffineMap<T>` wherever they are a valid `T` (both fields are
// `T`s).
unsafe impl<T: ValidAsZeroBits> ValidAsZeroBits for AffineMap<T> {}

// SAFETY: the definition declares `a` then `b`, both of `T`'s C++ type.
unsafe impl<T: Float> Element for AffineMap<T> {
    fn cuda_name() -> String {
        format!("monoscan_affine_{}", ident_fragment(&T::cuda_name()))
    }
    fn cuda_definition() -> String {
        let name = Self::cuda_name();
        let t = T::cuda_name();
        guarded_definition(&name, &format!("struct {name} {{ {t} a; {t} b; }};"))
    }
    fn cuda_layout() -> Layout {
        Layout::structure::<Self>(vec![
            FieldLayout::new::<T>("a", "a", std::mem::offset_of!(Self, a), &[]),
            FieldLayout::new::<T>("b", "b", std::mem::offset_of!(Self, b), &[]),
        ])
    }
    fn cuda_literal(&self) -> Option<String> {
        Some(format!(
            "{}{{{}, {}}}",
            Self::cuda_name(),
            self.a.cuda_init()?,
            self.b.cuda_init()?
        ))
    }
}

/// Composition of affine maps in sequence order: `combine(f, g)` is "apply `f`, then `g`",
/// `x -> g.a*(f.a*x + f.b) + g.b = (f.a*g.a)*x + (g.a*f.b + g.b)`. Identity `(1, 0)`.
///
/// Not commutative. An inclusive scan of `(a_t, b_t)` applied to `x_0` gives every state of the
/// recurrence `x_t = a_t*x_(t-1) + b_t`; a reduce of `(x, c_k)` for `k = n..0` applied to `0`
/// is Horner's rule for `sum c_k x^k`.
///
/// Products and sums are rounded separately on the host and on the device (no fused
/// multiply-add), so one combine gives the same bits on both; scans still differ from a
/// sequential fold by rounding, since they group operations differently.
///
/// Coefficients must be finite for the monoid laws to hold: with a NaN or an infinite `a`,
/// `combine((1, 0), (a, b))` is `(a, a*0 + b) = (a, NaN)`, not `(a, b)`, and results then
/// depend on how an algorithm groups the maps.
///
/// ```
/// use monoscan::{ops::{Affine, AffineMap}, Backend, cpu::Sequential};
/// // Horner for 2x^2 + 3x + 4 at x = 10.
/// let x = 10.0;
/// let maps = [AffineMap::new(x, 2.0), AffineMap::new(x, 3.0), AffineMap::new(x, 4.0)];
/// let total = Sequential.reduce(&Affine::<f64>::new(), &maps).unwrap();
/// assert_eq!(total.apply(0.0), 234.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Affine<T>(PhantomData<T>);

impl<T> Affine<T> {
    /// The operator (it has no parameters).
    pub const fn new() -> Self {
        Affine(PhantomData)
    }
}

impl<T> Default for Affine<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Float> Monoid for Affine<T> {
    type Elem = AffineMap<T>;
    fn identity(&self) -> AffineMap<T> {
        AffineMap::new(T::one(), T::zero())
    }
    fn combine(&self, f: &AffineMap<T>, g: &AffineMap<T>) -> AffineMap<T> {
        AffineMap::new(f.a.mul(g.a), g.a.mul(f.b).add(g.b))
    }
    fn cuda(&self) -> CudaOp {
        let elem = AffineMap::<T>::cuda_name();
        let a = T::cuda_mul_rn("a.a", "b.a");
        let b = T::cuda_add_rn(&T::cuda_mul_rn("b.a", "a.b"), "b.b");
        CudaOp::new::<AffineMap<T>>(format!("affine_{}", T::RUST_NAME))
            .identity(format!(
                "{elem}{{{}, {}}}",
                T::one().literal(),
                T::zero().literal()
            ))
            .combine_expr(format!("{elem}{{{a}, {b}}}"))
    }
}
