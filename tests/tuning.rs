//! Tuning variants through the API: one test per variant, each on a `Gpu` of its own with the
//! variant's `Tuning` attached, so that they run in parallel. Each checks the scans (the 1-D
//! reverse scans too, which run the staged scan's shape from the end; or, for compaction's
//! shapes, the compactions) against the sequential reference; results never depend on the
//! tuning. The variants: the staged scan's shapes (one warp to 1024 threads, 1 to 32
//! 16-byte chunks per thread, look-back windows of 2 to 8, tiles of 288 and 576 threads that
//! arrive in several tensor-copy boxes), its tensor copies on and off, its L2 prefetch plans
//! and pacings, the one-tile scan's shapes, and compaction's staged shapes. Invalid tunings are
//! errors, never panics.
//!
//! Each variant first checks, with no GPU, the shape or plan the policy derives from its tuning
//! for sm_80 and sm_90; the GPU part skips (printing why) without a GPU, and fails instead under
//! MONOSCAN_REQUIRE_GPU=1.

mod common;

use common::gpu::{gpu, gpu_with, Rng};
use common::lanes;
use common::suite::{reference, Check, Mapped, OnGpu, Visit};
use common::{affine_maps, Cmp};
use monoscan::ops::{Affine, AffineMap, Mat2, MatMulMod, Reversed, Sum};
use monoscan::tuning::{
    policy, DeviceLimits, FirstWave, Pace, PrefetchPlan, Purpose, ShapeChoice, TileOrder,
    TileShape, Tuning,
};
use monoscan::{Algorithm, ApproxEq, Backend, Error, Gpu, Map, Monoid};

/// Every plain operation of `algorithm` on `gpu` (reduce; inclusive out of place and in place;
/// exclusive from `init = xs[0]`, with and without its total, and in place) against the
/// sequential reference, on buffers that start aligned (so that the staged kernels run).
fn check<M: Monoid>(gpu: &Gpu, algorithm: Algorithm, m: &M, xs: &[M::Elem], cmp: Cmp, what: &str)
where
    M::Elem: ApproxEq,
{
    let init = xs.first().copied().unwrap_or_else(|| m.identity());
    let want = reference(m, xs, init);
    let mut check = Check {
        who: what.to_string(),
        m,
        xs,
        init,
        want: &want,
        cmp,
    };
    let path = OnGpu {
        gpu,
        algorithm,
        offset: 0,
    };
    check.path(&format!("{algorithm}"), &path, Mapped::Skipped);
}

/// Integers in `-1000..=1000`.
fn ints(seed: u64, n: usize) -> Vec<i32> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.below(2001) as i32 - 1000).collect()
}

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.below(256) as u8).collect()
}

/// Contractions (`a` in `[0, 1)`), so that long compositions stay in range.
fn maps(seed: u64, n: usize) -> Vec<AffineMap<f64>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| AffineMap::new(0.5 + rng.unit() * 0.5, rng.unit() - 0.5))
        .collect()
}

const INTS: usize = 3_000_017;
const BYTES: usize = 1_000_003;
const MAPS: usize = 400_009;

/// The plain operations of sum i32 (see `check`), and its 1-D reverse scans.
fn sum_i32(gpu: &Gpu, xs: &[i32], what: &str) {
    let m = Sum::<i32>::new();
    check(gpu, Algorithm::SinglePass, &m, xs, Cmp::Exact, what);
    lanes::reverse_1d(gpu, &m, xs, 7, Cmp::Exact, what);
}

/// The plain operations of the affine maps (see `check`), and their 1-D reverse scans, each
/// within the tolerance derived from the sequence it composes.
fn affine_f64(gpu: &Gpu, xs: &[AffineMap<f64>], what: &str) {
    let m = Affine::<f64>::new();
    let init = xs.first().copied().unwrap_or_else(|| m.identity());
    let cmp = affine_maps(&m, xs, init);
    check(gpu, Algorithm::SinglePass, &m, xs, cmp, what);
    let reversed: Vec<_> = xs.iter().rev().copied().collect();
    let cmp = affine_maps(&Reversed::new(m), &reversed, init);
    lanes::reverse_1d(gpu, &m, xs, init, cmp, what);
}

/// Whether the device can run the staged scan at all (sm_80 and newer); says so when not.
fn stages(gpu: &Gpu) -> bool {
    let ok = gpu.info().cc >= 80;
    if !ok {
        eprintln!("skipped: the staged scan needs sm_80 or newer");
    }
    ok
}

// ---------------------------------------------------------------------------------------------
// The staged scan's shapes

