/*
** tests/api/e2e.c -- small statements end to end through gk.h: gk_prepare
** once, then gk_set / gk_step / gk_get in a loop, the way a host program
** uses gk (issue 16: a `sum` of 1024 elements in 10 us).  On the cuda
** backend a small result the host reads back goes, from the second step of
** its statement on, to mapped host memory (runtime/cuda.c); these tests
** check that every read is still the right value: fresh random data on
** every step at tail sizes, gk_sync before the read or not, conversions
** (gk_get_f64 / gk_get_i64 / gk_get_as), a later statement reading such a
** result on the device (and through a view, a broadcast and a DLPack
** round trip), failed statements leaving it bound as it was, and more
** steps than the mapped pool has blocks.  References are float64 sums on
** the host.  Runs on the cuda backend when there is one, else on the cpu.
**
** `api_e2e bench [reps]` times the loop instead (median and minimum of reps
** steps of `r = sum(x)` on 1024 f32, gk_step + gk_get; then the split:
** gk_step, gk_sync, gk_get; then a 2^24-element kernel reading the result,
** which tells what a kernel pays for reading a mapped value; and the loop
** of a one-element map, the floor of launch and wait) and prints one
** line per number.  GK_CU_STATS=1 adds the driver call counts at close.
*/
#include <gk.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static double urand(void) {   /* xorshift64*, [0, 1) */
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) * 0x1p-53;
}

static int close_to(double got, double want, double rtol) {
  return fabs(got - want) <= rtol * (fabs(want) + 1.0);
}

static float *fill(int64_t n) {
  float *h = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t k = 0; k < n; k++) h[k] = (float)(urand() * 2 - 1);
  return h;
}

static double sum_of(const float *h, int64_t n, int64_t start, int64_t step) {
  double s = 0;
  for (int64_t k = start; k < n; k += step) s += h[k];
  return s;
}

/* r = sum(x) on new data every step, the read after gk_sync or not, in the
** result's dtype and converted. */
static void test_steps(gk_ctx *g) {
  static const int64_t sizes[] = {1, 31, 33, 1024, 1000003, (1 << 20) + 1};
  gk_stmt *st = NULL;
  OK(g, gk_prepare(g, "r = sum(x)", &st, NULL));
  if (!st) return;
  for (int si = 0; si < 6; si++) {
    int64_t n = sizes[si];
    for (int rep = 0; rep < 4; rep++) {
      float *h = fill(n);
      OK(g, gk_set(g, "x", GK_F32, 1, &n, h));
      OK(g, gk_step(st));
      if (rep & 1) OK(g, gk_sync(g));
      double want = sum_of(h, n, 0, 1), d = 0;
      float r = NAN;
      if (rep == 3) OK(g, gk_get_f64(g, "r", &d));
      else { OK(g, gk_get(g, "r", &r, sizeof r)); d = r; }
      if (!close_to(d, want, 1e-5)) fprintf(stderr, "n=%lld rep %d: got %.9g want %.9g\n", (long long)n, rep, d, want);
      CHECK(close_to(d, want, 1e-5));
      /* read again: the same value */
      float r2 = NAN;
      OK(g, gk_get(g, "r", &r2, sizeof r2));
      CHECK(r2 == (float)d);
      free(h);
    }
  }
  gk_finalize(st);
}

/* Several small results of one statement and of others: argmax (i64),
** max, a 5-element map, a sum of a strided view of a pending value. */
static void test_small(gk_ctx *g) {
  gk_stmt *a = NULL, *b = NULL, *c = NULL;
  OK(g, gk_prepare(g, "i = argmax(x)", &a, NULL));
  OK(g, gk_prepare(g, "h = x[0:5] * 3 + 1", &b, NULL));
  OK(g, gk_prepare(g, "s = sum((x * 2)[1::3])", &c, NULL));
  if (!a || !b || !c) return;
  for (int rep = 0; rep < 5; rep++) {
    int64_t n = rep & 1 ? 33 : 1000003;
    float *h = fill(n);
    OK(g, gk_set(g, "x", GK_F32, 1, &n, h));
    OK(g, gk_step(a)); OK(g, gk_step(b)); OK(g, gk_step(c));
    int64_t i = -1, wi = 0;
    for (int64_t k = 1; k < n; k++) if (h[k] > h[wi]) wi = k;
    OK(g, gk_get_i64(g, "i", &i));
    CHECK(i == wi);
    float hv[5] = {0};
    OK(g, gk_get(g, "h", hv, sizeof hv));
    int bad = 0;
    for (int k = 0; k < 5; k++) bad += hv[k] != h[k] * 3.0f + 1.0f;
    CHECK(bad == 0);
    double hd[5] = {0};
    OK(g, gk_get_as(g, "h", GK_F64, hd, sizeof hd));
    CHECK(hd[0] == (double)hv[0] && hd[4] == (double)hv[4]);
    float s = NAN;
    OK(g, gk_get(g, "s", &s, sizeof s));
    CHECK(close_to(s, 2 * sum_of(h, n, 1, 3), 1e-5));
    free(h);
  }
  gk_finalize(a); gk_finalize(b); gk_finalize(c);
}

