//! The operators of the backend suites: each a [`Case`] that says how to draw its elements
//! (a proptest strategy, and for long inputs a fast generator), how exactly its results compare
//! with the reference, and which inputs it takes.
//!
//! [`core_cases!`] lists the operators every backend runs (the GPU suite's); [`cpu_cases!`] the
//! further ones the CPU suites run (every built-in operator over every type it takes).
#![allow(dead_code)]

use super::gpu::Rng;
use super::strategies::*;
use super::{affine_maps, exact, exact_or_nan, products, sums, Cmp};
use monoscan::ops::*;
use monoscan::Monoid;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Inputs longer than this are drawn only by a case's fast generator: through a strategy they
/// would be one tile of [`TILE_LEN`] elements repeated hundreds of times.
pub const STRATEGY_MAX_LEN: usize = 100_000;

/// How the results of a case compare with the reference (see `super::exact` and friends).
pub type CmpFn<M> = fn(&M, &[<M as Monoid>::Elem], <M as Monoid>::Elem) -> Cmp;

/// One operator under test.
pub struct Case<M: Monoid> {
    /// The operator.
    pub op: M,
    /// Its elements, for proptest (inputs of more than [`TILE_ABOVE`] are tiled).
    pub elems: BoxedStrategy<M::Elem>,
    /// A fast generator of independent elements, for inputs of any length.
    pub draw: Option<fn(&mut Rng) -> M::Elem>,
    /// How results compare with the reference.
    pub cmp: CmpFn<M>,
    /// Adjusts an input and its `init` so that the reference defines every result exactly.
    pub adjust: fn(&mut [M::Elem], &mut M::Elem),
    /// The longest input the case takes.
    pub max_len: usize,
    /// Whether the case takes tiled (periodic) inputs.
    pub tiled: bool,
}

fn unchanged<T>(_: &mut [T], _: &mut T) {}

impl<M: Monoid> Case<M> {
    pub fn new(op: M, elems: impl Strategy<Value = M::Elem> + 'static, cmp: CmpFn<M>) -> Self {
        Case {
            op,
            elems: elems.boxed(),
            draw: None,
            cmp,
            adjust: unchanged,
            max_len: usize::MAX,
            tiled: true,
        }
    }

    /// Draws long inputs with `draw` instead of tiling the strategy's.
    pub fn draw(mut self, draw: fn(&mut Rng) -> M::Elem) -> Self {
        self.draw = Some(draw);
        self
    }

    pub fn adjust(mut self, adjust: fn(&mut [M::Elem], &mut M::Elem)) -> Self {
        self.adjust = adjust;
        self
    }

    pub fn max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }

    /// No tiled inputs: the strategy's inputs stay at most [`TILE_ABOVE`] long.
    pub fn untiled(mut self) -> Self {
        self.tiled = false;
        self
    }

    /// Whether the case takes inputs of `n` elements drawn by [`Case::input`].
    pub fn takes(&self, n: usize) -> bool {
        n <= self.max_len && (n <= STRATEGY_MAX_LEN || self.draw.is_some())
    }

    /// A deterministic input of `n` elements and an `init`: from the fast generator when the
    /// case has one, else from the strategy (tiled above [`TILE_ABOVE`]).
    pub fn input(&self, n: usize, seed: u64) -> (Vec<M::Elem>, M::Elem) {
        let (mut xs, mut init) = match self.draw {
            Some(draw) => {
                let mut rng = Rng::new(seed);
                let xs: Vec<_> = (0..n).map(|_| draw(&mut rng)).collect();
                (xs, draw(&mut rng))
            }
            None => {
                let bytes: Vec<u8> = seed
                    .to_le_bytes()
                    .iter()
                    .copied()
                    .cycle()
                    .take(32)
                    .collect();
                let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
                let mut runner = TestRunner::new_with_rng(Config::default(), rng);
                let strategy = (vec_of(self.elems.clone(), Just(n)), self.elems.clone());
                strategy
                    .new_tree(&mut runner)
                    .expect("the strategies never reject")
                    .current()
            }
        };
        (self.adjust)(&mut xs, &mut init);
        (xs, init)
    }

    /// Random inputs and `init`s for proptest, of lengths from `lengths`.
    pub fn inputs(
        &self,
        lengths: BoxedStrategy<usize>,
    ) -> impl Strategy<Value = (Vec<M::Elem>, M::Elem)> {
        let adjust = self.adjust;
        (vec_of(self.elems.clone(), lengths), self.elems.clone()).prop_map(
            move |(mut xs, mut init)| {
                adjust(&mut xs, &mut init);
                (xs, init)
            },
        )
    }
}

