//! The static estimate of what one combine costs: the one place that reads an operator's CUDA
//! text for its cost. The shape policy ([`super::policy::combine_form`]) decides from it
//! whether the kernels inline the combine at every use or call one outlined copy.
//!
//! The estimate counts, in the combine bodies of the operator and of its nested operators
//! (each nested operator as often as its `alias::combine(` appears) and in the helper code of
//! the preludes (except the helper library every translated operator's prelude starts with, whose
//! calls are weighed instead), after comments, string literals and preprocessor lines are
//! removed:
//!
//! | what | weight |
//! | --- | --- |
//! | an arithmetic, bitwise or comparison operator | 1 (a `*` 4 where a 64-bit integer type appears) |
//! | `/` or `%` | 16; 32 where `double` appears; 64 where a 64-bit integer type appears |
//! | a double-precision transcendental call (`exp`, `log1p`, `pow`, `sin`, ...) | 64 |
//! | a single-precision one (`expf`, ...) | 24 |
//! | `sqrt` / `sqrtf`, `cbrt`, `rsqrt` | 32 / 8 |
//! | a fast intrinsic (`__expf`, `__dmul_rn`, `fmin`, `abs`, ...) | 1 |
//! | a call of a translated operator's helper (`ms_rs_wadd`, `ms_rs_shl`, ...) | 2; `ms_rs_div` and `ms_rs_rem` as `/` and `%`; `ms_rs_wmul` as `*`, `ms_rs_wpow` 16 `*` |
//! | a call of anything else (a helper of the prelude) | 8 |
//!
//! The weights are the order of magnitude of the instructions each expands to on the device:
//! a 64-bit remainder or an f64 `exp` is tens of instructions with branches, an add is one.
//! Loops inside a combine are counted once. The input map (applied once per loaded element,
//! never inside the kernels' reduction trees) is not counted.

use crate::monoid::CudaOp;

/// What one combine of an operator is estimated to cost (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CombineCost {
    /// Estimated device instructions per combine.
    pub weight: u32,
    /// Divisions and remainders.
    pub divisions: u32,
    /// Calls of transcendental functions (square roots included).
    pub transcendentals: u32,
    /// Whether the code uses 64-bit integers.
    pub wide_integers: bool,
}

impl CombineCost {
    /// The estimate for `op` (its combine, its nested operators' and its preludes' code).
    ///
    /// ```
    /// use monoscan::ops::{MatMulMod, Sum};
    /// use monoscan::tuning::cost::CombineCost;
    /// use monoscan::Monoid;
    /// let sum = CombineCost::of(&Sum::<i32>::new().cuda());
    /// assert_eq!((sum.weight, sum.divisions), (1, 0));
    /// let matmod = CombineCost::of(&MatMulMod::default().cuda());
    /// assert!(matmod.wide_integers && matmod.divisions == 1 && matmod.weight > 64);
    /// ```
    pub fn of(op: &CudaOp) -> CombineCost {
        let mut cost = CombineCost::default();
        add(op, &mut cost, 1);
        cost
    }
}

/// Names whose call costs nothing of note: fast intrinsics and simple math.
const CHEAP_CALLS: [&str; 16] = [
    "fmin",
    "fmax",
    "fminf",
    "fmaxf",
    "min",
    "max",
    "abs",
    "fabs",
    "fabsf",
    "llabs",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "copysign",
    "copysignf",
];

/// Double-precision transcendental functions (the single-precision ones end in `f`).
const TRANSCENDENTAL: [&str; 28] = [
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "pow", "sin", "cos", "tan",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
    "erfc", "tgamma", "lgamma", "fmod", "hypot",
];

/// Words that look like calls but are not: keywords and casts to built-in types.
const NOT_CALLS: [&str; 18] = [
    "if",
    "for",
    "while",
    "switch",
    "return",
    "sizeof",
    "alignof",
    "static_assert",
    "int",
    "unsigned",
    "long",
    "float",
    "double",
    "char",
    "short",
    "bool",
    "decltype",
    "signed",
];

