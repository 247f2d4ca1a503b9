/*
** runtime/cpu_fold.c -- the cpu backend's float folds over contiguous memory,
** written so they vectorise.
**
** runtime/cpu.c folds a contiguous run of floats into FOLD_LANES (8) double
** lanes: lane 0 starts at the accumulator, the others at the identity, lane
** k takes elements q*8 + k, the tail goes into lane 0, and the lanes are
** combined pairwise (k with k+4, k+2, k+1).  These functions compute exactly
** that, with the lanes as one vector (GCC vector extensions), so the bits are
** the ones the plain loop gives; each is compiled for AVX2 as well as for the
** baseline x86-64 (TWICE below).  max and min of doubles keep 8 lanes in the
** element type (a double's max is the same number either way); of floats,
** 32 lanes (the extreme is one number in any order, save NaNs and -0 / +0).
** Both flag a NaN -- and the floats' a zero extreme -- and return 0 then: the
** caller's plain loop decides which NaN or which zero stays.
*/
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include "runtime/cpu_fold.h"
#include "kernels/gk_scalar.h"

/* Every fold is compiled twice, for AVX2 and for baseline x86-64, and the
** entry picks one per call from a cached cpuid (not ifunc-based
** target_clones: their resolvers run before a sanitizer's runtime is up). */
#if defined(__x86_64__) && defined(__GNUC__)
static int cpu_avx2(void) {
  static _Atomic int avx2 = -1;   /* the same answer whichever thread asks first */
  int a = atomic_load_explicit(&avx2, memory_order_relaxed);
  if (a < 0) {
    __builtin_cpu_init();
    a = __builtin_cpu_supports("avx2") != 0;
    atomic_store_explicit(&avx2, a, memory_order_relaxed);
  }
  return a;
}
#define TWICE(RET, NAME, PARAMS, ARGS, ...) \
  __attribute__((target("avx2"))) static RET NAME##_avx2 PARAMS __VA_ARGS__ \
  static RET NAME##_base PARAMS __VA_ARGS__ \
  RET NAME PARAMS { return cpu_avx2() ? NAME##_avx2 ARGS : NAME##_base ARGS; }
#else
#define TWICE(RET, NAME, PARAMS, ARGS, ...) RET NAME PARAMS __VA_ARGS__
#endif

/* Eight lanes as two halves of four (lanes 0-3, 4-7), so each half is one
** AVX2 register (two SSE2 ones) and the loop keeps them in registers. */
typedef float v4f __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef int64_t v4l __attribute__((vector_size(32)));

#define LANES 8

/* The lanes r[0..8) combined pairwise with COMB, as runtime/cpu.c does. */
#define PAIRWISE(r, COMB) do { \
    for (int w_ = LANES / 2; w_ > 0; w_ /= 2) \
      for (int k_ = 0; k_ < w_; k_++) r[k_] = COMB(r[k_], r[k_ + w_]); } while (0)

/* Four elements of v at q as four doubles. */
#define LOAD4D_float(v, q) ({ v4f x_; memcpy(&x_, (v) + (q), sizeof x_); __builtin_convertvector(x_, v4d); })
#define LOAD4D_double(v, q) ({ v4d x_; memcpy(&x_, (v) + (q), sizeof x_); x_; })

/* sum and prod: lanes in double, whatever the element type. */
#define ARITH_FOLD(NAME, T, COMB, OP, IDV) \
  TWICE(double, NAME, (const T *v, int64_t n, double init), (v, n, init), { \
    v4d lo = { init, IDV, IDV, IDV }, hi = { IDV, IDV, IDV, IDV }; \
    int64_t q = 0; \
    for (; q + LANES <= n; q += LANES) { \
      lo = lo OP LOAD4D_##T(v, q); \
      hi = hi OP LOAD4D_##T(v, q + 4); \
    } \
    double r[LANES]; memcpy(r, &lo, sizeof lo); memcpy(r + 4, &hi, sizeof hi); \
    for (; q < n; q++) r[0] = COMB(r[0], (double)v[q]); \
    PAIRWISE(r, COMB); \
    return r[0]; \
  })
