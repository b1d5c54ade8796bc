//! Benchmarking any operator: its scan beside a copy of the same bytes, its reduction beside a
//! read pass of them, both beside their floors under the operator's measured combine rate.

use super::{combine_rate, CombineRate, Timer};
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};
use crate::monoid::Monoid;
use std::fmt;

/// One size measured by [`operator`].
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorPoint {
    /// Elements.
    pub n: usize,
    /// Bytes of the input (`n x size_of::<Elem>()`): a scan reads them and writes as many, a
    /// reduction reads them.
    pub bytes: u64,
    /// Median device time of the inclusive scan, ms.
    pub scan_ms: f64,
    /// Median device time of a device-to-device copy of `bytes` bytes, ms: the scan's floor.
    pub copy_ms: f64,
    /// Median device time of the reduction, ms.
    pub reduce_ms: f64,
    /// Median device time of one read of `bytes` bytes, ms: the reduction's memory floor.
    pub read_ms: f64,
    /// The scan's floor, ms: `max(copy_ms, 2n combines at R)` ([`CombineRate::scan_floor_ms`]).
    pub scan_floor_ms: f64,
    /// The reduction's floor, ms: `max(read_ms, n combines at R)`
    /// ([`CombineRate::reduce_floor_ms`]).
    pub reduce_floor_ms: f64,
}

impl OperatorPoint {
    /// The scan's share of the copy's speed (1.0: as fast as copying the bytes).
    pub fn scan_of_copy(&self) -> f64 {
        self.copy_ms / self.scan_ms
    }

    /// The reduction's share of the read pass's speed.
    pub fn reduce_of_read(&self) -> f64 {
        self.read_ms / self.reduce_ms
    }

    /// The scan's share of its floor's speed (1.0: at the roofline).
    pub fn scan_of_floor(&self) -> f64 {
        self.scan_floor_ms / self.scan_ms
    }

    /// The reduction's share of its floor's speed.
    pub fn reduce_of_floor(&self) -> f64 {
        self.reduce_floor_ms / self.reduce_ms
    }

    /// Whether the scan's floor is its combines (`R`) rather than the copy.
    pub fn scan_compute_bound(&self) -> bool {
        self.scan_floor_ms > self.copy_ms
    }

    /// Whether the reduction's floor is its combines (`R`) rather than the read pass.
    pub fn reduce_compute_bound(&self) -> bool {
        self.reduce_floor_ms > self.read_ms
    }

    /// The scan's bandwidth, GB/s (bytes read plus bytes written).
    pub fn scan_gbps(&self) -> f64 {
        2.0 * self.bytes as f64 / self.scan_ms / 1e6
    }

    /// The reduction's bandwidth, GB/s.
    pub fn reduce_gbps(&self) -> f64 {
        self.bytes as f64 / self.reduce_ms / 1e6
    }
}

/// What [`operator`] measured; `Display` prints it as a table.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorReport {
    /// The device (`NVIDIA H100 80GB HBM3 (sm_90)`).
    pub device: String,
    /// The operator's name (`CudaOp::name`).
    pub operator: String,
    /// `size_of` of its element.
    pub elem_bytes: usize,
    /// The scan algorithm measured.
    pub algorithm: Algorithm,
    /// Timed runs behind each median.
    pub reps: usize,
    /// The operator's combine rate on the device, measured in the same run.
    pub rate: CombineRate,
    /// One entry per size, in the order asked for.
    pub points: Vec<OperatorPoint>,
}

