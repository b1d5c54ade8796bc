//! GPU execution: [`Gpu`], a device with its stream, kernel modules, tuning and scratch memory.
//!
//! [`Gpu`] is defined, with every one of its methods, in this file. [`Gpu::scanner`] gives a
//! [`Scanner`] (`scanner.rs`) for one operator, which scans and reduces device buffers
//! (stream-ordered, no synchronisation) through the strategies of `scan.rs` and `reduce.rs`,
//! which launch the operator's kernels (`kernels.rs`: shapes and loaded modules, `module.rs`:
//! one loaded module); compaction's kernels are driven from `compact.rs`; `host.rs` implements
//! [`crate::Backend`] for host slices; `launch/` holds every kernel launch, `scratch.rs` the
//! scratch memory, `device.rs` device discovery.

mod autotune;
mod compact;
mod device;
mod host;
mod kernels;
mod lanes;
pub(crate) mod launch;
mod module;
mod prepare;
pub(crate) mod rate;
mod reduce;
mod row_fold;
mod scan;
mod scanner;
mod scratch;
mod segments;
mod shares;

pub use device::{device_count, driver_present, DeviceInfo};
pub use module::KernelInfo;
pub use prepare::{PrepareReport, Prepared};
pub use scanner::{MappedScanner, Scanner};

use crate::cache::{Fetched, KernelCache, OpKey, WordMap};
use crate::codegen::{self, KernelSpec};
use crate::element::Element;
use crate::error::Result;
use crate::jit::{self, Target};
use crate::map::Map;
use crate::monoid::Monoid;
use crate::tuning::plan::Plan;
use crate::tuning::Tuning;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    DeviceRepr, ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;
use module::Loaded;
use scratch::Scratch;
use std::sync::{Arc, Mutex, MutexGuard};

/// One CUDA device, ready to scan.
///
/// ```
/// use monoscan::{Backend, Gpu, ops::Sum};
/// # fn main() -> monoscan::Result<()> {
/// let gpu = match Gpu::new(0) {
///     Ok(gpu) => gpu,
/// #   Err(e) if std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() == Ok("1") => return Err(e),
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
    tuning: Tuning,
    /// Loaded modules, by the operator's identity in `cache` and the module.
    modules: Mutex<WordMap<(u64, KernelSpec), Arc<Loaded>>>,
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
            .field("tuning", &self.tuning)
            .field("deterministic", &self.deterministic)
            .finish()
    }
}

