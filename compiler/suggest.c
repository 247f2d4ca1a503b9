/*
** compiler/suggest.c -- the "did you mean" part of an unknown name's error.
**
** cc_hint is asked when the checker meets a name it does not know (or a
** builtin called with an arity that another language's spelling would
** accept, max(a, b)).  It answers a suffix for the message:
**
**   1. a spelling from numpy, torch or Julia that gk writes differently
**      (cumsum -> scan(x), arange -> iota(n), max(a, b) -> maximum(a, b)):
**      the table below, each row used only when its gk replacement exists
**      (so a row may name a builtin another branch adds);
**   2. else the closest name by edit distance (optimal string alignment:
**      a swap of two neighbours counts 1) among the variables, the user's
**      functions and the builtins: none for names of 1 or 2 letters, 1 edit up to 4
**      letters, 2 up to 8, 3 beyond; ties go to the first found (variables
**      first for a bare name, builtins and functions first for a call).
**
** The same function serves gk_suggest (gk.h), which the REPL's :help uses
** for a name it has no entry for.
*/
#include "compiler/cc_int.h"

#include <stdio.h>
#include <string.h>

/* Another language's spelling, and how gk writes it.  `needs` is the gk
** builtin the replacement uses (NULL: an operator or a REPL command); the
** row is skipped when that builtin does not exist. */
typedef struct spelling {
  const char *name;
  const char *needs;
  const char *gk;
} spelling;

static const spelling spellings[] = {
  { "cumsum", "scan", "scan(x)" },
  { "cumprod", "scan", "scan(x, prod)" },
  { "cummax", "scan", "scan(x, max)" },
  { "cummin", "scan", "scan(x, min)" },
  { "arange", "iota", "iota(n)" },
  { "range", "iota", "iota(n)" },
  { "linspace", "iota", "a + iota(n) * (b - a) / (n - 1)" },
  { "amax", "max", "max(x)" },
  { "amin", "min", "min(x)" },
  { "average", "mean", "mean(x)" },
  { "absolute", "abs", "abs(x)" },
  { "power", "pow", "pow(a, b) or a ** b" },
  { "clip", "clamp", "clamp(x, lo, hi)" },
  { "full", "fill", "fill(v, dims...)" },
  { "empty", "zeros", "zeros(dims...)" },
  { "zeros_like", "zeros", "zeros(shape(x))" },
  { "ones_like", "ones", "ones(shape(x))" },
  { "histogram", "hist", "hist(x, nbins[, lo, hi])" },
  { "matmul", NULL, "a @ b" },
  { "mm", NULL, "a @ b" },
  { "logical_and", NULL, "a and b" },
  { "logical_or", NULL, "a or b" },
  { "logical_not", NULL, "not x" },
  { "length", "len", "len(x)" },
  { "numel", "size", "size(x)" },
  { "float", "f32", "f32(x) or f64(x)" },
  { "float32", "f32", "f32(x)" },
  { "float64", "f64", "f64(x)" },
  { "double", "f64", "f64(x)" },
  { "int", "i64", "i32(x) or i64(x)" },
  { "int32", "i32", "i32(x)" },
  { "int64", "i64", "i64(x)" },
  { "astype", "f32", "f32(x), f64(x), i32(x), i64(x) or bool(x)" },
  { "array", NULL, "a list literal [1, 2, 3]" },
  { "asarray", NULL, "a list literal [1, 2, 3]" },
  { "tensor", NULL, "a list literal [1, 2, 3]" },
  { "uniform", "rand", "rand(dims...)" },
  { "normal", "randn", "randn(dims...)" },
  { "manual_seed", "seed", "seed(s)" },
  { "println", "print", "print(values...)" },
  { "log_softmax", "logsoftmax", "logsoftmax(x)" },
  { "layer_norm", "layernorm", "layernorm(x[, gamma, beta])" },
  { "rms_norm", "rmsnorm", "rmsnorm(x[, gamma])" },
  { "concatenate", "concat", "concat(a, b)" },
  { "cat", "concat", "concat(a, b)" },
  { "hstack", "concat", "concat(a, b)" },
  { "argsort", "argsort", "argsort(x)" },
  { "take", "gather", "gather(x, idx)" },
  { "help", NULL, "at the prompt type :help NAME or ?NAME" },
  { "exit", NULL, "at the prompt type :quit (or Ctrl-D) to leave" },
  { "quit", NULL, "at the prompt type :quit (or Ctrl-D) to leave" },
  { "True", NULL, "true" },
  { "False", NULL, "false" },
  { "nan", NULL, "0.0 / 0 (f64(0) / 0 in f64)" },
  { "inf", NULL, "1.0 / 0 (f64(1) / 0 in f64)" },
  { "pi", NULL, "3.141592653589793 (f64(3.141592653589793) in f64)" },
};

