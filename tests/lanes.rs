//! Batched scans (`monoscan::lanes`) on every backend: rows of many lengths (0, 1, warp and
//! block boundaries, a million rows), one long row, every axis of 3-D tensors, columns scanned
//! down (2 to 32 of them, which the GPU scans as rows of vectors or by the column scan;
//! `tests/lanes_columns.rs` covers the column scan's tiles, sizes and floats), strided views,
//! exclusive scans from one or per-lane initial values, reverse scans, CSR rows, fused input
//! maps. Each result is compared with the definitions folded directly here (exactly: the
//! operators are exact, two of them not commutative). On sm_80 and newer the GPU scans these
//! rows (aligned host uploads) with the staged row kernel; `tests/lanes_staged.rs` covers its
//! tile boundaries, value sizes, floats, maps and its fallback to the register kernel.

mod common;

use common::gpu::{gpu, Rng};
use monoscan::cpu::{Parallel, Sequential};
use monoscan::lanes::{Inits, LaneScan, Lanes};
use monoscan::ops::{Flagged, Mat2, MatMulMod, Segmented, Sum};
use monoscan::{Backend, Map, Monoid};
use std::fmt::Debug;

/// The definitions, folded directly: prefixes left to right, suffixes right to left (each
/// combine in sequence order), the initial value on the left of forward prefixes and on the
/// right of reverse ones.
fn expected<M: Monoid>(
    m: &M,
    lanes: &Lanes,
    data: &[M::Elem],
    how: &LaneScan<M::Elem>,
) -> (Vec<M::Elem>, Vec<M::Elem>) {
    let mut out = data.to_vec();
    let mut totals = Vec::new();
    for lane in 0..lanes.count() {
        let xs: Vec<M::Elem> = (0..lanes.len)
            .map(|k| data[lanes.offset(lane, k)])
            .collect();
        let init = how.init.as_ref().map(|i| match i {
            Inits::Same(v) => *v,
            Inits::Each(v) => v[lane],
        });
        let n = xs.len();
        // fold[k] = x0 ⊕ ... ⊕ x(k-1) (forward) or xk ⊕ ... ⊕ x(n-1) (reverse), from e.
        let mut fold = vec![m.identity(); n + 1];
        if how.reverse {
            for k in (0..n).rev() {
                fold[k] = m.combine(&xs[k], &fold[k + 1]);
            }
        } else {
            for k in 0..n {
                fold[k + 1] = m.combine(&fold[k], &xs[k]);
            }
        }
        for k in 0..n {
            let y = match (how.reverse, init) {
                (false, None) => fold[k + 1],
                (false, Some(i)) => m.combine(&i, &fold[k]),
                (true, None) => fold[k],
                (true, Some(i)) => m.combine(&fold[k + 1], &i),
            };
            out[lanes.offset(lane, k)] = y;
        }
        let all = if how.reverse { fold[0] } else { fold[n] };
        totals.push(match (how.reverse, init) {
            (_, None) => all,
            (false, Some(i)) => m.combine(&i, &all),
            (true, Some(i)) => m.combine(&all, &i),
        });
    }
    (out, totals)
}

fn check<B, M>(b: &B, m: &M, lanes: &Lanes, data: &[M::Elem], how: &LaneScan<M::Elem>, what: &str)
where
    B: Backend,
    M: Monoid,
    M::Elem: Debug + PartialEq,
{
    let (want, want_totals) = expected(m, lanes, data, how);
    let mut got = data.to_vec();
    let totals = b.scan_lanes(m, lanes, &mut got, how).unwrap();
    let at = got.iter().zip(&want).position(|(g, w)| g != w);
    assert!(
        at.is_none(),
        "{}: {what} {lanes:?} {how:?}: element {} is {:?}, want {:?}",
        b.describe(),
        at.unwrap_or(0),
        got[at.unwrap_or(0)],
        want[at.unwrap_or(0)]
    );
    assert_eq!(totals, want_totals, "{}: {what}: totals", b.describe());
    let reduced = b.reduce_lanes(m, lanes, data).unwrap();
    let folds = expected(m, lanes, data, &LaneScan::inclusive()).1;
    assert_eq!(reduced, folds, "{}: {what}: reduce_lanes", b.describe());
}

