//! Scans and reductions over several GPUs of one host, through NCCL.
//!
//! The input is split in order across G devices; each device reduces its part; the G partial
//! totals are exchanged with an NCCL all-gather; each device then combines the totals of the
//! devices before it, in device order, on the device (an exclusive scan of the gathered
//! totals: commutativity is never assumed), and scans its part from that carry. G = 1 works.
//!
//! Host inputs larger than a GPU's memory are streamed in chunks: every device uploads its next
//! chunk on a copy stream while its compute stream works on the current one.
//!
//! NVLink multicast (NVLS) stays off: `NCCL_NVLS_ENABLE=0` is set before NCCL starts.

use crate::dylib::Probe;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::monoid::Monoid;
use cudarc::driver::{CudaSlice, CudaStream};
use cudarc::nccl::safe::{group_end, group_start, Comm};
use std::ops::Range;
use std::sync::Arc;

mod host;

/// The NCCL functions monoscan reaches through cudarc: a communicator per device, the grouped
/// all-gather, and the teardown.
const NCCL_FUNCTIONS: &[&str] = &[
    "ncclCommInitAll",
    "ncclCommAbort",
    "ncclGroupStart",
    "ncclGroupEnd",
    "ncclAllGather",
];

/// Several GPUs and an NCCL communicator over them.
pub struct MultiGpu {
    gpus: Vec<Gpu>,
    comms: Vec<Comm>,
}

impl std::fmt::Debug for MultiGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiGpu")
            .field("gpus", &self.gpus)
            .finish()
    }
}

fn nccl_err(e: impl std::fmt::Debug) -> Error {
    Error::Nccl(format!("{e:?}"))
}

/// Even split of `n` into `g` contiguous ranges, in order (`g = 0` counts as 1). The ranges
/// cover `0..n` exactly, whatever `n`.
///
/// ```
/// use monoscan::multi::split;
/// assert_eq!(split(10, 3), [0..3, 3..6, 6..10]);
/// assert_eq!(split(usize::MAX, 2).last().unwrap().end, usize::MAX);
/// ```
pub fn split(n: usize, g: usize) -> Vec<Range<usize>> {
    let g = g.max(1);
    // `n * k` overflows usize for large `n`; in u128 it cannot, and each bound is at most `n`.
    let bound = |k: usize| (n as u128 * k as u128 / g as u128) as usize;
    (0..g).map(|k| bound(k)..bound(k + 1)).collect()
}

impl MultiGpu {
    /// Opens the devices `ordinals` (every visible device when empty) and an NCCL
    /// communicator over them.
    pub fn new(ordinals: &[usize]) -> Result<MultiGpu> {
        let ordinals: Vec<usize> = if ordinals.is_empty() {
            (0..crate::gpu::device_count()?).collect()
        } else {
            ordinals.to_vec()
        };
        if ordinals.is_empty() {
            return Err(Error::NoDevice {
                requested: 0,
                available: 0,
                detail: None,
            });
        }
        match crate::dylib::probe("nccl", NCCL_FUNCTIONS) {
            Probe::Usable { .. } => {}
            Probe::Absent => return Err(Error::Nccl(
                "libnccl.so not found on the loader path: install NCCL (pip's nvidia-nccl-cu13 \
                     ships libnccl.so.2: link libnccl.so to it in a folder on LD_LIBRARY_PATH)"
                    .into(),
            )),
            Probe::Broken(why) => {
                return Err(Error::Nccl(format!("libnccl cannot be used: {why}")))
            }
        }
        // NVLink multicast can take a shared host's GPUs out of service; keep it off.
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        let gpus = ordinals
            .iter()
            .map(|&o| Gpu::new(o))
            .collect::<Result<Vec<_>>>()?;
        let streams: Vec<Arc<CudaStream>> = gpus.iter().map(|g| g.stream().clone()).collect();
        let comms = Comm::from_devices(streams).map_err(nccl_err)?;
        Ok(MultiGpu { gpus, comms })
    }

    /// The devices, in rank order.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// How many devices.
    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    /// Always false (a `MultiGpu` has at least one device).
    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// Carries: device g gets `init ⊕ t_0 ⊕ ... ⊕ t_(g-1)`, computed on device g by an exclusive
    /// scan of the all-gathered totals (in device order); also `init ⊕ t_0 ⊕ ... ⊕ t_(G-1)`.
    fn carries<M: Monoid>(
        &self,
        m: &M,
        totals: &[CudaSlice<M::Elem>],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let size = std::mem::size_of::<M::Elem>();
        let g = self.len();
        let mut gathered = Vec::with_capacity(g);
        for gpu in &self.gpus {
            gathered.push(gpu.stream().alloc_zeros::<u8>(g * size)?);
        }
        group_start().map_err(nccl_err)?;
        let mut sent = Ok(());
        for ((comm, t), recv) in self.comms.iter().zip(totals).zip(gathered.iter_mut()) {
            if let Err(e) = comm.all_gather(&as_bytes(t), recv) {
                sent = Err(nccl_err(e));
            }
        }
        group_end().map_err(nccl_err)?;
        sent?;
        let mut carries = Vec::with_capacity(g);
        let mut grand = init;
        for (k, (gpu, bytes)) in self.gpus.iter().zip(&gathered).enumerate() {
            let mut scanned = gpu.stream().clone_dtod(bytes)?;
            let mut total = gpu.stream().clone_htod(&[init])?;
            {
                // SAFETY: the gathered buffers hold exactly `g` elements of `M::Elem` (NCCL moved
                // `size` bytes from each device's total), plain data valid for any bits.
                let all = unsafe { bytes.transmute::<M::Elem>(g) }.expect("g elements fit");
                // SAFETY: as above, for the output buffer of the same size.
                let mut out =
                    unsafe { scanned.transmute_mut::<M::Elem>(g) }.expect("g elements fit");
                gpu.scanner(m)
                    .exclusive_with_total(&all, &mut out, init, &mut total)?;
            }
            carries.push(read_elem::<M::Elem>(&gpu.stream().clone_dtoh(&scanned)?, k));
            if k + 1 == g {
                grand = gpu.stream().clone_dtoh(&total)?[0];
            }
        }
        Ok((carries, grand))
    }

