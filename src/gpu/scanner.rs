//! [`Scanner`]: one operator on one GPU, for device buffers.

use super::{launch, Gpu, Loaded};
use crate::algorithm::Algorithm;
use crate::codegen::{textbook_block, tile_shape, KernelSet, KernelSpec, Purpose, TileShape};
use crate::error::{Error, Result};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use std::sync::{Arc, Mutex, OnceLock};

/// How a scan treats each position.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mode<T> {
    /// `y[i] = x0 ⊕ ... ⊕ xi`.
    Inclusive,
    /// `y[i] = init ⊕ x0 ⊕ ... ⊕ xi` (a carry from earlier data; tiled algorithms only).
    InclusiveFrom(T),
    /// `y[i] = init ⊕ x0 ⊕ ... ⊕ x(i-1)`.
    Exclusive(T),
}

/// Scans and reductions of one operator on one [`Gpu`], over device buffers.
///
/// Every call is queued on the Gpu's stream and returns without waiting. Inputs are any
/// cudarc `CudaSlice` or `CudaView`; outputs any `CudaSlice` or `CudaViewMut`. Kernels are
/// compiled (or loaded from the caches) on first use and kept by the scanner.
///
/// ```
/// use monoscan::{Algorithm, Gpu, ops::{Affine, AffineMap}};
/// # fn main() -> monoscan::Result<()> {
/// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() => return Ok(()), Err(e) => return Err(e) };
/// let op = Affine::<f64>::new();
/// let maps: Vec<_> = (0..1000).map(|i| AffineMap::new(0.5, i as f64)).collect();
/// let input = gpu.stream().clone_htod(&maps)?;
/// let mut output = gpu.stream().clone_htod(&maps)?;
/// gpu.scanner(&op).algorithm(Algorithm::BrentKung).inclusive(&input, &mut output)?;
/// let ys = gpu.stream().clone_dtoh(&output)?;
/// assert_eq!(ys[1].apply(0.0), 0.5 * 0.0 + 1.0);
/// # Ok(())
/// # }
/// ```
pub struct Scanner<'a, M: Monoid> {
    pub(crate) gpu: &'a Gpu,
    pub(crate) m: &'a M,
    pub(crate) op: CudaOp,
    pub(crate) algorithm: Algorithm,
    pub(crate) instrument: bool,
    /// Whether level-0 inputs go through the operator's input map (see [`MappedScanner`]).
    pub(crate) mapped: bool,
    loaded: Mutex<Vec<(KernelSpec, Arc<Loaded>)>>,
    shapes: [OnceLock<TileShape>; 4],
}

impl<'a, M: Monoid> Scanner<'a, M> {
    pub(crate) fn new(gpu: &'a Gpu, m: &'a M) -> Self {
        Scanner {
            gpu,
            m,
            op: m.cuda(),
            algorithm: Algorithm::Auto,
            instrument: false,
            mapped: false,
            loaded: Mutex::new(Vec::new()),
            shapes: [
                OnceLock::new(),
                OnceLock::new(),
                OnceLock::new(),
                OnceLock::new(),
            ],
        }
    }

