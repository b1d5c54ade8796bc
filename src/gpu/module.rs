//! A compiled module loaded on a device: its functions by [`Entry`], and how each launches.

use crate::codegen::{Entry, KernelSet, KernelSpec, Rendered};
use crate::error::{Error, Result};
use crate::monoid::CudaOp;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaModule, CudaStream};
use std::collections::HashMap;
use std::sync::Arc;

/// What a compiled kernel uses, as the driver reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// The kernel set and entry (`single-pass-b256x32x1-packed64 scan_single_pass`).
    pub name: String,
    /// Registers per thread.
    pub registers: i32,
    /// Local memory (spills, stack) per thread, in bytes.
    pub local_bytes: i32,
    /// Static shared memory per block, in bytes.
    pub shared_bytes: i32,
    /// Dynamic shared memory per block the kernel is launched with, in bytes (the staged
    /// kernels' tile buffers).
    pub dynamic_shared_bytes: u32,
    /// Resident blocks per SM at `threads` threads and `dynamic_shared_bytes` per block.
    pub blocks_per_sm: u32,
    /// Threads per block the kernel is launched with.
    pub threads: u32,
}

/// How an entry with dynamic shared memory (a staged kernel) launches, fixed when its module
/// is loaded.
#[derive(Debug, Clone, Copy)]
struct EntryLaunch {
    /// Dynamic shared memory per block, in bytes.
    dynamic_smem: u32,
    /// Blocks the whole device holds at once (the first wave of a launch), from the driver's
    /// occupancy at the entry's threads and shared memory.
    resident: u32,
}

/// A loaded module of one kernel set: its functions by entry (and `_mapped` variant).
#[derive(Debug)]
pub(crate) struct Loaded {
    spec: KernelSpec,
    /// Whether the operator has an input map, so that mappable entries have `_mapped` variants.
    mapped: bool,
    functions: HashMap<(Entry, bool), CudaFunction>,
    launches: HashMap<(Entry, bool), EntryLaunch>,
    module: Arc<CudaModule>,
}

impl Loaded {
    /// Looks up every entry of `spec` (rendered as `rendered` for `op`) in `module`, and sets
    /// up the staged kernels' dynamic shared memory on a device of `sm_count` SMs.
    pub(crate) fn new(
        module: Arc<CudaModule>,
        rendered: &Rendered,
        op: &CudaOp,
        spec: KernelSpec,
        sm_count: u32,
    ) -> Result<Loaded> {
        let mapped = op.input.is_some();
        let map_in_size = op.input.as_ref().map_or(op.elem_size, |m| m.in_size);
        let mut functions = HashMap::new();
        let mut launches = HashMap::new();
        for &entry in spec.set.entries() {
            for variant in [false, true] {
                if variant && !(mapped && entry.mappable()) {
                    continue;
                }
                let f = module.load_function(&rendered.symbol(entry, variant))?;
                // A mappable entry's unmapped form reads elements, its `_mapped` form the map's
                // inputs; the entries that are not mappable (compaction's) read the inputs.
                let in_size = if entry.mappable() && !variant {
                    op.elem_size
                } else {
                    map_in_size
                };
                let dynamic = spec.set.dynamic_smem(entry, op.elem_size, in_size);
                if dynamic > 0
                    && matches!(
                        spec.set,
                        KernelSet::StagedScan(_)
                            | KernelSet::StagedScanReverse(_)
                            | KernelSet::StagedReduce(_)
                            | KernelSet::ShareScan { .. }
                            | KernelSet::RowStaged { .. }
                            | KernelSet::ColumnScan { .. }
                    )
                {
                    // The staged scans' and the column scan's tiles and the staged
                    // reduce's stages may pass the default 48 KiB: opt in.
                    f.set_attribute(
                        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        i32::try_from(dynamic).unwrap_or(i32::MAX),
                    )?;
                }
                // The row folds' grid is the blocks the device holds at once.
                if dynamic > 0 || entry == Entry::ReduceRows {
                    let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(
                        spec.set.threads(),
                        dynamic,
                        None,
                    )?;
                    launches.insert(
                        (entry, variant),
                        EntryLaunch {
                            dynamic_smem: u32::try_from(dynamic).unwrap_or(u32::MAX),
                            resident: per_sm.saturating_mul(sm_count),
                        },
                    );
                }
                functions.insert((entry, variant), f);
            }
        }
        Ok(Loaded {
            spec,
            mapped,
            functions,
            launches,
            module,
        })
    }

    /// The kernel set.
    pub(crate) fn set(&self) -> KernelSet {
        self.spec.set
    }

    /// The function of `entry` (its `_mapped` variant when `mapped`).
    pub(crate) fn function(&self, entry: Entry, mapped: bool) -> Result<&CudaFunction> {
        let variant = mapped && entry.mappable();
        self.functions.get(&(entry, variant)).ok_or_else(|| {
            Error::invalid(format!(
                "internal: kernel `{}` missing from module {}",
                entry.symbol(variant),
                self.spec.set.name()
            ))
        })
    }

    /// Dynamic shared memory that `entry` launches with, in bytes (0 for all but the staged
    /// kernels).
    pub(crate) fn dynamic_smem(&self, entry: Entry, mapped: bool) -> u32 {
        let variant = mapped && entry.mappable();
        self.launches
            .get(&(entry, variant))
            .map_or(0, |l| l.dynamic_smem)
    }

    /// Blocks of `entry` resident on the whole device at once: recorded for the kernels with
    /// dynamic shared memory and the row folds, 0 for the others.
    pub(crate) fn resident(&self, entry: Entry, mapped: bool) -> u32 {
        let variant = mapped && entry.mappable();
        self.launches
            .get(&(entry, variant))
            .map_or(0, |l| l.resident)
    }

    /// Reads and clears the instrumented builds' combine counter (`ms_combine_count`).
    pub(crate) fn take_combine_count(&self, stream: &Arc<CudaStream>) -> Result<u64> {
        let mut global = self.module.get_global("ms_combine_count", stream)?;
        let mut bytes = [0u8; 8];
        stream.memcpy_dtoh(&global, &mut bytes)?;
        stream.memcpy_htod(&[0u8; 8], &mut global)?;
        stream.synchronize()?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// Registers, local and shared memory, and occupancy of every entry and `_mapped`
    /// variant.
    pub(crate) fn info(&self) -> Result<Vec<KernelInfo>> {
        let threads = self.spec.set.threads();
        let mut out = Vec::new();
        let variants = self.spec.set.entries().iter().flat_map(|&e| {
            [(e, false), (e, true)]
                .into_iter()
                .filter(|&(e, v)| !v || (self.mapped && e.mappable()))
        });
        for (entry, variant) in variants {
            let f = self.function(entry, variant)?;
            let dynamic = self.dynamic_smem(entry, variant);
            out.push(KernelInfo {
                name: format!("{} {}", self.spec.set.name(), entry.symbol(variant)),
                registers: f.num_regs()?,
                local_bytes: f.local_size_bytes()?,
                shared_bytes: f.shared_size_bytes()?,
                dynamic_shared_bytes: dynamic,
                blocks_per_sm: f.occupancy_max_active_blocks_per_multiprocessor(
                    threads,
                    dynamic as usize,
                    None,
                )?,
                threads,
            });
        }
        Ok(out)
    }
}
