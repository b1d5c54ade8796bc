//! Finding and loading NVRTC.
//!
//! cudarc opens NVRTC by name (`libnvrtc.so.13`), and NVRTC itself opens
//! `libnvrtc-builtins.so.13.0` by name, both through the loader's search path. When the library
//! sits in a folder that is not on that path (a pip wheel, a toolkit in a custom place), monoscan
//! opens both files by full path first, builtins first, with `RTLD_GLOBAL`: later opens by name
//! then find the already-loaded libraries by their sonames. No `LD_LIBRARY_PATH` is needed.
//!
//! Places tried, in order: `MONOSCAN_NVRTC_DIR`; the loader's own search path; `CUDA_PATH`,
//! `CUDA_HOME` and `/usr/local/cuda` (their `lib64`/`lib`); the `nvidia/cu13/lib` and
//! `nvidia/cuda_nvrtc/lib` folders of the Python environments monoscan can see (virtualenv,
//! conda, pyenv, user and system site-packages).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where NVRTC was found.
#[derive(Debug, Clone)]
pub struct Located {
    /// The folder the library was loaded from (`None`: found by name on the loader's path).
    pub dir: Option<PathBuf>,
}

/// Loads NVRTC once per process; the places searched, on failure.
pub fn locate() -> Result<Located, Vec<PathBuf>> {
    static RESULT: OnceLock<Result<Located, Vec<PathBuf>>> = OnceLock::new();
    RESULT.get_or_init(search).clone()
}

fn search() -> Result<Located, Vec<PathBuf>> {
    let mut tried = Vec::new();
    if let Some(dir) = std::env::var_os("MONOSCAN_NVRTC_DIR").map(PathBuf::from) {
        if preload(&dir) {
            return Ok(Located { dir: Some(dir) });
        }
        tried.push(dir);
    }
    // SAFETY: `is_culib_present` only tries to open the library by its candidate names.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Ok(Located { dir: None });
    }
    tried.push(PathBuf::from(
        "(loader search path: LD_LIBRARY_PATH, ldconfig)",
    ));
    for dir in candidate_dirs() {
        if preload(&dir) {
            return Ok(Located { dir: Some(dir) });
        }
        tried.push(dir);
    }
    Err(tried)
}

fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = std::env::var_os(var).map(PathBuf::from) {
            dirs.push(root.join("lib64"));
            dirs.push(root.join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    let mut site_roots: Vec<PathBuf> = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV").map(PathBuf::from) {
        site_roots.push(venv.join("lib"));
    }
    if let Some(home) = dirs::home_dir() {
        site_roots.push(home.join(".local/lib"));
    }
    for var in ["CONDA_PREFIX", "PYENV_ROOT"] {
        if let Some(root) = std::env::var_os(var).map(PathBuf::from) {
            site_roots.push(root.join("lib"));
        }
    }
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".pyenv")));
    if let Some(versions) = pyenv.map(|p| p.join("versions")) {
        if let Ok(entries) = std::fs::read_dir(versions) {
            let mut vs: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("lib")).collect();
            vs.sort();
            site_roots.extend(vs);
        }
    }
    site_roots.push(PathBuf::from("/usr/local/lib"));
    site_roots.push(PathBuf::from("/usr/lib"));
    for root in site_roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("python3"))
            })
            .collect();
        pythons.sort();
        for py in pythons {
            for pkgs in ["site-packages", "dist-packages"] {
                dirs.push(py.join(pkgs).join("nvidia/cu13/lib"));
                dirs.push(py.join(pkgs).join("nvidia/cuda_nvrtc/lib"));
            }
        }
    }
    dirs
}

/// Opens the builtins and NVRTC in `dir` by full path; true when NVRTC is then usable.
fn preload(dir: &Path) -> bool {
    static KEEP: std::sync::Mutex<Vec<libloading::os::unix::Library>> =
        std::sync::Mutex::new(Vec::new());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut builtins = Vec::new();
    let mut nvrtc = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.contains(".alt.") {
            continue;
        }
        if name.starts_with("libnvrtc-builtins.so") {
            builtins.push(e.path());
        } else if name.starts_with("libnvrtc.so") {
            nvrtc.push(e.path());
        }
    }
    // Prefer the most specific names (libnvrtc.so.13 over libnvrtc.so).
    builtins.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    nvrtc.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    let (Some(b), Some(n)) = (builtins.first(), nvrtc.first()) else {
        return false;
    };
    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL;
    let mut keep = KEEP.lock().unwrap_or_else(|p| p.into_inner());
    for path in [b, n] {
        // SAFETY: NVRTC and its builtins are plain C libraries whose initialisers have no
        // preconditions; the handles are kept for the life of the process, so nothing loaded
        // from them is ever unloaded.
        match unsafe { libloading::os::unix::Library::open(Some(path), flags) } {
            Ok(lib) => keep.push(lib),
            Err(_) => return false,
        }
    }
    // SAFETY: only tries to open the library by name; it is resident now.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}
