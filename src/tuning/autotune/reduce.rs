//! Autotuning the staged reduce: which tiles a first large reduction of an operator is timed
//! in, and how the winner is written down.
//!
//! The staged reduce's tile ([`policy::reduce_shape`]: about 32 KiB, runs of about 128 bytes)
//! suits some element sizes and not others, by no rule the policy knows: on an H200 at 1 GiB
//! (fraction of a read pass, one run each) 7-byte elements reduced at 0.82 in 128 x 20 against
//! 0.74 in the policy's 224 x 20 and 0.61 in 224 x 12, 64-byte ones at 0.92 in 512 x 2 against
//! 0.89 in the policy's 256 x 2 and 0.88 in 128 x 2, while 1-, 3- and 5-byte elements ran
//! fastest in the policy's tiles. So the first reduction of at least [`super::MIN_TUNING_BYTES`]
//! of an operator that the staged reduce folds tile by tile times the policy's tile and tiles
//! of other thread counts with the same runs, and keeps the fastest beside the kernel cache
//! ([`crate::cache::TunedStore`]). Reductions that run the share form (expensive combines,
//! [`policy::reduce_shares`]) are not tuned: the form's resident threads are bound by its step
//! buffers, whatever the tile. Every candidate computes the same reduction (exactly, for exact
//! operators): each block folds its tiles in order and the blocks' partials are folded in
//! order.

use super::text;
use crate::error::Result;
use crate::tuning::cost::CombineCost;
use crate::tuning::policy;
use crate::tuning::{DeviceLimits, ShapeChoice, TileShape, Tuning};

/// Threads of the tiles of fewer threads among the candidates, besides half the policy's.
pub const SMALL_REDUCE_THREADS: u32 = 128;