ARITH_FOLD(cpu_sum_f32, float, GK_COMB_SUM, +, 0.0)
ARITH_FOLD(cpu_sum_f64, double, GK_COMB_SUM, +, 0.0)
ARITH_FOLD(cpu_prod_f32, float, GK_COMB_PROD, *, 1.0)
ARITH_FOLD(cpu_prod_f64, double, GK_COMB_PROD, *, 1.0)

/* The sums of four consecutive runs of n floats (v, v + n, v + 2n, v + 3n),
** each exactly cpu_sum_f32(run, n, 0): the four runs' lanes advance in one
** loop, so four independent chains of adds overlap where one run's two
** wait on the adder's latency. */
TWICE(void, cpu_sum4_f32, (const float *v, int64_t n, double *out), (v, n, out), {
  v4d lo[4], hi[4];
  for (int g = 0; g < 4; g++) { lo[g] = (v4d){ 0, 0, 0, 0 }; hi[g] = lo[g]; }
  int64_t q = 0;
  for (; q + LANES <= n; q += LANES)
    for (int g = 0; g < 4; g++) {
      lo[g] = lo[g] + LOAD4D_float(v + g * n, q);
      hi[g] = hi[g] + LOAD4D_float(v + g * n, q + 4);
    }
  for (int g = 0; g < 4; g++) {
    double r[LANES]; memcpy(r, &lo[g], sizeof lo[g]); memcpy(r + 4, &hi[g], sizeof hi[g]);
    for (int64_t t = q; t < n; t++) r[0] += (double)v[g * n + t];
    PAIRWISE(r, GK_COMB_SUM);
    out[g] = r[0];
  }
})

/* max (MX = 1) and min of doubles: lanes in the element type (the
** accumulator is an element's value or an infinity; a NaN in it stays in
** lane 0); 0 when the lanes meet a NaN. */
#define EXT_STEP(VT, VI, m, x, MX) do { \
    VI take_ = MX ? x > m : x < m; \
    m = (VT)(((VI)x & take_) | ((VI)m & ~take_)); } while (0)
#define EXT_FOLD(NAME, T, VT, VI, MX) \
  TWICE(int, NAME, (const T *v, int64_t n, double *acc), (v, n, acc), { \
    const T id = MX ? -INFINITY : INFINITY; \
    VT lo = { (T)*acc, id, id, id }, hi = { id, id, id, id }; \
    VI bad = { 0 }; \
    int64_t q = 0; \
    for (; q + LANES <= n; q += LANES) { \
      VT x, y; memcpy(&x, v + q, sizeof x); memcpy(&y, v + q + 4, sizeof y); \
      EXT_STEP(VT, VI, lo, x, MX); \
      EXT_STEP(VT, VI, hi, y, MX); \
      bad |= (x != x) | (y != y); \
    } \
    for (int k = 0; k < 4; k++) if (bad[k]) return 0; \
    double r[LANES]; \
    for (int k = 0; k < 4; k++) { r[k] = (double)lo[k]; r[k + 4] = (double)hi[k]; } \
    for (; q < n; q++) r[0] = MX ? GK_COMB_MAX(r[0], (double)v[q]) : GK_COMB_MIN(r[0], (double)v[q]); \
    if (MX) PAIRWISE(r, GK_COMB_MAX); else PAIRWISE(r, GK_COMB_MIN); \
    *acc = r[0]; \
    return 1; \
  })
EXT_FOLD(cpu_max_f64, double, v4d, v4l, 1)
EXT_FOLD(cpu_min_f64, double, v4d, v4l, 0)

