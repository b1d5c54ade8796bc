//! The staged row kernel (`row_staged`: tiles of values staged in shared memory, by tensor
//! copies on sm_90) on the GPU, against the sequential CPU backend: rows of 1, 2, 31, 32 and 33
//! values, one tile -1, +0 and +1, rows spanning several tiles, a million short rows, a few very
//! long rows and one lane, forward and reverse, inclusive and exclusive from one or per-row
//! initial values, with every row's total; values of 1, 2, 4, 8 and 16 bytes, exact operators
//! (integers, the matrix product mod p, affine maps with exactly representable compositions,
//! both not commutative) compared exactly, sums of f32 with NaN and infinities within a
//! tolerance derived from each row. Also: the call loads the staged module, a fused input map
//! that keeps the value size takes it, unaligned buffers fall back to the register kernel, and
//! the kernel's cp.async form, tuned shapes and one-wave launches with claimed tiles give the
//! same results.

mod common;

use common::gpu::{gpu, gpu_with, Rng};
use common::lanes::{self, scans, Close};
use monoscan::cache::{CacheConfig, KernelCache, Origin};
use monoscan::codegen::KernelSet;
use monoscan::cpu::Sequential;
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::ops::{Affine, AffineMap, Flagged, Mat2, MatMulMod, Max, Reversed, Segmented, Sum};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{policy, RowPrefetch, TileOrder, Tuning};
use monoscan::{Backend, Gpu, Map, Monoid};
use std::fmt::Debug;
use std::sync::Arc;

/// Values per tile of the staged row kernel for a batch of rows of `M`'s values on `g`, or
/// `None` where the kernel does not apply (before sm_80): the register row kernel then runs,
/// and the shapes below still cover it.
fn staged_tile<M: Monoid>(g: &Gpu) -> Option<usize> {
    let size = std::mem::size_of::<M::Elem>();
    let lifted = std::mem::size_of::<Flagged<M::Elem>>();
    policy::row_staged_shape(size, lifted, 3, &g.info().limits, g.tuning())
        .unwrap()
        .map(|s| s.tile() as usize)
}

/// Rows of 1, 2, 31, 32, 33 values, of one tile -1, +0, +1 and of three tiles and a bit, each
/// as three rows and as enough rows to span at least two and a half tiles.
fn layouts(tile: usize) -> Vec<Lanes> {
    let mut out = Vec::new();
    for len in [1, 2, 31, 32, 33, tile - 1, tile, tile + 1, 3 * tile + 5] {
        for rows in [3, (5 * tile / 2) / len + 1] {
            let l = Lanes::rows(rows, len);
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out
}

/// Scans `data` in rows as `how` says on `g` and on the sequential backend; `close(got, want,
/// row)` compares each value and total.
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
    let len = lanes.len.max(1);
    lanes::check(g, m, lanes, data, how, what, &|i| i / len, close);
}

/// Every layout and scan of an exact operator: results equal the sequential ones.
fn exact<M>(g: &Gpu, m: &M, what: &str, gen: &mut dyn FnMut() -> M::Elem)
where
    M: Monoid,
    M::Elem: Debug + PartialEq,
{
    let tile = staged_tile::<M>(g).unwrap_or(2048);
    for lanes in layouts(tile) {
        let data: Vec<M::Elem> = (0..lanes.elements()).map(|_| gen()).collect();
        let init = gen();
        let each: Vec<M::Elem> = (0..lanes.count()).map(|_| gen()).collect();
        for how in scans(lanes.count(), init, |r| each[r]) {
            check(g, m, &lanes, &data, &how, what, &|a, b, _| a == b);
        }
    }
}

#[test]
fn integers_of_every_value_size() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(3);
    exact(g, &Sum::<u8>::new(), "sum u8", &mut || rng.below(256) as u8);
    exact(g, &Max::<i16>::new(), "max i16", &mut || {
        rng.below(65536) as u16 as i16
    });
    exact(g, &Sum::<i32>::new(), "sum i32", &mut || {
        rng.next_u64() as i32
    });
    exact(g, &Sum::<i64>::new(), "sum i64", &mut || {
        rng.next_u64() as i64
    });
    let p = 1_000_000_007u64;
    exact(g, &MatMulMod::default(), "matmul mod p", &mut || {
        Mat2::new([0; 4].map(|_: u32| rng.below(p) as u32))
    });
}

