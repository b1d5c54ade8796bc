//! The backend suites' generic check: every operation of a backend, by every path it has,
//! against the reference, on lengths at the backend's boundaries and on random inputs.
//!
//! A *subject* ([`Subject`]) is one backend with one algorithm or setup: the sequential CPU
//! reference, a parallel CPU setup, a GPU algorithm. Its *paths* are the [`Backend`]s through
//! which it is reached (the GPU's scanner on buffers and on views one element in, the `Gpu`
//! itself). A *cell* ([`run_cell`]) is one subject and one operator ([`Case`]):
//!
//! - deterministic inputs of every length in [`Subject::lengths`] (0, 1, 2, around a warp,
//!   around blocks, chunks and tiles, several hierarchy levels, one large input),
//! - random inputs through proptest (lengths from [`Subject::random_lengths`]),
//!
//! each checked with [`check_input`]: reduce, inclusive scan (out of place and in place),
//! exclusive scan from `init`, with its total, in place with its total, and the same through a
//! fused input map, compared with `monoscan::cpu::seq` (under the case's tolerance), or for the
//! sequential backend itself with the naive fold from the identity (exactly).
//!
//! [`suite!`] stamps one `#[test]` per (subject, case) as `backend::algorithm::operator`.
#![allow(dead_code)]

