/*
** lang/tree.c -- the tree builders of gk's front end and its diagnostics.
**
** The Lemon parser's actions (grammar.y) call the lang_mk_* builders below;
** the lexer (lexer.re) and the driver (parse.c) record errors here too.  The
** builders allocate nodes in the caller's arena and enforce the front end's
** limits as the tree grows, so that no later recursive pass (the compiler,
** ast_dump) ever meets a deep tree:
**
**   nesting   brackets, parentheses, prefix `-` / `not` chains and the right
**             spine of `**`, counted together: at most LANG_MAX_DEPTH;
**   depth     the height of any tree, which left-associative chains such as
**             `1+1+...+1` also grow: at most LANG_MAX_TREE;
**   width     arguments / list elements / index positions per bracket:
**             LANG_MAX_ARGS; parameters: LANG_MAX_PARAMS.
**
** Both heights are kept in a small header in front of each node (struct
** pnode) and computed from the kids as the node is built: nothing is ever
** re-walked.  The header is private to lang/: the compiler sees plain `ast`.
**
** Errors: the first one wins (lang_error ignores later ones).  After an
** error the builders return NULL and the driver stops feeding tokens; the
** statements completed before the error stay in the program.  Calls only
** lang/ast.c (the arena).
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "gk.h"
#include "lang/parse.h"
#include "grammar.h"

/* A node with the parser's bookkeeping in front. */
typedef struct pnode {
  int depth;        /* height of the tree under this node, 1 for a leaf */
  int nest;         /* bracket/prefix nesting inside this node */
  lang_loc start;   /* where the expression's text starts (loc may be its operator) */
  ast n;
} pnode;

#define HDR(a) ((pnode *)(void *)((char *)(a) - offsetof(pnode, n)))

/* ---- diagnostics -------------------------------------------------------- */

void lang_error(lang_pstate *st, int status, lang_loc loc, const char *fmt, ...)
{
  va_list ap;
  if (st->diag->status != GK_OK) return;
  st->diag->status = status;
  st->diag->loc = loc;
  va_start(ap, fmt);
  vsnprintf(st->diag->msg, sizeof st->diag->msg, fmt, ap);
  va_end(ap);
}

void lang_nomem(lang_pstate *st)
{
  lang_error(st, GK_ENOMEM, st->cur.loc, "out of memory");
}

void *lang_alloc(lang_pstate *st, size_t n)
{
  void *p = lang_arena_alloc(st->arena, n);
  if (!p) lang_nomem(st);
  return p;
}

/* Can a token of this kind start an expression? */
static int starts_expr(int k)
{
  switch (k) {
  case TK_INT: case TK_FLOAT: case TK_STRING: case TK_NAME: case TK_TRUE:
  case TK_FALSE: case TK_LP: case TK_LB: case TK_MINUS: case TK_NOT:
    return 1;
  default:
    return 0;
  }
}

/* Is this an operator after which an expression must follow? */
static int wants_operand(int k)
{
  switch (k) {
  case TK_OR: case TK_AND: case TK_NOT: case TK_EQ: case TK_NE: case TK_LT:
  case TK_LE: case TK_GT: case TK_GE: case TK_PLUS: case TK_MINUS: case TK_STAR:
  case TK_SLASH: case TK_PERCENT: case TK_AT: case TK_POW: case TK_ASSIGN:
    return 1;
  default:
    return 0;
  }
}

#define SHOW_MAX 32   /* bytes of a token quoted in a message: keeps messages within lang_diag.msg */

