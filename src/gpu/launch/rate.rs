//! Launch of the combine-rate kernel (`templates/combine_rate.cu`).

use super::{config, holds, DevSlice};
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::gpu::module::Loaded;
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};

/// `combine_rate(samples, count, out, rounds)` over `blocks` blocks of the module's threads:
/// every thread runs the module's chains for `rounds` rounds, seeded from `samples`, and writes
/// its result to `out[thread]`.
///
/// # Safety
/// `k` is a [`KernelSet::CombineRate`] module rendered for element type `T`.
pub(crate) unsafe fn combine_rate<T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    blocks: u32,
    samples: DevSlice<T>,
    out: DevSlice<T>,
    rounds: u64,
) -> Result<()> {
    let f = k.function(Entry::CombineRate, false)?;
    let KernelSet::CombineRate { block, .. } = k.set() else {
        return Err(Error::invalid(
            "internal: combine_rate needs a combine-rate module",
        ));
    };
    if samples.len() == 0 {
        return Err(Error::invalid("the combine rate needs at least one sample"));
    }
    holds("the output", &out, u64::from(blocks) * u64::from(block))?;
    let (p, count, o) = (samples.addr(), samples.len(), out.addr());
    // SAFETY: kernel `(const ms_elem* samples, ms_u64 count, ms_elem* out, ms_u64 rounds)` with
    // ms_elem = T (the caller's obligation); samples holds count >= 1 elements, the kernel
    // reads indices modulo count; out holds one element per thread of the grid (checked above).
    unsafe {
        s.launch_builder(f)
            .arg(&p)
            .arg(&count)
            .arg(&o)
            .arg(&rounds)
            .launch(config(u64::from(blocks), block, 0))
    }?;
    Ok(())
}
