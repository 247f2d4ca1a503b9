/*
** lang/lexer.re -- gk's lexer, for re2c 3.0.
**
** The Makefile runs `re2c -W --no-generation-date --no-version` on this file
** into build/gen/lexer.c (never committed).  Every other option is pinned in
** the re2c:... configurations below, so the generated file depends only on
** this text and the re2c version.
**
** All cursor state lives in lang_lexer (parse.h); there are no globals.  The
** text need not be NUL-terminated: re2c reads through YYPEEK, which yields 0
** at the end, and the "\x00" rule tells a real NUL byte (an error) from the
** end of the text by the cursor's offset.
**
** Newlines.  A newline is a statement separator (TK_NEWLINE) only where a
** statement could end: outside every ( and [, and right after a token that
** can end an expression (a literal, a name, ')' or ']').  Anywhere else it
** is skipped like a space, so `x = 1 +` continues on the next line and the
** REPL sees it as incomplete.  CRLF is one newline; a lone CR is an error.
*/
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gk.h"
#include "lang/parse.h"
#include "grammar.h"

/*!re2c
  re2c:api = custom;
  re2c:api:style = free-form;
  re2c:define:YYCTYPE = "unsigned char";
  re2c:define:YYPEEK = "(lx->pos < lx->len ? lx->src[lx->pos] : 0)";
  re2c:define:YYSKIP = "++lx->pos;";
  re2c:define:YYBACKUP = "lx->mar = lx->pos;";
  re2c:define:YYRESTORE = "lx->pos = lx->mar;";
  re2c:yyfill:enable = 0;
  re2c:encoding:utf8 = 0;
  re2c:indent:string = "  ";

  digit  = [0-9];
  digits = digit+;
  exp    = [eE] [+-]? digits;
  ident  = [A-Za-z_] [A-Za-z0-9_]*;
  eol    = "\r"? "\n";
*/

/* Can a token of this kind end an expression (so that a newline after it
** ends the statement)? */
static int ends_expr(int kind)
{
  switch (kind) {
  case TK_INT: case TK_FLOAT: case TK_STRING: case TK_NAME:
  case TK_TRUE: case TK_FALSE: case TK_RP: case TK_RB:
    return 1;
  default:
    return 0;
  }
}

static lang_loc loc_at(const lang_lexer *lx, size_t off)
{
  lang_loc l;
  l.line = lx->line;
  l.col = (int)(off - lx->line_start) + 1;
  l.offset = (int)off;
  return l;
}

lang_loc lang_eof_loc(const lang_lexer *lx)
{
  size_t end = lx->len, i;
  int line = lx->line;
  lang_loc l;
  /* Back over trailing line breaks (and the blank lines they make). */
  while (end > 0 && (lx->src[end - 1] == '\n' || lx->src[end - 1] == '\r')) {
    if (lx->src[end - 1] == '\n') line--;
    end--;
  }
  if (line < 1) line = 1;
  i = end;
  while (i > 0 && lx->src[i - 1] != '\n') i--;
  l.line = line;
  l.col = (int)(end - i) + 1;
  l.offset = (int)end;
  return l;
}

/* What a character gk lacks means in numpy, torch or Julia, as a suffix
** for its message ("" for most): '.' after a name (np.sum, x.T, x.shape),
** '&', '|', '~' and '!' (and, or, not). */
static const char *char_hint(const lang_lexer *lx, size_t off, char *buf, size_t n)
{
  const unsigned char *s = lx->src;
  size_t b = off, a = off + 1;
  unsigned c = s[off];
  buf[0] = '\0';
  if (c == '&') snprintf(buf, n, "; gk writes 'and' (on bools)");
  else if (c == '|') snprintf(buf, n, "; gk writes 'or' (on bools)");
  else if (c == '~' || (c == '!' && !(off + 1 < lx->len && s[off + 1] == '='))) snprintf(buf, n, "; gk writes 'not' (on bools)");
  else if (c == '^') snprintf(buf, n, "; gk writes a ** b for a power");
  else if (c == '\'') snprintf(buf, n, "; strings are in double quotes");
  if (c != '.') return buf;
  while (b > 0 && (isalnum(s[b - 1]) || s[b - 1] == '_')) b--;
  while (a < lx->len && (isalnum(s[a]) || s[a] == '_')) a++;
  if (b == off || a == off + 1 || isdigit(s[b])) return buf;
  int nb = (int)(off - b), na = (int)(a - off - 1);
  const char *before = (const char *)s + b, *after = (const char *)s + off + 1;
  if (na > 24 || nb > 24) { snprintf(buf, n, "; gk has no modules, attributes or methods"); return buf; }
  if ((nb == 2 && !memcmp(before, "np", 2)) || (nb == 5 && !memcmp(before, "numpy", 5)) ||
      (nb == 5 && !memcmp(before, "torch", 5)) || (nb == 3 && !memcmp(before, "jnp", 3)) ||
      (nb == 4 && !memcmp(before, "math", 4)) || (nb == 1 && !memcmp(before, "F", 1)))
    snprintf(buf, n, "; gk has no modules: write %.*s(...), not %.*s.%.*s(...)", na, after, nb, before, na, after);
  else if (na == 1 && after[0] == 'T')
    snprintf(buf, n, "; gk has no attributes: write transpose(%.*s), not %.*s.T", nb, before, nb, before);
  else
    snprintf(buf, n, "; gk has no attributes or methods: write %.*s(%.*s), not %.*s.%.*s", na, after, nb, before, nb, before, na, after);
  return buf;
}

