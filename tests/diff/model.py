"""The reference model of gkdiff: gk's dtype rules and numpy semantics, with an
error bound carried through every operation.

A value (V) holds its gk dtype, shape, view mark (None, "rows", "cols"), the
reference `hi` (float64 for float dtypes, the exact array for int/bool ones),
an elementwise absolute error bound `e` (float64; 0 where exact) and `exact`:
True when gk must reproduce `hi` bit for bit (ints, bools, orderings, counts,
and float chains of correctly rounded IEEE operations -- + - * / sqrt, casts,
views, filters, max/min -- computed here in the same dtype as gk does).

Every operation raises Reject when the program would be one the generator
must not produce: a shape or dtype error gk documents, an empty max, a value
out of range, or a result whose discrete outcome (a comparison, a cast to int,
an argmax, a histogram bin) is closer to its threshold than the error bound,
or a float result whose bound is too loose to test anything.
"""
import math
import os
import sys

import numpy as np

B_, I32, I64, F32, F64 = (np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64),
                          np.dtype(np.float32), np.dtype(np.float64))
DTYPES = {"bool": B_, "i32": I32, "i64": I64, "f32": F32, "f64": F64}
NAME = {v: k for k, v in DTYPES.items()}
INTS = (B_, I32, I64)
WI, WF = "wi", "wf"          # weak int / weak float literal "dtypes"

CT = 8        # ulps allowed for a transcendental function (exp, log, sin, ...)
VACUOUS = 1e-3  # a float result whose bound exceeds this * max|value| is not tested


class Reject(Exception):
    pass


def U(dt):
    return 2.0 ** -24 if dt == F32 else 2.0 ** -53


def G(n, t=None, ax=None, nd=2):
    """Rounding growth (in units of U) allowed for a reduction of n terms: a
    pairwise tree over serial runs (the cpu backend adds f64 serially within
    its 2048-element chunks; f32 adds in double there, in short serial runs
    per thread on cuda).  Down a column (ax 0) both backends -- and numpy's
    own axis-0 reduction -- add the rows serially (cuda splits a column into
    at most 16 runs): the whole column is one run."""
    if ax is not None and ax != nd - 1:
        run = n
    else:
        run = min(n, 2048) if t == F64 else min(n, 64)
    return run + 2 * math.ceil(math.log2(n + 1)) + 8


def GS(n):
    """... for a scan of n terms (backends may run f32 partial sums serially)."""
    return min(n, 4096) + 4 * math.ceil(math.log2(n + 1)) + 8


def isf(dt):
    return dt in (F32, F64)


# gk's dtype rules, as numpy_check.py states them (one copy for both testers)
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
from numpy_check import conv, promote, weak_int, sum_dt  # noqa: E402


INT_LIM = {B_: 1, I32: 2 ** 30, I64: 2 ** 60}
SQ_LIM = {F32: 1e14, F64: 1e100}   # |x| below which sums of squares stay finite
F_LIM = {F32: 1e30, F64: 1e200}


class V:
    __slots__ = ("dt", "shape", "view", "hi", "e", "exact", "lit")

    def __init__(self, dt, hi, e=None, exact=True, view=None, lit=None):
        self.dt = dt
        self.hi = hi
        self.shape = tuple(np.shape(hi))
        self.view = view
        self.lit = lit
        if dt in (WI, WF):
            self.e, self.exact = 0.0, True
            return
        if dt in INTS:
            self.hi = np.asarray(hi).astype(dt)
            self.e, self.exact = np.zeros(self.shape), True
        else:
            self.hi = np.asarray(hi, dtype=F64)
            if exact:
                self.e = np.zeros(self.shape)
            else:
                self.e = np.broadcast_to(np.asarray(e, dtype=F64), self.shape).copy()
            self.exact = exact

    @property
    def size(self):
        return int(np.prod(self.shape)) if self.shape else 1


def check(v):
    """Reject values gk cannot be tested on (overflow, a vacuous bound).  A
    NaN or an infinity is kept (numpy's semantics are the reference) where the
    value is exact or at that element alone (its bound is 0 there: the
    comparison asks for the same NaN / infinity); a finite element's bound must
    be finite and useful."""
    if v.dt in INTS:
        return v
    h = v.hi
    fin = np.isfinite(h)
    if not v.exact:
        if not fin.all():
            v.e = np.where(fin, v.e, 0.0)
        if not np.isfinite(v.e).all():
            raise Reject("bound")
        if fin.any():
            a = np.abs(h[fin])
            if a.max() > F_LIM[v.dt]:
                raise Reject("float range")
            if v.e.max() > VACUOUS * max(a.max(), 1e-30):
                raise Reject("vacuous bound")
            tiny = (a > 0) & (a < 1e-25)
            if tiny.any():
                raise Reject("denormal territory")
    return v


MAX_ELEMS = 4_000_000   # a result larger than this is not generated (memory: model and gk)


def size_ok(shape):
    n = 1
    for d in shape:
        n *= int(d)
    if n > MAX_ELEMS:
        raise Reject("result too large")
    return shape


def prod_range_ok(h, t):
    """No partial product of h's elements, in any order, leaves the normal
    range of t (a product's order is the backend's: an overflow in one chunk
    and an underflow in another give inf * 0 = NaN where numpy's serial
    loop gives inf)."""
    a = np.abs(np.asarray(h, dtype=F64))
    if not np.isfinite(a).all():
        return False
    with np.errstate(divide="ignore"):
        lg = np.log10(np.where(a > 0, a, 1.0))
    hi, lo = lg[lg > 0].sum(), lg[lg < 0].sum()
    return hi < (30 if t == F32 else 200) and lo > (-25 if t == F32 else -200)


def fmax(h):
    """max |h| over the finite elements (0 when none)."""
    h = np.asarray(h, dtype=F64)
    f = h[np.isfinite(h)]
    return float(np.abs(f).max()) if f.size else 0.0


def rnd(dt, x):
    """x (float64 array) rounded to dt, back in float64."""
    return np.asarray(x, dtype=F64).astype(dt).astype(F64)


def lit_value(v, dt):
    """The weak literal v as an array of dtype dt."""
    t = v.lit
    if v.dt == WI:
        if dt == B_:
            raise Reject("literal with bool")
        return np.array(int(t)).astype(dt)
    return np.array(float(t)).astype(dt)


def resolve(a, b):
    """Result dtype of a binary arithmetic op and the operands as typed V's."""
    if a.dt in (WI, WF) and b.dt in (WI, WF):
        raise Reject("two literals")
    if a.dt in (WI, WF):
        b2, a2 = resolve(b, a)[1:]
        return resolve(b, a)[0], a2, b2
    if b.dt in (WI, WF):
        d = a.dt
        if b.dt == WI:
            t = weak_int(d)
        else:
            t = conv(d)
        return t, a, V(t, lit_value(b, t).astype(F64) if isf(t) else lit_value(b, t))
    return promote(a.dt, b.dt), a, b


def as_dt(v, t):
    """Operand v converted to dtype t (the implicit conversion of a binary op)."""
    if v.dt == t:
        return v
    if isf(t):
        if v.dt in INTS:
            hi = v.hi.astype(F64)
            r = rnd(t, hi)
            return V(t, r, exact=True, view=v.view)
        # f32 -> f64: exact
        return V(t, v.hi, v.e, v.exact, v.view)
    return V(t, v.hi.astype(t), view=v.view)