/// `map_scan_lanes` of bytes widened to i64 (less 100), inclusive and exclusive in reverse
/// with per-lane initial values: the lanes' elements as the scan of the mapped input, the
/// output's elements between lanes as they were.
fn check_map<B: Backend>(b: &B, lanes: &Lanes, rng: &mut Rng, span: usize) {
    const UNTOUCHED: i64 = -7_777_777;
    let sum = Sum::<i64>::new();
    let widen = Map::new("widen_u8_less_100", "(long long)x - 100", |x: &u8| {
        i64::from(*x) - 100
    });
    let bytes: Vec<u8> = (0..span).map(|_| rng.below(256) as u8).collect();
    let mapped: Vec<i64> = bytes.iter().map(|x| i64::from(*x) - 100).collect();
    let inits = (0..lanes.count()).map(|l| 5 - l as i64).collect();
    for how in [
        LaneScan::inclusive(),
        LaneScan::exclusive_each(inits).reverse(),
    ] {
        let (scanned, want_totals) = expected(&sum, lanes, &mapped, &how);
        let mut want = vec![UNTOUCHED; span];
        for l in 0..lanes.count() {
            for k in 0..lanes.len {
                let at = lanes.offset(l, k);
                want[at] = scanned[at];
            }
        }
        let mut got = vec![UNTOUCHED; span];
        let totals = b
            .map_scan_lanes(&sum, &widen, lanes, &bytes, &mut got, &how)
            .unwrap();
        let at = got.iter().zip(&want).position(|(g, w)| g != w);
        assert!(
            at.is_none(),
            "{}: map_scan_lanes {lanes:?} {how:?}: element {} is {}, want {}",
            b.describe(),
            at.unwrap_or(0),
            got[at.unwrap_or(0)],
            want[at.unwrap_or(0)]
        );
        assert_eq!(
            totals,
            want_totals,
            "{}: map_scan_lanes totals",
            b.describe()
        );
    }
}

/// The layouts every backend runs: rows of boundary lengths, a long row, every axis of four
/// 3-D tensors (the last two with rows of 3 and 2 lanes, in 4 and 20 groups), columns
/// scanned down, and strided views (a transposed matrix, some of the columns, groups of them
/// side by side or transposed, rows with gaps, every other column).
fn layouts(block: usize) -> Vec<(Lanes, usize)> {
    let mut out = Vec::new();
    for (rows, len) in [
        (3, 0),
        (0, 5),
        (1, 1),
        (7, 1),
        (5, 31),
        (4, 32),
        (3, 33),
        (2, block - 1),
        (2, block),
        (2, block + 1),
        (1, 5 * block + 3),
        (1000, 3),
        (3, 2000),
    ] {
        out.push((Lanes::rows(rows, len), rows * len));
    }
    for shape in [[3usize, 4, 5], [2, 33, 7], [4, 50, 3], [20, 10, 2]] {
        for axis in 0..3 {
            out.push((Lanes::axis(&shape, axis).unwrap(), shape.iter().product()));
        }
    }
    // A few columns scanned down (2 to 16 of them; on the GPU one 1-D scan of rows as vectors
    // for forward scans of rows of at most 16 bytes, else the column scan), over one and over
    // many tiles.
    for shape in [
        [37usize, 2],
        [1000, 3],
        [5, 4],
        [1000, 8],
        [300, 16],
        [20_000, 4],
    ] {
        out.push((Lanes::axis(&shape, 0).unwrap(), shape.iter().product()));
    }
    // The rows of a transposed 6 x 9 matrix (column-major storage), and of one whose columns
    // are 8 apart (a leading dimension of 8 for 6 rows).
    out.push((Lanes::strided(&[9, 6], &[1, 9], 1).unwrap(), 54));
    out.push((Lanes::strided(&[6, 9], &[1, 8], 1).unwrap(), 70));
    // Three of the five columns of a 200 x 5 matrix, and 3 of 4 columns in 6 slabs of 50 rows,
    // one after another and 30 elements apart, scanned down.
    out.push((Lanes::strided(&[200, 3], &[5, 1], 0).unwrap(), 998));
    out.push((Lanes::strided(&[6, 50, 3], &[200, 4, 1], 1).unwrap(), 1199));
    out.push((Lanes::strided(&[6, 50, 3], &[230, 4, 1], 1).unwrap(), 1349));
    // A (40 x 5 x 3) tensor viewed as (5 x 40 x 3) and scanned along its 40: groups whose
    // lanes continue one another's (one group of 15 columns, normalized). Its first 2 of 3
    // channels: groups of 2 columns 3 apart in each row. Lanes (o, j) at o + 3j in rows of
    // 12, and lanes j of groups 60 apart: lane order is not memory order.
    out.push((Lanes::strided(&[5, 40, 3], &[3, 15, 1], 1).unwrap(), 600));
    out.push((Lanes::strided(&[5, 40, 2], &[3, 15, 1], 1).unwrap(), 599));
    out.push((Lanes::strided(&[3, 20, 4], &[1, 12, 3], 1).unwrap(), 240));
    out.push((Lanes::strided(&[3, 20, 4], &[1, 3, 60], 1).unwrap(), 240));
    // Rows of 9 elements 12 apart, and rows 10 apart whose lanes lie in groups of 4 rows:
    // lanes j of the groups first, each its own run of memory.
    out.push((Lanes::strided(&[6, 9], &[12, 1], 1).unwrap(), 69));
    out.push((Lanes::strided(&[3, 9, 4], &[10, 1, 30], 1).unwrap(), 119));
    // Strided lanes each alone in its run of memory: one column of a 1000 x 3 matrix, channel 0
    // of a (4 x 50 x 3) tensor along its 50, and lanes whose groups lie closer together than
    // a group's lanes (lane order is not memory order).
    out.push((Lanes::strided(&[1000], &[3], 0).unwrap(), 2998));
    out.push((Lanes::strided(&[4, 50], &[150, 3], 1).unwrap(), 600));
    out.push((Lanes::strided(&[3, 20, 2], &[70, 3, 210], 1).unwrap(), 408));
    // Every other column of a 10 x 8 matrix, scanned down: 4 lanes of stride 8.
    out.push((
        Lanes {
            outer: 1,
            len: 10,
            inner: 4,
            outer_stride: 0,
            stride: 8,
            inner_stride: 2,
        },
        80,
    ));
    out
}

