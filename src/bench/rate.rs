//! An operator's roofline: the rate at which the device combines its elements, measured by a
//! generated kernel of independent combines (`templates/combine_rate.cu`), and the floors a
//! scan and a reduction of `n` elements cannot beat: the memory traffic, or the combines at
//! that rate, whichever takes longer.

use super::Timer;
use crate::codegen::CombineForm;
use crate::error::{Error, Result};
use crate::gpu::launch::{self, DevSlice};
use crate::gpu::rate::RateKernel;
use crate::monoid::Monoid;
use cudarc::driver::DeviceRepr;
use std::fmt;

/// An operator's measured combine rate R, with the parameters of the measurement: those of
/// the fastest shape of the rate kernel, and the rate of every shape measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CombineRate {
    /// Combines per second over the whole device: the fastest shape's.
    pub per_second: f64,
    /// Median device time of one run, ms.
    pub ms: f64,
    /// Combines one run performs, counted: threads x (chains x rounds + chains - 1).
    pub combines: u64,
    /// Rounds of each run (each round combines every chain once).
    pub rounds: u64,
    /// Blocks of the grid: SMs x the blocks the occupancy calculator lets reside on one.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Independent chains of combines per thread.
    pub chains: u32,
    /// How the kernel calls the combine: the form the operator's scans use.
    pub combine: CombineForm,
    /// Every shape measured: (chains per thread, combines per second).
    pub shapes: Vec<(u32, f64)>,
}

impl CombineRate {
    /// Milliseconds that `combines` combines take at this rate.
    pub fn combines_ms(&self, combines: f64) -> f64 {
        combines / self.per_second * 1e3
    }

    /// The floor of a scan of `n` elements whose copy takes `copy_ms`: the copy, or `2n`
    /// combines at this rate, whichever takes longer.
    ///
    /// ```
    /// use monoscan::bench::CombineRate;
    /// use monoscan::codegen::CombineForm;
    /// let rate = CombineRate { per_second: 1e12, ms: 1.0, combines: 1_000_000_000, rounds: 100,
    ///     blocks: 1056, threads_per_block: 256, chains: 8, combine: CombineForm::Inline,
    ///     shapes: vec![(8, 1e12)] };
    /// // 2^28 elements: 2^29 combines at 10^12 per second take 0.537 ms.
    /// assert_eq!(rate.scan_floor_ms(1 << 28, 0.7), 0.7);           // the copy binds
    /// assert!((rate.scan_floor_ms(1 << 28, 0.1) - 0.536870912).abs() < 1e-12); // R binds
    /// ```
    pub fn scan_floor_ms(&self, n: u64, copy_ms: f64) -> f64 {
        copy_ms.max(self.combines_ms(2.0 * n as f64))
    }

    /// The floor of a reduction of `n` elements whose read pass takes `read_ms`: the read pass,
    /// or `n` combines at this rate, whichever takes longer.
    pub fn reduce_floor_ms(&self, n: u64, read_ms: f64) -> f64 {
        read_ms.max(self.combines_ms(n as f64))
    }
}

impl fmt::Display for CombineRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chains: Vec<String> = self.shapes.iter().map(|(k, _)| k.to_string()).collect();
        write!(
            f,
            "R = {:.4e} combines/s ({} combine; fastest of {} chains: {} chains x {} threads x {} blocks, {} rounds, {:.4} ms)",
            self.per_second,
            self.combine,
            chains.join("/"),
            self.chains,
            self.threads_per_block,
            self.blocks,
            self.rounds,
            self.ms
        )
    }
}

/// Device time one timed run of the rate kernel is scaled to.
const TARGET_MS: f64 = 2.0;
/// Rounds of the first calibration run.
const FIRST_ROUNDS: u64 = 16;
/// The most rounds of one run.
const MAX_ROUNDS: u64 = 1 << 24;
/// The most samples uploaded (the kernel stages 128 of them per block and seeds its chains
/// from all of them).
const MAX_SAMPLES: usize = 1 << 16;

