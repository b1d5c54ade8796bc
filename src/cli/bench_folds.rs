//! `monoscan bench --cases reduce-lanes`: folds of every lane (`reduce_lanes`: sum f32 along
//! each axis of the shapes of `--cases lanes`, and `u8` flags counted in `u32` along rows) and
//! of rows given by offsets (`reduce_segments`: the CSR rows of `--cases lanes`),
//! each beside a read pass of the lanes' input bytes (a fold's floor) and checked exactly
//! against the sequential CPU backend's folds.

use super::bench::{Ctx, Row};
use super::bench_lanes::SUM_SHAPES;
use super::CliError;
use monoscan::cpu::Sequential;
use monoscan::lanes::Lanes;
use monoscan::ops::Sum;
use monoscan::{Backend, Element, ValidAsZeroBits};

/// Measurements this family adds to the progress count.
pub(super) const CASES: usize = SUM_SHAPES.len() + 2 + FLAG_SHAPES.len();

/// (rows, columns): `u8` flags counted along the rows of a row-major (rows x columns) array.
const FLAG_SHAPES: [(usize, usize); 2] = [(16_384, 1_024), (64, 152_064)];

impl Ctx<'_> {
    pub(super) fn lane_folds_cases(&mut self) -> Result<(), CliError> {
        let sum = Sum::<f32>::new();
        // Small integers: every grouping of their sums is exact in f32.
        let gen = |i: u64| ((i % 17) as f32) - 8.0;
        for (rows, cols, axis) in SUM_SHAPES {
            let lanes = Lanes::axis(&[rows, cols], axis)?;
            let xs: Vec<f32> = (0..lanes.span() as u64).map(gen).collect();
            let want = Sequential.reduce_lanes(&sum, &lanes, &xs)?;
            let input = self.gpu.stream().clone_htod(&xs)?;
            drop(xs);
            let label = format!("sum f32 ({rows} x {cols}) axis {axis}");
            let scanner = self.gpu.scanner(&sum);
            self.fold_case(&label, &lanes, 4, &want, |t| {
                scanner.reduce_lanes(&input, &lanes, t)
            })?;
        }
        // Rows of varying lengths given by offsets, as `--cases lanes` draws them.
        for (rows, lens) in super::bench_lanes::csr_rows() {
            let mut offsets = vec![0u64];
            for len in &lens {
                offsets.push(offsets[offsets.len() - 1] + len);
            }
            let n = offsets[lens.len()];
            let xs: Vec<f32> = (0..n).map(gen).collect();
            let want: Vec<f32> = offsets
                .windows(2)
                .map(|w| xs[w[0] as usize..w[1] as usize].iter().sum())
                .collect();
            let s = self.gpu.stream();
            let input = s.clone_htod(&xs)?;
            let at = s.clone_htod(&offsets)?;
            drop(xs);
            let lanes = Lanes::rows(1, n as usize);
            let scanner = self.gpu.scanner(&sum);
            self.fold_case(&format!("sum f32 CSR {rows}"), &lanes, 4, &want, |t| {
                scanner.reduce_segments(&input, &at, t)
            })?;
        }
        let count = monoscan::inputs::count_true();
        let counts = Sum::<u32>::new();
        for (rows, cols) in FLAG_SHAPES {
            let lanes = Lanes::rows(rows, cols);
            let flags: Vec<u8> = (0..lanes.span() as u64)
                .map(|i| u8::from(i % 3 == 0))
                .collect();
            let ones: Vec<u32> = flags.iter().map(|f| u32::from(*f)).collect();
            let want = Sequential.reduce_lanes(&counts, &lanes, &ones)?;
            let input = self.gpu.stream().clone_htod(&flags)?;
            drop((flags, ones));
            let label = format!("u8 flags to u32 counts ({rows} x {cols}) axis 1");
            let scanner = self.gpu.scanner(&counts).mapped(&count);
            self.fold_case(&label, &lanes, 1, &want, |t| {
                scanner.reduce_lanes(&input, &lanes, t)
            })?;
        }
        Ok(())
    }

    /// One fold of every lane of `lanes` (inputs of `in_size` bytes; for rows given by offsets,
    /// one lane of all their elements) by `fold` into a totals buffer of `want.len()`, checked
    /// against `want`, then timed beside a read pass of the lanes' input bytes.
    fn fold_case<T: Element + ValidAsZeroBits + PartialEq + std::fmt::Debug>(
        &mut self,
        label: &str,
        lanes: &Lanes,
        in_size: usize,
        want: &[T],
        fold: impl Fn(&mut cudarc::driver::CudaSlice<T>) -> monoscan::Result<()>,
    ) -> Result<(), CliError> {
        let case = "reduce-lanes";
        let s = self.gpu.stream();
        let mut totals = s.alloc_zeros::<T>(want.len())?;
        fold(&mut totals)?;
        let got = s.clone_dtoh(&totals)?;
        if let Some(l) = (0..want.len()).find(|&l| got[l] != want[l]) {
            return Err(CliError::Runtime(format!(
                "{label}: lane {l} folded to {:?}, the host's to {:?}",
                got[l], want[l]
            )));
        }
        let n = lanes.elements();
        let bytes = n * in_size;
        let read = self.timer.read_pass(bytes)?.median_ms();
        let t = self.timer.time(|| fold(&mut totals))?;
        let row = Row::beside_read_pass(case, label.to_string(), n, bytes, t.median_ms(), read);
        self.rows.push(row);
        self.progress.step(&format!("{case} {label}"));
        Ok(())
    }
}
