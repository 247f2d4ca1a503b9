/*
** examples/embed.c -- gk embedded in a C program.
**
** A small "model": y = layernorm(rows(m)) @ w, prepared once and stepped on
** a fresh batch of rows each time.  The weights are borrowed (no copy); each
** batch is copied in with gk_set; results are read with gk_get.  Errors go
** through the error hook, `print` output through the output hook, and every
** host allocation through a counting allocator.  It prints timings and
** checks the result of the last batch against a plain C computation.
**
** Build against an installed gk:
**     cc embed.c $(pkg-config --cflags --libs gk) -lm -o embed
** or in the source tree:
**     cc -I. examples/embed.c build/libgk.a -ldl -lpthread -lm -o build/embed
**
** Usage: embed [rows cols out batches]   (default 512 256 64 50)
*/
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#include <gk.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- host hooks ----------------------------------------------------------- */

/* Counts host memory; a size header in front of each block, because gk's
** old_size argument is advisory. */
typedef struct counter { size_t live, peak; long calls, blocks; } counter;
typedef union hdr { size_t n; max_align_t align; } hdr;

static void *count_alloc(void *ud, void *p, size_t old, size_t n) {
  counter *c = ud;
  hdr *h = p ? (hdr *)p - 1 : NULL;
  (void)old;
  c->calls++;
  if (n == 0) {
    if (h) { c->live -= h->n; c->blocks--; free(h); }
    return NULL;
  }
  size_t was = h ? h->n : 0;
  hdr *q = realloc(h, sizeof(hdr) + n);
  if (!q) return NULL;
  if (!h) c->blocks++;
  q->n = n;
  c->live += n - was;
  if (c->live > c->peak) c->peak = c->live;
  return q + 1;
}

static void on_output(void *ud, const char *text, size_t len) {
  fprintf((FILE *)ud, "[gk] %.*s", (int)len, text);
}

static void on_error(void *ud, int status, const char *msg) {
  fprintf((FILE *)ud, "[gk error %d: %s]\n%s", status, gk_errstr(status), msg);
}

/* --- data ----------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;
static float frand(void) {           /* xorshift64, uniform in [-1, 1) */
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (float)(rng >> 40) / 8388608.0f - 1.0f;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The same model in plain C (double accumulation), for checking. */
static void reference(const float *m, const float *w, float *y, int R, int C, int O) {
  double *z = malloc(sizeof(double) * (size_t)C);
  for (int r = 0; r < R; r++) {
    double mu = 0, var = 0;
    for (int c = 0; c < C; c++) mu += m[(size_t)r * C + c];
    mu /= C;
    for (int c = 0; c < C; c++) { double d = m[(size_t)r * C + c] - mu; var += d * d; }
    var /= C;
    for (int c = 0; c < C; c++) z[c] = (m[(size_t)r * C + c] - mu) / sqrt(var + 1e-5);
    for (int o = 0; o < O; o++) {
      double s = 0;
      for (int c = 0; c < C; c++) s += z[c] * w[(size_t)c * O + o];
      y[(size_t)r * O + o] = (float)s;
    }
  }
  free(z);
}

#define TRY(call) do { if ((call) != GK_OK) goto fail; } while (0)

