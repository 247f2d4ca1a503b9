#!/usr/bin/env python3
"""The cpu backend's fast paths: bit-identical on any thread count, right against numpy.

    python3 tests/run_threads.py [--seed S] [-v]      (part of make test; B = build dir)

Writes fresh random .npy inputs (seed printed; --seed replays), runs one gk
program over them under GK_THREADS=1, 2 and 7, and with the AVX2 matmul
kernel in place of the AVX-512 one (GK_CPU_ISA=1, on a machine that has
both), each saving every result to a .npz; then checks that every result has
the same bytes under every configuration, and that the first is within
tolerance of numpy in float64 (or, for sorts, gathers, arg- and integer
results, numpy's exact bytes).  The cases are the paths runtime/cpu_fold.c,
runtime/cpu_mm.c, runtime/host_sort.c and cpu.c's views take: whole-array
sum, prod, max, min, mean, var and scan of stored and of pending values
(slices, strided slices), filters, max / min meeting a NaN or only zeros
(the exact fallbacks), row and column reductions, reductions and softmax
along an axis of 3-d arrays, softmax and layernorm over rows of several
widths (a pending matrix too), transposes, sorts (zeros of both signs,
NaN payloads; f32, f64, i32, i64; rows and columns), unique, median,
quantile, argmax / argmin, gathers, concat, bincount, integer histograms,
and matrix products whose k runs over one or several blocks (k a multiple
of 128, whose rows the kernel copies; k in segments; a matrix times a
vector; slices and transposes of pending operands), at the tail sizes 1,
31, 33, 1000003 and 2^20 + 1.
"""
import argparse, os, subprocess, sys, tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.environ.get("B", os.path.join(ROOT, "build"))
GK = os.path.join(B, "gk")

SIZES = [1, 31, 33, 1000003, 2 ** 20 + 1]
ROWS = [(1, 1), (31, 33), (33, 1000), (977, 31), (300, 2049)]          # (rows, columns)
SAVE_MAX = 50
TENS = [(2, 3, 4), (3, 33, 31), (4, 65, 40), (5, 31, 257)]                # 3-d, reduced along an axis
MM = [(1, 1, 1), (31, 33, 17), (33, 300, 257), (1000, 257, 100), (7, 1000, 31), (130, 64, 40),
      (29, 1024, 70), (3, 9500, 65), (250, 1000, 129), (1000, 1000, 1), (1, 1000, 300)]   # (M, K, N)


def f64(a):
    return np.asarray(a, dtype=np.float64)


