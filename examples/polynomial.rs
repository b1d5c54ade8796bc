//! Polynomial evaluation by Horner's rule as a scan of affine maps: a polynomial of degree
//! 10^7 at one point (its value by a reduce, every partial Horner value by a scan), and one
//! polynomial at many points in one call; the error against compensated Horner on the CPU.
//!
//! `cargo run --release --example polynomial [-- DEGREE]`

#[path = "common/mod.rs"]
mod common;

use monoscan::cpu::Parallel;
use monoscan::workloads::polynomial;

fn main() -> monoscan::Result<()> {
    let degree: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let gpu = common::gpu();
    let cpu = Parallel::default();
    // Pseudo-random coefficients in [-1, 1).
    let coeffs: Vec<f64> = (0..=degree as u64)
        .map(|k| {
            ((k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect();
    let x = 0.999_999;
    let (reference, ref_ms) = common::timed(|| polynomial::compensated_horner(&coeffs, x));
    let cond = polynomial::condition(&coeffs, x);
    println!("degree {degree} at x = {x}: compensated Horner (cpu, sequential) = {reference:.17e} in {ref_ms:.1} ms; condition number {cond:.3e}");

    let report = |who: &str, value: f64, ms: f64| {
        let rel = ((value - reference) / reference).abs();
        println!("{who}: p(x) = {value:.17e}, relative error {rel:.3e} ({ms:.1} ms)");
        rel
    };
    let (v, ms) = common::timed(|| polynomial::evaluate(&cpu, &coeffs, x));
    let cpu_err = report("cpu (rayon) reduce", v?, ms);
    common::check(cpu_err < 1e-9, "cpu relative error below 1e-9");
    if let Some(g) = &gpu {
        polynomial::evaluate(g, &coeffs[..10], x)?; // compile first
        let (v, ms) = common::timed(|| polynomial::evaluate(g, &coeffs, x));
        let gpu_err = report("gpu reduce (host slices, includes the copies)", v?, ms);
        common::check(gpu_err < 1e-9, "gpu relative error below 1e-9");
        let (partial, ms) = common::timed(|| polynomial::partial_values(g, &coeffs, x));
        let partial = partial?;
        println!("gpu scan: {} partial Horner values in {ms:.1} ms; the last one's relative error {:.3e}", partial.len(), ((partial[degree] - reference) / reference).abs());
    }

    // One polynomial of degree 10^4 at 256 points, in one segmented scan.
    let points: Vec<f64> = (0..256).map(|i| -1.0 + 2.0 * i as f64 / 255.0).collect();
    let small = &coeffs[..=10_000];
    let worst = |values: &[f64]| {
        values
            .iter()
            .zip(&points)
            .map(|(v, &p)| {
                let r = polynomial::compensated_horner(small, p);
                ((v - r) / r).abs() / polynomial::condition(small, p)
            })
            .fold(0.0f64, f64::max)
    };
    let (many, ms) = common::timed(|| polynomial::evaluate_many(&cpu, small, &points));
    let cpu_worst = worst(&many?);
    println!("cpu: 256 points of a degree-10^4 polynomial in {ms:.1} ms; worst relative error / condition {cpu_worst:.2e}");
    common::check(
        cpu_worst < 1e-11,
        "cpu many-point errors within the conditioning bound",
    );
    if let Some(g) = &gpu {
        let (many, ms) = common::timed(|| polynomial::evaluate_many(g, small, &points));
        let gpu_worst = worst(&many?);
        println!("gpu: 256 points in {ms:.1} ms; worst relative error / condition {gpu_worst:.2e}");
        common::check(
            gpu_worst < 1e-11,
            "gpu many-point errors within the conditioning bound",
        );
    }
    Ok(())
}
