//! The 1-D reverse scan (one lane scanned from the end) on the GPU, against the sequential CPU
//! backend: where the forward scan of the same input runs the staged scan, the reverse one runs
//! the staged scan from the end over the opposite monoid (its module is the one loaded), and so
//! does one whose forward scan runs in the share scan; elsewhere (one tile, buffers off 16
//! bytes, input maps that change the element size) the register-tile single-pass scan from
//! the end does; in the deterministic mode, reduce-then-scan from the end, bitwise the same
//! from run to run. Columns of rows of at most 16 bytes scanned from the last row
//! run as one such scan of rows as vectors. Sums of f32 with NaN and infinities within the
//! tolerance derived from each suffix, non-commutative exact operators exactly, a fused input
//! map, and lengths around the tile. Other element sizes and every staged shape and tile order
//! are checked where those are (`any_size`, `tuning`).

mod common;

use common::gpu::{gpu, Rng};
use common::lanes::{check, reverse_1d, scans};
use common::{assert_same, sums, Cmp};
use monoscan::cache::{CacheConfig, KernelCache, Origin};
use monoscan::codegen::KernelSet;
use monoscan::cpu::Sequential;
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::ops::{Affine, AffineMap, Mat2, MatMulMod, Reversed, Sum};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{policy, Purpose, ShareScan, Tuning};
use monoscan::{Algorithm, Backend, Gpu, Map, Monoid};
use std::sync::Arc;

/// The staged tile of a forward scan of `n` elements of `m` on `g`, or `None` where that scan
/// does not stage.
fn staged_tile<M: Monoid>(g: &Gpu, m: &M, n: u64) -> Option<u64> {
    let plan = Plan::new(&m.cuda(), g.info().limits, g.tuning());
    match plan.scan_set(Algorithm::Auto, n, true).unwrap() {
        KernelSet::StagedScan(s) => Some(s.tile()),
        _ => None,
    }
}

/// GPU 0 under `tuning`, on a memory-only kernel cache of its own, and that cache: what the
/// GPU loads is then what these calls fetched.
fn on_own_cache(tuning: Tuning) -> (Arc<KernelCache>, Gpu) {
    let cache = Arc::new(KernelCache::new(CacheConfig::memory_only()));
    let g = Gpu::with_cache(0, cache.clone())
        .unwrap()
        .with_tuning(tuning)
        .unwrap();
    (cache, g)
}

/// Whether `g`'s `cache` holds in memory the module `set` (a scan from the end) over the
/// opposite monoid of `m`: a reverse scan on `g` has loaded it.
fn reverse_loaded<M: Monoid>(cache: &KernelCache, g: &Gpu, m: M, set: KernelSet) -> bool {
    let opposite = Reversed::new(m).cuda();
    let plan = Plan::new(&opposite, g.info().limits, g.tuning());
    let fetched = cache
        .fetch(&cache.intern(opposite), plan.spec(set), g.target())
        .unwrap();
    fetched.origin == Origin::Memory
}

/// The tile, for `purpose`, of sums of u32 counts on `g`.
fn counts_tile(g: &Gpu, purpose: Purpose) -> usize {
    Plan::new(&Sum::<u32>::new().cuda(), g.info().limits, g.tuning())
        .shape(purpose)
        .unwrap()
        .tile() as usize
}

/// `n` random 2x2 matrices of entries below p = 1,000,000,007 (for `MatMulMod::default()`).
fn matrices(n: usize, rng: &mut Rng) -> Vec<Mat2> {
    let p = 1_000_000_007u64;
    (0..n)
        .map(|_| Mat2::new([0; 4].map(|_: u32| rng.below(p) as u32)))
        .collect()
}

