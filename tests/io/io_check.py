#!/usr/bin/env python3
"""tests/io/io_check.py -- files numpy writes, read by gk, and back.

Fresh random data every run (the seed is printed): numpy writes .npy files
in Fortran order, .npz archives (numpy.savez: stored members;
numpy.savez_compressed: deflated, both compressible and incompressible data,
empty and one-element arrays) and delimited text (numpy.savetxt with
several delimiters, a header row skipped, comments); gk loads each one and
saves what it loaded as .npy, which numpy compares with the original bit for
bit.  Then the other way: gk writes .npz (save with several arrays) and text
(savetxt), numpy.load / numpy.loadtxt read them.  Sizes include 1, 31, 33,
1000003 and 2**20+1 elements.  Prints "N passed, M failed".
"""
import os
import random
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B = os.environ.get("B", os.path.join(ROOT, "build"))
GK = os.path.join(B, "gk")
seed = int(os.environ.get("IO_SEED", random.randrange(1 << 30)))
rng = np.random.default_rng(seed)
T = tempfile.mkdtemp(prefix="gk-io-")
passed = failed = 0


def gk(src):
    p = subprocess.run([GK, "--backend", "cpu", "-e", src], cwd=T, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=dict(os.environ, GK_HISTORY=""))
    return p.returncode, p.stdout, p.stderr


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s %s" % (name, detail))


def data(dtype, shape):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def gk_roundtrip(name, load_expr, want):
    """gk runs out = LOAD_EXPR and saves it; numpy compares with want."""
    out = os.path.join(T, "out%d.npy" % (passed + failed))
    rc, so, se = gk('x = %s\nsave("%s", x)' % (load_expr, out))
    if rc != 0:
        check(name, False, se.strip())
        return
    got = np.load(out)
    check(name, same(got, want), "got %s %s, want %s %s" % (got.dtype, got.shape, want.dtype, want.shape))


# Fortran-order .npy
for shape in [(1, 1), (31, 33), (33, 31), (3, 4, 5), (2, 1, 3, 2), (1025, 1023)]:
    for dt in (np.float32, np.float64, np.int32, np.int64, np.bool_):
        a = np.asfortranarray(data(dt, shape))
        p = os.path.join(T, "f.npy")
        np.save(p, a)
        assert b"'fortran_order': True" in open(p, "rb").read(128) or a.flags.c_contiguous
        gk_roundtrip("fortran %s %s" % (np.dtype(dt).name, shape), 'load("f.npy")', np.ascontiguousarray(a))
a = data(np.float32, (1000, 1049)).T          # a transposed array: numpy saves it in Fortran order
np.save(os.path.join(T, "t.npy"), a)
gk_roundtrip("fortran transposed", 'load("t.npy")', np.ascontiguousarray(a))

# numpy's other dtypes (an image is uint8, a model's weights float16) and
# big-endian data: widened to the gk dtype that holds every value, as
# astype does (i1 u1 i2 u2 -> i32, u4 -> i64, f2 -> f32), C and Fortran order
def full_range(dt, shape):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    a = (rng.standard_normal(shape) * 1000).astype(dt)
    a.flat[:5] = [np.inf, -np.inf, np.nan, 6e-8, -65504]   # f2: a subnormal and the largest
    return a


for code, to in (("i1", np.int32), ("u1", np.int32), ("i2", np.int32), ("u2", np.int32), ("u4", np.int64),
                 ("f2", np.float32), (">i2", np.int32), (">u4", np.int64), (">f2", np.float32),
                 (">i4", np.int32), (">i8", np.int64), (">f4", np.float32), (">f8", np.float64)):
    for shape in ((31,), (33, 31), (2, 3, 1025)):
        for fortran in (False, True):
            a = full_range(code, shape)
            if fortran:
                a = np.asfortranarray(a)
            np.save(os.path.join(T, "w.npy"), a)
            gk_roundtrip("%s %s%s read as %s" % (code, shape, " fortran" if fortran else "", np.dtype(to).name),
                         'load("w.npy")', a.astype(to))
np.save(os.path.join(T, "u8.npy"), np.arange(3, dtype=np.uint64))
rc, so, se = gk('load("u8.npy")')
check("uint64 is refused, saying why", rc == 1 and "uint64 is not supported (values past 2^63 fit no gk dtype)" in se, se)

# .npz: stored and deflated, several members, names
for size in (1, 31, 33, 1000003, 2 ** 20 + 1):
    arrs = {"a": data(np.float32, size), "b": data(np.int64, (size,)), "c": data(np.bool_, size),
            "zeros": np.zeros(size, np.float64)}   # deflates to little: long matches
    for how, fn in (("savez", np.savez), ("compressed", np.savez_compressed)):
        p = os.path.join(T, "z.npz")
        fn(p, **arrs)
        for k, v in arrs.items():
            gk_roundtrip("npz %s %d %s" % (how, size, k), 'load("z.npz", "%s")' % k, v)
