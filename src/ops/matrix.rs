//! 2x2 matrix product modulo a prime: exact and not commutative.

use crate::element::{guarded_definition, CudaInit, Element};
use crate::error::{Error, Result};
use crate::layout::{FieldLayout, Layout};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// A 2x2 matrix of residues, row-major: `[m00, m01, m10, m11]`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Mat2 {
    /// Entries in row-major order.
    pub m: [u32; 4],
}

impl Mat2 {
    /// A matrix from row-major entries.
    pub const fn new(m: [u32; 4]) -> Self {
        Mat2 { m }
    }
}

// SAFETY: `#[repr(C)]` of `[u32; 4]`, matching `struct monoscan_mat2 { unsigned int m[4]; }`.
unsafe impl DeviceRepr for Mat2 {}

// SAFETY: four `u32`s; all-zero bits are the zero matrix.
unsafe impl ValidAsZeroBits for Mat2 {}

// SAFETY: the C++ struct holds the same four `unsigned int`s in the same order.
unsafe impl Element for Mat2 {
    fn cuda_name() -> String {
        "monoscan_mat2".to_string()
    }
    fn cuda_definition() -> String {
        guarded_definition(
            "monoscan_mat2",
            "struct monoscan_mat2 { unsigned int m[4]; };",
        )
    }
    fn cuda_layout() -> Layout {
        Layout::structure::<Self>(vec![FieldLayout::new::<u32>(
            "m",
            "m",
            std::mem::offset_of!(Self, m),
            &[4],
        )])
    }
    fn cuda_literal(&self) -> Option<String> {
        Some(format!("{}{{{}}}", Self::cuda_name(), self.m.cuda_init()?))
    }
}

/// The product of 2x2 matrices modulo a prime `p < 2^31`, in sequence order:
/// `combine(A, B) = A·B mod p`. Identity: the unit matrix.
///
/// Exact and not commutative, which makes it the test operator of choice for ordering bugs.
/// Entries are expected to be reduced (`< p`); the products are taken in 64 bits, so with
/// `p < 2^31` nothing overflows. Fibonacci numbers are the classic use:
///
/// ```
/// use monoscan::{ops::{Mat2, MatMulMod}, Backend, cpu::Sequential};
/// let op = MatMulMod::new(1_000_000_007).unwrap();
/// let q = Mat2::new([1, 1, 1, 0]);
/// let f = Sequential.reduce(&op, &vec![q; 10]).unwrap();
/// assert_eq!(f.m[1], 55); // F(10)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatMulMod {
    p: u32,
}

impl MatMulMod {
    /// The operator modulo `p`; `p` must be a prime below `2^31`.
    pub fn new(p: u32) -> Result<Self> {
        if !(2..1 << 31).contains(&p) {
            return Err(Error::invalid(format!(
                "matrix modulus {p} must lie in 2..2^31"
            )));
        }
        if !is_prime(p) {
            return Err(Error::invalid(format!("matrix modulus {p} is not prime")));
        }
        Ok(MatMulMod { p })
    }

    /// The modulus.
    pub fn modulus(&self) -> u32 {
        self.p
    }

    /// Reduces every entry of `m` modulo `p`.
    pub fn reduce_entries(&self, m: [u32; 4]) -> Mat2 {
        Mat2::new(m.map(|x| x % self.p))
    }
}

impl Default for MatMulMod {
    /// Modulo `1_000_000_007`.
    fn default() -> Self {
        MatMulMod { p: 1_000_000_007 }
    }
}

fn is_prime(p: u32) -> bool {
    if p < 4 {
        return p >= 2;
    }
    if p % 2 == 0 {
        return false;
    }
    let p = u64::from(p);
    (3..)
        .step_by(2)
        .take_while(|d| d * d <= p)
        .all(|d| p % d != 0)
}

impl Monoid for MatMulMod {
    type Elem = Mat2;
    fn identity(&self) -> Mat2 {
        Mat2::new([1, 0, 0, 1])
    }
    fn combine(&self, x: &Mat2, y: &Mat2) -> Mat2 {
        let p = u64::from(self.p);
        let (a, b) = (x.m.map(u64::from), y.m.map(u64::from));
        let e = |i: usize, j: usize| {
            let s = (a[2 * i] * b[j]).wrapping_add(a[2 * i + 1] * b[2 + j]);
            (s % p) as u32
        };
        Mat2::new([e(0, 0), e(0, 1), e(1, 0), e(1, 1)])
    }
    fn cuda(&self) -> CudaOp {
        CudaOp::new::<Mat2>(format!("matmod_{}", self.p))
            .param("P", "unsigned long long", format!("{}ULL", self.p))
            .identity("monoscan_mat2{{1u, 0u, 0u, 1u}}")
            .combine_body(
                "monoscan_mat2 r;\n\
                 #pragma unroll\n\
                 for (int i = 0; i < 2; ++i) {\n\
                 #pragma unroll\n\
                   for (int j = 0; j < 2; ++j) {\n\
                     unsigned long long s = (unsigned long long)a.m[2 * i] * b.m[j]\n\
                                          + (unsigned long long)a.m[2 * i + 1] * b.m[2 + j];\n\
                     r.m[2 * i + j] = (unsigned int)(s % P);\n\
                   }\n\
                 }\n\
                 return r;",
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_moduli() {
        assert!(MatMulMod::new(1).is_err());
        assert!(MatMulMod::new(15).is_err());
        assert!(MatMulMod::new(1 << 31).is_err());
        assert!(MatMulMod::new(2_147_483_647).is_ok());
    }

    #[test]
    fn not_commutative() {
        let op = MatMulMod::new(7).unwrap();
        let a = Mat2::new([1, 1, 0, 1]);
        let b = Mat2::new([1, 0, 1, 1]);
        assert_ne!(op.combine(&a, &b), op.combine(&b, &a));
    }
}
