//! The rows of lanes that lie side by side ([`Grid`]), and the per-lane folds and in-place
//! scans of a run of them, one running value per lane, forwards or from the end.

use crate::alloc;
use crate::error::{Error, Result};
use crate::lanes::LaneScan;
use crate::monoid::Monoid;

/// Where the lanes of a row sit: `runs` runs of `width` lanes one element apart, the runs
/// `run_pitch` elements apart (one run of all the row's lanes where they are neighbours, runs
/// of one lane for every other column); rows `pitch` elements apart (`width` where rows are
/// packed, more in a view of some columns of a wider array).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    pub width: usize,
    pub runs: usize,
    pub run_pitch: usize,
    pub pitch: usize,
}

impl Grid {
    /// Lanes in a row.
    pub(super) fn lanes(&self) -> usize {
        self.width * self.runs
    }

    /// Elements from a row's first lane to its last, both included.
    pub(super) fn reach(&self) -> usize {
        (self.runs - 1) * self.run_pitch + self.width
    }

    /// The rows of `data` (whole rows of `pitch` elements, the last possibly ending after its
    /// lanes), each cut to its reach: every row but the last in exact steps of `pitch` (no
    /// division per row, which `chunks` pays walking from the end), then the last.
    fn rows<'a, T>(&self, data: &'a [T]) -> impl DoubleEndedIterator<Item = &'a [T]> {
        let reach = self.reach();
        let (body, last) = data.split_at(self.before_last(data.len()));
        body.chunks_exact(self.pitch)
            .map(move |r| &r[..reach])
            .chain(std::iter::once(&last[..reach.min(last.len())]))
    }

    /// [`Grid::rows`], mutable.
    fn rows_mut<'a, T>(&self, data: &'a mut [T]) -> impl DoubleEndedIterator<Item = &'a mut [T]> {
        let reach = self.reach();
        let (body, last) = data.split_at_mut(self.before_last(data.len()));
        let cut = reach.min(last.len());
        body.chunks_exact_mut(self.pitch)
            .map(move |r| &mut r[..reach])
            .chain(std::iter::once(&mut last[..cut]))
    }

    /// The elements of the rows before the last of `len` elements of rows.
    fn before_last(&self, len: usize) -> usize {
        len.saturating_sub(self.reach()) / self.pitch * self.pitch
    }

    /// The lanes of `row` (a row cut to its reach), in memory order.
    fn lanes_of<'a, T>(&self, row: &'a [T]) -> impl DoubleEndedIterator<Item = &'a T> {
        let width = self.width;
        row.chunks(self.run_pitch).flat_map(move |r| &r[..width])
    }

    /// [`Grid::lanes_of`], mutable.
    fn lanes_of_mut<'a, T>(&self, row: &'a mut [T]) -> impl DoubleEndedIterator<Item = &'a mut T> {
        let width = self.width;
        row.chunks_mut(self.run_pitch)
            .flat_map(move |r| r[..width].iter_mut())
    }
}

/// The per-lane folds of `rows` (rows on `grid`, at least one), in sequence order: from the
/// first row, or from the identity (as the sequential reference reduces).
pub(super) fn fold<M: Monoid>(
    m: &M,
    rows: &[M::Elem],
    grid: Grid,
    from_identity: bool,
) -> Result<Vec<M::Elem>> {
    if grid.runs > 1 && grid.width == 1 {
        let it = grid.rows(rows).map(|r| r.iter().step_by(grid.run_pitch));
        return fold_rows::<M, Vec<M::Elem>, _>(m, it, grid.lanes(), from_identity);
    }
    if grid.runs > 1 {
        let it = grid.rows(rows).map(|r| grid.lanes_of(r));
        return fold_rows::<M, Vec<M::Elem>, _>(m, it, grid.lanes(), from_identity);
    }
    match grid.width {
        2 => fold_as::<M, [M::Elem; 2]>(m, rows, grid, from_identity),
        3 => fold_as::<M, [M::Elem; 3]>(m, rows, grid, from_identity),
        4 => fold_as::<M, [M::Elem; 4]>(m, rows, grid, from_identity),
        _ => fold_as::<M, Vec<M::Elem>>(m, rows, grid, from_identity),
    }
}

