//! Element types: what a monoid's values are, on the host and on the device.
//!
//! An [`Element`] is a plain `#[repr(C)]` value that cudarc can copy and pass to a kernel, plus
//! its C++ spelling and its [`Layout`]. Code generation emits `static_assert`s that the C++
//! type has the Rust type's size and alignment and, for described structs, each field's offset
//! and type, so a mismatch is a compile error ([`crate::Error::Layout`]).

use crate::layout::{Layout, Primitive};
use crate::literal;
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
/// A hand-written implementation describes its fields in [`Element::cuda_layout`] (see
/// [`crate::layout`]) to get the per-field checks; without it, only the size and alignment are
/// checked.
///
/// `usize`, `isize` and `bool` are no elements (their C++ counterparts differ in width or
/// representation); the compiler says what to use instead:
///
/// ```compile_fail,E0277
/// let op = monoscan::CudaOp::new::<usize>("count"); // `usize` is not a monoscan element type
/// ```
///
/// # Safety
///
/// The type must be `#[repr(C)]` (or a primitive), valid for any bit pattern the device
/// writes into it, and `cuda_definition` must declare a C++ type with the same fields in the
/// same order, so that its size, alignment and field offsets equal Rust's.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a monoscan element type",
    label = "not an `Element`",
    note = "derive it for a #[repr(C)] struct: #[derive(monoscan::Element, Clone, Copy, Debug, PartialEq)]",
    note = "elements are the fixed-width primitives (i8 ... u64, f32, f64) and structs of them: use `u64` for `usize`, `i64` for `isize`, `u8` for `bool`"
)]
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

    /// The Rust layout: size, alignment and, for a described struct, every field's offset and
    /// type. The default describes no fields ([`Layout::opaque`]).
    fn cuda_layout() -> Layout {
        Layout::opaque::<Self>()
    }

    /// This value as a C++ constant expression of the type (`((long long)5LL)`,
    /// `Mss{((long long)0LL), ...}`), or `None` when the type cannot spell its values (the
    /// default). `#[monoscan::operator]` bakes identities and constants in with it.
    fn cuda_literal(&self) -> Option<String> {
        None
    }
}

macro_rules! primitive_element {
    ($($t:ty => $p:ident, $lit:expr;)*) => {$(
        // SAFETY: a primitive with the same size and alignment as the named C++ type on every
        // CUDA platform (LP64).
        unsafe impl Element for $t {
            fn cuda_name() -> String { Primitive::$p.cuda_name().to_string() }
            fn cuda_layout() -> Layout { Layout::primitive::<Self>(Primitive::$p) }
            fn cuda_literal(&self) -> Option<String> {
                let spell: fn($t) -> String = $lit;
                Some(spell(*self))
            }
        }
    )*};
}

primitive_element! {
    i8 => I8, |v| literal::signed("signed char", v.into());
    u8 => U8, |v| literal::unsigned("unsigned char", v.into());
    i16 => I16, |v| literal::signed("short", v.into());
    u16 => U16, |v| literal::unsigned("unsigned short", v.into());
    i32 => I32, |v| literal::signed("int", v.into());
    u32 => U32, |v| literal::unsigned("unsigned int", v.into());
    i64 => I64, |v| literal::signed("long long", v);
    u64 => U64, |v| literal::unsigned("unsigned long long", v);
    f32 => F32, literal::f32;
    f64 => F64, literal::f64;
}

/// A C++ initialiser of an element or of an array of them (nested arrays included), for the
/// literals that `#[derive(Element)]` writes for array fields.
pub trait CudaInit {
    /// `x.cuda_literal()` for an element, `{a, b, ...}` for an array.
    fn cuda_init(&self) -> Option<String>;
}

impl<E: Element> CudaInit for E {
    fn cuda_init(&self) -> Option<String> {
        self.cuda_literal()
    }
}

impl<X: CudaInit, const N: usize> CudaInit for [X; N] {
    fn cuda_init(&self) -> Option<String> {
        let items: Option<Vec<String>> = self.iter().map(CudaInit::cuda_init).collect();
        Some(format!("{{{}}}", items?.join(", ")))
    }
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

/// `inner` (the definitions that an element's own definition needs, as their types give them,
/// with or without a final line break), then `own`: `own` starts on a line of its own, as its
/// preprocessor guard must.
pub fn nested_definition(inner: &str, own: &str) -> String {
    if inner.is_empty() || inner.ends_with('\n') {
        format!("{inner}{own}")
    } else {
        format!("{inner}\n{own}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written element whose definition ends without a line break.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct OneLine(u32);
    // SAFETY: `#[repr(C)]` plain data.
    unsafe impl cudarc::driver::DeviceRepr for OneLine {}
    // SAFETY: the definition mirrors the one field.
    unsafe impl Element for OneLine {
        fn cuda_name() -> String {
            "one_line".into()
        }
        fn cuda_definition() -> String {
            "struct one_line { unsigned int x; };".into()
        }
    }

    #[test]
    fn nested_guards_start_their_lines() {
        assert_eq!(nested_definition("", "#x\n"), "#x\n");
        assert_eq!(nested_definition("a\n", "#x\n"), "a\n#x\n");
        assert_eq!(nested_definition("a", "#x\n"), "a\n#x\n");
        let vectors = crate::ops::lanewise::Lanes::<OneLine, 2>::cuda_definition();
        assert!(
            vectors.starts_with("struct one_line { unsigned int x; };\n#ifndef "),
            "{vectors}"
        );
    }

    #[test]
    fn fragments_are_identifiers() {
        assert_eq!(ident_fragment("unsigned long long"), "unsigned_long_long");
        assert_eq!(ident_fragment("ns::T<int>"), "ns_T_int");
    }

    #[test]
    fn primitives_spell_their_values() {
        assert_eq!(
            i64::MIN.cuda_literal().unwrap(),
            literal::signed("long long", i64::MIN)
        );
        assert_eq!(7u8.cuda_literal().unwrap(), "((unsigned char)7ULL)");
        assert_eq!(0.5f32.cuda_literal().unwrap(), "0.5f");
        assert_eq!(
            [[1i16, 2], [3, 4]].cuda_init().unwrap(),
            "{{((short)1LL), ((short)2LL)}, {((short)3LL), ((short)4LL)}}"
        );
    }

    #[test]
    fn guards_are_stable() {
        let d = guarded_definition("pair_t", "struct pair_t { int a; };");
        assert!(d.starts_with("#ifndef MONOSCAN_DEF_PAIR_T\n"));
        assert!(d.trim_end().ends_with("#endif"));
    }
}
