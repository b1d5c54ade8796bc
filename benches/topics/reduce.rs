//! Reductions: the GPU (tree and tiled) and the CPU backends.

use criterion::{BenchmarkId, Criterion, Throughput};
use monoscan::cpu::Parallel;
use monoscan::ops::Sum;
use monoscan::{Algorithm, Backend, Gpu};

pub fn bench(c: &mut Criterion) {
    let m = Sum::<i32>::new();
    let mut g = c.benchmark_group("reduce-sum-i32");
    g.sample_size(20);
    match Gpu::new(0) {
        Ok(gpu) => {
            for log2 in [10u32, 16, 20, 24, 28] {
                let n = 1usize << log2;
                let xs: Vec<i32> = (0..n as i32).map(|i| i % 1000).collect();
                let input = gpu.stream().clone_htod(&xs).unwrap();
                let mut total = gpu.stream().clone_htod(&[0i32]).unwrap();
                g.throughput(Throughput::Bytes(4 * n as u64));
                for (algo, name) in [
                    (Algorithm::BrentKung, "gpu-tree"),
                    (Algorithm::Auto, "gpu-tiled"),
                ] {
                    let scanner = gpu.scanner(&m).algorithm(algo);
                    scanner.prepare().unwrap();
                    g.bench_function(BenchmarkId::new(name, format!("2^{log2}")), |b| {
                        b.iter(|| {
                            scanner.reduce(&input, &mut total).unwrap();
                            gpu.synchronize().unwrap();
                        })
                    });
                }
            }
        }
        Err(e) => eprintln!("gpu reduce benches skipped: {e}"),
    }
    for log2 in [16u32, 20, 24] {
        let n = 1usize << log2;
        let xs: Vec<i32> = (0..n as i32).map(|i| i % 1000).collect();
        g.throughput(Throughput::Bytes(4 * n as u64));
        g.bench_function(BenchmarkId::new("cpu-rayon", format!("2^{log2}")), |b| {
            b.iter(|| Parallel::default().reduce(&m, &xs).unwrap())
        });
    }
    g.finish();
    // A float sum, whose add the processor cannot start before the last one ends: the CPU
    // backend's folds step several chains together.
    let m = Sum::<f32>::new();
    let mut g = c.benchmark_group("reduce-sum-f32");
    g.sample_size(20);
    for log2 in [16u32, 20, 24] {
        let n = 1usize << log2;
        let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
        g.throughput(Throughput::Bytes(4 * n as u64));
        g.bench_function(BenchmarkId::new("cpu-rayon", format!("2^{log2}")), |b| {
            b.iter(|| Parallel::default().reduce(&m, &xs).unwrap())
        });
    }
    g.finish();
}
