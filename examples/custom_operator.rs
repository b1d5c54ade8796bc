//! A custom operator defined once, in Rust: the maximum-subarray monoid. Each element
//! summarises a stretch of numbers by its total, its best prefix, its best suffix and its best
//! subarray sum (empty stretches allowed, so all but the total are at least 0); combining two
//! stretches gives the summary of their concatenation. `#[monoscan::operator]` writes the CUDA
//! form from the Rust `combine`; there is no CUDA text here.
//!
//! The operator is law-checked (and its kernels compiled, where NVRTC is installed), then an
//! inclusive scan gives the best subarray sum of every prefix, on the GPU when there is one
//! and on the CPU otherwise, compared with Kadane's algorithm.
//!
//! `cargo run --release --example custom_operator`

#[path = "common/mod.rs"]
mod common;

use monoscan::{cpu, Backend, Element, Monoid};
use proptest::prelude::*;

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
        Mss {
            total: a.total + b.total,
            prefix: a.prefix.max(a.total + b.prefix),
            suffix: b.suffix.max(a.suffix + b.total),
            best: a.best.max(b.best).max(a.suffix + b.prefix),
        }
    }
}

/// The summary of the one-number stretch `[x]`.
fn leaf(x: i64) -> Mss {
    let best = x.max(0);
    Mss {
        total: x,
        prefix: best,
        suffix: best,
        best,
    }
}

/// Summaries of short stretches of numbers in -1000..1000: the elements the laws quantify
/// over (a summary of an actual stretch, as every scanned element is).
fn summaries() -> impl Strategy<Value = Mss> + Clone {
    prop::collection::vec(-1000i64..1000, 1..6).prop_map(|xs| {
        xs.into_iter()
            .map(leaf)
            .fold(Mss::default(), |a, b| MaxSubarray.combine(&a, &b))
    })
}

/// Kadane's algorithm: the best subarray sum of every prefix.
fn kadane(xs: &[i64]) -> Vec<i64> {
    let (mut ending_here, mut best) = (0i64, 0i64);
    xs.iter()
        .map(|&x| {
            ending_here = (ending_here + x).max(0);
            best = best.max(ending_here);
            best
        })
        .collect()
}

fn main() -> monoscan::Result<()> {
    // The laws, the kernels compiled for sm_90 (needs NVRTC) and, with a GPU, the device's
    // combine against the host's: one call.
    let report = monoscan::check(&MaxSubarray, summaries(), 90);
    println!("{report}");
    common::check(report.passed(), "monoscan::check (laws, kernels, device)");

    let n = 10_000_000usize;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let xs: Vec<i64> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 201) as i64 - 100
        })
        .collect();
    let leaves: Vec<Mss> = xs.iter().map(|&x| leaf(x)).collect();

    let (scanned, ms) = match common::gpu() {
        Some(gpu) => {
            gpu.prepare(&MaxSubarray)?;
            let (s, ms) = common::timed(|| gpu.inclusive_scan(&MaxSubarray, &leaves));
            println!("inclusive scan of {n} summaries on the GPU (with the copies to and from it)");
            (s?, ms)
        }
        None => {
            let (s, ms) =
                common::timed(|| cpu::Parallel::default().inclusive_scan(&MaxSubarray, &leaves));
            println!("inclusive scan of {n} summaries on the CPU (rayon)");
            (s?, ms)
        }
    };
    println!("  took {ms:.1} ms");

    let (want, kadane_ms) = common::timed(|| kadane(&xs));
    println!("Kadane's algorithm, sequential: {kadane_ms:.1} ms");
    let first_diff = (0..n).find(|&i| scanned[i].best != want[i]);
    common::check(
        first_diff.is_none(),
        "the best subarray sum of every prefix equals Kadane's",
    );
    let total: i64 = xs.iter().sum();
    common::check(scanned[n - 1].total == total, "the last total is the sum");
    println!(
        "best subarray sum of all {n} numbers: {} (their sum: {total})",
        scanned[n - 1].best
    );
    Ok(())
}
