//! Input types that are no monoid elements of their own: half precision, `bool` and `usize`.
//!
//! Tensors of machine learning hold `f16` and `bf16`; masks hold `bool`; Rust counts in
//! `usize`. monoscan reads each through a fused [`Map`] into an element that accumulates
//! well, so the input is read once, in its own width:
//!
//! | input | as | map | accumulate in |
//! | --- | --- | --- | --- |
//! | `half::f16` (feature `f16`) | itself: an [`Element`](crate::Element), C++ `monoscan_f16` | `widen_f16` | `f32` |
//! | `half::bf16` (feature `f16`) | itself: an [`Element`](crate::Element), C++ `monoscan_bf16` | `widen_bf16` | `f32` |
//! | `bool` | `u8` ([`bools_as_bytes`], no copy) | [`count_true`] | `u32` |
//! | `usize` | `u64` (`x as u64`) | any `Map<u64, _>` | `u64` |
//!
//! Half-precision scan, accumulated in `f32`:
//!
//! ```
//! # #[cfg(feature = "f16")]
//! # fn main() -> monoscan::Result<()> {
//! use monoscan::half::f16; // the `half` crate, re-exported
//! use monoscan::{AnyBackend, Backend, inputs::widen_f16, ops::Sum};
//!
//! let backend = AnyBackend::auto()?; // the GPU if usable, else the CPU
//! let xs: Vec<f16> = [0.5f32, 1.25, -2.0, 3.0].map(f16::from_f32).to_vec();
//! let running = backend.map_inclusive_scan(&Sum::<f32>::new(), &widen_f16(), &xs)?;
//! assert_eq!(running, [0.5, 1.75, -0.25, 2.75]);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "f16"))]
//! # fn main() {}
//! ```
//!
//! Counting the `true`s of a mask, and their positions:
//!
//! ```
//! use monoscan::{Backend, cpu::Parallel, inputs::{bools_as_bytes, count_true}, ops::Sum};
//! # fn main() -> monoscan::Result<()> {
//! let mask = [true, false, true, true, false];
//! let (slots, kept) = Parallel::default().map_exclusive_scan_total(
//!     &Sum::<u32>::new(), &count_true(), bools_as_bytes(&mask), 0)?;
//! assert_eq!((slots, kept), (vec![0, 1, 1, 2, 3], 3));
//! # Ok(())
//! # }
//! ```
//!
//! # Why `f16` and `bf16` are no C++ `__half`
//!
//! CUDA's `__half` and `__nv_bfloat16` live in toolkit headers (`cuda_fp16.h`,
//! `cuda_bf16.h`), and the generated kernels include no headers, so that NVRTC alone (a pip
//! wheel) compiles them. The elements are instead 16-bit structs with conversion functions
//! written in PTX (`cvt`) and bit operations, available to maps and operators alike:
//!
//! | function | does |
//! | --- | --- |
//! | `float monoscan_f16_to_f32(monoscan_f16)` | exact widening |
//! | `monoscan_f16 monoscan_f32_to_f16(float)` | rounding to nearest even, as `half::f16::from_f32` |
//! | `float monoscan_bf16_to_f32(monoscan_bf16)` | exact widening |
//! | `monoscan_bf16 monoscan_f32_to_bf16(float)` | rounding to nearest even, NaN kept quiet, as `half::bf16::from_f32` |
//!
//! # Why `usize` is no element
//!
//! An [`Element`](crate::Element)'s C++ type must have its Rust layout on every target, and `usize` is as wide
//! as the host's pointers; the device's `size_t` need not agree. Convert to `u64` (lossless on
//! every 64-bit host) and scan that:
//!
//! ```
//! use monoscan::{Backend, cpu::Sequential, ops::Sum};
//! let lens: Vec<usize> = vec![3, 0, 2];
//! let lens: Vec<u64> = lens.iter().map(|&n| n as u64).collect();
//! let (offsets, total) = Sequential.exclusive_scan_total(&Sum::<u64>::new(), &lens, 0).unwrap();
//! assert_eq!((offsets, total), (vec![0, 3, 3], 5));
//! ```

use crate::map::Map;

/// `x != 0` as a count (1 or 0) in `u32`: over [`bools_as_bytes`] of a mask, an exclusive
/// scan gives each `true` its slot and the total the number of `true`s.
pub fn count_true() -> Map<u8, u32> {
    Map::new("count_true", "x != 0 ? 1u : 0u", |x: &u8| {
        u32::from(*x != 0)
    })
}

