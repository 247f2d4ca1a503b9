#!/usr/bin/env python3
"""gkdiff: a differential tester of gk against numpy.

Generates random well-typed gk programs (tests/diff/gen.py), computes each
one's expected results with numpy in float64 with a propagated error bound
(tests/diff/model.py), runs them through build/gk -- many programs per gk
process, under several configurations (default, GK_FUSION=0, GK_PLAN_CACHE=0,
GK_THREADS=1; on --backend cuda also the cpu backend, and cuda is compared
with numpy and with cpu) -- and reports every program whose saved or printed
values, dtype or shape differ, or that gk rejected, crashed on or timed out.

  gkdiff.py [-n N] [--seed S] [-j J] [--backend cpu|cuda] [--batch K]
            [--big-every B] [--prog I] [--no-minimise] [--keep DIR] [-v]

--seed S with --prog I regenerates and reruns program I of seed S alone (the
failure lines print that command); failing programs are minimised
(statements and subexpressions removed while the program still fails the same
way) and the small program is printed.  The last line is `N passed, M failed`.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))   # tests/: run_gk.py, numpy_check.py
warnings.simplefilter("ignore")

import gen as Gm      # noqa: E402
import model as M     # noqa: E402
from model import Reject  # noqa: E402
from run_gk import find_gk  # noqa: E402

K_TOL = 2.0   # a float result may differ from the reference by K_TOL * its bound


def configs(backend):
    c = [("default", {}), ("nofusion", {"GK_FUSION": "0"}), ("noplancache", {"GK_PLAN_CACHE": "0"})]
    if backend == "cuda":
        c.append(("cpu", {"GK_BACKEND_OVERRIDE": "cpu"}))
    else:
        c.append(("threads1", {"GK_THREADS": "1"}))
    return c


def prog_seed(base, i):
    return (base * 1000003 + i * 7919 + 12345) % (2 ** 62)


class Ctx:
    def __init__(self, gk, backend, timeout, verbose):
        self.gk, self.backend, self.timeout, self.verbose = gk, backend, timeout, verbose

    def run(self, src, cwd, env_extra, backend=None):
        env = dict(os.environ)
        be = backend or self.backend
        if be == "cuda" and os.environ.get("GKDIFF_CUDA_AS"):
            be = os.environ["GKDIFF_CUDA_AS"]   # tests the cuda paths of this script without a GPU
        if "GK_BACKEND_OVERRIDE" in env_extra:
            be = env_extra["GK_BACKEND_OVERRIDE"]
        env.update({k: v for k, v in env_extra.items() if k != "GK_BACKEND_OVERRIDE"})
        path = os.path.join(cwd, "prog.gk")
        with open(path, "w") as f:
            f.write(src + "\n")
        cmd = [self.gk, "--backend", be, "prog.gk"]
        try:
            p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, env=env, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return None, "", "timed out after %g s" % self.timeout
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


# ----------------------------------------------------------------- comparison

def cmp_value(got, v, what):
    """None if the gk array `got` matches the model value v, else a message."""
    want_dt = v.dt
    if got.dtype != want_dt:
        return "%s: dtype %s, expected %s" % (what, got.dtype, want_dt)
    if got.shape != v.shape:
        return "%s: shape %s, expected %s" % (what, got.shape, v.shape)
    return cmp_numbers(got.astype(np.float64) if got.dtype.kind == "f" else got, v, what, 0.0)


def cmp_numbers(got, v, what, ptol):
    """got: array (ints exact, floats float64); ptol: extra relative+abs slack (prints)."""
    h = v.hi
    if v.dt in M.INTS:
        g = np.asarray(got)
        if v.dt == M.B_:
            same = (g.astype(bool) == h) if g.dtype.kind != "f" else ((g != 0) == h)
        else:
            same = g.astype(np.float64) == h.astype(np.float64) if g.dtype.kind == "f" else g.astype(np.int64) == h.astype(np.int64)
        same = np.asarray(same)
        if same.all():
            return None
        bad = np.flatnonzero(~same.ravel())
        i = bad[0]
        return "%s: %d of %d differ; first at flat %d: got %r, expected %r" % (
            what, len(bad), same.size, i, np.asarray(got).ravel()[i], h.ravel()[i])
    g = np.asarray(got, dtype=np.float64).ravel()
    r = h.ravel()
    e = v.e.ravel()
    rn, gn = np.isnan(r), np.isnan(g)
    fin = np.isfinite(r)
    bad = (gn != rn) | (~fin & ~rn & (g != r))
    if v.exact and ptol == 0:
        bad |= fin & (g != r)
    else:
        tol = K_TOL * e + 4 * M.U(v.dt) * np.abs(r) * (0 if v.exact else 1) + ptol * (np.abs(r) + 1) + 1e-37
        bad |= fin & ~(np.abs(g - r) <= tol)
    if not bad.any():
        return None
    i = np.flatnonzero(bad)[0]
    return "%s: %d of %d differ; first at flat %d: got %r, expected %r (bound %.3g%s)" % (
        what, bad.sum(), bad.size, i, g[i], r[i], K_TOL * e[i], ", exact" if v.exact else "")


TOK = re.compile(r"[^\s\[\]]+")


def parse_print(text, n):
    """The printed values of one print's segment: list of arrays of numbers."""
    out = []
    for part in re.split(r"(?:^|\s)@(?=\s|$)", text):
        toks = TOK.findall(part)
        vals = []
        for t in toks:
            if t == "true":
                vals.append(1.0)
            elif t == "false":
                vals.append(0.0)
            else:
                try:
                    vals.append(float(t))
                except ValueError:
                    vals.append(None)
        out.append(vals)
    return out


