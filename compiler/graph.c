/*
** compiler/graph.c -- the lazy graph: interned (CSE) nodes with reference
** counts, the current statement's nodes, materialized values, and the
** statement's error record (cc_error).  The bottom of compiler/: it calls
** no other file of it.
**
** Every node made while a statement runs holds one "statement reference"
** until cc_end_statement, so a failed statement frees what it built and a
** successful one keeps only what a variable (or another kept node) uses.
*/
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include "compiler/cc_int.h"

#define HASH_INIT 1024

/* The CSE key: everything that defines a node's value. */
static uint64_t key_hash(const rt_node *x) {
  uint64_t h = cc_mix(x->op, (uint64_t)x->t << 8 | (uint64_t)x->rop << 16 | (uint64_t)(uint8_t)x->axis << 24 | (uint64_t)x->excl << 32);
  h = cc_mix(h, (uint64_t)x->ndim);
  for (int i = 0; i < x->ndim; i++) h = cc_mix(h, (uint64_t)x->shape[i]);
  for (int i = 0; i < x->nin; i++) h = cc_mix(h, (uint64_t)(uintptr_t)x->in[i]);
  uint64_t c; memcpy(&c, &x->c, 8);
  h = cc_mix(h, c);
  h = cc_mix(h, x->seed); h = cc_mix(h, x->offset); h = cc_mix(h, (uint64_t)x->voff); h = cc_mix(h, (uint64_t)x->nbins);
  if (x->op == RT_VIEW) for (int i = 0; i < x->ndim; i++) h = cc_mix(h, (uint64_t)x->vstride[i]);
  return h;
}

static int key_eq(const rt_node *a, const rt_node *b) {
  if (a->op != b->op || a->t != b->t || a->rop != b->rop || a->axis != b->axis || a->excl != b->excl ||
      a->ndim != b->ndim || a->nin != b->nin || a->seed != b->seed || a->offset != b->offset ||
      a->voff != b->voff || a->nbins != b->nbins || memcmp(&a->c, &b->c, sizeof a->c))
    return 0;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] != b->shape[i]) return 0;
    if (a->op == RT_VIEW && a->vstride[i] != b->vstride[i]) return 0;
  }
  for (int i = 0; i < a->nin; i++) if (a->in[i] != b->in[i]) return 0;
  return 1;
}

int cc_error(cc_session *s, lang_loc loc, int status, const char *fmt, ...) {
  if (s->err->status == GK_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err->msg, sizeof s->err->msg, fmt, ap);
    va_end(ap);
    s->err->status = status;
    s->errloc = loc;
  }
  return status;
}

static void unhash(cc_session *s, gnode *g) {
  if (!g->in_hash) return;
  gnode **p = &s->htab[g->hash & (s->hcap - 1)];
  while (*p && *p != g) p = &(*p)->hnext;
  if (*p) *p = g->hnext;
  g->in_hash = 0;
}

/* Doubles the CSE table once the live nodes outnumber twice its buckets, so
** a chain stays short however many nodes a statement makes (a list literal
** of 10^6 numbers makes a constant each).  Failing to grow only costs time. */
static void grow_hash(cc_session *s) {
  size_t cap = s->hcap * 2;
  gnode **t = rt_calloc(s->mem, cap, sizeof(gnode *));
  if (!t) return;
  for (size_t i = 0; i < s->hcap; i++)
    for (gnode *g = s->htab[i], *next; g; g = next) {
      next = g->hnext;
      g->hnext = t[g->hash & (cap - 1)];
      t[g->hash & (cap - 1)] = g;
    }
  rt_free(s->mem, s->htab, sizeof(gnode *) * s->hcap);
  s->htab = t;
  s->hcap = cap;
}

