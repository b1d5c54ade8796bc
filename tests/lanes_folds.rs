//! Folds of rows by warps (`reduce_lanes` on rows of at least half a warp tile, which the tiled
//! reduce's `reduce_rows` folds, a warp per piece of a row) on the GPU, against the sequential
//! CPU backend: rows around half a warp tile (the shortest it takes; shorter rows keep the row
//! kernels), one warp tile -1, +0 and +1, and many warp tiles, as 3 rows (cut into pieces whose
//! folds a second launch folds) and as a thousand; elements of 1, 4, 8, 16 and 24 bytes, exact
//! operators compared exactly (two not commutative), sums of f32 with NaN and infinities within
//! a tolerance derived from each row. Also a widening u8 map on device buffers, read in vector
//! loads from aligned rows and through the warp's buffer otherwise, a gathered strided view, and
//! the same folds by the row kernels with the warp folds turned off.

mod common;

use common::gpu::{gpu_with, Rng};
use monoscan::cpu::Sequential;
use monoscan::lanes::Lanes;
use monoscan::ops::{Affine, AffineMap, Flagged, Mat2, MatMulMod, Segmented, Sum};
use monoscan::tuning::{policy, Purpose, Tuning};
use monoscan::{Backend, Gpu, Map, Monoid};
use std::fmt::Debug;

/// A GPU whose folds of rows run the warp folds ([`Tuning::row_folds`]), or `None` (skipped).
fn warp_folds() -> Option<Gpu> {
    gpu_with(Tuning {
        row_folds: true,
        ..Tuning::default()
    })
}

/// Elements per warp tile of the tiled reduce for `M`'s elements on `g`.
fn warp_tile<M: Monoid>(g: &Gpu) -> usize {
    let size = std::mem::size_of::<M::Elem>();
    let shape = policy::tile_shape(size, &g.info().limits, g.tuning(), Purpose::Tiles).unwrap();
    32 * shape.items as usize
}

/// Rows of half a warp tile -1 (the row kernels) and +0, of one warp tile -1, +0, +1, and of
/// three warp tiles and a bit, as 3 rows and as 1000; 3 rows of forty warp tiles and a bit.
fn layouts(wt: usize) -> Vec<Lanes> {
    let mut out = Vec::new();
    for len in [wt / 2 - 1, wt / 2, wt - 1, wt, wt + 1, 3 * wt + 5] {
        out.push(Lanes::rows(3, len));
        out.push(Lanes::rows(1000, len));
    }
    out.push(Lanes::rows(3, 40 * wt + 7));
    out
}

/// Every layout of an exact operator: the folds equal the sequential ones.
fn exact<M>(g: &Gpu, m: &M, what: &str, gen: &mut dyn FnMut() -> M::Elem)
where
    M: Monoid,
    M::Elem: Debug + PartialEq,
{
    for lanes in layouts(warp_tile::<M>(g)) {
        let data: Vec<M::Elem> = (0..lanes.elements()).map(|_| gen()).collect();
        let got = g.reduce_lanes(m, &lanes, &data).unwrap();
        let want = Sequential.reduce_lanes(m, &lanes, &data).unwrap();
        assert_eq!(got.len(), want.len(), "{what} {lanes:?}");
        if let Some(r) = (0..got.len()).find(|&r| got[r] != want[r]) {
            panic!(
                "{what} {lanes:?}: row {r} folds to {:?}, want {:?}",
                got[r], want[r]
            );
        }
    }
}

#[test]
fn exact_operators_of_1_to_24_bytes() {
    let Some(g) = warp_folds() else { return };
    let g = &g;
    let mut rng = Rng::new(41);
    exact(g, &Sum::<u8>::new(), "sum u8", &mut || rng.below(256) as u8);
    exact(g, &Sum::<i32>::new(), "sum i32", &mut || {
        rng.next_u64() as i32
    });
    let p = 1_000_000_007u64;
    exact(g, &MatMulMod::default(), "matmul mod p", &mut || {
        Mat2::new([0; 4].map(|_: u32| rng.below(p) as u32))
    });
    // Affine maps x -> a x + b with a = ±1 and small integer b: not commutative, every
    // composition exact in any grouping.
    let map = |rng: &mut Rng| {
        let a = if rng.below(2) == 0 { 1.0 } else { -1.0 };
        AffineMap::new(a, rng.below(17) as f64 - 8.0)
    };
    exact(g, &Affine::<f64>::new(), "affine f64", &mut || {
        map(&mut rng)
    });
    // Its segmented lifting: 24-byte elements, heads restarting the composition.
    let lifted = Segmented::new(Affine::<f64>::new());
    exact(g, &lifted, "segmented affine f64", &mut || {
        let head = rng.below(50) == 0;
        Flagged::new(map(&mut rng), head)
    });
}

