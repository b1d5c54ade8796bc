//! The derive on token streams: what it accepts, what it writes, and the messages of what it
//! rejects.

use super::*;

fn parse_str(s: &str) -> syn::Result<Input> {
    parse(syn::parse_str::<DeriveInput>(s).expect("test input parses"))
}

fn message(s: &str) -> String {
    match parse_str(s) {
        Ok(_) => panic!("accepted: {s}"),
        Err(e) => e.to_string(),
    }
}

fn tokens(t: &impl quote::ToTokens) -> String {
    t.to_token_stream().to_string().split_whitespace().collect()
}

/// The expansion, without whitespace (token printing spaces tokens unpredictably).
fn expand_str(s: &str) -> String {
    expand(s.parse().unwrap())
        .to_string()
        .split_whitespace()
        .collect()
}

#[test]
fn named_fields_arrays_and_visibility() {
    let s = parse_str(
        "/// doc\n#[derive(Clone)] #[repr(C)] pub(crate) struct P { pub x: f32, \
         #[doc = \"y\"] pub(super) r#type: [[u8; 3]; N * 2], z: Flagged<Foo<i32, u8>>, }",
    )
    .unwrap();
    assert_eq!(s.ident.to_string(), "P");
    assert_eq!(s.cuda_base, "P");
    let names: Vec<(&str, &str)> = s
        .fields
        .iter()
        .map(|f| (f.rust_name.as_str(), f.cuda_name.as_str()))
        .collect();
    assert_eq!(names, [("x", "x"), ("type", "type"), ("z", "z")]);
    assert_eq!(tokens(&s.fields[1].elem), "u8");
    let dims: Vec<String> = s.fields[1].dims.iter().map(tokens).collect();
    assert_eq!(dims, ["N*2", "3"]);
    assert_eq!(tokens(&s.fields[2].elem), "Flagged<Foo<i32,u8>>");
    assert!(s.generics.params.is_empty() && s.generics.where_clause.is_none());
}

#[test]
fn tuple_structs_generics_and_where_clauses() {
    let s = parse_str(
        "#[repr(C)] struct T<A: Copy + Fn() -> u8, const N: usize = 4, B = Vec<u8>>\
         (pub A, pub(crate) [B; N]) where A: Send;",
    )
    .unwrap();
    let names: Vec<(&str, &str)> = s
        .fields
        .iter()
        .map(|f| (f.rust_name.as_str(), f.cuda_name.as_str()))
        .collect();
    assert_eq!(names, [("0", "f0"), ("1", "f1")]);
    // Defaults are dropped (impls cannot have them), bounds kept.
    assert_eq!(tokens(&s.generics.params), "A:Copy+Fn()->u8,constN:usize,B");
    assert_eq!(tokens(&s.generics.where_clause), "whereA:Send");
}

#[test]
fn generates_the_three_impls_with_bounds() {
    let out = expand_str(
        "#[repr(C)] struct P<T: Copy, const N: usize = 3> where T: Send { a: [T; N], b: u8 }",
    );
    assert!(
        out.contains(
            "unsafeimpl<T:Copy,constN:usize>::monoscan::DeviceReprforP<T,N>\
             whereT:Send,T:::monoscan::Element{}"
        ),
        "{out}"
    );
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
    // The layout names every field with its offset and array lengths.
    assert!(
        out.contains(
            "FieldLayout::new::<T>(\"a\",\"a\",::core::mem::offset_of!(Self,a),&[(N)asusize],)"
        ),
        "{out}"
    );
    assert!(out.contains("offset_of!(Self,b),&[],)"), "{out}");
    // Zeroed allocations where every field allows them.
    assert!(
        out.contains(
            "::monoscan::ValidAsZeroBitsforP<T,N>whereT:Send,T:::monoscan::Element,\
             for<'__monoscan>T:::monoscan::ValidAsZeroBits,\
             for<'__monoscan>u8:::monoscan::ValidAsZeroBits,{}"
        ),
        "{out}"
    );
}

#[test]
fn tuple_fields_are_members_by_index() {
    let out = expand_str("#[repr(C)] struct W(i32, [f32; 2]);");
    assert!(out.contains("offset_of!(Self,0)"), "{out}");
    assert!(
        out.contains("(\"1\",\"f1\",::core::mem::offset_of!(Self,1),&[(2)asusize]"),
        "{out}"
    );
    assert!(out.contains("cuda_init(&self.1)"), "{out}");
}

#[test]
fn cuda_name_attribute() {
    let s = parse_str("#[repr(C)] #[monoscan(cuda_name = \"pt_t\")] struct P { a: i32 }");
    assert_eq!(s.unwrap().cuda_base, "pt_t");
    assert!(
        message("#[repr(C)] #[monoscan(cuda_name = \"2x\")] struct P { a: i32 }")
            .contains("not a C++ identifier")
    );
    assert!(
        message("#[repr(C)] #[monoscan(name = \"p\")] struct P { a: i32 }")
            .contains("expected `#[monoscan(cuda_name")
    );
    assert!(
        message("#[repr(C)] struct P { #[monoscan(cuda_name = \"b\")] a: i32 }")
            .contains("not supported on fields")
    );
}

#[test]
fn rejections() {
    let cases = [
        ("struct P { a: i32 }", "`P` needs #[repr(C)]"),
        (
            "#[repr(Rust)] struct P { a: i32 }",
            "#[repr(Rust)] is not supported",
        ),
        (
            "#[repr(C, packed)] struct P { a: i32 }",
            "#[repr(packed)] is not supported",
        ),
        (
            "#[repr(C)] #[repr(packed(2))] struct P { a: i32 }",
            "#[repr(packed)]",
        ),
        (
            "#[repr(C, align(16))] struct P { a: i32 }",
            "#[repr(align)] is not supported",
        ),
        (
            "#[repr(transparent)] struct P { a: i32 }",
            "#[repr(transparent)]",
        ),
        (
            "#[repr(C)] enum E { A, B }",
            "only structs can be elements, not enums",
        ),
        ("#[repr(C)] union U { a: i32 }", "not unions"),
        ("#[repr(C)] struct U;", "a unit struct is zero-sized"),
        ("#[repr(C)] struct U {}", "a struct without fields"),
        ("#[repr(C)] struct U();", "a struct without fields"),
        (
            "#[repr(C)] struct P<'a> { a: &'a i32 }",
            "lifetime parameters",
        ),
        (
            "#[repr(C)] struct P { a: [i32] }",
            "slices have no fixed size",
        ),
        (
            "#[repr(C)] struct P { a: [i32; 0usize] }",
            "zero-length arrays",
        ),
        (
            "#[repr(C)] struct P { r#this: i32 }",
            "field `this` cannot be a C++ name",
        ),
        ("#[repr(C)] struct P { größe: i32 }", "non-ASCII"),
        ("#[repr(C)] struct float { a: i32 }", "#[monoscan(cuda_name"),
    ];
    for (input, expected) in cases {
        let m = message(input);
        assert!(m.contains(expected), "{input}: {m}");
        assert!(m.starts_with("#[derive(Element)]: "), "{m}");
    }
}

#[test]
fn rejections_become_compile_errors() {
    let out = expand_str("struct P { a: i32 }");
    assert!(out.starts_with("::core::compile_error!{"), "{out}");
    assert!(out.contains("`P`needs#[repr(C)]"), "{out}");
}
