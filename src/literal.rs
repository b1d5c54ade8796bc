//! C++ spellings of Rust constants, for baking values into generated kernels.
//!
//! Every literal is exact: integers carry a cast and a suffix wide enough for their value
//! (`INT64_MIN` is written as an expression, since `-9223372036854775808` is not a literal in
//! C++), finite floats use Rust's shortest round-trip form, and infinities and NaNs are written
//! as `__builtin_bit_cast` of their bit pattern, which NVRTC accepts in constant expressions.

/// Spells a signed integer of the C++ type `ctype`.
pub fn signed(ctype: &str, v: i64) -> String {
    if v == i64::MIN {
        format!("(({ctype})(-9223372036854775807LL - 1LL))")
    } else {
        format!("(({ctype}){v}LL)")
    }
}

/// Spells an unsigned integer of the C++ type `ctype`.
pub fn unsigned(ctype: &str, v: u64) -> String {
    format!("(({ctype}){v}ULL)")
}

/// Spells an `f32` exactly.
pub fn f32(v: f32) -> String {
    if v.is_finite() {
        let s = format!("{v:?}");
        let s = if s.contains(['.', 'e']) {
            s
        } else {
            format!("{s}.0")
        };
        format!("{s}f")
    } else {
        format!("__builtin_bit_cast(float, 0x{:08x}u)", v.to_bits())
    }
}

/// Spells an `f64` exactly.
pub fn f64(v: f64) -> String {
    if v.is_finite() {
        let s = format!("{v:?}");
        if s.contains(['.', 'e']) {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        format!("__builtin_bit_cast(double, 0x{:016x}ull)", v.to_bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(signed("int", -5), "((int)-5LL)");
        assert_eq!(
            signed("long long", i64::MIN),
            "((long long)(-9223372036854775807LL - 1LL))"
        );
        assert_eq!(
            unsigned("unsigned long long", u64::MAX),
            "((unsigned long long)18446744073709551615ULL)"
        );
    }

    #[test]
    fn floats_round_trip() {
        assert_eq!(f32(0.1), "0.1f");
        assert_eq!(f32(3.0), "3.0f");
        assert_eq!(f64(1e300), "1e300");
        assert_eq!(f32(f32::INFINITY), "__builtin_bit_cast(float, 0x7f800000u)");
        assert_eq!(
            f64(f64::NEG_INFINITY),
            "__builtin_bit_cast(double, 0xfff0000000000000ull)"
        );
        for v in [0.1f64, 1.0 / 3.0, 6.02214076e23, -2.5e-300] {
            assert_eq!(f64(v).parse::<f64>().unwrap(), v);
        }
    }
}
