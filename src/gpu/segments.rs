//! Scans of rows of any length on device buffers, the rows given by CSR offsets
//! ([`super::Scanner::scan_segments`]): one launch of a single-pass scan of the segmented
//! lifting whose row starts are read from the offsets (no flag array in memory), by the staged
//! row kernel's `segment_staged` where it applies and the register row kernel's
//! `segment_scan` elsewhere (`lanes::rows` picks). Rows of no elements get their initial value,
//! or the identity, as their total. Their folds ([`super::Scanner::reduce_segments`]) are the
//! same launch without an output: it reads each element once and writes only the totals.

use super::kernels::OpKernels;
use super::lanes;
use super::launch::{self, DevSlice, Rows};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::lanes::{Inits, LaneScan};
use crate::monoid::Monoid;
use cudarc::driver::CudaSlice;

/// Scans the rows of `inp` that `offsets` gives (row `r` from `offsets[r]` to `offsets[r + 1]`,
/// the last offset `inp`'s length) into `out` as `how` says, with each row's total into
/// `totals` (one per row). Offsets out of order give unspecified values, never an access
/// outside the buffers.
pub(super) fn scan<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    out: DevSlice<M::Elem>,
    offsets: DevSlice<u64>,
    how: &LaneScan<M::Elem>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<()> {
    let n = inp.len();
    let out = out.prefix(n).ok_or_else(|| {
        Error::invalid(format!(
            "the output holds {} elements, the input {n}",
            out.len()
        ))
    })?;
    rows(k, inp, Some(out), offsets, how, totals)
}

/// Folds each row of `inp` that `offsets` gives into `totals` (one per row; a row of no
/// elements: the identity), writing nothing else.
pub(super) fn reduce<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    offsets: DevSlice<u64>,
    totals: DevSlice<M::Elem>,
) -> Result<()> {
    rows(k, inp, None, offsets, &LaneScan::inclusive(), Some(totals))
}

/// The rows of `inp` that `offsets` gives, scanned into `out` or, without it, folded into
/// `totals`.
fn rows<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    out: Option<DevSlice<M::Elem>>,
    offsets: DevSlice<u64>,
    how: &LaneScan<M::Elem>,
    totals: Option<DevSlice<M::Elem>>,
) -> Result<()> {
    let Some(count) = offsets.len().checked_sub(1) else {
        return Err(Error::invalid(
            "row offsets need at least one value (0 rows: the offsets [0])",
        ));
    };
    let n = inp.len();
    if let Some(Inits::Each(v)) = &how.init {
        if v.len() as u64 != count {
            return Err(Error::invalid(format!(
                "{} initial values for {count} rows",
                v.len()
            )));
        }
    }
    let totals = lanes::one_each(totals, count, "row")?;
    if count == 0 {
        return Ok(());
    }
    let gpu = k.gpu;
    let stream = &gpu.stream;
    // Per-row initial values travel to the device; they stay alive until the call is queued.
    let inits_buf: Option<CudaSlice<M::Elem>> = match &how.init {
        Some(Inits::Each(v)) => Some(gpu.upload(v)?),
        _ => None,
    };
    let inits = inits_buf.as_ref().map(|b| launch::input(b, stream));
    let inits = inits.as_ref().map(|(s, _)| *s);
    if n == 0 {
        return lanes::empty_totals(k, how, inits, totals);
    }
    let rows = Rows::Offsets { offsets, count };
    lanes::rows(k, inp, out, n, rows, how, inits, totals)
}
