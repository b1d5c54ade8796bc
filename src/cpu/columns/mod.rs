//! The parallel backend's lanes that lie across memory: an axis of a contiguous tensor other
//! than its last (a row-major matrix's columns scanned down), or a view of some of those
//! columns (every other one, or groups of them, side by side in each row or lying apart),
//! whose lanes sit side by side and advance a row at a time. Gathering one such lane reads one
//! element per cache line, and every lane reads the same lines again, so these scans walk the
//! rows in memory order with one running value per lane instead. They split the rows among
//! threads as the 1-D scan splits its input: each chunk of rows folded into per-lane totals,
//! the totals scanned into carries, each chunk scanned from its carry. Every lane keeps
//! sequence order, so the results are those of the sequential reference for any monoid
//! (floats up to where their roundings fall).

mod grid;

use crate::alloc;
use crate::error::Result;
use crate::lanes::{Inits, LaneScan, Lanes};
use crate::monoid::Monoid;
use grid::{fold, no_rows, walk, Grid};
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

/// A dimension of lanes: `count` of them, `stride` elements apart, `weight` apart in lane
/// order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dim {
    count: usize,
    stride: usize,
    weight: usize,
}

/// A dimension of one lane, which takes any place.
const ONE: Dim = Dim {
    count: 1,
    stride: 1,
    weight: 0,
};

/// How lanes that lie side by side are walked: `groups` groups `step` elements apart, each
/// `len` rows on `grid`. A lane's place in memory order (group, run, place in its run) is its
/// place in lane order where the three dimensions' weights say so (lanes one element apart
/// the neighbours in lane order, and so on up), and is mapped to it otherwise (a transposed
/// view).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Walk {
    pub grid: Grid,
    len: usize,
    groups: usize,
    step: usize,
    /// The weights in lane order of a group, a run, and a lane within its run.
    weights: [usize; 3],
}

impl Walk {
    /// Lanes in all the groups.
    fn count(&self) -> usize {
        self.groups * self.grid.lanes()
    }

    /// Elements of a group's rows.
    fn extent(&self) -> usize {
        (self.len - 1) * self.grid.pitch + self.grid.reach()
    }

    /// The lane of the `at`th lane in memory order.
    fn lane(&self, at: usize) -> usize {
        let (row, width) = (self.grid.lanes(), self.grid.width);
        let [g, r, w] = self.weights;
        at / row * g + at % row / width * r + at % width * w
    }

    /// Whether memory order is lane order.
    fn in_order(&self) -> bool {
        let [g, r, w] = self.weights;
        let grid = self.grid;
        (self.groups == 1 || g == grid.lanes())
            && (grid.runs == 1 || r == grid.width)
            && (grid.width == 1 || w == 1)
    }
}

/// The walk of `lanes` where they lie side by side across memory: every lane's element `k` in
/// row `k`, the rows `stride` apart, and in each row the lanes of one or both dimensions of
/// lanes, as a run of neighbours, runs of them, or lanes evenly apart; the other dimension, if
/// any, groups of such rows each past the last one's rows. `None` for every other layout
/// (among them each lane alone in its rows, as rows scanned along are), for single lanes and
/// for empty ones. The layout must be valid ([`Lanes::validate`]).
pub(crate) fn side_by_side(lanes: &Lanes) -> Option<Walk> {
    if lanes.len == 0 || lanes.count() < 2 {
        return None;
    }
    let dims = [
        Dim {
            count: lanes.outer,
            stride: lanes.outer_stride,
            weight: lanes.inner,
        },
        Dim {
            count: lanes.inner,
            stride: lanes.inner_stride,
            weight: 1,
        },
    ];
    // The dimensions within a row, by stride, and the one across groups of rows.
    let (mut in_row, mut group) = ([ONE; 2], None);
    let mut n = 0;
    for d in dims.into_iter().filter(|d| d.count > 1) {
        if d.stride < lanes.stride {
            in_row[n] = d;
            n += 1;
        } else if group.replace(d).is_some() {
            return None;
        }
    }
    if in_row[0].stride > in_row[1].stride && n == 2 {
        in_row.swap(0, 1);
    }
    let (unit, run) = match (n, in_row) {
        (1, [u, _]) if u.stride == 1 => (u, ONE),
        (1, [r, _]) => (ONE, r),
        (2, [u, r]) if u.stride == 1 => (u, r),
        _ => return None,
    };
    let grid = Grid {
        width: unit.count,
        runs: run.count,
        run_pitch: if run.count > 1 {
            run.stride
        } else {
            unit.count
        },
        pitch: lanes.stride,
    };
    let group = group.unwrap_or(ONE);
    let mut walk = Walk {
        grid,
        len: lanes.len,
        groups: group.count,
        step: 0,
        weights: [group.weight, run.weight, unit.weight],
    };
    walk.step = if group.count > 1 {
        group.stride
    } else {
        walk.extent()
    };
    let fits = grid.run_pitch >= grid.width && grid.pitch >= grid.reach();
    (fits && walk.step >= walk.extent()).then_some(walk)
}

