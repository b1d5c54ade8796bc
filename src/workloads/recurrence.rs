//! Linear recurrences `x_t = a_t * x_(t-1) + b_t` as scans of affine maps.
//!
//! The step `x -> a_t x + b_t` is an affine map; the state after `t` steps is the composition
//! of the first `t` maps applied to `x_0`, so an inclusive [`Affine`] scan gives every state in
//! parallel.

use crate::alloc;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::ops::{Affine, AffineMap, Flagged, Float, Segmented};

/// The states `x_1 ..= x_n` of `x_t = a[t-1] * x_(t-1) + b[t-1]` from `x0`.
///
/// ```
/// use monoscan::{cpu::Sequential, workloads::recurrence::linear};
/// let xs = linear(&Sequential, &[2.0, 2.0, 2.0], &[1.0, 1.0, 1.0], 0.0).unwrap();
/// assert_eq!(xs, [1.0, 3.0, 7.0]);
/// ```
pub fn linear<B: Backend, T: Float>(backend: &B, a: &[T], b: &[T], x0: T) -> Result<Vec<T>> {
    if a.len() != b.len() {
        return Err(Error::invalid(format!(
            "{} slopes but {} offsets",
            a.len(),
            b.len()
        )));
    }
    let mut maps = alloc::collect(a.iter().zip(b).map(|(&a, &b)| AffineMap::new(a, b)))?;
    backend.inclusive_scan_in_place(&Affine::<T>::new(), &mut maps)?;
    alloc::collect(maps.iter().map(|m| m.apply(x0)))
}

/// The exponential moving average `x_t = (1 - alpha) x_(t-1) + alpha u_t` from `x0`.
pub fn ema<B: Backend>(backend: &B, u: &[f64], alpha: f64, x0: f64) -> Result<Vec<f64>> {
    if !(0.0..=1.0).contains(&alpha) {
        return Err(Error::invalid(format!("alpha {alpha} outside 0..=1")));
    }
    let a = alloc::filled(u.len(), 1.0 - alpha)?;
    let b = alloc::collect(u.iter().map(|x| alpha * x))?;
    linear(backend, &a, &b, x0)
}

/// A diagonal state-space recurrence over `channels` independent channels, inputs stored
/// time-major (`a[t * channels + c]`): `x_t[c] = a_t[c] x_(t-1)[c] + bu_t[c]`, from zero.
/// Runs as one segmented scan (a segment per channel).
pub fn diagonal_ssm<B: Backend>(
    backend: &B,
    a: &[f64],
    bu: &[f64],
    channels: usize,
) -> Result<Vec<f64>> {
    if channels == 0 || a.len() != bu.len() || a.len() % channels != 0 {
        return Err(Error::invalid(format!(
            "diagonal_ssm needs equal-length a and bu, a multiple of {channels} channels"
        )));
    }
    let steps = a.len() / channels;
    let mut xs = alloc::with_capacity(a.len())?;
    for c in 0..channels {
        for t in 0..steps {
            let i = t * channels + c;
            xs.push(Flagged::new(AffineMap::new(a[i], bu[i]), t == 0));
        }
    }
    backend.inclusive_scan_in_place(&Segmented::new(Affine::<f64>::new()), &mut xs)?;
    let mut out = alloc::filled(a.len(), 0.0)?;
    for c in 0..channels {
        for t in 0..steps {
            out[t * channels + c] = xs[c * steps + t].value.apply(0.0);
        }
    }
    Ok(out)
}
