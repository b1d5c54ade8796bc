//! Fallible host allocations: a buffer that does not fit is [`Error::OutOfMemory`] (host
//! memory), never an abort of the process.

use crate::error::{Error, Memory, Result};

/// The error for `len` elements of `T` that could not be allocated.
pub(crate) fn out_of_memory<T>(len: usize) -> Error {
    Error::OutOfMemory {
        memory: Memory::Host,
        requested: len.saturating_mul(std::mem::size_of::<T>()),
        free: 0,
        total: 0,
    }
}

/// An empty vector with room for exactly `len` elements.
pub(crate) fn with_capacity<T>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| out_of_memory::<T>(len))?;
    Ok(v)
}

/// A copy of `xs`.
pub(crate) fn to_vec<T: Clone>(xs: &[T]) -> Result<Vec<T>> {
    let mut v = with_capacity(xs.len())?;
    v.extend_from_slice(xs);
    Ok(v)
}

/// `len` copies of `x`.
pub(crate) fn filled<T: Clone>(len: usize, x: T) -> Result<Vec<T>> {
    let mut v = with_capacity(len)?;
    v.resize(len, x);
    Ok(v)
}

/// The items of `iter`, allocated once for its exact length.
pub(crate) fn collect<T>(iter: impl ExactSizeIterator<Item = T>) -> Result<Vec<T>> {
    let mut v = with_capacity(iter.len())?;
    v.extend(iter);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_are_errors() {
        let e = with_capacity::<u64>(usize::MAX / 4).unwrap_err();
        match e {
            Error::OutOfMemory {
                memory: Memory::Host,
                requested,
                ..
            } => assert_eq!(requested, usize::MAX),
            other => panic!("{other}"),
        }
        assert!(filled(isize::MAX as usize, 0u8).is_err());
        assert_eq!(to_vec(&[1, 2, 3]).unwrap(), [1, 2, 3]);
        assert_eq!(collect([4, 5].into_iter()).unwrap(), [4, 5]);
    }
}
