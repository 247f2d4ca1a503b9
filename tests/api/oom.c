/*
** tests/api/oom.c -- SQLite's out-of-memory method through gk.h: an
** allocator hook that fails at the N-th allocation, for N = 1, 2, ... until
** the whole operation succeeds.  Every run must end in GK_OK or GK_ENOMEM
** (never another status, never a crash), leave every variable set before
** the failure as it was and every variable it did bind correct, and return
** every block to the allocator by gk_close (no leak).  Two modes: the N-th
** allocation alone fails ("once"), or it and every later one ("after": the
** cleanup paths then run out of memory too).
**
** Usage: api_oom [rows]   (rows of the test matrix; default 256)
*/
#include <gk.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include "check.h"

static int flushed, flush_msg_bad;   /* operations past gk_flush; gk_flush failures without "gk_flush: " */

typedef struct fail_alloc {
  long count;       /* allocations so far */
  long fail_at;     /* 0 = never */
  int persistent;   /* fail every allocation from fail_at on */
  long live_blocks; /* outstanding blocks */
  long failures;    /* allocations refused */
} fail_alloc;

/* A size header in front of every block: the accounting does not trust
** old_size (it is advisory in gk.h). */
typedef union hdr { size_t n; max_align_t align; } hdr;

static void *fa_alloc(void *ud, void *p, size_t old, size_t n) {
  fail_alloc *fa = ud;
  (void)old;
  if (n == 0) {
    if (p) { fa->live_blocks--; free((hdr *)p - 1); }
    return NULL;
  }
  long c = ++fa->count;
  if (fa->fail_at && (c == fa->fail_at || (fa->persistent && c > fa->fail_at))) { fa->failures++; return NULL; }
  hdr *h = p ? realloc((hdr *)p - 1, sizeof(hdr) + n) : malloc(sizeof(hdr) + n);
  if (!h) return NULL;
  if (!p) fa->live_blocks++;
  h->n = n;
  return h + 1;
}

enum { COLS = 32, OUTC = 8 };
static int ROWS = 256;
static float *X, W[COLS * OUTC];

/* Expected results, computed once with no failure. */
static float Y[4096 * OUTC], S, Z[4096];
static int have_expected;

static const char *PROGRAM =
  "y = layernorm(rows(x)) @ w\n"
  "s = sum(y)\n"
  "fn sq(a) = a * a\n"
  "z = sum(sq(rows(x) - mean(rows(x))))\n";

static int close_enough(const float *a, const float *b, int n) {
  for (int i = 0; i < n; i++) if (fabsf(a[i] - b[i]) > 1e-4f * (1 + fabsf(b[i]))) return 0;
  return 1;
}

static void borrowed_release(void *ud, void *data) { (*(int *)ud)++; (void)data; }

/* The operation: everything an embedding program does.  Returns the first
** failing status (or GK_OK); *g_out is the context if it opened. */
static int operation(fail_alloc *fa, gk_ctx **g_out, int *releases) {
  gk_config c;
  memset(&c, 0, sizeof c);
  c.backend = "cpu";
  c.alloc = fa_alloc;
  c.alloc_ud = fa;
  const char *why = NULL;
  gk_ctx *g = gk_open_ex(&c, &why);
  *g_out = g;
  if (!g) return why && strstr(why, "out of memory") ? GK_ENOMEM : GK_EDEVICE;
  int64_t xs[2] = {ROWS, COLS}, ws[2] = {COLS, OUTC};
  int rc;
  if ((rc = gk_set(g, "x", GK_F32, 2, xs, X))) return rc;
  if ((rc = gk_borrow(g, "w", GK_F32, 2, ws, W, borrowed_release, releases))) return rc;
  if ((rc = gk_eval(g, PROGRAM))) return rc;
  static float ybuf[4096 * OUTC];
  if ((rc = gk_get(g, "y", ybuf, sizeof(float) * (size_t)ROWS * OUTC))) return rc;
  float s;
  if ((rc = gk_get(g, "s", &s, sizeof s))) return rc;
  double sd;
  if ((rc = gk_get_f64(g, "s", &sd))) return rc;   /* a conversion on the way */
  gk_stmt *st = NULL;
  const char *tail;
  gk_pos at = {3, 1};
  if ((rc = gk_prepare_named(g, "q = softmax(rows(x)) * 2; r = 1", "oom.gk", &at, &st, &tail))) return rc;
  rc = gk_step(st);
  if (!rc) rc = gk_step(st);
  gk_finalize(st);
  if (rc) return rc;
  /* gk_flush computes without waiting; its failure names it */
  if ((rc = gk_eval(g, "f = sum(rows(q)) * 2"))) return rc;
  if ((rc = gk_flush(g))) {
    if (strncmp(gk_errmsg(g), "gk_flush: ", 10)) flush_msg_bad++;
    return rc;
  }
  flushed++;
  if ((rc = gk_sync(g))) return rc;
  void *t = NULL;
  if ((rc = gk_to_dlpack(g, "q", &t))) return rc;
  if ((rc = gk_from_dlpack(g, "q2", t))) return rc;   /* takes t: gk calls its deleter */
  if ((rc = gk_eval(g, "m = max(q2)"))) return rc;
  float m;
  if ((rc = gk_get(g, "m", &m, sizeof m))) return rc;
  if ((rc = gk_unset(g, "q2"))) return rc;
  return GK_OK;
}

