//! Every GPU algorithm against the sequential CPU reference, for every operator class, on
//! lengths at the boundaries of warps, blocks, tiles and hierarchy levels, and 10^7+.
//! Exact operators compare exactly; floats within n * eps * sum|x|.
//!
//! Skips (printing why) without a GPU; fails instead under MONOSCAN_REQUIRE_GPU=1.

mod common;

use common::gpu::{gpu, Rng};
use monoscan::codegen::{textbook_block, tile_shape, Purpose};
use monoscan::cpu::seq;
use monoscan::ops::*;
use monoscan::{Algorithm, ApproxEq, Gpu, Monoid, Tolerance};
use proptest::prelude::*;

/// An operator under test: how to draw its elements, and how exact its results are.
trait Case: Sync {
    type M: Monoid<Elem = Self::T>;
    type T: monoscan::Element + ApproxEq;
    fn op(&self) -> Self::M;
    fn draw(&self, rng: &mut Rng) -> Self::T;
    /// `|x|` for the tolerance of float operators; `None` for exact ones.
    fn magnitude(&self, _x: &Self::T) -> Option<f64> {
        None
    }
    /// Machine epsilon of the float type.
    fn eps(&self) -> f64 {
        0.0
    }
}

macro_rules! case {
    ($name:ident, $m:ty, $t:ty, $op:expr, |$rng:ident| $draw:expr $(, mag |$x:ident| $mag:expr, eps $eps:expr)?) => {
        struct $name;
        impl Case for $name {
            type M = $m;
            type T = $t;
            fn op(&self) -> $m { $op }
            fn draw(&self, $rng: &mut Rng) -> $t { $draw }
            $(
                fn magnitude(&self, $x: &$t) -> Option<f64> { Some($mag) }
                fn eps(&self) -> f64 { $eps }
            )?
        }
    };
}

case!(SumI32, Sum<i32>, i32, Sum::new(), |r| r.next_u64() as i32);
case!(SumU64, Sum<u64>, u64, Sum::new(), |r| r.next_u64());
case!(SumF32, Sum<f32>, f32, Sum::new(), |r| r.unit() as f32 * 100.0, mag |x| x.abs() as f64, eps f32::EPSILON as f64);
case!(SumF64, Sum<f64>, f64, Sum::new(), |r| r.unit() * 1e6, mag |x| x.abs(), eps f64::EPSILON);
case!(MaxI64, Max<i64>, i64, Max::new(), |r| r.next_u64() as i64);
case!(ArgMinF32, ArgMin<f32>, Indexed<f32>, ArgMin::new(), |r| {
    Indexed::new(r.below(1000) as f32, r.below(1 << 40))
});
case!(AffineF64, Affine<f64>, AffineMap<f64>, Affine::new(), |r| AffineMap::new(r.unit(), r.unit() * 10.0),
      mag |x| x.b.abs() + 1.0, eps f64::EPSILON);
case!(
    MatMod,
    MatMulMod,
    Mat2,
    MatMulMod::new(1_000_003).unwrap(),
    |r| Mat2::new([0; 4].map(|_: u32| r.below(1_000_003) as u32))
);
case!(
    SegSumI32,
    Segmented<Sum<i32>>,
    Flagged<i32>,
    Segmented::new(Sum::new()),
    |r| Flagged::new(r.below(1000) as i32 - 500, r.below(100) < 3)
);
case!(SegAffineF64, Segmented<Affine<f64>>, Flagged<AffineMap<f64>>, Segmented::new(Affine::new()),
      |r| Flagged::new(AffineMap::new(r.unit(), r.unit()), r.below(1000) < 2),
      mag |x| x.value.b.abs() + 1.0, eps f64::EPSILON);

fn draw<C: Case>(c: &C, n: usize, seed: u64) -> Vec<C::T> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| c.draw(&mut rng)).collect()
}