/// Asserts that the staged shape `tuning` gives elements of each of `sizes` bytes under
/// `limits` is `choice`, staged, and loaded by tensor copies exactly where each thread's run is
/// one 128-byte row on sm_90 or newer, in one box per 256 rows (rounded up). Returns the shape
/// of the first size.
fn assert_staged(
    limits: &DeviceLimits,
    tuning: &Tuning,
    choice: ShapeChoice,
    sizes: &[usize],
) -> TileShape {
    let shapes: Vec<TileShape> = sizes
        .iter()
        .map(|&size| {
            let st = policy::tile_shape(size, limits, tuning, Purpose::Staged)
                .unwrap_or_else(|e| panic!("{choice} for {size}-byte elements: {e}"));
            let what = format!("{choice} for {size}-byte elements on sm_{}", limits.cc);
            assert!(st.staged, "{what} should stage: {st:?}");
            assert_eq!(
                (st.block, st.items),
                (choice.threads, choice.items),
                "{what}"
            );
            assert_eq!(st.lookback, choice.lookback.unwrap_or(1), "{what}");
            let tma = limits.cc >= 90 && tuning.tma && st.items as usize * size == 128;
            assert_eq!(st.tma, tma, "{what}: {st:?}");
            if tma {
                assert_eq!(st.tma_boxes(), st.block.div_ceil(256), "{what}");
            }
            st
        })
        .collect();
    shapes[0]
}

/// The staged scan of i32 and u8 in the tile shape `shape`: tile - 1, tile, tile + 1, five
/// tiles and a bit, and three million i32; a million u8.
fn staged_ints(shape: &str) {
    let choice: ShapeChoice = shape.parse().unwrap();
    let tuning = Tuning {
        staged: Some(choice),
        ..Tuning::default()
    };
    for cc in [80, 90] {
        assert_staged(&DeviceLimits::for_arch(cc), &tuning, choice, &[4, 1]);
    }
    let Some(gpu) = gpu_with(tuning) else { return };
    if !stages(&gpu) {
        return;
    }
    let st = assert_staged(&gpu.info().limits, gpu.tuning(), choice, &[4, 1]);
    let xs = ints(11, INTS);
    let tile = st.tile() as usize;
    for n in [tile - 1, tile, tile + 1, 5 * tile + 3, xs.len()] {
        sum_i32(&gpu, &xs[..n], &format!("staged {shape}: sum i32"));
    }
    let m = Sum::<u8>::new();
    let what = format!("staged {shape}: sum u8");
    let xs = bytes(12, BYTES);
    check(&gpu, Algorithm::SinglePass, &m, &xs, Cmp::Exact, &what);
    lanes::reverse_1d(&gpu, &m, &xs, 3, Cmp::Exact, &what);
}

/// The staged scan of 16-byte affine maps in the tile shape `shape`.
fn staged_maps(shape: &str) {
    let choice: ShapeChoice = shape.parse().unwrap();
    let tuning = Tuning {
        staged: Some(choice),
        ..Tuning::default()
    };
    for cc in [80, 90] {
        assert_staged(&DeviceLimits::for_arch(cc), &tuning, choice, &[16]);
    }
    let Some(gpu) = gpu_with(tuning) else { return };
    if !stages(&gpu) {
        return;
    }
    assert_staged(&gpu.info().limits, gpu.tuning(), choice, &[16]);
    affine_f64(
        &gpu,
        &maps(13, MAPS),
        &format!("staged {shape}: affine f64"),
    );
}

/// One test per staged shape: `threads x items [x look-back]`.
macro_rules! staged_shapes {
    ($($name:ident: $shape:literal, $run:ident;)*) => {
        mod staged_shape {
            use super::*;
            $(
                #[test]
                fn $name() {
                    $run($shape);
                }
            )*
        }
    };
}

// One warp to 1024 threads, 1 to 32 16-byte chunks per thread (i32 and u8, then 16-byte
// affine maps, within the shared memory limit); a third number is the look-back's
// predecessors per lane (small tiles make long walks through many windows); more than 256
// threads: the TMA form's tile arrives in 2, 3 or 4 boxes.
staged_shapes! {
    ints_256x32: "256x32", staged_ints;
    ints_128x16: "128x16", staged_ints;
    ints_32x16: "32x16", staged_ints;
    ints_1024x32: "1024x32", staged_ints;
    ints_64x128: "64x128", staged_ints;
    ints_192x32x4: "192x32x4", staged_ints;
    ints_32x16x8: "32x16x8", staged_ints;
    ints_64x16x2: "64x16x2", staged_ints;
    ints_288x32: "288x32", staged_ints;
    ints_576x32: "576x32", staged_ints;
    maps_128x16: "128x16", staged_maps;
    maps_256x8: "256x8", staged_maps;
    maps_32x4: "32x4", staged_maps;
    maps_512x1: "512x1", staged_maps;
    maps_64x32: "64x32", staged_maps;
    maps_256x8x2: "256x8x2", staged_maps;
    maps_32x2x8: "32x2x8", staged_maps;
    maps_64x4x4: "64x4x4", staged_maps;
    maps_288x8: "288x8", staged_maps;
    maps_320x8: "320x8", staged_maps;
}

