//! Stream compaction and allocation offsets on device buffers.

use super::{launch, Gpu};
use crate::codegen::KernelSet;
use crate::error::{Error, Result};
use crate::map::Map;
use crate::ops::Sum;
use crate::Element;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

impl Gpu {
    /// Keeps the elements of `input` that `keep` maps to nonzero (any nonzero value keeps), in order; returns
    /// them and how many there are.
    ///
    /// An exclusive scan of the fused `keep` counts gives every kept element its position and
    /// the total; after the total is read back (one synchronisation) a scatter writes them.
    ///
    /// ```
    /// use monoscan::{Gpu, Map};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() => return Ok(()), Err(e) => return Err(e) };
    /// let even = Map::new("even", "(x % 2 == 0) ? 1u : 0u", |x: &i32| u32::from(x % 2 == 0));
    /// let xs = gpu.stream().clone_htod(&[1, 2, 3, 4, 6, 7])?;
    /// let (kept, count) = gpu.compact(&xs, &even)?;
    /// assert_eq!(count, 3);
    /// assert_eq!(gpu.stream().clone_dtoh(&kept)?, [2, 4, 6]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compact<T: Element, I: DevicePtr<T>>(
        &self,
        input: &I,
        keep: &Map<T, u32>,
    ) -> Result<(CudaSlice<T>, u64)> {
        let n = input.len();
        if n as u64 > u64::from(u32::MAX) {
            return Err(Error::invalid(format!(
                "compaction counts in 32 bits: at most {} elements, got {n}",
                u32::MAX
            )));
        }
        let keep = keep.as_selection();
        let sum = Sum::<u32>::new();
        let scanner = self.scanner(&sum);
        let mut offsets = launch::alloc_for_writes::<u32>(&self.stream, n)?;
        let mut total = self.upload(&[0u32])?;
        let mapped = scanner.mapped(&keep);
        mapped.exclusive_with_total(input, &mut offsets, 0, &mut total)?;
        let count = self.stream.clone_dtoh(&total)?[0] as usize;
        let mut out = launch::alloc_for_writes::<T>(&self.stream, count)?;
        if count > 0 {
            let k = mapped.inner.kernels(KernelSet::Scatter)?;
            let (inp, _g1) = input.device_ptr(&self.stream);
            let (off, _g2) = offsets.device_ptr(&self.stream);
            let (o, _g3) = out.device_ptr_mut(&self.stream);
            launch::scatter(
                &self.stream,
                k.function("scatter_mapped")?,
                inp,
                off,
                o,
                n as u64,
            )?;
        }
        Ok((out, count as u64))
    }

    /// Allocation offsets: the exclusive scan of per-item `requests` (sizes; zeros allowed),
    /// widened to 64 bits inside the kernel, and the total (read back: one synchronisation).
    /// Item `i` owns `offsets[i] .. offsets[i] + requests[i]` of a buffer of `total` elements.
    pub fn allocation_offsets<I: DevicePtr<u32>>(
        &self,
        requests: &I,
    ) -> Result<(CudaSlice<u64>, u64)> {
        let sum = Sum::<u64>::new();
        let widen = Map::new("widen_u32", "(unsigned long long)x", |x: &u32| {
            u64::from(*x)
        });
        let scanner = self.scanner(&sum);
        let mut offsets = launch::alloc_for_writes::<u64>(&self.stream, requests.len())?;
        let mut total = self.upload(&[0u64])?;
        scanner
            .mapped(&widen)
            .exclusive_with_total(requests, &mut offsets, 0, &mut total)?;
        let total = self.stream.clone_dtoh(&total)?[0];
        Ok((offsets, total))
    }
}
