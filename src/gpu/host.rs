//! [`Backend`] for [`Gpu`]: host slices in, host results out (uploads, one scan, downloads).

use super::Gpu;
use crate::backend::Backend;
use crate::error::Result;
use crate::lanes::{LaneScan, Lanes};
use crate::monoid::Monoid;

impl Backend for Gpu {
    fn describe(&self) -> String {
        format!(
            "gpu {}: {} (sm_{}, {} SMs)",
            self.info.ordinal, self.info.name, self.info.cc, self.info.sm_count
        )
    }

    fn prepare<M: Monoid>(&self, m: &M) -> Result<()> {
        self.scanner(m).prepare().map(drop)
    }

    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        let input = self.upload(xs)?;
        let mut total = self.upload(&[m.identity()])?;
        self.scanner(m).reduce(&input, &mut total)?;
        Ok(self.stream.clone_dtoh(&total)?[0])
    }

    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        let mut data = self.upload(xs)?;
        self.scanner(m).inclusive_in_place(&mut data)?;
        self.stream.memcpy_dtoh(&data, xs)?;
        self.stream.synchronize()?;
        Ok(())
    }

    fn map_reduce<M: Monoid, In: crate::element::Element>(
        &self,
        m: &M,
        map: &crate::map::Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<M::Elem> {
        let input = self.upload(xs)?;
        let mut total = self.upload(&[m.identity()])?;
        self.scanner(m).mapped(map).reduce(&input, &mut total)?;
        Ok(self.stream.clone_dtoh(&total)?[0])
    }

    fn map_inclusive_scan<M: Monoid, In: crate::element::Element>(
        &self,
        m: &M,
        map: &crate::map::Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<Vec<M::Elem>> {
        let input = self.upload(xs)?;
        let scanner = self.scanner(m).mapped(map);
        let mut out = scanner.alloc_filled(xs.len(), m.identity())?;
        scanner.inclusive(&input, &mut out)?;
        Ok(self.stream.clone_dtoh(&out)?)
    }

    fn map_exclusive_scan_total<M: Monoid, In: crate::element::Element>(
        &self,
        m: &M,
        map: &crate::map::Map<In, M::Elem>,
        xs: &[In],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let input = self.upload(xs)?;
        let scanner = self.scanner(m).mapped(map);
        let mut out = scanner.alloc_filled(xs.len(), m.identity())?;
        let mut total = self.upload(&[init])?;
        scanner.exclusive_with_total(&input, &mut out, init, &mut total)?;
        Ok((
            self.stream.clone_dtoh(&out)?,
            self.stream.clone_dtoh(&total)?[0],
        ))
    }

    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        let mut data = self.upload(xs)?;
        let mut total = self.upload(&[init])?;
        self.scanner(m)
            .exclusive_in_place(&mut data, init, &mut total)?;
        self.stream.memcpy_dtoh(&data, xs)?;
        Ok(self.stream.clone_dtoh(&total)?[0])
    }

    fn scan_lanes<M: Monoid>(
        &self,
        m: &M,
        lanes: &Lanes,
        data: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        lanes.check_buffer(data.len(), "the data")?;
        let mut dev = self.upload(data)?;
        let mut totals = self.scanner(m).alloc_filled(lanes.count(), m.identity())?;
        self.scanner(m)
            .scan_lanes_in_place(&mut dev, lanes, how, Some(&mut totals))?;
        self.stream.memcpy_dtoh(&dev, data)?;
        Ok(self.stream.clone_dtoh(&totals)?)
    }

    fn reduce_lanes<M: Monoid>(
        &self,
        m: &M,
        lanes: &Lanes,
        data: &[M::Elem],
    ) -> Result<Vec<M::Elem>> {
        lanes.check_buffer(data.len(), "the data")?;
        let dev = self.upload(data)?;
        let mut totals = self.scanner(m).alloc_filled(lanes.count(), m.identity())?;
        self.scanner(m).reduce_lanes(&dev, lanes, &mut totals)?;
        Ok(self.stream.clone_dtoh(&totals)?)
    }

    fn map_scan_lanes<M: Monoid, In: crate::element::Element>(
        &self,
        m: &M,
        map: &crate::map::Map<In, M::Elem>,
        lanes: &Lanes,
        input: &[In],
        output: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        lanes.check_buffer(input.len(), "the input")?;
        lanes.check_buffer(output.len(), "the output")?;
        let dev_in = self.upload(input)?;
        let mut dev_out = self.upload(output)?;
        let scanner = self.scanner(m);
        let mut totals = scanner.alloc_filled(lanes.count(), m.identity())?;
        scanner
            .mapped(map)
            .scan_lanes(&dev_in, &mut dev_out, lanes, how, Some(&mut totals))?;
        self.stream.memcpy_dtoh(&dev_out, output)?;
        Ok(self.stream.clone_dtoh(&totals)?)
    }

    fn scan_segments<M: Monoid>(
        &self,
        m: &M,
        offsets: &[usize],
        data: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        crate::lanes::check_offsets(offsets, data.len())?;
        if data.is_empty() {
            // Rows of no elements: their totals are their initial values, or the identity.
            return crate::cpu::Sequential.scan_segments(m, offsets, data, how);
        }
        let input = self.upload(data)?;
        let wide = crate::alloc::collect(offsets.iter().map(|&o| o as u64))?;
        let offsets_buf = self.upload(&wide)?;
        let mut output = super::launch::alloc_for_writes::<M::Elem>(&self.stream, data.len())?;
        let scanner = self.scanner(m);
        let mut totals = scanner.alloc_filled(offsets.len() - 1, m.identity())?;
        scanner.scan_segments_with_totals(&input, &mut output, &offsets_buf, how, &mut totals)?;
        self.stream.memcpy_dtoh(&output, data)?;
        Ok(self.stream.clone_dtoh(&totals)?)
    }
}