impl fmt::Display for OperatorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} on {}: {}-byte elements, scan algorithm {}, medians of {} runs",
            self.operator, self.device, self.elem_bytes, self.algorithm, self.reps
        )?;
        writeln!(
            f,
            "combine rate {}; floors: scan max(copy, 2n / R), reduce max(read pass, n / R)",
            self.rate
        )?;
        writeln!(
            f,
            "{:>11} {:>10} {:>9} {:>8} {:>11} {:>5} {:>8} {:>10} {:>9} {:>8} {:>11} {:>5} {:>8}",
            "n",
            "scan ms",
            "GB/s",
            "of copy",
            "floor ms",
            "bound",
            "of floor",
            "reduce ms",
            "GB/s",
            "of read",
            "floor ms",
            "bound",
            "of floor"
        )?;
        let bound = |compute: bool, memory: &'static str| if compute { "R" } else { memory };
        for p in &self.points {
            writeln!(
                f,
                "{:>11} {:>10.4} {:>9.1} {:>8.3} {:>11.4} {:>5} {:>8.3} {:>10.4} {:>9.1} {:>8.3} {:>11.4} {:>5} {:>8.3}",
                p.n,
                p.scan_ms,
                p.scan_gbps(),
                p.scan_of_copy(),
                p.scan_floor_ms,
                bound(p.scan_compute_bound(), "copy"),
                p.scan_of_floor(),
                p.reduce_ms,
                p.reduce_gbps(),
                p.reduce_of_read(),
                p.reduce_floor_ms,
                bound(p.reduce_compute_bound(), "read"),
                p.reduce_of_floor()
            )?;
        }
        Ok(())
    }
}

