//! Criterion benches: `cargo bench` (GPU parts skip without a GPU, compile parts without NVRTC).
//!
//! - `jit`: JIT latency per operator class: cold compiles (parallel, and serial with the
//!   combine inlined for comparison), disk-cache and memory-cache hits, and on a GPU
//!   `Scanner::prepare` and a first scan of 2^10 elements (`topics/compile.rs`);
//! - `scan`: inclusive scans on the GPU (all algorithms) and the CPU backends;
//! - `reduce`: reductions, likewise;
//! - `lanes`: batched scans and reductions of columns and rows on the parallel CPU backend,
//!   beside a copy (`topics/lanes.rs`);
//! - `maps`: scans and reductions through an input map on the parallel CPU backend, in one run
//!   and along lanes (`topics/maps.rs`);
//! - `combine-form-<op>`: scans of the operators the cost policy outlines, inlined and
//!   outlined (`topics/combine_form.rs`).
//!
//! Throughput counts bytes read + written (`2 n size_of::<T>()` for a scan, `n size_of` for a
//! reduce), the same formula as the copy baseline of `monoscan bench`.

use criterion::{criterion_group, criterion_main};

#[path = "../tests/common/classes.rs"]
mod classes;
#[path = "topics/combine_form.rs"]
mod combine_form;
#[path = "topics/compile.rs"]
mod compile;
#[path = "topics/lanes.rs"]
mod lanes;
#[path = "topics/maps.rs"]
mod maps;
#[path = "topics/reduce.rs"]
mod reduce;
#[path = "topics/scan.rs"]
mod scan;

criterion_group!(
    benches,
    compile::bench,
    scan::bench,
    reduce::bench,
    lanes::bench,
    maps::bench,
    combine_form::bench
);
criterion_main!(benches);
