#!/usr/bin/env python3
"""A/B of gk's speed knobs on the benchmark's cases (tests/bench/ab.py).

    python3 tests/bench/ab.py [--env GK_ROWS_VARIANT] --variants ',ks=4,kc=4:kt=512' [--out DIR] \\
        -- [bench_gk.py options, e.g. --no-compile --rows 4096x50257,1024x65536 --only softmax]

Runs bench_gk.py once a variant, each in its own process (gk reads its knob
variables once), with the variable --env set to the variant ('' = unset, the
defaults; ':' in a variant stands for ',' so that variants of several knobs
can be listed), in the order given -- list the default twice, first and last,
to see the drift of the machine.  Each run's bench.json goes to DIR/vN/;
the table of gk µs (GK_PROFILE's kernel time; end to end on the cpu
backend, which has none, or with --e2e), case by variant, with torch eager's and the CUB /
copy peer's µs from the first run, is printed and written to DIR/ab.txt and
DIR/ab.json.  Every run checks gk's outputs as bench_gk.py does, so a variant
that computes a wrong value fails its cases ("ERR" in the table).
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(env_name, variant, out, args):
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, OUT=out)
    if variant: env[env_name] = variant.replace(":", ",")
    else: env.pop(env_name, None)
    with open(os.path.join(out, "log.txt"), "w") as fh:
        rc = subprocess.call([sys.executable, os.path.join(HERE, "bench_gk.py")] + args, env=env, stdout=fh,
                             stderr=subprocess.STDOUT)
    try:
        with open(os.path.join(out, "bench.json")) as fh:
            return rc, json.load(fh)["rows"]
    except (OSError, ValueError, KeyError):
        return rc, []


def gk_time(r, e2e=False):
    """gk's kernel µs, or its end-to-end µs where there is no kernel time (the cpu backend) or e2e asks."""
    return r.get("gk_us") if r.get("gk_us") is not None and not e2e else r.get("gk_e2e_us")


def key(r):
    return "%s %s %s" % (r.get("op"), "x".join(str(v) for v in r.get("shape", [])), r.get("dtype"))


def main():
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", default="GK_ROWS_VARIANT", help="the variable each variant sets (GK_ROWS_VARIANT)")
    ap.add_argument("--variants", required=True, help="comma-separated values of it ('' = unset; ':' for ',')")
    ap.add_argument("--out", default=os.environ.get("OUT") or "ab_out", help="folder of the runs (default $OUT)")
    ap.add_argument("--e2e", action="store_true", help="tabulate end-to-end µs (gk and torch eager), not kernel µs")
    a = ap.parse_args(argv)
    variants = a.variants.split(",")
    # the end-to-end case runs in every bench_gk.py run; it is a row here only when --only asks for it
    only = [rest[i + 1] for i in range(len(rest) - 1) if rest[i] == "--only"]
    want_e2e = any("sum_e2e".startswith(s) for s in only)
    runs, bad = [], 0
    for i, v in enumerate(variants):
        rc, rows = run(a.env, v, os.path.join(a.out, "v%d" % (i + 1)), rest)
        bad += rc != 0
        runs.append({r_key: r for r_key, r in ((key(r), r) for r in rows) if want_e2e or r.get("op") != "sum_e2e"})
        print("v%d %s=%r: %d cases, rc %d" % (i + 1, a.env, v, len(runs[-1]), rc), flush=True)
    keys = []
    for r in runs:
        keys += [k for k in r if k not in keys]
    head = ["case", "torch", "peer"] + ["v%d %s" % (i + 1, v or "default") for i, v in enumerate(variants)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    table = []
    for k in keys:
        first = next((r[k] for r in runs if k in r), {})
        cells = []
        for r in runs:
            c = r.get(k)
            t = None if c is None else gk_time(c, a.e2e)
            cells.append("-" if c is None else "ERR" if c.get("error") or c.get("gk_ok") is False
                         else "%.1f" % t if t is not None else "-")
        peer = (first.get("cub") or {}).get("us")
        torch = first.get("eager_e2e_us") if a.e2e else first.get("eager_us") or first.get("eager_e2e_us")
        lines.append("| %s | %s | %s | %s |" % (k, "%.1f" % torch if torch else "-", "%.1f" % peer if peer else "-",
                                                " | ".join(cells)))
        table.append({"case": k, "torch_us": torch, "peer_us": peer,
                      "gk_us": [gk_time(r[k], a.e2e) if k in r else None for r in runs]})
    txt = "\n".join(lines)
    print(txt)
    with open(os.path.join(a.out, "ab.txt"), "w") as fh: fh.write(txt + "\n")
    with open(os.path.join(a.out, "ab.json"), "w") as fh:
        json.dump({"env": a.env, "variants": variants, "args": rest, "e2e": a.e2e, "table": table}, fh, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
