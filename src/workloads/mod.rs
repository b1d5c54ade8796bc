//! The workloads people come for, on any [`Backend`](crate::Backend) (CPU or GPU):
//!
//! - [`segmented`]: scans restarting at head flags or key changes, reductions per segment
//!   given CSR offsets (empty segments included);
//! - [`allocate`]: per-item requests to offsets, a total and owned slices; stream compaction;
//! - [`polynomial`]: Horner's rule as a scan of affine maps, at one point or many, with a
//!   compensated CPU reference for the error;
//! - [`recurrence`]: linear recurrences `x_t = a_t * x_(t-1) + b_t` (moving averages,
//!   state-space-model style filters).
//!
//! Each is an operator from [`crate::ops`] plus a little bookkeeping; `docs/workloads/` says
//! why each operator is associative.

pub mod allocate;
pub mod polynomial;
pub mod recurrence;
pub mod segmented;
