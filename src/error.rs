//! The crate's one error type.
//!
//! Everything that can go wrong on the way from an operator to a result is a variant here: no
//! driver, no NVRTC, no device, a compile error (with the NVRTC log and the numbered source), a
//! layout mismatch between the Rust element and its CUDA twin, out-of-memory and bad arguments.
//! None of these panics.

use std::fmt;
use std::path::PathBuf;

/// `Result` with [`Error`] as the error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything monoscan can report.
///
/// `Debug` prints the same text as `Display`, so that `fn main() -> monoscan::Result<()>` and
/// `unwrap` show the explanation, not the variant's fields.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library (`libcuda.so`) could not be loaded, or loaded without the
    /// functions monoscan needs.
    #[error(
        "no CUDA driver: {}. Install the NVIDIA driver (it ships libcuda.so) or use the CPU \
         backend (monoscan::cpu, `--backend cpu` on the command line)",
        detail.as_deref().unwrap_or("libcuda.so could not be loaded")
    )]
    NoDriver {
        /// The loader's error for a library that exists but failed to load, or the functions
        /// a loaded library lacks; `None` when no library was found at all.
        detail: Option<String>,
    },

    /// The driver loaded but there is no device with the requested ordinal.
    #[error("no CUDA device {requested}: {available} device(s) visible{}", detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    NoDevice {
        /// The ordinal asked for.
        requested: usize,
        /// How many devices the driver reports.
        available: usize,
        /// The driver's own words, when it gave any.
        detail: Option<String>,
    },

    /// NVRTC (`libnvrtc.so`) could not be found or loaded, or loaded without the functions
    /// monoscan needs. The message gives the remedy first, then the first places searched
    /// (`searched` holds them all; `monoscan doctor` lists them).
    #[error(
        "NVRTC {}{}. Install it with `pip install nvidia-cuda-nvrtc==13.0.88` (or a CUDA \
         toolkit) and point MONOSCAN_NVRTC_DIR at the folder holding libnvrtc.so.13 (the \
         wheel's site-packages/nvidia/cu13/lib), or add that folder to LD_LIBRARY_PATH. {}",
        if detail.is_some() { "could not be loaded" } else { "not found" },
        detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default(),
        display_paths(searched)
    )]
    NoNvrtc {
        /// The places that were tried.
        searched: Vec<PathBuf>,
        /// The loader's error for a library that exists but failed to load, or the functions
        /// a loaded library lacks; `None` when no library was found at all.
        detail: Option<String>,
    },

    /// NCCL (`libnccl.so`) could not be loaded, or a collective failed.
    #[error("NCCL: {0}")]
    Nccl(String),

    /// NVRTC rejected a generated kernel.
    #[error("{0}")]
    Compile(Box<CompileFailure>),

    /// A Rust element type and its CUDA declaration disagree: size, alignment, or a field's
    /// offset or type.
    #[error("{0}")]
    Layout(Box<LayoutMismatch>),

    /// An allocation failed, on the device or on the host.
    #[error("out of {memory} memory: {requested} bytes requested{}", free_of_total(*free, *total))]
    OutOfMemory {
        /// Which memory.
        memory: Memory,
        /// Bytes asked for.
        requested: usize,
        /// Free bytes at the time (0 when unknown).
        free: usize,
        /// Total bytes (0 when unknown).
        total: usize,
    },

    /// An argument was out of its domain (lengths, sizes, parameters, names).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] cudarc::driver::DriverError),

    /// An NVRTC call other than compilation failed.
    #[error("NVRTC error: {0}")]
    Nvrtc(String),

    /// A template failed to render (a bug in monoscan, reported rather than panicking).
    #[error("template error: {0}")]
    Template(String),

    /// A file operation the caller asked for (cache listing or clearing) failed.
    #[error("I/O error on {path}: {message}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// What the OS said.
        message: String,
    },
}

/// Which memory an allocation was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Memory {
    /// The GPU's memory.
    Device,
    /// The host's (the process's heap).
    Host,
}

impl fmt::Display for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Memory::Device => "device",
            Memory::Host => "host",
        })
    }
}

fn free_of_total(free: usize, total: usize) -> String {
    if total == 0 {
        String::new()
    } else {
        format!(", {free} of {total} bytes free")
    }
}

/// The places searched, compactly: the first few, then how many more.
fn display_paths(paths: &[PathBuf]) -> String {
    const SHOWN: usize = 3;
    if paths.is_empty() {
        return "Searched: the loader's search path.".to_string();
    }
    let shown: Vec<String> = paths
        .iter()
        .take(SHOWN)
        .map(|p| p.display().to_string())
        .collect();
    let more = match paths.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!(" and {n} more (`monoscan doctor` lists them)"),
    };
    format!(
        "Searched {} place{}: {}{more}.",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}

/// A layout check that failed: the Rust element types and their CUDA declarations, figure by
/// figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutMismatch {
    /// Every figure checked for the types that have a failed check, in declaration order.
    pub figures: Vec<LayoutFigure>,
    /// The failed `static_assert`s of NVRTC's log.
    pub log: String,
}

/// One figure of a type: Rust's value beside CUDA's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutFigure {
    /// The C++ type.
    pub cuda_type: String,
    /// `size`, `align`, `offset of x`, `type of x`.
    pub figure: String,
    /// Rust's value (a number, or for `type of` the C++ type Rust's field corresponds to).
    pub rust: String,
    /// CUDA's value, when it could be read (`None` for types, and when the probe failed).
    pub cuda: Option<String>,
    /// Whether this figure's check failed.
    pub failed: bool,
}

