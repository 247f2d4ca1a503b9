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
    print("| case | kernel | grid × block | regs | occupancy % | duration | DRAM % | memory throughput | SM % | L2 hit % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kid in order:
        k = ks[kid]
        g = lambda key: k.get(key, ("–", ""))[0]
        dur = k.get("dur", ("", ""))
        mem = k.get("mem", ("", ""))
        print("| %s | %s | %s × %s | %s | %s | %s %s | %s | %s %s | %s | %s |" % (
            cases.get(k["name"], "?"), k["name"], g("grid"), g("block"), g("regs"), g("occ"), dur[0], dur[1],
            g("dram%"), mem[0], mem[1], g("sm%"), g("l2hit")))

if __name__ == "__main__":
    main()