fn scans<T: Copy>(lanes: &Lanes, init: T, each: impl Fn(usize) -> T) -> Vec<LaneScan<T>> {
    let inits: Vec<T> = (0..lanes.count()).map(each).collect();
    vec![
        LaneScan::inclusive(),
        LaneScan::exclusive(init),
        LaneScan::exclusive_each(inits.clone()),
        LaneScan::inclusive().reverse(),
        LaneScan::exclusive(init).reverse(),
        LaneScan::exclusive_each(inits).reverse(),
    ]
}

/// Every layout and scan under a sum of i64, the 2x2 matrix product mod p (not commutative)
/// and a segmented sum (not commutative, elements of 16 bytes).
fn every_cell<B: Backend>(b: &B, block: usize) {
    let mut rng = Rng::new(41);
    let sum = Sum::<i64>::new();
    let mat = MatMulMod::default();
    let seg = Segmented::new(Sum::<i64>::new());
    for (lanes, span) in layouts(block) {
        let ints: Vec<i64> = (0..span).map(|_| rng.below(1000) as i64 - 500).collect();
        for how in scans(&lanes, 7, |l| l as i64 * 3 - 1) {
            check(b, &sum, &lanes, &ints, &how, "sum i64");
        }
        check_map(b, &lanes, &mut rng, span);
        let p = 1_000_003u64;
        let mats: Vec<Mat2> = (0..span)
            .map(|_| Mat2::new([0; 4].map(|_: u32| rng.below(p) as u32)))
            .collect();
        let m0 = Mat2::new([1, 2, 3, 4]);
        for how in scans(&lanes, m0, |l| Mat2::new([l as u32, 1, 0, 1])) {
            check(b, &mat, &lanes, &mats, &how, "matmul mod p");
        }
        let flagged: Vec<Flagged<i64>> = (0..span)
            .map(|_| Flagged::new(rng.below(100) as i64, rng.below(5) == 0))
            .collect();
        for how in scans(&lanes, Flagged::tail(1), |l| {
            Flagged::new(l as i64, l % 2 == 0)
        }) {
            check(b, &seg, &lanes, &flagged, &how, "segmented sum");
        }
    }
}

