//! The disk layer: `<dir>/v2/<target>/<2 hex>/<key>.bin`.
//!
//! Each file is a header (magic, format version, kind, key, label and payload lengths, SHA-256
//! of key, label and payload) followed by the key, the label (what the module is, for
//! `monoscan cache list`) and the payload (CUBIN or PTX). What the layer guarantees
//! (`docs/cache.md` says the same at more length):
//!
//! - **Key binding.** An entry holds the key it was written for; a valid entry found under
//!   another key's path (copied, renamed, restored from elsewhere) is a miss, never a hit.
//! - **Atomicity.** Writes go to a temporary file in the same folder, then a rename, so a
//!   reader never sees a partial file, and processes writing the same key at once all succeed.
//! - **Bounded reads.** Only regular files are opened (never a link, FIFO, device or folder),
//!   without blocking, and nothing larger than [`MAX_ENTRY_BYTES`] is read.
//! - **Recovery.** A file that fails any check is a miss, and the recompiled module replaces
//!   it; a folder at an entry's path, or a file at a shard folder's path, is removed when the
//!   entry is written. A failed write costs only that entry (each later write is tried again),
//!   and temporary files older than [`STALE_TMP`] (left by a process killed mid-write) are
//!   removed by the next process that writes.

use super::key::FORMAT_VERSION;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const MAGIC: &[u8; 8] = b"MONOSCAN";
/// Magic, version, kind, key length, label length, payload length, checksum.
const HEADER: usize = 8 + 4 + 4 + 4 + 4 + 8 + 32;

/// The largest entry file read or written, in bytes. Compiled modules are far smaller (tens to
/// hundreds of KiB); anything larger at an entry's path is not read.
pub const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// Temporary files older than this are left over from a process that died mid-write (a write
/// takes milliseconds) and are removed.
pub const STALE_TMP: Duration = Duration::from_secs(600);

/// The prefix of temporary files.
const TMP_PREFIX: &str = ".tmp-";

/// Payload kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Machine code.
    Cubin = 0,
    /// PTX text.
    Ptx = 1,
}

/// An entry read back from disk.
#[derive(Debug, Clone)]
pub struct Entry {
    /// What the payload is.
    pub kind: Kind,
    /// The module's description.
    pub label: String,
    /// CUBIN or PTX bytes.
    pub payload: Vec<u8>,
}

/// What a load found.
#[derive(Debug)]
pub enum Loaded {
    /// A valid entry written for the key asked for.
    Hit(Entry),
    /// No file.
    Missing,
    /// Something that is not a valid entry for the key (truncated, corrupt, foreign, another
    /// key's entry, not a regular file, too large).
    Corrupt(String),
}

/// The disk layer.
#[derive(Debug)]
pub struct Disk {
    root: PathBuf,
    max_bytes: u64,
    swept: AtomicBool,
}

impl Disk {
    /// A disk layer rooted at `dir` (created lazily).
    pub fn new(dir: PathBuf) -> Self {
        Disk::with_limit(dir, MAX_ENTRY_BYTES)
    }

    /// A disk layer that reads and writes no entry larger than `max_bytes`.
    pub(crate) fn with_limit(dir: PathBuf, max_bytes: u64) -> Self {
        Disk {
            root: dir,
            max_bytes,
            swept: AtomicBool::new(false),
        }
    }

    /// The folder given at creation.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// The versioned folder holding the entries.
    pub fn versioned(&self) -> PathBuf {
        self.root.join(format!("v{FORMAT_VERSION}"))
    }

    /// Where the entry for `key` compiled for `target` lives.
    pub fn path(&self, target: &str, key: &str) -> PathBuf {
        self.versioned()
            .join(target)
            .join(key.get(..2).unwrap_or(key))
            .join(format!("{key}.bin"))
    }

