//! From `--op` x `--dtype` to a concrete monoid and its input generator.
//!
//! [`dispatch`] is the one table of supported combinations: it builds the monoid and the
//! generator of element `i` (1-based) and hands both to a [`Job`], which is generic over the
//! monoid. Everything else (which dtypes an op allows, the default dtype's validity) is derived
//! from this table, so adding an op or a dtype is a change in one place.

use clap::ValueEnum;
use monoscan::ops::{
    Affine, AffineMap, ArgMax, ArgMin, BitAnd, BitOr, BitXor, Flagged, Indexed, Mat2, MatMulMod,
    Max, Min, MinMax, MinMaxPair, Product, Scalar, Segmented, Sum,
};
use monoscan::{ApproxEq, Monoid};
use serde::Serialize;

/// The built-in operators.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
#[value(rename_all = "lower")]
pub enum Op {
    /// a + b (integers wrap)
    Sum,
    /// a * b (integers wrap)
    Product,
    /// min(a, b)
    Min,
    /// max(a, b)
    Max,
    /// a & b (integers only)
    BitAnd,
    /// a | b (integers only)
    BitOr,
    /// a ^ b (integers only)
    BitXor,
    /// smallest value and its index
    ArgMin,
    /// largest value and its index
    ArgMax,
    /// (min, max) in one pass
    MinMax,
    /// composition of x -> a*x + b (f32, f64)
    Affine,
    /// 2x2 matrix product mod 1_000_000_007 (u32)
    MatMod,
    /// sum restarting every --segment-len elements
    SegSum,
}

impl Op {
    /// The dtype used when `--dtype` is not given.
    pub fn default_dtype(self) -> Dtype {
        match self {
            Op::Affine => Dtype::F64,
            Op::MatMod => Dtype::U32,
            _ => Dtype::I32,
        }
    }

    /// The dtypes this op accepts, in `Dtype` order (derived from [`dispatch`]).
    pub fn allowed_dtypes(self) -> Vec<Dtype> {
        Dtype::value_variants()
            .iter()
            .copied()
            .filter(|&d| dispatch(self, d, 1, Probe).is_some())
            .collect()
    }
}

/// The primitive number types.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// 8-bit signed integer
    I8,
    /// 8-bit unsigned integer
    U8,
    /// 16-bit signed integer
    I16,
    /// 16-bit unsigned integer
    U16,
    /// 32-bit signed integer
    I32,
    /// 32-bit unsigned integer
    U32,
    /// 64-bit signed integer
    I64,
    /// 64-bit unsigned integer
    U64,
    /// 32-bit float
    F32,
    /// 64-bit float
    F64,
}

/// Work to do with a concrete monoid `M` and the generator of its input.
///
/// `elem(i)` is the `i`-th input element (1-based), or `None` when the dtype cannot represent
/// it. For every built-in op, if `elem(n)` is `Some` then so is `elem(i)` for all `i <= n`.
pub trait Job {
    /// What the job produces.
    type Output;

    /// Runs the job.
    fn call<M, G>(self, monoid: M, elem: G) -> Self::Output
    where
        M: Monoid,
        M::Elem: Serialize + ApproxEq,
        G: Fn(u64) -> Option<M::Elem> + Send + Sync + 'static;
}

/// A job that does nothing: `dispatch(op, dtype, _, Probe).is_some()` tells whether the
/// combination is supported.
pub struct Probe;

impl Job for Probe {
    type Output = ();
    fn call<M, G>(self, _: M, _: G) {}
}

/// Builds the monoid for `op` over `dtype` and runs `job` with it; `None` when `op` does not
/// accept `dtype`. `segment_len` (at least 1) is used by `segsum` only.
pub fn dispatch<J: Job>(op: Op, dtype: Dtype, segment_len: u64, job: J) -> Option<J::Output> {
    // One arm per listed dtype: binds the type alias `$T` to the Rust type and calls the job.
    macro_rules! typed {
        ($job:ident, $dtype:ident, [$($v:ident: $t:ty),*], |$T:ident| $monoid:expr, $elem:expr) => {
            match $dtype {
                $(Dtype::$v => {
                    #[allow(dead_code)]
                    type $T = $t;
                    Some($job.call($monoid, $elem))
                })*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        };
    }
    macro_rules! ints {
        ($($rest:tt)*) => {
            typed!(job, dtype, [I8: i8, U8: u8, I16: i16, U16: u16, I32: i32, U32: u32,
                                I64: i64, U64: u64], $($rest)*)
        };
    }
    macro_rules! numbers {
        ($($rest:tt)*) => {
            typed!(job, dtype, [I8: i8, U8: u8, I16: i16, U16: u16, I32: i32, U32: u32,
                                I64: i64, U64: u64, F32: f32, F64: f64], $($rest)*)
        };
    }
    macro_rules! floats {
        ($($rest:tt)*) => { typed!(job, dtype, [F32: f32, F64: f64], $($rest)*) };
    }

    match op {
        Op::Sum => numbers!(|T| Sum::<T>::new(), T::from_u64),
        Op::Product => numbers!(|T| Product::<T>::new(), T::from_u64),
        Op::Min => numbers!(|T| Min::<T>::new(), T::from_u64),
        Op::Max => numbers!(|T| Max::<T>::new(), T::from_u64),
        Op::BitAnd => ints!(|T| BitAnd::<T>::new(), T::from_u64),
        Op::BitOr => ints!(|T| BitOr::<T>::new(), T::from_u64),
        Op::BitXor => ints!(|T| BitXor::<T>::new(), T::from_u64),
        Op::ArgMin => numbers!(|T| ArgMin::<T>::new(), |i| Some(Indexed::new(
            T::from_u64(i)?,
            i - 1
        ))),
        Op::ArgMax => numbers!(|T| ArgMax::<T>::new(), |i| Some(Indexed::new(
            T::from_u64(i)?,
            i - 1
        ))),
        Op::MinMax => numbers!(|T| MinMax::<T>::new(), |i| T::from_u64(i)
            .map(MinMaxPair::of)),
        Op::Affine => floats!(|T| Affine::<T>::new(), |i| Some(AffineMap::new(
            T::one(),
            T::from_u64(i)?
        ))),
        Op::MatMod => {
            let m = MatMulMod::default();
            let p = u64::from(m.modulus());
            // `i % p < p < 2^31`, so the conversion cannot fail.
            typed!(job, dtype, [U32: u32], |T| m, move |i| {
                let r = u32::try_from(i % p).ok()?;
                Some(Mat2::new([1, r, 0, 1]))
            })
        }
        Op::SegSum => numbers!(|T| Segmented::new(Sum::<T>::new()), move |i| Some(
            Flagged::new(T::from_u64(i)?, (i - 1) % segment_len == 0)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_accepts_its_default_dtype() {
        for &op in Op::value_variants() {
            assert!(op.allowed_dtypes().contains(&op.default_dtype()), "{op:?}");
        }
    }

    #[test]
    fn restrictions() {
        assert_eq!(Op::Affine.allowed_dtypes(), [Dtype::F32, Dtype::F64]);
        assert_eq!(Op::MatMod.allowed_dtypes(), [Dtype::U32]);
        assert_eq!(Op::BitXor.allowed_dtypes().len(), 8);
        assert_eq!(Op::SegSum.allowed_dtypes().len(), 10);
    }
}
