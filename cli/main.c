/*
** cli/main.c -- the gk command: reads the command line, opens a context and
** hands control to the script runner or the REPL.
**
**   gk                     REPL when standard input is a terminal
**   gk FILE.gk             runs a script (diagnostics name the path as given)
**   gk -e 'SRC' ...        runs source text ("<expr>"), several -e in order
**   gk - / non-tty stdin   reads all of standard input as a script ("<stdin>")
**
** Options are parsed by hand (no getopt_long: "--opt=value", "-bcpu" and
** "-e SRC" repeated in order are all simple here, and the error messages are
** ours).  Exit status: 0 ok, 1 an error in the program, 2 bad usage; a script
** stopped by Ctrl-C exits 130 like any interrupted Unix command.  This is the
** only file that decides the exit status; nothing else calls exit().
*/
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The REPL's interactive guarantee: a compile that takes more than half a
** second gets a one-line status on the terminal (gk_config.compile), erased
** when the compile ends.  Never in scripts or through the API. */
static void repl_compile_note(void *ud, int done, const char *kernel, double ms) {
  (void)ud;
  if (cli_status_compile(done, kernel)) return;   /* the status line of a long statement shows it */
  if (!done) fprintf(stderr, "\rgk: compiling a new kernel (%s) ...", kernel);
  else fprintf(stderr, "\r\033[Kgk: compiled %s in %.0f ms\n", kernel, ms);
  fflush(stderr);
}

/* Most -e options one command line may carry; argv bounds it anyway, this
** only sizes the array. */
#define CLI_MAX_EXPRS 256

/* What the command line asked for. */
typedef struct cli_args {
  const char *backend;              /* --backend value, or NULL */
  const char *exprs[CLI_MAX_EXPRS]; /* -e texts, in order */
  int nexpr;                        /* how many -e */
  const char *file;                 /* script path ("-" = stdin), or NULL */
  int plan, cuda, timing, nofusion, profile; /* flags */
} cli_args;

static const char usage_text[] =
  "usage: gk [options] [FILE.gk | -]\n"
  "       gk [options] -e 'SRC' [-e 'SRC' ...]\n"
  "\n"
  "gk is an array language for NVIDIA GPUs.  With no FILE and a terminal on\n"
  "standard input it starts an interactive session (REPL); FILE runs a script;\n"
  "'-' or a non-terminal standard input runs standard input as a script.\n"
  "\n"
  "options:\n"
  "  -e SRC                run the source text SRC (diagnostics say <expr>);\n"
  "                        may be repeated, texts run in order, in one context\n"
  "  -b, --backend NAME    run on NAME: cpu or cuda (default: cuda when a usable\n"
  "                        GPU and driver are found, else cpu)\n"
  "      --plan            print each launched kernel's fused group, then\n"
  "                        'kernels: N'\n"
  "      --cuda            also print the generated CUDA source of each kernel\n"
  "                        (on the cpu backend: the CUDA the cuda backend would run)\n"
  "      --time            print the wall time of each statement to stderr\n"
  "      --profile         print each kernel (cuda) or group (cpu) run: its fused\n"
  "                        ops, time, bytes moved, GB/s, lowering/JIT time; then\n"
  "                        the totals (each kernel is waited for)\n"
  "      --no-fusion       run every op as its own kernel (for comparison)\n"
  "  -h, --help            show this help and exit\n"
  "  -V, --version         show the version and whether cuda is available\n"
  "\n"
  "environment:\n"
  "  GK_BACKEND   backend when --backend is not given (cpu or cuda)\n"
  "  GK_DEVICE    CUDA device ordinal to use (default 0)\n"
  "  GK_CACHE     0 turns the on-disk kernel cache off (the cache lives in\n"
  "               $XDG_CACHE_HOME/gk or ~/.cache/gk)\n"
  "  GK_CACHE_MAX its size cap in MiB (default 512, 0: none): least recently\n"
  "               used entries are removed past it\n"
  "  GK_DEBUG     comma list: src (generated CUDA source and NVRTC log),\n"
  "               cache (kernel cache hits and misses), all\n"
  "  GK_FUSION    0 disables fusion, like --no-fusion\n"
  "  GK_THREADS   worker threads of the cpu backend (default: all cores)\n"
  "  GK_HISTORY   REPL history file (default ~/.gk_history; empty: none)\n"
  "  GK_DIGITS    significant digits of printed floats, 1 to 17 (default 6)\n"
  "\n"
  "examples:\n"
  "  gk -e 'x = rand(1e6); sum(x) / len(x)'\n"
  "  gk --plan -e 'm = randn(1000, 512); softmax(rows(m))'\n"
  "  gk --backend cpu examples/tour.gk\n"
  "  echo 'sum(iota(10))' | gk\n"
  "\n"
  "REPL commands:\n"
  "  :help [NAME]   commands, or a builtin's help   :vars     list variables\n"
  "  ?NAME          the same as :help NAME\n"
  "  :time [EXPR]   toggle timing, or time EXPR     :backend  show the backend\n"
  "  :plan [EXPR]   toggle plan printing, or show EXPR's kernels\n"
  "  :cuda [EXPR]   toggle CUDA source printing, or show EXPR's source\n"
  "  :profile [EXPR] toggle profiles, or profile EXPR once\n"
  "  :digits [N]    significant digits of printed floats\n"
  "  :quit, :q      leave (so does Ctrl-D); Ctrl-C interrupts a statement\n"
  "\n"
  "exit status: 0 ok, 1 error in the program, 2 bad usage, 130 interrupted.\n";

