/*
** tests/unit/test_ops.c -- every elementwise row of the op table
** (runtime/ops.h) on every dtype, over edge values, three ways:
**
**   array   the op on arrays of the edge values (every pair, for binary
**           ops) bound with gk_set: the cpu backend's loops, all ops of one
**           dtype in one plan;
**   const   the op on constants written as literals, one element at a time:
**           the checker's constant folding (casts, negation) and the
**           constant path of the plan -- bit for bit the array result
**           (a NaN result only has to be a NaN: its sign is not specified);
**   device  (GK_TEST_OPS_BACKEND=cuda, the GPU suite) the array programs on
**           that backend too: bit for bit the cpu's for every op whose C
**           functions are exact on both (integers, conversions, + - * /,
**           sqrt, fmod, rounding, comparisons, min/max, ...), within 4 ulps
**           for libm functions (exp, sin, pow, ...), where CUDA's libm is
**           not glibc's; NaN / inf positions always agree.
**   nvrtc   the array programs again in a child process with
**           GK_NVRTC_CHECK=1: every generated kernel (the same expressions,
**           as CUDA text) must compile with NVRTC.  Skipped, and said so,
**           without libnvrtc (or with GK_NVRTC_CHECK=0).
**
** Plus every reduction row (identity, combine, scans) against a reference
** written here, and on the device against the cpu (run_reductions).
** Plus known answers written here for the conversions and integer edge
** cases the rows must get right (i64(9.21e18), INT64_MIN % -1, ...).
** The ops come from the table itself: a new row is tested without an edit
** here.  Prints "N passed, M failed"; exits 1 on any failure.
*/
#include "gk.h"
#include "runtime/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV 32

static int npass, nfail, nskip_pairs;

#define CHECKF(cond, ...)                                   \
  do {                                                      \
    if (cond) npass++;                                      \
    else {                                                  \
      nfail++;                                              \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);           \
      printf(__VA_ARGS__);                                  \
      printf("\n");                                         \
    }                                                       \
  } while (0)

/* ---------------------------------------------------------------- values */

typedef union { uint8_t b; int32_t i32; int64_t i64; float f32; double f64; char bytes[8]; } elem;

static const double FVALS[] = {
  0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.5, 3.0, 0.3, 1e-7, 1e300, -1e300,
  4.9406564584124654e-324, -1.1125369292536007e-308,   /* f64 denormals (f32: 0 / -0) */
  1.4e-45, 1e-40,                                      /* f32 denormals */
  2147483648.0, 2147483647.5, -2147483649.0,           /* 2^31 and around */
  9223372036854774784.0, 9.21e18, -9223372036854775808.0, 9.3e18,  /* 2^63 - 1024, -2^63 */
  INFINITY, -INFINITY, NAN };
static const int64_t IVALS[] = {
  0, 1, -1, 2, -2, 3, 7, -7, 65536, 1000000007,
  2147483647, -2147483647 - 1, 2147483648LL, -2147483647,
  INT64_MAX, INT64_MIN, INT64_MIN + 1, 9223372036854774784LL };
#define NF ((int)(sizeof FVALS / sizeof FVALS[0]))
#define NI ((int)(sizeof IVALS / sizeof IVALS[0]))

/* The edge values of dtype t (distinct after conversion is not required). */
static int edge_values(gk_dtype t, elem *v) {
  int n = 0;
  switch (t) {
  case GK_BOOL: v[n++].b = 0; v[n++].b = 1; break;
  case GK_I32: for (int k = 0; k < NI; k++) if (IVALS[k] >= INT32_MIN && IVALS[k] <= INT32_MAX) v[n++].i32 = (int32_t)IVALS[k]; break;
  case GK_I64: for (int k = 0; k < NI; k++) v[n++].i64 = IVALS[k]; break;
  case GK_F32: for (int k = 0; k < NF; k++) v[n++].f32 = (float)FVALS[k]; break;
  case GK_F64: for (int k = 0; k < NF; k++) v[n++].f64 = FVALS[k]; break;
  }
  return n;
}