def np_softmax(m, axis=1):
    e = np.exp(m - m.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def special(rng, a):
    """a with zeros of both signs, infinities and NaNs of several payloads and signs at random places."""
    a = a.copy()
    n = a.size
    k = max(1, n // 50)
    a[rng.integers(0, n, k)] = 0.0
    a[rng.integers(0, n, k)] = -0.0
    a[rng.integers(0, n, k)] = np.inf
    a[rng.integers(0, n, k)] = -np.inf
    u = a.view(np.uint32)
    u[rng.integers(0, n, k)] = (np.uint32(0x7FC00000) | rng.integers(0, 1 << 22, k).astype(np.uint32)
                                | (rng.integers(0, 2, k).astype(np.uint32) << np.uint32(31)))
    return a


def np_layernorm(m):
    return (m - m.mean(axis=1, keepdims=True)) / np.sqrt(m.var(axis=1, keepdims=True) + 1e-5)


def build(d, rng):
    """Inputs written to d; returns the gk program and {name: (reference, rtol, atol)}."""
    src, ref = [], {}

    def case(name, expr, want, rtol=1e-5, atol=0.0):
        src.append("%s = %s" % (name, expr))
        ref[name] = (want, rtol, atol)

    def exact(name, expr, want):   # numpy's bytes (its dtype, its NaN payloads)
        src.append("%s = %s" % (name, expr))
        ref[name] = (np.asarray(want), None, None)

    for i, n in enumerate(SIZES):
        x = rng.random(n, dtype=np.float32)
        xn = x.copy()
        xn[rng.integers(n)] = np.nan
        for k, v in (("x", x), ("xn", xn)):
            np.save(os.path.join(d, "%s%d.npy" % (k, i)), v)
        src.append('x%d = load("%s")' % (i, os.path.join(d, "x%d.npy" % i)))
        src.append('xn%d = load("%s")' % (i, os.path.join(d, "xn%d.npy" % i)))
        src.append("p%d = x%d * 3 - 1" % (i, i))   # pending: every use reads it through a view or a chunk
        X, P = f64(x), f64(x) * 3 - 1
        case("sum%d" % i, "sum(x%d)" % i, X.sum())
        case("sumv%d" % i, "sum(p%d[1:])" % i, P[1:].sum(), atol=1e-6)
        case("sums%d" % i, "sum(x%d[3:])" % i, X[3:].sum(), 1e-6, 1e-6)
        case("maxs%d" % i, "max(x%d[:-1])" % i if n > 1 else "max(x%d)" % i, (X[:-1] if n > 1 else X).max(), 0)
        case("prod%d" % i, "prod(1 + (x%d - 0.5) / 1000)" % i, np.prod(1 + (X - 0.5) / 1000), 1e-4)
        case("max%d" % i, "max(x%d)" % i, X.max(), 0)
        case("minv%d" % i, "min(p%d[::2])" % i, P[::2].min(), 1e-6, 5e-7)   # p rounds in f32
        case("maxn%d" % i, "max(xn%d)" % i, np.nan, 0)
        case("minn%d" % i, "min(xn%d * 2)" % i, np.nan, 0)
        case("maxz%d" % i, "max(x%d * 0)" % i, 0.0, 0)
        case("minz%d" % i, "min(-(x%d * 0))" % i, 0.0, 0)
        case("mean%d" % i, "mean(p%d)" % i, P.mean(), 1e-5, 1e-6)
        case("var%d" % i, "var(x%d)" % i, X.var(), 1e-4, 1e-7)
        case("varv%d" % i, "var(p%d[::3])" % i, P[::3].var(), 1e-4, 1e-7)
        case("scan%d" % i, "scan(x%d)" % i, np.cumsum(X), 1e-5, 1e-3)
        case("scanv%d" % i, "scan(p%d[1:])" % i, np.cumsum(P[1:]), 1e-5, 1e-2)
        p32 = x * np.float32(3) - np.float32(1)
        case("flt%d" % i, "x%d[x%d > 0.5]" % (i, i), x[x > 0.5], 0)
        case("fltv%d" % i, "p%d[p%d > 0]" % (i, i), p32[p32 > 0], 0)
        # the day-one words: sorts (exact bytes: zeros of both signs and NaN
        # payloads where a stable sort puts them), median / quantile, unique,
        # argmax / argmin, gathers, concat, bincount, integer max / min
        xs = special(rng, x - np.float32(0.5))
        np.save(os.path.join(d, "xs%d.npy" % i), xs)
        ii = rng.integers(0, 1000, n)
        np.save(os.path.join(d, "i%d.npy" % i), ii)
        gi = rng.integers(-n, n, n)
        np.save(os.path.join(d, "g%d.npy" % i), gi)
        src.append('xs%d = load("%s"); i%d = load("%s"); g%d = load("%s")' % (
            i, os.path.join(d, "xs%d.npy" % i), i, os.path.join(d, "i%d.npy" % i), i, os.path.join(d, "g%d.npy" % i)))
        exact("srt%d" % i, "sort(xs%d)" % i, np.sort(xs, kind="stable"))
        exact("srtv%d" % i, "sort(p%d[1:])" % i, np.sort(p32[1:], kind="stable"))
        exact("srt64%d" % i, "sort(f64(xs%d))" % i, np.sort(xs.astype(np.float64), kind="stable"))
        exact("srti%d" % i, "sort(i32(g%d))" % i, np.sort(gi.astype(np.int32)))
        exact("srtl%d" % i, "sort(g%d * 3)" % i, np.sort(gi * 3))
        exact("uniq%d" % i, "unique(i%d)" % i, np.unique(ii))
        exact("uniqv%d" % i, "unique(i%d[1:] - 500)" % i, np.unique(ii[1:] - 500))
        case("med%d" % i, "median(x%d)" % i, np.median(X), 1e-6)
        case("qnt%d" % i, "quantile(x%d, 0.3)" % i, np.quantile(X, 0.3), 1e-6)
        exact("amax%d" % i, "argmax(x%d)" % i, np.int64(np.argmax(x)))
        exact("amin%d" % i, "argmin(xs%d)" % i, np.int64(np.argmin(xs)))
        exact("amaxv%d" % i, "argmax(p%d[1:])" % i if n > 1 else "argmax(p%d)" % i, np.int64(np.argmax(p32[1:] if n > 1 else p32)))
        exact("gth%d" % i, "x%d[g%d]" % (i, i), x[gi])
        exact("gthv%d" % i, "p%d[g%d]" % (i, i), p32[gi])
        exact("cat%d" % i, "concat(x%d, p%d, x%d[1:])" % (i, i, i), np.concatenate([x, p32, x[1:]]))
        exact("binc%d" % i, "bincount(i%d)" % i, np.bincount(ii))
        exact("hsti%d" % i, "hist(i%d, 500, 100, 600)" % i, np.histogram(ii, 500, (100, 600))[0])
        exact("imax%d" % i, "max(g%d)" % i, gi.max())
        exact("imin%d" % i, "min(i32(g%d))" % i, np.int32(gi.min()))
    for i, (r, c) in enumerate(ROWS):
        m = rng.random((r, c), dtype=np.float32)
        np.save(os.path.join(d, "m%d.npy" % i), m)
        src.append('m%d = load("%s")' % (i, os.path.join(d, "m%d.npy" % i)))
        src.append("q%d = m%d * 2 + 1" % (i, i))
        M, Q = f64(m), f64(m) * 2 + 1
        case("rmax%d" % i, "max(rows(m%d))" % i, M.max(axis=1), 0)
        case("rsum%d" % i, "sum(rows(q%d))" % i, Q.sum(axis=1))
        case("sm%d" % i, "softmax(rows(m%d))" % i, np_softmax(M), 1e-5, 1e-7)
        case("smv%d" % i, "softmax(rows(q%d))" % i, np_softmax(Q), 1e-5, 1e-7)
        case("ln%d" % i, "layernorm(rows(m%d))" % i, np_layernorm(M), 1e-3, 1e-3)
        if c > 1:
            case("rsums%d" % i, "sum(rows(m%d[:, 1:]))" % i, M[:, 1:].sum(axis=1))
            case("sms%d" % i, "softmax(rows(m%d[1:, 1:]))" % i, np_softmax(M[1:, 1:]), 1e-5, 1e-7)
        case("csum%d" % i, "sum(cols(m%d))" % i, M.sum(axis=0))
        case("cmax%d" % i, "max(cols(q%d))" % i, Q.max(axis=0), 1e-6)   # q rounds in f32
        if r > 1 and c > 1:
            case("cmins%d" % i, "min(cols(m%d[1:, 1:]))" % i, M[1:, 1:].min(axis=0), 0)
        exact("rsrt%d" % i, "sort(rows(m%d))" % i, np.sort(m, axis=1))
        exact("csrt%d" % i, "sort(cols(q%d))" % i, np.sort(m * np.float32(2) + np.float32(1), axis=0))
        case("tr%d" % i, "transpose(m%d)" % i, M.T, 0)
        case("trv%d" % i, "transpose(q%d)[1:, :]" % i, (m * np.float32(2) + np.float32(1)).T[1:, :], 0)
    for i, sh in enumerate(TENS):   # along a middle axis: lines read where they lie
        t = rng.random(sh, dtype=np.float32)
        t.flat[rng.integers(t.size)] = np.nan if i == 2 else t.flat[0]
        np.save(os.path.join(d, "t%d.npy" % i), t)
        src.append('t%d = load("%s"); u%d = t%d * 2 - 1' % (i, os.path.join(d, "t%d.npy" % i), i, i))
        T, U = f64(t), f64(t) * 2 - 1
        case("tsum%d" % i, "sum(t%d, axis=1)" % i, T.sum(axis=1))
        case("tmax%d" % i, "max(t%d, axis=1)" % i, T.max(axis=1), 0)
        case("tminv%d" % i, "min(u%d, axis=0)" % i, U.min(axis=0), 1e-6, 1e-7)
        case("tsm%d" % i, "softmax(t%d, axis=1)" % i, np_softmax(T, 1), 1e-5, 1e-7)
        case("tsmv%d" % i, "softmax(u%d, axis=0)" % i, np_softmax(U, 0), 1e-5, 1e-7)
        case("tamax%d" % i, "argmax(t%d, axis=1)" % i, np.argmax(T, 1), 0)
    for i, (mm, k, nn) in enumerate(MM):
        a = rng.random((mm, k), dtype=np.float32) - np.float32(0.5)
        b = rng.random((k, nn), dtype=np.float32) - np.float32(0.5)
        np.save(os.path.join(d, "a%d.npy" % i), a)
        np.save(os.path.join(d, "b%d.npy" % i), b)
        src.append('a%d = load("%s"); b%d = load("%s")' % (i, os.path.join(d, "a%d.npy" % i), i,
                                                           os.path.join(d, "b%d.npy" % i)))
        A, Bm = f64(a), f64(b)
        tol = 1e-6 * k
        case("mm%d" % i, "a%d @ b%d" % (i, i), A @ Bm, 0, tol)
        if mm > 1:
            case("mmv%d" % i, "(a%d * 2)[1:, :] @ b%d" % (i, i), (A * 2)[1:, :] @ Bm, 0, 2 * tol)
        case("mmt%d" % i, "transpose(transpose(a%d) * 2) @ b%d" % (i, i), (A * 2) @ Bm, 0, 2 * tol)
        case("mmvec%d" % i, "a%d @ b%d[:, %d]" % (i, i, nn - 1), A @ Bm[:, nn - 1], 0, tol)
        if k > 1:
            case("mms%d" % i, "(a%d - 1)[:, 1:] @ b%d[1:, :]" % (i, i), (A - 1)[:, 1:] @ Bm[1:, :], 0, 3 * tol)
    names = list(ref)
    for k in range(0, len(names), SAVE_MAX):   # save takes at most 64 arguments
        src.append('save("@OUT@%d.npz", %s)' % (k // SAVE_MAX, ", ".join(names[k:k + SAVE_MAX])))
    return "\n".join(src) + "\n", ref


def run(prog, out, env):
    e = dict(os.environ, **env)
    p = subprocess.run([GK, "--backend", "cpu", "-"], input=prog.replace("@OUT@", out), text=True,
                       capture_output=True, env=e, timeout=600)
    if p.returncode != 0:
        return "gk failed (%s): %s" % (env, (p.stderr or p.stdout).strip()[-400:])
    return None


def mm_isas():
    """GK_CPU_ISA settings that pick a different kernel on this machine."""
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return []
    return [{"GK_CPU_ISA": "1", "GK_THREADS": "3"}] if " avx512f" in flags and " fma" in flags else []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print("seed %d (replay with --seed %d)" % (seed, seed))
    rng = np.random.default_rng(seed)
    configs = [{"GK_THREADS": "1"}, {"GK_THREADS": "2"}, {"GK_THREADS": "7"}] + mm_isas()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="gk_threads_") as d:
        prog, ref = build(d, rng)
        outs = []
        for i, env in enumerate(configs):
            out = os.path.join(d, "out%d_" % i)
            err = run(prog, out, env)
            if err:
                print("FAIL " + err)
                return 1
            o = {}
            for k in range((len(ref) + SAVE_MAX - 1) // SAVE_MAX):
                o.update(np.load("%s%d.npz" % (out, k)))
            outs.append(o)
        for name, (want, rtol, atol) in ref.items():
            got = outs[0][name]
            bad = None
            for env, o in zip(configs[1:], outs[1:]):
                if o[name].tobytes() != got.tobytes() or o[name].shape != got.shape:
                    bad = "%s differs from GK_THREADS=1 under %s" % (name, env)
                    break
            if bad is None and rtol is None:
                if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
                    bad = "%s: not numpy's bytes (%s %s, numpy %s %s)" % (name, got.dtype, got.shape, want.dtype, want.shape)
            elif bad is None:
                w = np.asarray(want, dtype=np.float64)
                g = got.astype(np.float64)
                if g.shape != w.shape:
                    bad = "%s: shape %s, numpy %s" % (name, g.shape, w.shape)
                elif not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                    bad = "%s: max abs difference %g from numpy" % (name, np.nanmax(np.abs(g - w)))
                elif name.startswith(("maxz", "minz")) and np.signbit(g).any() != name.startswith("minz"):
                    bad = "%s: the zero's sign is %s" % (name, "-" if np.signbit(g).any() else "+")
            if bad:
                print("FAIL " + bad)
                failed += 1
            else:
                passed += 1
                if args.v:
                    print("ok   %s" % name)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
