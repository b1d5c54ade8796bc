// Same-run CUB baselines for docs/performance.md (built and run by hand on a GPU machine):
//   nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/cub_baseline.cu -o /tmp/cub_baseline && /tmp/cub_baseline
// Prints, for each case, CUB's median time (CUDA events, 20 runs after warm-up) and the ratio
// to a device-to-device copy of the same bytes measured in the same run.
// `/tmp/cub_baseline builtins` runs the built-in cases alone, `/tmp/cub_baseline sizes` CUB's sum
// and reduction of i32 at every size of `monoscan bench --min-log2 14 --max-log2 28 --step 2`,
// timed as monoscan bench times (each run after a 50 us hold of the stream, so that the events
// span the GPU's work only), beside a held copy and a held read pass;
// `/tmp/cub_baseline maps` CUB's reductions through the maps of `monoscan bench --cases
// reduce-maps` (u8 flags counted in u32, f16 summed in f32, each a DeviceReduce::Sum over a
// transform iterator) at the same sizes, held the same way, beside a held read pass of the
// inputs, each total checked against the host's (one `cub_map,...` line each);
// `/tmp/cub_baseline classes` the representative operator classes alone
// (benches/cub/classes.cuh): for each, one check line (CUB's scan and reduce of 1,000,003
// elements against a host fold, for the exact classes) and one machine-readable line per case
// (`cub_class,...`, header first): DeviceScan::InclusiveScan beside a device-to-device copy,
// DeviceReduce::Reduce (from the identity) beside a read pass of the same bytes, at 2^16, 2^20
// and 2^24 elements (below 1 GiB) and at 1 GiB of input (2^30 / size rounded down to a
// multiple of 2^16 elements), the sizes of `monoscan bench --cases classes`, on the same data.
#include <cub/cub.cuh>
#include <thrust/iterator/transform_iterator.h>
#include <cuda_fp16.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
#include "classes.cuh"

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

struct Affine { double a, b; };
struct Compose {
    __device__ __forceinline__ Affine operator()(const Affine& f, const Affine& g) const {
        return Affine{__dmul_rn(f.a, g.a), __dadd_rn(__dmul_rn(g.a, f.b), g.b)};
    }
};
struct Even { __device__ __forceinline__ bool operator()(const int& x) const { return (x & 1) == 0; } };

// `before` runs ahead of each start event, untimed.
template <typename B, typename F> float median_ms(B before, F f) {
    cudaEvent_t a, b; CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) f();
    std::vector<float> ts;
    for (int i = 0; i < 20; ++i) { before(); CHECK(cudaEventRecord(a)); f(); CHECK(cudaEventRecord(b)); CHECK(cudaEventSynchronize(b)); float t; CHECK(cudaEventElapsedTime(&t, a, b)); ts.push_back(t); }
    std::sort(ts.begin(), ts.end());
    CHECK(cudaEventDestroy(a)); CHECK(cudaEventDestroy(b));
    return ts[ts.size() / 2];
}
template <typename F> float median_ms(F f) { return median_ms([] {}, f); }

