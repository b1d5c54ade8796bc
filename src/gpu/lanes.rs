//! Batched scans on the GPU ([`crate::lanes`]): contiguous rows are scanned in place by a row
//! kernel (one single-pass scan of the segmented lifting, with each row's start computed from
//! its position): the staged one where it applies, else the register one. One row is the 1-D
//! scan itself, autotuned as any 1-D scan is: forwards, and in reverse the 1-D scan run from
//! the end (staged where the forward scan stages, else in registers; reduce-then-scan from the
//! end in the deterministic mode). The columns of a row-major array scanned down
//! (the outer axis) are scanned in place by the column scan, or, for packed rows of at most 16
//! bytes, by one 1-D scan of rows as vectors under the lane-wise operator (forwards or from
//! the end); so are lanes that sit side by side as those columns do (the rows of a
//! column-major matrix, and groups whose lanes continue one another's, [`Lanes::normalized`]),
//! columns whose rows lie farther apart than their width (some of the columns of a wider
//! array), and groups of such columns along a middle axis that each span a tile of rows. Any
//! other layout is gathered into contiguous rows, scanned, and scattered back.

use super::autotune;
use super::kernels::OpKernels;
use super::launch::{self, ColumnScan, DevSlice, RowScan, Rows, TensorMap};
use super::row_fold;
use super::scan::{self, Mode};
use crate::codegen::{Entry, KernelSet};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::lanes::{Inits, LaneScan, Lanes};
use crate::monoid::Monoid;
use crate::ops::lanewise::{Lanes as VecLanes, Lanewise};
use crate::ops::{Flagged, Reversed, Segmented};
use crate::tuning::policy;
use crate::tuning::{ColumnShape, Numbering, PrefetchPlan, Purpose, TileShape};
use crate::Algorithm;
use cudarc::driver::CudaSlice;

/// Scans the lanes of `inp` (of `In`: the operator's elements, or its map's input type) into
/// `out` (the same layout), as `how` says; each lane's total into `totals`.
pub(super) fn scan<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    lanes: &Lanes,
    how: &LaneScan<M::Elem>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<()> {
    lanes.check_buffer(inp.len() as usize, "the input")?;
    lanes.check_buffer(out.len() as usize, "the output")?;
    how.check(lanes)?;
    let lanes = &lanes.normalized();
    let count = lanes.count() as u64;
    let totals = one_each(totals, count, "lane")?;
    if lanes.is_rows() && count == 1 && lanes.elements() > 0 {
        let n = lanes.elements() as u64;
        if one_row(k, inp, out, n, how, totals)? {
            return Ok(());
        }
    }
    let gpu = k.gpu;
    let stream = &gpu.stream;
    // Per-lane initial values travel to the device; they stay alive until the call is queued.
    let inits_buf: Option<CudaSlice<M::Elem>> = match &how.init {
        Some(Inits::Each(v)) => Some(gpu.upload(v)?),
        _ => None,
    };
    let inits = inits_buf.as_ref().map(|b| launch::input(b, stream));
    let inits = inits.as_ref().map(|(s, _)| *s);
    if lanes.elements() == 0 {
        return empty_totals(k, how, inits, totals);
    }
    if lanes.is_rows() {
        let n = lanes.elements() as u64;
        return rows(
            k,
            inp,
            Some(out),
            n,
            Rows::Each(lanes.len as u64),
            how,
            inits,
            totals,
        );
    }
    if columns(k, inp, Some(out), lanes, how, inits, totals)? {
        return Ok(());
    }
    // Any other layout: through contiguous rows.
    let n = lanes.elements();
    let gathered = gather(k, inp, lanes)?;
    let scanned = launch::alloc_for_writes::<M::Elem>(stream, n)?;
    let (g, _g1) = launch::input(&gathered, stream);
    let (r, _g2) = launch::input(&scanned, stream);
    rows(
        k,
        g,
        Some(r),
        n as u64,
        Rows::Each(lanes.len as u64),
        how,
        inits,
        totals,
    )?;
    let copies = k.kernels(KernelSet::LanesCopy)?;
    // SAFETY: `copies` is the lane-copy module of this operator; scatters copy its elements.
    unsafe { launch::copy_lanes(stream, &copies, false, true, out, r, lanes) }
}

