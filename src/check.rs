//! One call that checks an operator as far as the machine allows: the monoid laws on the CPU,
//! every kernel set compiled for an architecture with NVRTC (which also checks the layout of
//! every element type), and, where there is a GPU, the device's identity and `combine`
//! against the host's through [`crate::verify`].
//!
//! Without a GPU this still catches a wrong identity (the laws), a CUDA form that does not
//! compile, and an element whose CUDA declaration differs from the Rust type; with one, it
//! also catches a CUDA form that computes something else.
//!
//! ```
//! use monoscan::ops::Sum;
//! use proptest::prelude::*;
//!
//! let report = monoscan::check(&Sum::<i64>::new(), any::<i64>(), 90);
//! assert!(report.passed(), "{report}");
//! println!("{report}"); // what ran, what was skipped (no NVRTC, no GPU) and why
//! ```

use crate::algorithm::Algorithm;
use crate::approx::{ApproxEq, Tolerance};
use crate::codegen::{render, KernelSet, KernelSpec};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::jit::{self, Target};
use crate::laws::{Checker, LawFailure};
use crate::monoid::{CudaOp, Monoid};
use crate::tuning::plan::Plan;
use crate::tuning::{policy, DeviceLimits, Purpose, Tuning};
use crate::verify::{self, Mismatch};
use proptest::strategy::Strategy;
use std::fmt;

/// What compiling the kernel sets found.
#[derive(Debug)]
pub enum Kernels {
    /// Every set compiled.
    Compiled {
        /// For what.
        target: Target,
        /// The sets, by name.
        sets: Vec<String>,
    },
    /// A set failed (the first one).
    Failed {
        /// Which set.
        set: String,
        /// NVRTC's error, a layout mismatch, or why the operator has no device form.
        error: Error,
    },
    /// Not compiled: NVRTC is missing.
    Skipped(String),
}

/// What the device check found.
#[derive(Debug)]
pub enum Device<T> {
    /// The identities and `pairs` combines agreed exactly.
    Agreed {
        /// How many pairs were combined.
        pairs: usize,
    },
    /// The first disagreement.
    Mismatch(Mismatch<T>),
    /// The check could not run to the end.
    Failed(Error),
    /// Not run: no GPU.
    Skipped(String),
}

/// Everything [`check`] found.
#[derive(Debug)]
pub struct Report<T> {
    /// The laws that fail (empty: all hold).
    pub laws: Vec<LawFailure>,
    /// The kernel sets.
    pub kernels: Kernels,
    /// Host against device.
    pub device: Device<T>,
}

impl<T> Report<T> {
    /// Nothing that ran failed (skipped parts do not count).
    pub fn passed(&self) -> bool {
        self.laws.is_empty()
            && !matches!(self.kernels, Kernels::Failed { .. })
            && !matches!(self.device, Device::Mismatch(_) | Device::Failed(_))
    }

    /// Every part ran.
    pub fn complete(&self) -> bool {
        !matches!(self.kernels, Kernels::Skipped(_)) && !matches!(self.device, Device::Skipped(_))
    }
}

impl<T: fmt::Debug> fmt::Display for Report<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.laws.is_empty() {
            writeln!(f, "laws: all hold")?;
        } else {
            for l in &self.laws {
                writeln!(f, "laws: {l}")?;
            }
        }
        match &self.kernels {
            Kernels::Compiled { target, sets } => writeln!(
                f,
                "kernels: {} sets compile for {} ({})",
                sets.len(),
                target.arch(),
                sets.join(", ")
            )?,
            Kernels::Failed { set, error } => writeln!(f, "kernels: `{set}` fails: {error}")?,
            Kernels::Skipped(why) => writeln!(f, "kernels: skipped ({why})")?,
        }
        match &self.device {
            Device::Agreed { pairs } => {
                write!(
                    f,
                    "device: identity and {pairs} combines agree with the host"
                )
            }
            Device::Mismatch(m) => write!(f, "device: {m}"),
            Device::Failed(e) => write!(f, "device: failed: {e}"),
            Device::Skipped(why) => write!(f, "device: skipped ({why})"),
        }
    }
}

/// A configured check: how the laws compare, for which architecture the kernels compile, how
/// many pairs the device combines, and on which GPU.
pub struct Check<'a, M: Monoid> {
    op: &'a M,
    checker: Checker<'a, M>,
    arch: u32,
    pairs: usize,
    gpu: Option<&'a Gpu>,
}

