#!/usr/bin/env python3
"""gk against its peers on the same device tensors (tests/bench/bench_gk.py).

    python3 tests/bench/bench_gk.py [--quick] [--sweep] [--only SUBSTR] [--budget S] [--no-compile] [--part I/N] [--rows RxC,...]
    python3 tests/bench/bench_gk.py --latency [latency.py options]   (first-run latency: tests/bench/latency.py)
    (make bench builds libgk.so, libgkbench.so and the CUB peer, then runs this)

Every input is a materialised device array made by torch and handed to gk
through DLPack (gk_from_dlpack: no copy), so gk and every peer read the same
bytes.  A guard fails the case (and the run's exit status) if any gk input is
a lazy source: each input variable must be materialised (gk_vars: not
"pending") and the plan gk prints for the case's kernels (the "plan" option)
must hold no rand/randn/iota node and must read at least one input.

Per case: inputs past the 50 MB L2 (small shapes rotate among several input
sets); gk's output checked against a reference (float64 on upcast inputs, or
exact), then poisoned (NaN written through DLPack into gk's buffer, the
variable unset) and checked again on the next input set, so a kernel that
writes nothing fails; the card is let settle (a 64 MB copy probe repeated until
it runs at the speed it had at the start: after torch.cuda.empty_cache every
kernel ran up to 20% slower for milliseconds); then timed, half of gk's runs
before the peers and half after them (one profile session: a drift of the card
within the case weighs on both sides).  gk kernel time: GK_PROFILE=2 (CUDA
events around every launch; per kernel the median of the timed launches,
summed over the case's kernels; every launch's time kept in bench.json,
times_us).  Peers on the same tensors: torch eager and torch.compile
(Inductor) with CUDA events around the op; CUB (tests/bench/cub_peer.cu:
DeviceReduce, DeviceScan, DeviceSelect::If, DeviceHistogram::HistogramEven)
and cudaMemcpy D2D (the copy ceiling) through ctypes; each peer's output is
checked too.  Every side's timed calls are queued back to back after one
synchronize (gk's steps, torch's ops, CUB's and the copy's calls alike), so
that each pair of events brackets the kernels and not the host's launch gap in
front of a kernel on an idle card.  End to end: host wall clock around step +
sync (gk, in a session without GK_PROFILE) or the call + synchronize (torch),
median of >= 20; `sum` of 1024 elements through gk_step + gk_get in C
(tests/bench/bench_gk.c).  GB/s counts the fewest bytes (inputs read once,
outputs written once).  Prints the table (op, shape, gk, peer, ratio,
target, met?) and writes $OUT/bench.json and $OUT/bench.txt.

With no GPU (or --local) it runs the same cases, shrunk, on gk's cpu backend
with numpy as the peer: a test of the driver, not a measurement.
"""
import argparse, ctypes, json, math, os, platform, statistics, subprocess, sys, time, traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gkc

L2 = 50 << 20
N28 = 1 << 28
N8 = 10 ** 8 + 3
ROWS = [(65536, 1024), (32768, 768), (4096, 50257), (8192, 8192), (1024, 65536), (1048576, 128), (262144, 32),
        (2000000, 10)]
ROWS_Q = [(65536, 1024), (4096, 50257), (262144, 32)]
COLS = [(8192, 8192), (4096, 50257)]
ROWS_SWEEP = [(4096, 32000), (4096, 128256), (2048, 151936), (8, 128256), (1, 1000003), (16384, 4096), (1000, 1000),
              (100000, 100), (8191, 8193), (65537, 33), (3, 1000003)]
CUB = {"copy": 0, "sum": 1, "max": 2, "min": 3, "argmax": 4, "scan": 5, "select": 6, "hist": 7, "sort": 8}
DTC = {"f32": 0, "f64": 1, "i32": 2}
SIZE = {"bool": 1, "i32": 4, "i64": 8, "f32": 4, "f64": 8}
TOL = {"f32": 1e-5, "f64": 1e-12, "i32": 0}

class Case:
    def __init__(self, op, fam, shape, dt, src, peer, nin=1, tol=None, ref="up", cub=None, target=("torch", 1.0),
                 compile=False, kind="rand"):
        self.op, self.fam, self.shape, self.dt, self.src, self.peer = op, fam, tuple(shape), dt, src, peer
        self.nin, self.ref, self.cub, self.target, self.compile, self.kind = nin, ref, cub, target, compile, kind
        self.tol = TOL[dt] if tol is None else tol
        self.key = "%s %s %s" % (op, "x".join(map(str, self.shape)), dt)

