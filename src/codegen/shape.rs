//! Tile shapes for the tiled kernels, per element size and architecture.

use crate::error::{Error, Result};

/// Static shared memory a block may use without opting in to more.
pub const SMEM_LIMIT: usize = 48 * 1024;

/// Dynamic shared memory (one tile) a block of the staged single-pass scan may use (sm_80 and
/// newer allow at least 163 KiB per block).
pub const STAGED_SMEM_LIMIT: usize = 160 * 1024;

/// Bytes of an L2 sector: each tile's single-pass state fills whole sectors of its own. Tiles
/// publish while their successors poll them, and packed side by side (16 to a 128-byte line)
/// those writes and polls contended for the same lines: on the H200, Sum i32 went from 0.853
/// to 0.894-0.899 of copy in the lab (session 7) with one tile per sector.
pub const STATE_SECTOR: u64 = 32;

/// How the single-pass scan stores each tile's status and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateLayout {
    /// Status and value in one 64-bit word (elements of 1 to 4 bytes).
    Packed64,
    /// Status and value in one 128-bit word (elements of 5 to 8 bytes).
    Packed128,
    /// Elements of 9 to 32 bytes: each 8-byte piece of the value in a 128-bit word beside a
    /// copy of the status, so that a reader needs one round of independent loads.
    Paired,
    /// A status array plus value arrays, ordered by release/acquire (larger elements).
    Separate,
}

impl StateLayout {
    /// The layout for elements of `size` bytes.
    pub fn for_size(size: usize) -> Self {
        match size {
            0..=4 => StateLayout::Packed64,
            5..=8 => StateLayout::Packed128,
            9..=32 => StateLayout::Paired,
            _ => StateLayout::Separate,
        }
    }

    /// The name used in templates and module names.
    pub fn name(&self) -> &'static str {
        match self {
            StateLayout::Packed64 => "packed64",
            StateLayout::Packed128 => "packed128",
            StateLayout::Paired => "paired",
            StateLayout::Separate => "separate",
        }
    }

    /// Bytes of the persistent state per tile for elements of `size` bytes: the tile's words
    /// (for the separate layout only the status; the values live in per-call scratch, two
    /// elements per tile), padded to whole [`STATE_SECTOR`]s so that no two tiles share one.
    pub fn status_bytes(&self, size: usize) -> u64 {
        let words = match self {
            StateLayout::Packed64 => 8,
            StateLayout::Packed128 => 16,
            StateLayout::Paired => 16 * size.div_ceil(8) as u64,
            StateLayout::Separate => 4,
        };
        words.next_multiple_of(STATE_SECTOR)
    }
}

/// What a tile shape is for: the single-pass scan prefers larger tiles (fewer look-back
/// steps), the reduce and the reduce-then-scan smaller ones (more blocks in flight).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// The single-pass scan.
    SinglePass,
    /// The tiled reduce and the reduce-then-scan.
    Tiles,
    /// The staged single-pass scan (tiles copied into shared memory with `cp.async`).
    Staged,
    /// Inputs that fit one small tile (about 4 KiB): one launch of one block.
    OneTile,
}

/// Threads and items per thread of a tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TileShape {
    /// Threads per block (a multiple of 32, at most 1024).
    pub block: u32,
    /// Consecutive elements per thread.
    pub items: u32,
    /// The single-pass state layout.
    pub layout: StateLayout,
    /// Predecessors each lane of the look-back warp inspects per step.
    pub lookback: u32,
    /// Whether this is the staged single-pass scan (`scan_staged`), which copies its tile into
    /// shared memory with `cp.async` instead of holding it in registers.
    pub staged: bool,
    /// Whether the staged scan loads whole tiles with one tensor copy (the TMA, sm_90 and
    /// newer) instead of `cp.async`: each thread's run is one 128-byte row of a 2D tensor map,
    /// so the TMA's 128-byte swizzle is the staged buffer's layout. Its launch takes the
    /// tensor map of the input as a last argument.
    pub tma: bool,
}

