#!/usr/bin/env python3
"""Generates the golden scripts under tests/gk/ (python3 + numpy).

Every expected value below is computed here with numpy (or is hand
arithmetic written out), then rendered with the print format the team fixed:

  arrays   numpy.array2string(a, precision=6, threshold=1000, edgeitems=3,
           max_line_width=75), booleans as true/false padded like True/False
  scalars  ints as ints, bools true/false, floats '%.6g' plus '.0' when the
           text has no '.', 'e', 'inf' or 'nan'

dtype rules (team): int literals i64 weak, float literals f32 weak; iota i64;
rand/randn/zeros/ones f32; int->float conversion gives f32 for bool/i32 and
f64 for i64; int op float gives the float's type; f32 op f64 gives f64.

The generated .gk files are committed; gk's output is never used here.
Run:  python3 tests/gen_golden.py          (rewrites tests/gk/**)
      python3 tests/gen_golden.py --check  (only reports fragile expectations)
"""
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gk")

B, I32, I64, F32, F64 = np.bool_, np.int32, np.int64, np.float32, np.float64
NAN, INF = float("nan"), float("inf")

# ---------------------------------------------------------------- formatting


def fmt_scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if v != v:
        return "nan"
    s = "%.6g" % v
    if not any(c in s for c in (".", "e", "inf", "nan")):
        s += ".0"
    return s


def fmt_array(a):
    s = np.array2string(a, precision=6, threshold=1000, edgeitems=3,
                        max_line_width=75)
    if a.dtype == np.bool_:
        s = s.replace("True", "true").replace("False", "false")
    return s.split("\n")


def fmt(v):
    if isinstance(v, str):
        return v.split("\n")
    if isinstance(v, np.ndarray) and v.ndim > 0:
        return fmt_array(v)
    if isinstance(v, np.ndarray):
        v = v[()]
    return [fmt_scalar(v)]


FRAGILE = []


def fragile_check(name, v):
    """A float expectation is fragile when a 1-ulp change alters its text."""
    if isinstance(v, str) or isinstance(v, (bool, np.bool_, int, np.integer)):
        return
    a = np.asarray(v)
    if a.dtype.kind != "f":
        return
    base = fmt(v)
    # values with short binary fractions (0, 1.5, 2^k) come out exact
    simple = ~np.isfinite(a) | (np.round(a.astype(F64) * 4096) == a.astype(F64) * 4096)
    for d in (np.inf, -np.inf):
        b = np.nextafter(a, np.array(d, dtype=a.dtype)).astype(a.dtype)
        b = np.where(simple, a, b)
        if a.ndim == 0:
            b = b.astype(a.dtype)[()]
        if fmt(b) != base:
            FRAGILE.append(name)
            return

# ---------------------------------------------------------------- helpers


def L(x):
    """The array a gk literal [...] makes: bool, else f32 if any float, else i64."""
    a = np.array(x)
    if a.dtype == np.bool_:
        return a
    if a.dtype.kind == "f":
        return a.astype(F32)
    return a.astype(I64)


def s32(x):
    return F32(x)


def s64(x):
    return F64(x)


def lit(x):
    """gk source text for the f32 literal of array x."""
    x = np.asarray(x)
    if x.ndim == 0:
        return repr(float(x))
    return "[" + ", ".join(lit(e) for e in x) + "]"


def round4(y):
    """What gk computes for round(y * 10000) / 10000 in f32."""
    y = np.asarray(y, F32)
    return (np.round(y * F32(10000)) / F32(10000)).astype(F32)


def robust_input(f, shape, seed, ulps=3, lo=-12, hi=13, scale=0.25, nonzero=False, post=None):
    """Picks f32 input from a grid whose f32 result f(x) (computed in f64,
    rounded to f32) prints the same text within +-ulps at every element, so
    that an implementation accurate to a few ulps must print exactly it."""
    rng = np.random.default_rng(seed)
    for _ in range(20000):
        x = (rng.integers(lo, hi, shape) * scale).astype(F32)
        if nonzero and (x == 0).any():
            continue
        y = np.asarray(f(x.astype(F64))).astype(F32)
        pp = post or (lambda v: v)
        base = fmt(pp(y))
        ok = True
        for d in (np.inf, -np.inf):
            z = y
            for _ in range(ulps):
                z = np.nextafter(z, np.array(d, F32)).astype(F32)
                if fmt(pp(z)) != base:
                    ok = False
                    break
            if not ok:
                break
        if ok:
            return x, pp(y)
    raise RuntimeError("no robust input")


CASES = []   # (relpath, text)


def _write(path, desc, src, header):
    lines = ["# " + d for d in desc.split("\n")] + header
    text = "\n".join(lines) + "\n" + src
    if not src.endswith("\n"):
        pass
    CASES.append((path, text))


def case(path, desc, src, *outs, crlf=False, final_newline=True):
    """src runs and prints exactly outs (each an array, scalar or raw text)."""
    if src.startswith("R(") and src.endswith(")"):
        # R(...): print the last statement rounded to 4 decimals (see round4)
        lines = src[2:-1].split("\n")
        lines[-1] = "round(%s * 10000) / 10000" % lines[-1]
        src = "\n".join(lines)
    header = []
    for i, o in enumerate(outs):
        fragile_check(path + "#%d" % i, o)
        for l in fmt(o):
            header.append("# expect: " + l if l else "# expect:")
    if final_newline and not src.endswith("\n"):
        src += "\n"
    if crlf:
        hdr = ["# " + d for d in desc.split("\n")] + header
        text = "\r\n".join(hdr) + "\r\n" + src.replace("\n", "\r\n")
        CASES.append((path, text))
        return
    _write(path, desc, src, header)


def err(path, desc, src, line, col, msg, outs=(), caret=False, final_newline=True):
    """src fails at (line, col) of src (1-based) with msg; outs printed before."""
    name = os.path.basename(path) + ".gk"
    header = []
    for o in outs:
        for l in fmt(o):
            header.append("# expect: " + l if l else "# expect:")
    nhead = len(desc.split("\n")) + 1 + len(header) + (2 if caret else 0)
    header.append("# expect error: %s:%d:%d: error: %s" % (name, line + nhead, col, msg))
    if caret:
        srcline = src.split("\n")[line - 1]
        header.append("# expect stderr: " + srcline)
        header.append("# expect stderr: " + " " * (col - 1) + "^")
    if final_newline and not src.endswith("\n"):
        src += "\n"
    _write(path, desc, src, header)


