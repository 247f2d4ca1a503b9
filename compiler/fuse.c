/*
** compiler/fuse.c -- from pending graph to plan: which nodes run together in
** one kernel, in what order, and running the plan on the backend.
**
** Anchors are the nodes a group is built around: heavy ops (reduce, scan,
** filter, partition, hist, matmul, the sort family) and the values asked for.  Elementwise
** nodes are never anchors when fusion is on: they are inlined into every
** group that reads them (their producer's stores and consumer's loads).
** Groups then merge (docs/fusion.md):
**   - a target whose pending anchors are all row (column) reductions of its
**     own matrix shape joins them: one row kernel (softmax, layernorm);
**   - a reduction or scalar whose pending anchors are all whole-array
**     reductions of one length joins them: one reduction kernel with an
**     epilogue (sqrt(sum(x*x))/n, sum(exp(x - max(x))));
**   - leaf groups (no pending inputs) of whole-array reductions of one length
**     merge horizontally (min, max and sum of x in one pass), and so do leaf
**     maps of one shape.
** Every merge joins groups that depend on nothing pending outside
** themselves, so the merged plan stays acyclic; groups run in a topological
** order of their dependencies.
*/
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "compiler/cc_int.h"

typedef struct planner {
  cc_session *s;
  rt_node **post;   /* pending nodes in post-order */
  int npost, cap;
  int *parent;      /* union-find over anchor indices (by post index) */
} planner;