def bview(a, b):
    """View of a combined value, and the broadcast shapes (numpy arrays)."""
    va, vb = a.view, b.view
    if va and vb and va != vb:
        raise Reject("rows with cols")
    view = va or vb
    return view


def bshape(a, b, view):
    """Broadcast a's and b's hi/e to a common shape (the view rules included)."""
    sa, sb = a.shape, b.shape
    if view:
        # the view operand is a matrix; the other is scalar, same-shape matrix
        # or (only) a length-R vector for rows / length-C for cols
        mat = sa if a.view else sb
        if len(mat) != 2:
            raise Reject("view of non-matrix")
        R, C = mat
        def fit(x, s):
            if s == () or s == mat:
                return x
            if len(s) == 1:
                if view == "rows" and s[0] == R:
                    return np.asarray(x).reshape(R, 1) if np.ndim(x) else x
                if view == "cols" and s[0] == C:
                    return np.asarray(x).reshape(1, C) if np.ndim(x) else x
            raise Reject("view broadcast")
        return fit, mat
    try:
        shp = np.broadcast_shapes(sa, sb)
    except ValueError:
        raise Reject("broadcast")
    return (lambda x, s: x), size_ok(shp)


def binop(sym, a, b):
    if sym in ("and", "or"):
        if a.dt != B_ or b.dt != B_:
            raise Reject("and/or need bool")
        view = bview(a, b)
        fit, shp = bshape(a, b, view)
        f = np.logical_and if sym == "and" else np.logical_or
        return V(B_, np.broadcast_to(f(fit(a.hi, a.shape), fit(b.hi, b.shape)), shp), view=view)
    if sym in ("<", "<=", ">", ">=", "==", "!="):
        return compare_op(sym, a, b)
    if sym == "/":
        t, a2, b2 = resolve(a, b)
        t = conv(t)
        a2, b2 = as_dt(a2, t), as_dt(b2, t)
        return arith("/", t, a2, b2)
    if sym == "**":
        return power(a, b)
    t, a2, b2 = resolve(a, b)
    if t == B_ and sym in ("+", "-", "*", "%"):
        t = I64
    if sym == "-" and t == B_:
        raise Reject("bool minus")
    return arith(sym, t, as_dt(a2, t), as_dt(b2, t))


def arith(sym, t, a, b):
    view = bview(a, b)
    fit, shp = bshape(a, b, view)
    ah, bh = fit(a.hi, a.shape), fit(b.hi, b.shape)
    if t in INTS:
        x, y = ah.astype(I64), bh.astype(I64)
        if sym == "%" and np.any(np.broadcast_to(y, shp) == 0):
            raise Reject("mod 0")
        if sym == "/":
            raise Reject("int div")
        r = {"+": np.add, "-": np.subtract, "*": np.multiply, "%": np.mod}[sym](x, y)
        # ints wrap (two's complement, numpy's arrays): exact either way
        r = np.broadcast_to(r, shp)
        return check(V(t, r.astype(t), view=view))
    ae, be = fit(a.e, a.shape), fit(b.e, b.shape)
    exact = a.exact and b.exact
    u = U(t)
    with np.errstate(all="ignore"):
        if exact:
            x, y = ah.astype(t), bh.astype(t)
            if sym == "%":
                if np.any(np.broadcast_to(y, shp) == 0):
                    raise Reject("mod 0")
                r = np.mod(x, y)
                # floored modulo: exact in IEEE except the sign fix; model a bound
                r = np.broadcast_to(r.astype(F64), shp)
                q = np.floor(ah / bh)
                frac = np.abs(ah / bh - np.round(ah / bh))
                if np.any(np.broadcast_to(frac, shp) < 1e-4):
                    raise Reject("mod near a multiple")
                return check(V(t, r, 4 * u * (np.abs(r) + np.abs(bh) + np.abs(q * bh) * 0), exact=False, view=view))
            if sym == "/" and np.any(np.broadcast_to(y, shp) == 0):
                raise Reject("div 0")
            r = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[sym](x, y)
            return check(V(t, np.broadcast_to(r.astype(F64), shp), view=view))
        if sym == "+" or sym == "-":
            r = ah + bh if sym == "+" else ah - bh
            e = ae + be + 2 * u * np.abs(r)
        elif sym == "*":
            r = ah * bh
            e = np.abs(ah) * be + np.abs(bh) * ae + ae * be + 2 * u * np.abs(r)
        elif sym == "/":
            den = np.abs(bh) - be
            if np.any(np.broadcast_to(den <= 0.5 * np.abs(bh), shp)):
                raise Reject("div near 0")
            r = ah / bh
            e = (ae + np.abs(r) * be) / den + 2 * u * np.abs(r)
        elif sym == "%":
            q = ah / bh
            frac = np.abs(q - np.round(q))
            qe = (ae + np.abs(q) * be) / np.maximum(np.abs(bh) - be, 1e-300)
            if np.any(np.broadcast_to(frac <= 4 * qe + 1e-4, shp)) or np.any(np.broadcast_to(bh == 0, shp)):
                raise Reject("mod fragile")
            r = np.mod(ah, bh)
            e = ae + np.abs(np.floor(q)) * be + be + 4 * u * (np.abs(r) + np.abs(bh) + np.abs(ah))
        r = np.broadcast_to(r, shp)
        e = np.broadcast_to(e, shp)
    return check(V(t, r, e, exact=False, view=view))


def compare_op(sym, a, b):
    t, a2, b2 = resolve(a, b)
    if t == B_ and sym not in ("==", "!="):
        a2, b2 = as_dt(a2, I64), as_dt(b2, I64)
        t = I64
    a2, b2 = as_dt(a2, t), as_dt(b2, t)
    view = bview(a2, b2)
    fit, shp = bshape(a2, b2, view)
    ah, bh = fit(a2.hi, a2.shape), fit(b2.hi, b2.shape)
    f = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
         "==": np.equal, "!=": np.not_equal}[sym]
    if t in INTS or (a2.exact and b2.exact):
        if isf(t):
            r = f(ah.astype(t), bh.astype(t))
        else:
            r = f(ah, bh)
        return V(B_, np.broadcast_to(r, shp), view=view)
    ae, be = fit(a2.e, a2.shape), fit(b2.e, b2.shape)
    if np.any(np.broadcast_to(np.abs(ah - bh) <= 2 * (ae + be) + 1e-300, shp)):
        raise Reject("comparison too close")
    return V(B_, np.broadcast_to(f(ah, bh), shp), view=view)


def power(a, b):
    """a ** b with b a literal: 2 (x*x), 0.5 (sqrt), -1 (1/x), or 1.5 / 3."""
    if b.dt not in (WI, WF):
        raise Reject("only literal exponents")
    p = float(b.lit)
    if a.dt in (WI, WF):
        raise Reject("literal base")
    d = a.dt
    if b.dt == WI:
        if d in INTS:
            if p < 0:
                raise Reject("int to negative power")
            t = I64 if d == B_ else d
            r = a.hi.astype(I64) ** int(p)
            return V(t, r.astype(t), view=a.view)
        t = d
    else:
        t = conv(d)
    x = as_dt(a, t)
    if p == 2:
        return arith("*", t, x, x)
    if p == -1:
        return arith("/", t, V(t, np.ones(x.shape)), x)
    if p == 0.5:
        return unary("sqrt", x)
    # general power of a positive base
    h = x.hi
    if np.any(h <= 0) or np.any(x.e >= 0.5 * h):
        raise Reject("pow base")
    r = h ** p
    e = np.abs(r) * (abs(p) * x.e / h) * 1.5 + CT * U(t) * np.abs(r)
    return check(V(t, r, e, exact=False, view=x.view))


