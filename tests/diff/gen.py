"""Random well-typed gk programs for gkdiff: the AST, its rendering as gk
source, its evaluation by the reference model, and the generator."""
import os
import random

import numpy as np

import model as M
from model import B_, I32, I64, F32, F64, WI, WF, Reject, V

DT_NAMES = ["bool", "i32", "i64", "f32", "f64"]


class N:
    """An expression node: op, child nodes, attributes."""
    __slots__ = ("op", "args", "at")

    def __init__(self, op, args=(), **at):
        self.op, self.args, self.at = op, list(args), at

    def copy(self):
        return N(self.op, [a.copy() for a in self.args], **dict(self.at))


def lit(text):
    return N("lit", text=text)


def var(name):
    return N("var", name=name)


# ----------------------------------------------------------------- rendering

def r_slice(s):
    if isinstance(s, int):
        return str(s)
    a = "" if s.start is None else str(s.start)
    b = "" if s.stop is None else str(s.stop)
    if s.step is None:
        return "%s:%s" % (a, b)
    return "%s:%s:%s" % (a, b, s.step)


def render(n):
    op, A, at = n.op, n.args, n.at
    R = render
    if op == "var":
        return at["name"]
    if op == "lit":
        t = at["text"]
        return "(%s)" % t if t.startswith("-") else t
    if op == "bin":
        return "(%s %s %s)" % (R(A[0]), at["sym"], R(A[1]))
    if op == "neg":
        return "(-%s)" % R(A[0])
    if op == "not":
        return "(not %s)" % R(A[0])
    if op in ("un", "cast", "red"):
        return "%s(%s)" % (at["fn"], R(A[0]))
    if op in ("dot", "maxmin", "pow", "filter", "partition", "where", "clamp"):
        name = {"dot": "dot", "pow": "pow", "filter": "filter", "partition": "partition",
                "where": "where", "clamp": "clamp"}.get(op) or at["fn"]
        return "%s(%s)" % (name, ", ".join(R(a) for a in A))
    if op == "matmul":
        return "(%s @ %s)" % (R(A[0]), R(A[1]))
    if op == "scan":
        f = "exscan" if at["excl"] else "scan"
        o = at["sop"]
        if o == "sum" and at.get("dflt"):
            return "%s(%s)" % (f, R(A[0]))
        if at.get("kw"):
            return "%s(%s, op=%s)" % (f, R(A[0]), o)
        return "%s(%s, %s)" % (f, R(A[0]), o)
    if op == "norm":
        s = [R(a) for a in A]
        if at.get("eps") is not None:
            s.append("eps=%s" % at["eps"])
        return "%s(%s)" % (at["fn"], ", ".join(s))
    if op == "mask":
        return "%s[%s]" % (R(A[0]), R(A[1]))
    if op == "index":
        return "%s[%s]" % (R(A[0]), ", ".join(r_slice(s) for s in at["spec"]))
    if op == "hist":
        s = [R(A[0]), str(at["nb"])]
        if at.get("lo") is not None:
            s += [at["lo"], at["hi"]]
        return "hist(%s)" % ", ".join(s)
    if op == "reshape":
        return "reshape(%s, %s)" % (R(A[0]), ", ".join(map(str, at["dims"])))
    if op == "transpose":
        return "transpose(%s)" % R(A[0])
    if op == "permute":
        return "permute(%s, 1, 0)" % R(A[0])
    if op in ("rows", "cols"):
        return "%s(%s)" % (op, R(A[0]))
    if op == "shapefn":
        return "%s(%s)" % (at["fn"], R(A[0]))
    if op == "iota":
        return "iota(%d)" % at["n"]
    if op == "fill":
        return "fill(%s, %s)" % (at["v"], ", ".join(map(str, at["dims"])))
    if op in ("zeros", "ones"):
        return "%s(%s)" % (op, ", ".join(map(str, at["dims"])))
    if op == "list":
        return at["text"]
    if op == "gather":
        lst = "[%s]" % ", ".join(map(str, at["idx"]))
        return "take(%s, %s)" % (R(A[0]), lst) if at.get("take") else "%s[%s]" % (R(A[0]), lst)
    if op == "join":
        s = [R(a) for a in A]
        if at.get("axis") is not None:
            s.append("axis=%d" % at["axis"])
        return "%s(%s)" % (at["fn"], ", ".join(s))
    if op == "redax":
        return "%s(%s, axis=%d)" % (at["fn"], R(A[0]), at["axis"])
    if op in ("iscls", "bfn"):
        return "%s(%s)" % (at["fn"], ", ".join(R(a) for a in A))
    if op == "powa":
        if at.get("call"):
            return "pow(%s, %s)" % (R(A[0]), R(A[1]))
        return "(%s ** %s)" % (R(A[0]), R(A[1]))
    if op in ("sortf", "quant", "scanax", "normax"):
        s = [R(a) for a in A]
        if at.get("k") is not None:
            s.append(str(at["k"]))
        if at.get("q") is not None:
            s.append(at["q"])
        if at.get("sop"):
            s.append(at["sop"])
        if at.get("axis") is not None:
            s.append("axis=%d" % at["axis"])
        if op == "scanax":
            f = "exscan" if at["excl"] else "scan"
        else:
            f = at["fn"]
        return "%s(%s)" % (f, ", ".join(s))
    if op == "uniq":
        return "unique(%s)" % R(A[0])
    if op == "ssorted":
        return "searchsorted(%s, %s)" % (R(A[0]), R(A[1]))
    if op == "binc":
        s = [R(a) for a in A]
        if at.get("ml") is not None:
            s.append("minlength=%d" % at["ml"])
        return "bincount(%s)" % ", ".join(s)
    if op == "takeax":
        return "take(%s, %s, axis=%d)" % (R(A[0]), R(A[1]), at["axis"])
    if op == "gathv":
        return "%s[%s]" % (R(A[0]), R(A[1]))
    if op == "perm":
        return "permute(%s, %s)" % (R(A[0]), ", ".join(map(str, at["axes"])))
    if op == "call":
        s = [R(a) for a in A]
        if at.get("kw") and len(s) == 2:
            s[1] = "b=" + s[1]
        return "%s(%s)" % (at["name"], ", ".join(s))
    raise ValueError(op)


# ----------------------------------------------------------------- user functions

def subst(n, m):
    if n.op == "var" and n.at["name"] in m:
        return m[n.at["name"]].copy()
    c = N(n.op, [subst(a, m) for a in n.args], **dict(n.at))
    return c


def fn_templates():
    """Bodies of user functions over parameters a (and b)."""
    a, b = var("a"), var("b")
    A = lambda: a.copy()
    B = lambda: b.copy()
    return [
        (["a", "b"], N("bin", [N("bin", [A(), B()], sym="*"), A()], sym="+")),
        (["a"], N("bin", [N("index", [A()], spec=[slice(1, None)]), N("index", [A()], spec=[slice(None, -1)])], sym="-")),
        (["a", "b"], N("where", [N("bin", [A(), B()], sym=">"), A(), B()])),
        (["a"], N("bin", [N("norm", [A()], fn="softmax"), A()], sym="*")),
        (["a"], N("red", [N("bin", [A(), A()], sym="*")], fn="sum")),
        (["a"], N("bin", [N("bin", [A(), N("red", [A()], fn="mean")], sym="-"),
                          N("bin", [N("red", [A()], fn="std"), lit("1")], sym="+")], sym="/")),
        (["a"], N("index", [N("sortf", [A()], fn="sort", k=None, axis=None)], spec=[0])),
        (["a", "b"], N("bin", [N("maxmin", [A(), B()], fn="maximum"), N("maxmin", [A(), B()], fn="minimum")], sym="-")),
        (["a"], N("bin", [N("scan", [A()], sop="sum", excl=False, dflt=True), A()], sym="-")),
        (["a"], N("un", [N("bin", [A(), N("red", [A()], fn="max")], sym="-")], fn="exp")),
        (["a", "b"], N("bin", [N("red", [N("bin", [A(), B()], sym="*")], fn="sum"), N("red", [A()], fn="sum")], sym="-")),
    ]


