#!/usr/bin/env python3
"""compile_cost: what NVRTC costs the differential tester, per group kind.

Runs a gkdiff batch (tests/diff/gkdiff.py, fixed seed, every configuration of
--backend cuda, on the cpu backend: no GPU needed) with GK_NVRTC_CHECK=time,
so every generated kernel is compiled by NVRTC for sm_90 once per gk process,
as the cuda backend would; collects the `gk-nvrtc: kernel ...` lines through a
wrapper around build/gk, dedupes by kernel name (a hash of the text) and
prints per group kind: distinct kernels, NVRTC ms per distinct kernel (its
fastest compile: mean / median / max) and cubin bytes (independent of this
machine's load: the primary metric on a shared box).

  compile_cost.py [--seed 7] [-n 20] [-j 1] [--save F.json] [--compare F.json]
  compile_cost.py --fixed        # per-kernel fixed cost: NVRTC phases of tiny kernels

--compare prints the same table for a saved run (say, main's build) beside
this one, and the per-kernel cubin ratio of kernels that exist in both.
--fixed compiles, with gk's NVRTC options, a kernel without includes, the same
kernel including gk_fused.cuh (what every generated kernel includes), and
gk's trivial map `x * 2 + 1`, with NVRTC's --time phase report.
"""
import argparse
import ctypes
import time
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LINE = re.compile(r"gk-nvrtc: kernel (gk_[0-9a-f]+) \((\w+) group\) compiled in ([0-9.]+) ms, (\d+) bytes of cubin")

WRAPPER = """#!/bin/bash
# stderr of the real gk, kept for compile_cost.py and passed on
f="%(logdir)s/$$.$RANDOM.err"
"%(gk)s" "$@" 2>"$f"
rc=$?
cat "$f" >&2
exit $rc
"""


def find_build(b):
    p = os.path.abspath(os.path.join(ROOT, b, "gk"))
    if not os.access(p, os.X_OK):
        sys.exit("compile_cost.py: no gk binary at %s (make first, or pass --build)" % p)
    return p


def run_batch(args):
    gk = find_build(args.build)
    tmp = tempfile.mkdtemp(prefix="compile_cost_")
    logdir = os.path.join(tmp, "log")
    wdir = os.path.join(tmp, "bin")
    os.makedirs(logdir)
    os.makedirs(wdir)
    w = os.path.join(wdir, "gk")
    with open(w, "w") as f:
        f.write(WRAPPER % {"logdir": logdir, "gk": gk})
    os.chmod(w, 0o755)
    env = dict(os.environ, B=wdir, GK_NVRTC_CHECK="time", GKDIFF_CUDA_AS="cpu")
    cmd = [sys.executable, os.path.join(ROOT, "tests", "diff", "gkdiff.py"), "--backend", "cuda",
           "--seed", str(args.seed), "-n", str(args.n), "-j", str(args.jobs), "--no-minimise"]
    p = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    tail = p.stdout.decode("utf-8", "replace").strip().split("\n")[-1]
    kern, compiles = {}, 0
    for fn in os.listdir(logdir):
        with open(os.path.join(logdir, fn), errors="replace") as f:
            for m in LINE.finditer(f.read()):
                name, kind, ms, nb = m.group(1), m.group(2), float(m.group(3)), int(m.group(4))
                compiles += 1
                k = kern.setdefault(name, {"kind": kind, "ms": ms, "bytes": nb, "n": 0})
                k["ms"] = min(k["ms"], ms)
                k["n"] += 1
    subprocess.run(["rm", "-rf", tmp])
    return {"seed": args.seed, "n": args.n, "gkdiff": tail, "compiles": compiles, "kernels": kern}


def table(run, title):
    kern = run["kernels"]
    kinds = sorted({k["kind"] for k in kern.values()})
    print("%s: seed %d, %d programs (%s); %d NVRTC compiles, %d distinct kernels" % (
        title, run["seed"], run["n"], run["gkdiff"], run["compiles"], len(kern)))
    print("  %-10s %5s %7s | %8s %8s %8s | %9s %9s %11s" % (
        "kind", "kern", "compls", "ms mean", "median", "max", "KB mean", "KB max", "KB total"))
    for kind in kinds + ["all"]:
        ks = [k for k in kern.values() if kind == "all" or k["kind"] == kind]
        ms = [k["ms"] for k in ks]
        nb = [k["bytes"] for k in ks]
        print("  %-10s %5d %7d | %8.1f %8.1f %8.1f | %9.1f %9.1f %11.1f" % (
            kind, len(ks), sum(k["n"] for k in ks), statistics.mean(ms), statistics.median(ms), max(ms),
            statistics.mean(nb) / 1e3, max(nb) / 1e3, sum(nb) / 1e3))
    # what the tester pays: every compile, not only the distinct ones
    tot = sum(k["ms"] * k["n"] for k in kern.values())
    print("  NVRTC time of all compiles (each at its kernel's fastest): %.1f s" % (tot / 1e3))


