//! Batched scans: many independent scans ("lanes") over one buffer, along any axis of a strided
//! layout, forwards or backwards.
//!
//! [`Lanes`] says where each lane's elements sit; [`LaneScan`] what to compute (inclusive or
//! exclusive with an initial value per lane, forwards or in reverse). The [`crate::Backend`]
//! methods `scan_lanes`, `reduce_lanes` and `scan_segments` (variable-length rows given by
//! offsets) run them on any backend; [`crate::Scanner::scan_lanes`],
//! [`crate::Scanner::reduce_lanes`], [`crate::Scanner::scan_segments`] and
//! [`crate::Scanner::reduce_segments`] on device buffers (the reductions read each element once
//! and write only the totals).
//!
//! ```
//! use monoscan::{Backend, cpu::Sequential, lanes::{LaneScan, Lanes}, ops::Sum};
//! # fn main() -> monoscan::Result<()> {
//! // Two rows of three: cumulative sums along each row, and each row's total.
//! let mut xs = vec![1, 2, 3, 10, 20, 30];
//! let totals = Sequential.scan_lanes(&Sum::<i32>::new(), &Lanes::rows(2, 3), &mut xs, &LaneScan::inclusive())?;
//! assert_eq!(xs, [1, 3, 6, 10, 30, 60]);
//! assert_eq!(totals, [6, 60]);
//! // Down the columns of the same 2 x 3 matrix, from the bottom.
//! let mut xs = vec![1, 2, 3, 10, 20, 30];
//! let down = Lanes::axis(&[2, 3], 0)?;
//! Sequential.scan_lanes(&Sum::<i32>::new(), &down, &mut xs, &LaneScan::inclusive().reverse())?;
//! assert_eq!(xs, [11, 22, 33, 10, 20, 30]);
//! # Ok(())
//! # }
//! ```

use crate::alloc;
use crate::cpu::seq::{scan_run, Start};
use crate::error::{Error, Result};
use crate::monoid::Monoid;

/// Where the elements of independent scans sit in a buffer: `outer x inner` lanes of `len`
/// elements each. Element `k` of lane `(o, j)` is at
/// `o * outer_stride + k * stride + j * inner_stride` (in elements).
///
/// For a tensor scanned along one axis, `outer` is the product of the dimensions before the
/// axis, `len` the axis's length and `inner` the product of the dimensions after it
/// ([`Lanes::axis`], [`Lanes::strided`]); rows of a matrix are [`Lanes::rows`]. Lanes never
/// overlap (checked by [`Lanes::validate`], which every call runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lanes {
    /// Groups of lanes (the dimensions before the scanned axis).
    pub outer: usize,
    /// Elements per lane (the scanned axis).
    pub len: usize,
    /// Lanes per group (the dimensions after the scanned axis).
    pub inner: usize,
    /// Elements between the starts of consecutive groups.
    pub outer_stride: usize,
    /// Elements between consecutive elements of a lane.
    pub stride: usize,
    /// Elements between neighbouring lanes of a group.
    pub inner_stride: usize,
}

impl Lanes {
    /// `rows` contiguous rows of `len` elements (a row-major `rows x len` matrix, scanned along
    /// its rows). One row is a plain 1-D scan.
    pub fn rows(rows: usize, len: usize) -> Self {
        Lanes {
            outer: rows,
            len,
            inner: 1,
            outer_stride: len,
            stride: 1,
            inner_stride: 1,
        }
    }

