//! `monoscan bench`: scans and reductions over sizes 2^10..2^28 for the target operators and
//! every algorithm, each beside a device-to-device copy of the same bytes (a read-only pass for
//! reductions) measured in the same run; on request, the representative operator classes
//! beside their roofline floors as well (`bench_classes.rs`).

use super::svg::{chart, Point};
use super::tuning::TuningArgs;
use super::{write_stdout, CliError};
use monoscan::bench::Timer;
use monoscan::ops::{Affine, AffineMap, Flagged, Max, Segmented, Sum};
use monoscan::tuning::policy;
use monoscan::{Algorithm, Gpu, Monoid};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `monoscan bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Smallest size, as log2 of the element count.
    #[arg(long, default_value_t = 10)]
    pub min_log2: u32,
    /// Largest size, as log2 (16-byte elements stop at 2^26: 1 GiB buffers).
    #[arg(long, default_value_t = 28)]
    pub max_log2: u32,
    /// Step between sizes, in log2.
    #[arg(long, default_value_t = 2)]
    pub step: u32,
    /// Timed runs per measurement (the median is reported).
    #[arg(long, default_value_t = 20)]
    pub reps: usize,
    /// Only these cases (comma-separated: sum-i32, sum-f32, max-i32, affine-f64, segsum-f32,
    /// reduce-i32, reduce-maps: reductions through widening maps (u8 flags counted in u32, f16
    /// summed in f32), compact-i32, alloc-u32, lanes: batched and reverse scans; reduce-lanes:
    /// folds of every lane of the same shapes; classes: every
    /// representative operator class of monoscan::bench::classes, or one by name, e.g.
    /// mat2-u64, with its combine rate and roofline floors; sizes: a cheap combine at element
    /// sizes from 1 to 64 bytes, or one by name, e.g. bytes-12; these run only when named).
    #[arg(long, value_delimiter = ',')]
    pub cases: Vec<String>,
    /// Only these scan algorithms (comma-separated: kogge-stone, brent-kung, hierarchical,
    /// single-pass); all four by default.
    #[arg(long, value_delimiter = ',')]
    pub algos: Vec<Algorithm>,
    /// Also write every measurement as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Also draw bandwidth against size, with the copy bandwidth as the ceiling, as SVG.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Microseconds the stream is held before each timed run, so that the events span the
    /// GPU's work only (0: no hold; the events then also span the host's enqueue).
    #[arg(long, default_value_t = Timer::DEFAULT_HOLD_US)]
    pub hold_us: u64,
    /// The kernels' tuning.
    #[command(flatten)]
    pub tuning: TuningArgs,
}

/// One measurement.
pub(super) struct Row {
    pub(super) case: &'static str,
    pub(super) algorithm: String,
    pub(super) n: u64,
    pub(super) bytes: u64,
    pub(super) ms: f64,
    pub(super) baseline_ms: f64,
    pub(super) baseline: &'static str,
}

impl Row {
    /// A reduction of `n` elements (`bytes` of input) in `ms`, beside a read pass of the same
    /// bytes in `read_ms`.
    pub(super) fn beside_read_pass(
        case: &'static str,
        algorithm: String,
        n: usize,
        bytes: usize,
        ms: f64,
        read_ms: f64,
    ) -> Row {
        Row {
            case,
            algorithm,
            n: n as u64,
            bytes: bytes as u64,
            ms,
            baseline_ms: read_ms,
            baseline: "read pass",
        }
    }

    fn gbps(&self) -> f64 {
        self.bytes as f64 / self.ms / 1e6
    }
    fn fraction(&self) -> f64 {
        self.baseline_ms / self.ms
    }
}

/// The progress of a sweep on stderr. indicatif draws the bar on a terminal (redrawn at a
/// bounded rate) and draws nothing elsewhere; a sweep that runs for minutes into a log file
/// still reports, so there a plain line is written every ten steps (the few lines below).
pub(super) struct Progress {
    bar: indicatif::ProgressBar,
}

impl Progress {
    /// Counts `n` more steps (a case family that knows its count once it starts).
    pub(super) fn add(&mut self, n: usize) {
        self.bar.inc_length(n as u64);
    }

    fn new(total: usize) -> Self {
        let bar = indicatif::ProgressBar::new(total as u64);
        let style = indicatif::ProgressStyle::with_template("[{bar:30}] {pos}/{len} {msg}")
            .map(|s| s.progress_chars("#."))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
        bar.set_style(style);
        Progress { bar }
    }

    pub(super) fn step(&mut self, what: &str) {
        self.bar.set_message(what.to_string());
        self.bar.inc(1);
        let (done, total) = (self.bar.position(), self.bar.length().unwrap_or(0));
        if self.bar.is_hidden() && (done % 10 == 0 || done == total) {
            let _ = writeln!(std::io::stderr(), "[{done}/{total}] {what}");
        }
        if done == total {
            self.bar.finish();
        }
    }
}

const SCAN_ALGOS: [Algorithm; 4] = [
    Algorithm::KoggeStone,
    Algorithm::BrentKung,
    Algorithm::Hierarchical,
    Algorithm::SinglePass,
];

pub(super) struct Ctx<'a> {
    pub(super) gpu: &'a Gpu,
    pub(super) args: &'a BenchArgs,
    pub(super) timer: Timer<'a>,
    pub(super) rows: Vec<Row>,
    pub(super) progress: Progress,
    /// The classes' combine rates (`--cases classes`).
    pub(super) rates: Vec<super::bench_classes::ClassRate>,
}

impl Ctx<'_> {
    pub(super) fn sizes(&self, elem: usize) -> Vec<u32> {
        log2_sizes(self.args, elem)
    }

    fn scan_case<M: Monoid>(
        &mut self,
        case: &'static str,
        m: &M,
        gen: impl Fn(u64) -> M::Elem,
    ) -> Result<(), CliError> {
        let size = std::mem::size_of::<M::Elem>();
        let sizes = self.sizes(size);
        let Some(&top) = sizes.last() else {
            return Ok(());
        };
        let xs: Vec<M::Elem> = (0..1u64 << top).map(&gen).collect();
        let s = self.gpu.stream();
        let input = s.clone_htod(&xs)?;
        let mut out = s.clone_htod(&xs)?;
        drop(xs);
        for &l in &sizes {
            let n = 1usize << l;
            let bytes = 2 * n * size;
            let copy = self.timer.copy(n * size)?.median_ms();
            let iv = input.slice(0..n);
            let mut ov = out.slice_mut(0..n);
            for algo in SCAN_ALGOS {
                if !self.args.algos.is_empty() && !self.args.algos.contains(&algo) {
                    continue;
                }
                let scanner = self.gpu.scanner(m).algorithm(algo);
                scanner.prepare()?;
                let t = self.timer.time(|| scanner.inclusive(&iv, &mut ov))?;
                self.rows.push(Row {
                    case,
                    algorithm: algo.to_string(),
                    n: n as u64,
                    bytes: bytes as u64,
                    ms: t.median_ms(),
                    baseline_ms: copy,
                    baseline: "copy",
                });
                self.progress.step(&format!("{case} {algo} 2^{l}"));
            }
        }
        Ok(())
    }

    /// Stream compaction (keep about half) and allocation offsets (u32 requests to u64
    /// offsets and the total): each includes reading the total back to the host.
    fn workload_cases(&mut self) -> Result<(), CliError> {
        let sizes = self.sizes(4);
        let Some(&top) = sizes.last() else {
            return Ok(());
        };
        // One element more than the largest size: the register kernel's row reads from the
        // second element (misaligned for cp.async).
        let xs: Vec<i32> = (0..(1u64 << top) + 1)
            .map(|i| ((i * 2_654_435_761) >> 7) as i32)
            .collect();
        let s = self.gpu.stream();
        let input = s.clone_htod(&xs)?;
        drop(xs);
        let keep = monoscan::Map::new("even", "(x & 1) == 0 ? 1u : 0u", |x: &i32| {
            u32::from(x & 1 == 0)
        });
        let requests: Vec<u32> = (0..1u64 << top)
            .map(|i| ((i * 2_654_435_761) >> 9) as u32 % 16)
            .collect();
        let reqs = s.clone_htod(&requests)?;
        drop(requests);
        for &l in &sizes {
            let n = 1usize << l;
            let copy = self.timer.copy(n * 4)?.median_ms();
            if wanted(self.args, "compact-i32") {
                // Into a buffer of n elements, as CUB's DeviceSelect writes: one fused pass,
                // the count read back. An aligned input takes the staged kernel (sm_80 and
                // newer), one that starts at the second element the register kernel.
                let mut room = s.alloc_zeros::<i32>(n)?;
                let mut count = s.alloc_zeros::<u32>(1)?;
                let staged =
                    policy::select_staged_shape(4, &self.gpu.info().limits, self.gpu.tuning())?
                        .is_some();
                let first = if staged {
                    "select staged"
                } else {
                    "select registers"
                };
                // (first element, count left on the device as CUB's DeviceSelect leaves it
                // instead of read back, label)
                for (skip, on_device, algorithm) in [
                    (0, false, first),
                    (1, false, "select registers (input at +4 B)"),
                    (0, true, "select, count on device"),
                ] {
                    let iv = input.slice(skip..skip + n);
                    let t = self.timer.warmup(2).time(|| {
                        if on_device {
                            self.gpu
                                .compact_into_counted(&iv, &keep, &mut room, &mut count)
                        } else {
                            self.gpu.compact_into(&iv, &keep, &mut room).map(|_| ())
                        }
                    })?;
                    self.rows.push(Row {
                        case: "compact-i32",
                        algorithm: algorithm.into(),
                        n: n as u64,
                        bytes: (8 * n) as u64,
                        ms: t.median_ms(),
                        baseline_ms: copy,
                        baseline: "copy",
                    });
                    self.progress
                        .step(&format!("compact-i32 {algorithm} 2^{l}"));
                }
            }
            if wanted(self.args, "alloc-u32") {
                // 4 bytes read and 8 written per request: compare with a copy of as many bytes.
                let copy12 = self.timer.copy(n * 6)?.median_ms();
                let rv = reqs.slice(0..n);
                let t = self
                    .timer
                    .warmup(2)
                    .time(|| self.gpu.allocation_offsets(&rv).map(|_| ()))?;
                self.rows.push(Row {
                    case: "alloc-u32",
                    algorithm: "offsets+total".into(),
                    n: n as u64,
                    bytes: (12 * n) as u64,
                    ms: t.median_ms(),
                    baseline_ms: copy12,
                    baseline: "copy",
                });
                self.progress.step(&format!("alloc-u32 2^{l}"));
            }
        }
        Ok(())
    }

    fn reduce_case(&mut self) -> Result<(), CliError> {
        let case = "reduce-i32";
        let m = Sum::<i32>::new();
        let sizes = self.sizes(4);
        let Some(&top) = sizes.last() else {
            return Ok(());
        };
        let xs: Vec<i32> = (0..1u64 << top).map(|i| (i % 1000) as i32 - 500).collect();
        let s = self.gpu.stream();
        let input = s.clone_htod(&xs)?;
        let mut total = s.clone_htod(&[0i32])?;
        drop(xs);
        for &l in &sizes {
            let n = 1usize << l;
            let read = self.timer.read_pass(n * 4)?.median_ms();
            let iv = input.slice(0..n);
            for (algo, name) in [
                (Algorithm::BrentKung, "tree (textbook)"),
                (Algorithm::Auto, "tiled"),
            ] {
                let scanner = self.gpu.scanner(&m).algorithm(algo);
                scanner.prepare()?;
                let t = self.timer.time(|| scanner.reduce(&iv, &mut total))?;
                let ms = t.median_ms();
                let row = Row::beside_read_pass(case, name.to_string(), n, n * 4, ms, read);
                self.rows.push(row);
                self.progress.step(&format!("{case} {name} 2^{l}"));
            }
        }
        Ok(())
    }
}

/// The log2 sizes swept for elements of `elem` bytes: `--min-log2..=--max-log2` by `--step`,
/// with elements of 16 bytes or more capped at 1 GiB per buffer (2^26 for 16 bytes).
pub(super) fn log2_sizes(args: &BenchArgs, elem: usize) -> Vec<u32> {
    let cap = if elem >= 16 {
        30 - elem.next_power_of_two().trailing_zeros()
    } else {
        u32::MAX
    };
    let mut out: Vec<u32> = (args.min_log2..=args.max_log2)
        .step_by(args.step.max(1) as usize)
        .map(|l| l.min(cap))
        .collect();
    out.dedup();
    out
}

fn wanted(args: &BenchArgs, case: &str) -> bool {
    args.cases.is_empty() || args.cases.iter().any(|c| c == case)
}

/// Why `bench` cannot run: it times kernels, so unlike `run` it has no CPU fallback to suggest.
fn no_gpu(e: monoscan::Error) -> CliError {
    let why = match &e {
        monoscan::Error::NoDriver { detail } => detail
            .clone()
            .unwrap_or_else(|| "libcuda.so could not be loaded".into()),
        _ => e.to_string(),
    };
    CliError::Runtime(format!(
        "monoscan bench times GPU kernels and needs a GPU: {why}. On the CPU, `monoscan run --backend cpu` runs the exercise"
    ))
}

/// Runs `monoscan bench`.
pub fn bench(args: &BenchArgs) -> Result<(), CliError> {
    if args.min_log2 > args.max_log2 || args.max_log2 > 30 {
        return Err(CliError::Usage(
            "need --min-log2 <= --max-log2 <= 30".into(),
        ));
    }
    let mut known = vec![
        "sum-i32",
        "sum-f32",
        "max-i32",
        "affine-f64",
        "segsum-f32",
        "reduce-i32",
        "reduce-maps",
        "compact-i32",
        "alloc-u32",
        "lanes",
        "reduce-lanes",
        "classes",
        "sizes",
    ];
    known.extend(monoscan::bench::classes::NAMES);
    known.extend(monoscan::bench::classes::SIZE_NAMES);
    if let Some(bad) = args.cases.iter().find(|c| !known.contains(&c.as_str())) {
        return Err(CliError::Usage(format!(
            "unknown case `{bad}` (known: {})",
            known.join(", ")
        )));
    }
    let tuning = args.tuning.tuning()?;
    let gpu = Gpu::new(0)
        .and_then(|g| g.with_tuning(tuning))
        .map_err(no_gpu)?;
    let timer = Timer::new(&gpu)
        .reps(args.reps)
        .hold_us(args.hold_us)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let info = gpu.info().clone();
    let count = |elem: usize| log2_sizes(args, elem).len();
    let mut total = 0;
    for (case, elem, steps) in [
        ("sum-i32", 4, 4),
        ("sum-f32", 4, 4),
        ("max-i32", 4, 4),
        ("affine-f64", 16, 4),
        ("segsum-f32", 8, 4),
        ("reduce-i32", 4, 2),
        ("reduce-maps", 4, super::bench_maps::STEPS),
        ("compact-i32", 4, 3),
        ("alloc-u32", 4, 1),
    ] {
        if wanted(args, case) {
            total += count(elem) * steps;
        }
    }
    // Each class: its check, then its measurement.
    total += 2 * super::bench_classes::count(args);
    let mut ctx = Ctx {
        gpu: &gpu,
        args,
        timer,
        rows: Vec::new(),
        progress: Progress::new(total),
        rates: Vec::new(),
    };
    if wanted(args, "sum-i32") {
        ctx.scan_case("sum-i32", &Sum::<i32>::new(), |i| (i % 1000) as i32 - 500)?;
    }
    if wanted(args, "sum-f32") {
        ctx.scan_case("sum-f32", &Sum::<f32>::new(), |i| (i % 1000) as f32 * 0.01)?;
    }
    if wanted(args, "max-i32") {
        ctx.scan_case("max-i32", &Max::<i32>::new(), |i| {
            ((i * 2_654_435_761) % 1_000_003) as i32
        })?;
    }
    if wanted(args, "affine-f64") {
        ctx.scan_case("affine-f64", &Affine::<f64>::new(), |i| {
            AffineMap::new(1.0 - (i % 7) as f64 * 1e-7, (i % 13) as f64)
        })?;
    }
    if wanted(args, "segsum-f32") {
        ctx.scan_case("segsum-f32", &Segmented::new(Sum::<f32>::new()), |i| {
            Flagged::new((i % 100) as f32, i % 1000 == 0)
        })?;
    }
    if wanted(args, "reduce-i32") {
        ctx.reduce_case()?;
    }
    if wanted(args, "reduce-maps") {
        ctx.reduce_maps_case()?;
    }
    if wanted(args, "compact-i32") || wanted(args, "alloc-u32") {
        ctx.workload_cases()?;
    }
    if wanted(args, "reduce-lanes") {
        ctx.progress.add(super::bench_folds::CASES);
        ctx.lane_folds_cases()?;
    }
    if wanted(args, "lanes") {
        ctx.progress.add(super::bench_lanes::CASES);
        ctx.lanes_cases()?;
    }
    if super::bench_classes::count(args) > 0 {
        ctx.class_cases()?;
    }

    let mut text = format!(
        "monoscan bench on {} (sm_{}, {} SMs, peak DRAM {} GB/s); bytes = read + write (read only for reductions); medians of {} runs after a {} us hold\ntuning: {}\n",
        info.name, info.cc, info.sm_count, info.mem_gbps, args.reps, args.hold_us, gpu.tuning()
    );
    text += &format!(
        "{:<14} {:<18} {:>11} {:>11} {:>9} {:>12} {:>8}\n",
        "case", "algorithm", "n", "time (ms)", "GB/s", "baseline", "fraction"
    );
    for r in &ctx.rows {
        text += &format!(
            "{:<14} {:<18} {:>11} {:>11.4} {:>9.1} {:>12} {:>8.3}\n",
            r.case,
            r.algorithm,
            if r.n.is_power_of_two() {
                format!("2^{}", r.n.trailing_zeros())
            } else {
                r.n.to_string()
            },
            r.ms,
            r.gbps(),
            r.baseline,
            r.fraction()
        );
    }
    text += &super::bench_classes::roofline(&ctx.rates, &ctx.rows);
    text += &super::bench_latency::latency(&gpu)?;
    write_stdout(&text)?;
    if let Some(path) = &args.csv {
        let mut csv = String::from(
            "gpu,case,algorithm,n,bytes,time_ms,gbps,baseline,baseline_ms,baseline_gbps,fraction,combines_per_s\n",
        );
        for r in &ctx.rows {
            csv += &format!(
                "{},{},{},{},{},{:.6},{:.2},{},{:.6},{:.2},{:.4},{}\n",
                info.name,
                r.case,
                r.algorithm,
                r.n,
                r.bytes,
                r.ms,
                r.gbps(),
                r.baseline,
                r.baseline_ms,
                r.bytes as f64 / r.baseline_ms / 1e6,
                r.fraction(),
                super::bench_classes::rate_of(&ctx.rates, r.case)
            );
        }
        std::fs::write(path, csv)
            .map_err(|e| CliError::Runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.svg {
        let mut points = Vec::new();
        for r in &ctx.rows {
            let log2_n = (r.n as f64).log2();
            points.push(Point {
                case: r.case.to_string(),
                series: r.algorithm.clone(),
                log2_n,
                gbps: r.gbps(),
            });
        }
        // One ceiling line per case: the baseline at each size.
        let mut seen = std::collections::HashSet::new();
        for r in &ctx.rows {
            if seen.insert((r.case, r.n)) {
                points.push(Point {
                    case: r.case.to_string(),
                    series: format!("{} (ceiling)", r.baseline),
                    log2_n: (r.n as f64).log2(),
                    gbps: r.bytes as f64 / r.baseline_ms / 1e6,
                });
            }
        }
        let title = format!(
            "monoscan bandwidth on {} (copy of the same bytes as ceiling)",
            info.name
        );
        std::fs::write(path, chart(&title, &points))
            .map_err(|e| CliError::Runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{log2_sizes, BenchArgs};

    fn args(min_log2: u32, max_log2: u32, step: u32) -> BenchArgs {
        BenchArgs {
            min_log2,
            max_log2,
            step,
            reps: 1,
            cases: Vec::new(),
            algos: Vec::new(),
            csv: None,
            svg: None,
            hold_us: 50,
            tuning: Default::default(),
        }
    }

    #[test]
    fn wide_elements_stop_at_one_gibibyte() {
        assert_eq!(
            log2_sizes(&args(10, 28, 2), 4),
            [10, 12, 14, 16, 18, 20, 22, 24, 26, 28]
        );
        assert_eq!(
            log2_sizes(&args(10, 28, 2), 16),
            [10, 12, 14, 16, 18, 20, 22, 24, 26]
        );
        assert_eq!(log2_sizes(&args(27, 27, 1), 8), [27]);
        // One size asked for: a 16-byte case runs it (it used to run nothing at 2^26).
        assert_eq!(log2_sizes(&args(26, 26, 1), 16), [26]);
        assert_eq!(log2_sizes(&args(28, 28, 1), 16), [26]);
    }
}