static int is_builtin(const char *const *builtins, const char *name) {
  for (const char *const *b = builtins; *b; b++) if (!strcmp(*b, name)) return 1;
  return 0;
}

/* Optimal string alignment distance, capped: returns cap + 1 once every
** path is past cap (names are short; longer ones are never close). */
static int distance(const char *a, const char *b, int cap) {
  enum { M = 48 };
  int la = (int)strlen(a), lb = (int)strlen(b);
  int d[M + 1][M + 1];
  if (la > M || lb > M || la - lb > cap || lb - la > cap) return cap + 1;
  for (int i = 0; i <= la; i++) d[i][0] = i;
  for (int j = 0; j <= lb; j++) d[0][j] = j;
  for (int i = 1; i <= la; i++) {
    int best = cap + 1;
    for (int j = 1; j <= lb; j++) {
      int c = a[i - 1] == b[j - 1] ? 0 : 1;
      int v = d[i - 1][j - 1] + c;
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
      if (v < best) best = v;
    }
    if (best > cap) return cap + 1;
  }
  return d[la][lb];
}

/* The closest of the candidates so far. */
typedef struct near {
  const char *name;     /* the unknown name */
  int cap;              /* most edits allowed */
  const char *best;
  int bestd;
} near;

static void consider(near *n, const char *cand) {
  if (!strcmp(cand, n->name)) return;
  int d = distance(n->name, cand, n->cap);
  if (d <= n->cap && d < n->bestd) { n->best = cand; n->bestd = d; }
}

static void near_vars(near *n, cc_session *s) {
  if (s) for (int i = 0; i < s->nvars; i++) consider(n, s->vars[i].name);
}

static void near_fns(near *n, cc_session *s, const char *const *builtins) {
  if (s) for (int i = 0; i < s->nfns; i++) consider(n, s->fns[i].name);
  for (const char *const *b = builtins; *b; b++) consider(n, *b);
}

/* Writes the hint for `name` into buf (empty when there is none) and returns
** buf.  call: the name was called as a function; nargs: with that many
** arguments (used for max/min with two). */
const char *cc_hint(cc_session *s, const char *const *builtins, const char *name, int call, int nargs, char *buf, size_t n) {
  buf[0] = '\0';
  if (!name || !*name) return buf;
  if (call && nargs == 2 && (!strcmp(name, "max") || !strcmp(name, "min"))) {
    int mx = name[1] == 'a';
    if (is_builtin(builtins, mx ? "maximum" : "minimum"))
      snprintf(buf, n, "; the elementwise %s of two arrays is %s(a, b)", mx ? "larger" : "smaller",
               mx ? "maximum" : "minimum");
    return buf;
  }
  if (nargs >= 0 && call && is_builtin(builtins, name)) return buf;   /* an arity error of a builtin: nothing to add */
  for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
    const spelling *sp = &spellings[i];
    if (strcmp(sp->name, name) != 0 || (sp->needs && !is_builtin(builtins, sp->needs))) continue;
    if (!strncmp(sp->gk, "at the", 6)) snprintf(buf, n, "; %s", sp->gk);
    else snprintf(buf, n, "; gk writes it %s", sp->gk);
    return buf;
  }
  size_t len = strlen(name);
  near nr = { name, len <= 2 ? 0 : len <= 4 ? 1 : len <= 8 ? 2 : 3, NULL, 1 << 30 };
  if (call) { near_fns(&nr, s, builtins); near_vars(&nr, s); }
  else { near_vars(&nr, s); near_fns(&nr, s, builtins); }
  if (nr.best) snprintf(buf, n, "; did you mean '%s'?", nr.best);
  return buf;
}
