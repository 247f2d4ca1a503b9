/*
** cli/status.c -- the one-line status of a long statement.
**
** When standard output and standard error are both terminals, cli_eval
** starts a watcher thread beside each evaluation.  After CLI_STATUS_AFTER
** seconds it writes, to stderr, every CLI_STATUS_EVERY seconds,
**
**   gk: running 2.4 s · kernels 3/7 · compiling reduce
**
** (elapsed time, kernels finished / planned from gk_get_progress -- the one
** gk call that may run beside an evaluation -- and the kernel being
** compiled when the compile hook or the progress counters say one is), on
** one line that is rewritten in place and erased when the statement ends.
** Nothing is shown for scripts whose output goes to a file or a pipe, and
** nothing exists of it in the library.
**
** Output and the status line never mix: the output hook (cli_output) and
** the compile hook call cli_status_pause first, which erases the line under
** the same lock the watcher writes it with; the watcher draws it again at
** its next tick.  The compile hook's own "compiling a new kernel" note
** (cli/main.c) is folded into this line while the watcher runs, so the two
** never print over each other.
*/
#include "cli/cli.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLI_STATUS_AFTER 1.0   /* seconds before the status line appears */
#define CLI_STATUS_EVERY 0.25  /* seconds between updates */

static pthread_mutex_t status_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t status_cv = PTHREAD_COND_INITIALIZER;

static struct {
  pthread_t th;
  int running;         /* a watcher thread exists */
  int stop;            /* the statement ended */
  int shown;           /* the line is on the screen now */
  double t0;           /* when the statement began */
  gk_ctx *g;
  int64_t k0;          /* kernels run before the statement */
  char compiling[64];  /* kernel the compile hook said is compiling, or "" */
} S;

/* Erases the line; status_mu held. */
static void erase_locked(void) {
  if (S.shown) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
    S.shown = 0;
  }
}

void cli_status_pause(void) {
  if (!S.running) return;
  pthread_mutex_lock(&status_mu);
  erase_locked();
  pthread_mutex_unlock(&status_mu);
}

int cli_status_compile(int done, const char *kernel) {
  int mine;
  pthread_mutex_lock(&status_mu);
  mine = S.running;
  if (mine) snprintf(S.compiling, sizeof S.compiling, "%s", done ? "" : kernel ? kernel : "a kernel");
  pthread_mutex_unlock(&status_mu);
  return mine;
}

static void *watch(void *arg) {
  struct timespec ts;
  double first = CLI_STATUS_AFTER;
  (void)arg;
  pthread_mutex_lock(&status_mu);
  while (!S.stop) {
    double wait = S.shown ? CLI_STATUS_EVERY : first;
    int rc = 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)((wait - (long)wait) * 1e9);
    ts.tv_sec += (time_t)wait + ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    while (!S.stop && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&status_cv, &status_mu, &ts);
    if (S.stop) break;
    {
      gk_progress p;
      char line[160];
      int n;
      gk_get_progress(S.g, &p);
      n = snprintf(line, sizeof line, "gk: running %.1f s \xc2\xb7 kernels %lld/%lld", cli_now() - S.t0,
                   (long long)(p.kernels - S.k0), (long long)(p.planned - S.k0));
      if (S.compiling[0]) snprintf(line + n, sizeof line - (size_t)n, " \xc2\xb7 compiling %s", S.compiling);
      else if (p.jit) snprintf(line + n, sizeof line - (size_t)n, " \xc2\xb7 lowering a kernel");
      fprintf(stderr, "\r\033[K%s", line);
      fflush(stderr);
      S.shown = 1;
    }
  }
  erase_locked();
  pthread_mutex_unlock(&status_mu);
  return NULL;
}

void cli_status_begin(cli_state *st) {
  gk_progress p;
  if (!st->status || S.running) return;
  gk_get_progress(st->g, &p);
  pthread_mutex_lock(&status_mu);
  S.stop = 0;
  S.shown = 0;
  S.g = st->g;
  S.k0 = p.kernels;
  S.t0 = cli_now();
  S.compiling[0] = '\0';
  sigset_t block, old;   /* the status thread never takes SIGINT (runtime/cu_nvrtc.c says why) */
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  S.running = pthread_create(&S.th, NULL, watch, NULL) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_mutex_unlock(&status_mu);
}

void cli_status_end(void) {
  if (!S.running) return;
  pthread_mutex_lock(&status_mu);
  S.stop = 1;
  pthread_cond_signal(&status_cv);
  pthread_mutex_unlock(&status_mu);
  pthread_join(S.th, NULL);
  pthread_mutex_lock(&status_mu);
  S.running = 0;
  pthread_mutex_unlock(&status_mu);
}
