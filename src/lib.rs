//! # monoscan
//!
//! Any associative operator, turned into GPU reduce and scan (prefix-sum) kernels.
//!
//! Describe a monoid once: its element type, identity and combine as Rust (the host semantics,
//! the ground truth of every test) and the same combine as a CUDA C++ snippet. monoscan renders
//! specialised kernels from templates, compiles them at run time with NVRTC, caches them in
//! memory and on disk, and launches them. The CPU backends ([`cpu::Sequential`],
//! [`cpu::Parallel`]) give the same results without a GPU. Nothing assumes commutativity:
//! `combine(a, b)` always means "`a` comes before `b`".
//!
//! ## Quick start
//!
//! ```
//! use monoscan::{Backend, cpu::Parallel, ops::{Flagged, Segmented, Sum}};
//!
//! # fn main() -> monoscan::Result<()> {
//! // Any `Backend`: `monoscan::Gpu::new(0)?` on a machine with a GPU, or a CPU backend.
//! let backend = Parallel::default();
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
//! | checking that `op` is associative and `e` its identity | [`laws::check`] |
//! | checking that the CUDA snippet computes what the Rust does | [`verify::verify`] |
//!
//! ## Where things are
//!
//! - The operator contract: [`Monoid`], [`CudaOp`], [`Element`] (`#[derive(Element)]`),
//!   [`Map`]; built-in operators in [`ops`].
//! - Backends: [`Backend`], implemented by [`cpu::Sequential`], [`cpu::Parallel`] and [`Gpu`];
//!   [`Scanner`] for device buffers; [`Algorithm`] picks the GPU strategy.
//! - Checks: [`laws`] (the monoid laws, with proptest) and [`verify`] (host against device).
//! - Workloads built on scans: [`workloads`] (segmented scans, allocation, polynomials,
//!   linear recurrences); several GPUs: [`multi`].
//! - Tuning the kernels: [`tuning::Tuning`], attached with [`Gpu::with_tuning`]; measuring
//!   them: [`bench`](mod@bench).
//! - The machinery underneath, for inspection: [`codegen`] (the generated CUDA), [`jit`]
//!   (NVRTC), [`cache`] (the kernel cache).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

extern crate self as monoscan;

mod algorithm;
mod alloc;
mod approx;
mod backend;
pub mod bench;
pub mod cache;
pub mod codegen;
pub mod cpu;
mod dylib;
mod element;
mod error;
mod gpu;
pub mod jit;
pub mod laws;
pub mod literal;
mod map;
mod monoid;
pub mod multi;
pub mod ops;
pub mod tuning;
pub mod verify;
pub mod workloads;

pub use algorithm::Algorithm;
pub use approx::{ApproxEq, Tolerance};
pub use backend::Backend;
pub use cudarc::driver::DeviceRepr;
pub use element::Element;
pub use error::{CompileFailure, Error, Memory, Result};
pub use gpu::{device_count, driver_present, DeviceInfo, Gpu, KernelInfo, MappedScanner, Scanner};
pub use gpu::{PrepareReport, Prepared};
pub use map::Map;
pub use monoid::{CudaMap, CudaOp, Monoid, Param};
pub use monoscan_derive::Element;

/// What `#[derive(Element)]` expands to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::element::{guarded_definition, ident_fragment};
}
