#!/usr/bin/env python3
"""gk's cpu backend against numpy on the same .npy files (tests/bench/bench_cpu.py).

    python3 tests/bench/bench_cpu.py [--reps N] [--only SUBSTR] [--dir D] [--n N] [--threads T] [--words]
    (make bench-cpu builds libgk.so and libgkpy.so, then runs this)

Writes fresh random inputs as .npy files (x: f32[n], default 10^7, uniform in
[0, 1); m: f32[10000, 1000]; w: f32[1000, 256]; for the day-one words (the
WORDS cases; --words runs only those) t: f32[64, 256, 256], i: i64[n] in
[0, 1000), s: f32[2000, 1000]), loads them into one gk cpu
context with gk's own `load` and into numpy with numpy.load, then per case:
runs the statement once in gk and checks its result against numpy's (float64
where the reference needs it; tolerances below), then times it.  A case's
time is the wall time of `r = EXPR` plus gk_sync (the statement computes
everything it binds; nothing is pending afterwards) inside the one process, no
process start, best of --reps; numpy's is the best of --reps of the same
expression in numpy, with its result materialised (a transpose is copied, as
gk's is).  Prints op, gk ms, numpy ms and numpy/gk (>= 1: gk is as fast or
faster); the exit status is 1 if a check failed.
"""
import argparse, os, sys, tempfile, time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
B = os.environ.get("B", os.path.join(ROOT, "build"))
os.environ.setdefault("GK_LIBRARY", os.path.join(B, "libgk.so"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import gk  # noqa: E402


def np_softmax(m, axis=1):
    e = np.exp(m - m.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_layernorm(m):
    mu = m.mean(axis=1, keepdims=True)
    return (m - mu) / np.sqrt(m.var(axis=1, keepdims=True) + np.float32(1e-5))


# (name, gk expression, numpy function of the arrays, reference in float64 or None, rtol, atol)
CASES = [
    ("sum", "sum(x)", lambda a: a["x"].sum(), lambda a: a["x"].astype(np.float64).sum(), 1e-6, 0),
    ("max", "max(x)", lambda a: a["x"].max(), None, 0, 0),
    ("mean", "mean(x)", lambda a: a["x"].mean(), lambda a: a["x"].astype(np.float64).mean(), 1e-6, 0),
    ("var", "var(x)", lambda a: a["x"].var(), lambda a: a["x"].astype(np.float64).var(), 1e-5, 0),
    ("scan", "scan(x)", lambda a: np.cumsum(a["x"]), lambda a: np.cumsum(a["x"].astype(np.float64)), 1e-5, 1e-3),
    ("softmax(rows(m))", "softmax(rows(m))", lambda a: np_softmax(a["m"]),
     lambda a: np_softmax(a["m"].astype(np.float64)), 1e-5, 1e-9),
    ("layernorm(rows(m))", "layernorm(rows(m))", lambda a: np_layernorm(a["m"]),
     lambda a: np_layernorm(a["m"].astype(np.float64)), 1e-4, 1e-5),
    ("transpose(m)", "transpose(m)", lambda a: np.ascontiguousarray(a["m"].T), None, 0, 0),
    ("m @ w", "m @ w", lambda a: a["m"] @ a["w"], lambda a: a["m"].astype(np.float64) @ a["w"].astype(np.float64),
     1e-5, 1e-4),
    ("sum(x * x + 1)", "sum(x * x + 1)", lambda a: (a["x"] * a["x"] + 1).sum(),
     lambda a: (a["x"].astype(np.float64) ** 2 + 1).sum(), 1e-6, 0),
    ("hist(x, 256, 0, 1)", "hist(x, 256, 0, 1)", lambda a: np.histogram(a["x"], 256, (0, 1))[0], None, 0, 0),
    ("x[x > 0.5]", "x[x > 0.5]", lambda a: a["x"][a["x"] > 0.5], None, 0, 0),
]

# The day-one words (issue 13's): t f32[64, 256, 256], i i64[n] in [0, 1000), s f32[2000, 1000].
WORDS = [
    ("sort(x)", "sort(x)", lambda a: np.sort(a["x"]), None, 0, 0),
    ("argsort(x)", "argsort(x)", lambda a: np.argsort(a["x"], kind="stable"), None, 0, 0),
    ("median(x)", "median(x)", lambda a: np.median(a["x"]), None, 1e-6, 0),
    ("quantile(x, 0.3)", "quantile(x, 0.3)", lambda a: np.quantile(a["x"], 0.3), None, 1e-6, 0),
    ("unique(i)", "unique(i)", lambda a: np.unique(a["i"]), None, 0, 0),
    ("topk(x, 8)", "topk(x, 8)", lambda a: -np.sort(-np.partition(a["x"], -8)[-8:]), None, 0, 0),
    ("sort(rows(s))", "sort(rows(s))", lambda a: np.sort(a["s"], axis=1), None, 0, 0),
    ("sum(t, axis=1)", "sum(t, axis=1)", lambda a: a["t"].sum(axis=1),
     lambda a: a["t"].astype(np.float64).sum(axis=1), 1e-5, 0),
    ("max(t, axis=1)", "max(t, axis=1)", lambda a: a["t"].max(axis=1), None, 0, 0),
    ("sum(cols(s))", "sum(cols(s))", lambda a: a["s"].sum(axis=0), lambda a: a["s"].astype(np.float64).sum(axis=0),
     1e-5, 0),
    ("argmax(x)", "argmax(x)", lambda a: np.argmax(a["x"]), None, 0, 0),
    ("softmax(t, axis=1)", "softmax(t, axis=1)", lambda a: np_softmax(a["t"], 1),
     lambda a: np_softmax(a["t"].astype(np.float64), 1), 1e-5, 1e-9),
    ("x[i]", "x[i]", lambda a: a["x"][a["i"]], None, 0, 0),
    ("bincount(i)", "bincount(i)", lambda a: np.bincount(a["i"]), None, 0, 0),
    ("concat(x, x)", "concat(x, x)", lambda a: np.concatenate([a["x"], a["x"]]), None, 0, 0),
]


def best(fn, reps):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t) * 1e3


def check(name, got, want, ref, rtol, atol):
    """Compares gk's result with the reference (float64 when given, else numpy's own)."""
    want = np.asarray(ref if ref is not None else want)
    got = np.asarray(got)
    if got.shape != want.shape:
        return "%s: shape %s, numpy %s" % (name, got.shape, want.shape)
    if rtol == 0 and atol == 0:
        ok = np.array_equal(got, want)
    else:
        ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
    if not ok:
        d = np.abs(got.astype(np.float64) - want.astype(np.float64))
        return "%s: differs from numpy (max abs diff %g)" % (name, d.max() if d.size else 0)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7, help="timed runs per case (best is reported)")
    ap.add_argument("--only", default=None, help="run the cases whose name contains this")
    ap.add_argument("--dir", default=None, help="folder for the .npy inputs (default: a temporary one)")
    ap.add_argument("--n", type=int, default=10**7, help="elements of x")
    ap.add_argument("--threads", default=None, help="GK_THREADS for gk (default: the machine's)")
    ap.add_argument("--words", action="store_true", help="only the day-one words (sorts, axis reductions, gathers...)")
    args = ap.parse_args()
    if args.threads:
        os.environ["GK_THREADS"] = args.threads
    tmp = None
    d = args.dir
    if d is None:
        tmp = tempfile.TemporaryDirectory(prefix="gk_bench_cpu_")
        d = tmp.name
    rng = np.random.default_rng()
    arrays = {"x": rng.random(args.n, dtype=np.float32),
              "m": rng.random((10000, 1000), dtype=np.float32),
              "w": rng.random((1000, 256), dtype=np.float32) - np.float32(0.5),
              "t": rng.random((64, 256, 256), dtype=np.float32),
              "i": rng.integers(0, 1000, args.n),
              "s": rng.random((2000, 1000), dtype=np.float32)}
    for k, v in arrays.items():
        np.save(os.path.join(d, k + ".npy"), v)
    a = {k: np.load(os.path.join(d, k + ".npy")) for k in arrays}
    failed = 0
    with gk.Context(backend="cpu") as g:
        for k in a:
            g.eval('%s = load("%s")' % (k, os.path.join(d, k + ".npy")))
        g.sync()
        print("gk cpu backend (%s threads) vs numpy %s, best of %d; x f32[%d], m f32[10000, 1000], w f32[1000, 256], "
              "t f32[64, 256, 256], i i64[%d] in [0, 1000), s f32[2000, 1000]"
              % (os.environ.get("GK_THREADS", os.cpu_count()), np.__version__, args.reps, args.n, args.n))
        print("%-22s %10s %10s %9s" % ("op", "gk ms", "numpy ms", "numpy/gk"))
        for name, expr, npf, reff, rtol, atol in (WORDS if args.words else CASES + WORDS):
            if args.only and args.only not in name:
                continue
            stmt = "r = " + expr
            g.eval(stmt)
            g.sync()
            got = g["r"].numpy()
            want = npf(a)
            err = check(name, got, want, reff(a) if reff else None, rtol, atol)
            if err:
                print("FAIL " + err)
                failed += 1
                continue

            def run_gk():
                g.eval(stmt)
                g.sync()
            tg = best(run_gk, args.reps)
            tn = best(lambda: npf(a), args.reps)
            print("%-22s %10.2f %10.2f %9.2f" % (name, tg, tn, tn / tg))
            g.eval("r = 0")
    if tmp:
        tmp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