def unary(fn, a):
    if a.dt in (WI, WF):
        raise Reject("literal operand")
    d = a.dt
    if fn == "neg":
        if d == B_:
            raise Reject("neg bool")
        if d in INTS:
            return check(V(d, -a.hi, view=a.view))
        return V(d, -a.hi, a.e, a.exact, a.view)
    if fn == "not":
        if d != B_:
            raise Reject("not needs bool")
        return V(B_, ~a.hi, view=a.view)
    if fn in ("abs", "relu", "sign"):
        if d == B_:
            raise Reject("abs of bool")
        if d in INTS:
            r = {"abs": np.abs, "relu": lambda x: np.maximum(x, 0), "sign": np.sign}[fn](a.hi)
            return V(d, r.astype(d), view=a.view)
        h = a.hi
        if fn == "abs":
            return V(d, np.abs(h), a.e, a.exact, a.view)
        if fn == "relu":
            return V(d, np.maximum(h, 0), a.e, a.exact, a.view)
        if not a.exact and np.any(np.abs(h) <= 2 * a.e):
            raise Reject("sign fragile")
        return V(d, np.sign(h), view=a.view)
    if fn in ("floor", "ceil", "round"):
        if d in INTS:
            raise Reject("floor of int (undocumented result type)")
        h = a.hi
        f = {"floor": np.floor, "ceil": np.ceil, "round": np.round}[fn]
        if not a.exact:
            # distance to the discontinuities (integers, or half-integers for round)
            off = 0.5 if fn == "round" else 0.0
            dist = np.abs((h - off) - np.round(h - off))
            if np.any(dist <= 2 * a.e + 1e-300):
                raise Reject("rounding fragile")
        if fn == "round" and a.exact:
            return V(d, f(h.astype(d)).astype(F64), view=a.view)
        return V(d, f(h), view=a.view)
    # float functions; ints become float
    t = conv(d)
    x = as_dt(a, t)
    h, e = x.hi, x.e
    u = U(t)
    with np.errstate(all="ignore"):
        if fn == "sqrt":
            if np.any(h < 0) or (not x.exact and np.any(h <= 4 * e)):
                raise Reject("sqrt domain")
            if x.exact:
                return V(t, np.sqrt(h.astype(t)).astype(F64), view=x.view)
            r = np.sqrt(h)
            e2 = e / (np.sqrt(np.maximum(h - e, 0)) + r) + 2 * u * r
            return check(V(t, r, e2, False, x.view))
        if fn == "rsqrt":
            if np.any(h <= 0) or np.any(h <= 4 * e):
                raise Reject("rsqrt domain")
            r = 1 / np.sqrt(h)
            e2 = r * e / (h - e) + CT * u * r
            return check(V(t, r, e2, False, x.view))
        if fn == "exp":
            if np.any(h > 60):
                raise Reject("exp range")
            r = np.exp(h)
            e2 = r * np.expm1(e) + CT * u * r
            return check(V(t, r, e2, False, x.view))
        if fn == "log":
            if np.any(h <= 0) or np.any(h <= 4 * e):
                raise Reject("log domain")
            r = np.log(h)
            e2 = e / (h - e) + CT * u * (np.abs(r) + 1)
            return check(V(t, r, e2, False, x.view))
        if fn in ("sin", "cos"):
            if np.any(np.abs(h) > 100):
                raise Reject("trig range")
            r = np.sin(h) if fn == "sin" else np.cos(h)
            e2 = e + CT * u * (np.abs(r) + 1) * (1 + np.abs(h))
            return check(V(t, r, e2, False, x.view))
        if fn == "tanh":
            r = np.tanh(h)
            e2 = e + CT * u * (np.abs(r) + 1)
            return check(V(t, r, e2, False, x.view))
        if fn == "sigmoid":
            r = 1 / (1 + np.exp(-h))
            e2 = e / 4 + CT * u * (np.abs(r) + 1)
            return check(V(t, r, e2, False, x.view))
        r, e2 = unary_more(fn, h, e, u)
        return check(V(t, r, e2, False, x.view))
    raise Reject("unknown fn " + fn)


def unary_more(fn, h, e, u):
    """tan asin acos atan sinh cosh log2 log10 exp2 expm1 log1p: the value and
    a first-order bound (derivative times the input's bound, CT ulps for the
    function itself)."""
    fin = h[np.isfinite(h)]
    if fn == "tan":
        if fin.size and np.abs(fin).max() > 1.2:
            raise Reject("tan range")
        r = np.tan(h)
        return r, e * (1 + (np.abs(r) + 3 * e) ** 2) * 1.5 + CT * u * (np.abs(r) + 1) * (1 + np.abs(h))
    if fn in ("asin", "acos"):
        if np.any(np.abs(h) + e > 0.95) or not np.isfinite(h).all():
            raise Reject("asin domain")
        r = np.arcsin(h) if fn == "asin" else np.arccos(h)
        return r, e / np.sqrt(1 - (np.abs(h) + e) ** 2) + CT * u * (np.abs(r) + 1)
    if fn == "atan":
        r = np.arctan(h)
        return r, e + CT * u * (np.abs(r) + 1)
    if fn in ("sinh", "cosh"):
        if fin.size and np.abs(fin).max() > 20:
            raise Reject("sinh range")
        r = np.sinh(h) if fn == "sinh" else np.cosh(h)
        return r, np.cosh(np.abs(h) + e) * e * 1.5 + CT * u * (np.abs(r) + 1)
    if fn in ("log2", "log10"):
        if np.any(h <= 0) or np.any(h <= 4 * e):
            raise Reject("log domain")
        r = np.log2(h) if fn == "log2" else np.log10(h)
        return r, e / (h - e) / math.log(2 if fn == "log2" else 10) + CT * u * (np.abs(r) + 1)
    if fn == "exp2":
        if np.any(h > 80):
            raise Reject("exp range")
        r = np.exp2(h)
        return r, r * np.expm1(e * math.log(2) * 1.5) + CT * u * r
    if fn == "expm1":
        if np.any(h > 60):
            raise Reject("exp range")
        r = np.expm1(h)
        return r, np.exp(h + e) * e * 1.5 + CT * u * np.abs(r)
    if fn == "log1p":
        if np.any(h <= -0.9) or np.any(1 + h <= 4 * e):
            raise Reject("log1p domain")
        r = np.log1p(h)
        return r, e / (1 + h - e) + CT * u * np.abs(r)
    raise Reject("unknown fn " + fn)


def isclass(fn, a):
    """isfinite / isnan / isinf: bool; ints are finite."""
    if a.dt in (WI, WF):
        raise Reject("literal operand")
    h = a.hi
    if a.dt in INTS:
        r = np.full(a.shape, fn == "isfinite")
    else:
        r = {"isfinite": np.isfinite, "isnan": np.isnan, "isinf": np.isinf}[fn](h)
    return V(B_, r, view=a.view)


