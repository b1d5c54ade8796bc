//! Stream compaction and allocation offsets on device buffers ([`Gpu::compact_into_counted`],
//! [`Gpu::allocation_offsets`]).

use super::kernels::OpKernels;
use super::{launch, Gpu};
use crate::codegen::KernelSet;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::map::Map;
use crate::ops::Sum;
use crate::tuning::{policy, PrefetchPlan};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// Queues the compaction of `input` by `keep` into `output`, the count into `count[0]`.
pub(super) fn select<T, I, O, C>(
    gpu: &Gpu,
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
    check(n, output.len(), count.len())?;
    let stream = &gpu.stream;
    if n == 0 {
        stream.memset_zeros(count)?;
        return Ok(());
    }
    let keep = keep.as_selection();
    let sum = Sum::<u32>::new();
    let kernels = OpKernels::new(gpu, &sum).with_input(keep.cuda());
    let size = std::mem::size_of::<T>();
    let limits = &gpu.info.limits;
    let (inp, _g1) = launch::input(input, stream);
    // The staged kernel (tile copied into shared memory) where the architecture, the element
    // size and a 16-byte aligned input allow; else the register kernel.
    let set = match policy::select_staged_shape(size, limits, &gpu.tuning)? {
        Some(s) if inp.addr() % 16 == 0 => KernelSet::SelectStaged(s),
        _ => KernelSet::Select(policy::select_shape(size, limits)?),
    };
    let k = kernels.kernels(set)?;
    let (KernelSet::Select(shape) | KernelSet::SelectStaged(shape)) = set else {
        unreachable!("a select set")
    };
    let tiles = (n as u64).div_ceil(shape.tile());
    if tiles > u64::from(u32::MAX) {
        return Err(Error::invalid(format!(
            "{n} elements need {tiles} tiles; compaction handles at most 2^32 - 1"
        )));
    }
    let (out, _g2) = launch::output(output, stream);
    let (count, _g3) = launch::output(count, stream);
    let mut scratch = gpu.lock_scratch();
    // The look-back runs over u32 keep counts.
    let lookback = scratch.lookback::<u32>(stream, shape.layout, tiles)?;
    let prefetch = match set {
        KernelSet::SelectStaged(s) if s.tma => Some(PrefetchPlan::new(
            &gpu.tuning,
            s.tile_bytes(size),
            tiles,
            k.resident(crate::codegen::Entry::SelectStaged, false),
            gpu.info.mem_gbps,
        )?),
        _ => None,
    };
    let args = launch::Select {
        inp,
        out,
        n: n as u64,
        lookback,
        count,
    };
    // SAFETY: `k` is a select module of the u32 sum mapped from `T` by `keep`.
    unsafe { launch::select(stream, &k, &args, prefetch) }
}

/// The arguments of a compaction of `n` elements into `room` elements with a count buffer of
/// `count_len`: errors, before anything is queued.
fn check(n: usize, room: usize, count_len: usize) -> Result<()> {
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

/// The exclusive scan of `requests` widened to u64, and the total (read back).
pub(super) fn allocation_offsets<I: DevicePtr<u32>>(
    gpu: &Gpu,
    requests: &I,
) -> Result<(CudaSlice<u64>, u64)> {
    let sum = Sum::<u64>::new();
    let widen = Map::new("widen_u32", "(unsigned long long)x", |x: &u32| {
        u64::from(*x)
    });
    let scanner = gpu.scanner(&sum);
    let mut offsets = launch::alloc_for_writes::<u64>(&gpu.stream, requests.len())?;
    let mut total = gpu.upload(&[0u64])?;
    scanner
        .mapped(&widen)
        .exclusive_with_total(requests, &mut offsets, 0, &mut total)?;
    let total = gpu.stream.clone_dtoh(&total)?[0];
    Ok((offsets, total))
}
