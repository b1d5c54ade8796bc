//! The parallel CPU backend computes what the sequential reference computes, for every built-in
//! operator; and the reference computes what a naive fold from the identity computes.

mod common;

use common::strategies::*;
use common::*;
use monoscan::cpu::{seq, Parallel, Sequential};
use monoscan::ops::*;
use monoscan::{ApproxEq, Monoid};
use proptest::prelude::*;
use std::sync::OnceLock;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The free functions of `monoscan::cpu::seq`.
fn seq_functions<M: Monoid>(m: &M, xs: &[M::Elem], init: M::Elem) -> Results<M::Elem> {
    let (mut inclusive, mut exclusive) = (xs.to_vec(), xs.to_vec());
    seq::inclusive_scan_in_place(m, &mut inclusive);
    let total = seq::exclusive_scan_in_place(m, &mut exclusive, init);
    results(
        seq::reduce(m, xs),
        [seq::inclusive_scan(m, xs), inclusive],
        [
            (seq::exclusive_scan(m, xs, init), init),
            seq::exclusive_scan_total(m, xs, init),
            (exclusive, total),
        ],
    )
}

/// A pool wider than the machine: there `Parallel` cuts up to 4 * 13 = 52 chunks.
fn wide_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(13)
            .build()
            .unwrap()
    })
}

/// The parallel backends under test, and whether each runs in [`wide_pool`].
const SETUPS: [(&str, usize, bool); 3] = [
    ("Parallel::default()", 0, false),
    ("Parallel::with_min_chunk(1)", 1, false),
    ("Parallel::with_min_chunk(3), 13 threads", 3, true),
];

/// Checks every setup of `setups` against the sequential backend, and with `thorough`, that
/// backend and `cpu::seq` against the naive definitions first.
fn check_with<M>(
    setups: &[(&str, usize, bool)],
    thorough: bool,
    m: &M,
    xs: &[M::Elem],
    init: M::Elem,
    cmp: Cmp,
) where
    M: Monoid,
    M::Elem: ApproxEq,
{
    let reference = run_all(&Sequential, m, xs, init);
    if thorough {
        assert_results("Sequential", &reference, &naive(m, xs, init), Cmp::Exact);
        assert_results(
            "cpu::seq",
            &seq_functions(m, xs, init),
            &reference,
            Cmp::Exact,
        );
    }
    for &(who, min_chunk, wide) in setups {
        let backend = if min_chunk == 0 {
            Parallel::default()
        } else {
            Parallel::with_min_chunk(min_chunk)
        };
        let got = if wide {
            wide_pool().install(|| run_all(&backend, m, xs, init))
        } else {
            run_all(&backend, m, xs, init)
        };
        assert_results(who, &got, &reference, cmp);
    }
}

fn check_op<M: Monoid<Elem: ApproxEq>>(m: &M, xs: &[M::Elem], init: M::Elem, cmp: Cmp) {
    check_with(&SETUPS, true, m, xs, init, cmp);
}

/// For a million elements: two setups (8 and 52 chunks) against the sequential backend.
fn check_large<M: Monoid<Elem: ApproxEq>>(m: &M, xs: &[M::Elem], init: M::Elem, cmp: Cmp) {
    check_with(&[SETUPS[0], SETUPS[2]], false, m, xs, init, cmp);
}

/// An input vector and an `init` for the exclusive scans.
fn inputs<S: Strategy<Value: Clone> + Clone>(
    elems: S,
) -> impl Strategy<Value = (Vec<S::Value>, S::Value)> {
    (vec_of(elems.clone(), length()), elems)
}

/// [`inputs`] without tiled lengths.
fn short_inputs<S: Strategy<Value: Clone> + Clone>(
    elems: S,
) -> impl Strategy<Value = (Vec<S::Value>, S::Value)> {
    (vec_of(elems.clone(), length_up_to(TILE_ABOVE)), elems)
}

// ---------------------------------------------------------------------------------------------
// Property tests

// Integer strategies by type: arbitrary; mostly odd (products never collapse to 0); mostly 0
// with single bits set (ORs do not saturate at once); their complements, for AND.
macro_rules! any_int {
    ($t:ident) => {
        any::<$t>()
    };
}
macro_rules! odd_int {
    ($t:ident) => {
        prop_oneof![9 => any::<$t>().prop_map(|x| x | 1), 1 => any::<$t>()]
    };
}
macro_rules! few_ones {
    ($t:ident) => {
        prop_oneof![6 => Just(0), 1 => (0..<$t>::BITS).prop_map(|k| (1u64 << k) as $t)]
    };
}
macro_rules! few_zeros {
    ($t:ident) => {
        few_ones!($t).prop_map(|x| !x)
    };
}

