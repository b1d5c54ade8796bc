//! The parallel CPU backend: a blocked three-phase scan on rayon.

use super::columns::{self, Split};
use super::fold::{fold_chained, fold_mapped, fold_strided};
use super::maps;
use super::seq::{self, Start};
use crate::alloc;
use crate::backend::Backend;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::lanes::{self, LaneScan, Lanes};
use crate::map::Map;
use crate::monoid::Monoid;
use rayon::prelude::*;

/// Reduce and scan on all cores with rayon, in sequence order.
///
/// The input is cut into chunks; each chunk is reduced in parallel, the chunk totals are
/// scanned sequentially into carries, and each chunk is scanned in parallel from its carry.
/// Reverse scans take the same steps from the end, without moving the data. Inputs of at most
/// `min_chunk` elements run sequentially. Batches of rows run a row per task; rows too few to
/// share out among the threads, and variable-length rows longer than a thread's share, are
/// each cut into chunks in turn. Input maps are applied on all threads too, and scans that
/// return a new vector write it on all threads.
#[derive(Debug, Clone, Copy)]
pub struct Parallel {
    min_chunk: usize,
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel { min_chunk: 4096 }
    }
}

impl Parallel {
    /// A backend that never cuts chunks smaller than `min_chunk` elements (tests use small
    /// values to exercise many chunks on small inputs).
    pub fn with_min_chunk(min_chunk: usize) -> Self {
        Parallel {
            min_chunk: min_chunk.max(1),
        }
    }

    fn chunk_len(&self, n: usize) -> usize {
        n.div_ceil(self.split().pieces).max(self.min_chunk)
    }

    /// How work splits: about four parts per thread, of at least `min_chunk` elements.
    fn split(&self) -> Split {
        Split {
            pieces: rayon::current_num_threads() * 4,
            min_chunk: self.min_chunk,
        }
    }

    /// Whether `count` rows of `len` elements are too few to share out, and each long enough
    /// to cut into chunks.
    fn few_long_rows(&self, count: usize, len: usize) -> bool {
        count < self.split().pieces && len > self.chunk_len(len)
    }

    /// `fold(c)` for each chunk `c` of `chunk` elements of `xs`, in order.
    fn chunk_totals<M: Monoid, T: Sync>(
        &self,
        xs: &[T],
        chunk: usize,
        fold: impl Fn(&[T]) -> M::Elem + Sync,
    ) -> Result<Vec<M::Elem>> {
        let mut totals = alloc::with_capacity(xs.len().div_ceil(chunk))?;
        xs.par_chunks(chunk)
            .map(&fold)
            .collect_into_vec(&mut totals);
        Ok(totals)
    }

    /// The fold of `xs` on all threads, each chunk folded by `fold`.
    fn reduce_by<M: Monoid, T: Sync>(
        &self,
        m: &M,
        xs: &[T],
        fold: impl Fn(&[T]) -> M::Elem + Sync,
    ) -> Result<M::Elem> {
        let chunk = self.chunk_len(xs.len());
        if xs.len() <= chunk {
            return Ok(fold(xs));
        }
        Ok(seq::reduce(m, &self.chunk_totals::<M, T>(xs, chunk, fold)?))
    }

    /// The fold of the elements `stride` apart from the first of `xs`, on all threads.
    fn reduce_strided<M: Monoid>(&self, m: &M, xs: &[M::Elem], stride: usize) -> Result<M::Elem> {
        if stride <= 1 {
            return self.reduce(m, xs);
        }
        let chunk = self.chunk_len(xs.len().div_ceil(stride)) * stride;
        let totals = self.chunk_totals::<M, _>(xs, chunk, |c| fold_strided(m, c, stride))?;
        Ok(seq::reduce(m, &totals))
    }
}

