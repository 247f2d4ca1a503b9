/*
** api/api.c -- the public C API (gk.h): contexts, evaluation, variables.
**
** This is the top of the library: it parses with lang/, runs statements
** through compiler/, and moves values with runtime/.  Errors are kept in
** the context (the first since the last successful call) already formatted
** as `FILE:LINE:COL: error: message`, the source line and a caret.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include "gk.h"
#include "lang/ast.h"
#include "compiler/cc.h"
#include "runtime/rt.h"

#define API_MSG 8192  /* bytes of a formatted error message */

struct gk_ctx {
  rt_mem mem;                /* host allocation hook */
  gk_config cfg;             /* the caller's hooks */
  rt_backend *be;
  cc_session *cc;
  int status;                /* status of the last call */
  char msg[API_MSG];         /* its formatted message */
  volatile sig_atomic_t interrupt_flag;
  volatile int interrupt;    /* the backend polls this */
};

struct gk_stmt {
  gk_ctx *g;
  lang_arena arena;          /* owns the statement's tree */
  const ast *stmt;
  char *src;                 /* the statement's text (for diagnostics) */
  size_t len;
};

const char *gk_version(void) { return GK_VERSION; }

size_t gk_dtype_size(gk_dtype t) {
  switch (t) {
  case GK_BOOL: return 1;
  case GK_I32: case GK_F32: return 4;
  case GK_I64: case GK_F64: return 8;
  }
  return 0;
}

const char *gk_dtype_name(gk_dtype t) {
  switch (t) {
  case GK_BOOL: return "bool";
  case GK_I32: return "i32";
  case GK_I64: return "i64";
  case GK_F32: return "f32";
  case GK_F64: return "f64";
  }
  return "?";
}

/* ------------------------------------------------------------ errors */

static int fail(gk_ctx *g, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(gk_ctx *g, int status, const char *fmt, ...) {
  if (g->status == GK_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->msg, sizeof g->msg, fmt, ap);
    va_end(ap);
    g->status = status;
    if (g->cfg.error) g->cfg.error(g->cfg.error_ud, status, g->msg);
  }
  return status;
}

static void begin(gk_ctx *g) { g->status = GK_OK; g->msg[0] = 0; g->interrupt = 0; }

static int located(gk_ctx *g, int status, const char *file, const char *src, size_t len, lang_loc loc, const char *msg) {
  if (g->status != GK_OK) return g->status;
  if (loc.line > 0) lang_format_error(g->msg, sizeof g->msg, file, src, len, loc, msg);
  else snprintf(g->msg, sizeof g->msg, "%s: error: %s\n", file, msg);
  g->status = status;
  if (g->cfg.error) g->cfg.error(g->cfg.error_ud, status, g->msg);
  return status;
}

const char *gk_errmsg(gk_ctx *g) { return g ? g->msg : "no context"; }
int gk_errcode(gk_ctx *g) { return g ? g->status : GK_EMISUSE; }

/* ------------------------------------------------------------ contexts */

static void *user_alloc(void *ud, void *p, size_t o, size_t n) {
  gk_ctx *g = ud;
  return g->cfg.alloc(g->cfg.alloc_ud, p, o, n);
}

static char open_msg[512];