/* Called by Lemon's %syntax_error for the token it could not accept.  At the
** end of the text the input is a valid prefix: the REPL may ask for more. */
void lang_syntax_error(lang_pstate *st, int major, const lang_token *t)
{
  int n;
  if (major == 0) {
    lang_error(st, GK_ESYNTAX, t->loc, "unexpected end of input");
    if (st->diag->status == GK_ESYNTAX) st->diag->incomplete = 1;
    return;
  }
  if (major == TK_NEWLINE) {
    lang_error(st, GK_ESYNTAX, t->loc, "unexpected newline");
    return;
  }
  if (st->before_kind && wants_operand(st->before_kind) && !starts_expr(major)) {
    /* numpy's and C's spellings gk lacks: a //= b, a += b, a // b */
    int adjacent = t->text == st->before.text + st->before.len;
    int arith = st->before_kind == TK_PLUS || st->before_kind == TK_MINUS || st->before_kind == TK_STAR ||
                st->before_kind == TK_SLASH || st->before_kind == TK_PERCENT || st->before_kind == TK_POW;
    if (adjacent && major == TK_ASSIGN && arith)
      lang_error(st, GK_ESYNTAX, st->before.loc, "gk has no '%.*s=': write x = x %.*s ...",
                 st->before.len, st->before.text, st->before.len, st->before.text);
    else if (adjacent && major == TK_SLASH && st->before_kind == TK_SLASH)
      lang_error(st, GK_ESYNTAX, st->before.loc, "gk has no '//': write floor(a / b)");
    else
      lang_error(st, GK_ESYNTAX, t->loc, "expected expression after '%.*s'",
                 st->before.len, st->before.text);
    return;
  }
  if (major == TK_STRING) {
    lang_error(st, GK_ESYNTAX, t->loc, "unexpected string");
    return;
  }
  if (major == TK_ASSIGN && st->before_kind == TK_RB) {   /* numpy's x[i] = v */
    lang_error(st, GK_ESYNTAX, t->loc, "gk cannot assign into an array (values are immutable): "
               "make a new one, as x = where(mask, v, x)");
    return;
  }
  n = t->len;
  if (n > SHOW_MAX)
    lang_error(st, GK_ESYNTAX, t->loc, "unexpected '%.*s...'", SHOW_MAX, t->text);
  else
    lang_error(st, GK_ESYNTAX, t->loc, "unexpected '%.*s'", n, t->text);
}

/* ---- nodes ---------------------------------------------------------------- */

/* A fresh node with room for nkids children; NULL after an error. */
static ast *node(lang_pstate *st, ast_kind kind, lang_loc loc, int nkids)
{
  pnode *p;
  if (st->diag->status != GK_OK) return NULL;
  p = lang_alloc(st, sizeof *p);
  if (!p) return NULL;
  p->depth = 1;
  p->start = loc;
  p->n.kind = kind;
  p->n.loc = loc;
  p->n.nkids = nkids;
  if (nkids > 0) {
    p->n.kids = lang_alloc(st, (size_t)nkids * sizeof *p->n.kids);
    if (!p->n.kids) return NULL;
  }
  return &p->n;
}

static int nest_of(const ast *a) { return a ? HDR(a)->nest : 0; }
static lang_loc start_of(const ast *a) { return HDR(a)->start; }

/* Sets n's height from its kids and its nesting to `nest`, and checks both
** limits.  Returns n, or NULL after recording the error. */
static ast *seal(lang_pstate *st, ast *n, int nest, lang_loc where)
{
  int i, d = 0;
  for (i = 0; i < n->nkids; i++)
    if (n->kids[i] && HDR(n->kids[i])->depth > d) d = HDR(n->kids[i])->depth;
  HDR(n)->depth = d + 1;
  HDR(n)->nest = nest;
  if (nest > LANG_MAX_DEPTH) {
    lang_error(st, GK_ELIMIT, where, "expression nested too deeply (limit %d)", LANG_MAX_DEPTH);
    return NULL;
  }
  if (d + 1 > LANG_MAX_TREE) {
    lang_error(st, GK_ELIMIT, where, "expression too complex (depth limit %d)", LANG_MAX_TREE);
    return NULL;
  }
  return n;
}

static int max_nest(ast **kids, int n)
{
  int i, m = 0;
  for (i = 0; i < n; i++)
    if (nest_of(kids[i]) > m) m = nest_of(kids[i]);
  return m;
}

static const char *name_of(lang_pstate *st, const lang_token *t)
{
  char *s = lang_arena_strdup(st->arena, t->text, (size_t)t->len);
  if (!s) lang_nomem(st);
  return s;
}

