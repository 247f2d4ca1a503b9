#!/usr/bin/env python3
"""How long a new statement waits for its kernels (tests/bench/latency.py; bench_gk.py --latency).

    python3 tests/bench/latency.py [--backend cuda] [--jobs J] [--only NAME] [--out DIR]

For each statement of a fixed list of 24 (reductions, scans, filter and
partition, one-pass sum-exp, hist, maps, row ops, a column sum, transpose,
matmul), on materialised inputs (gk_set from numpy: x, y f32[1000003], xi
i32[1000003], m f32[1000 x 1024], w f32[1024 x 64]), the wall time of
prepare + step + sync of its first run:
  cold   fresh process, empty kernel cache (XDG_CACHE_HOME of its own):
         the kernels shipped with gk (`make kernels`: gk-kernels beside
         libgk.so) are loaded, NVRTC compiles the rest; --no-shipped turns
         the shipped kernels off (GK_KERNELS=0): NVRTC compiles every one
  disk   fresh process, the cache the cold run filled (a disk hit)
  memory the same statement again in the cold run's process
  size   then the inputs rebound to another size of the same size class
         (x: 777777, m: 1500 x 1000) and the statement stepped again: the
         same kernels, new parameters (GK_DEBUG=cache must show no miss)
NVRTC's own cross-process compile cache (CUDA >= 12.9) is off in every
child (`--no-cache`; --nvrtc-cache leaves it on): with it on, a statement
compiled by an earlier child compiles 5-20x faster in the next one.
plus `session`: one fresh process, empty cache, running all 24 in order
(the cold REPL session; statements share kernels there).  Per statement it
also reports the kernels compiled and their NVRTC ms (GK_DEBUG=cache).
Writes DIR/latency.json and prints a table; the median and total are over
the 24.  Cold processes run J at a time (default 1: honest timings; the
statement's own time is measured inside its process either way).
"""
import argparse, ctypes, json, os, re, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
N, N2 = 1000003, 777777
R, C, R2, C2 = 1000, 1024, 1500, 1000

STMTS = [
    ("sum", "s = sum(x)"), ("max", "s = max(x)"), ("mean_var", "s = mean(x) + var(x)"), ("argmax", "s = argmax(x)"),
    ("norm", "s = norm(x)"), ("dot", "s = dot(x, y)"), ("sum_i32", "s = sum(xi)"), ("map", "r = x * 2 + 1"),
    ("map2", "r = sin(x) * cos(y) + 0.5"), ("scan", "r = scan(x)"), ("exscan_max", "r = exscan(x, max)"),
    ("filter", "r = x[x > 0.5]"), ("partition", "r = partition(x, x > 0.5)"),
    ("sumexp", "s = sum(exp(x - max(x)))"), ("logsumexp", "s = logsumexp(x)"), ("hist", "h = hist(x, 256, 0, 1)"),
    ("sum_xy1", "s = sum(x * y + 1)"), ("softmax", "r = softmax(rows(m))"), ("layernorm", "r = layernorm(rows(m))"),
    ("rowsum", "r = sum(rows(m))"), ("colsum", "r = sum(cols(m))"), ("rowscan", "r = scan(rows(m))"),
    ("transpose", "r = transpose(m)"), ("matmul", "r = m @ w"),
]
RESULT = {"s": "s", "r": "r", "h": "h"}

GK_F32, GK_I32 = 3, 1


def find_lib():
    for d in [os.environ.get("GK_LIB_DIR"), os.environ.get("B"), os.path.join(HERE, "..", "..", "build"), HERE]:
        if d and os.path.exists(os.path.join(d, "libgk.so")): return os.path.abspath(os.path.join(d, "libgk.so"))
    sys.exit("latency: libgk.so not found (set GK_LIB_DIR)")


class Ctx:
    """A gk context through ctypes: gk_set, prepare, step, sync, get (no torch, no DLPack)."""

    def __init__(self, libp, backend):
        sys.path.insert(0, HERE)
        import gkc
        self.gkc = gkc
        self.lib = gkc.load(libp)
        self.lib.gk_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p]
        self.g = gkc.Gk(self.lib, backend)

    def put(self, name, a, dt):
        shape = (ctypes.c_int64 * a.ndim)(*a.shape)
        rc = self.lib.gk_set(ctypes.c_void_p(self.g.g), name.encode(), dt, a.ndim, shape, a.ctypes.data_as(ctypes.c_void_p))
        if rc: raise self.gkc.GkError("gk_set %s: %s" % (name, self.lib.gk_errmsg(ctypes.c_void_p(self.g.g)).decode()))


