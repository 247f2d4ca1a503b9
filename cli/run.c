/*
** cli/run.c -- running gk source text from the command line.
**
** Everything that runs text goes through cli_eval: it installs a SIGINT
** handler that asks the library to stop (gk_interrupt is async-signal-safe),
** evaluates, restores the previous handler and writes a failure's diagnostic
** to stderr exactly as gk_errmsg formatted it.  cli_run adds the --time mode,
** which needs statement boundaries: it cuts the text into top-level
** statement groups with gk_is_complete (the library decides what is
** complete, the command never parses gk) and runs each group alone, padded
** with newlines so that line numbers in diagnostics are those of the file.
**
** Also here: reading a whole file, the clock and the time format.
*/
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Ctrl-C presses during one evaluation after which the handler stops
** asking politely: a script lets SIGINT kill the process (the way out of a
** statement that does not reach a check point); the REPL never ends on
** Ctrl-C -- its variables are the user's work -- and says once that the
** statement stops at its next check point and that Ctrl-\ (SIGQUIT) is
** the way out. */
#define CLI_FORCE_QUIT_PRESSES 3

static gk_ctx *volatile sig_ctx;            /* context being evaluated, for the handler */
static volatile sig_atomic_t sig_presses;   /* Ctrl-C presses during this evaluation */
static volatile sig_atomic_t sig_repl;      /* the evaluation is the REPL's */

/* SIGINT during evaluation: ask the statement to stop.  Only
** async-signal-safe calls: gk_interrupt, signal, raise, write. */
static void on_sigint_eval(int signo) {
  gk_ctx *g = sig_ctx;
  if (g) gk_interrupt(g);
  if (++sig_presses == CLI_FORCE_QUIT_PRESSES && sig_repl) {
    static const char msg[] = "\ngk: stopping at the statement's next check point (a kernel or a compile in "
                              "flight ends first); the variables stay. Ctrl-\\ quits gk.\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
  } else if (sig_presses >= CLI_FORCE_QUIT_PRESSES && !sig_repl) {
    static const char msg[] = "\ngk: interrupted again, quitting\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    signal(signo, SIG_DFL);
    raise(signo);
  }
}

int cli_apply_options(cli_state *st) {
  int rc = gk_option(st->g, "plan", st->plan || st->cuda);
  if (rc == GK_OK) rc = gk_option(st->g, "cuda", st->cuda);
  if (rc == GK_OK) rc = gk_option(st->g, "profile", st->profile);
  if (rc != GK_OK) cli_print_error(gk_errmsg(st->g));
  return rc;
}

void cli_output(void *ud, const char *text, size_t len) {
  cli_state *st = ud;
  if (len == 0) return;
  cli_status_pause();
  fwrite(text, 1, len, stdout);
  st->out_nl = text[len - 1] == '\n';
}

void cli_profile_begin(cli_state *st, gk_progress *p0) {
  gk_get_progress(st->g, p0);
  fflush(stdout);
  printf("profile (%s backend):\n  %-4s %-9s %13s %13s %13s %7s %11s  %s\n", gk_backend(st->g),
         "#", "group", "time", "moved", "rate", "of copy", "lower/JIT", "fused ops");
  fflush(stdout);
  st->out_nl = 1;
}

void cli_profile_end(cli_state *st, const gk_progress *p0, double wall_s) {
  gk_progress p;
  gk_get_progress(st->g, &p);
  fflush(stdout);
  if (!st->out_nl) { fputc('\n', stdout); st->out_nl = 1; }
  if (p.kernels == p0->kernels) {
    printf("profile: no kernel ran (%.3f ms wall)\n", wall_s * 1e3);
  } else {
    double ms = p.run_ms - p0->run_ms;
    double mb = (double)(p.bytes - p0->bytes) / 1e6;
    double copy = gk_copy_rate(st->g);
    char share[48] = "";
    if (copy > 0 && ms > 0) snprintf(share, sizeof share, ", %.0f%% of copy", 100.0 * mb * 1e9 / ms / copy);
    printf("profile: %lld kernel%s, %.3f ms in kernels (%.3f MB, %.2f GB/s%s), %.3f ms lowering/JIT, %.3f ms wall\n",
           (long long)(p.kernels - p0->kernels), p.kernels - p0->kernels == 1 ? "" : "s", ms, mb,
           ms > 0 ? mb / ms : 0.0, share, p.jit_ms - p0->jit_ms, wall_s * 1e3);
  }
  fflush(stdout);
}

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_print_time(const char *prefix, double s) {
  if (s < 1.0) fprintf(stderr, "%stime: %.2f ms\n", prefix, s * 1e3);
  else fprintf(stderr, "%stime: %.3f s\n", prefix, s);
}

void cli_print_error(const char *msg) {
  size_t n;
  if (!msg || !*msg) msg = "gk: error (the library gave no message)\n";
  n = strlen(msg);
  fputs(msg, stderr);
  if (msg[n - 1] != '\n') fputc('\n', stderr);
}