// Keeps the stream busy for `ns` nanoseconds of the global timer, as monoscan bench's hold does:
// the host enqueues the start event, the work and the end event meanwhile.
__global__ void hold(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

// median_ms with each timed run queued behind a 50 us hold.
template <typename F> float held_ms(F f) {
    return median_ms([&] { hold<<<1, 1>>>(50000); CHECK(cudaGetLastError()); }, f);
}

template <typename T> float copy_ms(T* src, T* dst, size_t n) {
    return median_ms([&] { CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
}

// A read-only pass over n 16-byte words, as monoscan's floor of a reduction
// (templates/baseline.cu): every word read once, the result written in a case that never occurs.
struct alignas(16) Word { unsigned x, y, z, w; };
__global__ void read_pass(const Word* p, size_t n, unsigned* sink) {
    unsigned acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const Word v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u && n == 0) sink[0] = acc;
}

// Whether CUB's inclusive scan and reduce of the first `n` elements equal a host fold (exact
// classes); prints one `cub_check` line each.
template <typename Op>
void check_class(const std::vector<typename Op::T>& h, typename Op::T* x, typename Op::T* y, typename Op::T* out, size_t n) {
    typedef typename Op::T T;
    if constexpr (Op::exact) {
        void* tmp = nullptr; size_t bytes = 0;
        CHECK(cub::DeviceScan::InclusiveScan(tmp, bytes, x, y, Op(), (int)n)); CHECK(cudaMalloc(&tmp, bytes));
        CHECK(cub::DeviceScan::InclusiveScan(tmp, bytes, x, y, Op(), (int)n));
        std::vector<T> got(n); CHECK(cudaMemcpy(got.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost));
        T acc = Op::identity();
        size_t bad = n;
        for (size_t i = 0; i < n; ++i) {
            acc = Op()(acc, h[i]);
            if (bad == n && std::memcmp(&acc, &got[i], sizeof(T)) != 0) bad = i;
        }
        if (bad == n) printf("cub_check,%s,scan,%zu,equal to the host fold\n", Op::name, n);
        else printf("cub_check,%s,scan,%zu,differs from the host fold at element %zu\n", Op::name, n, bad);
        CHECK(cudaFree(tmp)); tmp = nullptr; bytes = 0;
        CHECK(cub::DeviceReduce::Reduce(tmp, bytes, x, out, (int)n, Op(), Op::identity())); CHECK(cudaMalloc(&tmp, bytes));
        CHECK(cub::DeviceReduce::Reduce(tmp, bytes, x, out, (int)n, Op(), Op::identity()));
        T total; CHECK(cudaMemcpy(&total, out, sizeof(T), cudaMemcpyDeviceToHost));
        printf("cub_check,%s,reduce,%zu,%s\n", Op::name, n,
               std::memcmp(&total, &acc, sizeof(T)) == 0 ? "equal to the host fold" : "differs from the host fold");
        CHECK(cudaFree(tmp));
    } else {
        printf("cub_check,%s,scan and reduce,%zu,not compared (a float class)\n", Op::name, n);
    }
}

// One class: the check, then scan and reduce at each size beside a copy and a read pass.
template <typename Op>
void run_class(const cudaDeviceProp& p) {
    typedef typename Op::T T;
    const size_t gib = size_t(1) << 30, size = sizeof(T);
    std::vector<size_t> sizes;
    for (int l : {16, 20, 24}) if ((size_t(1) << l) * size < gib) sizes.push_back(size_t(1) << l);
    sizes.push_back(gib / size / 65536 * 65536);
    const size_t check_n = 1000003;
    const size_t largest = std::max(sizes.back(), check_n);
    std::vector<T> h(largest);
    Rng rng(CLASS_SEED);
    for (size_t i = 0; i < largest; ++i) h[i] = Op::gen(rng);
    T *x, *y, *out;
    CHECK(cudaMalloc(&x, largest * size)); CHECK(cudaMalloc(&y, largest * size)); CHECK(cudaMalloc(&out, size));
    CHECK(cudaMemcpy(x, h.data(), largest * size, cudaMemcpyHostToDevice));
    unsigned* sink; CHECK(cudaMalloc(&sink, 4));
    check_class<Op>(h, x, y, out, check_n);
    for (size_t n : sizes) {
        void* tmp = nullptr; size_t bytes = 0;
        CHECK(cub::DeviceScan::InclusiveScan(tmp, bytes, x, y, Op(), (int)n)); CHECK(cudaMalloc(&tmp, bytes));
        const float c = copy_ms(x, y, n);
        const float t = median_ms([&] { CHECK(cub::DeviceScan::InclusiveScan(tmp, bytes, x, y, Op(), (int)n)); });
        printf("cub_class,%s,%zu,scan,%zu,%.4f,copy,%.4f,%.3f\n", Op::name, size, n, t, c, c / t);
        CHECK(cudaFree(tmp)); tmp = nullptr; bytes = 0;
        CHECK(cub::DeviceReduce::Reduce(tmp, bytes, x, out, (int)n, Op(), Op::identity())); CHECK(cudaMalloc(&tmp, bytes));
        const size_t words = n * size / 16;
        const float rp = median_ms([&] { read_pass<<<p.multiProcessorCount * 8, 512>>>((const Word*)x, words, sink); CHECK(cudaGetLastError()); });
        const float r = median_ms([&] { CHECK(cub::DeviceReduce::Reduce(tmp, bytes, x, out, (int)n, Op(), Op::identity())); });
        printf("cub_class,%s,%zu,reduce,%zu,%.4f,read pass,%.4f,%.3f\n", Op::name, size, n, r, rp, rp / r);
        CHECK(cudaFree(tmp));
    }
    CHECK(cudaFree(x)); CHECK(cudaFree(y)); CHECK(cudaFree(out)); CHECK(cudaFree(sink));
}

// CUB's inclusive sum and reduction of i32 from 2^14 to 2^28 elements, held as monoscan bench
// holds, beside a held copy and a held read pass of the same bytes; one `cub_size,...` line each.
void run_sizes(const cudaDeviceProp& p) {
    const size_t largest = size_t(1) << 28;
    int *x, *y; unsigned* sink;
    CHECK(cudaMalloc(&x, largest * 4)); CHECK(cudaMalloc(&y, largest * 4)); CHECK(cudaMalloc(&sink, 4));
    CHECK(cudaMemset(x, 1, largest * 4));
    printf("cub_size,op,n,ms,baseline,baseline_ms,fraction\n");
    for (int l = 14; l <= 28; l += 2) {
        const size_t n = size_t(1) << l;
        void* tmp = nullptr; size_t bytes = 0;
        CHECK(cub::DeviceScan::InclusiveSum(tmp, bytes, x, y, (int)n)); CHECK(cudaMalloc(&tmp, bytes));
        const float c = held_ms([&] { CHECK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice)); });
        const float t = held_ms([&] { CHECK(cub::DeviceScan::InclusiveSum(tmp, bytes, x, y, (int)n)); });
        printf("cub_size,inclusive sum i32,%zu,%.4f,copy,%.4f,%.3f\n", n, t, c, c / t);
        CHECK(cudaFree(tmp)); tmp = nullptr; bytes = 0;
        CHECK(cub::DeviceReduce::Sum(tmp, bytes, x, y, (int)n)); CHECK(cudaMalloc(&tmp, bytes));
        const float rp = held_ms([&] { read_pass<<<p.multiProcessorCount * 8, 512>>>((const Word*)x, n / 4, sink); CHECK(cudaGetLastError()); });
        const float r = held_ms([&] { CHECK(cub::DeviceReduce::Sum(tmp, bytes, x, y, (int)n)); });
        printf("cub_size,reduce sum i32,%zu,%.4f,read pass,%.4f,%.3f\n", n, r, rp, rp / r);
        CHECK(cudaFree(tmp));
    }
    CHECK(cudaFree(x)); CHECK(cudaFree(y)); CHECK(cudaFree(sink));
}