/// Asserts `got` equals `want` (exactly, or within n * eps * sum|x| for floats).
fn assert_close<C: Case>(c: &C, what: &str, xs: &[C::T], want: &[C::T], got: &[C::T]) {
    assert_eq!(want.len(), got.len(), "{what}: length");
    let scale: Option<f64> = xs.iter().map(|x| c.magnitude(x)).sum();
    let tol = match scale {
        // The rigorous bound for any grouping of n - 1 additions is (n - 1) eps sum|x|; the
        // factor 2 covers the rounding of the magnitudes themselves and of init.
        Some(s) => Tolerance {
            rel: 0.0,
            abs: 2.0 * (xs.len() as f64 + 2.0) * c.eps() * (s + 1.0),
        },
        None => Tolerance::EXACT,
    };
    if let Some(i) = (0..want.len()).find(|&i| !want[i].approx_eq(&got[i], tol)) {
        panic!(
            "{what}: first difference at {i} of {}: want {:?}, got {:?} (tolerance {tol:?})",
            want.len(),
            want[i],
            got[i]
        );
    }
}

/// Runs every operation on `xs` through `gpu` with `algorithm` and compares with the reference.
fn check<C: Case>(gpu: &Gpu, c: &C, algorithm: Algorithm, xs: &[C::T], init: C::T) {
    let m = c.op();
    let n = xs.len();
    let what = |op: &str| format!("{algorithm} {op} n={n}");
    let s = gpu.stream();
    let scanner = gpu.scanner(&m).algorithm(algorithm);
    let input = s.clone_htod(xs).unwrap();
    let mut out = s.clone_htod(xs).unwrap();
    let mut total = s.clone_htod(&[m.identity()]).unwrap();

    scanner.inclusive(&input, &mut out).unwrap();
    assert_close(
        c,
        &what("inclusive"),
        xs,
        &seq::inclusive_scan(&m, xs),
        &s.clone_dtoh(&out).unwrap(),
    );

    let (want, want_total) = seq::exclusive_scan_total(&m, xs, init);
    scanner
        .exclusive_with_total(&input, &mut out, init, &mut total)
        .unwrap();
    assert_close(
        c,
        &what("exclusive"),
        xs,
        &want,
        &s.clone_dtoh(&out).unwrap(),
    );
    assert_close(
        c,
        &what("exclusive total"),
        xs,
        &[want_total],
        &s.clone_dtoh(&total).unwrap(),
    );

    // A view one element in: unaligned for elements under 16 bytes, so the staged scan's
    // fallback (one block per tile) runs.
    if n >= 2 {
        let iv = input.slice(1..);
        let mut ov = out.slice_mut(1..);
        scanner.inclusive(&iv, &mut ov).unwrap();
        assert_close(
            c,
            &what("inclusive from offset 1"),
            &xs[1..],
            &seq::inclusive_scan(&m, &xs[1..]),
            &s.clone_dtoh(&out).unwrap()[1..],
        );
    }

    scanner.reduce(&input, &mut total).unwrap();
    assert_close(
        c,
        &what("reduce"),
        xs,
        &[seq::reduce(&m, xs)],
        &s.clone_dtoh(&total).unwrap(),
    );

    let mut data = s.clone_htod(xs).unwrap();
    scanner.inclusive_in_place(&mut data).unwrap();
    assert_close(
        c,
        &what("inclusive in place"),
        xs,
        &seq::inclusive_scan(&m, xs),
        &s.clone_dtoh(&data).unwrap(),
    );
}

