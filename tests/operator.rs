//! `#[monoscan::operator]`: operators written once, in Rust. On the CPU: they are monoids
//! where they should be, and their CUDA form is what the subset promises (rounded float
//! operations, wrapping integers, named fields in the declared order). With NVRTC: every
//! kernel set compiles for each of them. On the GPU: their device `combine` agrees with the
//! Rust one bit for bit (NaN payloads aside) through `verify`, for integer, f32 and f64
//! operators, non-commutative ones and one generic over the float type, on special values
//! (zeros of both signs, infinities, NaNs, extremes, subnormals) and random bit patterns; and
//! scans agree with the sequential CPU scan at boundary lengths.
//!
//! NVRTC and GPU parts skip without them (and fail instead under MONOSCAN_REQUIRE_NVRTC=1 /
//! MONOSCAN_REQUIRE_GPU=1).

mod common;

use common::gpu::{gpu, nvrtc, Rng};
use monoscan::check::Kernels;
use monoscan::ops::{Mat2, MatMulMod};
use monoscan::{cpu, laws, Backend, Element, Monoid, Tolerance};
use proptest::prelude::*;
use std::fmt::Debug;
use std::marker::PhantomData;

// ---- the operators ----

/// The map `x -> a*x + b`.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Lin<T: Element> {
    a: T,
    b: T,
}

/// Composition of maps over u64, wrapping: exact and not commutative.
struct ComposeU64;

#[monoscan::operator]
impl Monoid for ComposeU64 {
    type Elem = Lin<u64>;
    fn identity(&self) -> Lin<u64> {
        Lin { a: 1, b: 0 }
    }
    fn combine(&self, f: &Lin<u64>, g: &Lin<u64>) -> Lin<u64> {
        Lin {
            a: g.a.wrapping_mul(f.a),
            b: g.a.wrapping_mul(f.b).wrapping_add(g.b),
        }
    }
}

/// Composition of maps over any float type: one definition, translated per instance.
struct Compose<T>(PhantomData<T>);

#[monoscan::operator(name = "compose")]
impl<T: num_traits::Float + Element> Compose<T> {
    fn identity(&self) -> Lin<T> {
        Lin {
            a: T::one(),
            b: T::zero(),
        }
    }
    fn combine(&self, f: &Lin<T>, g: &Lin<T>) -> Lin<T> {
        Lin {
            a: f.a * g.a,
            b: g.a * f.b + g.b,
        }
    }
}

fn compose<T>() -> Compose<T> {
    Compose(PhantomData)
}

impl<T: Element + monoscan::ApproxEq> monoscan::ApproxEq for Lin<T> {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.a.approx_eq(&other.a, tol) && self.b.approx_eq(&other.b, tol)
    }
}

/// A 2x2 matrix of residues.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct M2 {
    m: [u64; 4],
}

/// The product of 2x2 matrices modulo `p < 2^31`, in sequence order: the built-in `MatMulMod`
/// written once, with a function of the operator, a `#[monoscan::device]` function and a
/// parameter from `self`.
struct MatMod {
    p: u64,
}

#[monoscan::device]
fn mulmod(a: u64, b: u64, p: u64) -> u64 {
    (a * b) % p
}

#[monoscan::operator(name = "matmod_once")]
impl MatMod {
    fn identity(&self) -> M2 {
        M2 { m: [1, 0, 0, 1] }
    }
    fn combine(&self, x: &M2, y: &M2) -> M2 {
        M2 {
            m: [
                self.dot(x.m[0], y.m[0], x.m[1], y.m[2]),
                self.dot(x.m[0], y.m[1], x.m[1], y.m[3]),
                self.dot(x.m[2], y.m[0], x.m[3], y.m[2]),
                self.dot(x.m[2], y.m[1], x.m[3], y.m[3]),
            ],
        }
    }
    fn dot(&self, a: u64, b: u64, c: u64, d: u64) -> u64 {
        (mulmod(a, b, self.p) + mulmod(c, d, self.p)) % self.p
    }
}

/// The maximum-subarray summary (total, best prefix, best suffix, best), empty stretches
/// allowed.
#[derive(Element, Default, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Mss {
    total: i64,
    prefix: i64,
    suffix: i64,
    best: i64,
}

struct MaxSubarray;

