//! Proptest strategies for the elements of every built-in operator, and for input lengths.
//!
//! Float strategies produce no NaN or infinities, except those of [`with_specials`]. Where a test wants exact float arithmetic
//! the values are dyadic rationals `k / 8` of bounded `|k|`: any sum of few enough of them is a
//! multiple of `1/8` below `2^(p-4)` in magnitude (`p` the mantissa width), so every partial sum
//! is representable and the order of additions cannot matter.
#![allow(dead_code)]

use monoscan::ops::{AffineMap, Flagged, Float, Indexed, Mat2, MatMulMod, MinMaxPair};
use proptest::collection::vec;
use proptest::num::{f32 as pf32, f64 as pf64};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use std::fmt::Debug;

/// Probability that a generated [`Flagged`] element starts a segment.
pub const HEAD_PROBABILITY: f64 = 0.2;

/// Lengths where blocked algorithms tend to break: empty, one, two, around a warp (32).
pub const EDGE_LENGTHS: [usize; 6] = [0, 1, 2, 31, 32, 33];

/// Prime lengths: never a multiple of a power-of-two block size, nor of most chunk sizes.
pub const PRIME_LENGTHS: [usize; 2] = [1009, 4099];

/// A prime just past `2^16`.
pub const LARGE_LENGTH: usize = 65537;

/// Random lengths are drawn up to this.
pub const RANDOM_MAX_LEN: usize = 4096;

/// `|k| < DYADIC_K` for [`dyadic`]: 64 such values sum exactly even in `f32`
/// (`|sum| < 2^15`, a multiple of `1/8`: 18 significant bits).
pub const DYADIC_K: i32 = 1 << 12;

/// `|k| < SMALL_DYADIC_K` for [`small_dyadic`]: up to `2^16 + 2` such values sum exactly even
/// in `f32` (`|sum| < 2^20`, a multiple of `1/8`: 23 significant bits).
pub const SMALL_DYADIC_K: i32 = 1 << 7;

// ---------------------------------------------------------------------------------------------
// Lengths and vectors

/// Input lengths biased to boundaries: [`EDGE_LENGTHS`] (6 in 17), [`PRIME_LENGTHS`] (2 in 17),
/// [`LARGE_LENGTH`] (1 in 17), and random lengths below 64 (4 in 17) or up to
/// [`RANDOM_MAX_LEN`] (4 in 17).
pub fn length() -> BoxedStrategy<usize> {
    length_up_to(usize::MAX)
}

/// [`length`], without anything above `max`.
pub fn length_up_to(max: usize) -> BoxedStrategy<usize> {
    let keep = |ns: &[usize]| ns.iter().copied().filter(|&n| n <= max).collect::<Vec<_>>();
    let groups: [(u32, Vec<usize>); 3] = [
        (6, keep(&EDGE_LENGTHS)),
        (2, keep(&PRIME_LENGTHS)),
        (1, keep(&[LARGE_LENGTH])),
    ];
    let mut choices: Vec<(u32, BoxedStrategy<usize>)> = groups
        .into_iter()
        .filter(|(_, ns)| !ns.is_empty())
        .map(|(w, ns)| (w, select(ns).boxed()))
        .collect();
    choices.push((4, (0..=max.min(64)).boxed()));
    choices.push((4, (0..=max.min(RANDOM_MAX_LEN)).boxed()));
    Union::new_weighted(choices).boxed()
}

/// Inputs longer than this are tiled: a random block of [`TILE_LEN`] elements, repeated.
/// Drawing tens of thousands of structured elements through proptest takes seconds in a debug
/// build; a prime period keeps every chunk of a blocked algorithm different from its neighbours.
pub const TILE_ABOVE: usize = 8192;

/// The period of tiled inputs (a prime).
pub const TILE_LEN: usize = 1021;

/// Vectors of `elems` whose lengths come from `lengths` (tiled above [`TILE_ABOVE`]).
pub fn vec_of<S>(
    elems: S,
    lengths: impl Strategy<Value = usize>,
) -> impl Strategy<Value = Vec<S::Value>>
where
    S: Strategy + Clone,
    S::Value: Clone,
{
    lengths.prop_flat_map(move |n| {
        let drawn = if n > TILE_ABOVE { TILE_LEN } else { n };
        vec(elems.clone(), drawn)
            .prop_map(move |block| block.iter().cycle().take(n).cloned().collect())
    })
}

