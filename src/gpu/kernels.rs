//! One operator's kernels on one GPU ([`OpKernels`]): the tile shapes the policy picks for it
//! (once) and the modules loaded for it (once), which the scan and reduce strategies launch.

use super::launch::{self, DevSlice};
use super::module::Loaded;
use super::{Gpu, KernelInfo};
use crate::cache::OpKey;
use crate::codegen::{CombineForm, KernelSet, KernelSpec};
use crate::error::Result;
use crate::monoid::{CudaMap, Monoid};
use crate::tuning::plan::Plan;
use crate::tuning::{Purpose, TileShape, Tuning};
use std::sync::{Arc, Mutex};

/// One operator on one GPU: what a [`super::Scanner`] and compaction run their strategies
/// through.
pub(crate) struct OpKernels<'a, M: Monoid> {
    /// The device.
    pub(crate) gpu: &'a Gpu,
    /// The operator's host side (its identity seeds empty scans and reductions).
    pub(crate) m: &'a M,
    /// The operator's device side (with the input map when `mapped`), interned in the Gpu's
    /// cache.
    pub(crate) op: Arc<OpKey>,
    /// Whether level-0 inputs go through the operator's input map.
    pub(crate) mapped: bool,
    /// Its shapes, combine form and kernel sets on this device.
    pub(crate) plan: Plan,
    instrument: bool,
    loaded: Mutex<Vec<(KernelSpec, Arc<Loaded>)>>,
}

impl<'a, M: Monoid> OpKernels<'a, M> {
    /// `m` on `gpu`, nothing loaded yet.
    pub(crate) fn new(gpu: &'a Gpu, m: &'a M) -> Self {
        let op = gpu.cache.intern(m.cuda());
        OpKernels {
            gpu,
            m,
            plan: gpu.plan(&op),
            op,
            mapped: false,
            instrument: false,
            loaded: Mutex::new(Vec::new()),
        }
    }

    /// The same operator reading its inputs through `map` (nothing loaded yet).
    pub(crate) fn with_input(self, map: CudaMap) -> Self {
        let op = self.gpu.cache.intern(self.op.op().clone().with_input(map));
        OpKernels {
            plan: self.gpu.plan(&op),
            op,
            mapped: true,
            loaded: Mutex::new(Vec::new()),
            ..self
        }
    }

    /// These kernels reading their inputs through `other`'s input map, if it has one: a related
    /// operator (a lifting, the opposite monoid) over the same inputs.
    pub(crate) fn with_input_of<N: Monoid>(self, other: &OpKernels<N>) -> Self {
        match &other.op.op().input {
            Some(map) => self.with_input((**map).clone()),
            None => self,
        }
    }

    /// The same operator with its combine called in `form` (and nothing loaded yet): the
    /// autotuner times a shape in the form the plan does not take.
    pub(crate) fn in_form(&self, form: CombineForm) -> Self {
        let tuning = Tuning {
            combine: Some(form),
            ..self.gpu.tuning.clone()
        };
        OpKernels {
            gpu: self.gpu,
            m: self.m,
            op: self.op.clone(),
            mapped: self.mapped,
            plan: Plan::for_key(&self.op, self.gpu.info.limits, &tuning)
                .deterministic(self.gpu.deterministic),
            instrument: self.instrument,
            loaded: Mutex::new(Vec::new()),
        }
    }

    /// The same operator with instrumented kernels that count every combine.
    pub(crate) fn instrumented(self) -> Self {
        OpKernels {
            instrument: true,
            loaded: Mutex::new(Vec::new()),
            ..self
        }
    }

    /// Whether the kernels are instrumented.
    pub(crate) fn is_instrumented(&self) -> bool {
        self.instrument
    }

    /// The tile shape for `purpose` (chosen once, by the shape policy under the Gpu's tuning).
    pub(crate) fn shape(&self, purpose: Purpose) -> Result<TileShape> {
        self.plan.shape(purpose)
    }

    /// Threads per block of the textbook kernels.
    pub(crate) fn textbook_block(&self) -> Result<u32> {
        self.plan.textbook_block()
    }

    /// The module spec of `set` for these kernels (the plan's combine form, instrumented when
    /// these kernels are).
    pub(crate) fn spec(&self, set: KernelSet) -> KernelSpec {
        KernelSpec {
            instrument: self.instrument,
            ..self.plan.spec(set)
        }
    }

    /// The loaded module of `set`, if this scanner has it.
    pub(crate) fn loaded(&self, spec: KernelSpec) -> Option<Arc<Loaded>> {
        self.lock()
            .iter()
            .find(|(s, _)| *s == spec)
            .map(|(_, l)| l.clone())
    }

    /// Keeps `module` as this scanner's module of `spec`.
    pub(crate) fn keep(&self, spec: KernelSpec, module: Arc<Loaded>) {
        let mut loaded = self.lock();
        if !loaded.iter().any(|(s, _)| *s == spec) {
            loaded.push((spec, module));
        }
    }

    /// The loaded module of `set` (instrumented when these kernels are).
    pub(crate) fn kernels(&self, set: KernelSet) -> Result<Arc<Loaded>> {
        let spec = self.spec(set);
        if let Some(l) = self.loaded(spec) {
            return Ok(l);
        }
        let l = self.gpu.module(&self.op, spec)?;
        self.keep(spec, l.clone());
        Ok(l)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(KernelSpec, Arc<Loaded>)>> {
        self.loaded.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fills `out` with `value` (through any module of this operator).
    pub(crate) fn fill(
        &self,
        set: KernelSet,
        out: DevSlice<M::Elem>,
        value: M::Elem,
    ) -> Result<()> {
        let k = self.kernels(set)?;
        // SAFETY: every module of this operator is rendered for M::Elem.
        unsafe { launch::fill(&self.gpu.stream, &k, out, value) }
    }

    /// The combines counted by instrumented kernels since the last call (waits for the stream).
    pub(crate) fn take_combines(&self) -> Result<u64> {
        let mut total = 0;
        for (_, l) in self.loaded_modules() {
            total += l.take_combine_count(&self.gpu.stream)?;
        }
        Ok(total)
    }

    /// What every loaded kernel uses.
    pub(crate) fn info(&self) -> Result<Vec<KernelInfo>> {
        let mut out = Vec::new();
        for (_, l) in self.loaded_modules() {
            out.extend(l.info()?);
        }
        Ok(out)
    }

    fn loaded_modules(&self) -> Vec<(KernelSpec, Arc<Loaded>)> {
        self.lock().clone()
    }
}
