/*
** tests/api/core.c -- every entry point of gk.h, success and error paths,
** through the public header only: versions, contexts, hooks, set/get/shape/
** unset/sync/vars/option, borrowing, errors and their messages, and the
** rule that a failed call leaves every variable as it was.
*/
#include <gk.h>
#include <stdlib.h>
#include <stdint.h>
#include "check.h"

/* ---------------------------------------------------------------- helpers */

typedef struct outbuf { char text[8192]; size_t len; int calls; } outbuf;
static void out_hook(void *ud, const char *s, size_t n) {
  outbuf *o = ud;
  o->calls++;
  if (o->len + n < sizeof o->text) { memcpy(o->text + o->len, s, n); o->len += n; o->text[o->len] = 0; }
}

typedef struct errlog { int calls, last; char msg[4096]; } errlog;
static void err_hook(void *ud, int status, const char *msg) {
  errlog *e = ud;
  e->calls++; e->last = status;
  snprintf(e->msg, sizeof e->msg, "%s", msg);
}

static int releases;
static void *released_ptr;
static void count_release(void *ud, void *data) { releases++; released_ptr = data; (void)ud; }
static int dev_releases;
static void count_dev_release(void *ud, uint64_t p) { dev_releases++; (void)ud; (void)p; }

/* Reads f32 variable `name` of n elements into out; returns status. */
static int getf(gk_ctx *g, const char *name, float *out, size_t n) { return gk_get(g, name, out, n * sizeof(float)); }

typedef struct varlist { int n; char names[64][32]; int ndim[64]; size_t bytes[64]; char where[64][16]; } varlist;
static void collect(void *ud, const gk_varinfo *v) {
  varlist *l = ud;
  if (l->n >= 64) return;
  snprintf(l->names[l->n], 32, "%s", v->name);
  l->ndim[l->n] = v->ndim; l->bytes[l->n] = v->bytes;
  snprintf(l->where[l->n], 16, "%s", v->where);
  l->n++;
}

/* ---------------------------------------------------------------- tests */

static void test_versions(void) {
  CHECK_STR(gk_version(), GK_VERSION);
  CHECK(gk_version_number() == GK_VERSION_NUMBER);
  CHECK(GK_VERSION_NUMBER == GK_VERSION_MAJOR * 10000 + GK_VERSION_MINOR * 100 + GK_VERSION_PATCH);
  CHECK(GK_OK == 0);
  CHECK_STR(gk_errstr(GK_OK), "not an error");
  CHECK_STR(gk_errstr(GK_ENOMEM), "out of memory");
  CHECK_STR(gk_errstr(GK_EMISUSE), "API misuse");
  CHECK_STR(gk_errstr(GK_ELIMIT), "limit exceeded");
  CHECK_STR(gk_errstr(-1), "unknown status");
  CHECK_STR(gk_errstr(999), "unknown status");
  CHECK(gk_dtype_size(GK_BOOL) == 1 && gk_dtype_size(GK_I32) == 4 && gk_dtype_size(GK_I64) == 8);
  CHECK(gk_dtype_size(GK_F32) == 4 && gk_dtype_size(GK_F64) == 8 && gk_dtype_size((gk_dtype)42) == 0);
  CHECK_STR(gk_dtype_name(GK_F64), "f64");
  CHECK_STR(gk_dtype_name(GK_BOOL), "bool");
  CHECK_STR(gk_dtype_name((gk_dtype)-3), "?");
}

