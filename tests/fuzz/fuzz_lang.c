/*
** tests/fuzz/fuzz_lang.c -- libFuzzer target for gk's front end.
**
** Feeds arbitrary bytes to lang_parse (the text need not be NUL-terminated,
** may hold NUL bytes), then dumps every statement and formats the error, so
** the whole of lang/ runs under the sanitizers.  Every outcome must be GK_OK,
** GK_ESYNTAX or GK_ELIMIT with a location inside (or just past) the text.
**
** `make fuzz` builds and runs it (with fuzz_gk and fuzz_npy); `make test`
** replays tests/fuzz/corpus/{lang,gk} and tests/fuzz/crashes/lang through it
** (build/tests/test_fuzz_lang).  The -dict= option takes tests/fuzz/gk.dict,
** the language's tokens.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gk.h"
#include "lang/ast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  lang_arena a;
  lang_program p;
  lang_diag d;
  char buf[1024];
  int rc, i;
  lang_arena_init(&a, NULL, NULL);
  rc = lang_parse(&a, (const char *)data, size, &p, &d);
  for (i = 0; i < p.nstmts; i++) ast_dump(p.stmts[i], buf, sizeof buf);
  if (rc != GK_OK) {
    if (rc != GK_ESYNTAX && rc != GK_ELIMIT) abort();
    if (!d.msg[0] || d.loc.line < 1 || d.loc.col < 1 || d.loc.offset < 0 || (size_t)d.loc.offset > size) abort();
    lang_format_error(buf, sizeof buf, "<fuzz>", (const char *)data, size, d.loc, d.msg);
  }
  lang_arena_free(&a);
  return 0;
}
