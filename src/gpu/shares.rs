//! The share scan on the device ([`KernelSet::ShareScan`]): each resident thread folds one
//! contiguous share of the input, then scans it again from its carry. It runs where the plan
//! asks for it ([`crate::tuning::plan::Plan::share_scan`]) and the input is large enough.

use super::kernels::OpKernels;
use super::launch::{self, DevSlice, ShareScan};
use super::scan::Run;
use super::scratch::bytes_for;
use crate::codegen::{Entry, KernelSet};
use crate::error::Result;
use crate::monoid::Monoid;
use crate::tuning::{policy, TileShape};

/// Scans `inp` into `out` (both 16-byte aligned) in module `set` of the share scan; `Ok(false)`,
/// with nothing launched, where the input is too small to give every resident thread a share
/// of at least [`policy::MIN_SHARE_STEPS`] steps.
pub(super) fn scan<M: Monoid, In: crate::element::Element>(
    sc: &OpKernels<M>,
    set: KernelSet,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    run: &Run<M::Elem>,
) -> Result<bool> {
    let KernelSet::ShareScan { shape, .. } = set else {
        return Ok(false);
    };
    let size = sc.op.op().elem_size as u64;
    let n = inp.len();
    if std::mem::size_of::<In>() as u64 != size || inp.addr() % 16 != 0 || out.addr() % 16 != 0 {
        return Ok(false);
    }
    let k = sc.kernels(set)?;
    let resident = k
        .resident(Entry::ShareTotals, sc.mapped)
        .min(k.resident(Entry::ShareScan, sc.mapped));
    let threads = u64::from(resident) * u64::from(shape.block);
    let step = u64::from(TileShape::share_columns(size as usize)) * 128;
    let Some(shares) = policy::shares(n * size, threads, shape.block, step) else {
        return Ok(false);
    };
    let stream = &sc.gpu.stream;
    let mut scratch = sc.gpu.lock_scratch();
    let blocks = (shares.rows + 1).div_ceil(u64::from(shape.block));
    let mut carve = scratch.carve(
        stream,
        bytes_for(shares.rows + 1 + blocks, size as usize, 2),
    )?;
    let row_totals = carve.take::<M::Elem>(shares.rows + 1)?;
    let partials = carve.take::<M::Elem>(blocks)?;
    let args = ShareScan {
        inp,
        out,
        shares,
        row_totals,
        partials,
        exclusive: run.exclusive,
        init: run.init.unwrap_or_else(|| sc.m.identity()),
        has_init: run.init.is_some(),
        total: run.total,
    };
    // SAFETY: `k` is this scanner's share-scan module, rendered for M::Elem and (mapped) its
    // map's In, of the element's size (checked above).
    unsafe { launch::share_scan(stream, &k, sc.mapped, &args) }?;
    Ok(true)
}
