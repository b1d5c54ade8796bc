//! Autotuning on the device: an operator's first large scan times the staged scan in each
//! candidate shape ([`crate::tuning::autotune::candidates`]), its first large column scan of
//! each strip width and direction the column scan in each candidate tile
//! ([`crate::tuning::autotune::columns::candidates`]), and its first large reduction the staged
//! reduce in each candidate tile ([`crate::tuning::autotune::reduce::candidates`]), and keeps
//! the fastest, for this call, for the scanner, and (beside the kernel cache) for later
//! processes.

use super::kernels::OpKernels;
use super::prepare::prepare;
use crate::bench::Timer;
use crate::codegen::{CombineForm, KernelSet};
use crate::error::Result;
use crate::monoid::Monoid;
use crate::tuning::autotune::columns::{self, ColumnRecord};
use crate::tuning::autotune::reduce::ReduceRecord;
use crate::tuning::autotune::{self, Record, MIN_TUNING_BYTES};
use crate::tuning::{policy, ColumnShape, ShapeChoice, TileShape};

/// Each candidate's name and median time in milliseconds, in order, and the index and time of
/// the fastest.
type Timed = (Vec<(String, f64)>, Option<(usize, f64)>);

/// Times `run` on each of `candidates` with `timer` (as the autotuner times every candidate:
/// one untimed run, the median of three timed ones): each candidate's name (by `name`) and
/// median time in milliseconds, in order, and the index and time of the fastest (`None` for
/// no candidates).
fn time_each<T>(
    timer: &Timer,
    candidates: &[T],
    name: impl Fn(&T) -> String,
    run: impl Fn(&T) -> Result<()>,
) -> Result<Timed> {
    let mut timings = Vec::with_capacity(candidates.len());
    let mut best: Option<(usize, f64)> = None;
    for (i, c) in candidates.iter().enumerate() {
        let ms = timer.time(|| run(c))?.median_ms();
        timings.push((name(c), ms));
        if best.is_none_or(|(_, b)| ms < b) {
            best = Some((i, ms));
        }
    }
    Ok((timings, best))
}