/* A small result the host reads, then read by later kernels: directly, as
** a broadcast, through a view, after a DLPack round trip; a failed
** statement leaves it as it was. */
static void test_consumers(gk_ctx *g) {
  gk_stmt *st = NULL, *use = NULL;
  OK(g, gk_prepare(g, "r = sum(x)", &st, NULL));
  OK(g, gk_prepare(g, "y = x - r", &use, NULL));
  if (!st || !use) return;
  for (int rep = 0; rep < 6; rep++) {
    int64_t n = rep < 3 ? 1000003 : 31;
    float *h = fill(n);
    OK(g, gk_set(g, "x", GK_F32, 1, &n, h));
    float r = NAN;
    OK(g, gk_step(st));
    OK(g, gk_get(g, "r", &r, sizeof r));
    CHECK(close_to(r, sum_of(h, n, 0, 1), 1e-5));
    /* the same r read by kernels again and again (its device copy) */
    float *y = malloc(sizeof(float) * (size_t)n);
    for (int again = 0; again < 3; again++) {
      OK(g, gk_step(use));
      OK(g, gk_get(g, "y", y, sizeof(float) * (size_t)n));
      int bad = 0;
      for (int64_t k = 0; k < n; k++) bad += y[k] != h[k] - r;
      CHECK(bad == 0);
    }
    free(y);
    /* r broadcast and through a view of a pending value */
    OK(g, gk_eval(g, "t = sum(reshape(x[0:30] * r, 5, 6)[1])"));
    double t = 0, want = 0;
    for (int k = 6; k < 12; k++) want += h[k] * r;
    OK(g, gk_get_f64(g, "t", &t));
    CHECK(close_to(t, want, 1e-5));
    /* out through DLPack and back in: a kernel reads it where it lives */
    void *dl = NULL;
    OK(g, gk_to_dlpack(g, "r", &dl));
    if (dl) {
      OK(g, gk_from_dlpack(g, "q", dl));
      float q2 = NAN;
      OK(g, gk_eval(g, "q2 = q * 2"));
      OK(g, gk_get(g, "q2", &q2, sizeof q2));
      CHECK(q2 == r * 2);
      OK(g, gk_unset(g, "q"));
    }
    /* a failed statement binds nothing: r keeps its value */
    CHECK(gk_eval(g, "r = sum(x) + nosuchvar") != GK_OK);
    float r3 = NAN;
    OK(g, gk_get(g, "r", &r3, sizeof r3));
    CHECK(r3 == r);
    free(h);
  }
  gk_finalize(st); gk_finalize(use);
}

/* More steps than the mapped pool has blocks, with several live results:
** blocks go back and are reused; every value stays right. */
static void test_many(gk_ctx *g) {
  gk_stmt *a = NULL, *b = NULL;
  OK(g, gk_prepare(g, "a = sum(x)", &a, NULL));
  OK(g, gk_prepare(g, "b = max(x)", &b, NULL));
  if (!a || !b) return;
  int bad = 0;
  for (int rep = 0; rep < 600; rep++) {
    int64_t n = 1 + rep % 64;
    float *h = fill(n);
    OK(g, gk_set(g, "x", GK_F32, 1, &n, h));
    OK(g, gk_step(a)); OK(g, gk_step(b));
    char name[16];
    snprintf(name, sizeof name, "k%d", rep % 300);   /* up to 300 live copies of a */
    OK(g, gk_eval(g, rep % 2 ? "z = 0" : "z = 1"));
    float va = NAN, vb = NAN;
    OK(g, gk_get(g, "a", &va, sizeof va));
    OK(g, gk_get(g, "b", &vb, sizeof vb));
    float m = h[0];
    for (int64_t k = 1; k < n; k++) if (h[k] > m) m = h[k];
    bad += !close_to(va, sum_of(h, n, 0, 1), 1e-5) || vb != m;
    /* keep a: bound under another name, it stays live (its block in use) */
    char src[48];
    snprintf(src, sizeof src, "%s = a", name);
    OK(g, gk_eval(g, src));
    free(h);
  }
  CHECK(bad == 0);
  gk_finalize(a); gk_finalize(b);
}