impl Gpu {
    /// Opens device `ordinal` with the process-wide kernel cache
    /// ([`crate::cache::CacheConfig::from_env`]) and the default [`Tuning`]. Fails with
    /// [`crate::Error::NoDriver`], [`crate::Error::NoDevice`] or [`crate::Error::NoNvrtc`]
    /// when the stack is missing.
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
            tuning: Tuning::default(),
            modules: Mutex::new(WordMap::default()),
            scratch: Mutex::new(Scratch::default()),
            baseline: Mutex::new(None),
            deterministic: false,
        })
    }

    /// Uses `tuning` for every later call (after [`Tuning::validate`]; shapes are checked
    /// against the device when a call first needs them).
    ///
    /// ```
    /// use monoscan::{Backend, Gpu, ops::Sum, tuning::{Pace, Tuning}};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let gpu = gpu.with_tuning(Tuning { tma: false, pace: Pace::Off, ..Tuning::default() })?;
    /// let xs: Vec<u32> = (1..=100_000).collect();
    /// assert_eq!(gpu.reduce(&Sum::new(), &xs)?, 5_000_050_000u64 as u32);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_tuning(mut self, tuning: Tuning) -> Result<Self> {
        tuning.validate()?;
        self.tuning = tuning;
        Ok(self)
    }

    /// The tuning every call uses.
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// In deterministic mode, `Algorithm::Auto` scans use the reduce-then-scan path, whose
    /// float results are bitwise identical from run to run (the default single-pass scan's are
    /// not); reverse 1-D scans run its form from the end, as reproducible. Of the batched
    /// scans ([`crate::lanes`]) only those that run as one 1-D scan take it (one lane, or
    /// columns of at most 16 bytes in all, forwards or in reverse); the others (several rows,
    /// wider columns) run single-pass kernels whose float results can differ in their last
    /// bits from run to run.
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
    pub fn scanner<'a, M: Monoid>(&'a self, m: &'a M) -> Scanner<'a, M> {
        Scanner::new(self, m)
    }

    /// Keeps the elements of `input` that `keep` maps to nonzero (any nonzero value keeps), in
    /// order; returns them and how many there are.
    ///
    /// One fused pass ([`Gpu::compact_into`]) into a buffer of `input.len()` elements, the
    /// count read back (one synchronisation), then the kept elements copied into a buffer of
    /// exactly that length. Use [`Gpu::compact_into`] to keep the input-sized buffer and skip
    /// the copy.
    ///
    /// ```
    /// use monoscan::{Gpu, Map};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let even = Map::new("even", "(x % 2 == 0) ? 1u : 0u", |x: &i32| u32::from(x % 2 == 0));
    /// let xs = gpu.stream().clone_htod(&[1, 2, 3, 4, 6, 7])?;
    /// let (kept, count) = gpu.compact(&xs, &even)?;
    /// assert_eq!(count, 3);
    /// assert_eq!(gpu.stream().clone_dtoh(&kept)?, [2, 4, 6]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compact<T: Element, I: DevicePtr<T>>(
        &self,
        input: &I,
        keep: &Map<T, u32>,
    ) -> Result<(CudaSlice<T>, u64)> {
        let mut room = launch::alloc_for_writes::<T>(&self.stream, input.len())?;
        let count = self.compact_into(input, keep, &mut room)? as usize;
        let mut out = launch::alloc_for_writes::<T>(&self.stream, count)?;
        if count > 0 {
            self.stream.memcpy_dtod(&room.slice(..count), &mut out)?;
        }
        Ok((out, count as u64))
    }

    /// Stream compaction into `output`, which must have room for every element of `input`:
    /// writes the elements that `keep` maps to nonzero, in order, to the front of `output`
    /// and returns how many (the count is read back: one synchronisation). The rest of
    /// `output` is left as it was.
    ///
    /// One kernel reads each element once and writes each kept element once: the single-pass
    /// scan of the keep counts with the scatter fused into it (each warp writes its kept
    /// elements as one contiguous run).
    ///
    /// ```
    /// use monoscan::{Gpu, Map};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let positive = Map::new("positive", "x > 0.0f ? 1u : 0u", |x: &f32| u32::from(*x > 0.0));
    /// let xs = gpu.stream().clone_htod(&[0.5f32, -1.0, 2.0, 0.0])?;
    /// let mut out = gpu.stream().clone_htod(&[0.0f32; 4])?;
    /// let count = gpu.compact_into(&xs, &positive, &mut out)?;
    /// assert_eq!(count, 2);
    /// assert_eq!(gpu.stream().clone_dtoh(&out)?[..2], [0.5, 2.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compact_into<T: Element, I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &self,
        input: &I,
        keep: &Map<T, u32>,
        output: &mut O,
    ) -> Result<u64> {
        // Written by the last tile, or zeroed for an empty input.
        let mut count = launch::alloc_for_writes::<u32>(&self.stream, 1)?;
        self.compact_into_counted(input, keep, output, &mut count)?;
        Ok(u64::from(self.stream.clone_dtoh(&count)?[0]))
    }

    /// [`Gpu::compact_into`] without the synchronisation: queues the compaction on this GPU's
    /// stream and leaves the number of kept elements in `count[0]` on the device, as CUB's
    /// `DeviceSelect` does, for work that reads it on the GPU.
    ///
    /// ```
    /// use monoscan::{Gpu, Map};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let even = Map::new("even", "(x & 1) == 0 ? 1u : 0u", |x: &i32| u32::from(x & 1 == 0));
    /// let xs = gpu.stream().clone_htod(&[1, 2, 3, 4, 6])?;
    /// let mut out = gpu.stream().alloc_zeros::<i32>(5)?;
    /// let mut count = gpu.stream().alloc_zeros::<u32>(1)?;
    /// gpu.compact_into_counted(&xs, &even, &mut out, &mut count)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&count)?, [3]);
    /// assert_eq!(gpu.stream().clone_dtoh(&out)?[..3], [2, 4, 6]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compact_into_counted<T, I, O, C>(
        &self,
        input: &I,
        keep: &Map<T, u32>,
        output: &mut O,
        count: &mut C,
    ) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        C: DevicePtrMut<u32>,
    {
        compact::select(self, input, keep, output, count)
    }

    /// Allocation offsets: the exclusive scan of per-item `requests` (sizes; zeros allowed),
    /// widened to 64 bits inside the kernel, and the total (read back: one synchronisation).
    /// Item `i` owns `offsets[i] .. offsets[i] + requests[i]` of a buffer of `total` elements.
    pub fn allocation_offsets<I: DevicePtr<u32>>(
        &self,
        requests: &I,
    ) -> Result<(CudaSlice<u64>, u64)> {
        compact::allocation_offsets(self, requests)
    }

    /// A copy of `xs` on the device (an out-of-memory error names the device's free memory).
    pub(crate) fn upload<T: DeviceRepr>(&self, xs: &[T]) -> Result<CudaSlice<T>> {
        let bytes = std::mem::size_of_val(xs);
        self.stream
            .clone_htod(xs)
            .map_err(|e| device::alloc_error(&self.ctx, bytes, e))
    }

    /// `n` zeroed elements on the device (an out-of-memory error names the device's free
    /// memory).
    pub(crate) fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, n: usize) -> Result<CudaSlice<T>> {
        let bytes = n.saturating_mul(std::mem::size_of::<T>());
        self.stream
            .alloc_zeros(n)
            .map_err(|e| device::alloc_error(&self.ctx, bytes, e))
    }

    /// `[a[0] ⊕ b[0], ..., a[n-1] ⊕ b[n-1], identity]` computed by the generated CUDA (for
    /// [`crate::verify`]).
    pub(crate) fn combine_on_device<M: Monoid>(
        &self,
        m: &M,
        a: &[M::Elem],
        b: &[M::Elem],
    ) -> Result<Vec<M::Elem>> {
        let k = kernels::OpKernels::new(self, m).kernels(crate::codegen::KernelSet::Check)?;
        let da = self.upload(a)?;
        let db = self.upload(b)?;
        let mut init = a.to_vec();
        init.push(m.identity());
        let mut out = self.upload(&init)?;
        {
            let s = &self.stream;
            let (pa, _g1) = launch::input(&da, s);
            let (pb, _g2) = launch::input(&db, s);
            let (po, _g3) = launch::output(&mut out, s);
            // SAFETY: `k` is the check module of `m`'s operator, whose elements are M::Elem.
            unsafe { launch::combine_pairs(s, &k, pa, pb, po) }?;
        }
        Ok(self.stream.clone_dtoh(&out)?)
    }

    /// Loads a compiled image (CUBIN, or PTX text, as this Gpu's target makes) as a module.
    fn load_image(&self, image: Vec<u8>) -> Result<Arc<CudaModule>> {
        let ptx = match self.target {
            Target::Cubin(_) => Ptx::from_binary(image),
            Target::Ptx(_) => Ptx::from_src(String::from_utf8_lossy(&image).into_owned()),
        };
        Ok(self.ctx.load_module(ptx)?)
    }

    /// The kernel plan of the interned operator `op` on this device under this Gpu's tuning,
    /// with what autotuning stored for it (the staged scan's shape, the share scan's verdict).
    pub(crate) fn plan(&self, op: &OpKey) -> Plan {
        let plan =
            Plan::for_key(op, self.info.limits, &self.tuning).deterministic(self.deterministic);
        if crate::tuning::autotune::applies(&self.tuning) {
            if let Some(record) =
                self.cache
                    .tuned()
                    .get(&self.device_key(), op.op(), &self.info.limits)
            {
                plan.install_record(&record);
            }
        }
        plan
    }

    /// This device as autotuning records name it ([`crate::cache::device_key`]); with tensor
    /// copies turned off on a device that has them (`Tuning::tma`), followed by `-cp-async`:
    /// the candidates there are other shapes, and a shape tuned with tensor copies would
    /// bring them back.
    pub(crate) fn device_key(&self) -> String {
        let key = crate::cache::device_key(&self.info.name, self.info.cc, self.info.sm_count);
        if self.tuning.tma || self.info.cc < 90 {
            key
        } else {
            format!("{key}-cp-async")
        }
    }

    /// The module `spec` of `op` if this Gpu has loaded it.
    pub(crate) fn loaded_module(&self, op: &OpKey, spec: KernelSpec) -> Option<Arc<Loaded>> {
        self.lock_modules().get(&(op.id(), spec)).cloned()
    }

    /// The module `spec` of `op`, loaded on this device (memory, disk, or compiled).
    pub(crate) fn module(&self, op: &Arc<OpKey>, spec: KernelSpec) -> Result<Arc<Loaded>> {
        if let Some(l) = self.loaded_module(op, spec) {
            return Ok(l);
        }
        let fetched = self.cache.fetch(op, spec, self.target)?;
        self.load(&fetched)
    }

    /// Loads a fetched module on this device (once: a module another thread loaded first is
    /// the one kept).
    pub(crate) fn load(&self, fetched: &Fetched) -> Result<Arc<Loaded>> {
        let (op, spec) = (&fetched.op, fetched.spec);
        let module = self.load_image(fetched.module.compiled.image.clone())?;
        let loaded = Arc::new(Loaded::new(
            module,
            &fetched.module.rendered,
            op.op(),
            spec,
            self.info.sm_count,
        )?);
        Ok(self
            .lock_modules()
            .entry((op.id(), spec))
            .or_insert(loaded)
            .clone())
    }

    /// Entry `name` of `templates/baseline.cu` (the read pass, the timer's hold), compiled
    /// and loaded once per Gpu.
    pub(crate) fn baseline_function(&self, name: &str) -> Result<CudaFunction> {
        let mut slot = self.baseline.lock().unwrap_or_else(|e| e.into_inner());
        let module = match slot.as_ref() {
            Some(m) => m.clone(),
            None => {
                let compiled = jit::compile(&codegen::baseline(), "baseline kernels", self.target)?;
                let m = self.load_image(compiled.image)?;
                *slot = Some(m.clone());
                m
            }
        };
        Ok(module.load_function(name)?)
    }

    fn lock_modules(&self) -> MutexGuard<'_, WordMap<(u64, KernelSpec), Arc<Loaded>>> {
        self.modules.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn lock_scratch(&self) -> MutexGuard<'_, Scratch> {
        self.scratch.lock().unwrap_or_else(|p| p.into_inner())
    }
}