ast *lang_use(lang_pstate *st, ast *e)
{
  if (e && e == st->big) {
    lang_error(st, GK_ESYNTAX, e->loc, "integer literal too large");
    st->big = NULL;
    return NULL;
  }
  return e;
}

ast *lang_mk_int(lang_pstate *st, const lang_token *t)
{
  ast *n = node(st, AST_INT, t->loc, 0);
  if (!n) return NULL;
  n->ival = t->v.i;
  if (t->big) {
    if (st->big) return lang_use(st, st->big);  /* cannot happen: each is used at once */
    st->big = n;
  }
  return n;
}

ast *lang_mk_float(lang_pstate *st, const lang_token *t)
{
  ast *n = node(st, AST_FLOAT, t->loc, 0);
  if (n) n->fval = t->v.f;
  return n;
}

ast *lang_mk_bool(lang_pstate *st, const lang_token *t, int v)
{
  ast *n = node(st, AST_BOOL, t->loc, 0);
  if (n) n->ival = v;
  return n;
}

ast *lang_mk_str(lang_pstate *st, const lang_token *t)
{
  ast *n = node(st, AST_STR, t->loc, 0);
  if (!n) return NULL;
  n->str = t->v.str.s;
  n->len = t->v.str.n;
  return n;
}

ast *lang_mk_name(lang_pstate *st, const lang_token *t)
{
  ast *n = node(st, AST_NAME, t->loc, 0);
  if (!n) return NULL;
  n->str = name_of(st, t);
  n->len = (size_t)t->len;
  return n->str ? n : NULL;
}

/* ( e ): no node, but the parentheses count as one level of nesting. */
ast *lang_mk_paren(lang_pstate *st, const lang_token *lp, ast *e)
{
  if (!e || st->diag->status != GK_OK) return NULL;
  HDR(e)->start = lp->loc;
  return seal(st, e, nest_of(e) + 1, lp->loc);
}

ast *lang_mk_list(lang_pstate *st, const lang_token *lb, lang_seq *s)
{
  int i, n = s ? s->n : 0;
  ast *a;
  if (st->diag->status != GK_OK || (n && !s)) return NULL;
  a = node(st, AST_LIST, lb->loc, n);
  if (!a) return NULL;
  for (i = 0; i < n; i++) a->kids[i] = s->kids[i];
  return seal(st, a, 1 + max_nest(a->kids, n), lb->loc);
}

ast *lang_mk_unary(lang_pstate *st, ast_op op, const lang_token *t, ast *e)
{
  ast *n;
  if (!lang_use(st, e)) return NULL;
  n = node(st, AST_UNARY, t->loc, 1);
  if (!n) return NULL;
  n->op = op;
  n->kids[0] = e;
  return seal(st, n, nest_of(e) + 1, t->loc);
}

/* Unary minus: folds into a numeric literal (so -9223372036854775808 is an
** i64), except that the grammar never offers `-2**2`'s literal here. */
ast *lang_mk_neg(lang_pstate *st, const lang_token *t, ast *e)
{
  if (!e || st->diag->status != GK_OK) return NULL;
  if ((e->kind == AST_INT || e->kind == AST_FLOAT)) {
    if (e->kind == AST_FLOAT) {
      e->fval = -e->fval;
    } else if (e == st->big) {
      st->big = NULL;           /* -2^63: ival already holds INT64_MIN */
    } else if (e->ival == INT64_MIN) {
      lang_error(st, GK_ESYNTAX, t->loc, "integer literal too large");
      return NULL;
    } else {
      e->ival = -e->ival;
    }
    e->loc = t->loc;
    HDR(e)->start = t->loc;
    return seal(st, e, nest_of(e) + 1, t->loc);
  }
  return lang_mk_unary(st, AST_OP_NEG, t, e);
}

ast *lang_mk_binary(lang_pstate *st, ast_op op, const lang_token *t, ast *l, ast *r)
{
  ast *n;
  int nest;
  if (!lang_use(st, l) || !lang_use(st, r)) return NULL;
  n = node(st, AST_BINARY, t->loc, 2);
  if (!n) return NULL;
  n->op = op;
  n->kids[0] = l;
  n->kids[1] = r;
  HDR(n)->start = start_of(l);
  /* The right spine of ** nests like prefix operators do. */
  nest = op == AST_OP_POW ? nest_of(r) + 1 : nest_of(r);
  if (nest_of(l) > nest) nest = nest_of(l);
  return seal(st, n, nest, t->loc);
}

