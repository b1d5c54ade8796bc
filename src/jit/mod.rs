//! The JIT: NVRTC compilation of rendered sources to CUBIN for the device's exact
//! architecture, or to PTX when the GPU is newer than the NVRTC.

mod loader;

pub use loader::{Located, Missing};

use crate::codegen::{layout, numbered, Rendered};
use crate::error::{CompileFailure, Error, LayoutFigure, LayoutMismatch, Result};
use cudarc::nvrtc::{result, sys};
use std::ffi::{c_char, CString};

/// What NVRTC produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Machine code for exactly this compute capability (`90` for sm_90).
    Cubin(u32),
    /// PTX for this virtual architecture, which the driver compiles for newer GPUs.
    Ptx(u32),
}

impl Target {
    /// `sm_90` or `compute_90`.
    pub fn arch(&self) -> String {
        match self {
            Target::Cubin(cc) => format!("sm_{cc}"),
            Target::Ptx(cc) => format!("compute_{cc}"),
        }
    }
}

/// A compiled module image.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// What it was compiled for.
    pub target: Target,
    /// CUBIN bytes, or PTX text.
    pub image: Vec<u8>,
}

/// The NVRTC that was loaded.
#[derive(Debug, Clone)]
pub struct NvrtcInfo {
    /// `(major, minor)`.
    pub version: (i32, i32),
    /// Where it was found.
    pub located: Located,
    /// The real architectures it can compile for (`[75, 80, 86, ..., 120]`).
    pub archs: Vec<u32>,
}

/// Loads NVRTC (once) and reports its version and architectures; `Err(NoNvrtc)` when missing.
pub fn nvrtc() -> Result<NvrtcInfo> {
    let located = loader::locate().map_err(|m| Error::NoNvrtc {
        searched: m.searched,
        detail: m.detail,
    })?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (`locate` succeeded); the out-pointers are valid locals.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::Nvrtc(format!("nvrtcVersion: {e:?}")))?;
    let mut count = 0;
    // SAFETY: as above.
    unsafe { sys::nvrtcGetNumSupportedArchs(&mut count) }
        .result()
        .map_err(|e| Error::Nvrtc(format!("nvrtcGetNumSupportedArchs: {e:?}")))?;
    let mut archs = vec![0i32; count.max(0) as usize];
    if !archs.is_empty() {
        // SAFETY: `archs` holds exactly the number of entries NVRTC reported.
        unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
            .result()
            .map_err(|e| Error::Nvrtc(format!("nvrtcGetSupportedArchs: {e:?}")))?;
    }
    Ok(NvrtcInfo {
        version: (major, minor),
        located,
        archs: archs.into_iter().map(|a| a as u32).collect(),
    })
}

/// The target for a device of compute capability `cc`: its own CUBIN when this NVRTC knows
/// the architecture, PTX for the newest known one when the GPU is newer.
pub fn target_for(info: &NvrtcInfo, cc: u32) -> Result<Target> {
    if info.archs.contains(&cc) {
        return Ok(Target::Cubin(cc));
    }
    match info.archs.iter().copied().filter(|&a| a <= cc).max() {
        Some(a) => Ok(Target::Ptx(a)),
        None => Err(Error::invalid(format!(
            "NVRTC {}.{} cannot compile for compute capability {cc} (it supports {:?})",
            info.version.0, info.version.1, info.archs
        ))),
    }
}

/// The compile options, all in one place. `--minimal` leaves out of the implicit headers
/// what generated code never uses (textures and surfaces, the device runtime, the runtime
/// API's types): measured, it shortens NVRTC's front end by about a third and leaves the
/// machine code unchanged.
pub fn options(target: Target) -> Vec<String> {
    vec![
        format!("--gpu-architecture={}", target.arch()),
        "--std=c++17".to_string(),
        "--fmad=true".to_string(),
        "--minimal".to_string(),
    ]
}

/// The file name NVRTC reports errors against.
const PROGRAM: &str = "monoscan.cu";