/* Describes the byte at off for "unexpected character" messages: a
** printable ASCII character or a well-formed UTF-8 sequence is quoted, any
** other byte is shown in hex. */
static void bad_char(lang_pstate *st, size_t off)
{
  const lang_lexer *lx = &st->lex;
  const unsigned char *p = lx->src + off;
  size_t left = lx->len - off;
  unsigned c = p[0];
  int n = 0, i;
  if (c > 0x20 && c < 0x7f) {
    char hint[160];
    lang_error(st, GK_ESYNTAX, loc_at(lx, off), "unexpected character '%c'%s", (int)c, char_hint(lx, off, hint, sizeof hint));
    return;
  }
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) n = 3;
  else if (c >= 0xf0 && c <= 0xf4) n = 4;
  if (n > 0 && (size_t)n <= left) {
    for (i = 1; i < n; i++)
      if ((p[i] & 0xc0) != 0x80) break;
    if (i == n) {
      lang_error(st, GK_ESYNTAX, loc_at(lx, off), "unexpected character '%.*s'", n, (const char *)p);
      return;
    }
  }
  lang_error(st, GK_ESYNTAX, loc_at(lx, off), "unexpected byte 0x%02x", c);
}

/* Shows the token text in a message, shortened when long. */
#define SHOW_MAX 32   /* bytes of a number quoted in a message: keeps messages within lang_diag.msg */

/* Converts the decimal text of an integer literal.  Values up to 2^63 are
** accepted (2^63 only makes sense negated; the parser checks that). */
static int lex_int(lang_pstate *st, lang_token *t)
{
  uint64_t v = 0;
  int i;
  for (i = 0; i < t->len; i++) {
    unsigned d = (unsigned)(t->text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) goto too_large;
    v = v * 10 + d;
  }
  if (v > (uint64_t)INT64_MAX + 1) goto too_large;
  t->big = v == (uint64_t)INT64_MAX + 1;
  t->v.i = t->big ? INT64_MIN : (int64_t)v;
  return TK_INT;
too_large:
  lang_error(st, GK_ESYNTAX, t->loc, "integer literal too large");
  return -1;
}

/* Converts a float literal with strtod, independent of the C locale's
** decimal point (the text is copied and its '.' replaced when needed). */
static int lex_float(lang_pstate *st, lang_token *t)
{
  char small[64], *buf = small, *end;
  const char *dp = localeconv()->decimal_point;
  double f;
  int i;
  if ((size_t)t->len >= sizeof small) {
    buf = lang_alloc(st, (size_t)t->len + 1);
    if (!buf) return -1;
  }
  memcpy(buf, t->text, (size_t)t->len);
  buf[t->len] = 0;
  if (dp && dp[0] && dp[0] != '.' && !dp[1])
    for (i = 0; i < t->len; i++)
      if (buf[i] == '.') buf[i] = dp[0];
  errno = 0;
  f = strtod(buf, &end);
  if (errno == ERANGE && (f > 1.0 || f < -1.0)) {
    lang_error(st, GK_ESYNTAX, t->loc, "float literal too large");
    return -1;
  }
  t->v.f = f;
  return TK_FLOAT;
}

/* Scans a string literal whose opening quote is at lx->tok, validating it
** and counting its decoded length; then decodes it into the arena. */
static int lex_string(lang_pstate *st, lang_token *t)
{
  lang_lexer *lx = &st->lex;
  size_t n = 0, esc;
  char *out;
  const unsigned char *p, *e;
  for (;;) {
    esc = lx->pos;
    /*!re2c
      "\""            { break; }
      "\\" [\\"nt]    { n++; continue; }
      "\\"? "\x00"    {
                        if (lx->pos > lx->len) {  /* the end of the text */
                          lang_error(st, GK_ESYNTAX, t->loc, "unterminated string");
                          st->diag->incomplete = 1;
                        } else {
                          lang_error(st, GK_ESYNTAX, loc_at(lx, lx->pos - 1), "unexpected byte 0x00");
                        }
                        return -1;
                      }
      "\\"? [\r\n]    { lang_error(st, GK_ESYNTAX, t->loc, "unterminated string"); return -1; }
      "\\" [^]        {
                        unsigned c = lx->src[esc + 1];
                        if (c > 0x20 && c < 0x7f)
                          lang_error(st, GK_ESYNTAX, loc_at(lx, esc), "unknown escape '\\%c' in string", (int)c);
                        else
                          lang_error(st, GK_ESYNTAX, loc_at(lx, esc), "unknown escape in string ('\\' then byte 0x%02x)", c);
                        return -1;
                      }
      [^]             { n++; continue; }
    */
  }
  t->len = (int)(lx->pos - lx->tok);
  out = lang_alloc(st, n + 1);
  if (!out) return -1;
  p = lx->src + lx->tok + 1;
  e = lx->src + lx->pos - 1;
  t->v.str.s = out;
  t->v.str.n = n;
  while (p < e) {
    if (*p == '\\') {
      p++;
      *out++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : (char)*p;
      p++;
    } else {
      *out++ = (char)*p++;
    }
  }
  *out = 0;
  return TK_STRING;
}

