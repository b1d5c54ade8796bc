//! Tile shapes: what the tiled kernels are rendered and launched with. The policy that picks
//! them is [`super::policy`].

/// Bytes of an L2 sector: each tile's single-pass state fills whole sectors of its own. Tiles
/// publish while their successors poll them, and packed side by side (16 to a 128-byte line)
/// those writes and polls contend for the same lines (on an H200, sum i32 at 0.853 of copy
/// against 0.894-0.899 with one tile per sector).
pub const STATE_SECTOR: u64 = 32;

/// How the single-pass scan stores each tile's status and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateLayout {
    /// Status and value in one 64-bit word (elements of 1 to 4 bytes).
    Packed64,
    /// Status and value in one 128-bit word (elements of 5 to 8 bytes).
    Packed128,
    /// Elements of 9 to 64 bytes: each 8-byte piece of the value in a 128-bit word beside a
    /// copy of the status, so that a reader needs one round of independent loads.
    Paired,
    /// A status array plus value arrays, ordered by release/acquire (elements of more than 64
    /// bytes).
    Separate,
}

impl StateLayout {
    /// The layout for elements of `size` bytes. Up to 64 bytes the paired layout's single round
    /// of loads beats the separate layout's status-then-value round trips: on an H100, scans at
    /// 1 GiB of 40-, 48- and 64-byte elements ran at 0.97, 0.96 and 0.87 of copy paired against
    /// 0.92, 0.91 and 0.83 separate.
    pub fn for_size(size: usize) -> Self {
        match size {
            0..=4 => StateLayout::Packed64,
            5..=8 => StateLayout::Packed128,
            9..=64 => StateLayout::Paired,
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
        self.entry_bytes(size).next_multiple_of(STATE_SECTOR)
    }

    /// Bytes of one status entry for elements of `size` bytes, unpadded: the words the
    /// kernels write per publish (for the separate layout only the status word).
    pub fn entry_bytes(&self, size: usize) -> u64 {
        match self {
            StateLayout::Packed64 => 8,
            StateLayout::Packed128 => 16,
            StateLayout::Paired => 16 * size.div_ceil(8) as u64,
            StateLayout::Separate => 4,
        }
    }
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
    /// shared memory instead of holding it in registers.
    pub staged: bool,
    /// Whether the staged scan loads whole tiles by the TMA (sm_90 and newer) instead of
    /// `cp.async`: in the swizzled layout by tensor copies (each thread's run is one 128-byte
    /// row of a 2D tensor map, so the TMA's 128-byte swizzle is the staged buffer's layout; the
    /// launch takes the tensor map of the input), in the linear layout by one bulk copy. For
    /// compaction's staged kernel: one bulk copy per tile instead of `cp.async`.
    pub tma: bool,
    /// Whether the staged tile keeps elements in the linear layout (any element size: element
    /// `e` at byte `e * size`, read in the widest power-of-two unit that divides the size)
    /// instead of swizzled 16-byte chunks (power-of-two element sizes).
    pub linear: bool,
    /// Independent chains each thread's run is folded and scanned in (1, or more for expensive
    /// combines: see `templates/lib/run_chains.cuh`); the staged scan only.
    pub chains: u32,
    /// Blocks per SM the kernel asks the compiler to allow (`__launch_bounds__`), so that
    /// registers never lower residency below what the shape policy planned; 0 for no such
    /// bound.
    pub min_blocks: u32,
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
            linear: false,
            chains: 1,
            min_blocks: 0,
        }
    }

    /// Elements per tile.
    pub fn tile(&self) -> u64 {
        u64::from(self.block) * u64::from(self.items)
    }

    /// `b256x32x1-packed64`, `staged-b256x32x1-packed64`, `tma-staged-b128x32x1-packed64`,
    /// `tma-linear-staged-b320x11x1-paired-m5`, `tma-staged-b352x16x1-packed128-c4-m4` (a
    /// linear layout, chains and a residency bound where they apply).
    pub fn name(&self) -> String {
        let mut name = format!(
            "{}{}{}b{}x{}x{}-{}",
            if self.tma { "tma-" } else { "" },
            if self.linear { "linear-" } else { "" },
            if self.staged { "staged-" } else { "" },
            self.block,
            self.items,
            self.lookback,
            self.layout.name()
        );
        if self.chains > 1 {
            name.push_str(&format!("-c{}", self.chains));
        }
        if self.min_blocks > 0 {
            name.push_str(&format!("-m{}", self.min_blocks));
        }
        name
    }

    /// The largest power of two up to 16 that divides `size`: the bytes of the accesses that
    /// read and write an element of `size` bytes alone (or a group of elements of that many
    /// bytes) wherever it starts in a tile.
    pub fn unit(size: usize) -> usize {
        (1usize << size.max(1).trailing_zeros()).min(16)
    }

    /// Elements the linear layout reads and writes together in a run (or a chain of a run) of
    /// `items` elements of `size` bytes: the fewest whose bytes make whole 4-byte words (4 of
    /// an odd size, 2 of a size of 2 mod 4, else 1) where that many divide the run, else 2
    /// where two do, else 1. Their bytes go in units of [`TileShape::linear_unit`]: a 3-byte
    /// element alone takes three 1-byte accesses, four of them three 4-byte ones.
    pub fn linear_group(size: usize, items: u32) -> usize {
        let size = size.max(1);
        let want = 4 / (1usize << size.trailing_zeros().min(2));
        [4, 2]
            .into_iter()
            .find(|&g| g <= want && items as usize % g == 0)
            .unwrap_or(1)
    }

    /// Bytes of the linear layout's accesses for runs of `items` elements of `size` bytes:
    /// the [`TileShape::unit`] of a group ([`TileShape::linear_group`]).
    pub fn linear_unit(size: usize, items: u32) -> usize {
        Self::unit(Self::linear_group(size, items) * size.max(1))
    }

    /// How the linear layout staggers a run's units between threads, as `(rotations, period)`:
    /// thread `t` accesses the units of each group starting at unit `(t / period) % rotations`
    /// (and wrapping), so that the threads of one shared-memory phase touch distinct banks.
    ///
    /// Runs of `items` elements of `size` bytes start `items * size / unit` units apart. Where
    /// that stride is odd the runs already fall in distinct banks and there is one rotation.
    /// Where it shares a factor `g` with the phase's `128 / unit` unit positions (64-byte
    /// elements in 16-byte units: every run starts on bank 0 or 16), only `128 / unit / g`
    /// distinct positions start a phase's runs and `g` threads pile onto each; staggering the
    /// threads by up to `g` units of the group (`chain_items` elements per group, as
    /// [`TileShape::linear_group`]) spreads them again. Units under 4 bytes share words and
    /// keep one rotation.
    ///
    /// ```
    /// use monoscan::tuning::TileShape;
    /// assert_eq!(TileShape::linear_rotation(64, 9, 9), (4, 2));
    /// assert_eq!(TileShape::linear_rotation(32, 17, 17), (2, 4));
    /// assert_eq!(TileShape::linear_rotation(48, 11, 11), (1, 8));
    /// ```
    pub fn linear_rotation(size: usize, items: u32, chain_items: u32) -> (u32, u32) {
        let group = Self::linear_group(size, chain_items);
        let unit = Self::linear_unit(size, chain_items);
        let positions = (128 / unit) as u64;
        if unit < 4 {
            return (1, positions as u32);
        }
        let units = (group * size.max(1) / unit) as u64;
        let stride = u64::from(items) * size.max(1) as u64 / unit as u64;
        let shared = gcd(stride % positions, positions);
        let mut rotations = 1u64;
        while rotations * 2 <= shared.min(units) {
            rotations *= 2;
        }
        (rotations as u32, (positions / shared) as u32)
    }

    /// Tensor copies per tile in the TMA form: a box of the tensor map holds at most 256 rows
    /// (one per thread), so tiles of more threads arrive as several boxes.
    pub fn tma_boxes(&self) -> u32 {
        tma_boxes(self.block)
    }

    /// Whether the tile's rows can arrive by tensor copies: one 128-byte row per thread's run
    /// of elements of `size` bytes (the span of the 128-byte swizzle), and the rows split
    /// evenly into boxes of at most 256 rows that each start a 1 KiB swizzle period (a whole
    /// number of 8-row groups).
    pub fn tma_fits(&self, size: usize) -> bool {
        !self.linear
            && self.items as usize * size == 128
            && self.block % (8 * self.tma_boxes()) == 0
    }

    /// Rows (threads) per tensor copy in the TMA form: the tile's rows split evenly over
    /// [`Self::tma_boxes`] boxes.
    pub fn tma_rows(&self) -> u32 {
        self.block / self.tma_boxes()
    }

    /// Bytes of one tile of elements of `size` bytes (the staged select kernel's dynamic
    /// shared memory, in either form; the unit of the L2 prefetch distance); saturates.
    pub fn tile_bytes(&self, size: usize) -> usize {
        usize::try_from(self.tile())
            .unwrap_or(usize::MAX)
            .saturating_mul(size)
    }

    /// Dynamic shared memory of the staged scan for elements of `size` bytes: the tile, and
    /// for the TMA form also the block's state and its mbarrier ([`Self::tma_state_bytes`]).
    pub fn staged_smem_bytes(&self, size: usize) -> usize {
        match (self.staged, self.tma) {
            (false, _) => 0,
            (true, false) => self.tile_bytes(size),
            (true, true) => self
                .tile_bytes(size)
                .saturating_add(self.tma_state_bytes(size)),
        }
    }

    /// Dynamic shared memory of the staged reduce for elements of `size` bytes: its
    /// [`super::policy::REDUCE_STAGES`] tile buffers, the block's state (a sum per warp, the
    /// prefix, the tile number; rounded up to 16 bytes) and an 8-byte mbarrier per stage.
    pub fn reduce_smem_bytes(&self, size: usize) -> usize {
        self.reduce_smem_bytes_from(size, size)
    }

    /// [`Self::reduce_smem_bytes`] where an input map reads `in_size`-byte inputs: the stages
    /// hold tiles of inputs (a widening map's are narrower than the elements).
    pub fn reduce_smem_bytes_from(&self, in_size: usize, size: usize) -> usize {
        let stages = super::policy::REDUCE_STAGES as usize;
        let state = self.reduce_state_bytes(size);
        self.tile_bytes(in_size)
            .saturating_mul(stages)
            .saturating_add(state + 8 * stages)
    }

    /// The staged reduce's block state after its buffers (`ms_staged_smem`: a sum per warp,
    /// the prefix, the tile number), rounded up to 16 bytes.
    fn reduce_state_bytes(&self, size: usize) -> usize {
        ((self.block as usize / 32 + 1) * size.max(1) + 4).div_ceil(16) * 16
    }

    /// 128-byte columns per step of the staged reduce's share form for elements of `size`
    /// bytes: the fewest that hold whole elements (1 for powers of two up to 128 bytes; 3 for
    /// 12, 24 and 48 bytes; 5 for 40).
    pub fn share_columns(size: usize) -> u32 {
        let size = size.max(1);
        let mut a = size;
        let mut b = 128;
        while b != 0 {
            (a, b) = (b, a % b);
        }
        (size / a) as u32
    }

    /// Dynamic shared memory of the share scan (`templates/share_scan.cu`) in `stages` stage
    /// buffers: 1 KiB of slack that lets the buffers start on 1 KiB, `stages` steps of
    /// [`Self::share_columns`] columns of a row per thread, the block's state and the
    /// mbarriers.
    pub fn shares_smem_bytes(&self, size: usize, stages: u32) -> usize {
        self.share_stages_smem_bytes(size, Self::share_columns(size), stages)
    }

    /// Dynamic shared memory of the staged reduce's share form (`reduce_shares` in
    /// `templates/lib/share_fold.cuh`): as [`Self::shares_smem_bytes`], but its stages hold
    /// one 128-byte column of a row per thread whatever the element's size.
    pub fn reduce_shares_smem_bytes(&self, size: usize) -> usize {
        self.share_stages_smem_bytes(size, 1, super::policy::SHARE_STAGES)
    }

    /// The share forms' dynamic shared memory with `stages` stages of `columns` 128-byte
    /// columns of a row per thread.
    fn share_stages_smem_bytes(&self, size: usize, columns: u32, stages: u32) -> usize {
        let stages = stages as usize;
        let state = self.reduce_state_bytes(size);
        (columns as usize * self.block as usize * 128)
            .saturating_mul(stages)
            .saturating_add(1024 + state + 8 * stages)
    }

    /// Whether the staged reduce's share form and the share scan apply to this shape with
    /// elements of `size` bytes: a TMA form, rows that split into boxes of whole 8-row groups
    /// (each box starts a 1 KiB swizzle period), and the share scan's
    /// [`super::policy::SHARE_STAGES`] stages (the most it takes) within the 227 KiB a block of
    /// sm_90 may opt into.
    pub fn shares_fit(&self, size: usize) -> bool {
        self.staged
            && self.tma
            && size > 0
            && self.block % (8 * self.tma_boxes()) == 0
            && self.shares_smem_bytes(size, super::policy::SHARE_STAGES) <= 227 * 1024
    }

    /// Dynamic shared memory of the staged row scan (`templates/row_staged.cu`): a tile of
    /// `value_size`-byte values, and for the TMA form also the block's state over the segmented
    /// lifting's `lifted_size`-byte elements ([`TileShape::row_staged_state_bytes`]; `segments`:
    /// rows given by offsets).
    pub fn row_staged_smem_bytes(
        &self,
        value_size: usize,
        lifted_size: usize,
        segments: bool,
    ) -> usize {
        match (self.staged, self.tma) {
            (false, _) => 0,
            (true, false) => self.tile_bytes(value_size),
            (true, true) => self
                .tile_bytes(value_size)
                .saturating_add(self.row_staged_state_bytes(lifted_size, segments)),
        }
    }

    /// Bytes after the tile in the staged row scan's TMA form: the staged scan's
    /// ([`TileShape::tma_state_bytes`] over the lifting's `lifted_size`-byte elements), and
    /// where rows are given by offsets (`segments`) two 8-byte row numbers and a mask of the
    /// tile's row starts (a bit per value, and two 32-bit words more).
    ///
    /// ```
    /// use monoscan::tuning::{StateLayout, TileShape};
    /// let s = TileShape::new(128, 32, StateLayout::for_size(8), 1);
    /// // 4 warp sums, a prefix and a tile number (rounded to 48 bytes), an mbarrier slot.
    /// assert_eq!(s.row_staged_state_bytes(8, false), 64);
    /// // Two row numbers and the mask: 4096 / 32 + 2 words, rounded to 528 bytes.
    /// assert_eq!(s.row_staged_state_bytes(8, true), 64 + 16 + 528);
    /// ```
    pub fn row_staged_state_bytes(&self, lifted_size: usize, segments: bool) -> usize {
        let state = self.tma_state_bytes(lifted_size);
        if segments {
            let words = self.tile() as usize / 32 + 2;
            state + 16 + (4 * words).div_ceil(16) * 16
        } else {
            state
        }
    }

    /// Bytes after the tile in the TMA form's dynamic shared memory: the block's state (a sum
    /// per warp, the prefix, the tile number; rounded up to 16 bytes) and a 16-byte slot for
    /// its mbarrier. The TMA kernel declares no static shared memory, whose alignment padding
    /// would cost a resident block per SM; the template checks that its state fits.
    pub fn tma_state_bytes(&self, size: usize) -> usize {
        let state = (self.block as usize / 32 + 1) * size.max(1) + 4;
        state.div_ceil(16) * 16 + 16
    }

    /// The swizzle shift of the staged scan's buffers: `max(3, log2(16-byte chunks per
    /// thread))`, so that the eight lanes of a phase read distinct bank groups.
    pub fn swizzle(&self, size: usize) -> u32 {
        let chunks = (self.items as usize * size / 16).max(1);
        chunks.trailing_zeros().max(3)
    }

    /// Static shared memory of the tiled kernels for elements of `size` bytes; saturates.
    pub fn smem_bytes(&self, size: usize) -> usize {
        let (b, i) = (self.block as usize, self.items as usize);
        let warps = b / 32;
        warps
            .saturating_mul(33usize.saturating_mul(i))
            .saturating_add(warps)
            .saturating_add(1)
            .saturating_mul(size)
            .saturating_add(16)
    }
}

