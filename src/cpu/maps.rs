//! Input maps on the CPU: `output[at] = f(input[at])` at every offset of a layout's lanes, in
//! memory order, on one thread or on all, without touching the elements between lanes.

use crate::element::Element;
use crate::lanes::Lanes;
use crate::map::Map;
use rayon::prelude::*;

/// Elements a parallel task maps at least.
const MIN_TASK: usize = 4096;

/// The lanes' three dimensions as `(count, stride)`, the largest stride first; a dimension of
/// one element gets stride 0 and comes last. Every offset is `a * s0 + b * s1 + c * s2` for
/// `a < n0`, `b < n1`, `c < n2`, and since lanes never overlap ([`Lanes::validate`]), each
/// stride steps past everything the smaller ones reach.
fn dims(lanes: &Lanes) -> [(usize, usize); 3] {
    let mut dims = [
        (lanes.outer, lanes.outer_stride),
        (lanes.len, lanes.stride),
        (lanes.inner, lanes.inner_stride),
    ]
    .map(|(n, s)| (n, if n > 1 { s } else { 0 }));
    dims.sort_by_key(|&(_, s)| std::cmp::Reverse(s));
    dims
}

/// Maps the elements `b * s1 + c * s2` of `input` into `output`: one step of the largest
/// dimension; runs of contiguous elements in one call of the map's run form.
fn map_block<In: Element, Out: Element>(
    input: &[In],
    output: &mut [Out],
    [(n1, s1), (n2, s2)]: [(usize, usize); 2],
    f: &Map<In, Out>,
) {
    for b in 0..n1 {
        let at = b * s1;
        if s2 <= 1 {
            let run = at..at + n2;
            f.apply_run(&input[run.clone()], &mut output[run]);
        } else {
            for c in 0..n2 {
                output[at + c * s2] = f.apply(&input[at + c * s2]);
            }
        }
    }
}

/// `output[at] = f(input[at])` at every offset `at` of `lanes`, on this thread. The caller
/// has checked that both buffers hold the lanes ([`Lanes::check_buffer`]).
pub(crate) fn map_lanes<In: Element, Out: Element>(
    lanes: &Lanes,
    input: &[In],
    output: &mut [Out],
    f: &Map<In, Out>,
) {
    if lanes.elements() == 0 {
        return;
    }
    let [(n0, s0), rest @ ..] = dims(lanes);
    for a in 0..n0 {
        map_block(&input[a * s0..], &mut output[a * s0..], rest, f);
    }
}

/// [`map_lanes`] on all threads: lanes that fill their span mapped as one run, others a step
/// of their largest dimension per task.
pub(crate) fn map_lanes_par<In: Element, Out: Element>(
    lanes: &Lanes,
    input: &[In],
    output: &mut [Out],
    f: &Map<In, Out>,
) {
    let span = lanes.span();
    if span == 0 {
        return;
    }
    let (input, output) = (&input[..span], &mut output[..span]);
    let [(n0, s0), rest @ ..] = dims(lanes);
    if lanes.elements() == span || n0 == 1 {
        // No gaps (or a single element): every element of the span is a lane's.
        output
            .par_chunks_mut(MIN_TASK)
            .zip(input.par_chunks(MIN_TASK))
            .for_each(|(o, i)| f.apply_run(i, o));
        return;
    }
    // Step `a` of the largest dimension lies in `[a * s0, (a + 1) * s0)`: the chunks of `s0`
    // elements (the last one shorter) part the lanes' elements.
    let per_step = rest[0].0 * rest[1].0;
    output
        .par_chunks_mut(s0)
        .zip(input.par_chunks(s0))
        .with_min_len(MIN_TASK.div_ceil(per_step))
        .for_each(|(o, i)| map_block(i, o, rest, f));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every layout shape: the map reaches each lane element once and nothing else, on one
    /// thread and on all.
    #[test]
    fn maps_reach_every_lane_element_and_nothing_else() {
        let layouts = [
            Lanes::rows(5, 7),
            Lanes::axis(&[9, 4], 0).unwrap(),
            Lanes::strided(&[6, 3], &[8, 2], 0).unwrap(),
            Lanes::strided(&[4, 5, 3], &[40, 6, 1], 1).unwrap(),
            Lanes::strided(&[4, 5, 3], &[3, 12, 1], 1).unwrap(),
            Lanes::strided(&[3, 6], &[1, 5], 1).unwrap(),
            Lanes::strided(&[1, 1], &[1, 1], 0).unwrap(),
            Lanes::rows(0, 3),
            Lanes::rows(3, 0),
        ];
        for lanes in layouts {
            let span = lanes.span();
            let mut want = vec![-1i64; span + 3];
            for l in 0..lanes.count() {
                for k in 0..lanes.len {
                    let at = lanes.offset(l, k);
                    want[at] = 2 * at as i64;
                }
            }
            let input: Vec<u32> = (0..span as u32 + 3).collect();
            let f = Map::new("twice", "2 * (long long)x", |x: &u32| 2 * i64::from(*x));
            let mut got = vec![-1i64; span + 3];
            map_lanes(&lanes, &input, &mut got, &f);
            assert_eq!(got, want, "{lanes:?}");
            let mut got = vec![-1i64; span + 3];
            map_lanes_par(&lanes, &input, &mut got, &f);
            assert_eq!(got, want, "{lanes:?}, in parallel");
        }
    }
}
