//! Results never depend on the shape the autotuner picks: for every representative class and
//! every size class (all are autotuned: `monoscan::tuning::autotune::applies`), each candidate
//! shape it can choose is stored as the tuned record of a fresh cache, and a GPU on that cache
//! scans (inclusive, exclusive with its total) and reduces inputs of partial, whole and many
//! tiles exactly as the sequential CPU scan does (within the derived tolerance for the float
//! classes); so does the share scan, which the autotuner also times, and so does the staged
//! reduce in every tile its autotuner can choose. GPU tests skip without a GPU (fail instead under MONOSCAN_REQUIRE_GPU=1).

mod common;

use common::gpu::gpu;
use monoscan::bench::classes::{self, Class, Visit};
use monoscan::cache::{device_key, CacheConfig, KernelCache};
use monoscan::cpu::Sequential;
use monoscan::ops::{Mat2, MatMulMod, Sum};
use monoscan::tuning::autotune::{self, Record};
use monoscan::tuning::cost::CombineCost;
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{CombineForm, ShapeChoice, ShareScan, TileShape, Tuning};
use monoscan::{Backend, Gpu, Monoid};
use std::sync::Arc;

struct EveryCandidate<'a> {
    base: &'a Gpu,
    checked: usize,
}

impl Visit for EveryCandidate<'_> {
    type Error = std::convert::Infallible;
    fn visit<C: Class>(&mut self, class: &C) -> Result<(), Self::Error> {
        let op = class.cuda();
        let size = std::mem::size_of::<C::Elem>();
        let cost = CombineCost::of(&op);
        let tuning = Tuning::default();
        if !autotune::applies(&tuning) {
            return Ok(());
        }
        let info = self.base.info();
        let device = device_key(&info.name, info.cc, info.sm_count);
        let shapes = autotune::candidates(size, &cost, &info.limits, &tuning);
        assert!(!shapes.is_empty(), "{}: no candidate", C::NAME);
        // Every shape in the plan's combine form; where the plan outlines the combine, the
        // first shape inlined too (the autotuner times its winner that way).
        let mut records: Vec<(TileShape, Option<CombineForm>)> =
            shapes.iter().map(|&s| (s, None)).collect();
        if Plan::new(&op, info.limits, &tuning).combine() == CombineForm::Outlined {
            records.push((shapes[0], Some(CombineForm::Inline)));
        }
        for (shape, combine) in records {
            let dir = tempfile::tempdir().unwrap();
            let cache = Arc::new(KernelCache::new(CacheConfig::dir(dir.path())));
            let record = Record {
                shape,
                timings: Vec::new(),
                n: 0,
                shares: false,
                combine,
            };
            cache.tuned().put(&device, &op, &record).unwrap();
            let gpu = Gpu::with_cache(info.ordinal, cache).unwrap();
            let tile = shape.tile() as usize;
            let name = match combine {
                Some(form) => format!("{} {form}", shape.name()),
                None => shape.name(),
            };
            for n in [tile - 1, tile + 1, 7 * tile + 5, 150 * tile + 3] {
                let xs = class.generate(n, n as u64);
                let m = classes::check(&gpu, class, &xs)
                    .unwrap_or_else(|e| panic!("{} under {name}: {e}", C::NAME));
                assert!(m.is_none(), "under {name}: {}", m.unwrap());
            }
            self.checked += 1;
        }
        eprintln!("{}: every candidate shape agrees", C::NAME);
        Ok(())
    }
}

#[test]
fn every_autotuned_class_agrees_under_every_candidate_shape() {
    let Some(base) = gpu() else { return };
    let mut v = EveryCandidate { base, checked: 0 };
    let Ok(()) = classes::visit_all(&mut v);
    let Ok(()) = classes::visit_sizes(&mut v);
    // Every size from 1 to 64 bytes and every class, each in two candidates or more.
    assert!(v.checked >= 40, "only {} shapes checked", v.checked);
}

