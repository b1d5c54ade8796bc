//! Compiled-kernel caches: in memory (per process) and on disk (across processes).
//!
//! An operator is interned once per cache ([`KernelCache::intern`]): equal [`CudaOp`]s get the
//! same [`OpKey`], whose identity keys the memory layer. [`KernelCache::fetch`] turns an
//! interned operator and a [`KernelSpec`] into a compiled module: a memory hit looks up a few
//! words; otherwise the source is rendered, its [`key`] derived, and the disk entry loaded and
//! verified (it must have been written for this very key); only when both miss does NVRTC run,
//! and the result is written back. [`KernelCache::fetch_all`] compiles many modules in
//! parallel, and [`KernelCache::warm`] fills the disk layer ahead of time, without a GPU.
//! `docs/cache.md` states what the disk layer guarantees. Loaded driver modules are cached per
//! device by [`crate::Gpu`] on top of this.

mod disk;
mod fetch;
mod intern;
pub mod key;
mod tuned;
mod warm;
mod words;

pub use disk::{read_entry, Entry, Kind, MAX_ENTRY_BYTES, STALE_TMP};
pub use fetch::{Fetched, Origin};
pub use intern::OpKey;
pub use tuned::{device_key, op_digest, TunedStore};
pub use warm::{Warm, WarmReport};

use crate::codegen::{self, KernelSpec, Rendered};
use crate::error::{Error, Result};
use crate::jit::{self, Compiled, Target};
use crate::monoid::CudaOp;
use disk::{Disk, Loaded};
use intern::Interner;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
pub(crate) use words::WordMap;

/// Where compiled kernels are kept on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    dir: Option<PathBuf>,
}

impl CacheConfig {
    /// `$MONOSCAN_CACHE_DIR` if set (`off` or empty: memory only), else the platform cache
    /// folder (`~/.cache/monoscan` on Linux).
    pub fn from_env() -> Self {
        match std::env::var_os("MONOSCAN_CACHE_DIR") {
            Some(v) if v.is_empty() || v == "off" => CacheConfig::memory_only(),
            Some(v) => CacheConfig::dir(PathBuf::from(v)),
            None => CacheConfig {
                dir: dirs::cache_dir().map(|d| d.join("monoscan")),
            },
        }
    }

    /// Kernels on disk under `dir`.
    pub fn dir(dir: impl Into<PathBuf>) -> Self {
        CacheConfig {
            dir: Some(dir.into()),
        }
    }

    /// No disk layer.
    pub fn memory_only() -> Self {
        CacheConfig { dir: None }
    }

    /// The folder, if any.
    pub fn path(&self) -> Option<&Path> {
        self.dir.as_deref()
    }
}

/// Counters of what the cache did, for tests and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Modules found in memory.
    pub memory_hits: u64,
    /// Modules read from disk.
    pub disk_hits: u64,
    /// NVRTC compilations.
    pub compiles: u64,
    /// Disk entries that failed verification: corrupt, written for another key, not a regular
    /// file, too large (each is replaced by the recompiled module).
    pub corrupt: u64,
}

/// A compiled module and what produced it.
#[derive(Debug)]
pub struct Module {
    /// The rendered source and entry-point prefix.
    pub rendered: Rendered,
    /// The image.
    pub compiled: Compiled,
    /// What it is (`sum_i32 single-pass-b256x32x1-packed64`).
    pub label: String,
}

/// The memory layer's key: the operator's identity, the module and the target. A few words,
/// hashed in nanoseconds: a hit renders and hashes nothing of the operator's source.
type MemKey = (u64, KernelSpec, Target);

/// One module of the memory layer: filled once; a thread that finds it empty takes `compiling`
/// and loads or compiles it, while others asking for the same module wait for it instead of
/// compiling it again.
#[derive(Debug, Default)]
struct Slot {
    module: OnceLock<Arc<Module>>,
    compiling: Mutex<()>,
}

