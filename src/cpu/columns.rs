//! The parallel backend's lanes that lie across memory: an axis of a contiguous tensor other
//! than its last (a row-major matrix's columns scanned down), whose lanes sit side by side and
//! advance a whole row at a time. Gathering one such lane reads one element per cache line,
//! and every lane reads the same lines again, so these scans walk the rows in memory order
//! with one running value per lane instead. They split the rows among threads as the 1-D scan
//! splits its input: each chunk of rows folded into per-lane totals, the totals scanned into
//! carries, each chunk scanned from its carry. Every lane keeps sequence order, so the results
//! are those of the sequential reference for any monoid (floats up to where their roundings
//! fall).

use crate::alloc;
use crate::error::{Error, Result};
use crate::lanes::{Inits, LaneScan, Lanes};
use crate::monoid::Monoid;
use rayon::prelude::*;

/// How the parallel backend splits work: into about `pieces` parts of at least `min_chunk`
/// elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Split {
    pub pieces: usize,
    pub min_chunk: usize,
}

impl Split {
    /// Rows per chunk for `rows` rows of `width` elements.
    fn rows(&self, rows: usize, width: usize) -> usize {
        let elems = rows
            .saturating_mul(width)
            .div_ceil(self.pieces.max(1))
            .max(self.min_chunk);
        elems.div_ceil(width).max(1)
    }

    /// Whether groups of `rows` rows of `width` elements run one group per task: when there
    /// are enough groups to share out, or each fits one chunk.
    fn by_group(&self, groups: usize, rows: usize, width: usize) -> bool {
        groups >= self.pieces || self.rows(rows, width) >= rows
    }
}

/// The width of the lanes' rows where `lanes` lie across memory densely: `inner` lanes side
/// by side (`inner_stride` 1), each advancing a row of `inner` elements (`stride == inner`),
/// each group of lanes right after the last (`outer_stride == len * inner`). `None` for every
/// other layout, for single lanes and for empty ones.
pub(crate) fn dense_width(lanes: &Lanes) -> Option<usize> {
    let w = lanes.inner;
    let slab = lanes.len.checked_mul(w)?;
    let dense = w >= 2
        && lanes.len >= 1
        && lanes.outer >= 1
        && lanes.inner_stride == 1
        && lanes.stride == w
        && (lanes.outer == 1 || lanes.outer_stride == slab);
    dense.then_some(w)
}

/// Scans the lanes of `data` in place as `how` says, where [`dense_width`] gave `width`;
/// returns the lanes' totals in lane order.
pub(crate) fn scan<M: Monoid>(
    m: &M,
    lanes: &Lanes,
    width: usize,
    data: &mut [M::Elem],
    how: &LaneScan<M::Elem>,
    split: Split,
) -> Result<Vec<M::Elem>> {
    let slab = lanes.len * width;
    let data = &mut data[..lanes.outer * slab];
    // The initial values of group `o`'s lanes.
    let inits = |o: usize| -> Result<Option<Vec<M::Elem>>> {
        match &how.init {
            None => Ok(None),
            Some(Inits::Same(v)) => alloc::filled(width, *v).map(Some),
            Some(Inits::Each(vs)) => alloc::to_vec(&vs[o * width..(o + 1) * width]).map(Some),
        }
    };
    let mut per_group: Vec<Result<Vec<M::Elem>>> = alloc::with_capacity(lanes.outer)?;
    if split.by_group(lanes.outer, lanes.len, width) {
        data.par_chunks_mut(slab)
            .enumerate()
            .map(|(o, s)| walk(m, s, width, inits(o)?, how))
            .collect_into_vec(&mut per_group);
    } else {
        let rows = split.rows(lanes.len, width);
        for (o, s) in data.chunks_mut(slab).enumerate() {
            per_group.push(inits(o).and_then(|init| scan_chunked(m, s, width, init, how, rows)));
        }
    }
    concat(per_group, lanes.count())
}

