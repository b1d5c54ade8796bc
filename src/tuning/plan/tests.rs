use super::*;
use crate::monoid::Monoid;
use crate::ops::{MatMulMod, Sum};

fn plan(op: &CudaOp, cc: u32) -> Plan {
    Plan::new(op, DeviceLimits::for_arch(cc), &Tuning::default())
}

#[test]
fn calls_load_the_set_of_their_size() {
    let p = plan(&Sum::<i32>::new().cuda(), 90);
    let one = p.shape(Purpose::OneTile).unwrap();
    let sp = p.shape(Purpose::SinglePass).unwrap();
    let staged = p.shape(Purpose::Staged).unwrap();
    let scan = |n, aligned| p.scan_set(Algorithm::Auto, n, aligned).unwrap();
    assert_eq!(scan(0, true), KernelSet::OneTile(one));
    assert_eq!(scan(one.tile(), true), KernelSet::OneTile(one));
    assert_eq!(scan(one.tile() + 1, true), KernelSet::OneTile(sp));
    assert_eq!(scan(sp.tile(), true), KernelSet::OneTile(sp));
    assert_eq!(scan(sp.tile() + 1, false), KernelSet::SinglePass(sp));
    // Up to 1 MiB the staged scan runs in the small-input tiles, then in the large ones.
    let small = p.small_staged_shape().unwrap().unwrap();
    assert!(small.block < staged.block && small.items == staged.items);
    assert_eq!(scan(sp.tile() + 1, true), KernelSet::StagedScan(small));
    assert_eq!(scan(1 << 18, true), KernelSet::StagedScan(small));
    assert_eq!(scan((1 << 18) + 1, true), KernelSet::StagedScan(staged));
    assert_eq!(scan(1 << 18, false), KernelSet::SinglePass(sp));
    // An autotuned shape replaces the large tiles only.
    let tuned = TileShape {
        linear: true,
        items: 31,
        block: 256,
        ..staged
    };
    p.install_tuned(tuned);
    assert_eq!(scan(1 << 18, true), KernelSet::StagedScan(small));
    assert_eq!(scan((1 << 18) + 1, true), KernelSet::StagedScan(tuned));
    let sets = p.sets(Algorithm::Auto).unwrap();
    assert!(
        sets.contains(&KernelSet::StagedScan(small))
            && sets.contains(&KernelSet::StagedScan(tuned))
    );
    // Every set a call loads is one `sets` lists.
    let all = p.sets(Algorithm::Auto).unwrap();
    for n in [0, 1, one.tile(), sp.tile(), 1 << 18, 1 << 20] {
        for set in p.sets_for(Algorithm::Auto, n).unwrap() {
            assert!(all.contains(&set), "{n}: {set:?}");
        }
        assert!(all.contains(&scan(n, false)));
    }
    assert_eq!(
        p.sets_for(Algorithm::Auto, 1 << 10).unwrap(),
        vec![
            KernelSet::OneTile(one),
            KernelSet::TiledReduce(p.shape(Purpose::Tiles).unwrap())
        ]
    );
    // Large reductions of a cheap 8-byte combine take the linear layout, smaller ones the
    // swizzled; `sets` lists both.
    let p8 = plan(&Sum::<i64>::new().cuda(), 90);
    let all = p8.sets(Algorithm::Auto).unwrap();
    let reduce = |n| p8.reduce_set(Algorithm::Auto, n).unwrap();
    let big = policy::LINEAR_REDUCE_MIN_BYTES / 8;
    let (KernelSet::StagedReduce(small), KernelSet::StagedReduce(large)) =
        (reduce(big - 1), reduce(big))
    else {
        panic!("8-byte sums take the staged reduce: {:?}", reduce(big));
    };
    assert!(!small.linear && large.linear && small.tma && large.tma);
    // Inputs of a few tiles take runs of 32 bytes; one whole tile keeps the large shape.
    let KernelSet::StagedReduce(few) = reduce(1 << 14) else {
        panic!("8-byte sums take the staged reduce: {:?}", reduce(1 << 14));
    };
    assert_eq!((few.block, few.items), (small.block, 4));
    let whole = small.tile();
    assert_eq!(reduce(whole), KernelSet::StagedReduce(small));
    for n in [0, 1 << 14, whole, big - 1, big, u64::MAX] {
        assert!(all.contains(&reduce(n)), "{n}");
        assert!(p8
            .sets_for(Algorithm::Auto, n)
            .unwrap()
            .contains(&reduce(n)));
    }
    // Expensive combines and tunings that fix the staged shape keep one staged shape.
    assert_eq!(
        plan(&MatMulMod::default().cuda(), 90)
            .small_staged_shape()
            .unwrap(),
        None
    );
    let fixed = Plan::new(
        &Sum::<i32>::new().cuda(),
        DeviceLimits::for_arch(90),
        &Tuning {
            staged: Some(crate::tuning::ShapeChoice::new(256, 32)),
            ..Tuning::default()
        },
    );
    assert_eq!(fixed.small_staged_shape().unwrap(), None);
    assert_eq!(fixed.sets(Algorithm::Auto).unwrap().len(), 5);
    // Before sm_80 there is no staged scan.
    let turing = plan(&Sum::<i32>::new().cuda(), 75);
    assert_eq!(turing.sets(Algorithm::Auto).unwrap().len(), 4);
}

