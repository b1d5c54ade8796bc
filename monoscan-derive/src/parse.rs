//! Parsing and validating the derive input by hand, for the subset `#[derive(Element)]`
//! accepts: `#[repr(C)]` structs with named or tuple fields, type and const parameters.
//!
//! Everything here works on `proc_macro2` tokens, so the unit tests below run outside the
//! compiler. Angle brackets are not token groups, so splitting at commas tracks their depth.

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};

/// What the code generator needs from a struct.
pub struct Input {
    /// The Rust name.
    pub ident: Ident,
    /// The C++ name, before the parameters' fragments (generic structs) are appended.
    pub cuda_base: String,
    /// Generic parameters, in order.
    pub params: Vec<Param>,
    /// The predicates of the `where` clause, without `where` and without a trailing comma.
    pub predicates: TokenStream,
    /// The fields, in declaration order.
    pub fields: Vec<Field>,
}

/// A generic parameter.
pub struct Param {
    /// A const parameter (`const N: usize`) rather than a type parameter.
    pub is_const: bool,
    /// Its name.
    pub ident: Ident,
    /// Its declaration for the impl header: bounds kept, default dropped.
    pub decl: TokenStream,
}

/// A field, with its array dimensions peeled off (`[[T; 3]; 2]` -> `T`, `[2, 3]`).
pub struct Field {
    /// The C++ member name (the Rust name, or `f0`, `f1`, ... in tuple structs).
    pub cuda_name: String,
    /// The element type.
    pub elem: TokenStream,
    /// Array lengths, outermost first, which is also C++'s order (`T x[2][3]`).
    pub dims: Vec<TokenStream>,
}

/// A rejected input: the message of the `compile_error!` and where it points.
#[derive(Debug)]
pub struct Error {
    pub span: Span,
    pub message: String,
}

fn err<T>(span: Span, message: impl Into<String>) -> Result<T, Error> {
    Err(Error {
        span,
        message: format!("#[derive(Element)]: {}", message.into()),
    })
}

fn is_punct(tt: Option<&TokenTree>, c: char) -> bool {
    matches!(tt, Some(TokenTree::Punct(p)) if p.as_char() == c)
}

fn is_ident(tt: Option<&TokenTree>, name: &str) -> bool {
    matches!(tt, Some(TokenTree::Ident(i)) if i == name)
}

fn group(tt: Option<&TokenTree>, delimiter: Delimiter) -> Option<&Group> {
    match tt {
        Some(TokenTree::Group(g)) if g.delimiter() == delimiter => Some(g),
        _ => None,
    }
}

/// Splits `tokens` at the `sep` punctuation outside angle brackets (`->` is no bracket).
fn split(tokens: &[TokenTree], sep: char) -> Vec<Vec<TokenTree>> {
    let mut parts = vec![Vec::new()];
    let mut depth = 0usize;
    for (k, tt) in tokens.iter().enumerate() {
        if let TokenTree::Punct(p) = tt {
            let arrow = k > 0 && is_punct(tokens.get(k - 1), '-');
            match p.as_char() {
                '<' => depth += 1,
                '>' if !arrow => depth = depth.saturating_sub(1),
                c if c == sep && depth == 0 => {
                    parts.push(Vec::new());
                    continue;
                }
                _ => {}
            }
        }
        parts.last_mut().unwrap().push(tt.clone());
    }
    if parts.last().is_some_and(Vec::is_empty) {
        parts.pop(); // a trailing separator
    }
    parts
}

/// Skips outer attributes from `k`, handing each one's bracketed contents to `f`.
fn attributes(
    tokens: &[TokenTree],
    mut k: usize,
    mut f: impl FnMut(&Group) -> Result<(), Error>,
) -> Result<usize, Error> {
    while is_punct(tokens.get(k), '#') {
        match group(tokens.get(k + 1), Delimiter::Bracket) {
            Some(g) => f(g)?,
            None => break,
        }
        k += 2;
    }
    Ok(k)
}

/// Skips a visibility (`pub`, `pub(crate)`, `pub(in path)`) from `k`.
fn visibility(tokens: &[TokenTree], k: usize) -> usize {
    if !is_ident(tokens.get(k), "pub") {
        return k;
    }
    match group(tokens.get(k + 1), Delimiter::Parenthesis) {
        // `pub (A, B)` in a tuple struct is a public tuple field, not a restriction.
        Some(g)
            if ["crate", "super", "self", "in"]
                .iter()
                .any(|w| is_ident(g.stream().into_iter().next().as_ref(), w)) =>
        {
            k + 2
        }
        _ => k + 1,
    }
}

/// The items of a `#[repr(...)]` attribute, or none for other attributes.
fn repr_items(attr: &Group, out: &mut Vec<(String, Span)>) {
    let tokens: Vec<TokenTree> = attr.stream().into_iter().collect();
    if let (true, Some(args)) = (
        is_ident(tokens.first(), "repr"),
        group(tokens.get(1), Delimiter::Parenthesis),
    ) {
        let args: Vec<TokenTree> = args.stream().into_iter().collect();
        for item in split(&args, ',') {
            out.push((item[0].to_string(), item[0].span()));
        }
    }
}

