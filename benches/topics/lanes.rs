//! Batched scans on the parallel CPU backend: the shapes of the batched-scan table in
//! `docs/performance.md`, columns scanned down and rows along (a few long rows, and one: a 1-D
//! scan), beside a copy of the same bytes.

use criterion::{BenchmarkId, Criterion, Throughput};
use monoscan::cpu::Parallel;
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::ops::Sum;
use monoscan::Backend;

pub fn bench(c: &mut Criterion) {
    let m = Sum::<f32>::new();
    let b = Parallel::default();
    let mut g = c.benchmark_group("lanes-sum-f32");
    g.sample_size(10);
    let mut shapes: Vec<(String, Lanes)> = [
        (8_388_608usize, 2usize, 0usize),
        (524_288, 32, 0),
        (16_384, 1_024, 0),
        (16_384, 1_024, 1),
        (3, 4_194_304, 1),
        (1, 16_777_216, 1),
    ]
    .into_iter()
    .map(|(rows, cols, axis)| {
        let lanes = Lanes::axis(&[rows, cols], axis).unwrap();
        (format!("{rows}x{cols}-dim{axis}"), lanes)
    })
    .collect();
    // The rows of a column-major (1,024 x 16,384) matrix: side by side in memory, as the
    // columns of its row-major transpose are.
    shapes.push((
        "1024x16384-dim1-column-major".into(),
        Lanes::strided(&[1_024, 16_384], &[1, 1_024], 1).unwrap(),
    ));
    // 32 of the 40 columns of a (524,288 x 40) matrix, scanned down: rows 40 elements apart.
    shapes.push((
        "524288x32-of-40-dim0".into(),
        Lanes::strided(&[524_288, 32], &[40, 1], 0).unwrap(),
    ));
    // The first 30,720 of 32,768 rows of a (16 x 32,768 x 32) tensor, scanned along its middle
    // axis: groups of columns 32,768 rows apart. Beside it the same lanes interleaved (a
    // (30,720 x 16 x 32) tensor viewed as (16 x 30,720 x 32)).
    shapes.push((
        "16x30720-of-32768x32-dim1".into(),
        Lanes::strided(&[16, 30_720, 32], &[32_768 * 32, 32, 1], 1).unwrap(),
    ));
    shapes.push((
        "16x30720x32-interleaved-dim1".into(),
        Lanes::strided(&[16, 30_720, 32], &[32, 16 * 32, 1], 1).unwrap(),
    ));
    // The same tensor's first 24 of 32 channels: groups of 24 columns 32 apart in each row.
    shapes.push((
        "16x30720x24-of-32-interleaved-dim1".into(),
        Lanes::strided(&[16, 30_720, 24], &[32, 16 * 32, 1], 1).unwrap(),
    ));
    // Every other column of a (524,288 x 32) matrix, scanned down.
    shapes.push((
        "524288x16-every-other-of-32-dim0".into(),
        Lanes::strided(&[524_288, 16], &[32, 2], 0).unwrap(),
    ));
    // Rows of 152,064 elements 152,128 apart (a padded vocabulary), scanned along.
    shapes.push((
        "64x152064-of-152128-dim1".into(),
        Lanes::strided(&[64, 152_064], &[152_128, 1], 1).unwrap(),
    ));
    // Single strided lanes, each in a run of memory of its own: one column of a (8,388,608 x
    // 2) matrix, and channel 0 of a (16 x 32,768 x 32) tensor along its middle axis.
    shapes.push((
        "8388608x2-column-0-dim0".into(),
        Lanes::strided(&[8_388_608], &[2], 0).unwrap(),
    ));
    shapes.push((
        "16x32768x32-channel-0-dim1".into(),
        Lanes::strided(&[16, 32_768], &[32_768 * 32, 32], 1).unwrap(),
    ));
    for (shape, lanes) in shapes {
        // The buffer: every element the lanes reach, and the columns between them.
        let n = lanes.span();
        let src: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let mut xs = src.clone();
        g.throughput(Throughput::Bytes(2 * 4 * n as u64));
        g.bench_function(BenchmarkId::new("copy", &shape), |bch| {
            bch.iter(|| xs.copy_from_slice(&src))
        });
        for (name, how) in [
            ("cpu-rayon-scan", LaneScan::inclusive()),
            ("cpu-rayon-scan-reverse", LaneScan::inclusive().reverse()),
        ] {
            g.bench_function(BenchmarkId::new(name, &shape), |bch| {
                bch.iter(|| b.scan_lanes(&m, &lanes, &mut xs, &how).unwrap())
            });
        }
        g.throughput(Throughput::Bytes(4 * n as u64));
        g.bench_function(BenchmarkId::new("cpu-rayon-reduce", &shape), |bch| {
            bch.iter(|| b.reduce_lanes(&m, &lanes, &src).unwrap())
        });
    }
    g.finish();
}