def cases(quick):
    cs = []
    ns = [N28] if quick else [N28, N8]
    for n in ns:
        first = n == N28
        for dt in (["f32", "f64", "i32"] if first or not quick else ["f32"]):
            if quick and dt != "f32" and n != N28: continue
            cs.append(Case("map", "1d", [n], dt, "r = {x} * 2 + 1", "map2x1", tol=0, ref="same", cub="copy",
                           target=("copy", 0.95), compile=dt == "f32"))
            for op in ("sum", "max", "min", "argmax"):
                if quick and dt != "f32" and op not in ("sum",): continue
                cs.append(Case(op, "1d", [n], dt, "r = %s({x})" % op, op,
                               tol=(0 if op != "sum" else None), ref="argmax" if op == "argmax" else
                               ("same" if op in ("max", "min") else "up"), cub=op, target=("cub", 1.0),
                               compile=op == "sum" and dt == "f32" and first))
            if dt != "i32":
                cs.append(Case("norm", "1d", [n], dt, "r = norm({x})", "norm", cub="sum", target=("cub_gbs", 1.0)))
                cs.append(Case("dot", "1d", [n], dt, "r = dot({x}, {y})", "dot", nin=2, cub="sum",
                               target=("cub_gbs", 1.0)))
            if not quick or dt == "f32":
                cs.append(Case("scan", "1d", [n], dt, "r = scan({x})", "scan", cub="scan", target=("cub", 1.0),
                               tol=(1e-4 if dt == "f32" else 1e-10 if dt == "f64" else 0), compile=dt == "f32" and first))
        cs.append(Case("filter", "1d", [n], "f32", "r = {x}[{x} > 0.5]", "filter", tol=0, ref="same", cub="select",
                       target=("cub", 1.0)))
        cs.append(Case("hist", "1d", [n], "f32", "r = hist({x}, 256, 0, 1)", "hist", tol=-1e-6, ref="hist",
                       cub="hist", target=("cub", 1.0)))
        cs.append(Case("sumexp", "1d", [n], "f32", "r = sum(exp({x} - max({x})))", "sumexp", target=("self_sum", 0.9),
                       compile=first))
        cs.append(Case("logsumexp", "1d", [n], "f32", "r = logsumexp({x})", "logsumexp", target=("self_sum", 0.9),
                       compile=first and not quick))
        if first:
            cs.append(Case("sum_xy1", "1d", [n], "f32", "r = sum({x} * {y} + 1)", "sum_xy1", nin=2, compile=True))
            if not quick:
                cs.append(Case("mean", "1d", [n], "f32", "r = mean({x})", "mean"))
                cs.append(Case("var", "1d", [n], "f32", "r = var({x})", "var"))
    row_ops = [("softmax", "softmax_rows", "softmax(rows({x}))"), ("logsoftmax", "logsoftmax_rows", "logsoftmax(rows({x}))"),
               ("layernorm", "layernorm_rows", "layernorm(rows({x}))"), ("rmsnorm", "rmsnorm_rows", "rmsnorm(rows({x}))"),
               ("rowsum", "sum_rows", "sum(rows({x}))"), ("rowmax", "max_rows", "max(rows({x}))")]
    if quick: row_ops = [row_ops[0], row_ops[2], row_ops[4]]
    for shape in (ROWS_Q if quick else ROWS):
        for op, peer, src in row_ops:
            cs.append(Case(op, "rows", shape, "f32", "r = " + src, peer, tol=(0 if op == "rowmax" else None),
                           ref="same" if op == "rowmax" else "up", cub="copy",
                           target=("torch+copy", 1.0, 0.85) if shape[1] >= 256 else ("torch", 1.0),
                           compile=op in ("softmax", "layernorm", "rmsnorm", "rowsum")))
    col_ops = [("colsum", "sum_cols", "sum(cols({x}))", None), ("colmax", "max_cols", "max(cols({x}))", 0),
               ("rowscan", "scan_rows", "scan(rows({x}))", 1e-5), ("colscan", "scan_cols", "scan(cols({x}))", 1e-5)]
    if quick: col_ops = [col_ops[0], col_ops[2]]
    for shape in (COLS[:1] if quick else COLS):
        for op, peer, src, tol in col_ops:
            cs.append(Case(op, "cols", shape, "f32", "r = " + src, peer, tol=tol, ref="same" if tol == 0 else "up",
                           compile=op != "colmax"))
    # a middle axis of a 3-d array (issue 13: >= 1.0x torch on 64x1024x1024, axis 1)
    for op, peer, src, tol in ([("sum_axis1", "sum_axis1", "sum({x}, axis=1)", None),
                                ("max_axis1", "max_axis1", "max({x}, axis=1)", 0)] if not quick else []):
        cs.append(Case(op, "axis", (64, 1024, 1024), "f32", "r = " + src, peer, tol=tol, ref="same" if tol == 0 else "up",
                       target=("torch", 1.0), compile=op == "sum_axis1"))
    moves = [("transpose", (8191, 8193), "transpose({x})", "transpose"),
             ("transpose", (16384, 16384), "transpose({x})", "transpose"),
             ("transpose", (1000003, 33), "transpose({x})", "transpose"),
             ("transpose", (4096, 50257), "transpose({x})", "transpose"),
             ("permute201", (511, 257, 129), "permute({x}, 2, 0, 1)", "perm201"),
             ("nchw_nhwc", (32, 256, 56, 56), "permute({x}, 0, 2, 3, 1)", "nchw_nhwc"),
             ("nhwc_nchw", (32, 56, 56, 256), "permute({x}, 0, 3, 1, 2)", "nhwc_nchw")]
    if quick: moves = [moves[0], moves[5]]
    for op, shape, src, peer in moves:
        cs.append(Case(op, "move", shape, "f32", "r = " + src, peer, tol=0, ref="same", cub="copy",
                       target=("copy", 0.8), compile=op != "transpose" or shape == (8191, 8193)))
    # sort family (issue 13): targets >= 1.0x torch.sort / torch.topk; CUB DeviceRadixSort::SortKeys beside the 1-d sorts
    sorts = [("sort", "1d", [N28], "r = sort({x})", "sort", "sort"),
             ("argsort", "1d", [1 << 26], "r = argsort({x})", "argsort", None),
             ("sort", "rows", (8192, 8192), "r = sort(rows({x}))", "sort_rows", None)]
    if quick: sorts = sorts[:1]
    for op, fam, shape, src, peer, cub in sorts:
        cs.append(Case(op, fam, shape, "f32", src, peer, tol=0, ref="same", cub=cub, target=("torch", 1.0)))
    if not quick: cs.append(Case("sort", "1d", [N28], "i32", "r = sort({x})", "sort", tol=0, ref="same", cub="sort"))
    for k in ((1, 8, 64) if not quick else (8,)):
        cs.append(Case("topk%d" % k, "rows", (4096, 50257), "f32", "r = topk(rows({x}), %d)" % k, "topk%d_rows" % k,
                       tol=0, ref="same", target=("torch", 1.0)))
    return cs

