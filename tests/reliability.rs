//! Defects of issue #23 that need no GPU: broken driver and NVRTC libraries, allocation
//! failures, operator names, bounds of the workloads and helpers, and the library's edge cases.
//!
//! Tests that change how the process loads libraries (or how much memory it may take) run the
//! built CLI or this very test binary in a child process (`child_case`, chosen by
//! `MONOSCAN_TEST_CASE`). Stub libraries are built with `gcc`; those tests skip, saying why,
//! where it is missing.

mod common;

use monoscan::cpu::{Parallel, Sequential};
use monoscan::ops::Sum;
use monoscan::workloads::{recurrence, segmented};
use monoscan::{Backend, Map};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CASE: &str = "MONOSCAN_TEST_CASE";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts that a process ended by itself (no signal) and did not panic (exit status 101).
fn assert_no_crash(what: &str, out: &Output) {
    let code = out.status.code();
    assert!(
        code.is_some() && code != Some(101) && !text(&out.stderr).contains("panicked"),
        "{what}: {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Builds a shared library without any function, named `name` (and with that soname) in
/// `dir`; `false` (after printing why) when gcc is not available.
fn stub_library(dir: &Path, name: &str) -> bool {
    let src = dir.join("empty.c");
    std::fs::write(&src, "int monoscan_stub_marker;\n").unwrap();
    let out = Command::new("gcc")
        .args(["-shared", "-fPIC", &format!("-Wl,-soname,{name}"), "-o"])
        .arg(dir.join(name))
        .arg(&src)
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        Ok(o) => panic!("gcc failed to build a stub library: {}", text(&o.stderr)),
        Err(e) => {
            eprintln!("skipped: gcc is needed to build a stub library ({e})");
            false
        }
    }
}

/// A folder with a stub `libcuda.so` and `libcuda.so.1` (the names the loader tries first).
fn stub_driver() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    if !stub_library(dir.path(), "libcuda.so.1") {
        return None;
    }
    std::fs::copy(
        dir.path().join("libcuda.so.1"),
        dir.path().join("libcuda.so"),
    )
    .unwrap();
    Some(dir)
}

/// The CLI with `args`, the given library folder first on the loader path.
fn cli(args: &[&str], lib_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_monoscan"))
        .args(args)
        .env("LD_LIBRARY_PATH", lib_dir)
        .output()
        .unwrap()
}

/// `program` with `args`, its address space limited to `kib` KiB (one malloc arena and two
/// rayon threads, so that the limit bounds the data rather than per-thread reservations).
fn limited(kib: u64, program: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(program)
        .args(args)
        .env("MALLOC_ARENA_MAX", "1")
        .env("RAYON_NUM_THREADS", "2");
    cmd
}

/// This test binary, running only `child_case` for `case`, with `envs` set.
fn child(case: &str, envs: &[(&str, &std::ffi::OsStr)], cwd: Option<&Path>) -> Output {
    child_in(
        Command::new(std::env::current_exe().unwrap()),
        case,
        envs,
        cwd,
    )
}

/// [`child`] under an address-space limit of `kib` KiB.
fn child_limited(case: &str, kib: u64) -> Output {
    let exe = std::env::current_exe().unwrap();
    child_in(limited(kib, &exe, &[]), case, &[], None)
}

