//! The kernel cache: memory hits, disk hits without compiling, corrupt entries replaced,
//! concurrent processes, unwritable folders. Needs NVRTC only; skips without it.

mod common;

use common::gpu::nvrtc;
use monoscan::cache::{CacheConfig, KernelCache};
use monoscan::codegen::{KernelSet, KernelSpec};
use monoscan::jit::Target;
use monoscan::ops::Sum;
use monoscan::tuning::{policy, DeviceLimits, Purpose, Tuning};
use monoscan::Monoid;
use std::path::Path;

const TARGET: Target = Target::Cubin(90);

fn spec() -> KernelSpec {
    let limits = DeviceLimits::for_arch(90);
    let shape = policy::tile_shape(4, &limits, &Tuning::default(), Purpose::SinglePass).unwrap();
    KernelSpec::new(KernelSet::SinglePass(shape))
}

fn get(cache: &KernelCache) -> Vec<u8> {
    cache
        .get(&Sum::<i32>::new().cuda(), spec(), TARGET)
        .unwrap()
        .compiled
        .image
        .clone()
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    KernelCache::new(CacheConfig::dir(dir))
        .list()
        .unwrap()
        .into_iter()
        .map(|(p, _, _)| p)
        .collect()
}

#[test]
fn memory_then_disk_hits_without_compiling() {
    if !nvrtc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let first = KernelCache::new(CacheConfig::dir(dir.path()));
    let image = get(&first);
    assert_eq!(first.stats().compiles, 1);
    get(&first);
    assert_eq!(first.stats().memory_hits, 1);
    assert_eq!(first.stats().compiles, 1);

    // A new process (a new cache over the same folder) reads the disk entry, no NVRTC compile.
    let second = KernelCache::new(CacheConfig::dir(dir.path()));
    assert_eq!(get(&second), image);
    let s = second.stats();
    assert_eq!((s.disk_hits, s.compiles), (1, 0));
    let listed = second.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert!(
        listed[0].2.contains("sum_i32 single-pass"),
        "{:?}",
        listed[0]
    );
}

#[test]
fn a_corrupt_entry_is_detected_and_replaced() {
    if !nvrtc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let image = get(&KernelCache::new(CacheConfig::dir(dir.path())));
    let path = entries(dir.path()).pop().unwrap();
    for damage in ["flip", "truncate"] {
        let mut bytes = std::fs::read(&path).unwrap();
        match damage {
            "flip" => {
                let mid = bytes.len() / 2;
                bytes[mid] ^= 0x40;
            }
            _ => bytes.truncate(bytes.len() / 3),
        }
        std::fs::write(&path, &bytes).unwrap();
        let cache = KernelCache::new(CacheConfig::dir(dir.path()));
        assert_eq!(get(&cache), image, "{damage}");
        let s = cache.stats();
        assert_eq!((s.corrupt, s.compiles, s.disk_hits), (1, 1, 0), "{damage}");
        // The entry was rewritten: the next process hits it.
        let again = KernelCache::new(CacheConfig::dir(dir.path()));
        assert_eq!(get(&again), image);
        assert_eq!(again.stats().disk_hits, 1, "{damage}");
    }
}

/// Run by `two_processes_compile_the_same_kernel_at_once` in child processes.
#[test]
fn child_compiles_into_shared_folder() {
    let Ok(dir) = std::env::var("MONOSCAN_TEST_CHILD_CACHE") else {
        return;
    };
    if !nvrtc() {
        return;
    }
    let cache = KernelCache::new(CacheConfig::dir(dir));
    assert!(!get(&cache).is_empty());
}

#[test]
fn two_processes_compile_the_same_kernel_at_once() {
    if !nvrtc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "child_compiles_into_shared_folder",
                    "--nocapture",
                ])
                .env("MONOSCAN_TEST_CHILD_CACHE", dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
    }
    // One valid entry, no temporary files left.
    assert_eq!(entries(dir.path()).len(), 1);
    let cache = KernelCache::new(CacheConfig::dir(dir.path()));
    get(&cache);
    assert_eq!(cache.stats().disk_hits, 1);
    let leftovers = walk(dir.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".tmp-"))
        .count();
    assert_eq!(leftovers, 0);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
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
fn an_unwritable_folder_degrades_to_memory() {
    if !nvrtc() {
        return;
    }
    // A folder below a regular file can be created by nobody, root included.
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let cache = KernelCache::new(CacheConfig::dir(blocker.join("cache")));
    let image = get(&cache);
    assert!(!image.is_empty());
    get(&cache);
    let s = cache.stats();
    assert_eq!((s.compiles, s.memory_hits), (1, 1));
}

#[test]
fn a_read_only_folder_still_serves_its_entries() {
    if !nvrtc() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let image = get(&KernelCache::new(CacheConfig::dir(dir.path())));
    let set_mode = |mode| {
        for p in walk(dir.path())
            .iter()
            .filter_map(|p| p.parent())
            .chain([dir.path()])
        {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    };
    set_mode(0o555);
    let cache = KernelCache::new(CacheConfig::dir(dir.path()));
    assert_eq!(get(&cache), image);
    assert_eq!(cache.stats().disk_hits, 1);
    set_mode(0o755);
}
