//! `monoscan cache list|clear|dir|warm`: the on-disk kernel cache.

use super::dispatch::{dispatch, Dtype, Job, Op};
use super::tuning::TuningArgs;
use super::{human_bytes, value_name, write_stdout, CliError};
use clap::ValueEnum;
use monoscan::cache::{KernelCache, Warm};
use monoscan::{Algorithm, CudaOp, Gpu, Monoid};
use serde::Serialize;

/// What to do with the cache.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum CacheCommand {
    /// List the cached modules (path, size, what they are) and the shapes tuned per operator
    /// and device.
    List,
    /// Remove every cached module and every tuned shape.
    Clear,
    /// Print the cache folder.
    Dir,
    /// Compile built-in operators for some architectures into the cache, without a GPU (for
    /// deployment images and CI): later processes then compile nothing.
    Warm(Box<WarmArgs>),
}

/// Arguments of `monoscan cache warm`.
#[derive(clap::Args, Debug, Clone)]
pub struct WarmArgs {
    /// Compute capabilities to compile for, comma-separated (`90` for sm_90; default: that of
    /// device 0).
    #[arg(long, value_delimiter = ',')]
    pub arch: Vec<u32>,
    /// Operators, comma-separated (default: every built-in operator).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub op: Vec<Op>,
    /// Element types, comma-separated (default: every type each operator accepts).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub dtype: Vec<Dtype>,
    /// Algorithms whose kernels are compiled, comma-separated (default: auto, the default
    /// path of every scan and reduction).
    #[arg(long, value_delimiter = ',')]
    pub algos: Vec<Algorithm>,
    /// Print only the summary line, not every module.
    #[arg(long)]
    pub quiet: bool,
    /// The tuning the kernels will run with (their shapes and combine form).
    #[command(flatten)]
    pub tuning: TuningArgs,
}

/// Runs `monoscan cache ...` on the process-wide cache (`$MONOSCAN_CACHE_DIR`, or the
/// platform cache folder).
pub fn cache(cmd: CacheCommand) -> Result<(), CliError> {
    let cache = KernelCache::global();
    let Some(dir) = cache.dir().map(|d| d.to_path_buf()) else {
        return write_stdout(
            "the disk cache is off (MONOSCAN_CACHE_DIR=off): kernels are cached in memory only\n",
        );
    };
    match cmd {
        CacheCommand::Dir => write_stdout(&format!("{}\n", dir.display())),
        CacheCommand::List => {
            let entries = cache.list()?;
            let mut text = String::new();
            let mut total = 0;
            for (path, size, label) in &entries {
                total += size;
                text.push_str(&format!(
                    "{:>10}  {label}  {}\n",
                    human_bytes(*size),
                    path.display()
                ));
            }
            text.push_str(&format!(
                "{} module(s), {} in {}\n",
                entries.len(),
                human_bytes(total),
                dir.display()
            ));
            let tuned = cache.tuned().list().map_err(|e| monoscan::Error::Io {
                path: dir.clone(),
                message: e.to_string(),
            })?;
            for (path, shape) in &tuned {
                text.push_str(&format!("tuned  {shape}  {}\n", path.display()));
            }
            text.push_str(&format!("{} autotuned shape(s)\n", tuned.len()));
            write_stdout(&text)
        }
        CacheCommand::Clear => {
            let n = cache.clear_disk()?;
            let t = cache.tuned().clear().map_err(|e| monoscan::Error::Io {
                path: dir.clone(),
                message: e.to_string(),
            })?;
            write_stdout(&format!(
                "removed {n} module(s) and {t} autotuned shape(s) from {}\n",
                dir.display()
            ))
        }
        CacheCommand::Warm(args) => warm(&cache, &args),
    }
}

/// The CUDA description of a built-in operator.
struct Describe;

impl Job for Describe {
    type Output = CudaOp;
    fn call<M, G>(self, m: M, _: G) -> CudaOp
    where
        M: Monoid,
        M::Elem: Serialize,
        G: Fn(u64) -> Option<M::Elem> + Sync,
    {
        m.cuda()
    }
}

/// The operators `--op` and `--dtype` name: every accepted combination.
fn operators(args: &WarmArgs) -> Result<Vec<CudaOp>, CliError> {
    let ops = if args.op.is_empty() {
        Op::value_variants().to_vec()
    } else {
        args.op.clone()
    };
    let mut out = Vec::new();
    for op in ops {
        for &dtype in Dtype::value_variants() {
            if !args.dtype.is_empty() && !args.dtype.contains(&dtype) {
                continue;
            }
            if let Some(cuda) = dispatch(op, dtype, 1, Describe) {
                out.push(cuda);
            }
        }
    }
    if out.is_empty() {
        return Err(CliError::Usage(format!(
            "no operator accepts the element types given (--op {} --dtype {})",
            args.op.iter().map(value_name).collect::<Vec<_>>().join(","),
            args.dtype
                .iter()
                .map(value_name)
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    Ok(out)
}

fn warm(cache: &KernelCache, args: &WarmArgs) -> Result<(), CliError> {
    let ops = operators(args)?;
    let archs = if args.arch.is_empty() {
        match Gpu::new(0) {
            Ok(gpu) => vec![gpu.info().cc],
            Err(e) => {
                return Err(CliError::Usage(format!(
                    "no device to take the architecture from ({e}): give --arch, such as --arch 90"
                )))
            }
        }
    } else {
        args.arch.clone()
    };
    let mut warm = Warm::new(archs);
    if !args.algos.is_empty() {
        warm = warm.algorithms(args.algos.clone());
    }
    warm.tuning = args.tuning.tuning()?;
    let report = cache.warm(&ops, &warm)?;
    let text = if args.quiet {
        report
            .to_string()
            .lines()
            .last()
            .unwrap_or_default()
            .to_string()
    } else {
        report.to_string()
    };
    write_stdout(&format!("{text}\n"))
}
