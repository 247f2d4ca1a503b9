/*
** lang/ast.c -- the node arena, names of kinds and operators, the canonical
** dump of a tree (the tests' notation), and the formatting of a located
** error with its source line and caret.
**
** The arena takes big blocks from the allocation hook and carves zeroed,
** 16-aligned pieces out of them; lang_arena_free returns every block.  All
** memory goes through the hook, and a NULL from it is reported as NULL (the
** parser turns that into GK_ENOMEM "out of memory"), never a crash.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/ast.h"

#define ARENA_BLOCK  (32u << 10)   /* bytes of a normal block; bigger requests get their own */
#define ARENA_ALIGN  16

struct lang_block {
  struct lang_block *next;   /* older block */
  size_t size;               /* bytes allocated for this block, header included */
};

/* Header rounded up so that the data after it is 16-aligned. */
#define BLOCK_HDR ((sizeof(struct lang_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

static void *default_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
  (void)ud;
  (void)old_size;
  if (new_size == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, new_size);
}

void lang_arena_init(lang_arena *a, lang_allocfn alloc, void *ud)
{
  a->alloc = alloc ? alloc : default_alloc;
  a->ud = ud;
  a->blocks = NULL;
  a->used = 0;
  a->cap = 0;
}

void *lang_arena_alloc(lang_arena *a, size_t n)
{
  char *p;
  if (n == 0) n = 1;
  if (n > (size_t)-1 / 2) return NULL;
  n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (!a->blocks || a->cap - a->used < n) {
    size_t cap = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
    struct lang_block *b = a->alloc(a->ud, NULL, 0, BLOCK_HDR + cap);
    if (!b) return NULL;
    b->size = BLOCK_HDR + cap;
    if (cap == n && a->blocks) {
      /* A big piece: keep filling the current block afterwards. */
      b->next = a->blocks->next;
      a->blocks->next = b;
      p = (char *)b + BLOCK_HDR;
      memset(p, 0, n);
      return p;
    }
    b->next = a->blocks;
    a->blocks = b;
    a->used = 0;
    a->cap = cap;
  }
  p = (char *)a->blocks + BLOCK_HDR + a->used;
  a->used += n;
  memset(p, 0, n);
  return p;
}

