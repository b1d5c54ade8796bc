//! The staged single-pass scan (tiles streamed into shared memory with cp.async, or on sm_90
//! and newer with one tensor copy) over several shapes, chosen through `MONOSCAN_STAGED`, and
//! the default shapes with and without the tensor copies (`MONOSCAN_TMA`). This binary holds
//! one test so that setting the variables races with nothing. It also checks the TMA form under
//! several L2 prefetch plans and pacings, and times the pacing.

mod common;

use common::gpu::{gpu, Rng};
use monoscan::codegen::{tile_shape, Purpose};
use monoscan::cpu::seq;
use monoscan::ops::{Affine, AffineMap, Sum};
use monoscan::{Algorithm, ApproxEq, Gpu, Monoid, Tolerance};

/// Inclusive and exclusive scans (with total) of `xs` on the GPU against the sequential
/// reference, through a scanner created after the shape was chosen.
fn check<M>(gpu: &Gpu, m: &M, xs: &[M::Elem], tol: Tolerance, what: &str)
where
    M: Monoid,
    M::Elem: ApproxEq + std::fmt::Debug,
{
    let s = gpu.stream();
    let scanner = gpu.scanner(m).algorithm(Algorithm::SinglePass);
    let input = s.clone_htod(xs).unwrap();
    let mut out = s.clone_htod(xs).unwrap();
    let mut total = s.clone_htod(&[m.identity()]).unwrap();
    scanner.inclusive(&input, &mut out).unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    let want = seq::inclusive_scan(m, xs);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g.approx_eq(w, tol),
            "{what}: inclusive n={} differs at {i}: {g:?} vs {w:?}",
            xs.len()
        );
    }
    let init = xs.first().copied().unwrap_or_else(|| m.identity());
    let (want, want_total) = seq::exclusive_scan_total(m, xs, init);
    scanner
        .exclusive_with_total(&input, &mut out, init, &mut total)
        .unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g.approx_eq(w, tol),
            "{what}: exclusive n={} differs at {i}: {g:?} vs {w:?}",
            xs.len()
        );
    }
    let t = s.clone_dtoh(&total).unwrap()[0];
    assert!(
        t.approx_eq(&want_total, tol),
        "{what}: total {t:?} vs {want_total:?}"
    );
}

