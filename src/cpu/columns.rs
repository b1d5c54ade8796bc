//! The parallel backend's lanes that lie across memory: an axis of a contiguous tensor other
//! than its last (a row-major matrix's columns scanned down), or a view of some of those
//! columns or of groups of them lying apart, whose lanes sit side by side and advance a row at
//! a time. Gathering one such lane reads one element per cache line,
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

/// Where the rows of lanes that lie side by side sit: `width` lanes, one element apart, their
/// rows `pitch` elements apart (`width` where rows are packed, more in a view of some columns of
/// a wider array).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    pub width: usize,
    pub pitch: usize,
}

impl Grid {
    /// The rows of `data` (whole rows of `pitch` elements, the last possibly ending after its
    /// lanes), each cut to its lanes: every row but the last in exact steps of `pitch` (no
    /// division per row, which `chunks` pays walking from the end), then the last.
    fn rows<'a, T>(&self, data: &'a [T]) -> impl DoubleEndedIterator<Item = &'a [T]> {
        let width = self.width;
        let (body, last) = data.split_at(self.before_last(data.len()));
        body.chunks_exact(self.pitch)
            .map(move |r| &r[..width])
            .chain(std::iter::once(&last[..width.min(last.len())]))
    }

    /// [`Grid::rows`], mutable.
    fn rows_mut<'a, T>(&self, data: &'a mut [T]) -> impl DoubleEndedIterator<Item = &'a mut [T]> {
        let width = self.width;
        let (body, last) = data.split_at_mut(self.before_last(data.len()));
        let cut = width.min(last.len());
        body.chunks_exact_mut(self.pitch)
            .map(move |r| &mut r[..width])
            .chain(std::iter::once(&mut last[..cut]))
    }

    /// The elements of the rows before the last of `len` elements of rows.
    fn before_last(&self, len: usize) -> usize {
        len.saturating_sub(self.width) / self.pitch * self.pitch
    }
}

/// The grid of `lanes` where they lie side by side across memory: `inner` lanes one element
/// apart (`inner_stride` 1), each advancing a row of at least `inner` elements
/// (`stride >= inner`), each group of lanes after the last one's rows (`outer_stride >= len *
/// stride`). `None` for every other layout, for single lanes and for empty ones.
pub(crate) fn side_by_side(lanes: &Lanes) -> Option<Grid> {
    let w = lanes.inner;
    let slab = lanes.len.checked_mul(lanes.stride)?;
    let fits = w >= 2
        && lanes.len >= 1
        && lanes.outer >= 1
        && lanes.inner_stride == 1
        && lanes.stride >= w
        && (lanes.outer == 1 || lanes.outer_stride >= slab);
    fits.then_some(Grid {
        width: w,
        pitch: lanes.stride,
    })
}

/// Where the groups of `lanes` on `grid` lie: (elements from one group's start to the next's,
/// elements of a group's rows). The first is at least the second.
fn groups(lanes: &Lanes, grid: Grid) -> (usize, usize) {
    let extent = (lanes.len - 1) * grid.pitch + grid.width;
    let step = if lanes.outer > 1 {
        lanes.outer_stride
    } else {
        lanes.len * grid.pitch
    };
    (step, extent)
}

/// Scans the lanes of `data` in place as `how` says, where [`side_by_side`] gave `grid`;
/// returns the lanes' totals in lane order.
pub(crate) fn scan<M: Monoid>(
    m: &M,
    lanes: &Lanes,
    grid: Grid,
    data: &mut [M::Elem],
    how: &LaneScan<M::Elem>,
    split: Split,
) -> Result<Vec<M::Elem>> {
    let width = grid.width;
    let (step, extent) = groups(lanes, grid);
    let data = &mut data[..lanes.span()];
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
        data.par_chunks_mut(step)
            .enumerate()
            .map(|(o, s)| walk(m, &mut s[..extent], grid, inits(o)?, how))
            .collect_into_vec(&mut per_group);
    } else {
        let rows = split.rows(lanes.len, width);
        for (o, s) in data.chunks_mut(step).enumerate() {
            let s = &mut s[..extent];
            per_group.push(inits(o).and_then(|init| scan_chunked(m, s, grid, init, how, rows)));
        }
    }
    concat(per_group, lanes.count())
}

