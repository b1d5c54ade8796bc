//! Launches of the single-pass kernels, which number their tiles by claim order and take each
//! tile's prefix from the decoupled look-back: the scans (register and staged tiles) and stream
//! compaction.

use super::{addr, config, grid_order, holds, tiles32, DevSlice, TensorMap, COUNTER_WORDS};
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::gpu::module::Loaded;
use crate::tuning::{Numbering, PrefetchPlan, StateLayout};
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};

/// The per-tile look-back state of one single-pass launch, from [`super::scratch::Scratch`].
pub(crate) struct LookbackState<T> {
    /// Per-tile status words (layout of the kernel set), zeroed once at allocation.
    pub state: DevSlice<u8>,
    /// Per-tile aggregates and inclusive prefixes (separate layout only).
    pub values: Option<(DevSlice<T>, DevSlice<T>)>,
    /// The tile counter (zero at launch) and the pacing clock: [`COUNTER_WORDS`] words.
    pub counter: DevSlice<u32>,
    /// This launch's epoch (never reused while state from it may remain).
    pub epoch: u32,
}

impl<T> LookbackState<T> {
    /// An error unless the state holds `tiles` tiles of `layout` for values of `size` bytes.
    pub(super) fn check(&self, tiles: u64, layout: StateLayout, size: usize) -> Result<()> {
        holds(
            "the look-back state",
            &self.state,
            tiles * layout.status_bytes(size),
        )?;
        holds("the tile counter", &self.counter, COUNTER_WORDS)?;
        match (&self.values, layout) {
            (Some((a, i)), StateLayout::Separate) => {
                holds("the aggregates", a, tiles)?;
                holds("the inclusive prefixes", i, tiles)
            }
            (None, StateLayout::Separate) => Err(Error::invalid(
                "internal: the separate layout needs value arrays",
            )),
            _ => Ok(()),
        }
    }

    pub(super) fn values(&self) -> (u64, u64) {
        self.values.map_or((0, 0), |(a, i)| (a.addr(), i.addr()))
    }
}

/// Arguments of `scan_single_pass` and `scan_staged`.
pub(crate) struct SinglePass<In, T> {
    /// Input (n elements).
    pub inp: DevSlice<In>,
    /// Output (n elements; may be the input).
    pub out: DevSlice<T>,
    /// Elements.
    pub n: u64,
    /// The look-back state.
    pub lookback: LookbackState<T>,
    /// Exclusive scan (else inclusive).
    pub exclusive: bool,
    /// The seed when `has_init`.
    pub init: T,
    /// Whether `init` applies.
    pub has_init: bool,
    /// Where the last tile writes the total.
    pub total: Option<DevSlice<T>>,
    /// How the blocks find their tiles: claimed from the counter, or (`scan_staged` only)
    /// block b on tile b, in a cooperative launch of at most the module's resident blocks or
    /// an ordinary one.
    pub order: Numbering,
}

