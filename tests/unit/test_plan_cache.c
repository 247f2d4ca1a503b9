/*
** tests/unit/test_plan_cache.c -- the compiler's plan cache: a statement
** re-run on new data of the same shapes, or of new sizes of the same
** structure, takes its plan from the cache, and gives exactly what a freshly
** planned run gives.  Drives the compiler
** directly (lang -> cc -> cpu backend) so it can read the cache counters.
*/
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "lang/ast.h"
#include "compiler/cc.h"
#include "runtime/rt.h"

static int passed, failed;
#define CHECK(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

typedef struct out { char buf[1 << 16]; size_t n; } out;
static void sink(void *ud, const char *t, size_t n) {
  out *o = ud;
  if (o->n + n < sizeof o->buf) { memcpy(o->buf + o->n, t, n); o->n += n; o->buf[o->n] = 0; }
}

static void *hook(void *ud, void *p, size_t o, size_t n) { rt_mem *m = ud; return m->fn(m->ud, p, o, n); }

/* Runs src in session s; returns the status. */
static int run(cc_session *s, const char *src) {
  rt_mem m = { rt_default_alloc, NULL };
  lang_arena a; lang_arena_init(&a, hook, &m);
  lang_program prog; lang_diag d; memset(&d, 0, sizeof d);
  int rc = lang_parse(&a, src, strlen(src), &prog, &d);
  for (int i = 0; !rc && i < prog.nstmts; i++) {
    rt_err e; rt_err_clear(&e); lang_loc loc;
    rc = cc_exec(s, prog.stmts[i], &e, &loc);
    if (rc) printf("error: %s\n", e.msg);
  }
  lang_arena_free(&a);
  return rc;
}

static int open_session(rt_mem *m, rt_backend **b, cc_session **s, out *o) {
  rt_err e; rt_err_clear(&e);
  if (rt_cpu_open(m, b, &e)) return 1;
  cc_hooks h = { sink, o };
  return cc_open(m, *b, &h, s, &e);
}

int main(void) {
  rt_mem m = { rt_default_alloc, NULL };
  static out o1, o2;
  rt_backend *b1, *b2; cc_session *s1, *s2;
  setenv("GK_PLAN_CACHE", "1", 1);
  CHECK(open_session(&m, &b1, &s1, &o1) == 0, "open");
  setenv("GK_PLAN_CACHE", "0", 1);
  CHECK(open_session(&m, &b2, &s2, &o2) == 0, "open uncached");
  const char *progs[] = {
    "x = rand(1000); print(sum(x * 2))",
    "m = randn(33, 31); print(softmax(rows(m)))",
    "v = randn(1001); print(mean(v), var(v), max(v))",
    "w = rand(500); print(scan(w * w) + 1)",
    "u = randn(777); print(u[u > 0.5])",
    "a = rand(40, 30); b = rand(30, 20); print(a @ b)",
  };
  int np = (int)(sizeof progs / sizeof progs[0]);
  for (int rep = 0; rep < 5; rep++)
    for (int k = 0; k < np; k++) {
      char src[256];
      snprintf(src, sizeof src, "seed(%d); %s", rep * 100 + k, progs[k]);
      o1.n = o2.n = 0; o1.buf[0] = o2.buf[0] = 0;
      CHECK(run(s1, src) == 0, "run cached %s", src);
      CHECK(run(s2, src) == 0, "run uncached %s", src);
      CHECK(o1.n > 0 && !strcmp(o1.buf, o2.buf), "same output for %s:\n%s---\n%s", src, o1.buf, o2.buf);
    }
  int64_t h1, m1, h2, m2;
  cc_plan_stats(s1, &h1, &m1);
  cc_plan_stats(s2, &h2, &m2);
  /* every program plans anew the first time only: the later four repetitions hit */
  CHECK(h1 >= 4 * np && m1 <= m1 + h1 - 4 * np, "hits %lld misses %lld", (long long)h1, (long long)m1);
  CHECK(h2 == 0, "GK_PLAN_CACHE=0 never hits (%lld)", (long long)h2);
  /* a new size of the same structure takes the plan from the cache (lowered
  ** again for the new sizes) and gives what a fresh plan gives; a new rank
  ** is a new structure */
  static const char *sized[] = {
    "x = rand(%lld); print(sum(x * 2), x[%lld - 1])",
    "m = randn(%lld, 7); print(softmax(rows(m))[%lld - 1])",
    "v = randn(%lld); print(mean(v), var(v), max(v), v[0:%lld - 1][-1])",
    "w = rand(%lld); print(scan(w * w)[%lld - 1] + 1)",
    "u = randn(%lld); print(sum(u[u > 0.5]), %lld)",
    "a = rand(%lld, 3); b = rand(3, 2); print((a @ b)[%lld - 1])",
  };
  static const long long lens[] = {31, 33, 1000, 4097, 100003};
  int nsz = (int)(sizeof sized / sizeof sized[0]);
  for (int k = 0; k < nsz; k++) {
    int64_t h0 = 0, m0 = 0, h9, m9;
    for (int q = 0; q < 5; q++) {
      if (q == 1) cc_plan_stats(s1, &h0, &m0);   /* the first size plans; the others hit */
      char src[256];
      snprintf(src, sizeof src, sized[k], lens[q], lens[q]);
      o1.n = o2.n = 0; o1.buf[0] = o2.buf[0] = 0;
      CHECK(run(s1, src) == 0 && run(s2, src) == 0, "run %s", src);
      CHECK(o1.n > 0 && !strcmp(o1.buf, o2.buf), "same output for %s:\n%s---\n%s", src, o1.buf, o2.buf);
    }
    cc_plan_stats(s1, &h9, &m9);
    CHECK(m9 == m0 && h9 - h0 >= 4, "%s: new sizes hit (%lld hits, %lld misses)", sized[k], (long long)(h9 - h0),
          (long long)(m9 - m0));
  }
  int64_t before; cc_plan_stats(s1, NULL, &before);
  run(s1, "x = rand(10, 100); print(sum(x * 2))");
  int64_t after; cc_plan_stats(s1, NULL, &after);
  CHECK(after == before + 1, "a new rank misses (%lld -> %lld)", (long long)before, (long long)after);
  cc_close(s1); b1->close(b1);
  cc_close(s2); b2->close(b2);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
