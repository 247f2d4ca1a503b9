#!/usr/bin/env python3
"""Runs the gk kernel of chosen benchmark cases once each, for ncu (tests/bench/ncu_gk.py).

    ncu --clock-control none -k regex:^gk_ --section SpeedOfLight ... \\
        python3 tests/bench/ncu_gk.py 'colsum 8192x8192' 'scan 268435456 f32' ...

Each argument picks the cases of bench_gk.py whose key ("op shape dtype")
starts with it; the inputs are torch tensors shared through DLPack, as in the
benchmark.  gk's kernels are named gk_<hash>; the mapping from case to kernel
name goes to stderr (stdout is left to ncu's report).
"""
import os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_gk, gkc, peers

def main():
    want = sys.argv[1:]
    cs = [c for c in bench_gk.cases(False) if any(c.key.startswith(w) for w in want)]
    P = peers.TorchPeer()
    lib = gkc.load(bench_gk.find_lib(["libgk.so"]))
    for c in cs:
        ins = [P.make(c.kind, c.shape, c.dt) for _ in range(c.nin)]
        P.sync()
        g = gkc.Gk(lib, "cuda", profile=True)
        try:
            for v, a in zip("xy", ins): g.put(v + "0", P.capsule(a))
            st = g.prepare(c.src.format(x="x0", y="y0"))
            g.step(st); g.sync()
        finally:
            prof = g.close()
        for k in gkc.parse_profile(prof):
            sys.stderr.write("ncu-case: %s = %s %s %.1f us\n" % (c.key, k[0], k[1], k[3]))
        del ins

if __name__ == "__main__":
    main()
