//! Timing device work with CUDA events: warm-up, then the median of many runs.
//!
//! Each run's events span the GPU's work only. Before the start event the stream gets a short
//! hold (`monoscan_hold`, a kernel that waits on the GPU's global timer), during which the host
//! enqueues the start event, the work and the end event; so the work starts right after the
//! start event instead of whenever the host's enqueue (3–5 µs for a scan call) reaches an idle
//! GPU. Benchmarks of GPU libraries time so (NVIDIA's nvbench holds the stream with a kernel
//! that waits for the host). `MONOSCAN_HOLD_US` sets the hold (default 50 µs; 0 times without
//! it, as before session 10). A call's end-to-end latency, host included, is measured apart
//! (`monoscan bench`'s latency line).

use super::{launch, Gpu};
use crate::error::{Error, Result};
use cudarc::driver::sys::CUevent_flags;

/// The hold before each timed run, in microseconds, when `MONOSCAN_HOLD_US` is not set: far
/// longer than the host takes to enqueue one call of the library (3–5 µs; a hierarchical scan
/// queues a few launches).
const DEFAULT_HOLD_US: u64 = 50;

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

/// The hold before each timed run, in nanoseconds: `MONOSCAN_HOLD_US` (microseconds, up to one
/// second), else [`DEFAULT_HOLD_US`].
fn hold_ns() -> Result<u64> {
    parse_hold_ns(std::env::var("MONOSCAN_HOLD_US").ok().as_deref())
}

fn parse_hold_ns(var: Option<&str>) -> Result<u64> {
    match var {
        None => Ok(DEFAULT_HOLD_US * 1000),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(us) if us <= 1_000_000 => Ok(us * 1000),
            _ => Err(Error::invalid(format!(
                "MONOSCAN_HOLD_US={v}: expected microseconds from 0 (no hold) to 1000000"
            ))),
        },
    }
}

impl Gpu {
    /// Runs `f` `warmup` times untimed, then `reps` times, each between two events recorded
    /// on this Gpu's stream after a hold of the stream (see the module's documentation), so
    /// that each run measures the GPU's work without the host's enqueue. `f` must queue its
    /// work on that stream; a run in which `f` waits for the GPU also counts that wait. Room for
    /// the `reps` timings is reserved first: a count whose timings cannot be held is
    /// [`Error::OutOfMemory`] before anything runs.
    pub fn time(
        &self,
        warmup: usize,
        reps: usize,
        mut f: impl FnMut() -> Result<()>,
    ) -> Result<Timing> {
        let hold = hold_ns()?;
        let holder = if hold > 0 {
            Some(self.baseline_function("monoscan_hold")?)
        } else {
            None
        };
        for _ in 0..warmup {
            f()?;
        }
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let mut runs = crate::alloc::with_capacity(reps.max(1))?;
        for _ in 0..reps.max(1) {
            if let Some(h) = &holder {
                launch::hold(&self.stream, h, hold)?;
            }
            let start = self.stream.record_event(flags)?;
            f()?;
            let end = self.stream.record_event(flags)?;
            end.synchronize()?;
            runs.push(f64::from(start.elapsed_ms(&end)?));
        }
        runs.sort_by(f64::total_cmp);
        Ok(Timing { runs_ms: runs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hold_is_microseconds_from_the_environment() {
        assert_eq!(parse_hold_ns(None).unwrap(), DEFAULT_HOLD_US * 1000);
        assert_eq!(parse_hold_ns(Some("0")).unwrap(), 0);
        assert_eq!(parse_hold_ns(Some(" 120 ")).unwrap(), 120_000);
        for bad in ["-1", "1.5", "lots", "", "1000001"] {
            let e = parse_hold_ns(Some(bad)).unwrap_err();
            assert!(e.to_string().contains("MONOSCAN_HOLD_US"), "{bad}: {e}");
        }
    }
}
