{% include "lib/textbook.cuh" %}
// Kogge-Stone block scan of a section of MS_BLOCK elements (the textbook's simple in-place scan,
// with a barrier between the reads and the writes of each step so that no thread reads a value
// already overwritten). Inclusive, or exclusive when `exclusive` is set: each thread then starts
// from its left neighbour's input and the first from `init` (block 0 with has_init) or the
// identity. Writes the section's total (including init) to totals[blockIdx.x] when totals is set.
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_ks_scan(const ms_elem* in, ms_elem* out, ms_elem* totals, ms_u64 n, int exclusive,
                     ms_elem init, int has_init) {
    __shared__ ms_elem xy[MS_BLOCK];
    const unsigned t = threadIdx.x;
    const ms_u64 i = (ms_u64)blockIdx.x * MS_BLOCK + t;
    const ms_elem own = i < n ? in[i] : MsOp::identity();
    const ms_elem seed = (has_init && blockIdx.x == 0) ? init : MsOp::identity();
    xy[t] = own;
    if (exclusive) {
        __syncthreads();
        const ms_elem left = t > 0 ? xy[t - 1] : seed;
        __syncthreads();
        xy[t] = left;
    }
    for (unsigned stride = 1; stride < MS_BLOCK; stride *= 2) {
        __syncthreads();
        ms_elem left;
        if (t >= stride) left = xy[t - stride];
        __syncthreads();
        if (t >= stride) xy[t] = MsOp::combine(left, xy[t]);
    }
    if (i < n) out[i] = xy[t];
    if (totals != 0 && t == MS_BLOCK - 1) {
        totals[blockIdx.x] = exclusive ? MsOp::combine(xy[t], own) : xy[t];
    }
}


{% include "lib/add_carry.cuh" %}
