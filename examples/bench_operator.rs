//! Benchmarks an operator of your own: its scan and reduction on the GPU beside a copy and a
//! read of the same bytes and beside its roofline floors, from its combine rate R measured on
//! the device (`monoscan::bench::operator`, `monoscan::bench::combine_rate`), then every
//! algorithm on it, checked against the sequential reference, timed, with its combines counted
//! (`monoscan::bench::lab::run`). Without a GPU, the lab runs the CPU backend alone.
//!
//! ```sh
//! cargo run --release --example bench_operator -- [--max-log2 26] [--reps 20]
//! ```
//!
//! To measure your operator, copy this file into your crate's `examples/` and replace
//! `MaxSubarray` and `input` by your element, operator and data.

#[path = "common/mod.rs"]
mod common;

use monoscan::bench::{self, lab, Timer};
use monoscan::{CudaOp, Monoid};

/// The best sum of a contiguous run (the empty run included, so at least 0), with what
/// combining needs: the total, the best prefix and the best suffix. The classic maximum-subarray
/// monoid: exact on integers and not commutative.
#[derive(monoscan::Element, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
#[monoscan(cuda_name = "max_sub")]
struct MaxSub {
    total: i64,
    prefix: i64,
    suffix: i64,
    best: i64,
}

impl MaxSub {
    /// The summary of one value.
    fn of(x: i64) -> Self {
        let p = x.max(0);
        MaxSub {
            total: x,
            prefix: p,
            suffix: p,
            best: p,
        }
    }
}

struct MaxSubarray;

impl Monoid for MaxSubarray {
    type Elem = MaxSub;
    fn identity(&self) -> MaxSub {
        MaxSub::of(0)
    }
    fn combine(&self, a: &MaxSub, b: &MaxSub) -> MaxSub {
        MaxSub {
            total: a.total + b.total,
            prefix: a.prefix.max(a.total + b.prefix),
            suffix: b.suffix.max(b.total + a.suffix),
            best: a.best.max(b.best).max(a.suffix + b.prefix),
        }
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<MaxSub>("max_subarray")
            .identity("max_sub{0, 0, 0, 0}")
            .prelude(
                "__device__ __forceinline__ long long ms_max(long long x, long long y) { \
                 return x > y ? x : y; }",
            )
            .combine_expr(
                "max_sub{a.total + b.total, ms_max(a.prefix, a.total + b.prefix), \
                 ms_max(b.suffix, b.total + a.suffix), \
                 ms_max(ms_max(a.best, b.best), a.suffix + b.prefix)}",
            )
    }
}

/// The input: values in [-500, 500], scattered.
fn input(n: usize) -> Vec<MaxSub> {
    (0..n as i64)
        .map(|i| MaxSub::of((i * 7919) % 1001 - 500))
        .collect()
}

/// `--max-log2 N` and `--reps R`, with their defaults.
fn args() -> Result<(u32, usize), String> {
    let (mut max_log2, mut reps) = (26u32, 20usize);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--max-log2" => max_log2 = value.parse().map_err(|e| format!("{flag}: {e}"))?,
            "--reps" => reps = value.parse().map_err(|e| format!("{flag}: {e}"))?,
            _ => {
                return Err(format!(
                    "unknown argument {flag} (known: --max-log2, --reps)"
                ))
            }
        }
    }
    if !(10..=28).contains(&max_log2) || reps == 0 {
        return Err("need 10 <= --max-log2 <= 28 and --reps >= 1".into());
    }
    Ok((max_log2, reps))
}

fn main() -> monoscan::Result<()> {
    let (max_log2, reps) = args().map_err(monoscan::Error::InvalidArgument)?;
    let gpu = common::gpu();
    let xs = input(1 << max_log2);
    if let Some(gpu) = &gpu {
        let sizes: Vec<usize> = (10..=max_log2).step_by(2).map(|l| 1 << l).collect();
        let timer = Timer::new(gpu).reps(reps);
        let report = bench::operator(&timer, &MaxSubarray, &xs, &sizes)?;
        print!("{report}");
        if let Some(p) = report.points.last() {
            // At the largest size: what bounds the scan, and how close it runs to that bound.
            let (bound, floor) = if p.scan_compute_bound() {
                ("its combines at R", p.scan_floor_ms)
            } else {
                ("the copy", p.copy_ms)
            };
            println!(
                "roofline at n = {}: the scan's floor is {bound} ({floor:.4} ms; 2n / R = {:.4} ms), the scan runs at {:.3} of it",
                p.n,
                report.rate.combines_ms(2.0 * p.n as f64),
                p.scan_of_floor()
            );
        }
    }
    // The lab: every algorithm on 2^20 elements (fewer when asked for fewer).
    let n = 1usize << max_log2.min(20);
    println!(
        "\nlab on {n} elements (on the GPU, combines are counted on the device; `block` is the \
         first-level block scans beside the textbook formula)"
    );
    println!(
        "{:<24} {:>10} {:>8} {:>14} {:>28}",
        "algorithm", "ms", "correct", "combines", "block: measured / formula"
    );
    let rows = lab::run(
        gpu.as_ref(),
        &MaxSubarray,
        &xs[..n],
        reps.min(lab::MAX_REPS),
    )?;
    for row in &rows {
        let block = row
            .block
            .map(|b| format!("{} / {}", b.measured, b.formula))
            .unwrap_or_default();
        println!(
            "{:<24} {:>10.4} {:>8} {:>14} {:>28}",
            row.name, row.ms, row.correct, row.combines, block
        );
    }
    common::check(
        rows.iter().all(|r| r.correct),
        "every algorithm matches the sequential scan",
    );
    Ok(())
}
