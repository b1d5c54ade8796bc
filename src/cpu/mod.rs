//! CPU execution: the sequential reference and a parallel backend on rayon.
//!
//! [`seq`] holds the definitions every other result is checked against; [`Parallel`] computes
//! the same thing with a three-phase blocked scan (reduce each chunk, scan the chunk totals,
//! scan each chunk from its carry), which keeps sequence order and so is right for
//! non-commutative operators; lanes that lie side by side across memory (columns scanned
//! down) it walks row by row in the same three phases (`columns`). Input maps are applied
//! where the elements lie (`maps`).

mod columns;
mod fold;
pub(crate) mod maps;
mod par;
pub mod seq;

pub use par::Parallel;
pub use seq::Sequential;
