//! Autotuning: which staged-scan shapes an operator is timed in on first use, and how the
//! winner is written down.
//!
//! Every operator is timed once per device in a handful of candidate shapes ([`candidates`]),
//! and the fastest is kept beside the kernel cache ([`crate::cache::TunedStore`]), so that
//! later calls and later processes run it. The shape policy's defaults lead the candidates;
//! they were measured on one device (an H100) for cheap combines of 1, 2, 4, 8 and 16 bytes,
//! and another device can prefer another layout for the same operator. The candidates differ
//! only in speed: every shape computes the same scan (exactly, for exact operators).
//! [`crate::Gpu`] runs the timing ([`crate::tuning::Tuning::autotune`] turns it off); this
//! module decides what is timed and keeps the record's format. Column scans ([`columns`]) and
//! the staged reduce ([`reduce`]) are tuned the same way, with records of their own.

pub mod columns;
pub mod reduce;
mod text;

use super::cost::CombineCost;
use super::policy::{self, INLINE_MAX_WEIGHT};
use super::{CombineForm, DeviceLimits, Purpose, ShapeChoice, TileShape, Tuning};
use crate::error::Result;

/// Whether an operator is autotuned under `tuning`: autotuning is on and the tuning fixes
/// neither the staged shape nor the chains.
pub fn applies(tuning: &Tuning) -> bool {
    tuning.autotune && tuning.staged.is_none() && tuning.chains.is_none()
}