/* Arrays freed where their length is not at hand carry it in a header, so
** the allocator hook is told the size it gave (gk.h's contract). */
#define SZ_HDR 16   /* keeps max_align_t alignment */
static void *sz_alloc(rt_mem *m, size_t n) {
  if (n > SIZE_MAX - SZ_HDR) return NULL;
  char *p = rt_alloc(m, n + SZ_HDR);
  if (!p) return NULL;
  memcpy(p, &(size_t){ n + SZ_HDR }, sizeof(size_t));
  return p + SZ_HDR;
}
static void *sz_calloc(rt_mem *m, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = sz_alloc(m, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}
static void sz_free(rt_mem *m, void *p) {
  if (!p) return;
  size_t n;
  memcpy(&n, (char *)p - SZ_HDR, sizeof n);
  rt_free(m, (char *)p - SZ_HDR, n);
}

static int push_post(planner *p, rt_node *x) {
  if (p->npost == p->cap) {
    int nc = p->cap ? p->cap * 2 : 64;
    rt_node **n = rt_realloc(p->s->mem, p->post, sizeof(rt_node *) * (size_t)p->cap, sizeof(rt_node *) * (size_t)nc);
    if (!n) return GK_ENOMEM;
    p->post = n; p->cap = nc;
  }
  G(x)->post = p->npost;
  p->post[p->npost++] = x;
  return GK_OK;
}

/* Iterative post-order DFS over pending nodes. */
static int collect(planner *p, rt_node **targets, int nt) {
  cc_session *s = p->s;
  int scap = 256, sp = 0, rc = GK_OK;
  struct fr { rt_node *x; int next; } *st = rt_alloc(s->mem, sizeof(struct fr) * (size_t)scap);
  if (!st) return GK_ENOMEM;
  for (int t = 0; t < nt && !rc; t++) {
    rt_node *r = targets[t];
    if (r->val || G(r)->mark == s->stamp) continue;
    G(r)->mark = s->stamp;
    st[sp].x = r; st[sp].next = 0; sp++;
    while (sp > 0 && !rc) {
      struct fr *f = &st[sp - 1];
      if (f->next < f->x->nin) {
        rt_node *c = f->x->in[f->next++];
        if (c->val || G(c)->mark == s->stamp) continue;
        G(c)->mark = s->stamp;
        if (sp == scap) {
          struct fr *n = rt_realloc(s->mem, st, sizeof(struct fr) * (size_t)scap, sizeof(struct fr) * (size_t)scap * 2);
          if (!n) { rc = GK_ENOMEM; break; }
          st = n; scap *= 2;
        }
        st[sp].x = c; st[sp].next = 0; sp++;
      } else {
        rc = push_post(p, f->x);
        sp--;
      }
    }
  }
  rt_free(s->mem, st, sizeof(struct fr) * (size_t)scap);
  return rc;
}

static int is_pending(cc_session *s, const rt_node *x) { return !x->val && G(x)->mark == s->stamp; }

/* The estimated compile cost of inlining x into a kernel, in units of a
** simple arithmetic op: libm calls compile to long inlined bodies (sinf's
** and powf's range reduction most of all), and NVRTC's time grows faster
** than the code (100 chained sins were one 131 s kernel).  A pending chain
** whose summed cost passes CC_MAX_FUSE_COST is cut into several kernels. */
static int fuse_cost(const rt_node *x) {
  switch (x->op) {
  case RT_SIN: case RT_COS: case RT_TAN: case RT_POW: return 32;
  case RT_ASIN: case RT_ACOS: case RT_ATAN: case RT_ATAN2: case RT_SINH: case RT_COSH: case RT_TANH:
  case RT_EXPM1: case RT_LOG1P: case RT_HYPOT: case RT_RANDN: return 12;
  case RT_EXP: case RT_LOG: case RT_LOG2: case RT_LOG10: case RT_EXP2: case RT_SIGMOID: case RT_MOD:
  case RT_RAND: return 8;
  case RT_DIV: case RT_SQRT: case RT_RSQRT: return 4;
  case RT_INPUT: case RT_CONST: case RT_IOTA: return 0;
  default: return 1;
  }
}

/* A view that reads its input at other indices than its own (not the
** identity: an offset, other strides, fewer elements). */
static int moves_index(const rt_node *x) {
  if (x->op != RT_VIEW) return 0;
  if (x->voff != 0 || x->n != x->in[0]->n) return 1;
  int64_t st = 1;
  for (int d = x->ndim - 1; d >= 0; d--) {
    if (x->shape[d] != 1 && x->vstride[d] != st) return 1;
    st *= x->shape[d];
  }
  return 0;
}

/* Bounds the index maps a fused node is read under.  A node inlined into a
** kernel is computed once per distinct chain of views between it and the
** kernel's anchors (the cuda code generator memoises a value by node and
** index expression, and two chains of views are two expressions even when
** they land on the same element), so `x = x[1:] + x[:-1]` repeated n times
** would inline the first x under 2^n chains.  Walking users before inputs,
** each pending non-anchor node gets the set of chains (hashed) its users
** read it under; a node with more than CC_MAX_VIEW_PATHS becomes an anchor
** (computed into memory once, then read under any index map).  Total work
** O(edges * CC_MAX_VIEW_PATHS^2). */
static int bound_view_paths(planner *p) {
  cc_session *s = p->s;
  int n = p->npost;
  uint64_t *set = sz_alloc(s->mem, sizeof(uint64_t) * CC_MAX_VIEW_PATHS * (size_t)n);
  int *cnt = sz_calloc(s->mem, (size_t)n, sizeof(int));
  if (!set || !cnt) { sz_free(s->mem, set); sz_free(s->mem, cnt); return GK_ENOMEM; }
  for (int i = n - 1; i >= 0; i--) {
    rt_node *x = p->post[i];
    uint64_t *mine = set + (size_t)i * CC_MAX_VIEW_PATHS;
    if (G(x)->anchor || !cnt[i]) { cnt[i] = 1; mine[0] = 0; }   /* read at the kernel's own index */
    int mv = moves_index(x);
    for (int j = 0; j < x->nin; j++) {
      rt_node *c = x->in[j];
      if (!is_pending(s, c) || G(c)->anchor || G(c)->post < 0) continue;
      int k = G(c)->post;
      uint64_t *theirs = set + (size_t)k * CC_MAX_VIEW_PATHS;
      for (int a = 0; a < cnt[i] && !G(c)->anchor; a++) {
        uint64_t h = mv ? cc_mix(mine[a] ^ 0x9e3779b97f4a7c15ull, (uint64_t)(uintptr_t)x) : mine[a];
        int b = 0;
        while (b < cnt[k] && theirs[b] != h) b++;
        if (b < cnt[k]) continue;
        if (cnt[k] == CC_MAX_VIEW_PATHS) { G(c)->anchor = 1; break; }
        theirs[cnt[k]++] = h;
      }
    }
  }
  sz_free(s->mem, set); sz_free(s->mem, cnt);
  return GK_OK;
}

static int uf_find(planner *p, int i) {
  while (p->parent[i] != i) { p->parent[i] = p->parent[p->parent[i]]; i = p->parent[i]; }
  return i;
}
static void uf_join(planner *p, int a, int b) {
  a = uf_find(p, a); b = uf_find(p, b);
  if (a != b) { if (a < b) p->parent[b] = a; else p->parent[a] = b; }
}

/* Marks (in mark2[]) the anchors reachable from x's inputs through pending
** non-anchor nodes: the anchors x reads directly.  Uses an explicit stack. */
static int direct_deps(planner *p, rt_node *x, int *out, int *nout, char *seen) {
  cc_session *s = p->s;
  int cap = 64, sp = 0;
  rt_node **st = rt_alloc(s->mem, sizeof(rt_node *) * (size_t)cap);
  if (!st) return GK_ENOMEM;
  for (int i = 0; i < x->nin; i++) st[sp++] = x->in[i];
  while (sp > 0) {
    rt_node *y = st[--sp];
    if (!is_pending(s, y) || seen[G(y)->post]) continue;
    seen[G(y)->post] = 1;
    if (G(y)->anchor) { out[(*nout)++] = G(y)->post; continue; }
    for (int i = 0; i < y->nin; i++) {
      if (sp == cap) {
        rt_node **n = rt_realloc(s->mem, st, sizeof(rt_node *) * (size_t)cap, sizeof(rt_node *) * (size_t)cap * 2);
        if (!n) { rt_free(s->mem, st, sizeof(rt_node *) * (size_t)cap); return GK_ENOMEM; }
        st = n; cap *= 2;
      }
      st[sp++] = y->in[i];
    }
  }
  rt_free(s->mem, st, sizeof(rt_node *) * (size_t)cap);
  return GK_OK;
}

/* 1 when a lies below index map y within the group being formed (pending,
** non-anchor nodes), or when that cannot be told (a deep chain). */
static int below_index_map(cc_session *s, rt_node *y, rt_node *a) {
  rt_node *st[128];
  int sp = 0;
  st[sp++] = y;
  while (sp > 0) {
    rt_node *z = st[--sp];
    for (int k = 0; k < z->nin; k++) {
      if (z->in[k] == a) return 1;
      if (is_pending(s, z->in[k]) && !G(z->in[k])->anchor) { if (sp == 128) return 1; st[sp++] = z->in[k]; }
    }
  }
  return 0;
}

/* 1 when every path from map x down to anchor a goes through elementwise
** ops only (a is read at x's own index: fusable into a's store).  An index
** map (view, reshape, gather, concat) on a path to a -- x itself included,
** as when a reversed view of a scan's epilogue is an output -- reads a
** elsewhere. */
static int same_index_path(planner *p, rt_node *x, rt_node *a) {
  cc_session *s = p->s;
  rt_node *st[128];
  int sp = 0;
  st[sp++] = x;
  while (sp > 0) {
    rt_node *y = st[--sp];
    if (rt_op_info[y->op].cls == RC_IDX) {
      if (below_index_map(s, y, a)) return 0;
      continue;
    }
    for (int i = 0; i < y->nin; i++) {
      rt_node *c = y->in[i];
      if (c == a || !is_pending(s, c) || G(c)->anchor) continue;
      if (sp == 128) return 0;
      st[sp++] = c;
    }
  }
  return 1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* A view that permutes its input's elements (no broadcast, no offset,
** every element once): the strides are a permutation of the input's. */
static int axis_perm(const rt_node *v) {
  if (v->n != v->in[0]->n || v->ndim != v->in[0]->ndim) return 0;
  int used[GK_MAX_DIMS] = {0};
  for (int i = 0; i < v->ndim; i++) {
    int64_t st = 1;
    int found = 0;
    for (int d = v->ndim - 1; d >= 0; d--) {
      if (!used[d] && v->vstride[i] == st && v->shape[i] == v->in[0]->shape[d]) { used[d] = 1; found = 1; break; }
      st *= v->in[0]->shape[d];
    }
    if (!found) return 0;
  }
  return 1;
}

static int red_kind(const rt_node *x) { return x->op == RT_REDUCE ? (x->axis < 0 ? 1 : 2) : 0; }

/* Group kind from its anchors. */
static rt_group_kind kind_of_group(rt_node **anc, int n) {
  int k = RG_MAP;
  for (int i = 0; i < n; i++) {
    rt_node *x = anc[i];
    switch (x->op) {
    case RT_MATMUL: return RG_MATMUL;
    case RT_HIST: return RG_HIST;
    case RT_FILTER: return RG_FILTER;
    case RT_PARTITION: return RG_PARTITION;
    case RT_SCAN: return RG_SCAN;
    case RT_SORT: case RT_ARGSORT: case RT_TOPK: case RT_ARGTOPK: case RT_RUNS: case RT_SEARCH: return RG_SORT;
    case RT_REDUCE: if (x->axis >= 0) k = RG_ROWS; else if (k != RG_ROWS) k = RG_REDUCE; break;
    }
  }
  if (k == RG_MAP && n == 1 && anc[0]->op == RT_VIEW && anc[0]->in[0]->val && anc[0]->ndim >= 2) {
    int zero = 0;
    for (int d = 0; d < anc[0]->ndim; d++) if (!anc[0]->vstride[d]) zero = 1;
    if (!zero && anc[0]->voff == 0 && anc[0]->n == anc[0]->in[0]->n) return RG_TRANSPOSE;
  }
  return (rt_group_kind)k;
}

/* 1 when x's pending inputs hold no heavy op (a reduction that could join
** a horizontal group of leaves).  Bounded walk. */
static int leaf_reduce(cc_session *s, rt_node *x, int64_t *len) {
  if (x->val || x->op != RT_REDUCE || x->axis >= 0 || x->rop == ROP_ARGMAX || x->rop == ROP_ARGMIN) return 0;
  rt_node *st[64];
  int sp = 0, seen = 0;
  st[sp++] = x->in[0];
  while (sp > 0) {
    rt_node *y = st[--sp];
    if (y->val) continue;
    if (rt_op_info[y->op].cls == RC_HEAVY || ++seen > 256) return 0;
    for (int i = 0; i < y->nin; i++) { if (sp == 64) return 0; st[sp++] = y->in[i]; }
  }
  *len = x->in[0]->n;
  return 1;
}

/* Adds to the targets the pending variables that are leaf reductions of a
** length some target's leaf reduction has: they share its pass for free
** (`s = sum(x); t = max(x)` then `print(s)` computes t too). */
static int pull_siblings(cc_session *s, rt_node ***targets, int *nt, rt_node **own, int *nown) {
  int64_t lens[8]; int nl = 0;
  for (int i = 0; i < *nt && nl < 8; i++) {
    rt_node *x = (*targets)[i];
    int64_t l;
    if (leaf_reduce(s, x, &l)) lens[nl++] = l;
    for (int k = 0; k < x->nin && nl < 8; k++) if (leaf_reduce(s, x->in[k], &l)) lens[nl++] = l;
  }
  if (!nl) return 0;
  int cap = 0;
  for (int i = 0; i < s->nvars; i++) {
    rt_node *x = s->vars[i].v.x;
    int64_t l;
    if (!leaf_reduce(s, x, &l)) continue;
    for (int k = 0; k < nl; k++) if (lens[k] == l) { cap++; break; }
  }
  if (!cap) return 0;
  rt_node **t = rt_alloc(s->mem, sizeof(rt_node *) * (size_t)(*nt + cap));
  if (!t) return 0;
  memcpy(t, *targets, sizeof(rt_node *) * (size_t)*nt);
  int m = *nt;
  for (int i = 0; i < s->nvars && m < *nt + cap; i++) {
    rt_node *x = s->vars[i].v.x;
    int64_t l;
    if (!leaf_reduce(s, x, &l)) continue;
    for (int k = 0; k < nl; k++) if (lens[k] == l) { t[m++] = x; break; }
  }
  *own = (rt_node *)t; *nown = *nt + cap;
  *targets = t; *nt = m;
  return 1;
}

/* ------------------------------------------------------------ plan cache
** A plan depends only on the structure of the pending graph: ops, dtypes,
** ranks, constants, which nodes are targets or bound to variables, the
** dtypes and ranks of the materialized inputs, and which of their sizes
** (dims, element counts, view offsets and strides, bin counts) are 0, 1 or
** equal to each other -- not on the sizes themselves (fusion compares sizes
** only for equality and with 0 and 1), not on the inputs' values or the
** random streams' seeds and offsets (kernel parameters).  The signature
** serializes exactly that, every other size as the number of its first
** appearance; the sizes themselves go beside it.  A hit rebuilds the groups
** by position (node i of the post-order, materialized input k) and reuses
** the lowered text and launch description when the sizes are the same, so a
** statement re-run on new data (gk_step, a REPL line, a loop in a script)
** neither plans nor lowers; on new sizes it lowers the groups again (no
** fusion; the same text, since sizes are kernel parameters: a memory hit of
** the kernel cache) and remembers the plan for the new sizes. */

typedef struct pc_group {
  rt_group g;              /* launch fields and kind; pointers unused */
  int *nodes, *outs, *ins; /* post-order index, or -(k+1) for materialized input k */
} pc_group;

typedef struct pc_entry {
  uint64_t hash;
  uint64_t *sig;
  size_t nsig;
  int64_t *vals;           /* the sizes the launch descriptions are for */
  size_t nvals;
  int ngroups;
  pc_group *groups;
  int *order;
} pc_entry;

typedef struct sigbuf {
  uint64_t *w; size_t n, cap; int fail;
  int64_t *vals; size_t nv, capv;   /* distinct sizes other than 0 and 1, in order of appearance */
  int64_t *cv; size_t ncv, capcv;   /* constants' values, in order */
  uint32_t *ht; size_t htcap;       /* open addressing: 1 + index into vals, 0 empty */
} sigbuf;

static void sig_push(cc_session *s, sigbuf *b, uint64_t v) {
  if (b->fail) return;
  if (b->n == b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    uint64_t *w = rt_realloc(s->mem, b->w, b->cap * 8, nc * 8);
    if (!w) { b->fail = 1; return; }
    b->w = w; b->cap = nc;
  }
  b->w[b->n++] = v;
}

static int sig_val(cc_session *s, sigbuf *b, int64_t **a, size_t *n, size_t *cap, int64_t v) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 64;
    int64_t *w = rt_realloc(s->mem, *a, *cap * 8, nc * 8);
    if (!w) { b->fail = 1; return -1; }
    *a = w; *cap = nc;
  }
  (*a)[(*n)++] = v;
  return 0;
}