def inputs(np, size2):
    rng = np.random.default_rng(11 if size2 else 7)
    n, r, c = (N2, R2, C2) if size2 else (N, R, C)
    return {"x": (rng.random(n, dtype=np.float32), GK_F32), "y": (rng.random(n, dtype=np.float32), GK_F32),
            "xi": (rng.integers(-1000, 1000, n, dtype=np.int32), GK_I32),
            "m": (rng.standard_normal((r, c), dtype=np.float32), GK_F32),
            "w": (rng.standard_normal((c, 64), dtype=np.float32), GK_F32)}


def mark(what):
    os.write(2, ("@@ %s\n" % what).encode())


def child(a):
    """Runs statements a.child (comma list of indices) in this process; prints one JSON line per phase."""
    import numpy as np
    cx = Ctx(find_lib(), a.backend)
    ins = inputs(np, False)
    for k, (v, dt) in ins.items(): cx.put(k, v, dt)
    cx.g.sync()
    out = []
    for idx in map(int, a.child.split(",")):
        name, src = STMTS[idx]
        phases = ["first"] if a.first_only else ["first", "memory"]
        res = {"stmt": name}
        st = None
        for ph in phases:
            mark("%s %s" % (name, ph))
            t0 = time.perf_counter()
            if st is None: st = cx.g.prepare(src)
            cx.g.step(st); cx.g.sync()
            res[ph] = (time.perf_counter() - t0) * 1e3
        out.append(res)
    if not a.first_only:
        ins2 = inputs(np, True)
        for k, (v, dt) in ins2.items(): cx.put(k, v, dt)
        cx.g.sync()
        for res, st in zip(out, cx.g.stmts):
            mark("%s size" % res["stmt"])
            t0 = time.perf_counter()
            cx.g.step(st); cx.g.sync()
            res["size"] = (time.perf_counter() - t0) * 1e3
    mark("end")
    cx.g.close()
    print(json.dumps(out), flush=True)


CACHE_RE = re.compile(r"gk: kernel cache: (miss|disk hit|shipped hit|memory hit) (gk_[0-9a-f]+)(?:.*compiled in ([\d.]+) ms)?")


def parse_debug(err):
    """{(stmt, phase): {"miss": [ms...], "disk": n, "mem": n}} from the child's GK_DEBUG=cache stderr."""
    got, cur = {}, None
    for line in err.splitlines():
        if line.startswith("@@ "):
            cur = tuple(line[3:].split(" ", 1)) if line[3:] != "end" else None
            got.setdefault(cur, {"miss": [], "disk": 0, "ship": 0, "mem": 0})
            continue
        m = CACHE_RE.search(line)
        if m and cur:
            d = got[cur]
            if m.group(1) == "miss": d["miss"].append(float(m.group(3) or 0))
            elif m.group(1) == "disk hit": d["disk"] += 1
            elif m.group(1) == "shipped hit": d["ship"] += 1
            else: d["mem"] += 1
    return got


