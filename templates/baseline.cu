// A read-only pass over n 16-byte words: the floor of a reduction, as a copy is of a scan.
// Every word is read once; the result is written only in a case that never happens, so that
// the loads cannot be optimised away.
typedef unsigned long long ms_u64;
struct alignas(16) ms_word { unsigned int x, y, z, w; };
extern "C" __global__ void monoscan_read_pass(const ms_word* p, ms_u64 n, unsigned int* sink) {
    unsigned int acc = 0;
    for (ms_u64 i = (ms_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (ms_u64)gridDim.x * blockDim.x) {
        const ms_word v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u && n == 0) sink[0] = acc;
}