struct FlagCount { __device__ __forceinline__ unsigned operator()(const uint8_t& x) const { return x != 0 ? 1u : 0u; } };
struct Widen { __device__ __forceinline__ float operator()(const __half& x) const { return __half2float(x); } };

// One map's reductions from 2^14 to 2^28 inputs: `x` on the device, `want(n)` the host's total.
template <typename In, typename Out, typename Map, typename Want>
void run_map(const cudaDeviceProp& p, const char* name, const In* x, Map map, Want want) {
    Out* out; unsigned* sink;
    CHECK(cudaMalloc(&out, sizeof(Out))); CHECK(cudaMalloc(&sink, 4));
    auto it = thrust::make_transform_iterator(x, map);
    for (int l = 14; l <= 28; l += 2) {
        const size_t n = size_t(1) << l;
        void* tmp = nullptr; size_t bytes = 0;
        CHECK(cub::DeviceReduce::Sum(tmp, bytes, it, out, (int)n)); CHECK(cudaMalloc(&tmp, bytes));
        const size_t words = n * sizeof(In) / 16;
        const float rp = held_ms([&] { read_pass<<<p.multiProcessorCount * 8, 512>>>((const Word*)x, words, sink); CHECK(cudaGetLastError()); });
        const float r = held_ms([&] { CHECK(cub::DeviceReduce::Sum(tmp, bytes, it, out, (int)n)); });
        Out got; CHECK(cudaMemcpy(&got, out, sizeof(Out), cudaMemcpyDeviceToHost));
        printf("cub_map,%s,%zu,%.4f,read pass,%.4f,%.3f,%s\n", name, n, r, rp, rp / r,
               got == want(n) ? "equal to the host's total" : "differs from the host's total");
        CHECK(cudaFree(tmp));
    }
    CHECK(cudaFree(out)); CHECK(cudaFree(sink));
}

