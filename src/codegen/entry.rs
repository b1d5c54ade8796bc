//! The entry points of the generated code ([`Entry`]): their names, and which of them an
//! operator with a fused input map also gets.

/// An entry point of the generated code. Its symbol is `<prefix>_<name>`, and for entries an
/// operator with a fused input map also gets ([`Entry::mappable`]), `<prefix>_<name>_mapped`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entry {
    /// `fill(out, n, value)`: every module has it.
    Fill,
    /// `combine_pairs(a, b, out, n)`, for [`crate::verify`].
    CombinePairs,
    /// The textbook tree reduction.
    ReduceTree,
    /// The Kogge-Stone block scan.
    KsScan,
    /// The Brent-Kung block scan.
    BkScan,
    /// The hierarchical scan's add-back of carries.
    AddCarry,
    /// The tiled reduce.
    ReduceTiles,
    /// The tiled reduce's folds of contiguous rows of one length, each warp folding whole
    /// pieces of rows.
    ReduceRows,
    /// The staged reduce.
    ReduceStaged,
    /// The staged reduce's share form: each thread folds one contiguous share (the TMA forms;
    /// launched where its stages fit shared memory).
    ReduceShares,
    /// The share scan's first pass: each thread folds one contiguous share.
    ShareTotals,
    /// The share scan's second pass: each thread scans its share from its carry.
    ShareScan,
    /// Reduce-then-scan: the total of each tile.
    TileTotals,
    /// One block scans one tile from a carry.
    TileScan,
    /// The single-pass scan with its tile in registers.
    ScanSinglePass,
    /// The staged single-pass scan.
    ScanStaged,
    /// Stream compaction, tile held in registers.
    SelectRegisters,
    /// Stream compaction, tile staged in shared memory.
    SelectStaged,
    /// Independent scans of contiguous rows (batched scans).
    RowScan,
    /// Independent scans of contiguous rows of any length, given by CSR offsets.
    SegmentScan,
    /// Independent scans of contiguous rows with the tile of values staged in shared memory.
    RowStaged,
    /// The same for rows of any length, given by CSR offsets.
    SegmentStaged,
    /// Every column of a row-major array scanned down.
    ColumnScan,
    /// Lanes of a strided layout copied into contiguous rows.
    Gather,
    /// Contiguous rows copied back into lanes of a strided layout.
    Scatter,
    /// Independent chains of combines: the operator's combine rate
    /// ([`crate::bench::combine_rate`]).
    CombineRate,
}

impl Entry {
    /// The entry's name in the generated code, after the prefix (`tile_scan`).
    pub fn name(self) -> &'static str {
        match self {
            Entry::Fill => "fill",
            Entry::CombinePairs => "combine_pairs",
            Entry::ReduceTree => "reduce_tree",
            Entry::KsScan => "ks_scan",
            Entry::BkScan => "bk_scan",
            Entry::AddCarry => "add_carry",
            Entry::ReduceTiles => "reduce_tiles",
            Entry::ReduceRows => "reduce_rows",
            Entry::ReduceStaged => "reduce_staged",
            Entry::ReduceShares => "reduce_shares",
            Entry::ShareTotals => "share_totals",
            Entry::ShareScan => "share_scan",
            Entry::TileTotals => "tile_totals",
            Entry::TileScan => "tile_scan",
            Entry::ScanSinglePass => "scan_single_pass",
            Entry::ScanStaged => "scan_staged",
            Entry::SelectRegisters => "select_registers",
            Entry::SelectStaged => "select_staged",
            Entry::RowScan => "row_scan",
            Entry::SegmentScan => "segment_scan",
            Entry::RowStaged => "row_staged",
            Entry::SegmentStaged => "segment_staged",
            Entry::ColumnScan => "column_scan",
            Entry::Gather => "gather",
            Entry::Scatter => "scatter",
            Entry::CombineRate => "combine_rate",
        }
    }

    /// Whether an operator with a fused input map also gets a `_mapped` variant that reads
    /// the map's input type (the entries that read a call's input).
    pub fn mappable(self) -> bool {
        matches!(
            self,
            Entry::ReduceTiles
                | Entry::ReduceRows
                | Entry::ReduceStaged
                | Entry::ReduceShares
                | Entry::ShareTotals
                | Entry::ShareScan
                | Entry::TileTotals
                | Entry::TileScan
                | Entry::ScanSinglePass
                | Entry::ScanStaged
                | Entry::RowScan
                | Entry::SegmentScan
                | Entry::RowStaged
                | Entry::SegmentStaged
                | Entry::Gather
        )
    }

    /// The symbol's suffix after the prefix: `tile_scan` or `tile_scan_mapped`.
    pub fn symbol(self, mapped: bool) -> String {
        if mapped && self.mappable() {
            format!("{}_mapped", self.name())
        } else {
            self.name().to_string()
        }
    }
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
