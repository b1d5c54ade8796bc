//! [`MappedScanner`]: a [`Scanner`] whose inputs pass through an input map in the kernels.

use super::{Mode, Scanner};
use crate::algorithm::Algorithm;
use crate::error::Result;
use crate::gpu::prepare::PrepareReport;
use crate::lanes::{LaneScan, Lanes};
use crate::monoid::Monoid;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// A [`Scanner`] whose inputs are `In` values, mapped to the operator's elements inside the
/// kernels (see [`Scanner::mapped`] and [`crate::Map`]).
pub struct MappedScanner<'a, M: Monoid, In> {
    pub(super) inner: Scanner<'a, M>,
    pub(super) _in: std::marker::PhantomData<fn(In)>,
}

impl<M: Monoid, In: crate::element::Element> MappedScanner<'_, M, In> {
    /// Uses `algorithm` (a tiled one) instead of [`Algorithm::Auto`].
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.inner.algorithm = algorithm;
        self
    }

    /// Compiles or loads the kernels now (see [`Scanner::prepare`]).
    pub fn prepare(&self) -> Result<PrepareReport> {
        self.inner.prepare()
    }

    /// Compiles or loads the kernels of the scans from the end, through the map (see
    /// [`Scanner::prepare_reverse`]).
    pub fn prepare_reverse(&self) -> Result<PrepareReport> {
        self.inner.prepare_reverse()
    }

    /// Compiles or loads the kernels a call of `n` elements uses (see
    /// [`Scanner::prepare_for`]).
    pub fn prepare_for(&self, n: u64) -> Result<PrepareReport> {
        self.inner.prepare_for(n)
    }

    /// Registers, local and shared memory, and occupancy of every kernel loaded so far (see
    /// [`Scanner::kernel_info`]).
    pub fn kernel_info(&self) -> Result<Vec<crate::gpu::KernelInfo>> {
        self.inner.kernel_info()
    }

    /// A new device buffer of `n` elements, all `value` (see [`Scanner::alloc_filled`]).
    pub fn alloc_filled(&self, n: usize, value: M::Elem) -> Result<CudaSlice<M::Elem>> {
        self.inner.alloc_filled(n, value)
    }

    /// `output[i] = map(input[0]) ⊕ ... ⊕ map(input[i])`.
    pub fn inclusive<I, O>(&self, input: &I, output: &mut O) -> Result<()>
    where
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
    {
        self.inner
            .scan_buffers(input, output, Mode::Inclusive, None::<&mut O>)
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
        self.inner
            .scan_buffers(input, output, Mode::Exclusive(init), Some(total))
    }

    /// `total[0] = map(input[0]) ⊕ ... ⊕ map(input[n-1])`.
    pub fn reduce<I, S>(&self, input: &I, total: &mut S) -> Result<()>
    where
        I: DevicePtr<In>,
        S: DevicePtrMut<M::Elem>,
    {
        self.inner.reduce_buffers(input, total)
    }

    /// [`Scanner::scan_lanes`] of `map(input)`, with each lane's total in `totals` when given.
    pub fn scan_lanes<I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        lanes: &Lanes,
        how: &LaneScan<M::Elem>,
        totals: Option<&mut S>,
    ) -> Result<()>
    where
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.inner.lanes_buffers(input, output, lanes, how, totals)
    }

    /// [`Scanner::scan_segments`] of `map(input)`, with each row's total in `totals` when given.
    pub fn scan_segments<I, O, R, S>(
        &self,
        input: &I,
        output: &mut O,
        offsets: &R,
        how: &LaneScan<M::Elem>,
        totals: Option<&mut S>,
    ) -> Result<()>
    where
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
        R: DevicePtr<u64>,
        S: DevicePtrMut<M::Elem>,
    {
        self.inner
            .segments_buffers(input, output, offsets, how, totals)
    }

    /// The fold of `map` over each row of `input` that `offsets` gives, into `totals`
    /// ([`Scanner::reduce_segments`]).
    pub fn reduce_segments<I, R, S>(&self, input: &I, offsets: &R, totals: &mut S) -> Result<()>
    where
        I: DevicePtr<In>,
        R: DevicePtr<u64>,
        S: DevicePtrMut<M::Elem>,
    {
        self.inner.reduce_segments_buffers(input, offsets, totals)
    }

    /// The fold of `map` over every lane of `input`, into `totals`.
    pub fn reduce_lanes<I, S>(&self, input: &I, lanes: &Lanes, totals: &mut S) -> Result<()>
    where
        I: DevicePtr<In>,
        S: DevicePtrMut<M::Elem>,
    {
        self.inner.reduce_lanes_buffers(input, lanes, totals)
    }
}
