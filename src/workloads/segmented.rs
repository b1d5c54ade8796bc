//! Segmented scans and reductions for any monoid.

use crate::alloc;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::monoid::Monoid;
use crate::ops::{Flagged, Segmented};

/// Inclusive scan of `values` under `m`, restarting wherever `heads[i]` is true.
///
/// ```
/// use monoscan::{cpu::Sequential, ops::Sum, workloads::segmented::scan_by_heads};
/// let ys = scan_by_heads(&Sequential, &Sum::<i32>::new(), &[1, 2, 3, 4], &[true, false, true, false]).unwrap();
/// assert_eq!(ys, [1, 3, 3, 7]);
/// ```
pub fn scan_by_heads<B: Backend, M: Monoid>(
    backend: &B,
    m: &M,
    values: &[M::Elem],
    heads: &[bool],
) -> Result<Vec<M::Elem>> {
    if values.len() != heads.len() {
        return Err(Error::invalid(format!(
            "{} values but {} head flags",
            values.len(),
            heads.len()
        )));
    }
    let mut xs = alloc::collect(values.iter().zip(heads).map(|(v, h)| Flagged::new(*v, *h)))?;
    backend.inclusive_scan_in_place(&Segmented::new(m), &mut xs)?;
    alloc::collect(xs.into_iter().map(|f| f.value))
}

/// Inclusive scan of `values` under `m` within runs of equal consecutive `keys`.
///
/// ```
/// use monoscan::{cpu::Sequential, ops::Max, workloads::segmented::scan_by_key};
/// let ys = scan_by_key(&Sequential, &Max::<i32>::new(), &['a', 'a', 'b', 'b', 'a'], &[3, 1, 2, 5, 0]).unwrap();
/// assert_eq!(ys, [3, 3, 2, 5, 0]);
/// ```
pub fn scan_by_key<B: Backend, M: Monoid, K: PartialEq>(
    backend: &B,
    m: &M,
    keys: &[K],
    values: &[M::Elem],
) -> Result<Vec<M::Elem>> {
    if keys.len() != values.len() {
        return Err(Error::invalid(format!(
            "{} keys but {} values",
            keys.len(),
            values.len()
        )));
    }
    let heads = alloc::collect((0..keys.len()).map(|i| i == 0 || keys[i] != keys[i - 1]))?;
    scan_by_heads(backend, m, values, &heads)
}

/// One reduction per segment, segments given CSR-style: segment `k` is
/// `values[offsets[k] .. offsets[k + 1]]`. Empty segments reduce to the identity.
///
/// `offsets` must start at 0, never decrease, and end at `values.len()`.
///
/// ```
/// use monoscan::{cpu::Sequential, ops::Sum, workloads::segmented::reduce_segments};
/// let sums = reduce_segments(&Sequential, &Sum::<u32>::new(), &[1, 2, 3, 4, 5], &[0, 2, 2, 5]).unwrap();
/// assert_eq!(sums, [3, 0, 12]);
/// ```
pub fn reduce_segments<B: Backend, M: Monoid>(
    backend: &B,
    m: &M,
    values: &[M::Elem],
    offsets: &[usize],
) -> Result<Vec<M::Elem>> {
    check_offsets(offsets, values.len())?;
    let mut heads = alloc::filled(values.len(), false)?;
    for &o in &offsets[..offsets.len() - 1] {
        if o < values.len() {
            heads[o] = true;
        }
    }
    let scanned = scan_by_heads(backend, m, values, &heads)?;
    alloc::collect(offsets.windows(2).map(|w| {
        if w[1] > w[0] {
            scanned[w[1] - 1]
        } else {
            m.identity()
        }
    }))
}

fn check_offsets(offsets: &[usize], n: usize) -> Result<()> {
    match (offsets.first(), offsets.last()) {
        (Some(0), Some(&last)) if last == n => {}
        _ => {
            return Err(Error::invalid(format!(
                "segment offsets must start at 0 and end at the number of values ({n})"
            )))
        }
    }
    if let Some(w) = offsets.windows(2).find(|w| w[1] < w[0]) {
        return Err(Error::invalid(format!(
            "segment offsets decrease ({} then {})",
            w[0], w[1]
        )));
    }
    Ok(())
}
