//! GPU behaviour beyond the algorithm matrix: more than 2^31 elements, verify, compile errors
//! surfacing from scans, determinism, argument checks.

mod common;

use common::gpu::gpu;
use monoscan::cpu::seq;
use monoscan::ops::{Affine, AffineMap, Sum};
use monoscan::verify::{verify_pairs, Mismatch};
use monoscan::{Algorithm, Backend, CudaOp, Error, Monoid};

/// More than 2^31 u8 elements: every algorithm, every position compared with a streaming
/// reference (sums wrap mod 256), and the total.
#[test]
fn scans_more_than_2_pow_31_elements() {
    let Some(gpu) = gpu() else { return };
    let n: usize = (1 << 31) + 4099;
    let xs: Vec<u8> = (0..n as u64)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let s = gpu.stream();
    let input = s.clone_htod(&xs).unwrap();
    let mut out = s.clone_htod(&xs[..n]).unwrap();
    let mut total = s.clone_htod(&[0u8]).unwrap();
    let m = Sum::<u8>::new();
    for algorithm in [
        Algorithm::Auto,
        Algorithm::Hierarchical,
        Algorithm::KoggeStone,
        Algorithm::BrentKung,
    ] {
        let scanner = gpu.scanner(&m).algorithm(algorithm);
        scanner.inclusive(&input, &mut out).unwrap();
        scanner.reduce(&input, &mut total).unwrap();
        let got = s.clone_dtoh(&out).unwrap();
        let mut acc = 0u8;
        for (i, (x, y)) in xs.iter().zip(&got).enumerate() {
            acc = acc.wrapping_add(*x);
            assert_eq!(*y, acc, "{algorithm}: position {i}");
        }
        assert_eq!(s.clone_dtoh(&total).unwrap()[0], acc, "{algorithm}: total");
    }
}

/// A user operator whose CUDA side computes min while its Rust side computes max.
struct Inconsistent;
impl Monoid for Inconsistent {
    type Elem = i32;
    fn identity(&self) -> i32 {
        i32::MIN
    }
    fn combine(&self, a: &i32, b: &i32) -> i32 {
        *a.max(b)
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<i32>("inconsistent_max")
            .identity("(-2147483647 - 1)")
            .combine_expr("a < b ? a : b")
    }
}

#[test]
fn verify_reports_the_first_disagreement() {
    let Some(gpu) = gpu() else { return };
    let pairs = [(1, 1), (5, 5), (2, 9), (7, 3)];
    let found = verify_pairs(gpu, &Inconsistent, &pairs, |a, b| a == b).unwrap();
    assert_eq!(
        found,
        Some(Mismatch::Combine {
            index: 2,
            a: 2,
            b: 9,
            host: 9,
            device: 2
        })
    );
    let text = found.unwrap().to_string();
    assert!(
        text.contains("input 2")
            && text.contains("host gives 9")
            && text.contains("device gives 2"),
        "{text}"
    );
    // A consistent operator passes.
    assert_eq!(
        verify_pairs(gpu, &Sum::<i32>::new(), &pairs, |a, b| a == b).unwrap(),
        None
    );
}

struct WrongIdentity;
impl Monoid for WrongIdentity {
    type Elem = i64;
    fn identity(&self) -> i64 {
        0
    }
    fn combine(&self, a: &i64, b: &i64) -> i64 {
        a.wrapping_add(*b)
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<i64>("wrong_identity")
            .identity("1")
            .combine_expr("a + b")
    }
}

#[test]
fn verify_reports_an_identity_mismatch() {
    let Some(gpu) = gpu() else { return };
    let found = verify_pairs(gpu, &WrongIdentity, &[(1, 2)], |a, b| a == b).unwrap();
    assert_eq!(found, Some(Mismatch::Identity { host: 0, device: 1 }));
}

struct Broken;
impl Monoid for Broken {
    type Elem = f32;
    fn identity(&self) -> f32 {
        0.0
    }
    fn combine(&self, a: &f32, b: &f32) -> f32 {
        a + b
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<f32>("broken")
            .identity("0.0f")
            .combine_expr("a + b +")
    }
}

