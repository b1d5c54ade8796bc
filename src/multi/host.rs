//! Host inputs, streamed through every device in chunks: the next chunk uploads on a copy
//! stream while the compute stream works on the current one.

use super::{split, MultiGpu};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::monoid::Monoid;
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// Per-device state of a streamed pass.
struct Lane<'a, T> {
    gpu: &'a Gpu,
    copy: Arc<CudaStream>,
    bufs: [CudaSlice<T>; 2],
    chunk: usize,
}

impl<'a, T: crate::element::Element> Lane<'a, T> {
    fn new<M: Monoid<Elem = T>>(gpu: &'a Gpu, m: &M, chunk: usize) -> Result<Self> {
        let scanner = gpu.scanner(m);
        let copy = gpu.context().new_stream()?;
        let bufs = [
            scanner.alloc_filled(chunk, m.identity())?,
            scanner.alloc_filled(chunk, m.identity())?,
        ];
        // The fills run on the compute stream; uploads on the copy stream must follow them.
        gpu.stream().synchronize()?;
        Ok(Lane {
            gpu,
            copy,
            bufs,
            chunk,
        })
    }

    /// Uploads chunk `k` of `part` into buffer `k % 2` on the copy stream; the compute stream
    /// waits for it before its next use of that buffer.
    fn upload(&mut self, part: &[T], k: usize) -> Result<usize> {
        let range = k * self.chunk..((k + 1) * self.chunk).min(part.len());
        let len = range.len();
        let buf = &mut self.bufs[k % 2];
        let mut view = buf.slice_mut(0..len);
        self.copy.memcpy_htod(&part[range], &mut view)?;
        let done = self.copy.record_event(None)?;
        self.gpu.stream().wait(&done)?;
        Ok(len)
    }
}

fn chunks(len: usize, chunk: usize) -> usize {
    len.div_ceil(chunk)
}

impl MultiGpu {
    fn check_chunk(chunk: usize) -> Result<()> {
        if chunk == 0 {
            return Err(Error::invalid(
                "the chunk size must be at least one element",
            ));
        }
        Ok(())
    }

    /// Pass 1 on one device: the total of every chunk of `part` (device-resident).
    fn chunk_totals<M: Monoid>(
        gpu: &Gpu,
        m: &M,
        part: &[M::Elem],
        chunk: usize,
    ) -> Result<CudaSlice<M::Elem>> {
        let k_count = chunks(part.len(), chunk);
        let scanner = gpu.scanner(m);
        let mut totals = scanner.alloc_filled(k_count.max(1), m.identity())?;
        if k_count == 0 {
            return Ok(totals);
        }
        let mut lane = Lane::new(gpu, m, chunk.min(part.len()))?;
        let mut len = lane.upload(part, 0)?;
        let mut prev: Option<cudarc::driver::CudaEvent> = None;
        for k in 0..k_count {
            let mut t = totals.slice_mut(k..k + 1);
            scanner.reduce(&lane.bufs[k % 2].slice(0..len), &mut t)?;
            let done = gpu.stream().record_event(None)?;
            if k + 1 < k_count {
                // Buffer (k + 1) % 2 held chunk k - 1: wait for its reduce, not for chunk k's,
                // so that this upload overlaps chunk k's reduce.
                if let Some(e) = &prev {
                    lane.copy.wait(e)?;
                }
                len = lane.upload(part, k + 1)?;
            }
            prev = Some(done);
        }
        Ok(totals)
    }

