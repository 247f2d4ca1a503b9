/*
** runtime/cpu.c -- the cpu backend: reference semantics for every op.
**
** It runs the same plan groups as the cuda backend.  A group is executed
** stage by stage: every heavy node (reduce, scan, filter, partition, hist,
** matmul) in the group is computed in dependency order into a value (a
** temporary for the ones the group does not output); elementwise nodes are
** never materialized on their own: they are evaluated chunk by chunk
** (CPU_CHUNK elements at a time) when a heavy node or an output reads them,
** so a fused elementwise chain allocates no full-size temporaries.
**
** Reductions keep one partial per chunk and combine the partials in chunk
** order, so results are bit-identical run to run on any number of threads.
** Float sums and products accumulate in double.
**
** Fast paths, none changing a bit: float folds in vector lanes
** (runtime/cpu_fold.c), a stored array's whole reduction without the
** evaluator (red_group), f32 exp in vector lanes with expf's bits
** (runtime/cpu_exp.c), broadcast and contiguous views read without an index
** per element (view_broadcast, view_range), 2-d views of stored arrays
** copied by tiles, four scan blocks' chains interleaved.  The f32 matrix
** product (runtime/cpu_mm.c, via host_matmul) rounds each multiply-add once
** where the cpu has FMA.  Large buffers are reused (host_release).
*/
#include <math.h>
#include <string.h>
#include <stdio.h>
#include <pthread.h>
#include <sys/mman.h>
#include "runtime/rt.h"
#include "runtime/host.h"
#include "runtime/cuda_lower.h"
#include "runtime/cpu_fold.h"
#include "runtime/cpu_exp.h"
#include "kernels/gk_scalar.h"   /* GK_MONOIDS: identity and combine of sum, prod, max, min, any, all */

#define CPU_CHUNK 2048          /* elements per evaluated chunk: fits L1/L2 with a few operands */
#define CPU_PAR_MIN 32768       /* elements below which a job runs on the calling thread */
#define CPU_MEMO 64             /* initial slots of the (node, index set) memo of a chunk evaluation */
#define CPU_ARENA_BLOCK (256u << 10) /* scratch block size of one evaluation context */

/* ------------------------------------------------------------------ types */

static size_t esz(gk_dtype t) { return rt_dtype_size(t); }

/* An index set: either the contiguous range [start, start+len) or the list
** idx[0..len) of flat indices into a node's elements. */
typedef struct ixset {
  int64_t start, len;
  const int64_t *idx;   /* NULL for a contiguous range */
  uint64_t hash;        /* of idx[0..len) (0 for a range): the memo compares contents */
} ixset;

/* One memo slot: node x evaluated at the index set (start, len, idx) gave p.
** Slots of an older generation are empty. */
typedef struct memo_slot {
  const rt_node *x;
  int64_t start, len;
  const int64_t *idx;
  uint64_t hash;
  void *p;
  unsigned gen;
} memo_slot;

typedef struct ablock { struct ablock *next; size_t cap, used; } ablock;

/* Evaluation context: one per worker, scratch memory reset per chunk. */
typedef struct evctx {
  rt_backend *b;
  ablock *blocks;       /* scratch blocks, the first is current */
  int failed;           /* allocation failure */
  /* The memo: an open-addressing table keyed by (node, index set contents),
  ** emptied per chunk by bumping gen.  A node read under two index maps (two
  ** views of one pending value) is two entries; a shared sub-DAG read under
  ** one index set is evaluated once. */
  memo_slot *memo;
  int64_t mcap, mused;  /* slots (a power of 2), entries of generation gen */
  unsigned gen;
} evctx;

static void *scratch(evctx *c, size_t n) {
  n = (n + 15) & ~(size_t)15;
  ablock *a = c->blocks;
  for (; a; a = a->next)
    if (a->cap - a->used >= n) break;
  if (!a) {
    size_t cap = n > CPU_ARENA_BLOCK ? n : CPU_ARENA_BLOCK;
    a = rt_alloc(c->b->mem, sizeof(ablock) + cap);
    if (!a) { c->failed = 1; return NULL; }
    a->cap = cap; a->used = 0; a->next = c->blocks; c->blocks = a;
  }
  void *p = (char *)(a + 1) + a->used;
  a->used += n;
  return p;
}

static void scratch_reset(evctx *c) {
  for (ablock *a = c->blocks; a; a = a->next) a->used = 0;
  if (++c->gen == 0) {   /* wrapped: stale slots could match the new generation */
    for (int64_t k = 0; k < c->mcap; k++) c->memo[k].gen = 0;
    c->gen = 1;
  }
  c->mused = 0;
}

static void scratch_free(evctx *c) {
  ablock *a = c->blocks;
  while (a) { ablock *n = a->next; rt_free(c->b->mem, a, sizeof(ablock) + a->cap); a = n; }
  c->blocks = NULL;
  rt_free(c->b->mem, c->memo, sizeof(memo_slot) * (size_t)c->mcap);
  c->memo = NULL; c->mcap = c->mused = 0;
}

/* ------------------------------------------------------ elementwise kernels */

/* The op loops are runtime/ops.c's (the RT_OPS rows of runtime/ops.h), shared
** with the constant folder; the same expressions are the cuda backend's. */
static void unary_loop(int op, gk_dtype ti, gk_dtype to, const void *pa, void *po, int64_t n) {
  const void *in[3] = {pa, NULL, NULL};
  rt_map_loop(op, ti, to, in, po, n);
}

/* Binary op on n elements of dtype t (both inputs). */
static void binary_loop(int op, gk_dtype t, const void *pa, const void *pb, void *po, int64_t n) {
  const void *in[3] = {pa, pb, NULL};
  rt_map_loop(op, t, t, in, po, n);
}

static void where_loop(gk_dtype t, const uint8_t *c, const void *pa, const void *pb, void *po, int64_t n) {
  const void *in[3] = {c, pa, pb};
  rt_map_loop(RT_WHERE, t, t, in, po, n);
}

/* ------------------------------------------------------- the chunk evaluator */

/* Flat input indices of a VIEW node for the output index set ix. */
static int64_t *view_indices(evctx *c, const rt_node *x, const ixset *ix) {
  int64_t *out = scratch(c, (size_t)ix->len * sizeof(int64_t));
  if (!out) return NULL;
  int nd = x->ndim;
  if (nd == 0) { for (int64_t j = 0; j < ix->len; j++) out[j] = x->voff; return out; }
  if (!ix->idx) {
    /* odometer over the output coordinates of a contiguous range */
    int64_t co[GK_MAX_DIMS], f = ix->start, cur = x->voff;
    for (int d = nd - 1; d >= 0; d--) {
      int64_t s = x->shape[d] ? x->shape[d] : 1;
      co[d] = f % s; f /= s; cur += co[d] * x->vstride[d];
    }
    for (int64_t j = 0; j < ix->len; j++) {
      out[j] = cur;
      for (int d = nd - 1; d >= 0; d--) {
        cur += x->vstride[d];
        if (++co[d] < x->shape[d]) break;
        cur -= co[d] * x->vstride[d];
        co[d] = 0;
      }
    }
  } else {
    for (int64_t j = 0; j < ix->len; j++) {
      int64_t f = ix->idx[j], cur = x->voff;
      for (int d = nd - 1; d >= 0; d--) {
        int64_t s = x->shape[d];
        cur += (f % s) * x->vstride[d]; f /= s;
      }
      out[j] = cur;
    }
  }
  return out;
}

/* The index set of n flat indices idx: a range when they are consecutive
** (a slice of a contiguous chunk reads its input directly), else the list
** with its content hash. */
static ixset make_ixset(const int64_t *idx, int64_t n) {
  ixset r = { n ? idx[0] : 0, n, NULL, 0 };
  int64_t j = 1;
  while (j < n && idx[j] == idx[0] + j) j++;
  if (j >= n) return r;
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (j = 0; j < n; j++) h = (h ^ (uint64_t)idx[j]) * 0x100000001b3ull;
  r.idx = idx; r.hash = h | 1;
  return r;
}

static uint64_t memo_key(const rt_node *x, const ixset *ix) {
  uint64_t h = (uint64_t)(uintptr_t)x * 0x9e3779b97f4a7c15ull;
  h ^= (uint64_t)ix->start * 0xc2b2ae3d27d4eb4full + (uint64_t)ix->len + ix->hash;
  return h ^ h >> 29;
}

static int memo_eq(const memo_slot *m, const rt_node *x, const ixset *ix) {
  if (m->x != x || m->len != ix->len || m->hash != ix->hash) return 0;
  if (!ix->idx) return !m->idx && m->start == ix->start;
  return m->idx && (m->idx == ix->idx || !memcmp(m->idx, ix->idx, sizeof(int64_t) * (size_t)ix->len));
}

/* The memo slot for (x, ix): the entry if present, else the empty slot to
** fill; NULL when the table cannot grow (evaluation goes on unmemoised). */
static memo_slot *memo_find(evctx *c, const rt_node *x, const ixset *ix) {
  if (!c->gen) c->gen = 1;   /* generation 0 marks never-used slots */
  if (2 * (c->mused + 1) > c->mcap) {
    int64_t nc = c->mcap ? c->mcap * 2 : CPU_MEMO;
    memo_slot *nt = rt_calloc(c->b->mem, (size_t)nc, sizeof(memo_slot));
    if (!nt && !c->mcap) return NULL;
    if (nt) {
      for (int64_t k = 0; k < c->mcap; k++) {
        memo_slot *m = &c->memo[k];
        if (m->gen != c->gen) continue;
        ixset mi = { m->start, m->len, m->idx, m->hash };
        int64_t q = (int64_t)(memo_key(m->x, &mi) & (uint64_t)(nc - 1));
        while (nt[q].gen == c->gen) q = (q + 1) & (nc - 1);
        nt[q] = *m;
      }
      rt_free(c->b->mem, c->memo, sizeof(memo_slot) * (size_t)c->mcap);
      c->memo = nt; c->mcap = nc;
    } else if (c->mused + 1 >= c->mcap) return NULL;
  }
  int64_t q = (int64_t)(memo_key(x, ix) & (uint64_t)(c->mcap - 1));
  for (;;) {
    memo_slot *m = &c->memo[q];
    if (m->gen != c->gen || memo_eq(m, x, ix)) return m;
    q = (q + 1) & (c->mcap - 1);
  }
}

static const void *ev(evctx *c, const rt_node *x, const ixset *ix);

