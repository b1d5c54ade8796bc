//! The 64-bit modular combines: products and remainders modulo a prime below 2^32 (so that
//! every product fits 64 bits), at 16 and 24 bytes.

use super::{generate, Class, Exact};
use crate::approx::{ApproxEq, Tolerance};
use crate::monoid::{CudaOp, Monoid};
use crate::Element;

/// The largest prime below 2^32: the default modulus of both classes.
const PRIME: u64 = 4_294_967_291;

/// The affine map `x -> a*x + b` modulo a prime below 2^32, in 64-bit words.
#[derive(Element, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct ModAffine {
    /// The slope, reduced.
    pub a: u64,
    /// The offset, reduced.
    pub b: u64,
}

/// Composition of [`ModAffine`] maps modulo the parameter `p` (64-bit products and
/// remainders): exact, not commutative, expensive to compile when unrolled. Its CUDA form is a
/// snippet.
#[derive(Clone, Copy, Debug)]
pub struct AffineModP {
    /// The modulus: below 2^32, so that `a*c + d` fits 64 bits.
    pub p: u64,
}

impl Default for AffineModP {
    /// The largest prime below 2^32.
    fn default() -> Self {
        AffineModP { p: PRIME }
    }
}

impl Monoid for AffineModP {
    type Elem = ModAffine;
    fn identity(&self) -> ModAffine {
        ModAffine { a: 1, b: 0 }
    }
    fn combine(&self, f: &ModAffine, g: &ModAffine) -> ModAffine {
        ModAffine {
            a: f.a * g.a % self.p,
            b: (g.a * f.b + g.b) % self.p,
        }
    }
    fn cuda(&self) -> CudaOp {
        let t = ModAffine::cuda_name();
        CudaOp::new::<ModAffine>(format!("affine_mod_{}", self.p))
            .param("P", "unsigned long long", format!("{}ULL", self.p))
            .identity(format!("{t}{{1ULL, 0ULL}}"))
            .combine_expr(format!("{t}{{a.a * b.a % P, (b.a * a.b + b.b) % P}}"))
    }
}

impl Class for AffineModP {
    const NAME: &'static str = "affine-mod-u64";
    const COMBINE: &'static str =
        "x -> a*x + b mod p < 2^32, composed: 64-bit products and remainders";
    const COMMUTATIVE: bool = false;
    type Tolerance = Exact;
    /// Slopes in `[1, p)` (units: long products never vanish), offsets in `[0, p)`.
    fn generate(&self, n: usize, seed: u64) -> Vec<ModAffine> {
        let p = self.p;
        generate(n, seed, |r| ModAffine {
            a: 1 + r.below(p - 1),
            b: r.below(p),
        })
    }
    fn tolerance(&self, _: &[ModAffine]) -> Exact {
        Exact
    }
    fn generated_tolerance(&self, _: usize) -> Exact {
        Exact
    }
    fn agrees(&self, _: &Exact, got: &ModAffine, want: &ModAffine) -> bool {
        got == want
    }
}

/// The polynomial hash of a string, with what concatenation needs: `base^len mod p`, the hash
/// `sum of s[i] base^(len - 1 - i) mod p`, and the length.
#[derive(Element, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Hashed {
    /// `base^len mod p`.
    pub pow: u64,
    /// The hash, reduced.
    pub hash: u64,
    /// The length (modulo 2^64).
    pub len: u64,
}

/// The polynomial rolling hash of concatenated strings modulo a prime `p` below 2^32
/// (`combine(x, y)` is the hash of `x` followed by `y`: `x.hash * y.pow + y.hash`): 64-bit
/// products and remainders, exact, not commutative. Elements are residues (`pow` and `hash`
/// below `p`). The CUDA form is translated from the Rust.
#[derive(Clone, Copy, Debug)]
pub struct PolyHash {
    /// The modulus: below 2^32, so that `x.hash * y.pow + y.hash` fits 64 bits.
    pub p: u64,
    /// The base of the generated strings' hashes (the combine does not use it: `pow` carries
    /// it).
    pub base: u64,
}

impl Default for PolyHash {
    /// The largest prime below 2^32, base 131.
    fn default() -> Self {
        PolyHash {
            p: PRIME,
            base: 131,
        }
    }
}

#[crate::operator(name = "hash_mod")]
impl Monoid for PolyHash {
    type Elem = Hashed;
    fn identity(&self) -> Hashed {
        Hashed {
            pow: 1,
            hash: 0,
            len: 0,
        }
    }
    fn combine(&self, x: &Hashed, y: &Hashed) -> Hashed {
        Hashed {
            pow: x.pow * y.pow % self.p,
            hash: (x.hash * y.pow + y.hash) % self.p,
            len: x.len.wrapping_add(y.len),
        }
    }
}

impl PolyHash {
    /// The hash of one string.
    pub fn of(&self, s: &[u8]) -> Hashed {
        s.iter().fold(self.identity(), |h, &c| {
            self.combine(
                &h,
                &Hashed {
                    pow: self.base % self.p,
                    hash: u64::from(c) % self.p,
                    len: 1,
                },
            )
        })
    }
}

impl Class for PolyHash {
    const NAME: &'static str = "hash-mod-u64";
    const COMBINE: &'static str =
        "polynomial hash of concatenated strings mod p < 2^32: 64-bit products and remainders";
    const COMMUTATIVE: bool = false;
    type Tolerance = Exact;
    /// The hashes of random strings of 1 to 8 bytes.
    fn generate(&self, n: usize, seed: u64) -> Vec<Hashed> {
        generate(n, seed, |r| {
            let len = 1 + r.below(8) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| r.next_u32() as u8).collect();
            self.of(&bytes)
        })
    }
    fn tolerance(&self, _: &[Hashed]) -> Exact {
        Exact
    }
    fn generated_tolerance(&self, _: usize) -> Exact {
        Exact
    }
    fn agrees(&self, _: &Exact, got: &Hashed, want: &Hashed) -> bool {
        got == want
    }
}

impl ApproxEq for ModAffine {
    fn approx_eq(&self, other: &Self, _: Tolerance) -> bool {
        self == other
    }
}

impl ApproxEq for Hashed {
    fn approx_eq(&self, other: &Self, _: Tolerance) -> bool {
        self == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_of_a_concatenation_is_the_combine_of_the_hashes() {
        let h = PolyHash::default();
        let (a, b) = (b"monoid".as_slice(), b"scan".as_slice());
        let whole: Vec<u8> = [a, b].concat();
        assert_eq!(h.combine(&h.of(a), &h.of(b)), h.of(&whole));
        assert_ne!(h.combine(&h.of(a), &h.of(b)), h.combine(&h.of(b), &h.of(a)));
        assert_eq!(h.of(&whole).len, 10);
        // By hand: "ab" = 'a' * 131 + 'b'.
        assert_eq!(h.of(b"ab").hash, 97 * 131 + 98);
    }

    #[test]
    fn generated_elements_are_residues() {
        let h = PolyHash::default();
        assert!(h
            .generate(1000, 1)
            .iter()
            .all(|x| x.pow < h.p && x.hash < h.p && (1..=8).contains(&x.len)));
        let m = AffineModP::default();
        assert!(m
            .generate(1000, 1)
            .iter()
            .all(|x| (1..m.p).contains(&x.a) && x.b < m.p));
    }
}
