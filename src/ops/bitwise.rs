//! `&`, `|` and `^` over the primitive integers.

use super::scalar::Integer;
use crate::monoid::{CudaOp, Monoid};
use std::marker::PhantomData;

macro_rules! bitwise_op {
    ($(#[$doc:meta])* $name:ident, $short:literal, $id:expr, $host:ident, $sym:literal) => {
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

        impl<T: Integer> Monoid for $name<T> {
            type Elem = T;
            fn identity(&self) -> T {
                $id
            }
            fn combine(&self, a: &T, b: &T) -> T {
                a.$host(*b)
            }
            fn cuda(&self) -> CudaOp {
                let id: T = $id;
                CudaOp::new::<T>(format!(concat!($short, "_{}"), T::RUST_NAME))
                    .identity(id.literal())
                    .combine_expr(format!(concat!("({})(a ", $sym, " b)"), T::cuda_name()))
            }
        }
    };
}

bitwise_op!(
    /// `a & b`; identity: all bits set.
    BitAnd, "bitand", T::all_ones(), and, "&"
);
bitwise_op!(
    /// `a | b`; identity `0`.
    BitOr, "bitor", T::zero(), or, "|"
);
bitwise_op!(
    /// `a ^ b`; identity `0`.
    BitXor, "bitxor", T::zero(), xor, "^"
);