/* Values of VIEW x's input at its n flat indices vi.  A broadcast repeats
** each input index in a run (a row vector under a matrix: 1000 times each);
** when the runs are long the input is evaluated once per run, at the run
** heads (consecutive ones are a range), and the values are repeated: an
** elementwise node's value depends on its index alone, so this is the same
** result for a fraction of the work. */
#define VIEW_RUN_MIN 4   /* mean run length from which the input is evaluated at the run heads */
static const void *view_read(evctx *c, const rt_node *x, const int64_t *vi, int64_t n) {
  int64_t runs = n > 0;
  for (int64_t j = 1; j < n; j++) runs += vi[j] != vi[j - 1];
  if (runs * VIEW_RUN_MIN > n) {
    ixset sub = make_ixset(vi, n);
    return ev(c, x->in[0], &sub);
  }
  int64_t *head = scratch(c, (size_t)runs * sizeof(int64_t));
  if (!head) return NULL;
  int64_t r = 0;
  for (int64_t j = 0; j < n; j++)
    if (j == 0 || vi[j] != vi[j - 1]) head[r++] = vi[j];
  ixset sub = make_ixset(head, runs);
  const char *p = ev(c, x->in[0], &sub);
  size_t s = esz(x->t);
  char *o = p ? scratch(c, (size_t)n * s) : NULL;
  if (!o) return NULL;
#define EXPAND(T) do { T *d = (T *)(void *)o; const T *q = (const T *)(const void *)p; r = -1; \
    for (int64_t j = 0; j < n; j++) { r += j == 0 || vi[j] != vi[j - 1]; d[j] = q[r]; } } while (0)
  switch (s) {
  case 1: EXPAND(uint8_t); break;
  case 4: EXPAND(uint32_t); break;
  default: EXPAND(uint64_t); break;
  }
#undef EXPAND
  return o;
}

/* Values of VIEW x at the contiguous range ix when x broadcasts along its
** last dimension (stride 0): each segment of the range within one last-axis
** line reads one input element, so the input is evaluated at the segment
** heads only and each value filled along its segment -- no index per
** element (a row vector under a matrix in softmax or layernorm). */
static const void *view_broadcast(evctx *c, const rt_node *x, const ixset *ix) {
  int nd = x->ndim;
  int64_t L = x->shape[nd - 1], n = ix->len;
  int64_t f0 = ix->start, nseg = (f0 + n - 1) / L - f0 / L + 1;
  int64_t *head = scratch(c, (size_t)nseg * sizeof(int64_t));
  if (!head) return NULL;
  for (int64_t q = 0; q < nseg; q++) {   /* the input index of line f0 / L + q */
    int64_t f = f0 / L + q, cur = x->voff;
    for (int d = nd - 2; d >= 0; d--) {
      int64_t sh = x->shape[d];
      cur += (f % sh) * x->vstride[d]; f /= sh;
    }
    head[q] = cur;
  }
  ixset sub = make_ixset(head, nseg);
  const char *p = ev(c, x->in[0], &sub);
  size_t s = esz(x->t);
  char *o = p ? scratch(c, (size_t)n * s) : NULL;
  if (!o) return NULL;
#define FILL(T) do { T *d = (T *)(void *)o; const T *v = (const T *)(const void *)p; int64_t j = 0; \
    for (int64_t q = 0; q < nseg; q++) { \
      int64_t e = (f0 / L + q + 1) * L - f0; if (e > n) e = n; \
      for (T u = v[q]; j < e; j++) d[j] = u; } } while (0)
  switch (s) {
  case 1: FILL(uint8_t); break;
  case 4: FILL(uint32_t); break;
  default: FILL(uint64_t); break;
  }
#undef FILL
  return o;
}

/* Whether VIEW x reads a contiguous range of its input at the contiguous
** range ix -- the view is its input's flat order from an offset (a slice
** x[a:b], a block of whole rows), or ix lies in one last-axis line of stride
** 1 (a row of m[:, a:b]) -- and that range in *sub. */
static int view_range(const rt_node *x, const ixset *ix, ixset *sub) {
  int nd = x->ndim;
  if (ix->idx || nd == 0 || ix->len == 0 || x->vstride[nd - 1] != 1) return 0;
  int64_t f = ix->start, cur = x->voff, co = 0, flat = 1;
  int dense = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t sh = x->shape[d];
    if (d == nd - 1) co = f % sh;
    cur += (f % sh) * x->vstride[d]; f /= sh;
    if (x->vstride[d] != flat && sh != 1) dense = 0;
    flat *= sh;
  }
  if (!dense && co + ix->len > x->shape[nd - 1]) return 0;
  *sub = (ixset){ cur, ix->len, NULL, 0 };
  return 1;
}

/* Values of VIEW x at the contiguous range ix when its last axis has
** stride 1 but the range crosses lines (a permuted view: sum or softmax
** along a middle axis, a transpose of 3-d blocks): each segment of the range
** within one last-axis line is a contiguous range of the input, evaluated
** as a range and copied in -- no index per element. */
#define VIEW_LINE_MIN 32   /* last-axis length from which the lines are read as ranges */
static const void *view_lines(evctx *c, const rt_node *x, const ixset *ix) {
  int nd = x->ndim;
  int64_t L = x->shape[nd - 1], n = ix->len, f = ix->start / L, k = ix->start % L, cur = x->voff, co[GK_MAX_DIMS];
  size_t s = esz(x->t);
  char *o = scratch(c, (size_t)n * s);
  if (!o) return NULL;
  for (int d = nd - 2; d >= 0; d--) {   /* the odometer over the line coordinates */
    co[d] = f % x->shape[d]; f /= x->shape[d]; cur += co[d] * x->vstride[d];
  }
  for (int64_t j = 0; j < n; k = 0) {
    int64_t len = L - k < n - j ? L - k : n - j;
    ixset sub = { cur + k, len, NULL, 0 };
    const char *p = ev(c, x->in[0], &sub);
    if (!p) return NULL;
    memcpy(o + (size_t)j * s, p, (size_t)len * s);
    j += len;
    for (int d = nd - 2; d >= 0; d--) {
      cur += x->vstride[d];
      if (++co[d] < x->shape[d]) break;
      cur -= co[d] * x->vstride[d];
      co[d] = 0;
    }
  }
  return o;
}

/* Values of node x at index set ix: a buffer of ix->len elements of x->t,
** valid until the next scratch_reset.  NULL on allocation failure. */
static const void *ev(evctx *c, const rt_node *x, const ixset *ix) {
  int64_t n = ix->len;
  size_t s = esz(x->t);
  if (x->val) {
    const char *d = x->val->host;
    if (!ix->idx) return d + (size_t)ix->start * s;
    char *o = scratch(c, (size_t)n * s);
    if (!o) return NULL;
    if (x->val->n == 1) { for (int64_t j = 0; j < n; j++) memcpy(o + j * s, d, s); return o; }
    switch (s) {
    case 1: for (int64_t j = 0; j < n; j++) o[j] = d[ix->idx[j]]; break;
    case 4: for (int64_t j = 0; j < n; j++) ((uint32_t *)o)[j] = ((const uint32_t *)d)[ix->idx[j]]; break;
    default: for (int64_t j = 0; j < n; j++) ((uint64_t *)o)[j] = ((const uint64_t *)d)[ix->idx[j]]; break;
    }
    return o;
  }
  memo_slot *m = memo_find(c, x, ix);
  if (m && m->gen == c->gen) return m->p;
  void *o = NULL;
  switch (x->op) {
  case RT_CONST:
    o = scratch(c, (size_t)n * s);
    if (!o) return NULL;
    switch (x->t) {
    case GK_BOOL: memset(o, x->c.i != 0, (size_t)n); break;
    case GK_I32: for (int64_t j = 0; j < n; j++) ((int32_t *)o)[j] = (int32_t)x->c.i; break;
    case GK_I64: for (int64_t j = 0; j < n; j++) ((int64_t *)o)[j] = x->c.i; break;
    case GK_F32: for (int64_t j = 0; j < n; j++) ((float *)o)[j] = (float)x->c.f; break;
    case GK_F64: for (int64_t j = 0; j < n; j++) ((double *)o)[j] = x->c.f; break;
    }
    break;
  case RT_IOTA: {
    o = scratch(c, (size_t)n * s);
    if (!o) return NULL;
    for (int64_t j = 0; j < n; j++) {
      int64_t v = ix->idx ? ix->idx[j] : ix->start + j;
      if (x->t == GK_I32) ((int32_t *)o)[j] = (int32_t)v; else ((int64_t *)o)[j] = v;
    }
    break;
  }
  case RT_RAND: case RT_RANDN: {
    float *f = scratch(c, (size_t)n * sizeof(float));
    if (!f) return NULL;
    if (!ix->idx && x->op == RT_RAND) rng_fill_uniform(x->seed, x->offset + (uint64_t)ix->start, f, n);
    else if (!ix->idx) rng_fill_normal(x->seed, x->offset + (uint64_t)ix->start, f, n);
    else for (int64_t j = 0; j < n; j++) {
      uint64_t k = x->offset + (uint64_t)ix->idx[j];
      f[j] = x->op == RT_RAND ? rng_uniform_at(x->seed, k) : rng_normal_at(x->seed, k);
    }
    o = f;
    break;
  }
  case RT_VIEW: {
    if (!ix->idx && x->ndim > 0 && x->vstride[x->ndim - 1] == 0 && x->shape[x->ndim - 1] >= VIEW_RUN_MIN) {
      o = (void *)view_broadcast(c, x, ix);
      if (!o) return NULL;
      break;
    }
    ixset sub;
    if (view_range(x, ix, &sub)) {   /* a contiguous slice: its input is a range too */
      o = (void *)ev(c, x->in[0], &sub);
      if (!o) return NULL;
      break;
    }
    if (!ix->idx && x->ndim >= 2 && x->vstride[x->ndim - 1] == 1 && x->shape[x->ndim - 1] >= VIEW_LINE_MIN) {
      o = (void *)view_lines(c, x, ix);
      if (!o) return NULL;
      break;
    }
    const int64_t *vi = view_indices(c, x, ix);
    if (!vi) return NULL;
    o = (void *)view_read(c, x, vi, n);
    if (!o) return NULL;
    break;
  }
  case RT_RESHAPE:
    o = (void *)ev(c, x->in[0], ix);
    if (!o) return NULL;
    break;
  case RT_GATHER: {
    /* element j is in0's element idx[j / inner] * inner + j % inner, where
    ** inner is in0's count per index along its first axis and idx = in1
    ** (checked in range by the compiler; negative counts from the end) */
    const rt_node *d = x->in[0], *q = x->in[1];
    int64_t L = d->shape[0], inner = L ? d->n / L : 1;
    int64_t *qi = scratch(c, (size_t)n * sizeof(int64_t)), *si = scratch(c, (size_t)n * sizeof(int64_t));
    if (!qi || !si) return NULL;
    const void *pq;
    if (inner == 1) pq = ev(c, q, ix);   /* one element per index: the indices at ix itself */
    else {
      for (int64_t j = 0; j < n; j++) qi[j] = (ix->idx ? ix->idx[j] : ix->start + j) / inner;
      ixset qs = make_ixset(qi, n);
      pq = ev(c, q, &qs);
    }
    if (!pq) return NULL;
    if (inner == 1) {
#define POS(T) do { const T *v = pq; for (int64_t j = 0; j < n; j++) si[j] = v[j] < 0 ? v[j] + L : v[j]; } while (0)
      if (q->t == GK_I32) POS(int32_t); else POS(int64_t);
#undef POS
    } else
      for (int64_t j = 0; j < n; j++) {
        int64_t v = q->t == GK_I32 ? ((const int32_t *)pq)[j] : ((const int64_t *)pq)[j];
        if (v < 0) v += L;
        si[j] = v * inner + (ix->idx ? ix->idx[j] : ix->start + j) % inner;
      }
    if (d->val && d->val->n > 1) {   /* stored: read at once (no index set to hash) */
      const char *dv = d->val->host;
      if (!(o = scratch(c, (size_t)n * s))) return NULL;
      switch (s) {
      case 1: for (int64_t j = 0; j < n; j++) ((char *)o)[j] = dv[si[j]]; break;
      case 4: for (int64_t j = 0; j < n; j++) ((uint32_t *)o)[j] = ((const uint32_t *)(const void *)dv)[si[j]]; break;
      default: for (int64_t j = 0; j < n; j++) ((uint64_t *)o)[j] = ((const uint64_t *)(const void *)dv)[si[j]]; break;
      }
      break;
    }
    ixset ss = make_ixset(si, n);
    o = (void *)ev(c, d, &ss);
    if (!o) return NULL;
    break;
  }
  case RT_CONCAT: {
    /* element (r, k) of [R, A+B] is in0's (r, k) when k < A, else in1's (r, k - A) */
    int64_t A = x->in[0]->shape[1], W = x->shape[1], na = 0, nb = 0;
    if (!ix->idx && A >= VIEW_LINE_MIN && W - A >= VIEW_LINE_MIN) {   /* a range: each piece within one row is a range of one input */
      if (!(o = scratch(c, (size_t)n * s))) return NULL;
      for (int64_t j = 0; j < n;) {
        int64_t f = ix->start + j, r = f / W, k = f % W, len;
        ixset sub;
        const rt_node *src;
        if (k < A) { len = A - k; sub = (ixset){ r * A + k, 0, NULL, 0 }; src = x->in[0]; }
        else { len = W - k; sub = (ixset){ r * (W - A) + k - A, 0, NULL, 0 }; src = x->in[1]; }
        if (len > n - j) len = n - j;
        sub.len = len;
        const char *p = ev(c, src, &sub);
        if (!p) return NULL;
        memcpy((char *)o + (size_t)j * s, p, (size_t)len * s);
        j += len;
      }
      break;
    }
    int64_t *ia = scratch(c, (size_t)n * sizeof(int64_t)), *ib = scratch(c, (size_t)n * sizeof(int64_t));
    if (!ia || !ib || !(o = scratch(c, (size_t)n * s))) return NULL;
    for (int64_t j = 0; j < n; j++) {
      int64_t f = ix->idx ? ix->idx[j] : ix->start + j, r = f / W, k = f % W;
      if (k < A) ia[na++] = r * A + k; else ib[nb++] = r * (W - A) + k - A;
    }
    ixset sa = make_ixset(ia, na), sb = make_ixset(ib, nb);
    const char *pa = na ? ev(c, x->in[0], &sa) : NULL, *pb = nb ? ev(c, x->in[1], &sb) : NULL;
    if ((na && !pa) || (nb && !pb)) return NULL;
    int64_t qa = 0, qb = 0;
    for (int64_t j = 0; j < n; j++) {
      int64_t f = ix->idx ? ix->idx[j] : ix->start + j;
      if (f % W < A) memcpy((char *)o + j * s, pa + (qa++) * s, s);
      else memcpy((char *)o + j * s, pb + (qb++) * s, s);
    }
    break;
  }
  case RT_WHERE: {
    const void *pc = ev(c, x->in[0], ix), *pa = ev(c, x->in[1], ix), *pb = ev(c, x->in[2], ix);
    if (!pc || !pa || !pb || !(o = scratch(c, (size_t)n * s))) return NULL;
    where_loop(x->t, pc, pa, pb, o, n);
    break;
  }
  default:
    if (rt_op_info[x->op].cls != RC_MAP) return NULL;  /* heavy nodes are always materialized here */
    if (rt_op_info[x->op].nin == 1) {
      const void *pa = ev(c, x->in[0], ix);
      if (!pa || !(o = scratch(c, (size_t)n * s))) return NULL;
      if (!(x->op == RT_EXP && x->t == GK_F32 && cpu_expf(pa, o, n)))   /* expf's bits, 8 lanes */
        unary_loop(x->op, x->in[0]->t, x->t, pa, o, n);
    } else {
      const void *pa = ev(c, x->in[0], ix), *pb = ev(c, x->in[1], ix);
      if (!pa || !pb || !(o = scratch(c, (size_t)n * s))) return NULL;
      binary_loop(x->op, x->in[0]->t, pa, pb, o, n);
    }
    break;
  }
  /* the inputs' evaluation may have grown the table: find the slot again */
  if (m && (m = memo_find(c, x, ix)) && m->gen != c->gen) {
    m->x = x; m->start = ix->start; m->len = ix->len; m->idx = ix->idx; m->hash = ix->hash;
    m->p = o; m->gen = c->gen;
    c->mused++;
  }
  return o;
}

