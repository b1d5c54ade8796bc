//! The JIT: NVRTC compilation of rendered sources to CUBIN for the device's exact
//! architecture, or to PTX when the GPU is newer than the NVRTC.

mod loader;

pub use loader::{Located, Missing};

use crate::codegen::{numbered, Rendered};
use crate::error::{CompileFailure, Error, Result};
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
    let src = CString::new(rendered.source.as_bytes())
        .map_err(|_| Error::invalid("generated source contains a NUL byte"))?;
    let name = CString::new(PROGRAM).expect("constant has no NUL");
    let prog = result::create_program(&src, Some(&name))
        .map_err(|e| Error::Nvrtc(format!("nvrtcCreateProgram: {e:?}")))?;
    let program = Program(prog);
    let opts = options(target);
    // SAFETY: `prog` is a live program (destroyed by `Program`'s drop after this function).
    let compiled = unsafe { result::compile_program(program.0, &opts) };
    // SAFETY: as above; the log is read after compilation.
    let log = unsafe { result::get_program_log(program.0) }
        .map(|raw| c_chars_to_string(&raw))
        .unwrap_or_default();
    if compiled.is_err() {
        return Err(compile_error(rendered, label, opts, log));
    }
    let image = match target {
        Target::Cubin(_) => cubin(&program)?,
        // SAFETY: compilation succeeded, so the program holds PTX.
        Target::Ptx(_) => unsafe { result::get_ptx(program.0) }
            .map(|raw| c_chars_to_string(&raw).into_bytes())
            .map_err(|e| Error::Nvrtc(format!("nvrtcGetPTX: {e:?}")))?,
    };
    Ok(Compiled { target, image })
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

/// Lines of `source` named by errors in an NVRTC log (`monoscan.cu(123): error: ...`).
fn error_lines(log: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    for l in log.lines() {
        let Some(rest) = l.strip_prefix(PROGRAM).and_then(|r| r.strip_prefix('(')) else {
            continue;
        };
        let Some((num, tail)) = rest.split_once(')') else {
            continue;
        };
        if tail.contains("error") {
            if let Ok(n) = num.parse::<usize>() {
                if !lines.contains(&n) {
                    lines.push(n);
                }
            }
        }
    }
    lines
}

fn compile_error(rendered: &Rendered, label: &str, options: Vec<String>, log: String) -> Error {
    let lines = error_lines(&log);
    if log.contains("monoscan layout:") {
        let elem_line = rendered
            .source
            .lines()
            .find(|l| l.contains("monoscan layout: sizeof("))
            .unwrap_or_default();
        let (size, align) = parse_layout(&rendered.source);
        let cuda_type = elem_line
            .split("static_assert(sizeof(")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .unwrap_or("?")
            .to_string();
        let layout_log: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("monoscan layout"))
            .collect();
        return Error::Layout {
            cuda_type,
            rust_size: size,
            rust_align: align,
            log: layout_log.join("; "),
        };
    }
    Error::Compile(Box::new(CompileFailure {
        kernel: label.to_string(),
        options,
        in_user_snippet: lines.iter().any(|&l| rendered.in_snippet(l)),
        excerpt: numbered(&rendered.source, &lines),
        generated: rendered.source.clone(),
        log,
    }))
}

fn parse_layout(source: &str) -> (usize, usize) {
    let grab = |key: &str| {
        source
            .lines()
            .find(|l| l.contains(key))
            .and_then(|l| l.split(key).nth(1))
            .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|d| d.parse().ok())
            .unwrap_or(0)
    };
    (grab("size_of::<Elem>() = "), grab("align_of::<Elem>() = "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_error_lines() {
        let log = "monoscan.cu(12): error: identifier \"x\" is undefined\n\
                   monoscan.cu(40): warning: unused\nmonoscan.cu(12): error: again\n";
        assert_eq!(error_lines(log), vec![12]);
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