/// Tensor copies per tile of `block` threads (one 128-byte row each): a box holds at most 256
/// rows.
fn tma_boxes(block: u32) -> u32 {
    block.div_ceil(256).max(1)
}

/// The greatest common divisor (`gcd(0, b) == b`, `gcd(a, 0) == a`).
pub(crate) fn gcd(a: u64, b: u64) -> u64 {
    if a == 0 {
        b
    } else {
        gcd(b % a, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(s.tma_fits(4), "{block}");
        }
        let fits = |block, items, size| {
            TileShape::new(block, items, StateLayout::Packed64, 1).tma_fits(size)
        };
        // 800 threads make 4 boxes of 200 rows (25 groups of 8); 608 and 544 threads need 3
        // boxes, which do not split them into whole 8-row groups.
        assert!(fits(800, 32, 4));
        assert!(!fits(608, 32, 4));
        assert!(!fits(544, 32, 4));
        // Only runs of exactly 128 bytes.
        assert!(!fits(288, 16, 4));
        assert!(fits(288, 8, 16));
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
            (40, 80),
            (64, 128),
            (96, 4),
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
    fn sizes_saturate_instead_of_overflowing() {
        let s = TileShape::new(1024, u32::MAX, StateLayout::Separate, 1);
        assert_eq!(s.tile_bytes(usize::MAX), usize::MAX);
        assert_eq!(s.smem_bytes(usize::MAX), usize::MAX);
    }
    /// The most threads of one shared-memory phase whose accesses to unit `k` of a group
    /// fall on the same bank group, for runs of `items` elements of `size` bytes staggered by
    /// `rotation` (as the linear layout's template does).
    fn worst_phase(size: usize, items: u32, chain_items: u32, rotation: (u32, u32)) -> usize {
        let group = TileShape::linear_group(size, chain_items);
        let unit = TileShape::linear_unit(size, chain_items);
        let units = group * size / unit;
        let positions = 128 / unit;
        let stride = items as usize * size / unit;
        let (rotations, period) = (rotation.0 as usize, rotation.1 as usize);
        let mut worst = 0;
        for phase in 0..4 {
            for k in 0..units {
                let mut hits = vec![0usize; positions];
                for t in phase * positions..(phase + 1) * positions {
                    let r = (t / period) % rotations;
                    hits[(t * stride + (k + r) % units) % positions] += 1;
                }
                worst = worst.max(hits.into_iter().max().unwrap());
            }
        }
        worst
    }

    #[test]
    fn staggered_runs_fall_in_distinct_banks() {
        for size in [4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128] {
            for items in 1..=24u32 {
                if TileShape::linear_unit(size, items) < 4 {
                    continue;
                }
                let rotation = TileShape::linear_rotation(size, items, items);
                let plain = worst_phase(size, items, items, (1, 1));
                let staggered = worst_phase(size, items, items, rotation);
                assert!(
                    staggered <= plain,
                    "{size} x {items}: {staggered} > {plain}"
                );
                // Threads sharing a bank without the stagger, spread over as many units of
                // the group as there are: a group of a power-of-two count of units spreads
                // them evenly.
                let unit = TileShape::linear_unit(size, items);
                let units = TileShape::linear_group(size, items) * size / unit;
                if units.is_power_of_two() {
                    let want = plain.div_ceil(units).max(1);
                    assert_eq!(staggered, want, "{size} x {items}: {rotation:?}");
                }
            }
        }
        // The long runs of 64-byte elements: four 16-byte units staggered over pairs of threads.
        assert_eq!(worst_phase(64, 9, 9, (1, 1)), 4);
        assert_eq!(
            worst_phase(64, 9, 9, TileShape::linear_rotation(64, 9, 9)),
            1
        );
    }
}
