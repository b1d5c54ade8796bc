use super::*;
use crate::tuning::cost::samples::{cheap, dear};

#[test]
fn small_inputs_take_tiles_of_fewer_threads() {
    let t = Tuning::default();
    let (cheap, dear) = (cheap(), dear());
    let h100 = hopper();
    for size in [2, 4, 8, 16] {
        let base = staged_scan_shape(size, &cheap, &h100, &t).unwrap();
        let small = small_staged_shape(size, &cheap, &h100, &t)
            .unwrap()
            .unwrap_or_else(|| panic!("{size}: no small shape"));
        assert!(
            small.staged && small.tma && !small.linear,
            "{size}: {small:?}"
        );
        assert_eq!((small.block, small.items), (SMALL_TILE_THREADS, base.items));
        // Smaller tiles, and at least as many of them resident per SM.
        assert!(small.tile() < base.tile(), "{size}");
        assert!(small.min_blocks >= base.min_blocks, "{size}: {small:?}");
        assert!(h100.blocks_per_sm(small.block, small.staged_smem_bytes(size)) >= small.min_blocks);
    }
    // Elsewhere one staged shape serves every input: 1-byte tiles already have 128 threads,
    // other sizes, expensive combines, cp.async tiles and a fixed staged shape keep theirs.
    let fixed = Tuning {
        staged: Some(ShapeChoice::new(256, 32)),
        ..t.clone()
    };
    let no_tma = Tuning {
        tma: false,
        ..t.clone()
    };
    for (size, cost, cc, tuning) in [
        (1, cheap, 90, &t),
        (3, cheap, 90, &t),
        (12, cheap, 90, &t),
        (32, cheap, 90, &t),
        (4, dear, 90, &t),
        (4, cheap, 80, &t),
        (4, cheap, 90, &no_tma),
        (4, cheap, 90, &fixed),
    ] {
        let limits = DeviceLimits::for_arch(cc);
        assert_eq!(
            small_staged_shape(size, &cost, &limits, tuning).unwrap(),
            None,
            "{size} bytes, sm_{cc}"
        );
    }
}

#[test]
fn small_reductions_take_shorter_runs() {
    let t = Tuning::default();
    let (cheap, dear) = (cheap(), dear());
    let h100 = hopper();
    for size in [1, 2, 8] {
        let base = staged_reduce_shape(size, &h100, &t).unwrap();
        let whole = base.tile_bytes(size) as u64;
        for bytes in [0, size as u64, whole - 16, whole + 16, SMALL_INPUT_BYTES] {
            let small = small_reduce_shape(size, &cheap, bytes, &h100, &t)
                .unwrap()
                .unwrap_or_else(|| panic!("{size} bytes, input {bytes}: no small shape"));
            // Rows of 32 bytes: copied by cp.async, which serves runs of any length.
            assert!(small.staged && !small.linear, "{size}: {small:?}");
            assert_eq!(small.block, base.block, "{size}");
            assert_eq!(
                small.items as usize * size,
                SMALL_REDUCE_RUN_BYTES,
                "{size}"
            );
            assert_eq!(small.tile_bytes(size) * 4, base.tile_bytes(size), "{size}");
        }
        // One whole large tile, and inputs above the bound, keep the large shape.
        for bytes in [whole, SMALL_INPUT_BYTES + 1, 1 << 30] {
            assert_eq!(
                small_reduce_shape(size, &cheap, bytes, &h100, &t).unwrap(),
                None,
                "{size} bytes, input {bytes}"
            );
        }
    }
    // Expensive combines, odd and large sizes, a fixed reduce tile and devices without the
    // staged reduce have none.
    let fixed = Tuning {
        reduce: Some(ShapeChoice::new(128, 16)),
        ..t.clone()
    };
    for (size, cost, cc, tuning) in [
        (8, dear, 90, &t),
        (3, cheap, 90, &t),
        (16, cheap, 90, &t),
        (8, cheap, 90, &fixed),
        (8, cheap, 75, &t),
    ] {
        let limits = DeviceLimits::for_arch(cc);
        assert_eq!(
            small_reduce_shape(size, &cost, 1 << 16, &limits, tuning).unwrap(),
            None,
            "{size} bytes, sm_{cc}"
        );
    }
}
