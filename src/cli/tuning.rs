//! The tuning flags of `monoscan bench` and `monoscan run`, mapped onto [`Tuning`].

use super::CliError;
use monoscan::tuning::{
    CombineForm, FirstWave, Pace, RowPrefetch, ShapeChoice, ShareScan, TileOrder, Tuning,
};

/// Kernel tuning (every flag defaults to the library's measured default).
#[derive(clap::Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct TuningArgs {
    /// Register tiles of the single-pass scan, the reduce and reduce-then-scan:
    /// <threads>x<items>[x<lookback>].
    #[arg(long, value_name = "SHAPE", value_parser = shape)]
    pub tile: Option<ShapeChoice>,
    /// The one-launch scan of small inputs: <threads>x<items>.
    #[arg(long, value_name = "SHAPE", value_parser = shape)]
    pub one_tile: Option<ShapeChoice>,
    /// The staged single-pass scan: <threads>x<items>[x<lookback>].
    #[arg(long, value_name = "SHAPE", value_parser = shape)]
    pub staged: Option<ShapeChoice>,
    /// Stream compaction's staged tile: <threads>x<items>.
    #[arg(long, value_name = "SHAPE", value_parser = shape)]
    pub select: Option<ShapeChoice>,
    /// The staged reduce's tile: <threads>x<items> (tiles of whole 16-byte chunks).
    #[arg(long, value_name = "SHAPE", value_parser = shape)]
    pub reduce: Option<ShapeChoice>,
    /// The column scan's tile: <threads>x<rows per thread> (default: the fastest of a few,
    /// timed on an operator's first large column scan, or the policy's with --no-autotune).
    #[arg(long, value_name = "SHAPE", value_parser = shape)]
    pub column: Option<ShapeChoice>,
    /// Stage tiles with cp.async instead of tensor copies (the TMA) on sm_90 and newer.
    #[arg(long)]
    pub no_tma: bool,
    /// How far ahead the TMA kernels prefetch into L2, in KiB (0: no prefetch).
    #[arg(long, value_name = "KIB")]
    pub prefetch_kib: Option<u32>,
    /// Whether the first wave's tiles are prefetched too: `auto` (the 1-D scan's launches of
    /// several waves), `skip` or `prefetch`.
    #[arg(long, value_name = "WHEN", value_parser = first_wave)]
    pub first_wave: Option<FirstWave>,
    /// Whether batches of rows prefetch too: `auto` (those whose tiles look back; not a batch
    /// whose every tile starts a row), `always` or `never`.
    #[arg(long, value_name = "WHEN", value_parser = row_prefetch)]
    pub row_prefetch: Option<RowPrefetch>,
    /// The first waves' pace: `auto` (a share of peak DRAM bandwidth), `off`, or GB/s.
    #[arg(long, value_name = "PACE", value_parser = pace)]
    pub pace: Option<Pace>,
    /// How many first waves are paced (0 to 64).
    #[arg(long, value_name = "WAVES")]
    pub pace_waves: Option<u32>,
    /// How kernels call the combine: `inline` or `outlined` (default: by the combine's
    /// estimated cost, and for outlined combines the faster form where autotuning times both).
    #[arg(long, value_name = "FORM", value_parser = combine_form)]
    pub combine: Option<CombineForm>,
    /// Independent chains each thread of the staged scan folds and scans its run in, 1 to 8
    /// (default: by the combine's estimated cost).
    #[arg(long, value_name = "N")]
    pub chains: Option<u32>,
    /// Run the policy's staged-scan shape and column tile instead of timing candidates on an
    /// operator's first large scan (or using a stored choice).
    #[arg(long)]
    pub no_autotune: bool,
    /// Reduce every operator with the register-tile reduce, never the staged reduce.
    #[arg(long)]
    pub no_staged_reduce: bool,
    /// Reduce expensive combines tile by tile, never in the staged reduce's share form.
    #[arg(long)]
    pub no_share_reduce: bool,
    /// Whether folds of rows (`reduce_lanes`) run the tiled reduce's warp folds (`on`) or the
    /// row scan kernels without their stores (`off`); default: the library's.
    #[arg(long, value_name = "ON|OFF", value_parser = on_off)]
    pub row_folds: Option<bool>,
    /// Whether 1-D scans run in the share scan's form (each thread folds, then scans, one
    /// contiguous share): `auto` (where autotuning finds it fastest), `never` or `always`.
    #[arg(long, value_name = "WHEN", value_parser = share_scan)]
    pub share_scan: Option<ShareScan>,
    /// Stage buffers of the share scan, 1 or 2 (default: the policy's).
    #[arg(long, value_name = "N")]
    pub share_stages: Option<u32>,
    /// How the blocks of the staged 1-D, row and column scans find their tiles: `block-index` (block b
    /// on tile b; the default), `one-wave` (by block index in a cooperative grid of one wave,
    /// claimed from a counter beyond) or `claimed` (always from the counter).
    #[arg(long, value_name = "ORDER", value_parser = tile_order)]
    pub tile_order: Option<TileOrder>,
}

