/*
** cli/cli.h -- what the parts of the gk command share.
**
** The command is three files: main.c reads the command line and opens the
** context, run.c runs source text (script files, -e text, standard input)
** and owns the SIGINT handling around evaluation, repl.c is the interactive
** loop on libedit.  The command reaches the library only through gk.h; it
** contains no language logic (what is complete, what a statement is, how a
** value prints: all of that is the library's).
*/
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stddef.h>
#include <stdio.h>
#include "gk.h"

/* Exit statuses of the command (docs/gk.1, "EXIT STATUS"). */
#define CLI_EXIT_OK        0   /* everything ran */
#define CLI_EXIT_ERROR     1   /* an error in the program, a file or the backend */
#define CLI_EXIT_USAGE     2   /* bad command line */
#define CLI_EXIT_INTERRUPT 130 /* a script stopped by Ctrl-C: 128 + SIGINT, as shells expect */

/* State shared by the runner and the REPL. */
typedef struct cli_state {
  gk_ctx *g;          /* the open context; never NULL once main has opened it */
  int timing;         /* 1: print each statement's wall time to stderr */
  int plan;           /* 1: the "plan" option is on (the REPL's :plan toggles it) */
  int cuda;           /* 1: the "cuda" option is on */
  int profile;        /* 1: the "profile" option is on (--profile, :profile) */
  int status;         /* 1: a statement running past 1 s shows a status line (stdout and stderr are terminals) */
  int digits;         /* print precision set by GK_DIGITS or :digits (0: the default, 6) */
  int out_nl;         /* 1 when the last byte written through the output hook was '\n' (or nothing was written) */
  int repl;           /* 1 inside the interactive loop: Ctrl-C never ends the process there */
} cli_state;

/* The gk_config.output hook: writes to stdout and tracks out_nl.  ud is the
** cli_state. */
void cli_output(void *ud, const char *text, size_t len);

/* Evaluates src once under diagnostic name `name`, with a SIGINT handler
** that calls gk_interrupt installed for the duration; with `sync`, also
** waits for every pending value (so that a time measured around the call
** means something).  On failure the diagnostic goes to stderr (after a
** newline on stdout if the output stopped mid-line).  Returns the gk status. */
int cli_eval(cli_state *st, const char *src, const char *name, int sync);

/* Hands st->plan and st->cuda to the library.  The CUDA source is printed
** as part of each kernel's plan, so "plan" is on whenever either flag is.
** Prints the library's message and returns its status when it refuses. */
int cli_apply_options(cli_state *st);

/* Runs `src` under diagnostic name `name`: output through the context's
** hook, a failure's message to stderr.  With st->timing set, the text is run
** one top-level statement group at a time (a line plus its continuation
** lines, as gk_is_complete decides) and each one's wall time, including a
** gk_sync, is printed to stderr as "NAME:LINE: time: 1.23 ms".  Stops at the
** first error.  Returns the gk status of the failure, or GK_OK.  Installs a
** SIGINT handler that calls gk_interrupt for the duration of the call. */
int cli_run(cli_state *st, const char *src, const char *name);

/* A profile's header (before a run) and totals (after it, from the
** counters p0 taken before): kernels, time in kernels, JIT time, bytes. */
void cli_profile_begin(cli_state *st, gk_progress *p0);
void cli_profile_end(cli_state *st, const gk_progress *p0, double wall_s);

/* Reads the whole of file `path` ("-" = standard input) into a malloc'd,
** NUL-terminated buffer.  On failure prints "gk: cannot open 'PATH': REASON"
** (or "cannot read") to stderr and returns NULL. */
char *cli_slurp(const char *path);

/* Monotonic clock in seconds. */
double cli_now(void);

/* Prints a wall time to stderr: "PREFIXtime: 1.23 ms" (seconds past 1 s). */
void cli_print_time(const char *prefix, double seconds);

/* Writes an error message from gk_errmsg to stderr, adding the final newline
** if the library left it off. */
void cli_print_error(const char *msg);

/* :help (arg empty), :help NAME / ?NAME (cli/help.c): from docs/help.txt,
** embedded at build time.  st may be NULL (no variables then). */
void cli_help(cli_state *st, const char *arg);

/* The readable path of doc file `file` (e.g. "language.md") where this
** binary finds it -- installed (BIN/../share/doc/gk/) or in its source tree
** (BIN/../docs/) -- or NULL.  Static storage. */
const char *cli_doc_path(const char *file);

/* "The language: PATH; the command: man gk." or, when the reference is not
** found, a line that says so. */
void cli_print_docs_line(FILE *f);

/* The long-statement status line (cli/status.c): begin/end around each
** evaluation (begin does nothing unless st->status); pause erases the line
** before output is written; compile folds the compile hook's note into the
** line and returns 1 while a statement is being watched (0: print it). */
void cli_status_begin(cli_state *st);
void cli_status_end(void);
void cli_status_pause(void);
int cli_status_compile(int done, const char *kernel);

/* The interactive loop; returns the command's exit status.  Called by main
** when standard input is a terminal and no script was named. */
int cli_repl(cli_state *st);

#endif /* CLI_CLI_H */