/// Sums of f32 rows, with NaN and infinities in some: a NaN or an infinity stays in its row,
/// and finite folds lie within `(len + 2) * eps * (sum of |x| over the row)` of the sequential
/// ones.
#[test]
fn floats_with_nan_and_infinities() {
    let Some(g) = warp_folds() else { return };
    let g = &g;
    let mut rng = Rng::new(43);
    let sum = Sum::<f32>::new();
    for lanes in layouts(warp_tile::<Sum<f32>>(g)) {
        let len = lanes.len;
        let mut data: Vec<f32> = (0..lanes.elements())
            .map(|_| (rng.below(129) as f32 - 64.0) / 4.0)
            .collect();
        data[len / 2] = f32::NAN;
        data[len + len / 3] = f32::INFINITY;
        data[2 * len] = f32::NEG_INFINITY;
        data[2 * len + len - 1] = f32::INFINITY;
        let got = g.reduce_lanes(&sum, &lanes, &data).unwrap();
        let want = Sequential.reduce_lanes(&sum, &lanes, &data).unwrap();
        for (r, (got, want)) in got.iter().zip(&want).enumerate() {
            let row = &data[r * len..(r + 1) * len];
            let mass: f32 = row.iter().filter(|x| x.is_finite()).map(|x| x.abs()).sum();
            let tol = (len as f32 + 2.0) * f32::EPSILON * mass;
            let close = if want.is_nan() {
                got.is_nan()
            } else if want.is_infinite() {
                got == want
            } else {
                (got - want).abs() <= tol
            };
            assert!(
                close,
                "sum f32 {lanes:?}: row {r} folds to {got}, want {want}"
            );
        }
    }
}

/// u8 flags widened to u32 and summed per row, on device buffers: rows whose length is a
/// multiple of 16 bytes from an aligned start (vector loads), the same rows from one byte on
/// and odd lengths (through the warp's buffer), rows cut into pieces, and the middle axis of a
/// 3-D tensor (gathered into rows first); the totals past the rows stay untouched.
#[test]
fn widening_map_on_device_buffers() {
    let Some(g) = warp_folds() else { return };
    let g = &g;
    let s = g.stream();
    let widen = Map::new("widen_u8", "(unsigned)x", |x: &u8| u32::from(*x));
    let sum = Sum::<u32>::new();
    let scanner = g.scanner(&sum).mapped(&widen);
    let wt = warp_tile::<Sum<u32>>(g);
    let layouts = [
        (0, Lanes::rows(1000, wt)),
        (0, Lanes::rows(1000, 2 * wt + 16)),
        (1, Lanes::rows(1000, 2 * wt + 16)),
        (0, Lanes::rows(777, wt + 3)),
        (0, Lanes::rows(3, 64 * wt + 16)),
        (1, Lanes::rows(3, 64 * wt + 16)),
        (0, Lanes::axis(&[4, 3000, 5], 1).unwrap()),
    ];
    let span = layouts
        .iter()
        .map(|(from, l)| from + l.span())
        .max()
        .unwrap();
    let mut rng = Rng::new(47);
    let bytes: Vec<u8> = (0..span).map(|_| rng.below(256) as u8).collect();
    let values: Vec<u32> = bytes.iter().map(|b| u32::from(*b)).collect();
    let input = s.clone_htod(&bytes).unwrap();
    const UNTOUCHED: u32 = 0xdead;
    for (from, lanes) in layouts {
        let data = &values[from..from + lanes.span()];
        let mut want = Sequential.reduce_lanes(&sum, &lanes, data).unwrap();
        want.push(UNTOUCHED);
        let mut totals = s.clone_htod(&vec![UNTOUCHED; lanes.count() + 1]).unwrap();
        scanner
            .reduce_lanes(&input.slice(from..), &lanes, &mut totals)
            .unwrap();
        assert_eq!(
            s.clone_dtoh(&totals).unwrap(),
            want,
            "from {from}, {lanes:?}"
        );
    }
}

/// With the warp folds off ([`Tuning::row_folds`]), the row kernels fold the same rows to the
/// same totals.
#[test]
fn row_kernels_fold_when_warp_folds_are_off() {
    let Some(g) = gpu_with(Tuning {
        row_folds: false,
        ..Tuning::default()
    }) else {
        return;
    };
    let mut rng = Rng::new(53);
    exact(&g, &Sum::<i32>::new(), "sum i32, row kernels", &mut || {
        rng.next_u64() as i32
    });
    let p = 1_000_000_007u64;
    exact(
        &g,
        &MatMulMod::default(),
        "matmul mod p, row kernels",
        &mut || Mat2::new([0; 4].map(|_: u32| rng.below(p) as u32)),
    );
}