fn shape(s: &str) -> Result<ShapeChoice, String> {
    s.parse().map_err(|e: monoscan::Error| e.to_string())
}

fn tile_order(s: &str) -> Result<TileOrder, String> {
    s.parse().map_err(|e: monoscan::Error| e.to_string())
}

fn combine_form(s: &str) -> Result<CombineForm, String> {
    s.parse().map_err(|e: monoscan::Error| e.to_string())
}

fn first_wave(s: &str) -> Result<FirstWave, String> {
    [FirstWave::Auto, FirstWave::Skip, FirstWave::Prefetch]
        .into_iter()
        .find(|w| w.name() == s)
        .ok_or_else(|| format!("`{s}`: expected auto, skip or prefetch"))
}

fn row_prefetch(s: &str) -> Result<RowPrefetch, String> {
    [RowPrefetch::Auto, RowPrefetch::Always, RowPrefetch::Never]
        .into_iter()
        .find(|w| w.name() == s)
        .ok_or_else(|| format!("`{s}`: expected auto, always or never"))
}

fn share_scan(s: &str) -> Result<ShareScan, String> {
    [ShareScan::Auto, ShareScan::Never, ShareScan::Always]
        .into_iter()
        .find(|w| w.name() == s)
        .ok_or_else(|| format!("`{s}`: expected auto, never or always"))
}

fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}`: expected on or off")),
    }
}

fn pace(s: &str) -> Result<Pace, String> {
    match s {
        "auto" => Ok(Pace::Auto),
        "off" | "0" => Ok(Pace::Off),
        _ => s
            .parse::<u32>()
            .map(Pace::Gbps)
            .map_err(|_| format!("`{s}`: expected auto, off or a whole number of GB/s")),
    }
}

impl TuningArgs {
    /// The tuning these flags ask for, validated.
    pub fn tuning(&self) -> Result<Tuning, CliError> {
        let default = Tuning::default();
        let tuning = Tuning {
            tile: self.tile,
            one_tile: self.one_tile,
            staged: self.staged,
            select: self.select,
            reduce: self.reduce,
            column: self.column,
            tma: !self.no_tma,
            prefetch_kib: self.prefetch_kib.unwrap_or(default.prefetch_kib),
            first_wave: self.first_wave.unwrap_or(default.first_wave),
            row_prefetch: self.row_prefetch.unwrap_or(default.row_prefetch),
            pace: self.pace.unwrap_or(default.pace),
            pace_waves: self.pace_waves.unwrap_or(default.pace_waves),
            combine: self.combine,
            chains: self.chains,
            autotune: !self.no_autotune,
            staged_reduce: !self.no_staged_reduce,
            share_reduce: !self.no_share_reduce,
            row_folds: self.row_folds.unwrap_or(default.row_folds),
            share_scan: self.share_scan.unwrap_or(default.share_scan),
            share_stages: self.share_stages,
            tile_order: self.tile_order.unwrap_or(default.tile_order),
        };
        tuning
            .validate()
            .map_err(|e| CliError::Usage(e.to_string()))?;
        Ok(tuning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_map_onto_the_tuning() {
        assert_eq!(TuningArgs::default().tuning().unwrap(), Tuning::default());
        let args = TuningArgs {
            staged: Some(ShapeChoice::new(256, 32)),
            no_tma: true,
            prefetch_kib: Some(0),
            pace: Some(Pace::Off),
            ..TuningArgs::default()
        };
        let t = args.tuning().unwrap();
        assert_eq!(t.staged, Some(ShapeChoice::new(256, 32)));
        assert!(!t.tma && t.prefetch_kib == 0 && t.pace == Pace::Off);
        let bad = TuningArgs {
            pace_waves: Some(65),
            ..TuningArgs::default()
        };
        assert!(matches!(bad.tuning(), Err(CliError::Usage(_))));
        assert_eq!(pace("3000"), Ok(Pace::Gbps(3000)));
        assert_eq!(combine_form("outlined"), Ok(CombineForm::Outlined));
        assert!(combine_form("unrolled").is_err());
        assert!(pace("fast").is_err());
        assert_eq!(share_scan("always"), Ok(ShareScan::Always));
        assert!(share_scan("sometimes").is_err());
        assert_eq!(row_prefetch("never"), Ok(RowPrefetch::Never));
        assert!(row_prefetch("off").is_err());
        assert_eq!(tile_order("claimed"), Ok(TileOrder::Claimed));
        assert!(tile_order("grid").is_err());
        assert!(shape("12").is_err());
    }
}
