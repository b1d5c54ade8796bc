{% include "lib/textbook.cuh" %}
// The textbook shared-memory tree reduction, with contiguous active threads. The textbook's
// `if (t < stride) s[t] += s[t + stride]` pairs element t with element t + stride, which is
// right only for commutative operators; here thread t merges the two adjacent runs that start
// at 2*stride*t, so the active threads are still contiguous (t < MS_BLOCK / stride) and the
// order is kept. Each block reduces 2*MS_BLOCK elements to out[blockIdx.x]; the host repeats
// the launch until one value is left.
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_tree(const ms_elem* in, ms_elem* out, ms_u64 n) {
    __shared__ ms_elem s[2 * MS_BLOCK];
    const unsigned t = threadIdx.x;
    const ms_u64 base = (ms_u64)blockIdx.x * (2 * MS_BLOCK);
    s[t] = base + t < n ? in[base + t] : MsOp::identity();
    s[t + MS_BLOCK] = base + MS_BLOCK + t < n ? in[base + MS_BLOCK + t] : MsOp::identity();
    for (unsigned stride = 1; stride <= MS_BLOCK; stride *= 2) {
        __syncthreads();
        if (t < MS_BLOCK / stride) {
            const unsigned i = 2 * stride * t;
            s[i] = MsOp::combine(s[i], s[i + stride]);
        }
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

