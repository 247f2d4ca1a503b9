/*
** compiler/session.c -- a session from the outside: open and close, options,
** progress and counters, and the entry points that observe or set a value
** (cc_lookup, cc_sync, cc_bind_value).  The top of compiler/ beside the
** checker (build.c): no file of compiler/ calls it.
*/
#include <string.h>
#include <stdlib.h>
#include "compiler/cc_int.h"

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
  cc_names_free(s);
  cc_graph_free(s);
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

/* Computes every pending variable (into err), then (wait) waits for the backend. */
int cc_sync(cc_session *s, int wait, rt_err *err) {
  rt_err *saved = s->err;
  s->err = err;
  int rc = cc_compute_vars(s, wait);
  s->err = saved;
  return rc;
}

int cc_lookup(cc_session *s, const char *name, int compute, rt_node **x, rt_err *err) {
  cvar *v = cc_findvar(s, name);
  if (!v) return rt_seterr(err, GK_EMISUSE, "no variable '%s'", name);
  if (compute && !v->v.x->val) {
    rt_err *saved = s->err;
    s->err = err;
    rt_node *y = v->v.x;
    int rc = cc_compute(s, &y, 1);
    s->err = saved;
    if (rc) return rc;
  }
  *x = v->v.x;
  return GK_OK;
}

int cc_bind_value(cc_session *s, const char *name, rt_value *v, rt_err *err) {
  rt_err *saved = s->err;
  s->err = err;
  int rc = GK_OK;
  rt_node *x = cc_input(s, v);
  if (!x) rc = err->status ? err->status : GK_ENOMEM;
  else {
    cval c; memset(&c, 0, sizeof c);
    c.kind = K_ARRAY; c.x = x;
    rc = cc_setvar(s, name, c);
  }
  cc_end_statement(s);
  s->err = saved;
  return rc;
}