impl Backend for Parallel {
    fn describe(&self) -> String {
        format!("cpu (rayon, {} threads)", rayon::current_num_threads())
    }

    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        self.reduce_by(m, xs, |c| fold_chained(m, c))
    }

    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        // From the identity, as the sequential reference defines it.
        self.scan_run(m, xs, false, Start::After(m.identity()))?;
        Ok(())
    }

    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        Ok(self
            .scan_run(m, xs, false, Start::Exclusive(init))?
            .unwrap_or(init))
    }

    /// The inclusive scan of `xs`: copied on all threads, then scanned in place.
    fn inclusive_scan<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<Vec<M::Elem>> {
        let mut out = collect_par(xs, |x| *x)?;
        self.inclusive_scan_in_place(m, &mut out)?;
        Ok(out)
    }

    /// The exclusive scan of `xs` from `init` and the total: copied on all threads, then
    /// scanned in place.
    fn exclusive_scan_total<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let mut out = collect_par(xs, |x| *x)?;
        let total = self.exclusive_scan_in_place(m, &mut out, init)?;
        Ok((out, total))
    }

    /// The fold of `map(xs)`, mapped as it is folded, on all threads.
    fn map_reduce<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<M::Elem> {
        self.reduce_by(m, xs, |c| fold_mapped(m, c, map))
    }

    /// The inclusive scan of `map(xs)`: mapped into the result on all threads, then scanned.
    fn map_inclusive_scan<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<Vec<M::Elem>> {
        let mut out = collect_par(xs, |x| map.apply(x))?;
        self.inclusive_scan_in_place(m, &mut out)?;
        Ok(out)
    }

    /// The exclusive scan of `map(xs)` from `init` and the total: mapped into the result on
    /// all threads, then scanned.
    fn map_exclusive_scan_total<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let mut out = collect_par(xs, |x| map.apply(x))?;
        let total = self.exclusive_scan_in_place(m, &mut out, init)?;
        Ok((out, total))
    }

    /// [`Backend::scan_lanes`] of `map(input)`: the lanes' elements mapped in parallel where
    /// they lie, then scanned in place.
    fn map_scan_lanes<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        lanes: &Lanes,
        input: &[In],
        output: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        lanes.check_buffer(input.len(), "the input")?;
        lanes.check_buffer(output.len(), "the output")?;
        how.check(lanes)?;
        maps::map_lanes_par(lanes, input, output, map);
        self.scan_lanes(m, lanes, output, how)
    }

    fn scan_lanes<M: Monoid>(
        &self,
        m: &M,
        lanes: &Lanes,
        data: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        lanes.check_buffer(data.len(), "the data")?;
        how.check(lanes)?;
        let lanes = &lanes.normalized();
        if lanes.len == 0 || lanes.count() == 0 {
            let empty = |l| how.init.as_ref().map_or(m.identity(), |i| i.get(l));
            return alloc::collect((0..lanes.count()).map(empty));
        }
        if lanes.is_rows() {
            let rows = &mut data[..lanes.elements()];
            if self.few_long_rows(lanes.count(), lanes.len) {
                return alloc::collect(
                    rows.chunks_mut(lanes.len)
                        .enumerate()
                        .map(|(r, row)| self.scan_lane(m, row, how, r)),
                )?
                .into_iter()
                .collect();
            }
            let mut totals = alloc::with_capacity(lanes.count())?;
            let each = rows.par_chunks_mut(lanes.len).enumerate();
            let scan = |(r, row)| lanes::scan_one(m, row, how, r);
            if how.reverse {
                // Each task takes its rows last first, so that memory is read in one direction.
                each.rev().map(scan).collect_into_vec(&mut totals);
                totals.reverse();
            } else {
                each.map(scan).collect_into_vec(&mut totals);
            }
            return Ok(totals);
        }
        if let Some(walk) = columns::side_by_side(lanes) {
            // Lanes side by side (columns scanned down): rows walked in memory order.
            return columns::scan(m, &walk, data, how, self.split());
        }
        if runs_apart(lanes) {
            // Each lane in a run of memory of its own (rows with gaps between them, a strided
            // lane alone in its rows): scanned where it lies.
            return self.scan_runs(m, lanes, data, how);
        }
        // Any other layout (lanes strided through one another's runs): each lane gathered and
        // scanned in parallel, then written back.
        let data_ref: &[M::Elem] = data;
        let mut scanned: Vec<Result<ScannedLane<M::Elem>>> = alloc::with_capacity(lanes.count())?;
        (0..lanes.count())
            .into_par_iter()
            .map(|l| {
                let mut xs = lanes::gather(data_ref, lanes, l)?;
                let total = lanes::scan_one(m, &mut xs, how, l);
                Ok((xs, total))
            })
            .collect_into_vec(&mut scanned);
        let mut totals = alloc::with_capacity(lanes.count())?;
        for (l, r) in scanned.into_iter().enumerate() {
            let (xs, total) = r?;
            lanes::scatter(data, lanes, l, &xs);
            totals.push(total);
        }
        Ok(totals)
    }

    fn reduce_lanes<M: Monoid>(
        &self,
        m: &M,
        lanes: &Lanes,
        data: &[M::Elem],
    ) -> Result<Vec<M::Elem>> {
        lanes.check_buffer(data.len(), "the data")?;
        let lanes = &lanes.normalized();
        if lanes.len == 0 || lanes.count() == 0 {
            return alloc::filled(lanes.count(), m.identity());
        }
        if let Some(walk) = columns::side_by_side(lanes) {
            return columns::reduce(m, &walk, data, self.split());
        }
        // Every other layout: each lane folded where it lies, its elements `stride` apart from
        // its first to its last; several lanes at a time, or a few long ones each in parallel
        // chunks.
        let (len, stride) = (lanes.len, lanes.stride);
        let run = |l| &data[lanes.offset(l, 0)..][..extent(lanes)];
        if self.few_long_rows(lanes.count(), len) {
            return alloc::collect(
                (0..lanes.count()).map(|l| self.reduce_strided(m, run(l), stride)),
            )?
            .into_iter()
            .collect();
        }
        let mut totals = alloc::with_capacity(lanes.count())?;
        (0..lanes.count())
            .into_par_iter()
            .map(|l| fold_strided(m, run(l), stride))
            .collect_into_vec(&mut totals);
        Ok(totals)
    }

    fn scan_segments<M: Monoid>(
        &self,
        m: &M,
        offsets: &[usize],
        data: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        lanes::check_offsets(offsets, data.len())?;
        let rows = offsets.len() - 1;
        how.check(&Lanes::rows(rows, 0))?;
        // Rows longer than a thread's share of the whole are each cut into chunks in turn;
        // the others run a row per task.
        let long = self.chunk_len(data.len());
        // Cut `data` into its rows (disjoint).
        let mut pieces: Vec<&mut [M::Elem]> = alloc::with_capacity(rows)?;
        let mut rest = data;
        for w in offsets.windows(2) {
            let (row, tail) = rest.split_at_mut(w[1] - w[0]);
            pieces.push(row);
            rest = tail;
        }
        let mut totals = alloc::filled(rows, m.identity())?;
        pieces
            .par_iter_mut()
            .zip(totals.par_iter_mut())
            .enumerate()
            .filter(|(_, (row, _))| row.len() <= long)
            .for_each(|(r, (row, total))| *total = lanes::scan_one(m, row, how, r));
        for (r, (row, total)) in pieces.iter_mut().zip(&mut totals).enumerate() {
            if row.len() > long {
                *total = self.scan_lane(m, row, how, r)?;
            }
        }
        Ok(totals)
    }
}

