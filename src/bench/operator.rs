//! Benchmarking any operator: its scan beside a copy of the same bytes, its reduction beside a
//! read pass of them.

use super::Timer;
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
    /// Median device time of one read of `bytes` bytes, ms: the reduction's floor.
    pub read_ms: f64,
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
            "{:>11} {:>10} {:>9} {:>8} {:>10} {:>9} {:>8}",
            "n", "scan ms", "GB/s", "of copy", "reduce ms", "GB/s", "of read"
        )?;
        for p in &self.points {
            writeln!(
                f,
                "{:>11} {:>10.4} {:>9.1} {:>8.3} {:>10.4} {:>9.1} {:>8.3}",
                p.n,
                p.scan_ms,
                p.scan_gbps(),
                p.scan_of_copy(),
                p.reduce_ms,
                p.reduce_gbps(),
                p.reduce_of_read()
            )?;
        }
        Ok(())
    }
}

/// Times `m`'s inclusive scan and reduction on the first `n` elements of `input`, for every
/// `n` in `sizes`, each beside its memory floor measured in the same run on the same device:
/// a device-to-device copy of the same bytes for the scan, a read pass for the reduction.
///
/// `input` is uploaded once; `timer` sets the device, the repetitions and the hold
/// ([`Timer`]). The scan uses the default algorithm ([`Algorithm::Auto`]). Sizes of 0 or
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
    if let Some(&bad) = sizes.iter().find(|&&n| n == 0 || n > input.len()) {
        return Err(Error::invalid(format!(
            "a size of {bad}: expected 1 to the input's {} elements",
            input.len()
        )));
    }
    let gpu = timer.gpu;
    let elem = std::mem::size_of::<M::Elem>();
    let stream = gpu.stream();
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
        let copy = timer.copy(bytes)?;
        let read = timer.read_pass(bytes)?;
        points.push(OperatorPoint {
            n,
            bytes: bytes as u64,
            scan_ms: scan.median_ms(),
            copy_ms: copy.median_ms(),
            reduce_ms: reduce.median_ms(),
            read_ms: read.median_ms(),
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
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(n: usize, scan_ms: f64, copy_ms: f64) -> OperatorPoint {
        OperatorPoint {
            n,
            bytes: (n * 4) as u64,
            scan_ms,
            copy_ms,
            reduce_ms: scan_ms / 2.0,
            read_ms: copy_ms / 4.0,
        }
    }

    #[test]
    fn fractions_and_bandwidths_follow_the_definitions() {
        // 2^20 u32 = 4 MiB: a scan moves 8 MiB.
        let p = point(1 << 20, 0.02, 0.016);
        assert!((p.scan_of_copy() - 0.8).abs() < 1e-12);
        assert!((p.reduce_of_read() - 0.4).abs() < 1e-12);
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
            points: vec![point(1024, 0.004, 0.003), point(1 << 20, 0.02, 0.016)],
        };
        let text = report.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2 + report.points.len(), "{text}");
        assert!(lines[0].starts_with("my_op on a device (sm_90): 4-byte elements"));
        assert!(lines[3].trim_start().starts_with("1048576"), "{text}");
        assert!(lines[3].contains("0.800"), "{text}");
    }
}