def check_outputs(prog, obs, outdir, stdout, refdir=None):
    """Compares one program's observations; returns a list of failure messages
    (first one per observation), [] when everything matches."""
    fails = []
    tags = {}
    for m in re.finditer(r"@(a\d+_p\d+) ", stdout + " "):
        tags[m.group(1)] = m.end()
    for s in prog.stmts:
        if s.kind == "save":
            path = os.path.join(outdir, s.name + ".npy")
            if not os.path.exists(path):
                fails.append(("missing", "save %s: no output" % s.name))
                continue
            try:
                got = np.load(path)
            except Exception as ex:  # noqa
                fails.append(("wrong", "save %s: unreadable (%s)" % (s.name, ex)))
                continue
            msg = cmp_value(got, obs[s.name][0], "save %s" % s.name)
            if msg is None and refdir is not None:
                msg = cmp_backends(got, np.load(os.path.join(refdir, s.name + ".npy")), obs[s.name][0],
                                   "save %s vs cpu" % s.name) if os.path.exists(os.path.join(refdir, s.name + ".npy")) else None
            if msg:
                fails.append(("wrong", msg))
        elif s.kind == "print":
            if s.name not in tags:
                fails.append(("missing", "print %s: no output" % s.name))
                continue
            start = tags[s.name]
            nxt = stdout.find("\n@a", start)
            seg = stdout[start:] if nxt < 0 else stdout[start:nxt]
            parts = parse_print(seg, len(s.exprs))
            vs = obs[s.name]
            if len(parts) != len(vs):
                fails.append(("wrong", "print %s: %d values printed, expected %d: %r" % (
                    s.name, len(parts), len(vs), seg[:200])))
                continue
            for j, (vals, v) in enumerate(zip(parts, vs)):
                if len(vals) != v.size or any(x is None for x in vals):
                    fails.append(("wrong", "print %s[%d]: printed %r, expected %d numbers" % (
                        s.name, j, seg[:200], v.size)))
                    break
                msg = cmp_numbers(np.array(vals).reshape(v.shape), v, "print %s[%d]" % (s.name, j), 1e-5)
                if msg:
                    fails.append(("wrong", msg + " printed %r" % seg[:160]))
                    break
    return fails