#[test]
fn staged_shapes_agree_with_the_sequential_scan() {
    let Some(gpu) = gpu() else { return };
    if gpu.info().cc < 80 {
        eprintln!("skipped: the staged scan needs sm_80 or newer");
        return;
    }
    let mut rng = Rng::new(11);
    let ints: Vec<i32> = (0..3_000_017)
        .map(|_| rng.below(2001) as i32 - 1000)
        .collect();
    let bytes: Vec<u8> = (0..1_000_003).map(|_| rng.below(256) as u8).collect();
    let maps: Vec<AffineMap<f64>> = (0..400_009)
        .map(|_| AffineMap::new(0.5 + rng.unit() * 0.5, rng.unit() - 0.5))
        .collect();
    // threads x items: one warp to 1024 threads, 1 to 32 16-byte chunks per thread (integers,
    // then 16-byte affine maps, within the shared memory limit).
    // A third number is the look-back's predecessors per lane (small tiles make long walks
    // through many windows).
    let shapes = [
        ("256x32", "128x16"),
        ("128x16", "256x8"),
        ("32x16", "32x4"),
        ("1024x32", "512x1"),
        ("64x128", "64x32"),
        ("192x32x4", "256x8x2"),
        ("32x16x8", "32x2x8"),
        ("64x16x2", "64x4x4"),
        // More than 256 threads: the TMA form's tile arrives in 2 or 3 boxes.
        ("288x32", "288x8"),
        ("576x32", "320x8"),
    ];
    for (ints_shape, maps_shape) in shapes {
        std::env::set_var("MONOSCAN_STAGED", ints_shape);
        for (size, what) in [(4, "sum i32"), (1, "sum u8")] {
            let st = tile_shape(size, gpu.info().cc, Purpose::Staged).unwrap();
            assert!(st.staged, "{ints_shape} should stage {what}: {st:?}");
        }
        let st = tile_shape(4, gpu.info().cc, Purpose::Staged).unwrap();
        let tma_on = std::env::var("MONOSCAN_TMA").map_or(true, |v| v == "1");
        if gpu.info().cc >= 90 && tma_on && st.items * 4 == 128 {
            // Runs of 128 bytes load by tensor copies, in several boxes past 256 threads.
            assert!(st.tma, "{ints_shape}: {st:?}");
            assert_eq!(st.tma_boxes(), st.block.div_ceil(256), "{ints_shape}");
        }
        let tile = st.tile() as usize;
        for n in [tile - 1, tile, tile + 1, 5 * tile + 3, ints.len()] {
            let what = format!("{ints_shape} sum i32");
            check(gpu, &Sum::<i32>::new(), &ints[..n], Tolerance::EXACT, &what);
        }
        let what = format!("{ints_shape} sum u8");
        check(gpu, &Sum::<u8>::new(), &bytes, Tolerance::EXACT, &what);

        std::env::set_var("MONOSCAN_STAGED", maps_shape);
        let st = tile_shape(16, gpu.info().cc, Purpose::Staged).unwrap();
        assert!(st.staged, "{maps_shape} should stage affine f64: {st:?}");
        let what = format!("{maps_shape} affine f64");
        check(gpu, &Affine::<f64>::new(), &maps, affine_tol(&maps), &what);
    }
    std::env::remove_var("MONOSCAN_STAGED");

    // The default shapes, loaded by cp.async and (sm_90 and newer) by one tensor copy per tile.
    let cc = gpu.info().cc;
    for tma in ["0", "1"] {
        std::env::set_var("MONOSCAN_TMA", tma);
        let on = tma == "1" && cc >= 90;
        let st = tile_shape(4, cc, Purpose::Staged).unwrap();
        assert_eq!(st.tma, on, "MONOSCAN_TMA={tma} on sm_{cc}: {st:?}");
        let tile = st.tile() as usize;
        for n in [tile + 1, 3 * tile, 7 * tile + 5, ints.len()] {
            let what = format!("default shape, MONOSCAN_TMA={tma}, sum i32");
            check(gpu, &Sum::<i32>::new(), &ints[..n], Tolerance::EXACT, &what);
        }
        assert_eq!(tile_shape(16, cc, Purpose::Staged).unwrap().tma, on);
        let what = format!("default shape, MONOSCAN_TMA={tma}, affine f64");
        check(gpu, &Affine::<f64>::new(), &maps, affine_tol(&maps), &what);
        // The listing counts the tile buffer against residency.
        let sum = Sum::<i32>::new();
        let scanner = gpu.scanner(&sum).algorithm(Algorithm::SinglePass);
        scanner.prepare().unwrap();
        let info = scanner.kernel_info().unwrap();
        let staged = info
            .iter()
            .find(|k| k.name.ends_with(" scan_staged") && k.name.contains("staged-"))
            .expect("the staged kernel is loaded");
        assert_eq!(
            staged.dynamic_shared_bytes as usize,
            st.staged_smem_bytes(4)
        );
        assert!(
            staged.blocks_per_sm >= 1
                && staged.blocks_per_sm * staged.dynamic_shared_bytes <= 228 * 1024,
            "{staged:?}"
        );
        assert_eq!(staged.name.contains("tma-"), on, "{staged:?}");
    }
    // Prefetching 2 tiles ahead (48 KiB) instead of 3 MiB (the TMA form's default), and not at
    // all; with and without the first-wave rule (the prefetch plan never changes what a tile
    // reads, only which tiles L2 is asked for).
    // `big` spans several waves of resident blocks, so that the prefetches reach its last
    // full tile.
    let big: Vec<i32> = (0..(1usize << 25) + 77)
        .map(|_| rng.below(2001) as i32 - 1000)
        .collect();
    // Pacing off, several waves paced slowly (the last paced tiles due so late that they go at
    // once), and fast.
    let plans: [&[(&str, &str)]; 8] = [
        &[],
        &[("MONOSCAN_PREFETCH_KIB", "48")],
        &[("MONOSCAN_PREFETCH_KIB", "0")],
        &[
            ("MONOSCAN_PREFETCH_KIB", "48"),
            ("MONOSCAN_FIRST_WAVE", "0"),
        ],
        &[("MONOSCAN_FIRST_WAVE", "0")],
        &[("MONOSCAN_PACE_GBPS", "0")],
        &[("MONOSCAN_PACE_GBPS", "200"), ("MONOSCAN_PACE_WAVES", "3")],
        &[("MONOSCAN_PACE_GBPS", "100000")],
    ];
    for plan in plans {
        for (var, value) in plan {
            std::env::set_var(var, value);
        }
        let what = format!("default shape, {plan:?}, sum i32");
        check(gpu, &Sum::<i32>::new(), &ints, Tolerance::EXACT, &what);
        check(gpu, &Sum::<i32>::new(), &big, Tolerance::EXACT, &what);
        let what = format!("default shape, {plan:?}, affine f64");
        check(gpu, &Affine::<f64>::new(), &maps, affine_tol(&maps), &what);
        for (var, _) in plan {
            std::env::remove_var(var);
        }
    }
    paced_copies_wait_for_their_time(gpu, &mut rng);
    for (var, value, call) in [
        ("MONOSCAN_PREFETCH_KIB", "6MiB", 0),
        ("MONOSCAN_PREFETCH_KIB", "-1", 1),
        ("MONOSCAN_FIRST_WAVE", "yes", 1),
        ("MONOSCAN_PACE_GBPS", "fast", 1),
        ("MONOSCAN_PACE_GBPS", "2000000", 1),
        ("MONOSCAN_PACE_WAVES", "-1", 1),
    ] {
        std::env::set_var(var, value);
        let err = if call == 0 {
            monoscan::codegen::prefetch_tiles(4096).unwrap_err()
        } else {
            monoscan::codegen::PrefetchPlan::new(4096, 5000, 1000, 4800).unwrap_err()
        };
        assert!(err.to_string().contains(&format!("{var}={value}")), "{err}");
        std::env::remove_var(var);
    }
    std::env::set_var("MONOSCAN_TMA", "2");
    let err = tile_shape(4, cc, Purpose::Staged).unwrap_err();
    assert!(err.to_string().contains("MONOSCAN_TMA=2"), "{err}");
    std::env::remove_var("MONOSCAN_TMA");
}