#[test]
fn sequential_backend() {
    every_cell(&Sequential, 256);
}

#[test]
fn parallel_backend() {
    for b in [
        Parallel::default(),
        Parallel::with_min_chunk(1),
        Parallel::with_min_chunk(7),
    ] {
        every_cell(&b, 256);
    }
}

#[test]
fn gpu_backend() {
    let Some(g) = gpu() else { return };
    every_cell(g, 256);
}

/// A million short rows and one long row of 10^7, forwards and backwards, on the GPU against
/// the parallel CPU backend (itself checked above against the definitions).
#[test]
fn gpu_large_layouts_agree_with_the_cpu() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(5);
    let sum = Sum::<i32>::new();
    for lanes in [
        Lanes::rows(1 << 20, 3),
        Lanes::rows(1, 10_000_019),
        Lanes::rows(64, 152_064),
        Lanes::axis(&[524_288, 32], 0).unwrap(),
        Lanes::axis(&[4_194_305, 2], 0).unwrap(),
    ] {
        let xs: Vec<i32> = (0..lanes.span())
            .map(|_| rng.below(2001) as i32 - 1000)
            .collect();
        for how in [
            LaneScan::inclusive(),
            LaneScan::exclusive(3).reverse(),
            LaneScan::exclusive_each((0..lanes.count() as i32).collect()),
        ] {
            let (mut got, mut want) = (xs.clone(), xs.clone());
            let t = g.scan_lanes(&sum, &lanes, &mut got, &how).unwrap();
            let w = Parallel::default()
                .scan_lanes(&sum, &lanes, &mut want, &how)
                .unwrap();
            assert!(got == want, "{lanes:?} {:?}", how.reverse);
            assert_eq!(t, w, "{lanes:?}: totals");
        }
        let folds = g.reduce_lanes(&sum, &lanes, &xs).unwrap();
        let want = Parallel::default().reduce_lanes(&sum, &lanes, &xs).unwrap();
        assert_eq!(folds, want, "{lanes:?}: reduce_lanes");
    }
}

/// Folds of lanes on device buffers: through a widening input map (one lane, rows, columns
/// and a view of some of them, all gathered or read in place, and rows given by offsets), from
/// a buffer that does not start on 16 bytes, with more totals than lanes (the rest untouched),
/// and too few totals as an error.
#[test]
fn lane_folds_on_device_buffers() {
    let Some(g) = gpu() else { return };
    let s = g.stream();
    let widen = Map::new("widen_u8", "(int)x", |x: &u8| i32::from(*x));
    let sum = Sum::<i32>::new();
    let mut rng = Rng::new(23);
    let span = 3 * 70_001;
    let bytes: Vec<u8> = (0..span).map(|_| rng.below(256) as u8).collect();
    let values: Vec<i32> = bytes.iter().map(|b| i32::from(*b)).collect();
    let view = Lanes::strided(&[1, 70_001, 2], &[0, 3, 1], 1).unwrap();
    let layouts = [
        Lanes::rows(1, span),
        Lanes::rows(3, 70_001),
        Lanes::rows(70_001, 3),
        Lanes::axis(&[70_001, 3], 0).unwrap(),
        view,
    ];
    const UNTOUCHED: i32 = -5;
    let fold = |lanes: &Lanes, data: &[i32], got: Vec<i32>, what: &str| {
        let mut want = expected(&sum, lanes, data, &LaneScan::inclusive()).1;
        want.push(UNTOUCHED);
        assert_eq!(got, want, "{what} {lanes:?}");
    };
    let input = s.clone_htod(&bytes).unwrap();
    let mapped = g.scanner(&sum).mapped(&widen);
    for lanes in &layouts {
        let mut totals = s.clone_htod(&vec![UNTOUCHED; lanes.count() + 1]).unwrap();
        mapped.reduce_lanes(&input, lanes, &mut totals).unwrap();
        fold(lanes, &values, s.clone_dtoh(&totals).unwrap(), "mapped");
    }
    // The same layouts of i32 from the second element (4 bytes past a 16-byte boundary).
    let ints = s.clone_htod(&values).unwrap();
    let scanner = g.scanner(&sum);
    let from_one = ints.slice(1..);
    for lanes in &layouts[1..] {
        let lanes = match lanes.count() {
            3 => Lanes::rows(3, 70_000),
            _ => Lanes {
                len: lanes.len - 1,
                ..*lanes
            },
        };
        let mut totals = s.clone_htod(&vec![UNTOUCHED; lanes.count() + 1]).unwrap();
        scanner
            .reduce_lanes(&from_one, &lanes, &mut totals)
            .unwrap();
        fold(
            &lanes,
            &values[1..],
            s.clone_dtoh(&totals).unwrap(),
            "unaligned",
        );
    }
    // Rows given by offsets, through the map: lengths 0, 1, 33, a tile and more.
    let ends = [0u64, 0, 1, 34, 5_034, 9_000, 150_000, span as u64];
    let offsets = s.clone_htod(&ends).unwrap();
    let mut totals = s.alloc_zeros::<i32>(ends.len() - 1).unwrap();
    mapped
        .reduce_segments(&input, &offsets, &mut totals)
        .unwrap();
    let want: Vec<i32> = ends
        .windows(2)
        .map(|w| values[w[0] as usize..w[1] as usize].iter().sum())
        .collect();
    assert_eq!(s.clone_dtoh(&totals).unwrap(), want, "mapped CSR folds");
    let mut short = s.alloc_zeros::<i32>(2).unwrap();
    assert!(scanner
        .reduce_lanes(&ints, &Lanes::rows(3, 10), &mut short)
        .is_err());
    assert!(scanner
        .reduce_segments(&ints, &offsets, &mut short)
        .is_err());
    assert!(mapped
        .reduce_lanes(&input, &Lanes::rows(3, 10), &mut short)
        .is_err());
}

