//! Gating GPU and NVRTC tests: skip with a printed reason, or fail when required.
#![allow(dead_code)]

use monoscan::tuning::{TileShape, Tuning};
use monoscan::{Gpu, KernelInfo};
use std::sync::OnceLock;

fn required(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

/// Says why there is no GPU and returns `None`; under `MONOSCAN_REQUIRE_GPU=1` fails instead.
fn skip<T>(why: &str) -> Option<T> {
    assert!(
        !required("MONOSCAN_REQUIRE_GPU"),
        "MONOSCAN_REQUIRE_GPU=1 but no GPU is usable: {why}"
    );
    eprintln!("skipped: no GPU ({why})");
    None
}

/// Opens device 0: `Err` with the reason when the stack is missing, a panic on any other error.
fn open() -> Result<Gpu, String> {
    match Gpu::new(0) {
        Ok(g) => Ok(g),
        Err(e) if e.is_unavailable() => Err(e.to_string()),
        Err(e) => panic!("opening the GPU failed: {e}"),
    }
}

/// The shared GPU of this test binary, or `None` (after printing why) when there is none.
/// Under `MONOSCAN_REQUIRE_GPU=1` a missing GPU fails the test instead.
pub fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    match GPU.get_or_init(open) {
        Ok(g) => Some(g),
        Err(why) => skip(why),
    }
}

/// A GPU of its own with `tuning` attached (for tests that each try one tuning, in parallel),
/// gated like [`gpu`]. A tuning that `Gpu::with_tuning` refuses fails the test.
pub fn gpu_with(tuning: Tuning) -> Option<Gpu> {
    match open() {
        Ok(g) => Some(
            g.with_tuning(tuning.clone())
                .unwrap_or_else(|e| panic!("the tuning {tuning} was refused: {e}")),
        ),
        Err(why) => skip(&why),
    }
}

/// Whether NVRTC is loadable; prints why not, or fails under `MONOSCAN_REQUIRE_NVRTC=1`.
pub fn nvrtc() -> bool {
    match monoscan::jit::nvrtc() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                !required("MONOSCAN_REQUIRE_NVRTC"),
                "MONOSCAN_REQUIRE_NVRTC=1 but NVRTC is missing: {e}"
            );
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// A small deterministic generator for large inputs (proptest is too slow for 10^7 values).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in `[0, n)`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// Uniform in `[-1, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// Bytes of one share step for every thread the share scan keeps resident on `g`: the fewer of
/// its two launches' resident threads (from `kernels`, a prepared scanner's
/// `Scanner::kernel_info`) times one step of `size`-byte elements. `None` where no share scan
/// was loaded (no tensor copies before sm_90, or steps too wide for shared memory).
pub fn share_step_bytes(g: &Gpu, kernels: &[KernelInfo], size: usize) -> Option<u64> {
    let entry = |name: &str| kernels.iter().find(|k| k.name.ends_with(name));
    let (totals, scan) = (entry(" share_totals")?, entry(" share_scan")?);
    let threads = u64::from(totals.blocks_per_sm.min(scan.blocks_per_sm))
        * u64::from(g.info().sm_count)
        * u64::from(scan.threads);
    Some(threads * u64::from(TileShape::share_columns(size)) * 128)
}
