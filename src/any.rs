//! [`AnyBackend`]: the GPU when one is usable, the parallel CPU backend otherwise, chosen at run
//! time.
//!
//! [`Backend`] has generic methods, so it cannot be a trait object (`Box<dyn Backend>`); this
//! enum is the run-time choice instead, and implements [`Backend`] by handing every call to the
//! backend it holds.

use crate::backend::Backend;
use crate::cpu::Parallel;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::map::Map;
use crate::monoid::Monoid;

/// A GPU or the parallel CPU backend, picked at run time; it says which ([`Backend::describe`],
/// [`AnyBackend::is_gpu`]) and, on the CPU, why ([`AnyBackend::gpu_unavailable`]).
///
/// ```
/// use monoscan::{AnyBackend, Backend, ops::Sum};
/// # fn main() -> monoscan::Result<()> {
/// let backend = AnyBackend::auto()?; // GPU 0 if usable, else the CPU (rayon)
/// println!("running on {}", backend.describe());
/// let xs: Vec<u64> = (1..=1000).collect();
/// assert_eq!(backend.reduce(&Sum::new(), &xs)?, 500_500);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum AnyBackend {
    /// A GPU, with its kernels compiled through NVRTC (boxed: a `Gpu` is large beside the CPU
    /// backend).
    Gpu(Box<Gpu>),
    /// The parallel CPU backend.
    Cpu {
        /// The backend.
        backend: Parallel,
        /// Why no GPU is used: `None` when the CPU was asked for ([`AnyBackend::cpu`]).
        why: Option<Error>,
    },
}

impl AnyBackend {
    /// GPU 0 when the GPU stack is usable (a driver, a device and NVRTC), the parallel CPU
    /// backend otherwise, keeping the reason ([`AnyBackend::gpu_unavailable`]).
    ///
    /// Only a missing stack ([`Error::is_unavailable`]) falls back to the CPU: any other failure
    /// (a driver error on a device that is present) is returned, never hidden behind a slower
    /// backend.
    pub fn auto() -> Result<Self> {
        // `Gpu::new` loads NVRTC too: a missing one is `Error::NoNvrtc`.
        Self::auto_from(Gpu::new(0))
    }

    /// [`AnyBackend::auto`] for an already attempted GPU (for instance one opened with a
    /// [`crate::tuning::Tuning`] or another ordinal): the GPU when `gpu` is `Ok`, the CPU when
    /// its error means "no GPU stack here", the error otherwise.
    pub fn auto_from(gpu: Result<Gpu>) -> Result<Self> {
        match gpu {
            Ok(gpu) => Ok(AnyBackend::Gpu(Box::new(gpu))),
            Err(why) if why.is_unavailable() => Ok(AnyBackend::Cpu {
                backend: Parallel::default(),
                why: Some(why),
            }),
            Err(e) => Err(e),
        }
    }

    /// The parallel CPU backend, asked for.
    pub fn cpu() -> Self {
        AnyBackend::Cpu {
            backend: Parallel::default(),
            why: None,
        }
    }

    /// Whether this is a GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self, AnyBackend::Gpu(_))
    }

    /// The GPU, when this is one (for [`Gpu::scanner`] and the other device-buffer calls).
    pub fn as_gpu(&self) -> Option<&Gpu> {
        match self {
            AnyBackend::Gpu(gpu) => Some(gpu),
            AnyBackend::Cpu { .. } => None,
        }
    }

    /// Why [`AnyBackend::auto`] chose the CPU: `None` on a GPU, or when the CPU was asked for.
    pub fn gpu_unavailable(&self) -> Option<&Error> {
        match self {
            AnyBackend::Gpu(_) => None,
            AnyBackend::Cpu { why, .. } => why.as_ref(),
        }
    }
}

/// Hands a call to the backend held.
macro_rules! each {
    ($self:ident, $b:ident => $call:expr) => {
        match $self {
            AnyBackend::Gpu($b) => $call,
            AnyBackend::Cpu { backend: $b, .. } => $call,
        }
    };
}

impl Backend for AnyBackend {
    /// The backend's own description; on a CPU chosen by [`AnyBackend::auto`], followed by why
    /// no GPU is used.
    fn describe(&self) -> String {
        match self {
            AnyBackend::Gpu(gpu) => gpu.describe(),
            AnyBackend::Cpu { backend, why: None } => backend.describe(),
            AnyBackend::Cpu {
                backend,
                why: Some(why),
            } => format!("{} (no GPU: {why})", backend.describe()),
        }
    }

