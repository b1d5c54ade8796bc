//! Autotuning the column scan: which tiles a first large column scan of an operator is timed
//! in, and how the winner is written down.
//!
//! The policy's column tile ([`policy::column_shape`], about [`policy::COLUMN_TILE_BYTES`]) was
//! measured on an H100; an H200 scanned the same columns faster in larger tiles (524,288 x 32
//! f32 in reverse, fractions of copy: 0.83–0.86 in 64 KiB tiles against 0.75–0.77; forwards
//! 0.83–0.86 against 0.82), where an H100 had run 48 to 64 KiB tiles slower (0.85 against
//! 0.89). So the first column scan of at least [`super::MIN_TUNING_BYTES`] of an operator, for
//! each strip width and direction, times the policy's tile and larger ones, and keeps the
//! fastest beside the kernel cache ([`crate::cache::TunedStore`]). Every candidate computes
//! the same scan (exactly, for exact operators).

use super::text;
use crate::error::Result;
use crate::tuning::policy;
use crate::tuning::{ColumnShape, DeviceLimits, ShapeChoice, Tuning};

/// The tile sizes the candidates aim at, bytes: the policy's first.
pub const CANDIDATE_TILE_BYTES: [u64; 3] = [policy::COLUMN_TILE_BYTES, 48 << 10, 64 << 10];

/// Resident tiles per SM of the packed candidate: the largest tile (of the same threads) that
/// fits this many to an SM. 48 KiB tiles of 32 columns fit four to an H200's SM and 64 KiB
/// ones three, both 192 KiB in all; 54 KiB tiles fit four, 216 KiB. On two H200s (fraction of
/// copy, runs alternated on one machine each) 8 columns of f32 (2,097,152 x 8) scanned at
/// 0.858–0.859 and 0.819–0.826 in 256 x 53 against 0.812–0.813 and 0.800–0.817 in 256 x 65
/// (64 KiB, three to an SM); 32 columns ran within the runs' spread either way.
pub const PACKED_COLUMN_BLOCKS: u32 = 4;

/// The column-scan shapes timed for `columns` columns of `size`-byte elements on a device with
/// `limits`: the policy's ([`policy::column_shape`]), then tiles of the same threads aiming at
/// the larger sizes of [`CANDIDATE_TILE_BYTES`], then the largest tile between those sizes
/// that fits [`PACKED_COLUMN_BLOCKS`] to an SM, none twice (shared memory can cap the rows of
/// a larger tile at the policy's). Empty where the column scan does not take such columns.
///
/// ```
/// use monoscan::tuning::{autotune::columns, DeviceLimits};
/// let h100 = DeviceLimits::for_arch(90);
/// let shapes = columns::candidates(32, 4, &h100);
/// let rows: Vec<u32> = shapes.iter().map(|s| s.rows).collect();
/// assert_eq!(rows, [32, 48, 64, 54]);
/// assert!(columns::candidates(2000, 12, &h100).is_empty());
/// ```
pub fn candidates(columns: usize, size: usize, limits: &DeviceLimits) -> Vec<ColumnShape> {
    let mut out: Vec<ColumnShape> = Vec::new();
    let mut push = |s: Option<ColumnShape>| {
        if let Some(s) = s {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    };
    for bytes in CANDIDATE_TILE_BYTES {
        push(policy::sized_column_shape(
            columns, size, limits, None, bytes,
        ));
    }
    let smallest = CANDIDATE_TILE_BYTES[0] >> 10;
    let largest = CANDIDATE_TILE_BYTES[CANDIDATE_TILE_BYTES.len() - 1] >> 10;
    push((smallest..=largest).rev().find_map(|kib| {
        let s = policy::sized_column_shape(columns, size, limits, None, kib << 10)?;
        let blocks = limits.blocks_per_sm(s.block, s.smem_bytes(size) as usize);
        (blocks >= PACKED_COLUMN_BLOCKS).then_some(s)
    }));
    out
}

/// The choice ([`Tuning::column`]) that gives `shape` back from [`policy::column_shape`].
pub fn choice_of(shape: &ColumnShape) -> ShapeChoice {
    ShapeChoice::new(shape.block, shape.rows)
}

/// What a stored column-tuning record holds: for one strip width and direction, the winning
/// tile and what each candidate measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnRecord {
    /// Columns of a tile ([`ColumnShape::strip`]): the record applies to every array whose
    /// columns the policy cuts into strips of this width.
    pub strip: u32,
    /// Whether the record is of reverse scans.
    pub reverse: bool,
    /// The fastest candidate, as a choice of threads x rows per thread.
    pub choice: ShapeChoice,
    /// Every candidate's name ([`ColumnShape::name`]) and median time in milliseconds.
    pub timings: Vec<(String, f64)>,
    /// Elements of the array the candidates were timed on.
    pub n: u64,
}

/// The first line of a column record file.
const MAGIC: &str = "monoscan-tuned-columns 1";

impl ColumnRecord {
    /// The record as text: a header line, the strip and direction, the choice, then one line
    /// per candidate.
    pub fn to_text(&self) -> String {
        let mut text = text::head(MAGIC, self.n);
        text.push_str(&format!(
            "columns {} {}\nshape {} {}\n",
            self.strip,
            if self.reverse { "reverse" } else { "forward" },
            self.choice.threads,
            self.choice.items,
        ));
        text.push_str(&text::tail(&self.timings));
        text
    }