/// Affine maps x -> a x + b with a = ±1 and small integer b: not commutative, and every
/// composition (in any grouping) exact, so f32 and f64 results compare exactly.
#[test]
fn affine_maps_of_8_and_16_bytes() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(7);
    let mut map32 = || {
        let a = if rng.below(2) == 0 { 1.0 } else { -1.0 };
        AffineMap::new(a, rng.below(17) as f32 - 8.0)
    };
    exact(g, &Affine::<f32>::new(), "affine f32", &mut map32);
    let mut map64 = || {
        let a = if rng.below(2) == 0 { 1.0 } else { -1.0 };
        AffineMap::new(a, rng.below(17) as f64 - 8.0)
    };
    exact(g, &Affine::<f64>::new(), "affine f64", &mut map64);
}

/// Sums of f32 rows with NaN and infinities in some rows: a NaN or an infinity stays in its
/// row (the rows around it restart), and finite values lie within `(len + 2) * eps * (sum of
/// |x| over the row and |init|)` of the sequential sums.
fn f32_rows(g: &Gpu, lanes: &Lanes, rng: &mut Rng) {
    let len = lanes.len;
    let mut data: Vec<f32> = (0..lanes.elements())
        .map(|_| (rng.below(129) as f32 - 64.0) / 4.0)
        .collect();
    let rows = lanes.count();
    if len > 0 && rows >= 4 {
        data[len + len / 2] = f32::NAN;
        data[2 * len + len / 3] = f32::INFINITY;
        data[3 * len] = f32::NEG_INFINITY;
        data[3 * len + len - 1] = f32::INFINITY;
    }
    let init = 0.25f32;
    let each: Vec<f32> = (0..rows).map(|r| (r % 9) as f32 - 4.0).collect();
    let sum = Sum::<f32>::new();
    for how in scans(rows, init, |r| each[r]) {
        let tol: Vec<f32> = (0..rows)
            .map(|r| {
                let row = &data[r * len..(r + 1) * len];
                let mass: f32 = row.iter().filter(|x| x.is_finite()).map(|x| x.abs()).sum();
                (len as f32 + 2.0) * f32::EPSILON * (mass + init.abs().max(each[r].abs()))
            })
            .collect();
        let close = |got: &f32, want: &f32, r: usize| {
            if want.is_nan() {
                got.is_nan()
            } else if want.is_infinite() {
                got == want
            } else {
                (got - want).abs() <= tol[r]
            }
        };
        check(g, &sum, lanes, &data, &how, "sum f32", &close);
    }
}

#[test]
fn floats_with_nan_and_infinities() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(11);
    let tile = staged_tile::<Sum<f32>>(g).unwrap_or(2048);
    for lanes in layouts(tile) {
        f32_rows(g, &lanes, &mut rng);
    }
    // A few very long rows.
    f32_rows(g, &Lanes::rows(5, 3_000_017), &mut rng);
}

/// A million short rows, a few very long ones and single lanes (the one-lane scans the 1-D
/// reverse scan runs as), sum i32 (wrapping, exact).
#[test]
fn many_short_rows_few_long_rows_and_one_lane() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(13);
    let sum = Sum::<i32>::new();
    let tile = staged_tile::<Sum<i32>>(g).unwrap_or(2048);
    for lanes in [
        Lanes::rows(1 << 20, 1),
        Lanes::rows(1 << 20, 3),
        Lanes::rows(3, 4_000_037),
        Lanes::rows(1, 10 * tile + 3),
        Lanes::rows(1, 1 << 24),
        Lanes::rows(1, 7),
    ] {
        let data: Vec<i32> = (0..lanes.elements())
            .map(|_| rng.next_u64() as i32)
            .collect();
        for how in scans(lanes.count(), 5, |r| r as i32 - 100) {
            check(g, &sum, &lanes, &data, &how, "sum i32", &|a, b, _| a == b);
        }
    }
}