impl<'a, M: Monoid> Check<'a, M> {
    /// Exact laws (256 cases each), kernels for sm_90, 1000 pairs on device 0 if there is one.
    pub fn new(op: &'a M) -> Self {
        Check {
            op,
            checker: Checker::new(op),
            arch: 90,
            pairs: 1000,
            gpu: None,
        }
    }

    /// Compares the laws' two sides under `tol` (float operators regroup with rounding).
    pub fn approx(mut self, tol: Tolerance) -> Self
    where
        M::Elem: ApproxEq,
    {
        self.checker = self.checker.approx(tol);
        self
    }

    /// The law checker to use.
    pub fn laws(mut self, checker: Checker<'a, M>) -> Self {
        self.checker = checker;
        self
    }

    /// The compute capability to compile for (`90` for sm_90).
    pub fn arch(mut self, cc: u32) -> Self {
        self.arch = cc;
        self
    }

    /// How many random pairs the device combines.
    pub fn pairs(mut self, pairs: usize) -> Self {
        self.pairs = pairs;
        self
    }

    /// Checks on this GPU rather than opening device 0.
    pub fn gpu(mut self, gpu: &'a Gpu) -> Self {
        self.gpu = Some(gpu);
        self
    }

    /// Runs the check on elements drawn from `elems`.
    pub fn run<S>(&self, elems: S) -> Report<M::Elem>
    where
        S: Strategy<Value = M::Elem> + Clone,
    {
        let laws = self.checker.check_all(elems.clone());
        let kernels = compile_all(&self.op.cuda(), self.arch);
        let device = match self.gpu {
            Some(gpu) => on_device(gpu, self.op, elems, self.pairs),
            None => match Gpu::new(0) {
                Ok(gpu) => on_device(&gpu, self.op, elems, self.pairs),
                Err(e) if e.is_unavailable() => Device::Skipped(format!("no GPU: {e}")),
                Err(e) => Device::Failed(e),
            },
        };
        Report {
            laws,
            kernels,
            device,
        }
    }
}

/// Checks `op` on elements drawn from `elems`: the laws with exact equality, every kernel set
/// compiled for compute capability `arch` (`90` for sm_90), and, on device 0 if there is one,
/// the device's identity and combine against the host's. See [`Check`] to configure it.
pub fn check<M, S>(op: &M, elems: S, arch: u32) -> Report<M::Elem>
where
    M: Monoid,
    S: Strategy<Value = M::Elem> + Clone,
{
    Check::new(op).arch(arch).run(elems)
}

fn on_device<M, S>(gpu: &Gpu, op: &M, elems: S, pairs: usize) -> Device<M::Elem>
where
    M: Monoid,
    S: Strategy<Value = M::Elem>,
{
    match verify::verify(gpu, op, elems, pairs) {
        Ok(None) => Device::Agreed { pairs },
        Ok(Some(m)) => Device::Mismatch(m),
        Err(e) => Device::Failed(e),
    }
}

