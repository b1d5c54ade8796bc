#!/usr/bin/env python3
"""Emits instrumented staged-scan kernels (Sum i32) for the lab harness (benches/lab/harness.cu).

Usage, from the project's root, after `cargo build --release`:
    python3 benches/lab/gen.py OUTDIR 128x32 [128x32x8 ... matmod:128x8 ...]
For each staged shape (threads x items [x look-back]; prefixed `matmod:` for the 2x2 matrix
product mod 1e9+7 instead of Sum i32) it writes OUTDIR/trace_<tag>.cu: the
kernel monoscan generates, patched to record per-tile clock64() stamps (claim, tile staged,
aggregate, prefix known, end) and look-back windows/spins into a device array `g_trace`
(16 words per tile; see harness.cu). -DNOLB=1 skips the look-back (wrong results; the
ceiling of the staged tile alone). Files in variants/ append other kernels to these sources.
It prints "<tag> <kernel name> <threads> <shared bytes>" per shape.
"""
import os, re, subprocess, sys
def instrument(src):
    hook = '''
__device__ ms_u64* g_trace;
__device__ __forceinline__ ms_u64 ms_gt() { ms_u64 t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
#define TR(tile, k) do { if (g_trace) g_trace[(ms_u64)(tile) * 16 + (k)] = (ms_u64)clock64(); } while (0)\n#ifndef NOLB\n#define NOLB 0\n#endif
'''
    i = src.index('// ---- Tiled kernels')
    src = src[:i] + hook + src[i:]
    def rep(a, b):
        nonlocal src
        assert a in src, a[:60]
        src = src.replace(a, b)
    rep('''        sm.tile = ms_take_tile(counter, num_tiles);
    }''', '''        sm.tile = ms_take_tile(counter, num_tiles);
        if (g_trace) { g_trace[(ms_u64)sm.tile*16+0] = ms_gt(); }
        TR(sm.tile, 1);
    }''')
    rep('''    ms_stage_tile<in_t, true>(in, n, tile, buf);
''', '''    ms_stage_tile<in_t, true>(in, n, tile, buf);
    if (threadIdx.x == 0) TR(tile, 2);
''')
    rep('''    if (threadIdx.x < 32) {
        const ms_elem prefix = ms_lookback(''', '''    if (threadIdx.x == 0) TR(tile, 3);
    if (NOLB && threadIdx.x == 0) sm.prefix = MsOp::identity();
    if (!NOLB && threadIdx.x < 32) {
        const ms_elem prefix = ms_lookback(''')
    rep('''    __syncthreads();
    ms_elem run = (tile > 0 || has_init)''', '''    __syncthreads();
    if (threadIdx.x == 0) TR(tile, 4);
    ms_elem run = (tile > 0 || has_init)''')
    k = src.index('out[base + e] = ch->e[e % MS_CHUNK_ELEMS];')
    k = src.index('}\n    }\n}', k)
    src = src[:k] + '}\n    }\n    if (threadIdx.x == 0) { TR(tile, 5); }\n}' + src[k+len('}\n    }\n}'):]
    rep('''        ms_i64 end = tile;
        bool have = false;''', '''        ms_i64 end = tile;
        ms_u32 nwin = 0, nspin = 0;
        bool have = false;''')
    rep('''            for (int spins = 0;; ++spins) {
                bool all = true;''', '''            if (g_trace && lane == 0 && nwin < 8) g_trace[(ms_u64)tile * 16 + 8 + nwin] = clock64();
            ++nwin;
            for (int spins = 0;; ++spins) {
                bool all = true;''')
    rep('''                if (all) break;
                if (spins > 4)''', '''                if (all) break;
                ++nspin;
                if (spins > 4)''')
    rep('''        prefix = acc;
    }''', '''        prefix = acc;
        if (g_trace && lane == 0) g_trace[(ms_u64)tile * 16 + 6] = ((ms_u64)nwin << 32) | nspin;
    }''')
    return src

def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for spec in sys.argv[2:]:
        op, shape = spec.split(':') if ':' in spec else ('sum', spec)
        op_args, size = (['--op', 'matmod'], 16) if op == 'matmod' else (['--op', 'sum', '--dtype', 'i32'], 4)
        b, it = shape.split('x')[:2]
        # The cp.async form: variants/tma.inc is the lab's tensor-copy kernel.
        env = dict(os.environ, MONOSCAN_STAGED=shape, MONOSCAN_TMA='0')
        src = subprocess.run(['target/release/monoscan', 'emit', *op_args, '--algo', 'staged'],
                             env=env, capture_output=True, text=True, check=True).stdout
        name = re.search(r'(ms_[0-9a-z_]+)_scan_staged\(', src).group(1) + '_scan_staged'
        tag = (op + '_' if op != 'sum' else '') + shape.replace('x', '_')
        with open(os.path.join(outdir, f'trace_{tag}.cu'), 'w') as f:
            f.write(instrument(src))
        print(f'{tag} {name} {b} {int(b) * int(it) * size}')


if __name__ == '__main__':
    main()
