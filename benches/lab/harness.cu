// Lab harness (run by hand on a GPU machine; see run.sh): times one single-pass scan kernel
// variant for Sum i32 (or, with -DMATMOD, the non-commutative 2x2 matrix product mod 1e9+7 of
// `monoscan emit --op matmod`) against a device-to-device copy of the same bytes in the same
// run, checks every output element, and with -DTRACE prints per-tile phase statistics from the
// instrumented kernels gen.py writes (microseconds after the tile was claimed). Build flags:
//   KFILE (kernel source to include), KNAME (entry), VNAME (label), SMEM_BYTES (dynamic shared
//   memory per block; larger values lower the blocks per SM), THREADS (per block),
//   TILE_ELEMS (elements per tile, default MS_TILE), PROP (launch variants/propagator.inc's
//   warp beside the scan on a second stream, with this much shared memory), TRACE, TMA (pass
//   variants/tma.inc's tensor maps).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cstdint>
#include KFILE
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s line %d\n", #x, cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

#ifdef MATMOD
static const unsigned long long LAB_P = 1000000007ull;
__global__ void init_in(ms_elem* x, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        for (int k = 0; k < 4; ++k) x[i].m[k] = (unsigned)((((i * 4 + k) * 2654435761ull) >> 7) % LAB_P);
}
// The host's sequential scan, element by element: returns the number of mismatches.
static size_t check(const std::vector<ms_elem>& h, const std::vector<ms_elem>& r) {
    unsigned long long a[4] = {1, 0, 0, 1};
    size_t bad = 0;
    for (size_t i = 0; i < h.size(); ++i) {
        unsigned long long b[4], c[4];
        for (int k = 0; k < 4; ++k) b[k] = h[i].m[k];
        for (int u = 0; u < 2; ++u)
            for (int v = 0; v < 2; ++v) c[2 * u + v] = (a[2 * u] * b[v] + a[2 * u + 1] * b[2 + v]) % LAB_P;
        bool same = true;
        for (int k = 0; k < 4; ++k) { a[k] = c[k]; same = same && r[i].m[k] == (unsigned)c[k]; }
        if (!same) { if (bad < 3) printf("mismatch at %zu\n", i); ++bad; }
    }
    return bad;
}
#else
__global__ void init_in(ms_elem* x, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = (int)((i * 2654435761ull) >> 13) % 1000 - 500;
}
static size_t check(const std::vector<ms_elem>& h, const std::vector<ms_elem>& r) {
    unsigned acc = 0; size_t bad = 0;
    for (size_t i = 0; i < h.size(); ++i) { acc += (unsigned)h[i]; if ((int)acc != r[i]) { if (bad < 3) printf("mismatch at %zu: %d vs %d\n", i, r[i], (int)acc); ++bad; } }
    return bad;
}
#endif
template <typename F> float median_ms(F f, int reps = 30) {
    cudaEvent_t a, b; CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 5; ++i) f();
    std::vector<float> ts;
    for (int i = 0; i < reps; ++i) { CHECK(cudaEventRecord(a)); f(); CHECK(cudaEventRecord(b)); CHECK(cudaEventSynchronize(b)); float t; CHECK(cudaEventElapsedTime(&t, a, b)); ts.push_back(t); }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}
static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[(size_t)(p * (v.size() - 1))]; }

