//! Scratch memory, reused across calls: a general buffer carved per call, and the single-pass
//! tile states, which persist (zeroed once) so that epoch tags can tell stale entries apart.

use super::device::alloc_error;
use crate::codegen::StateLayout;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use std::sync::Arc;

const ALIGN: u64 = 256;

/// Epochs live in 30 bits of a status word; past this, the states are cleared and epochs
/// restart, so an old tag can never be mistaken for a new one.
const EPOCH_LIMIT: u32 = (1 << 30) - 1;

/// The counter's words: the tile counter in the first 32-byte sector, and in the second the
/// launch's clock, which the TMA kernels' pacing publishes (`ms_pace` in `templates/tiled.cu`;
/// tagged with the epoch, so it needs no clearing either).
const COUNTER_WORDS: usize = 16;

/// The per-[`crate::Gpu`] scratch state. All of it is used from the Gpu's one stream, in order.
#[derive(Debug, Default)]
pub struct Scratch {
    general: Option<CudaSlice<u8>>,
    states: [Option<CudaSlice<u8>>; 4],
    counter: Option<CudaSlice<u32>>,
    epoch: u32,
}

/// A bump allocator over the general buffer for one call.
pub struct Carve {
    base: u64,
    len: u64,
    used: u64,
}

impl Carve {
    /// The address of `count` elements of `size` bytes.
    pub fn take(&mut self, count: u64, size: usize) -> Result<u64> {
        let start = self.used.div_ceil(ALIGN) * ALIGN;
        let bytes = count
            .checked_mul(size as u64)
            .ok_or_else(|| Error::invalid("scratch size overflows"))?;
        let end = start + bytes;
        if end > self.len {
            return Err(Error::invalid(format!(
                "internal: scratch of {} bytes too small for {end}",
                self.len
            )));
        }
        self.used = end;
        Ok(self.base + start)
    }
}

/// Bytes to reserve for `count` carves of `elems` elements of `size` bytes in total.
pub fn bytes_for(elems: u64, size: usize, carves: u64) -> u64 {
    elems * size as u64 + carves * ALIGN + ALIGN
}

impl Scratch {
    /// A carve of at least `bytes` bytes.
    pub fn carve(&mut self, stream: &Arc<CudaStream>, bytes: u64) -> Result<Carve> {
        let have = self.general.as_ref().map_or(0, |b| b.len() as u64);
        if have < bytes {
            // Grow geometrically; the old buffer is freed in stream order.
            let want = bytes.max(have * 2).max(1 << 20);
            self.general = Some(alloc_bytes(stream, want)?);
        }
        let buf = self.general.as_ref().expect("allocated above");
        let (ptr, _sync) = buf.device_ptr(stream);
        Ok(Carve {
            base: ptr,
            len: buf.len() as u64,
            used: 0,
        })
    }

    /// The tile-state array of `layout` for `tiles` tiles whose look-back values are
    /// `elem_size` bytes (each tile's slot as the kernels address it,
    /// [`StateLayout::status_bytes`]), the tile counter (zero between launches: each kernel's
    /// last claimant resets it), and a fresh epoch. Returns `(state, counter, epoch)` addresses.
    pub fn single_pass(
        &mut self,
        stream: &Arc<CudaStream>,
        layout: StateLayout,
        tiles: u64,
        elem_size: usize,
    ) -> Result<(u64, u64, u32)> {
        let state_bytes = tiles * layout.status_bytes(elem_size);
        let slot = layout as usize;
        let have = self.states[slot].as_ref().map_or(0, |b| b.len() as u64);
        if have < state_bytes {
            let want = state_bytes.max(have * 2).max(1 << 16);
            let fresh = stream
                .alloc_zeros::<u8>(want as usize)
                .map_err(|e| alloc_error(stream.context(), want as usize, e))?;
            self.states[slot] = Some(fresh);
        }
        if self.counter.is_none() {
            self.counter = Some(
                stream
                    .alloc_zeros::<u32>(COUNTER_WORDS)
                    .map_err(|e| alloc_error(stream.context(), 4 * COUNTER_WORDS, e))?,
            );
        }
        self.epoch += 1;
        if self.epoch > EPOCH_LIMIT {
            for s in self.states.iter_mut().flatten() {
                stream.memset_zeros(s)?;
            }
            self.epoch = 1;
        }
        // No memset per call: every kernel that claims tiles hands the counter back at zero
        // (the claimant of the last tile resets it), and it starts zeroed.
        let counter = self.counter.as_ref().expect("allocated above");
        let (c, _g) = counter.device_ptr(stream);
        let state = self.states[slot].as_ref().expect("allocated above");
        let (s, _g2) = state.device_ptr(stream);
        Ok((s, c, self.epoch))
    }
}

fn alloc_bytes(stream: &Arc<CudaStream>, bytes: u64) -> Result<CudaSlice<u8>> {
    let ctx: &Arc<CudaContext> = stream.context();
    stream
        .alloc_zeros::<u8>(bytes as usize)
        .map_err(|e| alloc_error(ctx, bytes as usize, e))
}
