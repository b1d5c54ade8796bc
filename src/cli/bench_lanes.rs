//! `monoscan bench --cases lanes`: batched scans along an axis (sum f32 over the shapes where
//! scans are used in practice and down more columns, affine f32 maps along rows), reverse scans
//! down columns, views of columns (some of a wider array's, groups along a middle axis), rows of
//! varying lengths given by offsets (CSR), and reverse 1-D scans beside forward ones (in the
//! staged scan, the share scan, the register-tile scan and the reduce-then-scan from the end).
//! Each figure is a fraction of a device-to-device copy of the same bytes (the lanes' elements,
//! not what lies between them; for a mapped input, half the bytes read and written).

use super::bench::{Ctx, Row};
use super::CliError;
use cudarc::driver::CudaSlice;
use monoscan::bench::classes::{Class, LogSumExp};
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::ops::{Affine, AffineMap, Sum};
use monoscan::{Gpu, Map, Monoid};

/// Measurements this family adds to the progress count.
pub(super) const CASES: usize = 30;

/// (rows, columns, axis): sum f32 along `axis` of a row-major (rows x columns) array.
pub(super) const SUM_SHAPES: [(usize, usize, usize); 10] = [
    (8_388_608, 2, 0),
    (524_288, 32, 0),
    (2_097_152, 8, 0),
    (131_072, 128, 0),
    (16_384, 1_024, 0),
    (64, 152_064, 1),
    (40, 152_000, 1),
    (4_096, 4_096, 1),
    (1_048_576, 64, 1),
    (16_384, 1_024, 1),
];

/// (rows, columns): sum f32 down the columns of a row-major (rows x columns) array, from the
/// last row.
const REVERSE_SHAPES: [(usize, usize); 3] = [(8_388_608, 2), (4_194_304, 4), (524_288, 32)];

/// (label, shape, strides, axis): sum f32 along `axis` of a view of `shape` with `strides`.
const VIEWS: [(&str, [usize; 3], [usize; 3], usize); 2] = [
    (
        "32 of 40 columns (524288 x 40) axis 0",
        [1, 524_288, 32],
        [0, 40, 1],
        1,
    ),
    (
        "(16 x 32768 x 32) axis 1",
        [16, 32_768, 32],
        [1_048_576, 32, 1],
        1,
    ),
];