/// Adds `times` combines of `op` (and what they call) to `cost`.
fn add(op: &CudaOp, cost: &mut CombineCost, times: u32) {
    // A translated operator's prelude starts with the helper library, most of which its
    // combine never calls: the calls are weighed where they are made (`call_weight`).
    let prelude = op
        .prelude
        .replace(crate::translate::RUST_OPS.trim_end(), "");
    let code = strip(&format!("{prelude}\n{}", op.combine));
    let wide = [
        "long long",
        "ms_u64",
        "ms_i64",
        "int64_t",
        "uint64_t",
        "size_t",
    ]
    .iter()
    .any(|t| code.contains(t));
    let double = code.contains("double") || op.elem.contains("double");
    cost.wide_integers |= wide;
    let one = weigh(&code, wide, double);
    cost.weight = cost.weight.saturating_add(one.weight.saturating_mul(times));
    cost.divisions = cost
        .divisions
        .saturating_add(one.divisions.saturating_mul(times));
    cost.transcendentals = cost
        .transcendentals
        .saturating_add(one.transcendentals.saturating_mul(times));
    for (alias, nested) in &op.nested {
        let calls = code.matches(&format!("{alias}::combine(")).count().max(1);
        add(nested, cost, times.saturating_mul(calls as u32));
    }
}

/// The weights of one piece of code (nested operators' calls excluded).
fn weigh(code: &str, wide: bool, double: bool) -> CombineCost {
    let mut cost = CombineCost::default();
    let division = if wide {
        64
    } else if double {
        32
    } else {
        16
    };
    let bytes = code.as_bytes();
    let mut i = 0;
    // The previous word, when nothing but spaces and `*`/`&` came after it: a name after a
    // type (`double mix(`) declares a function rather than calling it.
    let mut after_word: Option<&str> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &code[start..i];
            let qualified = start >= 2 && &code[start - 2..start] == "::";
            // A call, possibly of a template (`ms_rs_rem<unsigned long long>(`), whose
            // arguments are types, not comparisons: skipped.
            let mut called = code[i..].trim_start().starts_with('(');
            if let Some(len) = template_arguments(&code[i..]) {
                called = true;
                i += len;
            }
            let declared = after_word.is_some_and(|w| !matches!(w, "return" | "else" | "case"));
            // `alias::combine(` is a nested operator's combine, which `add` counts.
            if called && !qualified && !declared {
                if matches!(word, "ms_rs_div" | "ms_rs_rem") {
                    cost.divisions += 1;
                    cost.weight += division;
                } else {
                    cost.weight += call_weight(word, wide, &mut cost.transcendentals);
                }
            }
            after_word = Some(word);
            continue;
        }
        if !c.is_ascii_whitespace() {
            after_word = None;
        }
        if c.is_ascii_digit() {
            // A number, with its suffixes and exponent (`1e-3`, `0x1p4`, `2ULL`).
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'.'
                    || ((bytes[i] == b'-' || bytes[i] == b'+')
                        && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P')))
            {
                i += 1;
            }
            continue;
        }
        match c {
            b'/' | b'%' => {
                cost.divisions += 1;
                cost.weight += division;
            }
            b'*' => cost.weight += if wide { 4 } else { 1 },
            b'+' | b'-' if bytes.get(i + 1) == Some(&c) => {
                cost.weight += 1;
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'>') => i += 1,
            b'+' | b'-' | b'&' | b'|' | b'^' | b'~' | b'!' | b'<' | b'>' | b'?' => {
                cost.weight += 1;
                // `<<`, `&&`, `==`-like pairs count once.
                if matches!(bytes.get(i + 1), Some(n) if *n == c && c != b'!') {
                    i += 1;
                }
            }
            b'=' if bytes.get(i + 1) == Some(&b'=') => {
                cost.weight += 1;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    cost
}

/// The length of `<...>` (balanced) at the start of `rest`, spaces included, where a `(`
/// follows it: template arguments of a call.
fn template_arguments(rest: &str) -> Option<usize> {
    let skipped = rest.len() - rest.trim_start().len();
    let bytes = rest.as_bytes();
    if bytes.get(skipped) != Some(&b'<') {
        return None;
    }
    let mut depth = 0usize;
    for (k, &c) in bytes.iter().enumerate().skip(skipped) {
        match c {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    let after = &rest[k + 1..];
                    return after.trim_start().starts_with('(').then_some(k + 1);
                }
            }
            // Type names only: anything else makes `<` a comparison.
            c if c.is_ascii_alphanumeric() || matches!(c, b'_' | b' ' | b',' | b':' | b'*') => {}
            _ => return None,
        }
    }
    None
}

