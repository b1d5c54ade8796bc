//! Typed device memory as the launchers take it: [`DevSlice`], `len` elements of `T` at a
//! device address, made only from memory that cudarc or the scratch allocator hands out.

use crate::ops::lanewise::Lanes;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use std::any::TypeId;
use std::marker::PhantomData;

/// `len` elements of `T` in device memory at `addr`.
///
/// A `DevSlice` is made only from a cudarc buffer (whose guard the caller keeps while it queues
/// work on the memory: [`input`], [`output`]) or from a region of a scratch buffer
/// ([`DevSlice::region`]), so its address always holds `len` elements of `T`. Frees are
/// stream-ordered, so the memory outlives every kernel queued on the stream before its buffer
/// is dropped.
pub(crate) struct DevSlice<T> {
    addr: u64,
    len: u64,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for DevSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DevSlice<T> {}

impl<T> std::fmt::Debug for DevSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DevSlice({:#x}, {} x {})",
            self.addr,
            self.len,
            std::any::type_name::<T>()
        )
    }
}

impl<T> DevSlice<T> {
    /// The device address.
    pub(crate) fn addr(&self) -> u64 {
        self.addr
    }

    /// Elements.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The first `n` elements (`None` when there are fewer).
    pub(crate) fn prefix(self, n: u64) -> Option<Self> {
        (n <= self.len).then_some(DevSlice { len: n, ..self })
    }

    /// The elements from `start` on (`None` when there are fewer than `start`).
    pub(crate) fn suffix(self, start: u64) -> Option<Self> {
        (start <= self.len).then(|| DevSlice {
            addr: self.addr + start * std::mem::size_of::<T>() as u64,
            len: self.len - start,
            _t: PhantomData,
        })
    }

    /// The same memory seen as `U`, when `U` is `T` (`None` otherwise): a call generic over
    /// its input type that runs a kernel reading the operator's own elements.
    pub(crate) fn retype<U: 'static>(self) -> Option<DevSlice<U>>
    where
        T: 'static,
    {
        (TypeId::of::<T>() == TypeId::of::<U>()).then_some(DevSlice {
            addr: self.addr,
            len: self.len,
            _t: PhantomData,
        })
    }

    /// The same memory as vectors of `C` elements (`Lanes<T, C>`, `len / C` of them), when
    /// `C` divides the length.
    pub(crate) fn vectors<const C: usize>(self) -> Option<DevSlice<Lanes<T, C>>> {
        (C > 0 && self.len % C as u64 == 0).then_some(DevSlice {
            addr: self.addr,
            len: self.len / C as u64,
            _t: PhantomData,
        })
    }

    /// `count` elements of `T` at `byte_offset` into `buf`, if they fit (`T`'s alignment is
    /// the caller's: scratch regions start at multiples of 256 bytes).
    pub(crate) fn region(
        buf: &CudaSlice<u8>,
        stream: &CudaStream,
        byte_offset: u64,
        count: u64,
    ) -> Option<Self> {
        let bytes = count.checked_mul(std::mem::size_of::<T>() as u64)?;
        let end = byte_offset.checked_add(bytes)?;
        if end > buf.len() as u64 {
            return None;
        }
        // The scratch buffers are the Gpu's own and used only on its stream, in order: no
        // cross-stream synchronisation to keep, so the guard can go at once.
        let (base, _guard) = buf.device_ptr(stream);
        Some(DevSlice {
            addr: base + byte_offset,
            len: count,
            _t: PhantomData,
        })
    }
}

/// `buf` as a [`DevSlice`] for reading on `stream`, and cudarc's guard, which the caller keeps
/// until the work that reads it is queued.
pub(crate) fn input<'a, T, B: DevicePtr<T>>(
    buf: &'a B,
    stream: &'a CudaStream,
) -> (DevSlice<T>, SyncOnDrop<'a>) {
    let len = buf.len() as u64;
    let (addr, guard) = buf.device_ptr(stream);
    (
        DevSlice {
            addr,
            len,
            _t: PhantomData,
        },
        guard,
    )
}

/// `buf` as a [`DevSlice`] for writing on `stream`, and cudarc's guard, which the caller keeps
/// until the work that writes it is queued.
pub(crate) fn output<'a, T, B: DevicePtrMut<T>>(
    buf: &'a mut B,
    stream: &'a CudaStream,
) -> (DevSlice<T>, SyncOnDrop<'a>) {
    let len = buf.len() as u64;
    let (addr, guard) = buf.device_ptr_mut(stream);
    (
        DevSlice {
            addr,
            len,
            _t: PhantomData,
        },
        guard,
    )
}
