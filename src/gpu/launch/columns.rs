//! The launch of the column scan: every column of a row-major array (or of several, a stride
//! apart, with rows a pitch apart) scanned down, one block per tile of rows.

use super::{addr, config, grid_order, holds, tiles32, DevSlice, LookbackState};
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::gpu::module::Loaded;
use crate::tuning::{Numbering, PrefetchPlan};
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};

/// Arguments of `column_scan`: `groups` arrays of `rows` rows of the module's columns, of `T`;
/// lane `o * columns + j` is column `j` of array `o`, whose element `k` sits at
/// `o * group_stride + k * pitch + j`.
pub(crate) struct ColumnScan<T> {
    /// Input (every element of every lane at its offset).
    pub inp: DevSlice<T>,
    /// Output (the same layout; may be the input); `None` folds each column into its total
    /// and writes nothing else (the totals are then required).
    pub out: Option<DevSlice<T>>,
    /// Rows.
    pub rows: u64,
    /// Elements between the starts of consecutive rows (at least the columns).
    pub pitch: u64,
    /// Arrays of columns (at least 1).
    pub groups: u64,
    /// Elements between the starts of consecutive arrays (any, with `groups` 1).
    pub group_stride: u64,
    /// The look-back state: [`ColumnShape::slots`](crate::tuning::ColumnShape::slots) entries
    /// per tile.
    pub lookback: LookbackState<T>,
    /// Exclusive scans (else inclusive).
    pub exclusive: bool,
    /// One initial value per lane.
    pub inits: Option<DevSlice<T>>,
    /// The initial value of every column when `has_init` and there are no `inits`.
    pub init: T,
    /// Whether `init` applies.
    pub has_init: bool,
    /// One total per lane.
    pub totals: Option<DevSlice<T>>,
    /// How the blocks number their tiles: claimed from the counter, or block b on tile b, in a
    /// cooperative launch of at most the module's resident blocks or an ordinary one.
    pub order: Numbering,
}

/// The tiles of a column scan of `groups` arrays of `rows` rows (chunks of rows times arrays
/// times strips) and the look-back entries they need, each within what a launch numbers
/// (2^32 - 1).
pub(crate) fn column_tiles(k: &Loaded, rows: u64, groups: u64, size: usize) -> Result<(u64, u64)> {
    let KernelSet::ColumnScan { shape, .. } = k.set() else {
        return Err(Error::invalid(
            "internal: column_tiles needs a column-scan module",
        ));
    };
    let tiles = rows
        .div_ceil(shape.tile_rows())
        .max(1)
        .saturating_mul(groups.max(1))
        .saturating_mul(shape.strips());
    let entries = tiles.saturating_mul(shape.slots(size));
    if entries > u64::from(u32::MAX) {
        return Err(Error::invalid(format!(
            "{groups} x {rows} rows of {} columns need {tiles} tiles; a column scan handles at most {} tiles",
            shape.columns,
            u64::from(u32::MAX) / shape.slots(size)
        )));
    }
    Ok((tiles, entries))
}

