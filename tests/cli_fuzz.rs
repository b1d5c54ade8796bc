//! Malformed command lines for `monoscan run`, `lab` and `cache`: hundreds of combinations of one
//! or more bad values with valid ones. None may panic (exit status 101), die of a signal (an
//! abort), hang, or succeed: bad input is a usage error (2) or, for what only running can tell,
//! a runtime error (1).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A small deterministic generator (xorshift), so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// An option of a subcommand: its valid values and values it must reject.
struct Opt {
    name: &'static str,
    good: &'static [&'static str],
    bad: &'static [&'static str],
}

const NUMBERS_BAD: &[&str] = &[
    "0",
    "-1",
    "abc",
    "",
    "1.5",
    "1e3",
    "0x10",
    "18446744073709551616",
    "99999999999999999999999999",
    "--",
    "٣",
    " 7",
];

const RUN: &[Opt] = &[
    Opt {
        name: "--n",
        good: &["1", "2", "100", "2048"],
        bad: NUMBERS_BAD,
    },
    Opt {
        name: "--op",
        good: &["sum", "max", "min", "bitxor", "argmin", "segsum"],
        bad: &["nope", "", "sum,max", "SUM ", "Σ"],
    },
    Opt {
        name: "--dtype",
        good: &["i32", "u64", "i64"],
        bad: &["f16", "i128", "", "int", "u32x"],
    },
    Opt {
        name: "--backend",
        good: &["cpu"],
        bad: &["tpu", "", "gpu0", "CPU!"],
    },
    Opt {
        name: "--segment-len",
        good: &["1", "7", "256"],
        bad: NUMBERS_BAD,
    },
];

const LAB: &[Opt] = &[
    Opt {
        name: "--n",
        good: &["1", "16", "100"],
        bad: &[
            "0",
            "-3",
            "x",
            "",
            "1073741825",
            "18446744073709551615",
            "2.0",
        ],
    },
    Opt {
        name: "--op",
        good: &["sum", "min", "argmax", "matmod"],
        bad: &["nope", "", "segsum2"],
    },
    Opt {
        name: "--reps",
        good: &["1", "2"],
        bad: &[
            "0",
            "-1",
            "10001",
            "18446744073709551615",
            "18446744073709551616",
            "many",
            "",
        ],
    },
];

/// Combinations that parse but that the operator does not support, or values the dtype cannot
/// hold: usage errors found after parsing.
const RUN_UNSUPPORTED: &[&str] = &[
    "--op bitand --dtype f32",
    "--op affine --dtype i32",
    "--op matmod --dtype u64",
    "--dtype i8 --n 200",
    "--dtype u8 --n 256",
    "--op argmin --dtype i16 --n 40000",
];

const FLAGS_BAD: &[&str] = &["--frobnicate", "-x", "--json=maybe", "--n=", "positional"];

/// Runs the CLI, which must end within a minute.
fn monoscan(args: &[String]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_monoscan"))
        .args(args)
        .env("MONOSCAN_CACHE_DIR", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("monoscan {args:?} still ran after a minute");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

/// Asserts that a bad command line failed cleanly.
fn assert_rejected(args: &[String]) {
    let out = monoscan(args);
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(1) | Some(2) => {}
        Some(0) => panic!("monoscan {args:?} accepted bad input"),
        Some(101) => panic!("monoscan {args:?} panicked:\n{err}"),
        other => panic!(
            "monoscan {args:?} ended with {other:?} ({:?}):\n{err}",
            out.status
        ),
    }
    assert!(!err.contains("panicked"), "monoscan {args:?}:\n{err}");
    assert!(!err.trim().is_empty(), "monoscan {args:?} failed silently");
}

/// A command line of `sub` with every option at a valid value, in random order, then
/// `bad_count` of them replaced by bad values (or unknown flags).
fn line(rng: &mut Rng, sub: &str, opts: &[Opt], bad_count: usize) -> Vec<String> {
    let mut chosen: Vec<(usize, bool)> = (0..opts.len()).map(|i| (i, false)).collect();
    for _ in 0..bad_count {
        let k = rng.below(chosen.len());
        chosen[k].1 = true;
    }
    let mut args = vec![sub.to_string()];
    for (i, bad) in chosen {
        if rng.below(3) == 0 && !bad {
            continue; // leave this option at its default
        }
        let o = &opts[i];
        let v = if bad {
            rng.pick(o.bad)
        } else {
            rng.pick(o.good)
        };
        args.push(o.name.to_string());
        args.push(v.to_string());
    }
    if rng.below(4) == 0 {
        args.push(rng.pick(FLAGS_BAD).to_string());
    }
    args
}

#[test]
fn valid_lines_of_the_generator_succeed() {
    // The generator's valid values must really be valid (every valid op takes every valid
    // dtype), or the test below proves nothing.
    let mut rng = Rng(0x5eed);
    for _ in 0..12 {
        for (sub, opts) in [("run", RUN), ("lab", LAB)] {
            let mut args = line(&mut rng, sub, opts, 0);
            args.retain(|a| !FLAGS_BAD.contains(&a.as_str()));
            let out = monoscan(&args);
            assert_eq!(
                out.status.code(),
                Some(0),
                "monoscan {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn malformed_command_lines_fail_cleanly() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..120 {
        let bad = 1 + round % 3;
        assert_rejected(&line(&mut rng, "run", RUN, bad));
        assert_rejected(&line(&mut rng, "lab", LAB, bad));
    }
    for combo in RUN_UNSUPPORTED {
        let mut args = vec!["run".to_string(), "--backend".into(), "cpu".into()];
        args.extend(combo.split(' ').map(String::from));
        assert_rejected(&args);
    }
    for args in [
        "cache frob",
        "cache list extra",
        "cache",
        "lab --reps",
        "run --n",
        "nosuchcommand",
        "run run",
        "--n 5",
        "run --n 5 --n 6",
        "run --json --json",
        "lab --n 16 --reps 0",
    ] {
        assert_rejected(&args.split(' ').map(String::from).collect::<Vec<_>>());
    }
}
