//! Representative operators: one per class of element size and combine cost, for
//! `monoscan bench --cases classes`, the CUB baseline (`benches/cub/cub_baseline.cu`, the same
//! operators as C++ functors) and the tests. None is a built-in: they are written as a user
//! writes an operator, with `#[monoscan::operator]` where the translator covers the combine and
//! with a CUDA snippet where it needs CUDA's math functions or keeps its hand-written form.
//!
//! | class | operator | bytes | combine | CUDA form |
//! | --- | --- | --- | --- | --- |
//! | `linear-u32` | [`LinearU32`] | 8 | x -> a*x + b mod 2^32, composed: 2 mul, 1 add; not commutative | snippet |
//! | `sum3-u32` | [`Sum3U32`] | 12 | three wrapping u32 sums | translated |
//! | `sum3-u64` | [`Sum3U64`] | 24 | three wrapping u64 sums | translated |
//! | `mat2-u64` | [`Mat2U64`] | 32 | 2x2 matrix product mod 2^64: 8 mul, 4 add; not commutative | translated |
//! | `affine3-u64` | [`Affine3U64`] | 48 | three maps x -> a*x + b mod 2^64, composed lane by lane; not commutative | translated |
//! | `sum8-u64` | [`Sum8U64`] | 64 | eight wrapping u64 sums | translated |
//! | `logsumexp-f64` | [`LogSumExp`] | 8 | `log(exp(a) + exp(b))`: `exp`, `log1p` | snippet |
//! | `welford-f64` | [`Welford`] | 24 | Chan's merge of count, mean and squared deviations: f64 divisions | snippet |
//! | `affine-mod-u64` | [`AffineModP`] | 16 | x -> a*x + b mod a prime below 2^32, composed: 64-bit products and remainders; not commutative | snippet |
//! | `hash-mod-u64` | [`PolyHash`] | 24 | polynomial hash of concatenated strings mod a prime below 2^32: 64-bit products and remainders; not commutative | translated |
//!
//! Besides these, one cheap combine at every element size from 1 to 64 bytes (`bytes-1` to
//! `bytes-64`, [`visit_sizes`], `monoscan bench --cases sizes`): lane-wise affine maps in words
//! of 1, 2 or 4 bytes, so that odd sizes keep an odd alignment.
//!
//! Each class ([`Class`]) has a name, a generator of pseudo-random inputs (deterministic for a
//! seed; finite values for the float classes, residues for the modular ones, and for the
//! products mod 2^64 factors that stay invertible, so that long products never collapse to
//! zero), and a comparison with the sequential CPU scan: exact for the integer classes, within
//! a tolerance derived from the rounding of the computation for the float ones
//! ([`LogSumExp::tolerance_for`], [`Welford::tolerance_for`]). [`check`] runs a backend's
//! inclusive scan, exclusive scan and reduction of an input against the sequential backend;
//! [`visit_all`] hands every class, with its own types, to a [`Visit`]or.
//!
//! ```
//! use monoscan::bench::classes::{self, Class, Sum3U32};
//! use monoscan::cpu::Parallel;
//! # fn main() -> monoscan::Result<()> {
//! let xs = Sum3U32.generate(100_000, 7);
//! assert_eq!(xs, Sum3U32.generate(100_000, 7)); // deterministic
//! let mismatch = classes::check(&Parallel::default(), &Sum3U32, &xs)?;
//! assert!(mismatch.is_none(), "{}", mismatch.unwrap());
//! assert_eq!(classes::NAMES.len(), classes::all().len());
//! # Ok(())
//! # }
//! ```

mod cheap;
mod float;
mod modular;
mod sizes;

pub use cheap::{
    Affine3, Affine3U64, Lin32, LinearU32, Mat2U64, Mat64, Sum3U32, Sum3U64, Sum8U64, U32x3, U64x3,
    U64x8,
};
pub use float::{LogSumExp, Moments, MomentsTolerance, Welford};
pub use modular::{AffineModP, Hashed, ModAffine, PolyHash};
pub use sizes::{
    visit_sizes, Bytes1, Bytes12, Bytes16, Bytes2, Bytes20, Bytes24, Bytes3, Bytes32, Bytes4,
    Bytes40, Bytes48, Bytes5, Bytes6, Bytes64, Bytes7, Bytes8, Lanes1, Lanes12, Lanes16, Lanes2,
    Lanes20, Lanes24, Lanes3, Lanes32, Lanes4, Lanes40, Lanes48, Lanes5, Lanes6, Lanes64, Lanes7,
    Lanes8, SIZE_NAMES,
};

