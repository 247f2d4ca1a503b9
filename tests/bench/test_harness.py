#!/usr/bin/env python3
"""tests/bench/test_harness.py -- the benchmark driver's own logic, without a GPU:
settle() (waits out a slow spell of the card, gives up and takes the new speed
as the card's when it lasts), gkc.parse_times (GK_PROFILE=2's per-launch
lines), timed_median (which of them are the timed runs) and report.py.  Prints "N passed, M failed"."""
import contextlib, io, os, sys, types
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gk, gkc, report

class Dst:
    def __init__(self): self.copies = 0
    def copy_(self, src): self.copies += 1

class Card:
    """A stand-in for the torch peer: each probe takes the next time of seq (us), then `after`."""
    def __init__(self, seq, after):
        self.seq, self.after = list(seq), after
    def time_events(self, fn, argsets, warm, reps):
        out = []
        for _ in range(reps):
            fn(*argsets[0])
            out.append(self.seq.pop(0) if self.seq else self.after)
        return out

def cx_of(card, base):
    return types.SimpleNamespace(P=card, probe=(None, Dst(), base), rebased=[])

passed = failed = 0
def check(what, ok):
    global passed, failed
    if ok: passed += 1
    else:
        failed += 1
        print("FAILED:", what)

bench_gk.SETTLE_MAX_S = 0.05
# a quiet card: one probe, no wait
cx = cx_of(Card([], 100.0), 100.0)
ms, n = bench_gk.settle(cx)
check("quiet card: one probe", n == 1 and cx.probe[1].copies == 3 and not cx.rebased)
# a slow spell that ends: probes (medians of 3) until one is within 5 %
cx = cx_of(Card([130] * 3 + [120] * 3 + [106] * 3 + [104] * 3, 100.0), 100.0)
ms, n = bench_gk.settle(cx)
check("slow spell: settles at the 4th probe (%s)" % n, n == 4 and cx.probe[2] == 100.0 and not cx.rebased)
# 105 % is settled, 105.1 % is not
check("5 % bound", bench_gk.settle(cx_of(Card([105.0] * 3, 100.0), 100.0))[1] == 1 and
      bench_gk.settle(cx_of(Card([105.1] * 3, 100.0), 100.0))[1] == 2)
# a card slowed for good: gives up after SETTLE_MAX_S and takes its speed as the new base
cx = cx_of(Card([], 120.0), 100.0)
ms, n = bench_gk.settle(cx)
check("slowed for good: rebased (%s ms)" % ms, ms >= 50 and cx.probe[2] == 120.0 and cx.rebased == [120.0])
check("then the next case does not wait", bench_gk.settle(cx)[1] == 1)
# no probe (the cpu backend): nothing measured
check("no probe", bench_gk.settle(types.SimpleNamespace(probe=None)) == (None, 0))
# GK_PROFILE=2's lines
text = ("gk-profile-times: gk_aa 1.50 2.25 3.00\ngk-profile: gk_aa rows launches=3 median_us=2.25 min_us=1.50 bytes=8\n"
        "gk-profile-times: gk_bb 7.00\ngk-profile: gk_bb map launches=1 median_us=7.00 min_us=7.00 bytes=4\n")
check("parse_times", gkc.parse_times(text) == {"gk_aa": [1.5, 2.25, 3.0], "gk_bb": [7.0]})
check("parse_profile beside them", [k[:3] for k in gkc.parse_profile(text)] == [("gk_aa", "rows", 3), ("gk_bb", "map", 1)])
# report.py's list of cases whose halves differ: the last 20 of times_us, split at 10
rows = [{"op": "rowsum", "shape": [4096, 50257], "dtype": "f32",
         "gk_kernels": [{"name": "gk_x", "launches": 25, "min_us": 263.0, "times_us": [320.0] * 15 + [265.0] * 10}]},
        {"op": "rowmax", "shape": [4096, 50257], "dtype": "f32",
         "gk_kernels": [{"name": "gk_y", "launches": 25, "min_us": 263.0, "times_us": [266.0] * 25}]}]
buf = io.StringIO()
with contextlib.redirect_stdout(buf): report.halves(rows, 20)
out = buf.getvalue()
check("report.halves lists the odd case only", "| 320.0 | 265.0 | 263.0 |" in out and "gk_y" not in out)
# report.py --into: the table between the marks, the rest of the file as it was; no marks, no change
import subprocess, tempfile, json
doc = "intro\n<!-- report.py --summary -->\nold table\nold row\n<!-- /report.py -->\nafter\n"
check("splice replaces between the marks only",
      report.splice(doc, "T1\nT2\n", True) == "intro\n<!-- report.py --summary -->\nT1\nT2\n<!-- /report.py -->\nafter\n")
try:
    report.splice(doc, "T\n", False); check("splice without the whole table's mark fails", False)
except ValueError: check("splice without the whole table's mark fails", True)
with tempfile.TemporaryDirectory() as td:
    js, md, bare = os.path.join(td, "b.json"), os.path.join(td, "r.md"), os.path.join(td, "bare.md")
    meta = {"date": "D", "gpu": "G", "peer_version": "V", "gk_commit": "C", "reps": 20, "copy_GBs": 1000.0}
    r1 = {"op": "sum", "shape": [268435456], "dtype": "f32", "gk_us": 340.0, "gk_GBs": 3158.0, "ratio": 1.02,
          "target_str": ">= 1.00x CUB Sum", "met": True, "cub": {"name": "CUB Sum", "us": 347.0}}
    json.dump({"meta": meta, "rows": [r1]}, open(js, "w"))
    open(md, "w").write(doc)
    open(bare, "w").write("no marks\n")
    rp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.py")
    rc = subprocess.run([sys.executable, rp, js, "--summary", "--into", md], capture_output=True).returncode
    got = open(md).read()
    check("report.py --into writes the summary between the marks", rc == 0 and got.startswith("intro\n<!-- report.py --summary -->\nD, G")
          and "| `sum(x)` | 2^28 | f32 | 340.0 | 3158 |" in got and "old row" not in got and got.endswith("<!-- /report.py -->\nafter\n"))
    p = subprocess.run([sys.executable, rp, js, "--into", bare], capture_output=True, text=True)
    check("report.py --into a file without the marks: status 1, file untouched",
          p.returncode == 1 and "report.py" in p.stderr and open(bare).read() == "no marks\n")
# timed_median: the last m * reps launches of a kernel run m times a step; None where the count does not divide
slow, fast = [9.0] * 5, [float(i) for i in range(1, 21)]
check("timed_median: the timed launches only", bench_gk.timed_median({"launches": 25, "times_us": slow + fast}, 25, 20) == 10.5)
check("timed_median: two launches a step", bench_gk.timed_median({"launches": 50, "times_us": slow * 2 + fast * 2}, 25, 20) == 10.5)
check("timed_median: a count that does not divide", bench_gk.timed_median({"launches": 26, "times_us": [1.0] + slow + fast}, 25, 20) is None)
check("timed_median: times cut at 512", bench_gk.timed_median({"launches": 600, "times_us": fast * 25}, 25, 20) is None)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
