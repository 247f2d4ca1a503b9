/*
** compiler/build.c -- the checker: turns statements into typed graph nodes.
**
** Every expression becomes a cval (a node with its dtype and shape, its
** view -- rows(m) / cols(m) -- and whether it is a weakly typed literal).
** Names, arities, dtypes and shapes are checked here, before anything runs,
** and every error carries the location of the token it is about.  Builtins
** are table-driven (builtins[] below); composite ones (softmax, layernorm,
** var, ...) are written in terms of the primitive ops so that fusion sees
** through them.  User functions are inlined at each call.
**
** Dtype rules (docs/language.md): literals are weak (an int literal takes
** the other operand's integer type, a float literal its float type); bool <
** int < float; int->float gives f32 for bool/i32 and f64 for i64; int with
** float gives the float's type; f32 with f64 gives f64.
*/
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include "compiler/cc_int.h"
#include "runtime/host.h"
#include "kernels/gk_scalar.h"

#define CC_MAX_EVAL_DEPTH (4 * LANG_MAX_DEPTH) /* recursion of the checker, user functions included */

/* ------------------------------------------------------------ small helpers */

static int kind_of(gk_dtype t) { return rt_dtype_info[t].kind; }
static gk_dtype to_float(gk_dtype t) { return (t == GK_I64 || t == GK_F64) ? GK_F64 : GK_F32; }

void cc_shape_str(const rt_node *x, char *buf, size_t len) {
  size_t o = 0;
  o += (size_t)snprintf(buf + o, len - o, "[");
  for (int i = 0; i < x->ndim && o < len; i++)
    o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)x->shape[i]);
  if (o < len) snprintf(buf + o, len - o, "]");
}

static const char *tname(gk_dtype t) { return rt_dtype_name(t); }

static rt_node blank(int op, gk_dtype t, int ndim, const int64_t *shape) {
  rt_node r;
  memset(&r, 0, sizeof r);
  r.op = (uint8_t)op; r.t = t; r.ndim = ndim; r.axis = -1;
  if (ndim) memcpy(r.shape, shape, sizeof(int64_t) * (size_t)ndim);
  return r;
}

static rt_node *mkconst(cc_session *s, gk_dtype t, double f, int64_t i, int ndim, const int64_t *shape) {
  rt_node r = blank(RT_CONST, t, ndim, shape);
  if (rt_is_float(t)) r.c.f = f;   /* f32 constants keep the literal's double: a weak literal meeting f64 stays exact */
  else if (t == GK_BOOL) r.c.i = i != 0;
  else if (t == GK_I32) r.c.i = (int32_t)i;
  else r.c.i = i;
  return cc_node(s, &r);
}

/* x as a strong value: an f32 constant holds its float's value (a weak f32
** literal keeps the literal's double, so that meeting f64 it stays exact;
** f32(0.3) or fill(0.3, n) is the float nearest 0.3, also against f64). */
static rt_node *strong_const(cc_session *s, rt_node *x) {
  if (x && x->op == RT_CONST && x->t == GK_F32 && x->c.f != (double)(float)x->c.f)
    return mkconst(s, GK_F32, (double)(float)x->c.f, 0, x->ndim, x->shape);
  return x;
}

static double const_f(const rt_node *x) { return rt_is_float(x->t) ? x->c.f : (double)x->c.i; }
static int64_t const_i(const rt_node *x) { return rt_is_float(x->t) ? gk_f2i64(x->c.f) : x->c.i; }

static rt_node *unop(cc_session *s, int op, gk_dtype t, rt_node *a) {
  if (!a) return NULL;
  rt_node r = blank(op, t, a->ndim, a->shape);
  r.nin = 1; r.in[0] = a;
  return cc_node(s, &r);
}

static rt_node *cast(cc_session *s, rt_node *a, gk_dtype t) {
  if (!a || a->t == t) return a;
  if (a->op == RT_CONST) {   /* fold: the cpu backend's conversion (runtime/ops.c), from the
                               constant's double (a weak f32 literal keeps the literal's) or int64 */
    union { double f; int64_t i; float f32; int32_t i32; uint8_t b; } in, o;
    if (rt_is_float(a->t)) in.f = a->c.f; else in.i = a->c.i;
    rt_cast_loop(rt_is_float(a->t) ? GK_F64 : GK_I64, t, &in, &o, 1);
    switch (t) {
    case GK_BOOL: return mkconst(s, t, 0, o.b, a->ndim, a->shape);
    case GK_I32: return mkconst(s, t, o.i32, o.i32, a->ndim, a->shape);
    case GK_I64: return mkconst(s, t, (double)o.i, o.i, a->ndim, a->shape);
    case GK_F32: return mkconst(s, t, o.f32, 0, a->ndim, a->shape);
    default: return mkconst(s, t, o.f, 0, a->ndim, a->shape);
    }
  }
  return unop(s, RT_CAST, t, a);
}

static rt_node *binop_node(cc_session *s, int op, gk_dtype t, rt_node *a, rt_node *b) {
  if (!a || !b) return NULL;
  rt_node r = blank(op, t, a->ndim, a->shape);
  r.nin = 2; r.in[0] = a; r.in[1] = b;
  return cc_node(s, &r);
}

/* Broadcasts x to (ndim, shape): a VIEW with stride 0 on the broadcast dims
** (a CONST just takes the shape).  `per_row`: x is a vector of length
** shape[0] repeated along each row. */
static rt_node *bcast(cc_session *s, rt_node *x, int ndim, const int64_t *shape, int per_row) {
  if (!x) return NULL;
  if (x->ndim == ndim && !memcmp(x->shape, shape, sizeof(int64_t) * (size_t)ndim)) return x;
  if (x->op == RT_CONST) return mkconst(s, x->t, x->c.f, x->c.i, ndim, shape);
  rt_node r = blank(RT_VIEW, x->t, ndim, shape);
  r.nin = 1; r.in[0] = x;
  if (per_row) { r.vstride[0] = 1; r.vstride[1] = 0; return cc_node(s, &r); }
  int64_t st = 1;
  for (int d = ndim - 1, e = x->ndim - 1; d >= 0; d--, e--) {
    if (e >= 0 && x->shape[e] == shape[d] && shape[d] != 1) { r.vstride[d] = st; st *= x->shape[e]; }
    else { r.vstride[d] = 0; if (e >= 0) st *= x->shape[e]; }
  }
  return cc_node(s, &r);
}

static cval arr(rt_node *x, int view, int weak) {
  cval v; memset(&v, 0, sizeof v);
  v.kind = K_ARRAY; v.x = x; v.view = view; v.weak = weak;
  return v;
}

static cval none(void) { cval v; memset(&v, 0, sizeof v); v.kind = K_NONE; return v; }

static const char *kind_name(const cval *v) {
  switch (v->kind) {
  case K_STR: return "a string";
  case K_NONE: return "no value";
  case K_OPNAME: return "an operator name";
  }
  return "an array";
}

static int need_array(cc_session *s, const cval *v, lang_loc loc, const char *what) {
  if (v->kind == K_ARRAY && v->x) return GK_OK;
  if (v->kind == K_ARRAY)   /* a node that could not be made (out of memory, already reported) */
    return s->err->status ? s->err->status : cc_error(s, loc, GK_ENOMEM, "out of memory");
  if (!strcmp(what, "indexing")) return cc_error(s, loc, GK_ETYPE, "indexing needs an array, got %s", kind_name(v));
  return cc_error(s, loc, GK_ETYPE, "'%s' needs an array, got %s", what, kind_name(v));
}

/* Dtype both operands are converted to (see the rules at the top). */
static gk_dtype adapt(gk_dtype weak, gk_dtype strong) {
  int kw = kind_of(weak), ks = kind_of(strong);
  if (kw <= ks) return strong;
  if (kw == 1) return GK_I64;
  return to_float(strong);
}

static gk_dtype promote(const cval *a, const cval *b) {
  gk_dtype ta = a->x->t, tb = b->x->t;
  if (a->weak && !b->weak) return adapt(ta, tb);
  if (b->weak && !a->weak) return adapt(tb, ta);
  int ka = kind_of(ta), kb = kind_of(tb);
  if (ka != kb) return ka > kb ? ta : tb;
  return ta > tb ? ta : tb;   /* enum order: i32 < i64, f32 < f64 */
}

/* ------------------------------------------------------- elementwise binary */

static const char *opsym(int op) { return rt_op_info[op].sym; }

static int check_size(cc_session *s, lang_loc loc, int ndim, const int64_t *shape);

/* Result shape of broadcasting a and b (numpy's rule, plus one value per
** row of a rows() view).  Sets *pa / *pb to whether each is repeated per row. */
static int bshape(cc_session *s, lang_loc loc, const cval *a, const cval *b, int view,
                  int *ndim, int64_t *shape, int *pa, int *pb) {
  const rt_node *x = a->x, *y = b->x;
  *pa = *pb = 0;
  if (view == V_ROWS) {
    if (a->view == V_ROWS && b->view != V_ROWS && y->ndim == 1 && x->ndim == 2 && y->shape[0] == x->shape[0]) {
      *ndim = 2; shape[0] = x->shape[0]; shape[1] = x->shape[1]; *pb = 1; return GK_OK;
    }
    if (b->view == V_ROWS && a->view != V_ROWS && x->ndim == 1 && y->ndim == 2 && x->shape[0] == y->shape[0]) {
      *ndim = 2; shape[0] = y->shape[0]; shape[1] = y->shape[1]; *pa = 1; return GK_OK;
    }
  }
  int nd = x->ndim > y->ndim ? x->ndim : y->ndim;
  for (int d = 0; d < nd; d++) {
    int ex = d - (nd - x->ndim), ey = d - (nd - y->ndim);
    int64_t dx = ex >= 0 ? x->shape[ex] : 1, dy = ey >= 0 ? y->shape[ey] : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      char sa[128], sb[128];
      cc_shape_str(x, sa, sizeof sa); cc_shape_str(y, sb, sizeof sb);
      return cc_error(s, loc, GK_ETYPE, "shapes %s and %s do not broadcast", sa, sb);
    }
    shape[d] = dx == 1 ? dy : dx;
  }
  *ndim = nd;
  return check_size(s, loc, nd, shape);
}

static int join_view(cc_session *s, lang_loc loc, int va, int vb, int *v) {
  *v = V_NONE;
  if (va && vb && va != vb) return cc_error(s, loc, GK_ETYPE, "cannot combine a rows() view with a cols() view");
  *v = va ? va : vb;
  return GK_OK;
}

/* a OP b with dtype promotion and broadcasting. */
static int binop(cc_session *s, int op, cval a, cval b, lang_loc loc, cval *out) {
  if (need_array(s, &a, loc, opsym(op)) || need_array(s, &b, loc, opsym(op))) return s->err->status;
  int view = V_NONE;
  if (join_view(s, loc, a.view, b.view, &view)) return s->err->status;
  gk_dtype t = promote(&a, &b), rt;
  int rule = rt_op_info[op].rule;
  if (rule == RR_LOGIC) {
    if (a.x->t != GK_BOOL || b.x->t != GK_BOOL)
      return cc_error(s, loc, GK_ETYPE, "'%s' needs bool operands, got %s", opsym(op),
                      tname(a.x->t != GK_BOOL ? a.x->t : b.x->t));
    t = GK_BOOL;
  }
  if (rule == RR_ARITH && t == GK_BOOL) t = GK_I64;
  if (rule == RR_FLOAT) t = rt_is_float(t) ? t : to_float(t == GK_BOOL ? GK_I32 : t);
  if (op == RT_POW && !rt_is_float(t) && b.x->op == RT_CONST && const_i(b.x) < 0)
    return cc_error(s, loc, GK_ETYPE, "integers to negative integer powers are not allowed");
  rt = rule == RR_CMP || rule == RR_LOGIC ? GK_BOOL : t;
  int nd, pa, pb; int64_t shape[GK_MAX_DIMS];
  if (bshape(s, loc, &a, &b, view, &nd, shape, &pa, &pb)) return s->err->status;
  rt_node *x = bcast(s, cast(s, a.x, t), nd, shape, pa);
  rt_node *y = bcast(s, cast(s, b.x, t), nd, shape, pb);
  rt_node *z;
  /* numpy's power with a scalar exponent: x ** 2 is x * x, x ** 0.5 is
  ** sqrt(x), x ** -1 is 1 / x (bit for bit, also at -0.0 and -inf) */
  double e = op == RT_POW && rt_is_float(t) && b.x->op == RT_CONST && b.x->n == 1 ? const_f(b.x) : 0;
  if (e == 2) z = binop_node(s, RT_MUL, t, x, x);
  else if (e == 0.5) z = unop(s, RT_SQRT, t, x);
  else if (e == -1) z = binop_node(s, RT_DIV, t, mkconst(s, t, 1, 1, nd, shape), x);
  else z = binop_node(s, op, rt, x, y);
  if (!z) return s->err->status;
  *out = arr(z, view, a.weak && b.weak);
  return GK_OK;
}

/* Elementwise unary math; ints become floats for the transcendental ops. */
static int unary(cc_session *s, int op, cval a, lang_loc loc, const char *name, cval *out) {
  if (need_array(s, &a, loc, name)) return s->err->status;
  gk_dtype t = a.x->t, rt;
  switch (rt_op_info[op].rule) {
  case RR_LOGIC:
    if (t != GK_BOOL) return cc_error(s, loc, GK_ETYPE, "'%s' needs a bool operand, got %s", opsym(op), tname(t));
    break;
  case RR_ARITH: if (t == GK_BOOL) t = GK_I64; break;
  case RR_FLOAT: if (!rt_is_float(t)) t = to_float(t == GK_BOOL ? GK_I32 : t); break;
  default: break;   /* RR_SAME, RR_PRED: the operand's type */
  }
  rt = rt_op_info[op].rule == RR_PRED ? GK_BOOL : t;
  rt_node *x = cast(s, a.x, t);
  if (x && x->op == RT_CONST && (op == RT_NEG)) {
    rt_node *z = rt_is_float(t) ? mkconst(s, t, -x->c.f, 0, x->ndim, x->shape)
                                : mkconst(s, t, 0, (int64_t)(0u - (uint64_t)x->c.i), x->ndim, x->shape);
    if (!z) return s->err->status;
    *out = arr(z, a.view, a.weak);
    return GK_OK;
  }
  rt_node *z = unop(s, op, rt, x);
  if (!z) return s->err->status;
  *out = arr(z, a.view, a.weak && rt != GK_BOOL);
  return GK_OK;
}

/* ------------------------------------------------------------- reductions */