/// `f(x)` for each `x` of `xs`, in a new vector written on all threads: writing a fresh
/// buffer first touches its pages, which the kernel then maps one by one, and on two cores of
/// a virtual machine that costs more than the scan (a copy of 2^24 `i32` into a new vector:
/// 50 ms on one thread, 29 ms on two, against a 6.3 ms scan).
fn collect_par<T: Sync, U: Send>(xs: &[T], f: impl Fn(&T) -> U + Sync + Send) -> Result<Vec<U>> {
    let mut out = alloc::with_capacity(xs.len())?;
    xs.par_iter().map(f).collect_into_vec(&mut out);
    Ok(out)
}

/// A lane gathered and scanned, and its total.
type ScannedLane<T> = (Vec<T>, T);

/// Elements from a lane's first to its last: `(len - 1) * stride + 1`.
fn extent(lanes: &Lanes) -> usize {
    lanes.len.saturating_sub(1) * lanes.stride + usize::from(lanes.len > 0)
}

/// Whether each lane lies in a run of memory, from its first element to its last, that no
/// other lane's run enters: true of every layout of stride 1 (lanes never overlap), and of
/// strided lanes each of which ends before the next one starts (a channel of a `(B x T x C)`
/// tensor scanned along `T`, a single column).
fn runs_apart(lanes: &Lanes) -> bool {
    let mut dims = [
        (lanes.outer, lanes.outer_stride),
        (lanes.inner, lanes.inner_stride),
    ];
    dims.sort_by_key(|&(_, s)| s);
    // From the first lane's start past the last element of the lanes of the dimensions seen.
    let mut reach = extent(lanes);
    for (n, s) in dims {
        if n > 1 {
            if s < reach {
                return false;
            }
            reach += (n - 1) * s;
        }
    }
    true
}