// ---------------------------------------------------------------------------------------------
// Integers

/// Values in `-4..=4`, so that ties are frequent (for ArgMin/ArgMax).
pub fn small_i32() -> impl Strategy<Value = i32> + Clone {
    -4..=4i32
}

/// Values in `-4..=4`, so that ties are frequent.
pub fn small_i64() -> impl Strategy<Value = i64> + Clone {
    -4..=4i64
}

// ---------------------------------------------------------------------------------------------
// Floats

/// `f32` or `f64`, with what the strategies need beyond [`Float`].
pub trait TestFloat: Float {
    /// `x` rounded to this type (exact for every value the strategies below build from it).
    fn from_f64(x: f64) -> Self;
    /// Any finite value: normal, subnormal or zero, of either sign.
    fn any_finite() -> BoxedStrategy<Self>;
}

impl TestFloat for f32 {
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn any_finite() -> BoxedStrategy<Self> {
        (pf32::POSITIVE | pf32::NEGATIVE | pf32::NORMAL | pf32::SUBNORMAL | pf32::ZERO).boxed()
    }
}

impl TestFloat for f64 {
    fn from_f64(x: f64) -> Self {
        x
    }
    fn any_finite() -> BoxedStrategy<Self> {
        (pf64::POSITIVE | pf64::NEGATIVE | pf64::NORMAL | pf64::SUBNORMAL | pf64::ZERO).boxed()
    }
}

/// Half-integers in `[-4, 4]` and `-0.0`: ties, and the two zeros, are frequent.
pub fn small_float<T: TestFloat>() -> impl Strategy<Value = T> + Clone {
    prop_oneof![
        8 => (-8..=8i32).prop_map(|k| T::from_f64(f64::from(k) / 2.0)),
        1 => Just(T::from_f64(-0.0)),
    ]
}

/// Any finite value, or a [`small_float`] (for Min, Max, MinMax: exact operators).
pub fn finite<T: TestFloat>() -> impl Strategy<Value = T> + Clone {
    prop_oneof![T::any_finite(), small_float::<T>()]
}

/// `k / 8` with `|k| < DYADIC_K`: sums of up to 64 of them are exact.
pub fn dyadic<T: TestFloat>() -> impl Strategy<Value = T> + Clone {
    (1 - DYADIC_K..DYADIC_K).prop_map(|k| T::from_f64(f64::from(k) / 8.0))
}

/// `k / 8` with `|k| < SMALL_DYADIC_K`: sums of up to `2^16 + 2` of them are exact.
pub fn small_dyadic<T: TestFloat>() -> impl Strategy<Value = T> + Clone {
    (1 - SMALL_DYADIC_K..SMALL_DYADIC_K).prop_map(|k| T::from_f64(f64::from(k) / 8.0))
}

/// Values of magnitude at most 1000 with full mantissas, so sums round; and some dyadic ones.
pub fn modest<T: TestFloat>() -> impl Strategy<Value = T> + Clone {
    prop_oneof![
        3 => (-1000.0..=1000.0f64).prop_map(T::from_f64),
        1 => dyadic::<T>(),
    ]
}

/// `±k / 8` with `4 <= k <= 16` (magnitudes in `[0.5, 2]`), and sometimes `0`: products of 64
/// stay far from overflow and underflow, so they are only rounded.
pub fn unit<T: TestFloat>() -> impl Strategy<Value = T> + Clone {
    prop_oneof![
        16 => (4..=16i32, any::<bool>())
            .prop_map(|(k, neg)| T::from_f64(f64::from(if neg { -k } else { k }) / 8.0)),
        1 => Just(T::from_f64(0.0)),
    ]
}

/// `1 + k / 1024` with `|k| <= 64`: products of millions stay in range (their logarithm is a
/// random walk of step at most 0.065).
pub fn near_one<T: TestFloat>() -> impl Strategy<Value = T> + Clone {
    (-64..=64i32).prop_map(|k| T::from_f64(1.0 + f64::from(k) / 1024.0))
}

/// `x -> a*x + b` with `a` in `[-2, 2]` and `b` in `[-10, 10]`.
pub fn affine<T: TestFloat>() -> impl Strategy<Value = AffineMap<T>> + Clone {
    (-2.0..=2.0f64, -10.0..=10.0f64)
        .prop_map(|(a, b)| AffineMap::new(T::from_f64(a), T::from_f64(b)))
}

