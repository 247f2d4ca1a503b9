#!/usr/bin/env python3
"""gk vs torch on the device, same run (tests/bench/bench_gk.py).

For each op: build/bench_gk OP REPS under GK_PROFILE=1 (the cuda backend
times every launch with CUDA events; median per kernel), then the torch peer
on the same sizes (CUDA events, median of REPS after 3 warm-ups, fresh input
each run).  GB/s counts the fewest bytes: inputs read once, outputs written
once (float32).  Prints a table and writes $OUT/bench.json (or ./bench.json).
"""
import json, os, re, subprocess, sys

B = os.environ.get("B", "build")
REPS = int(os.environ.get("REPS", "15"))
N = 1 << 28
SHAPES = [(65536, 1024), (8192, 8192), (1024, 65536), (1048576, 128), (262144, 32)]
TARGET = {"sum": 4450, "max": 4450, "sum_xy1": 4400, "sum_exp_x_max": 4000, "scan": 3600, "filter": 3000,
          "hist256": 4000, "transpose": 3600}
for r, c in SHAPES:
    TARGET["softmax_%dx%d" % (r, c)] = {65536: 3900, 8192: 3700, 1024: 3700, 1048576: 4000, 262144: 3000}[r]
    TARGET["layernorm_%dx%d" % (r, c)] = 3500
TARGET["rowsum_65536x1024"] = 3800
TARGET["rowsum_1024x65536"] = 3800

# op -> (kinds of gk kernels that make the op, bytes)
def nbytes(op):
    if op in ("sum", "max", "sum_exp_x_max"): return 4 * N
    if op == "sum_xy1": return 8 * N
    if op == "scan": return 8 * N
    if op == "filter": return 4 * N + 2 * N
    if op == "hist256": return 4 * N + 256 * 8
    if op == "transpose": return 8 * 16384 * 16384
    if op == "sum1024": return 4096
    r, c = map(int, op.split("_")[1].split("x"))
    return 4 * r * c + (4 * r if op.startswith("rowsum") else 4 * r * c)

KINDS = {"sum": ["reduce"], "max": ["reduce"], "sum_xy1": ["reduce"], "sum_exp_x_max": ["reduce"], "scan": ["scan"],
         "filter": ["reduce", "filter"], "hist256": ["hist"], "transpose": ["transpose"], "sum1024": ["reduce"]}

def gk_time(op):
    env = dict(os.environ, GK_PROFILE="1")
    p = subprocess.run([os.path.join(B, "bench_gk"), op, str(REPS)], capture_output=True, text=True, env=env, timeout=300)
    if p.returncode:
        return None, p.stderr.strip()[-300:]
    kinds = KINDS.get(op, ["rows"])
    tot, names = 0.0, []
    for line in p.stderr.splitlines():
        m = re.match(r"gk-profile: (\S+) (\S+) launches=(\d+) median_us=([\d.]+)", line)
        if m and m.group(2) in kinds:
            tot += float(m.group(4)); names.append("%s:%s" % (m.group(2), m.group(4)))
    return (tot if names else None), " ".join(names)

