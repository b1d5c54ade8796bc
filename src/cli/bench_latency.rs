//! `monoscan bench`'s latency lines: a small scan's end-to-end time beside the platform's
//! launch floor, and how long calls take to return.

use super::CliError;
use monoscan::ops::Sum;
use monoscan::Gpu;

/// End-to-end wall time of one small scan (launch + synchronize), beside the same for a
/// kernel that does nothing (the platform's floor): medians of 500. Then the host's share:
/// how long a scan call (2^10 and 2^20 elements) and a device-to-device copy take to return.
pub(super) fn latency(gpu: &Gpu) -> Result<String, CliError> {
    let m = Sum::<i32>::new();
    let xs: Vec<i32> = (0..1024).collect();
    let s = gpu.stream();
    let input = s.clone_htod(&xs)?;
    let mut out = s.clone_htod(&xs)?;
    let empty = s.clone_htod(&xs[..0])?;
    let mut total = s.clone_htod(&[0i32])?;
    let scanner = gpu.scanner(&m);
    scanner.prepare()?;
    // Median microseconds of 500 calls after 50 untimed ones, each call followed by a
    // synchronize: timed with it (`with_sync`: the end-to-end latency) or without it (the
    // host's share: how long the call takes to return, as it only enqueues, on an idle GPU).
    let median_us =
        |f: &mut dyn FnMut() -> monoscan::Result<()>, with_sync: bool| -> Result<f64, CliError> {
            let mut ts = Vec::with_capacity(500);
            for i in 0..550 {
                let t = std::time::Instant::now();
                f()?;
                let returned = t.elapsed();
                gpu.synchronize()?;
                let us = if with_sync { t.elapsed() } else { returned }.as_secs_f64() * 1e6;
                if i >= 50 {
                    ts.push(us);
                }
            }
            ts.sort_by(f64::total_cmp);
            Ok(ts[ts.len() / 2])
        };
    let scan = median_us(&mut || scanner.inclusive(&input, &mut out), true)?;
    let nothing = median_us(&mut || scanner.reduce(&empty, &mut total), true)?;
    let big: Vec<i32> = (0..1 << 20).collect();
    let big_in = s.clone_htod(&big)?;
    let mut big_out = s.clone_htod(&big)?;
    let host_small = median_us(&mut || scanner.inclusive(&input, &mut out), false)?;
    let host_big = median_us(&mut || scanner.inclusive(&big_in, &mut big_out), false)?;
    let host_copy = median_us(
        &mut || {
            s.memcpy_dtod(&big_in, &mut big_out)?;
            Ok(())
        },
        false,
    )?;
    Ok(format!(
        "latency: inclusive scan of 2^10 i32 (one launch), launch + synchronize: median {scan:.1} us; a launch of a kernel that writes one element: {nothing:.1} us\n\
         host time to enqueue (the call's return, no synchronize; median of 500): scan of 2^10 i32 {host_small:.2} us, of 2^20 {host_big:.2} us; a device-to-device copy of 4 MiB {host_copy:.2} us\n"
    ))
}
