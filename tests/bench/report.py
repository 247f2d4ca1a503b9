#!/usr/bin/env python3
"""Markdown tables from a bench.json that bench_gk.py wrote (tests/bench/report.py).

    python3 tests/bench/report.py bench.json [more.json ...] [--summary] [--into FILE]

Prints the whole table (every case: gk kernel time and GB/s, each peer's
time, the ratio the target is stated in, the target, met?), or with
--summary the few rows per family that README's speed table carries.
Several files (the parts of a run split with bench_gk.py --part) are joined:
their rows in the order of the files, each part's date and commit listed.

--into FILE writes the table into FILE instead, between the lines
`<!-- report.py --summary -->` (or `<!-- report.py -->` for the whole
table) and `<!-- /report.py -->`, and leaves the rest of FILE as it was;
README.md and tests/bench/RESULTS.md carry those marks.  Without both
marks FILE is not touched and the exit status is 1.
"""
import argparse, contextlib, io, json, statistics, sys

def f(v, p=0):
    return "–" if v is None else "%.*f" % (p, v)

def shape(r):
    s = r["shape"]
    return "×".join(map(str, s)) if len(s) > 1 else {268435456: "2^28", 100000003: "10^8+3"}.get(s[0], str(s[0]))

SRC = {"map": "`x * 2 + 1`", "sum": "`sum(x)`", "max": "`max(x)`", "min": "`min(x)`", "argmax": "`argmax(x)`",
       "norm": "`norm(x)`", "dot": "`dot(x, y)`", "scan": "`scan(x)`", "filter": "`x[x > 0.5]`",
       "hist": "`hist(x, 256, 0, 1)`", "sumexp": "`sum(exp(x - max(x)))`", "logsumexp": "`logsumexp(x)`",
       "sum_xy1": "`sum(x * y + 1)`", "mean": "`mean(x)`", "var": "`var(x)`", "softmax": "`softmax(rows(m))`",
       "logsoftmax": "`logsoftmax(rows(m))`", "layernorm": "`layernorm(rows(m))`", "rmsnorm": "`rmsnorm(rows(m))`",
       "rowsum": "`sum(rows(m))`", "rowmax": "`max(rows(m))`", "colsum": "`sum(cols(m))`", "colmax": "`max(cols(m))`",
       "rowscan": "`scan(rows(m))`", "colscan": "`scan(cols(m))`", "transpose": "`transpose(m)`",
       "permute201": "`permute(t, 2, 0, 1)`", "nchw_nhwc": "`permute(t, 0, 2, 3, 1)`",
       "nhwc_nchw": "`permute(t, 0, 3, 1, 2)`", "sum_e2e": "`sum(x)` end to end"}

def row(r):
    cub = r.get("cub") or {}
    met = {True: "yes", False: "**no**", None: "–"}[r.get("met")]
    if r.get("error") or r.get("skipped"):
        return "| %s | %s | %s | %s |" % (SRC.get(r["op"], r["op"]), shape(r), r["dtype"], r.get("error") or r.get("skipped"))
    if r["op"] == "sum_e2e":
        return "| %s | 1024 | f32 | %s µs e2e | | | | torch `.item()` %s µs | | ≤ 10 µs | %s |" % (
            SRC["sum_e2e"], f(r.get("gk_e2e_us"), 1), f(r.get("eager_e2e_us"), 1), met)
    return "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        SRC.get(r["op"], r["op"]), shape(r), r["dtype"], f(r.get("gk_us"), 1), f(r.get("gk_GBs")),
        f(r.get("eager_us"), 1), f(r.get("compile_us"), 1),
        ("%s %s" % (cub.get("name"), f(cub.get("us"), 1))) if cub.get("us") else "–",
        f(r.get("ratio"), 2), (r.get("target_str") or "–").replace(">=", "≥"), met)

HEAD = ("| operation | shape | dtype | gk µs | gk GB/s | torch µs | torch.compile µs | CUB / copy µs | ratio | target | met? |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|")

SUMMARY = [("sum_e2e", None, "f32"), ("map", "2^28", "f32"), ("map", "2^28", "f64"), ("sum", "2^28", "f32"),
           ("sum", "2^28", "f64"), ("sum", "2^28", "i32"), ("max", "2^28", "f32"), ("argmax", "2^28", "f32"),
           ("dot", "2^28", "f32"), ("scan", "2^28", "f32"), ("filter", "2^28", "f32"), ("hist", "2^28", "f32"),
           ("sumexp", "2^28", "f32"), ("sum_xy1", "2^28", "f32"), ("softmax", "65536×1024", "f32"),
           ("softmax", "4096×50257", "f32"), ("softmax", "2000000×10", "f32"), ("layernorm", "65536×1024", "f32"),
           ("rmsnorm", "32768×768", "f32"), ("rowsum", "4096×50257", "f32"), ("colsum", "8192×8192", "f32"),
           ("rowscan", "8192×8192", "f32"), ("transpose", "8191×8193", "f32"), ("transpose", "16384×16384", "f32"),
           ("nchw_nhwc", "32×256×56×56", "f32")]