/// `column_scan` of a [`KernelSet::ColumnScan`] module, one block per tile; the TMA form also
/// takes the launch's pacing plan (`plan`, exactly for that form).
///
/// # Safety
/// `k` is such a module rendered for element type `T`.
pub(crate) unsafe fn column_scan<T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    a: &ColumnScan<T>,
    plan: Option<PrefetchPlan>,
) -> Result<()> {
    let KernelSet::ColumnScan { shape, .. } = k.set() else {
        return Err(Error::invalid(
            "internal: column_scan needs a column-scan module",
        ));
    };
    let f = k.function(Entry::ColumnScan, false)?;
    let smem = k.dynamic_smem(Entry::ColumnScan, false);
    let size = std::mem::size_of::<T>();
    let columns = u64::from(shape.columns);
    if a.pitch < columns || a.groups == 0 {
        return Err(Error::invalid(format!(
            "internal: a column scan of {columns} columns with rows {} apart in {} arrays",
            a.pitch, a.groups
        )));
    }
    let overflow = || {
        Error::invalid(format!(
            "{} arrays of {} rows {} apart overflow",
            a.groups, a.rows, a.pitch
        ))
    };
    // One past the last element: the last array's last row's last column.
    let span = match a.rows {
        0 => 0,
        rows => (a.groups - 1)
            .checked_mul(a.group_stride)
            .and_then(|g| (rows - 1).checked_mul(a.pitch)?.checked_add(g))
            .and_then(|e| e.checked_add(columns))
            .ok_or_else(overflow)?,
    };
    let lanes = a.groups.checked_mul(columns).ok_or_else(overflow)?;
    let (tiles, entries) = column_tiles(k, a.rows, a.groups, size)?;
    let tiles32 = tiles32(tiles)?;
    let groups32 = u32::try_from(a.groups).map_err(|_| overflow())?;
    holds("the input", &a.inp, span)?;
    match &a.out {
        Some(out) => holds("the output", out, span)?,
        None if a.totals.is_none() => {
            return Err(Error::invalid(
                "internal: a column scan without an output needs the totals",
            ))
        }
        None => {}
    }
    if let Some(i) = &a.inits {
        holds("the initial values", i, lanes)?;
    }
    if let Some(t) = &a.totals {
        holds("the totals", t, lanes)?;
    }
    a.lookback.check(entries, shape.layout, size)?;
    if plan.is_some() != shape.tma {
        return Err(Error::invalid(
            "internal: a pacing plan goes with the TMA form of the column scan, and only with it",
        ));
    }
    let resident = k.resident(Entry::ColumnScan, false);
    let grid_order = grid_order(a.order, tiles, resident, "column scan")?;
    let groups_aligned = a.groups == 1 || a.group_stride.saturating_mul(size as u64) % 16 == 0;
    let out_aligned = a.out.is_none_or(|o| o.addr() % 16 == 0);
    let aligned = i32::from(a.inp.addr() % 16 == 0 && out_aligned && groups_aligned);
    let (i, o, st) = (a.inp.addr(), addr(a.out), a.lookback.state.addr());
    let (aggs, incls) = a.lookback.values();
    let (counter, epoch) = (a.lookback.counter.addr(), a.lookback.epoch);
    let (inits, totals) = (addr(a.inits), addr(a.totals));
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    // SAFETY: kernel `(const ms_elem* in, ms_elem* out, ms_u64 rows, ms_u64 pitch, ms_u64
    // group_stride, ms_u32 lane_groups, ms_u32 num_tiles, ms_state* state, ms_elem* aggs,
    // ms_elem* incls, ms_u32* counter, ms_u32 epoch, int grid_order, int exclusive, const
    // ms_elem* inits, ms_elem init, int has_init, ms_elem* totals, int aligned)` with ms_elem =
    // T (the caller's obligation); in and out (out may be null: the kernel then writes
    // nothing through it) hold every element of the groups' rows, a pitch
    // of at least the columns apart (so a tile writes only its own rows' columns), the state
    // (and aggs and incls for the separate layout) `entries` entries, the slots of every tile,
    // the counter its 16 words, inits and totals (when set) one element per lane: all checked
    // above, as is that every entry index fits the kernel's 32 bits. Distinct groups do not
    // share elements: the caller's layout is validated ([`crate::lanes::Lanes::validate`]).
    // The grid is exactly `tiles` blocks, so every tile number the counter hands out, or every
    // block index, is in range. A tile waits only on tiles numbered before it: a cooperative
    // launch has at most the module's resident count of blocks (checked above), so every block
    // is resident at once (the driver refuses a cooperative grid that cannot be); an ordinary
    // launch in grid order relies on blocks starting in index order
    // (`TileOrder::BlockIndex`). `aligned` is set
    // only when both buffers and every group start on 16 bytes, as the bulk copy and the
    // 16-byte stores of full tiles require (the kernel also checks the pitch for its 16-byte
    // row copies); `smem` bytes were allowed by the function attribute set when the
    // module was loaded. The TMA form takes one more argument, the plan (16 bytes by value; its
    // pacing only delays a tile's copy, using the counter's second sector as the launch's
    // clock), passed exactly for that form (checked above).
    unsafe {
        let mut b = s.launch_builder(f);
        b.arg(&i)
            .arg(&o)
            .arg(&a.rows)
            .arg(&a.pitch)
            .arg(&a.group_stride)
            .arg(&groups32)
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
            .arg(&totals)
            .arg(&aligned);
        let plan_arg;
        if let Some(p) = plan {
            plan_arg = p;
            b.arg(&plan_arg);
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
