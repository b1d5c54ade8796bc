//! The scan strategies of a [`super::Scanner`]: the textbook hierarchical scans,
//! reduce-then-scan, and the single-pass scan (register or staged tiles), with what
//! `Algorithm::Auto` picks.

use super::kernels::OpKernels;
use super::launch::{self, BlockScan, DevSlice, SinglePass, TensorMap, TileScan};
use super::scratch::{bytes_for, levels};
use crate::algorithm::Algorithm;
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::monoid::Monoid;
use crate::ops::Reversed;
use crate::tuning::{Numbering, PrefetchPlan};

/// How a scan treats each position.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mode<T> {
    /// `y[i] = x0 ⊕ ... ⊕ xi`.
    Inclusive,
    /// `y[i] = init ⊕ x0 ⊕ ... ⊕ xi` (a carry from earlier data; tiled algorithms only).
    InclusiveFrom(T),
    /// `y[i] = init ⊕ x0 ⊕ ... ⊕ x(i-1)`.
    Exclusive(T),
}

impl<T> Mode<T> {
    /// Whether the scan is exclusive, and its seed.
    fn parts(self) -> (bool, Option<T>) {
        match self {
            Mode::Inclusive => (false, None),
            Mode::InclusiveFrom(v) => (false, Some(v)),
            Mode::Exclusive(v) => (true, Some(v)),
        }
    }
}

/// The input as the operator's own elements: what the textbook kernels read (they take no
/// input maps).
fn own<In: 'static, T: 'static>(inp: DevSlice<In>) -> Result<DevSlice<T>> {
    inp.retype::<T>()
        .ok_or_else(|| Error::invalid("internal: an unmapped scan of another input type"))
}

/// Scans `inp` (of `In`: the operator's elements, or a mapped scanner's input type) into
/// `out`; writes the total to `total` when given.
pub(super) fn scan<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    algorithm: Algorithm,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    mode: Mode<M::Elem>,
    total: Option<DevSlice<M::Elem>>,
) -> Result<()> {
    let n = inp.len();
    let out = out
        .prefix(n)
        .ok_or_else(|| Error::invalid("internal: the output is shorter than the input"))?;
    let (exclusive, init) = mode.parts();
    // The share scan is one of Auto's forms only.
    let auto = algorithm == Algorithm::Auto;
    let algorithm = sc.plan.resolve(algorithm, n)?;
    if matches!(algorithm, Algorithm::KoggeStone | Algorithm::BrentKung) {
        // The textbook kernels read the operator's own element type and seed only
        // exclusive scans; refuse before anything is launched.
        if sc.mapped {
            return Err(Error::invalid(format!(
                "fused input maps run on the tiled algorithms (auto, hierarchical, single-pass), not {algorithm}"
            )));
        }
        if !exclusive && init.is_some() {
            return Err(Error::invalid(format!(
                "inclusive scans from a carry run on the tiled algorithms (auto, hierarchical, single-pass), not {algorithm}"
            )));
        }
    }
    // The one module this call launches (the plan decides: `Scanner::prepare` compiles
    // the same ones).
    let aligned = inp.addr() % 16 == 0 && out.addr() % 16 == 0;
    let set = sc.plan.scan_set(algorithm, n, aligned)?;
    if n == 0 {
        if let Some(t) = total {
            sc.fill(
                set,
                t.prefix(1).expect("one element"),
                init.unwrap_or_else(|| sc.m.identity()),
            )?;
        }
        return Ok(());
    }
    let run = Run {
        exclusive,
        init,
        total,
    };
    match algorithm {
        Algorithm::KoggeStone | Algorithm::BrentKung => textbook(sc, set, own(inp)?, out, run),
        Algorithm::Hierarchical => reduce_then_scan(sc, set, inp, out, run),
        _ => {
            let (set, share_set) = tuned(sc, set, inp, out, auto)?;
            if let Some(s) = share_set.filter(|_| sc.plan.share_scan()) {
                if super::shares::scan(sc, s, inp, out, &run)? {
                    return Ok(());
                }
            }
            single_pass(sc, set, inp, out, run)
        }
    }
}

