//! What an element type looks like in memory, field by field.
//!
//! [`Element::cuda_layout`] describes a Rust element: its C++ name, size and alignment, and,
//! for structs, every field's name, offset, array lengths and type. Code generation turns the
//! description into `static_assert`s on the CUDA declaration (size, alignment, and for every
//! field its offset and its type), so a CUDA struct whose fields are in another order, or of
//! another type of the same size, fails to compile ([`crate::Error::Layout`]) instead of
//! corrupting data. `#[monoscan::operator]` reads the same description to type field accesses
//! when it translates Rust into CUDA.
//!
//! `#[derive(Element)]` writes the description; a hand-written [`Element`] describes its
//! fields with [`Layout::structure`] and [`FieldLayout::new`]:
//!
//! ```
//! use monoscan::layout::{FieldLayout, Layout};
//! use monoscan::Element;
//! use std::mem::offset_of;
//!
//! #[repr(C)]
//! #[derive(Clone, Copy, Debug, PartialEq)]
//! struct Pair { lo: i32, hi: i64 }
//!
//! // SAFETY: `Pair` is `#[repr(C)]` plain data.
//! unsafe impl monoscan::DeviceRepr for Pair {}
//! // SAFETY: the definition mirrors the Rust struct field by field.
//! unsafe impl Element for Pair {
//!     fn cuda_name() -> String { "Pair".into() }
//!     fn cuda_definition() -> String { "struct Pair { int lo; long long hi; };".into() }
//!     fn cuda_layout() -> Layout {
//!         Layout::structure::<Self>(vec![
//!             FieldLayout::new::<i32>("lo", "lo", offset_of!(Pair, lo), &[]),
//!             FieldLayout::new::<i64>("hi", "hi", offset_of!(Pair, hi), &[]),
//!         ])
//!     }
//! }
//! let layout = Pair::cuda_layout();
//! assert_eq!((layout.size, layout.align), (16, 8));
//! assert_eq!(layout.field("hi").unwrap().offset, 8);
//! ```

use crate::element::Element;
use std::mem::{align_of, size_of};

/// A primitive element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `i8`, `signed char`.
    I8,
    /// `u8`, `unsigned char`.
    U8,
    /// `i16`, `short`.
    I16,
    /// `u16`, `unsigned short`.
    U16,
    /// `i32`, `int`.
    I32,
    /// `u32`, `unsigned int`.
    U32,
    /// `i64`, `long long`.
    I64,
    /// `u64`, `unsigned long long`.
    U64,
    /// `f32`, `float`.
    F32,
    /// `f64`, `double`.
    F64,
}

impl Primitive {
    /// Every primitive.
    pub const ALL: [Primitive; 10] = [
        Primitive::I8,
        Primitive::U8,
        Primitive::I16,
        Primitive::U16,
        Primitive::I32,
        Primitive::U32,
        Primitive::I64,
        Primitive::U64,
        Primitive::F32,
        Primitive::F64,
    ];

    /// The C++ type (`long long`).
    pub fn cuda_name(self) -> &'static str {
        match self {
            Primitive::I8 => "signed char",
            Primitive::U8 => "unsigned char",
            Primitive::I16 => "short",
            Primitive::U16 => "unsigned short",
            Primitive::I32 => "int",
            Primitive::U32 => "unsigned int",
            Primitive::I64 => "long long",
            Primitive::U64 => "unsigned long long",
            Primitive::F32 => "float",
            Primitive::F64 => "double",
        }
    }

    /// The Rust type (`i64`).
    pub fn rust_name(self) -> &'static str {
        match self {
            Primitive::I8 => "i8",
            Primitive::U8 => "u8",
            Primitive::I16 => "i16",
            Primitive::U16 => "u16",
            Primitive::I32 => "i32",
            Primitive::U32 => "u32",
            Primitive::I64 => "i64",
            Primitive::U64 => "u64",
            Primitive::F32 => "f32",
            Primitive::F64 => "f64",
        }
    }

    /// The width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Primitive::I8 | Primitive::U8 => 8,
            Primitive::I16 | Primitive::U16 => 16,
            Primitive::I32 | Primitive::U32 | Primitive::F32 => 32,
            Primitive::I64 | Primitive::U64 | Primitive::F64 => 64,
        }
    }

    /// `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Primitive::F32 | Primitive::F64)
    }

    /// A signed integer.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            Primitive::I8 | Primitive::I16 | Primitive::I32 | Primitive::I64
        )
    }
}

/// The layout of an element type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The C++ name ([`Element::cuda_name`]).
    pub cuda_name: String,
    /// `size_of` in Rust.
    pub size: usize,
    /// `align_of` in Rust.
    pub align: usize,
    /// What is inside.
    pub shape: Shape,
}

