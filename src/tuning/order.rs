//! How the blocks of a staged scan find their tiles ([`TileOrder`]).

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// How the blocks of the staged 1-D, row and column scans find the tile each scans
/// ([`super::Tuning::tile_order`]). Every order computes the same scan.
///
/// A tile's look-back waits for its predecessors, so a block must never wait for a tile whose
/// block cannot start. [`TileOrder::Claimed`] and [`TileOrder::OneWave`] guarantee that by
/// construction; [`TileOrder::BlockIndex`], the default and the fastest, rests on the
/// hardware starting a grid's blocks in index order, as CUB's single-pass scans do.
///
/// ```
/// use monoscan::tuning::TileOrder;
/// assert_eq!("claimed".parse::<TileOrder>()?, TileOrder::Claimed);
/// assert_eq!(TileOrder::default().to_string(), "block-index");
/// assert!("grid".parse::<TileOrder>().is_err());
/// # Ok::<(), monoscan::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TileOrder {
    /// Every block claims its tile number from an atomic counter, so a tile only waits for
    /// tiles whose blocks started before its own, whatever order blocks start in.
    Claimed,
    /// A launch whose tiles all fit the device at once runs as a cooperative grid, block b on
    /// tile b (the driver guarantees every block resident together, and no claim delays a
    /// block's copy); larger launches claim.
    OneWave,
    /// As [`TileOrder::OneWave`] for one wave; larger launches number tiles by block index
    /// too, in an ordinary launch. CUDA does not promise to start blocks in index order, but
    /// its hardware does, and CUB's decoupled look-back scans rely on it the same way: a block
    /// spinning on a predecessor that never started would hang the launch.
    #[default]
    BlockIndex,
}

/// How one launch of a staged scan numbers its tiles, from its [`TileOrder`] and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Numbering {
    /// Each block claims its tile number from the counter.
    Claimed,
    /// Block b on tile b in a cooperative launch of at most the module's resident blocks.
    Cooperative,
    /// Block b on tile b in an ordinary launch.
    BlockIndex,
}

impl Numbering {
    /// Whether block b scans tile b (the kernels' `grid_order` argument).
    pub(crate) fn by_block(self) -> bool {
        self != Numbering::Claimed
    }
}

impl TileOrder {
    /// How a launch of `tiles` tiles, of which the device holds `resident` at once, numbers
    /// its tiles in this order.
    pub(crate) fn numbering(self, tiles: u64, resident: u32) -> Numbering {
        match self {
            TileOrder::Claimed => Numbering::Claimed,
            _ if tiles <= u64::from(resident) => Numbering::Cooperative,
            TileOrder::OneWave => Numbering::Claimed,
            TileOrder::BlockIndex => Numbering::BlockIndex,
        }
    }

    /// The order's name, as the CLI takes it: `claimed`, `one-wave` or `block-index`.
    pub fn name(self) -> &'static str {
        match self {
            TileOrder::Claimed => "claimed",
            TileOrder::OneWave => "one-wave",
            TileOrder::BlockIndex => "block-index",
        }
    }
}

impl fmt::Display for TileOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `claimed`, `one-wave` or `block-index`.
impl FromStr for TileOrder {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        [
            TileOrder::Claimed,
            TileOrder::OneWave,
            TileOrder::BlockIndex,
        ]
        .into_iter()
        .find(|o| o.name() == s.trim())
        .ok_or_else(|| {
            Error::invalid(format!(
                "tile order `{s}`: expected claimed, one-wave or block-index"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_parse_and_print() {
        for order in [
            TileOrder::Claimed,
            TileOrder::OneWave,
            TileOrder::BlockIndex,
        ] {
            assert_eq!(order.to_string().parse::<TileOrder>().unwrap(), order);
        }
        for bad in ["", "grid", "block-index:200", "Claimed"] {
            assert!(bad.parse::<TileOrder>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn launches_number_tiles_by_order_and_size() {
        use Numbering::*;
        let cases = [
            (TileOrder::Claimed, [Claimed, Claimed, Claimed]),
            (TileOrder::OneWave, [Cooperative, Cooperative, Claimed]),
            (
                TileOrder::BlockIndex,
                [Cooperative, Cooperative, BlockIndex],
            ),
        ];
        for (order, want) in cases {
            for (tiles, want) in [1u64, 264, 265].into_iter().zip(want) {
                assert_eq!(
                    order.numbering(tiles, 264),
                    want,
                    "{order} over {tiles} tiles"
                );
            }
        }
        assert!(!Claimed.by_block() && Cooperative.by_block() && BlockIndex.by_block());
    }
}
