// The third kernel of the hierarchical scan: out[i] = carries[i / section] ⊕ out[i].
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

