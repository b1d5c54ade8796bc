//! The TMA's view of a staged kernel's input: a tensor map of rows of 128-byte columns.

use super::DevSlice;
use crate::error::{Error, Result};
use cudarc::driver::{sys, DeviceRepr};

/// The TMA's view of a staged scan's input (`ms_tensor_map` in `templates/staged_scan.cu`):
/// rows of 128 bytes, one per thread's run, in boxes of a tile's rows, with the 128-byte
/// swizzle.
#[repr(C, align(64))]
pub(crate) struct TensorMap(sys::CUtensorMap);

// SAFETY: a tensor map is 128 plain bytes that the driver copies into the kernel's parameter
// space (`const __grid_constant__ ms_tensor_map`, 64-byte aligned on both sides).
unsafe impl DeviceRepr for TensorMap {}

impl TensorMap {
    /// A map no kernel reads: what a launch of the TMA form passes when it has no full tile
    /// (its one, partial, tile is copied with `cp.async`), where an input shorter than 128
    /// bytes has no rows to map.
    pub(crate) fn unused() -> Self {
        TensorMap(sys::CUtensorMap { opaque: [0; 16] })
    }

    /// The map of the whole 128-byte rows of `input` (16-byte aligned), in boxes of
    /// `rows_per_box` rows. A last, partial row is not mapped: the kernel copies the partial
    /// last tile with `cp.async`.
    pub(crate) fn rows128<T>(input: DevSlice<T>, rows_per_box: u32) -> Result<Self> {
        let bytes = input.len().saturating_mul(std::mem::size_of::<T>() as u64);
        Self::rows(input, 128, bytes / 128, rows_per_box)
    }

    /// The map of the first `rows` rows of `row_bytes` bytes (a multiple of 128) of `input`
    /// (16-byte aligned), each row in 128-byte columns, in boxes of 128 bytes by
    /// `rows_per_box` rows.
    pub(crate) fn rows<T>(
        input: DevSlice<T>,
        row_bytes: u64,
        rows: u64,
        rows_per_box: u32,
    ) -> Result<Self> {
        let addr = input.addr();
        let bytes = input.len().saturating_mul(std::mem::size_of::<T>() as u64);
        if addr % 16 != 0
            || rows == 0
            || rows > i32::MAX as u64
            || row_bytes == 0
            || row_bytes % 128 != 0
            || row_bytes > i32::MAX as u64
            || rows.saturating_mul(row_bytes) > bytes
            || !(1..=256).contains(&rows_per_box)
        {
            return Err(Error::invalid(format!(
                "no tensor map of {rows} rows of {row_bytes} bytes over {bytes} bytes at {addr:#x} in boxes of {rows_per_box} rows: the address must be 16-byte aligned, the rows 1 to 2^31 - 1 of a multiple of 128 bytes below 2^31 within the input, the box 1 to 256 rows"
            )));
        }
        let dims = [row_bytes, rows];
        let strides = [row_bytes];
        let boxes = [128u32, rows_per_box];
        let steps = [1u32, 1];
        let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
        // SAFETY: cuTensorMapEncodeTiled only writes the 128-byte map and reads the four arrays
        // (rank 2: two dimensions, one stride, two box sizes, two element steps), all alive
        // here; the global address is stored, not dereferenced. The checks above meet its
        // documented limits (16-byte aligned address, stride a multiple of 16 below 2^40, box
        // sizes up to 256, inner box 128 bytes for the 128-byte swizzle) and keep the mapped
        // rows within the input.
        unsafe {
            sys::cuTensorMapEncodeTiled(
                map.as_mut_ptr(),
                sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
                2,
                addr as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                steps.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
            .result()?;
        }
        // SAFETY: the call succeeded, so the map is initialised (and zeroed before).
        Ok(TensorMap(unsafe { map.assume_init() }))
    }
}
