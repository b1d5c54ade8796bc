//! `monoscan bench --cases reduce-maps`: reductions through maps that widen narrower inputs
//! (`u8` flags counted in `u32`, `f16` values summed in `f32`) at every swept size, each beside
//! a read pass of its input (the reduction's floor) and checked exactly against the host's
//! total.

use super::bench::{Ctx, Row};
use super::CliError;
use cudarc::driver::CudaSlice;
use monoscan::ops::Sum;
use monoscan::{Element, MappedScanner, Monoid};

/// Measurements per swept size.
pub(super) const STEPS: usize = 1 + cfg!(feature = "f16") as usize;

impl Ctx<'_> {
    pub(super) fn reduce_maps_case(&mut self) -> Result<(), CliError> {
        let sizes = self.sizes(4);
        let Some(&top) = sizes.last() else {
            return Ok(());
        };
        let s = self.gpu.stream();
        let flag = |i: u64| i % 3 == 0;
        let flags: Vec<u8> = (0..1u64 << top).map(|i| u8::from(flag(i))).collect();
        let input = s.clone_htod(&flags)?;
        drop(flags);
        let count = monoscan::inputs::count_true();
        let counts = Sum::<u32>::new();
        let scanner = self.gpu.scanner(&counts).mapped(&count);
        // Every third flag is set.
        let want = |n: u64| n.div_ceil(3) as u32;
        self.mapped_reduce("u8 flags to u32 count", &sizes, &scanner, &input, want)?;
        drop(input);
        #[cfg(feature = "f16")]
        self.f16_sum(&sizes, top)?;
        Ok(())
    }

    /// `f16` values `(i mod 61) - 30` summed in `f32`: every run of them sums to an integer of
    /// at most 465 in size, so every grouping is exact.
    #[cfg(feature = "f16")]
    fn f16_sum(&mut self, sizes: &[u32], top: u32) -> Result<(), CliError> {
        use monoscan::half::f16;
        let value = |i: u64| (i % 61) as i64 - 30;
        let halves: Vec<f16> = (0..1u64 << top)
            .map(|i| f16::from_f32(value(i) as f32))
            .collect();
        let input = self.gpu.stream().clone_htod(&halves)?;
        drop(halves);
        let sum = Sum::<f32>::new();
        let widen = monoscan::inputs::widen_f16();
        let scanner = self.gpu.scanner(&sum).mapped(&widen);
        // A whole period sums to 0.
        let want = |n: u64| (0..n % 61).map(value).sum::<i64>() as f32;
        self.mapped_reduce("f16 to f32 sum", sizes, &scanner, &input, want)
    }

    /// The reduction of the first 2^l inputs through `scanner`'s map at every size `l` of
    /// `sizes`, beside a read pass of the same bytes, its total checked against `want(n)`.
    fn mapped_reduce<M: Monoid, In: Element>(
        &mut self,
        label: &str,
        sizes: &[u32],
        scanner: &MappedScanner<'_, M, In>,
        input: &CudaSlice<In>,
        want: impl Fn(u64) -> M::Elem,
    ) -> Result<(), CliError>
    where
        M::Elem: PartialEq + std::fmt::Debug,
    {
        let case = "reduce-maps";
        scanner.prepare()?;
        // The total of no inputs: the identity.
        let mut total = scanner.alloc_filled(1, want(0))?;
        for &l in sizes {
            let n = 1usize << l;
            let bytes = n * std::mem::size_of::<In>();
            let read = self.timer.read_pass(bytes)?.median_ms();
            let part = input.slice(0..n);
            let t = self.timer.time(|| scanner.reduce(&part, &mut total))?;
            let got = self.gpu.stream().clone_dtoh(&total)?;
            if got[0] != want(n as u64) {
                return Err(CliError::Runtime(format!(
                    "{label} at 2^{l}: the reduction gave {:?}, the host {:?}",
                    got[0],
                    want(n as u64)
                )));
            }
            let ms = t.median_ms();
            let row = Row::beside_read_pass(case, label.to_string(), n, bytes, ms, read);
            self.rows.push(row);
            self.progress.step(&format!("{case} {label} 2^{l}"));
        }
        Ok(())
    }
}
