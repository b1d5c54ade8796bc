//! `monoscan check`: the monoid laws, every kernel set compiled for an architecture, and (with
//! a GPU) the device's identity and combine against the host's, for the built-in operators.
//! The library call behind it is `monoscan::check`.

use super::dispatch::{dispatch, Dtype, Job, Op};
use super::{value_name, write_stdout, CliError};
use clap::ValueEnum;
use monoscan::check::{Check, Device, Kernels};
use monoscan::laws::Checker;
use monoscan::{ApproxEq, Gpu, Monoid, Tolerance};
use proptest::strategy::Strategy;
use serde::Serialize;
use std::sync::Arc;

/// Arguments of `monoscan check`.
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct CheckArgs {
    /// Operator to check (repeatable; default: every built-in operator)
    #[arg(long = "op", value_enum)]
    pub ops: Vec<Op>,
    /// Element type (default: every type each operator takes)
    #[arg(long, value_enum)]
    pub dtype: Option<Dtype>,
    /// Compute capability to compile the kernels for (90: sm_90)
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u32).range(50..=200))]
    pub arch: u32,
    /// Random cases per monoid law
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub cases: u32,
}

/// The elements the laws and the device draw from: the operator's inputs for 1..=1000.
const DRAWN: u64 = 1000;

/// Segments of `segsum` in the drawn elements.
const SEGMENT: u64 = 4;

/// How far apart the laws' two sides may be for floats. The split law folds up to 64 drawn
/// elements on each side, each fold rounding once per combine, so the sides differ by at most
/// 2 * 64 roundings of half an f32 ulp: 64 * f32::EPSILON relative (integer elements compare
/// exactly through `ApproxEq`).
fn tolerance() -> Tolerance {
    Tolerance::relative(64.0 * f64::from(f32::EPSILON))
}

struct CheckJob<'a> {
    args: &'a CheckArgs,
    gpu: Option<&'a Gpu>,
}

/// One operator's result: whether it passed, and its report.
struct Outcome {
    passed: bool,
    text: String,
}

impl Job for CheckJob<'_> {
    type Output = Outcome;

    fn call<M, G>(self, monoid: M, elem: G) -> Outcome
    where
        M: Monoid,
        M::Elem: Serialize + ApproxEq,
        G: Fn(u64) -> Option<M::Elem> + Send + Sync + 'static,
    {
        let elem = Arc::new(elem);
        let elems = (1..=DRAWN).prop_filter_map("representable", move |i| elem(i));
        let laws = Checker::new(&monoid)
            .approx(tolerance())
            .cases(self.args.cases);
        let mut check = Check::new(&monoid).laws(laws).arch(self.args.arch);
        if let Some(gpu) = self.gpu {
            check = check.gpu(gpu);
        }
        let report = check.run(elems);
        let mut text = report.to_string();
        if !matches!(report.device, Device::Skipped(_)) || self.gpu.is_some() {
            text = text.replace('\n', "\n  ");
        } else {
            // Without a GPU every operator says so; the header says it once.
            let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("device:")).collect();
            text = lines.join("\n  ");
        }
        if let Kernels::Skipped(_) = report.kernels {
            let lines: Vec<&str> = text.lines().filter(|l| !l.contains("kernels:")).collect();
            text = lines.join("\n");
        }
        Outcome {
            passed: report.passed(),
            text,
        }
    }
}

/// Runs `monoscan check`. Exits 1 when any operator fails a check.
pub fn check(args: &CheckArgs) -> Result<(), CliError> {
    let ops: Vec<Op> = if args.ops.is_empty() {
        Op::value_variants().to_vec()
    } else {
        args.ops.clone()
    };
    for &op in &ops {
        if let Some(d) = args.dtype {
            if !op.allowed_dtypes().contains(&d) {
                return Err(CliError::Usage(format!(
                    "--op {} does not take --dtype {}",
                    value_name(&op),
                    value_name(&d)
                )));
            }
        }
    }
    let gpu = match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) if e.is_unavailable() => {
            write_stdout(&format!(
                "device: skipped for every operator (no GPU: {e})\n"
            ))?;
            None
        }
        Err(e) => return Err(e.into()),
    };
    if let Err(e) = monoscan::jit::nvrtc() {
        write_stdout(&format!(
            "kernels: skipped for every operator (no NVRTC: {e})\n"
        ))?;
    }
    let mut failed = Vec::new();
    for &op in &ops {
        let dtypes = match args.dtype {
            Some(d) => vec![d],
            None => op.allowed_dtypes(),
        };
        for dtype in dtypes {
            let job = CheckJob {
                args,
                gpu: gpu.as_ref(),
            };
            let Some(outcome) = dispatch(op, dtype, SEGMENT, job) else {
                continue;
            };
            let name = format!("{} {}", value_name(&op), value_name(&dtype));
            let verdict = if outcome.passed { "ok" } else { "FAIL" };
            write_stdout(&format!("[{verdict:^4}] {name}\n  {}\n", outcome.text))?;
            if !outcome.passed {
                failed.push(name);
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::Runtime(format!(
            "checks failed: {}",
            failed.join(", ")
        )))
    }
}
