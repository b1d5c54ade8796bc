//! Launches of the register-tile kernels: the tiled reduce, reduce-then-scan's tile totals, and
//! the one-tile scan.

use super::{addr, config, holds, DevSlice, TensorMap};
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::gpu::module::Loaded;
use crate::gpu::row_fold::RowPieces;
use crate::tuning::policy::Shares;
use crate::tuning::TileShape;
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};

/// The last block's fold of a one-launch reduction (`ms_fold_last` in
/// `templates/lib/fold_last.cuh`): the block that finishes last folds the first `parts`
/// partials, in order, into `total[0]`.
#[derive(Clone, Copy)]
pub(crate) struct FoldLast<T> {
    /// Partials to fold (the launch's own, and any written before it).
    pub parts: u64,
    /// The count of finished blocks: zero at launch ([`crate::gpu::scratch::Scratch::done`]).
    pub done: DevSlice<u32>,
    /// Where the total goes.
    pub total: DevSlice<T>,
}

/// The kernel arguments `(ms_u32 parts, ms_u32* done, ms_elem* total_out)` of `fold` (all zero:
/// no fold), checked against the launch's partials.
fn fold_args<T>(fold: Option<FoldLast<T>>, partials: &DevSlice<T>) -> Result<(u32, u64, u64)> {
    let Some(f) = fold else {
        return Ok((0, 0, 0));
    };
    holds("the folded partials", partials, f.parts)?;
    holds("the reduce's count", &f.done, 1)?;
    holds("the total", &f.total, 1)?;
    let parts = u32::try_from(f.parts)
        .map_err(|_| Error::invalid(format!("internal: {} partials in one fold", f.parts)))?;
    Ok((parts, f.done.addr(), f.total.addr()))
}

/// `reduce_tiles(in, partials, n, tiles_per_block, parts, done, total_out)` over `blocks`
/// blocks, each folding a run of `tiles_per_block` tiles into `partials[block]`, the last
/// to finish then folding the partials into the total when `fold` is given; through the
/// input map when `mapped`.
///
/// # Safety
/// `k` is a [`KernelSet::TiledReduce`] module rendered for element type `T`, and (when
/// `mapped`) for an input map from `In`; unmapped, `In` is `T`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_tiles<In: DeviceRepr, T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    blocks: u64,
    inp: DevSlice<In>,
    partials: DevSlice<T>,
    n: u64,
    tiles_per_block: u64,
    fold: Option<FoldLast<T>>,
) -> Result<()> {
    let f = k.function(Entry::ReduceTiles, mapped)?;
    let KernelSet::TiledReduce(shape) = k.set() else {
        return Err(Error::invalid(
            "internal: reduce_tiles needs a tiled-reduce module",
        ));
    };
    holds("the input", &inp, n)?;
    holds("the partials", &partials, blocks)?;
    if blocks
        .saturating_mul(tiles_per_block)
        .saturating_mul(shape.tile())
        < n
    {
        return Err(Error::invalid(
            "internal: the reduce's grid does not cover its input",
        ));
    }
    let (parts, done, total) = fold_args(fold, &partials)?;
    let (i, p) = (inp.addr(), partials.addr());
    // SAFETY: kernel `(const in_t* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block,
    // ms_u32 parts, ms_u32* done, ms_elem* total_out)` with in_t = In and ms_elem = T (the
    // caller's obligation); in holds n elements, partials one per block, and blocks x
    // tiles_per_block tiles cover n; with a fold, partials hold `parts`, done and total one
    // element each (all checked above; a null total_out folds nothing).
    unsafe {
        s.launch_builder(f)
            .arg(&i)
            .arg(&p)
            .arg(&n)
            .arg(&tiles_per_block)
            .arg(&parts)
            .arg(&done)
            .arg(&total)
            .launch(config(blocks, shape.block, 0))
    }?;
    Ok(())
}

