#!/usr/bin/env python3
"""The kernels gk ships compiled: `make kernels` (kernels/ship.py).

    python3 kernels/ship.py --gk build/gk --out build/gk-kernels [-j J] [--arch 90] [--list]

A first run of a statement on the GPU waits for NVRTC (0.05-0.7 s a kernel,
NOTES.md "Session 8: shipped kernels").  gk's kernels are keyed by
structure, not size (issue 11), so the kernel of `sum(x)` on a stored f32
vector is the same text for every length in a size class: it can be
compiled once, ahead of time, as torch and CuPy ship theirs.  This script
runs one gk statement for every *standard structure* -- each op on its own
over stored inputs: every elementwise op and cast on every dtype it takes
(array with array, array with a scalar), every reduction, scan, filter,
partition, histogram and the sort family on whole vectors, the row, column
and axis forms on matrices of each row-length class, transposes and
permutes, the one-pass sum-exp primitive -- on the cpu backend with
GK_NVRTC_CHECK=ship, which lowers each group with the CUDA generator,
compiles it with NVRTC for sm_<arch> and writes it under the key the cuda
backend looks up into OUT (runtime/cu_cache.c: cu_ship_dir).  A fused
statement (`x * 2 + 1`, `sum(x * y + 1)`) is not a standard structure and
still compiles on first use.

No GPU is needed, only NVRTC (the CUDA toolkit).  Without NVRTC nothing is
written and the script says so; gk then compiles every kernel on first use,
as before.
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

N = 300007                       # 1-d length (32-bit index class); the sort family also at 1000 and 5000
SORT_NS = (1000, 5000, N)
# matrices: one of each row-length class of the row and column plans (launch.h; 128, 768, 1024, 2048 and
# 8192 fill a row group's packs exactly: a class of their own; 32000 and 65536: the long-row plans of
# 28673-32768 and 57345-65536 elements, gk_rows_plan_cluster_async; 130001 and 200003: gk_rows_smem_long_cs's
# 8 and 16 blocks a row)
MATS = [(100000, 3), (40000, 10), (20000, 32), (16000, 128), (10000, 100), (4000, 300), (2000, 1000),
        (2000, 1024), (4000, 768), (1000, 2048), (400, 5000), (250, 8192), (200, 10000), (100, 20003), (24, 32000),
        (40, 50257), (16, 65536), (20, 100000), (8, 130001), (4, 200003)]
FLOATS, INTS = ("f32", "f64"), ("i32", "i64")
UNARY_F = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "exp", "exp2", "expm1", "floor", "isfinite",
           "isinf", "isnan", "log", "log10", "log1p", "log2", "relu", "round", "rsqrt", "sigmoid", "sign", "sin",
           "sinh", "sqrt", "tan", "tanh"]
UNARY_I = ["abs", "sign", "relu"]
BIN_OPS = ["+", "-", "*", "/", "%", "**", "==", "!=", "<", "<=", ">", ">="]
BIN_FNS = ["maximum", "minimum"]
BIN_F = ["atan2", "hypot"]
CMPS = [">", "<", ">=", "<=", "==", "!="]
REDS = ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin"]
SCAN_OPS = ["", ", max", ", min", ", prod"]


def cast(d, e):
    return "%s(%s)" % (d, e)


def chunks():
    """Lists of gk statements, one gk process each; the first lines make the inputs."""
    out = []

    def vec_inputs(n):
        s = ['seed(11)', 'save("f32.npy", rand(%d) * 2 - 0.5)' % n, 'save("f32b.npy", rand(%d) + 0.25)' % n]
        s += ['save("i32.npy", i32(rand(%d) * 2000 - 1000))' % n, 'save("i32b.npy", i32(rand(%d) * 50 + 1))' % n]
        s += ['save("b.npy", rand(%d) > 0.4)' % n, 'save("bb.npy", rand(%d) > 0.7)' % n]
        s += ['xf32 = load("f32.npy")', 'yf32 = load("f32b.npy")', 'xf64 = f64(load("f32.npy"))',
              'yf64 = f64(load("f32b.npy"))', 'xi32 = load("i32.npy")', 'yi32 = load("i32b.npy")',
              'xi64 = i64(load("i32.npy"))', 'yi64 = i64(load("i32b.npy"))', 'xbool = load("b.npy")',
              'ybool = load("bb.npy")']
        # the f64 / i64 inputs above are pending casts: store them
        s += ['save("f64.npy", xf64)', 'save("f64b.npy", yf64)', 'save("i64.npy", xi64)', 'save("i64b.npy", yi64)',
              'xf64 = load("f64.npy")', 'yf64 = load("f64b.npy")', 'xi64 = load("i64.npy")', 'yi64 = load("i64b.npy")']
        return s

    def arr(e):
        return 'save("o.npy", %s)' % e

    def scal(e):
        return 'print(%s)' % e

    head = vec_inputs(N)
    # elementwise maps
    body = []
    for d in FLOATS:
        x, y = "x" + d, "y" + d
        body += [arr("%s(%s)" % (f, x)) for f in UNARY_F] + [arr("-" + x)]
        body += [arr("%s(%s, %s)" % (f, x, y)) for f in BIN_FNS + BIN_F]
        body += [arr("%s %s %s" % (x, o, y)) for o in BIN_OPS]
        body += [arr("%s %s 0.37" % (x, o)) for o in BIN_OPS] + [arr("0.37 %s %s" % (o, x)) for o in ("-", "/", "**")]
        body += [arr("%s(%s, 0.37)" % (f, x)) for f in BIN_FNS]
        body += [arr("clamp(%s, 0.1, 0.9)" % x), arr("where(xbool, %s, %s)" % (x, y)), arr("where(xbool, %s, 0.37)" % x)]
    for d in INTS:
        x, y = "x" + d, "y" + d
        body += [arr("%s(%s)" % (f, x)) for f in UNARY_I] + [arr("-" + x)]
        body += [arr("%s(%s, %s)" % (f, x, y)) for f in BIN_FNS]
        body += [arr("%s %s %s" % (x, o, y)) for o in BIN_OPS if o != "**"]
        body += [arr("where(xbool, %s, %s)" % (x, y))]
    body += [arr("xbool and ybool"), arr("xbool or ybool"), arr("not xbool"), arr("xbool == ybool"),
             arr("xbool != ybool")]
    for a in FLOATS + INTS + ("bool",):
        for b in FLOATS + INTS + ("bool",):
            if a != b: body.append(arr(cast(b, "x" + a)))
    half = len(body) // 2
    out += [head + body[:half], head + body[half:]]
    # whole-vector reductions, scans, filters, histograms, the one-pass sum-exp
    body = []
    for d in FLOATS + INTS + ("bool",):
        x, y = "x" + d, "y" + d
        num = d != "bool"
        if num:
            body += [scal("%s(%s)" % (r, x)) for r in REDS]
            body += [scal("dot(%s, %s)" % (x, y))]
            body += [arr("scan(%s%s)" % (x, o)) for o in SCAN_OPS] + [arr("exscan(%s%s)" % (x, o)) for o in SCAN_OPS]
        body += [scal("any(%s)" % x), scal("all(%s)" % x), scal("count(%s)" % x)]
        if d in FLOATS:
            body += [scal("norm(%s)" % x), scal("logsumexp(%s)" % x), scal("sum(exp(%s - max(%s)))" % (x, x)),
                     arr("softmax(%s)" % x), arr("logsoftmax(%s)" % x), scal("sum(abs(%s))" % x)]
            body += [arr("hist(%s, 256, 0, 1)" % x), arr("hist(%s, 100)" % x)]
        if d in INTS:
            body += [arr("hist(%s, 256, -1000, 1000)" % x), arr("bincount(%s)" % y)]
        body += [arr("%s[xbool]" % x), arr("partition(%s, xbool)" % x)]
        if num:
            c = "0.37" if d in FLOATS else "3"
            body += [arr("%s[%s %s %s]" % (x, x, o, c)) for o in CMPS]
            body += [arr("partition(%s, %s %s %s)" % (x, x, o, c)) for o in CMPS[:2]]
            body += [arr("%s[%s > %s]" % (x, y, "0.5" if d in FLOATS else "3"))]
    half = len(body) // 2
    out += [head + body[:half], head + body[half:]]
    # the sort family at each length class
    for n in SORT_NS:
        body = []
        for d in FLOATS + INTS + ("bool",):
            x = "x" + d
            body += [arr("sort(%s)" % x), arr("argsort(%s)" % x), arr("unique(%s)" % x)]
            if d != "bool":
                body += [arr("topk(%s, 8)" % x), arr("argtopk(%s, 8)" % x), scal("median(%s)" % x),
                         scal("quantile(%s, 0.3)" % x), arr("searchsorted(sort(%s), %s)" % (x, x))]
        out.append(vec_inputs(n) + body)
    # rows, columns and axes of matrices, one of each row-length class
    for r, c in MATS:
        s = ['seed(12)', 'save("mf32.npy", rand(%d, %d) * 2 - 0.5)' % (r, c), 'mf32 = load("mf32.npy")',
             'save("mf64.npy", f64(mf32))', 'mf64 = load("mf64.npy")',
             'save("mi32.npy", i32(mf32 * 1000))', 'mi32 = load("mi32.npy")']
        for d in ("f32", "f64", "i32"):
            m = "m" + d
            for w in ("rows", "cols"):
                s += [arr("%s(%s(%s))" % (f, w, m)) for f in ("sum", "max", "min", "argmax", "argmin")]
                s += [arr("scan(%s(%s))" % (w, m)), arr("scan(%s(%s), max)" % (w, m))]
                if d != "i32":
                    s += [arr("%s(%s(%s))" % (f, w, m)) for f in ("mean", "var", "std", "norm", "logsumexp",
                                                                  "softmax", "logsoftmax", "layernorm", "rmsnorm")]
            s += [arr("transpose(%s)" % m)]
            if d == "f32":
                s += [arr("sort(rows(%s))" % m), arr("argsort(rows(%s))" % m), arr("topk(rows(%s), %d)" % (m, min(8, c)))]
        out.append(s)
    # 3-d and 4-d: reductions along every axis, permutes
    s = ['seed(13)', 'save("t.npy", rand(64, 96, 80))', 't = load("t.npy")', 'save("t4.npy", rand(4, 32, 24, 20))',
         't4 = load("t4.npy")', 'save("t64.npy", f64(t))', 't64 = load("t64.npy")']
    for v in ("t", "t64"):
        for ax in range(3):
            s += [arr("%s(%s, axis=%d)" % (f, v, ax)) for f in ("sum", "max", "min", "mean", "argmax")]
            s += [arr("softmax(%s, axis=%d)" % (v, ax))]
    for p in ((0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        s.append(arr("permute(t, %d, %d, %d)" % p))
    s += [arr("permute(t4, 0, 2, 3, 1)"), arr("permute(t4, 0, 3, 1, 2)")]
    out.append(s)
    return out


def run_batches(gk, cs, env, jobs, progress):
    """Runs each list of statements in cs as a script in a gk process of its own (jobs at a time) under env.
    Returns [(index, returncode, stderr)]."""
    tmp = tempfile.mkdtemp(prefix="gk_ship_")
    procs, res = [], []
    todo = list(enumerate(cs))
    try:
        while todo or procs:
            while todo and len(procs) < max(1, jobs):
                i, c = todo.pop(0)
                d = os.path.join(tmp, str(i))
                os.makedirs(d)
                with open(os.path.join(d, "ship.gk"), "w") as f: f.write("\n".join(c) + "\n")
                procs.append((i, subprocess.Popen([gk, "--backend", "cpu", "ship.gk"], cwd=d, env=env,
                                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
            i, p = procs.pop(0)
            err = p.communicate()[1].decode(errors="replace")
            res.append((i, p.returncode, err))
            if "gk-nvrtc: skipped" in res[-1][2]:
                for _, q in procs: q.kill()
                return res
            if progress: progress(len(res))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return res


def failed(res):
    bad = [(i, rc, err) for i, rc, err in res
           if rc or "FAILED" in err or "could not write" in err or "cannot lower" in err]
    for i, rc, err in bad:
        print("ship.py: batch %d failed (rc %s):\n%s" % (i, rc, err[-3000:]), file=sys.stderr)
    return bool(bad)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gk", default="build/gk")
    ap.add_argument("--out", default="build/gk-kernels")
    ap.add_argument("--arch", default="90", help="compute capability to compile for (default 90: sm_90)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--list", action="store_true", help="print the statements and exit")
    ap.add_argument("--check", action="store_true",
                    help="run every statement and lower its kernels, compile and write nothing (make test)")
    ap.add_argument("--stmts", help="a file of statements to ship instead of the standard list (tests)")
    a = ap.parse_args()
    cs = [open(a.stmts).read().splitlines()] if a.stmts else chunks()
    if a.list:
        for c in cs: print("\n".join(c))
        return 0
    gk = os.path.abspath(a.gk)
    t0 = time.time()
    if a.check:
        res = run_batches(gk, cs, dict(os.environ, GK_NVRTC_CHECK="lower"), a.jobs, None)
        if failed(res): return 1
        print("ship.py: %d statements of %d batches lowered in %.0f s" % (sum(map(len, cs)), len(cs), time.time() - t0))
        return 0
    out = os.path.abspath(a.out)
    stage = out + ".new"
    shutil.rmtree(stage, ignore_errors=True)
    # incremental: the kernels of an earlier run are reused (a hit marks its
    # entry used), and those no statement asked for again are dropped below
    if os.path.isdir(out): shutil.copytree(out, stage)
    else: os.makedirs(stage)
    for f in os.listdir(stage): os.utime(os.path.join(stage, f), (1, 1))   # unused until a hit touches it
    env = dict(os.environ, GK_NVRTC_CHECK="ship", GK_KERNELS_OUT=stage, GK_SHIP_ARCH=a.arch, GK_CACHE_MAX="0")

    def progress(done):
        sys.stdout.write("\rship.py: %d/%d batches, %d kernels, %.0f s" % (
            done, len(cs), len(os.listdir(stage)), time.time() - t0))
        sys.stdout.flush()
    res = run_batches(gk, cs, env, a.jobs, progress if sys.stdout.isatty() else None)
    if any("gk-nvrtc: skipped" in err for _, _, err in res):
        print("ship.py: NVRTC not found: no kernels shipped (gk compiles them on first use)")
        shutil.rmtree(stage, ignore_errors=True)
        return 0
    if sys.stdout.isatty(): print()
    if failed(res):
        shutil.rmtree(stage, ignore_errors=True)
        return 1
    stale = [f for f in os.listdir(stage) if os.path.getmtime(os.path.join(stage, f)) < 2]
    for f in stale: os.unlink(os.path.join(stage, f))
    shutil.rmtree(out, ignore_errors=True)
    os.rename(stage, out)
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print("ship.py: %d kernels for sm_%s in %s (%.1f MB; %d stale ones dropped) in %.0f s" % (
        len(os.listdir(out)), a.arch, a.out, size / 1e6, len(stale), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