char *lang_arena_strdup(lang_arena *a, const char *s, size_t n)
{
  char *p = lang_arena_alloc(a, n + 1);
  if (!p) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

void lang_arena_free(lang_arena *a)
{
  struct lang_block *b = a->blocks, *next;
  while (b) {
    next = b->next;
    a->alloc(a->ud, b, b->size, 0);
    b = next;
  }
  a->blocks = NULL;
  a->used = 0;
  a->cap = 0;
}

/* ---- names ------------------------------------------------------------------ */

const char *ast_kind_name(ast_kind k)
{
  /* ORDER: ast_kind in ast.h. */
  static const char *const names[] = {
    "int", "float", "bool", "str", "name", "list", "unary", "binary",
    "call", "index", "slice", "assign", "fn", "expr"
  };
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

const char *ast_op_name(ast_op op)
{
  /* ORDER: ast_op in ast.h. */
  static const char *const names[] = {
    "+", "-", "*", "/", "%", "@", "**", "==", "!=", "<", "<=", ">", ">=",
    "and", "or", "not", "-"
  };
  return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* ---- output into a bounded buffer, counting what was needed ----------------- */

typedef struct outbuf {
  char *p;
  size_t cap;   /* bytes available including the NUL */
  size_t n;     /* bytes wanted so far */
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
  if (o->n + 1 < o->cap) {
    size_t room = o->cap - 1 - o->n;
    memcpy(o->p + o->n, s, n < room ? n : room);
  }
  o->n += n;
}

static void puts_(outbuf *o, const char *s) { put(o, s, strlen(s)); }

static void putf(outbuf *o, const char *fmt, ...)
{
  char buf[64];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) put(o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void finish(outbuf *o)
{
  if (o->cap == 0) return;
  o->p[o->n < o->cap ? o->n : o->cap - 1] = 0;
}

/* Shortest %g form that reads back as the same double. */
static void put_double(outbuf *o, double v)
{
  char buf[40];
  int prec;
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  puts_(o, buf);
}

static void put_quoted(outbuf *o, const char *s, size_t n)
{
  size_t i;
  put(o, "\"", 1);
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') { put(o, "\\", 1); put(o, (const char *)&c, 1); }
    else if (c == '\n') puts_(o, "\\n");
    else if (c == '\t') puts_(o, "\\t");
    else if (c < 0x20 || c == 0x7f) putf(o, "\\x%02x", c);
    else put(o, (const char *)&c, 1);
  }
  put(o, "\"", 1);
}

/* Recursion is bounded: the parser refuses trees deeper than 3*LANG_MAX_DEPTH. */
static void dump(outbuf *o, const ast *n)
{
  int i;
  if (!n) {
    puts_(o, "_");
    return;
  }
  switch (n->kind) {
  case AST_INT: putf(o, "(int %lld)", (long long)n->ival); return;
  case AST_FLOAT: puts_(o, "(float "); put_double(o, n->fval); puts_(o, ")"); return;
  case AST_BOOL: puts_(o, n->ival ? "(bool true)" : "(bool false)"); return;
  case AST_STR: puts_(o, "(str "); put_quoted(o, n->str, n->len); puts_(o, ")"); return;
  case AST_NAME: puts_(o, "(name "); puts_(o, n->str); puts_(o, ")"); return;
  case AST_UNARY:
    puts_(o, n->op == AST_OP_NEG ? "(neg " : "(not ");
    dump(o, n->kids[0]);
    puts_(o, ")");
    return;
  case AST_BINARY:
    puts_(o, "(");
    puts_(o, ast_op_name(n->op));
    puts_(o, " ");
    dump(o, n->kids[0]);
    puts_(o, " ");
    dump(o, n->kids[1]);
    puts_(o, ")");
    return;
  case AST_CALL:
    puts_(o, "(call ");
    puts_(o, n->str);
    for (i = 0; i < n->nkids; i++) {
      puts_(o, " ");
      if (n->kwname && n->kwname[i]) {
        puts_(o, "(kw ");
        puts_(o, n->kwname[i]);
        puts_(o, " ");
        dump(o, n->kids[i]);
        puts_(o, ")");
      } else {
        dump(o, n->kids[i]);
      }
    }
    puts_(o, ")");
    return;
  case AST_FN:
    puts_(o, "(fn ");
    puts_(o, n->str);
    puts_(o, " (");
    for (i = 0; i < (int)n->ival; i++) {
      if (i) puts_(o, " ");
      puts_(o, n->kwname[i]);
    }
    puts_(o, ") ");
    dump(o, n->kids[0]);
    puts_(o, ")");
    return;
  case AST_ASSIGN:
    puts_(o, "(assign ");
    puts_(o, n->str);
    puts_(o, " ");
    dump(o, n->kids[0]);
    puts_(o, ")");
    return;
  case AST_LIST: case AST_INDEX: case AST_SLICE: case AST_EXPR:
  default:
    puts_(o, "(");
    puts_(o, ast_kind_name(n->kind));
    for (i = 0; i < n->nkids; i++) {
      puts_(o, " ");
      dump(o, n->kids[i]);
    }
    puts_(o, ")");
    return;
  }
}

size_t ast_dump(const ast *n, char *out, size_t outlen)
{
  outbuf o = { out, outlen, 0 };
  dump(&o, n);
  finish(&o);
  return o.n;
}

/* ---- diagnostics ------------------------------------------------------------ */

size_t lang_format_error(char *out, size_t outlen, const char *file, const char *src, size_t srclen,
                         lang_loc loc, const char *msg)
{
  outbuf o = { out, outlen, 0 };
  size_t off, bol, eol, i, col;
  putf(&o, "%s:%d:%d: error: ", file ? file : "<expr>", loc.line, loc.col);
  puts_(&o, msg ? msg : "");
  puts_(&o, "\n");
  if (src && loc.offset >= 0) {
    off = (size_t)loc.offset;
    if (off >= srclen) {
      /* Past the end (unexpected end of input): just after the last
      ** character of the last non-empty line. */
      off = srclen;
      while (off > 0 && (src[off - 1] == '\n' || src[off - 1] == '\r')) off--;
    }
    bol = off;
    while (bol > 0 && src[bol - 1] != '\n') bol--;
    eol = off;
    while (eol < srclen && src[eol] != '\n') eol++;
    if (eol > bol && src[eol - 1] == '\r') eol--;
    put(&o, src + bol, eol - bol);
    puts_(&o, "\n");
    /* The caret: mirror tabs, skip UTF-8 continuation bytes so that the
    ** caret lines up under multi-byte characters. */
    col = off - bol;
    for (i = 0; i < col; i++) {
      unsigned char c = i < eol - bol ? (unsigned char)src[bol + i] : ' ';
      if (c == '\t') put(&o, "\t", 1);
      else if ((c & 0xc0) != 0x80) put(&o, " ", 1);
    }
    puts_(&o, "^\n");
  }
  finish(&o);
  return o.n;
}