/// The share scan (`ShareScan::Always`) computes what the sequential scan does for every
/// class whose share steps fit: inputs of whole shares only, of a tail of one element less
/// than a share, and of a short tail, each of two or three steps per share (the sizes follow
/// from the resident threads of the module the scanner loads), in one and in two stage
/// buffers.
struct EveryShareScan {
    stages: u32,
    checked: usize,
}

impl Visit for EveryShareScan {
    type Error = std::convert::Infallible;
    fn visit<C: Class>(&mut self, class: &C) -> Result<(), Self::Error> {
        let tuning = Tuning {
            share_scan: ShareScan::Always,
            share_stages: Some(self.stages),
            autotune: false,
            ..Tuning::default()
        };
        let Some(gpu) = common::gpu::gpu_with(tuning) else {
            return Ok(());
        };
        let size = std::mem::size_of::<C::Elem>();
        let info = gpu.info();
        let scanner = gpu.scanner(class);
        scanner.prepare().unwrap();
        let kernels = scanner.kernel_info().unwrap();
        let Some(whole) = common::gpu::share_step_bytes(&gpu, &kernels, size) else {
            // No TMA (before sm_90), or steps too wide for shared memory: the plan has no share
            // scan, and prepare loaded none.
            let plan = Plan::new(&class.cuda(), info.limits, gpu.tuning());
            assert!(
                plan.share_scan_set().unwrap().is_none(),
                "{}: the plan has a share scan that prepare did not load",
                C::NAME
            );
            return Ok(());
        };
        for bytes in [
            2 * whole,
            3 * whole - size as u64,
            2 * whole + 5 * size as u64,
        ] {
            let n = (bytes / size as u64) as usize;
            let xs = class.generate(n, n as u64);
            let m = classes::check(&gpu, class, &xs).unwrap_or_else(|e| {
                panic!(
                    "{} in the share scan ({} stages), n {n}: {e}",
                    C::NAME,
                    self.stages
                )
            });
            assert!(
                m.is_none(),
                "in the share scan ({} stages): {}",
                self.stages,
                m.unwrap()
            );
            self.checked += 1;
        }
        eprintln!(
            "{}: the share scan agrees in {} stages",
            C::NAME,
            self.stages
        );
        Ok(())
    }
}

#[test]
fn every_class_agrees_in_the_share_scan() {
    if common::gpu::gpu().is_none() {
        return;
    }
    for stages in [1, 2] {
        let mut v = EveryShareScan { stages, checked: 0 };
        let Ok(()) = classes::visit_all(&mut v);
        let Ok(()) = classes::visit_sizes(&mut v);
        if common::gpu::gpu().is_some_and(|g| g.info().cc >= 90) {
            assert!(v.checked >= 30, "only {} inputs checked", v.checked);
        }
    }
}