/* A size: 0 and 1 as themselves, any other value as 2 + the number of its
** first appearance (equal sizes get equal numbers). */
static void sig_size(cc_session *s, sigbuf *b, int64_t v) {
  if (b->fail) return;
  if (v == 0 || v == 1) { sig_push(s, b, (uint64_t)v); return; }
  if (2 * (b->nv + 1) > b->htcap) {
    size_t nc = b->htcap ? b->htcap * 2 : 64;
    uint32_t *t = rt_calloc(s->mem, nc, sizeof(uint32_t));
    if (!t) { b->fail = 1; return; }
    for (size_t k = 0; k < b->nv; k++) {
      size_t h = (size_t)cc_mix(0, (uint64_t)b->vals[k]) & (nc - 1);
      while (t[h]) h = (h + 1) & (nc - 1);
      t[h] = (uint32_t)(k + 1);
    }
    rt_free(s->mem, b->ht, b->htcap * sizeof(uint32_t));
    b->ht = t; b->htcap = nc;
  }
  size_t h = (size_t)cc_mix(0, (uint64_t)v) & (b->htcap - 1);
  while (b->ht[h] && b->vals[b->ht[h] - 1] != v) h = (h + 1) & (b->htcap - 1);
  if (!b->ht[h]) {
    if (sig_val(s, b, &b->vals, &b->nv, &b->capv, v)) return;
    b->ht[h] = (uint32_t)b->nv;
  }
  sig_push(s, b, (uint64_t)1 << 61 | (uint64_t)(b->ht[h] + 1));
}

