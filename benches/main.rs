//! Criterion benches: `cargo bench` (GPU parts skip without a GPU, compile parts without NVRTC).
//!
//! - `compile`: cold NVRTC compile, disk-cache hit and memory-cache hit of typical kernel sets;
//! - `scan`: inclusive scans on the GPU (all algorithms) and the CPU backends;
//! - `reduce`: reductions, likewise.
//!
//! Throughput counts bytes read + written (`2 n size_of::<T>()` for a scan, `n size_of` for a
//! reduce), the same formula as the copy baseline of `monoscan bench`.

use criterion::{criterion_group, criterion_main};

#[path = "topics/compile.rs"]
mod compile;
#[path = "topics/reduce.rs"]
mod reduce;
#[path = "topics/scan.rs"]
mod scan;

criterion_group!(benches, compile::bench, scan::bench, reduce::bench);
criterion_main!(benches);
