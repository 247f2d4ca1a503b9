/*
** api/api.c -- the public C API (gk.h): contexts, evaluation, prepared
** statements, variables, borrowed buffers and DLPack exchange.
**
** This is the top of the library: it parses with lang/, runs statements
** through compiler/, and moves values with runtime/.  Errors are kept in
** the context (the first raised during the current call) already formatted
** as `FILE:LINE:COL: error: message`, the source line and a caret.
**
** Ownership in one paragraph.  A context owns its session (variables, lazy
** graph), its backend and every statement prepared on it (gk_close finalizes
** the ones left).  Values are reference counted (runtime/rt.h); a variable,
** a graph node and a DLPack export each hold a reference.  A borrowed buffer
** (gk_borrow, gk_borrow_device, gk_from_dlpack) is an rt_value whose
** `release` hook returns it to its owner when the last reference goes.  A
** DLPack export may outlive its context: gk_close then keeps the backend
** (and the few bytes of the context) alive until the last export's deleter
** has run, and that deleter frees them.
**
** Threads.  A context is used by one thread at a time, but two things reach
** it from elsewhere: the cpu backend's worker threads allocate scratch
** memory (so calls to a user allocator are serialised by alloc_mu), and an
** export's deleter may run on any thread (so it only queues the export
** under exp_mu; the owning thread frees queued exports at its next call).
*/
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include "gk.h"
#include "lang/ast.h"
#include "compiler/cc.h"
#include "runtime/rt.h"
#include "runtime/host.h"
#include "api/dlpack.h"

#define API_MSG 8192  /* bytes of a formatted error message: a long source line plus its caret */

typedef struct gk_export gk_export;

struct gk_ctx {
  rt_mem mem;                /* host allocation hook every layer uses */
  gk_config cfg;             /* the caller's hooks (cfg.backend cleared: not kept) */
  rt_backend *be;
  cc_session *cc;
  int status;                /* status of the last call */
  char msg[API_MSG];         /* its formatted message */
  _Atomic int interrupt;     /* gk_interrupt sets it; the backend polls it */
  pthread_mutex_t alloc_mu;  /* serialises calls to cfg.alloc (worker threads allocate too) */
  gk_stmt *stmts;            /* prepared statements not yet finalized */
  /* DLPack exports (all guarded by exp_mu) */
  pthread_mutex_t exp_mu;
  int nexports;              /* exports whose deleter has not been called */
  gk_export *released;       /* deleters called, not yet freed (freed by the owner's next call) */
  atomic_int has_released;   /* released != NULL, read without the lock */
  int closed;                /* gk_close ran: the last deleter frees the context */
};

struct gk_stmt {
  gk_ctx *g;
  lang_arena arena;          /* owns the statement's tree */
  const ast *stmt;
  char *src;                 /* the statement's text, for diagnostics */
  size_t len;
  char *name;                /* gk_prepare_named's name (NULL: "<expr>") */
  gk_pos at;                 /* where src starts in that file */
  gk_stmt *next, **prevp;    /* in g->stmts */
};

/* A DLPack export: the DLManagedTensor handed out, and the reference it holds. */
struct gk_export {
  DLManagedTensor t;         /* handed to the consumer; manager_ctx = this */
  gk_ctx *g;
  rt_value *v;               /* one reference, dropped when the deleter has run */
  int64_t shape[GK_MAX_DIMS];
  gk_export *next;           /* in g->released */
};

const char *gk_version(void) { return GK_VERSION; }
size_t gk_config_size(void) { return sizeof(gk_config); }
int gk_version_number(void) { return GK_VERSION_NUMBER; }

/* The dtype table is runtime/ops.h's (RT_DTYPES); these export it. */
size_t gk_dtype_size(gk_dtype t) { return rt_dtype_size(t); }
const char *gk_dtype_name(gk_dtype t) { return rt_dtype_name(t); }
const char *const *gk_builtin_names(void) { return cc_builtin_names(); }

