//! The expensive f64 combines: transcendental calls (log-sum-exp) and divisions (Welford's
//! moments), with tolerances derived from the rounding of each combine.

use super::{generate, Class};
use crate::approx::{ApproxEq, Tolerance};
use crate::monoid::{CudaOp, Monoid};
use crate::Element;

/// `log(exp(a) + exp(b))`, computed stably: an 8-byte f64 combine with transcendental calls.
/// Identity `-inf`; a NaN operand gives NaN; equal operands (two infinities of one sign
/// included) give `a + ln 2`. Its CUDA form is a snippet (CUDA's `exp` and `log1p`, which the
/// translator does not cover).
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
            .identity(crate::literal::f64(f64::NEG_INFINITY))
            .combine_body(format!(
                "if (a != a || b != b) return a + b;\n\
                 const double hi = a >= b ? a : b, lo = a >= b ? b : a;\n\
                 if (hi == lo) return hi + {};\n\
                 return hi + log1p(exp(lo - hi));",
                crate::literal::f64(std::f64::consts::LN_2)
            ))
    }
}

impl LogSumExp {
    /// How far two evaluations, in any grouping, of log-sum-exp prefixes of `n` values whose
    /// finite ones are at most `max_abs` in size may differ.
    ///
    /// Every value computed lies in `[min x, max x + ln n]`, so its size is at most
    /// `m = max_abs + ln(n + 1)`. One combine `hi + log1p(exp(lo - hi))` rounds `lo - hi` (an
    /// error of at most `eps m`, which the derivative of `log1p(exp(t))`, at most 1/2, halves),
    /// `exp` and `log1p` (at most 2 ulps each of values at most 1, CUDA's and the C library's
    /// alike) and the final sum (`eps m / 2`): at most `(m + 5) eps` in all. The combine's
    /// partial derivatives are non-negative and sum to 1, so errors of the operands pass on
    /// without growing, and a result is off by at most its depth (at most `n` combines) times
    /// that. Two evaluations: twice.
    pub fn tolerance_for(n: usize, max_abs: f64) -> Tolerance {
        let n = n as f64;
        let m = max_abs + (n + 1.0).ln();
        Tolerance {
            rel: 0.0,
            abs: 2.0 * n * (m + 5.0) * f64::EPSILON,
        }
    }
}