#[test]
fn a_record_installs_its_shape_share_scan_and_combine_form() {
    let op = MatMulMod::default().cuda();
    for shares in [false, true] {
        let p = plan(&op, 90);
        let shape = p.shape(Purpose::Staged).unwrap();
        assert!(p.share_scan_candidate() && !p.share_scan() && p.tuned().is_none());
        let record = Record {
            shape,
            timings: Vec::new(),
            n: 1 << 26,
            shares,
            combine: shares.then_some(CombineForm::Inline),
        };
        assert_eq!(p.combine(), CombineForm::Outlined);
        assert_eq!(p.install_record(&record), shape);
        assert_eq!((p.tuned(), p.share_scan()), (Some(shape), shares));
        let form = if shares {
            CombineForm::Inline
        } else {
            CombineForm::Outlined
        };
        assert_eq!(p.combine(), form);
        assert_eq!(p.spec(KernelSet::Check).combine, form);
        // A plan keeps its first answer.
        p.install_record(&Record {
            shares: !shares,
            combine: Some(CombineForm::Outlined),
            ..record.clone()
        });
        assert_eq!((p.share_scan(), p.combine()), (shares, form));
        // A form the tuning sets is kept whatever the record says.
        let fixed = Plan::new(
            &op,
            DeviceLimits::for_arch(90),
            &Tuning {
                combine: Some(CombineForm::Outlined),
                ..Tuning::default()
            },
        );
        fixed.install_record(&Record {
            combine: Some(CombineForm::Inline),
            ..record
        });
        assert_eq!(fixed.combine(), CombineForm::Outlined);
    }
}

#[test]
fn deterministic_and_textbook_plans() {
    let op = Sum::<i32>::new().cuda();
    let det = plan(&op, 90).deterministic(true);
    let tiles = det.shape(Purpose::Tiles).unwrap();
    assert_eq!(
        det.scan_set(Algorithm::Auto, 1 << 20, true).unwrap(),
        KernelSet::ReduceThenScan(tiles)
    );
    assert_eq!(
        det.sets(Algorithm::Auto).unwrap(),
        det.sets(Algorithm::Hierarchical).unwrap()
    );
    let p = plan(&op, 90);
    let block = p.textbook_block().unwrap();
    assert_eq!(
        p.sets_for(Algorithm::BrentKung, 5).unwrap(),
        vec![
            KernelSet::BrentKung { block },
            KernelSet::TreeReduce { block }
        ]
    );
}

#[test]
fn the_plan_carries_the_combine_form() {
    let cheap = plan(&Sum::<i32>::new().cuda(), 90);
    let set = KernelSet::Check;
    assert_eq!(cheap.spec(set), KernelSpec::new(set));
    let dear = plan(&MatMulMod::default().cuda(), 90);
    assert_eq!(dear.spec(set).combine, CombineForm::Outlined);
    let forced = Plan::new(
        &MatMulMod::default().cuda(),
        DeviceLimits::for_arch(90),
        &Tuning {
            combine: Some(CombineForm::Inline),
            ..Tuning::default()
        },
    );
    assert_eq!(forced.spec(set), KernelSpec::new(set));
}

