//! Opening a device: driver present, device present, its properties.

use crate::error::{Error, Result};
use crate::tuning::DeviceLimits;
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, DriverError};
use std::sync::Arc;

/// What monoscan needs to know about a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The ordinal.
    pub ordinal: usize,
    /// The marketing name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Compute capability as `major * 10 + minor` (`90`).
    pub cc: u32,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Total device memory in bytes.
    pub total_mem: usize,
    /// Peak DRAM bandwidth in GB/s, from the memory clock and bus width the driver reports
    /// (0 where it reports none).
    pub mem_gbps: u32,
    /// Shared memory and threads per block and per SM, as the driver reports them.
    pub limits: DeviceLimits,
}

/// Whether the CUDA driver library loads and has every function monoscan calls (never
/// panics).
pub fn driver_present() -> bool {
    crate::dylib::check_driver().is_ok()
}

/// How many devices the driver sees (`Err(NoDriver)` without a usable driver).
pub fn device_count() -> Result<usize> {
    crate::dylib::check_driver()?;
    CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| Error::NoDevice {
            requested: 0,
            available: 0,
            detail: Some(e.to_string()),
        })
}

/// Opens the primary context of device `ordinal`.
pub(crate) fn open(ordinal: usize) -> Result<(Arc<CudaContext>, DeviceInfo)> {
    let available = device_count()?;
    if ordinal >= available {
        return Err(Error::NoDevice {
            requested: ordinal,
            available,
            detail: None,
        });
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| Error::NoDevice {
        requested: ordinal,
        available,
        detail: Some(e.to_string()),
    })?;
    let info = info(&ctx)?;
    keep_pool_memory(&ctx);
    Ok((ctx, info))
}

/// Lets the device's default memory pool keep freed memory instead of returning it to the
/// system at every synchronisation. Stream-ordered allocations (cudarc allocates with
/// `cuMemAllocAsync`) then reuse pool memory: without this, a call that allocates and frees a
/// gigabyte of temporaries (compaction, allocation offsets, host-slice scans) pays for mapping
/// the pages again each time, several milliseconds. Best effort: an error leaves the default.
pub(crate) fn keep_pool_memory(ctx: &Arc<CudaContext>) {
    use cudarc::driver::sys;
    if ctx.bind_to_thread().is_err() {
        return;
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a valid out-pointer and the device handle comes from a live context.
    let got = unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) };
    if got != sys::CUresult::CUDA_SUCCESS || pool.is_null() {
        return;
    }
    let mut threshold: u64 = u64::MAX;
    // SAFETY: the release threshold attribute takes a pointer to a u64, which `threshold` is;
    // `pool` is the device's default pool returned above.
    let _ = unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut threshold as *mut u64 as *mut std::ffi::c_void,
        )
    };
}

/// Reads the properties of the context's device.
pub(crate) fn info(ctx: &Arc<CudaContext>) -> Result<DeviceInfo> {
    let (major, minor) = ctx.compute_capability()?;
    let sm_count = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    // An attribute the driver does not report only leaves the bandwidth unknown.
    let clock_khz = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
        .unwrap_or(0);
    let bus_bits = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
        .unwrap_or(0);
    let cc = (major * 10 + minor) as u32;
    Ok(DeviceInfo {
        ordinal: ctx.ordinal(),
        name: ctx.name()?,
        cc,
        sm_count: sm_count.max(1) as u32,
        total_mem: ctx.total_mem()?,
        mem_gbps: peak_gbps(clock_khz, bus_bits),
        limits: limits(ctx, cc),
    })
}

/// The device's shared-memory and thread limits; an attribute the driver does not report keeps
/// the architecture's published figure.
fn limits(ctx: &Arc<CudaContext>, cc: u32) -> DeviceLimits {
    let published = DeviceLimits::for_arch(cc);
    let read = |attr, fallback: u32| {
        ctx.attribute(attr)
            .ok()
            .and_then(|v| u32::try_from(v).ok())
            .filter(|&v| v > 0)
            .unwrap_or(fallback)
    };
    use CUdevice_attribute as A;
    DeviceLimits {
        cc,
        shared_per_block: read(
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            published.shared_per_block,
        ),
        shared_per_block_optin: read(
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            published.shared_per_block_optin,
        ),
        shared_per_sm: read(
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            published.shared_per_sm,
        ),
        reserved_shared_per_block: ctx
            .attribute(A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)
            .ok()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(published.reserved_shared_per_block),
        threads_per_sm: read(
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            published.threads_per_sm,
        ),
    }
}

/// Peak DRAM bandwidth in GB/s of a memory clock of `clock_khz` on a bus of `bus_bits`: two
/// transfers per clock (0 for unknown or nonsensical values).
pub(crate) fn peak_gbps(clock_khz: i32, bus_bits: i32) -> u32 {
    if clock_khz <= 0 || bus_bits <= 0 {
        return 0;
    }
    // kHz * 1e3 transfers/s * 2 * bits / 8 bytes, in GB/s (1e9).
    let gbps = 2 * clock_khz as u64 * bus_bits as u64 / 8 / 1_000_000;
    u32::try_from(gbps).unwrap_or(0)
}

/// Maps an allocation failure to [`Error::OutOfMemory`] with the device's free memory.
pub(crate) fn alloc_error(ctx: &Arc<CudaContext>, requested: usize, e: DriverError) -> Error {
    if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        let (free, total) = ctx.mem_get_info().unwrap_or((0, 0));
        Error::OutOfMemory {
            memory: crate::error::Memory::Device,
            requested,
            free,
            total,
        }
    } else {
        Error::Driver(e)
    }
}

#[cfg(test)]
mod tests {
    use super::peak_gbps;

    #[test]
    fn peak_bandwidth_from_clock_and_bus() {
        // An H100 SXM's HBM3: 2619 MHz on 5120 bits, 3.35 TB/s.
        assert_eq!(peak_gbps(2_619_000, 5120), 3352);
        assert_eq!(peak_gbps(0, 5120), 0);
        assert_eq!(peak_gbps(2_619_000, -1), 0);
    }
}