def spawn(a, idxs, cache, first_only=False):
    env = dict(os.environ, XDG_CACHE_HOME=cache, GK_DEBUG="cache", GK_CACHE="1")
    if not a.nvrtc_cache:   # NVRTC >= 12.9 caches compiles across processes by itself: off, so cold is cold
        env["GK_NVRTC_OPTS"] = (env.get("GK_NVRTC_OPTS", "") + " --no-cache").strip()
        env["CUDA_CACHE_DISABLE"] = "1"   # the compute cache (~/.nv/ComputeCache) NVRTC writes to
    env.pop("GK_PROFILE", None)
    if a.no_shipped: env["GK_KERNELS"] = "0"
    cmd = [sys.executable, os.path.abspath(__file__), "--child", ",".join(map(str, idxs)), "--backend", a.backend]
    if first_only: cmd.append("--first-only")
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def collect(p):
    out, err = p.communicate(timeout=600)
    if p.returncode:
        raise RuntimeError("child failed (%d): %s" % (p.returncode, err[-1500:]))
    return json.loads(out.strip().splitlines()[-1]), parse_debug(err)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", action="append", help="statement names to run (default: all 24)")
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--first-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-shipped", action="store_true", help="leave the shipped kernels out (GK_KERNELS=0)")
    ap.add_argument("--nvrtc-cache", action="store_true",
                    help="leave NVRTC's own compile cache on (off by default: it keeps compiles across processes)")
    a = ap.parse_args()
    if a.child is not None: return child(a)
    idxs = [i for i, (n, _) in enumerate(STMTS) if not a.only or n in a.only]
    root = tempfile.mkdtemp(prefix="gk_latency_")
    rows = {STMTS[i][0]: {"stmt": STMTS[i][0], "src": STMTS[i][1]} for i in idxs}
    # cold (+ memory + new size), J processes at a time, each with an empty cache of its own
    pend = list(idxs)
    while pend:
        batch, pend = pend[:a.jobs], pend[a.jobs:]
        ps = [(i, spawn(a, [i], os.path.join(root, "c%d" % i))) for i in batch]
        for i, p in ps:
            res, dbg = collect(p)
            r, name = rows[STMTS[i][0]], STMTS[i][0]
            r["cold_ms"], r["memory_ms"], r["size_ms"] = res[0]["first"], res[0]["memory"], res[0]["size"]
            d = dbg.get((name, "first"), {"miss": []})
            r["kernels"], r["nvrtc_ms"] = len(d["miss"]), d["miss"]
            r["shipped"] = d.get("ship", 0)
            r["size_misses"] = len(dbg.get((name, "size"), {"miss": []})["miss"])
            r["memory_misses"] = len(dbg.get((name, "memory"), {"miss": []})["miss"])
    # disk: a fresh process per statement on the cache its cold run filled
    pend = list(idxs)
    while pend:
        batch, pend = pend[:a.jobs], pend[a.jobs:]
        ps = [(i, spawn(a, [i], os.path.join(root, "c%d" % i), True)) for i in batch]
        for i, p in ps:
            res, dbg = collect(p)
            r = rows[STMTS[i][0]]
            r["disk_ms"] = res[0]["first"]
            r["disk_misses"] = len(dbg.get((STMTS[i][0], "first"), {"miss": []})["miss"])
    # the cold session: all statements in one process, empty cache
    res, dbg = collect(spawn(a, idxs, os.path.join(root, "session"), True))
    for x in res: rows[x["stmt"]]["session_ms"] = x["first"]
    rs = [rows[STMTS[i][0]] for i in idxs]
    def med(k): return statistics.median(r[k] for r in rs)
    summ = {"cold_median_ms": med("cold_ms"), "cold_total_ms": sum(r["cold_ms"] for r in rs),
            "session_total_ms": sum(r["session_ms"] for r in rs), "disk_median_ms": med("disk_ms"),
            "memory_median_ms": med("memory_ms"), "size_median_ms": med("size_ms"),
            "size_misses": sum(r["size_misses"] for r in rs), "kernels": sum(r["kernels"] for r in rs),
            "nvrtc_median_ms": statistics.median([m for r in rs for m in r["nvrtc_ms"]] or [0]),
            "shipped_kernels": sum(r["shipped"] for r in rs), "no_shipped": a.no_shipped,
            "jobs": a.jobs, "backend": a.backend}
    print("%-11s %-28s %9s %8s %8s %8s %6s %7s  %s" % ("stmt", "source", "cold ms", "disk ms", "mem ms", "size ms",
                                                    "misses", "shipped", "NVRTC ms per kernel"))
    for r in rs:
        print("%-11s %-28s %9.1f %8.2f %8.2f %8.2f %6s %7d  %s" % (r["stmt"], r["src"], r["cold_ms"], r["disk_ms"],
              r["memory_ms"], r["size_ms"], "%d/%d" % (r["disk_misses"], r["size_misses"]), r["shipped"],
              " ".join("%.0f" % m for m in r["nvrtc_ms"])))
    print("median: cold %.1f ms, disk %.2f ms, memory %.2f ms, new size %.2f ms; NVRTC median per kernel %.1f ms "
          "over %d kernels; cold total %.0f ms; one cold session of all %d: %.0f ms; misses on a new size: %d; "
          "kernels loaded from the shipped ones: %d%s"
          % (summ["cold_median_ms"], summ["disk_median_ms"], summ["memory_median_ms"], summ["size_median_ms"],
             summ["nvrtc_median_ms"], summ["kernels"], summ["cold_total_ms"], len(rs), summ["session_total_ms"],
             summ["size_misses"], summ["shipped_kernels"], " (--no-shipped)" if a.no_shipped else ""))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "latency.json"), "w") as fh:
        json.dump({"summary": summ, "rows": rs, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
