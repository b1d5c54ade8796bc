//! `monoscan bench --cases classes` (or class names): the representative operators of
//! `monoscan::bench::classes`, each checked against the sequential CPU scan, then its combine
//! rate R measured and its scan and reduction timed at mid sizes and at 1 GiB of input, each
//! beside a copy (scan) or a read pass (reduction) of the same bytes and beside its roofline
//! floor: `max(copy, 2n / R)` for the scan, `max(read pass, n / R)` for the reduction.

use super::bench::{log2_sizes, BenchArgs, Ctx, Row};
use super::CliError;
use monoscan::bench::classes::{self, Class, Visit};
use monoscan::bench::{self, CombineRate};

/// Seed of every class's input.
const SEED: u64 = 0x6d6f_6e6f_7363_616e;
/// Elements of the correctness check before timing (odd: a partial last tile).
const CHECK_N: usize = 1_000_003;

/// One class's combine rate, for the roofline table.
pub(super) struct ClassRate {
    pub(super) class: &'static str,
    pub(super) elem_bytes: usize,
    pub(super) rate: CombineRate,
}

/// Whether the arguments ask for class `name` (`--cases classes` asks for the representative
/// classes, `--cases sizes` for the element-size sweep).
pub(super) fn wanted(args: &BenchArgs, name: &str) -> bool {
    args.cases.iter().any(|c| {
        c == name
            || (c == "classes" && classes::NAMES.contains(&name))
            || (c == "sizes" && classes::SIZE_NAMES.contains(&name))
    })
}

/// The classes the arguments ask for.
pub(super) fn count(args: &BenchArgs) -> usize {
    classes::NAMES
        .iter()
        .chain(&classes::SIZE_NAMES)
        .filter(|n| wanted(args, n))
        .count()
}

/// Sizes for elements of `elem` bytes: the sweep's sizes from 2^14 up whose input stays below
/// 1 GiB, and, when `--max-log2` is 26 or more, 1 GiB of input: `2^30 / elem` elements rounded
/// down to a multiple of 2^16.
pub(super) fn sizes(args: &BenchArgs, elem: usize) -> Vec<usize> {
    let gib = 1usize << 30;
    let mut out: Vec<usize> = log2_sizes(args, elem)
        .into_iter()
        .filter(|&l| l >= 14)
        .map(|l| 1usize << l)
        .filter(|&n| n.saturating_mul(elem) < gib)
        .collect();
    if args.max_log2 >= 26 {
        let big = gib / elem.max(1) / (1 << 16) * (1 << 16);
        if big > 0 && !out.contains(&big) {
            out.push(big);
        }
    }
    out
}

struct Measure<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
}

impl Visit for Measure<'_, '_> {
    type Error = CliError;

    fn visit<C: Class>(&mut self, class: &C) -> Result<(), CliError> {
        let ctx = &mut *self.ctx;
        if !wanted(ctx.args, C::NAME) {
            return Ok(());
        }
        let elem = std::mem::size_of::<C::Elem>();
        let sizes = sizes(ctx.args, elem);
        let largest = sizes.iter().copied().max().unwrap_or(0).max(CHECK_N);
        let xs = class.generate(largest, SEED);
        // Exactly (or within the derived tolerance) the sequential scan, before any timing.
        if let Some(m) = classes::check(ctx.gpu, class, &xs[..CHECK_N])? {
            return Err(CliError::Runtime(format!(
                "wrong result, nothing timed: {m}"
            )));
        }
        ctx.progress.step(&format!("{} checked", C::NAME));
        if sizes.is_empty() {
            return Ok(());
        }
        let report = bench::operator(&ctx.timer, class, &xs, &sizes)?;
        drop(xs);
        for p in &report.points {
            let n = p.n as u64;
            let (scan_bytes, reduce_bytes) = (2 * p.bytes, p.bytes);
            for (algorithm, bytes, ms, baseline, baseline_ms) in [
                ("scan", scan_bytes, p.scan_ms, "copy", p.copy_ms),
                ("scan", scan_bytes, p.scan_ms, "scan floor", p.scan_floor_ms),
                ("reduce", reduce_bytes, p.reduce_ms, "read pass", p.read_ms),
                (
                    "reduce",
                    reduce_bytes,
                    p.reduce_ms,
                    "reduce floor",
                    p.reduce_floor_ms,
                ),
            ] {
                ctx.rows.push(Row {
                    case: C::NAME,
                    algorithm: algorithm.to_string(),
                    n,
                    bytes,
                    ms,
                    baseline_ms,
                    baseline,
                });
            }
        }
        ctx.rates.push(ClassRate {
            class: C::NAME,
            elem_bytes: elem,
            rate: report.rate,
        });
        ctx.progress.step(&format!("{} timed", C::NAME));
        Ok(())
    }
}

