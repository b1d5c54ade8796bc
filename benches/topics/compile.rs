//! JIT latency per operator class (`tests/common/classes.rs`): what a first call waits for.
//!
//! Without a GPU (NVRTC only), for the modules of the default path on sm_90
//! (`Plan::sets(Algorithm::Auto)`):
//! - `jit/cold/<class>`: all of them compiled, in parallel (a fresh cache each time);
//! - `jit/cold-serial-inline/<class>`: the same modules compiled one after another with the
//!   combine inlined whatever its cost (the configuration without the cost policy and the
//!   parallel fetch), for comparison;
//! - `jit/disk/<class>`: a new cache (a later process) reading them all from disk;
//! - `jit/memory/<class>`: a scanner's setup on a warm cache: the operator's `cuda()`, its
//!   interning, its plan, and a memory hit for each module;
//! - `jit/memory-hit/<class>`: one memory hit of one module.
//!
//! With a GPU: `jit/prepare-cold`, `jit/prepare-disk` (a new `Gpu` over a warm folder) and
//! `jit/prepare-memory` (a new scanner on the same `Gpu`) time `Scanner::prepare()`;
//! `jit/first-scan-2^10` a first inclusive scan of 2^10 elements on a new `Gpu` with an empty
//! cache.

use crate::classes::{AffineModP, LinearU32, LogSumExp, Welford};
use criterion::{BenchmarkGroup, Criterion, SamplingMode};
use monoscan::cache::{CacheConfig, KernelCache, OpKey, Warm};
use monoscan::codegen::{CombineForm, KernelSpec};
use monoscan::jit::Target;
use monoscan::ops::{Affine, Sum};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{DeviceLimits, Tuning};
use monoscan::{Algorithm, Gpu, Monoid};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

const ARCH: u32 = 90;

/// The modules of the default path of `op` on sm_90, in the policy's combine form.
fn jobs(op: &Arc<OpKey>, tuning: &Tuning) -> Vec<(Arc<OpKey>, KernelSpec, Target)> {
    let plan = Plan::for_key(op, DeviceLimits::for_arch(ARCH), tuning);
    plan.sets(Algorithm::Auto)
        .unwrap()
        .into_iter()
        .map(|s| (op.clone(), plan.spec(s), Target::Cubin(ARCH)))
        .collect()
}

/// Times `f` once per iteration, each on a fresh state from `setup` (not timed).
fn each<S>(
    iters: u64,
    mut setup: impl FnMut() -> S,
    mut f: impl FnMut(&S) -> Duration,
) -> Duration {
    (0..iters).map(|_| f(&setup())).sum()
}

/// The cold figures of `m`: everything compiled.
fn cold<M: Monoid>(g: &mut Group, gpu: bool, name: &str, m: &M) {
    let op = m.cuda();
    let tuning = Tuning::default();
    g.bench_function(format!("cold/{name}"), |b| {
        b.iter_custom(|iters| {
            each(
                iters,
                || KernelCache::new(CacheConfig::memory_only()),
                |cache| {
                    let key = cache.intern(op.clone());
                    let jobs = jobs(&key, &tuning);
                    let start = Instant::now();
                    for r in cache.fetch_all(&jobs) {
                        r.unwrap();
                    }
                    start.elapsed()
                },
            )
        })
    });
    let inline = Tuning {
        combine: Some(CombineForm::Inline),
        ..Tuning::default()
    };
    g.bench_function(format!("cold-serial-inline/{name}"), |b| {
        b.iter_custom(|iters| {
            each(
                iters,
                || KernelCache::new(CacheConfig::memory_only()),
                |cache| {
                    let key = cache.intern(op.clone());
                    let jobs = jobs(&key, &inline);
                    let start = Instant::now();
                    for (op, spec, target) in &jobs {
                        cache.fetch(op, *spec, *target).unwrap();
                    }
                    start.elapsed()
                },
            )
        })
    });
    if !gpu {
        return;
    }
    g.bench_function(format!("prepare-cold/{name}"), |b| {
        b.iter_custom(|iters| {
            each(
                iters,
                || {
                    let dir = tempfile::tempdir().unwrap();
                    (open(CacheConfig::dir(dir.path())), dir)
                },
                |(gpu, _dir)| {
                    let start = Instant::now();
                    gpu.scanner(m).prepare().unwrap();
                    start.elapsed()
                },
            )
        })
    });
    g.bench_function(format!("first-scan-2^10/{name}"), |b| {
        let xs = vec![m.identity(); 1 << 10];
        b.iter_custom(|iters| {
            each(
                iters,
                || open(CacheConfig::memory_only()),
                |gpu| {
                    let s = gpu.stream();
                    let input = s.clone_htod(&xs).unwrap();
                    let mut out = s.clone_htod(&xs).unwrap();
                    gpu.synchronize().unwrap();
                    let start = Instant::now();
                    gpu.scanner(m).inclusive(&input, &mut out).unwrap();
                    gpu.synchronize().unwrap();
                    start.elapsed()
                },
            )
        })
    });
}