/// Each lane of `data` folded from the identity, in lane order, where [`side_by_side`] gave
/// `grid`.
pub(crate) fn reduce<M: Monoid>(
    m: &M,
    lanes: &Lanes,
    grid: Grid,
    data: &[M::Elem],
    split: Split,
) -> Result<Vec<M::Elem>> {
    let width = grid.width;
    let (step, extent) = groups(lanes, grid);
    let data = &data[..lanes.span()];
    let mut per_group: Vec<Result<Vec<M::Elem>>> = alloc::with_capacity(lanes.outer)?;
    if split.by_group(lanes.outer, lanes.len, width) {
        data.par_chunks(step)
            .map(|s| fold(m, &s[..extent], grid, true))
            .collect_into_vec(&mut per_group);
    } else {
        let chunk = split.rows(lanes.len, width) * grid.pitch;
        for s in data.chunks(step) {
            let s = &s[..extent];
            let mut parts: Vec<Result<Vec<M::Elem>>> =
                alloc::with_capacity(s.len().div_ceil(chunk))?;
            s.par_chunks(chunk)
                .map(|c| fold(m, c, grid, true))
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

/// One group of lanes (`slab`: its rows on `grid`) scanned in chunks of `rows` rows, in three
/// phases; returns the lanes' totals.
fn scan_chunked<M: Monoid>(
    m: &M,
    slab: &mut [M::Elem],
    grid: Grid,
    init: Option<Vec<M::Elem>>,
    how: &LaneScan<M::Elem>,
    rows: usize,
) -> Result<Vec<M::Elem>> {
    let chunk = rows * grid.pitch;
    let chunks = slab.len().div_ceil(chunk);
    // Each chunk's per-lane totals, in sequence order.
    let mut totals: Vec<Result<Vec<M::Elem>>> = alloc::with_capacity(chunks)?;
    slab.par_chunks(chunk)
        .map(|c| fold(m, c, grid, false))
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
        .map(|(c, from)| walk(m, c, grid, from, how))
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

/// The per-lane folds of `rows` (rows on `grid`, at least one), in sequence order: from the
/// first row, or from the identity (as the sequential reference reduces).
fn fold<M: Monoid>(
    m: &M,
    rows: &[M::Elem],
    grid: Grid,
    from_identity: bool,
) -> Result<Vec<M::Elem>> {
    match grid.width {
        2 => fold_as::<M, [M::Elem; 2]>(m, rows, grid, from_identity),
        3 => fold_as::<M, [M::Elem; 3]>(m, rows, grid, from_identity),
        4 => fold_as::<M, [M::Elem; 4]>(m, rows, grid, from_identity),
        _ => fold_as::<M, Vec<M::Elem>>(m, rows, grid, from_identity),
    }
}

/// [`fold`] with running values of type `A`: packed rows in exact steps of their width (a
/// constant where `A` fixes it), padded ones through [`Grid::rows`].
fn fold_as<M: Monoid, A: Running<M::Elem>>(
    m: &M,
    rows: &[M::Elem],
    grid: Grid,
    from_identity: bool,
) -> Result<Vec<M::Elem>> {
    if grid.pitch == grid.width {
        let it = rows.chunks_exact(A::WIDTH.unwrap_or(grid.width));
        fold_rows::<M, A>(m, it, grid.width, from_identity)
    } else {
        fold_rows::<M, A>(m, grid.rows(rows), grid.width, from_identity)
    }
}

/// [`fold`] of the rows `it` of `width` lanes.
fn fold_rows<'a, M: Monoid, A: Running<M::Elem>>(
    m: &M,
    mut it: impl Iterator<Item = &'a [M::Elem]>,
    width: usize,
    from_identity: bool,
) -> Result<Vec<M::Elem>> {
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

/// Scans `rows` (rows on `grid`) in place as `how` says, from the running values `from`
/// (`None`: an inclusive scan's first rows, the first row its own prefix); returns the running
/// values after the last row walked.
fn walk<M: Monoid>(
    m: &M,
    rows: &mut [M::Elem],
    grid: Grid,
    from: Option<Vec<M::Elem>>,
    how: &LaneScan<M::Elem>,
) -> Result<Vec<M::Elem>> {
    match grid.width {
        2 => walk_kind::<M, [M::Elem; 2]>(m, rows, grid, from, how),
        3 => walk_kind::<M, [M::Elem; 3]>(m, rows, grid, from, how),
        4 => walk_kind::<M, [M::Elem; 4]>(m, rows, grid, from, how),
        _ => walk_kind::<M, Vec<M::Elem>>(m, rows, grid, from, how),
    }
}

/// [`walk`] with running values of type `A`, for the direction and kind of `how`.
fn walk_kind<M: Monoid, A: Running<M::Elem>>(
    m: &M,
    rows: &mut [M::Elem],
    grid: Grid,
    from: Option<Vec<M::Elem>>,
    how: &LaneScan<M::Elem>,
) -> Result<Vec<M::Elem>> {
    match (how.reverse, how.init.is_some()) {
        (false, false) => walk_as::<M, A, false, false>(m, rows, grid, from),
        (false, true) => walk_as::<M, A, false, true>(m, rows, grid, from),
        (true, false) => walk_as::<M, A, true, false>(m, rows, grid, from),
        (true, true) => walk_as::<M, A, true, true>(m, rows, grid, from),
    }
}

/// [`walk`] for one type of running values, one direction and one kind, so that the loop over
/// a row has no branch: packed rows in exact steps of their width (a constant where `A` fixes
/// it), padded ones through [`Grid::rows_mut`].
fn walk_as<M: Monoid, A: Running<M::Elem>, const REVERSE: bool, const EXCLUSIVE: bool>(
    m: &M,
    rows: &mut [M::Elem],
    grid: Grid,
    from: Option<Vec<M::Elem>>,
) -> Result<Vec<M::Elem>> {
    if grid.pitch == grid.width {
        let it = rows.chunks_exact_mut(A::WIDTH.unwrap_or(grid.width));
        walk_rows::<M, A, REVERSE, EXCLUSIVE>(m, it, from)
    } else {
        walk_rows::<M, A, REVERSE, EXCLUSIVE>(m, grid.rows_mut(rows), from)
    }
}

/// [`walk_as`] over the rows `it`.
fn walk_rows<'a, M: Monoid, A: Running<M::Elem>, const REVERSE: bool, const EXCLUSIVE: bool>(
    m: &M,
    mut it: impl DoubleEndedIterator<Item = &'a mut [M::Elem]>,
    from: Option<Vec<M::Elem>>,
) -> Result<Vec<M::Elem>>
where
    M::Elem: 'a,
{
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
    fn lanes_side_by_side_are_axes_before_the_last_and_views_of_columns() {
        let axis = |shape: &[usize], a| side_by_side(&Lanes::axis(shape, a).unwrap());
        let packed = |width| {
            Some(Grid {
                width,
                pitch: width,
            })
        };
        assert_eq!(axis(&[1000, 3], 0), packed(3));
        assert_eq!(axis(&[4, 50, 3], 1), packed(3));
        assert_eq!(axis(&[4, 50, 3], 0), packed(150));
        // Three of the five columns of a 200 x 5 matrix, and of 4 x 50 x 4 slabs, one after
        // another or apart; groups that overlap each other's rows are not.
        let padded = Some(Grid { width: 3, pitch: 5 });
        assert_eq!(
            side_by_side(&Lanes::strided(&[200, 3], &[5, 1], 0).unwrap()),
            padded
        );
        assert_eq!(
            side_by_side(&Lanes::strided(&[4, 50, 3], &[200, 4, 1], 1).unwrap()),
            Some(Grid { width: 3, pitch: 4 })
        );
        assert_eq!(
            side_by_side(&Lanes::strided(&[4, 50, 3], &[300, 4, 1], 1).unwrap()),
            Some(Grid { width: 3, pitch: 4 })
        );
        let interleaved = Lanes::strided(&[4, 50, 3], &[4, 16, 1], 1).unwrap();
        assert_eq!(side_by_side(&interleaved), None);
        // The last axis is rows; one column is one contiguous lane; no rows, no lanes.
        assert_eq!(axis(&[4, 50, 3], 2), None);
        assert_eq!(axis(&[1000, 1], 0), None);
        assert_eq!(axis(&[0, 3], 0), None);
        // Strided views: the rows of a transposed matrix (until normalized), every other
        // column.
        let transposed = Lanes::strided(&[9, 6], &[1, 9], 1).unwrap();
        assert_eq!(side_by_side(&transposed), None);
        assert_eq!(side_by_side(&transposed.normalized()), packed(9));
        let every_other = Lanes {
            outer: 1,
            len: 10,
            inner: 4,
            outer_stride: 0,
            stride: 8,
            inner_stride: 2,
        };
        assert_eq!(side_by_side(&every_other), None);
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