/// Times `m`'s inclusive scan and reduction on the first `n` elements of `input`, for every
/// `n` in `sizes`, each beside its memory floor measured in the same run on the same device
/// (a device-to-device copy of the same bytes for the scan, a read pass for the reduction)
/// and beside its roofline floor: `max(copy, 2n combines at R)` for the scan, `max(read pass,
/// n combines at R)` for the reduction, where R is `m`'s combine rate, measured first
/// ([`combine_rate`], seeded from the first elements of `input`).
///
/// `input` (not empty) is uploaded once; `timer` sets the device, the repetitions and the
/// hold ([`Timer`]). The scan uses the default algorithm ([`Algorithm::Auto`]). Sizes of 0 or
/// beyond `input.len()` are [`Error::InvalidArgument`].
///
/// ```
/// use monoscan::{bench::{self, Timer}, Gpu, ops::Sum};
/// # fn main() -> monoscan::Result<()> {
/// # let gpu = match Gpu::new(0) { Ok(g) => g, Err(e) if e.is_unavailable() && std::env::var("MONOSCAN_REQUIRE_GPU").as_deref() != Ok("1") => { println!("skipped: {e}"); return Ok(()) }, Err(e) => return Err(e) };
/// let xs: Vec<u32> = (0..1 << 20).collect();
/// let report = bench::operator(&Timer::new(&gpu).reps(5), &Sum::<u32>::new(), &xs, &[1 << 16, 1 << 20])?;
/// print!("{report}");
/// assert_eq!(report.points.len(), 2);
/// # Ok(())
/// # }
/// ```
pub fn operator<M: Monoid>(
    timer: &Timer<'_>,
    m: &M,
    input: &[M::Elem],
    sizes: &[usize],
) -> Result<OperatorReport> {
    if input.is_empty() {
        return Err(Error::invalid(
            "bench::operator needs at least one input element (the combine rate is measured on them)",
        ));
    }
    if let Some(&bad) = sizes.iter().find(|&&n| n == 0 || n > input.len()) {
        return Err(Error::invalid(format!(
            "a size of {bad}: expected 1 to the input's {} elements",
            input.len()
        )));
    }
    let gpu = timer.gpu;
    let elem = std::mem::size_of::<M::Elem>();
    let stream = gpu.stream();
    let rate = combine_rate(timer, m, &input[..input.len().min(4096)])?;
    let data = gpu.upload(input)?;
    let scanner = gpu.scanner(m);
    scanner.prepare()?;
    let mut total = gpu.upload(&[m.identity()])?;
    let mut points = Vec::with_capacity(sizes.len());
    for &n in sizes {
        let bytes = n * elem;
        let view = data.slice(0..n);
        let mut out = scanner.alloc_filled(n, m.identity())?;
        let scan = timer.time(|| scanner.inclusive(&view, &mut out))?;
        let reduce = timer.time(|| scanner.reduce(&view, &mut total))?;
        let copy = timer.copy(bytes)?.median_ms();
        let read = timer.read_pass(bytes)?.median_ms();
        points.push(OperatorPoint {
            n,
            bytes: bytes as u64,
            scan_ms: scan.median_ms(),
            copy_ms: copy,
            reduce_ms: reduce.median_ms(),
            read_ms: read,
            scan_floor_ms: rate.scan_floor_ms(n as u64, copy),
            reduce_floor_ms: rate.reduce_floor_ms(n as u64, read),
        });
    }
    stream.synchronize()?;
    let info = gpu.info();
    Ok(OperatorReport {
        device: format!("{} (sm_{})", info.name, info.cc),
        operator: m.cuda().name,
        elem_bytes: elem,
        algorithm: Algorithm::Auto,
        reps: timer.reps,
        rate,
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::codegen::CombineForm;

    fn rate(per_second: f64) -> CombineRate {
        CombineRate {
            per_second,
            ms: 2.0,
            combines: 4_000_000_000,
            rounds: 1000,
            blocks: 1056,
            threads_per_block: 256,
            chains: 8,
            combine: CombineForm::Inline,
            shapes: vec![(8, per_second)],
        }
    }

    fn point(n: usize, scan_ms: f64, copy_ms: f64, r: &CombineRate) -> OperatorPoint {
        let (reduce_ms, read_ms) = (scan_ms / 2.0, copy_ms / 4.0);
        OperatorPoint {
            n,
            bytes: (n * 4) as u64,
            scan_ms,
            copy_ms,
            reduce_ms,
            read_ms,
            scan_floor_ms: r.scan_floor_ms(n as u64, copy_ms),
            reduce_floor_ms: r.reduce_floor_ms(n as u64, read_ms),
        }
    }

    #[test]
    fn fractions_and_bandwidths_follow_the_definitions() {
        // 2^20 u32 = 4 MiB: a scan moves 8 MiB.
        let fast = rate(1e13);
        let p = point(1 << 20, 0.02, 0.016, &fast);
        assert!((p.scan_of_copy() - 0.8).abs() < 1e-12);
        assert!((p.reduce_of_read() - 0.4).abs() < 1e-12);
        // At 10^13 combines per second the memory binds: the floors are the copy and the read.
        assert_eq!((p.scan_floor_ms, p.reduce_floor_ms), (0.016, 0.004));
        assert_eq!(p.scan_of_floor(), p.scan_of_copy());
        assert_eq!(p.reduce_of_floor(), p.reduce_of_read());
        assert!(!p.scan_compute_bound() && !p.reduce_compute_bound());
        // At 2^30 per second, 2^21 combines take 1/512 s = 1.953125 ms: the combines bind,
        // and the scan (0.02 ms) would be 97.65625 times faster than its floor.
        let slow = rate((1u64 << 30) as f64);
        let q = point(1 << 20, 0.02, 0.016, &slow);
        assert!((q.scan_floor_ms - 1.953_125).abs() < 1e-12);
        assert!((q.reduce_floor_ms - 0.976_562_5).abs() < 1e-12);
        assert!((q.scan_of_floor() - 97.656_25).abs() < 1e-9);
        assert!((q.reduce_of_floor() - 97.656_25).abs() < 1e-9);
        assert!(q.scan_compute_bound() && q.reduce_compute_bound());
        assert!((p.scan_gbps() - 2.0 * 4_194_304.0 / 0.02 / 1e6).abs() < 1e-9);
        assert!((p.reduce_gbps() - 4_194_304.0 / 0.01 / 1e6).abs() < 1e-9);
    }

    #[test]
    fn the_table_has_one_line_per_size() {
        let report = OperatorReport {
            device: "a device (sm_90)".into(),
            operator: "my_op".into(),
            elem_bytes: 4,
            algorithm: Algorithm::Auto,
            reps: 5,
            rate: rate(1e9),
            points: vec![
                point(1024, 0.004, 0.003, &rate(1e9)),
                point(1 << 20, 0.02, 0.016, &rate(1e9)),
            ],
        };
        let text = report.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3 + report.points.len(), "{text}");
        assert!(lines[0].starts_with("my_op on a device (sm_90): 4-byte elements"));
        assert!(
            lines[1].starts_with("combine rate R = 1.0000e9 combines/s"),
            "{text}"
        );
        assert!(lines[2].contains("of floor"), "{text}");
        // 2^20 elements at 10^9 combines per second: 2.097152 ms to scan, the combines bind.
        let row: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(row[0], "1048576", "{text}");
        assert_eq!(&row[3..7], ["0.800", "2.0972", "R", "104.858"], "{text}");
    }
}
