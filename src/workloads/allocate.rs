//! Resource allocation (requests to offsets and owned slices) and stream compaction.

use crate::alloc;
use crate::backend::Backend;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::map::Map;
use crate::ops::Sum;

/// Offsets and total of an allocation: item `i` owns `offsets[i] .. offsets[i] + requests[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// Start of each item's slice.
    pub offsets: Vec<u64>,
    /// Size of the whole buffer.
    pub total: u64,
}

impl Allocation {
    /// Item `i`'s range in the buffer: `offsets[i] .. offsets[i] + requests[i]`.
    /// [`Error::InvalidArgument`] when `i` has no offset or request, or when the range ends past
    /// [`Allocation::total`] or past `usize::MAX`.
    ///
    /// ```
    /// use monoscan::{cpu::Sequential, workloads::allocate::offsets};
    /// let requests = [3, 0, 2];
    /// let a = offsets(&Sequential, &requests).unwrap();
    /// assert_eq!(a.range(2, &requests).unwrap(), 3..5);
    /// assert!(a.range(3, &requests).is_err());
    /// ```
    pub fn range(&self, i: usize, requests: &[u32]) -> Result<std::ops::Range<usize>> {
        let (Some(&start), Some(&len)) = (self.offsets.get(i), requests.get(i)) else {
            return Err(Error::invalid(format!(
                "item {i} out of range: {} offsets, {} requests",
                self.offsets.len(),
                requests.len()
            )));
        };
        let end = start
            .checked_add(u64::from(len))
            .filter(|&end| end <= self.total)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "item {i}: {start} + {len} ends past the allocation's {} elements",
                    self.total
                ))
            })?;
        let fits = |v: u64| {
            usize::try_from(v)
                .map_err(|_| Error::invalid(format!("item {i}: {v} exceeds usize::MAX")))
        };
        Ok(fits(start)?..fits(end)?)
    }
}

/// The exclusive scan of `requests` (widened to 64 bits by a fused map, so totals beyond
/// 2^32 are exact) and the total.
///
/// ```
/// use monoscan::{cpu::Parallel, workloads::allocate::offsets};
/// let a = offsets(&Parallel::default(), &[3, 0, 2, 5]).unwrap();
/// assert_eq!(a.offsets, [0, 3, 3, 5]);
/// assert_eq!(a.total, 10);
/// ```
pub fn offsets<B: Backend>(backend: &B, requests: &[u32]) -> Result<Allocation> {
    let widen = Map::new("widen_u32", "(unsigned long long)x", |x: &u32| {
        u64::from(*x)
    });
    let (offsets, total) =
        backend.map_exclusive_scan_total(&Sum::<u64>::new(), &widen, requests, 0)?;
    Ok(Allocation { offsets, total })
}

/// Allocates the buffer of an allocation (filled with `init`) and lets each item fill its own
/// slice, in parallel: `fill(i, slice)` gets item `i` and exactly the `requests[i]` elements it
/// owns. `requests` must be those the allocation was computed from (one per offset, summing to
/// the total), else [`Error::InvalidArgument`]; a buffer that cannot be allocated is
/// [`Error::OutOfMemory`].
pub fn fill_slices<T: Copy + Send + Sync>(
    allocation: &Allocation,
    requests: &[u32],
    init: T,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<Vec<T>> {
    use rayon::prelude::*;
    if requests.len() != allocation.offsets.len() {
        return Err(Error::invalid(format!(
            "{} requests for an allocation of {} items",
            requests.len(),
            allocation.offsets.len()
        )));
    }
    let sum = requests
        .iter()
        .try_fold(0u64, |acc, &r| acc.checked_add(u64::from(r)));
    if sum != Some(allocation.total) {
        return Err(Error::invalid(format!(
            "the requests sum to {}, but the allocation holds {} elements",
            sum.map_or_else(|| "more than u64::MAX".to_string(), |s| s.to_string()),
            allocation.total
        )));
    }
    let total = usize::try_from(allocation.total)
        .map_err(|_| Error::invalid("the allocation does not fit this machine's address space"))?;
    let mut buf = alloc::filled(total, init)?;
    // Split the buffer at the offsets: each item gets its own disjoint slice.
    let mut slices: Vec<&mut [T]> = alloc::with_capacity(requests.len())?;
    let mut rest: &mut [T] = &mut buf;
    for &r in requests {
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(r as usize);
        slices.push(mine);
        rest = tail;
    }
    slices
        .into_par_iter()
        .enumerate()
        .for_each(|(i, s)| fill(i, s));
    Ok(buf)
}

/// Stream compaction: the elements `keep` selects (maps to nonzero), in order.
///
/// ```
/// use monoscan::{cpu::Sequential, Map, workloads::allocate::compact};
/// let positive = Map::new("positive", "x > 0 ? 1u : 0u", |x: &i32| u32::from(*x > 0));
/// assert_eq!(compact(&Sequential, &[3, -1, 0, 7], &positive).unwrap(), [3, 7]);
/// ```
pub fn compact<B: Backend, T: Element>(
    backend: &B,
    xs: &[T],
    keep: &Map<T, u32>,
) -> Result<Vec<T>> {
    if xs.len() as u64 > u64::from(u32::MAX) {
        return Err(Error::invalid(format!(
            "compaction counts in 32 bits: at most {} elements, got {}",
            u32::MAX,
            xs.len()
        )));
    }
    let keep = keep.as_selection();
    let (offsets, total) = backend.map_exclusive_scan_total(&Sum::<u32>::new(), &keep, xs, 0)?;
    let mut out = alloc::with_capacity(total as usize)?;
    for (x, o) in xs.iter().zip(&offsets) {
        if keep.apply(x) != 0 {
            debug_assert_eq!(*o as usize, out.len());
            out.push(*x);
        }
    }
    Ok(out)
}
