//! `monoscan emit`: print the CUDA source monoscan generates for an operator and algorithm.

use super::dispatch::{dispatch, Dtype, Job, Op};
use super::{value_name, write_stdout, CliError};
use monoscan::codegen::{render, KernelSet, KernelSpec};
use monoscan::ops::{Reversed, Segmented};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{DeviceLimits, Purpose, TileShape, Tuning};
use monoscan::Monoid;
use serde::Serialize;

/// Which kernels to print.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// Kogge-Stone block scans and the hierarchical add-back.
    KoggeStone,
    /// Brent-Kung block scans and the hierarchical add-back.
    BrentKung,
    /// Reduce-then-scan over register tiles.
    Hierarchical,
    /// Reduce-then-scan from the end, what reverse 1-D scans run in deterministic mode: its
    /// operator is the opposite monoid of `--op` (the levels of tile totals run through the
    /// forward module of that operator).
    HierarchicalReverse,
    /// The single-pass scan with decoupled look-back, one block per tile (small inputs,
    /// unaligned buffers, elements that cannot be staged).
    SinglePass,
    /// The staged single-pass scan: tiles copied into shared memory with cp.async (large
    /// aligned inputs on sm_80 and newer).
    Staged,
    /// The staged scan from the end, what reverse 1-D scans of such inputs run: its operator
    /// is the opposite monoid of `--op`.
    StagedReverse,
    /// The single-pass scan from the end, what reverse 1-D scans run where the staged scan
    /// does not apply (small inputs, unaligned buffers, elements that cannot be staged): its
    /// operator is the opposite monoid of `--op`.
    SinglePassReverse,
    /// Batched scans of contiguous rows (`monoscan::lanes`): the staged row kernel where the
    /// architecture and the element size allow it, else the register one, as a launch over
    /// several rows runs it. Their operator is the segmented lifting of `--op`.
    Rows,
    /// The same, with prefixes running from the end of each row (the lifting of the opposite
    /// monoid).
    RowsReverse,
    /// Batched scans of rows given by CSR offsets (`Scanner::scan_segments`): the staged row
    /// kernel's `segment_staged` where it applies, else the register kernel's `segment_scan`.
    Segments,
    /// The same, with prefixes running from the end of each row.
    SegmentsReverse,
    /// The textbook shared-memory tree reduction.
    ReduceTree,
    /// The tiled reduce.
    Reduce,
    /// The staged reduce: tiles copied into shared memory through several stages (sm_80 and
    /// newer; what reductions of large or odd-sized elements and expensive combines run).
    StagedReduce,
    /// The share scan: each resident thread folds one contiguous share, then scans it again
    /// from its carry (tensor copies, sm_90 and newer; what scans of combines that cost more
    /// than their bytes run where the autotuner picks it).
    ShareScan,
    /// The share scan from the end, what reverse 1-D scans run where the forward scan runs
    /// in the share scan: its operator is the opposite monoid of `--op`.
    ShareScanReverse,
}

/// Arguments of `monoscan emit`.
#[derive(clap::Args, Debug)]
pub struct EmitArgs {
    /// The operator.
    #[arg(long, value_enum, default_value = "sum")]
    pub op: Op,
    /// The element type (default: the operator's own default).
    #[arg(long, value_enum)]
    pub dtype: Option<Dtype>,
    /// Which kernels.
    #[arg(long = "algo", value_enum, default_value = "single-pass")]
    pub algo: Kernels,
    /// Compute capability the tile shapes are chosen for (90 for sm_90; 50 to 199).
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u32).range(50..=199))]
    pub arch: u32,
    /// Print the instrumented variant that counts combines (what `monoscan lab` runs).
    #[arg(long)]
    pub instrument: bool,
}

struct Emit<'a>(&'a EmitArgs);

impl Job for Emit<'_> {
    type Output = Result<String, CliError>;
    fn call<M, G>(self, m: M, _elem: G) -> Self::Output
    where
        M: Monoid,
        M::Elem: Serialize,
        G: Fn(u64) -> Option<M::Elem> + Sync,
    {
        match self.0.algo {
            Kernels::Rows => return rows(Segmented::new(m), self.0, false, false),
            Kernels::RowsReverse => {
                return rows(Segmented::new(Reversed::new(m)), self.0, true, false)
            }
            Kernels::Segments => return rows(Segmented::new(m), self.0, false, true),
            Kernels::SegmentsReverse => {
                return rows(Segmented::new(Reversed::new(m)), self.0, true, true)
            }
            Kernels::StagedReverse => return reverse(m, self.0, Purpose::Staged),
            Kernels::SinglePassReverse => return reverse(m, self.0, Purpose::SinglePass),
            Kernels::HierarchicalReverse => return reverse(m, self.0, Purpose::Tiles),
            Kernels::ShareScanReverse => return reverse(m, self.0, Purpose::StagedReduce),
            _ => {}
        }
        let op = m.cuda();
        let size = op.elem_size;
        let arch = self.0.arch;
        // The architecture's published limits: code generated without a device, in the
        // shapes and combine form a device of that architecture gets.
        let plan = Plan::new(&op, DeviceLimits::for_arch(arch), &Tuning::default());
        let set = match self.0.algo {
            Kernels::KoggeStone => KernelSet::KoggeStone {
                block: plan.textbook_block()?,
            },
            Kernels::BrentKung => KernelSet::BrentKung {
                block: plan.textbook_block()?,
            },
            Kernels::ReduceTree => KernelSet::TreeReduce {
                block: plan.textbook_block()?,
            },
            Kernels::Hierarchical => KernelSet::ReduceThenScan(plan.shape(Purpose::Tiles)?),
            Kernels::Reduce => KernelSet::TiledReduce(plan.shape(Purpose::Tiles)?),
            Kernels::SinglePass => KernelSet::SinglePass(plan.shape(Purpose::SinglePass)?),
            Kernels::StagedReduce => {
                let shape = plan.shape(Purpose::StagedReduce)?;
                if !shape.staged {
                    return Err(CliError::Usage(format!(
                        "elements of {size} bytes cannot use the staged reduce on sm_{arch} (it needs sm_80 or newer and elements of 1 to {} bytes)",
                        monoscan::tuning::policy::STAGED_MAX_ELEM
                    )));
                }
                KernelSet::StagedReduce(shape)
            }
            Kernels::Staged => KernelSet::StagedScan(staged_shape(&plan, size, arch)?),
            Kernels::ShareScan => share_set(&plan, size, arch)?,
            Kernels::Rows
            | Kernels::RowsReverse
            | Kernels::Segments
            | Kernels::SegmentsReverse
            | Kernels::StagedReverse
            | Kernels::SinglePassReverse
            | Kernels::HierarchicalReverse
            | Kernels::ShareScanReverse => {
                unreachable!("rendered above")
            }
        };
        let spec = KernelSpec {
            instrument: self.0.instrument,
            ..plan.spec(set)
        };
        Ok(render(&op, &spec)?.source)
    }
}