m = data(np.float64, (33, 31))
np.savez_compressed(os.path.join(T, "one.npz"), m)
gk_roundtrip("npz a single positional member loads without a name", 'load("one.npz")', m)
np.savez_compressed(os.path.join(T, "empty.npz"), e=np.zeros((0,), np.float32), s=np.float64(2.5))
gk_roundtrip("npz empty member", 'load("empty.npz", "e")', np.zeros((0,), np.float32))
gk_roundtrip("npz 0-d member", 'load("empty.npz", "s")', np.array(2.5))
rc, so, se = gk('load("z.npz")')
check("npz several members need a name", rc == 1 and "holds 4 arrays ('a', 'b', 'c', 'zeros'): name one" in se, se)
rc, so, se = gk('load("z.npz", "nope")')
check("npz unknown member", rc == 1 and "no array 'nope' (it holds 'a', 'b', 'c', 'zeros')" in se, se)
raw = bytearray(open(os.path.join(T, "z.npz"), "rb").read())
i = raw.find(b"NUMPY") + 200                    # inside the first member's compressed data
raw[i] ^= 0x55
open(os.path.join(T, "bad.npz"), "wb").write(raw)
rc, so, se = gk('load("bad.npz", "a")')
check("npz a flipped byte is an error", rc == 1 and ("corrupt" in se or "CRC-32" in se), se)

# gk writes .npz, numpy reads it
for size in (1, 33, 1000003):
    x = data(np.float32, size)
    np.save(os.path.join(T, "x.npy"), x)
    rc, so, se = gk('x = load("x.npy")\nm = reshape(iota(%d), -1, 1)\nsave("w.npz", x, m, x > 0, x * 2)' % size)
    if rc:
        check("gk savez %d" % size, False, se)
        continue
    z = np.load(os.path.join(T, "w.npz"))
    check("gk savez %d names" % size, z.files == ["x", "m", "arr_2", "arr_3"], z.files)
    check("gk savez %d x" % size, same(z["x"], x))
    check("gk savez %d m" % size, same(z["m"], np.arange(size).reshape(-1, 1)))
    check("gk savez %d mask" % size, same(z["arr_2"], x > 0))
    check("gk savez %d expr" % size, same(z["arr_3"], x * np.float32(2)))

# text: numpy writes, gk reads
for shape in [(1,), (31,), (33, 1), (1, 33), (31, 33), (1000, 7)]:
    for delim in (None, ",", ";", "\t"):
        a = data(np.float64, shape)
        p = os.path.join(T, "t.txt")
        kw = {} if delim is None else {"delimiter": delim}
        np.savetxt(p, a, header="x y z", **kw)          # header: "# x y z", a comment
        want = np.loadtxt(p, **kw)
        args = "" if delim is None else ', delimiter="%s"' % delim   # a tab inside the gk string
        gk_roundtrip("loadtxt %s %r" % (shape, delim), 'loadtxt("t.txt"%s)' % args, want)
with open(os.path.join(T, "h.csv"), "w") as f:
    f.write("a,b,c\nunits,m,s\n1,2,3\n\n4, 5 ,6  # a comment\n7,8,9\n")
gk_roundtrip("loadtxt skiprows, blank line, comment, blanks in cells", 'loadtxt("h.csv", delimiter=",", skiprows=2)',
             np.loadtxt(os.path.join(T, "h.csv"), delimiter=",", skiprows=2))
with open(os.path.join(T, "bad.csv"), "w") as f:
    f.write("1,2,3\n4,five,6\n")
rc, so, se = gk('loadtxt("bad.csv", delimiter=",")')
check("loadtxt bad cell names row and column",
      rc == 1 and "bad.csv: row 2, column 2: cannot read 'five' as a number" in se, se)

# text: gk writes, numpy reads
for shape in [(1,), (33,), (31, 33)]:
    for dt in (np.float32, np.float64, np.int32, np.int64):
        a = data(dt, shape)
        np.save(os.path.join(T, "s.npy"), a)
        rc, so, se = gk('savetxt("s.csv", load("s.npy"), delimiter=",")')
        got = np.loadtxt(os.path.join(T, "s.csv"), delimiter=",", dtype=np.float64)
        check("savetxt %s %s" % (np.dtype(dt).name, shape), rc == 0 and np.array_equal(got.reshape(a.shape), a.astype(np.float64)), se)

print("io_check: seed %d" % seed)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
