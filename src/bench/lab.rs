//! The algorithm lab: every algorithm on the same input, checked against the reference, timed,
//! and its combine operations counted by instrumented builds of the same templates.
//!
//! The textbook formulas for a block scan of a section of `N` elements:
//!
//! - Kogge-Stone: `N log2 N - (N - 1)` combines (`sum over strides s < N of (N - s)`).
//! - Brent-Kung: `N - 1` in the reduction tree and `N - 1 - log2 N` in the distribution tree,
//!   `2N - 2 - log2 N` in all, which the textbook rounds to "about `2N - 3`".
//!
//! The lab prints the formulas beside the counts; the counts are measured on the device, never
//! computed from the formulas.

use crate::algorithm::Algorithm;
use crate::alloc;
use crate::backend::Backend;
use crate::cpu::{seq, Parallel};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::monoid::{CudaOp, Monoid};
use std::sync::atomic::{AtomicU64, Ordering};

/// `N log2 N - (N - 1)`: Kogge-Stone's combines on a section of `n` (a power of two); 0 for
/// an empty section, and `u64::MAX` where the count does not fit.
pub fn kogge_stone_formula(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    n.checked_mul(u64::from(n.ilog2()))
        .map_or(u64::MAX, |nlog| nlog - (n - 1))
}

/// `2N - 2 - log2 N`: Brent-Kung's combines on a section of `n` (a power of two); 0 for an
/// empty section, and `u64::MAX` where the count does not fit.
pub fn brent_kung_formula(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    n.checked_mul(2)
        .map_or(u64::MAX, |twice| twice - 2 - u64::from(n.ilog2()))
}

/// One line of the lab's table.
#[derive(Debug, Clone, PartialEq)]
pub struct LabRow {
    /// The algorithm (`kogge-stone`, ..., `cpu (rayon)`).
    pub name: String,
    /// Median time of the scan, in ms (device time on the GPU, wall time on the CPU).
    pub ms: f64,
    /// Whether the result equals the sequential reference.
    pub correct: bool,
    /// Combines of the whole scan (all kernels, carries included), as counted.
    pub combines: u64,
    /// For the block algorithms: the combines of the block scans alone, their number of
    /// sections, the section length, and the formula's prediction for them.
    pub block: Option<BlockCount>,
}

/// Combines of the first-level block scans of a textbook algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockCount {
    /// Counted combines.
    pub measured: u64,
    /// Sections scanned.
    pub sections: u64,
    /// Elements per section.
    pub section: u64,
    /// `sections x formula(section)`.
    pub formula: u64,
}

/// The most timed repetitions [`run`] accepts.
pub const MAX_REPS: usize = 10_000;

/// Runs every GPU algorithm (when `gpu` is given) and the parallel CPU backend on `xs`, each
/// timed over `reps` repetitions (1 to [`MAX_REPS`]; 0 counts as 1).
pub fn run<M: Monoid>(
    gpu: Option<&Gpu>,
    m: &M,
    xs: &[M::Elem],
    reps: usize,
) -> Result<Vec<LabRow>> {
    if reps > MAX_REPS {
        return Err(Error::invalid(format!(
            "{reps} repetitions: at most {MAX_REPS}"
        )));
    }
    let mut want = alloc::to_vec(xs)?;
    seq::inclusive_scan_in_place(m, &mut want);
    let mut rows = Vec::new();
    if let Some(gpu) = gpu {
        for algorithm in Algorithm::EXPLICIT {
            rows.push(gpu_row(gpu, m, xs, &want, algorithm, reps)?);
        }
    }
    rows.push(cpu_row(m, xs, &want, reps)?);
    Ok(rows)
}

fn gpu_row<M: Monoid>(
    gpu: &Gpu,
    m: &M,
    xs: &[M::Elem],
    want: &[M::Elem],
    algorithm: Algorithm,
    reps: usize,
) -> Result<LabRow> {
    let s = gpu.stream();
    let input = s.clone_htod(xs)?;
    let mut out = s.clone_htod(xs)?;
    let plain = gpu.scanner(m).algorithm(algorithm);
    plain.prepare()?;
    let timing = super::Timer::new(gpu)
        .warmup(2)
        .reps(reps)
        .time(|| plain.inclusive(&input, &mut out))?;
    let correct = s.clone_dtoh(&out)? == want;

    let counted = gpu.scanner(m).algorithm(algorithm).instrumented();
    counted.prepare()?;
    counted.take_combines()?;
    counted.inclusive(&input, &mut out)?;
    let combines = counted.take_combines()?;
    let block = counted.block_scans_only(&input, &mut out)?;
    let block = match block {
        Some((sections, section)) => {
            let measured = counted.take_combines()?;
            let per = if algorithm == Algorithm::KoggeStone {
                kogge_stone_formula(section)
            } else {
                brent_kung_formula(section)
            };
            Some(BlockCount {
                measured,
                sections,
                section,
                formula: sections.saturating_mul(per),
            })
        }
        None => None,
    };
    Ok(LabRow {
        name: algorithm.name().to_string(),
        ms: timing.median_ms(),
        correct,
        combines,
        block,
    })
}

/// Counts the combines the CPU backend performs.
struct Counting<'a, M> {
    m: &'a M,
    count: AtomicU64,
}

impl<M: Monoid> Monoid for Counting<'_, M> {
    type Elem = M::Elem;
    fn identity(&self) -> M::Elem {
        self.m.identity()
    }
    fn combine(&self, a: &M::Elem, b: &M::Elem) -> M::Elem {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.m.combine(a, b)
    }
    fn cuda(&self) -> CudaOp {
        self.m.cuda()
    }
}

fn cpu_row<M: Monoid>(m: &M, xs: &[M::Elem], want: &[M::Elem], reps: usize) -> Result<LabRow> {
    let cpu = Parallel::default();
    let mut times = alloc::with_capacity(reps.max(1))?;
    let mut ys = Vec::new();
    for _ in 0..reps.max(1) {
        let start = std::time::Instant::now();
        ys = cpu.inclusive_scan(m, xs)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let counting = Counting {
        m,
        count: AtomicU64::new(0),
    };
    cpu.inclusive_scan(&counting, xs)?;
    Ok(LabRow {
        name: cpu.describe(),
        ms: times[times.len() / 2],
        correct: ys == want,
        combines: counting.count.load(Ordering::Relaxed),
        block: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Sum;

    #[test]
    fn formulas_match_the_textbook() {
        // Kogge-Stone on 16: sum of (16 - s) for s = 1, 2, 4, 8 = 15 + 14 + 12 + 8 = 49.
        assert_eq!(kogge_stone_formula(16), 49);
        // Brent-Kung on 16: 15 up-sweep + (1 + 3 + 7 = 11) down-sweep = 26 = 2*16 - 2 - 4.
        assert_eq!(brent_kung_formula(16), 26);
        assert_eq!(kogge_stone_formula(1024), 1024 * 10 - 1023);
    }

    #[test]
    fn cpu_row_counts_sequential_work() {
        let xs: Vec<i64> = (0..100).collect();
        let want = seq::inclusive_scan(&Sum::new(), &xs);
        let row = cpu_row(&Sum::<i64>::new(), &xs, &want, 1).unwrap();
        assert!(row.correct);
        // One combine per element: the fold starts from the identity (`e ⊕ x0 ⊕ ...`).
        assert_eq!(row.combines, 100);
    }
}