use super::cases::Case;
use super::gpu::gpu;
use super::strategies::{length_up_to, LARGE_LENGTH, PRIME_LENGTHS};
use super::{assert_same, Cmp};
use cudarc::driver::CudaSlice;
use monoscan::cpu::{seq, Parallel, Sequential};
use monoscan::tuning::{policy, Purpose};
use monoscan::{
    Algorithm, ApproxEq, Backend, Element, Gpu, Map, Monoid, Result, Scanner, Tolerance,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::sync::OnceLock;

/// Stamps one `#[test]` per (subject, case): `mod $backend { mod $algorithm { fn $case } }`.
/// Each subject is an expression of `Option<impl Subject>` (`None`: skipped, after saying why);
/// each case list a macro such as `core_cases` that calls `cells!` back with `name: case`
/// pairs.
///
/// ```ignore
/// suite! {
///     gpu {
///         single_pass => gpu_subject(Algorithm::SinglePass);
///     }
///     cases: [core_cases];
/// }
/// ```
#[allow(unused_macros)]
macro_rules! suite {
    ($backend:ident { $($algorithm:ident => $subject:expr;)+ } cases: $cases:tt;) => {
        mod $backend {
            #[allow(unused_imports)]
            use super::*;
            $(
                mod $algorithm {
                    #[allow(unused_imports)]
                    use super::*;
                    use $crate::common::suite::cells;
                    $crate::common::suite::suite!(@lists $subject; $cases);
                }
            )+
        }
    };
    (@lists $subject:expr; [$($cases:ident),+ $(,)?]) => {
        $( $crate::common::cases::$cases!(cells; $subject); )+
    };
}
#[allow(unused_imports)]
pub(crate) use suite;

/// One `#[test]` per case of a list, all on the subject `$subject`.
#[allow(unused_macros)]
macro_rules! cells {
    ($subject:expr; $($name:ident: $case:expr),* $(,)?) => {$(
        #[test]
        fn $name() {
            if let Some(subject) = $subject {
                $crate::common::suite::run_cell(&subject, $case);
            }
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use cells;

/// How a path treats the fused-map operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapped {
    /// Runs them and checks their results.
    Fused,
    /// Refuses them with an error naming the tiled algorithms (the GPU's textbook scans).
    Refused,
    /// Not run (checks of the plain operations only).
    Skipped,
}

/// Receives each path of a subject.
pub trait Visit {
    fn path<B: Backend>(&mut self, name: &str, backend: &B, mapped: Mapped);
}

/// One backend with one algorithm or setup.
pub trait Subject {
    /// `gpu single-pass`, `cpu parallel (min chunk 1)`.
    fn name(&self) -> String;
    /// Lengths at this subject's boundaries, for elements of `size` bytes.
    fn lengths(&self, size: usize) -> Vec<usize>;
    /// Random lengths for proptest, none above `max`.
    fn random_lengths(&self, max: usize) -> BoxedStrategy<usize>;
    /// Proptest cases per cell.
    fn cases(&self) -> u32;
    /// Whether this is the sequential reference itself: then it is checked against the naive
    /// fold from the identity, exactly, instead of against `monoscan::cpu::seq`.
    fn is_reference(&self) -> bool {
        false
    }
    /// Calls `visit.path` for each path.
    fn paths<V: Visit>(&self, visit: &mut V);
}

/// What every operation should give on one input.
pub struct Expected<T> {
    pub reduce: T,
    pub inclusive: Vec<T>,
    pub exclusive: Vec<T>,
    pub total: T,
}

/// The results of `monoscan::cpu::seq`.
pub fn reference<M: Monoid>(m: &M, xs: &[M::Elem], init: M::Elem) -> Expected<M::Elem> {
    let (exclusive, total) = seq::exclusive_scan_total(m, xs, init);
    Expected {
        reduce: seq::reduce(m, xs),
        inclusive: seq::inclusive_scan(m, xs),
        exclusive,
        total,
    }
}

/// The definitions, folded from the identity, independently of `monoscan::cpu`. For every
/// built-in operator `e ⊕ x == x` holds (under `==`), so these equal the reference.
pub fn naive<M: Monoid>(m: &M, xs: &[M::Elem], init: M::Elem) -> Expected<M::Elem> {
    let mut acc = m.identity();
    let inclusive: Vec<_> = xs
        .iter()
        .map(|x| {
            acc = m.combine(&acc, x);
            acc
        })
        .collect();
    let reduce = acc;
    let mut acc = init;
    let exclusive: Vec<_> = xs
        .iter()
        .map(|x| {
            let next = m.combine(&acc, x);
            std::mem::replace(&mut acc, next)
        })
        .collect();
    Expected {
        reduce,
        inclusive,
        exclusive,
        total: acc,
    }
}

/// The map the fused-map operations run: the identity on the operator's elements (so their
/// results are the plain operations'), through the mapped kernels on the GPU.
pub fn same<T: Element>() -> Map<T, T> {
    Map::new("same", "x", |x: &T| *x)
}

/// Checks one path against `want`: every operation, one at a time (so that only one result is
/// held at once, for inputs of 10^7 elements).
pub struct Check<'a, M: Monoid> {
    /// Names the subject in messages.
    pub who: String,
    pub m: &'a M,
    pub xs: &'a [M::Elem],
    pub init: M::Elem,
    pub want: &'a Expected<M::Elem>,
    pub cmp: Cmp,
}

impl<M: Monoid> Visit for Check<'_, M>
where
    M::Elem: ApproxEq,
{
    fn path<B: Backend>(&mut self, name: &str, b: &B, mapped: Mapped) {
        let (m, xs, init, w) = (self.m, self.xs, self.init, self.want);
        let who = format!("{} {name} n={}", self.who, xs.len());
        let same_as = |what: &str, got: &[M::Elem], want: &[M::Elem]| {
            assert_same(&format!("{who}: {what}"), got, want, self.cmp);
        };
        let ok = |what: &str, r: Result<Vec<M::Elem>>| {
            r.unwrap_or_else(|e| panic!("{who}: {what} failed: {e}"))
        };
        let one = |r: Result<M::Elem>| r.map(|x| vec![x]);
        let first = |r: Result<(Vec<M::Elem>, M::Elem)>| r.map(|(v, t)| [v, vec![t]]);

        same_as("reduce", &ok("reduce", one(b.reduce(m, xs))), &[w.reduce]);
        let got = ok("inclusive_scan", b.inclusive_scan(m, xs));
        same_as("inclusive_scan", &got, &w.inclusive);
        let mut data = xs.to_vec();
        let r = b.inclusive_scan_in_place(m, &mut data).map(|()| data);
        same_as(
            "inclusive_scan_in_place",
            &ok("inclusive_scan_in_place", r),
            &w.inclusive,
        );
        let got = ok("exclusive_scan", b.exclusive_scan(m, xs, init));
        same_as("exclusive_scan", &got, &w.exclusive);
        let [got, total] = first(b.exclusive_scan_total(m, xs, init))
            .unwrap_or_else(|e| panic!("{who}: exclusive_scan_total failed: {e}"));
        same_as("exclusive_scan_total", &got, &w.exclusive);
        same_as("exclusive_scan_total (total)", &total, &[w.total]);
        let mut data = xs.to_vec();
        let total = b
            .exclusive_scan_in_place(m, &mut data, init)
            .unwrap_or_else(|e| panic!("{who}: exclusive_scan_in_place failed: {e}"));
        same_as("exclusive_scan_in_place", &data, &w.exclusive);
        same_as("exclusive_scan_in_place (total)", &[total], &[w.total]);

        let map = same::<M::Elem>();
        match mapped {
            Mapped::Skipped => {}
            Mapped::Fused => {
                let got = ok("map_reduce", one(b.map_reduce(m, &map, xs)));
                same_as("map_reduce", &got, &[w.reduce]);
                let got = ok("map_inclusive_scan", b.map_inclusive_scan(m, &map, xs));
                same_as("map_inclusive_scan", &got, &w.inclusive);
                let [got, total] = first(b.map_exclusive_scan_total(m, &map, xs, init))
                    .unwrap_or_else(|e| panic!("{who}: map_exclusive_scan_total failed: {e}"));
                same_as("map_exclusive_scan_total", &got, &w.exclusive);
                same_as("map_exclusive_scan_total (total)", &total, &[w.total]);
            }
            Mapped::Refused => {
                let errors = [
                    b.map_reduce(m, &map, xs).err(),
                    b.map_inclusive_scan(m, &map, xs).err(),
                    b.map_exclusive_scan_total(m, &map, xs, init).err(),
                ];
                for (what, e) in [
                    "map_reduce",
                    "map_inclusive_scan",
                    "map_exclusive_scan_total",
                ]
                .into_iter()
                .zip(errors)
                {
                    let e = e.unwrap_or_else(|| panic!("{who}: {what} should be refused"));
                    assert!(
                        e.to_string().contains("tiled"),
                        "{who}: {what} refused for another reason: {e}"
                    );
                }
            }
        }
    }
}

/// Checks every path of `subject` on one input.
pub fn check_input<S: Subject, M: Monoid>(
    subject: &S,
    case: &Case<M>,
    xs: &[M::Elem],
    init: M::Elem,
) where
    M::Elem: ApproxEq,
{
    let m = &case.op;
    let (want, cmp) = if subject.is_reference() {
        // Exactly, NaN equal to NaN.
        (naive(m, xs, init), Cmp::Approx(Tolerance::EXACT))
    } else {
        (reference(m, xs, init), (case.cmp)(m, xs, init))
    };
    subject.paths(&mut Check {
        who: subject.name(),
        m,
        xs,
        init,
        want: &want,
        cmp,
    });
}

/// One cell: `case` on `subject`, on every boundary length and on random inputs.
pub fn run_cell<S: Subject, M: Monoid>(subject: &S, case: Case<M>)
where
    M::Elem: ApproxEq,
{
    let size = std::mem::size_of::<M::Elem>();
    for (k, n) in subject.lengths(size).into_iter().enumerate() {
        if case.takes(n) {
            let (xs, init) = case.input(n, 1000 + k as u64);
            check_input(subject, &case, &xs, init);
        }
    }
    let max = if case.tiled {
        case.max_len
    } else {
        super::strategies::TILE_ABOVE.min(case.max_len)
    };
    let mut runner = TestRunner::new(Config {
        cases: subject.cases(),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case.inputs(subject.random_lengths(max)), |(xs, init)| {
            check_input(subject, &case, &xs, init);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{}: {e}", subject.name()));
}

// ---------------------------------------------------------------------------------------------
// CPU subjects

/// A prime above 10^6: the large input of the CPU suites.
pub const MILLION: usize = 1_000_003;

/// Lengths at the boundaries of a blocked CPU scan that cuts `pieces` chunks of at least
/// `min_chunk` elements: sequential up to `min_chunk`, two chunks past it, chunks larger than
/// `min_chunk` past `pieces * min_chunk`; with `large`, also [`MILLION`].
pub fn chunk_lengths(min_chunk: usize, pieces: usize, large: bool) -> Vec<usize> {
    let mut ns = vec![0, 1, 2, 31, 32, 33, LARGE_LENGTH];
    ns.extend(PRIME_LENGTHS);
    for s in [min_chunk, 2 * min_chunk, pieces * min_chunk] {
        ns.extend([s.saturating_sub(1), s, s + 1]);
    }
    if large {
        ns.push(MILLION);
    }
    ns.sort_unstable();
    ns.dedup();
    ns
}

/// The free functions of `monoscan::cpu::seq`, as a [`Backend`].
pub struct SeqFunctions;

impl Backend for SeqFunctions {
    fn describe(&self) -> String {
        "monoscan::cpu::seq".to_string()
    }
    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        Ok(seq::reduce(m, xs))
    }
    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        seq::inclusive_scan_in_place(m, xs);
        Ok(())
    }
    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        Ok(seq::exclusive_scan_in_place(m, xs, init))
    }
    fn inclusive_scan<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<Vec<M::Elem>> {
        Ok(seq::inclusive_scan(m, xs))
    }
    fn exclusive_scan<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<Vec<M::Elem>> {
        Ok(seq::exclusive_scan(m, xs, init))
    }
    fn exclusive_scan_total<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        Ok(seq::exclusive_scan_total(m, xs, init))
    }
}

/// The sequential reference: the `Sequential` backend and the `cpu::seq` functions, against
/// the naive fold.
pub struct SequentialSubject;

impl Subject for SequentialSubject {
    fn name(&self) -> String {
        "cpu sequential".to_string()
    }
    fn lengths(&self, _: usize) -> Vec<usize> {
        // A fold has no blocks: the edges, around a warp, primes, and 2^16 + 1 (a million
        // elements add nothing to a fold).
        let mut ns = vec![0, 1, 2, 31, 32, 33, LARGE_LENGTH];
        ns.extend(PRIME_LENGTHS);
        ns
    }
    fn random_lengths(&self, max: usize) -> BoxedStrategy<usize> {
        length_up_to(max)
    }
    fn cases(&self) -> u32 {
        24
    }
    fn is_reference(&self) -> bool {
        true
    }
    fn paths<V: Visit>(&self, visit: &mut V) {
        visit.path("Sequential", &Sequential, Mapped::Fused);
        visit.path("cpu::seq", &SeqFunctions, Mapped::Fused);
    }
}

/// A pool wider than the machine: there `Parallel` cuts up to 4 * 13 = 52 chunks.
pub fn wide_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(13)
            .build()
            .unwrap()
    })
}