impl TileShape {
    /// A register-tile shape (not staged).
    pub fn new(block: u32, items: u32, layout: StateLayout, lookback: u32) -> Self {
        TileShape {
            block,
            items,
            layout,
            lookback,
            staged: false,
            tma: false,
        }
    }

    /// Elements per tile.
    pub fn tile(&self) -> u64 {
        u64::from(self.block) * u64::from(self.items)
    }

    /// `b256x32x1-packed64`, `staged-b256x32x1-packed64`, `tma-staged-b128x32x1-packed64`.
    pub fn name(&self) -> String {
        format!(
            "{}{}b{}x{}x{}-{}",
            if self.tma { "tma-" } else { "" },
            if self.staged { "staged-" } else { "" },
            self.block,
            self.items,
            self.lookback,
            self.layout.name()
        )
    }

    /// Tensor copies per tile in the TMA form: a box of the tensor map holds at most 256 rows
    /// (one per thread), so tiles of more threads arrive as several boxes.
    pub fn tma_boxes(&self) -> u32 {
        tma_boxes(self.block)
    }

    /// Rows (threads) per tensor copy in the TMA form: the tile's rows split evenly over
    /// [`Self::tma_boxes`] boxes.
    pub fn tma_rows(&self) -> u32 {
        self.block / self.tma_boxes()
    }

    /// Bytes of one tile of elements of `size` bytes (the staged select kernel's dynamic
    /// shared memory, in either form; the unit of the L2 prefetch distance).
    pub fn tile_bytes(&self, size: usize) -> usize {
        self.tile() as usize * size
    }

    /// Dynamic shared memory of the staged scan for elements of `size` bytes: the tile, and
    /// for the TMA form also the block's state and its mbarrier ([`Self::tma_state_bytes`]).
    pub fn staged_smem_bytes(&self, size: usize) -> usize {
        match (self.staged, self.tma) {
            (false, _) => 0,
            (true, false) => self.tile_bytes(size),
            (true, true) => self.tile_bytes(size) + self.tma_state_bytes(size),
        }
    }

    /// Bytes after the tile in the TMA form's dynamic shared memory: the block's state (a sum
    /// per warp, the prefix, the tile number; rounded up to 16 bytes) and a 16-byte slot for
    /// its mbarrier. The TMA kernel declares no static shared memory, whose alignment padding
    /// would cost a resident block per SM (measured in docs/performance.md); the template
    /// checks that its state fits.
    pub fn tma_state_bytes(&self, size: usize) -> usize {
        let state = (self.block as usize / 32 + 1) * size.max(1) + 4;
        state.div_ceil(16) * 16 + 16
    }

    /// Blocks of the staged scan that fit one SM of sm_90 or newer (228 KiB of shared memory,
    /// 1 KiB of it reserved per block, 2048 threads) with elements of `size` bytes. The TMA
    /// form asks the compiler for this residency (`__launch_bounds__`), so that registers do
    /// not lower it below what shared memory allows.
    pub fn staged_blocks_per_sm(&self, size: usize) -> u32 {
        let per_block = self.staged_smem_bytes(size) + 1024;
        ((228 * 1024 / per_block) as u32)
            .min(2048 / self.block.max(1))
            .max(1)
    }

    /// The swizzle shift of the staged scan's buffers: `max(3, log2(16-byte chunks per
    /// thread))`, so that the eight lanes of a phase read distinct bank groups.
    pub fn swizzle(&self, size: usize) -> u32 {
        let chunks = (self.items as usize * size / 16).max(1);
        chunks.trailing_zeros().max(3)
    }

    /// Static shared memory of the tiled kernels for elements of `size` bytes.
    pub fn smem_bytes(&self, size: usize) -> usize {
        let (b, i) = (self.block as usize, self.items as usize);
        let warps = b / 32;
        warps * (32 * i + i) * size + warps * size + size + 16
    }
}

