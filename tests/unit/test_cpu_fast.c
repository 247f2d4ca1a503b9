/*
** tests/unit/test_cpu_fast.c -- the cpu backend's vector kernels against
** their definitions, bit for bit: runtime/cpu_fold.c (8-lane folds),
** runtime/cpu_exp.c (expf), runtime/cpu_mm.c (the FMA matrix product).
**
** Each reference is the plain scalar loop the kernel claims to reproduce,
** written here: lane k of 8 takes elements q*8 + k, the tail goes to lane 0,
** lanes combine pairwise; expf is the C library's; a product element is, per
** block of kb k's, acc = fmaf(a, b, acc) from 0, added into C (in double when
** K > kb).  Fresh random data (seed printed, GK_TEST_SEED replays) at sizes
** 1, 31, 33, 1000003 and 2^20+1, with NaNs and signed zeros where the
** kernels must hand the case back.  Prints "N passed, M failed".
*/
#include "runtime/cpu_fold.h"
#include "runtime/cpu_exp.h"
#include "runtime/cpu_mm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int npass, nfail;
#define CHECKF(cond, ...) do { \
    if (cond) npass++; \
    else { nfail++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static const int64_t SIZES[] = {1, 31, 33, 1000003, (1 << 20) + 1};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

static uint64_t rng_state;
static uint64_t rnd(void) {   /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static float urand(void) { return (float)(rnd() >> 40) / (float)(1 << 24); }

static int same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b); }

/* The 8-lane fold runtime/cpu.c defines (kind 0 sum, 1 prod, 2 max, 3 min). */
static double comb(int kind, double a, double b) {
  switch (kind) {
  case 0: return a + b;
  case 1: return a * b;
  case 2: return a != a ? a : b != b ? b : b > a ? b : a;
  default: return a != a ? a : b != b ? b : b < a ? b : a;
  }
}
static double ref_fold(int kind, const float *v, int64_t n, double init) {
  double id = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? -INFINITY : INFINITY, l[8];
  l[0] = init;
  for (int k = 1; k < 8; k++) l[k] = id;
  int64_t q = 0;
  for (; q + 8 <= n; q += 8)
    for (int k = 0; k < 8; k++) l[k] = comb(kind, l[k], (double)v[q + k]);
  for (; q < n; q++) l[0] = comb(kind, l[0], (double)v[q]);
  for (int w = 4; w > 0; w /= 2)
    for (int k = 0; k < w; k++) l[k] = comb(kind, l[k], l[k + w]);
  return l[0];
}

static void test_folds(void) {
  for (int si = 0; si < NSIZES; si++) {
    int64_t n = SIZES[si];
    float *v = malloc((size_t)n * sizeof(float));
    double *d = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) v[i] = urand() * 2 - 0.7f, d[i] = v[i];
    for (int kind = 0; kind < 4; kind++) {
      float *u = v;
      float *p = NULL;
      if (kind == 1) {   /* a product that stays finite */
        p = malloc((size_t)n * sizeof(float));
        for (int64_t i = 0; i < n; i++) p[i] = 1 + (v[i] - 0.3f) / 4096;
        u = p;
      }
      double init = kind < 2 ? (kind ? 1.0 : 0.25) : kind == 2 ? -INFINITY : INFINITY, got = init;
      double want = ref_fold(kind, u, n, init);
      int ok = 1;
      if (kind == 0) got = cpu_sum_f32(u, n, init);
      else if (kind == 1) got = cpu_prod_f32(u, n, init);
      else ok = kind == 2 ? cpu_max_f32(u, n, &got) : cpu_min_f32(u, n, &got);
      CHECKF(!ok || same(got, want), "fold %d n=%lld: %.17g, the 8-lane loop %.17g", kind, (long long)n, got, want);
      CHECKF(ok || n < 32, "fold %d n=%lld: handed back without a NaN or a zero", kind, (long long)n);
      free(p);
    }
    if (n >= 4) {   /* four runs at once, each the 8-lane sum */
      double s4[4];
      int64_t run = n / 4;
      cpu_sum4_f32(v, run, s4);
      for (int g = 0; g < 4; g++)
        CHECKF(same(s4[g], ref_fold(0, v + g * run, run, 0)), "sum4 run %d of %lld", g, (long long)run);
    }
    double s = cpu_sum_f64(d, n, 0), ws = 0, l[8] = {0};
    int64_t q = 0;
    for (; q + 8 <= n; q += 8) for (int k = 0; k < 8; k++) l[k] += d[q + k];
    for (; q < n; q++) l[0] += d[q];
    for (int w = 4; w > 0; w /= 2) for (int k = 0; k < w; k++) l[k] += l[k + w];
    ws = l[0];
    CHECKF(same(s, ws), "sum f64 n=%lld", (long long)n);
    /* var: the run's mean from the 8-lane sum, then 8 lanes of squared deviations */
    double mean, m2;
    cpu_var_f32(v, n, &mean, &m2);
    double mu = ref_fold(0, v, n, 0) / (double)n, r[8] = {0};
    for (q = 0; q + 8 <= n; q += 8) for (int k = 0; k < 8; k++) { double e = (double)v[q + k] - mu; r[k] += e * e; }
    for (; q < n; q++) { double e = (double)v[q] - mu; r[0] += e * e; }
    for (int w = 4; w > 0; w /= 2) for (int k = 0; k < w; k++) r[k] += r[k + w];
    CHECKF(same(mean, mu) && same(m2, r[0]), "var n=%lld", (long long)n);
    /* a NaN, or an extreme that is a zero: handed back, or the 8-lane bits */
    if (n >= 16) {
      v[n / 2] = NAN;
      double a = -INFINITY;
      int ok = cpu_max_f32(v, n, &a);
      CHECKF(!ok || same(a, ref_fold(2, v, n, -INFINITY)), "max with a NaN n=%lld", (long long)n);
      for (int64_t i = 0; i < n; i++) v[i] = (rnd() & 1) ? 0.0f : -0.0f;
      a = -INFINITY;
      ok = cpu_max_f32(v, n, &a);
      CHECKF(!ok || same(a, ref_fold(2, v, n, -INFINITY)), "max of signed zeros n=%lld", (long long)n);
      a = INFINITY;
      ok = cpu_min_f32(v, n, &a);
      CHECKF(!ok || same(a, ref_fold(3, v, n, INFINITY)), "min of signed zeros n=%lld", (long long)n);
    }
    free(v);
    free(d);
  }
}

