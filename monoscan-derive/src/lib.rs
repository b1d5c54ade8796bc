//! The macros of [monoscan](https://docs.rs/monoscan): `#[derive(Element)]` turns a
//! `#[repr(C)]` Rust struct into a monoscan element type by declaring its C++ twin, and
//! `#[monoscan::operator]` writes an operator's CUDA form from its Rust `combine`.
//!
//! Use them through the re-exports, `monoscan::Element` (the trait and the derive share the
//! name, as serde's do), `monoscan::operator` and `monoscan::device`.
//!
//! # `#[derive(Element)]`
//!
//! The derive writes `unsafe impl DeviceRepr`, `unsafe impl Element` (with the struct's
//! layout, field by field, and its values as C++ literals) and `unsafe impl ValidAsZeroBits`
//! (which applies where every field type allows all-zero bits, so `alloc_zeros` works); it
//! is sound because it only accepts layouts it can mirror exactly:
//!
//! - structs with named fields, or tuple structs (their C++ fields are `f0`, `f1`, ...);
//! - `#[repr(C)]`, and no `packed`, `align`, `transparent` or integer representations;
//! - field types that implement `Element` (primitives, the built-in element structs, other
//!   derived structs, to any depth) and arrays of them, `[T; N]` and `[[T; N]; M]`, which
//!   become C arrays (`T x[M][N]`);
//! - type parameters (bounded by `Element` in the impls) and const parameters; their
//!   values are appended to the C++ name (`Pair<f32>` is `Pair_float`), as the built-in
//!   generic elements do;
//! - `#[monoscan(cuda_name = "name")]` on the struct sets the C++ name, for Rust names that
//!   are C++ keywords or that clash with another struct of the same name.
//!
//! Enums, unions, unit and empty structs, lifetime parameters, slices, zero-length arrays,
//! and names that cannot be C++ identifiers are rejected with a `compile_error!` that says
//! why. The element must also be `Clone + Copy + Debug + PartialEq` (the trait's supertraits),
//! so derive those too.
//!
//! The C++ definition declares every field type's own definition first (nested structs
//! before their users; each is include-guarded, so a struct reached twice is declared once),
//! then the struct itself. Code generation adds `static_assert`s on its size and alignment and
//! on every field's offset and type, so a mismatch could only ever be a compile error.
//!
//! # `#[monoscan::operator]`
//!
//! On an `impl Monoid for X` block holding `identity` and `combine` (it adds `cuda`), or on an
//! inherent `impl X` block holding them and the functions `combine` calls (it adds the whole
//! `impl Monoid`). The identity is evaluated by Rust and baked in; `combine` is translated
//! into CUDA with Rust's semantics (wrapping integers, floats rounded once per operation,
//! Rust's NaN rules). What it translates, and what it refuses at compile time, is in
//! monoscan's `docs/operators.md`.

mod element;
mod operator;

/// Derives `monoscan::DeviceRepr` and `monoscan::Element` for a `#[repr(C)]` struct.
///
/// ```
/// use monoscan::{cpu::Sequential, Backend, CudaOp, Element, Monoid};
///
/// /// A running maximum and how many elements were seen.
/// #[derive(Element, Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct MaxCount {
///     max: i32,
///     count: u32,
/// }
///
/// struct Stats;
///
/// impl Monoid for Stats {
///     type Elem = MaxCount;
///     fn identity(&self) -> MaxCount {
///         MaxCount { max: i32::MIN, count: 0 }
///     }
///     fn combine(&self, a: &MaxCount, b: &MaxCount) -> MaxCount {
///         MaxCount { max: a.max.max(b.max), count: a.count + b.count }
///     }
///     fn cuda(&self) -> CudaOp {
///         // The element's C++ name, size, alignment and definition come from the derive.
///         CudaOp::new::<MaxCount>("max_count")
///             .identity("MaxCount{-2147483647 - 1, 0u}")
///             .combine_expr("MaxCount{a.max > b.max ? a.max : b.max, a.count + b.count}")
///     }
/// }
///
/// # fn main() -> monoscan::Result<()> {
/// assert_eq!(MaxCount::cuda_name(), "MaxCount");
/// let def = MaxCount::cuda_definition();
/// assert!(def.contains("struct MaxCount { int max; unsigned int count; };"));
/// let op = Stats.cuda();
/// assert_eq!((op.elem.as_str(), op.elem_size, op.elem_align), ("MaxCount", 8, 4));
///
/// let xs: Vec<MaxCount> = [3, -1, 7, 2].map(|max| MaxCount { max, count: 1 }).to_vec();
/// let cpu = Sequential.reduce(&Stats, &xs)?;
/// assert_eq!(cpu, MaxCount { max: 7, count: 4 });
///
/// // On a GPU, the same reduction runs as generated CUDA (skipped without one).
/// let gpu = match monoscan::Gpu::new(0) {
///     Err(e) if e.is_unavailable() => return Ok(()),
///     other => other?,
/// };
/// assert_eq!(gpu.reduce(&Stats, &xs)?, cpu);
/// # Ok(())
/// # }
/// ```
///
/// Generic structs name their parameters in C++, and nest:
///
/// ```
/// use monoscan::Element;
///
/// #[derive(Element, Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Pair<T: Element> { a: T, b: T }
///
/// #[derive(Element, Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Window<const N: usize> { pairs: [Pair<f32>; N], total: f64 }
///
/// assert_eq!(Pair::<u8>::cuda_name(), "Pair_unsigned_char");
/// assert_eq!(Window::<4>::cuda_name(), "Window_4");
/// let def = Window::<4>::cuda_definition();
/// assert!(def.find("struct Pair_float {").unwrap() < def.find("struct Window_4 {").unwrap());
/// assert!(def.contains("struct Window_4 { Pair_float pairs[4]; double total; };"));
/// ```
///
/// `ValidAsZeroBits` comes with the derive where every field type allows all-zero bits, so
/// `stream.alloc_zeros::<MaxCount>(n)` works; a struct with a field that does not allow them
/// still derives `Element`, without `ValidAsZeroBits`:
///
/// ```compile_fail
/// use monoscan::Element;
///
/// #[repr(C)]
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Opaque(u32);
/// // SAFETY: plain data.
/// unsafe impl monoscan::DeviceRepr for Opaque {}
/// // SAFETY: the definition mirrors the field.
/// unsafe impl Element for Opaque {
///     fn cuda_name() -> String { "opaque_t".into() }
///     fn cuda_definition() -> String { "struct opaque_t { unsigned int f0; };".into() }
/// }
///
/// #[derive(Element, Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Holder { inner: Opaque }
///
/// fn zeroable<T: monoscan::ValidAsZeroBits>() {}
/// zeroable::<Holder>(); // `Opaque` is not `ValidAsZeroBits`
/// ```
///
/// Rejected inputs fail to compile with a message naming the problem:
///
/// ```compile_fail
/// #[derive(monoscan::Element, Clone, Copy, Debug, PartialEq)]
/// struct NoRepr { a: i32 } // "#[derive(Element)]: `NoRepr` needs #[repr(C)]: ..."
/// ```
#[proc_macro_derive(Element, attributes(monoscan))]
pub fn derive_element(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    element::expand(input.into()).into()
}

