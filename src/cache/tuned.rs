//! Autotuned shapes, kept beside the kernel cache: one record per device and operator
//! ([`crate::tuning::autotune::Record`]), one per device, operator, strip width and
//! direction of column scans ([`crate::tuning::autotune::columns::ColumnRecord`]), and one per
//! device and operator of the staged reduce ([`crate::tuning::autotune::reduce::ReduceRecord`]),
//! in memory for the process and on disk under `<cache dir>/tuned-v1/<device>/<operator
//! digest>.txt` (`<column digest>-c<strip>-<forward|reverse>.txt`, `<reduce digest>-reduce.txt`),
//! so that an operator is tuned once per device. `monoscan cache list` shows the records and `monoscan cache clear` removes them with
//! the kernels. Records are read and written as kernel entries are (bounded reads of regular
//! files only, writes through a temporary file and a rename). A record that cannot be read, or
//! names a shape this device cannot run, is ignored (the operator is tuned again); a failed
//! write is a warning, never an error.

use super::disk::{read_bounded, write_atomically};
use crate::monoid::CudaOp;
use crate::tuning::autotune::columns::ColumnRecord;
use crate::tuning::autotune::reduce::ReduceRecord;
use crate::tuning::autotune::Record;
use crate::tuning::cost::CombineCost;
use crate::tuning::DeviceLimits;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The folder of the records under the cache folder.
const FOLDER: &str = "tuned-v1";

/// The largest record read: a shape line and a few timings take a few hundred bytes.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// The records of one cache: in memory, and on disk where the cache has a folder.
#[derive(Debug, Default)]
pub struct TunedStore {
    dir: Option<PathBuf>,
    memory: Mutex<HashMap<(String, String), Record>>,
    columns: Mutex<HashMap<(String, String), ColumnRecord>>,
    reduces: Mutex<HashMap<(String, String), ReduceRecord>>,
}

/// A device as records name it: its name, compute capability and SM count, as a file name
/// (`NVIDIA-H100-80GB-HBM3-sm90-132`).
pub fn device_key(name: &str, cc: u32, sms: u32) -> String {
    let name: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{}-sm{cc}-{sms}", name.trim_matches('-'))
}

/// The generation of the autotuner's candidate shapes, hashed into every record's name: a
/// record chose among one generation's candidates, so a record of another is not read (the
/// operator is tuned again; `monoscan cache clear` removes the old file with the rest). It
/// changes whenever the candidates, or what a stored shape runs, change.
const CANDIDATES: u32 = 7;

/// The generation of the column scan's candidate tiles
/// ([`crate::tuning::autotune::columns::candidates`]), hashed into every column record's name
/// as [`CANDIDATES`] is into the others'.
const COLUMN_CANDIDATES: u32 = 1;

/// The generation of the staged reduce's candidate tiles
/// ([`crate::tuning::autotune::reduce::candidates`]), hashed into every reduce record's name
/// as [`CANDIDATES`] is into the others'.
const REDUCE_CANDIDATES: u32 = 1;

/// An operator as records name it: a SHA-256 of its whole device description (types, code,
/// parameters, input map) and of the candidates' generation, hex.
pub fn op_digest(op: &CudaOp) -> String {
    hex_digest(&format!("candidates {CANDIDATES}: {op:?}"))
}

/// The file name (without `.txt`) of `op`'s column record for strips of `strip` columns,
/// forwards or in `reverse`: a digest as [`op_digest`]'s, of the column candidates' generation.
pub fn column_record_name(op: &CudaOp, strip: u32, reverse: bool) -> String {
    let digest = hex_digest(&format!("column candidates {COLUMN_CANDIDATES}: {op:?}"));
    let direction = if reverse { "reverse" } else { "forward" };
    format!("{digest}-c{strip}-{direction}")
}

/// The file name (without `.txt`) of `op`'s reduce record: a digest as [`op_digest`]'s, of the
/// reduce candidates' generation.
pub fn reduce_record_name(op: &CudaOp) -> String {
    let digest = hex_digest(&format!("reduce candidates {REDUCE_CANDIDATES}: {op:?}"));
    format!("{digest}-reduce")
}