fn child_in(
    mut cmd: Command,
    case: &str,
    envs: &[(&str, &std::ffi::OsStr)],
    cwd: Option<&Path>,
) -> Output {
    cmd.args(["--exact", "child_case", "--nocapture"])
        .env(CASE, case);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let out = cmd.output().unwrap();
    assert_no_crash(case, &out);
    assert!(
        out.status.success() && text(&out.stdout).contains("1 passed"),
        "{case}: {:?}\n{}\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// The cases run by [`child`], in a process of their own.
#[test]
fn child_case() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    match case.as_str() {
        "stub-driver" => {
            let e = monoscan::device_count().unwrap_err();
            assert!(
                matches!(e, monoscan::Error::NoDriver { detail: Some(_) }),
                "{e}"
            );
            assert!(e.to_string().contains("cuInit"), "{e}");
            assert!(!monoscan::driver_present());
            let e = monoscan::Gpu::new(0).unwrap_err();
            assert!(e.is_unavailable(), "{e}");
            assert!(e.to_string().contains("lacks"), "{e}");
        }
        "stub-nvrtc" => {
            let e = monoscan::jit::nvrtc().unwrap_err();
            assert!(
                matches!(
                    e,
                    monoscan::Error::NoNvrtc {
                        detail: Some(_),
                        ..
                    }
                ),
                "{e}"
            );
            assert!(e.to_string().contains("nvrtcVersion"), "{e}");
        }
        "garbage-nvrtc" => {
            let e = monoscan::jit::nvrtc().unwrap_err();
            let why = e.to_string();
            assert!(why.contains("could not be loaded"), "{why}");
            assert!(why.contains("libnvrtc"), "{why}");
            assert!(
                why.contains("ELF") || why.contains("too short"),
                "the loader's words are lost: {why}"
            );
        }
        "relative-cuda-path" => match monoscan::jit::nvrtc() {
            Ok(info) => {
                if let Some(dir) = &info.located.dir {
                    assert!(dir.is_absolute(), "NVRTC loaded from {}", dir.display());
                }
            }
            Err(monoscan::Error::NoNvrtc { searched, detail }) => {
                assert!(detail.is_none(), "{detail:?}");
                for p in searched {
                    assert!(
                        p.is_absolute() || p.to_string_lossy().starts_with("(loader"),
                        "searched {}",
                        p.display()
                    );
                }
            }
            Err(e) => panic!("{e}"),
        },
        "oom-exclusive-scan-total" => {
            // 576 MiB of input (zeroed, so not yet touched); the copy cannot fit in 1 GiB.
            let xs = vec![0u64; 72 << 20];
            let r = Parallel::default().exclusive_scan_total(&Sum::<u64>::new(), &xs, 0);
            assert_host_oom(r.map(|_| ()));
        }
        "oom-map-inclusive-scan" => {
            // 144 MiB of bytes widened to 1152 MiB of u64.
            let xs = vec![0u8; 144 << 20];
            let widen = Map::new("widen", "(unsigned long long)x", |x: &u8| u64::from(*x));
            let r = Parallel::default().map_inclusive_scan(&Sum::<u64>::new(), &widen, &xs);
            assert_host_oom(r.map(|_| ()));
        }
        "oom-scan-by-heads" => {
            // 432 MiB of values and heads, 768 MiB of flagged elements.
            let values = vec![0u64; 48 << 20];
            let heads = vec![false; 48 << 20];
            let r = segmented::scan_by_heads(&Sequential, &Sum::<u64>::new(), &values, &heads);
            assert_host_oom(r.map(|_| ()));
        }
        "oom-diagonal-ssm" => {
            // 512 MiB of coefficients, 768 MiB of flagged affine maps.
            let a = vec![0.0f64; 32 << 20];
            let bu = vec![0.0f64; 32 << 20];
            let r = recurrence::diagonal_ssm(&Sequential, &a, &bu, 1);
            assert_host_oom(r.map(|_| ()));
        }
        "lab-reps" => {
            let xs: Vec<i64> = (1..=64).collect();
            let e =
                monoscan::bench::lab::run(None, &Sum::<i64>::new(), &xs, usize::MAX).unwrap_err();
            assert!(matches!(e, monoscan::Error::InvalidArgument(_)), "{e}");
            let rows = monoscan::bench::lab::run(None, &Sum::<i64>::new(), &xs, 3).unwrap();
            assert!(rows.iter().all(|r| r.correct));
        }
        other => panic!("unknown case {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Items 1-3: driver and NVRTC libraries that load without their functions, empty CUDA_PATH,
// broken libraries.

#[test]
fn a_stub_driver_is_an_error_in_the_library() {
    let Some(dir) = stub_driver() else { return };
    child(
        "stub-driver",
        &[("LD_LIBRARY_PATH", dir.path().as_os_str())],
        None,
    );
}

#[test]
fn run_falls_back_to_the_cpu_past_a_stub_driver() {
    let Some(dir) = stub_driver() else { return };
    let out = cli(&["run", "--n", "100"], dir.path());
    assert_no_crash("run", &out);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("backend: cpu"),
        "{}",
        text(&out.stdout)
    );
    let note = text(&out.stderr);
    assert!(note.contains("running on the CPU backend"), "{note}");
    assert!(note.contains("cuInit"), "the note does not say why: {note}");

    let out = cli(&["run", "--n", "100", "--backend", "gpu"], dir.path());
    assert_no_crash("run --backend gpu", &out);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn lab_bench_and_doctor_survive_a_stub_driver() {
    let Some(dir) = stub_driver() else { return };
    let lab = cli(&["lab", "--n", "64", "--reps", "1"], dir.path());
    assert_no_crash("lab", &lab);
    assert!(lab.status.success(), "{}", text(&lab.stderr));
    assert!(
        text(&lab.stderr).contains("cuInit"),
        "{}",
        text(&lab.stderr)
    );
    let bench = cli(
        &[
            "bench",
            "--min-log2",
            "10",
            "--max-log2",
            "10",
            "--reps",
            "1",
        ],
        dir.path(),
    );
    assert_no_crash("bench", &bench);
    let doctor = cli(&["doctor"], dir.path());
    assert_no_crash("doctor", &doctor);
}

#[test]
fn a_broken_driver_keeps_the_loader_error() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["libcuda.so", "libcuda.so.1"] {
        std::fs::write(dir.path().join(name), b"this is no shared library").unwrap();
    }
    let out = cli(&["run", "--n", "10", "--backend", "gpu"], dir.path());
    assert_no_crash("run --backend gpu", &out);
    let why = text(&out.stderr);
    assert!(why.contains("libcuda.so"), "{why}");
    assert!(
        why.contains("ELF") || why.contains("too short"),
        "the loader's words are lost: {why}"
    );
}

/// A folder with stub NVRTC libraries, as a pip wheel lays them out.
fn stub_nvrtc(dir: &Path) -> bool {
    stub_library(dir, "libnvrtc.so.13") && stub_library(dir, "libnvrtc-builtins.so.13.0")
}

#[test]
fn a_stub_nvrtc_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    if !stub_nvrtc(dir.path()) {
        return;
    }
    child(
        "stub-nvrtc",
        &[("MONOSCAN_NVRTC_DIR", dir.path().as_os_str())],
        None,
    );
}

/// A broken NVRTC in the folder `MONOSCAN_NVRTC_DIR` names stays the error when a working one
/// is on the loader's path under the name cudarc opens first (`libnvrtc.so`, as a CUDA toolkit
/// installs it): the search does not pass over the folder the user chose. The working NVRTC is
/// this process's own, linked into a temporary folder; without one the test says so and
/// returns.
#[test]
fn a_named_nvrtc_folder_is_not_passed_over_for_a_toolkit() {
    let found = match monoscan::jit::nvrtc() {
        Ok(info) => info.located.dir,
        Err(e) => {
            eprintln!("skipped: no NVRTC to stand in for a toolkit's ({e})");
            return;
        }
    };
    let Some(real) = found else {
        eprintln!("skipped: NVRTC was found by name on the loader's path, not in a folder");
        return;
    };
    let toolkit = tempfile::tempdir().unwrap();
    for (link, target) in [
        ("libnvrtc.so", "libnvrtc.so.13"),
        ("libnvrtc-builtins.so.13.0", "libnvrtc-builtins.so.13.0"),
    ] {
        std::os::unix::fs::symlink(real.join(target), toolkit.path().join(link)).unwrap();
    }
    let path = toolkit.path().as_os_str();
    let garbage = tempfile::tempdir().unwrap();
    for name in ["libnvrtc.so.13", "libnvrtc-builtins.so.13.0"] {
        std::fs::write(garbage.path().join(name), b"this is no shared library").unwrap();
    }
    child(
        "garbage-nvrtc",
        &[
            ("MONOSCAN_NVRTC_DIR", garbage.path().as_os_str()),
            ("LD_LIBRARY_PATH", path),
        ],
        None,
    );
    let stub = tempfile::tempdir().unwrap();
    if !stub_nvrtc(stub.path()) {
        return;
    }
    child(
        "stub-nvrtc",
        &[
            ("MONOSCAN_NVRTC_DIR", stub.path().as_os_str()),
            ("LD_LIBRARY_PATH", path),
        ],
        None,
    );
}

#[test]
fn a_broken_nvrtc_keeps_the_loader_error() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["libnvrtc.so.13", "libnvrtc-builtins.so.13.0"] {
        std::fs::write(dir.path().join(name), b"this is no shared library").unwrap();
    }
    child(
        "garbage-nvrtc",
        &[("MONOSCAN_NVRTC_DIR", dir.path().as_os_str())],
        None,
    );
}

#[test]
fn an_empty_cuda_path_does_not_search_the_working_directory() {
    let cwd = tempfile::tempdir().unwrap();
    let lib64: PathBuf = cwd.path().join("lib64");
    std::fs::create_dir(&lib64).unwrap();
    if !stub_nvrtc(&lib64) {
        return;
    }
    let empty = std::ffi::OsStr::new("");
    let out = child(
        "relative-cuda-path",
        &[
            ("CUDA_PATH", empty),
            ("CUDA_HOME", empty),
            ("MONOSCAN_NVRTC_DIR", empty),
            ("LD_LIBRARY_PATH", empty),
        ],
        Some(cwd.path()),
    );
    assert!(
        !text(&out.stderr).contains("lib64"),
        "{}",
        text(&out.stderr)
    );
}

// ---------------------------------------------------------------------------------------------
// Item 8: host allocations that do not fit are errors, not aborts.

/// 1 GiB of address space: room for the inputs of the `oom-*` cases, not for their copies.
const ONE_GIB_KIB: u64 = 1 << 20;

fn assert_host_oom(r: monoscan::Result<()>) {
    match r {
        Err(monoscan::Error::OutOfMemory {
            memory: monoscan::Memory::Host,
            requested,
            ..
        }) => assert!(requested >= 512 << 20, "{requested}"),
        Err(e) => panic!("expected host out-of-memory, got {e}"),
        Ok(()) => panic!("expected host out-of-memory, got a result"),
    }
}

#[test]
fn parallel_exclusive_scan_total_reports_out_of_memory() {
    child_limited("oom-exclusive-scan-total", ONE_GIB_KIB);
}

#[test]
fn map_inclusive_scan_reports_out_of_memory() {
    child_limited("oom-map-inclusive-scan", ONE_GIB_KIB);
}

#[test]
fn scan_by_heads_reports_out_of_memory() {
    child_limited("oom-scan-by-heads", ONE_GIB_KIB);
}

#[test]
fn diagonal_ssm_reports_out_of_memory() {
    child_limited("oom-diagonal-ssm", ONE_GIB_KIB);
}

#[test]
fn lab_with_a_huge_n_reports_out_of_memory() {
    // 2^30 i32 inputs are 4 GiB, twice the limit.
    let exe = Path::new(env!("CARGO_BIN_EXE_monoscan"));
    let out = limited(
        2 * ONE_GIB_KIB,
        exe,
        &["lab", "--n", "1073741824", "--reps", "1"],
    )
    .env("LD_LIBRARY_PATH", "")
    .output()
    .unwrap();
    assert_no_crash("lab --n 2^30", &out);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cannot allocate"),
        "{}",
        text(&out.stderr)
    );
}