/* A constant expression of dtype t whose value is exactly e. */
static void literal(gk_dtype t, const elem *e, char *out, size_t len) {
  const char *tn = gk_dtype_name(t);
  double f = t == GK_F32 ? (double)e->f32 : e->f64;
  switch (t) {
  case GK_BOOL: snprintf(out, len, "%s", e->b ? "true" : "false"); break;
  case GK_I32:
    if (e->i32 == INT32_MIN) snprintf(out, len, "i32(-2147483647 - 1)");
    else snprintf(out, len, "i32(%d)", e->i32);
    break;
  case GK_I64:
    if (e->i64 == INT64_MIN) snprintf(out, len, "i64(-9223372036854775807 - 1)");
    else snprintf(out, len, "i64(%lld)", (long long)e->i64);
    break;
  default:
    if (f != f) snprintf(out, len, "%s(0.0 / 0)", tn);
    else if (isinf(f)) snprintf(out, len, "%s(%s1.0 / 0)", tn, f < 0 ? "-" : "");
    else if (f == 0) snprintf(out, len, "%s(%s0.0)", tn, signbit(f) ? "-" : "");
    else snprintf(out, len, "%s(%.*g)", tn, t == GK_F32 ? 9 : 17, f);
  }
}

static void show(gk_dtype t, const elem *e, char *out, size_t len) {
  switch (t) {
  case GK_BOOL: snprintf(out, len, "%d", e->b); break;
  case GK_I32: snprintf(out, len, "%d", e->i32); break;
  case GK_I64: snprintf(out, len, "%lld", (long long)e->i64); break;
  case GK_F32: snprintf(out, len, "%.9g", e->f32 != e->f32 ? NAN : (double)e->f32); break;
  default: snprintf(out, len, "%.17g", e->f64 != e->f64 ? NAN : e->f64);   /* a NaN's sign is not specified */
  }
}

static int same(gk_dtype t, const void *a, const void *b) {
  size_t s = gk_dtype_size(t);
  if (!memcmp(a, b, s)) return 1;
  if (t == GK_F32) { float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4); return x != x && y != y; }
  if (t == GK_F64) { double x, y; memcpy(&x, a, 8); memcpy(&y, b, 8); return x != x && y != y; }
  return 0;
}

/* ------------------------------------------------------------- the ops */

/* The surface expression of row op on operand texts a, b (c: where's). */
static void expr_of(int op, const char *a, const char *b, char *out, size_t len) {
  const rt_opinfo *d = &rt_op_info[op];
  if (op == RT_WHERE) snprintf(out, len, "where(m, %s, %s)", a, b);
  else if (d->flags & OF_FN) {
    if (d->nin == 1) snprintf(out, len, "%s(%s)", d->name, a);
    else snprintf(out, len, "%s(%s, %s)", d->name, a, b);
  } else if (d->nin == 1) snprintf(out, len, "%s (%s)", d->sym, a);
  else snprintf(out, len, "(%s) %s (%s)", a, d->sym, b);
}

/* Ops whose expressions call a libm function that is not correctly rounded
** on both libms: the device may differ from the cpu in the last bits. */
static int libm_op(int op) {
  static const int ops[] = {RT_EXP, RT_LOG, RT_SIN, RT_COS, RT_TAN, RT_ASIN, RT_ACOS, RT_ATAN, RT_SINH, RT_COSH,
                            RT_TANH, RT_LOG2, RT_LOG10, RT_EXP2, RT_EXPM1, RT_LOG1P, RT_SIGMOID, RT_POW,
                            RT_ATAN2, RT_HYPOT};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) if (ops[k] == op) return 1;
  return 0;
}

/* Distance in ulps of two finite floats of dtype t (ordered-integer form). */
static double ulps(gk_dtype t, const elem *a, const elem *b) {
  if (t == GK_F32) {
    int32_t x, y; memcpy(&x, &a->f32, 4); memcpy(&y, &b->f32, 4);
    if (x < 0) x = INT32_MIN - x;
    if (y < 0) y = INT32_MIN - y;
    return fabs((double)x - (double)y);
  }
  int64_t x, y; memcpy(&x, &a->f64, 8); memcpy(&y, &b->f64, 8);
  if (x < 0) x = INT64_MIN - x;
  if (y < 0) y = INT64_MIN - y;
  return fabs((double)x - (double)y);
}

static int tested(int op) {
  return rt_op_info[op].cls == RC_MAP && op != RT_CAST && op != RT_WHERE;
}

/* One result of the array phase: variable rN of op (or a cast to t). */
typedef struct res { int op; gk_dtype to; int ok; gk_dtype t; int64_t n; elem *v; } res;