/* Reduces a (whole array, or per row / column of a view) with rop. */
static int reduce(cc_session *s, int rop, cval a, lang_loc loc, const char *name, cval *out) {
  if (need_array(s, &a, loc, name)) return s->err->status;
  rt_node *x = a.x;
  int axis = -1, ndim = 0;
  int64_t shape[GK_MAX_DIMS], len = x->n;
  if (a.view) {
    if (x->ndim != 2) {
      char sh[128]; cc_shape_str(x, sh, sizeof sh);
      return cc_error(s, loc, GK_ETYPE, "'%s' of a %s view needs a matrix, got %s %s", name,
                      a.view == V_ROWS ? "rows()" : "cols()", tname(x->t), sh);
    }
    axis = a.view == V_ROWS ? 1 : 0;
    ndim = 1;
    shape[0] = a.view == V_ROWS ? x->shape[0] : x->shape[1];
    len = a.view == V_ROWS ? x->shape[1] : x->shape[0];
    if (shape[0] == 0) len = 1;  /* no rows: nothing is reduced */
  }
  if (len == 0 && (rop == ROP_MAX || rop == ROP_MIN || rop == ROP_ARGMAX || rop == ROP_ARGMIN))
    return cc_error(s, loc, GK_EVALUE, "'%s' of an empty array", name);
  gk_dtype tin = x->t, tout;
  switch (rop) {
  case ROP_SUM: case ROP_PROD: if (!rt_is_float(tin)) tin = GK_I64; tout = tin; break;
  case ROP_ANY: case ROP_ALL: tin = GK_BOOL; tout = GK_BOOL; break;
  case ROP_ARGMAX: case ROP_ARGMIN: tout = GK_I64; break;
  case ROP_VAR: tin = rt_is_float(tin) ? tin : to_float(tin == GK_BOOL ? GK_I32 : tin); tout = tin; break;
  default: tout = tin; break;
  }
  rt_node *in = cast(s, x, tin);
  if (!in) return s->err->status;
  rt_node r = blank(RT_REDUCE, tout, ndim, shape);
  r.nin = 1; r.in[0] = in; r.rop = (uint8_t)rop; r.axis = (int8_t)axis;
  rt_node *z = cc_node(s, &r);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

/* Number of elements each result of a reduction of `a` combines. */
static int64_t reduced_len(const cval *a) {
  if (a->view == V_ROWS) return a->x->shape[1];
  if (a->view == V_COLS) return a->x->shape[0];
  return a->x->n;
}

static cval float_of(cc_session *s, cval a) {
  if (!rt_is_float(a.x->t)) a.x = cast(s, a.x, to_float(a.x->t == GK_BOOL ? GK_I32 : a.x->t));
  return a;
}

static cval konst(cc_session *s, gk_dtype t, double v) {
  int64_t i = v >= -0x1p63 && v < 0x1p63 ? (int64_t)v : 0;   /* -inf, nan: no integer value (UB to cast) */
  return arr(mkconst(s, t, v, i, 0, NULL), V_NONE, 1);
}


static int mean_of(cc_session *s, cval a, lang_loc loc, cval *out) {
  a = float_of(s, a);
  if (!a.x) return s->err->status;
  cval sm;
  if (reduce(s, ROP_SUM, a, loc, "mean", &sm)) return s->err->status;
  int64_t n = reduced_len(&a);
  return binop(s, RT_DIV, sm, konst(s, a.x->t, (double)n), loc, out);
}

static int var_of(cc_session *s, cval a, lang_loc loc, const char *name, cval *out) {
  a = float_of(s, a);
  if (!a.x) return s->err->status;
  return reduce(s, ROP_VAR, a, loc, name, out);
}

/* ------------------------------------------------------------- scalars */

/* The value of a 0-d (or one-element) array, computing it if needed. */
static int scalar_value(cc_session *s, const cval *v, lang_loc loc, const char *what, double *f, int64_t *i) {
  if (v->kind != K_ARRAY || v->x->n != 1)
    return cc_error(s, loc, GK_ETYPE, "%s must be a number", what);
  rt_node *x = v->x;
  if (x->op == RT_CONST) {
    if (f) *f = const_f(x);
    if (i) *i = const_i(x);
    return GK_OK;
  }
  int rc = cc_compute(s, &x, 1);
  if (rc) return rc;
  rc = rt_value_scalar(s->be, x->val, f, i);
  if (rc) return cc_error(s, loc, rc, "%s", s->be->err.msg);
  return GK_OK;
}

/* A dimension or count: a non-negative integer (integral floats accepted). */
static int dim_value(cc_session *s, const cval *v, lang_loc loc, const char *what, int64_t *d) {
  double f; int64_t i;
  if (scalar_value(s, v, loc, what, &f, &i)) return s->err->status;
  if (rt_is_float(v->x->t)) {
    if (f != f || f < 0 || f != floor(f) || f > 9.2e18) {
      char buf[64]; snprintf(buf, sizeof buf, "%g", f);
      if (f != f) snprintf(buf, sizeof buf, "nan");
      return cc_error(s, loc, GK_ETYPE, "%s must be a non-negative integer, got %s", what, buf);
    }
    i = (int64_t)f;
  }
  if (i < 0) return cc_error(s, loc, GK_ETYPE, "%s must be a non-negative integer, got %lld", what, (long long)i);
  *d = i;
  return GK_OK;
}

static int check_size(cc_session *s, lang_loc loc, int ndim, const int64_t *shape) {
  int64_t n; size_t b;
  rt_err e; rt_err_clear(&e);
  if (ndim > GK_MAX_DIMS) return cc_error(s, loc, GK_ELIMIT, "arrays have at most %d dimensions, got %d", GK_MAX_DIMS, ndim);
  if (rt_shape_count(ndim, shape, 8, &n, &b, &e)) return cc_error(s, loc, e.status, "%s", e.msg);
  return GK_OK;
}

/* ------------------------------------------------------------- builtins */

#define BUILTIN_PARAMS 6   /* parameters of one builtin */

/* A variadic builtin's parameters (concat's axis) are keyword-only: slot
** KW_SLOT(k) for parameter k, after every positional slot. */
#define KW_SLOT(k) (LANG_MAX_ARGS + (k))

typedef struct bargs {
  int n;                       /* positional + keyword slots filled (by parameter index; not KW_SLOTs) */
  cval v[LANG_MAX_ARGS + BUILTIN_PARAMS];
  int have[LANG_MAX_ARGS + BUILTIN_PARAMS];
  lang_loc loc[LANG_MAX_ARGS + BUILTIN_PARAMS];
  const ast *call;
} bargs;

typedef int (*builtin_fn)(cc_session *s, int code, bargs *a, lang_loc loc, cval *out);

typedef struct builtin {
  const char *name;
  int min, max;               /* positional arity; max -1 = variadic */
  const char *params[BUILTIN_PARAMS]; /* parameter names (keywords accepted), NULL-terminated when fewer */
  builtin_fn fn;
  int code;                   /* op or rop */
} builtin;

#define A(i) (a->v[i])

static int b_unary(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  return unary(s, code, A(0), loc, a->call->str, out);
}

static int b_cast(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, a->call->str)) return s->err->status;
  rt_node *x = strong_const(s, cast(s, A(0).x, (gk_dtype)code));   /* an explicit cast is strong */
  if (!x) return s->err->status;
  *out = arr(x, A(0).view, 0);
  return GK_OK;
}

static int b_binary(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  return binop(s, code, A(0), A(1), loc, out);
}

static int b_clamp(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  cval t;
  if (binop(s, RT_MAXIMUM, A(0), A(1), loc, &t)) return s->err->status;
  t.weak = A(0).weak;
  return binop(s, RT_MINIMUM, t, A(2), loc, out);
}

static int b_where(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  cval c = A(0), x = A(1), y = A(2);
  if (need_array(s, &c, loc, "where") || need_array(s, &x, loc, "where") || need_array(s, &y, loc, "where"))
    return s->err->status;
  int view = V_NONE, v2 = V_NONE;
  if (join_view(s, loc, x.view, y.view, &view) || join_view(s, loc, view, c.view, &v2)) return s->err->status;
  gk_dtype t = promote(&x, &y);
  int nd, pa, pb, nd2, pc, pd; int64_t sh[GK_MAX_DIMS], sh2[GK_MAX_DIMS];
  if (bshape(s, loc, &x, &y, v2, &nd, sh, &pa, &pb)) return s->err->status;
  cval tmp = arr(x.x, v2, 0);
  rt_node shp = blank(RT_CONST, t, nd, sh);
  tmp.x = &shp;
  if (bshape(s, loc, &c, &tmp, v2, &nd2, sh2, &pc, &pd)) return s->err->status;
  rt_node *cx = bcast(s, cast(s, c.x, GK_BOOL), nd2, sh2, pc);
  rt_node *xx = bcast(s, cast(s, x.x, t), nd2, sh2, pa);
  rt_node *yy = bcast(s, cast(s, y.x, t), nd2, sh2, pb);
  if (!cx || !xx || !yy) return s->err->status;
  rt_node r = blank(RT_WHERE, t, nd2, sh2);
  r.nin = 3; r.in[0] = cx; r.in[1] = xx; r.in[2] = yy;
  rt_node *z = cc_node(s, &r);
  if (!z) return s->err->status;
  *out = arr(z, v2, x.weak && y.weak);
  return GK_OK;
}

static int b_reduce(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  return reduce(s, code, A(0), loc, a->call->str, out);
}

static int b_count(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  cval nz;
  if (need_array(s, &A(0), loc, "count")) return s->err->status;
  if (A(0).x->t == GK_BOOL) nz = A(0);
  else if (binop(s, RT_NE, A(0), konst(s, GK_I64, 0), loc, &nz)) return s->err->status;
  nz.x = cast(s, nz.x, GK_I64);
  nz.view = A(0).view;
  return reduce(s, ROP_SUM, nz, loc, "count", out);
}

static int b_mean(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "mean")) return s->err->status;
  return mean_of(s, A(0), loc, out);
}

static int b_var(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, a->call->str)) return s->err->status;
  if (var_of(s, A(0), loc, a->call->str, out)) return s->err->status;
  if (code) return unary(s, RT_SQRT, *out, loc, "std", out);
  return GK_OK;
}

static int b_norm(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "norm")) return s->err->status;
  cval x = float_of(s, A(0)), sq, sm;
  if (!x.x || binop(s, RT_MUL, x, x, loc, &sq) || reduce(s, ROP_SUM, sq, loc, "norm", &sm)) return s->err->status;
  return unary(s, RT_SQRT, sm, loc, "norm", out);
}

/* max of x, made safe to subtract.  lse: non-finite maxima become 0
** (scipy's logsumexp); otherwise only -inf does (an all -inf row), so an
** infinite element makes its softmax NaN as in torch. */
static int safe_max(cc_session *s, cval x, lang_loc loc, const char *name, int lse, cval *out) {
  cval m, ok;
  if (reduce(s, ROP_MAX, x, loc, name, &m)) return s->err->status;
  if (lse) { ok = m; ok.x = unop(s, RT_ISFINITE, GK_BOOL, m.x); if (!ok.x) return s->err->status; }
  else if (binop(s, RT_GT, m, konst(s, m.x->t, -INFINITY), loc, &ok)) return s->err->status;
  bargs w; memset(&w, 0, sizeof w);
  w.v[0] = ok; w.v[1] = m; w.v[2] = konst(s, m.x->t, 0);
  w.call = NULL;
  return b_where(s, 0, &w, loc, out);
}

static int b_logsumexp(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "logsumexp")) return s->err->status;
  cval x = float_of(s, A(0)), m, d, e, sm, l;
  if (!x.x) return s->err->status;
  if (reduced_len(&x) == 0) {   /* log(0) = -inf, as numpy/scipy */
    cval z;
    if (reduce(s, ROP_SUM, x, loc, "logsumexp", &z)) return s->err->status;
    return unary(s, RT_LOG, z, loc, "logsumexp", out);
  }
  if (safe_max(s, x, loc, "logsumexp", 1, &m) || binop(s, RT_SUB, x, m, loc, &d) ||
      unary(s, RT_EXP, d, loc, "logsumexp", &e) || reduce(s, ROP_SUM, e, loc, "logsumexp", &sm) ||
      unary(s, RT_LOG, sm, loc, "logsumexp", &l))
    return s->err->status;
  return binop(s, RT_ADD, l, m, loc, out);
}

static int b_dot(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  cval p;
  if (need_array(s, &A(0), loc, "dot") || need_array(s, &A(1), loc, "dot")) return s->err->status;
  if (A(0).x->ndim != 1 || A(1).x->ndim != 1 || A(0).x->shape[0] != A(1).x->shape[0]) {
    char sa[128], sb[128]; cc_shape_str(A(0).x, sa, sizeof sa); cc_shape_str(A(1).x, sb, sizeof sb);
    return cc_error(s, loc, GK_ETYPE, "'dot' needs two vectors of one length, got %s and %s", sa, sb);
  }
  if (binop(s, RT_MUL, A(0), A(1), loc, &p)) return s->err->status;
  p.view = V_NONE;
  return reduce(s, ROP_SUM, p, loc, "dot", out);
}

static int rop_arg(cc_session *s, bargs *a, int i, int *rop) {
  *rop = ROP_SUM;
  if (!a->have[i]) return GK_OK;
  if (a->v[i].kind == K_OPNAME) { *rop = a->v[i].rop; return GK_OK; }
  return cc_error(s, a->loc[i], GK_ETYPE, "'%s' takes an operator: sum, prod, max or min", a->call->str);
}

static int b_scan(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  int rop;
  if (need_array(s, &A(0), loc, a->call->str) || rop_arg(s, a, 1, &rop)) return s->err->status;
  cval x = A(0);
  rt_node *in = x.x;
  int axis = -1;
  if (x.view) {
    if (in->ndim != 2) return cc_error(s, loc, GK_ETYPE, "'%s' of a view needs a matrix", a->call->str);
    axis = x.view == V_ROWS ? 1 : 0;
  } else if (in->ndim != 1) {
    /* numpy.cumsum without an axis scans the flattened array */
    rt_node r = blank(RT_RESHAPE, in->t, 1, &in->n);
    r.nin = 1; r.in[0] = in;
    in = cc_node(s, &r);
    if (!in) return s->err->status;
  }
  gk_dtype t = in->t;
  if (rt_rop_info[rop].acc == RA_WIDE && !rt_is_float(t)) t = GK_I64;   /* sum/prod: ints in i64 */
  in = cast(s, in, t);
  if (!in) return s->err->status;
  rt_node r = blank(RT_SCAN, t, in->ndim, in->shape);
  r.nin = 1; r.in[0] = in; r.rop = (uint8_t)rop; r.axis = (int8_t)axis; r.excl = (uint8_t)code;
  rt_node *z = cc_node(s, &r);
  if (!z) return s->err->status;
  *out = arr(z, x.view, 0);
  return GK_OK;
}

static int b_softmax(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  const char *name = a->call->str;
  if (need_array(s, &A(0), loc, name)) return s->err->status;
  cval x = float_of(s, A(0)), m, d, e, sm, l;
  if (!x.x) return s->err->status;
  if (reduced_len(&x) == 0) { *out = x; return GK_OK; }
  if (safe_max(s, x, loc, name, 0, &m) || binop(s, RT_SUB, x, m, loc, &d) || unary(s, RT_EXP, d, loc, name, &e) ||
      reduce(s, ROP_SUM, e, loc, name, &sm))
    return s->err->status;
  /* softmax is exp(x - m) * (1 / s), as torch's kernels compute it: one
  ** division a row, not one an element (an IEEE f32 division is ~10
  ** instructions; long rows' store phase ran 9-11% slower with it, NOTES.md
  ** session 13).  s >= 1 wherever the row has a finite maximum, so 1 / s
  ** neither overflows nor underflows; an all -inf row gives 0 * inf = NaN
  ** as 0 / 0 did.  Every backend computes this same graph. */
  cval rs;
  if (!code) return binop(s, RT_DIV, konst(s, sm.x->t, 1), sm, loc, &rs) || binop(s, RT_MUL, e, rs, loc, out)
                    ? s->err->status : GK_OK;
  if (unary(s, RT_LOG, sm, loc, name, &l)) return s->err->status;
  return binop(s, RT_SUB, d, l, loc, out);
}

/* gamma / beta apply per column of the normalized rows (numpy broadcasting). */
static int affine(cc_session *s, cval y, bargs *a, int ig, int ib, lang_loc loc, cval *out) {
  int view = y.view;
  /* gamma and beta run along the normalized axis: per column of rows(m)
  ** (numpy's broadcasting), per row of cols(m) */
  y.view = view == V_COLS ? V_ROWS : V_NONE;
  if (a->have[ig]) {
    cval g = a->v[ig]; g.view = V_NONE;
    if (binop(s, RT_MUL, y, g, loc, &y)) return s->err->status;
  }
  if (ib >= 0 && a->have[ib]) {
    cval b = a->v[ib]; b.view = V_NONE;
    if (binop(s, RT_ADD, y, b, loc, &y)) return s->err->status;
  }
  y.view = view;
  *out = y;
  return GK_OK;
}

static int eps_arg(cc_session *s, bargs *a, int i, cval x, cval *eps) {
  if (!a->have[i]) { *eps = konst(s, x.x->t, 1e-5); return GK_OK; }
  double f;
  if (scalar_value(s, &a->v[i], a->loc[i], "eps", &f, NULL)) return s->err->status;
  *eps = konst(s, x.x->t, f);
  return GK_OK;
}

static int b_layernorm(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "layernorm")) return s->err->status;
  cval x = float_of(s, A(0)), mu, v, eps, ve, r, d, y;
  if (!x.x) return s->err->status;
  if (reduced_len(&x) == 0) { *out = x; return GK_OK; }
  if (eps_arg(s, a, 3, x, &eps) || mean_of(s, x, loc, &mu) || var_of(s, x, loc, "layernorm", &v) ||
      binop(s, RT_ADD, v, eps, loc, &ve) || unary(s, RT_RSQRT, ve, loc, "layernorm", &r) ||
      binop(s, RT_SUB, x, mu, loc, &d) || binop(s, RT_MUL, d, r, loc, &y))
    return s->err->status;
  return affine(s, y, a, 1, 2, loc, out);
}

static int b_rmsnorm(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "rmsnorm")) return s->err->status;
  cval x = float_of(s, A(0)), sq, ms, eps, me, r, y;
  if (!x.x) return s->err->status;
  if (reduced_len(&x) == 0) { *out = x; return GK_OK; }
  if (eps_arg(s, a, 2, x, &eps) || binop(s, RT_MUL, x, x, loc, &sq) || mean_of(s, sq, loc, &ms) ||
      binop(s, RT_ADD, ms, eps, loc, &me) || unary(s, RT_RSQRT, me, loc, "rmsnorm", &r) ||
      binop(s, RT_MUL, x, r, loc, &y))
    return s->err->status;
  return affine(s, y, a, 1, -1, loc, out);
}

/* ------------------------------------------------------------- makers */

/* Dims from args first..: separate numbers, or one 1-d integer array. */
static int dims_of(cc_session *s, bargs *a, int first, lang_loc loc, int *ndim, int64_t *shape) {
  int nd = 0;
  if (a->n - first == 1 && a->v[first].kind == K_ARRAY && a->v[first].x->ndim == 1) {
    rt_node *x = a->v[first].x;
    if (rt_is_float(x->t) || x->t == GK_BOOL)
      return cc_error(s, a->loc[first], GK_ETYPE, "dimensions must be integers, got %s", tname(x->t));
    if (x->n > GK_MAX_DIMS)
      return cc_error(s, a->loc[first], GK_ELIMIT, "arrays have at most %d dimensions, got %lld", GK_MAX_DIMS, (long long)x->n);
    if (cc_compute(s, &x, 1)) return s->err->status;
    int64_t tmp[GK_MAX_DIMS];
    rt_value *v = x->val;
    if (v->where == RT_ON_HOST) memcpy(tmp, v->host, v->bytes);
    else if (s->be->read(s->be, v, tmp)) return cc_error(s, loc, s->be->err.status, "%s", s->be->err.msg);
    for (int i = 0; i < (int)x->n; i++) {
      int64_t d = x->t == GK_I32 ? ((int32_t *)tmp)[i] : tmp[i];
      if (d < 0) return cc_error(s, a->loc[first], GK_ETYPE, "dimension must be a non-negative integer, got %lld", (long long)d);
      shape[nd++] = d;
    }
  } else {
    if (a->n - first > GK_MAX_DIMS)
      return cc_error(s, loc, GK_ELIMIT, "arrays have at most %d dimensions, got %d", GK_MAX_DIMS, a->n - first);
    for (int i = first; i < a->n; i++)
      if (dim_value(s, &a->v[i], a->loc[i], "dimension", &shape[nd++])) return s->err->status;
  }
  *ndim = nd;
  return check_size(s, loc, nd, shape);
}

