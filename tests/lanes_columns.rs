//! The column scan (`column_scan`: every column of a row-major `rows x columns` array scanned
//! down in one pass, a look-back per column) on the GPU, against the sequential CPU backend:
//! 2 to 1024 columns (one and many row groups per tile), rows of one tile -1, +0 and +1, one
//! and two rows, several tiles and a partial one, and many tiles; forward and reverse,
//! inclusive and exclusive from one or per-column initial values, with every column's total;
//! elements of 1 to 64 bytes (every look-back state layout), exact operators (integers, the
//! matrix product mod p and affine maps mod 2^64, both not commutative) compared exactly, sums
//! of f32 with NaN and infinities within a tolerance derived from each column. Also: the call
//! loads the column-scan module, buffers that do not start on 16 bytes give the same results,
//! more columns than the kernel takes still scan (through contiguous rows), and every tile
//! order (claimed, or by block index in one cooperative wave and beyond), tiles set by the
//! tuning and every tile the autotuner can choose scan the same, and autotuning records its
//! choice per direction.

mod common;

use common::gpu::{gpu, gpu_with, Rng};
use common::lanes::{self, scans, Close};
use monoscan::bench::classes::{Affine3, Affine3U64, Sum8U64, U64x8};
use monoscan::cache::{CacheConfig, KernelCache, Origin};
use monoscan::codegen::KernelSet;
use monoscan::cpu::Sequential;
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::ops::{Mat2, MatMulMod, Sum};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{autotune, policy, TileOrder, Tuning};
use monoscan::{Backend, Gpu, Monoid};
use std::fmt::Debug;
use std::sync::Arc;

/// Rows per tile of the column scan of `columns` columns of `M`'s elements on `g`.
fn tile_rows<M: Monoid>(g: &Gpu, columns: usize) -> usize {
    let size = std::mem::size_of::<M::Elem>();
    policy::column_shape(columns, size, &g.info().limits, g.tuning().column)
        .expect("a column shape")
        .tile_rows() as usize
}

/// `rows x columns` along the first axis for rows of 1, 2, one tile -1, +0 and +1, and three
/// tiles and a bit.
fn layouts<M: Monoid>(g: &Gpu, columns: usize) -> Vec<Lanes> {
    let tile = tile_rows::<M>(g, columns);
    let mut out = Vec::new();
    for rows in [1, 2, tile - 1, tile, tile + 1, 3 * tile + 5] {
        let l = Lanes::axis(&[rows, columns], 0).unwrap();
        if rows > 0 && !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// Scans `data` as `how` says on `g` and on the sequential backend; `close(got, want, column)`
/// compares each value and total.
fn check<M: Monoid>(
    g: &Gpu,
    m: &M,
    lanes: &Lanes,
    data: &[M::Elem],
    how: &LaneScan<M::Elem>,
    what: &str,
    close: Close<M::Elem>,
) where
    M::Elem: Debug,
{
    let columns = lanes.inner;
    lanes::check(g, m, lanes, data, how, what, &|i| i % columns, close);
}

/// Every layout of each of `columns` and every scan of an exact operator: results equal the
/// sequential ones.
fn exact<M>(g: &Gpu, m: &M, columns: &[usize], what: &str, gen: &mut dyn FnMut() -> M::Elem)
where
    M: Monoid,
    M::Elem: Debug + PartialEq,
{
    for &c in columns {
        for lanes in layouts::<M>(g, c) {
            let data: Vec<M::Elem> = (0..lanes.elements()).map(|_| gen()).collect();
            let init = gen();
            let each: Vec<M::Elem> = (0..c).map(|_| gen()).collect();
            for how in scans(c, init, |j| each[j]) {
                check(g, m, &lanes, &data, &how, what, &|a, b, _| a == b);
            }
        }
    }
}

/// Columns from 2 (reverse scans of few rows only: rows of 16 bytes or less are one 1-D scan
/// of vectors forwards, and in reverse where that scan stages) to 1024: many row groups per tile (scanned by Kogge-Stone in shared memory), few
/// (folded in turn), and one.
const COLUMNS: [usize; 8] = [2, 3, 5, 32, 33, 100, 257, 1024];

#[test]
fn integers_of_1_to_8_bytes() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(3);
    exact(g, &Sum::<u8>::new(), &COLUMNS, "sum u8", &mut || {
        rng.below(256) as u8
    });
    exact(g, &Sum::<i32>::new(), &COLUMNS, "sum i32", &mut || {
        rng.next_u64() as i32
    });
    exact(g, &Sum::<i64>::new(), &[3, 32, 100], "sum i64", &mut || {
        rng.next_u64() as i64
    });
}

/// Not commutative: the 2x2 matrix product mod p (16 bytes) and three affine maps mod 2^64
/// (48 bytes); and eight u64 sums (64 bytes, the most the look-back's paired layout holds).
#[test]
fn large_elements_and_operators_that_do_not_commute() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(5);
    let p = 1_000_000_007u64;
    exact(
        g,
        &MatMulMod::default(),
        &[2, 3, 32, 100],
        "matmul mod p",
        &mut || Mat2::new([0; 4].map(|_: u32| rng.below(p) as u32)),
    );
    exact(g, &Affine3U64, &[2, 7, 33], "affine3 u64", &mut || {
        Affine3 {
            a: [0; 3].map(|_: u64| rng.next_u64()),
            b: [0; 3].map(|_: u64| rng.next_u64()),
        }
    });
    exact(g, &Sum8U64, &[4, 32], "sum8 u64", &mut || U64x8 {
        v: [0; 8].map(|_: u64| rng.next_u64()),
    });
}

