//! Resource allocation (requests to offsets and owned slices) and stream compaction.

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
    /// Item `i`'s range in the buffer.
    pub fn range(&self, i: usize, requests: &[u32]) -> std::ops::Range<usize> {
        let start = self.offsets[i] as usize;
        start..start + requests[i] as usize
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
/// owns.
pub fn fill_slices<T: Copy + Send + Sync>(
    allocation: &Allocation,
    requests: &[u32],
    init: T,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<Vec<T>> {
    use rayon::prelude::*;
    let total = usize::try_from(allocation.total)
        .map_err(|_| Error::invalid("the allocation does not fit this machine's address space"))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(total)
        .map_err(|_| Error::invalid(format!("cannot allocate {total} elements")))?;
    buf.resize(total, init);
    // Split the buffer at the offsets: each item gets its own disjoint slice.
    let mut slices: Vec<&mut [T]> = Vec::with_capacity(requests.len());
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
    let mut out = Vec::with_capacity(total as usize);
    for (x, o) in xs.iter().zip(&offsets) {
        if keep.apply(x) != 0 {
            debug_assert_eq!(*o as usize, out.len());
            out.push(*x);
        }
    }
    Ok(out)
}