ast *lang_mk_call(lang_pstate *st, const lang_token *name, lang_seq *s)
{
  int n = s ? s->n : 0;
  ast *a;
  if (st->diag->status != GK_OK) return NULL;
  a = node(st, AST_CALL, name->loc, 0);
  if (!a) return NULL;
  a->str = name_of(st, name);
  if (!a->str) return NULL;
  a->len = (size_t)name->len;
  a->nkids = n;
  if (n) {
    a->kids = s->kids;
    a->kwname = s->kw;
    a->kwloc = s->kwloc;
  }
  return seal(st, a, 1 + max_nest(a->kids, n), name->loc);
}

ast *lang_mk_index(lang_pstate *st, ast *target, const lang_token *lb, lang_seq *s)
{
  ast *a;
  int i, nest;
  if (!lang_use(st, target) || !s) return NULL;
  a = node(st, AST_INDEX, lb->loc, 1 + s->n);
  if (!a) return NULL;
  a->kids[0] = target;
  for (i = 0; i < s->n; i++) a->kids[1 + i] = s->kids[i];
  HDR(a)->start = start_of(target);
  nest = 1 + max_nest(s->kids, s->n);
  if (nest_of(target) > nest) nest = nest_of(target);
  return seal(st, a, nest, lb->loc);
}

ast *lang_mk_slice(lang_pstate *st, const lang_token *colon, ast *a, ast *b, ast *c)
{
  ast *n;
  if (st->diag->status != GK_OK) return NULL;
  n = node(st, AST_SLICE, a ? start_of(a) : colon->loc, 3);
  if (!n) return NULL;
  n->kids[0] = a;
  n->kids[1] = b;
  n->kids[2] = c;
  return seal(st, n, max_nest(n->kids, 3), colon->loc);
}

ast *lang_mk_assign(lang_pstate *st, const lang_token *name, ast *e)
{
  ast *n;
  if (!e) return NULL;
  n = node(st, AST_ASSIGN, name->loc, 1);
  if (!n) return NULL;
  n->str = name_of(st, name);
  n->len = (size_t)name->len;
  n->kids[0] = e;
  return n->str ? seal(st, n, nest_of(e), name->loc) : NULL;
}

ast *lang_mk_fn(lang_pstate *st, const lang_token *fn, const lang_token *name, lang_seq *params, ast *body)
{
  ast *n;
  if (!body) return NULL;
  n = node(st, AST_FN, fn->loc, 1);
  if (!n) return NULL;
  n->str = name_of(st, name);
  n->len = (size_t)name->len;
  n->kids[0] = body;
  if (params) {
    n->ival = params->n;
    n->kwname = params->kw;
    n->kwloc = params->kwloc;
  }
  return n->str ? seal(st, n, nest_of(body), fn->loc) : NULL;
}

ast *lang_mk_expr(lang_pstate *st, ast *e)
{
  ast *n;
  if (!e) return NULL;
  n = node(st, AST_EXPR, start_of(e), 1);
  if (!n) return NULL;
  n->kids[0] = e;
  return seal(st, n, nest_of(e), start_of(e));
}

void lang_add_stmt(lang_pstate *st, ast *s, size_t end)
{
  lang_program *p = st->prog;
  if (!s || st->diag->status != GK_OK) return;
  if (p->nstmts == st->stmt_cap) {
    int cap = st->stmt_cap ? 2 * st->stmt_cap : 16;
    ast **ns = lang_alloc(st, (size_t)cap * sizeof *ns);
    int *ne = ns ? lang_alloc(st, (size_t)cap * sizeof *ne) : NULL;
    if (!ne) return;
    if (p->nstmts) {
      memcpy(ns, p->stmts, (size_t)p->nstmts * sizeof *ns);
      memcpy(ne, p->stmt_end, (size_t)p->nstmts * sizeof *ne);
    }
    p->stmts = ns;
    p->stmt_end = ne;
    st->stmt_cap = cap;
  }
  p->stmts[p->nstmts] = s;
  p->stmt_end[p->nstmts] = (int)end;
  p->nstmts++;
}