#[monoscan::operator]
impl Monoid for MaxSubarray {
    type Elem = Mss;
    fn identity(&self) -> Mss {
        Mss::default()
    }
    fn combine(&self, a: &Mss, b: &Mss) -> Mss {
        // Fields out of the declared order: the CUDA struct literal follows the declaration.
        Mss {
            best: a.best.max(b.best).max(a.suffix + b.prefix),
            suffix: b.suffix.max(a.suffix + b.total),
            total: a.total + b.total,
            prefix: a.prefix.max(a.total + b.prefix),
        }
    }
}

/// Integers of every width, most of the integer subset (not a monoid: for `verify` and the
/// compiler).
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Ints {
    x: i8,
    y: i16,
    z: u32,
    w: i64,
    lanes: [u8; 4],
    flag: u8,
}

struct IntMix;

#[monoscan::operator]
impl Monoid for IntMix {
    type Elem = Ints;
    fn identity(&self) -> Ints {
        Ints {
            x: 0,
            y: 0,
            z: 0,
            w: 0,
            lanes: [0; 4],
            flag: 0,
        }
    }
    fn combine(&self, a: &Ints, b: &Ints) -> Ints {
        let s: i16 = a.y.wrapping_sub(b.y);
        let big = a.w > b.w;
        Ints {
            x: a.x.wrapping_add(b.x).wrapping_mul(3) ^ (b.x >> 2),
            y: if big {
                s.saturating_add(b.y)
            } else {
                s.wrapping_neg().max(i16::MIN + 1).abs()
            },
            z: (a.z << (b.z & 31))
                | (a.z.count_ones() + b.z.leading_zeros() + b.z.trailing_zeros()),
            w: (a.w.wrapping_mul(b.w) / ((b.w & 255) + 1)).wrapping_sub(a.w % 1_000_000_007),
            lanes: [
                a.lanes[0].max(b.lanes[(b.flag & 3) as usize]),
                a.lanes[1].wrapping_add(b.lanes[1]),
                a.lanes[2].abs_diff(b.lanes[2]),
                (a.lanes[3] as u32 + b.flag as u32) as u8,
            ],
            flag: (big as u8) | (a.flag & !b.flag),
        }
    }
}

/// f64: NaN-ignoring min and max, rounded arithmetic, fused multiply-add, square root,
/// rounding functions, a saturating cast (not a monoid: for `verify` and the compiler).
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Stats {
    lo: f64,
    hi: f64,
    sum: f64,
    scaled: f64,
}

struct F64Mix;

#[monoscan::operator]
impl Monoid for F64Mix {
    type Elem = Stats;
    fn identity(&self) -> Stats {
        Stats {
            lo: f64::NAN,
            hi: f64::NAN,
            sum: 0.0,
            scaled: 1.0,
        }
    }
    fn combine(&self, a: &Stats, b: &Stats) -> Stats {
        Stats {
            lo: a.lo.min(b.lo),
            hi: a.hi.max(b.hi),
            sum: a.sum + b.sum * 0.5 - a.scaled / 3.0,
            scaled: if a.sum.is_nan() {
                b.scaled.abs().sqrt()
            } else {
                a.scaled
                    .mul_add(b.scaled, a.hi)
                    .clamp(-1e300, 1e300)
                    .floor()
                    + (b.lo as i32) as f64
                    + b.hi.copysign(a.lo).signum()
            },
        }
    }
}

/// f32: rounded arithmetic, remainder, rounding functions, casts (not a monoid).
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Pair32 {
    u: f32,
    v: f32,
}

struct F32Mix;

#[monoscan::operator]
impl Monoid for F32Mix {
    type Elem = Pair32;
    fn identity(&self) -> Pair32 {
        Pair32 { u: 0.0, v: 0.0 }
    }
    fn combine(&self, a: &Pair32, b: &Pair32) -> Pair32 {
        Pair32 {
            u: (a.u - b.v) * 1.5 + a.v / b.u,
            v: if a.u < b.u {
                a.u.max(b.v).trunc()
            } else {
                (b.u % a.v).round().min(a.v.ceil()) + (a.u as u8) as f32
            },
        }
    }
}

// ---- CPU ----

fn lins_u64() -> impl Strategy<Value = Lin<u64>> + Clone {
    (any::<u64>(), any::<u64>()).prop_map(|(a, b)| Lin { a, b })
}

fn mats(p: u64) -> impl Strategy<Value = M2> + Clone {
    prop::array::uniform4(0..p).prop_map(|m| M2 { m })
}

