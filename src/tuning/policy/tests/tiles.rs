use super::*;
use crate::tuning::cost::samples::{cheap, dear};

#[test]
fn shapes_fit_shared_memory() {
    for purpose in [Purpose::SinglePass, Purpose::Tiles, Purpose::OneTile] {
        for size in [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 100, 256, 700] {
            let s = shape(size, 90, purpose).unwrap();
            assert!(s.smem_bytes(size) <= 48 * 1024, "size {size}: {s:?}");
            assert_eq!(s.layout, StateLayout::for_size(size));
        }
        assert!(shape(10_000, 90, purpose).is_err());
    }
}

#[test]
fn one_tile_shapes_are_small_and_never_larger_than_single_pass_tiles() {
    let one = shape(4, 90, Purpose::OneTile).unwrap();
    assert_eq!((one.block, one.items, one.tile()), (256, 4, 1024));
    for size in [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 100, 256, 700] {
        let one = shape(size, 90, Purpose::OneTile).unwrap();
        let sp = shape(size, 90, Purpose::SinglePass).unwrap();
        assert!(
            one.tile() * size as u64 <= 4096 || one.block == 32,
            "size {size}: {one:?}"
        );
        assert!(one.tile() <= sp.tile(), "size {size}: {one:?} vs {sp:?}");
    }
}

#[test]
fn the_tuning_overrides_the_policy_and_is_checked_against_the_device() {
    let t = Tuning {
        tile: Some(ShapeChoice::new(128, 4).with_lookback(3)),
        one_tile: Some(ShapeChoice::new(64, 2)),
        staged: Some(ShapeChoice::new(256, 32)),
        ..Tuning::default()
    };
    let s = tile_shape(4, &hopper(), &t, Purpose::SinglePass).unwrap();
    assert_eq!((s.block, s.items, s.lookback), (128, 4, 3));
    let s = tile_shape(4, &hopper(), &t, Purpose::OneTile).unwrap();
    assert_eq!((s.block, s.items), (64, 2));
    let s = tile_shape(4, &hopper(), &t, Purpose::Staged).unwrap();
    assert_eq!((s.block, s.items, s.staged, s.tma), (256, 32, true, true));
    // A staged tile larger than the device allows a block: an error, not a launch failure.
    let huge = Tuning {
        staged: Some(ShapeChoice::new(1024, 64)),
        ..Tuning::default()
    };
    assert!(tile_shape(4, &hopper(), &huge, Purpose::Staged).is_err());
    let big = Tuning {
        tile: Some(ShapeChoice::new(1024, 64)),
        ..Tuning::default()
    };
    assert!(tile_shape(4, &hopper(), &big, Purpose::Tiles).is_err());
}

#[test]
fn select_shapes_fit_and_keep_a_bit_per_item() {
    for size in [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 100, 256, 700, 1400] {
        let s = select_shape(size, &hopper()).unwrap();
        assert!(s.items <= 16 && s.block >= 32, "size {size}: {s:?}");
        assert!((s.block as usize / 32) * 33 * s.items as usize * size + 64 <= 48 * 1024);
        assert_eq!(s.layout, StateLayout::Packed64);
    }
    assert_eq!(select_shape(4, &hopper()).unwrap().tile(), 4096);
    assert!(select_shape(2000, &hopper()).is_err());
}

