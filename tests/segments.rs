//! Rows of any length given by CSR offsets, scanned on device buffers
//! (`Scanner::scan_segments`: the staged row kernel's `segment_staged` for aligned buffers of
//! values it stages, the register row kernel's `segment_scan` for the rest, both run here),
//! against the sequential CPU backend: rows of 0, 1, 2, 31..33 elements and around tile
//! sizes, rows of no elements first, last, between and where tiles meet, every row empty, one
//! row, a million short rows and a few long ones; forward and reverse, inclusive and
//! exclusive from one or per-row initial values, with every row's total and without totals.
//! Exact operators (sums of i64, the matrix product mod p, which is not commutative) compare
//! exactly; sums of f32 with NaN and infinities compare exactly too, as every partial sum of
//! their small integers is exact in f32 whatever the grouping. Also: a fused input map, the
//! `Gpu` backend's checked host offsets, missing offsets and short buffers as errors, and
//! offsets out of order or past the input, over one tile and over many, which must not fault.

mod common;

use common::gpu::{gpu, Rng};
use common::lanes::scans;
use monoscan::cpu::Sequential;
use monoscan::cudarc::driver::CudaSlice;
use monoscan::lanes::LaneScan;
use monoscan::ops::{Mat2, MatMulMod, Sum};
use monoscan::{Backend, Gpu, Map, Monoid};
use std::fmt::Debug;

/// Offsets on the device.
fn upload(g: &Gpu, offsets: &[usize]) -> CudaSlice<u64> {
    let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
    g.stream().clone_htod(&wide).unwrap()
}

/// CSR offsets of rows of `lens` elements.
fn offsets_of(lens: &[usize]) -> Vec<usize> {
    let mut offsets = vec![0];
    for len in lens {
        offsets.push(offsets.last().unwrap() + len);
    }
    offsets
}

/// Row lengths to try: the boundary lengths, empty rows at the ends and between, one row,
/// every row empty, many short rows, and rows around the tile sizes of the register row
/// kernel (whose tiles hold up to a few thousand lifted elements).
fn shapes(rng: &mut Rng) -> Vec<Vec<usize>> {
    let mut shapes = vec![
        vec![1],
        vec![0],
        vec![0, 0, 0],
        vec![5_000],
        vec![0, 0, 3, 0, 31, 32, 33, 0, 0],
        vec![1, 2, 31, 32, 33, 255, 256, 257, 1_023, 1_024, 1_025],
        vec![4_095, 0, 4_096, 4_097, 8_191, 8_192, 8_193, 0],
        vec![70_001, 0, 1, 65_536, 2],
        // Rows of no elements where tiles of 4,096 values meet, and runs of them longer than
        // a block of threads.
        vec![4_096, 0, 0, 4_096, 0, 8_192, 0],
        [
            vec![0; 1_000],
            vec![4_100],
            vec![0; 1_000],
            vec![3],
            vec![0; 700],
        ]
        .concat(),
    ];
    shapes.push((0..3_000).map(|_| rng.below(5) as usize).collect());
    shapes.push(
        (0..300)
            .map(|_| [0, 1, 2, 31, 32, 33, 700, 5_000][rng.below(8) as usize])
            .collect(),
    );
    shapes
}