/// Scans the lanes of `data` in place as `how` says, where [`side_by_side`] gave `walk`;
/// returns the lanes' totals in lane order.
pub(crate) fn scan<M: Monoid>(
    m: &M,
    walk: &Walk,
    data: &mut [M::Elem],
    how: &LaneScan<M::Elem>,
    split: Split,
) -> Result<Vec<M::Elem>> {
    let (grid, row) = (walk.grid, walk.grid.lanes());
    let (step, extent) = (walk.step, walk.extent());
    let data = &mut data[..(walk.groups - 1) * step + extent];
    // The initial values of group `o`'s lanes, in memory order.
    let inits = |o: usize| -> Result<Option<Vec<M::Elem>>> {
        match &how.init {
            None => Ok(None),
            Some(Inits::Same(v)) => alloc::filled(row, *v).map(Some),
            Some(Inits::Each(vs)) if walk.in_order() => {
                alloc::to_vec(&vs[o * row..(o + 1) * row]).map(Some)
            }
            Some(Inits::Each(vs)) => {
                alloc::collect((o * row..(o + 1) * row).map(|at| vs[walk.lane(at)])).map(Some)
            }
        }
    };
    let mut per_group: Vec<Result<Vec<M::Elem>>> = alloc::with_capacity(walk.groups)?;
    if split.by_group(walk.groups, walk.len, row) {
        data.par_chunks_mut(step)
            .enumerate()
            .map(|(o, s)| self::walk(m, &mut s[..extent], grid, inits(o)?, how))
            .collect_into_vec(&mut per_group);
    } else {
        let rows = split.rows(walk.len, row);
        for (o, s) in data.chunks_mut(step).enumerate() {
            let s = &mut s[..extent];
            per_group.push(inits(o).and_then(|init| scan_chunked(m, s, grid, init, how, rows)));
        }
    }
    in_lane_order(walk, per_group)
}

/// Each lane of `data` folded from the identity, in lane order, where [`side_by_side`] gave
/// `walk`.
pub(crate) fn reduce<M: Monoid>(
    m: &M,
    walk: &Walk,
    data: &[M::Elem],
    split: Split,
) -> Result<Vec<M::Elem>> {
    let (grid, row) = (walk.grid, walk.grid.lanes());
    let (step, extent) = (walk.step, walk.extent());
    let data = &data[..(walk.groups - 1) * step + extent];
    let mut per_group: Vec<Result<Vec<M::Elem>>> = alloc::with_capacity(walk.groups)?;
    if split.by_group(walk.groups, walk.len, row) {
        data.par_chunks(step)
            .map(|s| fold(m, &s[..extent], grid, true))
            .collect_into_vec(&mut per_group);
    } else {
        let chunk = split.rows(walk.len, row) * grid.pitch;
        for s in data.chunks(step) {
            let s = &s[..extent];
            let mut parts: Vec<Result<Vec<M::Elem>>> =
                alloc::with_capacity(s.len().div_ceil(chunk))?;
            s.par_chunks(chunk)
                .map(|c| fold(m, c, grid, true))
                .collect_into_vec(&mut parts);
            let mut acc = alloc::filled(row, m.identity())?;
            for p in parts {
                combine_rows(m, &mut acc, &p?, false);
            }
            per_group.push(Ok(acc));
        }
    }
    in_lane_order(walk, per_group)
}