/* ------------------------------------------------------------ parallel jobs */

/* A job runs fn over chunks [0, nchunks) in parallel; each worker has its
** own evaluation context. */
typedef struct job {
  rt_backend *b;
  const rt_node *x;      /* the node being computed or read */
  rt_node *out;          /* destination node (materialized) */
  int64_t chunk;         /* elements per chunk */
  int64_t n;             /* total elements */
  void *part;            /* per-chunk partials */
  _Atomic int failed;   /* written by any worker (an interrupt, out of memory) */
  void (*fn)(struct job *j, evctx *c, int64_t k);   /* one chunk */
  /* reduce geometry */
  int64_t rows, cols;
  rt_node *const *xs;    /* whole-array reductions of one input computed in one pass (red_multi) */
  int nx;
} job;

/* Polled inside one long chunk (a whole-array scan, a long row): every
** 64 evaluated pieces (128K elements), as job_run polls between chunks. */
static int job_stopped(job *j, int64_t s) {
  if ((s / CPU_CHUNK) % 64 != 63 || !j->b->interrupt || !atomic_load_explicit(j->b->interrupt, memory_order_relaxed)) return 0;
  j->failed = GK_EINTERRUPT;
  return 1;
}

static void job_run(void *ctx, int64_t begin, int64_t end) {
  job *j = ctx;
  evctx c;
  memset(&c, 0, sizeof c);
  c.b = j->b;
  for (int64_t k = begin; k < end && !j->failed; k++) {
    if (j->b->interrupt && atomic_load_explicit(j->b->interrupt, memory_order_relaxed)) { j->failed = GK_EINTERRUPT; break; }
    scratch_reset(&c);
    j->fn(j, &c, k);
    if (c.failed) j->failed = GK_ENOMEM;
  }
  scratch_free(&c);
}

static int job_go(job *j, int64_t nchunks) {
  int64_t work = j->x->n, in = j->x->nin ? j->x->in[0]->n : 0;
  if (in > work) work = in;
  if (nchunks > 0 && work < CPU_PAR_MIN) job_run(j, 0, nchunks);   /* waking the pool costs more */
  else if (nchunks > 0) par_for(nchunks, 1, job_run, j);
  if (j->failed == GK_EINTERRUPT) return rt_seterr(&j->b->err, GK_EINTERRUPT, "interrupted");
  if (j->failed) return rt_seterr(&j->b->err, GK_ENOMEM, "out of memory");
  return GK_OK;
}

/* --- map: write node x's values into out's buffer */
static void map_chunk(job *j, evctx *c, int64_t k) {
  int64_t s = k * j->chunk, len = j->n - s < j->chunk ? j->n - s : j->chunk;
  ixset ix = { s, len, NULL, 0 };
  const void *p = ev(c, j->x, &ix);
  if (!p) { c->failed = 1; return; }
  size_t es = esz(j->x->t);
  memcpy((char *)j->out->val->host + (size_t)s * es, p, (size_t)len * es);
}

/* --- a 2-d view of a stored array (a transpose, a strided slice): copied
** by tiles of TILE x TILE, so the reads of a column-wise walk stay in cache
** (the chunked path gathers through an index per element). */
#define TILE 64
static void view2d_rows(job *j, evctx *c, int64_t k) {
  const rt_node *x = j->x;
  int64_t C = x->shape[1], s0 = x->vstride[0], s1 = x->vstride[1];
  int64_t i0 = k * TILE, i1 = x->shape[0] - i0 < TILE ? x->shape[0] : i0 + TILE;
#define COPY(T) do { const T *src = (const T *)x->in[0]->val->host + x->voff; T *dst = (T *)j->out->val->host; \
    for (int64_t j0 = 0; j0 < C; j0 += TILE) { \
      int64_t j1 = C - j0 < TILE ? C : j0 + TILE; \
      for (int64_t i = i0; i < i1; i++) \
        for (int64_t q = j0; q < j1; q++) dst[i * C + q] = src[i * s0 + q * s1]; \
    } } while (0)
  switch (esz(x->t)) {
  case 1: COPY(uint8_t); break;
  case 4: COPY(uint32_t); break;
  default: COPY(uint64_t); break;
  }
#undef COPY
}

static int run_map(rt_backend *b, const rt_node *x, rt_node *out) {
  job j = { .b = b, .x = x, .out = out, .chunk = CPU_CHUNK, .n = x->n, .fn = map_chunk };
  if (x->op == RT_VIEW && x->ndim == 2 && x->in[0]->val && x->in[0]->val->n > 1 && x->n > 1) {
    j.fn = view2d_rows;
    return job_go(&j, (x->shape[0] + TILE - 1) / TILE);
  }
  return job_go(&j, (x->n + CPU_CHUNK - 1) / CPU_CHUNK);
}

/* ------------------------------------------------------------- reductions */

typedef struct acc { double f; int64_t i; int64_t at; int nan; int any; double mean, m2; int64_t cnt; } acc;

static void acc_ident(acc *a, int idk, int64_t lowest, int64_t highest) {
  switch (idk) {
  case GK_ID_ZERO: a->f = 0; a->i = 0; break;
  case GK_ID_ONE: a->f = 1; a->i = 1; break;
  case GK_ID_LOWEST: a->f = -INFINITY; a->i = lowest; break;
  case GK_ID_HIGHEST: a->f = INFINITY; a->i = highest; break;
  }
}