/// A backend whose every call runs inside a rayon pool.
pub struct InPool<B> {
    pub pool: &'static rayon::ThreadPool,
    pub inner: B,
}

impl<B: Backend + Sync> Backend for InPool<B> {
    fn describe(&self) -> String {
        format!(
            "{} in a pool of {} threads",
            self.inner.describe(),
            self.pool.current_num_threads()
        )
    }
    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        self.pool.install(|| self.inner.reduce(m, xs))
    }
    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        self.pool
            .install(|| self.inner.inclusive_scan_in_place(m, xs))
    }
    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        self.pool
            .install(|| self.inner.exclusive_scan_in_place(m, xs, init))
    }
}

/// `Parallel` with a minimum chunk (0: the default), in [`wide_pool`] when `wide`; with
/// `large`, also on [`MILLION`] elements (inputs that long are cut into chunks of the same
/// size whatever the minimum, so one setup per pool runs them).
pub struct ParallelSubject {
    pub min_chunk: usize,
    pub wide: bool,
    pub large: bool,
}

impl ParallelSubject {
    fn backend(&self) -> Parallel {
        if self.min_chunk == 0 {
            Parallel::default()
        } else {
            Parallel::with_min_chunk(self.min_chunk)
        }
    }

    fn threads(&self) -> usize {
        if self.wide {
            wide_pool().current_num_threads()
        } else {
            rayon::current_num_threads()
        }
    }
}

