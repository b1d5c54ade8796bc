//! Interned operators: one [`OpKey`] per distinct [`CudaOp`] of a cache, whose identity keys
//! the memory layer.

use crate::monoid::CudaOp;
use crate::tuning::cost::CombineCost;
use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// An operator as a [`super::KernelCache`] knows it: its CUDA description, an identity (equal
/// operators of one cache share it, different ones never do) and the estimate of its
/// combine's cost. Obtained from [`super::KernelCache::intern`].
#[derive(Debug)]
pub struct OpKey {
    id: u64,
    op: CudaOp,
    cost: CombineCost,
}

impl OpKey {
    /// The identity: unique to this operator within its cache.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The operator.
    pub fn op(&self) -> &CudaOp {
        &self.op
    }

    /// The estimated cost of one combine (estimated once, when the operator was interned).
    pub fn cost(&self) -> CombineCost {
        self.cost
    }
}

/// An interned operator, hashed and compared by its [`CudaOp`].
#[derive(Debug)]
struct ByOp(Arc<OpKey>);

impl Hash for ByOp {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.op.hash(state);
    }
}

impl PartialEq for ByOp {
    fn eq(&self, other: &Self) -> bool {
        self.0.op == other.0.op
    }
}

impl Eq for ByOp {}

impl Borrow<CudaOp> for ByOp {
    fn borrow(&self) -> &CudaOp {
        &self.0.op
    }
}

/// The operators of one cache.
#[derive(Debug, Default)]
pub(super) struct Interner {
    ops: Mutex<HashSet<ByOp>>,
    next: AtomicU64,
}

impl Interner {
    /// The key of `op`, if interned.
    pub(super) fn find(&self, op: &CudaOp) -> Option<Arc<OpKey>> {
        self.lock().get(op).map(|k| k.0.clone())
    }

    /// The key of `op`: the existing one, or a new identity.
    pub(super) fn intern(&self, op: CudaOp) -> Arc<OpKey> {
        let mut ops = self.lock();
        if let Some(k) = ops.get(&op) {
            return k.0.clone();
        }
        let key = Arc::new(OpKey {
            id: self.next.fetch_add(1, Ordering::Relaxed),
            cost: CombineCost::of(&op),
            op,
        });
        ops.insert(ByOp(key.clone()));
        key
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<ByOp>> {
        self.ops.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monoid::Monoid;
    use crate::ops::{MatMulMod, Sum};

    #[test]
    fn equal_operators_share_an_identity_and_others_never_do() {
        let i = Interner::default();
        let a = i.intern(MatMulMod::new(7).unwrap().cuda());
        let b = i.intern(MatMulMod::new(7).unwrap().cuda());
        let c = i.intern(MatMulMod::new(11).unwrap().cuda());
        let d = i.intern(Sum::<i32>::new().cuda());
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.id(), b.id());
        assert_ne!(a.id(), c.id());
        assert_ne!(c.id(), d.id());
        assert!(i.find(&Sum::<i32>::new().cuda()).is_some());
        assert!(i.find(&Sum::<u32>::new().cuda()).is_none());
        assert_eq!(a.cost(), CombineCost::of(a.op()));
    }
}