/// The single-pass scan, one block per tile: `scan_single_pass` of a
/// [`KernelSet::SinglePass`] module, or `scan_staged` of a [`KernelSet::StagedScan`] one,
/// whose TMA forms also take the launch's L2 prefetch plan, after the input's tensor map in
/// the tensor form (`tma`: the map, for the swizzled layout only, and the plan); through the
/// input map when `mapped`.
///
/// # Safety
/// `k` is such a module rendered for element type `T`, and (when `mapped`) for an input map
/// from `In`; unmapped, `In` is `T`.
pub(crate) unsafe fn single_pass<In: DeviceRepr, T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    mapped: bool,
    a: &SinglePass<In, T>,
    tma: Option<(Option<&TensorMap>, PrefetchPlan)>,
) -> Result<()> {
    let (shape, entry) = match k.set() {
        KernelSet::SinglePass(s) | KernelSet::SinglePassReverse(s) => (s, Entry::ScanSinglePass),
        KernelSet::StagedScan(s) | KernelSet::StagedScanReverse(s) => (s, Entry::ScanStaged),
        other => {
            return Err(Error::invalid(format!(
                "internal: {} holds no single-pass scan",
                other.name()
            )))
        }
    };
    let f = k.function(entry, mapped)?;
    let smem = k.dynamic_smem(entry, mapped);
    let tiles = a.n.div_ceil(shape.tile());
    let tiles32 = tiles32(tiles)?;
    holds("the input", &a.inp, a.n)?;
    holds("the output", &a.out, a.n)?;
    if let Some(t) = &a.total {
        holds("the total", t, 1)?;
    }
    a.lookback
        .check(tiles, shape.layout, std::mem::size_of::<T>())?;
    if entry == Entry::ScanStaged && (a.inp.addr() % 16 != 0 || a.out.addr() % 16 != 0) {
        return Err(Error::invalid(
            "internal: the staged scan needs 16-byte aligned buffers",
        ));
    }
    let resident = k.resident(entry, mapped);
    if a.order.by_block() && entry != Entry::ScanStaged {
        return Err(Error::invalid(
            "internal: only the staged scan numbers its tiles by block index",
        ));
    }
    let grid_order = grid_order(a.order, tiles, resident, "scan")?;
    let tma_form = entry == Entry::ScanStaged && shape.tma;
    if tma.is_some() != tma_form || tma.is_some_and(|(map, _)| map.is_some() == shape.linear) {
        return Err(Error::invalid(
            "internal: a prefetch plan goes with the TMA forms of the staged scan, a tensor map with its tensor form, and only with them",
        ));
    }
    let (i, o, t, st) = (
        a.inp.addr(),
        a.out.addr(),
        addr(a.total),
        a.lookback.state.addr(),
    );
    let (aggs, incls) = a.lookback.values();
    let (counter, epoch) = (a.lookback.counter.addr(), a.lookback.epoch);
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    // SAFETY: kernel `(const in_t* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles, ms_state*
    // state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch, int exclusive,
    // ms_elem init, int has_init, ms_elem* total_out)` with in_t = In and ms_elem = T (the
    // caller's obligation); in and out hold n elements, the state one slot per tile (and aggs
    // and incls one value per tile for the separate layout), the counter 16 words (the zeroed
    // tile counter, and the pacing clock at word 8, which the TMA form reads and writes), the
    // total one element: all checked above. The grid is exactly `tiles` blocks, so every tile
    // number the counter hands out, or every block index, is in range. scan_staged takes one
    // more argument, `int grid_order`, before `exclusive`; in grid order block b scans tile b.
    // A cooperative launch has at most the module's resident count of blocks (checked above),
    // so every block is resident at once and no tile waits on one that is not (the driver
    // refuses a cooperative grid that cannot be); an ordinary launch in grid order relies on
    // blocks starting in index order (`TileOrder::BlockIndex`). For scan_staged, `smem`
    // bytes were allowed by the function attribute set when the module was loaded, and in and out are 16-byte
    // aligned (checked above), as its cp.async copies and vector stores require. The TMA form
    // takes two more arguments, the tensor map of `in` (whole 128-byte rows of its n elements)
    // and the prefetch plan (the kernel prefetches only full tiles below n; a plan only changes
    // which, never what is read into the tile, and its pacing only when a copy is issued),
    // passed exactly for that form (checked above). The bulk form (the linear layout's TMA
    // form) takes the prefetch plan alone: it copies whole tiles below n from `in` itself.
    unsafe {
        let mut b = s.launch_builder(f);
        b.arg(&i)
            .arg(&o)
            .arg(&a.n)
            .arg(&tiles32)
            .arg(&st)
            .arg(&aggs)
            .arg(&incls)
            .arg(&counter)
            .arg(&epoch);
        if entry == Entry::ScanStaged {
            b.arg(&grid_order);
        }
        b.arg(&excl).arg(&a.init).arg(&has).arg(&t);
        let plan;
        if let Some((map, p)) = tma {
            plan = p;
            if let Some(map) = map {
                b.arg(map);
            }
            b.arg(&plan);
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

/// Arguments of `select_registers` and `select_staged`.
pub(crate) struct Select<In> {
    /// Input (n elements of the map's input type).
    pub inp: DevSlice<In>,
    /// Output: room for n elements of the input type; the first `count` are written.
    pub out: DevSlice<In>,
    /// Elements.
    pub n: u64,
    /// The look-back state (over u32 keep counts).
    pub lookback: LookbackState<u32>,
    /// Where the last tile writes the count of kept elements.
    pub count: DevSlice<u32>,
}

/// Stream compaction in one pass: `select_registers` of a [`KernelSet::Select`] module, or
/// `select_staged` of a [`KernelSet::SelectStaged`] one, whose TMA form also takes the
/// launch's L2 prefetch plan (`prefetch`).
///
/// # Safety
/// `k` is such a module rendered for an operator over u32 counts with an input map from `In`.
pub(crate) unsafe fn select<In: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    a: &Select<In>,
    prefetch: Option<PrefetchPlan>,
) -> Result<()> {
    let (shape, entry) = match k.set() {
        KernelSet::Select(s) => (s, Entry::SelectRegisters),
        KernelSet::SelectStaged(s) => (s, Entry::SelectStaged),
        other => {
            return Err(Error::invalid(format!(
                "internal: {} holds no compaction",
                other.name()
            )))
        }
    };
    let f = k.function(entry, false)?;
    let smem = k.dynamic_smem(entry, false);
    let tiles = a.n.div_ceil(shape.tile());
    let tiles32 = tiles32(tiles)?;
    holds("the input", &a.inp, a.n)?;
    holds("the output", &a.out, a.n)?;
    holds("the count", &a.count, 1)?;
    a.lookback.check(tiles, shape.layout, 4)?;
    if entry == Entry::SelectStaged && a.inp.addr() % 16 != 0 {
        return Err(Error::invalid(
            "internal: the staged compaction needs a 16-byte aligned input",
        ));
    }
    if prefetch.is_some() != (entry == Entry::SelectStaged && shape.tma) {
        return Err(Error::invalid(
            "internal: a prefetch plan goes with the TMA form of compaction, and only with it",
        ));
    }
    let (i, o, c, st) = (
        a.inp.addr(),
        a.out.addr(),
        a.count.addr(),
        a.lookback.state.addr(),
    );
    let (counter, epoch, none) = (a.lookback.counter.addr(), a.lookback.epoch, 0u64);
    // SAFETY: kernel `(const in_t* in, in_t* out, ms_u64 n, ms_u32 num_tiles, ms_state* state,
    // ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch, ms_elem* total_out)` with
    // in_t = In and ms_elem = u32 (the caller's obligation); in holds n elements and out has
    // room for n (the kept ones are a subset), the state one packed word per tile (aggs and
    // incls unused by that layout), the counter 16 words (the zeroed tile counter, and the TMA
    // form's pacing clock at word 8), the count one u32: all checked above. The grid is exactly
    // `tiles` blocks, so every tile number handed out is in range. For select_staged, `smem` is
    // one tile of input (within the default 48 KiB) and in is 16-byte aligned (checked above),
    // as its cp.async and bulk copies require; its TMA form takes one more argument, the
    // prefetch plan, passed exactly for that form (checked above; the kernel prefetches only
    // full tiles below n).
    unsafe {
        let mut b = s.launch_builder(f);
        b.arg(&i)
            .arg(&o)
            .arg(&a.n)
            .arg(&tiles32)
            .arg(&st)
            .arg(&none)
            .arg(&none)
            .arg(&counter)
            .arg(&epoch)
            .arg(&c);
        let plan;
        if let Some(p) = prefetch {
            plan = p;
            b.arg(&plan);
        }
        b.launch(config(tiles, shape.block, smem))
    }?;
    Ok(())
}