    /// Reduces and scans `xs` split across the devices; `inclusive` or exclusive from `init`.
    fn host_scan<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        chunk: usize,
        exclusive_init: Option<M::Elem>,
        want_output: bool,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        Self::check_chunk(chunk)?;
        let ranges = split(xs.len(), self.len());
        // Pass 1: per-chunk totals on every device, in parallel.
        let chunk_totals: Vec<CudaSlice<M::Elem>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .gpus
                .iter()
                .zip(&ranges)
                .map(|(gpu, r)| s.spawn(move || Self::chunk_totals(gpu, m, &xs[r.clone()], chunk)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::invalid("a device thread panicked")))
                })
                .collect::<Result<Vec<_>>>()
        })?;
        let device_totals: Vec<CudaSlice<M::Elem>> = self
            .gpus
            .iter()
            .zip(&chunk_totals)
            .map(|(gpu, t)| {
                let mut total = gpu.stream().clone_htod(&[m.identity()])?;
                gpu.scanner(m).reduce(t, &mut total)?;
                Ok(total)
            })
            .collect::<Result<_>>()?;
        let init = exclusive_init.unwrap_or_else(|| m.identity());
        let (carries, grand) = self.carries(m, &device_totals, init)?;
        if !want_output {
            return Ok((Vec::new(), grand));
        }
        // Pass 2: every chunk scanned from its carry, in parallel across devices.
        let mut out = xs.to_vec();
        let mut rest: &mut [M::Elem] = &mut out;
        let mut outs = Vec::with_capacity(ranges.len());
        for r in &ranges {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(r.len());
            outs.push(mine);
            rest = tail;
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = self
                .gpus
                .iter()
                .zip(&ranges)
                .zip(outs)
                .zip(chunk_totals.iter().zip(&carries))
                .map(|(((gpu, r), dst), (totals, &carry))| {
                    s.spawn(move || {
                        Self::scan_chunks(
                            gpu,
                            m,
                            &xs[r.clone()],
                            dst,
                            totals,
                            carry,
                            chunk,
                            exclusive_init.is_some(),
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::invalid("a device thread panicked")))
                })
                .collect::<Result<Vec<()>>>()
        })?;
        Ok((out, grand))
    }

    /// Pass 2 on one device: chunk carries from the chunk totals, then every chunk scanned
    /// from its carry into `dst`.
    #[allow(clippy::too_many_arguments)]
    fn scan_chunks<M: Monoid>(
        gpu: &Gpu,
        m: &M,
        part: &[M::Elem],
        dst: &mut [M::Elem],
        totals: &CudaSlice<M::Elem>,
        carry: M::Elem,
        chunk: usize,
        exclusive: bool,
    ) -> Result<()> {
        let k_count = chunks(part.len(), chunk);
        if k_count == 0 {
            return Ok(());
        }
        let scanner = gpu.scanner(m);
        let mut carries_dev = scanner.alloc_filled(k_count, m.identity())?;
        let mut end = gpu.stream().clone_htod(&[carry])?;
        scanner.exclusive_with_total(
            &totals.slice(0..k_count),
            &mut carries_dev,
            carry,
            &mut end,
        )?;
        let carries = gpu.stream().clone_dtoh(&carries_dev)?;
        let mut lane = Lane::new(gpu, m, chunk.min(part.len()))?;
        let mut out = scanner.alloc_filled(chunk.min(part.len()), m.identity())?;
        let mut len = lane.upload(part, 0)?;
        for (k, &chunk_carry) in carries.iter().enumerate() {
            let start = k * chunk;
            {
                let input = lane.bufs[k % 2].slice(0..len);
                let mut o = out.slice_mut(0..len);
                let mut t = end.slice_mut(0..1);
                if exclusive {
                    scanner.exclusive_with_total(&input, &mut o, chunk_carry, &mut t)?;
                } else {
                    scanner.inclusive_from(&input, &mut o, chunk_carry, &mut t)?;
                }
            }
            let this_len = len;
            if k + 1 < k_count {
                // Chunk k - 1's scan finished (its download below was synchronous), so its
                // buffer is free; this upload overlaps chunk k's scan.
                len = lane.upload(part, k + 1)?;
            }
            gpu.stream()
                .memcpy_dtoh(&out.slice(0..this_len), &mut dst[start..start + this_len])?;
            gpu.stream().synchronize()?;
        }
        Ok(())
    }

    /// Inclusive scan of a host slice, split across the devices and streamed through each in
    /// chunks of at most `chunk` elements (so inputs larger than a GPU's memory work).
    pub fn inclusive_scan_host<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        chunk: usize,
    ) -> Result<Vec<M::Elem>> {
        Ok(self.host_scan(m, xs, chunk, None, true)?.0)
    }

    /// Exclusive scan from `init` of a host slice, streamed; returns the scan and the total.
    pub fn exclusive_scan_host<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
        chunk: usize,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        self.host_scan(m, xs, chunk, Some(init), true)
    }

    /// The fold of a host slice, streamed.
    pub fn reduce_host<M: Monoid>(&self, m: &M, xs: &[M::Elem], chunk: usize) -> Result<M::Elem> {
        Ok(self.host_scan(m, xs, chunk, None, false)?.1)
    }
}