/// `reduce_rows(in, out, rows, len, pieces, piece_len)` over `blocks` blocks: each warp folds
/// whole pieces of `pieces.rows` contiguous rows of `pieces.len` elements, piece `p` of row `r`
/// into `out[r * pieces.pieces + p]`; through the input map when `mapped`.
///
/// # Safety
/// `k` is a [`KernelSet::TiledReduce`] module rendered for element type `T`, and (when
/// `mapped`) for an input map from `In`; unmapped, `In` is `T`.
pub(crate) unsafe fn reduce_rows<In: DeviceRepr, T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    blocks: u64,
    inp: DevSlice<In>,
    out: DevSlice<T>,
    pieces: &RowPieces,
) -> Result<()> {
    let f = k.function(Entry::ReduceRows, mapped)?;
    let KernelSet::TiledReduce(shape) = k.set() else {
        return Err(Error::invalid(
            "internal: reduce_rows needs a tiled-reduce module",
        ));
    };
    let RowPieces {
        rows,
        len,
        pieces: per_row,
        piece_len,
    } = *pieces;
    let warp_tile = 32 * u64::from(shape.items);
    if !pieces.covers_rows(warp_tile) {
        return Err(Error::invalid(format!(
            "internal: pieces of whole warp tiles ({warp_tile} elements) that cover each row, none empty ({pieces:?})"
        )));
    }
    holds("the input", &inp, rows.saturating_mul(len))?;
    holds("the folds", &out, rows.saturating_mul(per_row))?;
    let (i, o) = (inp.addr(), out.addr());
    // SAFETY: kernel `(const in_t* in, ms_elem* out, ms_u64 rows, ms_u64 len, ms_u64 pieces,
    // ms_u64 piece_len)` with in_t = In and ms_elem = T (the caller's obligation); in holds
    // rows x len elements and out one per piece, every piece within its row (checked above);
    // the warps of any grid stride over the pieces.
    unsafe {
        s.launch_builder(f)
            .arg(&i)
            .arg(&o)
            .arg(&rows)
            .arg(&len)
            .arg(&per_row)
            .arg(&piece_len)
            .launch(config(blocks, shape.block, 0))
    }?;
    Ok(())
}

/// `reduce_staged(in, partials, n, tiles_per_block, parts, done, total_out)` over `blocks`
/// blocks, each folding a run of `tiles_per_block` tiles into `partials[block]` through its
/// shared-memory stages, the last to finish then folding the partials into the total when
/// `fold` is given; the tensor form also takes the input's tensor map (`map`); through the
/// input map when `mapped`.
///
/// # Safety
/// `k` is a [`KernelSet::StagedReduce`] module rendered for element type `T`, and (when
/// `mapped`) for an input map from `In`, of the same size or (in the cp.async form) narrower;
/// unmapped, `In` is `T`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_staged<In: DeviceRepr, T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    blocks: u64,
    inp: DevSlice<In>,
    partials: DevSlice<T>,
    n: u64,
    tiles_per_block: u64,
    map: Option<&TensorMap>,
    fold: Option<FoldLast<T>>,
) -> Result<()> {
    let f = k.function(Entry::ReduceStaged, mapped)?;
    let KernelSet::StagedReduce(shape) = k.set() else {
        return Err(Error::invalid(
            "internal: reduce_staged needs a staged-reduce module",
        ));
    };
    let smem = k.dynamic_smem(Entry::ReduceStaged, mapped);
    holds("the input", &inp, n)?;
    holds("the partials", &partials, blocks)?;
    if blocks
        .saturating_mul(tiles_per_block)
        .saturating_mul(shape.tile())
        < n
    {
        return Err(Error::invalid(
            "internal: the reduce's grid does not cover its input",
        ));
    }
    let (in_size, size) = (std::mem::size_of::<In>(), std::mem::size_of::<T>());
    let widens = mapped && crate::tuning::policy::staged_widening(in_size, size, &shape);
    if inp.addr() % 16 != 0 || (in_size != size && !widens) {
        return Err(Error::invalid(
            "internal: the staged reduce reads 16-byte aligned elements of the element's size, or narrower inputs it widens by cp.async",
        ));
    }
    if map.is_some() != (shape.tma && !shape.linear) {
        return Err(Error::invalid(
            "internal: a tensor map goes with the tensor form of the staged reduce, and only with it",
        ));
    }
    let (parts, done, total) = fold_args(fold, &partials)?;
    let (i, p) = (inp.addr(), partials.addr());
    // SAFETY: kernel `(const in_t* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block,
    // ms_u32 parts, ms_u32* done, ms_elem* total_out)`, in the tensor form with a last `const
    // __grid_constant__ ms_tensor_map` (passed exactly for that form, checked above: a map of
    // `in`'s whole 128-byte rows, of which the kernel copies only full tiles below n), with
    // in_t = In and ms_elem = T (the caller's obligation: narrower inputs only in the cp.async
    // form, checked above, whose stages `smem` sizes for In); in holds n elements and is 16-byte
    // aligned, as the kernel's cp.async and bulk copies need, partials one per block, and
    // blocks x tiles_per_block tiles cover n; with a fold, partials hold `parts`, done and
    // total one element each (all checked above; a null total_out folds nothing). `smem` bytes
    // (the stages, the block state and the mbarriers) were allowed by the function attribute
    // set when the module was loaded.
    unsafe {
        let mut b = s.launch_builder(f);
        b.arg(&i)
            .arg(&p)
            .arg(&n)
            .arg(&tiles_per_block)
            .arg(&parts)
            .arg(&done)
            .arg(&total);
        if let Some(map) = map {
            b.arg(map);
        }
        b.launch(config(blocks, shape.block, smem))
    }?;
    Ok(())
}