impl Subject for ParallelSubject {
    fn name(&self) -> String {
        format!(
            "cpu parallel (min chunk {}, {} threads)",
            if self.min_chunk == 0 {
                "default".to_string()
            } else {
                self.min_chunk.to_string()
            },
            self.threads()
        )
    }
    fn lengths(&self, _: usize) -> Vec<usize> {
        let min_chunk = if self.min_chunk == 0 {
            4096
        } else {
            self.min_chunk
        };
        chunk_lengths(min_chunk, 4 * self.threads(), self.large)
    }
    fn random_lengths(&self, max: usize) -> BoxedStrategy<usize> {
        length_up_to(max)
    }
    fn cases(&self) -> u32 {
        24
    }
    fn paths<V: Visit>(&self, visit: &mut V) {
        if self.wide {
            let b = InPool {
                pool: wide_pool(),
                inner: self.backend(),
            };
            visit.path("Parallel", &b, Mapped::Fused);
        } else {
            visit.path("Parallel", &self.backend(), Mapped::Fused);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// GPU subjects

/// One GPU algorithm through its [`Scanner`], as a [`Backend`]: every operation is the
/// scanner's own (`reduce`, `inclusive`, `inclusive_in_place`, `exclusive`,
/// `exclusive_with_total`, `exclusive_in_place`, and the mapped scanner's), on views that start
/// `offset` elements into their buffers (unaligned for elements under 16 bytes, so the staged
/// scans fall back to register tiles). Every buffer a call writes has guard elements before and
/// after the view, checked untouched.
pub struct OnGpu<'a> {
    pub gpu: &'a Gpu,
    pub algorithm: Algorithm,
    pub offset: usize,
}

/// A device buffer of `[guard; off] ++ data ++ [guard]`, viewed at `off..off + n`.
struct Guarded<T> {
    buf: CudaSlice<T>,
    off: usize,
    n: usize,
    guard: T,
}

impl OnGpu<'_> {
    fn scanner<'b, M: Monoid>(&'b self, m: &'b M) -> Scanner<'b, M> {
        self.gpu.scanner(m).algorithm(self.algorithm)
    }

    /// `xs` on the device, `offset` elements in (none for an empty input).
    fn input<T: Element>(&self, xs: &[T]) -> Result<(CudaSlice<T>, usize)> {
        let off = if xs.is_empty() { 0 } else { self.offset };
        let padded: Vec<T> = xs
            .iter()
            .take(1)
            .cycle()
            .take(off)
            .chain(xs)
            .copied()
            .collect();
        Ok((self.gpu.stream().clone_htod(&padded)?, off))
    }

    /// A writable buffer holding `data`, with guards.
    fn guarded<T: Element>(&self, data: &[T], guard: T) -> Result<Guarded<T>> {
        let off = self.offset;
        let padded: Vec<T> = std::iter::repeat_n(guard, off)
            .chain(data.iter().copied())
            .chain([guard])
            .collect();
        Ok(Guarded {
            buf: self.gpu.stream().clone_htod(&padded)?,
            off,
            n: data.len(),
            guard,
        })
    }

    /// The view's contents, after checking the guards. A guard compares by its printed form,
    /// so that a NaN guard (the float min/max identities are NaN) equals itself.
    fn read<T: Element>(&self, g: &Guarded<T>, what: &str) -> Result<Vec<T>> {
        let all = self.gpu.stream().clone_dtoh(&g.buf)?;
        let (before, rest) = all.split_at(g.off);
        let (view, after) = rest.split_at(g.n);
        let guard = format!("{:?}", g.guard);
        assert!(
            before
                .iter()
                .chain(after)
                .all(|x| format!("{x:?}") == guard),
            "{}: {what} wrote outside its buffer of {} elements at offset {}",
            self.describe(),
            g.n,
            g.off
        );
        Ok(view.to_vec())
    }

    /// An output buffer for `n` results: filled with the input reversed (so that an element
    /// left unwritten rarely holds its result).
    fn output<T: Element>(&self, xs: &[T], guard: T) -> Result<Guarded<T>> {
        let reversed: Vec<T> = xs.iter().rev().copied().collect();
        self.guarded(&reversed, guard)
    }
}

impl Backend for OnGpu<'_> {
    fn describe(&self) -> String {
        format!(
            "{} {} (views at offset {})",
            self.gpu.describe(),
            self.algorithm,
            self.offset
        )
    }