/// The staged-scan shapes timed for `size`-byte elements with a combine of `cost` on a device
/// with `limits`: the policy's shape first ([`policy::staged_scan_shape`]). Where that shape
/// is the swizzled layout of a cheap combine of 1 to 16 bytes (the sizes the policy was
/// measured for), the rest are the linear layout's runs of one 4-byte word less than a
/// 128-byte row ([`short_row_items`]) in tiles of [`linear_threads`](policy::linear_threads),
/// 256 and 128 threads. Otherwise: where the policy takes
/// long runs, the shape of runs of about 128 bytes next, then variants of it: fewer threads
/// per tile (more, smaller tiles: a shorter life per tile), runs one and two access groups
/// longer (where the linear layout reads groups of several elements), the residency bound
/// lifted or imposed (registers against resident blocks; two blocks per SM as a middle
/// ground), the other layout where both apply (32-byte and larger power-of-two sizes), and,
/// for expensive combines, 1, 2 and 4 chains and runs of about 256 bytes in tiles of
/// [`EXPENSIVE_THREADS`] ([`expensive_items`]) and in the most threads whose tiles fit
/// [`PACKED_BLOCKS`] to an SM ([`packed_runs`]). At most [`MAX_CANDIDATES`], each one the policy accepts, none
/// twice.
pub fn candidates(
    size: usize,
    cost: &CombineCost,
    limits: &DeviceLimits,
    tuning: &Tuning,
) -> Vec<TileShape> {
    let mut out: Vec<TileShape> = Vec::new();
    let mut push = |s: Option<TileShape>| {
        if let Some(s) = s.filter(|s| s.staged) {
            if !out.contains(&s) && out.len() < MAX_CANDIDATES {
                out.push(s);
            }
        }
    };
    let with = |choice: Option<ShapeChoice>, chains: Option<u32>| -> Option<TileShape> {
        let t = Tuning {
            staged: choice,
            chains,
            ..tuning.clone()
        };
        let mut s = policy::staged_scan_shape(size, cost, limits, &t).ok()?;
        s.chains = policy::chains(cost, &t, &s, size);
        Some(s)
    };
    let Some(base) = with(None, None) else {
        return out;
    };
    push(Some(base));
    let expensive = cost.weight > INLINE_MAX_WEIGHT;
    if !expensive && !base.linear && size <= 16 {
        // The policy's swizzled tiles were measured on an H100; on an H200 the linear layout's
        // runs of 124 bytes scanned 1 GiB faster (fraction of copy: 1-byte elements 0.80 in
        // 128x124 against 0.75, 2-byte 0.92 in 256x62 against 0.90, 4-byte 0.93 in 256x31
        // and 352x31 against 0.91, 8-byte 0.93 in 352x15 against 0.91).
        let items = short_row_items(size);
        let widest = policy::linear_threads(items as usize * size, base.tma);
        for threads in [widest, 256, 128] {
            push(with(Some(ShapeChoice::new(threads, items)), None));
        }
        return out;
    }
    // Where the policy takes long runs, the runs of about 128 bytes it takes otherwise.
    if let Ok(mut short) = policy::tile_shape(size, limits, tuning, Purpose::Staged) {
        short.chains = policy::chains(cost, tuning, &short, size);
        push(Some(short));
    }
    if expensive {
        for chains in [1, 4] {
            push(with(None, Some(chains)));
        }
        // Runs of about 256 bytes (at least 9 elements) in tiles of 192 threads: a tile's
        // block scan and look-back are paid once per two to three times the elements of
        // the policy's runs. On an H100 at 2^24 elements (fraction of copy, one run):
        // Welford 0.84 in 192x11 against 0.80 in 128x11 and 0.57 in the policy's 352x5,
        // hashes mod p 0.93 against 0.91, the 2x2 matrix product 0.78 in 192x8 against
        // 0.74 in 128x8, 48-byte affine maps 0.94 in runs of 9 against 0.83 in runs of 5.
        push(with(
            Some(ShapeChoice::new(EXPENSIVE_THREADS, expensive_items(size))),
            None,
        ));
        // The same runs (and, where their count is even, one element shorter: the linear
        // layout's odd runs) in the most threads whose tiles still fit PACKED_BLOCKS to an
        // SM: 192 threads leave 48-byte runs of 9 two tiles an SM, 166 KB of 228.
        for items in packed_runs(size) {
            let packed = (1..=MAX_PACKED_THREADS / 32).rev().find_map(|warps| {
                let s = with(Some(ShapeChoice::new(warps * 32, items)), None)?;
                let blocks = limits.blocks_per_sm(s.block, s.staged_smem_bytes(size));
                (blocks >= PACKED_BLOCKS).then_some(s)
            });
            push(packed);
        }
    }
    // Half the threads per tile (whole warps).
    let half = (base.block / 2).max(32) / 32 * 32;
    push(with(Some(ShapeChoice::new(half, base.items)), None));
    // Runs read in groups of several elements (odd sizes and sizes of 2 mod 4 in the linear
    // layout): runs one group longer, then two groups longer in as many threads (a tile a
    // group per thread larger). The policy's run length puts the threads' runs an odd number
    // of words apart, yet others can be faster, and by shapes no rule here predicts: 7-byte
    // elements on an H100 at 1 GiB ran at 0.66–0.68 of copy in the policy's 320x20, 0.885 in
    // 256x24 and 0.926–0.929 in 256x28, but 0.903 in 224x28 and 0.71 in 224x24 (two runs
    // each, one machine). Why has not been traced.
    if base.linear {
        let group = TileShape::linear_group(size, base.items) as u32;
        if group > 1 {
            let items = base.items + group;
            let threads = policy::linear_threads(items as usize * size, base.tma);
            push(with(Some(ShapeChoice::new(threads, items)), None));
            push(with(Some(ShapeChoice::new(threads, items + group)), None));
        }
    }
    // The residency bound: imposed where the policy leaves registers free, lifted where it
    // imposes one.
    if base.tma {
        let smem = base.staged_smem_bytes(size);
        let full = limits.blocks_per_sm(base.block, smem);
        let other = if base.min_blocks >= full { 1 } else { full };
        push(Some(TileShape {
            min_blocks: other,
            ..base
        }));
        // Between the two: two blocks per SM, which leaves a thread of a large element
        // (64 bytes and more: about 96 registers unbounded, one 352-thread block per SM)
        // nearly all it uses while doubling the tiles in flight; then one block fewer than
        // shared memory allows.
        if full > 2 && base.min_blocks < 2 {
            push(Some(TileShape {
                min_blocks: 2,
                ..base
            }));
        }
        if full > 2 && base.min_blocks < full {
            push(Some(TileShape {
                min_blocks: full - 1,
                ..base
            }));
        }
    }
    // Power-of-two sizes of 32 bytes and more: the linear layout too (two 128-byte runs'
    // worth of elements per thread, one bulk copy per tile).
    if !base.linear && size >= 32 {
        let items = (256 / size).max(1) as u32;
        let threads = ((44 * 1024 / (items as usize * size)) / 32 * 32).clamp(32, 1024) as u32;
        if let Some(mut s) = with(Some(ShapeChoice::new(threads, items)), None) {
            s.linear = true;
            s.tma = base.tma && s.staged;
            s.min_blocks = u32::from(s.tma);
            push(Some(s));
        }
    }
    out
}