// ---------------------------------------------------------------------------------------------
// Item 10: bounds of the workloads and helpers.

#[test]
fn fill_slices_rejects_requests_that_do_not_match_the_total() {
    use monoscan::workloads::allocate::{fill_slices, offsets, Allocation};
    let requests = [3u32, 4, 5];
    let a = offsets(&Sequential, &requests).unwrap();
    let short = Allocation {
        offsets: a.offsets.clone(),
        total: 7,
    };
    let e = fill_slices(&short, &requests, 0u8, |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("sum to 12"), "{e}");
    let e = fill_slices(&a, &requests[..2], 0u8, |_, _| {}).unwrap_err();
    assert!(matches!(e, monoscan::Error::InvalidArgument(_)), "{e}");
    let buf = fill_slices(&a, &requests, 0u8, |i, s| s.fill(i as u8 + 1)).unwrap();
    assert_eq!(buf, [1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3]);
}

#[test]
fn allocation_ranges_are_checked() {
    use monoscan::workloads::allocate::{offsets, Allocation};
    let requests = [3u32, 0, 2];
    let a = offsets(&Sequential, &requests).unwrap();
    assert_eq!(a.range(0, &requests).unwrap(), 0..3);
    assert_eq!(a.range(1, &requests).unwrap(), 3..3);
    assert_eq!(a.range(2, &requests).unwrap(), 3..5);
    assert!(a.range(3, &requests).is_err());
    assert!(a.range(0, &[]).is_err());
    // Offsets near u64::MAX: the end would wrap.
    let near = Allocation {
        offsets: vec![u64::MAX - 1],
        total: u64::MAX,
    };
    assert!(near.range(0, &[5]).is_err());
    // A range past the total.
    assert!(a.range(2, &[3, 0, 9]).is_err());
}

