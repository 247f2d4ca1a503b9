/*
** runtime/cpu_exp.c -- expf over an array, eight lanes at a time, with the
** bits of the C library's expf.
**
** gk's f32 exp is libm's expf (runtime/ops.h; the constant folder calls it
** too).  glibc's expf (2.27 and later; sysdeps/ieee754/flt-32/e_expf.c, in
** the variant its ifunc picks on a cpu with FMA) is: in double, z =
** fma(N/ln2, x, shift), k = bits(z), kd = z - shift, r = fma(N/ln2, x, -kd),
** s = bits(T[k % N] + (k << 47)), y = fma(fma(C0, r, C1), r*r, fma(C2, r, 1))
** * s, rounded to float; |x| from 88 up (and NaN) takes its special path.
** cpu_expf runs exactly that on AVX2 + FMA, four doubles per register (or
** AVX-512, eight), and calls expf itself for the special lanes.  Whether the process's expf is
** that one is not assumed: at first use both run over 2^16 inputs spread
** over every exponent and a dense sample of [-104, 89]; any difference and
** cpu_expf declines for good (returns 0: the caller's expf loop runs).
** tests/run_threads.py compares it with expf over 2^24 more inputs.
*/
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/cpu_exp.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static const uint64_t tab[32] = {   /* bits(2^(i/32)) - (i << 47): glibc's __exp2f_data.tab */
  0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
  0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
  0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
  0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
  0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
  0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
  0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
  0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
static const uint64_t k_invln2n = 0x40471547652b82fe, k_shift = 0x4338000000000000,   /* 32/ln2, 0x1.8p52 */
  k_c0 = 0x3ebc6af84b912394, k_c1 = 0x3f2ebfce50fac4f3, k_c2 = 0x3f962e42ff0c52d6;    /* poly / 32^3, ^2, ^1 */

static double dbl(uint64_t u) { double d; memcpy(&d, &u, sizeof d); return d; }

/* Four lanes: x (as doubles) -> expf(x) (as floats), main path only. */
__attribute__((target("avx2,fma"))) static inline __m128 exp4(__m128 xf) {
  const __m256d invln2n = _mm256_set1_pd(dbl(k_invln2n)), shift = _mm256_set1_pd(dbl(k_shift));
  __m256d xd = _mm256_cvtps_pd(xf);
  __m256d z = _mm256_fmadd_pd(invln2n, xd, shift);
  __m256i ki = _mm256_castpd_si256(z);
  __m256d kd = _mm256_sub_pd(z, shift);
  __m256d r = _mm256_fmsub_pd(invln2n, xd, kd);
  __m256i t = _mm256_i64gather_epi64((const long long *)tab, _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
  __m256d s = _mm256_castsi256_pd(_mm256_add_epi64(t, _mm256_slli_epi64(ki, 47)));
  __m256d p = _mm256_fmadd_pd(_mm256_set1_pd(dbl(k_c0)), r, _mm256_set1_pd(dbl(k_c1)));
  __m256d r2 = _mm256_mul_pd(r, r);
  __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(dbl(k_c2)), _mm256_set1_pd(1.0));
  y = _mm256_fmadd_pd(p, r2, y);
  return _mm256_cvtpd_ps(_mm256_mul_pd(y, s));
}

__attribute__((target("avx2,fma"), noinline)) static void exp_avx2(const float *a, float *o, int64_t n) {
  int64_t m = n - n % 8, q = 0;
  for (; q < m; q += 8) {
    __m256 x = _mm256_loadu_ps(a + q);
    __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
    int special = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(top, _mm256_set1_epi32(0x42a))));
    __m128 lo = exp4(_mm256_castps256_ps128(x)), hi = exp4(_mm256_extractf128_ps(x, 1));
    _mm_storeu_ps(o + q, lo);
    _mm_storeu_ps(o + q + 4, hi);
    if (special)
      for (int k = 0; k < 8; k++)
        if (special >> k & 1) o[q + k] = expf(a[q + k]);
  }
  for (; q < n; q++) o[q] = expf(a[q]);
}