fn hex_digest(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl TunedStore {
    /// The records of a cache whose folder is `cache_dir` (`None`: memory only).
    pub fn new(cache_dir: Option<&Path>) -> Self {
        TunedStore {
            dir: cache_dir.map(|d| d.join(FOLDER)),
            memory: Mutex::new(HashMap::new()),
            columns: Mutex::new(HashMap::new()),
            reduces: Mutex::new(HashMap::new()),
        }
    }

    fn path(&self, device: &str, name: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(device).join(format!("{name}.txt")))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Record>> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_columns(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), ColumnRecord>> {
        self.columns.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_reduces(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), ReduceRecord>> {
        self.reduces.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The text of the record file `name` of `device`, where there is a readable one.
    fn read(&self, device: &str, name: &str) -> Option<String> {
        let bytes = read_bounded(&self.path(device, name)?, MAX_RECORD_BYTES).ok()??;
        String::from_utf8(bytes).ok()
    }

    /// Writes `text` as the record file `name` of `device`, where the store has a folder.
    fn write(&self, device: &str, name: &str, text: &str) -> Result<(), String> {
        let (Some(root), Some(path)) = (&self.dir, self.path(device, name)) else {
            return Ok(());
        };
        write_atomically(root, &path, text.as_bytes())
            .map_err(|e| format!("cannot write the tuning record {}: {e}", path.display()))
    }

    /// The record of `op` on `device` (a [`device_key`]) whose limits are `limits`, from
    /// memory or disk; `None` when there is none that this device can run.
    pub fn get(&self, device: &str, op: &CudaOp, limits: &DeviceLimits) -> Option<Record> {
        let digest = op_digest(op);
        let key = (device.to_string(), digest.clone());
        if let Some(r) = self.lock().get(&key) {
            return Some(r.clone());
        }
        let record = Record::parse(&self.read(device, &digest)?, op.elem_size, limits).ok()?;
        self.lock().insert(key, record.clone());
        Some(record)
    }

    /// Keeps `record` for `op` on `device`, in memory and (written to a temporary file, then
    /// renamed) on disk; `Err` with the reason when the disk write failed.
    pub fn put(&self, device: &str, op: &CudaOp, record: &Record) -> Result<(), String> {
        let digest = op_digest(op);
        self.lock()
            .insert((device.to_string(), digest.clone()), record.clone());
        self.write(device, &digest, &record.to_text())
    }

    /// The column record of `op` on `device` (whose limits are `limits`) for strips of `strip`
    /// columns, forwards or in `reverse`, from memory or disk; `None` when there is none that
    /// this device can run.
    pub fn get_column(
        &self,
        device: &str,
        op: &CudaOp,
        strip: u32,
        reverse: bool,
        limits: &DeviceLimits,
    ) -> Option<ColumnRecord> {
        let name = column_record_name(op, strip, reverse);
        let key = (device.to_string(), name.clone());
        if let Some(r) = self.lock_columns().get(&key) {
            return Some(r.clone());
        }
        let record = ColumnRecord::parse(&self.read(device, &name)?, op.elem_size, limits)
            .ok()
            .filter(|r| r.strip == strip && r.reverse == reverse)?;
        self.lock_columns().insert(key, record.clone());
        Some(record)
    }

    /// Keeps the column record `record` of `op` on `device`, in memory and on disk, as
    /// [`TunedStore::put`] does.
    pub fn put_column(
        &self,
        device: &str,
        op: &CudaOp,
        record: &ColumnRecord,
    ) -> Result<(), String> {
        let name = column_record_name(op, record.strip, record.reverse);
        self.lock_columns()
            .insert((device.to_string(), name.clone()), record.clone());
        self.write(device, &name, &record.to_text())
    }

    /// The reduce record of `op` (whose combine costs `cost`) on `device` (whose limits are
    /// `limits`), from memory or disk; `None` when there is none that this device can run.
    pub fn get_reduce(
        &self,
        device: &str,
        op: &CudaOp,
        cost: &CombineCost,
        limits: &DeviceLimits,
    ) -> Option<ReduceRecord> {
        let name = reduce_record_name(op);
        let key = (device.to_string(), name.clone());
        if let Some(r) = self.lock_reduces().get(&key) {
            return Some(r.clone());
        }
        let record =
            ReduceRecord::parse(&self.read(device, &name)?, op.elem_size, cost, limits).ok()?;
        self.lock_reduces().insert(key, record.clone());
        Some(record)
    }

    /// Keeps the reduce record `record` of `op` on `device`, in memory and on disk, as
    /// [`TunedStore::put`] does.
    pub fn put_reduce(
        &self,
        device: &str,
        op: &CudaOp,
        record: &ReduceRecord,
    ) -> Result<(), String> {
        let name = reduce_record_name(op);
        self.lock_reduces()
            .insert((device.to_string(), name.clone()), record.clone());
        self.write(device, &name, &record.to_text())
    }

    /// Every record on disk: its path and its shape line, after its `columns` line for column
    /// records and `reduce` for reduce records, followed by `; share scan` where the share scan won and `; combine inline`
    /// where the inlined combine did (or why it is unreadable).
    pub fn list(&self) -> std::io::Result<Vec<(PathBuf, String)>> {
        let Some(dir) = &self.dir else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let devices = match std::fs::read_dir(dir) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for device in devices {
            let device = device?.path();
            if !device.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&device)? {
                let path = file?.path();
                if path.extension().is_some_and(|e| e == "txt") {
                    let summary = match read_bounded(&path, MAX_RECORD_BYTES) {
                        Ok(Some(bytes)) => {
                            let text = String::from_utf8_lossy(&bytes);
                            let shape = text
                                .lines()
                                .find(|l| l.starts_with("shape "))
                                .unwrap_or("(no shape)");
                            let kind = text
                                .lines()
                                .find(|l| l.starts_with("columns ") || *l == "reduce");
                            let mut summary = match kind {
                                Some(kind) => format!("{kind}; {shape}"),
                                None => shape.to_string(),
                            };
                            if text.lines().any(|l| l == "shares 1") {
                                summary.push_str("; share scan");
                            }
                            if text.lines().any(|l| l == "combine inline") {
                                summary.push_str("; combine inline");
                            }
                            summary
                        }
                        Ok(None) => continue,
                        Err(e) => format!("(unreadable: {e})"),
                    };
                    out.push((path, summary));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Removes every record, in memory and on disk; returns how many files were removed.
    pub fn clear(&self) -> std::io::Result<usize> {
        self.lock().clear();
        self.lock_columns().clear();
        self.lock_reduces().clear();
        let n = self.list()?.len();
        if let Some(dir) = &self.dir {
            match std::fs::remove_dir_all(dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monoid::Monoid;
    use crate::ops::{Affine, Sum};
    use crate::tuning::Tuning;

    #[test]
    fn records_persist_per_device_and_operator() {
        let dir = std::env::temp_dir().join(format!("monoscan-tuned-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let h100 = DeviceLimits::for_arch(90);
        let op = Affine::<f64>::new().cuda();
        let other = Sum::<i32>::new().cuda();
        let shape16 = crate::tuning::policy::tile_shape(
            16,
            &h100,
            &Tuning::default(),
            crate::tuning::Purpose::Staged,
        )
        .unwrap();
        let record = Record {
            shape: shape16,
            timings: vec![("x".into(), 1.0)],
            n: 1 << 26,
            shares: true,
            combine: Some(crate::tuning::CombineForm::Outlined),
        };
        let device = device_key("NVIDIA H100 80GB HBM3", 90, 132);
        assert_eq!(device, "NVIDIA-H100-80GB-HBM3-sm90-132");
        let store = TunedStore::new(Some(&dir));
        assert!(store.get(&device, &op, &h100).is_none());
        store.put(&device, &op, &record).unwrap();
        assert_eq!(store.get(&device, &op, &h100), Some(record.clone()));
        assert!(store.get(&device, &other, &h100).is_none());
        assert!(store.get("another-device", &op, &h100).is_none());
        // A later process (a new store on the same folder) reads it from disk.
        let later = TunedStore::new(Some(&dir));
        assert_eq!(later.get(&device, &op, &h100), Some(record));
        let listed = later.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].1.starts_with("shape "), "{listed:?}");
        assert!(listed[0].1.ends_with("; share scan"), "{listed:?}");
        // A damaged file is ignored.
        std::fs::write(&listed[0].0, "garbage").unwrap();
        assert!(TunedStore::new(Some(&dir))
            .get(&device, &op, &h100)
            .is_none());
        assert_eq!(later.clear().unwrap(), 1);
        assert!(later.list().unwrap().is_empty());
        assert!(later.get(&device, &op, &h100).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn column_records_persist_per_strip_and_direction() {
        let dir = std::env::temp_dir().join(format!("monoscan-tuned-c-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let h100 = DeviceLimits::for_arch(90);
        let op = Sum::<f32>::new().cuda();
        let record = ColumnRecord {
            strip: 32,
            reverse: true,
            choice: crate::tuning::ShapeChoice::new(256, 64),
            timings: vec![("c32-b256x8x64".into(), 0.05)],
            n: 1 << 24,
        };
        let store = TunedStore::new(Some(&dir));
        assert!(store.get_column("d", &op, 32, true, &h100).is_none());
        store.put_column("d", &op, &record).unwrap();
        let later = TunedStore::new(Some(&dir));
        assert_eq!(later.get_column("d", &op, 32, true, &h100), Some(record));
        assert!(later.get_column("d", &op, 32, false, &h100).is_none());
        assert!(later.get_column("d", &op, 8, true, &h100).is_none());
        assert!(later
            .get_column("d", &Sum::<i32>::new().cuda(), 32, true, &h100)
            .is_none());
        // Neither kind of record is read as the other.
        assert!(later.get("d", &op, &h100).is_none());
        let listed = later.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(
            listed[0].1, "columns 32 reverse; shape 256 64",
            "{listed:?}"
        );
        assert_eq!(later.clear().unwrap(), 1);
        assert!(later.get_column("d", &op, 32, true, &h100).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn reduce_records_persist_per_operator() {
        let dir = std::env::temp_dir().join(format!("monoscan-tuned-r-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let h100 = DeviceLimits::for_arch(90);
        let op = Sum::<u64>::new().cuda();
        let cost = CombineCost::of(&op);
        let record = ReduceRecord {
            choice: crate::tuning::ShapeChoice::new(512, 15),
            timings: vec![("tma-linear-staged-b512x15x1-packed64".into(), 0.5)],
            n: 1 << 27,
        };
        let store = TunedStore::new(Some(&dir));
        assert!(store.get_reduce("d", &op, &cost, &h100).is_none());
        store.put_reduce("d", &op, &record).unwrap();
        let later = TunedStore::new(Some(&dir));
        assert_eq!(later.get_reduce("d", &op, &cost, &h100), Some(record));
        let other = Sum::<i64>::new().cuda();
        assert!(later.get_reduce("d", &other, &cost, &h100).is_none());
        // Neither a scan record nor a column record is read as a reduce record.
        assert!(later.get("d", &op, &h100).is_none());
        assert!(later.get_column("d", &op, 32, false, &h100).is_none());
        let listed = later.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].1, "reduce; shape 512 15", "{listed:?}");
        assert_eq!(later.clear().unwrap(), 1);
        assert!(later.get_reduce("d", &op, &cost, &h100).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn memory_only_stores_keep_records_for_the_process() {
        let h100 = DeviceLimits::for_arch(90);
        let op = Affine::<f64>::new().cuda();
        let store = TunedStore::new(None);
        let record = Record {
            shape: crate::tuning::policy::tile_shape(
                16,
                &h100,
                &Tuning::default(),
                crate::tuning::Purpose::Staged,
            )
            .unwrap(),
            timings: vec![],
            n: 1,
            shares: false,
            combine: None,
        };
        store.put("d", &op, &record).unwrap();
        assert_eq!(store.get("d", &op, &h100), Some(record));
        assert!(store.list().unwrap().is_empty());
    }
}
