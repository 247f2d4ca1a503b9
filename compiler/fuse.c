/*
** compiler/fuse.c -- from pending graph to plan: which nodes run together in
** one kernel, and in what order.  cc_collect gathers the pending graph of the
** values asked for, cc_fuse fuses it into groups (run.c runs them).
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
#include <string.h>
#include "compiler/cc_int.h"

/* The state of one cc_fuse; every array has one entry per pending node. */
typedef struct planner {
  cc_session *s;
  rt_node **post;   /* pending nodes in post-order (cc_pending) */
  int npost;
  int *parent;      /* union-find over anchor indices (by post index) */
  char *seen;       /* scratch marks */
  int *deps;        /* anchor i's direct anchor dependencies: deps[dstart[i] .. dstart[i + 1]) */
  int *dstart;      /* npost + 1 entries */
  int *isout;       /* a group output: a target, a variable's value, read by another group */
  int *gid;         /* chain depth (anchors), then stage level (split_stages), then group */
} planner;

static int push_post(cc_session *s, cc_pending *p, rt_node *x) {
  if (p->npost == p->cap) {
    int nc = p->cap ? p->cap * 2 : 64;
    rt_node **n = rt_realloc(s->mem, p->post, sizeof(rt_node *) * (size_t)p->cap, sizeof(rt_node *) * (size_t)nc);
    if (!n) return GK_ENOMEM;
    p->post = n; p->cap = nc;
  }
  G(x)->post = p->npost;
  p->post[p->npost++] = x;
  return GK_OK;
}

/* Iterative post-order DFS over pending nodes. */
static int collect(cc_session *s, cc_pending *p, rt_node **targets, int nt) {
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
        rc = push_post(s, p, f->x);
        sp--;
      }
    }
  }
  rt_free(s->mem, st, sizeof(struct fr) * (size_t)scap);
  return rc;
}

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
  uint64_t *set = cc_sz_alloc(s->mem, sizeof(uint64_t) * CC_MAX_VIEW_PATHS * (size_t)n);
  int *cnt = cc_sz_calloc(s->mem, (size_t)n, sizeof(int));
  if (!set || !cnt) { cc_sz_free(s->mem, set); cc_sz_free(s->mem, cnt); return GK_ENOMEM; }
  for (int i = n - 1; i >= 0; i--) {
    rt_node *x = p->post[i];
    uint64_t *mine = set + (size_t)i * CC_MAX_VIEW_PATHS;
    if (G(x)->anchor || !cnt[i]) { cnt[i] = 1; mine[0] = 0; }   /* read at the kernel's own index */
    int mv = moves_index(x);
    for (int j = 0; j < x->nin; j++) {
      rt_node *c = x->in[j];
      if (!cc_is_pending(s, c) || G(c)->anchor || G(c)->post < 0) continue;
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
  cc_sz_free(s->mem, set); cc_sz_free(s->mem, cnt);
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
    if (!cc_is_pending(s, y) || seen[G(y)->post]) continue;
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
      if (cc_is_pending(s, z->in[k]) && !G(z->in[k])->anchor) { if (sp == 128) return 1; st[sp++] = z->in[k]; }
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
      if (c == a || !cc_is_pending(s, c) || G(c)->anchor) continue;
      if (sp == 128) return 0;
      st[sp++] = c;
    }
  }
  return 1;
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
static int pull_siblings(cc_session *s, rt_node ***targets, int *nt, rt_node ***own, int *nown) {
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
  *own = t; *nown = *nt + cap;
  *targets = t; *nt = m;
  return 1;
}

/* Step 3b of cc_fuse: re-forms the union-find so that no group has more
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

/* ------------------------------------------------------------ collecting */

int cc_collect(cc_session *s, rt_node **targets, int nt, cc_pending *pg) {
  memset(pg, 0, sizeof *pg);
  if (s->opt_fusion) pull_siblings(s, &targets, &nt, &pg->own, &pg->nown);
  pg->targets = targets;
  pg->ntargets = nt;
  return collect(s, pg, targets, nt);
}

void cc_pending_free(cc_session *s, cc_pending *pg) {
  rt_free(s->mem, pg->post, sizeof(rt_node *) * (size_t)pg->cap);
  if (pg->own) rt_free(s->mem, pg->own, sizeof(rt_node *) * (size_t)pg->nown);
  memset(pg, 0, sizeof *pg);
}

/* ------------------------------------------------------------ planning */