// ---------------------------------------------------------------------------------------------
// Tensor copies on and off

/// The default staged shapes, loaded by `cp.async` and (sm_90 and newer, `tma: true`) by one
/// tensor copy per tile; the kernel listing counts the tile buffer against residency. The
/// policy's shapes: autotuning is off.
fn default_staged_shapes(tma: bool) {
    let tuning = Tuning {
        tma,
        autotune: false,
        ..Tuning::default()
    };
    for cc in [80, 90] {
        for size in [4, 16] {
            let st =
                policy::tile_shape(size, &DeviceLimits::for_arch(cc), &tuning, Purpose::Staged)
                    .unwrap();
            assert!(st.staged, "{size} bytes on sm_{cc}");
            assert_eq!(st.tma, tma && cc >= 90, "{size} bytes on sm_{cc}");
        }
    }
    let Some(gpu) = gpu_with(tuning) else { return };
    if !stages(&gpu) {
        return;
    }
    let (limits, cc) = (gpu.info().limits, gpu.info().cc);
    let on = tma && cc >= 90;
    let shape = |size| policy::tile_shape(size, &limits, gpu.tuning(), Purpose::Staged).unwrap();
    let st = shape(4);
    assert_eq!(st.tma, on, "tma {tma} on sm_{cc}: {st:?}");
    assert_eq!(shape(16).tma, on);
    let xs = ints(14, INTS);
    let tile = st.tile() as usize;
    for n in [tile + 1, 3 * tile, 7 * tile + 5, xs.len()] {
        sum_i32(
            &gpu,
            &xs[..n],
            &format!("default shape, tma {tma}: sum i32"),
        );
    }
    affine_f64(
        &gpu,
        &maps(15, MAPS),
        &format!("default shape, tma {tma}: affine f64"),
    );
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
            && staged.blocks_per_sm * staged.dynamic_shared_bytes <= limits.shared_per_sm,
        "{staged:?}"
    );
    assert_eq!(staged.name.contains("tma-"), on, "{staged:?}");
}

#[test]
fn tma_on() {
    default_staged_shapes(true);
}

#[test]
fn tma_off() {
    default_staged_shapes(false);
}

// ---------------------------------------------------------------------------------------------
// Prefetch plans and pacing

/// What the plan of `tuning` should be for a launch of `tiles` tiles of `tile_bytes` with
/// `resident` blocks on a device of `mem_gbps`: `(ahead, first_wave, pace_ps, paced)`.
fn planned(
    tuning: &Tuning,
    tile_bytes: usize,
    tiles: u64,
    resident: u32,
    mem_gbps: u32,
) -> (u32, u32, u32, u32) {
    let ahead = (u64::from(tuning.prefetch_kib) * 1024 / tile_bytes as u64) as u32;
    let first_wave = match tuning.first_wave {
        FirstWave::Prefetch => 0,
        FirstWave::Auto | FirstWave::Skip => resident,
    };
    let gbps = match tuning.pace {
        Pace::Off => 0,
        Pace::Gbps(g) => u64::from(g),
        Pace::Auto => (f64::from(mem_gbps) * Tuning::DEFAULT_PACE_SHARE) as u64,
    };
    if gbps == 0 || tuning.pace_waves == 0 || tiles <= u64::from(resident) {
        return (ahead, first_wave, 0, 0);
    }
    let pace_ps = (tile_bytes as u64 * 1000).div_ceil(gbps) as u32;
    (ahead, first_wave, pace_ps, resident * tuning.pace_waves)
}

