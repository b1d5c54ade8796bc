//! [`Scanner`]: one operator on one GPU, for device buffers, and (in `mapped.rs`)
//! [`MappedScanner`], the same through an input map. The strategies they run are `scan.rs`,
//! `reduce.rs`, `lanes.rs` and `segments.rs`.

mod batched;
mod mapped;

pub use mapped::MappedScanner;

use super::kernels::OpKernels;
use super::launch;
use super::prepare::{self, PrepareReport};
use super::scan::{self, Mode};
use super::{reduce, Gpu, KernelInfo};
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// Scans and reductions of one operator on one [`Gpu`], over device buffers.
///
/// Every call is queued on the Gpu's stream and returns without waiting. Inputs are any
/// cudarc `CudaSlice` or `CudaView`; outputs any `CudaSlice` or `CudaViewMut`. Kernels are
/// compiled (or loaded from the caches) on first use and kept by the scanner.
///
/// [`Gpu::scanner`] builds the operator's description once ([`Monoid::cuda`]) and finds it
/// among the operators the Gpu's cache has seen (one hash of the description); the scanner's
/// calls then look up only the modules it holds, rendering and hashing nothing. For many
/// calls with one operator, keep the scanner: building the description is the larger part of
/// a new scanner's cost (about 0.5 µs for `Sum<i32>`, 2.4 µs for `Affine<f64>` on a 2-core
/// development machine).
///
/// ```
/// use monoscan::{Algorithm, Gpu, ops::{Affine, AffineMap}};
/// # fn main() -> monoscan::Result<()> {
/// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
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
    k: OpKernels<'a, M>,
    algorithm: Algorithm,
}

impl<'a, M: Monoid> Scanner<'a, M> {
    pub(super) fn new(gpu: &'a Gpu, m: &'a M) -> Self {
        Scanner {
            k: OpKernels::new(gpu, m),
            algorithm: Algorithm::Auto,
        }
    }

