/*
** compiler/graph.c -- the lazy graph: interned (CSE) nodes with reference
** counts, the current statement's nodes, materialized values, variables and
** user functions of a session.
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

/* ---------------------------------------------------------------- names */

static int var_pos(cc_session *s, const char *name, int *found) {
  int lo = 0, hi = s->nvars;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    int c = strcmp(s->vars[mid].name, name);
    if (c == 0) { *found = 1; return mid; }
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  *found = 0;
  return lo;
}

cvar *cc_findvar(cc_session *s, const char *name) {
  int f, i = var_pos(s, name, &f);
  return f ? &s->vars[i] : NULL;
}

/* Binds name to v (taking a reference on v.x), dropping the old binding. */
int cc_setvar(cc_session *s, const char *name, cval v) {
  int f, i = var_pos(s, name, &f);
  if (f) {
    rt_node *old = s->vars[i].v.x;
    cc_ref(v.x);
    G(v.x)->bound++;
    G(old)->bound--;
    s->vars[i].v = v;
    cc_unref(s, old);
    return GK_OK;
  }
  if (s->nvars >= CC_MAX_VARS) return cc_error(s, s->errloc, GK_ELIMIT, "too many variables (limit %d)", CC_MAX_VARS);
  if (s->nvars == s->capvars) {
    int nc = s->capvars ? s->capvars * 2 : 16;
    cvar *nv = rt_realloc(s->mem, s->vars, sizeof(cvar) * (size_t)s->capvars, sizeof(cvar) * (size_t)nc);
    if (!nv) return cc_error(s, s->errloc, GK_ENOMEM, "out of memory");
    s->vars = nv; s->capvars = nc;
  }
  size_t ln = strlen(name);
  char *nm = rt_alloc(s->mem, ln + 1);
  if (!nm) return cc_error(s, s->errloc, GK_ENOMEM, "out of memory");
  memcpy(nm, name, ln + 1);
  memmove(&s->vars[i + 1], &s->vars[i], sizeof(cvar) * (size_t)(s->nvars - i));
  s->vars[i].name = nm;
  s->vars[i].v = v;
  cc_ref(v.x);
  G(v.x)->bound++;
  s->nvars++;
  return GK_OK;
}

int cc_unbind(cc_session *s, const char *name) {
  int f, i = var_pos(s, name, &f);
  if (!f) return GK_EMISUSE;
  rt_node *old = s->vars[i].v.x;
  G(old)->bound--;
  rt_free(s->mem, s->vars[i].name, strlen(s->vars[i].name) + 1);
  memmove(&s->vars[i], &s->vars[i + 1], sizeof(cvar) * (size_t)(s->nvars - i - 1));
  s->nvars--;
  cc_unref(s, old);
  return GK_OK;
}

cfn *cc_findfn(cc_session *s, const char *name) {
  for (int i = 0; i < s->nfns; i++) if (!strcmp(s->fns[i].name, name)) return &s->fns[i];
  return NULL;
}

int cc_has_fn(cc_session *s, const char *name) { return cc_findfn(s, name) != NULL; }

void cc_each_var(cc_session *s, cc_var_fn fn, void *ud) {
  for (int i = 0; i < s->nvars; i++) fn(ud, s->vars[i].name, s->vars[i].v.x);
}

/* ---------------------------------------------------------------- session */

int cc_open(rt_mem *mem, rt_backend *be, const cc_hooks *hooks, cc_session **out, rt_err *e) {
  cc_session *s = rt_calloc(mem, 1, sizeof *s);
  if (!s) return rt_seterr(e, GK_ENOMEM, "out of memory");
  s->mem = mem;
  s->be = be;
  if (hooks) s->hooks = *hooks;
  s->opt_fusion = 1;
  const char *f = getenv("GK_FUSION");
  if (f && !strcmp(f, "0")) s->opt_fusion = 0;
  const char *pc = getenv("GK_PLAN_CACHE");
  if (pc && !strcmp(pc, "0")) s->pc_off = 1;
  if (pc && !strcmp(pc, "verify")) s->pc_verify = 1;
  s->seed = 0;
  s->err = e;
  *out = s;
  return GK_OK;
}

void cc_close(cc_session *s) {
  if (!s) return;
  cc_end_statement(s);
  for (int i = 0; i < s->nvars; i++) {
    rt_node *x = s->vars[i].v.x;
    rt_free(s->mem, s->vars[i].name, strlen(s->vars[i].name) + 1);
    cc_unref(s, x);
  }
  rt_free(s->mem, s->vars, sizeof(cvar) * (size_t)s->capvars);
  for (int i = 0; i < s->nfns; i++) {
    rt_free(s->mem, s->fns[i].name, strlen(s->fns[i].name) + 1);
    lang_arena_free(&s->fns[i].arena);
  }
  rt_free(s->mem, s->fns, sizeof(cfn) * (size_t)s->capfns);
  rt_free(s->mem, s->htab, sizeof(gnode *) * s->hcap);
  cc_plan_cache_free(s);
  rt_free(s->mem, s, sizeof *s);
}

void cc_option(cc_session *s, int opt, int value) {
  switch (opt) {
  case CC_OPT_PLAN: s->opt_plan = value; break;
  case CC_OPT_CUDA: s->opt_cuda = value; break;
  case CC_OPT_FUSION: s->opt_fusion = value; break;
  case CC_OPT_TF32: s->opt_tf32 = value; break;
  case CC_OPT_DIGITS: s->opt_digits = value; break;
  case CC_OPT_WIDTH: s->opt_width = value; break;
  case CC_OPT_LAST: s->opt_last = value; break;
  case CC_OPT_PROFILE: s->opt_profile = value; break;
  case CC_OPT_CHARTS: s->opt_charts = value; break;
  }
}

int cc_get_option(cc_session *s, int opt) {
  switch (opt) {
  case CC_OPT_PLAN: return s->opt_plan;
  case CC_OPT_CUDA: return s->opt_cuda;
  case CC_OPT_FUSION: return s->opt_fusion;
  case CC_OPT_TF32: return s->opt_tf32;
  case CC_OPT_DIGITS: return s->opt_digits;
  case CC_OPT_WIDTH: return s->opt_width;
  case CC_OPT_LAST: return s->opt_last;
  case CC_OPT_PROFILE: return s->opt_profile;
  case CC_OPT_CHARTS: return s->opt_charts;
  }
  return 0;
}

int64_t cc_kernels(cc_session *s) { return s->kernels; }

void cc_progress(cc_session *s, int64_t *done, int64_t *planned, int *jit, double *run_ms, double *jit_ms, int64_t *bytes) {
  *done = atomic_load_explicit(&s->prog_done, memory_order_relaxed);
  *planned = atomic_load_explicit(&s->prog_planned, memory_order_relaxed);
  if (*planned < *done) *planned = *done;
  *jit = atomic_load_explicit(&s->prog_jit, memory_order_relaxed);
  *run_ms = (double)atomic_load_explicit(&s->prof_run_ns, memory_order_relaxed) * 1e-6;
  *jit_ms = (double)atomic_load_explicit(&s->prof_jit_ns, memory_order_relaxed) * 1e-6;
  *bytes = atomic_load_explicit(&s->prof_bytes, memory_order_relaxed);
}