def binfn(fn, a, b):
    """atan2(a, b), hypot(a, b): a binary op's dtype, then float."""
    t, a2, b2 = resolve(a, b)
    t = conv(t)
    a2, b2 = as_dt(a2, t), as_dt(b2, t)
    view = bview(a2, b2)
    fit, shp = bshape(a2, b2, view)
    ah, bh = fit(a2.hi, a2.shape), fit(b2.hi, b2.shape)
    ae, be = fit(a2.e, a2.shape), fit(b2.e, b2.shape)
    u = U(t)
    with np.errstate(all="ignore"):
        if fn == "hypot":
            r = np.hypot(ah, bh)
            e = ae + be + CT * u * r
        else:
            if not (np.isfinite(ah).all() and np.isfinite(bh).all()):
                raise Reject("atan2 of non-finite")
            rr = np.hypot(ah, bh)
            if np.any(rr <= 4 * (ae + be) + 1e-30):
                raise Reject("atan2 near the origin")
            if np.any((bh < 0) & (np.abs(ah) <= 2 * ae)) or np.any((bh < 0) & (ah == 0)):
                raise Reject("atan2 on the branch cut")
            r = np.arctan2(ah, bh)
            e = (np.abs(bh) * ae + np.abs(ah) * be) / (rr - ae - be) ** 2 * 1.5 + CT * u * (np.abs(r) + 1)
        r, e = np.broadcast_to(r, shp), np.broadcast_to(e, shp)
    return check(V(t, r, e, False, view))


def powarr(a, b):
    """pow(a, b) / a ** b with an array exponent: a float (or int) power."""
    t, a2, b2 = resolve(a, b)
    if t == B_:
        t = I64
    a2, b2 = as_dt(a2, t), as_dt(b2, t)
    view = bview(a2, b2)
    fit, shp = bshape(a2, b2, view)
    ah, bh = fit(a2.hi, a2.shape), fit(b2.hi, b2.shape)
    if t in INTS:
        x, y = np.broadcast_arrays(ah.astype(I64), bh.astype(I64))
        if np.any(y < 0) or (b.dt == WI and int(b.lit) < 0):
            raise Reject("int to a negative power")
        return V(t, np.broadcast_to(x ** y, shp).astype(t), view=view)
    ae, be = fit(a2.e, a2.shape), fit(b2.e, b2.shape)
    u = U(t)
    with np.errstate(all="ignore"):
        if np.any(ah <= 0) or np.any(ae >= 0.5 * ah) or not np.isfinite(bh).all() or not np.isfinite(ah).all():
            raise Reject("pow base")
        la = np.log(ah)
        if np.any(np.abs(bh * la) > 40):
            raise Reject("pow range")
        r = ah ** bh
        e = np.abs(r) * np.expm1((np.abs(bh) * ae / (ah - ae) + np.abs(la) * be) * 1.5) + 2 * CT * u * np.abs(r) * (1 + np.abs(bh * la))
        r, e = np.broadcast_to(r, shp), np.broadcast_to(e, shp)
    return check(V(t, r, e, False, view))


def cast(name, a):
    t = DTYPES[name]
    if a.dt in (WI, WF):
        # f32(0.3): the literal rounded to the type, a typed (not weak) constant
        if a.dt == WF and t in INTS:
            v = float(a.lit)
            if t == B_:
                return V(B_, np.array(v != 0))
            return V(t, np.array(math.trunc(v)).astype(t))
        if t == B_:
            return V(B_, np.array(float(a.lit) != 0))
        if isf(t):
            return V(t, np.array(float(a.lit)).astype(t).astype(F64))
        return V(t, np.array(int(a.lit)).astype(t))
    d = a.dt
    if d == t:
        return V(t, a.hi, a.e, a.exact, a.view)
    if isf(t):
        if d in INTS:
            return V(t, rnd(t, a.hi.astype(F64)), view=a.view)
        if a.exact:
            return check(V(t, rnd(t, a.hi), view=a.view))
        if t == F64:
            return V(t, a.hi, a.e, False, a.view)
        r = a.hi
        return check(V(t, r, a.e + 2 * U(F32) * np.abs(r), False, a.view))
    # to an int or bool
    if d in INTS:
        if t == B_:
            return V(B_, a.hi != 0, view=a.view)
        r = a.hi.astype(I64)
        return V(t, r.astype(t), view=a.view)     # i64 -> i32 wraps
    h = a.hi
    if t == B_:
        if not a.exact and np.any(np.abs(h) <= 2 * a.e):
            raise Reject("bool cast fragile")
        return V(B_, h != 0, view=a.view)
    if a.exact:
        # C's conversion as gk defines it (docs/language.md, Dtypes): NaN and
        # values outside the int's range become its minimum, as numpy on x86
        ii = np.iinfo(t)
        tr = np.trunc(np.where(np.isfinite(h), h, 0.0))
        bad = ~np.isfinite(h) | (tr < ii.min) | (tr >= 2.0 ** (ii.bits - 1))
        r = np.where(bad, ii.min, tr).astype(t) if bad.any() else np.trunc(h).astype(t)
        return V(t, r, view=a.view)
    lim = INT_LIM[t]
    if h.size and (fmax(h) > lim or not np.isfinite(h).all()):
        raise Reject("cast range")
    if not a.exact:
        dist = np.abs(h - np.round(h))
        if np.any(dist <= 2 * a.e + 1e-300) :
            raise Reject("trunc fragile")
    return V(t, np.trunc(h).astype(t), view=a.view)


# ----------------------------------------------------------------- reductions

def axis_of(a):
    return {None: None, "rows": 1, "cols": 0}[a.view]


def red_n(a, axis=None):
    ax = axis_of(a) if axis is None else axis
    return a.size if ax is None else a.shape[ax]


def the_axis(a, axis):
    """The axis a reduction, scan or normalisation runs along: axis= (numpy's
    rules, negative from the end) or the view's."""
    if axis is None:
        return axis_of(a)
    if a.view:
        raise Reject("axis= of a view")
    nd = len(a.shape)
    if not -nd <= axis < nd:
        raise Reject("axis out of range")
    return axis + nd if axis < 0 else axis