    /// Scans and reductions of `map(x)` over inputs of type `In`, the map fused into the
    /// kernels' loads (tiled algorithms only: [`Algorithm::Auto`], [`Algorithm::Hierarchical`],
    /// [`Algorithm::SinglePass`]).
    pub fn mapped<In: crate::element::Element>(
        self,
        map: &crate::map::Map<In, M::Elem>,
    ) -> MappedScanner<'a, M, In> {
        MappedScanner {
            inner: Scanner {
                k: self.k.with_input(map.cuda()),
                algorithm: self.algorithm,
            },
            _in: std::marker::PhantomData,
        }
    }

    /// Uses `algorithm` instead of [`Algorithm::Auto`].
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Uses instrumented kernels that count every combine (see [`Scanner::take_combines`]).
    /// Much slower: for measuring work, never for timing.
    pub fn instrumented(self) -> Self {
        Scanner {
            k: self.k.instrumented(),
            ..self
        }
    }

    /// The combines counted by the instrumented kernels since the last call (waits for the
    /// stream); 0 for an uninstrumented scanner.
    pub fn take_combines(&self) -> Result<u64> {
        if !self.k.is_instrumented() {
            return Ok(0);
        }
        self.k.take_combines()
    }

    /// Registers, local and shared memory, and occupancy of every kernel loaded so far.
    pub fn kernel_info(&self) -> Result<Vec<KernelInfo>> {
        self.k.info()
    }

    /// The operator's CUDA description, as used for code generation.
    pub fn cuda_op(&self) -> &CudaOp {
        self.k.op.op()
    }

    /// Compiles or loads every module the scanner's algorithm may use, for scans and
    /// reductions of any size, so that later calls (and their timings) include no
    /// compilation. Missing modules are compiled in parallel on the host's cores; the report
    /// says where each module came from and how long it took.
    pub fn prepare(&self) -> Result<PrepareReport> {
        prepare::prepare(&self.k, &self.k.plan.sets(self.algorithm)?)
    }

    /// Compiles or loads every module the scans from the end may use, for inputs of any size
    /// (1-D scans in reverse: [`crate::lanes::LaneScan::reverse`] over one row), as
    /// [`Scanner::prepare`] does for the forward scans.
    /// They are modules of the opposite monoid ([`crate::ops::Reversed`]), which the report
    /// names; [`Scanner::prepare`] does not load them. Reverse scans always run the plan of
    /// [`Algorithm::Auto`] (the deterministic one in deterministic mode), whatever the
    /// scanner's algorithm. A shape the autotuner picks later is loaded on the call that picks
    /// it, as it is forwards.
    ///
    /// ```
    /// use monoscan::{Gpu, cache::Origin, ops::Sum};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let op = Sum::<i64>::new();
    /// let report = gpu.scanner(&op).prepare_reverse()?;
    /// println!("{report}");
    /// let again = gpu.scanner(&op).prepare_reverse()?;
    /// assert_eq!(again.count(Origin::Loaded), again.modules.len());
    /// # Ok(())
    /// # }
    /// ```
    pub fn prepare_reverse(&self) -> Result<PrepareReport> {
        prepare::prepare_reverse(&self.k)
    }

    /// Compiles or loads only the modules a scan and a reduction of `n` elements use (device
    /// buffers, which start on 16 bytes): what the first call of that size would compile.
    ///
    /// ```
    /// use monoscan::{Gpu, ops::Sum};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let op = Sum::<i32>::new();
    /// // Small inputs: the one-tile scan and the tiled reduce, not the large-input kernels.
    /// let report = gpu.scanner(&op).prepare_for(1 << 10)?;
    /// assert_eq!(report.modules.len(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn prepare_for(&self, n: u64) -> Result<PrepareReport> {
        prepare::prepare(&self.k, &self.k.plan.sets_for(self.algorithm, n)?)
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
        let stream = self.k.gpu.stream.clone();
        let (d, _g) = launch::output(data, &stream);
        scan::scan(&self.k, self.algorithm, d, d, Mode::Inclusive, None)
    }

    /// Replaces `data` by its exclusive scan from `init`; writes the total to `total[0]`.
    pub fn exclusive_in_place<D, S>(&self, data: &mut D, init: M::Elem, total: &mut S) -> Result<()>
    where
        D: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        check_total(total.len())?;
        let stream = self.k.gpu.stream.clone();
        let (d, _g) = launch::output(data, &stream);
        let (t, _g2) = launch::output(total, &stream);
        scan::scan(
            &self.k,
            self.algorithm,
            d,
            d,
            Mode::Exclusive(init),
            Some(t),
        )
    }

    /// `total[0] = input[0] ⊕ ... ⊕ input[n-1]` (the identity for an empty input).
    pub fn reduce<I, S>(&self, input: &I, total: &mut S) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.reduce_buffers(input, total)
    }

    /// A new device buffer of `n` elements, all `value` (for outputs of host-slice calls),
    /// filled by the module a scan of `n` elements loads, so that it costs no compile of its
    /// own.
    pub fn alloc_filled(&self, n: usize, value: M::Elem) -> Result<CudaSlice<M::Elem>> {
        let set = self.k.plan.scan_set(self.algorithm, n as u64, true)?;
        let k = self.k.kernels(set)?;
        // SAFETY: every module of this scanner is rendered for M::Elem.
        unsafe { launch::alloc_filled(&self.k.gpu.stream, &k, n, value) }
    }

    /// Only the first level of a textbook scan: one inclusive block scan per section, no
    /// carries. Returns `(sections, section length)`; `None` for the tiled algorithms. For
    /// measuring the block algorithms' work in `monoscan lab`.
    pub(crate) fn block_scans_only<I, O>(
        &self,
        input: &I,
        output: &mut O,
    ) -> Result<Option<(u64, u64)>>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
    {
        let stream = self.k.gpu.stream.clone();
        let (inp, _g1) = launch::input(input, &stream);
        let (out, _g2) = launch::output(output, &stream);
        scan::block_scans_only(&self.k, self.algorithm, inp, out)
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
        In: crate::element::Element,
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
        let stream = self.k.gpu.stream.clone();
        let (inp, _g1) = launch::input(input, &stream);
        let (out, _g2) = launch::output(output, &stream);
        match total {
            None => scan::scan(&self.k, self.algorithm, inp, out, mode, None),
            Some(t) => {
                check_total(t.len())?;
                let (tp, _g3) = launch::output(t, &stream);
                scan::scan(&self.k, self.algorithm, inp, out, mode, Some(tp))
            }
        }
    }

    /// Reduces `input` (of the operator's elements, or of a mapped scanner's input type `In`)
    /// into `total[0]`.
    fn reduce_buffers<In, I, S>(&self, input: &I, total: &mut S) -> Result<()>
    where
        In: crate::element::Element,
        I: DevicePtr<In>,
        S: DevicePtrMut<M::Elem>,
    {
        check_total(total.len())?;
        let stream = self.k.gpu.stream.clone();
        let (inp, _g) = launch::input(input, &stream);
        let (t, _g2) = launch::output(total, &stream);
        reduce::reduce(&self.k, self.algorithm, inp, t)
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