/// Every set a scan from the end of any size runs (on a buffer on 16 bytes or off them, in
/// every plan a reverse scan takes) is among `reverse_sets`, and nothing else is: no
/// reduction, no forward scan but the levels of the deterministic mode's.
#[test]
fn reverse_sets_hold_what_every_scan_from_the_end_runs() {
    let always = Tuning {
        share_scan: ShareScan::Always,
        ..Tuning::default()
    };
    for (op, cc, tuning) in [
        (Sum::<i32>::new().cuda(), 90, Tuning::default()),
        (Sum::<i32>::new().cuda(), 70, Tuning::default()),
        (MatMulMod::default().cuda(), 90, Tuning::default()),
        (MatMulMod::default().cuda(), 90, always.clone()),
        (MatMulMod::default().cuda(), 80, always.clone()),
    ] {
        for deterministic in [false, true] {
            let p =
                Plan::new(&op, DeviceLimits::for_arch(cc), &tuning).deterministic(deterministic);
            let sets = p.reverse_sets().unwrap();
            let what = format!("{} on sm_{cc}, deterministic {deterministic}", op.name);
            let one = p.shape(Purpose::OneTile).unwrap().tile();
            let large = p.shape(Purpose::Staged).unwrap().tile();
            for n in [
                1,
                one,
                one + 1,
                large,
                large + 1,
                1 << 18,
                (1 << 18) + 1,
                1 << 28,
            ] {
                for aligned in [true, false] {
                    let forward = p.scan_set(Algorithm::Auto, n, aligned).unwrap();
                    let from_end = p.from_end(forward).unwrap().unwrap();
                    assert!(sets.contains(&from_end), "{what}: {n} -> {from_end:?}");
                }
            }
            let shares = p.share_scan_set().unwrap().filter(|_| p.share_scan());
            if let Some(forward) = shares.filter(|_| !deterministic) {
                assert!(sets.contains(&forward.reversed().unwrap()), "{what}");
            }
            for s in &sets {
                let levels = deterministic && matches!(s, KernelSet::ReduceThenScan(_));
                assert!(s.reversed().is_none() || levels, "{what}: {s:?}");
                assert!(
                    !matches!(
                        s,
                        KernelSet::TiledReduce(_)
                            | KernelSet::StagedReduce(_)
                            | KernelSet::OneTile(_)
                    ),
                    "{what}: {s:?}"
                );
            }
        }
    }
    // The share scan from the end where the plan runs the share scan (sm_90, 2x2 matrices).
    let p = Plan::new(
        &MatMulMod::default().cuda(),
        DeviceLimits::for_arch(90),
        &always,
    );
    assert!(p
        .reverse_sets()
        .unwrap()
        .iter()
        .any(|s| matches!(s, KernelSet::ShareScan { reverse: true, .. })));
}

