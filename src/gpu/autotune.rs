//! Autotuning on the device: an operator's first large scan times the staged scan in each
//! candidate shape ([`crate::tuning::autotune::candidates`]) and keeps the fastest, for this
//! call, for the scanner, and (beside the kernel cache) for later processes.

use super::kernels::OpKernels;
use super::prepare::prepare;
use crate::bench::Timer;
use crate::codegen::KernelSet;
use crate::error::Result;
use crate::monoid::Monoid;
use crate::tuning::autotune::{self, Record, MIN_TUNING_BYTES};

/// The set a staged scan of `n` elements runs: `set` (the plan's), unless the operator is
/// autotuned and has no shape yet, in which case a stored record is installed, or, on an input
/// of at least [`MIN_TUNING_BYTES`] that the scan does not overwrite (`tunable`), the
/// candidates are compiled in parallel, each timed by `run` (a scan of this call's input into
/// its output: one untimed run, the median of three timed ones), and the fastest is recorded
/// and installed. Where the plan makes the share scan a candidate
/// ([`crate::tuning::plan::Plan::share_scan_candidate`]), `shares` (the same scan in the share
/// scan's form; `false` where it does not apply) is timed too, and installed where it is the
/// fastest. Results never depend on the shape: `run` and `shares` compute the same scan.
pub(super) fn staged_set<M: Monoid>(
    sc: &OpKernels<M>,
    set: KernelSet,
    n: u64,
    tunable: bool,
    run: impl Fn(KernelSet) -> Result<()>,
    shares: impl Fn() -> Result<bool>,
) -> Result<KernelSet> {
    let KernelSet::StagedScan(_) = set else {
        return Ok(set);
    };
    let gpu = sc.gpu;
    let op = sc.op.op();
    let size = op.elem_size;
    let cost = sc.op.cost();
    if sc.is_instrumented() || sc.plan.tuned().is_some() || !autotune::applies(&gpu.tuning) {
        return Ok(set);
    }
    let device = gpu.device_key();
    let limits = gpu.info.limits;
    if let Some(record) = gpu.cache.tuned().get(&device, op, &limits) {
        sc.plan.install_record(&record);
        return Ok(KernelSet::StagedScan(sc.plan.staged_shape_for(n)?));
    }
    if !tunable || n.saturating_mul(size as u64) < MIN_TUNING_BYTES {
        return Ok(set);
    }
    let shapes = autotune::candidates(size, &cost, &limits, &gpu.tuning);
    let sets: Vec<KernelSet> = shapes.iter().map(|s| KernelSet::StagedScan(*s)).collect();
    prepare(sc, &sets)?;
    let timer = Timer::new(gpu).warmup(1).reps(3);
    let mut timings = Vec::with_capacity(sets.len());
    let mut best: Option<(usize, f64)> = None;
    for (i, s) in sets.iter().enumerate() {
        let ms = timer.time(|| run(*s))?.median_ms();
        timings.push((shapes[i].name(), ms));
        if best.is_none_or(|(_, b)| ms < b) {
            best = Some((i, ms));
        }
    }
    let Some((winner, fastest)) = best else {
        return Ok(set);
    };
    let mut won_by_shares = false;
    if sc.plan.share_scan_candidate() && shares()? {
        let ms = timer.time(|| shares().map(|_| ()))?.median_ms();
        timings.push(("share-scan".to_string(), ms));
        won_by_shares = ms < fastest;
    }
    let record = Record {
        shape: shapes[winner],
        timings,
        n,
        shares: won_by_shares,
    };
    if let Err(why) = gpu.cache.tuned().put(&device, op, &record) {
        eprintln!("monoscan: warning: {why}; the tuned shape is kept for this process only");
    }
    Ok(KernelSet::StagedScan(sc.plan.install_record(&record)))
}