static int planner_init(planner *p, cc_session *s, const cc_pending *pg) {
  int n = pg->npost;
  memset(p, 0, sizeof *p);
  p->s = s;
  p->post = pg->post;
  p->npost = n;
  p->parent = cc_sz_alloc(s->mem, sizeof(int) * (size_t)n);
  p->seen = cc_sz_alloc(s->mem, (size_t)n);
  p->dstart = cc_sz_alloc(s->mem, sizeof(int) * (size_t)(n + 1));
  p->isout = cc_sz_calloc(s->mem, (size_t)n, sizeof(int));
  p->gid = cc_sz_alloc(s->mem, sizeof(int) * (size_t)n);
  return p->parent && p->seen && p->dstart && p->isout && p->gid ? GK_OK : GK_ENOMEM;
}

static void planner_free(planner *p) {
  rt_mem *m = p->s->mem;
  cc_sz_free(m, p->parent); cc_sz_free(m, p->seen); cc_sz_free(m, p->dstart);
  cc_sz_free(m, p->isout); cc_sz_free(m, p->gid); cc_sz_free(m, p->deps);
}

/* Step 1: the anchors -- heavy ops, the targets, and with fusion off every
** map and source -- each its own union-find set; targets are outputs. */
static void mark_anchors(planner *p, rt_node **targets, int nt) {
  cc_session *s = p->s;
  int n = p->npost;
  for (int i = 0; i < n; i++) {
    rt_node *x = p->post[i];
    int cls = rt_op_info[x->op].cls;
    G(x)->anchor = cls == RC_HEAVY ||
                   (!s->opt_fusion && cls == RC_MAP) ||
                   (!s->opt_fusion && (x->op == RT_IOTA || x->op == RT_RAND || x->op == RT_RANDN));
    p->parent[i] = i;
  }
  /* an i64 hist's range from the data needs the extremes themselves (numpy's
  ** uint64 difference), so unfused the range casts stay inside the hist */
  if (!s->opt_fusion)
    for (int i = 0; i < n; i++) {
      rt_node *x = p->post[i];
      if (x->op != RT_HIST || !x->excl) continue;
      for (int j = 1; j <= 2 && j < x->nin; j++) {
        rt_node *c = x->in[j];
        if (c->op == RT_CAST && cc_is_pending(s, c) && G(c)->post >= 0) G(c)->anchor = 0;
      }
    }
  for (int i = 0; i < nt; i++) if (!targets[i]->val) { G(targets[i])->anchor = 1; p->isout[G(targets[i])->post] = 1; }
}

/* Step 1, continued: bounds the depth of inlined chains (evaluation recurses
** on it) and their estimated compile cost (NVRTC time grows with the code a
** kernel inlines: fuse_cost); a node past either becomes an anchor.  The
** depths are left in gid. */
static int bound_chains(planner *p) {
  cc_session *s = p->s;
  int n = p->npost, *gid = p->gid;
  int *fcost = rt_alloc(s->mem, sizeof(int) * (size_t)n);
  if (!fcost) return GK_ENOMEM;
  for (int i = 0; i < n; i++) {
    rt_node *x = p->post[i];
    int d = 0;
    long cost = fuse_cost(x);
    for (int j = 0; j < x->nin; j++) {
      rt_node *c = x->in[j];
      if (!cc_is_pending(s, c) || G(c)->anchor || G(c)->post < 0) continue;
      if (gid[G(c)->post] > d) d = gid[G(c)->post];
      cost += fcost[G(c)->post];   /* a shared operand counts once per use: an overestimate */
    }
    gid[i] = d + 1;
    fcost[i] = (int)(cost < CC_MAX_FUSE_COST * 2L ? cost : CC_MAX_FUSE_COST * 2L);
    if ((gid[i] > CC_MAX_FUSE_DEPTH || fcost[i] > CC_MAX_FUSE_COST) && !G(x)->anchor) {
      G(x)->anchor = 1; gid[i] = 0; fcost[i] = 0;
    }
  }
  rt_free(s->mem, fcost, sizeof(int) * (size_t)n);
  return GK_OK;
}