/* A constant's value: data, beside the signature (fusion never reads it). */
static void sig_const(cc_session *s, sigbuf *b, const rt_node *x) {
  uint64_t c; memcpy(&c, &x->c, 8);
  sig_push(s, b, (uint64_t)1 << 60);
  sig_val(s, b, &b->cv, &b->ncv, &b->capcv, (int64_t)c);
}

/* Serializes the pending graph p.post (targets flagged in istarget);
** materialized inputs are numbered in order of first use into mat[]. */
static int plan_signature(planner *p, const char *istarget, sigbuf *b, rt_node **mat, int *nmat) {
  cc_session *s = p->s;
  sig_push(s, b, (uint64_t)s->opt_fusion | (uint64_t)s->opt_tf32 << 1 | (uint64_t)p->npost << 8);
  for (int i = 0; i < p->npost; i++) {
    rt_node *x = p->post[i];
    sig_push(s, b, (uint64_t)x->op | (uint64_t)x->rop << 8 | (uint64_t)(uint8_t)x->axis << 16 | (uint64_t)x->excl << 24 |
                   (uint64_t)x->t << 32 | (uint64_t)x->ndim << 40 | (uint64_t)x->nin << 48 |
                   (uint64_t)(istarget[i] != 0) << 56 | (uint64_t)(G(x)->bound > 0) << 57);
    for (int d = 0; d < x->ndim; d++) sig_size(s, b, x->shape[d]);
    sig_size(s, b, x->n);
    if (x->op == RT_CONST) sig_const(s, b, x);
    if (x->op == RT_VIEW) { sig_size(s, b, x->voff); for (int d = 0; d < x->ndim; d++) sig_size(s, b, x->vstride[d]); }
    if (x->op == RT_HIST || x->op == RT_TOPK || x->op == RT_ARGTOPK) sig_size(s, b, x->nbins);
    for (int k = 0; k < x->nin; k++) {
      rt_node *c = x->in[k];
      if (is_pending(s, c)) { sig_push(s, b, (uint64_t)G(c)->post); continue; }
      if (G(c)->mark != -s->stamp) {
        G(c)->mark = -s->stamp;
        G(c)->post = (*nmat)++;
        mat[G(c)->post] = c;
        sig_push(s, b, (uint64_t)1 << 63 | (uint64_t)c->t << 8 | (uint64_t)c->ndim);
        for (int d = 0; d < c->ndim; d++) sig_size(s, b, c->shape[d]);
        sig_size(s, b, c->n);
      }
      sig_push(s, b, (uint64_t)1 << 62 | (uint64_t)G(c)->post);
    }
  }
  return b->fail ? GK_ENOMEM : GK_OK;
}

static uint64_t sig_hash(const sigbuf *b) {
  uint64_t h = 0x243f6a8885a308d3ull;
  for (size_t i = 0; i < b->n; i++) h = cc_mix(h, b->w[i]);
  return h;
}

static void pc_entry_free(cc_session *s, pc_entry *e) {
  for (int g = 0; g < e->ngroups; g++) {
    pc_group *q = &e->groups[g];
    sz_free(s->mem, q->nodes); sz_free(s->mem, q->outs); sz_free(s->mem, q->ins);
    rt_prep_free(s->mem, q->g.prep);
  }
  sz_free(s->mem, e->groups);
  sz_free(s->mem, e->order);
  sz_free(s->mem, e->sig);
  sz_free(s->mem, e->vals);
  memset(e, 0, sizeof *e);
}

void cc_plan_cache_free(cc_session *s) {
  if (!s->pcache) return;
  for (int i = 0; i < CC_PLAN_CACHE; i++) pc_entry_free(s, &s->pcache[i]);
  rt_free(s->mem, s->pcache, sizeof(pc_entry) * CC_PLAN_CACHE);
  s->pcache = NULL;
}

void cc_plan_stats(cc_session *s, int64_t *hits, int64_t *misses) {
  if (hits) *hits = s->pc_hits;
  if (misses) *misses = s->pc_misses;
}

/* The plan in e was lowered for the sizes and constants in b. */
static int pc_same_vals(const pc_entry *e, const sigbuf *b) {
  return e->nvals == b->nv + b->ncv && (!b->nv || !memcmp(e->vals, b->vals, b->nv * 8)) &&
         (!b->ncv || !memcmp(e->vals + b->nv, b->cv, b->ncv * 8));
}

static pc_entry *pc_find(cc_session *s, const sigbuf *b, uint64_t h) {
  if (!s->pcache) return NULL;
  for (int i = 0; i < CC_PLAN_CACHE; i++) {
    pc_entry *e = &s->pcache[i];
    if (e->sig && e->hash == h && e->nsig == b->n && !memcmp(e->sig, b->w, b->n * 8)) return e;
  }
  return NULL;
}

static int pc_index(cc_session *s, const rt_node *x) {
  return G(x)->mark == s->stamp ? G(x)->post : -(G(x)->post + 1);
}

/* Remembers the plan just run (before its outputs are frozen), in entry
** `into` (the one it came from, lowered again for new sizes) or the next
** slot.  Failure to remember is not an error. */
static void pc_store(cc_session *s, const sigbuf *b, uint64_t h, rt_group *groups, int ngroups, const int *order,
                     pc_entry *into) {
  if (!s->pcache && !(s->pcache = rt_calloc(s->mem, CC_PLAN_CACHE, sizeof(pc_entry)))) return;
  pc_entry *e = into ? into : &s->pcache[s->pc_next];
  pc_entry_free(s, e);
  e->groups = sz_calloc(s->mem, (size_t)(ngroups ? ngroups : 1), sizeof(pc_group));
  e->order = sz_alloc(s->mem, sizeof(int) * (size_t)(ngroups ? ngroups : 1));
  e->sig = sz_alloc(s->mem, b->n * 8);
  e->vals = sz_alloc(s->mem, (b->nv + b->ncv + 1) * 8);
  if (!e->groups || !e->order || !e->sig || !e->vals) goto fail;
  if (b->nv) memcpy(e->vals, b->vals, b->nv * 8);     /* vals / cv may be NULL when empty */
  if (b->ncv) memcpy(e->vals + b->nv, b->cv, b->ncv * 8);
  e->nvals = b->nv + b->ncv;
  e->ngroups = ngroups;
  if (ngroups) memcpy(e->order, order, sizeof(int) * (size_t)ngroups);
  memcpy(e->sig, b->w, b->n * 8);
  e->nsig = b->n;
  e->hash = h;
  for (int g = 0; g < ngroups; g++) {
    const rt_group *src = &groups[g];
    pc_group *q = &e->groups[g];
    q->g = *src;
    q->g.nodes = q->g.outs = q->g.ins = NULL;
    q->g.prep = NULL;
    q->nodes = sz_alloc(s->mem, sizeof(int) * (size_t)(src->nnodes + 1));
    q->outs = sz_alloc(s->mem, sizeof(int) * (size_t)(src->nout + 1));
    q->ins = sz_alloc(s->mem, sizeof(int) * (size_t)(src->nin + 1));
    if (!q->nodes || !q->outs || !q->ins) goto fail;
    for (int k = 0; k < src->nnodes; k++) q->nodes[k] = pc_index(s, src->nodes[k]);
    for (int k = 0; k < src->nout; k++) q->outs[k] = pc_index(s, src->outs[k]);
    for (int k = 0; k < src->nin; k++) q->ins[k] = pc_index(s, src->ins[k]);
    if (src->prep && !(q->g.prep = rt_prep_copy(s->mem, src->prep))) goto fail;
  }
  if (!into) s->pc_next = (s->pc_next + 1) % CC_PLAN_CACHE;
  return;
fail:
  pc_entry_free(s, e);
}

