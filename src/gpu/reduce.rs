//! The reduction strategies of a [`super::Scanner`]: the textbook tree reduction and the tiled
//! reduce.

use super::kernels::OpKernels;
use super::launch::{self, DevSlice, FoldLast, TensorMap};
use super::module::Loaded;
use super::scratch::{bytes_for, levels};
use crate::algorithm::Algorithm;
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::monoid::Monoid;
use crate::tuning::policy::{self, Shares};
use crate::tuning::{Purpose, TileShape};

/// Blocks of the tiled reduce per SM: enough to hide latency, few enough that the last
/// block's fold of their partials stays short.
const BLOCKS_PER_SM: u64 = 4;

/// Reduces `inp` (of `In`: the operator's elements, or a mapped scanner's input type) into
/// `out[0]`.
pub(super) fn reduce<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    algorithm: Algorithm,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
) -> Result<()> {
    let out = out
        .prefix(1)
        .ok_or_else(|| Error::invalid("the total buffer must hold at least one element"))?;
    match algorithm {
        Algorithm::KoggeStone | Algorithm::BrentKung if sc.mapped => Err(Error::invalid(
            "fused input maps run on the tiled reduce (auto, hierarchical, single-pass)",
        )),
        Algorithm::KoggeStone | Algorithm::BrentKung => {
            let inp = inp
                .retype::<M::Elem>()
                .ok_or_else(|| Error::invalid("internal: an unmapped reduce of another type"))?;
            tree(sc, inp, out)
        }
        _ => match sc.plan.reduce_set(algorithm, inp.len())? {
            KernelSet::StagedReduce(shape) if inp.addr() % 16 == 0 => {
                let shape = super::autotune::reduce_shape(sc, shape, inp.len(), |s| {
                    staged(sc, s, inp, out)
                })?;
                staged(sc, shape, inp, out)
            }
            _ => tiled(sc, inp, out),
        },
    }
}

/// The textbook tree reduction, launched until one value is left.
fn tree<M: Monoid>(
    sc: &OpKernels<M>,
    inp: DevSlice<M::Elem>,
    out: DevSlice<M::Elem>,
) -> Result<()> {
    let set = KernelSet::TreeReduce {
        block: sc.textbook_block()?,
    };
    let n = inp.len();
    if n == 0 {
        return sc.fill(set, out, sc.m.identity());
    }
    let k = sc.kernels(set)?;
    let per_block = 2 * u64::from(set.threads());
    let lv = levels(n, per_block);
    let stream = &sc.gpu.stream;
    let mut scratch = sc.gpu.lock_scratch();
    let mut carve = scratch.carve(
        stream,
        bytes_for(lv.iter().sum(), sc.op.op().elem_size, lv.len() as u64),
    )?;
    let mut src = inp;
    loop {
        let len = src.len();
        let blocks = len.div_ceil(per_block);
        let dst = if blocks == 1 {
            out
        } else {
            carve.take::<M::Elem>(blocks)?
        };
        // SAFETY: `k` is this scanner's tree-reduce module, rendered for M::Elem.
        unsafe { launch::reduce_tree(stream, &k, src, dst, len) }?;
        if blocks == 1 {
            return Ok(());
        }
        src = dst;
    }
}

/// The staged reduce, one launch: a grid of as many blocks as the device holds at once folds
/// contiguous runs of tiles into per-block partials, in order, each tile through shared-memory
/// stages; the last block to finish folds the partials.
fn staged<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    shape: TileShape,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
) -> Result<()> {
    let set = KernelSet::StagedReduce(shape);
    let n = inp.len();
    if n == 0 {
        return sc.fill(set, out, sc.m.identity());
    }
    let k = sc.kernels(set)?;
    let stream = &sc.gpu.stream;
    let tile = shape.tile();
    let size = sc.op.op().elem_size as u64;
    if shape.shares_fit(size as usize) && sc.plan.reduce_shares() && !sc.plan.changes_size() {
        let threads =
            u64::from(k.resident(Entry::ReduceShares, sc.mapped)) * u64::from(shape.block);
        let step = u64::from(TileShape::share_columns(size as usize)) * 128;
        if let Some(sh) = policy::shares(n * size, threads, shape.block, step) {
            return shares(sc, &k, shape, &sh, inp, out);
        }
    }
    let tiles = n.div_ceil(tile);
    // As many blocks as are resident at once.
    let resident = u64::from(k.resident(Entry::ReduceStaged, sc.mapped)).max(1);
    let blocks = resident.min(tiles).max(1);
    let per_block = tiles.div_ceil(blocks);
    let blocks = tiles.div_ceil(per_block);
    // The tensor form takes a tensor map of the input's 128-byte rows; it copies only full
    // tiles through it, so an input without one needs none.
    let map = if shape.tma && !shape.linear {
        Some(if n >= tile {
            TensorMap::rows128(inp, shape.tma_rows())?
        } else {
            TensorMap::unused()
        })
    } else {
        None
    };
    if blocks == 1 {
        // SAFETY: `k` is this scanner's staged-reduce module, rendered for M::Elem and (mapped)
        // its map's In, which the plan keeps to the element's size or, in the cp.async form, to
        // narrower inputs it widens (`Plan::fit`); `map` is a map of `inp`,
        // or (no full tile) one the kernel does not read.
        return unsafe {
            launch::reduce_staged(
                stream,
                &k,
                sc.mapped,
                1,
                inp,
                out,
                n,
                per_block,
                map.as_ref(),
                None,
            )
        };
    }
    let mut scratch = sc.gpu.lock_scratch();
    let done = scratch.done(stream)?;
    let mut carve = scratch.carve(stream, bytes_for(blocks, size as usize, 1))?;
    let partials = carve.take::<M::Elem>(blocks)?;
    let fold = FoldLast {
        parts: blocks,
        done,
        total: out,
    };
    // SAFETY: as above.
    unsafe {
        launch::reduce_staged(
            stream,
            &k,
            sc.mapped,
            blocks,
            inp,
            partials,
            n,
            per_block,
            map.as_ref(),
            Some(fold),
        )
    }
}

