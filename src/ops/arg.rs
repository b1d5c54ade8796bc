//! `argmin` and `argmax`: the extreme value and where it occurs, ties to the lowest index.
//!
//! Floats are ordered as [`super::Min`] and [`super::Max`] treat them: NaN loses to every
//! number (it is chosen only among NaNs), and equal values (`-0.0 == +0.0`, and any two NaNs)
//! tie. With the lowest index breaking ties this is a total order on (value, index), so the
//! operators are associative on every input. A plain `<` is not, once NaNs appear: algorithms
//! that group the combines differently would then disagree. The float identity is NaN with
//! index `u64::MAX` (`MAX` or `MIN` with it for integers): every element beats it.

use super::scalar::Scalar;
use crate::element::{guarded_definition, ident_fragment, CudaInit, Element};
use crate::layout::{FieldLayout, Layout};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use std::marker::PhantomData;

/// A value and its position in the input.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Indexed<T> {
    /// The value.
    pub value: T,
    /// Its index in the input (`u64::MAX` in the identity).
    pub index: u64,
}

impl<T> Indexed<T> {
    /// Pairs `value` with `index`.
    pub fn new(value: T, index: u64) -> Self {
        Indexed { value, index }
    }
}

// SAFETY: `#[repr(C)]` of `T` (itself `DeviceRepr`) and `u64`, matching the C++ struct that
// `cuda_definition` declares.
unsafe impl<T: DeviceRepr> DeviceRepr for Indexed<T> {}

// SAFETY: all-zero bits are a valid `Indexed<T>` wherever they are a valid `T` (the other fields
// are integers).
unsafe impl<T: ValidAsZeroBits> ValidAsZeroBits for Indexed<T> {}

// SAFETY: the definition declares the same two fields, in the same order, with the C++ types
// of `T` and `u64`.
unsafe impl<T: Scalar> Element for Indexed<T> {
    fn cuda_name() -> String {
        format!("monoscan_indexed_{}", ident_fragment(&T::cuda_name()))
    }
    fn cuda_definition() -> String {
        let name = Self::cuda_name();
        let body = format!(
            "struct {name} {{ {} value; unsigned long long index; }};",
            T::cuda_name()
        );
        guarded_definition(&name, &body)
    }
    fn cuda_layout() -> Layout {
        Layout::structure::<Self>(vec![
            FieldLayout::new::<T>("value", "value", std::mem::offset_of!(Self, value), &[]),
            FieldLayout::new::<u64>("index", "index", std::mem::offset_of!(Self, index), &[]),
        ])
    }
    fn cuda_literal(&self) -> Option<String> {
        Some(format!(
            "{}{{{}, {}}}",
            Self::cuda_name(),
            self.value.cuda_init()?,
            self.index.cuda_init()?
        ))
    }
}

macro_rules! arg_op {
    ($(#[$doc:meta])* $name:ident, $short:literal, $id:ident, $cmp:tt, $op:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name<T>(PhantomData<T>);

        impl<T> $name<T> {
            /// The operator (it has no parameters).
            pub const fn new() -> Self {
                $name(PhantomData)
            }
        }

        impl<T> Default for $name<T> {
            fn default() -> Self {
                Self::new()
            }
        }

        impl<T: Scalar> Monoid for $name<T> {
            type Elem = Indexed<T>;
            fn identity(&self) -> Indexed<T> {
                Indexed::new(T::$id(), u64::MAX)
            }
            fn combine(&self, a: &Indexed<T>, b: &Indexed<T>) -> Indexed<T> {
                let wins = match (a.value.is_nan(), b.value.is_nan()) {
                    (false, false) => {
                        b.value $cmp a.value || (b.value == a.value && b.index < a.index)
                    }
                    // A number beats NaN; among NaNs the lowest index wins.
                    (true, false) => true,
                    (false, true) => false,
                    (true, true) => b.index < a.index,
                };
                if wins {
                    *b
                } else {
                    *a
                }
            }
            fn cuda(&self) -> CudaOp {
                let elem = Indexed::<T>::cuda_name();
                // `x != x` only for NaN (NVRTC runs without fast-math); for integers the
                // compiler folds the tests away.
                CudaOp::new::<Indexed<T>>(format!(concat!($short, "_{}"), T::RUST_NAME))
                    .identity(format!("{elem}{{{}, 0xffffffffffffffffULL}}", T::$id().literal()))
                    .combine_expr(concat!(
                        "((b.value == b.value) ? ((a.value != a.value) || b.value ", $op,
                        " a.value || (b.value == a.value && b.index < a.index)) ",
                        ": ((a.value != a.value) && b.index < a.index)) ? b : a"
                    ))
            }
        }
    };
}

arg_op!(
    /// The smallest value and its index; among equal values the lowest index wins. For floats
    /// NaN loses to every number (as [`super::Min`] ignores it) and `-0.0` ties with `+0.0`.
    /// Identity: (`MAX`, `u64::MAX`), or (NaN, `u64::MAX`) for floats.
    ///
    /// ```
    /// use monoscan::{ops::{ArgMin, Indexed}, Backend, cpu::Sequential};
    /// let xs = [Indexed::new(3, 0), Indexed::new(1, 1), Indexed::new(1, 2)];
    /// let m = Sequential.reduce(&ArgMin::<i32>::new(), &xs).unwrap();
    /// assert_eq!(m, Indexed::new(1, 1));
    /// let fs = [Indexed::new(f64::NAN, 0), Indexed::new(2.0, 1), Indexed::new(f64::NAN, 2)];
    /// assert_eq!(Sequential.reduce(&ArgMin::<f64>::new(), &fs).unwrap(), fs[1]);
    /// ```
    ArgMin, "argmin", min_identity, <, "<"
);
arg_op!(
    /// The largest value and its index; among equal values the lowest index wins. For floats
    /// NaN loses to every number (as [`super::Max`] ignores it) and `-0.0` ties with `+0.0`.
    /// Identity: (`MIN`, `u64::MAX`), or (NaN, `u64::MAX`) for floats.
    ArgMax, "argmax", max_identity, >, ">"
);