impl LayoutMismatch {
    /// The figures whose check failed.
    pub fn failed(&self) -> impl Iterator<Item = &LayoutFigure> {
        self.figures.iter().filter(|f| f.failed)
    }
}

impl fmt::Display for LayoutMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let types: Vec<&str> = {
            let mut t: Vec<&str> = Vec::new();
            for fig in self.failed() {
                if !t.contains(&fig.cuda_type.as_str()) {
                    t.push(&fig.cuda_type);
                }
            }
            t
        };
        writeln!(
            f,
            "layout mismatch: the CUDA declaration of {} differs from the Rust type",
            types
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        let width = self
            .figures
            .iter()
            .map(|x| x.figure.len())
            .max()
            .unwrap_or(0);
        for t in types {
            writeln!(f, "  {t}:")?;
            writeln!(f, "    {:width$}  {:>12}  {:>12}", "", "Rust", "CUDA")?;
            for fig in self.figures.iter().filter(|x| x.cuda_type == t) {
                let cuda = match (&fig.cuda, fig.failed) {
                    (Some(v), _) => v.clone(),
                    (None, true) => "differs".to_string(),
                    (None, false) => "same".to_string(),
                };
                let mark = if fig.failed { "   <- differs" } else { "" };
                writeln!(
                    f,
                    "    {:width$}  {:>12}  {:>12}{mark}",
                    fig.figure, fig.rust, cuda
                )?;
            }
        }
        write!(f, "NVRTC: {}", self.log.trim_end())
    }
}

/// Everything known about a failed compilation.
#[derive(Debug, Clone)]
pub struct CompileFailure {
    /// The kernel set (module) that failed.
    pub kernel: String,
    /// The NVRTC options used.
    pub options: Vec<String>,
    /// NVRTC's log, verbatim.
    pub log: String,
    /// The full generated source.
    pub generated: String,
    /// Numbered source lines around each error, ready to print.
    pub excerpt: String,
    /// Whether at least one error lies inside the user's own CUDA snippet.
    pub in_user_snippet: bool,
    /// The snippet the first such error lies in, and the line inside it
    /// (`combine, line 2`).
    pub snippet: Option<String>,
}

impl fmt::Display for CompileFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whose = match (&self.snippet, self.in_user_snippet) {
            (Some(at), _) => format!("the error lies inside the operator's CUDA snippet: {at}"),
            (None, true) => "the error lies inside the operator's CUDA snippet".to_string(),
            (None, false) => {
                "the error lies in generated code outside the operator's snippet".to_string()
            }
        };
        writeln!(
            f,
            "NVRTC failed to compile kernel set `{}` ({whose})",
            self.kernel
        )?;
        writeln!(f, "options: {}", self.options.join(" "))?;
        writeln!(f, "log:\n{}", self.log.trim_end())?;
        write!(f, "source:\n{}", self.excerpt)
    }
}

impl fmt::Debug for Error {
    /// The `Display` text: what `fn main() -> monoscan::Result<()>` prints on failure.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Error {
    /// A bad argument, with the reason.
    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }

    /// Whether this error means "no GPU stack here" (driver, device or NVRTC missing), as
    /// opposed to a real failure. Tests and the CLI's `auto` backend use this to decide whether
    /// to skip or fall back.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            Error::NoDriver { .. } | Error::NoDevice { .. } | Error::NoNvrtc { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_nvrtc(places: usize, detail: Option<&str>) -> Error {
        Error::NoNvrtc {
            searched: (0..places)
                .map(|i| {
                    PathBuf::from(format!(
                        "/home/user/.pyenv/versions/3.{i}.0/lib/python3.{i}/site-packages/nvidia/cu13/lib"
                    ))
                })
                .collect(),
            detail: detail.map(str::to_string),
        }
    }

    #[test]
    fn the_nvrtc_message_gives_the_remedy_first_and_stays_short() {
        for places in [0, 1, 3, 4, 44, 500] {
            let text = no_nvrtc(places, None).to_string();
            let remedy = text.find("pip install").expect(&text);
            let searched = text.find("Searched").expect(&text);
            assert!(remedy < searched, "{text}");
            assert!(text.starts_with("NVRTC not found."), "{text}");
            // The remedy and at most three paths of this length, whatever the count.
            assert!(text.len() < 600, "{} characters: {text}", text.len());
            let shown = places.min(3);
            assert_eq!(text.matches("/home/user/.pyenv").count(), shown, "{text}");
            if places > 3 {
                assert!(text.contains(&format!("and {} more", places - 3)), "{text}");
            }
            if places > 0 {
                assert!(text.contains(&format!("Searched {places} place")), "{text}");
            }
        }
        let broken = no_nvrtc(2, Some("libnvrtc.so.13 loaded but lacks nvrtcVersion")).to_string();
        assert!(
            broken.starts_with(
                "NVRTC could not be loaded: libnvrtc.so.13 loaded but lacks nvrtcVersion. Install"
            ),
            "{broken}"
        );
    }

    #[test]
    fn debug_prints_the_explanation() {
        let e = Error::NoDriver { detail: None };
        assert_eq!(format!("{e:?}"), e.to_string());
        assert!(format!("{e:?}").contains("Install the NVIDIA driver"));
        let e = Error::invalid("a length of 3, expected 4");
        assert_eq!(
            format!("{e:?}"),
            "invalid argument: a length of 3, expected 4"
        );
        let r: Result<()> = Err(no_nvrtc(44, None));
        assert_eq!(format!("{r:?}"), format!("Err({})", no_nvrtc(44, None)));
    }
}
