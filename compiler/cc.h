/*
** compiler/cc.h -- gk's compiler: from statements (lang/ast.h) to a lazy,
** typed graph of array ops (runtime/plan.h nodes), and from the graph to
** plans of fused groups that a backend runs.
**
** A session (cc_session) holds the graph, the variables, the user's
** functions and the random stream position.  cc_exec runs one statement:
** it checks names, dtypes and shapes (errors carry a source location),
** adds nodes to the pending graph, and binds the result only when the whole
** statement succeeded.  Values are computed when they are observed (print,
** save, a data-dependent size, cc_read) -- that is when a plan is made and
** run.
*/
#ifndef CC_H
#define CC_H

#include "lang/ast.h"
#include "runtime/rt.h"

#define CC_MAX_PENDING 20000   /* pending nodes before a statement forces evaluation: bounds memory of long scripts */
#define CC_MAX_INLINE_DEPTH 64 /* nested user-function expansion */
#define CC_MAX_STEPS (1 << 22) /* checker steps in one statement: user functions are inlined at every call, so nesting doubles the work per level */
#define CC_MAX_VARS 100000     /* variables in one session */
#define CC_PLAN_CACHE 32       /* plans remembered per session: a gk_step loop or a REPL's repeated statements replan nothing */
#define CC_MAX_FUSE_DEPTH 256  /* elementwise ops chained into one kernel: evaluation and code generation recurse on it */
#define CC_MAX_FUSE_COST 160   /* estimated compile cost of the elementwise ops one kernel inlines (fuse.c fuse_cost: sin 32, exp 8, + 1): five sins */
#define CC_MAX_VIEW_PATHS 16   /* distinct chains of views a fused node is read under in one kernel: each is a copy of its code */

typedef struct cc_session cc_session;

typedef struct cc_hooks {
  void (*output)(void *ud, const char *text, size_t len);  /* print output */
  void *ud;
} cc_hooks;

/* Options (cc_session fields, settable through cc_option). */
enum { CC_OPT_PLAN, CC_OPT_CUDA, CC_OPT_FUSION, CC_OPT_TF32,
       CC_OPT_DIGITS,   /* print precision (fmt_buf.digits; 0 = 6) */
       CC_OPT_WIDTH,    /* print line width (fmt_buf.width; 0 = 75) */
       CC_OPT_LAST,     /* 1: an expression statement's printed value is also bound to `_` */
       CC_OPT_PROFILE,
       CC_OPT_CHARTS };   /* 0 none, 1 ASCII, 2 Unicode: a hist result printed gets a chart; plot's alphabet */  /* 1: a line per group run (time, bytes, GB/s, JIT time, ops), each waited for */

/* Progress and profile totals (gk_get_progress); done, planned and jit are
** atomics, safe to read from another thread while a statement runs. */
void cc_progress(cc_session *s, int64_t *done, int64_t *planned, int *jit, double *run_ms, double *jit_ms, int64_t *bytes);
/* The backend's copy rate (bytes/s, rt_backend.copy_rate), 0 when it has none. */
double cc_copy_rate(cc_session *s);

int cc_open(rt_mem *mem, rt_backend *be, const cc_hooks *hooks, cc_session **out, rt_err *e);
void cc_close(cc_session *s);
void cc_option(cc_session *s, int opt, int value);
int cc_get_option(cc_session *s, int opt);

/* Runs one statement.  On failure returns the status; *err holds the message
** and *loc where it is (loc->line == 0 when there is no location).  The
** statement binds nothing on failure. */
int cc_exec(cc_session *s, const ast *stmt, rt_err *err, lang_loc *loc);

/* Number of kernels (plan groups) run since the session opened. */
int64_t cc_kernels(cc_session *s);
/* Plans taken from the plan cache / made anew since the session opened. */
void cc_plan_stats(cc_session *s, int64_t *hits, int64_t *misses);

/* suggest.c: the "did you mean" suffix of an unknown name's message ("" when
** none); builtins: the builtin names (cc_builtin_names()); call: the name was
** called; nargs: with that many arguments (-1: not an arity error); s may be
** NULL (builtins only).  Returns buf. */
const char *cc_hint(cc_session *s, const char *const *builtins, const char *name, int call, int nargs, char *buf, size_t n);

/* The builtin function names, in table order, NULL-terminated; static. */
const char *const *cc_builtin_names(void);

/* Variables. */
int cc_bind_value(cc_session *s, const char *name, rt_value *v, rt_err *err); /* takes a reference */
int cc_unbind(cc_session *s, const char *name);
int cc_has_fn(cc_session *s, const char *name);   /* a user function of that name is defined */
/* Finds `name`; computes it if pending when `compute`.  *v is borrowed. */
int cc_lookup(cc_session *s, const char *name, int compute, rt_node **x, rt_err *err);
int cc_sync(cc_session *s, int wait, rt_err *err);   /* computes every pending variable; wait: for the device too */
typedef void (*cc_var_fn)(void *ud, const char *name, const rt_node *x);
void cc_each_var(cc_session *s, cc_var_fn fn, void *ud);  /* in name order */

#endif /* CC_H */