/// The staged scan's sum i32 (three million, and 2^25 + 77: several waves of resident blocks,
/// so that the prefetches reach its last full tile) and affine f64 under `tuning`'s plan; first,
/// the plan it gives an H100-sized launch (the default 44 KiB tiles, 132 SMs of 5 blocks).
fn plan(tuning: Tuning) {
    let h100 = DeviceLimits::for_arch(90);
    let st = policy::tile_shape(4, &h100, &tuning, Purpose::Staged).unwrap();
    let tile_bytes = st.tile_bytes(4);
    let resident = 132 * h100.blocks_per_sm(st.block, st.staged_smem_bytes(4));
    for tiles in [
        100,
        u64::from(resident),
        ((1u64 << 25) + 77).div_ceil(st.tile()),
    ] {
        let p = PrefetchPlan::new(&tuning, tile_bytes, tiles, resident, 3352).unwrap();
        assert_eq!(
            (p.ahead, p.first_wave, p.pace_ps, p.paced),
            planned(&tuning, tile_bytes, tiles, resident, 3352),
            "{tuning} over {tiles} tiles"
        );
        // Each tile past the first wave (and past the distance) is asked for once.
        let mut asked = vec![0u32; tiles as usize];
        for t in 0..tiles as u32 {
            if let Some(u) = p.target(t).filter(|&u| u64::from(u) < tiles) {
                asked[u as usize] += 1;
            }
        }
        for (u, &count) in asked.iter().enumerate() {
            let want = p.ahead > 0 && u as u32 >= p.first_wave.max(p.ahead);
            assert_eq!(count, u32::from(want), "tile {u} under {p:?}");
        }
    }
    let Some(gpu) = gpu_with(tuning.clone()) else {
        return;
    };
    if !stages(&gpu) {
        return;
    }
    let what = format!("default shape, {tuning}");
    sum_i32(&gpu, &ints(16, INTS), &format!("{what}: sum i32"));
    sum_i32(&gpu, &ints(17, (1 << 25) + 77), &format!("{what}: sum i32"));
    affine_f64(&gpu, &maps(18, MAPS), &format!("{what}: affine f64"));
}

/// One test per prefetch plan and pacing.
macro_rules! plans {
    ($($name:ident: $tuning:expr;)*) => {
        mod prefetch_and_pace {
            use super::*;
            $(
                #[test]
                fn $name() {
                    plan($tuning);
                }
            )*
        }
    };
}

// Prefetching 2 tiles ahead (48 KiB) instead of 3 MiB (the default), and not at all; with and
// without the first-wave rule (the plan never changes what a tile reads, only which tiles L2 is
// asked for). Pacing off, several waves paced slowly (the last paced tiles due so late that they
// go at once), and fast.
plans! {
    default: Tuning::default();
    prefetch_48_kib: Tuning { prefetch_kib: 48, ..Tuning::default() };
    no_prefetch: Tuning { prefetch_kib: 0, ..Tuning::default() };
    prefetch_48_kib_first_wave_too: Tuning {
        prefetch_kib: 48,
        first_wave: FirstWave::Prefetch,
        ..Tuning::default()
    };
    first_wave_too: Tuning { first_wave: FirstWave::Prefetch, ..Tuning::default() };
    first_wave_skipped: Tuning { first_wave: FirstWave::Skip, ..Tuning::default() };
    pace_off: Tuning { pace: Pace::Off, ..Tuning::default() };
    pace_200_gbps_over_3_waves: Tuning {
        pace: Pace::Gbps(200),
        pace_waves: 3,
        ..Tuning::default()
    };
    pace_100000_gbps: Tuning { pace: Pace::Gbps(100_000), ..Tuning::default() };
    claimed_tiles: Tuning { tile_order: TileOrder::Claimed, ..Tuning::default() };
    claimed_tiles_unpaced: Tuning {
        tile_order: TileOrder::Claimed,
        pace: Pace::Off,
        ..Tuning::default()
    };
    one_wave_by_block: Tuning { tile_order: TileOrder::OneWave, ..Tuning::default() };
}

