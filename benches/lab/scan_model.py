#!/usr/bin/env python3
"""A discrete-event model of single-pass scans on one GPU (run here, no GPU needed).

It asks whether the look-back's wait, not bandwidth, bounds the staged kernel, and what the
pipelined variant (variants/pipeline.inc) would gain. Calibrated against the H200 traces of
docs/performance.md ("Where a staged tile's time goes"); its figures are predictions, not
measurements.

Model:
- DRAM is one processor-sharing server of `bw` bytes/us that carries reads and writes (a copy
  of B bytes moves 2B). A read completes when its bytes are served, plus `lat` us, plus an
  exponential extra delay of mean `jit` us (bank and channel conflicts: the tail).
- Each SM holds `slots` blocks. A block of the staged kernel claims a tile (`claim` us), copies
  it, folds it (`fold` us), publishes its aggregate, looks back (each window of 32 predecessors
  costs `step` us once all of them have published; a window with an inclusive prefix ends it),
  scans and stores (`scan` us; the store then enters DRAM) and leaves. `nolb` skips the look-back.
- The pipelined block (`stages` buffers, a resident grid) folds its next tile and publishes its
  aggregate, looks back for the current one, scans and stores it, and refills that buffer with
  a tile claimed at the start of the iteration; its prologue folds `fold_first` tiles before
  the first look-back (the kernel folds all of them).
- The warp-specialised block (not written as a kernel) copies, folds and finishes (look-back,
  scan, store) its tiles in three concurrent roles, a buffer freed when its tile is stored.

Limits: with one stage the warp-specialised block is the staged kernel in all but the launch,
yet the model gives it 0.6 against 0.78; so the model's bandwidth figures carry errors of that
size and decide nothing. What it does show reliably is ordering: chains of waits that follow
from the protocol whatever the latencies.

Usage: python3 scan_model.py            (calibration table and pipeline predictions)
"""
import heapq
import math
import random
import sys


class Dram:
    """Processor sharing: every transfer in flight gets an equal share of the bandwidth."""

    def __init__(self, bw):
        self.bw = bw
        self.v = 0.0  # virtual time: bytes served per transfer so far
        self.t = 0.0
        self.active = []  # heap of (virtual finish, seq, callback)
        self.seq = 0

    def advance(self, t):
        while self.active:
            n = len(self.active)
            vf = self.active[0][0]
            t_done = self.t + (vf - self.v) * n / self.bw
            if t_done > t:
                break
            self.t, self.v = t_done, vf
            _, _, cb = heapq.heappop(self.active)
            cb(t_done)
        if self.active:
            self.v += (t - self.t) * self.bw / len(self.active)
        self.t = t

    def next_finish(self):
        if not self.active:
            return math.inf
        return self.t + (self.active[0][0] - self.v) * len(self.active) / self.bw

    def submit(self, t, nbytes, cb):
        self.advance(t)
        self.seq += 1
        heapq.heappush(self.active, (self.v + nbytes, self.seq, cb))


