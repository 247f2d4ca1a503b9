/*
** lang/ast.h -- the syntax tree gk's parser produces and the compiler reads.
**
** This header is the interface between lang/ (lexer, grammar, diagnostics)
** and compiler/.  Nodes live in an arena (lang_arena) that the caller owns:
** one arena per parsed text, freed in one call, so a failed parse or a failed
** statement frees everything it built without walking the tree.
**
** Locations are 1-based line and column (columns count bytes) plus the byte
** offset into the source text, so diagnostics can print the source line.
*/
#ifndef LANG_AST_H
#define LANG_AST_H

#include <stddef.h>
#include <stdint.h>

/* Limits of the front end.  docs/limits.md lists every limit. */
#define LANG_MAX_SOURCE   (64u << 20) /* bytes of source text in one gk_eval: keeps offsets in int */
#define LANG_MAX_DEPTH    200         /* nesting of brackets/parens/operators: keeps every recursive pass shallow */
#define LANG_MAX_ARGS     64          /* arguments in one call: bounds fixed arrays */
#define LANG_MAX_LIST     1048576     /* elements in one row of a list literal (pasted data): each is a tree node */
#define LANG_MAX_PARAMS   16          /* parameters of one fn */

typedef struct lang_loc {
  int line;    /* 1-based line */
  int col;     /* 1-based byte column */
  int offset;  /* byte offset of the first character */
} lang_loc;

/* Allocation hook, same contract as gk_config.alloc (realloc-like). */
typedef void *(*lang_allocfn)(void *ud, void *ptr, size_t old_size, size_t new_size);

/* A bump arena: big blocks from the hook, nodes carved out of them. */
typedef struct lang_arena {
  lang_allocfn alloc;   /* never NULL after lang_arena_init */
  void *ud;             /* passed to alloc */
  struct lang_block *blocks; /* list of blocks, newest first */
  size_t used;          /* bytes used in the newest block */
  size_t cap;           /* capacity of the newest block */
} lang_arena;

void lang_arena_init(lang_arena *a, lang_allocfn alloc, void *ud); /* alloc NULL = realloc/free */
void *lang_arena_alloc(lang_arena *a, size_t n);   /* zeroed, 16-aligned; NULL when out of memory */
char *lang_arena_strdup(lang_arena *a, const char *s, size_t n); /* NUL-terminated copy */
void lang_arena_free(lang_arena *a);               /* frees every block; a is reusable after init */

/* Node kinds.  ORDER: keep in step with ast_kind_name() in lang/ast.c. */
typedef enum {
  AST_INT,      /* integer literal: ival */
  AST_FLOAT,    /* float literal: fval (1e6, 2.5) */
  AST_BOOL,     /* true / false: ival 1 or 0 */
  AST_STR,      /* string literal: str (escapes decoded), len */
  AST_NAME,     /* identifier: str */
  AST_LIST,     /* [k0, k1, ...] (nested lists for matrices); nkids may be 0 */
  AST_UNARY,    /* op kid0; op is AST_OP_NEG or AST_OP_NOT */
  AST_BINARY,   /* kid0 op kid1 */
  AST_CALL,     /* str = callee name; kids = args; kwname[i] != NULL for keyword args (after positional) */
  AST_INDEX,    /* kid0 = target; kids[1..] = one per index position (AST_SLICE or expression) */
  AST_SLICE,    /* a:b[:c]; kids[0..2] = start, stop, step, each NULL when omitted; nkids == 3 */
  AST_ASSIGN,   /* str = name; kid0 = value */
  AST_FN,       /* str = name; kwname[0..nparams-1] = parameter names; kid0 = body; ival = nparams */
  AST_EXPR      /* expression statement: kid0; its value is printed */
} ast_kind;

/* Operators of AST_UNARY / AST_BINARY.  ORDER: keep in step with ast_op_name(). */
typedef enum {
  AST_OP_ADD, AST_OP_SUB, AST_OP_MUL, AST_OP_DIV, AST_OP_MOD, AST_OP_MATMUL, AST_OP_POW,
  AST_OP_EQ, AST_OP_NE, AST_OP_LT, AST_OP_LE, AST_OP_GT, AST_OP_GE,
  AST_OP_AND, AST_OP_OR, AST_OP_NOT, AST_OP_NEG
} ast_op;

typedef struct ast {
  ast_kind kind;
  ast_op op;            /* AST_UNARY / AST_BINARY */
  lang_loc loc;         /* where the node starts (for a binary node: the operator) */
  int64_t ival;         /* AST_INT, AST_BOOL, AST_FN (parameter count) */
  double fval;          /* AST_FLOAT */
  const char *str;      /* AST_STR, AST_NAME, AST_CALL, AST_ASSIGN, AST_FN */
  size_t len;           /* length of str (strings may hold NUL) */
  int nkids;            /* number of children */
  struct ast **kids;    /* children (entries may be NULL only in AST_SLICE) */
  const char **kwname;  /* AST_CALL: per kid, keyword name or NULL; AST_FN: parameter names */
  lang_loc *kwloc;      /* AST_CALL: per kid, where the keyword name is; AST_FN: parameter locations */
} ast;

/* A parsed text: its statements in order. */
typedef struct lang_program {
  int nstmts;
  ast **stmts;          /* AST_ASSIGN, AST_FN or AST_EXPR */
  int *stmt_end;        /* byte offset just past each statement's terminator (for gk_prepare's tail) */
} lang_program;

/* A diagnostic: status, where, message.  The first error wins. */
typedef struct lang_diag {
  int status;           /* GK_OK, GK_ESYNTAX, GK_ELIMIT, GK_ENOMEM (gk.h codes) */
  int incomplete;       /* 1 when the text ended inside a construct (open bracket, trailing operator, unterminated string): the REPL asks for more */
  lang_loc loc;         /* where the error is */
  char msg[256];        /* message without location, e.g. "unexpected ')'" */
} lang_diag;

/* Parses `src` (len bytes; need not be NUL-terminated) into *prog, allocating
** in arena `a`.  Returns GK_OK, or the status stored in *d with d->loc/msg set.
** Never prints. */
int lang_parse(lang_arena *a, const char *src, size_t len, lang_program *prog, lang_diag *d);

/* Formats a located error the way gk prints every error:
**   FILE:LINE:COL: error: MSG\n
**   <the source line>\n
**   <spaces up to COL>^\n
** into out (at most outlen bytes, always NUL-terminated).  `src` may be NULL
** (then only the first line is written).  Returns the length it needed. */
size_t lang_format_error(char *out, size_t outlen, const char *file, const char *src, size_t srclen,
                         lang_loc loc, const char *msg);

const char *ast_kind_name(ast_kind k);
const char *ast_op_name(ast_op op);   /* "+", "**", "and", "not", "-" (NEG) ... */

/* Writes a canonical s-expression of n to out (for tests): (call sum (name x) (kw eps (float 1e-06))) */
size_t ast_dump(const ast *n, char *out, size_t outlen);

#endif /* LANG_AST_H */