    /// The lanes along `axis` of a contiguous row-major tensor of `shape`.
    pub fn axis(shape: &[usize], axis: usize) -> Result<Self> {
        let mut strides = vec![1usize; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1]
                .checked_mul(shape[d + 1])
                .ok_or_else(|| Error::invalid(format!("shape {shape:?} overflows")))?;
        }
        Lanes::strided(shape, &strides, axis)
    }

    /// The lanes along `axis` of a tensor of `shape` whose dimension `d` advances `strides[d]`
    /// elements. The dimensions before the axis must collapse into one stride, and so must
    /// those after it (true of any contiguous tensor and of most views of one); otherwise
    /// this is an error.
    pub fn strided(shape: &[usize], strides: &[usize], axis: usize) -> Result<Self> {
        if shape.len() != strides.len() || axis >= shape.len() {
            return Err(Error::invalid(format!(
                "axis {axis} of a shape of {} dimensions with {} strides",
                shape.len(),
                strides.len()
            )));
        }
        let collapse = |dims: &[usize], strides: &[usize], what: &str| -> Result<(usize, usize)> {
            // (count, stride) of the dimensions, which must form one arithmetic progression.
            let mut count = 1usize;
            let mut stride = 0usize;
            for (&d, &s) in dims.iter().zip(strides).rev() {
                if d == 1 {
                    continue;
                }
                if count == 1 {
                    stride = s;
                } else if s != stride.saturating_mul(count) {
                    return Err(Error::invalid(format!(
                        "the dimensions {what} axis {axis} of shape {shape:?} with strides {strides:?} do not collapse into one stride"
                    )));
                }
                count = count
                    .checked_mul(d)
                    .ok_or_else(|| Error::invalid(format!("shape {shape:?} overflows")))?;
            }
            Ok((count, if count == 1 { 1 } else { stride }))
        };
        let (outer, outer_stride) = collapse(&shape[..axis], &strides[..axis], "before")?;
        let (inner, inner_stride) = collapse(&shape[axis + 1..], &strides[axis + 1..], "after")?;
        let lanes = Lanes {
            outer,
            len: shape[axis],
            inner,
            outer_stride,
            stride: strides[axis].max(1),
            inner_stride,
        };
        lanes.validate()?;
        Ok(lanes)
    }

    /// How many lanes: `outer * inner`.
    pub fn count(&self) -> usize {
        self.outer.saturating_mul(self.inner)
    }

    /// Elements in all lanes: `outer * len * inner`.
    pub fn elements(&self) -> usize {
        self.count().saturating_mul(self.len)
    }

    /// The position in the buffer of element `k` of lane `lane` (`lane = o * inner + j`).
    pub fn offset(&self, lane: usize, k: usize) -> usize {
        let (o, j) = (lane / self.inner.max(1), lane % self.inner.max(1));
        o * self.outer_stride + k * self.stride + j * self.inner_stride
    }

    /// Elements a buffer must hold: one past the largest offset (0 without elements).
    pub fn span(&self) -> usize {
        if self.elements() == 0 {
            return 0;
        }
        self.offset(self.count() - 1, self.len - 1) + 1
    }

    /// Whether the lanes are contiguous rows (`stride` 1, `inner` 1, each row right after the
    /// last): the layout the GPU scans directly.
    pub fn is_rows(&self) -> bool {
        (self.inner == 1 || self.len == 0)
            && (self.stride == 1 || self.len <= 1)
            && (self.outer_stride == self.len || self.outer <= 1)
    }

    /// The same lanes, in the same order, in the form the backends walk best: groups whose
    /// lanes continue one another's (`outer_stride == inner * inner_stride`, as in a
    /// `(T x B x C)` tensor viewed as `(B x T x C)` and scanned along `T`) as one group of
    /// `outer * inner` lanes, and groups of one lane each one element apart (the rows of a
    /// column-major matrix) as one group of lanes one element apart: both the form of the
    /// columns of a row-major array. Other layouts come back unchanged.
    pub fn normalized(&self) -> Lanes {
        if self.is_rows() {
            return *self;
        }
        let one_group = |inner, inner_stride| Lanes {
            outer: 1,
            len: self.len,
            inner,
            outer_stride: 1,
            stride: self.stride,
            inner_stride,
        };
        if self.inner == 1 && self.outer_stride == 1 {
            return one_group(self.outer, 1);
        }
        let continued = self.inner.checked_mul(self.inner_stride) == Some(self.outer_stride);
        if self.outer > 1 && self.inner > 1 && continued {
            return one_group(self.count(), self.inner_stride);
        }
        *self
    }

    /// Checks that the layout's offsets fit in `usize` and that no two elements share an
    /// offset: the strides, sorted, must each step over everything the smaller ones span.
    pub fn validate(&self) -> Result<()> {
        let overflow = || Error::invalid(format!("lanes {self:?} overflow the address space"));
        let mut dims = [
            (self.outer, self.outer_stride),
            (self.len, self.stride),
            (self.inner, self.inner_stride),
        ];
        if dims.iter().any(|&(n, _)| n == 0) {
            return Ok(());
        }
        let mut reach = 0usize; // largest offset of the dimensions seen so far
        dims.sort_by_key(|&(_, s)| s);
        for (n, s) in dims {
            if n == 1 {
                continue;
            }
            if s <= reach {
                return Err(Error::invalid(format!(
                    "lanes {self:?} overlap: a stride of {s} elements steps inside the {reach} elements the smaller ones span"
                )));
            }
            let extent = (n - 1).checked_mul(s).ok_or_else(overflow)?;
            reach = reach.checked_add(extent).ok_or_else(overflow)?;
        }
        Ok(())
    }

    /// An error unless `buf` elements hold every lane.
    pub(crate) fn check_buffer(&self, buf: usize, what: &str) -> Result<()> {
        self.validate()?;
        if buf < self.span() {
            return Err(Error::invalid(format!(
                "{what} holds {buf} elements; the lanes reach {}",
                self.span()
            )));
        }
        Ok(())
    }
}

