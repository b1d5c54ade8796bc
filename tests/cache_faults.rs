//! The disk cache under faults, with several processes at once: an entry copied to another
//! key's path, a FIFO, a link to an endless device and a huge file at entry paths, folders in
//! the way, and temporary files left by a process killed mid-write. Every process must get the
//! right kernels without hanging or reading without bound, and the folder must end up healed.
//! Needs NVRTC only; skips without it.

mod common;

use common::gpu::nvrtc;
use monoscan::cache::{CacheConfig, KernelCache};
use monoscan::codegen::{KernelSet, KernelSpec};
use monoscan::jit::Target;
use monoscan::ops::{BitXor, Max, Min, Product, Sum};
use monoscan::{CudaOp, Monoid};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

const TARGET: Target = Target::Cubin(90);
const CHILD_DIR: &str = "MONOSCAN_TEST_FAULT_CACHE";
const CHILDREN: usize = 3;
/// The most memory a process may hold at its peak, in KiB: far above what compiling these
/// kernels takes, far below what reading the huge file or the endless device would.
const PEAK_KIB: u64 = 512 * 1024;

/// The peak resident memory of process `pid` in KiB (`VmHWM`), 0 once it is gone.
fn peak_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Small, distinct modules (tree reductions compile fastest).
fn kernels() -> Vec<CudaOp> {
    vec![
        Sum::<i32>::new().cuda(),
        Sum::<u64>::new().cuda(),
        Max::<i32>::new().cuda(),
        Min::<u32>::new().cuda(),
        Product::<i64>::new().cuda(),
        BitXor::<u8>::new().cuda(),
        Sum::<f32>::new().cuda(),
    ]
}

fn spec() -> KernelSpec {
    KernelSpec::new(KernelSet::TreeReduce { block: 256 })
}

fn images(cache: &KernelCache, order: impl Iterator<Item = usize>) -> HashMap<usize, Vec<u8>> {
    let ops = kernels();
    order
        .map(|k| {
            let m = cache.get(&ops[k], spec(), TARGET).unwrap();
            (k, m.compiled.image.clone())
        })
        .collect()
}

