//! Folds of contiguous rows of one length by warps (`reduce_rows` in
//! `templates/tiled_reduce.cu`): each warp folds whole pieces of rows a warp tile at a time,
//! with no look-back and no block barrier, and writes one fold per piece; where rows are cut
//! into several pieces, a second launch folds each row's pieces in order. Rows shorter than
//! half a warp tile keep the row kernels ([`super::lanes`]), which share a tile among rows.

use super::kernels::OpKernels;
use super::launch::{self, DevSlice};
use super::scratch::bytes_for;
use crate::codegen::{Entry, KernelSet};
use crate::element::Element;
use crate::error::Result;
use crate::monoid::Monoid;
use crate::tuning::Purpose;

/// Rows cut into pieces that warps fold: `rows` rows of `len` elements, each in `pieces`
/// pieces of `piece_len` elements (whole warp tiles where there are several; the last piece
/// the rest of its row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowPieces {
    /// Rows.
    pub rows: u64,
    /// Elements per row.
    pub len: u64,
    /// Pieces per row.
    pub pieces: u64,
    /// Elements per piece.
    pub piece_len: u64,
}

impl RowPieces {
    /// Pieces in all: the folds the launch writes.
    pub(crate) fn count(&self) -> u64 {
        self.rows * self.pieces
    }

    /// Whether the pieces cover each row, none empty, every piece but the last whole warp
    /// tiles of `warp_tile` elements where a row has several.
    pub(crate) fn covers_rows(&self, warp_tile: u64) -> bool {
        self.pieces >= 1
            && (self.pieces == 1 || self.piece_len % warp_tile == 0)
            && self
                .piece_len
                .checked_mul(self.pieces)
                .is_some_and(|l| l >= self.len)
            && self.piece_len.saturating_mul(self.pieces - 1) < self.len.max(1)
    }
}

/// Pieces of work a resident warp gets: two, so that a warp that finishes early takes another
/// while the last wave drains.
const PIECES_PER_WARP: u64 = 2;

/// How `rows` rows of `len` elements split for `warps` resident warps folding warp tiles of
/// `warp_tile` elements: `None` for rows shorter than half a warp tile (most of a warp's lanes
/// would idle). Each row is one piece where the rows give every resident warp
/// [`PIECES_PER_WARP`] of them; fewer, longer rows are cut into pieces of whole warp tiles, at
/// least as many as that takes (and fewer than twice as many).
pub(crate) fn pieces(rows: u64, len: u64, warp_tile: u64, warps: u64) -> Option<RowPieces> {
    if rows == 0 || warp_tile == 0 || len.saturating_mul(2) < warp_tile {
        return None;
    }
    let want = warps.max(1).saturating_mul(PIECES_PER_WARP);
    let per_row = want.div_ceil(rows).min(len.div_ceil(warp_tile));
    if per_row <= 1 {
        return Some(RowPieces {
            rows,
            len,
            pieces: 1,
            piece_len: len,
        });
    }
    // Whole warp tiles per piece, rounded down: at least `per_row` pieces.
    let piece_len = (len.div_ceil(warp_tile) / per_row).max(1) * warp_tile;
    Some(RowPieces {
        rows,
        len,
        pieces: len.div_ceil(piece_len),
        piece_len,
    })
}