fn leaf(x: i64) -> Mss {
    Mss {
        total: x,
        prefix: x.max(0),
        suffix: x.max(0),
        best: x.max(0),
    }
}

fn summaries() -> impl Strategy<Value = Mss> + Clone {
    prop::collection::vec(-1000i64..1000, 1..6).prop_map(|xs| {
        xs.into_iter()
            .map(leaf)
            .fold(Mss::default(), |a, b| MaxSubarray.combine(&a, &b))
    })
}

#[test]
fn translated_operators_are_monoids() {
    laws::check(&ComposeU64, lins_u64()).unwrap_or_else(|f| panic!("{f}"));
    laws::check(&MatMod { p: 1_000_000_007 }, mats(1_000_000_007))
        .unwrap_or_else(|f| panic!("{f}"));
    laws::check(&MaxSubarray, summaries()).unwrap_or_else(|f| panic!("{f}"));
    // Float composition regroups with rounding. With coefficients in (-1, 1), every product
    // of slopes stays within 1 and every offset within n (the split law folds up to n = 64
    // maps): each combine rounds its offset twice, by at most n * eps each, and later slopes
    // do not amplify it, so a fold is off by at most 2 * n * n * eps, and the two sides of a
    // law by twice that.
    let bound = |eps: f64| Tolerance {
        rel: 0.0,
        abs: 4.0 * 64.0 * 64.0 * eps,
    };
    let lins = (-1.0..1.0f64, -1.0..1.0f64).prop_map(|(a, b)| Lin { a, b });
    laws::Checker::new(&compose::<f64>())
        .approx(bound(f64::EPSILON))
        .max_len(64)
        .check(lins)
        .unwrap_or_else(|f| panic!("{f}"));
    let lins32 = (-1.0f32..1.0, -1.0f32..1.0).prop_map(|(a, b)| Lin { a, b });
    laws::Checker::new(&compose::<f32>())
        .approx(bound(f64::from(f32::EPSILON)))
        .max_len(64)
        .check(lins32)
        .unwrap_or_else(|f| panic!("{f}"));
}

#[test]
fn the_translated_matmod_is_the_built_in_one() {
    let p = 1_000_000_007u32;
    let builtin = MatMulMod::new(p).unwrap();
    let mut rng = Rng::new(7);
    let xs: Vec<[u32; 4]> = (0..1000)
        .map(|_| [0; 4].map(|_| rng.below(u64::from(p)) as u32))
        .collect();
    let want = cpu::seq::inclusive_scan(
        &builtin,
        &xs.iter().map(|m| Mat2::new(*m)).collect::<Vec<_>>(),
    );
    let got = cpu::seq::inclusive_scan(
        &MatMod { p: u64::from(p) },
        &xs.iter()
            .map(|m| M2 {
                m: m.map(u64::from),
            })
            .collect::<Vec<_>>(),
    );
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.m, w.m.map(u64::from));
    }
    let op = MatMod { p: u64::from(p) };
    let (x, y) = (M2 { m: [1, 1, 0, 1] }, M2 { m: [1, 0, 1, 1] });
    assert_ne!(op.combine(&x, &y), op.combine(&y, &x), "not commutative");
}

#[test]
fn floats_are_rounded_once_per_operation_and_never_contracted() {
    let f32op = compose::<f32>().cuda();
    assert_eq!(f32op.invalid, None);
    assert_eq!(f32op.elem, "Lin_float");
    assert_eq!(
        f32op.combine,
        "return Lin_float{__fmul_rn((a).a, (b).a), __fadd_rn(__fmul_rn((b).a, (a).b), (b).b)};"
    );
    assert_eq!(f32op.identity, "Lin_float{1.0f, 0.0f}");
    let f64op = compose::<f64>().cuda();
    assert_eq!(
        f64op.combine,
        "return Lin_double{__dmul_rn((a).a, (b).a), __dadd_rn(__dmul_rn((b).a, (a).b), (b).b)};"
    );
    // One definition, two instances: different elements, different kernels.
    assert_ne!(
        monoscan::codegen::prefix(&f32op),
        monoscan::codegen::prefix(&f64op)
    );
    // Literals take the operand's type: `* 1.5` on f32 is `1.5f`, not a double.
    let mix = F32Mix.cuda();
    assert!(
        mix.combine
            .contains("__fmul_rn(__fsub_rn((a).u, (b).v), 1.5f)"),
        "{}",
        mix.combine
    );
    assert!(!mix.combine.contains(" * "), "{}", mix.combine);
}

