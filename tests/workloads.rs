//! Segmented operations, allocation, compaction, polynomials and recurrences on the CPU
//! backends and (when present) the GPU, against naive references written here.

mod common;

use common::gpu::{gpu, Rng};
use monoscan::cpu::{Parallel, Sequential};
use monoscan::ops::{Mat2, MatMulMod, Max, Sum};
use monoscan::workloads::{allocate, polynomial, recurrence, segmented};
use monoscan::{Backend, Map};

/// Random CSR layout over `n` values: many empty and length-1 segments, and one long segment
/// spanning many blocks.
fn layout(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut offsets = vec![0];
    let mut at = 0;
    let long_at = n / 3;
    while at < n {
        let len = if at <= long_at && long_at < at + 64 {
            (n / 2).max(1)
        } else {
            match rng.below(4) {
                0 => 0,
                1 => 1,
                _ => rng.below(300) as usize,
            }
        };
        at = (at + len).min(n);
        offsets.push(at);
    }
    offsets.push(n);
    offsets
}

fn naive_reduce_segments(xs: &[Mat2], offsets: &[usize], m: &MatMulMod) -> Vec<Mat2> {
    use monoscan::Monoid;
    offsets
        .windows(2)
        .map(|w| {
            xs[w[0]..w[1]]
                .iter()
                .fold(m.identity(), |a, x| m.combine(&a, x))
        })
        .collect()
}

fn check_segmented<B: Backend>(b: &B, name: &str) {
    use monoscan::Monoid;
    let mut rng = Rng::new(42);
    let m = MatMulMod::new(1_000_003).unwrap();
    for n in [0usize, 1, 2, 33, 1000, 200_000] {
        let xs: Vec<Mat2> = (0..n)
            .map(|_| Mat2::new([0; 4].map(|_: u32| rng.below(1_000_003) as u32)))
            .collect();
        let offsets = layout(&mut rng, n);
        let got = segmented::reduce_segments(b, &m, &xs, &offsets).unwrap();
        assert_eq!(
            got,
            naive_reduce_segments(&xs, &offsets, &m),
            "{name} reduce_segments n={n}"
        );
        // Scan by heads and by key agree with a restart-at-head loop.
        let heads: Vec<bool> = (0..n).map(|i| i == 0 || rng.below(10) == 0).collect();
        let mut want = Vec::with_capacity(n);
        let mut acc = m.identity();
        for (x, &h) in xs.iter().zip(&heads) {
            acc = if h { *x } else { m.combine(&acc, x) };
            want.push(acc);
        }
        assert_eq!(
            segmented::scan_by_heads(b, &m, &xs, &heads).unwrap(),
            want,
            "{name} scan_by_heads n={n}"
        );
        let keys: Vec<u64> = heads
            .iter()
            .scan(0u64, |k, &h| {
                *k += u64::from(h);
                Some(*k % 3)
            })
            .collect();
        let by_key = segmented::scan_by_key(b, &m, &keys, &xs).unwrap();
        let mut acc = m.identity();
        for i in 0..n {
            acc = if i == 0 || keys[i] != keys[i - 1] {
                xs[i]
            } else {
                m.combine(&acc, &xs[i])
            };
            assert_eq!(by_key[i], acc, "{name} scan_by_key n={n} at {i}");
        }
    }
    assert!(segmented::reduce_segments(b, &Sum::<i32>::new(), &[1, 2], &[0, 3]).is_err());
    assert!(segmented::reduce_segments(b, &Sum::<i32>::new(), &[1, 2], &[0, 2, 1, 2]).is_err());
}

fn check_allocation_and_compaction<B: Backend>(b: &B, name: &str) {
    let mut rng = Rng::new(7);
    for n in [0usize, 1, 5000, 300_001] {
        let requests: Vec<u32> = (0..n)
            .map(|_| {
                if rng.below(3) == 0 {
                    0
                } else {
                    rng.below(40) as u32
                }
            })
            .collect();
        let a = allocate::offsets(b, &requests).unwrap();
        let mut at = 0u64;
        for (i, r) in requests.iter().enumerate() {
            assert_eq!(a.offsets[i], at, "{name} offsets n={n} at {i}");
            at += u64::from(*r);
        }
        assert_eq!(a.total, at, "{name} total n={n}");
        let buf = allocate::fill_slices(&a, &requests, u32::MAX, |i, s| s.fill(i as u32)).unwrap();
        for (i, r) in requests.iter().enumerate() {
            assert!(
                buf[a.range(i, &requests).unwrap()]
                    .iter()
                    .all(|&v| v == i as u32)
                    && buf[a.range(i, &requests).unwrap()].len() == *r as usize
            );
        }
        let xs: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
        let keep = Map::new("mod3", "(x % 3 == 0) ? 1u : 0u", |x: &i32| {
            u32::from(x % 3 == 0)
        });
        let want: Vec<i32> = xs.iter().copied().filter(|x| x % 3 == 0).collect();
        assert_eq!(
            allocate::compact(b, &xs, &keep).unwrap(),
            want,
            "{name} compact n={n}"
        );
        // Any nonzero "keep" value keeps: compaction normalises the map to 0 or 1.
        let keep_wide = Map::new("mod3_wide", "(x % 3 == 0) ? 7u : 0u", |x: &i32| {
            if x % 3 == 0 {
                7
            } else {
                0
            }
        });
        assert_eq!(
            allocate::compact(b, &xs, &keep_wide).unwrap(),
            want,
            "{name} compact (wide keep) n={n}"
        );
    }
}