/// Each lane of `data` folded from the identity, in lane order, where [`dense_width`] gave
/// `width`.
pub(crate) fn reduce<M: Monoid>(
    m: &M,
    lanes: &Lanes,
    width: usize,
    data: &[M::Elem],
    split: Split,
) -> Result<Vec<M::Elem>> {
    let slab = lanes.len * width;
    let data = &data[..lanes.outer * slab];
    let mut per_group: Vec<Result<Vec<M::Elem>>> = alloc::with_capacity(lanes.outer)?;
    if split.by_group(lanes.outer, lanes.len, width) {
        data.par_chunks(slab)
            .map(|s| fold(m, s, width, true))
            .collect_into_vec(&mut per_group);
    } else {
        let chunk = split.rows(lanes.len, width) * width;
        for s in data.chunks(slab) {
            let mut parts: Vec<Result<Vec<M::Elem>>> =
                alloc::with_capacity(s.len().div_ceil(chunk))?;
            s.par_chunks(chunk)
                .map(|c| fold(m, c, width, true))
                .collect_into_vec(&mut parts);
            let mut acc = alloc::filled(width, m.identity())?;
            for p in parts {
                combine_rows(m, &mut acc, &p?, false);
            }
            per_group.push(Ok(acc));
        }
    }
    concat(per_group, lanes.count())
}

/// The per-group totals `per_group`, `count` in all, one after another.
fn concat<T>(per_group: Vec<Result<Vec<T>>>, count: usize) -> Result<Vec<T>> {
    let mut totals = alloc::with_capacity(count)?;
    for t in per_group {
        totals.extend(t?);
    }
    Ok(totals)
}

/// One group of lanes (`slab`: whole rows of `width`) scanned in chunks of `rows` rows, in
/// three phases; returns the lanes' totals.
fn scan_chunked<M: Monoid>(
    m: &M,
    slab: &mut [M::Elem],
    width: usize,
    init: Option<Vec<M::Elem>>,
    how: &LaneScan<M::Elem>,
    rows: usize,
) -> Result<Vec<M::Elem>> {
    let chunk = rows * width;
    let chunks = slab.len().div_ceil(chunk);
    // Each chunk's per-lane totals, in sequence order.
    let mut totals: Vec<Result<Vec<M::Elem>>> = alloc::with_capacity(chunks)?;
    slab.par_chunks(chunk)
        .map(|c| fold(m, c, width, false))
        .collect_into_vec(&mut totals);
    // Each chunk's carry: forwards, the initial values and the totals of the chunks before it;
    // backwards, the totals of the chunks after it and the initial values, on the right.
    let mut carries: Vec<Option<Vec<M::Elem>>> = alloc::with_capacity(chunks)?;
    carries.resize(chunks, None);
    let mut carry = init;
    for i in 0..chunks {
        let c = if how.reverse { chunks - 1 - i } else { i };
        let total = std::mem::replace(&mut totals[c], Ok(Vec::new()))?;
        carries[c] = match &carry {
            Some(a) => Some(alloc::to_vec(a)?),
            None => None,
        };
        carry = Some(match carry {
            None => total,
            Some(mut a) => {
                combine_rows(m, &mut a, &total, how.reverse);
                a
            }
        });
    }
    // Each chunk scanned from its carry.
    let mut done: Vec<Result<Vec<M::Elem>>> = alloc::with_capacity(chunks)?;
    slab.par_chunks_mut(chunk)
        .zip(carries.into_par_iter())
        .map(|(c, from)| walk(m, c, width, from, how))
        .collect_into_vec(&mut done);
    for d in done {
        d?;
    }
    carry.ok_or_else(no_rows)
}

/// `acc[j] = acc[j] ⊕ xs[j]`, or `xs[j] ⊕ acc[j]` when `xs` comes first.
fn combine_rows<M: Monoid>(m: &M, acc: &mut [M::Elem], xs: &[M::Elem], xs_first: bool) {
    for (a, x) in acc.iter_mut().zip(xs) {
        *a = if xs_first {
            m.combine(x, a)
        } else {
            m.combine(a, x)
        };
    }
}