/// [`fold`] of rows of one run, with running values of type `A`: packed rows in exact steps
/// of their width (a constant where `A` fixes it), padded ones through [`Grid::rows`].
fn fold_as<M: Monoid, A: Running<M::Elem>>(
    m: &M,
    rows: &[M::Elem],
    grid: Grid,
    from_identity: bool,
) -> Result<Vec<M::Elem>> {
    if grid.pitch == grid.width {
        let it = rows.chunks_exact(A::WIDTH.unwrap_or(grid.width));
        fold_rows::<M, A, _>(m, it.map(<[_]>::iter), grid.width, from_identity)
    } else {
        let it = grid.rows(rows).map(<[_]>::iter);
        fold_rows::<M, A, _>(m, it, grid.width, from_identity)
    }
}

/// [`fold`] of the rows `it` of `width` lanes, each given as its lanes in order.
fn fold_rows<'a, M: Monoid, A: Running<M::Elem>, L: Iterator<Item = &'a M::Elem>>(
    m: &M,
    mut it: impl Iterator<Item = L>,
    width: usize,
    from_identity: bool,
) -> Result<Vec<M::Elem>> {
    let mut acc = if from_identity {
        A::filled(width, m.identity())?
    } else {
        A::of(it.next().ok_or_else(no_rows)?, width)?
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
pub(super) fn walk<M: Monoid>(
    m: &M,
    rows: &mut [M::Elem],
    grid: Grid,
    from: Option<Vec<M::Elem>>,
    how: &LaneScan<M::Elem>,
) -> Result<Vec<M::Elem>> {
    if grid.runs > 1 {
        return walk_kind::<M, Vec<M::Elem>>(m, rows, grid, from, how);
    }
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
/// it), padded ones through [`Grid::rows_mut`], lanes evenly apart in steps, and rows of
/// several runs through [`Grid::lanes_of_mut`].
fn walk_as<M: Monoid, A: Running<M::Elem>, const REVERSE: bool, const EXCLUSIVE: bool>(
    m: &M,
    rows: &mut [M::Elem],
    grid: Grid,
    from: Option<Vec<M::Elem>>,
) -> Result<Vec<M::Elem>> {
    let width = grid.lanes();
    if grid.runs > 1 && grid.width == 1 {
        let it = grid.rows_mut(rows).map(|r| Spaced::new(r, grid.run_pitch));
        walk_rows::<M, A, _, REVERSE, EXCLUSIVE>(m, it, width, from)
    } else if grid.runs > 1 {
        let it = grid.rows_mut(rows).map(|r| grid.lanes_of_mut(r));
        walk_rows::<M, A, _, REVERSE, EXCLUSIVE>(m, it, width, from)
    } else if grid.pitch == grid.width {
        let it = rows.chunks_exact_mut(A::WIDTH.unwrap_or(width));
        walk_rows::<M, A, _, REVERSE, EXCLUSIVE>(m, it.map(<[_]>::iter_mut), width, from)
    } else {
        let it = grid.rows_mut(rows).map(<[_]>::iter_mut);
        walk_rows::<M, A, _, REVERSE, EXCLUSIVE>(m, it, width, from)
    }
}

/// [`walk_as`] over the rows `it` of `width` lanes, each given as its lanes in order.
fn walk_rows<'a, M, A, L, const REVERSE: bool, const EXCLUSIVE: bool>(
    m: &M,
    mut it: impl DoubleEndedIterator<Item = L>,
    width: usize,
    from: Option<Vec<M::Elem>>,
) -> Result<Vec<M::Elem>>
where
    M: Monoid,
    M::Elem: 'a,
    A: Running<M::Elem>,
    L: DoubleEndedIterator<Item = &'a mut M::Elem>,
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
    let step = |row: L, acc: &mut A| {
        let lanes = acc.lanes();
        if REVERSE {
            row.rev()
                .zip(lanes.iter_mut().rev())
                .for_each(|(x, a)| lane(x, a));
        } else {
            row.zip(lanes.iter_mut()).for_each(|(x, a)| lane(x, a));
        }
    };
    // Without running values, the first row walked is its own prefix.
    let mut acc = match from {
        Some(v) => A::of(v.iter(), width)?,
        None => {
            let first = if REVERSE { it.next_back() } else { it.next() };
            A::of(first.ok_or_else(no_rows)?.map(|x| &*x), width)?
        }
    };
    if REVERSE {
        it.rev().for_each(|row| step(row, &mut acc));
    } else {
        it.for_each(|row| step(row, &mut acc));
    }
    acc.into_vec()
}

/// The lanes of a row of lanes evenly apart (cut to its reach: a lane at each end), from
/// either end, each step a split of the row: `step_by` finds each lane from the end by a
/// division (every other column of (524,288 x 32) f32 scanned down in reverse on two cores:
/// 21.5 ms that way, 8.9 to 9.9 ms by splits, about as fast as forwards).
struct Spaced<'a, T> {
    row: &'a mut [T],
    step: usize,
}

