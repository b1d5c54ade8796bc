//! The disk layer: `<dir>/v1/<target>/<2 hex>/<key>.bin`.
//!
//! Each file is a header (magic, format version, kind, label and payload lengths, SHA-256 of
//! label and payload) followed by the label (what the module is, for `monoscan cache list`) and
//! the payload (CUBIN or PTX). Writes go to a temporary file in the same folder, then a rename,
//! so a reader never sees a partial file, and two processes writing the same key both succeed.
//! A file that fails any check is a miss, and the recompiled module replaces it. A folder that
//! cannot be written to degrades to reading only, with one warning.

use super::key::FORMAT_VERSION;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

const MAGIC: &[u8; 8] = b"MONOSCAN";
const HEADER: usize = 8 + 4 + 4 + 4 + 8 + 32;

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
    /// A valid entry.
    Hit(Entry),
    /// No file.
    Missing,
    /// A file that failed its checks (truncated, corrupt, foreign).
    Corrupt(String),
}

/// The disk layer.
#[derive(Debug)]
pub struct Disk {
    root: PathBuf,
    writable: AtomicBool,
}

impl Disk {
    /// A disk layer rooted at `dir` (created lazily).
    pub fn new(dir: PathBuf) -> Self {
        Disk {
            root: dir,
            writable: AtomicBool::new(true),
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
            .join(&key[..2.min(key.len())])
            .join(format!("{key}.bin"))
    }

    /// Reads and verifies an entry.
    pub fn load(&self, target: &str, key: &str) -> Loaded {
        let path = self.path(target, key);
        match std::fs::read(&path) {
            Ok(bytes) => match decode(&bytes) {
                Ok(e) => Loaded::Hit(e),
                Err(why) => Loaded::Corrupt(format!("{}: {why}", path.display())),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Loaded::Missing,
            Err(e) => Loaded::Corrupt(format!("{}: {e}", path.display())),
        }
    }

    /// Writes an entry atomically. On failure, stops writing for the rest of the process and
    /// returns the reason once (the caller warns), then `Ok` silently.
    pub fn store(&self, target: &str, key: &str, entry: &Entry) -> Result<(), String> {
        if !self.writable.load(Ordering::Relaxed) {
            return Ok(());
        }
        let path = self.path(target, key);
        match write_atomically(&path, &encode(entry)) {
            Ok(()) => Ok(()),
            Err(e) => {
                if self.writable.swap(false, Ordering::Relaxed) {
                    Err(format!(
                        "cannot write the kernel cache at {} ({e}); compiled kernels are cached in memory only for this process",
                        self.root.display()
                    ))
                } else {
                    Ok(())
                }
            }
        }
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
}

/// Reads one entry file (for listings).
pub fn read_entry(path: &Path) -> Result<Entry, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    decode(&bytes)
}

fn encode(e: &Entry) -> Vec<u8> {
    let label = e.label.as_bytes();
    let mut out = Vec::with_capacity(HEADER + label.len() + e.payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(e.kind as u32).to_le_bytes());
    out.extend_from_slice(&(label.len() as u32).to_le_bytes());
    out.extend_from_slice(&(e.payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(label, &e.payload));
    out.extend_from_slice(label);
    out.extend_from_slice(&e.payload);
    out
}

fn checksum(label: &[u8], payload: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(label);
    h.update(payload);
    h.finalize().into()
}

fn decode(bytes: &[u8]) -> Result<Entry, String> {
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
    let label_len = u32_at(16) as usize;
    let payload_len = u64::from_le_bytes(bytes[20..28].try_into().expect("8 bytes")) as usize;
    let expected = HEADER
        .checked_add(label_len)
        .and_then(|n| n.checked_add(payload_len))
        .ok_or("absurd lengths")?;
    if bytes.len() != expected {
        return Err(format!("{} bytes, expected {expected}", bytes.len()));
    }
    let label = &bytes[HEADER..HEADER + label_len];
    let payload = &bytes[HEADER + label_len..];
    if checksum(label, payload) != bytes[28..60] {
        return Err("checksum mismatch".into());
    }
    Ok(Entry {
        kind,
        label: String::from_utf8_lossy(label).into_owned(),
        payload: payload.to_vec(),
    })
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("entry paths have a parent");
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".tmp-{}-{:?}-{}",
        std::process::id(),
        std::thread::current().id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
}