/// `x -> a*x + b` with `a` in `{-1, 0, 1}` and `b` a [`small_dyadic`]: every composition of up
/// to `2^16 + 2` of them is computed exactly, whatever the grouping, yet the order matters.
pub fn affine_exact<T: TestFloat>() -> impl Strategy<Value = AffineMap<T>> + Clone {
    let a = prop_oneof![20 => Just(1.0), 20 => Just(-1.0), 1 => Just(0.0)];
    (a, small_dyadic::<T>()).prop_map(|(a, b)| AffineMap::new(T::from_f64(a), b))
}

// ---------------------------------------------------------------------------------------------
// Structured elements

/// Indices for [`Indexed`]: often small (so that equal indices occur too), else anything below
/// `u64::MAX` (the identity's index).
pub fn index() -> impl Strategy<Value = u64> + Clone {
    prop_oneof![0..16u64, 0..u64::MAX]
}

/// `Indexed` elements for ArgMin/ArgMax; pass values from a small range so that ties happen.
pub fn indexed<S>(values: S) -> impl Strategy<Value = Indexed<S::Value>> + Clone
where
    S: Strategy + Clone,
{
    (values, index()).prop_map(|(v, i)| Indexed::new(v, i))
}

/// `MinMaxPair` elements: `(x, x)`, or two values in order.
pub fn minmax_pair<S>(values: S) -> impl Strategy<Value = MinMaxPair<S::Value>> + Clone
where
    S: Strategy + Clone,
    S::Value: PartialOrd + Copy + Debug,
{
    prop_oneof![
        values.clone().prop_map(MinMaxPair::of),
        (values.clone(), values).prop_map(|(x, y)| {
            let (min, max) = if y < x { (y, x) } else { (x, y) };
            MinMaxPair { min, max }
        }),
    ]
}

/// Matrices with entries reduced modulo `op`'s prime (through [`MatMulMod::reduce_entries`]);
/// small entries are favoured, so that zeros, ones and repeated matrices occur.
pub fn mat2(op: MatMulMod) -> impl Strategy<Value = Mat2> + Clone {
    let entry = prop_oneof![3 => any::<u32>(), 1 => 0u32..4];
    prop::array::uniform4(entry).prop_map(move |m| op.reduce_entries(m))
}

/// Whether `m` is invertible modulo `op`'s prime.
pub fn invertible(op: MatMulMod, m: &Mat2) -> bool {
    let p = u64::from(op.modulus());
    let e = m.m.map(u64::from);
    (e[0] * e[3]) % p != (e[1] * e[2]) % p
}

/// [`mat2`] without singular matrices: long products never collapse to the zero matrix (with a
/// small prime, products of a few random matrices are usually 0 otherwise).
pub fn invertible_mat2(op: MatMulMod) -> impl Strategy<Value = Mat2> + Clone {
    mat2(op).prop_filter("singular", move |m| invertible(op, m))
}

/// `Flagged` elements over `inner`, each a segment head with probability [`HEAD_PROBABILITY`].
pub fn flagged<S>(inner: S) -> impl Strategy<Value = Flagged<S::Value>> + Clone
where
    S: Strategy + Clone,
{
    (inner, prop::bool::weighted(HEAD_PROBABILITY)).prop_map(|(v, head)| Flagged::new(v, head))
}

/// NaN, both infinities and both zeros.
pub fn specials<T: TestFloat>() -> impl Strategy<Value = T> + Clone {
    select(vec![
        T::from_f64(f64::NAN),
        T::from_f64(f64::INFINITY),
        T::from_f64(f64::NEG_INFINITY),
        T::from_f64(0.0),
        T::from_f64(-0.0),
    ])
}

/// `values`, and one time in five a [`specials`] value.
pub fn with_specials<T, S>(values: S) -> impl Strategy<Value = T> + Clone
where
    T: TestFloat,
    S: Strategy<Value = T> + Clone,
{
    prop_oneof![4 => values, 1 => specials::<T>()]
}

/// `values`, and one time in five `+0.0` or `-0.0`.
pub fn with_zeros<T, S>(values: S) -> impl Strategy<Value = T> + Clone
where
    T: TestFloat,
    S: Strategy<Value = T> + Clone,
{
    prop_oneof![4 => values, 1 => select(vec![T::from_f64(0.0), T::from_f64(-0.0)])]
}
