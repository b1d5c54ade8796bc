//! Launches of the textbook kernels: the tree reduction, the Kogge-Stone and Brent-Kung block
//! scans, and the hierarchical add-back.

use super::{addr, config, holds, DevSlice};
use crate::codegen::{Entry, KernelSet};
use crate::error::{Error, Result};
use crate::gpu::module::Loaded;
use cudarc::driver::{CudaStream, DeviceRepr, PushKernelArg};

/// `reduce_tree(in, out, n)`: one partial per block of `2 x threads` elements.
///
/// # Safety
/// `k` is a [`KernelSet::TreeReduce`] module rendered for element type `T`.
pub(crate) unsafe fn reduce_tree<T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    inp: DevSlice<T>,
    out: DevSlice<T>,
    n: u64,
) -> Result<()> {
    let f = k.function(Entry::ReduceTree, false)?;
    let threads = k.set().threads();
    let blocks = n.div_ceil(2 * u64::from(threads));
    holds("the input", &inp, n)?;
    holds("the partials", &out, blocks)?;
    let (i, o) = (inp.addr(), out.addr());
    // SAFETY: kernel `(const ms_elem* in, ms_elem* out, ms_u64 n)` with ms_elem = T (the
    // caller's obligation); `in` holds n elements, `out` one per block (both checked above);
    // the grid is exactly that many blocks.
    unsafe {
        s.launch_builder(f)
            .arg(&i)
            .arg(&o)
            .arg(&n)
            .launch(config(blocks, threads, 0))
    }?;
    Ok(())
}

/// Arguments of the textbook block scans (`ks_scan`, `bk_scan`).
pub(crate) struct BlockScan<T> {
    /// Input (n elements).
    pub inp: DevSlice<T>,
    /// Output (n elements; may be the input).
    pub out: DevSlice<T>,
    /// One total per section.
    pub totals: Option<DevSlice<T>>,
    /// Elements.
    pub n: u64,
    /// Exclusive scan (else inclusive).
    pub exclusive: bool,
    /// The seed of block 0 when `has_init`.
    pub init: T,
    /// Whether `init` applies.
    pub has_init: bool,
}

/// Elements per section of a textbook scan module: the Kogge-Stone scan's block, the
/// Brent-Kung scan's twice that.
pub(crate) fn section(set: KernelSet) -> Result<u64> {
    match set {
        KernelSet::KoggeStone { block } => Ok(u64::from(block)),
        KernelSet::BrentKung { block } => Ok(2 * u64::from(block)),
        other => Err(Error::invalid(format!(
            "internal: {} is not a textbook scan",
            other.name()
        ))),
    }
}

/// `ks_scan` or `bk_scan` (as `k` holds), one block per section.
///
/// # Safety
/// `k` is a [`KernelSet::KoggeStone`] or [`KernelSet::BrentKung`] module rendered for element
/// type `T`.
pub(crate) unsafe fn block_scan<T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    a: &BlockScan<T>,
) -> Result<()> {
    let entry = match k.set() {
        KernelSet::KoggeStone { .. } => Entry::KsScan,
        _ => Entry::BkScan,
    };
    let f = k.function(entry, false)?;
    let section = section(k.set())?;
    let sections = a.n.div_ceil(section);
    holds("the input", &a.inp, a.n)?;
    holds("the output", &a.out, a.n)?;
    if let Some(t) = &a.totals {
        holds("the totals", t, sections)?;
    }
    let (i, o, t) = (a.inp.addr(), a.out.addr(), addr(a.totals));
    let (excl, has) = (i32::from(a.exclusive), i32::from(a.has_init));
    // SAFETY: kernel `(const ms_elem* in, ms_elem* out, ms_elem* totals, ms_u64 n, int
    // exclusive, ms_elem init, int has_init)` with ms_elem = T (the caller's obligation); in and
    // out hold n elements, totals (when set) one per section (checked above); the grid covers
    // ceil(n / section) sections.
    unsafe {
        s.launch_builder(f)
            .arg(&i)
            .arg(&o)
            .arg(&t)
            .arg(&a.n)
            .arg(&excl)
            .arg(&a.init)
            .arg(&has)
            .launch(config(sections, k.set().threads(), 0))
    }?;
    Ok(())
}

/// `add_carry(out, carries, n, section, skip_first)`: `out[i] = carries[i / section] ⊕ out[i]`.
///
/// # Safety
/// `k` is a [`KernelSet::KoggeStone`] or [`KernelSet::BrentKung`] module rendered for element
/// type `T`.
pub(crate) unsafe fn add_carry<T: DeviceRepr>(
    s: &CudaStream,
    k: &Loaded,
    out: DevSlice<T>,
    carries: DevSlice<T>,
    n: u64,
    skip_first: bool,
) -> Result<()> {
    let f = k.function(Entry::AddCarry, false)?;
    let section = section(k.set())?;
    let threads = k.set().threads();
    holds("the output", &out, n)?;
    holds("the carries", &carries, n.div_ceil(section))?;
    let (o, c) = (out.addr(), carries.addr());
    let skip = i32::from(skip_first);
    let blocks = n.div_ceil(u64::from(threads)).min(1 << 20);
    // SAFETY: kernel `(ms_elem* out, const ms_elem* carries, ms_u64 n, ms_u64 section, int)`
    // with ms_elem = T (the caller's obligation); out holds n elements and carries one per
    // section (checked above); the kernel strides over n.
    unsafe {
        s.launch_builder(f)
            .arg(&o)
            .arg(&c)
            .arg(&n)
            .arg(&section)
            .arg(&skip)
            .launch(config(blocks, threads, 0))
    }?;
    Ok(())
}
