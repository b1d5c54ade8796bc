//! Checking that an operator's CUDA side computes what its Rust side does.
//!
//! [`verify_pairs`] (and `verify`, on random elements: feature `laws`) runs `combine` on the
//! same pairs of elements through the host definition and through the generated CUDA, compares
//! the identities too, and reports the first disagreement: which input, both operands, both
//! results. Two definitions of one operator
//! drifting apart is the bug this catches (a sign, an operand order, an overflow).

use crate::error::Result;
use crate::gpu::Gpu;
use crate::monoid::Monoid;
#[cfg(feature = "laws")]
use proptest::strategy::{Strategy, ValueTree};
#[cfg(feature = "laws")]
use proptest::test_runner::TestRunner;
use std::fmt;

/// The first place where the host and the device disagree.
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch<T> {
    /// The identities differ.
    Identity {
        /// `Monoid::identity`.
        host: T,
        /// The CUDA identity expression, evaluated on the device.
        device: T,
    },
    /// `combine(a, b)` differs for input pair `index`.
    Combine {
        /// Which pair.
        index: usize,
        /// Left operand.
        a: T,
        /// Right operand.
        b: T,
        /// `Monoid::combine(a, b)`.
        host: T,
        /// The CUDA combine on the device.
        device: T,
    },
}

impl<T: fmt::Debug> fmt::Display for Mismatch<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Identity { host, device } => write!(
                f,
                "the CUDA identity differs from the Rust one: host {host:?}, device {device:?}"
            ),
            Mismatch::Combine { index, a, b, host, device } => write!(
                f,
                "combine disagrees at input {index}: a = {a:?}, b = {b:?}; host gives {host:?}, device gives {device:?}"
            ),
        }
    }
}

/// Runs `combine` on every pair through the host and through the device; the first
/// disagreement under `eq`, or `None` when they agree everywhere.
pub fn verify_pairs<M: Monoid>(
    gpu: &Gpu,
    m: &M,
    pairs: &[(M::Elem, M::Elem)],
    eq: impl Fn(&M::Elem, &M::Elem) -> bool,
) -> Result<Option<Mismatch<M::Elem>>> {
    let (a, b): (Vec<_>, Vec<_>) = pairs.iter().copied().unzip();
    let device = gpu.combine_on_device(m, &a, &b)?;
    let (results, identity) = device.split_at(pairs.len());
    if !eq(&m.identity(), &identity[0]) {
        return Ok(Some(Mismatch::Identity {
            host: m.identity(),
            device: identity[0],
        }));
    }
    for (index, ((a, b), d)) in pairs.iter().zip(results).enumerate() {
        let host = m.combine(a, b);
        if !eq(&host, d) {
            return Ok(Some(Mismatch::Combine {
                index,
                a: *a,
                b: *b,
                host,
                device: *d,
            }));
        }
    }
    Ok(None)
}

/// [`verify_pairs`] on `count` random pairs drawn from `elems`, compared exactly: with `==`,
/// except that two values that both hold a NaN (so are unequal to themselves) are the same
/// when they print the same (`Debug`), as the NaN identities of the float `Min` and `Max`
/// do.
///
/// ```
/// use monoscan::{verify, Gpu, ops::MatMulMod};
/// use proptest::prelude::*;
/// # fn main() -> monoscan::Result<()> {
/// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
/// let op = MatMulMod::new(1_000_003).unwrap();
/// let mats = prop::array::uniform4(0u32..1_000_003).prop_map(monoscan::ops::Mat2::new);
/// assert_eq!(verify::verify(&gpu, &op, mats, 10_000)?, None);
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "laws")]
#[cfg_attr(docsrs, doc(cfg(feature = "laws")))]
pub fn verify<M, S>(gpu: &Gpu, m: &M, elems: S, count: usize) -> Result<Option<Mismatch<M::Elem>>>
where
    M: Monoid,
    S: Strategy<Value = M::Elem>,
{
    let mut runner = TestRunner::default();
    let mut draw = || -> M::Elem {
        elems
            .new_tree(&mut runner)
            .map(|t| t.current())
            .unwrap_or_else(|_| m.identity())
    };
    let pairs: Vec<_> = (0..count).map(|_| (draw(), draw())).collect();
    verify_pairs(gpu, m, &pairs, same)
}

/// `x == y`, or both hold a NaN and print alike.
#[allow(clippy::eq_op)]
#[cfg_attr(not(feature = "laws"), allow(dead_code))]
fn same<T: PartialEq + std::fmt::Debug>(x: &T, y: &T) -> bool {
    x == y || (x != x && y != y && format!("{x:?}") == format!("{y:?}"))
}

#[cfg(test)]
mod tests {
    use super::same;
    use crate::ops::Indexed;

    #[test]
    fn nans_compare_by_what_they_print() {
        assert!(same(&f32::NAN, &f32::NAN));
        assert!(same(&-0.0f64, &0.0));
        assert!(!same(&f32::NAN, &1.0));
        assert!(same(
            &Indexed::new(f64::NAN, 3),
            &Indexed::new(-f64::NAN, 3)
        ));
        assert!(!same(
            &Indexed::new(f64::NAN, 3),
            &Indexed::new(f64::NAN, 4)
        ));
    }
}
