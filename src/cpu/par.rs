//! The parallel CPU backend: a blocked three-phase scan on rayon.

use super::seq;
use crate::alloc;
use crate::backend::Backend;
use crate::error::Result;
use crate::monoid::Monoid;
use rayon::prelude::*;

/// Reduce and scan on all cores with rayon, in sequence order.
///
/// The input is cut into chunks; each chunk is reduced in parallel, the chunk totals are
/// scanned sequentially into carries, and each chunk is scanned in parallel from its carry.
/// Inputs of at most `min_chunk` elements run sequentially.
#[derive(Debug, Clone, Copy)]
pub struct Parallel {
    min_chunk: usize,
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel { min_chunk: 4096 }
    }
}

impl Parallel {
    /// A backend that never cuts chunks smaller than `min_chunk` elements (tests use small
    /// values to exercise many chunks on small inputs).
    pub fn with_min_chunk(min_chunk: usize) -> Self {
        Parallel {
            min_chunk: min_chunk.max(1),
        }
    }

    fn chunk_len(&self, n: usize) -> usize {
        let pieces = rayon::current_num_threads() * 4;
        n.div_ceil(pieces).max(self.min_chunk)
    }

    fn chunk_totals<M: Monoid>(&self, m: &M, xs: &[M::Elem], chunk: usize) -> Result<Vec<M::Elem>> {
        let mut totals = alloc::with_capacity(xs.len().div_ceil(chunk))?;
        xs.par_chunks(chunk)
            .map(|c| seq::reduce(m, c))
            .collect_into_vec(&mut totals);
        Ok(totals)
    }
}

impl Backend for Parallel {
    fn describe(&self) -> String {
        format!("cpu (rayon, {} threads)", rayon::current_num_threads())
    }

    fn reduce<M: Monoid>(&self, m: &M, xs: &[M::Elem]) -> Result<M::Elem> {
        let chunk = self.chunk_len(xs.len());
        if xs.len() <= chunk {
            return Ok(seq::reduce(m, xs));
        }
        Ok(seq::reduce(m, &self.chunk_totals(m, xs, chunk)?))
    }

    fn inclusive_scan_in_place<M: Monoid>(&self, m: &M, xs: &mut [M::Elem]) -> Result<()> {
        let chunk = self.chunk_len(xs.len());
        if xs.len() <= chunk {
            seq::inclusive_scan_in_place(m, xs);
            return Ok(());
        }
        let mut totals = self.chunk_totals(m, xs, chunk)?;
        // carries[k] = t0 ⊕ ... ⊕ t(k-1); chunk 0 has none.
        seq::inclusive_scan_in_place(m, &mut totals);
        xs.par_chunks_mut(chunk).enumerate().for_each(|(k, c)| {
            let carry = k.checked_sub(1).map(|j| totals[j]);
            seq::inclusive_scan_from(m, c, carry);
        });
        Ok(())
    }

    fn exclusive_scan_in_place<M: Monoid>(
        &self,
        m: &M,
        xs: &mut [M::Elem],
        init: M::Elem,
    ) -> Result<M::Elem> {
        let chunk = self.chunk_len(xs.len());
        if xs.len() <= chunk {
            return Ok(seq::exclusive_scan_in_place(m, xs, init));
        }
        let mut carries = self.chunk_totals(m, xs, chunk)?;
        let total = seq::exclusive_scan_in_place(m, &mut carries, init);
        xs.par_chunks_mut(chunk)
            .zip(carries.par_iter())
            .for_each(|(c, carry)| {
                seq::exclusive_scan_in_place(m, c, *carry);
            });
        Ok(total)
    }
}