fn check_polynomial_and_recurrences<B: Backend>(b: &B, name: &str) {
    let mut rng = Rng::new(3);
    let coeffs: Vec<f64> = (0..100_001).map(|_| rng.unit()).collect();
    for x in [0.0, 0.5, -0.999, 0.9999] {
        let got = polynomial::evaluate(b, &coeffs, x).unwrap();
        let want = polynomial::compensated_horner(&coeffs, x);
        let bound = 1e-12 * coeffs.len() as f64 * polynomial::condition(&coeffs, x).max(1.0);
        assert!(
            ((got - want) / want).abs() <= bound,
            "{name} p({x}) = {got}, want {want}"
        );
    }
    let partial = polynomial::partial_values(b, &coeffs[..10], 0.5).unwrap();
    assert_eq!(partial.len(), 10);
    assert!((partial[9] - polynomial::compensated_horner(&coeffs[..10], 0.5)).abs() < 1e-12);
    let many = polynomial::evaluate_many(b, &coeffs[..500], &[0.1, -0.2, 0.3]).unwrap();
    for (v, x) in many.iter().zip([0.1, -0.2, 0.3]) {
        assert!(
            (v - polynomial::compensated_horner(&coeffs[..500], x)).abs() < 1e-12,
            "{name} many"
        );
    }

    let u: Vec<f64> = (0..50_000).map(|_| rng.unit()).collect();
    let got = recurrence::ema(b, &u, 0.1, 0.5).unwrap();
    let mut x = 0.5;
    for (t, ut) in u.iter().enumerate() {
        x = 0.9 * x + 0.1 * ut;
        assert!(
            (got[t] - x).abs() < 1e-12,
            "{name} ema at {t}: {} vs {x}",
            got[t]
        );
    }
    let (steps, channels) = (2000, 7);
    let a: Vec<f64> = (0..steps * channels)
        .map(|_| 0.5 + 0.5 * rng.unit().abs())
        .collect();
    let bu: Vec<f64> = (0..steps * channels).map(|_| rng.unit()).collect();
    let got = recurrence::diagonal_ssm(b, &a, &bu, channels).unwrap();
    for c in 0..channels {
        let mut x = 0.0;
        for t in 0..steps {
            let i = t * channels + c;
            x = a[i] * x + bu[i];
            assert!(
                (got[i] - x).abs() < 1e-9 * x.abs().max(1.0),
                "{name} ssm c={c} t={t}"
            );
        }
    }
}

#[test]
fn segmented_on_cpu() {
    check_segmented(&Sequential, "sequential");
    check_segmented(&Parallel::with_min_chunk(64), "parallel");
}

#[test]
fn allocation_and_compaction_on_cpu() {
    check_allocation_and_compaction(&Sequential, "sequential");
    check_allocation_and_compaction(&Parallel::with_min_chunk(64), "parallel");
}

#[test]
fn polynomials_and_recurrences_on_cpu() {
    check_polynomial_and_recurrences(&Parallel::with_min_chunk(64), "parallel");
}

#[test]
fn segmented_on_gpu() {
    let Some(g) = gpu() else { return };
    check_segmented(g, "gpu");
}

#[test]
fn allocation_and_compaction_on_gpu() {
    let Some(g) = gpu() else { return };
    check_allocation_and_compaction(g, "gpu");
}

#[test]
fn polynomials_and_recurrences_on_gpu() {
    let Some(g) = gpu() else { return };
    check_polynomial_and_recurrences(g, "gpu");
}