int main(int argc, char** argv) {
    int lg = argc > 1 ? atoi(argv[1]) : 28;
    size_t n = size_t(1) << lg;
    cudaDeviceProp p; CHECK(cudaGetDeviceProperties(&p, 0));
#ifndef TILE_ELEMS
#define TILE_ELEMS MS_TILE
#endif
    const int TILE = TILE_ELEMS;
    unsigned tiles = (unsigned)((n + TILE - 1) / TILE);
    const size_t E = sizeof(ms_elem);
    ms_elem *in, *out; unsigned long long* state; unsigned* counter;
    CHECK(cudaMalloc(&in, n * E)); CHECK(cudaMalloc(&out, n * E));
    // Status words: up to 64 bytes per tile (the paired layout of 32-byte elements).
    // (128 bytes per tile for the strided status words of run.sh stride.)
    CHECK(cudaMalloc(&state, (size_t)tiles * 128 + 4096)); CHECK(cudaMemset(state, 0, (size_t)tiles * 128 + 4096));
    // The tile counter, and at word 8 the pacing clock of variants/tma.inc (TMA_PACE_PS).
    CHECK(cudaMalloc(&counter, 64)); CHECK(cudaMemset(counter, 0, 64));
    init_in<<<1024, 256>>>(in, n);
    int smem = SMEM_BYTES;
    CHECK(cudaFuncSetAttribute(KNAME, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0; CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, KNAME, THREADS, smem));
    { cudaFuncAttributes fa; CHECK(cudaFuncGetAttributes(&fa, KNAME)); printf("[%s] regs %d, local %zu B\n", VNAME, fa.numRegs, fa.localSizeBytes); }
    unsigned epoch = 0;
#ifdef PERSIST  // a resident grid: PERSIST blocks per SM (0: as many as fit)
    const unsigned grid = (PERSIST > 0 ? PERSIST : per_sm) * p.multiProcessorCount;
#else
#ifndef GRID_MUL  // blocks per tile (variants/ahead.inc: a reduce and a scan item per tile)
#define GRID_MUL 1
#endif
#ifdef CLUSTER  // variants/cluster.inc: whole clusters (the tiles past the end are empty)
    const unsigned grid = (tiles + CLUSTER - 1) / CLUSTER * CLUSTER;
#else
    const unsigned grid = tiles * GRID_MUL;
#endif
#endif
#ifdef PROP
    cudaStream_t s2; CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t ev_fork, ev_join; CHECK(cudaEventCreateWithFlags(&ev_fork, cudaEventDisableTiming)); CHECK(cudaEventCreateWithFlags(&ev_join, cudaEventDisableTiming));
    CHECK(cudaFuncSetAttribute(ms_propagate, cudaFuncAttributeMaxDynamicSharedMemorySize, PROP));
#endif
#ifdef TMA  // variants/tma.inc: tensor maps of the input and output, one box per tile
    const CUtensorMap tin = ms_tma_map(in, n * E, MS_BLOCK / TMA_BOXES), tout = ms_tma_map(out, n * E, MS_BLOCK / TMA_BOXES);
#endif
    auto launch = [&] {
        ++epoch;
        CHECK(cudaMemsetAsync(counter, 0, 4));
#ifdef PROP
        CHECK(cudaEventRecord(ev_fork, 0)); CHECK(cudaStreamWaitEvent(s2, ev_fork, 0));
        ms_propagate<<<1, 32, PROP, s2>>>((ms_state*)state, tiles, epoch);
        CHECK(cudaEventRecord(ev_join, s2));
#endif
#ifdef TMA
        KNAME<<<grid, THREADS, smem>>>(in, out, n, tiles, (ms_state*)state, nullptr, nullptr, counter, epoch, 0, ms_elem{}, 0, nullptr, tin, tout);
#else
        KNAME<<<grid, THREADS, smem>>>(in, out, n, tiles, (ms_state*)state, nullptr, nullptr, counter, epoch, 0, ms_elem{}, 0, nullptr);
#endif
#ifdef PROP
        CHECK(cudaStreamWaitEvent(0, ev_join, 0));
#endif
    };
    float c = median_ms([&] { CHECK(cudaMemcpyAsync(out, in, n * E, cudaMemcpyDeviceToDevice)); });
    float t = median_ms(launch);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<ms_elem> h(n), r(n);
    CHECK(cudaMemcpy(h.data(), in, n * E, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(r.data(), out, n * E, cudaMemcpyDeviceToHost));
    const size_t bad = check(h, r);
    printf("%s | %s 2^%d | block %d x items %d, smem %d B, %d blocks/SM | scan %.4f ms, copy %.4f ms (%.0f GB/s), fraction %.3f | %s\n",
           VNAME, p.name, lg, MS_BLOCK, MS_ITEMS, smem, per_sm, t, c, 2.0 * n * E / c / 1e6, c / t, bad ? "WRONG" : "ok");
#ifdef TRACE
    unsigned long long* tr; CHECK(cudaMalloc(&tr, (size_t)tiles * 128)); CHECK(cudaMemset(tr, 0, (size_t)tiles * 128));
    CHECK(cudaMemcpyToSymbol(g_trace, &tr, sizeof(tr)));
    launch(); CHECK(cudaDeviceSynchronize());
    std::vector<unsigned long long> ht((size_t)tiles * 16);
    CHECK(cudaMemcpy(ht.data(), tr, ht.size() * 8, cudaMemcpyDeviceToHost));
    int clk_khz = 0; CHECK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0));
    double cyc_us = clk_khz / 1e3;
    std::vector<double> sl[6], win, spin, wd[4], first_after_agg;
    unsigned long long g0 = ~0ull, g1 = 0;
    for (unsigned i = 0; i < tiles; ++i) {
        unsigned long long* q = &ht[(size_t)i * 16];
        for (int k = 2; k <= 5; ++k) sl[k].push_back(((long long)(q[k] - q[1])) / cyc_us);
        { unsigned nw = (unsigned)(q[6] >> 32); if (nw > 8) nw = 8;
          for (unsigned w = 0; w < nw; ++w) { unsigned long long e = (w + 1 < nw) ? q[8 + w + 1] : q[4]; wd[w < 3 ? w : 3].push_back(((long long)(e - q[8 + w])) / cyc_us); }
          if (nw) first_after_agg.push_back(((long long)(q[8] - q[3])) / cyc_us); }
        win.push_back(double(q[6] >> 32)); spin.push_back(double(q[6] & 0xffffffffu));
        g0 = std::min(g0, q[0]); g1 = std::max(g1, q[0]);
    }
    auto show = [&](const char* name, std::vector<double>& v) {
        if (v.empty()) { printf("  %-12s (none)\n", name); return; }
        double s = 0; for (double x : v) s += x;
        printf("  %-12s mean %8.2f  p10 %8.2f  p50 %8.2f  p90 %8.2f  p99 %8.2f  max %8.2f\n", name, s / v.size(), pct(v, .1), pct(v, .5), pct(v, .9), pct(v, .99), pct(v, 1.0));
    };
    printf("  (us from claim, at %.0f MHz nominal clock) claims span %.1f us (%.1f tiles/us)\n", cyc_us, (g1 - g0) / 1e3, tiles / ((g1 - g0) / 1e3));
    show("loaded", sl[2]); show("agg", sl[3]); show("prefix", sl[4]); show("end", sl[5]);
    show("agg->win0", first_after_agg); show("win0 dur", wd[0]); if (wd[1].size()) show("win1 dur", wd[1]); if (wd[2].size()) show("win2 dur", wd[2]); if (wd[3].size()) show("win3+ dur", wd[3]);
    show("windows", win); show("spins", spin);
