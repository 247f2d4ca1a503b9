/*
** runtime/cu_nvrtc.c -- compiling CUDA C with NVRTC.
**
** One function does the work for both users: cu_kernel (a device is open)
** and cu_nvrtc_compile (no driver, no device: `make test-nvrtc` compiles
** every generated kernel for sm_90 on a machine without a GPU).  The gk
** kernel headers (build/kernels_embed.c) are handed to NVRTC in memory, so
** sources #include them by name and no -I path exists.
*/
#define CU_INTERNAL
#include "cu.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ARCH_OPT_MAX 64   /* "--gpu-architecture=compute_XYZ" fits */

static char *dup_text(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = (char *)malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* NVRTC's front end installs a SIGINT handler of its own while it parses
** (putting the old one back after), and that handler ends the process with
** status 4: a Ctrl-C in that window killed the REPL and every variable (and
** would end any host program).  The compiling thread -- and the watchdog it
** starts, which inherits the mask -- blocks SIGINT meanwhile, so a press
** stays pending and reaches the host's own handler when the compile
** returns; gk's other threads block it for good (host_par.c, cli/status.c),
** so no thread of the gk command can take it in the window. */
static void sigint_block(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  pthread_sigmask(SIG_BLOCK, &s, old);
}

static void sigint_unblock(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

/* Formats a malloc'd message into *log when log is not NULL. */
static void set_log(char **log, const char *fmt, const char *a, const char *b) {
  char buf[1200];
  if (!log) return;
  snprintf(buf, sizeof buf, fmt, a, b);
  free(*log);
  *log = dup_text(buf);
}

/* GK_NVRTC_OPTS: extra NVRTC options, blank-separated (at most
** CU_NVRTC_ENV_MAX, each shorter than 128 bytes; longer ones are dropped) --
** for timing experiments such as "-Xptxas=-O1" against the default.  Part of
** the cache key (cu_key_seed), but for the options that leave NVRTC's output
** as it is (cu_nvrtc_opt_neutral). */
#define CU_NVRTC_ENV_MAX 8
const char *cu_nvrtc_env_opts(void) {
  const char *e = getenv("GK_NVRTC_OPTS");
  return e && e[0] ? e : NULL;
}
int cu_nvrtc_opt_neutral(const char *opt, size_t n) {
  /* NVRTC's own compile cache (CUDA >= 12.9) off: the same binary, compiled */
  static const char *const neutral[] = { "--no-cache", "-no-cache" };
  for (size_t i = 0; i < sizeof neutral / sizeof neutral[0]; i++)
    if (strlen(neutral[i]) == n && !memcmp(neutral[i], opt, n)) return 1;
  return 0;
}

static int env_opts(char buf[CU_NVRTC_ENV_MAX][128], const char **opts) {
  const char *e = cu_nvrtc_env_opts();
  int n = 0;
  while (e && *e && n < CU_NVRTC_ENV_MAX) {
    size_t k;
    while (*e == ' ') e++;
    k = strcspn(e, " ");
    if (k > 0 && k < 128) {
      memcpy(buf[n], e, k);
      buf[n][k] = 0;
      opts[n] = buf[n];
      n++;
    }
    e += k;
  }
  return n;
}

int cu_nvrtc_lib_version(void) {
  int major = 0, minor = 0;
  char why[256];
  if (cu_load_nvrtc(why, sizeof why) || CU_CALL0(rtc, nvrtcVersion, &major, &minor)) return 0;
  return 1000 * major + 10 * minor;
}

int cu_nvrtc_build(const char *src, const char *name, const char *arch, int debug,
                   char **bin, size_t *len, char **log, double *ms) {
  static const char *const extra[] = { CU_NVRTC_OPTIONS };
  enum { NEXTRA = sizeof extra / sizeof extra[0] };
  const char *opts[NEXTRA + 1 + CU_NVRTC_ENV_MAX];
  char envbuf[CU_NVRTC_ENV_MAX][128];
  char archopt[ARCH_OPT_MAX], why[1024], st[128], prog_name[256];
  int nopt;
  nvrtcProgram prog = NULL;
  char *out = NULL, *text = NULL;
  size_t n = 0, logn = 0;
  int ptx, rc = GK_EDEVICE, r;
  double t0 = cu_now();

  *bin = NULL;
  *len = 0;
  if (log) *log = NULL;
  if (ms) *ms = 0;
  if (!src || !name || !arch) {
    set_log(log, "cu_nvrtc_compile: NULL %s%s", !src ? "source" : !name ? "name" : "arch", "");
    return GK_EMISUSE;
  }
  if (cu_load_nvrtc(why, sizeof why)) {
    set_log(log, "%s%s", why, "");
    return GK_EDEVICE;
  }
  ptx = strncmp(arch, "compute_", 8) == 0;
  if (snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch) >= (int)sizeof archopt) {
    set_log(log, "bad architecture '%s'%s", arch, "");
    return GK_EMISUSE;
  }
  snprintf(prog_name, sizeof prog_name, "%s.cu", name);
  opts[0] = archopt;
  for (int i = 0; i < NEXTRA; i++) opts[i + 1] = extra[i];
  nopt = NEXTRA + 1 + env_opts(envbuf, opts + NEXTRA + 1);

  r = CU_CALL0(rtc, nvrtcCreateProgram, &prog, src, prog_name, gk_kernel_header_count,
               gk_kernel_header_srcs, gk_kernel_header_names);
  if (r != 0) {
    cu_status_text(CU_LIB_rtc, r, st, sizeof st);
    set_log(log, "nvrtcCreateProgram failed: %s%s", st, "");
    return r == 1 ? GK_ENOMEM : GK_EDEVICE;  /* NVRTC_ERROR_OUT_OF_MEMORY = 1 */
  }
  sigset_t mask;
  sigint_block(&mask);
  r = CU_CALL0(rtc, nvrtcCompileProgram, prog, nopt, opts);
  sigint_unblock(&mask);

  /* The log, on success too (warnings). */
  if (CU_CALL0(rtc, nvrtcGetProgramLogSize, prog, &logn) == 0 && logn > 0) {
    text = (char *)malloc(logn + 1);
    if (text && CU_CALL0(rtc, nvrtcGetProgramLog, prog, text) == 0) text[logn] = 0;
    else if (text) text[0] = 0;
  }
  if (debug & CU_DEBUG_SRC)
    fprintf(stderr, "gk: NVRTC %s %s:\n%s\n-- NVRTC log:\n%s\n", name, archopt, src,
            text && text[0] ? text : "(empty)");
  if (r != 0) {
    if (r == NVRTC_ERROR_COMPILATION) {
      rc = GK_EJIT;
      if (log) {
        *log = text ? text : dup_text("(no log)");
        text = NULL;
      }
    } else {
      cu_status_text(CU_LIB_rtc, r, st, sizeof st);
      set_log(log, "nvrtcCompileProgram failed: %s%s", st, "");
      rc = GK_EDEVICE;
    }
    goto done;
  }
  r = ptx ? CU_CALL0(rtc, nvrtcGetPTXSize, prog, &n)
          : CU_CALL0(rtc, nvrtcGetCUBINSize, prog, &n);
  if (r == 0) {
    out = (char *)malloc(n ? n : 1);
    if (!out) {
      set_log(log, "out of host memory for a %s%s", ptx ? "PTX" : "CUBIN", "");
      rc = GK_ENOMEM;
      goto done;
    }
    r = ptx ? CU_CALL0(rtc, nvrtcGetPTX, prog, out)
            : CU_CALL0(rtc, nvrtcGetCUBIN, prog, out);
  }
  if (r != 0) {
    cu_status_text(CU_LIB_rtc, r, st, sizeof st);
    set_log(log, "nvrtcGet%s failed: %s", ptx ? "PTX" : "CUBIN", st);
    free(out);
    out = NULL;
    rc = GK_EDEVICE;
    goto done;
  }
  *bin = out;
  *len = n;
  if (log) {
    *log = text ? text : dup_text("");
    text = NULL;
  }
  rc = GK_OK;
done:
  free(text);
  CU_CALL0(rtc, nvrtcDestroyProgram, &prog);
  if (ms) *ms = (cu_now() - t0) * 1e3;
  return rc;
}

/* A watchdog beside one NVRTC compile: after CU_SLOW_MS it tells the hook
** (from its own thread) that the compile is still running; when the
** compile ends, the hook hears that it is done (only after a notice). */
#define CU_SLOW_MS 500
typedef struct watch {
  cu_note_fn note;
  void *ud;
  const char *name;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done, noticed, running;
} watch;

static void *watch_main(void *arg) {
  watch *w = (watch *)arg;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_nsec += (long)CU_SLOW_MS * 1000000L;
  t.tv_sec += t.tv_nsec / 1000000000L;
  t.tv_nsec %= 1000000000L;
  pthread_mutex_lock(&w->mu);
  while (!w->done)
    if (pthread_cond_timedwait(&w->cv, &w->mu, &t) == ETIMEDOUT) break;
  int fire = !w->done;
  if (fire) w->noticed = 1;
  pthread_mutex_unlock(&w->mu);
  if (fire) w->note(w->ud, 0, w->name, (double)CU_SLOW_MS);
  return NULL;
}

static void watch_start(watch *w, cu_note_fn note, void *ud, const char *name) {
  memset(w, 0, sizeof *w);
  if (!note) return;
  w->note = note; w->ud = ud; w->name = name;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  sigset_t mask;
  sigint_block(&mask);   /* the watchdog never takes a SIGINT */
  w->running = pthread_create(&w->th, NULL, watch_main, w) == 0;
  sigint_unblock(&mask);
  if (!w->running) { pthread_mutex_destroy(&w->mu); pthread_cond_destroy(&w->cv); }
}

static void watch_stop(watch *w, double ms) {
  if (!w->running) return;
  pthread_mutex_lock(&w->mu);
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  if (w->noticed) w->note(w->ud, 1, w->name, ms);
}

int cu_nvrtc_build_noted(const char *src, const char *name, const char *arch, int debug, cu_note_fn note,
                         void *ud, char **bin, size_t *len, char **log, double *ms) {
  watch w;
  double t = 0;
  watch_start(&w, note, ud, name);
  int rc = cu_nvrtc_build(src, name, arch, debug < 0 ? cu_debug_flags() : debug, bin, len, log, &t);
  watch_stop(&w, t);
  if (ms) *ms = t;
  return rc;
}

int cu_nvrtc_compile(const char *src, const char *name, const char *arch, char **bin,
                     size_t *len, char **log) {
  return cu_nvrtc_build(src, name, arch, cu_debug_flags(), bin, len, log, NULL);
}
