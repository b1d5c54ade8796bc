//! Integration tests of the `monoscan` binary: run it, check exit status, stdout and stderr.

use serde_json::{json, Value};
use std::process::{Command, Output};

const INTS: [&str; 8] = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"];
const FLOATS: [&str; 2] = ["f32", "f64"];
const P: u64 = 1_000_000_007;

/// Runs the binary with `args`, a whitespace-separated command line.
fn monoscan(args: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_monoscan"))
        .args(args.split_whitespace())
        .output()
        .expect("the monoscan binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `monoscan run <args> --json`, checks success and parses stdout.
fn run_json(args: &str) -> Value {
    let out = monoscan(&format!("run {args} --json"));
    assert!(out.status.success(), "{args:?} failed: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// Every number as f64, so that `55`, `55.0` and `55u64` compare equal.
fn norm(v: &Value) -> Value {
    match v {
        Value::Number(x) => json!(x.as_f64().expect("finite number")),
        Value::Array(xs) => Value::Array(xs.iter().map(norm).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), norm(x))).collect()),
        other => other.clone(),
    }
}

#[test]
fn json_acceptance_case() {
    let v = run_json("--n 2048");
    let obj = v.as_object().expect("an object");
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut expected: Vec<&str> = "backend op dtype n reduce_ms scan_ms first total"
        .split(' ')
        .collect();
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(v["total"], json!(2_098_176));
    let first = v["first"].as_array().expect("first is an array");
    assert_eq!(first.len(), 20);
    assert_eq!(first[..4], [json!(1), json!(3), json!(6), json!(10)]);
    assert_eq!(v["op"], json!("sum"));
    assert_eq!(v["dtype"], json!("i32"));
    assert_eq!(v["n"], json!(2048));
    assert!(v["reduce_ms"].as_f64().is_some_and(|t| t >= 0.0));
    assert!(v["scan_ms"].as_f64().is_some_and(|t| t >= 0.0));
    assert!(v["backend"].as_str().is_some_and(|b| !b.is_empty()));
}

#[test]
fn no_arguments_runs_the_default_run() {
    let out = monoscan("");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in ["sum", "i32", "2048", "2098176", "1 3 6 10 15"] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    // `auto` says, in at most one line, why it runs on the CPU.
    assert!(stderr(&out).lines().count() <= 1, "{}", stderr(&out));
}

#[test]
fn auto_falls_back_with_one_note() {
    let out = monoscan("run --n 100 --json");
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout stays pure JSON");
    let err = stderr(&out);
    if v["backend"].as_str().is_some_and(|b| b.starts_with("cpu")) {
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("CPU"), "{err}");
    }
}

#[test]
fn text_output_lists_prefixes() {
    let out = monoscan("run --n 5 --backend cpu");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 3 6 10 15\n"), "{text}");
    assert!(text.contains("15"), "{text}");
    assert!(stderr(&out).is_empty(), "--backend cpu prints no note");
    let out = monoscan("run --n 25 --backend cpu");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("190 210 ..."), "{text}");
    assert!(text.contains("325"), "{text}");
}

/// The expected total of `op` over 1..=n, computed here without the library.
fn expected_total(op: &str, n: u64, seg: u64) -> Value {
    let sum = n * (n + 1) / 2;
    match op {
        "sum" => json!(sum),
        "product" => json!((1..=n).product::<u64>()),
        "min" => json!(1),
        "max" => json!(n),
        "bitand" => json!((1..=n).fold(u64::MAX, |a, x| a & x)),
        "bitor" => json!((1..=n).fold(0, |a, x| a | x)),
        "bitxor" => json!((1..=n).fold(0, |a, x| a ^ x)),
        "argmin" => json!({"value": 1, "index": 0}),
        "argmax" => json!({"value": n, "index": n - 1}),
        "minmax" => json!({"min": 1, "max": n}),
        "affine" => json!({"a": 1, "b": sum}),
        "matmod" => json!({"m": [1, sum % P, 0, 1]}),
        "segsum" => {
            let head = (n - 1) / seg * seg + 1;
            json!({"value": (head..=n).sum::<u64>(), "flag": 1})
        }
        _ => unreachable!("unknown op {op}"),
    }
}

