//! `monoscan run`: reduce and inclusive-scan the data 1..N under a built-in operator, timed.
//!
//! The exercise of the course notes (sum of 1..2048 by reduction, prefix sums by scan, both
//! timed), generalised to every built-in operator and dtype and to any backend.

use super::dispatch::{dispatch, Dtype, Job, Op};
use super::floats::to_text;
use super::{allocate, human_bytes, json, mem_available, value_name, write_stdout, CliError};
use clap::{Args, ValueEnum};
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::{Backend, Monoid};
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::time::Instant;

/// Default `--n`: the exercise's size.
pub const DEFAULT_N: u64 = 2048;
/// Default `--segment-len`.
pub const DEFAULT_SEGMENT_LEN: u64 = 256;
/// How many prefixes are printed.
const SHOWN: usize = 20;

/// Where to run.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// the GPU if it can be opened, else the CPU (with a note on stderr)
    #[default]
    Auto,
    /// the parallel CPU backend (rayon)
    Cpu,
    /// the GPU; fails if it cannot be opened
    Gpu,
}

/// Arguments of `monoscan run`.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct RunArgs {
    /// Number of elements; the input is 1, 2, ..., N.
    #[arg(long, default_value_t = DEFAULT_N, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub n: u64,
    /// The operator.
    #[arg(long, value_enum, default_value_t = Op::Sum)]
    pub op: Op,
    /// Element type [default: f64 for affine, u32 for matmod, i32 otherwise]. Integer results
    /// wrap on overflow.
    #[arg(long, value_enum)]
    pub dtype: Option<Dtype>,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// Segment length for `--op segsum` (a segment starts at every multiple of it).
    #[arg(long, default_value_t = DEFAULT_SEGMENT_LEN, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub segment_len: u64,
    /// Run the exercise on this many rows of 1..N each (a batched scan; per-row totals).
    #[arg(long, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub rows: Option<u64>,
    /// Scan from the end of each row (the first prefix of 1..N reversed is N(N+1)/2).
    #[arg(long)]
    pub reverse: bool,
    /// Print one JSON object (backend, op, dtype, n, reduce_ms, scan_ms, first, total; with
    /// --rows or --reverse also rows and totals, one per row).
    /// Infinite and NaN floats, which JSON cannot spell as numbers, are the strings "inf",
    /// "-inf" and "NaN".
    #[arg(long)]
    pub json: bool,
}

impl Default for RunArgs {
    fn default() -> Self {
        RunArgs {
            n: DEFAULT_N,
            op: Op::Sum,
            dtype: None,
            backend: BackendChoice::Auto,
            segment_len: DEFAULT_SEGMENT_LEN,
            rows: None,
            reverse: false,
            json: false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// GPU: opened on device 0; `auto` falls back to the CPU only when the GPU stack is missing
// (no driver, no device, no NVRTC), never to hide a real failure.

/// Opens the GPU backend on device 0.
pub fn open_gpu() -> Result<monoscan::Gpu, monoscan::Error> {
    monoscan::Gpu::new(0)
}
// ---------------------------------------------------------------------------------------------

/// Runs `monoscan run`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let dtype = args.dtype.unwrap_or(args.op.default_dtype());
    let check = Validate {
        n: args.n,
        rows: args.rows.unwrap_or(1),
        dtype,
    };
    let len = dispatch(args.op, dtype, args.segment_len, check)
        .ok_or_else(|| unsupported(args.op, dtype))??;
    let spec = Spec { args, dtype, len };
    let cpu = monoscan::cpu::Parallel::default;
    match args.backend {
        BackendChoice::Cpu => execute(&cpu(), &spec),
        BackendChoice::Gpu => match open_gpu() {
            Ok(gpu) => execute(&gpu, &spec),
            Err(why) => {
                let why = why.to_string();
                let hint = if why.contains("--backend cpu") {
                    ""
                } else {
                    " (use --backend cpu or --backend auto)"
                };
                Err(CliError::Runtime(format!(
                    "cannot open the GPU backend: {why}{hint}"
                )))
            }
        },
        BackendChoice::Auto => {
            let backend = monoscan::AnyBackend::auto_from(open_gpu()).map_err(|why| {
                CliError::Runtime(format!("the GPU backend failed to open: {why}"))
            })?;
            if let Some(why) = backend.gpu_unavailable() {
                let why = why
                    .to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                let _ = writeln!(
                    std::io::stderr(),
                    "note: running on the CPU backend because the GPU backend is unavailable: {why}"
                );
            }
            // The backend's own description on the report; the reason went to stderr above.
            match backend.as_gpu() {
                Some(gpu) => execute(gpu, &spec),
                None => execute(&cpu(), &spec),
            }
        }
    }
}

fn unsupported(op: Op, dtype: Dtype) -> CliError {
    let allowed: Vec<String> = op.allowed_dtypes().iter().map(value_name).collect();
    CliError::Usage(format!(
        "--op {} does not support --dtype {}; allowed dtypes: {}",
        value_name(&op),
        value_name(&dtype),
        allowed.join(", ")
    ))
}

/// A validated run: the arguments, the resolved dtype and `n` as a length.
struct Spec<'a> {
    args: &'a RunArgs,
    dtype: Dtype,
    len: usize,
}

fn execute<B: Backend>(backend: &B, spec: &Spec<'_>) -> Result<(), CliError> {
    let job = Measure { backend, spec };
    dispatch(spec.args.op, spec.dtype, spec.args.segment_len, job)
        .ok_or_else(|| unsupported(spec.args.op, spec.dtype))?
}

/// Checks, before anything is allocated or opened, that the dtype holds 1..=n and that the
/// run fits in usize and in the available memory. Returns `n` as a length.
struct Validate {
    n: u64,
    rows: u64,
    dtype: Dtype,
}

impl Job for Validate {
    type Output = Result<usize, CliError>;