#[test]
fn device_compaction_and_allocation_offsets() {
    let Some(g) = gpu() else { return };
    let s = g.stream();
    let mut rng = Rng::new(11);
    for n in [0usize, 1, 4095, 1 << 20, 10_000_019] {
        let xs: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
        let d = s.clone_htod(&xs).unwrap();
        let keep = Map::new(
            "neg",
            "x < 0 ? 2u : 0u",
            |x: &i32| if *x < 0 { 2 } else { 0 },
        );
        let (kept, count) = g.compact(&d, &keep).unwrap();
        let want: Vec<i32> = xs.iter().copied().filter(|x| *x < 0).collect();
        assert_eq!(count as usize, want.len());
        assert_eq!(s.clone_dtoh(&kept).unwrap(), want, "compact n={n}");

        let requests: Vec<u32> = (0..n).map(|_| rng.below(1000) as u32).collect();
        let dr = s.clone_htod(&requests).unwrap();
        let (offsets, total) = g.allocation_offsets(&dr).unwrap();
        let (want, want_total) = monoscan::cpu::seq::exclusive_scan_total(
            &Sum::<u64>::new(),
            &requests.iter().map(|&r| u64::from(r)).collect::<Vec<_>>(),
            0,
        );
        assert_eq!(total, want_total);
        assert_eq!(s.clone_dtoh(&offsets).unwrap(), want, "offsets n={n}");
    }
}

/// The fused compaction kernels into an input-sized buffer, staged (aligned input) and
/// register (misaligned input): every element size class, tile boundaries (4096 elements of
/// 4 bytes, fewer for larger elements), keep densities from none to all; the untouched tail
/// and a too-small output.
#[test]
fn compaction_into_a_buffer_keeps_order_and_the_tail() {
    let Some(g) = gpu() else { return };
    let s = g.stream();
    let mut rng = Rng::new(23);
    fn case<T: monoscan::Element + PartialEq + std::fmt::Debug>(
        g: &monoscan::Gpu,
        xs: &[T],
        keep: &Map<T, u32>,
        host_keep: impl Fn(&T) -> bool,
        fill: T,
        what: &str,
    ) {
        let s = g.stream();
        let whole = s.clone_htod(xs).unwrap();
        // From the start (16-byte aligned: the staged kernel where the size allows) and from
        // the second element (misaligned for sizes below 16: the register kernel).
        for skip in [0, 1.min(xs.len())] {
            let d = whole.slice(skip..);
            let xs = &xs[skip..];
            let mut out = s.clone_htod(&vec![fill; xs.len() + 3]).unwrap();
            let count = g.compact_into(&d, keep, &mut out).unwrap() as usize;
            let want: Vec<T> = xs.iter().copied().filter(|x| host_keep(x)).collect();
            let what = format!("{what}, from element {skip}, n={}", xs.len());
            assert_eq!(count, want.len(), "{what}: count");
            let got = s.clone_dtoh(&out).unwrap();
            assert_eq!(got[..count], want[..], "{what}: kept");
            assert!(got[count..].iter().all(|x| *x == fill), "{what}: tail");
        }
    }
    for n in [1usize, 31, 4095, 4096, 4097, 3 * 4096 + 5, 1_000_003] {
        let ints: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
        for (name, den) in [("none", 0u64), ("tenth", 10), ("half", 2), ("all", 1)] {
            let k = Map::new(
                &format!("keep_{name}"),
                &match den {
                    0 => "0u".to_string(),
                    d => format!("((unsigned)x % {d}u == 0u) ? 1u : 0u"),
                },
                move |x: &i32| u32::from(den != 0 && (*x as u32) % den as u32 == 0),
            );
            let host = |x: &i32| den != 0 && (*x as u32) % den as u32 == 0;
            case(g, &ints, &k, host, i32::MIN, &format!("i32 {name}"));
        }
        let bytes: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
        let odd = Map::new("odd8", "(x & 1) ? 1u : 0u", |x: &u8| u32::from(x & 1));
        case(g, &bytes, &odd, |x| x & 1 == 1, 7, "u8");
        let wide: Vec<f64> = (0..n).map(|_| rng.unit() - 0.5).collect();
        let pos = Map::new("pos64", "x > 0.0 ? 1u : 0u", |x: &f64| u32::from(*x > 0.0));
        case(g, &wide, &pos, |x| *x > 0.0, -9.0, "f64");
        let mats: Vec<Mat2> = (0..n)
            .map(|_| Mat2::new([0; 4].map(|_: u32| rng.below(100) as u32)))
            .collect();
        let small = Map::new("first_small", "x.m[0] < 30u ? 1u : 0u", |x: &Mat2| {
            u32::from(x.m[0] < 30)
        });
        case(g, &mats, &small, |x| x.m[0] < 30, Mat2::new([9; 4]), "mat2");
    }
    // The count left on the device (no synchronisation inside): the same result; an empty
    // input writes a zero count; an empty count buffer is refused.
    let xs: Vec<i32> = (0..100_003).map(|_| rng.next_u64() as i32).collect();
    let d = s.clone_htod(&xs).unwrap();
    let mut out = s.alloc_zeros::<i32>(xs.len()).unwrap();
    let mut count = s.clone_htod(&[u32::MAX]).unwrap();
    let neg = Map::new("neg", "x < 0 ? 1u : 0u", |x: &i32| u32::from(*x < 0));
    g.compact_into_counted(&d, &neg, &mut out, &mut count)
        .unwrap();
    let want: Vec<i32> = xs.iter().copied().filter(|x| *x < 0).collect();
    assert_eq!(s.clone_dtoh(&count).unwrap(), [want.len() as u32]);
    assert_eq!(s.clone_dtoh(&out).unwrap()[..want.len()], want[..]);
    g.compact_into_counted(&d.slice(0..0), &neg, &mut out, &mut count)
        .unwrap();
    assert_eq!(s.clone_dtoh(&count).unwrap(), [0]);
    let mut none = s.alloc_zeros::<u32>(0).unwrap();
    let err = g
        .compact_into_counted(&d, &neg, &mut out, &mut none)
        .unwrap_err();
    assert!(err.to_string().contains("count buffer is empty"), "{err}");
    // An output without room for every input is refused before anything runs.
    let d = s.clone_htod(&[1i32, 2, 3]).unwrap();
    let mut short = s.clone_htod(&[0i32; 2]).unwrap();
    let any = Map::new("any", "1u", |_: &i32| 1u32);
    let err = g.compact_into(&d, &any, &mut short).unwrap_err();
    assert!(err.to_string().contains("room for 2"), "{err}");
}

