# Protocol model of variants/pipeline.inc (run here, no GPU): blocks as generators under random
# scheduling and copy latencies, with a non-commutative operator (2x2 integer matrices mod p).
# Checks every output and that the blocks never all wait (deadlock). Usage: python3 pipeline_model.py [configs]
import random, sys
P = 1000003
def mul(a, b):
    return ((a[0]*b[0]+a[1]*b[2]) % P, (a[0]*b[1]+a[1]*b[3]) % P, (a[2]*b[0]+a[3]*b[2]) % P, (a[2]*b[1]+a[3]*b[3]) % P)
I = (1, 0, 0, 1)
def run(seed, N, TILE, G, S):
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
            prefix = I
            if t > 0:
                j, acc = t - 1, I
                while True:
                    if j not in state: yield False; continue
                    kind, v = state[j]
                    acc = mul(v, acc)
                    if kind == 'I': break
                    j -= 1
                prefix = acc
                state[t] = ('I', mul(prefix, agg[c]))
            yield True
            run_ = prefix
            for i, x in enumerate(tile_elems(t)):
                run_ = mul(run_, x); out[t*TILE + i] = run_
            tiles[c] = claim
            ready[c] = now[0] + rng.randrange(1, 200)
            k += 1
    gens = [block(b) for b in range(G)]
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
tot = 0
for seed in range(int(sys.argv[1]) if len(sys.argv) > 1 else 300):
    r = random.Random(seed)
    tot += run(seed, N=r.randrange(1, 60), TILE=r.randrange(1, 5), G=r.randrange(1, 12), S=r.randrange(2, 5))
print("ok", tot, "tiles")
