//! Shared by the examples: open the GPU when there is one, say so when there is not, time things.
#![allow(dead_code)]

use monoscan::Gpu;
use std::time::Instant;

/// The GPU, or `None` after printing why the examples run on the CPU only.
pub fn gpu() -> Option<Gpu> {
    match Gpu::new(0) {
        Ok(g) => {
            println!("GPU: {} (sm_{})", g.info().name, g.info().cc);
            Some(g)
        }
        Err(e) if e.is_unavailable() => {
            println!("no GPU here ({e}); running on the CPU backend only");
            None
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

/// Runs `f` once and returns its result and wall time in milliseconds.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64() * 1e3)
}

/// Exits with a message unless `ok`.
pub fn check(ok: bool, what: &str) {
    if ok {
        println!("check: {what}: ok");
    } else {
        eprintln!("check FAILED: {what}");
        std::process::exit(1);
    }
}
