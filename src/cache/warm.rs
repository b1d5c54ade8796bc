//! Ahead-of-time warming: compiling operators for architectures into the cache without a GPU
//! (for deployment images and CI), so that a later process finds every module it loads on
//! disk.

use super::{Fetched, KernelCache, Origin};
use crate::algorithm::Algorithm;
use crate::error::Result;
use crate::jit;
use crate::monoid::CudaOp;
use crate::tuning::plan::Plan;
use crate::tuning::{DeviceLimits, Tuning};
use std::collections::HashSet;
use std::fmt;
use std::time::{Duration, Instant};

/// What [`KernelCache::warm`] compiles for each operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warm {
    /// Compute capabilities (`90` for sm_90). Each gets what a device of that architecture
    /// loads: its own CUBIN where the NVRTC knows it, else PTX for the newest architecture
    /// below it ([`jit::target_for`]), with the tile shapes of its published limits
    /// ([`DeviceLimits::for_arch`]).
    pub archs: Vec<u32>,
    /// The algorithms whose modules are compiled ([`Plan::sets`]); `Auto` is the default
    /// path of every scan and reduction.
    pub algorithms: Vec<Algorithm>,
    /// The tuning the shapes and the combine form come from (the tuning of the `Gpu` that
    /// will load the modules).
    pub tuning: Tuning,
}

impl Warm {
    /// The default path (`Algorithm::Auto`) under the default tuning, for `archs`.
    pub fn new(archs: impl Into<Vec<u32>>) -> Warm {
        Warm {
            archs: archs.into(),
            algorithms: vec![Algorithm::Auto],
            tuning: Tuning::default(),
        }
    }

    /// The same, for `algorithms`.
    pub fn algorithms(mut self, algorithms: impl Into<Vec<Algorithm>>) -> Warm {
        self.algorithms = algorithms.into();
        self
    }
}

/// What [`KernelCache::warm`] did: every module, where it came from and how long it took.
#[derive(Debug, Clone)]
pub struct WarmReport {
    /// One entry per module, in the order operators, architectures and sets were given.
    pub modules: Vec<Fetched>,
    /// The wall-clock time of the whole warm-up.
    pub wall: Duration,
}

impl WarmReport {
    /// How many modules came from `origin`.
    pub fn count(&self, origin: Origin) -> usize {
        self.modules.iter().filter(|m| m.origin == origin).count()
    }
}

impl fmt::Display for WarmReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.modules {
            writeln!(
                f,
                "{:>8}  {:>9.1} ms  {}",
                m.origin.name(),
                m.time.as_secs_f64() * 1e3,
                m.label()
            )?;
        }
        write!(
            f,
            "{} module(s): {} compiled, {} from disk, {} in memory, in {:.2} s",
            self.modules.len(),
            self.count(Origin::Compiled),
            self.count(Origin::Disk),
            self.count(Origin::Memory),
            self.wall.as_secs_f64()
        )
    }
}

impl KernelCache {
    /// Compiles the modules `warm` names for every operator of `ops` into this cache (both
    /// layers), in parallel on the host's cores; needs NVRTC, no GPU. Modules already cached
    /// are only checked. Every module is attempted; the first failure is returned after all
    /// have run.
    ///
    /// ```
    /// use monoscan::cache::{CacheConfig, KernelCache, Origin, Warm};
    /// use monoscan::ops::Sum;
    /// use monoscan::Monoid;
    /// # let dir = std::env::temp_dir().join(format!("monoscan-warm-doc-{}", std::process::id()));
    /// let cache = KernelCache::new(CacheConfig::dir(&dir));
    /// match cache.warm(&[Sum::<i32>::new().cuda()], &Warm::new([90])) {
    ///     Ok(report) => {
    ///         // A later process reads every module of the default path from disk.
    ///         let again = KernelCache::new(CacheConfig::dir(&dir));
    ///         let report2 = again.warm(&[Sum::<i32>::new().cuda()], &Warm::new([90]))?;
    ///         assert_eq!(report2.count(Origin::Disk), report.modules.len());
    ///     }
    ///     Err(e) if e.is_unavailable() => println!("skipped: {e}"),
    ///     Err(e) => return Err(e),
    /// }
    /// # let _ = std::fs::remove_dir_all(&dir);
    /// # Ok::<(), monoscan::Error>(())
    /// ```
    pub fn warm(&self, ops: &[CudaOp], warm: &Warm) -> Result<WarmReport> {
        let start = Instant::now();
        warm.tuning.validate()?;
        let info = jit::nvrtc()?;
        let mut jobs = Vec::new();
        let mut seen = HashSet::new();
        for op in ops {
            let key = self.intern(op.clone());
            for &cc in &warm.archs {
                let target = jit::target_for(&info, cc)?;
                let plan = Plan::for_key(&key, DeviceLimits::for_arch(cc), &warm.tuning);
                for &algorithm in &warm.algorithms {
                    for set in plan.sets(algorithm)? {
                        let spec = plan.spec(set);
                        if seen.insert((key.id(), spec, target)) {
                            jobs.push((key.clone(), spec, target));
                        }
                    }
                }
            }
        }
        let mut modules = Vec::with_capacity(jobs.len());
        let mut first_error = None;
        for r in self.fetch_all(&jobs) {
            match r {
                Ok(m) => modules.push(m),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(WarmReport {
                modules,
                wall: start.elapsed(),
            }),
        }
    }
}
