//! GPU execution: a device, its stream, its kernel modules and its scratch memory.
//!
//! [`Gpu`] owns a cudarc context and stream for one device. [`Gpu::scanner`] gives a
//! [`Scanner`] for one operator, which scans and reduces device buffers (stream-ordered, no
//! synchronisation); [`Gpu`] also implements [`crate::Backend`] for host slices.

mod bandwidth;
mod compact;
mod device;
mod host;
mod launch;
mod reduce;
mod scan;
mod scanner;
mod scratch;
mod timing;

pub use device::{device_count, driver_present, DeviceInfo};
pub use scanner::{MappedScanner, Scanner};
pub use timing::Timing;

use crate::cache::KernelCache;
use crate::codegen::{KernelSet, KernelSpec};
use crate::error::{Error, Result};
use crate::jit::{self, Target};
use crate::monoid::CudaOp;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;
use scratch::Scratch;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A loaded module: its functions by entry name (without prefix).
#[derive(Debug)]
pub(crate) struct Loaded {
    functions: HashMap<&'static str, CudaFunction>,
    /// How each entry with dynamic shared memory launches (entries without it are absent).
    launches: HashMap<&'static str, EntryLaunch>,
    pub(crate) module: Arc<CudaModule>,
}

/// How an entry with dynamic shared memory (a staged kernel) launches, fixed when its module
/// is loaded.
#[derive(Debug, Clone, Copy)]
struct EntryLaunch {
    /// Dynamic shared memory per block, in bytes ([`dynamic_smem`]).
    dynamic_smem: u32,
    /// Blocks the whole device holds at once (the first wave of a launch), from the driver's
    /// occupancy at the entry's threads and shared memory.
    resident: u32,
}

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

impl Loaded {
    /// Reads and clears the instrumented builds' combine counter (`ms_combine_count`).
    pub(crate) fn take_combine_count(&self, stream: &Arc<CudaStream>) -> Result<u64> {
        let mut global = self.module.get_global("ms_combine_count", stream)?;
        let mut bytes = [0u8; 8];
        stream.memcpy_dtoh(&global, &mut bytes)?;
        stream.memcpy_htod(&[0u8; 8], &mut global)?;
        stream.synchronize()?;
        Ok(u64::from_le_bytes(bytes))
    }

    pub(crate) fn function(&self, entry: &str) -> Result<&CudaFunction> {
        self.functions.get(entry).ok_or_else(|| {
            Error::invalid(format!("internal: kernel `{entry}` missing from module"))
        })
    }

    /// Dynamic shared memory that `entry` launches with, in bytes (0 for all but the staged
    /// kernels).
    pub(crate) fn dynamic_smem(&self, entry: &str) -> u32 {
        self.launches.get(entry).map_or(0, |l| l.dynamic_smem)
    }

    /// Blocks of `entry` resident on the whole device at once (0 for kernels without dynamic
    /// shared memory, which do not prefetch).
    pub(crate) fn resident(&self, entry: &str) -> u32 {
        self.launches.get(entry).map_or(0, |l| l.resident)
    }
}

/// Threads per block of the kernels of `set`.
pub(crate) fn set_threads(set: KernelSet) -> u32 {
    match set {
        KernelSet::TreeReduce { block }
        | KernelSet::KoggeStone { block }
        | KernelSet::BrentKung { block } => block,
        KernelSet::TiledReduce(s)
        | KernelSet::ReduceThenScan(s)
        | KernelSet::SinglePass(s)
        | KernelSet::OneTile(s)
        | KernelSet::Select(s) => s.block,
        KernelSet::Check => 256,
    }
}

/// Dynamic shared memory that `entry` of `set` launches with for `op`: the staged kernels'
/// tiles (and the TMA form's block state); 0 for the others.
fn dynamic_smem(set: KernelSet, entry: &str, op: &CudaOp) -> usize {
    let in_size = op.input.as_ref().map_or(op.elem_size, |m| m.in_size);
    match set {
        KernelSet::SinglePass(s) if entry.starts_with("scan_staged") => {
            s.staged_smem_bytes(op.elem_size)
        }
        KernelSet::Select(s) if entry == "select_staged" => s.tile_bytes(in_size),
        _ => 0,
    }
}

/// One CUDA device, ready to scan.
///
/// ```
/// use monoscan::{Backend, Gpu, ops::Sum};
/// # fn main() -> monoscan::Result<()> {
/// let gpu = match Gpu::new(0) {
///     Ok(gpu) => gpu,
///     Err(e) if e.is_unavailable() => { println!("skipped: {e}"); return Ok(()); }
///     Err(e) => return Err(e),
/// };
/// let xs: Vec<u32> = (1..=2048).collect();
/// assert_eq!(gpu.reduce(&Sum::new(), &xs)?, 2_098_176);
/// assert_eq!(gpu.inclusive_scan(&Sum::new(), &xs)?[..4], [1, 3, 6, 10]);
/// # Ok(())
/// # }
/// ```
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    target: Target,
    cache: Arc<KernelCache>,
    modules: Mutex<HashMap<(CudaOp, KernelSpec), Arc<Loaded>>>,
    scratch: Mutex<Scratch>,
    /// The floors' and the timer's kernels (`templates/baseline.cu`), loaded on first use.
    baseline: Mutex<Option<Arc<CudaModule>>>,
    deterministic: bool,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("info", &self.info)
            .field("target", &self.target)
            .field("deterministic", &self.deterministic)
            .finish()
    }
}

