/*
** tests/api/get_as.c -- typed reads (issue 9.10): every dtype read into every
** other dtype with gk_get_as, one element with gk_get_f64 / gk_get_i64, and
** plain gk_get refusing a buffer of another size.  The expected values are
** written out by hand below (numpy's astype on x86-64, checked with numpy
** 2.x), not computed with the casts under test.  Each source array is read
** as a value given with gk_set, and as a pending value computed from it
** (a slice), on the default backend (cuda when there is a GPU, else cpu;
** GK_BACKEND picks).
*/
#include <gk.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

#define N 8   /* elements of every test array */

/* One source array and what each target dtype must read (the same index
** order as gk_dtype: bool, i32, i64, f32, f64). */
typedef struct row {
  gk_dtype t;
  union { uint8_t b[N]; int32_t i[N]; int64_t l[N]; float f[N]; double d[N]; } in;
  uint8_t as_b[N];
  int32_t as_i[N];
  int64_t as_l[N];
  float as_f[N];
  double as_d[N];
} row;

static const row rows[] = {
  { GK_BOOL, .in.b = {0, 1, 1, 0, 1, 0, 0, 1},
    {0, 1, 1, 0, 1, 0, 0, 1}, {0, 1, 1, 0, 1, 0, 0, 1}, {0, 1, 1, 0, 1, 0, 0, 1},
    {0, 1, 1, 0, 1, 0, 0, 1}, {0, 1, 1, 0, 1, 0, 0, 1} },
  { GK_I32, .in.i = {INT32_MIN, -1, 0, 7, INT32_MAX, 16777217, -16777219, 2},
    {1, 1, 0, 1, 1, 1, 1, 1},
    {INT32_MIN, -1, 0, 7, INT32_MAX, 16777217, -16777219, 2},
    {-2147483648LL, -1, 0, 7, 2147483647LL, 16777217, -16777219, 2},
    {-2147483648.0f, -1.0f, 0.0f, 7.0f, 2147483648.0f, 16777216.0f, -16777220.0f, 2.0f},
    {-2147483648.0, -1.0, 0.0, 7.0, 2147483647.0, 16777217.0, -16777219.0, 2.0} },
  { GK_I64, .in.l = {INT64_MIN, -5, 0, 9007199254740993LL, 1099511627779LL, 4294967295LL, INT64_MAX, -4294967297LL},
    {1, 1, 0, 1, 1, 1, 1, 1},
    {0, -5, 0, 1, 3, -1, -1, -1},   /* the low 32 bits */
    {INT64_MIN, -5, 0, 9007199254740993LL, 1099511627779LL, 4294967295LL, INT64_MAX, -4294967297LL},
    {-9223372036854775808.0f, -5.0f, 0.0f, 9007199254740992.0f, 1099511627776.0f, 4294967296.0f,
     9223372036854775808.0f, -4294967296.0f},
    {-9223372036854775808.0, -5.0, 0.0, 9007199254740992.0, 1099511627779.0, 4294967295.0,
     9223372036854775808.0, -4294967297.0} },
  { GK_F32, .in.f = {1.5f, -2.75f, NAN, INFINITY, -INFINITY, 3e9f, -0.0f, 0.1f},
    {1, 1, 1, 1, 1, 1, 0, 1},
    {1, -2, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, 0, 0},
    {1, -2, INT64_MIN, INT64_MIN, INT64_MIN, 3000000000LL, 0, 0},
    {1.5f, -2.75f, NAN, INFINITY, -INFINITY, 3e9f, -0.0f, 0.1f},
    {1.5, -2.75, NAN, INFINITY, -INFINITY, 3000000000.0, -0.0, 0.100000001490116119384765625} },
  { GK_F64, .in.d = {-2.7, 1e19, NAN, -3e9, 2147483647.5, 16777217.0, 1e300, -1e-320},
    {1, 1, 1, 1, 1, 1, 1, 1},
    {-2, INT32_MIN, INT32_MIN, INT32_MIN, 2147483647, 16777217, INT32_MIN, 0},
    {-2, INT64_MIN, INT64_MIN, -3000000000LL, 2147483647LL, 16777217LL, INT64_MIN, 0},
    {-2.7f, 1e19f, NAN, -3e9f, 2147483648.0f, 16777216.0f, INFINITY, -0.0f},
    {-2.7, 1e19, NAN, -3e9, 2147483647.5, 16777217.0, 1e300, -1e-320} },
};

/* The expected bytes of row r read as dtype t. */
static const void *expected(const row *r, gk_dtype t) {
  switch (t) {
  case GK_BOOL: return r->as_b;
  case GK_I32: return r->as_i;
  case GK_I64: return r->as_l;
  case GK_F32: return r->as_f;
  default: return r->as_d;
  }
}