/// `n` random `u8` flags mapped to `u32` counts as they load (the map changes the element
/// size) and scanned in reverse on `g`, inclusive and exclusive with the total: exactly the
/// sequential backend's results.
fn flags_to_counts(g: &Gpu, n: usize, rng: &mut Rng, what: &str) {
    let counts = Sum::<u32>::new();
    let count = Map::new("flag_count", "x != 0 ? 1u : 0u", |x: &u8| {
        u32::from(*x != 0)
    });
    let flags: Vec<u8> = (0..n).map(|_| rng.below(3) as u8).collect();
    let lanes = Lanes::rows(1, n);
    for how in [
        LaneScan::inclusive().reverse(),
        LaneScan::exclusive(9).reverse(),
    ] {
        let who = format!("{what}, n={n} {how:?}");
        let mut want: Vec<u32> = flags.iter().map(|x| count.apply(x)).collect();
        let want_total = Sequential
            .scan_lanes(&counts, &lanes, &mut want, &how)
            .unwrap();
        let mut got = vec![0u32; n];
        let total = g
            .map_scan_lanes(&counts, &count, &lanes, &flags, &mut got, &how)
            .unwrap();
        assert_same(&who, &got, &want, Cmp::Exact);
        assert_eq!(total, want_total, "{who}: total");
    }
}

/// Lengths around the staged tile of 2^22 elements (one tile and less run the one-tile scan
/// forwards, the register-tile scan from the end in reverse).
fn lengths<M: Monoid>(g: &Gpu, m: &M) -> Vec<usize> {
    let tile = staged_tile(g, m, 1 << 22).unwrap_or(4096) as usize;
    vec![
        1,
        33,
        tile - 1,
        tile,
        tile + 1,
        2 * tile,
        5 * tile + 3,
        1 << 22,
    ]
}

/// `n` random f32 values with an infinity, a NaN and a negative infinity (where there is room
/// for finite prefixes and suffixes around them), summed in reverse on `g`: a NaN or an
/// infinity reaches every suffix that holds it, and finite values lie within
/// `n * eps * (sum of |x|)` of the sequential sums.
fn f32_sums(g: &Gpu, n: usize, rng: &mut Rng, what: &str) {
    let m = Sum::<f32>::new();
    let mut xs: Vec<f32> = (0..n)
        .map(|_| (rng.below(129) as f32 - 64.0) / 4.0)
        .collect();
    if n > 64 {
        xs[n / 3] = f32::INFINITY;
        xs[n / 2] = f32::NAN;
        xs[2 * n / 3] = f32::NEG_INFINITY;
    }
    let reversed: Vec<f32> = xs.iter().rev().copied().collect();
    let cmp = sums(&Reversed::new(m), &reversed, 0.25);
    reverse_1d(g, &m, &xs, 0.25, cmp, what);
}

/// Sums of f32 with NaN and infinities, within the tolerance derived from each suffix.
#[test]
fn floats_with_nan_and_infinities() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(5);
    for n in lengths(g, &Sum::<f32>::new()) {
        f32_sums(g, n, &mut rng, "sum f32");
    }
}

/// Not commutative, exact: 2x2 matrices mod p, and affine maps with a = ±1 and integer b (every
/// composition exact in f64).
#[test]
fn non_commutative_operators_exactly() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(9);
    let m = MatMulMod::default();
    for n in lengths(g, &m) {
        let xs = matrices(n, &mut rng);
        let init = Mat2::new([3, 1, 4, 1]);
        reverse_1d(g, &m, &xs, init, Cmp::Exact, "matmul mod p");
    }
    let m = Affine::<f64>::new();
    for n in lengths(g, &m) {
        let xs: Vec<AffineMap<f64>> = (0..n)
            .map(|_| {
                let a = if rng.below(2) == 0 { 1.0 } else { -1.0 };
                AffineMap::new(a, rng.below(17) as f64 - 8.0)
            })
            .collect();
        reverse_1d(
            g,
            &m,
            &xs,
            AffineMap::new(-1.0, 2.0),
            Cmp::Exact,
            "affine f64",
        );
    }
}

