//! The operator classes of the JIT-latency benchmark and tests: one operator per class of
//! combine cost and element size, from the cheapest to the most expensive to compile. Two are
//! built-ins (`Sum<i32>`, `Affine<f64>`); the others are the library's representative
//! operators (`monoscan::bench::classes`, which `monoscan bench --cases classes` measures),
//! written as a user writes them.
//!
//! | class | operator | bytes | combine |
//! | --- | --- | --- | --- |
//! | `sum-i32` | `Sum<i32>` | 4 | one add |
//! | `linear-u32` | [`LinearU32`] | 8 | x -> a*x + b mod 2^32, composed: 2 mul, 1 add; not commutative |
//! | `affine-f64` | `Affine<f64>` | 16 | 2 mul, 1 add; not commutative |
//! | `logsumexp-f64` | [`LogSumExp`] | 8 | `exp`, `log1p` |
//! | `affine-mod-u64` | [`AffineModP`] | 16 | 64-bit products modulo a parameter; not commutative |
//! | `welford-f64` | [`Welford`] | 24 | f64 divisions |
#![allow(dead_code)]

// Not every test uses every operator (the element types are for those that do).
#[allow(unused_imports)]
pub use monoscan::bench::classes::{
    AffineModP, Lin32, LinearU32, LogSumExp, ModAffine, Moments, Welford,
};
use monoscan::ops::{Affine, Sum};
use monoscan::{CudaOp, Monoid};

/// The classes' names and CUDA descriptions, cheapest first.
pub fn all() -> Vec<(&'static str, CudaOp)> {
    vec![
        ("sum-i32", Sum::<i32>::new().cuda()),
        ("linear-u32", LinearU32.cuda()),
        ("affine-f64", Affine::<f64>::new().cuda()),
        ("logsumexp-f64", LogSumExp.cuda()),
        ("affine-mod-u64", AffineModP::default().cuda()),
        ("welford-f64", Welford.cuda()),
    ]
}