/// Measures `m`'s combine rate on `timer`'s device: the operator's combine-rate kernel
/// (compiled first, in the combine form of `m`'s scans), seeded from `samples` (at least one;
/// the first 65,536 are used), each thread running independent chains of combines over a
/// grid that fills every SM, calibrated to about 2 ms per run, then timed by `timer` (its
/// warm-up runs, its repetitions, its hold; the median counts). The combines of a run are
/// counted exactly, so a shape's rate is `combines / median time`. Every shape of
/// [`crate::codegen::KernelSet::combine_rate_shapes`] (1 to 8 chains per thread) is measured
/// and the fastest is the rate: a floor needs the most the device can do.
///
/// ```
/// use monoscan::{bench::{self, Timer}, Gpu, ops::Sum};
/// # fn main() -> monoscan::Result<()> {
/// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
/// let samples: Vec<u32> = (1..=1000).collect();
/// let rate = bench::combine_rate(&Timer::new(&gpu).reps(5), &Sum::<u32>::new(), &samples)?;
/// println!("{rate}");
/// assert!(rate.per_second.is_finite() && rate.per_second > 0.0);
/// # Ok(())
/// # }
/// ```
pub fn combine_rate<M: Monoid>(
    timer: &Timer<'_>,
    m: &M,
    samples: &[M::Elem],
) -> Result<CombineRate> {
    if samples.is_empty() {
        return Err(Error::invalid(
            "the combine rate needs at least one sample element",
        ));
    }
    let gpu = timer.gpu;
    let kernels = gpu.rate_kernels(m)?;
    let stream = gpu.stream();
    let data = gpu.upload(&samples[..samples.len().min(MAX_SAMPLES)])?;
    let most = kernels.iter().map(RateKernel::threads).max().unwrap_or(0);
    let threads = usize::try_from(most)
        .map_err(|_| Error::invalid("internal: the rate kernel's grid overflows usize"))?;
    let mut out = launch::alloc_for_writes::<M::Elem>(stream, threads)?;
    let (s, _in) = launch::input(&data, stream);
    let (o, _out) = launch::output(&mut out, stream);
    let mut best: Option<CombineRate> = None;
    let mut shapes = Vec::with_capacity(kernels.len());
    for kernel in &kernels {
        let rate = measure(timer, kernel, s, o)?;
        shapes.push((rate.chains, rate.per_second));
        if best.as_ref().is_none_or(|b| rate.per_second > b.per_second) {
            best = Some(rate);
        }
    }
    stream.synchronize()?;
    let best = best.ok_or_else(|| Error::invalid("internal: no combine-rate kernel measured"))?;
    Ok(CombineRate { shapes, ..best })
}

/// One shape's rate: calibrated, then timed.
fn measure<T: DeviceRepr>(
    timer: &Timer<'_>,
    kernel: &RateKernel<T>,
    samples: DevSlice<T>,
    out: DevSlice<T>,
) -> Result<CombineRate> {
    let gpu = timer.gpu;
    // Calibration: one run per step, 8 times the rounds until a run takes an eighth of the
    // target, then the rounds that make a run last about the target.
    let probe = Timer {
        warmup: 1,
        reps: 1,
        ..*timer
    };
    let mut rounds = FIRST_ROUNDS;
    loop {
        let ms = probe
            .time(|| kernel.launch(gpu, samples, out, rounds))?
            .median_ms();
        if ms >= TARGET_MS / 8.0 || rounds >= MAX_ROUNDS {
            if ms > 0.0 {
                let scaled = (rounds as f64 * TARGET_MS / ms).round();
                rounds = (scaled as u64).clamp(1, MAX_ROUNDS);
            }
            break;
        }
        rounds = (rounds * 8).min(MAX_ROUNDS);
    }
    let ms = timer
        .time(|| kernel.launch(gpu, samples, out, rounds))?
        .median_ms();
    let combines = kernel.combines(rounds);
    if ms.is_nan() || ms <= 0.0 {
        return Err(Error::invalid(format!(
            "the combine-rate kernel measured {ms} ms: no rate"
        )));
    }
    Ok(CombineRate {
        per_second: combines as f64 / (ms / 1e3),
        ms,
        combines,
        rounds,
        blocks: kernel.blocks,
        threads_per_block: kernel.block,
        chains: kernel.chains,
        combine: kernel.form,
        shapes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_second: f64) -> CombineRate {
        CombineRate {
            per_second,
            ms: 2.0,
            combines: 2_000_000_000,
            rounds: 1000,
            blocks: 1056,
            threads_per_block: 256,
            chains: 8,
            combine: CombineForm::Outlined,
            shapes: vec![
                (1, per_second / 4.0),
                (2, per_second / 2.0),
                (4, per_second),
                (8, per_second),
            ],
        }
    }

    #[test]
    fn floors_take_the_slower_of_memory_and_combines() {
        // 10^10 combines per second: 2^20 elements take 0.1048576 ms of combines to reduce,
        // twice that to scan.
        let r = rate(1e10);
        let n = 1u64 << 20;
        assert!((r.combines_ms(n as f64) - 0.104_857_6).abs() < 1e-12);
        assert_eq!(r.scan_floor_ms(n, 0.5), 0.5);
        assert!((r.scan_floor_ms(n, 0.01) - 0.209_715_2).abs() < 1e-12);
        assert_eq!(r.reduce_floor_ms(n, 0.2), 0.2);
        assert!((r.reduce_floor_ms(n, 0.01) - 0.104_857_6).abs() < 1e-12);
        // At equal memory times, a scan's floor passes the reduction's first.
        let r = rate(2.0 * n as f64 / 0.3e-3);
        assert!((r.scan_floor_ms(n, 0.2) - 0.3).abs() < 1e-12);
        assert_eq!(r.reduce_floor_ms(n, 0.2), 0.2);
    }

    #[test]
    fn the_rate_prints_its_parameters() {
        let text = rate(1.5e11).to_string();
        assert!(text.starts_with("R = 1.5000e11 combines/s (outlined combine; fastest of 1/2/4/8 chains: 8 chains x 256 threads x 1056 blocks, 1000 rounds"), "{text}");
    }
}