/* ------------------------------------------------ bench */

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double med(double *t, int n) { qsort(t, (size_t)n, sizeof *t, cmp_d); return t[n / 2]; }

static double now_us(void) { return t_now() * 1e6; }

static int bench(gk_ctx *g, int reps) {
  int64_t n = 1024;
  float *h = fill(n);
  gk_stmt *st = NULL;
  double *t = malloc(sizeof(double) * 4 * (size_t)reps), *a = t + reps, *b = a + reps, *c = b + reps;
  float r = 0;
  if (gk_set(g, "x", GK_F32, 1, &n, h) || gk_prepare(g, "r = sum(x)", &st, NULL)) goto fail;
  for (int k = 0; k < 200; k++) if (gk_step(st) || gk_get(g, "r", &r, sizeof r)) goto fail;
  if (!close_to(r, sum_of(h, n, 0, 1), 1e-5)) { fprintf(stderr, "bench: wrong sum\n"); return 1; }
  for (int k = 0; k < reps; k++) {
    double t0 = now_us();
    if (gk_step(st) || gk_get(g, "r", &r, sizeof r)) goto fail;
    t[k] = now_us() - t0;
  }
  for (int k = 0; k < reps; k++) {
    double t0 = now_us();
    if (gk_step(st)) goto fail;
    double t1 = now_us();
    if (gk_sync(g)) goto fail;
    double t2 = now_us();
    if (gk_get(g, "r", &r, sizeof r)) goto fail;
    a[k] = t1 - t0; b[k] = t2 - t1; c[k] = now_us() - t2;
  }
  printf("e2e_us %.2f\n", med(t, reps));
  printf("e2e_min_us %.2f\n", t[0]);
  printf("split_step_us %.2f\nsplit_sync_us %.2f\nsplit_get_us %.2f\n", med(a, reps), med(b, reps), med(c, reps));
  /* the floor: a one-element map instead of the reduction */
  gk_stmt *tiny = NULL;
  if (gk_prepare(g, "t = x[0:1] * 2", &tiny, NULL)) goto fail;
  float tv[1];
  for (int k = 0; k < reps + 200; k++) {
    double t0 = now_us();
    if (gk_step(tiny) || gk_get(g, "t", tv, sizeof tv)) goto fail;
    if (k >= 200) a[k - 200] = now_us() - t0;
  }
  if (tv[0] != h[0] * 2) { fprintf(stderr, "bench: wrong map\n"); return 1; }
  printf("e2e_map1_us %.2f\n", med(a, reps));
  gk_finalize(tiny);
  /* a large kernel reading the small result (mapped or not) */
  int64_t big = 1 << 24;
  float *hb = fill(big);
  gk_stmt *use = NULL;
  if (gk_set(g, "w", GK_F32, 1, &big, hb) || gk_prepare(g, "y = w * r", &use, NULL)) goto fail;
  int ur = reps < 200 ? reps : 200;
  for (int k = 0; k < ur + 10; k++) {
    double t0 = now_us();
    if (gk_step(use) || gk_sync(g)) goto fail;
    if (k >= 10) t[k - 10] = now_us() - t0;
  }
  printf("consume_2^24_us %.2f\n", med(t, ur));
  free(hb);
  free(h);
  free(t);
  gk_finalize(use);
  gk_finalize(st);
  return 0;
fail:
  fprintf(stderr, "bench: %s\n", gk_errmsg(g));
  return 1;
}

int main(int argc, char **argv) {
  gk_ctx *g = gk_open("cuda");
  if (!g) g = gk_open("cpu");
  if (!g) { fprintf(stderr, "no context\n"); return 1; }
  if (argc > 1 && !strcmp(argv[1], "bench")) {
    int reps = argc > 2 ? atoi(argv[2]) : 2000;
    printf("backend %s\n", gk_backend(g));
    int rc = bench(g, reps < 10 ? 10 : reps);
    gk_close(g);
    return rc;
  }
  fprintf(stderr, "api_e2e: backend %s\n", gk_backend(g));
  test_steps(g);
  test_small(g);
  test_consumers(g);
  test_many(g);
  gk_close(g);
  return t_done();
}