/// The shape `<threads>x<items>[x<lookback>]` that the environment variable `var` sets, if
/// any; `lookback` false refuses the look-back part.
fn env_shape(var: &str, lookback: bool) -> Result<Option<(u32, u32, Option<u32>)>> {
    let Ok(v) = std::env::var(var) else {
        return Ok(None);
    };
    let parts: Vec<Option<u32>> = v.split('x').map(|p| p.trim().parse().ok()).collect();
    match parts.as_slice() {
        [Some(b), Some(i)] => Ok(Some((*b, *i, None))),
        [Some(b), Some(i), Some(lb)] if lookback => Ok(Some((*b, *i, Some(*lb)))),
        _ => Err(Error::invalid(format!(
            "{var}={v}: expected <threads>x<items>{}",
            if lookback { "[x<lookback>]" } else { "" }
        ))),
    }
}

/// Whether elements of `size` bytes in tiles of `items` per thread can be staged: the size
/// divides 16 and each thread's run is a power-of-two number of 16-byte chunks.
fn stageable(size: usize, items: u32, cc: u32) -> bool {
    cc >= 80
        && size > 0
        && 16 % size == 0
        && (items as usize * size) % 16 == 0
        && (items as usize * size / 16).is_power_of_two()
}

/// Whether a staged tile of `block` threads x `items` elements of `size` bytes can arrive by
/// tensor copies: one 128-byte row per thread's run (the span of the 128-byte swizzle), and the
/// tile's rows split evenly into boxes of at most 256 rows that each start a 1 KiB swizzle
/// period (a whole number of 8-row groups).
fn tma_fits(block: u32, items: u32, size: usize) -> bool {
    items as usize * size == 128 && block % (8 * tma_boxes(block)) == 0
}

/// Tensor copies per tile of `block` threads (one 128-byte row each): a box holds at most 256
/// rows.
fn tma_boxes(block: u32) -> u32 {
    block.div_ceil(256).max(1)
}

/// Whether the staged scan may load whole tiles by tensor copies (the TMA, sm_90 and newer)
/// where its shape allows: `MONOSCAN_TMA=0` turns it off (for comparison), `1` (the default)
/// leaves it on.
fn tma_enabled() -> Result<bool> {
    match std::env::var("MONOSCAN_TMA").as_deref() {
        Err(_) | Ok("1") => Ok(true),
        Ok("0") => Ok(false),
        Ok(v) => Err(Error::invalid(format!(
            "MONOSCAN_TMA={v}: expected 0 (cp.async copies) or 1 (tensor copies where they apply)"
        ))),
    }
}

