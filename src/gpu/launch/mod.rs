//! Kernel launches: the only place the executor runs device code.
//!
//! Every entry point of the templates has one launcher here, an `unsafe fn` that takes the
//! loaded module ([`Loaded`]), looks its entry up by [`Entry`], and takes device memory as
//! typed [`DevSlice`]s whose lengths it checks against the launch before anything is queued. What
//! the types cannot show is the caller's obligation, stated in each `# Safety` section: that the
//! module was rendered for the element types the slices carry.

mod buffer;
mod columns;
mod rate;
mod rows;
mod shares;
mod single_pass;
mod tensor_map;
mod textbook;
mod tiled;

pub(crate) use buffer::{input, output, DevSlice};
pub(crate) use columns::{column_scan, column_tiles, ColumnScan};
pub(crate) use rate::combine_rate;
pub(crate) use rows::{copy_lanes, row_scan, row_staged, RowScan, Rows};
pub(crate) use shares::{share_scan, ShareScan};
pub(crate) use single_pass::{select, single_pass, LookbackState, Select, SinglePass};
pub(crate) use tensor_map::TensorMap;
pub(crate) use textbook::{add_carry, block_scan, reduce_tree, section, BlockScan};
pub(crate) use tiled::{
    reduce_rows, reduce_shares, reduce_staged, reduce_tiles, tile_scan, tile_totals, FoldLast,
    TileScan,
};

use super::module::Loaded;
use crate::codegen::Entry;
use crate::error::{Error, Result};
use crate::tuning::{Numbering, PrefetchPlan};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

/// Words of the tile counter the single-pass kernels take: the counter in the first 32-byte
/// sector, the TMA kernels' pacing clock in the second (`ms_pace` in `templates/lib/tma.cuh`).
pub(crate) const COUNTER_WORDS: u64 = 16;

/// The word of the counters where a one-launch reduction counts its finished blocks
/// (`ms_fold_last` in `templates/lib/fold_last.cuh`).
pub(crate) const DONE_WORD: u64 = 4;

// SAFETY: `PrefetchPlan` is `#[repr(C)]`, four u32 fields in the order of the kernels'
// `struct ms_prefetch { ms_u32 ahead, first_wave, pace_ps, paced; }` (16 bytes, 4-byte aligned
// on both sides), plain data that the driver copies into the parameter space.
unsafe impl DeviceRepr for PrefetchPlan {}

/// A 1-D launch of `blocks` blocks of `threads` threads with `smem` bytes of dynamic shared
/// memory.
fn config(blocks: u64, threads: u32, smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.clamp(1, i32::MAX as u64) as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: smem,
    }
}

/// An error unless `what` holds at least `need` elements.
fn holds<T>(what: &str, s: &DevSlice<T>, need: u64) -> Result<()> {
    if s.len() < need {
        return Err(Error::invalid(format!(
            "internal: {what} holds {} elements, the launch needs {need}",
            s.len()
        )));
    }
    Ok(())
}

/// The device address of an optional buffer (0: none, as the kernels read it).
fn addr<T>(s: Option<DevSlice<T>>) -> u64 {
    s.map_or(0, |s| s.addr())
}

/// The grid of a launch over `tiles` tiles: the kernels take the tile count in 32 bits.
fn tiles32(tiles: u64) -> Result<u32> {
    u32::try_from(tiles)
        .map_err(|_| Error::invalid(format!("internal: {tiles} tiles in one launch")))
}

/// The kernels' `grid_order` argument for a launch of `tiles` tiles of `what` numbered by
/// `order`, of which the module holds `resident` blocks at once: an error where a cooperative
/// launch would need more blocks than that.
fn grid_order(order: Numbering, tiles: u64, resident: u32, what: &str) -> Result<i32> {
    if order == Numbering::Cooperative && tiles > u64::from(resident) {
        return Err(Error::invalid(format!(
            "internal: a cooperative {what} needs at most {resident} tiles, not {tiles}"
        )));
    }
    Ok(i32::from(order.by_block()))
}

/// `monoscan_hold(ns)`: one thread that returns once `ns` nanoseconds of the GPU's global timer
/// have passed.
///
/// # Safety
/// `f` is `monoscan_hold` of the baseline module (`templates/baseline.cu`).
pub(crate) unsafe fn hold(s: &CudaStream, f: &CudaFunction, ns: u64) -> Result<()> {
    // SAFETY: kernel `(ms_u64 ns)` (the caller's obligation) reads only the global timer and
    // touches no memory; one block of one thread.
    unsafe { s.launch_builder(f).arg(&ns).launch(config(1, 1, 0)) }?;
    Ok(())
}

