// ---- The textbook kernels of the seed notes, generalised to any monoid ----
// MS_BLOCK threads per block. Kogge-Stone scans a section of MS_BLOCK elements,
// Brent-Kung a section of 2*MS_BLOCK; the reduction folds 2*MS_BLOCK elements per block.
// Sequence order is kept everywhere: combine(x, y) always has x before y.
#define MS_BLOCK {{ block }}

{% if tree %}// Shared-memory reduction with contiguous active threads. The seed's
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
{% endif %}

{% if ks %}// Kogge-Stone block scan of a section of MS_BLOCK elements (the seed's simple in-place scan,
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
{% endif %}

{% if bk %}// Brent-Kung block scan of a section of 2*MS_BLOCK elements: a reduction tree (up-sweep) and a
// distribution tree (down-sweep), as in the seed notes, with contiguous active threads.
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
{% endif %}

{% if ks or bk %}// The third kernel of the hierarchical scan: out[i] = carries[i / section] ⊕ out[i].
// Inclusive scans skip section 0 (its carry is the identity).
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_add_carry(ms_elem* out, const ms_elem* carries, ms_u64 n, ms_u64 section, int skip_first) {
    for (ms_u64 i = (ms_u64)blockIdx.x * MS_BLOCK + threadIdx.x; i < n;
         i += (ms_u64)gridDim.x * MS_BLOCK) {
        const ms_u64 s = i / section;
        if (s == 0 && skip_first) continue;
        out[i] = MsOp::combine(carries[s], out[i]);
    }
}
{% endif %}
