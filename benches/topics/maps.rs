//! Scans and reductions through an input map on the parallel CPU backend: flags (`u8`) mapped
//! to counts (`u32`) and summed, the offsets of a compaction, in one long run and along the
//! lanes of a batch, beside a copy of the same bytes.

use criterion::{BenchmarkId, Criterion, Throughput};
use monoscan::cpu::Parallel;
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::ops::Sum;
use monoscan::{Backend, Map};

pub fn bench(c: &mut Criterion) {
    let m = Sum::<u32>::new();
    let count = Map::new("flag_count", "x != 0 ? 1u : 0u", |x: &u8| {
        u32::from(*x != 0)
    });
    let b = Parallel::default();
    let mut g = c.benchmark_group("map-u8-count-u32");
    g.sample_size(10);
    let n = 1usize << 24;
    let flags: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
    let widened: Vec<u32> = flags.iter().map(|f| u32::from(*f)).collect();
    let mut out = vec![0u32; n];
    // Bytes read and written: the flags in, the counts out.
    g.throughput(Throughput::Bytes(5 * n as u64));
    g.bench_function(BenchmarkId::new("copy-u32", "2^24"), |bch| {
        bch.iter(|| out.copy_from_slice(&widened))
    });
    g.bench_function(BenchmarkId::new("cpu-rayon-map-inclusive", "2^24"), |bch| {
        bch.iter(|| b.map_inclusive_scan(&m, &count, &flags).unwrap())
    });
    g.bench_function(BenchmarkId::new("cpu-rayon-map-exclusive", "2^24"), |bch| {
        bch.iter(|| b.map_exclusive_scan_total(&m, &count, &flags, 0).unwrap())
    });
    g.throughput(Throughput::Bytes(n as u64));
    g.bench_function(BenchmarkId::new("cpu-rayon-map-reduce", "2^24"), |bch| {
        bch.iter(|| b.map_reduce(&m, &count, &flags).unwrap())
    });
    let shapes = [
        ("64x262144-dim1", Lanes::axis(&[64, 262_144], 1).unwrap()),
        ("524288x32-dim0", Lanes::axis(&[524_288, 32], 0).unwrap()),
        (
            "524288x16-every-other-of-32-dim0",
            Lanes::strided(&[524_288, 16], &[32, 2], 0).unwrap(),
        ),
    ];
    for (shape, lanes) in shapes {
        let span = lanes.span();
        g.throughput(Throughput::Bytes(5 * span as u64));
        let how = LaneScan::exclusive(0);
        g.bench_function(BenchmarkId::new("cpu-rayon-map-scan-lanes", shape), |bch| {
            bch.iter(|| {
                b.map_scan_lanes(&m, &count, &lanes, &flags[..span], &mut out[..span], &how)
                    .unwrap()
            })
        });
    }
    g.finish();
}
