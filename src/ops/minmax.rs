//! `(min, max)` in one pass.

use super::scalar::Scalar;
use crate::element::{guarded_definition, ident_fragment, CudaInit, Element};
use crate::layout::{FieldLayout, Layout};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use std::marker::PhantomData;

/// The least and greatest values of a range.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MinMaxPair<T> {
    /// The least value.
    pub min: T,
    /// The greatest value.
    pub max: T,
}

impl<T: Copy> MinMaxPair<T> {
    /// The pair for a single value: `(x, x)`.
    pub fn of(x: T) -> Self {
        MinMaxPair { min: x, max: x }
    }
}

// SAFETY: `#[repr(C)]` of two `T`, matching the C++ struct of `cuda_definition`.
unsafe impl<T: DeviceRepr> DeviceRepr for MinMaxPair<T> {}

// SAFETY: all-zero bits are a valid `MinMaxPair<T>` wherever they are a valid `T` (both fields are
// `T`s).
unsafe impl<T: ValidAsZeroBits> ValidAsZeroBits for MinMaxPair<T> {}

// SAFETY: the definition declares two fields of `T`'s C++ type, in the Rust order.
unsafe impl<T: Scalar> Element for MinMaxPair<T> {
    fn cuda_name() -> String {
        format!("monoscan_minmax_{}", ident_fragment(&T::cuda_name()))
    }
    fn cuda_definition() -> String {
        let name = Self::cuda_name();
        let t = T::cuda_name();
        guarded_definition(&name, &format!("struct {name} {{ {t} min; {t} max; }};"))
    }
    fn cuda_layout() -> Layout {
        Layout::structure::<Self>(vec![
            FieldLayout::new::<T>("min", "min", std::mem::offset_of!(Self, min), &[]),
            FieldLayout::new::<T>("max", "max", std::mem::offset_of!(Self, max), &[]),
        ])
    }
    fn cuda_literal(&self) -> Option<String> {
        Some(format!(
            "{}{{{}, {}}}",
            Self::cuda_name(),
            self.min.cuda_init()?,
            self.max.cuda_init()?
        ))
    }
}

/// `(min, max)` of a range; identity (`MAX`, `MIN`), or (NaN, NaN) for floats, whose `min`
/// and `max` ignore NaN operands (see [`super::Min`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MinMax<T>(PhantomData<T>);

impl<T> MinMax<T> {
    /// The operator (it has no parameters).
    pub const fn new() -> Self {
        MinMax(PhantomData)
    }
}

impl<T> Default for MinMax<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Scalar> Monoid for MinMax<T> {
    type Elem = MinMaxPair<T>;
    fn identity(&self) -> MinMaxPair<T> {
        MinMaxPair {
            min: T::min_identity(),
            max: T::max_identity(),
        }
    }
    fn combine(&self, a: &MinMaxPair<T>, b: &MinMaxPair<T>) -> MinMaxPair<T> {
        MinMaxPair {
            min: a.min.min_of(b.min),
            max: a.max.max_of(b.max),
        }
    }
    fn cuda(&self) -> CudaOp {
        let elem = MinMaxPair::<T>::cuda_name();
        let min = T::cuda_min("a.min", "b.min");
        let max = T::cuda_max("a.max", "b.max");
        CudaOp::new::<MinMaxPair<T>>(format!("minmax_{}", T::RUST_NAME))
            .identity(format!(
                "{elem}{{{}, {}}}",
                T::min_identity().literal(),
                T::max_identity().literal()
            ))
            .combine_expr(format!("{elem}{{{min}, {max}}}"))
    }
}