/// The single-pass set a scan of `inp` into `out` runs (`set`, the plan's, unless the
/// operator is autotuned: see [`super::autotune::staged_set`]), and the share scan's set where
/// `auto` makes it one of the forms (the plan then says whether it runs). An autotuned
/// operator's first large scan times the candidate shapes on this call's buffers: only where
/// the output does not overwrite the input.
fn tuned<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    set: KernelSet,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    auto: bool,
) -> Result<(KernelSet, Option<KernelSet>)> {
    let n = inp.len();
    let in_bytes = n * std::mem::size_of::<In>() as u64;
    let out_bytes = n * std::mem::size_of::<M::Elem>() as u64;
    let disjoint = inp.addr() + in_bytes <= out.addr() || out.addr() + out_bytes <= inp.addr();
    let plain = || Run {
        exclusive: false,
        init: None,
        total: None,
    };
    let share_set = if auto {
        sc.plan.share_scan_set()?
    } else {
        None
    };
    let set = super::autotune::staged_set(
        sc,
        set,
        n,
        disjoint,
        |k, s| single_pass(k, s, inp, out, plain()),
        || match share_set {
            Some(s) => super::shares::scan(sc, s, inp, out, &plain()),
            None => Ok(false),
        },
    )?;
    Ok((set, share_set))
}

/// The reverse scan of `inp` into `out` (`y[i] = xi ⊕ ... ⊕ x(n-1)`, from `init` on the right
/// in `mode`'s exclusive form; the total of all of it, and `init`, into `total`), over the
/// opposite monoid: by the share scan from the end where the forward scan of the same input
/// runs in the share scan; by the staged scan run from the end, in the staged shape the
/// forward scan takes (autotuned as it is), where the forward scan stages (and where the input
/// is too small for the share scan's shares, in the staged shape the autotuner ranked first);
/// elsewhere (one tile, a buffer off 16 bytes, an input map that
/// narrows the element, a device before sm_80) by the register-tile single-pass scan
/// from the end; in deterministic mode (and for more tiles than the single-pass scan numbers)
/// by reduce-then-scan from the end, as reproducible as it is forwards. `false`, with nothing
/// launched, for an empty input.
pub(super) fn reverse<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    mode: Mode<M::Elem>,
    total: Option<DevSlice<M::Elem>>,
) -> Result<bool> {
    let n = inp.len();
    if n == 0 {
        return Ok(false);
    }
    let out = out
        .prefix(n)
        .ok_or_else(|| Error::invalid("internal: the output is shorter than the input"))?;
    let aligned = inp.addr() % 16 == 0 && out.addr() % 16 == 0;
    let mut share_set = None;
    let forward = match sc.plan.scan_set(Algorithm::Auto, n, aligned)? {
        set @ KernelSet::StagedScan(_) => {
            let (staged, shares) = tuned(sc, set, inp, out, true)?;
            share_set = shares
                .filter(|_| sc.plan.share_scan())
                .and_then(KernelSet::reversed);
            staged
        }
        set => set,
    };
    // The forms from the end are those of `Plan::reverse_sets`, which `prepare_reverse` loads.
    let Some(set) = sc.plan.from_end(forward)? else {
        return Ok(false);
    };
    let opposite = Reversed::new(sc.m);
    let rk = OpKernels::new(sc.gpu, &opposite).with_input_of(sc);
    let (exclusive, init) = mode.parts();
    let run = Run {
        exclusive,
        init,
        total,
    };
    if let Some(s) = share_set {
        if super::shares::scan(&rk, s, inp, out, &run)? {
            return Ok(true);
        }
    }
    if let KernelSet::ReduceThenScanReverse(_) = set {
        reduce_then_scan(&rk, set, inp, out, run)?;
    } else {
        single_pass(&rk, set, inp, out, run)?;
    }
    Ok(true)
}

/// What a scan computes besides its input and output.
pub(super) struct Run<T> {
    /// Exclusive (else inclusive).
    pub(super) exclusive: bool,
    /// The seed, if any.
    pub(super) init: Option<T>,
    /// Where the total goes, if anywhere.
    pub(super) total: Option<DevSlice<T>>,
}

/// Only the first level of a textbook scan (see [`super::Scanner::block_scans_only`]).
pub(super) fn block_scans_only<M: Monoid>(
    sc: &OpKernels<M>,
    algorithm: Algorithm,
    inp: DevSlice<M::Elem>,
    out: DevSlice<M::Elem>,
) -> Result<Option<(u64, u64)>> {
    let n = inp.len();
    let set = sc.plan.scan_set(algorithm, n, false)?;
    let Ok(section) = launch::section(set) else {
        return Ok(None);
    };
    if n == 0 {
        return Ok(Some((0, section)));
    }
    let k = sc.kernels(set)?;
    let args = BlockScan {
        inp,
        out,
        totals: None,
        n,
        exclusive: false,
        init: sc.m.identity(),
        has_init: false,
    };
    // SAFETY: `k` is this scanner's textbook scan module, rendered for M::Elem.
    unsafe { launch::block_scan(&sc.gpu.stream, &k, &args) }?;
    Ok(Some((n.div_ceil(section), section)))
}