/// `#[monoscan(cuda_name = "...")]` on the struct: the C++ name to use.
fn monoscan_attr(attr: &Group, on_field: bool, name: &mut Option<String>) -> Result<(), Error> {
    let tokens: Vec<TokenTree> = attr.stream().into_iter().collect();
    if !is_ident(tokens.first(), "monoscan") {
        return Ok(());
    }
    if on_field {
        return err(attr.span(), "`#[monoscan(...)]` is not supported on fields");
    }
    let args: Vec<TokenTree> = match group(tokens.get(1), Delimiter::Parenthesis) {
        Some(g) => g.stream().into_iter().collect(),
        None => Vec::new(),
    };
    let value = match args.as_slice() {
        [TokenTree::Ident(key), TokenTree::Punct(eq), TokenTree::Literal(lit)]
            if key == "cuda_name" && eq.as_char() == '=' =>
        {
            let text = lit.to_string();
            text.strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .map(str::to_string)
        }
        _ => None,
    };
    match value {
        Some(v) if is_cpp_identifier(&v) => {
            *name = Some(v);
            Ok(())
        }
        Some(v) => err(
            attr.span(),
            format!("`cuda_name = \"{v}\"` is not a C++ identifier (or is a C++ keyword)"),
        ),
        None => err(
            attr.span(),
            "expected `#[monoscan(cuda_name = \"name\")]`, the only attribute it takes",
        ),
    }
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
fn cpp_name(ident: &Ident, what: &str) -> Result<String, Error> {
    let text = ident.to_string();
    let text = text.strip_prefix("r#").unwrap_or(&text).to_string();
    if is_cpp_identifier(&text) {
        Ok(text)
    } else {
        err(
            ident.span(),
            format!("{what} `{text}` cannot be a C++ name (non-ASCII, or a C++ keyword)"),
        )
    }
}

/// Peels array types: `[[T; A]; B]` -> (`T`, [`B`, `A`]).
fn field_type(
    tokens: Vec<TokenTree>,
    span: Span,
) -> Result<(TokenStream, Vec<TokenStream>), Error> {
    let single = match tokens.as_slice() {
        [TokenTree::Group(g)] => Some(g.clone()),
        _ => None,
    };
    match single {
        Some(g) if g.delimiter() == Delimiter::None => {
            field_type(g.stream().into_iter().collect(), span)
        }
        Some(g) if g.delimiter() == Delimiter::Bracket => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            let mut parts = split(&inner, ';').into_iter();
            let (Some(elem), Some(len), None) = (parts.next(), parts.next(), parts.next()) else {
                return err(g.span(), "slices have no fixed size; use an array `[T; N]`");
            };
            if let [TokenTree::Literal(lit)] = len.as_slice() {
                let digits = lit.to_string().trim_end_matches("usize").replace('_', "");
                if !digits.is_empty() && digits.chars().all(|c| c == '0') {
                    return err(g.span(), "zero-length arrays have no C++ counterpart");
                }
            }
            let (elem, mut dims) = field_type(elem, g.span())?;
            dims.insert(0, len.into_iter().collect());
            Ok((elem, dims))
        }
        _ if tokens.is_empty() => err(span, "a field without a type"),
        _ => Ok((tokens.into_iter().collect(), Vec::new())),
    }
}

/// Fields of a `{ ... }` (`named`) or `( ... )` body.
fn fields(body: &Group, named: bool) -> Result<Vec<Field>, Error> {
    let tokens: Vec<TokenTree> = body.stream().into_iter().collect();
    let mut out = Vec::new();
    for (index, part) in split(&tokens, ',').into_iter().enumerate() {
        let k = attributes(&part, 0, |g| monoscan_attr(g, true, &mut None))?;
        let k = visibility(&part, k);
        let (cuda_name, ty) = if named {
            match (part.get(k), is_punct(part.get(k + 1), ':')) {
                (Some(TokenTree::Ident(name)), true) => (cpp_name(name, "field")?, &part[k + 2..]),
                _ => return err(body.span(), "could not parse a named field"),
            }
        } else {
            (format!("f{index}"), &part[k..])
        };
        let (elem, dims) = field_type(ty.to_vec(), body.span())?;
        out.push(Field {
            cuda_name,
            elem,
            dims,
        });
    }
    if out.is_empty() {
        return err(
            body.span(),
            "a struct without fields is zero-sized in Rust, but an empty C++ struct has size 1",
        );
    }
    Ok(out)
}

