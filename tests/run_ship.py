#!/usr/bin/env python3
"""The shipped kernels (kernels/ship.py, `make kernels`), without a GPU.

1. Every statement of the standard list runs and lowers on the cpu backend
   (ship.py --check): the list stays valid as the language changes.
2. With NVRTC: a few statements shipped into a folder of their own, then
   probed (GK_NVRTC_CHECK=shipped computes the key the cuda backend looks up
   and reads the folder): the same structures at another length are found,
   a fused statement is not, GK_KERNELS=0 and a missing folder find nothing;
   a second ship run compiles nothing again and drops the kernels no
   statement asks for any more.
Prints `N passed, M failed`.
"""
import os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.environ.get("B", "build")
GK = os.path.join(ROOT, B, "gk") if not os.path.isabs(B) else os.path.join(B, "gk")
SHIP = os.path.join(ROOT, "kernels", "ship.py")
passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    if ok: passed += 1
    else:
        failed += 1
        print("FAIL %s%s" % (what, ("\n" + detail) if detail else ""))


def gk(tmp, stmts, **env):
    p = subprocess.run([GK, "--backend", "cpu"] + sum([["-e", s] for s in stmts], []), cwd=tmp,
                       env=dict(os.environ, **env), capture_output=True, text=True, timeout=300)
    return p.returncode, p.stderr


def probe(tmp, stmts, kernels, **env):
    rc, err = gk(tmp, stmts, GK_NVRTC_CHECK="shipped", GK_KERNELS=kernels, **env)
    return rc, [l.split(": ", 1)[1].rsplit(" ", 1)[0] for l in err.splitlines() if "shipped gk_" in l], err


def main():
    p = subprocess.run([sys.executable, SHIP, "--gk", GK, "--check", "-j", str(os.cpu_count() or 2)],
                       capture_output=True, text=True)
    check("the standard list lowers (ship.py --check)", p.returncode == 0, p.stdout + p.stderr[-3000:])
    tmp = tempfile.mkdtemp(prefix="gk_ship_test_")
    rc, err = gk(tmp, ["print(sum(iota(10)))"], GK_NVRTC_CHECK="1")
    if "gk-nvrtc: skipped" in err:
        print("run_ship: NVRTC not found: the ship and probe checks are skipped")
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
    rc, err = gk(tmp, ['save("x.npy", rand(300007))', 'save("y.npy", rand(300007))', 'save("xs.npy", rand(777))',
                       'save("ys.npy", rand(777))'])
    check("inputs", rc == 0, err)
    base = ['x = load("%s/x.npy")' % tmp, 'y = load("%s/y.npy")' % tmp]   # ship.py runs in a folder of its own
    std = ['print(sum(x))', 'save("o.npy", scan(x))', 'save("o.npy", x[x > 0.37])', 'save("o.npy", sort(x))']
    std = [st.replace('"o.npy"', '"%s/o.npy"' % tmp) for st in std]
    with open(os.path.join(tmp, "list.gk"), "w") as f: f.write("\n".join(base + std) + "\n")
    out = os.path.join(tmp, "kernels")
    p = subprocess.run([sys.executable, SHIP, "--gk", GK, "--out", out, "--stmts", os.path.join(tmp, "list.gk")],
                       capture_output=True, text=True, cwd=tmp)
    n = len(os.listdir(out)) if os.path.isdir(out) else 0
    check("ship.py writes one kernel per structure", p.returncode == 0 and n == 4, "%d kernels\n%s%s" % (
        n, p.stdout, p.stderr[-2000:]))
    # the same structures at another length (same size classes: sort's 777 is a one-block sort, not shipped)
    small = ['x = load("xs.npy")', 'y = load("ys.npy")']
    rc, got, err = probe(tmp, small + std[:3], out)
    check("found at another length", rc == 0 and got == ["shipped"] * 3, err)
    rc, got, err = probe(tmp, base + std[3:], out)
    check("the global sort found", rc == 0 and got == ["shipped"], err)
    rc, got, err = probe(tmp, small + ['print(sum(x * y + 1))', 'save("o.npy", sort(x))'], out)
    check("a fused statement and another size class are not shipped", rc == 0 and got == ["not shipped"] * 2, err)
    # NVRTC options are part of the key, but --no-cache (NVRTC's own cache off) changes no binary
    rc, got, err = probe(tmp, small + std[:1], out, GK_NVRTC_OPTS="--no-cache")
    check("GK_NVRTC_OPTS=--no-cache finds them", rc == 0 and got == ["shipped"], err)
    rc, got, err = probe(tmp, small + std[:1], out, GK_NVRTC_OPTS="--no-cache -Xptxas=-O1")
    check("GK_NVRTC_OPTS=-Xptxas=-O1 does not", rc == 0 and got == ["not shipped"], err)
    rc, got, err = probe(tmp, small + std[:1], "0")
    check("GK_KERNELS=0 finds nothing", rc == 0 and got == ["not shipped"], err)
    rc, got, err = probe(tmp, small + std[:1], os.path.join(tmp, "nope"))
    check("a missing folder finds nothing", rc == 0 and got == ["not shipped"], err)
    # again, with one statement fewer: nothing compiled, the sort's kernel dropped
    with open(os.path.join(tmp, "list.gk"), "w") as f: f.write("\n".join(base + std[:3]) + "\n")
    p = subprocess.run([sys.executable, SHIP, "--gk", GK, "--out", out, "--stmts", os.path.join(tmp, "list.gk")],
                       capture_output=True, text=True, cwd=tmp)
    check("a second run reuses and prunes", p.returncode == 0 and "3 kernels" in p.stdout and
          "1 stale" in p.stdout, p.stdout + p.stderr[-2000:])
    rc, got, err = probe(tmp, small + std[:3], out)
    check("still found after the second run", rc == 0 and got == ["shipped"] * 3, err)
    subprocess.run(["rm", "-rf", tmp])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