#[cfg(feature = "multi")]
#[test]
fn split_covers_every_index_of_any_length() {
    use monoscan::multi::split;
    for (n, g) in [
        (usize::MAX, 2),
        (usize::MAX, 7),
        (usize::MAX - 1, 3),
        (10, 4),
        (0, 3),
    ] {
        let parts = split(n, g);
        assert_eq!(parts.len(), g);
        assert_eq!(parts[0].start, 0, "{n} / {g}");
        assert_eq!(parts[g - 1].end, n, "{n} / {g}");
        for w in parts.windows(2) {
            assert_eq!(w[0].end, w[1].start, "{n} / {g}");
        }
        let (short, long) = parts
            .iter()
            .map(|r| r.len())
            .fold((usize::MAX, 0), |(s, l), x| (s.min(x), l.max(x)));
        assert!(long - short <= 1, "{n} / {g}: {short} .. {long}");
    }
}

#[test]
fn combine_formulas_of_empty_and_huge_sections() {
    use monoscan::bench::lab::{brent_kung_formula, kogge_stone_formula};
    assert_eq!(kogge_stone_formula(0), 0);
    assert_eq!(brent_kung_formula(0), 0);
    assert_eq!(kogge_stone_formula(1), 0);
    assert_eq!(brent_kung_formula(1), 0);
    assert_eq!(kogge_stone_formula(1 << 62), u64::MAX);
    assert_eq!(brent_kung_formula(1 << 63), u64::MAX);
    assert_eq!(brent_kung_formula(1 << 62), (1 << 63) - 2 - 62);
}