/// The initial value of exclusive lane scans.
#[derive(Debug, Clone, PartialEq)]
pub enum Inits<T> {
    /// The same value for every lane.
    Same(T),
    /// One value per lane, in lane order (`o * inner + j`).
    Each(Vec<T>),
}

impl<T: Copy> Inits<T> {
    /// The initial value of lane `lane`.
    pub fn get(&self, lane: usize) -> T {
        match self {
            Inits::Same(v) => *v,
            Inits::Each(vs) => vs[lane],
        }
    }
}

/// What a lane scan computes.
///
/// With `⊕` the operator and a lane `x0, ..., x(n-1)`:
///
/// | scan | `y[k]` | lane total |
/// | --- | --- | --- |
/// | inclusive | `x0 ⊕ ... ⊕ xk` | `x0 ⊕ ... ⊕ x(n-1)` |
/// | exclusive from `init` | `init ⊕ x0 ⊕ ... ⊕ x(k-1)` | `init ⊕ x0 ⊕ ... ⊕ x(n-1)` |
/// | inclusive, reverse | `xk ⊕ ... ⊕ x(n-1)` | `x0 ⊕ ... ⊕ x(n-1)` |
/// | exclusive from `init`, reverse | `x(k+1) ⊕ ... ⊕ x(n-1) ⊕ init` | `x0 ⊕ ... ⊕ x(n-1) ⊕ init` |
///
/// Order is kept both ways: a reverse scan combines in sequence order, only its prefixes
/// start from the end (what a gradient pass needs), and its initial value sits after the last
/// element.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneScan<T> {
    /// `None`: inclusive; else exclusive from these initial values.
    pub init: Option<Inits<T>>,
    /// Whether prefixes run from the end of each lane.
    pub reverse: bool,
}

impl<T> LaneScan<T> {
    /// Inclusive, forwards.
    pub fn inclusive() -> Self {
        LaneScan {
            init: None,
            reverse: false,
        }
    }

    /// Exclusive from `init` in every lane, forwards.
    pub fn exclusive(init: T) -> Self {
        LaneScan {
            init: Some(Inits::Same(init)),
            reverse: false,
        }
    }

    /// Exclusive from `inits[lane]` in each lane, forwards.
    pub fn exclusive_each(inits: Vec<T>) -> Self {
        LaneScan {
            init: Some(Inits::Each(inits)),
            reverse: false,
        }
    }

    /// The same scan with prefixes running from the end of each lane.
    pub fn reverse(mut self) -> Self {
        self.reverse = true;
        self
    }

