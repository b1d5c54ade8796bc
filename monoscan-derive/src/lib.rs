//! `#[derive(Element)]` for [monoscan](https://docs.rs/monoscan): turns a `#[repr(C)]` Rust
//! struct into a monoscan element type by declaring its C++ twin.
//!
//! Use it through the re-export, `monoscan::Element` (the trait and the derive share the
//! name, as serde's do). The derive writes `unsafe impl DeviceRepr` and `unsafe impl Element`;
//! it is sound because it only accepts layouts it can mirror exactly:
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
//! then the struct itself. Code generation adds `static_assert`s on its size and alignment,
//! so a mismatch could only ever be a compile error.

mod parse;

use parse::{Error, Input};
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, TokenStream, TokenTree};

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
/// Rejected inputs fail to compile with a message naming the problem:
///
/// ```compile_fail
/// #[derive(monoscan::Element, Clone, Copy, Debug, PartialEq)]
/// struct NoRepr { a: i32 } // "#[derive(Element)]: `NoRepr` needs #[repr(C)]: ..."
/// ```
#[proc_macro_derive(Element, attributes(monoscan))]
pub fn derive_element(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand(input.into()).into()
}

/// The impls for a derive input, or a `compile_error!` where it is rejected.
fn expand(input: TokenStream) -> TokenStream {
    match parse::parse(input) {
        Ok(input) => generate(&input),
        Err(e) => compile_error(&e),
    }
}

/// `::core::compile_error! { "message" }`, pointing at the offending tokens.
fn compile_error(e: &Error) -> TokenStream {
    let mut message = Literal::string(&e.message);
    message.set_span(e.span);
    let mut body = Group::new(Delimiter::Brace, TokenTree::from(message).into());
    body.set_span(e.span);
    let mut tokens: Vec<TokenTree> = vec![
        Punct::new(':', Spacing::Joint).into(),
        Punct::new(':', Spacing::Alone).into(),
        Ident::new("core", e.span).into(),
        Punct::new(':', Spacing::Joint).into(),
        Punct::new(':', Spacing::Alone).into(),
        Ident::new("compile_error", e.span).into(),
        Punct::new('!', Spacing::Alone).into(),
        body.into(),
    ];
    for t in &mut tokens {
        if let TokenTree::Punct(p) = t {
            p.set_span(e.span);
        }
    }
    tokens.into_iter().collect()
}

/// Token streams spliced into generated source text at `__monoscan_hole_<k>` identifiers, so
/// that user types keep their spans (errors point at the field, not at the derive) and need
/// no printing and re-parsing.
#[derive(Default)]
struct Holes(Vec<TokenStream>);

impl Holes {
    fn add(&mut self, tokens: TokenStream) -> String {
        self.0.push(tokens);
        format!("__monoscan_hole_{}", self.0.len() - 1)
    }

    fn fill(&self, tokens: TokenStream) -> TokenStream {
        let mut out = TokenStream::new();
        for tt in tokens {
            match tt {
                TokenTree::Ident(i) => match i.to_string().strip_prefix("__monoscan_hole_") {
                    Some(k) => out.extend(self.0[k.parse::<usize>().unwrap()].clone()),
                    None => out.extend([TokenTree::Ident(i)]),
                },
                TokenTree::Group(g) => {
                    let mut filled = Group::new(g.delimiter(), self.fill(g.stream()));
                    filled.set_span(g.span());
                    out.extend([TokenTree::Group(filled)]);
                }
                other => out.extend([other]),
            }
        }
        out
    }
}

