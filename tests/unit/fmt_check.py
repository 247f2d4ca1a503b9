#!/usr/bin/env python3
"""tests/unit/fmt_check.py -- numpy's printing, as test cases for fmt_array.

Usage: fmt_check.py OUTDIR [SEED]

Writes OUTDIR/case_NNNN.npy (an array) and OUTDIR/case_NNNN.txt (exactly
what numpy.array2string(a, precision=6, threshold=1000, edgeitems=3,
max_line_width=75) prints for it, with booleans lowercased as gk prints
them), plus OUTDIR/list.txt naming every case.  tests/unit/test_host.c loads
each array with npy_load, prints it with fmt_array and compares byte for
byte.  Arrays are random (fresh seed unless SEED is given; printed), over
every dtype and shape kind: empty, 1, 31, 1001 and 2001 elements, 2-d, 3-d,
4-d; values of mixed magnitude (1e-5..1e9), negative, nan/inf, integral,
-0.0, values at the positional/scientific boundaries.
"""
import os
import sys

import numpy as np

OPTS = dict(precision=6, threshold=1000, edgeitems=3, max_line_width=75)

SHAPES = [(0,), (1,), (31,), (1001,), (2001,), (3, 0), (1, 1), (4, 5), (7, 13), (3, 400),
          (40, 30), (2, 3, 4), (11, 10, 10), (2, 2, 3, 2), (1, 1, 1), (5, 1, 7), (2, 1100),
          (1100, 2)]


def float_values(rng, n, kind, dt):
    if kind == "unit":
        v = rng.random(n)
    elif kind == "mixed":  # log-uniform 1e-5 .. 1e9, random signs
        v = 10.0 ** rng.uniform(-5, 9, n) * rng.choice([-1, 1], n)
    elif kind == "neg":
        v = rng.normal(0, 100, n)
    elif kind == "integral":
        v = rng.integers(-1000, 1000, n).astype(float)
    elif kind == "halves":
        v = rng.integers(-40, 40, n) / 8.0
    elif kind == "nonfinite":
        v = rng.normal(0, 3, n)
        m = rng.random(n)
        v[m < 0.1] = np.nan
        v[(m >= 0.1) & (m < 0.2)] = np.inf
        v[(m >= 0.2) & (m < 0.25)] = -np.inf
    elif kind == "allnan":
        v = np.full(n, np.nan)
        if n > 2:
            v[1] = np.inf
    elif kind == "posinf":
        v = rng.random(n)
        v[::3] = np.inf
    elif kind == "zeros":
        v = np.zeros(n)
        v[::4] = -0.0
        v[::5] = rng.random(len(v[::5]))
    elif kind == "big":  # near the scientific cutoffs (1e6 f32, 1e8 f64)
        v = rng.uniform(1e5, 1.2e8, n)
    elif kind == "small":  # near 1e-4
        v = rng.uniform(0.9e-4, 1.1e-3, n)
    elif kind == "ratio":  # max/min near 1000
        v = rng.uniform(1, 1000.5, n)
    elif kind == "tiny":
        v = 10.0 ** rng.uniform(-300, -20, n)
    elif kind == "huge":
        v = 10.0 ** rng.uniform(20, 300, n) * rng.choice([-1, 1], n)
    elif kind == "decimals":  # short decimal values: 0.1, 2.25, ...
        v = rng.integers(-99999, 99999, n) / 10.0 ** rng.integers(0, 6, n)
    else:
        raise ValueError(kind)
    with np.errstate(over="ignore"):
        return v.astype(dt)


FLOAT_KINDS = ["unit", "mixed", "neg", "integral", "halves", "nonfinite", "allnan", "posinf",
               "zeros", "big", "small", "ratio", "tiny", "huge", "decimals"]


def int_values(rng, n, kind, dt):
    info = np.iinfo(dt)
    if kind == "small":
        v = rng.integers(0, 10, n)
    elif kind == "neg":
        v = rng.integers(-500, 500, n)
    elif kind == "wide":
        v = rng.integers(info.min, info.max, n, endpoint=True)
    elif kind == "mixed":
        v = (10 ** rng.integers(0, 9, n)) * rng.choice([-1, 1], n)
    else:
        raise ValueError(kind)
    return v.astype(dt)


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int.from_bytes(os.urandom(4), "little")
    print(f"fmt_check.py: seed {seed}", file=sys.stderr)
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    names = []

    def emit(a):
        name = f"case_{len(names):04d}"
        np.save(os.path.join(out, name + ".npy"), a)
        s = np.array2string(a, **OPTS)
        if a.dtype == np.bool_:
            s = s.replace("True", "true").replace("False", "false")
        with open(os.path.join(out, name + ".txt"), "w") as f:
            f.write(s)
        names.append(name)

    for shape in SHAPES:
        n = int(np.prod(shape))
        emit((rng.random(n) < 0.5).reshape(shape))
        emit(np.ones(n, bool).reshape(shape))
        for dt in (np.int32, np.int64):
            for kind in ("small", "neg", "wide", "mixed"):
                emit(int_values(rng, n, kind, dt).reshape(shape))
        for dt in (np.float32, np.float64):
            for kind in FLOAT_KINDS:
                emit(float_values(rng, n, kind, dt).reshape(shape))
    # specific values that have tripped printers before
    specials = [[0.0078125, 1.0], [1e-4, 1.0], [9.9999e-5, 1], [1e8, 1], [99999999.0, 1],
                [1e6, 1.0], [999999.0, 1.0], [0.5000005, 1], [1.0000005, 2], [-0.0, 0.0],
                [1000.0, 1.0], [1000.5, 1.0], [123456.7, 0.001], [2.0 ** -20, 1], [3.0],
                [np.nan, -np.inf, np.inf], [1e100, 1e-5], [1e-300, 1], [0.1, 0.2, 0.3],
                [1.0 / 3, 2.0 / 3], [5e-324, 1.0], [1.7976931348623157e308, 1.0]]
    for v in specials:
        for dt in (np.float32, np.float64):
            with np.errstate(over="ignore"):
                emit(np.array(v).astype(dt))
    with open(os.path.join(out, "list.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"fmt_check.py: {len(names)} cases in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