def cmp_backends(got, ref, v, what):
    """cuda vs cpu: ints and exact floats identical, floats within twice the bound."""
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return "%s: shape/dtype %s %s vs %s %s" % (what, got.shape, got.dtype, ref.shape, ref.dtype)
    if got.dtype.kind != "f" or v.exact:
        if np.array_equal(got, ref, equal_nan=got.dtype.kind == "f"):
            return None
        return "%s: differ" % what
    g, r = got.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    gn, rn = np.isnan(g), np.isnan(r)
    fin = np.isfinite(g) & np.isfinite(r)
    d = np.where(fin, np.abs(g - r), 0.0)
    tol = 2 * K_TOL * v.e.ravel() + 8 * M.U(v.dt) * np.abs(v.hi.ravel()) + 1e-37
    tol = np.where(np.isnan(tol), np.inf, tol)       # no bound known (the reference's error is nan)
    # NaN where the other is NaN, an infinity where the other is the same one
    bad = (gn != rn) | (~fin & ~gn & ~rn & (g != r)) | (fin & ~(d <= tol))
    if not bad.any():
        return None
    i = int(np.flatnonzero(bad)[0])
    return "%s: differ at flat %d: cuda %r, cpu %r (bound %.3g)" % (what, i, g[i], r[i], tol[i])


# ----------------------------------------------------------------- running

class Batch:
    """Programs run together in one gk process per configuration."""

    def __init__(self, ctx, progs, workdir):
        self.ctx, self.progs, self.dir = ctx, progs, workdir

    def write_inputs(self, indir):
        os.makedirs(indir, exist_ok=True)
        for p in self.progs:
            for k, a in p.inputs.items():
                np.save(os.path.join(indir, p.prefix() + k + ".npy"), a)


def prepass(ctx, plans, d):
    """Draws the rand/randn leaves with gk (cpu): numpy cannot compute Philox."""
    lines = []
    for p, _ in plans:
        if p.rands:
            lines.append("seed(%d)" % p.rseed)
            for key, kind, dims in p.rands:
                lines.append('save("%s.npy", %s(%s))' % (key, kind, ", ".join(map(str, dims))))
    vals = {}
    if not lines:
        return vals
    os.makedirs(d, exist_ok=True)
    rc, out, err = ctx.run("\n".join(lines), d, {}, backend="cpu")
    if rc != 0:
        raise RuntimeError("rand prepass failed: %s" % err)
    for p, _ in plans:
        for key, kind, dims in p.rands:
            vals[key] = np.load(os.path.join(d, key + ".npy"))
    return vals


def build_programs(base, ids, big_every, ctx, d):
    plans = [Gm.plan(i, prog_seed(base, i), big_every) for i in ids]
    rvals = prepass(ctx, plans, os.path.join(d, "rand"))
    progs = []
    for p, g in plans:
        try:
            Gm.generate(p, g, rvals)
            obs = p.model(rvals)
        except Reject:
            continue
        except Exception as ex:  # noqa: a model corner the generator should have avoided
            if ctx.verbose:
                print("generator: program %d dropped (%r)" % (p.pid, ex))
            continue
        progs.append((p, obs))
    return progs, rvals


def run_configs(ctx, progs, d, cfgs):
    """Runs the programs (list of (Program, obs)) in one process per config.
    Returns {pid: [(config, kind, message)]} and the set of pids with results."""
    indir = os.path.join(d, "in") + "/"
    os.makedirs(indir, exist_ok=True)
    for p, _ in progs:
        for k, a in p.inputs.items():
            np.save(os.path.join(indir, p.prefix() + k + ".npy"), a)
    src = "\n".join(p.source(indir) for p, _ in progs)
    res = {p.pid: [] for p, _ in progs}
    refdir = None
    for cname, env in cfgs:
        cd = os.path.join(d, cname)
        if os.path.exists(cd):
            shutil.rmtree(cd)
        os.makedirs(cd)
        rc, out, err = ctx.run(src, cd, env)
        crashed = None
        if rc is None:
            crashed = ("timeout", err)
        elif rc not in (0,):
            first = err.strip().split("\n")[0] if err.strip() else ""
            if rc < 0 or rc > 2:
                crashed = ("crash", "exit status %s: %s" % (rc, first))
            else:
                crashed = ("error", first)
        seen_fail = False
        for p, obs in progs:
            fl = check_outputs(p, obs, cd, out, refdir if cname != "cpu" else None)
            if fl:
                seen_fail = True
            for kind, msg in fl:
                if crashed and (kind == "missing" or seen_fail):
                    # output cut short by the crash: the crash is the failure
                    kind, msg = crashed[0], crashed[1] + " (" + msg + ")"
                res[p.pid].append((cname, kind, msg))
        if crashed and not seen_fail:
            res.setdefault("batch", []).append((cname, crashed[0], crashed[1]))
    if ctx.backend == "cuda":
        # cuda results against the cpu backend's
        cpu = os.path.join(d, "cpu")
        for p, obs in progs:
            for s in p.stmts:
                if s.kind != "save":
                    continue
                a, b = os.path.join(d, "default", s.name + ".npy"), os.path.join(cpu, s.name + ".npy")
                if os.path.exists(a) and os.path.exists(b):
                    msg = cmp_backends(np.load(a), np.load(b), obs[s.name][0], "save %s cuda vs cpu" % s.name)
                    if msg:
                        res[p.pid].append(("cuda-vs-cpu", "wrong", msg))
    return res


