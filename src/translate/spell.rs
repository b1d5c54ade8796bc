//! C++ spellings of Rust's operators, methods and casts on primitives, each with Rust's
//! semantics: integer arithmetic wraps (computed in an unsigned type, so no signed overflow),
//! shifts mask their count, division never traps, float operations round once each as Rust
//! rounds them (`__fadd_rn` and friends, which NVRTC never contracts into fused multiply-adds),
//! `min`/`max` follow Rust's NaN rules (`fminf`), and float-to-integer casts saturate.
//! The helpers named `ms_rs_*` are in `templates/lib/rust_ops.cuh`.

use super::ir::{BinOp, Ty};
use crate::layout::Primitive;
use crate::literal;

/// The unsigned type integer arithmetic on `p` is done in.
fn wide(p: Primitive) -> &'static str {
    if p.bits() == 64 {
        "unsigned long long"
    } else {
        "unsigned int"
    }
}

/// The unsigned primitive of `p`'s width.
fn unsigned_of(p: Primitive) -> Primitive {
    match p {
        Primitive::I8 | Primitive::U8 => Primitive::U8,
        Primitive::I16 | Primitive::U16 => Primitive::U16,
        Primitive::I32 | Primitive::U32 => Primitive::U32,
        _ => Primitive::U64,
    }
}

/// The type of a primitive.
pub fn prim(p: Primitive) -> Ty {
    Ty::Elem(crate::layout::Layout {
        cuda_name: p.cuda_name().to_string(),
        size: (p.bits() / 8) as usize,
        align: (p.bits() / 8) as usize,
        shape: crate::layout::Shape::Primitive(p),
    })
}

/// `float` or `double` spelling of a float function: `f` for `f32`, `d` for `f64`.
fn fl(p: Primitive, f: &str, d: &str) -> String {
    if p == Primitive::F32 {
        f.to_string()
    } else {
        d.to_string()
    }
}

fn infinity(p: Primitive) -> String {
    if p == Primitive::F32 {
        literal::f32(f32::INFINITY)
    } else {
        literal::f64(f64::INFINITY)
    }
}

/// `x op y` on two values of primitive `p` (the operands of shifts may differ; `y` is then
/// the count). The result type is `p`, or `bool` for comparisons.
pub fn binary(op: BinOp, p: Primitive, x: &str, y: &str) -> String {
    use BinOp::*;
    let t = p.cuda_name();
    if op.is_comparison() {
        return format!("(({x}) {} ({y}))", op.symbol());
    }
    if p.is_float() {
        return match op {
            Add => format!("{}({x}, {y})", fl(p, "__fadd_rn", "__dadd_rn")),
            Sub => format!("{}({x}, {y})", fl(p, "__fsub_rn", "__dsub_rn")),
            Mul => format!("{}({x}, {y})", fl(p, "__fmul_rn", "__dmul_rn")),
            Div => format!("{}({x}, {y})", fl(p, "__fdiv_rn", "__ddiv_rn")),
            Rem => format!("{}({x}, {y})", fl(p, "fmodf", "fmod")),
            _ => unreachable!("the typing admits only arithmetic and comparisons on floats"),
        };
    }
    let w = wide(p);
    match op {
        Add | Sub | Mul => format!("(({t})(({w})({x}) {} ({w})({y})))", op.symbol()),
        Div => format!("ms_rs_div<{t}>({x}, {y})"),
        Rem => format!("ms_rs_rem<{t}>({x}, {y})"),
        BitAnd | BitOr | BitXor => format!("(({t})(({x}) {} ({y})))", op.symbol()),
        Shl => format!("ms_rs_shl<{t}>({x}, (unsigned int)({y}))"),
        Shr => format!("ms_rs_shr<{t}>({x}, (unsigned int)({y}))"),
        _ => unreachable!("comparisons are handled above; && and || take bools"),
    }
}

/// `x op y` on two `bool`s.
pub fn binary_bool(op: BinOp, x: &str, y: &str) -> Option<String> {
    use BinOp::*;
    Some(match op {
        And | Or | Eq | Ne => format!("(({x}) {} ({y}))", op.symbol()),
        BitAnd | BitOr | BitXor => format!("((bool)(({x}) {} ({y})))", op.symbol()),
        _ => return None,
    })
}

/// `-x` on primitive `p` (wrapping for integers).
pub fn neg(p: Primitive, x: &str) -> String {
    if p.is_float() {
        format!("(-({x}))")
    } else {
        format!("(({})(-({})({x})))", p.cuda_name(), wide(p))
    }
}

/// `!x` on an integer (bitwise).
pub fn not(p: Primitive, x: &str) -> String {
    format!("(({})(~({x})))", p.cuda_name())
}