    /// Scans and reductions of `map(x)` over inputs of type `In`, the map fused into the
    /// kernels' loads (tiled algorithms only: [`Algorithm::Auto`], [`Algorithm::Hierarchical`],
    /// [`Algorithm::SinglePass`]).
    pub fn mapped<In: crate::Element>(
        self,
        map: &crate::Map<In, M::Elem>,
    ) -> MappedScanner<'a, M, In> {
        let mut inner = self;
        inner.op = inner.op.clone().with_input(map.cuda());
        inner.mapped = true;
        inner.loaded = Mutex::new(Vec::new());
        MappedScanner {
            inner,
            _in: std::marker::PhantomData,
        }
    }

    /// The name of a level-0 entry point: its `_mapped` variant when inputs are mapped.
    pub(crate) fn entry0(&self, entry: &'static str) -> &'static str {
        if !self.mapped {
            return entry;
        }
        match entry {
            "reduce_tiles" => "reduce_tiles_mapped",
            "tile_totals" => "tile_totals_mapped",
            "tile_scan" => "tile_scan_mapped",
            "scan_single_pass" => "scan_single_pass_mapped",
            "scan_staged" => "scan_staged_mapped",
            other => other,
        }
    }

    /// Uses `algorithm` instead of [`Algorithm::Auto`].
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Uses instrumented kernels that count every combine (see [`Scanner::take_combines`]).
    /// Much slower: for measuring work, never for timing.
    pub fn instrumented(mut self) -> Self {
        self.instrument = true;
        self
    }

    /// The combines counted by the instrumented kernels since the last call (waits for the
    /// stream); 0 for an uninstrumented scanner.
    pub fn take_combines(&self) -> Result<u64> {
        if !self.instrument {
            return Ok(0);
        }
        let loaded = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut total = 0;
        for (_, l) in loaded {
            total += l.take_combine_count(&self.gpu.stream)?;
        }
        Ok(total)
    }

    /// Registers, local and shared memory, and occupancy of every kernel loaded so far.
    pub fn kernel_info(&self) -> Result<Vec<super::KernelInfo>> {
        let loaded = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut out = Vec::new();
        for (spec, l) in loaded {
            let threads = super::set_threads(spec.set);
            for entry in spec.set.entries(self.op.input.is_some()) {
                let f = l.function(entry)?;
                // The staged kernels' tiles are dynamic shared memory, sized as they launch.
                let dynamic = l.dynamic_smem(entry);
                out.push(super::KernelInfo {
                    name: format!("{} {entry}", spec.set.name()),
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
        }
        Ok(out)
    }

    /// The operator's CUDA description, as used for code generation.
    pub fn cuda_op(&self) -> &CudaOp {
        &self.op
    }

    /// Compiles or loads every module `algorithm` needs now, so that later calls (and their
    /// timings) include no compilation.
    pub fn prepare(&self) -> Result<()> {
        let tb = self.textbook_block()?;
        let tiles = self.shape(Purpose::Tiles)?;
        let sp = self.shape(Purpose::SinglePass)?;
        let sets = match self.algorithm {
            Algorithm::KoggeStone => vec![
                KernelSet::KoggeStone { block: tb },
                KernelSet::TreeReduce { block: tb },
            ],
            Algorithm::BrentKung => vec![
                KernelSet::BrentKung { block: tb },
                KernelSet::TreeReduce { block: tb },
            ],
            Algorithm::Hierarchical => vec![
                KernelSet::ReduceThenScan(tiles),
                KernelSet::TiledReduce(tiles),
            ],
            Algorithm::Auto if self.gpu.deterministic => vec![
                KernelSet::ReduceThenScan(tiles),
                KernelSet::TiledReduce(tiles),
            ],
            Algorithm::SinglePass | Algorithm::Auto => {
                let staged = self.shape(Purpose::Staged)?;
                let mut sets = vec![
                    KernelSet::SinglePass(sp),
                    KernelSet::TiledReduce(tiles),
                    KernelSet::OneTile(self.shape(Purpose::OneTile)?),
                ];
                if staged.staged {
                    sets.push(KernelSet::SinglePass(staged));
                }
                sets
            }
        };
        for set in sets {
            self.kernels(set)?;
        }
        Ok(())
    }

    /// The tile shape for `purpose` (chosen once per scanner).
    pub(crate) fn shape(&self, purpose: Purpose) -> Result<TileShape> {
        let slot = &self.shapes[purpose as usize];
        if let Some(s) = slot.get() {
            return Ok(*s);
        }
        let mut s = tile_shape(self.op.elem_size, self.gpu.info.cc, purpose)?;
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

    pub(crate) fn textbook_block(&self) -> Result<u32> {
        textbook_block(self.op.elem_size)
    }

    /// The loaded module of `set` (instrumented when the scanner is).
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

    /// `output[i] = input[0] ⊕ ... ⊕ input[i]` for every `i < input.len()`.
    pub fn inclusive<I, O>(&self, input: &I, output: &mut O) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
    {
        self.scan_buffers(input, output, Mode::Inclusive, None::<&mut O>)
    }

    /// `output[i] = carry ⊕ input[0] ⊕ ... ⊕ input[i]`: an inclusive scan that continues from
    /// the total of earlier data (chunked and multi-GPU scans); writes `carry ⊕ everything` to
    /// `total[0]`. Tiled algorithms only ([`Algorithm::Auto`], [`Algorithm::Hierarchical`],
    /// [`Algorithm::SinglePass`]).
    pub fn inclusive_from<I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        carry: M::Elem,
        total: &mut S,
    ) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.scan_buffers(input, output, Mode::InclusiveFrom(carry), Some(total))
    }

    /// `output[i] = init ⊕ input[0] ⊕ ... ⊕ input[i-1]` for every `i < input.len()`.
    pub fn exclusive<I, O>(&self, input: &I, output: &mut O, init: M::Elem) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
    {
        self.scan_buffers(input, output, Mode::Exclusive(init), None::<&mut O>)
    }

    /// [`Scanner::exclusive`], and `total[0] = init ⊕ input[0] ⊕ ... ⊕ input[n-1]`: the size of
    /// the buffer when the scan computes allocation offsets.
    pub fn exclusive_with_total<I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        init: M::Elem,
        total: &mut S,
    ) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.scan_buffers(input, output, Mode::Exclusive(init), Some(total))
    }

    /// Replaces `data` by its inclusive scan.
    pub fn inclusive_in_place<D: DevicePtrMut<M::Elem>>(&self, data: &mut D) -> Result<()> {
        let n = data.len() as u64;
        let stream = self.gpu.stream.clone();
        let (ptr, _g) = data.device_ptr_mut(&stream);
        self.scan_raw(ptr, ptr, n, Mode::Inclusive, 0)
    }

    /// Replaces `data` by its exclusive scan from `init`; writes the total to `total[0]`.
    pub fn exclusive_in_place<D, S>(&self, data: &mut D, init: M::Elem, total: &mut S) -> Result<()>
    where
        D: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        check_total(total.len())?;
        let n = data.len() as u64;
        let stream = self.gpu.stream.clone();
        let (ptr, _g) = data.device_ptr_mut(&stream);
        let (t, _g2) = total.device_ptr_mut(&stream);
        self.scan_raw(ptr, ptr, n, Mode::Exclusive(init), t)
    }

    /// `total[0] = input[0] ⊕ ... ⊕ input[n-1]` (the identity for an empty input).
    pub fn reduce<I, S>(&self, input: &I, total: &mut S) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        check_total(total.len())?;
        let n = input.len() as u64;
        let stream = self.gpu.stream.clone();
        let (inp, _g) = input.device_ptr(&stream);
        let (t, _g2) = total.device_ptr_mut(&stream);
        self.reduce_raw(inp, n, t)
    }

    /// Checks lengths and scans `input` (of the operator's elements, or of a mapped scanner's
    /// input type `In`) into `output`.
    fn scan_buffers<In, I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        mode: Mode<M::Elem>,
        total: Option<&mut S>,
    ) -> Result<()>
    where
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        if output.len() < input.len() {
            return Err(Error::invalid(format!(
                "output holds {} elements, the input {}",
                output.len(),
                input.len()
            )));
        }
        let n = input.len() as u64;
        let stream = self.gpu.stream.clone();
        let (inp, _g1) = input.device_ptr(&stream);
        let (out, _g2) = output.device_ptr_mut(&stream);
        match total {
            None => self.scan_raw(inp, out, n, mode, 0),
            Some(t) => {
                check_total(t.len())?;
                let (tp, _g3) = t.device_ptr_mut(&stream);
                self.scan_raw(inp, out, n, mode, tp)
            }
        }
    }

    /// A new device buffer of `n` elements, all `value` (for outputs of host-slice calls).
    pub fn alloc_filled(
        &self,
        n: usize,
        value: M::Elem,
    ) -> Result<cudarc::driver::CudaSlice<M::Elem>> {
        let set = KernelSet::TiledReduce(self.shape(Purpose::Tiles)?);
        let k = self.kernels(set)?;
        launch::alloc_filled(&self.gpu.stream, k.function("fill")?, n, value)
    }

    /// Fills `count` elements at `ptr` with `value` (through any module of this operator).
    pub(crate) fn fill(&self, set: KernelSet, ptr: u64, count: u64, value: M::Elem) -> Result<()> {
        let k = self.kernels(set)?;
        launch::fill(&self.gpu.stream, k.function("fill")?, ptr, count, value)
    }
}