static int get_all(gk_ctx *g, const char *name, gk_dtype *t, int64_t *n, elem **out) {
  int nd; int64_t sh[GK_MAX_DIMS];
  if (gk_shape(g, name, t, &nd, sh)) return -1;
  *n = 1;
  for (int d = 0; d < nd; d++) *n *= sh[d];
  size_t es = gk_dtype_size(*t);
  char *raw = malloc((size_t)*n * es + 1);
  *out = calloc((size_t)*n, sizeof(elem));
  if (!raw || !*out || gk_get(g, name, raw, (size_t)*n * es)) { free(raw); return -1; }
  for (int64_t i = 0; i < *n; i++) memcpy(&(*out)[i], raw + i * es, es);
  free(raw);
  return 0;
}

/* numpy's scalar power paths (x ** 2, ** 0.5, ** -1 with a constant
** exponent) differ from pow on purpose; ints to negative constant powers
** are an error: those pairs have no constant counterpart. */
static int pow_pair_skipped(gk_dtype t, const elem *b) {
  if (t == GK_F32 || t == GK_F64) {
    double e = t == GK_F32 ? b->f32 : b->f64;
    return e == 2 || e == 0.5 || e == -1;
  }
  if (t == GK_I32) return b->i32 < 0;
  if (t == GK_I64) return b->i64 < 0;
  return 0;
}

/* The array phase on backend be: every op (and cast) of operand dtype t as
** one variable, computed in one plan; fills r, returns how many. */
static int array_phase(const char *be, gk_dtype t, int n, const char *x, const char *xa, const char *xb,
                       const uint8_t *m, res *r) {
  int64_t nn = (int64_t)n * n, n1 = n;
  int nr = 0;
  char src[512], e[400];
  gk_ctx *g = gk_open(be);
  if (!g) { CHECKF(0, "gk_open(%s)", be); return 0; }
  CHECKF(!gk_set(g, "x", t, 1, &n1, x) && !gk_set(g, "xa", t, 1, &nn, xa) && !gk_set(g, "xb", t, 1, &nn, xb) &&
         !gk_set(g, "m", GK_BOOL, 1, &nn, m), "gk_set: %s", gk_errmsg(g));
  for (int op = 0; op < RT_NOPS; op++) {
    if (!tested(op) && op != RT_WHERE) continue;
    res *q = &r[nr];
    memset(q, 0, sizeof *q);
    q->op = op; q->to = (gk_dtype)-1;
    if (rt_op_info[op].nin == 1) expr_of(op, "x", NULL, e, sizeof e);
    else expr_of(op, "xa", "xb", e, sizeof e);
    snprintf(src, sizeof src, "r%d = %s", nr, e);
    q->ok = gk_eval(g, src) == GK_OK;   /* a dtype the op's rule rejects: not run */
    nr++;
  }
  for (int to = GK_BOOL; to <= GK_F64; to++) {
    res *q = &r[nr];
    memset(q, 0, sizeof *q);
    q->op = RT_CAST; q->to = (gk_dtype)to;
    snprintf(src, sizeof src, "r%d = %s(x)", nr, gk_dtype_name((gk_dtype)to));
    q->ok = gk_eval(g, src) == GK_OK;
    CHECKF(q->ok, "%s: %s", src, gk_errmsg(g));
    nr++;
  }
  CHECKF(gk_sync(g) == GK_OK, "%s: gk_sync: %s", gk_dtype_name(t), gk_errmsg(g));
  for (int k = 0; k < nr; k++) {
    if (!r[k].ok) continue;
    char name[16]; snprintf(name, sizeof name, "r%d", k);
    int64_t want = r[k].op == RT_CAST || rt_op_info[r[k].op].nin == 1 ? n : nn;
    int rc = get_all(g, name, &r[k].t, &r[k].n, &r[k].v);
    CHECKF(!rc && r[k].n == want, "%s %s: reading the array result: %s", rt_op_info[r[k].op].name,
           gk_dtype_name(t), gk_errmsg(g));
    if (rc || r[k].n != want) r[k].ok = 0;
  }

  gk_close(g);
  return nr;
}

