/*
** tests/fuzz/fuzz_common.h -- what the whole-library fuzz targets share: a
** cpu context with a capped allocator, a watchdog that interrupts a call
** running past its deadline, and the invariants every gk_eval outcome must
** keep (a known status, a message on failure, no "internal error", the
** context usable afterwards).  Any break is abort(), which libFuzzer (or the
** replay driver, tests/fuzz/replay.c) reports with the input.
*/
#ifndef GK_FUZZ_COMMON_H
#define GK_FUZZ_COMMON_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gk.h"

#define FZ_MEM_CAP ((size_t)256 << 20) /* bytes live through the allocator hook: a bigger request is GK_ENOMEM */
#define FZ_DEADLINE_MS 300             /* a call still running then is interrupted (and again every 50 ms) */

static size_t fz_live;
static void *fz_alloc(void *ud, void *p, size_t old, size_t n) {
  (void)ud;
  if (!n) { if (p) fz_live -= old; free(p); return NULL; }
  size_t was = p ? old : 0;
  if (n > was && n - was > FZ_MEM_CAP - fz_live) return NULL;
  void *q = realloc(p, n);
  if (q) fz_live = fz_live - was + n;
  return q;
}
static void fz_out(void *ud, const char *t, size_t n) { (void)ud; (void)t; (void)n; }

static pthread_mutex_t fz_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fz_cv = PTHREAD_COND_INITIALIZER;
static gk_ctx *fz_cur;            /* the context being run (NULL: none) */
static struct timespec fz_when;   /* when to interrupt it */

static void *fz_watch(void *arg) {
  (void)arg;
  pthread_mutex_lock(&fz_mu);
  for (;;) {
    if (!fz_cur) { pthread_cond_wait(&fz_cv, &fz_mu); continue; }
    if (pthread_cond_timedwait(&fz_cv, &fz_mu, &fz_when) == 0) continue;
    if (!fz_cur) continue;
    gk_interrupt(fz_cur);
    fz_when.tv_nsec += 50 * 1000000L;
    if (fz_when.tv_nsec >= 1000000000L) { fz_when.tv_sec++; fz_when.tv_nsec -= 1000000000L; }
  }
  return NULL;
}

static void fz_arm(gk_ctx *g) {
  static int started;
  pthread_mutex_lock(&fz_mu);
  if (!started) {
    pthread_t th;
    if (pthread_create(&th, NULL, fz_watch, NULL)) abort();
    started = 1;
  }
  clock_gettime(CLOCK_REALTIME, &fz_when);
  fz_when.tv_nsec += FZ_DEADLINE_MS % 1000 * 1000000L;
  fz_when.tv_sec += FZ_DEADLINE_MS / 1000 + fz_when.tv_nsec / 1000000000L;
  fz_when.tv_nsec %= 1000000000L;
  fz_cur = g;
  pthread_cond_signal(&fz_cv);
  pthread_mutex_unlock(&fz_mu);
}
static void fz_disarm(void) {
  pthread_mutex_lock(&fz_mu);
  fz_cur = NULL;
  pthread_cond_signal(&fz_cv);
  pthread_mutex_unlock(&fz_mu);
}

static gk_ctx *fz_open(void) {
  setenv("GK_THREADS", "1", 0);   /* the machine is shared: one core per fuzzer */
  gk_config c;
  memset(&c, 0, sizeof c);
  c.alloc = fz_alloc;
  c.output = fz_out;
  c.backend = "cpu";
  gk_ctx *g = gk_open_ex(&c, NULL);
  if (!g) abort();
  return g;
}

/* Runs src on g under the watchdog and checks the outcome. */
static int fz_eval(gk_ctx *g, const char *src) {
  fz_arm(g);
  int rc = gk_eval_named(g, src, "<fuzz>");
  fz_disarm();
  const char *m = gk_errmsg(g);
  if (rc < GK_OK || rc > GK_ELIMIT || rc == GK_EMISUSE) { fprintf(stderr, "status %d: %s\n", rc, m); abort(); }
  if (rc && !m[0]) { fprintf(stderr, "status %d without a message\n", rc); abort(); }
  const char *e = strstr(m, "error: ");   /* the first one is gk's own words, before any quoted input */
  if (e && !strncmp(e + 7, "internal", 8)) { fprintf(stderr, "%s\n", m); abort(); }
  return rc;
}

/* The context still works after whatever happened. */
static void fz_sane(gk_ctx *g) {
  int64_t v = 0;
  if (gk_eval(g, "fz_k = sum(iota(5))") || gk_get_i64(g, "fz_k", &v) || v != 10) {
    fprintf(stderr, "context unusable after the input: %s\n", gk_errmsg(g));
    abort();
  }
}

#endif
