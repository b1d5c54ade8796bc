//! The floors every figure is compared with: a device-to-device copy of the same bytes (a
//! scan reads and writes each byte once) and a read-only pass (a reduce reads each byte once),
//! and the module of baseline kernels ([`codegen::baseline`]) they and the timer use.

use super::{Gpu, Timing};
use crate::codegen;
use crate::error::Result;
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

impl Gpu {
    /// Times copying `bytes` bytes device to device (`cuMemcpyDtoDAsync`): `warmup` untimed
    /// runs, then the median of `reps`.
    pub fn time_copy(&self, bytes: usize, warmup: usize, reps: usize) -> Result<Timing> {
        let src = self.stream.alloc_zeros::<u8>(bytes)?;
        let mut dst = self.stream.alloc_zeros::<u8>(bytes)?;
        self.time(warmup, reps, || {
            self.stream.memcpy_dtod(&src, &mut dst)?;
            Ok(())
        })
    }

    /// Times one read of `bytes` bytes (rounded down to 16) by a grid-stride kernel of 16-byte
    /// loads.
    pub fn time_read(&self, bytes: usize, warmup: usize, reps: usize) -> Result<Timing> {
        let buf: CudaSlice<u8> = self.stream.alloc_zeros(bytes.max(16))?;
        let f = self.baseline_function("monoscan_read_pass")?;
        let sink = self.stream.alloc_zeros::<u32>(1)?;
        let words = (bytes / 16) as u64;
        let blocks = self.info.sm_count * 8;
        let (p, _g) = buf.device_ptr(&self.stream);
        self.time(warmup, reps, || {
            let cfg = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (512, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: kernel `(const ms_word* p, ms_u64 n, unsigned* sink)`; `p` holds `words`
            // 16-byte words (the buffer is at least 16 * words bytes), sink one u32; the kernel
            // strides over n.
            unsafe {
                self.stream
                    .launch_builder(&f)
                    .arg(&p)
                    .arg(&words)
                    .arg(&sink)
                    .launch(cfg)
            }?;
            Ok(())
        })
    }

    /// Entry `name` of `templates/baseline.cu` (the read pass, the timer's hold), compiled
    /// and loaded once per Gpu.
    pub(super) fn baseline_function(&self, name: &str) -> Result<CudaFunction> {
        let mut slot = self.baseline.lock().unwrap_or_else(|e| e.into_inner());
        let module = match slot.as_ref() {
            Some(m) => m.clone(),
            None => {
                let compiled =
                    crate::jit::compile(&codegen::baseline(), "baseline kernels", self.target)?;
                let m = self.load_image(compiled.image)?;
                *slot = Some(m.clone());
                m
            }
        };
        Ok(module.load_function(name)?)
    }
}
