//! `#[derive(Element)]`: validating the struct (on `syn`) and writing its impls (with
//! `quote`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Expr, Fields, GenericParam, Ident, Member, Type};

/// What the code generator needs from a struct.
pub struct Input {
    /// The Rust name.
    pub ident: Ident,
    /// The C++ name, before the parameters' fragments (generic structs) are appended.
    pub cuda_base: String,
    /// The generics, bounds kept; the impls add `T: Element` for every type parameter.
    pub generics: syn::Generics,
    /// The fields, in declaration order.
    pub fields: Vec<Field>,
}

/// A field, with its array dimensions peeled off (`[[T; 3]; 2]` -> `T`, `[2, 3]`).
pub struct Field {
    /// The Rust member (`total`, or `0` in tuple structs).
    pub member: Member,
    /// The Rust name without `r#` (`type`; `0` in tuple structs).
    pub rust_name: String,
    /// The C++ member name (the Rust name, or `f0`, `f1`, ... in tuple structs).
    pub cuda_name: String,
    /// The element type.
    pub elem: Type,
    /// Array lengths, outermost first, which is also C++'s order (`T x[2][3]`).
    pub dims: Vec<Expr>,
}

fn err<T>(span: Span, message: impl std::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new(
        span,
        format!("#[derive(Element)]: {message}"),
    ))
}

/// C++ keywords (C++20, with the alternative operator spellings): not usable as names.
#[rustfmt::skip]
const CPP_KEYWORDS: &[&str] = &[
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
];

/// An ASCII identifier that is no C++ keyword.
fn is_cpp_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !CPP_KEYWORDS.contains(&s)
}

/// The C++ spelling of a Rust identifier (`r#type` -> `type`), if it has one.
fn cpp_name(ident: &Ident, what: &str) -> syn::Result<String> {
    let text = ident.unraw().to_string();
    if is_cpp_identifier(&text) {
        Ok(text)
    } else {
        err(
            ident.span(),
            format!("{what} `{text}` cannot be a C++ name (non-ASCII, or a C++ keyword)"),
        )
    }
}

/// The `#[repr(...)]` items of a struct, each with where it is written.
type Reprs = Vec<(String, Span)>;

/// `#[repr(...)]` items, and the `#[monoscan(cuda_name = "...")]` name, of the struct.
fn struct_attributes(input: &DeriveInput) -> syn::Result<(Reprs, Option<String>)> {
    let mut reprs = Vec::new();
    let mut rename = None;
    for attr in &input.attrs {
        if attr.path().is_ident("repr") {
            attr.parse_nested_meta(|meta| {
                let name = meta
                    .path
                    .get_ident()
                    .map_or("?".to_string(), Ident::to_string);
                reprs.push((name, meta.path.span()));
                if meta.input.peek(syn::token::Paren) {
                    let _skipped: TokenStream = meta.input.parse::<proc_macro2::Group>()?.stream();
                }
                Ok(())
            })?;
        } else if attr.path().is_ident("monoscan") {
            let expected = || {
                err::<()>(
                    attr.span(),
                    "expected `#[monoscan(cuda_name = \"name\")]`, the only attribute it takes",
                )
            };
            let parsed = attr.parse_nested_meta(|meta| {
                if !meta.path.is_ident("cuda_name") {
                    return Err(syn::Error::new(meta.path.span(), "unexpected key"));
                }
                let value: syn::LitStr = meta.value()?.parse()?;
                rename = Some(value.value());
                Ok(())
            });
            if parsed.is_err() || rename.is_none() {
                expected()?;
            }
            if let Some(v) = &rename {
                if !is_cpp_identifier(v) {
                    return err(
                        attr.span(),
                        format!(
                            "`cuda_name = \"{v}\"` is not a C++ identifier (or is a C++ keyword)"
                        ),
                    );
                }
            }
        }
    }
    Ok((reprs, rename))
}

/// Peels array types: `[[T; A]; B]` -> (`T`, [`B`, `A`]).
fn field_type(ty: &Type) -> syn::Result<(Type, Vec<Expr>)> {
    match ty {
        Type::Group(g) => field_type(&g.elem),
        Type::Paren(p) => field_type(&p.elem),
        Type::Slice(s) => err(s.span(), "slices have no fixed size; use an array `[T; N]`"),
        Type::Array(a) => {
            if let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) = &a.len
            {
                if n.base10_parse::<u128>().is_ok_and(|n| n == 0) {
                    return err(a.span(), "zero-length arrays have no C++ counterpart");
                }
            }
            let (elem, mut dims) = field_type(&a.elem)?;
            dims.insert(0, a.len.clone());
            Ok((elem, dims))
        }
        other => Ok((other.clone(), Vec::new())),
    }
}

