use super::*;
use crate::tuning::policy::rows::row_staged_registers;

/// The register cap `__launch_bounds__(threads, blocks)` gives a thread on sm_90: 16,384
/// registers per quarter of the SM, warps spread over the quarters, 8 registers at a time.
fn register_cap(threads: u32, blocks: u32) -> u32 {
    let per_quarter = (blocks * threads.div_ceil(32)).div_ceil(4);
    16_384 / (32 * per_quarter) / 8 * 8
}

#[test]
fn staged_row_shapes_leave_the_lifted_elements_their_registers() {
    // The caps ptxas applied: 32 for 5 x 352 and 5 x 320, 40 for 4 x 352 and 4 x 384,
    // 48 for 4 x 320, 56 for 3 x 352; the rule gives 32 for 13 x 128 and 40 for 6 x 256.
    for (threads, blocks, cap) in [
        (128, 13, 32),
        (256, 6, 40),
        (352, 5, 32),
        (320, 5, 32),
        (352, 4, 40),
        (384, 4, 40),
        (320, 4, 48),
        (352, 3, 56),
    ] {
        assert_eq!(register_cap(threads, blocks), cap, "{threads} x {blocks}");
    }
    let t = Tuning::default();
    // (value, lifted, rows, threads, blocks per SM)
    for (value, lifted, rows, block, blocks) in [
        (1, 8, 2, 128, 13),
        (2, 8, 2, 128, 13),
        (4, 8, 2, 128, 13),
        (4, 8, 1 << 20, 128, 13),
        (8, 12, 2, 256, 6),
        (8, 16, 2, 256, 6),
        (16, 20, 2, 320, 4),
        (16, 24, 2, 320, 4),
        (16, 32, 2, 320, 4),
        // One row: the 1-D staged scan's tiles.
        (1, 8, 1, 352, 5),
        (4, 8, 1, 352, 5),
        (8, 12, 1, 384, 4),
        (8, 16, 1, 384, 4),
        (16, 24, 1, 320, 4),
    ] {
        let s = row_staged_shape(value, lifted, rows, &hopper(), &t)
            .unwrap()
            .unwrap();
        assert!(s.staged && s.tma, "{value}/{lifted}: {s:?}");
        assert_eq!(
            (s.block, s.min_blocks),
            (block, blocks),
            "{value}/{lifted} x {rows}"
        );
        assert_eq!(s.items as usize * value, 128);
        assert!(s.tma_fits(value));
        assert_eq!(s.layout, StateLayout::for_size(lifted));
        let smem = s.row_staged_smem_bytes(value, lifted, false);
        assert!(hopper().blocks_per_sm(s.block, smem) >= s.min_blocks);
        let (registers, _) = row_staged_registers(lifted, rows);
        assert!(
            register_cap(s.block, s.min_blocks) >= registers,
            "{value}/{lifted} x {rows}"
        );
        // The block state holds lifted warp sums and prefix, a tile number and an mbarrier;
        // for rows given by offsets also two row numbers and a bit per value.
        let state = s.row_staged_state_bytes(lifted, false);
        assert!(
            state >= (s.block as usize / 32 + 1) * lifted + 4 + 16,
            "{value}/{lifted}"
        );
        let marked = s.row_staged_state_bytes(lifted, true);
        assert!(
            marked >= state + 16 + s.tile() as usize / 8 + 4,
            "{value}/{lifted}"
        );
        // Rows given by offsets: the same tile, as many blocks as their registers and shared
        // memory allow.
        let g = segment_staged_shape(value, lifted, rows, &hopper(), &t)
            .unwrap()
            .unwrap();
        assert_eq!((g.block, g.items, g.layout), (s.block, s.items, s.layout));
        assert!(
            register_cap(g.block, g.min_blocks) >= registers && g.min_blocks <= s.min_blocks,
            "{value}/{lifted} x {rows}: {g:?}"
        );
        let smem = g.row_staged_smem_bytes(value, lifted, true);
        assert!(hopper().blocks_per_sm(g.block, smem) >= g.min_blocks);
        // sm_80: cp.async, a tile of values only, whatever the rows.
        let a = row_staged_shape(value, lifted, rows, &DeviceLimits::for_arch(80), &t)
            .unwrap()
            .unwrap();
        assert!(a.staged && !a.tma && a.min_blocks == 0);
        assert_eq!(
            a.row_staged_smem_bytes(value, lifted, true),
            a.tile_bytes(value)
        );
    }
    assert!(row_staged_shape(12, 16, 2, &hopper(), &t)
        .unwrap()
        .is_none());
    assert!(row_staged_shape(4, 8, 2, &DeviceLimits::for_arch(75), &t)
        .unwrap()
        .is_none());
    // A tuning's shape is taken as it is.
    let own = Tuning {
        staged: Some(ShapeChoice::new(352, 16)),
        ..Tuning::default()
    };
    let s = row_staged_shape(8, 16, 2, &hopper(), &own)
        .unwrap()
        .unwrap();
    assert_eq!((s.block, s.items, s.min_blocks), (352, 16, 5));
}