static int b_fillers(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  int nd; int64_t shape[GK_MAX_DIMS];
  if (dims_of(s, a, 0, loc, &nd, shape)) return s->err->status;
  rt_node *x = mkconst(s, GK_F32, code, code, nd, shape);
  if (!x) return s->err->status;
  *out = arr(x, V_NONE, 0);
  return GK_OK;
}

static int b_fill(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  int nd; int64_t shape[GK_MAX_DIMS];
  if (need_array(s, &A(0), loc, "fill")) return s->err->status;
  if (A(0).x->n != 1) return cc_error(s, a->loc[0], GK_ETYPE, "'fill' needs a single value");
  if (dims_of(s, a, 1, loc, &nd, shape)) return s->err->status;
  rt_node *v = A(0).x;
  gk_dtype t = v->t;
  if (A(0).weak && t == GK_I64) t = GK_I64;
  rt_node *x;
  if (v->op == RT_CONST) x = strong_const(s, mkconst(s, t, v->c.f, v->c.i, nd, shape));   /* fill's array is strong */
  else {
    rt_node r = blank(RT_VIEW, t, nd, shape);   /* all strides 0 */
    r.nin = 1; r.in[0] = v;
    x = cc_node(s, &r);
  }
  if (!x) return s->err->status;
  *out = arr(x, V_NONE, 0);
  return GK_OK;
}

static int b_iota(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  int64_t n;
  if (dim_value(s, &A(0), a->loc[0], "iota's length", &n) || check_size(s, loc, 1, &n)) return s->err->status;
  rt_node r = blank(RT_IOTA, GK_I64, 1, &n);
  rt_node *x = cc_node(s, &r);
  if (!x) return s->err->status;
  *out = arr(x, V_NONE, 0);
  return GK_OK;
}

static int b_rand(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  int nd; int64_t shape[GK_MAX_DIMS];
  if (dims_of(s, a, 0, loc, &nd, shape)) return s->err->status;
  rt_node r = blank(code ? RT_RANDN : RT_RAND, GK_F32, nd, shape);
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= shape[i];
  r.seed = s->seed; r.offset = s->rng_offset;
  rt_node *x = cc_node(s, &r);
  if (!x) return s->err->status;
  s->rng_offset += (uint64_t)n;
  *out = arr(x, V_NONE, 0);
  return GK_OK;
}

static int b_seed(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  int64_t v; double f;
  if (scalar_value(s, &A(0), a->loc[0], "the seed", &f, &v)) return s->err->status;
  /* a float seed must be an integer an int64 holds: nan, inf and 1e300 would
  ** all cast to one stream (numpy raises too) */
  if (rt_is_float(A(0).x->t) && !(f == floor(f) && f >= -9.2e18 && f <= 9.2e18)) {
    char buf[64]; snprintf(buf, sizeof buf, "%g", f);
    if (f != f) snprintf(buf, sizeof buf, "nan");
    return cc_error(s, a->loc[0], GK_EVALUE, "the seed must be an integer within int64, got %s", buf);
  }
  if (rt_is_float(A(0).x->t)) v = (int64_t)f;
  s->seed = (uint64_t)v;
  s->rng_offset = 0;
  *out = none();
  return GK_OK;
}

/* ------------------------------------------------------------- data movement */

/* A filter's result is copied out of its capacity buffer (the input's
** length) when it holds at most a quarter of it and the buffer would waste
** at least this many bytes; else the result is the buffer's prefix. */
#define FILTER_COPY_DOWN_BYTES ((int64_t)4 << 20)

/* One pass: the select kernel writes the selected elements into a buffer of
** the input's length and the backend reads back their count (val->count,
** the one sync the filter's length costs); the result is that prefix of the
** buffer, or a copy of it when the buffer is mostly waste. */
static int filter_pass(cc_session *s, rt_node *z, lang_loc loc, rt_node **out) {
  if (cc_compute(s, &z, 1)) return s->err->status;
  rt_value *cap = z->val;
  int64_t cnt = cap->count;
  size_t es = rt_dtype_size(z->t);
  if (cnt <= z->n / 4 && (int64_t)((size_t)(z->n - cnt) * es) >= FILTER_COPY_DOWN_BYTES) {
    rt_node r = blank(RT_VIEW, z->t, 1, &cnt);
    r.nin = 1; r.in[0] = z; r.vstride[0] = 1;
    rt_node *y = cc_node(s, &r);
    if (!y || cc_compute(s, &y, 1)) return s->err->status;
    *out = y;
    return GK_OK;
  }
  rt_value *v;
  if (rt_value_prefix(cap, cnt, &v)) return cc_error(s, loc, s->be->err.status, "%s", s->be->err.msg);
  *out = cc_input(s, v);
  rt_value_unref(v);
  return *out ? GK_OK : s->err->status;
}

static int select_op(cc_session *s, int op, cval x, cval m, lang_loc loc, const char *name, cval *out) {
  if (need_array(s, &x, loc, name) || need_array(s, &m, loc, name)) return s->err->status;
  if (m.x->t != GK_BOOL) return cc_error(s, loc, GK_ETYPE, "'%s' needs a bool mask, got %s", name, tname(m.x->t));
  if (m.x->n != x.x->n || (m.x->ndim != x.x->ndim && m.x->ndim != 1)) {
    char sa[128], sb[128]; cc_shape_str(x.x, sa, sizeof sa); cc_shape_str(m.x, sb, sizeof sb);
    return cc_error(s, loc, GK_ETYPE, "'%s': mask shape %s does not match %s", name, sb, sa);
  }
  int64_t n = x.x->n;
  rt_node *xv = x.x, *mv = m.x;
  if (xv->ndim != 1) { rt_node r = blank(RT_RESHAPE, xv->t, 1, &n); r.nin = 1; r.in[0] = xv; xv = cc_node(s, &r); }
  if (mv && mv->ndim != 1) { rt_node r = blank(RT_RESHAPE, GK_BOOL, 1, &n); r.nin = 1; r.in[0] = mv; mv = cc_node(s, &r); }
  if (!xv || !mv) return s->err->status;
  rt_node r = blank(op, xv->t, 1, &n);   /* a filter: its capacity */
  r.nin = 2; r.in[0] = xv; r.in[1] = mv;
  rt_node *z = cc_node(s, &r);
  if (!z || (op == RT_FILTER && filter_pass(s, z, loc, &z))) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

static int b_select(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  return select_op(s, code, A(0), A(1), loc, a->call->str, out);
}

static int b_hist(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  int64_t nb;
  if (need_array(s, &A(0), loc, "hist")) return s->err->status;
  if (dim_value(s, &A(1), a->loc[1], "the number of bins", &nb)) return s->err->status;
  if (nb < 1) return cc_error(s, a->loc[1], GK_ETYPE, "the number of bins must be at least 1");
  if (check_size(s, loc, 1, &nb)) return s->err->status;
  if (a->have[2] != a->have[3]) return cc_error(s, loc, GK_ETYPE, "'hist' needs both lo and hi, or neither");
  cval x = A(0);
  x.view = V_NONE;
  if (x.x->t == GK_BOOL) x.x = cast(s, x.x, GK_I64);
  rt_node *lo, *hi;
  if (a->have[2]) {
    double fl, fh;
    if (scalar_value(s, &A(2), a->loc[2], "lo", &fl, NULL) || scalar_value(s, &A(3), a->loc[3], "hi", &fh, NULL))
      return s->err->status;
    if (!(fl <= fh) || !isfinite(fl) || !isfinite(fh))
      return cc_error(s, a->loc[2], GK_EVALUE, "'hist' range [%g, %g] must be finite with lo <= hi",
                      isnan(fl) ? fabs(fl) : fl, isnan(fh) ? fabs(fh) : fh);   /* "nan", never "-nan" */
    /* numpy refuses bins without a finite width (the arithmetic is float32 for f32 data) */
    double w = fl == fh ? 1.0 : fh - fl;
    volatile float fw = (float)fh - (float)fl;
    if (!isfinite(w) || !(w / (double)nb > 0) || (x.x->t == GK_F32 && fl != fh && !(isfinite(fw) && fw / (float)nb > 0)))
      return cc_error(s, a->loc[2], GK_EVALUE, "hist: too many bins for the data range [%g, %g]: cannot create %lld finite-sized bins",
                      fl, fh, (long long)nb);
    lo = mkconst(s, GK_F64, fl, 0, 0, NULL);
    hi = mkconst(s, GK_F64, fh, 0, 0, NULL);
  } else if (x.x->n == 0) {
    lo = mkconst(s, GK_F64, 0, 0, 0, NULL);
    hi = mkconst(s, GK_F64, 1, 0, 0, NULL);
  } else {
    cval mn, mx;
    if (reduce(s, ROP_MIN, x, loc, "hist", &mn) || reduce(s, ROP_MAX, x, loc, "hist", &mx)) return s->err->status;
    lo = cast(s, mn.x, GK_F64);
    hi = cast(s, mx.x, GK_F64);
  }
  if (!lo || !hi || !x.x) return s->err->status;
  rt_node r = blank(RT_HIST, GK_I64, 1, &nb);
  r.nin = 3; r.in[0] = x.x; r.in[1] = lo; r.in[2] = hi; r.nbins = nb;
  r.excl = (uint8_t)!a->have[2];   /* range from the data: numpy's arithmetic differs (host_hist_auto) */
  rt_node *z = cc_node(s, &r);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

/* A permuted view: output dim i is input dim axes[i]. */
static rt_node *permute_view(cc_session *s, rt_node *x, const int *axes) {
  int64_t st[GK_MAX_DIMS], acc = 1, shape[GK_MAX_DIMS];
  for (int d = x->ndim - 1; d >= 0; d--) { st[d] = acc; acc *= x->shape[d]; }
  int ident = 1;
  for (int i = 0; i < x->ndim; i++) { shape[i] = x->shape[axes[i]]; if (axes[i] != i) ident = 0; }
  if (ident) return x;
  rt_node r = blank(RT_VIEW, x->t, x->ndim, shape);
  r.nin = 1; r.in[0] = x;
  for (int i = 0; i < x->ndim; i++) r.vstride[i] = st[axes[i]];
  return cc_node(s, &r);
}

static int b_transpose(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "transpose")) return s->err->status;
  rt_node *x = A(0).x;
  int axes[GK_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) axes[i] = x->ndim - 1 - i;
  rt_node *z = permute_view(s, x, axes);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

static int b_permute(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "permute")) return s->err->status;
  rt_node *x = A(0).x;
  int nd; int64_t ax[GK_MAX_DIMS];
  if (a->n - 1 > GK_MAX_DIMS) return cc_error(s, loc, GK_ELIMIT, "too many axes");
  if (dims_of(s, a, 1, loc, &nd, ax)) return s->err->status;
  if (nd != x->ndim) return cc_error(s, loc, GK_ETYPE, "'permute' needs %d ax%s, got %d", x->ndim, x->ndim == 1 ? "is" : "es", nd);
  int axes[GK_MAX_DIMS], seen[GK_MAX_DIMS] = {0};
  for (int i = 0; i < nd; i++) {
    if (ax[i] >= nd || seen[ax[i]]) return cc_error(s, loc, GK_ETYPE, "'permute' axes must be a permutation of 0..%d", nd - 1);
    seen[ax[i]] = 1; axes[i] = (int)ax[i];
  }
  rt_node *z = permute_view(s, x, axes);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

static int b_reshape(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "reshape")) return s->err->status;
  rt_node *x = A(0).x;
  int nd = 0, neg = -1;
  int64_t shape[GK_MAX_DIMS], prod = 1;
  if (a->n - 1 > GK_MAX_DIMS) return cc_error(s, loc, GK_ELIMIT, "arrays have at most %d dimensions, got %d", GK_MAX_DIMS, a->n - 1);
  for (int i = 1; i < a->n; i++) {
    int64_t d;
    if (a->v[i].kind == K_ARRAY && a->v[i].x->op == RT_CONST && a->v[i].x->n == 1 && const_i(a->v[i].x) == -1 && neg < 0) {
      neg = nd; shape[nd++] = 1; continue;
    }
    if (dim_value(s, &a->v[i], a->loc[i], "dimension", &d)) return s->err->status;
    shape[nd++] = d;
    if (d && prod > INT64_MAX / d) return cc_error(s, loc, GK_ELIMIT, "array too large (limit %lld elements)", (long long)RT_MAX_ELEMENTS);
    prod *= d;
  }
  if (neg >= 0) {
    if (prod == 0 || x->n % prod) goto bad;
    shape[neg] = x->n / prod; prod *= shape[neg];
  }
  if (prod != x->n) goto bad;
  if (check_size(s, loc, nd, shape)) return s->err->status;
  {
    rt_node r = blank(RT_RESHAPE, x->t, nd, shape);
    r.nin = 1; r.in[0] = x;
    rt_node *z = cc_node(s, &r);
    if (!z) return s->err->status;
    *out = arr(z, V_NONE, 0);
    return GK_OK;
  }
bad: {
    char sa[128]; cc_shape_str(x, sa, sizeof sa);
    return cc_error(s, loc, GK_ETYPE, "cannot reshape %s (%lld element%s) to %lld element%s", sa,
                    (long long)x->n, x->n == 1 ? "" : "s", (long long)prod, prod == 1 ? "" : "s");
  }
}

static int matmul(cc_session *s, cval a, cval b, lang_loc loc, cval *out) {
  if (need_array(s, &a, loc, "@") || need_array(s, &b, loc, "@")) return s->err->status;
  rt_node *x = a.x, *y = b.x;
  char sa[128], sb[128];
  cc_shape_str(x, sa, sizeof sa); cc_shape_str(y, sb, sizeof sb);
  if (x->ndim < 1 || x->ndim > 2 || y->ndim < 1 || y->ndim > 2)
    return cc_error(s, loc, GK_ETYPE, "'@' needs vectors or matrices, got %s and %s", sa, sb);
  int64_t k1 = x->shape[x->ndim - 1], k2 = y->shape[0];
  if (k1 != k2) return cc_error(s, loc, GK_ETYPE, "'@': shapes %s and %s do not align", sa, sb);
  if (x->ndim == 1 && y->ndim == 1) {
    bargs w; memset(&w, 0, sizeof w);
    w.v[0] = a; w.v[1] = b;
    return b_dot(s, 0, &w, loc, out);
  }
  gk_dtype t = promote(&a, &b);
  if (t == GK_BOOL) t = GK_I64;
  int nd = 0; int64_t shape[2];
  if (x->ndim == 2) shape[nd++] = x->shape[0];
  if (y->ndim == 2) shape[nd++] = y->shape[1];
  if (check_size(s, loc, nd, shape)) return s->err->status;
  rt_node r = blank(RT_MATMUL, t, nd, shape);
  r.nin = 2; r.in[0] = cast(s, x, t); r.in[1] = cast(s, y, t);
  if (!r.in[0] || !r.in[1]) return s->err->status;
  rt_node *z = cc_node(s, &r);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

/* ------------------------------------------------------------- shape, io */

static rt_node *host_array(cc_session *s, gk_dtype t, int ndim, const int64_t *shape, const void *data, lang_loc loc) {
  rt_value *v;
  if (s->be->alloc_value(s->be, t, ndim, shape, &v)) { cc_error(s, loc, s->be->err.status, "%s", s->be->err.msg); return NULL; }
  if (v->bytes && s->be->write(s->be, v, data)) {
    rt_value_unref(v);
    cc_error(s, loc, s->be->err.status, "%s", s->be->err.msg);
    return NULL;
  }
  rt_node *x = cc_input(s, v);
  rt_value_unref(v);
  return x;
}

static int b_len(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, a->call->str)) return s->err->status;
  rt_node *x = A(0).x;
  int64_t v;
  switch (code) {
  case 0:
    if (x->ndim == 0) return cc_error(s, loc, GK_ETYPE, "'len' of a scalar");
    v = x->shape[0]; break;
  default: v = x->n; break;
  }
  rt_node *z = mkconst(s, GK_I64, (double)v, v, 0, NULL);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

static int b_shape(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "shape")) return s->err->status;
  rt_node *x = A(0).x;
  int64_t nd = x->ndim;
  rt_node *z = host_array(s, GK_I64, 1, &nd, x->shape, loc);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

static int b_view(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, a->call->str)) return s->err->status;
  if (A(0).x->ndim != 2) {
    char sh[128]; cc_shape_str(A(0).x, sh, sizeof sh);
    return cc_error(s, loc, GK_ETYPE, "'%s' needs a matrix, got %s %s", a->call->str, tname(A(0).x->t), sh);
  }
  *out = A(0);
  out->view = code;
  return GK_OK;
}

/* npy_load's allocation: the backend's value, read into directly when its
** data is on the host, else into a host buffer that is then written to it. */
typedef struct loadctx { cc_session *s; rt_value *v; void *buf; size_t bytes; } loadctx;

static void *load_alloc(void *ud, gk_dtype t, int ndim, const int64_t *shape, size_t bytes) {
  loadctx *c = ud;
  if (c->s->be->alloc_value(c->s->be, t, ndim, shape, &c->v)) return NULL;
  if (c->v->where == RT_ON_HOST) return c->v->host;
  c->bytes = bytes ? bytes : 1;
  return c->buf = rt_alloc(c->s->mem, c->bytes);
}

