/*
** tests/bench/bench_gk.c -- the host-clock loops of the benchmark, in C so
** that no Python call overhead lands in gk's end-to-end numbers.  Built as
** build/libgkbench.so; tests/bench/bench_gk.py loads libgk.so (RTLD_GLOBAL)
** and then this library, whose gk_* references resolve against it.
**
** gkb_step_get(st, g, name, buf, bytes, reps, out) runs the prepared
** statement st and reads variable `name` back (gk_step + gk_get of `bytes`
** bytes into buf) reps times, timing each round trip with CLOCK_MONOTONIC.
** out[0] = median, out[1] = min, out[2..4] = medians of the three parts of a
** second loop of reps: gk_step alone (host), gk_sync (launch, run, wait),
** gk_get of the computed value (download).  Returns 0, or the first failing
** call's status.
*/
#include <stdlib.h>
#include <time.h>
#include "gk.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_d);
  return t[n / 2];
}

int gkb_step_get(gk_stmt *st, gk_ctx *g, const char *name, void *buf, size_t bytes, int reps, double out[5]) {
  if (reps < 1) reps = 1;
  double *t = malloc(sizeof(double) * 4 * (size_t)reps);
  if (!t) return GK_ENOMEM;
  double *a = t + reps, *b = a + reps, *c = b + reps;
  int rc = 0;
  for (int r = 0; r < reps && !rc; r++) {
    double t0 = now_us();
    rc = gk_step(st);
    if (!rc) rc = gk_get(g, name, buf, bytes);
    t[r] = now_us() - t0;
  }
  for (int r = 0; r < reps && !rc; r++) {
    double t0 = now_us();
    rc = gk_step(st);
    double t1 = now_us();
    if (!rc) rc = gk_sync(g);
    double t2 = now_us();
    if (!rc) rc = gk_get(g, name, buf, bytes);
    a[r] = t1 - t0; b[r] = t2 - t1; c[r] = now_us() - t2;
  }
  if (!rc) {
    out[0] = median(t, reps);
    out[1] = t[0];
    out[2] = median(a, reps);
    out[3] = median(b, reps);
    out[4] = median(c, reps);
  }
  free(t);
  return rc;
}