    /// Reads and verifies the entry of `key`.
    pub fn load(&self, target: &str, key: &str) -> Loaded {
        let path = self.path(target, key);
        let bytes = match read_bounded(&path, self.max_bytes) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Loaded::Missing,
            Err(why) => return Loaded::Corrupt(format!("{}: {why}", path.display())),
        };
        match decode(&bytes) {
            Ok((stored, _)) if stored != key.as_bytes() => Loaded::Corrupt(format!(
                "{}: the entry was written for another key ({})",
                path.display(),
                String::from_utf8_lossy(&stored)
            )),
            Ok((_, e)) => Loaded::Hit(e),
            Err(why) => Loaded::Corrupt(format!("{}: {why}", path.display())),
        }
    }

    /// Writes the entry of `key` atomically, replacing whatever is at its path. The first
    /// write of the process also removes stale temporary files. A failure is returned for the
    /// caller to report; it affects this entry only.
    pub fn store(&self, target: &str, key: &str, entry: &Entry) -> Result<(), String> {
        if !self.swept.swap(true, Ordering::Relaxed) {
            sweep_stale(&self.versioned(), STALE_TMP);
        }
        let path = self.path(target, key);
        let fail = |why: String| {
            format!(
                "cannot write the kernel cache entry {}: {why}",
                path.display()
            )
        };
        let bytes = encode(key, entry);
        if bytes.len() as u64 > self.max_bytes {
            return Err(fail(format!(
                "{} bytes, more than the {} an entry may hold",
                bytes.len(),
                self.max_bytes
            )));
        }
        write_atomically(&self.versioned(), &path, &bytes).map_err(|e| fail(e.to_string()))
    }

    /// Every entry file under the versioned folder, with its size.
    pub fn list(&self) -> std::io::Result<Vec<(PathBuf, u64)>> {
        let mut out = Vec::new();
        let root = self.versioned();
        if !root.exists() {
            return Ok(out);
        }
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir)? {
                let e = e?;
                let ty = e.file_type()?;
                if ty.is_dir() {
                    stack.push(e.path());
                } else if e.path().extension().is_some_and(|x| x == "bin") {
                    out.push((e.path(), e.metadata()?.len()));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Removes temporary files older than `age` under the versioned folder; returns how many.
    #[cfg(test)]
    fn sweep(&self, age: Duration) -> usize {
        sweep_stale(&self.versioned(), age)
    }
}

/// Reads one entry file (for listings), under the same rules as a load.
pub fn read_entry(path: &Path) -> Result<Entry, String> {
    match read_bounded(path, MAX_ENTRY_BYTES)? {
        Some(bytes) => decode(&bytes).map(|(_, e)| e),
        None => Err("no such file".into()),
    }
}

/// The bytes of the regular file at `path`, at most `max` of them; `None` when there is no
/// file. Links, FIFOs, devices, sockets and folders are refused without being opened, the file
/// is opened without following links and without blocking, and it must still be the same
/// regular file once open.
pub(super) fn read_bounded(path: &Path, max: u64) -> Result<Option<Vec<u8>>, String> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let regular = |m: &std::fs::Metadata| -> Result<(), String> {
        let ty = m.file_type();
        if ty.is_file() {
            Ok(())
        } else {
            let what = if ty.is_symlink() {
                "a symbolic link"
            } else if ty.is_dir() {
                "a folder"
            } else {
                "a FIFO, socket or device"
            };
            Err(format!("{what}, not a regular file"))
        }
    };
    let small = |len: u64| -> Result<(), String> {
        if len > max {
            Err(format!(
                "{len} bytes, more than the {max} an entry may hold"
            ))
        } else {
            Ok(())
        }
    };
    regular(&meta)?;
    small(meta.len())?;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let open = file.metadata().map_err(|e| e.to_string())?;
    regular(&open)?;
    small(open.len())?;
    if (open.dev(), open.ino()) != (meta.dev(), meta.ino()) {
        return Err("the file changed while it was opened".into());
    }
    let len = usize::try_from(open.len()).map_err(|_| "too large for this machine")?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(len)
        .map_err(|_| format!("cannot allocate {len} bytes"))?;
    (&mut file)
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    small(bytes.len() as u64)?;
    Ok(Some(bytes))
}

