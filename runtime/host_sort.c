/*
** runtime/host_sort.c -- the sort family on the host: sort, argsort, topk,
** argtopk along segments, unique's run mask, searchsorted.
**
** Every comparison goes through an order-preserving unsigned key (the same
** keys kernels/gk_sort.cuh sorts on): floats flip their sign bit (negative
** numbers all bits), -0.0 counts as +0.0 and every NaN as one value above
** +inf, so the order is numpy's (NaN last, -0.0 == 0.0, stable ties);
** integers flip the sign bit; bool is 0 / 1.  topk sorts the complement of
** the key ascending, which is descending with ties by lower index and NaN
** largest.  argsort, topk and argtopk sort (key, index) pairs by a stable
** LSD radix sort, 8 bits a pass, a pass skipped when every key has the same
** digit there (so 4-byte types cost at most 4 passes); segments of up to 32
** elements use insertion sort.  Values are copied from the input through the
** sorted indices, so a -0.0 or a NaN's payload comes out as it went in.
** sort of a 4- or 8-byte type sorts the keys alone and turns them back into
** values, rewriting the zeros and NaNs from the input in order (see "value
** sort" below: the same bits).  Segments run in parallel (par_for); the
** value sort also runs one long segment's passes in parallel.
*/
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "runtime/host.h"
#include "runtime/plan.h"

#define SORT_SMALL 32        /* segments this short: insertion sort */
#define TOPK_SELECT 16       /* k up to this on a long segment: one pass keeping the k best */

uint64_t host_sort_key(gk_dtype t, const void *p) {
  switch (t) {
  case GK_F32: {
    float f; uint32_t u;
    memcpy(&f, p, 4);
    if (f != f) return 0xFFFFFFFFu;
    if (f == 0) f = 0;   /* -0.0 is +0.0 */
    memcpy(&u, &f, 4);
    return (u >> 31) ? (uint32_t)~u : (u | 0x80000000u);
  }
  case GK_F64: {
    double f; uint64_t u;
    memcpy(&f, p, 8);
    if (f != f) return UINT64_MAX;
    if (f == 0) f = 0;
    memcpy(&u, &f, 8);
    return (u >> 63) ? ~u : (u | (1ull << 63));
  }
  case GK_I32: { int32_t v; memcpy(&v, p, 4); return (uint32_t)v ^ 0x80000000u; }
  case GK_I64: { int64_t v; memcpy(&v, p, 8); return (uint64_t)v ^ (1ull << 63); }
  default: return *(const uint8_t *)p != 0;
  }
}

typedef struct sort_job {
  gk_dtype t;
  const char *x;
  char *out;
  int64_t R, C;     /* the matrix (whole array: 1 x n) */
  int cols;         /* segments are columns */
  int op;           /* 0 sort, 1 argsort, 2 topk, 3 argtopk */
  int64_t k;        /* topk's count (else the segment length) */
  int failed;
} sort_job;

/* Stable LSD radix sort of (key[i], idx[i]), i < n; kt, it scratch of n. */
static int radix_pairs(uint64_t *key, int64_t *idx, uint64_t *kt, int64_t *it, int64_t n) {
  static const int D = 8;
  int64_t (*hist)[256] = calloc((size_t)D, sizeof *hist);
  if (!hist) return -1;
  for (int64_t i = 0; i < n; i++)
    for (int d = 0; d < D; d++) hist[d][(key[i] >> (8 * d)) & 255]++;
  uint64_t *ks = key, *kd = kt;
  int64_t *is = idx, *id = it;
  for (int d = 0; d < D; d++) {
    int trivial = 0;
    for (int b = 0; b < 256; b++) if (hist[d][b] == n) trivial = 1;
    if (trivial) continue;
    int64_t off = 0;
    for (int b = 0; b < 256; b++) { int64_t c = hist[d][b]; hist[d][b] = off; off += c; }
    for (int64_t i = 0; i < n; i++) {
      int64_t p = hist[d][(ks[i] >> (8 * d)) & 255]++;
      kd[p] = ks[i]; id[p] = is[i];
    }
    uint64_t *tk = ks; ks = kd; kd = tk;
    int64_t *ti = is; is = id; id = ti;
  }
  if (ks != key) { memcpy(key, ks, (size_t)n * sizeof *key); memcpy(idx, is, (size_t)n * sizeof *idx); }
  free(hist);
  return 0;
}

