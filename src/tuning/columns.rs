//! The shape of a column scan: every column of a row-major `rows x columns` array scanned down
//! (`templates/column_scan.cu`). The policy that picks it is [`super::policy::column_shape`].

use super::{StateLayout, STATE_SECTOR};

/// How a column scan splits the array into tiles and a tile among threads: the array's columns
/// are cut into strips of `strip` columns (one strip of whole rows when `strip == columns`),
/// and a tile is `groups * rows` rows of a strip; thread `g * strip + c` owns column `c` of the
/// tile over the `rows` consecutive rows of group `g`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnShape {
    /// Columns of the array (at least 1).
    pub columns: u32,
    /// Columns of a tile: `columns` (tiles of whole rows), or fewer (strips of rows, the last
    /// one possibly partly past the array's columns).
    pub strip: u32,
    /// Threads per block (a multiple of 32, at least `groups * strip`).
    pub block: u32,
    /// Row groups per tile (at least 1).
    pub groups: u32,
    /// Rows each thread scans (at least 1).
    pub rows: u32,
    /// Whether the sm_90 forms apply: full tiles of whole rows arrive by one TMA bulk copy
    /// (where they are whole 16-byte chunks), and the first wave's copies are paced.
    pub tma: bool,
    /// How each column's look-back state is stored.
    pub layout: StateLayout,
}

impl ColumnShape {
    /// Rows per tile.
    pub fn tile_rows(&self) -> u64 {
        u64::from(self.groups) * u64::from(self.rows)
    }

    /// Strips of columns: 1 for tiles of whole rows.
    pub fn strips(&self) -> u64 {
        u64::from(self.columns).div_ceil(u64::from(self.strip.max(1)))
    }

    /// Elements per tile.
    pub fn tile(&self) -> u64 {
        self.tile_rows() * u64::from(self.strip)
    }

    /// Bytes of a tile of `size`-byte elements.
    pub fn tile_bytes(&self, size: usize) -> u64 {
        self.tile().saturating_mul(size as u64)
    }

    /// Look-back entries per tile: one per column, padded so that each tile's entries fill
    /// whole 32-byte sectors of their own (each tile's columns are published together; no
    /// two tiles share a sector).
    pub fn slots(&self, size: usize) -> u64 {
        let entry = self.layout.entry_bytes(size);
        let mut slots = u64::from(self.strip);
        while (slots * entry) % STATE_SECTOR != 0 {
            slots += 1;
        }
        slots
    }

    /// Dynamic shared memory of the kernel, bytes: the tile, then the groups' totals and the
    /// columns' prefixes (16-byte aligned), then the tile number and the mbarrier (16 bytes
    /// each). `templates/column_scan.cu` checks its own sum against this.
    pub fn smem_bytes(&self, size: usize) -> u64 {
        let values = (u64::from(self.groups) + 1) * u64::from(self.strip) * size as u64;
        self.tile_bytes(size).next_multiple_of(16) + values.next_multiple_of(16) + 32
    }

    /// `c32-b256x8x32-tma-packed64` (`c100s32-...` in strips of 32): columns, threads,
    /// groups, rows, copies, state layout.
    pub fn name(&self) -> String {
        let strip = if self.strip == self.columns {
            String::new()
        } else {
            format!("s{}", self.strip)
        };
        format!(
            "c{}{strip}-b{}x{}x{}{}-{}",
            self.columns,
            self.block,
            self.groups,
            self.rows,
            if self.tma { "-tma" } else { "" },
            self.layout.name()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(columns: u32, layout: StateLayout) -> ColumnShape {
        ColumnShape {
            columns,
            strip: columns,
            block: 256,
            groups: 256 / columns,
            rows: 8,
            tma: true,
            layout,
        }
    }

    #[test]
    fn each_tile_owns_whole_sectors_of_state() {
        for columns in [1, 2, 3, 5, 32, 33, 100, 256] {
            for (layout, size) in [
                (StateLayout::Packed64, 4),
                (StateLayout::Packed128, 8),
                (StateLayout::Paired, 12),
                (StateLayout::Paired, 24),
                (StateLayout::Paired, 64),
                (StateLayout::Separate, 96),
            ] {
                let s = shape(columns, layout);
                let slots = s.slots(size);
                let bytes = slots * layout.entry_bytes(size);
                assert_eq!(bytes % STATE_SECTOR, 0, "{columns} columns, {layout:?}");
                assert!(slots >= u64::from(columns) && slots < u64::from(columns) + 8);
            }
        }
    }

    #[test]
    fn shared_memory_holds_the_tile_and_the_block_state() {
        let s = shape(32, StateLayout::Packed64);
        assert_eq!(s.tile(), 8 * 8 * 32);
        assert_eq!(s.smem_bytes(4), 8192 + (9 * 32 * 4) + 32);
        let odd = ColumnShape {
            columns: 3,
            strip: 3,
            groups: 85,
            rows: 1,
            ..s
        };
        // 255 elements of 4 bytes: 1020 bytes of tile, rounded to 1024.
        assert_eq!(odd.smem_bytes(4), 1024 + 1040 + 32);
        let strips = ColumnShape {
            columns: 100,
            strip: 32,
            ..s
        };
        assert_eq!(strips.strips(), 4);
        assert_eq!(strips.tile(), 8 * 8 * 32);
        assert_eq!(strips.slots(4), 32);
    }
}