/// Every kernel set the library generates for `op` on compute capability `cc`, in the shapes
/// the default tuning picks: the textbook, tiled, single-pass and one-tile families, the
/// staged scan (with and without the TMA) where the element size and the architecture allow
/// it, the staged reduce where the policy takes it, the share scan where its steps fit,
/// every module the default path loads at some input size ([`Plan::sets`]: the small-input
/// tiles of the staged scan and the staged reduce among them), compaction's sets for 4-byte
/// counts with an input map, and the check set.
pub fn kernel_sets(op: &CudaOp, cc: u32) -> Result<Vec<KernelSet>> {
    let size = op.elem_size;
    let limits = DeviceLimits::for_arch(cc);
    let tuning = Tuning::default();
    let no_tma = Tuning {
        tma: false,
        ..Tuning::default()
    };
    let shape = |purpose, t: &Tuning| policy::tile_shape(size, &limits, t, purpose);
    let block = policy::textbook_block(size, &limits)?;
    let tiles = shape(Purpose::Tiles, &tuning)?;
    let mut sets = vec![
        KernelSet::TreeReduce { block },
        KernelSet::KoggeStone { block },
        KernelSet::BrentKung { block },
        KernelSet::TiledReduce(tiles),
        KernelSet::ReduceThenScan(tiles),
        KernelSet::SinglePass(shape(Purpose::SinglePass, &tuning)?),
        KernelSet::OneTile(shape(Purpose::OneTile, &tuning)?),
        KernelSet::Check,
    ];
    let in_size = op.input.as_ref().map_or(size, |m| m.in_size);
    let cost = crate::tuning::cost::CombineCost::of(op);
    for t in [&tuning, &no_tma] {
        let mut staged = policy::staged_scan_shape(size, &cost, &limits, t)?;
        if staged.staged {
            staged.chains = policy::chains(&cost, t, &staged, size);
        }
        let set = KernelSet::StagedScan(staged);
        if staged.staged && in_size == size && !sets.contains(&set) {
            sets.push(set);
        }
        let swizzled = shape(Purpose::StagedReduce, t)?;
        if swizzled.staged {
            let mut shares = swizzled;
            shares.chains = policy::chains(&cost, t, &shares, size);
            let set = KernelSet::ShareScan {
                shape: shares,
                stages: policy::share_scan_stages(t),
                reverse: false,
            };
            if shares.shares_fit(size) && in_size == size && !sets.contains(&set) {
                sets.push(set);
            }
        }
        for bytes in [0, u64::MAX] {
            let mut reduce = policy::reduce_shape(size, &cost, bytes, &limits, t)?;
            if reduce.staged && in_size == size && policy::reduce_staged(size, &cost) {
                reduce.chains = policy::chains(&cost, t, &reduce, size);
                let set = KernelSet::StagedReduce(reduce);
                if !sets.contains(&set) {
                    sets.push(set);
                }
            }
        }
        for set in Plan::new(op, limits, t).sets(Algorithm::Auto)? {
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
    }
    if op.input.is_some() && size == 4 {
        sets.push(KernelSet::Select(policy::select_shape(in_size, &limits)?));
        for t in [&tuning, &no_tma] {
            if let Some(s) = policy::select_staged_shape(in_size, &limits, t)? {
                let set = KernelSet::SelectStaged(s);
                if !sets.contains(&set) {
                    sets.push(set);
                }
            }
        }
    }
    Ok(sets)
}

fn compile_all(op: &CudaOp, cc: u32) -> Kernels {
    let target = match jit::nvrtc().and_then(|info| jit::target_for(&info, cc)) {
        Ok(t) => t,
        Err(e) if e.is_unavailable() => return Kernels::Skipped(format!("no NVRTC: {e}")),
        Err(error) => {
            return Kernels::Failed {
                set: "(none)".into(),
                error,
            }
        }
    };
    let sets = match kernel_sets(op, cc) {
        Ok(sets) => sets,
        Err(error) => {
            return Kernels::Failed {
                set: "(shapes)".into(),
                error,
            }
        }
    };
    let mut names = Vec::new();
    for set in sets {
        let name = set.name();
        let built = render(op, &KernelSpec::new(set))
            .and_then(|rendered| jit::compile(&rendered, &name, target));
        if let Err(error) = built {
            return Kernels::Failed { set: name, error };
        }
        names.push(name);
    }
    Kernels::Compiled {
        target,
        sets: names,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::count_true;
    use crate::ops::{Affine, MatMulMod, Sum};
    use crate::tuning::policy::SMALL_INPUT_BYTES;

    /// `check` compiles every module a call of the default path loads, at every input size:
    /// the small-input tiles of the staged scan and the staged reduce, the one-block scans, the
    /// large inputs' layouts.
    #[test]
    fn kernel_sets_cover_every_size_of_the_default_path() {
        let ops = [
            Sum::<u8>::new().cuda(),
            Sum::<u16>::new().cuda(),
            Sum::<i32>::new().cuda(),
            Sum::<f64>::new().cuda(),
            Affine::<f64>::new().cuda(),
            MatMulMod::new(1_000_000_007).unwrap().cuda(),
            Sum::<u32>::new().cuda().with_input(count_true().cuda()),
        ];
        // Input sizes in bytes: none, a few elements, the small-input tiles up to their bound,
        // the large tiles, and inputs large enough for the large-input layouts.
        let bytes = [
            0,
            1,
            31,
            4 << 10,
            64 << 10,
            SMALL_INPUT_BYTES,
            32 << 20,
            1 << 30,
        ];
        for op in &ops {
            for cc in [75, 80, 90] {
                let sets = kernel_sets(op, cc).unwrap();
                let plan = Plan::new(op, DeviceLimits::for_arch(cc), &Tuning::default());
                let size = op.elem_size as u64;
                for n in bytes.map(|b| b / size).into_iter().chain([u64::MAX]) {
                    for set in plan.sets_for(Algorithm::Auto, n).unwrap() {
                        assert!(
                            sets.contains(&set),
                            "{} on sm_{cc}, {n} elements: {} not checked",
                            op.name,
                            set.name()
                        );
                    }
                }
            }
        }
    }
}
