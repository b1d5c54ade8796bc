//! Stream compaction and allocation offsets on device buffers.

use super::{launch, Gpu};
use crate::codegen::{select_shape, select_staged_shape, KernelSet, PrefetchPlan};
use crate::error::{Error, Result};
use crate::map::Map;
use crate::ops::Sum;
use crate::Element;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

impl Gpu {
    /// Keeps the elements of `input` that `keep` maps to nonzero (any nonzero value keeps), in order; returns
    /// them and how many there are.
    ///
    /// One fused pass ([`Gpu::compact_into`]) into a buffer of `input.len()` elements, the
    /// count read back (one synchronisation), then the kept elements copied into a buffer of
    /// exactly that length. Use [`Gpu::compact_into`] to keep the input-sized buffer and skip
    /// the copy.
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
        let mut room = launch::alloc_for_writes::<T>(&self.stream, n)?;
        let count = self.compact_into(input, keep, &mut room)? as usize;
        let mut out = launch::alloc_for_writes::<T>(&self.stream, count)?;
        if count > 0 {
            self.stream.memcpy_dtod(&room.slice(..count), &mut out)?;
        }
        Ok((out, count as u64))
    }

    /// Stream compaction into `output`, which must have room for every element of `input`:
    /// writes the elements that `keep` maps to nonzero, in order, to the front of `output`
    /// and returns how many (the count is read back: one synchronisation). The rest of
    /// `output` is left as it was.
    ///
    /// One kernel reads each element once and writes each kept element once: the single-pass
    /// scan of the keep counts with the scatter fused into it (each warp writes its kept
    /// elements as one contiguous run).
    ///
    /// ```
    /// use monoscan::{Gpu, Map};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() => return Ok(()), Err(e) => return Err(e) };
    /// let positive = Map::new("positive", "x > 0.0f ? 1u : 0u", |x: &f32| u32::from(*x > 0.0));
    /// let xs = gpu.stream().clone_htod(&[0.5f32, -1.0, 2.0, 0.0])?;
    /// let mut out = gpu.stream().clone_htod(&[0.0f32; 4])?;
    /// let count = gpu.compact_into(&xs, &positive, &mut out)?;
    /// assert_eq!(count, 2);
    /// assert_eq!(gpu.stream().clone_dtoh(&out)?[..2], [0.5, 2.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compact_into<T: Element, I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &self,
        input: &I,
        keep: &Map<T, u32>,
        output: &mut O,
    ) -> Result<u64> {
        // Written by the last tile, or zeroed for an empty input.
        let mut count = launch::alloc_for_writes::<u32>(&self.stream, 1)?;
        self.compact_into_counted(input, keep, output, &mut count)?;
        Ok(u64::from(self.stream.clone_dtoh(&count)?[0]))
    }

    /// [`Gpu::compact_into`] without the synchronisation: queues the compaction on this GPU's
    /// stream and leaves the number of kept elements in `count[0]` on the device, as CUB's
    /// `DeviceSelect` does, for work that reads it on the GPU.
    ///
    /// ```
    /// use monoscan::{Gpu, Map};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() => return Ok(()), Err(e) => return Err(e) };
    /// let even = Map::new("even", "(x & 1) == 0 ? 1u : 0u", |x: &i32| u32::from(x & 1 == 0));
    /// let xs = gpu.stream().clone_htod(&[1, 2, 3, 4, 6])?;
    /// let mut out = gpu.stream().alloc_zeros::<i32>(5)?;
    /// let mut count = gpu.stream().alloc_zeros::<u32>(1)?;
    /// gpu.compact_into_counted(&xs, &even, &mut out, &mut count)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&count)?, [3]);
    /// assert_eq!(gpu.stream().clone_dtoh(&out)?[..3], [2, 4, 6]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compact_into_counted<T, I, O, C>(
        &self,
        input: &I,
        keep: &Map<T, u32>,
        output: &mut O,
        count: &mut C,
    ) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        C: DevicePtrMut<u32>,
    {
        let n = input.len();
        self.check_compaction(n, output.len(), count.len())?;
        if n == 0 {
            self.stream.memset_zeros(count)?;
            return Ok(());
        }
        let keep = keep.as_selection();
        let sum = Sum::<u32>::new();
        let scanner = self.scanner(&sum);
        let mapped = scanner.mapped(&keep);
        let size = std::mem::size_of::<T>();
        let (inp, _g1) = input.device_ptr(&self.stream);
        // The staged kernel (tile copied into shared memory with cp.async) where the
        // architecture, the element size and a 16-byte aligned input allow; else the register
        // kernel.
        let (shape, entry) = match select_staged_shape(size, self.info.cc)? {
            Some(s) if inp % 16 == 0 => (s, "select_staged"),
            _ => (select_shape(size)?, "select_mapped"),
        };
        let k = mapped.inner.kernels(KernelSet::Select(shape))?;
        let tiles = (n as u64).div_ceil(shape.tile());
        let tiles32 = u32::try_from(tiles).map_err(|_| {
            Error::invalid(format!(
                "{n} elements need {tiles} tiles; compaction handles at most 2^32 - 1"
            ))
        })?;
        {
            let (out, _g2) = output.device_ptr_mut(&self.stream);
            let (tot, _g3) = count.device_ptr_mut(&self.stream);
            let mut scratch = self.lock_scratch();
            // The look-back runs over u32 keep counts.
            let (state, counter, epoch) =
                scratch.single_pass(&self.stream, shape.layout, tiles, 4)?;
            let args = launch::Select {
                inp,
                out,
                n: n as u64,
                tiles: tiles32,
                state,
                counter,
                epoch,
                total: tot,
            };
            let prefetch = if entry == "select_staged" && shape.tma {
                Some(PrefetchPlan::new(
                    shape.tile_bytes(size),
                    tiles,
                    k.resident(entry),
                    self.info.mem_gbps,
                )?)
            } else {
                None
            };
            launch::select(
                &self.stream,
                k.function(entry)?,
                shape.block,
                k.dynamic_smem(entry),
                &args,
                prefetch,
            )?;
        }
        Ok(())
    }

    /// The arguments of a compaction of `n` elements into `room` elements with a count buffer
    /// of `count_len`: errors, before anything is queued.
    fn check_compaction(&self, n: usize, room: usize, count_len: usize) -> Result<()> {
        if n as u64 > u64::from(u32::MAX) {
            return Err(Error::invalid(format!(
                "compaction counts in 32 bits: at most {} elements, got {n}",
                u32::MAX
            )));
        }
        if room < n {
            return Err(Error::invalid(format!(
                "the compaction output has room for {room} elements; it needs {n}, one per input element"
            )));
        }
        if count_len == 0 {
            return Err(Error::invalid(
                "the compaction count buffer is empty; it needs one u32",
            ));
        }
        Ok(())
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