/// Block scans, a scan of the block totals (recursively), and the add-back.
fn textbook<M: Monoid>(
    sc: &OpKernels<M>,
    set: KernelSet,
    inp: DevSlice<M::Elem>,
    out: DevSlice<M::Elem>,
    run: Run<M::Elem>,
) -> Result<()> {
    let section = launch::section(set)?;
    let k = sc.kernels(set)?;
    let n = inp.len();
    let lv = levels(n, section);
    let stream = &sc.gpu.stream;
    let mut scratch = sc.gpu.lock_scratch();
    let mut carve = scratch.carve(
        stream,
        bytes_for(lv.iter().sum(), sc.op.op().elem_size, lv.len() as u64),
    )?;
    // Level k scans `len` elements; a level of more than one section scans its block totals
    // one level down (exclusive, from init) and adds them back.
    let mut pending = Vec::new();
    let (mut src, mut dst, mut excl, seed) = (inp, out, run.exclusive, run.init);
    loop {
        let len = src.len();
        let blocks = len.div_ceil(section);
        let single = blocks == 1;
        let totals = if single {
            run.total
        } else {
            Some(carve.take::<M::Elem>(blocks)?)
        };
        let args = BlockScan {
            inp: src,
            out: dst,
            totals,
            n: len,
            exclusive: excl,
            init: if single {
                seed.unwrap_or_else(|| sc.m.identity())
            } else {
                sc.m.identity()
            },
            has_init: single && seed.is_some(),
        };
        // SAFETY: `k` is this scanner's textbook scan module, rendered for M::Elem.
        unsafe { launch::block_scan(stream, &k, &args) }?;
        let Some(totals) = totals.filter(|_| !single) else {
            break;
        };
        // The carries of this level are the exclusive scan of its totals, from init.
        pending.push((dst, totals, !excl && seed.is_none()));
        (src, dst, excl) = (totals, totals, true);
    }
    for (dst, carries, skip_first) in pending.into_iter().rev() {
        // SAFETY: as above.
        unsafe { launch::add_carry(stream, &k, dst, carries, dst.len(), skip_first) }?;
    }
    Ok(())
}

/// Tile totals, their scan (recursively, in place), then each tile from its carry. `set` is
/// the reduce-then-scan or its form from the end, which reads and writes the input's tiles;
/// the levels of totals above them scan forwards (for the form from the end, in the forward
/// module of the same operator, the opposite monoid).
fn reduce_then_scan<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    set: KernelSet,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    run: Run<M::Elem>,
) -> Result<()> {
    let (KernelSet::ReduceThenScan(shape) | KernelSet::ReduceThenScanReverse(shape)) = set else {
        return Err(Error::invalid(
            "internal: a reduce-then-scan of another kernel set",
        ));
    };
    let k = sc.kernels(set)?;
    let tile = shape.tile();
    let n = inp.len();
    let lv = levels(n, tile);
    let stream = &sc.gpu.stream;
    let identity = sc.m.identity();
    let mut scratch = sc.gpu.lock_scratch();
    let mut carve = scratch.carve(
        stream,
        bytes_for(lv.iter().sum(), sc.op.op().elem_size, lv.len() as u64),
    )?;
    // Level 0 reads the caller's input (through the map, if any); later levels the totals.
    if n <= tile {
        let args = TileScan {
            inp,
            out,
            n,
            carries: None,
            exclusive: run.exclusive,
            init: run.init.unwrap_or(identity),
            has_init: run.init.is_some(),
            total: run.total,
        };
        // SAFETY: `k` is this scanner's module, rendered for M::Elem and (mapped) its map's In.
        return unsafe { launch::tile_scan(stream, &k, sc.mapped, &args) };
    }
    let sums = carve.take::<M::Elem>(n.div_ceil(tile))?;
    // SAFETY: as above.
    unsafe { launch::tile_totals(stream, &k, sc.mapped, inp, sums, n) }?;
    let kl = match set {
        KernelSet::ReduceThenScanReverse(s) => sc.kernels(KernelSet::ReduceThenScan(s))?,
        _ => k.clone(),
    };
    // The totals' levels, scanned exclusively in place from init; the top one also writes
    // the total.
    let mut pending = Vec::new();
    let mut level = sums;
    loop {
        let len = level.len();
        let tiles = len.div_ceil(tile);
        if tiles == 1 {
            let args = TileScan {
                inp: level,
                out: level,
                n: len,
                carries: None,
                exclusive: true,
                init: run.init.unwrap_or(identity),
                has_init: run.init.is_some(),
                total: run.total,
            };
            // SAFETY: as above (`kl` is a module of this scanner's operator too; levels past
            // the first read M::Elem through the plain entry).
            unsafe { launch::tile_scan(stream, &kl, false, &args) }?;
            break;
        }
        let sums = carve.take::<M::Elem>(tiles)?;
        // SAFETY: as above.
        unsafe { launch::tile_totals(stream, &kl, false, level, sums, len) }?;
        pending.push((level, sums));
        level = sums;
    }
    for (level, carries) in pending.into_iter().rev() {
        let args = TileScan {
            inp: level,
            out: level,
            n: level.len(),
            carries: Some(carries),
            exclusive: true,
            init: identity,
            has_init: false,
            total: None,
        };
        // SAFETY: as above.
        unsafe { launch::tile_scan(stream, &kl, false, &args) }?;
    }
    let args = TileScan {
        inp,
        out,
        n,
        carries: Some(sums),
        exclusive: run.exclusive,
        init: identity,
        has_init: false,
        total: None,
    };
    // SAFETY: as above.
    unsafe { launch::tile_scan(stream, &k, sc.mapped, &args) }
}

