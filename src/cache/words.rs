//! A hash map for keys of a few machine words (operator identities, kernel specs, targets):
//! the memory layer's and the loaded modules' maps. Their keys come from this process, never
//! from outside it, so a multiply-rotate hash (the Fx hash of the Rust compiler) replaces
//! SipHash, whose per-field cost is most of a memory hit.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by a few words, hashed by [`WordHasher`].
pub(crate) type WordMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// The Fx hash: each word rotated, xored in and multiplied by a constant.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash + ?Sized>(t: &T) -> u64 {
        BuildHasherDefault::<WordHasher>::default().hash_one(t)
    }

    #[test]
    fn keys_that_differ_in_one_word_hash_apart() {
        assert_ne!(hash(&(1u64, 2u32)), hash(&(2u64, 1u32)));
        assert_ne!(hash(&(0u64, true)), hash(&(0u64, false)));
        assert_ne!(hash(&[1u8, 2, 3][..]), hash(&[1u8, 2, 3, 0][..]));
        // A trailing zero byte still changes the hash of the bytes alone.
        let bytes = |b: &[u8]| {
            let mut h = WordHasher::default();
            h.write(b);
            h.finish()
        };
        assert_ne!(bytes(&[1, 2, 3]), bytes(&[1, 2, 3, 0]));
        assert_ne!(bytes(&[7; 8]), bytes(&[7; 9]));
        let mut m = WordMap::default();
        for i in 0..1000u64 {
            m.insert((i, i % 7 == 0), i);
        }
        assert_eq!(m.len(), 1000);
        assert!((0..1000u64).all(|i| m[&(i, i % 7 == 0)] == i));
    }
}
