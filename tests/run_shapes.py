#!/usr/bin/env python3
"""tests/run_shapes.py -- one kernel text serves many sizes (issue 11).

Each statement runs on ten sizes in one process on the cpu backend with
GK_NVRTC_CHECK=names (every group is lowered to CUDA C and compiled with
NVRTC, and its kernel name printed) and GK_PLAN_CACHE=verify.  Sizes are
kernel parameters, so the kernel names of all ten sizes must be the names of
the first size times the number of size classes the sizes span (a size class
is what selects another primitive variant: warp-per-row vs block-per-row,
here).  Also checks that every kernel compiled and that the ten results
equal those of ten fresh processes (GK_PLAN_CACHE=0), so a plan reused for
a new size computes the new size.  No GPU needed; skipped without NVRTC.
Prints `N passed, M failed`.
"""
import os, re, subprocess, sys, tempfile

B = os.environ.get("B", "build")
GK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", B, "gk") if not os.path.isabs(B) else os.path.join(B, "gk")

# 1-d: all of one class (n > 1, 32-bit indices, 16-byte aligned)
LENS = [3, 31, 33, 100, 1000, 4097, 65537, 100003, 1000003, 1048577]
VEC = ["sum(x)", "mean(x)", "var(x)", "max(x), argmin(x)", "scan(x)", "exscan(x, max)", "x[x > 0.5]",
       "partition(x, x > 0.5)", "sum(exp(x - max(x)))", "logsumexp(x)", "hist(x, 10)", "hist(x, 16, 0.25, 0.75)",
       "x * 2.5 + 1", "x[1:]  * 2", "sum(x * x) / len(x)"]
# matrices: five shapes with rows held by one warp (C <= 1024 floats), five
# by one block of 128 threads (1024 < C <= 2048): two classes.  A row that
# fills its packs exactly (1024 = 32 lanes x 8 x 4, 2048 = 128 x 4 x 4) is a
# class of its own for light programs (policy FULL): FULL below, one class.
WARP = [(300, 516), (301, 600), (333, 772), (400, 1000), (512, 1020)]
BLOCK = [(300, 1028), (301, 1100), (333, 1500), (400, 1800), (512, 2044)]
FULL = [(300, 1024), (301, 1024), (333, 1024), (37, 1024), (512, 1024)]
MAT = ["softmax(rows(m))", "layernorm(rows(m))", "sum(rows(m))", "mean(rows(m)), max(rows(m))", "rows(m) - mean(rows(m))",
       "scan(rows(m))", "transpose(m)", "sum(cols(m))", "m * 3 + 1"]
# column sums, maps and the transpose do not depend on the row width's class
ONE_CLASS = {"transpose(m)", "sum(cols(m))", "m * 3 + 1", "scan(rows(m))"}

passed = failed = 0


def run(prog, env_extra):
    env = dict(os.environ, **env_extra)
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([GK, "--backend", "cpu", "-e", prog], capture_output=True, text=True, env=env, cwd=d,
                           timeout=600)
    return p


def names(stderr):
    return re.findall(r"^gk-nvrtc: kernel (gk_[0-9a-f]{16})", stderr, re.M)


def check(stmt, sizes, mk, classes):
    global passed, failed
    prog = " ".join("%s print(%s);" % (mk(s), stmt) for s in sizes)
    env = {"GK_NVRTC_CHECK": "names", "GK_PLAN_CACHE": "verify", "GK_THREADS": "1"}
    first = run("%s print(%s);" % (mk(sizes[0]), stmt), env)
    allp = run(prog, env)
    n1, na = set(names(first.stderr)), set(names(allp.stderr))
    comp = re.search(r"gk-nvrtc: (\d+) compiled, (\d+) failed", allp.stderr)
    fresh = "".join(run("%s print(%s);" % (mk(s), stmt), {"GK_PLAN_CACHE": "0"}).stdout for s in sizes)
    ok = (first.returncode == 0 and allp.returncode == 0 and n1 and len(na) == len(n1) * classes and n1 <= na and
          comp and comp.group(2) == "0" and int(comp.group(1)) == len(na) and allp.stdout == fresh)
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %-34s %d sizes: %d kernel names (expected %d x %d classes); %s; same results as fresh runs: %s"
              % (stmt, len(sizes), len(na), len(n1), classes, comp.group(0) if comp else "no compile summary",
                 allp.stdout == fresh))
        sys.stdout.write((allp.stderr + first.stderr)[-1500:])
    return len(n1), len(na)


def main():
    probe = run("sum(iota(10))", {"GK_NVRTC_CHECK": "1"})
    if "gk-nvrtc: skipped" in probe.stderr:
        print("run_shapes: skipped: NVRTC not found")
        print("0 passed, 0 failed")
        return 0
    for st in VEC:
        k1, ka = check(st, LENS, lambda n: "seed(7); x = rand(%d);" % n, 1)
        print("  %-34s 10 lengths: %d kernel(s) per size, %d in all" % (st, k1, ka))
    for st in MAT:
        cl = 1 if st in ONE_CLASS else 2
        k1, ka = check(st, WARP + BLOCK, lambda rc: "seed(7); m = randn(%d, %d);" % rc, cl)
        print("  %-34s 10 shapes: %d kernel(s) per size, %d in all (%d size class%s)"
              % (st, k1, ka, cl, "es" if cl > 1 else ""))
    for st in MAT:
        if st in ONE_CLASS: continue
        k1, ka = check(st, FULL, lambda rc: "seed(7); m = randn(%d, %d);" % rc, 1)
        print("  %-34s 5 shapes filling the packs: %d kernel(s) per size, %d in all" % (st, k1, ka))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
