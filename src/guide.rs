//! The guides, as pages of this documentation: writing an operator, the workloads built on
//! scans, the algorithms, performance, the architecture and the kernel cache. The workload
//! pages' Rust examples are compiled and run as doc tests.
//!
//! Start with [`operators`] to write your own operator; the README's quick start and the
//! crate's front page show the calls.

#[doc = include_str!("../docs/operators.md")]
pub mod operators {}

/// Workloads built on scans, each with the operator, why it is associative, the calls and an
/// example program.
pub mod workloads {
    #[doc = include_str!("../docs/workloads/segmented.md")]
    pub mod segmented {}

    #[doc = include_str!("../docs/workloads/allocation.md")]
    pub mod allocation {}

    #[doc = include_str!("../docs/workloads/polynomial.md")]
    pub mod polynomial {}

    #[doc = include_str!("../docs/workloads/recurrence.md")]
    pub mod recurrence {}
}

#[doc = include_str!("../docs/algorithms.md")]
pub mod algorithms {}

#[doc = include_str!("../docs/performance.md")]
pub mod performance {}

#[doc = include_str!("../docs/architecture.md")]
pub mod architecture {}

#[doc = include_str!("../docs/cache.md")]
pub mod cache {}
