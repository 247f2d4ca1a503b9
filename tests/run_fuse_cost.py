#!/usr/bin/env python3
"""tests/run_fuse_cost.py -- fusion is capped by estimated compile cost (issue 12 item 7).

100 chained `sin` were one kernel that NVRTC compiled for 131 s.  The planner
now cuts a pending elementwise chain whose estimated cost (compiler/fuse.c
fuse_cost: sin 32, exp 8, arithmetic 1) passes CC_MAX_FUSE_COST (160), so no
kernel of such a chain inlines more than 6 sins; a chain of 100 cheap ops
stays one kernel.  Checked on --plan of the cpu backend (the plan is
the same on every backend): the number of kernels, the sins per kernel, and
that the printed result equals the unfused run's (GK_FUSION=0).  With NVRTC
present, one of the kernels is compiled (GK_NVRTC_CHECK=time) and must
compile, as a sanity bound, in under 60 s.  Prints `N passed, M failed`.
"""
import os, re, subprocess, sys

B = os.environ.get("B", "build")
GK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", B, "gk") if not os.path.isabs(B) else os.path.join(B, "gk")
passed = failed = 0


def gk(args, env=None):
    e = dict(os.environ, GK_THREADS="1", **(env or {}))
    return subprocess.run([GK, "--backend", "cpu"] + args, capture_output=True, text=True, env=e, timeout=300)


def chain(op, k, x="x"):
    for _ in range(k): x = "%s(%s)" % (op, x)
    return x


def plan_kernels(out):
    """[(kind, number of sin nodes)] per kernel of a --plan printout."""
    ks = []
    for line in out.splitlines():
        if re.match(r"kernel \d+:", line): ks.append([line.split(":")[1].split("(")[0].strip(), 0])
        elif ks and re.match(r"\s*%\d+ = sin\b", line): ks[-1][1] += 1
    return ks


def case(name, prog, want_min, want_max, max_sins):
    global passed, failed
    p = gk(["--plan", "-e", prog])
    ks = plan_kernels(p.stdout)
    plain = gk(["-e", prog])
    unf = gk(["-e", prog], {"GK_FUSION": "0"})
    worst = max((k[1] for k in ks), default=0)
    ok = (p.returncode == 0 and want_min <= len(ks) <= want_max and worst <= max_sins and plain.returncode == 0 and
          plain.stdout == unf.stdout and plain.stdout.strip())
    if ok: passed += 1
    else:
        failed += 1
        print("FAIL %s: %d kernels (want %d..%d), at most %d sins in one (want <= %d), output %r vs unfused %r %s"
              % (name, len(ks), want_min, want_max, worst, max_sins, plain.stdout.strip(), unf.stdout.strip(),
                 (p.stderr + plain.stderr)[-500:]))
    print("  %-28s %d kernels, at most %d sins per kernel" % (name, len(ks), worst))


def main():
    global passed, failed
    pre = "seed(3); x = rand(1000); "
    case("100 chained sin", pre + "print(sum(%s))" % chain("sin", 100), 17, 25, 6)
    case("100 chained sin, no reduce", pre + "y = %s; print(y[0], y[999])" % chain("sin", 100), 17, 25, 6)
    case("rand and 4 sins stay fused", pre + "print(sum(%s))" % chain("sin", 4), 1, 1, 4)
    case("100 chained adds stay fused", pre + "y = x; " + "y = y * 0.5 + 1; " * 50 + "print(sum(y))", 1, 1, 0)
    case("x = sin(x) + cos(x) x 60", "seed(3); x = rand(1000); " + "x = sin(x) + cos(x); " * 60 + "print(sum(x))",
         2, 80, 6)
    probe = gk(["-e", "sum(iota(10))"], {"GK_NVRTC_CHECK": "1"})
    if "gk-nvrtc: skipped" not in probe.stderr:
        p = gk(["-e", pre + "print(sum(%s))" % chain("sin", 12)], {"GK_NVRTC_CHECK": "time"})
        ms = [float(m) for m in re.findall(r"compiled in ([\d.]+) ms", p.stderr)]
        if p.returncode == 0 and len(ms) >= 2 and max(ms) < 60000: passed += 1
        else:
            failed += 1
            print("FAIL 12 chained sin under NVRTC: %s" % (ms or p.stderr[-500:]))
        print("  12 chained sin, NVRTC ms per kernel: %s" % " ".join("%.0f" % m for m in ms))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
