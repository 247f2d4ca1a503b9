/*
** runtime/cpu_mm.c -- the f32 matrix product on x86-64 with FMA: packed B
** panels, a register-blocked micro-kernel (AVX-512: 8 rows x 32 columns;
** AVX2: 6 x 16), rows of C in parallel.
**
** Each element of C is what runtime/host_ops.c's loop defines, with every
** multiply-add rounded once (an fma): for each block of HOST_MM_KB k's in
** order, acc = fma(a[k], b[k], acc) from 0 over the block, then C += acc
** (in double when there is more than one block, as host_matmul does).  The
** order is fixed by K alone -- not by the tile, the panel or the thread that
** computes the element -- so the result is the same on any thread count and
** from either micro-kernel; the last panel is padded with zero columns and
** short row tiles repeat their first row, neither of which is stored.
** Without FMA (a pre-2013 x86-64, or another architecture) cpu_sgemm
** returns 0 and host_matmul's portable loop, which rounds the product and
** the sum apart, runs instead.
*/
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/host.h"
#include "runtime/cpu_mm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

typedef struct sg_job {
  const float *A;
  float *bp;          /* B packed: panel p is bp[(p * K + k) * nr + q], zero past column N */
  const float *B;
  float *C;
  int64_t M, N, K, kb, nr, mr, panels;
  int isa;            /* 2: AVX-512, 1: AVX2 */
} sg_job;

/* One micro-kernel run: rows [i, i+mr) (short tiles repeat row i), panel p,
** k block [k0, k0+kc): the block's sums added into the tile's double
** accumulator dt (row stride 2W), or, with dt NULL (K is one block), stored
** into C as 0 + sum. */
#define UKERNEL(NAME, TGT, VEC, W, MR, LOAD, SET1, FMA, STORE, ZERO) \
  __attribute__((target(TGT))) static void NAME(const sg_job *j, int64_t i, int mr, int64_t p, int64_t k0, int64_t kc, \
                                                double *dt) { \
    VEC acc[MR][2]; \
    const float *ar[MR]; \
    for (int r = 0; r < MR; r++) { \
      acc[r][0] = ZERO(); acc[r][1] = ZERO(); \
      ar[r] = j->A + (i + (r < mr ? r : 0)) * j->K + k0; \
    } \
    const float *b = j->bp + (p * j->K + k0) * (2 * W); \
    for (int64_t k = 0; k < kc; k++, b += 2 * W) { \
      VEC b0 = LOAD(b), b1 = LOAD(b + W); \
      for (int r = 0; r < MR; r++) { \
        VEC av = SET1(ar[r][k]); \
        acc[r][0] = FMA(av, b0, acc[r][0]); \
        acc[r][1] = FMA(av, b1, acc[r][1]); \
      } \
    } \
    int64_t c0 = p * 2 * W, nc = j->N - c0 < 2 * W ? j->N - c0 : 2 * W; \
    for (int r = 0; r < mr; r++) { \
      float t[2 * W]; \
      STORE(t, acc[r][0]); STORE(t + W, acc[r][1]); \
      if (dt) { double *d = dt + r * 2 * W; for (int64_t q = 0; q < nc; q++) d[q] += (double)t[q]; } \
      else { float *c = j->C + (i + r) * j->N + c0; for (int64_t q = 0; q < nc; q++) c[q] = 0.0f + t[q]; } \
    } \
  }
UKERNEL(uk_avx512, "avx512f", __m512, 16, 12, _mm512_loadu_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps,
        _mm512_setzero_ps)
UKERNEL(uk_avx2, "avx2,fma", __m256, 8, 6, _mm256_loadu_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps,
        _mm256_setzero_ps)