/// The lanes of `inp` (of `In`, copied as they are: any input map applies later) gathered into
/// a new buffer of contiguous rows, lane after lane.
fn gather<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    lanes: &Lanes,
) -> Result<CudaSlice<In>> {
    let stream = &k.gpu.stream;
    let copies = k.kernels(KernelSet::LanesCopy)?;
    let gathered = launch::alloc_for_writes::<In>(stream, lanes.elements())?;
    let (g, queued) = launch::input(&gathered, stream);
    // SAFETY: `copies` is the lane-copy module of this operator, with its input map when
    // `mapped` (whose input type is then `In`; unmapped, `In` is the element type).
    unsafe { launch::copy_lanes(stream, &copies, k.mapped, false, inp, g, lanes) }?;
    drop(queued);
    Ok(gathered)
}

/// Folds every lane of `inp` (of `In`: the operator's elements, or its map's input type) into
/// `totals`, one per lane in lane order, reading each element once and writing only the
/// totals: one contiguous lane by the 1-D reduction, rows of at least half a warp tile by warps
/// where the tuning turns them on ([`row_fold`]), other rows and columns by the kernels
/// [`scan`] takes for them launched without an output, any other layout gathered into
/// contiguous rows first.
pub(super) fn reduce<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    lanes: &Lanes,
    totals: DevSlice<M::Elem>,
) -> Result<()> {
    lanes.check_buffer(inp.len() as usize, "the input")?;
    let lanes = &lanes.normalized();
    let count = lanes.count() as u64;
    let totals = one_per(totals, count, "lane")?;
    let how = LaneScan::inclusive();
    if count == 0 {
        return Ok(());
    }
    if lanes.elements() == 0 {
        return empty_totals(k, &how, None, Some(totals));
    }
    let n = lanes.elements() as u64;
    let by_rows = Rows::Each(lanes.len as u64);
    if lanes.is_rows() && count == 1 {
        let inp = inp
            .prefix(n)
            .ok_or_else(|| Error::invalid("internal: the input is shorter than its lane"))?;
        return super::reduce::reduce(k, Algorithm::Auto, inp, totals);
    }
    let len = lanes.len as u64;
    if lanes.is_rows() {
        if row_fold::fold_rows(k, inp, count, len, totals)? {
            return Ok(());
        }
        return rows(k, inp, None, n, by_rows, &how, None, Some(totals));
    }
    if columns(k, inp, None, lanes, &how, None, Some(totals))? {
        return Ok(());
    }
    let gathered = gather(k, inp, lanes)?;
    let (g, _g) = launch::input(&gathered, &k.gpu.stream);
    if row_fold::fold_rows(k, g, count, len, totals)? {
        return Ok(());
    }
    rows(k, g, None, n, by_rows, &how, None, Some(totals))
}

/// The first `count` of `totals`, one per `what` (lane or row): an error where there are fewer.
pub(super) fn one_each<T>(
    totals: Option<DevSlice<T>>,
    count: u64,
    what: &str,
) -> Result<Option<DevSlice<T>>> {
    totals.map(|t| one_per(t, count, what)).transpose()
}

/// The first `count` of `totals`, one per `what`: an error where there are fewer.
fn one_per<T>(totals: DevSlice<T>, count: u64, what: &str) -> Result<DevSlice<T>> {
    totals.prefix(count).ok_or_else(|| {
        Error::invalid(format!(
            "the totals hold {} elements, one per {what} needs {count}",
            totals.len()
        ))
    })
}