static void run_dtype(gk_dtype t, int arrays_only) {
  elem v[MAXV];
  int n = edge_values(t, v);
  size_t es = gk_dtype_size(t);
  int64_t nn = (int64_t)n * n;
  char *x = malloc((size_t)n * es), *xa = malloc((size_t)nn * es), *xb = malloc((size_t)nn * es);
  uint8_t *m = malloc((size_t)nn);
  for (int i = 0; i < n; i++) memcpy(x + i * es, &v[i], es);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      memcpy(xa + (i * n + j) * es, &v[i], es);
      memcpy(xb + (i * n + j) * es, &v[j], es);
      m[i * n + j] = (uint8_t)((i + j) & 1);
    }
  res r[RT_NOPS + 8], rd[RT_NOPS + 8];
  int nr = array_phase("cpu", t, n, x, xa, xb, m, r);
  const char *dev = getenv("GK_TEST_OPS_BACKEND");
  if (dev && *dev && strcmp(dev, "cpu") && !arrays_only) {
    int nd = array_phase(dev, t, n, x, xa, xb, m, rd);
    CHECKF(nd == nr, "%s: %d results on %s, %d on cpu", gk_dtype_name(t), nd, dev, nr);
    for (int k = 0; k < nr && k < nd; k++) {
      CHECKF(r[k].ok == rd[k].ok, "%s on %s: accepted on cpu %d, on %s %d", rt_op_info[r[k].op].name,
             gk_dtype_name(t), r[k].ok, dev, rd[k].ok);
      if (!r[k].ok || !rd[k].ok || r[k].t != rd[k].t || r[k].n != rd[k].n) continue;
      int loose = libm_op(r[k].op) && (r[k].t == GK_F32 || r[k].t == GK_F64);
      int64_t bad = 0, first = -1;
      for (int64_t p = 0; p < r[k].n; p++) {
        const elem *a = &r[k].v[p], *b = &rd[k].v[p];
        int ok = same(r[k].t, a, b);
        if (!ok && loose) {
          double fa = r[k].t == GK_F32 ? a->f32 : a->f64, fb = r[k].t == GK_F32 ? b->f32 : b->f64;
          ok = isfinite(fa) && isfinite(fb) && ulps(r[k].t, a, b) <= 4;
        }
        if (!ok && !bad++) first = p;
      }
      if (bad) {
        char ga[64], gb[64];
        show(r[k].t, &r[k].v[first], ga, sizeof ga); show(r[k].t, &rd[k].v[first], gb, sizeof gb);
        CHECKF(0, "%s on %s: %lld of %lld differ from the cpu on %s; first at %lld: cpu %s, %s %s",
               r[k].op == RT_CAST ? gk_dtype_name(r[k].to) : rt_op_info[r[k].op].name, gk_dtype_name(t),
               (long long)bad, (long long)r[k].n, dev, (long long)first, ga, dev, gb);
      } else npass++;
    }
    for (int k = 0; k < nd; k++) free(rd[k].v);
  }
  gk_ctx *g = gk_open("cpu");
  if (!g) { CHECKF(0, "gk_open(cpu)"); return; }
  CHECKF(!gk_set(g, "m", GK_BOOL, 1, &nn, m), "gk_set: %s", gk_errmsg(g));
  char src[512], e[400];
  /* const phase: the same ops on literal constants, element by element */
  for (int k = 0; k < nr && !arrays_only; k++) {
    if (!r[k].ok) continue;
    int op = r[k].op, bin = op != RT_CAST && rt_op_info[op].nin >= 2;
    for (int64_t p = 0; p < r[k].n; p++) {
      int i = bin ? (int)(p / n) : (int)p, j = bin ? (int)(p % n) : 0;
      if (op == RT_POW && pow_pair_skipped(t, &v[j])) { nskip_pairs++; continue; }
      char la[96], lb[96];
      literal(t, &v[i], la, sizeof la);
      literal(t, &v[j], lb, sizeof lb);
      if (op == RT_CAST) snprintf(e, sizeof e, "%s(%s)", gk_dtype_name(r[k].to), la);
      else if (op == RT_WHERE) snprintf(e, sizeof e, "where(%s, %s, %s)", m[p] ? "true" : "false", la, lb);
      else expr_of(op, la, lb, e, sizeof e);
      snprintf(src, sizeof src, "s = %s", e);
      gk_dtype st = GK_BOOL; int64_t sn = 0; elem *sv = NULL;
      int rc = gk_eval(g, src);
      if (!rc) rc = get_all(g, "s", &st, &sn, &sv);
      if (rc || sn != 1 || st != r[k].t || !same(st, &sv[0], &r[k].v[p])) {
        char a1[64], a2[64], got[64], want[64];
        show(t, &v[i], a1, sizeof a1); show(t, &v[j], a2, sizeof a2);
        show(r[k].t, &r[k].v[p], want, sizeof want);
        if (sv && sn == 1) show(st, &sv[0], got, sizeof got); else snprintf(got, sizeof got, "(%s)", gk_errmsg(g));
        CHECKF(0, "%s on %s (%s%s%s): constant %s, array %s  [%s]", op == RT_CAST ? gk_dtype_name(r[k].to)
               : rt_op_info[op].name, gk_dtype_name(t), a1, bin ? ", " : "", bin ? a2 : "", got, want, src);
      } else npass++;
      free(sv);
    }
  }
  for (int k = 0; k < nr; k++) free(r[k].v);
  gk_close(g);
  free(x); free(xa); free(xb); free(m);
}

