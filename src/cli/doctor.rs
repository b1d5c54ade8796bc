//! `monoscan doctor`: is everything monoscan needs here? One line per check: ok, or the
//! problem and its fix.

use super::{human_bytes, write_stdout, CliError};
use monoscan::cache::KernelCache;

fn line(ok: bool, what: &str, detail: &str) -> String {
    format!("[{}] {what}: {detail}\n", if ok { " ok " } else { "FAIL" })
}

/// Runs `monoscan doctor`: prints every check, then fails (exit status 1) when any check
/// failed, so that a script can test for a usable GPU. The CPU backend works either way.
pub fn doctor() -> Result<(), CliError> {
    let mut out = String::new();
    // Driver.
    let driver = monoscan::driver_present();
    out += &line(
        driver,
        "CUDA driver",
        if driver {
            "libcuda.so loads"
        } else {
            "libcuda.so not found: install the NVIDIA driver to use a GPU (the CPU backend works without it)"
        },
    );
    // NVRTC.
    match monoscan::jit::nvrtc() {
        Ok(info) => {
            let place = info
                .located
                .dir
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| "the loader's search path".to_string());
            let archs: Vec<String> = info.archs.iter().map(|a| format!("sm_{a}")).collect();
            out += &line(
                true,
                "NVRTC",
                &format!(
                    "version {}.{} from {place}; compiles for {}",
                    info.version.0,
                    info.version.1,
                    archs.join(" ")
                ),
            );
        }
        Err(e) => {
            out += &line(false, "NVRTC", &e.to_string());
            // The error names the first few places; here is every one.
            if let monoscan::Error::NoNvrtc { searched, .. } = &e {
                out += "       searched, in order:\n";
                for place in searched {
                    out += &format!("         {}\n", place.display());
                }
            }
        }
    }
    // Devices.
    if driver {
        match monoscan::device_count() {
            Ok(0) => out += &line(false, "devices", "the driver sees no CUDA device"),
            Ok(n) => {
                for ordinal in 0..n {
                    match monoscan::Gpu::new(ordinal) {
                        Ok(g) => {
                            let i = g.info();
                            out += &line(
                                true,
                                &format!("device {ordinal}"),
                                &format!(
                                    "{} (sm_{}, {} SMs, {}, peak DRAM {} GB/s; shared memory {} KiB per block, {} KiB opted in, {} KiB per SM); kernels compile to {}",
                                    i.name,
                                    i.cc,
                                    i.sm_count,
                                    human_bytes(i.total_mem as u64),
                                    i.mem_gbps,
                                    i.limits.shared_per_block / 1024,
                                    i.limits.shared_per_block_optin / 1024,
                                    i.limits.shared_per_sm / 1024,
                                    g.target().arch()
                                ),
                            );
                        }
                        Err(e) => out += &line(false, &format!("device {ordinal}"), &e.to_string()),
                    }
                }
            }
            Err(e) => out += &line(false, "devices", &e.to_string()),
        }
    } else {
        out += &line(false, "devices", "none visible without a driver");
    }
    // Tuning.
    out += &line(
        true,
        "tuning",
        &format!(
            "{} (the defaults; `monoscan bench --help` lists the flags that change them)",
            monoscan::tuning::Tuning::default()
        ),
    );
    // Cache.
    let cache = KernelCache::global();
    match cache.dir() {
        None => {
            out += &line(
                true,
                "kernel cache",
                "disk cache off (MONOSCAN_CACHE_DIR=off): memory only",
            )
        }
        Some(dir) => {
            let probe = dir.join(".monoscan-doctor-probe");
            let writable = std::fs::create_dir_all(dir)
                .and_then(|_| std::fs::write(&probe, b"ok"))
                .is_ok();
            let _ = std::fs::remove_file(&probe);
            let (count, bytes) = cache
                .list()
                .map(|l| (l.len(), l.iter().map(|e| e.1).sum::<u64>()))
                .unwrap_or((0, 0));
            let detail = if writable {
                format!(
                    "{} writable; {count} module(s), {}",
                    dir.display(),
                    human_bytes(bytes)
                )
            } else {
                format!(
                    "{} is not writable: kernels will be cached in memory only; set MONOSCAN_CACHE_DIR to a writable folder",
                    dir.display()
                )
            };
            out += &line(writable, "kernel cache", &detail);
        }
    }
    let failed = out.lines().filter(|l| l.starts_with("[FAIL]")).count();
    write_stdout(&out)?;
    if failed > 0 {
        return Err(CliError::Runtime(format!(
            "{failed} check(s) failed: the GPU path is not usable here (`monoscan run --backend cpu` works without it)"
        )));
    }
    Ok(())
}