/* Prints a usage error and returns CLI_EXIT_USAGE. */
static int usage_error(const char *fmt, const char *arg) {
  fputs("gk: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\ntry 'gk --help'\n", stderr);
  return CLI_EXIT_USAGE;
}

/* "gk 0.1.0 (backend cuda available)": opens and closes a cuda context to
** find out, since that is the one reliable test of driver + device. */
static void print_version(void) {
  const char *msg = NULL;
  gk_config cfg;
  gk_ctx *g;

  memset(&cfg, 0, sizeof cfg);
  cfg.backend = "cuda";
  g = gk_open_ex(&cfg, &msg);
  printf("gk %s (backend cuda %s)\n", gk_version(), g ? "available" : "unavailable");
  gk_close(g);
}

/* Fills *a from argv.  Returns -1 to go on, or an exit status to stop with
** (0 after --help/--version, 2 after a usage error, already reported). */
static int parse_args(int argc, char **argv, cli_args *a) {
  int i, only_files = 0;

  memset(a, 0, sizeof *a);
  for (i = 1; i < argc; i++) {
    const char *s = argv[i], *val = NULL;

    if (only_files || s[0] != '-' || strcmp(s, "-") == 0) {
      if (a->file) return usage_error("unexpected argument '%s' (one script at a time)", s);
      a->file = s;
      continue;
    }
    if (strcmp(s, "--") == 0) { only_files = 1; continue; }
    if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
      fputs(usage_text, stdout);
      cli_print_docs_line(stdout);
      return CLI_EXIT_OK;
    }
    if (strcmp(s, "-V") == 0 || strcmp(s, "--version") == 0) {
      print_version();
      return CLI_EXIT_OK;
    }
    if (strcmp(s, "--plan") == 0) { a->plan = 1; continue; }
    if (strcmp(s, "--cuda") == 0) { a->cuda = 1; continue; }
    if (strcmp(s, "--time") == 0) { a->timing = 1; continue; }
    if (strcmp(s, "--profile") == 0) { a->profile = 1; continue; }
    if (strcmp(s, "--no-fusion") == 0) { a->nofusion = 1; continue; }

    /* Options with a value: "-e SRC", "-eSRC", "--backend X", "--backend=X". */
    if (strncmp(s, "-e", 2) == 0 || strncmp(s, "-b", 2) == 0) {
      val = s[2] ? s + 2 : NULL;
      s = s[1] == 'e' ? "-e" : "-b";
    } else if (strncmp(s, "--backend", 9) == 0 && (s[9] == '\0' || s[9] == '=')) {
      val = s[9] == '=' ? s + 10 : NULL;
      s = "--backend";
    } else {
      return usage_error("unknown option '%s'", s);
    }
    if (!val) {
      if (i + 1 >= argc) return usage_error("option '%s' needs an argument", s);
      val = argv[++i];
    }
    if (strcmp(s, "-e") == 0) {
      if (a->nexpr == CLI_MAX_EXPRS) return usage_error("too many -e options (at most %s)", "256");
      a->exprs[a->nexpr++] = val;
    } else {
      if (strcmp(val, "cpu") != 0 && strcmp(val, "cuda") != 0)
        return usage_error("unknown backend '%s' (expected cpu or cuda)", val);
      a->backend = val;
    }
  }
  return -1;
}