static void insertion_pairs(uint64_t *key, int64_t *idx, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    uint64_t k = key[i]; int64_t v = idx[i], j = i;
    while (j > 0 && key[j - 1] > k) { key[j] = key[j - 1]; idx[j] = idx[j - 1]; j--; }
    key[j] = k; idx[j] = v;
  }
}

/* ------------------------------------------------------------ value sort */

/* sort (op 0) of a 4- or 8-byte type needs no index: the keys are sorted in
** place of the values and turned back into values.  The key is one-to-one
** but for the two cases host_sort_key makes equal: -0.0 and +0.0 (one key),
** and every NaN (one key).  A stable sort keeps those in input order, so a
** run holding a -0.0 (the zeros, after the negatives) or a NaN (the tail) is
** rewritten from the input in order afterwards: the same bits as copying
** through the stable index.  The keys sort by LSD radix passes over the bits
** that vary (the highest bit where any key differs from the first; a digit
** of at most 11 bits, 8 for segments under 2^16 elements, so i64 values in
** [0, 1000) take one pass and uniform floats three); a long segment runs
** each pass over fixed chunks in parallel (a histogram per chunk, then each
** chunk scatters from its own offsets): a stable sort has one result, so
** neither the chunking nor the thread count can change a bit. */
#define VS_CHUNK ((int64_t)1 << 17)   /* elements per chunk of a long segment's parallel pass */
#define VS_MAXCH 64                   /* chunks at most */

typedef struct vs_plan { int np, w; } vs_plan;   /* passes, digit width */

static vs_plan vs_digits(uint64_t diff, int64_t n) {
  int bits = diff ? 64 - __builtin_clzll(diff) : 0, maxd = n >= 4096 ? 11 : 8;
  vs_plan p = { (bits + maxd - 1) / maxd, 0 };
  if (p.np) p.w = (bits + p.np - 1) / p.np;
  return p;
}

/* One pass of a long segment: chunk c of src (VS_CHUNK keys) counts its
** digits into h[c], then scatters from off[c] (the keys of smaller digits,
** and of its digit in earlier chunks). */
typedef struct rdx_job { const void *src; void *dst; int64_t n, cs, nb; int sh, wide; int64_t *h; } rdx_job;

/* Keys per chunk of a long segment's passes: by n alone. */
static int64_t vs_chunk(int64_t n) {
  int64_t cs = (n + VS_MAXCH - 1) / VS_MAXCH;
  return cs > VS_CHUNK ? cs : VS_CHUNK;
}

/* Counts vs_radix needs in h for n keys. */
static int64_t vs_hcount(int64_t n) {
  int64_t nch = (n + vs_chunk(n) - 1) / vs_chunk(n);
  return (nch > 8 ? nch : 8) << 11;
}

#define RDX_RANGE(KT, BODY) do { \
    const KT *s_ = (const KT *)j->src; KT *d_ = (KT *)j->dst; KT mask_ = (KT)(j->nb - 1); (void)d_; \
    for (int64_t c = b; c < e; c++) { \
      int64_t *h_ = j->h + c * j->nb, i0_ = c * j->cs, i1_ = i0_ + j->cs < j->n ? i0_ + j->cs : j->n; \
      BODY \
    } } while (0)
static void rdx_hist(void *ctx, int64_t b, int64_t e) {
  rdx_job *j = ctx;
#define HIST { int sh_ = j->sh; memset(h_, 0, sizeof *h_ * (size_t)j->nb); \
    for (int64_t i = i0_; i < i1_; i++) h_[(s_[i] >> sh_) & mask_]++; }
  if (j->wide) RDX_RANGE(uint64_t, HIST); else RDX_RANGE(uint32_t, HIST);
#undef HIST
}
static void rdx_scatter(void *ctx, int64_t b, int64_t e) {
  rdx_job *j = ctx;
#define SCAT { int sh_ = j->sh; for (int64_t i = i0_; i < i1_; i++) { d_[h_[(s_[i] >> sh_) & mask_]++] = s_[i]; } }
  if (j->wide) RDX_RANGE(uint64_t, SCAT); else RDX_RANGE(uint32_t, SCAT);
#undef SCAT
}
#undef RDX_RANGE