int cli_eval(cli_state *st, const char *src, const char *name, int sync) {
  struct sigaction sa, old;
  int rc;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint_eval;
  sigemptyset(&sa.sa_mask);
  sig_ctx = st->g;
  sig_presses = 0;
  sig_repl = st->repl;
  sigaction(SIGINT, &sa, &old);

  cli_status_begin(st);
  rc = gk_eval_named(st->g, src, name);
  if (rc == GK_OK && sync) rc = gk_sync(st->g);
  cli_status_end();

  sigaction(SIGINT, &old, NULL);
  sig_ctx = NULL;

  fflush(stdout);
  if (rc != GK_OK) {
    if (rc == GK_EINTERRUPT && isatty(2)) fputc('\n', stderr);  /* after the tty's "^C" */
    if (!st->out_nl) { fputc('\n', stdout); fflush(stdout); st->out_nl = 1; }
    cli_print_error(gk_errmsg(st->g));
  }
  return rc;
}

/* 1 when [p, end) holds only blanks and perhaps a '#' comment. */
static int blank_line(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
  return p == end || *p == '#';
}

/* The --time mode of cli_run: one statement group at a time. */
static int run_timed(cli_state *st, char *text, const char *name) {
  char *p = text, *pad = NULL;
  size_t padcap = 0;
  int line = 1, rc = GK_OK;

  while (*p && rc == GK_OK) {
    char *end = strchr(p, '\n');
    int first = line;
    size_t len, need;
    double t0;
    char prefix[256];

    if (!end) end = p + strlen(p);
    if (blank_line(p, end)) {           /* nothing to time */
      p = *end ? end + 1 : end;
      line++;
      continue;
    }
    /* Grow the group a line at a time until the library calls it complete. */
    for (;;) {
      char save;
      int done;
      if (*end) { end++; line++; }
      save = *end;
      *end = '\0';
      done = gk_is_complete(p);
      *end = save;
      if (done || !*end) break;
      end = strchr(end, '\n');
      if (!end) end = p + strlen(p);
    }
    /* Pad with first-1 newlines: the library then reports the file's lines. */
    len = (size_t)(end - p);
    need = (size_t)(first - 1) + len + 1;
    if (need > padcap) {
      char *np = realloc(pad, need);
      if (!np) { fprintf(stderr, "gk: error: out of memory\n"); free(pad); return GK_ENOMEM; }
      pad = np;
      padcap = need;
    }
    memset(pad, '\n', (size_t)(first - 1));
    memcpy(pad + first - 1, p, len);
    pad[first - 1 + len] = '\0';

    t0 = cli_now();
    rc = cli_eval(st, pad, name, 1);
    if (rc == GK_OK) {
      snprintf(prefix, sizeof prefix, "%s:%d: ", name, first);
      cli_print_time(prefix, cli_now() - t0);
    }
    p = end;
  }
  free(pad);
  return rc;
}

int cli_run(cli_state *st, const char *src, const char *name) {
  char *copy;
  int rc;

  if (st->profile) {
    gk_progress p0;
    double t0 = cli_now();
    int prof = st->profile;
    cli_profile_begin(st, &p0);
    st->profile = 0;
    rc = cli_run(st, src, name);
    st->profile = prof;
    cli_profile_end(st, &p0, cli_now() - t0);
    return rc;
  }
  if (!st->timing) return cli_eval(st, src, name, 0);
  copy = strdup(src);
  if (!copy) { fprintf(stderr, "gk: error: out of memory\n"); return GK_ENOMEM; }
  rc = run_timed(st, copy, name);
  free(copy);
  return rc;
}

char *cli_slurp(const char *path) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  char *buf = NULL;
  size_t len = 0, cap = 0;

  if (!f) {
    fprintf(stderr, "gk: error: cannot open '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  for (;;) {
    size_t got;
    if (cap - len < 4096) {
      size_t ncap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, ncap);
      if (!nb) {
        fprintf(stderr, "gk: error: cannot read '%s': out of memory\n", path);
        goto fail;
      }
      buf = nb;
      cap = ncap;
    }
    got = fread(buf + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    fprintf(stderr, "gk: error: cannot read '%s': %s\n", path, strerror(errno));
    goto fail;
  }
  buf[len] = '\0';
  if (memchr(buf, '\0', len)) {
    fprintf(stderr, "gk: error: cannot read '%s': it contains a NUL byte (not a text file?)\n", path);
    goto fail;
  }
  if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))   /* a UTF-8 byte-order mark (Windows editors write one), as Python skips it */
    memmove(buf, buf + 3, len - 2);
  if (f != stdin) fclose(f);
  return buf;

fail:
  free(buf);
  if (f != stdin) fclose(f);
  return NULL;
}