/// The totals of lanes of no elements: each its initial value (or the identity).
pub(super) fn empty_totals<M: Monoid>(
    k: &OpKernels<M>,
    how: &LaneScan<M::Elem>,
    inits: Option<DevSlice<M::Elem>>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<()> {
    let Some(t) = totals.filter(|t| t.len() > 0) else {
        return Ok(());
    };
    match (&how.init, inits) {
        (Some(Inits::Each(_)), Some(from)) => {
            let copies = k.kernels(KernelSet::LanesCopy)?;
            let plain = Lanes::rows(1, t.len() as usize);
            // SAFETY: the lane-copy module of this operator copies its elements.
            unsafe { launch::copy_lanes(&k.gpu.stream, &copies, false, false, from, t, &plain) }
        }
        (Some(Inits::Same(v)), _) => k.fill(KernelSet::LanesCopy, t, *v),
        _ => k.fill(KernelSet::LanesCopy, t, k.m.identity()),
    }
}

/// One contiguous row of `n` elements: forwards the 1-D scan (by `Algorithm::Auto`, as
/// `Scanner::inclusive_scan` and `exclusive_scan` run it), in reverse the 1-D scan from the
/// end ([`scan::reverse`]); the row's total into `totals`. `false`, with nothing launched,
/// for an empty row in reverse.
fn one_row<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    n: u64,
    how: &LaneScan<M::Elem>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<bool> {
    let inp = inp
        .prefix(n)
        .ok_or_else(|| Error::invalid("internal: the input is shorter than its row"))?;
    let mode = match &how.init {
        None => Mode::Inclusive,
        Some(Inits::Same(v)) => Mode::Exclusive(*v),
        Some(Inits::Each(v)) => Mode::Exclusive(*v.first().ok_or_else(|| {
            Error::invalid("internal: one initial value per lane, and no lane's")
        })?),
    };
    if how.reverse {
        return scan::reverse(k, inp, out, mode, totals);
    }
    scan::scan(k, Algorithm::Auto, inp, out, mode, totals)?;
    Ok(true)
}

/// Lanes that are the columns of row-major arrays (groups of `inner` lanes one element apart,
/// element `k` of lane `j` of group `o` at `o * outer_stride + k * stride + j`, rows at least
/// `inner` apart: a `(outer x len x inner)` tensor, or a view of some of its columns, scanned
/// along its middle axis), without an input map. One group of packed rows of at most 16 bytes
/// (2, 4, 8 or 16 columns) is one 1-D scan of rows, each row a vector of the lanes' values
/// under the lane-wise operator ([`crate::ops::lanewise`]: the 1-D scan's tuned 8- and 16-byte
/// elements), forwards or from the end. Any other number of
/// columns that [`policy::column_shape`] takes, forwards or in reverse, is the column scan,
/// where there is one group or each group's rows fill at least one of the policy's tiles (the
/// tiles of shorter groups would be mostly empty). Both read each row (or strip of a row)
/// whole. Without `out` (a fold of each lane into `totals`) the vectors are reduced and the
/// column scan writes only the totals. `false` where neither applies.
fn columns<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    out: Option<DevSlice<M::Elem>>,
    lanes: &Lanes,
    how: &LaneScan<M::Elem>,
    inits: Option<DevSlice<M::Elem>>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<bool> {
    if k.mapped || lanes.inner_stride != 1 || lanes.stride < lanes.inner || lanes.len == 0 {
        return Ok(false);
    }
    let Some(inp) = inp.retype::<M::Elem>() else {
        return Ok(false);
    };
    let span = lanes.span() as u64;
    let Some(inp) = inp.prefix(span) else {
        return Ok(false);
    };
    let out = match out.map(|o| o.prefix(span)) {
        Some(None) => return Ok(false),
        out => out.flatten(),
    };
    let size = std::mem::size_of::<M::Elem>();
    if lanes.outer > 1 {
        let limits = &k.gpu.info.limits;
        let policy = policy::column_shape(lanes.inner, size, limits, k.gpu.tuning.column);
        if policy.is_none_or(|s| (lanes.len as u64) < s.tile_rows()) {
            return Ok(false);
        }
    }
    let packed = lanes.outer == 1 && lanes.stride == lanes.inner;
    let row_bytes = lanes.inner.saturating_mul(size);
    if packed && row_bytes <= 16 {
        let done = match lanes.inner {
            2 => columns_of::<M, 2>(k, inp, out, how, totals)?,
            4 => columns_of::<M, 4>(k, inp, out, how, totals)?,
            8 => columns_of::<M, 8>(k, inp, out, how, totals)?,
            16 => columns_of::<M, 16>(k, inp, out, how, totals)?,
            _ => false,
        };
        if done {
            return Ok(true);
        }
    }
    column_scan(k, inp, out, lanes, how, inits, totals)
}

/// The column scan of `lanes` (the columns of row-major arrays, as [`columns`] takes them),
/// where its shape fits the device, in the tile the tuning, the autotuner or the policy gives
/// ([`autotune::column_shape`]; a fold without `out` is not timed, and takes a tuned tile
/// only from an earlier scan's record): `false` where it does not fit.
fn column_scan<M: Monoid>(
    k: &OpKernels<M>,
    inp: DevSlice<M::Elem>,
    out: Option<DevSlice<M::Elem>>,
    lanes: &Lanes,
    how: &LaneScan<M::Elem>,
    inits: Option<DevSlice<M::Elem>>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<bool> {
    let bytes = inp.len() * std::mem::size_of::<M::Elem>() as u64;
    let disjoint =
        out.is_some_and(|out| inp.addr() + bytes <= out.addr() || out.addr() + bytes <= inp.addr());
    let run = |shape| columns_in(k, shape, inp, out, lanes, how, inits, totals);
    // Every group's rows, for the autotuner's size threshold.
    let rows = lanes.len as u64 * lanes.outer as u64;
    let Some(shape) = autotune::column_shape(k, lanes.inner, rows, how.reverse, disjoint, run)?
    else {
        return Ok(false);
    };
    run(shape)?;
    Ok(true)
}

/// The column scan of `lanes` in tiles of `shape`.
#[allow(clippy::too_many_arguments)]
fn columns_in<M: Monoid>(
    k: &OpKernels<M>,
    shape: ColumnShape,
    inp: DevSlice<M::Elem>,
    out: Option<DevSlice<M::Elem>>,
    lanes: &Lanes,
    how: &LaneScan<M::Elem>,
    inits: Option<DevSlice<M::Elem>>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<()> {
    let size = std::mem::size_of::<M::Elem>();
    let kernel = k.kernels(KernelSet::ColumnScan {
        shape,
        reverse: how.reverse,
    })?;
    let rows = lanes.len as u64;
    let groups = lanes.outer as u64;
    let (tiles, entries) = launch::column_tiles(&kernel, rows, groups, size)?;
    let resident = kernel.resident(Entry::ColumnScan, false);
    // Tiles numbered as the tuning's order says (`Tuning::tile_order`).
    let order = k.gpu.tuning.tile_order.numbering(tiles, resident);
    // The first wave's copies are paced as the staged scan's are; nothing is prefetched.
    let plan = if shape.tma {
        let plan = PrefetchPlan::new(
            &k.gpu.tuning,
            shape.tile_bytes(size) as usize,
            tiles,
            resident,
            k.gpu.info.mem_gbps,
        )?;
        Some(PrefetchPlan { ahead: 0, ..plan })
    } else {
        None
    };
    let (init, has_init) = match &how.init {
        Some(Inits::Same(v)) => (*v, true),
        _ => (k.m.identity(), false),
    };
    let stream = &k.gpu.stream;
    let mut scratch = k.gpu.lock_scratch();
    let lookback = scratch.lookback::<M::Elem>(stream, shape.layout, entries)?;
    let args = ColumnScan {
        inp,
        out,
        rows,
        pitch: lanes.stride as u64,
        groups,
        group_stride: lanes.outer_stride as u64,
        lookback,
        exclusive: how.init.is_some(),
        inits,
        init,
        has_init,
        totals,
        order,
    };
    // SAFETY: `kernel` is the column-scan module of this operator, whose elements are
    // `M::Elem`.
    unsafe { launch::column_scan(stream, &kernel, &args, plan) }
}

/// The columns of a row-major array of `C` columns as one 1-D scan of `C`-vectors (see
/// [`columns`]), or without `out` one 1-D reduction of them into the totals: `false` where a
/// buffer does not hold whole vectors, or, in reverse, where [`scan::reverse`] does not run
/// (no rows).
fn columns_of<M: Monoid, const C: usize>(
    k: &OpKernels<M>,
    inp: DevSlice<M::Elem>,
    out: Option<DevSlice<M::Elem>>,
    how: &LaneScan<M::Elem>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<bool> {
    let Some(inp) = inp.vectors::<C>() else {
        return Ok(false);
    };
    let totals = match totals {
        Some(t) => match t.vectors::<C>() {
            Some(t) => Some(t),
            None => return Ok(false),
        },
        None => None,
    };
    let mode = match &how.init {
        None => Mode::Inclusive,
        Some(Inits::Same(v)) => Mode::Exclusive(VecLanes([*v; C])),
        Some(Inits::Each(v)) => Mode::Exclusive(VecLanes(std::array::from_fn(|j| v[j]))),
    };
    let m = Lanewise::<M, C>(k.m);
    let vk = OpKernels::new(k.gpu, &m);
    let Some(out) = out else {
        let Some(totals) = totals else {
            return Err(Error::invalid(
                "internal: a fold of columns needs the totals",
            ));
        };
        super::reduce::reduce(&vk, Algorithm::Auto, inp, totals)?;
        return Ok(true);
    };
    let Some(out) = out.vectors::<C>() else {
        return Ok(false);
    };
    if how.reverse {
        return scan::reverse(&vk, inp, out, mode, totals);
    }
    scan::scan(&vk, Algorithm::Auto, inp, out, mode, totals)?;
    Ok(true)
}

/// Contiguous rows, `n` elements in all, of one length or given by offsets (`row`): a row
/// kernel (for rows of one length the staged one where it applies, else the register one) of
/// the segmented lifting of `k`'s operator, or of its opposite monoid for reverse scans.
/// Without `out` the kernel folds each row into `totals` and writes nothing else.
#[allow(clippy::too_many_arguments)]
pub(super) fn rows<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    out: Option<DevSlice<M::Elem>>,
    n: u64,
    row: Rows,
    how: &LaneScan<M::Elem>,
    inits: Option<DevSlice<M::Elem>>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<()> {
    if how.reverse {
        let lifted = Segmented::new(Reversed::new(k.m));
        rows_of(k, &lifted, true, inp, out, n, row, how, inits, totals)
    } else {
        let lifted = Segmented::new(k.m);
        rows_of(k, &lifted, false, inp, out, n, row, how, inits, totals)
    }
}

#[allow(clippy::too_many_arguments)]
fn rows_of<M: Monoid, S: Monoid<Elem = Flagged<M::Elem>>, In: Element>(
    k: &OpKernels<M>,
    lifted: &S,
    reverse: bool,
    inp: DevSlice<In>,
    out: Option<DevSlice<M::Elem>>,
    n: u64,
    row: Rows,
    how: &LaneScan<M::Elem>,
    inits: Option<DevSlice<M::Elem>>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<()> {
    let sk = OpKernels::new(k.gpu, lifted).with_input_of(k);
    let (init, has_init) = match &how.init {
        Some(Inits::Same(v)) => (*v, true),
        _ => (k.m.identity(), false),
    };
    let args = |lookback, order| RowScan {
        inp,
        out,
        n,
        rows: row,
        lookback,
        exclusive: how.init.is_some(),
        inits,
        init,
        has_init,
        totals,
        order,
    };
    // The staged kernel where it applies: sm_80 and newer, values of 1, 2, 4, 8 or 16 bytes
    // (inputs of the same size: it maps in place), 16-byte aligned buffers.
    let aligned = inp.addr() % 16 == 0 && out.is_none_or(|o| o.addr() % 16 == 0);
    let value_size = std::mem::size_of::<M::Elem>();
    let count = row.count(n);
    let staged = match row {
        _ if !aligned => None,
        Rows::Each(_) => sk.plan.row_staged_shape(value_size, count)?,
        Rows::Offsets { .. } => sk.plan.segment_staged_shape(value_size, count)?,
    };
    if let Some(shape) = staged {
        let segments = matches!(row, Rows::Offsets { .. });
        let set = KernelSet::RowStaged {
            shape,
            reverse,
            value_size,
            segments,
        };
        // Pacing and prefetching go by the row length: rows given by offsets by their mean.
        let row_len = match row {
            Rows::Each(len) => len,
            Rows::Offsets { count, .. } => (n / count.max(1)).max(1),
        };
        let kernel = sk.kernels(set)?;
        let tiles = tiles_of(n, shape)?;
        let entry = if segments {
            Entry::SegmentStaged
        } else {
            Entry::RowStaged
        };
        let resident = kernel.resident(entry, k.mapped);
        // Tiles numbered as the tuning's order says (`Tuning::tile_order`).
        let order = k.gpu.tuning.tile_order.numbering(tiles, resident);
        let tma = if shape.tma {
            // The tensor map covers full tiles only; an input without one needs none.
            let map = if n >= shape.tile() {
                TensorMap::rows128(inp, shape.tma_rows())?
            } else {
                TensorMap::unused()
            };
            let mut tuning = k.gpu.tuning.clone();
            tuning.pace = policy::row_pace(tuning.pace, count, row_len, shape.tile());
            if count > 1 && !tuning.row_prefetch.prefetches(row_len, shape.tile()) {
                tuning.prefetch_kib = 0;
            }
            let plan = PrefetchPlan::new(
                &tuning,
                shape.tile_bytes(value_size),
                tiles,
                resident,
                k.gpu.info.mem_gbps,
            )?;
            Some((map, plan))
        } else {
            None
        };
        let stream = &k.gpu.stream;
        let mut scratch = k.gpu.lock_scratch();
        let lookback = scratch.lookback::<Flagged<M::Elem>>(stream, shape.layout, tiles)?;
        // SAFETY: `kernel` is the staged row-scan module of the segmented lifting of this
        // operator (its elements are Flagged<M::Elem>, its values M::Elem), with this
        // operator's input map from `In` when `mapped`.
        return unsafe {
            launch::row_staged(
                stream,
                &kernel,
                k.mapped,
                &args(lookback, order),
                tma.as_ref().map(|(m, p)| (m, *p)),
            )
        };
    }
    let shape = sk.shape(Purpose::SinglePass)?;
    let kernel = sk.kernels(KernelSet::RowScan {
        shape,
        reverse,
        segments: matches!(row, Rows::Offsets { .. }),
    })?;
    let tiles = tiles_of(n, shape)?;
    let stream = &k.gpu.stream;
    let mut scratch = k.gpu.lock_scratch();
    let lookback = scratch.lookback::<Flagged<M::Elem>>(stream, shape.layout, tiles)?;
    // SAFETY: `kernel` is the row-scan module of the segmented lifting of this operator (its
    // elements are Flagged<M::Elem>, its values M::Elem), with this operator's input map from
    // `In` when `mapped`.
    unsafe {
        launch::row_scan(
            stream,
            &kernel,
            k.mapped,
            &args(lookback, Numbering::Claimed),
        )
    }
}

/// Tiles of `shape` over `n` elements: an error beyond the 2^32 - 1 a launch numbers.
fn tiles_of(n: u64, shape: TileShape) -> Result<u64> {
    let tiles = n.div_ceil(shape.tile());
    if tiles > u64::from(u32::MAX) {
        return Err(Error::invalid(format!(
            "{n} elements need {tiles} tiles; a batched scan handles at most 2^32 - 1"
        )));
    }
    Ok(tiles)
}
