//! Inclusive scans: the GPU (every algorithm, device buffers) and the CPU backends.

use criterion::{BenchmarkId, Criterion, Throughput};
use monoscan::cpu::{Parallel, Sequential};
use monoscan::ops::Sum;
use monoscan::{Algorithm, Backend, Gpu};

pub fn bench(c: &mut Criterion) {
    let m = Sum::<i32>::new();
    let mut g = c.benchmark_group("scan-sum-i32");
    g.sample_size(20);
    match Gpu::new(0) {
        Ok(gpu) => {
            for log2 in [10u32, 16, 20, 24, 28] {
                let n = 1usize << log2;
                let xs: Vec<i32> = (0..n as i32).map(|i| i % 1000).collect();
                let input = gpu.stream().clone_htod(&xs).unwrap();
                let mut out = gpu.stream().clone_htod(&xs).unwrap();
                g.throughput(Throughput::Bytes(2 * 4 * n as u64));
                for algo in [
                    Algorithm::KoggeStone,
                    Algorithm::BrentKung,
                    Algorithm::Hierarchical,
                    Algorithm::SinglePass,
                ] {
                    let scanner = gpu.scanner(&m).algorithm(algo);
                    scanner.prepare().unwrap();
                    g.bench_function(
                        BenchmarkId::new(format!("gpu-{algo}"), format!("2^{log2}")),
                        |b| {
                            b.iter(|| {
                                scanner.inclusive(&input, &mut out).unwrap();
                                gpu.synchronize().unwrap();
                            })
                        },
                    );
                }
            }
        }
        Err(e) => eprintln!("gpu scan benches skipped: {e}"),
    }
    for log2 in [10u32, 16, 20, 24] {
        let n = 1usize << log2;
        let xs: Vec<i32> = (0..n as i32).map(|i| i % 1000).collect();
        g.throughput(Throughput::Bytes(2 * 4 * n as u64));
        g.bench_function(
            BenchmarkId::new("cpu-sequential", format!("2^{log2}")),
            |b| b.iter(|| Sequential.inclusive_scan(&m, &xs).unwrap()),
        );
        g.bench_function(BenchmarkId::new("cpu-rayon", format!("2^{log2}")), |b| {
            b.iter(|| Parallel::default().inclusive_scan(&m, &xs).unwrap())
        });
    }
    g.finish();
}