def main():
    ap = argparse.ArgumentParser(description="Markdown tables from bench.json files (tests/bench/report.py)")
    ap.add_argument("files", nargs="+", help="bench.json, or the parts of a split run in order")
    ap.add_argument("--summary", action="store_true", help="the rows README's speed table carries")
    ap.add_argument("--into", metavar="FILE", help="write the table between FILE's <!-- report.py --> marks")
    a = ap.parse_args()
    if not a.into: return table(a.files, a.summary)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf): table(a.files, a.summary)
    try:
        text = splice(open(a.into).read(), buf.getvalue(), a.summary)
    except ValueError as e:
        sys.exit("report.py: %s: %s" % (a.into, e))
    with open(a.into, "w") as fh: fh.write(text)

def splice(text, table_md, summary):
    """text with the lines between its marks (the --summary or the whole table's) replaced by table_md."""
    begin, end = "<!-- report.py --summary -->" if summary else "<!-- report.py -->", "<!-- /report.py -->"
    lines = text.split("\n")
    try:
        b = lines.index(begin)
        e = lines.index(end, b + 1)
    except ValueError:
        raise ValueError("no lines %r and %r after it" % (begin, end))
    return "\n".join(lines[:b + 1] + table_md.rstrip("\n").split("\n") + lines[e:])

def table(files, summary):
    ds = [json.load(open(p)) for p in files]
    m, rows = ds[0]["meta"], [r for d in ds for r in d["rows"]]
    if len(ds) > 1:
        print("Joined from %d parts: %s.\n" % (len(ds), "; ".join("%s (gk %s, part %s, %d rows)" % (
            d["meta"]["date"], d["meta"].get("gk_commit") or d["meta"]["gk_version"], d["meta"].get("part", "?"),
            len(d["rows"])) for d in ds)))
    print("%s, %s, torch %s, gk %s; %d timed runs per median; cudaMemcpy D2D %.0f GB/s (1 GiB, read + write)\n" % (
        m["date"], m["gpu"], m["peer_version"], m.get("gk_commit") or m["gk_version"], m["reps"], m.get("copy_GBs") or 0))
    print(HEAD)
    if summary:
        for op, sh, dt in SUMMARY:
            for r in rows:
                if r["op"] == op and r["dtype"] == dt and (sh is None or shape(r) == sh):
                    print(row(r)); break
    else:
        for r in rows: print(row(r))
        missed = [r for r in rows if r.get("met") is False]
        print("\n%d cases: %d targets met, %d missed, %d without a verdict." % (
            len(rows), sum(1 for r in rows if r.get("met")), len(missed), sum(1 for r in rows if r.get("met") is None)))
        halves(rows, m.get("reps") or 20)

def halves(rows, reps):
    """The cases whose gk kernel ran > 5 % apart in the two halves of its timed runs (before and after the
    peers): a state of the card that changed within the case.  A statement of one kernel runs it once a
    step, so the last `reps` of its times_us (GK_PROFILE=2) are the timed runs, reps // 2 of them first."""
    odd = []
    for r in rows:
        ks = r.get("gk_kernels") or []
        t = (ks[0].get("times_us") or []) if len(ks) == 1 else []
        if len(t) != (ks[0]["launches"] if ks else -1) or len(t) <= reps: continue
        h = [statistics.median(t[-reps:-(reps - reps // 2)]), statistics.median(t[-(reps - reps // 2):])]
        if min(h) > 0 and max(h) > 1.05 * min(h): odd.append((r, ks[0], h))
    if not odd: return
    print("\ngk's two halves more than 5 % apart (µs, the median of each half's runs; settle: ms the case "
          "waited for the card, probes):\n")
    print("| operation | shape | dtype | kernel | before the peers | after | min | settle |\n|---|---|---|---|---|---|---|---|")
    for r, k, h in odd:
        print("| %s | %s | %s | `%s` | %.1f | %.1f | %.1f | %s |" % (SRC.get(r["op"], r["op"]), shape(r), r["dtype"],
              k["name"], h[0], h[1], k["min_us"], "–" if r.get("settle_ms") is None else
              "%s ms, %d" % (r["settle_ms"], r.get("settle_probes", 0))))

if __name__ == "__main__":
    main()