const char *gk_errstr(int status) {
  /* ORDER: the status enum in gk.h. */
  static const char *const s[] = {
    "not an error", "syntax error", "type or shape error", "out of memory", "device error",
    "kernel compilation failed", "I/O error", "API misuse", "value error", "interrupted",
    "limit exceeded"
  };
  if (status < 0 || status >= (int)(sizeof s / sizeof s[0])) return "unknown status";
  return s[status];
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

static int located(gk_ctx *g, int status, const char *file, const char *src, size_t len, lang_loc loc, const char *msg) {
  if (g->status != GK_OK) return g->status;
  if (loc.line > 0) lang_format_error(g->msg, sizeof g->msg, file, src, len, loc, msg);
  else snprintf(g->msg, sizeof g->msg, "%s: error: %s\n", file, msg);
  g->status = status;
  if (g->cfg.error) g->cfg.error(g->cfg.error_ud, status, g->msg);
  return status;
}

static void drain_exports(gk_ctx *g);
static void free_export(gk_ctx *g, gk_export *x);

/* Every entry point that can fail starts here: clears the last status and
** frees the exports whose deleters ran since the last call. */
static void begin(gk_ctx *g) {
  g->status = GK_OK;
  g->msg[0] = 0;
  atomic_store_explicit(&g->interrupt, 0, memory_order_relaxed);
  host_interrupt(&g->interrupt);   /* the host loops this thread runs poll it (runtime/host.h) */
  if (atomic_load_explicit(&g->has_released, memory_order_acquire)) drain_exports(g);
}

const char *gk_errmsg(gk_ctx *g) { return g ? g->msg : "no context (NULL gk_ctx)"; }
int gk_errcode(gk_ctx *g) { return g ? g->status : GK_EMISUSE; }

/* ------------------------------------------------------------ contexts */

static void *user_alloc(void *ud, void *p, size_t o, size_t n) {
  gk_ctx *g = ud;
  pthread_mutex_lock(&g->alloc_mu);
  void *r = g->cfg.alloc(g->cfg.alloc_ud, p, o, n);
  pthread_mutex_unlock(&g->alloc_mu);
  return r;
}

static _Thread_local char open_msg[2048 + 64];   /* gk_open_ex's failure message, per thread */

static void ctx_free(gk_ctx *g) {
  gk_config c = g->cfg;
  pthread_mutex_destroy(&g->alloc_mu);
  pthread_mutex_destroy(&g->exp_mu);
  if (c.alloc) c.alloc(c.alloc_ud, g, sizeof *g, 0); else free(g);
}

gk_ctx *gk_open_ex(const gk_config *cfg, const char **errmsg) {
  gk_config c;
  if (cfg) c = *cfg; else memset(&c, 0, sizeof c);
  if (errmsg) *errmsg = NULL;
  gk_ctx *g = c.alloc ? c.alloc(c.alloc_ud, NULL, 0, sizeof *g) : malloc(sizeof *g);
  if (!g) {
    snprintf(open_msg, sizeof open_msg, "out of memory");
    if (errmsg) *errmsg = open_msg;
    return NULL;
  }
  memset(g, 0, sizeof *g);
  const char *want = c.backend;
  c.backend = NULL;                 /* the caller's string is not kept */
  g->cfg = c;
  g->mem.fn = rt_default_alloc; g->mem.ud = NULL;
  if (c.alloc) { g->mem.fn = user_alloc; g->mem.ud = g; }
  pthread_mutex_init(&g->alloc_mu, NULL);
  pthread_mutex_init(&g->exp_mu, NULL);
  atomic_init(&g->has_released, 0);
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
    g->be->compile_note = c.compile;
    g->be->compile_ud = c.compile_ud;
    rc = cc_open(&g->mem, g->be, &h, &g->cc, &e);
    if (rc) g->be->close(g->be);
  }
  if (rc) {
    snprintf(open_msg, sizeof open_msg, "%s", e.msg[0] ? e.msg : gk_errstr(rc));
    if (errmsg) *errmsg = open_msg;
    ctx_free(g);
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
  host_interrupt(NULL);   /* no dangling flag for this thread's host loops */
  while (g->stmts) gk_finalize(g->stmts);
  cc_close(g->cc);         /* may release imports of gk's own exports: they queue */
  g->cc = NULL;
  /* From here deleters free their export themselves (under exp_mu); the ones
  ** queued until now -- by this thread or by a deleter racing with the
  ** close -- are freed here, under the same lock. */
  pthread_mutex_lock(&g->exp_mu);
  g->closed = 1;
  while (g->released) {
    gk_export *x = g->released;
    g->released = x->next;
    free_export(g, x);
  }
  int live = g->nexports;
  pthread_mutex_unlock(&g->exp_mu);
  if (live) return;        /* the last export's deleter closes the backend */
  g->be->close(g->be);
  ctx_free(g);
}

const char *gk_backend(gk_ctx *g) { return g ? g->be->name : "none"; }

void gk_interrupt(gk_ctx *g) { if (g) atomic_store_explicit(&g->interrupt, 1, memory_order_relaxed); }

int gk_option(gk_ctx *g, const char *name, int value) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!name) return fail(g, GK_EMISUSE, "gk_option: name is NULL");
  static const char *const onoff[] = { "plan", "cuda", "fusion", "tf32", "time", "last", "profile" };
  for (size_t i = 0; i < sizeof onoff / sizeof onoff[0]; i++)
    if (!strcmp(name, onoff[i]) && value != 0 && value != 1)
      return fail(g, GK_EMISUSE, "gk_option: %s is 0 (off) or 1 (on), got %d", name, value);
  if (!strcmp(name, "plan")) cc_option(g->cc, CC_OPT_PLAN, value);
  else if (!strcmp(name, "cuda")) cc_option(g->cc, CC_OPT_CUDA, value);
  else if (!strcmp(name, "fusion")) cc_option(g->cc, CC_OPT_FUSION, value);
  else if (!strcmp(name, "tf32")) cc_option(g->cc, CC_OPT_TF32, value);
  else if (!strcmp(name, "time")) { /* the command line measures time itself */ }
  else if (!strcmp(name, "digits")) {
    if (value < 0 || value > FMT_MAX_DIGITS)
      return fail(g, GK_EMISUSE, "gk_option: digits must be 1 to %d (0: the default, 6), got %d", FMT_MAX_DIGITS, value);
    cc_option(g->cc, CC_OPT_DIGITS, value);
  } else if (!strcmp(name, "linewidth")) {
    if (value != 0 && (value < FMT_MIN_WIDTH || value > FMT_MAX_WIDTH))
      return fail(g, GK_EMISUSE, "gk_option: linewidth must be %d to %d (0: the default, 75), got %d",
                  FMT_MIN_WIDTH, FMT_MAX_WIDTH, value);
    cc_option(g->cc, CC_OPT_WIDTH, value);
  } else if (!strcmp(name, "last")) cc_option(g->cc, CC_OPT_LAST, value != 0);
  else if (!strcmp(name, "profile")) cc_option(g->cc, CC_OPT_PROFILE, value != 0);
  else if (!strcmp(name, "charts")) {
    if (value < 0 || value > 2) return fail(g, GK_EMISUSE, "gk_option: charts must be 0 (none), 1 (ASCII) or 2 (Unicode), got %d", value);
    cc_option(g->cc, CC_OPT_CHARTS, value);
  }
  else return fail(g, GK_EMISUSE, "gk_option: unknown option '%s'", name);
  return GK_OK;
}

