//! The sequential reference: plain left folds, the ground truth of every test.

use crate::backend::Backend;
use crate::error::Result;
use crate::monoid::Monoid;

/// `e ⊕ x0 ⊕ ... ⊕ x(n-1)`, folded left to right.
pub fn reduce<M: Monoid>(m: &M, xs: &[M::Elem]) -> M::Elem {
    match xs.split_first() {
        None => m.identity(),
        Some((first, rest)) => rest.iter().fold(*first, |acc, x| m.combine(&acc, x)),
    }
}

/// Replaces `xs` by its inclusive scan.
pub fn inclusive_scan_in_place<M: Monoid>(m: &M, xs: &mut [M::Elem]) {
    inclusive_scan_from(m, xs, None);
}

/// Replaces `xs[i]` by `carry ⊕ x0 ⊕ ... ⊕ xi` (no carry: `x0 ⊕ ... ⊕ xi`).
pub(crate) fn inclusive_scan_from<M: Monoid>(m: &M, xs: &mut [M::Elem], carry: Option<M::Elem>) {
    let mut acc = carry;
    for x in xs.iter_mut() {
        let next = match acc {
            None => *x,
            Some(a) => m.combine(&a, x),
        };
        *x = next;
        acc = Some(next);
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

    #[test]
    fn order_is_kept() {
        let m = MatMulMod::new(1_000_003).unwrap();
        let a = Mat2::new([1, 2, 3, 4]);
        let b = Mat2::new([0, 1, 1, 0]);
        assert_eq!(reduce(&m, &[a, b]), m.combine(&a, &b));
        assert_eq!(inclusive_scan(&m, &[a, b])[1], m.combine(&a, &b));
    }
}