/// On the TMA form, pacing delays the first tiles' copies: two waves of tiles, all paced so
/// that the last is due 150 us after the first, take at least ~120 us, where unpaced they take
/// a fraction of that (~40 us on an H200).
fn paced_copies_wait_for_their_time(gpu: &Gpu, rng: &mut Rng) {
    let shape = tile_shape(4, gpu.info().cc, Purpose::Staged).unwrap();
    if !shape.tma {
        eprintln!("pacing not timed: the staged scan of i32 has no TMA form here");
        return;
    }
    let sum = Sum::<i32>::new();
    let scanner = gpu.scanner(&sum).algorithm(Algorithm::SinglePass);
    scanner.prepare().unwrap();
    let staged = scanner
        .kernel_info()
        .unwrap()
        .into_iter()
        .find(|k| k.name.ends_with(" scan_staged"))
        .expect("the staged kernel is loaded");
    // A launch of one wave is not paced: this one has two.
    let tiles = 2 * u64::from(staged.blocks_per_sm * gpu.info().sm_count);
    let xs: Vec<i32> = (0..tiles * shape.tile())
        .map(|_| rng.below(2001) as i32 - 1000)
        .collect();
    let s = gpu.stream();
    let input = s.clone_htod(&xs).unwrap();
    let mut out = s.clone_htod(&xs).unwrap();
    // Tile t is due t * (150 us / tiles) after tile 0: bytes * 1000 / ps = GB/s.
    let pace_ps = 150_000_000 / tiles;
    let gbps = (shape.tile_bytes(4) as u64 * 1000 / pace_ps).to_string();
    let mut median = |vars: &[(&str, &str)]| {
        for (var, value) in vars {
            std::env::set_var(var, value);
        }
        let t = gpu
            .time(1, 5, || scanner.inclusive(&input, &mut out))
            .unwrap();
        for (var, _) in vars {
            std::env::remove_var(var);
        }
        assert_eq!(s.clone_dtoh(&out).unwrap(), seq::inclusive_scan(&sum, &xs));
        t.median_ms()
    };
    let paced = median(&[
        ("MONOSCAN_PACE_GBPS", gbps.as_str()),
        ("MONOSCAN_PACE_WAVES", "2"),
    ]);
    let unpaced = median(&[("MONOSCAN_PACE_GBPS", "0")]);
    assert!(
        paced > 0.12 && paced > 1.5 * unpaced,
        "{tiles} tiles paced over 150 us took {paced} ms, unpaced {unpaced} ms"
    );
}

/// Not commutative: a tile combined out of order gives a different map. Any grouping of n - 1
/// compositions errs by at most about (n - 1) eps sum(|a| + |b|).
fn affine_tol(maps: &[AffineMap<f64>]) -> Tolerance {
    let scale: f64 = maps.iter().map(|m| m.a.abs() + m.b.abs()).sum();
    Tolerance {
        rel: 0.0,
        abs: 2.0 * (maps.len() as f64 + 2.0) * f64::EPSILON * (scale + 1.0),
    }
}