/// Elements of `size` bytes (1 to 16, a power of two) in a run of the linear-layout candidates
/// for cheap combines: one 4-byte word less than a 128-byte row, rounded down to whole
/// elements (124 bytes of 1-, 2- and 4-byte elements, 120 of 8-byte and 112 of 16-byte ones).
/// Neighbouring threads' runs then start an odd number of the element's access units apart,
/// in distinct shared-memory banks, and never a multiple of 16 bytes apart, so the layout is
/// the linear one.
///
/// ```
/// use monoscan::tuning::autotune::short_row_items;
/// assert_eq!([1, 2, 4, 8, 16].map(short_row_items), [124, 62, 31, 15, 7]);
/// ```
pub fn short_row_items(size: usize) -> u32 {
    (124 / size.clamp(1, 124)).max(1) as u32
}

/// Candidates timed at most.
pub const MAX_CANDIDATES: usize = 6;

/// Threads per tile of the candidate with long runs for expensive combines.
pub const EXPENSIVE_THREADS: u32 = 192;

/// Resident tiles per SM of the packed candidates for expensive combines: the most threads
/// (up to [`MAX_PACKED_THREADS`]) whose tiles fit this many to an SM. On an H200 at 1 GiB,
/// tiles of about 54 KB four to an SM scanned fastest (fraction of copy): 48-byte affine maps
/// 0.855 in 128x9 against 0.798 in 192x9 (two per SM) and 0.701 in 64x9 (eight), the affine
/// maps mod p 0.872 in 224x15 against 0.852 in 128x17 (six), Welford 0.711 in 192x11 against
/// 0.680 in 128x11 (six); see the algorithms guide.
pub const PACKED_BLOCKS: u32 = 4;

/// Threads per tile of the packed candidates, at most.
pub const MAX_PACKED_THREADS: u32 = 256;

/// The run lengths of the packed candidates for expensive combines of `size`-byte elements:
/// [`expensive_items`], and where that count is even (power-of-two sizes below 32 bytes, which
/// it leaves to the swizzled layout), one element fewer, whose odd runs the linear layout
/// takes.
///
/// ```
/// use monoscan::tuning::autotune::packed_runs;
/// assert_eq!(packed_runs(16), [16, 15]);
/// assert_eq!(packed_runs(48), [9]);
/// assert_eq!(packed_runs(24), [11]);
/// ```
pub fn packed_runs(size: usize) -> Vec<u32> {
    let items = expensive_items(size);
    if items % 2 == 0 {
        vec![items, items - 1]
    } else {
        vec![items]
    }
}

/// Elements in a run of the long-run candidate for expensive combines of `size`-byte
/// elements: about 256 bytes, as a power-of-two count for power-of-two sizes below 32 bytes (a
/// power-of-two number of 16-byte chunks, as the swizzled layout takes); for 32 bytes and
/// more, one element more than 256 bytes hold, an odd count in the linear layout, whose runs
/// then start an odd number of 16-byte units apart (the 2x2 matrix product of 32-byte
/// elements on an H100 at 2^24 elements, fraction of copy: 0.78 in 192x8, the swizzled
/// layout, against 0.94 in 128x9 and 128x17, 0.97 in 256x9); for other sizes at least 9
/// elements, in a whole number of the linear layout's groups ([`TileShape::linear_group`]),
/// odd where the group is one element.
///
/// ```
/// use monoscan::tuning::autotune::expensive_items;
/// assert_eq!([8, 16, 24, 32, 48, 64, 7, 6].map(expensive_items), [32, 16, 11, 9, 9, 5, 36, 42]);
/// ```
pub fn expensive_items(size: usize) -> u32 {
    const BYTES: usize = 256;
    const MIN_ITEMS: u32 = 9;
    let size = size.max(1);
    if size.is_power_of_two() {
        let items = (BYTES / size).max(1) as u32;
        return if size >= 32 { items + 1 } else { items };
    }
    let group = TileShape::linear_group(size, 4) as u32;
    let ideal = BYTES as f64 / size as f64;
    let items = (((ideal / f64::from(group)).round() as u32).max(1) * group)
        .max(MIN_ITEMS.div_ceil(group) * group);
    if group == 1 && items % 2 == 0 {
        items + 1
    } else {
        items
    }
}

