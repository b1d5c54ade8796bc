//! `monoscan lab`: every algorithm on the same input, checked, timed, and its combines counted
//! by instrumented kernels, beside the textbook formulas.

use super::dispatch::{dispatch, Dtype, Job, Op};
use super::{allocate, value_name, write_stdout, CliError};
use monoscan::bench::lab;
use monoscan::{Gpu, Monoid};
use serde::Serialize;

/// Arguments of `monoscan lab`.
#[derive(clap::Args, Debug)]
pub struct LabArgs {
    /// Elements (the data is 1..N, as in `monoscan run`).
    #[arg(long, default_value_t = 2048)]
    pub n: u64,
    /// The operator.
    #[arg(long, value_enum, default_value = "sum")]
    pub op: Op,
    /// The element type (default: the operator's).
    #[arg(long, value_enum)]
    pub dtype: Option<Dtype>,
    /// Timed repetitions (the median is shown), 1 to 10000.
    #[arg(long, default_value_t = 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=lab::MAX_REPS as u64))]
    pub reps: usize,
}

struct Lab<'a> {
    args: &'a LabArgs,
    gpu: Option<&'a Gpu>,
}

impl Job for Lab<'_> {
    type Output = Result<String, CliError>;
    fn call<M, G>(self, m: M, elem: G) -> Self::Output
    where
        M: Monoid,
        M::Elem: Serialize,
        G: Fn(u64) -> Option<M::Elem> + Sync,
    {
        let len = usize::try_from(self.args.n)
            .map_err(|_| CliError::Usage("--n does not fit this machine".into()))?;
        let mut xs = allocate::<M::Elem>(len, "input")?;
        for i in 1..=self.args.n {
            xs.push(elem(i).ok_or_else(|| {
                CliError::Usage("the dtype cannot hold the values 1..N; lower --n".into())
            })?);
        }
        let rows = lab::run(self.gpu, &m, &xs, self.args.reps)?;
        let mut out = format!(
            "{:<22} {:>10} {:>8} {:>14}   block scans: measured / formula (sections x per-section)\n",
            "algorithm", "time (ms)", "correct", "combines"
        );
        for r in rows {
            let block = match r.block {
                Some(b) => format!(
                    "{} / {} ({} x {} on sections of {}){}",
                    b.measured,
                    b.formula,
                    b.sections,
                    b.formula / b.sections.max(1),
                    b.section,
                    if b.measured == b.formula {
                        "  equal"
                    } else {
                        "  DIFFERENT"
                    }
                ),
                None => "-".to_string(),
            };
            out += &format!(
                "{:<22} {:>10.4} {:>8} {:>14}   {block}\n",
                r.name,
                r.ms,
                if r.correct { "yes" } else { "NO" },
                r.combines
            );
        }
        out += "textbook formulas: Kogge-Stone N log2 N - (N - 1); Brent-Kung 2N - 2 - log2 N (\"about 2N - 3\")\n";
        Ok(out)
    }
}

/// Runs `monoscan lab`.
pub fn lab(args: &LabArgs) -> Result<(), CliError> {
    if args.n == 0 || args.n > 1 << 30 {
        return Err(CliError::Usage("--n must lie in 1..=2^30".into()));
    }
    let gpu = match Gpu::new(0) {
        Ok(g) => {
            eprintln!("gpu: {} (sm_{})", g.info().name, g.info().cc);
            Some(g)
        }
        Err(e) if e.is_unavailable() => {
            eprintln!("note: no GPU ({e}); the lab shows the CPU backend only");
            None
        }
        Err(e) => return Err(e.into()),
    };
    let dtype = args.dtype.unwrap_or(args.op.default_dtype());
    let text = dispatch(
        args.op,
        dtype,
        256,
        Lab {
            args,
            gpu: gpu.as_ref(),
        },
    )
    .ok_or_else(|| {
        CliError::Usage(format!(
            "--op {} does not support --dtype {}",
            value_name(&args.op),
            value_name(&dtype)
        ))
    })??;
    write_stdout(&text)
}