/* The accumulator's start: a monoid's identity (gk_scalar.h's GK_MONOIDS row
** of the same name) in the slot dtype t uses -- f for floats, i for the rest,
** LOWEST / HIGHEST the dtype's own extremes (what an exscan's first element
** shows); argmax/argmin start empty (at < 0), var at count 0. */
static void acc_init(acc *a, int rop, gk_dtype t) {
  memset(a, 0, sizeof *a);
  a->at = -1;
  int lo = t == GK_BOOL ? 0 : t == GK_I32 ? 1 : 2;   /* bool, i32, i64 */
  static const int64_t lowest[] = { 0, GK_I32_MIN, GK_I64_MIN }, highest[] = { 1, INT32_MAX, INT64_MAX };
  switch (rop) {
#define ID(NAME, name, IDK, COMB) case ROP_##NAME: acc_ident(a, IDK, lowest[lo], highest[lo]); break;
  GK_MONOIDS(ID)
#undef ID
  default: break;
  }
}

#define FOLD_LANES 8   /* independent accumulators of a contiguous float fold (runtime/cpu_fold.c has them as a vector) */

/* Folds n values at p (dtype t) into a; base = index of p[0] within the reduced sequence. */
static void acc_merge(acc *a, const acc *b, int rop, gk_dtype t);

/* Variance: the chunk's own two-pass mean and M2, merged with Chan's formula. */
static void var_fold(acc *a, gk_dtype t, const void *p, int64_t n, int64_t step) {
  if (n <= 0) return;
  double s = 0, m2 = 0, mean;
  if (step == 1 && t == GK_F32) cpu_var_f32(p, n, &mean, &m2);
  else if (step == 1) cpu_var_f64(p, n, &mean, &m2);
  else if (t == GK_F32) {
    const float *v = p;
    for (int64_t q = 0; q < n; q++) s += v[q * step];
    mean = s / (double)n;
    for (int64_t q = 0; q < n; q++) { double d = v[q * step] - mean; m2 += d * d; }
  } else {
    const double *v = p;
    for (int64_t q = 0; q < n; q++) s += v[q * step];
    mean = s / (double)n;
    for (int64_t q = 0; q < n; q++) { double d = v[q * step] - mean; m2 += d * d; }
  }
  acc b; memset(&b, 0, sizeof b);
  b.mean = mean; b.m2 = m2; b.cnt = n;
  acc_merge(a, &b, ROP_VAR, t);
}

/* The FOLD_LANES loop below for a contiguous float run of sum, prod, max or
** min, vectorised (runtime/cpu_fold.c: the same bits); 0 when not handled
** (another reduction, a NaN met by max / min). */
static int fold_lanes_fast(acc *a, int rop, gk_dtype t, const void *p, int64_t n) {
  int f32 = t == GK_F32;
  switch (rop) {
  case ROP_SUM: a->f = f32 ? cpu_sum_f32(p, n, a->f) : cpu_sum_f64(p, n, a->f); return 1;
  case ROP_PROD: a->f = f32 ? cpu_prod_f32(p, n, a->f) : cpu_prod_f64(p, n, a->f); return 1;
  case ROP_MAX: return f32 ? cpu_max_f32(p, n, &a->f) : cpu_max_f64(p, n, &a->f);
  case ROP_MIN: return f32 ? cpu_min_f32(p, n, &a->f) : cpu_min_f64(p, n, &a->f);
  default: return 0;
  }
}

/* argmax / argmin of a contiguous float run without a NaN: f32 in one pass
** of vector lanes (cpu_argext_f32); f64 its extreme in lanes (exact in any
** order: cpu_max_f64 hands back a NaN), then the first element equal to it.
** That candidate -- the one the loop below ends with -- is offered to a as
** the loop would.  0 when not handled. */
static int arg_lanes_fast(acc *a, int rop, gk_dtype t, const void *p, int64_t n, int64_t base) {
  int mx = rop == ROP_ARGMAX, f32 = t == GK_F32;
  double m = mx ? -INFINITY : INFINITY;
  int64_t q;
  if (f32) {   /* one pass: lanes keep their first extreme and its index */
    if (!cpu_argext_f32(p, n, mx, &q, &m)) return 0;
  } else {
    if (!(mx ? cpu_max_f64(p, n, &m) : cpu_min_f64(p, n, &m))) return 0;
    /* a NaN in the run's tail (past its last 8-block) comes back as m = NaN,
    ** which no element equals: the loop below finds the first NaN */
    if (m != m) return 0;
    q = cpu_find_f64(p, n, m);
  }
  if (!a->any || GK_ARG_TAKE(mx, a->f, a->at, m, base + q)) { a->f = m; a->at = base + q; a->any = 1; a->nan = 0; }
  return 1;
}

static void acc_fold(acc *a, int rop, gk_dtype t, const void *p, int64_t n, int64_t base, int64_t step) {
  if (rop == ROP_VAR) { var_fold(a, t, p, n, step); return; }
  if (step == 1 && n >= 2 * FOLD_LANES && rt_is_float(t) && fold_lanes_fast(a, rop, t, p, n)) return;
  if (step == 1 && n >= 2 * FOLD_LANES && rt_is_float(t) && (rop == ROP_ARGMAX || rop == ROP_ARGMIN) && !a->nan &&
      arg_lanes_fast(a, rop, t, p, n, base)) return;
  if (step == 1 && (t == GK_I32 || t == GK_I64) && (rop == ROP_MAX || rop == ROP_MIN)) {   /* exact in any order */
    int mx = rop == ROP_MAX;
    a->i = t == GK_I32 ? (mx ? cpu_max_i32 : cpu_min_i32)(p, n, a->i) : (mx ? cpu_max_i64 : cpu_min_i64)(p, n, a->i);
    return;
  }
/* A monoid row folds with its combine: floats in double, sum/prod of ints in
** wrapping u64 (RA_WIDE), max/min of ints in int64.  A contiguous float run
** folds in FOLD_LANES independent lanes (the loop vectorises and does not wait
** on one add's latency), combined pairwise at its end: the order depends on
** the chunk alone, so the bits do not depend on the thread count. */
#define MONOID_FOLD(NAME, name, IDK, COMB) case ROP_##NAME: \
    if (isf_ && step == 1 && n >= 2 * FOLD_LANES) { \
      double l[FOLD_LANES]; \
      acc id_; acc_ident(&id_, IDK, 0, 0); \
      l[0] = a->f; \
      for (int k = 1; k < FOLD_LANES; k++) l[k] = id_.f; \
      int64_t q = 0; \
      for (; q + FOLD_LANES <= n; q += FOLD_LANES) \
        for (int k = 0; k < FOLD_LANES; k++) l[k] = COMB(l[k], (double)v[q + k]); \
      for (; q < n; q++) l[0] = COMB(l[0], (double)v[q]); \
      for (int w = FOLD_LANES / 2; w > 0; w /= 2) \
        for (int k = 0; k < w; k++) l[k] = COMB(l[k], l[k + w]); \
      a->f = l[0]; \
    } else if (isf_) { double s = a->f; for (int64_t q = 0; q < n; q++) s = COMB(s, (double)v[q * step]); a->f = s; } \
    else if (rt_rop_info[rop].acc == RA_WIDE) { \
      uint64_t s = (uint64_t)a->i; \
      for (int64_t q = 0; q < n; q++) s = COMB(s, (uint64_t)(int64_t)v[q * step]); \
      a->i = (int64_t)s; \
    } else { int64_t s = a->i; for (int64_t q = 0; q < n; q++) s = COMB(s, (int64_t)v[q * step]); a->i = s; } \
    break;
#define FOLD(T, ISF) do { const T *v = (const T *)p; const int isf_ = ISF; (void)isf_; \
  switch (rop) { \
  GK_MONOIDS(MONOID_FOLD) \
  case ROP_ARGMAX: case ROP_ARGMIN: { \
    int mx = rop == ROP_ARGMAX; \
    for (int64_t q = 0; q < n; q++) { \
      if (a->nan) break;   /* the first NaN stays */ \
      T x = v[q * step]; \
      int take = !a->any || (ISF ? GK_ARG_TAKE(mx, a->f, a->at, (double)x, base + q) \
                                 : GK_ARG_TAKE(mx, a->i, a->at, (int64_t)x, base + q)); \
      if (take) { if (ISF) a->f = (double)x; else a->i = (int64_t)x; a->at = base + q; a->any = 1; a->nan = ISF && x != x; } \
    } break; } \
  } } while (0)
  switch (t) {
  case GK_BOOL: FOLD(uint8_t, 0); break;
  case GK_I32: FOLD(int32_t, 0); break;
  case GK_I64: FOLD(int64_t, 0); break;
  case GK_F32: FOLD(float, 1); break;
  case GK_F64: FOLD(double, 1); break;
  }
#undef FOLD
#undef MONOID_FOLD
}

/* Combines b (a later part of the sequence) into a. */
static void acc_merge(acc *a, const acc *b, int rop, gk_dtype t) {
  int isf = rt_is_float(t);
  switch (rop) {
#define MERGE(NAME, name, IDK, COMB) case ROP_##NAME: \
    if (isf) a->f = COMB(a->f, b->f); \
    else if (rt_rop_info[rop].acc == RA_WIDE) a->i = (int64_t)COMB((uint64_t)a->i, (uint64_t)b->i); \
    else a->i = COMB(a->i, b->i); \
    break;
  GK_MONOIDS(MERGE)
#undef MERGE
  case ROP_VAR: {
    if (b->cnt == 0) break;
    if (a->cnt == 0) { a->mean = b->mean; a->m2 = b->m2; a->cnt = b->cnt; break; }
    double nn;
    GK_WELFORD_JOIN(double, (double)a->cnt, a->mean, a->m2, (double)b->cnt, b->mean, b->m2, nn, a->mean, a->m2);
    a->cnt += b->cnt;
    (void)nn;
    break;
  }
  default: {   /* argmax / argmin (b empty: nothing; a empty: b) */
    int mx = rop == ROP_ARGMAX;
    if (!b->any) break;
    if (!a->any || (isf ? GK_ARG_TAKE(mx, a->f, a->at, b->f, b->at) : GK_ARG_TAKE(mx, a->i, a->at, b->i, b->at))) *a = *b;
  }
  }
}

/* Stores the accumulator as one element of dtype t at dst. */
static void acc_store(const acc *a, int rop, gk_dtype t, void *dst) {
  if (rop == ROP_ARGMAX || rop == ROP_ARGMIN) { int64_t v = a->at < 0 ? 0 : a->at; memcpy(dst, &v, 8); return; }
  if (rop == ROP_VAR) {
    double v = GK_WELFORD_VAR(a->cnt, a->mean, a->m2);
    if (t == GK_F32) *(float *)dst = (float)v; else *(double *)dst = v;
    return;
  }
  switch (t) {
  case GK_BOOL: *(uint8_t *)dst = a->i != 0; break;
  case GK_I32: *(int32_t *)dst = (int32_t)a->i; break;
  case GK_I64: *(int64_t *)dst = a->i; break;
  case GK_F32: *(float *)dst = (float)a->f; break;
  case GK_F64: *(double *)dst = a->f; break;
  }
}

