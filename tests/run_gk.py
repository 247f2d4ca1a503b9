#!/usr/bin/env python3
"""Golden-script runner for gk (python3, standard library only).

Every tests/gk/**/*.gk file is one case.  It runs as

    $B/gk [--backend X] FILE        (cwd = the file's directory, FILE = its bare name)

and its expectations are comments in the file, in file order:

    # expect: TEXT           one expected line of stdout (TEXT may be empty)
    # expect error: TEXT     the run must exit with status 1 and the first
                             line of stderr must equal TEXT exactly
    # expect stderr: TEXT    the next line of stderr after the previous one
                             (the source line, the caret line, ...)

A comment may stand on its own line or follow code on the same line.  A case
with no `expect error` must exit 0; in every case stdout must equal the
`expect` lines exactly (each followed by a newline).

Options:
    --backend X        pass --backend X to gk
    --filter SUBSTR    only run cases whose path contains SUBSTR
    -v                 print every case with its result
    --compare-fusion   also run each case with GK_FUSION=0 and require the
                       same stdout (and exit status)
    --timeout S        seconds per run (default 20); a hang is a failure
    -j N               parallel runs (default: number of CPUs)
    PATH...            run only these files / directories

Environment: B = the build folder holding gk (default build).
The last line is `N passed, M failed`; the exit status is 1 on any failure.
"""
import argparse
import concurrent.futures
import difflib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASE_DIR = os.path.join(HERE, "gk")

EXPECT_RE = re.compile(r"#\s*expect(?: (error|stderr))?:(?: (.*))?$")


class Case:
    def __init__(self, path):
        self.path = path
        self.rel = os.path.relpath(path, CASE_DIR)
        self.stdout = []        # expected stdout lines
        self.error = None       # expected first stderr line, or None
        self.stderr = []        # expected further stderr lines
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        for line in text.split("\n"):
            line = line.rstrip("\r")
            m = EXPECT_RE.search(line)
            if not m:
                continue
            kind, body = m.group(1), m.group(2) or ""
            if kind is None:
                self.stdout.append(body)
            elif kind == "error":
                self.error = body
            else:
                self.stderr.append(body)


def find_gk():
    b = os.environ.get("B", "build")
    for base in (os.getcwd(), ROOT):
        p = os.path.abspath(os.path.join(base, b, "gk"))
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def run_once(gk, case, args, env_extra=None):
    cmd = [gk]
    if args.backend:
        cmd += ["--backend", args.backend]
    cmd.append(os.path.basename(case.path))
    env = dict(os.environ)
    if env_extra:
        env.update(env_extra)
    try:
        p = subprocess.run(cmd, cwd=os.path.dirname(case.path), env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=args.timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        err = (e.stderr or b"").decode("utf-8", "replace")
        return None, out, err
    except OSError as e:
        return -1000, "", "run_gk.py: cannot run %s: %s\n" % (gk, e)
    return (p.returncode,
            p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def diff(expected, actual, what):
    return "".join(difflib.unified_diff(
        [l + "\n" for l in expected], [l + "\n" for l in actual],
        "expected " + what, "actual " + what, lineterm="\n"))


def split_lines(s):
    """Lines of s; a missing final newline shows as a marker line."""
    if s == "":
        return []
    lines = s.split("\n")
    if lines[-1] == "":
        lines.pop()
    else:
        lines[-1] += "\\ (no newline at end)"
    return lines


def check(gk, case, args):
    """Returns a list of problem strings (empty = pass)."""
    problems = []
    rc, out, err = run_once(gk, case, args)
    errlines = err.split("\n")
    if errlines and errlines[-1] == "":
        errlines.pop()
    if rc is None:
        problems.append("timed out after %g s" % args.timeout)
        return problems
    if rc == -1000:
        problems.append(err.strip())
        return problems
    if rc < 0:
        problems.append("killed by signal %d" % -rc)
    want_out = case.stdout
    got_out = split_lines(out)
    if got_out != want_out:
        problems.append("stdout differs:\n" + diff(want_out, got_out, "stdout"))
    if case.error is None:
        if rc != 0:
            problems.append("exit status %s, expected 0; stderr:\n%s" %
                            (rc, "".join("  " + l + "\n" for l in errlines[:10])))
    else:
        if rc != 1:
            problems.append("exit status %s, expected 1" % rc)
        want = [case.error] + case.stderr
        got = errlines[:len(want)]
        if got != want:
            problems.append("stderr differs:\n" + diff(want, got, "stderr"))
    if args.compare_fusion and not problems:
        rc2, out2, err2 = run_once(gk, case, args, {"GK_FUSION": "0"})
        if rc2 is None:
            problems.append("GK_FUSION=0: timed out after %g s" % args.timeout)
        else:
            if rc2 != rc:
                problems.append("GK_FUSION=0: exit status %s, fused %s" % (rc2, rc))
            if out2 != out:
                problems.append("GK_FUSION=0 stdout differs from fused:\n" +
                                diff(split_lines(out), split_lines(out2), "stdout"))
    return problems


def collect(paths):
    files = []
    roots = paths or [CASE_DIR]
    for r in roots:
        r = os.path.abspath(r)
        if os.path.isfile(r):
            files.append(r)
            continue
        for d, dirs, names in os.walk(r):
            dirs.sort()
            for n in sorted(names):
                if n.endswith(".gk"):
                    files.append(os.path.join(d, n))
    return sorted(set(files))


def main():
    ap = argparse.ArgumentParser(description="run gk's golden .gk scripts")
    ap.add_argument("--backend")
    ap.add_argument("--filter", default="")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--compare-fusion", action="store_true")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()

    gk = find_gk()
    if gk is None:
        print("run_gk.py: no gk binary at $B/gk (B=%s)" % os.environ.get("B", "build"),
              file=sys.stderr)
        return 2
    cases = [Case(p) for p in collect(args.paths)]
    cases = [c for c in cases if args.filter in c.rel]
    if not cases:
        print("run_gk.py: no cases", file=sys.stderr)

    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        results = ex.map(lambda c: (c, check(gk, c, args)), cases)
        for case, problems in results:
            if problems:
                failed += 1
                print("FAIL %s" % case.rel)
                for p in problems:
                    print("  " + p.rstrip("\n").replace("\n", "\n  "))
            else:
                passed += 1
                if args.verbose:
                    print("pass %s" % case.rel)
            sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