/// The smallest input, in bytes, on which a first scan tunes its operator: large enough that
/// the timing is of DRAM rather than of L2 and launch latency.
pub const MIN_TUNING_BYTES: u64 = 64 << 20;

/// What a stored tuning record holds: the winning shape and what each candidate measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The fastest candidate.
    pub shape: TileShape,
    /// Every candidate's name (`TileShape::name`) and median time in milliseconds.
    pub timings: Vec<(String, f64)>,
    /// Elements of the input the candidates were timed on.
    pub n: u64,
    /// Whether the share scan ([`crate::tuning::ShareScan`]), timed beside the shapes, was
    /// faster than every one of them: 1-D scans then run it where it applies.
    pub shares: bool,
    /// How the kernels call the combine, where the autotuner timed the fastest shape in both
    /// forms (an operator whose policy outlines its combine, [`policy::combine_form`]): inlined
    /// where that ran faster, else outlined. `None`: the policy's form.
    pub combine: Option<CombineForm>,
}

/// The first line of a record file.
const MAGIC: &str = "monoscan-tuned 1";

impl Record {
    /// The record as text: a header line, the shape's fields, then one line per candidate.
    pub fn to_text(&self) -> String {
        let s = &self.shape;
        let mut text = text::head(MAGIC, self.n);
        text.push_str(&format!(
            "shape {} {} {} {} {} {} {}\nshares {}\n",
            s.block,
            s.items,
            s.lookback,
            u8::from(s.tma),
            u8::from(s.linear),
            s.chains,
            s.min_blocks,
            u8::from(self.shares)
        ));
        if let Some(form) = self.combine {
            text.push_str(&format!("combine {form}\n"));
        }
        text.push_str(&text::tail(&self.timings));
        text
    }

