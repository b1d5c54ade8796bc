//! Which strategy a GPU scan or reduce uses.

/// The strategy of a GPU scan (and of the reduce that goes with it).
///
/// | algorithm | scan | reduce | passes over memory | deterministic |
/// | --- | --- | --- | --- | --- |
/// | [`KoggeStone`](Algorithm::KoggeStone) | Kogge-Stone block scans of `block` elements, combined hierarchically (block totals, scan of the totals, add-back) | the textbook tree reduction | several | yes |
/// | [`BrentKung`](Algorithm::BrentKung) | Brent-Kung block scans of `2 x block` elements, combined hierarchically | tree reduction | several | yes |
/// | [`Hierarchical`](Algorithm::Hierarchical) | reduce-then-scan over register tiles: tile totals, a scan of the totals, a scan of each tile from its carry | tiled | 3n | yes |
/// | [`SinglePass`](Algorithm::SinglePass) | chained scan with decoupled look-back | tiled | 2n | not for floats |
/// | [`Auto`](Algorithm::Auto) | one launch when the input fits a tile, else single-pass (hierarchical in deterministic mode, or beyond 2^32 - 1 tiles) | tiled | 2n | in deterministic mode |
///
/// "Deterministic" means bitwise-identical results across runs on the same device: the
/// single-pass scan combines tile aggregates in an order that depends on timing, which changes
/// float rounding (never the result of an exact operator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Algorithm {
    /// Pick by size (and by the deterministic setting).
    #[default]
    Auto,
    /// The textbook simple in-place scan (Kogge-Stone), hierarchical.
    KoggeStone,
    /// The textbook work-efficient scan (Brent-Kung), hierarchical.
    BrentKung,
    /// Reduce-then-scan over register tiles.
    Hierarchical,
    /// Chained scan with decoupled look-back.
    SinglePass,
}

impl Algorithm {
    /// Every explicit algorithm (not `Auto`).
    pub const EXPLICIT: [Algorithm; 4] = [
        Algorithm::KoggeStone,
        Algorithm::BrentKung,
        Algorithm::Hierarchical,
        Algorithm::SinglePass,
    ];

    /// The CLI spelling (`kogge-stone`).
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::KoggeStone => "kogge-stone",
            Algorithm::BrentKung => "brent-kung",
            Algorithm::Hierarchical => "hierarchical",
            Algorithm::SinglePass => "single-pass",
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Algorithm {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Algorithm::Auto]
            .into_iter()
            .chain(Algorithm::EXPLICIT)
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                crate::error::Error::invalid(format!(
                    "unknown algorithm `{s}` (expected auto, kogge-stone, brent-kung, hierarchical or single-pass)"
                ))
            })
    }
}