/// Compiles `rendered` for `target`. `label` names the kernel set in errors.
pub fn compile(rendered: &Rendered, label: &str, target: Target) -> Result<Compiled> {
    nvrtc()?;
    let opts = options(target);
    let (program, log) = run(&rendered.source, &opts)?;
    let Some(program) = program else {
        return Err(compile_error(rendered, label, target, opts, log));
    };
    let image = match target {
        Target::Cubin(_) => cubin(&program)?,
        Target::Ptx(_) => ptx(&program)?.into_bytes(),
    };
    Ok(Compiled { target, image })
}

/// Runs NVRTC on `source`: the compiled program (`None` when compilation failed) and the log.
fn run(source: &str, opts: &[String]) -> Result<(Option<Program>, String)> {
    let src = CString::new(source.as_bytes())
        .map_err(|_| Error::invalid("generated source contains a NUL byte"))?;
    let name = CString::new(PROGRAM).expect("constant has no NUL");
    let prog = result::create_program(&src, Some(&name))
        .map_err(|e| Error::Nvrtc(format!("nvrtcCreateProgram: {e:?}")))?;
    let program = Program(prog);
    // SAFETY: `prog` is a live program (destroyed by `Program`'s drop).
    let compiled = unsafe { result::compile_program(program.0, opts) };
    // SAFETY: as above; the log is read after compilation.
    let log = unsafe { result::get_program_log(program.0) }
        .map(|raw| c_chars_to_string(&raw))
        .unwrap_or_default();
    Ok((compiled.is_ok().then_some(program), log))
}

fn ptx(program: &Program) -> Result<String> {
    // SAFETY: the program compiled successfully, so it holds PTX.
    unsafe { result::get_ptx(program.0) }
        .map(|raw| c_chars_to_string(&raw))
        .map_err(|e| Error::Nvrtc(format!("nvrtcGetPTX: {e:?}")))
}

/// Compiles `source` to PTX for `compute_<cc>`; `None` when it does not compile.
fn compile_ptx(source: &str, cc: u32) -> Option<String> {
    match run(source, &options(Target::Ptx(cc))) {
        Ok((Some(program), _)) => ptx(&program).ok(),
        _ => None,
    }
}

struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by `create_program` and is destroyed once, here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn cubin(program: &Program) -> Result<Vec<u8>> {
    let mut size = 0usize;
    // SAFETY: the program compiled successfully for a real architecture; `size` is a local.
    unsafe { sys::nvrtcGetCUBINSize(program.0, &mut size) }
        .result()
        .map_err(|e| Error::Nvrtc(format!("nvrtcGetCUBINSize: {e:?}")))?;
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` has exactly the size NVRTC reported for the CUBIN.
    unsafe { sys::nvrtcGetCUBIN(program.0, buf.as_mut_ptr() as *mut c_char) }
        .result()
        .map_err(|e| Error::Nvrtc(format!("nvrtcGetCUBIN: {e:?}")))?;
    Ok(buf)
}

fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The errors of an NVRTC log (`monoscan.cu(123): error: ...`): line and message, in order.
fn errors(log: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for l in log.lines() {
        let Some(rest) = l.strip_prefix(PROGRAM).and_then(|r| r.strip_prefix('(')) else {
            continue;
        };
        let Some((num, tail)) = rest.split_once(')') else {
            continue;
        };
        let Some(message) = tail
            .trim_start_matches(':')
            .trim_start()
            .strip_prefix("error")
        else {
            continue;
        };
        let message = message
            .trim_start_matches(|c: char| c != ':')
            .trim_start_matches(':');
        if let Ok(n) = num.parse::<usize>() {
            out.push((n, message.trim().to_string()));
        }
    }
    out
}

/// Lines of `source` named by errors in an NVRTC log, each once.
fn error_lines(log: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    for (n, _) in errors(log) {
        if !lines.contains(&n) {
            lines.push(n);
        }
    }
    lines
}

fn compile_error(
    rendered: &Rendered,
    label: &str,
    target: Target,
    options: Vec<String>,
    log: String,
) -> Error {
    let errors = errors(&log);
    // A layout error is a log whose every error is one of the generated layout checks (its
    // exact message, outside the operator's snippets); anything else (an undefined type, a
    // snippet's syntax, a snippet's own `static_assert`) is a compile error, with NVRTC's log
    // whole.
    let is_check = |line: usize, m: &str| {
        !rendered.in_snippet(line)
            && m.strip_prefix("static assertion failed with \"")
                .and_then(|m| m.strip_suffix('"'))
                .is_some_and(|m| rendered.layout.iter().any(|f| f.message() == m))
    };
    if !errors.is_empty() && errors.iter().all(|(line, m)| is_check(*line, m)) {
        let cc = match target {
            Target::Cubin(cc) | Target::Ptx(cc) => cc,
        };
        return Error::Layout(Box::new(layout_mismatch(rendered, cc, &log)));
    }
    let lines = error_lines(&log);
    let blame = errors
        .iter()
        .find_map(|(line, message)| rendered.blame(*line, message));
    Error::Compile(Box::new(CompileFailure {
        kernel: label.to_string(),
        options,
        in_user_snippet: blame.is_some() || lines.iter().any(|&l| rendered.in_snippet(l)),
        snippet: blame.map(|b| format!("`{}`, line {}", b.snippet, b.line)),
        excerpt: numbered(&rendered.source, &lines),
        generated: rendered.source.clone(),
        log,
    }))
}

/// Every figure of the types whose checks failed, with CUDA's values read from a probe
/// compiled for `compute_<cc>`.
fn layout_mismatch(rendered: &Rendered, cc: u32, log: &str) -> LayoutMismatch {
    let failed = |f: &layout::Figure| log.contains(&f.message());
    let cuda: Option<Vec<u64>> = layout::probe(&rendered.source, &rendered.layout)
        .and_then(|src| compile_ptx(&src, cc))
        .and_then(|ptx| {
            let count = rendered.layout.iter().filter(|f| f.probe.is_some()).count();
            layout::read_probe(&ptx, count)
        });
    let mut values = cuda.into_iter().flatten();
    let mut figures = Vec::new();
    for f in &rendered.layout {
        let cuda = f
            .probe
            .as_ref()
            .and_then(|_| values.next())
            .map(|v| v.to_string());
        figures.push(LayoutFigure {
            cuda_type: f.cuda_type.clone(),
            figure: f.figure.clone(),
            rust: f.rust.clone(),
            cuda,
            failed: failed(f),
        });
    }
    let bad: Vec<String> = figures
        .iter()
        .filter(|f| f.failed)
        .map(|f| f.cuda_type.clone())
        .collect();
    figures.retain(|f| bad.contains(&f.cuda_type));
    let checks: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(layout::MESSAGE) && l.contains("error"))
        .collect();
    LayoutMismatch {
        figures,
        log: checks.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_error_lines() {
        let log = "monoscan.cu(12): error: identifier \"x\" is undefined\n\
                   monoscan.cu(40): warning: unused\nmonoscan.cu(12): error: again\n\
                   monoscan.cu(41): warning #940-D: missing return statement\n";
        assert_eq!(error_lines(log), vec![12]);
        assert_eq!(
            errors(log),
            [
                (12, "identifier \"x\" is undefined".to_string()),
                (12, "again".to_string())
            ]
        );
    }

    #[test]
    fn targets() {
        let info = NvrtcInfo {
            version: (13, 0),
            located: Located { dir: None },
            archs: vec![75, 80, 86, 89, 90, 100, 120],
        };
        assert_eq!(target_for(&info, 90).unwrap(), Target::Cubin(90));
        assert_eq!(target_for(&info, 130).unwrap(), Target::Ptx(120));
        assert_eq!(target_for(&info, 87).unwrap(), Target::Ptx(86));
        assert!(target_for(&info, 60).is_err());
    }
}
