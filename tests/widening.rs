//! Scans and reductions through input maps that read narrower inputs than the elements they
//! scan (`u8` flags to `u32` counts; `u8` bytes to the heads and values of a segmented `u32`
//! sum, which is not commutative; `u16` to `u64`), which the staged scan and the staged reduce
//! take on sm_80 and newer: scans forwards and from the end, inclusive and exclusive from an
//! initial value with the total, at lengths around the tiles of 2-, 4- and 8-byte elements and
//! of several tiles, and reductions at the same lengths and at lengths of several tiles per
//! block (the reduce's copies run ahead of its folds), on the GPU, exactly against the
//! sequential scan and fold.
mod common;

use common::gpu::gpu;
use monoscan::cpu::Sequential;
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::ops::{Flagged, Segmented, Sum};
use monoscan::{Backend, Element, Map, Monoid};
use std::fmt::Debug;

/// Lengths around one register tile and the staged tiles (128 and 352 threads of 128-byte
/// runs, for 4- and 8-byte elements), and inputs of many tiles.
const LENGTHS: [usize; 17] = [
    1,
    2,
    33,
    4_095,
    4_096,
    4_097,
    5_632,
    5_633,
    8_192,
    8_193,
    11_263,
    11_264,
    11_265,
    45_057,
    1 << 20,
    (1 << 20) + 13,
    3_000_017,
];

/// Lengths at which every block of the staged reduce folds several tiles (more than its
/// stages) on devices of up to 160 SMs, the last one partial.
const LONG: [usize; 2] = [48_000_000, 48_000_017];

/// Pseudo-random inputs, a fixed hash of the position and `seed`.
fn inputs<In: Element>(n: usize, seed: u64, of: impl Fn(u64) -> In) -> Vec<In> {
    (0..n as u64)
        .map(|i| of((i ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40))
        .collect()
}

/// Every scan of `xs` through `map` on the GPU (inclusive and exclusive from `init`,
/// forwards and from the end, with the total) against the sequential scan, its reduction
/// against the sequential fold (also at the [`LONG`] lengths), and, on sm_80 and newer, that
/// the forward scans of inputs beyond one tile ran the staged scan and the reductions the
/// staged reduce.
fn scans<M, In>(m: &M, map: &Map<In, M::Elem>, init: M::Elem, of: impl Fn(u64) -> In + Copy)
where
    M: Monoid,
    M::Elem: PartialEq + Debug,
    In: Element,
{
    let Some(g) = gpu() else {
        return;
    };
    let scanner = g.scanner(m).mapped(map);
    for n in LENGTHS {
        let xs = inputs(n, n as u64, of);
        let input = g.stream().clone_htod(&xs).unwrap();
        let lanes = Lanes::rows(1, n);
        for how in [
            LaneScan::inclusive(),
            LaneScan::exclusive(init),
            LaneScan::inclusive().reverse(),
            LaneScan::exclusive(init).reverse(),
        ] {
            let mut want = vec![m.identity(); n];
            let want_total = Sequential
                .map_scan_lanes(m, map, &lanes, &xs, &mut want, &how)
                .unwrap();
            let mut out = scanner.alloc_filled(n, m.identity()).unwrap();
            let mut total = scanner.alloc_filled(1, m.identity()).unwrap();
            scanner
                .scan_lanes(&input, &mut out, &lanes, &how, Some(&mut total))
                .unwrap();
            let got = g.stream().clone_dtoh(&out).unwrap();
            let what = format!("{} n={n} {how:?}", m.cuda().name);
            if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                panic!("{what}: element {i}: {:?}, want {:?}", got[i], want[i]);
            }
            assert_eq!(g.stream().clone_dtoh(&total).unwrap(), want_total, "{what}");
        }
    }
    for n in LENGTHS.into_iter().chain(LONG) {
        let xs = inputs(n, !(n as u64), of);
        let input = g.stream().clone_htod(&xs).unwrap();
        let want = Sequential.map_reduce(m, map, &xs).unwrap();
        let mut total = scanner.alloc_filled(1, m.identity()).unwrap();
        scanner.reduce(&input, &mut total).unwrap();
        let got = g.stream().clone_dtoh(&total).unwrap();
        assert_eq!(got, [want], "{} reduce n={n}", m.cuda().name);
    }
    if g.info().limits.cc >= 80 {
        let names: Vec<String> = scanner
            .kernel_info()
            .unwrap()
            .into_iter()
            .map(|k| k.name)
            .collect();
        for entry in ["scan_staged", "reduce_staged_mapped"] {
            assert!(
                names.iter().any(|k| k.contains(entry)),
                "the mapped calls never ran {entry}: {names:?}"
            );
        }
    }
}

#[test]
fn u8_flags_to_u32_counts() {
    let count = Map::new("flag_count", "x != 0 ? 1u : 0u", |x: &u8| {
        u32::from(*x != 0)
    });
    scans(&Sum::<u32>::new(), &count, 5, |h| (h % 3) as u8);
}

#[test]
fn u8_bytes_to_segment_heads_not_commutative() {
    let heads = Map::new(
        "byte_heads",
        "monoscan_flagged_unsigned_int{x & 63u, x >> 7}",
        |x: &u8| Flagged {
            value: u32::from(*x & 63),
            flag: u32::from(*x >> 7),
        },
    );
    let m = Segmented::new(Sum::<u32>::new());
    scans(&m, &heads, Flagged::head(1000), |h| (h % 256) as u8);
}

#[test]
fn u16_to_u64() {
    let wide = Map::new("wide", "(unsigned long long)x * 65537ull", |x: &u16| {
        u64::from(*x) * 65_537
    });
    scans(&Sum::<u64>::new(), &wide, 3, |h| h as u16);
}
