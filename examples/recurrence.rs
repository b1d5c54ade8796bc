//! Linear recurrences x_t = a_t * x_(t-1) + b_t as scans of affine maps: an exponential moving
//! average of a long signal, and a diagonal state-space recurrence over many channels (the
//! recurrence of a selective-scan layer), checked against the sequential loops.
//!
//! `cargo run --release --example recurrence`

#[path = "common/mod.rs"]
mod common;

use monoscan::cpu::Parallel;
use monoscan::workloads::recurrence;

fn main() -> monoscan::Result<()> {
    let gpu = common::gpu();
    let cpu = Parallel::default();

    let n = 10_000_000usize;
    let u: Vec<f64> = (0..n)
        .map(|t| (t as f64 * 0.001).sin() + ((t * 7919) % 101) as f64 * 0.01)
        .collect();
    let alpha = 0.01;
    let (reference, seq_ms) = common::timed(|| {
        let mut x = 0.0;
        u.iter()
            .map(|ut| {
                x = (1.0 - alpha) * x + alpha * ut;
                x
            })
            .collect::<Vec<f64>>()
    });
    println!("EMA of {n} samples, alpha {alpha}: sequential loop {seq_ms:.1} ms");
    let worst = |xs: &[f64]| {
        xs.iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f64, f64::max)
    };
    let (got, ms) = common::timed(|| recurrence::ema(&cpu, &u, alpha, 0.0));
    let e = worst(&got?);
    println!("cpu (rayon) scan: {ms:.1} ms, max abs error {e:.2e}");
    common::check(e < 1e-9, "cpu EMA matches the loop");
    if let Some(g) = &gpu {
        recurrence::ema(g, &u[..100], alpha, 0.0)?; // compile first
        let (got, ms) = common::timed(|| recurrence::ema(g, &u, alpha, 0.0));
        let e = worst(&got?);
        println!("gpu scan (host slices, includes the copies): {ms:.1} ms, max abs error {e:.2e}");
        common::check(e < 1e-9, "gpu EMA matches the loop");
    }

    // x_t[c] = a_t[c] x_(t-1)[c] + bu_t[c] over 64 channels and 100,000 steps, time-major.
    let (steps, channels) = (100_000usize, 64usize);
    let a: Vec<f64> = (0..steps * channels)
        .map(|i| 0.9 + 0.1 * (((i * 2_654_435_761) >> 9) % 1000) as f64 / 1000.0)
        .collect();
    let bu: Vec<f64> = (0..steps * channels)
        .map(|i| ((i * 7919) % 2001) as f64 / 1000.0 - 1.0)
        .collect();
    let mut reference = vec![0.0; a.len()];
    let mut x = vec![0.0; channels];
    for t in 0..steps {
        for (c, xc) in x.iter_mut().enumerate() {
            let i = t * channels + c;
            *xc = a[i] * *xc + bu[i];
            reference[i] = *xc;
        }
    }
    let worst = |xs: &[f64]| {
        xs.iter()
            .zip(&reference)
            .map(|(p, q)| (p - q).abs() / q.abs().max(1.0))
            .fold(0.0f64, f64::max)
    };
    let (got, ms) = common::timed(|| recurrence::diagonal_ssm(&cpu, &a, &bu, channels));
    let e = worst(&got?);
    println!(
        "diagonal SSM, {channels} channels x {steps} steps: cpu {ms:.1} ms, max rel error {e:.2e}"
    );
    common::check(e < 1e-9, "cpu SSM matches the loop");
    if let Some(g) = &gpu {
        let (got, ms) = common::timed(|| recurrence::diagonal_ssm(g, &a, &bu, channels));
        let e = worst(&got?);
        println!("diagonal SSM on the gpu: {ms:.1} ms, max rel error {e:.2e}");
        common::check(e < 1e-9, "gpu SSM matches the loop");
    }
    Ok(())
}