/* Step 2: the direct anchor dependencies of every anchor (p->deps, p->dstart). */
static int anchor_deps(planner *p) {
  cc_session *s = p->s;
  int n = p->npost, cap = n * 4 + 16, nd = 0;
  p->deps = cc_sz_alloc(s->mem, sizeof(int) * (size_t)cap);
  if (!p->deps) return GK_ENOMEM;
  for (int i = 0; i < n; i++) {
    p->dstart[i] = nd;
    if (!G(p->post[i])->anchor) continue;
    if (nd + n > cap) {
      int nc = cap * 2 + n;
      int *d2 = cc_sz_alloc(s->mem, sizeof(int) * (size_t)nc);
      if (!d2) return GK_ENOMEM;
      memcpy(d2, p->deps, sizeof(int) * (size_t)nd);
      cc_sz_free(s->mem, p->deps);
      p->deps = d2; cap = nc;
    }
    memset(p->seen, 0, (size_t)n);
    int rc = direct_deps(p, p->post[i], p->deps, &nd, p->seen);
    if (rc) return rc;
  }
  p->dstart[n] = nd;
  return GK_OK;
}

/* The reductions of an anchor's pending closure, when they are all of one
** kind: whole-array reductions of one length (kind 1, len), or reductions
** along one axis (len) of one matrix shape r0 x c0 (kind 2). */
typedef struct closure {
  int kind;
  int64_t len, r0, c0;
} closure;

/* Walks anchor i's transitive anchor dependencies, marking them in p->seen;
** 1 when they form a closure c (see above). */
static int closure_of(planner *p, int i, closure *c) {
  int n = p->npost, stack[256], sp = 0, ok = 1;
  memset(p->seen, 0, (size_t)n);
  c->kind = -1; c->len = -1; c->r0 = -1; c->c0 = -1;
  for (int j = p->dstart[i]; j < p->dstart[i + 1] && sp < 256; j++) stack[sp++] = p->deps[j];
  while (sp > 0 && ok) {
    int a = stack[--sp];
    if (p->seen[a]) continue;
    p->seen[a] = 1;
    rt_node *d = p->post[a];
    int k = red_kind(d);
    if (!k || d->rop == ROP_ARGMAX || d->rop == ROP_ARGMIN) { ok = 0; break; }
    if (c->kind < 0) c->kind = k;
    if (k != c->kind) { ok = 0; break; }
    const rt_node *in = d->in[0];
    if (k == 1) { if (c->len < 0) c->len = in->n; else if (c->len != in->n) ok = 0; }
    else {
      if (c->r0 < 0) { c->r0 = in->shape[0]; c->c0 = in->shape[1]; c->len = d->axis; }
      else if (in->shape[0] != c->r0 || in->shape[1] != c->c0 || d->axis != c->len) ok = 0;
    }
    for (int j = p->dstart[a]; j < p->dstart[a + 1]; j++) { if (sp < 256) stack[sp++] = p->deps[j]; else ok = 0; }
  }
  return ok && c->kind >= 0;
}

/* 1 when target t joins its closure c: over whole-array reductions, a
** dependent reduction of the length or a scalar epilogue; over a matrix's
** rows (columns), a map of the matrix shape, a row reduction of it, or a
** per-row scalar epilogue. */
static int joins_closure(const rt_node *t, const closure *c) {
  int tk = red_kind(t);
  if (c->kind == 1)
    return (tk == 1 && t->in[0]->n == c->len) || (!tk && rt_op_info[t->op].cls != RC_HEAVY && t->n == 1);
  /* axis=k moves its result back with a reshape, and off the last axis a
  ** permuting view (compiler/build.c, axis_out): the matrix behind them */
  const rt_node *tb = t;
  while (!tk && tb->nin == 1 && !tb->in[0]->val && tb->in[0]->n == t->n && (tb->op == RT_RESHAPE ||
         (tb->op == RT_VIEW && tb->voff == 0 && axis_perm(tb))))
    tb = tb->in[0];
  int same = tb->ndim == 2 && tb->shape[0] == c->r0 && tb->shape[1] == c->c0;
  int rowred = tk == 2 && t->in[0]->shape[0] == c->r0 && t->in[0]->shape[1] == c->c0 && t->axis == c->len;
  int perrow = !tk && rt_op_info[t->op].cls != RC_HEAVY && tb->ndim == 1 && tb->shape[0] == (c->len == 1 ? c->r0 : c->c0);
  return (same && rt_op_info[t->op].cls != RC_HEAVY) || rowred || perrow;
}

/* Step 3: each anchor with pending anchor dependencies joins its whole
** closure when that closure is reductions of one kind it fits. */
static void merge_closures(planner *p) {
  int n = p->npost;
  for (int i = 0; i < n; i++) {
    rt_node *t = p->post[i];
    closure c;
    if (!G(t)->anchor || p->dstart[i] == p->dstart[i + 1]) continue;
    if (!closure_of(p, i, &c) || !joins_closure(t, &c)) continue;
    for (int j = 0; j < n; j++) if (p->seen[j]) uf_join(p, i, j);
  }
}