    fn prepare<M: Monoid>(&self, m: &M) -> Result<()> {
        each!(self, b => b.prepare(m))
    }

    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        each!(self, b => b.reduce(m, xs))
    }

    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        each!(self, b => b.inclusive_scan_in_place(m, xs))
    }

    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        each!(self, b => b.exclusive_scan_in_place(m, xs, init))
    }

    fn inclusive_scan<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<Vec<M::Elem>> {
        each!(self, b => b.inclusive_scan(m, xs))
    }

    fn exclusive_scan<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<Vec<M::Elem>> {
        each!(self, b => b.exclusive_scan(m, xs, init))
    }

    fn exclusive_scan_total<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        each!(self, b => b.exclusive_scan_total(m, xs, init))
    }

    fn map_reduce<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<M::Elem> {
        each!(self, b => b.map_reduce(m, map, xs))
    }

    fn map_inclusive_scan<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<Vec<M::Elem>> {
        each!(self, b => b.map_inclusive_scan(m, map, xs))
    }

    fn map_exclusive_scan_total<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        each!(self, b => b.map_exclusive_scan_total(m, map, xs, init))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Affine, AffineMap, Sum};

    fn unavailable() -> Error {
        Error::NoDriver {
            detail: Some("libcuda.so.1: cannot open shared object file".into()),
        }
    }

    #[test]
    fn a_missing_stack_falls_back_to_the_cpu_and_says_why() {
        let any = AnyBackend::auto_from(Err(unavailable())).unwrap();
        assert!(!any.is_gpu());
        assert!(any.as_gpu().is_none());
        assert!(matches!(
            any.gpu_unavailable(),
            Some(Error::NoDriver { .. })
        ));
        let text = any.describe();
        assert!(text.starts_with(&Parallel::default().describe()), "{text}");
        assert!(text.contains("no GPU: no CUDA driver"), "{text}");
        assert!(text.contains("libcuda.so.1: cannot open"), "{text}");
    }

    #[test]
    fn a_real_failure_is_returned_not_hidden() {
        let e = AnyBackend::auto_from(Err(Error::invalid("a bad tuning"))).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        let e = AnyBackend::auto_from(Err(Error::Nvrtc("nvrtcVersion: error".into())));
        assert!(e.is_err());
    }

    #[test]
    fn the_cpu_asked_for_gives_no_reason() {
        let any = AnyBackend::cpu();
        assert!(any.gpu_unavailable().is_none());
        assert_eq!(any.describe(), Parallel::default().describe());
    }

    /// Every call reaches the backend held, with its results: compared with the sequential
    /// reference on a non-commutative operator (exact: the maps are small integers, so every
    /// grouping gives the same f64s) and boundary lengths.
    #[test]
    fn calls_reach_the_cpu_backend() {
        let seq = crate::cpu::Sequential;
        for any in [
            AnyBackend::cpu(),
            AnyBackend::auto_from(Err(unavailable())).unwrap(),
        ] {
            let m = Affine::<f64>::new();
            for n in [0usize, 1, 2, 1000, 4097] {
                let xs: Vec<AffineMap<f64>> = (0..n)
                    .map(|i| AffineMap::new(if i % 3 == 0 { -1.0 } else { 1.0 }, (i % 5) as f64))
                    .collect();
                assert_eq!(any.reduce(&m, &xs).unwrap(), seq.reduce(&m, &xs).unwrap());
                assert_eq!(
                    any.inclusive_scan(&m, &xs).unwrap(),
                    seq.inclusive_scan(&m, &xs).unwrap()
                );
                let init = AffineMap::new(2.0, 1.0);
                assert_eq!(
                    any.exclusive_scan_total(&m, &xs, init).unwrap(),
                    seq.exclusive_scan_total(&m, &xs, init).unwrap()
                );
                let widen = Map::new("widen", "(unsigned long long)x", |x: &u32| u64::from(*x));
                let ys: Vec<u32> = (0..n as u32)
                    .map(|i| i.wrapping_mul(2_654_435_761))
                    .collect();
                let s = Sum::<u64>::new();
                assert_eq!(
                    any.map_reduce(&s, &widen, &ys).unwrap(),
                    seq.map_reduce(&s, &widen, &ys).unwrap()
                );
                assert_eq!(
                    any.map_inclusive_scan(&s, &widen, &ys).unwrap(),
                    seq.map_inclusive_scan(&s, &widen, &ys).unwrap()
                );
                assert_eq!(
                    any.map_exclusive_scan_total(&s, &widen, &ys, 7).unwrap(),
                    seq.map_exclusive_scan_total(&s, &widen, &ys, 7).unwrap()
                );
            }
        }
    }
}