/// A fused input map (u32 read as i32, the same size, so the staged form applies), and
/// buffers that start 4 bytes past 16 (the register-tile scan from the end runs): the same
/// results.
#[test]
fn maps_and_unaligned_buffers() {
    let Some(g) = gpu() else { return };
    let m = Sum::<i32>::new();
    let as_i32 = Map::new("as_i32", "(int)x", |x: &u32| *x as i32);
    let mut rng = Rng::new(21);
    for n in lengths(g, &m) {
        let lanes = Lanes::rows(1, n);
        let input: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let mapped: Vec<i32> = input.iter().map(|x| *x as i32).collect();
        for how in [
            LaneScan::inclusive().reverse(),
            LaneScan::exclusive(-5).reverse(),
        ] {
            let who = format!("n={n} {how:?}");
            let mut want = mapped.clone();
            let want_total = Sequential.scan_lanes(&m, &lanes, &mut want, &how).unwrap();
            let mut got = vec![0; n];
            let total = g
                .map_scan_lanes(&m, &as_i32, &lanes, &input, &mut got, &how)
                .unwrap();
            assert_same(&format!("mapped {who}"), &got, &want, Cmp::Exact);
            assert_eq!(total, want_total, "mapped {who}: total");
            let s = g.stream();
            let padded: Vec<i32> = std::iter::once(0).chain(mapped.iter().copied()).collect();
            let inp = s.clone_htod(&padded).unwrap();
            let mut out = s.clone_htod(&padded).unwrap();
            let mut t = s.clone_htod(&[0i32]).unwrap();
            {
                let mut view = out.slice_mut(1..);
                g.scanner(&m)
                    .scan_lanes_with_totals(&inp.slice(1..), &mut view, &lanes, &how, &mut t)
                    .unwrap();
            }
            let got = s.clone_dtoh(&out).unwrap();
            assert_same(&format!("unaligned {who}"), &got[1..], &want, Cmp::Exact);
            assert_eq!(s.clone_dtoh(&t).unwrap(), want_total, "unaligned {who}");
        }
    }
}

/// A reverse scan that the forward scan would stage loads the staged scan from the end, over
/// the opposite monoid, in the forward scan's shape.
#[test]
fn a_staged_input_loads_the_reverse_staged_module() {
    let Some(shared) = gpu() else { return };
    let m = Sum::<i32>::new();
    let n = 1u64 << 22;
    let Some(_) = staged_tile(shared, &m, n) else {
        eprintln!("skipped: the staged scan needs sm_80 or newer");
        return;
    };
    let (cache, g) = on_own_cache(Tuning::default());
    let mut xs: Vec<i32> = (0..n as i32).collect();
    g.scan_lanes(
        &m,
        &Lanes::rows(1, n as usize),
        &mut xs,
        &LaneScan::inclusive().reverse(),
    )
    .unwrap();
    let forward = Plan::new(&m.cuda(), g.info().limits, g.tuning());
    let KernelSet::StagedScan(shape) = forward.scan_set(Algorithm::Auto, n, true).unwrap() else {
        unreachable!("checked above");
    };
    assert!(reverse_loaded(
        &cache,
        &g,
        m,
        KernelSet::StagedScanReverse(shape)
    ));
}

