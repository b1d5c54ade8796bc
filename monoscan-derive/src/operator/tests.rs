//! `#[monoscan::operator]` and `#[monoscan::device]` on token streams: what they write, and
//! each construct outside the subset refused with a message at its span.

use super::{device, operator};
use proc_macro2::TokenStream;

fn squash(t: TokenStream) -> String {
    t.to_string().split_whitespace().collect()
}

fn expand(args: &str, item: &str) -> String {
    squash(operator(args.parse().unwrap(), item.parse().unwrap()))
}

/// The message of the `compile_error!` an operator expands to, and the text its span covers.
fn refusal(item: &str) -> String {
    let out = operator(TokenStream::new(), item.parse().unwrap());
    let text = out.to_string();
    assert!(
        text.starts_with(":: core :: compile_error !"),
        "accepted:\n{item}\n->\n{text}"
    );
    text
}

/// An `impl Monoid` whose `combine` body is `body`, over `i64`.
fn with_body(body: &str) -> String {
    format!(
        "impl Monoid for Op {{ type Elem = i64; fn identity(&self) -> i64 {{ 0 }} \
         fn combine(&self, a: &i64, b: &i64) -> i64 {{ {body} }} }}"
    )
}

#[test]
fn the_trait_form_gets_a_cuda_method() {
    let out = expand(
        "",
        &with_body("let s: i64 = a.wrapping_add(*b); s.max(i64::MIN).min(K)"),
    );
    assert!(out.contains("fncuda(&self)->::monoscan::CudaOp{"), "{out}");
    assert!(
        out.contains("::monoscan::translate::operator::<<Selfas::monoscan::Monoid>::Elem>(\"Op\","),
        "{out}"
    );
    assert!(
        out.contains("&<Selfas::monoscan::Monoid>::identity(self)"),
        "the identity is evaluated: {out}"
    );
    // Parameters, a typed `let`, methods, and constants that Rust evaluates.
    assert!(
        out.contains("(\"a\",::monoscan::translate::ir::Ty::of::<i64>())"),
        "{out}"
    );
    assert!(
        out.contains("Stmt::new(\"s\",::core::option::Option::Some(::monoscan::translate::ir::Ty::of::<i64>()),::monoscan::translate::ir::Expr::local(\"a\").method(\"wrapping_add\",::std::vec![::monoscan::translate::ir::Expr::local(\"b\")]))"),
        "{out}"
    );
    assert!(
        out.contains("Expr::constant(&(i64::MIN),\"i64::MIN\")"),
        "{out}"
    );
    assert!(out.contains("Expr::constant(&(K),\"K\")"), "{out}");
    // The original functions are kept.
    assert!(
        out.contains("fncombine(&self,a:&i64,b:&i64)->i64{"),
        "{out}"
    );
}

#[test]
fn literals_fields_structs_and_ufcs() {
    let out = expand(
        "name = \"lin\"",
        "impl Monoid for Op { type Elem = Lin; fn identity(&self) -> Lin { Lin::ID } \
         fn combine(&self, f: &Lin, g: &Lin) -> Lin { \
         Lin { a: f64::mul_add(f.a, g.a, -0.5), b: if g.b > 1.5e3 { g.b } else { 2. }, ..*f } } }",
    );
    assert!(
        out.contains("operator::<<Selfas::monoscan::Monoid>::Elem>(\"lin\","),
        "{out}"
    );
    assert!(
        out.contains("Expr::local(\"f\").field(\"a\").method(\"mul_add\",::std::vec![::monoscan::translate::ir::Expr::local(\"g\").field(\"a\"),::monoscan::translate::ir::Expr::unary(::monoscan::translate::ir::UnOp::Neg,::monoscan::translate::ir::Expr::float(::core::primitive::f32::from_bits(1056964608u32),::core::primitive::f64::from_bits(4602678819172646912u64),))])"),
        "{out}"
    );
    let bits = |v: f64| {
        format!("Expr::float(::core::primitive::f32::from_bits({}u32),::core::primitive::f64::from_bits({}u64),)", (v as f32).to_bits(), v.to_bits())
    };
    assert!(out.contains(&bits(1.5e3)), "{out}");
    assert!(out.contains(&bits(2.0)), "`2.` reads as 2.0: {out}");
    assert!(
        out.contains("Expr::structure(\"Lin\",::std::vec![(\"a\","),
        "{out}"
    );
    assert!(
        out.contains(
            "::core::option::Option::Some(::monoscan::translate::ir::Expr::local(\"f\")))"
        ),
        "the base: {out}"
    );
}

#[test]
fn the_inherent_form_gets_the_whole_monoid_and_its_reached_functions() {
    let out = expand(
        "",
        "impl<T: Float> Op<T> { \
           fn new() -> Self { Op(PhantomData) } \
           fn identity(&self) -> P<T> { P { x: T::zero() } } \
           fn combine(&self, a: &P<T>, b: &P<T>) -> P<T> { P { x: self.h(a.x, b.x) } } \
           fn h(&self, x: T, y: T) -> T { Self::k(x) * self.scale + y } \
           fn k(x: T) -> T { x } \
           fn unused(x: T) -> T { loop {} } }",
    );
    assert!(
        out.contains("impl<T:Float>::monoscan::MonoidforOp<T>{typeElem=P<T>;"),
        "{out}"
    );
    assert!(out.contains("<Op<T>>::identity(self)"), "{out}");
    assert!(out.contains("<Op<T>>::combine(self,a,b)"), "{out}");
    assert!(out.contains("Expr::call(\"h\","), "{out}");
    assert!(out.contains("Function::new(\"h\","), "{out}");
    assert!(
        out.contains("Function::new(\"k\","),
        "reached through `h`: {out}"
    );
    assert!(
        !out.contains("Function::new(\"unused\""),
        "not reached, not translated: {out}"
    );
    assert!(!out.contains("Function::new(\"new\""), "{out}");
    assert!(
        out.contains("Expr::constant(&(self.scale),\"self.scale\")"),
        "{out}"
    );
}