#[test]
fn every_op_with_every_fitting_dtype_on_the_cpu() {
    let all: Vec<&str> = INTS.iter().chain(&FLOATS).copied().collect();
    let table: [(&str, &[&str]); 13] = [
        ("sum", &all),
        ("product", &all),
        ("min", &all),
        ("max", &all),
        ("bitand", &INTS),
        ("bitor", &INTS),
        ("bitxor", &INTS),
        ("argmin", &all),
        ("argmax", &all),
        ("minmax", &all),
        ("affine", &FLOATS),
        ("matmod", &["u32"]),
        ("segsum", &all),
    ];
    for (op, dtypes) in table {
        // 5! = 120 and 1 + ... + 10 = 55 fit even i8.
        let n: u64 = if op == "product" { 5 } else { 10 };
        for dtype in dtypes {
            let v = run_json(&format!(
                "--backend cpu --op {op} --dtype {dtype} --n {n} --segment-len 4"
            ));
            let want = expected_total(op, n, 4);
            assert_eq!(norm(&v["total"]), norm(&want), "{op} {dtype}");
            let first = v["first"].as_array().expect("first is an array");
            assert_eq!(first.len() as u64, n, "{op} {dtype}");
            // Exact here, so the last prefix is the total.
            assert_eq!(norm(&first[first.len() - 1]), norm(&want), "{op} {dtype}");
            assert_eq!(v["op"].as_str(), Some(op));
            assert_eq!(v["dtype"].as_str(), Some(*dtype));
        }
    }
}

#[test]
fn default_dtypes_depend_on_the_op() {
    for (op, dtype) in [("sum", "i32"), ("affine", "f64"), ("matmod", "u32")] {
        let v = run_json(&format!("--backend cpu --op {op} --n 3"));
        assert_eq!(v["dtype"], json!(dtype), "{op}");
    }
}

#[test]
fn large_inputs_use_many_chunks() {
    let n = 100_000u64;
    for (op, dtype) in [
        ("sum", "i64"),
        ("matmod", "u32"),
        ("segsum", "u64"),
        ("argmax", "u32"),
    ] {
        let v = run_json(&format!("--backend cpu --op {op} --dtype {dtype} --n {n}"));
        let want = expected_total(op, n, 256);
        assert_eq!(norm(&v["total"]), norm(&want), "{op} {dtype}");
        assert_eq!(v["first"].as_array().map(Vec::len), Some(20));
    }
}

#[test]
fn integer_sums_wrap() {
    // 1 + ... + 100 = 5050 = 19 * 256 + 186.
    let v = run_json("--backend cpu --dtype u8 --n 100");
    assert_eq!(v["total"], json!(186));
    let v = run_json("--backend cpu --dtype i8 --n 100");
    assert_eq!(v["total"], json!(186 - 256));
}