    /// Inclusive scan of device-resident parts (part g on device g, in order) into `outputs`.
    pub fn inclusive_scan<M: Monoid>(
        &self,
        m: &M,
        parts: &[CudaSlice<M::Elem>],
        outputs: &mut [CudaSlice<M::Elem>],
    ) -> Result<()> {
        self.scan_parts(m, parts, outputs, None).map(|_| ())
    }

    /// Exclusive scan from `init` of device-resident parts into `outputs`; returns the total.
    pub fn exclusive_scan<M: Monoid>(
        &self,
        m: &M,
        parts: &[CudaSlice<M::Elem>],
        outputs: &mut [CudaSlice<M::Elem>],
        init: M::Elem,
    ) -> Result<M::Elem> {
        self.scan_parts(m, parts, outputs, Some(init))
    }

    /// The fold of device-resident parts, in order.
    pub fn reduce<M: Monoid>(&self, m: &M, parts: &[CudaSlice<M::Elem>]) -> Result<M::Elem> {
        self.check_parts(parts.len(), parts.len())?;
        let totals = self.part_totals(m, parts)?;
        Ok(self.carries(m, &totals, m.identity())?.1)
    }

    fn check_parts(&self, parts: usize, outputs: usize) -> Result<()> {
        if parts != self.len() || outputs != self.len() {
            return Err(Error::invalid(format!(
                "{} devices need {} parts and outputs, got {parts} and {outputs}",
                self.len(),
                self.len()
            )));
        }
        Ok(())
    }

    fn part_totals<M: Monoid>(
        &self,
        m: &M,
        parts: &[CudaSlice<M::Elem>],
    ) -> Result<Vec<CudaSlice<M::Elem>>> {
        self.gpus
            .iter()
            .zip(parts)
            .map(|(gpu, part)| {
                let mut t = gpu.stream().clone_htod(&[m.identity()])?;
                gpu.scanner(m).reduce(part, &mut t)?;
                Ok(t)
            })
            .collect()
    }

    fn scan_parts<M: Monoid>(
        &self,
        m: &M,
        parts: &[CudaSlice<M::Elem>],
        outputs: &mut [CudaSlice<M::Elem>],
        exclusive_init: Option<M::Elem>,
    ) -> Result<M::Elem> {
        self.check_parts(parts.len(), outputs.len())?;
        let totals = self.part_totals(m, parts)?;
        let init = exclusive_init.unwrap_or_else(|| m.identity());
        let (carries, grand) = self.carries(m, &totals, init)?;
        for (g, ((gpu, part), out)) in self
            .gpus
            .iter()
            .zip(parts)
            .zip(outputs.iter_mut())
            .enumerate()
        {
            let scanner = gpu.scanner(m);
            let mut t = gpu.stream().clone_htod(&[init])?;
            match exclusive_init {
                Some(_) => scanner.exclusive_with_total(part, out, carries[g], &mut t)?,
                None if g == 0 => scanner.inclusive(part, out)?,
                None => scanner.inclusive_from(part, out, carries[g], &mut t)?,
            }
        }
        for gpu in &self.gpus {
            gpu.synchronize()?;
        }
        Ok(grand)
    }
}

/// A byte view of a device buffer (NCCL moves bytes).
fn as_bytes<T>(t: &CudaSlice<T>) -> cudarc::driver::CudaView<'_, u8> {
    let bytes = std::mem::size_of::<T>() * t.len();
    // SAFETY: element types are plain `#[repr(C)]` data; a byte view of exactly the buffer's
    // size reads nothing outside it.
    unsafe { t.transmute::<u8>(bytes) }.expect("a byte view of a buffer fits the buffer")
}

/// Element `k` of a host copy of a device byte buffer.
fn read_elem<T: crate::element::Element>(bytes: &[u8], k: usize) -> T {
    let size = std::mem::size_of::<T>();
    let chunk = &bytes[k * size..(k + 1) * size];
    // SAFETY: the chunk holds the bytes of one `T` written by the device (plain data, valid for
    // any bit pattern); read_unaligned copes with the Vec<u8>'s alignment.
    unsafe { std::ptr::read_unaligned(chunk.as_ptr() as *const T) }
}