/// Run by `faults_heal_under_concurrent_processes` in child processes: every kernel, in an
/// order that differs from child to child.
#[test]
fn child_reads_the_faulty_cache() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    if !nvrtc() {
        return;
    }
    let shift: usize = std::env::var("MONOSCAN_TEST_FAULT_SHIFT")
        .unwrap()
        .parse()
        .unwrap();
    let n = kernels().len();
    let cache = KernelCache::new(CacheConfig::dir(dir));
    let got = images(&cache, (0..n).map(|k| (k + shift) % n));
    let want = KernelCache::new(CacheConfig::memory_only());
    let want = images(&want, 0..n);
    let wrong: Vec<usize> = (0..n).filter(|k| got[k] != want[k]).collect();
    assert!(
        wrong.is_empty(),
        "kernels {wrong:?} were served another kernel's image"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn faults_heal_under_concurrent_processes() {
    if !nvrtc() {
        return;
    }
    let n = kernels().len();
    // Reference: each kernel compiled alone into a clean folder, where its entry is the only
    // file: its image, and its path relative to the folder.
    let mut want = HashMap::new();
    let mut paths = Vec::new();
    let mut clean = Vec::new();
    for (k, op) in kernels().iter().enumerate() {
        let folder = tempfile::tempdir().unwrap();
        let cache = KernelCache::new(CacheConfig::dir(folder.path()));
        want.insert(
            k,
            cache
                .get(op, spec(), TARGET)
                .unwrap()
                .compiled
                .image
                .clone(),
        );
        let listed = cache.list().unwrap();
        assert_eq!(listed.len(), 1);
        paths.push(
            listed[0]
                .0
                .strip_prefix(folder.path())
                .unwrap()
                .to_path_buf(),
        );
        clean.push(folder);
    }

    let dir = tempfile::tempdir().unwrap();
    let at = |k: usize| dir.path().join(&paths[k]);
    let make_parent = |p: &Path| std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    // Key binding: kernel 1's valid entry copied to kernel 0's path.
    make_parent(&at(0));
    make_parent(&at(1));
    let entry_1 = clean[1].path().join(&paths[1]);
    std::fs::copy(&entry_1, at(0)).unwrap();
    std::fs::copy(&entry_1, at(1)).unwrap();
    // Bounded reads: a FIFO, a link to an endless device, a 3 GiB (sparse) file.
    make_parent(&at(2));
    assert!(Command::new("mkfifo")
        .arg(at(2))
        .status()
        .unwrap()
        .success());
    make_parent(&at(3));
    std::os::unix::fs::symlink("/dev/zero", at(3)).unwrap();
    make_parent(&at(4));
    std::fs::File::create(at(4))
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    // Recovery: a folder (not empty) where an entry belongs.
    std::fs::create_dir_all(at(5).join("left-over")).unwrap();
    // Kernel 6 has no entry; stale temporary files of writers killed long ago, and one of a
    // writer still at work, lie beside the others.
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let mut stale = Vec::new();
    for k in [0, 2, 5] {
        let p = at(k).with_file_name(format!(".tmp-999999{k}-ThreadId(1)-12345"));
        std::fs::write(&p, b"half an entry").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
        stale.push(p);
    }
    let fresh = at(1).with_file_name(".tmp-1-ThreadId(1)-1");
    std::fs::write(&fresh, b"being written").unwrap();

    // Several processes at once, each reading every kernel in its own order. Their output goes
    // to files (a pipe left unread could stall them), and their peak memory is watched.
    let exe = std::env::current_exe().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let mut children: Vec<_> = (0..CHILDREN)
        .map(|c| {
            let out = std::fs::File::create(logs.path().join(format!("{c}.out"))).unwrap();
            let err = std::fs::File::create(logs.path().join(format!("{c}.err"))).unwrap();
            let child = Command::new(&exe)
                .args(["--exact", "child_reads_the_faulty_cache", "--nocapture"])
                .env(CHILD_DIR, dir.path())
                .env("MONOSCAN_TEST_FAULT_SHIFT", (c * 2).to_string())
                .stdout(out)
                .stderr(err)
                .spawn()
                .unwrap();
            (c, child)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut failure = None;
    while !children.is_empty() && failure.is_none() {
        let mut running = Vec::new();
        for (c, mut child) in children {
            let peak = peak_kib(child.id());
            match child.try_wait().unwrap() {
                Some(status) => {
                    let out =
                        std::fs::read_to_string(logs.path().join(format!("{c}.out"))).unwrap();
                    let err =
                        std::fs::read_to_string(logs.path().join(format!("{c}.err"))).unwrap();
                    if !(status.success() && out.contains("1 passed")) {
                        failure = Some(format!("process {c}: {status:?}\n{out}\n{err}"));
                    }
                }
                None if peak > PEAK_KIB => {
                    failure = Some(format!("process {c} read without bound ({peak} KiB)"));
                    running.push((c, child));
                }
                None if Instant::now() > deadline => {
                    failure = Some(format!("process {c} hung on the faulty cache"));
                    running.push((c, child));
                }
                None => running.push((c, child)),
            }
        }
        children = running;
        std::thread::sleep(Duration::from_millis(20));
    }
    for (_, mut child) in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    if let Some(why) = failure {
        panic!("{why}");
    }

    // Healed: a new process reads every kernel from disk, each its own; the stale temporary
    // files are gone, the fresh one is left to its writer.
    let after = KernelCache::new(CacheConfig::dir(dir.path()));
    let got = images(&after, 0..n);
    let wrong: Vec<usize> = (0..n).filter(|k| got[k] != want[k]).collect();
    assert!(
        wrong.is_empty(),
        "kernels {wrong:?} are another kernel's entry"
    );
    let s = after.stats();
    assert_eq!((s.disk_hits, s.compiles, s.corrupt), (n as u64, 0, 0));
    for p in &stale {
        assert!(!p.exists(), "{} was not swept", p.display());
    }
    assert!(fresh.exists());
    let entries = walk(dir.path())
        .into_iter()
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".tmp-")
        })
        .count();
    assert_eq!(entries, n);
}