def reduce(fn, a, axis=None):
    if a.dt in (WI, WF):
        raise Reject("literal")
    if a.view and len(a.shape) != 2:
        raise Reject("view of non-matrix")
    ax = the_axis(a, axis)
    n = red_n(a, ax)
    d = a.dt
    h = a.hi
    R = lambda f, x: f(x) if ax is None else f(x, axis=ax)
    if fn in ("max", "min", "argmax", "argmin") and n == 0:
        raise Reject("empty max")
    if fn in ("sum", "prod"):
        t = sum_dt(d)
        if t in INTS:
            r = R(np.sum if fn == "sum" else np.prod, h.astype(I64))   # i64 wraps
            return check(V(t, r))
        u = U(t)
        if fn == "sum":
            r = R(np.sum, h)
            e = R(np.sum, a.e) + G(n, t, ax, len(a.shape)) * u * R(np.sum, np.abs(h))
        else:
            if np.any(np.abs(h) <= 4 * a.e) or (h.size and np.any(np.abs(h) < 1e-3)) or not prod_range_ok(h, t):
                raise Reject("prod fragile")
            r = R(np.prod, h)
            e = np.abs(r) * (np.expm1(R(np.sum, a.e / np.abs(h)) * 1.5) + G(n, t, ax, len(a.shape)) * u)
        return check(V(t, r, e, False))
    if fn in ("max", "min"):
        r = R(np.max if fn == "max" else np.min, h)
        if a.exact:
            return V(d, r)
        return check(V(d, r, R(np.max, a.e), False))
    if fn in ("argmax", "argmin"):
        f = np.argmax if fn == "argmax" else np.argmin
        r = R(f, h).astype(I64)
        if not a.exact:
            # the winner must beat every other element by more than the bounds
            s = -h if fn == "argmin" else h
            if ax is None:
                w = s.ravel()[r]
                rest = np.delete(s.ravel(), r)
                if rest.size and (w - rest.max()) <= 2 * (a.e.max() * 2) + 1e-300:
                    raise Reject("argmax fragile")
            else:
                srt = np.sort(s, axis=ax)
                if s.shape[ax] > 1:
                    gap = np.take(srt, -1, axis=ax) - np.take(srt, -2, axis=ax)
                    if np.any(gap <= 4 * R(np.max, a.e) + 1e-300):
                        raise Reject("argmax fragile")
        return V(I64, r)
    if fn in ("any", "all", "count"):
        if not a.exact and np.any(np.abs(h.astype(F64)) <= 2 * a.e):
            raise Reject("nonzero fragile")
        nz = h != 0
        if fn == "count":
            return V(I64, R(np.count_nonzero, nz).astype(I64) if ax is not None else np.int64(np.count_nonzero(nz)))
        return V(B_, R(np.any if fn == "any" else np.all, nz))
    # float statistics; ints become float
    if d in INTS and fmax(h) * max(n, 1) > 2.0 ** 52:
        raise Reject("big ints in a float statistic")
    t = conv(d)
    u = U(t)
    x = as_dt(V(d, h, a.e, a.exact) if d not in INTS else V(d, h), t)
    h, ex = x.hi, x.e
    if fn in ("var", "std", "norm") and fmax(h) > SQ_LIM[t]:
        raise Reject("squares overflow")
    if n == 0:
        # numpy: the mean / var / std of nothing is NaN, the norm 0,
        # logsumexp log(0) = -inf (docs/language.md, Numeric semantics)
        shp = h.shape if ax is None else h.shape[:ax] + h.shape[ax + 1:]
        shp = () if ax is None else shp
        val = {"mean": np.nan, "var": np.nan, "std": np.nan, "norm": 0.0, "logsumexp": -np.inf}[fn]
        return V(t, np.full(shp, val))
    if fn == "mean":
        if n == 0:
            raise Reject("empty mean")
        r = R(np.mean, h)
        e = R(np.mean, ex) + (G(n, t, ax, len(a.shape)) + 2) * u * R(np.mean, np.abs(h))
        return check(V(t, r, e, False))
    if fn in ("var", "std"):
        if n == 0:
            raise Reject("empty var")
        mu = R(np.mean, h)
        mk = mu if ax is None else np.expand_dims(mu, ax)
        r = R(np.var, h)
        dev = np.abs(h - mk)
        e = 2 * R(np.mean, dev * ex) + R(np.mean, ex * ex) * 2 + \
            4 * G(n, t, ax, len(a.shape)) * u * (r + mu * mu + R(np.mean, dev) * R(np.max, ex) * 0)
        if fn == "var":
            return check(V(t, r, e, False))
        s = np.sqrt(r)
        if np.any(s <= 0) or np.any(e >= 0.25 * r):
            raise Reject("std fragile")
        return check(V(t, s, e / (2 * np.sqrt(r - e)) + 2 * u * s, False))
    if fn == "norm":
        s = R(np.sum, h * h)
        es = R(np.sum, 2 * np.abs(h) * ex + ex * ex) + G(n, t, ax, len(a.shape)) * u * s
        r = np.sqrt(s)
        if np.any(r <= 0) or np.any(es >= 0.25 * s):
            raise Reject("norm fragile")
        return check(V(t, r, es / (2 * np.sqrt(s - es)) + 2 * u * r, False))
    if fn == "logsumexp":
        if n == 0:
            raise Reject("empty lse")
        m = R(np.max, h)
        mk = m if ax is None else np.expand_dims(m, ax)
        if fmax(h) > 80:
            raise Reject("lse range")
        with np.errstate(all="ignore"):
            r = m + np.log(R(np.sum, np.exp(h - mk)))
            # a lane with an infinite max: log(sum(exp(x))) is that infinity
            # (NaN if a NaN is there, which the max already is)
            r = np.where(np.isinf(m), m, r)
        e = R(np.max, ex) + (G(n, t, ax, len(a.shape)) + CT) * u * (np.abs(r) + np.abs(m) + 1)
        return check(V(t, r, e, False))
    raise Reject("unknown reduction " + fn)


def dot(a, b):
    if a.dt in (WI, WF) or b.dt in (WI, WF):
        raise Reject("literal")
    if len(a.shape) != 1 or a.shape != b.shape or a.view or b.view:
        raise Reject("dot shapes")
    t = promote(a.dt, b.dt)
    a2, b2 = as_dt(a, t), as_dt(b, t)
    st = sum_dt(t)
    if st in INTS:
        # dot = sum(a * b): the products are in the operands' dtype (i32 would
        # wrap), the sum in i64; keep the products in range
        pr = a2.hi.astype(I64) * b2.hi.astype(I64)
        if pr.size and np.abs(pr.astype(F64)).max() > INT_LIM[t if t != B_ else I64]:
            raise Reject("dot product overflow")
        r = np.sum(pr)
        return check(V(st, r))
    n = a.size
    p = a2.hi * b2.hi
    if p.size and np.abs(p).max() * n > F_LIM[t]:
        raise Reject("dot overflow")
    e = np.sum(np.abs(a2.hi) * b2.e + np.abs(b2.hi) * a2.e + a2.e * b2.e) + (G(n, t) + 2) * U(t) * np.sum(np.abs(p))
    return check(V(t, np.sum(p), e, False))


def matmul(a, b):
    if a.dt in (WI, WF) or b.dt in (WI, WF) or a.view or b.view:
        raise Reject("matmul operands")
    if len(a.shape) == 1 and len(b.shape) == 1:
        return dot(a, b)
    sa, sb = a.shape, b.shape
    if len(sa) > 2 or len(sb) > 2 or sa[-1] != sb[0]:
        raise Reject("matmul shapes")
    t = promote(a.dt, b.dt)
    if t == B_:
        # gk counts (i64, as sum(a * b)); numpy's bool product is an any
        # (documented in docs/language.md, Operators)
        t = I64
    a2, b2 = as_dt(a, t), as_dt(b, t)
    k = sa[-1]
    if t in INTS:
        r = a2.hi.astype(I64) @ b2.hi.astype(I64)
        bound = np.abs(a2.hi.astype(F64)) @ np.abs(b2.hi.astype(F64))
        if bound.size and bound.max() > INT_LIM[t]:
            raise Reject("matmul overflow")
        return V(t, r.astype(t))
    ah, bh = a2.hi, b2.hi
    if ah.size and bh.size and np.abs(ah).max() * np.abs(bh).max() * k > F_LIM[t]:
        raise Reject("matmul overflow")
    r = ah @ bh
    e = np.abs(ah) @ b2.e + a2.e @ np.abs(bh) + a2.e @ b2.e + (G(k, t) + 2) * U(t) * (np.abs(ah) @ np.abs(bh))
    return check(V(t, r, e, False))


# ----------------------------------------------------------------- scans