/// Scans `data` in the rows of `offsets` as `how` says on `g` (device buffers that start
/// `shift` elements into their allocations: 0 is 16-byte aligned, what the staged kernel
/// takes) and on the sequential backend; every value and every row's total must be `same`.
#[allow(clippy::too_many_arguments)]
fn check<M: Monoid>(
    g: &Gpu,
    m: &M,
    offsets: &[usize],
    data: &[M::Elem],
    shift: usize,
    how: &LaneScan<M::Elem>,
    what: &str,
    same: &dyn Fn(&M::Elem, &M::Elem) -> bool,
) where
    M::Elem: Debug,
{
    let rows = offsets.len() - 1;
    let n = data.len();
    let scanner = g.scanner(m);
    let mut padded = vec![m.identity(); shift];
    padded.extend_from_slice(data);
    let input = g.stream().clone_htod(&padded).unwrap();
    let offs = upload(g, offsets);
    let mut output = scanner.alloc_filled(n + shift, m.identity()).unwrap();
    let mut totals = scanner.alloc_filled(rows, m.identity()).unwrap();
    scanner
        .scan_segments_with_totals(
            &input.slice(shift..),
            &mut output.slice_mut(shift..),
            &offs,
            how,
            &mut totals,
        )
        .unwrap_or_else(|e| panic!("{what} {how:?}: {e}"));
    let got = g.stream().clone_dtoh(&output.slice(shift..)).unwrap();
    let got_totals = g.stream().clone_dtoh(&totals).unwrap();
    // Without totals: the kernels then follow rows only where per-row initial values are read.
    let mut plain = scanner.alloc_filled(n + shift, m.identity()).unwrap();
    scanner
        .scan_segments(
            &input.slice(shift..),
            &mut plain.slice_mut(shift..),
            &offs,
            how,
        )
        .unwrap_or_else(|e| panic!("{what} {how:?} without totals: {e}"));
    let got_plain = g.stream().clone_dtoh(&plain.slice(shift..)).unwrap();
    let mut want = data.to_vec();
    let want_totals = Sequential
        .scan_segments(m, offsets, &mut want, how)
        .unwrap();
    let row_of = |i: usize| offsets.partition_point(|&o| o <= i) - 1;
    if let Some(i) = (0..want.len()).find(|&i| !same(&got[i], &want[i])) {
        panic!(
            "{what} ({rows} rows) {how:?}: value {i} (row {}) is {:?}, want {:?}",
            row_of(i),
            got[i],
            want[i]
        );
    }
    if let Some(i) = (0..want.len()).find(|&i| !same(&got_plain[i], &want[i])) {
        panic!(
            "{what} ({rows} rows) {how:?} without totals: value {i} (row {}) is {:?}, want {:?}",
            row_of(i),
            got_plain[i],
            want[i]
        );
    }
    if let Some(r) = (0..rows).find(|&r| !same(&got_totals[r], &want_totals[r])) {
        panic!(
            "{what} ({rows} rows) {how:?}: total {r} (of {} elements) is {:?}, want {:?}",
            offsets[r + 1] - offsets[r],
            got_totals[r],
            want_totals[r]
        );
    }
}

#[test]
fn rows_of_any_length_match_the_sequential_scan() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(11);
    let sum = Sum::<i64>::new();
    let mat = MatMulMod::default();
    for lens in shapes(&mut rng) {
        let offsets = offsets_of(&lens);
        let n = *offsets.last().unwrap();
        let what = format!("rows of {:?}", &lens[..lens.len().min(12)]);
        let xs: Vec<i64> = (0..n).map(|_| rng.below(2_000) as i64 - 1_000).collect();
        for how in scans(lens.len(), 7, |r| r as i64 * 3 - 50) {
            // Aligned (the staged kernel) and one element in (the register kernel).
            for shift in [0, 1] {
                check(g, &sum, &offsets, &xs, shift, &how, &what, &|a, b| a == b);
            }
        }
        let ms: Vec<Mat2> = (0..n)
            .map(|_| Mat2::new([0; 4].map(|_: u32| rng.below(1_000) as u32)))
            .collect();
        let init = Mat2::new([1, 2, 0, 1]);
        for how in scans(lens.len(), init, |r| Mat2::new([1, r as u32, 3, 1])) {
            check(g, &mat, &offsets, &ms, 0, &how, &what, &|a, b| a == b);
        }
    }
}

#[test]
fn a_million_short_rows_and_a_few_long_ones() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(12);
    let sum = Sum::<i64>::new();
    let short: Vec<usize> = (0..1_000_000).map(|_| rng.below(4) as usize).collect();
    let long = vec![3_000_000, 0, 1, 2_500_001];
    for lens in [short, long] {
        let offsets = offsets_of(&lens);
        let n = *offsets.last().unwrap();
        let xs: Vec<i64> = (0..n).map(|_| rng.below(1 << 20) as i64).collect();
        for how in scans(lens.len(), -3, |r| r as i64) {
            check(g, &sum, &offsets, &xs, 0, &how, "large", &|a, b| a == b);
        }
    }
}

