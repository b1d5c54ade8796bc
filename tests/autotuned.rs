//! Results never depend on the shape the autotuner picks: for every representative class and
//! every size class that is autotuned (`monoscan::tuning::autotune::applies`), each candidate
//! shape it can choose is stored as the tuned record of a fresh cache, and a GPU on that cache
//! scans (inclusive, exclusive with its total) and reduces inputs of partial, whole and many
//! tiles exactly as the sequential CPU scan does (within the derived tolerance for the float
//! classes); so does the share scan, which the autotuner also times. GPU tests skip without a GPU (fail instead under MONOSCAN_REQUIRE_GPU=1).

mod common;

use common::gpu::gpu;
use monoscan::bench::classes::{self, Class, Visit};
use monoscan::cache::{device_key, CacheConfig, KernelCache};
use monoscan::tuning::autotune::{self, Record};
use monoscan::tuning::cost::CombineCost;
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{ShareScan, TileShape, Tuning};
use monoscan::Gpu;
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
        if !autotune::applies(size, &cost, &tuning) {
            return Ok(());
        }
        let info = self.base.info();
        let device = device_key(&info.name, info.cc, info.sm_count);
        let shapes = autotune::candidates(size, &cost, &info.limits, &tuning);
        assert!(!shapes.is_empty(), "{}: no candidate", C::NAME);
        for shape in shapes {
            let dir = tempfile::tempdir().unwrap();
            let cache = Arc::new(KernelCache::new(CacheConfig::dir(dir.path())));
            let record = Record {
                shape,
                timings: Vec::new(),
                n: 0,
                shares: false,
            };
            cache.tuned().put(&device, &op, &record).unwrap();
            let gpu = Gpu::with_cache(info.ordinal, cache).unwrap();
            let tile = shape.tile() as usize;
            for n in [tile - 1, tile + 1, 7 * tile + 5, 150 * tile + 3] {
                let xs = class.generate(n, n as u64);
                let m = classes::check(&gpu, class, &xs)
                    .unwrap_or_else(|e| panic!("{} under {}: {e}", C::NAME, shape.name()));
                assert!(m.is_none(), "under {}: {}", shape.name(), m.unwrap());
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
    // The odd sizes (3, 5, 6, 7, 12, 20, 24, 40, 48 bytes) and the expensive combines are tuned.
    assert!(v.checked >= 20, "only {} shapes checked", v.checked);
}

/// The share scan (`ShareScan::Always`) computes what the sequential scan does for every
/// class whose share steps fit: inputs of whole shares only, of a tail of one element less
/// than a share, and of a short tail, each of two or three steps per share (the sizes follow
/// from the resident threads of the module the scanner loads).
struct EveryShareScan {
    checked: usize,
}

impl Visit for EveryShareScan {
    type Error = std::convert::Infallible;
    fn visit<C: Class>(&mut self, class: &C) -> Result<(), Self::Error> {
        let tuning = Tuning {
            share_scan: ShareScan::Always,
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
        let entry = |name: &str| kernels.iter().find(|k| k.name.ends_with(name)).cloned();
        let (Some(totals), Some(scan)) = (entry(" share_totals"), entry(" share_scan")) else {
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
        let threads = u64::from(totals.blocks_per_sm.min(scan.blocks_per_sm))
            * u64::from(info.sm_count)
            * u64::from(scan.threads);
        let step = u64::from(TileShape::share_columns(size)) * 128;
        let whole = threads * step;
        for bytes in [
            2 * whole,
            3 * whole - size as u64,
            2 * whole + 5 * size as u64,
        ] {
            let n = (bytes / size as u64) as usize;
            let xs = class.generate(n, n as u64);
            let m = classes::check(&gpu, class, &xs)
                .unwrap_or_else(|e| panic!("{} in the share scan, n {n}: {e}", C::NAME));
            assert!(m.is_none(), "in the share scan: {}", m.unwrap());
            self.checked += 1;
        }
        eprintln!("{}: the share scan agrees", C::NAME);
        Ok(())
    }
}

#[test]
fn every_class_agrees_in_the_share_scan() {
    if common::gpu::gpu().is_none() {
        return;
    }
    let mut v = EveryShareScan { checked: 0 };
    let Ok(()) = classes::visit_all(&mut v);
    let Ok(()) = classes::visit_sizes(&mut v);
    if common::gpu::gpu().is_some_and(|g| g.info().cc >= 90) {
        assert!(v.checked >= 30, "only {} inputs checked", v.checked);
    }
}