    fn call<M, G>(self, _: M, elem: G) -> Self::Output
    where
        M: Monoid,
        G: Fn(u64) -> Option<M::Elem> + Sync,
    {
        let n = self.n;
        if elem(n).is_none() {
            // Values are representable up to some bound: find the largest n that works.
            let (mut ok, mut bad) = (0u64, n);
            while bad - ok > 1 {
                let mid = ok + (bad - ok) / 2;
                if elem(mid).is_some() {
                    ok = mid;
                } else {
                    bad = mid;
                }
            }
            let dtype = value_name(&self.dtype);
            return Err(CliError::Usage(format!(
                "--dtype {dtype} cannot represent the input values 1..={n}: the largest --n \
                 allowed for {dtype} is {ok} (f32 and f64 accept any n)"
            )));
        }
        let size = std::mem::size_of::<M::Elem>();
        let too_large = || {
            CliError::Usage(format!(
                "--n {n} is too large: {n} elements of {size} bytes overflow this machine's \
                 address space"
            ))
        };
        let len = usize::try_from(n).map_err(|_| too_large())?;
        let needed = len
            .checked_mul(usize::try_from(self.rows).map_err(|_| too_large())?)
            .ok_or_else(too_large)?
            .checked_mul(size)
            .and_then(|b| b.checked_mul(3))
            .ok_or_else(too_large)?;
        if let Some(available) = mem_available() {
            if needed as u64 > available {
                return Err(CliError::Runtime(format!(
                    "--n {n} needs about {needed} bytes ({}: input, output and scratch, {size} \
                     bytes per element) but only {available} bytes ({}) are available \
                     (MemAvailable in /proc/meminfo); use a smaller --n",
                    human_bytes(needed as u64),
                    human_bytes(available)
                )));
            }
        }
        Ok(len)
    }
}

/// Builds the input, times the reduce and the inclusive scan on the backend, prints the report.
struct Measure<'a, 'b, B> {
    backend: &'a B,
    spec: &'a Spec<'b>,
}

impl<B: Backend> Job for Measure<'_, '_, B> {
    type Output = Result<(), CliError>;