/* ------------------------------------------------------------ evaluation */

static void *arena_hook(void *ud, void *p, size_t o, size_t n) {
  rt_mem *m = ud;
  return m->fn(m->ud, p, o, n);
}

static void emit(gk_ctx *g, const char *text, size_t n) {
  if (g->cfg.output) g->cfg.output(g->cfg.output_ud, text, n);
  else fwrite(text, 1, n, stdout);
}

/* loc (counted from the start of a text) counted from `at`, the position
** of that text's first byte in its file. */
static lang_loc at_pos(lang_loc loc, gk_pos at) {
  if (loc.line <= 0) return loc;
  if (loc.line == 1) loc.col += at.col - 1;
  loc.line += at.line - 1;
  return loc;
}

/* Runs the statements of prog in order, stopping at the first that fails;
** earlier statements stay done, the failing one binds nothing (cc_exec).
** `at` is where src starts in the file `name`. */
static int run_program(gk_ctx *g, const char *src, size_t len, const char *name, gk_pos at, const lang_program *prog) {
  int64_t k0 = cc_kernels(g->cc);
  int rc = GK_OK;
  for (int i = 0; i < prog->nstmts && !rc; i++) {
    rt_err e; rt_err_clear(&e);
    lang_loc loc;
    /* an interrupt stops the next statement; one that lands after a statement's
    ** last check lets it finish (and bind): it never fails a done statement */
    memset(&loc, 0, sizeof loc);
    if (atomic_load_explicit(&g->interrupt, memory_order_relaxed)) rc = rt_seterr(&e, GK_EINTERRUPT, "interrupted");
    else rc = cc_exec(g->cc, prog->stmts[i], &e, &loc);
    if (rc) {
      if (rc == GK_EINTERRUPT) snprintf(e.msg, sizeof e.msg, "interrupted");
      if (loc.line == 0) loc = prog->stmts[i]->loc;
      located(g, rc, name, src, len, at_pos(loc, at), e.msg[0] ? e.msg : gk_errstr(rc));
    }
  }
  if (cc_get_option(g->cc, CC_OPT_PLAN)) {
    char line[64];
    int n = snprintf(line, sizeof line, "kernels: %lld\n", (long long)(cc_kernels(g->cc) - k0));
    emit(g, line, (size_t)n);
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
  else rc = run_program(g, src, len, name, (gk_pos){1, 1}, &prog);
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
  memset(&prog, 0, sizeof prog);
  memset(&d, 0, sizeof d);
  int rc = lang_parse(&a, src, strlen(src), &prog, &d);
  lang_arena_free(&a);
  return !(rc && d.incomplete);
}

/* ------------------------------------------------------------ prepared */

/* Where the text src[0, n) ends, counted from `at` (lines and byte columns,
** as the lexer counts them). */
static gk_pos advance(gk_pos at, const char *src, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (src[i] == '\n') { at.line++; at.col = 1; }
    else at.col++;
  }
  return at;
}

static void stmt_free(gk_ctx *g, gk_stmt *s) {
  lang_arena_free(&s->arena);
  if (s->src) rt_free(&g->mem, s->src, s->len + 1);
  if (s->name) rt_free(&g->mem, s->name, strlen(s->name) + 1);
  rt_free(&g->mem, s, sizeof *s);
}

