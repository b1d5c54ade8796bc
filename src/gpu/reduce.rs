//! The reduction strategies of a [`super::Scanner`]: the textbook tree reduction and the tiled
//! reduce.

use super::kernels::OpKernels;
use super::launch::{self, DevSlice, TensorMap};
use super::scratch::{bytes_for, levels};
use crate::algorithm::Algorithm;
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::monoid::Monoid;
use crate::tuning::{Purpose, TileShape};

/// Blocks of the tiled reduce per SM: enough to hide latency, few enough that the second pass
/// fits one tile.
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
        _ => match sc.plan.reduce_set(algorithm)? {
            KernelSet::StagedReduce(shape) if inp.addr() % 16 == 0 => staged(sc, shape, inp, out),
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

/// The staged reduce: a grid of as many blocks as the device holds at once folds contiguous
/// runs of tiles into per-block partials, in order, each tile through shared-memory stages;
/// then the partials (one tile or less) are folded by one block of the same kernel.
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
    let tiles = n.div_ceil(tile);
    // As many blocks as are resident at once, and fewer partials than one tile holds (so that
    // their pass is one partial tile, copied by cp.async).
    let resident = u64::from(k.resident(Entry::ReduceStaged, sc.mapped)).max(1);
    let blocks = resident.min(tile - 1).min(tiles).max(1);
    let per_block = tiles.div_ceil(blocks);
    let blocks = tiles.div_ceil(per_block);
    let size = sc.op.op().elem_size as u64;
    let mut scratch = sc.gpu.lock_scratch();
    let mut carve = scratch.carve(stream, bytes_for(blocks, size as usize, 1))?;
    let partials = carve.take::<M::Elem>(blocks)?;
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
    if tiles == 1 {
        // SAFETY: `k` is this scanner's staged-reduce module, rendered for M::Elem and (mapped)
        // its map's In, which the plan keeps to the element's size; `map` is a map of `inp`,
        // or (no full tile) one the kernel does not read.
        return unsafe {
            launch::reduce_staged(stream, &k, sc.mapped, 1, inp, out, n, 1, map.as_ref())
        };
    }
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
        )
    }?;
    // SAFETY: as above; the partials (M::Elem, the plain entry) are fewer than a tile, so the
    // kernel copies nothing through the map.
    unsafe { launch::reduce_staged(stream, &k, false, 1, partials, out, blocks, 1, map.as_ref()) }
}

/// A persistent grid folds contiguous runs of tiles into per-block partials, in order; then
/// one block folds the partials.
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
        return unsafe { launch::reduce_tiles(stream, &k, sc.mapped, 1, inp, out, n, 1) };
    }
    let mut scratch = sc.gpu.lock_scratch();
    let mut carve = scratch.carve(stream, bytes_for(4 * max_blocks, sc.op.op().elem_size, 8))?;
    let per_block = tiles.div_ceil(max_blocks);
    let blocks = tiles.div_ceil(per_block);
    let partials = carve.take::<M::Elem>(blocks)?;
    // SAFETY: as above.
    unsafe { launch::reduce_tiles(stream, &k, sc.mapped, blocks, inp, partials, n, per_block) }?;
    let mut src = partials;
    loop {
        let len = src.len();
        let tiles = len.div_ceil(tile);
        if tiles == 1 {
            // SAFETY: as above (later passes read M::Elem through the plain entry).
            return unsafe { launch::reduce_tiles(stream, &k, false, 1, src, out, len, 1) };
        }
        let per_block = tiles.div_ceil(max_blocks);
        let blocks = tiles.div_ceil(per_block);
        let partials = carve.take::<M::Elem>(blocks)?;
        // SAFETY: as above.
        unsafe { launch::reduce_tiles(stream, &k, false, blocks, src, partials, len, per_block) }?;
        src = partials;
    }
}
