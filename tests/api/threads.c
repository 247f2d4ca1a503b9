/*
** tests/api/threads.c -- contexts are independent: four contexts on four
** threads evaluate different programs at once (user functions, random
** streams, fused row kernels, filters, prepared statements, DLPack exports),
** many rounds each, and every result must equal the one computed first on
** the main thread, one context at a time.  Also: the failing contexts'
** errors stay in their own context.
*/
#include <gk.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include "check.h"
#include "dl.h"

#define NPROG 4
#define ROUNDS 40
#define MAXOUT 4096

/* Each program leaves its result in `out` (f64, at most MAXOUT elements). */
static const char *const programs[NPROG] = {
  /* user functions (inlined per call: the checker's frame state), softmax rows */
  "fn sq(a) = a * a\n"
  "fn norm2(v) = sqrt(sum(sq(v)))\n"
  "seed(1); m = rand(64, 48)\n"
  "e = exp(rows(m) - max(rows(m))); p = e / sum(e)\n"
  "out = f64(sum(rows(p)) + norm2(m[3]))",
  /* layernorm then matmul, reductions */
  "seed(2); x = randn(128, 32); w = randn(32, 16)\n"
  "y = layernorm(rows(x)) @ w\n"
  "out = f64(reshape(y, 2048))",
  /* scans, filter, hist */
  "seed(3); v = rand(5000)\n"
  "big = v[v > 0.5]\n"
  "c = scan(v)\n"
  "out = f64(hist(big, 10, 0.5, 1.0)) + f64(c[4999])",
  /* integer work, argmax, where */
  "fn clip(a, lo, hi) = minimum(maximum(a, lo), hi)\n"
  "i = iota(3000) % 97\n"
  "j = clip(i * 3 - 50, 0, 200)\n"
  "out = f64(where(j > 100, j, -j)) + f64(argmax(i))",
};

static double expect_buf[NPROG][MAXOUT];
static int64_t expect_n[NPROG];

typedef struct job {
  int prog;
  int failures;
  char why[512];
} job;

static int run_once(gk_ctx *g, int k, double *out, int64_t *n) {
  int rc = gk_eval(g, programs[k]);
  if (rc) return rc;
  gk_dtype t; int nd; int64_t sh[GK_MAX_DIMS];
  if ((rc = gk_shape(g, "out", &t, &nd, sh))) return rc;
  *n = nd ? sh[0] : 1;
  if (*n > MAXOUT) return GK_ELIMIT;
  return gk_get_as(g, "out", GK_F64, out, sizeof(double) * (size_t)*n);
}

static void *worker(void *arg) {
  job *j = arg;
  gk_ctx *g = gk_open("cpu");
  if (!g) { j->failures++; snprintf(j->why, sizeof j->why, "gk_open failed"); return NULL; }
  double *out = malloc(sizeof(double) * MAXOUT);
  for (int r = 0; r < ROUNDS; r++) {
    int64_t n = 0;
    int rc = run_once(g, j->prog, out, &n);
    if (rc || n != expect_n[j->prog] || memcmp(out, expect_buf[j->prog], sizeof(double) * (size_t)n)) {
      if (!j->failures) snprintf(j->why, sizeof j->why, "round %d: rc %d (%s), n %lld", r, rc, gk_errmsg(g), (long long)n);
      j->failures++;
    }
    /* an error in this context, mixed in */
    if (gk_eval(g, "out = nosuch + 1") != GK_ETYPE || !strstr(gk_errmsg(g), "unknown name 'nosuch'")) j->failures++;
    /* a prepared statement stepped on fresh input */
    gk_stmt *st = NULL;
    if (gk_prepare(g, "o2 = sum(out * 2)", &st, NULL) || !st || gk_step(st)) j->failures++;
    double o2 = 0, ref = 0;
    for (int64_t i = 0; i < n; i++) ref += out[i] * 2;
    if (gk_get(g, "o2", &o2, sizeof o2) || (o2 - ref) > 1e-6 * (1 + (ref < 0 ? -ref : ref)) ||
        (ref - o2) > 1e-6 * (1 + (ref < 0 ? -ref : ref))) j->failures++;
    gk_finalize(st);
    /* an export handed to "another library" and dropped */
    void *t = NULL;
    if (gk_to_dlpack(g, "out", &t) || !t) j->failures++;
    else ((DLManagedTensor *)t)->deleter(t);
  }
  free(out);
  gk_close(g);
  return NULL;
}