int gk_prepare_named(gk_ctx *g, const char *src, const char *name, gk_pos *pos, gk_stmt **out, const char **tail) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (out) *out = NULL;
  if (!out || !src) return fail(g, GK_EMISUSE, "gk_prepare: %s is NULL", !out ? "stmt" : "src");
  gk_pos at = {1, 1};
  if (pos) {
    if (pos->line < 1 || pos->col < 1)
      return fail(g, GK_EMISUSE, "gk_prepare_named: position %d:%d is not a line and column (both count from 1)", pos->line, pos->col);
    at = *pos;
  }
  const char *label = name ? name : "<expr>";
  size_t len = strlen(src);
  if (tail) *tail = src;
  if (len > LANG_MAX_SOURCE)
    return fail(g, GK_ELIMIT, "%s: error: source text too large (%zu bytes; limit %u)\n", label, len, LANG_MAX_SOURCE);
  gk_stmt *s = rt_calloc(&g->mem, 1, sizeof *s);
  if (!s) return fail(g, GK_ENOMEM, "gk_prepare: out of memory");
  s->g = g;
  s->at = at;
  lang_arena_init(&s->arena, arena_hook, &g->mem);
  lang_program prog;
  lang_diag d;
  memset(&prog, 0, sizeof prog);
  memset(&d, 0, sizeof d);
  int rc = lang_parse(&s->arena, src, len, &prog, &d);
  if (rc || prog.nstmts == 0) {
    if (rc) located(g, rc, label, src, len, at_pos(d.loc, at), d.msg);
    else {
      if (tail) *tail = src + len;
      if (pos) *pos = advance(at, src, len);
    }
    stmt_free(g, s);
    return rc;
  }
  /* Keep only the first statement's text: its locations are offsets into it. */
  size_t end = (size_t)prog.stmt_end[0];
  if (end > len) end = len;
  s->src = rt_alloc(&g->mem, end + 1);
  if (s->src) { s->len = end; memcpy(s->src, src, end); s->src[end] = 0; }
  if (s->src && name && (s->name = rt_alloc(&g->mem, strlen(name) + 1))) memcpy(s->name, name, strlen(name) + 1);
  if (!s->src || (name && !s->name)) {
    stmt_free(g, s);
    return fail(g, GK_ENOMEM, "gk_prepare: out of memory");
  }
  s->stmt = prog.stmts[0];
  s->next = g->stmts;
  s->prevp = &g->stmts;
  if (g->stmts) g->stmts->prevp = &s->next;
  g->stmts = s;
  if (tail) *tail = src + end;
  if (pos) *pos = advance(at, src, end);
  *out = s;
  return GK_OK;
}

int gk_prepare(gk_ctx *g, const char *src, gk_stmt **out, const char **tail) {
  return gk_prepare_named(g, src, NULL, NULL, out, tail);
}

int gk_step(gk_stmt *s) {
  if (!s) return GK_EMISUSE;
  gk_ctx *g = s->g;
  begin(g);
  lang_program prog;
  ast *one = (ast *)s->stmt;
  int end = (int)s->len;
  prog.nstmts = 1;
  prog.stmts = &one;
  prog.stmt_end = &end;
  return run_program(g, s->src, s->len, s->name ? s->name : "<expr>", s->at, &prog);
}

void gk_finalize(gk_stmt *s) {
  if (!s) return;
  gk_ctx *g = s->g;
  *s->prevp = s->next;
  if (s->next) s->next->prevp = s->prevp;
  stmt_free(g, s);
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

/* The language refuses to assign to a builtin's or a user function's name;
** so does the API (the variable could never be used). */
static int fn_name(gk_ctx *g, const char *n) {
  for (const char *const *b = cc_builtin_names(); *b; b++) if (!strcmp(*b, n)) return 1;
  return g->cc && cc_has_fn(g->cc, n);
}

static int check_array_args(gk_ctx *g, const char *fn, const char *name, gk_dtype t, int ndim, const int64_t *shape) {
  if (!valid_name(name)) return fail(g, GK_EMISUSE, "%s: '%s' is not a valid variable name", fn, name ? name : "(null)");
  if (fn_name(g, name)) return fail(g, GK_EMISUSE, "%s: '%s' is a function; choose another variable name", fn, name);
  if (gk_dtype_size(t) == 0) return fail(g, GK_EMISUSE, "%s: invalid dtype %d", fn, (int)t);
  if (ndim < 0 || ndim > GK_MAX_DIMS) return fail(g, GK_EMISUSE, "%s: ndim must be 0..%d, got %d", fn, GK_MAX_DIMS, ndim);
  if (ndim > 0 && !shape) return fail(g, GK_EMISUSE, "%s: shape is NULL", fn);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) return fail(g, GK_EMISUSE, "%s: negative dimension %lld", fn, (long long)shape[i]);
  rt_err e; rt_err_clear(&e);
  if (rt_shape_count(ndim, shape, gk_dtype_size(t), NULL, NULL, &e)) return fail(g, e.status, "%s: %s", fn, e.msg);
  return GK_OK;
}

int gk_set(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape, const void *data) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (check_array_args(g, "gk_set", name, t, ndim, shape)) return g->status;
  int64_t n; size_t bytes; rt_err e; rt_err_clear(&e);
  rt_shape_count(ndim, shape, gk_dtype_size(t), &n, &bytes, &e);
  if (bytes && !data) return fail(g, GK_EMISUSE, "gk_set: data is NULL");
  static const int64_t no_dims[1] = {0};
  if (!shape) shape = no_dims;   /* 0-d: the backend may copy 0 dims from it */
  rt_value *v;
  rt_err_clear(&g->be->err);
  if (g->be->alloc_value(g->be, t, ndim, shape, &v)) return fail(g, g->be->err.status, "gk_set: %s", g->be->err.msg);
  if (v->bytes && g->be->write(g->be, v, data)) { rt_value_unref(v); return fail(g, g->be->err.status, "gk_set: %s", g->be->err.msg); }
  if (t == GK_BOOL && v->where == RT_ON_HOST)   /* normalise to 0/1 */
    for (size_t i = 0; i < v->bytes; i++) ((uint8_t *)v->host)[i] = ((uint8_t *)v->host)[i] != 0;
  int rc = cc_bind_value(g->cc, name, v, &e);
  rt_value_unref(v);
  if (rc) return fail(g, rc, "gk_set: %s", e.msg);
  return GK_OK;
}