/// The staged module is what a row scan loads (on sm_80 and newer): after the calls, the
/// memory layer of the Gpu's own cache holds the staged row modules of the lifting, forward and
/// reverse.
#[test]
fn row_scans_load_the_staged_module() {
    let Some(shared) = gpu() else { return };
    if staged_tile::<Sum<f32>>(shared).is_none() {
        eprintln!("skipped: the staged row kernel needs sm_80 or newer");
        return;
    }
    let cache = Arc::new(KernelCache::new(CacheConfig::memory_only()));
    let g = Gpu::with_cache(0, cache.clone()).unwrap();
    let lanes = Lanes::rows(64, 1000);
    let mut data = vec![1.0f32; lanes.elements()];
    let sum = Sum::<f32>::new();
    for how in [LaneScan::inclusive(), LaneScan::inclusive().reverse()] {
        g.scan_lanes(&sum, &lanes, &mut data, &how).unwrap();
    }
    let fetched = |op: monoscan::CudaOp, reverse: bool| {
        let plan = Plan::new(&op, g.info().limits, g.tuning());
        let shape = plan.row_staged_shape(4, 64).unwrap().unwrap();
        let set = KernelSet::RowStaged {
            shape,
            reverse,
            value_size: 4,
            segments: false,
        };
        cache
            .fetch(&cache.intern(op), plan.spec(set), g.target())
            .unwrap()
            .origin
    };
    assert_eq!(fetched(Segmented::new(sum).cuda(), false), Origin::Memory);
    assert_eq!(
        fetched(Segmented::new(Reversed::new(sum)).cuda(), true),
        Origin::Memory
    );
}

/// A fused input map that keeps the value size (u32 read as i32) runs in the staged kernel; on
/// buffers that do not start on 16 bytes the register row kernel runs, with the same results.
#[test]
fn maps_and_unaligned_buffers() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(17);
    let sum = Sum::<i32>::new();
    let as_i32 = Map::new("as_i32", "(int)x", |x: &u32| *x as i32);
    let tile = staged_tile::<Sum<i32>>(g).unwrap_or(2048);
    for lanes in [Lanes::rows(37, 129), Lanes::rows(3, tile + 1)] {
        let input: Vec<u32> = (0..lanes.elements())
            .map(|_| rng.next_u64() as u32)
            .collect();
        let mapped: Vec<i32> = input.iter().map(|x| *x as i32).collect();
        for how in scans(lanes.count(), 2, |r| r as i32) {
            let mut want = mapped.clone();
            let want_totals = Sequential
                .scan_lanes(&sum, &lanes, &mut want, &how)
                .unwrap();
            let mut got = vec![0; lanes.elements()];
            let totals = g
                .map_scan_lanes(&sum, &as_i32, &lanes, &input, &mut got, &how)
                .unwrap();
            assert!(got == want, "mapped {lanes:?} {how:?}");
            assert_eq!(totals, want_totals, "mapped {lanes:?} {how:?}: totals");
            // The same scan from one element into each buffer (4 bytes past 16-byte starts).
            let s = g.stream();
            let padded: Vec<i32> = std::iter::once(0).chain(mapped.iter().copied()).collect();
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
}

/// The staged row kernel under other tunings: the cp.async form where the TMA one is the
/// default, runs of 64 and 256 bytes per thread (other swizzles), a TMA tile of one box, and
/// tiles claimed from the counter rather than numbered by block, always or beyond one wave, and
/// batches that prefetch into L2 whatever their rows' length, or never.
#[test]
fn tuned_shapes_and_the_cp_async_form() {
    for tuning in [
        Tuning {
            tma: false,
            ..Tuning::default()
        },
        Tuning {
            tile_order: TileOrder::Claimed,
            ..Tuning::default()
        },
        Tuning {
            tile_order: TileOrder::OneWave,
            ..Tuning::default()
        },
        Tuning {
            row_prefetch: RowPrefetch::Always,
            ..Tuning::default()
        },
        Tuning {
            row_prefetch: RowPrefetch::Never,
            ..Tuning::default()
        },
        Tuning {
            staged: Some("256x16".parse().unwrap()),
            ..Tuning::default()
        },
        Tuning {
            staged: Some("64x64".parse().unwrap()),
            ..Tuning::default()
        },
        Tuning {
            staged: Some("128x32".parse().unwrap()),
            ..Tuning::default()
        },
    ] {
        let Some(g) = gpu_with(tuning) else { return };
        let mut rng = Rng::new(19);
        let tile = staged_tile::<Sum<i32>>(&g).unwrap_or(2048);
        let sum = Sum::<i32>::new();
        for lanes in [
            Lanes::rows(7, 33),
            Lanes::rows(3, tile + 1),
            Lanes::rows((5 * tile / 2) / 31 + 1, 31),
            Lanes::rows(37, 1024),
        ] {
            let data: Vec<i32> = (0..lanes.elements())
                .map(|_| rng.next_u64() as i32)
                .collect();
            for how in scans(lanes.count(), 5, |r| r as i32) {
                check(&g, &sum, &lanes, &data, &how, "sum i32", &|a, b, _| a == b);
            }
        }
    }
}