def scan(a, op, excl, axis=None):
    if a.dt in (WI, WF):
        raise Reject("literal")
    ax = the_axis(a, axis)
    d = a.dt
    h = a.hi
    shape = a.shape
    if ax is None:
        h = h.ravel()
        e0 = a.e.ravel()
        axis = 0
    else:
        e0 = a.e
        axis = ax
    n = h.shape[axis] if h.ndim else 1
    if h.size == 0:
        raise Reject("empty scan")
    if op in ("sum", "prod"):
        t = sum_dt(d)
    else:
        t = d
    view = a.view
    if t in INTS:
        x = h.astype(I64)
        if op == "sum":
            r = np.cumsum(x, axis=axis)
        elif op == "prod":
            r = np.cumprod(x, axis=axis)
        elif op == "max":
            r = np.maximum.accumulate(h, axis=axis)
        else:
            r = np.minimum.accumulate(h, axis=axis)
        if excl:
            if op in ("max", "min"):
                if t == B_:
                    ident = op == "min"     # max starts at false, min at true
                else:
                    ii = np.iinfo(t)
                    ident = ii.min if op == "max" else ii.max
            else:
                ident = 0 if op == "sum" else 1
            r = shift(r.astype(t), ident, axis)
        return V(t, r.astype(t), view=view)
    u = U(t)
    if op in ("max", "min"):
        f = np.maximum.accumulate if op == "max" else np.minimum.accumulate
        r = f(h, axis=axis)
        if a.exact:
            ee = None
        else:
            ee = np.maximum.accumulate(e0, axis=axis)
        if excl:
            r = shift(r, -np.inf if op == "max" else np.inf, axis)
            if ee is not None:
                ee = shift(ee, 0.0, axis)
        if ee is None:
            return V(t, r, view=view)
        if n > 1 and excl:
            raise Reject("inexact exscan max starts at inf")
        return check(V(t, r, ee, False, view))
    if op == "sum":
        # the reference in long double: numpy's f64 cumsum is one serial loop,
        # whose own rounding (n ulps) is as large as the bound allowed gk
        r = np.cumsum(h.astype(np.longdouble), axis=axis).astype(F64)
        e = np.cumsum(e0, axis=axis) + GS(n) * u * np.cumsum(np.abs(h), axis=axis)
        if excl:
            r, e = shift(r, 0.0, axis), shift(e, 0.0, axis)
    else:
        if np.any(np.abs(h) <= 4 * e0) or np.any(np.abs(h) < 1e-3) or not prod_range_ok(h, t):
            raise Reject("prod fragile")
        r = np.cumprod(h.astype(np.longdouble), axis=axis).astype(F64)
        e = np.abs(r) * (np.expm1(np.cumsum(e0 / np.abs(h), axis=axis) * 1.5) + GS(n) * u)
        if excl:
            r, e = shift(r, 1.0, axis), shift(e, 0.0, axis)
    return check(V(t, r, e, False, view))


def shift(r, ident, axis):
    """r moved one place along axis, ident in the first place (an exscan)."""
    out = np.empty_like(r)
    src = np.moveaxis(r, axis, 0)
    dst = np.moveaxis(out, axis, 0)
    if src.shape[0]:
        dst[0] = ident
        dst[1:] = src[:-1]
    return out


# ----------------------------------------------------------------- normalisations

def normalise(fn, a, g=None, b=None, eps=None, axis=None):
    if a.dt not in (F32, F64):
        raise Reject("normalise a float")
    if a.view and len(a.shape) != 2:
        raise Reject("view")
    ax = the_axis(a, axis)
    if a.size == 0:
        if g is not None or b is not None:
            raise Reject("empty with gamma")
        return V(a.dt, np.zeros(a.shape), view=a.view)
    t = a.dt
    u = U(t)
    h, ex = a.hi, a.e
    n = red_n(a, ax)
    if fmax(h) > SQ_LIM[t]:
        raise Reject("squares overflow")
    K = lambda v: v if ax is None else np.expand_dims(v, ax)
    R = lambda f, x: f(x) if ax is None else f(x, axis=ax)
    with np.errstate(all="ignore"):
        if fn == "softmax":
            if fmax(h) > 80:
                raise Reject("softmax range")
            m = K(R(np.max, h))
            z = np.exp(h - m)
            s = z / K(R(np.sum, z))
            e = s * (4 * K(R(np.max, ex)) + (G(n, t, ax, len(a.shape)) + 2 * CT) * u)
            return check(V(t, s, e, False, a.view))
        if fn == "logsoftmax":
            if fmax(h) > 80:
                raise Reject("softmax range")
            m = K(R(np.max, h))
            lse = m + np.log(K(R(np.sum, np.exp(h - m))))
            r = h - lse
            e = ex + K(R(np.max, ex)) + (G(n, t, ax, len(a.shape)) + 2 * CT) * u * (np.abs(h) + np.abs(lse) + 1)
            return check(V(t, r, e, False, a.view))
        eps_v = 1e-5 if eps is None else float(eps)
        # eps is a weak literal of the input's dtype
        eps_v = float(np.array(eps_v).astype(t))
        if fn == "layernorm":
            mu = K(R(np.mean, h))
            var = K(R(np.var, h))
            sd = np.sqrt(var + eps_v)
            y = (h - mu) / sd
            me = K(R(np.max, ex))
            ey = (ex + 3 * me) / sd + (4 * G(n, t, ax, len(a.shape)) + 2 * CT) * u * (np.abs(y) + (np.abs(h) + np.abs(mu)) / sd + 1)
        elif fn == "rmsnorm":
            ms = K(R(np.mean, h * h))
            rm = np.sqrt(ms + eps_v)
            y = h / rm
            me = K(R(np.max, ex))
            ey = (ex + np.abs(y) * me * 2) / rm + (G(n, t, ax, len(a.shape)) + 2 * CT) * u * (np.abs(y) + 1)
        else:
            raise Reject("unknown " + fn)
        if not np.all(np.isfinite(ey)):
            raise Reject("norm bound")
        if g is not None:
            gh, ge = gvec(g, a, t, ax)
            ey = np.abs(gh) * ey + np.abs(y) * ge + ey * ge + 2 * u * np.abs(y * gh)
            y = y * gh
        if b is not None:
            bh, be = gvec(b, a, t, ax)
            y = y + bh
            ey = ey + be + 2 * u * np.abs(y)
        return check(V(t, y, ey, False, a.view))


def gvec(g, a, t, ax):
    """gamma / beta: a vector along the normalised axis (or a scalar literal)."""
    if g.dt in (WI, WF):
        raise Reject("literal gamma")
    if g.view or len(g.shape) != 1 or (ax is None and len(a.shape) != 1):
        raise Reject("gamma shape")
    n = red_n(a, ax)
    if g.shape[0] != n:
        raise Reject("gamma length")
    if promote(g.dt, t) != t:
        raise Reject("gamma dtype wider")
    g2 = as_dt(g, t)
    gh, ge = g2.hi, g2.e
    if ax is not None:
        sh = [1] * len(a.shape)
        sh[ax] = n
        gh, ge = gh.reshape(sh), np.broadcast_to(ge, gh.shape).reshape(sh)
    return gh, ge


# ----------------------------------------------------------------- data movement

def filt(x, m):
    if x.dt in (WI, WF) or m.dt != B_ or x.shape != m.shape or x.view or m.view:
        raise Reject("filter operands")
    if not x.shape:
        raise Reject("filter of a scalar")
    mk = m.hi
    r = x.hi[mk]
    if r.size == 0:
        raise Reject("empty filter")
    if x.dt in INTS:
        return V(x.dt, r)
    return V(x.dt, r, x.e[mk], x.exact)


def partition(x, m):
    if x.dt in (WI, WF) or m.dt != B_ or x.shape != m.shape or x.view or m.view or len(x.shape) != 1:
        raise Reject("partition operands")
    mk = m.hi
    r = np.concatenate([x.hi[mk], x.hi[~mk]])
    if x.dt in INTS:
        return V(x.dt, r)
    return V(x.dt, r, np.concatenate([x.e[mk], x.e[~mk]]), x.exact)