gk_ctx *gk_open_ex(const gk_config *cfg, const char **errmsg) {
  gk_config c;
  if (cfg) c = *cfg; else memset(&c, 0, sizeof c);
  rt_mem m = { c.alloc ? NULL : rt_default_alloc, NULL };
  gk_ctx *g = c.alloc ? c.alloc(c.alloc_ud, NULL, 0, sizeof *g) : malloc(sizeof *g);
  if (errmsg) *errmsg = NULL;
  if (!g) { if (errmsg) *errmsg = "out of memory"; return NULL; }
  memset(g, 0, sizeof *g);
  g->cfg = c;
  g->mem = m;
  if (c.alloc) { g->mem.fn = user_alloc; g->mem.ud = g; }
  const char *want = c.backend;
  if (!want || !*want) want = getenv("GK_BACKEND");
  rt_err e; rt_err_clear(&e);
  int rc;
  if (want && *want && !strcmp(want, "cuda")) rc = rt_cuda_open(&g->mem, &g->be, &e);
  else if (want && *want && strcmp(want, "cpu")) rc = rt_seterr(&e, GK_EMISUSE, "unknown backend '%s' (use cpu or cuda)", want);
  else if (want && *want) rc = rt_cpu_open(&g->mem, &g->be, &e);
  else {
    char why[256];
    if (rt_cuda_available(why, sizeof why) && rt_cuda_open(&g->mem, &g->be, &e) == GK_OK) rc = GK_OK;
    else { rt_err_clear(&e); rc = rt_cpu_open(&g->mem, &g->be, &e); }
  }
  if (rc == GK_OK) {
    cc_hooks h = { NULL, NULL };
    if (c.output) { h.output = c.output; h.ud = c.output_ud; }
    g->be->interrupt = &g->interrupt;
    rc = cc_open(&g->mem, g->be, &h, &g->cc, &e);
    if (rc) g->be->close(g->be);
  }
  if (rc) {
    snprintf(open_msg, sizeof open_msg, "%s", e.msg);
    if (errmsg) *errmsg = open_msg;
    if (c.alloc) c.alloc(c.alloc_ud, g, sizeof *g, 0); else free(g);
    return NULL;
  }
  return g;
}

gk_ctx *gk_open(const char *backend) {
  gk_config c;
  memset(&c, 0, sizeof c);
  c.backend = backend;
  return gk_open_ex(&c, NULL);
}

void gk_close(gk_ctx *g) {
  if (!g) return;
  cc_close(g->cc);
  g->be->close(g->be);
  if (g->cfg.alloc) g->cfg.alloc(g->cfg.alloc_ud, g, sizeof *g, 0); else free(g);
}

const char *gk_backend(gk_ctx *g) { return g ? g->be->name : "none"; }

void gk_interrupt(gk_ctx *g) { if (g) g->interrupt = 1; }

int gk_option(gk_ctx *g, const char *name, int value) {
  if (!g || !name) return GK_EMISUSE;
  begin(g);
  if (!strcmp(name, "plan")) cc_option(g->cc, CC_OPT_PLAN, value);
  else if (!strcmp(name, "cuda")) cc_option(g->cc, CC_OPT_CUDA, value);
  else if (!strcmp(name, "fusion")) cc_option(g->cc, CC_OPT_FUSION, value);
  else if (!strcmp(name, "tf32")) cc_option(g->cc, CC_OPT_TF32, value);
  else if (!strcmp(name, "time")) { /* the command line measures time itself */ }
  else return fail(g, GK_EMISUSE, "unknown option '%s'", name);
  return GK_OK;
}

/* ------------------------------------------------------------ evaluation */

static void *arena_hook(void *ud, void *p, size_t o, size_t n) {
  rt_mem *m = ud;
  return m->fn(m->ud, p, o, n);
}

static int run_program(gk_ctx *g, const char *src, size_t len, const char *name, const lang_program *prog) {
  int64_t k0 = cc_kernels(g->cc);
  int rc = GK_OK;
  for (int i = 0; i < prog->nstmts && !rc; i++) {
    rt_err e; rt_err_clear(&e);
    lang_loc loc;
    rc = cc_exec(g->cc, prog->stmts[i], &e, &loc);
    if (g->interrupt && !rc) rc = rt_seterr(&e, GK_EINTERRUPT, "interrupted");
    if (rc) {
      if (rc == GK_EINTERRUPT) snprintf(e.msg, sizeof e.msg, "interrupted");
      if (loc.line == 0) loc = prog->stmts[i]->loc;
      located(g, rc, name, src, len, loc, e.msg[0] ? e.msg : "error");
    }
  }
  if (cc_get_option(g->cc, CC_OPT_PLAN)) {
    char line[64];
    int n = snprintf(line, sizeof line, "kernels: %lld\n", (long long)(cc_kernels(g->cc) - k0));
    if (g->cfg.output) g->cfg.output(g->cfg.output_ud, line, (size_t)n); else fwrite(line, 1, (size_t)n, stdout);
  }
  if (!g->cfg.output) fflush(stdout);
  return rc;
}

