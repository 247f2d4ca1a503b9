/*
** lang/parse.h -- private to lang/: the state shared by the re2c lexer
** (lexer.re), the Lemon grammar (grammar.y), the tree builders (tree.c) and
** the driver (parse.c).
**
** Nothing here is seen by compiler/ or the rest of the library: the contract
** with them is lang/ast.h.  One lang_pstate lives on lang_parse's stack for
** the duration of one parse; the Lemon parser reaches it through
** %extra_context, the lexer through its argument.  There are no globals.
*/
#ifndef LANG_PARSE_H
#define LANG_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include "lang/ast.h"

/* Limits that are not in ast.h because only the parser sees them. */
#define LANG_MAX_TREE (3 * LANG_MAX_DEPTH) /* depth of any produced tree: bounds the recursion of every later pass (left-assoc chains) */

/* A token: what the lexer hands the Lemon parser (%token_type).  Plain
** value, no owned memory: text points into the source, str into the arena. */
typedef struct lang_token {
  lang_loc loc;        /* first byte of the token */
  int len;             /* bytes of source text it spans */
  const char *text;    /* the token's source text (not NUL-terminated) */
  union {
    int64_t i;         /* TK_INT: the value; INT64_MIN with big = 1 means 2^63 */
    double f;          /* TK_FLOAT */
    struct { const char *s; size_t n; } str; /* TK_STRING: decoded, NUL-terminated, in the arena */
  } v;
  int big;             /* TK_INT: the literal is 9223372036854775808 (valid only negated) */
} lang_token;

/* The lexer's cursor: offsets, not pointers, so nothing ever points past the
** end of the text.  re2c reads through YYPEEK, which yields 0 at the end. */
typedef struct lang_lexer {
  const unsigned char *src; /* the text */
  size_t len;          /* its length */
  size_t pos;          /* cursor */
  size_t tok;          /* start of the current token */
  size_t mar;          /* re2c's backtracking marker */
  size_t line_start;   /* offset of the first byte of the current line */
  int line;            /* current line, 1-based */
  int depth;           /* open ( and [ (newlines inside are ignored) */
  int prev;            /* kind of the last token returned, 0 = none yet */
} lang_lexer;

/* A growing sequence (call args, list elements, index positions, params),
** kept in the arena; storage is doubled, old storage is left to the arena. */
typedef struct lang_seq {
  int n, cap;
  ast **kids;
  const char **kw;     /* per item: keyword / parameter name or NULL */
  lang_loc *kwloc;     /* per item: where that name is */
  int nkw;             /* items with a keyword so far */
} lang_seq;

/* The parse state: Lemon's %extra_context. */
typedef struct lang_pstate {
  lang_arena *arena;
  lang_diag *diag;     /* first error wins */
  lang_program *prog;
  int stmt_cap;        /* capacity of prog->stmts / prog->stmt_end */
  lang_lexer lex;
  lang_token cur;      /* the token being fed to the parser now */
  int before_kind;     /* kind of the token fed before it (0 = none) */
  lang_token before;   /* that token (for "expected expression after '+'") */
  ast *big;            /* an AST_INT for 2^63 awaiting its unary minus, or NULL */
} lang_pstate;

/* Lexer (lexer.re).  Returns a TK_* code, 0 at the end of the text, or -1
** after recording an error in st->diag. */
int lang_lex(lang_pstate *st, lang_token *t);
/* Location for "unexpected end of input": just after the last character of
** the last non-empty line. */
lang_loc lang_eof_loc(const lang_lexer *lx);

/* Diagnostics (tree.c).  Only the first error is kept. */
void lang_error(lang_pstate *st, int status, lang_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 4, 5)))
#endif
  ;
void lang_nomem(lang_pstate *st);
void lang_syntax_error(lang_pstate *st, int major, const lang_token *t);
void *lang_alloc(lang_pstate *st, size_t n); /* arena allocation; records ENOMEM */

/* Tree builders used by grammar.y's actions (tree.c).  Each returns NULL
** once an error is recorded, and checks the depth limits as it builds. */
ast *lang_mk_int(lang_pstate *st, const lang_token *t);
ast *lang_mk_float(lang_pstate *st, const lang_token *t);
ast *lang_mk_bool(lang_pstate *st, const lang_token *t, int v);
ast *lang_mk_str(lang_pstate *st, const lang_token *t);
ast *lang_mk_name(lang_pstate *st, const lang_token *t);
ast *lang_mk_paren(lang_pstate *st, const lang_token *lp, ast *e);
ast *lang_mk_list(lang_pstate *st, const lang_token *lb, lang_seq *s);
ast *lang_mk_unary(lang_pstate *st, ast_op op, const lang_token *t, ast *e);
ast *lang_mk_neg(lang_pstate *st, const lang_token *t, ast *e);
ast *lang_mk_binary(lang_pstate *st, ast_op op, const lang_token *t, ast *l, ast *r);
ast *lang_mk_call(lang_pstate *st, const lang_token *name, lang_seq *args);
ast *lang_mk_index(lang_pstate *st, ast *target, const lang_token *lb, lang_seq *pos);
ast *lang_mk_slice(lang_pstate *st, const lang_token *colon, ast *a, ast *b, ast *c);
ast *lang_mk_assign(lang_pstate *st, const lang_token *name, ast *e);
ast *lang_mk_fn(lang_pstate *st, const lang_token *fn, const lang_token *name, lang_seq *params, ast *body);
ast *lang_mk_expr(lang_pstate *st, ast *e);
ast *lang_use(lang_pstate *st, ast *e);   /* an operand is used: a pending 2^63 is an error */
void lang_add_stmt(lang_pstate *st, ast *s, size_t end);

lang_seq *lang_seq_add(lang_pstate *st, lang_seq *s, ast *e, const char *what); /* list element / index position */
lang_seq *lang_seq_arg(lang_pstate *st, lang_seq *s, const lang_token *kw, ast *e); /* call argument */
lang_seq *lang_seq_param(lang_pstate *st, lang_seq *s, const lang_token *name);     /* fn parameter */

/* The Lemon parser (grammar.c; %name lang_lemon). */
size_t lang_lemon_size(void);
void lang_lemonInit(void *p, lang_pstate *st);
void lang_lemon(void *p, int major, lang_token minor);
void lang_lemonFinalize(void *p);

#endif /* LANG_PARSE_H */
