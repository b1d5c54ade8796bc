{% include "lib/tile.cuh" %}
{% include "lib/fold_last.cuh" %}
// ---- Reduce: each block folds a contiguous run of tiles, in order, into partials[block];
// with total_out, the last block to finish folds partials[0..parts) into it ----
template <typename Map>
__device__ __forceinline__ void ms_reduce_tiles(const typename Map::in_t* in, ms_elem* partials, ms_u64 n,
                                                ms_u64 tiles_per_block, ms_u32 parts, ms_u32* done,
                                                ms_elem* total_out, ms_tile_smem& sm) {
    ms_elem items[MS_ITEMS];
    const ms_u64 first = (ms_u64)blockIdx.x * tiles_per_block;
    const ms_u64 num_tiles = (n + MS_TILE - 1) / MS_TILE;
    const ms_u64 last = first + tiles_per_block < num_tiles ? first + tiles_per_block : num_tiles;
    ms_elem acc = MsOp::identity();
    for (ms_u64 t = first; t < last; ++t) {
        const ms_u64 base = t * MS_TILE;
        ms_load_tile<Map>(in, base, ms_valid(base, n), items, sm);
        const ms_elem total = ms_block_reduce(ms_thread_fold(items), sm);
        if (threadIdx.x == 0) acc = t == first ? total : MsOp::combine(acc, total);
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
    ms_fold_last(partials, parts, done, total_out, sm);
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_tiles(const ms_elem* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block,
                          ms_u32 parts, ms_u32* done, ms_elem* total_out) {
    __shared__ ms_tile_smem sm;
    ms_reduce_tiles<MsNoMap>(in, partials, n, tiles_per_block, parts, done, total_out, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_tiles_mapped(const MsMap::in_t* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block,
                                 ms_u32 parts, ms_u32* done, ms_elem* total_out) {
    __shared__ ms_tile_smem sm;
    ms_reduce_tiles<MsMap>(in, partials, n, tiles_per_block, parts, done, total_out, sm);
}
{% endif %}
// ---- Folds of rows: `rows` contiguous rows of `len` elements, each cut into `pieces` pieces of
// `piece_len` elements (whole warp tiles; the last piece the rest). Each warp folds whole
// pieces into out[row * pieces + piece], with no look-back and no block barrier: a warp tile
// at a time, read warp-striped and transposed through the warp's buffer, each lane folding
// its consecutive items and the warp reducing the lanes' folds in lane order. Inputs narrower
// than 4 bytes, where the piece starts on the vector's size, are read instead by each lane as
// its own run of 64 bytes, in vector loads (a fold needs no warp-striped order) ----
template <typename In>
struct ms_lane_vec {
    // Bytes of a lane's items, and the widest load that divides them (0: no vector loads).
    static constexpr int bytes = (int)sizeof(In) * MS_ITEMS;
    static constexpr int width = sizeof(In) > 2 ? 0 : bytes % 16 == 0 ? 16 : bytes % 8 == 0 ? 8 : bytes % 4 == 0 ? 4 : 0;
    // A lane's run: the items of whole warp tiles, 64 bytes where they divide it.
    static constexpr int tiles = bytes >= 64 ? 1 : 64 / bytes;
    static constexpr int run = tiles * MS_ITEMS;
    static constexpr int words = width > 0 ? tiles * bytes / width : 0;
};
template <int Width> struct ms_vec_word;
template <> struct ms_vec_word<4> { typedef unsigned type; };
template <> struct ms_vec_word<8> { typedef uint2 type; };
template <> struct ms_vec_word<16> { typedef uint4 type; };

// The fold of this lane's run of the 32 runs at `src` (aligned to Width), read in loads of
// Width bytes, through `Map`.
template <typename Map, int Width>
__device__ __forceinline__ ms_elem ms_fold_lane_run(const typename Map::in_t* src) {
    typedef typename Map::in_t in_t;
    typedef typename ms_vec_word<Width>::type word;
    constexpr int words = ms_lane_vec<in_t>::words;
    const unsigned lane = threadIdx.x & 31;
    word raw[words];
    const word* from = reinterpret_cast<const word*>(src) + lane * words;
#pragma unroll
    for (int k = 0; k < words; ++k) raw[k] = from[k];
    const in_t* e = reinterpret_cast<const in_t*>(raw);
    ms_elem acc = Map::apply(e[0]);
#pragma unroll
    for (int j = 1; j < ms_lane_vec<in_t>::run; ++j) acc = MsOp::combine(acc, Map::apply(e[j]));
    return acc;
}

template <typename Map>
__device__ __forceinline__ void ms_reduce_rows(const typename Map::in_t* in, ms_elem* out, ms_u64 rows,
                                               ms_u64 len, ms_u64 pieces, ms_u64 piece_len,
                                               ms_tile_smem& sm) {
    typedef typename Map::in_t in_t;
    constexpr int width = ms_lane_vec<in_t>::width;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    ms_elem* wbuf = sm.buf[warp];
    const ms_u64 items_all = rows * pieces;
    const ms_u64 stride = (ms_u64)gridDim.x * MS_WARPS;
    for (ms_u64 i = (ms_u64)blockIdx.x * MS_WARPS + warp; i < items_all; i += stride) {
        const ms_u64 row = i / pieces;
        const ms_u64 start = (i - row * pieces) * piece_len;
        const ms_u64 count = len - start < piece_len ? len - start : piece_len;
        const ms_u64 base = row * len + start;
        ms_elem acc = MsOp::identity();
        ms_u64 t = 0;
        if constexpr (width > 0) {
            constexpr ms_u64 span = 32 * ms_lane_vec<in_t>::run;
            if (((unsigned long long)(in + base) & (width - 1)) == 0) {
                for (; t + span <= count; t += span) {
                    const ms_elem total = ms_warp_reduce(ms_fold_lane_run<Map, width>(in + base + t));
                    if (lane == 0) acc = t == 0 ? total : MsOp::combine(acc, total);
                }
            }
        }
        for (; t < count; t += MS_WARP_TILE) {
            ms_elem items[MS_ITEMS];
            ms_load_warp<Map>(in, base + t, (ms_i64)(count - t), items, wbuf);
            const ms_elem total = ms_warp_reduce(ms_thread_fold(items));
            if (lane == 0) acc = t == 0 ? total : MsOp::combine(acc, total);
        }
        if (lane == 0) out[i] = acc;
    }
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_rows(const ms_elem* in, ms_elem* out, ms_u64 rows, ms_u64 len, ms_u64 pieces,
                         ms_u64 piece_len) {
    __shared__ ms_tile_smem sm;
    ms_reduce_rows<MsNoMap>(in, out, rows, len, pieces, piece_len, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_rows_mapped(const MsMap::in_t* in, ms_elem* out, ms_u64 rows, ms_u64 len,
                                ms_u64 pieces, ms_u64 piece_len) {
    __shared__ ms_tile_smem sm;
    ms_reduce_rows<MsMap>(in, out, rows, len, pieces, piece_len, sm);
}
{% endif %}
