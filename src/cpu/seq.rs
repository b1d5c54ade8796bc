//! The sequential reference: plain left folds, the ground truth of every test.
//!
//! Every fold starts from `identity()`, as the definitions in [`Backend`] read
//! (`reduce(xs) = e ⊕ x0 ⊕ ... ⊕ x(n-1)`, `inclusive_scan(xs)[i] = e ⊕ x0 ⊕ ... ⊕ xi`). For a
//! monoid the leading `e ⊕` changes nothing; for an operator whose identity is wrong it does,
//! so the CPU backends give the same wrong answers the GPU kernels (which pad tiles with the
//! identity) would, instead of right ones that hide the bug.

use crate::backend::Backend;
use crate::error::Result;
use crate::monoid::Monoid;

/// `e ⊕ x0 ⊕ ... ⊕ x(n-1)`, folded left to right from the identity.
pub fn reduce<M: Monoid>(m: &M, xs: &[M::Elem]) -> M::Elem {
    xs.iter().fold(m.identity(), |acc, x| m.combine(&acc, x))
}

/// Replaces `xs` by its inclusive scan.
pub fn inclusive_scan_in_place<M: Monoid>(m: &M, xs: &mut [M::Elem]) {
    scan_run(m, xs, false, Start::After(m.identity()));
}

/// Where a run of a scan ([`scan_run`]) starts: the running value before its first element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Start<T> {
    /// An inclusive scan with no value before the run: its first element is its own prefix.
    Open,
    /// An inclusive scan after the running value `a`: each element becomes `a ⊕ ... ⊕ x`.
    After(T),
    /// An exclusive scan from the running value `a`: each element becomes the value before it.
    Exclusive(T),
}

impl<T> Start<T> {
    /// The same kind of start from the running value `a` (`None`: nothing before the run).
    pub(crate) fn from(&self, a: Option<T>) -> Start<T> {
        match (self, a) {
            (_, None) => Start::Open,
            (Start::Exclusive(_), Some(a)) => Start::Exclusive(a),
            (_, Some(a)) => Start::After(a),
        }
    }

    /// The running value before the run.
    pub(crate) fn value(self) -> Option<T> {
        match self {
            Start::Open => None,
            Start::After(a) | Start::Exclusive(a) => Some(a),
        }
    }
}

/// Scans the run `xs` in place from `start`, forwards or, with `reverse`, from its last
/// element to its first (the running value then grows to the left, `x ⊕ a`, so sequence order
/// is kept); returns the running value after the run: `None` only for an empty run from
/// [`Start::Open`].
pub(crate) fn scan_run<M: Monoid>(
    m: &M,
    xs: &mut [M::Elem],
    reverse: bool,
    start: Start<M::Elem>,
) -> Option<M::Elem> {
    scan_each(m, xs.iter_mut(), reverse, start)
}

/// [`scan_run`] of the elements `stride` apart from the first of `xs` (a lane of a strided
/// layout, `xs` running from its first element to its last).
pub(crate) fn scan_strided<M: Monoid>(
    m: &M,
    xs: &mut [M::Elem],
    stride: usize,
    reverse: bool,
    start: Start<M::Elem>,
) -> Option<M::Elem> {
    if stride <= 1 {
        return scan_run(m, xs, reverse, start);
    }
    // Whole steps, then the lane's last element: `chunks_exact_mut` walks back without the
    // division `chunks_mut` makes at every step from the end.
    let (steps, last) = xs.split_at_mut(xs.len() / stride * stride);
    let each = steps
        .chunks_exact_mut(stride)
        .map(|step| &mut step[0])
        .chain(last.first_mut());
    scan_each(m, each, reverse, start)
}

/// [`scan_run`] of the elements `each` yields, in order.
fn scan_each<'a, M: Monoid>(
    m: &M,
    each: impl DoubleEndedIterator<Item = &'a mut M::Elem>,
    reverse: bool,
    start: Start<M::Elem>,
) -> Option<M::Elem> {
    let exclusive = matches!(start, Start::Exclusive(_));
    match (reverse, exclusive) {
        (false, false) => run_as::<M, false, false>(m, each, start.value()),
        (false, true) => run_as::<M, false, true>(m, each, start.value()),
        (true, false) => run_as::<M, true, false>(m, each, start.value()),
        (true, true) => run_as::<M, true, true>(m, each, start.value()),
    }
}

