//! Views of columns that the column scan (`column_scan`) walks in place on the GPU: some of the
//! columns of a wider array (rows a pitch apart), groups of columns along a middle axis
//! (`outer > 1`, packed, padded or interleaved with the other groups), one strided lane and
//! padded rows, each over one and several tiles; against the sequential CPU backend, which
//! also checks that nothing between the lanes is written. Forward and reverse, inclusive and
//! exclusive from one or per-lane initial values, with every lane's total; exact operators
//! (sums of u8 and i32, the 2x2 matrix product mod p, not commutative) compared exactly, and
//! sums of f32 with NaN and infinities. Also: such a view loads the column-scan module and not
//! the lane-copy module that gathering needs, and groups shorter than a tile, which are
//! gathered, scan the same.

mod common;

use common::gpu::{gpu, Rng};
use common::lanes::{self, scans, Close};
use monoscan::cache::{CacheConfig, KernelCache, Origin};
use monoscan::codegen::KernelSet;
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::ops::{Mat2, MatMulMod, Sum};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::policy;
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

/// The views of `M`'s elements the column scan takes in place: (the lanes, their buffer's
/// length). Rows of 2 and of one tile and three tiles and a bit.
fn views<M: Monoid>(g: &Gpu) -> Vec<(Lanes, usize)> {
    let mut out = Vec::new();
    let mut push = |shape: &[usize], strides: &[usize], axis: usize, buffer: usize| {
        let lanes = Lanes::strided(shape, strides, axis).unwrap();
        assert!(lanes.span() <= buffer, "{lanes:?} in {buffer}");
        out.push((lanes, buffer));
    };
    for (columns, width) in [(32, 40), (3, 5), (48, 64), (100, 104), (100, 101)] {
        let tile = tile_rows::<M>(g, columns);
        for rows in [2, tile, 3 * tile + 5] {
            // The first `columns` of a (rows x width) array, scanned down.
            push(&[rows, columns], &[width, 1], 0, rows * width);
        }
    }
    for (groups, columns, width) in [(4, 32, 32), (3, 5, 5), (3, 32, 40), (2, 100, 104)] {
        let tile = tile_rows::<M>(g, columns);
        for rows in [tile, 2 * tile + 3] {
            let group = rows * width;
            // Columns of `groups` arrays, one after the other, scanned along the middle axis.
            push(
                &[groups, rows, columns],
                &[group, width, 1],
                1,
                groups * group,
            );
            // The same, with the arrays interleaved: a (rows x groups x width) tensor viewed
            // as (groups x rows x columns); where the columns fill the rows, normalized to
            // one group of all the groups' columns.
            push(
                &[groups, rows, columns],
                &[width, groups * width, 1],
                1,
                rows * groups * width,
            );
        }
    }
    let tile = tile_rows::<M>(g, 1);
    // One lane of every third element, and padded rows scanned along.
    push(&[2 * tile + 1], &[3], 0, 3 * (2 * tile + 1));
    push(&[3, tile + 7], &[tile + 10, 1], 1, 3 * (tile + 10));
    out
}

/// The lane of each element of a buffer of `buffer` elements (`usize::MAX` between lanes).
fn lane_of(lanes: &Lanes, buffer: usize) -> Vec<usize> {
    let mut of = vec![usize::MAX; buffer];
    for l in 0..lanes.count() {
        for k in 0..lanes.len {
            of[lanes.offset(l, k)] = l;
        }
    }
    of
}

/// Every view of [`views`] and every scan of an exact operator: results equal the sequential
/// ones, and the elements between the lanes keep their values.
fn exact<M>(g: &Gpu, m: &M, what: &str, gen: &mut dyn FnMut() -> M::Elem)
where
    M: Monoid,
    M::Elem: Debug + PartialEq,
{
    for (lanes, buffer) in views::<M>(g) {
        let data: Vec<M::Elem> = (0..buffer).map(|_| gen()).collect();
        let init = gen();
        let each: Vec<M::Elem> = (0..lanes.count()).map(|_| gen()).collect();
        let of = lane_of(&lanes, buffer);
        for how in scans(lanes.count(), init, |j| each[j]) {
            lanes::check(g, m, &lanes, &data, &how, what, &|i| of[i], &|a, b, _| {
                a == b
            });
        }
    }
}