#[test]
fn staged_select_shapes_are_whole_chunks_per_thread() {
    let t = Tuning::default();
    for size in [1, 2, 4, 8, 16] {
        let s = select_staged_shape(size, &hopper(), &t).unwrap().unwrap();
        assert!(
            s.staged && s.items <= 32 && s.block == 128,
            "size {size}: {s:?}"
        );
        let bytes = s.tile_bytes(size);
        assert!(
            bytes <= 16 * 1024 && bytes % (16 * 128) == 0,
            "size {size}: {bytes}"
        );
        assert!(s.tma, "size {size}: {s:?}");
        let ampere = DeviceLimits::for_arch(80);
        assert!(!select_staged_shape(size, &ampere, &t).unwrap().unwrap().tma);
    }
    assert_eq!(
        select_staged_shape(4, &hopper(), &t)
            .unwrap()
            .unwrap()
            .tile(),
        4096
    );
    let turing = DeviceLimits::for_arch(75);
    assert!(select_staged_shape(4, &turing, &t).unwrap().is_none());
    assert!(select_staged_shape(12, &hopper(), &t).unwrap().is_none());
    assert!(select_staged_shape(32, &hopper(), &t).unwrap().is_none());
    for bad in ["33x32", "128x33", "128x1", "1024x32"] {
        let t = Tuning {
            select: Some(bad.parse().unwrap()),
            ..Tuning::default()
        };
        assert!(select_staged_shape(4, &hopper(), &t).is_err(), "{bad}");
    }
    let t = Tuning {
        select: Some(ShapeChoice::new(256, 16)),
        ..Tuning::default()
    };
    let s = select_staged_shape(4, &hopper(), &t).unwrap().unwrap();
    assert_eq!((s.block, s.items, s.tile()), (256, 16, 4096));
}

#[test]
fn tma_loads_staged_tiles_of_128_byte_runs_on_sm90() {
    for size in [1, 2, 4, 8, 16] {
        let s = shape(size, 90, Purpose::Staged).unwrap();
        assert!(s.staged && s.tma, "size {size}: {s:?}");
        assert_eq!(s.items as usize * size, 128);
        let state = s.tma_state_bytes(size);
        assert_eq!(s.staged_smem_bytes(size), s.tile() as usize * size + state);
        assert!(state % 16 == 0 && state >= (s.block as usize / 32 + 1) * size + 4 + 8);
        let older = shape(size, 80, Purpose::Staged).unwrap();
        assert!(older.staged && !older.tma, "size {size}: {older:?}");
        assert_eq!(older.staged_smem_bytes(size), older.tile() as usize * size);
        assert_eq!(older.min_blocks, 0);
    }
    // An H100's or H200's 228 KiB (1 KiB reserved per block) hold 5 of the TMA form's
    // 44 KiB tiles with their state (two boxes of 176 rows each), 13 of its 16 KiB tiles of
    // 1-byte elements and of the cp.async form's 16 KiB i32 tiles, and 6 of its 32 KiB tiles
    // of 16-byte elements.
    for size in [2, 4, 8, 16] {
        let s = shape(size, 90, Purpose::Staged).unwrap();
        assert_eq!((s.block, s.min_blocks), (352, 5), "{size}");
        assert_eq!((s.tma_boxes(), s.tma_rows()), (2, 176), "{size}");
    }
    let bytes = shape(1, 90, Purpose::Staged).unwrap();
    assert_eq!((bytes.block, bytes.min_blocks), (128, 13));
    assert_eq!((bytes.tma_boxes(), bytes.tma_rows()), (1, 128));
    let older = shape(4, 80, Purpose::Staged).unwrap();
    let h100 = hopper();
    assert_eq!(older.block, 128);
    assert_eq!(
        h100.blocks_per_sm(older.block, older.staged_smem_bytes(4)),
        13
    );
    let affine = shape(16, 80, Purpose::Staged).unwrap();
    assert_eq!(affine.block, 256);
    assert_eq!(
        h100.blocks_per_sm(affine.block, affine.staged_smem_bytes(16)),
        6
    );
    // Sizes that do not divide a 128-byte row keep their natural order and use the bulk
    // (non-tensor) copy on sm_90.
    let odd = shape(12, 90, Purpose::Staged).unwrap();
    assert!(odd.linear && odd.tma, "{odd:?}");
    assert!(!shape(4, 90, Purpose::SinglePass).unwrap().tma);
    let s = shape(4, 90, Purpose::Staged).unwrap();
    assert_ne!(s.name(), TileShape { tma: false, ..s }.name());
    // Tensor copies off: the cp.async form's shape on sm_90 too.
    let off = Tuning {
        tma: false,
        ..Tuning::default()
    };
    let s = tile_shape(4, &h100, &off, Purpose::Staged).unwrap();
    assert!(s.staged && !s.tma && s.block == 128, "{s:?}");
}