/// A map that widens narrower inputs keeps the staged scan on sm_80 and newer, in the staged
/// shape by cp.async with one chain, forwards and from the end, and the sets list it; one that
/// narrows, or inputs whose runs are not whole chunks, take the register-tile scan.
#[test]
fn widening_maps_take_the_staged_scan_and_reduce_by_cp_async() {
    use crate::map::Map;
    let flags = Map::new("flags", "x != 0 ? 1u : 0u", |x: &u8| u32::from(*x != 0));
    let narrow = Map::new("low", "(unsigned int)x", |x: &u64| *x as u32);
    let counts = Sum::<u32>::new().cuda();
    for cc in [80, 90] {
        let p = plan(&counts.clone().with_input(flags.cuda()), cc);
        assert!(p.changes_size());
        let sp = p.shape(Purpose::SinglePass).unwrap();
        let staged = p.shape(Purpose::Staged).unwrap();
        assert!(
            staged.staged && !staged.tma && staged.chains == 1,
            "sm_{cc}"
        );
        assert_eq!(p.small_staged_shape().unwrap(), None);
        for n in [sp.tile() + 1, 1 << 18, 1 << 24] {
            assert_eq!(
                p.scan_set(Algorithm::Auto, n, true).unwrap(),
                KernelSet::StagedScan(staged),
                "sm_{cc}, {n}"
            );
            assert_eq!(
                p.scan_set(Algorithm::Auto, n, false).unwrap(),
                KernelSet::SinglePass(sp)
            );
        }
        assert_eq!(
            p.from_end(KernelSet::StagedScan(staged)).unwrap(),
            Some(KernelSet::StagedScanReverse(staged))
        );
        assert!(p
            .sets(Algorithm::Auto)
            .unwrap()
            .contains(&KernelSet::StagedScan(staged)));
        assert!(p
            .reverse_sets()
            .unwrap()
            .contains(&KernelSet::StagedScanReverse(staged)));
        // Reductions through the map take the staged reduce at every size (4-byte elements
        // of cheap combines otherwise reduce in registers), in the swizzled layout by
        // cp.async, with one chain; `prepare` compiles it.
        let reduce = p.reduce_shape(1 << 30).unwrap();
        assert!(
            reduce.staged && !reduce.tma && !reduce.linear && reduce.chains == 1,
            "sm_{cc}: {reduce:?}"
        );
        assert!(policy::staged_widening(1, 4, &reduce));
        for n in [0, 1, reduce.tile() + 1, 1 << 20, 1 << 30] {
            assert_eq!(
                p.reduce_set(Algorithm::Auto, n).unwrap(),
                KernelSet::StagedReduce(reduce),
                "sm_{cc}, {n}"
            );
        }
        assert!(p
            .sets(Algorithm::Auto)
            .unwrap()
            .contains(&KernelSet::StagedReduce(reduce)));
        assert!(p.reduce_candidates().is_empty());
        // Without the map the same operator reduces in registers.
        let plain = plan(&counts, cc);
        assert!(!matches!(
            plain.reduce_set(Algorithm::Auto, 1 << 24).unwrap(),
            KernelSet::StagedReduce(_)
        ));
        let p = plan(&counts.clone().with_input(narrow.cuda()), cc);
        assert!(!p.shape(Purpose::Staged).unwrap().staged);
        assert_eq!(
            p.scan_set(Algorithm::Auto, 1 << 24, true).unwrap(),
            KernelSet::SinglePass(p.shape(Purpose::SinglePass).unwrap())
        );
        assert_eq!(
            p.reduce_set(Algorithm::Auto, 1 << 24).unwrap(),
            p.register_reduce_set().unwrap()
        );
    }
    // Runs of inputs shorter than a chunk: 2 items of 8-byte elements from bytes.
    let tiny = Tuning {
        staged: Some(crate::tuning::ShapeChoice::new(128, 2)),
        ..Tuning::default()
    };
    let wide = Map::new("wide", "(unsigned long long)x", |x: &u8| u64::from(*x));
    let op = Sum::<u64>::new().cuda().with_input(wide.cuda());
    let p = Plan::new(&op, DeviceLimits::for_arch(90), &tiny);
    assert!(!p.shape(Purpose::Staged).unwrap().staged);
    // A chosen tile must fit shared memory as the elements' stages (the module's unmapped
    // entry holds elements): 256 x 128 `u32` elements would take 384 KiB, a clear error.
    let long = Tuning {
        reduce: Some(crate::tuning::ShapeChoice::new(256, 128)),
        ..Tuning::default()
    };
    let p = Plan::new(
        &counts.clone().with_input(flags.cuda()),
        DeviceLimits::for_arch(90),
        &long,
    );
    assert!(p.reduce_shape(1 << 30).is_err());
    // Before sm_80 nothing stages.
    let p = plan(&counts.with_input(flags.cuda()), 75);
    assert!(!p.shape(Purpose::Staged).unwrap().staged);
    assert_eq!(
        p.reduce_set(Algorithm::Auto, 1 << 24).unwrap(),
        p.register_reduce_set().unwrap()
    );
}