/// Generic parameters, from the tokens between `<` and the matching `>`.
fn params(tokens: &[TokenTree]) -> Result<Vec<Param>, Error> {
    let mut out = Vec::new();
    for part in split(tokens, ',') {
        let k = attributes(&part, 0, |_| Ok(()))?;
        let is_const = is_ident(part.get(k), "const");
        let ident = match part.get(k + usize::from(is_const)) {
            Some(TokenTree::Ident(i)) => i.clone(),
            Some(TokenTree::Punct(p)) if p.as_char() == '\'' => {
                return err(
                    p.span(),
                    "lifetime parameters are not supported: an element is 'static plain data",
                )
            }
            other => {
                let span = other.map_or_else(Span::call_site, TokenTree::span);
                return err(span, "could not parse a generic parameter");
            }
        };
        let decl = split(&part, '=').swap_remove(0); // drop a default
        out.push(Param {
            is_const,
            ident,
            decl: decl.into_iter().collect(),
        });
    }
    Ok(out)
}

/// Parses and validates a derive input.
pub fn parse(input: TokenStream) -> Result<Input, Error> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut reprs = Vec::new();
    let mut rename = None;
    let k = attributes(&tokens, 0, |g| {
        repr_items(g, &mut reprs);
        monoscan_attr(g, false, &mut rename)
    })?;
    let k = visibility(&tokens, k);
    let (Some(TokenTree::Ident(keyword)), Some(TokenTree::Ident(ident))) =
        (tokens.get(k), tokens.get(k + 1))
    else {
        return err(Span::call_site(), "expected a struct");
    };
    if keyword == "enum" || keyword == "union" {
        return err(
            keyword.span(),
            format!(
                "only structs can be elements, not {keyword}s: \
                 use a #[repr(C)] struct (with an explicit tag field for a sum type)"
            ),
        );
    }
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
        None => cpp_name(ident, "struct name").map_err(|mut e| {
            e.message
                .push_str("; rename it with #[monoscan(cuda_name = \"...\")]");
            e
        })?,
    };
    let mut k = k + 2;
    let mut generics = Vec::new();
    if is_punct(tokens.get(k), '<') {
        let start = k + 1;
        let mut depth = 0usize;
        while k < tokens.len() {
            let arrow = is_punct(tokens.get(k - 1), '-');
            if is_punct(tokens.get(k), '<') {
                depth += 1;
            } else if is_punct(tokens.get(k), '>') && !arrow {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            k += 1;
        }
        generics = params(&tokens[start..k.min(tokens.len())])?;
        k += 1;
    }
    // Named: `where ... { fields }`. Tuple: `( fields ) where ... ;`. Unit: `;`.
    let (body, named, clause) = match tokens.get(k) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
            (g.clone(), false, &tokens[k + 1..])
        }
        _ => match tokens.last() {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                (g.clone(), true, &tokens[k..tokens.len() - 1])
            }
            _ => {
                return err(
                    ident.span(),
                    "a unit struct is zero-sized in Rust, but an empty C++ struct has size 1",
                )
            }
        },
    };
    let mut clause: Vec<TokenTree> = clause.to_vec();
    if is_punct(clause.last(), ';') {
        clause.pop();
    }
    if is_ident(clause.first(), "where") {
        clause.remove(0);
    }
    if is_punct(clause.last(), ',') {
        clause.pop();
    }
    Ok(Input {
        ident: ident.clone(),
        cuda_base,
        params: generics,
        predicates: clause.into_iter().collect(),
        fields: fields(&body, named)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Input, Error> {
        parse(s.parse().expect("test input tokenizes"))
    }

    fn message(s: &str) -> String {
        match parse_str(s) {
            Ok(_) => panic!("accepted: {s}"),
            Err(e) => e.message,
        }
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
        let names: Vec<&str> = s.fields.iter().map(|f| f.cuda_name.as_str()).collect();
        assert_eq!(names, ["x", "type", "z"]);
        assert_eq!(s.fields[1].elem.to_string(), "u8");
        let dims: Vec<String> = s.fields[1].dims.iter().map(|d| d.to_string()).collect();
        assert_eq!(dims, ["N * 2", "3"]);
        let ty: String = s.fields[2].elem.to_string().split_whitespace().collect();
        assert_eq!(ty, "Flagged<Foo<i32,u8>>");
        assert!(s.params.is_empty() && s.predicates.is_empty());
    }

    #[test]
    fn tuple_structs_generics_and_where_clauses() {
        let s = parse_str(
            "#[repr(C)] struct T<A: Copy + Fn() -> u8, const N: usize = 4, B = Vec<u8>>\
             (pub A, pub(crate) [B; N]) where A: Send, ;",
        )
        .unwrap();
        let names: Vec<&str> = s.fields.iter().map(|f| f.cuda_name.as_str()).collect();
        assert_eq!(names, ["f0", "f1"]);
        let params: Vec<(bool, String, String)> = s
            .params
            .iter()
            .map(|p| (p.is_const, p.ident.to_string(), p.decl.to_string()))
            .collect();
        assert_eq!(
            params,
            [
                (false, "A".into(), "A : Copy + Fn () -> u8".into()),
                (true, "N".into(), "const N : usize".into()),
                (false, "B".into(), "B".into()),
            ]
        );
        assert_eq!(s.predicates.to_string(), "A : Send");
        let s = parse_str("#[repr(C)] struct W<T> where T: Copy { a: T }").unwrap();
        assert_eq!(s.predicates.to_string(), "T : Copy");
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
}