/// The methods translated, for messages.
pub const METHODS: &str = "min, max, clamp, abs, wrapping_add, wrapping_sub, wrapping_mul, \
    wrapping_neg, saturating_add, saturating_sub, pow, wrapping_pow, abs_diff, signum, \
    count_ones, leading_zeros, trailing_zeros, is_positive, is_negative (integers); min, max, \
    clamp, abs, sqrt, mul_add, floor, ceil, trunc, round, copysign, signum, is_nan, \
    is_finite, is_infinite, is_sign_positive, is_sign_negative (floats)";

/// What a method takes and returns.
pub struct MethodSig {
    /// The arguments' types, in order.
    pub args: Vec<Ty>,
    /// The result type.
    pub ret: Ty,
}

/// The signature of `recv.name(..)` on a receiver of primitive `p`, if it is translated.
pub fn method_sig(p: Primitive, name: &str) -> Option<MethodSig> {
    let same = || prim(p);
    let sig = |args: Vec<Ty>, ret: Ty| Some(MethodSig { args, ret });
    let u32_ty = prim(Primitive::U32);
    if p.is_float() {
        return match name {
            "min" | "max" | "copysign" => sig(vec![same()], same()),
            "clamp" | "mul_add" => sig(vec![same(), same()], same()),
            "abs" | "sqrt" | "floor" | "ceil" | "trunc" | "round" | "signum" => sig(vec![], same()),
            "is_nan" | "is_finite" | "is_infinite" | "is_sign_positive" | "is_sign_negative" => {
                sig(vec![], Ty::Bool)
            }
            _ => None,
        };
    }
    let signed = p.is_signed_int();
    match name {
        "min" | "max" | "wrapping_add" | "wrapping_sub" | "wrapping_mul" | "saturating_add"
        | "saturating_sub" => sig(vec![same()], same()),
        "clamp" => sig(vec![same(), same()], same()),
        "wrapping_neg" => sig(vec![], same()),
        "abs" | "signum" if signed => sig(vec![], same()),
        "is_positive" | "is_negative" if signed => sig(vec![], Ty::Bool),
        "pow" | "wrapping_pow" => sig(vec![u32_ty], same()),
        "abs_diff" => sig(vec![same()], prim(unsigned_of(p))),
        "count_ones" | "leading_zeros" | "trailing_zeros" => sig(vec![], u32_ty),
        _ => None,
    }
}

/// `recv.name(args)` on primitive `p` (the signature checked by [`method_sig`]).
pub fn method(p: Primitive, name: &str, x: &str, args: &[String]) -> String {
    let t = p.cuda_name();
    let a = |k: usize| args[k].as_str();
    if p.is_float() {
        return match name {
            "min" => format!("{}({x}, {})", fl(p, "fminf", "fmin"), a(0)),
            "max" => format!("{}({x}, {})", fl(p, "fmaxf", "fmax"), a(0)),
            "copysign" => format!("{}({x}, {})", fl(p, "copysignf", "copysign"), a(0)),
            "clamp" => format!("ms_rs_clamp({x}, {}, {})", a(0), a(1)),
            "mul_add" => format!(
                "{}({x}, {}, {})",
                fl(p, "__fmaf_rn", "__fma_rn"),
                a(0),
                a(1)
            ),
            "abs" => format!("{}({x})", fl(p, "fabsf", "fabs")),
            "sqrt" => format!("{}({x})", fl(p, "__fsqrt_rn", "__dsqrt_rn")),
            "floor" | "ceil" | "trunc" | "round" => format!("{name}{}({x})", fl(p, "f", "")),
            "signum" => format!("ms_rs_signum({x})"),
            "is_nan" => format!("(({x}) != ({x}))"),
            "is_finite" => format!("({}({x}) < {})", fl(p, "fabsf", "fabs"), infinity(p)),
            "is_infinite" => format!("({}({x}) == {})", fl(p, "fabsf", "fabs"), infinity(p)),
            "is_sign_negative" | "is_sign_positive" => {
                let negative = if p == Primitive::F32 {
                    format!("((__float_as_uint({x}) >> 31) != 0u)")
                } else {
                    format!("(__double_as_longlong({x}) < 0LL)")
                };
                if name == "is_sign_negative" {
                    negative
                } else {
                    format!("(!{negative})")
                }
            }
            _ => unreachable!("method_sig admitted `{name}`"),
        };
    }
    match name {
        "min" | "max" | "abs" | "signum" | "clamp" | "abs_diff" | "count_ones"
        | "leading_zeros" | "trailing_zeros" => {
            let mut all = vec![x.to_string()];
            all.extend(args.iter().cloned());
            format!("ms_rs_{name}<{t}>({})", all.join(", "))
        }
        "wrapping_add" => binary(BinOp::Add, p, x, a(0)),
        "wrapping_sub" => binary(BinOp::Sub, p, x, a(0)),
        "wrapping_mul" => binary(BinOp::Mul, p, x, a(0)),
        "wrapping_neg" => neg(p, x),
        "saturating_add" => format!("ms_rs_sat_add<{t}>({x}, {})", a(0)),
        "saturating_sub" => format!("ms_rs_sat_sub<{t}>({x}, {})", a(0)),
        "pow" | "wrapping_pow" => format!("ms_rs_wpow<{t}>({x}, {})", a(0)),
        "is_positive" => format!("(({x}) > ({t})0)"),
        "is_negative" => format!("(({x}) < ({t})0)"),
        _ => unreachable!("method_sig admitted `{name}`"),
    }
}

