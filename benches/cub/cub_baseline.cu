// Same-run CUB baselines for docs/performance.md (built and run by hand on a GPU machine):
//   nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/cub_baseline.cu -o /tmp/cub_baseline && /tmp/cub_baseline
// Prints, for each case, CUB's median time (CUDA events, 20 runs after warm-up) and the ratio
// to a device-to-device copy of the same bytes measured in the same run.
#include <cub/cub.cuh>
#include <cstdio>
#include <vector>
#include <algorithm>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

struct Affine { double a, b; };
struct Compose {
    __device__ __forceinline__ Affine operator()(const Affine& f, const Affine& g) const {
        return Affine{__dmul_rn(f.a, g.a), __dadd_rn(__dmul_rn(g.a, f.b), g.b)};
    }
};
struct Even { __device__ __forceinline__ bool operator()(const int& x) const { return (x & 1) == 0; } };

template <typename F> float median_ms(F f) {
    cudaEvent_t a, b; CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) f();
    std::vector<float> ts;
    for (int i = 0; i < 20; ++i) { CHECK(cudaEventRecord(a)); f(); CHECK(cudaEventRecord(b)); CHECK(cudaEventSynchronize(b)); float t; CHECK(cudaEventElapsedTime(&t, a, b)); ts.push_back(t); }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

template <typename T> float copy_ms(T* src, T* dst, size_t n) {
    return median_ms([&] { CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
}

int main() {
    cudaDeviceProp p; CHECK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s\n", p.name);
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
    return 0;
}