/// What an element type is made of.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A primitive number.
    Primitive(Primitive),
    /// A `#[repr(C)]` struct, its fields in declaration order.
    Struct(Vec<FieldLayout>),
    /// Not described: only the size and alignment are checked.
    Opaque,
}

/// One field of a struct element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldLayout {
    /// The Rust name (`total`; `0`, `1`, ... in tuple structs).
    pub name: String,
    /// The C++ member name (`total`; `f0`, `f1`, ... for tuple fields).
    pub cuda_name: String,
    /// `offset_of!` in Rust.
    pub offset: usize,
    /// Array lengths, outermost first (`[[T; 3]; 2]` is `[2, 3]`); empty for a plain field.
    pub dims: Vec<usize>,
    /// The layout of the element type (of the innermost array element, for arrays).
    pub ty: Layout,
}

impl Layout {
    /// `T`'s layout ([`Element::cuda_layout`]).
    pub fn of<T: Element>() -> Layout {
        T::cuda_layout()
    }

    /// A layout with only `T`'s name, size and alignment: what a hand-written [`Element`] gets
    /// unless it describes its fields.
    pub fn opaque<T: Element>() -> Layout {
        Layout {
            cuda_name: T::cuda_name(),
            size: size_of::<T>(),
            align: align_of::<T>(),
            shape: Shape::Opaque,
        }
    }

    /// The layout of a primitive.
    pub fn primitive<T: Element>(p: Primitive) -> Layout {
        Layout {
            cuda_name: p.cuda_name().to_string(),
            size: size_of::<T>(),
            align: align_of::<T>(),
            shape: Shape::Primitive(p),
        }
    }

    /// The layout of the struct `T` with these fields, in declaration order.
    pub fn structure<T: Element>(fields: Vec<FieldLayout>) -> Layout {
        Layout {
            cuda_name: T::cuda_name(),
            size: size_of::<T>(),
            align: align_of::<T>(),
            shape: Shape::Struct(fields),
        }
    }

    /// The primitive, if this is one.
    pub fn as_primitive(&self) -> Option<Primitive> {
        match self.shape {
            Shape::Primitive(p) => Some(p),
            _ => None,
        }
    }

    /// The fields of a struct (none for primitives and opaque types).
    pub fn fields(&self) -> &[FieldLayout] {
        match &self.shape {
            Shape::Struct(fields) => fields,
            _ => &[],
        }
    }

    /// The field with the Rust name `name`.
    pub fn field(&self, name: &str) -> Option<&FieldLayout> {
        self.fields().iter().find(|f| f.name == name)
    }

    /// This layout and every layout reachable through fields, inner ones first, each C++ name
    /// once (the order in which C++ declares them).
    pub fn all(&self) -> Vec<&Layout> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a Layout>) {
        for f in self.fields() {
            f.ty.collect(out);
        }
        if !out.iter().any(|l| l.cuda_name == self.cuda_name) {
            out.push(self);
        }
    }
}

impl FieldLayout {
    /// A field of element type `F` (the innermost element type, for arrays), at `offset`,
    /// with array lengths `dims` (outermost first; empty for a plain field).
    pub fn new<F: Element>(name: &str, cuda_name: &str, offset: usize, dims: &[usize]) -> Self {
        FieldLayout {
            name: name.to_string(),
            cuda_name: cuda_name.to_string(),
            offset,
            dims: dims.to_vec(),
            ty: F::cuda_layout(),
        }
    }

    /// The C++ type of the member, as `decltype` spells it: `short`, or `short[2][3]` for
    /// arrays.
    pub fn cuda_type(&self) -> String {
        let mut t = self.ty.cuda_name.clone();
        for d in &self.dims {
            t.push_str(&format!("[{d}]"));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Flagged, Indexed};

    #[test]
    fn primitives_describe_themselves() {
        let l = Layout::of::<u16>();
        assert_eq!(l.as_primitive(), Some(Primitive::U16));
        assert_eq!(
            (l.size, l.align, l.cuda_name.as_str()),
            (2, 2, "unsigned short")
        );
        for p in Primitive::ALL {
            assert_eq!(p.is_float(), p.rust_name().starts_with('f'));
            assert_eq!(p.is_signed_int(), p.rust_name().starts_with('i'));
        }
    }

    #[test]
    fn nested_layouts_list_inner_types_first_and_once() {
        let l = Layout::of::<Flagged<Indexed<f32>>>();
        let names: Vec<&str> = l.all().iter().map(|l| l.cuda_name.as_str()).collect();
        assert_eq!(
            names,
            [
                "float",
                "unsigned long long",
                "monoscan_indexed_float",
                "unsigned int",
                "monoscan_flagged_monoscan_indexed_float"
            ]
        );
        let value = l.field("value").unwrap();
        assert_eq!((value.offset, value.ty.size), (0, 16));
        assert_eq!(l.field("flag").unwrap().offset, 16);
    }
}
