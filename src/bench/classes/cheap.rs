//! The cheap combines, exact, at element sizes from 8 to 64 bytes: sums, matrix products and
//! affine maps over integers modulo 2^32 or 2^64.

use super::{generate, Class, Exact};
use crate::approx::{ApproxEq, Tolerance};
use crate::monoid::{CudaOp, Monoid};
use crate::Element;

/// The affine map `x -> a*x + b` over integers modulo 2^32.
#[derive(Element, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Lin32 {
    /// The slope.
    pub a: u32,
    /// The offset.
    pub b: u32,
}

/// Composition of [`Lin32`] maps in sequence order (apply `a`, then `b`): exact, not
/// commutative, as cheap as an 8-byte combine gets. Its CUDA form is a snippet.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinearU32;

impl Monoid for LinearU32 {
    type Elem = Lin32;
    fn identity(&self) -> Lin32 {
        Lin32 { a: 1, b: 0 }
    }
    fn combine(&self, f: &Lin32, g: &Lin32) -> Lin32 {
        Lin32 {
            a: f.a.wrapping_mul(g.a),
            b: g.a.wrapping_mul(f.b).wrapping_add(g.b),
        }
    }
    fn cuda(&self) -> CudaOp {
        let t = Lin32::cuda_name();
        CudaOp::new::<Lin32>("linear_u32")
            .identity(format!("{t}{{1u, 0u}}"))
            .combine_expr(format!("{t}{{a.a * b.a, b.a * a.b + b.b}}"))
    }
}

impl Class for LinearU32 {
    const NAME: &'static str = "linear-u32";
    const COMBINE: &'static str = "x -> a*x + b mod 2^32, composed";
    const COMMUTATIVE: bool = false;
    type Tolerance = Exact;
    /// Odd slopes (units mod 2^32, so that products never vanish), any offset.
    fn generate(&self, n: usize, seed: u64) -> Vec<Lin32> {
        generate(n, seed, |r| Lin32 {
            a: r.next_u32() | 1,
            b: r.next_u32(),
        })
    }
    fn tolerance(&self, _: &[Lin32]) -> Exact {
        Exact
    }
    fn generated_tolerance(&self, _: usize) -> Exact {
        Exact
    }
    fn agrees(&self, _: &Exact, got: &Lin32, want: &Lin32) -> bool {
        got == want
    }
}

/// Three u32 words (12 bytes).
#[derive(Element, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct U32x3 {
    /// The first word.
    pub x: u32,
    /// The second word.
    pub y: u32,
    /// The third word.
    pub z: u32,
}

/// Three wrapping u32 sums: the cheapest 12-byte combine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum3U32;

#[crate::operator(name = "sum3_u32")]
impl Monoid for Sum3U32 {
    type Elem = U32x3;
    fn identity(&self) -> U32x3 {
        U32x3 { x: 0, y: 0, z: 0 }
    }
    fn combine(&self, a: &U32x3, b: &U32x3) -> U32x3 {
        U32x3 {
            x: a.x.wrapping_add(b.x),
            y: a.y.wrapping_add(b.y),
            z: a.z.wrapping_add(b.z),
        }
    }
}

impl Class for Sum3U32 {
    const NAME: &'static str = "sum3-u32";
    const COMBINE: &'static str = "three wrapping u32 sums";
    const COMMUTATIVE: bool = true;
    type Tolerance = Exact;
    fn generate(&self, n: usize, seed: u64) -> Vec<U32x3> {
        generate(n, seed, |r| U32x3 {
            x: r.next_u32(),
            y: r.next_u32(),
            z: r.next_u32(),
        })
    }
    fn tolerance(&self, _: &[U32x3]) -> Exact {
        Exact
    }
    fn generated_tolerance(&self, _: usize) -> Exact {
        Exact
    }
    fn agrees(&self, _: &Exact, got: &U32x3, want: &U32x3) -> bool {
        got == want
    }
}

/// Three u64 words (24 bytes).
#[derive(Element, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct U64x3 {
    /// The first word.
    pub x: u64,
    /// The second word.
    pub y: u64,
    /// The third word.
    pub z: u64,
}

/// Three wrapping u64 sums: the cheapest 24-byte combine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum3U64;

#[crate::operator(name = "sum3_u64")]
impl Monoid for Sum3U64 {
    type Elem = U64x3;
    fn identity(&self) -> U64x3 {
        U64x3 { x: 0, y: 0, z: 0 }
    }
    fn combine(&self, a: &U64x3, b: &U64x3) -> U64x3 {
        U64x3 {
            x: a.x.wrapping_add(b.x),
            y: a.y.wrapping_add(b.y),
            z: a.z.wrapping_add(b.z),
        }
    }
}