static int need_string(cc_session *s, bargs *a, int i, const char *name) {
  if (a->v[i].kind != K_STR) return cc_error(s, a->loc[i], GK_ETYPE, "'%s' needs a file name string", name);
  if (strlen(a->v[i].str) != a->v[i].len) return cc_error(s, a->loc[i], GK_EIO, "file name contains a NUL byte");
  if (a->v[i].len == 0) return cc_error(s, a->loc[i], GK_EIO, "'%s' needs a file name, got \"\"", name);
  return GK_OK;
}

/* 1 when file name f ends in ext (".npz"). */
static int has_ext(const char *f, const char *ext) {
  size_t n = strlen(f), k = strlen(ext);
  return n > k && !strcmp(f + n - k, ext);
}

/* load(file[, name]) (code 0): .npy, or one array of a .npz;
** loadtxt(file[, delimiter][, skiprows]) (code 1): delimited text as f64. */
static int b_load(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  const char *fn = code ? "loadtxt" : "load";
  if (need_string(s, a, 0, fn)) return s->err->status;
  const char *member = NULL, *delim = NULL;
  int64_t skip = 0;
  if (!code && a->have[1]) {
    if (a->v[1].kind != K_STR) return cc_error(s, a->loc[1], GK_ETYPE, "'load' takes the array's name in a .npz file as a string");
    if (!has_ext(a->v[0].str, ".npz")) return cc_error(s, a->loc[1], GK_ETYPE, "'load' takes an array name only for a .npz file");
    member = a->v[1].str;
  }
  if (code && a->have[1]) {
    if (a->v[1].kind != K_STR) return cc_error(s, a->loc[1], GK_ETYPE, "'loadtxt' takes the delimiter as a string, as delimiter=\",\"");
    if (a->v[1].len == 0) return cc_error(s, a->loc[1], GK_EVALUE, "the delimiter is empty");
    delim = a->v[1].str;
  }
  if (code && a->have[2] && dim_value(s, &A(2), a->loc[2], "skiprows", &skip)) return s->err->status;
  char err[512] = "";
  if (access(a->v[0].str, R_OK) != 0)   /* never open here: a FIFO would block */
    return cc_error(s, loc, GK_EIO, "cannot open '%s': %s", a->v[0].str, strerror(errno));
  loadctx c = { s, NULL, NULL, 0 };
  rt_err_clear(&s->be->err);
  int rc = code ? txt_load(a->v[0].str, delim, skip, load_alloc, &c, err, sizeof err)
         : has_ext(a->v[0].str, ".npz") ? npz_load(a->v[0].str, member, load_alloc, &c, err, sizeof err)
         : npy_load(a->v[0].str, load_alloc, &c, err, sizeof err);
  if (!c.v && s->be->err.status == GK_ELIMIT) {   /* the shape is past the size limit (empty or not) */
    if (c.buf) rt_free(s->mem, c.buf, c.bytes);
    return cc_error(s, loc, GK_ELIMIT, "cannot load '%s': %s", a->v[0].str, s->be->err.msg);
  }
  if (!rc && c.buf && c.v->bytes && s->be->write(s->be, c.v, c.buf)) rc = s->be->err.status;
  if (c.buf) rt_free(s->mem, c.buf, c.bytes);
  if (rc) {
    if (c.v) rt_value_unref(c.v);
    return cc_error(s, loc, rc, "%s", err[0] ? err : s->be->err.msg);
  }
  if (!c.v) {   /* empty array: alloc may not have been called */
    return cc_error(s, a->loc[0], GK_EIO, "cannot load '%s'", a->v[0].str);
  }
  rt_node *x = cc_input(s, c.v);
  rt_value_unref(c.v);
  if (!x) return s->err->status;
  *out = arr(x, V_NONE, 0);
  return GK_OK;
}

/* Host copy of a computed node: *data points at host memory; *tmp is a
** buffer the caller frees (size x->val->bytes) or NULL. */
static int host_data(cc_session *s, rt_node *x, lang_loc loc, const void **data, void **tmp) {
  *tmp = NULL;
  if (cc_compute(s, &x, 1)) return s->err->status;
  rt_value *v = x->val;
  if (v->where == RT_ON_HOST) { *data = v->host; return GK_OK; }
  void *b = rt_alloc(s->mem, v->bytes ? v->bytes : 1);
  if (!b) return cc_error(s, loc, GK_ENOMEM, "out of memory");
  if (s->be->read(s->be, v, b)) { rt_free(s->mem, b, v->bytes ? v->bytes : 1); return cc_error(s, loc, s->be->err.status, "%s", s->be->err.msg); }
  *data = b; *tmp = b;
  return GK_OK;
}

/* save(file.npz, x, y, ...): the arrays as members named after the
** arguments that are bare variable names, else arr_N (numpy.savez's names
** for positional arrays). */
static int save_npz(cc_session *s, bargs *a, lang_loc loc) {
  int n = a->n - 1;
  rt_node *xs[LANG_MAX_ARGS];
  const char *names[LANG_MAX_ARGS];
  char auto_names[LANG_MAX_ARGS][16];
  gk_dtype t[LANG_MAX_ARGS];
  int nd[LANG_MAX_ARGS];
  const int64_t *sh[LANG_MAX_ARGS];
  const void *d[LANG_MAX_ARGS];
  void *tmp[LANG_MAX_ARGS] = {0};
  for (int i = 0; i < n; i++) {
    if (need_array(s, &A(i + 1), a->loc[i + 1], "save")) return s->err->status;
    xs[i] = A(i + 1).x;
    const ast *k = i + 1 < a->call->nkids ? a->call->kids[i + 1] : NULL;
    snprintf(auto_names[i], sizeof auto_names[i], "arr_%d", i);
    names[i] = k && k->kind == AST_NAME ? k->str : auto_names[i];
    for (int j = 0; j < i; j++)
      if (!strcmp(names[i], names[j]))
        return cc_error(s, a->loc[i + 1], GK_ETYPE, "'save' got two arrays named '%s' for one .npz file", names[i]);
  }
  if (n && cc_compute(s, xs, n)) return s->err->status;   /* one plan for all of them */
  int rc = GK_OK;
  for (int i = 0; i < n && !rc; i++) {
    rc = host_data(s, xs[i], loc, &d[i], &tmp[i]);
    t[i] = xs[i]->t; nd[i] = xs[i]->ndim; sh[i] = xs[i]->shape;
  }
  char err[8192] = "";
  if (!rc) rc = npz_save(a->v[0].str, n, names, t, nd, sh, d, err, sizeof err);
  for (int i = 0; i < n; i++) if (tmp[i]) rt_free(s->mem, tmp[i], xs[i]->val->bytes ? xs[i]->val->bytes : 1);
  if (rc && !s->err->status) return cc_error(s, loc, rc, "%s", err);
  return rc;
}

/* save(file, x, ...) (code 0): .npy, or several arrays in a .npz;
** savetxt(file, x[, delimiter]) (code 1). */
static int b_save(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  const char *fn = code ? "savetxt" : "save";
  if (need_string(s, a, 0, fn)) return s->err->status;
  *out = none();
  if (!code && has_ext(a->v[0].str, ".npz")) return save_npz(s, a, loc);
  if (!code && a->n > 2)
    return cc_error(s, a->loc[2], GK_ETYPE, "'save' writes one array to a .npy file; several go in a .npz file");
  if (need_array(s, &A(1), loc, fn)) return s->err->status;
  const char *delim = NULL;
  if (code && a->have[2]) {
    if (a->v[2].kind != K_STR) return cc_error(s, a->loc[2], GK_ETYPE, "'savetxt' takes the delimiter as a string, as delimiter=\",\"");
    delim = a->v[2].str;
  }
  if (code && A(1).x->ndim != 1 && A(1).x->ndim != 2)
    return cc_error(s, a->loc[1], GK_ETYPE, "'savetxt' writes a vector or a matrix, got %d dimensions", A(1).x->ndim);
  const void *d; void *tmp;
  rt_node *x = A(1).x;
  if (host_data(s, x, loc, &d, &tmp)) return s->err->status;
  char err[8192] = "";
  int rc = code ? txt_save(a->v[0].str, delim, x->t, x->ndim, x->shape, d, err, sizeof err)
              : npy_save(a->v[0].str, x->t, x->ndim, x->shape, d, err, sizeof err);
  if (tmp) rt_free(s->mem, tmp, x->val->bytes ? x->val->bytes : 1);
  if (rc) return cc_error(s, loc, rc, "%s", err);
  *out = none();
  return GK_OK;
}

/* Writes text to the output hook. */
static void emit(cc_session *s, const char *t, size_t n) {
  if (s->hooks.output) s->hooks.output(s->hooks.ud, t, n);
  else fwrite(t, 1, n, stdout);
}

/* Formats value v into b (arrays like numpy, strings as they are). */
static int format_value(cc_session *s, cval *v, lang_loc loc, fmt_buf *b) {
  if (v->kind == K_STR) return fmt_append(b, v->str, v->len);
  if (v->kind != K_ARRAY) return GK_OK;
  if (v->x->op == RT_CONST && v->x->n == 1) {   /* a known constant: no kernel */
    unsigned char buf[8];
    const rt_node *c = v->x;
    switch (c->t) {
    case GK_BOOL: buf[0] = c->c.i != 0; break;
    case GK_I32: { int32_t q = (int32_t)c->c.i; memcpy(buf, &q, 4); break; }
    case GK_I64: memcpy(buf, &c->c.i, 8); break;
    case GK_F32: { float q = (float)c->c.f; memcpy(buf, &q, 4); break; }
    case GK_F64: memcpy(buf, &c->c.f, 8); break;
    }
    return fmt_array(b, c->t, c->ndim, c->shape, buf) ? cc_error(s, loc, GK_ENOMEM, "out of memory formatting a value") : GK_OK;
  }
  const void *d; void *tmp;
  rt_node *x = v->x;
  if (host_data(s, x, loc, &d, &tmp)) return s->err->status;
  int rc = fmt_array(b, x->t, x->ndim, x->shape, d);
  if (tmp) rt_free(s->mem, tmp, x->val->bytes ? x->val->bytes : 1);
  if (rc) return cc_error(s, loc, rc, "out of memory formatting a value");
  return GK_OK;
}

static int print_values(cc_session *s, cval *v, int n, lang_loc loc) {
  rt_node *xs[LANG_MAX_ARGS];
  int nx = 0;
  for (int i = 0; i < n; i++)
    if (v[i].kind == K_ARRAY && !(v[i].x->op == RT_CONST && v[i].x->n == 1)) xs[nx++] = v[i].x;
  if (nx && cc_compute(s, xs, nx)) return s->err->status;   /* one plan for all of them */
  fmt_buf b; fmt_init(&b);
  b.digits = s->opt_digits;
  b.width = s->opt_width;
  for (int i = 0; i < n && !s->err->status; i++) {
    if (i) fmt_putc(&b, ' ');
    format_value(s, &v[i], loc, &b);
  }
  fmt_putc(&b, '\n');
  int rc = s->err->status ? s->err->status : b.status;
  if (rc == GK_OK) emit(s, b.data, b.len);
  else if (!s->err->status) cc_error(s, loc, rc, "out of memory formatting a value");
  fmt_free(&b);
  return rc;
}

/* A computed node's elements as doubles, from rt_alloc (the caller frees
** dbl_bytes(x) bytes). */
static size_t dbl_bytes(const rt_node *x) { return sizeof(double) * (size_t)(x->n ? x->n : 1); }

static double *as_doubles(cc_session *s, rt_node *x, lang_loc loc) {
  const void *d; void *tmp;
  if (host_data(s, x, loc, &d, &tmp)) return NULL;
  double *v = rt_alloc(s->mem, dbl_bytes(x));
  if (v) for (int64_t i = 0; i < x->n; i++) {
    switch (x->t) {
    case GK_BOOL: v[i] = ((const uint8_t *)d)[i]; break;
    case GK_I32: v[i] = ((const int32_t *)d)[i]; break;
    case GK_I64: v[i] = (double)((const int64_t *)d)[i]; break;
    case GK_F32: v[i] = ((const float *)d)[i]; break;
    default: v[i] = ((const double *)d)[i]; break;
    }
  }
  if (tmp) rt_free(s->mem, tmp, x->val->bytes ? x->val->bytes : 1);
  if (!v) cc_error(s, loc, GK_ENOMEM, "out of memory");
  return v;
}

static void emit_chart(cc_session *s, fmt_buf *b, lang_loc loc) {
  if (b->status) cc_error(s, loc, b->status, "out of memory drawing a chart");
  else emit(s, b->data, b->len);
}

/* plot(x): a column chart of x's elements; plot(x, y): a scatter. */
static int b_plot(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  *out = none();
  if (need_array(s, &A(0), loc, "plot")) return s->err->status;
  if (a->have[1] && need_array(s, &A(1), loc, "plot")) return s->err->status;
  rt_node *xs[2] = { A(0).x, a->have[1] ? A(1).x : NULL };
  if (xs[1] && xs[1]->n != xs[0]->n)
    return cc_error(s, loc, GK_ETYPE, "'plot' needs x and y of one size, got %lld and %lld elements",
                    (long long)xs[0]->n, (long long)xs[1]->n);
  if (cc_compute(s, xs, xs[1] ? 2 : 1)) return s->err->status;
  double *x = as_doubles(s, xs[0], loc), *y = xs[1] && x ? as_doubles(s, xs[1], loc) : NULL;
  if (x && (!xs[1] || y)) {
    fmt_buf b; fmt_init(&b);
    chart_plot(&b, y ? x : NULL, y ? y : x, xs[0]->n, s->opt_width, s->opt_charts == 2);
    emit_chart(s, &b, loc);
    fmt_free(&b);
  }
  if (x) rt_free(s->mem, x, dbl_bytes(xs[0]));
  if (y) rt_free(s->mem, y, dbl_bytes(xs[1]));
  return s->err->status;
}

/* A hist(...) expression statement with charts on: the counts, then their
** chart, lo and hi computed in the same plan as the counts. */
static int print_hist(cc_session *s, cval *v, lang_loc loc) {
  rt_node *h = v->x, *lo = h->in[1], *hi = h->in[2], *t[3] = { h };
  /* a range cast to f64 is read through its source (the same double): as a
  ** target the cast would be computed apart, and the histogram kernel of an
  ** i64 range from the data needs the i64 extremes themselves (numpy's
  ** uint64 width; runtime/cuda_lower.c lower_hist) */
  if (lo->op == RT_CAST && lo->nin == 1) lo = lo->in[0];
  if (hi->op == RT_CAST && hi->nin == 1) hi = hi->in[0];
  int nt = 1;
  cc_ref(lo); cc_ref(hi);
  if (lo->op != RT_CONST) t[nt++] = lo;
  if (hi->op != RT_CONST) t[nt++] = hi;
  int rc = cc_compute(s, t, nt);
  if (!rc) rc = print_values(s, v, 1, loc);
  double *c = NULL, *l = NULL, *r = NULL;
  if (!rc) {
    c = as_doubles(s, h, loc);
    l = c ? as_doubles(s, lo, loc) : NULL;
    r = l ? as_doubles(s, hi, loc) : NULL;
  }
  if (r) {
    int64_t *counts = rt_alloc(s->mem, dbl_bytes(h));   /* int64_t: the size of a double */
    if (counts) {
      for (int64_t i = 0; i < h->n; i++) counts[i] = (int64_t)c[i];
      fmt_buf b; fmt_init(&b);
      chart_hist(&b, counts, h->n, l[0], r[0], s->opt_width, s->opt_charts == 2);
      emit_chart(s, &b, loc);
      fmt_free(&b);
      rt_free(s->mem, counts, dbl_bytes(h));
    } else cc_error(s, loc, GK_ENOMEM, "out of memory");
  }
  if (c) rt_free(s->mem, c, dbl_bytes(h));
  if (l) rt_free(s->mem, l, dbl_bytes(lo));
  if (r) rt_free(s->mem, r, dbl_bytes(hi));
  cc_unref(s, lo); cc_unref(s, hi);
  return s->err->status;
}

static int b_print(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  *out = none();
  return print_values(s, a->v, a->n, loc);
}

/* ------------------------------------------------------------- sort family
** sort, argsort, topk, argtopk run along segments: a 1-d array whole, the
** rows of rows(m), the columns of cols(m), the last axis of an array of
** higher rank (numpy's default axis=-1).  unique, median and quantile take
** the flattened array (numpy's axis=None), or one segment per row / column
** of a view.  A sort node's input is 1-d (axis -1) or 2-d (axis 1 or 0). */