int gk_eval_named(gk_ctx *g, const char *src, const char *name) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!src) return fail(g, GK_EMISUSE, "gk_eval: source text is NULL");
  if (!name) name = "<expr>";
  size_t len = strlen(src);
  if (len > LANG_MAX_SOURCE)
    return fail(g, GK_ELIMIT, "%s: error: source text too large (%zu bytes; limit %u)\n", name, len, LANG_MAX_SOURCE);
  lang_arena a;
  lang_arena_init(&a, arena_hook, &g->mem);
  lang_program prog;
  lang_diag d;
  memset(&prog, 0, sizeof prog);
  memset(&d, 0, sizeof d);
  int rc = lang_parse(&a, src, len, &prog, &d);
  if (rc) located(g, rc, name, src, len, d.loc, d.msg);
  else rc = run_program(g, src, len, name, &prog);
  lang_arena_free(&a);
  return rc;
}

int gk_eval(gk_ctx *g, const char *src) { return gk_eval_named(g, src, "<expr>"); }

int gk_is_complete(const char *src) {
  if (!src) return 1;
  rt_mem m = { rt_default_alloc, NULL };
  lang_arena a;
  lang_arena_init(&a, arena_hook, &m);
  lang_program prog;
  lang_diag d;
  memset(&d, 0, sizeof d);
  int rc = lang_parse(&a, src, strlen(src), &prog, &d);
  lang_arena_free(&a);
  return !(rc && d.incomplete);
}

/* ------------------------------------------------------------ prepared */

int gk_prepare(gk_ctx *g, const char *src, gk_stmt **out, const char **tail) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!out || !src) return fail(g, GK_EMISUSE, "gk_prepare: NULL argument");
  *out = NULL;
  size_t len = strlen(src);
  if (len > LANG_MAX_SOURCE) return fail(g, GK_ELIMIT, "<expr>: error: source text too large\n");
  gk_stmt *s = rt_calloc(&g->mem, 1, sizeof *s);
  if (!s) return fail(g, GK_ENOMEM, "out of memory");
  s->g = g;
  lang_arena_init(&s->arena, arena_hook, &g->mem);
  lang_program prog;
  lang_diag d;
  memset(&prog, 0, sizeof prog);
  memset(&d, 0, sizeof d);
  int rc = lang_parse(&s->arena, src, len, &prog, &d);
  if (rc) {
    located(g, rc, "<expr>", src, len, d.loc, d.msg);
    lang_arena_free(&s->arena);
    rt_free(&g->mem, s, sizeof *s);
    return rc;
  }
  if (prog.nstmts == 0) {
    lang_arena_free(&s->arena);
    rt_free(&g->mem, s, sizeof *s);
    if (tail) *tail = src + len;
    return GK_OK;
  }
  size_t end = (size_t)prog.stmt_end[0];
  if (end > len) end = len;
  s->src = rt_alloc(&g->mem, len + 1);
  if (!s->src) {
    lang_arena_free(&s->arena);
    rt_free(&g->mem, s, sizeof *s);
    return fail(g, GK_ENOMEM, "out of memory");
  }
  memcpy(s->src, src, len + 1);
  s->len = len;
  s->stmt = prog.stmts[0];
  if (tail) *tail = src + end;
  *out = s;
  return GK_OK;
}

int gk_step(gk_stmt *s) {
  if (!s) return GK_EMISUSE;
  gk_ctx *g = s->g;
  begin(g);
  lang_program prog;
  int end = (int)s->len;
  prog.nstmts = 1;
  prog.stmts = (ast **)&s->stmt;
  prog.stmt_end = &end;
  return run_program(g, s->src, s->len, "<expr>", &prog);
}

void gk_finalize(gk_stmt *s) {
  if (!s) return;
  gk_ctx *g = s->g;
  lang_arena_free(&s->arena);
  rt_free(&g->mem, s->src, s->len + 1);
  rt_free(&g->mem, s, sizeof *s);
}