/// Sums of f32 columns with NaN and infinities in some columns: a NaN or an infinity stays in
/// its column, and finite values lie within `(rows + 2) * eps * (sum of |x| over the column and
/// |init|)` of the sequential sums.
#[test]
fn floats_with_nan_and_infinities() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(11);
    let sum = Sum::<f32>::new();
    for c in [3, 32, 100] {
        for lanes in layouts::<Sum<f32>>(g, c) {
            let rows = lanes.len;
            let mut data: Vec<f32> = (0..lanes.elements())
                .map(|_| (rng.below(129) as f32 - 64.0) / 4.0)
                .collect();
            if rows >= 4 {
                data[(rows / 2) * c + 1] = f32::NAN;
                data[(rows / 3) * c + 2] = f32::INFINITY;
                data[(rows - 1) * c] = f32::NEG_INFINITY;
            }
            let init = 0.25f32;
            let each: Vec<f32> = (0..c).map(|j| (j % 9) as f32 - 4.0).collect();
            let tol: Vec<f32> = (0..c)
                .map(|j| {
                    let mass: f32 = (0..rows)
                        .map(|r| data[r * c + j])
                        .filter(|x| x.is_finite())
                        .map(f32::abs)
                        .sum();
                    (rows as f32 + 2.0) * f32::EPSILON * (mass + init.abs().max(each[j].abs()))
                })
                .collect();
            let close = |got: &f32, want: &f32, j: usize| {
                if want.is_nan() {
                    got.is_nan()
                } else if want.is_infinite() {
                    got == want
                } else {
                    (got - want).abs() <= tol[j]
                }
            };
            for how in scans(c, init, |j| each[j]) {
                check(g, &sum, &lanes, &data, &how, "sum f32", &close);
            }
        }
    }
}

/// Many tiles (each column's look-back walks far), sum i32 (wrapping, exact).
#[test]
fn many_tiles() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(13);
    let sum = Sum::<i32>::new();
    for shape in [[524_288, 32], [100_003, 100], [2_000_003, 3]] {
        let lanes = Lanes::axis(&shape, 0).unwrap();
        let data: Vec<i32> = (0..lanes.elements())
            .map(|_| rng.next_u64() as i32)
            .collect();
        for how in scans(shape[1], 5, |j| j as i32 - 100) {
            check(g, &sum, &lanes, &data, &how, "sum i32", &|a, b, _| a == b);
        }
    }
}

/// Tiles claimed from the counter, and numbered by block index in one cooperative wave but
/// claimed beyond (the default, by block index throughout, runs in every other test): one wave
/// and several, reverse included.
#[test]
fn every_tile_order() {
    for order in [TileOrder::Claimed, TileOrder::OneWave] {
        let Some(g) = gpu_with(Tuning {
            tile_order: order,
            ..Tuning::default()
        }) else {
            return;
        };
        let mut rng = Rng::new(29);
        let sum = Sum::<i32>::new();
        let one_wave = 2 * tile_rows::<Sum<i32>>(&g, 32) + 1;
        for shape in [[one_wave, 32], [100_003, 100]] {
            let lanes = Lanes::axis(&shape, 0).unwrap();
            let data: Vec<i32> = (0..lanes.elements())
                .map(|_| rng.next_u64() as i32)
                .collect();
            for how in scans(shape[1], 3, |j| j as i32 - 7) {
                check(&g, &sum, &lanes, &data, &how, "sum i32", &|a, b, _| a == b);
            }
        }
    }
}