def sweep_cases():
    """--sweep: shapes the issue does not name (its check times "other shapes" too): odd 1-D sizes (one in
    the L2), LLM vocabularies, few and single long rows, square and odd rows, narrow and wide columns, odd
    transposes.  Same targets as the named families."""
    cs = []
    for n in (1000003, (1 << 20) + 1, 30000001):
        cs.append(Case("map", "1d", [n], "f32", "r = {x} * 2 + 1", "map2x1", tol=0, ref="same", cub="copy",
                       target=("copy", 0.95)))
        for op in ("sum", "max", "argmax"):
            cs.append(Case(op, "1d", [n], "f32", "r = %s({x})" % op, op, tol=(0 if op != "sum" else None),
                           ref="argmax" if op == "argmax" else ("same" if op == "max" else "up"), cub=op,
                           target=("cub", 1.0)))
        cs.append(Case("scan", "1d", [n], "f32", "r = scan({x})", "scan", cub="scan", target=("cub", 1.0), tol=1e-4))
        cs.append(Case("filter", "1d", [n], "f32", "r = {x}[{x} > 0.5]", "filter", tol=0, ref="same", cub="select",
                       target=("cub", 1.0)))
        cs.append(Case("sumexp", "1d", [n], "f32", "r = sum(exp({x} - max({x})))", "sumexp", target=("self_sum", 0.9)))
    for dt in ("f64", "i32"):
        cs.append(Case("sum", "1d", [30000001], dt, "r = sum({x})", "sum", cub="sum", target=("cub", 1.0),
                       tol=(0 if dt == "i32" else None)))
    row_ops = [("softmax", "softmax_rows", "softmax(rows({x}))"), ("logsoftmax", "logsoftmax_rows", "logsoftmax(rows({x}))"),
               ("layernorm", "layernorm_rows", "layernorm(rows({x}))"), ("rmsnorm", "rmsnorm_rows", "rmsnorm(rows({x}))"),
               ("rowsum", "sum_rows", "sum(rows({x}))"), ("rowmax", "max_rows", "max(rows({x}))")]
    for shape in ROWS_SWEEP:
        for op, peer, src in row_ops:
            cs.append(Case(op, "rows", shape, "f32", "r = " + src, peer, tol=(0 if op == "rowmax" else None),
                           ref="same" if op == "rowmax" else "up", cub="copy",
                           target=("torch+copy", 1.0, 0.85) if shape[1] >= 256 else ("torch", 1.0)))
    for shape in ((100000, 1000), (1000, 100000), (1000003, 3), (33, 1000003)):
        for op, peer, src, tol in (("colsum", "sum_cols", "sum(cols({x}))", None), ("colmax", "max_cols", "max(cols({x}))", 0),
                                   ("rowscan", "scan_rows", "scan(rows({x}))", 1e-5),
                                   ("colscan", "scan_cols", "scan(cols({x}))", 1e-5)):
            cs.append(Case(op, "cols", shape, "f32", "r = " + src, peer, tol=tol, ref="same" if tol == 0 else "up"))
    for op, shape, src, peer in (("transpose", (3000, 5000), "transpose({x})", "transpose"),
                                 ("transpose", (12345, 6789), "transpose({x})", "transpose"),
                                 ("transpose", (3, 1000003), "transpose({x})", "transpose"),
                                 ("transpose", (1000003, 3), "transpose({x})", "transpose"),
                                 ("nchw_nhwc", (64, 128, 28, 28), "permute({x}, 0, 2, 3, 1)", "nchw_nhwc"),
                                 ("nhwc_nchw", (64, 28, 28, 128), "permute({x}, 0, 3, 1, 2)", "nhwc_nchw")):
        cs.append(Case(op, "move", shape, "f32", "r = " + src, peer, tol=0, ref="same", cub="copy",
                       target=("copy", 0.8)))
    # session 26: the other dtypes and reductions (f64 and i32 rows, columns and scans; row argmax, min,
    # mean, var; 1-d f64 / i32 at odd sizes; f64 and i32 transposes; sorts at an odd size)
    for n in (1000003, 30000001):
        for dt in ("f64", "i32"):
            for op in ("max", "min", "argmax"):
                cs.append(Case(op, "1d", [n], dt, "r = %s({x})" % op, op, tol=0,
                               ref="argmax" if op == "argmax" else "same", cub=op, target=("cub", 1.0)))
            cs.append(Case("scan", "1d", [n], dt, "r = scan({x})", "scan", cub="scan", target=("cub", 1.0),
                           tol=1e-10 if dt == "f64" else 0))
            cs.append(Case("map", "1d", [n], dt, "r = {x} * 2 + 1", "map2x1", tol=0, ref="same", cub="copy",
                           target=("copy", 0.95)))
        cs.append(Case("mean", "1d", [n], "f32", "r = mean({x})", "mean"))
        cs.append(Case("var", "1d", [n], "f32", "r = var({x})", "var"))
    for shape in ((65536, 1024), (4096, 50257), (8191, 8193), (1000000, 10)):
        for op, peer, src, tol in (("rowargmax", "argmax_rows", "argmax(rows({x}))", 0),
                                   ("rowmin", "min_rows", "min(rows({x}))", 0),
                                   ("rowmean", "mean_rows", "mean(rows({x}))", None),
                                   ("rowvar", "var_rows", "var(rows({x}))", None)):
            cs.append(Case(op, "rows", shape, "f32", "r = " + src, peer, tol=tol, ref="same" if tol == 0 else "up",
                           cub="copy", target=("torch+copy", 1.0, 0.85) if shape[1] >= 256 else ("torch", 1.0)))
    for dt in ("f64", "i32"):
        for shape in ((4096, 4096), (32768, 1000), (1000, 32769)):
            row_dt = [("rowsum", "sum_rows", "sum(rows({x}))", None), ("rowmax", "max_rows", "max(rows({x}))", 0),
                      ("colsum", "sum_cols", "sum(cols({x}))", None), ("colmax", "max_cols", "max(cols({x}))", 0),
                      ("rowscan", "scan_rows", "scan(rows({x}))", None), ("colscan", "scan_cols", "scan(cols({x}))", None)]
            if dt == "f64":
                row_dt += [("softmax", "softmax_rows", "softmax(rows({x}))", None),
                           ("layernorm", "layernorm_rows", "layernorm(rows({x}))", None)]
            for op, peer, src, tol in row_dt:
                t = 0 if dt == "i32" else tol
                rowfam = op.startswith("row") or op in ("softmax", "layernorm")
                cs.append(Case(op, "rows" if rowfam else "cols", shape, dt, "r = " + src, peer, tol=t,
                               ref="same" if t == 0 else "up", cub="copy" if rowfam else None,
                               target=("torch+copy", 1.0, 0.85) if rowfam and op not in ("rowscan",) else ("torch", 1.0)))
        cs.append(Case("transpose", "move", (4097, 4095), dt, "r = transpose({x})", "transpose", tol=0, ref="same",
                       cub="copy", target=("copy", 0.8)))
    for dt in ("f32", "i32"):
        cs.append(Case("sort", "1d", [1000003], dt, "r = sort({x})", "sort", tol=0, ref="same", cub="sort"))
    cs.append(Case("argsort", "1d", [1000003], "f32", "r = argsort({x})", "argsort", tol=0, ref="same"))
    return cs