/// Parses and validates a derive input.
pub fn parse(input: DeriveInput) -> syn::Result<Input> {
    let ident = input.ident.clone();
    let fields = match &input.data {
        Data::Struct(s) => &s.fields,
        Data::Enum(e) => {
            return err(
                e.enum_token.span,
                "only structs can be elements, not enums: use a #[repr(C)] struct (with an \
                 explicit tag field for a sum type)",
            )
        }
        Data::Union(u) => {
            return err(
                u.union_token.span,
                "only structs can be elements, not unions: use a #[repr(C)] struct",
            )
        }
    };
    let (reprs, rename) = struct_attributes(&input)?;
    for (item, span) in &reprs {
        let why = match item.as_str() {
            "C" => continue,
            "packed" => "the CUDA struct uses natural alignment, so field offsets would differ",
            "align" => "the CUDA struct is declared without extra alignment",
            "transparent" => "use #[repr(C)]",
            _ => "the CUDA struct mirrors #[repr(C)] layout only",
        };
        return err(*span, format!("#[repr({item})] is not supported: {why}"));
    }
    if !reprs.iter().any(|(item, _)| item == "C") {
        return err(
            ident.span(),
            format!(
                "`{ident}` needs #[repr(C)]: only repr(C) fixes the field order and padding \
                 that the generated CUDA struct mirrors"
            ),
        );
    }
    let cuda_base = match rename {
        Some(name) => name,
        None => cpp_name(&ident, "struct name").map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("{e}; rename it with #[monoscan(cuda_name = \"...\")]"),
            )
        })?,
    };
    let mut generics = input.generics.clone();
    for p in &mut generics.params {
        match p {
            GenericParam::Lifetime(l) => {
                return err(
                    l.span(),
                    "lifetime parameters are not supported: an element is 'static plain data",
                )
            }
            GenericParam::Type(t) => {
                t.default = None;
            }
            GenericParam::Const(c) => {
                c.default = None;
            }
        }
    }
    let out =
        match fields {
            Fields::Unit => {
                return err(
                    ident.span(),
                    "a unit struct is zero-sized in Rust, but an empty C++ struct has size 1",
                )
            }
            Fields::Named(_) | Fields::Unnamed(_) if fields.is_empty() => return err(
                fields.span(),
                "a struct without fields is zero-sized in Rust, but an empty C++ struct has size 1",
            ),
            _ => {
                let mut out = Vec::new();
                for (index, f) in fields.iter().enumerate() {
                    if let Some(a) = f.attrs.iter().find(|a| a.path().is_ident("monoscan")) {
                        return err(a.span(), "`#[monoscan(...)]` is not supported on fields");
                    }
                    let (member, rust_name, cuda_name) = match &f.ident {
                        Some(name) => (
                            Member::Named(name.clone()),
                            name.unraw().to_string(),
                            cpp_name(name, "field")?,
                        ),
                        None => (
                            Member::Unnamed(syn::Index {
                                index: index as u32,
                                span: f.ty.span(),
                            }),
                            index.to_string(),
                            format!("f{index}"),
                        ),
                    };
                    let (elem, dims) = field_type(&f.ty)?;
                    out.push(Field {
                        member,
                        rust_name,
                        cuda_name,
                        elem,
                        dims,
                    });
                }
                out
            }
        };
    Ok(Input {
        ident,
        cuda_base,
        generics,
        fields: out,
    })
}

/// The impls for a derive input, or a `compile_error!` where it is rejected.
pub fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<DeriveInput>(input).and_then(parse) {
        Ok(input) => generate(&input),
        Err(e) => e.to_compile_error(),
    }
}