    fn call<M, G>(self, m: M, elem: G) -> Self::Output
    where
        M: Monoid,
        M::Elem: Serialize,
        G: Fn(u64) -> Option<M::Elem> + Sync,
    {
        let Spec { args, dtype, len } = *self.spec;
        if args.rows.is_some() || args.reverse {
            return self.batched(m, elem);
        }
        let mut xs = allocate::<M::Elem>(len, "input")?;
        xs.resize(len, m.identity());
        xs.par_iter_mut()
            .enumerate()
            .try_for_each(|(k, x)| elem(k as u64 + 1).map(|v| *x = v))
            .ok_or_else(|| CliError::Usage("an input value does not fit the dtype".into()))?;
        let mut ys = allocate::<M::Elem>(len, "output")?;
        ys.extend_from_slice(&xs);

        // Compile or load the kernels first, so that the times are of the work alone.
        self.backend.prepare(&m)?;
        let start = Instant::now();
        let total = self.backend.reduce(&m, &xs)?;
        let reduce_ms = start.elapsed().as_secs_f64() * 1e3;
        drop(xs);
        let start = Instant::now();
        self.backend.inclusive_scan_in_place(&m, &mut ys)?;
        let scan_ms = start.elapsed().as_secs_f64() * 1e3;

        let report = Report {
            backend: self.backend.describe(),
            op: value_name(&args.op),
            dtype: value_name(&dtype),
            n: args.n,
            reduce_ms,
            scan_ms,
            first: &ys[..len.min(SHOWN)],
            total,
            rows: None,
            reverse: false,
            totals: None,
        };
        if matches!(args.op, Op::Sum | Op::SegSum) {
            let largest = [Some(&report.total), ys.last()]
                .into_iter()
                .flatten()
                .filter_map(|e| serde_json::to_value(e).ok().as_ref().and_then(magnitude))
                .fold(0.0, f64::max);
            if let Some(warning) = rounding_warning(dtype, largest) {
                let _ = writeln!(std::io::stderr(), "warning: {warning}");
            }
        }
        let text = if args.json {
            json(&report)? + "\n"
        } else {
            report.text(ys.last())?
        };
        write_stdout(&text)
    }
}

impl<B: Backend> Measure<'_, '_, B> {
    /// `--rows R` / `--reverse`: R rows of 1..N, reduced and scanned per row.
    fn batched<M, G>(&self, m: M, elem: G) -> Result<(), CliError>
    where
        M: Monoid,
        M::Elem: Serialize,
        G: Fn(u64) -> Option<M::Elem> + Sync,
    {
        let Spec { args, dtype, len } = *self.spec;
        let rows = usize::try_from(args.rows.unwrap_or(1))
            .map_err(|_| CliError::Usage("--rows does not fit this machine".into()))?;
        let lanes = Lanes::rows(rows, len);
        let total_len = lanes.elements();
        let mut xs = allocate::<M::Elem>(total_len, "input")?;
        xs.resize(total_len, m.identity());
        xs.par_chunks_mut(len)
            .try_for_each(|row| {
                row.iter_mut()
                    .enumerate()
                    .try_for_each(|(k, x)| elem(k as u64 + 1).map(|v| *x = v))
            })
            .ok_or_else(|| CliError::Usage("an input value does not fit the dtype".into()))?;
        let mut ys = allocate::<M::Elem>(total_len, "output")?;
        ys.extend_from_slice(&xs);
        let how = if args.reverse {
            LaneScan::inclusive().reverse()
        } else {
            LaneScan::inclusive()
        };
        self.backend.prepare(&m)?;
        // Once untimed: compiles the batched kernels.
        self.backend
            .reduce_lanes(&m, &Lanes::rows(1, 1), &xs[..1])?;
        let start = Instant::now();
        let reduced = self.backend.reduce_lanes(&m, &lanes, &xs)?;
        let reduce_ms = start.elapsed().as_secs_f64() * 1e3;
        drop(xs);
        let start = Instant::now();
        let totals = self.backend.scan_lanes(&m, &lanes, &mut ys, &how)?;
        let scan_ms = start.elapsed().as_secs_f64() * 1e3;
        let report = Report {
            backend: self.backend.describe(),
            op: value_name(&args.op),
            dtype: value_name(&dtype),
            n: args.n,
            reduce_ms,
            scan_ms,
            first: &ys[..len.min(SHOWN)],
            total: reduced.first().copied().unwrap_or_else(|| m.identity()),
            rows: Some(rows as u64),
            reverse: args.reverse,
            totals: Some(&totals),
        };
        let text = if args.json {
            json(&report)? + "\n"
        } else {
            report.text(None)?
        };
        write_stdout(&text)
    }
}

/// What `run` prints; `--json` prints exactly these fields.
#[derive(Serialize)]
struct Report<'a, E> {
    backend: String,
    op: String,
    dtype: String,
    n: u64,
    reduce_ms: f64,
    scan_ms: f64,
    first: &'a [E],
    total: E,
    /// With `--rows` or `--reverse`: how many rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<u64>,
    /// Whether the scan ran from the end.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    reverse: bool,
    /// With `--rows` or `--reverse`: every row's total.
    #[serde(skip_serializing_if = "Option::is_none")]
    totals: Option<&'a [E]>,
}

