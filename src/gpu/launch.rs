//! Kernel launches: the only place the executor runs device code.
//!
//! Every entry point of the templates has one typed launcher here. Device memory is passed as
//! raw addresses (`u64`), obtained from cudarc's `DevicePtr`/`DevicePtrMut`, whose guards keep
//! cudarc's stream synchronisation correct; the callers (`scan.rs`, `reduce.rs`) guarantee that
//! each address is valid for the element count they pass.

use crate::codegen::PrefetchPlan;
use crate::error::{Error, Result};
use cudarc::driver::{
    sys, CudaFunction, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

/// A 1-D launch of `blocks` blocks of `threads` threads.
fn config(blocks: u64, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.clamp(1, i32::MAX as u64) as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `monoscan_hold(ns)`: one thread that returns once `ns` nanoseconds of the GPU's global timer
/// have passed.
pub fn hold(s: &CudaStream, f: &CudaFunction, ns: u64) -> Result<()> {
    // SAFETY: kernel `(ms_u64 ns)` reads only the global timer and touches no memory; one
    // block of one thread.
    unsafe { s.launch_builder(f).arg(&ns).launch(config(1, 1)) }?;
    Ok(())
}

/// A new device buffer of `n` elements, every one set to `value` by the `fill` kernel `f`.
pub fn alloc_filled<T: DeviceRepr>(
    s: &Arc<CudaStream>,
    f: &CudaFunction,
    n: usize,
    value: T,
) -> Result<CudaSlice<T>> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    // SAFETY: the buffer is written in full by the `fill` launch queued right after on the same
    // stream, before anything can read it.
    let mut buf = unsafe { s.alloc::<T>(n) }
        .map_err(|e| super::device::alloc_error(s.context(), bytes, e))?;
    if n > 0 {
        let (ptr, _g) = buf.device_ptr_mut(s);
        fill(s, f, ptr, n as u64, value)?;
    }
    Ok(buf)
}

/// `fill(out, n, value)`: out[0..n) = value.
pub fn fill<T: DeviceRepr>(
    s: &CudaStream,
    f: &CudaFunction,
    out: u64,
    n: u64,
    value: T,
) -> Result<()> {
    let blocks = n.div_ceil(256).min(65_535);
    // SAFETY: the kernel is `(ms_elem* out, ms_u64 n, ms_elem value)`; `out` holds `n` elements
    // of the element type `T` (the layout static_asserts tie `T` to ms_elem).
    unsafe {
        s.launch_builder(f)
            .arg(&out)
            .arg(&n)
            .arg(&value)
            .launch(config(blocks, 256))
    }?;
    Ok(())
}

/// `reduce_tree(in, out, n)` over `blocks` blocks of `threads`.
pub fn reduce_tree(
    s: &CudaStream,
    f: &CudaFunction,
    threads: u32,
    inp: u64,
    out: u64,
    n: u64,
) -> Result<()> {
    let blocks = n.div_ceil(2 * u64::from(threads));
    // SAFETY: kernel `(const ms_elem* in, ms_elem* out, ms_u64 n)`; `in` holds n elements, `out`
    // one per block (ceil(n / 2*threads)); the grid is exactly that many blocks.
    unsafe {
        s.launch_builder(f)
            .arg(&inp)
            .arg(&out)
            .arg(&n)
            .launch(config(blocks, threads))
    }?;
    Ok(())
}

/// Arguments of the textbook block scans (`ks_scan`, `bk_scan`).
pub struct BlockScan<T> {
    /// Input (n elements).
    pub inp: u64,
    /// Output (n elements; may equal `inp`).
    pub out: u64,
    /// One total per section, or 0 for none.
    pub totals: u64,
    /// Elements.
    pub n: u64,
    /// Exclusive scan (else inclusive).
    pub exclusive: bool,
    /// The seed of block 0 when `has_init`.
    pub init: T,
    /// Whether `init` applies.
    pub has_init: bool,
}

/// `ks_scan`/`bk_scan` with `section` elements per block.
pub fn block_scan<T: DeviceRepr>(
    s: &CudaStream,
    f: &CudaFunction,
    threads: u32,
    section: u64,
    a: &BlockScan<T>,
) -> Result<()> {
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    // SAFETY: kernel `(const ms_elem* in, ms_elem* out, ms_elem* totals, ms_u64 n, int exclusive,
    // ms_elem init, int has_init)`; in/out hold n elements, totals (when non-zero) one per
    // section; the grid covers ceil(n / section) sections.
    unsafe {
        s.launch_builder(f)
            .arg(&a.inp)
            .arg(&a.out)
            .arg(&a.totals)
            .arg(&a.n)
            .arg(&excl)
            .arg(&a.init)
            .arg(&has)
            .launch(config(a.n.div_ceil(section), threads))
    }?;
    Ok(())
}

/// `add_carry(out, carries, n, section, skip_first)`.
#[allow(clippy::too_many_arguments)]
pub fn add_carry(
    s: &CudaStream,
    f: &CudaFunction,
    threads: u32,
    out: u64,
    carries: u64,
    n: u64,
    section: u64,
    skip_first: bool,
) -> Result<()> {
    let skip = i32::from(skip_first);
    let blocks = n.div_ceil(u64::from(threads)).min(1 << 20);
    // SAFETY: kernel `(ms_elem* out, const ms_elem* carries, ms_u64 n, ms_u64 section, int)`;
    // out holds n elements and carries one per section; the kernel strides over n.
    unsafe {
        s.launch_builder(f)
            .arg(&out)
            .arg(&carries)
            .arg(&n)
            .arg(&section)
            .arg(&skip)
            .launch(config(blocks, threads))
    }?;
    Ok(())
}

/// `reduce_tiles(in, partials, n, tiles_per_block)` over `blocks` blocks.
#[allow(clippy::too_many_arguments)]
pub fn reduce_tiles(
    s: &CudaStream,
    f: &CudaFunction,
    threads: u32,
    blocks: u64,
    inp: u64,
    partials: u64,
    n: u64,
    tiles_per_block: u64,
) -> Result<()> {
    // SAFETY: kernel `(const ms_elem* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block)`;
    // in holds n elements, partials one per block, and blocks * tiles_per_block covers n.
    unsafe {
        s.launch_builder(f)
            .arg(&inp)
            .arg(&partials)
            .arg(&n)
            .arg(&tiles_per_block)
            .launch(config(blocks, threads))
    }?;
    Ok(())
}

/// `tile_totals(in, totals, n)`, one block per tile.
pub fn tile_totals(
    s: &CudaStream,
    f: &CudaFunction,
    threads: u32,
    tiles: u64,
    inp: u64,
    totals: u64,
    n: u64,
) -> Result<()> {
    // SAFETY: kernel `(const ms_elem* in, ms_elem* totals, ms_u64 n)`; totals holds one element
    // per tile and the grid is one block per tile of n.
    unsafe {
        s.launch_builder(f)
            .arg(&inp)
            .arg(&totals)
            .arg(&n)
            .launch(config(tiles, threads))
    }?;
    Ok(())
}

/// Arguments of `tile_scan`.
pub struct TileScan<T> {
    /// Input (n elements).
    pub inp: u64,
    /// Output (n elements; may equal `inp`).
    pub out: u64,
    /// Elements.
    pub n: u64,
    /// One carry per tile (already including init), or 0.
    pub carries: u64,
    /// Exclusive scan (else inclusive).
    pub exclusive: bool,
    /// The seed when there are no carries and `has_init`.
    pub init: T,
    /// Whether `init` applies.
    pub has_init: bool,
    /// Where the last tile writes the total, or 0.
    pub total: u64,
}

/// `tile_scan`, one block per tile.
pub fn tile_scan<T: DeviceRepr>(
    s: &CudaStream,
    f: &CudaFunction,
    threads: u32,
    tiles: u64,
    a: &TileScan<T>,
) -> Result<()> {
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    // SAFETY: kernel `(const ms_elem* in, ms_elem* out, ms_u64 n, const ms_elem* carries,
    // int exclusive, ms_elem init, int has_init, ms_elem* total_out)`; in/out hold n elements,
    // carries (when set) one per tile, total (when set) one; one block per tile of n.
    unsafe {
        s.launch_builder(f)
            .arg(&a.inp)
            .arg(&a.out)
            .arg(&a.n)
            .arg(&a.carries)
            .arg(&excl)
            .arg(&a.init)
            .arg(&has)
            .arg(&a.total)
            .launch(config(tiles, threads))
    }?;
    Ok(())
}

/// Arguments of `scan_single_pass`.
pub struct SinglePass<T> {
    /// Input (n elements).
    pub inp: u64,
    /// Output (n elements; may equal `inp`).
    pub out: u64,
    /// Elements.
    pub n: u64,
    /// Tiles (= blocks).
    pub tiles: u32,
    /// Per-tile status words (layout of the kernel set), zeroed once at allocation.
    pub state: u64,
    /// Per-tile aggregates (separate layout), else 0.
    pub aggs: u64,
    /// Per-tile inclusive prefixes (separate layout), else 0.
    pub incls: u64,
    /// The tile counter, zero at launch.
    pub counter: u64,
    /// This launch's epoch (never reused while state from it may remain).
    pub epoch: u32,
    /// Exclusive scan (else inclusive).
    pub exclusive: bool,
    /// The seed when `has_init`.
    pub init: T,
    /// Whether `init` applies.
    pub has_init: bool,
    /// Where the last tile writes the total, or 0.
    pub total: u64,
}

/// The TMA's view of a staged scan's input (`ms_tma_tile` in `templates/tiled.cu`): rows of
/// 128 bytes, one per thread's run, in boxes of one tile's rows, with the 128-byte swizzle.
#[repr(C, align(64))]
pub struct TensorMap(sys::CUtensorMap);

// SAFETY: a tensor map is 128 plain bytes that the driver copies into the kernel's parameter
// space (`const __grid_constant__ ms_tensor_map`, 64-byte aligned on both sides).
unsafe impl DeviceRepr for TensorMap {}

// SAFETY: `PrefetchPlan` is `#[repr(C)]`, four u32 fields in the order of the kernels'
// `struct ms_prefetch { ms_u32 ahead, first_wave, pace_ps, paced; }` (16 bytes, 4-byte aligned
// on both sides), plain data that the driver copies into the parameter space.
unsafe impl DeviceRepr for PrefetchPlan {}

impl TensorMap {
    /// The map of `bytes` bytes at device address `addr` (16-byte aligned), in boxes of
    /// `rows_per_tile` rows. Only whole rows are mapped: a last, partial tile is not loaded
    /// through the map (the kernel copies it with `cp.async`).
    pub fn rows128(addr: u64, bytes: u64, rows_per_tile: u32) -> Result<Self> {
        let rows = bytes / 128;
        if addr % 16 != 0
            || rows == 0
            || rows > i32::MAX as u64
            || !(1..=256).contains(&rows_per_tile)
        {
            return Err(Error::invalid(format!(
                "no tensor map for {bytes} bytes at {addr:#x} in boxes of {rows_per_tile} rows: the address must be 16-byte aligned, the rows (128 bytes each) 1 to 2^31 - 1, the box 1 to 256 rows"
            )));
        }
        let dims = [128u64, rows];
        let strides = [128u64];
        let boxes = [128u32, rows_per_tile];
        let steps = [1u32, 1];
        let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
        // SAFETY: cuTensorMapEncodeTiled only writes the 128-byte map and reads the four arrays
        // (rank 2: two dimensions, one stride, two box sizes, two element steps), all alive
        // here; the global address is stored, not dereferenced. The checks above meet its
        // documented limits (16-byte aligned address, stride a multiple of 16, box sizes up to
        // 256, inner box 128 bytes for the 128-byte swizzle).
        unsafe {
            sys::cuTensorMapEncodeTiled(
                map.as_mut_ptr(),
                sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
                2,
                addr as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                steps.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
            .result()?;
        }
        // SAFETY: the call succeeded, so the map is initialised (and zeroed before).
        Ok(TensorMap(unsafe { map.assume_init() }))
    }
}

/// `scan_single_pass` (no dynamic shared memory) or `scan_staged` (`smem` bytes of tile
/// buffer), one block per tile. `tma` is, for the TMA form of `scan_staged` (a shape with
/// `tma`), the input's tensor map and the launch's L2 prefetch plan; else `None`.
pub fn single_pass<T: DeviceRepr>(
    s: &CudaStream,
    f: &CudaFunction,
    threads: u32,
    smem: u32,
    a: &SinglePass<T>,
    tma: Option<&(TensorMap, PrefetchPlan)>,
) -> Result<()> {
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    let cfg = LaunchConfig {
        shared_mem_bytes: smem,
        ..config(u64::from(a.tiles), threads)
    };
    // SAFETY: kernel `(const ms_elem* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles, ms_state*
    // state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch, int exclusive,
    // ms_elem init, int has_init, ms_elem* total_out)`; in/out hold n elements, state (and
    // aggs/incls for the separate layout) one entry per tile, counter 16 words (`Scratch`: the
    // zeroed tile counter, and the pacing clock at word 8, which the TMA form reads and
    // writes); the grid is exactly `tiles` blocks, so every tile number the counter hands out
    // is in range. For scan_staged, `smem` bytes were allowed by the function attribute set when the module was
    // loaded, and the caller checked that in and out are 16-byte aligned, as its cp.async
    // copies and vector stores require. The TMA form takes two more arguments, the tensor map
    // of `in` (whole 128-byte rows of its n elements) and the prefetch plan (the kernel
    // prefetches only full tiles below n; a plan only changes which, never what is read into
    // the tile, and its pacing only when a copy is issued), which the caller passes exactly
    // when the function comes from a shape with `tma`.
    unsafe {
        let mut b = s.launch_builder(f);
        b.arg(&a.inp)
            .arg(&a.out)
            .arg(&a.n)
            .arg(&a.tiles)
            .arg(&a.state)
            .arg(&a.aggs)
            .arg(&a.incls)
            .arg(&a.counter)
            .arg(&a.epoch)
            .arg(&excl)
            .arg(&a.init)
            .arg(&has)
            .arg(&a.total);
        if let Some((map, prefetch)) = tma {
            b.arg(map).arg(prefetch);
        }
        b.launch(cfg)
    }?;
    Ok(())
}

/// `combine_pairs(a, b, out, n)`: out[i] = a[i] ⊕ b[i], out[n] = identity.
pub fn combine_pairs(
    s: &CudaStream,
    f: &CudaFunction,
    a: u64,
    b: u64,
    out: u64,
    n: u64,
) -> Result<()> {
    let blocks = (n + 1).div_ceil(256).min(65_535);
    // SAFETY: kernel `(const ms_elem* a, const ms_elem* b, ms_elem* out, ms_u64 n)`; a and b
    // hold n elements, out n + 1; the kernel strides over n + 1.
    unsafe {
        s.launch_builder(f)
            .arg(&a)
            .arg(&b)
            .arg(&out)
            .arg(&n)
            .launch(config(blocks, 256))
    }?;
    Ok(())
}

/// A new device buffer of `n` elements that a following kernel writes in full.
pub fn alloc_for_writes<T: DeviceRepr>(s: &Arc<CudaStream>, n: usize) -> Result<CudaSlice<T>> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    // SAFETY: only used for outputs that the kernels queued next on this stream write at every
    // index before anything reads them (a scan writes all its outputs; `Gpu::compact` fills its
    // exact-size result by a copy of `count` elements, and its count is written by the last
    // tile or zeroed for an empty input), or whose unwritten tail nothing reads (compaction's
    // input-sized buffer, of which only the first `count` are copied out).
    unsafe { s.alloc::<T>(n) }.map_err(|e| super::device::alloc_error(s.context(), bytes, e))
}

/// Arguments of `select_mapped` and `select_staged`.
pub struct Select {
    /// Input (n elements of the map's input type).
    pub inp: u64,
    /// Output: room for n elements of the input type; the first `count` are written.
    pub out: u64,
    /// Elements.
    pub n: u64,
    /// Tiles (= blocks).
    pub tiles: u32,
    /// Per-tile status words (packed 64-bit layout), zeroed once at allocation.
    pub state: u64,
    /// The tile counter, zero at launch.
    pub counter: u64,
    /// This launch's epoch.
    pub epoch: u32,
    /// Where the last tile writes the count of kept elements (one u32).
    pub total: u64,
}

/// `select_mapped` (no dynamic shared memory) or `select_staged` (`smem` bytes of tile
/// buffer): stream compaction in one pass (`tiles` blocks of `threads`).
/// `prefetch` is the L2 prefetch plan of the TMA form of `select_staged` (a shape with `tma`),
/// else `None`.
pub fn select(
    s: &CudaStream,
    f: &CudaFunction,
    threads: u32,
    smem: u32,
    a: &Select,
    prefetch: Option<PrefetchPlan>,
) -> Result<()> {
    let none = 0u64;
    let cfg = LaunchConfig {
        shared_mem_bytes: smem,
        ..config(u64::from(a.tiles), threads)
    };
    // SAFETY: kernel `(const in_t* in, in_t* out, ms_u64 n, ms_u32 num_tiles, ms_state* state,
    // ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch, ms_elem* total_out)`; in
    // holds n elements and out has room for n (the kept ones are a subset), state one packed
    // word per tile (aggs and incls unused by that layout), counter 16 words (the zeroed tile
    // counter, and the TMA form's pacing clock at word 8), total one u32; the grid is exactly
    // `tiles` blocks, so every tile number handed out is in range. For select_staged, `smem` is
    // one tile of input (16 KiB at most, within the default 48 KiB) and the caller checked that
    // in is 16-byte aligned, as its cp.async and bulk copies require; its TMA form takes one
    // more argument, the prefetch plan, which the caller passes exactly for a shape with `tma`
    // (the kernel prefetches only full tiles below n).
    unsafe {
        let mut b = s.launch_builder(f);
        b.arg(&a.inp)
            .arg(&a.out)
            .arg(&a.n)
            .arg(&a.tiles)
            .arg(&a.state)
            .arg(&none)
            .arg(&none)
            .arg(&a.counter)
            .arg(&a.epoch)
            .arg(&a.total);
        if let Some(p) = &prefetch {
            b.arg(p);
        }
        b.launch(cfg)
    }?;
    Ok(())
}