/// One property test per (operator, integer type), named `op::type`.
macro_rules! int_props {
    ($module:ident, $Op:ident, $elems:ident) => {
        mod $module {
            use super::*;
            int_props!(@tests $Op, $elems, [i8, u8, i16, u16, i32, u32, i64, u64]);
        }
    };
    (@tests $Op:ident, $elems:ident, [$($t:ident),*]) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $t((xs, init) in inputs($elems!($t))) {
                    check_op(&$Op::<$t>::new(), &xs, init, Cmp::Exact);
                }
            )*
        }
    };
}

int_props!(sum, Sum, any_int);
int_props!(product, Product, odd_int);
int_props!(min, Min, any_int);
int_props!(max, Max, any_int);
int_props!(bitand, BitAnd, few_zeros);
int_props!(bitor, BitOr, few_ones);
int_props!(bitxor, BitXor, any_int);

/// Property tests, one per line: `name: operator, elements, comparison, inputs;`.
macro_rules! props {
    ($($name:ident: $op:expr, $elems:expr, $cmp:ident, $inputs:ident;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name((xs, init) in $inputs($elems)) {
                    let op = $op;
                    check_op(&op, &xs, init, $cmp(&op, &xs, init));
                }
            )*
        }
    };
}

fn mod_7() -> MatMulMod {
    MatMulMod::new(7).unwrap()
}

// Float products: over a tiled input the block's log-product repeats and drifts into underflow,
// where relative error bounds end, so short inputs only (long ones in `large_products`).
props! {
    sum_f32: Sum::<f32>::new(), modest::<f32>(), sums, inputs;
    sum_f64: Sum::<f64>::new(), modest::<f64>(), sums, inputs;
    sum_f32_dyadic_exact: Sum::<f32>::new(), small_dyadic::<f32>(), exact, inputs;
    sum_f64_dyadic_exact: Sum::<f64>::new(), small_dyadic::<f64>(), exact, inputs;
    product_f32: Product::<f32>::new(), near_one::<f32>(), products, short_inputs;
    product_f64: Product::<f64>::new(), near_one::<f64>(), products, short_inputs;
    min_f32: Min::<f32>::new(), finite::<f32>(), exact, inputs;
    min_f64: Min::<f64>::new(), finite::<f64>(), exact, inputs;
    max_f32: Max::<f32>::new(), finite::<f32>(), exact, inputs;
    max_f64: Max::<f64>::new(), finite::<f64>(), exact, inputs;
    argmin_i32: ArgMin::<i32>::new(), indexed(small_i32()), exact, inputs;
    argmin_f64: ArgMin::<f64>::new(), indexed(small_float::<f64>()), exact, inputs;
    argmax_i32: ArgMax::<i32>::new(), indexed(small_i32()), exact, inputs;
    argmax_f64: ArgMax::<f64>::new(), indexed(small_float::<f64>()), exact, inputs;
    minmax_i64:
        MinMax::<i64>::new(), minmax_pair(prop_oneof![any::<i64>(), small_i64()]), exact, inputs;
    minmax_f32: MinMax::<f32>::new(), minmax_pair(finite::<f32>()), exact, inputs;
    affine_f32: Affine::<f32>::new(), affine::<f32>(), affine_maps, inputs;
    affine_f64: Affine::<f64>::new(), affine::<f64>(), affine_maps, inputs;
    affine_f32_exact: Affine::<f32>::new(), affine_exact::<f32>(), exact, inputs;
    affine_f64_exact: Affine::<f64>::new(), affine_exact::<f64>(), exact, inputs;
    matmul_default_prime:
        MatMulMod::default(), invertible_mat2(MatMulMod::default()), exact, inputs;
    matmul_mod_7: mod_7(), invertible_mat2(mod_7()), exact, inputs;
    segmented_sum_i32: Segmented::new(Sum::<i32>::new()), flagged(any::<i32>()), exact, inputs;
    segmented_sum_f64: Segmented::new(Sum::<f64>::new()), flagged(modest::<f64>()), sums, inputs;
    segmented_affine_f64:
        Segmented::new(Affine::<f64>::new()), flagged(affine::<f64>()), affine_maps, inputs;
    segmented_affine_f32_exact:
        Segmented::new(Affine::<f32>::new()), flagged(affine_exact::<f32>()), exact, inputs;
    segmented_matmul_mod_7:
        Segmented::new(mod_7()), flagged(invertible_mat2(mod_7())), exact, inputs;
    segmented_segmented_sum_i64: Segmented::new(Segmented::new(Sum::<i64>::new())),
        flagged(flagged(any::<i64>())), exact, inputs;
    segmented_argmax_i32:
        Segmented::new(ArgMax::<i32>::new()), flagged(indexed(small_i32())), exact, inputs;
    segmented_minmax_f32:
        Segmented::new(MinMax::<f32>::new()), flagged(minmax_pair(finite::<f32>())), exact, inputs;
    segmented_bitxor_u8: Segmented::new(BitXor::<u8>::new()), flagged(any::<u8>()), exact, inputs;
}

// ---------------------------------------------------------------------------------------------
// Deterministic tests

