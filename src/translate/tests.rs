//! The translator on hand-built IR: types found as Rust finds them, C++ that keeps Rust's
//! semantics, and refusals that name the problem. (What `#[monoscan::operator]` generates is
//! tested through the macro in `tests/operator.rs`; NVRTC compiles the output there.)

use super::ir::{BinOp, Block, Expr, Function, Stmt, Ty, UnOp};
use super::operator;
use crate::element::Element;
use crate::layout::{FieldLayout, Layout};
use crate::ops::{Flagged, Indexed};

/// A struct with an array field, described by hand (the derive is tested elsewhere).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pt {
    x: i16,
    lanes: [u8; 3],
}
// SAFETY: `#[repr(C)]` plain data.
unsafe impl crate::DeviceRepr for Pt {}
// SAFETY: the definition mirrors the fields.
unsafe impl Element for Pt {
    fn cuda_name() -> String {
        "Pt".into()
    }
    fn cuda_definition() -> String {
        "struct Pt { short x; unsigned char lanes[3]; };".into()
    }
    fn cuda_layout() -> Layout {
        Layout::structure::<Self>(vec![
            FieldLayout::new::<i16>("x", "x", std::mem::offset_of!(Pt, x), &[]),
            FieldLayout::new::<u8>("lanes", "lanes", std::mem::offset_of!(Pt, lanes), &[3]),
        ])
    }
    fn cuda_literal(&self) -> Option<String> {
        use crate::element::CudaInit;
        Some(format!(
            "Pt{{{}, {}}}",
            self.x.cuda_init()?,
            self.lanes.cuda_init()?
        ))
    }
}

fn combine<E: Element>(body: Block) -> Function {
    Function::new(
        "combine",
        vec![("x", Ty::of::<E>()), ("y", Ty::of::<E>())],
        Ty::of::<E>(),
        body,
    )
}

fn tail(e: Expr) -> Block {
    Block::new(vec![], e)
}

fn translate<E: Element>(identity: E, body: Block) -> crate::CudaOp {
    operator("t", &identity, combine::<E>(body), vec![])
}

fn x() -> Expr {
    Expr::local("x")
}
fn y() -> Expr {
    Expr::local("y")
}

#[test]
fn parameters_become_a_and_b_and_integers_wrap() {
    let op = translate(
        0i8,
        tail(Expr::binary(
            BinOp::Add,
            x(),
            Expr::binary(BinOp::Mul, y(), Expr::int(3)),
        )),
    );
    assert_eq!(op.invalid, None);
    assert_eq!(op.identity, "((signed char)0LL)");
    assert_eq!(
        op.combine,
        "return ((signed char)((unsigned int)(a) + (unsigned int)(((signed char)((unsigned int)(b) * \
         (unsigned int)(((signed char)3LL)))))));"
    );
}

#[test]
fn literals_take_their_type_from_the_other_operand_and_the_context() {
    // `2.5 * y` in an f32 operator: the literal is an f32 (no f64 arithmetic, no double rounding).
    let op = translate(
        0f32,
        tail(Expr::binary(BinOp::Mul, Expr::float(2.5, 2.5), y())),
    );
    assert_eq!(op.combine, "return __fmul_rn(2.5f, b);");
    // `-128` as an i8, spelled as one literal.
    let op = translate(0i8, tail(Expr::unary(UnOp::Neg, Expr::int(128))));
    assert_eq!(op.combine, "return ((signed char)-128LL);");
    // In a comparison the literal follows the other side: `x > 1` on u64.
    let cond = Expr::binary(BinOp::Gt, x(), Expr::int(1));
    let op = translate(0u64, tail(Expr::cond(cond, tail(x()), tail(y()))));
    assert_eq!(
        op.combine,
        "return ((((a) > (((unsigned long long)1ULL)))) ? (a) : (b));"
    );
}