/* ------------------------------------------------------------ variables */

static int valid_name(const char *n) {
  if (!n || !((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || *n == '_')) return 0;
  for (const char *p = n; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) return 0;
  static const char *const kw[] = { "fn", "and", "or", "not", "true", "false" };
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) if (!strcmp(n, kw[i])) return 0;
  return 1;
}

static int check_array_args(gk_ctx *g, const char *fn, const char *name, gk_dtype t, int ndim, const int64_t *shape) {
  if (!valid_name(name)) return fail(g, GK_EMISUSE, "%s: '%s' is not a valid variable name", fn, name ? name : "(null)");
  if (gk_dtype_size(t) == 0) return fail(g, GK_EMISUSE, "%s: invalid dtype %d", fn, (int)t);
  if (ndim < 0 || ndim > GK_MAX_DIMS) return fail(g, GK_EMISUSE, "%s: ndim must be 0..%d, got %d", fn, GK_MAX_DIMS, ndim);
  if (ndim > 0 && !shape) return fail(g, GK_EMISUSE, "%s: shape is NULL", fn);
  rt_err e; rt_err_clear(&e);
  int64_t n; size_t bytes;
  for (int i = 0; i < ndim; i++) if (shape[i] < 0) return fail(g, GK_EMISUSE, "%s: negative dimension %lld", fn, (long long)shape[i]);
  if (rt_shape_count(ndim, shape, gk_dtype_size(t), &n, &bytes, &e)) return fail(g, e.status, "%s: %s", fn, e.msg);
  return GK_OK;
}

int gk_set(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape, const void *data) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (check_array_args(g, "gk_set", name, t, ndim, shape)) return g->status;
  rt_value *v;
  rt_err_clear(&g->be->err);
  if (g->be->alloc_value(g->be, t, ndim, shape, &v)) return fail(g, g->be->err.status, "gk_set: %s", g->be->err.msg);
  if (v->bytes && !data) { rt_value_unref(v); return fail(g, GK_EMISUSE, "gk_set: data is NULL"); }
  if (v->bytes && g->be->write(g->be, v, data)) { rt_value_unref(v); return fail(g, g->be->err.status, "gk_set: %s", g->be->err.msg); }
  if (t == GK_BOOL && v->where == RT_ON_HOST)   /* normalise to 0/1 */
    for (size_t i = 0; i < v->bytes; i++) ((uint8_t *)v->host)[i] = ((uint8_t *)v->host)[i] != 0;
  rt_err e; rt_err_clear(&e);
  int rc = cc_bind_value(g->cc, name, v, &e);
  rt_value_unref(v);
  if (rc) return fail(g, rc, "gk_set: %s", e.msg);
  return GK_OK;
}

int gk_borrow(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape, void *data,
              void (*release)(void *ud, void *data), void *ud) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (check_array_args(g, "gk_borrow", name, t, ndim, shape)) { if (release) release(ud, data); return g->status; }
  if (strcmp(g->be->name, "cpu")) {
    /* a device backend cannot read host memory in kernels: copy (documented) */
    int rc = gk_set(g, name, t, ndim, shape, data);
    if (release) release(ud, data);
    return rc;
  }
  rt_value *v = rt_calloc(&g->mem, 1, sizeof *v);
  if (!v) { if (release) release(ud, data); return fail(g, GK_ENOMEM, "out of memory"); }
  int64_t n; size_t bytes; rt_err e; rt_err_clear(&e);
  rt_shape_count(ndim, shape, gk_dtype_size(t), &n, &bytes, &e);
  v->refs = 1; v->t = t; v->ndim = ndim; v->n = n; v->bytes = bytes;
  if (ndim) memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
  v->where = RT_ON_HOST; v->host = data; v->be = g->be;
  v->release = release ? release : NULL;
  v->release_ud = ud;
  if (!release) v->release = NULL;
  rt_err_clear(&e);
  int rc = cc_bind_value(g->cc, name, v, &e);
  if (!v->release) v->host = data;
  rt_value_unref(v);   /* the variable keeps its reference; release runs when it goes */
  if (rc) return fail(g, rc, "gk_borrow: %s", e.msg);
  return GK_OK;
}

