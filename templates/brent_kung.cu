{% include "lib/textbook.cuh" %}
// Brent-Kung block scan of a section of 2*MS_BLOCK elements: a reduction tree (up-sweep) and a
// distribution tree (down-sweep), as in the textbook, with contiguous active threads.
// Exclusive mode is the Blelloch variant: the root is replaced by the seed (init or identity)
// and the down-sweep hands each left child its parent's prefix and each right child
// prefix ⊕ left-sum. Totals as in ks_scan.
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_bk_scan(const ms_elem* in, ms_elem* out, ms_elem* totals, ms_u64 n, int exclusive,
                     ms_elem init, int has_init) {
    const unsigned SECTION = 2 * MS_BLOCK;
    __shared__ ms_elem xy[2 * MS_BLOCK];
    __shared__ ms_elem total;
    const unsigned t = threadIdx.x;
    const ms_u64 base = (ms_u64)blockIdx.x * SECTION;
    xy[t] = base + t < n ? in[base + t] : MsOp::identity();
    xy[t + MS_BLOCK] = base + MS_BLOCK + t < n ? in[base + MS_BLOCK + t] : MsOp::identity();
    // Reduction tree: after the step with `stride`, xy[k*2*stride - 1] holds the sum of its run.
    for (unsigned stride = 1; stride < SECTION; stride *= 2) {
        __syncthreads();
        const unsigned index = (t + 1) * 2 * stride - 1;
        if (index < SECTION) xy[index] = MsOp::combine(xy[index - stride], xy[index]);
    }
    if (!exclusive) {
        // Distribution tree: push each finished prefix to the position `stride` to its right.
        for (unsigned stride = SECTION / 4; stride > 0; stride /= 2) {
            __syncthreads();
            const unsigned index = (t + 1) * 2 * stride - 1;
            if (index + stride < SECTION) xy[index + stride] = MsOp::combine(xy[index], xy[index + stride]);
        }
        __syncthreads();
        if (t == 0) total = xy[SECTION - 1];
    } else {
        __syncthreads();
        if (t == 0) {
            const ms_elem seed = (has_init && blockIdx.x == 0) ? init : MsOp::identity();
            total = (has_init && blockIdx.x == 0) ? MsOp::combine(seed, xy[SECTION - 1]) : xy[SECTION - 1];
            xy[SECTION - 1] = seed;
        }
        for (unsigned stride = MS_BLOCK; stride > 0; stride /= 2) {
            __syncthreads();
            const unsigned index = (t + 1) * 2 * stride - 1;
            if (index < SECTION) {
                const ms_elem left = xy[index - stride];
                xy[index - stride] = xy[index];
                xy[index] = MsOp::combine(xy[index], left);
            }
        }
    }
    __syncthreads();
    if (base + t < n) out[base + t] = xy[t];
    if (base + MS_BLOCK + t < n) out[base + MS_BLOCK + t] = xy[t + MS_BLOCK];
    if (totals != 0 && t == 0) totals[blockIdx.x] = total;
}


{% include "lib/add_carry.cuh" %}