#ifdef TRACE_END
    {  // session 8: word 7 is the tile's end on the global timer (ns). Where does the kernel's
       // time go beyond tiles / steady rate, and how full are the block slots in steady state?
        std::vector<double> cl(tiles), en(tiles);
        for (unsigned i = 0; i < tiles; ++i) { cl[i] = double(ht[(size_t)i * 16]); en[i] = double(ht[(size_t)i * 16 + 7]); }
        const double t0 = *std::min_element(cl.begin(), cl.end()), tlc = *std::max_element(cl.begin(), cl.end());
        std::vector<double> es = en; std::sort(es.begin(), es.end());
        const double t1 = es.back(), a = es[tiles / 10], b = es[tiles * 9 / 10];
        const double rate = 0.8 * tiles / ((b - a) / 1e3);  // tiles per us between the 10% and 90% ends
        double occ = 0, life = 0;
        for (unsigned i = 0; i < tiles; ++i) { occ += std::max(0.0, std::min(en[i], b) - std::max(cl[i], a)); life += en[i] - cl[i]; }
        const double slots = double(per_sm) * p.multiProcessorCount;
        printf("  timeline: span %.1f us = tiles / steady rate %.1f us + %.1f us; steady %.1f tiles/us; mean life %.2f us;"
               " resident %.0f of %.0f slots (%.3f); first end %.2f us; last claim to last end %.2f us\n",
               (t1 - t0) / 1e3, tiles / rate, (t1 - t0) / 1e3 - tiles / rate, rate, life / tiles / 1e3,
               occ / (b - a), slots, occ / (b - a) / slots, (es[0] - t0) / 1e3, (t1 - tlc) / 1e3);
        printf("  ends per 2 us, first 24 us:");
        for (int k = 0; k < 12; ++k) printf(" %ld", (long)(std::upper_bound(es.begin(), es.end(), t0 + 2e3 * (k + 1)) - std::upper_bound(es.begin(), es.end(), t0 + 2e3 * k)));
        printf("\n  ends per 2 us, last 24 us:");
        for (int k = 12; k > 0; --k) printf(" %ld", (long)(std::upper_bound(es.begin(), es.end(), t1 - 2e3 * (k - 1)) - std::upper_bound(es.begin(), es.end(), t1 - 2e3 * k)));
        printf("  (steady: %.0f per 2 us)\n", 2 * rate);
    }
#else
    {  // variants/ahead.inc: each tile's reduce item, claim to publish (word 7)
        std::vector<double> rl;
        for (unsigned i = 0; i < tiles; ++i) if (ht[(size_t)i * 16 + 7]) rl.push_back(((long long)ht[(size_t)i * 16 + 7]) / cyc_us);
        if (rl.size()) show("reduce life", rl);
    }
#endif
#endif
    return 0;
}