static void test_exp(void) {
  enum { N = 1 << 24 };
  float *in = malloc((size_t)N * sizeof(float)), *got = malloc((size_t)N * sizeof(float));
  for (uint32_t k = 0; k < N / 2; k++) {   /* every 512th bit pattern, then a dense random sample */
    uint32_t u = k << 9 | (uint32_t)(rnd() & 511);
    memcpy(&in[k], &u, sizeof u);
    in[N / 2 + k] = -110 + 200 * urand();
  }
  if (!cpu_expf(in, got, N)) {
    /* glibc's expf on a cpu with AVX2 and FMA is the one cpu_expf reproduces: it must not decline there */
#if defined(__GLIBC__) && defined(__x86_64__)
    CHECKF(getenv("GK_CPU_ISA") || !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")),
           "cpu_expf declines under glibc with FMA");
#endif
    printf("note: cpu_expf declines on this machine (the expf loop runs)\n");
    npass++;
  }
  else {
    int64_t bad = 0, first = -1;
    for (int64_t k = 0; k < N; k++) {
      float w = expf(in[k]);
      if (memcmp(&w, &got[k], sizeof w) && !(w != w && got[k] != got[k])) { bad++; if (first < 0) first = k; }
    }
    CHECKF(bad == 0, "cpu_expf: %lld of %d differ from expf (first: x = %a)", (long long)bad, N,
           first >= 0 ? in[first] : 0.0f);
    for (int si = 0; si < NSIZES; si++)   /* tails */
      CHECKF(cpu_expf(in + 3, got, SIZES[si]) && same(got[SIZES[si] - 1], expf(in[3 + SIZES[si] - 1])),
             "cpu_expf tail n=%lld", (long long)SIZES[si]);
  }
  free(in);
  free(got);
}

static void *alloc_(size_t n) { return malloc(n); }
static void free_(void *p, size_t n) { (void)n; free(p); }

static void test_sgemm(void) {
  /* M x K x N: short row tiles (M % 14, M % 6; M < 14, the 4-row kernel), a matrix times a vector
  ** (N = 1, M % 16) and a vector times a matrix (M = 1), partial panels (N % 32, N % 16), K = 1, 31, 33,
  ** 257 and 1000 (one block, several, a short last one), K a multiple of 128 (rows of A in few L1
  ** sets), K past one tile's L2 budget (K in segments, an accumulator per panel), several groups and
  ** workers */
  static const int64_t shapes[][3] = {{1, 1, 1}, {31, 33, 17}, {33, 300, 257}, {13, 513, 31}, {100, 40, 64},
                                      {7, 1000, 33}, {1, 31, 1}, {15, 1, 33}, {29, 1024, 70}, {43, 257, 100},
                                      {200, 384, 31}, {28, 256, 32}, {300, 200, 96}, {14, 10000, 40}, {3, 9500, 65},
                                      {17, 2048, 5}, {250, 1000, 129}, {2, 300, 40}, {5, 257, 3}, {1000, 1000, 1},
                                      {33, 257, 1}, {17, 31, 1}, {100, 2048, 1}, {5, 513, 1}, {16, 16, 1},
                                      {1, 1000, 256}, {1, 257, 33}, {1, 300, 129}, {1, 31, 200}, {1, 2, 17}};
  for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
    int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2], kb = 256;
    float *A = malloc((size_t)(M * K) * 4), *B = malloc((size_t)(K * N) * 4), *C = malloc((size_t)(M * N) * 4);
    for (int64_t i = 0; i < M * K; i++) A[i] = urand() - 0.5f;
    for (int64_t i = 0; i < K * N; i++) B[i] = urand() - 0.5f;
    if (!cpu_sgemm(A, B, C, M, N, K, kb, alloc_, free_)) {
      printf("note: cpu_sgemm declines on this machine\n");
      npass++;
    } else {
      int64_t bad = 0;
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          double cd = 0;
          float cf = 0;
          for (int64_t k0 = 0; k0 < K; k0 += kb) {
            float acc = 0;
            for (int64_t k = k0; k < K && k < k0 + kb; k++) acc = fmaf(A[i * K + k], B[k * N + j], acc);
            if (K > kb) cd += (double)acc; else cf = cf + acc;
          }
          float want = K > kb ? (float)cd : cf;
          if (memcmp(&want, &C[i * N + j], 4)) bad++;
        }
      CHECKF(bad == 0, "sgemm %lldx%lldx%lld: %lld elements differ from the fma loop", (long long)M, (long long)K,
             (long long)N, (long long)bad);
    }
    free(A); free(B); free(C);
  }
}

int main(void) {
  const char *e = getenv("GK_TEST_SEED");
  uint64_t seed = e && *e ? strtoull(e, NULL, 10) : (uint64_t)time(NULL);
  printf("seed %llu (replay with GK_TEST_SEED=%llu)\n", (unsigned long long)seed, (unsigned long long)seed);
  rng_state = seed;
  test_folds();
  test_exp();
  test_sgemm();
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail != 0;
}