impl<'a, T> Spaced<'a, T> {
    fn new(row: &'a mut [T], step: usize) -> Self {
        Spaced { row, step }
    }
}

impl<'a, T> Iterator for Spaced<'a, T> {
    type Item = &'a mut T;

    fn next(&mut self) -> Option<&'a mut T> {
        let (first, rest) = std::mem::take(&mut self.row).split_first_mut()?;
        self.row = rest.get_mut(self.step - 1..).unwrap_or_default();
        Some(first)
    }
}

impl<T> DoubleEndedIterator for Spaced<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (last, rest) = std::mem::take(&mut self.row).split_last_mut()?;
        let keep = (rest.len() + 1).saturating_sub(self.step);
        self.row = &mut rest[..keep];
        Some(last)
    }
}

/// A group's running values, one per lane: a vector, or for the narrowest rows an array,
/// which the compiler keeps in registers (8,388,608 x 2 f32 columns scanned down on a 2-core
/// machine: about 38 ms with a vector, 12–20 ms with an array).
trait Running<T>: Sized {
    /// Lanes in a row, where the type fixes them.
    const WIDTH: Option<usize>;
    /// The `width` values of `row`, in order.
    fn of<'a>(row: impl Iterator<Item = &'a T>, width: usize) -> Result<Self>
    where
        T: 'a;
    /// `width` copies of `x`.
    fn filled(width: usize, x: T) -> Result<Self>;
    /// The values, in lane order.
    fn lanes(&mut self) -> &mut [T];
    /// The values as a vector.
    fn into_vec(self) -> Result<Vec<T>>;
}

impl<T: Copy> Running<T> for Vec<T> {
    const WIDTH: Option<usize> = None;
    fn of<'a>(row: impl Iterator<Item = &'a T>, width: usize) -> Result<Self>
    where
        T: 'a,
    {
        let mut v = alloc::with_capacity(width)?;
        v.extend(row.copied());
        if v.len() != width {
            return Err(no_rows());
        }
        Ok(v)
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
    fn of<'a>(mut row: impl Iterator<Item = &'a T>, _: usize) -> Result<Self>
    where
        T: 'a,
    {
        let first = *row.next().ok_or_else(no_rows)?;
        let mut a = [first; W];
        let mut n = 1;
        for (x, y) in a[1..].iter_mut().zip(row.by_ref()) {
            *x = *y;
            n += 1;
        }
        if n != W || row.next().is_some() {
            return Err(no_rows());
        }
        Ok(a)
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
pub(super) fn no_rows() -> Error {
    Error::invalid("internal: a lane fold over no rows or of another width")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaced_lanes_come_in_order_from_either_end() {
        for (lanes, step) in [(1, 1), (1, 3), (4, 1), (4, 2), (5, 3)] {
            let mut row: Vec<usize> = (0..(lanes - 1) * step + 1).collect();
            let want: Vec<usize> = (0..lanes).map(|l| l * step).collect();
            let got: Vec<usize> = Spaced::new(&mut row, step).map(|x| *x).collect();
            assert_eq!(got, want, "{lanes} lanes {step} apart");
            let back: Vec<usize> = Spaced::new(&mut row, step).rev().map(|x| *x).collect();
            assert_eq!(back, want.iter().rev().copied().collect::<Vec<_>>());
            // From both ends at once.
            let mut it = Spaced::new(&mut row, step);
            let (a, b) = (it.next().map(|x| *x), it.next_back().map(|x| *x));
            assert_eq!(a, Some(0));
            assert_eq!(b, (lanes > 1).then_some((lanes - 1) * step));
            assert_eq!(it.count(), lanes.saturating_sub(2));
        }
    }
}
