//! Every GPU algorithm against the sequential CPU reference (`cpu::seq`): one test per
//! (algorithm, operator), `gpu::<algorithm>::<operator>`, each running every operation of the
//! algorithm's scanner (reduce, inclusive out of place and in place, exclusive from `init`,
//! with its total, in place with its total, and the same through a fused input map, which the
//! textbook algorithms refuse) on aligned buffers and on views one element in, and for `auto`
//! also through the `Gpu`'s own `Backend` implementation; on lengths at the boundaries of warps,
//! blocks, tiles (the shapes the policy picks for this device) and hierarchy levels, 10^7 + 19,
//! and random inputs (see `common::suite`). Exact operators compare exactly; floats within
//! tolerances derived from the computation.
//!
//! Skips (printing why) without a GPU; fails instead under MONOSCAN_REQUIRE_GPU=1.

mod common;

use common::suite::{gpu_subject, suite};
use monoscan::Algorithm;

suite! {
    gpu {
        kogge_stone => gpu_subject(Algorithm::KoggeStone);
        brent_kung => gpu_subject(Algorithm::BrentKung);
        hierarchical => gpu_subject(Algorithm::Hierarchical);
        single_pass => gpu_subject(Algorithm::SinglePass);
        auto => gpu_subject(Algorithm::Auto);
    }
    cases: [core_cases];
}