/// The staged scan in every tile order (block b on tile b in a cooperative launch of one wave
/// and in ordinary launches beyond, block order for one wave only, or every tile claimed from
/// the counter) at tile counts around the resident blocks' (one tile, one wave less a tile,
/// exactly one wave, one tile more, two waves and a partial tile), for sum i32 and the
/// non-commutative affine maps; then one wave and then two and a bit, each in every order in
/// turn on one `Gpu`, so that the counter and the epochs pass from one order to the other.
#[test]
fn tile_orders_around_a_wave() {
    let Some(probe) = gpu_with(Tuning::default()) else {
        return;
    };
    if !stages(&probe) {
        return;
    }
    let limits = probe.info().limits;
    // Blocks of the staged scan resident at once, and its tile, for an operator.
    let wave = |info: Vec<monoscan::KernelInfo>, elem_size: usize| {
        let k = info
            .into_iter()
            .find(|k| k.name.ends_with(" scan_staged"))
            .expect("the staged kernel is loaded");
        let tile = policy::tile_shape(elem_size, &limits, probe.tuning(), Purpose::Staged)
            .unwrap()
            .tile();
        (u64::from(k.blocks_per_sm * probe.info().sm_count), tile)
    };
    let sum = Sum::<i32>::new();
    let scanner = probe.scanner(&sum).algorithm(Algorithm::SinglePass);
    scanner.prepare().unwrap();
    let (ints_resident, ints_tile) = wave(scanner.kernel_info().unwrap(), 4);
    let affine = Affine::<f64>::new();
    let scanner = probe.scanner(&affine).algorithm(Algorithm::SinglePass);
    scanner.prepare().unwrap();
    let (maps_resident, maps_tile) = wave(scanner.kernel_info().unwrap(), 16);
    let sizes = |resident: u64, tile: u64| {
        [1, resident - 1, resident, resident + 1]
            .map(|tiles| tiles * tile)
            .into_iter()
            .chain([2 * resident * tile + tile / 3 + 1])
    };
    for tile_order in ORDERS {
        let tuning = Tuning {
            tile_order,
            ..Tuning::default()
        };
        let gpu = gpu_with(tuning.clone()).unwrap();
        for (k, n) in sizes(ints_resident, ints_tile).enumerate() {
            let what = format!("{n} i32 ({ints_resident} resident tiles), {tuning}");
            sum_i32(&gpu, &ints(40 + k as u64, n as usize), &what);
        }
        for (k, n) in sizes(maps_resident, maps_tile).enumerate() {
            let what = format!("{n} affine maps ({maps_resident} resident tiles), {tuning}");
            affine_f64(&gpu, &maps(50 + k as u64, n as usize), &what);
        }
    }
    // One wave (its last tile partial), then two waves and a bit, on one Gpu, each in every
    // order in turn, twice over.
    let mut gpu = gpu_with(Tuning::default()).unwrap();
    for (k, tiles) in [ints_resident, 2 * ints_resident + 1]
        .into_iter()
        .enumerate()
    {
        let xs = ints(60 + k as u64, (tiles * ints_tile - 5) as usize);
        let want = reference(&sum, &xs, 0);
        for tile_order in ORDERS.into_iter().chain(ORDERS) {
            gpu = gpu
                .with_tuning(Tuning {
                    tile_order,
                    ..Tuning::default()
                })
                .unwrap();
            let got = gpu.inclusive_scan(&sum, &xs).unwrap();
            assert!(
                got == want.inclusive,
                "{} i32, tile order {tile_order}: the scan differs from the sequential one",
                xs.len()
            );
        }
    }
}

/// Every tile order, the default first.
const ORDERS: [TileOrder; 3] = [
    TileOrder::BlockIndex,
    TileOrder::OneWave,
    TileOrder::Claimed,
];

/// Two full waves of tiles, every one paced so that the last is due 150 us after the first,
/// and the same unpaced: the same scan either way. (How long each takes is the benchmark's
/// business.)
#[test]
fn two_waves_paced_over_150_us() {
    let Some(probe) = gpu_with(Tuning::default()) else {
        return;
    };
    let limits = probe.info().limits;
    let shape = policy::tile_shape(4, &limits, probe.tuning(), Purpose::Staged).unwrap();
    if !shape.tma {
        eprintln!("skipped: the staged scan of i32 has no TMA form here");
        return;
    }
    let sum = Sum::<i32>::new();
    let scanner = probe.scanner(&sum).algorithm(Algorithm::SinglePass);
    scanner.prepare().unwrap();
    let staged = scanner
        .kernel_info()
        .unwrap()
        .into_iter()
        .find(|k| k.name.ends_with(" scan_staged"))
        .expect("the staged kernel is loaded");
    // A launch of one wave is not paced: this one has two.
    let tiles = 2 * u64::from(staged.blocks_per_sm * probe.info().sm_count);
    let xs = ints(19, (tiles * shape.tile()) as usize);
    // Tile t is due t * (150 us / tiles) after tile 0: bytes * 1000 / ps = GB/s.
    let pace_ps = 150_000_000 / tiles;
    let gbps = (shape.tile_bytes(4) as u64 * 1000 / pace_ps) as u32;
    for pace in [Pace::Gbps(gbps), Pace::Off] {
        let tuning = Tuning {
            pace,
            pace_waves: 2,
            ..Tuning::default()
        };
        let gpu = gpu_with(tuning.clone()).unwrap();
        sum_i32(&gpu, &xs, &format!("{tiles} tiles, {tuning}"));
    }
}

// ---------------------------------------------------------------------------------------------
// The one-tile scan's shapes