/// The tile shape for elements of `size` bytes on compute capability `cc`, for `purpose`.
/// `MONOSCAN_TILE=<threads>x<items>[x<lookback>]` overrides it (for tuning), except for the
/// staged scan ([`Purpose::Staged`], `MONOSCAN_STAGED=<threads>x<items>`) and the small
/// one-tile kernel ([`Purpose::OneTile`], `MONOSCAN_ONE_TILE=<threads>x<items>`).
pub fn tile_shape(size: usize, cc: u32, purpose: Purpose) -> Result<TileShape> {
    let layout = StateLayout::for_size(size);
    // One predecessor per lane: wider windows (2 to 8 per lane) were measured slower, their
    // registers costing a resident block per SM (docs/performance.md).
    let lookback = 1;
    if purpose == Purpose::Staged {
        return staged_shape(size, cc, layout, lookback);
    }
    if purpose == Purpose::OneTile {
        // Up to 256 threads and 4 KiB (1,024 i32, 16 bytes per thread): a one-tile scan's
        // time is launch and memory latency, and fewer padding items shorten its fold and scan
        // (measured in docs/performance.md). MONOSCAN_ONE_TILE, not MONOSCAN_TILE (which tunes
        // large inputs), overrides it.
        if let Some((block, items, _)) = env_shape("MONOSCAN_ONE_TILE", false)? {
            return check(TileShape::new(block, items, layout, lookback), size);
        }
        let mut shape = TileShape::new(256, (16 / size.max(1)).max(1) as u32, layout, lookback);
        while (shape.tile_bytes(size) > 4096 || shape.smem_bytes(size) > SMEM_LIMIT)
            && shape.block > 32
        {
            shape.block /= 2;
        }
        return check(shape, size);
    }
    if let Some((block, items, lb)) = env_shape("MONOSCAN_TILE", true)? {
        return check(
            TileShape::new(block, items, layout, lb.unwrap_or(lookback)),
            size,
        );
    }
    // Measured on an H100 (docs/performance.md): the single-pass scan wants large tiles, since
    // its look-back chain, not bandwidth, limits it; the reduce and reduce-then-scan reach
    // bandwidth with about 16 KiB per tile and more blocks in flight.
    let _ = cc;
    let (block, items) = match (purpose, size) {
        (Purpose::SinglePass, 0..=4) => (256, 32),
        (Purpose::SinglePass, 5..=16) => (128, 16),
        (Purpose::SinglePass, 17..=32) => (128, 8),
        (Purpose::Tiles, 0..=1) => (256, 32),
        (Purpose::Tiles, 2) => (256, 24),
        (Purpose::Tiles, 3..=4) => (256, 16),
        (_, 5..=8) => (256, 8),
        // 32 KiB tiles: the deterministic (reduce-then-scan) Affine f64 2^26 on an H200 at
        // 0.626 of copy against 0.570 for 128x8 (session 6, docs/performance.md).
        (Purpose::Tiles, 9..=16) => (128, 16),
        (_, 9..=16) => (128, 8),
        (_, 17..=32) => (128, 4),
        (_, 33..=64) => (128, 2),
        _ => (64, 1),
    };
    let mut shape = TileShape::new(block, items, layout, lookback);
    while shape.smem_bytes(size) > SMEM_LIMIT && shape.items > 1 {
        shape.items /= 2;
    }
    while shape.smem_bytes(size) > SMEM_LIMIT && shape.block > 32 {
        shape.block /= 2;
    }
    check(shape, size)
}

/// The staged scan's shape (`staged == false` when elements of `size` bytes cannot be staged
/// on `cc`). `MONOSCAN_STAGED=<threads>x<items>[x<lookback>]` overrides it (for tuning).
fn staged_shape(size: usize, cc: u32, layout: StateLayout, lookback: u32) -> Result<TileShape> {
    let tma = tma_enabled()? && cc >= 90;
    let (block, items, lookback) = if let Some((b, i, lb)) = env_shape("MONOSCAN_STAGED", true)? {
        (b, i, lb.unwrap_or(lookback))
    } else {
        // Measured on an H200 (docs/performance.md): residency is bounded by shared memory.
        // With cp.async, many blocks of 16 KiB tiles (128 threads, 13 blocks per SM) keep the
        // most bytes in flight for elements up to 8 bytes, and 16-byte elements do best with
        // 32 KiB tiles of 256 threads. The TMA form (sm_90), whose state sits in the tile's
        // buffer, does best with the largest tiles that five blocks fit: 44 KiB, 352 threads
        // of one 128-byte row each (220 KiB per SM; two tensor copies per tile). Session 10,
        // against the 24 KiB tiles of 192 threads (9 blocks) it replaced: sum i32 0.895
        // against 0.887, Segmented 0.898 against 0.888, Affine (256x8 before) 0.885 against
        // 0.872. Tiles that leave more shared memory unused lose: 320 threads 0.887, 384 0.881.
        match size {
            1 | 2 | 4 | 8 | 16 if tma => (352, (128 / size) as u32, lookback),
            0..=8 => (128, (128 / size.max(1)) as u32, lookback),
            _ => (256, 8, lookback),
        }
    };
    let staged = stageable(size, items, cc);
    let shape = TileShape {
        staged,
        tma: staged && tma && tma_fits(block, items, size),
        ..TileShape::new(block, items, layout, lookback)
    };
    if shape.block == 0
        || shape.block % 32 != 0
        || shape.block > 1024
        || !(1..=8).contains(&lookback)
    {
        return Err(Error::invalid(format!(
            "staged shape {block}x{items}x{lookback}: threads must be a multiple of 32 up to 1024, look-back 1 to 8"
        )));
    }
    if shape.staged_smem_bytes(size) > STAGED_SMEM_LIMIT {
        return Err(Error::invalid(format!(
            "staged shape {block}x{items} needs {} bytes of shared memory (limit {STAGED_SMEM_LIMIT})",
            shape.staged_smem_bytes(size)
        )));
    }
    Ok(shape)
}