// The reductions of `monoscan bench --cases reduce-maps`, on the same inputs: every third u8
// flag set; f16 values (i mod 61) - 30, whose every run sums exactly.
void run_maps(const cudaDeviceProp& p) {
    const size_t largest = size_t(1) << 28;
    std::vector<uint8_t> flags(largest);
    std::vector<__half> halves(largest);
    for (size_t i = 0; i < largest; ++i) {
        flags[i] = i % 3 == 0;
        halves[i] = __float2half((float)((long long)(i % 61) - 30));
    }
    uint8_t* f; __half* h;
    CHECK(cudaMalloc(&f, largest)); CHECK(cudaMalloc(&h, largest * 2));
    CHECK(cudaMemcpy(f, flags.data(), largest, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(h, halves.data(), largest * 2, cudaMemcpyHostToDevice));
    printf("cub_map,map,n,ms,baseline,baseline_ms,fraction,check\n");
    run_map<uint8_t, unsigned>(p, "u8 flags to u32 count", f, FlagCount(), [](size_t n) { return (unsigned)((n + 2) / 3); });
    run_map<__half, float>(p, "f16 to f32 sum", h, Widen(), [](size_t n) {
        long long acc = 0;
        for (size_t i = 0; i < n % 61; ++i) acc += (long long)i - 30;
        return (float)acc;
    });
    CHECK(cudaFree(f)); CHECK(cudaFree(h));
}

void run_classes(const cudaDeviceProp& p) {
    printf("cub_class,class,elem_bytes,op,n,ms,baseline,baseline_ms,fraction\n");
    run_class<LinearU32>(p);
    run_class<Sum3U32>(p);
    run_class<Sum3U64>(p);
    run_class<Mat2U64>(p);
    run_class<Affine3U64>(p);
    run_class<Sum8U64>(p);
    run_class<LogSumExp>(p);
    run_class<Welford>(p);
    run_class<AffineModP>(p);
    run_class<PolyHash>(p);
}

int main(int argc, char** argv) {
    const bool builtins = argc < 2 || std::strcmp(argv[1], "builtins") == 0;
    const bool classes = argc < 2 || std::strcmp(argv[1], "classes") == 0;
    const bool sizes = argc >= 2 && std::strcmp(argv[1], "sizes") == 0;
    const bool maps = argc >= 2 && std::strcmp(argv[1], "maps") == 0;
    if (!builtins && !classes && !sizes && !maps) { printf("usage: %s [builtins|classes|sizes|maps]\n", argv[0]); return 2; }
    cudaDeviceProp p; CHECK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s\n", p.name);
    if (builtins) {
    {   // inclusive sum i32, 2^28
        size_t n = size_t(1) << 28; int *x, *y; CHECK(cudaMalloc(&x, n * 4)); CHECK(cudaMalloc(&y, n * 4));
        CHECK(cudaMemset(x, 1, n * 4));
        void* tmp = nullptr; size_t bytes = 0; cub::DeviceScan::InclusiveSum(tmp, bytes, x, y, (int)n); CHECK(cudaMalloc(&tmp, bytes));
        float c = copy_ms(x, y, n);
        float t = median_ms([&] { cub::DeviceScan::InclusiveSum(tmp, bytes, x, y, (int)n); });
        printf("cub inclusive sum i32 2^28: %.4f ms, copy %.4f ms, fraction of copy %.3f\n", t, c, c / t);
        void* rtmp = nullptr; size_t rbytes = 0; cub::DeviceReduce::Sum(rtmp, rbytes, x, y, (int)n); CHECK(cudaMalloc(&rtmp, rbytes));
        float r = median_ms([&] { cub::DeviceReduce::Sum(rtmp, rbytes, x, y, (int)n); });
        printf("cub reduce sum i32 2^28: %.4f ms, copy/2 %.4f ms\n", r, c / 2);
        // select-if (keep even), 2^28
        int* nsel; CHECK(cudaMalloc(&nsel, 4));
        void* stmp = nullptr; size_t sbytes = 0; cub::DeviceSelect::If(stmp, sbytes, x, y, nsel, (int)n, Even()); CHECK(cudaMalloc(&stmp, sbytes));
        // Alternate parities so that about half is kept.
        std::vector<int> h(n); for (size_t i = 0; i < n; ++i) h[i] = int((i * 2654435761ull) >> 7); CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
        float s = median_ms([&] { cub::DeviceSelect::If(stmp, sbytes, x, y, nsel, (int)n, Even()); });
        printf("cub select-if i32 2^28 (about half kept): %.4f ms, copy %.4f ms, time / copy %.3f\n", s, c, s / c);
        CHECK(cudaFree(x)); CHECK(cudaFree(y)); CHECK(cudaFree(tmp)); CHECK(cudaFree(rtmp)); CHECK(cudaFree(stmp));
    }
    {   // inclusive scan of the 16-byte affine-map operator, 2^26
        size_t n = size_t(1) << 26; Affine *x, *y; CHECK(cudaMalloc(&x, n * 16)); CHECK(cudaMalloc(&y, n * 16));
        CHECK(cudaMemset(x, 0, n * 16));
        void* tmp = nullptr; size_t bytes = 0; cub::DeviceScan::InclusiveScan(tmp, bytes, x, y, Compose(), (int)n); CHECK(cudaMalloc(&tmp, bytes));
        float c = copy_ms(x, y, n);
        float t = median_ms([&] { cub::DeviceScan::InclusiveScan(tmp, bytes, x, y, Compose(), (int)n); });
        printf("cub inclusive scan affine f64 (16 B) 2^26: %.4f ms, copy %.4f ms, fraction of copy %.3f\n", t, c, c / t);
    }
    }
    if (sizes) run_sizes(p);
    if (maps) run_maps(p);
    if (classes) run_classes(p);
    return 0;
}