#[test]
fn float_rows_carry_nan_and_infinities() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(13);
    let sum = Sum::<f32>::new();
    // NaN is the same as NaN here; otherwise values compare exactly.
    let same = |a: &f32, b: &f32| a == b || (a.is_nan() && b.is_nan());
    for lens in shapes(&mut rng) {
        let offsets = offsets_of(&lens);
        let n = *offsets.last().unwrap();
        let xs: Vec<f32> = (0..n)
            .map(|_| match rng.below(400) {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                v => (v % 17) as f32 - 8.0,
            })
            .collect();
        for how in scans(lens.len(), 0.5, |r| r as f32) {
            check(g, &sum, &offsets, &xs, 0, &how, "f32", &same);
        }
    }
}

#[test]
fn an_input_map_is_fused() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(14);
    let sum = Sum::<u32>::new();
    let count = Map::new("flag_count", "(unsigned int)(x != 0)", |x: &u8| {
        u32::from(*x != 0)
    });
    let lens: Vec<usize> = (0..500).map(|_| rng.below(600) as usize).collect();
    let offsets = offsets_of(&lens);
    let n = *offsets.last().unwrap();
    let flags: Vec<u8> = (0..n).map(|_| rng.below(3) as u8).collect();
    let scanner = g.scanner(&sum).mapped(&count);
    let input = g.stream().clone_htod(&flags).unwrap();
    let offs = upload(g, &offsets);
    for how in scans(lens.len(), 10, |r| r as u32) {
        let mut output = scanner.alloc_filled(n, 0).unwrap();
        let mut totals = scanner.alloc_filled(lens.len(), 0).unwrap();
        scanner
            .scan_segments(&input, &mut output, &offs, &how, Some(&mut totals))
            .unwrap();
        let mut want: Vec<u32> = flags.iter().map(|x| u32::from(*x != 0)).collect();
        let want_totals = Sequential
            .scan_segments(&sum, &offsets, &mut want, &how)
            .unwrap();
        assert_eq!(g.stream().clone_dtoh(&output).unwrap(), want, "{how:?}");
        assert_eq!(
            g.stream().clone_dtoh(&totals).unwrap(),
            want_totals,
            "{how:?}"
        );
    }
}

#[test]
fn the_gpu_backend_checks_host_offsets() {
    let Some(g) = gpu() else { return };
    let sum = Sum::<i32>::new();
    let mut xs = vec![1, 2, 3, 4, 5];
    let inclusive = LaneScan::inclusive();
    for bad in [&[][..], &[1, 5], &[0, 3, 2, 5], &[0, 6], &[0, 4]] {
        let got = g.scan_segments(&sum, bad, &mut xs, &inclusive);
        assert!(got.is_err(), "offsets {bad:?} were accepted");
    }
    assert_eq!(xs, [1, 2, 3, 4, 5]);
    let totals = g.scan_segments(&sum, &[0, 2, 2, 5], &mut xs, &inclusive);
    assert_eq!(totals.unwrap(), [3, 0, 12]);
    assert_eq!(xs, [1, 3, 3, 7, 12]);
}

