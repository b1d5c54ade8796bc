//! `argmin` and `argmax`: the extreme value and where it occurs, ties to the lowest index.

use super::scalar::Scalar;
use crate::element::{guarded_definition, ident_fragment, Element};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::DeviceRepr;
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
}

macro_rules! arg_op {
    ($(#[$doc:meta])* $name:ident, $short:literal, $id:ident, $cmp:tt) => {
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
                if b.value $cmp a.value || (b.value == a.value && b.index < a.index) {
                    *b
                } else {
                    *a
                }
            }
            fn cuda(&self) -> CudaOp {
                let elem = Indexed::<T>::cuda_name();
                CudaOp::new::<Indexed<T>>(format!(concat!($short, "_{}"), T::RUST_NAME))
                    .identity(format!("{elem}{{{}, 0xffffffffffffffffULL}}", T::$id().literal()))
                    .combine_expr(concat!(
                        "(b.value ", stringify!($cmp),
                        " a.value || (b.value == a.value && b.index < a.index)) ? b : a"
                    ))
            }
        }
    };
}

arg_op!(
    /// The smallest value and its index; among equal values the lowest index wins.
    /// Identity: (`MAX` or `+inf`, `u64::MAX`). NaN values are not ordered and break
    /// associativity: keep them out of the input.
    ///
    /// ```
    /// use monoscan::{ops::{ArgMin, Indexed}, Backend, cpu::Sequential};
    /// let xs = [Indexed::new(3, 0), Indexed::new(1, 1), Indexed::new(1, 2)];
    /// let m = Sequential.reduce(&ArgMin::<i32>::new(), &xs).unwrap();
    /// assert_eq!(m, Indexed::new(1, 1));
    /// ```
    ArgMin, "argmin", highest, <
);
arg_op!(
    /// The largest value and its index; among equal values the lowest index wins.
    /// Identity: (`MIN` or `-inf`, `u64::MAX`).
    ArgMax, "argmax", lowest, >
);