/// Fused input maps: u8 flags counted per row, on every backend.
#[test]
fn maps_are_fused_on_every_backend() {
    let keep = Map::new("widen_u8", "(int)x", |x: &u8| i32::from(*x));
    let sum = Sum::<i32>::new();
    let mut rng = Rng::new(9);
    let lanes = Lanes::rows(37, 129);
    let flags: Vec<u8> = (0..lanes.span()).map(|_| rng.below(2) as u8).collect();
    let mapped: Vec<i32> = flags.iter().map(|f| i32::from(*f)).collect();
    let how = LaneScan::exclusive(0).reverse();
    let (want, want_totals) = expected(&sum, &lanes, &mapped, &how);
    let run = |b: &dyn Fn(&mut Vec<i32>) -> Vec<i32>, who: &str| {
        let mut out = vec![0; lanes.span()];
        let totals = b(&mut out);
        assert_eq!(out, want, "{who}");
        assert_eq!(totals, want_totals, "{who}: totals");
    };
    run(
        &|out| {
            Sequential
                .map_scan_lanes(&sum, &keep, &lanes, &flags, out, &how)
                .unwrap()
        },
        "sequential",
    );
    run(
        &|out| {
            Parallel::default()
                .map_scan_lanes(&sum, &keep, &lanes, &flags, out, &how)
                .unwrap()
        },
        "parallel",
    );
    if let Some(g) = gpu() {
        run(
            &|out| {
                g.map_scan_lanes(&sum, &keep, &lanes, &flags, out, &how)
                    .unwrap()
            },
            "gpu",
        );
        // Through a strided layout too (gathered on the device).
        let cols = Lanes::axis(&[129, 37], 0).unwrap();
        let (want, want_totals) = expected(&sum, &cols, &mapped, &how);
        let mut out = vec![0; cols.span()];
        let t = g
            .map_scan_lanes(&sum, &keep, &cols, &flags, &mut out, &how)
            .unwrap();
        assert_eq!((out, t), (want, want_totals), "gpu, columns");
    }
}