#[test]
fn exact_operators() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(43);
    exact(g, &Sum::<u8>::new(), "sum u8", &mut || rng.below(256) as u8);
    exact(g, &Sum::<i32>::new(), "sum i32", &mut || {
        rng.next_u64() as i32
    });
    let p = 1_000_000_007u64;
    exact(g, &MatMulMod::default(), "matmul mod p", &mut || {
        Mat2::new([0; 4].map(|_: u32| rng.below(p) as u32))
    });
}

/// Sums of f32 over every view, with NaN and infinities in some lanes: a NaN or an infinity
/// stays in its lane, and finite values lie within `(len + 2) * eps * (sum of |x| over the lane
/// and |init|)` of the sequential sums.
#[test]
fn floats_with_nan_and_infinities() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(47);
    let sum = Sum::<f32>::new();
    for (lanes, buffer) in views::<Sum<f32>>(g) {
        let mut data: Vec<f32> = (0..buffer)
            .map(|_| (rng.below(129) as f32 - 64.0) / 4.0)
            .collect();
        let (count, len) = (lanes.count(), lanes.len);
        if len >= 4 {
            data[lanes.offset(0, len / 2)] = f32::NAN;
            data[lanes.offset(count - 1, len / 3)] = f32::INFINITY;
            data[lanes.offset(count / 2, len - 1)] = f32::NEG_INFINITY;
        }
        let init = 0.25f32;
        let each: Vec<f32> = (0..count).map(|l| (l % 9) as f32 - 4.0).collect();
        let tol: Vec<f32> = (0..count)
            .map(|l| {
                let mass: f32 = (0..len)
                    .map(|k| data[lanes.offset(l, k)])
                    .filter(|x| x.is_finite())
                    .map(f32::abs)
                    .sum();
                (len as f32 + 2.0) * f32::EPSILON * (mass + init.abs().max(each[l].abs()))
            })
            .collect();
        let of = lane_of(&lanes, buffer);
        let close: Close<f32> = &|got, want, l| {
            if want.is_nan() {
                got.is_nan()
            } else if want.is_infinite() || l == usize::MAX {
                got == want
            } else {
                (got - want).abs() <= tol[l]
            }
        };
        for how in scans(count, init, |l| each[l]) {
            lanes::check(g, &sum, &lanes, &data, &how, "sum f32", &|i| of[i], close);
        }
    }
}

/// 32 of the 40 columns of an array and four groups of 32 columns along a middle axis scan
/// in place: the call loads the column-scan module and never the lane-copy module that
/// gathering into rows would. Groups shorter than a tile are gathered, and scan the same.
#[test]
fn views_scan_in_place_and_short_groups_are_gathered() {
    let Some(shared) = gpu() else { return };
    let sum = Sum::<i32>::new();
    let tile = tile_rows::<Sum<i32>>(shared, 32);
    let op = sum.cuda();
    let shape = policy::column_shape(32, 4, &shared.info().limits, None).unwrap();
    let plan = Plan::new(&op, shared.info().limits, shared.tuning());
    let views = [
        Lanes::strided(&[tile + 3, 32], &[40, 1], 0).unwrap(),
        Lanes::strided(&[4, tile, 32], &[tile * 32, 32, 1], 1).unwrap(),
    ];
    for lanes in views {
        let cache = Arc::new(KernelCache::new(CacheConfig::memory_only()));
        let g = Gpu::with_cache(0, cache.clone()).unwrap();
        let mut data: Vec<i32> = (0..lanes.span() as i32).collect();
        g.scan_lanes(&sum, &lanes, &mut data, &LaneScan::inclusive())
            .unwrap();
        let origin = |set| {
            cache
                .fetch(&cache.intern(op.clone()), plan.spec(set), g.target())
                .unwrap()
                .origin
        };
        let column = KernelSet::ColumnScan {
            shape,
            reverse: false,
        };
        assert_eq!(origin(column), Origin::Memory, "{lanes:?}: the column scan");
        assert_ne!(
            origin(KernelSet::LanesCopy),
            Origin::Memory,
            "{lanes:?}: gathered"
        );
    }
    let mut rng = Rng::new(53);
    let short = Lanes::strided(&[5, 7, 32], &[7 * 40, 40, 1], 1).unwrap();
    let buffer = 5 * 7 * 40;
    let data: Vec<i32> = (0..buffer).map(|_| rng.next_u64() as i32).collect();
    let of = lane_of(&short, buffer);
    for how in scans(short.count(), 9, |l| l as i32) {
        lanes::check(
            shared,
            &sum,
            &short,
            &data,
            &how,
            "short",
            &|i| of[i],
            &|a, b, _| a == b,
        );
    }
}