/* Sorts keys a[0..n) (8 bytes each when wide, else 4) by plan pl, t scratch
** of n; h holds vs_hcount(n) counts.  Returns where the
** sorted keys are (a or t). */
static void *vs_radix(void *a, void *t, int64_t n, int wide, vs_plan pl, int64_t *h) {
  int64_t nb = (int64_t)1 << pl.w, cs = vs_chunk(n), nch = (n + cs - 1) / cs;
  if (nch > 1) {
    for (int p = 0; p < pl.np; p++) {
      rdx_job j = { a, t, n, cs, nb, p * pl.w, wide, h };
      par_for(nch, 1, rdx_hist, &j);
      int64_t off = 0;
      for (int64_t d = 0; d < nb; d++)
        for (int64_t c = 0; c < nch; c++) { int64_t k = h[c * nb + d]; h[c * nb + d] = off; off += k; }
      par_for(nch, 1, rdx_scatter, &j);
      void *s = a; a = t; t = s;
    }
    return a;
  }
  /* one chunk, in cache: each pass counts, then scatters */
#define SERIAL(KT) do { \
    KT *s = a, *d = t, mask = (KT)(nb - 1); \
    for (int p = 0; p < pl.np; p++) { \
      int64_t *hp = h, off = 0; int sh = p * pl.w; \
      memset(hp, 0, sizeof *hp * (size_t)nb); \
      for (int64_t i = 0; i < n; i++) hp[(s[i] >> sh) & mask]++; \
      for (int64_t q = 0; q < nb; q++) { int64_t k = hp[q]; hp[q] = off; off += k; } \
      for (int64_t i = 0; i < n; i++) { KT k = s[i]; d[hp[(k >> sh) & mask]++] = k; } \
      KT *w = s; s = d; d = w; \
    } \
    a = s; } while (0)
  if (wide) SERIAL(uint64_t); else SERIAL(uint32_t);
#undef SERIAL
  return a;
}

/* What a segment's key pass saw: the keys' differing bits, the count of
** keys below zero's, of zeros, of NaNs, and whether a -0.0 was among them. */
typedef struct vs_stat { uint64_t diff; int64_t neg, zero, nan; int negzero; } vs_stat;

/* Keys of len values at x (stride elements apart) into k; returns the stat. */
static vs_stat vs_keys(gk_dtype t, const char *x, int64_t len, int64_t stride, void *k) {
  vs_stat st = { 0, 0, 0, 0, 0 };
  switch (t) {
  case GK_F32: {
    const uint32_t *v = (const uint32_t *)(const void *)x; uint32_t *o = k, d = 0, k0 = 0;
    int64_t neg = 0, zero = 0, nan = 0, nz = 0;
    for (int64_t i = 0; i < len; i++) {
      uint32_t u = v[i * stride], a = u & 0x7FFFFFFFu;
      uint32_t kk = a > 0x7F800000u ? 0xFFFFFFFFu : a == 0 ? 0x80000000u : (u >> 31) ? ~u : u | 0x80000000u;
      if (i == 0) k0 = kk;
      o[i] = kk; d |= kk ^ k0;
      nan += a > 0x7F800000u; zero += a == 0; nz += u == 0x80000000u; neg += kk < 0x80000000u;
    }
    st = (vs_stat){ d, neg, zero, nan, nz > 0 };
    break;
  }
  case GK_F64: {
    const uint64_t *v = (const uint64_t *)(const void *)x; uint64_t *o = k, d = 0, k0 = 0;
    const uint64_t S = 1ull << 63, I = 0x7FF0000000000000ull;
    int64_t neg = 0, zero = 0, nan = 0, nz = 0;
    for (int64_t i = 0; i < len; i++) {
      uint64_t u = v[i * stride], a = u & ~S;
      uint64_t kk = a > I ? UINT64_MAX : a == 0 ? S : (u >> 63) ? ~u : u | S;
      if (i == 0) k0 = kk;
      o[i] = kk; d |= kk ^ k0;
      nan += a > I; zero += a == 0; nz += u == S; neg += kk < S;
    }
    st = (vs_stat){ d, neg, zero, nan, nz > 0 };
    break;
  }
  case GK_I32: {
    const uint32_t *v = (const uint32_t *)(const void *)x; uint32_t *o = k, d = 0, k0 = len ? v[0] ^ 0x80000000u : 0;
    for (int64_t i = 0; i < len; i++) { uint32_t kk = v[i * stride] ^ 0x80000000u; o[i] = kk; d |= kk ^ k0; }
    st.diff = d;
    break;
  }
  default: {   /* GK_I64 */
    const uint64_t *v = (const uint64_t *)(const void *)x; uint64_t *o = k, d = 0, k0 = len ? v[0] ^ (1ull << 63) : 0;
    for (int64_t i = 0; i < len; i++) { uint64_t kk = v[i * stride] ^ (1ull << 63); o[i] = kk; d |= kk ^ k0; }
    st.diff = d;
    break;
  }
  }
  return st;
}