    /// An error unless the initial values fit `lanes`.
    pub(crate) fn check(&self, lanes: &Lanes) -> Result<()> {
        if let Some(Inits::Each(v)) = &self.init {
            if v.len() != lanes.count() {
                return Err(Error::invalid(format!(
                    "{} initial values for {} lanes",
                    v.len(),
                    lanes.count()
                )));
            }
        }
        Ok(())
    }
}

impl<T: Copy> LaneScan<T> {
    /// How lane `lane`'s scan starts: exclusive from its initial value, or inclusive with
    /// nothing before its first element.
    pub(crate) fn start(&self, lane: usize) -> Start<T> {
        match &self.init {
            Some(i) => Start::Exclusive(i.get(lane)),
            None => Start::Open,
        }
    }
}

/// Checks CSR row offsets: nondecreasing, from 0 to `len`.
pub(crate) fn check_offsets(offsets: &[usize], len: usize) -> Result<()> {
    let ok = offsets.first() == Some(&0)
        && offsets.last() == Some(&len)
        && offsets.windows(2).all(|w| w[0] <= w[1]);
    if !ok {
        return Err(Error::invalid(format!(
            "row offsets must rise from 0 to the data's length {len} (got {} offsets{})",
            offsets.len(),
            match (offsets.first(), offsets.last()) {
                (Some(a), Some(b)) => format!(", from {a} to {b}"),
                _ => String::new(),
            }
        )));
    }
    Ok(())
}

/// Scans one lane held in `xs` (gathered, in lane order) as `how` says for lane `lane`;
/// returns its total.
pub(crate) fn scan_one<M: Monoid>(
    m: &M,
    xs: &mut [M::Elem],
    how: &LaneScan<M::Elem>,
    lane: usize,
) -> M::Elem {
    scan_run(m, xs, how.reverse, how.start(lane)).unwrap_or_else(|| m.identity())
}

/// Lane `lane` of `data`, gathered in order.
pub(crate) fn gather<T: Copy>(data: &[T], lanes: &Lanes, lane: usize) -> Result<Vec<T>> {
    let mut v = alloc::with_capacity(lanes.len)?;
    v.extend((0..lanes.len).map(|k| data[lanes.offset(lane, k)]));
    Ok(v)
}

/// Writes `values` back into lane `lane` of `data`.
pub(crate) fn scatter<T: Copy>(data: &mut [T], lanes: &Lanes, lane: usize, values: &[T]) {
    for (k, v) in values.iter().enumerate() {
        data[lanes.offset(lane, k)] = *v;
    }
}

