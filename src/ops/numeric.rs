//! `+`, `*`, `min` and `max` over the primitive numbers.

use super::scalar::Scalar;
use crate::monoid::{CudaOp, Monoid};
use std::marker::PhantomData;

macro_rules! numeric_op {
    ($(#[$doc:meta])* $name:ident, $short:literal, $id:ident, $host:ident, $cuda:ident) => {
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
            type Elem = T;
            fn identity(&self) -> T {
                T::$id()
            }
            fn combine(&self, a: &T, b: &T) -> T {
                a.$host(*b)
            }
            fn cuda(&self) -> CudaOp {
                CudaOp::new::<T>(format!(concat!($short, "_{}"), T::RUST_NAME))
                    .identity(T::$id().literal())
                    .combine_expr(T::$cuda("a", "b"))
            }
        }
    };
}

numeric_op!(
    /// `a + b`; identity `0`. Integer sums wrap on overflow (two's complement, as
    /// `wrapping_add`); float sums round, so a parallel sum differs from a sequential one by
    /// rounding (compare with a tolerance).
    ///
    /// ```
    /// use monoscan::{ops::Sum, Backend, cpu::Sequential};
    /// let ys = Sequential.inclusive_scan(&Sum::<i32>::new(), &[1, 2, 3]).unwrap();
    /// assert_eq!(ys, [1, 3, 6]);
    /// ```
    Sum, "sum", zero, add, cuda_add
);
numeric_op!(
    /// `a * b`; identity `1`. Integer products wrap on overflow (`wrapping_mul`).
    Product, "product", one, mul, cuda_mul
);
numeric_op!(
    /// `min(a, b)`; identity `MAX`. For floats a NaN operand is ignored (`minNum`, as
    /// `f32::min` and `fminf`), so the identity is NaN: the minimum of no values, or of NaNs
    /// only, is NaN, and every backend and algorithm agrees on it.
    ///
    /// ```
    /// use monoscan::{ops::Min, Backend, Monoid, cpu::Sequential};
    /// let m = Min::<f32>::new();
    /// assert_eq!(Sequential.reduce(&m, &[2.0, f32::NAN, -1.0]).unwrap(), -1.0);
    /// assert!(Sequential.reduce(&m, &[f32::NAN, f32::NAN]).unwrap().is_nan());
    /// let (_, total) = Sequential.exclusive_scan_total(&m, &[f32::NAN], m.identity()).unwrap();
    /// assert!(total.is_nan());
    /// ```
    Min, "min", min_identity, min_of, cuda_min
);
numeric_op!(
    /// `max(a, b)`; identity `MIN`. For floats a NaN operand is ignored (`maxNum`), so the
    /// identity is NaN, as for [`Min`].
    Max, "max", max_identity, max_of, cuda_max
);