/* Element k of a buffer of dtype t, equal to element k of want: bitwise for
** integers, and for floats equal value with the same sign of zero, or NaN
** for NaN. */
static int same_elem(gk_dtype t, const void *got, const void *want, int k) {
  switch (t) {
  case GK_BOOL: return ((const uint8_t *)got)[k] == ((const uint8_t *)want)[k];
  case GK_I32: return ((const int32_t *)got)[k] == ((const int32_t *)want)[k];
  case GK_I64: return ((const int64_t *)got)[k] == ((const int64_t *)want)[k];
  case GK_F32: {
    float a = ((const float *)got)[k], b = ((const float *)want)[k];
    return isnan(b) ? isnan(a) : (a == b && signbit(a) == signbit(b));
  }
  default: {
    double a = ((const double *)got)[k], b = ((const double *)want)[k];
    return isnan(b) ? isnan(a) : (a == b && signbit(a) == signbit(b));
  }
  }
}

static const gk_dtype all[] = {GK_BOOL, GK_I32, GK_I64, GK_F32, GK_F64};

/* Every row read as every dtype, from variable `name` (holding row r). */
static void read_all(gk_ctx *g, const char *name, const row *r) {
  for (int w = 0; w < 5; w++) {
    gk_dtype t = all[w];
    unsigned char buf[N * 8 + 8];
    memset(buf, 0xA5, sizeof buf);
    size_t bytes = N * gk_dtype_size(t);
    OK(g, gk_get_as(g, name, t, buf, bytes));
    int bad = -1;
    for (int k = 0; k < N && bad < 0; k++) if (!same_elem(t, buf, expected(r, t), k)) bad = k;
    if (bad >= 0) fprintf(stderr, "%s (%s) as %s: element %d wrong\n", name, gk_dtype_name(r->t), gk_dtype_name(t), bad);
    CHECK(bad < 0);
    CHECK(buf[bytes] == 0xA5);   /* nothing past the value */
    /* a buffer one element short or long is refused, and not written */
    memset(buf, 0xA5, sizeof buf);
    CHECK_RC(g, gk_get_as(g, name, t, buf, bytes - gk_dtype_size(t)), GK_EMISUSE);
    CHECK_RC(g, gk_get_as(g, name, t, buf, bytes + gk_dtype_size(t)), GK_EMISUSE);
    CHECK(buf[0] == 0xA5 && buf[bytes - 1] == 0xA5);
    /* plain gk_get: only the variable's own size */
    if (t == r->t) {
      OK(g, gk_get(g, name, buf, bytes));
      int same = 1;
      for (int k = 0; k < N; k++) same &= same_elem(t, buf, &r->in, k);
      CHECK(same);
    } else if (gk_dtype_size(t) != gk_dtype_size(r->t)) {
      memset(buf, 0xA5, sizeof buf);
      CHECK_RC(g, gk_get(g, name, buf, bytes), GK_EMISUSE);
      CHECK(buf[0] == 0xA5);
    }
    /* one element: a size-1 slice of it through gk_get_f64 / gk_get_i64 */
    for (int k = 0; k < N; k++) {
      char src[64];
      snprintf(src, sizeof src, "one_ = %s[%d:%d]", name, k, k + 1);
      OK(g, gk_eval(g, src));
      double d = -12345;
      int64_t l = -12345;
      OK(g, gk_get_f64(g, "one_", &d));
      OK(g, gk_get_i64(g, "one_", &l));
      if (!same_elem(GK_F64, &d, &r->as_d[k], 0) || l != r->as_l[k])
        fprintf(stderr, "%s[%d] (%s): gk_get_f64 %.17g, gk_get_i64 %lld\n", name, k, gk_dtype_name(r->t), d,
                (long long)l);
      CHECK(same_elem(GK_F64, &d, &r->as_d[k], 0));
      CHECK(l == r->as_l[k]);
    }
  }
}

static void test_every_pair(void) {
  gk_ctx *g = gk_open(NULL);
  CHECK(g != NULL);
  if (!g) return;
  printf("backend: %s\n", gk_backend(g));
  int64_t sh[1] = {N};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const row *r = &rows[i];
    OK(g, gk_set(g, "x", r->t, 1, sh, &r->in));
    read_all(g, "x", r);          /* a value given to gk */
    OK(g, gk_eval(g, "y = x[0:8]"));
    read_all(g, "y", r);          /* a pending value gk computes */
    OK(g, gk_eval(g, "z = reshape(x, 2, 4)[1]"));   /* a pending view: elements 4..7 */
    for (int w = 0; w < 5; w++) {
      unsigned char buf[4 * 8];
      OK(g, gk_get_as(g, "z", all[w], buf, 4 * gk_dtype_size(all[w])));
      int ok = 1;
      for (int k = 0; k < 4; k++) {
        const unsigned char *e = (const unsigned char *)expected(r, all[w]) + 4 * gk_dtype_size(all[w]);
        ok &= same_elem(all[w], buf, e, k);
      }
      CHECK(ok);
    }
  }
  gk_close(g);
}

