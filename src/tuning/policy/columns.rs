//! The column scan's shape: threads, row groups and rows per thread for a number of columns
//! and an element size.

use crate::tuning::shape::gcd;
use crate::tuning::{ColumnShape, DeviceLimits, ShapeChoice, StateLayout};

/// The most columns of tiles of whole rows: one thread per column of a block of 1024. Arrays
/// cut into strips take any number.
pub const MAX_COLUMNS: usize = 1024;

/// Bytes the policy's column tile aims at: tiles of 32 KiB ran a 524,288 x 32 f32 scan at 0.89
/// of a copy on an H100, 16 KiB tiles at 0.64 and 48 to 64 KiB ones at 0.85 (fewer tiles in
/// flight per SM). On an H200 the larger tiles ran faster, so the autotuner times them too
/// ([`crate::tuning::autotune::columns`]).
pub const COLUMN_TILE_BYTES: u64 = 32 * 1024;

/// Bytes of a strip's row: rows longer than this are cut into strips of this many bytes, each
/// scanned as 32 columns of f32 are (in the same prototype, 64 and 128 columns of f32 in tiles
/// of whole rows ran at 0.82 of a copy, 32 at 0.89).
pub const STRIP_BYTES: u64 = 128;

/// The column scan's shape for `columns` columns of `size`-byte elements on a device with
/// `limits`, or `None` for empty elements or columns, for more than [`MAX_COLUMNS`] columns
/// that cannot be cut into strips, or where even a tile of one row does not fit shared memory.
/// A `choice` ([`crate::tuning::Tuning::column`]: threads x rows per thread) replaces the
/// block's threads (at least one per column of a strip) and each thread's rows.
///
/// Rows of more than [`STRIP_BYTES`] are cut into strips of that many bytes, on sm_80 and newer,
/// when the element size is a power of two up to 16 and a row is whole 16-byte chunks (each
/// strip's rows are copied in 16-byte chunks). A tile then has the strip's columns; else it has
/// every column.
///
/// Blocks of 256 threads hold `256 / c` row groups for `c` columns per tile; wider tiles get
/// one thread per column (threads rounded up to a warp) and one group. Each thread scans
/// `rows` rows: the fewest that make the tile [`COLUMN_TILE_BYTES`] while keeping shared-memory
/// reads free of bank conflicts. The threads of a warp read `row * c + column` from their
/// groups' rows, so consecutive groups sit `rows * c` elements apart; with
/// `(rows - 1) * c * size` a multiple of 128 bytes, a warp's reads fall on consecutive words,
/// as if the warp read one row. On sm_90 a tile of whole rows arrives by one bulk copy, which
/// takes whole 16-byte chunks: the groups are lowered (by at most 15, keeping three quarters
/// of them) until the tile is one, else full tiles are copied by the threads.
///
/// ```
/// use monoscan::tuning::{policy, DeviceLimits, ShapeChoice};
/// let h100 = DeviceLimits::for_arch(90);
/// let s = policy::column_shape(32, 4, &h100, None).unwrap();
/// assert_eq!((s.block, s.groups, s.rows, s.strip), (256, 8, 32, 32));
/// assert!(s.tma && s.tile_bytes(4) == 32 * 1024);
/// // Asked for 512 threads of 16 rows: 16 groups of 32 columns.
/// let asked = policy::column_shape(32, 4, &h100, Some(ShapeChoice::new(512, 16))).unwrap();
/// assert_eq!((asked.block, asked.groups, asked.rows), (512, 16, 16));
/// let two = policy::column_shape(2, 4, &h100, None).unwrap();
/// assert_eq!((two.groups, two.rows), (128, 33));
/// // 1000 columns of f32: 32 strips of 32 columns, the last one 8 columns wide.
/// let wide = policy::column_shape(1000, 4, &h100, None).unwrap();
/// assert_eq!((wide.strip, wide.strips(), wide.block, wide.groups), (32, 32, 256, 8));
/// // 1001 columns are not whole 16-byte chunks: tiles of whole rows, one thread per column.
/// let odd = policy::column_shape(1001, 4, &h100, None).unwrap();
/// assert_eq!((odd.strip, odd.block, odd.groups), (1001, 1024, 1));
/// assert!(policy::column_shape(1025, 4, &h100, None).is_none());
/// assert_eq!(policy::column_shape(1 << 20, 4, &h100, None).unwrap().strips(), 1 << 15);
/// ```
pub fn column_shape(
    columns: usize,
    size: usize,
    limits: &DeviceLimits,
    choice: Option<ShapeChoice>,
) -> Option<ColumnShape> {
    sized_column_shape(columns, size, limits, choice, COLUMN_TILE_BYTES)
}