#[test]
fn device_functions_are_called_through_their_builders() {
    let out = expand("", &with_body("clamp_to(*a, *b) + m::other(*a)"));
    assert!(
        out.contains("Expr::call_device(\"clamp_to\",__monoscan_device_clamp_to,"),
        "{out}"
    );
    assert!(
        out.contains("Expr::call_device(\"other\",m::__monoscan_device_other,"),
        "{out}"
    );
    let dev = squash(device(
        TokenStream::new(),
        "pub(crate) fn clamp_to(x: i64, hi: i64) -> i64 { x.min(hi) }"
            .parse()
            .unwrap(),
    ));
    assert!(
        dev.starts_with("pub(crate)fnclamp_to(x:i64,hi:i64)->i64{x.min(hi)}"),
        "{dev}"
    );
    assert!(
        dev.contains("pub(crate)fn__monoscan_device_clamp_to()->::monoscan::translate::ir::Function{::monoscan::translate::ir::Function::new(\"clamp_to\","),
        "{dev}"
    );
    let generic = device(
        TokenStream::new(),
        "fn g<T>(x: T) -> T { x }".parse().unwrap(),
    );
    assert!(
        generic
            .to_string()
            .contains("generic parameters of its own"),
        "{generic}"
    );
}

#[test]
fn constructs_outside_the_subset_are_refused() {
    let cases = [
        ("let mut n = *a; n", "bindings are immutable values"),
        (
            "let n = 0; n.max(*a)",
            "annotate the type of a `let` bound to a literal",
        ),
        ("let (x, y) = (*a, *b); x", "only `let name = ..;`"),
        ("let x: i64; *a", "a `let` needs a value"),
        ("loop { }", "a loop has no translation"),
        (
            "for i in 0..3 { } *a",
            "a statement without `let` has no effect",
        ),
        (
            "match a { _ => *b }",
            "`match` (use `if`/`else`) has no translation",
        ),
        ("(|x: i64| x)(*a)", "only calls of named functions"),
        (
            "return *a",
            "`return` (end the function with its value) has no translation",
        ),
        ("if *a > 0 { *a }", "an `if` needs an `else`"),
        (
            "if let 1 = *a { *a } else { *b }",
            "`if let` has no translation",
        ),
        (
            "a.rotate_left(3)",
            "the method `rotate_left` has no translation",
        ),
        ("a.max::<i64>(*b)", "turbofish"),
        (
            "(*a, *b).0",
            "a tuple (use a struct element) has no translation",
        ),
        (
            "*a + \"x\".len() as i64 + b.len_of(\"s\")",
            "the method `len_of` has no translation",
        ),
        (
            "let s = \"x\"; *a",
            "only number and `bool` literals are translated",
        ),
        ("println!(\"{a}\"); *a", "macros have no translation"),
        (
            "Self::helper(*a)",
            "`Self::helper` is not a function of this operator",
        ),
        ("*a += 1", "assignments have no translation"),
        ("unsafe { *a }", "an `unsafe` block has no translation"),
        ("a.max(*b);", "a block must end in a value"),
        ("*a..*b", "a range has no translation"),
    ];
    for (body, want) in cases {
        let text = refusal(&with_body(body));
        assert!(text.contains(want), "{body}: {text}");
        assert!(text.contains("#[monoscan::operator]: "), "{text}");
    }
}

#[test]
fn malformed_blocks_are_refused() {
    let cases = [
        (
            "impl Monoid for Op { type Elem = i64; fn identity(&self) -> i64 { 0 } }",
            "the block needs `fn combine",
        ),
        (
            "impl Monoid for Op { type Elem = i64; fn identity(&self) -> i64 { 0 } \
             fn combine(&self, a: &i64, b: &i64) -> i64 { *a } fn cuda(&self) -> CudaOp { todo!() } }",
            "`cuda` is what #[monoscan::operator] writes",
        ),
        (
            "impl Clone for Op { fn identity(&self) -> i64 { 0 } \
             fn combine(&self, a: &i64, b: &i64) -> i64 { *a } }",
            "expected `impl Monoid for X` or `impl X`",
        ),
        (
            "impl Op { fn identity(&self) -> i64 { 0 } \
             fn combine(&mut self, a: &i64, b: &i64) -> i64 { *a } }",
            "`&mut self` has no translation",
        ),
        (
            "impl Op { fn identity(&self) -> i64 { 0 } \
             fn combine(&self, a: &i64, b: &i64) -> i64 { Self::h(*a) } fn h<U>(x: i64) -> i64 { x } }",
            "generic parameters of its own",
        ),
        (
            "impl Op { fn identity(&self) -> i64 { 0 } \
             fn combine(&self, a: &i64, b: (i64, i64)) -> i64 { *a } }",
            "this type has no translation",
        ),
    ];
    for (item, want) in cases {
        let text = refusal(item);
        assert!(text.contains(want), "{item}: {text}");
    }
    let bad_args = operator(
        "modulus = 3".parse().unwrap(),
        with_body("*a").parse().unwrap(),
    );
    assert!(
        bad_args.to_string().contains("the only argument is `name"),
        "{bad_args}"
    );
}
