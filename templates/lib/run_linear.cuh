// ---- A staged tile in the linear layout: elements of any size ----
// Element e of the tile is at byte e * sizeof(ms_elem) of the buffer, exactly as in memory, so
// a whole tile arrives by one bulk copy. A thread reads and writes its run a group of
// MS_GROUP_ELEMS consecutive elements at a time (4 of an odd size, 2 of a size of 2 mod 4, so
// that a group is whole 4-byte words; else 1), in units of MS_UNIT bytes, the largest power of
// two up to 16 that divides the group's bytes (every group of the buffer starts on such a
// boundary, whatever the type's own alignment): a 3-byte element alone would take three 1-byte
// accesses, a group of four takes three 4-byte ones. Thread t's run starts MS_ITEMS *
// sizeof(ms_elem) / MS_UNIT units after thread t - 1's; the shape policy makes that stride odd
// where it can (every size that is not a multiple of 32 bytes), so the threads of one
// shared-memory phase (32 / 16 / 8 of them for 4- / 8- / 16-byte units) touch distinct banks.
// Where the stride is even (elements of a multiple of 32 bytes: 64-byte runs all start on
// bank 0 or 16), thread t takes a group's units starting at unit MS_ROTATE_AT(t), wrapping
// around, and rotates them into place in registers: the threads that would share a bank
// then take different units (64-byte elements in runs of 9 on an H100: 2.5 times fewer
// shared-memory wavefronts, 0.93 of copy instead of 0.87).
#define MS_UNIT {{ unit }}
#define MS_GROUP_ELEMS {{ group }}
#define MS_GROUP_UNITS ((int)(MS_GROUP_ELEMS * sizeof(ms_elem) / MS_UNIT))
#define MS_ROTATE {{ rotate }}
#define MS_ROTATE_AT(t) ((int)(((t) / {{ rotate_period }}u) % MS_ROTATE))
#define MS_TILE_CHUNKS ((int)(MS_TILE * sizeof(ms_elem) / 16))
#define MS_THREAD_GROUPS (MS_ITEMS / MS_GROUP_ELEMS)
static_assert((MS_GROUP_ELEMS * sizeof(ms_elem)) % MS_UNIT == 0 && MS_ITEMS % MS_GROUP_ELEMS == 0 &&
                  (MS_TILE * sizeof(ms_elem)) % 16 == 0,
              "monoscan: linear tiles are whole units per group, whole groups per run and whole 16-byte chunks per tile");
{% if unit == 16 %}typedef ms_chunk_bits ms_unit;
{% elif unit == 8 %}struct alignas(8) ms_unit { ms_u32 w[2]; };
{% elif unit == 4 %}typedef ms_u32 ms_unit;
{% elif unit == 2 %}typedef unsigned short ms_unit;
{% else %}typedef unsigned char ms_unit;
{% endif %}// A group: its units, or its elements.
template <typename In>
union ms_group {
    ms_unit u[MS_GROUP_UNITS];
    In e[MS_GROUP_ELEMS];
};
// Group j of this thread's run (in logical order: see MS_REVERSE), read as In.
template <typename In>
__device__ __forceinline__ ms_group<In> ms_group_get(const ms_chunk_bits* buf, int j) {
    const int owner = ms_run_owner();
    const ms_unit* p = (const ms_unit*)buf + ((ms_u64)owner * MS_ITEMS + MS_RUN_GROUP(j) * MS_GROUP_ELEMS) * sizeof(ms_elem) / MS_UNIT;
    ms_group<In> x;
#if MS_ROTATE > 1
    const int r = MS_ROTATE_AT(owner);
#pragma unroll
    for (int k = 0; k < MS_GROUP_UNITS; ++k) x.u[k] = p[(k + r) % MS_GROUP_UNITS];
    // x.u[k] holds unit k + r: rotate right by r, one bit of r at a time.
#pragma unroll
    for (int b = 1; b < MS_ROTATE; b <<= 1) {
        const bool on = (r & b) != 0;
        ms_unit y[MS_GROUP_UNITS];
#pragma unroll
        for (int k = 0; k < MS_GROUP_UNITS; ++k) y[k] = on ? x.u[(k + MS_GROUP_UNITS - b) % MS_GROUP_UNITS] : x.u[k];
#pragma unroll
        for (int k = 0; k < MS_GROUP_UNITS; ++k) x.u[k] = y[k];
    }
#else
#pragma unroll
    for (int k = 0; k < MS_GROUP_UNITS; ++k) x.u[k] = p[k];
#endif
    return x;
}
// Group j of this thread's run, overwritten.
__device__ __forceinline__ void ms_group_put(ms_chunk_bits* buf, int j, const ms_group<ms_elem>& x) {
    const int owner = ms_run_owner();
    ms_unit* p = (ms_unit*)buf + ((ms_u64)owner * MS_ITEMS + MS_RUN_GROUP(j) * MS_GROUP_ELEMS) * sizeof(ms_elem) / MS_UNIT;
#if MS_ROTATE > 1
    const int r = MS_ROTATE_AT(owner);
    // y[k] = unit k + r: rotate left by r, one bit of r at a time.
    ms_unit y[MS_GROUP_UNITS];
#pragma unroll
    for (int k = 0; k < MS_GROUP_UNITS; ++k) y[k] = x.u[k];
#pragma unroll
    for (int b = 1; b < MS_ROTATE; b <<= 1) {
        const bool on = (r & b) != 0;
        ms_unit z[MS_GROUP_UNITS];
#pragma unroll
        for (int k = 0; k < MS_GROUP_UNITS; ++k) z[k] = on ? y[(k + b) % MS_GROUP_UNITS] : y[k];
#pragma unroll
        for (int k = 0; k < MS_GROUP_UNITS; ++k) y[k] = z[k];
    }
#pragma unroll
    for (int k = 0; k < MS_GROUP_UNITS; ++k) p[(k + r) % MS_GROUP_UNITS] = y[k];
#else
#pragma unroll
    for (int k = 0; k < MS_GROUP_UNITS; ++k) p[k] = x.u[k];
#endif
}
{% include "lib/run_chains.cuh" %}
// Stores the first `valid` elements of the tile to `out`: 16-byte chunks, coalesced, for a
// full tile; for the last, partial one, its whole units, then the bytes of a last partial unit
// (`out` starts on 16 bytes, as the staged forms require).
__device__ __forceinline__ void ms_run_store(ms_elem* out, const ms_chunk_bits* buf, bool full, ms_u64 valid) {
    if (full) {
        ms_chunk_bits* dst = (ms_chunk_bits*)out;
        for (int c = threadIdx.x; c < MS_TILE_CHUNKS; c += MS_BLOCK) dst[c] = buf[c];
    } else {
        const ms_u64 bytes = valid * sizeof(ms_elem);
        const ms_u64 units = bytes / MS_UNIT;
        ms_unit* dst = (ms_unit*)out;
        const ms_unit* src = (const ms_unit*)buf;
        for (ms_u64 u = threadIdx.x; u < units; u += MS_BLOCK) dst[u] = src[u];
        for (ms_u64 b = units * MS_UNIT + threadIdx.x; b < bytes; b += MS_BLOCK) {
            ((unsigned char*)out)[b] = ((const unsigned char*)buf)[b];
        }
    }
}
