//! Launches of the share scan (`templates/share_scan.cu`): the shares' totals, then each share
//! scanned from its carry.

use super::{addr, config, holds, DevSlice, TensorMap};
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::gpu::module::Loaded;
use crate::tuning::policy::Shares;
use crate::tuning::TileShape;
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};

/// One share scan: its input and output, how the input splits into shares, and what the first
/// launch leaves for the second.
pub(crate) struct ShareScan<In, T> {
    /// Input (n elements, 16-byte aligned).
    pub inp: DevSlice<In>,
    /// Output (n elements, 16-byte aligned; may be the input).
    pub out: DevSlice<T>,
    /// The shares: `rows` whole ones, then the elements past them (row `rows`).
    pub shares: Shares,
    /// Each row's total: `rows + 1` elements.
    pub row_totals: DevSlice<T>,
    /// Each block's total: one element per block.
    pub partials: DevSlice<T>,
    /// Exclusive scan (else inclusive).
    pub exclusive: bool,
    /// The seed, where `has_init`.
    pub init: T,
    /// Whether `init` applies.
    pub has_init: bool,
    /// Where the scan's total goes.
    pub total: Option<DevSlice<T>>,
}

impl<In, T> ShareScan<In, T> {
    /// Blocks of both launches: every row and the tail's (where the whole shares leave
    /// elements over), in whole blocks of `block` threads.
    pub(crate) fn blocks(&self, block: u32) -> u64 {
        let bytes = self.inp.len() * std::mem::size_of::<In>() as u64;
        let tail = self.shares.rows * self.shares.share_bytes < bytes;
        (self.shares.rows + u64::from(tail)).div_ceil(u64::from(block))
    }
}

/// The module's shape and the launch's blocks, every buffer checked against `a`, and the
/// tensor maps of its whole shares in the input and in the output.
fn checked<In, T>(
    k: &Loaded,
    a: &ShareScan<In, T>,
) -> Result<(TileShape, u64, TensorMap, TensorMap)> {
    let KernelSet::ShareScan { shape, .. } = k.set() else {
        return Err(Error::invalid(
            "internal: a share scan needs a share-scan module",
        ));
    };
    let size = std::mem::size_of::<In>() as u64;
    let sh = &a.shares;
    let n = a.inp.len();
    let step = u64::from(TileShape::share_columns(size as usize)) * 128;
    let blocks = a.blocks(shape.block);
    if !shape.shares_fit(size as usize)
        || size != std::mem::size_of::<T>() as u64
        || u64::from(sh.steps) * step != sh.share_bytes
        || sh.rows.saturating_mul(sh.share_bytes) > n.saturating_mul(size)
        || n.saturating_mul(size) - sh.rows * sh.share_bytes >= sh.share_bytes
        || blocks > u64::from(u32::MAX)
        || a.inp.addr() % 16 != 0
        || a.out.addr() % 16 != 0
    {
        return Err(Error::invalid(format!(
            "internal: the share scan needs a shape it fits, elements of the element's size, whole steps per share, a tail shorter than a share and 16-byte aligned buffers ({sh:?})"
        )));
    }
    holds("the output", &a.out, n)?;
    holds("the row totals", &a.row_totals, sh.rows + 1)?;
    holds("the partials", &a.partials, blocks)?;
    if let Some(t) = &a.total {
        holds("the total", t, 1)?;
    }
    let map = TensorMap::rows(a.inp, sh.share_bytes, sh.rows, shape.tma_rows())?;
    let out_map = TensorMap::rows(a.out, sh.share_bytes, sh.rows, shape.tma_rows())?;
    Ok((shape, blocks, map, out_map))
}

/// `share_totals(in, row_totals, partials, n, rows, steps, map)`, then `share_scan(in, out,
/// row_totals, partials, n, rows, steps, exclusive, init, has_init, total_out, map,
/// out_map)`: thread `i` of the grid folds row `i` (bytes `[i * share, (i + 1) * share)` of
/// the input; row `rows` the elements past the whole shares) into `row_totals[i]`, each block
/// its rows into `partials[block]`; then each thread scans its row again from its carry into
/// the output. Through the input map when `mapped`.
///
/// # Safety
/// `k` is a [`KernelSet::ShareScan`] module rendered for element type `T`, and (when `mapped`)
/// for an input map from `In` of the same size; unmapped, `In` is `T`.
pub(crate) unsafe fn share_scan<In: DeviceRepr, T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    a: &ShareScan<In, T>,
) -> Result<()> {
    let totals = k.function(Entry::ShareTotals, mapped)?;
    let scan = k.function(Entry::ShareScan, mapped)?;
    let (shape, blocks, map, out_map) = checked(k, a)?;
    let smem = k
        .dynamic_smem(Entry::ShareTotals, mapped)
        .max(k.dynamic_smem(Entry::ShareScan, mapped));
    let (i, o, r, p, t) = (
        a.inp.addr(),
        a.out.addr(),
        a.row_totals.addr(),
        a.partials.addr(),
        addr(a.total),
    );
    let n = a.inp.len();
    let (rows, steps) = (a.shares.rows, a.shares.steps);
    // SAFETY: kernel `(const in_t* in, ms_elem* row_totals, ms_elem* partials, ms_u64 n,
    // ms_u64 rows, ms_u32 steps, const __grid_constant__ ms_tensor_map tin)` with in_t = In and
    // ms_elem = T of one size (the caller's obligation; the size divides each step, checked
    // above). The map covers exactly `rows` rows of `steps` steps of the input (TensorMap::rows
    // checked them against it); the elements past them, fewer than a share, are read from
    // `in` below n. row_totals holds rows + 1 elements and partials one per block, and the
    // blocks hold every row and the tail's (checked above). `smem` bytes were allowed by the
    // function attribute set when the module was loaded.
    unsafe {
        s.launch_builder(totals)
            .arg(&i)
            .arg(&r)
            .arg(&p)
            .arg(&n)
            .arg(&rows)
            .arg(&steps)
            .arg(&map)
            .launch(config(blocks, shape.block, smem))
    }?;
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    // SAFETY: kernel `(const in_t* in, ms_elem* out, const ms_elem* row_totals, const ms_elem*
    // partials, ms_u64 n, ms_u64 rows, ms_u32 steps, int exclusive, ms_elem init, int has_init,
    // ms_elem* total_out, const __grid_constant__ ms_tensor_map tin, const __grid_constant__
    // ms_tensor_map tout)`, types as above. It reads what the launch before it on this stream
    // wrote; the output holds n elements (16-byte aligned): its whole shares are written by
    // tensor stores through `out_map`, which covers exactly its first `rows` rows (as `map`
    // the input's), the elements past them below n by the tail's thread; total (when set)
    // holds one element; the grid and the shared memory are as above.
    unsafe {
        s.launch_builder(scan)
            .arg(&i)
            .arg(&o)
            .arg(&r)
            .arg(&p)
            .arg(&n)
            .arg(&rows)
            .arg(&steps)
            .arg(&excl)
            .arg(&a.init)
            .arg(&has)
            .arg(&t)
            .arg(&map)
            .arg(&out_map)
            .launch(config(blocks, shape.block, smem))
    }?;
    Ok(())
}