/// The staged reduce's share form: the bytes past the last whole share (fewer than a share)
/// are folded first, by one block of the per-tile kernel, into the last partial; then each
/// resident thread folds one contiguous share of the input into a partial per block, and
/// the last block to finish folds all the partials, in order.
fn shares<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    k: &Loaded,
    shape: TileShape,
    sh: &Shares,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
) -> Result<()> {
    let stream = &sc.gpu.stream;
    let size = sc.op.op().elem_size as u64;
    let n = inp.len();
    let tail_start = sh.rows * sh.share_bytes / size;
    let tail = n - tail_start;
    let count = sh.blocks + u64::from(tail > 0);
    let mut scratch = sc.gpu.lock_scratch();
    let done = scratch.done(stream)?;
    let mut carve = scratch.carve(stream, bytes_for(count, size as usize, 1))?;
    let partials = carve.take::<M::Elem>(count)?;
    if tail > 0 {
        let rest = inp
            .suffix(tail_start)
            .ok_or_else(|| Error::invalid("internal: the shares run past the input"))?;
        let slot = partials
            .suffix(sh.blocks)
            .ok_or_else(|| Error::invalid("internal: no partial for the tail"))?;
        let tiles = tail.div_ceil(shape.tile());
        // The tensor form copies the tail's full tiles through a map of it.
        let map = match (shape.linear, tail >= shape.tile()) {
            (true, _) => None,
            (false, true) => Some(TensorMap::rows128(rest, shape.tma_rows())?),
            (false, false) => Some(TensorMap::unused()),
        };
        // SAFETY: `k` is this scanner's staged-reduce module, rendered for M::Elem and
        // (mapped) its map's In, which the plan keeps to the element's size; `rest` starts a
        // whole number of shares (multiples of 128 bytes) into the 16-byte aligned input, and
        // `map` is a map of `rest` (or, no full tile, one the kernel does not read) exactly in
        // the tensor form.
        unsafe {
            launch::reduce_staged(
                stream,
                k,
                sc.mapped,
                1,
                rest,
                slot,
                tail,
                tiles,
                map.as_ref(),
                None,
            )
        }?;
    }
    let fold = FoldLast {
        parts: count,
        done,
        total: out,
    };
    // SAFETY: `k` is as above, and its shape fits the share form (checked by the caller).
    unsafe { launch::reduce_shares(stream, k, sc.mapped, inp, partials, sh, Some(fold)) }
}

/// The tiled reduce, one launch: a persistent grid folds contiguous runs of tiles into
/// per-block partials, in order; the last block to finish folds the partials.
fn tiled<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
) -> Result<()> {
    let shape = sc.shape(Purpose::Tiles)?;
    let set = KernelSet::TiledReduce(shape);
    let n = inp.len();
    if n == 0 {
        return sc.fill(set, out, sc.m.identity());
    }
    let k = sc.kernels(set)?;
    let tile = shape.tile();
    let max_blocks = (u64::from(sc.gpu.info.sm_count) * BLOCKS_PER_SM).min(tile);
    let stream = &sc.gpu.stream;
    // The first pass reads the caller's input (through the map, if any).
    let tiles = n.div_ceil(tile);
    if tiles == 1 {
        // SAFETY: `k` is this scanner's module, rendered for M::Elem and (mapped) its map's In.
        return unsafe { launch::reduce_tiles(stream, &k, sc.mapped, 1, inp, out, n, 1, None) };
    }
    let per_block = tiles.div_ceil(max_blocks);
    let blocks = tiles.div_ceil(per_block);
    let mut scratch = sc.gpu.lock_scratch();
    let done = scratch.done(stream)?;
    let mut carve = scratch.carve(stream, bytes_for(blocks, sc.op.op().elem_size, 1))?;
    let partials = carve.take::<M::Elem>(blocks)?;
    let fold = FoldLast {
        parts: blocks,
        done,
        total: out,
    };
    // SAFETY: as above.
    unsafe {
        launch::reduce_tiles(
            stream,
            &k,
            sc.mapped,
            blocks,
            inp,
            partials,
            n,
            per_block,
            Some(fold),
        )
    }
}