/// `x as to`, from `from`, with Rust's semantics; `None` where Rust has no such cast.
pub fn cast(from: &Ty, to: &Ty, x: &str) -> Option<String> {
    let to_p = to.primitive()?;
    let t = to_p.cuda_name();
    match from {
        Ty::Bool if !to_p.is_float() => Some(format!("(({t})({x}))")),
        Ty::Elem(_) => {
            let from_p = from.primitive()?;
            Some(if from_p.is_float() && !to_p.is_float() {
                format!("ms_rs_ftoi<{t}>((double)({x}))")
            } else {
                format!("(({t})({x}))")
            })
        }
        _ => None,
    }
}

/// An unsuffixed integer literal `v` (negated when `negative`) as primitive `p`.
pub fn int_literal(p: Primitive, v: u128, negative: bool) -> String {
    let t = p.cuda_name();
    if p.is_signed_int() {
        let value = if negative { -(v as i128) } else { v as i128 };
        literal::signed(t, value as i64)
    } else {
        let value = if negative { v.wrapping_neg() } else { v };
        literal::unsigned(t, value as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps_in_unsigned_types() {
        assert_eq!(
            binary(BinOp::Add, Primitive::I64, "a", "b"),
            "((long long)((unsigned long long)(a) + (unsigned long long)(b)))"
        );
        assert_eq!(
            binary(BinOp::Mul, Primitive::I8, "a", "b"),
            "((signed char)((unsigned int)(a) * (unsigned int)(b)))"
        );
        assert_eq!(neg(Primitive::I32, "x"), "((int)(-(unsigned int)(x)))");
        assert_eq!(
            binary(BinOp::Div, Primitive::U16, "x", "y"),
            "ms_rs_div<unsigned short>(x, y)"
        );
    }

    #[test]
    fn float_arithmetic_is_rounded_once_per_operation() {
        assert_eq!(
            binary(BinOp::Add, Primitive::F32, "x", "y"),
            "__fadd_rn(x, y)"
        );
        assert_eq!(
            binary(BinOp::Mul, Primitive::F64, "x", "y"),
            "__dmul_rn(x, y)"
        );
        assert_eq!(
            method(Primitive::F32, "min", "x", &["y".into()]),
            "fminf(x, y)"
        );
        assert_eq!(
            method(Primitive::F64, "mul_add", "x", &["y".into(), "z".into()]),
            "__fma_rn(x, y, z)"
        );
        assert_eq!(method(Primitive::F32, "floor", "x", &[]), "floorf(x)");
        assert_eq!(method(Primitive::F64, "round", "x", &[]), "round(x)");
    }

    #[test]
    fn methods_exist_where_rust_has_them() {
        assert!(method_sig(Primitive::U32, "abs").is_none());
        assert!(method_sig(Primitive::I32, "abs").is_some());
        assert!(method_sig(Primitive::F32, "wrapping_add").is_none());
        let diff = method_sig(Primitive::I16, "abs_diff").unwrap();
        assert_eq!(diff.ret.primitive(), Some(Primitive::U16));
        assert_eq!(
            method_sig(Primitive::U8, "pow").unwrap().args[0].primitive(),
            Some(Primitive::U32)
        );
    }

    #[test]
    fn casts_saturate_from_floats() {
        let f = prim(Primitive::F32);
        let i = prim(Primitive::I8);
        assert_eq!(
            cast(&f, &i, "x").unwrap(),
            "ms_rs_ftoi<signed char>((double)(x))"
        );
        assert_eq!(cast(&i, &f, "x").unwrap(), "((float)(x))");
        assert_eq!(cast(&Ty::Bool, &i, "x").unwrap(), "((signed char)(x))");
        assert!(cast(&Ty::Bool, &f, "x").is_none());
        assert_eq!(
            int_literal(Primitive::I8, 128, true),
            "((signed char)-128LL)"
        );
        assert_eq!(
            int_literal(Primitive::U32, 7, false),
            "((unsigned int)7ULL)"
        );
    }
}