/// The per-lane folds of `rows` (whole rows of `width`, at least one), in sequence order: from
/// the first row, or from the identity (as the sequential reference reduces).
fn fold<M: Monoid>(
    m: &M,
    rows: &[M::Elem],
    width: usize,
    from_identity: bool,
) -> Result<Vec<M::Elem>> {
    match width {
        2 => fold_as::<M, [M::Elem; 2]>(m, rows, width, from_identity),
        3 => fold_as::<M, [M::Elem; 3]>(m, rows, width, from_identity),
        4 => fold_as::<M, [M::Elem; 4]>(m, rows, width, from_identity),
        _ => fold_as::<M, Vec<M::Elem>>(m, rows, width, from_identity),
    }
}

/// [`fold`] with running values of type `A`.
fn fold_as<M: Monoid, A: Running<M::Elem>>(
    m: &M,
    rows: &[M::Elem],
    width: usize,
    from_identity: bool,
) -> Result<Vec<M::Elem>> {
    let mut it = rows.chunks_exact(A::WIDTH.unwrap_or(width));
    let mut acc = if from_identity {
        A::filled(width, m.identity())?
    } else {
        A::of(it.next().ok_or_else(no_rows)?)?
    };
    for row in it {
        for (a, x) in acc.lanes().iter_mut().zip(row) {
            *a = m.combine(a, x);
        }
    }
    acc.into_vec()
}

/// Scans `rows` (whole rows of `width`) in place as `how` says, from the running values
/// `from` (`None`: an inclusive scan's first rows, the first row its own prefix); returns the
/// running values after the last row walked.
fn walk<M: Monoid>(
    m: &M,
    rows: &mut [M::Elem],
    width: usize,
    from: Option<Vec<M::Elem>>,
    how: &LaneScan<M::Elem>,
) -> Result<Vec<M::Elem>> {
    match width {
        2 => walk_kind::<M, [M::Elem; 2]>(m, rows, width, from, how),
        3 => walk_kind::<M, [M::Elem; 3]>(m, rows, width, from, how),
        4 => walk_kind::<M, [M::Elem; 4]>(m, rows, width, from, how),
        _ => walk_kind::<M, Vec<M::Elem>>(m, rows, width, from, how),
    }
}

/// [`walk`] with running values of type `A`, for the direction and kind of `how`.
fn walk_kind<M: Monoid, A: Running<M::Elem>>(
    m: &M,
    rows: &mut [M::Elem],
    width: usize,
    from: Option<Vec<M::Elem>>,
    how: &LaneScan<M::Elem>,
) -> Result<Vec<M::Elem>> {
    match (how.reverse, how.init.is_some()) {
        (false, false) => walk_as::<M, A, false, false>(m, rows, width, from),
        (false, true) => walk_as::<M, A, false, true>(m, rows, width, from),
        (true, false) => walk_as::<M, A, true, false>(m, rows, width, from),
        (true, true) => walk_as::<M, A, true, true>(m, rows, width, from),
    }
}

/// [`walk`] for one type of running values, one direction and one kind, so that the loop over
/// a row has no branch.
fn walk_as<M: Monoid, A: Running<M::Elem>, const REVERSE: bool, const EXCLUSIVE: bool>(
    m: &M,
    rows: &mut [M::Elem],
    width: usize,
    from: Option<Vec<M::Elem>>,
) -> Result<Vec<M::Elem>> {
    let lane = |x: &mut M::Elem, a: &mut M::Elem| {
        let with = if REVERSE {
            m.combine(x, a)
        } else {
            m.combine(a, x)
        };
        *x = if EXCLUSIVE { *a } else { with };
        *a = with;
    };
    // Backwards, each row is walked from its end too, so that memory is read in one direction.
    let step = |row: &mut [M::Elem], acc: &mut A| {
        let pairs = row.iter_mut().zip(acc.lanes().iter_mut());
        if REVERSE {
            pairs.rev().for_each(|(x, a)| lane(x, a));
        } else {
            pairs.for_each(|(x, a)| lane(x, a));
        }
    };
    let mut it = rows.chunks_exact_mut(A::WIDTH.unwrap_or(width));
    // Without running values, the first row walked is its own prefix.
    let mut acc = match from {
        Some(v) => A::of(&v)?,
        None => {
            let first = if REVERSE { it.next_back() } else { it.next() };
            A::of(first.ok_or_else(no_rows)?)?
        }
    };
    if REVERSE {
        it.rev().for_each(|row| step(row, &mut acc));
    } else {
        it.for_each(|row| step(row, &mut acc));
    }
    acc.into_vec()
}