#[test]
fn every_element_size_up_to_128_bytes_is_staged() {
    for size in 1..=STAGED_MAX_ELEM {
        for cc in [80, 90] {
            let s = shape(size, cc, Purpose::Staged).unwrap();
            assert!(s.staged, "{size} bytes, sm_{cc}: {s:?}");
            assert_eq!(s.tile_bytes(size) % 16, 0, "{size} bytes: {s:?}");
            let limits = DeviceLimits::for_arch(cc);
            assert!(s.staged_smem_bytes(size) <= limits.shared_per_block_optin as usize);
            assert_eq!(
                s.linear,
                !size.is_power_of_two(),
                "{size} bytes, sm_{cc}: {s:?}"
            );
            // The TMA on sm_90 only: tensor copies for the swizzled layout, a bulk copy
            // for the linear one.
            assert_eq!(s.tma, cc >= 90, "{size} bytes, sm_{cc}: {s:?}");
            if s.linear {
                // Runs of about 128 bytes, an odd number of units apart where one exists.
                let run = s.items as usize * size;
                assert!((64..=256).contains(&run) || s.items == 1, "{size}: {s:?}");
                let units = run / TileShape::linear_unit(size, s.items);
                assert!(units % 2 == 1 || size % 32 == 0, "{size}: {s:?}");
                assert!(s.tile_bytes(size) <= 44 * 1024, "{size}: {s:?}");
            }
        }
    }
    assert!(
        !shape(STAGED_MAX_ELEM + 1, 90, Purpose::Staged)
            .unwrap()
            .staged
    );
    assert!(!shape(12, 75, Purpose::Staged).unwrap().staged);
}

#[test]
fn linear_groups_make_whole_words() {
    // (size, items per run or chain, elements per group, bytes per access)
    for (size, items, group, unit) in [
        (3, 44, 4, 4),
        (3, 42, 2, 2),
        (3, 43, 1, 1),
        (5, 28, 4, 4),
        (6, 22, 2, 4),
        (6, 21, 1, 2),
        (7, 20, 4, 4),
        (12, 11, 1, 4),
        (24, 5, 1, 8),
        (48, 3, 1, 16),
    ] {
        assert_eq!(
            TileShape::linear_group(size, items),
            group,
            "{size} x {items}"
        );
        assert_eq!(
            TileShape::linear_unit(size, items),
            unit,
            "{size} x {items}"
        );
    }
}

#[test]
fn linear_runs_and_residency() {
    let h100 = hopper();
    for (size, items, block) in [
        (12, 11, 320),
        (24, 5, 352),
        (48, 3, 288),
        (3, 44, 320),
        (5, 28, 320),
        (6, 22, 320),
        (7, 20, 320),
    ] {
        let s = shape(size, 90, Purpose::Staged).unwrap();
        assert_eq!((s.items, s.block), (items, block), "{size} bytes: {s:?}");
    }
    // Elements up to 16 bytes: residency bounded by shared memory (five blocks); larger
    // ones leave registers to the compiler.
    let s = shape(12, 90, Purpose::Staged).unwrap();
    assert_eq!(
        s.min_blocks,
        h100.blocks_per_sm(s.block, s.staged_smem_bytes(12))
    );
    assert_eq!(s.min_blocks, 5);
    for size in [24, 32, 64, 128] {
        assert_eq!(
            shape(size, 90, Purpose::Staged).unwrap().min_blocks,
            1,
            "{size}"
        );
    }
    for size in [32, 64, 128] {
        let s = shape(size, 90, Purpose::Staged).unwrap();
        assert!(s.tma && !s.linear && s.tma_fits(size), "{size}: {s:?}");
        assert_eq!((s.block, s.items as usize * size), (352, 128));
    }
}