#[cfg(feature = "laws")]
#[test]
fn law_checker_accepts_any_max_len() {
    use monoscan::laws::Checker;
    use proptest::prelude::any;
    let sum = Sum::<i64>::new();
    Checker::new(&sum)
        .max_len(usize::MAX)
        .cases(2)
        .check(any::<i64>())
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Item 11: names pasted into generated comments.

fn tree_reduce() -> monoscan::codegen::KernelSpec {
    use monoscan::codegen::{KernelSet, KernelSpec};
    KernelSpec::new(KernelSet::TreeReduce { block: 256 })
}

#[test]
fn a_line_break_in_an_operator_name_is_rejected() {
    use monoscan::{CudaOp, Monoid};
    let plain = Sum::<i32>::new().cuda();
    assert!(monoscan::codegen::render(&plain, &tree_reduce()).is_ok());
    for name in [
        "sum\n#error injected",
        "sum\r#error injected",
        "sum\0",
        "sum\u{85}x",
    ] {
        let op = CudaOp {
            name: name.to_string(),
            ..plain.clone()
        };
        match monoscan::codegen::render(&op, &tree_reduce()) {
            Err(monoscan::Error::InvalidArgument(why)) => {
                assert!(why.contains("control character"), "{why}");
                assert!(
                    !why.contains('\n'),
                    "the message itself breaks lines: {why}"
                );
            }
            Err(e) => panic!("{name:?}: {e}"),
            Ok(r) => panic!("{name:?} was rendered:\n{}", r.source),
        }
    }
}

#[test]
fn a_line_break_or_nul_in_a_map_name_is_rejected() {
    use monoscan::Monoid;
    let sum = Sum::<u32>::new();
    let ok = Map::new("flag_count", "x != 0 ? 1u : 0u", |x: &u8| {
        u32::from(*x != 0)
    });
    let with = |m: &Map<u8, u32>| sum.cuda().with_input(m.cuda());
    assert!(monoscan::codegen::render(&with(&ok), &tree_reduce()).is_ok());
    for name in ["count\n#error injected", "count\0", ""] {
        let m = Map::new(name, "x != 0 ? 1u : 0u", |x: &u8| u32::from(*x != 0));
        match monoscan::codegen::render(&with(&m), &tree_reduce()) {
            Err(monoscan::Error::InvalidArgument(_)) => {}
            Err(e) => panic!("{name:?}: {e}"),
            Ok(r) => panic!("{name:?} was rendered:\n{}", r.source),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Item 12: the lab's repetitions are bounded.

/// The output of `cmd`, which must end within `limit` (it is killed, and the test fails, if
/// not).
fn output_within(mut cmd: Command, limit: std::time::Duration) -> Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still ran after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn lab_rejects_unbounded_repetitions() {
    let limit = std::time::Duration::from_secs(60);
    for reps in ["18446744073709551615", "10001", "0"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_monoscan"));
        cmd.args(["lab", "--n", "16", "--reps", reps]);
        let out = output_within(cmd, limit);
        assert_no_crash("lab --reps", &out);
        assert_eq!(
            out.status.code(),
            Some(2),
            "--reps {reps}: {}",
            text(&out.stderr)
        );
    }
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child_case", "--nocapture"])
        .env(CASE, "lab-reps");
    let out = output_within(cmd, limit);
    assert!(
        out.status.success() && text(&out.stdout).contains("1 passed"),
        "{}",
        text(&out.stderr)
    );
}

// ---------------------------------------------------------------------------------------------
// Item 13: non-finite totals, and f32 sums past 2^24.

fn run_cli(args: &str) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_monoscan"))
        .arg("run")
        .args(args.split_whitespace())
        .args(["--backend", "cpu"])
        .output()
        .unwrap();
    assert_no_crash(args, &out);
    assert!(out.status.success(), "{args}: {}", text(&out.stderr));
    out
}

#[test]
fn run_prints_infinite_totals() {
    // 200! overflows f64 from 171! on.
    let out = run_cli("--op product --dtype f64 --n 200");
    let report = text(&out.stdout);
    for line in [
        "total (reduce):           inf",
        "total (last scan prefix): inf",
    ] {
        assert!(
            report.lines().any(|l| l == line),
            "no {line:?} in:\n{report}"
        );
    }
    assert!(!report.contains("null"), "{report}");
    let out = run_cli("--op product --dtype f64 --n 200 --json");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], serde_json::json!("inf"));
    assert_eq!(v["first"][4], serde_json::json!(120.0));
    // min over 1..N never overflows: numbers stay numbers.
    let out = run_cli("--op min --dtype f32 --n 50 --json");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], serde_json::json!(1.0));
}