// ---------------------------------------------------------------------------------------------
// The operators every backend runs

/// The prime of [`matmul_mod`]: large enough that random products never collapse.
pub const MATMUL_PRIME: u32 = 1_000_003;

/// `core_cases!(then; args)` runs `then!(args; name: case, ...)` over the operators every
/// backend suite runs.
#[allow(unused_macros)]
macro_rules! core_cases {
    ($then:ident; $($args:tt)*) => {
        $then!($($args)*;
            sum_i32: $crate::common::cases::sum_i32(),
            sum_u64: $crate::common::cases::sum_u64(),
            sum_f32: $crate::common::cases::sum_f32(),
            sum_f64: $crate::common::cases::sum_f64(),
            max_i64: $crate::common::cases::max_i64(),
            argmin_f32: $crate::common::cases::argmin_f32(),
            affine_f64: $crate::common::cases::affine_f64(),
            matmul_mod: $crate::common::cases::matmul_mod(),
            seg_sum_i32: $crate::common::cases::seg_sum_i32(),
            seg_affine_f64: $crate::common::cases::seg_affine_f64(),
            sum_f64_nan_inf_zero: $crate::common::cases::sum_f64_nan_inf_zero(),
            max_f32_nan_inf_zero: $crate::common::cases::max_f32_nan_inf_zero(),
        );
    };
}
#[allow(unused_imports)]
pub(crate) use core_cases;

pub fn sum_i32() -> Case<Sum<i32>> {
    Case::new(Sum::new(), any::<i32>(), exact).draw(|r| r.next_u64() as i32)
}

pub fn sum_u64() -> Case<Sum<u64>> {
    Case::new(Sum::new(), any::<u64>(), exact).draw(|r| r.next_u64())
}

/// Sums that round: `n eps sum |x|`.
pub fn sum_f32() -> Case<Sum<f32>> {
    Case::new(Sum::new(), modest::<f32>(), sums).draw(|r| (r.unit() * 100.0) as f32)
}

pub fn sum_f64() -> Case<Sum<f64>> {
    Case::new(Sum::new(), modest::<f64>(), sums).draw(|r| r.unit() * 1e6)
}

pub fn max_i64() -> Case<Max<i64>> {
    Case::new(Max::new(), any::<i64>(), exact).draw(|r| r.next_u64() as i64)
}

/// Ties (equal values: the lowest index wins) are frequent.
pub fn argmin_f32() -> Case<ArgMin<f32>> {
    Case::new(ArgMin::new(), indexed(small_float::<f32>()), exact)
        .draw(|r| Indexed::new(r.below(1000) as f32, r.below(1 << 40)))
}

/// Not commutative; rounds.
pub fn affine_f64() -> Case<Affine<f64>> {
    Case::new(Affine::new(), affine::<f64>(), affine_maps)
        .draw(|r| AffineMap::new(r.unit(), r.unit() * 10.0))
}

/// Not commutative, exact.
pub fn matmul_mod() -> Case<MatMulMod> {
    let op = MatMulMod::new(MATMUL_PRIME).unwrap();
    Case::new(op, invertible_mat2(op), exact)
        .draw(|r| Mat2::new([0; 4].map(|_: u32| r.below(u64::from(MATMUL_PRIME)) as u32)))
}

pub fn seg_sum_i32() -> Case<Segmented<Sum<i32>>> {
    Case::new(Segmented::new(Sum::new()), flagged(any::<i32>()), exact)
        .draw(|r| Flagged::new(r.below(1000) as i32 - 500, r.below(100) < 3))
}