/* GK_PLAN_CACHE=verify: prepares a group taken from the cache afresh and
** checks that the text and the launch list are the ones the cache gave (a
** check of the cache that needs no GPU: run with GK_NVRTC_CHECK=1 on the
** cpu backend, or on a GPU). */
static int pc_verify(cc_session *s, const rt_group *g) {
  rt_group f = *g;
  f.prep = NULL;
  rt_err_clear(&s->be->err);
  int rc = s->be->prepare_group(s->be, &f, s->opt_tf32);
  if (rc) { rt_prep_free(s->mem, f.prep); return cc_error(s, s->errloc, rc, "%s", s->be->err.msg); }
  int same = rt_prep_same(f.prep, g->prep) && f.nlaunch == g->nlaunch;
  rt_prep_free(s->mem, f.prep);
  if (!same) return cc_error(s, s->errloc, GK_EMISUSE, "internal error: a cached plan's %s kernel differs from a fresh lowering", rt_group_name[g->kind]);
  return GK_OK;
}

/* Rebuilds the groups of cached plan e for the graph in p.post / mat[].
** *relower[g] is set when a group's text must be lowered again. */
static int pc_rebuild(cc_session *s, planner *p, rt_node **mat, const pc_entry *e, rt_group **out, int **order, char **relower) {
  rt_group *groups = sz_calloc(s->mem, (size_t)(e->ngroups ? e->ngroups : 1), sizeof(rt_group));
  int *ord = sz_alloc(s->mem, sizeof(int) * (size_t)(e->ngroups ? e->ngroups : 1));
  char *rl = sz_calloc(s->mem, (size_t)(e->ngroups ? e->ngroups : 1), 1);
  if (!groups || !ord || !rl) {
    sz_free(s->mem, groups); sz_free(s->mem, ord); sz_free(s->mem, rl);
    return GK_ENOMEM;
  }
  *out = groups; *order = ord; *relower = rl;
  memcpy(ord, e->order, sizeof(int) * (size_t)e->ngroups);
  for (int g = 0; g < e->ngroups; g++) {
    const pc_group *q = &e->groups[g];
    rt_group *gr = &groups[g];
    *gr = q->g;
    gr->prep = NULL;
    gr->nodes = sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(q->g.nnodes + 1));
    gr->outs = sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(q->g.nout + 1));
    gr->ins = sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(q->g.nin + 1));
    if (!gr->nodes || !gr->outs || !gr->ins) return GK_ENOMEM;
#define AT(ix) ((ix) >= 0 ? p->post[(ix)] : mat[-(ix) - 1])
    for (int k = 0; k < q->g.nnodes; k++) gr->nodes[k] = AT(q->nodes[k]);
    for (int k = 0; k < q->g.nout; k++) gr->outs[k] = AT(q->outs[k]);
    for (int k = 0; k < q->g.nin; k++) gr->ins[k] = AT(q->ins[k]);
#undef AT
    if (q->g.prep && !(gr->prep = rt_prep_copy(s->mem, q->g.prep))) return GK_ENOMEM;
  }
  return GK_OK;
}

/* Step 3b of cc_compute: re-forms the union-find so that no group has more
** than RT_MAX_STAGES dependent reduction stages.  An anchor's level is the
** stage it runs in within its group (reductions: one more than the deepest
** anchor of the group they read; others: that deepest level); anchors of one
** group and one slice of levels, (level - 1) / RT_MAX_STAGES, stay together.
** lv has room for p->npost entries. */
static int split_stages(planner *p, const int *deps, const int *dstart, int *lv) {
  cc_session *s = p->s;
  int n = p->npost, deep = 0;
  for (int i = 0; i < n; i++) {
    lv[i] = 0;
    if (!G(p->post[i])->anchor) continue;
    int r = uf_find(p, i), d = 0;
    for (int j = dstart[i]; j < dstart[i + 1]; j++)   /* deps come earlier in post-order */
      if (uf_find(p, deps[j]) == r && lv[deps[j]] > d) d = lv[deps[j]];
    lv[i] = d + (p->post[i]->op == RT_REDUCE);
    if (lv[i] > RT_MAX_STAGES) deep = 1;
  }
  if (!deep) return GK_OK;
  int *root = rt_alloc(s->mem, sizeof(int) * (size_t)n * 3);
  if (!root) return GK_ENOMEM;
  int *head = root + n, *next = root + 2 * n;   /* per group: its slices' representatives */
  for (int i = 0; i < n; i++) { root[i] = G(p->post[i])->anchor ? uf_find(p, i) : i; head[i] = -1; }
  for (int i = 0; i < n; i++) p->parent[i] = i;
  for (int i = 0; i < n; i++) {
    if (!G(p->post[i])->anchor) continue;
    int sl = lv[i] ? (lv[i] - 1) / RT_MAX_STAGES : 0, q = head[root[i]];
    while (q >= 0 && (lv[q] ? (lv[q] - 1) / RT_MAX_STAGES : 0) != sl) q = next[q];
    if (q >= 0) p->parent[i] = q;   /* q is its own root: the first of the slice */
    else { next[i] = head[root[i]]; head[root[i]] = i; }
  }
  rt_free(s->mem, root, sizeof(int) * (size_t)n * 3);
  return GK_OK;
}