    /// Reads a record written by [`ColumnRecord::to_text`] for columns of `size`-byte elements
    /// on a device with `limits`; `Err` for another format or crate version, or a tile the
    /// column scan cannot take there (the record is then ignored and the columns tuned again).
    pub fn parse(text: &str, size: usize, limits: &DeviceLimits) -> Result<ColumnRecord> {
        const WHAT: &str = "column tuning record";
        let bad = |why: &str| text::bad(WHAT, why);
        let (n, mut lines) = text::read_head(text, MAGIC, WHAT)?;
        let (strip, reverse) = lines
            .next()
            .and_then(|l| l.strip_prefix("columns "))
            .and_then(|l| l.split_once(' '))
            .and_then(|(s, d)| Some((s.parse::<u32>().ok()?, d)))
            .and_then(|(s, d)| match d {
                "forward" => Some((s, false)),
                "reverse" => Some((s, true)),
                _ => None,
            })
            .ok_or_else(|| bad("no strip and direction"))?;
        let [threads, rows] = text::shape_fields(lines.next())[..] else {
            return Err(bad("no shape"));
        };
        let choice = ShapeChoice::new(threads, rows);
        Tuning {
            column: Some(choice),
            ..Tuning::default()
        }
        .validate()?;
        if strip == 0 || policy::column_shape(strip as usize, size, limits, Some(choice)).is_none()
        {
            return Err(bad("a tile the column scan cannot take here"));
        }
        let timings = text::timings(lines);
        Ok(ColumnRecord {
            strip,
            reverse,
            choice,
            timings,
            n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_start_with_the_policy_and_give_their_choices_back() {
        let h100 = DeviceLimits::for_arch(90);
        for columns in [1, 3, 8, 32, 100, 128, 1000, 1024, 4096] {
            for size in [1, 2, 4, 8, 12, 16, 24, 32, 64] {
                let shapes = candidates(columns, size, &h100);
                let policy = policy::column_shape(columns, size, &h100, None);
                assert_eq!(shapes.first().copied(), policy, "{columns} x {size}");
                for (i, s) in shapes.iter().enumerate() {
                    assert!(!shapes[..i].contains(s), "{columns} x {size}: twice");
                    assert!(s.smem_bytes(size) <= u64::from(h100.shared_per_block_optin));
                    let again = policy::column_shape(columns, size, &h100, Some(choice_of(s)));
                    assert_eq!(again.as_ref(), Some(s), "{columns} x {size}");
                    if i > 0 {
                        assert!(s.tile_bytes(size) > shapes[0].tile_bytes(size));
                    }
                }
            }
        }
        // 32 columns of f32: tiles of 32, 48 and 64 KiB, then 54 KiB, four to an SM.
        let shapes = candidates(32, 4, &h100);
        let bytes: Vec<u64> = shapes.iter().map(|s| s.tile_bytes(4) >> 10).collect();
        assert_eq!(bytes, [32, 48, 64, 54]);
        let blocks = |s: &ColumnShape| h100.blocks_per_sm(s.block, s.smem_bytes(4) as usize);
        assert_eq!(blocks(&shapes[3]), PACKED_COLUMN_BLOCKS);
        assert!(blocks(&shapes[2]) < PACKED_COLUMN_BLOCKS);
        // 8 columns: rows of one more than a multiple of four, 53 for four tiles an SM.
        let eight = candidates(8, 4, &h100);
        let rows: Vec<u32> = eight.iter().map(|s| s.rows).collect();
        assert_eq!(rows, [33, 49, 65, 53]);
        assert_eq!(blocks(&eight[3]), PACKED_COLUMN_BLOCKS);
    }

    #[test]
    fn records_round_trip_and_reject_what_cannot_run() {
        let h100 = DeviceLimits::for_arch(90);
        let record = ColumnRecord {
            strip: 32,
            reverse: true,
            choice: ShapeChoice::new(256, 64),
            timings: vec![
                ("c32-b256x8x64".into(), 0.05),
                ("c32-b256x8x32".into(), 0.06),
            ],
            n: 1 << 24,
        };
        let text = record.to_text();
        assert_eq!(ColumnRecord::parse(&text, 4, &h100).unwrap(), record);
        let forward = ColumnRecord {
            reverse: false,
            ..record.clone()
        };
        assert!(
            !ColumnRecord::parse(&forward.to_text(), 4, &h100)
                .unwrap()
                .reverse
        );
        for broken in [
            text.replace("monoscan-tuned-columns 1", "monoscan-tuned 1"),
            text.replace("version ", "version 0."),
            text.replace("columns 32 reverse", "columns 32 sideways"),
            text.replace("columns 32", "columns 0"),
            text.replace("shape 256 64", "shape 256"),
            text.replace("shape 256 64", "shape 5000 64"),
            text.replace("shape 256 64", "shape 256 0"),
        ] {
            assert!(ColumnRecord::parse(&broken, 4, &h100).is_err(), "{broken}");
        }
    }
}