static void test_null_context(void) {
  int64_t sh[1] = {1};
  float f = 0;
  void *p = NULL;
  gk_stmt *st = (gk_stmt *)&f;
  CHECK(gk_eval(NULL, "1") == GK_EMISUSE);
  CHECK(gk_eval_named(NULL, "1", "x") == GK_EMISUSE);
  CHECK(gk_set(NULL, "x", GK_F32, 1, sh, &f) == GK_EMISUSE);
  CHECK(gk_get(NULL, "x", &f, 4) == GK_EMISUSE);
  CHECK(gk_shape(NULL, "x", NULL, NULL, NULL) == GK_EMISUSE);
  CHECK(gk_unset(NULL, "x") == GK_EMISUSE);
  CHECK(gk_sync(NULL) == GK_EMISUSE);
  CHECK(gk_vars(NULL, collect, NULL) == GK_EMISUSE);
  CHECK(gk_option(NULL, "plan", 1) == GK_EMISUSE);
  CHECK(gk_prepare(NULL, "x = 1", &st, NULL) == GK_EMISUSE);
  CHECK(gk_step(NULL) == GK_EMISUSE);
  CHECK(gk_to_dlpack(NULL, "x", &p) == GK_EMISUSE);
  CHECK(gk_errcode(NULL) == GK_EMISUSE);
  CHECK(gk_errmsg(NULL) != NULL);
  CHECK_STR(gk_backend(NULL), "none");
  releases = 0;
  CHECK(gk_borrow(NULL, "x", GK_F32, 1, sh, &f, count_release, NULL) == GK_EMISUSE);
  CHECK(releases == 1);   /* released even when there is no context */
  dev_releases = 0;
  CHECK(gk_borrow_device(NULL, "x", GK_F32, 1, sh, 1024, count_dev_release, NULL) == GK_EMISUSE);
  CHECK(dev_releases == 1);
  gk_close(NULL);
  gk_finalize(NULL);
  gk_interrupt(NULL);
  CHECK(1);
}

static void test_open(void) {
  const char *msg = "unset";
  CHECK(gk_open("no-such-backend") == NULL);
  gk_config c;
  memset(&c, 0, sizeof c);
  c.backend = "tpu";
  CHECK(gk_open_ex(&c, &msg) == NULL);
  CHECK(msg && strstr(msg, "unknown backend 'tpu'"));
  gk_ctx *g = gk_open_ex(NULL, &msg);      /* defaults */
  CHECK(g != NULL);
  CHECK(msg == NULL);
  if (g) {
    CHECK(!strcmp(gk_backend(g), "cpu") || !strcmp(gk_backend(g), "cuda"));
    OK(g, gk_eval(g, "x = 1"));
    gk_close(g);
  }
  g = gk_open("");
  CHECK(g != NULL);
  gk_close(g);
  g = gk_open("cpu");
  CHECK(g && !strcmp(gk_backend(g), "cpu"));
  gk_close(g);
}

