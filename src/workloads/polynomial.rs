//! Polynomial evaluation by Horner's rule as a scan of affine maps.
//!
//! Horner evaluates `p(x) = c_n x^n + ... + c_1 x + c_0` as `y <- y*x + c_k` for
//! `k = n, n-1, ..., 0` from `y = 0`: a composition of the affine maps `y -> x*y + c_k`. Maps
//! compose associatively ([`Affine`]), so a parallel reduce of `(x, c_n), ..., (x, c_0)` gives
//! the composite map, and `p(x)` is that map applied to 0; the inclusive scan gives every
//! partial Horner value.

use crate::alloc;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::ops::{Affine, AffineMap, Flagged, Segmented};

/// The Horner maps `(x, c_n), ..., (x, c_0)` for ascending coefficients `c`.
pub fn horner_maps(coeffs: &[f64], x: f64) -> Vec<AffineMap<f64>> {
    coeffs.iter().rev().map(|&c| AffineMap::new(x, c)).collect()
}

/// `p(x)` for ascending coefficients (`coeffs[k]` multiplies `x^k`).
///
/// ```
/// use monoscan::{cpu::Sequential, workloads::polynomial::evaluate};
/// // 4 + 3x + 2x^2 at x = 10
/// assert_eq!(evaluate(&Sequential, &[4.0, 3.0, 2.0], 10.0).unwrap(), 234.0);
/// ```
pub fn evaluate<B: Backend>(backend: &B, coeffs: &[f64], x: f64) -> Result<f64> {
    Ok(backend
        .reduce(&Affine::<f64>::new(), &horner_maps(coeffs, x))?
        .apply(0.0))
}

/// Every partial Horner value: entry `j` is `c_n x^j + c_(n-1) x^(j-1) + ... + c_(n-j)`;
/// the last one is `p(x)`.
pub fn partial_values<B: Backend>(backend: &B, coeffs: &[f64], x: f64) -> Result<Vec<f64>> {
    let scanned = backend.inclusive_scan(&Affine::<f64>::new(), &horner_maps(coeffs, x))?;
    alloc::collect(scanned.iter().map(|m| m.apply(0.0)))
}

/// `p(x)` at every point, in one segmented scan (a segment of Horner maps per point).
pub fn evaluate_many<B: Backend>(backend: &B, coeffs: &[f64], points: &[f64]) -> Result<Vec<f64>> {
    if coeffs.is_empty() {
        return alloc::filled(points.len(), 0.0);
    }
    let per = coeffs.len();
    let total = per
        .checked_mul(points.len())
        .ok_or_else(|| Error::invalid("too many points times coefficients"))?;
    let mut xs = alloc::with_capacity(total)?;
    for &x in points {
        for (k, &c) in coeffs.iter().rev().enumerate() {
            xs.push(Flagged::new(AffineMap::new(x, c), k == 0));
        }
    }
    backend.inclusive_scan_in_place(&Segmented::new(Affine::<f64>::new()), &mut xs)?;
    alloc::collect((0..points.len()).map(|p| xs[(p + 1) * per - 1].value.apply(0.0)))
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// Compensated Horner (Graillat, Langlois, Louvet): as accurate as Horner in twice the
/// working precision; the reference for the error of the parallel evaluation.
pub fn compensated_horner(coeffs: &[f64], x: f64) -> f64 {
    let Some((&top, rest)) = coeffs.split_last() else {
        return 0.0;
    };
    let (mut s, mut e) = (top, 0.0);
    for &c in rest.iter().rev() {
        let (p, pi) = two_prod(s, x);
        let (t, sigma) = two_sum(p, c);
        s = t;
        e = e * x + (pi + sigma);
    }
    s + e
}

/// The condition number of evaluating `p` at `x`: `sum |c_k x^k| / |p(x)|`. The relative
/// error of any Horner-like evaluation in precision `u` is about `n * u * cond`.
pub fn condition(coeffs: &[f64], x: f64) -> f64 {
    let abs: Vec<f64> = coeffs.iter().map(|c| c.abs()).collect();
    compensated_horner(&abs, x.abs()) / compensated_horner(coeffs, x).abs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::{Parallel, Sequential};

    #[test]
    fn compensated_horner_beats_plain_horner_on_an_ill_conditioned_case() {
        // (x - 1)^5 expanded, near its root: plain Horner loses most digits.
        let c = [-1.0, 5.0, -10.0, 10.0, -5.0, 1.0];
        let x = 1.0 + 1e-3;
        let exact = 1e-15;
        let comp = compensated_horner(&c, x);
        assert!(((comp - exact) / exact).abs() < 1e-6, "{comp}");
    }

    #[test]
    fn many_points_agree_with_one_at_a_time() {
        let c: Vec<f64> = (0..50).map(|k| ((k * 7) % 11) as f64 - 5.0).collect();
        let points = [0.5, -0.75, 0.0, 1.0, 0.999];
        let many = evaluate_many(&Parallel::default(), &c, &points).unwrap();
        for (p, v) in points.iter().zip(many) {
            let one = evaluate(&Sequential, &c, *p).unwrap();
            assert!(
                (v - one).abs() <= 1e-12 * one.abs().max(1.0),
                "{p}: {v} vs {one}"
            );
        }
    }
}
