# Protocol models of variants/pipeline.inc and variants/split.inc (run here, no GPU): blocks
# (and, for split, each block's look-back warp and workers) as generators under random
# scheduling and copy latencies, with a non-commutative operator (2x2 integer matrices mod p).
# Checks every output and that the generators never all wait (deadlock).
# Usage: python3 pipeline_model.py [configs]
import random, sys
P = 1000003
def mul(a, b):
    return ((a[0]*b[0]+a[1]*b[2]) % P, (a[0]*b[1]+a[1]*b[3]) % P, (a[2]*b[0]+a[3]*b[2]) % P, (a[2]*b[1]+a[3]*b[3]) % P)
I = (1, 0, 0, 1)
def run(seed, N, TILE, G, S, design):
    rng = random.Random(seed)
    n = N * TILE - rng.randrange(TILE)
    xs = [(rng.randrange(P), rng.randrange(P), rng.randrange(P), rng.randrange(P)) for _ in range(n)]
    ntiles = (n + TILE - 1) // TILE
    state = {}          # tile -> ('A'|'I', value)
    counter = [0]
    out = [None] * n
    now = [0]
    def tile_elems(t): return xs[t*TILE:min(n, (t+1)*TILE)]
    def fold(t):
        acc = I
        for x in tile_elems(t): acc = mul(acc, x)
        return acc
    def lookback(t, floor=-1, floor_incl=None):
        # Tile t's exclusive prefix: its predecessors back to the nearest inclusive prefix, or
        # to `floor`, a tile whose inclusive prefix the caller holds; waits (yield False) for
        # any predecessor not yet published.
        j, acc = t - 1, I
        while j >= 0:
            if j == floor:
                return mul(floor_incl, acc)
            if j not in state:
                yield False
                continue
            kind, v = state[j]
            acc = mul(v, acc)
            if kind == 'I':
                break
            j -= 1
        return acc
    def block(b):
        for _ in range(rng.randrange(50)): yield True   # late start
        tiles, ready, agg = [], [], [None] * S
        for s in range(S):
            tiles.append(counter[0]); counter[0] += 1; yield True
        for s in range(S): ready.append(now[0] + rng.randrange(1, 200))
        for s in range(S):
            while now[0] < ready[s]: yield False
            if tiles[s] < ntiles:
                a = fold(tiles[s]); state[tiles[s]] = ('I' if tiles[s] == 0 else 'A', a); agg[s] = a
            yield True
        k = 0
        while True:
            c, d = k % S, (k + 1) % S
            t = tiles[c]
            if t >= ntiles: break
            claim = ntiles
            if tiles[(c + S - 1) % S] < ntiles:
                claim = counter[0]; counter[0] += 1
            yield True
            while now[0] < ready[d]: yield False
            if k + 1 >= S and tiles[d] < ntiles:
                a = fold(tiles[d]); state[tiles[d]] = ('I' if tiles[d] == 0 else 'A', a); agg[d] = a
            yield True
            prefix = yield from lookback(t)
            if t > 0:
                state[t] = ('I', mul(prefix, agg[c]))
            yield True
            run_ = prefix
            for i, x in enumerate(tile_elems(t)):
                run_ = mul(run_, x); out[t*TILE + i] = run_
            tiles[c] = claim
            ready[c] = now[0] + rng.randrange(1, 200)
            k += 1
    INF = float('inf')
    def split_block(b):
        ctl = {'tile': [None] * S, 'agg': [None] * S, 'prefix': [None] * S, 'folded': 0, 'prefixed': 0, 'end': INF}
        landed = {}
        def workers():
            for _ in range(rng.randrange(50)): yield True   # late start
            for s in range(S):
                t = counter[0]; counter[0] += 1
                ctl['tile'][s] = min(t, ntiles)
                if t >= ntiles and ctl['end'] == INF: ctl['end'] = s
                yield True
            for s in range(S): landed[s] = now[0] + rng.randrange(1, 200)
            issued, folded, finished = S, 0, 0
            while True:
                while True:
                    if finished < folded and ctl['prefixed'] > finished: act = 'finish'; break
                    if folded < issued and ctl['tile'][folded % S] < ntiles: act = 'fold'; break
                    if finished == folded: act = 'exit'; break
                    yield False
                if act == 'exit': return
                if act == 'fold':
                    while now[0] < landed[folded]: yield False
                    st = folded % S; t = ctl['tile'][st]; a = fold(t)
                    state[t] = ('I' if t == 0 else 'A', a)
                    ctl['agg'][st] = a; ctl['folded'] = folded + 1; folded += 1
                    yield True
                    continue
                st = finished % S; t = ctl['tile'][st]; run_ = ctl['prefix'][st]
                for i, x in enumerate(tile_elems(t)):
                    run_ = mul(run_, x); out[t*TILE + i] = run_
                yield True
                nxt = ntiles
                if ctl['tile'][(issued - 1) % S] < ntiles:
                    nxt = counter[0]; counter[0] += 1
                if nxt >= ntiles:
                    nxt = ntiles
                    if ctl['end'] == INF: ctl['end'] = issued
                ctl['tile'][st] = nxt
                landed[issued] = now[0] + rng.randrange(1, 200)
                issued += 1; finished += 1
        def lookback_warp():
            q = 0
            floor, floor_incl = -1, None   # incremental: the block's previous tile and its prefix
            while True:
                while not (ctl['folded'] > q or ctl['end'] <= q): yield False
                if ctl['folded'] <= q: return
                st = q % S; t = ctl['tile'][st]; a = ctl['agg'][st]
                prefix = yield from lookback(t, floor, floor_incl)
                if t > 0:
                    state[t] = ('I', mul(prefix, a))
                floor, floor_incl = t, mul(prefix, a)
                ctl['prefix'][st] = prefix; ctl['prefixed'] = q + 1; q += 1
                yield True
        return [workers(), lookback_warp()]
    if design == 'split':
        gens = [g for b in range(G) for g in split_block(b)]
    else:
        gens = [block(b) for b in range(G)]
    G = len(gens)
    live = list(range(G))
    idle = 0
    while live:
        now[0] += 1
        progressed = False
        for b in rng.sample(live, len(live)):
            try:
                if next(gens[b]): progressed = True
            except StopIteration:
                live.remove(b); progressed = True
        idle = 0 if progressed else idle + 1
        if idle > 1000: raise SystemExit(f"deadlock: seed {seed}, {len(live)} blocks waiting")
    acc = I
    for i, x in enumerate(xs):
        acc = mul(acc, x)
        assert out[i] == acc, (seed, i)
    return ntiles
for design, smin, smax in (('pipeline', 2, 5), ('split', 1, 13)):
    tot = 0
    for seed in range(int(sys.argv[1]) if len(sys.argv) > 1 else 300):
        r = random.Random(seed)
        tot += run(seed, N=r.randrange(1, 60), TILE=r.randrange(1, 5), G=r.randrange(1, 12), S=r.randrange(smin, smax), design=design)
    print(design, "ok", tot, "tiles")
