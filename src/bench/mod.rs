//! Measuring: device time of any queued work ([`Timer`]), the memory floors every figure is
//! compared with (a device-to-device copy of the same bytes for a scan, a read-only pass for a
//! reduction), an operator's combine rate R ([`combine_rate`]: its roofline, with the memory
//! floors: a scan cannot beat `max(copy, 2n combines at R)`, a reduction `max(read pass, n
//! combines at R)`), any operator's scan and reduction beside those floors ([`operator`]), the
//! representative operators of each class of element size and combine cost ([`classes`]), and
//! the algorithm lab ([`lab`]: every algorithm on any operator, checked, timed, its combines
//! counted against the textbook formulas).
//!
//! `cargo run --release --example bench_operator` runs both for an operator of your own (copy
//! the example and replace the operator).
//!
//! Each run's events span the GPU's work only. Before the start event the stream gets a short
//! hold (a one-thread kernel that waits on the GPU's global timer), during which the host
//! enqueues the start event, the work and the end event; so the work starts right after the
//! start event instead of whenever the host's enqueue (3–5 µs for a scan call) reaches an idle
//! GPU. NVIDIA's nvbench holds the stream the same way. A call's end-to-end latency, host
//! included, is another measurement (`monoscan bench`'s latency line).
//!
//! ```
//! use monoscan::{bench::Timer, Gpu, ops::Sum};
//! # fn main() -> monoscan::Result<()> {
//! # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
//! let xs = gpu.stream().clone_htod(&vec![1u32; 1 << 20])?;
//! let mut ys = gpu.stream().alloc_zeros::<u32>(1 << 20)?;
//! let sum = Sum::<u32>::new();
//! let scanner = gpu.scanner(&sum);
//! scanner.prepare()?;
//! let timer = Timer::new(&gpu).reps(5);
//! let scan = timer.time(|| scanner.inclusive(&xs, &mut ys))?;
//! let copy = timer.copy(4 << 20)?;
//! println!("{:.3} of copy", copy.median_ms() / scan.median_ms());
//! # Ok(())
//! # }
//! ```

pub mod classes;
pub mod lab;
mod operator;
mod rate;

pub use operator::{operator, OperatorPoint, OperatorReport};
pub use rate::{combine_rate, CombineRate};

use crate::error::{Error, Result};
use crate::gpu::launch;
use crate::gpu::Gpu;
use cudarc::driver::sys::CUevent_flags;

/// Event-timed milliseconds of repeated runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Every timed run, sorted.
    pub runs_ms: Vec<f64>,
}

impl Timing {
    /// The median run.
    pub fn median_ms(&self) -> f64 {
        self.runs_ms
            .get(self.runs_ms.len() / 2)
            .copied()
            .unwrap_or(f64::NAN)
    }

    /// The fastest run.
    pub fn min_ms(&self) -> f64 {
        self.runs_ms.first().copied().unwrap_or(f64::NAN)
    }
}

/// Times work queued on a [`Gpu`]'s stream with CUDA events: `warmup` untimed runs, then
/// `reps` timed ones, each after a hold of the stream.
#[derive(Debug, Clone, Copy)]
pub struct Timer<'a> {
    gpu: &'a Gpu,
    warmup: usize,
    reps: usize,
    hold_us: u64,
}

impl<'a> Timer<'a> {
    /// The hold before each timed run, unless set: 50 µs, far longer than the host takes to
    /// enqueue one call of the library (3–5 µs; a hierarchical scan queues a few launches).
    pub const DEFAULT_HOLD_US: u64 = 50;

    /// A timer on `gpu`'s stream: 3 warm-up runs, 20 timed runs, a 50 µs hold.
    pub fn new(gpu: &'a Gpu) -> Self {
        Timer {
            gpu,
            warmup: 3,
            reps: 20,
            hold_us: Self::DEFAULT_HOLD_US,
        }
    }

    /// Untimed runs before the timed ones.
    pub fn warmup(mut self, warmup: usize) -> Self {
        self.warmup = warmup;
        self
    }

    /// Timed runs (at least one).
    pub fn reps(mut self, reps: usize) -> Self {
        self.reps = reps.max(1);
        self
    }

    /// The hold before each timed run, in microseconds: 0 (the events then also span the
    /// host's enqueue) to 1,000,000.
    pub fn hold_us(mut self, hold_us: u64) -> Result<Self> {
        if hold_us > 1_000_000 {
            return Err(Error::invalid(format!(
                "a hold of {hold_us} us: expected 0 to 1000000"
            )));
        }
        self.hold_us = hold_us;
        Ok(self)
    }

    /// Runs `f` as configured, each timed run between two events recorded on the Gpu's stream
    /// after the hold. `f` must queue its work on that stream; a run in which `f` waits for the
    /// GPU also counts that wait.
    pub fn time(&self, mut f: impl FnMut() -> Result<()>) -> Result<Timing> {
        let stream = self.gpu.stream();
        let holder = if self.hold_us > 0 {
            Some(self.gpu.baseline_function("monoscan_hold")?)
        } else {
            None
        };
        for _ in 0..self.warmup {
            f()?;
        }
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let mut runs = Vec::new();
        runs.try_reserve_exact(self.reps).map_err(|_| {
            Error::invalid(format!(
                "{} timed runs are more than memory holds",
                self.reps
            ))
        })?;
        for _ in 0..self.reps {
            if let Some(h) = &holder {
                // SAFETY: `h` is `monoscan_hold` of the baseline module.
                unsafe { launch::hold(stream, h, self.hold_us * 1000) }?;
            }
            let start = stream.record_event(flags)?;
            f()?;
            let end = stream.record_event(flags)?;
            end.synchronize()?;
            runs.push(f64::from(start.elapsed_ms(&end)?));
        }
        runs.sort_by(f64::total_cmp);
        Ok(Timing { runs_ms: runs })
    }

    /// Times a device-to-device copy of `bytes` bytes (`cuMemcpyDtoDAsync`): the floor of a
    /// scan that reads `bytes` bytes and writes as many.
    pub fn copy(&self, bytes: usize) -> Result<Timing> {
        let stream = self.gpu.stream();
        let src = self.gpu.zeros::<u8>(bytes)?;
        let mut dst = self.gpu.zeros::<u8>(bytes)?;
        self.time(|| {
            stream.memcpy_dtod(&src, &mut dst)?;
            Ok(())
        })
    }

    /// Times one read of `bytes` bytes (rounded down to 16) by a grid-stride kernel of 16-byte
    /// loads: the floor of a reduction.
    pub fn read_pass(&self, bytes: usize) -> Result<Timing> {
        let stream = self.gpu.stream();
        let buf = self.gpu.zeros::<[u32; 4]>(bytes / 16)?;
        let mut sink = self.gpu.zeros::<u32>(1)?;
        let f = self.gpu.baseline_function("monoscan_read_pass")?;
        let blocks = self.gpu.info().sm_count * 8;
        let (words, _g) = launch::input(&buf, stream);
        let (sink, _g2) = launch::output(&mut sink, stream);
        self.time(|| {
            // SAFETY: `f` is `monoscan_read_pass` of the baseline module.
            unsafe { launch::read_pass(stream, &f, blocks, words, sink) }
        })
    }
}