rt_node *cc_node(cc_session *s, const rt_node *tmpl) {
  rt_node t = *tmpl;
  int64_t n = 1;
  for (int i = 0; i < t.ndim; i++) n *= t.shape[i];
  t.n = n;
  t.val = NULL;
  int cse = t.op != RT_INPUT;
  uint64_t h = key_hash(&t);
  if (!s->htab) {
    s->htab = rt_calloc(s->mem, HASH_INIT, sizeof(gnode *));
    if (!s->htab) { cc_error(s, s->errloc, GK_ENOMEM, "out of memory"); return NULL; }
    s->hcap = HASH_INIT;
  }
  if (s->nlive > (int64_t)(2 * s->hcap)) grow_hash(s);
  if (cse)
    for (gnode *g = s->htab[h & (s->hcap - 1)]; g; g = g->hnext)
      if (g->hash == h && key_eq(&g->r, &t)) {
        /* A node an earlier statement made lives by its other users; the
        ** statement must hold its own reference, or computing one of those
        ** users (which drops the user's inputs) frees it under the caller. */
        if (!g->in_stmt) { g->refs++; g->in_stmt = 1; g->snext = s->stmt_nodes; s->stmt_nodes = g; }
        return &g->r;
      }
  gnode *g = rt_calloc(s->mem, 1, sizeof *g);
  if (!g) { cc_error(s, s->errloc, GK_ENOMEM, "out of memory"); return NULL; }
  g->r = t;
  g->r.id = ++s->next_id;
  g->r.aux = g;
  g->hash = h;
  g->grp = -1;
  for (int i = 0; i < t.nin; i++) G(t.in[i])->refs++;
  if (cse) {
    gnode **b = &s->htab[h & (s->hcap - 1)];
    g->hnext = *b; *b = g; g->in_hash = 1;
  }
  g->refs = 1;                 /* the statement's reference */
  g->in_stmt = 1;
  g->snext = s->stmt_nodes;
  s->stmt_nodes = g;
  s->nlive++;
  return &g->r;
}

void cc_ref(rt_node *x) { if (x) G(x)->refs++; }

/* Frees x and, iteratively, every input whose count drops to zero. */
void cc_unref(cc_session *s, rt_node *x) {
  if (!x || --G(x)->refs > 0) return;
  /* worklist threaded through snext is unsafe (statement list); use a small stack */
  rt_node *stack[256];
  int sp = 0;
  stack[sp++] = x;
  while (sp > 0) {
    rt_node *y = stack[--sp];
    gnode *g = G(y);
    unhash(s, g);
    for (int i = 0; i < y->nin; i++) {
      rt_node *in = y->in[i];
      if (--G(in)->refs == 0) {
        if (sp < 256) stack[sp++] = in;
        else { G(in)->refs = 1; cc_unref(s, in); }  /* rare: deep chains recurse by 256s */
      }
    }
    if (y->val) rt_value_unref(y->val);
    rt_free(s->mem, g, sizeof *g);
    s->nlive--;
  }
}

void cc_end_statement(cc_session *s) {
  gnode *g = s->stmt_nodes;
  s->stmt_nodes = NULL;
  while (g) {
    gnode *next = g->snext;
    g->snext = NULL;
    g->in_stmt = 0;
    cc_unref(s, &g->r);
    g = next;
  }
}

void cc_freeze(cc_session *s, rt_node *x) {
  if (x->op == RT_INPUT || !x->val) return;
  gnode *g = G(x);
  unhash(s, g);
  int nin = x->nin;
  rt_node *in[3] = { x->in[0], x->in[1], x->in[2] };
  x->op = RT_INPUT;
  x->nin = 0;
  x->in[0] = x->in[1] = x->in[2] = NULL;
  for (int i = 0; i < nin; i++) cc_unref(s, in[i]);
}

rt_node *cc_input(cc_session *s, rt_value *v) {
  rt_node t;
  memset(&t, 0, sizeof t);
  t.op = RT_INPUT; t.t = v->t; t.ndim = v->ndim; t.axis = -1;
  memcpy(t.shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  rt_node *x = cc_node(s, &t);
  if (!x) return NULL;
  x->val = v;
  rt_value_ref(v);
  return x;
}

void cc_graph_free(cc_session *s) {
  rt_free(s->mem, s->htab, sizeof(gnode *) * s->hcap);
  s->htab = NULL;
  s->hcap = 0;
}