/// Where the forward scan runs in the share scan (here always: `ShareScan::Always`), the
/// reverse scan runs the share scan from the end over the opposite monoid (its module is the
/// one loaded), in one and two stage buffers: exact for a non-commutative operator over whole
/// shares only, a tail one element short of a share and a short tail (two or three steps per
/// share, from the resident threads of the forward module), inclusive and exclusive with the
/// total; f32 sums with NaN and infinities within the tolerance derived from each suffix. An
/// input too small for the shares runs the staged scan from the end in the plan's staged shape.
#[test]
fn a_share_scanned_input_runs_the_share_scan_from_the_end() {
    let Some(_) = gpu() else { return };
    for stages in [1, 2] {
        let tuning = Tuning {
            share_scan: ShareScan::Always,
            share_stages: Some(stages),
            autotune: false,
            ..Tuning::default()
        };
        let (cache, g) = on_own_cache(tuning);
        let m = MatMulMod::default();
        let scanner = g.scanner(&m);
        scanner.prepare().unwrap();
        let kernels = scanner.kernel_info().unwrap();
        let plan = Plan::new(&m.cuda(), g.info().limits, g.tuning());
        let size = std::mem::size_of::<Mat2>() as u64;
        let Some(whole) = common::gpu::share_step_bytes(&g, &kernels, size as usize) else {
            assert!(
                plan.share_scan_set().unwrap().is_none(),
                "the plan has a share scan that prepare did not load"
            );
            eprintln!("skipped: no share scan on this device (its tensor copies need sm_90)");
            return;
        };
        let Some(KernelSet::ShareScan { shape, .. }) = plan.share_scan_set().unwrap() else {
            panic!("prepare loaded a share scan that the plan does not have");
        };
        let from_end = KernelSet::ShareScan {
            shape,
            stages,
            reverse: true,
        };
        let mut rng = Rng::new(13 + u64::from(stages));
        for bytes in [2 * whole, 3 * whole - size, 2 * whole + 5 * size] {
            let n = (bytes / size) as usize;
            let xs = matrices(n, &mut rng);
            let what = format!("matmul mod p, share scan from the end, {stages} stages");
            reverse_1d(&g, &m, &xs, Mat2::new([2, 7, 1, 8]), Cmp::Exact, &what);
        }
        assert!(reverse_loaded(&cache, &g, m, from_end), "{stages} stages");
        // Too small for the shares (half a step per resident thread): the staged scan from
        // the end.
        let n = (whole / size / 2 + 7) as usize;
        let xs = matrices(n, &mut rng);
        reverse_1d(
            &g,
            &m,
            &xs,
            Mat2::new([3, 1, 4, 1]),
            Cmp::Exact,
            "matmul mod p, small",
        );
        let KernelSet::StagedScan(staged) = plan.scan_set(Algorithm::Auto, n as u64, true).unwrap()
        else {
            panic!("a scan of {n} elements with a share scan does not stage");
        };
        assert!(reverse_loaded(
            &cache,
            &g,
            m,
            KernelSet::StagedScanReverse(staged)
        ));
        let f = Sum::<f32>::new();
        let sums_scanner = g.scanner(&f);
        sums_scanner.prepare().unwrap();
        let kernels = sums_scanner.kernel_info().unwrap();
        let Some(whole) = common::gpu::share_step_bytes(&g, &kernels, 4) else {
            continue;
        };
        let n = (2 * whole / 4 + 5) as usize;
        f32_sums(&g, n, &mut rng, "sum f32, share scan from the end");
    }
}

/// Where the forward scan takes the register tile, the reverse scan runs the register-tile
/// single-pass scan from the end over the opposite monoid (its module is the one loaded):
/// exact for a non-commutative operator (2x2 matrices mod p) in buffers that start one element
/// past 16 bytes, and for `u8` flags mapped to `u32` counts (the map changes the element
/// size), over one tile, several and a partial one, inclusive and exclusive with the total.
#[test]
fn unstaged_inputs_run_the_register_tile_from_the_end() {
    let Some(_) = gpu() else { return };
    let (cache, g) = on_own_cache(Tuning::default());
    let s = g.stream();
    let m = MatMulMod::default();
    let plan = Plan::new(&m.cuda(), g.info().limits, g.tuning());
    let shape = plan.shape(Purpose::SinglePass).unwrap();
    let tile = shape.tile() as usize;
    let mut rng = Rng::new(41);
    for n in [tile - 1, tile + 1, 3 * tile + 7] {
        let xs = matrices(n + 1, &mut rng);
        let lanes = Lanes::rows(1, n);
        for how in [
            LaneScan::inclusive().reverse(),
            LaneScan::exclusive(Mat2::new([2, 7, 1, 8])).reverse(),
        ] {
            let who = format!("matmul mod p, off 16 bytes, n={n} {how:?}");
            let mut want = xs[1..].to_vec();
            let want_total = Sequential.scan_lanes(&m, &lanes, &mut want, &how).unwrap();
            let inp = s.clone_htod(&xs).unwrap();
            let mut out = s.clone_htod(&xs).unwrap();
            let mut t = s.clone_htod(&[Mat2::new([0; 4])]).unwrap();
            {
                let mut view = out.slice_mut(1..);
                g.scanner(&m)
                    .scan_lanes_with_totals(&inp.slice(1..), &mut view, &lanes, &how, &mut t)
                    .unwrap();
            }
            let got = s.clone_dtoh(&out).unwrap();
            assert_same(&who, &got[1..], &want, Cmp::Exact);
            assert_eq!(got[0], xs[0], "{who}: the element before the view");
            assert_eq!(s.clone_dtoh(&t).unwrap(), want_total, "{who}: total");
        }
    }
    assert!(reverse_loaded(
        &cache,
        &g,
        m,
        KernelSet::SinglePassReverse(shape)
    ));
    let tile = counts_tile(&g, Purpose::SinglePass);
    for n in [1, tile, 2 * tile + 5] {
        flags_to_counts(&g, n, &mut rng, "u8 flags to u32 counts");
    }
}

