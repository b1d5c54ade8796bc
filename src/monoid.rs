//! The operator contract: [`Monoid`] (host semantics) and [`CudaOp`] (the same operator in CUDA
//! C++).
//!
//! A monoid is a set `T` with an operation `⊕` and an element `e` such that, for all `a`, `b`,
//! `c` in `T`:
//!
//! - associativity: `(a ⊕ b) ⊕ c = a ⊕ (b ⊕ c)`
//! - left identity: `e ⊕ a = a`
//! - right identity: `a ⊕ e = a`
//!
//! Commutativity is never assumed: `combine(a, b)` means "`a` comes before `b`", and every
//! algorithm in monoscan keeps that order. [`crate::laws`] checks these equations for your
//! operator with proptest.

use crate::element::Element;
use crate::layout::Layout;

/// An associative operator with an identity, for the host and for CUDA.
///
/// `identity` and `combine` are the ground truth: every test compares GPU results with a
/// sequential fold through them. [`Monoid::cuda`] must compute the same function on the device:
/// [`macro@crate::operator`] writes it from `combine` (see its documentation and
/// [`crate::guide::operators`]); by hand, as below, it is for what needs CUDA intrinsics, and
/// [`crate::verify`] checks that it agrees.
///
/// ```
/// use monoscan::{CudaOp, Monoid};
///
/// /// Largest absolute value seen so far.
/// struct MaxAbs;
///
/// impl Monoid for MaxAbs {
///     type Elem = i64;
///     fn identity(&self) -> i64 { 0 }
///     fn combine(&self, a: &i64, b: &i64) -> i64 { (*a).max(b.unsigned_abs() as i64) }
///     fn cuda(&self) -> CudaOp {
///         CudaOp::new::<i64>("max_abs")
///             .identity("0")
///             .combine_expr("a > (b < 0 ? -b : b) ? a : (b < 0 ? -b : b)")
///     }
/// }
///
/// let xs = [3, -7, 2];
/// let total = xs.iter().fold(MaxAbs.identity(), |acc, x| MaxAbs.combine(&acc, x));
/// assert_eq!(total, 7);
/// ```
///
/// (`MaxAbs` as written is only a monoid on non-negative accumulators; `monoscan::laws` is how
/// you find such things out.)
pub trait Monoid: Send + Sync {
    /// The values combined.
    type Elem: Element;

    /// The identity `e`: `combine(e, a) == a == combine(a, e)`.
    fn identity(&self) -> Self::Elem;

    /// `a ⊕ b`, where `a` comes before `b` in sequence order.
    fn combine(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;

    /// The same operator as CUDA C++, for code generation (written by
    /// `#[monoscan::operator]`, or by hand).
    fn cuda(&self) -> CudaOp;
}

impl<M: Monoid + ?Sized> Monoid for &M {
    type Elem = M::Elem;
    fn identity(&self) -> Self::Elem {
        (**self).identity()
    }
    fn combine(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem {
        (**self).combine(a, b)
    }
    fn cuda(&self) -> CudaOp {
        (**self).cuda()
    }
}

/// A compile-time constant baked into the generated kernels (`static constexpr` in the
/// operator's struct), such as a modulus or a decay factor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// The C++ identifier, usable in `identity` and `combine`.
    pub name: String,
    /// The C++ type (`unsigned int`, `double`).
    pub ctype: String,
    /// A C++ constant expression of that type (see [`crate::literal`]).
    pub value: String,
}

/// The device side of a [`Monoid`]: CUDA C++ fragments that code generation wraps into one
/// `struct` with static `identity()` and `combine(a, b)` functions.
///
/// - `elem`: the C++ element type; [`CudaOp::new`] takes it, and its definition, from the
///   Rust [`Element`] type.
/// - `prelude`: definitions the snippets need (structs, helper functions).
/// - `identity`: an expression of type `elem`.
/// - `combine`: a function body over `const elem& a` and `const elem& b` that returns an
///   `elem`; [`CudaOp::combine_expr`] writes the `return` for you.
/// - `params`: constants baked into the kernels.
/// - `nested`: operators this one calls, each declared as a nested struct under its alias
///   (`alias::combine(x, y)`), so that lifted operators such as [`crate::ops::Segmented`]
///   compose without name clashes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CudaOp {
    /// A short name for the operator, used in kernel names (`sum_i32`).
    pub name: String,
    /// The C++ element type.
    pub elem: String,
    /// Size of the Rust element type in bytes (checked against the C++ type).
    pub elem_size: usize,
    /// Alignment of the Rust element type in bytes (checked against the C++ type).
    pub elem_align: usize,
    /// The Rust element type's layout: code generation checks the C++ type against it, field
    /// by field.
    pub layout: Layout,
    /// C++ definitions needed before the operator.
    pub prelude: String,
    /// The identity, as a C++ expression.
    pub identity: String,
    /// The body of `combine(const elem& a, const elem& b)`.
    pub combine: String,
    /// Constants baked into the kernels.
    pub params: Vec<Param>,
    /// Operators this one calls, as `(alias, op)`.
    pub nested: Vec<(String, CudaOp)>,
    /// A fused input map (see [`crate::Map`]): kernels then also come in a variant that reads
    /// the map's input type and applies the map as elements are loaded.
    pub input: Option<Box<CudaMap>>,
    /// Why this operator has no device form, when it has none: `#[monoscan::operator]` sets it
    /// when a combine cannot be translated for this instance. Rendering refuses such an
    /// operator with [`crate::Error::InvalidArgument`] and this reason.
    pub invalid: Option<String>,
}