/// The weight of a call of `name` (transcendental calls are also counted); `wide` where 64-bit
/// integers appear.
fn call_weight(name: &str, wide: bool, transcendentals: &mut u32) -> u32 {
    // The translator's helpers (`templates/lib/rust_ops.cuh`): wrapping and checked integer
    // arithmetic, shifts, casts, a few instructions each; `ms_rs_wpow` a loop of products.
    if let Some(helper) = name.strip_prefix("ms_rs_") {
        let product = if wide { 4 } else { 1 };
        return match helper {
            "wmul" => product,
            "wpow" => 16 * product,
            _ => 2,
        };
    }
    if NOT_CALLS.contains(&name) || CHEAP_CALLS.contains(&name) || name.starts_with("__") {
        return if NOT_CALLS.contains(&name) { 0 } else { 1 };
    }
    let single = name.strip_suffix('f');
    if matches!(name, "sqrt" | "cbrt" | "rsqrt") {
        *transcendentals += 1;
        return 32;
    }
    if matches!(name, "sqrtf" | "cbrtf" | "rsqrtf") {
        *transcendentals += 1;
        return 8;
    }
    if TRANSCENDENTAL.contains(&name) {
        *transcendentals += 1;
        return 64;
    }
    if single.is_some_and(|s| TRANSCENDENTAL.contains(&s)) {
        *transcendentals += 1;
        return 24;
    }
    8
}

