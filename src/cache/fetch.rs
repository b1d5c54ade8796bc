//! What a fetch from the cache reports, and fetching many modules at once: memory hits on the
//! calling thread, everything else in parallel on the host's cores.

use super::{KernelCache, Module, OpKey};
use crate::codegen::KernelSpec;
use crate::error::{Error, Result};
use crate::jit::Target;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where a module came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Already loaded on the device by this [`crate::Gpu`]: no cache lookup at all.
    Loaded,
    /// The memory layer.
    Memory,
    /// The disk layer (rendered, keyed, read and verified).
    Disk,
    /// Compiled by NVRTC (and written to the disk layer).
    Compiled,
}

impl Origin {
    /// `loaded`, `memory`, `disk` or `compiled`.
    pub fn name(self) -> &'static str {
        match self {
            Origin::Loaded => "loaded",
            Origin::Memory => "memory",
            Origin::Disk => "disk",
            Origin::Compiled => "compiled",
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A module fetched from a [`KernelCache`], where it came from and how long that took.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The operator.
    pub op: Arc<OpKey>,
    /// The module asked for.
    pub spec: KernelSpec,
    /// What it was compiled for.
    pub target: Target,
    /// The module.
    pub module: Arc<Module>,
    /// Where it came from.
    pub origin: Origin,
    /// How long the fetch took (for a module another thread was compiling, the wait).
    pub time: Duration,
}

impl Fetched {
    pub(super) fn new(
        op: &Arc<OpKey>,
        spec: KernelSpec,
        target: Target,
        module: Arc<Module>,
        origin: Origin,
        start: Instant,
    ) -> Fetched {
        Fetched {
            op: op.clone(),
            spec,
            target,
            module,
            origin,
            time: start.elapsed(),
        }
    }

    /// `sum_i32 single-pass-b256x32x1-packed64 (sm_90)`.
    pub fn label(&self) -> String {
        format!("{} ({})", self.module.label, self.target.arch())
    }
}

/// Threads that compile at once: one per core the process may use.
fn workers() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// [`KernelCache::fetch_all`].
pub(super) fn all(
    cache: &KernelCache,
    jobs: &[(Arc<OpKey>, KernelSpec, Target)],
) -> Vec<Result<Fetched>> {
    let mut results: Vec<Option<Result<Fetched>>> = Vec::with_capacity(jobs.len());
    let mut misses = Vec::new();
    for (i, (op, spec, target)) in jobs.iter().enumerate() {
        let hit = cache.memory_hit(op, *spec, *target);
        if hit.is_none() {
            misses.push(i);
        }
        results.push(hit.map(Ok));
    }
    let threads = workers().min(misses.len());
    if threads <= 1 {
        for &i in &misses {
            let (op, spec, target) = &jobs[i];
            results[i] = Some(cache.fetch(op, *spec, *target));
        }
    } else {
        let next = AtomicUsize::new(0);
        let done = Mutex::new(Vec::with_capacity(misses.len()));
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = misses.get(k) else { break };
                    let (op, spec, target) = &jobs[i];
                    let r = cache.fetch(op, *spec, *target);
                    done.lock().unwrap_or_else(|p| p.into_inner()).push((i, r));
                });
            }
        });
        for (i, r) in done.into_inner().unwrap_or_else(|p| p.into_inner()) {
            results[i] = Some(r);
        }
    }
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(Error::invalid(
                    "internal: a module of a batch was not fetched",
                ))
            })
        })
        .collect()
}
