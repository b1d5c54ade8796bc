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
//! conda, pyenv, user and system site-packages). Variables that are empty or name a relative
//! folder are ignored.
//!
//! A library that loads is checked for every function monoscan calls before anything calls it
//! (see `crate::dylib`); one that exists but fails to load, or lacks functions, is reported with
//! the loader's words rather than as "not found". A library in `MONOSCAN_NVRTC_DIR` is checked
//! by its own path, and when it is broken that is the error: the search does not go on to
//! whatever NVRTC the loader's path or a toolkit holds.

use crate::dylib::{self, Probe};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where NVRTC was found.
#[derive(Debug, Clone)]
pub struct Located {
    /// The folder the library was loaded from (`None`: found by name on the loader's path).
    pub dir: Option<PathBuf>,
}

/// Why NVRTC is not usable.
#[derive(Debug, Clone)]
pub struct Missing {
    /// The places searched.
    pub searched: Vec<PathBuf>,
    /// The loader's errors for libraries that exist but failed to load, or the functions a
    /// loaded library lacks (`None`: no library anywhere).
    pub detail: Option<String>,
}

/// Loads NVRTC once per process and checks that it has every function monoscan calls; the
/// places searched and what went wrong, on failure.
pub fn locate() -> Result<Located, Missing> {
    static RESULT: OnceLock<Result<Located, Missing>> = OnceLock::new();
    RESULT
        .get_or_init(|| search(&|var| std::env::var_os(var), dirs::home_dir()))
        .clone()
}

/// The entry for the loader's own search in the list of places searched.
const LOADER_PATH: &str = "(loader search path: LD_LIBRARY_PATH, ldconfig)";

