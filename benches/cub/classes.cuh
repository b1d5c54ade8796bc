// The representative operator classes of monoscan::bench::classes (src/bench/classes/) as C++
// functors with the same semantics as the CUDA monoscan generates for them: unsigned
// (wrapping) integer arithmetic, the same expressions for the float classes (log-sum-exp and
// Welford's merge are hand-written CUDA snippets in monoscan, copied here as they are), and the
// same identities. Each class also has the generator of monoscan's inputs, bit for bit:
// SplitMix64 from the same seed, drawing in the same order, so that CUB and `monoscan bench
// --cases classes` scan the same data.
//
// Each class: `name`, element type `T`, `identity()`, `operator()(a, b)` ("a comes before b"),
// `gen(Rng&)`, and `exact` (whether results are compared with a host fold; the float classes
// are not, their operator is device-only).
#pragma once
#include <cstdint>
#include <limits>

struct Rng {  // SplitMix64, as monoscan's classes::Rng
    unsigned long long s;
    explicit Rng(unsigned long long seed) : s(seed) {}
    unsigned long long u64() {
        s += 0x9E3779B97F4A7C15ull;
        unsigned long long z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    unsigned u32() { return (unsigned)(u64() >> 32); }
    unsigned long long below(unsigned long long n) { return u64() % n; }
    double unit() { return (double)(u64() >> 11) / 4503599627370496.0 - 1.0; }  // [-1, 1)
};

// The seed of `monoscan bench --cases classes` (src/cli/bench_classes.rs).
static const unsigned long long CLASS_SEED = 0x6d6f6e6f7363616eull;
static const unsigned long long PRIME = 4294967291ull;  // the largest prime below 2^32

struct Lin32 { unsigned a, b; };
struct LinearU32 {
    typedef Lin32 T;
    static constexpr const char* name = "linear-u32";
    static constexpr bool exact = true;
    static T identity() { return T{1u, 0u}; }
    __host__ __device__ T operator()(const T& a, const T& b) const { return T{a.a * b.a, b.a * a.b + b.b}; }
    static T gen(Rng& r) { unsigned a = r.u32() | 1u; unsigned b = r.u32(); return T{a, b}; }
};

struct U32x3 { unsigned x, y, z; };
struct Sum3U32 {
    typedef U32x3 T;
    static constexpr const char* name = "sum3-u32";
    static constexpr bool exact = true;
    static T identity() { return T{0u, 0u, 0u}; }
    __host__ __device__ T operator()(const T& a, const T& b) const { return T{a.x + b.x, a.y + b.y, a.z + b.z}; }
    static T gen(Rng& r) { unsigned x = r.u32(); unsigned y = r.u32(); unsigned z = r.u32(); return T{x, y, z}; }
};

struct U64x3 { unsigned long long x, y, z; };
struct Sum3U64 {
    typedef U64x3 T;
    static constexpr const char* name = "sum3-u64";
    static constexpr bool exact = true;
    static T identity() { return T{0ull, 0ull, 0ull}; }
    __host__ __device__ T operator()(const T& a, const T& b) const { return T{a.x + b.x, a.y + b.y, a.z + b.z}; }
    static T gen(Rng& r) { unsigned long long x = r.u64(); unsigned long long y = r.u64(); unsigned long long z = r.u64(); return T{x, y, z}; }
};

struct Mat64 { unsigned long long m00, m01, m10, m11; };
struct Mat2U64 {  // combine(a, b) = a b, modulo 2^64
    typedef Mat64 T;
    static constexpr const char* name = "mat2-u64";
    static constexpr bool exact = true;
    static T identity() { return T{1ull, 0ull, 0ull, 1ull}; }
    __host__ __device__ T operator()(const T& a, const T& b) const {
        return T{a.m00 * b.m00 + a.m01 * b.m10, a.m00 * b.m01 + a.m01 * b.m11,
                 a.m10 * b.m00 + a.m11 * b.m10, a.m10 * b.m01 + a.m11 * b.m11};
    }
    static T gen(Rng& r) {
        unsigned long long m00 = r.u64() | 1ull, m01 = r.u64() & ~1ull, m10 = r.u64(), m11 = r.u64() | 1ull;
        return T{m00, m01, m10, m11};
    }
};

struct Affine3 { unsigned long long a[3], b[3]; };
struct Affine3U64 {  // apply f, then g, lane by lane, modulo 2^64
    typedef Affine3 T;
    static constexpr const char* name = "affine3-u64";
    static constexpr bool exact = true;
    static T identity() { return T{{1ull, 1ull, 1ull}, {0ull, 0ull, 0ull}}; }
    __host__ __device__ T operator()(const T& f, const T& g) const {
        T r;
        for (int i = 0; i < 3; ++i) {
            r.a[i] = f.a[i] * g.a[i];
            r.b[i] = g.a[i] * f.b[i] + g.b[i];
        }
        return r;
    }
    static T gen(Rng& r) {
        T t;
        for (int i = 0; i < 3; ++i) t.a[i] = r.u64() | 1ull;
        for (int i = 0; i < 3; ++i) t.b[i] = r.u64();
        return t;
    }
};

struct U64x8 { unsigned long long v[8]; };
struct Sum8U64 {
    typedef U64x8 T;
    static constexpr const char* name = "sum8-u64";
    static constexpr bool exact = true;
    static T identity() { return T{{0ull, 0ull, 0ull, 0ull, 0ull, 0ull, 0ull, 0ull}}; }
    __host__ __device__ T operator()(const T& a, const T& b) const {
        T r;
        for (int i = 0; i < 8; ++i) r.v[i] = a.v[i] + b.v[i];
        return r;
    }
    static T gen(Rng& r) {
        T t;
        for (int i = 0; i < 8; ++i) t.v[i] = r.u64();
        return t;
    }
};

struct LogSumExp {  // log(exp(a) + exp(b)); identity -inf
    typedef double T;
    static constexpr const char* name = "logsumexp-f64";
    static constexpr bool exact = false;
    static T identity() { return -std::numeric_limits<double>::infinity(); }
    __device__ T operator()(const T& a, const T& b) const {
        if (a != a || b != b) return a + b;
        const double hi = a >= b ? a : b, lo = a >= b ? b : a;
        if (hi == lo) return hi + 0.6931471805599453;
        return hi + log1p(exp(lo - hi));
    }
    static T gen(Rng& r) { return 10.0 * r.unit(); }
};

struct Moments { double n, mean, m2; };
struct Welford {  // Chan's merge of count, mean and squared deviations
    typedef Moments T;
    static constexpr const char* name = "welford-f64";
    static constexpr bool exact = false;
    static T identity() { return T{0.0, 0.0, 0.0}; }
    __device__ T operator()(const T& a, const T& b) const {
        if (a.n == 0.0) return b;
        if (b.n == 0.0) return a;
        const double n = a.n + b.n, d = b.mean - a.mean;
        T r;
        r.n = n;
        r.mean = a.mean + d * (b.n / n);
        r.m2 = a.m2 + b.m2 + d * d * (a.n * b.n / n);
        return r;
    }
    static T gen(Rng& r) { return T{1.0, 3.0 + r.unit(), 0.0}; }
};

struct ModAffine { unsigned long long a, b; };
struct AffineModP {  // apply f, then g, modulo P
    typedef ModAffine T;
    static constexpr const char* name = "affine-mod-u64";
    static constexpr bool exact = true;
    static constexpr unsigned long long P = PRIME;
    static T identity() { return T{1ull, 0ull}; }
    __host__ __device__ T operator()(const T& a, const T& b) const { return T{a.a * b.a % P, (b.a * a.b + b.b) % P}; }
    static T gen(Rng& r) { unsigned long long a = 1ull + r.below(P - 1ull); unsigned long long b = r.below(P); return T{a, b}; }
};

struct Hashed { unsigned long long pow, hash, len; };
struct PolyHash {  // the hash of x followed by y, modulo P
    typedef Hashed T;
    static constexpr const char* name = "hash-mod-u64";
    static constexpr bool exact = true;
    static constexpr unsigned long long P = PRIME;
    static constexpr unsigned long long BASE = 131ull;
    static T identity() { return T{1ull, 0ull, 0ull}; }
    __host__ __device__ T operator()(const T& x, const T& y) const {
        return T{x.pow * y.pow % P, (x.hash * y.pow + y.hash) % P, x.len + y.len};
    }
    static T gen(Rng& r) {  // a string of 1 to 8 random bytes, hashed
        const unsigned long long len = 1ull + r.below(8ull);
        T h = identity();
        for (unsigned long long i = 0; i < len; ++i) {
            const unsigned char c = (unsigned char)r.u32();
            h = PolyHash()(h, T{BASE % P, (unsigned long long)c % P, 1ull});
        }
        return h;
    }
};