/* ------------------------------------------------------------ reductions */

/* Every reduction row (RT_ROPS) on the edge values of every dtype: whole
** array, per row of a matrix whose rows are rotations of them, and the
** scan / exscan of each scannable row.  The reference is written here
** independently, in numpy's terms: sums and products of integers wrap (in
** i64), of floats accumulate in double from the first element on (so the
** cpu backend, which adds in that order below one chunk, matches bit for
** bit); max/min propagate NaN; argmax/argmin take the first extreme, a NaN
** first; any/all test != 0; an exscan starts at the identity (the dtype's
** lowest value for max, ...).  On GK_TEST_OPS_BACKEND the same programs
** must give the cpu's bits, except float sums and products, whose order
** of addition differs by design (their error bounds are the numpy check's). */
static int red_skip(int rop) { return rop == ROP_VAR; }   /* var: numpy_check.py's bounds */

static double el_f(gk_dtype t, const elem *e) {
  switch (t) {
  case GK_BOOL: return e->b; case GK_I32: return e->i32; case GK_I64: return (double)e->i64;
  case GK_F32: return e->f32; default: return e->f64;
  }
}
static int64_t el_i(gk_dtype t, const elem *e) {
  return t == GK_BOOL ? e->b : t == GK_I32 ? e->i32 : e->i64;
}

/* The reference fold of rop over v[0..n) (float slot f or int slot i);
** *at: the arg index; returns 0 for an empty identity-less fold. */
typedef struct rref { double f; int64_t i; int64_t at; } rref;
static void ref_ident(int rop, gk_dtype t, rref *a) {
  int isf = t == GK_F32 || t == GK_F64;
  a->at = -1;
  switch (rop) {
  case ROP_SUM: case ROP_ANY: a->f = 0; a->i = 0; break;
  case ROP_PROD: case ROP_ALL: a->f = 1; a->i = 1; break;
  case ROP_MAX: a->f = -INFINITY; a->i = t == GK_BOOL ? 0 : t == GK_I32 ? INT32_MIN : INT64_MIN; break;
  case ROP_MIN: a->f = INFINITY; a->i = t == GK_BOOL ? 1 : t == GK_I32 ? INT32_MAX : INT64_MAX; break;
  default: a->f = isf ? NAN : 0; a->i = 0; break;
  }
}
static void ref_step(int rop, gk_dtype t, rref *a, const elem *e, int64_t k) {
  int isf = t == GK_F32 || t == GK_F64;
  double x = el_f(t, e);
  int64_t xi = isf ? 0 : el_i(t, e);
  switch (rop) {
  case ROP_SUM: if (isf) a->f += x; else a->i = (int64_t)((uint64_t)a->i + (uint64_t)xi); break;
  case ROP_PROD: if (isf) a->f *= x; else a->i = (int64_t)((uint64_t)a->i * (uint64_t)xi); break;
  case ROP_MAX: if (isf) a->f = a->f != a->f ? a->f : x != x ? x : x > a->f ? x : a->f; else a->i = xi > a->i ? xi : a->i; break;
  case ROP_MIN: if (isf) a->f = a->f != a->f ? a->f : x != x ? x : x < a->f ? x : a->f; else a->i = xi < a->i ? xi : a->i; break;
  case ROP_ANY: a->i = a->i || (isf ? x != 0 : xi != 0); break;
  case ROP_ALL: a->i = a->i && (isf ? x != 0 : xi != 0); break;
  case ROP_ARGMAX: case ROP_ARGMIN: {
    int mx = rop == ROP_ARGMAX;
    if (a->at >= 0 && isf && a->f != a->f) break;
    int take = a->at < 0 || (isf && x != x) ||
               (isf ? (mx ? x > a->f : x < a->f) : (mx ? xi > a->i : xi < a->i));
    if (take) { a->f = x; a->i = xi; a->at = k; }
    break;
  }
  }
}
/* Does the stored result element r (dtype rt) hold the reference a? */
static int ref_same(int rop, gk_dtype rt, const rref *a, const elem *r) {
  elem w; memset(&w, 0, sizeof w);
  if (rop == ROP_ARGMAX || rop == ROP_ARGMIN) w.i64 = a->at;
  else switch (rt) {
  case GK_BOOL: w.b = (uint8_t)(a->i != 0); break;
  case GK_I32: w.i32 = (int32_t)a->i; break;
  case GK_I64: w.i64 = a->i; break;
  case GK_F32: w.f32 = (float)a->f; break;
  case GK_F64: w.f64 = a->f; break;
  }
  return same(rt, &w, r);
}

