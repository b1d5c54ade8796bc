//! Launches of the batched-scan kernels: the row scans (register and staged tiles, rows of one
//! length or given by offsets), and the lane copies between a strided layout and contiguous
//! rows.

use super::{addr, config, grid_order, holds, tiles32, DevSlice, LookbackState, TensorMap};
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::gpu::module::Loaded;
use crate::lanes::Lanes;
use crate::tuning::{Numbering, PrefetchPlan};
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};

/// How a row scan's `n` elements split into rows.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rows {
    /// Rows of this many elements (at least 1), `n` a whole number of them.
    Each(u64),
    /// `count` rows (at least 1), row `r` from `offsets[r]` to `offsets[r + 1]`: `count + 1`
    /// offsets that never decrease, from 0 to `n`.
    Offsets { offsets: DevSlice<u64>, count: u64 },
}

impl Rows {
    /// The number of rows of `n` elements.
    pub(crate) fn count(&self, n: u64) -> u64 {
        match self {
            Rows::Each(row) => n / (*row).max(1),
            Rows::Offsets { count, .. } => *count,
        }
    }
}

/// Arguments of `row_scan`, `segment_scan` and `row_staged`: rows of values of `V` (the
/// segmented lifting's value type), whose look-back runs over the lifting's elements `E`.
pub(crate) struct RowScan<In, V, E> {
    /// Input (n elements of the input type).
    pub inp: DevSlice<In>,
    /// Output (n values; may be the input when `In` is `V`); `None` folds each row into its
    /// total and writes nothing else (the totals are then required).
    pub out: Option<DevSlice<V>>,
    /// Elements.
    pub n: u64,
    /// How they split into rows.
    pub rows: Rows,
    /// The look-back state.
    pub lookback: LookbackState<E>,
    /// Exclusive scans (else inclusive).
    pub exclusive: bool,
    /// One initial value per row, in memory order.
    pub inits: Option<DevSlice<V>>,
    /// The initial value of every row when `has_init` and there are no `inits`.
    pub init: V,
    /// Whether `init` applies.
    pub has_init: bool,
    /// One total per row, in memory order.
    pub totals: Option<DevSlice<V>>,
    /// How the blocks find their tiles: claimed from the counter, or (`row_staged` only)
    /// block b on tile b, in a cooperative launch of at most the module's resident blocks or
    /// an ordinary one.
    pub order: Numbering,
}