/// The two cache layers, and the operators they know.
#[derive(Debug)]
pub struct KernelCache {
    disk: Option<Disk>,
    memory: Mutex<WordMap<MemKey, Arc<Slot>>>,
    ops: Interner,
    memory_hits: AtomicU64,
    disk_hits: AtomicU64,
    compiles: AtomicU64,
    corrupt: AtomicU64,
    write_warned: AtomicBool,
    tuned: TunedStore,
}

impl KernelCache {
    /// A cache with its own memory layer and the given disk layer.
    pub fn new(config: CacheConfig) -> Self {
        KernelCache {
            tuned: TunedStore::new(config.dir.as_deref()),
            disk: config.dir.map(Disk::new),
            memory: Mutex::new(WordMap::default()),
            ops: Interner::default(),
            memory_hits: AtomicU64::new(0),
            disk_hits: AtomicU64::new(0),
            compiles: AtomicU64::new(0),
            corrupt: AtomicU64::new(0),
            write_warned: AtomicBool::new(false),
        }
    }

    /// The process-wide cache, configured by [`CacheConfig::from_env`].
    pub fn global() -> Arc<KernelCache> {
        static GLOBAL: OnceLock<Arc<KernelCache>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Arc::new(KernelCache::new(CacheConfig::from_env())))
            .clone()
    }

    /// The disk folder, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.disk.as_ref().map(|d| d.dir())
    }

    /// The autotuned shapes kept beside the kernels (in memory, and under the disk folder).
    pub fn tuned(&self) -> &TunedStore {
        &self.tuned
    }

    /// What the cache has done so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            memory_hits: self.memory_hits.load(Ordering::Relaxed),
            disk_hits: self.disk_hits.load(Ordering::Relaxed),
            compiles: self.compiles.load(Ordering::Relaxed),
            corrupt: self.corrupt.load(Ordering::Relaxed),
        }
    }

    /// Drops the memory layer (the disk layer stays; interned operators keep their identity).
    pub fn clear_memory(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WordMap<MemKey, Arc<Slot>>> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `op` as this cache knows it: the same [`OpKey`] for every equal operator, so that its
    /// identity keys the memory layer and its combine's cost is estimated once.
    pub fn intern(&self, op: CudaOp) -> Arc<OpKey> {
        self.ops.intern(op)
    }

    /// The module `spec` of `op` compiled for `target`: from memory, from disk, or compiled.
    pub fn get(&self, op: &CudaOp, spec: KernelSpec, target: Target) -> Result<Arc<Module>> {
        let key = match self.ops.find(op) {
            Some(k) => k,
            None => self.intern(op.clone()),
        };
        Ok(self.fetch(&key, spec, target)?.module)
    }

    /// [`KernelCache::get`] for an interned operator, saying where the module came from and
    /// how long that took. A memory hit looks up a few words: nothing is rendered or hashed.
    pub fn fetch(&self, op: &Arc<OpKey>, spec: KernelSpec, target: Target) -> Result<Fetched> {
        let start = Instant::now();
        let key = (op.id(), spec, target);
        let slot = {
            let mut memory = self.lock();
            let slot = memory.entry(key).or_default();
            if let Some(m) = slot.module.get() {
                self.memory_hits.fetch_add(1, Ordering::Relaxed);
                return Ok(Fetched::new(
                    op,
                    spec,
                    target,
                    m.clone(),
                    Origin::Memory,
                    start,
                ));
            }
            slot.clone()
        };
        let _compiling = slot.compiling.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = slot.module.get() {
            // Another thread loaded it while this one waited.
            self.memory_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(Fetched::new(
                op,
                spec,
                target,
                m.clone(),
                Origin::Memory,
                start,
            ));
        }
        let (module, origin) = self.load_or_compile(op.op(), spec, target)?;
        let module = slot.module.get_or_init(|| Arc::new(module)).clone();
        Ok(Fetched::new(op, spec, target, module, origin, start))
    }

    /// Fetches every `(operator, module, target)` of `jobs`, compiling the missing ones in
    /// parallel on the host's cores (one NVRTC program per thread); results in `jobs`' order.
    /// Memory hits are served on the calling thread, without starting any.
    pub fn fetch_all(&self, jobs: &[(Arc<OpKey>, KernelSpec, Target)]) -> Vec<Result<Fetched>> {
        fetch::all(self, jobs)
    }

    /// The module if the memory layer holds it (nothing is loaded or compiled).
    pub(crate) fn memory_hit(
        &self,
        op: &Arc<OpKey>,
        spec: KernelSpec,
        target: Target,
    ) -> Option<Fetched> {
        let start = Instant::now();
        let module = self
            .lock()
            .get(&(op.id(), spec, target))
            .and_then(|s| s.module.get().cloned())?;
        self.memory_hits.fetch_add(1, Ordering::Relaxed);
        Some(Fetched::new(
            op,
            spec,
            target,
            module,
            Origin::Memory,
            start,
        ))
    }

    fn load_or_compile(
        &self,
        op: &CudaOp,
        spec: KernelSpec,
        target: Target,
    ) -> Result<(Module, Origin)> {
        let rendered = codegen::render(op, &spec)?;
        let info = jit::nvrtc()?;
        let arch = target.arch();
        let key = key::derive(&rendered.source, &jit::options(target), info.version, &arch);
        let label = format!("{} {}", op.name, spec.name());
        let kind = match target {
            Target::Cubin(_) => Kind::Cubin,
            Target::Ptx(_) => Kind::Ptx,
        };
        if let Some(disk) = &self.disk {
            match disk.load(&arch, &key) {
                Loaded::Hit(e) if e.kind == kind => {
                    self.disk_hits.fetch_add(1, Ordering::Relaxed);
                    let compiled = Compiled {
                        target,
                        image: e.payload,
                    };
                    let module = Module {
                        rendered,
                        compiled,
                        label,
                    };
                    return Ok((module, Origin::Disk));
                }
                Loaded::Hit(_) | Loaded::Missing => {}
                Loaded::Corrupt(why) => {
                    self.corrupt.fetch_add(1, Ordering::Relaxed);
                    warn(&format!(
                        "discarding a corrupt kernel cache entry ({why}); recompiling"
                    ));
                }
            }
        }
        let compiled = jit::compile(&rendered, &label, target)?;
        self.compiles.fetch_add(1, Ordering::Relaxed);
        if let Some(disk) = &self.disk {
            let entry = Entry {
                kind,
                label: label.clone(),
                payload: compiled.image.clone(),
            };
            if let Err(why) = disk.store(&arch, &key, &entry) {
                if !self.write_warned.swap(true, Ordering::Relaxed) {
                    warn(&format!(
                        "{why}; the module stays cached in memory (later write failures of \
                         this process are not reported)"
                    ));
                }
            }
        }
        let module = Module {
            rendered,
            compiled,
            label,
        };
        Ok((module, Origin::Compiled))
    }

    /// Every entry on disk: path, size in bytes, label (or why it is unreadable).
    pub fn list(&self) -> Result<Vec<(PathBuf, u64, String)>> {
        let Some(disk) = &self.disk else {
            return Ok(Vec::new());
        };
        let files = disk.list().map_err(|e| Error::Io {
            path: disk.versioned(),
            message: e.to_string(),
        })?;
        Ok(files
            .into_iter()
            .map(|(p, size)| {
                let label = read_entry(&p)
                    .map(|e| e.label)
                    .unwrap_or_else(|why| format!("(unreadable: {why})"));
                (p, size, label)
            })
            .collect())
    }

    /// Removes every entry on disk; returns how many files were removed.
    pub fn clear_disk(&self) -> Result<usize> {
        let Some(disk) = &self.disk else { return Ok(0) };
        let n = self.list()?.len();
        let root = disk.versioned();
        if root.exists() {
            std::fs::remove_dir_all(&root).map_err(|e| Error::Io {
                path: root.clone(),
                message: e.to_string(),
            })?;
        }
        Ok(n)
    }
}

fn warn(msg: &str) {
    eprintln!("monoscan: warning: {msg}");
}
