/*
** runtime/cpu_mm.c -- the f32 matrix product on x86-64 with FMA: packed B
** panels, a register-blocked micro-kernel (AVX-512: 14 rows x 32 columns,
** 4 x 32 for an A of fewer rows; AVX2: 6 x 16), groups of row tiles in
** parallel.
**
** Each element of C is what runtime/host_ops.c's loop defines, with every
** multiply-add rounded once (an fma): for each block of HOST_MM_KB k's in
** order, acc = fma(a[k], b[k], acc) from 0 over the block, then C += acc
** (in double when there is more than one block, as host_matmul does).  The
** order is fixed by K alone -- not by the tile, the panel, the group or the
** thread that computes the element -- so the result is the same on any
** thread count and from either micro-kernel; the last panel is padded with
** zero columns, and A of fewer rows than a tile with zero rows, neither of
** which is stored.  Without FMA (a pre-2013 x86-64, or another architecture)
** cpu_sgemm returns 0 and host_matmul's portable loop, which rounds the
** product and the sum apart, runs instead.
**
** The loops are GotoBLAS's, inside that contract.  B is packed once into
** panels of 2W columns (k-major, zero-padded).  A worker per thread claims
** groups of row tiles (their rows of A fit in L2) one at a time and one
** ahead, so that it prefetches the next group's rows, a few lines per
** kernel run, while the current group runs.  For each panel and k block,
** every tile of the group runs over the block of B (HOST_MM_KB x 2W
** floats, 32 KB for AVX-512, kept in L1), adding the block's sums into the
** tile's double accumulator; the last block rounds them into C.  With K
** one block, writing C is most of the work, and a tile's rows of C are
** done at a time instead.  The kernel broadcasts A from its rows in place
** (no packing pass); a short last tile runs as the tile that ends at row M
** and stores only its own rows, an A of 2..13 rows is copied above zero
** rows, and a single row is read as every row of the tile.  A K too long
** for one tile's rows in L2 goes in segments of whole blocks, an
** accumulator then kept for every panel.  A matrix times a vector (N = 1)
** has its own loop, mv_chunk: 16 rows of A in the lanes; a vector times a
** matrix (M = 1) too, vm_chunk: columns of B in the lanes, B unpacked.
**
** Measured (NOTES.md, session 6): one thread, 10000x1000x256, ~86 G
** multiply-adds/s, 70% of the core's AVX-512 peak (2 FMA ports) and ~1.3x
** numpy's OpenBLAS on the same core.
*/
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/host.h"
#include "runtime/cpu_mm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

typedef struct sg_job {
  const float *A, *B;
  float *C;
  float *bp;            /* B packed: panel p is bp[(p * K + k) * nr + q], zero past column N */
  char *scr;            /* a slot per worker: the copied rows of A (cbytes), then the accumulators */
  size_t slot, cbytes;  /* bytes per slot, of the rows */
  _Atomic int64_t next;    /* the next group no worker has claimed */
  _Atomic int stop;        /* the caller was interrupted */
  int64_t M, N, K, kb, nr, mr, panels;
  int64_t group;        /* row tiles per group */
  int64_t kseg;         /* k's per segment: K, or a multiple of kb */
  int64_t dpanels;      /* panels with an accumulator: 1 when kseg == K, else all */
  int64_t lds;          /* M < mr: row stride of the copied rows */
  int isa;              /* 2: AVX-512, 1: AVX2 */
} sg_job;

/* What a micro-kernel run does with its tile's block sums acc. */
enum { UK_STORE,      /* K is one block: C = 0 + acc */
       UK_FIRST,      /* the first block of several: dt = 0 + (double)acc */
       UK_ADD,        /* dt += (double)acc */
       UK_LAST };     /* C = (float)(dt + (double)acc) */

/* One vector of block sums into dt / C by mode; lanes at or past nv are not stored. */
__attribute__((target("avx512f"))) static inline void ep_avx512(__m512 v, int mode, double *d, float *c, int nv) {
  __mmask16 m = nv >= 16 ? 0xffff : (__mmask16)((1u << (nv > 0 ? nv : 0)) - 1);
  if (mode == UK_STORE) {
    _mm512_mask_storeu_ps(c, m, _mm512_add_ps(_mm512_setzero_ps(), v));
    return;
  }
  __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
  __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  lo = _mm512_add_pd(mode == UK_FIRST ? _mm512_setzero_pd() : _mm512_loadu_pd(d), lo);
  hi = _mm512_add_pd(mode == UK_FIRST ? _mm512_setzero_pd() : _mm512_loadu_pd(d + 8), hi);
  if (mode != UK_LAST) { _mm512_storeu_pd(d, lo); _mm512_storeu_pd(d + 8, hi); return; }
  __m256 fl = _mm512_cvtpd_ps(lo), fh = _mm512_cvtpd_ps(hi);
  _mm512_mask_storeu_ps(c, m, _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(fl)),
                                                                 _mm256_castps_pd(fh), 1)));
}

