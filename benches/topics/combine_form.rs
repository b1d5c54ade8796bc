//! Run time of the two combine forms (`CombineForm::Inline`, `CombineForm::Outlined`) for the
//! operators whose combine the cost policy outlines: the modular matrix product (built in) and
//! the expensive operator classes of `tests/common/classes.rs`. Inclusive scans of 2^20 and
//! 2^24 elements (default algorithm, device buffers), each form on its own `Gpu`, so that the
//! policy's choice can be checked against the inlined code it replaces. GPU only.

use crate::classes::{AffineModP, LogSumExp, ModAffine, Moments, Welford};
use criterion::{BenchmarkId, Criterion, Throughput};
use monoscan::ops::{Mat2, MatMulMod};
use monoscan::tuning::{CombineForm, Tuning};
use monoscan::{Gpu, Monoid};

/// Benches `m` over `xs` (repeated to each size) in both forms.
fn both_forms<M: Monoid>(c: &mut Criterion, name: &str, m: &M, xs: &[M::Elem]) {
    let mut g = c.benchmark_group(format!("combine-form-{name}"));
    g.sample_size(20);
    for form in [CombineForm::Inline, CombineForm::Outlined] {
        let tuning = Tuning {
            combine: Some(form),
            ..Tuning::default()
        };
        let gpu = Gpu::new(0).unwrap().with_tuning(tuning).unwrap();
        let scanner = gpu.scanner(m);
        scanner.prepare().unwrap();
        for log2 in [20u32, 24] {
            let n = 1usize << log2;
            let data: Vec<M::Elem> = xs.iter().copied().cycle().take(n).collect();
            let input = gpu.stream().clone_htod(&data).unwrap();
            let mut out = gpu.stream().clone_htod(&data).unwrap();
            g.throughput(Throughput::Bytes(
                2 * (n * std::mem::size_of::<M::Elem>()) as u64,
            ));
            g.bench_function(BenchmarkId::new(form.name(), format!("2^{log2}")), |b| {
                b.iter(|| {
                    scanner.inclusive(&input, &mut out).unwrap();
                    gpu.synchronize().unwrap();
                })
            });
        }
    }
    g.finish();
}

pub fn bench(c: &mut Criterion) {
    if let Err(e) = Gpu::new(0) {
        eprintln!("combine-form benches skipped: {e}");
        return;
    }
    let p = 1_000_000_007u32;
    let mats: Vec<Mat2> = (0..4096u32)
        .map(|i| Mat2::new([i % p, (i * 7 + 1) % p, (i * 13 + 2) % p, (i * 31 + 3) % p]))
        .collect();
    both_forms(c, "matmod", &MatMulMod::default(), &mats);
    let lse: Vec<f64> = (0..4096).map(|i| f64::from(i % 200) - 100.0).collect();
    both_forms(c, "logsumexp-f64", &LogSumExp, &lse);
    let m = AffineModP::default();
    let maps: Vec<ModAffine> = (0..4096u64)
        .map(|i| ModAffine {
            a: (i * 2_654_435_761) % m.p,
            b: (i * 40_503 + 1) % m.p,
        })
        .collect();
    both_forms(c, "affine-mod-u64", &m, &maps);
    let obs: Vec<Moments> = lse.iter().map(|&x| Moments::of(x)).collect();
    both_forms(c, "welford-f64", &Welford, &obs);
}
