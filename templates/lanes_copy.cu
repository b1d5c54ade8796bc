// ---- Lane copies (`gather`, `scatter`): between a strided layout of lanes and contiguous rows.
// Element k of lane l = o * inner + j sits at o * outer_stride + k * stride + j * inner_stride in
// the strided buffer, and at l * len + k in the rows. A batched scan of a layout the row scan
// cannot read directly gathers its lanes into rows, scans them, and scatters them back.
struct ms_lanes { ms_u64 outer, len, inner, outer_stride, stride, inner_stride; };
__device__ __forceinline__ ms_u64 ms_lane_offset(const ms_lanes& l, ms_u64 i) {
    const ms_u64 lane = i / l.len, k = i - lane * l.len;
    const ms_u64 o = lane / l.inner, j = lane - o * l.inner;
    return o * l.outer_stride + k * l.stride + j * l.inner_stride;
}
template <typename T>
__device__ __forceinline__ void ms_gather(const T* in, T* rows, ms_u64 count, const ms_lanes& l) {
    for (ms_u64 i = (ms_u64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (ms_u64)gridDim.x * blockDim.x) {
        rows[i] = in[ms_lane_offset(l, i)];
    }
}
extern "C" __global__ void {{ prefix }}_gather(const ms_elem* in, ms_elem* rows, ms_u64 count, ms_lanes l) {
    ms_gather<ms_elem>(in, rows, count, l);
}
{% if map %}extern "C" __global__ void {{ prefix }}_gather_mapped(const MsMap::in_t* in, MsMap::in_t* rows, ms_u64 count, ms_lanes l) {
    ms_gather<MsMap::in_t>(in, rows, count, l);
}
{% endif %}extern "C" __global__ void {{ prefix }}_scatter(const ms_elem* rows, ms_elem* out, ms_u64 count, ms_lanes l) {
    for (ms_u64 i = (ms_u64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (ms_u64)gridDim.x * blockDim.x) {
        out[ms_lane_offset(l, i)] = rows[i];
    }
}