/* Whole-array reduce: one partial per chunk, merged in order. */
static void red_chunk(job *j, evctx *c, int64_t k) {
  const rt_node *x = j->x, *in = x->in[0];
  int64_t s = k * j->chunk, len = j->n - s < j->chunk ? j->n - s : j->chunk;
  ixset ix = { s, len, NULL, 0 };
  acc *a = (acc *)j->part + k;
  acc_init(a, x->rop, in->t);
  const void *p = ev(c, in, &ix);
  if (!p) { c->failed = 1; return; }
  acc_fold(a, x->rop, in->t, p, len, s, 1);
}

/* Whole-array reduce of a stored float array by sum, max, min, argmax or
** argmin: the same
** per-chunk partials as red_chunk, RED_GROUP chunks per task and no
** evaluator in between.  Sums: four chunks' folds at once (cpu_sum4_f32,
** the same bits).  max / min: one fold over the whole group, whose extreme
** is exact whatever the grouping (no NaN, not a zero: cpu_max_f32 hands
** those back) and stands for the group's first chunk, the others holding
** the identity (argmax / argmin: that extreme's first index, the others
** empty); else each chunk as red_chunk folds it. */
#define RED_GROUP 16
static void red_group(job *j, evctx *c, int64_t g) {
  const rt_node *x = j->x, *in = x->in[0];
  int64_t nch = (j->n + j->chunk - 1) / j->chunk, k0 = g * RED_GROUP, k1 = k0 + RED_GROUP < nch ? k0 + RED_GROUP : nch;
  acc *p = (acc *)j->part;
  size_t es = esz(in->t);
  const char *v = (const char *)in->val->host;
  for (int64_t k = k0; k < k1; k++) acc_init(&p[k], x->rop, in->t);
  int64_t k = k0;
  if (x->rop == ROP_SUM && in->t == GK_F32)
    for (; k + 4 <= k1 && (k + 4) * j->chunk <= j->n; k += 4) {
      double s4[4];
      cpu_sum4_f32((const float *)(const void *)v + k * j->chunk, j->chunk, s4);
      for (int q = 0; q < 4; q++) p[k + q].f = s4[q];
    }
  else if ((x->rop == ROP_MAX || x->rop == ROP_MIN) && in->t == GK_F32) {
    int64_t s = k0 * j->chunk, e = k1 * j->chunk < j->n ? k1 * j->chunk : j->n;
    double f = p[k0].f;
    if ((x->rop == ROP_MAX ? cpu_max_f32 : cpu_min_f32)((const float *)(const void *)v + s, e - s, &f)) {
      p[k0].f = f;
      return;
    }
  } else if (x->rop == ROP_ARGMAX || x->rop == ROP_ARGMIN) {   /* likewise: the group's first extreme */
    int64_t s = k0 * j->chunk, e = k1 * j->chunk < j->n ? k1 * j->chunk : j->n;
    if (e - s >= 2 * FOLD_LANES && arg_lanes_fast(&p[k0], x->rop, in->t, v + (size_t)s * es, e - s, s)) return;
  }
  for (; k < k1; k++) {
    int64_t s = k * j->chunk, len = j->n - s < j->chunk ? j->n - s : j->chunk;
    acc_fold(&p[k], x->rop, in->t, v + (size_t)s * es, len, s, 1);
  }
  (void)c;
}

/* Per-row reduce (axis 1): a row per task, chunks within the row. */
static void rowred_chunk(job *j, evctx *c, int64_t r) {
  const rt_node *x = j->x, *in = x->in[0];
  acc a;
  acc_init(&a, x->rop, in->t);
  for (int64_t s = 0; s < j->cols; s += CPU_CHUNK) {
    if (job_stopped(j, s)) return;
    int64_t len = j->cols - s < CPU_CHUNK ? j->cols - s : CPU_CHUNK;
    ixset ix = { r * j->cols + s, len, NULL, 0 };
    scratch_reset(c);
    const void *p = ev(c, in, &ix);
    if (!p) { c->failed = 1; return; }
    acc a2; acc_init(&a2, x->rop, in->t);
    acc_fold(&a2, x->rop, in->t, p, len, s, 1);
    acc_merge(&a, &a2, x->rop, in->t);
  }
  acc_store(&a, x->rop, x->t, (char *)j->out->val->host + (size_t)r * esz(x->t));
}

/* Per-column reduce (axis 0): a block of columns per task, rows in order. */
#define COLBLOCK 256

/* One row of n values at p (dtype t) folded into the running column values
** of a monoid: lf (floats, in double) or li (integers: wrapping u64 for
** RA_WIDE sums and products, int64 for the rest), with the monoid's combine
** -- per column the step acc_fold takes on one element, so the same bits, in
** a loop over the columns that vectorises.  Returns 0 (nothing done) when
** rop is not a monoid row (argmax, argmin, var); p NULL asks only that. */
static int colfold_row(int rop, gk_dtype t, const void *p, int64_t n, double *lf, int64_t *li) {
  int wide = rt_rop_info[rop].acc == RA_WIDE;
  if (p && (t == GK_F32 || t == GK_F64)) {   /* in vector lanes: runtime/cpu_fold.c */
    int f = t == GK_F32;
    switch (rop) {
    case ROP_SUM: if (f) cpu_colsum_f32(p, n, lf); else cpu_colsum_f64(p, n, lf); return 1;
    case ROP_PROD: if (f) cpu_colprod_f32(p, n, lf); else cpu_colprod_f64(p, n, lf); return 1;
    case ROP_MAX: if (f) cpu_colmax_f32(p, n, lf); else cpu_colmax_f64(p, n, lf); return 1;
    case ROP_MIN: if (f) cpu_colmin_f32(p, n, lf); else cpu_colmin_f64(p, n, lf); return 1;
    default: break;
    }
  }
#define COLF_LOOP(T, C, L, COMB) do { const T *v = (const T *)p; C *l = (C *)(void *)(L); \
    for (int64_t q = 0; q < n; q++) l[q] = COMB(l[q], (C)v[q]); } while (0)
#define COLF_INT(T, COMB) do { if (wide) COLF_LOOP(T, uint64_t, li, COMB); else COLF_LOOP(T, int64_t, li, COMB); } while (0)
#define COLF_ROW(NAME, name, IDK, COMB) case ROP_##NAME: \
    if (!p) return 1; \
    switch (t) { \
    case GK_BOOL: COLF_INT(uint8_t, COMB); break; \
    case GK_I32: COLF_INT(int32_t, COMB); break; \
    case GK_I64: COLF_INT(int64_t, COMB); break; \
    case GK_F32: COLF_LOOP(float, double, lf, COMB); break; \
    case GK_F64: COLF_LOOP(double, double, lf, COMB); break; \
    } return 1;
/* max / min: GK_COMB_MAX / MIN's values (a NaN in a first, then in b, else
** the larger / smaller, a on a tie) as one select chain, which vectorises */
#define COLF_MAX(a, b) ((a) != (a) ? (a) : ((b) != (b) || (b) > (a)) ? (b) : (a))
#define COLF_MIN(a, b) ((a) != (a) ? (a) : ((b) != (b) || (b) < (a)) ? (b) : (a))
  switch (rop) {
  COLF_ROW(SUM, sum, 0, GK_COMB_SUM)
  COLF_ROW(PROD, prod, 0, GK_COMB_PROD)
  COLF_ROW(MAX, max, 0, COLF_MAX)
  COLF_ROW(MIN, min, 0, COLF_MIN)
  COLF_ROW(ANY, any, 0, GK_COMB_ANY)
  COLF_ROW(ALL, all, 0, GK_COMB_ALL)
  default: return 0;
  }
#undef COLF_MAX
#undef COLF_MIN
#undef COLF_ROW
#undef COLF_INT
#undef COLF_LOOP
}
static void colred_chunk(job *j, evctx *c, int64_t k) {
  const rt_node *x = j->x, *in = x->in[0];
  int64_t c0 = k * COLBLOCK, nc = j->cols - c0 < COLBLOCK ? j->cols - c0 : COLBLOCK;
  acc a[COLBLOCK];
  for (int64_t q = 0; q < nc; q++) acc_init(&a[q], x->rop, in->t);
  for (int64_t r = 0; r < j->rows; r++) {
    if (job_stopped(j, r * (CPU_CHUNK / 16))) return;   /* every 1024 rows */
    ixset ix = { r * j->cols + c0, nc, NULL, 0 };
    scratch_reset(c);
    const void *p = ev(c, in, &ix);
    if (!p) { c->failed = 1; return; }
    size_t es = esz(in->t);
    for (int64_t q = 0; q < nc; q++) acc_fold(&a[q], x->rop, in->t, (const char *)p + q * es, 1, r, 1);
  }
  for (int64_t q = 0; q < nc; q++)
    acc_store(&a[q], x->rop, x->t, (char *)j->out->val->host + (size_t)(c0 + q) * esz(x->t));
}

/* Two rows folded in order: an f32 sum in one pass over the running values
** (cpu_colsum2_f32), else colfold_row twice. */
static void colfold_rows2(int rop, gk_dtype t, const void *p0, const void *p1, int64_t n, double *lf, int64_t *li) {
  if (t == GK_F32 && rop == ROP_SUM) { cpu_colsum2_f32(p0, p1, n, lf); return; }
  colfold_row(rop, t, p0, n, lf, li);
  colfold_row(rop, t, p1, n, lf, li);
}