/// [`scan_each`] for one direction and one kind, so that its loop has no branch.
fn run_as<'a, M: Monoid, const REVERSE: bool, const EXCLUSIVE: bool>(
    m: &M,
    mut it: impl DoubleEndedIterator<Item = &'a mut M::Elem>,
    from: Option<M::Elem>,
) -> Option<M::Elem> {
    let mut acc = match from {
        Some(a) => a,
        // Inclusive with nothing before: the first element walked stays as it is.
        None => *(if REVERSE { it.next_back() } else { it.next() })?,
    };
    let mut step = |x: &mut M::Elem| {
        let with = if REVERSE {
            m.combine(x, &acc)
        } else {
            m.combine(&acc, x)
        };
        *x = if EXCLUSIVE { acc } else { with };
        acc = with;
    };
    if REVERSE {
        it.rev().for_each(&mut step);
    } else {
        it.for_each(&mut step);
    }
    Some(acc)
}

/// Replaces `xs` by its exclusive scan from `init`; returns `init ⊕ x0 ⊕ ... ⊕ x(n-1)`.
pub fn exclusive_scan_in_place<M: Monoid>(m: &M, xs: &mut [M::Elem], init: M::Elem) -> M::Elem {
    scan_run(m, xs, false, Start::Exclusive(init)).unwrap_or(init)
}

/// The inclusive scan of `xs`.
pub fn inclusive_scan<M: Monoid>(m: &M, xs: &[M::Elem]) -> Vec<M::Elem> {
    let mut out = xs.to_vec();
    inclusive_scan_in_place(m, &mut out);
    out
}

/// The exclusive scan of `xs` from `init`.
pub fn exclusive_scan<M: Monoid>(m: &M, xs: &[M::Elem], init: M::Elem) -> Vec<M::Elem> {
    exclusive_scan_total(m, xs, init).0
}

/// The exclusive scan of `xs` from `init`, and the total.
pub fn exclusive_scan_total<M: Monoid>(
    m: &M,
    xs: &[M::Elem],
    init: M::Elem,
) -> (Vec<M::Elem>, M::Elem) {
    let mut out = xs.to_vec();
    let total = exclusive_scan_in_place(m, &mut out, init);
    (out, total)
}

/// The sequential reference as a [`Backend`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Sequential;

