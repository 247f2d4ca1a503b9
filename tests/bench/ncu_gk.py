#!/usr/bin/env python3
"""Runs the gk kernel of chosen benchmark cases once each, for ncu (tests/bench/ncu_gk.py).

    ncu --clock-control none -k regex:^gk_ --section SpeedOfLight ... \\
        python3 tests/bench/ncu_gk.py 'colsum 8192x8192' 'scan 268435456 f32' ...

    ncu --clock-control none --nvtx --nvtx-include 'run/' --section SpeedOfLight ... \\
        python3 tests/bench/ncu_gk.py --peers 'layernorm 65536x1024'

Each argument picks the cases of bench_gk.py (the named ones and --sweep's)
whose key ("op shape dtype") starts with it; the inputs are torch tensors shared through DLPack, as in the
benchmark.  gk's kernels are named gk_<hash>; the mapping from case to kernel
name goes to stderr (stdout is left to ncu's report).

--peers also runs the case's torch eager op and its torch.compile'd form on
the same tensors, once each after a warm-up, so that ncu's counters for
gk's kernel and the peers' come from one process.  Every timed launch (gk's
step, eager's call, the compiled call) sits in an NVTX range named `run`
(`--nvtx --nvtx-include 'run/'` profiles those and nothing of torch.compile's
compile or autotuning); stderr says the order (`ncu-run: CASE gk|eager|compile`).
"""
import os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_gk, gkc, peers


def picked(want):
    seen, out = set(), []
    for c in bench_gk.cases(False) + bench_gk.sweep_cases():   # the named cases, then the sweep's
        if c.key not in seen and any(c.key.startswith(w) for w in want): out.append(c)
        seen.add(c.key)
    return out


def run_peers(P, c, ins):
    """The case's torch eager op and its compiled form, each warmed up, then once in an NVTX range."""
    nvtx = P.torch.cuda.nvtx
    fn = getattr(P, c.peer)
    forms = [("eager", fn)]
    if c.compile and P.compiled: forms.append(("compile", P.compiled(fn)))
    for what, f in forms:
        f(*ins); f(*ins); P.sync()          # the compile, the autotuning and the warm-up outside the range
        sys.stderr.write("ncu-run: %s %s\n" % (c.key, what))
        nvtx.range_push("run"); f(*ins); P.sync(); nvtx.range_pop()


def main():
    args = sys.argv[1:]
    with_peers = "--peers" in args
    want = [a for a in args if a != "--peers"]
    cs = picked(want)
    if not cs: sys.exit("ncu_gk.py: no benchmark case starts with %s" % " or ".join(map(repr, want)))
    P = peers.TorchPeer()
    lib = gkc.load(bench_gk.find_lib(["libgk.so"]))
    for c in cs:
        ins = [P.make(c.kind, c.shape, c.dt) for _ in range(c.nin)]
        P.sync()
        g = gkc.Gk(lib, "cuda", profile=True)
        try:
            for v, a in zip("xy", ins): g.put(v + "0", P.capsule(a))
            st = g.prepare(c.src.format(x="x0", y="y0"))
            if with_peers:
                g.step(st); g.sync()            # the warm-up (and any compile) outside the range
                sys.stderr.write("ncu-run: %s gk\n" % c.key)
                P.torch.cuda.nvtx.range_push("run")
            g.step(st); g.sync()
            if with_peers: P.torch.cuda.nvtx.range_pop()
        finally:
            prof = g.close()
        for k in gkc.parse_profile(prof):
            sys.stderr.write("ncu-case: %s = %s %s %.1f us\n" % (c.key, k[0], k[1], k[3]))
        if with_peers: run_peers(P, c, ins)
        del ins


if __name__ == "__main__":
    main()