/* Per-column reduce by a monoid: blocks of COLMONO columns (whole rows of
** up to that width, read in order), each row folded in by colfold_row. */
#define COLMONO 1024
static void colmono_chunk(job *j, evctx *c, int64_t k) {
  const rt_node *x = j->x, *in = x->in[0];
  int64_t c0 = k * COLMONO, nc = j->cols - c0 < COLMONO ? j->cols - c0 : COLMONO;
  double lf[COLMONO];    /* the running column values: acc's f (floats) */
  int64_t li[COLMONO];   /* or its i (the rest) */
  float lx[COLMONO];     /* or, for max / min of f32, the same values in f32 (twice the lanes) */
  int ext = in->t == GK_F32 && (x->rop == ROP_MAX || x->rop == ROP_MIN);
  acc a;
  acc_init(&a, x->rop, in->t);
  for (int64_t q = 0; q < nc; q++) { lf[q] = a.f; li[q] = a.i; lx[q] = (float)a.f; }
  /* a stored array through a view whose last axis has stride 1 (a
  ** reduction along a middle axis): its lines folded in where they lie */
  const rt_node *v = in;
  while (v->op == RT_RESHAPE && !v->val) v = v->in[0];
  int lines = !v->val && v->op == RT_VIEW && v->ndim >= 2 && v->vstride[v->ndim - 1] == 1 &&
              v->in[0]->val && v->in[0]->val->n == v->in[0]->n;
  for (int64_t r = 0; r < j->rows; r += 1 + !lines) {   /* evaluated rows two at a time */
    if (job_stopped(j, r * (CPU_CHUNK / 16))) return;   /* every 1024 rows */
    if (lines) {
      const char *base = v->in[0]->val->host;
      size_t es = esz(in->t);
      int nd = v->ndim;
      int64_t L = v->shape[nd - 1], f0 = r * j->cols + c0;
      for (int64_t q = 0; q < nc;) {
        int64_t f = (f0 + q) / L, k = (f0 + q) % L, cur = v->voff + k, len = L - k < nc - q ? L - k : nc - q;
        for (int d = nd - 2; d >= 0; d--) { cur += (f % v->shape[d]) * v->vstride[d]; f /= v->shape[d]; }
        const void *row = base + (size_t)cur * es;
        if (ext) (x->rop == ROP_MAX ? cpu_colmaxf_f32 : cpu_colminf_f32)(row, len, lx + q);
        else colfold_row(x->rop, in->t, row, len, lf + q, li + q);
        q += len;
      }
      continue;
    }
    int pair = r + 1 < j->rows;
    ixset ix = { r * j->cols + c0, nc, NULL, 0 }, ix1 = { (r + 1) * j->cols + c0, nc, NULL, 0 };
    scratch_reset(c);
    const void *p = ev(c, in, &ix), *p1 = pair ? ev(c, in, &ix1) : NULL;
    if (!p || (pair && !p1)) { c->failed = 1; return; }
    if (ext) {
      void (*f)(const float *, int64_t, float *) = x->rop == ROP_MAX ? cpu_colmaxf_f32 : cpu_colminf_f32;
      f(p, nc, lx);
      if (pair) f(p1, nc, lx);
    } else if (pair) colfold_rows2(x->rop, in->t, p, p1, nc, lf, li);
    else colfold_row(x->rop, in->t, p, nc, lf, li);
  }
  for (int64_t q = 0; q < nc; q++) {
    a.f = ext ? (double)lx[q] : lf[q]; a.i = li[q];
    acc_store(&a, x->rop, x->t, (char *)j->out->val->host + (size_t)(c0 + q) * esz(x->t));
  }
}

/* Whole-array reductions xs[0..nx) of one input in one pass: each chunk
** evaluated once and folded into every reduction's partial for it -- the
** partials red_chunk makes, combined the same way, so the same bits. */
#define RED_MULTI 4
static void red_multi(job *j, evctx *c, int64_t k) {
  const rt_node *in = j->xs[0]->in[0];
  int64_t s = k * j->chunk, len = j->n - s < j->chunk ? j->n - s : j->chunk, nch = (j->n + j->chunk - 1) / j->chunk;
  ixset ix = { s, len, NULL, 0 };
  const void *p = ev(c, in, &ix);
  if (!p) { c->failed = 1; return; }
  for (int q = 0; q < j->nx; q++) {
    acc *a = (acc *)j->part + q * nch + k;
    acc_init(a, j->xs[q]->rop, in->t);
    acc_fold(a, j->xs[q]->rop, in->t, p, len, s, 1);
  }
}

static int run_reduce_multi(rt_backend *b, rt_node *const *xs, int nx) {
  const rt_node *in = xs[0]->in[0];
  int64_t nch = (in->n + CPU_CHUNK - 1) / CPU_CHUNK, np = nch ? nch : 1;
  job j = { .b = b, .x = xs[0], .out = xs[0], .chunk = CPU_CHUNK, .n = in->n, .fn = red_multi, .xs = xs, .nx = nx };
  j.part = rt_calloc(b->mem, (size_t)(np * nx), sizeof(acc));
  if (!j.part) return rt_seterr(&b->err, GK_ENOMEM, "out of memory");
  int rc = job_go(&j, nch);
  for (int q = 0; q < nx && rc == GK_OK; q++) {
    rt_node *x = xs[q];
    acc *p = (acc *)j.part + q * np, a;
    int64_t m = nch;
    while (m > 1) {   /* run_reduce's pairwise combination */
      int64_t h = 0;
      for (int64_t r = 0; r + 1 < m; r += 2, h++) { acc t = p[r]; acc_merge(&t, &p[r + 1], x->rop, in->t); p[h] = t; }
      if (m & 1) p[h++] = p[m - 1];
      m = h;
    }
    if (nch == 0) acc_init(&a, x->rop, in->t); else a = p[0];
    acc_store(&a, x->rop, x->t, x->val->host);
  }
  rt_free(b->mem, j.part, (size_t)(np * nx) * sizeof(acc));
  return rc;
}

static int run_reduce(rt_backend *b, rt_node *x) {
  const rt_node *in = x->in[0];
  job j = { .b = b, .x = x, .out = x, .chunk = CPU_CHUNK };
  if (x->axis < 0) {
    int64_t nch = (in->n + CPU_CHUNK - 1) / CPU_CHUNK;
    j.n = in->n;
    j.part = rt_calloc(b->mem, nch ? (size_t)nch : 1, sizeof(acc));
    if (!j.part) return rt_seterr(&b->err, GK_ENOMEM, "out of memory");
    j.fn = red_chunk;
    int64_t tasks = nch;
    if (in->val && in->val->n == in->n && in->t == GK_F32 &&
        (x->rop == ROP_SUM || x->rop == ROP_MAX || x->rop == ROP_MIN || x->rop == ROP_ARGMAX || x->rop == ROP_ARGMIN)) {
      j.fn = red_group;
      tasks = (nch + RED_GROUP - 1) / RED_GROUP;
    }
    int rc = job_go(&j, tasks);
    if (rc == GK_OK) {
      /* pairwise combination of the chunk partials, in order */
      acc *p = j.part;
      int64_t m = nch;
      while (m > 1) {
        int64_t h = 0;
        for (int64_t q = 0; q + 1 < m; q += 2, h++) { acc t = p[q]; acc_merge(&t, &p[q + 1], x->rop, in->t); p[h] = t; }
        if (m & 1) p[h++] = p[m - 1];
        m = h;
      }
      acc a;
      if (nch == 0) acc_init(&a, x->rop, in->t); else a = p[0];
      acc_store(&a, x->rop, x->t, x->val->host);
    }
    rt_free(b->mem, j.part, (nch ? (size_t)nch : 1) * sizeof(acc));
    return rc;
  }
  j.rows = in->shape[0]; j.cols = in->shape[1];
  if (x->axis == 1) { j.fn = rowred_chunk; return job_go(&j, j.rows); }
  if (colfold_row(x->rop, in->t, NULL, 0, NULL, NULL)) { j.fn = colmono_chunk; return job_go(&j, (j.cols + COLMONO - 1) / COLMONO); }
  j.fn = colred_chunk;
  return job_go(&j, (j.cols + COLBLOCK - 1) / COLBLOCK);
}

/* ------------------------------------------------------------------ scans */

/* Scans a prologue that has been written into out (in out's dtype), in
** place, continuing carry.  A monoid row runs a tight loop on its combine
** (gk_scalar.h's GK_MONOIDS) in the accumulator acc_merge uses -- double for
** floats, wrapping u64 for integer sums and products, int64 for max/min --
** and stores each prefix converted as acc_store would. */
static void scan_seq(int rop, int excl, gk_dtype t, char *base, int64_t n, int64_t step, acc *carry) {
  int wide = rt_rop_info[rop].acc == RA_WIDE;
#define SCAN_LOOP(T, C, SLOT, ST, COMB) do { \
    T *v = (T *)(void *)base; C c = (C)carry->SLOT; \
    if (excl) for (int64_t q = 0; q < n; q++) { C x = (C)v[q * step]; v[q * step] = (T)c; c = COMB(c, x); } \
    else for (int64_t q = 0; q < n; q++) { c = COMB(c, (C)v[q * step]); v[q * step] = (T)c; } \
    carry->SLOT = (ST)c; } while (0)
#define SCAN_INT(T, COMB) do { if (wide) SCAN_LOOP(T, uint64_t, i, int64_t, COMB); else SCAN_LOOP(T, int64_t, i, int64_t, COMB); } while (0)
#define SCAN_ROW(NAME, name, IDK, COMB) case ROP_##NAME: \
    switch (t) { \
    case GK_BOOL: SCAN_INT(uint8_t, COMB); return; \
    case GK_I32: SCAN_INT(int32_t, COMB); return; \
    case GK_I64: SCAN_INT(int64_t, COMB); return; \
    case GK_F32: SCAN_LOOP(float, double, f, double, COMB); return; \
    case GK_F64: SCAN_LOOP(double, double, f, double, COMB); return; \
    } break;
  switch (rop) {
  GK_MONOIDS(SCAN_ROW)
  default: break;
  }
#undef SCAN_ROW
#undef SCAN_INT
#undef SCAN_LOOP
  size_t es = esz(t);
  for (int64_t q = 0; q < n; q++) {
    char *p = base + (size_t)(q * step) * es;
    acc v; acc_init(&v, rop, t);
    acc before = *carry;
    acc_fold(&v, rop, t, p, 1, 0, 1);
    acc_merge(carry, &v, rop, t);
    acc_store(excl ? &before : carry, rop, t, p);
  }
}

/* A whole-vector scan in parallel, by blocks of SCAN_BLOCK elements: pass 1
** writes each block's prologue into the output and folds the block's total,
** the totals are combined into each block's carry, pass 2 scans each block
** from its carry.  The blocks are fixed, so the result is the same on any
** thread count.  A float sum's rounding grows with the block (a serial run of
** 4096, as on the GPU) plus log2 of the block count -- the bound
** tests/diff/model.py's GS allows -- where one serial loop grows with n. */
#define SCAN_BLOCK 4096
static void scanblk_fill(job *j, evctx *c, int64_t k) {
  const rt_node *x = j->x;
  char *o = (char *)x->val->host;
  size_t es = esz(x->t);
  int64_t s0 = k * SCAN_BLOCK, e0 = j->n - s0 < SCAN_BLOCK ? j->n : s0 + SCAN_BLOCK;
  acc *tot = (acc *)j->part + k;
  acc_init(tot, x->rop, x->t);
  for (int64_t s = s0; s < e0; s += CPU_CHUNK) {
    int64_t len = e0 - s < CPU_CHUNK ? e0 - s : CPU_CHUNK;
    ixset ix = { s, len, NULL, 0 };
    scratch_reset(c);
    const void *p = ev(c, x->in[0], &ix);
    if (!p) { c->failed = 1; return; }
    memmove(o + (size_t)s * es, p, (size_t)len * es);
    acc_fold(tot, x->rop, x->t, o + (size_t)s * es, len, s, 1);
  }
}
/* Pass 2 for SCAN_GROUP consecutive blocks k0.. at once.  A float sum's
** serial chain waits on each add; four blocks' chains interleaved in one
** loop run at once, each the same sequence scan_seq runs (double carry,
** each prefix rounded to the element type), so the bits do not change. */
#define SCAN_GROUP 4
#define SCAN_SUM4(T) do { \
    T *v = (T *)(void *)base; \
    for (int64_t q = 0; q < SCAN_BLOCK; q++) \
      for (int g = 0; g < SCAN_GROUP; g++) { \
        double e = (double)v[g * SCAN_BLOCK + q]; \
        if (x->excl) { v[g * SCAN_BLOCK + q] = (T)cy[g]; cy[g] = cy[g] + e; } \
        else { cy[g] = cy[g] + e; v[g * SCAN_BLOCK + q] = (T)cy[g]; } \
      } } while (0)