/* The case, the one-element rules and the errors, word for word. */
static void test_errors(void) {
  gk_ctx *g = gk_open(NULL);
  CHECK(g != NULL);
  if (!g) return;
  OK(g, gk_eval(g, "s = sum(f32([1.25, 2.0])); v = f32([1.0, 2.0, 3.0]); n = i32([7]); e = f64(zeros(0))"));
  double d = -1;
  /* an f32 scalar read into a double: refused, not 5.2e-315 */
  CHECK_RC(g, gk_get(g, "s", &d, sizeof d), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get: 's' is f32[], 4 bytes; the buffer has 8 (gk_get_as converts to another dtype)");
  CHECK(d == -1);
  OK(g, gk_get_as(g, "s", GK_F64, &d, sizeof d));
  CHECK(d == 3.25);
  d = -1;
  OK(g, gk_get_f64(g, "s", &d));
  CHECK(d == 3.25);
  int64_t l = -1;
  OK(g, gk_get_i64(g, "s", &l));
  CHECK(l == 3);
  OK(g, gk_get_i64(g, "n", &l));    /* shape [1] is one element too */
  CHECK(l == 7);
  d = -1;
  CHECK_RC(g, gk_get_f64(g, "v", &d), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_f64: 'v' is f32[3], 3 elements; it reads one (use gk_get_as for arrays)");
  CHECK(d == -1);
  CHECK_RC(g, gk_get_i64(g, "e", &l), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_i64: 'e' is f64[0], 0 elements; it reads one (use gk_get_as for arrays)");
  CHECK_RC(g, gk_get_f64(g, "nosuch", &d), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_f64: no variable 'nosuch'");
  CHECK_RC(g, gk_get_f64(g, "s", NULL), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_f64: output buffer is NULL");
  CHECK_RC(g, gk_get_f64(NULL, "s", &d), GK_EMISUSE);
  CHECK_RC(g, gk_get_i64(g, NULL, &l), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_i64: name is NULL");
  int32_t iv[3];
  CHECK_RC(g, gk_get_as(g, "v", (gk_dtype)7, iv, sizeof iv), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_as: 7 is not a gk_dtype");
  /* -1 (an uninitialised or "any" dtype) is refused too, even with a buffer
  ** of the variable's own size: it was taken for gk_get's "own dtype" */
  CHECK_RC(g, gk_get_as(g, "v", (gk_dtype)-1, iv, sizeof iv), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_as: -1 is not a gk_dtype");
  CHECK_RC(g, gk_get_as(g, "v", (gk_dtype)INT32_MIN, iv, sizeof iv), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_as: -1 is not a gk_dtype");
  CHECK_RC(g, gk_get_as(g, "v", GK_I32, iv, 8), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_as: 'v' is f32[3], 12 bytes as i32; the buffer has 8");
  CHECK_RC(g, gk_get_as(g, "v", GK_I64, iv, 12), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get_as: 'v' is f32[3], 24 bytes as i64; the buffer has 12");
  OK(g, gk_get_as(g, "v", GK_I32, iv, sizeof iv));
  CHECK(iv[0] == 1 && iv[1] == 2 && iv[2] == 3);
  OK(g, gk_get_as(g, "e", GK_I32, NULL, 0));   /* empty: nothing to write */
  /* a computation's error is its statement's (computed when it runs, issue 12 item 5) */
  double w[3] = {1, 2, 3}, h[2] = {-1, -1};
  OK(g, gk_set(g, "w", GK_F64, 1, (int64_t[]){3}, w));
  CHECK_RC(g, gk_eval(g, "bad = hist(w / (w - 2.0) * 0.0, 2)"), GK_EVALUE);   /* a NaN range */
  CHECK_RC(g, gk_get_as(g, "bad", GK_F64, h, sizeof h), GK_EMISUSE);
  CHECK(h[0] == -1 && h[1] == -1);
  CHECK_RC(g, gk_eval(g, "bad1 = sum(hist(w / (w - 2.0) * 0.0, 2))"), GK_EVALUE);
  CHECK_RC(g, gk_get_i64(g, "bad1", &l), GK_EMISUSE);
  gk_close(g);
}

int main(void) {
  test_every_pair();
  test_errors();
  return t_done();
}