/// SplitMix64, for inputs too large to draw through proptest quickly.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let z = (self.0 ^ (self.0 >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)`.
    fn float(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// A random matrix invertible modulo `op`'s prime.
    fn mat2(&mut self, op: MatMulMod) -> Mat2 {
        let m = op.reduce_entries([(); 4].map(|_| self.next() as u32));
        if invertible(op, &m) {
            m
        } else {
            self.mat2(op)
        }
    }
    fn affine(&mut self) -> AffineMap<f64> {
        AffineMap::new(self.float(-2.0, 2.0), self.float(-10.0, 10.0))
    }
}

/// A prime above 10^6.
const MILLION: usize = 1_000_003;

#[test]
fn million_sum_i64() {
    let mut r = SplitMix(1);
    let xs: Vec<i64> = (0..MILLION).map(|_| r.next() as i64).collect();
    check_large(&Sum::<i64>::new(), &xs, -7, Cmp::Exact);
}

#[test]
fn million_matmul() {
    let (m, mut r) = (MatMulMod::default(), SplitMix(2));
    let xs: Vec<Mat2> = (0..MILLION).map(|_| r.mat2(m)).collect();
    check_large(&m, &xs, Mat2::new([3, 1, 4, 1]), Cmp::Exact);
}

#[test]
fn million_segmented_affine_f64() {
    let (m, mut r) = (Segmented::new(Affine::<f64>::new()), SplitMix(3));
    let xs: Vec<_> = (0..MILLION)
        .map(|_| Flagged::new(r.affine(), r.next() % 1000 == 0))
        .collect();
    let init = Flagged::tail(AffineMap::new(0.5, 1.0));
    check_large(&m, &xs, init, affine_maps(&m, &xs, init));
}

/// Float products of independent factors near 1, long enough for `Parallel::default()` to cut
/// chunks: the log of the product is a random walk of step at most 0.065, far from overflow
/// and underflow at these lengths (and the seed is fixed).
#[test]
fn large_products() {
    let mut r = SplitMix(5);
    let mut near_one = || 1.0 + (r.next() % 129) as f64 / 1024.0 - 0.0625;
    let xs: Vec<f32> = (0..65537).map(|_| near_one() as f32).collect();
    check_op(
        &Product::<f32>::new(),
        &xs,
        1.5,
        products(&Product::<f32>::new(), &xs, 1.5),
    );
    let xs: Vec<f64> = (0..MILLION).map(|_| near_one()).collect();
    check_large(
        &Product::<f64>::new(),
        &xs,
        0.75,
        products(&Product::<f64>::new(), &xs, 0.75),
    );
}

/// Every length up to 100 under many chunk sizes, on a non-commutative exact operator.
#[test]
fn every_short_length_and_chunk_size() {
    let (m, mut r) = (mod_7(), SplitMix(4));
    let all: Vec<Mat2> = (0..100).map(|_| r.mat2(m)).collect();
    let chunks = [1, 2, 3, 5, 8, 13, 64];
    let names: Vec<String> = chunks
        .iter()
        .map(|c| format!("Parallel::with_min_chunk({c})"))
        .collect();
    let setups: Vec<(&str, usize, bool)> = names
        .iter()
        .zip(chunks)
        .flat_map(|(name, c)| [(name.as_str(), c, false), (name.as_str(), c, true)])
        .collect();
    for n in 0..=all.len() {
        check_with(
            &setups,
            true,
            &m,
            &all[..n],
            Mat2::new([2, 3, 5, 1]),
            Cmp::Exact,
        );
    }
}

// The harness catches wrong results: a reordered reduce, and (within the float tolerance) one
// map missing among thousands.

#[test]
#[should_panic(expected = "mutant: reduce")]
fn harness_catches_reordering() {
    let (m, mut r) = (mod_7(), SplitMix(6));
    let xs: Vec<Mat2> = (0..1009).map(|_| r.mat2(m)).collect();
    let want = run_all(&Sequential, &m, &xs, m.identity());
    let mut got = run_all(&Sequential, &m, &xs, m.identity());
    let (left, right) = xs.split_at(500);
    got[0].1 = vec![m.combine(&seq::reduce(&m, right), &seq::reduce(&m, left))];
    assert_results("mutant", &got, &want, Cmp::Exact);
}

#[test]
#[should_panic(expected = "mutant: exclusive_scan_total (total)")]
fn harness_catches_a_dropped_element_within_tolerance() {
    let (m, mut r) = (Affine::<f64>::new(), SplitMix(7));
    let xs: Vec<AffineMap<f64>> = (0..4099).map(|_| r.affine()).collect();
    let init = m.identity();
    let want = run_all(&Sequential, &m, &xs, init);
    let mut got = run_all(&Sequential, &m, &xs, init);
    got[5].1 = vec![seq::reduce(&m, &xs[..xs.len() - 1])];
    assert_results("mutant", &got, &want, affine_maps(&m, &xs, init));
}
