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
** largest.  Sorting is a stable LSD radix sort of (key, index) pairs, 8 bits
** a pass, a pass skipped when every key has the same digit there (so 4-byte
** types cost at most 4 passes); segments of up to 32 elements use insertion
** sort.  Values are copied from the input through the sorted indices, so a
** -0.0 or a NaN's payload comes out as it went in.  Segments run in parallel
** (par_for); one long segment runs on one thread.
*/
#include <stdlib.h>
#include <string.h>
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

static void sort_segments(void *ctx, int64_t b, int64_t e) {
  sort_job *j = ctx;
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
