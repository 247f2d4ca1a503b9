#!/usr/bin/env python3
"""docs/gen_language.py -- regenerates docs/language.md, docs/limits.md and
docs/fusion.md.

Every example output in those files is produced here by running build/gk
(on the cpu backend, so the text is the same on every machine); nothing is
typed in by hand.  Limit values are read from the headers that define them.
Run from the repository root after `make`:

    python3 docs/gen_language.py            # rewrite the three files
    python3 docs/gen_language.py --check    # exit 1 if any file would change

It fails if a name the library reports (gk_builtin_names()) has no entry
below, or if an example that should succeed fails (or one that should fail
succeeds).
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GK = os.environ.get("GK", os.path.join(ROOT, "build", "gk"))
TMP = tempfile.mkdtemp(prefix="gk-docs-")
ENV = dict(os.environ, GK_BACKEND="cpu", GK_FUSION="1", GK_HISTORY="")


def gk(src=None, args=(), expect_ok=True, stdin=None):
    """Runs gk -e SRC (or gk ARGS); returns stdout and stderr interleaved as printed."""
    cmd = [GK, "--backend", "cpu", *args]
    if src is not None:
        cmd += ["-e", src]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=ENV, cwd=TMP, input=stdin)
    if expect_ok is not None and (p.returncode == 0) != expect_ok:
        sys.exit("gen_language: %r: unexpected exit status %d:\n%s" % (src or args, p.returncode, p.stdout))
    return p.stdout.rstrip("\n")


def block(src, out, lang="gk"):
    return "```%s\n%s\n```\n```text\n%s\n```\n" % (lang, src, out)


def ex(src, **kw):
    """A source block followed by what gk prints for it."""
    return block(src, gk(src, **kw))


def err(src):
    return block(src, gk(src, expect_ok=False))


def plan(src):
    return block("$ gk --plan -e '%s'" % src.replace("\n", "; "), gk(src, args=("--plan",)), lang="sh")


def one_line(s):
    """A printed value on one line for a table cell."""
    s = re.sub(r"\n\s*", " ", s.strip())
    return s.replace("|", "\\|")


# ---------------------------------------------------------------- dtype probe
# A tiny program against gk.h that prints the dtype and shape of a variable.
PROBE_C = r"""
#include <stdio.h>
#include <string.h>
#include "gk.h"
int main(int argc, char **argv) {
  gk_ctx *g = gk_open("cpu");
  if (!g) return 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    char src[4096];
    snprintf(src, sizeof src, "%s\nr__ = %s", argv[i], argv[i + 1]);
    gk_dtype t; int nd; int64_t sh[GK_MAX_DIMS];
    if (gk_eval(g, src) || gk_shape(g, "r__", &t, &nd, sh)) { printf("T:-\n"); continue; }
    printf("T:%s[", gk_dtype_name(t));
    for (int d = 0; d < nd; d++) printf("%s%lld", d ? ", " : "", (long long)sh[d]);
    printf("]\n");
  }
  gk_close(g);
  return 0;
}
"""
_probe = None


def dtypes(cases):
    """cases: list of (setup, expr); returns the result type of each as 'f32[2]'."""
    global _probe
    if _probe is None:
        c = os.path.join(TMP, "probe.c")
        _probe = os.path.join(TMP, "probe")
        open(c, "w").write(PROBE_C)
        subprocess.run(["cc", "-std=c11", "-I", ROOT, "-o", _probe, c, os.path.join(ROOT, "build", "libgk.a"),
                        "-ldl", "-lpthread", "-lm"], check=True)
    args = []
    for setup, e in cases:
        args += [setup, e]
    out = subprocess.run([_probe, *args], stdout=subprocess.PIPE, text=True, check=True, cwd=TMP).stdout
    types = [l[2:] for l in out.split("\n") if l.startswith("T:")]
    assert len(types) == len(cases), out
    return types


# ---------------------------------------------------------------- builtins
# (family, name, signature, description, example)
BUILTINS = [
    ("make", "iota", "iota(n)", "0, 1, ..., n-1 as i64", "iota(5)"),
    ("make", "zeros", "zeros(dims...)", "an f32 array of zeros; dims are numbers or one integer vector", "zeros(2, 3)"),
    ("make", "ones", "ones(dims...)", "an f32 array of ones", "ones(3)"),
    ("make", "fill", "fill(v, dims...)", "an array of v (v's dtype)", "fill(7, 2, 2)"),
    ("make", "rand", "rand(dims...)", "uniform U[0,1) f32 (Philox4x32-10)", "seed(1); rand(3)"),
    ("make", "randn", "randn(dims...)", "standard normal N(0,1) f32", "seed(1); randn(3)"),
    ("make", "seed", "seed(s)", "sets the generator's seed (an integer; a float seed must be integral and within int64) and restarts its stream; prints nothing",
     "seed(5); a = rand(2); seed(5); rand(2) == a"),
    ("elementwise", "abs", "abs(x)", "absolute value (keeps ints)", "abs([-1.5, 2])"),
    ("elementwise", "exp", "exp(x)", "e**x (ints become float)", "exp([0, 1])"),
    ("elementwise", "log", "log(x)", "natural log; log(0) = -inf, log(-1) = nan", "log([1, 10])"),
    ("elementwise", "sqrt", "sqrt(x)", "square root", "sqrt([4, 2])"),
    ("elementwise", "rsqrt", "rsqrt(x)", "1 / sqrt(x)", "rsqrt([4, 16])"),
    ("elementwise", "sin", "sin(x)", "sine (radians)", "sin([0, 1])"),
    ("elementwise", "cos", "cos(x)", "cosine (radians)", "cos([0, 1])"),
    ("elementwise", "tan", "tan(x)", "tangent (radians)", "tan([0, 1])"),
    ("elementwise", "asin", "asin(x)", "inverse sine; nan outside [-1, 1]", "asin([0, 1])"),
    ("elementwise", "acos", "acos(x)", "inverse cosine; nan outside [-1, 1]", "acos([0, 1])"),
    ("elementwise", "atan", "atan(x)", "inverse tangent", "atan([0, 1])"),
    ("elementwise", "sinh", "sinh(x)", "hyperbolic sine", "sinh([0, 1])"),
    ("elementwise", "cosh", "cosh(x)", "hyperbolic cosine", "cosh([0, 1])"),
    ("elementwise", "tanh", "tanh(x)", "hyperbolic tangent", "tanh([-1, 0, 1])"),
    ("elementwise", "log2", "log2(x)", "base-2 log", "log2([1, 8])"),
    ("elementwise", "log10", "log10(x)", "base-10 log", "log10([1, 1000])"),
    ("elementwise", "exp2", "exp2(x)", "2**x", "exp2([0, 10])"),
    ("elementwise", "expm1", "expm1(x)", "e**x - 1, exact near 0", "expm1([1e-10, 1])"),
    ("elementwise", "log1p", "log1p(x)", "log(1 + x), exact near 0", "log1p([1e-10, 1])"),
    ("elementwise", "sigmoid", "sigmoid(x)", "1 / (1 + exp(-x))", "sigmoid([-1, 0, 1])"),
    ("elementwise", "relu", "relu(x)", "max(x, 0) (keeps ints)", "relu([-1, 0, 2])"),
    ("elementwise", "floor", "floor(x)", "round down (float result)", "floor([-1.5, 1.5])"),
    ("elementwise", "ceil", "ceil(x)", "round up (float result)", "ceil([-1.5, 1.5])"),
    ("elementwise", "round", "round(x)", "round half to even, as numpy", "round([0.5, 1.5, 2.5, -0.5])"),
    ("elementwise", "sign", "sign(x)", "-1, 0 or 1 (keeps ints)", "sign([-3, 0, 2])"),
    ("elementwise", "isfinite", "isfinite(x)", "bool: neither inf nor nan (ints: true)", "isfinite([1, 1 / 0, 0 / 0])"),
    ("elementwise", "isnan", "isnan(x)", "bool: x is nan", "isnan([1, 1 / 0, 0 / 0])"),
    ("elementwise", "isinf", "isinf(x)", "bool: x is inf or -inf", "isinf([1, -1 / 0, 0 / 0])"),
    ("elementwise", "pow", "pow(a, b)", "a ** b, broadcast; a constant exponent 2, 0.5 or -1 is x*x, sqrt(x), 1/x (numpy)",
     "pow(2.0, [0.5, 3])"),
    ("elementwise", "maximum", "maximum(a, b)", "elementwise larger, broadcast", "maximum([1, 5], [3, 2])"),
    ("elementwise", "minimum", "minimum(a, b)", "elementwise smaller, broadcast", "minimum([1, 5], 3)"),
    ("elementwise", "atan2", "atan2(a, b)", "angle of the point (b, a), in (-pi, pi]", "atan2([1, -1], -1)"),
    ("elementwise", "hypot", "hypot(a, b)", "sqrt(a*a + b*b) without overflow", "hypot([3, 1e30], [4, 1e30])"),
    ("elementwise", "clamp", "clamp(x, lo, hi)", "minimum(maximum(x, lo), hi)", "clamp([-2, 0.5, 9], 0, 1)"),
    ("elementwise", "where", "where(c, a, b)", "a where c is true, else b; all three broadcast",
     "x = [1, 2, 3]; where(x > 1, x, 0)"),
    ("elementwise", "f32", "f32(x)", "cast to f32", "f32([1, 2])"),
    ("elementwise", "f64", "f64(x)", "cast to f64", "f64(1) / 3"),
    ("elementwise", "i32", "i32(x)", "cast to i32 (floats truncate toward zero)", "i32([1.7, -1.7])"),
    ("elementwise", "i64", "i64(x)", "cast to i64", "i64(2.9)"),
    ("elementwise", "bool", "bool(x)", "cast to bool (nonzero is true)", "bool([0, 1, 2])"),
    ("reduce", "sum", "sum(x[, axis=k])", "sum; ints and bools sum in i64; empty gives 0", "sum([1, 2, 3])"),
    ("reduce", "prod", "prod(x[, axis=k])", "product; empty gives 1", "prod([1, 2, 3, 4])"),
    ("reduce", "max", "max(x[, axis=k])", "largest; NaN if any NaN; empty is an error", "max([3, 9, 2])"),
    ("reduce", "min", "min(x[, axis=k])", "smallest; NaN if any NaN; empty is an error", "min([3, 9, 2])"),
    ("reduce", "any", "any(x[, axis=k])", "true if any element is nonzero", "any([false, true])"),
    ("reduce", "all", "all(x[, axis=k])", "true if every element is nonzero", "all([false, true])"),
    ("reduce", "argmax", "argmax(x[, axis=k])", "i64 index of the first maximum (of the first NaN if any)", "argmax([3, 9, 9])"),
    ("reduce", "argmin", "argmin(x[, axis=k])", "i64 index of the first minimum", "argmin([3, 1, 1])"),
    ("reduce", "mean", "mean(x[, axis=k])", "sum / count, float", "mean([1, 2, 3, 4])"),
    ("reduce", "count", "count(x[, axis=k])", "number of nonzero (true) elements, i64", "count([0, 1, 2, 0])"),
    ("reduce", "norm", "norm(x[, axis=k])", "Euclidean norm sqrt(sum(x*x))", "norm([3, 4])"),
    ("reduce", "var", "var(x[, axis=k])", "population variance (numpy's ddof=0)", "var([1, 2, 3, 4])"),
    ("reduce", "std", "std(x[, axis=k])", "population standard deviation", "std([1, 2, 3, 4])"),
    ("reduce", "logsumexp", "logsumexp(x[, axis=k])", "log(sum(exp(x))), computed stably", "logsumexp([1, 2, 3])"),
    ("reduce", "dot", "dot(a, b)", "sum(a * b) of two vectors of one length", "dot([1, 2, 3], [4, 5, 6])"),
    ("scan", "scan", "scan(x[, op][, axis=k])", "inclusive prefix scan; op is sum (default), prod, max or min",
     "scan([3, 1, 4, 1, 5], max)"),
    ("scan", "exscan", "exscan(x[, op][, axis=k])", "exclusive prefix scan: starts at op's identity", "exscan([1, 2, 3, 4])"),
    ("normalize", "softmax", "softmax(x[, axis=k])", "exp(x - max) * (1 / sum(exp(x - max)))", "softmax([1.0, 2, 3])"),
    ("normalize", "logsoftmax", "logsoftmax(x[, axis=k])", "x - logsumexp(x)", "logsoftmax([1.0, 2, 3])"),
    ("normalize", "layernorm", "layernorm(x[, gamma, beta][, eps=1e-5][, axis=k])",
     "(x - mean) / sqrt(var + eps), then * gamma + beta", "layernorm([1.0, 2, 3, 4])"),
    ("normalize", "rmsnorm", "rmsnorm(x[, gamma][, eps=1e-5][, axis=k])", "x / sqrt(mean(x*x) + eps), then * gamma",
     "rmsnorm([3.0, 4.0], gamma=[1.0, 2.0])"),
    ("data movement", "filter", "filter(x, mask)", "the elements where mask is true, in order (= x[mask])",
     "filter([1, 2, 3, 4], [true, false, true, false])"),
    ("data movement", "partition", "partition(x, mask)", "elements where mask is true first, then the rest; both stable",
     "partition([1, 2, 3, 4], [false, true, false, true])"),
    ("data movement", "hist", "hist(x, nbins[, lo, hi])",
     "i64 bin counts, numpy.histogram rules (range defaults to [min, max])",
     "hist([0.1, 0.5, 0.9, 1.0, 1.5], 2, 0, 1)"),
    ("data movement", "transpose", "transpose(m)", "reverses the axes", "transpose([[1, 2], [3, 4]])"),
    ("data movement", "reshape", "reshape(x, dims...)", "same elements in C order, new shape; one dim may be -1",
     "reshape(iota(6), -1, 2)"),
    ("data movement", "permute", "permute(x, axes...)", "output axis i is input axis axes[i]",
     "shape(permute(zeros(2, 3, 4), 2, 0, 1))"),
    ("sort", "sort", "sort(x[, axis=k])",
     "ascending, stable, NaN last, -0.0 equal to 0.0 (numpy's order); along the last axis, each row of rows(m), "
     "each column of cols(m)", "sort([3.0, 0 / 0, -1, 2])"),
    ("sort", "argsort", "argsort(x[, axis=k])", "i64 positions that sort x (stable: ties keep their order)",
     "argsort([3, 1, 2, 1])"),
    ("sort", "topk", "topk(x, k[, axis=k])", "the k largest, descending; ties to the lower index; NaN counts as largest",
     "topk([3, 1, 4, 1, 5], 2)"),
    ("sort", "argtopk", "argtopk(x, k[, axis=k])", "i64 positions of topk's values", "argtopk([3, 7, 4, 7], 2)"),
    ("sort", "unique", "unique(x)", "the sorted distinct values of the flattened array (NaNs count as one)",
     "unique([3, 1, 3, 2, 1])"),
    ("sort", "median", "median(x[, axis=k])",
     "numpy.median: the middle value, or the mean of the two middle ones; float; NaN if any NaN; empty is an error",
     "median([4, 1, 3, 2])"),
    ("sort", "quantile", "quantile(x, q[, axis=k])",
     "numpy.quantile's default (linear) method, q a number in [0, 1]; float; NaN if any NaN; "
     "ints interpolate in f64 (numpy subtracts the two neighbours in the int type, which wraps, with a warning, "
     "when they are further apart than the type's range)",
     "quantile([1, 2, 3, 4], 0.25)"),
    ("sort", "searchsorted", "searchsorted(a, v)",
     "i64 insertion points of v in sorted 1-d a: the first position not below v (numpy's side='left'; NaN last)",
     "searchsorted([1, 3, 5], [0, 3, 4])"),
    ("shape", "len", "len(x)", "length of the first axis", "len([[1, 2], [3, 4], [5, 6]])"),
    ("shape", "size", "size(x)", "number of elements", "size([[1, 2], [3, 4], [5, 6]])"),
    ("shape", "shape", "shape(x)", "the dims as an i64 vector", "shape([[1, 2], [3, 4], [5, 6]])"),
    ("shape", "rows", "rows(m)", "a view of matrix m: reductions give one value per row", "sum(rows([[1, 2], [3, 4]]))"),
    ("shape", "cols", "cols(m)", "a view of matrix m: reductions give one value per column",
     "sum(cols([[1, 2], [3, 4]]))"),
    ("I/O", "load", "load(file[, name])", "reads a .npy file (bool, i4, i8, f4, f8 as they are; int8, uint8, int16, uint16 as i32, uint32 as i64, float16 as f32; either byte order, C or Fortran order), or the array `name` of a .npz file (numpy.savez or savez_compressed; `name` may be left out when it holds one array)",
     "save(\"/tmp/gk_doc.npy\", [1.5, 2.5]); load(\"/tmp/gk_doc.npy\")"),
    ("I/O", "save", "save(file, x, ...)", "writes x to a .npy file, or several arrays to a .npz file (stored members, as numpy.savez; each named after its argument when that is a variable, else arr_N by position); atomically: temp file, then rename; replaces only a writable regular file, follows a symbolic link to its target, keeps the mode",
     "x = iota(3); save(\"/tmp/gk_doc.npz\", x, x * 2); load(\"/tmp/gk_doc.npz\", \"arr_1\")"),
    ("I/O", "loadtxt", "loadtxt(file[, delimiter][, skiprows])", "reads numbers separated by `delimiter` (default: blanks) as f64, numpy.loadtxt's rules: the first `skiprows` lines, blank lines and `#` comments are skipped, one row or one column gives a vector; a bad cell's error names its row (the file's line) and column",
     "savetxt(\"/tmp/gk_doc.csv\", [[1, 2], [3, 4]], delimiter=\",\"); loadtxt(\"/tmp/gk_doc.csv\", delimiter=\",\")"),
    ("I/O", "savetxt", "savetxt(file, x[, delimiter])", "writes a vector (one value a line) or a matrix (one row a line), `delimiter` between (default a space); floats as numpy's `%.18e`, ints and bools as integers",
     "savetxt(\"/tmp/gk_doc.txt\", [0.5, 2])"),
    ("I/O", "print", "print(values...)", "prints values and strings separated by spaces, then a newline",
     "print(\"x =\", [1, 2], 3.5)"),
    ("gather", "take", "take(x, idx[, axis=k])",
     "the elements of x (flattened) at integer array idx, negative counting from the end: `reshape(x, -1)[idx]`; "
     "with `axis=k`, the entries of x along axis k (numpy.take): shape `x[:k] + idx + x[k+1:]`",
     "take([[1, 2], [3, 4]], [3, 0, -1]); take([[1, 2], [3, 4]], [1, 1, 0], axis=1)"),
    ("gather", "bincount", "bincount(idx[, weights][, minlength=n])",
     "i64 count of each value of a non-negative integer (or bool) vector; with weights, their float sums; "
     "length max(idx) + 1 or minlength", "bincount([1, 1, 3], minlength=5)"),
    ("gather", "concat", "concat(a, b, ...[, axis=0])", "joins arrays along an existing axis (numpy.concatenate)",
     "concat([[1, 2]], [[3, 4], [5, 6]])"),
    ("gather", "stack", "stack(a, b, ...[, axis=0])", "joins arrays of one shape along a new axis (numpy.stack)",
     "stack([1, 2], [3, 4], axis=1)"),
    ("I/O", "plot", "plot(x[, y])", "draws a text chart of x's elements (bars from 0 when none is negative, else each column's range, with the zero line), or a scatter of the points (x, y); Unicode on a terminal, ASCII piped or under NO_COLOR; prints nothing else",
     "plot([1, 3, 2, 5, 4])"),
]


FAMILY = {"make": "Making arrays", "elementwise": "Elementwise", "reduce": "Reductions", "scan": "Scans",
          "normalize": "Normalisations", "data movement": "Data movement", "sort": "Sorting", "shape": "Shape and views",
          "I/O": "I/O", "gather": "Gather and join"}


# ---------------------------------------------------------------- help
# The REPL's `:help NAME` / `?NAME` text comes from BUILTINS too: docs/help.txt
# is written here (signature, meaning, dtype rule, the example and what gk
# printed for it) and the Makefile embeds it in the gk command, so the help
# and this reference cannot disagree (`make test` runs --check).  The dtype
# rule is DTYPE_RULE[name] when there is one, else the family's; a row added
# to BUILTINS without either still builds, and --check names it.
RAN = {}   # name -> (what its example printed, its result type), filled by table_builtins
FAMILY_DTYPE = {
    "elementwise": "bool and ints become a float (f32 from bool or i32, f64 from i64); floats keep their dtype",
    "reduce": "a scalar (one value per row or column of a rows()/cols() view) of the input's dtype",
    "scan": "the input's dtype; sum and prod of ints and bools accumulate in i64",
    "normalize": "a float of the input's shape (ints become f32 from bool or i32, f64 from i64)",
    "shape": "i64",
}
DTYPE_RULE = {
    "iota": "i64", "zeros": "f32", "ones": "f32", "fill": "the dtype of v (a weak literal: i64 or f32)",
    "rand": "f32", "randn": "f32", "seed": "no value",
    "abs": "keeps the input's dtype", "relu": "keeps the input's dtype", "sign": "keeps the input's dtype",
    "round": "keeps the input's dtype (ints unchanged)",
    "floor": "keeps floats; ints become a float", "ceil": "keeps floats; ints become a float",
    "isfinite": "bool", "isnan": "bool", "isinf": "bool",
    "pow": "numpy's promotion of a and b (an int to a negative int literal power is an error)",
    "maximum": "numpy's promotion of a and b (weak literals take the other operand's dtype)",
    "minimum": "numpy's promotion of a and b (weak literals take the other operand's dtype)",
    "atan2": "a float: numpy's promotion of a and b, ints becoming a float",
    "hypot": "a float: numpy's promotion of a and b, ints becoming a float",
    "clamp": "numpy's promotion of x, lo and hi", "where": "numpy's promotion of a and b; c is bool",
    "f32": "f32", "f64": "f64", "i32": "i32", "i64": "i64", "bool": "bool",
    "sum": "i64 for ints and bools, else the input's float dtype",
    "prod": "i64 for ints and bools, else the input's float dtype",
    "max": "the input's dtype", "min": "the input's dtype", "any": "bool", "all": "bool",
    "argmax": "i64", "argmin": "i64", "count": "i64",
    "mean": "a float (f32 from bool or i32, f64 from i64)", "norm": "a float (f32 from bool or i32, f64 from i64)",
    "var": "a float (f32 from bool or i32, f64 from i64)", "std": "a float (f32 from bool or i32, f64 from i64)",
    "logsumexp": "a float (f32 from bool or i32, f64 from i64)",
    "dot": "numpy's promotion of a and b; ints and bools accumulate in i64",
    "filter": "x's dtype", "partition": "x's dtype", "hist": "i64",
    "transpose": "x's dtype", "reshape": "x's dtype", "permute": "x's dtype",
    "load": "the file's dtype (bool, i32, i64, f32 or f64)", "save": "no value", "print": "no value",
    "loadtxt": "f64, as numpy.loadtxt", "savetxt": "no value", "plot": "no value",
    "take": "x's dtype (idx: an integer array)",
    "bincount": "i64 counts; with weights, their float dtype (f32 weights give f32, where numpy gives f64)",
    "concat": "numpy's promotion of the operands", "stack": "numpy's promotion of the operands",
    "sort": "x's dtype", "argsort": "i64", "topk": "x's dtype", "argtopk": "i64", "unique": "x's dtype",
    "median": "a float (f64 from ints, as numpy; f32 stays f32)",
    "quantile": "a float (f64 from ints, as numpy; f32 stays f32)", "searchsorted": "i64",
}


def help_txt():
    """docs/help.txt: one '@NAME' entry per builtin, then '@:names' (the families)."""
    out = ["# generated by docs/gen_language.py from runs of build/gk; edit the generator, not this file\n"
           "# the gk command embeds it: :help NAME and ?NAME at the prompt print an entry\n"]
    missing = []
    fams = {}
    for fam, name, sig, desc, e in BUILTINS:
        fams.setdefault(fam, []).append(name)
        rule = DTYPE_RULE.get(name, FAMILY_DTYPE.get(fam))
        if rule is None:
            missing.append(name)
            rule = "(not written yet)"
        res, t = RAN.get(name, ("", "-"))
        shown = "\n".join("    " + l for l in res.split("\n")) if res else "    (prints nothing)"
        out.append("@%s\n%s    [%s]\n  %s\n  dtype: %s\n  example:\n    gk> %s\n%s\n%s" % (
            name, sig, FAMILY[fam].lower(), desc, rule, e, shown,
            "  result type: %s\n" % t if t != "-" else ""))
    names = ["@:names"]
    for fam, ns in fams.items():
        line, lines = "", []
        for n in ns:
            if len(line) + len(n) + 1 > 58:
                lines.append(line)
                line = ""
            line += (" " if line else "") + n
        lines.append(line)
        names.append("  %-17s%s" % (FAMILY[fam] + ":", ("\n" + " " * 19).join(lines)))
    out.append("\n".join(names) + "\n")
    if missing:
        print("gen_language: no dtype rule for %s (add them to DTYPE_RULE)" % ", ".join(missing))
    return "".join(out), missing


def library_builtins():
    """The builtin names the library reports (gk_builtin_names: the checker's table and the op rows)."""
    import ctypes
    lib = ctypes.CDLL(os.path.join(os.path.dirname(GK), "libgk.so"))
    lib.gk_builtin_names.restype = ctypes.POINTER(ctypes.c_char_p)
    p, names = lib.gk_builtin_names(), []
    while p[len(names)]:
        names.append(p[len(names)].decode())
    return names


def table_builtins():
    names = library_builtins()
    mine = [b[1] for b in BUILTINS]
    missing = [n for n in names if n not in mine]
    extra = [n for n in mine if n not in names]
    if missing or extra:
        sys.exit("gen_language: builtins out of step with compiler/build.c: missing %s, extra %s" % (missing, extra))
    cases = []
    for fam, name, sig, desc, e in BUILTINS:
        setup, _, last = e.rpartition(";")
        cases.append((setup, last.strip()))
    types = dtypes(cases)
    out, fam0 = [], None
    for (fam, name, sig, desc, e), t in zip(BUILTINS, types):
        if fam != fam0:
            out.append("\n### %s\n\n| signature | does | example | prints | result type |\n|---|---|---|---|---|" % FAMILY[fam])
            fam0 = fam
        res = gk(e)
        RAN[name] = (res, t)
        shown = "a chart ([below](#charts))" if res.count("\n") > 3 else "`%s`" % one_line(res) if res else "(nothing)"
        out.append("| `%s` | %s | `%s` | %s | %s |" % (sig, desc, e.replace("|", "\\|"),
                   shown, "`%s`" % t if t != "-" else "—"))
    return "\n".join(out) + "\n"


def table_dtypes():
    rows = [
        ("bool with bool (`+ - * % **`)", "b = [true, false]", "b + b"),
        ("bool with int", "b = [true, false]; i = i32([1, 2])", "b + i"),
        ("i32 with i32", "i = i32([1, 2])", "i * i"),
        ("i32 with i64", "i = i32([1, 2]); j = i64([1, 2])", "i + j"),
        ("int with float", "i = i64([1, 2]); f = f32([1, 2])", "i + f"),
        ("f32 with f64", "f = f32([1, 2]); d = f64([1, 2])", "f + d"),
        ("i32 with an int literal (weak)", "i = i32([1, 2])", "i + 1"),
        ("i32 with a float literal (weak)", "i = i32([1, 2])", "i + 1.5"),
        ("i64 with a float literal (weak)", "j = i64([1, 2])", "j + 1.5"),
        ("f64 with a float literal (weak)", "d = f64([1, 2])", "d * 2.5"),
        ("int list literal", "", "[1, 2]"),
        ("float list literal", "", "[1, 2.5]"),
        ("`/` on i32", "i = i32([1, 2])", "i / 2"),
        ("`/` on i64", "j = i64([1, 2])", "j / 2"),
        ("`/` on bool", "b = [true, false]", "b / b"),
        ("comparison", "f = f32([1, 2])", "f < 2"),
        ("`exp` etc. on i32", "i = i32([1, 2])", "exp(i)"),
        ("`exp` etc. on i64", "j = i64([1, 2])", "sqrt(j)"),
        ("`abs relu sign round` on ints", "i = i32([1, -2])", "abs(i)"),
        ("`sum prod` of i32 / bool", "i = i32([1, 2])", "sum(i)"),
        ("`mean var std` of ints", "i = i32([1, 2])", "mean(i)"),
        ("`argmax argmin count`", "f = f32([1, 2])", "argmax(f)"),
        ("`max min` of i32", "i = i32([1, 2])", "max(i)"),
        ("`zeros ones rand randn`", "", "zeros(2)"),
        ("`iota`", "", "iota(2)"),
    ]
    types = dtypes([(s, e) for _, s, e in rows])
    out = ["| operands | expression | result type |", "|---|---|---|"]
    for (what, s, e), t in zip(rows, types):
        out.append("| %s | `%s%s` | `%s` |" % (what, (s + "; ") if s else "", e, t))
    return "\n".join(out) + "\n"


def table_precedence():
    rows = [
        ("`or`", "loosest", "true or false and false"),
        ("`and`", "", "true and not false"),
        ("`not`", "prefix", "not 1 < 2"),
        ("`== != < <= > >=`", "no chaining", "1 + 2 * 3 == 7"),
        ("`+ -`", "left", "7 - 2 - 1"),
        ("`* / % @`", "left", "2 * 3 % 4"),
        ("unary `-`", "prefix", "-2 ** 2"),
        ("`**`", "right", "2 ** 3 ** 2"),
        ("call `f(...)`, index `x[...]`", "postfix, tightest", "[10, 20, 30][1] * 2"),
    ]
    out = ["| operators | associativity | example | prints |", "|---|---|---|---|"]
    for ops, assoc, e in rows:
        out.append("| %s | %s | `%s` | `%s` |" % (ops, assoc, e, one_line(gk(e))))
    return "\n".join(out) + "\n"


def language_md():
    L = []
    w = L.append
    w("""<!-- generated by docs/gen_language.py from runs of build/gk; edit the generator, not this file -->
# The gk language

gk is a small, expression-oriented array language. A program is a sequence of
statements; each statement is parsed, checked (names, arities, dtypes and
shapes: before anything runs) and added to a lazy graph, which is fused into
as few kernels as possible when a value is needed. Every example below was run
with `gk --backend cpu -e '...'`; the output shown is what gk printed.

Contents: [statements](#statements) · [literals](#literals) ·
[operators](#operators-and-precedence) · [dtypes](#dtypes) ·
[broadcasting](#broadcasting-and-views) · [indexing](#indexing) ·
[functions](#functions) · [builtins](#builtins) · [printing](#printing) ·
[numeric semantics](#numeric-semantics) · [errors](#errors).
Limits are in [limits.md](limits.md); what fuses in [fusion.md](fusion.md).

## Statements

Statements are separated by newlines or `;` (CRLF line endings are fine);
`#` starts a comment that runs to the end of the line. There are three kinds:

| statement | does |
|---|---|
| `name = expr` | binds `name` to the value; prints nothing |
| `expr` | prints the value (nothing for `seed`, `save`, `print`) |
| `fn name(a, b) = expr` | defines a function (see [functions](#functions)) |

""")
    w(ex("x = [1, 2, 3]   # assigns, prints nothing\nx * 2           # prints\ny = x + 1; y"))
    w("""
Assignment binds the name to the value at that point: rebinding `a` later does
not change `b`. Names start with a letter or `_`; a builtin's or a function's
name cannot be used for a variable.

""")
    w(ex("a = [1, 2]; b = a; a = [5]; b"))
    w(err("sum = 3"))
    w("""
A statement that fails changes nothing: the variables are as they were before
it (the REPL goes on; a script stops at its first error with exit status 1).
Values are computed lazily, so the few errors that depend on the data are
checked when their statement runs: a data-dependent size (`filter`, `x[mask]`)
and a `hist` whose range comes from the data (no `lo`/`hi`, or computed ones)
are computed then, and such a statement fails where it stands, leaving the old
binding, instead of at the first later use. Ctrl-C (`gk_interrupt`) stops a
running statement the same way: it binds nothing.

An expression that spans lines must have an open bracket or end in an
operator on the line it breaks (the REPL then prompts `...`).

## Literals

| literal | example | type |
|---|---|---|
| integer | `3`, `-7` | i64, *weak* |
| float | `2.5`, `.5`, `5.`, `1e6`, `2E-3` | f32, *weak* (the text is kept exactly until the type is known) |
| bool | `true`, `false` | bool |
| string | `"file.npy"` | only as an argument of `load`, `save`, `loadtxt`, `savetxt` (file names, a delimiter, a .npz member name) and `print` |
| list | `[1, 2, 3]`, `[[1, 2], [3, 4]]` | i64 if all elements are ints, f32 if any is a float, bool if all are bools |

A *weak* literal takes its type from the other operand: `i32(x) + 1` stays
i32, `f64(x) * 2.5` stays f64 (see [dtypes](#dtypes)). Sizes accept integral
floats: `rand(1e6)`. Hex, underscores and integers that do not fit in i64 are
errors. A list may hold at most 64 elements per bracket level (see
[limits.md](limits.md)); build longer arrays with `iota`, `fill`, `reshape`,
`rand` or `load`.

""")
    w(ex("print(3, 2.5, .5, 5., 1e6, true, [1, 2], [1, 2.5], [[1, 2], [3, 4]])"))
    w(err("0x10"))
    w(err("[[1, 2], [3]]"))
    w("""
## Operators and precedence

Loosest first. Comparisons do not chain (`1 < 2 < 3` is a syntax error).

""")
    w(table_precedence())
    w("""
Arithmetic `+ - * / % **` and comparisons are elementwise and broadcast.
`/` always gives a float (true division). `%` is the floored modulo of
numpy and Python: the result has the sign of the divisor. `and`, `or`,
`not` need bool operands. `@` is the matrix product (vector @ vector is
`dot`; matrix @ vector and vector @ matrix as numpy). Of bools, `@` and
`dot` count, as `sum(a * b)` does: the result is i64 (numpy's is a bool,
true where any product is). An integer to a negative integer literal power
is an error, as in numpy.

""")
    w(ex("print(7 / 2, -7 % 3, 7 % -3, -7.5 % 2, 2.0 ** -1)"))
    w(ex("[[1, 2], [3, 4]] @ [[5, 6], [7, 8]]"))
    w(err("2 ** -1"))
    w(err("1.5 and true"))
    w("""
## Dtypes

Five dtypes: `bool`, `i32`, `i64`, `f32`, `f64`. The rules (from the top of
`compiler/build.c`):

- kinds are ordered bool < int < float; mixing kinds gives the higher kind;
- two ints give the wider int, two floats the wider float (f32 with f64 is f64);
- int with float gives the float's type (i64 with f32 is f32);
- an int becoming a float by itself (`/`, `exp`, `mean`, ...) gives f32 from
  bool or i32, f64 from i64;
- literals are weak: an int literal takes the other operand's int type, a
  float literal the other operand's float type (or the float that the int
  would become: `i64 + 1.5` is f64);
- bool with bool in arithmetic (`+ - * % **`) gives i64; `sum`/`prod`/`scan` of
  ints and bools accumulate in i64; `count`, `argmax`, `argmin`, `len`, `size`,
  `shape`, `iota` and `hist` give i64; comparisons give bool.

Each row below was checked by evaluating the expression and asking the C API
(`gk_shape`) for the result's type:

""")
    w(table_dtypes())
    w("""
`--plan` also shows every intermediate's type:

""")
    w(plan("i = i32([1, 2]); i + 1.5"))
    w("""
Casts (`f32 f64 i32 i64 bool`) convert as C does, with numpy's results:
floats truncate toward zero; values out of an int's range become its
minimum; nonzero is true.

""")
    w(ex("print(i32([1.7, -1.7]), i32(3e9), bool([0, 1, 2]), f32(1e40))"))
    w("""
## Broadcasting and views

Elementwise operators (and `where`, `maximum`, `minimum`, `clamp`, `pow`)
broadcast as numpy does: a scalar goes with any array, and a length-C vector
goes with each row of an R×C matrix (shapes are aligned at the right; a
dimension of 1 stretches).

""")
    w(ex("m = [[1.0, 2, 3], [4, 5, 6]]\nm * [1, 10, 100]"))
    w(err("m = [[1.0, 2, 3], [4, 5, 6]]\nm * [1, 10]"))
    w("""
`rows(m)` and `cols(m)` mark a matrix as a *view*: a set of rows (columns).
A reduction, scan or normalisation of `rows(m)` works on each row and gives
one value per row; on `cols(m)`, one per column. A length-R vector combined
with a `rows(m)` view is repeated along each row (one value per row), and a
length-C vector with a `cols(m)` view along each column. An elementwise
result of a view is a view of the same kind, so reductions of it are still
per row:

""")
    w(ex("m = [[1.0, 2, 3], [4, 6, 9]]\nsum(rows(m))\nmax(cols(m))\nrows(m) - mean(rows(m))\ncols(m) / [1, 10, 100]"))
    w(ex("m = [[1.0, 2], [3, 5]]\ne = exp(rows(m) - max(rows(m)))\ne / sum(e)           # a row softmax by hand"))
    w("""
Without the view, a length-R vector does not broadcast over an R×C matrix
(numpy's rule), and a rows view cannot meet a cols view:

""")
    w(err("m = [[1.0, 2, 3], [4, 5, 6]]\nm - mean(rows(m))"))
    w(err("m = [[1, 2], [3, 4]]\nrows(m) + cols(m)"))
    w(err("cols(iota(3))"))
    w("""
## Axes

Every reduction (`sum prod max min any all argmax argmin mean count norm var
std logsumexp`), `scan`, `exscan`, `softmax`, `logsoftmax`, `layernorm` and
`rmsnorm` takes `axis=k` (a keyword argument) on an array of any rank: the
operation runs along axis k, once for every position of the other axes, and
the result has numpy's shape (a reduction drops axis k; a scan or
normalisation keeps the shape). Negative k counts from the end; an axis out
of range is numpy's error. Of a matrix, `axis=1` is `rows(m)` and `axis=0`
is `cols(m)` (the same kernels); a vector's only axis is the whole array.
The sort family takes it too: `sort`, `argsort`, `topk`, `argtopk` keep the
shape (a top-k's axis k becomes k long), `median` and `quantile` drop axis
k; without `axis=`, `sort`/`argsort`/`topk` run along the last axis (numpy's
default) and `median`/`quantile`/`unique` take the flattened array.
`layernorm`'s `gamma`/`beta` and `rmsnorm`'s `gamma` have axis k's length.
`argmax`/`argmin` give the index along axis k.

""")
    w(ex("x = reshape(iota(24), 2, 3, 4)\nsum(x, axis=1)\nargmax(x, axis=0)\nshape(scan(x, axis=-1))\nmax(x, axis=-1)"))
    w(ex("softmax(reshape(f32(iota(8)), 2, 2, 2), axis=0)"))
    w(err("x = reshape(iota(6), 2, 3)\nmean(x, axis=2)"))
    w(err("m = [[1, 2], [3, 4]]\nsum(rows(m), axis=0)"))
    w("""
## Indexing

| form | gives |
|---|---|
| `x[i]` | element i; negative i counts from the end |
| `x[a:b]`, `x[a:b:s]`, `x[:]`, `x[::-1]` | a slice, numpy's rules (bounds clamp, step may be negative, not 0) |
| `m[i]` | row i of a matrix |
| `m[i, j]`, `m[i, a:b]`, `m[:, j]` | one index or slice per axis |
| `x[mask]` | `filter(x, mask)` for a bool array of x's shape |
| `x[idx]`, `m[idx]` | gather: for an integer array idx (any shape), the entries of x's first axis at idx -- elements of a vector, rows of a matrix; the result's shape is idx's followed by x's other dims; negative entries count from the end |

Indices and slice bounds must be integers. An index array is checked before
anything runs: an entry out of range is an error naming the first one and
its position in idx. A gather fuses with what produces x and idx and with
what reads the result (it is an index map, like a view).

""")
    w(ex("x = iota(10)\nprint(x[2], x[-1], x[2:8:2], x[::-1], x[7:100])\nx[x % 3 == 0]"))
    w(ex("m = reshape(iota(6), 2, 3)\nprint(m[1], m[1, 2], m[-1, 0:2], m[:, 1])"))
    w(err("x = [1, 2, 3]\nx[5]"))
    w(err("x = iota(5)\nx[1.5]"))
    w(ex("x = iota(10) * 10\nm = reshape(iota(6), 3, 2)\nprint(x[[0, -1, 3]], take(m, [5, 0]))\nm[[2, 0]]"))
    w(err("x = iota(5)\nx[[1, 7, 2, 9]]"))
    w("""
## Functions

`fn name(params) = expr` defines a function of up to 16 parameters. A call
is inlined into the caller's graph (so fusion crosses it); arguments may be
given by keyword after the positional ones. A function sees its parameters,
the global variables (as they are when it is called) and other functions;
recursion is an error; defining a function again replaces it; a builtin's
name cannot be reused.

""")
    w(ex("fn rms(a) = sqrt(mean(a * a))\nfn axpy(a, x, y) = a * x + y\nrms([3.0, 4.0])\naxpy(2, [1, 2], y=10)"))
    w(err("fn h(x) = h(x)"))
    w(err("fn f(a, b) = a + b\nf(1)"))
    w("""
## Builtins

Every builtin of `compiler/build.c`'s table, with the example's printed
result (a matrix is printed one row per line; here it is joined on one line)
and its type as `gk_shape` reports it. Builtins take keyword arguments after
the positional ones, by the names in the signature (`layernorm(x,
eps=1e-6)`, `scan(x, op=max)`). The reductions, scans and normalisations
work on the whole array (a matrix is read in C order; `scan` of a matrix
scans it flattened), or per row / column of a `rows(m)` / `cols(m)` view,
or along `axis=k` of any rank (see Axes).
""")
    w(table_builtins())
    w("""
Notes:

- `rand`/`randn` draw from a counter-based stream: element k of the stream
  depends only on the seed and k, so the numbers are the same on every
  backend and machine. The seed is 0 until `seed(s)` is called; each call
  of `rand`/`randn` continues the stream where the previous one stopped.
- `exscan` starts at the identity of its operator: 0 for sum, 1 for prod,
  the dtype's lowest value for max and highest for min.
- `layernorm` and `rmsnorm`: `gamma` and `beta` run along the normalised
  axis: per column of `rows(m)`, per row of `cols(m)`.
- `hist` with no range uses [min(x), max(x)]; values outside `[lo, hi]` are
  ignored; the last bin includes `hi`.
- `bincount` with weights gives the weights' float type (f32 weights sum to
  f32, accumulated in double; numpy always gives f64); ints and bools as
  weights become floats (i32/bool f32, i64 f64). Counts are exact; weighted
  sums are in index order, so run to run identical (no float atomics), with
  work proportional to bins x elements.
- `concat` and `stack` follow numpy's shape rules and error messages, and
  promote their operands' dtypes like a binary operator. Empty parts add
  nothing. The joined array is an index map: `sum(concat(a, b))` or
  `concat(a, b) * 2` reads a and b where they are, without building the
  joined array first.
- `transpose`, `permute`, slices and `rows`/`cols` are views: no copy is made
  until a kernel reads them.
- Scans, normalisations and reductions of views:

""")
    w(ex("m = [[1, 2, 3], [4, 5, 6]]\nscan(rows(m))\nscan(cols(m))\nargmax(rows(m))\nsoftmax(cols(f32(m)))"))
    w(ex("layernorm(rows([[1.0, 2, 3], [2, 4, 8]]), [1.0, 1, 2], [0.0, 0, 1], eps=0)"))
    w(ex("exscan([3, 1, 4], min)\nexscan([3.0, 1, 4], max)"))
    w(ex("x = [1.0, 2, 2, 3, 3, 3]\nhist(x, 3)\nhist(x, 2, 0, 2)"))
    w("""
### Charts

`plot(x)` draws a column chart of a vector, `plot(x, y)` a scatter, each as
wide as the terminal (75 columns when the output is not one). On a
terminal the chart uses Unicode block characters, and a printed `hist(...)`
result is followed by a bar per bin; piped, or with `NO_COLOR` set, charts
are plain ASCII and `hist` prints its counts only. Through the C API there
are no hist charts unless the context's `charts` option asks
(`gk_option(g, "charts", 2)`); this is the ASCII form:

""")
    w(ex("plot(sin(iota(60) / 6))"))
    w("""
## Printing

Values print as `numpy.array2string` prints them with precision 6,
threshold 1000, edge items 3 and line width 75, except that booleans are
`true`/`false`. Scalars print with up to 6 significant digits (`%.6g`), with
`.0` added to a float that would otherwise look like an int. Arrays share one
format per array (so columns line up); matrices print one row per line,
higher ranks as numpy does; an array of more than 1000 elements is
summarised with `...`. The precision is numpy's print option: `GK_DIGITS=N`
in the environment or `:digits N` in the REPL (1 to 17; the C API's
`digits` option) sets it; in the REPL the line width follows the terminal
(the `linewidth` option), and `_` is the last value printed.

""")
    w(ex("print(1.0, 45.0, 0.1 + 0.2, 1.0 / 3, 1e6, 1234567.0, 0.00001, -0.0, 0/0, -1/0)"))
    w(ex("[0.5, 1, 100]\n[0.00001, 1]\n[true, false]\niota(2000)"))
    w(ex("reshape(iota(8), 2, 2, 2)"))
    w("""
## Numeric semantics

- **Floats** are IEEE: `1/0` is `inf`, `0/0` is `nan`; integer division by
  zero (`%`) gives 0 as numpy does (without its warning).
- **NaN** propagates through `sum`, `max`, `min` (a NaN anywhere gives NaN);
  `argmax`/`argmin` return the index of the first NaN.
- **Empty arrays**: `sum` is 0, `prod` is 1, `mean` is `nan`, `count` is 0;
  `max`, `min`, `argmax` and `argmin` of an empty array are errors that say
  so. `softmax`/`layernorm`/`rmsnorm` of an empty array give an empty array.
- **Accuracy**: float32 reductions use pairwise or blocked summation (as
  numpy), accurate to about 1e-6 relative; scans to about 1e-4 relative (a
  float32 running sum). `var`/`std` are population statistics (ddof=0);
  as numpy's, they are NaN where the data holds an inf or a NaN.
- **Determinism**: the same program on the same backend gives bit-identical
  results run after run, for any thread count (no floating-point atomics in
  a result's path). The cpu and cuda backends agree within the tolerances
  above; `rand`/`randn` agree exactly.

""")
    w(ex("x = [1.0, 0/0, 3]\nprint(sum(x), max(x), argmax(x))\nprint(sum(zeros(0)), prod(zeros(0)), mean(zeros(0)), count(zeros(0)))"))
    w(err("max(zeros(0))"))
    w(ex("print(1 / 0, 0 / 0, i32(7) % 0, 7 % 0)"))
    w("""
## Errors

An error is reported as `FILE:LINE:COL: error: message`, then the source line
and a caret under the column of the token it is about. `FILE` is the script's
path as given, `<expr>` for `-e`, `<stdin>` for the REPL and standard input.
Errors go to standard error; the exit status is 1 (2 for bad usage of the
command line). A statement's names, dtypes and shapes are checked before
any of its work is queued, so a shape or type error leaves nothing behind.

""")
    src = "x = [1, 2, 3]\ny = x + [1, 2]"
    open(os.path.join(TMP, "bad.gk"), "w").write(src + "\n")
    w(block("$ cat bad.gk\n%s\n$ gk bad.gk" % src, gk(args=("bad.gk",), expect_ok=False), lang="sh"))
    w("""
More messages (each from a real run):

""")
    for e in ["q + 1", "sum(1, 2)", "clamp([1, 2])", "[1, 2] or [true, false]", "softmax([1.0], eps=1)",
              "scan([1, 2], foo)", "filter([1, 2], [1, 0])", "reshape(iota(6), 4)", "load(\"nope.npy\")",
              "x = (1 + 2"]:
        w("- `%s` → `%s`\n" % (e.replace("`", ""), gk(e, expect_ok=False).split("\n")[0]))
    return "".join(L)


# ---------------------------------------------------------------- limits
def define(path, name):
    txt = open(os.path.join(ROOT, path)).read()
    m = re.search(r"^#define[ \t]+%s[ \t]+(.*?)[ \t]*(/\*(.*?)\*/)?[ \t]*$" % name, txt, re.M)
    if not m:
        sys.exit("gen_language: %s not found in %s" % (name, path))
    return m.group(1).strip(), (m.group(3) or WHY.get(name, "")).strip()


# Reasons for the limits whose #define has no comment beside it.
WHY = {"GK_MAX_DIMS": "rank of an array: shapes are fixed arrays in the API (gk_shape) and the IR",
       "CLI_MAX_EXPRS": "`-e` texts kept in a fixed array of the command line's options"}


def value(v):
    """The number a #define's text stands for."""
    e = re.sub(r"\((?:int64_t|size_t|uint64_t)\)", "", v)
    e = re.sub(r"(\d+)u\b", r"\1", e).replace("LANG_MAX_DEPTH", define("lang/ast.h", "LANG_MAX_DEPTH")[0])
    try:
        n = eval(e, {})
    except Exception:
        return v
    return "%d" % n if str(n) != v else v


def first_error(out):
    for line in out.split("\n"):
        if "error:" in line or line.startswith("gk:"):
            return re.sub(r"a{20,}", "aaa…", line)
    return out.split("\n")[0]


def limits_md():
    big = os.path.join(TMP, "big.gk")
    with open(big, "w") as f:
        f.write("x = 1\n" + "#" * (64 << 20) + "\n")
    many = os.path.join(TMP, "vars.gk")
    with open(many, "w") as f:
        f.write("\n".join("v%d = 1" % i for i in range(100001)) + "\n")
    hdr = "bighdr.npy"
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }" + " " * (1 << 20) + "\n"
    with open(os.path.join(TMP, hdr), "wb") as f:
        f.write(b"\x93NUMPY\x02\x00" + len(h).to_bytes(4, "little") + h.encode() + b"\0" * 4)

    def dbl(n):
        return "; ".join(["fn g0(x) = x + 1"] + ["fn g%d(x) = g%d(x) + g%d(x)" % (i, i - 1, i - 1) for i in range(1, n + 1)]) + "; g%d(1)" % n

    def inl(n):
        return "; ".join(["fn g0(x) = x + 1"] + ["fn g%d(x) = g%d(x) + 1" % (i, i - 1) for i in range(1, n)]) + "; g%d(1)" % (n - 1)

    R = []   # (macro, file, repro text, gk output or None)

    def lim(name, path, repro=None, src=None, args=None, note=None):
        val, why = define(path, name)
        out = None
        if src is not None or args is not None:
            out = first_error(gk(src, args=args or (), expect_ok=False))
        R.append((name, path, val, why, repro, out, note))

    lim("LANG_MAX_SOURCE", "lang/ast.h", "a 64 MiB + 7 byte script `big.gk`", args=("big.gk",))
    lim("LANG_MAX_DEPTH", "lang/ast.h", "201 nested parentheses `((...(1)...))`", src="(" * 201 + "1" + ")" * 201)
    lim("LANG_MAX_TREE", "lang/parse.h", "`1+1+...+1` with 600 terms", src="+".join(["1"] * 600))
    lim("LANG_MAX_ARGS", "lang/ast.h", "`print(1, 1, ..., 1)` with 65 arguments", src="print(" + ",".join(["1"] * 65) + ")")
    with open(os.path.join(TMP, "list.gk"), "w") as f:
        f.write("x = [" + ",".join(["1"] * 1048577) + "]\n")
    lim("LANG_MAX_LIST", "lang/ast.h", "`x = [1, 1, ..., 1]` with 1048577 elements, a script `list.gk`", args=("list.gk",),
        note="A row longer than this is refused by the parser; the checker counts every element of a nested list "
             "against the same number.")
    lim("LANG_MAX_PARAMS", "lang/ast.h", "`fn f(a0, ..., a16) = a0`",
        src="fn f(" + ",".join("a%d" % i for i in range(17)) + ") = a0")
    lim("SHOW_MAX", "lang/tree.c", "an unexpected 55-letter name", src="x = 1 " + "b" * 55,
        note="Not a limit on programs: a token quoted in a message is cut to this many bytes and `...`.")
    lim("GK_MAX_DIMS", "gk.h", "`zeros(1,1,1,1,1,1,1,1,1)`", src="zeros(1,1,1,1,1,1,1,1,1)")
    lim("RT_MAX_ELEMENTS", "runtime/rt.h", "`zeros(1048576, 1048576)`", src="zeros(1048576, 1048576)",
        note="One helper (`rt_shape_count`) checks it wherever a shape is made: constructors, broadcasts, `@`, "
             "`reshape`, `load`, `gk_set` and `gk_from_dlpack` (which answer GK_ELIMIT with the same words).")
    R.append(("RT_MAX_ELEMENTS", "runtime/rt.h", define("runtime/rt.h", "RT_MAX_ELEMENTS")[0], "(the same limit, for a broadcast)",
              "`ones(1, 4294967296) + ones(4294967296, 1)`", first_error(gk("ones(1, 4294967296) + ones(4294967296, 1)", expect_ok=False)), None))
    R.append(("RT_MAX_ELEMENTS", "runtime/rt.h", define("runtime/rt.h", "RT_MAX_ELEMENTS")[0], "(the same limit, for an empty array: empty dimensions count as 1)",
              "`zeros(0, 17179869185)`", first_error(gk("zeros(0, 17179869185)", expect_ok=False)), None))
    lim("CC_MAX_EVAL_DEPTH", "compiler/build.c", None,
        note="The checker's recursion depth. The parser's depth limits keep a single expression under it; "
             "nested user functions are stopped earlier by CC_MAX_INLINE_DEPTH (below).")
    lim("CC_MAX_INLINE_DEPTH", "compiler/cc.h", "400 user functions each calling the previous one", src=inl(400),
        note="User functions are inlined at each call; the error points at the call that would nest too deep.")
    lim("CC_MAX_STEPS", "compiler/cc.h", "`g60(1)` where each `g`i calls `g`(i-1) twice", src=dbl(60),
        note="The total work of checking one statement (each user-function call is expanded where it is made, "
             "so a function calling the previous one twice doubles it per level); the depth limit above "
             "does not bound it.  An interrupt while expanding returns GK_EINTERRUPT and binds nothing.")
    lim("CC_MAX_VARS", "compiler/cc.h", "a script `vars.gk` assigning `v0` ... `v100000`", args=("vars.gk",))
    lim("CC_MAX_PENDING", "compiler/cc.h", None,
        note="Not an error: when a statement leaves more pending nodes than this, they are computed at its end.")
    lim("CC_PLAN_CACHE", "compiler/cc.h", None,
        note="Not an error: the plans of the last this-many graph shapes are kept per context for reuse.")
    lim("CC_MAX_FUSE_DEPTH", "compiler/cc.h", None,
        note="Not an error: a longer elementwise chain is cut into several kernels.")
    lim("CC_MAX_FUSE_COST", "compiler/cc.h", None,
        note="Not an error: a pending elementwise chain whose estimated compile cost passes it is cut into "
             "several kernels (the node that passes it is computed into memory, and its consumers read it). "
             "NVRTC time grows faster than the code: 100 chained `sin` were one 131 s kernel, now 17 kernels "
             "of at most 6. An operand shared by several uses counts once per use, so chains that reuse a "
             "costly value (`x = sin(x) + cos(x)` repeated) are cut sooner than the code they generate would need.")
    lim("CC_MAX_VIEW_PATHS", "compiler/cc.h", None,
        note="Not an error: a fused value read under more distinct chains of views than this (`x = x[1:] + x[:-1]` "
             "repeated) is computed into memory once instead of being inlined into the kernel once per chain.")
    lim("NPY_MAX_HEADER", "runtime/host.h", "`load` of a .npy file with a 1 MiB + 58 byte header",
        src='load("%s")' % hdr)
    lim("NPY_PATH_MAX", "runtime/host_npy.c", "`save` to a 4109-byte path", src='save("/tmp/%s.npy", [1])' % ("a" * 4100),
        note=None)
    lim("FMT_MAX_BYTES", "runtime/host.h", None,
        note="Not reachable from the language: arrays over 1000 elements print summarised.")
    lim("PAR_MAX_THREADS", "runtime/host.h", None, note="`GK_THREADS` above it is clamped to it; no error.")
    lim("PAR_MAX_CHUNKS", "runtime/host.h", None, note="Tuning: no error.")
    lim("CPU_CHUNK", "runtime/cpu.c", None, note="Tuning: no error.")
    lim("CPU_MEMO", "runtime/cpu.c", None, note="Tuning: no error.")
    lim("CPU_ARENA_BLOCK", "runtime/cpu.c", None, note="Tuning: no error.")
    lim("CU_ALLOC_MIN", "runtime/cu.h", None, note="cuda backend allocator; no error.")
    lim("CU_ALLOC_SMALL_MAX", "runtime/cu.h", None, note="cuda backend allocator; no error.")
    lim("CU_ALLOC_LARGE_GRAIN", "runtime/cu.h", None, note="cuda backend allocator; no error.")
    lim("CU_ALLOC_LARGE_SLACK", "runtime/cu.h", None, note="cuda backend allocator; no error.")
    lim("CU_CACHE_MAX_ENTRY", "runtime/cu.h", None, note="A bigger kernel is simply not cached on disk; no error.")
    lim("CU_PATH_MAX", "runtime/cu.h", None, note="A longer cache directory means no disk cache; no error.")
    lim("CLI_MAX_EXPRS", "cli/main.c", "257 `-e` options", args=tuple(["-e", "1"] * 257))
    lim("CLI_HISTORY_MAX", "cli/repl.c", None, note="Older REPL history entries are dropped; no error.")
    lim("API_MSG", "api/api.c", None, note="A longer error message is truncated.")

    out = ["""<!-- generated by docs/gen_language.py from runs of build/gk; edit the generator, not this file -->
# gk limits

Every named limit in gk, its value, why it is there, and what you get when
you exceed it. Values are read from the `#define`s; messages are the first
line of what `gk --backend cpu` printed (the source line and caret that follow
are left out; very long names are shortened to `aaa…`). Limits that cannot be
exceeded from a program, or that only tune performance, are listed with
what happens instead.

| limit | value | where | why (the comment beside it) |
|---|--:|---|---|
"""]
    seen = set()
    for name, path, val, why, repro, msg, note in R:
        if name in seen:
            continue
        seen.add(name)
        out.append("| `%s` | %s | `%s` | %s |\n" % (name, value(val), path, why.replace("|", "\\|") or "—"))
    out.append("\n## What exceeding each one does\n\n")
    for name, path, val, why, repro, msg, note in R:
        out.append("### `%s` = %s\n\n" % (name, value(val)))
        if repro:
            out.append("Exceeded by %s:\n\n```text\n%s\n```\n\n" % (repro, msg))
        if note:
            out.append("%s\n\n" % note)
    out.append("""## Boundaries that work

Each of these is exactly at a limit and runs:

""")
    for desc, src in [("200 nested parentheses", "(" * 200 + "1" + ")" * 200),
                      ("64 call arguments", "print(" + ",".join(["1"] * 64) + ")"),
                      ("a 64-element list", "size([" + ",".join(["1"] * 64) + "])"),
                      ("16 parameters", "fn f(" + ",".join("a%d" % i for i in range(16)) + ") = a0; f(" + ",".join(["1"] * 16) + ")"),
                      ("8 dimensions", "shape(zeros(1, 1, 1, 1, 1, 1, 1, 2))")]:
        o = one_line(gk(src))
        out.append("- %s: prints `%s`\n" % (desc, o if len(o) < 40 else o[:20] + " ..."))
    return "".join(out)