int gk_borrow_device(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape,
                     uint64_t device_ptr, void (*release)(void *ud, uint64_t dptr), void *ud) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (release) release(ud, device_ptr);
  return fail(g, GK_EMISUSE, "gk_borrow_device: the %s backend cannot borrow device memory", g->be->name);
}

int gk_shape(gk_ctx *g, const char *name, gk_dtype *t, int *ndim, int64_t shape[GK_MAX_DIMS]) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!name) return fail(g, GK_EMISUSE, "gk_shape: name is NULL");
  rt_err e; rt_err_clear(&e);
  rt_node *x;
  if (cc_lookup(g->cc, name, 0, &x, &e)) return fail(g, GK_EMISUSE, "gk_shape: %s", e.msg);
  if (t) *t = x->t;
  if (ndim) *ndim = x->ndim;
  if (shape) memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  return GK_OK;
}

int gk_get(gk_ctx *g, const char *name, void *out, size_t out_bytes) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!name) return fail(g, GK_EMISUSE, "gk_get: name is NULL");
  rt_err e; rt_err_clear(&e);
  rt_node *x;
  if (cc_lookup(g->cc, name, 0, &x, &e)) return fail(g, GK_EMISUSE, "gk_get: %s", e.msg);
  size_t need = (size_t)x->n * gk_dtype_size(x->t);
  if (out_bytes < need) return fail(g, GK_EMISUSE, "gk_get: '%s' needs %zu bytes, the buffer has %zu", name, need, out_bytes);
  if (need && !out) return fail(g, GK_EMISUSE, "gk_get: output buffer is NULL");
  int rc = cc_lookup(g->cc, name, 1, &x, &e);
  if (rc) return fail(g, rc, "%s", e.msg);
  if (!need) return GK_OK;
  rt_err_clear(&g->be->err);
  if (g->be->read(g->be, x->val, out)) return fail(g, g->be->err.status, "gk_get: %s", g->be->err.msg);
  return GK_OK;
}

int gk_unset(gk_ctx *g, const char *name) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!name || cc_unbind(g->cc, name)) return fail(g, GK_EMISUSE, "gk_unset: no variable '%s'", name ? name : "(null)");
  return GK_OK;
}

int gk_sync(gk_ctx *g) {
  if (!g) return GK_EMISUSE;
  begin(g);
  rt_err e; rt_err_clear(&e);
  int rc = cc_sync(g->cc, &e);
  if (rc) return fail(g, rc, "%s", e.msg[0] ? e.msg : g->be->err.msg);
  return GK_OK;
}

typedef struct varsctx { void (*fn)(void *, const gk_varinfo *); void *ud; } varsctx;

static void each_var(void *ud, const char *name, const rt_node *x) {
  varsctx *c = ud;
  gk_varinfo v;
  v.name = name; v.dtype = x->t; v.ndim = x->ndim; v.shape = x->shape;
  v.bytes = (size_t)x->n * gk_dtype_size(x->t);
  v.where = !x->val ? "pending" : x->val->where == RT_ON_HOST ? "cpu" : "cuda";
  c->fn(c->ud, &v);
}

int gk_vars(gk_ctx *g, void (*fn)(void *ud, const gk_varinfo *v), void *ud) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!fn) return fail(g, GK_EMISUSE, "gk_vars: callback is NULL");
  varsctx c = { fn, ud };
  cc_each_var(g->cc, each_var, &c);
  return GK_OK;
}

int gk_to_dlpack(gk_ctx *g, const char *name, void **t) {
  if (!g) return GK_EMISUSE;
  begin(g);
  return fail(g, GK_EMISUSE, "gk_to_dlpack: not available in this build");
}

int gk_from_dlpack(gk_ctx *g, const char *name, void *t) {
  if (!g) return GK_EMISUSE;
  begin(g);
  return fail(g, GK_EMISUSE, "gk_from_dlpack: not available in this build");
}