typedef struct rres { char what[48]; int rop, kind; int ok; gk_dtype t; int64_t n; elem *v; } rres;
enum { RK_ALL, RK_ROWS, RK_SCAN, RK_EXSCAN, RK_NKIND };

/* The reduction programs on backend be; fills r, returns how many. */
static int red_phase(const char *be, gk_dtype t, int n, const char *x, const char *xr, rres *r) {
  int64_t n1 = n, sh[2] = { n, n };
  int nr = 0;
  gk_ctx *g = gk_open(be);
  if (!g) { CHECKF(0, "gk_open(%s)", be); return 0; }
  CHECKF(!gk_set(g, "x", t, 1, &n1, x) && !gk_set(g, "xr", t, 2, sh, xr), "gk_set: %s", gk_errmsg(g));
  for (int rop = 0; rop < ROP_N; rop++) {
    if (red_skip(rop)) continue;
    for (int kind = 0; kind < RK_NKIND; kind++) {
      if (kind >= RK_SCAN && !(rt_rop_info[rop].flags & RF_SCAN)) continue;
      rres *q = &r[nr];
      memset(q, 0, sizeof *q);
      q->rop = rop; q->kind = kind;
      const char *nm = rt_rop_name[rop];
      switch (kind) {
      case RK_ALL: snprintf(q->what, sizeof q->what, "%s(x)", nm); break;
      case RK_ROWS: snprintf(q->what, sizeof q->what, "%s(rows(xr))", nm); break;
      case RK_SCAN: snprintf(q->what, sizeof q->what, "scan(x, %s)", nm); break;
      default: snprintf(q->what, sizeof q->what, "exscan(x, %s)", nm); break;
      }
      char src[96]; snprintf(src, sizeof src, "q%d = %s", nr, q->what);
      q->ok = gk_eval(g, src) == GK_OK;
      CHECKF(q->ok, "%s on %s (%s): %s", q->what, gk_dtype_name(t), be, gk_errmsg(g));
      nr++;
    }
  }
  CHECKF(gk_sync(g) == GK_OK, "reductions %s: gk_sync: %s", gk_dtype_name(t), gk_errmsg(g));
  for (int k = 0; k < nr; k++) {
    if (!r[k].ok) continue;
    char name[16]; snprintf(name, sizeof name, "q%d", k);
    if (get_all(g, name, &r[k].t, &r[k].n, &r[k].v)) { CHECKF(0, "%s: read: %s", r[k].what, gk_errmsg(g)); r[k].ok = 0; }
  }
  gk_close(g);
  return nr;
}

