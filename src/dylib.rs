//! Checking the CUDA driver and NVRTC libraries before cudarc calls through them.
//!
//! cudarc opens `libcuda` and `libnvrtc` by name on first use and resolves each function the
//! first time it is called, panicking when the library lacks it. A library that loads but is
//! not the real one (a container's placeholder `libcuda.so.1`, a stub, a build of another
//! major version) would so abort a call deep inside cudarc. [`probe`] opens the library by the
//! same names, in the same order, and resolves every function monoscan reaches through cudarc
//! before anything calls it: a missing function becomes an error that names the library and the
//! functions, and a library that exists but fails to load keeps the loader's own words instead
//! of reading as "not found".

use crate::error::{Error, Result};
use std::error::Error as _;
use std::sync::{Mutex, OnceLock};

/// The driver functions monoscan reaches, directly or through cudarc's safe layer: device
/// discovery and properties, the primary context, the memory pool, modules and functions,
/// occupancy, launches, stream-ordered memory, streams and events, error strings, TMA
/// descriptors. Every driver able to run CUDA 13 kernels has all of them.
pub(crate) const DRIVER_FUNCTIONS: &[&str] = &[
    "cuInit",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetName",
    "cuDeviceTotalMem_v2",
    "cuDeviceGetDefaultMemPool",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemGetInfo_v2",
    "cuMemPoolSetAttribute",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuModuleGetGlobal_v2",
    "cuFuncGetAttribute",
    "cuFuncSetAttribute",
    "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cuLaunchKernel",
    "cuMemAllocAsync",
    "cuMemFreeAsync",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8Async",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventDestroy_v2",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuTensorMapEncodeTiled",
];

/// The NVRTC functions monoscan calls (`jit`, and cudarc's `nvrtc::result` underneath).
pub(crate) const NVRTC_FUNCTIONS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcGetNumSupportedArchs",
    "nvrtcGetSupportedArchs",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
    "nvrtcDestroyProgram",
];

/// What opening a library by cudarc's names found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Probe {
    /// A library loaded under `name`, and it has every function asked for.
    Usable {
        /// The name it loaded under (`libcuda.so.1`).
        name: String,
    },
    /// No library by any of the names.
    Absent,
    /// A library exists but cannot be used: the loader's error for each name that found a
    /// file that failed to load, or the functions the first library that loaded lacks.
    Broken(String),
}

/// Opens the library `lib` (`"cuda"`, `"nvrtc"`, `"nccl"`) by the names cudarc tries, in its
/// order, and resolves `functions` in the first one that loads (the one cudarc would use).
pub(crate) fn probe(lib: &str, functions: &[&str]) -> Probe {
    probe_names(&candidates(lib), functions)
}

/// The names under which cudarc's dynamic loading opens `lib`, in its order (cudarc 0.19's
/// `get_lib_name_candidates`), for the CUDA version cudarc was built for.
///
/// cudarc offers that list only when it loads the libraries itself; when the application links
/// them instead (cudarc's `dynamic-linking`), the list is still the right one to probe: the
/// linked libraries are resident under these sonames (`libcuda.so.1`, `libnvrtc.so.13`).
pub(crate) fn candidates(lib: &str) -> Vec<String> {
    use std::env::consts::{DLL_PREFIX as P, DLL_SUFFIX as S};
    let version = cudarc::driver::sys::CUDA_VERSION;
    let (major, minor) = (version / 1000, version % 1000 / 10);
    let w = usize::BITS;
    [
        format!("{P}{lib}{S}"),
        format!("{P}{lib}{w}{S}"),
        format!("{P}{lib}{w}_{major}{S}"),
        format!("{P}{lib}{w}_{major}{minor}{S}"),
        format!("{P}{lib}{w}_{major}{minor}_0{S}"),
        format!("{P}{lib}{w}_{major}0_{minor}{S}"),
        format!("{P}{lib}{w}_10{S}"),
        format!("{P}{lib}{w}_11{S}"),
        format!("{P}{lib}{w}_12{S}"),
        format!("{P}{lib}{w}_{major}0_0{S}"),
        format!("{P}{lib}{w}_9{S}"),
        format!("{P}{lib}{S}.{major}"),
        format!("{P}{lib}{S}.12"),
        format!("{P}{lib}{S}.11"),
        format!("{P}{lib}{S}.10"),
        format!("{P}{lib}{S}.9"),
        format!("{P}{lib}{S}.1"),
    ]
    .into()
}