#[test]
fn fused_maps_on_gpu_match_the_host() {
    let Some(g) = gpu() else { return };
    let mut rng = Rng::new(5);
    let flags: Vec<u8> = (0..3_000_001).map(|_| (rng.below(4) == 0) as u8).collect();
    let count = Map::new("flag", "x != 0 ? 1u : 0u", |x: &u8| u32::from(*x != 0));
    let m = Sum::<u32>::new();
    assert_eq!(
        g.map_reduce(&m, &count, &flags).unwrap(),
        Sequential.map_reduce(&m, &count, &flags).unwrap()
    );
    assert_eq!(
        g.map_inclusive_scan(&m, &count, &flags).unwrap(),
        Sequential.map_inclusive_scan(&m, &count, &flags).unwrap()
    );
    let vals: Vec<i16> = (0..100_003).map(|_| rng.next_u64() as i16).collect();
    let widen = Map::new("abs", "x < 0 ? -(long long)x : (long long)x", |x: &i16| {
        i64::from(*x).abs()
    });
    let mx = Max::<i64>::new();
    assert_eq!(
        g.map_exclusive_scan_total(&mx, &widen, &vals, -1).unwrap(),
        Sequential
            .map_exclusive_scan_total(&mx, &widen, &vals, -1)
            .unwrap()
    );
    // A map that keeps the element size takes the staged kernels (`scan_staged_mapped`; the
    // TMA form with its prefetch on sm_90): 3 million elements span many tiles.
    let ints: Vec<i32> = (0..3_000_017).map(|_| rng.next_u64() as i32).collect();
    let bits = Map::new("bits", "(unsigned)x ^ 0x5bd1e995u", |x: &i32| {
        (*x as u32) ^ 0x5bd1_e995
    });
    assert_eq!(
        g.map_inclusive_scan(&m, &bits, &ints).unwrap(),
        Sequential.map_inclusive_scan(&m, &bits, &ints).unwrap()
    );
    assert_eq!(
        g.map_exclusive_scan_total(&m, &bits, &ints[1..], 7)
            .unwrap(),
        Sequential
            .map_exclusive_scan_total(&m, &bits, &ints[1..], 7)
            .unwrap()
    );
    // Fused maps refuse the textbook algorithms with a clear error.
    let d = g.stream().clone_htod(&flags).unwrap();
    let mut out = g.stream().clone_htod(&vec![0u32; flags.len()]).unwrap();
    let err = g
        .scanner(&m)
        .algorithm(monoscan::Algorithm::KoggeStone)
        .mapped(&count)
        .inclusive(&d, &mut out)
        .unwrap_err();
    assert!(err.to_string().contains("tiled algorithms"), "{err}");
}
