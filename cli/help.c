/*
** cli/help.c -- :help, :help NAME and ?NAME.
**
** The text of every builtin's entry is docs/help.txt, which
** docs/gen_language.py writes from the same table (and the same runs of gk)
** as docs/language.md, and which the Makefile embeds here as cli_help_text.
** An entry starts with a line "@NAME" and runs to the next such line;
** "@:names" is the list of builtins by family.  `make test` checks that the
** file is what the generator would write, so help and reference agree.
**
** Paths: help names the reference only where it is: installed
** (BIN/../share/doc/gk/, `make install`) or in the source tree the binary
** was built in (build/gk -> docs/).  Neither: it says the reference is not
** installed, never a path that is not there.
*/
#include "cli/cli.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char cli_help_text[];   /* build/gen/help_embed.c */

const char *cli_doc_path(const char *file) {
  static char out[PATH_MAX + 64];
  char exe[PATH_MAX];
  static const char *const rel[] = { "/../share/doc/gk/", "/../docs/", NULL };
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash;

  if (n <= 0) return NULL;
  exe[n] = '\0';
  if (!(slash = strrchr(exe, '/'))) return NULL;
  *slash = '\0';
  for (int i = 0; rel[i]; i++) {
    char real[PATH_MAX];
    snprintf(out, sizeof out, "%s%s%s", exe, rel[i], file);
    if (access(out, R_OK) == 0 && realpath(out, real)) {
      snprintf(out, sizeof out, "%s", real);
      return out;
    }
  }
  return NULL;
}

void cli_print_docs_line(FILE *f) {
  const char *p = cli_doc_path("language.md");
  if (p) fprintf(f, "The language: %s; the command: man gk.\n", p);
  else fprintf(f, "The language reference (language.md) is not installed here; the command: man gk.\n");
}

/* The entry of `name` in the embedded text: its start (after the "@NAME\n"
** line) and length, or NULL. */
static const char *entry(const char *name, size_t *len) {
  size_t nl = strlen(name);
  const char *p = cli_help_text;
  while ((p = strchr(p, '@')) != NULL) {
    if ((p == cli_help_text || p[-1] == '\n') && !strncmp(p + 1, name, nl) && p[1 + nl] == '\n') {
      const char *start = p + 2 + nl, *end = start;
      while ((end = strchr(end, '\n')) != NULL && end[1] != '@' && end[1] != '\0') end++;
      *len = end ? (size_t)(end + 1 - start) : strlen(start);
      return start;
    }
    p++;
  }
  return NULL;
}

static const char commands_text[] =
  "commands:\n"
  "  :help [NAME]     this text, or a builtin's signature, meaning, dtype rule and\n"
  "                   example (also ?NAME)\n"
  "  :vars            variables: name, dtype, shape, bytes, where they live\n"
  "  :time [EXPR]     toggle per-entry wall time, or time EXPR once\n"
  "  :plan [EXPR]     toggle plan printing, or run EXPR showing its kernels\n"
  "  :cuda [EXPR]     toggle CUDA source printing, or run EXPR showing it\n"
  "  :profile [EXPR]  toggle profiles, or profile EXPR once: each kernel or group,\n"
  "                   its ops, time, bytes and GB/s, and the JIT time apart\n"
  "  :digits [N]      significant digits of printed floats (default 6; GK_DIGITS)\n"
  "  :backend         the backend this session runs on\n"
  "  :quit, :q        leave (Ctrl-D also leaves)\n"
  "keys: Tab completes names (file names in a string), Up/Down walk the history\n"
  "(a multi-line entry is one entry), Ctrl-C drops the line or interrupts a\n"
  "running statement.\n"
  "_ is the last value printed.\n"
  "\n"
  "examples:\n"
  "  x = rand(1e6)                  # assignment prints nothing\n"
  "  sum(x) / len(x)                # an expression prints its value\n"
  "  m = randn(1000, 64)\n"
  "  softmax(rows(m))               # one row kernel\n"
  "  fn sq(a) = a * a; sum(sq(x))   # functions inline and fuse\n"
  "  x[x > 0.5]                     # filter\n"
  "\n"
  "An entry continues on a '... ' line while it is incomplete (an open\n"
  "bracket, a trailing operator).\n";

/* The language's words that are not builtins. */
static const struct { const char *name, *text; } words[] = {
  { "fn", "fn name(params) = expr    [keyword]\n"
          "  defines a function of up to 16 parameters; calls are inlined (so they fuse)\n"
          "  example:\n    gk> fn sq(a) = a * a; sq(3)\n    9\n" },
  { "and", "a and b    [keyword]\n  logical and of two bool operands (numpy's &), elementwise\n" },
  { "or", "a or b    [keyword]\n  logical or of two bool operands (numpy's |), elementwise\n" },
  { "not", "not a    [keyword]\n  logical not of a bool operand (numpy's ~), elementwise\n" },
  { "true", "true    [literal]\n  the bool true\n" },
  { "false", "false    [literal]\n  the bool false\n" },
  { "_", "_    [REPL]\n  the last value the REPL printed (an expression entry's value)\n" },
};

/* :help NAME for a variable. */
typedef struct var_find {
  const char *name;
  int found;
} var_find;

static void var_show(void *ud, const gk_varinfo *v) {
  var_find *f = ud;
  if (strcmp(v->name, f->name) != 0) return;
  f->found = 1;
  printf("%s    [variable]\n  %s[", v->name, gk_dtype_name(v->dtype));
  for (int d = 0; d < v->ndim; d++) printf("%s%lld", d ? ", " : "", (long long)v->shape[d]);
  printf("], %zu bytes, %s\n", v->bytes, v->where ? v->where : "?");
}

void cli_help(cli_state *st, const char *arg) {
  char name[128];
  size_t n = 0, len;
  const char *e;

  while (*arg && isspace((unsigned char)*arg)) arg++;
  while (arg[n] && !isspace((unsigned char)arg[n]) && arg[n] != '(' && n + 1 < sizeof name) {
    name[n] = arg[n];
    n++;
  }
  name[n] = '\0';
  if (n == 0) {
    fputs(commands_text, stdout);
    if ((e = entry(":names", &len)) != NULL) {
      printf("\nbuiltins (:help NAME or ?NAME for one):\n");
      fwrite(e, 1, len, stdout);
    }
    fputc('\n', stdout);
    cli_print_docs_line(stdout);
    return;
  }
  if (name[0] == ':') {
    fputs(commands_text, stdout);
    return;
  }
  if ((e = entry(name, &len)) != NULL) {
    fwrite(e, 1, len, stdout);
    return;
  }
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (!strcmp(words[i].name, name)) {
      fputs(words[i].text, stdout);
      return;
    }
  if (st) {
    var_find f = { name, 0 };
    gk_vars(st->g, var_show, &f);
    if (f.found) return;
  }
  for (const char *const *b = gk_builtin_names(); *b; b++)
    if (!strcmp(*b, name)) {
      printf("%s is a builtin, but docs/help.txt has no entry for it yet "
             "(run: python3 docs/gen_language.py)\n", name);
      return;
    }
  {
    char hint[256];
    gk_suggest(st ? st->g : NULL, name, hint, sizeof hint);
    printf("no help for '%s'%s\n", name, hint);
  }
}