/// `row_scan` (rows of one length) or `segment_scan` (rows given by offsets) of a
/// [`KernelSet::RowScan`] module for such rows, one block per tile; through the input map when
/// `mapped`.
///
/// # Safety
/// `k` is such a module rendered for the segmented lifting whose elements are `E` (with
/// values `V`), and (when `mapped`) for an input map from `In` to `V`; unmapped, `In` is `V`.
/// Offsets ([`Rows::Offsets`]) that do not rise from 0 to `n` give unspecified values; the
/// kernel keeps every index within the offsets, the rows and the buffers whatever they hold.
pub(crate) unsafe fn row_scan<In: DeviceRepr, V: DeviceRepr, E>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    a: &RowScan<In, V, E>,
) -> Result<()> {
    let KernelSet::RowScan {
        shape, segments, ..
    } = k.set()
    else {
        return Err(Error::invalid("internal: row_scan needs a row-scan module"));
    };
    let f = k.function(
        if segments {
            Entry::SegmentScan
        } else {
            Entry::RowScan
        },
        mapped,
    )?;
    if a.order.by_block() {
        return Err(Error::invalid(
            "internal: the register row scan claims its tiles; block order is the staged one's",
        ));
    }
    match a.rows {
        Rows::Each(row) if !segments && row > 0 && a.n % row == 0 => {}
        Rows::Offsets { offsets, count } if segments && count > 0 => {
            holds("the offsets", &offsets, count + 1)?;
        }
        rows => {
            return Err(Error::invalid(format!(
                "internal: a {} module cannot scan {} elements in rows {rows:?}",
                k.set().name(),
                a.n
            )))
        }
    }
    let rows = a.rows.count(a.n);
    let tiles = a.n.div_ceil(shape.tile());
    let tiles32 = tiles32(tiles)?;
    holds("the input", &a.inp, a.n)?;
    check_output(a)?;
    if let Some(i) = &a.inits {
        holds("the initial values", i, rows)?;
    }
    if let Some(t) = &a.totals {
        holds("the totals", t, rows)?;
    }
    a.lookback
        .check(tiles, shape.layout, std::mem::size_of::<E>())?;
    let (i, o, st) = (a.inp.addr(), addr(a.out), a.lookback.state.addr());
    let (aggs, incls) = a.lookback.values();
    let (counter, epoch) = (a.lookback.counter.addr(), a.lookback.epoch);
    let (inits, totals) = (addr(a.inits), addr(a.totals));
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    let (row, offsets, count) = match a.rows {
        Rows::Each(row) => (row, 0, 0),
        Rows::Offsets { offsets, count } => (0, offsets.addr(), count),
    };
    let mut launch = s.launch_builder(f);
    launch.arg(&i).arg(&o).arg(&a.n);
    if segments {
        launch.arg(&offsets).arg(&count);
    } else {
        launch.arg(&row);
    }
    // SAFETY: kernel `(const in_t* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
    // ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch, int
    // exclusive, const ms_val* inits, ms_val init, int has_init, ms_val* totals)`, or for
    // `segment_scan` the same with `const ms_u64* offsets, ms_u64 rows` for `row`, with in_t =
    // In, ms_val = V and ms_elem = E (the caller's obligation); in holds n elements, out n
    // elements or is null (the kernel then writes nothing through it), the
    // state one slot per tile (and aggs/incls for the separate layout), the counter 16 words,
    // inits and totals (when set) one value per row, the offsets one more than the rows: all
    // checked above. The grid is exactly `tiles` blocks, so every tile number the counter
    // hands out is in range; `row` divides n, so every row the kernel indexes is below `rows`,
    // and with offsets the kernel reads offsets 0 to `rows` only and indexes rows below `rows`
    // only, whatever values the offsets hold (its cursor stops at the last row).
    unsafe {
        launch
            .arg(&tiles32)
            .arg(&st)
            .arg(&aggs)
            .arg(&incls)
            .arg(&counter)
            .arg(&epoch)
            .arg(&excl)
            .arg(&inits)
            .arg(&a.init)
            .arg(&has)
            .arg(&totals)
            .launch(config(tiles, shape.block, 0))
    }?;
    Ok(())
}