def compare(old, new):
    ko, kn = old["kernels"], new["kernels"]
    both = sorted(set(ko) & set(kn))
    print("kernels in both runs (same text): %d; only before: %d; only after: %d" % (
        len(both), len(set(ko) - set(kn)), len(set(kn) - set(ko))))
    kinds = sorted({k["kind"] for k in list(ko.values()) + list(kn.values())})
    print("  %-10s | %12s %12s %7s | %10s %10s %7s" % ("kind", "KB before", "KB after", "ratio", "s before",
                                                       "s after", "ratio"))
    for kind in kinds + ["all"]:
        def tot(kk, key):
            return sum(k[key] * (k["n"] if key == "ms" else 1) for k in kk.values() if kind == "all" or k["kind"] == kind)
        bo, bn, mo, mn = tot(ko, "bytes"), tot(kn, "bytes"), tot(ko, "ms"), tot(kn, "ms")
        print("  %-10s | %12.1f %12.1f %7.2f | %10.2f %10.2f %7.2f" % (
            kind, bo / 1e3, bn / 1e3, bn / max(bo, 1), mo / 1e3, mn / 1e3, mn / max(mo, 1e-9)))


# ------------------------------------------------------------ fixed cost

OPTS = [b"--gpu-architecture=sm_90", b"--std=c++17", b"-lineinfo", b"--fmad=false", b"-minimal"]
BARE = 'extern "C" __global__ void k(float *p) { p[threadIdx.x] = 2.0f * p[threadIdx.x] + 1.0f; }\n'


def nvrtc():
    for n in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"):
        try:
            return ctypes.CDLL(n)
        except OSError:
            pass
    sys.exit("compile_cost.py: libnvrtc not found")


def compile_timed(lib, src, headers, extra=()):
    """(wall ms, NVRTC --time rows (file, phase, ms, unit), cubin bytes)."""
    names = [h.encode() for h in headers]
    srcs = [headers[h].encode() for h in headers]
    H = ctypes.c_char_p * max(1, len(names))
    prog = ctypes.c_void_p()
    fd, csv = tempfile.mkstemp(suffix=".csv")
    os.close(fd)
    os.unlink(csv)
    opts = OPTS + [b"--time=" + csv.encode()] + [e.encode() for e in extra]
    O = ctypes.c_char_p * len(opts)
    t0 = time.perf_counter()
    r = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", len(names), H(*srcs), H(*names))
    assert r == 0, r
    r = lib.nvrtcCompileProgram(prog, len(opts), O(*opts))
    ms = (time.perf_counter() - t0) * 1e3
    if r != 0:
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, buf)
        sys.exit("NVRTC failed:\n" + buf.value.decode())
    n = ctypes.c_size_t()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    rows = []
    if os.path.exists(csv):   # NVRTC --time: "file, phase, ms, unit" rows after a header
        rows = [[c.strip() for c in l.split(",")] for l in open(csv) if l.strip()][1:]
        os.unlink(csv)
    return ms, rows, n.value


def fixed(args):
    lib = nvrtc()
    kdir = os.path.join(ROOT, "kernels")
    headers = {f: open(os.path.join(kdir, f)).read() for f in sorted(os.listdir(kdir))
               if f.endswith(".cuh") or f.endswith(".h")}
    gk = find_build(args.build)
    # gk's own trivial map on a loaded x (its text, compiled by the same options)
    t = tempfile.mkdtemp(prefix="compile_cost_")
    subprocess.run([gk, "--backend", "cpu", "-e", 'save("x.npy", rand(1000))'], cwd=t, check=True)
    p = subprocess.run([gk, "--backend", "cpu", "-e", 'x = load("x.npy")', "-e", 'save("y.npy", x * 2 + 1)'],
                       cwd=t, env=dict(os.environ, GK_NVRTC_CHECK="src"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    subprocess.run(["rm", "-rf", t])
    err = p.stderr.decode()
    m = re.search(r"gk-nvrtc: (gk_[0-9a-f]+) \((\w+) group\)\n(.*?)\ngk-nvrtc: ", err, re.S)
    cases = [("no include (bare kernel)", BARE),
             ("#include gk_fused.cuh + bare", '#include "gk_fused.cuh"\n' + BARE),
             ("#include gk_reduce.cuh + bare", '#include "gk_reduce.cuh"\n#include "gk_fused.cuh"\n' + BARE)]
    if m:
        cases.append(("gk map x*2+1 (%s)" % m.group(1), m.group(3).replace(m.group(1), "k")))
    for title, src in cases:
        best = None
        for _ in range(args.reps):
            r = compile_timed(lib, src, headers)
            if best is None or r[0] < best[0]:
                best = r
        ms, rows, nb = best
        print("%-40s %7.1f ms wall, %6d B cubin; %s" % (title, ms, nb, ", ".join("%s %s ms" % (r[1], r[2]) for r in rows)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--build", default=os.environ.get("B", "build"))
    ap.add_argument("--save")
    ap.add_argument("--compare")
    ap.add_argument("--load", help="print a saved run instead of running")
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    if args.fixed:
        fixed(args)
        return 0
    run = json.load(open(args.load)) if args.load else run_batch(args)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(run, f, indent=0, sort_keys=True)
    if args.compare:
        old = json.load(open(args.compare))
        table(old, "before (%s)" % args.compare)
    table(run, "this build" if not args.load else args.load)
    if args.compare:
        compare(old, run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
