//! Stream compaction's staged kernel over several tile shapes chosen through
//! `MONOSCAN_SELECT`. This binary holds one test so that setting the variable races with
//! nothing. The shape checks run everywhere; the compactions need a GPU (skipped without one).

mod common;

use common::gpu::{gpu, Rng};
use monoscan::codegen::select_staged_shape;
use monoscan::Map;

#[test]
fn select_shapes_agree_with_the_host() {
    // The shape knob: malformed or impossible shapes are errors, not panics.
    for bad in [
        "", "128", "128x", "x32", "33x32", "128x33", "128x0", "128x1", "1024x32",
    ] {
        std::env::set_var("MONOSCAN_SELECT", bad);
        let msg = select_staged_shape(4, 90).unwrap_err().to_string();
        assert!(
            msg.contains("MONOSCAN_SELECT") || msg.contains("select shape"),
            "{bad:?}: {msg}"
        );
    }
    std::env::set_var("MONOSCAN_SELECT", "256x16");
    let s = select_staged_shape(4, 90).unwrap().unwrap();
    assert_eq!((s.block, s.items, s.tile()), (256, 16, 4096));
    // Sizes and architectures the staged kernel does not take stay with the register kernel.
    assert!(select_staged_shape(12, 90).unwrap().is_none());
    assert!(select_staged_shape(4, 75).unwrap().is_none());
    std::env::remove_var("MONOSCAN_SELECT");

    let Some(g) = gpu() else { return };
    let s = g.stream();
    let mut rng = Rng::new(29);
    let xs: Vec<i32> = (0..300_007).map(|_| rng.next_u64() as i32).collect();
    let wide: Vec<f64> = (0..100_003).map(|_| rng.unit() - 0.5).collect();
    let odd = Map::new("odd", "(x & 1) ? 1u : 0u", |x: &i32| u32::from(x & 1 == 1));
    let pos = Map::new("pos", "x > 0.0 ? 1u : 0u", |x: &f64| u32::from(*x > 0.0));
    let want_xs: Vec<i32> = xs.iter().copied().filter(|x| x & 1 == 1).collect();
    let want_wide: Vec<f64> = wide.iter().copied().filter(|x| *x > 0.0).collect();
    let (dx, dw) = (s.clone_htod(&xs).unwrap(), s.clone_htod(&wide).unwrap());
    // (i32 shape, f64 shape): the default, then others a tuning sweep would try.
    for (shape_i, shape_f) in [
        (None, None),
        (Some("256x16"), Some("256x8")),
        (Some("64x32"), Some("64x16")),
        (Some("96x32"), Some("32x32")),
        (Some("512x8"), Some("128x4")),
    ] {
        for (shape, is_int) in [(shape_i, true), (shape_f, false)] {
            match shape {
                Some(v) => std::env::set_var("MONOSCAN_SELECT", v),
                None => std::env::remove_var("MONOSCAN_SELECT"),
            }
            let label = shape.unwrap_or("default");
            if is_int {
                let mut out = s.alloc_zeros::<i32>(xs.len()).unwrap();
                let count = g.compact_into(&dx, &odd, &mut out).unwrap() as usize;
                assert_eq!(count, want_xs.len(), "{label} i32: count");
                let got = s.clone_dtoh(&out).unwrap();
                assert_eq!(got[..count], want_xs[..], "{label} i32: kept");
            } else {
                let mut out = s.alloc_zeros::<f64>(wide.len()).unwrap();
                let count = g.compact_into(&dw, &pos, &mut out).unwrap() as usize;
                assert_eq!(count, want_wide.len(), "{label} f64: count");
                let got = s.clone_dtoh(&out).unwrap();
                assert_eq!(got[..count], want_wide[..], "{label} f64: kept");
            }
        }
    }
    std::env::remove_var("MONOSCAN_SELECT");
}
