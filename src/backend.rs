//! [`Backend`]: the host-slice interface shared by the CPU backends and the GPU.

use crate::alloc;
use crate::error::Result;
use crate::lanes::{LaneScan, Lanes};
use crate::map::Map;
use crate::monoid::Monoid;

/// Reduce and scan over host slices, for any [`Monoid`].
///
/// Implemented by [`crate::cpu::Sequential`] (the reference), [`crate::cpu::Parallel`] (rayon)
/// and [`crate::Gpu`]. All give the same results: exactly for exact operators, and up to
/// rounding for floats (they group operations differently). A host buffer that cannot be
/// allocated is [`crate::Error::OutOfMemory`], never an abort.
///
/// Definitions, for `xs = [x0, x1, ..., x(n-1)]` and `⊕ = combine`:
///
/// - `reduce(xs) = e ⊕ x0 ⊕ x1 ⊕ ... ⊕ x(n-1)` (`e` for an empty slice)
/// - `inclusive_scan(xs)[i] = x0 ⊕ ... ⊕ xi`
/// - `exclusive_scan(xs, init)[i] = init ⊕ x0 ⊕ ... ⊕ x(i-1)` (so `[0]` is `init`)
/// - `exclusive_scan_total` also returns `init ⊕ x0 ⊕ ... ⊕ x(n-1)`: the size of the buffer
///   when the scan computes allocation offsets.
///
/// ```
/// use monoscan::{Backend, cpu::{Parallel, Sequential}, ops::Sum};
/// let xs: Vec<u64> = (1..=1000).collect();
/// let (offsets, total) = Parallel::default().exclusive_scan_total(&Sum::new(), &xs, 0).unwrap();
/// assert_eq!(offsets[..3], [0, 1, 3]);
/// assert_eq!(total, 500_500);
/// assert_eq!(Sequential.reduce(&Sum::new(), &xs).unwrap(), total);
/// ```
pub trait Backend {
    /// A one-line description (`"cpu (sequential)"`, `"gpu 0: NVIDIA H100 80GB HBM3"`).
    fn describe(&self) -> String;

    /// Gets ready to run `m` (the GPU compiles or loads its kernels), so that later calls
    /// measure only their own work. A no-op on the CPU.
    fn prepare<M: Monoid>(&self, _m: &M) -> Result<()> {
        Ok(())
    }

    /// The fold of `xs`, in order.
    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem>;

    /// Replaces `xs` by its inclusive scan.
    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()>;

    /// Replaces `xs` by its exclusive scan starting from `init`; returns the total.
    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem>;

    /// The inclusive scan of `xs`.
    fn inclusive_scan<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<Vec<M::Elem>> {
        let mut out = alloc::to_vec(xs)?;
        self.inclusive_scan_in_place(m, &mut out)?;
        Ok(out)
    }

    /// The exclusive scan of `xs` starting from `init`.
    fn exclusive_scan<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<Vec<M::Elem>> {
        Ok(self.exclusive_scan_total(m, xs, init)?.0)
    }

    /// The exclusive scan of `xs` starting from `init`, and the total.
    fn exclusive_scan_total<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let mut out = alloc::to_vec(xs)?;
        let total = self.exclusive_scan_in_place(m, &mut out, init)?;
        Ok((out, total))
    }

    /// The fold of `map(xs)`. The GPU applies the map inside the kernel (the input is read
    /// once); the CPU backends map each element as they fold it.
    fn map_reduce<M: Monoid, In: crate::element::Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<M::Elem> {
        Ok(xs
            .iter()
            .fold(m.identity(), |a, x| m.combine(&a, &map.apply(x))))
    }

    /// The inclusive scan of `map(xs)`.
    fn map_inclusive_scan<M: Monoid, In: crate::element::Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<Vec<M::Elem>> {
        let mut ys = alloc::collect(xs.iter().map(|x| map.apply(x)))?;
        self.inclusive_scan_in_place(m, &mut ys)?;
        Ok(ys)
    }

    /// The exclusive scan of `map(xs)` from `init`, and the total.
    fn map_exclusive_scan_total<M: Monoid, In: crate::element::Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let mut ys = alloc::collect(xs.iter().map(|x| map.apply(x)))?;
        let total = self.exclusive_scan_in_place(m, &mut ys, init)?;
        Ok((ys, total))
    }

    /// Scans every lane of `data` (laid out as `lanes` say) as `how` says, in place; returns
    /// each lane's total, in lane order ([`crate::lanes`]). The CPU backends scan lanes in
    /// parallel (rayon); the GPU chooses a kernel by the layout.
    fn scan_lanes<M: Monoid>(
        &self,
        m: &M,
        lanes: &Lanes,
        data: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        crate::lanes::scan_lanes(m, lanes, data, how)
    }

    /// The fold of every lane of `data`, in lane order.
    fn reduce_lanes<M: Monoid>(
        &self,
        m: &M,
        lanes: &Lanes,
        data: &[M::Elem],
    ) -> Result<Vec<M::Elem>> {
        lanes.check_buffer(data.len(), "the data")?;
        let mut totals = alloc::with_capacity(lanes.count())?;
        for lane in 0..lanes.count() {
            let xs = crate::lanes::gather(data, lanes, lane)?;
            totals.push(crate::cpu::seq::reduce(m, &xs));
        }
        Ok(totals)
    }

    /// [`Backend::scan_lanes`] of `map(input)` into `output` (both laid out as `lanes` say):
    /// the GPU applies the map as it loads, the CPU backends map where the elements lie, then
    /// scan. Elements of `output` between the lanes are left as they are.
    fn map_scan_lanes<M: Monoid, In: crate::element::Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        lanes: &Lanes,
        input: &[In],
        output: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        lanes.check_buffer(input.len(), "the input")?;
        lanes.check_buffer(output.len(), "the output")?;
        how.check(lanes)?;
        crate::cpu::maps::map_lanes(lanes, input, output, map);
        self.scan_lanes(m, lanes, output, how)
    }

    /// Scans variable-length rows in place: row `r` is `data[offsets[r]..offsets[r + 1]]`
    /// (CSR offsets, rising from 0 to `data.len()`); `how`'s initial values are per row.
    /// Returns each row's total.
    fn scan_segments<M: Monoid>(
        &self,
        m: &M,
        offsets: &[usize],
        data: &mut [M::Elem],
        how: &LaneScan<M::Elem>,
    ) -> Result<Vec<M::Elem>> {
        crate::lanes::check_offsets(offsets, data.len())?;
        let rows = offsets.len() - 1;
        if let Some(crate::lanes::Inits::Each(v)) = &how.init {
            if v.len() != rows {
                return Err(crate::error::Error::invalid(format!(
                    "{} initial values for {rows} rows",
                    v.len()
                )));
            }
        }
        let mut totals = alloc::with_capacity(rows)?;
        for r in 0..rows {
            let row = &mut data[offsets[r]..offsets[r + 1]];
            totals.push(crate::lanes::scan_one(m, row, how, r));
        }
        Ok(totals)
    }
}