impl Class for Sum3U64 {
    const NAME: &'static str = "sum3-u64";
    const COMBINE: &'static str = "three wrapping u64 sums";
    const COMMUTATIVE: bool = true;
    type Tolerance = Exact;
    fn generate(&self, n: usize, seed: u64) -> Vec<U64x3> {
        generate(n, seed, |r| U64x3 {
            x: r.next_u64(),
            y: r.next_u64(),
            z: r.next_u64(),
        })
    }
    fn tolerance(&self, _: &[U64x3]) -> Exact {
        Exact
    }
    fn generated_tolerance(&self, _: usize) -> Exact {
        Exact
    }
    fn agrees(&self, _: &Exact, got: &U64x3, want: &U64x3) -> bool {
        got == want
    }
}

/// A 2x2 matrix of u64 words, row by row (32 bytes).
#[derive(Element, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Mat64 {
    /// Row 0, column 0.
    pub m00: u64,
    /// Row 0, column 1.
    pub m01: u64,
    /// Row 1, column 0.
    pub m10: u64,
    /// Row 1, column 1.
    pub m11: u64,
}

/// The product of 2x2 matrices modulo 2^64 in sequence order (`combine(a, b) = a b`): exact,
/// not commutative, 8 multiplications and 4 additions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mat2U64;

#[crate::operator(name = "mat2_u64")]
impl Monoid for Mat2U64 {
    type Elem = Mat64;
    fn identity(&self) -> Mat64 {
        Mat64 {
            m00: 1,
            m01: 0,
            m10: 0,
            m11: 1,
        }
    }
    fn combine(&self, a: &Mat64, b: &Mat64) -> Mat64 {
        Mat64 {
            m00: a
                .m00
                .wrapping_mul(b.m00)
                .wrapping_add(a.m01.wrapping_mul(b.m10)),
            m01: a
                .m00
                .wrapping_mul(b.m01)
                .wrapping_add(a.m01.wrapping_mul(b.m11)),
            m10: a
                .m10
                .wrapping_mul(b.m00)
                .wrapping_add(a.m11.wrapping_mul(b.m10)),
            m11: a
                .m10
                .wrapping_mul(b.m01)
                .wrapping_add(a.m11.wrapping_mul(b.m11)),
        }
    }
}

impl Class for Mat2U64 {
    const NAME: &'static str = "mat2-u64";
    const COMBINE: &'static str = "2x2 matrix product mod 2^64";
    const COMMUTATIVE: bool = false;
    type Tolerance = Exact;
    /// Matrices with an odd determinant (odd diagonal, even upper corner): invertible modulo
    /// 2^64, so that long products never collapse to zero.
    fn generate(&self, n: usize, seed: u64) -> Vec<Mat64> {
        generate(n, seed, |r| Mat64 {
            m00: r.next_u64() | 1,
            m01: r.next_u64() & !1,
            m10: r.next_u64(),
            m11: r.next_u64() | 1,
        })
    }
    fn tolerance(&self, _: &[Mat64]) -> Exact {
        Exact
    }
    fn generated_tolerance(&self, _: usize) -> Exact {
        Exact
    }
    fn agrees(&self, _: &Exact, got: &Mat64, want: &Mat64) -> bool {
        got == want
    }
}

/// Three affine maps `x -> a[i]*x + b[i]` over integers modulo 2^64 (48 bytes).
#[derive(Element, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Affine3 {
    /// The slopes.
    pub a: [u64; 3],
    /// The offsets.
    pub b: [u64; 3],
}

/// Composition of three affine maps modulo 2^64 lane by lane, in sequence order (apply `f`,
/// then `g`): exact, not commutative.
#[derive(Clone, Copy, Debug, Default)]
pub struct Affine3U64;

#[crate::operator(name = "affine3_u64")]
impl Monoid for Affine3U64 {
    type Elem = Affine3;
    fn identity(&self) -> Affine3 {
        Affine3 {
            a: [1, 1, 1],
            b: [0, 0, 0],
        }
    }
    fn combine(&self, f: &Affine3, g: &Affine3) -> Affine3 {
        Affine3 {
            a: [
                f.a[0].wrapping_mul(g.a[0]),
                f.a[1].wrapping_mul(g.a[1]),
                f.a[2].wrapping_mul(g.a[2]),
            ],
            b: [
                g.a[0].wrapping_mul(f.b[0]).wrapping_add(g.b[0]),
                g.a[1].wrapping_mul(f.b[1]).wrapping_add(g.b[1]),
                g.a[2].wrapping_mul(f.b[2]).wrapping_add(g.b[2]),
            ],
        }
    }
}