/* The values of len sorted keys k into out (ostride elements apart). */
static void vs_tovalues(gk_dtype t, const void *k, int64_t len, char *out, int64_t ostride) {
  switch (t) {
  case GK_F32: {
    const uint32_t *s = k; uint32_t *o = (uint32_t *)(void *)out;
    for (int64_t i = 0; i < len; i++) { uint32_t kk = s[i]; o[i * ostride] = (kk >> 31) ? kk & 0x7FFFFFFFu : ~kk; }
    break;
  }
  case GK_F64: {
    const uint64_t *s = k; uint64_t *o = (uint64_t *)(void *)out;
    for (int64_t i = 0; i < len; i++) { uint64_t kk = s[i]; o[i * ostride] = (kk >> 63) ? kk & ~(1ull << 63) : ~kk; }
    break;
  }
  case GK_I32: {
    const uint32_t *s = k; uint32_t *o = (uint32_t *)(void *)out;
    for (int64_t i = 0; i < len; i++) o[i * ostride] = s[i] ^ 0x80000000u;
    break;
  }
  default: {
    const uint64_t *s = k; uint64_t *o = (uint64_t *)(void *)out;
    for (int64_t i = 0; i < len; i++) o[i * ostride] = s[i] ^ (1ull << 63);
    break;
  }
  }
}

/* The zero run (when a -0.0 was there) and the NaN tail of the sorted
** floats out rewritten from the input x (stride apart) in order. */
static void vs_fixup(gk_dtype t, int64_t len, const vs_stat *st, const char *x, int64_t stride, char *out, int64_t ostride) {
  int64_t z = st->neg, q = len - st->nan;
  if (!st->negzero && !st->nan) return;
  if (t == GK_F32) {
    const uint32_t *v = (const uint32_t *)(const void *)x; uint32_t *o = (uint32_t *)(void *)out;
    for (int64_t i = 0; i < len; i++) {
      uint32_t u = v[i * stride], a = u & 0x7FFFFFFFu;
      if (a == 0 && st->negzero) o[(z++) * ostride] = u;
      else if (a > 0x7F800000u) o[(q++) * ostride] = u;
    }
  } else if (t == GK_F64) {
    const uint64_t *v = (const uint64_t *)(const void *)x; uint64_t *o = (uint64_t *)(void *)out;
    for (int64_t i = 0; i < len; i++) {
      uint64_t u = v[i * stride], a = u & ~(1ull << 63);
      if (a == 0 && st->negzero) o[(z++) * ostride] = u;
      else if (a > 0x7FF0000000000000ull) o[(q++) * ostride] = u;
    }
  }
}

/* A long segment: one pass on the top digit (up to 11 bits) of the bits
** that vary scatters the keys stably into buckets (parallel over fixed
** chunks, as vs_radix's passes); then each bucket -- the keys sharing that
** digit, a few thousand for spread data -- is sorted by vs_radix over the
** bits below it while it is in cache and turned into values at its place in
** out, buckets in parallel (a bucket still long is split the same way).  Memory is crossed about three times, where
** LSD passes over the whole segment cross it twice per digit. */
typedef struct msd_job {
  gk_dtype t;
  char *k, *tmp, *out;   /* the keys' first buffer, the scattered keys, the output */
  int64_t ostride;
  int shift;             /* bits below the bucket digit */
  const int64_t *start;  /* bucket d is [start[d], start[d + 1]) */
  int failed;
} msd_job;

static int vs_msd(gk_dtype t, char *k, char *tmp, int64_t n, int bits, char *out, int64_t ostride);