static void run_reductions(gk_dtype t) {
  elem v[MAXV];
  int n = edge_values(t, v);
  size_t es = gk_dtype_size(t);
  char *x = malloc((size_t)n * es), *xr = malloc((size_t)n * n * es);
  for (int i = 0; i < n; i++) memcpy(x + i * es, &v[i], es);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) memcpy(xr + (size_t)(i * n + j) * es, &v[(i + j) % n], es);
  rres r[ROP_N * RK_NKIND], rd[ROP_N * RK_NKIND];
  int nr = red_phase("cpu", t, n, x, xr, r);
  for (int k = 0; k < nr; k++) {
    if (!r[k].ok) continue;
    int rop = r[k].rop, kind = r[k].kind;
    int64_t want_n = kind == RK_ALL ? 1 : n, bad = -1;
    if (r[k].n != want_n) { CHECKF(0, "%s on %s: %lld elements", r[k].what, gk_dtype_name(t), (long long)r[k].n); continue; }
    for (int64_t p = 0; p < r[k].n && bad < 0; p++) {
      rref a; ref_ident(rop, t, &a);
      if (kind == RK_ALL) for (int j = 0; j < n; j++) ref_step(rop, t, &a, &v[j], j);
      else if (kind == RK_ROWS) for (int j = 0; j < n; j++) ref_step(rop, t, &a, &v[(p + j) % n], j);
      else for (int j = 0; j < p + (kind == RK_SCAN); j++) ref_step(rop, t, &a, &v[j], j);
      if (!ref_same(rop, r[k].t, &a, &r[k].v[p])) bad = p;
    }
    if (bad >= 0) {
      char got[64]; show(r[k].t, &r[k].v[bad], got, sizeof got);
      CHECKF(0, "%s on %s: element %lld is %s, not numpy's", r[k].what, gk_dtype_name(t), (long long)bad, got);
    } else npass++;
  }
  const char *dev = getenv("GK_TEST_OPS_BACKEND");
  if (dev && *dev && strcmp(dev, "cpu")) {
    int nd = red_phase(dev, t, n, x, xr, rd);
    for (int k = 0; k < nr && k < nd; k++) {
      int rop = r[k].rop;
      if (!r[k].ok || !rd[k].ok) continue;
      if ((t == GK_F32 || t == GK_F64) && (rop == ROP_SUM || rop == ROP_PROD)) continue;
      int64_t bad = -1;
      if (r[k].t != rd[k].t || r[k].n != rd[k].n) bad = 0;
      else for (int64_t p = 0; p < r[k].n && bad < 0; p++) if (!same(r[k].t, &r[k].v[p], &rd[k].v[p])) bad = p;
      if (bad >= 0 && r[k].t == rd[k].t && r[k].n == rd[k].n) {
        char a1[64], a2[64]; show(r[k].t, &r[k].v[bad], a1, sizeof a1); show(r[k].t, &rd[k].v[bad], a2, sizeof a2);
        CHECKF(0, "%s on %s: element %lld: cpu %s, %s %s", r[k].what, gk_dtype_name(t), (long long)bad, a1, dev, a2);
      } else CHECKF(bad < 0, "%s on %s: dtype or size differs on %s", r[k].what, gk_dtype_name(t), dev);
    }
    for (int k = 0; k < nd; k++) free(rd[k].v);
  }
  for (int k = 0; k < nr; k++) free(r[k].v);
  free(x); free(xr);
}

/* --------------------------------------------------------- known answers */

static void known(gk_ctx *g, const char *src, const char *want) {
  char full[256];
  snprintf(full, sizeof full, "k = %s", src);
  gk_dtype t; int64_t n; elem *v = NULL;
  int rc = gk_eval(g, full);
  if (!rc) rc = get_all(g, "k", &t, &n, &v);
  char got[64] = "";
  if (!rc) show(t, &v[0], got, sizeof got);
  CHECKF(!rc && !strcmp(got, want), "%s: got %s (%s), want %s", src, rc ? "error" : got, gk_errmsg(g), want);
  free(v);
}