impl Class for Affine3U64 {
    const NAME: &'static str = "affine3-u64";
    const COMBINE: &'static str = "three maps x -> a*x + b mod 2^64, composed lane by lane";
    const COMMUTATIVE: bool = false;
    type Tolerance = Exact;
    /// Odd slopes (units mod 2^64), any offsets.
    fn generate(&self, n: usize, seed: u64) -> Vec<Affine3> {
        generate(n, seed, |r| Affine3 {
            a: [r.next_u64() | 1, r.next_u64() | 1, r.next_u64() | 1],
            b: [r.next_u64(), r.next_u64(), r.next_u64()],
        })
    }
    fn tolerance(&self, _: &[Affine3]) -> Exact {
        Exact
    }
    fn generated_tolerance(&self, _: usize) -> Exact {
        Exact
    }
    fn agrees(&self, _: &Exact, got: &Affine3, want: &Affine3) -> bool {
        got == want
    }
}

/// Eight u64 words (64 bytes).
#[derive(Element, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct U64x8 {
    /// The words.
    pub v: [u64; 8],
}

/// Eight wrapping u64 sums: the cheapest 64-byte combine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum8U64;

#[crate::operator(name = "sum8_u64")]
impl Monoid for Sum8U64 {
    type Elem = U64x8;
    fn identity(&self) -> U64x8 {
        U64x8 { v: [0; 8] }
    }
    fn combine(&self, a: &U64x8, b: &U64x8) -> U64x8 {
        U64x8 {
            v: [
                a.v[0].wrapping_add(b.v[0]),
                a.v[1].wrapping_add(b.v[1]),
                a.v[2].wrapping_add(b.v[2]),
                a.v[3].wrapping_add(b.v[3]),
                a.v[4].wrapping_add(b.v[4]),
                a.v[5].wrapping_add(b.v[5]),
                a.v[6].wrapping_add(b.v[6]),
                a.v[7].wrapping_add(b.v[7]),
            ],
        }
    }
}

impl Class for Sum8U64 {
    const NAME: &'static str = "sum8-u64";
    const COMBINE: &'static str = "eight wrapping u64 sums";
    const COMMUTATIVE: bool = true;
    type Tolerance = Exact;
    fn generate(&self, n: usize, seed: u64) -> Vec<U64x8> {
        generate(n, seed, |r| U64x8 {
            v: [0; 8].map(|_| r.next_u64()),
        })
    }
    fn tolerance(&self, _: &[U64x8]) -> Exact {
        Exact
    }
    fn generated_tolerance(&self, _: usize) -> Exact {
        Exact
    }
    fn agrees(&self, _: &Exact, got: &U64x8, want: &U64x8) -> bool {
        got == want
    }
}

macro_rules! exact_approx {
    ($($t:ty),*) => {$(
        impl ApproxEq for $t {
            fn approx_eq(&self, other: &Self, _: Tolerance) -> bool {
                self == other
            }
        }
    )*};
}
exact_approx!(Lin32, U32x3, U64x3, Mat64, Affine3, U64x8);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_non_commutative_classes_are_not_commutative() {
        let m = Mat2U64.generate(2, 1);
        assert_ne!(Mat2U64.combine(&m[0], &m[1]), Mat2U64.combine(&m[1], &m[0]));
        let f = Affine3U64.generate(2, 1);
        assert_ne!(
            Affine3U64.combine(&f[0], &f[1]),
            Affine3U64.combine(&f[1], &f[0])
        );
        let l = LinearU32.generate(2, 1);
        assert_ne!(
            LinearU32.combine(&l[0], &l[1]),
            LinearU32.combine(&l[1], &l[0])
        );
    }

    #[test]
    fn products_of_generated_factors_stay_invertible() {
        // Odd determinants and odd slopes: a product of many factors is odd in the same
        // places, so long scans never collapse to zero.
        let ms = Mat2U64.generate(10_000, 5);
        let p = crate::cpu::seq::reduce(&Mat2U64, &ms);
        let det = p
            .m00
            .wrapping_mul(p.m11)
            .wrapping_sub(p.m01.wrapping_mul(p.m10));
        assert_eq!(det & 1, 1, "{p:?}");
        let fs = Affine3U64.generate(10_000, 5);
        let q = crate::cpu::seq::reduce(&Affine3U64, &fs);
        assert!(q.a.iter().all(|a| a & 1 == 1), "{q:?}");
    }

    #[test]
    fn the_translated_combines_keep_rusts_semantics() {
        let mat = Mat2U64.cuda();
        assert!(mat.invalid.is_none(), "{:?}", mat.invalid);
        // Wrapping products are computed in unsigned 64-bit arithmetic.
        assert!(
            mat.combine.contains("unsigned long long"),
            "{}",
            mat.combine
        );
        let sum8 = Sum8U64.cuda();
        assert!(sum8.invalid.is_none(), "{:?}", sum8.invalid);
        assert_eq!(sum8.elem_size, 64);
    }
}
