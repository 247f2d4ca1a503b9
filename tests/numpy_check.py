#!/usr/bin/env python3
"""Cross-checks gk's numeric builtins against numpy on fresh random data.

For every builtin (elementwise, casts, reductions whole/rows/cols, scans,
the normalize family, filter, partition, hist, transpose, permute, reshape,
matmul, indexing and slicing, where/clamp/maximum/minimum/pow, and the dtype
promotion of binary operators over every dtype pair) this writes inputs as
.npy into a temp dir, runs

    $B/gk [--backend X] -e 'x = load("x.npy"); ...; save("o0.npy", EXPR); ...'

(many expressions per gk run), loads each output and compares it with numpy:
exact for integer, bool, ordering and counting results; relative norm error
||out - ref|| / ||ref|| against a float64 reference for float results (f32
math 1e-5, f32 sums 1e-6, scans 1e-4; f64 results 1e-9), NaN/inf positions
must match; the result's dtype must follow the team's rules.

Usage: numpy_check.py [--backend X] [--quick] [--seed S] [-k SUBSTR] [-v]
Environment: B = the build folder holding gk (default build).
The last line is `N passed, M failed`; exit status 1 on any failure.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np

warnings.simplefilter("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

B_, I32, I64, F32, F64 = np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64), \
    np.dtype(np.float32), np.dtype(np.float64)
DTYPES = {"bool": B_, "i32": I32, "i64": I64, "f32": F32, "f64": F64}
NAME = {v: k for k, v in DTYPES.items()}
INTS = (B_, I32, I64)

# ------------------------------------------------------------- dtype rules


def conv(d):
    """int->float conversion: f32 for bool/i32, f64 for i64; floats stay."""
    return {B_: F32, I32: F32, I64: F64}.get(d, d)


def promote(a, b):
    if a == b:
        return a
    if a == B_:
        return b
    if b == B_:
        return a
    if a.kind == "f" or b.kind == "f":
        if a.kind == "f" and b.kind == "f":
            return F64
        return a if a.kind == "f" else b
    return I64          # i32 with i64


def weak_int(d):
    return I64 if d == B_ else d


def weak_float(d):
    return {B_: F32, I32: F32, I64: F64}.get(d, d)


def sum_dt(d):
    return I64 if d in INTS else d

# ------------------------------------------------------------- checks


class Check:
    def __init__(self, name, expr, ref, dtype, kind="exact", tol=0.0):
        self.name, self.expr, self.ref, self.dtype = name, expr, ref, dtype
        self.kind, self.tol = kind, tol


def compare(c, out, ref):
    """None when out matches, else a message."""
    ref = np.asarray(ref)
    if out.dtype != c.dtype:
        return "dtype %s, expected %s" % (out.dtype, c.dtype)
    if out.shape != ref.shape:
        return "shape %s, expected %s" % (out.shape, ref.shape)
    if c.kind == "exact" or out.dtype.kind != "f":
        r = ref.astype(out.dtype) if out.dtype.kind != "f" else ref.astype(out.dtype)
        if out.dtype.kind == "f":
            same = np.array_equal(out, r, equal_nan=True)
        else:
            same = np.array_equal(out, r)
        if not same:
            bad = np.flatnonzero((out != r) & ~(np.isnan(out) & np.isnan(r)) if out.dtype.kind == "f"
                                 else out.ravel() != r.ravel())
            if out.ndim == 0:
                return "got %r, expected %r" % (out[()], r[()])
            i = bad[0]
            return "%d of %d differ; first at flat %d: got %r, expected %r" % (
                len(bad), out.size, i, out.ravel()[i], r.ravel()[i])
        return None
    o = out.astype(F64).ravel()
    r = ref.astype(F64).ravel()
    on, rn = np.isnan(o), np.isnan(r)
    if (on != rn).any():
        i = np.flatnonzero(on != rn)[0]
        return "NaN positions differ; first at flat %d: got %r, expected %r" % (i, o[i], r[i])
    oi, ri = np.isinf(o), np.isinf(r)
    if (oi != ri).any() or (o[ri] != r[ri]).any():
        i = np.flatnonzero((oi != ri) | (ri & (o != r)))[0]
        return "inf positions differ; first at flat %d: got %r, expected %r" % (i, o[i], r[i])
    fin = ~(rn | ri)
    d = np.linalg.norm(o[fin] - r[fin])
    n = np.linalg.norm(r[fin])
    tol = c.tol if out.dtype == F32 else min(c.tol, 1e-9)
    err = d / n if n > 0 else d
    if not err <= tol:
        j = np.argmax(np.abs(o[fin] - r[fin])) if fin.any() else 0
        idx = np.flatnonzero(fin)[j] if fin.any() else 0
        return "relative error %.3g > %g (worst at flat %d: got %r, expected %r)" % (
            err, tol, idx, o[idx], r[idx])
    return None

# ------------------------------------------------------------- data


class Data:
    def __init__(self, rng):
        self.rng = rng

    def signed(self, shape, dt):
        """Random values, never zero: floats in +-[0.05, 2], ints in +-[1, 20]."""
        r = self.rng
        s = np.where(r.random(shape) < 0.5, -1, 1)
        if dt == B_:
            return r.random(shape) < 0.5
        if dt.kind == "f":
            return (s * r.uniform(0.05, 2.0, shape)).astype(dt)
        return (s * r.integers(1, 21, shape)).astype(dt)

    def positive(self, shape, dt):
        r = self.rng
        if dt == B_:
            return np.ones(shape, bool)
        if dt.kind == "f":
            return r.uniform(0.25, 2.0, shape).astype(dt)
        return r.integers(1, 21, shape).astype(dt)

    def near_one(self, shape, dt):
        if dt.kind != "f":
            return self.positive(shape, dt)
        return (1 + self.rng.uniform(-0.01, 0.01, shape)).astype(dt)

    def mask(self, shape):
        return self.rng.random(shape) < 0.5


def f64(a):
    return np.asarray(a).astype(F64)


def exscan_ref(a, op, axis=None):
    fns = {"sum": np.cumsum, "prod": np.cumprod,
           "max": np.maximum.accumulate, "min": np.minimum.accumulate}
    ident = {"sum": 0, "prod": 1, "max": -np.inf, "min": np.inf}[op]
    if axis is None:
        r = fns[op](a)
        return np.concatenate([np.array([ident], r.dtype), r[:-1]])
    r = fns[op](a, axis=axis)
    out = np.empty_like(r)
    if axis == 1:
        out[:, 0], out[:, 1:] = ident, r[:, :-1]
    else:
        out[0, :], out[1:, :] = ident, r[:-1, :]
    return out


def softmax(x, axis=None):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def logsoftmax(x, axis=None):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def layernorm(x, g=None, b=None, eps=1e-5, axis=None):
    mu = x.mean(axis=axis, keepdims=True)
    y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=axis, keepdims=True) + eps)
    if g is not None:
        y = y * (g if axis != 0 else g[:, None])
    if b is not None:
        y = y + (b if axis != 0 else b[:, None])
    return y


def rmsnorm(x, g=None, eps=1e-5, axis=None):
    y = x / np.sqrt((x * x).mean(axis=axis, keepdims=True) + eps)
    if g is not None:
        y = y * (g if axis != 0 else g[:, None])
    return y

def nest(fs, x):
    """fs[-1](...fs[1](fs[0](x)))."""
    for f in fs:
        x = f(x)
    return x

# ------------------------------------------------------------- groups
# A group is (label, inputs {name: array}, [Check]); each ref is a callable of
# the inputs dict.


def vector_group(D, n, dt):
    dn = NAME[dt]
    x, y = D.signed(n, dt), D.signed(n, dt)
    p, p2, q = D.positive(n, dt), D.positive(n, dt), D.near_one(n, dt)
    b = D.mask(n)
    inp = {"x": x, "y": y, "p": p, "p2": p2, "q": q, "b": b}
    C = []
    isf = dt.kind == "f"
    cv = conv(dt)

    def add(name, expr, ref, dtype, kind="exact", tol=0.0):
        C.append(Check("vec/%s/n=%d/%s" % (dn, n, name), expr, ref, dtype, kind, tol))

    M = "float"
    # elementwise
    if dt != B_:
        add("neg", "-x", lambda e: -e["x"], dt)
        add("abs", "abs(x)", lambda e: np.abs(e["x"]), dt)
        add("relu", "relu(x)", lambda e: np.maximum(e["x"], 0).astype(dt), dt)
        add("sign", "sign(x)", lambda e: np.sign(e["x"]), dt)
        add("add", "x + y", lambda e: e["x"] + e["y"], dt)
        add("sub", "x - y", lambda e: e["x"] - e["y"], dt)
        add("mul", "x * y", lambda e: e["x"] * e["y"], dt)
        add("mod", "x % y", lambda e: np.mod(f64(e["x"]), f64(e["y"])), dt, M, 1e-5)
        add("pow2", "x ** 2", lambda e: f64(e["x"]) ** 2, dt, M, 1e-5)
        add("pow_fn", "pow(p, 2)", lambda e: f64(e["p"]) ** 2, dt, M, 1e-5)
        add("maximum", "maximum(x, y)", lambda e: np.maximum(e["x"], e["y"]), dt)
        add("minimum", "minimum(x, y)", lambda e: np.minimum(e["x"], e["y"]), dt)
        lo, hi = ("-0.5", "0.5") if isf else ("-5", "5")
        add("clamp", "clamp(x, %s, %s)" % (lo, hi),
            lambda e: np.clip(e["x"], dt.type(float(lo)), dt.type(float(hi))), dt)
        add("where", "where(b, x, y)", lambda e: np.where(e["b"], e["x"], e["y"]), dt)
        add("where_cmp", "where(x > y, x, y)", lambda e: np.maximum(e["x"], e["y"]), dt)
        add("mul_float_lit", "x * 0.5", lambda e: f64(e["x"]) * 0.5, weak_float(dt), M, 1e-6)
        add("add_int_lit", "x + 3", lambda e: e["x"] + dt.type(3), weak_int(dt))
    add("div", "x / p", lambda e: f64(e["x"]) / f64(e["p"]), cv, M, 1e-5)
    add("lt", "x < y", lambda e: e["x"] < e["y"], B_)
    add("eq", "x == y", lambda e: e["x"] == e["y"], B_)
    add("ge", "x >= y", lambda e: e["x"] >= e["y"], B_)
    add("ne", "x != y", lambda e: e["x"] != e["y"], B_)
    if dt == B_:
        add("and", "x and y", lambda e: e["x"] & e["y"], B_)
        add("or", "x or y", lambda e: e["x"] | e["y"], B_)
        add("not", "not x", lambda e: ~e["x"], B_)
    if dt != B_:
        add("exp", "exp(x)", lambda e: np.exp(f64(e["x"])), cv, M, 1e-5)
        add("log", "log(p)", lambda e: np.log(f64(e["p"])), cv, M, 1e-5)
        add("sqrt", "sqrt(p)", lambda e: np.sqrt(f64(e["p"])), cv, M, 1e-5)
        add("rsqrt", "rsqrt(p)", lambda e: 1 / np.sqrt(f64(e["p"])), cv, M, 1e-5)
        add("sin", "sin(x)", lambda e: np.sin(f64(e["x"])), cv, M, 1e-5)
        add("cos", "cos(x)", lambda e: np.cos(f64(e["x"])), cv, M, 1e-5)
        add("tanh", "tanh(x)", lambda e: np.tanh(f64(e["x"])), cv, M, 1e-5)
        add("sigmoid", "sigmoid(x)", lambda e: 1 / (1 + np.exp(-f64(e["x"]))), cv, M, 1e-5)
        # the op-table rows of issue 10 (runtime/ops.h)
        wf = weak_float(dt)
        add("tan", "tan(x)", lambda e: np.tan(f64(e["x"])), cv, M, 1e-5)
        add("asin", "asin(x * 0.5)", lambda e: np.arcsin(f64(e["x"]) * 0.5), wf, M, 1e-5)
        add("acos", "acos(x * 0.5)", lambda e: np.arccos(f64(e["x"]) * 0.5), wf, M, 1e-5)
        add("atan", "atan(x)", lambda e: np.arctan(f64(e["x"])), cv, M, 1e-5)
        add("sinh", "sinh(x)", lambda e: np.sinh(f64(e["x"])), cv, M, 1e-5)
        add("cosh", "cosh(x)", lambda e: np.cosh(f64(e["x"])), cv, M, 1e-5)
        add("log2", "log2(p)", lambda e: np.log2(f64(e["p"])), cv, M, 1e-5)
        add("log10", "log10(p)", lambda e: np.log10(f64(e["p"])), cv, M, 1e-5)
        add("exp2", "exp2(x)", lambda e: np.exp2(f64(e["x"])), cv, M, 1e-5)
        add("expm1", "expm1(x * 1e-3)", lambda e: np.expm1(f64(e["x"]) * 1e-3), wf, M, 1e-5)
        add("log1p", "log1p(x * 1e-3)", lambda e: np.log1p(f64(e["x"]) * 1e-3), wf, M, 1e-5)
        add("atan2", "atan2(x, y)", lambda e: np.arctan2(f64(e["x"]), f64(e["y"])), cv, M, 1e-5)
        add("hypot", "hypot(x, y)", lambda e: np.hypot(f64(e["x"]), f64(e["y"])), cv, M, 1e-5)
        add("isnan", "isnan(log(x))", lambda e: np.isnan(np.log(f64(e["x"]))), B_)
        add("isinf", "isinf(where(b, x / 0, x))", lambda e: e["b"].copy(), B_)
        add("isfinite", "isfinite(where(b, log(x), x / 0))",
            lambda e: np.isfinite(np.where(e["b"], np.log(f64(e["x"])), np.inf)), B_)
        add("isnan_plain", "isnan(x)", lambda e: np.isnan(e["x"]), B_)
        add("isfinite_plain", "isfinite(x)", lambda e: np.isfinite(e["x"]), B_)
    if isf:
        add("floor", "floor(x)", lambda e: np.floor(e["x"]), dt)
        add("ceil", "ceil(x)", lambda e: np.ceil(e["x"]), dt)
        add("round", "round(x * 4)", lambda e: np.round(e["x"] * dt.type(4)), dt)
        add("pow_float", "pow(p, 1.5)", lambda e: f64(e["p"]) ** 1.5, dt, M, 1e-5)
        add("powop_float", "p ** 0.5", lambda e: f64(e["p"]) ** 0.5, dt, M, 1e-5)
        # numpy's scalar-exponent power: bit for bit x*x, sqrt, reciprocal (issue 9.6)
        add("pow2_exact", "x ** 2", lambda e: e["x"] ** 2, dt)
        add("pow2_fn_exact", "pow(x, 2)", lambda e: np.power(e["x"], 2), dt)
        add("pow_half_exact", "abs(x) ** 0.5", lambda e: np.abs(e["x"]) ** 0.5, dt)
        add("pow_m1_exact", "x ** -1", lambda e: e["x"] ** -1.0, dt)
    # casts
    for cn, cd in DTYPES.items():
        add("cast_" + cn, "%s(x)" % cn, lambda e, cd=cd: e["x"].astype(cd), cd)
    # reductions, whole
    sd = sum_dt(dt)
    src = "p" if dt != B_ else "b"
    add("sum", "sum(%s)" % src, lambda e: np.sum(f64(e[src])) if sd.kind == "f" else np.sum(e[src], dtype=I64),
        sd, M, 1e-6)
    add("prod", "prod(q)", lambda e: np.prod(f64(e["q"])) if sd.kind == "f" else np.prod(e["q"], dtype=I64),
        sd, M, 1e-4)
    add("max", "max(x)", lambda e: np.max(e["x"]), dt)
    add("min", "min(x)", lambda e: np.min(e["x"]), dt)
    if dt != B_:   # a negation into max/min (ptxas VIMNMX3, NOTES.md session 7)
        add("negmax", "max(0 - x)", lambda e: np.max(0 - e["x"]), dt)
        add("negmin", "min(-x)", lambda e: np.min(-e["x"]), dt)
        add("negchain", "maximum(maximum(-x, x * 2), 0 - x * 3)",
            lambda e: np.maximum(np.maximum(-e["x"], e["x"] * 2), 0 - e["x"] * 3), dt)
    add("argmax", "argmax(x)", lambda e: np.int64(np.argmax(e["x"])), I64)
    add("argmin", "argmin(x)", lambda e: np.int64(np.argmin(e["x"])), I64)
    add("mean", "mean(%s)" % src, lambda e: np.mean(f64(e[src])), cv, M, 1e-6)
    add("var", "var(x)", lambda e: np.var(f64(e["x"])), cv, M, 1e-5)
    add("std", "std(x)", lambda e: np.std(f64(e["x"])), cv, M, 1e-5)
    add("norm", "norm(x)", lambda e: np.linalg.norm(f64(e["x"])), cv, M, 1e-6)
    add("logsumexp", "logsumexp(x)", lambda e: np.log(np.sum(np.exp(f64(e["x"])))), cv, M, 1e-5)
    add("dot", "dot(p, p2)", lambda e: np.sum(f64(e["p"]) * f64(e["p2"])) if sd.kind == "f"
        else np.sum(e["p"].astype(I64) * e["p2"].astype(I64)), sd, M, 1e-6)
    add("count", "count(b)", lambda e: np.int64(np.count_nonzero(e["b"])), I64)
    add("any", "any(x > y)", lambda e: np.any(e["x"] > e["y"]), B_)
    add("all", "all(x > y)", lambda e: np.all(e["x"] > e["y"]), B_)
    add("any_b", "any(b)", lambda e: np.any(e["b"]), B_)
    add("all_b", "all(b)", lambda e: np.all(e["b"]), B_)
    # scans
    if dt != B_:
        add("scan", "scan(p)", lambda e: np.cumsum(f64(e["p"])) if sd.kind == "f" else np.cumsum(e["p"], dtype=I64),
            sd, M, 1e-4)
        add("scan_prod", "scan(q, prod)", lambda e: np.cumprod(f64(e["q"])) if sd.kind == "f"
            else np.cumprod(e["q"], dtype=I64), sd, M, 1e-4)
        add("scan_max", "scan(x, max)", lambda e: np.maximum.accumulate(e["x"]), dt)
        add("scan_min", "scan(x, min)", lambda e: np.minimum.accumulate(e["x"]), dt)
        add("exscan", "exscan(p)", lambda e: exscan_ref(f64(e["p"]) if sd.kind == "f" else e["p"].astype(I64), "sum"),
            sd, M, 1e-4)
        add("exscan_prod", "exscan(q, prod)", lambda e: exscan_ref(f64(e["q"]) if sd.kind == "f"
            else e["q"].astype(I64), "prod"), sd, M, 1e-4)
    else:
        add("scan_bool", "scan(b)", lambda e: np.cumsum(e["b"], dtype=I64), I64)
    if isf:
        add("exscan_max", "exscan(x, max)", lambda e: exscan_ref(f64(e["x"]), "max"), dt, M, 0.0)
        add("exscan_min", "exscan(x, min)", lambda e: exscan_ref(f64(e["x"]), "min"), dt, M, 0.0)
        # normalize
        add("softmax", "softmax(x)", lambda e: softmax(f64(e["x"])), dt, M, 1e-5)
        add("logsoftmax", "logsoftmax(x)", lambda e: logsoftmax(f64(e["x"])), dt, M, 1e-5)
        add("layernorm", "layernorm(x)", lambda e: layernorm(f64(e["x"])), dt, M, 1e-5)
        add("layernorm_gb", "layernorm(x, p, y, eps=1e-3)",
            lambda e: layernorm(f64(e["x"]), f64(e["p"]), f64(e["y"]), 1e-3), dt, M, 1e-5)
        add("rmsnorm", "rmsnorm(x)", lambda e: rmsnorm(f64(e["x"])), dt, M, 1e-5)
        add("rmsnorm_g", "rmsnorm(x, p, eps=1e-4)", lambda e: rmsnorm(f64(e["x"]), f64(e["p"]), 1e-4), dt, M, 1e-5)
        # fused: a var beside an online max/sum-exp pair (issue 9.2); chains
        # of normalisations deeper than one kernel's stages (9.9)
        add("layernorm_plus_logsoftmax", "layernorm(x) + logsoftmax(x)",
            lambda e: layernorm(f64(e["x"])) + logsoftmax(f64(e["x"])), dt, M, 1e-5)
        add("softmax_plus_var", "softmax(y) + var(y)", lambda e: softmax(f64(e["y"])) + np.var(f64(e["y"])), dt, M, 1e-5)
        add("online_mix", "softmax(x) * std(x) + logsumexp(x) - max(x) + mean(x) + logsumexp(x) * var(x)",
            lambda e: (lambda x: softmax(x) * np.std(x) + np.log(np.sum(np.exp(x))) - x.max() + x.mean()
                       + np.log(np.sum(np.exp(x))) * np.var(x))(f64(e["x"])), dt, M, 1e-5)
        mix = [layernorm, softmax, logsoftmax, rmsnorm, softmax, logsoftmax]   # well conditioned in f32
        for k in range(1, 7):
            add("softmax_nest%d" % k, "sum(%sx%s)" % ("softmax(" * k, ")" * k),
                lambda e, k=k: np.sum(nest([softmax] * k, f64(e["x"]))), dt, M, 1e-5)
            add("norm_nest%d" % k, "".join(f.__name__ + "(" for f in reversed(mix[:k])) + "x" + ")" * k,
                lambda e, k=k: nest(mix[:k], f64(e["x"])), dt, M, 1e-5)
    # data movement
    add("filter", "filter(x, b)", lambda e: e["x"][e["b"]], dt)
    add("filter_pred", "filter(x, x > y)", lambda e: e["x"][e["x"] > e["y"]], dt)
    add("mask_index", "x[b]", lambda e: e["x"][e["b"]], dt)
    add("partition", "partition(x, b)", lambda e: np.concatenate([e["x"][e["b"]], e["x"][~e["b"]]]), dt)
    if dt != B_:
        add("hist", "hist(x, 10)", lambda e: np.histogram(e["x"], 10)[0].astype(I64), I64)
        rng = ("-1.0", "1.0") if isf else ("-10", "10")
        add("hist_range", "hist(x, 7, %s, %s)" % rng,
            lambda e: np.histogram(e["x"], 7, (float(rng[0]), float(rng[1])))[0].astype(I64), I64)
    if n % 1 == 0 and n > 1:
        add("reshape", "reshape(x, 1, %d)" % n, lambda e: e["x"].reshape(1, n), dt)
    # indexing
    for i in sorted({0, n // 2, n - 1}):
        add("index_%d" % i, "x[%d]" % i, lambda e, i=i: e["x"][i], dt)
    a, z = n // 3, (2 * n) // 3 + 1
    add("slice", "x[%d:%d]" % (a, z), lambda e: e["x"][a:z], dt)
    return ("vector %s n=%d" % (dn, n), inp, C)


def filter_group(D, n, dt):
    """filter / x[mask] in one pass (issue 16): of pending values, views of
    pending values (slices, reversed, a broadcast reduction), nested, all
    true, all false, the result consumed by a map and a reduction."""
    dn = NAME[dt]
    x, y, b = D.signed(n, dt), D.signed(n, dt), D.mask(n)
    inp = {"x": x, "y": y, "b": b}
    C = []

    def add(name, expr, ref, dtype, kind="exact", tol=0.0):
        C.append(Check("filter/%s/n=%d/%s" % (dn, n, name), expr, ref, dtype, kind, tol))

    add("stored", "x[b]", lambda e: e["x"][e["b"]], dt)
    add("all_true", "filter(x, b or not b)", lambda e: e["x"], dt)
    add("all_false", "filter(x, b and not b)", lambda e: e["x"][:0], dt)
    add("pending_mask_view", "x[::-1][(x != y)[::-1]]", lambda e: e["x"][::-1][(e["x"] != e["y"])[::-1]], dt)
    add("pending_slice", "x[1:][(b or x == y)[1:]]", lambda e: e["x"][1:][(e["b"] | (e["x"] == e["y"]))[1:]], dt)
    add("sparse", "filter(x, b and x > y and y > x - y)",
        lambda e: e["x"][e["b"] & (f64(e["x"]) > f64(e["y"])) & (f64(e["y"]) > f64(e["x"]) - f64(e["y"]))], dt)
    add("nested", "filter(filter(x, b), filter(x != y, b))",
        lambda e: e["x"][e["b"]][(e["x"] != e["y"])[e["b"]]], dt)
    if dt != B_:
        M, tol = ("float", 1e-6) if dt.kind == "f" else ("exact", 0.0)
        add("pending_both", "filter(x * 2 - y, x > y)", lambda e: (f64(e["x"]) * 2 - f64(e["y"]))[e["x"] > e["y"]], dt, M, tol)
        add("pending_view_both", "(x - y)[::-1][(x * 2 > y)[::-1]]",
            lambda e: (f64(e["x"]) - f64(e["y"]))[::-1][(f64(e["x"]) * 2 > f64(e["y"]))[::-1]], dt, M, tol)
        add("bcast_reduction", "filter(x - max(x), x > min(y))",
            lambda e: (f64(e["x"]) - f64(e["x"]).max())[e["x"] > e["y"].min()], dt, M, tol)
        add("then_map", "x[x > y] * 2 + 1", lambda e: f64(e["x"][e["x"] > e["y"]]) * 2 + 1, dt, M, tol)
        add("then_sum", "sum(filter(x, x < y))", lambda e: np.sum(f64(e["x"][e["x"] < e["y"]])), sum_dt(dt),
            "float", 1e-5)
    return ("filter %s n=%d" % (dn, n), inp, C)


def online_group(D, n, dt):
    """The one-pass sum(exp(E - max(E))) / logsumexp(E) on whole vectors: the
    cuda backend folds a thread's elements of a full tile together (the
    tile's max first, then the exps), so inputs where the max moves in every
    tile (ascending), wide spreads, +-inf and NaN inside a tile, views of
    pending values (a slice, a reversed slice: the unvectorised tile), and
    other reductions beside the pair in the same kernel."""
    dn = NAME[dt]
    x, y = D.signed(n, dt), D.signed(n, dt)
    a = np.sort(D.signed(n, dt))
    w, v, g = x.copy(), x.copy(), x.copy()
    k = D.rng.integers(0, n, 3)
    w[k] = np.inf
    v[k[0]] = np.nan
    g[D.rng.random(n) < 0.3] = -np.inf
    g[k[1]] = 1.0
    inp = {"x": x, "y": y, "a": a, "w": w, "v": v, "g": g}
    C = []
    cv, M = conv(dt), "float"

    def add(name, expr, ref):
        C.append(Check("online/%s/n=%d/%s" % (dn, n, name), expr, ref, cv, M, 1e-5))

    def sumexp(e):
        return np.sum(np.exp(e - np.max(e)))

    def lse(e):
        return np.log(np.sum(np.exp(e)))

    with np.errstate(all="ignore"):
        add("sumexp", "sum(exp(x - max(x)))", lambda e: sumexp(f64(e["x"])))
        add("logsumexp", "logsumexp(x)", lambda e: lse(f64(e["x"])))
        s0 = min(3, n - 1)
        add("sumexp_pending_slice", "sum(exp((x * 2 - y)[%d:] - max((x * 2 - y)[%d:])))" % (s0, s0),
            lambda e: sumexp((2 * f64(e["x"]) - f64(e["y"]))[s0:]))
        add("logsumexp_pending_reversed", "logsumexp((x + y)[::-1])", lambda e: lse(f64(e["x"]) + f64(e["y"])))
        add("sumexp_ascending", "sum(exp(a - max(a)))", lambda e: sumexp(f64(e["a"])))
        add("logsumexp_ascending", "logsumexp(a * 40)", lambda e: lse(40 * f64(e["a"])))
        add("logsumexp_wide", "logsumexp(x * 300)", lambda e: lse(300 * f64(e["x"])))
        add("logsumexp_inf", "logsumexp(w)", lambda e: lse(f64(e["w"])))
        add("sumexp_inf", "sum(exp(w - max(w)))", lambda e: sumexp(f64(e["w"])))
        add("logsumexp_nan", "logsumexp(v)", lambda e: lse(f64(e["v"])))
        add("sumexp_nan_plus_max", "sum(exp(v - max(v))) + max(v)", lambda e: sumexp(f64(e["v"])) + np.max(f64(e["v"])))
        add("logsumexp_neg_inf", "logsumexp(g)", lambda e: lse(f64(e["g"])))
        add("logsumexp_beside_mean_var", "logsumexp(x) + mean(y) + var(x)",
            lambda e: lse(f64(e["x"])) + np.mean(f64(e["y"])) + np.var(f64(e["x"])))
        add("sumexp_beside_max", "sum(exp(x - max(x))) + max(y)", lambda e: sumexp(f64(e["x"])) + np.max(f64(e["y"])))
    return "online %s n=%d" % (dn, n), inp, C


def longrows_group(D, r, c, dt):
    """Row programs over rows too long to keep in registers, read more than
    once (gk_row_stream; on the cuda backend one row per SM once the rows in
    flight would not fit in L2): one and two inputs, a pending operand."""
    dn = NAME[dt]
    m, y = D.signed((r, c), dt), D.signed((r, c), dt)
    gc, bc = D.signed(c, dt), D.signed(c, dt)
    inp = {"m": m, "y": y, "gc": gc, "bc": bc}
    C = []
    M = "float"

    def add(name, expr, ref):
        C.append(Check("longrows/%s/%dx%d/%s" % (dn, r, c, name), expr, ref, dt, M, 1e-5))

    add("softmax", "softmax(rows(m))", lambda e: softmax(f64(e["m"]), 1))
    add("logsoftmax", "logsoftmax(rows(m))", lambda e: logsoftmax(f64(e["m"]), 1))
    add("layernorm", "layernorm(rows(m))", lambda e: layernorm(f64(e["m"]), None, None, 1e-5, 1))
    add("layernorm_gb", "layernorm(rows(m), gc, bc, eps=1e-3)",
        lambda e: layernorm(f64(e["m"]), f64(e["gc"]), f64(e["bc"]), 1e-3, 1))
    add("rmsnorm_g", "rmsnorm(rows(m), gc)", lambda e: rmsnorm(f64(e["m"]), f64(e["gc"]), axis=1))
    add("rmsnorm", "rmsnorm(rows(m))", lambda e: rmsnorm(f64(e["m"]), axis=1))
    add("softmax_pending_two", "softmax(rows(m * 2 - y))", lambda e: softmax(2 * f64(e["m"]) - f64(e["y"]), 1))
    add("minus_max_times_sum", "(rows(m) - max(rows(m))) * sum(rows(y))",
        lambda e: (f64(e["m"]) - np.max(f64(e["m"]), 1, keepdims=True)) * np.sum(f64(e["y"]), 1, keepdims=True))
    add("sum", "sum(rows(m))", lambda e: np.sum(f64(e["m"]), 1))
    add("max_pending", "max(rows(m - y))", lambda e: np.max(f64(e["m"]) - f64(e["y"]), 1))
    add("var", "var(rows(m))", lambda e: np.var(f64(e["m"]), 1))
    add("scan", "scan(rows(m))", lambda e: np.cumsum(f64(e["m"]), 1))
    return ("longrows %s %dx%d" % (dn, r, c), inp, C)


def longrows_grid_group(D, r, c):
    """Few long f32 rows, where a block or a cluster a row would leave most
    SMs idle (on the cuda backend gk_row_grid: S blocks a row anywhere in
    the grid, the shares in shared memory, the partials exchanged through
    global memory; launch.h gk_rows_plan_grid): the normalisations, a
    pending operand, and views of a pending value (these keep the streamed
    plan: the view is read in the lift, not a field of the share)."""
    m = D.signed((r, c), F32)
    gc, bc = D.signed(c, F32), D.signed(c, F32)
    inp = {"m": m, "gc": gc, "bc": bc}
    C = []

    def add(name, expr, ref):
        C.append(Check("longrows/grid/f32/%dx%d/%s" % (r, c, name), expr, ref, F32, "float", 1e-5))

    add("softmax", "softmax(rows(m))", lambda e: softmax(f64(e["m"]), 1))
    add("logsoftmax", "logsoftmax(rows(m))", lambda e: logsoftmax(f64(e["m"]), 1))
    add("layernorm", "layernorm(rows(m))", lambda e: layernorm(f64(e["m"]), None, None, 1e-5, 1))
    add("layernorm_gb", "layernorm(rows(m), gc, bc, eps=1e-3)",
        lambda e: layernorm(f64(e["m"]), f64(e["gc"]), f64(e["bc"]), 1e-3, 1))
    add("rmsnorm", "rmsnorm(rows(m))", lambda e: rmsnorm(f64(e["m"]), axis=1))
    add("rmsnorm_g", "rmsnorm(rows(m), gc)", lambda e: rmsnorm(f64(e["m"]), f64(e["gc"]), axis=1))
    add("softmax_pending", "softmax(rows(m * 2 + 1))", lambda e: softmax(2 * f64(e["m"]) + 1, 1))
    add("softmax_view_of_pending", "softmax(rows((m * 2 + 1)[:, 1:]))", lambda e: softmax((2 * f64(e["m"]) + 1)[:, 1:], 1))
    if r > 1:
        add("layernorm_view_rows", "layernorm(rows(m[1:, :] * 2 + 1))",
            lambda e: layernorm(2 * f64(e["m"])[1:, :] + 1, None, None, 1e-5, 1))
    return ("longrows grid f32 %dx%d" % (r, c), inp, C)


def longrows_int_group(D, r, c):
    """Normalisations of long int32 rows (f32 results): on the cuda backend the
    shares of one 4-byte input copied ahead (gk_row_cluster_async) hold ints."""
    m = D.signed((r, c), I32)
    C = []

    def add(name, expr, ref):
        C.append(Check("longrows/i32/%dx%d/%s" % (r, c, name), expr, ref, F32, "float", 1e-5))

    add("softmax", "softmax(rows(m))", lambda e: softmax(f64(e["m"]), 1))
    add("logsoftmax", "logsoftmax(rows(m))", lambda e: logsoftmax(f64(e["m"]), 1))
    add("layernorm", "layernorm(rows(m))", lambda e: layernorm(f64(e["m"]), 1.0, 0.0, 1e-5, 1))
    add("rmsnorm", "rmsnorm(rows(m))", lambda e: rmsnorm(f64(e["m"]), axis=1))
    return ("longrows i32 %dx%d" % (r, c), {"m": m}, C)


def scan_axis_group(D, r, c, dt, axis):
    """Scans along one axis of few long rows (axis 1, "rowscan": on the cuda
    backend each row by the look-back over its own tiles, gk_row_scan_lb:
    rows of 2+ tiles, the last one short, and rows of more than 32 tiles:
    look-back groups) or of the columns of tall narrow and short wide
    matrices (axis 0, "colscan": gk_col_scan; 1000003 x 3 is one strip of
    7813 row tiles, past 32 look-back groups of 32; 33 x 100003 is 3126
    strips of one tile): every op, the exclusive forms, a pending operand
    (the load) and an epilogue (the store)."""
    dn = NAME[dt]
    m, p, q, y = D.signed((r, c), dt), D.positive((r, c), dt), D.near_one((r, c), dt), D.signed((r, c), dt)
    inp = {"m": m, "mp": p, "mq": q, "y": y}
    C = []
    sd, M = sum_dt(dt), "float"
    isf = dt.kind == "f"
    topic, v = ("rowscan", "rows") if axis == 1 else ("colscan", "cols")

    def add(name, expr, ref, dtype, kind="exact", tol=0.0):
        C.append(Check("%s/%s/%dx%d/%s" % (topic, dn, r, c, name), expr % v, ref, dtype, kind, tol))

    def S(a):
        return f64(a) if isf else a.astype(I64)

    add("scan", "scan(%s(mp))", lambda e: np.cumsum(S(e["mp"]), axis), sd, M, 1e-4)
    add("exscan", "exscan(%s(mp))", lambda e: exscan_ref(S(e["mp"]), "sum", axis), sd, M, 1e-4)
    add("scan_prod", "scan(%s(mq), prod)", lambda e: np.cumprod(S(e["mq"]), axis), sd, M, 1e-4)
    add("exscan_prod", "exscan(%s(mq), prod)", lambda e: exscan_ref(S(e["mq"]), "prod", axis), sd, M, 1e-4)
    add("scan_max", "scan(%s(m), max)", lambda e: np.maximum.accumulate(e["m"], axis), dt)
    add("scan_min", "scan(%s(m), min)", lambda e: np.minimum.accumulate(e["m"], axis), dt)
    if isf:
        add("exscan_max", "exscan(%s(m), max)", lambda e: exscan_ref(f64(e["m"]), "max", axis), dt, M, 0.0)
        add("exscan_min", "exscan(%s(m), min)", lambda e: exscan_ref(f64(e["m"]), "min", axis), dt, M, 0.0)
        add("scan_pending", "scan(%s(m * 2 - y))", lambda e: np.cumsum(2 * f64(e["m"]) - f64(e["y"]), axis), dt, M, 1e-4)
        add("scan_epilogue", "scan(%s(m)) * 0.5", lambda e: np.cumsum(f64(e["m"]), axis) * 0.5, dt, M, 1e-4)
    elif dt == B_:
        add("scan_bool", "scan(%s(m))", lambda e: np.cumsum(e["m"], axis, dtype=I64), I64)
    return ("%s %s %dx%d" % (topic, dn, r, c), inp, C)


def matrix_group(D, r, c, dt):
    dn = NAME[dt]
    m, p, q = D.signed((r, c), dt), D.positive((r, c), dt), D.near_one((r, c), dt)
    mb = D.mask((r, c))
    gc, gr = D.positive(c, dt), D.positive(r, dt)
    bc, br = D.signed(c, dt), D.signed(r, dt)
    inp = {"m": m, "mp": p, "mq": q, "mb": mb, "gc": gc, "gr": gr, "bc": bc, "br": br}
    C = []
    isf = dt.kind == "f"
    cv, sd = conv(dt), sum_dt(dt)
    M = "float"

    def add(name, expr, ref, dtype, kind="exact", tol=0.0):
        C.append(Check("mat/%s/%dx%d/%s" % (dn, r, c, name), expr, ref, dtype, kind, tol))

    for view, ax in (("rows", 1), ("cols", 0)):
        V = lambda s, view=view: "%s(%s)" % (view, s)
        add(view + "_sum", "sum(%s)" % V("mp"), lambda e, ax=ax: np.sum(f64(e["mp"]), ax) if sd.kind == "f"
            else np.sum(e["mp"], ax, dtype=I64), sd, M, 1e-6)
        add(view + "_prod", "prod(%s)" % V("mq"), lambda e, ax=ax: np.prod(f64(e["mq"]), ax) if sd.kind == "f"
            else np.prod(e["mq"], ax, dtype=I64), sd, M, 1e-4)
        add(view + "_max", "max(%s)" % V("m"), lambda e, ax=ax: np.max(e["m"], ax), dt)
        add(view + "_min", "min(%s)" % V("m"), lambda e, ax=ax: np.min(e["m"], ax), dt)
        add(view + "_argmax", "argmax(%s)" % V("m"), lambda e, ax=ax: np.argmax(e["m"], ax).astype(I64), I64)
        add(view + "_argmin", "argmin(%s)" % V("m"), lambda e, ax=ax: np.argmin(e["m"], ax).astype(I64), I64)
        add(view + "_mean", "mean(%s)" % V("mp"), lambda e, ax=ax: np.mean(f64(e["mp"]), ax), cv, M, 1e-6)
        add(view + "_var", "var(%s)" % V("m"), lambda e, ax=ax: np.var(f64(e["m"]), ax), cv, M, 1e-5)
        add(view + "_std", "std(%s)" % V("m"), lambda e, ax=ax: np.std(f64(e["m"]), ax), cv, M, 1e-5)
        add(view + "_norm", "norm(%s)" % V("m"), lambda e, ax=ax: np.linalg.norm(f64(e["m"]), axis=ax), cv, M, 1e-6)
        add(view + "_logsumexp", "logsumexp(%s)" % V("m"),
            lambda e, ax=ax: np.log(np.sum(np.exp(f64(e["m"])), ax)), cv, M, 1e-5)
        add(view + "_count", "count(%s)" % V("mb"), lambda e, ax=ax: np.count_nonzero(e["mb"], ax).astype(I64), I64)
        add(view + "_any", "any(%s)" % V("m > 0"), lambda e, ax=ax: np.any(e["m"] > 0, ax), B_)
        add(view + "_all", "all(%s)" % V("m > 0"), lambda e, ax=ax: np.all(e["m"] > 0, ax), B_)
        add(view + "_scan", "scan(%s)" % V("mp"), lambda e, ax=ax: np.cumsum(f64(e["mp"]), ax) if sd.kind == "f"
            else np.cumsum(e["mp"], ax, dtype=I64), sd, M, 1e-4)
        add(view + "_scan_prod", "scan(%s, prod)" % V("mq"), lambda e, ax=ax: np.cumprod(f64(e["mq"]), ax)
            if sd.kind == "f" else np.cumprod(e["mq"], ax, dtype=I64), sd, M, 1e-4)
        add(view + "_scan_max", "scan(%s, max)" % V("m"), lambda e, ax=ax: np.maximum.accumulate(e["m"], ax), dt)
        add(view + "_scan_min", "scan(%s, min)" % V("m"), lambda e, ax=ax: np.minimum.accumulate(e["m"], ax), dt)
        add(view + "_exscan", "exscan(%s)" % V("mp"), lambda e, ax=ax: exscan_ref(
            f64(e["mp"]) if sd.kind == "f" else e["mp"].astype(I64), "sum", ax), sd, M, 1e-4)
        add(view + "_exscan_prod", "exscan(%s, prod)" % V("mq"), lambda e, ax=ax: exscan_ref(
            f64(e["mq"]) if sd.kind == "f" else e["mq"].astype(I64), "prod", ax), sd, M, 1e-4)
        g, bb = ("gc", "bc") if ax == 1 else ("gr", "br")
        other = "br" if ax == 1 else "bc"
        # per-row / per-column broadcast of a vector
        add(view + "_bcast_add", "%s + %s" % (V("m"), other),
            lambda e, ax=ax, other=other: e["m"] + (e[other][:, None] if ax == 1 else e[other][None, :]), dt)
        add(view + "_minus_max", "%s - max(%s)" % (V("m"), V("m")),
            lambda e, ax=ax: e["m"] - np.max(e["m"], ax, keepdims=True), dt)
        if isf:
            add(view + "_exscan_max", "exscan(%s, max)" % V("m"),
                lambda e, ax=ax: exscan_ref(f64(e["m"]), "max", ax), dt, M, 0.0)
            add(view + "_softmax", "softmax(%s)" % V("m"), lambda e, ax=ax: softmax(f64(e["m"]), ax), dt, M, 1e-5)
            add(view + "_softmax_hand", "exp(%s - max(%s)) / sum(exp(%s - max(%s)))" % (V("m"), V("m"), V("m"), V("m")),
                lambda e, ax=ax: softmax(f64(e["m"]), ax), dt, M, 1e-5)
            add(view + "_logsoftmax", "logsoftmax(%s)" % V("m"),
                lambda e, ax=ax: logsoftmax(f64(e["m"]), ax), dt, M, 1e-5)
            add(view + "_layernorm", "layernorm(%s)" % V("m"), lambda e, ax=ax: layernorm(f64(e["m"]), axis=ax),
                dt, M, 1e-5)
            add(view + "_layernorm_gb", "layernorm(%s, %s, %s, eps=1e-3)" % (V("m"), g, bb),
                lambda e, ax=ax, g=g, bb=bb: layernorm(f64(e["m"]), f64(e[g]), f64(e[bb]), 1e-3, ax), dt, M, 1e-5)
            add(view + "_rmsnorm", "rmsnorm(%s)" % V("m"), lambda e, ax=ax: rmsnorm(f64(e["m"]), axis=ax), dt, M, 1e-5)
            add(view + "_rmsnorm_g", "rmsnorm(%s, %s, eps=1e-4)" % (V("m"), g),
                lambda e, ax=ax, g=g: rmsnorm(f64(e["m"]), f64(e[g]), 1e-4, ax), dt, M, 1e-5)
            add(view + "_rmsnorm_softmax_var", "rmsnorm(%s, softmax(%s)) + var(%s)" % (V("m"), bb, bb),
                lambda e, ax=ax, bb=bb: rmsnorm(f64(e["m"]), softmax(f64(e[bb])), axis=ax) + np.var(f64(e[bb])),
                dt, M, 1e-5)
            add(view + "_softmax_nest3", "softmax(%s(softmax(%s(softmax(%s)))))" % (view, view, V("m")),
                lambda e, ax=ax: softmax(softmax(softmax(f64(e["m"]), ax), ax), ax), dt, M, 1e-5)
            add(view + "_softmax_nest4_sum", "sum(softmax(%s(softmax(%s(softmax(%s(softmax(%s))))))))"
                % (view, view, view, V("m")),
                lambda e, ax=ax: np.sum(nest([lambda t: softmax(t, ax)] * 4, f64(e["m"])), ax), dt, M, 1e-5)
    add("sum", "sum(mp)", lambda e: np.sum(f64(e["mp"])) if sd.kind == "f" else np.sum(e["mp"], dtype=I64),
        sd, M, 1e-6)
    add("max", "max(m)", lambda e: np.max(e["m"]), dt)
    add("argmax", "argmax(m)", lambda e: np.int64(np.argmax(e["m"])), I64)
    add("vec_bcast", "m + bc", lambda e: e["m"] + e["bc"], dt)
    add("transpose", "transpose(m)", lambda e: e["m"].T, dt)
    add("permute", "permute(m, 1, 0)", lambda e: e["m"].T, dt)
    add("reshape", "reshape(m, %d, %d)" % (c, r), lambda e: e["m"].reshape(c, r), dt)
    add("reshape_flat", "reshape(m, %d)" % (r * c), lambda e: e["m"].reshape(r * c), dt)
    add("filter_mask", "m[mb]", lambda e: e["m"][e["mb"]], dt)
    for i in sorted({0, r // 2, r - 1}):
        add("row_%d" % i, "m[%d]" % i, lambda e, i=i: e["m"][i], dt)
    add("elem", "m[%d, %d]" % (r - 1, c // 2), lambda e: e["m"][r - 1, c // 2], dt)
    # a product's rounding grows with the inner length c (sqrt(c) ulps typical): 1x1000003 f32 was
    # 1.59e-05 off at one seed with a flat 1e-05 (sort7's make test)
    mt = 1e-5 * max(1.0, c ** 0.5 / 100)
    if r * r * c <= 2e9:
        if isf:
            add("matmul", "m @ transpose(mp)", lambda e: f64(e["m"]) @ f64(e["mp"]).T, dt, M, mt)
        else:
            add("matmul", "m @ transpose(mp)", lambda e: (e["m"].astype(I64) @ e["mp"].T.astype(I64)), I64
                if dt != I32 else I32)
        add("matvec", "m @ bc", lambda e: (f64(e["m"]) @ f64(e["bc"])) if isf else e["m"] @ e["bc"],
            dt, M, mt)
    return ("matrix %s %dx%d" % (dn, r, c), inp, C)


def moves_group(D, shape, dt):
    """Transposes and permutes whose output rows are not whole 128-byte lines
    (cuda: gk_transpose_al) or are, several tiles and segments each way, of
    inputs and of pending values."""
    dn, sh = NAME[dt], "x".join(map(str, shape))
    t = D.signed(shape, dt)
    C = []

    pd = I64 if dt == B_ else dt           # gk's type of t * 2 and t + t

    def add(name, expr, ref, rdt=dt):
        C.append(Check("move/%s/%s/%s" % (dn, sh, name), expr, ref, rdt))

    if len(shape) == 2:
        add("transpose", "transpose(t)", lambda e: e["t"].T)
        add("permute10", "permute(t, 1, 0)", lambda e: e["t"].T)
        add("transpose_pending", "transpose(t * 2)", lambda e: (e["t"].astype(pd) * 2).T, pd)
        add("transpose_slice", "transpose(t)[1:, ::2]", lambda e: e["t"].T[1:, ::2])
    else:
        for axes in ((0, 2, 1), (2, 0, 1), (1, 2, 0)):
            add("permute" + "".join(map(str, axes)), "permute(t, %s)" % ", ".join(map(str, axes)),
                lambda e, axes=axes: np.transpose(e["t"], axes))
        add("permute021_pending", "permute(t + t, 0, 2, 1)",
            lambda e: np.transpose(e["t"].astype(pd) + e["t"], (0, 2, 1)), pd)
    return ("moves %s %s" % (dn, sh), {"t": t}, C)


def tensor_group(D, shape, dt):
    dn = NAME[dt]
    t = D.signed(shape, dt)
    C = []
    for axes in ((2, 0, 1), (1, 2, 0), (0, 2, 1), (2, 1, 0)):
        C.append(Check("t3/%s/%s/permute%s" % (dn, "x".join(map(str, shape)), "".join(map(str, axes))),
                       "permute(t, %s)" % ", ".join(map(str, axes)),
                       lambda e, axes=axes: np.transpose(e["t"], axes), dt))
    a, b, c = shape
    C.append(Check("t3/%s/%s/reshape" % (dn, "x".join(map(str, shape))), "reshape(t, %d, %d)" % (a * b, c),
                   lambda e: e["t"].reshape(a * b, c), dt))
    C.append(Check("t3/%s/%s/index" % (dn, "x".join(map(str, shape))), "t[%d]" % (a - 1),
                   lambda e: e["t"][a - 1], dt))
    return ("tensor %s %s" % (dn, shape), {"t": t}, C)


def axis_group(D, shape, dt):
    """axis=k (every k, negative too) of every reduction, scan and
    normalisation on an array of any rank, also of a pending value and of a
    permuted view (issue 13 item 4)."""
    dn = NAME[dt]
    t, tp, tq = D.signed(shape, dt), D.positive(shape, dt), D.near_one(shape, dt)
    nd = len(shape)
    tb = D.mask(shape)
    inp = {"t": t, "tp": tp, "tq": tq, "tb": tb}
    C = []
    isf = dt.kind == "f"
    cv, sd = conv(dt), sum_dt(dt)
    M = "float"
    tag = "x".join(map(str, shape))

    big = t.size > 100000
    BIG = ("sum", "max", "argmin", "var", "scan", "exscan_prod", "sum_pending", "softmax", "layernorm_gb", "rmsnorm")

    def add(name, expr, ref, dtype, kind="exact", tol=0.0):
        if big and name.rstrip("-0123456789") not in BIG:
            return   # a big array: the ops whose kernels differ, so make test stays quick
        C.append(Check("axis/%s/%s/%s" % (dn, tag, name), expr, ref, dtype, kind, tol))

    def acc(op, a, k, dtype=None):
        """numpy's accumulate along k, in the dtype gk uses."""
        return op.accumulate(a, axis=k, dtype=dtype)

    def exscan(a, k, ident, op):
        r = op.accumulate(a, axis=k)
        r = np.moveaxis(r, k, -1)
        out = np.empty_like(r)
        if out.size == 0:
            return np.moveaxis(out, -1, k)
        out[..., 0] = ident
        out[..., 1:] = r[..., :-1]
        return np.moveaxis(out, -1, k)

    for k in range(-nd, nd):
        if k >= 0 and nd > 2 and k % 2:
            continue   # keep the count down: every axis once, half of them also negative
        K = ", axis=%d" % k
        nonempty = all(shape)
        add("sum%d" % k, "sum(tp%s)" % K, lambda e, k=k: np.sum(f64(e["tp"]), k) if sd.kind == "f"
            else np.sum(e["tp"], k, dtype=I64), sd, M, 1e-6)
        add("prod%d" % k, "prod(tq%s)" % K, lambda e, k=k: np.prod(f64(e["tq"]), k) if sd.kind == "f"
            else np.prod(e["tq"], k, dtype=I64), sd, M, 1e-4)
        if nonempty:
            add("max%d" % k, "max(t%s)" % K, lambda e, k=k: np.max(e["t"], k), dt)
            add("min%d" % k, "min(t%s)" % K, lambda e, k=k: np.min(e["t"], k), dt)
            add("argmax%d" % k, "argmax(t%s)" % K, lambda e, k=k: np.argmax(e["t"], k).astype(I64), I64)
            add("argmin%d" % k, "argmin(t%s)" % K, lambda e, k=k: np.argmin(e["t"], k).astype(I64), I64)
            # of a negation and of elementwise max/min chains: ptxas (CUDA 13.0) folded a
            # negated operand into VIMNMX3 wrongly for i32 (NOTES.md, session 7)
            add("negmax%d" % k, "max(-t%s)" % K, lambda e, k=k: np.max(-e["t"], k), dt)
            add("negmin%d" % k, "min(0 - t%s)" % K, lambda e, k=k: np.min(0 - e["t"], k), dt)
            add("maxchain%d" % k, "min(minimum(-t, t * 2) - 1%s)" % K,
                lambda e, k=k: np.min(np.minimum(-e["t"], e["t"] * 2) - 1, k), dt)
        add("mean%d" % k, "mean(tp%s)" % K, lambda e, k=k: np.mean(f64(e["tp"]), k), cv, M, 1e-6)
        add("var%d" % k, "var(t%s)" % K, lambda e, k=k: np.var(f64(e["t"]), k), cv, M, 1e-5)
        add("std%d" % k, "std(t%s)" % K, lambda e, k=k: np.std(f64(e["t"]), k), cv, M, 1e-5)
        add("norm%d" % k, "norm(t%s)" % K, lambda e, k=k: np.sqrt(np.sum(f64(e["t"]) ** 2, k)), cv, M, 1e-6)
        add("count%d" % k, "count(tb%s)" % K, lambda e, k=k: np.count_nonzero(e["tb"], k).astype(I64), I64)
        add("any%d" % k, "any(t > 0%s)" % K, lambda e, k=k: np.any(e["t"] > 0, k), B_)
        add("all%d" % k, "all(t > 0%s)" % K, lambda e, k=k: np.all(e["t"] > 0, k), B_)
        add("logsumexp%d" % k, "logsumexp(t%s)" % K,
            lambda e, k=k: np.log(np.sum(np.exp(f64(e["t"])), k)), cv, M, 1e-5)
        add("scan%d" % k, "scan(tp%s)" % K, lambda e, k=k: np.cumsum(f64(e["tp"]), k) if sd.kind == "f"
            else np.cumsum(e["tp"], k, dtype=I64), sd, M, 1e-4)
        add("scan_max%d" % k, "scan(t, max%s)" % K, lambda e, k=k: acc(np.maximum, e["t"], k), dt)
        add("exscan%d" % k, "exscan(tp%s)" % K, lambda e, k=k: exscan(
            f64(e["tp"]) if sd.kind == "f" else e["tp"].astype(I64), k, 0, np.add), sd, M, 1e-4)
        add("exscan_prod%d" % k, "exscan(tq, prod%s)" % K, lambda e, k=k: exscan(
            f64(e["tq"]) if sd.kind == "f" else e["tq"].astype(I64), k, 1, np.multiply), sd, M, 1e-4)
        # of a pending value, and the result consumed by a map
        add("sum_pending%d" % k, "sum(tp * 2 + 1%s) - 1" % K, lambda e, k=k: np.sum(f64(e["tp"]) * 2 + 1, k) - 1
            if sd.kind == "f" else np.sum(e["tp"].astype(I64) * 2 + 1, k) - 1, sd, M, 1e-6)
        if isf:
            sm = lambda a, k: a if a.size == 0 else \
                np.exp(a - a.max(k, keepdims=True)) / np.exp(a - a.max(k, keepdims=True)).sum(k, keepdims=True)
            add("softmax%d" % k, "softmax(t%s)" % K, lambda e, k=k: sm(f64(e["t"]), k), dt, M, 1e-5)
            add("logsoftmax%d" % k, "logsoftmax(t%s)" % K, lambda e, k=k: np.log(sm(f64(e["t"]), k)), dt, M, 1e-5)
            add("softmax_pending%d" % k, "softmax(t * 0.5 - 1%s) * 2" % K,
                lambda e, k=k: sm(f64(e["t"]) * 0.5 - 1, k) * 2, dt, M, 1e-5)

            def ln(a, k, g=None, b=None, eps=1e-5):
                mu = a.mean(k, keepdims=True)
                y = (a - mu) / np.sqrt(((a - mu) ** 2).mean(k, keepdims=True) + eps)
                sh = [1] * a.ndim
                sh[k] = a.shape[k]
                if g is not None:
                    y = y * g.reshape(sh)
                if b is not None:
                    y = y + b.reshape(sh)
                return y
            add("layernorm%d" % k, "layernorm(t%s)" % K, lambda e, k=k: ln(f64(e["t"]), k), dt, M, 1e-5)
            n = shape[k]
            add("layernorm_gb%d" % k, "layernorm(t, %s(iota(%d)) / %d + 0.5, -%s(iota(%d))%s)" % (dn, n, max(n, 1), dn, n, K),
                lambda e, k=k, n=n: ln(f64(e["t"]), k, np.arange(n) / max(n, 1) + 0.5, -np.arange(n, dtype=F64)),
                dt, M, 1e-5)
            add("rmsnorm%d" % k, "rmsnorm(t, eps=1e-4%s)" % K,
                lambda e, k=k: f64(e["t"]) / np.sqrt((f64(e["t"]) ** 2).mean(k, keepdims=True) + 1e-4), dt, M, 1e-5)
    if nd >= 2:
        # axis= of a permuted view of a pending value
        perm = tuple(range(nd))[::-1]
        add("permuted_sum", "sum(permute(tp + 1, %s), axis=1)" % ", ".join(map(str, perm)),
            lambda e: np.sum(f64(np.transpose(e["tp"], perm)) + 1, 1) if sd.kind == "f"
            else np.sum(np.transpose(e["tp"], perm).astype(I64) + 1, 1), sd, M, 1e-6)
    return ("axis %s %s" % (dn, shape), inp, C)