/// A first scan of 64 MiB of `Sum<i32>` on a fresh cache tunes it: the scan is exact, and the
/// cache keeps one record under the device's key naming one of the candidates. A Gpu with
/// tensor copies turned off (sm_90 and newer) does not take that shape: it tunes apart, under
/// the key followed by `-cp-async`, among shapes without tensor copies.
#[test]
fn a_first_large_scan_records_its_winner_per_copy_mode() {
    let Some(base) = gpu() else { return };
    let info = base.info();
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(KernelCache::new(CacheConfig::dir(dir.path())));
    let n = (autotune::MIN_TUNING_BYTES / 4) as usize + 3;
    let xs: Vec<i32> = (0..n).map(|i| (i % 1013) as i32 - 506).collect();
    let expect: Vec<i32> = xs
        .iter()
        .scan(0i32, |acc, &x| {
            *acc = acc.wrapping_add(x);
            Some(*acc)
        })
        .collect();
    let op = Sum::<i32>::new();
    let key = device_key(&info.name, info.cc, info.sm_count);
    let modes: &[bool] = if info.cc >= 90 {
        &[true, false]
    } else {
        &[true]
    };
    for &tma in modes {
        let tuning = Tuning {
            tma,
            ..Tuning::default()
        };
        let gpu = Gpu::with_cache(info.ordinal, cache.clone())
            .unwrap()
            .with_tuning(tuning.clone())
            .unwrap();
        let input = gpu.stream().clone_htod(&xs).unwrap();
        let mut out = gpu.stream().alloc_zeros::<i32>(n).unwrap();
        gpu.scanner(&op).inclusive(&input, &mut out).unwrap();
        assert!(
            gpu.stream().clone_dtoh(&out).unwrap() == expect,
            "tma {tma}"
        );
        let device = if tma {
            key.clone()
        } else {
            format!("{key}-cp-async")
        };
        let record = cache
            .tuned()
            .get(&device, &op.cuda(), &info.limits)
            .unwrap_or_else(|| panic!("no record under {device}"));
        let cost = CombineCost::of(&op.cuda());
        let shapes = autotune::candidates(4, &cost, &info.limits, &tuning);
        assert!(shapes.contains(&record.shape), "{record:?} of {shapes:?}");
        assert_eq!(record.timings.len(), shapes.len(), "{record:?}");
        assert_eq!(record.shape.tma, tma && info.cc >= 90, "{record:?}");
    }
    assert_eq!(cache.tuned().list().unwrap().len(), modes.len());
}

/// An operator whose plan outlines its combine (the 2x2 matrix product mod p, not
/// commutative) has its fastest shape timed again with the combine inlined on its first scan
/// of 64 MiB: the scan and a reduction after it are exact, and the record names the form that
/// won, which a Gpu on the same cache then builds its modules in.
#[test]
fn an_outlined_combine_is_timed_inlined_too() {
    let Some(base) = gpu() else { return };
    let info = base.info();
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(KernelCache::new(CacheConfig::dir(dir.path())));
    let op = MatMulMod::default();
    let tuning = Tuning::default();
    assert_eq!(
        Plan::new(&op.cuda(), info.limits, &tuning).combine(),
        CombineForm::Outlined
    );
    let n = (autotune::MIN_TUNING_BYTES / 16) as usize + 5;
    let p = 1_000_000_007u64;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % p) as u32
    };
    let xs: Vec<Mat2> = (0..n)
        .map(|_| Mat2::new([next(), next(), next(), next()]))
        .collect();
    let want = Sequential.inclusive_scan(&op, &xs).unwrap();
    let gpu = Gpu::with_cache(info.ordinal, cache.clone()).unwrap();
    let input = gpu.stream().clone_htod(&xs).unwrap();
    let mut out = gpu.stream().alloc_zeros::<Mat2>(n).unwrap();
    let scanner = gpu.scanner(&op);
    scanner.inclusive(&input, &mut out).unwrap();
    assert!(gpu.stream().clone_dtoh(&out).unwrap() == want);
    let mut total = gpu.stream().alloc_zeros::<Mat2>(1).unwrap();
    scanner.reduce(&input, &mut total).unwrap();
    assert!(gpu.stream().clone_dtoh(&total).unwrap() == [want[n - 1]]);
    let key = device_key(&info.name, info.cc, info.sm_count);
    let record = cache
        .tuned()
        .get(&key, &op.cuda(), &info.limits)
        .expect("a record");
    let form = record.combine.expect("the record names the combine form");
    let inlined = format!("{} inline", record.shape.name());
    assert!(
        record.timings.iter().any(|(name, _)| *name == inlined),
        "{record:?}"
    );
    let later = Gpu::with_cache(info.ordinal, cache).unwrap();
    let report = later.scanner(&op).prepare().unwrap();
    assert!(
        report.modules.iter().all(|m| m.spec.combine == form),
        "{form}: {report}"
    );
}

/// Every tile the reduce autotuner times (`Plan::reduce_candidates`) for every class and size
/// class that large reductions fold tile by tile, set as the tuning's tile, reduces inputs of
/// a partial tile, of a few tiles and of several tiles per resident block exactly as the
/// sequential fold does (within the derived tolerance for the float classes).
struct EveryReduceCandidate<'a> {
    base: &'a Gpu,
    checked: usize,
}