/// The warm figures of `m`: disk and memory hits.
fn warm<M: Monoid>(g: &mut Group, gpu: bool, name: &str, m: &M) {
    let op = m.cuda();
    let tuning = Tuning::default();
    let dir = tempfile::tempdir().unwrap();
    KernelCache::new(CacheConfig::dir(dir.path()))
        .warm(std::slice::from_ref(&op), &Warm::new([ARCH]))
        .unwrap();
    g.bench_function(format!("disk/{name}"), |b| {
        b.iter_custom(|iters| {
            each(
                iters,
                || KernelCache::new(CacheConfig::dir(dir.path())),
                |cache| {
                    let start = Instant::now();
                    let key = cache.intern(m.cuda());
                    for r in cache.fetch_all(&jobs(&key, &tuning)) {
                        r.unwrap();
                    }
                    start.elapsed()
                },
            )
        })
    });
    let cache = KernelCache::new(CacheConfig::memory_only());
    let key = cache.intern(op.clone());
    let all = jobs(&key, &tuning);
    for r in cache.fetch_all(&all) {
        r.unwrap();
    }
    let limits = DeviceLimits::for_arch(ARCH);
    g.bench_function(format!("memory/{name}"), |b| {
        b.iter(|| {
            let key = cache.intern(m.cuda());
            let plan = Plan::for_key(&key, limits, &tuning);
            for set in plan.sets(Algorithm::Auto).unwrap() {
                cache
                    .fetch(&key, plan.spec(set), Target::Cubin(ARCH))
                    .unwrap();
            }
        })
    });
    let (_, spec, target) = all[0];
    g.bench_function(format!("memory-hit/{name}"), |b| {
        b.iter(|| cache.fetch(&key, spec, target).unwrap())
    });
    if !gpu {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    open(CacheConfig::dir(dir.path()))
        .scanner(m)
        .prepare()
        .unwrap();
    g.bench_function(format!("prepare-disk/{name}"), |b| {
        b.iter_custom(|iters| {
            each(
                iters,
                || open(CacheConfig::dir(dir.path())),
                |gpu| {
                    let start = Instant::now();
                    gpu.scanner(m).prepare().unwrap();
                    start.elapsed()
                },
            )
        })
    });
    let gpu = open(CacheConfig::memory_only());
    gpu.scanner(m).prepare().unwrap();
    g.bench_function(format!("prepare-memory/{name}"), |b| {
        b.iter(|| gpu.scanner(m).prepare().unwrap())
    });
}

/// A new `Gpu` on device 0 over its own cache.
fn open(config: CacheConfig) -> Gpu {
    Gpu::with_cache(0, Arc::new(KernelCache::new(config))).unwrap()
}

/// Runs `$f(group, gpu, name, op)` for every class, cheapest first.
macro_rules! classes {
    ($f:ident, $g:expr, $gpu:expr) => {
        $f($g, $gpu, "sum-i32", &Sum::<i32>::new());
        $f($g, $gpu, "linear-u32", &LinearU32);
        $f($g, $gpu, "affine-f64", &Affine::<f64>::new());
        $f($g, $gpu, "logsumexp-f64", &LogSumExp);
        $f($g, $gpu, "affine-mod-u64", &AffineModP::default());
        $f($g, $gpu, "welford-f64", &Welford);
    };
}

pub fn bench(c: &mut Criterion) {
    if let Err(e) = monoscan::jit::nvrtc() {
        eprintln!("jit benches skipped: {e}");
        return;
    }
    let gpu = match Gpu::new(0) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("jit benches on the GPU skipped: {e}");
            false
        }
    };
    // Compiles take up to seconds: ten samples of one iteration each.
    let mut g = c.benchmark_group("jit");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1));
    classes!(cold, &mut g, gpu);
    g.finish();
    let mut g = c.benchmark_group("jit");
    classes!(warm, &mut g, gpu);
    g.finish();
}