# ---------------------------------------------------------------- fusion
def fusion_md():
    head = open(os.path.join(ROOT, "compiler/fuse.c")).read().split("*/")[0]
    rules = "\n".join(l[3:] if l.startswith("** ") else l[2:] for l in head.split("\n")[1:])
    tests = []
    pdir = os.path.join(ROOT, "tests/plan")
    for f in sorted(os.listdir(pdir)):
        if f.endswith(".gk"):
            t = open(os.path.join(pdir, f)).read().split("\n")
            k = [l for l in t if "expect kernels" in l]
            tests.append("| `%s` | %s | %s |" % (f, t[0].lstrip("# "), k[0].split(":")[1].strip() if k else "?"))
    L = ["""<!-- generated by docs/gen_language.py from runs of build/gk; edit the generator, not this file -->
# What fuses in gk

gk never runs an operation on its own if it can help it. Statements add
nodes to a lazy graph; when a value is needed (printed, saved, read by
`gk_get`, a data-dependent size such as `filter`'s), the pending graph is cut
into *groups*, and each group runs as one kernel that instantiates a
primitive from `kernels/` (`map`, `grid_reduce`, `row_kernel`,
`lookback_scan`, `select`, `histogram`, `gemm`, `tiled_transpose`, `radix_sort`) with
generated load, combine and store code. The cpu backend runs the same
groups, so `--plan` means the same on both backends.

## Reading `--plan`

`gk --plan` prints one block per kernel launched, then `kernels: N`:

```text
kernel 1: reduce (grid_reduce)      <- group kind (primitive)
  in: -                             <- values already computed that it reads ('-': none)
  %2 = rand : f32[1000]             <- the fused nodes, in order, with dtype and shape
  %3 = mul %2 %2 : f32[1000]
  %4 = sum %3 : f32[]
  out: %4                           <- values it writes
```

Node names are `%id`; a constant operand prints as its value (`div %4 1000`),
a broadcast constant as `fill v`, a broadcast or sliced array as `view`, a
cast as its dtype, a per-row/per-column reduction as `sum.rows` / `sum.cols`.

## The rules

From the comment at the top of `compiler/fuse.c`:

```text
""" + rules.strip("\n") + """
```

In words:

1. **Elementwise ops never get a kernel of their own** (when fusion is on):
   each is inlined into every group that reads it. A chain of maps feeds a
   reduction's loads, or a scan's, filter's or histogram's; a chain after a
   reduction runs in its epilogue. Recomputing a cheap map in two kernels is
   cheaper than a round trip through memory.
2. **Row patterns**: a matrix result whose pending anchors are all row (or
   column) reductions of its own shape joins them in one row kernel: the row
   is loaded once, reduced (several times if needed), and the map that uses
   the reductions is applied and stored. That is softmax, logsoftmax,
   layernorm, rmsnorm, and the same forms written by hand.
3. **Whole-array reductions of one length** join: a scalar computed from
   several reductions of one input (`sum(exp(x - max(x)))`, `mean`/`var`,
   `norm`) runs as one reduction kernel with an epilogue; independent
   reductions of one length merge horizontally (min, max and sum in one
   pass).
4. **Scan epilogues**: a map of a scan's shape that reads the scan at the
   same index (no view in between) runs in the scan's store: `scan(x * x) *
   2 + 1` and `exp(scan(rows(m)) * 0.01)` are one kernel each.
5. **`filter`** is one kernel of predicate, scan and scatter into a buffer
   of the input's length; its length is the count the kernel leaves (read
   back: the statement's one sync), and its value is that prefix of the
   buffer (copied out when it holds at most a quarter of it and the rest is
   4 MiB or more).
6. **Gather and concat are index maps**: `x[idx]` / `take` and `concat` /
   `stack` are, like a view, evaluated inside whatever kernel reads them:
   the producers of x and idx (or of each part) are inlined at the gathered
   (concatenated) index, and the consumer -- a map, a reduction, a scan's
   prologue -- reads the gathered or joined value without it being
   materialised. The index check of a gather is one reduction kernel (min
   and max of idx) before the gather runs. `bincount` counts run on the
   histogram primitive; weighted sums are a row kernel (one row per bin).
7. **`axis=k`** is not an op of its own: the checker moves axis k into a
   matrix view -- `rows()` of a reshape when k is the last axis, `cols()` of
   a reshaped permuted view otherwise -- so a reduction, scan or
   normalisation along any axis of any rank fuses exactly as `rows(m)` /
   `cols(m)` do (softmax along axis 1 of a 3-d array is one row kernel),
   and the producer's maps go into its loads through the view.
8. **Sorts** (`sort`, `argsort`, `topk`, `argtopk`, and the sorts inside
   `unique`, `median`, `quantile`; `searchsorted`) are one group each,
   kind `sort`, several launches when a segment is longer than one block
   (radix passes). The elementwise producer of the sorted array runs in
   the sort's loads (`sort(x * 2)` reads x, never a temporary x * 2);
   consumers read the sorted result: `median` and `quantile` are views of
   it plus a scalar epilogue map, `unique` a run mask then a `filter`.

What does **not** fuse, and why:

- Two heavy ops in a chain: a reduction feeding a scan, a scan feeding a
  reduction (`sum(scan(x))`), a matmul feeding a reduction. Each heavy op is its own anchor
  and a kernel has one primitive; the maps between them go into the
  consumer's loads (`sum(relu(m @ w))` is a gemm, then a reduction that
  applies `relu` as it loads).
- Reductions over different lengths, or a row reduction with a whole-array
  reduction (`sum(rows(m)) + sum(m)` is three kernels): they need different
  launch shapes.
- A value read by a *later* statement after it was printed: it was computed
  then (and is not recomputed).
- Anything across a statement that forces evaluation (print, `save`, a
  `filter` whose count is needed, a scalar argument such as `rand(n)`'s n).
- A value printed before its sibling exists: `mean(x)` then `var(x)` as two
  expression statements is two kernels, because the first is printed (so
  computed) before the second statement is read; `print(mean(x), var(x))`,
  or `s = mean(x); v = var(x)` printed afterwards, is one.
- With `--no-fusion` or `GK_FUSION=0`, every op is its own kernel.

Plans are remembered: the planner keys each plan by the shape of the pending
graph (ops, dtypes, shapes, constants; not the data or random seeds), so a
statement re-run on new data -- a `gk_step` loop, a repeated REPL line --
reuses its groups and lowered kernels without planning again
(`GK_PLAN_CACHE=0` turns this off).

## Examples

Every plan below is real `gk --backend cpu --plan` output.

### `softmax(rows(m))`: one row kernel

The builtin expands to max, subtract, exp, sum and divide; the maximum is made
safe (a row of `-inf` gives 0, not NaN). All of it is one row kernel:

"""]
    L.append(plan("seed(0); m = randn(2, 4); softmax(rows(m))"))
    L.append("""
The same by hand is the same kernel (`e` is consumed by both the row sum and
the division, inside one row kernel; without the `isfinite` guard the
builtin adds):

""")
    L.append(plan("seed(0); m = randn(2, 4); e = exp(rows(m) - max(rows(m))); e / sum(e)"))
    L.append("""
### `sum(x*y + 1)`: a map chain inside a reduction

""")
    L.append(plan("seed(0); x = rand(100000); y = rand(100000); sum(x*y + 1)"))
    L.append("""
### `mean(x)` and `var(x)`: siblings in one pass

Asked for together they share a kernel; as two printed statements they are
two:

""")
    L.append(plan("seed(0); x = randn(100000); print(mean(x), var(x))"))
    L.append(plan("seed(0); x = randn(100000); mean(x)\nvar(x)"))
    L.append("""
### `sum(exp(x - max(x)))`: one pass with online rescaling

""")
    L.append(plan("seed(0); x = randn(100000); logsumexp(x)"))
    L.append("""
### `filter(x*2, x > 0)`: one pass

The select kernel computes the predicate and values and compacts them into
a buffer of the input's length (the plan shows that capacity, f32[100000]);
the count of selected elements it leaves, read back, is the result's length
(49654 here). Slicing the result for printing is a second, tiny map.

""")
    L.append(plan("seed(0); x = randn(100000); f = filter(x*2, x > 0); f[0:4]"))
    L.append("""
### `sort(x * 2)` and `median(x)`: the map in the sort's loads

""")
    L.append(plan("seed(0); x = randn(100000); s = sort(x * 2); s[0:2]"))
    L.append(plan("seed(0); x = randn(1001); median(x)"))
    L.append("""
### Without fusion

For comparison, `--no-fusion` on `sum(x*y + 1)`:

""")
    L.append(plan("seed(0); x = rand(1000); y = rand(1000); sum(x*y + 1)").replace("--plan", "--plan --no-fusion")
             if False else block("$ gk --plan --no-fusion -e 'seed(0); x = rand(1000); y = rand(1000); sum(x*y + 1)'",
                                 gk("seed(0); x = rand(1000); y = rand(1000); sum(x*y + 1)", args=("--plan", "--no-fusion")),
                                 lang="sh"))
    L.append("""
## The plan tests

`tests/plan/*.gk` pin these plans down (`make test` runs them through
`tests/run_plan.py`):

| test | what | kernels |
|---|---|---|
""")
    L.append("\n".join(tests) + "\n")
    return "".join(L)


def main():
    check = "--check" in sys.argv
    if not os.access(GK, os.X_OK):
        sys.exit("gen_language: %s not built (run make)" % GK)
    docs = {"docs/language.md": language_md(), "docs/limits.md": limits_md(), "docs/fusion.md": fusion_md()}
    docs["docs/help.txt"], missing = help_txt()
    bad = 1 if missing and check else 0   # counted as a failed file; the names were printed
    for path, text in docs.items():
        full = os.path.join(ROOT, path)
        old = open(full).read() if os.path.exists(full) else None
        if old == text:
            continue
        if check:
            print("%s is out of date (run: python3 docs/gen_language.py)" % path)
            bad += 1
        else:
            open(full, "w").write(text)
            print("wrote %s" % path)
    if check:
        print("%d passed, %d failed" % (len(docs) - bad, bad))
    sys.exit(bad)


if __name__ == "__main__":
    main()