/// `row_staged` (rows of one length) or `segment_staged` (rows given by offsets) of a
/// [`KernelSet::RowStaged`] module for such rows, one block per tile, whose TMA form also
/// takes the input's tensor map and the launch's L2 prefetch plan (`tma`); through the input
/// map when `mapped`.
///
/// # Safety
/// `k` is such a module rendered for the segmented lifting whose elements are `E` (with
/// values `V`), and (when `mapped`) for an input map from `In` to `V`; unmapped, `In` is `V`.
/// Offsets ([`Rows::Offsets`]) that do not rise from 0 to `n` give unspecified values; the
/// kernel keeps every index within the offsets, the rows and the buffers whatever they hold.
pub(crate) unsafe fn row_staged<In: DeviceRepr, V: DeviceRepr, E>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    a: &RowScan<In, V, E>,
    tma: Option<(&TensorMap, PrefetchPlan)>,
) -> Result<()> {
    let KernelSet::RowStaged {
        shape,
        value_size,
        segments,
        ..
    } = k.set()
    else {
        return Err(Error::invalid(
            "internal: row_staged needs a staged row-scan module",
        ));
    };
    let entry = if segments {
        Entry::SegmentStaged
    } else {
        Entry::RowStaged
    };
    let f = k.function(entry, mapped)?;
    let smem = k.dynamic_smem(entry, mapped);
    // The argument after `n`: the row length, or the offsets (and then the row count after it).
    let (row, offsets) = match a.rows {
        Rows::Each(row) if !segments && row > 0 && a.n % row == 0 => (row, None),
        Rows::Offsets { offsets, count } if segments && count > 0 => {
            holds("the offsets", &offsets, count + 1)?;
            (count, Some(offsets.addr()))
        }
        rows => {
            return Err(Error::invalid(format!(
                "internal: a {} module cannot scan {} elements in rows {rows:?}",
                k.set().name(),
                a.n
            )))
        }
    };
    if std::mem::size_of::<V>() != value_size || std::mem::size_of::<In>() != value_size {
        return Err(Error::invalid(format!(
            "internal: a staged row scan of {value_size}-byte values over {}-byte inputs and values",
            std::mem::size_of::<In>()
        )));
    }
    let rows = a.rows.count(a.n);
    let tiles = a.n.div_ceil(shape.tile());
    let tiles32 = tiles32(tiles)?;
    holds("the input", &a.inp, a.n)?;
    check_output(a)?;
    if let Some(i) = &a.inits {
        holds("the initial values", i, rows)?;
    }
    if let Some(t) = &a.totals {
        holds("the totals", t, rows)?;
    }
    a.lookback
        .check(tiles, shape.layout, std::mem::size_of::<E>())?;
    if a.inp.addr() % 16 != 0 || a.out.is_some_and(|o| o.addr() % 16 != 0) {
        return Err(Error::invalid(
            "internal: the staged row scan needs 16-byte aligned buffers",
        ));
    }
    if tma.is_some() != shape.tma {
        return Err(Error::invalid(
            "internal: a tensor map goes with the TMA form of the staged row scan, and only with it",
        ));
    }
    let resident = k.resident(entry, mapped);
    let grid_order = grid_order(a.order, tiles, resident, "row scan")?;
    let (i, o, st) = (a.inp.addr(), addr(a.out), a.lookback.state.addr());
    let (aggs, incls) = a.lookback.values();
    let (counter, epoch) = (a.lookback.counter.addr(), a.lookback.epoch);
    let (inits, totals) = (addr(a.inits), addr(a.totals));
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    // SAFETY: kernel `(const in_t* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
    // ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch, int
    // grid_order, int exclusive, const ms_val* inits, ms_val init, int has_init, ms_val*
    // totals)` (`segment_staged` the same with `const ms_u64* offsets, ms_u64 rows` for
    // `row`, the offsets holding rows + 1 values, checked above) with in_t =
    // In, ms_val = V (both of the module's value size, checked above) and ms_elem = E (the
    // caller's obligation); in holds n elements, out n elements or is null (the kernel then
    // writes nothing through it), the state one slot per tile (and aggs
    // and incls for the separate layout), the counter 16 words (the zeroed tile counter, and
    // the pacing clock at word 8, which the TMA form reads and writes), inits and totals (when
    // set) one value per row: all checked above. The grid is exactly `tiles` blocks, so every
    // tile number the counter hands out, or every block index, is in range; `row` divides n,
    // and the offsets kernel reads only offsets 0 to rows and indexes inits and totals only
    // by rows below `rows`, whatever the offsets hold.
    // A cooperative launch has at most the module's resident count of blocks (checked above),
    // so every block is resident at once and no tile waits on one that is not (the driver
    // refuses a cooperative grid that cannot be); an ordinary launch in grid order relies on
    // blocks starting in index order (`TileOrder::BlockIndex`). `smem` bytes were allowed
    // by the function attribute set when the module was loaded, and in and out (when set)
    // are 16-byte aligned (checked above), as the cp.async copies and vector stores require.
    // The TMA form takes two more arguments, the tensor map of `in` (whole 128-byte rows of
    // its n elements; the kernel reads it only for full tiles, so a launch without one may
    // pass an unused map) and the prefetch plan (the kernel prefetches only full tiles below
    // n; a plan only changes which, never what is read into the tile, and its pacing only when
    // a copy is issued), passed exactly for that form (checked above).
    unsafe {
        let mut b = s.launch_builder(f);
        b.arg(&i).arg(&o).arg(&a.n);
        if let Some(offsets) = &offsets {
            b.arg(offsets);
        }
        b.arg(&row)
            .arg(&tiles32)
            .arg(&st)
            .arg(&aggs)
            .arg(&incls)
            .arg(&counter)
            .arg(&epoch)
            .arg(&grid_order)
            .arg(&excl)
            .arg(&inits)
            .arg(&a.init)
            .arg(&has)
            .arg(&totals);
        let plan;
        if let Some((map, p)) = tma {
            plan = p;
            b.arg(map).arg(&plan);
        }
        let cfg = config(tiles, shape.block, smem);
        if a.order == Numbering::Cooperative {
            b.launch_cooperative(cfg)
        } else {
            b.launch(cfg)
        }
    }?;
    Ok(())
}