impl Parallel {
    /// Scans the run `xs` in place from `start` on all threads, forwards or from its end (the
    /// definitions of [`seq::scan_run`]), in three phases: each chunk folded, the chunk totals
    /// combined in sequence order into each chunk's start (in reverse, from the last chunk
    /// down), each chunk scanned from its start. Returns the running value after the run.
    fn scan_run<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        reverse: bool,
        start: Start<M::Elem>,
    ) -> Result<Option<M::Elem>> {
        self.scan_strided(m, xs, 1, reverse, start)
    }

    /// [`Parallel::scan_run`] of the elements `stride` apart from the first of `xs` (a lane
    /// of a strided layout, `xs` running from its first element to its last): chunks of
    /// `chunk` lane elements are runs of `chunk * stride` elements of `xs`.
    fn scan_strided<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        stride: usize,
        reverse: bool,
        start: Start<M::Elem>,
    ) -> Result<Option<M::Elem>> {
        let stride = stride.max(1);
        let n = xs.len().div_ceil(stride);
        let chunk = self.chunk_len(n);
        if n <= chunk {
            return Ok(seq::scan_strided(m, xs, stride, reverse, start));
        }
        let chunk = chunk * stride;
        // (A stride of 1 folds each chunk in chains, `fold_strided`'s contiguous case.)
        let totals = self.chunk_totals::<M, _>(xs, chunk, |c| fold_strided(m, c, stride))?;
        let chunks = totals.len();
        let mut starts = alloc::filled(chunks, start)?;
        let mut acc = start.value();
        for i in 0..chunks {
            let c = if reverse { chunks - 1 - i } else { i };
            starts[c] = start.from(acc);
            let t = &totals[c];
            acc = Some(match acc {
                None => *t,
                Some(a) if reverse => m.combine(t, &a),
                Some(a) => m.combine(&a, t),
            });
        }
        xs.par_chunks_mut(chunk)
            .zip(starts.par_iter())
            .for_each(|(c, s)| {
                seq::scan_strided(m, c, stride, reverse, *s);
            });
        Ok(acc)
    }

    /// Lanes each in a run of memory of its own somewhere in `data` (from its first element
    /// to its last, [`runs_apart`]), scanned in place as `how` says: a run per task, or a few long ones each on all
    /// threads, as rows are. Returns the totals in lane order.
    fn scan_runs<M: Monoid>(
        &self,
        m: &M,
        lanes: &Lanes,
        data: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        let (count, len, stride) = (lanes.count(), lanes.len, lanes.stride);
        let extent = extent(lanes);
        // The lanes in memory order: groups then lanes, or lanes then groups where a group's
        // lanes lie farther apart than the groups.
        let by_lane = lanes.outer > 1 && lanes.inner > 1 && lanes.inner_stride > lanes.outer_stride;
        let lane_at = |at: usize| {
            if by_lane {
                at % lanes.outer * lanes.inner + at / lanes.outer
            } else {
                at
            }
        };
        // Each lane's run, cut from `data` in memory order.
        let mut runs: Vec<(usize, &mut [M::Elem])> = alloc::with_capacity(count)?;
        let (mut rest, mut at_offset) = (data, 0);
        for at in 0..count {
            let lane = lane_at(at);
            let offset = lanes.offset(lane, 0);
            let gap = offset
                .checked_sub(at_offset)
                .filter(|g| g + extent <= rest.len());
            let gap = gap.ok_or_else(|| Error::invalid("internal: lanes out of memory order"))?;
            let (run, after) = std::mem::take(&mut rest)[gap..].split_at_mut(extent);
            runs.push((lane, run));
            (rest, at_offset) = (after, offset + extent);
        }
        let mut totals = alloc::filled(count, m.identity())?;
        if self.few_long_rows(count, len) {
            for (lane, run) in runs {
                totals[lane] = self.scan_lane_strided(m, run, stride, how, lane)?;
            }
            return Ok(totals);
        }
        let mut scanned = alloc::with_capacity(count)?;
        let each = runs.par_iter_mut();
        let scan = |(lane, run): &mut (usize, &mut [M::Elem])| {
            let after = seq::scan_strided(m, run, stride, how.reverse, how.start(*lane));
            (*lane, after.unwrap_or_else(|| m.identity()))
        };
        if how.reverse {
            // Each task takes its runs last first, so that memory is read in one direction.
            each.rev().map(scan).collect_into_vec(&mut scanned);
        } else {
            each.map(scan).collect_into_vec(&mut scanned);
        }
        for (lane, total) in scanned {
            totals[lane] = total;
        }
        Ok(totals)
    }

    /// Lane `lane`, held in order in `xs`, scanned on all threads as `how` says; its total.
    fn scan_lane<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
        lane: usize,
    ) -> Result<M::Elem> {
        self.scan_lane_strided(m, xs, 1, how, lane)
    }

    /// [`Parallel::scan_lane`] of a lane whose elements lie `stride` apart in `xs`.
    fn scan_lane_strided<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        stride: usize,
        how: &LaneScan<M::Elem>,
        lane: usize,
    ) -> Result<M::Elem> {
        Ok(self
            .scan_strided(m, xs, stride, how.reverse, how.start(lane))?
            .unwrap_or_else(|| m.identity()))
    }
}