impl Backend for Sequential {
    fn describe(&self) -> String {
        "cpu (sequential)".to_string()
    }
    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        Ok(reduce(m, xs))
    }
    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        inclusive_scan_in_place(m, xs);
        Ok(())
    }
    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        Ok(exclusive_scan_in_place(m, xs, init))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Mat2, MatMulMod, Sum};

    #[test]
    fn definitions() {
        let s = Sum::<i32>::new();
        assert_eq!(reduce(&s, &[]), 0);
        assert_eq!(inclusive_scan(&s, &[3, 1, 7, 0, 4]), [3, 4, 11, 11, 15]);
        assert_eq!(
            exclusive_scan_total(&s, &[3, 1, 7, 0, 4], 10),
            (vec![10, 13, 14, 21, 21], 25)
        );
        assert_eq!(exclusive_scan_total(&s, &[], 5), (vec![], 5));
    }

    /// An operator whose identity is wrong (1 for a sum): the sequential backend shows it
    /// in reductions and in inclusive scans, not only where an empty input returns it.
    #[test]
    fn a_wrong_identity_shows_in_every_fold() {
        struct OffByOne;
        impl Monoid for OffByOne {
            type Elem = i32;
            fn identity(&self) -> i32 {
                1
            }
            fn combine(&self, a: &i32, b: &i32) -> i32 {
                a.wrapping_add(*b)
            }
            fn cuda(&self) -> crate::CudaOp {
                crate::CudaOp::new::<i32>("off_by_one")
                    .identity("1")
                    .combine_expr("a + b")
            }
        }
        assert_eq!(reduce(&OffByOne, &[2, 3]), 6);
        assert_eq!(inclusive_scan(&OffByOne, &[2, 3]), [3, 6]);
        assert_eq!(reduce(&Sum::<i32>::new(), &[2, 3]), 5);
    }

    #[test]
    fn runs_scan_from_each_start_both_ways() {
        let m = MatMulMod::new(1_000_003).unwrap();
        let xs = [
            Mat2::new([1, 2, 3, 4]),
            Mat2::new([0, 1, 1, 0]),
            Mat2::new([2, 0, 5, 1]),
        ];
        let a = Mat2::new([1, 7, 0, 1]);
        let c = |p: &Mat2, q: &Mat2| m.combine(p, q);
        let [x0, x1, x2] = xs;
        let run = |reverse, start| {
            let mut ys = xs;
            let after = scan_run(&m, &mut ys, reverse, start);
            (ys.to_vec(), after)
        };
        let all = c(&c(&x0, &x1), &x2);
        assert_eq!(
            run(false, Start::Open),
            (vec![x0, c(&x0, &x1), all], Some(all))
        );
        assert_eq!(
            run(false, Start::After(a)).0,
            vec![c(&a, &x0), c(&c(&a, &x0), &x1), c(&a, &all)]
        );
        assert_eq!(
            run(false, Start::Exclusive(a)),
            (vec![a, c(&a, &x0), c(&c(&a, &x0), &x1)], Some(c(&a, &all)))
        );
        assert_eq!(
            run(true, Start::Open),
            (vec![all, c(&x1, &x2), x2], Some(all))
        );
        assert_eq!(
            run(true, Start::Exclusive(a)),
            (vec![c(&c(&x1, &x2), &a), c(&x2, &a), a], Some(c(&all, &a)))
        );
        let mut none: [Mat2; 0] = [];
        assert_eq!(scan_run(&m, &mut none, true, Start::Open), None);
        assert_eq!(scan_run(&m, &mut none, false, Start::Exclusive(a)), Some(a));
        assert_eq!(Start::Exclusive(a).from(Some(x0)), Start::Exclusive(x0));
        assert_eq!(Start::Open.from(Some(x0)), Start::After(x0));
        assert_eq!(Start::After(a).from(None), Start::Open);
    }

    /// A strided scan touches only its lane's elements and equals the scan of them gathered.
    #[test]
    fn strided_runs_scan_their_elements_only() {
        let m = MatMulMod::new(1_000_003).unwrap();
        let xs: Vec<Mat2> = (0..11u32).map(|i| Mat2::new([i, 1, i * i, 1])).collect();
        for (reverse, start) in [
            (false, Start::Open),
            (true, Start::Open),
            (false, Start::Exclusive(Mat2::new([2, 0, 1, 1]))),
            (true, Start::After(Mat2::new([1, 3, 0, 1]))),
        ] {
            let mut lane: Vec<Mat2> = xs.iter().step_by(3).copied().collect();
            let want_after = scan_run(&m, &mut lane, reverse, start);
            let mut got = xs.clone();
            let after = scan_strided(&m, &mut got[..10], 3, reverse, start);
            assert_eq!(after, want_after);
            for (i, (g, x)) in got.iter().zip(&xs).enumerate() {
                let want = if i % 3 == 0 && i < 10 {
                    lane[i / 3]
                } else {
                    *x
                };
                assert_eq!(*g, want, "element {i}, reverse {reverse}");
            }
        }
    }

    #[test]
    fn order_is_kept() {
        let m = MatMulMod::new(1_000_003).unwrap();
        let a = Mat2::new([1, 2, 3, 4]);
        let b = Mat2::new([0, 1, 1, 0]);
        assert_eq!(reduce(&m, &[a, b]), m.combine(&a, &b));
        assert_eq!(inclusive_scan(&m, &[a, b])[1], m.combine(&a, &b));
    }
}