/* The segments of x: the node to sort (1-d or 2-d), its axis, the segment
** length and count.  flat: no view flattens (unique, median, quantile);
** else the last axis of an array of rank > 1. */
static int sort_segments(cc_session *s, cval x, lang_loc loc, const char *name, int flat, rt_node **in, int *axis,
                         int64_t *len, int64_t *nseg) {
  rt_node *v = x.x;
  if (x.view) {
    if (v->ndim != 2) {
      char sh[128]; cc_shape_str(v, sh, sizeof sh);
      return cc_error(s, loc, GK_ETYPE, "'%s' of a %s view needs a matrix, got %s %s", name,
                      x.view == V_ROWS ? "rows()" : "cols()", tname(v->t), sh);
    }
    *axis = x.view == V_ROWS ? 1 : 0;
    *len = v->shape[*axis];
    *nseg = v->shape[1 - *axis];
    *in = v;
    return GK_OK;
  }
  if (v->ndim == 0 && !flat) return cc_error(s, loc, GK_ETYPE, "'%s' needs an array of at least one dimension, got a scalar", name);
  if (v->ndim == 1) { *in = v; *axis = -1; *len = v->n; *nseg = 1; return GK_OK; }
  rt_node r;
  if (flat || v->ndim == 0) {
    r = blank(RT_RESHAPE, v->t, 1, &v->n);
    *axis = -1; *len = v->n; *nseg = 1;
  } else {
    /* segments: the product of the leading dims (not n / last: a last axis
    ** of length 0 still has one empty segment per leading position) */
    int64_t sh[2] = { 1, v->shape[v->ndim - 1] };
    for (int d = 0; d < v->ndim - 1; d++) {
      if (v->shape[d] && sh[0] > INT64_MAX / v->shape[d])
        return cc_error(s, loc, GK_ELIMIT, "array too large (limit %lld elements)", (long long)RT_MAX_ELEMENTS);
      sh[0] *= v->shape[d];
    }
    r = blank(RT_RESHAPE, v->t, 2, sh);
    *axis = 1; *len = sh[1]; *nseg = sh[0];
  }
  r.nin = 1; r.in[0] = v;
  *in = cc_node(s, &r);
  return *in ? GK_OK : s->err->status;
}

/* A sort-family node of op over in's segments; k: topk's count. */
static rt_node *sort_node(cc_session *s, int op, rt_node *in, int axis, int64_t k) {
  rt_node r = blank(op, op == RT_ARGSORT || op == RT_ARGTOPK ? GK_I64 : in->t, in->ndim, in->shape);
  if (op == RT_TOPK || op == RT_ARGTOPK) { r.shape[axis == 0 ? 0 : in->ndim - 1] = k; r.nbins = k; }
  r.nin = 1; r.in[0] = in; r.axis = (int8_t)axis;
  return cc_node(s, &r);
}

/* sort(x), argsort(x) (code 0 / 1), topk(x, k), argtopk(x, k) (2 / 3). */
static int b_sort(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  static const int ops[] = { RT_SORT, RT_ARGSORT, RT_TOPK, RT_ARGTOPK };
  const char *name = a->call->str;
  if (need_array(s, &A(0), loc, name)) return s->err->status;
  rt_node *in; int axis; int64_t len, nseg, k = 0;
  if (sort_segments(s, A(0), loc, name, 0, &in, &axis, &len, &nseg)) return s->err->status;
  if (code >= 2) {
    if (dim_value(s, &A(1), a->loc[1], "k", &k)) return s->err->status;
    if (k > len) return cc_error(s, a->loc[1], GK_EVALUE, "'%s': k = %lld is out of range for a length of %lld", name,
                                 (long long)k, (long long)len);
  }
  rt_node *z = sort_node(s, ops[code], in, axis, k);
  if (!z) return s->err->status;
  rt_node *x = A(0).x;
  if (!A(0).view && x->ndim > 2) {   /* back to x's shape (the last axis k long for topk) */
    rt_node r = blank(RT_RESHAPE, z->t, x->ndim, x->shape);
    r.shape[x->ndim - 1] = z->shape[1];
    r.nin = 1; r.in[0] = z;
    if (!(z = cc_node(s, &r))) return s->err->status;
  }
  *out = arr(z, A(0).view, 0);
  return GK_OK;
}

/* Position j of every segment of sorted s (axis as sort_segments'): 0-d for
** a whole array, else one element per row / column. */
static cval sort_pick(cc_session *s, rt_node *srt, int axis, int64_t j) {
  rt_node r;
  if (axis < 0) { r = blank(RT_VIEW, srt->t, 0, NULL); r.voff = j; }
  else {
    int64_t n = srt->shape[1 - axis];
    r = blank(RT_VIEW, srt->t, 1, &n);
    r.voff = axis == 1 ? j : j * srt->shape[1];
    r.vstride[0] = axis == 1 ? srt->shape[1] : 1;
  }
  r.nin = 1; r.in[0] = srt;
  return arr(cc_node(s, &r), V_NONE, 0);
}

/* Sorted values of x's segments for median / quantile, with the checks. */
static int sort_stat(cc_session *s, cval x, lang_loc loc, const char *name, rt_node **srt, int *axis, int64_t *len) {
  int64_t nseg;
  if (need_array(s, &x, loc, name)) return s->err->status;
  if (x.x->t == GK_BOOL && strcmp(name, "median")) return cc_error(s, loc, GK_ETYPE, "'%s' needs a numeric array, got bool", name);
  rt_node *in;
  if (sort_segments(s, x, loc, name, 1, &in, axis, len, &nseg)) return s->err->status;
  if (*len == 0 && nseg > 0) return cc_error(s, loc, GK_EVALUE, "'%s' of an empty array", name);
  if (in->t == GK_BOOL) in = cast(s, in, GK_I64);
  *srt = in ? sort_node(s, RT_SORT, in, *axis, 0) : NULL;
  return *srt ? GK_OK : s->err->status;
}

/* numpy: NaN where a segment holds one (it sorts last). */
static int nan_if_any(cc_session *s, rt_node *srt, int axis, int64_t len, cval r, lang_loc loc, cval *out) {
  if (!rt_is_float(srt->t) || len == 0) { *out = r; return GK_OK; }
  cval last = sort_pick(s, srt, axis, len - 1), bad;
  if (!last.x) return s->err->status;
  bad = arr(unop(s, RT_ISNAN, GK_BOOL, last.x), V_NONE, 0);
  if (!bad.x) return s->err->status;
  bargs w; memset(&w, 0, sizeof w);
  w.v[0] = bad; w.v[1] = konst(s, r.x->t, NAN); w.v[2] = r;
  return b_where(s, 0, &w, loc, out);
}

/* numpy.median: the middle element, or the mean of the middle two (in the
** float dtype; ints in f64). */
static int b_median(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  rt_node *srt; int axis; int64_t len;
  if (sort_stat(s, A(0), loc, "median", &srt, &axis, &len)) return s->err->status;
  gk_dtype ft = rt_is_float(srt->t) ? srt->t : GK_F64;
  cval lo = sort_pick(s, srt, axis, len ? (len - 1) / 2 : 0), r;
  if (!lo.x || !(lo.x = cast(s, lo.x, ft))) return s->err->status;
  if (len % 2 == 1 || len == 0) r = lo;
  else {
    cval hi = sort_pick(s, srt, axis, len / 2), sm;
    if (!hi.x || !(hi.x = cast(s, hi.x, ft))) return s->err->status;
    if (binop(s, RT_ADD, lo, hi, loc, &sm) || binop(s, RT_DIV, sm, konst(s, ft, 2), loc, &r)) return s->err->status;
  }
  return nan_if_any(s, srt, axis, len, r, loc, out);
}

/* numpy.quantile(x, q), method 'linear': i = (n-1)*q, a = s[floor i],
** b = s[floor i + 1] (both s[n-1] past the end, where numpy's gamma is
** i + 1), g = i - floor; a + (b-a)*g, or b - (b-a)*(1-g) when g >= 0.5
** (numpy's _lerp, in x's float dtype; ints: b-a in their dtype, then f64). */
static int b_quantile(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  double q;
  if (need_array(s, &A(0), loc, "quantile")) return s->err->status;
  if (scalar_value(s, &A(1), a->loc[1], "q", &q, NULL)) return s->err->status;
  if (!(q >= 0 && q <= 1)) {
    char buf[64]; snprintf(buf, sizeof buf, "%g", q);
    if (q != q) snprintf(buf, sizeof buf, "nan");
    return cc_error(s, a->loc[1], GK_EVALUE, "'quantile': q must be in [0, 1], got %s", buf);
  }
  rt_node *srt; int axis; int64_t len;
  if (sort_stat(s, A(0), loc, "quantile", &srt, &axis, &len)) return s->err->status;
  double vi = (double)(len - 1) * q, prev = floor(vi);
  int64_t ilo = (int64_t)prev, ihi = ilo + 1;
  if (vi >= (double)(len - 1)) { ilo = ihi = len - 1; prev = -1; }
  if (len == 0) ilo = ihi = 0;
  double g = vi - prev;
  gk_dtype ft = rt_is_float(srt->t) ? srt->t : GK_F64;
  cval lo = sort_pick(s, srt, axis, ilo), hi = sort_pick(s, srt, axis, ihi), d, t, r;
  /* the difference in the float type, as numpy's: in an int type it wraps
  ** for a spread past the type's range (i32 -2147483647 .. 2147483646) */
  if (!lo.x || !hi.x || !(lo.x = cast(s, lo.x, ft)) || !(hi.x = cast(s, hi.x, ft))) return s->err->status;
  if (binop(s, RT_SUB, hi, lo, loc, &d)) return s->err->status;
  if (g >= 0.5) {
    if (binop(s, RT_MUL, d, konst(s, ft, 1 - g), loc, &t) || binop(s, RT_SUB, hi, t, loc, &r)) return s->err->status;
  } else if (binop(s, RT_MUL, d, konst(s, ft, g), loc, &t) || binop(s, RT_ADD, lo, t, loc, &r)) return s->err->status;
  return nan_if_any(s, srt, axis, len, r, loc, out);
}

/* numpy.unique: the sorted distinct values of the flattened array (NaNs one). */
static int b_unique(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "unique")) return s->err->status;
  if (A(0).view) return cc_error(s, loc, GK_ETYPE, "'unique' takes a whole array, not a %s view", A(0).view == V_ROWS ? "rows()" : "cols()");
  rt_node *in; int axis; int64_t len, nseg;
  if (sort_segments(s, A(0), loc, "unique", 1, &in, &axis, &len, &nseg)) return s->err->status;
  rt_node *srt = sort_node(s, RT_SORT, in, -1, 0);
  if (!srt) return s->err->status;
  if (len == 0) { *out = arr(srt, V_NONE, 0); return GK_OK; }
  rt_node r = blank(RT_RUNS, GK_BOOL, 1, &len);
  r.nin = 1; r.in[0] = srt;
  rt_node *m = cc_node(s, &r);
  if (!m) return s->err->status;
  return select_op(s, RT_FILTER, arr(srt, V_NONE, 0), arr(m, V_NONE, 0), loc, "unique", out);
}

/* numpy.searchsorted(a, v) (side='left'): for each v, the number of a's
** elements that sort before it (NaN after everything), in their common dtype. */
static int b_searchsorted(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  cval x = A(0), v = A(1);
  if (need_array(s, &x, loc, "searchsorted") || need_array(s, &v, loc, "searchsorted")) return s->err->status;
  if (x.x->ndim != 1) {
    char sh[128]; cc_shape_str(x.x, sh, sizeof sh);
    return cc_error(s, a->loc[0], GK_ETYPE, "'searchsorted' needs a 1-d sorted array, got %s %s", tname(x.x->t), sh);
  }
  gk_dtype t = promote(&x, &v);
  rt_node *xa = cast(s, x.x, t), *va = cast(s, v.x, t);
  if (!xa || !va) return s->err->status;
  rt_node r = blank(RT_SEARCH, GK_I64, va->ndim, va->shape);
  r.nin = 2; r.in[0] = xa; r.in[1] = va;
  rt_node *z = cc_node(s, &r);
  if (!z) return s->err->status;
  *out = arr(z, v.view, 0);
  return GK_OK;
}

/* ------------------------------------------------------------- axis= (issue 13)
** A builtin that names a parameter "axis" takes axis=k on an array of any
** rank.  call_builtin moves axis k into a matrix the builtin already knows
** how to treat per row or per column, runs the builtin on that view, and
** moves the result back:
**   - a 1-d array: the whole array (the builtin sees no view);
**   - k the last axis: rows() of reshape(x, outer, len) -- contiguous rows;
**   - any other k: cols() of reshape(permute(x, k first), len, outer*inner),
**     whose columns are adjacent in memory (coalesced column reads).
** A result of one value per row (column) loses axis k; a result with rows
** (columns) of some length L' gets axis k back with length L' (softmax,
** scan: L' = len; a top-k: L' = k).  So a builtin gets axis= by naming the
** parameter and handling rows(m) / cols(m) of a matrix; nothing else. */

typedef struct axmove {
  int mode;                     /* AX_* */
  int k, nd;                    /* the normalized axis, x's rank */
  int64_t shape[GK_MAX_DIMS];   /* x's shape */
  int perm[GK_MAX_DIMS];        /* AX_COLS: output dim i of the permuted x is x's dim perm[i] */
  int64_t outer;                /* values per result: the product of the other dims */
} axmove;
enum { AX_WHOLE, AX_ROWS, AX_COLS };

/* The axis named by argument slot i for an array of rank nd (negative
** counts from the end), numpy's error when out of range. */
static int axis_value(cc_session *s, bargs *a, int i, int nd, int *k) {
  const cval *v = &a->v[i];
  int64_t ax;
  if (v->kind != K_ARRAY || v->x->n != 1 || v->x->ndim != 0 || rt_is_float(v->x->t) || v->x->t == GK_BOOL)
    return cc_error(s, a->loc[i], GK_ETYPE, "axis must be an integer");
  if (scalar_value(s, v, a->loc[i], "axis", NULL, &ax)) return s->err->status;
  if (ax < -nd || ax >= nd)
    return cc_error(s, a->loc[i], GK_EVALUE, "axis %lld is out of bounds for array of dimension %d", (long long)ax, nd);
  *k = (int)(ax < 0 ? ax + nd : ax);
  return GK_OK;
}

static rt_node *reshape_to(cc_session *s, rt_node *x, int nd, const int64_t *shape) {
  if (!x) return NULL;
  if (x->ndim == nd && !memcmp(x->shape, shape, sizeof(int64_t) * (size_t)nd)) return x;
  if (x->op == RT_CONST) return mkconst(s, x->t, x->c.f, x->c.i, nd, shape);
  rt_node r = blank(RT_RESHAPE, x->t, nd, shape);
  r.nin = 1; r.in[0] = x;
  return cc_node(s, &r);
}


/* permute_view(v, perm), composed with v where v is itself a view (a
** slice, a step, a broadcast): one view of v's input, whose index a column
** kernel splits into a column part and a row part (runtime/cuda_lower.c
** rc_split), not a view of a view that decomposes the index twice. */
static rt_node *axis_permute(cc_session *s, rt_node *v, const int *perm) {
  if (v->op != RT_VIEW) return permute_view(s, v, perm);
  rt_node r = blank(RT_VIEW, v->t, v->ndim, v->shape);
  r.nin = 1; r.in[0] = v->in[0]; r.voff = v->voff;
  for (int i = 0; i < v->ndim; i++) { r.shape[i] = v->shape[perm[i]]; r.vstride[i] = v->vstride[perm[i]]; }
  return cc_node(s, &r);
}

