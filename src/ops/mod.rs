//! Built-in operators.
//!
//! | operator | element | identity | notes |
//! | --- | --- | --- | --- |
//! | [`Sum`], [`Product`] | any [`Scalar`] | `0`, `1` | integers wrap |
//! | [`Min`], [`Max`] | any [`Scalar`] | `MAX`, `MIN`; NaN for floats | floats ignore NaN operands |
//! | [`BitAnd`], [`BitOr`], [`BitXor`] | any [`Integer`] | all ones, `0`, `0` | |
//! | [`ArgMin`], [`ArgMax`] | [`Indexed<T>`] | (`MAX`, `u64::MAX`) ...; NaN for floats | ties go to the lowest index; NaN loses to every number |
//! | [`MinMax`] | [`MinMaxPair<T>`] | (`MAX`, `MIN`); NaNs for floats | floats ignore NaN operands |
//! | [`Affine`] | [`AffineMap<f32 or f64>`](AffineMap) | `(1, 0)` | composition in sequence order; not commutative |
//! | [`MatMulMod`] | [`Mat2`] | unit matrix | 2x2 product mod a prime; exact, not commutative |
//! | [`Segmented<M>`] | [`Flagged<M::Elem>`](Flagged) | `(0, e)` | restarts at flagged elements; not commutative |
//! | [`Reversed<M>`] | `M::Elem` | `e` | the opposite monoid: `a ⊙ b = b ⊕ a` (reverse scans) |

mod affine;
mod arg;
mod bitwise;
pub(crate) mod lanewise;
mod matrix;
mod minmax;
mod numeric;
mod reversed;
mod scalar;
mod segmented;

pub use affine::{Affine, AffineMap};
pub use arg::{ArgMax, ArgMin, Indexed};
pub use bitwise::{BitAnd, BitOr, BitXor};
pub use matrix::{Mat2, MatMulMod};
pub use minmax::{MinMax, MinMaxPair};
pub use numeric::{Max, Min, Product, Sum};
pub use reversed::Reversed;
pub use scalar::{Float, Integer, Scalar};
pub use segmented::{Flagged, Segmented};
