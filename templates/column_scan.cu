// Whether positions run from the end (see "Reverse" below); before the includes, where
// lib/staging.cuh would otherwise define it as 0.
#define MS_REVERSE {{ reverse }}
{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
{% include "lib/staging.cuh" %}
{% if tma %}{% include "lib/tma.cuh" %}
{% endif %}// ---- Column scans (`column_scan`): every column of a row-major (rows x MS_COLUMNS) array
// scanned down, in one pass ----
// The array's rows lie `pitch` elements apart (at least MS_COLUMNS: the columns may be a view
// of some of a wider array's), and `lane_groups` such arrays lie `group_stride` elements apart
// (the groups of a tensor scanned along a middle axis); lane o * MS_COLUMNS + c is column c of
// group o. Each group's columns are cut into MS_STRIPS strips of MS_COLS columns (one strip:
// the whole rows; the last strip may be partly past the columns), and each strip into tiles of
// MS_CTILE_ROWS rows. Tiles are numbered chunk by chunk, `per_chunk` = lane_groups * MS_STRIPS
// to a chunk of rows (tile k: rows chunk k / per_chunk, group and strip k % per_chunk), so a
// tile's predecessor in its strip is numbered per_chunk before it. Block b scans tile b in grid
// order (`grid_order`, as in lib/lookback.cuh), else claims its tile from the counter.
// A tile of whole packed rows (pitch MS_COLUMNS) is contiguous in memory: it arrives in shared
// memory as one block of bytes (one bulk copy on sm_90). Any other tile arrives row by row, in
// 16-byte cp.async copies where its rows are whole 16-byte chunks at 16-byte addresses, else
// element by element. Either leaves by coalesced stores that touch only its own columns. On
// sm_90 the first wave's copies are paced (`ms_pace`). Thread t = g * MS_COLS + c (g < MS_GROUPS) owns column c
// of the tile over the MS_CROWS consecutive rows of group g: it folds them from shared memory,
// the groups' totals are scanned per column, each column's prefix comes from a look-back of its
// own, and each thread scans its rows again from its carry, in place. A thread holds one running
// value, whatever the number of columns, and no vector of columns is ever held in registers.
// Without an output (`out` null: a fold of each column) a tile ends after its look-back, which
// writes the totals.
//
// Each column has its own decoupled look-back (`lib/lookback.cuh`'s publish and peek, on entry
// claim * MS_COL_SLOTS + c): thread c of the tile publishes its column's aggregate, walks back
// over its predecessors in the strip MS_LB at a time until it meets an inclusive prefix, and
// publishes the column's inclusive prefix. A tile's entries fill whole 32-byte sectors of their
// own.
//
// Reverse (MS_REVERSE 1): logical row r is row rows - 1 - r, and every combine takes its
// operands the other way round (`ms_lc`), so the prefixes are suffixes in the operator's own
// order. Chunk k in claim order is physical chunk chunks - 1 - k (the partial chunk, physically
// last, is logically first), and logical row i of a tile is its physical row
// MS_CTILE_ROWS - 1 - i: a partial tile's missing rows are its first logical ones, which count
// as the identity.
#define MS_COLS {{ strip }}
#define MS_COLUMNS {{ columns }}
#define MS_STRIPS {{ strips }}
#define MS_GROUPS {{ groups }}
#define MS_CROWS {{ rows }}
#define MS_COL_SLOTS {{ slots }}
#define MS_CTILE_ROWS (MS_GROUPS * MS_CROWS)
#define MS_CTILE ((ms_u64)MS_CTILE_ROWS * MS_COLS)
#define MS_CTILE_BYTES (MS_CTILE * sizeof(ms_elem))
static_assert(MS_GROUPS * MS_COLS <= MS_BLOCK, "monoscan: a column scan needs a thread per column of each group");
// Dynamic shared memory: the tile; the groups' totals and the columns' prefixes; the tile
// number; the mbarrier. The host computes the same sum (`ColumnShape::smem_bytes`).
#define MS_CPARTS_OFFSET ((MS_CTILE_BYTES + 15) / 16 * 16)
#define MS_CTAIL_OFFSET (MS_CPARTS_OFFSET + ((MS_GROUPS + 1) * MS_COLS * sizeof(ms_elem) + 15) / 16 * 16)
static_assert(MS_CTAIL_OFFSET + 32 == {{ smem }}, "monoscan: the column scan's shared memory differs from the host's");
// a ⊕ b in logical order: forwards the operator's combine, in reverse the opposite monoid's.
__device__ __forceinline__ ms_elem ms_lc(const ms_elem& a, const ms_elem& b) {
    return MS_REVERSE ? MsOp::combine(b, a) : MsOp::combine(a, b);
}
// Element offset in the tile of this thread's k-th row (logical order) in column c.
__device__ __forceinline__ ms_u64 ms_col_at(int g, int k, int c) {
    const int r = g * MS_CROWS + k;
    return (ms_u64)(MS_REVERSE ? MS_CTILE_ROWS - 1 - r : r) * MS_COLS + c;
}
// Run by thread c < MS_COLS of the tile claimed `claim` (of `per_chunk` tiles a chunk of rows)
// once its column's aggregate is known: publishes it, walks back to an inclusive prefix,
// publishes the column's inclusive prefix and returns its exclusive prefix, seeded with `seed`
// when `seeded`. The last chunk's tile writes the column's total to *total.
__device__ __forceinline__ ms_elem ms_col_lookback(ms_u32 claim, ms_u32 per_chunk, int c, const ms_elem& aggregate, ms_u32 num_tiles,
                                                   ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32 epoch,
                                                   const ms_elem& seed, bool seeded, ms_elem* total) {
    ms_elem prefix = seeded ? seed : MsOp::identity();
    if (claim >= per_chunk) {
        ms_publish(state, aggs, incls, claim * MS_COL_SLOTS + c, (epoch << 2) | MS_AGG, aggregate);
        // Predecessors in the strip, as chunks before this tile's: claim - (1 + q) * per_chunk.
        ms_i64 end = claim / per_chunk;
        const ms_u32 strip = claim % per_chunk;
        ms_elem acc = MsOp::identity();
        while (true) {
            // Predecessors end - 1 - p, p = 0 (nearest) .. MS_LB - 1, loaded at once.
            ms_elem v[MS_LB];
            ms_u32 kind[MS_LB];
            bool valid[MS_LB];
#pragma unroll
            for (int p = 0; p < MS_LB; ++p) {
                const ms_i64 pred = end - 1 - p;
                v[p] = MsOp::identity();
                kind[p] = MS_INCL;
                valid[p] = pred < 0;
                if (pred >= 0) {
                    const ms_u32 at = ((ms_u32)pred * per_chunk + strip) * MS_COL_SLOTS + c;
                    const ms_u32 status = ms_peek(state, aggs, incls, at, v[p]);
                    valid[p] = (status >> 2) == epoch;
                    kind[p] = status & 3u;
                }
            }
            for (int spins = 0;; ++spins) {
                bool all = true;
#pragma unroll
                for (int p = 0; p < MS_LB; ++p) all = all && valid[p];
                if (all) break;
                if (spins > 4) __nanosleep(spins < 64 ? 20 : 200);
#pragma unroll
                for (int p = 0; p < MS_LB; ++p) {
                    if (!valid[p]) {
                        const ms_i64 pred = end - 1 - p;
                        const ms_u32 at = ((ms_u32)pred * per_chunk + strip) * MS_COL_SLOTS + c;
                        const ms_u32 status = ms_peek(state, aggs, incls, at, v[p]);
                        valid[p] = (status >> 2) == epoch;
                        kind[p] = status & 3u;
                    }
                }
            }
            int first = MS_LB;  // the nearest inclusive prefix of the window
#pragma unroll
            for (int p = MS_LB - 1; p >= 0; --p) {
                if (kind[p] == MS_INCL) first = p;
            }
            // Fold the window, earliest first, from the nearest inclusive prefix on.
            ms_elem x = MsOp::identity();
#pragma unroll
            for (int p = MS_LB - 1; p >= 0; --p) {
                if (p <= first) x = ms_lc(x, v[p]);
            }
            acc = ms_lc(x, acc);
            if (first < MS_LB) break;
            end -= MS_LB;
        }
        // The inclusive prefix met includes the seed (via the strip's first tile).
        prefix = acc;
    }
    const ms_elem inclusive = (claim >= per_chunk || seeded) ? ms_lc(prefix, aggregate) : aggregate;
    ms_publish(state, aggs, incls, claim * MS_COL_SLOTS + c, (epoch << 2) | MS_INCL, inclusive);
    if (total != 0 && claim >= num_tiles - per_chunk) *total = inclusive;
    return prefix;
}
// Rows of a tile that are not one contiguous block (rows a pitch apart, or a strip of them):
// `valid_rows` rows of `cols` columns at `src`, `pitch` elements apart, into the tile `buf`
// (MS_COLS columns a row). `chunked`: the rows are whole 16-byte chunks at 16-byte addresses,
// copied by cp.async on sm_80 and newer; else element by element. The caller synchronizes the
// block.
__device__ __forceinline__ void ms_rows_in(ms_elem* buf, const ms_elem* src, ms_u64 pitch, ms_u64 valid_rows,
                                           int cols, bool chunked, int t) {
#if __CUDA_ARCH__ >= 800
    constexpr int row_chunks = (int)(MS_COLS * sizeof(ms_elem) / 16);
    if (row_chunks * 16 == (int)(MS_COLS * sizeof(ms_elem)) && chunked) {
        const int chunks_in = cols * (int)sizeof(ms_elem) / 16;
        for (ms_u64 q = t; q < valid_rows * row_chunks; q += MS_BLOCK) {
            const ms_u64 r = q / row_chunks;
            const int j = (int)(q % row_chunks);
            if (j < chunks_in) {
                const char* from = (const char*)(src + r * pitch) + j * 16;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                             ::"r"(ms_shared_addr((char*)buf + q * 16)), "l"(from) : "memory");
            }
        }
        asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
        return;
    }
#endif
    for (ms_u64 q = t; q < valid_rows * MS_COLS; q += MS_BLOCK) {
        const ms_u64 r = q / MS_COLS;
        const int c = (int)(q % MS_COLS);
        if (c < cols) buf[q] = src[r * pitch + c];
    }
}
// The tile `buf` back to its rows at `dst` (as `ms_rows_in` reads them), writing only its own
// columns; 16-byte stores where `chunked`.
__device__ __forceinline__ void ms_rows_out(const ms_elem* buf, ms_elem* dst, ms_u64 pitch, ms_u64 valid_rows,
                                            int cols, bool chunked, int t) {
    constexpr int row_chunks = (int)(MS_COLS * sizeof(ms_elem) / 16);
    if (row_chunks * 16 == (int)(MS_COLS * sizeof(ms_elem)) && chunked) {
        const int chunks_in = cols * (int)sizeof(ms_elem) / 16;
        const ms_chunk_bits* from = (const ms_chunk_bits*)buf;
        for (ms_u64 q = t; q < valid_rows * row_chunks; q += MS_BLOCK) {
            const ms_u64 r = q / row_chunks;
            const int j = (int)(q % row_chunks);
            if (j < chunks_in) ((ms_chunk_bits*)(dst + r * pitch))[j] = from[q];
        }
    } else {
        for (ms_u64 q = t; q < valid_rows * MS_COLS; q += MS_BLOCK) {
            const ms_u64 r = q / MS_COLS;
            const int c = (int)(q % MS_COLS);
            if (c < cols) dst[r * pitch + c] = buf[q];
        }
    }
}
// `aligned`: input and output start on 16 bytes, and so does every group (`group_stride`
// elements are whole 16-byte chunks, or there is one group), so full tiles of packed rows can
// be copied whole (in by a bulk copy on sm_90, out by 16-byte stores), and rows that are whole
// chunks a whole number of chunks apart by 16-byte copies; else element by element. The TMA
// form also takes the launch's plan (`lib/tma.cuh`), of which it uses the pacing of the first
// wave's copies only: a block's single bulk copy already keeps its tile's bytes in flight, and
// an L2 prefetch of later tiles measured slower.
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_column_scan(const ms_elem* in, ms_elem* out, ms_u64 rows, ms_u64 pitch, ms_u64 group_stride,
                         ms_u32 lane_groups, ms_u32 num_tiles, ms_state* state,
                         ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch, int grid_order, int exclusive,
                         const ms_elem* inits, ms_elem init, int has_init, ms_elem* totals,
                         int aligned{% if tma %}, ms_prefetch prefetch{% endif %}) {
    extern __shared__ __align__(128) ms_chunk_bits ms_stage_buffers[];
    char* smem = (char*)ms_stage_buffers;
    ms_elem* buf = (ms_elem*)smem;
    ms_elem* parts = (ms_elem*)(smem + MS_CPARTS_OFFSET);
    ms_elem* prefixes = parts + MS_GROUPS * MS_COLS;
    ms_u32* claimed = (ms_u32*)(smem + MS_CTAIL_OFFSET);
{% if tma %}    ms_u64* bar = (ms_u64*)(smem + MS_CTAIL_OFFSET + 16);
{% endif %}    const int t = threadIdx.x;
    if (t == 0) {
        *claimed = grid_order ? blockIdx.x : ms_take_tile(counter, num_tiles);
{% if tma %}        ms_bar_init(ms_shared_addr(bar));
        ms_pace(counter, epoch, *claimed, prefetch);
{% endif %}    }
    __syncthreads();
    const ms_u32 claim = *claimed;
    const ms_u32 per_chunk = lane_groups * MS_STRIPS;
    const ms_u32 chunks = num_tiles / per_chunk;
    const ms_u32 chunk = claim / per_chunk;
    const ms_u32 group = claim % per_chunk / MS_STRIPS;
    const ms_u32 strip = claim % MS_STRIPS;
    const ms_u64 first_row = (ms_u64)(MS_REVERSE ? chunks - 1 - chunk : chunk) * MS_CTILE_ROWS;
    const ms_u64 valid_rows = rows - first_row < (ms_u64)MS_CTILE_ROWS ? rows - first_row : (ms_u64)MS_CTILE_ROWS;
    const bool full = valid_rows == (ms_u64)MS_CTILE_ROWS;
    // The tile's first column in its group, how many of its columns are in the array, and its
    // first lane.
    const int col0 = (int)strip * MS_COLS;
    const int cols = MS_COLUMNS - col0 < MS_COLS ? MS_COLUMNS - col0 : MS_COLS;
    const ms_u64 lane0 = (ms_u64)group * MS_COLUMNS + col0;
    const ms_u64 valid = valid_rows * MS_COLS;
    // The tile's first element, and whether its rows are whole 16-byte chunks at 16-byte
    // addresses.
    const ms_u64 base = (ms_u64)group * group_stride + first_row * pitch + col0;
    const bool chunked = aligned && pitch * sizeof(ms_elem) % 16 == 0;
{% if strips == 1 %}    // Whole rows: packed, the tile is `valid` contiguous elements.
    const bool packed = pitch == (ms_u64)MS_COLUMNS;
    const bool whole = packed && full && aligned && MS_CTILE_BYTES % 16 == 0;
{% if tma %}    if (whole) {
        if (t == 0) ms_bulk_issue(in + base, (ms_u32)MS_CTILE_BYTES, buf, ms_shared_addr(bar));
        ms_bar_wait(ms_shared_addr(bar));
    } else
{% endif %}    {
        if (packed) {
            for (ms_u64 e = t; e < valid; e += MS_BLOCK) buf[e] = in[base + e];
        } else {
            ms_rows_in(buf, in + base, pitch, valid_rows, cols, chunked, t);
        }
        __syncthreads();
    }
{% else %}    // A strip: copied row by row.
    ms_rows_in(buf, in + base, pitch, valid_rows, cols, chunked, t);
    __syncthreads();
{% endif %}    // This thread's rows, folded in logical order; rows past the data count as the identity.
    const int g = t / MS_COLS, c = t % MS_COLS;
    const bool owner = t < MS_GROUPS * MS_COLS && c < cols;
    ms_elem acc = MsOp::identity();
    if (owner) {
#pragma unroll 8
        for (int k = 0; k < MS_CROWS; ++k) {
            const ms_u64 e = ms_col_at(g, k, c);
            if (full || e < valid) acc = ms_lc(acc, buf[e]);
        }
        parts[t] = acc;
    }
    __syncthreads();
    // The groups' totals scanned per column: `excl`, the groups before this thread's; thread
    // c < MS_COLS also gets its column's aggregate.
    ms_elem excl = MsOp::identity();
    ms_elem aggregate = MsOp::identity();
{% if groups <= 16 %}    // Few groups: each thread folds the totals before its own.
    if (owner) {
        for (int h = 0; h < g; ++h) excl = ms_lc(excl, parts[h * MS_COLS + c]);
    }
    if (t < cols) {
        for (int h = 0; h < MS_GROUPS; ++h) aggregate = ms_lc(aggregate, parts[h * MS_COLS + t]);
    }
{% else %}    // Many groups: a Kogge-Stone scan of each column's totals in shared memory.
    {
        ms_elem v = acc;
        for (int d = 1; d < MS_GROUPS; d <<= 1) {
            ms_elem y = MsOp::identity();
            const bool take = owner && g >= d;
            if (take) y = parts[t - d * MS_COLS];
            __syncthreads();
            if (take) v = ms_lc(y, v);
            if (owner) parts[t] = v;
            __syncthreads();
        }
        if (owner && g > 0) excl = parts[t - MS_COLS];
        if (t < cols) aggregate = parts[(MS_GROUPS - 1) * MS_COLS + t];
    }
{% endif %}    const bool seeded = inits != 0 || has_init;
    if (t < cols) {
        const ms_elem seed = inits != 0 ? inits[lane0 + t] : init;
        prefixes[t] = ms_col_lookback(claim, per_chunk, t, aggregate, num_tiles, state, aggs, incls, epoch, seed,
                                      seeded, totals != 0 ? totals + lane0 + t : (ms_elem*)0);
    }
    __syncthreads();
    // Without an output (a fold of each column) the look-back has written the totals.
    if (out == 0) return;
    if (owner) {
        ms_elem run = (chunk > 0 || seeded) ? ms_lc(prefixes[c], excl) : excl;
#pragma unroll 8
        for (int k = 0; k < MS_CROWS; ++k) {
            const ms_u64 e = ms_col_at(g, k, c);
            if (full || e < valid) {
                const ms_elem x = buf[e];
                const ms_elem next = ms_lc(run, x);
                buf[e] = exclusive ? run : next;
                run = next;
            }
        }
    }
    __syncthreads();
{% if strips == 1 %}    if (whole) {
        const ms_chunk_bits* src = (const ms_chunk_bits*)buf;
        ms_chunk_bits* dst = (ms_chunk_bits*)(out + base);
        for (ms_u32 q = t; q < (ms_u32)(MS_CTILE_BYTES / 16); q += MS_BLOCK) dst[q] = src[q];
    } else if (packed) {
        for (ms_u64 e = t; e < valid; e += MS_BLOCK) out[base + e] = buf[e];
    } else {
        ms_rows_out(buf, out + base, pitch, valid_rows, cols, chunked, t);
    }
{% else %}    ms_rows_out(buf, out + base, pitch, valid_rows, cols, chunked, t);
{% endif %}}