fn search(
    env: &dyn Fn(&str) -> Option<OsString>,
    home: Option<PathBuf>,
) -> Result<Located, Missing> {
    let mut tried = Vec::new();
    let mut broken = Vec::new();
    let mut places: Vec<Option<PathBuf>> = Vec::new();
    let explicit = env("MONOSCAN_NVRTC_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    places.extend(explicit.iter().cloned().map(Some));
    // `None` stands for the loader's own search path.
    places.push(None);
    places.extend(candidate_dirs(env, home).into_iter().map(Some));
    for place in places {
        let Some(dir) = place else {
            // The loader's own search path, by the names cudarc opens.
            match dylib::probe("nvrtc", dylib::NVRTC_FUNCTIONS) {
                Probe::Usable { .. } => return Ok(Located { dir: None }),
                // cudarc would open this very library: nothing found later could be used.
                Probe::Broken(why) => {
                    tried.push(PathBuf::from(LOADER_PATH));
                    broken.push(why);
                    return Err(missing(tried, broken));
                }
                Probe::Absent => {
                    tried.push(PathBuf::from(LOADER_PATH));
                    continue;
                }
            }
        };
        let chosen = explicit.as_ref() == Some(&dir);
        let found = match preload(&dir) {
            Preload::Absent => Probe::Absent,
            // The folder the user named holds a library that does not load: that is the error.
            Preload::Broken(why) if chosen => Probe::Broken(why),
            Preload::Broken(why) => {
                broken.push(why);
                Probe::Absent
            }
            // The named folder's own library is checked by its path first: the probe by name
            // could find another NVRTC (`libnvrtc.so` of a toolkit) before it.
            Preload::Loaded(file) if chosen => match dylib::probe_names(
                &[file.to_string_lossy().into_owned()],
                dylib::NVRTC_FUNCTIONS,
            ) {
                Probe::Usable { .. } => dylib::probe("nvrtc", dylib::NVRTC_FUNCTIONS),
                other => other,
            },
            Preload::Loaded(_) => dylib::probe("nvrtc", dylib::NVRTC_FUNCTIONS),
        };
        match found {
            Probe::Usable { .. } => return Ok(Located { dir: Some(dir) }),
            // The named folder's library, or one loaded globally under its soname, which cudarc
            // would open: stop here.
            Probe::Broken(why) => {
                tried.push(dir);
                broken.push(why);
                return Err(missing(tried, broken));
            }
            Probe::Absent => tried.push(dir),
        }
    }
    Err(missing(tried, broken))
}

fn missing(searched: Vec<PathBuf>, broken: Vec<String>) -> Missing {
    Missing {
        searched,
        detail: (!broken.is_empty()).then(|| broken.join("; ")),
    }
}

/// The value of the variable `var` as a folder, when it names an absolute one. Empty and
/// relative values are ignored: an empty `CUDA_PATH` must not make the loader look in `./lib64`
/// of whatever the working directory is.
fn absolute_var(env: &dyn Fn(&str) -> Option<OsString>, var: &str) -> Option<PathBuf> {
    env(var).map(PathBuf::from).filter(|p| p.is_absolute())
}

fn candidate_dirs(env: &dyn Fn(&str) -> Option<OsString>, home: Option<PathBuf>) -> Vec<PathBuf> {
    let home = home.filter(|h| h.is_absolute());
    let mut dirs = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = absolute_var(env, var) {
            dirs.push(root.join("lib64"));
            dirs.push(root.join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    let mut site_roots: Vec<PathBuf> = Vec::new();
    if let Some(venv) = absolute_var(env, "VIRTUAL_ENV") {
        site_roots.push(venv.join("lib"));
    }
    if let Some(home) = &home {
        site_roots.push(home.join(".local/lib"));
    }
    for var in ["CONDA_PREFIX", "PYENV_ROOT"] {
        if let Some(root) = absolute_var(env, var) {
            site_roots.push(root.join("lib"));
        }
    }
    let pyenv = absolute_var(env, "PYENV_ROOT").or_else(|| home.as_ref().map(|h| h.join(".pyenv")));
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

/// What opening the libraries of one folder found.
enum Preload {
    /// The folder holds no NVRTC (or is no folder).
    Absent,
    /// Both libraries loaded: the path of NVRTC itself.
    Loaded(PathBuf),
    /// A library is there but failed to load: the loader's words.
    Broken(String),
}

/// Opens the builtins and NVRTC in `dir` by full path, with `RTLD_GLOBAL`.
fn preload(dir: &Path) -> Preload {
    static KEEP: std::sync::Mutex<Vec<libloading::os::unix::Library>> =
        std::sync::Mutex::new(Vec::new());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Preload::Absent;
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
        return Preload::Absent;
    };
    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL;
    let mut keep = KEEP.lock().unwrap_or_else(|p| p.into_inner());
    for path in [b, n] {
        // SAFETY: NVRTC and its builtins are plain C libraries whose initialisers have no
        // preconditions; the handles are kept for the life of the process, so nothing loaded
        // from them is ever unloaded.
        match unsafe { libloading::os::unix::Library::open(Some(path), flags) } {
            Ok(lib) => keep.push(lib),
            Err(e) => {
                let why = dylib::describe(&e);
                // A dangling link reads as "not found"; name the file anyway.
                return Preload::Broken(if why.contains(&*path.to_string_lossy()) {
                    why
                } else {
                    format!("{}: {why}", path.display())
                });
            }
        }
    }
    Preload::Loaded(n.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn empty_or_relative_variables_add_no_folders() {
        let vars = [
            ("CUDA_PATH", ""),
            ("CUDA_HOME", "relative/cuda"),
            ("VIRTUAL_ENV", ""),
            ("CONDA_PREFIX", "."),
            ("PYENV_ROOT", ""),
        ];
        let dirs = candidate_dirs(&env_of(&vars), Some(PathBuf::from("")));
        assert!(!dirs.is_empty());
        for d in &dirs {
            assert!(d.is_absolute(), "relative candidate {}", d.display());
        }
    }

    #[test]
    fn absolute_variables_are_searched_first() {
        let dirs = candidate_dirs(&env_of(&[("CUDA_HOME", "/opt/cuda-13")]), None);
        assert_eq!(dirs[0], PathBuf::from("/opt/cuda-13/lib64"));
        assert_eq!(dirs[1], PathBuf::from("/opt/cuda-13/lib"));
    }
}