/// `code` without comments, string and character literals, and preprocessor lines.
fn strip(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    for line in code.lines() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let bytes = out.as_bytes();
    let mut kept = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            (q @ (b'"' | b'\''), _) => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                kept.push(b' ');
            }
            (c, _) => {
                kept.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Costs for the policy's and the autotuner's tests: one the kernels inline, one above
/// [`crate::tuning::policy::INLINE_MAX_WEIGHT`].
#[cfg(test)]
pub(crate) mod samples {
    use super::CombineCost;

    pub(crate) fn cheap() -> CombineCost {
        CombineCost {
            weight: 1,
            ..CombineCost::default()
        }
    }

    pub(crate) fn dear() -> CombineCost {
        CombineCost {
            weight: 200,
            ..CombineCost::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monoid::Monoid;
    use crate::ops::{
        Affine, ArgMax, ArgMin, BitAnd, BitOr, BitXor, MatMulMod, Max, Min, MinMax, Product,
        Segmented, Sum,
    };

    fn op(combine: &str) -> CudaOp {
        CudaOp::new::<f64>("t")
            .identity("0.0")
            .combine_body(combine)
    }

    #[test]
    fn weights_count_operations_divisions_and_calls() {
        assert_eq!(CombineCost::of(&op("return a + b;")).weight, 1);
        let div = CombineCost::of(&op("return a / b;"));
        assert_eq!((div.weight, div.divisions), (32, 1));
        let exp = CombineCost::of(&op("return a + log1p(exp(b - a));"));
        assert_eq!((exp.weight, exp.transcendentals), (2 + 128, 2));
        let single = CombineCost::of(
            &CudaOp::new::<f32>("t")
                .identity("0.0f")
                .combine_expr("expf(a) * b"),
        );
        assert_eq!(single.weight, 24 + 1);
        let wide = CombineCost::of(
            &CudaOp::new::<u64>("t")
                .identity("0ULL")
                .combine_expr("(unsigned long long)a * b % 7ULL"),
        );
        assert!(wide.wide_integers);
        assert_eq!(wide.weight, 4 + 64);
        // Comments, strings, preprocessor lines and numbers do not count.
        let quiet =
            op("// a / b * c\n/* x % y */\n#pragma unroll\nreturn a + 1e-3 + 0x1p4; // '/'");
        assert_eq!(CombineCost::of(&quiet).weight, 2);
        // Member access and pairs of characters count once.
        assert_eq!(
            CombineCost::of(&op("return a->x == b.x && a <= b ? a : b;")).weight,
            4
        );
        // A helper of the prelude costs its calls and its own code.
        let helper = op("return mix(a, b);")
            .prelude("__device__ double mix(double x, double y) { return x * y; }");
        assert_eq!(CombineCost::of(&helper).weight, 8 + 1);
    }

    #[test]
    fn a_translated_combine_weighs_its_calls_not_the_helper_library() {
        let translated = |body: &str| {
            CudaOp::new::<u64>("t")
                .prelude(crate::translate::RUST_OPS)
                .identity("0ULL")
                .combine_body(body)
        };
        let library = CombineCost::of(&translated("return a;"));
        assert_eq!((library.weight, library.divisions), (0, 0), "{library:?}");
        let add = CombineCost::of(&translated("return ms_rs_wadd<unsigned long long>(a, b);"));
        assert!(
            add.weight <= crate::tuning::policy::INLINE_MAX_WEIGHT,
            "{add:?}"
        );
        let rem = CombineCost::of(&translated(
            "return ms_rs_rem<unsigned long long>(ms_rs_wmul<unsigned long long>(a, b), 7ULL);",
        ));
        assert_eq!(rem.divisions, 1, "{rem:?}");
        assert!(rem.weight >= 64, "{rem:?}");
    }

    #[test]
    fn nested_operators_count_once_per_call() {
        let inner = op("return a / b;");
        let outer = CudaOp::new::<f64>("o")
            .identity("0.0")
            .nest("inner", inner.clone())
            .combine_body("return inner::combine(a, b) + inner::combine(b, a);");
        assert_eq!(CombineCost::of(&outer).weight, 1 + 2 * 32);
        assert_eq!(CombineCost::of(&outer).divisions, 2);
    }

    #[test]
    fn built_in_operators_are_cheap_except_the_modular_product() {
        let cheap = [
            Sum::<i32>::new().cuda(),
            Sum::<f64>::new().cuda(),
            Product::<u64>::new().cuda(),
            Min::<f32>::new().cuda(),
            Max::<f64>::new().cuda(),
            BitAnd::<u8>::new().cuda(),
            BitOr::<u64>::new().cuda(),
            BitXor::<i16>::new().cuda(),
            ArgMin::<f64>::new().cuda(),
            ArgMax::<i32>::new().cuda(),
            MinMax::<f32>::new().cuda(),
            Affine::<f64>::new().cuda(),
            Affine::<f32>::new().cuda(),
            Segmented::new(Sum::<f32>::new()).cuda(),
            Segmented::new(Affine::<f64>::new()).cuda(),
        ];
        for op in cheap {
            let cost = CombineCost::of(&op);
            assert!(
                cost.weight <= 16 && cost.divisions == 0,
                "{}: {cost:?}",
                op.name
            );
        }
        let matmod = CombineCost::of(&MatMulMod::default().cuda());
        assert_eq!((matmod.divisions, matmod.transcendentals), (1, 0));
        assert!(matmod.weight >= 64, "{matmod:?}");
    }
}
