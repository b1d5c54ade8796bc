//! # monoscan
//!
//! Any associative operator, turned into GPU reduce and scan (prefix-sum) kernels.
//!
//! Describe a monoid once, in Rust: its element type, identity and combine (the host semantics,
//! the ground truth of every test). [`operator`] (`#[monoscan::operator]`) writes the CUDA form
//! from that Rust, with Rust's semantics ([`guide::operators`]); a hand-written CUDA snippet
//! ([`CudaOp`]) remains possible for what needs CUDA intrinsics. monoscan renders specialised
//! kernels from templates, compiles them at run time with NVRTC, caches them in memory and on
//! disk, and launches them. The CPU backends ([`cpu::Sequential`],
//! [`cpu::Parallel`]) give the same results without a GPU. Nothing assumes commutativity:
//! `combine(a, b)` always means "`a` comes before `b`".
//!
//! ## Quick start
//!
//! ```
//! use monoscan::{AnyBackend, Backend, ops::{Flagged, Segmented, Sum}};
//!
//! # fn main() -> monoscan::Result<()> {
//! // GPU 0 when the driver, a device and NVRTC are there; the parallel CPU backend otherwise.
//! let backend = AnyBackend::auto()?;
//! println!("running on {}", backend.describe());
//! let sizes: Vec<u32> = vec![3, 0, 2, 5];
//! let (offsets, total) = backend.exclusive_scan_total(&Sum::<u32>::new(), &sizes, 0)?;
//! assert_eq!((offsets, total), (vec![0, 3, 3, 5], 10));
//!
//! // Any monoid, restarting at flagged elements.
//! let seg = Segmented::new(Sum::<f32>::new());
//! let xs = [Flagged::head(1.0), Flagged::tail(2.0), Flagged::head(3.0)];
//! let per_segment = backend.inclusive_scan(&seg, &xs)?;
//! assert_eq!(per_segment.iter().map(|f| f.value).collect::<Vec<_>>(), [1.0, 3.0, 3.0]);
//! # Ok(())
//! # }
//! ```
//!
//! [`AnyBackend`] is the run-time choice; [`Gpu`], [`cpu::Parallel`] and [`cpu::Sequential`]
//! are the backends themselves, with the same [`Backend`] methods.
//!
//! ## Sequential Rust, and the monoscan call
//!
//! | sequential Rust | monoscan |
//! | --- | --- |
//! | `xs.iter().fold(e, \|a, x\| op(a, x))` | [`Backend::reduce`]`(&m, &xs)` |
//! | `xs.iter().scan(e, \|a, x\| { *a = op(*a, x); Some(*a) })` | [`Backend::inclusive_scan`]`(&m, &xs)` |
//! | the same, starting from `init` and shifted by one, plus the final value | [`Backend::exclusive_scan_total`]`(&m, &xs, init)` |
//! | `xs.iter().map(f).fold(...)` | [`Backend::map_reduce`]`(&m, &Map::new(..), &xs)` (the map fused into the kernel) |
//! | a fold that restarts at each segment head | [`ops::Segmented`] over [`ops::Flagged`] elements |
//! | `xs.iter().filter(p).collect()` on device memory | [`Gpu::compact`] |
//! | the same on device buffers, no host round trip | [`Gpu::scanner`]: [`Scanner::inclusive`], [`Scanner::exclusive_with_total`], [`Scanner::reduce`] |
//! | checking that `op` is associative and `e` its identity | `laws::check` (feature `laws`) |
//! | checking that the CUDA snippet computes what the Rust does | [`verify::verify_pairs`]; `verify::verify` on random elements (feature `laws`) |
//! | all of the checks at once, as far as the machine allows | [`check()`] (feature `laws`; and `monoscan check`) |
//!
//! ## Where things are
//!
//! - The operator contract: [`Monoid`], [`CudaOp`], [`Element`] (`#[derive(Element)]`),
//!   [`Map`]; built-in operators in [`ops`]; half precision, `bool` and `usize` inputs in
//!   [`inputs`].
//! - Backends: [`Backend`], implemented by [`cpu::Sequential`], [`cpu::Parallel`], [`Gpu`] and
//!   [`AnyBackend`] (the GPU when usable, else the CPU); [`Scanner`] for device buffers;
//!   [`Algorithm`] picks the GPU strategy.
//! - Checks: `laws` (the monoid laws, with proptest; feature `laws`), [`verify`] (host
//!   against device) and [`check()`](fn@check) (both, and every kernel set compiled, in one
//!   call; feature `laws`).
//! - Workloads built on scans: [`workloads`] (segmented scans, allocation, polynomials,
//!   linear recurrences); several GPUs: `multi` (feature `multi`).
//! - Tuning the kernels: [`tuning::Tuning`], attached with [`Gpu::with_tuning`]; measuring
//!   them, for any operator: [`bench`](mod@bench) ([`bench::operator`], against the memory
//!   floors and the roofline of [`bench::combine_rate`]; representative operators in
//!   [`bench::classes`]).
//! - The guides, as pages of this documentation: [`guide`] (writing an operator, the
//!   workloads, the algorithms, performance, the architecture, the kernel cache).
//! - The machinery underneath, for inspection: [`codegen`] (the generated CUDA), [`jit`]
//!   (NVRTC), [`cache`] (the kernel cache).
//! - cudarc, re-exported as [`cudarc`], for device buffers and streams ([`Gpu::stream`]) in the
//!   version monoscan was built with.
//!
//! ## Features
//!
//! | feature | default | gives | pulls in |
//! | --- | --- | --- | --- |
//! | `cli` | yes | the `monoscan` command line (`cargo install monoscan`) | clap, serde_json, indicatif |
//! | `laws` | yes | `monoscan::laws` and `verify::verify` over random elements | proptest |
//! | `f16` | yes | `half::f16` and `half::bf16` elements, `inputs::widen_f16`, `inputs::widen_bf16` | half (and cudarc's `f16`) |
//! | `cuda-13000` | yes | cudarc's CUDA 13.0 bindings | |
//! | `multi` | no | `monoscan::multi`: scans across the host's GPUs through NCCL | cudarc's `nccl` |
//!
//! A library that wants none of the command line depends on
//! `monoscan = { version = "0.1", default-features = false, features = ["cuda-13000", "f16"] }`
//! (and `laws` in its dev-dependencies to check its operators).
//!
//! ## Beside other cudarc code
//!
//! monoscan asks cudarc for `fallback-dynamic-loading`: cudarc loads `libcuda` and `libnvrtc`
//! at run time, unless another crate of the application asks cudarc for `dynamic-linking` (as
//! candle does) or `static-linking`, which then applies to monoscan too. The CUDA version is
//! `cuda-13000` by default; without that feature it is the one the application's cudarc
//! dependency names (`cuda-12080`, ...), else the installed toolkit's (`nvcc`), else the
//! newest cudarc knows. monoscan's device buffers are cudarc's ([`cudarc::driver::CudaSlice`]
//! on the [`Gpu::stream`]); [`Gpu::from_stream`] runs monoscan on a stream of the
//! application.
//!
//! ## Supported
//!
//! - Linux (the driver and NVRTC are loaded as `.so` files); tested on x86-64.
//! - NVIDIA GPUs of compute capability 7.5 (Turing) and newer: NVRTC 13 compiles for sm_75 to
//!   sm_120, and a GPU newer than the NVRTC gets PTX for the newest architecture it knows. The
//!   staged single-pass scan (`cp.async`) needs sm_80; tensor-copy (TMA) staging sm_90; older
//!   architectures run the register-tile kernels.
//! - An NVIDIA driver for CUDA 13 (R580 or newer).
//! - NVRTC 13 from a CUDA toolkit or the `nvidia-cuda-nvrtc` pip wheel (no other toolkit part:
//!   the generated kernels include no headers). Where it is searched: [`jit`].
//! - Without a GPU, the CPU backends run everywhere Rust and rayon do.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