/// In the deterministic mode the reverse scan runs reduce-then-scan from the end over the
/// opposite monoid (its module is the one loaded): exact for a non-commutative operator (2x2
/// matrices mod p) over one tile, a partial one, several, and more tiles than one tile of
/// totals holds (a second level of totals); `u8` flags mapped to `u32` counts; sums of f32
/// with NaN and infinities within the tolerance derived from each suffix; and affine f64 maps
/// whose products round, bitwise the same from run to run.
#[test]
fn the_deterministic_mode_scans_from_the_end_reproducibly() {
    let Some(_) = gpu() else { return };
    let (cache, g) = on_own_cache(Tuning::default());
    let g = g.deterministic(true);
    let mut rng = Rng::new(43);
    let m = MatMulMod::default();
    let shape = Plan::new(&m.cuda(), g.info().limits, g.tuning())
        .shape(Purpose::Tiles)
        .unwrap();
    let tile = shape.tile() as usize;
    for n in [
        1,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 7,
        tile * (tile + 2) + 3,
    ] {
        let xs = matrices(n, &mut rng);
        let init = Mat2::new([3, 1, 4, 1]);
        reverse_1d(&g, &m, &xs, init, Cmp::Exact, "deterministic matmul mod p");
    }
    assert!(reverse_loaded(
        &cache,
        &g,
        m,
        KernelSet::ReduceThenScanReverse(shape)
    ));
    let tile = counts_tile(&g, Purpose::Tiles);
    for n in [tile - 3, 2 * tile + 5] {
        flags_to_counts(&g, n, &mut rng, "deterministic u8 flags to u32 counts");
    }
    for n in [tile + 1, 1 << 22] {
        f32_sums(&g, n, &mut rng, "deterministic sum f32");
    }
    let m = Affine::<f64>::new();
    let xs: Vec<AffineMap<f64>> = (0..3_000_017)
        .map(|i| AffineMap::new(1.0 - 1e-7 * (i % 13) as f64, (i % 101) as f64 * 0.37))
        .collect();
    let lanes = Lanes::rows(1, xs.len());
    let how = LaneScan::inclusive().reverse();
    let bits = |ys: &[AffineMap<f64>]| -> Vec<(u64, u64)> {
        ys.iter().map(|y| (y.a.to_bits(), y.b.to_bits())).collect()
    };
    let mut first = xs.clone();
    g.scan_lanes(&m, &lanes, &mut first, &how).unwrap();
    for _ in 0..3 {
        let mut again = xs.clone();
        g.scan_lanes(&m, &lanes, &mut again, &how).unwrap();
        assert!(
            bits(&first) == bits(&again),
            "affine f64 in reverse differs between runs"
        );
    }
}

/// Columns of rows of at most 16 bytes scanned up from the last row: one reverse 1-D scan of
/// rows as vectors (staged where the forward scan stages, else in registers). Sums of i32 down 2 and 4 columns and
/// exact affine f32 maps (not commutative) down 2, over few rows and many.
#[test]
fn narrow_columns_from_the_last_row() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(31);
    for (rows, cols) in [(1000, 2), (1 << 20, 2), (1000, 4), ((1 << 19) + 3, 4)] {
        let lanes = Lanes::axis(&[rows, cols], 0).unwrap();
        let data: Vec<i32> = (0..rows * cols).map(|_| rng.next_u64() as i32).collect();
        for how in scans(cols, -3, |j| j as i32) {
            if how.reverse {
                let what = "sum i32 columns";
                check(
                    g,
                    &Sum::<i32>::new(),
                    &lanes,
                    &data,
                    &how,
                    what,
                    &|i| i % cols,
                    &|a, b, _| a == b,
                );
            }
        }
    }
    let m = Affine::<f32>::new();
    for rows in [1000, (1 << 20) + 1] {
        let lanes = Lanes::axis(&[rows, 2], 0).unwrap();
        let data: Vec<AffineMap<f32>> = (0..2 * rows)
            .map(|_| {
                let a = if rng.below(2) == 0 { 1.0 } else { -1.0 };
                AffineMap::new(a, rng.below(17) as f32 - 8.0)
            })
            .collect();
        let init = AffineMap::new(-1.0, 3.0);
        for how in scans(2, init, |j| AffineMap::new(1.0, j as f32)) {
            if how.reverse {
                check(
                    g,
                    &m,
                    &lanes,
                    &data,
                    &how,
                    "affine f32 columns",
                    &|i| i % 2,
                    &|a, b, _| a == b,
                );
            }
        }
    }
}