static void scanblk_scan(job *j, evctx *c, int64_t k) {
  const rt_node *x = j->x;
  int64_t k0 = k * SCAN_GROUP, nb = (j->n + SCAN_BLOCK - 1) / SCAN_BLOCK;
  (void)c;
  if (x->rop == ROP_SUM && rt_is_float(x->t) && (k0 + SCAN_GROUP) * SCAN_BLOCK <= j->n) {
    double cy[SCAN_GROUP];
    for (int g = 0; g < SCAN_GROUP; g++) cy[g] = ((acc *)j->part)[k0 + g].f;
    char *base = (char *)x->val->host + (size_t)(k0 * SCAN_BLOCK) * esz(x->t);
    if (x->t == GK_F32) SCAN_SUM4(float); else SCAN_SUM4(double);
    return;
  }
  for (int64_t b = k0; b < k0 + SCAN_GROUP && b < nb; b++) {
    int64_t s0 = b * SCAN_BLOCK, len = j->n - s0 < SCAN_BLOCK ? j->n - s0 : SCAN_BLOCK;
    acc carry = ((acc *)j->part)[b];
    scan_seq(x->rop, x->excl, x->t, (char *)x->val->host + (size_t)s0 * esz(x->t), len, 1, &carry);
  }
}
#undef SCAN_SUM4
static int run_scan_vector(rt_backend *b, rt_node *x) {
  int64_t nb = (x->n + SCAN_BLOCK - 1) / SCAN_BLOCK;
  job j = { .b = b, .x = x, .out = x, .n = x->n, .fn = scanblk_fill };
  acc *part = rt_calloc(b->mem, (size_t)nb, sizeof(acc));
  if (!part) return rt_seterr(&b->err, GK_ENOMEM, "out of memory");
  j.part = part;
  int rc = job_go(&j, nb);
  if (rc == GK_OK) {
    /* inclusive prefix of the block totals by recursive doubling (a float
    ** sum's rounding then grows with log2 of the block count, not with it),
    ** then shifted by one: block k's carry is the combine of blocks < k */
    for (int64_t d = 1; d < nb; d *= 2)
      for (int64_t k = nb - 1; k >= d; k--) { acc t = part[k - d]; acc_merge(&t, &part[k], x->rop, x->t); part[k] = t; }
    for (int64_t k = nb - 1; k > 0; k--) part[k] = part[k - 1];
    acc_init(&part[0], x->rop, x->t);
    j.fn = scanblk_scan;
    rc = job_go(&j, (nb + SCAN_GROUP - 1) / SCAN_GROUP);
  }
  rt_free(b->mem, part, (size_t)nb * sizeof(acc));
  return rc;
}

static void scanrow_chunk(job *j, evctx *c, int64_t r) {
  const rt_node *x = j->x;
  char *o = (char *)x->val->host;
  size_t es = esz(x->t);
  acc carry; acc_init(&carry, x->rop, x->t);
  for (int64_t s = 0; s < j->cols; s += CPU_CHUNK) {
    if (job_stopped(j, s)) return;
    int64_t len = j->cols - s < CPU_CHUNK ? j->cols - s : CPU_CHUNK;
    ixset ix = { r * j->cols + s, len, NULL, 0 };
    scratch_reset(c);
    const void *p = ev(c, x->in[0], &ix);
    if (!p) { c->failed = 1; return; }
    char *dst = o + (size_t)(r * j->cols + s) * es;
    memmove(dst, p, (size_t)len * es);
    scan_seq(x->rop, x->excl, x->t, dst, len, 1, &carry);
  }
}

static void scancol_chunk(job *j, evctx *c, int64_t k) {
  const rt_node *x = j->x;
  int64_t c0 = k * COLBLOCK, nc = j->cols - c0 < COLBLOCK ? j->cols - c0 : COLBLOCK;
  char *o = (char *)x->val->host;
  size_t es = esz(x->t);
  acc carry[COLBLOCK];
  for (int64_t q = 0; q < nc; q++) acc_init(&carry[q], x->rop, x->t);
  for (int64_t r = 0; r < j->rows; r++) {
    if (job_stopped(j, r * (CPU_CHUNK / 16))) return;   /* every 1024 rows */
    ixset ix = { r * j->cols + c0, nc, NULL, 0 };
    scratch_reset(c);
    const void *p = ev(c, x->in[0], &ix);
    if (!p) { c->failed = 1; return; }
    char *dst = o + (size_t)(r * j->cols + c0) * es;
    memmove(dst, p, (size_t)nc * es);
    for (int64_t q = 0; q < nc; q++) scan_seq(x->rop, x->excl, x->t, dst + q * es, 1, 1, &carry[q]);
  }
}

static int run_scan(rt_backend *b, rt_node *x) {
  job j = { .b = b, .x = x, .out = x };
  if (x->axis < 0 && x->n > SCAN_BLOCK) return run_scan_vector(b, x);
  if (x->axis < 0) { j.rows = 1; j.cols = x->n; j.fn = scanrow_chunk; return job_go(&j, 1); }
  j.rows = x->shape[0]; j.cols = x->shape[1];
  if (x->axis == 1) { j.fn = scanrow_chunk; return job_go(&j, j.rows); }
  j.fn = scancol_chunk;
  return job_go(&j, (j.cols + COLBLOCK - 1) / COLBLOCK);
}

/* ------------------------------------------------ filter, partition, hist */

static void host_release(rt_backend *b, void *p, size_t bytes);

/* Materializes node x (any kind of elementwise expression) into a fresh
** host buffer; *owned tells whether the caller must free it (host_release). */
static int materialize(rt_backend *b, rt_node *x, void **data, int *owned) {
  if (x->val) { *data = x->val->host; *owned = 0; return GK_OK; }
  rt_value *tmp;
  int rc = rt_value_new(b, x->t, x->ndim, x->shape, &tmp);
  if (rc) return rc;
  rt_node dst = *x;   /* x itself stays unmaterialized while it is evaluated */
  dst.val = tmp;
  rc = run_map(b, x, &dst);
  if (rc) { rt_value_unref(tmp); return rc; }
  /* steal the buffer */
  *data = tmp->host; *owned = 1;
  tmp->host = NULL;
  rt_value_unref(tmp);
  return GK_OK;
}

static int run_select(rt_backend *b, rt_node *x) {
  void *v = NULL, *m = NULL; int ov = 0, om = 0;
  int rc = materialize(b, x->in[0], &v, &ov);
  if (!rc) rc = materialize(b, x->in[1], &m, &om);
  if (!rc) {
    int64_t cnt = 0;
    if (x->op == RT_FILTER) {
      rc = host_filter(x->t, v, m, x->in[0]->n, x->val->host, &cnt);   /* into a buffer of the input's length */
      if (!rc) x->val->count = cnt;
    } else rc = host_partition(x->t, v, m, x->in[0]->n, x->val->host, &cnt);
    if (rc && !b->err.status) rt_seterr(&b->err, rc, rc == GK_EINTERRUPT ? "interrupted" : "filter failed");
  }
  if (ov) host_release(b, v, (size_t)x->in[0]->n * esz(x->in[0]->t));
  if (om) host_release(b, m, (size_t)x->in[1]->n);
  return rc;
}

static int run_hist(rt_backend *b, rt_node *x) {
  void *v = NULL; int ov = 0;
  double lo, hi;
  int rc = materialize(b, x->in[0], &v, &ov);
  if (rc) return rc;
  void *pl = NULL, *ph = NULL; int ol = 0, oh = 0;
  rc = materialize(b, x->in[1], &pl, &ol);
  if (!rc) rc = materialize(b, x->in[2], &ph, &oh);
  if (!rc) {
    lo = *(double *)pl; hi = *(double *)ph;
    /* no memset here: hist_run zeroes the counts in blocks between interrupt checks */
    rc = x->excl ? host_hist_auto(x->in[0]->t, v, x->in[0]->n, x->nbins, x->val->host)
                 : host_hist(x->in[0]->t, v, x->in[0]->n, x->nbins, lo, hi, x->val->host);
    if (rc == GK_ELIMIT)   /* numpy's words: the bins have no finite width */
      rc = rt_seterr(&b->err, GK_EVALUE, "hist: too many bins for the data range [%g, %g]: cannot create %lld finite-sized bins",
                     lo, hi, (long long)x->nbins);
    else if (rc) rt_seterr(&b->err, rc, "hist: the range [%g, %g] is not finite or lo > hi",
                           isnan(lo) ? fabs(lo) : lo, isnan(hi) ? fabs(hi) : hi);   /* "nan", never "-nan" */
  }
  if (ov) host_release(b, v, (size_t)x->in[0]->n * esz(x->in[0]->t));
  if (ol) rt_free(b->mem, pl, 8);
  if (oh) rt_free(b->mem, ph, 8);
  return rc;
}

static int run_matmul(rt_backend *b, rt_node *x) {
  void *pa = NULL, *pb = NULL; int oa = 0, ob = 0;
  int rc = materialize(b, x->in[0], &pa, &oa);
  if (!rc) rc = materialize(b, x->in[1], &pb, &ob);
  if (!rc) {
    int64_t M = x->in[0]->ndim == 2 ? x->in[0]->shape[0] : 1;
    int64_t K = x->in[0]->ndim == 2 ? x->in[0]->shape[1] : x->in[0]->shape[0];
    int64_t N = x->in[1]->ndim == 2 ? x->in[1]->shape[1] : 1;
    rc = host_matmul(x->t, pa, pb, x->val->host, M, N, K);
    if (rc) rt_seterr(&b->err, rc, "matmul failed");
  }
  if (oa) host_release(b, pa, (size_t)x->in[0]->n * esz(x->in[0]->t));
  if (ob) host_release(b, pb, (size_t)x->in[1]->n * esz(x->in[1]->t));
  return rc;
}

/* ------------------------------------------------------------ sort family */

/* sort, argsort, topk, argtopk along x's axis (-1: its 1-d input whole);
** runs (unique's mask) and searchsorted: runtime/host_sort.c. */
static int run_sort(rt_backend *b, rt_node *x) {
  rt_node *in = x->in[0];
  void *v = NULL, *w = NULL; int ov = 0, ow = 0;
  int rc = materialize(b, in, &v, &ov);
  if (!rc && x->op == RT_SEARCH) rc = materialize(b, x->in[1], &w, &ow);
  if (!rc) {
    if (x->op == RT_RUNS) host_runs(in->t, v, in->n, x->val->host);
    else if (x->op == RT_SEARCH) host_searchsorted(in->t, v, in->n, w, x->in[1]->n, x->val->host);
    else {
      static const int code[] = { [RT_SORT - RT_SORT] = 0, [RT_ARGSORT - RT_SORT] = 1, [RT_TOPK - RT_SORT] = 2,
                                  [RT_ARGTOPK - RT_SORT] = 3 };
      int64_t R = x->axis < 0 ? 1 : in->shape[0], C = x->axis < 0 ? in->n : in->shape[1];
      rc = host_sort(in->t, v, R, C, x->axis == 0, code[x->op - RT_SORT], x->nbins, x->val->host);
      if (rc) rt_seterr(&b->err, rc, "out of memory sorting");
    }
  }
  if (ov) host_release(b, v, (size_t)in->n * esz(in->t));
  if (ow) host_release(b, w, (size_t)x->in[1]->n * esz(x->in[1]->t));
  return rc;
}