/// The staged scan's shape for elements of `size` bytes on sm_`arch`: a usage error where the
/// staged scan does not apply.
fn staged_shape(plan: &Plan, size: usize, arch: u32) -> Result<TileShape, CliError> {
    let shape = plan.shape(Purpose::Staged)?;
    if !shape.staged {
        return Err(CliError::Usage(format!(
            "elements of {size} bytes cannot use the staged scan on sm_{arch} (it needs sm_80 or newer and elements of 1 to {} bytes)",
            monoscan::tuning::policy::STAGED_MAX_ELEM
        )));
    }
    Ok(shape)
}

/// The share scan's set for elements of `size` bytes on sm_`arch`: a usage error where the
/// share scan does not apply.
fn share_set(plan: &Plan, size: usize, arch: u32) -> Result<KernelSet, CliError> {
    plan.share_scan_set()?.ok_or_else(|| {
        CliError::Usage(format!(
            "elements of {size} bytes cannot use the share scan on sm_{arch} (it needs tensor copies, sm_90 or newer, and steps of such elements that fit shared memory)"
        ))
    })
}

/// A scan from the end for `m`: the staged one for `Purpose::Staged`, the reduce-then-scan
/// for `Purpose::Tiles`, the share scan for `Purpose::StagedReduce` (in the staged reduce's
/// shape), else the register-tile single-pass one; in the forward scan's shape, rendered for
/// the opposite monoid.
fn reverse<M: Monoid>(m: M, args: &EmitArgs, purpose: Purpose) -> Result<String, CliError> {
    let limits = DeviceLimits::for_arch(args.arch);
    let forward = Plan::new(&m.cuda(), limits, &Tuning::default());
    let size = std::mem::size_of::<M::Elem>();
    let set = match purpose {
        Purpose::Staged => KernelSet::StagedScan(staged_shape(&forward, size, args.arch)?),
        Purpose::Tiles => KernelSet::ReduceThenScan(forward.shape(Purpose::Tiles)?),
        Purpose::StagedReduce => share_set(&forward, size, args.arch)?,
        _ => KernelSet::SinglePass(forward.shape(Purpose::SinglePass)?),
    };
    let set = set.reversed().ok_or_else(|| {
        CliError::Runtime(format!("internal: {} has no form from the end", set.name()))
    })?;
    let op = Reversed::new(m).cuda();
    let plan = Plan::new(&op, limits, &Tuning::default());
    let spec = KernelSpec {
        instrument: args.instrument,
        ..plan.spec(set)
    };
    Ok(render(&op, &spec)?.source)
}

/// The row kernel of `lifted` (the segmented lifting of an operator) that a device of the
/// architecture runs: the staged one where it applies, else the register one; for rows given
/// by offsets when `segments`.
fn rows<S: Monoid>(
    lifted: S,
    args: &EmitArgs,
    reverse: bool,
    segments: bool,
) -> Result<String, CliError> {
    let op = lifted.cuda();
    let value_size = op
        .layout
        .field("value")
        .map(|f| f.ty.size)
        .ok_or_else(|| CliError::Usage("internal: a lifting without values".to_string()))?;
    let plan = Plan::new(&op, DeviceLimits::for_arch(args.arch), &Tuning::default());
    // A batch of rows: one row (a 1-D reverse scan) takes the 1-D staged scan's tile instead.
    let shape = if segments {
        plan.segment_staged_shape(value_size, 2)?
    } else {
        plan.row_staged_shape(value_size, 2)?
    };
    let set = match shape {
        Some(shape) => KernelSet::RowStaged {
            shape,
            reverse,
            value_size,
            segments,
        },
        None => KernelSet::RowScan {
            shape: plan.shape(Purpose::SinglePass)?,
            reverse,
            segments,
        },
    };
    let spec = KernelSpec {
        instrument: args.instrument,
        ..plan.spec(set)
    };
    Ok(render(&op, &spec)?.source)
}

/// Runs `monoscan emit`.
pub fn emit(args: &EmitArgs) -> Result<(), CliError> {
    let dtype = args.dtype.unwrap_or(args.op.default_dtype());
    let source = dispatch(args.op, dtype, 1, Emit(args)).ok_or_else(|| {
        CliError::Usage(format!(
            "--op {} does not support --dtype {}",
            value_name(&args.op),
            value_name(&dtype)
        ))
    })??;
    write_stdout(&source)
}