pub fn seg_affine_f64() -> Case<Segmented<Affine<f64>>> {
    Case::new(
        Segmented::new(Affine::new()),
        flagged(affine::<f64>()),
        affine_maps,
    )
    .draw(|r| Flagged::new(AffineMap::new(r.unit(), r.unit()), r.below(1000) < 2))
}

/// A sum of NaN, infinities and zeros of both signs among multiples of 1/8 below 16: every
/// finite partial sum is exact, so every grouping gives the same result, NaN and signs of
/// infinity included (`inf - inf` is NaN in any order, NaN absorbs).
pub fn sum_f64_nan_inf_zero() -> Case<Sum<f64>> {
    let elems = prop_oneof![
        1 => Just(f64::NAN),
        2 => Just(f64::INFINITY),
        2 => Just(f64::NEG_INFINITY),
        10 => Just(0.0),
        10 => Just(-0.0),
        300 => small_dyadic::<f64>(),
    ];
    Case::new(Sum::new(), elems, exact_or_nan).draw(|r| match r.below(20_000) {
        0 => f64::NAN,
        1..=2 => f64::INFINITY,
        3..=4 => f64::NEG_INFINITY,
        5..=1004 => 0.0,
        1005..=2004 => -0.0,
        _ => (r.below(255) as f64 - 127.0) / 8.0,
    })
}

/// A maximum over NaN (ignored: IEEE `maxNum`), infinities and zeros of both signs. A prefix
/// of NaNs alone has no defined maximum (the reference keeps the NaN, a grouping that starts
/// from the identity gives `-inf`), so the first element and `init` are never NaN; every other
/// prefix's maximum is that of its numbers, in any grouping.
pub fn max_f32_nan_inf_zero() -> Case<Max<f32>> {
    let elems = prop_oneof![
        2 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        2 => Just(0.0f32),
        2 => Just(-0.0f32),
        8 => finite::<f32>(),
    ];
    Case::new(Max::new(), elems, exact_or_nan)
        .draw(|r| match r.below(1000) {
            0..=99 => f32::NAN,
            100 => f32::INFINITY,
            101..=110 => f32::NEG_INFINITY,
            111..=160 => 0.0,
            161..=210 => -0.0,
            _ => (r.unit() * 1e30) as f32,
        })
        .adjust(|xs, init| {
            for x in xs.iter_mut().take(1).chain([init]) {
                if x.is_nan() {
                    *x = -1.5;
                }
            }
        })
}

// ---------------------------------------------------------------------------------------------
// Further operators of the CPU suites

