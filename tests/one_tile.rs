//! The one-launch scan of inputs that fit one small tile, over several shapes chosen through
//! `MONOSCAN_ONE_TILE`. This binary holds one test so that setting the variable races with
//! nothing. The shape checks run everywhere; the scans need a GPU (skipped without one).

mod common;

use common::gpu::{gpu, Rng};
use monoscan::codegen::{tile_shape, Purpose};
use monoscan::cpu::seq;
use monoscan::ops::{Mat2, MatMulMod, Sum};
use monoscan::{Algorithm, Gpu, Monoid};

/// Inclusive and exclusive scans (with total) of `xs` on the GPU against the sequential
/// reference (exact operators only), through a scanner created after the shape was chosen.
fn check<M>(gpu: &Gpu, m: &M, xs: &[M::Elem], what: &str)
where
    M: Monoid,
    M::Elem: PartialEq + std::fmt::Debug,
{
    let s = gpu.stream();
    for algorithm in [Algorithm::Auto, Algorithm::SinglePass] {
        let scanner = gpu.scanner(m).algorithm(algorithm);
        let input = s.clone_htod(xs).unwrap();
        let mut out = s.clone_htod(xs).unwrap();
        let mut total = s.clone_htod(&[m.identity()]).unwrap();
        scanner.inclusive(&input, &mut out).unwrap();
        assert_eq!(
            s.clone_dtoh(&out).unwrap(),
            seq::inclusive_scan(m, xs),
            "{what}: inclusive n={} ({algorithm})",
            xs.len()
        );
        let init = xs.first().copied().unwrap_or_else(|| m.identity());
        let (want, want_total) = seq::exclusive_scan_total(m, xs, init);
        scanner
            .exclusive_with_total(&input, &mut out, init, &mut total)
            .unwrap();
        assert_eq!(
            s.clone_dtoh(&out).unwrap(),
            want,
            "{what}: exclusive n={} ({algorithm})",
            xs.len()
        );
        assert_eq!(
            s.clone_dtoh(&total).unwrap()[0],
            want_total,
            "{what}: total n={} ({algorithm})",
            xs.len()
        );
    }
}

#[test]
fn one_tile_shapes_agree_with_the_sequential_scan() {
    // The shape knob: malformed or impossible shapes are errors, not panics.
    for bad in ["", "256", "256x", "x4", "33x4", "256x4x1", "2048x1"] {
        std::env::set_var("MONOSCAN_ONE_TILE", bad);
        let msg = tile_shape(4, 90, Purpose::OneTile).unwrap_err().to_string();
        assert!(
            msg.contains("MONOSCAN_ONE_TILE") || msg.contains("tile shape"),
            "{bad:?}: {msg}"
        );
    }
    std::env::set_var("MONOSCAN_ONE_TILE", "64x2");
    let s = tile_shape(4, 90, Purpose::OneTile).unwrap();
    assert_eq!((s.block, s.items), (64, 2));
    std::env::remove_var("MONOSCAN_ONE_TILE");
    let s = tile_shape(4, 90, Purpose::OneTile).unwrap();
    assert_eq!((s.block, s.items, s.tile()), (256, 4, 1024));

    let Some(gpu) = gpu() else { return };
    let mut rng = Rng::new(17);
    let ints: Vec<i32> = (0..9000).map(|_| rng.below(2001) as i32 - 1000).collect();
    let mats: Vec<Mat2> = (0..9000)
        .map(|_| Mat2::new([0; 4].map(|_: u32| rng.below(1_000_000_007) as u32)))
        .collect();
    // (i32 shape, 16-byte shape): the default, the single-pass tiles, one warp, one item per
    // thread and a full block, one item per thread (each within 48 KiB of shared memory).
    let shapes = [
        (None, None),
        (Some("256x32"), Some("128x16")),
        (Some("32x1"), Some("32x1")),
        (Some("1024x1"), Some("1024x1")),
        (Some("128x8"), Some("128x8")),
    ];
    for (ints_shape, mats_shape) in shapes {
        for (size, shape) in [(4, ints_shape), (16, mats_shape)] {
            match shape {
                Some(v) => std::env::set_var("MONOSCAN_ONE_TILE", v),
                None => std::env::remove_var("MONOSCAN_ONE_TILE"),
            }
            let label = shape.unwrap_or("default");
            let one = tile_shape(size, gpu.info().cc, Purpose::OneTile)
                .unwrap()
                .tile() as usize;
            for n in [1, 2, one - 1, one, one + 1, 2 * one + 3] {
                if size == 4 {
                    let n = n.min(ints.len());
                    check(
                        gpu,
                        &Sum::<i32>::new(),
                        &ints[..n],
                        &format!("{label} sum i32"),
                    );
                } else {
                    let n = n.min(mats.len());
                    let m = MatMulMod::default();
                    check(gpu, &m, &mats[..n], &format!("{label} matmod"));
                }
            }
        }
    }
    std::env::remove_var("MONOSCAN_ONE_TILE");
}