/// Lengths at every boundary the algorithm has, for elements of `size` bytes.
fn boundary_lengths(gpu: &Gpu, algorithm: Algorithm, size: usize) -> Vec<usize> {
    let mut ns = vec![0, 1, 2, 31, 32, 33, 1000];
    let section = match algorithm {
        Algorithm::KoggeStone => textbook_block(size).unwrap() as usize,
        Algorithm::BrentKung => 2 * textbook_block(size).unwrap() as usize,
        Algorithm::Hierarchical => tile_shape(size, gpu.info().cc, Purpose::Tiles)
            .unwrap()
            .tile() as usize,
        _ => tile_shape(size, gpu.info().cc, Purpose::SinglePass)
            .unwrap()
            .tile() as usize,
    };
    let mut sections = vec![section];
    if matches!(algorithm, Algorithm::SinglePass | Algorithm::Auto) {
        let staged = tile_shape(size, gpu.info().cc, Purpose::Staged).unwrap();
        if staged.staged {
            sections.push(staged.tile() as usize);
        }
        // The small one-tile kernel's edge: n = tile - 1, tile, tile + 1 (the last one
        // goes to the single-pass shape's tile).
        let one = tile_shape(size, gpu.info().cc, Purpose::OneTile)
            .unwrap()
            .tile() as usize;
        ns.extend([one - 1, one, one + 1]);
    }
    for section in sections {
        for s in [section, 2 * section, section * section] {
            ns.extend([s - 1, s, s + 1]);
        }
    }
    ns.retain(|&n| n <= 1 << 24);
    ns.push(10_000_019);
    ns
}

fn run_case<C: Case>(c: &C, algorithm: Algorithm) {
    let Some(gpu) = gpu() else { return };
    let m = c.op();
    for (k, n) in boundary_lengths(gpu, algorithm, std::mem::size_of::<C::T>())
        .into_iter()
        .enumerate()
    {
        let xs = draw(c, n, 1000 + k as u64);
        let init = draw(c, 1, 7 + k as u64)[0];
        check(gpu, c, algorithm, &xs, init);
    }
    // Random lengths and contents through proptest.
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&(0usize..20_000, any::<u64>()), |(n, seed)| {
            let xs = draw(c, n, seed);
            check(gpu, c, algorithm, &xs, m.identity());
            Ok(())
        })
        .unwrap();
}

macro_rules! stamp {
    ($($case:ident: $ks:ident $bk:ident $hi:ident $sp:ident $auto:ident;)*) => {$(
        #[test] fn $ks() { run_case(&$case, Algorithm::KoggeStone) }
        #[test] fn $bk() { run_case(&$case, Algorithm::BrentKung) }
        #[test] fn $hi() { run_case(&$case, Algorithm::Hierarchical) }
        #[test] fn $sp() { run_case(&$case, Algorithm::SinglePass) }
        #[test] fn $auto() { run_case(&$case, Algorithm::Auto) }
    )*};
}

stamp! {
    SumI32: ks_sum_i32 bk_sum_i32 hier_sum_i32 sp_sum_i32 auto_sum_i32;
    SumU64: ks_sum_u64 bk_sum_u64 hier_sum_u64 sp_sum_u64 auto_sum_u64;
    SumF32: ks_sum_f32 bk_sum_f32 hier_sum_f32 sp_sum_f32 auto_sum_f32;
    SumF64: ks_sum_f64 bk_sum_f64 hier_sum_f64 sp_sum_f64 auto_sum_f64;
    MaxI64: ks_max_i64 bk_max_i64 hier_max_i64 sp_max_i64 auto_max_i64;
    ArgMinF32: ks_argmin_f32 bk_argmin_f32 hier_argmin_f32 sp_argmin_f32 auto_argmin_f32;
    AffineF64: ks_affine_f64 bk_affine_f64 hier_affine_f64 sp_affine_f64 auto_affine_f64;
    MatMod: ks_matmod bk_matmod hier_matmod sp_matmod auto_matmod;
    SegSumI32: ks_seg_sum_i32 bk_seg_sum_i32 hier_seg_sum_i32 sp_seg_sum_i32 auto_seg_sum_i32;
    SegAffineF64: ks_seg_affine_f64 bk_seg_affine_f64 hier_seg_affine_f64 sp_seg_affine_f64 auto_seg_affine_f64;
}