__attribute__((target("avx2,fma"))) static inline void ep_avx2(__m256 v, int mode, double *d, float *c, int nv) {
  __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(nv), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  if (mode == UK_STORE) { _mm256_maskstore_ps(c, m, _mm256_add_ps(_mm256_setzero_ps(), v)); return; }
  __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
  lo = _mm256_add_pd(mode == UK_FIRST ? _mm256_setzero_pd() : _mm256_loadu_pd(d), lo);
  hi = _mm256_add_pd(mode == UK_FIRST ? _mm256_setzero_pd() : _mm256_loadu_pd(d + 4), hi);
  if (mode != UK_LAST) { _mm256_storeu_pd(d, lo); _mm256_storeu_pd(d + 4, hi); return; }
  _mm256_maskstore_ps(c, m, _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)));
}

/* One micro-kernel run over a k block of kc: a is the tile's first row of
** A at the block (row stride lda floats), b the panel's packed B at the
** block; rows [r0, r1) and columns [0, nc) of the sums go to dt (row stride
** 2W) / C (row stride ldc) by mode.  Meanwhile prefetches npf lines from pf
** into L2.  Row r is read at p + r * lda through two bases (p, q = p + lda)
** and three strides (L = lda, T = 3 lda, F = 5 lda bytes-scaled) -- x86's
** base + index * 1/2/4/8 -- so 14 rows take 7 registers, not 14.  The
** accumulators are named variables (GCC keeps an array indexed in a loop
** in memory once the tile is this tall).  UK_* name the ISA's vector
** type, intrinsics, width W and epilogue for each instance below. */
#define UK_ROWS14(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
#define UK_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define UK_ROWS4(X) X(0) X(1) X(2) X(3)
#define UK_AT(base, idx, s) (*(const float *)((const char *)(base) + (idx) * (s)))
#define UK_A0 (*p)
#define UK_A1 (*q)
#define UK_A2 UK_AT(p, L, 2)
#define UK_A3 UK_AT(p, T, 1)
#define UK_A4 UK_AT(p, L, 4)
#define UK_A5 UK_AT(p, F, 1)
#define UK_A6 UK_AT(p, T, 2)
#define UK_A7 UK_AT(q, T, 2)
#define UK_A8 UK_AT(p, L, 8)
#define UK_A9 UK_AT(q, L, 8)
#define UK_A10 UK_AT(p, F, 2)
#define UK_A11 UK_AT(q, F, 2)
#define UK_A12 UK_AT(p, T, 4)
#define UK_A13 UK_AT(q, T, 4)
#define UK_DECL_(r) UK_VEC c##r##0 = UK_ZERO(), c##r##1 = UK_ZERO();
#define UK_STEP_(r) av = UK_SET1(UK_A##r); c##r##0 = UK_FMA(av, b0, c##r##0); c##r##1 = UK_FMA(av, b1, c##r##1);
#define UK_OUT_(r) o[r][0] = c##r##0; o[r][1] = c##r##1;
#define UK_EP_(r) UK_EPF(c##r##0, mode, dt + r * 2 * UK_W, c + r * ldc, UK_W); \
                  UK_EPF(c##r##1, mode, dt + r * 2 * UK_W + UK_W, c + r * ldc + UK_W, UK_W);
#define UKERNEL(NAME, TGT, MR, ROWS) \
  __attribute__((target(TGT))) static void NAME(const float *a, int64_t lda, const float *b, int64_t kc, int r0, int r1, int nc, \
                                                int mode, double *dt, float *c, int64_t ldc, const char *pf, int64_t npf) { \
    ROWS(UK_DECL_) \
    int64_t L = lda * (int64_t)sizeof(float), T = 3 * L, F = 5 * L; \
    (void)F;   /* unused by a short tile */ \
    const float *p = a, *q = a + lda; \
    for (int64_t k = 0; k < kc; k++, p++, q++, b += 2 * UK_W) { \
      if (k < npf) _mm_prefetch(pf + 64 * k, _MM_HINT_T1); \
      UK_VEC b0 = UK_LOAD(b), b1 = UK_LOAD(b + UK_W), av; \
      ROWS(UK_STEP_) \
    } \
    if (r0 == 0 && r1 == MR && nc == 2 * UK_W) {   /* a whole tile: straight from the registers */ \
      ROWS(UK_EP_) \
      return; \
    } \
    UK_VEC o[MR][2]; \
    ROWS(UK_OUT_) \
    for (int r = r0; r < r1; r++) { \
      UK_EPF(o[r][0], mode, dt + r * 2 * UK_W, c + r * ldc, nc); \
      UK_EPF(o[r][1], mode, dt + r * 2 * UK_W + UK_W, c + r * ldc + UK_W, nc - UK_W); \
    } \
  }
#define UK_VEC __m512
#define UK_ZERO _mm512_setzero_ps
#define UK_LOAD _mm512_loadu_ps
#define UK_SET1 _mm512_set1_ps
#define UK_FMA _mm512_fmadd_ps
#define UK_W 16
#define UK_EPF ep_avx512
UKERNEL(uk_avx512, "avx512f", 14, UK_ROWS14)
UKERNEL(uk_avx512_4, "avx512f", 4, UK_ROWS4)   /* A of fewer rows than 14 */
#undef UK_VEC
#undef UK_ZERO
#undef UK_LOAD
#undef UK_SET1
#undef UK_FMA
#undef UK_W
#undef UK_EPF
#define UK_VEC __m256
#define UK_ZERO _mm256_setzero_ps
#define UK_LOAD _mm256_loadu_ps
#define UK_SET1 _mm256_set1_ps
#define UK_FMA _mm256_fmadd_ps
#define UK_W 8
#define UK_EPF ep_avx2
UKERNEL(uk_avx2, "avx2,fma", 6, UK_ROWS6)

/* Rows [0, mr) of a (row stride lda), k's [0, kl), copied to d (row stride
** ldd), rows mr..MR-1 zero. */
static void copy_rows(const float *a, int64_t lda, int mr, int MR, int64_t kl, float *d, int64_t ldd) {
  for (int r = 0; r < MR; r++, a += lda, d += ldd)
    if (r < mr) memcpy(d, a, (size_t)kl * sizeof(float));
    else memset(d, 0, (size_t)kl * sizeof(float));
}

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

#define MM_GROUP_MAX 8      /* row tiles per group */

/* The state of one group's run (run_group). */
typedef struct sg_run {
  const sg_job *j;
  float *cp;            /* M < mr: A's rows, zero rows below */
  double *dt;           /* the tiles' accumulators */
  int64_t g0, ks, nblk; /* the group's first tile, the segment's first k, k blocks in K */
  const char *pf;       /* the next group's rows, lines of them to prefetch, per kernel run, done */
  int64_t lines, q, done;
} sg_run;

/* The kernel over tile t, panel p, k block blk. */
static inline void run_tile(sg_run *u, int64_t t, int64_t p, int64_t blk) {
  const sg_job *j = u->j;
  int64_t k0 = blk * j->kb, kc = j->K - k0 < j->kb ? j->K - k0 : j->kb;
  int mode = u->nblk == 1 ? UK_STORE : blk == 0 ? UK_FIRST : blk == u->nblk - 1 ? UK_LAST : UK_ADD;
  /* a short last tile runs as the tile ending at row M, storing only its own rows
  ** (the rows above are the tile before's); fewer rows than a tile are copied */
  int64_t i = t * j->mr, npf = u->lines - u->done < u->q ? u->lines - u->done : u->q;
  int r0 = 0, r1 = (int)j->mr;
  if (j->M < j->mr) r1 = (int)j->M, i = -1;
  else if (i + j->mr > j->M) r0 = (int)(i + j->mr - j->M), i = j->M - j->mr;
  int nc = (int)(j->N - p * j->nr < j->nr ? j->N - p * j->nr : j->nr);
  const float *a = i < 0 ? u->cp + (k0 - u->ks) : j->A + i * j->K + k0, *b = j->bp + (p * j->K + k0) * j->nr;
  int64_t lda = i < 0 ? j->lds : j->K;
  if (j->M == 1) a = j->A + k0, lda = 0;   /* one row: every row of the tile reads it */
  double *d = u->dt + ((t - u->g0) * j->dpanels + (j->dpanels > 1 ? p : 0)) * j->mr * j->nr;
  float *c = j->C + (i < 0 ? 0 : i) * j->N + p * j->nr;
  const char *pf = u->pf + 64 * u->done;
  if (j->isa == 2 && j->mr == 14) uk_avx512(a, lda, b, kc, r0, r1, nc, mode, d, c, j->N, pf, npf);
  else if (j->isa == 2) uk_avx512_4(a, lda, b, kc, r0, r1, nc, mode, d, c, j->N, pf, npf);
  else uk_avx2(a, lda, b, kc, r0, r1, nc, mode, d, c, j->N, pf, npf);
  u->done += npf;
}

/* Group g's tiles of C (see the top), with slot s's scratch; meanwhile the
** rows of group next (if any) are prefetched into L2. */
static void run_group(sg_job *j, int s, int64_t g, int64_t next) {
  sg_run u = { .j = j, .cp = (float *)(j->scr + (size_t)s * j->slot),
               .dt = (double *)(j->scr + (size_t)s * j->slot + j->cbytes) };
  int64_t tiles = (j->M + j->mr - 1) / j->mr, g1;
  u.g0 = g * j->group, g1 = u.g0 + j->group < tiles ? u.g0 + j->group : tiles;
  u.nblk = (j->K + j->kb - 1) / j->kb;
  /* the next group's rows of A, one contiguous range, a few lines per kernel run */
  int64_t pr0 = next * j->group * j->mr < j->M ? next * j->group * j->mr : j->M;
  int64_t pr1 = pr0 + j->group * j->mr < j->M ? pr0 + j->group * j->mr : j->M;
  int64_t runs = j->panels * u.nblk * (g1 - u.g0);
  u.pf = (const char *)(j->A + pr0 * j->K);
  u.lines = j->kseg < j->K ? 0 : ((pr1 - pr0) * j->K * (int64_t)sizeof(float) + 63) / 64;
  u.q = (u.lines + runs - 1) / runs;
  for (u.ks = 0; u.ks < j->K; u.ks += j->kseg) {
    int64_t kl = j->K - u.ks < j->kseg ? j->K - u.ks : j->kseg, b0 = u.ks / j->kb, b1 = (u.ks + kl + j->kb - 1) / j->kb;
    if (j->M > 1 && j->M < j->mr) copy_rows(j->A + u.ks, j->K, (int)j->M, (int)j->mr, kl, u.cp, j->lds);
    if (u.nblk == 1)   /* one block (K <= kb: writing C is most of the work): a tile's rows of C at a time */
      for (int64_t t = u.g0; t < g1; t++)
        for (int64_t p = 0; p < j->panels; p++) run_tile(&u, t, p, 0);
    else               /* the block of B in L1 while the group's tiles run over it */
      for (int64_t p = 0; p < j->panels; p++)
        for (int64_t blk = b0; blk < b1; blk++)
          for (int64_t t = u.g0; t < g1; t++) run_tile(&u, t, p, blk);
  }
}

/* Worker w: claims groups one ahead (so it knows whose rows to prefetch)
** until none are left, with slot w; the caller's thread passes on an
** interrupt (only it sees the flag) and every worker stops between groups. */
static void rows_worker(void *ctx, int64_t w, int64_t w1) {
  sg_job *j = ctx;
  int64_t groups = ((j->M + j->mr - 1) / j->mr + j->group - 1) / j->group;
  int64_t g = atomic_fetch_add(&j->next, 1);
  while (g < groups) {
    if (host_stopped()) atomic_store(&j->stop, 1);
    if (atomic_load(&j->stop)) break;
    int64_t next = atomic_fetch_add(&j->next, 1);
    run_group(j, (int)w, g, next < groups ? next : groups);
    g = next;
  }
}

/* C = A v (N == 1, AVX-512): the lanes are 16 rows of A.  A 16 x 16 block
** of A transposed in registers gives A[i..i+16, k] for 16 k's, and each
** lane runs the same per-element sequence as the kernel: acc = fma(a, v[k],
** acc) from 0 over each block of kb (a multiple of 16) k's, then C = 0 +
** acc, or the blocks' sums added in double.  Row blocks [b0, b1). */
__attribute__((target("avx512f"))) static void mv_chunk(void *ctx, int64_t b0, int64_t b1) {
  sg_job *j = ctx;
  int64_t nblk = (j->K + j->kb - 1) / j->kb;
  for (int64_t ib = b0; ib < b1; ib++) {
    int64_t i = ib * 16;
    int nr = (int)(j->M - i < 16 ? j->M - i : 16);
    __mmask16 rm = (__mmask16)((1u << nr) - 1);
    __m512 acc = _mm512_setzero_ps();
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (int64_t k0 = 0; k0 < j->K; k0 += 16) {
      int kn = (int)(j->K - k0 < 16 ? j->K - k0 : 16);
      __mmask16 km = (__mmask16)((1u << kn) - 1);
      __m512 x[16], y[16];
      for (int r = 0; r < 16; r++) x[r] = r < nr ? _mm512_maskz_loadu_ps(km, j->A + (i + r) * j->K + k0) : _mm512_setzero_ps();
      for (int r = 0; r < 16; r += 2) {   /* the transpose: pairs of rows, 32-bit interleave */
        y[r] = _mm512_unpacklo_ps(x[r], x[r + 1]);
        y[r + 1] = _mm512_unpackhi_ps(x[r], x[r + 1]);
      }
      for (int r = 0; r < 16; r += 4) {   /* 64-bit interleave: x[r + m] holds k = m, m+4, m+8, m+12 of rows r..r+3 */
        x[r] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(y[r]), _mm512_castps_pd(y[r + 2])));
        x[r + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(y[r]), _mm512_castps_pd(y[r + 2])));
        x[r + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(y[r + 1]), _mm512_castps_pd(y[r + 3])));
        x[r + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(y[r + 1]), _mm512_castps_pd(y[r + 3])));
      }
      for (int h = 0; h < 16; h += 8)     /* 128-bit lanes: y[h + m] holds k = m, m+8 of rows h..h+7 */
        for (int m = 0; m < 4; m++) {
          y[h + m] = _mm512_shuffle_f32x4(x[h + m], x[h + m + 4], 0x88);
          y[h + m + 4] = _mm512_shuffle_f32x4(x[h + m], x[h + m + 4], 0xdd);
        }
      for (int m = 0; m < 8; m++) {       /* column k = m and m + 8 of the 16 rows */
        x[m] = _mm512_shuffle_f32x4(y[m], y[m + 8], 0x88);
        x[m + 8] = _mm512_shuffle_f32x4(y[m], y[m + 8], 0xdd);
      }
      for (int kk = 0; kk < kn; kk++) acc = _mm512_fmadd_ps(x[kk], _mm512_set1_ps(j->B[k0 + kk]), acc);
      if ((k0 + kn) % j->kb && k0 + kn < j->K) continue;
      if (nblk == 1) { _mm512_mask_storeu_ps(j->C + i, rm, _mm512_add_ps(_mm512_setzero_ps(), acc)); break; }
      s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(acc)));
      s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1))));
      acc = _mm512_setzero_ps();
    }
    if (nblk > 1)
      _mm512_mask_storeu_ps(j->C + i, rm, _mm512_castpd_ps(_mm512_insertf64x4(
          _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(s0))), _mm256_castps_pd(_mm512_cvtpd_ps(s1)), 1)));
  }
}

