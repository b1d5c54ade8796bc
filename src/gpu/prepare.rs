//! `Scanner::prepare` and `Scanner::prepare_reverse`: making a scanner's modules ready before
//! its first call, the missing ones compiled in parallel, and the report of what was done.

use super::kernels::OpKernels;
use crate::cache::{OpKey, Origin};
use crate::codegen::{KernelSet, KernelSpec};
use crate::error::Result;
use crate::monoid::Monoid;
use crate::ops::Reversed;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One module a [`super::Scanner::prepare`] made ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepared {
    /// The module.
    pub spec: KernelSpec,
    /// Where it came from: already loaded on this Gpu, the memory or the disk cache, or
    /// compiled.
    pub origin: Origin,
    /// Time in the cache: the lookup, the disk read, or the compile.
    pub fetch: Duration,
    /// Time loading the image on the device (zero for a module already loaded).
    pub load: Duration,
}

/// What [`super::Scanner::prepare`] did: every module the scanner may load, where each came
/// from and how long it took. Missing modules are compiled in parallel, so `wall` is less than
/// the sum of the compile times on a machine with several cores.
///
/// ```
/// use monoscan::{Gpu, cache::Origin, ops::Sum};
/// # fn main() -> monoscan::Result<()> {
/// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
/// let op = Sum::<i32>::new();
/// let report = gpu.scanner(&op).prepare()?;
/// println!("{report}");
/// // Prepared once, every module is then at hand: a second scanner loads nothing.
/// let again = gpu.scanner(&op).prepare()?;
/// assert_eq!(again.count(Origin::Loaded), again.modules.len());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PrepareReport {
    /// The operator.
    pub op: Arc<OpKey>,
    /// The modules, in the order the kernel plan lists them.
    pub modules: Vec<Prepared>,
    /// The wall-clock time of the whole call.
    pub wall: Duration,
}

impl PrepareReport {
    /// How many modules came from `origin`.
    pub fn count(&self, origin: Origin) -> usize {
        self.modules.iter().filter(|m| m.origin == origin).count()
    }
}

impl fmt::Display for PrepareReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.modules {
            writeln!(
                f,
                "{:>8}  {:>9.3} ms  (load {:.3} ms)  {} {}",
                m.origin.name(),
                m.fetch.as_secs_f64() * 1e3,
                m.load.as_secs_f64() * 1e3,
                self.op.op().name,
                m.spec.name()
            )?;
        }
        write!(
            f,
            "{} module(s): {} compiled, {} from disk, {} from memory, {} already loaded, in {:.3} ms",
            self.modules.len(),
            self.count(Origin::Compiled),
            self.count(Origin::Disk),
            self.count(Origin::Memory),
            self.count(Origin::Loaded),
            self.wall.as_secs_f64() * 1e3
        )
    }
}

/// Makes `sets` of `k` ready: loaded ones are reused, the rest fetched from the cache (missing
/// ones compiled in parallel) and loaded on the device.
pub(super) fn prepare<M: Monoid>(k: &OpKernels<M>, sets: &[KernelSet]) -> Result<PrepareReport> {
    let start = Instant::now();
    let mut modules = Vec::with_capacity(sets.len());
    let mut jobs = Vec::new();
    let mut pending = Vec::new();
    for &set in sets {
        let t = Instant::now();
        let spec = k.spec(set);
        let loaded = k.loaded(spec).or_else(|| k.gpu.loaded_module(&k.op, spec));
        if let Some(l) = loaded {
            k.keep(spec, l);
        } else {
            pending.push(modules.len());
            jobs.push((k.op.clone(), spec, k.gpu.target));
        }
        modules.push(Prepared {
            spec,
            origin: Origin::Loaded,
            fetch: t.elapsed(),
            load: Duration::ZERO,
        });
    }
    if !jobs.is_empty() {
        for (i, fetched) in pending.into_iter().zip(k.gpu.cache.fetch_all(&jobs)) {
            let fetched = fetched?;
            let t = Instant::now();
            let l = k.gpu.load(&fetched)?;
            k.keep(fetched.spec, l);
            modules[i] = Prepared {
                spec: fetched.spec,
                origin: fetched.origin,
                fetch: fetched.time,
                load: t.elapsed(),
            };
        }
    }
    Ok(PrepareReport {
        op: k.op.clone(),
        modules,
        wall: start.elapsed(),
    })
}

/// Makes ready the modules of `k`'s 1-D scans from the end ([`crate::tuning::plan::Plan::reverse_sets`]
/// in `k`'s plan), which are modules of the opposite monoid (with `k`'s input map, if any):
/// the report names that operator.
pub(super) fn prepare_reverse<M: Monoid>(k: &OpKernels<M>) -> Result<PrepareReport> {
    let sets = k.plan.reverse_sets()?;
    let opposite = Reversed::new(k.m);
    let rk = OpKernels::new(k.gpu, &opposite).with_input_of(k);
    prepare(&rk, &sets)
}