FN_T = fn_templates()


# ----------------------------------------------------------------- evaluation

def evaluate(n, env):
    op, A, at = n.op, n.args, n.at
    if op == "var":
        if at["name"] not in env:
            raise Reject("unknown variable")
        return env[at["name"]]
    if op == "lit":
        t = at["text"]
        if t in ("true", "false"):
            return V(B_, np.array(t == "true"))
        kind = WF if any(ch in t for ch in ".e") else WI
        return V(kind, np.array(0.0), lit=t)
    ev = [evaluate(a, env) for a in A]
    if op == "bin":
        return M.binop(at["sym"], ev[0], ev[1])
    if op == "neg":
        return M.unary("neg", ev[0])
    if op == "not":
        return M.unary("not", ev[0])
    if op == "un":
        return M.unary(at["fn"], ev[0])
    if op == "cast":
        return M.cast(at["fn"], ev[0])
    if op == "red":
        return M.reduce(at["fn"], ev[0])
    if op == "dot":
        return M.dot(ev[0], ev[1])
    if op == "matmul":
        return M.matmul(ev[0], ev[1])
    if op == "pow":
        return M.power(ev[0], ev[1])
    if op == "maxmin":
        return M.maxmin(at["fn"], ev[0], ev[1])
    if op == "clamp":
        return M.maxmin("minimum", M.maxmin("maximum", ev[0], ev[1]), ev[2])
    if op == "where":
        return M.where(*ev)
    if op == "scan":
        return M.scan(ev[0], at["sop"], at["excl"])
    if op == "norm":
        g = ev[1] if len(ev) > 1 else None
        b = ev[2] if len(ev) > 2 else None
        return M.normalise(at["fn"], ev[0], g, b, at.get("eps"))
    if op in ("filter", "mask"):
        return M.filt(ev[0], ev[1])
    if op == "partition":
        return M.partition(ev[0], ev[1])
    if op == "index":
        return M.index(ev[0], tuple(at["spec"]))
    if op == "hist":
        return M.hist(ev[0], at["nb"], at.get("lo"), at.get("hi"))
    if op == "reshape":
        return M.reshape(ev[0], at["dims"])
    if op in ("transpose", "permute"):
        x = M.plain(ev[0])
        if len(x.shape) == 3 and op == "transpose":
            return M.mk(x, np.transpose(x.hi), np.transpose(np.broadcast_to(x.e, x.shape)))
        return M.transpose(ev[0])
    if op in ("rows", "cols"):
        return M.rowscols(op, ev[0])
    if op == "shapefn":
        x = ev[0]
        if x.dt in (WI, WF):
            raise Reject("literal")
        if at["fn"] == "shape":
            return V(I64, np.array(x.shape, dtype=I64))
        if at["fn"] == "len":
            if not x.shape:
                raise Reject("len of a scalar")
            return V(I64, np.int64(x.shape[0]))
        return V(I64, np.int64(x.size))
    if op == "iota":
        return V(I64, np.arange(at["n"], dtype=I64))
    if op == "fill":
        v = V(WF if any(c in at["v"] for c in ".e") else WI, np.array(0.0), lit=at["v"])
        if at["v"].startswith("f64("):
            return V(F64, np.full(at["dims"], float(at["v"][4:-1])))
        if v.dt == WF:
            return V(F32, np.full(at["dims"], np.float32(float(at["v"]))).astype(F64))
        return V(I64, np.full(at["dims"], int(at["v"]), dtype=I64))
    if op in ("zeros", "ones"):
        return V(F32, np.full(at["dims"], 0.0 if op == "zeros" else 1.0))
    if op == "list":
        a = at["value"]
        return V(a.dtype, a.astype(F64) if a.dtype.kind == "f" else a)
    if op == "gather":
        x = ev[0]
        if at.get("take"):
            x = M.reshape(x, (x.size,))
        return M.gather(x, at["idx"])
    if op == "join":
        return M.join(at["fn"], ev, at.get("axis") or 0)
    if op == "redax":
        return M.reduce(at["fn"], M.plain(ev[0]), at["axis"])
    if op == "iscls":
        return M.isclass(at["fn"], ev[0])
    if op == "bfn":
        return M.binfn(at["fn"], ev[0], ev[1])
    if op == "powa":
        return M.powarr(ev[0], ev[1])
    if op == "sortf":
        return M.sortfam(at["fn"], ev[0], at.get("k"), at.get("axis"))
    if op == "quant":
        return M.quant(at["fn"], ev[0], at.get("q"), at.get("axis"))
    if op == "scanax":
        return M.scan(M.plain(ev[0]), at["sop"] or "sum", at["excl"], at["axis"])
    if op == "normax":
        g = ev[1] if len(ev) > 1 else None
        b = ev[2] if len(ev) > 2 else None
        return M.normalise(at["fn"], M.plain(ev[0]), g, b, None, at["axis"])
    if op == "uniq":
        return M.unique(ev[0])
    if op == "ssorted":
        return M.searchsorted(ev[0], ev[1])
    if op == "binc":
        return M.bincount(ev[0], ev[1] if len(ev) > 1 else None, at.get("ml"))
    if op == "takeax":
        return M.take_axis(ev[0], ev[1], at["axis"])
    if op == "gathv":
        return M.gather_v(ev[0], ev[1])
    if op == "call":
        # a user function is inlined: its body with the parameters replaced
        return evaluate(subst(at["body"], dict(zip(at["params"], A))), env)
    if op == "perm":
        x = M.plain(ev[0])
        if len(x.shape) != len(at["axes"]):
            raise Reject("permute rank")
        return M.mk(x, np.transpose(x.hi, at["axes"]), np.transpose(np.broadcast_to(x.e, x.shape), at["axes"]))
    raise ValueError(op)


# ----------------------------------------------------------------- programs

class Stmt:
    """kind: 'assign' (name, expr), 'save' (name = output file stem, expr),
    'print' (name = tag, exprs), 'seed' (value), 'load' (name, key)."""
    __slots__ = ("kind", "name", "exprs", "value")

    def __init__(self, kind, name=None, exprs=(), value=None):
        self.kind, self.name, self.exprs, self.value = kind, name, list(exprs), value

    def copy(self):
        return Stmt(self.kind, self.name, [e.copy() for e in self.exprs], self.value)


class Program:
    def __init__(self, pid, seed):
        self.pid, self.seed = pid, seed
        self.stmts = []
        self.inputs = {}       # key -> np array (written as PFX_key.npy)
        self.rands = []        # (key, "rand"/"randn", dims): drawn by the prepass
        self.rseed = None

    def copy(self):
        p = Program(self.pid, self.seed)
        p.stmts = [s.copy() for s in self.stmts]
        p.inputs = dict(self.inputs)
        p.rands = list(self.rands)
        p.rseed = self.rseed
        return p

    def prefix(self):
        return "a%d_" % self.pid

    def source(self, indir, outdir=""):
        """gk source of the program; loads from indir, saves into outdir."""
        out = []
        for s in self.stmts:
            if s.kind == "load":
                out.append('%s = load("%s%s%s.npy")' % (s.name, indir, self.prefix(), s.value))
            elif s.kind == "seed":
                out.append("seed(%d)" % s.value)
            elif s.kind == "fn":
                out.append("fn %s(%s) = %s" % (s.name, ", ".join(s.value), render(s.exprs[0])))
            elif s.kind == "rand":
                out.append("%s = %s(%s)" % (s.name, s.value[0], ", ".join(map(str, s.value[1]))))
            elif s.kind == "assign":
                out.append("%s = %s" % (s.name, render(s.exprs[0])))
            elif s.kind == "save":
                out.append('save("%s%s.npy", %s)' % (outdir, s.name, render(s.exprs[0])))
            elif s.kind == "print":
                parts = ['"@%s"' % s.name]
                for i, e in enumerate(s.exprs):
                    if i:
                        parts.append('"@"')
                    parts.append(render(e))
                out.append("print(%s)" % ", ".join(parts))
        return "\n".join(out)

    def model(self, rvals):
        """Evaluates every statement; returns {observation name: [V...]}.
        Raises Reject when the program is not one to test."""
        env = {}
        obs = {}
        for s in self.stmts:
            if s.kind == "load":
                a = self.inputs[s.value]
                env[s.name] = V(a.dtype, a.astype(F64) if a.dtype.kind == "f" else a)
            elif s.kind == "rand":
                a = rvals[s.value[2]]
                env[s.name] = V(F32, a.astype(F64))
            elif s.kind == "assign":
                v = evaluate(s.exprs[0], env)
                if v.dt in (WI, WF):
                    raise Reject("literal assignment")
                env[s.name] = v
            elif s.kind in ("save", "print"):
                vs = [evaluate(e, env) for e in s.exprs]
                for v in vs:
                    if v.dt in (WI, WF):
                        raise Reject("literal observed")
                    if s.kind == "print" and v.size > 40:
                        raise Reject("print too big")
                obs[s.name] = vs
        return obs