#[test]
fn cheap_large_elements_take_long_runs_on_sm90() {
    let t = Tuning::default();
    let (cheap, dear) = (cheap(), dear());
    let h100 = hopper();
    for size in (20..=LONG_RUN_MAX_ELEM).step_by(4) {
        let s = staged_scan_shape(size, &cheap, &h100, &t).unwrap();
        let run = s.items as usize * size;
        assert!(s.staged && s.linear && s.tma, "{size}: {s:?}");
        assert_eq!((s.block, s.items % 2), (LONG_RUN_THREADS, 1), "{size}");
        assert!(run.abs_diff(LONG_RUN_BYTES) <= size, "{size}: {run}");
        // Three tiles an SM.
        assert!(
            h100.blocks_per_sm(s.block, s.staged_smem_bytes(size)) >= 3,
            "{size}"
        );
    }
    // Everything else keeps the shape of runs of about 128 bytes.
    let elsewhere = [
        (16, cheap, 90, t.clone()),
        (17, cheap, 90, t.clone()),
        (22, cheap, 90, t.clone()),
        (63, cheap, 90, t.clone()),
        (65, cheap, 90, t.clone()),
        (40, dear, 90, t.clone()),
        (40, cheap, 80, t.clone()),
        (
            40,
            cheap,
            90,
            Tuning {
                tma: false,
                ..t.clone()
            },
        ),
        (
            40,
            cheap,
            90,
            Tuning {
                staged: Some(ShapeChoice::new(64, 8)),
                ..t.clone()
            },
        ),
    ];
    for (size, cost, cc, tuning) in elsewhere {
        let limits = DeviceLimits::for_arch(cc);
        assert_eq!(
            staged_scan_shape(size, &cost, &limits, &tuning).unwrap(),
            tile_shape(size, &limits, &tuning, Purpose::Staged).unwrap(),
            "{size} bytes on sm_{cc}"
        );
    }
}

#[test]
fn expensive_combines_fold_in_two_chains() {
    let t = Tuning::default();
    let (cheap, dear) = (cheap(), dear());
    let s8 = shape(8, 90, Purpose::Staged).unwrap();
    assert_eq!(chains(&cheap, &t, &s8, 8), 1);
    assert_eq!(chains(&dear, &t, &s8, 8), 2);
    let four = Tuning {
        chains: Some(4),
        ..Tuning::default()
    };
    assert_eq!(chains(&cheap, &four, &s8, 8), 4);
    // 2 items of 64 bytes split into two chains; a 3-item linear run does not.
    let s64 = shape(64, 90, Purpose::Staged).unwrap();
    assert_eq!(chains(&dear, &t, &s64, 64), 2);
    assert_eq!(chains(&dear, &four, &s64, 64), 1);
    let s48 = shape(48, 90, Purpose::Staged).unwrap();
    assert_eq!(chains(&dear, &t, &s48, 48), 1);
    // Chains of whole 16-byte chunks: 128 one-byte items make 8 chains of one chunk each.
    let s1 = shape(1, 80, Purpose::Staged).unwrap();
    assert_eq!(s1.items, 128);
    let eight = Tuning {
        chains: Some(8),
        ..Tuning::default()
    };
    assert_eq!(chains(&dear, &eight, &s1, 1), 8);
}

#[test]
fn textbook_blocks() {
    assert_eq!(textbook_block(4, &hopper()).unwrap(), 1024);
    assert_eq!(textbook_block(16, &hopper()).unwrap(), 1024);
    assert_eq!(textbook_block(32, &hopper()).unwrap(), 512);
    assert!(textbook_block(1000, &hopper()).is_err());
    assert!(textbook_block(usize::MAX, &hopper()).is_err());
}