/// Scans of one tile and around it (1, 2, tile - 1, tile, tile + 1, two tiles and a bit) by
/// `Auto` and `SinglePass`, both of which run the one-tile kernel on inputs that fit it.
fn one_tile<M: Monoid>(shape: Option<&str>, m: &M, xs: &[M::Elem], what: &str)
where
    M::Elem: ApproxEq,
{
    let choice = shape.map(|s| s.parse::<ShapeChoice>().unwrap());
    let tuning = Tuning {
        one_tile: choice,
        ..Tuning::default()
    };
    let size = std::mem::size_of::<M::Elem>();
    let policy_shape = |limits: &DeviceLimits| {
        let s = policy::tile_shape(size, limits, &tuning, Purpose::OneTile).unwrap();
        match choice {
            Some(c) => assert_eq!((s.block, s.items), (c.threads, c.items), "{what}"),
            // Up to 4 KiB.
            None => assert!(s.tile_bytes(size) <= 4096, "{what}: {s:?}"),
        }
        s
    };
    for cc in [75, 80, 90] {
        policy_shape(&DeviceLimits::for_arch(cc));
    }
    let Some(gpu) = gpu_with(tuning.clone()) else {
        return;
    };
    let one = policy_shape(&gpu.info().limits).tile() as usize;
    let label = shape.unwrap_or("default");
    for n in [1, 2, one - 1, one, one + 1, 2 * one + 3] {
        let n = n.min(xs.len());
        for algorithm in [Algorithm::Auto, Algorithm::SinglePass] {
            let what = format!("one-tile {label}: {what}");
            check(&gpu, algorithm, m, &xs[..n], Cmp::Exact, &what);
        }
    }
}

fn one_tile_ints(shape: Option<&str>) {
    one_tile(shape, &Sum::<i32>::new(), &ints(17, 9000), "sum i32");
}

/// 16-byte elements: 2x2 matrices modulo the default prime (exact, not commutative).
fn one_tile_mats(shape: Option<&str>) {
    let mut rng = Rng::new(18);
    let mats: Vec<Mat2> = (0..9000)
        .map(|_| Mat2::new([0; 4].map(|_: u32| rng.below(1_000_000_007) as u32)))
        .collect();
    one_tile(shape, &MatMulMod::default(), &mats, "matmod");
}

/// One test per one-tile shape and element size.
macro_rules! one_tile_shapes {
    ($($name:ident: $shape:expr, $run:ident;)*) => {
        mod one_tile_shape {
            use super::*;
            $(
                #[test]
                fn $name() {
                    $run($shape);
                }
            )*
        }
    };
}

// The default, the single-pass tiles, one warp, one item per thread and a full block, one
// item per thread (each within 48 KiB of shared memory).
one_tile_shapes! {
    ints_default: None, one_tile_ints;
    mats_default: None, one_tile_mats;
    ints_256x32: Some("256x32"), one_tile_ints;
    mats_128x16: Some("128x16"), one_tile_mats;
    ints_32x1: Some("32x1"), one_tile_ints;
    mats_32x1: Some("32x1"), one_tile_mats;
    ints_1024x1: Some("1024x1"), one_tile_ints;
    mats_1024x1: Some("1024x1"), one_tile_mats;
    ints_128x8: Some("128x8"), one_tile_ints;
    mats_128x8: Some("128x8"), one_tile_mats;
}

#[test]
fn one_tile_policy() {
    let h100 = DeviceLimits::for_arch(90);
    let shape = |t: &Tuning| policy::tile_shape(4, &h100, t, Purpose::OneTile).unwrap();
    let s = shape(&Tuning::default());
    assert_eq!((s.block, s.items, s.tile()), (256, 4, 1024));
    let s = shape(&Tuning {
        one_tile: Some("64x2".parse().unwrap()),
        ..Tuning::default()
    });
    assert_eq!((s.block, s.items), (64, 2));
}

// ---------------------------------------------------------------------------------------------
// Compaction's staged shapes

