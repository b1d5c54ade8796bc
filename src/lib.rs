//! # monoscan
//!
//! Any associative operator, turned into GPU reduce and scan kernels.
//!
//! Describe a monoid once: its element type, identity and combine as Rust (the host semantics,
//! the ground truth of every test) and the same combine as a CUDA C++ snippet. monoscan renders
//! specialised kernels from templates, compiles them at run time with NVRTC, caches them in
//! memory and on disk, and launches them. Without a GPU, the same calls run on the CPU.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

extern crate self as monoscan;

mod algorithm;
mod alloc;
mod approx;
mod backend;
pub mod cache;
pub mod codegen;
pub mod cpu;
mod dylib;
mod element;
mod error;
mod gpu;
pub mod jit;
pub mod lab;
pub mod laws;
pub mod literal;
mod map;
mod monoid;
pub mod multi;
pub mod ops;
pub mod verify;
pub mod workloads;

pub use algorithm::Algorithm;
pub use approx::{ApproxEq, Tolerance};
pub use backend::Backend;
pub use cudarc::driver::DeviceRepr;
pub use element::{guarded_definition, ident_fragment, Element};
pub use error::{CompileFailure, Error, Memory, Result};
pub use gpu::{
    device_count, driver_present, DeviceInfo, Gpu, KernelInfo, MappedScanner, Scanner, Timing,
};
pub use map::Map;
pub use monoid::{CudaMap, CudaOp, Monoid, Param};
pub use monoscan_derive::Element;