/// Rows of varying lengths, each with its label: many short ones (0 to 127 values, 63.5 on
/// average), and a few long ones (120,000 to 183,999), each length drawn by a fixed hash of its
/// row.
pub(super) fn csr_rows() -> [(&'static str, Vec<u64>); 2] {
    let hash = |r: u64| r.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    [
        (
            "1048576 rows of 0..127",
            (0..1_048_576).map(|r| hash(r) % 128).collect(),
        ),
        (
            "64 rows of 120000..183999",
            (0..64).map(|r| 120_000 + hash(r) % 64_000).collect(),
        ),
    ]
}

impl Ctx<'_> {
    pub(super) fn lanes_cases(&mut self) -> Result<(), CliError> {
        let sum = Sum::<f32>::new();
        let inclusive = LaneScan::inclusive();
        let gen = |i: u64| ((i % 17) as f32) - 8.0;
        for (rows, cols, axis) in SUM_SHAPES {
            let lanes = Lanes::axis(&[rows, cols], axis)?;
            let label = format!("({rows} x {cols}) axis {axis}");
            self.lanes_case(&sum, &lanes, &format!("sum f32 {label}"), &inclusive, gen)?;
        }
        // Down the columns from the last row.
        for (rows, cols) in REVERSE_SHAPES {
            let lanes = Lanes::axis(&[rows, cols], 0)?;
            let label = format!("sum f32 ({rows} x {cols}) axis 0 reverse");
            let how = LaneScan::inclusive().reverse();
            self.lanes_case(&sum, &lanes, &label, &how, gen)?;
        }
        for (label, shape, strides, axis) in VIEWS {
            let lanes = Lanes::strided(&shape, &strides, axis)?;
            self.lanes_case(&sum, &lanes, &format!("sum f32 {label}"), &inclusive, gen)?;
        }
        for (rows, lens) in csr_rows() {
            self.csr_case(&lens, &format!("sum f32 CSR {rows}"), gen)?;
        }
        let affine = Affine::<f32>::new();
        let lanes = Lanes::rows(12_288, 4_096);
        self.lanes_case(
            &affine,
            &lanes,
            "affine f32 (12288 x 4096) axis 1",
            &LaneScan::inclusive(),
            |i| AffineMap::new(1.0 - (i % 7) as f32 * 1e-3, (i % 13) as f32),
        )?;
        self.reverse_case()
    }

    /// One scan of every lane of `lanes` as `how` says, beside a copy of the same bytes.
    fn lanes_case<M: Monoid>(
        &mut self,
        m: &M,
        lanes: &Lanes,
        label: &str,
        how: &LaneScan<M::Elem>,
        gen: impl Fn(u64) -> M::Elem,
    ) -> Result<(), CliError> {
        let n = lanes.elements();
        let size = std::mem::size_of::<M::Elem>();
        let xs: Vec<M::Elem> = (0..lanes.span() as u64).map(gen).collect();
        let s = self.gpu.stream();
        let input = s.clone_htod(&xs)?;
        let mut out = s.clone_htod(&xs)?;
        drop(xs);
        let copy = self.timer.copy(n * size)?.median_ms();
        let scanner = self.gpu.scanner(m);
        let t = self
            .timer
            .time(|| scanner.scan_lanes(&input, &mut out, lanes, how))?;
        self.record(label.to_string(), n, n * size, t.median_ms(), copy);
        Ok(())
    }

    /// A row of the table: a scan of `n` elements (`bytes` of them) in `ms`, beside a copy of
    /// the same bytes in `copy_ms`.
    fn record(&mut self, label: String, n: usize, bytes: usize, ms: f64, copy_ms: f64) {
        let step = format!("lanes {label}");
        self.rows.push(Row {
            case: "lanes",
            algorithm: label,
            n: n as u64,
            bytes: (2 * bytes) as u64,
            ms,
            baseline_ms: copy_ms,
            baseline: "copy",
        });
        self.progress.step(&step);
    }

    /// One scan of the rows of `lens` values each (sum f32), its offsets on the device, beside
    /// a copy of the same bytes.
    fn csr_case(
        &mut self,
        lens: &[u64],
        label: &str,
        gen: impl Fn(u64) -> f32,
    ) -> Result<(), CliError> {
        let mut offsets = Vec::with_capacity(lens.len() + 1);
        offsets.push(0u64);
        for len in lens {
            offsets.push(offsets[offsets.len() - 1] + len);
        }
        let n = offsets[lens.len()] as usize;
        let xs: Vec<f32> = (0..n as u64).map(gen).collect();
        let s = self.gpu.stream();
        let input = s.clone_htod(&xs)?;
        let mut out = s.clone_htod(&xs)?;
        let offsets = s.clone_htod(&offsets)?;
        drop(xs);
        let copy = self.timer.copy(n * 4)?.median_ms();
        let sum = Sum::<f32>::new();
        let scanner = self.gpu.scanner(&sum);
        let how = LaneScan::inclusive();
        let t = self
            .timer
            .time(|| scanner.scan_segments(&input, &mut out, &offsets, &how))?;
        self.record(label.to_string(), n, n * 4, t.median_ms(), copy);
        Ok(())
    }

    /// 1-D scans, forward then reverse: sum i32 over 2^28 elements (or the largest size asked
    /// for), the 16-byte affine f64 maps over a quarter as many and log-sum-exp over half as
    /// many (the same bytes; an expensive combine, whose forward scan the autotuner may give to
    /// the share scan).
    fn reverse_case(&mut self) -> Result<(), CliError> {
        let l = super::bench::log2_sizes(self.args, 4)
            .last()
            .copied()
            .unwrap_or(28);
        let n = 1usize << l;
        let ints: Vec<i32> = (0..n as u64).map(|i| (i % 1000) as i32 - 500).collect();
        self.one_lane(&Sum::<i32>::new(), "sum i32", ints)?;
        let maps: Vec<AffineMap<f64>> = (0..n as u64 / 4)
            .map(|i| AffineMap::new(0.5 + (i % 7) as f64 / 16.0, (i % 11) as f64 - 5.0))
            .collect();
        self.one_lane(&Affine::<f64>::new(), "affine f64", maps)?;
        let lse = LogSumExp.generate(n / 2, 7);
        self.one_lane(&LogSumExp, "logsumexp f64", lse)?;
        self.unstaged_lanes(n)
    }

    /// 1-D scans that do not stage, forward then reverse, sum over `n` elements: from the
    /// second element of 16-byte aligned buffers (unaligned) and of `u8` flags mapped to `u32`
    /// counts as they load (the input's element is not the monoid's), and in the deterministic
    /// mode (reduce-then-scan).
    fn unstaged_lanes(&mut self, n: usize) -> Result<(), CliError> {
        let sum = Sum::<i32>::new();
        let ints: Vec<i32> = (0..n as u64).map(|i| (i % 1000) as i32 - 500).collect();
        let s = self.gpu.stream();
        let input = s.clone_htod(&ints)?;
        let mut out = s.clone_htod(&ints)?;
        drop(ints);
        let copy = self.timer.copy((n - 1) * 4)?.median_ms();
        let scanner = self.gpu.scanner(&sum);
        scanner.prepare()?;
        scanner.prepare_reverse()?;
        let lanes = Lanes::rows(1, n - 1);
        self.both_ways("sum i32 unaligned", n - 1, (n - 1) * 4, copy, |how| {
            let mut o = out.slice_mut(1..);
            scanner.scan_lanes(&input.slice(1..), &mut o, &lanes, how)
        })?;
        let copy = self.timer.copy(n * 4)?.median_ms();
        let det = Gpu::from_stream(s.clone(), self.gpu.cache().clone())?
            .with_tuning(self.gpu.tuning().clone())?
            .deterministic(true);
        let scanner = det.scanner(&sum);
        scanner.prepare()?;
        scanner.prepare_reverse()?;
        let lanes = Lanes::rows(1, n);
        self.both_ways("sum i32 deterministic", n, n * 4, copy, |how| {
            scanner.scan_lanes(&input, &mut out, &lanes, how)
        })?;
        drop((input, out));
        let flags: Vec<u8> = (0..n as u64).map(|i| u8::from(i % 3 == 0)).collect();
        let input = s.clone_htod(&flags)?;
        drop(flags);
        let mut out = s.alloc_zeros::<u32>(n)?;
        let count = Map::new("flag_count", "x != 0 ? 1u : 0u", |x: &u8| {
            u32::from(*x != 0)
        });
        let counts = Sum::<u32>::new();
        let scanner = self.gpu.scanner(&counts).mapped(&count);
        scanner.prepare()?;
        scanner.prepare_reverse()?;
        let copy = self.timer.copy(n * 5 / 2)?.median_ms();
        self.both_ways("u8 flags to u32 counts", n, n * 5 / 2, copy, |how| {
            scanner.scan_lanes(&input, &mut out, &lanes, how, None::<&mut CudaSlice<u32>>)
        })
    }

    /// `xs` scanned as one lane forwards, then in reverse, each beside a copy of its bytes;
    /// the modules of both directions are compiled or loaded before either is timed.
    fn one_lane<M: Monoid>(
        &mut self,
        m: &M,
        label: &str,
        xs: Vec<M::Elem>,
    ) -> Result<(), CliError> {
        let n = xs.len();
        let bytes = n * std::mem::size_of::<M::Elem>();
        let s = self.gpu.stream();
        let input = s.clone_htod(&xs)?;
        let mut out = s.clone_htod(&xs)?;
        drop(xs);
        let copy = self.timer.copy(bytes)?.median_ms();
        let scanner = self.gpu.scanner(m);
        scanner.prepare()?;
        scanner.prepare_reverse()?;
        let lanes = Lanes::rows(1, n);
        self.both_ways(label, n, bytes, copy, |how| {
            scanner.scan_lanes(&input, &mut out, &lanes, how)
        })
    }

    /// `scan` of one lane of `n` elements (`bytes` of them) timed as an inclusive scan
    /// forwards, then in reverse, each a row beside a copy of the same bytes in `copy_ms`.
    fn both_ways<T>(
        &mut self,
        label: &str,
        n: usize,
        bytes: usize,
        copy_ms: f64,
        mut scan: impl FnMut(&LaneScan<T>) -> monoscan::Result<()>,
    ) -> Result<(), CliError> {
        for (name, how) in [
            ("forward", LaneScan::inclusive()),
            ("reverse", LaneScan::inclusive().reverse()),
        ] {
            let t = self.timer.time(|| scan(&how))?;
            self.record(
                format!("{label} 1-D {name}"),
                n,
                bytes,
                t.median_ms(),
                copy_ms,
            );
        }
        Ok(())
    }
}
