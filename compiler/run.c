/*
** compiler/run.c -- observing values: cc_compute materializes nodes.  It
** gathers their pending graph (fuse.c cc_collect), takes its plan from the
** plan cache (plancache.c) or makes it (fuse.c cc_fuse), runs the groups on
** the backend in order -- each lowered first unless the cache holds its text
** (runtime: prepare_group, run_group), each printed for --plan and --profile
** (plan_print.c) -- remembers the plan, and freezes the computed outputs
** (graph.c cc_freeze: they forget their inputs).
**
** Called by the checker (build.c: values it must see, a statement's check
** that can fail, too many pending nodes) and by session.c.
*/
#include <time.h>
#include "compiler/cc_int.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Lowers group g (the backend's prepare_group) when it was planned now, must
** be lowered again for new sizes (fresh), or cannot take new sizes as it is;
** otherwise its cached text stands (checked under GK_PLAN_CACHE=verify). */
static int prepare(cc_session *s, rt_group *g, int fresh) {
  if (fresh || rt_prep_rebind(g)) {
    rt_prep_free(s->mem, g->prep);
    g->prep = NULL;
    atomic_store_explicit(&s->prog_jit, 1, memory_order_relaxed);
    int rc = s->be->prepare_group(s->be, g, s->opt_tf32);
    atomic_store_explicit(&s->prog_jit, 0, memory_order_relaxed);
    if (rc) return cc_error(s, s->errloc, rc, "%s", s->be->err.msg);
    return GK_OK;
  }
  if (s->pc_verify && g->prep) return cc_pc_verify(s, g);
  return GK_OK;
}

/* Runs prepared group g (jit: the ms its preparation took), counting its
** launches as kernels; with the profile option waits for it and prints its
** line. */
static int launch(cc_session *s, rt_group *g, double jit) {
  if (s->opt_plan) cc_print_group(s, g, s->kernels);
  int64_t number = s->kernels;
  if (g->nlaunch > 1) s->kernels += g->nlaunch - 1;   /* e.g. a matmul's prologue, then the gemm */
  double t1 = now_ms();
  int rc = s->be->run_group(s->be, g);
  if (!rc && s->opt_profile && s->be->sync) rc = s->be->sync(s->be);   /* a profile waits for each kernel */
  if (rc) return cc_error(s, s->errloc, rc, "%s", s->be->err.msg);
  double t2 = now_ms();
  atomic_fetch_add_explicit(&s->prof_run_ns, (int64_t)((t2 - t1) * 1e6), memory_order_relaxed);
  if (s->opt_profile) cc_profile_group(s, g, number, t2 - t1, jit > 0.001 ? jit : 0);
  return GK_OK;
}

/* Runs the groups of pl in order (cached: pl came from the plan cache, its
** groups lowered already unless pl->relower says otherwise), keeping the
** progress counters that gk_get_progress reads. */
static int run_plan(cc_session *s, cc_plan *pl, int cached) {
  int rc = GK_OK;
  atomic_store_explicit(&s->prog_planned, s->kernels + pl->ngroups, memory_order_relaxed);
  for (int k = 0; k < pl->ngroups && !rc; k++) {
    rt_group *g = &pl->groups[pl->order[k]];
    double t0 = now_ms();
    s->kernels++;
    rt_err_clear(&s->be->err);
    if ((rc = prepare(s, g, !cached || pl->relower[pl->order[k]]))) break;
    double jit = now_ms() - t0;
    atomic_fetch_add_explicit(&s->prof_jit_ns, (int64_t)(jit * 1e6), memory_order_relaxed);
    rc = launch(s, g, jit);
    atomic_store_explicit(&s->prog_done, s->kernels, memory_order_relaxed);
  }
  atomic_store_explicit(&s->prog_planned, s->kernels, memory_order_relaxed);
  return rc;
}

/* The groups' outputs hold their values now: they forget their inputs. */
static void freeze_outputs(cc_session *s, const cc_plan *pl) {
  for (int g = 0; g < pl->ngroups; g++)
    for (int k = 0; k < pl->groups[g].nout; k++) cc_freeze(s, pl->groups[g].outs[k]);
}

/* Materializes targets: collect, plan (from the cache or anew), run,
** remember, freeze.  On failure the error is set and nothing is frozen. */
int cc_compute(cc_session *s, rt_node **targets, int nt) {
  cc_pending pg;
  cc_plan pl = {0};
  cc_pkey key = {0};
  s->stamp++;
  int rc = cc_collect(s, targets, nt, &pg);
  if (!rc && pg.npost) {
    rc = cc_pc_lookup(s, &pg, &key, &pl);
    if (!rc && !key.hit) rc = cc_fuse(s, &pg, &pl);
    if (!rc) {
      if (!key.hit) s->pc_misses++;
      rc = run_plan(s, &pl, key.hit);
    }
    if (!rc) cc_pc_store(s, &key, &pl);
    if (!rc) freeze_outputs(s, &pl);
  }
  if (rc && !s->err->status) cc_error(s, s->errloc, rc, rc == GK_ENOMEM ? "out of memory" : "internal error planning");
  cc_plan_free(s, &pl);
  cc_pc_key_free(s, &key);
  cc_pending_free(s, &pg);
  return rc;
}

/* Computes every pending variable, then (wait) waits for the backend
** (cc_sync without the error redirection). */
int cc_compute_vars(cc_session *s, int wait) {
  rt_node **xs = rt_alloc(s->mem, sizeof(rt_node *) * (size_t)(s->nvars ? s->nvars : 1));
  int n = 0, rc = GK_OK;
  if (!xs) rc = cc_error(s, s->errloc, GK_ENOMEM, "out of memory");
  else {
    for (int i = 0; i < s->nvars; i++) if (!s->vars[i].v.x->val) xs[n++] = s->vars[i].v.x;
    if (n) rc = cc_compute(s, xs, n);
    rt_free(s->mem, xs, sizeof(rt_node *) * (size_t)(s->nvars ? s->nvars : 1));
  }
  if (!rc && wait) rc = s->be->sync(s->be);
  return rc;
}