#[test]
fn bad_arguments_are_errors() {
    let Some(g) = gpu() else { return };
    let sum = Sum::<i32>::new();
    let scanner = g.scanner(&sum);
    let s = g.stream();
    let input = s.clone_htod(&[1, 2, 3, 4, 5]).unwrap();
    let offsets = upload(g, &[0, 1, 2, 5]);
    let mut output = scanner.alloc_filled(5, 0).unwrap();
    let mut short = scanner.alloc_filled(2, 0).unwrap();
    let inclusive = LaneScan::inclusive();
    let none = offsets.slice(0..0);
    assert!(scanner
        .scan_segments(&input, &mut output, &none, &inclusive)
        .is_err());
    let two_inits = LaneScan::exclusive_each(vec![0, 0]);
    assert!(scanner
        .scan_segments(&input, &mut output, &offsets, &two_inits)
        .is_err());
    assert!(scanner
        .scan_segments_with_totals(&input, &mut output, &offsets, &inclusive, &mut short)
        .is_err());
    assert!(scanner
        .scan_segments(&input, &mut short, &offsets, &inclusive)
        .is_err());
    // Offsets out of order, or past the input, give unspecified values but touch nothing
    // outside the buffers: the context stays usable and the next scan is right.
    let each = LaneScan::exclusive_each(vec![1, 2, 3]);
    for wild in [[0, 4, 1, 5], [0, 9, 99, 5], [3, 3, 3, 3], [0, 0, 0, 2]] {
        let wild = upload(g, &wild);
        let mut totals = scanner.alloc_filled(3, 0).unwrap();
        scanner
            .scan_segments_with_totals(&input, &mut output, &wild, &each, &mut totals)
            .unwrap();
        for how in [&each, &LaneScan::inclusive().reverse()] {
            scanner
                .scan_segments_with_totals(&input, &mut output, &wild, how, &mut totals)
                .unwrap();
        }
    }
    s.synchronize().unwrap();
    scanner
        .scan_segments(&input, &mut output, &offsets, &inclusive)
        .unwrap();
    assert_eq!(s.clone_dtoh(&output).unwrap(), [1, 2, 3, 7, 12]);
}

/// Offsets out of order and past the input over many tiles, in both kernels (aligned buffers
/// and one element in), with per-row initial values and totals: unspecified values, no fault,
/// and the next scan is right.
#[test]
fn wild_offsets_over_many_tiles_do_not_fault() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(15);
    let sum = Sum::<f32>::new();
    let scanner = g.scanner(&sum);
    let s = g.stream();
    let n = 300_000;
    let rows = 2_000;
    let data: Vec<f32> = (0..=n).map(|i| (i % 7) as f32).collect();
    let input = s.clone_htod(&data).unwrap();
    let mut output = scanner.alloc_filled(n + 1, 0.0).unwrap();
    let mut totals = scanner.alloc_filled(rows, 0.0).unwrap();
    let sorted: Vec<u64> = (0..=rows as u64)
        .map(|r| r * 3 * n as u64 / rows as u64)
        .collect();
    let shuffled: Vec<u64> = (0..=rows).map(|_| rng.below(3 * n as u64)).collect();
    let huge: Vec<u64> = (0..=rows).map(|r| u64::MAX - r as u64).collect();
    for wild in [sorted, shuffled, huge] {
        let wild = s.clone_htod(&wild).unwrap();
        for how in scans(rows, 1.0, |r| r as f32) {
            for shift in [0, 1] {
                scanner
                    .scan_segments_with_totals(
                        &input.slice(shift..shift + n),
                        &mut output.slice_mut(shift..shift + n),
                        &wild,
                        &how,
                        &mut totals,
                    )
                    .unwrap();
                scanner
                    .scan_segments(
                        &input.slice(shift..shift + n),
                        &mut output.slice_mut(shift..shift + n),
                        &wild,
                        &how,
                    )
                    .unwrap();
            }
        }
    }
    s.synchronize().unwrap();
    let lens: Vec<usize> = (0..rows).map(|r| [0, 1, 300][r % 3]).collect();
    let offsets = offsets_of(&lens);
    let m = *offsets.last().unwrap();
    let offs = upload(g, &offsets);
    scanner
        .scan_segments(
            &input.slice(0..m),
            &mut output.slice_mut(0..m),
            &offs,
            &LaneScan::inclusive(),
        )
        .unwrap();
    let mut want = data[..m].to_vec();
    Sequential
        .scan_segments(&sum, &offsets, &mut want, &LaneScan::inclusive())
        .unwrap();
    assert_eq!(s.clone_dtoh(&output.slice(0..m)).unwrap(), want);
}
