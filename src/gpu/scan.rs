//! Scan strategies on raw device addresses (checked by the callers in `scanner.rs`).

use super::launch::{self, BlockScan, SinglePass, TileScan};
use super::scanner::{Mode, Scanner};
use super::scratch::bytes_for;
use crate::algorithm::Algorithm;
use crate::codegen::{KernelSet, PrefetchPlan, Purpose, StateLayout};
use crate::error::{Error, Result};
use crate::monoid::Monoid;

/// Element counts of the levels of a hierarchy with `section` elements per block:
/// `[ceil(n/s), ceil(n/s^2), ...]` down to one.
pub(crate) fn levels(n: u64, section: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut m = n;
    while m > section {
        m = m.div_ceil(section);
        out.push(m);
    }
    out
}

impl<M: Monoid> Scanner<'_, M> {
    /// The algorithm a scan of `n` elements runs.
    pub(crate) fn resolve(&self, n: u64) -> Result<Algorithm> {
        Ok(match self.algorithm {
            Algorithm::Auto if self.gpu.deterministic => Algorithm::Hierarchical,
            Algorithm::Auto => {
                let shape = self.shape(Purpose::SinglePass)?;
                if n.div_ceil(shape.tile()) > u64::from(u32::MAX) {
                    Algorithm::Hierarchical
                } else {
                    Algorithm::SinglePass
                }
            }
            a => a,
        })
    }

    /// Scans `n` elements from `inp` to `out` (which may be equal); writes the total to
    /// `total` unless it is 0.
    pub(crate) fn scan_raw(
        &self,
        inp: u64,
        out: u64,
        n: u64,
        mode: Mode<M::Elem>,
        total: u64,
    ) -> Result<()> {
        let (exclusive, init) = match mode {
            Mode::Inclusive => (false, None),
            Mode::InclusiveFrom(v) => (false, Some(v)),
            Mode::Exclusive(v) => (true, Some(v)),
        };
        let algorithm = self.resolve(n)?;
        if matches!(algorithm, Algorithm::KoggeStone | Algorithm::BrentKung) {
            // The textbook kernels read the operator's own element type and seed only
            // exclusive scans; refuse before anything is launched.
            if self.mapped {
                return Err(Error::invalid(format!(
                    "fused input maps run on the tiled algorithms (auto, hierarchical, single-pass), not {algorithm}"
                )));
            }
            if !exclusive && init.is_some() {
                return Err(Error::invalid(format!(
                    "inclusive scans from a carry run on the tiled algorithms (auto, hierarchical, single-pass), not {algorithm}"
                )));
            }
        }
        let set = self.scan_set(algorithm)?;
        if n == 0 {
            if total != 0 {
                self.fill(set, total, 1, init.unwrap_or_else(|| self.m.identity()))?;
            }
            return Ok(());
        }
        match algorithm {
            Algorithm::KoggeStone | Algorithm::BrentKung => {
                self.textbook(set, inp, out, n, exclusive, init, total)
            }
            Algorithm::Hierarchical => {
                self.reduce_then_scan(set, inp, out, n, exclusive, init, total)
            }
            _ => self.single_pass(set, inp, out, n, exclusive, init, total),
        }
    }

    fn scan_set(&self, algorithm: Algorithm) -> Result<KernelSet> {
        Ok(match algorithm {
            Algorithm::KoggeStone => KernelSet::KoggeStone {
                block: self.textbook_block()?,
            },
            Algorithm::BrentKung => KernelSet::BrentKung {
                block: self.textbook_block()?,
            },
            Algorithm::Hierarchical => KernelSet::ReduceThenScan(self.shape(Purpose::Tiles)?),
            _ => KernelSet::SinglePass(self.shape(Purpose::SinglePass)?),
        })
    }

    /// Only the first level of a textbook scan: one inclusive block scan per section, no carries.
    /// Returns `(sections, section length)`; `None` for the tiled algorithms. For measuring the
    /// block algorithms' work in `monoscan lab`.
    pub(crate) fn block_scans_only(
        &self,
        inp: u64,
        out: u64,
        n: u64,
    ) -> Result<Option<(u64, u64)>> {
        let set = self.scan_set(self.resolve(n)?)?;
        let (block, section, entry) = match set {
            KernelSet::KoggeStone { block } => (block, u64::from(block), "ks_scan"),
            KernelSet::BrentKung { block } => (block, 2 * u64::from(block), "bk_scan"),
            _ => return Ok(None),
        };
        if n == 0 {
            return Ok(Some((0, section)));
        }
        let k = self.kernels(set)?;
        let args = BlockScan {
            inp,
            out,
            totals: 0,
            n,
            exclusive: false,
            init: self.m.identity(),
            has_init: false,
        };
        launch::block_scan(&self.gpu.stream, k.function(entry)?, block, section, &args)?;
        Ok(Some((n.div_ceil(section), section)))
    }

    /// Block scans, a scan of the block totals (recursively), and the add-back.
    #[allow(clippy::too_many_arguments)]
    fn textbook(
        &self,
        set: KernelSet,
        inp: u64,
        out: u64,
        n: u64,
        exclusive: bool,
        init: Option<M::Elem>,
        total: u64,
    ) -> Result<()> {
        let (block, section) = match set {
            KernelSet::KoggeStone { block } => (block, u64::from(block)),
            KernelSet::BrentKung { block } => (block, 2 * u64::from(block)),
            _ => unreachable!("textbook scans use textbook sets"),
        };
        let k = self.kernels(set)?;
        let scan = k.function(if matches!(set, KernelSet::KoggeStone { .. }) {
            "ks_scan"
        } else {
            "bk_scan"
        })?;
        let add = k.function("add_carry")?;
        let size = self.op.elem_size;
        let lv = levels(n, section);
        let stream = &self.gpu.stream;
        let mut scratch = self.gpu.lock_scratch();
        let mut carve = scratch.carve(stream, bytes_for(lv.iter().sum(), size, lv.len() as u64))?;
        // Level k scans `len` elements; a level of more than one section scans its block totals
        // one level down (exclusive, from init) and adds them back.
        let mut pending = Vec::new();
        let (mut src, mut dst, mut len, mut excl, seed) = (inp, out, n, exclusive, init);
        loop {
            let blocks = len.div_ceil(section);
            let single = blocks == 1;
            let totals = if single {
                total
            } else {
                carve.take(blocks, size)?
            };
            let args = BlockScan {
                inp: src,
                out: dst,
                totals,
                n: len,
                exclusive: excl,
                init: if single {
                    seed.unwrap_or_else(|| self.m.identity())
                } else {
                    self.m.identity()
                },
                has_init: single && seed.is_some(),
            };
            launch::block_scan(stream, scan, block, section, &args)?;
            if single {
                break;
            }
            // The carries of this level are the exclusive scan of its totals, from init.
            pending.push((dst, totals, len, !excl && seed.is_none()));
            (src, dst, len, excl) = (totals, totals, blocks, true);
        }
        for (dst, carries, len, skip_first) in pending.into_iter().rev() {
            launch::add_carry(stream, add, block, dst, carries, len, section, skip_first)?;
        }
        Ok(())
    }

    /// Tile totals, their scan (recursively, in place), then each tile from its carry.
    #[allow(clippy::too_many_arguments)]
    fn reduce_then_scan(
        &self,
        set: KernelSet,
        inp: u64,
        out: u64,
        n: u64,
        exclusive: bool,
        init: Option<M::Elem>,
        total: u64,
    ) -> Result<()> {
        let KernelSet::ReduceThenScan(shape) = set else {
            unreachable!("reduce-then-scan set")
        };
        let k = self.kernels(set)?;
        let (totals_fn, scan_fn) = (k.function("tile_totals")?, k.function("tile_scan")?);
        let (totals0, scan0) = (
            k.function(self.entry0("tile_totals"))?,
            k.function(self.entry0("tile_scan"))?,
        );
        let tile = shape.tile();
        let size = self.op.elem_size;
        let lv = levels(n, tile);
        let stream = &self.gpu.stream;
        let mut scratch = self.gpu.lock_scratch();
        let mut carve = scratch.carve(stream, bytes_for(lv.iter().sum(), size, lv.len() as u64))?;
        let identity = self.m.identity();
        let mut pending = Vec::new();
        let (mut src, mut dst, mut len, mut excl) = (inp, out, n, exclusive);
        loop {
            let tiles = len.div_ceil(tile);
            if tiles == 1 {
                let args = TileScan {
                    inp: src,
                    out: dst,
                    n: len,
                    carries: 0,
                    exclusive: excl,
                    init: init.unwrap_or(identity),
                    has_init: init.is_some(),
                    total,
                };
                let f = if src == inp { scan0 } else { scan_fn };
                launch::tile_scan(stream, f, shape.block, 1, &args)?;
                break;
            }
            let sums = carve.take(tiles, size)?;
            let f = if src == inp { totals0 } else { totals_fn };
            launch::tile_totals(stream, f, shape.block, tiles, src, sums, len)?;
            pending.push((src, dst, len, excl, sums, tiles));
            (src, dst, len, excl) = (sums, sums, tiles, true);
        }
        for (src, dst, len, excl, carries, tiles) in pending.into_iter().rev() {
            let args = TileScan {
                inp: src,
                out: dst,
                n: len,
                carries,
                exclusive: excl,
                init: identity,
                has_init: false,
                total: 0,
            };
            let f = if src == inp { scan0 } else { scan_fn };
            launch::tile_scan(stream, f, shape.block, tiles, &args)?;
        }
        Ok(())
    }

    /// One launch: the one-tile scan for small inputs, else the decoupled look-back scan.
    #[allow(clippy::too_many_arguments)]
    fn single_pass(
        &self,
        set: KernelSet,
        inp: u64,
        out: u64,
        n: u64,
        exclusive: bool,
        init: Option<M::Elem>,
        total: u64,
    ) -> Result<()> {
        let KernelSet::SinglePass(shape) = set else {
            unreachable!("single-pass set")
        };
        let stream = &self.gpu.stream;
        let identity = self.m.identity();
        if n <= shape.tile() {
            // One block: the small one-tile kernel when the input fits it (less padding to
            // fold and scan), else the single-pass shape's tile.
            let one = self.shape(Purpose::OneTile)?;
            let (block, set) = if n <= one.tile() {
                (one.block, KernelSet::OneTile(one))
            } else {
                (shape.block, set)
            };
            let args = TileScan {
                inp,
                out,
                n,
                carries: 0,
                exclusive,
                init: init.unwrap_or(identity),
                has_init: init.is_some(),
                total,
            };
            return launch::tile_scan(
                stream,
                self.kernels(set)?.function(self.entry0("tile_scan"))?,
                block,
                1,
                &args,
            );
        }
        let size = self.op.elem_size;
        // The staged kernel (tiles copied into shared memory with cp.async) when the element
        // size, the architecture and 16-byte aligned buffers allow; else the register kernel.
        // Only the module that runs is loaded.
        let staged = self.shape(Purpose::Staged)?;
        let (shape, entry) = if staged.staged && inp % 16 == 0 && out % 16 == 0 {
            (staged, "scan_staged")
        } else {
            (shape, "scan_single_pass")
        };
        let k = self.kernels(KernelSet::SinglePass(shape))?;
        let tiles = n.div_ceil(shape.tile());
        let tiles32 = u32::try_from(tiles)
            .map_err(|_| Error::invalid(format!("{n} elements need {tiles} tiles; the single-pass scan handles at most 2^32 - 1 (use Algorithm::Hierarchical)")))?;
        let smem = k.dynamic_smem(self.entry0(entry));
        let mut scratch = self.gpu.lock_scratch();
        let (aggs, incls) = if shape.layout == StateLayout::Separate {
            let mut carve = scratch.carve(stream, bytes_for(2 * tiles, size, 2))?;
            (carve.take(tiles, size)?, carve.take(tiles, size)?)
        } else {
            (0, 0)
        };
        let (state, counter, epoch) = scratch.single_pass(stream, shape.layout, tiles, size)?;
        let args = SinglePass {
            inp,
            out,
            n,
            tiles: tiles32,
            state,
            aggs,
            incls,
            counter,
            epoch,
            exclusive,
            init: init.unwrap_or(identity),
            has_init: init.is_some(),
            total,
        };
        // The TMA form loads whole tiles through a tensor map of the input's 128-byte rows, and
        // prefetches into L2 a fixed number of bytes ahead, past the launch's first wave.
        // (Staged scans map in place: input elements have the element's size, `Scanner::shape`
        // sees to it.)
        let tma = if entry == "scan_staged" && shape.tma {
            let map = launch::TensorMap::rows128(inp, n * size as u64, shape.tma_rows())?;
            let resident = k.resident(self.entry0(entry));
            let plan = PrefetchPlan::new(
                shape.tile_bytes(size),
                tiles,
                resident,
                self.gpu.info().mem_gbps,
            )?;
            Some((map, plan))
        } else {
            None
        };
        launch::single_pass(
            stream,
            k.function(self.entry0(entry))?,
            shape.block,
            smem,
            &args,
            tma.as_ref(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::levels;

    #[test]
    fn level_sizes() {
        assert_eq!(levels(1000, 1024), Vec::<u64>::new());
        assert_eq!(levels(1025, 1024), vec![2]);
        assert_eq!(levels(1 << 30, 1024), vec![1 << 20, 1 << 10]);
        assert_eq!(levels((1 << 20) + 1, 1024), vec![1025, 2]);
    }
}