use crate::backend::Backend;
use crate::cpu::seq;
use crate::error::Result;
use crate::monoid::{CudaOp, Monoid};
use std::fmt;

/// A representative operator of one class: its name, its inputs, and how its results are
/// compared with the sequential CPU scan.
pub trait Class: Monoid {
    /// The class's name (`sum3-u32`): `monoscan bench --cases <name>` and the CUB baseline's.
    const NAME: &'static str;
    /// What one combine computes, in words.
    const COMBINE: &'static str;
    /// Whether `combine(a, b) == combine(b, a)` for all elements (up to rounding, for the float
    /// classes). The classes that are not show that an algorithm keeps the order.
    const COMMUTATIVE: bool;
    /// How far a result may lie from the sequential scan's: [`Exact`] for the integer classes.
    type Tolerance: fmt::Debug + Clone + Send + Sync;
    /// `n` pseudo-random elements, the same for the same `seed`.
    fn generate(&self, n: usize, seed: u64) -> Vec<Self::Elem>;
    /// The tolerance for results computed from `xs` (prefixes or the total, in any grouping,
    /// from the identity), derived from the rounding of each combine.
    fn tolerance(&self, xs: &[Self::Elem]) -> Self::Tolerance;
    /// A tolerance that holds for results over any `n` elements that [`Class::generate`]
    /// gives (for the monoid laws, whose elements are drawn one at a time).
    fn generated_tolerance(&self, n: usize) -> Self::Tolerance;
    /// Whether `got` agrees with the sequential `want` within `tol`.
    fn agrees(&self, tol: &Self::Tolerance, got: &Self::Elem, want: &Self::Elem) -> bool;
}

/// The tolerance of the exact classes: results equal the sequential scan's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Exact;

/// A result that disagrees with the sequential CPU scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The class.
    pub class: &'static str,
    /// `inclusive scan`, `exclusive scan`, `exclusive scan total` or `reduce`.
    pub what: &'static str,
    /// Elements of the input.
    pub n: usize,
    /// The first element that disagrees (0 for totals).
    pub index: usize,
    /// What the backend computed (`Debug`).
    pub got: String,
    /// What the sequential scan computed (`Debug`).
    pub want: String,
    /// The tolerance (`Debug`).
    pub tolerance: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the {} of {} elements differs from the sequential scan at element {}: {} instead of {} (tolerance {})",
            self.class, self.what, self.n, self.index, self.got, self.want, self.tolerance
        )
    }
}

/// Runs `backend`'s inclusive scan, exclusive scan (from the identity, with its total) and
/// reduction of `xs` under `class`, and compares each with the sequential CPU backend's
/// ([`crate::cpu::seq`]) under the class's tolerance: the first disagreement, or `None`.
pub fn check<C: Class, B: Backend>(
    backend: &B,
    class: &C,
    xs: &[C::Elem],
) -> Result<Option<Mismatch>> {
    let tol = class.tolerance(xs);
    let first = |what: &'static str, got: &[C::Elem], want: &[C::Elem]| -> Option<Mismatch> {
        if got.len() != want.len() {
            return Some(Mismatch {
                class: C::NAME,
                what,
                n: xs.len(),
                index: got.len().min(want.len()),
                got: format!("{} elements", got.len()),
                want: format!("{} elements", want.len()),
                tolerance: format!("{tol:?}"),
            });
        }
        let i = got
            .iter()
            .zip(want)
            .position(|(g, w)| !class.agrees(&tol, g, w))?;
        Some(Mismatch {
            class: C::NAME,
            what,
            n: xs.len(),
            index: i,
            got: format!("{:?}", got[i]),
            want: format!("{:?}", want[i]),
            tolerance: format!("{tol:?}"),
        })
    };
    let inclusive = backend.inclusive_scan(class, xs)?;
    if let Some(m) = first(
        "inclusive scan",
        &inclusive,
        &seq::inclusive_scan(class, xs),
    ) {
        return Ok(Some(m));
    }
    drop(inclusive);
    let (exclusive, total) = backend.exclusive_scan_total(class, xs, class.identity())?;
    let (want, want_total) = seq::exclusive_scan_total(class, xs, class.identity());
    if let Some(m) = first("exclusive scan", &exclusive, &want) {
        return Ok(Some(m));
    }
    if let Some(m) = first("exclusive scan total", &[total], &[want_total]) {
        return Ok(Some(m));
    }
    let reduced = backend.reduce(class, xs)?;
    Ok(first("reduce", &[reduced], &[seq::reduce(class, xs)]))
}