/// Writes an operator's CUDA form from its Rust `identity` and `combine`.
///
/// On `impl Monoid for X` it adds `fn cuda`; on an inherent `impl X` holding `identity`,
/// `combine` and the functions `combine` calls as `Self::f(..)` or `self.f(..)`, it adds the
/// whole `impl Monoid for X`. `#[monoscan::operator(name = "mss")]` sets the operator's name
/// in kernel names (default: the type's name).
///
/// ```
/// use monoscan::{cpu::Sequential, Backend, Element, Monoid};
///
/// /// Total, best prefix, best suffix and best sum of a stretch (empty stretches count).
/// #[derive(Element, Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Mss { total: i64, prefix: i64, suffix: i64, best: i64 }
///
/// struct MaxSubarray;
///
/// #[monoscan::operator]
/// impl Monoid for MaxSubarray {
///     type Elem = Mss;
///     fn identity(&self) -> Mss { Mss { total: 0, prefix: 0, suffix: 0, best: 0 } }
///     fn combine(&self, a: &Mss, b: &Mss) -> Mss {
///         Mss {
///             total: a.total.wrapping_add(b.total),
///             prefix: a.prefix.max(a.total.wrapping_add(b.prefix)),
///             suffix: b.suffix.max(a.suffix.wrapping_add(b.total)),
///             best: a.best.max(b.best).max(a.suffix.wrapping_add(b.prefix)),
///         }
///     }
/// }
///
/// let leaf = |x: i64| Mss { total: x, prefix: x.max(0), suffix: x.max(0), best: x.max(0) };
/// let xs: Vec<Mss> = [2, -5, 3, 4, -1, 2].map(leaf).to_vec();
/// assert_eq!(Sequential.reduce(&MaxSubarray, &xs).unwrap().best, 8);
/// // The CUDA form, written from the Rust: Rust's wrapping arithmetic, in named fields.
/// let op = MaxSubarray.cuda();
/// assert!(op.combine.contains("(unsigned long long)((a).total)"), "{}", op.combine);
/// assert!(op.combine.starts_with("return Mss{"), "{}", op.combine);
/// ```
///
/// Outside the subset, compilation fails at the span:
///
/// ```compile_fail
/// # use monoscan::Monoid;
/// struct Collatz;
/// #[monoscan::operator]
/// impl Monoid for Collatz {
///     type Elem = u64;
///     fn identity(&self) -> u64 { 0 }
///     fn combine(&self, a: &u64, b: &u64) -> u64 {
///         let mut n = *a; // "bindings are immutable values: no `mut`, `ref` or `@`"
///         n.max(*b)
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn operator(
    args: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    operator::operator(args.into(), item.into()).into()
}

/// Makes a free function callable from translated operators: keeps it, and writes beside it
/// the description `#[monoscan::operator]` translates when an operator calls it.
///
/// ```
/// use monoscan::Monoid;
///
/// /// The larger magnitude, keeping its sign.
/// #[monoscan::device]
/// fn bigger(x: f64, y: f64) -> f64 {
///     if y.abs() > x.abs() { y } else { x }
/// }
///
/// struct Widest;
///
/// #[monoscan::operator]
/// impl Monoid for Widest {
///     type Elem = f64;
///     fn identity(&self) -> f64 { 0.0 }
///     fn combine(&self, a: &f64, b: &f64) -> f64 { bigger(*a, *b) }
/// }
///
/// assert_eq!(Widest.combine(&-3.0, &2.0), -3.0);
/// let op = Widest.cuda();
/// assert!(op.prelude.contains("f_bigger(const double l_x, const double l_y)"), "{}", op.prelude);
/// ```
#[proc_macro_attribute]
pub fn device(
    args: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    operator::device(args.into(), item.into()).into()
}