/// A `bool` slice as the bytes it is stored in (0 or 1 each), without a copy: the input of
/// maps over `u8` such as [`count_true`].
pub fn bools_as_bytes(xs: &[bool]) -> &[u8] {
    zerocopy::IntoBytes::as_bytes(xs)
}

#[cfg(feature = "f16")]
pub use self::half_precision::{widen_bf16, widen_f16};

#[cfg(feature = "f16")]
mod half_precision {
    use super::Map;
    use crate::element::{guarded_definition, Element};
    use half::{bf16, f16};

    /// The C++ side of `f16`: the struct and its conversions (`cvt` in PTX, sm_53 and newer).
    const F16_DEFINITION: &str = "\
struct monoscan_f16 { unsigned short bits; };
__device__ __forceinline__ float monoscan_f16_to_f32(monoscan_f16 x) {
    float f;
    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(x.bits));
    return f;
}
__device__ __forceinline__ monoscan_f16 monoscan_f32_to_f16(float f) {
    monoscan_f16 x;
    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(x.bits) : \"f\"(f));
    return x;
}";

    /// The C++ side of `bf16`: the struct and its conversions by bit operations (a bf16 is the
    /// high half of an f32), which every architecture runs.
    const BF16_DEFINITION: &str = "\
struct monoscan_bf16 { unsigned short bits; };
__device__ __forceinline__ float monoscan_bf16_to_f32(monoscan_bf16 x) {
    float f;
    asm(\"mov.b32 %0, %1;\" : \"=f\"(f) : \"r\"((unsigned int)x.bits << 16));
    return f;
}
__device__ __forceinline__ monoscan_bf16 monoscan_f32_to_bf16(float f) {
    unsigned int u;
    asm(\"mov.b32 %0, %1;\" : \"=r\"(u) : \"f\"(f));
    monoscan_bf16 x;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        x.bits = (unsigned short)((u >> 16) | 0x0040u);
    } else {
        x.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
    return x;
}";

    // SAFETY: `half::f16` is a `#[repr(transparent)]` `u16`, valid for every bit pattern; the
    // C++ struct holds one `unsigned short` (size 2, align 2; the generated static_asserts
    // check it).
    unsafe impl Element for f16 {
        fn cuda_name() -> String {
            "monoscan_f16".into()
        }
        fn cuda_definition() -> String {
            guarded_definition("monoscan_f16", F16_DEFINITION)
        }
    }

    // SAFETY: as for `f16`: `half::bf16` is a `#[repr(transparent)]` `u16`.
    unsafe impl Element for bf16 {
        fn cuda_name() -> String {
            "monoscan_bf16".into()
        }
        fn cuda_definition() -> String {
            guarded_definition("monoscan_bf16", BF16_DEFINITION)
        }
    }

    /// `f16` to `f32`, exactly (NaN stays NaN, infinities stay infinite): half-precision
    /// input, single-precision accumulation.
    pub fn widen_f16() -> Map<f16, f32> {
        Map::new("f16_to_f32", "monoscan_f16_to_f32(x)", |x: &f16| x.to_f32())
    }

    /// `bf16` to `f32`, exactly.
    pub fn widen_bf16() -> Map<bf16, f32> {
        Map::new("bf16_to_f32", "monoscan_bf16_to_f32(x)", |x: &bf16| {
            x.to_f32()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "f16")]
    use crate::element::Element;

    #[test]
    fn bools_are_their_bytes() {
        let mask = [true, false, false, true, true];
        assert_eq!(bools_as_bytes(&mask), [1, 0, 0, 1, 1]);
        assert!(bools_as_bytes(&[]).is_empty());
        let count = count_true();
        assert_eq!(count.apply(&0), 0);
        assert_eq!(count.apply(&1), 1);
        assert_eq!(count.apply(&255), 1);
    }

    #[cfg(feature = "f16")]
    #[test]
    fn half_elements_are_16_bit_structs() {
        use half::{bf16, f16};
        assert_eq!(f16::cuda_name(), "monoscan_f16");
        assert_eq!(bf16::cuda_name(), "monoscan_bf16");
        for def in [f16::cuda_definition(), bf16::cuda_definition()] {
            assert!(def.contains("unsigned short bits;"), "{def}");
            assert!(def.starts_with("#ifndef MONOSCAN_DEF_"), "{def}");
        }
        let m = widen_f16().cuda();
        assert_eq!(
            (m.in_type.as_str(), m.in_size, m.in_align),
            ("monoscan_f16", 2, 2)
        );
        assert!(m.prelude.contains("monoscan_f16_to_f32"));
    }
}
