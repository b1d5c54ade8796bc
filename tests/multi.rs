//! Multi-GPU scans through NCCL: device-resident parts and streamed host inputs against the
//! CPU reference, for Sum, Affine (non-commutative) and Segmented. Uses every visible GPU
//! (G = 1 works too). Skips without a GPU (fails under MONOSCAN_REQUIRE_GPU=1) or without
//! NCCL (fails under MONOSCAN_REQUIRE_NCCL=1).

mod common;

use common::gpu::{gpu, Rng};
use monoscan::cpu::seq;
use monoscan::multi::{split, MultiGpu};
use monoscan::ops::{Affine, AffineMap, Flagged, Segmented, Sum};
use monoscan::{Error, Monoid};

fn multi() -> Option<MultiGpu> {
    gpu()?;
    match MultiGpu::new(&[]) {
        Ok(m) => {
            eprintln!("multi-GPU tests on {} device(s)", m.len());
            Some(m)
        }
        Err(Error::Nccl(why)) => {
            assert!(
                std::env::var("MONOSCAN_REQUIRE_NCCL").map_or(true, |v| v != "1"),
                "MONOSCAN_REQUIRE_NCCL=1 but NCCL is unusable: {why}"
            );
            eprintln!("skipped: {why}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn device_parts<T: monoscan::Element>(
    mg: &MultiGpu,
    xs: &[T],
) -> Vec<cudarc::driver::CudaSlice<T>> {
    split(xs.len(), mg.len())
        .into_iter()
        .zip(mg.gpus())
        .map(|(r, g)| g.stream().clone_htod(&xs[r]).unwrap())
        .collect()
}

fn check<M: Monoid>(
    mg: &MultiGpu,
    m: &M,
    xs: &[M::Elem],
    close: impl Fn(&M::Elem, &M::Elem) -> bool,
) where
    M::Elem: monoscan::Element,
{
    let want = seq::inclusive_scan(m, xs);
    let parts = device_parts(mg, xs);
    let mut outs = device_parts(mg, xs);
    mg.inclusive_scan(m, &parts, &mut outs).unwrap();
    let got: Vec<M::Elem> = outs
        .iter()
        .zip(mg.gpus())
        .flat_map(|(o, g)| g.stream().clone_dtoh(o).unwrap())
        .collect();
    assert!(
        got.iter().zip(&want).all(|(a, b)| close(a, b)),
        "device-resident inclusive scan differs"
    );
    let total = mg.reduce(m, &parts).unwrap();
    assert!(close(&total, &seq::reduce(m, xs)), "reduce");
    // Exclusive with init, and the host-streamed path with small chunks (many per device).
    let init = xs.first().copied().unwrap_or_else(|| m.identity());
    let (want_ex, want_total) = seq::exclusive_scan_total(m, xs, init);
    let t = mg.exclusive_scan(m, &parts, &mut outs, init).unwrap();
    assert!(close(&t, &want_total), "exclusive total");
    let got: Vec<M::Elem> = outs
        .iter()
        .zip(mg.gpus())
        .flat_map(|(o, g)| g.stream().clone_dtoh(o).unwrap())
        .collect();
    assert!(
        got.iter().zip(&want_ex).all(|(a, b)| close(a, b)),
        "device-resident exclusive scan differs"
    );
    for chunk in [1000, 65_536, 1 << 22] {
        let got = mg.inclusive_scan_host(m, xs, chunk).unwrap();
        assert!(
            got.iter().zip(&want).all(|(a, b)| close(a, b)),
            "host inclusive, chunk {chunk}"
        );
        let (got, t) = mg.exclusive_scan_host(m, xs, init, chunk).unwrap();
        assert!(
            close(&t, &want_total) && got.iter().zip(&want_ex).all(|(a, b)| close(a, b)),
            "host exclusive, chunk {chunk}"
        );
        assert!(
            close(&mg.reduce_host(m, xs, chunk).unwrap(), &seq::reduce(m, xs)),
            "host reduce, chunk {chunk}"
        );
    }
}

#[test]
fn multi_gpu_matches_the_reference() {
    let Some(mg) = multi() else { return };
    let mut rng = Rng::new(9);
    for n in [0usize, 1, 3, 1_000_003, 9_000_011] {
        let xs: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
        check(&mg, &Sum::<i32>::new(), &xs, |a, b| a == b);
        let maps: Vec<AffineMap<f64>> = (0..n)
            .map(|_| AffineMap::new(rng.unit(), rng.unit()))
            .collect();
        check(&mg, &Affine::<f64>::new(), &maps, |a, b| {
            (a.a - b.a).abs() <= 1e-9 && (a.b - b.b).abs() <= 1e-9 * b.b.abs().max(1.0)
        });
        let seg: Vec<Flagged<i64>> = (0..n)
            .map(|_| Flagged::new(rng.below(100) as i64, rng.below(50) == 0))
            .collect();
        check(&mg, &Segmented::new(Sum::<i64>::new()), &seg, |a, b| a == b);
    }
}