/// The output of a row launch holds its `n` values, or there is none and the totals take the
/// rows' folds (a launch that wrote nothing would be a caller's mistake).
fn check_output<In, V, E>(a: &RowScan<In, V, E>) -> Result<()> {
    match &a.out {
        Some(out) => holds("the output", out, a.n),
        None if a.totals.is_none() => Err(Error::invalid(
            "internal: a row launch without an output needs the totals",
        )),
        None => Ok(()),
    }
}

/// A layout of lanes as the copy kernels take it (`ms_lanes` in `templates/lanes_copy.cu`).
#[repr(C)]
#[derive(Clone, Copy)]
struct LanesArg {
    outer: u64,
    len: u64,
    inner: u64,
    outer_stride: u64,
    stride: u64,
    inner_stride: u64,
}

// SAFETY: `#[repr(C)]`, six u64 in the order of `struct ms_lanes { ms_u64 outer, len, inner,
// outer_stride, stride, inner_stride; }` (48 bytes, 8-byte aligned on both sides).
unsafe impl DeviceRepr for LanesArg {}

impl LanesArg {
    fn of(l: &Lanes) -> Self {
        LanesArg {
            outer: l.outer as u64,
            len: l.len as u64,
            inner: l.inner as u64,
            outer_stride: l.outer_stride as u64,
            stride: l.stride as u64,
            inner_stride: l.inner_stride as u64,
        }
    }
}

/// `gather` (or `scatter`, when `back`) of a [`KernelSet::LanesCopy`] module: every element of
/// the lanes of `strided` to (from) `rows`, lane after lane; through the map's input type when
/// `mapped` (gathers only).
///
/// # Safety
/// `k` is such a module rendered for an operator whose elements are `T`, or (when `mapped`)
/// with an input map from `T`.
pub(crate) unsafe fn copy_lanes<T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    back: bool,
    strided: DevSlice<T>,
    rows: DevSlice<T>,
    lanes: &Lanes,
) -> Result<()> {
    lanes.validate()?;
    let f = if back {
        k.function(Entry::Scatter, false)?
    } else {
        k.function(Entry::Gather, mapped)?
    };
    let count = lanes.elements() as u64;
    holds("the strided buffer", &strided, lanes.span() as u64)?;
    holds("the rows", &rows, count)?;
    if count == 0 {
        return Ok(());
    }
    let (from, to) = if back {
        (rows.addr(), strided.addr())
    } else {
        (strided.addr(), rows.addr())
    };
    let l = LanesArg::of(lanes);
    let blocks = count.div_ceil(256).min(1 << 16);
    // SAFETY: kernel `(const T* from, T* to, ms_u64 count, ms_lanes l)` with T the module's
    // element (or map input) type (the caller's obligation); the lanes are valid and
    // non-overlapping, the strided buffer holds their span and the rows `count` elements
    // (checked above); the kernel strides over `count`.
    unsafe {
        s.launch_builder(f)
            .arg(&from)
            .arg(&to)
            .arg(&count)
            .arg(&l)
            .launch(config(blocks, 256, 0))
    }?;
    Ok(())
}
