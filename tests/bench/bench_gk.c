/*
** tests/bench/bench_gk.c -- drives one gk benchmark through the C API:
**   bench_gk OP REPS
** Each repetition makes fresh inputs (SETUP, synced), then runs the
** operation (STMT, synced).  Run it with GK_PROFILE=1: the cuda backend
** prints each kernel's event-timed median at close (runtime/cuda.c).
** tests/bench/bench_gk.py runs it for every op and compares with torch.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gk.h"

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