/// `reduce_shares(partials, rows, steps, parts, done, total_out, map)`: the staged reduce's
/// share form over `shares.blocks` blocks, thread `i` folding share `i` (bytes
/// `[i * share, (i + 1) * share)` of `inp`) and each block its threads' folds into
/// `partials[block]`, the last to finish then folding the partials into the total when `fold`
/// is given; through the input map when `mapped`. The tensor map of the shares is built here
/// from `inp` and `shares`. The bytes past the last whole share are not read.
///
/// # Safety
/// `k` is a [`KernelSet::StagedReduce`] module rendered for
/// element type `T`, and (when `mapped`) for an input map from `In` of the same size;
/// unmapped, `In` is `T`.
pub(crate) unsafe fn reduce_shares<In: DeviceRepr, T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    inp: DevSlice<In>,
    partials: DevSlice<T>,
    shares: &Shares,
    fold: Option<FoldLast<T>>,
) -> Result<()> {
    let f = k.function(Entry::ReduceShares, mapped)?;
    let KernelSet::StagedReduce(shape) = k.set() else {
        return Err(Error::invalid(
            "internal: reduce_shares needs a staged-reduce module",
        ));
    };
    let smem = k.dynamic_smem(Entry::ReduceShares, mapped);
    holds("the partials", &partials, shares.blocks)?;
    let size = std::mem::size_of::<In>() as u64;
    let step = u64::from(TileShape::share_columns(size as usize)) * 128;
    if !shape.shares_fit(size as usize)
        || size != std::mem::size_of::<T>() as u64
        || u64::from(shares.steps) * step != shares.share_bytes
        || shares.blocks.saturating_mul(u64::from(shape.block)) < shares.rows
        || shares.blocks > u64::from(u32::MAX)
    {
        return Err(Error::invalid(format!(
            "internal: the share form needs a shape it fits, elements of the element's size, whole steps per share and blocks for every share ({shares:?})"
        )));
    }
    // Whole shares only, within the input (checked by the map).
    let map = TensorMap::rows(inp, shares.share_bytes, shares.rows, shape.tma_rows())?;
    let (parts, done, total) = fold_args(fold, &partials)?;
    let p = partials.addr();
    // SAFETY: kernel `(ms_elem* partials, ms_u64 rows, ms_u32 steps, ms_u32 parts, ms_u32*
    // done, ms_elem* total_out, const __grid_constant__ ms_tensor_map tin)` with ms_elem = T
    // and the map's bytes read as in_t = In (the caller's obligation; both of one size, which
    // divides each step, checked above). The map covers exactly `rows` rows of `steps` steps
    // of `inp` (TensorMap::rows checked them against the input), of which the kernel reads the
    // 128-byte columns of steps below `steps`; rows past `rows` arrive zero-filled and are
    // left out. The shape fits the share form, whose module entry is the full kernel (it traps
    // only for shapes that do not fit). partials holds one element per block, and the blocks
    // hold every row; with a fold, partials hold `parts`, done and total one element each (all
    // checked above; a null total_out folds nothing). `smem` bytes were allowed by the function
    // attribute set when the module was loaded.
    unsafe {
        s.launch_builder(f)
            .arg(&p)
            .arg(&shares.rows)
            .arg(&shares.steps)
            .arg(&parts)
            .arg(&done)
            .arg(&total)
            .arg(&map)
            .launch(config(shares.blocks, shape.block, smem))
    }?;
    Ok(())
}

