// Session 8: host time per call of what a TMA-form scan does on the host before its launch,
// against a copy's enqueue (run by hand on a GPU machine):
//   nvcc -O2 -std=c++17 -arch=sm_90 host_cost.cu -o host_cost -lcuda && ./host_cost
// Prints microseconds per call (the encode: mean of 20,000; launches and copies: of 500 queued
// on an idle GPU, few enough that the queue never fills).
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
struct alignas(64) Map { unsigned long long w[16]; };
__global__ void k15(const int*, int*, unsigned long long, unsigned, void*, void*, void*, unsigned*, unsigned, int, int,
                    int, int*, const __grid_constant__ Map m, unsigned) {}
template <typename F> double us_per(F f, int reps = 20000, int warm = 1000) {
    for (int i = 0; i < warm; ++i) f();
    cudaDeviceSynchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
}
int main() {
    void* buf; cudaMalloc(&buf, 1 << 26);
    CUtensorMap m;
    cuuint64_t dims[2] = {128, (1 << 26) / 128}; cuuint64_t strides[1] = {128};
    cuuint32_t box[2] = {128, 192}; cuuint32_t es[2] = {1, 1};
    double enc = us_per([&] {
        cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, buf, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    });
    Map mm{};
    double launch = us_per([&] { k15<<<1, 32>>>(nullptr, nullptr, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0, 0, 0, nullptr, mm, 0); }, 500, 50);
    cudaDeviceSynchronize();
    double copy = us_per([&] { cudaMemcpyAsync((char*)buf + 64, buf, 64, cudaMemcpyDeviceToDevice); }, 500, 50);
    cudaDeviceSynchronize();
    printf("host us per call: cuTensorMapEncodeTiled %.3f, launch (15 args, 128-byte map) %.3f, cudaMemcpyAsync D2D %.3f\n", enc, launch, copy);
    return 0;
}