/// The staged-reduce tiles timed for `size`-byte elements with a combine of `cost` on a device
/// with `limits` under `tuning`: the policy's tile for large inputs first, then the same runs
/// in half its threads (whole warps), in [`SMALL_REDUCE_THREADS`] and in twice its threads,
/// each one the policy accepts (its stages fit shared memory), none twice. Empty where large
/// reductions do not run the staged reduce tile by tile: before sm_80, for elements it does not
/// stage, for the sizes the register-tile reduce takes ([`policy::reduce_staged`]), and where
/// the share form takes them.
///
/// ```
/// use monoscan::tuning::autotune::reduce;
/// use monoscan::tuning::{cost::CombineCost, DeviceLimits, Tuning};
/// let (h100, t) = (DeviceLimits::for_arch(90), Tuning::default());
/// let cheap = CombineCost { weight: 1, ..CombineCost::default() };
/// let shapes = reduce::candidates(7, &cheap, &h100, &t);
/// let threads: Vec<u32> = shapes.iter().map(|s| s.block).collect();
/// assert_eq!(threads, [224, 96, 128, 448]);
/// assert!(shapes.iter().all(|s| s.items == 20 && s.staged && s.linear));
/// // 4-byte cheap combines reduce in the register tile: nothing to time.
/// assert!(reduce::candidates(4, &cheap, &h100, &t).is_empty());
/// ```
pub fn candidates(
    size: usize,
    cost: &CombineCost,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Vec<TileShape> {
    let Ok(base) = policy::reduce_shape(size, cost, u64::MAX, limits, tuning) else {
        return Vec::new();
    };
    let tile_by_tile = !(policy::reduce_shares(cost) && tuning.share_reduce);
    if !base.staged || !policy::reduce_staged(size, cost) || !tile_by_tile {
        return Vec::new();
    }
    let mut out = vec![base];
    let half = (base.block / 2).max(32) / 32 * 32;
    for threads in [half, SMALL_REDUCE_THREADS, base.block.saturating_mul(2)] {
        if let Some(s) = with_choice(size, cost, limits, tuning, choice_of(&base, threads)) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// `base`'s runs in tiles of `threads` threads.
fn choice_of(base: &TileShape, threads: u32) -> ShapeChoice {
    ShapeChoice::new(threads, base.items)
}

/// The staged reduce's tile for large inputs under `tuning` with `choice` as its tile, where
/// the policy accepts it and stages it.
pub fn with_choice(
    size: usize,
    cost: &CombineCost,
    limits: &DeviceLimits,
    tuning: &Tuning,
    choice: ShapeChoice,
) -> Option<TileShape> {
    let t = Tuning {
        reduce: Some(choice),
        ..tuning.clone()
    };
    t.validate().ok()?;
    policy::reduce_shape(size, cost, u64::MAX, limits, &t)
        .ok()
        .filter(|s| s.staged)
}

/// What a stored reduce-tuning record holds: the winning tile and what each candidate
/// measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceRecord {
    /// The fastest candidate, as a choice of threads x elements per thread
    /// ([`Tuning::reduce`]).
    pub choice: ShapeChoice,
    /// Every candidate's name ([`TileShape::name`]) and median time in milliseconds.
    pub timings: Vec<(String, f64)>,
    /// Elements of the input the candidates were timed on.
    pub n: u64,
}

/// The first line of a reduce record file.
const MAGIC: &str = "monoscan-tuned-reduce 1";

impl ReduceRecord {
    /// The record as text: a header line, the choice, then one line per candidate.
    pub fn to_text(&self) -> String {
        let mut text = text::head(MAGIC, self.n);
        text.push_str(&format!(
            "reduce\nshape {} {}\n",
            self.choice.threads, self.choice.items
        ));
        text.push_str(&text::tail(&self.timings));
        text
    }

    /// Reads a record written by [`ReduceRecord::to_text`] for reductions of `size`-byte
    /// elements with a combine of `cost` on a device with `limits`; `Err` for another format
    /// or crate version, or a tile the staged reduce cannot take there (the record is then
    /// ignored and the operator tuned again).
    pub fn parse(
        text: &str,
        size: usize,
        cost: &CombineCost,
        limits: &DeviceLimits,
    ) -> Result<ReduceRecord> {
        const WHAT: &str = "reduce tuning record";
        let bad = |why: &str| text::bad(WHAT, why);
        let (n, mut lines) = text::read_head(text, MAGIC, WHAT)?;
        if lines.next() != Some("reduce") {
            return Err(bad("not a reduce record"));
        }
        let [threads, items] = text::shape_fields(lines.next())[..] else {
            return Err(bad("no shape"));
        };
        let choice = ShapeChoice::new(threads, items);
        if with_choice(size, cost, limits, &Tuning::default(), choice).is_none() {
            return Err(bad("a tile the staged reduce cannot take here"));
        }
        Ok(ReduceRecord {
            choice,
            timings: text::timings(lines),
            n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuning::cost::samples::{cheap, dear};

    #[test]
    fn candidates_vary_the_threads_of_the_policys_runs() {
        let h100 = DeviceLimits::for_arch(90);
        let t = Tuning::default();
        for size in [1, 2, 3, 5, 7, 8, 12, 16, 24, 32, 48, 64] {
            let shapes = candidates(size, &cheap(), &h100, &t);
            let base = policy::reduce_shape(size, &cheap(), u64::MAX, &h100, &t).unwrap();
            assert_eq!(shapes.first(), Some(&base), "{size}");
            assert!(shapes.len() >= 3, "{size}: {shapes:?}");
            for s in &shapes {
                assert!(s.staged && s.items == base.items, "{size}: {s:?}");
                assert!(s.reduce_smem_bytes(size) <= h100.shared_per_block_optin as usize);
                assert_eq!(shapes.iter().filter(|o| *o == s).count(), 1, "{size}");
            }
        }
        // 64-byte elements: 256 threads of two, then 128, and 512 (three stages of 64 KiB).
        let threads: Vec<u32> = candidates(64, &cheap(), &h100, &t)
            .iter()
            .map(|s| s.block)
            .collect();
        assert_eq!(threads, [256, 128, 512]);
        // Expensive combines reduce large inputs in the share form: not tuned, unless the
        // share form is off.
        assert!(candidates(24, &dear(), &h100, &t).is_empty());
        let tiles = Tuning {
            share_reduce: false,
            ..Tuning::default()
        };
        assert!(!candidates(24, &dear(), &h100, &tiles).is_empty());
        // No staged reduce before sm_80.
        assert!(candidates(8, &cheap(), &DeviceLimits::for_arch(75), &t).is_empty());
    }

    #[test]
    fn records_round_trip_and_refuse_tiles_the_device_cannot_take() {
        let h100 = DeviceLimits::for_arch(90);
        let record = ReduceRecord {
            choice: ShapeChoice::new(128, 20),
            timings: vec![("tma-linear-staged-b128x20x1-packed128".into(), 0.25)],
            n: 1 << 27,
        };
        let text = record.to_text();
        assert!(text.contains("\nreduce\nshape 128 20\n"), "{text}");
        assert_eq!(
            ReduceRecord::parse(&text, 7, &cheap(), &h100).unwrap(),
            record
        );
        // Stages of 1024 x 64 elements of 8 bytes do not fit a block's shared memory.
        let huge = text.replace("shape 128 20", "shape 1024 64");
        assert!(ReduceRecord::parse(&huge, 8, &cheap(), &h100).is_err());
        assert!(ReduceRecord::parse("monoscan-tuned 1\n", 7, &cheap(), &h100).is_err());
        let scan = text.replace("\nreduce\n", "\n");
        assert!(ReduceRecord::parse(&scan, 7, &cheap(), &h100).is_err());
    }
}
