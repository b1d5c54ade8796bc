//! Command-line definitions (clap derive) and the subcommand dispatcher.
//!
//! Adding a subcommand: write `src/cli/<name>.rs` with a `#[derive(clap::Args)]` struct and a
//! `pub fn <name>(args) -> Result<(), CliError>`, add a variant to [`Command`] and one arm to
//! [`execute`].

pub mod bench;
mod bench_classes;
mod bench_folds;
mod bench_lanes;
mod bench_latency;
mod bench_maps;
pub mod cache;
pub mod check;
pub mod dispatch;
pub mod doctor;
pub mod emit;
pub mod floats;
pub mod lab;
pub mod run;
pub mod svg;
pub mod tuning;

use clap::{Parser, Subcommand};
use serde::Serialize;
use std::fmt;
use std::io::Write;

/// Any associative operator -> GPU reduce and scan kernels, with exact CPU backends.
///
/// Without a subcommand, `monoscan` runs `monoscan run` with its defaults.
#[derive(Parser, Debug)]
#[command(name = "monoscan", version)]
pub struct Cli {
    /// What to do (default: `run`).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Reduce and inclusive-scan the data 1..N under a built-in operator, timing both.
    Run(run::RunArgs),
    /// Print the CUDA source generated for an operator and algorithm.
    Emit(emit::EmitArgs),
    /// Inspect or clear the on-disk kernel cache.
    Cache {
        /// What to do.
        #[command(subcommand)]
        command: cache::CacheCommand,
    },
    /// Every algorithm on 1..N: checked, timed, combines counted beside the textbook formulas.
    Lab(lab::LabArgs),
    /// Check the driver, NVRTC, the devices and the kernel cache.
    Doctor,
    /// Sweep sizes for every algorithm beside a copy of the same bytes; table, CSV, SVG.
    Bench(Box<bench::BenchArgs>),
    /// Check the built-in operators: monoid laws, every kernel set compiled for an
    /// architecture, and (with a GPU) the device's identity and combine against the host's.
    Check(check::CheckArgs),
}

/// Runs the parsed command line.
pub fn execute(cli: Cli) -> Result<(), CliError> {
    match cli
        .command
        .unwrap_or_else(|| Command::Run(run::RunArgs::default()))
    {
        Command::Run(args) => run::run(&args),
        Command::Emit(args) => emit::emit(&args),
        Command::Cache { command } => cache::cache(command),
        Command::Lab(args) => lab::lab(&args),
        Command::Doctor => doctor::doctor(),
        Command::Bench(args) => bench::bench(&args),
        Command::Check(args) => check::check(&args),
    }
}

/// Why a command failed; decides the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// The arguments are wrong (exit status 2).
    Usage(String),
    /// The arguments are fine but the run failed (exit status 1).
    Runtime(String),
}

impl CliError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Runtime(_) => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Runtime(m) => f.write_str(m),
        }
    }
}

impl From<cudarc::driver::DriverError> for CliError {
    fn from(e: cudarc::driver::DriverError) -> Self {
        CliError::Runtime(monoscan::Error::from(e).to_string())
    }
}

impl From<monoscan::Error> for CliError {
    fn from(e: monoscan::Error) -> Self {
        CliError::Runtime(e.to_string())
    }
}

/// The command-line spelling of a value-enum variant (`bitand`, `i32`).
pub fn value_name<T: clap::ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

// Helpers shared by the subcommands.

/// `MemAvailable` from /proc/meminfo, in bytes; `None` when it cannot be read.
pub fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `bytes` in binary units with one decimal (`23.0 GiB`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// An empty vector with room for exactly `len` elements, or an error naming `what` (never an
/// abort on allocation failure).
pub fn allocate<T>(len: usize, what: &str) -> Result<Vec<T>, CliError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|e| {
        let bytes = (len as u128) * (std::mem::size_of::<T>() as u128);
        CliError::Runtime(format!(
            "cannot allocate the {what} ({len} elements, {bytes} bytes): {e}"
        ))
    })?;
    Ok(v)
}

/// `x` as compact JSON; infinite and NaN floats are the strings `"inf"`, `"-inf"` and `"NaN"`
/// ([`floats::to_json`]).
pub fn json<T: Serialize + ?Sized>(x: &T) -> Result<String, CliError> {
    floats::to_json(x)
}

/// Writes to stdout; a closed pipe (`monoscan run | head -1`) is not an error.
pub fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::Runtime(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn default_run_args_match_clap_defaults() {
        let parsed = Cli::try_parse_from(["monoscan", "run"]).unwrap();
        let Some(Command::Run(args)) = parsed.command else {
            panic!("`run` did not parse as Command::Run");
        };
        assert_eq!(args, run::RunArgs::default());
    }
}