/// Tiles of other shapes (`Tuning::column`): fewer and more threads than the policy's 256,
/// a block narrower than the 100 columns' strip, one row per thread.
#[test]
fn tuned_tiles() {
    for column in ["128x16", "512x8", "32x1", "1024x4"] {
        let Some(g) = gpu_with(Tuning {
            column: Some(column.parse().unwrap()),
            ..Tuning::default()
        }) else {
            return;
        };
        let mut rng = Rng::new(31);
        let sum = Sum::<i32>::new();
        for columns in [3, 32, 100] {
            for lanes in layouts::<Sum<i32>>(&g, columns) {
                let data: Vec<i32> = (0..lanes.elements())
                    .map(|_| rng.next_u64() as i32)
                    .collect();
                for how in scans(columns, 3, |j| j as i32 - 7) {
                    check(&g, &sum, &lanes, &data, &how, column, &|a, b, _| a == b);
                }
            }
        }
    }
}

/// Every tile the autotuner can choose (`autotune::columns::candidates`, set as
/// `Tuning::column`) scans exactly as the sequential backend does: sum i32 and the 2x2 matrix
/// product mod p (not commutative), 3, 32 and 100 columns, every layout and scan.
#[test]
fn every_candidate_tile() {
    let Some(base) = gpu() else { return };
    let limits = base.info().limits;
    let mut rng = Rng::new(37);
    let p = 1_000_000_007u64;
    for columns in [3, 32, 100] {
        for size in [4, 16] {
            for shape in autotune::columns::candidates(columns, size, &limits) {
                let choice = autotune::columns::choice_of(&shape);
                let g = gpu_with(Tuning {
                    column: Some(choice),
                    ..Tuning::default()
                })
                .unwrap();
                let what = shape.name();
                if size == 4 {
                    exact(&g, &Sum::<i32>::new(), &[columns], &what, &mut || {
                        rng.next_u64() as i32
                    });
                } else {
                    exact(&g, &MatMulMod::default(), &[columns], &what, &mut || {
                        Mat2::new([0; 4].map(|_: u32| rng.below(p) as u32))
                    });
                }
            }
        }
    }
}

/// Autotuning, on by default: the first column scans of 64 MiB, forwards and in reverse, time
/// the candidate tiles, give the sequential results, and record the fastest for 32-column
/// strips beside the kernel cache, one record per direction; a Gpu on that cache reads them.
#[test]
fn autotuning_records_a_tile_per_direction() {
    let Some(base) = gpu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let cache = Arc::new(KernelCache::new(CacheConfig::dir(dir.path())));
        (
            Gpu::with_cache(base.info().ordinal, cache.clone()).unwrap(),
            cache,
        )
    };
    let (g, cache) = open();
    let mut rng = Rng::new(41);
    let sum = Sum::<i32>::new();
    let lanes = Lanes::axis(&[524_288, 32], 0).unwrap();
    let data: Vec<i32> = (0..lanes.elements())
        .map(|_| rng.next_u64() as i32)
        .collect();
    // Device buffers, input and output apart: a scan in place (as of host data) is not timed.
    let s = g.stream();
    let inp = s.clone_htod(&data).unwrap();
    let mut out = s.alloc_zeros::<i32>(data.len()).unwrap();
    let scanner = g.scanner(&sum);
    for how in [LaneScan::inclusive(), LaneScan::inclusive().reverse()] {
        scanner.scan_lanes(&inp, &mut out, &lanes, &how).unwrap();
        let got = s.clone_dtoh(&out).unwrap();
        let mut want = data.clone();
        Sequential
            .scan_lanes(&sum, &lanes, &mut want, &how)
            .unwrap();
        assert!(got == want, "{how:?}: not the sequential scan");
    }
    let listed: Vec<String> = cache
        .tuned()
        .list()
        .unwrap()
        .into_iter()
        .map(|(_, summary)| summary)
        .collect();
    let limits = g.info().limits;
    let choices: Vec<String> = autotune::columns::candidates(32, 4, &limits)
        .iter()
        .map(|s| {
            let c = autotune::columns::choice_of(s);
            format!("shape {} {}", c.threads, c.items)
        })
        .collect();
    for direction in ["forward", "reverse"] {
        let found = listed
            .iter()
            .find(|l| l.starts_with(&format!("columns 32 {direction}; ")))
            .unwrap_or_else(|| panic!("no {direction} record in {listed:?}"));
        assert!(
            choices.iter().any(|c| found.ends_with(c.as_str())),
            "{found} is not a candidate ({choices:?})"
        );
    }
    let info = g.info();
    let device = monoscan::cache::device_key(&info.name, info.cc, info.sm_count);
    let (_, later) = open();
    for reverse in [false, true] {
        let record = later
            .tuned()
            .get_column(&device, &sum.cuda(), 32, reverse, &limits)
            .expect("the record, read from disk");
        assert_eq!(record.timings.len(), choices.len());
    }
}