/* Panels [p0, p1) of B, packed. */
static void pack_chunk(void *ctx, int64_t p0, int64_t p1) {
  sg_job *j = ctx;
  for (int64_t p = p0; p < p1; p++) {
    int64_t c0 = p * j->nr, nc = j->N - c0 < j->nr ? j->N - c0 : j->nr;
    for (int64_t k = 0; k < j->K; k++) {
      float *d = j->bp + (p * j->K + k) * j->nr;
      memcpy(d, j->B + k * j->N + c0, (size_t)nc * sizeof(float));
      if (nc < j->nr) memset(d + nc, 0, (size_t)(j->nr - nc) * sizeof(float));
    }
  }
}

/* Row tiles [t0, t1) of C, a tile and a panel at a time: the k blocks in
** order into the tile's double accumulator (in cache, where a whole C in
** double would be M x N x 8 bytes of traffic), then rounded into C. */
#define MM_TILE_MAX (12 * 32)   /* doubles in the largest tile (AVX-512: 12 x 32) */
static void rows_chunk(void *ctx, int64_t t0, int64_t t1) {
  sg_job *j = ctx;
  int64_t i0 = t0 * j->mr, i1 = t1 * j->mr < j->M ? t1 * j->mr : j->M;
  double dt[MM_TILE_MAX];
  for (int64_t i = i0; i < i1; i += j->mr) {
    int mr = (int)(i1 - i < j->mr ? i1 - i : j->mr);
    for (int64_t p = 0; p < j->panels; p++) {
      if (j->K <= j->kb) {
        if (j->isa == 2) uk_avx512(j, i, mr, p, 0, j->K, NULL); else uk_avx2(j, i, mr, p, 0, j->K, NULL);
        continue;
      }
      memset(dt, 0, sizeof dt);
      for (int64_t k0 = 0; k0 < j->K; k0 += j->kb) {
        int64_t kc = j->K - k0 < j->kb ? j->K - k0 : j->kb;
        if (j->isa == 2) uk_avx512(j, i, mr, p, k0, kc, dt); else uk_avx2(j, i, mr, p, k0, kc, dt);
      }
      int64_t c0 = p * j->nr, nc = j->N - c0 < j->nr ? j->N - c0 : j->nr;
      for (int r = 0; r < mr; r++)
        for (int64_t q = 0; q < nc; q++) j->C[(i + r) * j->N + c0 + q] = (float)dt[r * j->nr + q];
    }
  }
}

static int isa_level(void) {
  static _Atomic int level = -1;   /* the same answer whichever thread asks first */
  int l = atomic_load_explicit(&level, memory_order_relaxed);
  if (l < 0) {
    __builtin_cpu_init();
    l = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
    const char *cap = getenv("GK_CPU_ISA");   /* testing: 1 caps the kernels at AVX2, 0 turns them off */
    if (cap && atoi(cap) < l) l = atoi(cap) < 0 ? 0 : atoi(cap);
    atomic_store_explicit(&level, l, memory_order_relaxed);
  }
  return l;
}

int cpu_sgemm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K, int64_t kb,
              void *(*alloc)(size_t), void (*release)(void *, size_t)) {
  int isa = isa_level();
  if (!isa || M <= 0 || N <= 0 || K <= 0) return 0;
  sg_job j = { A, NULL, B, C, M, N, K, kb, isa == 2 ? 32 : 16, isa == 2 ? 12 : 6, 0, isa };
  j.panels = (N + j.nr - 1) / j.nr;
  size_t bpn = (size_t)(j.panels * K * j.nr) * sizeof(float);
  j.bp = alloc(bpn);
  if (!j.bp) return 0;
  par_for(j.panels, 1, pack_chunk, &j);
  /* ~4 M multiply-adds per chunk of row tiles */
  int64_t tiles = (M + j.mr - 1) / j.mr, per = j.mr * j.panels * j.nr * K;
  par_for(tiles, per >= ((int64_t)1 << 22) ? 1 : ((int64_t)1 << 22) / per, rows_chunk, &j);
  release(j.bp, bpn);
  return 1;
}

#else
int cpu_sgemm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K, int64_t kb,
              void *(*alloc)(size_t), void (*release)(void *, size_t)) {
  return 0;
}
#endif