#[test]
fn struct_literals_follow_the_declared_field_order() {
    let op = MaxSubarray.cuda();
    // `total` is written third in the Rust literal, but is the first member in C++.
    let members: Vec<&str> = op
        .combine
        .trim_start_matches("return Mss{")
        .split(", ms_rs_max")
        .collect();
    assert!(
        members[0].starts_with(
            "((long long)((unsigned long long)((a).total) + (unsigned long long)((b).total)))"
        ),
        "{}",
        op.combine
    );
    // Distinct values show the order of the identity literal too.
    let e = Mss {
        total: 1,
        prefix: 2,
        suffix: 3,
        best: 4,
    };
    assert_eq!(
        e.cuda_literal().unwrap(),
        "Mss{((long long)1LL), ((long long)2LL), ((long long)3LL), ((long long)4LL)}"
    );
}

#[test]
fn every_operator_translates() {
    let ops = [
        ComposeU64.cuda(),
        compose::<f32>().cuda(),
        compose::<f64>().cuda(),
        MatMod { p: 7 }.cuda(),
        MaxSubarray.cuda(),
        IntMix.cuda(),
        F64Mix.cuda(),
        F32Mix.cuda(),
    ];
    for op in &ops {
        assert_eq!(op.invalid, None, "{}", op.name);
    }
    // The parameter from `self` is baked in: each modulus its own source.
    let op = MatMod { p: 7 }.cuda();
    assert!(
        op.prelude.contains("f_dot(") && op.prelude.contains("((unsigned long long)7ULL)"),
        "{}",
        op.prelude
    );
    assert!(
        op.prelude.contains("f_mulmod(const unsigned long long l_a"),
        "{}",
        op.prelude
    );
    assert_ne!(MatMod { p: 7 }.cuda(), MatMod { p: 11 }.cuda());
}

// ---- NVRTC ----

#[test]
fn every_kernel_set_compiles_for_every_translated_operator() {
    if !nvrtc() {
        return;
    }
    fn compiles<M: Monoid>(op: &M, elems: impl Strategy<Value = M::Elem> + Clone, arch: u32) {
        let report = monoscan::check::Check::new(op)
            .laws(laws::Checker::new(op).cases(1).equality(|_, _| true))
            .arch(arch)
            .run(elems);
        match &report.kernels {
            Kernels::Compiled { sets, .. } => assert!(sets.len() >= 8, "{report}"),
            other => panic!("{}: {other:?}", op.cuda().name),
        }
    }
    let f64s = || any::<(f64, f64)>().prop_map(|(a, b)| Lin { a, b });
    compiles(&ComposeU64, lins_u64(), 90);
    compiles(
        &compose::<f32>(),
        any::<(f32, f32)>().prop_map(|(a, b)| Lin { a, b }),
        90,
    );
    compiles(&compose::<f64>(), f64s(), 90);
    compiles(&MatMod { p: 1_000_000_007 }, mats(1_000_000_007), 90);
    compiles(&MaxSubarray, summaries(), 90);
    compiles(&IntMix, ints(), 90);
    compiles(&F64Mix, stats(), 90);
    compiles(&F32Mix, pairs32(), 90);
    // The oldest architecture NVRTC 13 takes, for the helpers' intrinsics.
    compiles(&IntMix, ints(), 75);
    compiles(&F64Mix, stats(), 75);
}

// ---- GPU: bit for bit ----

/// Equal bits, NaN payloads aside: `Debug` prints the shortest decimal that reads back to the
/// same bits (so `-0.0` and `0.0` differ) and every NaN as `NaN`.
fn same_bits<T: Debug>(x: &T, y: &T) -> bool {
    format!("{x:?}") == format!("{y:?}")
}

/// Rust leaves the sign of `min` and `max` of `+0.0` and `-0.0` unspecified (it depends on
/// the optimisation level), so a zero from them matches a zero of either sign.
fn zero_either_sign(x: f64, y: f64) -> bool {
    same_bits(&x, &y) || (x == 0.0 && y == 0.0)
}

const F64S: [f64; 14] = [
    0.0,
    -0.0,
    1.0,
    -1.5,
    0.1,
    3.0,
    5e-324,
    f64::MIN_POSITIVE,
    f64::MAX,
    f64::MIN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    -7.25e10,
];

