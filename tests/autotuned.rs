//! Results never depend on the shape the autotuner picks: for every representative class and
//! every size class that is autotuned (`monoscan::tuning::autotune::applies`), each candidate
//! shape it can choose is stored as the tuned record of a fresh cache, and a GPU on that cache
//! scans (inclusive, exclusive with its total) and reduces inputs of partial, whole and many
//! tiles exactly as the sequential CPU scan does (within the derived tolerance for the float
//! classes). GPU tests skip without a GPU (fail instead under MONOSCAN_REQUIRE_GPU=1).

mod common;

use common::gpu::gpu;
use monoscan::bench::classes::{self, Class, Visit};
use monoscan::cache::{device_key, CacheConfig, KernelCache};
use monoscan::tuning::autotune::{self, Record};
use monoscan::tuning::cost::CombineCost;
use monoscan::tuning::Tuning;
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
