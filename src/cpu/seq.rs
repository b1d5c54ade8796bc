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
    inclusive_scan_from(m, xs, None);
}

/// Replaces `xs[i]` by `carry ⊕ x0 ⊕ ... ⊕ xi` (no carry: `e ⊕ x0 ⊕ ... ⊕ xi`).
pub(crate) fn inclusive_scan_from<M: Monoid>(m: &M, xs: &mut [M::Elem], carry: Option<M::Elem>) {
    let mut acc = carry.unwrap_or_else(|| m.identity());
    for x in xs.iter_mut() {
        acc = m.combine(&acc, x);
        *x = acc;
    }
}

/// Replaces `xs` by its exclusive scan from `init`; returns `init ⊕ x0 ⊕ ... ⊕ x(n-1)`.
pub fn exclusive_scan_in_place<M: Monoid>(m: &M, xs: &mut [M::Elem], init: M::Elem) -> M::Elem {
    let mut acc = init;
    for x in xs.iter_mut() {
        let next = m.combine(&acc, x);
        *x = acc;
        acc = next;
    }
    acc
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
    fn order_is_kept() {
        let m = MatMulMod::new(1_000_003).unwrap();
        let a = Mat2::new([1, 2, 3, 4]);
        let b = Mat2::new([0, 1, 1, 0]);
        assert_eq!(reduce(&m, &[a, b]), m.combine(&a, &b));
        assert_eq!(inclusive_scan(&m, &[a, b])[1], m.combine(&a, &b));
    }
}