int cc_compute(cc_session *s, rt_node **targets, int nt) {
  planner p;
  memset(&p, 0, sizeof p);
  p.s = s;
  s->stamp++;
  rt_node *owned = NULL; int nowned = 0;
  if (s->opt_fusion) pull_siblings(s, &targets, &nt, &owned, &nowned);
  int rc = collect(&p, targets, nt);
  int n = p.npost, i, j;
  int *deps = NULL, *dstart = NULL, *order = NULL, *isout = NULL, *gid = NULL;
  char *seen = NULL, *relower = NULL;
  rt_group *groups = NULL;
  int ngroups = 0, cached = 0, nmat = 0;
  pc_entry *resized = NULL;   /* the cached plan was for other sizes: lowered again, stored back */
  sigbuf sig = {0};
  rt_node **mat = NULL;
  uint64_t sh = 0;
  if (rc || n == 0) goto done;
  if (!s->pc_off) {
    char *ist = rt_calloc(s->mem, (size_t)n, 1);
    mat = sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(3 * n + 1));
    if (ist && mat) {
      for (i = 0; i < nt; i++) if (!targets[i]->val) ist[G(targets[i])->post] = 1;
      if (plan_signature(&p, ist, &sig, mat, &nmat) == GK_OK) {
        sh = sig_hash(&sig);
        pc_entry *e = pc_find(s, &sig, sh);
        if (e) {
          ngroups = e->ngroups;
          rc = pc_rebuild(s, &p, mat, e, &groups, &order, &relower);
          rt_free(s->mem, ist, (size_t)n);
          if (rc) goto done;
          cached = 1;
          if (!pc_same_vals(e, &sig)) {
            resized = e;
            memset(relower, 1, (size_t)(ngroups ? ngroups : 1));
          }
          s->pc_hits++;
          goto run;
        }
      }
    }
    rt_free(s->mem, ist, (size_t)n);
  }
  p.parent = sz_alloc(s->mem, sizeof(int) * (size_t)n);
  seen = sz_alloc(s->mem, (size_t)n);
  dstart = sz_alloc(s->mem, sizeof(int) * (size_t)(n + 1));
  isout = sz_calloc(s->mem, (size_t)n, sizeof(int));
  gid = sz_alloc(s->mem, sizeof(int) * (size_t)n);
  int *fcost = rt_alloc(s->mem, sizeof(int) * (size_t)n);
  if (!p.parent || !seen || !dstart || !isout || !gid || !fcost) {
    if (fcost) rt_free(s->mem, fcost, sizeof(int) * (size_t)n);
    rc = GK_ENOMEM; goto done;
  }

  /* 1. anchors */
  for (i = 0; i < n; i++) {
    rt_node *x = p.post[i];
    int cls = rt_op_info[x->op].cls;
    G(x)->anchor = cls == RC_HEAVY ||
                   (!s->opt_fusion && cls == RC_MAP) ||
                   (!s->opt_fusion && (x->op == RT_IOTA || x->op == RT_RAND || x->op == RT_RANDN));
    p.parent[i] = i;
  }
  /* an i64 hist's range from the data needs the extremes themselves (numpy's
  ** uint64 difference), so unfused the range casts stay inside the hist */
  if (!s->opt_fusion)
    for (i = 0; i < n; i++) {
      rt_node *x = p.post[i];
      if (x->op != RT_HIST || !x->excl) continue;
      for (j = 1; j <= 2 && j < x->nin; j++) {
        rt_node *c = x->in[j];
        if (c->op == RT_CAST && is_pending(s, c) && G(c)->post >= 0) G(c)->anchor = 0;
      }
    }
  for (i = 0; i < nt; i++) if (!targets[i]->val) { G(targets[i])->anchor = 1; isout[G(targets[i])->post] = 1; }
  /* bound the depth of inlined chains (evaluation recurses on it) and
  ** their estimated compile cost (NVRTC time grows with the code a kernel
  ** inlines: fuse_cost) */
  for (i = 0; i < n; i++) {
    rt_node *x = p.post[i];
    int d = 0;
    long cost = fuse_cost(x);
    for (j = 0; j < x->nin; j++) {
      rt_node *c = x->in[j];
      if (!is_pending(s, c) || G(c)->anchor || G(c)->post < 0) continue;
      if (gid[G(c)->post] > d) d = gid[G(c)->post];
      cost += fcost[G(c)->post];   /* a shared operand counts once per use: an overestimate */
    }
    gid[i] = d + 1;   /* gid doubles as chain depth until step 4 */
    fcost[i] = (int)(cost < CC_MAX_FUSE_COST * 2L ? cost : CC_MAX_FUSE_COST * 2L);
    if ((gid[i] > CC_MAX_FUSE_DEPTH || fcost[i] > CC_MAX_FUSE_COST) && !G(x)->anchor) {
      G(x)->anchor = 1; gid[i] = 0; fcost[i] = 0;
    }
  }
  rt_free(s->mem, fcost, sizeof(int) * (size_t)n);
  if (s->opt_fusion && (rc = bound_view_paths(&p))) goto done;

  /* 2. direct anchor dependencies of every anchor */
  {
    int cap = n * 4 + 16, nd = 0;
    deps = sz_alloc(s->mem, sizeof(int) * (size_t)cap);
    if (!deps) { rc = GK_ENOMEM; goto done; }
    for (i = 0; i < n; i++) {
      dstart[i] = nd;
      if (!G(p.post[i])->anchor) continue;
      if (nd + n > cap) {
        int nc = cap * 2 + n;
        int *d2 = sz_alloc(s->mem, sizeof(int) * (size_t)nc);
        if (!d2) { rc = GK_ENOMEM; goto done; }
        memcpy(d2, deps, sizeof(int) * (size_t)nd);
        sz_free(s->mem, deps);
        deps = d2; cap = nc;
      }
      memset(seen, 0, (size_t)n);
      if ((rc = direct_deps(&p, p.post[i], deps, &nd, seen))) goto done;
    }
    dstart[n] = nd;
  }

  /* 3. fusion merges (each joins a node with its whole pending closure) */
  if (s->opt_fusion) {
    for (i = 0; i < n; i++) {
      rt_node *t = p.post[i];
      if (!G(t)->anchor || dstart[i] == dstart[i + 1]) continue;
      /* transitive closure of anchor deps; check they are all reductions of one kind */
      memset(seen, 0, (size_t)n);
      int stack[256], sp = 0, ok = 1, kind = -1;
      int64_t len = -1, r0 = -1, c0 = -1;
      for (j = dstart[i]; j < dstart[i + 1] && sp < 256; j++) stack[sp++] = deps[j];
      while (sp > 0 && ok) {
        int a = stack[--sp];
        if (seen[a]) continue;
        seen[a] = 1;
        rt_node *d = p.post[a];
        int k = red_kind(d);
        if (!k || d->rop == ROP_ARGMAX || d->rop == ROP_ARGMIN) { ok = 0; break; }
        if (kind < 0) kind = k;
        if (k != kind) { ok = 0; break; }
        const rt_node *in = d->in[0];
        if (k == 1) { if (len < 0) len = in->n; else if (len != in->n) ok = 0; }
        else {
          if (r0 < 0) { r0 = in->shape[0]; c0 = in->shape[1]; len = d->axis; }
          else if (in->shape[0] != r0 || in->shape[1] != c0 || d->axis != len) ok = 0;
        }
        for (j = dstart[a]; j < dstart[a + 1]; j++) { if (sp < 256) stack[sp++] = deps[j]; else ok = 0; }
      }
      if (!ok || kind < 0) continue;
      int tk = red_kind(t);
      if (kind == 1) {
        /* scalar epilogue or dependent whole-array reduction */
        if (!((tk == 1 && t->in[0]->n == len) || (!tk && rt_op_info[t->op].cls != RC_HEAVY && t->n == 1))) continue;
      } else {
        /* row program: a map of the matrix shape, or a row reduction of it, or a per-row scalar epilogue */
        /* axis=k moves its result back with a reshape, and off the last axis a
        ** permuting view (compiler/build.c, axis_out): the matrix behind them */
        const rt_node *tb = t;
        while (!tk && tb->nin == 1 && !tb->in[0]->val && tb->in[0]->n == t->n && (tb->op == RT_RESHAPE ||
               (tb->op == RT_VIEW && tb->voff == 0 && axis_perm(tb))))
          tb = tb->in[0];
        int same = tb->ndim == 2 && tb->shape[0] == r0 && tb->shape[1] == c0;
        int rowred = tk == 2 && t->in[0]->shape[0] == r0 && t->in[0]->shape[1] == c0 && t->axis == len;
        int perrow = !tk && rt_op_info[t->op].cls != RC_HEAVY && tb->ndim == 1 && tb->shape[0] == (len == 1 ? r0 : c0);
        if (!(same && rt_op_info[t->op].cls != RC_HEAVY) && !rowred && !perrow) continue;
      }
      for (j = 0; j < n; j++) if (seen[j]) uf_join(&p, i, j);
    }
    /* scan epilogue: a map of the scan's shape whose only pending anchor is
    ** one leaf scan, read at the same index (no view between them) */
    for (i = 0; i < n; i++) {
      rt_node *t = p.post[i];
      if (!G(t)->anchor || rt_op_info[t->op].cls == RC_HEAVY || dstart[i + 1] - dstart[i] != 1) continue;
      int a = deps[dstart[i]];
      rt_node *sc = p.post[a];
      if (sc->op != RT_SCAN || dstart[a] != dstart[a + 1] || sc->ndim != t->ndim ||
          memcmp(sc->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim))
        continue;
      if (same_index_path(&p, t, sc)) uf_join(&p, i, a);
    }
    /* horizontal: leaf whole-array reductions of one length; leaf maps of one shape */
    for (i = 0; i < n; i++) {
      rt_node *x = p.post[i];
      if (!G(x)->anchor || dstart[i] != dstart[i + 1]) continue;
      int k = red_kind(x);
      int map = !k && rt_op_info[x->op].cls != RC_HEAVY;
      if (k != 1 && !map) continue;
      for (j = i + 1; j < n; j++) {
        rt_node *y = p.post[j];
        if (!G(y)->anchor || dstart[j] != dstart[j + 1]) continue;
        if (k == 1 && red_kind(y) == 1 && y->in[0]->n == x->in[0]->n && y->rop != ROP_ARGMAX && y->rop != ROP_ARGMIN &&
            x->rop != ROP_ARGMAX && x->rop != ROP_ARGMIN) uf_join(&p, i, j);
        if (map && !red_kind(y) && rt_op_info[y->op].cls != RC_HEAVY && y->ndim == x->ndim &&
            !memcmp(y->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim)) uf_join(&p, i, j);
      }
    }
  }

  /* 3b. stage limit: a group whose reductions chain deeper than RT_MAX_STAGES
  ** is cut by stage level, each slice of RT_MAX_STAGES levels its own group.
  ** A slice reads only lower slices (and what the whole group read), so the
  ** plan stays acyclic.  gid holds the levels until step 4. */
  if (s->opt_fusion && (rc = split_stages(&p, deps, dstart, gid))) goto done;

  /* 4. groups: one per union-find root; outs are anchors read across groups */
  for (i = 0; i < n; i++) gid[i] = -1;
  for (i = 0; i < n; i++) if (G(p.post[i])->anchor) {
    int r = uf_find(&p, i);
    if (gid[r] < 0) gid[r] = ngroups++;
    gid[i] = gid[r];
  }
  for (i = 0; i < n; i++) if (G(p.post[i])->anchor) {
    for (j = dstart[i]; j < dstart[i + 1]; j++) if (gid[deps[j]] != gid[i]) isout[deps[j]] = 1;
    if (G(p.post[i])->bound) isout[i] = 1;   /* a variable's value: keep it once computed */
  }

  groups = sz_calloc(s->mem, (size_t)ngroups, sizeof(rt_group));
  order = sz_alloc(s->mem, sizeof(int) * (size_t)(ngroups ? ngroups : 1));
  if (!groups || !order) { rc = GK_ENOMEM; goto done; }
  for (int g = 0; g < ngroups && !rc; g++) {
    rt_group *gr = &groups[g];
    /* members: anchors of g plus the pending non-anchors they read */
    memset(seen, 0, (size_t)n);
    int cnt = 0, nouts = 0, nanc = 0;
    for (i = 0; i < n; i++) if (G(p.post[i])->anchor && gid[i] == g) {
      seen[i] = 1; nanc++;
      if (isout[i]) nouts++;
    }
    /* flood from anchors through non-anchors (post-order: users after inputs, so walk backwards) */
    for (i = n - 1; i >= 0; i--) {
      if (!seen[i]) continue;
      rt_node *x = p.post[i];
      for (j = 0; j < x->nin; j++) {
        rt_node *c = x->in[j];
        if (is_pending(s, c) && !G(c)->anchor) seen[G(c)->post] = 1;
      }
    }
    for (i = 0; i < n; i++) cnt += seen[i];
    gr->nodes = sz_alloc(s->mem, sizeof(rt_node *) * (size_t)cnt);
    gr->outs = sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(nouts ? nouts : 1));
    gr->ins = sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(cnt * 3 + 1));
    if (!gr->nodes || !gr->outs || !gr->ins) { rc = GK_ENOMEM; break; }
    rt_node *anc[64]; int na = 0;
    for (i = 0; i < n; i++) if (seen[i]) {
      rt_node *x = p.post[i];
      gr->nodes[gr->nnodes++] = x;
      if (G(x)->anchor && gid[i] == g) {
        if (isout[i]) gr->outs[gr->nout++] = x;
        if (na < 64) anc[na++] = x;
      }
      for (j = 0; j < x->nin; j++) {
        rt_node *c = x->in[j];
        int external = c->val || (G(c)->anchor && gid[G(c)->post] != g);
        if (!external) continue;
        int dup = 0;
        for (int k = 0; k < gr->nin; k++) if (gr->ins[k] == c) dup = 1;
        if (!dup) gr->ins[gr->nin++] = c;
      }
    }
    gr->kind = kind_of_group(anc, na);
  }
  if (rc) goto done;

  /* 5. topological order of groups (Kahn; ties by first anchor's post index) */
  {
    int *indeg = rt_calloc(s->mem, (size_t)ngroups, sizeof(int));
    char *done = rt_calloc(s->mem, (size_t)ngroups, 1);
    if (!indeg || !done) { rt_free(s->mem, indeg, sizeof(int) * (size_t)ngroups); rt_free(s->mem, done, (size_t)ngroups); rc = GK_ENOMEM; goto done; }
    for (int g = 0; g < ngroups; g++)
      for (int k = 0; k < groups[g].nin; k++) {
        rt_node *c = groups[g].ins[k];
        if (!c->val) indeg[g]++;
      }
    int no = 0;
    while (no < ngroups) {
      int pick = -1;
      for (int g = 0; g < ngroups; g++) if (!done[g] && indeg[g] == 0) { pick = g; break; }
      if (pick < 0) { rc = GK_EMISUSE; break; }   /* cycle: a planner bug */
      done[pick] = 1;
      order[no++] = pick;
      for (int g = 0; g < ngroups; g++) if (!done[g])
        for (int k = 0; k < groups[g].nin; k++) {
          rt_node *c = groups[g].ins[k];
          if (!c->val && gid[G(c)->post] == pick) indeg[g]--;
        }
    }
    rt_free(s->mem, indeg, sizeof(int) * (size_t)ngroups);
    rt_free(s->mem, done, (size_t)ngroups);
    if (rc) { cc_error(s, s->errloc, GK_EMISUSE, "internal error: the plan has a cycle"); goto done; }
  }

  /* 6. run (a cached plan arrives here with its groups lowered already) */