/// `Scanner::prepare_reverse` loads every module a 1-D scan from the end takes, whatever its
/// size: after it, reverse scans of one small tile, one single-pass tile and one element more,
/// the small and the large staged tiles, a buffer off 16 bytes and (with the share scan always
/// on) an input of whole shares, and in the deterministic mode reduce-then-scan over several
/// levels, fetch no module from the cache (none compiled, none found in memory), with exact
/// results (2x2 matrices mod p); the report names the opposite monoid, and a second call finds
/// every module loaded.
#[test]
fn prepare_reverse_loads_what_the_scans_from_the_end_take() {
    let Some(_) = gpu() else { return };
    let m = MatMulMod::default();
    let mut rng = Rng::new(47);
    for (deterministic, share_scan) in [
        (false, ShareScan::Auto),
        (false, ShareScan::Always),
        (true, ShareScan::Auto),
    ] {
        let tuning = Tuning {
            share_scan,
            autotune: false,
            ..Tuning::default()
        };
        let (cache, g) = on_own_cache(tuning);
        let g = g.deterministic(deterministic);
        let what = format!("deterministic {deterministic}, share scan {share_scan:?}");
        let scanner = g.scanner(&m);
        let report = scanner.prepare_reverse().unwrap();
        assert_eq!(
            report.count(Origin::Compiled),
            report.modules.len(),
            "{what}: a fresh cache compiles every module"
        );
        let opposite = cache.intern(Reversed::new(m).cuda());
        assert_eq!(
            report.op.id(),
            opposite.id(),
            "{what}: the report's operator"
        );
        let before = cache.stats();
        let plan = Plan::new(&m.cuda(), g.info().limits, g.tuning()).deterministic(deterministic);
        let tile = |p| plan.shape(p).unwrap().tile() as usize;
        let mut sizes = vec![
            1,
            tile(Purpose::OneTile),
            tile(Purpose::SinglePass) + 1,
            3 * tile(Purpose::Staged) + 5,
            // Past the small-input tiles: the large ones.
            (policy::SMALL_INPUT_BYTES / std::mem::size_of::<Mat2>() as u64) as usize + 3,
        ];
        if deterministic {
            sizes.push(tile(Purpose::Tiles) * (tile(Purpose::Tiles) + 2) + 3);
        } else if share_scan == ShareScan::Always {
            sizes.push((1 << 22) + 9);
        }
        let s = g.stream();
        for n in sizes {
            for off in [0, 1] {
                let xs = matrices(n + off, &mut rng);
                let lanes = Lanes::rows(1, n);
                let how = LaneScan::exclusive(Mat2::new([2, 7, 1, 8])).reverse();
                let mut want = xs[off..].to_vec();
                Sequential.scan_lanes(&m, &lanes, &mut want, &how).unwrap();
                let inp = s.clone_htod(&xs).unwrap();
                let mut out = s.clone_htod(&xs).unwrap();
                {
                    let mut view = out.slice_mut(off..);
                    scanner
                        .scan_lanes(&inp.slice(off..), &mut view, &lanes, &how)
                        .unwrap();
                }
                let got = s.clone_dtoh(&out).unwrap();
                let who = format!("{what}, n={n}, {off} element(s) past 16 bytes");
                assert_same(&who, &got[off..], &want, Cmp::Exact);
            }
        }
        let after = cache.stats();
        assert_eq!(
            (after.compiles, after.memory_hits, after.disk_hits),
            (before.compiles, before.memory_hits, before.disk_hits),
            "{what}: a scan from the end fetched a module that prepare_reverse did not load"
        );
        let again = g.scanner(&m).prepare_reverse().unwrap();
        assert_eq!(again.count(Origin::Loaded), again.modules.len(), "{what}");
    }
}