/// Something done with every class in turn, with its own types ([`visit_all`]).
pub trait Visit {
    /// What a visit can fail with.
    type Error;
    /// Visits one class.
    fn visit<C: Class>(&mut self, class: &C) -> std::result::Result<(), Self::Error>;
}

/// Visits every class, cheapest combines first, in the order of [`NAMES`].
pub fn visit_all<V: Visit>(v: &mut V) -> std::result::Result<(), V::Error> {
    v.visit(&LinearU32)?;
    v.visit(&Sum3U32)?;
    v.visit(&Sum3U64)?;
    v.visit(&Mat2U64)?;
    v.visit(&Affine3U64)?;
    v.visit(&Sum8U64)?;
    v.visit(&LogSumExp)?;
    v.visit(&Welford)?;
    v.visit(&AffineModP::default())?;
    v.visit(&PolyHash::default())
}

/// Every class's name, in the order [`visit_all`] visits them.
pub const NAMES: [&str; 10] = [
    LinearU32::NAME,
    Sum3U32::NAME,
    Sum3U64::NAME,
    Mat2U64::NAME,
    Affine3U64::NAME,
    Sum8U64::NAME,
    LogSumExp::NAME,
    Welford::NAME,
    AffineModP::NAME,
    PolyHash::NAME,
];

/// One class, described.
#[derive(Debug, Clone)]
pub struct Described {
    /// [`Class::NAME`].
    pub name: &'static str,
    /// `size_of` of the element.
    pub elem_bytes: usize,
    /// [`Class::COMBINE`].
    pub combine: &'static str,
    /// [`Class::COMMUTATIVE`].
    pub commutative: bool,
    /// The operator's CUDA form.
    pub cuda: CudaOp,
}

/// Every class, described, in the order of [`NAMES`].
pub fn all() -> Vec<Described> {
    struct Describe(Vec<Described>);
    impl Visit for Describe {
        type Error = std::convert::Infallible;
        fn visit<C: Class>(&mut self, class: &C) -> std::result::Result<(), Self::Error> {
            self.0.push(Described {
                name: C::NAME,
                elem_bytes: std::mem::size_of::<C::Elem>(),
                combine: C::COMBINE,
                commutative: C::COMMUTATIVE,
                cuda: class.cuda(),
            });
            Ok(())
        }
    }
    let mut d = Describe(Vec::new());
    match visit_all(&mut d) {
        Ok(()) => d.0,
        Err(never) => match never {},
    }
}

/// The generator of every class's inputs: SplitMix64 (Steele, Lea and Flood), deterministic
/// for a seed.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[0, n)` (`n > 0`; the bias of a 64-bit remainder is below 2^-32 here).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in `[-1, 1)`, on a grid of 2^-52.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// `n` elements from `f` applied to one generator seeded with `seed`.
pub(crate) fn generate<T>(n: usize, seed: u64, mut f: impl FnMut(&mut Rng) -> T) -> Vec<T> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| f(&mut rng)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_in_visit_order() {
        let all = all();
        let names: Vec<&str> = all.iter().map(|d| d.name).collect();
        assert_eq!(names, NAMES);
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), NAMES.len());
        let sizes: Vec<usize> = all.iter().map(|d| d.elem_bytes).collect();
        assert_eq!(sizes, [8, 12, 24, 32, 48, 64, 8, 24, 16, 24]);
        for d in &all {
            assert_eq!(d.cuda.elem_size, d.elem_bytes, "{}", d.name);
            assert!(d.cuda.invalid.is_none(), "{}: {:?}", d.name, d.cuda.invalid);
        }
    }

    #[test]
    fn the_generator_is_deterministic_and_spread() {
        let a = generate(1000, 3, |r| r.next_u64());
        assert_eq!(a, generate(1000, 3, |r| r.next_u64()));
        assert_ne!(a, generate(1000, 4, |r| r.next_u64()));
        let units = generate(10_000, 1, |r| r.unit());
        assert!(units.iter().all(|u| (-1.0..1.0).contains(u)));
        let mean = units.iter().sum::<f64>() / units.len() as f64;
        assert!(mean.abs() < 0.05, "{mean}");
        assert!(generate(1000, 9, |r| r.below(7)).iter().all(|&x| x < 7));
    }
}