impl Class for LogSumExp {
    const NAME: &'static str = "logsumexp-f64";
    const COMBINE: &'static str = "log(exp(a) + exp(b)): exp, log1p";
    const COMMUTATIVE: bool = true;
    type Tolerance = Tolerance;
    /// Uniform in `[-10, 10)`.
    fn generate(&self, n: usize, seed: u64) -> Vec<f64> {
        generate(n, seed, |r| 10.0 * r.unit())
    }
    /// [`LogSumExp::tolerance_for`] over the finite values of `xs`.
    fn tolerance(&self, xs: &[f64]) -> Tolerance {
        let max_abs = xs
            .iter()
            .filter(|x| x.is_finite())
            .fold(0.0f64, |m, x| m.max(x.abs()));
        LogSumExp::tolerance_for(xs.len(), max_abs)
    }
    /// Generated values are below 10 in size.
    fn generated_tolerance(&self, n: usize) -> Tolerance {
        LogSumExp::tolerance_for(n, 10.0)
    }
    fn agrees(&self, tol: &Tolerance, got: &f64, want: &f64) -> bool {
        tol.close(*got, *want)
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
/// combine with divisions. Its CUDA form is a snippet.
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

/// How far [`Moments`] computed in two groupings may differ: counts exactly, means and sums of
/// squared deviations each within its own bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MomentsTolerance {
    /// For the means.
    pub mean: Tolerance,
    /// For the sums of squared deviations.
    pub m2: Tolerance,
}

impl Welford {
    /// The tolerance for merges of `n` [`Moments`] holding `count` observations in all, whose
    /// means are at most `max_abs` in size and whose merge has `m2_total` squared deviations.
    ///
    /// Means: a merged mean is a weighted average of its operands' (weights summing to 1), so
    /// errors pass on without growing, and each merge adds at most `7 eps max_abs` (the rounding
    /// of `d = b.mean - a.mean`, of `b.n / n`, of the product and of the sum): a mean is off by
    /// at most `E = 8 n eps max_abs`.
    ///
    /// Sums of squared deviations: every merge adds its operands' errors (coefficients 1) and
    /// the error of `d d (a.n b.n / n)` and of the sums. With `|d| <= 2 max_abs` and `d` off by
    /// at most `2E + 2 eps max_abs`, a merge adds at most `8 max_abs (E + eps max_abs) w` with
    /// `w = a.n b.n / n <= min(a.n, b.n)`; over any merge tree the `w` sum to at most
    /// `count log2(count) / 2` (each observation is on the smaller side at most `log2 count`
    /// times). The roundings of the term and of the sums add at most `6 eps` of a value no larger
    /// than `m2_total` (the squared deviations of a part never exceed those of the whole) per
    /// merge, at most `2n` merges. Two evaluations: twice each.
    pub fn tolerance_for(n: usize, count: f64, max_abs: f64, m2_total: f64) -> MomentsTolerance {
        let eps = f64::EPSILON;
        let nf = n as f64;
        let e = 8.0 * nf * eps * max_abs;
        let log2 = count.max(2.0).log2();
        let spread = 4.0 * max_abs * (e + eps * max_abs) * count * log2;
        let rounding = 12.0 * nf * eps * m2_total.abs();
        MomentsTolerance {
            mean: Tolerance {
                rel: 0.0,
                abs: 2.0 * e,
            },
            m2: Tolerance {
                rel: 0.0,
                abs: 2.0 * (spread + rounding),
            },
        }
    }
}

impl Class for Welford {
    const NAME: &'static str = "welford-f64";
    const COMBINE: &'static str =
        "Chan's merge of count, mean and squared deviations: f64 divisions";
    const COMMUTATIVE: bool = true;
    type Tolerance = MomentsTolerance;
    /// Single observations uniform in `[2, 4)`: a mean away from zero, so the merges subtract
    /// close numbers.
    fn generate(&self, n: usize, seed: u64) -> Vec<Moments> {
        generate(n, seed, |r| Moments::of(3.0 + r.unit()))
    }
    /// [`Welford::tolerance_for`] over `xs` (its count and squared deviations from the
    /// sequential merge).
    fn tolerance(&self, xs: &[Moments]) -> MomentsTolerance {
        let max_abs = xs.iter().fold(0.0f64, |m, x| m.max(x.mean.abs()));
        let total = crate::cpu::seq::reduce(self, xs);
        Welford::tolerance_for(xs.len(), total.n, max_abs, total.m2)
    }
    /// Generated observations lie in `[2, 4)`: means below 4 in size, deviations below 2, so
    /// `n` of them have at most `4n` squared deviations.
    fn generated_tolerance(&self, n: usize) -> MomentsTolerance {
        let n_f = n as f64;
        Welford::tolerance_for(n, n_f, 4.0, 4.0 * n_f)
    }
    fn agrees(&self, tol: &MomentsTolerance, got: &Moments, want: &Moments) -> bool {
        got.n == want.n && tol.mean.close(got.mean, want.mean) && tol.m2.close(got.m2, want.m2)
    }
}

impl ApproxEq for Moments {
    /// Counts exactly; means and sums of squares within `tol`.
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.n == other.n && tol.close(self.mean, other.mean) && tol.close(self.m2, other.m2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::seq;

    #[test]
    fn log_sum_exp_follows_its_definition() {
        let lse = LogSumExp;
        assert!((lse.combine(&0.0, &0.0) - std::f64::consts::LN_2).abs() < 1e-15);
        assert_eq!(lse.combine(&f64::NEG_INFINITY, &1.5), 1.5);
        assert_eq!(lse.combine(&f64::INFINITY, &1.5), f64::INFINITY);
        assert!(lse.combine(&f64::NAN, &1.5).is_nan());
        let want = (1f64.exp() + 2f64.exp()).ln();
        assert!((lse.combine(&1.0, &2.0) - want).abs() < 4.0 * f64::EPSILON * want);
    }

    #[test]
    fn the_float_tolerances_hold_between_groupings_and_catch_a_lost_element() {
        // Pairwise against sequential: a grouping other than the left fold stays within the
        // derived bounds; dropping one element does not.
        fn pairwise<M: Monoid>(m: &M, xs: &[M::Elem]) -> M::Elem {
            match xs.len() {
                0 => m.identity(),
                1 => xs[0],
                n => m.combine(&pairwise(m, &xs[..n / 2]), &pairwise(m, &xs[n / 2..])),
            }
        }
        let xs = LogSumExp.generate(100_000, 2);
        let tol = LogSumExp.tolerance(&xs);
        let (seq, par) = (seq::reduce(&LogSumExp, &xs), pairwise(&LogSumExp, &xs));
        assert!(LogSumExp.agrees(&tol, &par, &seq), "{par} {seq} {tol:?}");
        let top = (0..xs.len())
            .max_by(|&i, &j| xs[i].total_cmp(&xs[j]))
            .unwrap();
        let mut lost = xs.clone();
        lost.remove(top);
        let lost = pairwise(&LogSumExp, &lost);
        assert!(!LogSumExp.agrees(&tol, &lost, &seq), "{lost} {seq} {tol:?}");

        let ms = Welford.generate(100_000, 2);
        let tol = Welford.tolerance(&ms);
        let (seq, par) = (seq::reduce(&Welford, &ms), pairwise(&Welford, &ms));
        assert!(Welford.agrees(&tol, &par, &seq), "{par:?} {seq:?} {tol:?}");
        let mut changed = ms.clone();
        changed[500].mean += 1e-3;
        let off = pairwise(&Welford, &changed);
        assert!(!Welford.agrees(&tol, &off, &seq), "{off:?} {seq:?} {tol:?}");
    }
}