fn encode(key: &str, e: &Entry) -> Vec<u8> {
    let key = key.as_bytes();
    let label = e.label.as_bytes();
    let mut out = Vec::with_capacity(HEADER + key.len() + label.len() + e.payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(e.kind as u32).to_le_bytes());
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(&(label.len() as u32).to_le_bytes());
    out.extend_from_slice(&(e.payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(key, label, &e.payload));
    out.extend_from_slice(key);
    out.extend_from_slice(label);
    out.extend_from_slice(&e.payload);
    out
}

fn checksum(key: &[u8], label: &[u8], payload: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    for part in [key, label, payload] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().into()
}

/// The key an entry was written for, and the entry.
fn decode(bytes: &[u8]) -> Result<(Vec<u8>, Entry), String> {
    if bytes.len() < HEADER {
        return Err(format!("truncated header ({} bytes)", bytes.len()));
    }
    if &bytes[..8] != MAGIC {
        return Err("not a monoscan cache file".into());
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    if u32_at(8) != FORMAT_VERSION {
        return Err(format!("format version {}", u32_at(8)));
    }
    let kind = match u32_at(12) {
        0 => Kind::Cubin,
        1 => Kind::Ptx,
        k => return Err(format!("unknown kind {k}")),
    };
    let key_len = u32_at(16) as usize;
    let label_len = u32_at(20) as usize;
    let payload_len = u64::from_le_bytes(bytes[24..32].try_into().expect("8 bytes"));
    let expected = usize::try_from(payload_len)
        .ok()
        .and_then(|p| {
            HEADER
                .checked_add(key_len)?
                .checked_add(label_len)?
                .checked_add(p)
        })
        .ok_or("absurd lengths")?;
    if bytes.len() != expected {
        return Err(format!("{} bytes, expected {expected}", bytes.len()));
    }
    let key = &bytes[HEADER..HEADER + key_len];
    let label = &bytes[HEADER + key_len..HEADER + key_len + label_len];
    let payload = &bytes[HEADER + key_len + label_len..];
    if checksum(key, label, payload) != bytes[32..64] {
        return Err("checksum mismatch".into());
    }
    Ok((
        key.to_vec(),
        Entry {
            kind,
            label: String::from_utf8_lossy(label).into_owned(),
            payload: payload.to_vec(),
        },
    ))
}

/// Writes `bytes` to `path` (inside `root`) through a temporary file and a rename. A folder
/// at `path` is removed first (a rename cannot replace one); so is a non-folder where the
/// entry's shard folder should be. Links, FIFOs and other files at `path` are replaced by the
/// rename itself, never followed.
pub(super) fn write_atomically(root: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("entry paths have a parent");
    if let Err(e) = std::fs::create_dir_all(dir) {
        let blocked = dir.starts_with(root)
            && std::fs::symlink_metadata(dir).is_ok_and(|m| !m.file_type().is_dir());
        if !blocked {
            return Err(e);
        }
        remove_ignoring_missing(std::fs::remove_file(dir))?;
        std::fs::create_dir_all(dir)?;
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir()) {
        remove_ignoring_missing(std::fs::remove_dir_all(path))?;
    }
    let tmp = dir.join(format!(
        "{TMP_PREFIX}{}-{:?}-{}",
        std::process::id(),
        std::thread::current().id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Another process may have removed the same thing first.
fn remove_ignoring_missing(r: std::io::Result<()>) -> std::io::Result<()> {
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Removes the temporary files under `root` (`<target>/<shard>/.tmp-*`) last modified more
/// than `age` ago; returns how many were removed. Errors only leave files in place.
fn sweep_stale(root: &Path, age: Duration) -> usize {
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    let Ok(targets) = std::fs::read_dir(root) else {
        return 0;
    };
    for target in targets.flatten() {
        let Ok(shards) = std::fs::read_dir(target.path()) else {
            continue;
        };
        for shard in shards.flatten() {
            let Ok(files) = std::fs::read_dir(shard.path()) else {
                continue;
            };
            for f in files.flatten() {
                if !f.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
                    continue;
                }
                let Ok(meta) = f.metadata() else { continue };
                let old = meta
                    .modified()
                    .ok()
                    .and_then(|m| now.duration_since(m).ok())
                    .is_some_and(|d| d > age);
                if old && !meta.is_dir() && std::fs::remove_file(f.path()).is_ok() {
                    removed += 1;
                }
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            kind: Kind::Cubin,
            label: "sum_i32 single-pass".into(),
            payload: (0..=255u8).collect(),
        }
    }

    #[test]
    fn round_trip_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::new(dir.path().to_path_buf());
        let key = "ab".repeat(32);
        assert!(matches!(disk.load("sm_90", &key), Loaded::Missing));
        disk.store("sm_90", &key, &entry()).unwrap();
        match disk.load("sm_90", &key) {
            Loaded::Hit(e) => assert_eq!(e.payload, entry().payload),
            other => panic!("{other:?}"),
        }
        // Flip one payload byte: detected.
        let path = disk.path("sm_90", &key);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(disk.load("sm_90", &key), Loaded::Corrupt(_)));
        // Truncate: detected.
        std::fs::write(&path, &bytes[..HEADER + 3]).unwrap();
        assert!(matches!(disk.load("sm_90", &key), Loaded::Corrupt(_)));
        assert_eq!(disk.list().unwrap().len(), 1);
    }

    fn hex_key(c: char) -> String {
        c.to_string().repeat(64)
    }

    fn corrupt(loaded: Loaded) -> String {
        match loaded {
            Loaded::Corrupt(why) => why,
            other => panic!("expected a corrupt entry, got {other:?}"),
        }
    }

    #[test]
    fn an_entry_copied_to_another_key_is_not_a_hit() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::new(dir.path().to_path_buf());
        let (a, b) = (hex_key('a'), hex_key('b'));
        disk.store("sm_90", &a, &entry()).unwrap();
        std::fs::create_dir_all(disk.path("sm_90", &b).parent().unwrap()).unwrap();
        std::fs::copy(disk.path("sm_90", &a), disk.path("sm_90", &b)).unwrap();
        let why = corrupt(disk.load("sm_90", &b));
        assert!(why.contains("another key"), "{why}");
        assert!(matches!(disk.load("sm_90", &a), Loaded::Hit(_)));
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::with_limit(dir.path().to_path_buf(), 1 << 20);
        let key = hex_key('c');
        let path = disk.path("sm_90", &key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();

        // A FIFO: opening it for reading would block until a writer comes.
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        assert!(corrupt(disk.load("sm_90", &key)).contains("FIFO"));
        std::fs::remove_file(&path).unwrap();

        // A link to an endless device.
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert!(corrupt(disk.load("sm_90", &key)).contains("symbolic link"));
        std::fs::remove_file(&path).unwrap();

        // A (sparse) file far larger than an entry may be.
        let big = std::fs::File::create(&path).unwrap();
        big.set_len(3 << 30).unwrap();
        drop(big);
        assert!(corrupt(disk.load("sm_90", &key)).contains("more than"));
        assert!(read_entry(&path).is_err());

        // Each is replaced by the next write.
        disk.store("sm_90", &key, &entry()).unwrap();
        assert!(matches!(disk.load("sm_90", &key), Loaded::Hit(_)));
    }

    #[test]
    fn a_failed_write_does_not_stop_later_writes() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::with_limit(dir.path().to_path_buf(), 4096);
        let big = Entry {
            payload: vec![7; 8192],
            ..entry()
        };
        let (a, b) = (hex_key('d'), hex_key('e'));
        assert!(disk.store("sm_90", &a, &big).is_err());
        disk.store("sm_90", &b, &entry()).unwrap();
        assert!(matches!(disk.load("sm_90", &b), Loaded::Hit(_)));
    }

    #[test]
    fn folders_in_the_way_of_entries_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::new(dir.path().to_path_buf());
        // A folder (with contents) where an entry belongs.
        let key = hex_key('f');
        let path = disk.path("sm_90", &key);
        std::fs::create_dir_all(path.join("inside")).unwrap();
        assert!(corrupt(disk.load("sm_90", &key)).contains("folder"));
        disk.store("sm_90", &key, &entry()).unwrap();
        assert!(matches!(disk.load("sm_90", &key), Loaded::Hit(_)));
        // A file where a shard folder belongs.
        let key = hex_key('1');
        let shard = disk.path("sm_90", &key).parent().unwrap().to_path_buf();
        std::fs::write(&shard, b"in the way").unwrap();
        disk.store("sm_90", &key, &entry()).unwrap();
        assert!(matches!(disk.load("sm_90", &key), Loaded::Hit(_)));
    }

    #[test]
    fn stale_temporary_files_are_swept_and_fresh_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::new(dir.path().to_path_buf());
        let shard = disk
            .path("sm_90", &hex_key('2'))
            .parent()
            .unwrap()
            .to_path_buf();
        std::fs::create_dir_all(&shard).unwrap();
        let stale = shard.join(".tmp-4000000-ThreadId(1)-1");
        let fresh = shard.join(".tmp-4000001-ThreadId(1)-2");
        let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::create(&stale)
            .unwrap()
            .set_modified(an_hour_ago)
            .unwrap();
        std::fs::write(&fresh, b"being written").unwrap();
        // The first write of a process sweeps, wherever it writes.
        disk.store("sm_80", &hex_key('3'), &entry()).unwrap();
        assert!(!stale.exists());
        assert!(fresh.exists());
        assert_eq!(disk.sweep(Duration::ZERO), 1);
        assert!(!fresh.exists());
    }
}