fn check(shape: TileShape, size: usize) -> Result<TileShape> {
    if shape.block == 0
        || shape.block % 32 != 0
        || shape.block > 1024
        || shape.items == 0
        || !(1..=8).contains(&shape.lookback)
    {
        return Err(Error::invalid(format!(
            "tile shape {}x{}x{}: threads must be a multiple of 32 up to 1024, items at least 1, look-back 1 to 8",
            shape.block, shape.items, shape.lookback
        )));
    }
    if shape.smem_bytes(size) > SMEM_LIMIT {
        return Err(Error::invalid(format!(
            "elements of {size} bytes are too large: a tile of {}x{} needs {} bytes of shared memory (limit {SMEM_LIMIT})",
            shape.block,
            shape.items,
            shape.smem_bytes(size)
        )));
    }
    Ok(shape)
}

/// The tile of stream compaction's fused select kernel for input elements of `in_size` bytes
/// (the kernel scans u32 keep counts): 256 threads of up to 64 bytes each, at most 16 items
/// per thread (one bit each), fewer threads where the transposition buffer of raw elements
/// would pass 48 KiB of shared memory.
pub fn select_shape(in_size: usize) -> Result<TileShape> {
    let mut shape = TileShape::new(
        256,
        (64 / in_size.max(1)).clamp(1, 16) as u32,
        StateLayout::for_size(4),
        1,
    );
    let smem = |s: &TileShape| (s.block as usize / 32) * (33 * s.items as usize) * in_size + 64;
    while smem(&shape) > SMEM_LIMIT && shape.block > 32 {
        shape.block /= 2;
    }
    if smem(&shape) > SMEM_LIMIT {
        return Err(Error::invalid(format!(
            "elements of {in_size} bytes are too large for fused compaction (at most {} bytes)",
            (SMEM_LIMIT - 64) / 33
        )));
    }
    check(shape, 4)
}

/// The tile of the staged select kernel (`select_staged`: the tile copied into shared memory
/// with `cp.async`, no elements held in registers while the block looks back) for input
/// elements of `in_size` bytes on compute capability `cc`: 128 threads, tiles of 16 KiB (4 KiB
/// and 8 KiB for 1- and 2-byte elements, at most 32 rounds per warp: one ballot per lane).
/// `None` where it does not apply (before sm_80, or sizes other than 1, 2, 4, 8 and 16 bytes),
/// and the register kernel ([`select_shape`]) runs instead. `MONOSCAN_SELECT=<threads>x<items>`
/// overrides the shape (for tuning): items up to 32, a whole number of 16-byte chunks per
/// thread, a tile within 48 KiB.
pub fn select_staged_shape(in_size: usize, cc: u32) -> Result<Option<TileShape>> {
    if cc < 80 || !matches!(in_size, 1 | 2 | 4 | 8 | 16) {
        return Ok(None);
    }
    let (block, items) = match env_shape("MONOSCAN_SELECT", false)? {
        Some((b, i, _)) => (b, i),
        None => (128, (16 * 1024 / (128 * in_size)).min(32) as u32),
    };
    let shape = TileShape {
        staged: true,
        // One bulk copy per tile and an L2 prefetch ahead (sm_90 and newer), as the staged
        // scan's TMA form; `MONOSCAN_TMA=0` keeps cp.async.
        tma: cc >= 90 && tma_enabled()?,
        ..TileShape::new(block, items, StateLayout::for_size(4), 1)
    };
    let bytes = shape.tile_bytes(in_size);
    if block == 0
        || block % 32 != 0
        || block > 1024
        || !(1..=32).contains(&items)
        || bytes % (16 * block as usize) != 0
        || bytes > SMEM_LIMIT
    {
        return Err(Error::invalid(format!(
            "select shape {block}x{items} for {in_size}-byte elements: threads must be a multiple of 32 up to 1024, items 1 to 32, whole 16-byte chunks per thread and at most {SMEM_LIMIT} bytes per tile"
        )));
    }
    Ok(Some(shape))
}