const F32S: [f32; 14] = [
    0.0,
    -0.0,
    1.0,
    -1.5,
    0.1,
    3.0,
    1e-45,
    f32::MIN_POSITIVE,
    f32::MAX,
    f32::MIN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    300.75,
];

/// Every pair of `specials` (as left and right operand), then `random` more.
fn pairs_of<T: Copy>(specials: &[T], random: impl Fn(&mut Rng) -> T, n: usize) -> Vec<(T, T)> {
    let mut out: Vec<(T, T)> = specials
        .iter()
        .flat_map(|&x| specials.iter().map(move |&y| (x, y)))
        .collect();
    let mut rng = Rng::new(11);
    out.extend((0..n).map(|_| (random(&mut rng), random(&mut rng))));
    out
}

fn verify_on_gpu<M: Monoid>(
    op: &M,
    pairs: &[(M::Elem, M::Elem)],
    eq: impl Fn(&M::Elem, &M::Elem) -> bool,
) {
    let Some(gpu) = gpu() else { return };
    if let Some(m) = monoscan::verify::verify_pairs(gpu, op, pairs, eq).unwrap() {
        panic!("{}: {m}", op.cuda().name);
    }
}

fn stats() -> impl Strategy<Value = Stats> + Clone {
    any::<[f64; 4]>().prop_map(|[lo, hi, sum, scaled]| Stats {
        lo,
        hi,
        sum,
        scaled,
    })
}

fn pairs32() -> impl Strategy<Value = Pair32> + Clone {
    any::<(f32, f32)>().prop_map(|(u, v)| Pair32 { u, v })
}

fn ints() -> impl Strategy<Value = Ints> + Clone {
    any::<(i8, i16, u32, i64, [u8; 4], u8)>().prop_map(|(x, y, z, w, lanes, flag)| Ints {
        x,
        y,
        z,
        w,
        lanes,
        flag,
    })
}

#[test]
fn f64_operators_agree_bit_for_bit() {
    let stat = |k: usize| Stats {
        lo: F64S[k % 14],
        hi: F64S[(k * 5 + 1) % 14],
        sum: F64S[(k * 3 + 2) % 14],
        scaled: F64S[(k * 11 + 3) % 14],
    };
    let specials: Vec<Stats> = (0..14 * 4).map(stat).collect();
    let pairs = pairs_of(
        &specials,
        |r| Stats {
            lo: f64::from_bits(r.next_u64()),
            hi: f64::from_bits(r.next_u64()),
            sum: f64::from_bits(r.next_u64()),
            scaled: f64::from_bits(r.next_u64()),
        },
        20_000,
    );
    verify_on_gpu(&F64Mix, &pairs, |x, y| {
        zero_either_sign(x.lo, y.lo)
            && zero_either_sign(x.hi, y.hi)
            && same_bits(&x.sum, &y.sum)
            && same_bits(&x.scaled, &y.scaled)
    });
    let lins: Vec<Lin<f64>> = (0..14 * 14)
        .map(|k| Lin {
            a: F64S[k % 14],
            b: F64S[k / 14],
        })
        .collect();
    let pairs = pairs_of(
        &lins,
        |r| Lin {
            a: r.unit() * 4.0,
            b: f64::from_bits(r.next_u64()),
        },
        20_000,
    );
    verify_on_gpu(&compose::<f64>(), &pairs, same_bits);
}

#[test]
fn f32_operators_agree_bit_for_bit() {
    let specials: Vec<Pair32> = (0..14 * 14)
        .map(|k| Pair32 {
            u: F32S[k % 14],
            v: F32S[k / 14],
        })
        .collect();
    let random = |r: &mut Rng| Pair32 {
        u: f32::from_bits(r.next_u64() as u32),
        v: f32::from_bits(r.next_u64() as u32),
    };
    let pairs = pairs_of(&specials, random, 50_000);
    verify_on_gpu(&F32Mix, &pairs, |x, y| {
        same_bits(&x.u, &y.u) && zero_either_sign(f64::from(x.v), f64::from(y.v))
    });
    let lins: Vec<Lin<f32>> = specials.iter().map(|p| Lin { a: p.u, b: p.v }).collect();
    let pairs = pairs_of(
        &lins,
        |r| Lin {
            a: r.unit() as f32 * 4.0,
            b: f32::from_bits(r.next_u64() as u32),
        },
        50_000,
    );
    verify_on_gpu(&compose::<f32>(), &pairs, same_bits);
}

