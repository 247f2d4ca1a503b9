#!/usr/bin/env python3
"""kernel_names: the cheap kernels keep their text (issue 11.3, compact variants).

Heavy element code takes a compact kernel variant (runtime/cuda_lower.c,
COMPACT_BUDGET); GK_COMPACT=0 turns the choice off, which is the kernel text
gk generated before it.  For every statement of tests/bench/bench_gk.py (its
full case list, shapes shrunk to at most ~1.5e5 elements as its local mode
does: the choice depends on the element code and the primitive, not on the
size) and the 24 of
tests/bench/latency.py (their own sizes), on inputs loaded from .npy files
(materialised, as the benchmarks bind them), the kernel names
(GK_NVRTC_CHECK=lower-names: lowered on the cpu backend, a name is a hash of
the text, no NVRTC needed) must be the same with and without GK_COMPACT=0.
So that the check can fail, heavy statements must get other names.
Prints `N passed, M failed`.
"""
import os, re, subprocess, sys, tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
import bench_gk  # noqa: E402
import latency   # noqa: E402

B = os.environ.get("B", "build")
GK = B if os.path.isabs(B) else os.path.join(ROOT, B)
GK = os.path.join(GK, "gk")
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32}
NAME = re.compile(r"^gk-nvrtc: kernel (gk_[0-9a-f]{16}) \((\w+) group\)", re.M)


def statements():
    """(label, {input name: (shape, dtype)}, statement) of both benchmarks."""
    out, seen = [], set()
    for c in bench_gk.cases(False):
        shape = bench_gk.shrink(c.shape)
        ins = {"x": (shape, c.dt)}
        if c.nin == 2:
            ins["y"] = (shape, c.dt)
        src = c.src.format(x="x", y="y")
        key = (src, tuple(shape), c.dt)
        if key not in seen:
            seen.add(key)
            out.append(("bench %s" % c.key, ins, src))
    for name, src in latency.STMTS:
        ins = {"x": ((latency.N,), "f32"), "y": ((latency.N,), "f32"), "xi": ((latency.N,), "i32"),
               "m": ((latency.R, latency.C), "f32"), "w": ((latency.C, 64), "f32")}
        used = {k: v for k, v in ins.items() if re.search(r"\b%s\b" % k, src)}
        out.append(("latency %s" % name, used, src))
    return out


def names(d, prog, compact_off):
    env = dict(os.environ, GK_NVRTC_CHECK="lower-names", GK_THREADS="1")
    env.pop("GK_COMPACT", None)
    if compact_off:
        env["GK_COMPACT"] = "0"
    p = subprocess.run([GK, "--backend", "cpu", "-e", prog], cwd=d, env=env, capture_output=True, text=True,
                       timeout=600)
    return p.returncode, NAME.findall(p.stderr), p.stderr


def main():
    if not os.access(GK, os.X_OK):
        print("kernel_names.py: no gk at %s" % GK)
        return 2
    rng = np.random.default_rng(11)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        files = {}
        progs = []
        for label, ins, src in statements():
            loads = []
            for k, (shape, dt) in sorted(ins.items()):
                f = "%s_%s_%s.npy" % (k, "x".join(map(str, shape)), dt)
                if f not in files:
                    a = rng.random(shape) if dt != "i32" else rng.integers(-1000, 1000, size=shape)
                    np.save(os.path.join(d, f), a.astype(NP[dt]))
                    files[f] = 1
                loads.append('%s = load("%s");' % (k, f))
            # the result is saved, so every kernel of the statement runs
            lhs = src.split("=")[0].strip()
            progs.append((label, " ".join(loads) + " %s; save(\"out.npy\", %s);" % (src, lhs)))
        # heavy statements: must change (else the check above cannot fail)
        heavy = [("heavy var", 'x = load("x_1000003_f32.npy"); s = var(randn(len(x)) % (x + 1)); save("out.npy", s);'),
                 ("heavy scan", 'x = load("x_1000003_f32.npy"); r = scan(sin(x) * rand(len(x)) % 3); save("out.npy", r);'),
                 ("heavy filter", 'x = load("x_1000003_f32.npy"); r = x[randn(len(x)) % x > 0.1]; save("out.npy", r);'),
                 ("heavy map", 'x = load("x_1000003_f32.npy"); r = randn(len(x)) % (x + 1); save("out.npy", r);')]
        for label, prog in progs + heavy:
            rc0, n0, e0 = names(d, prog, True)
            rc1, n1, e1 = names(d, prog, False)
            want_same = not label.startswith("heavy")
            ok = rc0 == 0 and rc1 == 0 and n0 and (n0 == n1) == want_same
            if ok:
                passed += 1
            else:
                failed += 1
                print("FAIL %s: %s\n  GK_COMPACT=0: %s\n  default:      %s%s" % (
                    label, prog, n0, n1, ("\n" + (e0 or e1)[-600:]) if rc0 or rc1 or not n0 else ""))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
