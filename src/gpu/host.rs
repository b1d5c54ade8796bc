//! [`Backend`] for [`Gpu`]: host slices in, host results out (uploads, one scan, downloads).

use super::device::alloc_error;
use super::Gpu;
use crate::backend::Backend;
use crate::error::Result;
use crate::monoid::Monoid;
use cudarc::driver::CudaSlice;

impl Gpu {
    pub(crate) fn upload<T: cudarc::driver::DeviceRepr>(&self, xs: &[T]) -> Result<CudaSlice<T>> {
        let bytes = std::mem::size_of_val(xs);
        self.stream
            .clone_htod(xs)
            .map_err(|e| alloc_error(&self.ctx, bytes, e))
    }
}

impl Backend for Gpu {
    fn describe(&self) -> String {
        format!(
            "gpu {}: {} (sm_{}, {} SMs)",
            self.info.ordinal, self.info.name, self.info.cc, self.info.sm_count
        )
    }

    fn prepare<M: Monoid>(&self, m: &M) -> Result<()> {
        self.scanner(m).prepare()
    }

    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        let input = self.upload(xs)?;
        let mut total = self.upload(&[m.identity()])?;
        self.scanner(m).reduce(&input, &mut total)?;
        Ok(self.stream.clone_dtoh(&total)?[0])
    }

    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        let mut data = self.upload(xs)?;
        self.scanner(m).inclusive_in_place(&mut data)?;
        self.stream.memcpy_dtoh(&data, xs)?;
        self.stream.synchronize()?;
        Ok(())
    }

    fn map_reduce<M: Monoid, In: crate::Element>(
        &self,
        m: &M,
        map: &crate::Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<M::Elem> {
        let input = self.upload(xs)?;
        let mut total = self.upload(&[m.identity()])?;
        self.scanner(m).mapped(map).reduce(&input, &mut total)?;
        Ok(self.stream.clone_dtoh(&total)?[0])
    }

    fn map_inclusive_scan<M: Monoid, In: crate::Element>(
        &self,
        m: &M,
        map: &crate::Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<Vec<M::Elem>> {
        let input = self.upload(xs)?;
        let scanner = self.scanner(m);
        let mut out = scanner.alloc_filled(xs.len(), m.identity())?;
        scanner.mapped(map).inclusive(&input, &mut out)?;
        Ok(self.stream.clone_dtoh(&out)?)
    }

    fn map_exclusive_scan_total<M: Monoid, In: crate::Element>(
        &self,
        m: &M,
        map: &crate::Map<In, M::Elem>,
        xs: &[In],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let input = self.upload(xs)?;
        let scanner = self.scanner(m);
        let mut out = scanner.alloc_filled(xs.len(), m.identity())?;
        let mut total = self.upload(&[init])?;
        scanner
            .mapped(map)
            .exclusive_with_total(&input, &mut out, init, &mut total)?;
        Ok((
            self.stream.clone_dtoh(&out)?,
            self.stream.clone_dtoh(&total)?[0],
        ))
    }

    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        let mut data = self.upload(xs)?;
        let mut total = self.upload(&[init])?;
        self.scanner(m)
            .exclusive_in_place(&mut data, init, &mut total)?;
        self.stream.memcpy_dtoh(&data, xs)?;
        Ok(self.stream.clone_dtoh(&total)?[0])
    }
}

impl Gpu {
    /// `[a[0] ⊕ b[0], ..., a[n-1] ⊕ b[n-1], identity]` computed by the generated CUDA.
    pub(crate) fn combine_on_device<M: Monoid>(
        &self,
        m: &M,
        a: &[M::Elem],
        b: &[M::Elem],
    ) -> Result<Vec<M::Elem>> {
        let scanner = self.scanner(m);
        let k = scanner.kernels(crate::codegen::KernelSet::Check)?;
        let da = self.upload(a)?;
        let db = self.upload(b)?;
        let mut init = a.to_vec();
        init.push(m.identity());
        let mut out = self.upload(&init)?;
        let s = &self.stream;
        {
            use cudarc::driver::{DevicePtr, DevicePtrMut};
            let (pa, _g1) = da.device_ptr(s);
            let (pb, _g2) = db.device_ptr(s);
            let (po, _g3) = out.device_ptr_mut(s);
            super::launch::combine_pairs(
                s,
                k.function("combine_pairs")?,
                pa,
                pb,
                po,
                a.len() as u64,
            )?;
        }
        Ok(s.clone_dtoh(&out)?)
    }
}
