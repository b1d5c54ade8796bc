#ifndef MONOSCAN_RUST_OPS
#define MONOSCAN_RUST_OPS
// Rust's semantics for the operations #[monoscan::operator] translates, where CUDA's differ
// or need more than one expression: integer division without traps, saturating and wrapping
// forms, Rust's min/max/clamp/signum, and bit counts. Arithmetic that one expression spells
// exactly (wrapping +, -, *; __fadd_rn and friends) is written inline by the translator.
template <class T> struct ms_rs_int;
#define MS_RS_INT(T, UT, W, S, LO, HI)                                                        \
    template <> struct ms_rs_int<T> {                                                        \
        typedef UT unsigned_t; /* the unsigned type of the same width */                     \
        typedef W wide_t;      /* the unsigned type the arithmetic is done in */             \
        static constexpr bool is_signed = S;                                                 \
        static constexpr int bits = (int)(sizeof(T) * 8);                                    \
        static __device__ __forceinline__ T lo() { return LO; }                              \
        static __device__ __forceinline__ T hi() { return HI; }                              \
    };
MS_RS_INT(signed char, unsigned char, unsigned int, true, (signed char)(-127 - 1), (signed char)127)
MS_RS_INT(unsigned char, unsigned char, unsigned int, false, (unsigned char)0, (unsigned char)255)
MS_RS_INT(short, unsigned short, unsigned int, true, (short)(-32767 - 1), (short)32767)
MS_RS_INT(unsigned short, unsigned short, unsigned int, false, (unsigned short)0, (unsigned short)65535)
MS_RS_INT(int, unsigned int, unsigned int, true, (int)(-2147483647 - 1), 2147483647)
MS_RS_INT(unsigned int, unsigned int, unsigned int, false, 0u, 4294967295u)
MS_RS_INT(long long, unsigned long long, unsigned long long, true, (-9223372036854775807LL - 1LL), 9223372036854775807LL)
MS_RS_INT(unsigned long long, unsigned long long, unsigned long long, false, 0ull, 18446744073709551615ull)
#undef MS_RS_INT