/// Compaction of i32 (odd ones kept) and f64 (positive ones kept) under a `select` shape,
/// against the host's filter; first the staged shape the policy derives for sm_80 and sm_90
/// (none before sm_80).
fn select<T: monoscan::Element>(shape: Option<&str>, xs: Vec<T>, keep: Map<T, u32>, what: &str) {
    let choice = shape.map(|s| s.parse::<ShapeChoice>().unwrap());
    let tuning = Tuning {
        select: choice,
        ..Tuning::default()
    };
    let size = std::mem::size_of::<T>();
    for cc in [75, 80, 90] {
        let limits = DeviceLimits::for_arch(cc);
        let s = policy::select_staged_shape(size, &limits, &tuning).unwrap();
        let Some(s) = s else {
            assert!(cc < 80, "{what} on sm_{cc}: no staged shape");
            continue;
        };
        assert!(cc >= 80 && s.staged, "{what} on sm_{cc}: {s:?}");
        assert_eq!(s.tma, cc >= 90, "{what} on sm_{cc}");
        if let Some(c) = choice {
            assert_eq!((s.block, s.items), (c.threads, c.items), "{what}");
        }
    }
    let Some(gpu) = gpu_with(tuning) else { return };
    let s = gpu.stream();
    let label = shape.unwrap_or("default");
    let want: Vec<T> = xs.iter().copied().filter(|x| keep.apply(x) != 0).collect();
    let input = s.clone_htod(&xs).unwrap();
    let mut out = s.clone_htod(&xs).unwrap();
    let count = gpu.compact_into(&input, &keep, &mut out).unwrap() as usize;
    assert_eq!(count, want.len(), "{label} {what}: count");
    let got = s.clone_dtoh(&out).unwrap();
    assert_eq!(got[..count], want[..], "{label} {what}: kept");
    assert_eq!(
        got[count..],
        xs[count..],
        "{label} {what}: the rest is left as it was"
    );
    let (kept, count) = gpu.compact(&input, &keep).unwrap();
    assert_eq!(
        count as usize,
        want.len(),
        "{label} {what}: compact's count"
    );
    assert_eq!(
        s.clone_dtoh(&kept).unwrap(),
        want,
        "{label} {what}: compact"
    );
}

fn select_ints(shape: Option<&str>) {
    let mut rng = Rng::new(29);
    let xs: Vec<i32> = (0..300_007).map(|_| rng.next_u64() as i32).collect();
    let odd = Map::new("odd", "(x & 1) ? 1u : 0u", |x: &i32| u32::from(x & 1 == 1));
    select(shape, xs, odd, "i32");
}

fn select_wide(shape: Option<&str>) {
    let mut rng = Rng::new(30);
    let xs: Vec<f64> = (0..100_003).map(|_| rng.unit() - 0.5).collect();
    let pos = Map::new("pos", "x > 0.0 ? 1u : 0u", |x: &f64| u32::from(*x > 0.0));
    select(shape, xs, pos, "f64");
}

/// One test per compaction shape and element size.
macro_rules! select_shapes {
    ($($name:ident: $shape:expr, $run:ident;)*) => {
        mod select_shape {
            use super::*;
            $(
                #[test]
                fn $name() {
                    $run($shape);
                }
            )*
        }
    };
}

// The default, then others a tuning sweep would try.
select_shapes! {
    ints_default: None, select_ints;
    wide_default: None, select_wide;
    ints_256x16: Some("256x16"), select_ints;
    wide_256x8: Some("256x8"), select_wide;
    ints_64x32: Some("64x32"), select_ints;
    wide_64x16: Some("64x16"), select_wide;
    ints_96x32: Some("96x32"), select_ints;
    wide_32x32: Some("32x32"), select_wide;
    ints_512x8: Some("512x8"), select_ints;
    wide_128x4: Some("128x4"), select_wide;
}

#[test]
fn select_policy() {
    let h100 = DeviceLimits::for_arch(90);
    let t = Tuning {
        select: Some("256x16".parse().unwrap()),
        ..Tuning::default()
    };
    let s = policy::select_staged_shape(4, &h100, &t).unwrap().unwrap();
    assert_eq!((s.block, s.items, s.tile()), (256, 16, 4096));
    // Sizes and architectures the staged kernel does not take stay with the register kernel.
    assert!(policy::select_staged_shape(12, &h100, &t)
        .unwrap()
        .is_none());
    let turing = DeviceLimits::for_arch(75);
    assert!(policy::select_staged_shape(4, &turing, &t)
        .unwrap()
        .is_none());
}

// ---------------------------------------------------------------------------------------------
// Invalid tunings

fn with(f: impl FnOnce(&mut Tuning)) -> Tuning {
    let mut t = Tuning::default();
    f(&mut t);
    t
}