impl Gpu {
    /// Opens device `ordinal` with the process-wide kernel cache
    /// ([`crate::cache::CacheConfig::from_env`]). Fails with [`Error::NoDriver`],
    /// [`Error::NoDevice`] or [`Error::NoNvrtc`] when the stack is missing.
    pub fn new(ordinal: usize) -> Result<Gpu> {
        Gpu::with_cache(ordinal, KernelCache::global())
    }

    /// Opens device `ordinal` with the given kernel cache. Work is queued on the context's
    /// default stream: one stream keeps every call in order (scratch memory is reused across
    /// calls) and keeps cudarc out of its multi-stream event tracking, whose extra driver calls
    /// would add microseconds to every small scan.
    pub fn with_cache(ordinal: usize, cache: Arc<KernelCache>) -> Result<Gpu> {
        let (ctx, _) = device::open(ordinal)?;
        let stream = ctx.default_stream();
        Gpu::from_stream(stream, cache)
    }

    /// Works on a stream the caller owns (so that scans order with the caller's own work).
    pub fn from_stream(stream: Arc<CudaStream>, cache: Arc<KernelCache>) -> Result<Gpu> {
        let ctx = stream.context().clone();
        let info = device::info(&ctx)?;
        let target = jit::target_for(&jit::nvrtc()?, info.cc)?;
        Ok(Gpu {
            ctx,
            stream,
            info,
            target,
            cache,
            modules: Mutex::new(HashMap::new()),
            scratch: Mutex::new(Scratch::default()),
            baseline: Mutex::new(None),
            deterministic: false,
        })
    }

    /// In deterministic mode, `Algorithm::Auto` scans use the reduce-then-scan path, whose
    /// float results are bitwise identical from run to run (the default single-pass scan's are
    /// not).
    pub fn deterministic(mut self, on: bool) -> Self {
        self.deterministic = on;
        self
    }

    /// Whether deterministic mode is on.
    pub fn is_deterministic(&self) -> bool {
        self.deterministic
    }

    /// The device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// What kernels are compiled to.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The stream every operation is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The kernel cache.
    pub fn cache(&self) -> &Arc<KernelCache> {
        &self.cache
    }

    /// Waits for everything queued so far.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize()?;
        Ok(())
    }

    /// A scanner for `m` with [`crate::Algorithm::Auto`].
    pub fn scanner<'a, M: crate::Monoid>(&'a self, m: &'a M) -> Scanner<'a, M> {
        Scanner::new(self, m)
    }

    /// Loads a compiled image (CUBIN, or PTX text, as this Gpu's target makes) as a module.
    fn load_image(&self, image: Vec<u8>) -> Result<Arc<CudaModule>> {
        let ptx = match self.target {
            Target::Cubin(_) => Ptx::from_binary(image),
            Target::Ptx(_) => Ptx::from_src(String::from_utf8_lossy(&image).into_owned()),
        };
        Ok(self.ctx.load_module(ptx)?)
    }

    /// The module `spec` of `op`, loaded on this device (memory, disk, or compiled).
    pub(crate) fn module(&self, op: &CudaOp, spec: KernelSpec) -> Result<Arc<Loaded>> {
        let key = (op.clone(), spec);
        if let Some(l) = self.lock_modules().get(&key) {
            return Ok(l.clone());
        }
        let compiled = self.cache.get(op, spec, self.target)?;
        let module = self.load_image(compiled.compiled.image.clone())?;
        let mut functions = HashMap::new();
        let mut launches = HashMap::new();
        for entry in spec.set.entries(op.input.is_some()) {
            let f = module.load_function(&compiled.rendered.entry(entry))?;
            let dynamic = dynamic_smem(spec.set, entry, op);
            if dynamic > 0 {
                if matches!(spec.set, KernelSet::SinglePass(_)) {
                    // The staged buffers are dynamic shared memory beyond the default 48 KiB.
                    f.set_attribute(
                        cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        i32::try_from(dynamic).unwrap_or(i32::MAX),
                    )?;
                }
                let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(
                    set_threads(spec.set),
                    dynamic,
                    None,
                )?;
                launches.insert(
                    entry,
                    EntryLaunch {
                        dynamic_smem: u32::try_from(dynamic).unwrap_or(u32::MAX),
                        resident: per_sm * self.info.sm_count,
                    },
                );
            }
            functions.insert(entry, f);
        }
        let loaded = Arc::new(Loaded {
            functions,
            launches,
            module,
        });
        self.lock_modules().insert(key, loaded.clone());
        Ok(loaded)
    }

    fn lock_modules(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(CudaOp, KernelSpec), Arc<Loaded>>> {
        self.modules.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn lock_scratch(&self) -> std::sync::MutexGuard<'_, Scratch> {
        self.scratch.lock().unwrap_or_else(|p| p.into_inner())
    }
}