run:
  if (!cached) s->pc_misses++;
  atomic_store_explicit(&s->prog_planned, s->kernels + ngroups, memory_order_relaxed);
  for (int k = 0; k < ngroups && !rc; k++) {
    rt_group *g = &groups[order[k]];
    double t0 = now_ms(), t1;
    s->kernels++;
    rt_err_clear(&s->be->err);
    if (!cached || relower[order[k]] || rt_prep_rebind(g)) {
      rt_prep_free(s->mem, g->prep);
      g->prep = NULL;
      atomic_store_explicit(&s->prog_jit, 1, memory_order_relaxed);
      rc = s->be->prepare_group(s->be, g, s->opt_tf32);
      atomic_store_explicit(&s->prog_jit, 0, memory_order_relaxed);
      if (rc) { cc_error(s, s->errloc, rc, "%s", s->be->err.msg); break; }
    } else if (s->pc_verify && g->prep && (rc = pc_verify(s, g))) break;
    double jit = now_ms() - t0;
    atomic_fetch_add_explicit(&s->prof_jit_ns, (int64_t)(jit * 1e6), memory_order_relaxed);
    if (s->opt_plan) cc_print_group(s, g, s->kernels);
    int64_t number = s->kernels;
    if (g->nlaunch > 1) s->kernels += g->nlaunch - 1;   /* e.g. a matmul's prologue, then the gemm */
    t1 = now_ms();
    rc = s->be->run_group(s->be, g);
    if (!rc && s->opt_profile && s->be->sync) rc = s->be->sync(s->be);   /* a profile waits for each kernel */
    if (rc) cc_error(s, s->errloc, rc, "%s", s->be->err.msg);
    else {
      double t2 = now_ms();
      atomic_fetch_add_explicit(&s->prof_run_ns, (int64_t)((t2 - t1) * 1e6), memory_order_relaxed);
      if (s->opt_profile) cc_profile_group(s, g, number, t2 - t1, jit > 0.001 ? jit : 0);
    }
    atomic_store_explicit(&s->prog_done, s->kernels, memory_order_relaxed);
  }
  atomic_store_explicit(&s->prog_planned, s->kernels, memory_order_relaxed);
  if (!rc && (!cached || resized) && !s->pc_off && sig.w && !sig.fail) pc_store(s, &sig, sh, groups, ngroups, order, resized);
  if (!rc) {
    for (int g = 0; g < ngroups; g++)
      for (int k = 0; k < groups[g].nout; k++) cc_freeze(s, groups[g].outs[k]);
  }