/// A group's running values, one per lane: a vector, or for the narrowest rows an array,
/// which the compiler keeps in registers (8,388,608 x 2 f32 columns scanned down on a 2-core
/// machine: about 38 ms with a vector, 12–20 ms with an array).
trait Running<T>: Sized {
    /// Lanes in a row, where the type fixes them.
    const WIDTH: Option<usize>;
    /// A copy of `row`.
    fn of(row: &[T]) -> Result<Self>;
    /// `width` copies of `x`.
    fn filled(width: usize, x: T) -> Result<Self>;
    /// The values, in lane order.
    fn lanes(&mut self) -> &mut [T];
    /// The values as a vector.
    fn into_vec(self) -> Result<Vec<T>>;
}

impl<T: Copy> Running<T> for Vec<T> {
    const WIDTH: Option<usize> = None;
    fn of(row: &[T]) -> Result<Self> {
        alloc::to_vec(row)
    }
    fn filled(width: usize, x: T) -> Result<Self> {
        alloc::filled(width, x)
    }
    fn lanes(&mut self) -> &mut [T] {
        self
    }
    fn into_vec(self) -> Result<Vec<T>> {
        Ok(self)
    }
}

impl<T: Copy, const W: usize> Running<T> for [T; W] {
    const WIDTH: Option<usize> = Some(W);
    fn of(row: &[T]) -> Result<Self> {
        row.try_into().map_err(|_| no_rows())
    }
    fn filled(_: usize, x: T) -> Result<Self> {
        Ok([x; W])
    }
    fn lanes(&mut self) -> &mut [T] {
        self
    }
    fn into_vec(self) -> Result<Vec<T>> {
        alloc::to_vec(&self)
    }
}

/// The error of a fold handed no rows, or running values of another width: the callers never
/// do either.
fn no_rows() -> Error {
    Error::invalid("internal: a lane fold over no rows or of another width")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_layouts_are_axes_before_the_last() {
        let axis = |shape: &[usize], a| dense_width(&Lanes::axis(shape, a).unwrap());
        assert_eq!(axis(&[1000, 3], 0), Some(3));
        assert_eq!(axis(&[4, 50, 3], 1), Some(3));
        assert_eq!(axis(&[4, 50, 3], 0), Some(150));
        // The last axis is rows; one column is one contiguous lane; no rows, no lanes.
        assert_eq!(axis(&[4, 50, 3], 2), None);
        assert_eq!(axis(&[1000, 1], 0), None);
        assert_eq!(axis(&[0, 3], 0), None);
        // Strided views: the rows of a transposed matrix, every other column.
        assert_eq!(
            dense_width(&Lanes::strided(&[9, 6], &[1, 9], 1).unwrap()),
            None
        );
        let every_other = Lanes {
            outer: 1,
            len: 10,
            inner: 4,
            outer_stride: 0,
            stride: 8,
            inner_stride: 2,
        };
        assert_eq!(dense_width(&every_other), None);
    }

    #[test]
    fn chunks_hold_whole_rows_of_at_least_min_chunk() {
        let split = Split {
            pieces: 8,
            min_chunk: 4096,
        };
        // 1,000,000 rows of 2: an eighth each; 10 rows of 3: one chunk of every row.
        assert_eq!(split.rows(1_000_000, 2), 125_000);
        assert_eq!(split.rows(10, 3), 1366);
        assert!(split.by_group(1, 10, 3));
        assert!(!split.by_group(1, 1_000_000, 2));
        assert!(split.by_group(8, 1_000_000, 2));
        // Rows wider than a chunk's share: one row each.
        assert_eq!(split.rows(100, 10_000), 13);
        assert_eq!(split.rows(4, 10_000), 1);
    }
}