/* Step 3, scan epilogues: a map of the scan's shape whose only pending
** anchor is one leaf scan, read at the same index (no view between them). */
static void merge_scan_epilogues(planner *p) {
  for (int i = 0; i < p->npost; i++) {
    rt_node *t = p->post[i];
    if (!G(t)->anchor || rt_op_info[t->op].cls == RC_HEAVY || p->dstart[i + 1] - p->dstart[i] != 1) continue;
    int a = p->deps[p->dstart[i]];
    rt_node *sc = p->post[a];
    if (sc->op != RT_SCAN || p->dstart[a] != p->dstart[a + 1] || sc->ndim != t->ndim ||
        memcmp(sc->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim))
      continue;
    if (same_index_path(p, t, sc)) uf_join(p, i, a);
  }
}

/* Step 3, horizontal: leaf whole-array reductions of one length; leaf maps
** of one shape. */
static void merge_leaves(planner *p) {
  int n = p->npost;
  for (int i = 0; i < n; i++) {
    rt_node *x = p->post[i];
    if (!G(x)->anchor || p->dstart[i] != p->dstart[i + 1]) continue;
    int k = red_kind(x);
    int map = !k && rt_op_info[x->op].cls != RC_HEAVY;
    if (k != 1 && !map) continue;
    for (int j = i + 1; j < n; j++) {
      rt_node *y = p->post[j];
      if (!G(y)->anchor || p->dstart[j] != p->dstart[j + 1]) continue;
      if (k == 1 && red_kind(y) == 1 && y->in[0]->n == x->in[0]->n && y->rop != ROP_ARGMAX && y->rop != ROP_ARGMIN &&
          x->rop != ROP_ARGMAX && x->rop != ROP_ARGMIN) uf_join(p, i, j);
      if (map && !red_kind(y) && rt_op_info[y->op].cls != RC_HEAVY && y->ndim == x->ndim &&
          !memcmp(y->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim)) uf_join(p, i, j);
    }
  }
}

/* Step 4: one group per union-find root (gid: each anchor's group, -1 for
** the others); outputs are anchors read across groups and variables'
** values.  Returns the number of groups. */
static int assign_groups(planner *p) {
  int n = p->npost, ngroups = 0, *gid = p->gid;
  for (int i = 0; i < n; i++) gid[i] = -1;
  for (int i = 0; i < n; i++) if (G(p->post[i])->anchor) {
    int r = uf_find(p, i);
    if (gid[r] < 0) gid[r] = ngroups++;
    gid[i] = gid[r];
  }
  for (int i = 0; i < n; i++) if (G(p->post[i])->anchor) {
    for (int j = p->dstart[i]; j < p->dstart[i + 1]; j++) if (gid[p->deps[j]] != gid[i]) p->isout[p->deps[j]] = 1;
    if (G(p->post[i])->bound) p->isout[i] = 1;   /* a variable's value: keep it once computed */
  }
  return ngroups;
}

/* Step 4, one group: its members are the anchors of group g plus the
** pending non-anchors they read, in post-order; its inputs what they read
** from outside (materialized, or another group's anchors). */
static int build_group(planner *p, int g, rt_group *gr) {
  cc_session *s = p->s;
  int n = p->npost, cnt = 0, nouts = 0, *gid = p->gid;
  char *seen = p->seen;
  memset(seen, 0, (size_t)n);
  for (int i = 0; i < n; i++) if (G(p->post[i])->anchor && gid[i] == g) {
    seen[i] = 1;
    if (p->isout[i]) nouts++;
  }
  /* flood from anchors through non-anchors (post-order: users after inputs, so walk backwards) */
  for (int i = n - 1; i >= 0; i--) {
    if (!seen[i]) continue;
    rt_node *x = p->post[i];
    for (int j = 0; j < x->nin; j++) {
      rt_node *c = x->in[j];
      if (cc_is_pending(s, c) && !G(c)->anchor) seen[G(c)->post] = 1;
    }
  }
  for (int i = 0; i < n; i++) cnt += seen[i];
  gr->nodes = cc_sz_alloc(s->mem, sizeof(rt_node *) * (size_t)cnt);
  gr->outs = cc_sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(nouts ? nouts : 1));
  gr->ins = cc_sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(cnt * 3 + 1));
  if (!gr->nodes || !gr->outs || !gr->ins) return GK_ENOMEM;
  rt_node *anc[64]; int na = 0;
  for (int i = 0; i < n; i++) if (seen[i]) {
    rt_node *x = p->post[i];
    gr->nodes[gr->nnodes++] = x;
    if (G(x)->anchor && gid[i] == g) {
      if (p->isout[i]) gr->outs[gr->nout++] = x;
      if (na < 64) anc[na++] = x;
    }
    for (int j = 0; j < x->nin; j++) {
      rt_node *c = x->in[j];
      int external = c->val || (G(c)->anchor && gid[G(c)->post] != g);
      if (!external) continue;
      int dup = 0;
      for (int k = 0; k < gr->nin; k++) if (gr->ins[k] == c) dup = 1;
      if (!dup) gr->ins[gr->nin++] = c;
    }
  }
  gr->kind = kind_of_group(anc, na);
  return GK_OK;
}