class Sim:
    def __init__(self, p, seed=1):
        self.p = p
        self.rng = random.Random(seed)
        self.events = []
        self.seq = 0
        self.dram = Dram(p["bw"])
        self.tiles = p["tiles"]
        self.counter = 0
        self.agg_at = [math.inf] * self.tiles   # when tile i's aggregate is visible
        self.incl_at = [math.inf] * self.tiles  # when its inclusive prefix is visible
        self.waiters = {}
        self.done = 0
        self.end = 0.0

    def at(self, t, fn, *args):
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, fn, args))

    def run(self):
        while self.events or self.dram.active:
            t_ev = self.events[0][0] if self.events else math.inf
            t_dr = self.dram.next_finish()
            if t_dr <= t_ev:
                self.dram.advance(t_dr)
                continue
            t, _, fn, args = heapq.heappop(self.events)
            self.dram.advance(t)
            fn(t, *args)
        return self.end

    # -- shared pieces
    def read(self, t, then):
        p = self.p
        def landed(tl):
            self.at(tl + p["lat"] + self.rng.expovariate(1.0 / p["jit"]), then)
        # Submitted as an event: callers run ahead of the clock (t includes their own delays).
        self.at(t, lambda tt: self.dram.submit(tt, p["tile_bytes"], landed))

    def write(self, t):
        def stored(tl):
            self.end = max(self.end, tl)
        self.at(t, lambda tt: self.dram.submit(tt, self.p["tile_bytes"], stored))

    def publish_agg(self, t, i):
        self.agg_at[i] = t
        for w in self.waiters.pop(i, []):
            self.at(t + self.p["poll"], w)

    def publish_incl(self, t, i):
        self.incl_at[i] = t
        self.agg_at[i] = min(self.agg_at[i], t)
        for w in self.waiters.pop(i, []):
            self.at(t + self.p["poll"], w)

    def lookback(self, t, i, then, floor=-1):
        """Windows of `win` predecessors (32 lanes x look-back per lane), each read once all of
        them have published. `floor`: a tile whose inclusive prefix the caller already holds
        (the incremental look-back of the split kernel)."""
        p = self.p
        win = p.get("win", 32)
        def window(t, end):
            lo = max(0, end - win, floor)
            for j in range(end - 1, lo - 1, -1):
                if j != floor and self.agg_at[j] > t:
                    self.waiters.setdefault(j, []).append(lambda tt: window(tt, end))
                    return
            t2 = t + p["step"]
            if lo == 0 or lo == floor or any(self.incl_at[j] <= t for j in range(lo, end)):
                then(t2)
            else:
                self.at(t2, window, lo)
        if i == 0:
            then(t)
        else:
            window(t, i)

    # -- the staged kernel: one tile per block, `slots` blocks per SM
    def staged_block(self, t, sm):
        p = self.p
        if self.counter >= self.tiles:
            return
        i = self.counter
        self.counter += 1
        t += p["claim"]
        def folded(t):
            if i == 0:
                self.publish_incl(t, 0)
            else:
                self.publish_agg(t, i)
            if p.get("nolb"):
                finish(t)
            else:
                self.lookback(t, i, prefixed)
        def prefixed(t):
            self.publish_incl(t, i)
            finish(t)
        def finish(t):
            t += p["scan"]
            self.write(t)
            self.at(t + p["launch"], self.staged_block, sm)
        self.read(t, lambda tl: self.at(tl + p["fold"], folded))

    # -- the pipelined kernel: resident blocks of `stages` buffers
    def pipe_block(self, t0, blk):
        p = self.p
        S = p["stages"]
        st = {"tiles": [], "landed": {}, "k": 0}
        def claim():
            if self.counter >= self.tiles:
                return self.tiles
            self.counter += 1
            return self.counter - 1
        def issue(t, tile):
            if tile < self.tiles:
                st["landed"][tile] = None
                def land(tl, tile=tile):
                    st["landed"][tile] = tl
                    w = st.get("wait")
                    if w and w[0] == tile:
                        del st["wait"]
                        w[1](tl)
                self.read(t, land)
        def when_landed(t, tile, then):
            tl = st["landed"].get(tile)
            if tile >= self.tiles or (tl is not None and tl <= t):
                then(t)
            elif tl is not None:
                then(tl)
            else:
                st["wait"] = (tile, then)
        def fold_pub(t, tile, then):
            if tile >= self.tiles or tile in st["folded"]:
                then(t)
                return
            st["folded"].add(tile)
            def publish(tt):
                (self.publish_incl if tile == 0 else self.publish_agg)(tt, tile)
                then(tt)
            self.at(t + p["fold"], publish)
        def iteration(t):
            k = st["k"]
            cur = st["tiles"][k]
            if cur >= self.tiles:
                return
            new = claim() if st["tiles"][-1] < self.tiles else self.tiles
            nxt = st["tiles"][k + 1]
            def after_fold(t):
                self.lookback(t, cur, prefixed)
            def prefixed(t):
                if cur > 0:
                    self.publish_incl(t, cur)
                t += p["scan"]
                self.write(t)
                st["tiles"].append(new)
                issue(t, new)
                st["k"] += 1
                self.at(t, iteration)
            when_landed(t, nxt, lambda tt: fold_pub(tt, nxt, after_fold))
        t = t0 + p["claim"]
        st["tiles"] = [claim() for _ in range(S)]
        st["folded"] = set()
        for tile in st["tiles"]:
            issue(t, tile)
        # Prologue: fold the first `fold_first` tiles before the first look-back (the
        # prologue's tiles are nearly consecutive: a tile held unpublished there would chain
        # every block's first look-back behind its neighbour's).
        def prologue(t, s_i):
            if s_i == p.get("fold_first", 1):
                iteration(t)
                return
            tile = st["tiles"][s_i]
            when_landed(t, tile, lambda tt: fold_pub(tt, tile, lambda t3: prologue(t3, s_i + 1)))
        prologue(t, 0)

    # -- the warp-specialised block (variants/split.inc): a look-back warp beside workers that
    #    fold and finish (scan, store, refill) tiles, one action at a time, finishing first
    def split_block(self, t0, blk):
        p = self.p
        S = p["stages"]
        st = {"queue": [], "landed": {}, "folded": 0, "prefixed": 0, "finished": 0,
              "busy": False, "lb_busy": False, "floor": -1}
        def claim_and_load(t):
            if self.counter >= self.tiles:
                return
            tile = self.counter
            self.counter += 1
            st["queue"].append(tile)
            def land(tl):
                st["landed"][tile] = tl
                workers(tl)
            self.read(t + p["claim"], land)
        def workers(t):
            if st["busy"]:
                return
            q = st["queue"]
            if st["finished"] < st["prefixed"]:
                st["busy"] = True
                def finished(t):
                    self.write(t)
                    st["finished"] += 1
                    st["busy"] = False
                    claim_and_load(t)   # the stage is free
                    workers(t)
                self.at(t + p["scan"], finished)
            elif st["folded"] < len(q) and q[st["folded"]] in st["landed"]:
                tile = q[st["folded"]]
                st["busy"] = True
                def folded(t):
                    (self.publish_incl if tile == 0 else self.publish_agg)(t, tile)
                    st["folded"] += 1
                    st["busy"] = False
                    lookback_warp(t)
                    workers(t)
                self.at(t + p["fold"], folded)
        def lookback_warp(t):
            if st["lb_busy"] or st["prefixed"] >= st["folded"]:
                return
            tile = st["queue"][st["prefixed"]]
            st["lb_busy"] = True
            def prefixed(t):
                if tile > 0:
                    self.publish_incl(t, tile)
                if p.get("incremental"):
                    st["floor"] = tile
                st["prefixed"] += 1
                st["lb_busy"] = False
                lookback_warp(t)
                workers(t)
            self.lookback(t, tile, prefixed, st["floor"])
        for _ in range(S):
            claim_and_load(t0)