/* The same on AVX-512: eight doubles a register, the table as four
** registers indexed by two-source permutes instead of a gather. */
__attribute__((target("avx512f"), noinline)) static void exp_avx512(const float *a, float *o, int64_t n) {
  const __m512d invln2n = _mm512_set1_pd(dbl(k_invln2n)), shift = _mm512_set1_pd(dbl(k_shift));
  const __m512d c0 = _mm512_set1_pd(dbl(k_c0)), c1 = _mm512_set1_pd(dbl(k_c1)), c2 = _mm512_set1_pd(dbl(k_c2));
  const __m512i t0 = _mm512_loadu_si512(tab), t1 = _mm512_loadu_si512(tab + 8);
  const __m512i t2 = _mm512_loadu_si512(tab + 16), t3 = _mm512_loadu_si512(tab + 24);
  int64_t m = n - n % 8, q = 0;
  for (; q < m; q += 8) {
    __m256 x = _mm256_loadu_ps(a + q);
    __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
    int special = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(top, _mm256_set1_epi32(0x42a))));
    __m512d xd = _mm512_cvtps_pd(x);
    __m512d z = _mm512_fmadd_pd(invln2n, xd, shift);
    __m512i ki = _mm512_castpd_si512(z);
    __m512d kd = _mm512_sub_pd(z, shift);
    __m512d r = _mm512_fmsub_pd(invln2n, xd, kd);
    __m512i lo = _mm512_permutex2var_epi64(t0, ki, t1), hi = _mm512_permutex2var_epi64(t2, ki, t3);   /* index bits 0-3 */
    __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), lo, hi);   /* bit 4 */
    __m512d sc = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64(ki, 47)));
    __m512d p = _mm512_fmadd_pd(c0, r, c1);
    __m512d r2 = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(r, c2, _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(p, r2, y);
    _mm256_storeu_ps(o + q, _mm512_cvtpd_ps(_mm512_mul_pd(y, sc)));
    if (special)
      for (int k = 0; k < 8; k++)
        if (special >> k & 1) o[q + k] = expf(a[q + k]);
  }
  for (; q < n; q++) o[q] = expf(a[q]);
}

static _Atomic int use512;   /* set once, before cpu_expf first answers 1 */
static void exp_lanes(const float *a, float *o, int64_t n) {
  if (atomic_load_explicit(&use512, memory_order_relaxed)) exp_avx512(a, o, n); else exp_avx2(a, o, n);
}

/* Does exp_lanes give the process's expf bits?  2^16 inputs: one per 65537th
** bit pattern (every exponent, both signs, the specials) and 2^15 spread over
** [-104, 89], where exp's results are normal or subnormal floats. */
static int self_check(void) {
  enum { N = 1 << 16 };
  float *in = malloc(2 * N * sizeof(float)), *got = in + N;
  if (!in) return 0;
  for (uint32_t k = 0; k < N / 2; k++) {
    uint32_t u = k * 131074u;
    memcpy(&in[k], &u, sizeof u);
    in[N / 2 + k] = -104.0f + 193.0f * (float)k / (float)(N / 2);
  }
  exp_lanes(in, got, N);
  int ok = 0;
  for (int k = 0; k < N; k++) {
    float w = expf(in[k]);
    if (memcmp(&w, &got[k], sizeof w) != 0 && !(w != w && got[k] != got[k])) break;
    if (k == N - 1) ok = 1;
  }
  free(in);
  return ok;
}

static int usable(void) {
  static _Atomic int state = -1;   /* the same answer whichever thread asks first */
  int s = atomic_load_explicit(&state, memory_order_acquire);
  if (s < 0) {
    __builtin_cpu_init();
    const char *cap = getenv("GK_CPU_ISA");   /* testing: 1 caps the kernels at AVX2, 0 turns them off */
    atomic_store_explicit(&use512, __builtin_cpu_supports("avx512f") && !(cap && atoi(cap) < 2), memory_order_relaxed);
    s = !(cap && atoi(cap) < 1) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && self_check();
    atomic_store_explicit(&state, s, memory_order_release);
  }
  return s;
}

int cpu_expf(const float *a, float *o, int64_t n) {
  if (!usable()) return 0;
  exp_lanes(a, o, n);
  return 1;
}

#else
int cpu_expf(const float *a, float *o, int64_t n) { return 0; }
#endif