def softmax(x, axis=None):
    x = np.asarray(x, F64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def logsoftmax(x, axis=None):
    x = np.asarray(x, F64)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def layernorm(x, g=None, b=None, eps=1e-5, axis=None):
    x = np.asarray(x, F64)
    mu = x.mean(axis=axis, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axis, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if g is not None:
        y = y * (np.asarray(g, F64) if axis != 0 else np.asarray(g, F64)[:, None])
    if b is not None:
        y = y + (np.asarray(b, F64) if axis != 0 else np.asarray(b, F64)[:, None])
    return y


def rmsnorm(x, g=None, eps=1e-5, axis=None):
    x = np.asarray(x, F64)
    y = x / np.sqrt((x * x).mean(axis=axis, keepdims=True) + eps)
    if g is not None:
        y = y * (np.asarray(g, F64) if axis != 0 else np.asarray(g, F64)[:, None])
    return y


def exscan(x, op, axis=None):
    x = np.asarray(x)
    ident = {"sum": 0, "prod": 1, "max": -np.inf, "min": np.inf}[op]
    acc = {"sum": np.cumsum, "prod": np.cumprod,
           "max": np.maximum.accumulate, "min": np.minimum.accumulate}[op]
    if axis is None:
        r = acc(x)
        return np.concatenate([np.array([ident], dtype=r.dtype), r[:-1]])
    r = acc(x, axis=axis)
    out = np.empty_like(r)
    if axis == 1:
        out[:, 0] = ident
        out[:, 1:] = r[:, :-1]
    else:
        out[0, :] = ident
        out[1:, :] = r[:-1, :]
    return out


# ==================================================================== cases
# ---------------------------------------------------------------- literals
T = "literals/"
case(T + "int", "an integer literal prints as an integer", "42", 42)
case(T + "neg_int", "unary minus on an integer literal", "-7", -7)
case(T + "big_int", "integer literals are i64", "10000000000", 10000000000)
case(T + "float", "a float literal", "2.5", s32(2.5))
case(T + "float_integral", "an integral float scalar prints a trailing .0", "3.0", s32(3.0))
case(T + "float_exp", "exponent notation; 1e6 prints as %.6g", "1e6", s32(1e6))
case(T + "float_small_exp", "a negative exponent", "1.5e-3", s32(1.5e-3))
case(T + "float_tenth", "0.1 prints as 0.1", "0.1", s32(0.1))
case(T + "float_f32_rounding", "float literals are f32: 123456789.0 rounds, %.6g",
     "123456789.0", s32(123456789.0))
case(T + "float_1e5", "100000.0 keeps .0 (no exponent at 6 digits)", "100000.0", s32(1e5))
case(T + "true", "the literal true", "true", True)
case(T + "false", "the literal false", "false", False)
case(T + "int_vec", "an integer vector literal", "[1, 2, 3]", L([1, 2, 3]))
case(T + "float_vec", "a float vector literal (f32)", "[1.5, 2.5, -0.25]", L([1.5, 2.5, -0.25]))
case(T + "mixed_vec", "ints and floats in one literal give floats", "[1, 2.5]", L([1.0, 2.5]))
case(T + "bool_vec", "a bool vector literal", "[true, false, true]", L([True, False, True]))
case(T + "int_mat", "a matrix literal", "[[1, 2], [3, 4]]", L([[1, 2], [3, 4]]))
case(T + "float_mat", "a float matrix literal", "[[1.5, 2], [3, 4.25]]", L([[1.5, 2.0], [3.0, 4.25]]))
case(T + "one_elem", "a one-element vector", "[5]", L([5]))
case(T + "neg_elems", "negative elements in a literal", "[-1, -20, 300]", L([-1, -20, 300]))

# ---------------------------------------------------------------- arithmetic
T = "arithmetic/"
case(T + "add", "integer addition", "1 + 2", 3)
case(T + "sub_neg", "subtraction going negative", "7 - 10", -3)
case(T + "mul", "integer multiplication", "6 * 7", 42)
case(T + "div_int", "/ on integers gives a float", "7 / 2", 3.5)
case(T + "div_int_exact", "/ on integers gives a float even when exact", "6 / 3", 2.0)
case(T + "mod", "integer modulo", "7 % 3", 1)
case(T + "mod_neg_lhs", "% follows numpy: the sign of the divisor", "-7 % 3", int(np.mod(-7, 3)))
case(T + "mod_neg_rhs", "% follows numpy: the sign of the divisor", "7 % -3", int(np.mod(7, -3)))
case(T + "mod_float", "float modulo", "7.5 % 2", s32(np.mod(F32(7.5), F32(2))))
case(T + "mod_float_neg", "float modulo with a negative dividend (numpy mod)", "-7.5 % 2",
     s32(np.mod(F32(-7.5), F32(2))))
case(T + "pow_int", "integer power", "2 ** 10", 1024)
case(T + "pow_float", "float power", "2.0 ** 0.5", s32(np.sqrt(2)))
case(T + "vec_add", "vector + vector", "[1, 2, 3] + [10, 20, 30]", L([11, 22, 33]))
case(T + "vec_mul_scalar", "vector * scalar", "[1, 2, 3] * 2", L([2, 4, 6]))
case(T + "vec_div_scalar", "int vector / int scalar gives f64", "[1, 2, 3] / 2", np.array([1, 2, 3]) / 2)
case(T + "scalar_minus_vec", "scalar - vector", "10 - [1, 2, 3]", L([9, 8, 7]))
case(T + "float_int_mul", "float vector * int vector", "[1.5, 2.5] * [2, 4]", L([3.0, 10.0]))
case(T + "vec_mod", "elementwise modulo", "[5, 7, 9] % [2, 3, 4]", L([1, 1, 1]))
case(T + "vec_mod_neg", "elementwise modulo of negatives", "[-5, 5, -6] % 3", np.mod(L([-5, 5, -6]), 3))
case(T + "vec_pow", "elementwise power", "[2, 3] ** [3, 2]", L([8, 9]))
case(T + "vec_neg", "unary minus on a vector", "-[1, 2]", L([-1, -2]))
case(T + "vec_sqrt_pow", "float vector ** 0.5", "[1.0, 4.0, 9.0] ** 0.5", L([1.0, 2.0, 3.0]))
case(T + "vec_expr", "x * x - x", "x = [1, 2, 3]\nx * x - x", L([0, 2, 6]))
case(T + "f32_div", "f32 / f32", "[1.0, 2.0] / [3.0, 3.0]", L([1.0, 2.0]) / L([3.0, 3.0]))
case(T + "mat_mul_elem", "elementwise * on matrices", "[[1, 2], [3, 4]] * [[5, 6], [7, 8]]",
     L([[5, 12], [21, 32]]))
case(T + "inf", "1 / 0.0 is inf", "1 / 0.0", INF)
case(T + "neg_inf", "-1 / 0.0 is -inf", "-1 / 0.0", -INF)
case(T + "nan_scalar", "0.0 / 0.0 is nan (prints nan, never -nan)", "0.0 / 0.0", NAN)
case(T + "int_div_zero", "integer / 0 is inf (float division)", "[1, 2] / 0", np.array([1, 2]) / 0)
case(T + "nan_vec", "0/0 in a vector prints nan", "x = [1.0, 0.0]\nx / x", L([1.0, 0.0]) / L([1.0, 0.0]))
case(T + "chain_float", "mixed chain in f32", "[0.5, 1.5] * 4 - 1", L([1.0, 5.0]))

# ---------------------------------------------------------------- precedence
T = "precedence/"
case(T + "mul_over_add", "* binds tighter than +", "2 + 3 * 4", 14)
case(T + "parens", "parentheses", "(2 + 3) * 4", 20)
case(T + "sub_left_assoc", "- is left associative", "10 - 4 - 3", 3)
case(T + "div_left_assoc", "/ is left associative", "100 / 10 / 5", 2.0)
case(T + "pow_over_mul", "** binds tighter than *", "2 * 3 ** 2", 18)
case(T + "neg_pow", "unary minus is looser than **", "-2 ** 2", -4)
case(T + "neg_var_pow", "unary minus on a name, looser than **", "x = 3\n-x ** 2", -9)
case(T + "pow_right_assoc", "** is right associative (as in Python)", "2 ** 3 ** 2", 2 ** 3 ** 2)
case(T + "mixed", "mixed additive and multiplicative", "7 - 2 * 3 + 1", 2)
case(T + "mod_mul", "% and * share a level, left to right", "2 * 3 % 4", 2)
case(T + "mod_add", "% binds tighter than +", "2 + 3 % 2", 3)
case(T + "cmp_over_add", "+ binds tighter than ==", "1 + 2 == 3", True)
case(T + "not_over_cmp", "not is looser than comparisons", "not 1 > 2", True)
case(T + "and_over_or", "and binds tighter than or", "true or false and false", True)
case(T + "parens_or", "parentheses override and/or", "(true or false) and false", False)
case(T + "not_over_and", "not binds tighter than and", "not false and false", False)
case(T + "neg_vec_pow", "-x ** 2 on a vector", "-[1, 2] ** 2", L([-1, -4]))
case(T + "matmul_over_add", "@ binds tighter than +", "[[1, 2], [3, 4]] @ [[2, 0], [0, 2]] + 1",
     L([[3, 5], [7, 9]]))
case(T + "matmul_left_assoc", "@ and * share a level, left to right",
     "2 * [[1, 2], [3, 4]] @ [[1, 1], [1, 1]]", (2 * L([[1, 2], [3, 4]])) @ L([[1, 1], [1, 1]]))
case(T + "neg_mul", "unary minus on both operands", "-3 * -2", 6)
case(T + "pow_parens", "parenthesised base", "(1 + 2) ** 2", 9)

# ---------------------------------------------------------------- compare_logic
T = "compare_logic/"
x = L([1, 2, 3])
case(T + "lt_scalar", "vector < scalar gives bool", "[1, 2, 3] < 2", x < 2)
case(T + "le", "<=", "[1, 2, 3] <= 2", x <= 2)
case(T + "gt", ">", "[1, 2, 3] > 2", x > 2)
case(T + "ge", ">=", "[1, 2, 3] >= 2", x >= 2)
case(T + "eq_vec", "== elementwise", "[1, 2, 3] == [1, 5, 3]", x == L([1, 5, 3]))
case(T + "ne_vec", "!= elementwise", "[1, 2, 3] != [1, 5, 3]", x != L([1, 5, 3]))
case(T + "scalar_ge", "scalar comparison", "3 >= 3", True)
case(T + "scalar_ne", "scalar !=", "3 != 3", False)
case(T + "and_vec", "and elementwise", "[true, false, true] and [true, true, false]",
     L([True, False, False]))
case(T + "or_vec", "or elementwise", "[true, false, false] or [false, false, true]",
     L([True, False, True]))
case(T + "not_vec", "not elementwise", "not [true, false]", L([False, True]))
case(T + "nan_eq", "NaN != NaN", "x = [1.0, 0.0]\ny = x / x\ny == y", L([True, False]))
case(T + "nan_ne", "NaN != NaN is true", "x = [1.0, 0.0]\ny = x / x\ny != y", L([False, True]))
case(T + "mixed_dtype_eq", "int == float compares values", "[1, 2, 3] == [1.0, 2.5, 3.0]",
     L([True, False, True]))
case(T + "int_lt_float", "int vector < float literal", "[1, 2] < 1.5", L([True, False]))
case(T + "range_and", "a range test with and", "x = [1, 2, 3, 4, 5]\n(x > 1) and (x < 4)",
     L([False, True, True, False, False]))
case(T + "scalar_and", "scalar and", "1 < 2 and 3 < 2", False)
case(T + "mat_cmp", "comparison on a matrix", "[[1, 5], [7, 2]] > 3", L([[1, 5], [7, 2]]) > 3)
case(T + "cmp_bool_count", "a comparison counts as bool in sum", "sum([1, 2, 3] > 1)", 2)

# ---------------------------------------------------------------- dtypes
T = "dtypes/"
case(T + "i32_weak_int", "an int literal meets an i32 array: stays i32 (wraps)",
     "i32([2147483647]) + 1", np.array([2147483647], I32) + I32(1))
case(T + "i64_no_wrap", "i64 array + 1 does not wrap at 2^31", "[2147483647] + 1",
     L([2147483648]))
case(T + "i32_plus_i64", "i32 + i64 gives i64", "i32([2147483647]) + i64([1])", L([2147483648]))
case(T + "bool_plus_int", "bool array + int literal gives ints", "[true, false] + 1", L([2, 1]))
case(T + "bool_times_i32", "bool * i32 gives i32",
     "[true, false] * i32([2147483647, 5]) + 1",
     np.array([True, False]) * np.array([2147483647, 5], I32) + I32(1))
case(T + "f32_weak_int", "an int literal meets an f32 array: f32",
     "f32(iota(3)) + 16777217 - 16777216", np.arange(3, dtype=F32) + F32(16777217) - F32(16777216))
case(T + "i64_plus_f32", "i64 op f32 gives f32", "(iota(3) + 16777216) + zeros(3) - 16777216",
     (np.arange(3) + 16777216).astype(F32) - F32(16777216))
case(T + "i32_plus_f32", "i32 op f32 gives f32", "i32(iota(3) + 16777216) + zeros(3) - 16777216",
     (np.arange(3) + 16777216).astype(F32) - F32(16777216))
case(T + "i64_plus_f64", "i64 op f64 gives f64", "(iota(3) + 16777216) + f64(zeros(3))",
     (np.arange(3) + 16777216).astype(F64))
case(T + "f32_plus_f64", "f32 op f64 gives f64", "f64(iota(3) + 16777216) + ones(3)",
     (np.arange(3) + 16777217).astype(F64))
case(T + "float_lit_i64", "a float literal meets i64: f64, value kept exactly",
     "iota(3) + 16777216.5", np.arange(3) + 16777216.5)
case(T + "float_lit_i32", "a float literal meets i32: f32", "i32(iota(3)) + 16777216.5 - 16777216",
     np.arange(3, dtype=F32) + F32(16777216.5) - F32(16777216))
case(T + "float_lit_bool", "a float literal meets bool: f32", "[true, false] + 0.5", L([1.5, 0.5]))
case(T + "float_lit_f64", "a float literal meets f64: compared in f64",
     "f64(iota(3)) / 10 == 0.1", np.arange(3, dtype=F64) / 10 == 0.1)
case(T + "float_lit_f32", "a float literal meets f32: compared in f32",
     "f32(iota(3)) / 10 == 0.1", np.arange(3, dtype=F32) / F32(10) == F32(0.1))
case(T + "div_i64_f64", "/ on i64 gives f64", "(iota(3) + 16777217) / 1",
     (np.arange(3) + 16777217) / 1)
case(T + "div_i32_f32", "/ on i32 gives f32", "i32(iota(3) + 16777217) / 1 - 16777216",
     (np.arange(3) + 16777217).astype(F32) / F32(1) - F32(16777216))
case(T + "div_bool_f32", "/ on bool gives f32", "[true, false] / 2", L([0.5, 0.0]))
case(T + "i32_times_float", "i32 * float literal gives f32", "i32([16777217]) * 1.0 - 16777216",
     np.array([0.0], F32))
case(T + "i64_times_float", "i64 * float literal gives f64", "[16777217] * 1.0 - 16777216",
     np.array([1.0], F64))
case(T + "sum_bool_i64", "sum of bool is an integer", "sum([true, true, false])", 2)
case(T + "sum_i32_i64", "sum of i32 accumulates in i64", "sum(i32([2147483647, 2147483647]))",
     2 * 2147483647)
case(T + "prod_i32_i64", "prod of i32 is i64", "prod(i32([65536, 65536]))", 65536 * 65536)
case(T + "mean_i64_f64", "mean of i64 is f64", "mean([16777217, 16777217]) - 16777216", 1.0)
case(T + "mean_i32_f32", "mean of i32 is f32", "mean(i32([16777217, 16777217])) - 16777216",
     s32(F32(16777217) - F32(16777216)))
case(T + "max_keeps_i32", "max of i32 stays i32 (wraps on + 1)", "max(i32([2147483647, 1])) + 1",
     -2147483648)
case(T + "sqrt_i64_f64", "sqrt of i64 is f64", "sqrt([16777217])", np.sqrt(np.array([16777217.0])))
case(T + "sqrt_i32_f32", "sqrt of i32 is f32 (the input rounds to f32 first)",
     "sqrt(i32([16777217]))", np.sqrt(np.array([16777217], F32)))
case(T + "fill_int", "fill with an int gives i64", "fill(16777217, 2)", L([16777217, 16777217]))
case(T + "fill_float", "fill with a float gives f32", "fill(16777217.0, 2) - 16777216",
     np.array([0.0, 0.0], F32))
case(T + "zeros_f32", "zeros is f32", "zeros(2) + 16777217 - 16777216", np.zeros(2, F32))
case(T + "ones_f32", "ones is f32", "ones(2) * 16777217 - 16777216", np.zeros(2, F32))
case(T + "iota_i64", "iota is i64", "iota(3) + 2147483647", np.arange(3) + 2147483647)
case(T + "rand_f32", "rand is f32", "rand(2) * 0 + 16777217 - 16777216", np.zeros(2, F32))
case(T + "exp_i32_f32", "exp of i32 is f32", "exp(i32([0])) + 16777216 - 16777216", np.array([0.0], F32))
case(T + "exp_i64_f64", "exp of i64 is f64", "exp([0]) + 16777216 - 16777216", np.array([1.0], F64))
case(T + "cmp_gives_bool", "comparison of floats gives bool", "[1.5, 2.5] > 2.0", L([False, True]))

# ---------------------------------------------------------------- broadcast
T = "broadcast/"
m = L([[1, 2, 3], [4, 5, 6]])
M = "m = [[1, 2, 3], [4, 5, 6]]\n"
case(T + "scalar_vec", "scalar + vector", "1 + [1, 2, 3]", L([2, 3, 4]))
case(T + "vec_scalar", "vector - scalar", "[1, 2, 3] - 1", L([0, 1, 2]))
case(T + "scalar_mat", "scalar * matrix", M + "2 * m", 2 * m)
case(T + "mat_vec", "a length-C vector broadcasts over the rows of an RxC matrix",
     M + "m + [10, 20, 30]", m + L([10, 20, 30]))
case(T + "vec_mat", "vector op matrix (numpy rule)", M + "[10, 20, 30] - m", L([10, 20, 30]) - m)
case(T + "mat_mat", "matrix + matrix", M + "m + m", m + m)
case(T + "rows_vec", "rows(m) + v: one value per row", M + "rows(m) + [100, 200]",
     m + L([100, 200])[:, None])
case(T + "cols_vec", "cols(m) * v: one value per column", M + "cols(m) * [1, 10, 100]",
     m * L([1, 10, 100])[None, :])
case(T + "rows_minus_max", "rows(m) - max(rows(m))", M + "rows(m) - max(rows(m))",
     m - m.max(1, keepdims=True))
case(T + "cols_minus_min", "cols(m) - min(cols(m))", M + "cols(m) - min(cols(m))",
     m - m.min(0, keepdims=True))
case(T + "rows_div_sum", "rows(m) / sum(rows(m)) on i64 gives f64", M + "rows(m) / sum(rows(m))",
     m / m.sum(1, keepdims=True))
case(T + "rows_scalar_sum", "rows(m) * 2 stays a rows view: sum gives one per row",
     M + "sum(rows(m) * 2)", (m * 2).sum(1))
case(T + "cols_scalar_sum", "cols(m) + 1 stays a cols view: sum gives one per column",
     M + "sum(cols(m) + 1)", (m + 1).sum(0))
mf = L([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
case(T + "row_softmax_by_hand", "the hand-written row softmax from the design brief",
     "m = f64([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])\ne = exp(rows(m) - max(rows(m)))\ne / sum(e)",
     softmax(mf, 1).astype(F32))
case(T + "col_center", "cols(m) - mean(cols(m))", M + "cols(m) - mean(cols(m))",
     m - m.mean(0, keepdims=True))
case(T + "rows_square", "on a square matrix rows(m) + v is per row, m + v per column",
     "m = [[1, 2], [3, 4]]\nrows(m) + [10, 20]\nm + [10, 20]\ncols(m) + [10, 20]",
     L([[11, 12], [23, 24]]), L([[11, 22], [13, 24]]), L([[11, 22], [13, 24]]))
case(T + "rows_vec_float", "float per-row vector over an int matrix gives f32",
     M + "rows(m) * [0.5, 0.25]", (m.astype(F32) * L([0.5, 0.25])[:, None]))
case(T + "vec_mat_float", "f32 vector over the rows of a f32 matrix",
     "ones(2, 3) * [1.5, 2.5, 3.5]", np.ones((2, 3), F32) * L([1.5, 2.5, 3.5]))

# ---------------------------------------------------------------- elementwise
T = "elementwise/"
xf = L([0.5, 1.0, -2.0, 3.0])
XF = "x = [0.5, 1.0, -2.0, 3.0]\n"


def e32(f, x):
    return f(np.asarray(x, F64)).astype(F32)


case(T + "abs_int", "abs on ints stays int", "abs([-3, 0, 4])", L([3, 0, 4]))
case(T + "abs_float", "abs on floats", "abs([-1.5, 0.0, 2.25])", L([1.5, 0.0, 2.25]))
case(T + "exp_int", "exp of i64 gives f64", "exp([0, 1, -1])", np.exp(np.array([0, 1, -1])))
xr, yr = robust_input(np.exp, (4,), 1)
case(T + "exp_f32", "exp of f32", "exp(%s)" % lit(xr), yr)
xr, yr = robust_input(np.log, (4,), 2, lo=1, hi=40)
case(T + "log", "log", "log(%s)" % lit(xr), yr)
case(T + "log_edge", "log of 0 is -inf, of -1 is nan", "log([0.0, -1.0])", L([-INF, NAN]))
case(T + "sqrt", "sqrt (IEEE: correctly rounded)", "sqrt([4.0, 2.0, 0.0])", e32(np.sqrt, L([4.0, 2.0, 0.0])))
case(T + "sqrt_neg", "sqrt of a negative is nan", "sqrt(-1.0)", NAN)
xr, yr = robust_input(lambda v: 1 / np.sqrt(v), (3,), 3, lo=1, hi=40)
case(T + "rsqrt", "rsqrt is 1/sqrt", "rsqrt(%s)" % lit(xr), yr)
for i, (nm, fn) in enumerate([("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh)]):
    xr, yr = robust_input(fn, (4,), 10 + i)
    case(T + nm, nm, "%s(%s)" % (nm, lit(xr)), yr)
xr, yr = robust_input(lambda v: 1 / (1 + np.exp(-v)), (4,), 4)
case(T + "sigmoid", "sigmoid is 1/(1+exp(-x))", "sigmoid(%s)" % lit(xr), yr)
case(T + "relu", "relu", "relu([-1.5, 0.0, 2.5])", L([0.0, 0.0, 2.5]))
case(T + "relu_int", "relu on ints stays int", "relu([-2, 3])", L([0, 3]))
fr = L([-1.5, -0.5, 0.5, 1.5, 2.5])
case(T + "floor", "floor", "floor([-1.5, -0.5, 0.5, 1.5, 2.5])", np.floor(fr))
case(T + "ceil", "ceil (numpy prints -0.)", "ceil([-1.5, -0.5, 0.5, 1.5, 2.5])", np.ceil(fr))
case(T + "round_half_even", "round goes half to even, as numpy", "round([-1.5, -0.5, 0.5, 1.5, 2.5])",
     np.round(fr))
case(T + "sign", "sign of floats", "sign([-2.5, 0.0, 3.0])", np.sign(L([-2.5, 0.0, 3.0])))
case(T + "sign_int", "sign of ints stays int", "sign([-7, 0, 9])", np.sign(L([-7, 0, 9])))
case(T + "pow_fn", "pow(scalar, vector)", "pow(2, [1, 2, 3])", L([2, 4, 8]))
case(T + "pow_fn_float", "pow(vector, 0.5)", "pow([4.0, 9.0], 0.5)", L([2.0, 3.0]))
case(T + "maximum", "maximum", "maximum([1, 5, 3], [4, 2, 6])", L([4, 5, 6]))
case(T + "minimum", "minimum", "minimum([1, 5, 3], [4, 2, 6])", L([1, 2, 3]))
case(T + "maximum_scalar", "maximum with a scalar", "maximum([-1, 2, -3], 0)", L([0, 2, 0]))
case(T + "maximum_nan", "maximum propagates NaN (numpy)",
     "x = [1.0, 0.0]\nmaximum(x / x, [2.0, 0.0])", L([2.0, NAN]))
case(T + "minimum_nan", "minimum propagates NaN (numpy)",
     "x = [1.0, 0.0]\nminimum([0.5, 5.0], x / x)", L([0.5, NAN]))
case(T + "clamp", "clamp(x, lo, hi)", "clamp([-5, 0, 5, 10], 0, 6)", L([0, 0, 5, 6]))
case(T + "clamp_float", "clamp on floats", "clamp([-1.5, 0.25, 9.0], -1.0, 1.0)", L([-1.0, 0.25, 1.0]))
case(T + "where", "where(c, a, b)", "where([true, false, true], [1, 2, 3], [10, 20, 30])",
     L([1, 20, 3]))
case(T + "where_scalar", "where with a scalar branch", "x = [1, 5, 2, 7]\nwhere(x > 2, x, 0)",
     L([0, 5, 0, 7]))
case(T + "where_mixed", "where with a float literal and an i64 array gives f64",
     "where([true, false, true], 1.5, [1, 2, 3])", np.array([1.5, 2.0, 1.5]))
case(T + "sqrt_abs", "a chain of elementwise functions", "sqrt(abs([-4.0, 9.0]))", L([2.0, 3.0]))
xr, yr = robust_input(np.tanh, (2, 2), 5)
case(T + "tanh_mat", "tanh on a matrix", "tanh(%s)" % lit(xr), yr)
case(T + "exp_log", "log(exp(x)) on small values", "log(exp([1.0, 2.0]))", L([1.0, 2.0]))

# ---------------------------------------------------------------- casts
T = "casts/"
case(T + "i32_trunc", "float to int truncates toward zero", "i32([1.7, -1.7, 2.5])",
     L([1.7, -1.7, 2.5]).astype(I32))
case(T + "i64_scalar", "i64 of a float scalar", "i64(2.9)", 2)
case(T + "i32_neg_half", "i32(-0.5) is 0", "i32(-0.5)", 0)
case(T + "f32_of_int", "f32 of ints", "f32([1, 2])", L([1.0, 2.0]))
case(T + "f64_div", "f64 of an int then divide", "f64(1) / 3", 1 / 3)
case(T + "bool_of_int", "bool of ints: nonzero is true", "bool([0, 1, -2])", L([False, True, True]))
case(T + "bool_of_float", "bool of floats", "bool([0.0, 0.5])", L([False, True]))
case(T + "i64_of_bool", "i64 of bools", "i64([true, false])", L([1, 0]))
case(T + "f32_of_bool", "f32 of bools", "f32([true, false])", L([1.0, 0.0]))
case(T + "i32_wrap", "i64 to i32 wraps like numpy's astype", "i32([4294967297, -1])",
     np.array([4294967297, -1]).astype(I32))
case(T + "f64_to_f32", "f64 to f32 rounds", "f32(f64([16777217])) - 16777216", np.array([0.0], F32))
case(T + "f32_to_i64_big", "f32 3e9 to i64 is exact", "i64([3e9])", L([3000000000]))
case(T + "cast_mat", "a cast of a matrix", "f64([[1, 2], [3, 4]]) / 2",
     L([[1, 2], [3, 4]]) / 2)
case(T + "cast_roundtrip", "i32(f32(x)) of small ints is exact", "i32(f32([-3, 0, 7]))", L([-3, 0, 7]))

# ---------------------------------------------------------------- reduce
T = "reduce/"
mi = L([[3, 1, 4], [1, 5, 9], [2, 6, 5]])
MI = "m = [[3, 1, 4], [1, 5, 9], [2, 6, 5]]\n"
mfl = L([[0.5, 1.5, -2.0], [4.0, 0.25, 1.0]])
MF = "m = [[0.5, 1.5, -2.0], [4.0, 0.25, 1.0]]\n"
case(T + "sum_int", "sum of ints", "sum([1, 2, 3, 4])", 10)
case(T + "sum_float", "sum of f32", "sum([0.5, 0.25, 0.125])", s32(0.875))
case(T + "sum_mat", "sum of a matrix is a scalar", MI + "sum(m)", int(mi.sum()))
case(T + "sum_rows", "sum(rows(m)): one per row", MI + "sum(rows(m))", mi.sum(1))
case(T + "sum_cols", "sum(cols(m)): one per column", MI + "sum(cols(m))", mi.sum(0))
case(T + "sum_rows_float", "float row sums", MF + "sum(rows(m))", mfl.sum(1))
case(T + "sum_big", "sum of iota(100000) in i64", "sum(iota(100000))", int(np.arange(100000).sum()))
case(T + "sum_ones_20m", "f32 sum of 2e7 ones is exact (pairwise/blocked, not naive)",
     "sum(ones(20000000))", s32(2e7))
case(T + "prod", "prod of ints", "prod([1, 2, 3, 4])", 24)
case(T + "prod_float", "prod of floats", "prod([0.5, 4.0, 1.5])", s32(3.0))
case(T + "prod_rows", "prod per row", MI + "prod(rows(m))", mi.prod(1))
case(T + "max", "max of a vector", "max([3, 9, 2])", 9)
case(T + "min", "min of a vector", "min([3, -9, 2])", -9)
case(T + "max_float", "max of floats", "max([0.5, -1.5, 2.25])", s32(2.25))
case(T + "max_rows", "max per row", MI + "max(rows(m))", mi.max(1))
case(T + "min_cols", "min per column", MI + "min(cols(m))", mi.min(0))
case(T + "max_cols_float", "float max per column", MF + "max(cols(m))", mfl.max(0))
case(T + "max_bool", "max of bool is bool", "max([false, true])", True)
case(T + "mean_int", "mean of ints is float", "mean([1, 2, 3, 4])", 2.5)
case(T + "mean_rows", "mean per row", MI + "mean(rows(m))", mi.mean(1))
case(T + "mean_cols_float", "f32 mean per column", MF + "mean(cols(m))", mfl.mean(0))
case(T + "any", "any", "any([false, true, false])", True)
case(T + "any_false", "any of all-false", "any([false, false])", False)
case(T + "all", "all", "all([true, true, false])", False)
case(T + "all_true", "all of all-true", "all([true, true])", True)
case(T + "any_rows", "any per row", MI + "any(rows(m > 4))", (mi > 4).any(1))
case(T + "all_cols", "all per column", MI + "all(cols(m > 1))", (mi > 1).all(0))
case(T + "argmax", "argmax returns the first maximum", "argmax([1, 3, 3, 2])", 1)
case(T + "argmin", "argmin returns the first minimum", "argmin([4, 1, 3, 1])", 1)
case(T + "argmax_mat", "argmax of a matrix is a flat index", "argmax([[1, 5], [7, 2]])", 2)
case(T + "argmax_rows", "argmax per row", MI + "argmax(rows(m))", mi.argmax(1))
case(T + "argmin_cols", "argmin per column", MI + "argmin(cols(m))", mi.argmin(0))
case(T + "argmax_float", "argmax of floats", "argmax([0.5, -1.0, 2.5, 2.5])", 2)
case(T + "count", "count of trues", "count([1, 5, 2, 7] > 2)", 2)
case(T + "count_rows", "count per row", MI + "count(rows(m > 2))", (mi > 2).sum(1))
case(T + "norm", "norm is the 2-norm", "norm([3.0, 4.0])", s32(5.0))
case(T + "norm_int", "norm of ints is float", "norm([3, 4])", 5.0)
case(T + "norm_rows", "norm per row", "m = [[3.0, 4.0], [6.0, 8.0]]\nnorm(rows(m))", L([5.0, 10.0]))
case(T + "var", "var is the population variance", "var([1, 2, 3, 4])", 1.25)
case(T + "std", "std is the population standard deviation", "std([1, 2, 3, 4])",
     float(np.std([1, 2, 3, 4])))
case(T + "var_float", "var of f32", "var([1.0, 2.0, 3.0, 4.0])", s32(1.25))
case(T + "var_rows", "var per row", MI + "var(rows(m))", mi.var(1))
case(T + "std_cols", "std per column", MI + "std(cols(m))", mi.std(0))
case(T + "logsumexp", "logsumexp", "logsumexp([0.0, 0.0])", s32(np.log(2)))
case(T + "logsumexp_stable", "logsumexp of large values does not overflow",
     "logsumexp([1000.0, 1000.0])", s32(1000 + np.log(2)))
xr, yr = robust_input(lambda v: np.log(np.exp(v).sum(1)), (2, 3), 6)
case(T + "logsumexp_rows", "logsumexp per row", "m = %s\nlogsumexp(rows(m))" % lit(xr), yr)
case(T + "dot", "dot of ints", "dot([1, 2, 3], [4, 5, 6])", 32)
case(T + "dot_float", "dot of floats", "dot([0.5, 1.5], [2.0, 4.0])", s32(7.0))
case(T + "dot_mixed", "dot of int and float", "dot([1, 2], [0.5, 0.25])", 1.0)
# NaN rules
NANV = "x = [1.0, 0.0, 2.0, 0.0]\ny = x / x\n"   # y = [1, nan, 1, nan]
case(T + "nan_sum", "NaN propagates through sum", NANV + "sum(y)", NAN)
case(T + "nan_max", "NaN propagates through max", NANV + "max(y)", NAN)
case(T + "nan_min", "NaN propagates through min", NANV + "min(y)", NAN)
case(T + "nan_argmax", "argmax returns the first NaN", NANV + "argmax(y)", 1)
case(T + "nan_argmin", "argmin returns the first NaN", NANV + "argmin(y)", 1)
case(T + "nan_mean", "NaN propagates through mean", NANV + "mean(y)", NAN)
case(T + "nan_max_rows", "NaN per row: only the row with NaN is NaN",
     "m = [[1.0, 2.0], [3.0, 0.0]]\nn = m / [[1.0, 1.0], [1.0, 0.0]]\nmax(rows(n))",
     L([2.0, NAN]))
# empty rules
case(T + "empty_sum_f32", "sum of an empty f32 array is 0.0", "sum(zeros(0))", s32(0.0))
case(T + "empty_sum_i64", "sum of an empty i64 array is 0", "sum(iota(0))", 0)
case(T + "empty_prod_f32", "prod of an empty array is 1.0", "prod(zeros(0))", s32(1.0))
case(T + "empty_prod_i64", "prod of an empty i64 array is 1", "prod(iota(0))", 1)
case(T + "empty_count", "count of an empty mask is 0", "count(zeros(0) > 0)", 0)
case(T + "empty_any", "any of empty is false", "any(zeros(0) > 0)", False)
case(T + "empty_all", "all of empty is true", "all(zeros(0) > 0)", True)
case(T + "empty_mean", "mean of empty is nan (numpy)", "mean(zeros(0))", NAN)
case(T + "empty_filter_sum", "sum of an empty filter result",
     "x = [1, 2, 3]\nsum(filter(x, x > 5))", 0)

# ---------------------------------------------------------------- scan
T = "scan/"
sx = L([3, 1, 4, 1, 5])
SX = "x = [3, 1, 4, 1, 5]\n"
case(T + "scan_default", "scan(x) is an inclusive prefix sum", "scan([1, 2, 3, 4])", L([1, 3, 6, 10]))
case(T + "scan_sum", "scan(x, sum)", SX + "scan(x, sum)", np.cumsum(sx))
case(T + "scan_prod", "scan(x, prod)", SX + "scan(x, prod)", np.cumprod(sx))
case(T + "scan_max", "scan(x, max) is a running maximum", SX + "scan(x, max)", np.maximum.accumulate(sx))
case(T + "scan_min", "scan(x, min) is a running minimum", SX + "scan(x, min)", np.minimum.accumulate(sx))
case(T + "exscan_default", "exscan(x) is an exclusive prefix sum", "exscan([1, 2, 3, 4])",
     L([0, 1, 3, 6]))
case(T + "exscan_prod", "exscan(x, prod) starts at 1", SX + "exscan(x, prod)", exscan(sx, "prod"))
case(T + "exscan_max_float", "exscan(x, max) on floats starts at -inf",
     "exscan([3.0, 1.0, 4.0], max)", L([-INF, 3.0, 3.0]))
case(T + "exscan_min_float", "exscan(x, min) on floats starts at inf",
     "exscan([3.0, 1.0, 4.0], min)", L([INF, 3.0, 1.0]))
case(T + "scan_float", "scan of f32", "scan([0.5, 0.25, 0.125])", L([0.5, 0.75, 0.875]))
case(T + "scan_bool", "scan of bool counts (integer result)", "scan([true, false, true])",
     L([1, 1, 2]))
case(T + "scan_rows", "scan(rows(m)) per row", MI + "scan(rows(m))", np.cumsum(mi, 1))
case(T + "scan_cols", "scan(cols(m)) per column", MI + "scan(cols(m))", np.cumsum(mi, 0))
case(T + "scan_rows_max", "scan(rows(m), max)", MI + "scan(rows(m), max)", np.maximum.accumulate(mi, 1))
case(T + "scan_cols_min", "scan(cols(m), min)", MI + "scan(cols(m), min)", np.minimum.accumulate(mi, 0))
case(T + "exscan_rows", "exscan(rows(m)) per row", MI + "exscan(rows(m))", exscan(mi, "sum", 1))
case(T + "exscan_cols_prod", "exscan(cols(m), prod) per column", MI + "exscan(cols(m), prod)",
     exscan(mi, "prod", 0))
case(T + "scan_long_last", "the last element of a long f32 scan", "scan(ones(100000))[99999]",
     s32(100000.0))
case(T + "scan_long_int", "a long i64 scan", "s = scan(iota(100000))\ns[99999]",
     int(np.arange(100000).sum()))

# ---------------------------------------------------------------- normalize
T = "normalize/"
xr, yr = robust_input(softmax, (3,), 20, ulps=64, post=round4)
case(T + "softmax", "softmax of a vector (to 4 decimals)", "R(softmax(%s))" % lit(xr), yr)
case(T + "softmax_stable", "softmax of large values", "softmax([1000.0, 1000.0])", L([0.5, 0.5]))
case(T + "softmax_sum", "softmax sums to 1", "sum(softmax([0.5, -1.0, 2.0, 3.5]))", s32(1.0))
xr, yr = robust_input(logsoftmax, (3,), 21, ulps=64, post=round4)
case(T + "logsoftmax", "logsoftmax of a vector (to 4 decimals)", "R(logsoftmax(%s))" % lit(xr), yr)
xr, yr = robust_input(lambda v: softmax(v, 1), (2, 3), 22, ulps=64, post=round4)
case(T + "softmax_rows", "softmax per row (to 4 decimals)", "R(m = %s\nsoftmax(rows(m)))" % lit(xr), yr)
xr, yr = robust_input(lambda v: softmax(v, 0), (2, 3), 23, ulps=64, post=round4)
case(T + "softmax_cols", "softmax per column (to 4 decimals)", "R(m = %s\nsoftmax(cols(m)))" % lit(xr), yr)
xr, yr = robust_input(lambda v: logsoftmax(v, 1), (2, 3), 24, ulps=64, post=round4)
case(T + "logsoftmax_rows", "logsoftmax per row (to 4 decimals)", "R(m = %s\nlogsoftmax(rows(m)))" % lit(xr), yr)
xr, yr = robust_input(layernorm, (4,), 25, ulps=64, post=round4)
case(T + "layernorm", "layernorm with the default eps=1e-5 (to 4 decimals)", "R(layernorm(%s))" % lit(xr), yr)
xr, yr = robust_input(lambda v: layernorm(v, eps=0.75), (4,), 26, ulps=64, post=round4)
case(T + "layernorm_eps", "layernorm with eps given by keyword (to 4 decimals)",
     "R(layernorm(%s, eps=0.75))" % lit(xr), yr)
G4, B4 = [1.0, 2.0, 0.5, 1.0], [0.0, 1.0, 0.0, -1.0]
xr, yr = robust_input(lambda v: layernorm(v, G4, B4), (4,), 27, ulps=64, post=round4)
case(T + "layernorm_gamma_beta", "layernorm with gamma and beta (to 4 decimals)",
     "R(layernorm(%s, %s, %s))" % (lit(xr), lit(G4), lit(B4)), yr)
G3, B3 = [1.0, 2.0, 3.0], [0.5, 0.0, -0.5]
xr, yr = robust_input(lambda v: layernorm(v, G3, B3, axis=1), (2, 3), 28, ulps=64, post=round4)
case(T + "layernorm_rows", "layernorm per row with gamma, beta (to 4 decimals)",
     "R(m = %s\nlayernorm(rows(m), %s, %s))" % (lit(xr), lit(G3), lit(B3)), yr)
xr, yr = robust_input(lambda v: layernorm(v, axis=0), (3, 2), 29, ulps=64, post=round4)
case(T + "layernorm_cols", "layernorm per column (to 4 decimals)", "R(m = %s\nlayernorm(cols(m)))" % lit(xr), yr)
xr, yr = robust_input(lambda v: layernorm(v, [2.0, 0.5, -1.0], axis=0), (3, 2), 30, ulps=64, post=round4)
case(T + "layernorm_cols_gamma", "layernorm per column with a per-row gamma (to 4 decimals)",
     "R(m = %s\nlayernorm(cols(m), [2.0, 0.5, -1.0], [0.0, 0.0, 0.0]))" % lit(xr), yr)
xr, yr = robust_input(rmsnorm, (4,), 31, ulps=64, post=round4)
case(T + "rmsnorm", "rmsnorm with the default eps (to 4 decimals)", "R(rmsnorm(%s))" % lit(xr), yr)
xr, yr = robust_input(lambda v: rmsnorm(v, [2.0, 1.0, 0.5, 1.0]), (4,), 32, ulps=64, post=round4)
case(T + "rmsnorm_gamma", "rmsnorm with gamma (to 4 decimals)", "R(rmsnorm(%s, [2.0, 1.0, 0.5, 1.0]))" % lit(xr), yr)
xr, yr = robust_input(lambda v: rmsnorm(v, eps=0.5, axis=1), (2, 3), 33, ulps=64, post=round4)
case(T + "rmsnorm_rows_eps", "rmsnorm per row with eps keyword (to 4 decimals)", "R(m = %s\nrmsnorm(rows(m), eps=0.5))" % lit(xr), yr)
xr, yr = robust_input(lambda v: layernorm(v, eps=1e-3, axis=1), (2, 3), 34, ulps=64, post=round4)
case(T + "layernorm_rows_eps_kw", "layernorm per row, only eps by keyword (to 4 decimals)",
     "R(m = %s\nlayernorm(rows(m), eps=1e-3))" % lit(xr), yr)
xr, yr = robust_input(lambda v: rmsnorm(v, [1.0, -1.0, 2.0], axis=1), (2, 3), 35, ulps=64, post=round4)
case(T + "rmsnorm_rows_gamma", "rmsnorm per row with gamma (to 4 decimals)",
     "R(m = %s\nrmsnorm(rows(m), [1.0, -1.0, 2.0]))" % lit(xr), yr)
case(T + "layernorm_mean0", "layernorm output has mean ~0 and var ~1",
     "y = layernorm([0.5, 3.0, -1.25, 2.0, 7.5])\nabs(mean(y)) < 1e-6 and abs(var(y) - 1) < 1e-4", True)

# ---------------------------------------------------------------- data
T = "data/"
case(T + "filter", "filter(x, mask)", "filter([1, 2, 3, 4], [true, false, true, false])", L([1, 3]))
case(T + "filter_pred", "filter with a computed mask", "x = [5, 1, 4, 2, 3]\nfilter(x, x > 2)",
     L([5, 4, 3]))
case(T + "filter_empty", "a filter that keeps nothing prints []", "x = [1, 2]\nfilter(x, x > 5)",
     np.array([], I64))
case(T + "filter_float", "filter of floats", "x = [0.5, -1.5, 2.5]\nfilter(x, x < 1.0)", L([0.5, -1.5]))
case(T + "filter_len", "the length of a filter result", "x = iota(100)\nlen(filter(x, x % 3 == 0))", 34)
case(T + "partition", "partition puts trues first, stably",
     "partition([1, 2, 3, 4, 5], [false, true, false, true, false])", L([2, 4, 1, 3, 5]))
case(T + "partition_pred", "partition with a computed mask",
     "x = [0.5, -1.5, 2.5, -0.5]\npartition(x, x < 0.0)", L([-1.5, -0.5, 0.5, 2.5]))
case(T + "partition_all_true", "partition with an all-true mask keeps order",
     "x = [3, 1, 2]\npartition(x, x > 0)", L([3, 1, 2]))
hx = L([0.5, 1.5, 1.5, 2.5])
case(T + "hist_range", "hist with a range", "hist([0.5, 1.5, 1.5, 2.5], 3, 0, 3)",
     np.histogram(hx, 3, (0, 3))[0].astype(I64))
case(T + "hist_last_closed", "the last bin is closed (numpy.histogram)", "hist([0, 1, 2, 3], 3, 0, 3)",
     np.histogram(L([0, 1, 2, 3]), 3, (0, 3))[0].astype(I64))
case(T + "hist_outside", "values outside the range are ignored", "hist([-1.0, 0.5, 5.0, 0.25], 2, 0, 1)",
     np.histogram(L([-1.0, 0.5, 5.0, 0.25]), 2, (0, 1))[0].astype(I64))
case(T + "hist_norange", "hist without a range uses [min, max]", "hist([1, 2, 2, 3, 4], 3)",
     np.histogram(L([1, 2, 2, 3, 4]), 3)[0].astype(I64))
case(T + "hist_float_norange", "hist of floats without a range",
     "hist([0.1, 0.4, 0.35, 0.9, 0.55], 4)",
     np.histogram(L([0.1, 0.4, 0.35, 0.9, 0.55]), 4)[0].astype(I64))
case(T + "hist_float_range", "hist of floats with float bounds", "hist([0.1, 0.2, 0.7], 2, 0.0, 1.0)",
     L([2, 1]))
case(T + "transpose", "transpose", "transpose([[1, 2, 3], [4, 5, 6]])", L([[1, 2, 3], [4, 5, 6]]).T)
case(T + "transpose_twice", "transpose twice is the identity", M + "transpose(transpose(m))", m)
case(T + "reshape_2x3", "reshape to 2x3", "reshape(iota(6), 2, 3)", np.arange(6).reshape(2, 3))
case(T + "reshape_3x2", "reshape to 3x2", "reshape(iota(6), 3, 2)", np.arange(6).reshape(3, 2))
case(T + "reshape_flat", "reshape a matrix to a vector", M + "reshape(m, 6)", m.reshape(6))
case(T + "reshape_3d", "reshape to 3-d", "reshape(iota(24), 2, 3, 4)", np.arange(24).reshape(2, 3, 4))
case(T + "reshape_float_dims", "sizes accept integral floats", "reshape(iota(6), 2.0, 3)",
     np.arange(6).reshape(2, 3))
case(T + "permute_3d", "permute axes of a 3-d array", "permute(reshape(iota(24), 2, 3, 4), 2, 0, 1)",
     np.transpose(np.arange(24).reshape(2, 3, 4), (2, 0, 1)))
case(T + "permute_2d", "permute(m, 1, 0) is transpose", M + "permute(m, 1, 0)", m.T)
case(T + "matmul", "matrix product", "[[1, 2], [3, 4]] @ [[5, 6], [7, 8]]",
     L([[1, 2], [3, 4]]) @ L([[5, 6], [7, 8]]))
case(T + "matmul_rect", "2x3 @ 3x2", M + "m @ transpose(m)", m @ m.T)
case(T + "matmul_float", "f32 matrix product",
     "[[0.5, 1.0], [2.0, -1.0]] @ [[2.0, 0.0], [1.0, 4.0]]",
     L([[0.5, 1.0], [2.0, -1.0]]) @ L([[2.0, 0.0], [1.0, 4.0]]))
case(T + "matmul_vec", "matrix @ vector (numpy)", M + "m @ [1, 0, -1]", m @ L([1, 0, -1]))
case(T + "matmul_mixed", "int matrix @ float matrix is f32", M + "m @ ones(3, 2)",
     m.astype(F32) @ np.ones((3, 2), F32))

# ---------------------------------------------------------------- indexing
T = "indexing/"
X = "x = [10, 20, 30, 40]\n"
case(T + "first", "x[0]", X + "x[0]", 10)
case(T + "last", "x[3]", X + "x[3]", 40)
case(T + "negative", "a negative index counts from the end (numpy)", X + "x[-1]", 40)
case(T + "slice", "x[a:b]", X + "x[1:3]", L([20, 30]))
case(T + "slice_empty", "an empty slice", X + "x[2:2]", np.array([], I64))
case(T + "slice_open_start", "x[:b] (numpy)", X + "x[:2]", L([10, 20]))
case(T + "slice_open_end", "x[a:] (numpy)", X + "x[2:]", L([30, 40]))
case(T + "row", "m[i] is row i", M + "m[1]", m[1])
case(T + "elem", "m[i, j] is one element", M + "m[1, 2]", 6)
case(T + "chained", "m[i][j]", M + "m[0][1]", 2)
case(T + "mask", "x[mask] is filter", X + "x[x > 15]", L([20, 30, 40]))
case(T + "expr_index", "an index may be an expression", X + "x[1 + 1]", 30)
case(T + "float_elem", "indexing a float vector", "y = [0.5, 1.5, 2.5]\ny[1]", s32(1.5))
case(T + "index_expr_result", "indexing the result of an expression", X + "(x * 2)[1]", 40)
case(T + "iota_slice", "a slice of iota", "iota(10)[3:7]", np.arange(3, 7))
case(T + "slice_sum", "sum of a slice", X + "sum(x[1:3])", 50)
case(T + "float_row", "a row of a float matrix", MF + "m[1]", mfl[1])
case(T + "bool_elem", "an element of a bool vector", "b = [true, false]\nb[1]", False)
case(T + "row_of_3d", "x[i] of a 3-d array is a matrix", "t = reshape(iota(12), 2, 2, 3)\nt[1]",
     np.arange(12).reshape(2, 2, 3)[1])

# ---------------------------------------------------------------- make
T = "make/"
case(T + "iota", "iota(n) is 0..n-1", "iota(5)", np.arange(5))
case(T + "iota_empty", "iota(0) is empty", "iota(0)", np.arange(0))
case(T + "iota_float_size", "sizes accept integral floats", "iota(3.0)", np.arange(3))
case(T + "zeros", "zeros is f32", "zeros(3)", np.zeros(3, F32))
case(T + "zeros_mat", "zeros(r, c)", "zeros(2, 3)", np.zeros((2, 3), F32))
case(T + "ones", "ones", "ones(3)", np.ones(3, F32))
case(T + "ones_mat", "ones(r, c)", "ones(2, 2)", np.ones((2, 2), F32))
case(T + "fill_int", "fill(7, 3)", "fill(7, 3)", L([7, 7, 7]))
case(T + "fill_float_mat", "fill(2.5, 2, 2)", "fill(2.5, 2, 2)", np.full((2, 2), 2.5, F32))
case(T + "fill_bool", "fill(true, 2)", "fill(true, 2)", L([True, True]))
case(T + "rand_shape", "rand(r, c) has shape [r c]", "shape(rand(3, 4))", L([3, 4]))
case(T + "rand_len_float", "rand(1e3) has 1000 elements", "len(rand(1e3))", 1000)
case(T + "rand_range", "rand is in [0, 1)", "r = rand(100000)\nall(r >= 0) and all(r < 1)", True)
case(T + "rand_mean", "rand's mean is near 0.5", "abs(mean(rand(100000)) - 0.5) < 0.01", True)
case(T + "rand_var", "rand's variance is near 1/12", "abs(var(rand(100000)) - 1/12) < 0.005", True)
case(T + "randn_mean", "randn's mean is near 0", "abs(mean(randn(100000))) < 0.02", True)
case(T + "randn_std", "randn's std is near 1", "abs(std(randn(100000)) - 1) < 0.02", True)
case(T + "randn_shape", "randn(r, c) has shape [r c]", "shape(randn(2, 5))", L([2, 5]))
case(T + "randn_tails", "randn has values on both sides of 0",
     "r = randn(10000)\nany(r < -1) and any(r > 1)", True)
case(T + "seed_rand", "seed makes rand reproducible",
     "seed(1)\na = rand(5)\nseed(1)\nb = rand(5)\nall(a == b)", True)
case(T + "seed_randn", "seed makes randn reproducible",
     "seed(42)\na = randn(100, 3)\nseed(42)\nb = randn(100, 3)\nall(a == b)", True)
case(T + "seed_differs", "different seeds give different numbers",
     "seed(1)\na = rand(5)\nseed(2)\nb = rand(5)\nany(a != b)", True)
case(T + "rand_advances", "consecutive rand calls differ", "seed(3)\na = rand(5)\nb = rand(5)\nany(a != b)",
     True)
case(T + "seed_prints_nothing", "seed prints nothing", "seed(7)\n1", 1)
case(T + "rand_distinct", "rand values are not all equal", "r = rand(1000)\nmax(r) > min(r)", True)

# ---------------------------------------------------------------- shape
T = "shape/"
case(T + "len_vec", "len of a vector", "len([1, 2, 3])", 3)
case(T + "len_mat", "len of a matrix is its number of rows", M + "len(m)", 2)
case(T + "size_mat", "size is the number of elements", M + "size(m)", 6)
case(T + "shape_mat", "shape of a matrix", M + "shape(m)", L([2, 3]))
case(T + "shape_vec", "shape of a vector", "shape([1, 2, 3])", L([3]))
case(T + "shape_3d", "shape of a 3-d array", "shape(reshape(iota(24), 2, 3, 4))", L([2, 3, 4]))
case(T + "len_empty", "len of an empty vector", "len(iota(0))", 0)
case(T + "shape_transpose", "shape of a transpose", M + "shape(transpose(m))", L([3, 2]))
case(T + "size_filter", "size of a data-dependent result", "x = iota(10)\nsize(filter(x, x > 6))", 3)
case(T + "shape_matmul", "shape of a matrix product", "shape(zeros(2, 3) @ zeros(3, 5))", L([2, 5]))
case(T + "size_3d", "size of a 3-d array", "size(zeros(2, 3, 4))", 24)
case(T + "shape_arith", "shape arithmetic", M + "size(m) / len(m)", 3.0)

# ---------------------------------------------------------------- io
T = "io/"
DATA = {
    "i32_mat.npy": np.array([[1, -2, 3], [2147483647, 0, -2147483648]], I32),
    "f64_vec.npy": np.array([0.1, 16777217.0, -2.5], F64),
    "f32_vec.npy": np.array([0.5, 1.25, -3.0], F32),
    "bool_vec.npy": np.array([True, False, True, True]),
    "i64_3d.npy": np.arange(12, dtype=I64).reshape(2, 3, 2),
}
case(T + "load_i32", "load an i32 matrix written by numpy", 'load("data/i32_mat.npy")', DATA["i32_mat.npy"])
case(T + "load_i32_dtype", "a loaded i32 array stays i32 (wraps on + 1)",
     'x = load("data/i32_mat.npy")\nx[1] + 1', DATA["i32_mat.npy"][1] + I32(1))
case(T + "load_f64", "load an f64 vector (f64 precision kept)", 'load("data/f64_vec.npy")',
     DATA["f64_vec.npy"])
case(T + "load_f32", "load an f32 vector", 'load("data/f32_vec.npy")', DATA["f32_vec.npy"])
case(T + "load_bool", "load a bool vector", 'load("data/bool_vec.npy")', DATA["bool_vec.npy"])
case(T + "load_3d", "load a 3-d i64 array", 'load("data/i64_3d.npy")', DATA["i64_3d.npy"])
case(T + "load_sum", "compute on a loaded array", 'sum(load("data/i64_3d.npy"))', 66)
for nm, src, val in [
        ("f32", "[0.5, -1.25, 3.0]", L([0.5, -1.25, 3.0])),
        ("f64", "f64([1, 2]) / 3", np.array([1, 2]) / 3),
        ("i32", "i32([7, -8, 2147483647])", np.array([7, -8, 2147483647], I32)),
        ("i64", "[10000000000, -1]", L([10000000000, -1])),
        ("bool", "[true, false, false]", L([True, False, False])),
        ("mat", "[[1.5, 2.5], [3.5, 4.5]]", L([[1.5, 2.5], [3.5, 4.5]])),
        ("3d", "reshape(iota(8), 2, 2, 2)", np.arange(8).reshape(2, 2, 2))]:
    f = '"/tmp/gk_golden_io_%s.npy"' % nm
    case(T + "roundtrip_" + nm, "save then load gives the same %s array" % nm,
         "x = %s\nsave(%s, x)\ny = load(%s)\ny\nall(y == x)" % (src, f, f), val, True)
case(T + "save_expr", "save a computed expression, then load it",
     'save("/tmp/gk_golden_io_expr.npy", iota(5) * 2)\nload("/tmp/gk_golden_io_expr.npy")',
     np.arange(5) * 2)
case(T + "save_prints_nothing", "save prints nothing", 'save("/tmp/gk_golden_io_quiet.npy", [1, 2])',)
case(T + "roundtrip_f32_dtype", "a saved f32 array loads as f32",
     'save("/tmp/gk_golden_io_f32b.npy", zeros(2))\nload("/tmp/gk_golden_io_f32b.npy") + 16777217 - 16777216',
     np.zeros(2, F32))

# ---------------------------------------------------------------- print
T = "print/"
case(T + "print_fn", "print(x) prints x", "print([1, 2, 3])", L([1, 2, 3]))
case(T + "print_scalar", "print of a scalar", "print(3)", 3)
case(T + "print_then_expr", "print and a bare expression both print", "print(1)\n2", 1, 2)
case(T + "scalar_45", "45.0 prints as 45.0", "45.0", s32(45.0))
case(T + "scalar_third", "1/3 prints 6 significant digits", "1 / 3", 1 / 3)
case(T + "scalar_round_6", "123456.7 prints %.6g then .0", "123456.7", s32(123456.7))
case(T + "scalar_1e5neg", "1e-5 prints as 1e-05", "0.00001", s32(1e-5))
case(T + "scalar_neg_float", "a negative float scalar", "-2.5", s32(-2.5))
case(T + "scalar_big_int", "large integers print in full", "2 ** 40", 2 ** 40)
case(T + "scalar_inf", "inf as a scalar", "x = [1.0]\nmax(x / 0.0)", INF)
case(T + "scalar_neg_inf", "-inf as a scalar", "x = [1.0]\nmin(-x / 0.0)", -INF)
case(T + "scalar_bool", "a bool scalar from a reduction", "all([true])", True)
case(T + "float_vec", "f32 0.1 0.2 0.3", "[0.1, 0.2, 0.3]", L([0.1, 0.2, 0.3]))
case(T + "f64_vec_sum", "f64 0.1 + 0.2 prints 0.3", "f64([1, 2]) / 10 + 0.2",
     np.array([1, 2]) / 10 + 0.2)
case(T + "float_integral_vec", "integral floats print with a trailing dot", "[1.0, 2.0, 3.0]",
     L([1.0, 2.0, 3.0]))
case(T + "mixed_magnitude", "mixed magnitudes switch to exponent notation", "[1e-8, 1.0]",
     L([1e-8, 1.0]))
case(T + "big_magnitude", "large values use exponent notation", "[1e9, 1.0, 2.5]", L([1e9, 1.0, 2.5]))
case(T + "small_and_large", "1e-3 and 1e3", "[0.001, 1000.0]", L([0.001, 1000.0]))
case(T + "nan_inf_vec", "nan and inf in a vector", "x = [1.0, 0.0, 1.0, -1.0]\nx / [1.0, 0.0, 0.0, 0.0]",
     L([1.0, NAN, INF, -INF]))
case(T + "neg_ints", "negative ints are padded", "[-1, 10, -100]", L([-1, 10, -100]))
case(T + "bool_mat", "a bool matrix", "[[1, 2], [3, 4]] > 2", L([[1, 2], [3, 4]]) > 2)
case(T + "bool_all_true", "all-true bools are padded like True", "[true, true]", L([True, True]))
case(T + "float_mat", "a float matrix aligns its columns", "[[1.5, -2.0], [3.25, 4.0]]",
     L([[1.5, -2.0], [3.25, 4.0]]))
case(T + "int_mat_pad", "an int matrix pads to the widest element", "[[1, 200], [-30, 4]]",
     L([[1, 200], [-30, 4]]))
case(T + "three_d", "a 3-d array prints blocks separated by a blank line",
     "reshape(iota(8), 2, 2, 2)", np.arange(8).reshape(2, 2, 2))
case(T + "summarised", "more than 1000 elements are summarised with ...", "iota(1001)", np.arange(1001))
case(T + "not_summarised_1000", "exactly 1000 elements print in full", "iota(1000)", np.arange(1000))
case(T + "wrap_lines", "long vectors wrap at 75 columns", "iota(40)", np.arange(40))
case(T + "wrap_floats", "long float vectors wrap at 75 columns", "f64(iota(20)) / 7",
     np.arange(20) / 7)
case(T + "summarised_mat", "a tall matrix summarises rows", "reshape(iota(3003), 1001, 3)",
     np.arange(3003).reshape(1001, 3))
case(T + "summarised_wide", "a wide matrix summarises columns", "reshape(iota(2000), 2, 1000)",
     np.arange(2000).reshape(2, 1000))
case(T + "summarised_bool", "a long bool vector summarises", "iota(2000) > 1000",
     np.arange(2000) > 1000)
case(T + "summarised_float", "a long float vector summarises", "f64(iota(5000)) / 4",
     np.arange(5000) / 4)
case(T + "empty", "an empty array prints []", "zeros(0)", np.zeros(0, F32))
case(T + "column", "an Rx1 matrix", "reshape(iota(3), 3, 1)", np.arange(3).reshape(3, 1))
case(T + "i32_vec", "i32 prints like i64", "i32([1, -2, 3])", np.array([1, -2, 3], I32))
case(T + "f32_precision", "f32 values print at most 6 decimals", "[3.14159265, 2.71828182]",
     L([3.14159265, 2.71828182]))
case(T + "f64_precision", "f64 values print at most 6 decimals", "f64([1, 2]) / 3", np.array([1, 2]) / 3)
case(T + "neg_zero", "-0. prints as numpy does", "[0.0, -1.0] * 0.0", L([0.0, -0.0]))
case(T + "large_f32_ints", "large integral f32 values", "[100000.0, 2.0]", L([1e5, 2.0]))
case(T + "view_prints_matrix", "a rows view prints as its matrix", M + "rows(m) + 0", m)

# ---------------------------------------------------------------- functions
T = "functions/"
case(T + "simple", "a one-argument function", "fn double(x) = x * 2\ndouble(3)", 6)
case(T + "two_args", "a two-argument function on arrays", "fn add(a, b) = a + b\nadd([1, 2], [10, 20])",
     L([11, 22]))
case(T + "nested", "a function calling another", "fn f(x) = x + 1\nfn g(x) = f(x) * 10\ng(2)", 30)
case(T + "keyword", "a keyword argument after a positional one", "fn sub(a, b) = a - b\nsub(10, b=3)", 7)
case(T + "shadow", "parameters shadow globals", "x = 100\nfn f(x) = x + 1\nf(1)", 2)
case(T + "global_untouched", "calling a function leaves globals as they were",
     "x = 100\nfn f(x) = x + 1\ny = f(1)\nx", 100)
case(T + "rows_fn", "a function over a rows view",
     "fn rowsum(m) = sum(rows(m))\nrowsum([[1, 2], [3, 4]])", L([3, 7]))
case(T + "softmax_fn", "a user softmax matches the builtin",
     "fn sm(x) = exp(x - max(x)) / sum(exp(x - max(x)))\nx = [0.5, 1.0, -2.0]\nmax(abs(sm(x) - softmax(x))) < 1e-6",
     True)
case(T + "reuse", "a function used twice in one expression", "fn sq(x) = x * x\nsq(3) + sq(4)", 25)
case(T + "as_arg", "a function call as an argument of another", "fn sq(x) = x * x\nsqrt(sq(3.0) + sq(4.0))",
     s32(5.0))
xr, yr = robust_input(lambda v: layernorm(v, eps=0.75), (4,), 40)
case(T + "with_builtin_kw", "a function passing a keyword to a builtin",
     "fn ln(x) = layernorm(x, eps=0.75)\nln(%s)" % lit(xr), yr)
case(T + "three_args", "three arguments", "fn lerp(a, b, t) = a + (b - a) * t\nlerp(1.0, 3.0, 0.25)",
     s32(1.5))
case(T + "define_prints_nothing", "a definition prints nothing", "fn f(x) = x",)
case(T + "redefine", "a later definition replaces an earlier one", "fn f(x) = x + 1\nfn f(x) = x + 2\nf(1)", 3)

# ---------------------------------------------------------------- statements
T = "statements/"
case(T + "semicolons", "; separates statements", "1; 2", 1, 2)
case(T + "assign_silent", "an assignment prints nothing", "x = 5")
case(T + "assign_then_expr", "assign, then print the name", "x = 5; x", 5)
case(T + "comment_line", "a comment line does nothing", "# nothing here\n7", 7)
case(T + "comment_trailing", "a comment after a statement", "1 + 1 # two", 2)
case(T + "blank_lines", "blank lines are fine", "\n\n3\n\n\n4\n", 3, 4)
case(T + "reassign", "reassignment", "x = 1\nx = x + 1\nx", 2)
case(T + "names", "names with underscores and digits", "a_1 = 3\nb2 = a_1 * 2\nb2", 6)
case(T + "crlf", "CRLF line endings are fine", "x = 2\nx * 3\n[1, 2]", 6, L([1, 2]), crlf=True)
case(T + "trailing_semicolon", "a trailing ; is fine", "x = 4;\nx;", 4)
case(T + "order", "statements print in order", "3\n1\n2", 3, 1, 2)
case(T + "indent", "leading spaces and tabs are fine", "  x = 1\n\ty = 2\n x + y", 3)
case(T + "many_on_line", "many statements on a line", "a = 1; b = 2; a + b; a * b", 3, 2)
case(T + "matrix_statement", "a matrix statement prints all its lines", "[[1, 2], [3, 4]]",
     L([[1, 2], [3, 4]]))
case(T + "no_final_newline", "a script without a final newline", "5", 5, final_newline=False)

# ---------------------------------------------------------------- errors
T = "errors/"
err(T + "unexpected_rparen", "a stray ) is a syntax error", "1 + )", 1, 5, "expected expression after '+'")
err(T + "unexpected_rparen_caret", "the error shows the source line and a caret", "x = (1 + 2))",
    1, 12, "unexpected ')'", caret=True)
err(T + "end_of_input", "an unclosed parenthesis at the end of the file", "x = (1 + 2", 1, 11,
    "unexpected end of input", final_newline=False)
err(T + "unterminated_string", "an unterminated string", 'load("abc', 1, 6, "unterminated string")
err(T + "unexpected_rbracket", "a stray ]", "x = 1]", 1, 6, "unexpected ']'")
err(T + "unexpected_comma", "a stray comma", "x = , 1", 1, 5, "expected expression after '='")
err(T + "unknown_name", "an unknown name", "x = 1\nx + q", 2, 5, "unknown name 'q'")
err(T + "unknown_name_caret", "an unknown name with its caret", "y = 2 * zz", 1, 9, "unknown name 'zz'",
    caret=True)
err(T + "unknown_function", "an unknown function", "foo(1)", 1, 1, "unknown function 'foo'")
err(T + "unknown_function_nested", "an unknown function inside an expression", "1 + bar(2)", 1, 5,
    "unknown function 'bar'; did you mean 'var'?")
err(T + "arity_sum", "sum takes one argument", "sum(1, 2)", 1, 1, "'sum' takes 1 argument, got 2")
err(T + "arity_hist", "hist takes 2 to 4 arguments", "hist([1, 2])", 1, 1,
    "'hist' takes 2 to 4 arguments, got 1")
err(T + "arity_where", "where takes 3 arguments", "where([true], [1])", 1, 1,
    "'where' takes 3 arguments, got 2")
err(T + "arity_clamp", "clamp takes 3 arguments", "clamp([1, 2])", 1, 1, "'clamp' takes 3 arguments, got 1")
err(T + "arity_exp", "exp takes 1 argument", "x = [1.0]\ny = exp(x, x)", 2, 5, "'exp' takes 1 argument, got 2")
err(T + "arity_scan", "scan takes 1 to 2 arguments", "scan([1], sum, sum)", 1, 1,
    "'scan' takes 1 to 2 arguments, got 3")
err(T + "arity_user_fn", "a user function's arity is checked", "fn f(a, b) = a + b\nf(1)", 2, 1,
    "'f' takes 2 arguments, got 1")
err(T + "keyword_sum", "sum has no eps", "sum([1.0], eps=1)", 1, 1, "'sum' has no argument 'eps'")
err(T + "keyword_softmax", "softmax has no eps", "softmax([1.0], eps=0.1)", 1, 1,
    "'softmax' has no argument 'eps'")
err(T + "shapes_vec", "vectors of different lengths", "[1, 2, 3] + [1, 2, 3, 4]", 1, 11,
    "shapes [3] and [4] do not broadcast")
err(T + "shapes_mul", "shape error reported at the operator", "x = [1.0, 2.0]\ny = x * [1.0, 2.0, 3.0]",
    2, 7, "shapes [2] and [3] do not broadcast")
err(T + "shapes_mat_vec", "a vector that matches no axis of a matrix",
    "m = [[1, 2, 3], [4, 5, 6]]\nm + [1, 2]", 2, 3, "shapes [2, 3] and [2] do not broadcast")
err(T + "dtype_and", "and needs bools", "1.5 and true", 1, 5, "'and' needs bool operands, got f32")
err(T + "dtype_or", "or needs bools", "[1, 2] or [true, false]", 1, 8, "'or' needs bool operands, got i64")
err(T + "empty_max", "max of an empty array", "max(zeros(0))", 1, 1, "'max' of an empty array")
err(T + "empty_min", "min of an empty array", "x = [1, 2]\nmin(filter(x, x > 5))", 2, 1,
    "'min' of an empty array")
err(T + "empty_argmax", "argmax of an empty array", "argmax(iota(0))", 1, 1, "'argmax' of an empty array")
err(T + "index_range", "an index past the end", "x = [1, 2, 3]\nx[5]", 2, 2,
    "index 5 out of range for length 3")
err(T + "index_range_row", "a row index past the end", "m = [[1, 2], [3, 4]]\nm[2]", 2, 2,
    "index 2 out of range for length 2")
err(T + "file_missing", "load of a missing file", 'load("nope.npy")', 1, 1,
    "cannot open 'nope.npy': No such file or directory")
err(T + "recursive", "recursion is rejected", "fn f(x) = f(x) + 1; f(1)", 1, 11, "recursive function 'f'")
err(T + "after_output", "statements before an error run and print", "1\n2\nq", 3, 1, "unknown name 'q'",
    outs=(1, 2))
err(T + "state_kept", "an error stops the script; earlier assignments printed", "x = 3\nx\nx + nope", 3, 5,
    "unknown name 'nope'", outs=(3,))


# ---------------------------------------------------------------- edge cases (second batch)
T = "print/"
case(T + "f32_1e16", "a huge f32 value", "[1e16]", L([1e16]))
case(T + "f32_1e8_boundary", "1e8 switches to exponent notation", "[1e8, 1.0]", L([1e8, 1.0]))
case(T + "f32_1e7", "1e7 with 1.0", "[1e7, 1.0]", L([1e7, 1.0]))
case(T + "f32_1e-4_boundary", "a value of 1e-4 with 1.0", "[0.0001, 1.0]", L([1e-4, 1.0]))
case(T + "f32_small_mixed", "1.1e-4 with 1.0", "[0.00011, 1.0]", L([1.1e-4, 1.0]))
case(T + "f32_big_fraction", "123456789.0 in an f32 array", "[123456789.0]", L([123456789.0]))
case(T + "summarised_square", "a 100x100 matrix summarises both axes", "reshape(iota(10000), 100, 100)",
     np.arange(10000).reshape(100, 100))
case(T + "summarised_3d", "a large 3-d array summarises", "reshape(iota(2000), 10, 20, 10)",
     np.arange(2000).reshape(10, 20, 10))
case(T + "wrap_matrix_rows", "matrix rows wrap at 75 columns", "reshape(f64(iota(30)) / 7, 3, 10)",
     np.arange(30).reshape(3, 10) / 7)
case(T + "bool_3d", "a 3-d bool array", "reshape(iota(8), 2, 2, 2) % 3 == 0",
     np.arange(8).reshape(2, 2, 2) % 3 == 0)
case(T + "nan_mat", "nan and inf in a matrix", "m = [[1.0, 0.0], [-1.0, 2.5]]\nm / [[1.0, 0.0], [0.0, 1.0]]",
     L([[1.0, 0.0], [-1.0, 2.5]]) / L([[1.0, 0.0], [0.0, 1.0]]))
case(T + "i32_min", "the smallest i32", "i32([-2147483647]) - 1", np.array([-2147483648], I32))
case(T + "scalar_neg_zero", "-0.0 as a scalar", "-0.0 * 1", s32(-0.0))
case(T + "scalar_small", "0.0001 as a scalar", "0.0001", s32(1e-4))
case(T + "scalar_f64_nan", "an f64 nan scalar", "x = f64([0.0])\nsum(x / x)", NAN)
case(T + "neg_ints_wide", "ints of many widths", "[-5, 123456789012, 7]", L([-5, 123456789012, 7]))
case(T + "all_neg_inf", "a vector of -inf", "log(zeros(3))", np.full(3, -INF, F32))

T = "statements/"
case(T + "value_semantics", "an assigned value does not change when its source name is reassigned",
     "x = [1, 2]\ny = x * 2\nx = [10, 20]\ny", L([2, 4]))
case(T + "self_assign", "x = x + x", "x = iota(3)\nx = x + x\nx", L([0, 2, 4]))
case(T + "lazy_chain", "a long chain across statements", "a = iota(4)\nb = a * 2\nc = b + a\nd = c - 1\nd",
     np.arange(4) * 3 - 1)
case(T + "fn_then_var", "a function applied to an expression of a variable",
     "fn f(x) = x * 2\nx = 5\nf(x + 1)", 12)

T = "arithmetic/"
case(T + "i32_mul_wrap", "i32 multiplication wraps", "i32([65536]) * 65536", np.array([0], I32))
case(T + "i32_neg_min", "negating the smallest i32 wraps", "-(i32([-2147483647]) - 1)",
     -np.array([-2147483648], I32))
case(T + "int_div_zero_nan", "0 / 0 on ints is nan, 1 / 0 is inf", "[0, 1] / 0", np.array([0, 1]) / 0)
case(T + "float_mod_zero", "float % 0.0 is nan (numpy)", "[5.0] % 0.0", np.mod(L([5.0]), F32(0)))
case(T + "exp_overflow", "exp overflows to inf in f32", "exp([100.0])", np.exp(L([100.0])))

T = "elementwise/"
case(T + "abs_i32_min", "abs of the smallest i32 wraps (numpy)", "abs(i32([-2147483647]) - 1)",
     np.abs(np.array([-2147483648], I32)))
case(T + "sign_nan", "sign of nan is nan", "x = [0.0, 2.0]\nsign(x / x)", L([NAN, 1.0]))
case(T + "clamp_nan", "clamp keeps nan (numpy clip)", "x = [0.0, 2.0]\nclamp(x / x, 0.0, 0.5)", L([NAN, 0.5]))
case(T + "round_f64", "round of f64 halves goes to even", "round(f64([0.5, 1.5, 2.5, -2.5]))",
     np.round(np.array([0.5, 1.5, 2.5, -2.5])))
case(T + "where_bool_mat", "where on matrices", "m = [[1, 2], [3, 4]]\nwhere(m > 2, m, -m)",
     np.where(L([[1, 2], [3, 4]]) > 2, L([[1, 2], [3, 4]]), -L([[1, 2], [3, 4]])))

T = "normalize/"
case(T + "softmax_neg_inf", "softmax with a -inf entry gives it 0", "softmax(log([0.0, 1.0]))", L([0.0, 1.0]))
case(T + "softmax_one", "softmax of one element is 1", "softmax([5.0])", L([1.0]))
case(T + "layernorm_const", "layernorm of a constant vector is 0", "layernorm([2.0, 2.0, 2.0])",
     L([0.0, 0.0, 0.0]))

T = "reduce/"
case(T + "logsumexp_neg_inf", "logsumexp of all -inf is -inf (log(sum(exp)))", "logsumexp(log([0.0, 0.0]))",
     -INF)
case(T + "max_neg_inf", "max of -inf values", "max(log([0.0, 0.0]))", -INF)
case(T + "argmax_all_nan", "argmax of all NaN is 0", "x = [0.0, 0.0]\nargmax(x / x)", 0)
case(T + "var_const", "var of a constant is 0", "var([3.0, 3.0, 3.0])", s32(0.0))
case(T + "std_rows_one_col", "std per row of a one-column matrix", "std(rows(reshape([1.0, 2.0], 2, 1)))",
     L([0.0, 0.0]))
case(T + "two_reductions", "two reductions of one input in one expression", "x = [1, 5, 3]\nsum(x) + max(x)", 14)
case(T + "sum_exp_shifted", "sum(exp(x - max(x)))", "x = [0.0, 1.0, 2.0]\nsum(exp(x - max(x)))",
     s32(np.exp(np.array([-2.0, -1.0, 0.0])).sum()))
case(T + "mean_rows_1xn", "mean per row of a 1xN matrix", "mean(rows([[1, 2, 3, 4]]))", np.array([2.5]))
case(T + "sum_transposed_rows", "row sums of a transpose are column sums", M + "sum(rows(transpose(m)))",
     m.sum(0))
case(T + "rows_then_cols", "a rows-centred matrix then column maxima",
     M + "c = rows(m) - mean(rows(m))\nmax(cols(c))", (m - m.mean(1, keepdims=True)).max(0))

T = "data/"
case(T + "hist_constant", "hist of identical values without a range (numpy: x +- 0.5)", "hist([2, 2, 2], 3)",
     np.histogram(L([2, 2, 2]), 3)[0].astype(I64))
case(T + "hist_one_bin", "hist with one bin", "hist([0.5, 3.0, -1.0], 1)",
     np.histogram(L([0.5, 3.0, -1.0]), 1)[0].astype(I64))
case(T + "partition_all_false", "partition with an all-false mask keeps order",
     "x = [3, 1, 2]\npartition(x, x > 5)", L([3, 1, 2]))
case(T + "reshape_transpose", "reshape of a transpose uses its row-major order", M + "reshape(transpose(m), 6)",
     m.T.reshape(6))
case(T + "transpose_row", "a row of a transpose", M + "transpose(m)[1]", m.T[1])
case(T + "filter_other_mask", "filter by a mask computed from another array",
     "x = [1, 2, 3, 4]\ny = [0.5, -1.0, 2.0, -3.0]\nfilter(x, y > 0.0)", L([1, 3]))
case(T + "matmul_identity_f32", "f32 matmul with ones", "ones(2, 3) @ ones(3, 4)", np.full((2, 4), 3.0, F32))
case(T + "permute_identity", "permute with the identity order", "permute(reshape(iota(6), 1, 2, 3), 0, 1, 2)",
     np.arange(6).reshape(1, 2, 3))

T = "indexing/"
case(T + "slice_of_slice", "a slice of a slice", "x = iota(10)\nx[2:8][1:3]", np.arange(10)[2:8][1:3])
case(T + "slice_2d_rows", "a slice of a matrix takes rows (numpy)", "m = reshape(iota(12), 4, 3)\nm[1:3]",
     np.arange(12).reshape(4, 3)[1:3])
case(T + "negative_row", "m[-1] is the last row (numpy)", M + "m[-1]", m[-1])
case(T + "elem_negative", "m[-1, -1] is the last element (numpy)", M + "m[-1, -1]", 6)

T = "functions/"
case(T + "fn_of_fn_result_view", "a function returning a rows view used by a reduction",
     "fn centre(m) = rows(m) - mean(rows(m))\nsum(rows(centre([[1, 2, 3], [4, 6, 8]])) ** 2)",
     ((lambda a: ((a - a.mean(1, keepdims=True)) ** 2).sum(1))(L([[1, 2, 3], [4, 6, 8]]))))
case(T + "fn_scalar_and_array", "a function works for scalars and arrays", "fn sq(x) = x * x\nsq(3)\nsq([1, 2])",
     9, L([1, 4]))

T = "errors/"
err(T + "fn_body_unknown", "an unknown name inside a function body", "fn f(x) = x + q\nf(1)", 1, 15,
    "unknown name 'q'")
err(T + "fn_body_dtype", "a dtype error inside a function body", "fn f(a, b) = a and b\nf(1.5, true)", 1, 16,
    "'and' needs bool operands, got f32")
err(T + "keyword_user_fn", "a user function has no such argument", "fn f(a) = a\nf(1, z=2)", 2, 1,
    "'f' has no argument 'z'")
err(T + "arity_iota", "iota takes 1 argument", "iota(1, 2)", 1, 1, "'iota' takes 1 argument, got 2")
err(T + "arity_softmax", "softmax takes 1 argument", "softmax([1.0], [2.0])", 1, 1,
    "'softmax' takes 1 argument, got 2")
err(T + "shapes_rows_view", "a vector matching neither axis of a rows(m) view",
    "m = [[1, 2, 3], [4, 5, 6]]\nrows(m) + [1, 2, 3, 4]", 2, 9, "shapes [2, 3] and [4] do not broadcast")
err(T + "index_negative_range", "a negative index past the start", "x = [1, 2, 3]\nx[-4]", 2, 2,
    "index -4 out of range for length 3")
err(T + "unexpected_eq", "a doubled =", "x = = 1", 1, 5, "expected expression after '='")
err(T + "dtype_not", "not needs a bool (wording not fixed by the brief; gk's)", "not 1.5", 1, 1,
    "'not' needs a bool operand, got f32")

# ==================================================================== write
def main():
    check_only = "--check" in sys.argv
    if FRAGILE:
        print("fragile (1 ulp changes the text):", ", ".join(FRAGILE), file=sys.stderr)
    seen = set()
    for path, _ in CASES:
        assert path not in seen, path
        seen.add(path)
    if check_only:
        print("%d cases" % len(CASES))
        return
    for path, text in CASES:
        full = os.path.join(OUT, path + ".gk")
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(text.encode())
    os.makedirs(os.path.join(OUT, "io", "data"), exist_ok=True)
    for name, arr in DATA.items():
        np.save(os.path.join(OUT, "io", "data", name), arr)
    print("wrote %d cases" % len(CASES))


if __name__ == "__main__":
    main()
