//! Timing device work with CUDA events: warm-up, then the median of many runs.

use super::Gpu;
use crate::error::Result;
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

impl Gpu {
    /// Runs `f` `warmup` times untimed, then `reps` times, each between two events recorded
    /// on this Gpu's stream. `f` must queue its work on that stream.
    pub fn time(
        &self,
        warmup: usize,
        reps: usize,
        mut f: impl FnMut() -> Result<()>,
    ) -> Result<Timing> {
        for _ in 0..warmup {
            f()?;
        }
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let mut runs = Vec::with_capacity(reps);
        for _ in 0..reps.max(1) {
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