def torch_time(op):
    import torch
    import torch.nn.functional as F
    dev = "cuda"
    def mk():
        if op == "sum1024": return [torch.rand(1024, device=dev)]
        if op in ("sum", "max", "sum_exp_x_max", "scan", "filter", "hist256"): return [torch.rand(N, device=dev)]
        if op == "sum_xy1": return [torch.rand(N, device=dev), torch.rand(N, device=dev)]
        if op == "transpose": return [torch.rand(16384, 16384, device=dev)]
        r, c = map(int, op.split("_")[1].split("x"))
        return [torch.rand(r, c, device=dev)]
    fn = {
        "sum": lambda x: x.sum(), "max": lambda x: x.max(), "sum1024": lambda x: x.sum(),
        "sum_xy1": lambda x, y: (x * y + 1).sum(),
        "sum_exp_x_max": lambda x: torch.exp(x - x.max()).sum(),
        "scan": lambda x: torch.cumsum(x, 0), "filter": lambda x: x[x > 0.5],
        "hist256": lambda x: torch.histc(x, 256, 0, 1), "transpose": lambda m: m.t().contiguous(),
    }.get(op)
    if fn is None:
        if op.startswith("softmax"): fn = lambda m: torch.softmax(m, 1)
        elif op.startswith("layernorm"): fn = lambda m: F.layer_norm(m, (m.shape[1],))
        else: fn = lambda m: m.sum(1)
    ts = []
    for i in range(REPS + 3):
        args = mk()
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(*args); b.record(); b.synchronize()
        if i >= 3: ts.append(a.elapsed_time(b) * 1000.0)
        del args
    ts.sort()
    torch.cuda.empty_cache()
    return ts[len(ts) // 2]

def latency():
    """gk's own overhead (bench_gk latency) next to torch's x.sum().item()."""
    import tempfile, time
    rows = []
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, XDG_CACHE_HOME=d)
        env.pop("GK_PROFILE", None)
        p = subprocess.run([os.path.join(B, "bench_gk"), "latency", "2000"], capture_output=True, text=True,
                           env=env, timeout=120)
    if p.returncode:
        print("latency: bench_gk failed: %s" % p.stderr.strip()[-300:])
        return rows
    peer = {}
    try:
        import torch
        x = torch.rand(1024, device="cuda")
        for _ in range(50): x.sum().item()
        ts = []
        for _ in range(2000):
            t0 = time.perf_counter(); x.sum().item(); ts.append((time.perf_counter() - t0) * 1e6)
        ts.sort()
        peer["sum1024_end_to_end"] = ts[len(ts) // 2]
    except Exception as e:
        print("latency: torch: %s" % e)
    target = {"sum1024_end_to_end": "<= 10 us", "map1024_step_host": "<= 2 us host",
              "first_run_jit_miss": "<= 20 ms compile", "first_run_disk_hit": "<= 1 ms"}
    for line in p.stdout.splitlines():
        m = re.match(r"latency (\S+) ([\d.]+) (\S+)", line)
        if not m: continue
        name, v, unit = m.group(1), float(m.group(2)), m.group(3)
        t = peer.get(name)
        rows.append({"op": "latency_" + name, "gk": v, "unit": unit, "torch": t, "target": target.get(name)})
        print("%-28s gk %9.2f %s | torch %s | target %s" % (name, v, unit, ("%.2f %s" % (t, unit)) if t else "-",
                                                            target.get(name, "-")), flush=True)
    return rows

def main():
    ops = sys.argv[1:] or (["sum", "max", "sum_xy1", "sum_exp_x_max", "scan", "filter", "hist256", "transpose"] +
                           ["softmax_%dx%d" % s for s in SHAPES] + ["layernorm_%dx%d" % s for s in SHAPES] +
                           ["rowsum_65536x1024", "rowsum_1024x65536", "sum1024"])
    rows = []
    for op in ops:
        if op == "latency": continue
        g, note = gk_time(op)
        try:
            t = torch_time(op)
        except Exception as e:  # torch missing or failed
            t, note = None, note + " torch: %s" % e
        by = nbytes(op)
        gg = by / (g * 1e3) if g else None
        tg = by / (t * 1e3) if t else None
        rows.append({"op": op, "bytes": by, "gk_us": g, "gk_GBs": gg, "torch_us": t, "torch_GBs": tg,
                     "ratio": (gg / tg) if gg and tg else None, "target_GBs": TARGET.get(op), "kernels": note})
        f = lambda v, p=0: ("%.*f" % (p, v)) if v is not None else "-"
        print("%-24s gk %8s us %6s GB/s | torch %8s us %6s GB/s | gk/torch %5s | target %5s  [%s]" % (
            op, f(g, 1), f(gg), f(t, 1), f(tg), f(rows[-1]["ratio"], 2), TARGET.get(op, "-"), note), flush=True)
    if not sys.argv[1:] or "latency" in sys.argv[1:]:
        rows += latency()
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "bench.json"), "w") as fh:
        json.dump(rows, fh, indent=1)

if __name__ == "__main__":
    main()