static void msd_buckets(void *ctx, int64_t b, int64_t e) {
  msd_job *j = ctx;
  size_t es = rt_dtype_size(j->t);
  int64_t big = 1;
  for (int64_t d = b; d < e; d++) if (j->start[d + 1] - j->start[d] > big) big = j->start[d + 1] - j->start[d];
  int64_t *h = malloc((size_t)vs_hcount(big) * sizeof *h);
  if (!h) { j->failed = 1; return; }
  for (int64_t d = b; d < e; d++) {
    int64_t s = j->start[d], len = j->start[d + 1] - s;
    if (len == 0) continue;
    void *r = j->tmp + (size_t)s * es;
    if (len > VS_CHUNK && j->shift > 11) {   /* a crowded digit (floats: one exponent holds half of [0, 1)): again */
      if (vs_msd(j->t, r, j->k + (size_t)s * es, len, j->shift, j->out + (size_t)(s * j->ostride) * es, j->ostride))
        j->failed = 1;
      continue;
    }
    if (j->shift) r = vs_radix(r, j->k + (size_t)s * es, len, es == 8, vs_digits(((uint64_t)1 << j->shift) - 1, len), h);
    vs_tovalues(j->t, r, len, j->out + (size_t)(s * j->ostride) * es, j->ostride);
  }
  free(h);
}

/* Sorts keys k[0..n), whose bits above bits are all alike, into values at
** out (ostride apart); tmp scratch of n keys (either may be clobbered). */
static int vs_msd(gk_dtype t, char *k, char *tmp, int64_t n, int bits, char *out, int64_t ostride) {
  int wide = rt_dtype_size(t) == 8, w = 1;
  while (w < 11 && w < bits) w++;
  int64_t nb = (int64_t)1 << w, cs = vs_chunk(n), nch = (n + cs - 1) / cs;
  int64_t *h = malloc((size_t)(nch * nb) * sizeof *h), *start = malloc((size_t)(nb + 1) * sizeof *start);
  if (!h || !start) { free(h); free(start); return -1; }
  rdx_job j = { k, tmp, n, cs, nb, bits - w, wide, h };
  par_for(nch, 1, rdx_hist, &j);
  int64_t off = 0;
  for (int64_t d = 0; d < nb; d++) {
    start[d] = off;
    for (int64_t c = 0; c < nch; c++) { int64_t q = h[c * nb + d]; h[c * nb + d] = off; off += q; }
  }
  start[nb] = n;
  par_for(nch, 1, rdx_scatter, &j);
  msd_job m = { t, k, tmp, out, ostride, bits - w, start, 0 };
  par_for(nb, 1, msd_buckets, &m);
  free(h); free(start);
  return m.failed ? -1 : 0;
}

/* Sorts one segment of len values (x, stride apart) into out (ostride
** apart); k and t scratch of len keys, h of vs_hcount(len) counts. */
static int vs_segment(gk_dtype t, const char *x, int64_t len, int64_t stride, char *out, int64_t ostride,
                      void *k, void *tmp, int64_t *h) {
  vs_stat st = vs_keys(t, x, len, stride, k);
  if (len > VS_CHUNK && st.diff) {
    if (vs_msd(t, k, tmp, len, 64 - __builtin_clzll(st.diff), out, ostride)) return -1;
  } else vs_tovalues(t, vs_radix(k, tmp, len, rt_dtype_size(t) == 8, vs_digits(st.diff, len), h), len, out, ostride);
  vs_fixup(t, len, &st, x, stride, out, ostride);
  return 0;
}

/* A long segment's scratch asks for transparent huge pages (as the cpu
** backend's buffers do): a pass scatters to 2^11 places at once, each on
** its own 4 KiB page otherwise (a TLB miss per key). */
static void advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t b = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (bytes >= 2 * huge && e > b) (void)madvise((void *)b, e - b, MADV_HUGEPAGE);   /* advice: failure changes nothing */
#else
  (void)p; (void)bytes;
#endif
}

/* sort of 4- and 8-byte values, segments b..e: vs_segment on each. */
static void sort_value_segments(sort_job *j, int64_t b, int64_t e) {
  int64_t len = j->cols ? j->R : j->C, stride = j->cols ? j->C : 1;
  size_t es = rt_dtype_size(j->t);
  char *k = malloc((size_t)len * 2 * es);
  if (k) advise_huge(k, (size_t)len * 2 * es);
  int64_t *h = malloc((size_t)vs_hcount(len) * sizeof *h);
  if (!k || !h) { free(k); free(h); j->failed = 1; return; }
  for (int64_t s = b; s < e; s++) {
    size_t o = (size_t)(j->cols ? s : s * len) * es;
    if (vs_segment(j->t, j->x + o, len, stride, j->out + o, stride, k, k + (size_t)len * es, h)) { j->failed = 1; break; }
  }
  free(k); free(h);
}