fn check_total(len: usize) -> Result<()> {
    if len == 0 {
        return Err(Error::invalid(
            "the total buffer must hold at least one element",
        ));
    }
    Ok(())
}

/// A [`Scanner`] whose inputs are `In` values, mapped to the operator's elements inside the
/// kernels (see [`Scanner::mapped`] and [`crate::Map`]).
pub struct MappedScanner<'a, M: Monoid, In> {
    pub(crate) inner: Scanner<'a, M>,
    _in: std::marker::PhantomData<fn(In)>,
}

impl<M: Monoid, In: crate::Element> MappedScanner<'_, M, In> {
    /// Uses `algorithm` (a tiled one) instead of [`Algorithm::Auto`].
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.inner.algorithm = algorithm;
        self
    }

    /// Compiles or loads the kernels now.
    pub fn prepare(&self) -> Result<()> {
        self.inner.prepare()
    }

    /// `output[i] = map(input[0]) ⊕ ... ⊕ map(input[i])`.
    pub fn inclusive<I, O>(&self, input: &I, output: &mut O) -> Result<()>
    where
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
    {
        self.scan(input, output, Mode::Inclusive, None::<&mut O>)
    }

    /// `output[i] = init ⊕ map(input[0]) ⊕ ... ⊕ map(input[i-1])`, and the total in `total[0]`.
    pub fn exclusive_with_total<I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        init: M::Elem,
        total: &mut S,
    ) -> Result<()>
    where
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.scan(input, output, Mode::Exclusive(init), Some(total))
    }

    /// `total[0] = map(input[0]) ⊕ ... ⊕ map(input[n-1])`.
    pub fn reduce<I, S>(&self, input: &I, total: &mut S) -> Result<()>
    where
        I: DevicePtr<In>,
        S: DevicePtrMut<M::Elem>,
    {
        check_total(total.len())?;
        let stream = self.inner.gpu.stream.clone();
        let (inp, _g) = input.device_ptr(&stream);
        let (t, _g2) = total.device_ptr_mut(&stream);
        self.inner.reduce_raw(inp, input.len() as u64, t)
    }

    fn scan<I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        mode: Mode<M::Elem>,
        total: Option<&mut S>,
    ) -> Result<()>
    where
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.inner
            .scan_buffers::<In, I, O, S>(input, output, mode, total)
    }
}