#[test]
fn struct_literals_follow_the_declared_order_and_take_a_base() {
    // Fields given out of order, and `..y` for the rest.
    let lit = Expr::structure(
        "Pt",
        vec![(
            "lanes",
            Expr::Array(vec![
                Expr::int(1),
                Expr::int(2),
                x().field("lanes").index(Expr::int(0)),
            ]),
        )],
        Some(y()),
    );
    let op = translate(
        Pt {
            x: 0,
            lanes: [0; 3],
        },
        tail(lit),
    );
    assert_eq!(op.invalid, None);
    assert_eq!(
        op.combine,
        "return ([&]() -> Pt { const Pt ms_base = b; return Pt{ms_base.x, {((unsigned char)1ULL), \
         ((unsigned char)2ULL), (a).lanes[((unsigned long long)0ULL)]}}; }());"
    );
    assert_eq!(
        op.identity,
        "Pt{((short)0LL), {((unsigned char)0ULL), ((unsigned char)0ULL), ((unsigned char)0ULL)}}"
    );
}

#[test]
fn lets_and_if_blocks_with_lets() {
    // let s: i16 = x.x.wrapping_sub(y.x); if s < 0 { let t = -s; Pt { x: t, ..x } } else { y }
    let s = Stmt::new(
        "s",
        Some(Ty::of::<i16>()),
        x().field("x").method("wrapping_sub", vec![y().field("x")]),
    );
    let then = Block::new(
        vec![Stmt::new(
            "t",
            None,
            Expr::unary(UnOp::Neg, Expr::local("s")),
        )],
        Expr::structure("Pt", vec![("x", Expr::local("t"))], Some(x())),
    );
    let cond = Expr::binary(BinOp::Lt, Expr::local("s"), Expr::int(0));
    let op = translate(
        Pt {
            x: 0,
            lanes: [0; 3],
        },
        Block::new(vec![s], Expr::cond(cond, then, tail(y()))),
    );
    assert_eq!(op.invalid, None, "{:?}", op.invalid);
    let text = &op.combine;
    assert!(
        text.starts_with(
            "const short l_s = ((short)((unsigned int)((a).x) - (unsigned int)((b).x)));\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("([&]() -> Pt { const short l_t = ((short)(-(unsigned int)(l_s)));"),
        "{text}"
    );
}

#[test]
fn float_methods_follow_rust() {
    let body = x().method("max", vec![y()]).method(
        "mul_add",
        vec![Expr::float(0.5, 0.5), y().method("abs", vec![])],
    );
    let op = translate(0f64, tail(body));
    assert_eq!(op.combine, "return __fma_rn(fmax(a, b), 0.5, fabs(b));");
    let body = Expr::binary(BinOp::Rem, x(), y())
        .cast(Ty::of::<i32>())
        .cast(Ty::of::<f32>());
    let op = translate(0f32, tail(body));
    assert_eq!(
        op.combine,
        "return ((float)(ms_rs_ftoi<int>((double)(fmodf(a, b)))));"
    );
}

#[test]
fn constants_are_baked_in_exactly() {
    let op = translate(
        0f32,
        tail(x().method("min", vec![Expr::constant(&f32::INFINITY, "f32::INFINITY")])),
    );
    assert_eq!(
        op.combine,
        "return fminf(a, __builtin_bit_cast(float, 0x7f800000u));"
    );
    let op = translate(
        0i64,
        tail(x().method("max", vec![Expr::constant(&i64::MIN, "i64::MIN")])),
    );
    assert!(
        op.combine.contains("(-9223372036854775807LL - 1LL)"),
        "{}",
        op.combine
    );
    // A constant array is declared once and indexed.
    let table = Expr::constant(&[3u32, 5, 7], "TABLE");
    let op = translate(
        0u32,
        tail(Expr::binary(BinOp::Add, x(), table.index(Expr::int(2)))),
    );
    assert!(
        op.combine
            .starts_with("const unsigned int l_const[3] = {((unsigned int)3ULL), "),
        "{}",
        op.combine
    );
    assert!(
        op.combine
            .ends_with("(unsigned int)(l_const[((unsigned long long)2ULL)])));"),
        "{}",
        op.combine
    );
    // An index known only on the device is kept inside the array; a literal one out of range
    // never reaches the device unchecked either.
    let table = Expr::constant(&[3u32, 5, 7], "TABLE");
    let i = Expr::Cast(Box::new(x()), Ty::usize());
    let op = translate(0u32, tail(table.clone().index(i)));
    assert!(
        op.combine.ends_with(
            "l_const[ms_rs_index((unsigned long long)(((unsigned long long)(a))), 3ull)];"
        ),
        "{}",
        op.combine
    );
    let op = translate(0u32, tail(table.index(Expr::int(3))));
    assert!(op.combine.contains("ms_rs_index("), "{}", op.combine);
}

#[test]
fn nested_built_in_elements_have_fields() {
    let value = x().field("value").field("index");
    let pick = Expr::cond(
        Expr::binary(BinOp::Ne, y().field("flag"), Expr::int(0)),
        tail(y()),
        tail(Expr::structure(
            "Flagged",
            vec![("value", x().field("value")), ("flag", Expr::int(0))],
            None,
        )),
    );
    let e = Flagged::new(Indexed::new(0f32, 0), false);
    let op = translate(e, Block::new(vec![Stmt::new("i", None, value)], pick));
    assert_eq!(op.invalid, None, "{:?}", op.invalid);
    assert!(
        op.combine
            .starts_with("const unsigned long long l_i = ((a).value).index;"),
        "{}",
        op.combine
    );
    assert!(
        op.combine
            .contains("monoscan_flagged_monoscan_indexed_float{(a).value, ((unsigned int)0ULL)}"),
        "{}",
        op.combine
    );
}

#[test]
fn what_has_no_translation_is_reported() {
    let cases: Vec<(Block, &str)> = vec![
        (tail(x().field("nope")), "has no field `nope`"),
        (
            tail(Expr::binary(BinOp::Eq, x(), y())),
            "`==` on values of types `Pt` and `Pt`",
        ),
        (
            tail(x().field("x").method("sqrt", vec![])),
            "`i16::sqrt` is not translated",
        ),
        (
            tail(Expr::call("helper", vec![])),
            "`helper` is not a translated function",
        ),
        (
            tail(Expr::structure("Q", vec![], None).field("x")),
            "cannot tell the type of the struct literal `Q { .. }`",
        ),
        (tail(Expr::local("z")), "`z` is not a parameter"),
    ];
    for (body, want) in cases {
        let op = translate(
            Pt {
                x: 0,
                lanes: [0; 3],
            },
            body,
        );
        let why = op.invalid.clone().expect("refused");
        assert!(why.contains(want), "{why}");
        assert!(
            why.starts_with("#[monoscan::operator] cannot translate `t`: in `combine`: "),
            "{why}"
        );
        // Rendering refuses it with the reason.
        let err = crate::codegen::render(
            &op,
            &crate::codegen::KernelSpec::new(crate::codegen::KernelSet::Check),
        )
        .unwrap_err();
        assert!(err.to_string().contains(want), "{err}");
    }
}

#[test]
fn helpers_live_in_a_namespace_named_by_their_text() {
    let helper = Function::new(
        "twice",
        vec![("v", Ty::of::<u32>())],
        Ty::of::<u32>(),
        tail(Expr::binary(BinOp::Shl, Expr::local("v"), Expr::int(1))),
    );
    let body = tail(Expr::call(
        "twice",
        vec![Expr::binary(BinOp::BitXor, x(), y())],
    ));
    let op = operator("t", &0u32, combine::<u32>(body), vec![helper.clone()]);
    assert_eq!(op.invalid, None, "{:?}", op.invalid);
    let ns = op
        .prelude
        .split("namespace ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    assert!(ns.starts_with("ms_fn_") && ns.len() == 14, "{ns}");
    assert_eq!(
        op.combine,
        format!("return {ns}::f_twice(((unsigned int)((a) ^ (b))));")
    );
    assert!(op.prelude.contains("static __device__ inline unsigned int f_twice(const unsigned int l_v) {\n    return ms_rs_shl<unsigned int>(l_v, (unsigned int)(((int)1LL)));\n}"), "{}", op.prelude);
    // A different helper text, a different namespace.
    let mut other = helper;
    other.body.tail = Expr::binary(BinOp::Shl, Expr::local("v"), Expr::int(2));
    let body = tail(Expr::call("twice", vec![x()]));
    let op2 = operator("t", &0u32, combine::<u32>(body), vec![other]);
    assert!(!op2.prelude.contains(&ns));
}