/* Binds `name` to a value whose storage is not gk's: v->release returns it.
** Consumes v's creation reference (the variable keeps its own). */
static int bind_borrowed(gk_ctx *g, const char *fn, const char *name, rt_value *v) {
  rt_err e; rt_err_clear(&e);
  int rc = cc_bind_value(g->cc, name, v, &e);
  rt_value_unref(v);   /* on failure this is the last reference: release runs now */
  if (rc) return fail(g, rc, "%s: %s", fn, e.msg);
  return GK_OK;
}

/* A borrowed value around storage at host `data` or device `dev`.  NULL when
** out of memory (the caller then releases the storage itself). */
static rt_value *borrowed_value(gk_ctx *g, gk_dtype t, int ndim, const int64_t *shape, int where, void *data,
                                uint64_t dev, void (*release)(void *, void *), void *ud) {
  rt_value *v = rt_calloc(&g->mem, 1, sizeof *v);
  if (!v) return NULL;
  rt_err e; rt_err_clear(&e);
  rt_shape_count(ndim, shape, gk_dtype_size(t), &v->n, &v->bytes, &e);
  v->refs = 1; v->t = t; v->ndim = ndim;
  if (ndim) memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
  v->where = where; v->host = data; v->dev = dev; v->be = g->be;
  v->release = release; v->release_ud = ud;
  return v;
}

static void keep_release(void *ud, void *data) { (void)ud; (void)data; }  /* borrowed, nothing to return */

typedef struct host_release { void (*fn)(void *ud, void *data); void *ud; } host_release;

int gk_borrow(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape, void *data,
              void (*release)(void *ud, void *data), void *ud) {
  if (!g) { if (release) release(ud, data); return GK_EMISUSE; }
  begin(g);
  if (check_array_args(g, "gk_borrow", name, t, ndim, shape)) { if (release) release(ud, data); return g->status; }
  int64_t n; size_t bytes; rt_err e; rt_err_clear(&e);
  rt_shape_count(ndim, shape, gk_dtype_size(t), &n, &bytes, &e);
  if (bytes && !data) { if (release) release(ud, data); return fail(g, GK_EMISUSE, "gk_borrow: data is NULL"); }
  if (((uintptr_t)data) % gk_dtype_size(t)) {
    if (release) release(ud, data);
    return fail(g, GK_EMISUSE, "gk_borrow: data is not aligned to its %zu-byte elements", gk_dtype_size(t));
  }
  if (strcmp(g->be->name, "cpu")) {
    /* A device backend's kernels cannot read pageable host memory: copy now
    ** and give the buffer back at once (documented in gk.h). */
    int rc = gk_set(g, name, t, ndim, shape, data);
    if (release) release(ud, data);
    return rc;
  }
  rt_value *v = borrowed_value(g, t, ndim, shape, RT_ON_HOST, data, 0, release ? release : keep_release, ud);
  if (!v) { if (release) release(ud, data); return fail(g, GK_ENOMEM, "gk_borrow: out of memory"); }
  return bind_borrowed(g, "gk_borrow", name, v);
}

/* A borrowed device buffer's release record: rt_value.release has the host
** signature, so the user's device release is called through this. */
typedef struct dev_release {
  void (*fn)(void *ud, uint64_t dptr);
  void *ud;
  uint64_t dptr;
  rt_mem *mem;
} dev_release;

static void call_dev_release(void *ud, void *data) {
  (void)data;
  dev_release *r = ud;
  if (r->fn) r->fn(r->ud, r->dptr);
  rt_free(r->mem, r, sizeof *r);
}

