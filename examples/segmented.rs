//! Segmented work: per-segment sums of a CSR layout, running maxima within keys, and a
//! segmented scan of a non-commutative operator, on the GPU (when present) and the CPU.
//!
//! `cargo run --release --example segmented`

#[path = "common/mod.rs"]
mod common;

use monoscan::cpu::{seq, Parallel};
use monoscan::ops::{Affine, AffineMap, Max, Sum};
use monoscan::workloads::segmented;

fn main() -> monoscan::Result<()> {
    let gpu = common::gpu();
    let cpu = Parallel::default();
    let n = 20_000_000usize;
    // Segment lengths cycle through 0, 1, 7 and 1000, plus one long segment in the middle.
    let mut offsets = vec![0usize];
    let lens = [0usize, 1, 7, 1000];
    let mut k = 0;
    while *offsets.last().unwrap() < n {
        let at = *offsets.last().unwrap();
        let len = if at > n / 2 && at < n / 2 + 2000 {
            3_000_000
        } else {
            lens[k % 4]
        };
        offsets.push((at + len).min(n));
        k += 1;
    }
    let values: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1001 - 500).collect();
    println!(
        "{n} values in {} segments (empty, length 1, 7, 1000, and one of 3,000,000)",
        offsets.len() - 1
    );

    let (want, cpu_ms) =
        common::timed(|| segmented::reduce_segments(&cpu, &Sum::<i64>::new(), &values, &offsets));
    let want = want?;
    println!("reduce per segment, cpu: {cpu_ms:.1} ms");
    let naive: Vec<i64> = offsets
        .windows(2)
        .map(|w| values[w[0]..w[1]].iter().sum())
        .collect();
    common::check(want == naive, "cpu per-segment sums equal a plain loop");
    if let Some(g) = &gpu {
        segmented::reduce_segments(g, &Sum::<i64>::new(), &values[..1000], &[0, 1000])?; // compile first
        let (got, ms) =
            common::timed(|| segmented::reduce_segments(g, &Sum::<i64>::new(), &values, &offsets));
        println!("reduce per segment, gpu: {ms:.1} ms (host slices: includes the copies)");
        common::check(got? == want, "gpu per-segment sums equal the cpu's");
    }

    // Running maximum within runs of equal keys.
    let keys: Vec<u32> = (0..n as u32).map(|i| i / 4096).collect();
    let (want, cpu_ms) =
        common::timed(|| segmented::scan_by_key(&cpu, &Max::<i64>::new(), &keys, &values));
    let want = want?;
    println!("scan by key (max), cpu: {cpu_ms:.1} ms");
    if let Some(g) = &gpu {
        let (got, ms) =
            common::timed(|| segmented::scan_by_key(g, &Max::<i64>::new(), &keys, &values));
        println!("scan by key (max), gpu: {ms:.1} ms");
        common::check(got? == want, "gpu scan by key equals the cpu's");
    }

    // A non-commutative operator: per-segment composition of affine maps.
    let maps: Vec<AffineMap<f64>> = (0..n)
        .map(|i| AffineMap::new(0.999, (i % 13) as f64))
        .collect();
    let heads: Vec<bool> = (0..n).map(|i| i % 100_000 == 0).collect();
    let reference = {
        let mut out = Vec::with_capacity(n);
        let mut acc = AffineMap::new(1.0, 0.0);
        for (m, &h) in maps.iter().zip(&heads) {
            acc = if h {
                *m
            } else {
                seq::reduce(&Affine::new(), &[acc, *m])
            };
            out.push(acc);
        }
        out
    };
    let (cpu_got, cpu_ms) =
        common::timed(|| segmented::scan_by_heads(&cpu, &Affine::<f64>::new(), &maps, &heads));
    println!("segmented affine scan, cpu: {cpu_ms:.1} ms");
    let close = |xs: &[AffineMap<f64>]| {
        xs.iter()
            .zip(&reference)
            .all(|(x, y)| (x.b - y.b).abs() <= 1e-9 * y.b.abs().max(1.0))
    };
    common::check(
        close(&cpu_got?),
        "cpu segmented affine scan matches the sequential fold",
    );
    if let Some(g) = &gpu {
        let (got, ms) =
            common::timed(|| segmented::scan_by_heads(g, &Affine::<f64>::new(), &maps, &heads));
        println!("segmented affine scan, gpu: {ms:.1} ms");
        common::check(
            close(&got?),
            "gpu segmented affine scan matches the sequential fold",
        );
    }
    Ok(())
}
