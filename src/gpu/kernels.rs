//! One operator's kernels on one GPU ([`OpKernels`]): the tile shapes the policy picks for it
//! (once) and the modules loaded for it (once), which the scan and reduce strategies launch.

use super::launch::{self, DevSlice};
use super::module::Loaded;
use super::{Gpu, KernelInfo};
use crate::codegen::{KernelSet, KernelSpec};
use crate::error::Result;
use crate::monoid::{CudaMap, CudaOp, Monoid};
use crate::tuning::{policy, Purpose, TileShape};
use std::sync::{Arc, Mutex, OnceLock};

/// One operator on one GPU: what a [`super::Scanner`] and compaction run their strategies
/// through.
pub(crate) struct OpKernels<'a, M: Monoid> {
    /// The device.
    pub(crate) gpu: &'a Gpu,
    /// The operator's host side (its identity seeds empty scans and reductions).
    pub(crate) m: &'a M,
    /// The operator's device side, with the input map when `mapped`.
    pub(crate) op: CudaOp,
    /// Whether level-0 inputs go through the operator's input map.
    pub(crate) mapped: bool,
    instrument: bool,
    loaded: Mutex<Vec<(KernelSpec, Arc<Loaded>)>>,
    shapes: [OnceLock<TileShape>; 4],
}

impl<'a, M: Monoid> OpKernels<'a, M> {
    /// `m` on `gpu`, nothing loaded yet.
    pub(crate) fn new(gpu: &'a Gpu, m: &'a M) -> Self {
        OpKernels {
            gpu,
            m,
            op: m.cuda(),
            mapped: false,
            instrument: false,
            loaded: Mutex::new(Vec::new()),
            shapes: Default::default(),
        }
    }

    /// The same operator reading its inputs through `map` (nothing loaded yet).
    pub(crate) fn with_input(self, map: CudaMap) -> Self {
        OpKernels {
            op: self.op.with_input(map),
            mapped: true,
            loaded: Mutex::new(Vec::new()),
            shapes: Default::default(),
            ..self
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
        let slot = &self.shapes[purpose as usize];
        if let Some(s) = slot.get() {
            return Ok(*s);
        }
        let limits = &self.gpu.info.limits;
        let mut s = policy::tile_shape(self.op.elem_size, limits, &self.gpu.tuning, purpose)?;
        // The staged scan maps in place: a fused map must keep the element size.
        if self
            .op
            .input
            .as_ref()
            .is_some_and(|m| m.in_size != self.op.elem_size)
        {
            s.staged = false;
            s.tma = false;
        }
        Ok(*slot.get_or_init(|| s))
    }

    /// Threads per block of the textbook kernels.
    pub(crate) fn textbook_block(&self) -> Result<u32> {
        policy::textbook_block(self.op.elem_size, &self.gpu.info.limits)
    }

    /// The loaded module of `set` (instrumented when these kernels are).
    pub(crate) fn kernels(&self, set: KernelSet) -> Result<Arc<Loaded>> {
        let spec = KernelSpec {
            set,
            instrument: self.instrument,
        };
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, l)) = loaded.iter().find(|(s, _)| *s == spec) {
            return Ok(l.clone());
        }
        let l = self.gpu.module(&self.op, spec)?;
        loaded.push((spec, l.clone()));
        Ok(l)
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
        self.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