int gk_borrow_device(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape,
                     uint64_t device_ptr, void (*release)(void *ud, uint64_t dptr), void *ud) {
  if (!g) { if (release) release(ud, device_ptr); return GK_EMISUSE; }
  begin(g);
  if (check_array_args(g, "gk_borrow_device", name, t, ndim, shape)) { if (release) release(ud, device_ptr); return g->status; }
  if (strcmp(g->be->name, "cuda")) {
    if (release) release(ud, device_ptr);
    return fail(g, GK_EMISUSE, "gk_borrow_device: the %s backend cannot use device memory (open the context with \"cuda\")", g->be->name);
  }
  int64_t n; size_t bytes; rt_err e; rt_err_clear(&e);
  rt_shape_count(ndim, shape, gk_dtype_size(t), &n, &bytes, &e);
  if (bytes && !device_ptr) { if (release) release(ud, device_ptr); return fail(g, GK_EMISUSE, "gk_borrow_device: device pointer is 0"); }
  if (device_ptr % gk_dtype_size(t)) {
    if (release) release(ud, device_ptr);
    return fail(g, GK_EMISUSE, "gk_borrow_device: device pointer is not aligned to its %zu-byte elements", gk_dtype_size(t));
  }
  dev_release *r = rt_alloc(&g->mem, sizeof *r);
  if (!r) { if (release) release(ud, device_ptr); return fail(g, GK_ENOMEM, "gk_borrow_device: out of memory"); }
  r->fn = release; r->ud = ud; r->dptr = device_ptr; r->mem = &g->mem;
  rt_value *v = borrowed_value(g, t, ndim, shape, RT_ON_DEVICE, NULL, device_ptr, call_dev_release, r);
  if (!v) { call_dev_release(r, NULL); return fail(g, GK_ENOMEM, "gk_borrow_device: out of memory"); }
  return bind_borrowed(g, "gk_borrow_device", name, v);
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

static int valid_dtype(int t) { return t >= GK_BOOL && t <= GK_F64; }

/* "f32[3,4]" */
static void type_text(char *buf, size_t n, const rt_node *x) {
  int k = snprintf(buf, n, "%s[", gk_dtype_name(x->t));
  for (int d = 0; d < x->ndim && k > 0 && (size_t)k < n; d++) k += snprintf(buf + k, n - (size_t)k, "%s%lld", d ? "," : "", (long long)x->shape[d]);
  if (k > 0 && (size_t)k < n) snprintf(buf + k, n - (size_t)k, "]");
}

/* The reads: variable `name` computed, then copied into out as dtype want
** (GET_OWN: its own dtype, no conversion), out_bytes exactly its size;
** one: it must hold exactly one element.  fn names the entry point. */
#define GET_OWN INT_MIN   /* gk_get's want; gk_get_as(-1) is a misuse, not this */
static int get_value(gk_ctx *g, const char *fn, const char *name, int want, void *out, size_t out_bytes, int one) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!name) return fail(g, GK_EMISUSE, "%s: name is NULL", fn);
  if (want != GET_OWN && !valid_dtype(want)) return fail(g, GK_EMISUSE, "%s: %d is not a gk_dtype", fn, want);
  rt_err e; rt_err_clear(&e);
  rt_node *x;
  if (cc_lookup(g->cc, name, 0, &x, &e)) return fail(g, GK_EMISUSE, "%s: %s", fn, e.msg);
  gk_dtype t = want == GET_OWN ? x->t : (gk_dtype)want;
  size_t need = (size_t)x->n * gk_dtype_size(t);
  char ty[128]; type_text(ty, sizeof ty, x);
  if (one && x->n != 1)
    return fail(g, GK_EMISUSE, "%s: '%s' is %s, %lld elements; it reads one (use gk_get_as for arrays)", fn, name, ty, (long long)x->n);
  if (!out && (need || one)) return fail(g, GK_EMISUSE, "%s: output buffer is NULL", fn);
  if (out_bytes != need) {
    if (want == GET_OWN)
      return fail(g, GK_EMISUSE, "%s: '%s' is %s, %zu bytes; the buffer has %zu (gk_get_as converts to another dtype)", fn, name, ty, need, out_bytes);
    return fail(g, GK_EMISUSE, "%s: '%s' is %s, %zu bytes as %s; the buffer has %zu", fn, name, ty, need, gk_dtype_name(t), out_bytes);
  }
  int rc = cc_lookup(g->cc, name, 1, &x, &e);
  if (rc) return fail(g, rc, "%s: %s", fn, e.msg[0] ? e.msg : gk_errstr(rc));
  if (!need) return GK_OK;
  rt_value *v = x->val;
  rt_err_clear(&g->be->err);
  if (t == v->t) {
    if (g->be->read(g->be, v, out)) return fail(g, g->be->err.status, "%s: %s", fn, g->be->err.msg);
    return GK_OK;
  }
  /* convert: from the host copy, or from a staging copy of a device value */
  const void *from = v->where == RT_ON_HOST ? v->host : NULL;
  void *stage = NULL;
  if (!from) {
    if (!(stage = rt_alloc(&g->mem, v->bytes))) return fail(g, GK_ENOMEM, "%s: out of memory", fn);
    if (g->be->read(g->be, v, stage)) {
      rt_free(&g->mem, stage, v->bytes);
      return fail(g, g->be->err.status, "%s: %s", fn, g->be->err.msg);
    }
    from = stage;
  }
  rt_cast_loop(v->t, t, from, out, v->n);
  if (stage) rt_free(&g->mem, stage, v->bytes);
  return GK_OK;
}

int gk_get(gk_ctx *g, const char *name, void *out, size_t out_bytes) {
  return get_value(g, "gk_get", name, GET_OWN, out, out_bytes, 0);
}

int gk_get_as(gk_ctx *g, const char *name, gk_dtype want, void *out, size_t out_bytes) {
  return get_value(g, "gk_get_as", name, (int)want == GET_OWN ? -1 : (int)want, out, out_bytes, 0);
}

int gk_get_f64(gk_ctx *g, const char *name, double *out) {
  return get_value(g, "gk_get_f64", name, GK_F64, out, sizeof *out, 1);
}