/* The checker under load: nested user-function calls only (no computing),
** so that the threads are inside function expansion at the same moments. */
static void *checker_worker(void *arg) {
  job *j = arg;
  gk_ctx *g = gk_open("cpu");
  if (!g) { j->failures++; return NULL; }
  char src[256];
  snprintf(src, sizeof src, "fn f%d(a) = a + %d\nfn h(b, c) = f%d(b) * c - f%d(c)\nx = iota(4)",
           j->prog, j->prog, j->prog, j->prog);
  if (gk_eval(g, src)) j->failures++;
  for (int r = 0; r < 3000; r++)
    if (gk_eval(g, "r = h(h(x, x + 1), h(x, 2))")) { j->failures++; snprintf(j->why, sizeof j->why, "%s", gk_errmsg(g)); }
  /* h(b, c) = (b + k) * c - (c + k) */
  int64_t r[4], k = j->prog;
  if (gk_get(g, "r", r, sizeof r)) j->failures++;
  for (int64_t x = 0; x < 4; x++) {
    int64_t a = (x + k) * (x + 1) - (x + 1 + k), b = (x + k) * 2 - (2 + k), want = (a + k) * b - (b + k);
    if (r[x] != want) { j->failures++; snprintf(j->why, sizeof j->why, "r[%lld] = %lld, expected %lld", (long long)x, (long long)r[x], (long long)want); }
  }
  gk_close(g);
  return NULL;
}

int main(void) {
  /* the expected results: one context at a time on this thread */
  for (int k = 0; k < NPROG; k++) {
    gk_ctx *g = gk_open("cpu");
    CHECK(g != NULL);
    if (!g) return t_done();
    OK(g, run_once(g, k, expect_buf[k], &expect_n[k]));
    gk_close(g);
  }
  /* four threads, each its own context and program; twice, with the
  ** programs rotated so that each thread runs a different one */
  for (int pass = 0; pass < 2; pass++) {
    pthread_t th[NPROG];
    job jobs[NPROG];
    for (int i = 0; i < NPROG; i++) {
      memset(&jobs[i], 0, sizeof jobs[i]);
      jobs[i].prog = (i + pass) % NPROG;
      CHECK(pthread_create(&th[i], NULL, worker, &jobs[i]) == 0);
    }
    for (int i = 0; i < NPROG; i++) {
      pthread_join(th[i], NULL);
      if (jobs[i].failures) fprintf(stderr, "thread %d (program %d): %d failures; first: %s\n", i, jobs[i].prog,
                                    jobs[i].failures, jobs[i].why);
      CHECK(jobs[i].failures == 0);
    }
  }
  {
    pthread_t th[NPROG];
    job jobs[NPROG];
    for (int i = 0; i < NPROG; i++) {
      memset(&jobs[i], 0, sizeof jobs[i]);
      jobs[i].prog = i + 1;
      CHECK(pthread_create(&th[i], NULL, checker_worker, &jobs[i]) == 0);
    }
    for (int i = 0; i < NPROG; i++) {
      pthread_join(th[i], NULL);
      if (jobs[i].failures) fprintf(stderr, "checker thread %d: %d failures; first: %s\n", i, jobs[i].failures, jobs[i].why);
      CHECK(jobs[i].failures == 0);
    }
  }
  /* eight contexts on one thread interleaved: still independent */
  gk_ctx *gs[8];
  for (int i = 0; i < 8; i++) {
    gs[i] = gk_open("cpu");
    char src[64];
    snprintf(src, sizeof src, "v = fill(%d, 10)", i);
    OK(gs[i], gk_eval(gs[i], src));
  }
  for (int i = 0; i < 8; i++) {
    int64_t v[10];
    OK(gs[i], gk_get(gs[i], "v", v, sizeof v));
    CHECK(v[9] == i);
    gk_close(gs[i]);
  }
  return t_done();
}