def shrink(shape):
    """The local (cpu backend) version of a shape: at most ~1.5e5 elements, odd sizes kept odd."""
    shape = list(shape)
    while math.prod(shape) > 150000:
        i = max(range(len(shape)), key=lambda k: shape[k])
        shape[i] = max(1, shape[i] // 4 + (shape[i] % 2))
    return tuple(shape)

def median(ts):
    return statistics.median(ts) if ts else None

# --------------------------------------------------------------- one case

class Ctx:
    def __init__(self, a):
        self.args = a
        self.P = None
        self.lib = None
        self.cub = None
        self.backend = "cuda"
        self.t0 = time.time()
        self.failures = []
        self.probe = None   # (src, dst, base_us): see settle()
        self.rebased = []   # the probe's new base_us each time a case waited 2 s in vain

    def elapsed(self):
        return time.time() - self.t0

PROBE_N = 16 << 20   # the settle probe: a copy of 64 MB (past the L2)
SETTLE_MAX_S = 2.0   # the longest a case waits for the card

def probe_us(cx):
    """The settle probe once: the median of 3 device copies of 64 MB, CUDA events."""
    src, dst = cx.probe[0], cx.probe[1]
    return median(cx.P.time_events(lambda: dst.copy_(src), [()], 0, 3))

def settle(cx):
    """Waits until the card runs at its own speed again: probes until one runs within 5 % of the
    speed measured at the start (at most SETTLE_MAX_S, 2 s).  After the memory cache is emptied
    (torch.cuda.empty_cache, every 8 cases) and new inputs allocated, every kernel -- gk's and the
    peers' alike -- ran up to 20 % slower for several milliseconds (session 22: per-launch times,
    the first half of gk's runs and torch eager slow, torch.compile and the second half not), the
    driver's work on the freed memory.  Returns (ms waited, probes run)."""
    if cx.probe is None: return None, 0
    t0 = time.perf_counter()
    n = 0
    while True:
        n += 1
        us = probe_us(cx)
        if us <= 1.05 * cx.probe[2]: break
        if time.perf_counter() - t0 > SETTLE_MAX_S:
            # the card's speed changed for good (clocks, heat): this is its speed now, so that every
            # later case does not wait the 2 s too
            cx.probe = cx.probe[:2] + (us,)
            cx.rebased.append(round(us, 2))
            break
    return round((time.perf_counter() - t0) * 1e3, 2), n

def reference(c, P, ins):
    fn = getattr(P, c.peer)
    if c.ref == "same": return fn(*ins)
    if c.ref == "argmax": return P.argmax_ref(ins[0])
    if c.ref == "hist": return P.hist_ref(ins[0])
    return fn(*[P.up(a) for a in ins])

def nbytes_of(a):
    return a.numel() * a.element_size() if hasattr(a, "numel") else a.nbytes

def cub_times(cx, algo, dtc, xs, out, out2, n, nbins, lo, hi, warm, reps):
    """The CUB or copy peer's µs a call: warm + reps calls queued back to back (cubp_times), the i-th on
    xs[i % len(xs)], CUDA events around each, as torch's ops (P.time_events) and gk's steps are timed;
    the warm-up's times dropped."""
    P = cx.P
    ins = (ctypes.c_void_p * len(xs))(*[P.ptr(a) for a in xs])
    us = (ctypes.c_double * (warm + reps))()
    ptr = lambda a: ctypes.c_void_p(P.ptr(a)) if a is not None else None
    rc = cx.cub.cubp_times(algo, dtc, ins, len(xs), ptr(out), ptr(out2), n, nbins, lo, hi, warm + reps, us)
    if rc: raise RuntimeError("cubp_times(%d) failed: %d" % (algo, rc))
    return list(us)[warm:]

def cub_peer(cx, c, sets, refs, reps, warm):
    """Times the CUB peer (or cudaMemcpy of the inputs' bytes for 'copy'); checks its output first."""
    P, lib = cx.P, cx.cub
    x = sets[0][0]
    n = x.numel()
    algo = CUB[c.cub]
    dt = c.dt
    run = lib.cubp_run
    if algo == 0:
        nb = sum(nbytes_of(a) for a in sets[0])
        dst = P.empty(nb // 4, "f32")
        def once(a, d): return run(0, 0, ctypes.c_void_p(P.ptr(a)), ctypes.c_void_p(P.ptr(d)), None, nb, 0, 0.0, 0.0)
        ok, err = True, "copy"
        t = once(x, dst)
        if t < 0: raise RuntimeError("cudaMemcpy failed: %d" % t)
        P.sync()
        same = bool((dst.view(x.dtype)[:n].reshape(x.shape) == x).all().item()) if c.nin == 1 else True
        ts = cub_times(cx, 0, 0, [s[0] for s in sets[1:] + sets[:1]], dst, None, nb, 0, 0.0, 0.0, warm, reps)
        return {"name": "cudaMemcpy", "us": median(ts), "ok": same, "err": "copy of the input bytes",
                "bytes": 2 * nb}
    odt = {"sum": "i64" if dt == "i32" else dt, "max": dt, "min": dt, "argmax": dt,
           "scan": "i64" if dt == "i32" else dt, "select": "f32", "hist": "i32", "sort": dt}[c.cub]
    nout = {"scan": n, "select": n, "hist": 256, "sort": n}.get(c.cub, 1)
    out = P.empty(nout, odt)
    out2 = P.empty(1, "i64")
    def once(a):
        return run(algo, DTC[dt], ctypes.c_void_p(P.ptr(a)), ctypes.c_void_p(P.ptr(out)), ctypes.c_void_p(P.ptr(out2)),
                   n, 256, 0.5 if c.cub == "select" else 0.0, 1.0)
    P.poison(out); P.poison(out2); P.sync()
    t = once(x)
    if t < 0: raise RuntimeError("CUB %s failed: %d" % (c.cub, t))
    P.sync()
    # check against the case's reference (for norm/dot, CUB's plain sum against torch's)
    if c.op in ("norm", "dot"):
        got, ref, tol = out[0], P.up(x).sum(), TOL[dt]
    elif c.cub == "argmax":
        got, ref, tol = out2[0], refs[0], 0
    elif c.cub == "select":
        k = int(out2[0].item())
        got, ref, tol = out[:k], refs[0], 0
    elif c.cub == "hist":
        got, ref, tol = out, refs[0], c.tol
    elif c.cub in ("scan", "sort"):
        got, ref, tol = out.reshape(refs[0].shape), refs[0], c.tol
    else:
        got, ref, tol = out.reshape(refs[0].shape), refs[0], c.tol
    ok, err = P.compare(got, ref, tol)
    ts = cub_times(cx, algo, DTC[dt], [s[0] for s in sets], out, out2, n, 256, 0.5 if c.cub == "select" else 0.0, 1.0,
                   warm, reps)
    inb = nbytes_of(x)
    name = {"sum": "CUB Sum", "max": "CUB Max", "min": "CUB Min", "argmax": "CUB ArgMax", "scan": "CUB InclusiveSum",
            "select": "CUB Select::If", "hist": "CUB HistogramEven", "sort": "CUB RadixSort::SortKeys"}[c.cub]
    outb = {"scan": n * SIZE[odt], "select": (int(out2[0].item()) * 4 + 8), "hist": 256 * 4,
            "sort": n * SIZE[odt]}.get(c.cub, SIZE[odt])
    return {"name": name, "us": median(ts), "ok": ok, "err": err, "bytes": inb + outb}

def gk_check(g, P, ref, tol, name="r"):
    """Reads gk's result through DLPack, compares, poisons it, unsets it: (ok, err, data pointer)."""
    got = P.from_capsule(g.take(name))
    ok, err = P.compare(got, ref, tol)
    ptr = P.ptr(got)
    P.poison(got)
    P.sync()
    del got
    g.unset(name)
    return ok, err, ptr

def peers(cx, c, row, sets, refs, reps, warm):
    """torch eager, torch.compile and CUB / copy on the case's tensors, into row."""
    a, P = cx.args, cx.P
    fn = getattr(P, c.peer)
    try:
        out = fn(*sets[0]); P.sync()
        ok, err = P.compare(out, refs[0], c.tol)
        del out
        row["eager_ok"], row["eager_err"] = ok, err
        row["eager_us"] = median(P.time_events(fn, sets, warm, reps))
        row["eager_e2e_us"] = median(P.time_wall(fn, sets, warm, reps))
    except Exception as e:
        row["eager_error"] = "%s: %s" % (type(e).__name__, e)
    if c.compile and P.compiled and not a.no_compile and cx.elapsed() < 0.7 * a.budget:
        try:
            t0 = time.time()
            cf = P.compiled(fn)
            out = cf(*sets[0]); P.sync()
            row["compile_s"] = round(time.time() - t0, 2)
            ok, err = P.compare(out, refs[0], c.tol)
            del out
            row["compile_ok"], row["compile_err"] = ok, err
            row["compile_us"] = median(P.time_events(cf, sets, warm, reps))
        except Exception as e:
            row["compile_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
    if c.cub and cx.cub:
        try:
            row["cub"] = cub_peer(cx, c, sets, refs, reps, warm)
        except Exception as e:
            row["cub_error"] = "%s: %s" % (type(e).__name__, e)

def run_case(cx, c):
    a, P = cx.args, cx.P
    reps, warm = a.reps, 3
    shape = c.shape if not a.local else shrink(c.shape)
    row = {"op": c.op, "family": c.fam, "shape": list(shape), "dtype": c.dt, "gk_src": c.src.format(x="x", y="y")}
    set_bytes = c.nin * math.prod(shape) * SIZE[c.dt]
    K = 1 if a.local else min(8, max(1, math.ceil(4 * L2 / set_bytes)))
    row["input_sets"] = K
    sets = [[P.make(c.kind, shape, c.dt) for _ in range(c.nin)] for _ in range(K)]
    P.sync()
    refs = [reference(c, P, s) for s in sets[:2]]
    P.sync()
    row["settle_ms"], row["settle_probes"] = settle(cx)
    # ---- gk: guard, check, poison, check again, time -- in two halves, one before the peers and one
    # after them, in one GK_PROFILE session (its medians span both), so that a drift of the card's
    # state within the case (clocks, the pause of torch.compile's compile) weighs on gk and the peers
    # alike
    g = gkc.Gk(cx.lib, cx.backend, profile=2)
    prof = ""
    h1 = reps // 2   # gk's runs timed before the peers (report.py's halves split there too)
    def gk_time(stmts, i0, n):
        # the steps queued back to back, as the peers' calls are timed (P.time_events, cub_times):
        # each launch's events then bracket its kernel, not the host's launch gap in front of a
        # kernel on an idle card (session 24: that gap, 1-4 µs, was in gk's times and not torch's)
        P.sync()
        for i in range(i0, i0 + n): g.step(stmts[i % K]); g.flush()   # computed, not waited for
        g.sync()
    try:
        stmts = gk_bind(g, P, c, sets)
        vs = g.vars()
        pending = [v for v in vs if vs[v][2] == "pending"]
        plan = g.plan_of(lambda: (g.step(stmts[0]), g.sync()))
        lazy = gkc.lazy_sources(plan)
        kins = gkc.kernel_inputs(plan)
        guard = []
        if pending: guard.append("inputs not materialised: %s" % pending)
        if lazy: guard.append("lazy sources in the plan: %s" % lazy)
        if not any(kins): guard.append("no kernel reads an input")
        row["plan"] = plan
        row["guard"] = "ok" if not guard else "; ".join(guard)
        if guard:
            cx.failures.append("%s: guard: %s" % (c.key, row["guard"]))
            return row
        rv = g.vars()["r"]
        row["gk_out"] = "%s%s" % (rv[0], list(rv[1]))
        out_bytes = math.prod(rv[1]) * SIZE[rv[0]]
        ok1, err1, p1 = gk_check(g, P, refs[0], c.tol)
        g.step(stmts[1 % K]); g.sync()
        ok2, err2, p2 = gk_check(g, P, refs[1 % K], c.tol)
        row["gk_ok"] = ok1 and ok2
        row["gk_err"] = "%s / %s" % (err1, err2)
        row["poison_reused"] = p1 == p2
        if not row["gk_ok"]: cx.failures.append("%s: gk output wrong: %s" % (c.key, row["gk_err"]))
        gk_time(stmts, 0, warm)
        gk_time(stmts, warm, h1)
        row["bytes"] = set_bytes + out_bytes
        peers(cx, c, row, sets, refs, reps, warm)
        gk_time(stmts, warm + h1, reps - h1)
    finally:
        prof = g.close()
    row["gk_e2e_us"] = gk_e2e(cx, c, sets, warm, reps)
    ks = gkc.parse_profile(prof)
    times = gkc.parse_times(prof)
    if ks:
        row["gk_kernels"] = [{"name": k[0], "kind": k[1], "launches": k[2], "median_us": k[3], "min_us": k[4],
                              "bytes": k[5]} for k in ks]
        for k in row["gk_kernels"]:
            # every launch's time in order: the plan and the checks, warm-up, the first half, then the
            # second half after the peers (report.py lists the cases whose halves differ)
            if times.get(k["name"]): k["times_us"] = times[k["name"]]
        steps = 2 + warm + reps   # the plan's step, the check's, warm-up, timed
        for k in row["gk_kernels"]:
            tm = timed_median(k, steps, reps)
            if tm is not None: k["timed_median_us"] = tm
        # every step must have run its kernels (session 24: steps queued without gk_flush were rebound
        # before they ran, and 25 steps launched 5 kernels)
        if max(k["launches"] for k in row["gk_kernels"]) < steps:
            cx.failures.append("%s: gk ran its kernels at most %d times in %d steps" % (
                c.key, max(k["launches"] for k in row["gk_kernels"]), steps))
        row["gk_us"] = sum(k.get("timed_median_us", k["median_us"]) for k in row["gk_kernels"])
        kb = sum(k[5] for k in ks)
        if kb < 0.5 * set_bytes:
            cx.failures.append("%s: gk kernels move %d bytes, inputs hold %d" % (c.key, kb, set_bytes))
    else:
        row["gk_us"] = None   # cpu backend: no kernel times
    del sets, refs
    return row

def timed_median(k, steps, reps):
    """The median µs of a kernel's timed launches (k: a gk_kernels entry), or None where they cannot be
    told apart.  A step runs the kernel m times, the same m in every one of the case's `steps` steps, the
    timed `reps` steps last: the last m * reps of its times_us (all its launches, in order)."""
    t = k.get("times_us") or []
    if not t or len(t) != k["launches"] or len(t) % steps: return None
    return median(t[-(len(t) // steps) * reps:])

def gk_bind(g, P, c, sets):
    """Binds input set k as x<k> (and y<k>) in g, the peer's tensors through DLPack; returns the case's
    statement prepared on each set."""
    stmts = []
    for k, s in enumerate(sets):
        nm = ["x%d" % k, "y%d" % k][:c.nin]
        for v, arr in zip(nm, s): g.put(v, P.capsule(arr))
        stmts.append(g.prepare(c.src.format(**dict(zip("xy", nm)))))
    return stmts

def gk_e2e(cx, c, sets, warm, reps):
    """gk end to end in µs: host wall clock around step + sync, the median of reps after warm, in a
    session of its own without GK_PROFILE (its events would add to the wall clock; and gk's kernel
    times come from queued steps, which a sync after each step would not be)."""
    g = gkc.Gk(cx.lib, cx.backend, profile=False)
    try:
        stmts = gk_bind(g, cx.P, c, sets)
        wall = []
        for i in range(warm + reps):
            t0 = time.perf_counter()
            g.step(stmts[i % len(stmts)]); g.sync()
            wall.append((time.perf_counter() - t0) * 1e6)
        return median(wall[warm:])
    finally:
        g.close()

def latency_case(cx):
    """sum of 1024 f32 end to end: gk_step + gk_get in C (median of 2000) vs torch x.sum().item()."""
    P, a = cx.P, cx.args
    row = {"op": "sum_e2e", "family": "e2e", "shape": [1024], "dtype": "f32", "gk_src": "s = sum(x)"}
    x = P.make("rand", (1024,), "f32")
    P.sync()
    ref = P.sum(P.up(x))
    g = gkc.Gk(cx.lib, cx.backend, profile=False)
    try:
        g.put("x", P.capsule(x))
        vs = g.vars()
        st = g.prepare("r = sum(x)")
        plan = g.plan_of(lambda: (g.step(st), g.sync()))
        row["plan"] = plan
        lazy = gkc.lazy_sources(plan)
        row["guard"] = "ok" if not lazy and vs["x"][2] != "pending" else "lazy: %s" % lazy
        if row["guard"] != "ok": cx.failures.append("sum_e2e: guard: " + row["guard"])
        ok, err, _ = gk_check(g, P, ref, 1e-5)
        row["gk_ok"], row["gk_err"] = ok, err
        if cx.helper:
            buf = ctypes.create_string_buffer(8)
            res = (ctypes.c_double * 5)()
            n = 200 if a.local else 2000
            rc = cx.helper.gkb_step_get(st, ctypes.c_void_p(g.g), b"r", buf, 4, n, res)
            if rc: raise gkc.GkError("gkb_step_get: %d" % rc)
            row["gk_e2e_us"] = res[0]
            row["gk_e2e_min_us"] = res[1]
            row["gk_split_us"] = {"step": res[2], "sync": res[3], "get": res[4]}
    finally:
        g.close()
    n = 200 if a.local else 2000
    ts = []
    if P.name == "torch":
        for _ in range(50): x.sum().item()
        for _ in range(n):
            t0 = time.perf_counter(); x.sum().item(); ts.append((time.perf_counter() - t0) * 1e6)
    else:
        for _ in range(n):
            t0 = time.perf_counter(); float(x.sum()); ts.append((time.perf_counter() - t0) * 1e6)
    row["eager_e2e_us"] = median(ts)
    row["eager_us"] = None
    row["target_kind"], row["target"] = "us", 10.0
    row["gk_us"] = None
    return row

# --------------------------------------------------------------- targets

def finish(rows, copy_gbs):
    """Fills peer, ratio, target and met for every row."""
    sums = {(r["shape"][0], r["dtype"]): r.get("gk_us") for r in rows if r["op"] == "sum"}
    for r in rows:
        if r.get("error") or r.get("skipped"): continue
        gk = r.get("gk_us")
        r["gk_GBs"] = r["bytes"] / (gk * 1e3) if gk and r.get("bytes") else None
        tb = [(r.get("eager_us"), "torch"), (r.get("compile_us"), "torch.compile")]
        tb = [t for t in tb if t[0]]
        best = min(tb) if tb else (None, None)
        r["torch_best_us"], r["torch_best"] = best
        r["of_copy"] = r["gk_GBs"] / copy_gbs if r.get("gk_GBs") and copy_gbs else None
        cub = r.get("cub") or {}
        t = r.get("target_kind")
        if t == "us":
            g = r.get("gk_e2e_us")
            r["peer"], r["peer_us"] = "torch .item()", r.get("eager_e2e_us")
            r["ratio"] = (r["peer_us"] / g) if g and r["peer_us"] else None
            r["target_str"] = "<= 10 us e2e"
            r["met"] = bool(g is not None and g <= r["target"])
            continue
        kind = r["target_spec"][0]
        f = r["target_spec"][1]
        ratio, peer, pus = None, None, None
        if kind in ("cub", "copy") and cub.get("us"):
            peer, pus = cub["name"], cub["us"]
            ratio = (pus / gk) if gk else None
            if kind == "copy" and gk:   # bytes/s against the copy of the same input bytes
                ratio = (r["bytes"] / gk) / (cub["bytes"] / pus)
            r["target_str"] = ">= %.2fx %s" % (f, "copy" if kind == "copy" else peer)
        elif kind == "cub_gbs" and cub.get("us"):
            peer, pus = cub["name"] + " GB/s", cub["us"]
            ratio = (r["bytes"] / gk) / (cub["bytes"] / pus) if gk else None
            r["target_str"] = ">= %.2fx CUB Sum GB/s" % f
        elif kind == "self_sum":
            s = sums.get((r["shape"][0], r["dtype"]))
            peer, pus = "gk sum", s
            ratio = (s / gk) if s and gk else None
            r["target_str"] = ">= %.2fx gk sum" % f
        elif kind in ("torch", "torch+copy"):
            peer, pus = r["torch_best"], r["torch_best_us"]
            ratio = (pus / gk) if pus and gk else None
            r["target_str"] = ">= %.2fx torch" % f
            if kind == "torch+copy":
                r["target_str"] += ", >= %.2fx copy" % r["target_spec"][2]
        r["peer"], r["peer_us"], r["ratio"] = peer, pus, ratio
        met = ratio is not None and ratio >= f
        if kind == "torch+copy":
            cr = (r["bytes"] / gk) / (cub["bytes"] / cub["us"]) if gk and cub.get("us") else None
            r["copy_ratio"] = cr
            met = met and cr is not None and cr >= r["target_spec"][2]
        if ratio is None: r["met"] = None
        else: r["met"] = bool(met)

def fmt(v, p=0):
    return "-" if v is None else ("%.*f" % (p, v))

def table(rows):
    hdr = "%-11s %-16s %-4s %9s %6s %9s %9s %-18s %9s %6s %5s  %-30s %s" % (
        "op", "shape", "dt", "gk us", "GB/s", "gk e2e", "torch us", "peer", "peer us", "ratio", "copy", "target", "met?")
    lines = [hdr, "-" * len(hdr)]
    for r in rows:
        sh = "x".join(map(str, r["shape"]))
        if r.get("error") or r.get("skipped"):
            lines.append("%-11s %-16s %-4s %s" % (r["op"], sh, r["dtype"], r.get("error") or r.get("skipped")))
            continue
        bad = []
        for k in ("gk_ok", "eager_ok", "compile_ok"):
            if r.get(k) is False: bad.append(k.split("_")[0] + " WRONG")
        if (r.get("cub") or {}).get("ok") is False: bad.append("cub WRONG")
        if r.get("guard", "ok") != "ok": bad.append("GUARD")
        met = {True: "yes", False: "NO", None: "-"}[r.get("met")]
        lines.append("%-11s %-16s %-4s %9s %6s %9s %9s %-18s %9s %6s %5s  %-30s %s%s" % (
            r["op"], sh, r["dtype"], fmt(r.get("gk_us"), 1), fmt(r.get("gk_GBs")), fmt(r.get("gk_e2e_us"), 1),
            fmt(r.get("torch_best_us"), 1), (r.get("peer") or "-")[:18], fmt(r.get("peer_us"), 1),
            fmt(r.get("ratio"), 2), fmt(r.get("of_copy"), 2), r.get("target_str", "-"), met,
            (" [" + ", ".join(bad) + "]") if bad else ""))
    return "\n".join(lines)

# --------------------------------------------------------------- main

def find_lib(names):
    for d in [os.environ.get("GK_LIB_DIR"), os.environ.get("B"), os.path.join(HERE, "..", "..", "build"), HERE, "."]:
        if not d: continue
        for n in names:
            p = os.path.join(d, n)
            if os.path.exists(p): return os.path.abspath(p)
    return None

def main():
    if "--latency" in sys.argv[1:]:   # cold / disk / memory / new-size latency per statement (latency.py)
        import latency
        sys.argv = [sys.argv[0]] + [v for v in sys.argv[1:] if v != "--latency"]
        sys.exit(latency.main())
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer shapes and dtypes: a short run")
    ap.add_argument("--only", action="append", help="run the cases whose 'op shape dtype' key contains this")
    ap.add_argument("--reps", type=int, default=20, help="timed repetitions per measurement (>= 20)")
    ap.add_argument("--budget", type=float, default=None, help="seconds: start no case after this")
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    ap.add_argument("--local", action="store_true", help="cpu backend, numpy peer, shrunk shapes (no GPU)")
    ap.add_argument("--part", help="I/N: only every N-th case from the I-th (1-based), for a run split over "
                    "several calls; report.py joins the parts' bench.json files")
    ap.add_argument("--sweep", action="store_true", help="shapes the issue does not name (sweep_cases) instead of "
                    "the standard ones; with --rows, those row shapes")
    ap.add_argument("--rows", help="RxC,RxC,...: the row family's shapes instead of the standard ones "
                    "(the row ops' cases only; e.g. --rows 4096x20000 --only softmax)")
    a = ap.parse_args()
    if a.rows:
        global ROWS, ROWS_Q
        try:
            ROWS = [tuple(int(v) for v in t.split("x")) for t in a.rows.split(",")]
            if any(len(r) != 2 or min(r) < 1 for r in ROWS): raise ValueError
            if a.sweep: ROWS_SWEEP[:] = ROWS
        except ValueError:
            sys.exit("bench: --rows takes RxC,RxC,... (positive sizes), got %r" % a.rows)
        ROWS_Q = []
    part = (1, 1)
    if a.part:
        try:
            part = tuple(int(v) for v in a.part.split("/"))
            if len(part) != 2 or not 1 <= part[0] <= part[1]: raise ValueError
        except ValueError:
            sys.exit("bench: --part takes I/N with 1 <= I <= N, got %r" % a.part)
    if a.budget is None: a.budget = 150 if a.quick else 420
    a.reps = max(a.reps, 20)
    cx = Ctx(a)
    if not a.local:
        try:
            import torch
            if not torch.cuda.is_available(): raise RuntimeError("no cuda")
        except Exception as e:
            print("bench: no torch with CUDA here (%s): running --local" % e, flush=True)
            a.local = True
    import peers
    cx.P = peers.NumpyPeer() if a.local else peers.TorchPeer()
    cx.backend = "cpu" if a.local else "cuda"
    libp = find_lib(["libgk.so"])
    if not libp: sys.exit("bench: libgk.so not found (make build/libgk.so, or set GK_LIB_DIR)")
    cx.lib = gkc.load(libp)
    hp = find_lib(["libgkbench.so"])
    cx.helper = ctypes.CDLL(hp) if hp else None
    if cx.helper:
        cx.helper.gkb_step_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p,
                                           ctypes.c_size_t, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]
    cx.cub = None
    if not a.local:
        cp = find_lib(["libcubpeer.so"])
        if cp:
            cx.cub = ctypes.CDLL(cp)
            cx.cub.cubp_run.restype = ctypes.c_double
            cx.cub.cubp_run.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_longlong, ctypes.c_int, ctypes.c_double, ctypes.c_double]
            cx.cub.cubp_times.restype = ctypes.c_int
            cx.cub.cubp_times.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int, ctypes.c_double,
                                          ctypes.c_double, ctypes.c_int, ctypes.c_void_p]
        else:
            print("bench: libcubpeer.so not found: no CUB or cudaMemcpy peer", flush=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": cx.P.gpu, "peer_lib": cx.P.name,
            "peer_version": cx.P.version, "gk_version": cx.lib.gk_version().decode(), "libgk": libp,
            "gk_commit": os.environ.get("GK_COMMIT", ""), "mode": "quick" if a.quick else "full", "reps": a.reps,
            "local": a.local, "host": platform.node(), "sweep": a.sweep}
    print("bench: %s, %s %s, gk %s %s, reps %d" % (meta["gpu"], meta["peer_lib"], meta["peer_version"],
                                                   meta["gk_version"], meta["gk_commit"], a.reps), flush=True)
    # the copy ceiling: cudaMemcpy D2D of 1 GiB, read + write counted
    copy_gbs = None
    if cx.cub:
        P = cx.P
        src, dst = P.make("rand", (N28,), "f32"), P.empty(N28, "f32")
        P.sync()
        ts = cub_times(cx, 0, 0, [src], dst, None, 4 * N28, 0, 0.0, 0.0, 3, a.reps)
        if not bool((dst == src).all().item()):
            cx.failures.append("cudaMemcpy ceiling: the copy is wrong")
        copy_gbs = 2 * 4 * N28 / (median(ts) * 1e3)
        if copy_gbs > 6000: cx.failures.append("cudaMemcpy ceiling: %.0f GB/s is past the HBM's peak" % copy_gbs)
        meta["copy_GBs"] = copy_gbs
        meta["copy_us_1GiB"] = median(ts)
        del src, dst
        # the settle probe's buffers, kept for the whole run, and its speed now (the median of 5 medians)
        cx.probe = (P.make("rand", (PROBE_N,), "f32"), P.empty(PROBE_N, "f32"), 0.0)
        cx.probe = cx.probe[:2] + (median([probe_us(cx) for _ in range(5)]),)
        meta["probe_us_64MB"] = cx.probe[2]
        P.warm_clocks(1.0)   # the SM clock up before the first case (peers.py)
        print("bench: cudaMemcpy D2D 1 GiB %.1f us = %.0f GB/s (read + write)" % (meta["copy_us_1GiB"], copy_gbs),
              flush=True)
    # the quick set first (every family at its main shapes), then the rest: a
    # run cut short by --budget still covers every family
    cs = sweep_cases() if a.sweep else cases(True)
    if not a.quick and not a.sweep:
        seen = set(c.key for c in cs)
        cs += [c for c in cases(False) if c.key not in seen]
    if a.only: cs = [c for c in cs if any(s in c.key for s in a.only)]
    cs = cs[part[0] - 1::part[1]]
    meta["part"] = "%d/%d" % part
    rows = []
    out = os.environ.get("OUT") or "."
    def save():
        finish(rows, copy_gbs)
        with open(os.path.join(out, "bench.json"), "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=1, default=str)
    if (not a.only or any("sum_e2e".startswith(s) for s in a.only)) and part[0] == 1:
        try:
            rows.append(latency_case(cx))
        except Exception as e:
            rows.append({"op": "sum_e2e", "family": "e2e", "shape": [1024], "dtype": "f32",
                         "error": "%s: %s" % (type(e).__name__, e)})
            cx.failures.append("sum_e2e: %s" % e)
        print("[  0] sum_e2e 1024: gk %s us end to end, torch %s us" % (
            fmt(rows[-1].get("gk_e2e_us"), 2), fmt(rows[-1].get("eager_e2e_us"), 2)), flush=True)
    for i, c in enumerate(cs):
        if cx.elapsed() > a.budget:
            rows.append({"op": c.op, "family": c.fam, "shape": list(c.shape), "dtype": c.dt,
                         "skipped": "skipped: over the %.0f s budget" % a.budget})
            continue
        t0 = time.time()
        try:
            r = run_case(cx, c)
        except Exception as e:
            r = {"op": c.op, "family": c.fam, "shape": list(c.shape), "dtype": c.dt,
                 "error": "%s: %s" % (type(e).__name__, str(e)[:400]), "trace": traceback.format_exc()[-1500:]}
            cx.failures.append("%s: %s" % (c.key, r["error"]))
        for k, what in (("eager", "torch"), ("compile", "torch.compile")):
            if r.get(k + "_ok") is False: cx.failures.append("%s: %s output wrong: %s" % (c.key, what, r.get(k + "_err")))
        if (r.get("cub") or {}).get("ok") is False:
            cx.failures.append("%s: %s output wrong: %s" % (c.key, r["cub"]["name"], r["cub"]["err"]))
        r["target_spec"] = list(c.target)
        r["target_kind"] = c.target[0]
        r["case_s"] = round(time.time() - t0, 2)
        rows.append(r)
        print("[%3d/%d %5.0fs] %-34s gk %s us, torch %s, compile %s, cub %s%s%s" % (
            i + 1, len(cs), cx.elapsed(), c.key, fmt(r.get("gk_us"), 1), fmt(r.get("eager_us"), 1),
            fmt(r.get("compile_us"), 1), fmt((r.get("cub") or {}).get("us"), 1),
            ", settled in %s ms (%d probes)" % (r["settle_ms"], r["settle_probes"])
            if r.get("settle_probes", 0) > 1 else "",
            ("  ERROR " + r["error"]) if r.get("error") else ""), flush=True)
        if cx.P.name == "torch" and (i % 8 == 7):
            cx.P.torch.cuda.empty_cache()
        save()
    save()
    txt = table(rows)
    meta["failures"] = cx.failures
    meta["probe_rebased_us"] = cx.rebased
    save()
    with open(os.path.join(out, "bench.txt"), "w") as fh:
        fh.write("%s\n%s\n" % (json.dumps(meta, default=str), txt))
    print(txt)
    missed = [r for r in rows if r.get("met") is False]
    print("\n%d cases, %d targets met, %d missed, %d without a verdict; %d failures%s" % (
        len(rows), sum(1 for r in rows if r.get("met")), len(missed), sum(1 for r in rows if r.get("met") is None),
        len(cx.failures), (":\n  " + "\n  ".join(cx.failures)) if cx.failures else ""))
    nf = len({f.split(":")[0] for f in cx.failures})
    print("%d passed, %d failed (cases run without a failure; a test of the driver where --local)" % (len(rows) - nf, nf))
    sys.exit(1 if cx.failures else 0)

if __name__ == "__main__":
    main()