/* x with axis k moved into a matrix view (see above); *m records how. */
static int axis_in(cc_session *s, cval x, int k, lang_loc loc, axmove *m, cval *out) {
  rt_node *v = x.x;
  memset(m, 0, sizeof *m);
  m->k = k; m->nd = v->ndim;
  memcpy(m->shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  m->outer = 1;
  for (int d = 0; d < v->ndim; d++) if (d != k) m->outer *= v->shape[d];
  *out = x;
  if (v->ndim == 1) { m->mode = AX_WHOLE; return GK_OK; }
  int64_t sh[2];
  if (k == v->ndim - 1) {
    m->mode = AX_ROWS;
    sh[0] = m->outer; sh[1] = v->shape[k];
    out->x = reshape_to(s, v, 2, sh);
    out->view = V_ROWS;
  } else {
    m->mode = AX_COLS;
    m->perm[0] = k;
    for (int d = 0, i = 1; d < v->ndim; d++) if (d != k) m->perm[i++] = d;
    sh[0] = v->shape[k]; sh[1] = m->outer;
    out->x = reshape_to(s, axis_permute(s, v, m->perm), 2, sh);
    out->view = V_COLS;
  }
  if (!out->x) return s->err->status;
  return GK_OK;
}

/* A builtin's result on the view of axis_in, back in x's axes. */
static int axis_out(cc_session *s, const axmove *m, lang_loc loc, const char *name, cval *y) {
  if (m->mode == AX_WHOLE || y->kind != K_ARRAY) return GK_OK;
  rt_node *r = y->x;
  int64_t sh[GK_MAX_DIMS];
  int nd = 0;
  int lenpos = m->mode == AX_ROWS ? 1 : 0;   /* the dim of r along axis k */
  int64_t other = m->mode == AX_ROWS ? (r->ndim ? r->shape[0] : -1) : (r->ndim == 2 ? r->shape[1] : r->ndim ? r->shape[0] : -1);
  if (other != m->outer || r->ndim < 1 || r->ndim > 2)
    return cc_error(s, loc, GK_EMISUSE, "internal error: '%s' with axis= gave shape of rank %d", name, r->ndim);
  if (r->ndim == 1) {   /* one value per row / column: axis k is gone */
    for (int d = 0; d < m->nd; d++) if (d != m->k) sh[nd++] = m->shape[d];
    y->x = reshape_to(s, r, nd, sh);
  } else if (m->mode == AX_ROWS) {
    for (int d = 0; d < m->nd; d++) sh[nd++] = d == m->k ? r->shape[lenpos] : m->shape[d];
    y->x = reshape_to(s, r, nd, sh);
  } else {
    /* r is (L', outer): reshape to the permuted dims, then permute back */
    int inv[GK_MAX_DIMS];
    sh[nd++] = r->shape[0];
    for (int i = 1; i < m->nd; i++) sh[nd++] = m->shape[m->perm[i]];
    for (int i = 0; i < m->nd; i++) inv[m->perm[i]] = i;
    y->x = permute_view(s, reshape_to(s, r, nd, sh), inv);
  }
  if (!y->x) return s->err->status;
  y->view = V_NONE;
  y->weak = 0;
  return GK_OK;
}

static int b_take(cc_session *s, int code, bargs *a, lang_loc loc, cval *out);

/* Runs builtin b on bound arguments a, lowering its axis= argument (if it
** takes one and it was given) to a rows() / cols() view of its first. */
static int call_builtin(cc_session *s, const builtin *b, bargs *a, lang_loc loc, cval *out) {
  int slot = -1;
  for (int i = 0; b->max >= 0 && i < BUILTIN_PARAMS && b->params[i]; i++) if (!strcmp(b->params[i], "axis")) slot = i;
  /* take's axis picks where its gather runs, not a per-row view: its own */
  if (slot < 0 || !a->have[slot] || b->fn == b_take) return b->fn(s, b->code, a, loc, out);
  if (need_array(s, &A(0), loc, b->name)) return s->err->status;
  if (A(0).view)
    return cc_error(s, a->loc[slot], GK_ETYPE, "'%s' takes axis= or a %s view, not both", b->name,
                    A(0).view == V_ROWS ? "rows()" : "cols()");
  int k = 0;
  axmove m;
  if (axis_value(s, a, slot, A(0).x->ndim, &k) || axis_in(s, A(0), k, loc, &m, &A(0))) return s->err->status;
  a->have[slot] = 0;
  if (b->fn(s, b->code, a, loc, out)) return s->err->status;
  return axis_out(s, &m, loc, b->name, out);
}

/* ------------------------------------------------- gather, bincount, concat, stack (issue 13)
** x[idx] / take(x, idx) is an RT_GATHER node: an index op like a view whose
** map comes from idx's values, so x's producers run in its consumer's loads
** and idx's too.  Indices are checked here, before the node exists (a min
** and max pass over idx; the position of the first bad one only on error),
** so the kernels never see one out of range.  concat is a chain of binary
** RT_CONCAT nodes over [outer, inner] reshapes; stack is concat of reshapes
** with a new axis of 1. */

/* Position k of an index array as text: "3", or "[1, 2]" past one dim. */
static void pos_str(const rt_node *q, int64_t k, char *buf, size_t len) {
  if (q->ndim <= 1) { snprintf(buf, len, "%lld", (long long)k); return; }
  int64_t co[GK_MAX_DIMS];
  for (int d = q->ndim - 1; d >= 0; d--) { co[d] = k % q->shape[d]; k /= q->shape[d]; }
  size_t o = (size_t)snprintf(buf, len, "[");
  for (int d = 0; d < q->ndim && o < len; d++) o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "", (long long)co[d]);
  if (o < len) snprintf(buf + o, len - o, "]");
}

/* Whether integer array q (not empty) has an element outside [lo, hi]:
** *pos and *val are the first one's.  Computes q. */
static int first_outside(cc_session *s, rt_node *q, int64_t lo, int64_t hi, lang_loc loc, int *bad, int64_t *pos, int64_t *val) {
  *bad = 0;
  cval iv = arr(cast(s, q, GK_I64), V_NONE, 0), mn, mx;
  if (!iv.x || reduce(s, ROP_MIN, iv, loc, "indexing", &mn) || reduce(s, ROP_MAX, iv, loc, "indexing", &mx)) return s->err->status;
  rt_node *xs[2] = { mn.x, mx.x };
  int64_t a, b;
  if (cc_compute(s, xs, 2) || scalar_value(s, &mn, loc, "an index", NULL, &a) || scalar_value(s, &mx, loc, "an index", NULL, &b))
    return s->err->status;
  if (a >= lo && b <= hi) return GK_OK;
  cval lt, gt, o, p;
  if (binop(s, RT_LT, iv, arr(mkconst(s, GK_I64, 0, lo, 0, NULL), V_NONE, 0), loc, &lt) ||
      binop(s, RT_GT, iv, arr(mkconst(s, GK_I64, 0, hi, 0, NULL), V_NONE, 0), loc, &gt) ||
      binop(s, RT_OR, lt, gt, loc, &o) || reduce(s, ROP_ARGMAX, o, loc, "indexing", &p) ||
      scalar_value(s, &p, loc, "a position", NULL, pos))
    return s->err->status;
  rt_node r = blank(RT_VIEW, GK_I64, 0, NULL);
  r.nin = 1; r.in[0] = iv.x; r.voff = *pos;
  cval e = arr(cc_node(s, &r), V_NONE, 0);
  if (!e.x || scalar_value(s, &e, loc, "an index", NULL, val)) return s->err->status;
  *bad = 1;
  return GK_OK;
}

/* An integer index array: floats only when empty (`x[[]]`), bools for bincount. */
static int index_array(cc_session *s, cval *q, lang_loc loc, const char *name) {
  gk_dtype t = q->x->t;
  if ((rt_is_float(t) && q->x->n == 0) || (t == GK_BOOL && !strcmp(name, "bincount"))) {   /* numpy counts bools as 0 / 1 */
    q->x = cast(s, q->x, GK_I64);
    return q->x ? GK_OK : s->err->status;
  }
  if ((rt_is_float(t) || t == GK_BOOL) && !strcmp(name, "indexing"))
    return cc_error(s, loc, GK_ETYPE, "an index array must be of integer or bool type, got %s", tname(t));
  if (rt_is_float(t) || t == GK_BOOL)
    return cc_error(s, loc, GK_ETYPE, "'%s' needs integer indices, got %s", name, tname(t));
  return GK_OK;
}

/* x[idx]: x's first-axis entries picked by integer array idx; shape idx's + x's others. */
static int gather(cc_session *s, cval x, cval idx, lang_loc loc, const char *name, cval *out) {
  if (need_array(s, &x, loc, name) || need_array(s, &idx, loc, name) || index_array(s, &idx, loc, name)) return s->err->status;
  rt_node *d = x.x, *q = idx.x;
  if (d->ndim == 0) return cc_error(s, loc, GK_ETYPE, "too many indices (1) for an array of shape []");
  int64_t len = d->shape[0], shape[GK_MAX_DIMS];
  int nd = q->ndim + d->ndim - 1;
  if (nd > GK_MAX_DIMS) return cc_error(s, loc, GK_ELIMIT, "arrays have at most %d dimensions, got %d", GK_MAX_DIMS, nd);
  memcpy(shape, q->shape, sizeof(int64_t) * (size_t)q->ndim);
  memcpy(shape + q->ndim, d->shape + 1, sizeof(int64_t) * (size_t)(d->ndim - 1));
  if (check_size(s, loc, nd, shape)) return s->err->status;
  if (q->n) {
    int bad; int64_t pos, v;
    if (first_outside(s, q, -len, len - 1, loc, &bad, &pos, &v)) return s->err->status;
    if (bad) {
      char ps[160]; pos_str(q, pos, ps, sizeof ps);
      return cc_error(s, loc, GK_EVALUE, "index %lld at position %s out of range for length %lld", (long long)v, ps, (long long)len);
    }
  }
  rt_node *z;
  if (d->op == RT_CONST) z = mkconst(s, d->t, d->c.f, d->c.i, nd, shape);
  else {
    rt_node r = blank(RT_GATHER, d->t, nd, shape);
    r.nin = 2; r.in[0] = d; r.in[1] = q;
    z = cc_node(s, &r);
  }
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

/* take(x, idx[, axis=k]): numpy.take.  Without an axis, the flattened x;
** with one, x's axis k moved first (a view), gathered, and idx's dims moved
** back to where axis k was: shape x[:k] + idx + x[k+1:]. */
static int b_take(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "take")) return s->err->status;
  cval x = A(0);
  x.view = V_NONE;
  if (!a->have[2]) {
    x.x = reshape_to(s, x.x, 1, &x.x->n);   /* numpy.take without an axis: the flattened array */
    if (!x.x) return s->err->status;
    return gather(s, x, A(1), loc, "take", out);
  }
  int k, nd = x.x->ndim, perm[GK_MAX_DIMS], axes[GK_MAX_DIMS];
  if (axis_value(s, a, 2, nd, &k)) return s->err->status;
  perm[0] = k;
  for (int d = 0, i = 1; d < nd; d++) if (d != k) perm[i++] = d;
  x.x = permute_view(s, x.x, perm);
  if (!x.x || gather(s, x, A(1), loc, "take", out)) return s->err->status;
  int qn = out->x->ndim - (nd - 1);   /* idx's rank */
  for (int i = 0; i < out->x->ndim; i++) axes[i] = i < k ? qn + i : i < k + qn ? i - k : i;
  if (!(out->x = permute_view(s, out->x, axes))) return s->err->status;
  return GK_OK;
}

