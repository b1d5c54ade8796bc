//! Element types: what a monoid's values are, on the host and on the device.
//!
//! An [`Element`] is a plain `#[repr(C)]` value that cudarc can copy and pass to a kernel, plus
//! its C++ spelling. Code generation emits `static_assert`s that the C++ type has the Rust
//! type's size and alignment, so a mismatch is a compile error, never silent corruption.

use cudarc::driver::DeviceRepr;
use std::fmt::Debug;

/// A value a monoid works on: copyable to the device, and spelled in C++.
///
/// Primitive integers and floats implement it; so do the element types of the built-in
/// operators. For your own `#[repr(C)]` struct, use `#[derive(monoscan::Element)]` or implement
/// it by hand:
///
/// ```
/// use monoscan::Element;
///
/// #[repr(C)]
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Pair { lo: i32, hi: i32 }
///
/// // SAFETY: `Pair` is `#[repr(C)]` with two `int` fields, exactly the C++ struct below.
/// unsafe impl monoscan::DeviceRepr for Pair {}
/// // SAFETY: the definition mirrors the Rust struct field by field.
/// unsafe impl Element for Pair {
///     fn cuda_name() -> String { "Pair".into() }
///     fn cuda_definition() -> String { "struct Pair { int lo; int hi; };".into() }
/// }
/// assert_eq!(Pair::cuda_name(), "Pair");
/// ```
///
/// # Safety
///
/// The type must be `#[repr(C)]` (or a primitive), valid for any bit pattern the device
/// writes into it, and `cuda_definition` must declare a C++ type with the same fields in the
/// same order, so that its size, alignment and field offsets equal Rust's.
pub unsafe trait Element:
    DeviceRepr + Copy + Send + Sync + Debug + PartialEq + 'static
{
    /// The C++ name of the type (`int`, `double`, `my_struct`).
    fn cuda_name() -> String;

    /// C++ definitions the name needs (struct declarations, including those of nested element
    /// types), each guarded so that repeated inclusion is harmless. Empty for primitives.
    fn cuda_definition() -> String {
        String::new()
    }
}

macro_rules! primitive_element {
    ($($t:ty => $c:literal),* $(,)?) => {$(
        // SAFETY: a primitive with the same size and alignment as the named C++ type on every
        // CUDA platform (LP64).
        unsafe impl Element for $t {
            fn cuda_name() -> String { $c.to_string() }
        }
    )*};
}

primitive_element! {
    i8 => "signed char", u8 => "unsigned char",
    i16 => "short", u16 => "unsigned short",
    i32 => "int", u32 => "unsigned int",
    i64 => "long long", u64 => "unsigned long long",
    f32 => "float", f64 => "double",
}

/// Turns a C++ type name into an identifier fragment (`unsigned int` -> `unsigned_int`), for
/// naming the structs of generic element types such as `monoscan_flagged_unsigned_int`.
pub fn ident_fragment(cuda_name: &str) -> String {
    let mut out = String::with_capacity(cuda_name.len());
    for c in cuda_name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// Wraps a struct definition in an include guard named after the struct, so that a definition
/// reached through several paths is declared once.
pub fn guarded_definition(name: &str, body: &str) -> String {
    let guard = format!("MONOSCAN_DEF_{}", ident_fragment(name).to_ascii_uppercase());
    format!("#ifndef {guard}\n#define {guard}\n{body}\n#endif\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_are_identifiers() {
        assert_eq!(ident_fragment("unsigned long long"), "unsigned_long_long");
        assert_eq!(ident_fragment("ns::T<int>"), "ns_T_int");
    }

    #[test]
    fn guards_are_stable() {
        let d = guarded_definition("pair_t", "struct pair_t { int a; };");
        assert!(d.starts_with("#ifndef MONOSCAN_DEF_PAIR_T\n"));
        assert!(d.trim_end().ends_with("#endif"));
    }
}
