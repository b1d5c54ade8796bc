//! The opposite of a monoid: the same elements, combined in the other order.

use crate::monoid::{CudaOp, Monoid};

/// The opposite monoid of `M`: `a ⊙ b = b ⊕ a`, with `M`'s identity.
///
/// A forward scan of a reversed sequence under `Reversed<M>` is the reverse scan (suffixes)
/// of the sequence under `M`, with every combine in sequence order; reverse lane scans
/// ([`crate::lanes::LaneScan::reverse`]) run this way.
///
/// ```
/// use monoscan::{Monoid, ops::{Affine, AffineMap, Reversed}};
/// let f = AffineMap::new(2.0, 1.0);
/// let g = AffineMap::new(3.0, 0.0);
/// let op = Affine::<f64>::new();
/// assert_eq!(Reversed::new(op).combine(&f, &g), op.combine(&g, &f));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Reversed<M>(pub M);

impl<M> Reversed<M> {
    /// The opposite of `inner`.
    pub fn new(inner: M) -> Self {
        Reversed(inner)
    }
}

impl<M: Monoid> Monoid for Reversed<M> {
    type Elem = M::Elem;
    fn identity(&self) -> Self::Elem {
        self.0.identity()
    }
    fn combine(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem {
        self.0.combine(b, a)
    }
    fn cuda(&self) -> CudaOp {
        let inner = self.0.cuda();
        CudaOp::new::<M::Elem>(format!("rev_{}", inner.name))
            .nest("inner", inner)
            .identity("inner::identity()")
            .combine_expr("inner::combine(b, a)")
    }
}
