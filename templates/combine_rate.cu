// ---- The combine rate: how many combines per second the device sustains for this operator ----
// Each thread runs MS_RATE_CHAINS independent chains of combines for `rounds` rounds. In each
// round it reads one sample from the block's pool in shared memory and combines every chain with
// it, `chain = combine(chain, sample)`: each chain is a left fold of the samples in order, as a
// scan's thread fold is, so the values the combine sees (growing counts, growing log-sum-exps,
// products of many factors) are those of a real scan. The chains do not depend on one another,
// so a thread has MS_RATE_CHAINS combines in flight; the grid is every SM times the blocks the
// occupancy calculator lets reside on one, so every warp slot of the device is filled. The
// combine is MsOp::combine, inlined or outlined as the scans of the same operator call it.
//
// Why the compiler cannot shorten the loop: a chain of sums `c += x` with a loop-invariant `x`
// is strength-reduced to `c += rounds * x`, and chains that combine with one another in a fixed
// pattern give every round the same dependency structure. Here every operand is a value loaded
// from shared memory at an index that changes every round (the compiler knows nothing of the
// pool's contents, which come from the samples buffer), so no combine has a loop-invariant
// operand: scalar evolution, which models only recurrences with loop-invariant steps, cannot
// express a chain, and no combine can be hoisted or merged with another, since each chain starts
// from its own sample. Every chain ends in the thread's result, written to `out`, so none is dead.
// Reading the sample costs one shared-memory load per round, for MS_RATE_CHAINS combines, at one
// address per warp (a broadcast, one transaction whatever the element's size).
#define MS_RATE_BLOCK {{ block }}
#define MS_RATE_CHAINS {{ chains }}
#define MS_RATE_SAMPLES {{ samples }}

// samples[0..count) (count >= 1) seed the chains and fill the pool; out[t] receives thread t's
// chains folded in order. Combines per thread: rounds * MS_RATE_CHAINS + MS_RATE_CHAINS - 1.
extern "C" __global__ void __launch_bounds__(MS_RATE_BLOCK)
{{ prefix }}_combine_rate(const ms_elem* samples, ms_u64 count, ms_elem* out, ms_u64 rounds) {
    __shared__ ms_elem pool[MS_RATE_SAMPLES];
    for (unsigned i = threadIdx.x; i < MS_RATE_SAMPLES; i += blockDim.x) pool[i] = samples[i % count];
    __syncthreads();
    const ms_u64 t = (ms_u64)blockIdx.x * blockDim.x + threadIdx.x;
    ms_elem chain[MS_RATE_CHAINS];
#pragma unroll
    for (int k = 0; k < MS_RATE_CHAINS; ++k) chain[k] = samples[(t * MS_RATE_CHAINS + k) % count];
    // The pool index: the same for every thread of a warp (blocks are whole warps), so each
    // load is one broadcast; 32-bit, so that stepping it costs two instructions.
    unsigned at = ((unsigned)(t >> 5) * 37u) & (MS_RATE_SAMPLES - 1);
#pragma unroll 4
    for (ms_u64 r = 0; r < rounds; ++r) {
        const ms_elem x = pool[at];
        at = (at + 1u) & (MS_RATE_SAMPLES - 1);
#pragma unroll
        for (int k = 0; k < MS_RATE_CHAINS; ++k) chain[k] = MsOp::combine(chain[k], x);
    }
    ms_elem acc = chain[0];
#pragma unroll
    for (int k = 1; k < MS_RATE_CHAINS; ++k) acc = MsOp::combine(acc, chain[k]);
    out[t] = acc;
}