/// The set a staged scan of `n` elements runs: `set` (the plan's; always where an input map
/// changes the element size), unless the operator is autotuned and has no shape yet, in which
/// case a stored record is installed, or, on an input of at least [`MIN_TUNING_BYTES`] that
/// the scan does not overwrite (`tunable`), the
/// candidates are compiled in parallel, each timed by `run` (a scan of this call's input into
/// its output: one untimed run, the median of three timed ones), and the fastest is recorded
/// and installed. Where the plan makes the share scan a candidate
/// ([`crate::tuning::plan::Plan::share_scan_candidate`]), `shares` (the same scan in the share
/// scan's form; `false` where it does not apply) is timed too, and installed where it is the
/// fastest. Where the plan outlines the combine and the tuning does not fix the form, the
/// fastest shape is timed again with the combine inlined (`run` on kernels in that form), and
/// where that beats every other candidate the plan's modules are built inlined from then on.
/// Results never depend on the shape or the form: every run computes the same scan.
pub(super) fn staged_set<M: Monoid>(
    sc: &OpKernels<M>,
    set: KernelSet,
    n: u64,
    tunable: bool,
    run: impl Fn(&OpKernels<M>, KernelSet) -> Result<()>,
    shares: impl Fn() -> Result<bool>,
) -> Result<KernelSet> {
    let KernelSet::StagedScan(_) = set else {
        return Ok(set);
    };
    let gpu = sc.gpu;
    let op = sc.op.op();
    let size = op.elem_size;
    let cost = sc.op.cost();
    if sc.is_instrumented()
        || sc.plan.tuned().is_some()
        || sc.plan.changes_size()
        || !autotune::applies(&gpu.tuning)
    {
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
    let (mut timings, best) = time_each(&timer, &shapes, TileShape::name, |s| {
        run(sc, KernelSet::StagedScan(*s))
    })?;
    let Some((winner, fastest)) = best else {
        return Ok(set);
    };
    let mut won_by_shares = false;
    let mut best_ms = fastest;
    if sc.plan.share_scan_candidate() && shares()? {
        let ms = timer.time(|| shares().map(|_| ()))?.median_ms();
        timings.push(("share-scan".to_string(), ms));
        won_by_shares = ms < fastest;
        best_ms = best_ms.min(ms);
    }
    let mut combine = None;
    if sc.plan.combine() == CombineForm::Outlined && gpu.tuning.combine.is_none() {
        let inlined = sc.in_form(CombineForm::Inline);
        // The inlined form is a candidate only: where it does not compile, the operator keeps
        // the outlined form it already runs in.
        let ms = match prepare(&inlined, &sets[winner..=winner]) {
            Ok(_) => Some(timer.time(|| run(&inlined, sets[winner]))?.median_ms()),
            Err(why) => {
                eprintln!("monoscan: warning: the inlined combine is not timed: {why}");
                None
            }
        };
        if let Some(ms) = ms {
            timings.push((format!("{} inline", shapes[winner].name()), ms));
        }
        combine = Some(match ms {
            Some(ms) if ms < best_ms => {
                won_by_shares = false;
                CombineForm::Inline
            }
            _ => CombineForm::Outlined,
        });
    }
    let record = Record {
        shape: shapes[winner],
        timings,
        n,
        shares: won_by_shares,
        combine,
    };
    if let Err(why) = gpu.cache.tuned().put(&device, op, &record) {
        eprintln!("monoscan: warning: {why}; the tuned shape is kept for this process only");
    }
    Ok(KernelSet::StagedScan(sc.plan.install_record(&record)))
}

/// The tile a column scan of `rows` rows of `columns` columns, forwards or in `reverse`, runs:
/// the tuning's or the policy's ([`policy::column_shape`]) where the tuning sets a tile or
/// turns autotuning off, else an installed or stored choice for its strip width and direction,
/// or, on an array of at least [`MIN_TUNING_BYTES`] that the scan does not overwrite
/// (`tunable`), the fastest of the candidates, each timed by `run` (this call's scan in that
/// tile: one untimed run, the median of three timed ones), recorded and installed. `None` where
/// the column scan does not take such columns. Results never depend on the tile.
pub(super) fn column_shape<M: Monoid>(
    sc: &OpKernels<M>,
    columns: usize,
    rows: u64,
    reverse: bool,
    tunable: bool,
    run: impl Fn(ColumnShape) -> Result<()>,
) -> Result<Option<ColumnShape>> {
    let gpu = sc.gpu;
    let op = sc.op.op();
    let size = op.elem_size;
    let limits = gpu.info.limits;
    let tuning = &gpu.tuning;
    let Some(policy) = policy::column_shape(columns, size, &limits, tuning.column) else {
        return Ok(None);
    };
    if sc.is_instrumented() || tuning.column.is_some() || !tuning.autotune {
        return Ok(Some(policy));
    }
    let with = |choice| policy::column_shape(columns, size, &limits, Some(choice));
    if let Some(choice) = sc.plan.tuned_column(policy.strip, reverse) {
        return Ok(with(choice));
    }
    let device = gpu.device_key();
    let store = gpu.cache.tuned();
    if let Some(record) = store.get_column(&device, op, policy.strip, reverse, &limits) {
        return Ok(with(sc.plan.install_column(
            policy.strip,
            reverse,
            record.choice,
        )));
    }
    let bytes = rows
        .saturating_mul(columns as u64)
        .saturating_mul(size as u64);
    if !tunable || bytes < MIN_TUNING_BYTES {
        return Ok(Some(policy));
    }
    let shapes = columns::candidates(columns, size, &limits);
    let sets: Vec<KernelSet> = shapes
        .iter()
        .map(|&shape| KernelSet::ColumnScan { shape, reverse })
        .collect();
    prepare(sc, &sets)?;
    let timer = Timer::new(gpu).warmup(1).reps(3);
    let (timings, best) = time_each(&timer, &shapes, ColumnShape::name, |s| run(*s))?;
    let Some((winner, _)) = best else {
        return Ok(Some(policy));
    };
    let winner = shapes[winner];
    let record = ColumnRecord {
        strip: policy.strip,
        reverse,
        choice: columns::choice_of(&winner),
        timings,
        n: rows.saturating_mul(columns as u64),
    };
    if let Err(why) = store.put_column(&device, op, &record) {
        eprintln!("monoscan: warning: {why}; the tuned tile is kept for this process only");
    }
    Ok(with(sc.plan.install_column(
        policy.strip,
        reverse,
        record.choice,
    )))
}

/// The tile a staged reduction of `n` elements runs: `shape` (the plan's), unless the operator
/// is autotuned, the tuning fixes no tile, large reductions take the staged reduce tile by tile
/// ([`crate::tuning::plan::Plan::reduce_candidates`]) and it has no tile yet, in which case a
/// stored record is installed, or, on an input of at least [`MIN_TUNING_BYTES`], the candidates
/// are compiled in parallel, each timed by `run` (this call's reduction in that tile: one
/// untimed run, the median of three timed ones), and the fastest is recorded and installed.
/// Results never depend on the tile: every candidate folds the same tiles in the same order.
pub(super) fn reduce_shape<M: Monoid>(
    sc: &OpKernels<M>,
    shape: TileShape,
    n: u64,
    run: impl Fn(TileShape) -> Result<()>,
) -> Result<TileShape> {
    let gpu = sc.gpu;
    let op = sc.op.op();
    let bytes = n.saturating_mul(op.elem_size as u64);
    if sc.is_instrumented()
        || !gpu.tuning.autotune
        || gpu.tuning.reduce.is_some()
        || sc.plan.tuned_reduce().is_some()
        || bytes < MIN_TUNING_BYTES
    {
        return Ok(shape);
    }
    let shapes = sc.plan.reduce_candidates();
    if shapes.len() < 2 {
        return Ok(shape);
    }
    let device = gpu.device_key();
    let limits = gpu.info.limits;
    let store = gpu.cache.tuned();
    let cost = sc.op.cost();
    let choice = match store.get_reduce(&device, op, &cost, &limits) {
        Some(record) => record.choice,
        None => {
            let sets: Vec<KernelSet> = shapes.iter().map(|s| KernelSet::StagedReduce(*s)).collect();
            prepare(sc, &sets)?;
            let timer = Timer::new(gpu).warmup(1).reps(3);
            let (timings, best) = time_each(&timer, &shapes, TileShape::name, |s| run(*s))?;
            let Some((winner, _)) = best else {
                return Ok(shape);
            };
            let winner = shapes[winner];
            let record = ReduceRecord {
                choice: ShapeChoice::new(winner.block, winner.items),
                timings,
                n,
            };
            if let Err(why) = store.put_reduce(&device, op, &record) {
                eprintln!("monoscan: warning: {why}; the tuned tile is kept for this process only");
            }
            record.choice
        }
    };
    sc.plan.install_reduce(choice);
    sc.plan.reduce_shape(n)
}