/* max and min of floats.  Without a NaN the extreme of a run is one number
** whatever the order it is found in, except between -0 and +0 (the first
** kept); so these use as many lanes as keep the loop busy (32: four
** registers of eight under AVX2, eight of four under SSE) and hand back (0)
** a run whose extreme is a zero or that holds a NaN, for runtime/cpu.c's
** 8-lane loop to decide. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define XLANES 32
#define XFINISH(buf, acc, MX) do { \
    double r_ = *acc; \
    for (int k_ = 0; k_ < XLANES; k_++) r_ = MX ? GK_COMB_MAX(r_, (double)buf[k_]) : GK_COMB_MIN(r_, (double)buf[k_]); \
    for (; q < n; q++) r_ = MX ? GK_COMB_MAX(r_, (double)v[q]) : GK_COMB_MIN(r_, (double)v[q]); \
    if (r_ == 0 || r_ != r_) return 0; \
    *acc = r_; } while (0)
__attribute__((target("avx2"))) static int ext_f32_avx2(const float *v, int64_t n, double *acc, int mx) {
  __m256 m[4], bad = _mm256_setzero_ps();
  for (int k = 0; k < 4; k++) m[k] = _mm256_set1_ps(mx ? -INFINITY : INFINITY);
  int64_t q = 0;
  for (; q + XLANES <= n; q += XLANES)
    for (int k = 0; k < 4; k++) {
      __m256 x = _mm256_loadu_ps(v + q + 8 * k);
      m[k] = mx ? _mm256_max_ps(x, m[k]) : _mm256_min_ps(x, m[k]);
      bad = _mm256_or_ps(bad, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    }
  if (_mm256_movemask_ps(bad)) return 0;
  float buf[XLANES];
  for (int k = 0; k < 4; k++) _mm256_storeu_ps(buf + 8 * k, m[k]);
  XFINISH(buf, acc, mx);
  return 1;
}
static int ext_f32_sse(const float *v, int64_t n, double *acc, int mx) {
  __m128 m[8], bad = _mm_setzero_ps();
  for (int k = 0; k < 8; k++) m[k] = _mm_set1_ps(mx ? -INFINITY : INFINITY);
  int64_t q = 0;
  for (; q + XLANES <= n; q += XLANES)
    for (int k = 0; k < 8; k++) {
      __m128 x = _mm_loadu_ps(v + q + 4 * k);
      m[k] = mx ? _mm_max_ps(x, m[k]) : _mm_min_ps(x, m[k]);
      bad = _mm_or_ps(bad, _mm_cmpunord_ps(x, x));
    }
  if (_mm_movemask_ps(bad)) return 0;
  float buf[XLANES];
  for (int k = 0; k < 8; k++) _mm_storeu_ps(buf + 4 * k, m[k]);
  XFINISH(buf, acc, mx);
  return 1;
}
static int ext_f32(const float *v, int64_t n, double *acc, int mx) {
  return cpu_avx2() ? ext_f32_avx2(v, n, acc, mx) : ext_f32_sse(v, n, acc, mx);
}
#else
static int ext_f32(const float *v, int64_t n, double *acc, int mx) { return 0; }
#endif
int cpu_max_f32(const float *v, int64_t n, double *acc) { return ext_f32(v, n, acc, 1); }
int cpu_min_f32(const float *v, int64_t n, double *acc) { return ext_f32(v, n, acc, 0); }

/* var's two passes over one run: the sum in 8 double lanes, then the sum of
** squared deviations from the run's mean in 8 double lanes. */
#define VAR_FOLD(NAME, T, SUM) \
  TWICE(void, NAME, (const T *v, int64_t n, double *mean, double *m2), (v, n, mean, m2), { \
    double mu = SUM(v, n, 0.0) / (double)n; \
    v4d lo = { 0 }, hi = { 0 }, mv = { mu, mu, mu, mu }; \
    int64_t q = 0; \
    for (; q + LANES <= n; q += LANES) { \
      v4d d = LOAD4D_##T(v, q) - mv, e = LOAD4D_##T(v, q + 4) - mv; \
      lo = lo + d * d; \
      hi = hi + e * e; \
    } \
    double r[LANES]; memcpy(r, &lo, sizeof lo); memcpy(r + 4, &hi, sizeof hi); \
    for (; q < n; q++) { double d = (double)v[q] - mu; r[0] += d * d; } \
    PAIRWISE(r, GK_COMB_SUM); \
    *mean = mu; *m2 = r[0]; \
  })
VAR_FOLD(cpu_var_f32, float, cpu_sum_f32)
VAR_FOLD(cpu_var_f64, double, cpu_sum_f64)