/// Runs `monoscan <args>`, expects failure with `code` and every `|`-separated phrase of `want`
/// on stderr.
fn fails(args: &str, code: i32, want: &str) {
    let out = monoscan(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    for w in want.split('|') {
        assert!(err.contains(w), "{args:?}: {w:?} missing from {err:?}");
    }
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
}

#[test]
fn bad_arguments_are_usage_errors() {
    fails("run --op nope", 2, "invalid value|nope|bitand");
    fails("run --dtype i128", 2, "invalid value|i128");
    fails("frobnicate", 2, "unrecognized subcommand");
    fails("run --n 0", 2, "--n");
    fails("run --n -5", 2, "--n");
    fails("run --segment-len 0", 2, "--segment-len");
    fails("run --segment-len -1", 2, "--segment-len");
    fails("run --backend tpu", 2, "invalid value|tpu");
    fails(
        "bench --first-wave sometimes",
        2,
        "expected auto, skip or prefetch",
    );
    fails(
        "bench --pace fast",
        2,
        "expected auto, off or a whole number",
    );
}

#[test]
fn dtypes_that_do_not_fit_the_op() {
    for op in ["bitand", "bitor", "bitxor"] {
        for dtype in FLOATS {
            let args = format!("run --op {op} --dtype {dtype}");
            fails(
                &args,
                2,
                &format!("{op}|{dtype}|allowed dtypes: i8, u8|u64"),
            );
        }
    }
    fails(
        "run --op affine --dtype i32",
        2,
        "affine|allowed dtypes: f32, f64",
    );
    fails(
        "run --op matmod --dtype u64",
        2,
        "matmod|allowed dtypes: u32",
    );
    fails("run --op matmod --dtype f32", 2, "u32");
}

#[test]
fn values_the_dtype_cannot_hold() {
    fails("run --dtype i8 --n 2048", 2, "i8|largest --n|127");
    fails("run --dtype u8 --n 256", 2, "255");
    fails("run --op argmin --dtype i16 --n 40000", 2, "32767");
    fails("run --op segsum --dtype u16 --n 70000", 2, "65535");
    fails("run --dtype i32 --n 3000000000", 2, "2147483647");
    // The largest allowed n itself is fine.
    let v = run_json("--backend cpu --dtype i8 --n 127 --op max");
    assert_eq!(v["total"], json!(127));
}

#[test]
fn sizes_beyond_memory_or_usize() {
    // 3 * 2^64 * 8 bytes cannot even be counted in usize.
    fails("run --dtype f64 --n 18446744073709551615", 2, "too large");
    fails("run --dtype u64 --n 18446744073709551615", 2, "too large");
    // 24 PB: refused from /proc/meminfo, or by the fallible allocation without it.
    let want = if std::path::Path::new("/proc/meminfo").exists() {
        "1000000000000000|24000000000000000 bytes|MemAvailable"
    } else {
        "cannot allocate"
    };
    fails("run --dtype f64 --n 1000000000000000", 1, want);
}

#[test]
fn gpu_backend_fails_clearly_when_absent() {
    let out = monoscan("run --backend gpu --n 100 --json");
    if !out.status.success() {
        fails("run --backend gpu --n 100", 1, "GPU");
    } else {
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(v["total"], json!(5050));
    }
}

#[test]
fn help_and_version_succeed() {
    for args in ["--help", "run --help", "--version"] {
        let out = monoscan(args);
        assert!(out.status.success(), "{args:?}");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    let out = monoscan("run --help");
    let help = String::from_utf8_lossy(&out.stdout);
    for want in "--op --dtype --backend --segment-len --json matmod".split(' ') {
        assert!(help.contains(want), "{want:?} missing from help");
    }
}

/// Without NVRTC, `doctor` prints the short error (the remedy first) and then every place
/// searched, one per line, starting with `MONOSCAN_NVRTC_DIR`.
#[test]
fn doctor_lists_every_place_nvrtc_was_searched() {
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_monoscan"));
    cmd.arg("doctor").env("MONOSCAN_NVRTC_DIR", empty.path());
    for var in ["CUDA_PATH", "CUDA_HOME", "LD_LIBRARY_PATH"] {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let Some(fail) = report.lines().find(|l| l.starts_with("[FAIL] NVRTC")) else {
        eprintln!("skipped: NVRTC is installed where the loader finds it by itself:\n{report}");
        return;
    };
    let pip = fail.find("pip install").expect(fail);
    assert!(pip < fail.find("Searched").expect(fail), "{fail}");
    let listed: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.contains("searched, in order:"))
        .skip(1)
        .take_while(|l| l.starts_with("         "))
        .map(str::trim)
        .collect();
    assert_eq!(listed.first().copied(), empty.path().to_str(), "{report}");
    let count: usize = fail
        .split("Searched ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect(fail);
    assert_eq!(listed.len(), count, "{report}");
}

/// `doctor` fails (exit status 1, the count on stderr) exactly when a line says `[FAIL]`, so a
/// script can ask it whether the GPU path works.
#[test]
fn doctor_exit_status_follows_its_checks() {
    let empty = tempfile::tempdir().unwrap();
    for nvrtc in [Some(empty.path().to_path_buf()), None] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_monoscan"));
        cmd.arg("doctor");
        if let Some(dir) = &nvrtc {
            // NVRTC in an empty folder: that check fails unless the loader finds it elsewhere.
            cmd.env("MONOSCAN_NVRTC_DIR", dir);
        }
        let out = cmd.output().unwrap();
        let report = String::from_utf8_lossy(&out.stdout);
        let failed = report.lines().filter(|l| l.starts_with("[FAIL]")).count();
        if failed == 0 {
            assert_eq!(out.status.code(), Some(0), "{report}\n{}", stderr(&out));
        } else {
            assert_eq!(out.status.code(), Some(1), "{report}\n{}", stderr(&out));
            assert!(
                stderr(&out).contains(&format!("{failed} check(s) failed")),
                "{}",
                stderr(&out)
            );
        }
    }
}

/// `emit --arch` takes compute capabilities only; 0 and u32::MAX are usage errors.
#[test]
fn emit_rejects_impossible_architectures() {
    for arch in ["0", "49", "200", "4294967295"] {
        let out = Command::new(env!("CARGO_BIN_EXE_monoscan"))
            .args(["emit", "--arch", arch])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "--arch {arch}: {}",
            stderr(&out)
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_monoscan"))
        .args(["emit", "--arch", "80"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `emit --algo rows` prints the row kernel a device of the architecture runs: the staged one
/// (by tensor copies on sm_90) where it applies, the register one before sm_80 and for values
/// it does not stage; `rows-reverse` the same over the opposite monoid; `segments` and
/// `segments-reverse` the same for rows given by offsets; `staged` and `staged-reverse` the 1-D
/// staged scan, forwards and from the end; `single-pass-reverse` the register-tile scan,
/// `hierarchical-reverse` the reduce-then-scan and `share-scan-reverse` the share scan from the
/// end (`share-scan` forwards; neither before sm_90).
#[test]
fn emit_prints_the_row_kernels() {
    let emit = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_monoscan"))
            .arg("emit")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let staged = emit(&["--op", "sum", "--dtype", "f32", "--algo", "rows"]);
    assert!(staged.contains("_row_staged(") && staged.contains("cp.async.bulk.tensor"));
    assert!(staged.contains("#define MS_REVERSE 0"));
    let reverse = emit(&["--op", "sum", "--dtype", "f32", "--algo", "rows-reverse"]);
    assert!(reverse.contains("_row_staged(") && reverse.contains("#define MS_REVERSE 1"));
    // The 1-D staged scan, forwards and from the end (over the opposite monoid).
    let staged = emit(&["--op", "affine", "--dtype", "f64", "--algo", "staged"]);
    assert!(staged.contains("_scan_staged(") && staged.contains("#define MS_REVERSE 0"));
    let reverse = emit(&[
        "--op",
        "affine",
        "--dtype",
        "f64",
        "--algo",
        "staged-reverse",
    ]);
    assert!(reverse.contains("_scan_staged(") && reverse.contains("#define MS_REVERSE 1"));
    assert!(reverse.contains("inner::combine(b, a)"));
    let forward = emit(&["--op", "affine", "--dtype", "f64", "--algo", "single-pass"]);
    assert!(forward.contains("#define MS_REVERSE 0") && !forward.contains("combine(b, a)"));
    let reverse = emit(&[
        "--op",
        "affine",
        "--dtype",
        "f64",
        "--algo",
        "single-pass-reverse",
        "--arch",
        "75",
    ]);
    assert!(reverse.contains("_scan_single_pass(") && reverse.contains("#define MS_REVERSE 1"));
    assert!(reverse.contains("inner::combine(b, a)"));
    let forward = emit(&["--op", "matmod", "--algo", "hierarchical"]);
    assert!(forward.contains("_tile_totals(") && forward.contains("#define MS_REVERSE 0"));
    let reverse = emit(&["--op", "matmod", "--algo", "hierarchical-reverse"]);
    assert!(reverse.contains("_tile_totals(") && reverse.contains("#define MS_REVERSE 1"));
    assert!(reverse.contains("inner::combine(b, a)"));
    let forward = emit(&["--op", "matmod", "--algo", "share-scan"]);
    assert!(forward.contains("_share_scan(") && forward.contains("#define MS_REVERSE 0"));
    let reverse = emit(&["--op", "matmod", "--algo", "share-scan-reverse"]);
    assert!(reverse.contains("_share_totals(") && reverse.contains("#define MS_REVERSE 1"));
    assert!(reverse.contains("inner::combine(b, a)"));
    let refused = Command::new(env!("CARGO_BIN_EXE_monoscan"))
        .args([
            "emit",
            "--op",
            "matmod",
            "--algo",
            "share-scan-reverse",
            "--arch",
            "80",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success() && stderr(&refused).contains("share scan"));
    let ampere = emit(&[
        "--op", "affine", "--dtype", "f64", "--algo", "rows", "--arch", "80",
    ]);
    assert!(ampere.contains("_row_staged(") && !ampere.contains("cp.async.bulk.tensor"));
    let turing = emit(&[
        "--op", "sum", "--dtype", "f32", "--algo", "rows", "--arch", "75",
    ]);
    assert!(turing.contains("_row_scan(") && !turing.contains("_row_staged("));
    let segments = emit(&["--op", "sum", "--dtype", "f32", "--algo", "segments"]);
    assert!(
        segments.contains("_segment_staged(const")
            && !segments.contains("_row_staged(const ms_val")
    );
    let reverse = emit(&[
        "--op",
        "sum",
        "--dtype",
        "f32",
        "--algo",
        "segments-reverse",
    ]);
    assert!(reverse.contains("_segment_staged(") && reverse.contains("#define MS_REVERSE 1"));
    let turing = emit(&[
        "--op", "sum", "--dtype", "f32", "--algo", "segments", "--arch", "75",
    ]);
    assert!(turing.contains("_segment_scan(") && !turing.contains("_segment_staged("));
}

/// Without a GPU, `bench` says it needs one and points at what runs on the CPU, never at a
/// flag it does not take.
#[test]
fn bench_without_a_gpu_names_a_command_that_works() {
    let out = Command::new(env!("CARGO_BIN_EXE_monoscan"))
        .args([
            "bench",
            "--cases",
            "sum-i32",
            "--min-log2",
            "10",
            "--max-log2",
            "10",
        ])
        .args(["--reps", "1"])
        .output()
        .unwrap();
    if out.status.success() {
        eprintln!("skipped: this machine has a GPU, so bench ran");
        return;
    }
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("needs a GPU"), "{err}");
    assert!(err.contains("`monoscan run --backend cpu`"), "{err}");
    assert!(!err.contains("command line)"), "{err}");
}

/// `bench --cases` takes the representative classes by name and all of them as `classes`, and
/// lists them when a case is unknown (before it looks for a GPU).
#[test]
fn bench_names_the_classes() {
    fails(
        "bench --cases sum3-u32,nosuch",
        2,
        "unknown case `nosuch`|classes|mat2-u64|logsumexp-f64|hash-mod-u64",
    );
}

#[test]
fn check_runs_the_laws_and_compiles_every_kernel_set() {
    let out = monoscan("check --op matmod --op sum --dtype u32 --cases 16");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["matmod u32", "sum u32"] {
        assert!(
            text.contains(&format!("[ ok ] {name}\n  laws: all hold")),
            "{text}"
        );
    }
    // The kernels compile where NVRTC is (which MONOSCAN_REQUIRE_NVRTC=1 demands); without
    // it, and without a GPU, the report says so once.
    if std::env::var("MONOSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
        assert_eq!(text.matches("sets compile for sm_90").count(), 2, "{text}");
    } else {
        assert!(
            text.contains("sets compile for sm_90")
                || text.contains("kernels: skipped for every operator"),
            "{text}"
        );
    }
    assert!(text.contains("device:"), "{text}");
}

#[test]
fn check_refuses_what_it_cannot_check() {
    fails(
        "check --op matmod --dtype i32",
        2,
        "--op matmod does not take --dtype i32",
    );
    fails("check --arch 7", 2, "--arch");
    fails("check --cases 0", 2, "--cases");
    fails("check --op nope", 2, "invalid value|nope");
}

/// Runs `monoscan <args>` with the disk cache in `dir`.
fn monoscan_with_cache(args: &str, dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_monoscan"))
        .args(args.split_whitespace())
        .env("MONOSCAN_CACHE_DIR", dir)
        .output()
        .expect("the monoscan binary runs")
}

/// Whether NVRTC is loadable; says why not, or fails under MONOSCAN_REQUIRE_NVRTC=1.
fn nvrtc() -> bool {
    match monoscan::jit::nvrtc() {
        Ok(_) => true,
        Err(e) => {
            let required = std::env::var("MONOSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "MONOSCAN_REQUIRE_NVRTC=1 but NVRTC is missing: {e}"
            );
            eprintln!("skipped: {e}");
            false
        }
    }
}

#[test]
fn cache_warm_compiles_once_then_finds_everything_on_disk() {
    if !nvrtc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = "cache warm --arch 90,80 --op sum,affine --dtype i32,f64";
    let out = monoscan_with_cache(args, dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    // sum i32, sum f64 and affine f64, each with the 5 modules of the default path on sm_80
    // and 6 on sm_90 (the staged scan in its large and its small-input tiles), on sm_90 for
    // sum f64 and affine f64 the staged reduce's linear form for large inputs, and on both
    // for sum f64 the staged reduce's short runs for small inputs.
    assert!(
        text.contains("37 module(s): 37 compiled, 0 from disk"),
        "{text}"
    );
    assert!(
        text.contains("affine_f64 single-pass") && text.contains("(sm_80)"),
        "{text}"
    );
    let out = monoscan_with_cache(&format!("{args} --quiet"), dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("37 module(s): 0 compiled, 37 from disk"),
        "{text}"
    );
    let out = monoscan_with_cache("cache list", dir.path());
    assert!(String::from_utf8_lossy(&out.stdout).contains("37 module(s)"));
    // Other algorithms add their own modules.
    let out = monoscan_with_cache(
        "cache warm --arch 90 --op matmod --algos brent-kung --quiet",
        dir.path(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 module(s): 2 compiled"), "{text}");
}

#[test]
fn cache_warm_refuses_what_it_cannot_warm() {
    let dir = tempfile::tempdir().unwrap();
    let fails_with = |args: &str, code: i32, want: &str| {
        let out = monoscan_with_cache(args, dir.path());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args}: {err}");
        assert!(err.contains(want), "{args}: {want:?} missing from {err:?}");
    };
    fails_with(
        "cache warm --arch 90 --op matmod --dtype i32",
        2,
        "no operator accepts",
    );
    fails_with("cache warm --arch ninety", 2, "invalid value");
    fails_with(
        "cache warm --arch 90 --algos fastest",
        2,
        "unknown algorithm",
    );
    if nvrtc() {
        fails_with(
            "cache warm --arch 10 --op sum --dtype i32",
            1,
            "cannot compile for",
        );
    }
}