int gk_get_i64(gk_ctx *g, const char *name, int64_t *out) {
  return get_value(g, "gk_get_i64", name, GK_I64, out, sizeof *out, 1);
}

int gk_unset(gk_ctx *g, const char *name) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (!name || cc_unbind(g->cc, name)) return fail(g, GK_EMISUSE, "gk_unset: no variable '%s'", name ? name : "(null)");
  return GK_OK;
}

static int sync_(gk_ctx *g, int wait, const char *what) {
  if (!g) return GK_EMISUSE;
  begin(g);
  rt_err e; rt_err_clear(&e);
  int rc = cc_sync(g->cc, wait, &e);
  if (rc) return fail(g, rc, "%s: %s", what, e.msg[0] ? e.msg : g->be->err.msg[0] ? g->be->err.msg : gk_errstr(rc));
  return GK_OK;
}
int gk_sync(gk_ctx *g) { return sync_(g, 1, "gk_sync"); }
int gk_flush(gk_ctx *g) { return sync_(g, 0, "gk_flush"); }

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

int gk_get_progress(gk_ctx *g, gk_progress *p) {
  if (!g || !p) return GK_EMISUSE;   /* no begin(): this call may run beside an evaluation */
  memset(p, 0, sizeof *p);
  cc_progress(g->cc, &p->kernels, &p->planned, &p->jit, &p->run_ms, &p->jit_ms, &p->bytes);
  return GK_OK;
}

double gk_copy_rate(gk_ctx *g) {
  if (!g) return 0;
  begin(g);
  return cc_copy_rate(g->cc);
}

const char *gk_suggest(gk_ctx *g, const char *name, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  return cc_hint(g ? g->cc : NULL, cc_builtin_names(), name, 1, -1, buf, n);
}

/* ------------------------------------------------------------ DLPack */

static void free_export(gk_ctx *g, gk_export *x) {
  rt_value_unref(x->v);
  rt_free(&g->mem, x, sizeof *x);
}

/* Frees the exports whose deleters have run.  Called by the owning thread
** (begin, gk_close): only it touches values' reference counts. */
static void drain_exports(gk_ctx *g) {
  pthread_mutex_lock(&g->exp_mu);
  gk_export *list = g->released;
  g->released = NULL;
  atomic_store_explicit(&g->has_released, 0, memory_order_release);
  pthread_mutex_unlock(&g->exp_mu);
  while (list) {
    gk_export *next = list->next;
    free_export(g, list);
    list = next;
  }
}

/* The deleter of every tensor gk_to_dlpack hands out.  Runs on any thread.
** While the context is open it only queues the export for the owner; after
** gk_close nobody else uses the context, so it frees the export here and the
** last one closes the backend and frees the context. */
static void export_deleter(DLManagedTensor *t) {
  if (!t) return;
  gk_export *x = t->manager_ctx;
  gk_ctx *g = x->g;
  pthread_mutex_lock(&g->exp_mu);
  g->nexports--;
  if (!g->closed) {
    x->next = g->released;
    g->released = x;
    atomic_store_explicit(&g->has_released, 1, memory_order_release);
    pthread_mutex_unlock(&g->exp_mu);
    return;
  }
  free_export(g, x);
  int last = g->nexports == 0;
  pthread_mutex_unlock(&g->exp_mu);
  if (last) {
    g->be->close(g->be);
    ctx_free(g);
  }
}