done:
  if (rc && !s->err->status) cc_error(s, s->errloc, rc, rc == GK_ENOMEM ? "out of memory" : "internal error planning");
  if (groups) {
    for (int g = 0; g < ngroups; g++) {
      sz_free(s->mem, groups[g].nodes);
      sz_free(s->mem, groups[g].outs);
      sz_free(s->mem, groups[g].ins);
      rt_prep_free(s->mem, groups[g].prep);
    }
    sz_free(s->mem, groups);
  }
  sz_free(s->mem, order);
  sz_free(s->mem, deps);
  sz_free(s->mem, dstart);
  sz_free(s->mem, isout);
  sz_free(s->mem, gid);
  sz_free(s->mem, seen);
  sz_free(s->mem, p.parent);
  rt_free(s->mem, p.post, sizeof(rt_node *) * (size_t)p.cap);
  rt_free(s->mem, sig.w, sig.cap * 8);
  rt_free(s->mem, sig.vals, sig.capv * 8);
  rt_free(s->mem, sig.cv, sig.capcv * 8);
  rt_free(s->mem, sig.ht, sig.htcap * sizeof(uint32_t));
  sz_free(s->mem, mat);
  sz_free(s->mem, relower);
  if (owned) rt_free(s->mem, owned, sizeof(rt_node *) * (size_t)nowned);
  return rc;
}

/* Computes every pending variable, then waits for the backend (cc_sync
** without the error redirection). */
int cc_compute_vars(cc_session *s) {
  rt_node **xs = rt_alloc(s->mem, sizeof(rt_node *) * (size_t)(s->nvars ? s->nvars : 1));
  int n = 0, rc = GK_OK;
  if (!xs) rc = cc_error(s, s->errloc, GK_ENOMEM, "out of memory");
  else {
    for (int i = 0; i < s->nvars; i++) if (!s->vars[i].v.x->val) xs[n++] = s->vars[i].v.x;
    if (n) rc = cc_compute(s, xs, n);
    rt_free(s->mem, xs, sizeof(rt_node *) * (size_t)(s->nvars ? s->nvars : 1));
  }
  if (!rc) rc = s->be->sync(s->be);
  return rc;
}