#[test]
fn integer_operators_agree_bit_for_bit() {
    let w = [
        0i64,
        1,
        -1,
        2,
        -2,
        i64::MIN,
        i64::MAX,
        i64::MIN + 1,
        1_000_000_007,
        -255,
    ];
    let specials: Vec<Ints> = (0..40)
        .map(|k| Ints {
            x: [0i8, 1, -1, i8::MIN, i8::MAX, 5][k % 6],
            y: [0i16, 1, -1, i16::MIN, i16::MAX, i16::MIN + 1, 300][k % 7],
            z: [0u32, 1, u32::MAX, 31, 32, 0x8000_0000][k % 6],
            w: w[k % 10],
            lanes: [[0u8, 255, 1, 128][k % 4], 200, [0u8, 255][k % 2], 255],
            flag: [0u8, 1, 255][k % 3],
        })
        .collect();
    let random = |r: &mut Rng| {
        let v = r.next_u64();
        Ints {
            x: v as i8,
            y: (v >> 8) as i16,
            z: (v >> 24) as u32,
            w: r.next_u64() as i64,
            lanes: ((r.next_u64() as u32).to_le_bytes()),
            flag: (v >> 56) as u8,
        }
    };
    verify_on_gpu(&IntMix, &pairs_of(&specials, random, 50_000), |x, y| x == y);
    let lins: Vec<Lin<u64>> = w
        .iter()
        .flat_map(|&a| {
            w.iter().map(move |&b| Lin {
                a: a as u64,
                b: b as u64,
            })
        })
        .collect();
    let random = |r: &mut Rng| Lin {
        a: r.next_u64(),
        b: r.next_u64(),
    };
    verify_on_gpu(&ComposeU64, &pairs_of(&lins, random, 50_000), |x, y| x == y);
    let p = 1_000_000_007u64;
    let mat = |r: &mut Rng| M2 {
        m: [0; 4].map(|_| r.below(p)),
    };
    let edge = [0, 1, p - 1, p / 2];
    let mats: Vec<M2> = (0..64)
        .map(|k| M2 {
            m: [
                edge[k % 4],
                edge[(k / 4) % 4],
                edge[(k / 16) % 4],
                edge[(k + 1) % 4],
            ],
        })
        .collect();
    verify_on_gpu(&MatMod { p }, &pairs_of(&mats, mat, 20_000), |x, y| x == y);
    let mss: Vec<Mss> = [-5i64, 0, 7]
        .iter()
        .flat_map(|&x| [1i64, -3].map(|y| MaxSubarray.combine(&leaf(x), &leaf(y))))
        .collect();
    let random = |r: &mut Rng| {
        MaxSubarray.combine(
            &leaf(r.below(2001) as i64 - 1000),
            &leaf(r.below(2001) as i64 - 1000),
        )
    };
    verify_on_gpu(&MaxSubarray, &pairs_of(&mss, random, 20_000), |x, y| x == y);
}

// ---- GPU: scans ----

#[test]
fn translated_scans_match_the_cpu_at_boundary_lengths() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(3);
    for n in [1usize, 2, 31, 1000, 1 << 20, 3_000_017] {
        let xs: Vec<Mss> = (0..n).map(|_| leaf(rng.below(201) as i64 - 100)).collect();
        let want = cpu::seq::inclusive_scan(&MaxSubarray, &xs);
        assert!(
            gpu.inclusive_scan(&MaxSubarray, &xs).unwrap() == want,
            "mss, n = {n}"
        );
        assert_eq!(
            gpu.reduce(&MaxSubarray, &xs).unwrap(),
            want[n - 1],
            "mss reduce, n = {n}"
        );
        let ls: Vec<Lin<u64>> = (0..n)
            .map(|_| Lin {
                a: rng.next_u64(),
                b: rng.next_u64(),
            })
            .collect();
        let want = cpu::seq::inclusive_scan(&ComposeU64, &ls);
        assert!(
            gpu.inclusive_scan(&ComposeU64, &ls).unwrap() == want,
            "compose, n = {n}"
        );
        let ms: Vec<M2> = (0..n)
            .map(|_| M2 {
                m: [0; 4].map(|_| rng.below(1_000_000_007)),
            })
            .collect();
        let op = MatMod { p: 1_000_000_007 };
        let want = cpu::seq::inclusive_scan(&op, &ms);
        assert!(
            gpu.inclusive_scan(&op, &ms).unwrap() == want,
            "matmod, n = {n}"
        );
    }
}