def signature(fails):
    """What kind of failure, for the minimiser: (config, kind, message shape)."""
    c, k, m = fails[0]
    if k in ("error", "crash"):
        m2 = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", m.split("(")[0])
        m2 = re.sub(r"^[^:]*:#:#: ", "", m2)
        return (c, k, m2)
    return (c, k, "")


def run_one(ctx, prog, obs, d, cfgs):
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    return run_configs(ctx, [(prog, obs)], d, cfgs)[prog.pid]


def minimise(ctx, prog, rvals, sig, d, budget_s=60):
    """Removes statements and subexpressions while the program fails the same way."""
    t0 = time.time()
    cfgs = [c for c in configs(ctx.backend) if c[0] == sig[0]] or configs(ctx.backend)[:1]
    if sig[0] == "cuda-vs-cpu":
        cfgs = [c for c in configs(ctx.backend) if c[0] in ("default", "cpu")]

    def fails(p):
        try:
            obs = p.model(rvals)
        except Reject:
            return False
        except Exception:
            return False
        r = run_one(ctx, p, obs, d, cfgs)
        if not r:
            return False
        return any(signature([f]) == sig for f in r)

    cur = prog.copy()
    changed = True
    while changed and time.time() - t0 < budget_s:
        changed = False
        # 1. drop statements
        i = len(cur.stmts) - 1
        while i >= 0 and time.time() - t0 < budget_s:
            if cur.stmts[i].kind in ("rand", "seed"):
                i -= 1      # the rand stream's order must stay as the prepass drew it
                continue
            c = cur.copy()
            del c.stmts[i]
            if fails(c):
                cur, changed = c, True
            i -= 1
        # 2. drop print arguments
        for si, s in enumerate(cur.stmts):
            if s.kind == "print" and len(s.exprs) > 1:
                for j in range(len(s.exprs)):
                    c = cur.copy()
                    del c.stmts[si].exprs[j]
                    if fails(c):
                        cur, changed = c, True
                        break
        # 3. replace a subexpression by one of its children
        for si in range(len(cur.stmts)):
            s = cur.stmts[si]
            if s.kind not in ("assign", "save", "print"):
                continue
            for ei in range(len(s.exprs)):
                progress = True
                while progress and time.time() - t0 < budget_s:
                    progress = False
                    nodes = []
                    collect(cur.stmts[si].exprs[ei], (), nodes)
                    for path, node in nodes:
                        for ch in range(len(node.args)):
                            c = cur.copy()
                            replace(c.stmts[si], ei, path, c_get(c.stmts[si].exprs[ei], path).args[ch])
                            if fails(c):
                                cur, changed, progress = c, True, True
                                break
                        if progress:
                            break
    # finally: drop the loads and assignments nothing uses, if it still fails
    c = cur.copy()
    used = set()
    for st in c.stmts:
        for e in st.exprs:
            nodes = []
            collect(e, (), nodes)
            used |= {n.at["name"] for _, n in nodes if n.op == "var"}
    keep_ = [st for st in c.stmts if not (st.kind in ("load", "assign") and st.name not in used)]
    if len(keep_) < len(c.stmts):
        c.stmts = keep_
        c.inputs = {k: a for k, a in c.inputs.items()
                    if any(st.kind == "load" and st.value == k for st in c.stmts)}
        if fails(c):
            cur = c
    return cur


def collect(n, path, out):
    out.append((path, n))
    for i, a in enumerate(n.args):
        collect(a, path + (i,), out)


def c_get(n, path):
    for i in path:
        n = n.args[i]
    return n


def replace(stmt, ei, path, new):
    if not path:
        stmt.exprs[ei] = new.copy()
        return
    n = c_get(stmt.exprs[ei], path[:-1])
    n.args[path[-1]] = new.copy()


def describe(prog, rvals):
    """The program as a standalone script, its small inputs shown inline."""
    lines = []
    for k, a in prog.inputs.items():
        if not any(st.kind == "load" and st.value == k for st in prog.stmts):
            continue
        flat = a.ravel()
        show = np.array2string(a, threshold=12, separator=", ") if a.size <= 12 else \
            "%s ... (%d elements)" % (np.array2string(flat[:4], separator=", "), a.size)
        lines.append("# %s%s.npy: %s%s = %s" % (prog.prefix(), k, a.dtype, list(a.shape), show.replace("\n", " ")))
    lines.append(prog.source(""))
    return "\n".join(lines)


# ----------------------------------------------------------------- main

class Slots:
    """At most N minimisations per run (each takes up to --min-budget seconds)."""
    def __init__(self, n):
        import threading
        self.n, self.lock = n, threading.Lock()

    def take(self):
        with self.lock:
            if self.n <= 0:
                return False
            self.n -= 1
            return True


MIN_SLOTS = Slots(0)


def work(args, ctx, base, ids, tmp):
    d = tempfile.mkdtemp(dir=tmp)
    try:
        progs, rvals = build_programs(base, ids, args.big_every, ctx, d)
        cfgs = configs(ctx.backend)
        res = run_configs(ctx, progs, os.path.join(d, "batch"), cfgs)
        out = []
        batch_fail = res.pop("batch", [])
        alone_crash = False
        for p, obs in progs:
            fl = res[p.pid]
            if fl and len(progs) > 1:
                # rerun alone: a crash elsewhere in the batch hides nothing
                alone = run_one(ctx, p, obs, os.path.join(d, "alone"), cfgs)
                if not alone and all(k in ("missing", "error", "crash", "timeout") for _, k, _ in fl):
                    if fl:
                        batch_fail = batch_fail or fl[:1]
                    fl = []
                elif alone:
                    fl = alone
                else:
                    fl = [("batch",) + f[1:] for f in fl]
            if fl and any(k in ("error", "crash", "timeout") for _, k, _ in fl):
                alone_crash = True
            out.append((p, obs, fl))
        results = []
        if batch_fail and not alone_crash:
            # the batch failed but no program fails alone: gk state left by one
            # program broke a later one; the batch itself is the reproducer
            c, k, m = batch_fail[0]
            results.append((-1 - ids[0], (c, k, "batch-only", c), "FAIL batch of programs %d..%d "
                            "(replay: %s --seed %d -n %d --batch %d, this batch alone fails; every program "
                            "alone passes): [%s] %s: %s" % (ids[0], ids[-1], os.path.relpath(__file__, os.getcwd()),
                                                            base, ids[-1] + 1, len(ids), c, k, m)))
        for p, obs, fl in out:
            if not fl:
                results.append((p.pid, None, None))
                continue
            sig = signature(fl)
            cf = sorted({f[0] for f in fl})
            small = None
            if args.minimise and sig[0] != "batch" and MIN_SLOTS.take():
                try:
                    small = minimise(ctx, p, rvals, sig, os.path.join(d, "min"), args.min_budget)
                except Exception as ex:  # noqa
                    small = None
            txt = ["FAIL program %d (replay: %s --seed %d --prog %d%s): [%s] %s" % (
                p.pid, os.path.relpath(__file__, os.getcwd()), base, p.pid,
                " --backend cuda" if ctx.backend == "cuda" else "", fl[0][0], fl[0][2])]
            for f in fl[1:4]:
                txt.append("     also [%s] %s" % (f[0], f[2]))
            if args.v or not small:
                txt.append("   program:\n" + indent(describe(p, rvals)))
            if small:
                txt.append("   minimised (still fails: [%s] %s):\n%s" % (sig[0], sig[1], indent(describe(small, rvals))))
                if args.keep:
                    keep(args.keep, small, p.pid)
            results.append((p.pid, sig + (",".join(cf),), "\n".join(txt)))
        return results
    finally:
        shutil.rmtree(d, ignore_errors=True)


def keep(dirn, prog, pid):
    d = os.path.join(dirn, "prog%d" % pid)
    os.makedirs(d, exist_ok=True)
    for k, a in prog.inputs.items():
        np.save(os.path.join(d, prog.prefix() + k + ".npy"), a)
    with open(os.path.join(d, "prog.gk"), "w") as f:
        f.write(prog.source("") + "\n")


def indent(s):
    return "\n".join("     " + l for l in s.split("\n"))


def main():
    ap = argparse.ArgumentParser(description="differential tester of gk against numpy")
    ap.add_argument("-n", type=int, default=200, help="programs to run")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--prog", type=int, help="run only program PROG of --seed")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--batch", type=int, default=25, help="programs per gk process")
    ap.add_argument("--big-every", type=int, default=150, help="one program in B uses ~1e6-element inputs (0: none)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--budget", type=float, help="seconds: start no batch after this; report the programs run")
    ap.add_argument("--no-minimise", dest="minimise", action="store_false")
    ap.add_argument("--min-budget", type=float, default=60, help="seconds of minimising per failure")
    ap.add_argument("--max-minimise", type=int, default=8, help="minimise at most this many failures")
    ap.add_argument("--keep", help="write each minimised failing program (script + inputs) under this folder")
    ap.add_argument("--show", action="store_true", help="print the programs (with --prog) and exit")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()

    MIN_SLOTS.n = args.max_minimise
    if args.backend == "cuda":
        M.CT = 16   # the cuda kernels' exp/log in softmax and logsumexp are __expf/__logf
    gk = find_gk()
    if gk is None:
        print("gkdiff.py: no gk binary at $B/gk", file=sys.stderr)
        return 2
    base = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % (2 ** 31))
    ctx = Ctx(gk, args.backend, args.timeout, args.v)
    tmp = tempfile.mkdtemp(prefix="gkdiff_")
    t0 = time.time()
    try:
        ids = [args.prog] if args.prog is not None else list(range(args.n))
        if args.show:
            d = tempfile.mkdtemp(dir=tmp)
            progs, rvals = build_programs(base, ids, args.big_every, ctx, d)
            for p, _ in progs:
                print(describe(p, rvals))
            return 0
        print("seed %d (replay with --seed %d)" % (base, base))
        sys.stdout.flush()
        chunks = [ids[i:i + args.batch] for i in range(0, len(ids), args.batch)]
        passed = failed = 0
        sigs = {}
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
            futs = [ex.submit(work, args, ctx, base, c, tmp) for c in chunks]
            stopped = False
            for f in concurrent.futures.as_completed(futs):
                if args.budget is not None and not stopped and time.time() - t0 > args.budget:
                    stopped = sum(g.cancel() for g in futs)
                    print("budget of %.0f s spent: %d batches not started" % (args.budget, stopped))
                    sys.stdout.flush()
                if f.cancelled():
                    continue
                for pid, sig, txt in f.result():
                    if sig is None:
                        passed += 1
                    else:
                        failed += 1
                        sigs.setdefault(sig, []).append(pid)
                        print(txt)
                        sys.stdout.flush()
        dt = time.time() - t0
        if sigs:
            print("failure kinds:")
            for sig, pids in sorted(sigs.items(), key=lambda kv: -len(kv[1])):
                print("  %4d  [%s] %s %s (configs failing: %s)  e.g. --prog %d" % (
                    len(pids), sig[0], sig[1], sig[2], sig[3], pids[0]))
        print("%d programs in %.1f s (%.1f s per 1000)" % (passed + failed, dt, 1000 * dt / max(1, passed + failed)))
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