BASE = dict(
    bw=4.2e6,            # bytes/us: the H200's copy rate (read + write)
    tile_bytes=16384,
    lat=0.8,             # us after a read's bytes are served
    jit=1.2,             # us, mean of the exponential extra delay
    claim=0.4, fold=0.9, step=0.5, poll=0.2, scan=1.5, launch=0.3,
    sms=132,
)


def fraction(p, kind, seed=1):
    s = Sim(p, seed)
    if kind == "staged":
        for sm in range(p["sms"]):
            for _ in range(p["slots"]):
                s.at(0.0, s.staged_block, sm)
    else:
        block = s.pipe_block if kind == "pipe" else s.split_block
        for b in range(p["sms"] * p["slots"]):
            s.at(0.0, block, b)
    t = s.run()
    assert p.get("nolb") or all(x < math.inf for x in s.incl_at), "a tile never learnt its prefix"
    copy = 2 * p["tiles"] * p["tile_bytes"] / p["bw"]
    return copy / t


def main():
    tiles = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
    print(f"model: {tiles} tiles of 16 KiB; fraction of copy (H200 measurements beside)")
    measured = {("nolb", 3): 0.831, ("nolb", 7): 0.973, ("nolb", 10): 0.968, ("nolb", 13): 0.965,
                ("lb", 3): 0.441, ("lb", 7): 0.621, ("lb", 10): 0.700, ("lb", 13): 0.743}
    for slots in (3, 7, 10, 13):
        for lb in ("nolb", "lb"):
            p = dict(BASE, tiles=tiles, slots=slots, nolb=(lb == "nolb"))
            print(f"  staged {lb:4} {slots:2} blocks/SM: model {fraction(p, 'staged'):.3f}  measured {measured[(lb, slots)]:.3f}")
    for stages, slots, tb in ((2, 6, 16384), (3, 4, 16384), (2, 13, 8192), (3, 9, 8192), (4, 6, 8192)):
        k = tb / 16384  # folding and scanning scale with the tile
        for first in (1, stages):
            p = dict(BASE, tiles=tiles * 16384 // tb, slots=slots, stages=stages, tile_bytes=tb,
                     fold=BASE["fold"] * k, scan=BASE["scan"] * k, fold_first=first)
            print(f"  pipeline {stages} stages, {tb // 1024} KiB tiles, {slots} blocks/SM, prologue folds {first}: model {fraction(p, 'pipe'):.3f}")
        print(f"  warp-specialised pipeline, same shape: model {fraction(p, 'split'):.3f}")


if __name__ == "__main__":
    main()