def where(c, a, b):
    if c.dt != B_:
        raise Reject("where needs bool")
    t, a2, b2 = resolve(a, b)
    a2, b2 = as_dt(a2, t), as_dt(b2, t)
    if c.view or a2.view or b2.view:
        raise Reject("where of views")
    try:
        shp = size_ok(np.broadcast_shapes(c.shape, a2.shape, b2.shape))
    except ValueError:
        raise Reject("broadcast")
    r = np.where(c.hi, a2.hi, b2.hi)
    r = np.broadcast_to(r, shp)
    if t in INTS:
        return V(t, r)
    ex = a2.exact and b2.exact
    return V(t, r, np.broadcast_to(np.where(c.hi, a2.e, b2.e), shp), ex)


def maxmin(fn, a, b):
    t, a2, b2 = resolve(a, b)
    a2, b2 = as_dt(a2, t), as_dt(b2, t)
    view = bview(a2, b2)
    fit, shp = bshape(a2, b2, view)
    f = np.maximum if fn == "maximum" else np.minimum
    r = np.broadcast_to(f(fit(a2.hi, a2.shape), fit(b2.hi, b2.shape)), shp)
    if t in INTS:
        return V(t, r, view=view)
    ex = a2.exact and b2.exact
    e = np.broadcast_to(np.maximum(fit(a2.e, a2.shape), fit(b2.e, b2.shape)), shp)
    return V(t, r, e, ex, view)


def hist(x, nbins, lo=None, hi=None):
    if x.dt in (WI, WF) or x.dt == B_ or x.view:
        raise Reject("hist operand")
    h = x.hi.astype(F64).ravel()
    if h.size == 0:
        raise Reject("empty hist")
    if not x.exact or not np.isfinite(h).all():
        raise Reject("hist needs exact finite data")
    if lo is None:
        a, b = h.min(), h.max()
        if a == b:
            raise Reject("hist of a constant")
    else:
        a, b = float(lo), float(hi)
    r, edges = np.histogram(h, nbins, (a, b))
    inner = edges[1:-1]
    if inner.size and h.size:
        j = np.clip(np.searchsorted(inner, h), 1, inner.size)
        lo_e = inner[j - 1]
        hi_e = inner[np.minimum(j, inner.size - 1)]
        dmin = min(np.abs(h - lo_e).min(), np.abs(h - hi_e).min())
        if dmin <= 1e-5 * (b - a):
            raise Reject("hist value on an edge")
    if lo is not None and (np.any(np.abs(h - a) <= 1e-6 * (b - a)) or np.any(np.abs(h - b) <= 1e-6 * (b - a))):
        raise Reject("hist value on the range")
    return V(I64, r.astype(I64))


def plain(x):
    if x.dt in (WI, WF):
        raise Reject("literal")
    if x.view:
        raise Reject("view")
    return x


def mk(x, hi, e=None):
    """A value moved by a view op (same dtype and exactness)."""
    if x.dt in INTS:
        return V(x.dt, hi)
    return V(x.dt, hi, e, x.exact)


def transpose(x):
    plain(x)
    if len(x.shape) != 2:
        raise Reject("transpose of non-matrix")
    return mk(x, x.hi.T, x.e.T)


def reshape(x, dims):
    plain(x)
    if int(np.prod(dims)) != x.size:
        raise Reject("reshape size")
    return mk(x, x.hi.reshape(dims), x.e.reshape(dims))


def index(x, spec):
    """spec: tuple of int or slice objects, numpy semantics."""
    plain(x)
    if len(spec) > len(x.shape):
        raise Reject("too many indices")
    for s, n in zip(spec, x.shape):
        if isinstance(s, int) and not -n <= s < n:
            raise Reject("index out of range")
    r = x.hi[spec]
    return mk(x, r, x.e[spec])


def rowscols(kind, x):
    plain(x)
    if len(x.shape) != 2:
        raise Reject("rows of non-matrix")
    v = mk(x, x.hi, x.e)
    v.view = kind
    return v


def gather(x, idx):
    """x[idx] / take(x, idx) of a literal index list (issue 13 item 2)."""
    plain(x)
    if not x.shape:
        raise Reject("gather of a scalar")
    size_ok((len(idx),) + x.shape[1:])
    n = x.shape[0]
    if any(not -n <= i < n for i in idx):
        raise Reject("index out of range")
    ii = np.array(idx, dtype=np.int64)
    return mk(x, x.hi[ii], x.e[ii])


def join(kind, xs, axis):
    """concat / stack (issue 13 item 3): numpy's shapes, a binary op's dtypes."""
    for x in xs:
        plain(x)
    t = xs[0].dt
    for x in xs[1:]:
        t = promote(t, x.dt)
    ys = [as_dt(x, t) for x in xs]
    f = np.concatenate if kind == "concat" else np.stack
    try:
        hi = f([y.hi for y in ys], axis=axis)
        e = f([np.broadcast_to(y.e, y.shape) for y in ys], axis=axis)
    except (ValueError, np.exceptions.AxisError if hasattr(np, "exceptions") else ValueError):
        raise Reject("join shapes")
    if t in INTS:
        return V(t, hi)
    return V(t, hi, e, all(y.exact for y in ys))


# ----------------------------------------------------------------- sorting

def sort_axis(a, axis):
    """The axis of the sort family: axis=, a view's, else the last one."""
    if a.dt in (WI, WF):
        raise Reject("literal")
    if not a.shape:
        raise Reject("sort of a scalar")
    if a.view:
        if axis is not None:
            raise Reject("axis= of a view")
        return axis_of(a)
    return the_axis(a, -1 if axis is None else axis)


def order_key(h):
    """numpy's sort order as a sortable float key: NaN after +inf, -0.0 = 0.0."""
    k = np.where(np.isnan(h), np.inf, h).astype(F64) + 0.0
    return k, np.isnan(h)


def gaps_ok(h, e, ax):
    """True when the order of h along ax cannot change within the bounds e."""
    if h.shape[ax] < 2:
        return True
    s = np.sort(h, axis=ax)
    m = np.max(e, axis=ax, keepdims=True)
    d = np.diff(s, axis=ax)
    with np.errstate(invalid="ignore"):
        return bool(np.all(d > 4 * m + 1e-300))


def sortfam(fn, a, k=None, axis=None):
    ax = sort_axis(a, axis)
    h = a.hi
    n = h.shape[ax]
    if fn in ("topk", "argtopk") and not 0 <= k <= n:
        raise Reject("k out of range")
    if a.dt in INTS:
        key, nan = h.astype(I64), np.zeros(h.shape, bool)
    else:
        key, nan = order_key(h)
        if not a.exact and not np.isfinite(h).all():
            raise Reject("inexact non-finite sort")
    if fn in ("sort", "argsort"):
        idx = np.argsort(h, axis=ax, kind="stable")     # numpy's order: NaN last, -0.0 = 0.0
    else:
        # descending, NaN first (largest), ties to the lower index
        pos = np.arange(n).reshape([-1 if i == ax else 1 for i in range(h.ndim)])
        pos = np.broadcast_to(pos, h.shape)
        kk = np.moveaxis(~key if a.dt in INTS else np.where(nan, 0.0, -key), ax, -1)
        nn = np.moveaxis(~nan, ax, -1)
        pp = np.moveaxis(pos, ax, -1)
        if n:
            L = pp.size // n
            lane = np.repeat(np.arange(L), n)
            o = np.lexsort((pp.reshape(-1), kk.reshape(-1), nn.reshape(-1), lane))
            idx = (o.reshape(L, n) % n).astype(I64).reshape(pp.shape)
        else:
            idx = np.zeros(pp.shape, I64)
        idx = np.moveaxis(idx[..., :k], -1, ax)
    vals = np.take_along_axis(h, idx, axis=ax)
    # the result of a view is a view of the same kind (sum(sort(cols(m))) is per column)
    if fn.startswith("arg"):
        if not a.exact and not gaps_ok(h, a.e, ax):
            raise Reject("argsort fragile")
        return V(I64, idx.astype(I64), view=a.view)
    if a.dt in INTS:
        return V(a.dt, vals, view=a.view)
    if a.exact:
        return V(a.dt, vals, view=a.view)
    # an order statistic moves by at most the largest bound along the axis
    m = np.max(a.e, axis=ax, keepdims=True) if n else a.e
    return check(V(a.dt, vals, np.broadcast_to(m, vals.shape), False, a.view))