extern crate self as monoscan;

mod algorithm;
mod alloc;
mod any;
mod approx;
mod backend;
pub mod bench;
pub mod cache;
#[cfg(feature = "laws")]
#[cfg_attr(docsrs, doc(cfg(feature = "laws")))]
pub mod check;
pub mod codegen;
pub mod cpu;
mod dylib;
mod element;
mod error;
mod gpu;
pub mod guide;
pub mod inputs;
pub mod jit;
pub mod lanes;
#[cfg(feature = "laws")]
#[cfg_attr(docsrs, doc(cfg(feature = "laws")))]
pub mod laws;
pub mod layout;
pub mod literal;
mod map;
mod monoid;
#[cfg(feature = "multi")]
#[cfg_attr(docsrs, doc(cfg(feature = "multi")))]
pub mod multi;
pub mod ops;
#[doc(hidden)]
pub mod translate;
pub mod tuning;
pub mod verify;
pub mod workloads;

pub use algorithm::Algorithm;
pub use any::AnyBackend;
pub use approx::{ApproxEq, Tolerance};
pub use backend::Backend;
#[cfg(feature = "laws")]
#[cfg_attr(docsrs, doc(cfg(feature = "laws")))]
pub use check::check;
/// cudarc, the CUDA driver and NVRTC bindings monoscan runs on, in the version it was built
/// with: device buffers ([`cudarc::driver::CudaSlice`]), streams, `DeviceRepr`.
pub use cudarc;
pub use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
pub use element::Element;
pub use error::{CompileFailure, Error, LayoutFigure, LayoutMismatch, Memory, Result};
pub use gpu::{device_count, driver_present, DeviceInfo, Gpu, KernelInfo, MappedScanner, Scanner};
pub use gpu::{PrepareReport, Prepared};
/// The `half` crate (`f16`, `bf16`), re-exported for the half-precision elements.
#[cfg(feature = "f16")]
#[cfg_attr(docsrs, doc(cfg(feature = "f16")))]
pub use half;
pub use map::Map;
pub use monoid::{CudaMap, CudaOp, Monoid, Param};
pub use monoscan_derive::{device, operator, Element};

/// The README's Rust example, run as a doc test (so that what a new user copies first builds
/// and runs).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// What `#[derive(Element)]` expands to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::element::{guarded_definition, ident_fragment, CudaInit};
}