/* C = a B (M == 1, AVX-512): the lanes are columns of B, read in place (no
** packing); 8 vectors of columns at a time, each lane the kernel's
** per-element sequence.  Blocks [c0, c1) of 128 columns. */
__attribute__((target("avx512f"))) static void vm_chunk(void *ctx, int64_t c0, int64_t c1) {
  sg_job *j = ctx;
  int64_t nblk = (j->K + j->kb - 1) / j->kb;
  for (int64_t cb = c0; cb < c1; cb++) {
    __m512 acc[8];
    __m512d s[8][2];
    __mmask16 m[8];
    for (int v = 0; v < 8; v++) {
      int64_t nv = j->N - cb * 128 - v * 16;
      m[v] = nv >= 16 ? 0xffff : nv > 0 ? (__mmask16)((1u << nv) - 1) : 0;
      acc[v] = _mm512_setzero_ps();
      s[v][0] = s[v][1] = _mm512_setzero_pd();
    }
    const float *b = j->B + cb * 128;
    for (int64_t k = 0; k < j->K; k++, b += j->N) {
      __m512 ak = _mm512_set1_ps(j->A[k]);
      for (int v = 0; v < 8; v++) acc[v] = _mm512_fmadd_ps(ak, _mm512_maskz_loadu_ps(m[v], b + v * 16), acc[v]);
      if ((k + 1) % j->kb && k + 1 < j->K) continue;
      for (int v = 0; v < 8; v++) {
        float *c = j->C + cb * 128 + v * 16;
        if (nblk == 1) { _mm512_mask_storeu_ps(c, m[v], _mm512_add_ps(_mm512_setzero_ps(), acc[v])); continue; }
        s[v][0] = _mm512_add_pd(s[v][0], _mm512_cvtps_pd(_mm512_castps512_ps256(acc[v])));
        s[v][1] = _mm512_add_pd(s[v][1], _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[v]), 1))));
        acc[v] = _mm512_setzero_ps();
        if (k + 1 == j->K)
          _mm512_mask_storeu_ps(c, m[v], _mm512_castpd_ps(_mm512_insertf64x4(
              _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(s[v][0]))), _mm256_castps_pd(_mm512_cvtpd_ps(s[v][1])), 1)));
      }
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
  if (!isa || M <= 0 || N <= 0 || K <= 0 || kb <= 0) return 0;
  sg_job j = { .A = A, .B = B, .C = C, .M = M, .N = N, .K = K, .kb = kb, .isa = isa };
  if (N == 1 && isa == 2 && kb % 16 == 0) {   /* a matrix times a vector: ~4 M multiply-adds a task */
    int64_t blocks = (M + 15) / 16, per = 16 * K;
    par_for(blocks, per >= ((int64_t)1 << 22) ? 1 : ((int64_t)1 << 22) / per, mv_chunk, &j);
    return 1;
  }
  if (M == 1 && isa == 2) {   /* a vector times a matrix */
    int64_t blocks = (N + 127) / 128, per = 128 * K;
    par_for(blocks, per >= ((int64_t)1 << 22) ? 1 : ((int64_t)1 << 22) / per, vm_chunk, &j);
    return 1;
  }
  j.nr = isa == 2 ? 32 : 16;
  j.mr = isa == 2 ? (M < 14 ? 4 : 14) : 6;
  j.panels = (N + j.nr - 1) / j.nr;
  /* a group's rows of A in l2 bytes (measured: 256 KB beat 512 KB and 1 MB by ~5% on a 2 MB L2, which
  ** also holds the next group's rows and the panels of B): whole K for up to MM_GROUP_MAX tiles, else
  ** one tile and K in segments */
  int64_t l2 = isa == 2 ? (int64_t)1 << 18 : (int64_t)3 << 16, tile = j.mr * K * (int64_t)sizeof(float);
  int64_t tiles = (M + j.mr - 1) / j.mr;
  j.group = l2 / tile < 1 ? 1 : l2 / tile > MM_GROUP_MAX ? MM_GROUP_MAX : l2 / tile;
  if (j.group > tiles) j.group = tiles;
  j.kseg = tile <= l2 ? K : (l2 / (j.mr * (int64_t)sizeof(float))) / kb * kb;
  if (j.kseg < kb) j.kseg = kb;
  if (j.kseg > K) j.kseg = K;
  j.dpanels = j.kseg < K ? j.panels : 1;
  /* M < mr: the rows copied, stride kseg rounded up to a line */
  j.lds = (j.kseg + 15) / 16 * 16;
  j.cbytes = (size_t)(M > 1 && M < j.mr ? j.mr * j.lds : 0) * sizeof(float);
  j.slot = j.cbytes + (size_t)(j.group * j.dpanels * j.mr * j.nr) * sizeof(double);
  /* a worker per thread, at most one per group */
  int64_t groups = (tiles + j.group - 1) / j.group, workers = groups < par_threads() ? groups : par_threads();
  size_t bpn = (size_t)(j.panels * K * j.nr) * sizeof(float), scn = j.slot * (size_t)workers;
  j.bp = alloc(bpn);
  j.scr = j.bp ? alloc(scn) : NULL;
  if (!j.scr) {
    if (j.bp) release(j.bp, bpn);
    return 0;
  }
  par_for(j.panels, 1, pack_chunk, &j);
  par_for(workers, 1, rows_worker, &j);
  release(j.scr, scn);
  release(j.bp, bpn);
  return 1;
}

#else
int cpu_sgemm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K, int64_t kb,
              void *(*alloc)(size_t), void (*release)(void *, size_t)) {
  return 0;
}
#endif