    /// Reads a record written by [`Record::to_text`] for elements of `size` bytes on a device
    /// with `limits`; `Err` for another format or crate version, or a shape the staged scan
    /// cannot take there (a record is then ignored and the operator tuned again).
    pub fn parse(text: &str, size: usize, limits: &DeviceLimits) -> Result<Record> {
        const WHAT: &str = "tuning record";
        let bad = |why: &str| text::bad(WHAT, why);
        let (n, mut lines) = text::read_head(text, MAGIC, WHAT)?;
        let fields = text::shape_fields(lines.next());
        let [block, items, lookback, tma, linear, chains, min_blocks] = fields[..] else {
            return Err(bad("no shape"));
        };
        // The record's shape must be one the policy accepts for this size and device.
        let t = Tuning {
            staged: Some(ShapeChoice::new(block, items).with_lookback(lookback)),
            tma: tma == 1,
            chains: Some(chains),
            ..Tuning::default()
        };
        t.validate()?;
        let mut shape = policy::tile_shape(size, limits, &t, Purpose::Staged)?;
        if !shape.staged || (tma == 1 && !shape.tma && linear == 0) {
            return Err(bad("a shape the staged scan cannot take here"));
        }
        if linear == 1 && !shape.linear {
            let unit = TileShape::unit(size);
            if (items as usize * size) % unit != 0 || shape.tile_bytes(size) % 16 != 0 {
                return Err(bad("a linear shape of partial units"));
            }
            shape.linear = true;
            shape.tma = tma == 1 && limits.cc >= 90;
        }
        if chains == 0 || shape.items % chains != 0 || min_blocks > 64 {
            return Err(bad("chains or a residency bound out of range"));
        }
        shape.chains = chains;
        shape.min_blocks = if shape.tma { min_blocks.max(1) } else { 0 };
        let rest: Vec<&str> = lines.collect();
        let shares = rest.contains(&"shares 1");
        let combine = match rest.iter().find_map(|l| l.strip_prefix("combine ")) {
            Some(form) => Some(form.parse()?),
            None => None,
        };
        let timings = text::timings(rest);
        Ok(Record {
            shape,
            timings,
            n,
            shares,
            combine,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuning::cost::samples::{cheap, dear};

    #[test]
    fn every_operator_is_tuned_unless_the_tuning_fixes_the_shape() {
        assert!(applies(&Tuning::default()));
        let off = Tuning {
            autotune: false,
            ..Tuning::default()
        };
        assert!(!applies(&off));
        let fixed = Tuning {
            staged: Some(ShapeChoice::new(128, 8)),
            ..Tuning::default()
        };
        assert!(!applies(&fixed));
        let chains = Tuning {
            chains: Some(2),
            ..Tuning::default()
        };
        assert!(!applies(&chains));
    }

    #[test]
    fn measured_sizes_also_time_the_linear_layout() {
        let h100 = DeviceLimits::for_arch(90);
        let t = Tuning::default();
        for (size, widest) in [(1, 352), (2, 352), (4, 352), (8, 352), (16, 384)] {
            let c = candidates(size, &cheap(), &h100, &t);
            let base = policy::staged_scan_shape(size, &cheap(), &h100, &t).unwrap();
            assert_eq!(c[0], base, "{size}");
            assert!(!base.linear, "{size}");
            let items = short_row_items(size);
            let linear: Vec<u32> = c[1..]
                .iter()
                .inspect(|s| assert!(s.linear && s.tma && s.items == items, "{size}: {s:?}"))
                .map(|s| s.block)
                .collect();
            assert_eq!(linear, [widest, 256, 128], "{size}: {c:?}");
        }
        // Without the TMA the same runs fill tiles of at most 32 KiB.
        let no_tma = Tuning {
            tma: false,
            ..Tuning::default()
        };
        let c = candidates(4, &cheap(), &h100, &no_tma);
        assert!(c[1..].iter().all(|s| s.linear && !s.tma), "{c:?}");
        assert_eq!(c[1].block, 256, "{c:?}");
    }

    #[test]
    fn candidates_are_distinct_staged_shapes_led_by_the_policy() {
        let h100 = DeviceLimits::for_arch(90);
        let t = Tuning::default();
        for (size, cost) in [
            (12, cheap()),
            (24, cheap()),
            (32, cheap()),
            (64, cheap()),
            (8, dear()),
            (24, dear()),
            (3, cheap()),
        ] {
            let c = candidates(size, &cost, &h100, &t);
            assert!(c.len() >= 2 && c.len() <= MAX_CANDIDATES, "{size}: {c:?}");
            let mut base = policy::staged_scan_shape(size, &cost, &h100, &t).unwrap();
            base.chains = policy::chains(&cost, &t, &base, size);
            assert_eq!(c[0], base, "{size}");
            // Long runs are also timed against runs of about 128 bytes.
            let short = policy::tile_shape(size, &h100, &t, Purpose::Staged).unwrap();
            assert!(
                c.iter()
                    .any(|s| (s.block, s.items) == (short.block, short.items)),
                "{size}: {c:?}"
            );
            for (i, s) in c.iter().enumerate() {
                assert!(s.staged && s.tile_bytes(size) % 16 == 0, "{size}: {s:?}");
                assert!(s.staged_smem_bytes(size) <= h100.shared_per_block_optin as usize);
                assert!(!c[..i].contains(s), "{size}: {s:?} twice");
            }
        }
        // Expensive combines try several chains.
        let c = candidates(8, &dear(), &h100, &t);
        let chains: Vec<u32> = c.iter().map(|s| s.chains).collect();
        assert!(
            chains.contains(&1) && chains.contains(&2) && chains.contains(&4),
            "{chains:?}"
        );
        // They also try long runs in tiles of EXPENSIVE_THREADS threads.
        for size in [8, 16, 24, 48] {
            let c = candidates(size, &dear(), &h100, &t);
            assert!(
                c.iter()
                    .any(|s| (s.block, s.items) == (EXPENSIVE_THREADS, expensive_items(size))),
                "{size}: {c:?}"
            );
        }
        // And the same runs, or odd ones, in tiles packed four to an SM: 48-byte runs of 9
        // in 128 threads, 16-byte runs of 15 (linear) in 224.
        for (size, threads, items) in [(48, 128, 9), (16, 224, 15), (24, 192, 11)] {
            let c = candidates(size, &dear(), &h100, &t);
            let Some(s) = c.iter().find(|s| (s.block, s.items) == (threads, items)) else {
                panic!("{size}: {c:?}");
            };
            let blocks = h100.blocks_per_sm(s.block, s.staged_smem_bytes(size));
            assert_eq!(blocks, PACKED_BLOCKS, "{size}: {s:?}");
            assert!(s.linear, "{size}: {s:?}");
        }
        // 7-byte elements, read four at a time, also try runs of one and two groups more, the
        // longer ones in as many threads (on an H100: 320x20, then 256x24 and 256x28).
        let c = candidates(7, &cheap(), &h100, &t);
        let longer = |k: u32| c.iter().find(|s| s.linear && s.items == c[0].items + 4 * k);
        let (Some(one), Some(two)) = (longer(1), longer(2)) else {
            panic!("{c:?}");
        };
        assert_eq!(one.block, two.block, "{c:?}");
        assert_eq!(
            [
                (c[0].block, c[0].items),
                (one.block, one.items),
                (two.block, two.items)
            ],
            [(320, 20), (256, 24), (256, 28)]
        );
        // Cheap combines of 40 bytes run long runs first.
        let c = candidates(40, &cheap(), &h100, &t);
        assert_eq!((c[0].block, c[0].items), (128, 13));
        // 64-byte elements try the linear layout beside the swizzled one.
        let c = candidates(64, &cheap(), &h100, &t);
        assert!(
            c.iter().any(|s| s.linear) && c.iter().any(|s| !s.linear),
            "{c:?}"
        );
    }

    #[test]
    fn records_round_trip_and_reject_what_cannot_run() {
        let h100 = DeviceLimits::for_arch(90);
        let t = Tuning::default();
        for (size, cost) in [
            (12, cheap()),
            (7, cheap()),
            (64, cheap()),
            (8, dear()),
            (48, dear()),
        ] {
            for shape in candidates(size, &cost, &h100, &t) {
                let r = Record {
                    shape,
                    timings: vec![("a".into(), 0.25), (shape.name(), 0.125)],
                    n: 1 << 24,
                    shares: size == 8,
                    combine: match size {
                        48 => Some(CombineForm::Inline),
                        8 => Some(CombineForm::Outlined),
                        _ => None,
                    },
                };
                let back = Record::parse(&r.to_text(), size, &h100)
                    .unwrap_or_else(|e| panic!("{size}: {shape:?}: {e}"));
                assert_eq!(back, r, "{size}");
            }
        }
        let r = Record {
            shape: candidates(12, &cheap(), &h100, &t)[0],
            timings: vec![],
            n: 5,
            shares: false,
            combine: None,
        };
        let text = r.to_text();
        assert!(Record::parse(&text.replace("monoscan-tuned 1", "x"), 12, &h100).is_err());
        assert!(Record::parse(&text.replace("version", "v"), 12, &h100).is_err());
        assert!(Record::parse(&text.replace("shape 320", "shape 33"), 12, &h100).is_err());
        // A shape recorded on sm_90 is not one sm_75 can stage.
        assert!(Record::parse(&text, 12, &DeviceLimits::for_arch(75)).is_err());
        assert!(Record::parse("", 12, &h100).is_err());
        let unrolled = format!("{text}combine unrolled\n");
        assert!(Record::parse(&unrolled, 12, &h100).is_err());
    }
}