/// Tunings outside their fields' domains.
fn invalid() -> Vec<(&'static str, Tuning)> {
    let shape = |s: &str| Some(s.parse::<ShapeChoice>().unwrap());
    vec![
        ("tile 33x8", with(|t| t.tile = shape("33x8"))),
        ("tile 2048x1", with(|t| t.tile = shape("2048x1"))),
        ("tile look-back 9", with(|t| t.tile = shape("256x8x9"))),
        ("staged 256x0", with(|t| t.staged = shape("256x0"))),
        ("staged look-back 0", with(|t| t.staged = shape("256x32x0"))),
        ("one-tile 33x4", with(|t| t.one_tile = shape("33x4"))),
        ("one-tile 2048x1", with(|t| t.one_tile = shape("2048x1"))),
        (
            "one-tile with a look-back",
            with(|t| t.one_tile = shape("256x4x1")),
        ),
        ("select 33x32", with(|t| t.select = shape("33x32"))),
        ("select 128x33", with(|t| t.select = shape("128x33"))),
        ("select 128x0", with(|t| t.select = shape("128x0"))),
        (
            "select with a look-back",
            with(|t| t.select = shape("128x32x1")),
        ),
        (
            "prefetch past 1 GiB",
            with(|t| t.prefetch_kib = (1 << 20) + 1),
        ),
        ("pace 0 GB/s", with(|t| t.pace = Pace::Gbps(0))),
        (
            "pace 2000000 GB/s",
            with(|t| t.pace = Pace::Gbps(2_000_000)),
        ),
        ("65 paced waves", with(|t| t.pace_waves = 65)),
    ]
}

#[test]
fn invalid_tunings_are_errors() {
    // Shapes that do not parse.
    for bad in [
        "", "256", "256x", "x4", "x32", "1x2x3x4", "-1x2", "256x4x", "axb",
    ] {
        let err = bad.parse::<ShapeChoice>().unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{bad:?}: {err}");
        assert!(err.to_string().contains("shape"), "{bad:?}: {err}");
    }
    for (what, t) in invalid() {
        let err = t.validate().unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{what}: {err}");
    }
    // Extremes within the domains.
    for ok in [
        with(|t| t.prefetch_kib = 1 << 20),
        with(|t| t.pace = Pace::Gbps(1)),
        with(|t| t.pace = Pace::Gbps(1_000_000)),
        with(|t| t.pace_waves = 0),
        with(|t| t.pace_waves = 64),
        with(|t| t.tile = Some(ShapeChoice::new(1024, 4096).with_lookback(8))),
    ] {
        ok.validate().unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

/// Shapes that validate but that a device cannot run are errors of the policy (so of the calls
/// that need them), not launch failures.
#[test]
fn shapes_beyond_the_device_are_errors() {
    let h100 = DeviceLimits::for_arch(90);
    let shape = |s: &str| Some(s.parse::<ShapeChoice>().unwrap());
    // More shared memory than a block may have.
    for (purpose, t) in [
        (Purpose::Staged, with(|t| t.staged = shape("1024x64"))),
        (Purpose::Tiles, with(|t| t.tile = shape("1024x64"))),
        (Purpose::SinglePass, with(|t| t.tile = shape("1024x64"))),
        (Purpose::OneTile, with(|t| t.one_tile = shape("1024x64"))),
    ] {
        t.validate().unwrap();
        let err = policy::tile_shape(4, &h100, &t, purpose).unwrap_err();
        assert!(
            err.to_string().contains("shared memory"),
            "{purpose:?}: {err}"
        );
    }
    // Compaction tiles of a partial 16-byte chunk per thread, or past 48 KiB.
    for bad in ["128x1", "1024x32"] {
        let t = with(|t| t.select = shape(bad));
        t.validate().unwrap();
        let err = policy::select_staged_shape(4, &h100, &t).unwrap_err();
        assert!(err.to_string().contains("select shape"), "{bad}: {err}");
    }
    // A pace that would space tiles more than 4 ms apart.
    let slow = with(|t| t.pace = Pace::Gbps(1));
    assert!(PrefetchPlan::new(&slow, 44 << 10, 5000, 1000, 0).is_ok());
    assert!(PrefetchPlan::new(&slow, 8 << 20, 5000, 1000, 0).is_err());
}

/// `Gpu::with_tuning` refuses every invalid tuning; a tuning whose shapes the device cannot
/// hold fails the calls that need them with an error.
#[test]
fn the_gpu_refuses_invalid_tunings() {
    let Some(shared) = gpu() else { return };
    for (what, t) in invalid() {
        let err = Gpu::new(0).unwrap().with_tuning(t).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{what}: {err}");
    }
    let xs = ints(31, 1 << 20);
    let sum = Sum::<i32>::new();
    let shape = |s: &str| Some(s.parse::<ShapeChoice>().unwrap());
    if shared.info().cc >= 80 {
        let gpu = gpu_with(with(|t| t.staged = shape("1024x64"))).unwrap();
        let err = gpu.inclusive_scan(&sum, &xs).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    }
    let gpu = gpu_with(with(|t| t.tile = shape("1024x64"))).unwrap();
    let err = gpu.reduce(&sum, &xs).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}