impl Ctx<'_> {
    /// Checks and measures every class the arguments ask for.
    pub(super) fn class_cases(&mut self) -> Result<(), CliError> {
        classes::visit_all(&mut Measure { ctx: self })?;
        classes::visit_sizes(&mut Measure { ctx: self })
    }
}

/// The roofline table: each class's combine rate, and which floor binds at its largest size.
pub(super) fn roofline(rates: &[ClassRate], rows: &[Row]) -> String {
    if rates.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "roofline: R = combines per second of independent chains (the combine-rate kernel, the fastest of its shapes); scan floor max(copy, 2n / R), reduce floor max(read pass, n / R)\n",
    );
    text += &format!(
        "{:<15} {:>5} {:<8} {:>12} {:>6} {:>11} {:>11} {:>11}\n",
        "class", "bytes", "combine", "R (1/s)", "chains", "n", "2n/R ms", "copy ms"
    );
    for r in rates {
        // The largest size measured for the class, and its copy.
        let copy = rows
            .iter()
            .filter(|row| row.case == r.class && row.baseline == "copy")
            .max_by_key(|row| row.n);
        let (n, copy_ms) = copy.map_or((0, f64::NAN), |row| (row.n, row.baseline_ms));
        text += &format!(
            "{:<15} {:>5} {:<8} {:>12.4e} {:>6} {:>11} {:>11.4} {:>11.4}\n",
            r.class,
            r.elem_bytes,
            r.rate.combine.name(),
            r.rate.per_second,
            r.rate.chains,
            n,
            r.rate.combines_ms(2.0 * n as f64),
            copy_ms
        );
    }
    text
}

/// The combine rate of `case`, for the CSV's last column (empty for cases without one).
pub(super) fn rate_of(rates: &[ClassRate], case: &str) -> String {
    rates
        .iter()
        .find(|r| r.class == case)
        .map_or(String::new(), |r| format!("{:.6e}", r.rate.per_second))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(min_log2: u32, max_log2: u32, step: u32) -> BenchArgs {
        BenchArgs {
            min_log2,
            max_log2,
            step,
            reps: 1,
            cases: vec!["classes".into()],
            algos: Vec::new(),
            csv: None,
            svg: None,
            hold_us: 50,
            tuning: Default::default(),
        }
    }

    #[test]
    fn classes_run_at_mid_sizes_and_at_one_gibibyte() {
        let a = args(10, 28, 2);
        // 12 bytes: 2^14 .. 2^26 (768 MiB), then 89,456,640 elements (1,073,479,680 bytes).
        let twelve = sizes(&a, 12);
        assert_eq!(
            &twelve[..7],
            [
                1 << 14,
                1 << 16,
                1 << 18,
                1 << 20,
                1 << 22,
                1 << 24,
                1 << 26
            ]
        );
        assert_eq!(twelve[7], 89_456_640);
        assert_eq!(twelve.len(), 8);
        // 16 and 64 bytes: 1 GiB is a power of two, which the sweep stops below.
        assert_eq!(*sizes(&a, 16).last().unwrap(), 1 << 26);
        assert_eq!(sizes(&a, 16).len(), 7);
        assert_eq!(*sizes(&a, 64).last().unwrap(), 1 << 24);
        for elem in [8, 12, 16, 24, 32, 48, 64] {
            let s = sizes(&a, elem);
            let big = *s.last().unwrap() * elem;
            assert!(
                big <= 1 << 30 && big > (1 << 30) - (elem << 16),
                "{elem}: {big}"
            );
        }
        // A sweep that stops below 2^26 runs no 1 GiB size.
        assert_eq!(sizes(&args(16, 24, 4), 24), [1 << 16, 1 << 20, 1 << 24]);
        assert!(sizes(&args(10, 12, 2), 8).is_empty());
    }

    #[test]
    fn cases_select_classes_by_name_or_all() {
        let mut a = args(10, 28, 2);
        assert_eq!(count(&a), classes::NAMES.len());
        a.cases = vec!["sum-i32".into(), "mat2-u64".into()];
        assert_eq!(count(&a), 1);
        assert!(wanted(&a, "mat2-u64") && !wanted(&a, "sum8-u64"));
        a.cases.clear();
        assert_eq!(count(&a), 0, "classes run only when asked for");
    }
}