def axismid_group(D, shape, dt):
    """axis= on the middle axes of 3-d and 4-d arrays (a column kernel over
    the permuted array, its index split into a column part and a row part;
    a field loaded a pack of columns at once where the innermost dim allows):
    reductions, scans and normalisations of stored values, of pending ones,
    and of slices of pending ones (an offset, a step, a broadcast)."""
    dn = NAME[dt]
    t, tp = D.signed(shape, dt), D.positive(shape, dt)
    nd = len(shape)
    inp = {"t": t, "tp": tp}
    C = []
    isf = dt.kind == "f"
    cv, sd = conv(dt), sum_dt(dt)
    M = "float"
    tag = "x".join(map(str, shape))
    big = t.size > 100000
    BIG = ("sum", "max", "argmax", "var", "scan", "softmax", "sum_slice", "max_step")

    def add(name, expr, ref, dtype, kind="exact", tol=0.0):
        if big and name.rstrip("-0123456789") not in BIG:
            return
        C.append(Check("axis/mid/%s/%s/%s" % (dn, tag, name), expr, ref, dtype, kind, tol))

    def S(a):   # a sum's reference in gk's accumulation dtype
        return f64(a) if sd.kind == "f" else a.astype(I64)

    def sm(a, k):
        e = np.exp(a - a.max(k, keepdims=True))
        return e / e.sum(k, keepdims=True)

    def ln(a, k, eps=1e-5):
        mu = a.mean(k, keepdims=True)
        return (a - mu) / np.sqrt(((a - mu) ** 2).mean(k, keepdims=True) + eps)

    # slices of a pending value along the inner dim (keeps a pack's alignment
    # or breaks it) and a step along the first
    sl = "[:, :, 4:]" if nd == 3 else "[:, :, :, 4:]"
    st = "[::2]"
    for k in range(1, nd - 1):
        K = ", axis=%d" % k
        add("sum%d" % k, "sum(tp%s)" % K, lambda e, k=k: np.sum(S(e["tp"]), k), sd, M, 1e-6)
        add("max%d" % k, "max(t%s)" % K, lambda e, k=k: np.max(e["t"], k), dt)
        add("min%d" % k, "min(t%s)" % K, lambda e, k=k: np.min(e["t"], k), dt)
        add("argmax%d" % k, "argmax(t%s)" % K, lambda e, k=k: np.argmax(e["t"], k).astype(I64), I64)
        add("mean%d" % k, "mean(tp%s)" % K, lambda e, k=k: np.mean(f64(e["tp"]), k), cv, M, 1e-6)
        add("var%d" % k, "var(t%s)" % K, lambda e, k=k: np.var(f64(e["t"]), k), cv, M, 1e-5)
        add("norm%d" % k, "norm(t%s)" % K, lambda e, k=k: np.sqrt(np.sum(f64(e["t"]) ** 2, k)), cv, M, 1e-6)
        add("any%d" % k, "any(t > 0%s)" % K, lambda e, k=k: np.any(e["t"] > 0, k), B_)
        add("all%d" % k, "all(t > 0%s)" % K, lambda e, k=k: np.all(e["t"] > 0, k), B_)
        add("count%d" % k, "count(t > 0%s)" % K, lambda e, k=k: np.count_nonzero(e["t"] > 0, k).astype(I64), I64)
        add("logsumexp%d" % k, "logsumexp(t%s)" % K,
            lambda e, k=k: np.log(np.sum(np.exp(f64(e["t"])), k)), cv, M, 1e-5)
        add("scan%d" % k, "scan(tp%s)" % K, lambda e, k=k: np.cumsum(S(e["tp"]), k), sd, M, 1e-4)
        add("scan_max%d" % k, "scan(t, max%s)" % K, lambda e, k=k: np.maximum.accumulate(e["t"], axis=k), dt)
        # pending values and slices of them
        add("sum_pending%d" % k, "sum(tp * 2 + 1%s)" % K, lambda e, k=k: np.sum(S(e["tp"]) * 2 + 1, k), sd, M, 1e-6)
        if shape[-1] > 4:
            add("sum_slice%d" % k, "sum((tp + 1)%s%s)" % (sl, K),
                lambda e, k=k: np.sum(S(e["tp"])[(Ellipsis, slice(4, None))] + 1, k), sd, M, 1e-6)
            add("argmax_slice%d" % k, "argmax((t * 3)%s%s)" % (sl, K),
                lambda e, k=k: np.argmax(e["t"][(Ellipsis, slice(4, None))] * 3, k).astype(I64), I64)
        add("max_step%d" % k, "max((t - 1)%s%s)" % (st, K), lambda e, k=k: np.max(e["t"][::2] - 1, k), dt)
        add("sum_bcast%d" % k, "sum(tp + tp%s%s)" % ("[:, :1]" if nd == 3 else "[:, :1, :, :]", K),
            lambda e, k=k: np.sum(S(e["tp"]) + S(e["tp"])[:, :1], k), sd, M, 1e-6)
        if isf:
            add("softmax%d" % k, "softmax(t%s)" % K, lambda e, k=k: sm(f64(e["t"]), k), dt, M, 1e-5)
            add("softmax_step%d" % k, "softmax((t * 0.5)%s%s)" % (st, K),
                lambda e, k=k: sm(f64(e["t"])[::2] * 0.5, k), dt, M, 1e-5)
            add("layernorm%d" % k, "layernorm(t%s)" % K, lambda e, k=k: ln(f64(e["t"]), k), dt, M, 1e-5)
            add("rmsnorm_slice%d" % k, "rmsnorm((t + 0.5)%s, eps=1e-4%s)" % (sl, K), lambda e, k=k: (lambda a: a / np.sqrt(
                (a ** 2).mean(k, keepdims=True) + 1e-4))(f64(e["t"])[(Ellipsis, slice(4, None))] + 0.5), dt, M, 1e-5)
    return ("axismid %s %s" % (dn, shape), inp, C)