template <class T> __device__ __forceinline__ T ms_rs_wadd(T x, T y) {
    typedef typename ms_rs_int<T>::wide_t W;
    return (T)((W)x + (W)y);
}
template <class T> __device__ __forceinline__ T ms_rs_wsub(T x, T y) {
    typedef typename ms_rs_int<T>::wide_t W;
    return (T)((W)x - (W)y);
}
template <class T> __device__ __forceinline__ T ms_rs_wmul(T x, T y) {
    typedef typename ms_rs_int<T>::wide_t W;
    return (T)((W)x * (W)y);
}
// Rust panics on a zero divisor, and `MIN / -1` overflows; the device returns 0 for the
// first and wraps the second (`wrapping_div`, `wrapping_rem`), never trapping.
template <class T> __device__ __forceinline__ T ms_rs_div(T x, T y) {
    if (y == (T)0) return (T)0;
    if constexpr (ms_rs_int<T>::is_signed) if (x == ms_rs_int<T>::lo() && y == (T)(-1)) return x;
    return (T)(x / y);
}
template <class T> __device__ __forceinline__ T ms_rs_rem(T x, T y) {
    if (y == (T)0) return (T)0;
    if constexpr (ms_rs_int<T>::is_signed) if (y == (T)(-1)) return (T)0;
    return (T)(x % y);
}
template <class T> __device__ __forceinline__ T ms_rs_min(T x, T y) { return y < x ? y : x; }
template <class T> __device__ __forceinline__ T ms_rs_max(T x, T y) { return y < x ? x : y; }
template <class T> __device__ __forceinline__ T ms_rs_clamp(T x, T lo, T hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}
template <class T> __device__ __forceinline__ T ms_rs_abs(T x) {
    return x < (T)0 ? ms_rs_wsub((T)0, x) : x;
}
template <class T> __device__ __forceinline__ T ms_rs_signum(T x) {
    return (T)((x > (T)0) - (x < (T)0));
}
template <class T>
__device__ __forceinline__ typename ms_rs_int<T>::unsigned_t ms_rs_abs_diff(T x, T y) {
    typedef typename ms_rs_int<T>::unsigned_t U;
    typedef typename ms_rs_int<T>::wide_t W;
    return x < y ? (U)((W)y - (W)x) : (U)((W)x - (W)y);
}
template <class T> __device__ __forceinline__ T ms_rs_sat_add(T x, T y) {
    T r = ms_rs_wadd(x, y);
    if constexpr (ms_rs_int<T>::is_signed) {
        if (y > (T)0 && r < x) return ms_rs_int<T>::hi();
        if (y < (T)0 && r > x) return ms_rs_int<T>::lo();
        return r;
    }
    return r < x ? ms_rs_int<T>::hi() : r;
}
template <class T> __device__ __forceinline__ T ms_rs_sat_sub(T x, T y) {
    T r = ms_rs_wsub(x, y);
    if constexpr (ms_rs_int<T>::is_signed) {
        if (y < (T)0 && r < x) return ms_rs_int<T>::hi();
        if (y > (T)0 && r > x) return ms_rs_int<T>::lo();
        return r;
    }
    return r > x ? ms_rs_int<T>::lo() : r;
}
template <class T> __device__ __forceinline__ T ms_rs_wpow(T x, unsigned int e) {
    T r = (T)1;
    while (e != 0u) {
        if (e & 1u) r = ms_rs_wmul(r, x);
        x = ms_rs_wmul(x, x);
        e >>= 1;
    }
    return r;
}
template <class T> __device__ __forceinline__ T ms_rs_shl(T x, unsigned int n) {
    typedef typename ms_rs_int<T>::wide_t W;
    return (T)((W)x << (n & (unsigned int)(ms_rs_int<T>::bits - 1)));
}
template <class T> __device__ __forceinline__ T ms_rs_shr(T x, unsigned int n) {
    return (T)(x >> (n & (unsigned int)(ms_rs_int<T>::bits - 1)));
}
template <class T> __device__ __forceinline__ unsigned int ms_rs_count_ones(T x) {
    typedef typename ms_rs_int<T>::unsigned_t U;
    return sizeof(T) == 8 ? (unsigned int)__popcll((unsigned long long)(U)x)
                          : (unsigned int)__popc((unsigned int)(U)x);
}
template <class T> __device__ __forceinline__ unsigned int ms_rs_leading_zeros(T x) {
    typedef typename ms_rs_int<T>::unsigned_t U;
    return sizeof(T) == 8 ? (unsigned int)__clzll((long long)(U)x)
                          : (unsigned int)__clz((int)(unsigned int)(U)x) - (unsigned int)(32 - ms_rs_int<T>::bits);
}
template <class T> __device__ __forceinline__ unsigned int ms_rs_trailing_zeros(T x) {
    typedef typename ms_rs_int<T>::unsigned_t U;
    if ((U)x == (U)0) return (unsigned int)ms_rs_int<T>::bits;
    return sizeof(T) == 8 ? (unsigned int)(__ffsll((long long)(U)x) - 1)
                          : (unsigned int)(__ffs((int)(unsigned int)(U)x) - 1);
}
// An index Rust checks (and panics on when it is out of range): out of range, the device
// reads the array's last element, never memory outside the array.
__device__ __forceinline__ unsigned long long ms_rs_index(unsigned long long i, unsigned long long n) {
    return i < n ? i : n - 1ull;
}
// Float -> integer `as`: saturating, NaN to 0, as Rust defines it.
template <class T> __device__ __forceinline__ T ms_rs_ftoi(double x) {
    if (x != x) return (T)0;
    if (x <= (double)ms_rs_int<T>::lo()) return ms_rs_int<T>::lo();
    if (x >= (double)ms_rs_int<T>::hi()) return ms_rs_int<T>::hi();
    return (T)x;
}
// Floats: Rust's clamp (NaN stays NaN) and signum (+-1 for zeros, NaN for NaN).
__device__ __forceinline__ float ms_rs_clamp(float x, float lo, float hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}
__device__ __forceinline__ double ms_rs_clamp(double x, double lo, double hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}
__device__ __forceinline__ float ms_rs_signum(float x) { return x != x ? x : copysignf(1.0f, x); }
__device__ __forceinline__ double ms_rs_signum(double x) { return x != x ? x : copysign(1.0, x); }
#endif