/// Threads per block of the textbook kernels for elements of `size` bytes: the largest power
/// of two up to 1024 whose Brent-Kung section (2 x threads elements) fits in shared memory.
pub fn textbook_block(size: usize) -> Result<u32> {
    let mut block = 1024u32;
    while block >= 32 && 2 * block as usize * size + size > SMEM_LIMIT {
        block /= 2;
    }
    if block < 32 {
        return Err(Error::invalid(format!(
            "elements of {size} bytes are too large for the textbook kernels (at most {} bytes)",
            SMEM_LIMIT / 65
        )));
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_fit_shared_memory() {
        for purpose in [Purpose::SinglePass, Purpose::Tiles, Purpose::OneTile] {
            for size in [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 100, 256, 700] {
                let s = tile_shape(size, 90, purpose).unwrap();
                assert!(s.smem_bytes(size) <= SMEM_LIMIT, "size {size}: {s:?}");
                assert_eq!(s.layout, StateLayout::for_size(size));
            }
            assert!(tile_shape(10_000, 90, purpose).is_err());
        }
    }

    #[test]
    fn one_tile_shapes_are_small_and_never_larger_than_single_pass_tiles() {
        let one = tile_shape(4, 90, Purpose::OneTile).unwrap();
        assert_eq!((one.block, one.items, one.tile()), (256, 4, 1024));
        for size in [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 100, 256, 700] {
            let one = tile_shape(size, 90, Purpose::OneTile).unwrap();
            let sp = tile_shape(size, 90, Purpose::SinglePass).unwrap();
            assert!(
                one.tile() * size as u64 <= 4096 || one.block == 32,
                "size {size}: {one:?}"
            );
            assert!(one.tile() <= sp.tile(), "size {size}: {one:?} vs {sp:?}");
        }
    }

    #[test]
    fn select_shapes_fit_and_keep_a_bit_per_item() {
        for size in [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 100, 256, 700, 1400] {
            let s = select_shape(size).unwrap();
            assert!(s.items <= 16 && s.block >= 32, "size {size}: {s:?}");
            assert!((s.block as usize / 32) * 33 * s.items as usize * size + 64 <= SMEM_LIMIT);
            assert_eq!(s.layout, StateLayout::Packed64);
        }
        assert_eq!(select_shape(4).unwrap().tile(), 4096);
        assert!(select_shape(2000).is_err());
    }

    #[test]
    fn staged_select_shapes_are_whole_chunks_per_thread() {
        for size in [1, 2, 4, 8, 16] {
            let s = select_staged_shape(size, 90).unwrap().unwrap();
            assert!(
                s.staged && s.items <= 32 && s.block == 128,
                "size {size}: {s:?}"
            );
            let bytes = s.tile_bytes(size);
            assert!(
                bytes <= 16 * 1024 && bytes % (16 * 128) == 0,
                "size {size}: {bytes}"
            );
            assert!(s.tma, "size {size}: {s:?}");
            assert!(!select_staged_shape(size, 80).unwrap().unwrap().tma);
        }
        assert_eq!(select_staged_shape(4, 90).unwrap().unwrap().tile(), 4096);
        assert!(select_staged_shape(4, 75).unwrap().is_none());
        assert!(select_staged_shape(12, 90).unwrap().is_none());
        assert!(select_staged_shape(32, 90).unwrap().is_none());
    }

    #[test]
    fn tiles_of_more_than_256_threads_arrive_in_several_boxes() {
        // A box holds at most 256 rows (threads); every box starts a 1 KiB swizzle period.
        for (block, boxes, rows) in [
            (32, 1, 32),
            (192, 1, 192),
            (256, 1, 256),
            (288, 2, 144),
            (320, 2, 160),
            (512, 2, 256),
            (576, 3, 192),
            (1024, 4, 256),
        ] {
            let s = TileShape::new(block, 32, StateLayout::Packed64, 1);
            assert_eq!((s.tma_boxes(), s.tma_rows()), (boxes, rows), "{block}");
            assert!(tma_fits(block, 32, 4), "{block}");
        }
        // 800 threads make 4 boxes of 200 rows (25 groups of 8); 608 and 544 threads need 3
        // boxes, which do not split them into whole 8-row groups.
        assert!(tma_fits(800, 32, 4));
        assert!(!tma_fits(608, 32, 4));
        assert!(!tma_fits(544, 32, 4));
        // Only runs of exactly 128 bytes.
        assert!(!tma_fits(288, 16, 4));
        assert!(tma_fits(288, 8, 16));
    }

    #[test]
    fn tma_loads_staged_tiles_of_128_byte_runs_on_sm90() {
        for size in [1, 2, 4, 8, 16] {
            let s = tile_shape(size, 90, Purpose::Staged).unwrap();
            assert!(s.staged && s.tma, "size {size}: {s:?}");
            assert_eq!(s.items as usize * size, 128);
            let state = s.tma_state_bytes(size);
            assert_eq!(s.staged_smem_bytes(size), s.tile() as usize * size + state);
            assert!(state % 16 == 0 && state >= (s.block as usize / 32 + 1) * size + 4 + 8);
            let older = tile_shape(size, 80, Purpose::Staged).unwrap();
            assert!(older.staged && !older.tma, "size {size}: {older:?}");
            assert_eq!(older.staged_smem_bytes(size), older.tile() as usize * size);
        }
        // An H100's or H200's 228 KiB (1 KiB reserved per block) hold 5 of the TMA form's
        // 44 KiB tiles with their state (two boxes of 176 rows each), 13 of the cp.async
        // form's 16 KiB i32 tiles, and 6 of its 32 KiB tiles of 16-byte elements.
        for size in [1, 2, 4, 8, 16] {
            let s = tile_shape(size, 90, Purpose::Staged).unwrap();
            assert_eq!((s.block, s.staged_blocks_per_sm(size)), (352, 5), "{size}");
            assert_eq!((s.tma_boxes(), s.tma_rows()), (2, 176), "{size}");
        }
        let s = tile_shape(4, 90, Purpose::Staged).unwrap();
        let older = tile_shape(4, 80, Purpose::Staged).unwrap();
        assert_eq!((older.block, older.staged_blocks_per_sm(4)), (128, 13));
        let affine = tile_shape(16, 80, Purpose::Staged).unwrap();
        assert_eq!((affine.block, affine.staged_blocks_per_sm(16)), (256, 6));
        assert!(!tile_shape(12, 90, Purpose::Staged).unwrap().tma);
        assert!(!tile_shape(4, 90, Purpose::SinglePass).unwrap().tma);
        assert_ne!(s.name(), TileShape { tma: false, ..s }.name());
    }

    #[test]
    fn each_tile_state_fills_whole_sectors_of_its_own() {
        for (size, words) in [
            (1, 8),
            (4, 8),
            (8, 16),
            (16, 32),
            (24, 48),
            (32, 64),
            (64, 4),
        ] {
            let bytes = StateLayout::for_size(size).status_bytes(size);
            assert_eq!(bytes % STATE_SECTOR, 0, "{size}-byte elements");
            assert!(
                bytes >= words && bytes < words + STATE_SECTOR,
                "{size}-byte elements: {bytes}"
            );
        }
    }

    #[test]
    fn textbook_blocks() {
        assert_eq!(textbook_block(4).unwrap(), 1024);
        assert_eq!(textbook_block(16).unwrap(), 1024);
        assert_eq!(textbook_block(32).unwrap(), 512);
        assert!(textbook_block(1000).is_err());
    }
}