impl Visit for EveryReduceCandidate<'_> {
    type Error = std::convert::Infallible;
    fn visit<C: Class>(&mut self, class: &C) -> Result<(), Self::Error> {
        let info = self.base.info();
        let plan = Plan::new(&class.cuda(), info.limits, &Tuning::default());
        let shapes = plan.reduce_candidates();
        for s in &shapes {
            let tuning = Tuning {
                reduce: Some(ShapeChoice::new(s.block, s.items)),
                ..Tuning::default()
            };
            let Some(gpu) = common::gpu::gpu_with(tuning) else {
                return Ok(());
            };
            let tile = s.tile() as usize;
            let many = (8 * info.sm_count as usize + 3) * tile + 7;
            for n in [tile - 1, 3 * tile + 5, many] {
                let xs = class.generate(n, n as u64 + 11);
                let got = gpu
                    .reduce(class, &xs)
                    .unwrap_or_else(|e| panic!("{} under {}: {e}", C::NAME, s.name()));
                let want = Sequential.reduce(class, &xs).unwrap();
                let tol = class.tolerance(&xs);
                assert!(
                    class.agrees(&tol, &got, &want),
                    "{} reduced in {}, n {n}: {got:?} instead of {want:?}",
                    C::NAME,
                    s.name()
                );
            }
            self.checked += 1;
        }
        if !shapes.is_empty() {
            eprintln!("{}: every reduce candidate agrees", C::NAME);
        }
        Ok(())
    }
}

#[test]
fn every_class_agrees_under_every_reduce_candidate() {
    let Some(base) = gpu() else { return };
    let mut v = EveryReduceCandidate { base, checked: 0 };
    let Ok(()) = classes::visit_all(&mut v);
    let Ok(()) = classes::visit_sizes(&mut v);
    // From sm_80 on: every size class but 4 bytes, and the cheap classes, in three tiles or
    // more each.
    if base.info().cc >= 80 {
        assert!(v.checked >= 50, "only {} tiles checked", v.checked);
    }
}

/// A first reduction of 64 MiB of `Sum<u64>` on a fresh cache times the staged reduce's
/// candidate tiles: the total is exact, the cache keeps a reduce record naming one of them
/// with a time for each, and a second Gpu on the same cache, which reads that record, reduces
/// exactly too and leaves the one record.
#[test]
fn a_first_large_reduction_records_its_tile() {
    let Some(base) = gpu() else { return };
    let info = base.info();
    let op = Sum::<u64>::new();
    let plan = Plan::new(&op.cuda(), info.limits, &Tuning::default());
    let shapes = plan.reduce_candidates();
    if shapes.len() < 2 {
        // Before sm_80: no staged reduce to tune.
        assert!(info.cc < 80, "{shapes:?}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(KernelCache::new(CacheConfig::dir(dir.path())));
    let n = (autotune::MIN_TUNING_BYTES / 8) as usize + 5;
    let xs: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let want = xs.iter().fold(0u64, |a, &x| a.wrapping_add(x));
    let key = device_key(&info.name, info.cc, info.sm_count);
    for round in 0..2 {
        let gpu = Gpu::with_cache(info.ordinal, cache.clone()).unwrap();
        assert_eq!(gpu.reduce(&op, &xs).unwrap(), want, "round {round}");
        let record = cache
            .tuned()
            .get_reduce(&key, &op.cuda(), &plan.cost(), &info.limits)
            .expect("a reduce record");
        assert!(
            shapes
                .iter()
                .any(|s| ShapeChoice::new(s.block, s.items) == record.choice),
            "{record:?} of {shapes:?}"
        );
        assert_eq!(record.timings.len(), shapes.len(), "{record:?}");
        let listed = cache.tuned().list().unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert!(listed[0].1.starts_with("reduce; shape "), "{listed:?}");
    }
}