/// The column-scan module is what a scan down 32 columns loads: after the calls, the memory
/// layer of the Gpu's own cache holds it, forward and reverse.
#[test]
fn column_scans_load_the_column_module() {
    let Some(_) = gpu() else { return };
    let cache = Arc::new(KernelCache::new(CacheConfig::memory_only()));
    let g = Gpu::with_cache(0, cache.clone()).unwrap();
    let lanes = Lanes::axis(&[1000, 32], 0).unwrap();
    let mut data = vec![1.0f32; lanes.elements()];
    let sum = Sum::<f32>::new();
    for how in [LaneScan::inclusive(), LaneScan::inclusive().reverse()] {
        g.scan_lanes(&sum, &lanes, &mut data, &how).unwrap();
    }
    let op = sum.cuda();
    let plan = Plan::new(&op, g.info().limits, g.tuning());
    let shape = policy::column_shape(32, 4, &g.info().limits, None).unwrap();
    for reverse in [false, true] {
        let set = KernelSet::ColumnScan { shape, reverse };
        let origin = cache
            .fetch(&cache.intern(op.clone()), plan.spec(set), g.target())
            .unwrap()
            .origin;
        assert_eq!(origin, Origin::Memory, "reverse {reverse}");
    }
}

/// Buffers that start 4 bytes past 16 (no bulk copies or 16-byte stores) give the sequential
/// results; so do 1025 columns, one more than the column scan takes.
#[test]
fn unaligned_buffers_and_too_many_columns() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(17);
    let sum = Sum::<i32>::new();
    let tile = tile_rows::<Sum<i32>>(g, 32);
    for lanes in [
        Lanes::axis(&[3 * tile + 1, 32], 0).unwrap(),
        Lanes::axis(&[37, 100], 0).unwrap(),
    ] {
        let data: Vec<i32> = (0..lanes.elements())
            .map(|_| rng.next_u64() as i32)
            .collect();
        for how in scans(lanes.inner, 2, |j| j as i32) {
            let mut want = data.clone();
            let want_totals = Sequential
                .scan_lanes(&sum, &lanes, &mut want, &how)
                .unwrap();
            let s = g.stream();
            let padded: Vec<i32> = std::iter::once(0).chain(data.iter().copied()).collect();
            let inp = s.clone_htod(&padded).unwrap();
            let mut out = s.clone_htod(&padded).unwrap();
            let mut t = s.clone_htod(&vec![0i32; lanes.count()]).unwrap();
            {
                let mut view = out.slice_mut(1..);
                g.scanner(&sum)
                    .scan_lanes_with_totals(&inp.slice(1..), &mut view, &lanes, &how, &mut t)
                    .unwrap();
            }
            let got = s.clone_dtoh(&out).unwrap();
            assert!(got[1..] == want[..], "unaligned {lanes:?} {how:?}");
            assert_eq!(
                s.clone_dtoh(&t).unwrap(),
                want_totals,
                "unaligned {lanes:?}"
            );
        }
    }
    let wide = Lanes::axis(&[5, policy::MAX_COLUMNS + 1], 0).unwrap();
    let data: Vec<i32> = (0..wide.elements())
        .map(|_| rng.next_u64() as i32)
        .collect();
    for how in scans(wide.inner, 2, |j| j as i32) {
        check(g, &sum, &wide, &data, &how, "sum i32", &|a, b, _| a == b);
    }
}