# ----------------------------------------------------------------- generator

FLOAT_LITS = ["0.5", "0.3", "2.5", "0.1", "1e-3", "-1.5", "3.0", "0.7", "1.25", "-0.2"]
INT_LITS = ["0", "1", "2", "3", "-1", "5", "7", "-4"]
BIN_ARITH = ["+", "-", "*", "/", "%", "**"]
CMP = ["<", "<=", ">", ">=", "==", "!="]
UNARY_F = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid"]
UNARY_K = ["abs", "relu", "sign", "floor", "ceil", "round"]
REDS = ["sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "mean", "count",
        "norm", "var", "std", "logsumexp"]
SCAN_OPS = ["sum", "prod", "max", "min"]
NORMS = ["softmax", "logsoftmax", "layernorm", "rmsnorm"]


# GKDIFF_FOCUS=K: K times the weight of the session-6 words (a campaign aimed at them)
FOCUS = int(os.environ.get("GKDIFF_FOCUS", "0") or 0)
FOCUS_GEN = {"g_sortf", "g_quant", "g_more_un", "g_axis3", "g_take2", "g_binc", "g_ssorted", "g_cube", "g_call"}


class Gen:
    def __init__(self, prog, seed, big):
        self.p = prog
        self.r = random.Random(seed)
        self.nr = np.random.default_rng(seed)
        self.big = big
        self.pool = []        # (node, V) of variables
        self.subs = []        # (node, V) of generated subexpressions, for reuse
        self.env = {}
        self.nvar = 0
        self.nonfinite = 0.1
        self.c3 = (2, 3, 4)

    # -- data
    def data(self, shape, dt):
        r, nr = self.r, self.nr
        kind = r.random()
        if dt == B_:
            return nr.random(shape) < r.choice([0.2, 0.5, 0.8])
        if dt.kind == "f":
            if kind < 0.15:
                a = nr.integers(-4, 5, shape).astype(dt)          # ties, exact ints
            elif kind < 0.35:
                a = nr.uniform(0.25, 2.0, shape).astype(dt)        # positive
            else:
                s = np.where(nr.random(shape) < 0.5, -1, 1)
                a = (s * nr.uniform(0.05, 2.0, shape)).astype(dt)
            if a.size and r.random() < self.nonfinite:
                # NaN and infinities: numpy's semantics (propagation, NaN last)
                for _ in range(r.randint(1, 3)):
                    a.flat[r.randrange(a.size)] = r.choice([np.nan, np.inf, -np.inf, np.nan])
            if a.size and r.random() < 0.05:
                a.flat[r.randrange(a.size)] = -0.0
            return a
        if kind < 0.05:
            # near the limits: wrapping arithmetic, casts, sorts of extremes
            ii = np.iinfo(dt)
            c = np.array([ii.max, ii.min, ii.max - 1, ii.min + 1, 0, -1, 1, ii.max // 2 + 1], dtype=dt)
            return c[nr.integers(0, len(c), shape)]
        if kind < 0.3:
            return nr.integers(0, 4, shape).astype(dt)
        s = np.where(nr.random(shape) < 0.5, -1, 1)
        return (s * nr.integers(1, 21, shape)).astype(dt)

    def newname(self, base="t"):
        self.nvar += 1
        return "%s%s%d" % (self.p.prefix(), base, self.nvar)

    def reassign(self, name, v):
        def names(n):
            out = {n.at["name"]} if n.op == "var" else set()
            for a in n.args:
                out |= names(a)
            return out
        self.pool = [x for x in self.pool if x[0].at.get("name") != name or x[0].op != "var"]
        self.subs = [x for x in self.subs if name not in names(x[0])]
        self.add_var(name, v)

    def add_var(self, name, v):
        self.env[name] = v
        self.pool.append((var(name), v))

    def dt(self):
        return self.r.choice([B_, I32, I64, F32, F32, F64, F64, F32])

    def setup(self, rvals):
        """Chooses sizes, writes inputs, leaves; rvals = prepass results."""
        r, p = self.r, self.p
        n, (R, C) = self.n, self.rc
        for i in range(r.randint(1, 3)):
            key = "x%d" % i
            p.inputs[key] = self.data((n,), self.dt())
            self.leaf_load(key)
        if r.random() < 0.8:
            key = "m0"
            p.inputs[key] = self.data((R, C), self.dt())
            self.leaf_load(key)
            if r.random() < 0.4:
                p.inputs["g0"] = self.data((C,), r.choice([F32, F64, I32]))
                self.leaf_load("g0")
        if r.random() < 0.35:
            key = "c0"
            p.inputs[key] = self.data(self.c3, self.dt())
            self.leaf_load(key)
        if r.random() < 0.3:
            nm = self.newname("i")
            p.stmts.append(Stmt("assign", nm, [N("iota", n=n)]))
            self.add_var(nm, evaluate(p.stmts[-1].exprs[0], self.env))
        if r.random() < 0.15 and 0 < n <= 6:
            dt = self.dt()
            nf, self.nonfinite = self.nonfinite, 0
            a = self.data((n,), dt)
            self.nonfinite = nf
            if dt == B_:
                txt = "[" + ", ".join("true" if b else "false" for b in a) + "]"
            elif dt.kind == "f":
                a = np.round(a.astype(F64), 2).astype(F32)
                a[0] = a[0] + np.float32(0.5) if float(a[0]).is_integer() else a[0]
                txt = "[" + ", ".join(repr(float(v)) for v in a.astype(F64)) + "]"
                a = np.array([float(t) for t in txt[1:-1].split(", ")]).astype(F32)
                dt = F32
            else:
                a = a.astype(I64)
                txt = "[" + ", ".join(str(int(v)) for v in a) + "]"
            nm = self.newname("l")
            p.stmts.append(Stmt("assign", nm, [N("list", text=txt, value=a)]))
            self.add_var(nm, evaluate(p.stmts[-1].exprs[0], self.env))
        if r.random() < 0.15:
            nm = self.newname("f")
            v = r.choice(["2.5", "3", "0.3", "-1", "f64(9.21e18)", "f64(-3.5e9)", "f64(0.1)"])
            p.stmts.append(Stmt("assign", nm, [N("fill", v=v, dims=(n,))]))
            self.add_var(nm, evaluate(p.stmts[-1].exprs[0], self.env))
            if v.startswith("f64(") and r.random() < 0.5:
                # issue 9.5: the checker's fold and the runtime must agree on the cast
                c = N("cast", [var(nm)], fn=r.choice(["i64", "i64", "i32", "bool"]))
                try:
                    evaluate(c, self.env)
                    p.stmts.append(Stmt("save", p.prefix() + "o%d" % len(p.stmts), [c]))
                except Reject:
                    pass
        if p.rands:
            p.stmts.insert(0, Stmt("seed", value=p.rseed))
            for key, kind, dims in p.rands:
                nm = self.newname("r")
                p.stmts.append(Stmt("rand", nm, value=(kind, dims, key)))
                self.add_var(nm, V(F32, rvals[key].astype(F64)))

    def leaf_load(self, key):
        nm = self.p.prefix() + key
        self.p.stmts.append(Stmt("load", nm, value=key))
        a = self.p.inputs[key]
        self.add_var(nm, V(a.dtype, a.astype(F64) if a.dtype.kind == "f" else a))

    # -- expressions
    def pick(self, pred=None):
        c = [(n, v) for n, v in self.pool + self.subs if pred is None or pred(v)]
        if not c:
            raise Reject("nothing to pick")
        n, v = self.r.choice(c)
        return n.copy(), v

    def ev(self, n):
        return evaluate(n, self.env)

    def litnode(self, want_float=None):
        r = self.r
        if want_float is None:
            want_float = r.random() < 0.5
        return lit(r.choice(FLOAT_LITS if want_float else INT_LITS))

    def expr(self, d, shape=None):
        """A (node, value) of depth <= d, of the given shape if not None."""
        for _ in range(30):
            try:
                n, v = self.try_expr(d, shape)
            except Exception:
                continue
            if shape is not None and v.shape != shape:
                continue
            if v.dt in (WI, WF):
                continue
            if self.r.random() < 0.3 and len(self.subs) < 40:
                self.subs.append((n, v))
            return n.copy(), v
        raise Reject("no expression")

    def try_expr(self, d, shape):
        r = self.r
        if d <= 0 or r.random() < 0.15:
            return self.pick(None if shape is None else (lambda v: v.shape == shape))
        k = r.random()
        ops = [
            (10, self.g_arith), (5, self.g_cmp), (6, self.g_unary), (3, self.g_cast),
            (8, self.g_reduce), (7, self.g_scan), (7, self.g_norm), (6, self.g_same),
            (4, self.g_filter), (3, self.g_where), (2, self.g_move), (1, self.g_hist),
            (1, self.g_dot), (1, self.g_shapefn), (2, self.g_constcast), (3, self.g_words),
            (4, self.g_sortf), (2, self.g_quant), (4, self.g_more_un), (3, self.g_axis3),
            (3, self.g_take2), (1, self.g_binc), (1, self.g_ssorted), (2, self.g_cube), (2, self.g_call),
        ]
        if FOCUS:
            ops = [(w * FOCUS if f.__name__ in FOCUS_GEN else w, f) for w, f in ops]
        tot = sum(w for w, _ in ops)
        x = k * tot
        for w, f in ops:
            x -= w
            if x <= 0:
                break
        n = f(d, shape)
        return n, self.ev(n)

    def g_arith(self, d, shape):
        r = self.r
        sym = r.choice(BIN_ARITH + ["+", "*", "-"])
        a, va = self.expr(d - 1, shape)
        if sym == "**":
            e = r.choice(["2", "2", "0.5", "-1", "-1.0", "2.0", "1.5", "3"])
            if r.random() < 0.2:
                return N("pow", [a, lit(e)])
            return N("bin", [a, lit(e)], sym="**")
        b = self.operand(d - 1, va)
        if r.random() < 0.5:
            a, b = b, a
        return N("bin", [a, b], sym=sym)

    def operand(self, d, va):
        """A second operand that broadcasts with va."""
        r = self.r
        k = r.random()
        if k < 0.3:
            return self.litnode()
        if k < 0.45:
            return self.expr(d, ())[0]
        if va.view and len(va.shape) == 2 and k < 0.7:
            R, C = va.shape
            want = (R,) if va.view == "rows" else (C,)
            return self.expr(d, want)[0]
        if len(va.shape) == 2 and k < 0.6:
            return self.expr(d, (va.shape[1],))[0]
        if len(va.shape) == 3 and k < 0.7:
            # numpy broadcasting across ranks: [B, C], [C], [A, B, 1], [A, 1, C]
            A, B, C = va.shape
            j = r.randrange(4)
            if j == 0:
                return self.expr(d, (B, C))[0]
            if j == 1:
                return self.expr(d, (C,))[0]
            src = self.expr(d, (A * B,) if j == 2 else (A * C,))[0] if (j == 2 and A * B == self.n) or (j == 3 and A * C == self.n) \
                else self.expr(d, va.shape)[0]
            vs = self.ev(src)
            if vs.shape == va.shape:
                return N("index", [src], spec=[slice(None), slice(None), slice(0, 1)] if j == 2 else [slice(None), slice(0, 1)])
            return N("reshape", [src], dims=(A, B, 1) if j == 2 else (A, 1, C))
        return self.expr(d, va.shape)[0]

    def g_cmp(self, d, shape):
        a, va = self.expr(d - 1, shape)
        b = self.operand(d - 1, va)
        sym = self.r.choice(CMP)
        if self.r.random() < 0.3 and va.dt == B_:
            return N("bin", [a, b], sym=self.r.choice(["and", "or"]))
        if self.r.random() < 0.1:
            return N("not", [N("bin", [a, b], sym=sym)])
        return N("bin", [a, b], sym=sym)

    def g_unary(self, d, shape):
        a, va = self.expr(d - 1, shape)
        r = self.r
        k = r.random()
        if k < 0.15:
            return N("neg", [a])
        if k < 0.4:
            return N("un", [a], fn=r.choice(UNARY_K))
        fn = r.choice(UNARY_F)
        if fn in ("log", "sqrt", "rsqrt") and (va.dt == B_ or va.size and va.hi.min() <= 0):
            a = N("bin", [N("un", [a], fn="abs"), lit(r.choice(["0.5", "1"]))], sym="+") \
                if va.dt != B_ else N("bin", [a, lit("1")], sym="+")
        if fn == "exp" and va.size and va.dt != B_ and np.abs(va.hi.astype(float)).max() > 20:
            a = N("un", [a], fn="tanh")
        return N("un", [a], fn=fn)

    def g_cast(self, d, shape):
        a, va = self.expr(d - 1, shape)
        return N("cast", [a], fn=self.r.choice(DT_NAMES))

    def g_constcast(self, d, shape):
        """f32(0.3) meeting f64 data, f64(0.3) meeting f32; f32(1e40)."""
        r = self.r
        a, va = self.expr(d - 1, shape)
        t = r.choice(["f32", "f64", "f32", "i32", "i64"])
        l = r.choice(FLOAT_LITS + ["1e40", "0.1", "0.3"]) if t[0] == "f" else r.choice(INT_LITS)
        c = N("cast", [lit(l)], fn=t)
        if r.random() < 0.3:
            # the cast literal compared with the other float type
            return N("bin", [c, N("cast", [lit(l)], fn="f64" if t == "f32" else "f32")], sym=r.choice(["==", "-", "<"]))
        sym = r.choice(["*", "-", "+", "==", "<", "*"])
        n = N("bin", [a, c], sym=sym)
        if sym == "*" and r.random() < 0.5:
            n = N("bin", [n, lit(l)], sym="-")
        return n

    def matrix(self, d):
        return self.expr(d, self.rc)

    def viewed(self, d, allow_whole=True):
        """An operand for a reduction/scan/normalisation: whole, rows(m) or cols(m)."""
        r = self.r
        k = r.random()
        if k < 0.45 or not allow_whole:
            m, vm = self.matrix(d)
            kind = r.choice(["rows", "cols"])
            if r.random() < 0.3:
                # an elementwise result of a view is still a view
                b = self.expr(max(d - 1, 0), (vm.shape[0],) if kind == "rows" else (vm.shape[1],))[0] \
                    if r.random() < 0.5 else self.litnode()
                return N("bin", [N(kind, [m]), b], sym=r.choice(["+", "-", "*"]))
            return N(kind, [m])
        return self.expr(d, None if r.random() < 0.5 else (self.n,))[0]

    def g_reduce(self, d, shape):
        r = self.r
        if shape is not None and len(shape) == 1:
            m, vm = self.matrix(d - 1)
            kind = "rows" if shape[0] == vm.shape[0] and (r.random() < 0.5 or shape[0] != vm.shape[1]) else "cols"
            if shape[0] != vm.shape[0 if kind == "rows" else 1]:
                raise Reject("shape")
            a = N(kind, [m])
        elif shape is not None and shape != ():
            raise Reject("shape")
        else:
            a = self.viewed(d - 1)
        return N("red", [a], fn=r.choice(REDS))

    def g_scan(self, d, shape):
        r = self.r
        if shape is not None and len(shape) == 2:
            a = N(r.choice(["rows", "cols"]), [self.expr(d - 1, shape)[0]])
        elif shape is not None:
            a = self.expr(d - 1, shape)[0]
        else:
            a = self.viewed(d - 1)
        o = r.choice(SCAN_OPS)
        return N("scan", [a], sop=o, excl=r.random() < 0.4, dflt=r.random() < 0.5, kw=r.random() < 0.2)

    def g_norm(self, d, shape):
        r = self.r
        fn = r.choice(NORMS)
        if shape is not None and len(shape) == 2:
            a = N(r.choice(["rows", "cols"]), [self.expr(d - 1, shape)[0]])
        elif shape is not None:
            a = self.expr(d - 1, shape)[0]
        else:
            a = self.viewed(d - 1)
        va = self.ev(a)
        if va.dt not in (F32, F64):
            a = N("cast", [a], fn=r.choice(["f32", "f64"])) if not va.view else a
        if r.random() < 0.35:
            # nested: a normalisation of a normalisation of the same value
            a = N("norm", [a], fn=r.choice(NORMS))
        args = [a]
        eps = None
        if fn in ("layernorm", "rmsnorm") and r.random() < 0.5:
            va = self.ev(a)
            L = M.red_n(va)
            g = self.expr(0, (L,))[0] if r.random() < 0.7 else None
            if g is not None:
                args.append(g)
                if fn == "layernorm" and r.random() < 0.5:
                    args.append(self.expr(0, (L,))[0])
        if fn in ("layernorm", "rmsnorm") and r.random() < 0.4:
            eps = r.choice(["1e-3", "0.1", "1e-6", "0"])
        return N("norm", args, fn=fn, eps=eps)

    def g_same(self, d, shape):
        """Views, slices, reshapes and broadcasts of one pending value together."""
        r = self.r
        k = r.randrange(9)
        if k <= 2:
            x, vx = self.expr(d - 1, (self.n,))
            n = self.n
            if n < 2:
                raise Reject("short")
            sym = r.choice(["-", "+", "*", "<", "=="])
            forms = [
                (slice(1, None), slice(None, -1)), (slice(None, None, -1), slice(None)),
                (slice(None, None, 2), slice(1, None, 2)), (slice(2, None), slice(0, n - 2)),
                (slice(None, n // 2), slice(n - n // 2, None)),
            ]
            a, b = r.choice(forms)
            return N("bin", [N("index", [x], spec=[a]), N("index", [x.copy()], spec=[b])], sym=sym)
        if k == 3:
            x, vx = self.expr(d - 1, (self.n,))
            if self.n > 64:
                raise Reject("outer too big")
            return N("bin", [x, N("reshape", [x.copy()], dims=(self.n, 1))], sym=r.choice(["+", "==", "-", "*", "<"]))
        if k == 4:
            m, vm = self.matrix(d - 1)
            R, C = vm.shape
            if R != C:
                f = N("reshape", [N("transpose", [m.copy()])], dims=(R, C))
                return N("bin", [m, f], sym=r.choice(["+", "-", "*"]))
            return N("bin", [m, N(r.choice(["transpose", "permute"]), [m.copy()])], sym=r.choice(["+", "-", "*", "=="]))
        if k == 5:
            m, vm = self.matrix(d - 1)
            R, C = vm.shape
            i = r.randrange(-R, R)
            return N("bin", [m, N("index", [m.copy()], spec=[i])], sym=r.choice(["-", "+", "*"]))
        if k == 6:
            m, vm = self.matrix(d - 1)
            kind = r.choice(["rows", "cols"])
            red = r.choice(["max", "sum", "mean", "min"])
            return N("bin", [N(kind, [m]), N("red", [N(kind, [m.copy()])], fn=red)], sym=r.choice(["-", "/", "*"]))
        if k == 7:
            m, vm = self.matrix(d - 1)
            R, C = vm.shape
            if R < 2:
                raise Reject("short")
            return N("bin", [N("index", [m], spec=[slice(1, None)]), N("index", [m.copy()], spec=[slice(None, -1)])],
                     sym=r.choice(["-", "+"]))
        m, vm = self.matrix(d - 1)
        R, C = vm.shape
        j = r.randrange(C)
        return N("bin", [N("index", [m], spec=[slice(None), j]), N("index", [m.copy()], spec=[slice(None), (j + 1) % C])],
                 sym=r.choice(["-", "*", "<"]))

    def g_filter(self, d, shape):
        r = self.r
        if shape is not None and shape != (self.n,):
            raise Reject("filter shape")
        x, vx = self.expr(d - 1, (self.n,)) if r.random() < 0.8 else self.matrix(d - 1)
        # the mask is often a comparison of the data itself or of a value it shares
        k = r.random()
        if k < 0.5:
            t = x.copy() if r.random() < 0.6 else self.expr(0, vx.shape)[0]
            m = N("bin", [t, self.litnode()], sym=r.choice([">", "<", ">=", "!="]))
            if vx.dt == B_:
                m = t
        else:
            m = self.expr(d - 1, vx.shape)[0]
            if self.ev(m).dt != B_:
                m = N("bin", [m, self.expr(0, ())[0] if r.random() < 0.3 else self.litnode()], sym=r.choice([">", "<", ">=", "!="]))
        op = r.choice(["filter", "mask", "mask", "partition"])
        return N(op, [x, m])

    def g_where(self, d, shape):
        r = self.r
        a, va = self.expr(d - 1, shape)
        k = r.random()
        if k < 0.4:
            lo, hi = sorted(r.sample([-1.5, -0.5, 0, 0.5, 1, 2], 2))
            fl = r.random() < 0.5
            return N("clamp", [a, lit(str(float(lo)) if fl else str(int(lo))), lit(str(float(hi)) if fl else str(int(hi)))])
        if k < 0.7:
            b = self.operand(d - 1, va)
            return N("maxmin", [a, b], fn=r.choice(["maximum", "minimum"]))
        c = self.expr(d - 1, va.shape)[0]
        if self.ev(c).dt != B_:
            c = N("bin", [c, self.litnode()], sym=r.choice([">", "<"]))
        b = self.operand(d - 1, va)
        return N("where", [c, a, b])

    def g_move(self, d, shape):
        r = self.r
        k = r.random()
        if k < 0.4:
            m, vm = self.matrix(d - 1)
            R, C = vm.shape
            f = r.choice(["transpose", "permute", "reshape", "row", "elem", "slice2"])
            if f == "reshape":
                return N("reshape", [m], dims=r.choice([(C, R), (R * C,), (-1, R) if R > 0 else (C, R)]))
            if f == "row":
                return N("index", [m], spec=[r.randrange(-R, R)])
            if f == "elem":
                return N("index", [m], spec=[r.randrange(R), r.randrange(-C, C)])
            if f == "slice2":
                return N("index", [m], spec=[slice(r.randrange(R), None), slice(None, None, r.choice([1, 2, -1]))])
            return N(f, [m])
        x, vx = self.expr(d - 1, (self.n,))
        n = self.n
        a, b = sorted([r.randrange(-n - 2, n + 2), r.randrange(-n - 2, n + 2)])
        s = r.choice([None, 1, 2, 3, -1, -2])
        if s is not None and s < 0:
            a, b = b, a
        if r.random() < 0.3:
            return N("index", [x], spec=[r.randrange(-n, n)])
        return N("index", [x], spec=[slice(a, b, s)])

    def g_words(self, d, shape):
        """Gather, concat, stack and axis= reductions (issue 13)."""
        r = self.r
        k = r.randrange(5)
        if k == 0:
            x, vx = self.expr(d - 1, (self.n,)) if r.random() < 0.6 else self.matrix(d - 1)
            L = vx.shape[0]
            if L == 0:
                raise Reject("empty")
            idx = [r.randrange(-L, L) for _ in range(r.randint(1, 6))]
            return N("gather", [x], idx=idx, take=len(vx.shape) == 1 and r.random() < 0.3)
        if k in (1, 2):
            x, vx = self.any_array(d - 1)
            parts = [x] + [self.expr(d - 1, vx.shape)[0] for _ in range(r.randint(1, 2))]
            fn = "concat" if k == 1 else "stack"
            nd = len(vx.shape) + (fn == "stack")
            if nd == 0:
                raise Reject("scalar")
            ax = r.choice([None, 0, nd - 1, -1, r.randrange(-nd, nd)])
            return N("join", parts, fn=fn, axis=ax)
        x, vx = self.expr(d - 1, (self.n,)) if r.random() < 0.3 else self.matrix(d - 1)
        nd = len(vx.shape)
        return N("redax", [x], fn=r.choice(REDS), axis=r.randrange(-nd, nd))

    def g_hist(self, d, shape):
        r = self.r
        x, vx = self.expr(d - 1, None)
        nb = r.choice([1, 2, 5, 10])
        if r.random() < 0.5:
            return N("hist", [x], nb=nb, lo=r.choice(["-1", "0", "-2.5"]), hi=r.choice(["1", "2.5", "10"]))
        return N("hist", [x], nb=nb)

    def g_dot(self, d, shape):
        r = self.r
        if r.random() < 0.6:
            a = self.expr(d - 1, (self.n,))[0]
            b = self.expr(d - 1, (self.n,))[0] if r.random() < 0.6 else a.copy()
            return N("dot", [a, b])
        m, vm = self.matrix(d - 1)
        R, C = vm.shape
        if R * R * C > 2e6:
            raise Reject("big matmul")
        k = r.random()
        if k < 0.3:
            return N("matmul", [m, N("transpose", [m.copy()])])
        if k < 0.6 and R >= 2 and C >= 2:
            # products of slices and views of one pending value (strided, offset operands)
            a = N("index", [m], spec=[slice(r.randrange(R), None), slice(None, None, r.choice([1, 2]))])
            va = self.ev(a)
            b = r.choice([N("transpose", [a.copy()]), N("index", [N("transpose", [m.copy()])],
                                                        spec=[slice(None, None, r.choice([1, 2])), slice(1, None)])])
            vb = self.ev(b)
            if va.shape[1] != vb.shape[0]:
                b = N("transpose", [a.copy()])
            return N("matmul", [a, b])
        if k < 0.75:
            return N("matmul", [self.expr(d - 1, (R,))[0], m])
        return N("matmul", [m, self.expr(d - 1, (C,))[0]])

    # -- words of sessions 4-5 (sort family, axis= on any rank, take/bincount)
    def any_array(self, d, shape=None):
        """A vector, matrix or 3-d value (of shape if given)."""
        if shape is not None:
            return self.expr(d, shape)
        k = self.r.random()
        if k < 0.35:
            return self.expr(d, (self.n,))
        if k < 0.7:
            return self.matrix(d)
        if "c0" in self.p.inputs or k < 0.85:
            return self.expr(d, self.c3)
        return self.expr(d, None)

    def g_sortf(self, d, shape):
        r = self.r
        fn = r.choice(["sort", "argsort", "topk", "argtopk", "sort", "topk", "uniq"])
        if fn == "uniq":
            return N("uniq", [self.any_array(d - 1)[0]])
        if shape is not None and fn.endswith("topk"):
            raise Reject("topk shape")
        x, vx = self.any_array(d - 1, shape)
        if r.random() < 0.25 and len(vx.shape) == 2 and not vx.view:
            x, vx = N(r.choice(["rows", "cols"]), [x]), None
            axis = None
            L = self.ev(x).shape[1 if x.op == "rows" else 0]
        else:
            nd = len(vx.shape)
            if nd == 0:
                raise Reject("scalar")
            axis = r.choice([None, None, r.randrange(-nd, nd)])
            L = vx.shape[-1 if axis is None else axis]
        k = None
        if fn.endswith("topk"):
            k = r.choice([0, 1, 1, 2, 3, L, max(L - 1, 0), L // 2])
        return N("sortf", [x], fn=fn, k=k, axis=axis)

    def g_quant(self, d, shape):
        r = self.r
        x, vx = self.any_array(d - 1)
        nd = len(vx.shape)
        axis = None if nd == 0 or r.random() < 0.4 else r.randrange(-nd, nd)
        if nd == 2 and not vx.view and r.random() < 0.3:
            x, axis = N(r.choice(["rows", "cols"]), [x]), None
        if r.random() < 0.5:
            return N("quant", [x], fn="median", axis=axis)
        return N("quant", [x], fn="quantile", q=r.choice(["0", "0.25", "0.5", "0.9", "1", "0.33", "1.0"]), axis=axis)

    def g_more_un(self, d, shape):
        r = self.r
        a, va = self.expr(d - 1, shape)
        k = r.random()
        if k < 0.5:
            fn = r.choice(["tan", "asin", "acos", "atan", "sinh", "cosh", "log2", "log10", "exp2",
                           "expm1", "log1p"])
            if fn in ("asin", "acos", "tan") and va.dt != B_:
                a = N("un", [a], fn=r.choice(["tanh", "sin"]))
            elif fn in ("log2", "log10") and (va.dt == B_ or va.size and np.nanmin(va.hi) <= 0):
                a = N("bin", [N("un", [a], fn="abs"), lit("0.5")], sym="+")
            elif fn == "log1p" and (va.dt == B_ or va.size and np.nanmin(va.hi) <= -0.9):
                a = N("un", [a], fn="abs")
            return N("un", [a], fn=fn)
        if k < 0.65:
            return N("iscls", [a], fn=r.choice(["isfinite", "isnan", "isinf"]))
        b = self.operand(d - 1, va)
        if r.random() < 0.5:
            a, b = b, a
        if k < 0.85:
            return N("bfn", [a, b], fn=r.choice(["atan2", "hypot"]))
        if va.dt != B_ and va.dt.kind == "f":
            a = N("bin", [N("un", [a], fn="abs"), lit("0.25")], sym="+")
        return N("powa", [a, b], call=r.random() < 0.5)

    def g_axis3(self, d, shape):
        r = self.r
        x, vx = self.any_array(d - 1)
        nd = len(vx.shape)
        if nd == 0:
            raise Reject("scalar")
        axis = r.randrange(-nd, nd)
        k = r.random()
        if k < 0.45:
            return N("redax", [x], fn=r.choice(REDS), axis=axis)
        if k < 0.75:
            return N("scanax", [x], sop=r.choice(["", "sum", "prod", "max", "min"]), excl=r.random() < 0.4, axis=axis)
        fn = r.choice(NORMS)
        if vx.dt not in (F32, F64):
            x = N("cast", [x], fn=r.choice(["f32", "f64"]))
        args = [x]
        if fn in ("layernorm", "rmsnorm") and r.random() < 0.4:
            L = vx.shape[axis]
            args.append(self.expr(0, (L,))[0])
            if fn == "layernorm" and r.random() < 0.5:
                args.append(self.expr(0, (L,))[0])
        return N("normax", args, fn=fn, axis=axis)

    def index_value(self, d, L):
        """An int index value in [-L, L): a literal list (1-d or 2-d), or
        computed and pending (an argsort, a modulo, a topk position)."""
        r = self.r
        k = r.random()
        if k < 0.4:
            m = r.randint(1, 6)
            if r.random() < 0.3:
                a = np.array([[r.randrange(-L, L) for _ in range(m)] for _ in range(2)], dtype=np.int64)
                txt = "[" + ", ".join("[" + ", ".join(map(str, row)) + "]" for row in a) + "]"
            else:
                a = np.array([r.randrange(-L, L) for _ in range(m)], dtype=np.int64)
                txt = "[" + ", ".join(map(str, a)) + "]"
            return N("list", text=txt, value=a)
        if k < 0.6:
            y, vy = self.expr(d, (L,))
            if r.random() < 0.5:
                return N("sortf", [y], fn="argtopk", k=r.randint(1, L), axis=None)
            return N("sortf", [y], fn="argsort", k=None, axis=None)
        y, vy = self.expr(d, None)
        if vy.dt not in (I32, I64):
            y = N("cast", [y], fn=r.choice(["i32", "i64"]))
        n = N("bin", [y, lit(str(L))], sym="%")
        if r.random() < 0.3:
            n = N("bin", [n, lit(str(L))], sym="-")      # negative: from the end
        return n

    def g_take2(self, d, shape):
        r = self.r
        if r.random() < 0.25:
            # indices computed from the same pending value: x[argsort(x)],
            # take(x, argtopk(x, k)), m[argmax(rows(m))]
            x, vx = self.expr(d - 1, (self.n,)) if r.random() < 0.6 else self.matrix(d - 1)
            L = vx.shape[0]
            if L == 0:
                raise Reject("empty")
            if len(vx.shape) == 1:
                f = r.choice(["argsort", "argtopk"])
                idx = N("sortf", [x.copy()], fn=f, k=r.randint(1, L) if f == "argtopk" else None, axis=None)
                return N("gathv" if r.random() < 0.5 else "takeax", [x, idx], axis=0)
            R, C = vx.shape
            if C == 0:
                raise Reject("empty")
            idx = N("red", [N("rows", [x.copy()])], fn=r.choice(["argmax", "argmin"]))
            if R > C:
                idx = N("bin", [idx, lit(str(R))], sym="%")
            return N("takeax", [x, idx], axis=r.choice([0, 1, -1])) if C >= R else N("gathv", [x, idx])
        x, vx = self.any_array(d - 1)
        nd = len(vx.shape)
        if nd == 0:
            raise Reject("scalar")
        if r.random() < 0.6:
            axis = r.randrange(-nd, nd)
            L = vx.shape[axis]
            if L == 0:
                raise Reject("empty")
            n = N("takeax", [x, self.index_value(d - 1, L)], axis=axis)
        else:
            L = vx.shape[0]
            if L == 0:
                raise Reject("empty")
            n = N("gathv", [x, self.index_value(d - 1, L)])
        return n

    def g_binc(self, d, shape):
        r = self.r
        x, vx = self.expr(d - 1, (self.n,))
        if vx.dt == B_:
            idx = x
        elif vx.dt in (I32, I64):
            idx = N("bin", [x, lit(str(r.choice([3, 7, 40])))], sym="%") if r.random() < 0.6 else N("un", [x], fn="abs")
        else:
            idx = N("bin", [N("cast", [x], fn="i64"), lit(str(r.choice([3, 7, 40])))], sym="%")
        args = [idx]
        if r.random() < 0.5:
            args.append(self.expr(d - 1, (self.n,))[0])
        ml = r.choice([None, None, 0, 5, 50])
        return N("binc", args, ml=ml)

    def g_ssorted(self, d, shape):
        r = self.r
        a = N("sortf", [self.expr(d - 1, (self.n,))[0]], fn="sort", k=None, axis=None)
        v = self.expr(d - 1, shape)[0] if r.random() < 0.7 else self.expr(0, ())[0]
        return N("ssorted", [a, v])

    def g_cube(self, d, shape):
        """3-d values: permutes, transposes, reshapes and slices of pending values."""
        r = self.r
        k = r.random()
        C = self.c3
        if k < 0.1:
            # views of one pending 3-d value together
            x, vx = self.expr(d - 1, C)
            j = r.randrange(3)
            if j == 0 and C[1] >= 2:
                return N("bin", [N("index", [x], spec=[slice(None), slice(1, None)]),
                                 N("index", [x.copy()], spec=[slice(None), slice(None, -1)])], sym=r.choice(["-", "+", "<"]))
            if j == 1 and C[0] == C[1] == C[2]:
                axes = r.choice([[1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0]])
                return N("bin", [x, N("perm", [x.copy()], axes=axes)], sym=r.choice(["-", "+", "*", "=="]))
            ax = r.randrange(3)
            red = N("redax", [x.copy()], fn=r.choice(["mean", "max", "sum"]), axis=ax)
            keep = tuple(1 if i == ax else C[i] for i in range(3))
            return N("bin", [x, N("reshape", [red], dims=keep)], sym=r.choice(["-", "/"]))
        if k < 0.25:
            x, vx = self.expr(d - 1, C)
            axes = list(range(3))
            r.shuffle(axes)
            return N("perm", [x], axes=axes)
        if k < 0.4:
            x, vx = self.expr(d - 1, C)
            return N("transpose", [x]) if r.random() < 0.5 else N("reshape", [x], dims=(C[2], C[0] * C[1]))
        if k < 0.6:
            m, vm = self.matrix(d - 1)
            R, Cc = vm.shape
            if R * Cc == 0:
                raise Reject("empty")
            dims = r.choice([(R, Cc, 1), (1, R, Cc), (R, 1, Cc), (-1, 1, Cc)])
            return N("reshape", [m], dims=dims)
        x, vx = self.expr(d - 1, C)
        spec = []
        for n in C:
            c = r.random()
            if c < 0.3 and n:
                spec.append(r.randrange(-n, n))
            elif c < 0.6:
                spec.append(slice(None))
            else:
                spec.append(slice(r.randrange(0, n + 1), None, r.choice([None, 2, -1])))
        return N("index", [x], spec=spec)

    def g_call(self, d, shape):
        """A call of a user function (fn f(a, b) = ...), defined on first use."""
        r = self.r
        i = r.randrange(len(FN_T))
        params, body = FN_T[i]
        name = self.p.prefix() + "fun%d" % i
        a, va = self.expr(d - 1, shape)
        args = [a]
        if len(params) == 2:
            args.append(self.operand(d - 1, va))
        n = N("call", args, name=name, params=params, body=body, kw=r.random() < 0.3)
        self.ev(n)
        if not any(s.kind == "fn" and s.name == name for s in self.p.stmts):
            self.p.stmts.insert(0, Stmt("fn", name, [body], value=params))
        return n

    def g_shapefn(self, d, shape):
        x, vx = self.expr(d - 1, None)
        return N("shapefn", [x], fn=self.r.choice(["len", "size", "shape"]))

    def shared(self):
        """A pending value E used by a reduction, scan or filter in one statement
        and by a filter / mask / partition / print in a later one (issue 9.7, 9.8)."""
        r, p = self.r, self.p
        E, vE = self.expr(r.randint(0, 2), (self.n,) if r.random() < 0.8 else self.rc)
        c = r.choice([">", "<", ">=", "!="])
        k = r.randrange(8)
        if k >= 6:
            return self.shared_sort(E, vE)
        if k == 0:
            S = N("red", [E.copy()], fn=r.choice(["sum", "max", "min", "mean", "any", "count", "prod"]))
        elif k == 1:
            S = N("scan", [E.copy()], sop=r.choice(SCAN_OPS), excl=r.random() < 0.3, dflt=True)
        elif k == 2:
            S = N(r.choice(["filter", "mask"]), [E.copy(), N("bin", [E.copy(), self.litnode()], sym=c)])
        elif k == 3:
            S = N("red", [N("mask", [E.copy(), N("bin", [E.copy(), self.litnode()], sym=c)])], fn=r.choice(["any", "max", "sum"]))
        elif k == 4:
            S = N("red", [N("scan", [E.copy()], sop=r.choice(SCAN_OPS), excl=False, dflt=True)], fn=r.choice(["min", "max", "sum"]))
        else:
            S = N("bin", [E.copy(), self.litnode()], sym="*")
        vS = self.ev(S)
        nm = self.newname("s")
        p.stmts.append(Stmt("assign", nm, [S]))
        self.add_var(nm, vS)
        T = var(nm)
        uses = []
        if vS.shape == ():
            uses.append(N(r.choice(["filter", "mask"]), [E.copy(), N("bin", [E.copy(), T], sym=c)]))
            uses.append(N("partition", [E.copy(), N("bin", [E.copy(), T], sym=c)]))
            uses.append(N("red", [N("mask", [E.copy(), N("bin", [E.copy(), T], sym=c)])], fn=r.choice(["sum", "all", "count"])))
        elif vS.shape == vE.shape:
            uses.append(N("filter", [E.copy(), N("bin", [T, self.litnode()], sym=c)]))
            uses.append(N("mask", [T, N("bin", [E.copy(), self.litnode()], sym=c)]))
        else:
            uses.append(N("red", [T], fn=r.choice(["sum", "max", "count"])))
        uses.append(N("filter", [E.copy(), N("bin", [E.copy(), self.litnode()], sym=c)]))
        uses.append(N("scan", [E.copy()], sop=r.choice(SCAN_OPS), excl=False, dflt=True))
        U_ = r.choice(uses)
        self.ev(U_)
        if r.random() < 0.5:
            p.stmts.append(Stmt("print", p.prefix() + "p%d" % len(p.stmts), [T, U_]))
            self.ev(T)
            if vS.size > 40 or self.ev(U_).size > 40:
                p.stmts[-1] = Stmt("save", p.prefix() + "o%d" % len(p.stmts), [U_])
        else:
            p.stmts.append(Stmt("save", p.prefix() + "o%d" % len(p.stmts), [U_]))

    def shared_sort(self, E, vE):
        """A sort-family value of E in one statement and E's sort (hash-consed:
        the same node) read again by median / quantile / a gather / a
        searchsorted in later ones."""
        r, p = self.r, self.p
        if len(vE.shape) != 1 or vE.size == 0:
            raise Reject("vector")
        L = vE.shape[0]
        mk = [
            lambda: N("sortf", [E.copy()], fn="sort", k=None, axis=None),
            lambda: N("sortf", [E.copy()], fn="argsort", k=None, axis=None),
            lambda: N("sortf", [E.copy()], fn=r.choice(["topk", "argtopk"]), k=r.randint(1, L), axis=None),
            lambda: N("quant", [E.copy()], fn="median", axis=None),
            lambda: N("quant", [E.copy()], fn="quantile", q=r.choice(["0.25", "0.5", "1"]), axis=None),
            lambda: N("uniq", [E.copy()]),
            lambda: N("index", [N("sortf", [E.copy()], fn="sort", k=None, axis=None)], spec=[r.randrange(-L, L)]),
            lambda: N("gathv", [E.copy(), N("sortf", [E.copy()], fn="argsort", k=None, axis=None)]),
            lambda: N("ssorted", [N("sortf", [E.copy()], fn="sort", k=None, axis=None), E.copy()]),
            lambda: N("bin", [N("index", [N("sortf", [E.copy()], fn="sort", k=None, axis=None)], spec=[slice(1, None)]),
                              N("index", [N("sortf", [E.copy()], fn="sort", k=None, axis=None)], spec=[slice(None, -1)])], sym="-"),
        ]
        S = r.choice(mk)()
        vS = self.ev(S)
        nm = self.newname("s")
        p.stmts.append(Stmt("assign", nm, [S]))
        self.add_var(nm, vS)
        for _ in range(r.randint(1, 2)):
            U_ = r.choice(mk)()
            if r.random() < 0.3:
                U_ = N("bin", [U_, var(nm)], sym="-") if self.ev(U_).shape == vS.shape or vS.shape == () else U_
            self.ev(U_)
            if r.random() < 0.5 and self.ev(U_).size <= 40 and vS.size <= 40:
                p.stmts.append(Stmt("print", p.prefix() + "p%d" % len(p.stmts), [var(nm), U_]))
            else:
                p.stmts.append(Stmt("save", p.prefix() + "o%d" % len(p.stmts), [U_]))

    # -- statements
    def program(self):
        r, p = self.r, self.p
        nst = r.randint(2, 7)
        made = []
        if r.random() < 0.35:
            for _ in range(5):
                try:
                    self.shared()
                    break
                except Exception:
                    continue
        for _ in range(nst):
            k = r.random()
            try:
                if made and r.random() < 0.15:
                    # a name assigned again, often from its own pending value
                    # (t = t[1:] - t[:-1]; t = sort(t)): the old value must stay
                    # what the earlier statements captured
                    nm = r.choice(made)
                    n, v = self.expr(r.randint(1, 3))
                    if r.random() < 0.7:
                        uses = [x for x in self.pool if x[0].at.get("name") == nm]
                        n2, v2 = self.expr(r.randint(1, 2), uses[0][1].shape) if uses else (n, v)
                        n, v = n2, v2
                    p.stmts.append(Stmt("assign", nm, [n]))
                    self.reassign(nm, v)
                    continue
                if k < 0.5:
                    n, v = self.expr(r.randint(1, 3))
                    nm = self.newname()
                    p.stmts.append(Stmt("assign", nm, [n]))
                    self.add_var(nm, v)
                    made.append(nm)
                elif k < 0.8:
                    n, v = self.expr(r.randint(1, 3))
                    p.stmts.append(Stmt("save", self.p.prefix() + "o%d" % len(p.stmts), [n]))
                else:
                    es = []
                    for _ in range(r.randint(1, 3)):
                        for _ in range(8):
                            n, v = self.expr(r.randint(0, 2))
                            if v.size <= 40:
                                es.append(n)
                                break
                    if es:
                        p.stmts.append(Stmt("print", self.p.prefix() + "p%d" % len(p.stmts), es))
            except Exception:
                continue
        for nm in made:
            if r.random() < 0.5:
                v = self.env[nm]
                if v.size <= 40 and r.random() < 0.4:
                    p.stmts.append(Stmt("print", self.p.prefix() + "p%d" % len(p.stmts), [var(nm)]))
                else:
                    p.stmts.append(Stmt("save", self.p.prefix() + "o%d" % len(p.stmts), [var(nm)]))
        if not any(s.kind in ("save", "print") for s in p.stmts):
            # observe something
            n, v = self.pick()
            p.stmts.append(Stmt("save", self.p.prefix() + "o%d" % len(p.stmts), [n]))


SIZES = [1, 2, 3, 5, 8, 31, 33, 64, 100, 1000, 0]
SIZEW = [3, 3, 3, 3, 3, 4, 4, 2, 2, 1, 1]
SHAPES = [(1, 1), (2, 3), (3, 2), (4, 4), (31, 33), (33, 31), (8, 8), (3, 1000), (1000, 3), (64, 64), (1, 5), (5, 1),
          (0, 3), (3, 0)]
SHAPEW = [1, 3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
CUBES = [(2, 3, 4), (1, 5, 3), (3, 1, 7), (4, 4, 1), (2, 33, 3), (5, 2, 31), (1, 1, 1), (3, 4, 2), (2, 0, 3), (3, 3, 3)]
CUBEW = [3, 2, 2, 2, 2, 2, 1, 3, 1, 2]


def plan(pid, seed, big_every):
    """First stage: sizes and rand leaves (the prepass draws those)."""
    p = Program(pid, seed)
    g = Gen(p, seed, False)
    r = g.r
    big = big_every and r.randrange(big_every) == 0
    if big:
        g.n = r.choice([1000003, 2 ** 20 + 1])
        g.rc = r.choice([(1000, 1000), (1, 1000003), (1000003, 1)])
    else:
        g.n = r.choices(SIZES, SIZEW)[0]
        g.rc = r.choices(SHAPES, SHAPEW)[0]
        g.c3 = r.choices(CUBES, CUBEW)[0]
        if r.random() < 0.3:
            g.rc = (g.rc[0], g.n) if g.n <= 1000 else g.rc
    if r.random() < 0.25:
        p.rseed = r.randrange(1000)
        for i in range(r.randint(1, 2)):
            kind = r.choice(["rand", "randn"])
            dims = (g.n,) if r.random() < 0.6 else g.rc
            p.rands.append((p.prefix() + "rnd%d" % i, kind, dims))
    return p, g


def generate(p, g, rvals):
    g.setup(rvals)
    g.program()
    return p
