use super::*;

#[test]
fn shares_cover_all_but_less_than_one_share() {
    // Sizes around the share form's threshold and up to several GiB, for an H100's and an
    // H200's resident threads (3 blocks of 256 per SM) and a few others.
    for (threads, step) in [
        1u64,
        2,
        256,
        3 * 256 * 132,
        3 * 256 * 132 + 1,
        3 * 256 * 114,
    ]
    .into_iter()
    .flat_map(|t| [(t, 128u64), (t, 384), (t, 640)])
    {
        for bytes in [
            0u64,
            128,
            threads * 128,
            threads * 128 + 1,
            threads * 256 - 1,
            threads * 256,
            threads * 256 + 16,
            (1 << 30) + 48,
            (1 << 33) - 16,
        ] {
            let Some(s) = shares(bytes, threads, 256, step) else {
                // Too few bytes for two steps a thread, a single thread whose share would
                // be all the bytes, or shares too long for the tensor map.
                assert!(
                    bytes <= threads * step * (MIN_SHARE_STEPS - 1)
                        || threads == 1
                        || bytes / threads > i32::MAX as u64 - step,
                    "{bytes} bytes over {threads} threads"
                );
                continue;
            };
            let what = format!("{bytes} bytes over {threads} threads: {s:?}");
            assert_eq!(u64::from(s.steps) * step, s.share_bytes, "{what}");
            assert!(u64::from(s.steps) >= MIN_SHARE_STEPS, "{what}");
            assert!(s.rows >= 1 && s.rows <= threads, "{what}");
            assert!(s.tail_bytes(bytes) < s.share_bytes, "{what}");
            assert!(
                s.blocks * 256 >= s.rows && (s.blocks - 1) * 256 < s.rows,
                "{what}"
            );
        }
    }
    // Large inputs leave every thread a share and at most one share's bytes over.
    let s = shares(1 << 30, 101_376, 256, 128).unwrap();
    assert_eq!((s.steps, s.rows), (83, 101_067));
}

#[test]
fn share_steps_hold_whole_elements_and_fit_where_they_apply() {
    for size in 1..=128usize {
        let columns = TileShape::share_columns(size) as usize;
        assert_eq!(columns * 128 % size, 0, "{size}");
        assert!(
            (1..columns).all(|c| c * 128 % size != 0),
            "{size}: {columns} columns is not the fewest"
        );
        let s = shape(size, 90, Purpose::StagedReduce).unwrap();
        if s.shares_fit(size) {
            let two = s.shares_smem_bytes(size, SHARE_STAGES);
            assert!(two <= hopper().shared_per_block_optin as usize);
            assert!(s.shares_smem_bytes(size, 1) < two, "{size}");
            // The reduce stages one column per stage, whatever the element's size: three
            // blocks of 256 threads fit an SM of sm_90.
            let reduce = s.reduce_shares_smem_bytes(size);
            assert!(reduce <= two, "{size}");
            if s.block == 256 {
                assert!(
                    3 * reduce <= hopper().shared_per_sm as usize,
                    "{size}: {reduce}"
                );
            }
        }
        // Powers of two up to 128 bytes and the sizes of three columns take it on sm_90.
        if size.is_power_of_two() || [12, 24, 48].contains(&size) {
            assert!(s.shares_fit(size), "{size}: {s:?}");
        }
    }
}