#[test]
fn a_snippet_that_does_not_compile_surfaces_from_the_scan() {
    let Some(gpu) = gpu() else { return };
    let err = gpu.inclusive_scan(&Broken, &[1.0, 2.0]).unwrap_err();
    match &err {
        Error::Compile(f) => {
            assert!(f.in_user_snippet, "{err}");
            assert!(f.log.contains("error"), "{err}");
            assert!(f.excerpt.contains(">>"), "{err}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
    assert!(err
        .to_string()
        .contains("inside the operator's CUDA snippet"));
}

#[test]
fn deterministic_mode_is_bitwise_reproducible() {
    let Some(gpu) = gpu() else { return };
    let det = monoscan::Gpu::new(0).unwrap().deterministic(true);
    let m = Affine::<f64>::new();
    let xs: Vec<_> = (0..3_000_017)
        .map(|i| AffineMap::new(1.0 - 1e-7 * (i % 13) as f64, (i % 101) as f64 * 0.37))
        .collect();
    let first = det.inclusive_scan(&m, &xs).unwrap();
    for _ in 0..3 {
        let again = det.inclusive_scan(&m, &xs).unwrap();
        assert!(first
            .iter()
            .zip(&again)
            .all(|(a, b)| a.a.to_bits() == b.a.to_bits() && a.b.to_bits() == b.b.to_bits()));
    }
    // And it agrees with the reference within rounding.
    let want = seq::inclusive_scan(&m, &xs);
    let last = want.len() - 1;
    assert!((want[last].b - first[last].b).abs() <= 1e-6 * want[last].b.abs().max(1.0));
    let _ = gpu;
}

#[test]
fn short_outputs_and_empty_totals_are_errors() {
    let Some(gpu) = gpu() else { return };
    let s = gpu.stream();
    let m = Sum::<i32>::new();
    let input = s.clone_htod(&[1, 2, 3]).unwrap();
    let mut out = s.clone_htod(&[0, 0]).unwrap();
    let err = gpu.scanner(&m).inclusive(&input, &mut out).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let mut empty = s.clone_htod(&[0i32; 1]).unwrap();
    let mut none = empty.slice_mut(0..0);
    assert!(gpu.scanner(&m).reduce(&input, &mut none).is_err());
}

#[test]
fn empty_inputs() {
    let Some(gpu) = gpu() else { return };
    let m = Sum::<i32>::new();
    assert_eq!(gpu.reduce(&m, &[]).unwrap(), 0);
    assert_eq!(gpu.exclusive_scan_total(&m, &[], 5).unwrap(), (vec![], 5));
    assert!(gpu.inclusive_scan(&m, &[]).unwrap().is_empty());
}

/// 1,000 back-to-back single-pass scans of 2^22 elements (1,024 tiles of look-back each),
/// every result checked in full: no hang, no wrong result.
#[test]
fn stress_back_to_back_single_pass_scans() {
    let Some(gpu) = gpu() else { return };
    let m = Sum::<u32>::new();
    let n = 1 << 22;
    let xs: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
        .collect();
    let want = seq::inclusive_scan(&m, &xs);
    let s = gpu.stream();
    let input = s.clone_htod(&xs).unwrap();
    let mut out = s.clone_htod(&xs).unwrap();
    let mut got = vec![0u32; n];
    let scanner = gpu.scanner(&m).algorithm(Algorithm::SinglePass);
    for round in 0..1000 {
        scanner.inclusive(&input, &mut out).unwrap();
        s.memcpy_dtoh(&out, &mut got).unwrap();
        s.synchronize().unwrap();
        assert!(got == want, "round {round}: wrong result");
    }
}

/// `inclusive_from` continues a scan from a carry on the tiled algorithms and is refused,
/// before any launch, by the textbook ones.
#[test]
fn inclusive_from_a_carry() {
    let Some(gpu) = gpu() else { return };
    let m = monoscan::ops::MatMulMod::new(1_000_003).unwrap();
    let xs: Vec<monoscan::ops::Mat2> = (0..300_007u32)
        .map(|i| monoscan::ops::Mat2::new([i % 1000, 1, (i * 7) % 1000, 3]))
        .collect();
    let carry = monoscan::ops::Mat2::new([2, 5, 7, 11]);
    let mut want = xs.clone();
    monoscan::cpu::seq::inclusive_scan_in_place(&m, &mut want);
    let want: Vec<_> = want.iter().map(|w| m.combine(&carry, w)).collect();
    let s = gpu.stream();
    let input = s.clone_htod(&xs).unwrap();
    for algorithm in [
        Algorithm::Auto,
        Algorithm::Hierarchical,
        Algorithm::SinglePass,
    ] {
        let mut out = s.clone_htod(&xs).unwrap();
        let mut total = s.clone_htod(&[carry]).unwrap();
        gpu.scanner(&m)
            .algorithm(algorithm)
            .inclusive_from(&input, &mut out, carry, &mut total)
            .unwrap();
        assert_eq!(s.clone_dtoh(&out).unwrap(), want, "{algorithm}");
        assert_eq!(
            s.clone_dtoh(&total).unwrap()[0],
            *want.last().unwrap(),
            "{algorithm} total"
        );
    }
    for algorithm in [Algorithm::KoggeStone, Algorithm::BrentKung] {
        let mut out = s.clone_htod(&xs).unwrap();
        let mut total = s.clone_htod(&[carry]).unwrap();
        let err = gpu
            .scanner(&m)
            .algorithm(algorithm)
            .inclusive_from(&input, &mut out, carry, &mut total)
            .unwrap_err();
        assert!(err.to_string().contains("tiled algorithms"), "{err}");
    }
}