/* Column folds: one row of n values into the running values of n columns,
** l[q] = COMB(l[q], (double)v[q]) (runtime/cpu.c's column reductions: per
** column the steps of its plain loop, so the same bits whatever the vector
** width).  max / min select as GK_COMB_MAX / MIN do: a NaN in l stays, else
** a NaN or a strictly greater (smaller) value in v replaces it.  Compiled
** for AVX-512 too (GK_CPU_ISA=1 caps them at AVX2, as cpu_exp.c's). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <stdlib.h>
static int cpu_avx512(void) {
  static _Atomic int avx512 = -1;
  int a = atomic_load_explicit(&avx512, memory_order_relaxed);
  if (a < 0) {
    __builtin_cpu_init();
    const char *cap = getenv("GK_CPU_ISA");
    a = __builtin_cpu_supports("avx512f") && !(cap && atoi(cap) < 2);
    atomic_store_explicit(&avx512, a, memory_order_relaxed);
  }
  return a;
}
#define THRICE(NAME, T, ...) \
  __attribute__((target("avx512f"))) static void NAME##_512(const T *v, int64_t n, double *l) __VA_ARGS__ \
  static void NAME##_2(const T *v, int64_t n, double *l);   /* internal: TWICE's entry */ \
  TWICE(void, NAME##_2, (const T *v, int64_t n, double *l), (v, n, l), __VA_ARGS__) \
  void NAME(const T *v, int64_t n, double *l) { if (cpu_avx512()) NAME##_512(v, n, l); else NAME##_2(v, n, l); }
#else
#define THRICE(NAME, T, ...) void NAME(const T *v, int64_t n, double *l) __VA_ARGS__
#endif
typedef float v8f __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8l __attribute__((vector_size(64)));
#define LOAD8D_float(v, q) ({ v8f x_; memcpy(&x_, (v) + (q), sizeof x_); __builtin_convertvector(x_, v8d); })
#define LOAD8D_double(v, q) ({ v8d x_; memcpy(&x_, (v) + (q), sizeof x_); x_; })

#define COL_ARITH(NAME, T, OP) \
  THRICE(NAME, T, { \
    int64_t q = 0; \
    for (; q + 8 <= n; q += 8) { \
      v8d a; memcpy(&a, l + q, sizeof a); \
      a = a OP LOAD8D_##T(v, q); \
      memcpy(l + q, &a, sizeof a); \
    } \
    for (; q < n; q++) l[q] = l[q] OP (double)v[q]; \
  })
COL_ARITH(cpu_colsum_f32, float, +)
COL_ARITH(cpu_colsum_f64, double, +)
COL_ARITH(cpu_colprod_f32, float, *)
COL_ARITH(cpu_colprod_f64, double, *)

#define COL_EXT(NAME, T, CMP, COMB) \
  THRICE(NAME, T, { \
    int64_t q = 0; \
    for (; q + 8 <= n; q += 8) { \
      v8d a, b = LOAD8D_##T(v, q); \
      memcpy(&a, l + q, sizeof a); \
      v8l take = ((b != b) | (b CMP a)) & ~(a != a), ai, bi; \
      memcpy(&ai, &a, sizeof a); memcpy(&bi, &b, sizeof b); \
      ai = (take & bi) | (~take & ai); \
      memcpy(l + q, &ai, sizeof ai); \
    } \
    for (; q < n; q++) l[q] = COMB(l[q], (double)v[q]); \
  })
COL_EXT(cpu_colmax_f32, float, >, GK_COMB_MAX)
COL_EXT(cpu_colmax_f64, double, >, GK_COMB_MAX)
COL_EXT(cpu_colmin_f32, float, <, GK_COMB_MIN)
COL_EXT(cpu_colmin_f64, double, <, GK_COMB_MIN)

/* The first q < n with v[q] == x (n - 1 when none): blocks of 8 compared in
** vector lanes, then the block that holds it element by element. */
#define FIND_EQ(NAME, T, VT, LOAD) \
  TWICE(int64_t, NAME, (const T *v, int64_t n, T x), (v, n, x), { \
    int64_t q = 0; \
    for (; q + 8 <= n; q += 8) { \
      VT a, b, xv = { x, x, x, x }; \
      memcpy(&a, v + q, sizeof a); memcpy(&b, v + q + 4, sizeof b); \
      LOAD m = (a == xv) | (b == xv); \
      int hit = 0; \
      for (int k = 0; k < 4; k++) hit |= m[k] != 0; \
      if (hit) break; \
    } \
    while (q < n - 1 && v[q] != x) q++; \
    return q; \
  })
FIND_EQ(cpu_find_f64, double, v4d, v4l)

/* max / min of integers: init folded with v[0..n), exact in any order, in
** vector lanes (8 of int32 or int64). */
#define INT_EXT(NAME, T, VT, CMP) \
  TWICE(int64_t, NAME, (const T *v, int64_t n, int64_t init), (v, n, init), { \
    int64_t q = 0, r = init; \
    if (n >= 8) { \
      VT a, b; \
      memcpy(&a, v, sizeof a); memcpy(&b, v + sizeof a / sizeof(T), sizeof b); \
      for (q = 8; q + 8 <= n; q += 8) { \
        VT c, d; \
        memcpy(&c, v + q, sizeof c); memcpy(&d, v + q + sizeof c / sizeof(T), sizeof d); \
        VT mc = c CMP a, md = d CMP b; \
        a = (mc & c) | (~mc & a); b = (md & d) | (~md & b); \
      } \
      VT mb = b CMP a; \
      a = (mb & b) | (~mb & a); \
      for (int k = 0; k < (int)(sizeof a / sizeof(T)); k++) if ((int64_t)a[k] CMP r) r = a[k]; \
    } \
    for (; q < n; q++) if ((int64_t)v[q] CMP r) r = v[q]; \
    return r; \
  })
typedef int32_t v4i32 __attribute__((vector_size(16)));
INT_EXT(cpu_max_i32, int32_t, v4i32, >)
INT_EXT(cpu_min_i32, int32_t, v4i32, <)
INT_EXT(cpu_max_i64, int64_t, v4l, >)
INT_EXT(cpu_min_i64, int64_t, v4l, <)

/* argmax (mx) / argmin of v[0..n) (32 <= n < 2^31) in one pass: each of
** 32 lanes (four vectors, so four compare chains run at once) keeps its first
** extreme and where it was (a later element replaces it only when strictly
** beyond, so the first one stays), then the lanes' extreme with the lowest
** index.  -0 and +0 compare equal, as in the plain loop.  0 (nothing
** written) when a NaN is met: the caller's loop decides. */
typedef int32_t v8i __attribute__((vector_size(32)));
#define ARG_STEP(g) do { \
    v8f b; memcpy(&b, v + q + 8 * (g), sizeof b); \
    v8i m = mx ? b > best[g] : b < best[g], bb, bv; \
    nan |= b != b; \
    memcpy(&bb, &best[g], sizeof bb); memcpy(&bv, &b, sizeof bv); \
    bb = (m & bv) | (~m & bb); \
    memcpy(&best[g], &bb, sizeof bb); \
    bi[g] = (m & cur) | (~m & bi[g]); \
    cur += step; } while (0)
TWICE(int, cpu_argext_f32, (const float *v, int64_t n, int mx, int64_t *at, double *val), (v, n, mx, at, val), {
  if (n < 32 || n >= ((int64_t)1 << 31)) return 0;
  v8f best[4];
  v8i bi[4], step = { 8, 8, 8, 8, 8, 8, 8, 8 }, cur = { 0, 1, 2, 3, 4, 5, 6, 7 }, nan = { 0 };
  memcpy(best, v, sizeof best);
  for (int g = 0; g < 4; g++) { bi[g] = cur; nan |= best[g] != best[g]; cur += step; }
  int64_t q = 32;
  for (; q + 32 <= n; q += 32) { ARG_STEP(0); ARG_STEP(1); ARG_STEP(2); ARG_STEP(3); }
  int any = 0;
  for (int k = 0; k < 8; k++) any |= nan[k] != 0;
  if (any) return 0;
  float bv = best[0][0]; int64_t ba = bi[0][0];
  for (int g = 0; g < 4; g++)
    for (int k = 0; k < 8; k++)
      if ((mx ? best[g][k] > bv : best[g][k] < bv) || (best[g][k] == bv && bi[g][k] < ba)) { bv = best[g][k]; ba = bi[g][k]; }
  for (; q < n; q++) {
    if (v[q] != v[q]) return 0;
    if (mx ? v[q] > bv : v[q] < bv) { bv = v[q]; ba = q; }
  }
  *at = ba; *val = bv;
  return 1;
})
#undef ARG_STEP
