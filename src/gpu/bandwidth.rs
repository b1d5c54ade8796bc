//! The floors every figure is compared with: a device-to-device copy of the same bytes (a
//! scan reads and writes each byte once) and a read-only pass (a reduce reads each byte once).

use super::{Gpu, Timing};
use crate::codegen::Rendered;
use crate::error::Result;
use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

const READ_PASS: &str = include_str!("../../templates/baseline.cu");

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
        let rendered = Rendered {
            source: READ_PASS.to_string(),
            prefix: "monoscan".to_string(),
            snippet_lines: Vec::new(),
        };
        let compiled = crate::jit::compile(&rendered, "read pass", self.target)?;
        let ptx = match self.target {
            crate::jit::Target::Cubin(_) => cudarc::nvrtc::Ptx::from_binary(compiled.image),
            crate::jit::Target::Ptx(_) => {
                cudarc::nvrtc::Ptx::from_src(String::from_utf8_lossy(&compiled.image).into_owned())
            }
        };
        let module = self.ctx.load_module(ptx)?;
        let f = module.load_function("monoscan_read_pass")?;
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
}