/// The two impls, written as source text with holes for the user's tokens.
fn generate(input: &Input) -> TokenStream {
    let mut holes = Holes::default();
    let ident = holes.add(TokenTree::Ident(input.ident.clone()).into());

    // impl<decls> ... for Name<args> where predicates, T: Element, ...
    let mut decls = Vec::new();
    let mut args = Vec::new();
    let mut bounds = Vec::new();
    let mut name = format!("{:?}", input.cuda_base);
    name = format!("let mut __name = ::std::string::String::from({name});\n");
    for p in &input.params {
        decls.push(holes.add(p.decl.clone()));
        let arg = holes.add(TokenTree::Ident(p.ident.clone()).into());
        let text = if p.is_const {
            format!("::std::string::ToString::to_string(&{arg}).replace('-', \"neg\")")
        } else {
            bounds.push(format!("{arg}: ::monoscan::Element"));
            format!("<{arg} as ::monoscan::Element>::cuda_name()")
        };
        name +=
            &format!("__name.push('_');\n__name.push_str(&::monoscan::__private::ident_fragment(&{text}));\n");
        args.push(arg);
    }
    let (impl_generics, ty_args) = match decls.is_empty() {
        true => (String::new(), String::new()),
        false => (
            format!("<{}>", decls.join(", ")),
            format!("<{}>", args.join(", ")),
        ),
    };
    if !input.predicates.is_empty() {
        bounds.insert(0, holes.add(input.predicates.clone()));
    }
    let where_clause = match bounds.is_empty() {
        true => String::new(),
        false => format!("where {}", bounds.join(", ")),
    };

    // The definition: field types' definitions (each once), then the guarded struct.
    let mut fields = String::new();
    for f in &input.fields {
        let elem = holes.add(f.elem.clone());
        let mut member = format!("{:?}", format!(" {}", f.cuda_name));
        member = format!("__body.push_str({member});\n");
        for d in &f.dims {
            member += &format!(
                "__body.push('[');\n\
                 __body.push_str(&::std::string::ToString::to_string(&({})));\n\
                 __body.push(']');\n",
                holes.add(d.clone())
            );
        }
        fields += &format!(
            "let __def = <{elem} as ::monoscan::Element>::cuda_definition();\n\
             if !__defs.contains(__def.as_str()) {{ __defs.push_str(&__def); }}\n\
             __body.push(' ');\n\
             __body.push_str(&<{elem} as ::monoscan::Element>::cuda_name());\n\
             {member}__body.push(';');\n"
        );
    }

    let code = format!(
        r#"
// SAFETY: #[derive(Element)] accepted the struct only because it is #[repr(C)] (without packed
// or align) and every field type is an `Element`, hence itself `DeviceRepr` plain data: the
// struct is plain data too, which cudarc may copy to and from the device.
unsafe impl{impl_generics} ::monoscan::DeviceRepr for {ident}{ty_args} {where_clause} {{}}

// SAFETY: `cuda_definition` declares a C++ struct with the same fields in the same order,
// each of its field type's C++ twin (arrays as C arrays of the same lengths), with natural
// alignment and no packing. Under #[repr(C)], Rust lays the struct out by the same C rules,
// so size, alignment and field offsets match. Code generation also static_asserts the size
// and alignment against `size_of`/`align_of` when a kernel over this type is compiled.
unsafe impl{impl_generics} ::monoscan::Element for {ident}{ty_args} {where_clause} {{
    fn cuda_name() -> ::std::string::String {{
        {name}
        __name
    }}

    fn cuda_definition() -> ::std::string::String {{
        let __name = <Self as ::monoscan::Element>::cuda_name();
        let mut __defs = ::std::string::String::new();
        let mut __body = ::std::string::String::from("struct ");
        __body.push_str(&__name);
        __body.push_str(" {{");
        {fields}
        __body.push_str(" }};");
        __defs.push_str(&::monoscan::__private::guarded_definition(&__name, &__body));
        __defs
    }}
}}
"#
    );
    let tokens: TokenStream = code.parse().expect("the generated impls tokenize");
    holes.fill(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expansion, without whitespace (token printing spaces tokens unpredictably).
    fn expand_str(s: &str) -> String {
        let out = expand(s.parse().unwrap()).to_string();
        out.split_whitespace().collect()
    }

    #[test]
    fn generates_both_impls_with_bounds() {
        let out = expand_str(
            "#[repr(C)] struct P<T: Copy, const N: usize = 3> where T: Send { a: [T; N], b: u8 }",
        );
        let header = "unsafeimpl<T:Copy,constN:usize>::monoscan::DeviceReprforP<T,N>\
                      whereT:Send,T:::monoscan::Element{}";
        assert!(out.starts_with(header), "{out}");
        assert!(out.contains("impl<T:Copy,constN:usize>::monoscan::ElementforP<T,N>"));
        assert!(
            out.contains("<Tas::monoscan::Element>::cuda_definition()"),
            "{out}"
        );
        assert!(out.contains("to_string(&(N))"), "array length: {out}");
        assert!(
            out.contains("to_string(&N).replace('-',\"neg\")"),
            "const param: {out}"
        );
        assert!(!out.contains("__monoscan_hole_"), "{out}");
    }

    #[test]
    fn rejections_become_compile_errors() {
        let out = expand_str("struct P { a: i32 }");
        assert!(out.starts_with("::core::compile_error!{"), "{out}");
        assert!(out.contains("`P`needs#[repr(C)]"), "{out}");
    }
}
