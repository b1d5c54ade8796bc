//! One cheap combine at every element size: `bytes-N` is N bytes of lane-wise affine maps with
//! a shared slope, in words of the widest unsigned type (u32, u16 or u8) that divides N, so
//! that elements keep the alignment of their words (1, 2 or 4 bytes, never more). Word 0 is
//! the slope, word k > 0 the offset of lane k; composing in sequence order multiplies the
//! slopes and maps the offsets: `(s, o) . (t, p) = (s t, o t + p)` lane by lane, modulo the
//! word. Exact and, from two words on, not commutative, at one multiply-add per word: what the
//! element's bytes cost to move, not its arithmetic, bounds it on a GPU.
//!
//! ```
//! use monoscan::bench::classes::{self, Bytes3, Class, Lanes3};
//! use monoscan::cpu::Parallel;
//! use monoscan::Monoid;
//! # fn main() -> monoscan::Result<()> {
//! assert_eq!(std::mem::size_of::<Bytes3>(), 3);
//! let f = Bytes3 { w: [3, 1, 2] };
//! let g = Bytes3 { w: [5, 7, 9] };
//! assert_eq!(Lanes3.combine(&f, &g).w, [15, 12, 19]);
//! assert_ne!(Lanes3.combine(&f, &g), Lanes3.combine(&g, &f));
//! let xs = Lanes3.generate(10_000, 1);
//! assert!(classes::check(&Parallel::default(), &Lanes3, &xs)?.is_none());
//! # Ok(())
//! # }
//! ```

use super::{generate, Class, Exact, Rng};
use crate::monoid::{CudaOp, Monoid};
use crate::Element;

/// A word of the lanes: wrapping arithmetic, as C++ computes it on the type's unsigned twin.
trait Word: Copy {
    /// The C++ type.
    const CUDA: &'static str;
    fn mul_add(self, slope: Self, offset: Self) -> Self;
    fn mul(self, slope: Self) -> Self;
    /// An odd slope (a unit modulo the word, so that long products never vanish).
    fn slope(r: &mut Rng) -> Self;
    fn offset(r: &mut Rng) -> Self;
}

macro_rules! word {
    ($($t:ty => $c:literal),*) => {$(
        impl Word for $t {
            const CUDA: &'static str = $c;
            fn mul_add(self, slope: Self, offset: Self) -> Self {
                self.wrapping_mul(slope).wrapping_add(offset)
            }
            fn mul(self, slope: Self) -> Self {
                self.wrapping_mul(slope)
            }
            fn slope(r: &mut Rng) -> Self {
                (r.next_u32() | 1) as $t
            }
            fn offset(r: &mut Rng) -> Self {
                r.next_u32() as $t
            }
        }
    )*};
}
word!(u8 => "unsigned char", u16 => "unsigned short", u32 => "unsigned int");

/// `f` then `g`, lane by lane.
fn compose<W: Word, const N: usize>(f: &[W; N], g: &[W; N]) -> [W; N] {
    let mut out: [W; N] = std::array::from_fn(|k| f[k].mul_add(g[0], g[k]));
    out[0] = f[0].mul(g[0]);
    out
}

/// The CUDA form: the same composition, on `unsigned int` so that no narrow word is promoted
/// to a signed `int` that could overflow.
fn cuda<W: Word, E: Element>(name: &str, n: usize) -> CudaOp {
    let (w, elem) = (W::CUDA, E::cuda_name());
    let identity = std::iter::once("1")
        .chain(std::iter::repeat_n("0", n - 1))
        .collect::<Vec<_>>()
        .join(", ");
    CudaOp::new::<E>(name)
        .identity(format!("{elem}{{{{{identity}}}}}"))
        .combine_body(format!(
            "{elem} r;\n\
             const unsigned int s = b.w[0];\n\
             r.w[0] = ({w})((unsigned int)a.w[0] * s);\n\
             #pragma unroll\n\
             for (int k = 1; k < {n}; ++k) r.w[k] = ({w})((unsigned int)a.w[k] * s + (unsigned int)b.w[k]);\n\
             return r;"
        ))
}

/// Pseudo-random maps: odd slopes, any offsets.
fn maps<W: Word, const N: usize>(n: usize, seed: u64) -> Vec<[W; N]> {
    generate(n, seed, |r| {
        let mut w = [W::slope(r); N];
        for x in w.iter_mut().skip(1) {
            *x = W::offset(r);
        }
        w
    })
}

