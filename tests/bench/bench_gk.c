/*
** tests/bench/bench_gk.c -- drives one gk benchmark through the C API:
**   bench_gk OP REPS
** Each repetition makes fresh inputs (SETUP, synced), then runs the
** operation (STMT, synced).  Run it with GK_PROFILE=1: the cuda backend
** prints each kernel's event-timed median at close (runtime/cuda.c).
** tests/bench/bench_gk.py runs it for every op and compares with torch.
**
**   bench_gk latency REPS
** gk's own overhead, measured from the host with a monotonic clock (no
** GK_PROFILE): the end-to-end time of a prepared `s = sum(x)` on 1024
** elements (gk_step + gk_get of the 4-byte result; median of REPS), the
** host time of a step whose plan and kernel are cached (gk_step + gk_sync
** of a map on 1024 elements minus nothing: it is the whole round trip), and
** the first run of a new statement in a fresh context when its kernel is
** compiled (JIT miss) and when it is in the disk cache (second context).
** Run it with XDG_CACHE_HOME set to an empty directory.  Prints
** "latency NAME VALUE UNIT" lines.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

#define TRY(g, call) do { if (call) { fprintf(stderr, "bench_gk latency: %s\n", gk_errmsg(g)); return 1; } } while (0)

/* One new statement's first run in a fresh context: eval + get. */
static int first_run(double *us) {
  gk_ctx *g = gk_open("cuda");
  if (!g) return 1;
  float s;
  TRY(g, gk_eval(g, "x = rand(1000)") || gk_sync(g));
  double t0 = now_us();
  TRY(g, gk_eval(g, "s = sum(x * 3 - 1)") || gk_get(g, "s", &s, sizeof s));
  *us = now_us() - t0;
  gk_close(g);
  return 0;
}

static int latency(int reps) {
  if (reps < 50) reps = 50;
  double *t = malloc(sizeof(double) * (size_t)reps);
  gk_ctx *g = gk_open("cuda");
  if (!t || !g) { fprintf(stderr, "bench_gk latency: cannot open the cuda backend\n"); return 1; }
  gk_stmt *st = NULL, *mp = NULL;
  float s = 0;
  TRY(g, gk_eval(g, "x = rand(1024)") || gk_sync(g));
  TRY(g, gk_prepare(g, "s = sum(x)", &st, NULL));
  TRY(g, gk_prepare(g, "y = x * 2 + 1", &mp, NULL));
  for (int r = 0; r < 20; r++) TRY(g, gk_step(st) || gk_get(g, "s", &s, sizeof s) || gk_step(mp) || gk_sync(g));
  for (int r = 0; r < reps; r++) {
    double t0 = now_us();
    TRY(g, gk_step(st) || gk_get(g, "s", &s, sizeof s));
    t[r] = now_us() - t0;
  }
  printf("latency sum1024_end_to_end %.2f us\n", median(t, reps));
  /* the same, split: step (host), sync (launch, run, wait), get (download) */
  double *t2 = malloc(sizeof(double) * (size_t)reps), *t3 = malloc(sizeof(double) * (size_t)reps);
  if (!t2 || !t3) return 1;
  for (int r = 0; r < reps; r++) {
    double t0 = now_us();
    TRY(g, gk_step(st));
    double t1 = now_us();
    TRY(g, gk_sync(g));
    double tb = now_us();
    TRY(g, gk_get(g, "s", &s, sizeof s));
    t[r] = t1 - t0; t2[r] = tb - t1; t3[r] = now_us() - tb;
  }
  printf("latency sum1024_split_step %.2f us\n", median(t, reps));
  printf("latency sum1024_split_sync %.2f us\n", median(t2, reps));
  printf("latency sum1024_split_get %.2f us\n", median(t3, reps));
  free(t2); free(t3);
  for (int r = 0; r < reps; r++) {
    double t0 = now_us();
    TRY(g, gk_step(mp) || gk_sync(g));
    t[r] = now_us() - t0;
  }
  printf("latency map1024_step_sync %.2f us\n", median(t, reps));
  for (int r = 0; r < reps; r++) {
    double t0 = now_us();
    TRY(g, gk_step(mp));
    t[r] = now_us() - t0;
    TRY(g, gk_sync(g));
  }
  printf("latency map1024_step_host %.2f us\n", median(t, reps));
  gk_finalize(st); gk_finalize(mp);
  gk_close(g);
  double miss, hit;
  if (first_run(&miss) || first_run(&hit)) return 1;
  printf("latency first_run_jit_miss %.2f ms\n", miss / 1e3);
  printf("latency first_run_disk_hit %.2f ms\n", hit / 1e3);
  free(t);
  return 0;
}

static const struct { const char *op, *setup, *stmt; } ops[] = {
  {"sum", "x = rand(268435456)", "s = sum(x)"},
  {"max", "x = rand(268435456)", "s = max(x)"},
  {"sum_xy1", "x = rand(268435456); y = rand(268435456)", "s = sum(x * y + 1)"},
  {"sum_exp_x_max", "x = rand(268435456)", "s = sum(exp(x - max(x)))"},
  {"scan", "x = rand(268435456)", "c = scan(x)"},
  {"filter", "x = rand(268435456)", "f = x[x > 0.5]"},
  {"hist256", "x = rand(268435456)", "h = hist(x, 256, 0, 1)"},
  {"transpose", "m = rand(16384, 16384)", "t = transpose(m)"},
  {"softmax_65536x1024", "m = rand(65536, 1024)", "y = softmax(rows(m))"},
  {"softmax_8192x8192", "m = rand(8192, 8192)", "y = softmax(rows(m))"},
  {"softmax_1024x65536", "m = rand(1024, 65536)", "y = softmax(rows(m))"},
  {"softmax_1048576x128", "m = rand(1048576, 128)", "y = softmax(rows(m))"},
  {"softmax_262144x32", "m = rand(262144, 32)", "y = softmax(rows(m))"},
  {"layernorm_65536x1024", "m = rand(65536, 1024)", "y = layernorm(rows(m))"},
  {"layernorm_8192x8192", "m = rand(8192, 8192)", "y = layernorm(rows(m))"},
  {"layernorm_1024x65536", "m = rand(1024, 65536)", "y = layernorm(rows(m))"},
  {"layernorm_1048576x128", "m = rand(1048576, 128)", "y = layernorm(rows(m))"},
  {"layernorm_262144x32", "m = rand(262144, 32)", "y = layernorm(rows(m))"},
  {"rowsum_65536x1024", "m = rand(65536, 1024)", "y = sum(rows(m))"},
  {"rowsum_1024x65536", "m = rand(1024, 65536)", "y = sum(rows(m))"},
  {"sum1024", "x = rand(1024)", "s = sum(x)"},
};

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: bench_gk OP REPS\n"); return 2; }
  int reps = atoi(argv[2]);
  if (!strcmp(argv[1], "latency")) return latency(reps);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    if (strcmp(ops[i].op, argv[1])) continue;
    gk_ctx *g = gk_open("cuda");
    if (!g) { fprintf(stderr, "bench_gk: cannot open the cuda backend\n"); return 1; }
    for (int r = 0; r < reps; r++) {
      if (gk_eval(g, ops[i].setup) || gk_sync(g) || gk_eval(g, ops[i].stmt) || gk_sync(g)) {
        fprintf(stderr, "bench_gk %s: %s\n", ops[i].op, gk_errmsg(g));
        gk_close(g);
        return 1;
      }
    }
    gk_close(g);
    return 0;
  }
  fprintf(stderr, "bench_gk: unknown op %s\n", argv[1]);
  return 2;
}