/* The next token, or 0 at the end of the text, or -1 after an error. */
static int lex(lang_pstate *st, lang_token *t)
{
  lang_lexer *lx = &st->lex;
  for (;;) {
    lx->tok = lx->pos;
    memset(t, 0, sizeof *t);
    t->loc = loc_at(lx, lx->tok);
    t->text = (const char *)lx->src + lx->tok;
#define TOK(k) do { t->len = (int)(lx->pos - lx->tok); return (k); } while (0)
    /*!re2c
      [ \t]+            { continue; }
      "#" [^\n\x00]*    { continue; }
      eol               {
                          if (lx->depth > 0 || !ends_expr(lx->prev)) {
                            lx->line++;
                            lx->line_start = lx->pos;
                            continue;
                          }
                          t->len = (int)(lx->pos - lx->tok);
                          lx->line++;
                          lx->line_start = lx->pos;
                          return TK_NEWLINE;
                        }
      "\x00"            {
                          if (lx->pos > lx->len) {      /* the end of the text */
                            lx->pos = lx->len;
                            t->loc = lang_eof_loc(lx);
                            t->text = "";
                            return 0;
                          }
                          lang_error(st, GK_ESYNTAX, t->loc, "unexpected byte 0x00");
                          return -1;
                        }

      digits            { t->len = (int)(lx->pos - lx->tok); return lex_int(st, t); }
      digits "." digit* exp? | "." digits exp? | digits exp
                        { t->len = (int)(lx->pos - lx->tok); return lex_float(st, t); }
      (digits ("." digit*)? | "." digits) ([eE] [+-]?)? [A-Za-z0-9_]*
                        {
                          t->len = (int)(lx->pos - lx->tok);
                          if (t->len > SHOW_MAX)
                            lang_error(st, GK_ESYNTAX, t->loc, "invalid number '%.*s...'", SHOW_MAX, t->text);
                          else
                            lang_error(st, GK_ESYNTAX, t->loc, "invalid number '%.*s'", t->len, t->text);
                          return -1;
                        }

      "fn"              { TOK(TK_FN); }
      "and"             { TOK(TK_AND); }
      "or"              { TOK(TK_OR); }
      "not"             { TOK(TK_NOT); }
      "true"            { TOK(TK_TRUE); }
      "false"           { TOK(TK_FALSE); }
      ident             { TOK(TK_NAME); }
      "\""              { return lex_string(st, t); }

      "**"              { TOK(TK_POW); }
      "=="              { TOK(TK_EQ); }
      "!="              { TOK(TK_NE); }
      "<="              { TOK(TK_LE); }
      ">="              { TOK(TK_GE); }
      "<"               { TOK(TK_LT); }
      ">"               { TOK(TK_GT); }
      "="               { TOK(TK_ASSIGN); }
      "+"               { TOK(TK_PLUS); }
      "-"               { TOK(TK_MINUS); }
      "*"               { TOK(TK_STAR); }
      "/"               { TOK(TK_SLASH); }
      "%"               { TOK(TK_PERCENT); }
      "@"               { TOK(TK_AT); }
      ","               { TOK(TK_COMMA); }
      ":"               { TOK(TK_COLON); }
      ";"               { TOK(TK_SEMI); }
      "("               { TOK(TK_LP); }
      ")"               { TOK(TK_RP); }
      "["               { TOK(TK_LB); }
      "]"               { TOK(TK_RB); }

      *                 { bad_char(st, lx->tok); return -1; }
    */
#undef TOK
  }
}

int lang_lex(lang_pstate *st, lang_token *t)
{
  lang_lexer *lx = &st->lex;
  int k = lex(st, t);
  if (k == TK_LP || k == TK_LB) {
    if (lx->depth >= LANG_MAX_DEPTH) {
      lang_error(st, GK_ELIMIT, t->loc, "expression nested too deeply (limit %d)", LANG_MAX_DEPTH);
      return -1;
    }
    lx->depth++;
  } else if ((k == TK_RP || k == TK_RB) && lx->depth > 0) {
    lx->depth--;
  }
  if (k > 0) lx->prev = k;
  return k;
}