/* After a run (allocator disarmed): the variables are as they should be. */
static int state_ok(gk_ctx *g, int reached_set) {
  if (!reached_set) return 1;
  float *buf = malloc(sizeof(float) * (size_t)ROWS * COLS);
  int ok = 1;
  if (gk_get(g, "x", buf, sizeof(float) * (size_t)ROWS * COLS) == GK_OK) ok &= !memcmp(buf, X, sizeof(float) * (size_t)ROWS * COLS);
  else ok = 0;
  if (have_expected) {
    /* each of y, s, z is either unbound or right */
    int64_t sh[GK_MAX_DIMS];
    if (gk_shape(g, "y", NULL, NULL, sh) == GK_OK)
      ok &= gk_get(g, "y", buf, sizeof(float) * (size_t)ROWS * OUTC) == GK_OK && close_enough(buf, Y, ROWS * OUTC);
    if (gk_shape(g, "s", NULL, NULL, sh) == GK_OK) {
      float s;
      ok &= gk_get(g, "s", &s, sizeof s) == GK_OK && close_enough(&s, &S, 1);
    }
    if (gk_shape(g, "z", NULL, NULL, sh) == GK_OK)
      ok &= gk_get(g, "z", buf, sizeof(float) * (size_t)ROWS) == GK_OK && close_enough(buf, Z, ROWS);
  }
  free(buf);
  return ok;
}

static void expected(void) {
  gk_ctx *g = gk_open("cpu");
  int64_t xs[2] = {ROWS, COLS}, ws[2] = {COLS, OUTC};
  OK(g, gk_set(g, "x", GK_F32, 2, xs, X));
  OK(g, gk_set(g, "w", GK_F32, 2, ws, W));
  OK(g, gk_eval(g, PROGRAM));
  OK(g, gk_get(g, "y", Y, sizeof(float) * (size_t)ROWS * OUTC));
  OK(g, gk_get(g, "s", &S, sizeof S));
  OK(g, gk_get(g, "z", Z, sizeof(float) * (size_t)ROWS));
  gk_close(g);
  have_expected = 1;
}

static void run_mode(int persistent) {
  long n;
  int bad_status = 0, leaks = 0, bad_state = 0, bad_release = 0;
  for (n = 1; n < 100000; n++) {
    fail_alloc fa;
    memset(&fa, 0, sizeof fa);
    fa.fail_at = n;
    fa.persistent = persistent;
    gk_ctx *g = NULL;
    int releases = 0;
    int rc = operation(&fa, &g, &releases);
    long refused = fa.failures;
    fa.fail_at = 0;                     /* disarm: check and close with memory */
    if (rc != GK_OK && rc != GK_ENOMEM) {
      if (bad_status++ < 5) fprintf(stderr, "N=%ld (%s): status %d, expected GK_ENOMEM: %s\n", n,
                                    persistent ? "after" : "once", rc, g ? gk_errmsg(g) : "(open failed)");
    }
    if (rc == GK_ENOMEM && g && !strstr(gk_errmsg(g), "out of memory")) {
      if (bad_status++ < 5) fprintf(stderr, "N=%ld: GK_ENOMEM without 'out of memory' in: %s\n", n, gk_errmsg(g));
    }
    if (g) {
      int64_t sh[GK_MAX_DIMS];
      if (!state_ok(g, gk_shape(g, "x", NULL, NULL, sh) == GK_OK)) {
        if (bad_state++ < 5) fprintf(stderr, "N=%ld (%s): a variable is wrong after the failure\n", n, persistent ? "after" : "once");
      }
      gk_close(g);
    }
    if (releases > 1) { if (bad_release++ < 5) fprintf(stderr, "N=%ld: borrowed buffer released %d times\n", n, releases); }
    if (fa.live_blocks != 0) {
      if (leaks++ < 5) fprintf(stderr, "N=%ld (%s): %ld blocks not freed\n", n, persistent ? "after" : "once", fa.live_blocks);
    }
    if (rc == GK_OK && refused == 0) break;   /* the operation no longer reaches an N-th allocation */
  }
  printf("oom %-5s: %ld allocation points tried\n", persistent ? "after" : "once", n);
  CHECK(bad_status == 0);
  CHECK(bad_state == 0);
  CHECK(leaks == 0);
  CHECK(bad_release == 0);
  CHECK(n > 10);
  CHECK(flush_msg_bad == 0);
}

int main(int argc, char **argv) {
  if (argc > 1) ROWS = atoi(argv[1]);
  if (ROWS < 1 || ROWS > 4096) ROWS = 256;
  X = malloc(sizeof(float) * (size_t)ROWS * COLS);
  for (int i = 0; i < ROWS * COLS; i++) X[i] = (float)((i * 37) % 101) / 17.0f - 2.0f;
  for (int i = 0; i < COLS * OUTC; i++) W[i] = (float)((i * 13) % 29) / 29.0f - 0.5f;
  expected();
  run_mode(0);
  run_mode(1);
  CHECK(flushed > 0);
  free(X);
  return t_done();
}