/* ---- sequences ------------------------------------------------------------ */

/* Appends e (with optional name) to s, creating s when NULL. */
static lang_seq *seq_push(lang_pstate *st, lang_seq *s, ast *e, const char *kw, lang_loc kwloc)
{
  if (st->diag->status != GK_OK) return NULL;
  if (!s) {
    s = lang_alloc(st, sizeof *s);
    if (!s) return NULL;
  }
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 4;
    ast **k = lang_alloc(st, (size_t)cap * sizeof *k);
    const char **w = k ? lang_alloc(st, (size_t)cap * sizeof *w) : NULL;
    lang_loc *l = w ? lang_alloc(st, (size_t)cap * sizeof *l) : NULL;
    if (!l) return NULL;
    if (s->n) {
      memcpy(k, s->kids, (size_t)s->n * sizeof *k);
      memcpy(w, s->kw, (size_t)s->n * sizeof *w);
      memcpy(l, s->kwloc, (size_t)s->n * sizeof *l);
    }
    s->kids = k;
    s->kw = w;
    s->kwloc = l;
    s->cap = cap;
  }
  s->kids[s->n] = e;
  s->kw[s->n] = kw;
  s->kwloc[s->n] = kwloc;
  if (kw) s->nkw++;
  s->n++;
  return s;
}

lang_seq *lang_seq_add(lang_pstate *st, lang_seq *s, ast *e, const char *what)
{
  lang_loc none = {0, 0, 0};
  if (!e || st->diag->status != GK_OK) return NULL;
  int most = strcmp(what, "list elements") ? LANG_MAX_ARGS : LANG_MAX_LIST;
  if (s && s->n >= most) {
    lang_error(st, GK_ELIMIT, start_of(e), "too many %s (limit %d)", what, most);
    return NULL;
  }
  return seq_push(st, s, e, NULL, none);
}

lang_seq *lang_seq_arg(lang_pstate *st, lang_seq *s, const lang_token *kw, ast *e)
{
  lang_loc none = {0, 0, 0};
  const char *name;
  int i;
  if (!e || st->diag->status != GK_OK) return NULL;
  if (s && s->n >= LANG_MAX_ARGS) {
    lang_error(st, GK_ELIMIT, kw ? kw->loc : start_of(e), "too many arguments (limit %d)", LANG_MAX_ARGS);
    return NULL;
  }
  if (!kw) {
    if (s && s->nkw > 0) {
      lang_error(st, GK_ESYNTAX, start_of(e), "positional argument after keyword argument");
      return NULL;
    }
    return seq_push(st, s, e, NULL, none);
  }
  for (i = 0; s && i < s->n; i++)
    if (s->kw[i] && strlen(s->kw[i]) == (size_t)kw->len && !memcmp(s->kw[i], kw->text, (size_t)kw->len)) {
      lang_error(st, GK_ESYNTAX, kw->loc, "duplicate keyword argument '%.*s'", kw->len, kw->text);
      return NULL;
    }
  name = name_of(st, kw);
  return name ? seq_push(st, s, e, name, kw->loc) : NULL;
}

lang_seq *lang_seq_param(lang_pstate *st, lang_seq *s, const lang_token *p)
{
  const char *name;
  int i;
  if (st->diag->status != GK_OK) return NULL;
  if (s && s->n >= LANG_MAX_PARAMS) {
    lang_error(st, GK_ELIMIT, p->loc, "too many parameters (limit %d)", LANG_MAX_PARAMS);
    return NULL;
  }
  for (i = 0; s && i < s->n; i++)
    if (strlen(s->kw[i]) == (size_t)p->len && !memcmp(s->kw[i], p->text, (size_t)p->len)) {
      lang_error(st, GK_ESYNTAX, p->loc, "duplicate parameter '%.*s'", p->len, p->text);
      return NULL;
    }
  name = name_of(st, p);
  return name ? seq_push(st, s, NULL, name, p->loc) : NULL;
}