def unique(a):
    if a.dt in (WI, WF) or a.view:
        raise Reject("unique operand")
    h = a.hi.ravel()
    if a.dt in INTS:
        return V(a.dt, np.unique(h))
    if not a.exact:
        if not np.isfinite(h).all() or not gaps_ok(h, a.e.ravel(), 0) or h.size == 0:
            raise Reject("unique of inexact")
        return check(V(a.dt, np.sort(h), np.full(h.size, a.e.max()), False))
    r = np.unique(h + 0.0)
    if np.isnan(r).sum() > 1:
        r = np.concatenate([r[~np.isnan(r)], [np.nan]])
    return V(a.dt, r)


def quant(fn, a, q=None, axis=None):
    """median / quantile (numpy's linear method): float, ints become f64."""
    if a.dt in (WI, WF) or a.dt == B_ or (a.view and axis is not None):
        raise Reject("quantile operand")
    t = a.dt if isf(a.dt) else F64
    h = a.hi.astype(F64)
    if a.view:
        axis = axis_of(a)       # median(rows(m)): one per row
    if axis is None:
        h, e, ax = h.ravel(), np.broadcast_to(a.e, a.shape).ravel(), 0
    else:
        ax = the_axis(a, axis)
        e = np.broadcast_to(a.e, a.shape)
    n = h.shape[ax]
    if n == 0:
        raise Reject("empty median")
    qq = 0.5 if fn == "median" else float(q)
    with np.errstate(invalid="ignore"):
        r = np.quantile(h, qq, axis=ax)
    if a.dt in INTS and np.any(np.abs(h) > 2 ** 50):
        raise Reject("big ints")
    m = np.max(e, axis=ax)
    sc = np.max(np.abs(np.where(np.isfinite(h), h, 0)), axis=ax)
    err = m * 1.5 + 8 * U(t) * (sc + np.abs(np.where(np.isfinite(r), r, 0)))
    if not np.isfinite(h).all():
        # a NaN anywhere gives NaN (numpy); infinities make the interpolation
        # of inf with a finite value, which numpy and a lerp may write apart
        if np.isinf(h).any():
            raise Reject("quantile of inf")
    return check(V(t, r, err, False))


def searchsorted(a, v):
    """first position in sorted 1-d a not below v (side='left'; NaN last)."""
    if a.dt in (WI, WF) or a.view or v.view or len(a.shape) != 1:
        raise Reject("searchsorted operands")
    if v.dt in (WI, WF):
        raise Reject("literal")
    t = promote(a.dt, v.dt)
    a2, v2 = as_dt(a, t), as_dt(v, t)
    if not a2.exact:
        raise Reject("inexact sorted array")
    ah = a2.hi
    k, _ = order_key(ah) if isf(t) else (ah, None)
    if np.any(np.diff(k) < 0) if isf(t) else np.any(np.diff(ah.astype(I64)) < 0):
        raise Reject("not sorted")
    vh = v2.hi
    if not v2.exact and ah.size:
        # the nearest element of a to each v (a is sorted)
        vf = vh.reshape(-1)
        j = np.clip(np.searchsorted(ah, vf), 0, ah.size - 1)
        d = np.minimum(np.abs(vf - ah[j]), np.abs(vf - ah[np.maximum(j - 1, 0)]))
        if np.any(~(d > 2 * np.broadcast_to(v2.e, vh.shape).reshape(-1) + 1e-300)):
            raise Reject("searchsorted fragile")
    if isf(t):
        r = np.searchsorted(ah.astype(t), vh.astype(t), side="left")
    else:
        r = np.searchsorted(ah, vh, side="left")
    return V(I64, np.asarray(r).astype(I64))


def bincount(idx, w=None, minlength=None):
    if idx.dt not in INTS or idx.view or len(idx.shape) != 1:
        raise Reject("bincount indices")
    ii = idx.hi.astype(I64)
    if ii.size and ii.min() < 0:
        raise Reject("negative index")
    if ii.size and ii.max() > 100000:
        raise Reject("bincount too long")
    ml = 0 if minlength is None else minlength
    if w is None:
        return V(I64, np.bincount(ii, minlength=ml).astype(I64))
    if w.dt in (WI, WF) or w.view or w.shape != idx.shape:
        raise Reject("bincount weights")
    t = conv(w.dt)
    w2 = as_dt(w, t)
    wh = w2.hi.astype(F64)
    if not np.isfinite(wh).all():
        raise Reject("non-finite weights")
    # the reference in long double: numpy's bincount adds each bin's weights
    # serially in double, an error (n ulps) larger than the bound allowed gk
    cnt = np.bincount(ii, minlength=ml)
    r = np.zeros(cnt.size, dtype=np.longdouble)
    if ii.size:
        o = np.argsort(ii, kind="stable")
        starts = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        nz = cnt > 0
        r[nz] = np.add.reduceat(wh[o].astype(np.longdouble), starts[nz])
    r = r.astype(F64)
    e = np.bincount(ii, weights=np.broadcast_to(w2.e, wh.shape), minlength=ml) + \
        (G(max(cnt.max() if cnt.size else 1, 1), t) + 2) * U(t) * np.bincount(ii, weights=np.abs(wh), minlength=ml)
    return check(V(t, r, e, False))


def take_axis(x, idx, axis):
    """take(x, idx, axis=k) of an int index value (numpy.take)."""
    plain(x)
    if idx.dt not in (I32, I64) or idx.view:
        raise Reject("take indices")
    if not x.shape:
        raise Reject("take of a scalar")
    k = the_axis(x, axis)
    L = x.shape[k]
    size_ok(x.shape[:k] + idx.shape + x.shape[k + 1:])
    ii = idx.hi.astype(I64)
    if ii.size and (ii.min() < -L or ii.max() >= L):
        raise Reject("index out of range")
    return mk(x, np.take(x.hi, ii, axis=k), np.take(np.broadcast_to(x.e, x.shape), ii, axis=k))


def gather_v(x, idx):
    """x[idx] of a computed int index value (the first axis)."""
    plain(x)
    if idx.dt not in (I32, I64) or idx.view:
        raise Reject("gather indices")
    if not x.shape:
        raise Reject("gather of a scalar")
    L = x.shape[0]
    size_ok(idx.shape + x.shape[1:])
    ii = idx.hi.astype(I64)
    if ii.size and (ii.min() < -L or ii.max() >= L):
        raise Reject("index out of range")
    return mk(x, x.hi[ii], np.broadcast_to(x.e, x.shape)[ii])