static void sort_segments(void *ctx, int64_t b, int64_t e) {
  sort_job *j = ctx;
  if (j->op == 0 && rt_dtype_size(j->t) >= 4) { sort_value_segments(j, b, e); return; }
  int64_t len = j->cols ? j->R : j->C, stride = j->cols ? j->C : 1;
  int64_t m = j->op >= 2 ? j->k : len;
  size_t es = rt_dtype_size(j->t);
  int top = j->op >= 2, sel = top && j->k <= TOPK_SELECT && len > SORT_SMALL;
  int64_t cap = sel ? j->k + 1 : len;
  uint64_t *key = malloc((size_t)(cap ? cap : 1) * 2 * sizeof *key);
  int64_t *idx = malloc((size_t)(cap ? cap : 1) * 2 * sizeof *idx);
  if (!key || !idx) { free(key); free(idx); j->failed = 1; return; }
  for (int64_t s = b; s < e; s++) {
    const char *base = j->x + (size_t)(j->cols ? s : s * len) * es;
    int64_t n = 0;
    if (sel) {
      /* keep the k best (smallest complemented keys) in order; an element
      ** equal to the k-th comes later, so it ranks after it */
      for (int64_t i = 0; i < len; i++) {
        uint64_t kk = ~host_sort_key(j->t, base + (size_t)(i * stride) * es);
        if (n == j->k && (n == 0 || kk >= key[n - 1])) continue;
        int64_t p = n < j->k ? n++ : n - 1;
        while (p > 0 && key[p - 1] > kk) { key[p] = key[p - 1]; idx[p] = idx[p - 1]; p--; }
        key[p] = kk; idx[p] = i;
      }
    } else {
      for (int64_t i = 0; i < len; i++) {
        uint64_t kk = host_sort_key(j->t, base + (size_t)(i * stride) * es);
        key[i] = top ? ~kk : kk; idx[i] = i;
      }
      if (len <= SORT_SMALL) insertion_pairs(key, idx, len);
      else if (radix_pairs(key, idx, key + len, idx + len, len)) { j->failed = 1; break; }
    }
    for (int64_t q = 0; q < m; q++) {
      int64_t o = j->cols ? q * j->C + s : s * m + q;
      if (j->op & 1) ((int64_t *)j->out)[o] = idx[q];
      else memcpy(j->out + (size_t)o * es, base + (size_t)(idx[q] * stride) * es, es);
    }
  }
  free(key); free(idx);
}

int host_sort(gk_dtype t, const void *x, int64_t R, int64_t C, int cols, int op, int64_t k, void *out) {
  sort_job j = { t, x, out, R, C, cols, op, k, 0 };
  int64_t nseg = cols ? C : R, len = cols ? R : C;
  if (nseg <= 0 || len <= 0) return GK_OK;
  int64_t grain = len >= 65536 ? 1 : 65536 / len;
  par_for(nseg, grain, sort_segments, &j);
  return j.failed ? GK_ENOMEM : GK_OK;
}

void host_runs(gk_dtype t, const void *x, int64_t n, uint8_t *out) {
  size_t es = rt_dtype_size(t);
  const char *p = x;
  for (int64_t i = 0; i < n; i++)
    out[i] = i == 0 || host_sort_key(t, p + (size_t)i * es) != host_sort_key(t, p + (size_t)(i - 1) * es);
}

typedef struct search_job { gk_dtype t; const char *a; int64_t na; const char *v; int64_t *out; } search_job;

static void search_range(void *ctx, int64_t b, int64_t e) {
  search_job *j = ctx;
  size_t es = rt_dtype_size(j->t);
  for (int64_t i = b; i < e; i++) {
    uint64_t kv = host_sort_key(j->t, j->v + (size_t)i * es);
    int64_t lo = 0, hi = j->na;   /* first position whose key is >= kv */
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (host_sort_key(j->t, j->a + (size_t)mid * es) < kv) lo = mid + 1; else hi = mid;
    }
    j->out[i] = lo;
  }
}

void host_searchsorted(gk_dtype t, const void *a, int64_t na, const void *v, int64_t nv, int64_t *out) {
  search_job j = { t, a, na, v, out };
  if (nv > 0) par_for(nv, 16384, search_range, &j);
}
