#!/usr/bin/env python3
"""tests/run_plan.py -- fusion tests: each tests/plan/*.gk states
`# expect kernels: N`; `gk --plan FILE` must end with `kernels: M`, M <= N,
and the program's output must be the same with GK_FUSION=0."""
import concurrent.futures, glob, os, re, subprocess, sys

B = os.environ.get("B", "build")
gk = os.path.abspath(os.path.join(B, "gk"))
backend = []
if "--backend" in sys.argv:
    backend = ["--backend", sys.argv[sys.argv.index("--backend") + 1]]
here = os.path.dirname(os.path.abspath(__file__))


def check(path):
    """The problems of one plan test (an empty list when it passes)."""
    name = os.path.basename(path)
    want = re.search(r"#\s*expect kernels:\s*(\d+)", open(path).read())
    problems = []
    if not want:
        return ["no '# expect kernels: N' line"]

    def go(args, env=None):
        e = dict(os.environ)
        e.update(env or {})
        try:
            return subprocess.run([gk] + backend + args + [name], cwd=os.path.dirname(path), env=e,
                                  capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, 124, "", "timed out after 300 s")
    p = go(["--plan"])
    m = re.findall(r"^kernels: (\d+)$", p.stdout, re.M)
    if p.returncode != 0:
        problems.append("exit %d: %s" % (p.returncode, p.stderr.strip()))
    elif not m:
        problems.append("no 'kernels: N' line")
    elif int(m[-1]) > int(want.group(1)):
        problems.append("kernels: %s, expected at most %s" % (m[-1], want.group(1)))
    fused = go([])
    unfused = go([], {"GK_FUSION": "0"})
    if fused.stdout != unfused.stdout or fused.returncode != unfused.returncode:
        problems.append("GK_FUSION=0 changes the output:\n%s---\n%s" % (fused.stdout[:2000], unfused.stdout[:2000]))
    return problems


jobs = int(os.environ.get("J", os.cpu_count() or 4))
paths = sorted(glob.glob(os.path.join(here, "plan", "*.gk")))
passed = failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for path, problems in zip(paths, pool.map(check, paths)):
        if problems:
            failed += 1
            print("FAIL %s\n  %s" % (os.path.basename(path), "\n  ".join(problems)), flush=True)
        else:
            passed += 1
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
