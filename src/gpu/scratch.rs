//! Scratch memory, reused across calls: a general buffer carved per call, and the single-pass
//! tile states, which persist (zeroed once) so that epoch tags can tell stale entries apart.

use super::device::alloc_error;
use super::launch::{DevSlice, LookbackState, COUNTER_WORDS, DONE_WORD};
use crate::error::{Error, Result};
use crate::tuning::StateLayout;
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

const ALIGN: u64 = 256;

/// Epochs live in 30 bits of a status word; past this, the states are cleared and epochs
/// restart, so an old tag can never be mistaken for a new one.
const EPOCH_LIMIT: u32 = (1 << 30) - 1;

/// The per-[`crate::Gpu`] scratch state. All of it is used from the Gpu's one stream, in order.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    general: Option<CudaSlice<u8>>,
    states: [Option<CudaSlice<u8>>; 4],
    /// The tile counter in the first 32-byte sector, and in the second the launch's clock,
    /// which the TMA kernels' pacing publishes (tagged with the epoch, so it needs no clearing
    /// either). The reductions count their finished blocks in word [`DONE_WORD`] of the
    /// first sector (never in use by two launches at once: the stream runs them in turn).
    counter: Option<CudaSlice<u32>>,
    epoch: u32,
}

/// A bump allocator over the general buffer for one call.
pub(crate) struct Carve<'a> {
    buf: &'a CudaSlice<u8>,
    stream: &'a CudaStream,
    used: u64,
}

impl Carve<'_> {
    /// `count` elements of `T`, starting at a multiple of 256 bytes.
    pub(crate) fn take<T>(&mut self, count: u64) -> Result<DevSlice<T>> {
        let start = self.used.div_ceil(ALIGN) * ALIGN;
        let slice = DevSlice::region(self.buf, self.stream, start, count).ok_or_else(|| {
            Error::invalid(format!(
                "internal: scratch of {} bytes too small for {count} elements at {start}",
                self.buf.len()
            ))
        })?;
        self.used = start + count * std::mem::size_of::<T>() as u64;
        Ok(slice)
    }
}

/// Element counts of the levels of a hierarchy with `section` elements per block:
/// `[ceil(n/s), ceil(n/s^2), ...]` down to one (what a hierarchical pass carves per level).
pub(crate) fn levels(n: u64, section: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut m = n;
    while m > section {
        m = m.div_ceil(section);
        out.push(m);
    }
    out
}

/// Bytes to reserve for `carves` carves of `elems` elements of `size` bytes in total.
pub(crate) fn bytes_for(elems: u64, size: usize, carves: u64) -> u64 {
    elems
        .saturating_mul(size as u64)
        .saturating_add((carves + 1).saturating_mul(ALIGN))
}

impl Scratch {
    /// A carve of at least `bytes` bytes.
    pub(crate) fn carve<'a>(
        &'a mut self,
        stream: &'a Arc<CudaStream>,
        bytes: u64,
    ) -> Result<Carve<'a>> {
        let have = self.general.as_ref().map_or(0, |b| b.len() as u64);
        if have < bytes {
            // Grow geometrically; the old buffer is freed in stream order.
            let want = bytes.max(have * 2).max(1 << 20);
            self.general = Some(alloc_bytes(stream, want)?);
        }
        let buf = self.general.as_ref().expect("allocated above");
        Ok(Carve {
            buf,
            stream,
            used: 0,
        })
    }

    /// The look-back state of `layout` for `tiles` tiles whose values are `T` (each tile's slot
    /// as the kernels address it, [`StateLayout::status_bytes`]; for the separate layout also
    /// the value arrays, carved from the general buffer), the tile counter (zero between
    /// launches: each kernel's last claimant resets it), and a fresh epoch.
    pub(crate) fn lookback<T>(
        &mut self,
        stream: &Arc<CudaStream>,
        layout: StateLayout,
        tiles: u64,
    ) -> Result<LookbackState<T>> {
        let size = std::mem::size_of::<T>();
        let values = if layout == StateLayout::Separate {
            let mut carve = self.carve(stream, bytes_for(2 * tiles, size, 2))?;
            Some((carve.take::<T>(tiles)?, carve.take::<T>(tiles)?))
        } else {
            None
        };
        let state_bytes = tiles.saturating_mul(layout.status_bytes(size));
        let slot = layout as usize;
        let have = self.states[slot].as_ref().map_or(0, |b| b.len() as u64);
        if have < state_bytes {
            let want = state_bytes.max(have * 2).max(1 << 16);
            self.states[slot] = Some(alloc_bytes(stream, want)?);
        }
        self.counter(stream)?;
        self.epoch += 1;
        if self.epoch > EPOCH_LIMIT {
            for s in self.states.iter_mut().flatten() {
                stream.memset_zeros(s)?;
            }
            self.epoch = 1;
        }
        // No memset per call: every kernel that claims tiles hands the counter back at zero
        // (the claimant of the last tile resets it), and it starts zeroed.
        let (counter, _g) = super::launch::input(self.counter.as_ref().expect("allocated"), stream);
        let state = self.states[slot].as_ref().expect("allocated above");
        let state = DevSlice::region(state, stream, 0, state_bytes)
            .ok_or_else(|| Error::invalid("internal: look-back state too small"))?;
        Ok(LookbackState {
            state,
            values,
            counter,
            epoch: self.epoch,
        })
    }
}

impl Scratch {
    /// The counters, allocated zeroed on first use.
    fn counter(&mut self, stream: &Arc<CudaStream>) -> Result<&CudaSlice<u32>> {
        if self.counter.is_none() {
            self.counter = Some(
                stream
                    .alloc_zeros::<u32>(COUNTER_WORDS as usize)
                    .map_err(|e| alloc_error(stream.context(), 4 * COUNTER_WORDS as usize, e))?,
            );
        }
        Ok(self.counter.as_ref().expect("allocated above"))
    }

    /// The count of finished blocks of a one-launch reduction (`ms_fold_last` in
    /// `templates/lib/fold_last.cuh`): one word, zero between launches (the last block of each
    /// launch resets it), zeroed once at allocation.
    pub(crate) fn done(&mut self, stream: &Arc<CudaStream>) -> Result<DevSlice<u32>> {
        let (counter, _g) = super::launch::input(self.counter(stream)?, stream);
        counter
            .suffix(DONE_WORD)
            .and_then(|s| s.prefix(1))
            .ok_or_else(|| Error::invalid("internal: no room for the reduce's count"))
    }
}

fn alloc_bytes(stream: &Arc<CudaStream>, bytes: u64) -> Result<CudaSlice<u8>> {
    stream
        .alloc_zeros::<u8>(bytes as usize)
        .map_err(|e| alloc_error(stream.context(), bytes as usize, e))
}

#[cfg(test)]
mod tests {
    use super::levels;

    #[test]
    fn level_sizes() {
        assert_eq!(levels(1000, 1024), Vec::<u64>::new());
        assert_eq!(levels(1025, 1024), vec![2]);
        assert_eq!(levels(1 << 30, 1024), vec![1 << 20, 1 << 10]);
        assert_eq!(levels((1 << 20) + 1, 1024), vec![1025, 2]);
    }
}