/// Variable-length rows given by offsets, every backend; two rows long enough that the
/// parallel backend cuts each into chunks.
#[test]
fn csr_rows_on_every_backend() {
    let mat = MatMulMod::default();
    let mut rng = Rng::new(17);
    let mut offsets = vec![0usize];
    for r in 0..200 {
        let len = match r {
            40 | 41 => 30_000 + r,
            _ => [0, 1, 2, 31, 32, 33, 300][rng.below(7) as usize],
        };
        offsets.push(offsets.last().unwrap() + len);
    }
    let n = *offsets.last().unwrap();
    let xs: Vec<Mat2> = (0..n)
        .map(|_| Mat2::new([0; 4].map(|_: u32| rng.below(1000) as u32)))
        .collect();
    let inits: Vec<Mat2> = (0..200).map(|r| Mat2::new([1, r as u32, 0, 1])).collect();
    for how in [
        LaneScan::inclusive(),
        LaneScan::inclusive().reverse(),
        LaneScan::exclusive_each(inits.clone()),
        LaneScan::exclusive_each(inits.clone()).reverse(),
    ] {
        // The definitions, row by row, through the lanes reference of one row each.
        let mut want = xs.clone();
        let mut want_totals = Vec::new();
        for r in 0..200 {
            let row = &xs[offsets[r]..offsets[r + 1]];
            let one = Lanes::rows(1, row.len());
            let per = LaneScan {
                init: how.init.as_ref().map(|_| Inits::Same(inits[r])),
                reverse: how.reverse,
            };
            let (ys, t) = expected(&mat, &one, row, &per);
            want[offsets[r]..offsets[r + 1]].copy_from_slice(&ys);
            want_totals.push(t[0]);
        }
        let check = |b: &dyn Fn(&mut Vec<Mat2>) -> Vec<Mat2>, who: &str| {
            let mut got = xs.clone();
            let t = b(&mut got);
            assert_eq!(got, want, "{who}");
            assert_eq!(t, want_totals, "{who}: totals");
        };
        check(
            &|d| Sequential.scan_segments(&mat, &offsets, d, &how).unwrap(),
            "sequential",
        );
        for p in [Parallel::default(), Parallel::with_min_chunk(7)] {
            check(
                &|d| p.scan_segments(&mat, &offsets, d, &how).unwrap(),
                "parallel",
            );
        }
        if let Some(g) = gpu() {
            check(
                &|d| g.scan_segments(&mat, &offsets, d, &how).unwrap(),
                "gpu",
            );
            if how.init.is_none() && !how.reverse {
                // The folds alone, on device buffers.
                let s = g.stream();
                let input = s.clone_htod(&xs).unwrap();
                let at: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
                let at = s.clone_htod(&at).unwrap();
                let mut totals = s.alloc_zeros::<Mat2>(200).unwrap();
                g.scanner(&mat)
                    .reduce_segments(&input, &at, &mut totals)
                    .unwrap();
                assert_eq!(s.clone_dtoh(&totals).unwrap(), want_totals, "gpu: folds");
            }
        }
    }
    let mut d = xs.clone();
    assert!(Sequential
        .scan_segments(&mat, &[0, 5, 3, n], &mut d, &LaneScan::inclusive())
        .is_err());
}

/// Bad layouts and arguments are errors on every backend, never panics.
#[test]
fn bad_layouts_are_errors() {
    let sum = Sum::<i32>::new();
    let mut xs = vec![0; 10];
    let too_long = Lanes::rows(3, 4);
    let overlapping = Lanes {
        outer: 2,
        len: 4,
        inner: 1,
        outer_stride: 2,
        stride: 1,
        inner_stride: 1,
    };
    let wrong_inits = LaneScan::exclusive_each(vec![0; 2]);
    assert!(Sequential
        .scan_lanes(&sum, &too_long, &mut xs, &LaneScan::inclusive())
        .is_err());
    assert!(Sequential
        .scan_lanes(&sum, &overlapping, &mut xs, &LaneScan::inclusive())
        .is_err());
    assert!(Sequential
        .scan_lanes(&sum, &Lanes::rows(5, 2), &mut xs, &wrong_inits)
        .is_err());
    let p = Parallel::default();
    assert!(p
        .scan_lanes(&sum, &too_long, &mut xs, &LaneScan::inclusive())
        .is_err());
    assert!(p.reduce_lanes(&sum, &overlapping, &xs).is_err());
    if let Some(g) = gpu() {
        assert!(g
            .scan_lanes(&sum, &too_long, &mut xs, &LaneScan::inclusive())
            .is_err());
        assert!(g
            .scan_lanes(&sum, &Lanes::rows(5, 2), &mut xs, &wrong_inits)
            .is_err());
    }
    assert!(Lanes::axis(&[usize::MAX, 3], 0).is_err());
}