/* bincount(idx[, weights][, minlength=n]): counts (i64) or weight sums of
** each value of non-negative integer vector idx, length max(idx) + 1 or
** minlength.  Counts run on the histogram primitive (integer atomics);
** weight sums as one row reduction per bin over (idx == bin) * weights, so
** every sum is in index order, deterministic with no float atomics (work
** bins x n: fine for the few hundred bins of a label count). */
static int b_bincount(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  if (need_array(s, &A(0), loc, "bincount") || index_array(s, &A(0), a->loc[0], "bincount")) return s->err->status;
  rt_node *q = A(0).x;
  if (q->ndim != 1) {
    char sh[128]; cc_shape_str(q, sh, sizeof sh);
    return cc_error(s, a->loc[0], GK_ETYPE, "'bincount' needs a vector, got shape %s", sh);
  }
  int64_t nb = 0;
  if (a->have[2] && dim_value(s, &A(2), a->loc[2], "minlength", &nb)) return s->err->status;
  cval w;
  gk_dtype tw = GK_I64;
  if (a->have[1]) {
    if (need_array(s, &A(1), a->loc[1], "bincount")) return s->err->status;
    w = A(1); w.view = V_NONE;
    if (w.x->ndim != 1 || w.x->shape[0] != q->shape[0]) {
      char sa[128], sb[128]; cc_shape_str(w.x, sa, sizeof sa); cc_shape_str(q, sb, sizeof sb);
      return cc_error(s, a->loc[1], GK_ETYPE, "'bincount': weights of shape %s for indices of shape %s", sa, sb);
    }
    w = float_of(s, w);
    if (!w.x) return s->err->status;
    tw = w.x->t;
  }
  if (q->n) {
    int bad; int64_t pos, v;
    if (first_outside(s, q, 0, INT64_MAX, loc, &bad, &pos, &v)) return s->err->status;
    if (bad) return cc_error(s, a->loc[0], GK_EVALUE, "'bincount' needs non-negative integers, got %lld at position %lld",
                             (long long)v, (long long)pos);
    cval mx;
    int64_t m;
    if (reduce(s, ROP_MAX, arr(cast(s, q, GK_I64), V_NONE, 0), loc, "bincount", &mx) ||
        scalar_value(s, &mx, loc, "the largest index", NULL, &m))
      return s->err->status;
    if (m >= nb) nb = m + 1;
  }
  if (check_size(s, loc, 1, &nb)) return s->err->status;
  rt_node *z;
  if (!q->n || !nb) z = mkconst(s, tw, 0, 0, 1, &nb);
  else if (!a->have[1]) {
    rt_node r = blank(RT_HIST, GK_I64, 1, &nb);
    r.nin = 3; r.in[0] = cast(s, q, GK_I64); r.in[1] = mkconst(s, GK_F64, 0, 0, 0, NULL);
    r.in[2] = mkconst(s, GK_F64, (double)nb, 0, 0, NULL); r.nbins = nb;
    if (!r.in[0] || !r.in[1] || !r.in[2]) return s->err->status;
    z = cc_node(s, &r);
  } else {
    int64_t sh[2] = { nb, q->n };
    rt_node ri = blank(RT_IOTA, GK_I64, 1, &nb);
    rt_node *bins = bcast(s, cc_node(s, &ri), 2, sh, 1), *keys = bcast(s, cast(s, q, GK_I64), 2, sh, 0);
    rt_node *eq = binop_node(s, RT_EQ, GK_BOOL, keys, bins);
    rt_node r = blank(RT_WHERE, tw, 2, sh);
    r.nin = 3; r.in[0] = eq; r.in[1] = bcast(s, w.x, 2, sh, 0); r.in[2] = mkconst(s, tw, 0, 0, 2, sh);
    if (!r.in[0] || !r.in[1] || !r.in[2]) return s->err->status;
    cval m = arr(cc_node(s, &r), V_ROWS, 0), sm;
    if (!m.x || reduce(s, ROP_SUM, m, loc, "bincount", &sm)) return s->err->status;
    z = sm.x;
  }
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

/* concat(a, b, ...[, axis=k]) / stack(a, b, ...[, axis=k]) (numpy's rules and words). */
static int b_join(cc_session *s, int code, bargs *a, lang_loc loc, cval *out) {
  const char *name = code ? "stack" : "concat";
  int n = 0;
  for (int i = 0; i < a->n; i++) if (a->have[i]) n++;
  if (!n) return cc_error(s, loc, GK_ETYPE, code ? "need at least one array to stack" : "need at least one array to concatenate");
  for (int i = 0; i < n; i++) if (need_array(s, &a->v[i], a->loc[i], name)) return s->err->status;
  rt_node *x0 = a->v[0].x;
  if (!code && x0->ndim == 0) return cc_error(s, a->loc[0], GK_ETYPE, "zero-dimensional arrays cannot be concatenated");
  int nd = x0->ndim + code, k = 0;
  if (a->have[KW_SLOT(0)]) {
    int64_t ax;
    cval *v = &a->v[KW_SLOT(0)];
    lang_loc al = a->loc[KW_SLOT(0)];
    if (v->kind != K_ARRAY || v->x->n != 1 || v->x->ndim != 0 || rt_is_float(v->x->t) || v->x->t == GK_BOOL)
      return cc_error(s, al, GK_ETYPE, "axis must be an integer");
    if (scalar_value(s, v, al, "axis", NULL, &ax)) return s->err->status;
    if (ax < -nd || ax >= nd) return cc_error(s, al, GK_EVALUE, "axis %lld is out of bounds for array of dimension %d", (long long)ax, nd);
    k = (int)(ax < 0 ? ax + nd : ax);
  }
  /* dtype: promoted over all (weak literals adapt) */
  rt_node tn = blank(RT_CONST, x0->t, 0, NULL);
  cval acc = arr(&tn, V_NONE, a->v[0].weak);
  for (int i = 1; i < n; i++) {
    const rt_node *xi = a->v[i].x;
    if (code) {
      if (xi->ndim != x0->ndim || memcmp(xi->shape, x0->shape, sizeof(int64_t) * (size_t)x0->ndim))
        return cc_error(s, a->loc[i], GK_ETYPE, "all input arrays must have the same shape");
    } else {
      if (xi->ndim != x0->ndim)
        return cc_error(s, a->loc[i], GK_ETYPE, "all the input arrays must have same number of dimensions, but the array at index 0 has %d dimension(s) and the array at index %d has %d dimension(s)",
                        x0->ndim, i, xi->ndim);
      for (int d = 0; d < nd; d++)
        if (d != k && xi->shape[d] != x0->shape[d])
          return cc_error(s, a->loc[i], GK_ETYPE, "all the input array dimensions except for the concatenation axis must match exactly, but along dimension %d, the array at index 0 has size %lld and the array at index %d has size %lld",
                          d, (long long)x0->shape[d], i, (long long)xi->shape[d]);
    }
    tn.t = promote(&acc, &a->v[i]);
    acc.weak = acc.weak && a->v[i].weak;
  }
  gk_dtype t = tn.t;
  /* result shape; every part as [outer, len_i * inner] */
  int64_t shape[GK_MAX_DIMS], outer = 1, inner = 1, total = 0;
  if (code) {
    for (int d = 0; d < nd; d++) shape[d] = d == k ? 1 : x0->shape[d < k ? d : d - 1];
  } else memcpy(shape, x0->shape, sizeof(int64_t) * (size_t)nd);
  for (int d = 0; d < k; d++) outer *= shape[d];
  for (int d = k + 1; d < nd; d++) inner *= shape[d];
  rt_node *z = NULL;
  for (int i = 0; i < n; i++) {
    rt_node *xi = cast(s, a->v[i].x, t);
    int64_t li = code ? 1 : a->v[i].x->shape[k];
    total += li;
    if (!xi) return s->err->status;
    if (li == 0 || outer == 0 || inner == 0) continue;   /* an empty part adds nothing */
    int64_t sh[2] = { outer, li * inner };
    xi = reshape_to(s, strong_const(s, xi), 2, sh);
    if (!xi) return s->err->status;
    if (!z) { z = xi; continue; }
    int64_t so[2] = { outer, z->shape[1] + sh[1] };
    rt_node r = blank(RT_CONCAT, t, 2, so);
    r.nin = 2; r.in[0] = z; r.in[1] = xi;
    if (!(z = cc_node(s, &r))) return s->err->status;
  }
  shape[k] = total;
  if (check_size(s, loc, nd, shape)) return s->err->status;
  z = z ? reshape_to(s, z, nd, shape) : mkconst(s, t, 0, 0, nd, shape);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

/* ------------------------------------------------------------- the table */

/* An RT_OPS row with flags OF_FN is the builtin of its name (flags 0: none). */
#define OP_BUILTIN(NAME, str, nin, cls, rule, fl, sym, ef, ed, ei, eb) OP_BUILTIN_##fl(str, nin, RT_##NAME)
#define OP_BUILTIN_0(str, nin, op)
#define OP_BUILTIN_OF_FN(str, nin, op) { str, nin, nin, OP_PARAMS_##nin, op },
#define OP_PARAMS_1 { "x" }, b_unary
#define OP_PARAMS_2 { "a", "b" }, b_binary

/* An RT_ROPS row marked FN is the builtin reduction of its name. */
#define ROP_BUILTIN(NAME, str, acc, fl, fn) ROP_BUILTIN_##fn(str, ROP_##NAME)
#define ROP_BUILTIN_NOFN(str, rop)
#define ROP_BUILTIN_FN(str, rop) { str, 1, 1, { "x", "axis" }, b_reduce, rop },

static const builtin builtins[] = {
  { "iota", 1, 1, { "n" }, b_iota, 0 },
  { "zeros", 0, -1, { 0 }, b_fillers, 0 },
  { "ones", 0, -1, { 0 }, b_fillers, 1 },
  { "fill", 1, -1, { 0 }, b_fill, 0 },
  { "rand", 0, -1, { 0 }, b_rand, 0 },
  { "randn", 0, -1, { 0 }, b_rand, 1 },
  { "seed", 1, 1, { "s" }, b_seed, 0 },
  RT_OPS(OP_BUILTIN)   /* the elementwise functions: every OF_FN row of runtime/ops.h */
  { "clamp", 3, 3, { "x", "lo", "hi" }, b_clamp, 0 },
  { "where", 3, 3, { "c", "a", "b" }, b_where, 0 },
  { "f32", 1, 1, { "x" }, b_cast, GK_F32 },
  { "f64", 1, 1, { "x" }, b_cast, GK_F64 },
  { "i32", 1, 1, { "x" }, b_cast, GK_I32 },
  { "i64", 1, 1, { "x" }, b_cast, GK_I64 },
  { "bool", 1, 1, { "x" }, b_cast, GK_BOOL },
  RT_ROPS(ROP_BUILTIN)   /* sum, prod, max, min, argmax, argmin, any, all: the FN rows of RT_ROPS */
  { "mean", 1, 1, { "x", "axis" }, b_mean, 0 },
  { "count", 1, 1, { "x", "axis" }, b_count, 0 },
  { "norm", 1, 1, { "x", "axis" }, b_norm, 0 },
  { "var", 1, 1, { "x", "axis" }, b_var, 0 },
  { "std", 1, 1, { "x", "axis" }, b_var, 1 },
  { "logsumexp", 1, 1, { "x", "axis" }, b_logsumexp, 0 },
  { "dot", 2, 2, { "a", "b" }, b_dot, 0 },
  { "scan", 1, 2, { "x", "op", "axis" }, b_scan, 0 },
  { "exscan", 1, 2, { "x", "op", "axis" }, b_scan, 1 },
  { "softmax", 1, 1, { "x", "axis" }, b_softmax, 0 },
  { "logsoftmax", 1, 1, { "x", "axis" }, b_softmax, 1 },
  { "layernorm", 1, 3, { "x", "gamma", "beta", "eps", "axis" }, b_layernorm, 0 },
  { "rmsnorm", 1, 2, { "x", "gamma", "eps", "axis" }, b_rmsnorm, 0 },
  { "filter", 2, 2, { "x", "mask" }, b_select, RT_FILTER },
  { "partition", 2, 2, { "x", "mask" }, b_select, RT_PARTITION },
  { "hist", 2, 4, { "x", "nbins", "lo", "hi" }, b_hist, 0 },
  { "transpose", 1, 1, { "m" }, b_transpose, 0 },
  { "reshape", 1, -1, { 0 }, b_reshape, 0 },
  { "permute", 1, -1, { 0 }, b_permute, 0 },
  { "len", 1, 1, { "x" }, b_len, 0 },
  { "size", 1, 1, { "x" }, b_len, 1 },
  { "shape", 1, 1, { "x" }, b_shape, 0 },
  { "rows", 1, 1, { "m" }, b_view, V_ROWS },
  { "cols", 1, 1, { "m" }, b_view, V_COLS },
  { "load", 1, 2, { "file", "name" }, b_load, 0 },
  { "save", 2, -1, { "file", "x" }, b_save, 0 },
  { "loadtxt", 1, 3, { "file", "delimiter", "skiprows" }, b_load, 1 },
  { "savetxt", 2, 3, { "file", "x", "delimiter" }, b_save, 1 },
  { "print", 0, -1, { 0 }, b_print, 0 },
  { "take", 2, 3, { "x", "idx", "axis" }, b_take, 0 },
  { "bincount", 1, 2, { "idx", "weights", "minlength" }, b_bincount, 0 },
  { "concat", 0, -1, { "axis" }, b_join, 0 },
  { "stack", 0, -1, { "axis" }, b_join, 1 },
  { "plot", 1, 2, { "x", "y" }, b_plot, 0 },
  { "sort", 1, 1, { "x", "axis" }, b_sort, 0 },
  { "argsort", 1, 1, { "x", "axis" }, b_sort, 1 },
  { "topk", 2, 2, { "x", "k", "axis" }, b_sort, 2 },
  { "argtopk", 2, 2, { "x", "k", "axis" }, b_sort, 3 },
  { "unique", 1, 1, { "x" }, b_unique, 0 },
  { "median", 1, 1, { "x", "axis" }, b_median, 0 },
  { "quantile", 2, 2, { "x", "q", "axis" }, b_quantile, 0 },
  { "searchsorted", 2, 2, { "a", "v" }, b_searchsorted, 0 },
};

enum { NBUILTINS = sizeof builtins / sizeof builtins[0] };

/* The builtin names in table order, NULL-terminated (gk_builtin_names);
** filled once (contexts on several threads suggest names at once). */
static const char *builtin_names[NBUILTINS + 1];
static pthread_once_t builtin_names_once = PTHREAD_ONCE_INIT;
static void fill_builtin_names(void) {
  for (int i = 0; i < NBUILTINS; i++) builtin_names[i] = builtins[i].name;
  builtin_names[NBUILTINS] = NULL;
}
const char *const *cc_builtin_names(void) {
  pthread_once(&builtin_names_once, fill_builtin_names);
  return builtin_names;
}

static const builtin *find_builtin(const char *name) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (!strcmp(builtins[i].name, name)) return &builtins[i];
  return NULL;
}

/* ------------------------------------------------------------- expressions */

/* Parameters of the user functions being expanded: innermost first. */
typedef struct frame {
  struct frame *up;
  const cfn *fn;
  cval args[LANG_MAX_PARAMS];
} frame;

static _Thread_local frame *cur_frame;   /* per call of cc_eval_expr; see eval_call_fn (reset in cc_exec); per thread: contexts on different threads run at once */

static int eval(cc_session *s, const ast *e, cval *out);

/* gk_interrupt was called (the flag the backend polls too). */
static int stopped(cc_session *s) {
  return s->be && s->be->interrupt && atomic_load_explicit(s->be->interrupt, memory_order_relaxed);
}

/* A histogram whose range is known only from data: it can fail when it runs
** (a range that is not finite, bins without a finite width). */
static int may_fail(const rt_node *x) {
  return x->op == RT_HIST && !x->val && (x->excl ? x->in[0]->n > 0 : x->in[1]->op != RT_CONST || x->in[2]->op != RT_CONST);
}

static int op_of(ast_op op) {
  switch (op) {
  case AST_OP_ADD: return RT_ADD; case AST_OP_SUB: return RT_SUB; case AST_OP_MUL: return RT_MUL;
  case AST_OP_DIV: return RT_DIV; case AST_OP_MOD: return RT_MOD; case AST_OP_POW: return RT_POW;
  case AST_OP_EQ: return RT_EQ; case AST_OP_NE: return RT_NE; case AST_OP_LT: return RT_LT;
  case AST_OP_LE: return RT_LE; case AST_OP_GT: return RT_GT; case AST_OP_GE: return RT_GE;
  case AST_OP_AND: return RT_AND; case AST_OP_OR: return RT_OR;
  default: return -1;
  }
}

/* The scan operator named n (an RF_SCAN row of RT_ROPS), or -1. */
static int rop_named(const char *n) {
  for (int r = 0; r < ROP_N; r++)
    if ((rt_rop_info[r].flags & RF_SCAN) && !strcmp(rt_rop_info[r].name, n)) return r;
  return -1;
}

static int eval_name(cc_session *s, const ast *e, cval *out) {
  for (frame *f = cur_frame; f; f = NULL) {   /* only the innermost function's parameters are visible */
    for (int i = 0; i < f->fn->nparams; i++)
      if (!strcmp(f->fn->params[i], e->str)) { *out = f->args[i]; return GK_OK; }
  }
  cvar *v = cc_findvar(s, e->str);
  if (v) { *out = v->v; return GK_OK; }
  if (find_builtin(e->str) || cc_findfn(s, e->str))
    return cc_error(s, e->loc, GK_ETYPE, "'%s' is a function; call it as %s(...)", e->str, e->str);
  char hint[192];
  return cc_error(s, e->loc, GK_ETYPE, "unknown name '%s'%s", e->str, cc_hint(s, cc_builtin_names(), e->str, 0, -1, hint, sizeof hint));
}

/* A list literal: numbers (nested lists for matrices) into a host array. */
typedef struct litbuf { double *f; int64_t *i; int64_t n, cap; int kind; int ndim; int64_t shape[GK_MAX_DIMS]; } litbuf;

static int lit_walk(cc_session *s, const ast *e, litbuf *b, int depth) {
  if (e->kind == AST_LIST) {
    if (depth >= GK_MAX_DIMS) return cc_error(s, e->loc, GK_ELIMIT, "arrays have at most %d dimensions", GK_MAX_DIMS);
    if (b->ndim <= depth) {
      if (b->n > 0) return cc_error(s, e->loc, GK_ETYPE, "ragged list: mixes numbers and lists");
      b->ndim = depth + 1; b->shape[depth] = e->nkids;
    } else if (b->shape[depth] != e->nkids)
      return cc_error(s, e->loc, GK_ETYPE, "ragged list: %d element%s where %lld were expected", e->nkids, e->nkids == 1 ? "" : "s", (long long)b->shape[depth]);
    for (int i = 0; i < e->nkids; i++) if (lit_walk(s, e->kids[i], b, depth + 1)) return s->err->status;
    return GK_OK;
  }
  if (depth != b->ndim) return cc_error(s, e->loc, GK_ETYPE, "ragged list: mixes numbers and lists");
  cval v;
  if (eval(s, e, &v)) return s->err->status;
  if (v.kind != K_ARRAY || v.x->n != 1 || v.x->ndim != 0)
    return cc_error(s, e->loc, GK_ETYPE, "list elements must be numbers");
  double f; int64_t i;
  if (scalar_value(s, &v, e->loc, "a list element", &f, &i)) return s->err->status;
  int k = kind_of(v.x->t);
  if (k > b->kind) b->kind = k;
  if (b->n >= LANG_MAX_LIST) return cc_error(s, e->loc, GK_ELIMIT, "too many list elements (limit %d)", LANG_MAX_LIST);
  if (b->n == b->cap) {
    int64_t nc = b->cap ? b->cap * 2 : 16;
    double *nf = rt_realloc(s->mem, b->f, sizeof(double) * (size_t)b->cap, sizeof(double) * (size_t)nc);
    if (!nf) return cc_error(s, e->loc, GK_ENOMEM, "out of memory");
    b->f = nf;
    int64_t *ni = rt_realloc(s->mem, b->i, sizeof(int64_t) * (size_t)b->cap, sizeof(int64_t) * (size_t)nc);
    if (!ni) return cc_error(s, e->loc, GK_ENOMEM, "out of memory");
    b->i = ni;
    b->cap = nc;
  }
  b->f[b->n] = rt_is_float(v.x->t) ? f : (double)i;
  b->i[b->n] = i;
  b->n++;
  return GK_OK;
}

static int eval_list(cc_session *s, const ast *e, cval *out) {
  litbuf b; memset(&b, 0, sizeof b);
  int rc = lit_walk(s, e, &b, 0);
  rt_node *x = NULL;
  if (!rc) {
    gk_dtype t = b.kind == 2 ? GK_F32 : b.kind == 1 ? GK_I64 : (b.n ? GK_BOOL : GK_F32);
    size_t es = rt_dtype_size(t);
    void *d = rt_alloc(s->mem, (size_t)b.n * es + 1);
    if (!d) rc = cc_error(s, e->loc, GK_ENOMEM, "out of memory");
    else {
      for (int64_t k = 0; k < b.n; k++) {
        switch (t) {
        case GK_BOOL: ((uint8_t *)d)[k] = b.i[k] != 0; break;
        case GK_I64: ((int64_t *)d)[k] = b.i[k]; break;
        case GK_F32: ((float *)d)[k] = (float)b.f[k]; break;
        default: break;
        }
      }
      x = host_array(s, t, b.ndim, b.shape, d, e->loc);
      rt_free(s->mem, d, (size_t)b.n * es + 1);
      if (!x) rc = s->err->status;
    }
  }
  rt_free(s->mem, b.f, sizeof(double) * (size_t)b.cap);
  rt_free(s->mem, b.i, sizeof(int64_t) * (size_t)b.cap);
  if (rc) return rc;
  *out = arr(x, V_NONE, 0);
  return GK_OK;
}

/* Index of position k along a dimension of length len (negative counts from the end). */
static int norm_index(cc_session *s, lang_loc loc, int64_t i, int64_t len, int64_t *out) {
  int64_t j = i < 0 ? i + len : i;
  if (j < 0 || j >= len) return cc_error(s, loc, GK_EVALUE, "index %lld out of range for length %lld", (long long)i, (long long)len);
  *out = j;
  return GK_OK;
}

static int slice_bound(cc_session *s, const ast *e, int64_t dflt, int64_t *v) {
  if (!e) { *v = dflt; return GK_OK; }
  cval c;
  if (eval(s, e, &c)) return s->err->status;
  if (c.kind != K_ARRAY || c.x->n != 1 || rt_is_float(c.x->t) || c.x->t == GK_BOOL)
    return cc_error(s, e->loc, GK_ETYPE, "slice bounds must be integers");
  return scalar_value(s, &c, e->loc, "a slice bound", NULL, v);
}

static int eval_index(cc_session *s, const ast *e, cval *out) {
  cval tv;
  if (eval(s, e->kids[0], &tv)) return s->err->status;
  if (need_array(s, &tv, e->loc, "indexing")) return s->err->status;
  rt_node *x = tv.x;
  int npos = e->nkids - 1;
  if (npos == 1 && e->kids[1]->kind != AST_SLICE) {
    cval iv;
    if (eval(s, e->kids[1], &iv)) return s->err->status;
    if (iv.kind == K_ARRAY && iv.x->t == GK_BOOL && iv.x->ndim > 0)
      return select_op(s, RT_FILTER, tv, iv, e->loc, "filter", out);
    if (iv.kind == K_ARRAY && iv.x->ndim > 0) return gather(s, tv, iv, e->loc, "indexing", out);   /* x[idx], m[idx] */
  }
  if (npos > x->ndim) {
    char sh[128]; cc_shape_str(x, sh, sizeof sh);
    return cc_error(s, e->loc, GK_ETYPE, "too many indices (%d) for an array of shape %s", npos, sh);
  }
  int64_t st[GK_MAX_DIMS], acc = 1;
  for (int d = x->ndim - 1; d >= 0; d--) { st[d] = acc; acc *= x->shape[d]; }
  rt_node r = blank(RT_VIEW, x->t, 0, NULL);
  r.nin = 1; r.in[0] = x;
  int nd = 0;
  for (int d = 0; d < x->ndim; d++) {
    const ast *p = d < npos ? e->kids[d + 1] : NULL;
    if (!p) { r.shape[nd] = x->shape[d]; r.vstride[nd++] = st[d]; continue; }
    if (p->kind == AST_SLICE) {
      int64_t len = x->shape[d], a0, b0, step;
      if (slice_bound(s, p->kids[2], 1, &step)) return s->err->status;
      if (step == 0) return cc_error(s, p->loc, GK_EVALUE, "slice step cannot be zero");
      if (slice_bound(s, p->kids[0], step > 0 ? 0 : len - 1, &a0) ||
          slice_bound(s, p->kids[1], step > 0 ? len : -len - 1, &b0))
        return s->err->status;
      /* numpy's clamping */
      if (p->kids[0]) { if (a0 < 0) a0 += len; if (a0 < 0) a0 = step > 0 ? 0 : -1; if (a0 >= len) a0 = step > 0 ? len : len - 1; }
      if (p->kids[1]) { if (b0 < 0) b0 += len; if (b0 < 0) b0 = step > 0 ? 0 : -1; if (b0 >= len) b0 = step > 0 ? len : len - 1; }
      else if (step < 0) b0 = -1;
      /* in unsigned: a step near INT64_MIN / INT64_MAX takes one element, as in numpy */
      uint64_t ustep = step > 0 ? (uint64_t)step : -(uint64_t)step;
      int64_t cnt = step > 0 ? (b0 > a0 ? (int64_t)((uint64_t)(b0 - a0 - 1) / ustep) + 1 : 0)
                             : (a0 > b0 ? (int64_t)((uint64_t)(a0 - b0 - 1) / ustep) + 1 : 0);
      r.shape[nd] = cnt; r.vstride[nd++] = cnt > 1 ? st[d] * step : st[d];
      if (cnt) r.voff += a0 * st[d];
      continue;
    }
    cval iv;
    if (eval(s, p, &iv)) return s->err->status;
    if (iv.kind != K_ARRAY || iv.x->n != 1 || iv.x->ndim != 0 || rt_is_float(iv.x->t) || iv.x->t == GK_BOOL)
      return cc_error(s, p->loc, GK_ETYPE, "an index must be an integer, a slice or a bool mask");
    int64_t i = 0, j = 0;
    if (scalar_value(s, &iv, p->loc, "an index", NULL, &i) || norm_index(s, e->loc, i, x->shape[d], &j))
      return s->err->status;
    r.voff += j * st[d];
  }
  r.ndim = nd;
  rt_node *z = cc_node(s, &r);
  if (!z) return s->err->status;
  *out = arr(z, V_NONE, 0);
  return GK_OK;
}

static int takes_axis(const builtin *b) {
  for (int k = 0; k < BUILTIN_PARAMS && b->params[k]; k++) if (!strcmp(b->params[k], "axis")) return k >= b->max;
  return 0;
}

/* numpy's positional axis, sum(m, 0): an int literal that could be an axis
** after an operand that is not a number (max(x, 1) and min(x, -1) only for
** 0 and +-1: max(a, 3) means maximum). */
static int looks_like_axis(const builtin *b, const ast *e) {
  const ast *k = e->kids[b->max], *x = e->kids[0];
  int neg = k->kind == AST_UNARY && k->op == AST_OP_NEG;
  if (neg) k = k->kids[0];
  if (k->kind != AST_INT || x->kind == AST_INT || x->kind == AST_FLOAT || x->kind == AST_BOOL) return 0;
  if (k->ival < -GK_MAX_DIMS || k->ival > GK_MAX_DIMS) return 0;
  int64_t v = neg ? -k->ival : k->ival;
  if (!strcmp(b->name, "max") || !strcmp(b->name, "min")) return v >= -1 && v <= 1;
  return v >= -GK_MAX_DIMS && v < GK_MAX_DIMS;
}

/* Evaluates the arguments of a builtin call into slots by parameter. */
static int bind_args(cc_session *s, const ast *e, const builtin *b, bargs *a) {
  memset(a->have, 0, sizeof a->have);
  a->n = 0;
  a->call = e;
  int npos = 0, maxp = 0;
  while (maxp < BUILTIN_PARAMS && b->params[maxp]) maxp++;
  for (int i = 0; i < e->nkids; i++) if (!e->kwname || !e->kwname[i]) npos++;
  int nkw_req = 0;   /* keyword arguments naming a required parameter count towards the arity */
  for (int i = 0; i < e->nkids; i++)
    if (e->kwname && e->kwname[i])
      for (int k = npos; k < maxp && k < b->min; k++) if (!strcmp(b->params[k], e->kwname[i])) nkw_req++;
  int given = npos + nkw_req;
  if (given < b->min || (b->max >= 0 && npos > b->max)) {
    int got = given < b->min ? given : npos;
    char hint[192];
    if (npos == b->max + 1 && b->max >= 1 && takes_axis(b) && looks_like_axis(b, e))   /* numpy's sum(m, 0) */
      return cc_error(s, e->loc, GK_ETYPE, "'%s' takes %d argument%s, got %d; an axis is given by name: axis=%s%lld",
                      b->name, b->max, b->max == 1 ? "" : "s", got, e->kids[b->max]->kind == AST_UNARY ? "-" : "",
                      (long long)(e->kids[b->max]->kind == AST_UNARY ? e->kids[b->max]->kids[0] : e->kids[b->max])->ival);
    if (b->min == b->max)
      return cc_error(s, e->loc, GK_ETYPE, "'%s' takes %d argument%s, got %d%s", b->name, b->min, b->min == 1 ? "" : "s", got,
                      cc_hint(s, cc_builtin_names(), b->name, 1, got, hint, sizeof hint));
    if (b->max < 0)
      return cc_error(s, e->loc, GK_ETYPE, "'%s' takes at least %d argument%s, got %d", b->name, b->min, b->min == 1 ? "" : "s", got);
    return cc_error(s, e->loc, GK_ETYPE, "'%s' takes %d to %d arguments, got %d", b->name, b->min, b->max, got);
  }
  int isscan = b->fn == b_scan;
  for (int i = 0; i < e->nkids; i++) {
    int slot = i;
    lang_loc l = e->kids[i]->loc;
    if (e->kwname && e->kwname[i]) {
      slot = -1;
      for (int k = 0; k < maxp; k++) if (!strcmp(b->params[k], e->kwname[i])) slot = k;
      if (b->max < 0 && slot >= 0) slot = KW_SLOT(slot);
      if (slot < 0 || slot < npos)
        return cc_error(s, e->loc, GK_ETYPE, slot < 0 ? "'%s' has no argument '%s'" : "'%s' got argument '%s' twice",
                        b->name, e->kwname[i]);
    }
    if (slot >= LANG_MAX_ARGS && !(b->max < 0 && e->kwname && e->kwname[i]))
      return cc_error(s, l, GK_ELIMIT, "too many arguments");
    if (isscan && slot == 1 && e->kids[i]->kind == AST_NAME && rop_named(e->kids[i]->str) < 0 && !cc_findvar(s, e->kids[i]->str))
      return cc_error(s, l, GK_ETYPE, "'%s' takes an operator: sum, prod, max or min, got '%s'", b->name, e->kids[i]->str);
    if (isscan && slot == 1 && e->kids[i]->kind == AST_NAME && rop_named(e->kids[i]->str) >= 0) {
      memset(&a->v[slot], 0, sizeof a->v[slot]);
      a->v[slot].kind = K_OPNAME;
      a->v[slot].rop = rop_named(e->kids[i]->str);
    } else if (eval(s, e->kids[i], &a->v[slot])) return s->err->status;
    a->have[slot] = 1;
    a->loc[slot] = l;
    if (slot + 1 > a->n && slot < LANG_MAX_ARGS) a->n = slot + 1;
  }
  return GK_OK;
}

static int eval_call(cc_session *s, const ast *e, cval *out) {
  cfn *f = cc_findfn(s, e->str);
  if (f) {
    if (f->expanding) return cc_error(s, e->loc, GK_ETYPE, "recursive function '%s'", f->name);
    int inl = 0;
    for (frame *q = cur_frame; q; q = q->up) inl++;
    if (inl >= CC_MAX_INLINE_DEPTH)
      return cc_error(s, e->loc, GK_ELIMIT, "functions nested too deeply (limit %d)", CC_MAX_INLINE_DEPTH);
    for (int i = 0; e->kwname && i < e->nkids; i++) {
      int known = 0;
      if (!e->kwname[i]) continue;
      for (int k = 0; k < f->nparams; k++) if (!strcmp(f->params[k], e->kwname[i])) known = 1;
      if (!known) return cc_error(s, e->loc, GK_ETYPE, "'%s' has no argument '%s'", f->name, e->kwname[i]);
    }
    if (e->nkids != f->nparams)
      return cc_error(s, e->loc, GK_ETYPE, "'%s' takes %d argument%s, got %d", f->name, f->nparams, f->nparams == 1 ? "" : "s", e->nkids);
    frame fr;
    memset(&fr, 0, sizeof fr);
    fr.fn = f;
    int have[LANG_MAX_PARAMS] = {0};
    for (int i = 0; i < e->nkids; i++) {
      int slot = i;
      if (e->kwname && e->kwname[i]) {
        slot = -1;
        for (int k = 0; k < f->nparams; k++) if (!strcmp(f->params[k], e->kwname[i])) slot = k;
        if (slot < 0) return cc_error(s, e->loc, GK_ETYPE, "'%s' has no argument '%s'", f->name, e->kwname[i]);
        if (have[slot]) return cc_error(s, e->loc, GK_ETYPE, "'%s' got argument '%s' twice", f->name, e->kwname[i]);
      }
      have[slot] = 1;
      if (eval(s, e->kids[i], &fr.args[slot])) return s->err->status;
    }
    fr.up = cur_frame;
    frame *saved = cur_frame;
    cur_frame = &fr;
    f->expanding = 1;
    int rc = eval(s, f->body, out);
    f->expanding = 0;
    cur_frame = saved;
    return rc;
  }
  const builtin *b = find_builtin(e->str);
  char hint[192];
  if (!b) return cc_error(s, e->loc, GK_ETYPE, "unknown function '%s'%s", e->str, cc_hint(s, cc_builtin_names(), e->str, 1, -1, hint, sizeof hint));
  bargs *a = rt_alloc(s->mem, sizeof *a);
  if (!a) return cc_error(s, e->loc, GK_ENOMEM, "out of memory");
  int rc = bind_args(s, e, b, a);
  if (!rc) rc = call_builtin(s, b, a, e->loc, out);
  rt_free(s->mem, a, sizeof *a);
  return rc;
}

static int eval(cc_session *s, const ast *e, cval *out) {
  if (++s->steps > CC_MAX_STEPS)
    return cc_error(s, e->loc, GK_ELIMIT, "statement too large to expand (limit %d steps): user functions are inlined at every call",
                    CC_MAX_STEPS);
  if (!(s->steps & 4095) && stopped(s)) return cc_error(s, e->loc, GK_EINTERRUPT, "interrupted");
  if (++s->depth > CC_MAX_EVAL_DEPTH) {
    s->depth--;
    return cc_error(s, e->loc, GK_ELIMIT, "expression nested too deeply (limit %d)", LANG_MAX_DEPTH);
  }
  int rc = GK_OK;
  memset(out, 0, sizeof *out);
  switch (e->kind) {
  case AST_INT: {
    rt_node *x = mkconst(s, GK_I64, (double)e->ival, e->ival, 0, NULL);
    if (!x) rc = s->err->status; else *out = arr(x, V_NONE, 1);
    break;
  }
  case AST_FLOAT: {
    rt_node *x = mkconst(s, GK_F32, e->fval, 0, 0, NULL);
    if (!x) rc = s->err->status; else *out = arr(x, V_NONE, 1);
    break;
  }
  case AST_BOOL: {
    rt_node *x = mkconst(s, GK_BOOL, 0, e->ival, 0, NULL);
    if (!x) rc = s->err->status; else *out = arr(x, V_NONE, 1);
    break;
  }
  case AST_STR:
    out->kind = K_STR; out->str = e->str; out->len = e->len;
    break;
  case AST_NAME: rc = eval_name(s, e, out); break;
  case AST_LIST: rc = eval_list(s, e, out); break;
  case AST_UNARY: {
    cval a;
    rc = eval(s, e->kids[0], &a);
    if (!rc) rc = unary(s, e->op == AST_OP_NOT ? RT_NOT : RT_NEG, a, e->loc, e->op == AST_OP_NOT ? "not" : "-", out);
    break;
  }
  case AST_BINARY: {
    cval a, b;
    rc = eval(s, e->kids[0], &a);
    if (!rc) rc = eval(s, e->kids[1], &b);
    if (rc) break;
    if (e->op == AST_OP_MATMUL) rc = matmul(s, a, b, e->loc, out);
    else rc = binop(s, op_of(e->op), a, b, e->loc, out);
    break;
  }
  case AST_CALL: rc = eval_call(s, e, out); break;
  case AST_INDEX: rc = eval_index(s, e, out); break;
  default: rc = cc_error(s, e->loc, GK_ESYNTAX, "unexpected %s in an expression", ast_kind_name(e->kind)); break;
  }
  s->depth--;
  return rc;
}

/* ------------------------------------------------------------- statements */

static ast *ast_copy(lang_arena *a, const ast *e) {
  if (!e) return NULL;
  ast *c = lang_arena_alloc(a, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  if (e->str && !(c->str = lang_arena_strdup(a, e->str, e->len))) return NULL;
  if (e->nkids) {
    c->kids = lang_arena_alloc(a, sizeof(ast *) * (size_t)e->nkids);
    if (!c->kids) return NULL;
    for (int i = 0; i < e->nkids; i++)
      if (e->kids[i] && !(c->kids[i] = ast_copy(a, e->kids[i]))) return NULL;
  }
  if (e->kwname) {
    int n = e->kind == AST_FN ? (int)e->ival : e->nkids;
    c->kwname = lang_arena_alloc(a, sizeof(char *) * (size_t)(n ? n : 1));
    if (!c->kwname) return NULL;
    for (int i = 0; i < n; i++)
      if (e->kwname[i] && !(c->kwname[i] = lang_arena_strdup(a, e->kwname[i], strlen(e->kwname[i])))) return NULL;
    if (e->kwloc) {
      c->kwloc = lang_arena_alloc(a, sizeof(lang_loc) * (size_t)(n ? n : 1));
      if (!c->kwloc) return NULL;
      memcpy(c->kwloc, e->kwloc, sizeof(lang_loc) * (size_t)n);
    }
  }
  return c;
}

/* Finds a call of `name` in body (a direct recursion). */
static const ast *find_call(const ast *e, const char *name) {
  if (!e) return NULL;
  if (e->kind == AST_CALL && !strcmp(e->str, name)) return e;
  for (int i = 0; i < e->nkids; i++) {
    const ast *r = find_call(e->kids[i], name);
    if (r) return r;
  }
  return NULL;
}

static void *arena_hook(void *ud, void *p, size_t o, size_t n) {
  rt_mem *m = ud;
  return m->fn(m->ud, p, o, n);
}

static int define_fn(cc_session *s, const ast *st) {
  if (find_builtin(st->str)) return cc_error(s, st->loc, GK_ETYPE, "'%s' is a builtin function", st->str);
  if (cc_findvar(s, st->str))   /* as `f = 3` after `fn f(a) = ...` is refused: one name, one meaning */
    return cc_error(s, st->loc, GK_ETYPE, "'%s' is a variable; choose another function name", st->str);
  const ast *rec = find_call(st->kids[0], st->str);
  if (rec) return cc_error(s, rec->loc, GK_ETYPE, "recursive function '%s'", st->str);
  cfn nf;
  memset(&nf, 0, sizeof nf);
  lang_arena_init(&nf.arena, arena_hook, s->mem);
  ast *copy = ast_copy(&nf.arena, st);
  size_t ln = strlen(st->str);
  nf.name = rt_alloc(s->mem, ln + 1);
  if (!copy || !nf.name) {
    lang_arena_free(&nf.arena);
    rt_free(s->mem, nf.name, ln + 1);
    return cc_error(s, st->loc, GK_ENOMEM, "out of memory");
  }
  memcpy(nf.name, st->str, ln + 1);
  nf.body = copy->kids[0];
  nf.nparams = (int)st->ival;
  nf.params = copy->kwname;
  return cc_setfn(s, &nf, st->loc);
}

int cc_exec(cc_session *s, const ast *st, rt_err *err, lang_loc *loc) {
  rt_err *saved = s->err;
  s->err = err;
  memset(&s->errloc, 0, sizeof s->errloc);
  s->depth = 0;
  s->steps = 0;
  cur_frame = NULL;
  uint64_t seed0 = s->seed, off0 = s->rng_offset;
  int rc = GK_OK;
  cval v;
  switch (st->kind) {
  case AST_ASSIGN:
    rc = eval(s, st->kids[0], &v);
    if (!rc && v.kind != K_ARRAY)
      rc = cc_error(s, st->kids[0]->loc, GK_ETYPE, "cannot assign %s to '%s'", kind_name(&v), st->str);
    if (!rc && (find_builtin(st->str) || cc_findfn(s, st->str)))
      rc = cc_error(s, st->loc, GK_ETYPE, "'%s' is a function; choose another variable name", st->str);
    /* a value that can fail is computed now, so that the statement fails and
    ** the old binding stays (docs/language.md, "When errors appear") */
    if (!rc && !v.x->val)
      for (gnode *g = s->stmt_nodes; g; g = g->snext)
        if (may_fail(&g->r)) {
          s->errloc = st->kids[0]->loc;
          rc = cc_compute(s, &v.x, 1);
          /* a device kernel reports its error at the next sync: take it now */
          if (!rc && s->be->sync && (rc = s->be->sync(s->be))) cc_error(s, s->errloc, rc, "%s", s->be->err.msg);
          break;
        }
    if (!rc && stopped(s)) rc = cc_error(s, st->loc, GK_EINTERRUPT, "interrupted");   /* binds nothing */
    if (!rc) { v.weak = v.weak && v.x->op == RT_CONST; rc = cc_setvar(s, st->str, v); }
    break;
  case AST_FN:
    rc = define_fn(s, st);
    break;
  case AST_EXPR:
    rc = eval(s, st->kids[0], &v);
    if (!rc && s->opt_charts && v.kind == K_ARRAY && v.x->op == RT_HIST && !v.x->val && v.x->nin == 3)
      rc = print_hist(s, &v, st->kids[0]->loc);
    else if (!rc && v.kind != K_NONE) rc = print_values(s, &v, 1, st->kids[0]->loc);
    if (!rc && s->opt_last && v.kind == K_ARRAY) { v.weak = v.weak && v.x->op == RT_CONST; rc = cc_setvar(s, "_", v); }
    break;
  default:
    rc = cc_error(s, st->loc, GK_ESYNTAX, "not a statement");
  }
  if (rc) { s->seed = seed0; s->rng_offset = off0; }
  if (rc == GK_ELIMIT && s->steps > CC_MAX_STEPS && st->nkids > 0) s->errloc = st->kids[0]->loc;   /* the call, not a body */
  cc_end_statement(s);
  if (!rc && s->nlive > CC_MAX_PENDING) rc = cc_compute_vars(s, 1);
  *loc = s->errloc;
  s->err = saved;
  return rc;
}