static void test_set_get(gk_ctx *g) {
  /* every dtype, round trip */
  int64_t sh2[2] = {2, 3}, sh1[1] = {6};
  float f[6] = {1, 2, 3, 4, 5, 6}, fo[6] = {0};
  double d[6] = {1.5, -2, 3, 4, 5, 6e300}, dout[6];
  int32_t i32[6] = {1, -2, 3, INT32_MAX, INT32_MIN, 0}, i32o[6];
  int64_t i64[6] = {1, -2, 3, INT64_MAX, INT64_MIN, 0}, i64o[6];
  uint8_t b[6] = {0, 1, 2, 0, 255, 1}, bo[6];
  OK(g, gk_set(g, "f", GK_F32, 2, sh2, f));
  OK(g, gk_get(g, "f", fo, sizeof fo));
  CHECK(!memcmp(f, fo, sizeof f));
  OK(g, gk_set(g, "d", GK_F64, 1, sh1, d));
  OK(g, gk_get(g, "d", dout, sizeof dout));
  CHECK(!memcmp(d, dout, sizeof d));
  OK(g, gk_set(g, "i", GK_I32, 1, sh1, i32));
  OK(g, gk_get(g, "i", i32o, sizeof i32o));
  CHECK(!memcmp(i32, i32o, sizeof i32));
  OK(g, gk_set(g, "j", GK_I64, 2, sh2, i64));
  OK(g, gk_get(g, "j", i64o, sizeof i64o));
  CHECK(!memcmp(i64, i64o, sizeof i64));
  OK(g, gk_set(g, "b", GK_BOOL, 1, sh1, b));
  OK(g, gk_get(g, "b", bo, sizeof bo));
  CHECK(bo[0] == 0 && bo[1] == 1 && bo[2] == 1 && bo[3] == 0 && bo[4] == 1 && bo[5] == 1);  /* normalised */
  /* the copy is a copy */
  f[0] = 100;
  OK(g, getf(g, "f", fo, 6));
  CHECK(fo[0] == 1);
  /* 0-d and empty arrays */
  double s = 42.5, so = 0;
  OK(g, gk_set(g, "s", GK_F64, 0, NULL, &s));
  OK(g, gk_get(g, "s", &so, sizeof so));
  CHECK(so == 42.5);
  int64_t sh0[1] = {0};
  OK(g, gk_set(g, "e", GK_F32, 1, sh0, NULL));
  OK(g, gk_get(g, "e", NULL, 0));
  OK(g, gk_eval(g, "n = sum(e)"));
  float n = -1;
  OK(g, getf(g, "n", &n, 1));
  CHECK(n == 0);
  /* the buffer must be the value's size exactly: a bigger one is refused
  ** too, and nothing is written */
  float big[16];
  big[5] = -1;
  CHECK_RC(g, gk_get(g, "f", big, sizeof big), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get: 'f' is f32[2,3], 24 bytes; the buffer has 64 (gk_get_as converts to another dtype)");
  CHECK(big[5] == -1);
  OK(g, gk_get(g, "f", big, 6 * sizeof(float)));
  CHECK(big[5] == 6);
  /* shape */
  gk_dtype t; int nd; int64_t shp[GK_MAX_DIMS];
  OK(g, gk_shape(g, "j", &t, &nd, shp));
  CHECK(t == GK_I64 && nd == 2 && shp[0] == 2 && shp[1] == 3);
  OK(g, gk_shape(g, "s", &t, &nd, NULL));
  CHECK(t == GK_F64 && nd == 0);
  OK(g, gk_shape(g, "s", NULL, NULL, NULL));
  /* eight dims */
  int64_t sh8[8] = {1, 2, 1, 2, 1, 2, 1, 2};
  float f16[16];
  for (int k = 0; k < 16; k++) f16[k] = (float)k;
  OK(g, gk_set(g, "h", GK_F32, 8, sh8, f16));
  OK(g, gk_eval(g, "hs = sum(h)"));
  OK(g, getf(g, "hs", &n, 1));
  CHECK(n == 120);
}

static void test_set_errors(gk_ctx *g) {
  int64_t sh1[1] = {3}, neg[1] = {-1}, huge[2] = {INT64_MAX / 2, 4};
  float f[3] = {1, 2, 3}, fo[3];
  OK(g, gk_set(g, "keep", GK_F32, 1, sh1, f));
  float other[3] = {7, 8, 9};
  CHECK_RC(g, gk_set(g, NULL, GK_F32, 1, sh1, other), GK_EMISUSE);
  CHECK_RC(g, gk_set(g, "", GK_F32, 1, sh1, other), GK_EMISUSE);
  CHECK_RC(g, gk_set(g, "1x", GK_F32, 1, sh1, other), GK_EMISUSE);
  CHECK_RC(g, gk_set(g, "a-b", GK_F32, 1, sh1, other), GK_EMISUSE);
  CHECK_RC(g, gk_set(g, "not", GK_F32, 1, sh1, other), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_set: 'not' is not a valid variable name");
  CHECK_RC(g, gk_set(g, "keep", (gk_dtype)9, 1, sh1, other), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_set: invalid dtype 9");
  CHECK_RC(g, gk_set(g, "keep", GK_F32, 9, sh1, other), GK_EMISUSE);
  CHECK_RC(g, gk_set(g, "keep", GK_F32, -1, sh1, other), GK_EMISUSE);
  CHECK_RC(g, gk_set(g, "keep", GK_F32, 1, NULL, other), GK_EMISUSE);
  CHECK_RC(g, gk_set(g, "keep", GK_F32, 1, neg, other), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_set: negative dimension -1");
  CHECK_RC(g, gk_set(g, "keep", GK_F32, 1, sh1, NULL), GK_EMISUSE);
  CHECK_RC(g, gk_set(g, "keep", GK_F32, 2, huge, other), GK_ELIMIT);
  CHECK(gk_errcode(g) == GK_ELIMIT);
  /* one size limit everywhere: 2^40 elements, and an empty array of absurd dims (issue 12) */
  int64_t big40[2] = {(int64_t)1 << 20, (int64_t)1 << 20}, empty_huge[2] = {0, INT64_MAX};
  CHECK_RC(g, gk_set(g, "keep", GK_F32, 2, big40, other), GK_ELIMIT);
  CHECK_STR(gk_errmsg(g), "gk_set: array too large (limit 17179869184 elements)");
  CHECK_RC(g, gk_set(g, "keep", GK_F32, 2, empty_huge, other), GK_ELIMIT);
  CHECK_STR(gk_errmsg(g), "gk_set: array too large (limit 17179869184 elements)");
  /* names the language cannot assign: builtins and user functions */
  CHECK_RC(g, gk_set(g, "sum", GK_F32, 1, sh1, other), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_set: 'sum' is a function; choose another variable name");
  OK(g, gk_eval(g, "fn twice(a) = 2 * a"));
  CHECK_RC(g, gk_set(g, "twice", GK_F32, 1, sh1, other), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_set: 'twice' is a function; choose another variable name");
  CHECK_RC(g, gk_eval(g, "twice = 1"), GK_ETYPE);
  OK(g, getf(g, "keep", fo, 3));
  CHECK(fo[0] == 1 && fo[2] == 3);
  CHECK_STR(gk_errmsg(g), "");
  CHECK(gk_errcode(g) == GK_OK);
  /* get / shape / unset errors */
  CHECK_RC(g, gk_get(g, "nosuch", fo, sizeof fo), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get: no variable 'nosuch'");
  CHECK_RC(g, gk_get(g, "keep", fo, sizeof fo - 1), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_get: 'keep' is f32[3], 12 bytes; the buffer has 11 (gk_get_as converts to another dtype)");
  CHECK_RC(g, gk_get(g, "keep", NULL, 12), GK_EMISUSE);
  CHECK_RC(g, gk_get(g, NULL, fo, 12), GK_EMISUSE);
  CHECK_RC(g, gk_shape(g, "nosuch", NULL, NULL, NULL), GK_EMISUSE);
  CHECK_RC(g, gk_shape(g, NULL, NULL, NULL, NULL), GK_EMISUSE);
  CHECK_RC(g, gk_unset(g, "nosuch"), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_unset: no variable 'nosuch'");
  CHECK_RC(g, gk_unset(g, NULL), GK_EMISUSE);
  OK(g, gk_eval(g, "k2 = keep * 2"));
  OK(g, gk_unset(g, "keep"));
  CHECK_RC(g, gk_get(g, "keep", fo, sizeof fo), GK_EMISUSE);
  OK(g, getf(g, "k2", fo, 3));          /* computed from the unset variable: still fine */
  CHECK(fo[0] == 2 && fo[2] == 6);
}

static void test_eval_errors(gk_ctx *g) {
  int64_t sh[1] = {3};
  float a[3] = {1, 2, 3}, fo[3];
  OK(g, gk_set(g, "a", GK_F32, 1, sh, a));
  /* syntax error: nothing runs */
  CHECK_RC(g, gk_eval(g, "a = a * 2; b = (1 +"), GK_ESYNTAX);
  CHECK_STR(gk_errmsg(g), "<expr>:1:20: error: unexpected end of input\na = a * 2; b = (1 +\n                   ^\n");
  OK(g, getf(g, "a", fo, 3));
  CHECK(fo[0] == 1);
  /* type error: the failing statement binds nothing; earlier ones are done */
  CHECK_RC(g, gk_eval(g, "a = a * 10\nbb = nosuch(a)"), GK_ETYPE);
  CHECK(strstr(gk_errmsg(g), "<expr>:2:6: error: unknown function 'nosuch'") == gk_errmsg(g));
  OK(g, getf(g, "a", fo, 3));
  CHECK(fo[0] == 10 && fo[2] == 30);
  CHECK_RC(g, gk_shape(g, "bb", NULL, NULL, NULL), GK_EMISUSE);
  CHECK_RC(g, gk_eval_named(g, "a = a + q", "model.gk"), GK_ETYPE);
  CHECK_STR(gk_errmsg(g), "model.gk:1:9: error: unknown name 'q'\na = a + q\n        ^\n");
  OK(g, getf(g, "a", fo, 3));
  CHECK(fo[0] == 10);
  /* value errors */
  CHECK_RC(g, gk_eval(g, "a = max(a[0:0])"), GK_EVALUE);
  CHECK(strstr(gk_errmsg(g), "empty array") != NULL);
  CHECK_RC(g, gk_eval(g, "a = a[7]"), GK_EVALUE);
  OK(g, getf(g, "a", fo, 3));
  CHECK(fo[0] == 10 && fo[1] == 20);
  /* shape mismatch */
  CHECK_RC(g, gk_eval(g, "a = a + [1, 2]"), GK_ETYPE);
  /* I/O error */
  CHECK_RC(g, gk_eval(g, "a = load(\"/nonexistent/x.npy\")"), GK_EIO);
  OK(g, getf(g, "a", fo, 3));
  CHECK(fo[2] == 30);
  CHECK_RC(g, gk_eval(g, NULL), GK_EMISUSE);
  OK(g, gk_eval(g, ""));
  OK(g, gk_eval(g, "# only a comment\n\n"));
  OK(g, gk_eval_named(g, "z = 1", NULL));
  /* the shape of a pending value is known without computing it */
  OK(g, gk_eval(g, "p = reshape(iota(12), 3, 4) * 2"));
  gk_dtype t; int nd; int64_t shp[GK_MAX_DIMS];
  OK(g, gk_shape(g, "p", &t, &nd, shp));
  CHECK(nd == 2 && shp[0] == 3 && shp[1] == 4);
  /* a compute error raised by gk_get leaves the variable pending and usable */
  OK(g, gk_sync(g));
}

static void test_hooks(void) {
  outbuf o; memset(&o, 0, sizeof o);
  errlog e; memset(&e, 0, sizeof e);
  gk_config c; memset(&c, 0, sizeof c);
  c.backend = "cpu";
  c.output = out_hook; c.output_ud = &o;
  c.error = err_hook; c.error_ud = &e;
  gk_ctx *g = gk_open_ex(&c, NULL);
  CHECK(g != NULL);
  if (!g) return;
  OK(g, gk_eval(g, "x = iota(4); print(x * 2); x + 1; y = 3"));
  CHECK_STR(o.text, "[0 2 4 6]\n[1 2 3 4]\n");
  CHECK(e.calls == 0);
  CHECK_RC(g, gk_eval(g, "y = x + q"), GK_ETYPE);
  CHECK(e.calls == 1 && e.last == GK_ETYPE);
  CHECK_STR(e.msg, gk_errmsg(g));
  CHECK_RC(g, gk_get(g, "nosuch", NULL, 0), GK_EMISUSE);
  CHECK(e.calls == 2 && e.last == GK_EMISUSE);
  /* plan text goes to the output hook too */
  o.len = 0; o.text[0] = 0;
  OK(g, gk_option(g, "plan", 1));
  OK(g, gk_eval(g, "sum(x)"));
  CHECK(strstr(o.text, ": reduce (grid_reduce)") != NULL);
  CHECK(strstr(o.text, "kernels: 1\n") != NULL);
  CHECK(strstr(o.text, "\n6\n") != NULL);
  OK(g, gk_option(g, "plan", 0));
  OK(g, gk_option(g, "fusion", 0));
  OK(g, gk_option(g, "fusion", 1));
  OK(g, gk_option(g, "time", 1));
  OK(g, gk_option(g, "tf32", 0));
  OK(g, gk_option(g, "cuda", 0));
  CHECK_RC(g, gk_option(g, "turbo", 1), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_option: unknown option 'turbo'");
  CHECK_RC(g, gk_option(g, NULL, 1), GK_EMISUSE);
  /* the on/off options take 0 or 1: 2 is a caller's mistake, not "on" */
  CHECK_RC(g, gk_option(g, "plan", 2), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_option: plan is 0 (off) or 1 (on), got 2");
  CHECK_RC(g, gk_option(g, "fusion", -1), GK_EMISUSE);
  CHECK_STR(gk_errmsg(g), "gk_option: fusion is 0 (off) or 1 (on), got -1");
  gk_close(g);
}

static void test_vars_unset_sync(gk_ctx *g) {
  OK(g, gk_eval(g, "zz = iota(3); aa = reshape(iota(6), 2, 3) * 1.5; mm = 1"));
  varlist l; memset(&l, 0, sizeof l);
  OK(g, gk_vars(g, collect, &l));
  int ia = -1, iz = -1;
  for (int i = 0; i < l.n; i++) {
    if (!strcmp(l.names[i], "aa")) ia = i;
    if (!strcmp(l.names[i], "zz")) iz = i;
    if (i) CHECK(strcmp(l.names[i - 1], l.names[i]) < 0);   /* name order */
  }
  CHECK(ia >= 0 && iz > ia);
  if (ia >= 0) { CHECK(l.ndim[ia] == 2 && l.bytes[ia] == 48); CHECK_STR(l.where[ia], "pending"); }
  CHECK_RC(g, gk_vars(g, NULL, NULL), GK_EMISUSE);
  OK(g, gk_sync(g));
  memset(&l, 0, sizeof l);
  OK(g, gk_vars(g, collect, &l));
  for (int i = 0; i < l.n; i++) if (!strcmp(l.names[i], "aa")) CHECK_STR(l.where[i], gk_backend(g));
  OK(g, gk_unset(g, "zz"));
  CHECK_RC(g, gk_unset(g, "zz"), GK_EMISUSE);
  /* gk_flush computes what is pending without waiting; a loop of steps, each flushed, ends at the last
  ** step's value (every step computed: gk_sync after it has nothing left to do) */
  CHECK(gk_flush(NULL) == GK_EMISUSE);
  OK(g, gk_eval(g, "ff = reshape(iota(6), 2, 3) * 2.5; acc = ff"));
  OK(g, gk_flush(g));
  memset(&l, 0, sizeof l);
  OK(g, gk_vars(g, collect, &l));
  int seen = 0;
  for (int i = 0; i < l.n; i++) if (!strcmp(l.names[i], "ff")) { CHECK_STR(l.where[i], gk_backend(g)); seen = 1; }
  CHECK(seen);
  gk_stmt *st = NULL;
  OK(g, gk_prepare(g, "acc = acc + ff", &st, NULL));
  for (int i = 0; i < 5; i++) { OK(g, gk_step(st)); OK(g, gk_flush(g)); }
  double fo[6];
  OK(g, gk_get(g, "acc", fo, sizeof fo));   /* iota is i64: f64 */
  for (int i = 0; i < 6; i++) CHECK(fo[i] == 6 * 2.5 * i);
  gk_finalize(st);
  OK(g, gk_unset(g, "ff"));
  OK(g, gk_unset(g, "acc"));
}

static void test_borrow(gk_ctx *g) {
  float buf[4] = {1, 2, 3, 4}, fo[4];
  int64_t sh[1] = {4};
  releases = 0; released_ptr = NULL;
  OK(g, gk_borrow(g, "bw", GK_F32, 1, sh, buf, count_release, NULL));
  CHECK(releases == 0);
  OK(g, gk_eval(g, "bw2 = bw * 2"));
  OK(g, getf(g, "bw2", fo, 4));
  CHECK(fo[0] == 2 && fo[3] == 8);
  OK(g, gk_eval(g, "pend = bw + 1"));           /* pending: holds the buffer */
  OK(g, gk_unset(g, "bw"));
  CHECK(releases == 0);
  OK(g, getf(g, "pend", fo, 4));
  CHECK(fo[0] == 2 && fo[3] == 5);
  CHECK(releases == 1 && released_ptr == buf);  /* computed: the buffer is no longer needed */
  /* rebinding releases */
  OK(g, gk_borrow(g, "bw", GK_F32, 1, sh, buf, count_release, NULL));
  OK(g, gk_borrow(g, "bw", GK_F32, 1, sh, buf, count_release, NULL));
  CHECK(releases == 2);
  /* no copy: the data is read at compute time */
  OK(g, gk_eval(g, "late = bw * 1"));
  buf[0] = 50;
  OK(g, getf(g, "late", fo, 4));
  if (!strcmp(gk_backend(g), "cpu")) CHECK(fo[0] == 50);
  buf[0] = 1;
  /* errors release exactly once */
  CHECK_RC(g, gk_borrow(g, "not", GK_F32, 1, sh, buf, count_release, NULL), GK_EMISUSE);
  CHECK(releases == 3);
  CHECK_RC(g, gk_borrow(g, "q", GK_F32, 1, sh, NULL, count_release, NULL), GK_EMISUSE);
  CHECK(releases == 4);
  CHECK_RC(g, gk_borrow(g, "q", GK_F32, 1, sh, (char *)buf + 1, count_release, NULL), GK_EMISUSE);
  CHECK(releases == 5);
  CHECK(strstr(gk_errmsg(g), "aligned") != NULL);
  /* release NULL: the buffer simply outlives the variable */
  OK(g, gk_borrow(g, "nr", GK_F32, 1, sh, buf, NULL, NULL));
  OK(g, gk_unset(g, "nr"));
  /* device borrow on cpu */
  dev_releases = 0;
  if (!strcmp(gk_backend(g), "cpu")) {
    CHECK_RC(g, gk_borrow_device(g, "dv", GK_F32, 1, sh, 4096, count_dev_release, NULL), GK_EMISUSE);
    CHECK(dev_releases == 1);
    CHECK(strstr(gk_errmsg(g), "cannot use device memory") != NULL);
  }
  OK(g, gk_unset(g, "bw"));
  CHECK(releases == 6);
}

static void test_two_contexts(void) {
  gk_ctx *a = gk_open("cpu"), *b = gk_open("cpu");
  CHECK(a && b);
  if (!a || !b) { gk_close(a); gk_close(b); return; }
  OK(a, gk_eval(a, "x = 1; seed(7); r = rand(3)"));
  CHECK_RC(b, gk_get(b, "x", NULL, 0), GK_EMISUSE);
  CHECK_RC(a, gk_eval(a, "q +"), GK_ESYNTAX);
  CHECK_STR(gk_errmsg(b), "gk_get: no variable 'x'");   /* errors are per context */
  OK(b, gk_eval(b, "seed(7); r = rand(3)"));
  float ra[3], rb[3];
  OK(a, getf(a, "r", ra, 3));
  OK(b, getf(b, "r", rb, 3));
  CHECK(!memcmp(ra, rb, sizeof ra));
  gk_close(a);
  OK(b, gk_eval(b, "y = r * 2"));
  gk_close(b);
}

static void test_interrupt_and_complete(gk_ctx *g) {
  gk_interrupt(g);                 /* a request before a call does not stick */
  OK(g, gk_eval(g, "w = 1"));
  CHECK(gk_is_complete("x = 1") == 1);
  CHECK(gk_is_complete("x = (1 +") == 0);
  CHECK(gk_is_complete("x = [1, 2") == 0);
  CHECK(gk_is_complete("x = )") == 1);
  CHECK(gk_is_complete(NULL) == 1);
}

int main(void) {
  test_versions();
  test_null_context();
  test_open();
  gk_ctx *g = gk_open("cpu");
  CHECK(g != NULL);
  if (!g) return t_done();
  test_set_get(g);
  test_set_errors(g);
  test_eval_errors(g);
  test_vars_unset_sync(g);
  test_borrow(g);
  test_interrupt_and_complete(g);
  gk_close(g);
  test_hooks();
  test_two_contexts();
  return t_done();
}