/// `monoscan_read_pass(p, n, sink)`: reads every 16-byte word of `words` once.
///
/// # Safety
/// `f` is `monoscan_read_pass` of the baseline module (`templates/baseline.cu`).
pub(crate) unsafe fn read_pass(
    s: &CudaStream,
    f: &CudaFunction,
    blocks: u32,
    words: DevSlice<[u32; 4]>,
    sink: DevSlice<u32>,
) -> Result<()> {
    holds("the sink", &sink, 1)?;
    let (p, n, k) = (words.addr(), words.len(), sink.addr());
    // SAFETY: kernel `(const ms_word* p, ms_u64 n, unsigned* sink)` (the caller's obligation);
    // `p` holds n 16-byte words and sink one u32 (checked above); the kernel strides over n.
    unsafe {
        s.launch_builder(f)
            .arg(&p)
            .arg(&n)
            .arg(&k)
            .launch(config(u64::from(blocks), 512, 0))
    }?;
    Ok(())
}

/// A new device buffer of `n` elements that the caller's next launches write in full (or whose
/// unwritten tail nothing reads).
pub(crate) fn alloc_for_writes<T: DeviceRepr>(
    s: &Arc<CudaStream>,
    n: usize,
) -> Result<CudaSlice<T>> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    // SAFETY: only used for outputs that the kernels queued next on this stream write at every
    // index before anything reads them (a scan writes all its outputs; `Gpu::compact` fills its
    // exact-size result by a copy of `count` elements, and its count is written by the last
    // tile or zeroed for an empty input; the combine-rate kernel writes one element per thread
    // of its grid, and nothing reads them), or whose unwritten tail nothing reads
    // (compaction's input-sized buffer, of which only the first `count` are copied out).
    unsafe { s.alloc::<T>(n) }.map_err(|e| super::device::alloc_error(s.context(), bytes, e))
}

/// A new device buffer of `n` elements, every one set to `value` by `k`'s `fill`.
///
/// # Safety
/// `k` was rendered for an operator whose element type (`ms_elem`) is `T`.
pub(crate) unsafe fn alloc_filled<T: DeviceRepr>(
    s: &Arc<CudaStream>,
    k: &Loaded,
    n: usize,
    value: T,
) -> Result<CudaSlice<T>> {
    let mut buf = alloc_for_writes::<T>(s, n)?;
    if n > 0 {
        let (out, _g) = output(&mut buf, s);
        // SAFETY: `k` fills `T`s (the caller's obligation); the buffer was allocated above.
        unsafe { fill(s, k, out, value) }?;
    }
    Ok(buf)
}

/// `fill(out, n, value)`: every element of `out` becomes `value`.
///
/// # Safety
/// `k` was rendered for an operator whose element type (`ms_elem`) is `T`.
pub(crate) unsafe fn fill<T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    out: DevSlice<T>,
    value: T,
) -> Result<()> {
    let f = k.function(Entry::Fill, false)?;
    let (o, n) = (out.addr(), out.len());
    let blocks = n.div_ceil(256).min(65_535);
    // SAFETY: kernel `(ms_elem* out, ms_u64 n, ms_elem value)` with ms_elem = T (the caller's
    // obligation); `out` holds n elements; the kernel strides over n.
    unsafe {
        s.launch_builder(f)
            .arg(&o)
            .arg(&n)
            .arg(&value)
            .launch(config(blocks, 256, 0))
    }?;
    Ok(())
}

/// `combine_pairs(a, b, out, n)`: `out[i] = a[i] ⊕ b[i]`, `out[n] = identity`.
///
/// # Safety
/// `k` is a [`KernelSet::Check`] module rendered for element type `T`.
pub(crate) unsafe fn combine_pairs<T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    a: DevSlice<T>,
    b: DevSlice<T>,
    out: DevSlice<T>,
) -> Result<()> {
    let f = k.function(Entry::CombinePairs, false)?;
    let n = a.len();
    holds("the right operands", &b, n)?;
    holds("the output", &out, n + 1)?;
    let (pa, pb, po) = (a.addr(), b.addr(), out.addr());
    let blocks = (n + 1).div_ceil(256).min(65_535);
    // SAFETY: kernel `(const ms_elem* a, const ms_elem* b, ms_elem* out, ms_u64 n)` with
    // ms_elem = T (the caller's obligation); a and b hold n elements, out n + 1 (checked above);
    // the kernel strides over n + 1.
    unsafe {
        s.launch_builder(f)
            .arg(&pa)
            .arg(&pb)
            .arg(&po)
            .arg(&n)
            .launch(config(blocks, 256, 0))
    }?;
    Ok(())
}