/// The device side of a fused input map: `In -> Elem`, applied inside the kernels' loads.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CudaMap {
    /// A short name for messages (`flag_to_count`).
    pub name: String,
    /// The C++ input type.
    pub in_type: String,
    /// Size of the Rust input type.
    pub in_size: usize,
    /// Alignment of the Rust input type.
    pub in_align: usize,
    /// The Rust input type's layout, checked like [`CudaOp::layout`].
    pub in_layout: Layout,
    /// C++ definitions the map needs (the input type's, then the user's).
    pub prelude: String,
    /// The body of `apply(const in_t& x)`, returning the operator's element type.
    pub body: String,
}

impl CudaOp {
    /// Starts an operator over the Rust element type `T`, taking the C++ name, size, alignment
    /// and definitions from `T`'s [`Element`] implementation.
    pub fn new<T: Element>(name: impl Into<String>) -> Self {
        CudaOp {
            name: name.into(),
            elem: T::cuda_name(),
            elem_size: std::mem::size_of::<T>(),
            elem_align: std::mem::align_of::<T>(),
            layout: T::cuda_layout(),
            prelude: T::cuda_definition(),
            identity: String::new(),
            combine: String::new(),
            params: Vec::new(),
            nested: Vec::new(),
            input: None,
            invalid: None,
        }
    }

    /// Sets the identity expression.
    pub fn identity(mut self, expr: impl Into<String>) -> Self {
        self.identity = expr.into();
        self
    }

    /// Sets the combine body (statements ending in `return`).
    pub fn combine_body(mut self, body: impl Into<String>) -> Self {
        self.combine = body.into();
        self
    }

    /// Sets the combine body to `return (expr);`.
    pub fn combine_expr(mut self, expr: impl AsRef<str>) -> Self {
        self.combine = format!("return ({});", expr.as_ref());
        self
    }

    /// Appends C++ definitions to the prelude.
    pub fn prelude(mut self, code: impl AsRef<str>) -> Self {
        if !self.prelude.is_empty() && !self.prelude.ends_with('\n') {
            self.prelude.push('\n');
        }
        self.prelude.push_str(code.as_ref());
        self
    }

    /// Adds a baked-in constant.
    pub fn param(
        mut self,
        name: impl Into<String>,
        ctype: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.params.push(Param {
            name: name.into(),
            ctype: ctype.into(),
            value: value.into(),
        });
        self
    }

    /// Attaches a fused input map.
    pub fn with_input(mut self, map: CudaMap) -> Self {
        self.input = Some(Box::new(map));
        self
    }

    /// Declares `op` as a nested struct named `alias`, callable as `alias::combine(x, y)` and
    /// `alias::identity()`. Its prelude is included before this operator's.
    pub fn nest(mut self, alias: impl Into<String>, op: CudaOp) -> Self {
        self.nested.push((alias.into(), op));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_fills_layout_from_the_rust_type() {
        let op = CudaOp::new::<f64>("sum_f64")
            .identity("0.0")
            .combine_expr("a + b");
        assert_eq!(op.elem, "double");
        assert_eq!((op.elem_size, op.elem_align), (8, 8));
        assert_eq!(op.combine, "return (a + b);");
    }
}
