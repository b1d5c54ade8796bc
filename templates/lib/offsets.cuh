// ---- Rows given by CSR offsets, in logical order ----
// `count` rows of `n` elements, row r in memory from offsets[r] to offsets[r + 1] (count + 1
// offsets from 0 to n). Logical row q is row q in memory forwards and row count - 1 - q in
// reverse (MS_REVERSE 1, defined by the kernel before it includes this), where logical
// position g is element n - 1 - g. Offsets out of order give unspecified rows; every index
// these read stays within the count + 1 offsets whatever they hold.
struct ms_offsets {
    ms_u64 n, count;
    const ms_u64* offsets;
    // Where logical row q (0 <= q <= count) starts; off(count) is n.
    __device__ __forceinline__ ms_u64 off(ms_u64 q) const {
        return MS_REVERSE ? n - offsets[count - q] : offsets[q];
    }
    // The row in memory of logical row q (q < count).
    __device__ __forceinline__ ms_u64 physical(ms_u64 q) const { return MS_REVERSE ? count - 1 - q : q; }
    // The last logical row among lo..hi (lo <= hi < count) that starts at or before `at`; lo
    // when none does.
    __device__ ms_u64 find(ms_u64 at, ms_u64 lo, ms_u64 hi) const {
        while (lo < hi) {
            const ms_u64 mid = hi - (hi - lo) / 2;
            if (off(mid) <= at) lo = mid; else hi = mid - 1;
        }
        return lo;
    }
    // The same, by the 32 lanes of a warp together (each round tests 32 evenly spaced rows,
    // so a million rows take four rounds of loads); every lane gets the answer.
    __device__ ms_u64 find_warp(ms_u64 at, ms_u64 lo, ms_u64 hi) const {
        const unsigned lane = threadIdx.x & 31;
        while (lo < hi) {
            const ms_u64 step = (hi - lo) / 32 + 1;
            const ms_u64 c = lo + lane * step;
            const unsigned ok = __ballot_sync(0xffffffffu, c <= hi && off(c) <= at);
            const ms_u64 pick = ok == 0 ? lo : lo + (ms_u64)(31 - __clz(ok)) * step;
            lo = pick;
            hi = pick + step - 1 < hi ? pick + step - 1 : hi;
        }
        return lo;
    }
};