/// `cpu_cases!(then; args)` runs `then!(args; name: case, ...)` over the operators the CPU
/// suites run besides [`core_cases!`]: every integer operator over every integer type, every
/// float operator, lifted operators.
#[allow(unused_macros)]
macro_rules! cpu_cases {
    ($then:ident; $($args:tt)*) => {
        $then!($($args)*;
            sum_i8: $crate::common::cases::int_sum::<i8>(),
            sum_u8: $crate::common::cases::int_sum::<u8>(),
            sum_i16: $crate::common::cases::int_sum::<i16>(),
            sum_u16: $crate::common::cases::int_sum::<u16>(),
            sum_u32: $crate::common::cases::int_sum::<u32>(),
            sum_i64: $crate::common::cases::int_sum::<i64>(),
            product_i8: $crate::common::cases::int_product::<i8>(),
            product_u8: $crate::common::cases::int_product::<u8>(),
            product_i16: $crate::common::cases::int_product::<i16>(),
            product_u16: $crate::common::cases::int_product::<u16>(),
            product_i32: $crate::common::cases::int_product::<i32>(),
            product_u32: $crate::common::cases::int_product::<u32>(),
            product_i64: $crate::common::cases::int_product::<i64>(),
            product_u64: $crate::common::cases::int_product::<u64>(),
            min_i8: $crate::common::cases::int_min::<i8>(),
            min_u8: $crate::common::cases::int_min::<u8>(),
            min_i16: $crate::common::cases::int_min::<i16>(),
            min_u16: $crate::common::cases::int_min::<u16>(),
            min_i32: $crate::common::cases::int_min::<i32>(),
            min_u32: $crate::common::cases::int_min::<u32>(),
            min_i64: $crate::common::cases::int_min::<i64>(),
            min_u64: $crate::common::cases::int_min::<u64>(),
            max_i8: $crate::common::cases::int_max::<i8>(),
            max_u8: $crate::common::cases::int_max::<u8>(),
            max_i16: $crate::common::cases::int_max::<i16>(),
            max_u16: $crate::common::cases::int_max::<u16>(),
            max_i32: $crate::common::cases::int_max::<i32>(),
            max_u32: $crate::common::cases::int_max::<u32>(),
            max_u64: $crate::common::cases::int_max::<u64>(),
            bitand_i8: $crate::common::cases::int_bitand::<i8>(),
            bitand_u8: $crate::common::cases::int_bitand::<u8>(),
            bitand_i16: $crate::common::cases::int_bitand::<i16>(),
            bitand_u16: $crate::common::cases::int_bitand::<u16>(),
            bitand_i32: $crate::common::cases::int_bitand::<i32>(),
            bitand_u32: $crate::common::cases::int_bitand::<u32>(),
            bitand_i64: $crate::common::cases::int_bitand::<i64>(),
            bitand_u64: $crate::common::cases::int_bitand::<u64>(),
            bitor_i8: $crate::common::cases::int_bitor::<i8>(),
            bitor_u8: $crate::common::cases::int_bitor::<u8>(),
            bitor_i16: $crate::common::cases::int_bitor::<i16>(),
            bitor_u16: $crate::common::cases::int_bitor::<u16>(),
            bitor_i32: $crate::common::cases::int_bitor::<i32>(),
            bitor_u32: $crate::common::cases::int_bitor::<u32>(),
            bitor_i64: $crate::common::cases::int_bitor::<i64>(),
            bitor_u64: $crate::common::cases::int_bitor::<u64>(),
            bitxor_i8: $crate::common::cases::int_bitxor::<i8>(),
            bitxor_u8: $crate::common::cases::int_bitxor::<u8>(),
            bitxor_i16: $crate::common::cases::int_bitxor::<i16>(),
            bitxor_u16: $crate::common::cases::int_bitxor::<u16>(),
            bitxor_i32: $crate::common::cases::int_bitxor::<i32>(),
            bitxor_u32: $crate::common::cases::int_bitxor::<u32>(),
            bitxor_i64: $crate::common::cases::int_bitxor::<i64>(),
            bitxor_u64: $crate::common::cases::int_bitxor::<u64>(),
            sum_f32_dyadic_exact: $crate::common::cases::sum_dyadic_exact::<f32>(),
            sum_f64_dyadic_exact: $crate::common::cases::sum_dyadic_exact::<f64>(),
            product_f32: $crate::common::cases::product_f32(),
            product_f64: $crate::common::cases::product_f64(),
            min_f32: $crate::common::cases::float_min::<f32>(),
            min_f64: $crate::common::cases::float_min::<f64>(),
            max_f32: $crate::common::cases::float_max::<f32>(),
            max_f64: $crate::common::cases::float_max::<f64>(),
            argmin_i32: $crate::common::cases::argmin_i32(),
            argmin_f64: $crate::common::cases::argmin_f64(),
            argmax_i32: $crate::common::cases::argmax_i32(),
            argmax_f64: $crate::common::cases::argmax_f64(),
            minmax_i64: $crate::common::cases::minmax_i64(),
            minmax_f32: $crate::common::cases::minmax_f32(),
            affine_f32: $crate::common::cases::affine_f32(),
            affine_f32_exact: $crate::common::cases::exact_affine::<f32>(),
            affine_f64_exact: $crate::common::cases::exact_affine::<f64>(),
            matmul_default_prime: $crate::common::cases::matmul_default_prime(),
            matmul_mod_7: $crate::common::cases::matmul_mod_7(),
            seg_sum_f64: $crate::common::cases::seg_sum_f64(),
            seg_affine_f32_exact: $crate::common::cases::seg_affine_f32_exact(),
            seg_matmul_mod_7: $crate::common::cases::seg_matmul_mod_7(),
            seg_seg_sum_i64: $crate::common::cases::seg_seg_sum_i64(),
            seg_argmax_i32: $crate::common::cases::seg_argmax_i32(),
            seg_minmax_f32: $crate::common::cases::seg_minmax_f32(),
            seg_bitxor_u8: $crate::common::cases::seg_bitxor_u8(),
        );
    };
}
#[allow(unused_imports)]
pub(crate) use cpu_cases;