/// The magnitude of a sum as serde_json sees it: a number, or the `value` of a flagged
/// element (`None` for anything else, infinities and NaN included).
fn magnitude(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(x) => x.as_f64().map(f64::abs),
        serde_json::Value::Object(fields) => fields.get("value").and_then(magnitude),
        _ => None,
    }
}

/// The warning for float sums that reach `largest` in magnitude, past the integers the dtype
/// holds exactly (2^24 for f32, 2^53 for f64): from there on the partial sums of 1..N are
/// rounded, and the reduce and the scan, which add in different orders, may disagree.
fn rounding_warning(dtype: Dtype, largest: f64) -> Option<String> {
    let (bits, name) = match dtype {
        Dtype::F32 => (f32::MANTISSA_DIGITS, "f32"),
        Dtype::F64 => (f64::MANTISSA_DIGITS, "f64"),
        _ => return None,
    };
    let exact = 2f64.powi(bits as i32);
    (largest > exact).then(|| {
        format!(
            "the {name} sums exceed 2^{bits} = {exact} in magnitude, beyond which {name} does \
             not hold every integer: they are rounded, and the reduce and the scan may round \
             differently{}",
            if dtype == Dtype::F32 {
                " (use --dtype f64)"
            } else {
                ""
            }
        )
    })
}

impl<E: Serialize> Report<'_, E> {
    fn text(&self, last: Option<&E>) -> Result<String, CliError> {
        if let Some(totals) = self.totals {
            return self.rows_text(totals);
        }
        let first: Vec<String> = self.first.iter().map(to_text).collect::<Result<_, _>>()?;
        let more = if (self.first.len() as u64) < self.n {
            " ..."
        } else {
            ""
        };
        let last = last.map(to_text).transpose()?.unwrap_or_default();
        Ok(format!(
            "backend: {}\nop:      {}\ndtype:   {}\nn:       {}\n\
             [time] reduce:         {:.3} ms\n\
             [time] inclusive scan: {:.3} ms\n\
             inclusive scan, first {} prefixes: {}{more}\n\
             total (reduce):           {}\n\
             total (last scan prefix): {last}\n",
            self.backend,
            self.op,
            self.dtype,
            self.n,
            self.reduce_ms,
            self.scan_ms,
            self.first.len(),
            first.join(" "),
            to_text(&self.total)?,
        ))
    }
}

impl<E: Serialize> Report<'_, E> {
    /// The report of a batched run: the first row's first prefixes, then the row totals.
    fn rows_text(&self, totals: &[E]) -> Result<String, CliError> {
        let first: Vec<String> = self.first.iter().map(to_text).collect::<Result<_, _>>()?;
        let more = if (self.first.len() as u64) < self.n {
            " ..."
        } else {
            ""
        };
        let shown: Vec<String> = totals
            .iter()
            .take(SHOWN)
            .map(to_text)
            .collect::<Result<_, _>>()?;
        let more_totals = if totals.len() > SHOWN { " ..." } else { "" };
        let direction = if self.reverse { "reverse " } else { "" };
        Ok(format!(
            "backend: {}\nop:      {}\ndtype:   {}\nn:       {} per row\nrows:    {}\n\
             [time] reduce per row:         {:.3} ms\n\
             [time] {direction}inclusive scan per row: {:.3} ms\n\
             row 0, {direction}inclusive scan, first {} prefixes: {}{more}\n\
             row 0 total (reduce): {}\n\
             row totals (scan): {}{more_totals}\n",
            self.backend,
            self.op,
            self.dtype,
            self.n,
            totals.len(),
            self.reduce_ms,
            self.scan_ms,
            self.first.len(),
            first.join(" "),
            to_text(&self.total)?,
            shown.join(" "),
        ))
    }
}
