//! [`Scanner`]'s batched calls on device buffers: scans and folds of lanes ([`crate::lanes`])
//! and of rows given by offsets (CSR).

use super::Scanner;
use crate::error::Result;
use crate::gpu::launch::{self, DevSlice};
use crate::gpu::{lanes, segments};
use crate::lanes::{LaneScan, Lanes};
use crate::monoid::Monoid;
use cudarc::driver::{DevicePtr, DevicePtrMut};

impl<M: Monoid> Scanner<'_, M> {
    /// Scans every lane of `input` into `output` (both laid out as `lanes` say) as `how` says
    /// ([`crate::lanes`]): contiguous rows directly, any other layout through a gathered copy.
    ///
    /// ```
    /// use monoscan::{Gpu, lanes::{LaneScan, Lanes}, ops::Sum};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let sum = Sum::<i32>::new();
    /// let xs = gpu.stream().clone_htod(&[1, 2, 3, 10, 20, 30])?;
    /// let mut ys = gpu.stream().alloc_zeros::<i32>(6)?;
    /// gpu.scanner(&sum).scan_lanes(&xs, &mut ys, &Lanes::rows(2, 3), &LaneScan::inclusive().reverse())?;
    /// assert_eq!(gpu.stream().clone_dtoh(&ys)?, [6, 5, 3, 60, 50, 30]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn scan_lanes<I, O>(
        &self,
        input: &I,
        output: &mut O,
        lanes: &Lanes,
        how: &LaneScan<M::Elem>,
    ) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
    {
        self.lanes_buffers(input, output, lanes, how, None::<&mut O>)
    }

    /// [`Scanner::scan_lanes`], and each lane's total in `totals` (in lane order).
    pub fn scan_lanes_with_totals<I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        lanes: &Lanes,
        how: &LaneScan<M::Elem>,
        totals: &mut S,
    ) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.lanes_buffers(input, output, lanes, how, Some(totals))
    }

    /// Scans every lane of `data` in place; each lane's total in `totals` when given.
    pub fn scan_lanes_in_place<D, S>(
        &self,
        data: &mut D,
        lanes: &Lanes,
        how: &LaneScan<M::Elem>,
        totals: Option<&mut S>,
    ) -> Result<()>
    where
        D: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        let stream = self.k.gpu.stream.clone();
        let (d, _g) = launch::output(data, &stream);
        match totals {
            None => lanes::scan(&self.k, d, d, lanes, how, None),
            Some(t) => {
                let (t, _g2) = launch::output(t, &stream);
                lanes::scan(&self.k, d, d, lanes, how, Some(t))
            }
        }
    }

    /// Scans rows of any length (CSR): row `r` is elements `offsets[r] .. offsets[r + 1]` of
    /// `input`, scanned into the same places of `output`; `how`'s initial values are per row.
    /// The offsets, on the device (one more than the rows, such as those
    /// [`Gpu::allocation_offsets`](crate::Gpu::allocation_offsets) computes), run from 0 to `input`'s length and never
    /// decrease. They are not read back to be checked: offsets out of order give unspecified
    /// values, never an access outside the buffers. (`Backend::scan_segments` on a [`Gpu`](crate::Gpu)
    /// checks host offsets, then runs this.)
    ///
    /// ```
    /// use monoscan::{Gpu, lanes::LaneScan, ops::Sum};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let input = gpu.stream().clone_htod(&[1u32, 2, 3, 4, 5])?;
    /// let offsets = gpu.stream().clone_htod(&[0u64, 2, 2, 5])?;
    /// let mut output = gpu.stream().alloc_zeros::<u32>(5)?;
    /// let mut totals = gpu.stream().alloc_zeros::<u32>(3)?;
    /// let how = LaneScan::exclusive(0);
    /// gpu.scanner(&Sum::new())
    ///     .scan_segments_with_totals(&input, &mut output, &offsets, &how, &mut totals)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&output)?, [0, 1, 0, 3, 7]);
    /// assert_eq!(gpu.stream().clone_dtoh(&totals)?, [3, 0, 12]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn scan_segments<I, O, R>(
        &self,
        input: &I,
        output: &mut O,
        offsets: &R,
        how: &LaneScan<M::Elem>,
    ) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
        R: DevicePtr<u64>,
    {
        self.segments_buffers(input, output, offsets, how, None::<&mut O>)
    }

    /// [`Scanner::scan_segments`], and each row's total in `totals` (one per row).
    pub fn scan_segments_with_totals<I, O, R, S>(
        &self,
        input: &I,
        output: &mut O,
        offsets: &R,
        how: &LaneScan<M::Elem>,
        totals: &mut S,
    ) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        O: DevicePtrMut<M::Elem>,
        R: DevicePtr<u64>,
        S: DevicePtrMut<M::Elem>,
    {
        self.segments_buffers(input, output, offsets, how, Some(totals))
    }

    /// The fold of each row of `input` that `offsets` gives (CSR, as [`Scanner::scan_segments`]
    /// takes them) into `totals`, one per row (a row of no elements: the identity), reading
    /// each element once and writing only the totals.
    ///
    /// ```
    /// use monoscan::{Gpu, ops::Sum};
    /// # fn main() -> monoscan::Result<()> {
    /// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
    /// let input = gpu.stream().clone_htod(&[1u32, 2, 3, 4, 5])?;
    /// let offsets = gpu.stream().clone_htod(&[0u64, 2, 2, 5])?;
    /// let mut totals = gpu.stream().alloc_zeros::<u32>(3)?;
    /// gpu.scanner(&Sum::new()).reduce_segments(&input, &offsets, &mut totals)?;
    /// assert_eq!(gpu.stream().clone_dtoh(&totals)?, [3, 0, 12]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn reduce_segments<I, R, S>(&self, input: &I, offsets: &R, totals: &mut S) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        R: DevicePtr<u64>,
        S: DevicePtrMut<M::Elem>,
    {
        self.reduce_segments_buffers(input, offsets, totals)
    }

    /// The fold of every lane of `input` into `totals` (in lane order), reading each element
    /// once and writing only the totals: one contiguous lane by the 1-D reduction, rows and
    /// columns by the lane scans' kernels with no output (rows of at least half a warp tile
    /// of the tiled reduce by its warps instead where [`crate::tuning::Tuning::row_folds`] is
    /// on), other layouts gathered into contiguous rows first.
    pub fn reduce_lanes<I, S>(&self, input: &I, lanes: &Lanes, totals: &mut S) -> Result<()>
    where
        I: DevicePtr<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.reduce_lanes_buffers(input, lanes, totals)
    }

    /// Runs `scan` on the device slices of `input`, `output` and `totals` (when given), each
    /// held for the stream until the call is queued.
    pub(super) fn with_buffers<In, I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        totals: Option<&mut S>,
        scan: impl FnOnce(DevSlice<In>, DevSlice<M::Elem>, Option<DevSlice<M::Elem>>) -> Result<()>,
    ) -> Result<()>
    where
        In: crate::element::Element,
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        let stream = self.k.gpu.stream.clone();
        let (inp, _g1) = launch::input(input, &stream);
        let (out, _g2) = launch::output(output, &stream);
        match totals {
            None => scan(inp, out, None),
            Some(t) => {
                let (t, _g3) = launch::output(t, &stream);
                scan(inp, out, Some(t))
            }
        }
    }

    /// Scans lanes of `input` (of the operator's elements, or of a mapped scanner's `In`).
    pub(super) fn lanes_buffers<In, I, O, S>(
        &self,
        input: &I,
        output: &mut O,
        lanes: &Lanes,
        how: &LaneScan<M::Elem>,
        totals: Option<&mut S>,
    ) -> Result<()>
    where
        In: crate::element::Element,
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
        S: DevicePtrMut<M::Elem>,
    {
        self.with_buffers(input, output, totals, |inp, out, totals| {
            lanes::scan(&self.k, inp, out, lanes, how, totals)
        })
    }

    /// Scans CSR rows of `input` (of the operator's elements, or of a mapped scanner's `In`).
    pub(super) fn segments_buffers<In, I, O, R, S>(
        &self,
        input: &I,
        output: &mut O,
        offsets: &R,
        how: &LaneScan<M::Elem>,
        totals: Option<&mut S>,
    ) -> Result<()>
    where
        In: crate::element::Element,
        I: DevicePtr<In>,
        O: DevicePtrMut<M::Elem>,
        R: DevicePtr<u64>,
        S: DevicePtrMut<M::Elem>,
    {
        let stream = self.k.gpu.stream.clone();
        let (offsets, _g) = launch::input(offsets, &stream);
        self.with_buffers(input, output, totals, |inp, out, totals| {
            segments::scan(&self.k, inp, out, offsets, how, totals)
        })
    }

    /// Folds CSR rows of `input` (of the operator's elements, or of a mapped scanner's `In`).
    pub(super) fn reduce_segments_buffers<In, I, R, S>(
        &self,
        input: &I,
        offsets: &R,
        totals: &mut S,
    ) -> Result<()>
    where
        In: crate::element::Element,
        I: DevicePtr<In>,
        R: DevicePtr<u64>,
        S: DevicePtrMut<M::Elem>,
    {
        let stream = self.k.gpu.stream.clone();
        let (inp, _g1) = launch::input(input, &stream);
        let (offsets, _g2) = launch::input(offsets, &stream);
        let (t, _g3) = launch::output(totals, &stream);
        segments::reduce(&self.k, inp, offsets, t)
    }

    /// Folds lanes of `input` (of the operator's elements, or of a mapped scanner's `In`).
    pub(super) fn reduce_lanes_buffers<In, I, S>(
        &self,
        input: &I,
        lanes: &Lanes,
        totals: &mut S,
    ) -> Result<()>
    where
        In: crate::element::Element,
        I: DevicePtr<In>,
        S: DevicePtrMut<M::Elem>,
    {
        let stream = self.k.gpu.stream.clone();
        let (inp, _g1) = launch::input(input, &stream);
        let (t, _g2) = launch::output(totals, &stream);
        lanes::reduce(&self.k, inp, lanes, t)
    }
}
