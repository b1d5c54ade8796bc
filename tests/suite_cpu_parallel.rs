//! The parallel CPU backend against the sequential reference (`cpu::seq`), exactly for exact
//! operators and within derived tolerances for floats: one test per (setup, operator),
//! `cpu_parallel::<setup>::<operator>`, each running every operation on lengths at the chunk
//! boundaries of its setup (and on 10^6 + 3 elements where that cuts chunks of its own) and on
//! random inputs (see `common::suite`). Setups: the default; chunks of any size
//! (`with_min_chunk(1)`); and small chunks in a pool of 13 threads, where up to 52 chunks are
//! cut.

mod common;

use common::cases;
use common::suite::{check_input, suite, ParallelSubject};
use monoscan::ops::Mat2;

suite! {
    cpu_parallel {
        default => Some(ParallelSubject { min_chunk: 0, wide: false, large: true });
        min_chunk_1 => Some(ParallelSubject { min_chunk: 1, wide: false, large: false });
        min_chunk_3_in_13_threads => Some(ParallelSubject { min_chunk: 3, wide: true, large: true });
    }
    cases: [core_cases, cpu_cases];
}

/// Every length up to 100 under many chunk sizes, in the machine's pool and in a wider one, on
/// a non-commutative exact operator.
#[test]
fn every_short_length_and_chunk_size() {
    let case = cases::matmul_mod_7();
    let (all, _) = case.input(100, 4);
    for min_chunk in [1, 2, 3, 5, 8, 13, 64] {
        for wide in [false, true] {
            let subject = ParallelSubject {
                min_chunk,
                wide,
                large: false,
            };
            for n in 0..=all.len() {
                check_input(&subject, &case, &all[..n], Mat2::new([2, 3, 5, 1]));
            }
        }
    }
}
