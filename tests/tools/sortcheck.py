#!/usr/bin/env python3
"""tests/tools/sortcheck.py: gk's sort family against numpy at the sizes of the
global passes (many tiles: the look-back), every dtype, NaN / -0.0 / +-inf /
ties, pending inputs, slices, rows and columns.

    python3 tests/tools/sortcheck.py [--gk build/gk] [--backend cuda] [--tmp DIR]
        [--dtypes "f32 i32"] [--sizes "2049 1000003"] [--big] [-j N] [--budget S]

One gk process per (dtype, size) runs sort, argsort, topk, argtopk (and
sort of a pending sum, of a slice, of rows, argsort of columns) and saves
each result as .npy; numpy's stable sorts are the reference (topk: a stable
sort of the reversed array, so ties go to the lower index, NaN largest).
Results must match bit for bit (NaN == NaN).  The gk environment passes
through (GK_SORT_* switches pick the kernel paths).  -j runs the dtypes in
parallel; --budget stops starting cases after S seconds (those left are
reported as skipped, not passed).  Prints one line per failure and
'N passed, M failed' last; exit 1 on a failure.  The cpu backend runs it
too (host_sort.c), so it checks itself without a GPU.
"""
import argparse, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def data(rng, n, dt):
    if dt == "bool": return rng.random(n) < 0.3
    if dt in ("i32", "i64"):
        t = np.int32 if dt == "i32" else np.int64
        hi = 2 ** 31 - 1 if dt == "i32" else 2 ** 62
        a = rng.integers(-hi, hi, n, dtype=t)
        a[rng.random(n) < 0.2] = rng.integers(-50, 50, dtype=t)   # ties
        return a
    t = np.float32 if dt == "f32" else np.float64
    a = (rng.standard_normal(n) * 100).astype(t)
    r = rng.random(n)
    a[r < 0.02] = np.nan; a[(r > 0.02) & (r < 0.03)] = -0.0; a[(r > 0.03) & (r < 0.04)] = 0.0
    a[(r > 0.04) & (r < 0.05)] = np.inf; a[(r > 0.05) & (r < 0.06)] = -np.inf
    a[(r > 0.06) & (r < 0.16)] = t(1.5)
    return a


def topk_idx(x, k):
    """Descending, ties by lower index, NaN largest: a stable ascending sort of the reversed array, reversed."""
    n = len(x)
    return np.flip(n - 1 - np.argsort(np.flip(x), kind="stable"))[:k]


def exprs_of(x, n, dt):
    k = n // 2 + 1
    ex = [("sort", "sort(x)", np.sort(x, kind="stable")),
          ("argsort", "argsort(x)", np.argsort(x, kind="stable").astype(np.int64)),
          ("topk", "topk(x, %d)" % k, x[topk_idx(x, k)]),
          ("argtopk", "argtopk(x, %d)" % k, topk_idx(x, k).astype(np.int64))]
    if dt != "bool":
        ex.append(("sort_pending", "sort(x + x)", np.sort(x + x, kind="stable")))
        ex.append(("sort_slice", "sort(x[1:])", np.sort(x[1:], kind="stable")))
    if n % 2 == 1 and n > 4097:
        r = x[: n - 1].reshape(2, (n - 1) // 2)
        ex.append(("sort_rows", "sort(rows(reshape(x[0:%d], 2, %d)))" % (n - 1, (n - 1) // 2), np.sort(r, axis=1, kind="stable")))
        c = x[: n - 1].reshape((n - 1) // 2, 2)
        ex.append(("argsort_cols", "argsort(cols(reshape(x[0:%d], %d, 2)))" % (n - 1, (n - 1) // 2),
                   np.argsort(c, axis=0, kind="stable").astype(np.int64)))
    return ex


def same(out, ref):
    return out.shape == ref.shape and out.dtype == ref.dtype and \
        np.array_equal(out, ref, equal_nan=out.dtype.kind == "f")


def run_dtype(a, dt, t0, say):
    """Every size of one dtype in its own folder; returns (passed, failed, skipped)."""
    rng = np.random.default_rng([a.seed, sum(map(ord, dt))])
    tmp = os.path.join(a.tmp, dt)
    os.makedirs(tmp, exist_ok=True)
    passed = failed = skipped = 0
    for n in a.sizes:
        x = data(rng, n, dt)
        ex = exprs_of(x, n, dt)
        if a.budget and time.time() - t0 > a.budget:
            skipped += len(ex); say("skip %s %d: budget" % (dt, n)); continue
        np.save(os.path.join(tmp, "x.npy"), x)
        for i in range(len(ex)):
            p = os.path.join(tmp, "o%d.npy" % i)
            if os.path.exists(p): os.unlink(p)
        prog = 'x = load("x.npy")\n' + "\n".join('save("o%d.npy", %s)' % (i, e) for i, (_, e, _) in enumerate(ex))
        try:
            p = subprocess.run([a.gk, "--backend", a.backend, "-e", prog], cwd=tmp, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=a.timeout)
            if p.returncode != 0: say("gk rc %s on %s %d: %s" % (p.returncode, dt, n, p.stderr.decode()[-300:]))
        except subprocess.TimeoutExpired:
            say("gk timed out on %s %d" % (dt, n))
        for i, (name, _, ref) in enumerate(ex):
            path, tag = os.path.join(tmp, "o%d.npy" % i), "%s/%s/%d" % (name, dt, n)
            if not os.path.exists(path):
                failed += 1; say("FAIL %s: no output" % tag); continue
            out, ref = np.load(path), np.asarray(ref)
            if same(out, ref): passed += 1; continue
            failed += 1
            bad = np.flatnonzero(~((out == ref) | ((out != out) & (ref != ref)))) if out.shape == ref.shape else [0]
            say("FAIL %s: shape %s/%s dtype %s/%s, %d differ, first at %d" % (tag, out.shape, ref.shape, out.dtype,
                ref.dtype, len(bad), bad[0] if len(bad) else -1))
        say("%s %d: %d passed, %d failed so far" % (dt, n, passed, failed))
    return passed, failed, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gk", default=os.path.join(os.environ.get("B", os.path.join(HERE, "..", "..", "build")), "gk"))
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--tmp", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "gk_sortcheck_%d" % os.getpid()))
    ap.add_argument("--dtypes", default="f32 f64 i32 i64 bool")
    ap.add_argument("--sizes", default=None, help="default 2049 4096 4097 1000003 2^20+1 (--big: and 2^24+3)")
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("-j", type=int, default=1, help="dtypes in parallel")
    ap.add_argument("--budget", type=float, default=0, help="start no case after S seconds")
    ap.add_argument("--timeout", type=float, default=120, help="one gk run's limit")
    a = ap.parse_args()
    a.sizes = [int(v) for v in a.sizes.split()] if a.sizes else \
        [2049, 4096, 4097, 1000003, 2 ** 20 + 1] + ([2 ** 24 + 3] if a.big else [])
    t0 = time.time()
    say = lambda s: print(s, flush=True)
    dts = a.dtypes.split()
    with ThreadPoolExecutor(max(1, a.j)) as ex:
        res = list(ex.map(lambda dt: run_dtype(a, dt, t0, say), dts))
    passed, failed, skipped = (sum(r[i] for r in res) for i in range(3))
    if skipped: print("%d skipped (budget)" % skipped)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