/* ------------------------------------------------------------ the backend */

/* Large host buffers ask for transparent huge pages (as numpy does from 4
** MiB): a fresh 40 MB result otherwise costs ~10^4 page faults, taken one at
** a time under the kernel's lock, more than the loop that fills it. */
#define CPU_HUGE_MIN ((size_t)4 << 20)
static void advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t b = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (bytes >= CPU_HUGE_MIN && e > b) (void)madvise((void *)b, e - b, MADV_HUGEPAGE);   /* advice: failure changes nothing */
#else
  (void)p; (void)bytes;
#endif
}

/* The cpu backend keeps the last CPU_SPARES large buffers freed for the
** next values of those sizes: a statement run again (or a loop's
** temporaries: a filter's mask and result) gets memory whose pages are
** already there, where a fresh 40 MB costs the kernel zeroing it.  Values are
** freed from other threads too (an export's deleter), so the slots have a lock. */
#define CPU_SPARES 4
#define CPU_SPARE_MAX ((size_t)256 << 20)   /* larger buffers go back at once: four of them is memory to hold idle */
typedef struct cpu_backend {
  rt_backend b;             /* first: what the context holds */
  pthread_mutex_t spare_mu;
  void *spare[CPU_SPARES];  /* freed host buffers (>= CPU_HUGE_MIN bytes), or NULL; [0] the newest */
  size_t spare_bytes[CPU_SPARES];
} cpu_backend;

static void *take_spare(rt_backend *b, size_t bytes) {
  cpu_backend *cb = (cpu_backend *)b;
  void *p = NULL;
  pthread_mutex_lock(&cb->spare_mu);
  for (int k = 0; k < CPU_SPARES && !p; k++)
    if (cb->spare[k] && cb->spare_bytes[k] == bytes) { p = cb->spare[k]; cb->spare[k] = NULL; }
  pthread_mutex_unlock(&cb->spare_mu);
  return p;
}

/* Frees host buffer p of bytes: kept as the newest spare when large (the
** oldest is then freed). */
static void host_release(rt_backend *b, void *p, size_t bytes) {
  cpu_backend *cb = (cpu_backend *)b;
  if (bytes < CPU_HUGE_MIN || bytes > CPU_SPARE_MAX) { rt_free(b->mem, p, bytes); return; }
  pthread_mutex_lock(&cb->spare_mu);
  void *old = cb->spare[CPU_SPARES - 1];
  size_t ob = cb->spare_bytes[CPU_SPARES - 1];
  int k = CPU_SPARES - 1;
  for (int q = 0; q < CPU_SPARES - 1; q++) if (!cb->spare[q]) { k = q; old = NULL; break; }   /* an empty slot first */
  for (; k > 0; k--) { cb->spare[k] = cb->spare[k - 1]; cb->spare_bytes[k] = cb->spare_bytes[k - 1]; }
  cb->spare[0] = p; cb->spare_bytes[0] = bytes;
  pthread_mutex_unlock(&cb->spare_mu);
  if (old) rt_free(b->mem, old, ob);
}

static int cpu_alloc_value(rt_backend *b, gk_dtype t, int ndim, const int64_t *shape, rt_value **out) {
  int64_t n; size_t bytes;
  int rc = rt_shape_count(ndim, shape, esz(t), &n, &bytes, &b->err);
  if (rc) return rc;
  rt_value *v = rt_calloc(b->mem, 1, sizeof *v);
  if (!v) return rt_seterr(&b->err, GK_ENOMEM, "out of memory");
  v->host = bytes >= CPU_HUGE_MIN ? take_spare(b, bytes) : NULL;
  if (!v->host) v->host = rt_alloc(b->mem, bytes ? bytes : 1);
  if (!v->host) {
    rt_free(b->mem, v, sizeof *v);
    return rt_seterr(&b->err, GK_ENOMEM, "out of memory allocating %zu bytes", bytes);
  }
  advise_huge(v->host, bytes);
  v->refs = 1; v->t = t; v->ndim = ndim; v->n = n; v->bytes = bytes;
  memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
  v->where = RT_ON_HOST; v->be = b;
  *out = v;
  return GK_OK;
}

static void cpu_free_storage(rt_backend *b, rt_value *v) {
  if (v->release) v->release(v->release_ud, v->host);
  else if (v->host) host_release(b, v->host, v->bytes ? v->bytes : 1);
  rt_free(b->mem, v, sizeof *v);
}

static int is_out(const rt_group *g, const rt_node *x) {
  for (int i = 0; i < g->nout; i++) if (g->outs[i] == x) return 1;
  return 0;
}

/* run_map writes x's values; for an output that is elementwise its own val
** is the destination, so evaluation must not read x->val as an input: clear
** it during the run. */
static int run_map_out(rt_backend *b, rt_node *x) {
  rt_value *v = x->val;
  x->val = NULL;
  rt_node dst = *x;
  dst.val = v;
  int rc = run_map(b, x, &dst);
  x->val = v;
  return rc;
}

/* Runs group g: heavy nodes in order (temporaries for those not output),
** then each elementwise output. */
/* Nothing to prepare; under GK_NVRTC_CHECK the cuda lowering checks that
** the group's kernel compiles (runtime/cuda_lower.h). */
static int cpu_prepare_group(rt_backend *b, rt_group *g, int tf32) {
  return cuda_prepare(b, g, 0, 132, 0, tf32);
}

static int cpu_run_group(rt_backend *b, rt_group *g) {
  int rc = GK_OK, i;
  /* allocate the outputs */
  for (i = 0; i < g->nout && !rc; i++) {
    rt_node *x = g->outs[i];
    if (!x->val) rc = b->alloc_value(b, x->t, x->ndim, x->shape, &x->val);
  }
  host_scratch(b->mem->fn, b->mem->ud);   /* the heavy ops' scratch under the context's hook */
  unsigned char *early = rt_calloc(b->mem, (size_t)g->nnodes + 1, 1);   /* computed with an earlier node (NULL: none are) */
  for (i = 0; i < g->nnodes && !rc; i++) {
    rt_node *x = g->nodes[i];
    if (rt_op_info[x->op].cls != RC_HEAVY || (x->val && !is_out(g, x)) || (early && early[i])) continue;
    if (!x->val) rc = b->alloc_value(b, x->t, x->ndim, x->shape, &x->val);
    if (rc) break;
    rt_node *xs[RED_MULTI];
    int nx = 0;
    if (x->op == RT_REDUCE && x->axis < 0 && early) {   /* later whole-array reductions of the same input: one pass */
      xs[nx++] = x;
      for (int q = i + 1; q < g->nnodes && nx < RED_MULTI && !rc; q++) {
        rt_node *y = g->nodes[q];
        if (y->op != RT_REDUCE || y->axis >= 0 || y->in[0] != x->in[0] || (y->val && !is_out(g, y))) continue;
        if (!y->val) rc = b->alloc_value(b, y->t, y->ndim, y->shape, &y->val);
        xs[nx++] = y; early[q] = 1;
      }
      if (rc) break;
    }
    switch (x->op) {
    case RT_REDUCE: rc = nx > 1 ? run_reduce_multi(b, xs, nx) : run_reduce(b, x); break;
    case RT_SCAN: rc = run_scan(b, x); break;
    case RT_FILTER: case RT_PARTITION: rc = run_select(b, x); break;
    case RT_HIST: rc = run_hist(b, x); break;
    case RT_MATMUL: rc = run_matmul(b, x); break;
    case RT_SORT: case RT_ARGSORT: case RT_TOPK: case RT_ARGTOPK: case RT_RUNS: case RT_SEARCH: rc = run_sort(b, x); break;
    }
    if (!rc && b->interrupt && atomic_load_explicit(b->interrupt, memory_order_relaxed))
      rc = rt_seterr(&b->err, GK_EINTERRUPT, "interrupted");   /* the host loops stopped early (host_stopped) */
  }
  host_scratch(NULL, NULL);
  if (early) rt_free(b->mem, early, (size_t)g->nnodes + 1);
  for (i = 0; i < g->nout && !rc; i++) {
    rt_node *x = g->outs[i];
    if (rt_op_info[x->op].cls != RC_HEAVY) rc = run_map_out(b, x);
  }
  /* drop the temporaries of heavy nodes that are not outputs */
  for (i = 0; i < g->nnodes; i++) {
    rt_node *x = g->nodes[i];
    if (rt_op_info[x->op].cls == RC_HEAVY && x->val && !is_out(g, x) && x->op != RT_INPUT) {
      rt_value_unref(x->val); x->val = NULL;
    }
  }
  if (rc) for (i = 0; i < g->nout; i++) {
    rt_node *x = g->outs[i];
    if (x->val) { rt_value_unref(x->val); x->val = NULL; }
  }
  return rc;
}

static int cpu_read(rt_backend *b, rt_value *v, void *dst) { memcpy(dst, v->host, v->bytes); return GK_OK; }
static int cpu_write(rt_backend *b, rt_value *v, const void *src) { memcpy(v->host, src, v->bytes); return GK_OK; }
static int cpu_sync(rt_backend *b) { return GK_OK; }
static void cpu_close(rt_backend *b) {
  cpu_backend *cb = (cpu_backend *)b;
  for (int k = 0; k < CPU_SPARES; k++)
    if (cb->spare[k]) rt_free(b->mem, cb->spare[k], cb->spare_bytes[k]);
  pthread_mutex_destroy(&cb->spare_mu);
  rt_free(b->mem, cb, sizeof *cb);
}

int rt_cpu_open(rt_mem *mem, rt_backend **out, rt_err *e) {
  cpu_backend *cb = rt_calloc(mem, 1, sizeof *cb);
  if (!cb) return rt_seterr(e, GK_ENOMEM, "out of memory");
  pthread_mutex_init(&cb->spare_mu, NULL);
  rt_backend *b = &cb->b;
  b->name = "cpu";
  b->mem = mem;
  b->alloc_value = cpu_alloc_value;
  b->prepare_group = cpu_prepare_group;
  b->run_group = cpu_run_group;
  b->read = cpu_read;
  b->write = cpu_write;
  b->sync = cpu_sync;
  b->free_storage = cpu_free_storage;
  b->close = cpu_close;
  *out = b;
  return GK_OK;
}