    fn prepare<M: Monoid>(&self, m: &M) -> Result<()> {
        self.scanner(m).prepare().map(drop)
    }

    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        let (input, off) = self.input(xs)?;
        let e = m.identity();
        let mut total = self.guarded(&[e], e)?;
        let t = total.off;
        self.scanner(m)
            .reduce(&input.slice(off..), &mut total.buf.slice_mut(t..t + 1))?;
        Ok(self.read(&total, "reduce")?[0])
    }

    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        let mut data = self.guarded(xs, m.identity())?;
        let (off, n) = (data.off, data.n);
        self.scanner(m)
            .inclusive_in_place(&mut data.buf.slice_mut(off..off + n))?;
        xs.copy_from_slice(&self.read(&data, "inclusive_in_place")?);
        Ok(())
    }

    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        let e = m.identity();
        let mut data = self.guarded(xs, e)?;
        let mut total = self.guarded(&[e], e)?;
        let (off, n, t) = (data.off, data.n, total.off);
        self.scanner(m).exclusive_in_place(
            &mut data.buf.slice_mut(off..off + n),
            init,
            &mut total.buf.slice_mut(t..t + 1),
        )?;
        xs.copy_from_slice(&self.read(&data, "exclusive_in_place")?);
        Ok(self.read(&total, "exclusive_in_place (total)")?[0])
    }

    fn inclusive_scan<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<Vec<M::Elem>> {
        let (input, i) = self.input(xs)?;
        let mut out = self.output(xs, m.identity())?;
        let (off, n) = (out.off, out.n);
        self.scanner(m)
            .inclusive(&input.slice(i..), &mut out.buf.slice_mut(off..off + n))?;
        self.read(&out, "inclusive")
    }

    fn exclusive_scan<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<Vec<M::Elem>> {
        let (input, i) = self.input(xs)?;
        let mut out = self.output(xs, m.identity())?;
        let (off, n) = (out.off, out.n);
        self.scanner(m).exclusive(
            &input.slice(i..),
            &mut out.buf.slice_mut(off..off + n),
            init,
        )?;
        self.read(&out, "exclusive")
    }

    fn exclusive_scan_total<M: Monoid>(
        &self,
        m: &M,
        xs: &[M::Elem],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let e = m.identity();
        let (input, i) = self.input(xs)?;
        let mut out = self.output(xs, e)?;
        let mut total = self.guarded(&[e], e)?;
        let (off, n, t) = (out.off, out.n, total.off);
        self.scanner(m).exclusive_with_total(
            &input.slice(i..),
            &mut out.buf.slice_mut(off..off + n),
            init,
            &mut total.buf.slice_mut(t..t + 1),
        )?;
        Ok((
            self.read(&out, "exclusive_with_total")?,
            self.read(&total, "exclusive_with_total (total)")?[0],
        ))
    }

    fn map_reduce<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<M::Elem> {
        let (input, i) = self.input(xs)?;
        let e = m.identity();
        let mut total = self.guarded(&[e], e)?;
        let t = total.off;
        self.scanner(m)
            .mapped(map)
            .reduce(&input.slice(i..), &mut total.buf.slice_mut(t..t + 1))?;
        Ok(self.read(&total, "mapped reduce")?[0])
    }

    fn map_inclusive_scan<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
    ) -> Result<Vec<M::Elem>> {
        let (input, i) = self.input(xs)?;
        let e = m.identity();
        let mut out = self.guarded(&vec![e; xs.len()], e)?;
        let (off, n) = (out.off, out.n);
        self.scanner(m)
            .mapped(map)
            .inclusive(&input.slice(i..), &mut out.buf.slice_mut(off..off + n))?;
        self.read(&out, "mapped inclusive")
    }

    fn map_exclusive_scan_total<M: Monoid, In: Element>(
        &self,
        m: &M,
        map: &Map<In, M::Elem>,
        xs: &[In],
        init: M::Elem,
    ) -> Result<(Vec<M::Elem>, M::Elem)> {
        let (input, i) = self.input(xs)?;
        let e = m.identity();
        let mut out = self.guarded(&vec![e; xs.len()], e)?;
        let mut total = self.guarded(&[e], e)?;
        let (off, n, t) = (out.off, out.n, total.off);
        self.scanner(m).mapped(map).exclusive_with_total(
            &input.slice(i..),
            &mut out.buf.slice_mut(off..off + n),
            init,
            &mut total.buf.slice_mut(t..t + 1),
        )?;
        Ok((
            self.read(&out, "mapped exclusive_with_total")?,
            self.read(&total, "mapped exclusive_with_total (total)")?[0],
        ))
    }
}

