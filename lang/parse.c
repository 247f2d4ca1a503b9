/*
** lang/parse.c -- the driver of gk's front end: lang_parse() pulls tokens
** from the re2c lexer (lexer.re) and pushes them into the Lemon parser
** (grammar.y), whose actions build the tree (tree.c, which also keeps the
** first error).  The lexer and the parser call tree.c only; nothing in lang/
** calls back here.
*/
#include <string.h>
#include "gk.h"
#include "lang/parse.h"

int lang_parse(lang_arena *a, const char *src, size_t len, lang_program *prog, lang_diag *d)
{
  lang_pstate st;
  lang_token t;
  size_t psize;
  void *p;
  int k;

  memset(d, 0, sizeof *d);
  memset(prog, 0, sizeof *prog);
  memset(&st, 0, sizeof st);
  st.arena = a;
  st.diag = d;
  st.prog = prog;
  st.lex.src = (const unsigned char *)(src ? src : "");
  st.lex.len = src ? len : 0;
  st.lex.line = 1;
  st.cur.loc.line = st.cur.loc.col = 1;
  d->loc = st.cur.loc;
  if (len > LANG_MAX_SOURCE) {
    lang_error(&st, GK_ELIMIT, st.cur.loc, "source text too large (%zu bytes; limit %u)",
               len, (unsigned)LANG_MAX_SOURCE);
    return d->status;
  }
  psize = lang_lemon_size();
  p = a->alloc(a->ud, NULL, 0, psize);
  if (!p) {
    lang_nomem(&st);
    return d->status;
  }
  lang_lemonInit(p, &st);
  for (;;) {
    k = lang_lex(&st, &t);
    if (k < 0) break;
    st.cur = t;
    lang_lemon(p, k, t);
    if (d->status != GK_OK || k == 0) break;
    st.before_kind = k;
    st.before = t;
  }
  lang_lemonFinalize(p);
  a->alloc(a->ud, p, psize, 0);
  return d->status;
}