/// The per-group totals `per_group` (each in memory order), one after another in lane order.
fn in_lane_order<T: Copy>(walk: &Walk, per_group: Vec<Result<Vec<T>>>) -> Result<Vec<T>> {
    let mut totals = alloc::with_capacity(walk.count())?;
    for t in per_group {
        totals.extend(t?);
    }
    if walk.in_order() {
        return Ok(totals);
    }
    let mut ordered = alloc::to_vec(&totals)?;
    for (at, t) in totals.into_iter().enumerate() {
        ordered[walk.lane(at)] = t;
    }
    Ok(ordered)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk's shape: (lanes in a run, runs, run pitch, row pitch, groups, group step,
    /// whether memory order is lane order).
    fn shape(lanes: &Lanes) -> Option<(usize, usize, usize, usize, usize, usize, bool)> {
        let w = side_by_side(lanes)?;
        let g = w.grid;
        Some((
            g.width,
            g.runs,
            g.run_pitch,
            g.pitch,
            w.groups,
            w.step,
            w.in_order(),
        ))
    }

    #[test]
    fn lanes_side_by_side_are_axes_before_the_last_and_views_of_columns() {
        let axis = |s: &[usize], a| shape(&Lanes::axis(s, a).unwrap());
        let strided = |s: &[usize], st: &[usize], a| shape(&Lanes::strided(s, st, a).unwrap());
        assert_eq!(axis(&[1000, 3], 0), Some((3, 1, 3, 3, 1, 3000, true)));
        assert_eq!(axis(&[4, 50, 3], 1), Some((3, 1, 3, 3, 4, 150, true)));
        assert_eq!(axis(&[4, 50, 3], 0), Some((150, 1, 150, 150, 1, 600, true)));
        // Three of the five columns of a 200 x 5 matrix, and of 4 x 50 x 4 slabs, one after
        // another or apart.
        let padded = strided(&[200, 3], &[5, 1], 0);
        assert_eq!(padded, Some((3, 1, 3, 5, 1, 998, true)));
        let slabs = strided(&[4, 50, 3], &[200, 4, 1], 1);
        assert_eq!(slabs, Some((3, 1, 3, 4, 4, 200, true)));
        let apart = strided(&[4, 50, 3], &[300, 4, 1], 1);
        assert_eq!(apart, Some((3, 1, 3, 4, 4, 300, true)));
        // Groups that share their rows: runs of 3 lanes, 4 apart, in rows of 16.
        let interleaved = strided(&[4, 50, 3], &[4, 16, 1], 1);
        assert_eq!(interleaved, Some((3, 4, 4, 16, 1, 799, true)));
        // Every other column of a 10 x 8 matrix: runs of one lane, 2 apart.
        let every_other = Lanes {
            outer: 1,
            len: 10,
            inner: 4,
            outer_stride: 0,
            stride: 8,
            inner_stride: 2,
        };
        assert_eq!(shape(&every_other), Some((1, 4, 2, 8, 1, 79, true)));
        // Transposed groups: lane (o, j) at o + 3j in rows of 12, walked as 4 runs of 3; and
        // groups of lane j 60 apart, each a run of the 3 lanes o. Memory order is not lane
        // order in either.
        let transposed = Lanes::strided(&[3, 20, 4], &[1, 12, 3], 1).unwrap();
        assert_eq!(shape(&transposed), Some((3, 4, 3, 12, 1, 240, false)));
        let w = side_by_side(&transposed).unwrap();
        assert_eq!(
            (0..5).map(|at| w.lane(at)).collect::<Vec<_>>(),
            [0, 4, 8, 1, 5]
        );
        let by_group = Lanes::strided(&[3, 20, 4], &[1, 3, 60], 1).unwrap();
        assert_eq!(shape(&by_group), Some((3, 1, 3, 3, 4, 60, false)));
        let w = side_by_side(&by_group).unwrap();
        assert_eq!(
            (0..5).map(|at| w.lane(at)).collect::<Vec<_>>(),
            [0, 4, 8, 1, 5]
        );
        // The rows of a transposed matrix, as they are and normalized.
        let transposed = Lanes::strided(&[9, 6], &[1, 9], 1).unwrap();
        assert_eq!(shape(&transposed), Some((9, 1, 9, 9, 1, 54, true)));
        assert_eq!(
            shape(&transposed.normalized()),
            Some((9, 1, 9, 9, 1, 54, true))
        );
        // The last axis is rows; one column is one contiguous lane; no rows, no lanes; lanes
        // of a row neither one element apart nor in runs of neighbours are not walked.
        assert_eq!(axis(&[4, 50, 3], 2), None);
        assert_eq!(axis(&[1000, 1], 0), None);
        assert_eq!(axis(&[0, 3], 0), None);
        let scattered = Lanes {
            outer: 2,
            len: 5,
            inner: 3,
            outer_stride: 2,
            stride: 16,
            inner_stride: 4,
        };
        scattered.validate().unwrap();
        assert_eq!(shape(&scattered), None);
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