/// [`column_shape`] with tiles that aim at `tile_bytes` instead of [`COLUMN_TILE_BYTES`] (where
/// no `choice` sets the rows): the autotuner's candidates.
///
/// ```
/// use monoscan::tuning::{policy, DeviceLimits};
/// let h100 = DeviceLimits::for_arch(90);
/// let s = policy::sized_column_shape(32, 4, &h100, None, 64 * 1024).unwrap();
/// assert_eq!((s.block, s.groups, s.rows), (256, 8, 64));
/// assert_eq!(s.tile_bytes(4), 64 * 1024);
/// ```
pub fn sized_column_shape(
    columns: usize,
    size: usize,
    limits: &DeviceLimits,
    choice: Option<ShapeChoice>,
    tile_bytes: u64,
) -> Option<ColumnShape> {
    if columns == 0 || size == 0 {
        return None;
    }
    let row = (columns as u64).checked_mul(size as u64)?;
    let stripped = limits.cc >= 80
        && row > STRIP_BYTES
        && size.is_power_of_two()
        && size <= 16
        && row % 16 == 0;
    let c = if stripped {
        STRIP_BYTES / size as u64
    } else if columns <= MAX_COLUMNS {
        columns as u64
    } else {
        return None;
    };
    let block = match choice {
        Some(s) => u64::from(s.threads).max(c.next_multiple_of(32)),
        None if c <= 256 => 256,
        None => c.next_multiple_of(32),
    };
    let mut groups = block / c;
    let row_bytes = c * size as u64;
    let period = 128 / gcd(row_bytes, 128);
    let want = tile_bytes.div_ceil(groups * row_bytes).max(1);
    let rows = match choice {
        Some(s) => u64::from(s.items.max(1)),
        None => 1 + (want - 1).div_ceil(period) * period,
    };
    let tma = limits.cc >= 90;
    if tma && !stripped {
        // Lower the groups until the tile is whole 16-byte chunks, where that keeps three
        // quarters of them.
        let whole = (0..16)
            .map(|d| groups - d)
            .take_while(|&g| g >= 1 && 4 * g >= 3 * groups)
            .find(|g| shape_chunks(*g, rows, row_bytes));
        if let Some(g) = whole {
            groups = g;
        }
    }
    let shape = ColumnShape {
        columns: u32::try_from(columns).ok()?,
        strip: c as u32,
        block: block as u32,
        groups: groups as u32,
        rows: u32::try_from(rows).ok()?,
        tma,
        layout: StateLayout::for_size(size),
    };
    if shape.smem_bytes(size) > u64::from(limits.shared_per_block_optin) {
        // Fewer rows per thread, down to one.
        let fit = ColumnShape { rows: 1, ..shape };
        return (fit.smem_bytes(size) <= u64::from(limits.shared_per_block_optin)).then_some(fit);
    }
    Some(shape)
}

fn shape_chunks(groups: u64, rows: u64, row_bytes: u64) -> bool {
    (groups * rows * row_bytes) % 16 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warps_read_consecutive_words_and_tiles_are_near_the_target() {
        let h100 = DeviceLimits::for_arch(90);
        for columns in [
            1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 33, 64, 100, 255, 256, 257, 1000, 1024,
        ] {
            for size in [1, 2, 4, 8, 12, 16, 24, 32, 64] {
                let s = column_shape(columns, size, &h100, None).unwrap();
                let row = u64::from(s.strip) * size as u64;
                assert!(u64::from(s.groups * s.strip) <= u64::from(s.block));
                assert_eq!(s.block % 32, 0);
                assert_eq!(
                    (u64::from(s.rows - 1) * row) % 128,
                    0,
                    "{columns} x {size}: {s:?}"
                );
                assert!(s.smem_bytes(size) <= u64::from(h100.shared_per_block_optin));
                if s.strips() > 1 {
                    // Strips of whole 16-byte chunks, cut from rows of whole chunks.
                    assert_eq!(row, STRIP_BYTES);
                    assert_eq!((columns * size) % 16, 0);
                    assert!(u64::from(s.columns) > u64::from(s.strip));
                }
                // Near the target at least (unless one row per thread is all that fits).
                if s.rows > 1 {
                    assert!(s.tile_bytes(size) >= COLUMN_TILE_BYTES * 3 / 4, "{s:?}");
                }
            }
        }
        assert!(column_shape(0, 4, &h100, None).is_none());
        assert!(column_shape(4, 0, &h100, None).is_none());
        assert!(column_shape(MAX_COLUMNS + 1, 12, &h100, None).is_none());
        assert!(column_shape(MAX_COLUMNS + 4, 4, &h100, None).is_some());
        // Before sm_80 (no cp.async): no strips.
        let turing = DeviceLimits::for_arch(75);
        assert!(column_shape(MAX_COLUMNS + 4, 4, &turing, None).is_none());
        assert_eq!(column_shape(64, 4, &turing, None).unwrap().strips(), 1);
    }

    #[test]
    fn odd_rows_keep_bulk_copies_by_dropping_a_group() {
        let h100 = DeviceLimits::for_arch(90);
        let s = column_shape(3, 4, &h100, None).unwrap();
        assert_eq!((s.groups, s.rows), (84, 33));
        assert!(s.tma && s.tile_bytes(4) % 16 == 0);
        let a100 = DeviceLimits::for_arch(80);
        let s = column_shape(3, 4, &a100, None).unwrap();
        assert_eq!(s.groups, 85);
        assert!(!s.tma);
    }
}