/// The primitive integers, with what their strategies need.
pub trait TestInt: Integer + Arbitrary + 'static {
    const BITS: u32;
    /// The low bits of `x`.
    fn truncate(x: u64) -> Self;
}

macro_rules! test_int {
    ($($t:ty),*) => {$(
        impl TestInt for $t {
            const BITS: u32 = <$t>::BITS;
            fn truncate(x: u64) -> Self { x as $t }
        }
    )*};
}
test_int!(i8, u8, i16, u16, i32, u32, i64, u64);

/// Mostly odd: products do not collapse to 0.
fn odd<T: TestInt>() -> impl Strategy<Value = T> {
    prop_oneof![9 => any::<T>().prop_map(|x| x.or(T::one())), 1 => any::<T>()]
}

/// Mostly 0, else one bit: ORs do not saturate at once.
fn few_ones<T: TestInt>() -> BoxedStrategy<T> {
    prop_oneof![6 => Just(T::zero()), 1 => (0..T::BITS).prop_map(|k| T::truncate(1u64 << k))]
        .boxed()
}

/// Complements of [`few_ones`]: ANDs do not reach 0 at once.
fn few_zeros<T: TestInt>() -> impl Strategy<Value = T> {
    few_ones::<T>().prop_map(|x| x.xor(T::all_ones()))
}

/// Wrapping sums; drawn fast, so they run on long inputs too.
pub fn int_sum<T: TestInt>() -> Case<Sum<T>> {
    Case::new(Sum::new(), any::<T>(), exact).draw(|r| T::truncate(r.next_u64()))
}

pub fn int_product<T: TestInt>() -> Case<Product<T>> {
    Case::new(Product::new(), odd::<T>(), exact)
}

pub fn int_min<T: TestInt>() -> Case<Min<T>> {
    Case::new(Min::new(), any::<T>(), exact)
}

pub fn int_max<T: TestInt>() -> Case<Max<T>> {
    Case::new(Max::new(), any::<T>(), exact)
}

pub fn int_bitand<T: TestInt>() -> Case<BitAnd<T>> {
    Case::new(BitAnd::new(), few_zeros::<T>(), exact)
}

pub fn int_bitor<T: TestInt>() -> Case<BitOr<T>> {
    Case::new(BitOr::new(), few_ones::<T>(), exact)
}

pub fn int_bitxor<T: TestInt>() -> Case<BitXor<T>> {
    Case::new(BitXor::new(), any::<T>(), exact)
}

/// Multiples of 1/8 that sum exactly in any order (up to `2^16 + 2` of them).
pub fn sum_dyadic_exact<T: TestFloat>() -> Case<Sum<T>> {
    Case::new(Sum::new(), small_dyadic::<T>(), exact).max_len(LARGE_LENGTH)
}

/// `1 + k / 1024`, `|k| <= 64`, as [`near_one`] draws them.
fn near_one_f64(r: &mut Rng) -> f64 {
    1.0 + (r.below(129) as f64 - 64.0) / 1024.0
}

/// Products of factors near 1. Over a tiled input the tile's log-product repeats and drifts
/// into underflow or overflow, where relative error bounds end: random lengths stay untiled, and
/// long inputs are independent factors (the log of their product a random walk of step at most
/// 0.065, far from the range's ends at these lengths).
pub fn product_f32() -> Case<Product<f32>> {
    Case::new(Product::new(), near_one::<f32>(), products)
        .draw(|r| near_one_f64(r) as f32)
        .untiled()
        .max_len(LARGE_LENGTH)
}