/* Exit status for a gk status from a script. */
static int script_status(int rc) {
  if (rc == GK_OK) return CLI_EXIT_OK;
  return rc == GK_EINTERRUPT ? CLI_EXIT_INTERRUPT : CLI_EXIT_ERROR;
}

int main(int argc, char **argv) {
  cli_args a;
  cli_state st;
  gk_config cfg;
  const char *errmsg = NULL;
  int status, i, rc = GK_OK;

  status = parse_args(argc, argv, &a);
  if (status >= 0) return status;

  memset(&st, 0, sizeof st);
  st.out_nl = 1;
  st.timing = a.timing;
  memset(&cfg, 0, sizeof cfg);
  cfg.output = cli_output;
  cfg.output_ud = &st;
  cfg.backend = a.backend;
  if (a.nexpr == 0 && !a.file && isatty(0) && isatty(2)) cfg.compile = repl_compile_note;
  if (!cfg.backend) {
    const char *env = getenv("GK_BACKEND");
    if (env && *env) cfg.backend = env;
  }
  st.g = gk_open_ex(&cfg, &errmsg);
  if (!st.g) {
    if (errmsg && *errmsg) fprintf(stderr, "gk: error: %s\n", errmsg);
    else fprintf(stderr, "gk: error: cannot open the %s backend\n", cfg.backend ? cfg.backend : "default");
    return CLI_EXIT_ERROR;
  }
  {
    const char *env = getenv("GK_DIGITS");
    if (env && *env) {
      char *end;
      long v = strtol(env, &end, 10);
      if (*end || v < 1 || v > 17) {
        fprintf(stderr, "gk: error: GK_DIGITS must be a number of significant digits from 1 to 17, got '%s'\n", env);
        gk_close(st.g);
        return CLI_EXIT_USAGE;
      }
      gk_option(st.g, "digits", (int)v);
      st.digits = (int)v;
    }
  }
  /* Charts on a terminal: Unicode, ASCII under NO_COLOR (no-color.org asks
  ** for plain output); piped, plot draws ASCII and hist prints bare counts. */
  if (isatty(1)) {
    const char *nc = getenv("NO_COLOR");
    gk_option(st.g, "charts", nc && *nc ? 1 : 2);
  }
  st.status = isatty(1) && isatty(2);   /* never for output piped to a file */
  st.plan = a.plan;
  st.cuda = a.cuda;
  st.profile = a.profile;
  if ((st.plan || st.cuda || st.profile) && cli_apply_options(&st) != GK_OK) {
    gk_close(st.g);
    return CLI_EXIT_ERROR;
  }
  if (a.nofusion && gk_option(st.g, "fusion", 0) != GK_OK) {
    cli_print_error(gk_errmsg(st.g));
    gk_close(st.g);
    return CLI_EXIT_ERROR;
  }

  if (a.nexpr > 0 || a.file) {
    for (i = 0; i < a.nexpr && rc == GK_OK; i++) rc = cli_run(&st, a.exprs[i], "<expr>");
    if (rc == GK_OK && a.file) {
      char *src = cli_slurp(a.file);
      if (!src) {
        gk_close(st.g);
        return CLI_EXIT_ERROR;
      }
      rc = cli_run(&st, src, strcmp(a.file, "-") == 0 ? "<stdin>" : a.file);
      free(src);
    }
    status = script_status(rc);
  } else if (!isatty(0)) {
    char *src = cli_slurp("-");
    if (!src) {
      gk_close(st.g);
      return CLI_EXIT_ERROR;
    }
    status = script_status(cli_run(&st, src, "<stdin>"));
    free(src);
  } else {
    status = cli_repl(&st);
  }
  fflush(stdout);
  gk_close(st.g);
  fflush(stdout);
  return status;
}