#[test]
fn run_warns_when_f32_sums_pass_2_pow_24() {
    // 1 + ... + 10000 = 50005000 > 2^24; 1 + ... + 5000 = 12502500 < 2^24.
    for (args, warned) in [
        ("--op sum --dtype f32 --n 10000", true),
        ("--op sum --dtype f32 --n 10000 --json", true),
        (
            "--op segsum --dtype f32 --n 20000 --segment-len 10000",
            true,
        ),
        ("--op sum --dtype f32 --n 5000", false),
        ("--op sum --dtype f64 --n 10000", false),
        ("--op sum --dtype i64 --n 10000", false),
    ] {
        let out = run_cli(args);
        let err = text(&out.stderr);
        assert_eq!(
            err.contains("warning: the f32 sums exceed 2^24"),
            warned,
            "{args}: {err}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Items 9 and 15: NaN in ArgMin/ArgMax and in Min/Max; every backend agrees.

mod nan_order {
    use super::common::gpu::gpu;
    use super::common::strategies::{small_float, specials, with_specials};
    use monoscan::cpu::{Parallel, Sequential};
    use monoscan::ops::{ArgMax, ArgMin, Indexed, Max, Min, MinMax, MinMaxPair};
    use monoscan::{ApproxEq, Backend, Monoid, Tolerance};
    use proptest::collection::vec;
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use std::fmt::Debug;

    /// Equal, NaN equal to NaN.
    fn same<T: ApproxEq>(a: &T, b: &T) -> bool {
        a.approx_eq(b, Tolerance::EXACT)
    }

    fn assert_all_same<T: ApproxEq + Debug>(what: &str, got: &[T], want: &[T]) {
        assert_eq!(got.len(), want.len(), "{what}");
        if let Some(i) = (0..got.len()).find(|&i| !same(&got[i], &want[i])) {
            panic!("{what}: element {i}: {:?} vs {:?}", got[i], want[i]);
        }
    }

    /// Every result of `backend` equals the sequential reference's, NaN-aware.
    fn agree<M: Monoid, B: Backend>(backend: &B, m: &M, xs: &[M::Elem])
    where
        M::Elem: ApproxEq,
    {
        let what = backend.describe();
        let want = Sequential.inclusive_scan(m, xs).unwrap();
        assert_all_same(&what, &backend.inclusive_scan(m, xs).unwrap(), &want);
        let total = Sequential.reduce(m, xs).unwrap();
        assert!(same(&backend.reduce(m, xs).unwrap(), &total), "{what}");
        let (ex, ex_total) = backend.exclusive_scan_total(m, xs, m.identity()).unwrap();
        assert!(same(&ex_total, &total), "{what}: exclusive total");
        if let Some(last) = want.last() {
            assert!(same(last, &total), "{what}: last prefix vs reduce");
        }
        let (want_ex, _) = Sequential
            .exclusive_scan_total(m, xs, m.identity())
            .unwrap();
        assert_all_same(&what, &ex, &want_ex);
    }

    /// Values with NaN, infinities and zeros at their positions.
    fn indexed_f64() -> impl Strategy<Value = Vec<Indexed<f64>>> {
        vec(with_specials(small_float::<f64>()), 0..300).prop_map(|vs| {
            vs.into_iter()
                .enumerate()
                .map(|(i, v)| Indexed::new(v, i as u64))
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn argmin_and_argmax_agree_across_backends(xs in indexed_f64(), chunk in 1usize..9) {
            let par = Parallel::with_min_chunk(chunk);
            agree(&par, &ArgMin::<f64>::new(), &xs);
            agree(&par, &ArgMax::<f64>::new(), &xs);
        }

        #[test]
        fn min_max_agree_across_backends(
            xs in vec(with_specials(small_float::<f32>()), 0..300),
            chunk in 1usize..9,
        ) {
            let par = Parallel::with_min_chunk(chunk);
            agree(&par, &Min::<f32>::new(), &xs);
            agree(&par, &Max::<f32>::new(), &xs);
            let pairs: Vec<_> = xs.iter().map(|&x| MinMaxPair::of(x)).collect();
            agree(&par, &MinMax::<f32>::new(), &pairs);
        }
    }

    #[test]
    fn min_of_nans_only_is_one_value_everywhere() {
        for n in [1, 2, 5, 4096, 10_000] {
            let xs = vec![f32::NAN; n];
            for par in [Parallel::default(), Parallel::with_min_chunk(3)] {
                agree(&par, &Min::<f32>::new(), &xs);
                agree(&par, &Max::<f32>::new(), &xs);
            }
            let m = Min::<f32>::new();
            let (_, total) = Sequential
                .exclusive_scan_total(&m, &xs, m.identity())
                .unwrap();
            assert!(total.is_nan(), "{total}");
        }
        // NaN is ignored wherever it sits.
        let xs = [f32::NAN, 3.0, f32::NAN, -1.0, f32::NAN];
        assert_eq!(Sequential.reduce(&Min::<f32>::new(), &xs).unwrap(), -1.0);
        assert_eq!(Sequential.reduce(&Max::<f32>::new(), &xs).unwrap(), 3.0);
        let ix: Vec<_> = xs
            .iter()
            .enumerate()
            .map(|(i, &v)| Indexed::new(v, i as u64))
            .collect();
        assert_eq!(
            Sequential.reduce(&ArgMin::<f32>::new(), &ix).unwrap(),
            ix[3]
        );
        assert_eq!(
            Sequential.reduce(&ArgMax::<f32>::new(), &ix).unwrap(),
            ix[1]
        );
    }

    /// The device's combine must order NaN, infinities and zeros as the host's does.
    #[test]
    fn the_gpu_orders_nan_like_the_host() {
        let Some(gpu) = gpu() else { return };
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        for _ in 0..8 {
            let xs: Vec<f64> = vec(prop_oneof![small_float::<f64>(), specials::<f64>()], 5000)
                .new_tree(&mut runner)
                .unwrap()
                .current();
            let ix: Vec<_> = xs
                .iter()
                .enumerate()
                .map(|(i, &v)| Indexed::new(v, i as u64))
                .collect();
            agree(gpu, &ArgMin::<f64>::new(), &ix);
            agree(gpu, &ArgMax::<f64>::new(), &ix);
            agree(gpu, &Min::<f64>::new(), &xs);
            agree(gpu, &Max::<f64>::new(), &xs);
        }
    }
}
