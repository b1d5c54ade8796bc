// Launch + synchronize latency: an empty kernel and the one-tile scan at n = 1024.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include KFILE
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
__global__ void one(int* p) { if (threadIdx.x == 0) p[0] = 1; }
template <typename F> double wall_us(F f) {
    for (int i = 0; i < 50; ++i) { f(); CHECK(cudaStreamSynchronize(0)); }
    std::vector<double> ts;
    for (int i = 0; i < 1000; ++i) {
        auto t = std::chrono::steady_clock::now();
        f(); CHECK(cudaStreamSynchronize(0));
        ts.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count());
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}
int main(int argc, char** argv) {
    if (argc > 1 && atoi(argv[1]) == 1) CHECK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
    if (argc > 1 && atoi(argv[1]) == 2) CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    int n = 1024; int *in, *out;
    CHECK(cudaMalloc(&in, 1 << 20)); CHECK(cudaMalloc(&out, 1 << 20));
    std::vector<int> h(n, 1); CHECK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
    double e = wall_us([&] { one<<<1, 32>>>(out); });
    double s = wall_us([&] { KNAME<<<1, MS_BLOCK>>>(in, out, (ms_u64)n, nullptr, 0, 0, 0, nullptr); });
    CHECK(cudaMemcpy(h.data(), out, n * 4, cudaMemcpyDeviceToHost));
    bool ok = true; for (int i = 0; i < n; ++i) ok = ok && h[i] == i + 1;
    printf("%s flags=%s: empty kernel %.2f us, tile_scan %dx%d n=1024 %.2f us %s\n", VNAME, argc > 1 ? argv[1] : "0", e, MS_BLOCK, MS_ITEMS, s, ok ? "ok" : "WRONG");
}