def words_group(D, n, dt):
    """Gather (x[idx], take, m[idx]), bincount, concat and stack (issue 13
    items 2 and 3) on fresh data of length n, also of pending values and views."""
    dn = NAME[dt]
    rng = D.rng
    x, y = D.signed(n, dt), D.signed(n, dt)
    r = max(1, n // 33) if n > 33 else n
    c = max(1, n // r)
    m = D.signed((r, c), dt)
    m2 = D.signed((r, c), dt)
    idx = rng.integers(-n, n, size=n + 2, dtype=np.int64)
    idx32 = rng.integers(-n, n, size=max(1, n // 2), dtype=np.int64).astype(np.int32)
    ridx = rng.integers(-r, r, size=(2, r + 1), dtype=np.int64)
    cidx = rng.integers(-c, c, size=(c + 2,), dtype=np.int64)
    K = min(n, 50)
    lab = rng.integers(0, K, size=n, dtype=np.int64)
    w = D.signed(n, dt) if dt.kind == "f" else D.signed(n, F32)
    inp = {"x": x, "y": y, "m": m, "m2": m2, "idx": idx, "idx32": idx32, "ridx": ridx, "cidx": cidx, "lab": lab, "w": w}
    C = []
    isf = dt.kind == "f"
    sd = sum_dt(dt)
    M = "float"

    def add(name, expr, ref, dtype, kind="exact", tol=0.0):
        C.append(Check("words/%s/n=%d/%s" % (dn, n, name), expr, ref, dtype, kind, tol))

    add("gather", "x[idx]", lambda e: e["x"][e["idx"]], dt)
    add("gather_i32", "x[idx32]", lambda e: e["x"][e["idx32"]], dt)
    add("take", "take(m, idx32 %% %d)" % (r * c), lambda e: np.take(e["m"], e["idx32"] % (r * c)), dt)
    add("take_axis1", "take(m, cidx, axis=1)", lambda e: np.take(e["m"], e["cidx"], axis=1), dt)
    add("take_axis0_pending", "take(m + m2, ridx, axis=0)", lambda e: np.take(
        e["m"].astype(sd) + e["m2"].astype(sd) if dt == B_ else e["m"] + e["m2"], e["ridx"], axis=0),
        dt if dt != B_ else I64)
    add("take_axis_view", "take(transpose(m)[::-1], cidx[:3], axis=-2) * 2", lambda e: np.take(
        e["m"].T[::-1], e["cidx"][:3], axis=-2) * 2, dt if dt != B_ else I64)
    add("gather_pending", "(x * 2 - y)[idx] * 3", lambda e: (e["x"] * 2 - e["y"])[e["idx"]] * 3, dt
        if dt != B_ else I64)
    add("gather_pending_idx", "x[(idx * 7 + 3) %% %d]" % n, lambda e: e["x"][(e["idx"] * 7 + 3) % n], dt)
    add("gather_view", "x[::-1][idx]", lambda e: e["x"][::-1][e["idx"]], dt)
    add("gather_sum", "sum(x[idx] * 2)", lambda e: np.sum(f64(e["x"][e["idx"]]) * 2) if isf
        else np.sum(e["x"][e["idx"]].astype(I64) * 2), sd, M, 1e-6)
    add("rows", "m[ridx]", lambda e: e["m"][e["ridx"]], dt)
    add("rows_pending", "(m + m2)[ridx[0]]", lambda e: (e["m"].astype(sd) + e["m2"].astype(sd))[e["ridx"][0]]
        if dt == B_ else (e["m"] + e["m2"])[e["ridx"][0]], dt if dt != B_ else I64)
    add("rows_sum", "sum(rows(m[ridx[1]]))", lambda e: np.sum(f64(e["m"][e["ridx"][1]]), 1) if isf
        else np.sum(e["m"][e["ridx"][1]].astype(I64), 1), sd, M, 1e-6)
    add("transposed_rows", "transpose(m)[lab[:5] %% %d]" % c, lambda e: e["m"].T[e["lab"][:5] % c], dt)
    add("bincount", "bincount(lab)", lambda e: np.bincount(e["lab"]).astype(I64), I64)
    add("bincount_min", "bincount(lab, minlength=%d)" % (K + 5), lambda e: np.bincount(e["lab"], minlength=K + 5)
        .astype(I64), I64)
    add("bincount_w", "bincount(lab, w)", lambda e: np.bincount(e["lab"], f64(e["w"])), conv(w.dtype), M, 1e-6)
    add("bincount_pending", "bincount((lab * 3) % 7, w * 2)", lambda e: np.bincount((e["lab"] * 3) % 7, f64(e["w"]) * 2),
        conv(w.dtype), M, 1e-6)
    add("concat", "concat(x, y)", lambda e: np.concatenate([e["x"], e["y"]]), dt)
    add("concat3_pending", "concat(x * 2, y[::-1], x[:1])", lambda e: np.concatenate(
        [e["x"] * 2, e["y"][::-1], e["x"][:1]]), dt if dt != B_ else I64)
    add("concat_sum", "sum(concat(x, y[::2]))", lambda e: np.sum(f64(np.concatenate([e["x"], e["y"][::2]]))) if isf
        else np.sum(np.concatenate([e["x"], e["y"][::2]]).astype(I64)), sd, M, 1e-6)
    add("concat_map", "concat(x, y) * 2 + 1", lambda e: np.concatenate([e["x"], e["y"]]) * 2 + 1,
        dt if dt != B_ else I64)
    for ax in (0, 1, -1):
        add("concat_m%d" % ax, "concat(m, m2 * 2, m, axis=%d)" % ax,
            lambda e, ax=ax: np.concatenate([e["m"], e["m2"] * 2, e["m"]], axis=ax), dt if dt != B_ else I64)
        add("concat_m_rows%d" % ax, "max(rows(concat(m, transpose(transpose(m2)), axis=%d)))" % ax,
            lambda e, ax=ax: np.max(np.concatenate([e["m"], e["m2"]], axis=ax), 1), dt)
        add("stack%d" % ax, "stack(m, m2, axis=%d)" % ax, lambda e, ax=ax: np.stack([e["m"], e["m2"]], axis=ax), dt)
    add("stack_vec", "stack(x, y, x)", lambda e: np.stack([e["x"], e["y"], e["x"]]), dt)
    add("stack_vec1", "stack(x, y, axis=1)", lambda e: np.stack([e["x"], e["y"]], axis=1), dt)
    return ("words %s n=%d" % (dn, n), inp, C)


def promotion_group(D, n):
    inp, C = {}, []
    for nm, dt in DTYPES.items():
        inp["a_" + nm] = D.signed(n, dt)
        inp["z_" + nm] = D.positive(n, dt)     # nonzero divisor
    inp["c"] = D.mask(n)
    for n1, d1 in DTYPES.items():
        for n2, d2 in DTYPES.items():
            rt = promote(d1, d2)
            A, Z = "a_" + n1, "z_" + n2
            pre = "promote/n=%d/%s,%s/" % (n, n1, n2)

            def ref2(op, A=A, Z=Z, rt=rt):
                return lambda e: op(e[A].astype(rt), e[Z].astype(rt))
            if not (d1 == B_ and d2 == B_):
                for op, sym in ((np.add, "+"), (np.subtract, "-"), (np.multiply, "*")):
                    C.append(Check(pre + sym, "%s %s %s" % (A, sym, Z), ref2(op), rt,
                                   "float", 1e-6))
                C.append(Check(pre + "maximum", "maximum(%s, %s)" % (A, Z), ref2(np.maximum), rt))
                C.append(Check(pre + "minimum", "minimum(%s, %s)" % (A, Z), ref2(np.minimum), rt))
                C.append(Check(pre + "where", "where(c, %s, %s)" % (A, Z),
                               lambda e, A=A, Z=Z, rt=rt: np.where(e["c"], e[A].astype(rt), e[Z].astype(rt)), rt))
                C.append(Check(pre + "dot", "dot(z_%s, %s)" % (n1, Z),
                               lambda e, n1=n1, Z=Z, rt=rt: np.sum(f64(e["z_" + n1].astype(rt)) * f64(e[Z].astype(rt)))
                               if rt.kind == "f" else np.sum(e["z_" + n1].astype(rt).astype(I64) *
                                                             e[Z].astype(rt).astype(I64)),
                               sum_dt(rt), "float", 1e-6))
            if d2 != B_:
                C.append(Check(pre + "/", "%s / %s" % (A, Z),
                               lambda e, A=A, Z=Z, rt=rt: f64(e[A].astype(rt)) / f64(e[Z].astype(rt)),
                               conv(rt), "float", 1e-6))
            for op, sym in ((np.less, "<"), (np.equal, "=="), (np.greater_equal, ">=")):
                C.append(Check(pre + sym, "%s %s %s" % (A, sym, Z), ref2(op), B_))
    return ("promotion n=%d" % n, inp, C)

# ------------------------------------------------------------- running


# ------------------------------------------------------------- sort family


def sort_data(D, shape, dt):
    """Ties, NaNs, -0.0, infinities and extreme integers, among wide values."""
    r = D.rng
    if dt == B_:
        return r.random(shape) < 0.5
    if dt.kind == "f":
        x = np.where(r.random(shape) < 0.5, r.integers(-4, 5, shape) * 0.5, r.standard_normal(shape) * 1e3)
        u = r.random(shape)
        x = np.where(u < 0.03, np.nan, x)
        x = np.where((u >= 0.03) & (u < 0.06), -0.0, x)
        x = np.where((u >= 0.06) & (u < 0.07), np.inf, x)
        x = np.where((u >= 0.07) & (u < 0.08), -np.inf, x)
        return x.astype(dt)
    info = np.iinfo(dt)
    x = np.where(r.random(shape) < 0.5, r.integers(-5, 6, shape), r.integers(info.min, info.max, shape, dtype=dt,
                                                                            endpoint=True))
    u = r.random(shape)
    x = np.where(u < 0.02, info.min, np.where(u > 0.98, info.max, x))
    return x.astype(dt)


def qdata(a):
    """quantile's data as gk interpolates it: ints in f64 (numpy subtracts two
    neighbours in the int type, which wraps past its range: docs/language.md)."""
    return a.astype(np.float64) if a.dtype.kind in "iu" else a


def topk_ref(x, k, axis):
    """The k largest along axis, descending, ties by lower index, NaN largest:
    a stable ascending sort of the reversed segment, reversed."""
    n = x.shape[axis]
    o = n - 1 - np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    o = np.flip(o, axis)
    o = o[:, :k] if axis == 1 and x.ndim == 2 else (o[:k] if x.ndim == 1 or axis == 0 else o[..., :k])
    return o.astype(I64)


def colred_group(D, shape, dt):
    """Reductions over axis 0 of tall narrow arrays (gk_col_reduce with few
    column strips, so many row splits: 1000003 x 3 takes 782 of them), a
    3-d array's axis 0 too (its other axes as the columns), and of wide
    arrays of few rows (strips of 64-256 lanes)."""
    dn = NAME[dt]
    m, p, q = D.signed(shape, dt), D.positive(shape, dt), D.near_one(shape, dt)
    mb = D.mask(shape)
    inp = {"m": m, "mp": p, "mq": q, "mb": mb}
    C = []
    cv, sd = conv(dt), sum_dt(dt)
    M = "float"
    tag = "x".join(map(str, shape))
    V = (lambda s: "cols(%s)" % s) if len(shape) == 2 else (lambda s: "%s, axis=0" % s)

    def add(name, expr, ref, dtype, kind="exact", tol=0.0):
        C.append(Check("colred/%s/%s/%s" % (dn, tag, name), expr, ref, dtype, kind, tol))

    add("sum", "sum(%s)" % V("mp"), lambda e: np.sum(f64(e["mp"]), 0) if sd.kind == "f"
        else np.sum(e["mp"], 0, dtype=I64), sd, M, 1e-6)
    add("prod", "prod(%s)" % V("mq"), lambda e: np.prod(f64(e["mq"]), 0) if sd.kind == "f"
        else np.prod(e["mq"], 0, dtype=I64), sd, M, 1e-4)
    add("max", "max(%s)" % V("m"), lambda e: np.max(e["m"], 0), dt)
    add("min", "min(%s)" % V("m"), lambda e: np.min(e["m"], 0), dt)
    add("argmax", "argmax(%s)" % V("m"), lambda e: np.argmax(e["m"], 0).astype(I64), I64)
    add("argmin", "argmin(%s)" % V("m"), lambda e: np.argmin(e["m"], 0).astype(I64), I64)
    add("mean", "mean(%s)" % V("mp"), lambda e: np.mean(f64(e["mp"]), 0), cv, M, 1e-6)
    add("var", "var(%s)" % V("m"), lambda e: np.var(f64(e["m"]), 0), cv, M, 1e-5)
    add("norm", "norm(%s)" % V("m"), lambda e: np.sqrt(np.sum(f64(e["m"]) ** 2, 0)), cv, M, 1e-6)
    add("count", "count(%s)" % V("mb"), lambda e: np.count_nonzero(e["mb"], 0).astype(I64), I64)
    add("any", "any(%s)" % V("m > 0"), lambda e: np.any(e["m"] > 0, 0), B_)
    add("all", "all(%s)" % V("m > -1000000"), lambda e: np.all(e["m"] > -1000000, 0), B_)
    return ("colred %s %s" % (dn, tag), inp, C)


def sort_group(D, shape, dt):
    dn = NAME[dt]
    x = sort_data(D, shape, dt)
    n = x.shape[-1] if x.ndim else 1
    a = np.sort(sort_data(D, max(n // 3, 1), dt), kind="stable")
    inp = {"s": x, "a": a}
    C = []
    label = "x".join(map(str, x.shape))
    isf = dt.kind == "f"
    st = F64 if dt in INTS else dt

    def add(name, expr, ref, dtype):
        C.append(Check("sort/%s/%s/%s" % (dn, label, name), expr, ref, dtype))

    views = [("", -1)] if x.ndim != 2 else [("rows", 1), ("cols", 0)]
    for view, ax in views:
        V = (lambda e, view=view: "%s(%s)" % (view, e)) if view else (lambda e: e)
        pre = (view + "_") if view else ""
        L = x.shape[ax]
        add(pre + "sort", "sort(%s)" % V("s"), lambda e, ax=ax: np.sort(e["s"], axis=ax, kind="stable"), dt)
        add(pre + "argsort", "argsort(%s)" % V("s"),
            lambda e, ax=ax: np.argsort(e["s"], axis=ax, kind="stable").astype(I64), I64)
        if dt != B_:
            add(pre + "sort_pending", "sort(%s)" % V("s + s"), lambda e, ax=ax: np.sort(e["s"] + e["s"], axis=ax,
                                                                                       kind="stable"), dt)
        for k in sorted({0, min(1, L), min(8, L), L}):
            add(pre + "topk%d" % k, "topk(%s, %d)" % (V("s"), k), lambda e, ax=ax, k=k: np.take_along_axis(
                e["s"], topk_ref(e["s"], k, ax), ax), dt)
            add(pre + "argtopk%d" % k, "argtopk(%s, %d)" % (V("s"), k), lambda e, ax=ax, k=k: topk_rref(e, k, ax), I64)
        if L > 0 and (x.ndim <= 2):
            nax = None if not view else ax
            add(pre + "median", "median(%s)" % V("s"), lambda e, nax=nax: np.median(e["s"], axis=nax), st)
            if dt != B_:
                for q in (0.0, 0.3, 0.5, 0.75, 1.0):
                    add(pre + "quantile%g" % q, "quantile(%s, %r)" % (V("s"), q),
                        lambda e, nax=nax, q=q: np.quantile(qdata(e["s"]), q, axis=nax), st)
    for k in (range(-1, x.ndim) if x.ndim >= 2 else []):   # axis=k of every rank (words' axis= plumbing)
        L = x.shape[k]
        add("sort_axis%d" % k, "sort(s, axis=%d)" % k, lambda e, k=k: np.sort(e["s"], axis=k, kind="stable"), dt)
        add("argsort_axis%d" % k, "argsort(s, axis=%d)" % k,
            lambda e, k=k: np.argsort(e["s"], axis=k, kind="stable").astype(I64), I64)
        kk = min(2, L)
        if x.size: add("argtopk_axis%d" % k, "argtopk(s, %d, axis=%d)" % (kk, k), lambda e, k=k, kk=kk, L=L: np.moveaxis(
            topk_ref(np.moveaxis(e["s"], k, -1).reshape(-1, L), kk, 1).reshape(
                np.moveaxis(e["s"], k, -1).shape[:-1] + (kk,)), -1, k), I64)
        if L > 0 and x.size > 0:
            add("median_axis%d" % k, "median(s, axis=%d)" % k, lambda e, k=k: np.median(e["s"], axis=k), st)
            if dt != B_:
                add("quantile_axis%d" % k, "quantile(s, 0.3, axis=%d)" % k,
                    lambda e, k=k: np.quantile(qdata(e["s"]), 0.3, axis=k), st)
    if x.ndim == 1:
        add("unique", "unique(s)", lambda e: np.unique(e["s"]), dt)
        add("searchsorted", "searchsorted(a, s)", lambda e: np.searchsorted(e["a"], e["s"]).astype(I64), I64)
        add("searchsorted_self", "searchsorted(sort(s), s)",
            lambda e: np.searchsorted(np.sort(e["s"]), e["s"]).astype(I64), I64)
    if x.ndim == 2:
        add("unique", "unique(s)", lambda e: np.unique(e["s"]), dt)
        if x.size:
            add("median", "median(s)", lambda e: np.median(e["s"]), st)
    return ("sort %s %s" % (dn, label), inp, C)


def topk_rref(e, k, ax):
    return topk_ref(e["s"], k, ax)


def find_gk():
    b = os.environ.get("B", "build")
    for base in (os.getcwd(), ROOT):
        p = os.path.abspath(os.path.join(base, b, "gk"))
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


class Runner:
    def __init__(self, gk, backend, tmp, timeout, verbose):
        self.gk, self.backend, self.tmp, self.timeout, self.verbose = gk, backend, tmp, timeout, verbose
        self.passed = self.failed = 0

    def gk_run(self, src):
        cmd = [self.gk] + (["--backend", self.backend] if self.backend else []) + ["-e", src]
        try:
            p = subprocess.run(cmd, cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return None, "timed out after %g s" % self.timeout
        except OSError as e:
            return None, "cannot run gk: %s" % e
        return p.returncode, p.stderr.decode("utf-8", "replace").strip()

    def program(self, inp, checks, base):
        used = [k for k in inp if any(_uses(c.expr, k) for c in checks)]
        lines = ['%s = load("%s.npy")' % (k, k) for k in used]
        for i, c in enumerate(checks):
            lines.append('save("o%d.npy", %s)' % (base + i, c.expr))
        return "\n".join(lines)

    def run_group(self, label, inp, checks):
        for f in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, f))
        for k, a in inp.items():
            np.save(os.path.join(self.tmp, k + ".npy"), a)
        rc, err = self.gk_run(self.program(inp, checks, 0))
        errors = {}
        if rc != 0:
            # find the expressions that fail, one at a time
            for i, c in enumerate(checks):
                if os.path.exists(os.path.join(self.tmp, "o%d.npy" % i)):
                    continue
                rc1, err1 = self.gk_run(self.program(inp, [c], i))
                if rc1 != 0:
                    errors[i] = "gk failed (rc %s): %s" % (rc1, err1.split("\n")[0] if err1 else "")
        for i, c in enumerate(checks):
            if i in errors:
                msg = errors[i]
            else:
                path = os.path.join(self.tmp, "o%d.npy" % i)
                try:
                    out = np.load(path)
                except Exception as e:  # noqa
                    msg = "cannot read output: %s" % e
                else:
                    try:
                        msg = compare(c, out, c.ref(inp))
                    except Exception as e:  # noqa
                        msg = "compare raised %r" % e
            if msg:
                self.failed += 1
                print("FAIL %s: %s\n     expr: %s" % (c.name, msg, c.expr))
            else:
                self.passed += 1
                if self.verbose:
                    print("pass %s" % c.name)
        sys.stdout.flush()


def _uses(expr, name):
    import re
    return re.search(r"\b%s\b" % re.escape(name), expr) is not None


def main():
    ap = argparse.ArgumentParser(description="cross-check gk against numpy")
    ap.add_argument("--backend")
    ap.add_argument("--quick", action="store_true", help="skip the 1000003-element sizes")
    ap.add_argument("--seed", type=int)
    ap.add_argument("-k", action="append", default=[], help="only checks whose name contains this (repeat: any of them)")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("-j", "--jobs", type=int, default=1, help="groups run at once (data is drawn first, in order)")
    args = ap.parse_args()

    gk = find_gk()
    if gk is None:
        print("numpy_check.py: no gk binary at $B/gk", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % (2 ** 63))
    print("seed %d (replay with --seed %d)" % (seed, seed))
    D = Data(np.random.default_rng(seed))

    sizes = [1, 31, 33, 1000] + ([] if args.quick else [1000003])
    shapes = [(1, 1), (31, 33), (33, 31), (1000, 3), (3, 1000)] + \
        ([] if args.quick else [(1000, 1000), (1, 1000003), (300, 5001)])   # 300 x 5001: row reductions of 4097-16384
    # odd columns, a split block a row with packs of 4 from the aligned element (session 26)
    groups = []
    for n in sizes:
        for dt in DTYPES.values():
            groups.append(lambda n=n, dt=dt: vector_group(D, n, dt))
    for n in [1, 31, 33] + ([] if args.quick else [1000003, 2 ** 20 + 1]):
        for dt in (F32, F64):
            groups.append(lambda n=n, dt=dt: online_group(D, n, dt))
        for dt in DTYPES.values():
            groups.append(lambda n=n, dt=dt: filter_group(D, n, dt))
    # 5 x 20003 and 4 x 16386: rows starting at every offset in their 16 bytes (the aligned packs of a
    # streamed row, gk_row_span) with the odd and the 2-mod-4 length; 37 x 128, 3 x 1024, 5 x 8192: rows
    # that fill a warp's or block's packs exactly, the last block short of rows (policy FULL); 37 x 768:
    # 6 packs a lane (GK_ROWS_VARIANT=we=2); 270 x 16387: more rows than the GPU's clusters of long rows
    # (each takes 2-3 rows: the next row's share copied while this one is stored, gk_row_cluster_async);
    # 3 x 32000 and 2 x 57344: the ends of session 23's long-row plans (layernorm over 4 blocks of 256,
    # softmax's last length over the async kernel at 4 x 256); 2 x 65537 and 40 x 100003: softmax's rows
    # past 65536 over the async kernel at 8 x 256 (session 24), the second with more rows than clusters
    for r, c in [(3, 50257), (3, 32000), (5, 20003), (4, 16386), (37, 128), (3, 1024), (5, 8192), (37, 768),
                 (2, 65537)] + \
            ([] if args.quick else [(2, 65536), (2, 57344), (1, 2 ** 20 + 1), (270, 16387), (40, 100003), (3, 130001),
                                    (2, 200003), (1, 300001)]):
        for dt in (F32, F64):
            groups.append(lambda r=r, c=c, dt=dt: longrows_group(D, r, c, dt))
    # 3 x 130001 and 2 x 200003 (and i32 2 x 130001): rows past 65536 over gk_row_cluster_smem, 8 and 16
    # blocks of 256 a row (session 25, gk_rows_smem_long_cs); 1 x 300001 past its reach
    for r, c in [(5, 20003)] + ([] if args.quick else [(270, 16387), (2, 130001)]):
        groups.append(lambda r=r, c=c: longrows_int_group(D, r, c))
    # few long rows over the grid's blocks (cuda: gk_row_grid, session 26): one row, three, an odd and a
    # 2^20 + 1 length, 8 rows just past a cluster of 8's length, 5 rows past the smem clusters' reach;
    # 16 x 16385 the shortest such rows
    for r, c in [(16, 16385)] + ([] if args.quick else [(1, 1000003), (3, 1000003), (2, 2 ** 20 + 1), (8, 128257),
                                                        (5, 300007)]):
        groups.append(lambda r=r, c=c: longrows_grid_group(D, r, c))
    # few long rows scanned (cuda: each row by the look-back over its own tiles of 8192, 4096 for 8-byte
    # types): 2 tiles the last of 1 element (8193), 13 tiles (100003), 123 and 129 tiles (past a look-back
    # group of 32 tiles), a single row
    for r, c in [(5, 8193), (1, 16385)] + ([] if args.quick else [(3, 1000003), (33, 100003), (2, 2 ** 20 + 1)]):
        for dt in (F32, F64, I32) + ((I64, B_) if c == 8193 else ()):
            groups.append(lambda r=r, c=c, dt=dt: scan_axis_group(D, r, c, dt, 1))
    # columns scanned (cuda: gk_col_scan, tiles of 128 x 32): 33 row tiles (past a look-back group of 32), one
    # strip of 7813 tiles (245 groups); fewer rows than a tile (31, 127, 33: a thread a column, session 26)
    for r, c in [(4099, 3), (31, 33), (127, 1001)] + ([] if args.quick else [(1000003, 3), (33, 100003)]):
        for dt in (F32, I32) + ((F64, I64, B_) if r in (4099, 127) else ()):
            groups.append(lambda r=r, c=c, dt=dt: scan_axis_group(D, r, c, dt, 0))
    for r, c in shapes:
        for dt in (F32, F64, I32, I64):
            groups.append(lambda r=r, c=c, dt=dt: matrix_group(D, r, c, dt))
    # axis 0 of tall narrow arrays: few column strips, many row splits (gk_col_reduce's parallel fold)
    # and few rows (< 128): strips of 64-256 lanes
    for shape in [(4099, 3), (2049, 2, 3), (33, 4099), (70, 999)] + \
            ([] if args.quick else [(1000003, 3), (100000, 7), (2 ** 20 + 1, 2), (100000, 3, 7), (33, 100003), (1, 1000003)]):
        for dt in (F32, F64, I32, I64):
            groups.append(lambda shape=shape, dt=dt: colred_group(D, shape, dt))
    for shape in [(2, 3, 4), (31, 33, 5)] + ([] if args.quick else [(100, 101, 99)]):
        for dt in (F32, I64, B_):
            groups.append(lambda shape=shape, dt=dt: tensor_group(D, shape, dt))
    # 17 x 1000 ... 2 x 3 x 100001: a side of at most 32 (cuda: gk_transpose_narrow, either direction, batched)
    for shape in [(257, 1031), (33, 4099), (3, 130, 67), (17, 1000), (1000, 17), (32, 999), (2, 77),
                  (2, 3, 1001)] + \
            ([] if args.quick else [(4099, 33), (2 ** 20 + 1, 3), (3, 1000003), (2, 3, 100001)]):
        for dt in DTYPES.values():
            groups.append(lambda shape=shape, dt=dt: moves_group(D, shape, dt))
    for n in [1, 33, 1000] + ([] if args.quick else [1000003]):
        groups.append(lambda n=n: promotion_group(D, n))
    ashapes = [(1,), (31,), (33,), (1, 1), (31, 33), (33, 1), (1, 31), (0, 3), (2, 3, 4), (31, 1, 33),
               (1, 33, 31), (2, 3, 4, 5), (3, 1, 5, 2)] + \
        ([] if args.quick else [(1000003,), (1000003, 1), (1, 1000003), (100, 101, 99), (7, 1000, 3, 11)])
    for n in [1, 31, 33, 1000] + ([] if args.quick else [1000003]):
        for dt in DTYPES.values():
            groups.append(lambda n=n, dt=dt: words_group(D, n, dt))
    for shape in ashapes:
        for dt in (F32, F64, I32, I64) if len(shape) <= 2 and max(shape) < 1000 else (F32, I64):
            groups.append(lambda shape=shape, dt=dt: axis_group(D, shape, dt))
    mshapes = [(31, 33, 4), (1, 31, 12), (33, 1, 32), (31, 33, 1), (2, 33, 31), (3, 31, 2, 8), (2, 1, 33, 5)] + \
        ([] if args.quick else [(5, 1003, 132)])
    for shape in mshapes:
        for dt in (F32, F64, I32, I64) if shape[0] == 31 else (F32, I64):
            groups.append(lambda shape=shape, dt=dt: axismid_group(D, shape, dt))
    sort_shapes = [1, 31, 33, 1000, (1, 1), (31, 33), (33, 31), (1000, 1), (1, 1000), (2, 3, 4), (0, 5), (5, 0),
                   (3, 1, 5, 2), (31, 1, 33), 5000, (2, 5000)] + \
        ([] if args.quick else [1000003, 2 ** 20 + 1, (64, 4097), (3, 100003)])
    for shape in sort_shapes:
        for dt in DTYPES.values():
            groups.append(lambda shape=shape, dt=dt: sort_group(D, shape, dt))

    tmp = tempfile.mkdtemp(prefix="gk_numpy_check_")
    built = [g() for g in groups]          # the random data, drawn in order: replayable
    runners = []
    def job(i):
        label, inp, checks = built[i]
        checks = [c for c in checks if not args.k or any(k in c.name for k in args.k)]
        d = os.path.join(tmp, str(i))
        os.makedirs(d, exist_ok=True)
        r = Runner(gk, args.backend, d, args.timeout, args.v)
        runners.append(r)
        if checks:
            if args.v:
                print("-- %s (%d checks)" % (label, len(checks)))
            r.run_group(label, inp, checks)
    try:
        if args.jobs > 1:
            import concurrent.futures
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
                list(ex.map(job, range(len(built))))
        else:
            for i in range(len(built)):
                job(i)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    R = Runner(gk, args.backend, tmp, args.timeout, args.v)
    R.passed = sum(r.passed for r in runners)
    R.failed = sum(r.failed for r in runners)
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