/* Step 5: a topological order of the groups (Kahn; ties by first anchor's
** post index) into pl->order. */
static int order_groups(planner *p, cc_plan *pl) {
  cc_session *s = p->s;
  int ngroups = pl->ngroups, rc = GK_OK;
  rt_group *groups = pl->groups;
  int *indeg = rt_calloc(s->mem, (size_t)ngroups, sizeof(int));
  char *done = rt_calloc(s->mem, (size_t)ngroups, 1);
  if (!indeg || !done) { rt_free(s->mem, indeg, sizeof(int) * (size_t)ngroups); rt_free(s->mem, done, (size_t)ngroups); return GK_ENOMEM; }
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
    pl->order[no++] = pick;
    for (int g = 0; g < ngroups; g++) if (!done[g])
      for (int k = 0; k < groups[g].nin; k++) {
        rt_node *c = groups[g].ins[k];
        if (!c->val && p->gid[G(c)->post] == pick) indeg[g]--;
      }
  }
  rt_free(s->mem, indeg, sizeof(int) * (size_t)ngroups);
  rt_free(s->mem, done, (size_t)ngroups);
  if (rc) cc_error(s, s->errloc, GK_EMISUSE, "internal error: the plan has a cycle");
  return rc;
}

/* Steps 4 and 5: the groups of the union-find, in run order. */
static int form_groups(planner *p, cc_plan *pl) {
  cc_session *s = p->s;
  pl->ngroups = assign_groups(p);
  pl->groups = cc_sz_calloc(s->mem, (size_t)pl->ngroups, sizeof(rt_group));
  pl->order = cc_sz_alloc(s->mem, sizeof(int) * (size_t)(pl->ngroups ? pl->ngroups : 1));
  if (!pl->groups || !pl->order) return GK_ENOMEM;
  for (int g = 0; g < pl->ngroups; g++) {
    int rc = build_group(p, g, &pl->groups[g]);
    if (rc) return rc;
  }
  return order_groups(p, pl);
}

/* Plans the pending graph pg: anchors (1), their dependencies (2), fusion
** merges (3, 3b: stage limit), groups (4) in a topological order (5).  On
** failure pl holds what was built (cc_plan_free). */
int cc_fuse(cc_session *s, const cc_pending *pg, cc_plan *pl) {
  planner p;
  int rc = planner_init(&p, s, pg);
  if (!rc) {
    mark_anchors(&p, pg->targets, pg->ntargets);
    rc = bound_chains(&p);
  }
  if (!rc && s->opt_fusion) rc = bound_view_paths(&p);
  if (!rc) rc = anchor_deps(&p);
  if (!rc && s->opt_fusion) {
    merge_closures(&p);
    merge_scan_epilogues(&p);
    merge_leaves(&p);
    /* a group whose reductions chain deeper than RT_MAX_STAGES is cut by
    ** stage level, each slice of RT_MAX_STAGES levels its own group; a slice
    ** reads only lower slices (and what the whole group read), so the plan
    ** stays acyclic.  gid holds the levels until step 4. */
    rc = split_stages(&p, p.deps, p.dstart, p.gid);
  }
  if (!rc) rc = form_groups(&p, pl);
  planner_free(&p);
  return rc;
}

void cc_plan_free(cc_session *s, cc_plan *pl) {
  if (pl->groups) {
    for (int g = 0; g < pl->ngroups; g++) {
      cc_sz_free(s->mem, pl->groups[g].nodes);
      cc_sz_free(s->mem, pl->groups[g].outs);
      cc_sz_free(s->mem, pl->groups[g].ins);
      rt_prep_free(s->mem, pl->groups[g].prep);
    }
    cc_sz_free(s->mem, pl->groups);
  }
  cc_sz_free(s->mem, pl->order);
  cc_sz_free(s->mem, pl->relower);
  memset(pl, 0, sizeof *pl);
}
