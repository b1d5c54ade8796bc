//! Batched scans on the GPU against the sequential CPU backend: the scans every layout runs,
//! the comparison of each value and each lane's total, and the 1-D reverse scan.

use super::{assert_same, Cmp};
use monoscan::cpu::Sequential;
use monoscan::lanes::{LaneScan, Lanes};
use monoscan::{ApproxEq, Backend, Gpu, Monoid};
use std::fmt::Debug;

/// Inclusive, exclusive from one value, exclusive from one value per lane (of `lanes`); each
/// forward and reverse.
pub fn scans<T: Copy>(lanes: usize, init: T, each: impl Fn(usize) -> T) -> Vec<LaneScan<T>> {
    let inits: Vec<T> = (0..lanes).map(each).collect();
    let forward = [
        LaneScan::inclusive(),
        LaneScan::exclusive(init),
        LaneScan::exclusive_each(inits),
    ];
    let reverse: Vec<_> = forward.iter().cloned().map(LaneScan::reverse).collect();
    forward.into_iter().chain(reverse).collect()
}

/// Whether a GPU value (or total) of lane `lane` is close enough to the sequential one.
pub type Close<'a, T> = &'a dyn Fn(&T, &T, usize) -> bool;

/// Scans `data` as `how` says on `g` and on the sequential backend; `close(got, want, lane)`
/// compares each value (of lane `lane_of(index)`) and each lane's total. For the inclusive
/// forward scan, also the GPU's fold of each lane (`reduce_lanes`, which writes no values)
/// against those totals.
#[allow(clippy::too_many_arguments)]
pub fn check<M: Monoid>(
    g: &Gpu,
    m: &M,
    lanes: &Lanes,
    data: &[M::Elem],
    how: &LaneScan<M::Elem>,
    what: &str,
    lane_of: &dyn Fn(usize) -> usize,
    close: Close<M::Elem>,
) where
    M::Elem: Debug,
{
    let (mut got, mut want) = (data.to_vec(), data.to_vec());
    let totals = g.scan_lanes(m, lanes, &mut got, how).unwrap();
    let want_totals = Sequential.scan_lanes(m, lanes, &mut want, how).unwrap();
    if let Some(i) = (0..got.len()).find(|&i| !close(&got[i], &want[i], lane_of(i))) {
        panic!(
            "{what} {lanes:?} {how:?}: value {i} (lane {}) is {:?}, want {:?}",
            lane_of(i),
            got[i],
            want[i]
        );
    }
    if let Some(l) = (0..totals.len()).find(|&l| !close(&totals[l], &want_totals[l], l)) {
        panic!(
            "{what} {lanes:?} {how:?}: total {l} is {:?}, want {:?}",
            totals[l], want_totals[l]
        );
    }
    if how.init.is_none() && !how.reverse {
        let folds = g.reduce_lanes(m, lanes, data).unwrap();
        assert_eq!(folds.len(), want_totals.len(), "{what} {lanes:?}: folds");
        if let Some(l) = (0..folds.len()).find(|&l| !close(&folds[l], &want_totals[l], l)) {
            panic!(
                "{what} {lanes:?}: reduce_lanes gave {:?} for lane {l}, want {:?}",
                folds[l], want_totals[l]
            );
        }
    }
}

/// The reverse scans of `xs` as one lane (the 1-D reverse scan): inclusive, and exclusive from
/// `init` with its total, on `g` against the sequential backend, each value and the total
/// compared as `cmp` says.
pub fn reverse_1d<M: Monoid>(g: &Gpu, m: &M, xs: &[M::Elem], init: M::Elem, cmp: Cmp, what: &str)
where
    M::Elem: ApproxEq + Debug + PartialEq,
{
    let lanes = Lanes::rows(1, xs.len());
    for how in [
        LaneScan::inclusive().reverse(),
        LaneScan::exclusive(init).reverse(),
    ] {
        let who = format!("{what} n={}: {how:?}", xs.len());
        let (mut got, mut want) = (xs.to_vec(), xs.to_vec());
        let total = g
            .scan_lanes(m, &lanes, &mut got, &how)
            .unwrap_or_else(|e| panic!("{who}: {e}"));
        let want_total = Sequential.scan_lanes(m, &lanes, &mut want, &how).unwrap();
        assert_same(&who, &got, &want, cmp);
        assert_same(&format!("{who} (total)"), &total, &want_total, cmp);
    }
}