pub fn product_f64() -> Case<Product<f64>> {
    Case::new(Product::new(), near_one::<f64>(), products)
        .draw(near_one_f64)
        .untiled()
}

/// Any finite value, subnormals and both zeros included: exact.
pub fn float_min<T: TestFloat>() -> Case<Min<T>> {
    Case::new(Min::new(), finite::<T>(), exact)
}

pub fn float_max<T: TestFloat>() -> Case<Max<T>> {
    Case::new(Max::new(), finite::<T>(), exact)
}

pub fn argmin_i32() -> Case<ArgMin<i32>> {
    Case::new(ArgMin::new(), indexed(small_i32()), exact)
}

pub fn argmin_f64() -> Case<ArgMin<f64>> {
    Case::new(ArgMin::new(), indexed(small_float::<f64>()), exact)
}

pub fn argmax_i32() -> Case<ArgMax<i32>> {
    Case::new(ArgMax::new(), indexed(small_i32()), exact)
}

pub fn argmax_f64() -> Case<ArgMax<f64>> {
    Case::new(ArgMax::new(), indexed(small_float::<f64>()), exact)
}

pub fn minmax_i64() -> Case<MinMax<i64>> {
    let values = prop_oneof![any::<i64>(), small_i64()];
    Case::new(MinMax::new(), minmax_pair(values), exact)
}

pub fn minmax_f32() -> Case<MinMax<f32>> {
    Case::new(MinMax::new(), minmax_pair(finite::<f32>()), exact)
}

pub fn affine_f32() -> Case<Affine<f32>> {
    Case::new(Affine::new(), affine::<f32>(), affine_maps)
}

/// Compositions computed exactly in any grouping (up to `2^16 + 2` maps), order still matters.
pub fn exact_affine<T: TestFloat>() -> Case<Affine<T>> {
    Case::new(Affine::new(), affine_exact::<T>(), exact).max_len(LARGE_LENGTH)
}

/// The default prime (products near `2^60` before reduction). Long inputs of 2x2 matrices run
/// through [`matmul_mod`] (a million in the parallel suite, 10^7 on the GPU).
pub fn matmul_default_prime() -> Case<MatMulMod> {
    let op = MatMulMod::default();
    Case::new(op, invertible_mat2(op), exact)
}

pub fn mod_7() -> MatMulMod {
    MatMulMod::new(7).unwrap()
}

/// A small prime: without singular matrices, long products never collapse to 0.
pub fn matmul_mod_7() -> Case<MatMulMod> {
    Case::new(mod_7(), invertible_mat2(mod_7()), exact)
}

pub fn seg_sum_f64() -> Case<Segmented<Sum<f64>>> {
    Case::new(Segmented::new(Sum::new()), flagged(modest::<f64>()), sums)
}

pub fn seg_affine_f32_exact() -> Case<Segmented<Affine<f32>>> {
    Case::new(
        Segmented::new(Affine::new()),
        flagged(affine_exact::<f32>()),
        exact,
    )
    .max_len(LARGE_LENGTH)
}

pub fn seg_matmul_mod_7() -> Case<Segmented<MatMulMod>> {
    Case::new(
        Segmented::new(mod_7()),
        flagged(invertible_mat2(mod_7())),
        exact,
    )
}

pub fn seg_seg_sum_i64() -> Case<Segmented<Segmented<Sum<i64>>>> {
    Case::new(
        Segmented::new(Segmented::new(Sum::new())),
        flagged(flagged(any::<i64>())),
        exact,
    )
}

pub fn seg_argmax_i32() -> Case<Segmented<ArgMax<i32>>> {
    Case::new(
        Segmented::new(ArgMax::new()),
        flagged(indexed(small_i32())),
        exact,
    )
}

pub fn seg_minmax_f32() -> Case<Segmented<MinMax<f32>>> {
    Case::new(
        Segmented::new(MinMax::new()),
        flagged(minmax_pair(finite::<f32>())),
        exact,
    )
}

pub fn seg_bitxor_u8() -> Case<Segmented<BitXor<u8>>> {
    Case::new(Segmented::new(BitXor::new()), flagged(any::<u8>()), exact)
}
