//! Reductions on raw device addresses.

use super::launch;
use super::scanner::Scanner;
use super::scratch::bytes_for;
use crate::algorithm::Algorithm;
use crate::codegen::{KernelSet, Purpose};
use crate::error::Result;
use crate::monoid::Monoid;

/// Blocks of the tiled reduce per SM: enough to hide latency, few enough that the second pass
/// fits one tile.
const BLOCKS_PER_SM: u64 = 4;

impl<M: Monoid> Scanner<'_, M> {
    /// Reduces `n` elements at `inp` into `out[0]`.
    pub(crate) fn reduce_raw(&self, inp: u64, n: u64, out: u64) -> Result<()> {
        match self.algorithm {
            Algorithm::KoggeStone | Algorithm::BrentKung if self.mapped => {
                Err(crate::Error::invalid(
                    "fused input maps run on the tiled reduce (auto, hierarchical, single-pass)",
                ))
            }
            Algorithm::KoggeStone | Algorithm::BrentKung => self.reduce_tree(inp, n, out),
            _ => self.reduce_tiled(inp, n, out),
        }
    }

    /// The seed notes' reduction, launched until one value is left.
    fn reduce_tree(&self, inp: u64, n: u64, out: u64) -> Result<()> {
        let block = self.textbook_block()?;
        let set = KernelSet::TreeReduce { block };
        if n == 0 {
            return self.fill(set, out, 1, self.m.identity());
        }
        let k = self.kernels(set)?;
        let f = k.function("reduce_tree")?;
        let per_block = 2 * u64::from(block);
        let lv = super::scan::levels(n, per_block);
        let stream = &self.gpu.stream;
        let mut scratch = self.gpu.lock_scratch();
        let mut carve = scratch.carve(
            stream,
            bytes_for(lv.iter().sum(), self.op.elem_size, lv.len() as u64),
        )?;
        let (mut src, mut len) = (inp, n);
        loop {
            let blocks = len.div_ceil(per_block);
            let dst = if blocks == 1 {
                out
            } else {
                carve.take(blocks, self.op.elem_size)?
            };
            launch::reduce_tree(stream, f, block, src, dst, len)?;
            if blocks == 1 {
                return Ok(());
            }
            (src, len) = (dst, blocks);
        }
    }

    /// A persistent grid folds contiguous runs of tiles into per-block partials, in order;
    /// then one block folds the partials.
    fn reduce_tiled(&self, inp: u64, n: u64, out: u64) -> Result<()> {
        let shape = self.shape(Purpose::Tiles)?;
        let set = KernelSet::TiledReduce(shape);
        if n == 0 {
            return self.fill(set, out, 1, self.m.identity());
        }
        let k = self.kernels(set)?;
        let f = k.function("reduce_tiles")?;
        let f0 = k.function(self.entry0("reduce_tiles"))?;
        let tile = shape.tile();
        let max_blocks = (u64::from(self.gpu.info.sm_count) * BLOCKS_PER_SM).min(tile);
        let stream = &self.gpu.stream;
        let mut scratch = self.gpu.lock_scratch();
        let mut carve = scratch.carve(stream, bytes_for(4 * max_blocks, self.op.elem_size, 8))?;
        let (mut src, mut len) = (inp, n);
        loop {
            let tiles = len.div_ceil(tile);
            // The first pass reads the caller's input (through the map, if any).
            let func = if src == inp { f0 } else { f };
            if tiles == 1 {
                return launch::reduce_tiles(stream, func, shape.block, 1, src, out, len, 1);
            }
            let per_block = tiles.div_ceil(max_blocks);
            let blocks = tiles.div_ceil(per_block);
            let partials = carve.take(blocks, self.op.elem_size)?;
            launch::reduce_tiles(
                stream,
                func,
                shape.block,
                blocks,
                src,
                partials,
                len,
                per_block,
            )?;
            (src, len) = (partials, blocks);
        }
    }
}