macro_rules! sizes {
    ($($class:ident $elem:ident $name:literal: [$w:ident; $n:literal];)*) => {
        $(
            #[doc = concat!("A ", stringify!($n), "-word element of `", stringify!($w), "` (the `", $name, "` class).")]
            #[derive(Element, Clone, Copy, Debug, PartialEq, Eq)]
            #[repr(C)]
            pub struct $elem {
                /// Word 0: the slope; word k > 0: lane k's offset.
                pub w: [$w; $n],
            }

            #[doc = concat!("Lane-wise affine maps over [`", stringify!($elem), "`], composed in sequence order (the `", $name, "` class).")]
            #[derive(Clone, Copy, Debug, Default)]
            pub struct $class;

            impl Monoid for $class {
                type Elem = $elem;
                fn identity(&self) -> $elem {
                    let mut w = [0; $n];
                    w[0] = 1;
                    $elem { w }
                }
                fn combine(&self, a: &$elem, b: &$elem) -> $elem {
                    $elem { w: compose(&a.w, &b.w) }
                }
                fn cuda(&self) -> CudaOp {
                    cuda::<$w, $elem>(&$name.replace('-', "_"), $n)
                }
            }

            impl Class for $class {
                const NAME: &'static str = $name;
                const COMBINE: &'static str = "lane-wise affine maps, one multiply-add per word";
                const COMMUTATIVE: bool = $n == 1;
                type Tolerance = Exact;
                fn generate(&self, n: usize, seed: u64) -> Vec<$elem> {
                    maps::<$w, $n>(n, seed).into_iter().map(|w| $elem { w }).collect()
                }
                fn tolerance(&self, _: &[$elem]) -> Exact {
                    Exact
                }
                fn generated_tolerance(&self, _: usize) -> Exact {
                    Exact
                }
                fn agrees(&self, _: &Exact, got: &$elem, want: &$elem) -> bool {
                    got == want
                }
            }
        )*

        /// Every size class's name, in the order [`visit_sizes`] visits them.
        pub const SIZE_NAMES: [&str; [$($name),*].len()] = [$($name),*];

        /// Visits every size class, smallest element first.
        pub fn visit_sizes<V: super::Visit>(v: &mut V) -> std::result::Result<(), V::Error> {
            $(v.visit(&$class)?;)*
            Ok(())
        }
    };
}

sizes! {
    Lanes1 Bytes1 "bytes-1": [u8; 1];
    Lanes2 Bytes2 "bytes-2": [u16; 1];
    Lanes3 Bytes3 "bytes-3": [u8; 3];
    Lanes4 Bytes4 "bytes-4": [u32; 1];
    Lanes5 Bytes5 "bytes-5": [u8; 5];
    Lanes6 Bytes6 "bytes-6": [u16; 3];
    Lanes7 Bytes7 "bytes-7": [u8; 7];
    Lanes8 Bytes8 "bytes-8": [u32; 2];
    Lanes12 Bytes12 "bytes-12": [u32; 3];
    Lanes16 Bytes16 "bytes-16": [u32; 4];
    Lanes20 Bytes20 "bytes-20": [u32; 5];
    Lanes24 Bytes24 "bytes-24": [u32; 6];
    Lanes32 Bytes32 "bytes-32": [u32; 8];
    Lanes40 Bytes40 "bytes-40": [u32; 10];
    Lanes48 Bytes48 "bytes-48": [u32; 12];
    Lanes64 Bytes64 "bytes-64": [u32; 16];
}

#[cfg(test)]
mod tests {
    use super::super::{check, Visit};
    use super::*;
    use crate::cpu::Parallel;

    #[test]
    fn every_size_is_exact_and_its_element_has_the_named_size() {
        struct Sizes(Vec<(usize, usize)>);
        impl Visit for Sizes {
            type Error = crate::Error;
            fn visit<C: Class>(&mut self, class: &C) -> crate::Result<()> {
                let named: usize = C::NAME["bytes-".len()..].parse().unwrap();
                self.0.push((named, std::mem::size_of::<C::Elem>()));
                let xs = class.generate(3001, 9);
                assert!(
                    check(&Parallel::default(), class, &xs)?.is_none(),
                    "{}",
                    C::NAME
                );
                let (a, b) = (&xs[0], &xs[1]);
                let id = class.identity();
                assert_eq!(class.combine(&id, a), *a);
                assert_eq!(class.combine(a, &id), *a);
                if !C::COMMUTATIVE {
                    assert_ne!(class.combine(a, b), class.combine(b, a), "{}", C::NAME);
                }
                assert!(class.cuda().invalid.is_none());
                Ok(())
            }
        }
        let mut s = Sizes(Vec::new());
        visit_sizes(&mut s).unwrap();
        assert_eq!(s.0.len(), SIZE_NAMES.len());
        for (named, size) in s.0 {
            assert_eq!(named, size);
        }
    }
}