int gk_to_dlpack(gk_ctx *g, const char *name, void **out) {
  if (!g) return GK_EMISUSE;
  begin(g);
  if (out) *out = NULL;
  if (!name || !out) return fail(g, GK_EMISUSE, "gk_to_dlpack: %s is NULL", !name ? "name" : "out");
  rt_err e; rt_err_clear(&e);
  rt_node *x;
  if (cc_lookup(g->cc, name, 0, &x, &e)) return fail(g, GK_EMISUSE, "gk_to_dlpack: %s", e.msg);
  int rc = cc_lookup(g->cc, name, 1, &x, &e);
  if (rc) return fail(g, rc, "gk_to_dlpack: %s", e.msg[0] ? e.msg : gk_errstr(rc));
  rt_err_clear(&g->be->err);
  /* the consumer may read as soon as it has the tensor: finish the device's work */
  if (g->be->sync(g->be)) return fail(g, g->be->err.status, "gk_to_dlpack: %s", g->be->err.msg);
  rt_value *v = x->val;
  gk_export *ex = rt_calloc(&g->mem, 1, sizeof *ex);
  if (!ex) return fail(g, GK_ENOMEM, "gk_to_dlpack: out of memory");
  ex->g = g;
  ex->v = v;
  rt_value_ref(v);
  memcpy(ex->shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  DLTensor *t = &ex->t.dl_tensor;
  if (v->where == RT_ON_HOST) {
    t->data = v->host;
    t->device.device_type = kDLCPU;
  } else {
    t->data = (void *)(uintptr_t)v->dev;
    t->device.device_type = kDLCUDA;
  }
  t->device.device_id = t->device.device_type == kDLCUDA ? rt_cuda_device(g->be) : 0;
  t->ndim = v->ndim;
  t->dtype.code = (uint8_t)rt_dtype_info[v->t].dlpack;   /* RT_DTYPES */
  t->dtype.bits = (uint8_t)(8 * gk_dtype_size(v->t));
  t->dtype.lanes = 1;
  t->shape = ex->shape;
  t->strides = NULL;     /* compact C order */
  t->byte_offset = 0;
  ex->t.manager_ctx = ex;
  ex->t.deleter = export_deleter;
  pthread_mutex_lock(&g->exp_mu);
  g->nexports++;
  pthread_mutex_unlock(&g->exp_mu);
  *out = &ex->t;
  return GK_OK;
}

/* rt_value.release of an imported tensor: the producer's deleter, once. */
static void call_dl_deleter(void *ud, void *data) {
  (void)data;
  DLManagedTensor *t = ud;
  if (t->deleter) t->deleter(t);
}

static int dl_reject(gk_ctx *g, DLManagedTensor *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int dl_reject(gk_ctx *g, DLManagedTensor *t, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (t->deleter) t->deleter(t);
  return fail(g, GK_EMISUSE, "gk_from_dlpack: %s", buf);
}

int gk_from_dlpack(gk_ctx *g, const char *name, void *tensor) {
  DLManagedTensor *mt = tensor;
  if (!g) { if (mt && mt->deleter) mt->deleter(mt); return GK_EMISUSE; }
  begin(g);
  if (!mt) return fail(g, GK_EMISUSE, "gk_from_dlpack: tensor is NULL");
  const DLTensor *t = &mt->dl_tensor;
  if (!valid_name(name)) return dl_reject(g, mt, "'%s' is not a valid variable name", name ? name : "(null)");
  if (fn_name(g, name)) return dl_reject(g, mt, "'%s' is a function; choose another variable name", name);
  int dt = -1;
  int c = t->dtype.code, bits = t->dtype.bits;
  if (t->dtype.lanes != 1) return dl_reject(g, mt, "vector dtypes (lanes = %d) are not supported", t->dtype.lanes);
  for (int k = 0; dt < 0 && rt_dtype_size((gk_dtype)k); k++)   /* RT_DTYPES: DLPack code and size */
    if (rt_dtype_info[k].dlpack == c && 8 * rt_dtype_info[k].size == (size_t)bits) dt = k;
  if (dt < 0) return dl_reject(g, mt, "unsupported dtype (code %d, %d bits): gk takes bool, int32, int64, float32, float64", c, bits);
  if (t->ndim < 0 || t->ndim > GK_MAX_DIMS) return dl_reject(g, mt, "ndim must be 0..%d, got %d", GK_MAX_DIMS, (int)t->ndim);
  if (t->ndim > 0 && !t->shape) return dl_reject(g, mt, "shape is NULL");
  for (int i = 0; i < t->ndim; i++)
    if (t->shape[i] < 0) return dl_reject(g, mt, "negative dimension %lld", (long long)t->shape[i]);
  int64_t n; size_t bytes; rt_err e; rt_err_clear(&e);
  if (rt_shape_count(t->ndim, t->shape, gk_dtype_size(dt), &n, &bytes, &e)) return dl_reject(g, mt, "%s", e.msg);
  if (t->strides && n > 0) {   /* compact C order; a dimension of 1 may have any stride */
    int64_t want = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
      if (t->shape[i] != 1 && t->strides[i] != want)
        return dl_reject(g, mt, "the tensor is not contiguous (dimension %d has stride %lld, C order needs %lld); "
                                "make a contiguous copy first", i, (long long)t->strides[i], (long long)want);
      want *= t->shape[i];
    }
  }
  uintptr_t p = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
  if (bytes && !t->data) return dl_reject(g, mt, "data is NULL");
  if (p % gk_dtype_size(dt)) return dl_reject(g, mt, "data is not aligned to its %zu-byte elements", gk_dtype_size(dt));
  int dev = t->device.device_type, oncuda = !strcmp(g->be->name, "cuda");
  rt_value *v;
  if (!oncuda && (dev == kDLCPU || dev == kDLCUDAHost))
    v = borrowed_value(g, dt, t->ndim, t->shape, RT_ON_HOST, (void *)p, 0, call_dl_deleter, mt);
  else if (oncuda && dev == kDLCUDA && t->device.device_id != rt_cuda_device(g->be))
    return dl_reject(g, mt, "the tensor is on CUDA device %d, the context on device %d (GK_DEVICE)",
                     (int)t->device.device_id, rt_cuda_device(g->be));
  else if (oncuda && (dev == kDLCUDA || dev == kDLCUDAManaged))
    v = borrowed_value(g, dt, t->ndim, t->shape, RT_ON_DEVICE, NULL, (uint64_t)p, call_dl_deleter, mt);
  else
    return dl_reject(g, mt, "a tensor on device type %d cannot be used by the %s backend without a copy "
                            "(cpu takes kDLCPU = 1, cuda takes kDLCUDA = 2)", dev, g->be->name);
  if (!v) { if (mt->deleter) mt->deleter(mt); return fail(g, GK_ENOMEM, "gk_from_dlpack: out of memory"); }
  return bind_borrowed(g, "gk_from_dlpack", name, v);
}
