//! The operator classes of the JIT-latency benchmark and tests: one operator per class of
//! combine cost and element size, from the cheapest to the most expensive to compile. Two are
//! built-ins (`Sum<i32>`, `Affine<f64>`); the others are defined here, as a user would define
//! them (`#[derive(Element)]` and a `Monoid` with a CUDA snippet).
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

use monoscan::ops::{Affine, Sum};
use monoscan::{ApproxEq, CudaOp, Element, Monoid, Tolerance};

/// The affine map `x -> a*x + b` over integers modulo 2^32.
#[derive(Element, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Lin32 {
    /// The slope.
    pub a: u32,
    /// The offset.
    pub b: u32,
}

/// Composition of [`Lin32`] maps in sequence order (apply `a`, then `b`): exact, not
/// commutative, as cheap as an 8-byte combine gets.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinearU32;

impl Monoid for LinearU32 {
    type Elem = Lin32;
    fn identity(&self) -> Lin32 {
        Lin32 { a: 1, b: 0 }
    }
    fn combine(&self, f: &Lin32, g: &Lin32) -> Lin32 {
        Lin32 {
            a: f.a.wrapping_mul(g.a),
            b: g.a.wrapping_mul(f.b).wrapping_add(g.b),
        }
    }
    fn cuda(&self) -> CudaOp {
        let t = Lin32::cuda_name();
        CudaOp::new::<Lin32>("linear_u32")
            .identity(format!("{t}{{1u, 0u}}"))
            .combine_expr(format!("{t}{{a.a * b.a, b.a * a.b + b.b}}"))
    }
}

/// `log(exp(a) + exp(b))`, computed stably: an 8-byte f64 combine with transcendental calls.
/// Identity `-inf`; a NaN operand gives NaN; equal operands (two infinities of one sign
/// included) give `a + ln 2`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LogSumExp;

impl Monoid for LogSumExp {
    type Elem = f64;
    fn identity(&self) -> f64 {
        f64::NEG_INFINITY
    }
    fn combine(&self, a: &f64, b: &f64) -> f64 {
        let (a, b) = (*a, *b);
        if a.is_nan() || b.is_nan() {
            return a + b;
        }
        let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
        if hi == lo {
            return hi + std::f64::consts::LN_2;
        }
        hi + (lo - hi).exp().ln_1p()
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<f64>("logsumexp_f64")
            .identity(monoscan::literal::f64(f64::NEG_INFINITY))
            .combine_body(format!(
                "if (a != a || b != b) return a + b;\n\
                 const double hi = a >= b ? a : b, lo = a >= b ? b : a;\n\
                 if (hi == lo) return hi + {};\n\
                 return hi + log1p(exp(lo - hi));",
                monoscan::literal::f64(std::f64::consts::LN_2)
            ))
    }
}

/// The affine map `x -> a*x + b` modulo a prime below 2^32, in 64-bit words.
#[derive(Element, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct ModAffine {
    /// The slope, reduced.
    pub a: u64,
    /// The offset, reduced.
    pub b: u64,
}

/// Composition of [`ModAffine`] maps modulo the parameter `p` (64-bit products and
/// remainders): exact, not commutative, expensive to compile when unrolled.
#[derive(Clone, Copy, Debug)]
pub struct AffineModP {
    /// The modulus: below 2^32, so that `a*c + d` fits 64 bits.
    pub p: u64,
}

impl Default for AffineModP {
    /// The largest prime below 2^32.
    fn default() -> Self {
        AffineModP { p: 4_294_967_291 }
    }
}

impl Monoid for AffineModP {
    type Elem = ModAffine;
    fn identity(&self) -> ModAffine {
        ModAffine { a: 1, b: 0 }
    }
    fn combine(&self, f: &ModAffine, g: &ModAffine) -> ModAffine {
        ModAffine {
            a: f.a * g.a % self.p,
            b: (g.a * f.b + g.b) % self.p,
        }
    }
    fn cuda(&self) -> CudaOp {
        let t = ModAffine::cuda_name();
        CudaOp::new::<ModAffine>(format!("affine_mod_{}", self.p))
            .param("P", "unsigned long long", format!("{}ULL", self.p))
            .identity(format!("{t}{{1ULL, 0ULL}}"))
            .combine_expr(format!("{t}{{a.a * b.a % P, (b.a * a.b + b.b) % P}}"))
    }
}

/// Count, mean and sum of squared deviations of a run of observations.
#[derive(Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Moments {
    /// How many observations (a whole number).
    pub n: f64,
    /// Their mean.
    pub mean: f64,
    /// The sum of their squared deviations from the mean.
    pub m2: f64,
}

impl Moments {
    /// One observation.
    pub fn of(x: f64) -> Self {
        Moments {
            n: 1.0,
            mean: x,
            m2: 0.0,
        }
    }
}

/// Chan's merge of [`Moments`] (the parallel form of Welford's algorithm): a 24-byte f64
/// combine with divisions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Welford;

impl Monoid for Welford {
    type Elem = Moments;
    fn identity(&self) -> Moments {
        Moments {
            n: 0.0,
            mean: 0.0,
            m2: 0.0,
        }
    }
    fn combine(&self, a: &Moments, b: &Moments) -> Moments {
        if a.n == 0.0 {
            return *b;
        }
        if b.n == 0.0 {
            return *a;
        }
        let n = a.n + b.n;
        let d = b.mean - a.mean;
        Moments {
            n,
            mean: a.mean + d * (b.n / n),
            m2: a.m2 + b.m2 + d * d * (a.n * b.n / n),
        }
    }
    fn cuda(&self) -> CudaOp {
        let t = Moments::cuda_name();
        CudaOp::new::<Moments>("welford_f64")
            .identity(format!("{t}{{0.0, 0.0, 0.0}}"))
            .combine_body(format!(
                "if (a.n == 0.0) return b;\n\
                 if (b.n == 0.0) return a;\n\
                 const double n = a.n + b.n, d = b.mean - a.mean;\n\
                 {t} r;\n\
                 r.n = n;\n\
                 r.mean = a.mean + d * (b.n / n);\n\
                 r.m2 = a.m2 + b.m2 + d * d * (a.n * b.n / n);\n\
                 return r;"
            ))
    }
}

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

impl ApproxEq for Lin32 {
    fn approx_eq(&self, other: &Self, _: Tolerance) -> bool {
        self == other
    }
}

impl ApproxEq for ModAffine {
    fn approx_eq(&self, other: &Self, _: Tolerance) -> bool {
        self == other
    }
}

impl ApproxEq for Moments {
    /// Counts exactly; means and sums of squares within `tol`.
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.n == other.n && tol.close(self.mean, other.mean) && tol.close(self.m2, other.m2)
    }
}