/// `DeviceRepr`, `Element` and `ValidAsZeroBits`.
fn generate(input: &Input) -> TokenStream {
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    let type_params: Vec<Ident> = generics.type_params().map(|t| t.ident.clone()).collect();
    {
        let clause = generics.make_where_clause();
        for t in &type_params {
            clause
                .predicates
                .push(syn::parse_quote!(#t: ::monoscan::Element));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let base = &input.cuda_base;
    let name_parts = input.generics.params.iter().map(|p| match p {
        GenericParam::Type(t) => {
            let t = &t.ident;
            quote!(<#t as ::monoscan::Element>::cuda_name())
        }
        GenericParam::Const(c) => {
            let c = &c.ident;
            quote!(::std::string::ToString::to_string(&#c).replace('-', "neg"))
        }
        GenericParam::Lifetime(_) => unreachable!("rejected by parse"),
    });

    let defs = input.fields.iter().map(|f| {
        let elem = &f.elem;
        let member = format!(" {}", f.cuda_name);
        let dims = &f.dims;
        // Errors point at the field's type; the locals keep the derive's own hygiene, so that a
        // struct written by a `macro_rules!` expansion derives too.
        let span = proc_macro2::Span::call_site().located_at(elem.span());
        quote_spanned! {span=>
            let __def = <#elem as ::monoscan::Element>::cuda_definition();
            if !__defs.contains(__def.as_str()) {
                __defs.push_str(&__def);
                // The next definition's guard must start a line.
                if !__defs.is_empty() && !__defs.ends_with('\n') {
                    __defs.push('\n');
                }
            }
            __body.push(' ');
            __body.push_str(&<#elem as ::monoscan::Element>::cuda_name());
            __body.push_str(#member);
            #(
                __body.push('[');
                __body.push_str(&::std::string::ToString::to_string(&(#dims)));
                __body.push(']');
            )*
            __body.push(';');
        }
    });
    let layouts = input.fields.iter().map(|f| {
        let (elem, member, dims) = (&f.elem, &f.member, &f.dims);
        let (rust_name, cuda_name) = (&f.rust_name, &f.cuda_name);
        quote! {
            ::monoscan::layout::FieldLayout::new::<#elem>(
                #rust_name,
                #cuda_name,
                ::core::mem::offset_of!(Self, #member),
                &[#((#dims) as usize),*],
            )
        }
    });
    let literals = input.fields.iter().enumerate().map(|(k, f)| {
        let member = &f.member;
        let sep = (k > 0).then(|| quote!(__s.push_str(", ");));
        quote! {
            #sep
            __s.push_str(&::monoscan::__private::CudaInit::cuda_init(&self.#member)?);
        }
    });
    let zero_bounds = input.fields.iter().map(|f| {
        let elem = &f.elem;
        quote!(for<'__monoscan> #elem: ::monoscan::ValidAsZeroBits)
    });
    let zero_where = match where_clause {
        Some(w) => {
            let preds = w.predicates.iter();
            quote!(where #(#preds,)* #(#zero_bounds,)*)
        }
        None => quote!(where #(#zero_bounds,)*),
    };

    quote! {
        // SAFETY: #[derive(Element)] accepted the struct only because it is #[repr(C)] (without
        // packed or align) and every field type is an `Element`, hence itself `DeviceRepr`
        // plain data: the struct is plain data too, which cudarc may copy to and from the
        // device.
        unsafe impl #impl_generics ::monoscan::DeviceRepr for #ident #ty_generics #where_clause {}

        // SAFETY: `cuda_definition` declares a C++ struct with the same fields in the same
        // order, each of its field type's C++ twin (arrays as C arrays of the same lengths),
        // with natural alignment and no packing. Under #[repr(C)], Rust lays the struct out by
        // the same C rules, so size, alignment and field offsets match; code generation also
        // static_asserts each of them, and each field's type, from `cuda_layout`.
        unsafe impl #impl_generics ::monoscan::Element for #ident #ty_generics #where_clause {
            fn cuda_name() -> ::std::string::String {
                let mut __name = ::std::string::String::from(#base);
                #(
                    __name.push('_');
                    __name.push_str(&::monoscan::__private::ident_fragment(&#name_parts));
                )*
                __name
            }

            fn cuda_definition() -> ::std::string::String {
                let __name = <Self as ::monoscan::Element>::cuda_name();
                let mut __defs = ::std::string::String::new();
                let mut __body = ::std::string::String::from("struct ");
                __body.push_str(&__name);
                __body.push_str(" {");
                #(#defs)*
                __body.push_str(" };");
                __defs.push_str(&::monoscan::__private::guarded_definition(&__name, &__body));
                __defs
            }

            fn cuda_layout() -> ::monoscan::layout::Layout {
                ::monoscan::layout::Layout::structure::<Self>(::std::vec![#(#layouts),*])
            }

            fn cuda_literal(&self) -> ::core::option::Option<::std::string::String> {
                let mut __s = <Self as ::monoscan::Element>::cuda_name();
                __s.push('{');
                #(#literals)*
                __s.push('}');
                ::core::option::Option::Some(__s)
            }
        }

        // SAFETY: a #[repr(C)] struct whose every field is valid as all-zero bits is valid as
        // all-zero bits (padding may hold anything). The higher-ranked bounds make the impl
        // apply exactly when every field type allows it, without failing to compile when one
        // does not.
        unsafe impl #impl_generics ::monoscan::ValidAsZeroBits for #ident #ty_generics #zero_where {}
    }
}

#[cfg(test)]
mod tests;