/// One launch of `set`: the one-tile scan (a one-tile set, in the small or the single-pass
/// shape), else the decoupled look-back scan (staged or in registers).
fn single_pass<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    set: KernelSet,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    run: Run<M::Elem>,
) -> Result<()> {
    let shape = match set {
        KernelSet::OneTile(s)
        | KernelSet::SinglePass(s)
        | KernelSet::SinglePassReverse(s)
        | KernelSet::StagedScan(s)
        | KernelSet::StagedScanReverse(s) => s,
        _ => {
            return Err(Error::invalid(
                "internal: a single-pass scan of another kernel set",
            ))
        }
    };
    let stream = &sc.gpu.stream;
    let identity = sc.m.identity();
    let n = inp.len();
    if let KernelSet::OneTile(_) = set {
        if n > shape.tile() {
            return Err(Error::invalid(format!(
                "internal: {n} elements in a one-tile scan of {}",
                shape.tile()
            )));
        }
        // One block.
        let args = TileScan {
            inp,
            out,
            n,
            carries: None,
            exclusive: run.exclusive,
            init: run.init.unwrap_or(identity),
            has_init: run.init.is_some(),
            total: run.total,
        };
        let k = sc.kernels(set)?;
        // SAFETY: `k` is this scanner's module, rendered for M::Elem and (mapped) its map's In.
        return unsafe { launch::tile_scan(stream, &k, sc.mapped, &args) };
    }
    let k = sc.kernels(set)?;
    let tiles = n.div_ceil(shape.tile());
    if tiles > u64::from(u32::MAX) {
        return Err(Error::invalid(format!(
            "{n} elements need {tiles} tiles; the single-pass scan handles at most 2^32 - 1 (use Algorithm::Hierarchical)"
        )));
    }
    // The TMA forms load whole tiles (the tensor form through a tensor map of the input's
    // 128-byte rows, the bulk form by one bulk copy), and prefetch into L2 a fixed number of
    // bytes ahead, the first wave too in launches of several waves (`FirstWave::for_scan`).
    // (A staged scan whose map widens its inputs copies by cp.async, never the TMA: the plan
    // sees to it.)
    // A staged scan numbers its tiles as the tuning's order says (`Tuning::tile_order`): by
    // default block b scans tile b, in a cooperative grid for one wave of tiles.
    let staged = matches!(
        set,
        KernelSet::StagedScan(_) | KernelSet::StagedScanReverse(_)
    );
    let resident = if staged {
        k.resident(Entry::ScanStaged, sc.mapped)
    } else {
        0
    };
    let order = if staged {
        sc.gpu.tuning.tile_order.numbering(tiles, resident)
    } else {
        Numbering::Claimed
    };
    let tma = if shape.staged && shape.tma {
        // The bulk form of the linear layout copies tiles from the input's address itself.
        let map = if shape.linear {
            None
        } else {
            Some(TensorMap::rows128(inp, shape.tma_rows())?)
        };
        let mut tuning = sc.gpu.tuning.clone();
        tuning.first_wave = tuning.first_wave.for_scan(tiles, resident);
        let plan = PrefetchPlan::new(
            &tuning,
            shape.tile_bytes(sc.op.op().elem_size),
            tiles,
            resident,
            sc.gpu.info.mem_gbps,
        )?;
        Some((map, plan))
    } else {
        None
    };
    let mut scratch = sc.gpu.lock_scratch();
    let lookback = scratch.lookback::<M::Elem>(stream, shape.layout, tiles)?;
    let args = SinglePass {
        inp,
        out,
        n,
        lookback,
        exclusive: run.exclusive,
        init: run.init.unwrap_or(identity),
        has_init: run.init.is_some(),
        total: run.total,
        order,
    };
    // SAFETY: `k` is this scanner's module, rendered for M::Elem and (mapped) its map's In.
    unsafe {
        launch::single_pass(
            stream,
            &k,
            sc.mapped,
            &args,
            tma.as_ref().map(|(m, p)| (m.as_ref(), *p)),
        )
    }
}