/// `tile_totals(in, totals, n)`: the total of each tile, one block per tile; through the input
/// map when `mapped`.
///
/// # Safety
/// `k` is a [`KernelSet::ReduceThenScan`] module (or its form from the end) rendered for
/// element type `T`, and (when `mapped`) for an input map from `In`; unmapped, `In` is `T`.
pub(crate) unsafe fn tile_totals<In: DeviceRepr, T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    inp: DevSlice<In>,
    totals: DevSlice<T>,
    n: u64,
) -> Result<()> {
    let f = k.function(Entry::TileTotals, mapped)?;
    let (KernelSet::ReduceThenScan(shape) | KernelSet::ReduceThenScanReverse(shape)) = k.set()
    else {
        return Err(Error::invalid(
            "internal: tile_totals needs a reduce-then-scan module",
        ));
    };
    let tiles = n.div_ceil(shape.tile());
    holds("the input", &inp, n)?;
    holds("the totals", &totals, tiles)?;
    let (i, t) = (inp.addr(), totals.addr());
    // SAFETY: kernel `(const in_t* in, ms_elem* totals, ms_u64 n)` with in_t = In and ms_elem =
    // T (the caller's obligation); in holds n elements, totals one per tile (checked above); the
    // grid is one block per tile of n.
    unsafe {
        s.launch_builder(f)
            .arg(&i)
            .arg(&t)
            .arg(&n)
            .launch(config(tiles, shape.block, 0))
    }?;
    Ok(())
}

/// Arguments of `tile_scan`.
pub(crate) struct TileScan<In, T> {
    /// Input (n elements).
    pub inp: DevSlice<In>,
    /// Output (n elements; may be the input).
    pub out: DevSlice<T>,
    /// Elements.
    pub n: u64,
    /// One carry per tile (already including init).
    pub carries: Option<DevSlice<T>>,
    /// Exclusive scan (else inclusive).
    pub exclusive: bool,
    /// The seed when there are no carries and `has_init`.
    pub init: T,
    /// Whether `init` applies.
    pub has_init: bool,
    /// Where the last tile writes the total.
    pub total: Option<DevSlice<T>>,
}

/// `tile_scan`, one block per tile (of the module's tile shape); through the input map when
/// `mapped`.
///
/// # Safety
/// `k` is a [`KernelSet::ReduceThenScan`] module (or its form from the end) or a
/// [`KernelSet::OneTile`] module rendered for element type `T`, and (when `mapped`) for an
/// input map from `In`; unmapped, `In` is `T`.
pub(crate) unsafe fn tile_scan<In: DeviceRepr, T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    a: &TileScan<In, T>,
) -> Result<()> {
    let f = k.function(Entry::TileScan, mapped)?;
    let shape = match k.set() {
        KernelSet::ReduceThenScan(s)
        | KernelSet::ReduceThenScanReverse(s)
        | KernelSet::OneTile(s) => s,
        other => {
            return Err(Error::invalid(format!(
                "internal: tile_scan is not in {}",
                other.name()
            )))
        }
    };
    let tiles = a.n.div_ceil(shape.tile());
    holds("the input", &a.inp, a.n)?;
    holds("the output", &a.out, a.n)?;
    if let Some(c) = &a.carries {
        holds("the carries", c, tiles)?;
    }
    if let Some(t) = &a.total {
        holds("the total", t, 1)?;
    }
    let (i, o, c, t) = (a.inp.addr(), a.out.addr(), addr(a.carries), addr(a.total));
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    // SAFETY: kernel `(const in_t* in, ms_elem* out, ms_u64 n, const ms_elem* carries, int
    // exclusive, ms_elem init, int has_init, ms_elem* total_out)` with in_t = In and ms_elem = T
    // (the caller's obligation); in and out hold n elements, carries (when set) one per tile,
    // total (when set) one (checked above); one block per tile of n.
    unsafe {
        s.launch_builder(f)
            .arg(&i)
            .arg(&o)
            .arg(&a.n)
            .arg(&c)
            .arg(&excl)
            .arg(&a.init)
            .arg(&has)
            .arg(&t)
            .launch(config(tiles, shape.block, 0))
    }?;
    Ok(())
}