/// The sequential reference of every lane scan: each lane gathered, scanned, written back.
pub(crate) fn scan_lanes<M: Monoid>(
    m: &M,
    lanes: &Lanes,
    data: &mut [M::Elem],
    how: &LaneScan<M::Elem>,
) -> Result<Vec<M::Elem>> {
    lanes.check_buffer(data.len(), "the data")?;
    how.check(lanes)?;
    let mut totals = alloc::with_capacity(lanes.count())?;
    for lane in 0..lanes.count() {
        let mut xs = gather(data, lanes, lane)?;
        totals.push(scan_one(m, &mut xs, how, lane));
        scatter(data, lanes, lane, &xs);
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Sum;

    #[test]
    fn axes_of_a_contiguous_tensor() {
        let l = Lanes::axis(&[2, 3, 4], 1).unwrap();
        assert_eq!(
            (
                l.outer,
                l.len,
                l.inner,
                l.outer_stride,
                l.stride,
                l.inner_stride
            ),
            (2, 3, 4, 12, 4, 1)
        );
        assert_eq!(l.span(), 24);
        assert_eq!(l.offset(5, 2), 12 + 8 + 1);
        let rows = Lanes::axis(&[5, 7], 1).unwrap();
        assert_eq!(rows, Lanes::rows(5, 7));
        assert!(rows.is_rows());
        let cols = Lanes::axis(&[5, 7], 0).unwrap();
        assert_eq!(
            (cols.outer, cols.len, cols.inner, cols.stride),
            (1, 5, 7, 7)
        );
        assert!(!cols.is_rows());
        assert!(Lanes::axis(&[5, 7], 2).is_err());
    }

    #[test]
    fn lanes_side_by_side_normalize_to_one_group() {
        // The rows of a column-major 5 x 7 matrix are the columns of its row-major transpose.
        let t = Lanes::strided(&[5, 7], &[1, 5], 1).unwrap();
        let n = t.normalized();
        assert_eq!(n, Lanes::axis(&[7, 5], 0).unwrap());
        for lane in 0..t.count() {
            for k in 0..t.len {
                assert_eq!(n.offset(lane, k), t.offset(lane, k));
            }
        }
        // Groups whose lanes continue one another's: a (6 x 4 x 3) tensor viewed as
        // (4 x 6 x 3) and scanned along its 6, and lanes 3 apart in groups 12 apart.
        for (l, merged) in [
            (
                Lanes::strided(&[4, 6, 3], &[3, 12, 1], 1).unwrap(),
                Lanes::axis(&[6, 12], 0).unwrap(),
            ),
            (
                Lanes::strided(&[2, 3, 4], &[12, 1, 3], 1).unwrap(),
                Lanes::strided(&[3, 8], &[1, 3], 0).unwrap(),
            ),
        ] {
            let n = l.normalized();
            assert_eq!(n, merged, "{l:?}");
            for lane in 0..l.count() {
                for k in 0..l.len {
                    assert_eq!(n.offset(lane, k), l.offset(lane, k));
                }
            }
        }
        // Rows, columns, lanes of one element, and groups with gaps between them stay as
        // they are.
        for l in [
            Lanes::rows(4, 9),
            Lanes::axis(&[7, 5], 0).unwrap(),
            Lanes::strided(&[5, 1], &[1, 5], 1).unwrap(),
            Lanes::strided(&[4, 6, 3], &[4, 16, 1], 1).unwrap(),
            Lanes::strided(&[2, 3, 4], &[16, 1, 3], 1).unwrap(),
        ] {
            assert_eq!(l.normalized(), l, "{l:?}");
        }
    }

    #[test]
    fn strided_views_collapse_or_are_refused() {
        // A transposed 3 x 4 matrix (strides 1, 3), scanned along its rows: lanes of stride 3.
        let t = Lanes::strided(&[4, 3], &[1, 4], 1).unwrap();
        assert_eq!((t.outer, t.len, t.outer_stride, t.stride), (4, 3, 1, 4));
        // Dimensions before the axis that do not collapse: (2, 3) with strides (100, 7).
        assert!(Lanes::strided(&[2, 3, 5], &[100, 7, 1], 2).is_err());
        // Overlapping lanes are refused.
        assert!(Lanes::strided(&[4, 3], &[1, 1], 1).is_err());
        let overlap = Lanes {
            outer: 2,
            len: 4,
            inner: 1,
            outer_stride: 2,
            stride: 1,
            inner_stride: 1,
        };
        assert!(overlap.validate().is_err());
    }

    #[test]
    fn reverse_scans_keep_order_and_put_init_last() {
        let m = Sum::<i64>::new();
        let mut xs = vec![1, 2, 3];
        let t = scan_one(&m, &mut xs, &LaneScan::inclusive().reverse(), 0);
        assert_eq!((xs, t), (vec![6, 5, 3], 6));
        let mut xs = vec![1, 2, 3];
        let t = scan_one(&m, &mut xs, &LaneScan::exclusive(10).reverse(), 0);
        assert_eq!((xs, t), (vec![15, 13, 10], 16));
        let mut xs: Vec<i64> = vec![];
        assert_eq!(scan_one(&m, &mut xs, &LaneScan::exclusive(10), 0), 10);
    }

    #[test]
    fn offsets_are_checked() {
        assert!(check_offsets(&[0, 2, 2, 5], 5).is_ok());
        assert!(check_offsets(&[0, 3, 2, 5], 5).is_err());
        assert!(check_offsets(&[1, 5], 5).is_err());
        assert!(check_offsets(&[], 0).is_err());
    }
}