/// Folds `rows` contiguous rows of `len` elements of `inp` into `totals` (one per row) by warps,
/// through `k`'s input map when it has one: `false`, with nothing launched, where
/// [`pieces`] leaves the rows to the row kernels, or the tuning turns the warp folds off
/// ([`crate::tuning::Tuning::row_folds`]).
pub(super) fn fold_rows<M: Monoid, In: Element>(
    k: &OpKernels<M>,
    inp: DevSlice<In>,
    rows: u64,
    len: u64,
    totals: DevSlice<M::Elem>,
) -> Result<bool> {
    if !k.gpu.tuning.row_folds {
        return Ok(false);
    }
    let shape = k.shape(Purpose::Tiles)?;
    let warp_tile = 32 * u64::from(shape.items);
    if pieces(rows, len, warp_tile, 1).is_none() {
        return Ok(false);
    }
    let kernel = k.kernels(KernelSet::TiledReduce(shape))?;
    let resident = u64::from(kernel.resident(Entry::ReduceRows, k.mapped)).max(1);
    let warps_per_block = u64::from(shape.block / 32).max(1);
    let Some(split) = pieces(rows, len, warp_tile, resident * warps_per_block) else {
        return Ok(false);
    };
    let blocks = |count: u64| count.div_ceil(warps_per_block).min(resident);
    let stream = &k.gpu.stream;
    // The pieces' folds, through the map.
    let fold_pieces = |out: DevSlice<M::Elem>| {
        // SAFETY: `kernel` is the tiled-reduce module of this operator, with its input map from
        // `In` when `mapped` (unmapped, `In` is the element type).
        unsafe {
            launch::reduce_rows(
                stream,
                &kernel,
                k.mapped,
                blocks(split.count()),
                inp,
                out,
                &split,
            )
        }
    };
    if split.pieces == 1 {
        fold_pieces(totals)?;
        return Ok(true);
    }
    let size = std::mem::size_of::<M::Elem>();
    let mut scratch = k.gpu.lock_scratch();
    let mut carve = scratch.carve(stream, bytes_for(split.count(), size, 1))?;
    let folds = carve.take::<M::Elem>(split.count())?;
    fold_pieces(folds)?;
    // Each row's pieces, in order: rows of `pieces` folds, one piece each.
    let of_pieces = RowPieces {
        rows,
        len: split.pieces,
        pieces: 1,
        piece_len: split.pieces,
    };
    // SAFETY: the same module, reading its own elements (the unmapped entry).
    unsafe {
        launch::reduce_rows(
            stream,
            &kernel,
            false,
            blocks(rows),
            folds,
            totals,
            &of_pieces,
        )
    }?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every piece but the last is whole warp tiles, the pieces cover the row, none is empty.
    fn covers(p: &RowPieces, warp_tile: u64) {
        assert!(p.covers_rows(warp_tile), "{p:?}");
    }

    #[test]
    fn pieces_that_miss_part_of_a_row_or_split_a_warp_tile_do_not_cover() {
        let p = |pieces, piece_len| RowPieces {
            rows: 2,
            len: 1000,
            pieces,
            piece_len,
        };
        assert!(p(2, 512).covers_rows(512));
        assert!(p(1, 1000).covers_rows(512));
        assert!(!p(0, 1000).covers_rows(512));
        assert!(!p(2, 500).covers_rows(512));
        assert!(!p(1, 999).covers_rows(512));
        assert!(!p(3, 512).covers_rows(512));
    }

    #[test]
    fn short_rows_keep_the_row_kernels() {
        assert_eq!(pieces(1000, 255, 512, 100), None);
        assert_eq!(pieces(1000, 0, 512, 100), None);
        assert_eq!(pieces(0, 4096, 512, 100), None);
        assert!(pieces(1000, 256, 512, 100).is_some());
    }

    #[test]
    fn many_rows_are_one_piece_each() {
        let p = pieces(10_000, 600, 512, 4_000).unwrap();
        assert_eq!((p.pieces, p.piece_len), (1, 600));
        covers(&p, 512);
    }

    #[test]
    fn few_long_rows_give_each_warp_two_pieces() {
        let warps = 8_448;
        for (rows, len) in [(1, 1 << 26), (3, 10_000_019), (64, 152_064), (1000, 70_001)] {
            let p = pieces(rows, len, 512, warps).unwrap();
            covers(&p, 512);
            assert!(p.count() >= PIECES_PER_WARP * warps, "{p:?}");
            // No more pieces than needed, beyond rounding to whole warp tiles.
            assert!(p.count() < 2 * PIECES_PER_WARP * warps + rows, "{p:?}");
        }
    }

    #[test]
    fn rows_of_a_few_warp_tiles_are_cut_no_finer_than_a_warp_tile() {
        let p = pieces(4, 1537, 512, 1_000).unwrap();
        assert_eq!((p.pieces, p.piece_len), (4, 512));
        covers(&p, 512);
        let p = pieces(2, 300, 512, 1_000).unwrap();
        assert_eq!((p.pieces, p.piece_len), (1, 300));
    }
}