/// [`probe`] over explicit names or paths.
pub(crate) fn probe_names(names: &[String], functions: &[&str]) -> Probe {
    let mut failures = Vec::new();
    for name in names {
        // SAFETY: the candidates are the CUDA driver's or NVRTC's names, as cudarc opens them
        // itself; their initialisers have no preconditions. The handle is dropped at the end
        // of this iteration, and nothing resolved through it outlives it.
        let lib = match unsafe { libloading::Library::new(name) } {
            Ok(lib) => lib,
            Err(e) => {
                let why = describe(&e);
                if !is_not_found(&why) {
                    failures.push(why);
                }
                continue;
            }
        };
        let mut missing = Vec::new();
        let mut first_error = None;
        for f in functions {
            // SAFETY: the symbol is only looked up, never called or dereferenced; the type is
            // a plain function pointer, as the symbols are functions.
            if let Err(e) = unsafe { lib.get::<unsafe extern "C" fn()>(f.as_bytes()) } {
                missing.push(*f);
                first_error.get_or_insert_with(|| describe(&e));
            }
        }
        let Some(first_error) = first_error else {
            keep(lib);
            return Probe::Usable { name: name.clone() };
        };
        let shown = &missing[..missing.len().min(4)];
        let more = match missing.len() - shown.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        return Probe::Broken(format!(
            "{name} loaded but lacks {} of the {} functions monoscan needs: {}{more} \
             ({first_error})",
            missing.len(),
            functions.len(),
            shown.join(", ")
        ));
    }
    if failures.is_empty() {
        Probe::Absent
    } else {
        failures.dedup();
        Probe::Broken(failures.join("; "))
    }
}

/// Keeps a checked library loaded for the life of the process, so that cudarc's own open of
/// the same name finds it resident instead of loading it again.
fn keep(lib: libloading::Library) {
    static KEPT: Mutex<Vec<libloading::Library>> = Mutex::new(Vec::new());
    KEPT.lock().unwrap_or_else(|p| p.into_inner()).push(lib);
}

/// Whether the CUDA driver is usable, checked once per process: `Err(NoDriver)` with the
/// loader's words when a library exists but cannot be used.
pub(crate) fn check_driver() -> Result<()> {
    static RESULT: OnceLock<Probe> = OnceLock::new();
    match RESULT.get_or_init(|| probe("cuda", DRIVER_FUNCTIONS)) {
        Probe::Usable { .. } => Ok(()),
        Probe::Absent => Err(Error::NoDriver { detail: None }),
        Probe::Broken(why) => Err(Error::NoDriver {
            detail: Some(why.clone()),
        }),
    }
}

/// The loader's message for `e` (libloading's own `Display` only says "dlopen failed").
pub(crate) fn describe(e: &libloading::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text = s.to_string();
        source = s.source();
    }
    text
}

/// Whether a loader message means that no file of that name was found (as opposed to a file
/// that failed to load).
pub(crate) fn is_not_found(message: &str) -> bool {
    message.contains("No such file or directory")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// monoscan's list is cudarc's, for the same CUDA version. (This test needs cudarc's
    /// loading mode, which `cargo test` of monoscan always has: it links nothing itself.)
    #[test]
    fn the_names_are_cudarc_s() {
        for lib in ["cuda", "nvrtc", "nccl"] {
            assert_eq!(candidates(lib), cudarc::get_lib_name_candidates(lib));
        }
    }

    #[test]
    fn names_that_match_nothing_are_absent() {
        let names = vec!["libmonoscan-no-such-library.so.7".to_string()];
        assert_eq!(probe_names(&names, &["f"]), Probe::Absent);
        assert_eq!(probe_names(&[], &["f"]), Probe::Absent);
    }

    #[test]
    fn a_file_that_is_no_library_keeps_the_loader_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libcuda.so.1");
        std::fs::write(
            &path,
            b"not an ELF file, and long enough to have a header...",
        )
        .unwrap();
        let names = vec![path.display().to_string()];
        match probe_names(&names, &["cuInit"]) {
            Probe::Broken(why) => assert!(why.contains("libcuda.so.1"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_library_without_the_functions_names_them() {
        // The C library is loaded in every process and has `malloc`, not `cuInit`.
        let names = vec!["libc.so.6".to_string()];
        assert_eq!(
            probe_names(&names, &["malloc"]),
            Probe::Usable {
                name: "libc.so.6".into()
            }
        );
        match probe_names(&names, &["malloc", "cuInit", "cuDeviceGet"]) {
            Probe::Broken(why) => {
                assert!(why.contains("lacks 2 of the 3"), "{why}");
                assert!(
                    why.contains("cuInit") && why.contains("cuDeviceGet"),
                    "{why}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
