//! One operator's combine-rate kernels on one GPU ([`RateKernel`]), in the combine form the
//! operator's scans use, each with the grid that fills the device.

use super::launch::{self, DevSlice};
use super::module::Loaded;
use super::Gpu;
use crate::codegen::{CombineForm, Entry, KernelSet};
use crate::error::{Error, Result};
use crate::monoid::Monoid;
use cudarc::driver::DeviceRepr;
use std::marker::PhantomData;
use std::sync::Arc;

/// The loaded combine-rate kernel of an operator whose elements are `T`.
pub(crate) struct RateKernel<T> {
    module: Arc<Loaded>,
    /// Blocks of the grid: SMs x the blocks resident on one.
    pub(crate) blocks: u32,
    /// Threads per block.
    pub(crate) block: u32,
    /// Chains per thread.
    pub(crate) chains: u32,
    /// How the kernel calls the combine: the operator's plan's form, as its scans call it.
    pub(crate) form: CombineForm,
    _t: PhantomData<fn() -> T>,
}

impl Gpu {
    /// `m`'s combine-rate kernels on this device, one per shape of
    /// [`KernelSet::combine_rate_shapes`] that can run (at least one block resident per SM),
    /// compiled (or fetched from the cache) in the combine form of `m`'s plan, each with a grid
    /// of every SM times the blocks the driver's occupancy calculator lets reside on one.
    pub(crate) fn rate_kernels<M: Monoid>(&self, m: &M) -> Result<Vec<RateKernel<M::Elem>>> {
        let op = self.cache.intern(m.cuda());
        let plan = self.plan(&op);
        let mut kernels = Vec::new();
        for set in KernelSet::combine_rate_shapes(op.op().elem_size) {
            let KernelSet::CombineRate { block, chains } = set else {
                return Err(Error::invalid("internal: not a combine-rate set"));
            };
            let spec = plan.spec(set);
            let module = self.module(&op, spec)?;
            let per_sm = module
                .function(Entry::CombineRate, false)?
                .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)?;
            if per_sm == 0 {
                continue;
            }
            kernels.push(RateKernel {
                module,
                blocks: per_sm.saturating_mul(self.info.sm_count.max(1)),
                block,
                chains,
                form: spec.combine,
                _t: PhantomData,
            });
        }
        if kernels.is_empty() {
            return Err(Error::invalid(format!(
                "no shape of the combine-rate kernel of `{}` fits an SM",
                op.op().name
            )));
        }
        Ok(kernels)
    }
}

impl<T: DeviceRepr> RateKernel<T> {
    /// Threads of the grid.
    pub(crate) fn threads(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.block)
    }

    /// Combines one launch of `rounds` rounds performs: every thread's chains, then their fold.
    pub(crate) fn combines(&self, rounds: u64) -> u64 {
        let chains = u64::from(self.chains);
        self.threads()
            .saturating_mul(rounds.saturating_mul(chains).saturating_add(chains - 1))
    }

    /// Queues one launch of `rounds` rounds on `gpu`'s stream, seeded from `samples`, writing
    /// one element per thread to `out`.
    pub(crate) fn launch(
        &self,
        gpu: &Gpu,
        samples: DevSlice<T>,
        out: DevSlice<T>,
        rounds: u64,
    ) -> Result<()> {
        // SAFETY: the module is the combine-rate set rendered for the operator whose elements
        // are T (`rate_kernel` of a Monoid with Elem = T).
        unsafe {
            launch::combine_rate(&gpu.stream, &self.module, self.blocks, samples, out, rounds)
        }
    }
}