int main(int argc, char **argv) {
  int R = 512, C = 256, O = 64, batches = 50;
  if (argc == 5) { R = atoi(argv[1]); C = atoi(argv[2]); O = atoi(argv[3]); batches = atoi(argv[4]); }
  if (R < 1 || C < 2 || O < 1 || batches < 1) { fprintf(stderr, "usage: embed [rows cols out batches]\n"); return 2; }

  counter mem = {0, 0, 0, 0};
  gk_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.alloc = count_alloc;   cfg.alloc_ud = &mem;
  cfg.output = on_output;    cfg.output_ud = stdout;
  cfg.error = on_error;      cfg.error_ud = stderr;
  const char *why = NULL;
  gk_ctx *g = gk_open_ex(&cfg, &why);       /* backend: $GK_BACKEND, else cuda if usable, else cpu */
  if (!g) { fprintf(stderr, "embed: cannot open gk: %s\n", why); return 1; }
  printf("gk %s on the %s backend: y = layernorm(rows(m)) @ w, m %dx%d, w %dx%d, %d batches\n",
         gk_version(), gk_backend(g), R, C, C, O, batches);

  float *m = malloc(sizeof(float) * (size_t)R * C);
  float *w = malloc(sizeof(float) * (size_t)C * O);
  float *y = malloc(sizeof(float) * (size_t)R * O);
  float *ref = malloc(sizeof(float) * (size_t)R * O);
  gk_stmt *model = NULL;
  int rc = 1;
  if (!m || !w || !y || !ref) { fprintf(stderr, "embed: out of memory\n"); goto done; }
  for (size_t i = 0; i < (size_t)C * O; i++) w[i] = frand() / sqrtf((float)C);

  /* The weights stay ours: borrowed, not copied (on the cuda backend
  ** gk_borrow copies to the device once, here). */
  int64_t mshape[2] = {R, C}, wshape[2] = {C, O};
  TRY(gk_borrow(g, "w", GK_F32, 2, wshape, w, NULL, NULL));
  TRY(gk_eval(g, "print(\"weights\", shape(w), \"mean\", mean(w))"));

  /* Compile once ... */
  TRY(gk_prepare(g, "y = layernorm(rows(m)) @ w", &model, NULL));

  /* ... run many. */
  double t_set = 0, t_step = 0, t_get = 0, first = 0;
  for (int b = 0; b < batches; b++) {
    for (size_t i = 0; i < (size_t)R * C; i++) m[i] = frand() * 3.0f + (float)(i % 7);
    double t0 = now();
    TRY(gk_set(g, "m", GK_F32, 2, mshape, m));
    double t1 = now();
    TRY(gk_step(model));
    double t2 = now();
    TRY(gk_get(g, "y", y, sizeof(float) * (size_t)R * O));   /* computes: one fused row kernel + gemm */
    double t3 = now();
    if (b == 0) first = t3 - t0;   /* includes kernel compilation on cuda */
    else { t_set += t1 - t0; t_step += t2 - t1; t_get += t3 - t2; }
  }
  int n = batches > 1 ? batches - 1 : 1;
  printf("first batch            %9.1f us (cuda: includes compiling the kernels)\n", first * 1e6);
  printf("per batch: gk_set      %9.1f us (copies %zu KiB)\n", t_set / n * 1e6, sizeof(float) * (size_t)R * C / 1024);
  printf("           gk_step     %9.1f us (checks the statement, builds its graph; no parsing)\n", t_step / n * 1e6);
  printf("           gk_get      %9.1f us (plans, runs, copies %zu KiB back)\n", t_get / n * 1e6, sizeof(float) * (size_t)R * O / 1024);
  double flops = 2.0 * R * C * O + 8.0 * R * C;
  printf("           total       %9.1f us, %.2f GFLOP/s\n", (t_set + t_step + t_get) / n * 1e6,
         flops / ((t_set + t_step + t_get) / n) * 1e-9);

  /* Check the last batch against plain C. */
  reference(m, w, ref, R, C, O);
  double maxerr = 0;
  for (size_t i = 0; i < (size_t)R * O; i++) {
    double e = fabs((double)y[i] - ref[i]) / (1.0 + fabs(ref[i]));
    if (e > maxerr) maxerr = e;
  }
  printf("max relative error vs plain C: %.2e\n", maxerr);

  /* A mistake is reported through the hook and changes nothing. */
  printf("a deliberate error (through the error hook):\n");
  if (gk_eval(g, "y = layernorm(rows(m)) @ m") == GK_OK) goto fail;
  TRY(gk_get(g, "y", ref, sizeof(float) * (size_t)R * O));
  int same = !memcmp(ref, y, sizeof(float) * (size_t)R * O);
  printf("y is unchanged: %s\n", same ? "yes" : "NO");

  printf("host memory through the allocator: peak %.1f KiB, %ld calls\n", (double)mem.peak / 1024, mem.calls);
  rc = maxerr < 1e-3 && same ? 0 : 1;
  if (rc) fprintf(stderr, "embed: result check FAILED\n");
  else printf("ok\n");
  goto done;

fail:
  fprintf(stderr, "embed: %s", gk_errmsg(g));
  rc = 1;
done:
  gk_finalize(model);
  gk_close(g);
  if (mem.blocks) { fprintf(stderr, "embed: %ld blocks (%zu bytes) not returned to the allocator\n", mem.blocks, mem.live); rc = 1; }
  free(m); free(w); free(y); free(ref);
  return rc;
}
