/*
** compiler/plancache.c -- the plan cache: plans of recently run graph shapes.
**
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
** the kernel cache) and remembers the plan for the new sizes.
**
** run.c looks plans up, stores and verifies them; session.c frees the cache
** and reads its counters.  Calls graph.c only (cc_error).
*/
#include <string.h>
#include "compiler/cc_int.h"

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

typedef cc_pkey sigbuf;   /* the signature being made */

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
static int plan_signature(cc_session *s, const cc_pending *p, const char *istarget, sigbuf *b, rt_node **mat, int *nmat) {
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
      if (cc_is_pending(s, c)) { sig_push(s, b, (uint64_t)G(c)->post); continue; }
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
    cc_sz_free(s->mem, q->nodes); cc_sz_free(s->mem, q->outs); cc_sz_free(s->mem, q->ins);
    rt_prep_free(s->mem, q->g.prep);
  }
  cc_sz_free(s->mem, e->groups);
  cc_sz_free(s->mem, e->order);
  cc_sz_free(s->mem, e->sig);
  cc_sz_free(s->mem, e->vals);
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
  e->groups = cc_sz_calloc(s->mem, (size_t)(ngroups ? ngroups : 1), sizeof(pc_group));
  e->order = cc_sz_alloc(s->mem, sizeof(int) * (size_t)(ngroups ? ngroups : 1));
  e->sig = cc_sz_alloc(s->mem, b->n * 8);
  e->vals = cc_sz_alloc(s->mem, (b->nv + b->ncv + 1) * 8);
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
    q->nodes = cc_sz_alloc(s->mem, sizeof(int) * (size_t)(src->nnodes + 1));
    q->outs = cc_sz_alloc(s->mem, sizeof(int) * (size_t)(src->nout + 1));
    q->ins = cc_sz_alloc(s->mem, sizeof(int) * (size_t)(src->nin + 1));
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
int cc_pc_verify(cc_session *s, const rt_group *g) {
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
static int pc_rebuild(cc_session *s, const cc_pending *p, rt_node **mat, const pc_entry *e, rt_group **out, int **order, char **relower) {
  rt_group *groups = cc_sz_calloc(s->mem, (size_t)(e->ngroups ? e->ngroups : 1), sizeof(rt_group));
  int *ord = cc_sz_alloc(s->mem, sizeof(int) * (size_t)(e->ngroups ? e->ngroups : 1));
  char *rl = cc_sz_calloc(s->mem, (size_t)(e->ngroups ? e->ngroups : 1), 1);
  if (!groups || !ord || !rl) {
    cc_sz_free(s->mem, groups); cc_sz_free(s->mem, ord); cc_sz_free(s->mem, rl);
    return GK_ENOMEM;
  }
  *out = groups; *order = ord; *relower = rl;
  memcpy(ord, e->order, sizeof(int) * (size_t)e->ngroups);
  for (int g = 0; g < e->ngroups; g++) {
    const pc_group *q = &e->groups[g];
    rt_group *gr = &groups[g];
    *gr = q->g;
    gr->prep = NULL;
    gr->nodes = cc_sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(q->g.nnodes + 1));
    gr->outs = cc_sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(q->g.nout + 1));
    gr->ins = cc_sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(q->g.nin + 1));
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

/* Looks the pending graph up.  Makes its signature into k (the materialized
** inputs numbered in k->mat) and, on a hit (k->hit), rebuilds the cached
** plan's groups into pl, pl->relower marking those to lower again.  Returns
** GK_OK, or GK_ENOMEM when rebuilding failed (pl holds what was built; free
** it).  A signature that cannot be made (no memory) or GK_PLAN_CACHE=0 is a
** miss. */
int cc_pc_lookup(cc_session *s, const cc_pending *pg, cc_pkey *k, cc_plan *pl) {
  int n = pg->npost, rc = GK_OK;
  if (s->pc_off) return GK_OK;
  char *ist = rt_calloc(s->mem, (size_t)n, 1);
  k->mat = cc_sz_alloc(s->mem, sizeof(rt_node *) * (size_t)(3 * n + 1));
  if (ist && k->mat) {
    for (int i = 0; i < pg->ntargets; i++) if (!pg->targets[i]->val) ist[G(pg->targets[i])->post] = 1;
    if (plan_signature(s, pg, ist, k, k->mat, &k->nmat) == GK_OK) {
      k->hash = sig_hash(k);
      pc_entry *e = pc_find(s, k, k->hash);
      if (e) {
        pl->ngroups = e->ngroups;
        rc = pc_rebuild(s, pg, k->mat, e, &pl->groups, &pl->order, &pl->relower);
        if (!rc) {
          k->hit = 1;
          if (!pc_same_vals(e, k)) {
            k->resized = e;
            memset(pl->relower, 1, (size_t)(pl->ngroups ? pl->ngroups : 1));
          }
          s->pc_hits++;
        }
      }
    }
  }
  rt_free(s->mem, ist, (size_t)n);
  return rc;
}

/* Remembers plan pl, just run for the graph of k (before its outputs are
** frozen): a plan made now, or a cached one lowered again for new sizes. */
void cc_pc_store(cc_session *s, const cc_pkey *k, const cc_plan *pl) {
  if ((k->hit && !k->resized) || s->pc_off || !k->w || k->fail) return;
  pc_store(s, k, k->hash, pl->groups, pl->ngroups, pl->order, k->resized);
}

void cc_pc_key_free(cc_session *s, cc_pkey *k) {
  rt_free(s->mem, k->w, k->cap * 8);
  rt_free(s->mem, k->vals, k->capv * 8);
  rt_free(s->mem, k->cv, k->capcv * 8);
  rt_free(s->mem, k->ht, k->htcap * sizeof(uint32_t));
  cc_sz_free(s->mem, k->mat);
  memset(k, 0, sizeof *k);
}