static void known_answers(void) {
  gk_ctx *g = gk_open("cpu");
  if (!g) { CHECKF(0, "gk_open(cpu)"); return; }
  static const char *const cases[][2] = {
    {"i64(f64(9.21e18))", "9210000000000000000"},
    {"i64(fill(f64(9.21e18), 2))[0]", "9210000000000000000"},
    {"i64(f64(9223372036854774784))", "9223372036854774784"},
    {"i64(f64(9223372036854775807))", "-9223372036854775808"},        /* 2^63: out of range */
    {"i64(f32(9223372036854774784))", "-9223372036854775808"},        /* rounds to 2^63 in f32 */
    {"i64(f64(-9223372036854775808))", "-9223372036854775808"},
    {"i32(f64(2147483648))", "-2147483648"},
    {"i32(f64(2147483647.9))", "2147483647"},
    {"i32(f64(-2147483648.9))", "-2147483648"},
    {"i32(0.0 / 0)", "-2147483648"},
    {"i64(-9223372036854775807 - 1) % -1", "0"},
    {"i64(7) % -3", "-2"},
    {"i64(-7) % 3", "2"},
    {"i64(5) % 0", "0"},
    {"f64(-7.5) % 2", "0.5"},
    {"f64(7.5) % -2", "-0.5"},
    {"f64(-0.0) % 2", "0"},
    {"f64(4) % -2", "-0"},
    {"i64(3) ** 40", "-6289078614652622815"},                        /* wraps */
    {"i64(-1) ** 63", "-1"},
    {"sign(f64(-0.0))", "0"},                                          /* numpy: +0.0 */
    {"relu(f64(-0.0))", "0"},
    {"round(f64(2.5))", "2"},
    {"round(f64(-0.5))", "-0"},
    {"maximum(f64(0.0 / 0), 1)", "nan"},
    {"minimum(1, f64(0.0 / 0))", "nan"},
    {"abs(i32(-2147483647 - 1))", "-2147483648"},
    {"-i64(-9223372036854775807 - 1)", "-9223372036854775808"},
    {"f32(0.3) == f64(0.3)", "0"},
    {"f64(f32(0.3))", "0.30000001192092896"},
    {"f64(f32(1e40))", "inf"},
    {"isinf(f64(-1.0 / 0))", "1"},
    {"isnan(i64(3))", "0"},
    {"isfinite(f32(1e38) * 10)", "0"},
    {"atan2(f64(0.0), -1)", "3.1415926535897931"},
    {"atan2(f64(-0.0), -1)", "-3.1415926535897931"},
    {"hypot(f64(1e300), 1e300)", "1.4142135623730952e+300"},
    {"expm1(f64(1e-10))", "1.00000000005e-10"},
    {"f64(-0.0) ** 0.5", "-0"},                                       /* sqrt, as numpy */
    {"f64(-1.0 / 0) ** 0.5", "nan"},
    {"f64(-0.0) ** -1", "-inf"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) known(g, cases[k][0], cases[k][1]);
  gk_close(g);
}

/* ------------------------------------------------------------- nvrtc */

/* Runs the array phase again in a child with GK_NVRTC_CHECK=1. */
static void nvrtc_phase(const char *self) {
  const char *env = getenv("GK_NVRTC_CHECK");
  if (env && !strcmp(env, "0")) { printf("nvrtc: skipped (GK_NVRTC_CHECK=0)\n"); return; }
#if defined(__SANITIZE_ADDRESS__)
  printf("nvrtc: skipped under the sanitizers (libnvrtc is not instrumented; make test's nvrtc suite covers it)\n");
  return;
#endif
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "GK_NVRTC_CHECK=1 '%s' --arrays 2>&1", self);
  FILE *p = popen(cmd, "r");
  if (!p) { CHECKF(0, "popen %s", cmd); return; }
  char line[4096];
  long ok = -1, bad = -1;
  int skipped = 0, child_failed = 0;
  while (fgets(line, sizeof line, p)) {
    if (strstr(line, "gk-nvrtc: skipped")) { skipped = 1; printf("nvrtc: %s", line + 10); }
    else if (sscanf(line, "gk-nvrtc: %ld compiled, %ld failed", &ok, &bad) == 2) { }
    else if (!strncmp(line, "gk-nvrtc: FAILED", 16) || !strncmp(line, "FAIL", 4)) { child_failed = 1; fputs(line, stdout); }
  }
  int st = pclose(p);
  if (skipped) return;
  CHECKF(st == 0 && !child_failed && ok > 0 && bad == 0, "NVRTC: %ld kernels compiled, %ld failed (child status %d)",
         ok, bad, st);
  if (ok > 0) printf("nvrtc: %ld kernels of the op rows compiled\n", ok);
}

int main(int argc, char **argv) {
  int arrays_only = argc > 1 && !strcmp(argv[1], "--arrays");
  for (int t = GK_BOOL; t <= GK_F64; t++) run_dtype((gk_dtype)t, arrays_only);
  if (!arrays_only) {
    for (int t = GK_BOOL; t <= GK_F64; t++) run_reductions((gk_dtype)t);
    known_answers();
    nvrtc_phase(argv[0]);
    printf("(%d pow pairs with a numpy scalar-power exponent or a negative integer exponent have no constant form)\n",
           nskip_pairs);
  }
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