/// One GPU algorithm: its scanner on aligned buffers and on views one element in; for
/// `Algorithm::Auto` also the `Gpu`'s own [`Backend`] implementation.
pub struct GpuSubject {
    pub gpu: &'static Gpu,
    pub algorithm: Algorithm,
}

/// The subject for `algorithm` on the shared GPU (`None`, after saying why, without one).
pub fn gpu_subject(algorithm: Algorithm) -> Option<GpuSubject> {
    Some(GpuSubject {
        gpu: gpu()?,
        algorithm,
    })
}

/// The largest input of the GPU suite: a prime above 10^7.
pub const GPU_LARGE: usize = 10_000_019;

/// Lengths at every boundary `algorithm` has on `gpu` for elements of `size` bytes: warps,
/// blocks (the textbook scan sections and reduce blocks, the tiled kernels' threads), the tiles
/// of the shapes the policy picks for this device (register, staged, one-tile and the tiled
/// reduce's), two tiles, and tiles squared (three hierarchy levels), up to 2^24; and one input
/// above 10^7.
pub fn gpu_lengths(gpu: &Gpu, algorithm: Algorithm, size: usize) -> Vec<usize> {
    let limits = &gpu.info().limits;
    let tuning = gpu.tuning();
    let tile = |purpose| {
        policy::tile_shape(size, limits, tuning, purpose)
            .unwrap_or_else(|e| panic!("the {purpose:?} shape for {size}-byte elements: {e}"))
    };
    let block = policy::textbook_block(size, limits).unwrap() as usize;
    let mut ns = vec![0, 1, 2, 31, 32, 33, 1000];
    let mut sections = Vec::new();
    match algorithm {
        Algorithm::KoggeStone | Algorithm::BrentKung => {
            // The scan's sections, and the tree reduce's blocks of 2 x block elements.
            let section = if algorithm == Algorithm::KoggeStone {
                block
            } else {
                2 * block
            };
            sections.push(section);
            ns.extend([2 * block - 1, 2 * block, 2 * block + 1]);
        }
        Algorithm::Hierarchical => {
            let tiles = tile(Purpose::Tiles);
            sections.push(tiles.tile() as usize);
            let threads = tiles.block as usize;
            ns.extend([threads - 1, threads, threads + 1]);
        }
        Algorithm::SinglePass | Algorithm::Auto => {
            let register = tile(Purpose::SinglePass);
            sections.push(register.tile() as usize);
            let threads = register.block as usize;
            ns.extend([threads - 1, threads, threads + 1]);
            let staged = tile(Purpose::Staged);
            if staged.staged {
                sections.push(staged.tile() as usize);
                // Small inputs: tiles of fewer threads, up to a size in bytes.
                let small = policy::SMALL_TILE_THREADS as usize * staged.items as usize;
                ns.extend([small - 1, small, small + 1, 2 * small + 1]);
                let edge = (policy::SMALL_INPUT_BYTES as usize / size.max(1)).max(1);
                ns.extend([edge - 1, edge, edge + 1]);
            }
            // The tiled reduce's tile, and the small one-tile kernel's edge: n = tile - 1,
            // tile, tile + 1 (the last one goes to the single-pass shape's tile).
            let reduce = tile(Purpose::Tiles).tile() as usize;
            let one = tile(Purpose::OneTile).tile() as usize;
            ns.extend([reduce - 1, reduce, reduce + 1, one - 1, one, one + 1]);
        }
    }
    for section in sections {
        for s in [section, 2 * section, section * section] {
            ns.extend([s - 1, s, s + 1]);
        }
    }
    ns.retain(|&n| n <= 1 << 24);
    ns.sort_unstable();
    ns.dedup();
    ns.push(GPU_LARGE);
    ns
}

impl Subject for GpuSubject {
    fn name(&self) -> String {
        format!("gpu {}", self.algorithm)
    }
    fn lengths(&self, size: usize) -> Vec<usize> {
        gpu_lengths(self.gpu, self.algorithm, size)
    }
    fn random_lengths(&self, max: usize) -> BoxedStrategy<usize> {
        (0..=max.min(20_000)).boxed()
    }
    fn cases(&self) -> u32 {
        12
    }
    fn paths<V: Visit>(&self, visit: &mut V) {
        let mapped = match self.algorithm {
            Algorithm::KoggeStone | Algorithm::BrentKung => Mapped::Refused,
            _ => Mapped::Fused,
        };
        for offset in [0, 1] {
            let b = OnGpu {
                gpu: self.gpu,
                algorithm: self.algorithm,
                offset,
            };
            visit.path(&format!("scanner at offset {offset}"), &b, mapped);
        }
        if self.algorithm == Algorithm::Auto {
            visit.path("Gpu as Backend", self.gpu, Mapped::Fused);
        }
    }
}
