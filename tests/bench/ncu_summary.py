#!/usr/bin/env python3
"""One line per gk kernel from the ncu CSV of device_run.sh (tests/bench/ncu_summary.py).

    python3 tests/bench/ncu_summary.py ncu.csv ncu_cases.log

ncu_cases.log (ncu_gk.py's stderr) names the case of each kernel.  DRAM
bytes = ncu's DRAM throughput x duration, so "dram/min" is the bytes the
kernel moved over the fewest it must move (the case's inputs + outputs).
"""
import csv, re, sys

WANT = {"Duration": "dur", "DRAM Throughput": "dram%", "Memory Throughput": "mem", "Compute (SM) Throughput": "sm%",
        "Registers Per Thread": "regs", "Block Size": "block", "Grid Size": "grid", "Achieved Occupancy": "occ",
        "L2 Hit Rate": "l2hit", "L1/TEX Hit Rate": "l1hit", "Mem Busy": "membusy", "Max Bandwidth": "maxbw",
        "Dynamic Shared Memory Per Block": "dsmem", "Static Shared Memory Per Block": "ssmem"}

def num(v, scale):
    """A (value, unit) pair from the CSV, in the unit scale maps to 1.0; None if absent."""
    if not v or v[1] not in scale: return None
    try: return float(v[0]) * scale[v[1]]
    except ValueError: return None

def main():
    cases = {}
    if len(sys.argv) > 2:
        for line in open(sys.argv[2], errors="replace"):
            m = re.match(r"ncu-case: (.+?) = (gk_\w+) (\w+) ([\d.]+) us", line)
            if m: cases[m.group(2)] = m.group(1)
    ks = {}
    order = []
    with open(sys.argv[1], errors="replace") as fh:
        lines = [l for l in fh if l.startswith('"')]
    for r in csv.DictReader(lines):
        name = r.get("Kernel Name", "")
        kid = (r.get("ID"), name)
        if kid not in ks:
            ks[kid] = {"name": name}
            order.append(kid)
        key = WANT.get(r.get("Metric Name"))
        if key:
            ks[kid][key] = (r.get("Metric Value", "").replace(",", ""), r.get("Metric Unit", ""))
    print("| case | kernel | grid × block | regs | occupancy % | µs | DRAM % | DRAM GB/s | DRAM bytes | SM % | L2 hit % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kid in order:
        k = ks[kid]
        g = lambda key: k.get(key, ("–", ""))[0]
        dur = num(k.get("dur"), {"ns": 1e-3, "us": 1.0, "ms": 1e3})
        mem = num(k.get("mem"), {"byte/s": 1e-9, "Kbyte/s": 1e-6, "Mbyte/s": 1e-3, "Gbyte/s": 1.0, "Tbyte/s": 1e3})
        moved = "%.0f MB" % (dur * mem * 1e-3) if dur is not None and mem is not None else "–"
        print("| %s | %s | %s × %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            cases.get(k["name"], "?"), k["name"], g("grid"), g("block"), g("regs"), g("occ"),
            "%.1f" % dur if dur is not None else "–", g("dram%"), "%.0f" % mem if mem is not None else "–", moved,
            g("sm%"), g("l2hit")))

if __name__ == "__main__":
    main()
