/*
** runtime/cu_dev.c -- an open CUDA device: errors, the stream, copies,
** launches, the caching allocator, the kernel cache and cuBLAS gemm.
**
** A cu_dev retains the primary context of its device (so that cuBLAS, which
** uses the runtime API, sees the same context, and so that several cu_devs
** in one process share it) and owns one non-blocking stream on which every
** copy, memset, launch and gemm is enqueued.  Each entry point makes the
** context current on the calling thread first, so a cu_dev may move between
** threads (one at a time).
**
** Errors.  Every library call is written CU_CALL(d, lib, fn, args...) (cu.h);
** cu_check records the call, the place and the library's message.  A sticky
** driver error marks the device dead, and from then on every entry point
** fails fast with the message naming the first error.
**
** Allocator.  Requests are rounded to a size class; freed blocks go to a
** per-class cache (small classes: a stack per power of two; large: one list,
** best fit up to 1/CU_ALLOC_LARGE_SLACK larger).  Live blocks are found by
** address in an open-addressing table.  When the driver runs out of memory
** the cache is emptied and the allocation retried once.
**
** Kernel cache, memory level.  An open-addressing table of cu_fn pointers
** keyed by the 64-bit key hash; a hit also compares the source text and the
** name, so a hash collision cannot hand back the wrong kernel.  The hit path
** allocates nothing and formats nothing.
*/
#define CU_INTERNAL
#include "cu.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ERR_MAX      1024            /* inline error text; longer ones are malloc'd */
#define DESC_MAX     (2 * CU_PATH_MAX + 512)  /* cu_describe's line: the two cache paths and the rest */
#define NAME_MAX_DEV 128             /* device name from the driver */
#define SMEM_DEFAULT (48u << 10)     /* dynamic shared memory usable without opt-in */
#define NBINS        13              /* power-of-two classes 2^8 .. 2^20 */
#define KTAB_MIN     64              /* first size of the kernel table */
#define LIVE_MIN     256             /* first size of the live-block table */
#define PIN_BYTES    (64u << 10)     /* downloads up to this size go through page-locked memory */

typedef struct stack { cu_ptr *v; size_t n, cap; } stack;   /* cached blocks of one class */
typedef struct blk { cu_ptr p; size_t size; } blk;          /* p == 0: empty slot */

struct cu_fn {
  uint64_t hash;       /* key hash */
  size_t srclen;       /* strlen(src) */
  char *src;           /* copy of the source text */
  char *name;          /* kernel name */
  CUmodule mod;        /* module holding it (one per source) */
  int borrowed;        /* mod is another kernel's of the same source (a sort's passes): not unloaded with this one */
  CUfunction f;
  unsigned smem;       /* dynamic shared memory opted in so far */
  int static_smem;     /* the kernel's static shared memory (-1: not asked yet) */
  int cluster;         /* blocks a cluster its text fixes (__cluster_dims__; 0 none, -1 not asked yet) */
  unsigned occ_block, occ_smem;   /* the launch shape max_clusters was asked for */
  unsigned max_clusters;          /* clusters of that shape resident at once (0: not known) */
  unsigned coop_block, coop_smem; /* the launch shape coop_per_sm was asked for (cu_launch_coop) */
  int coop_per_sm;                /* blocks of that shape an SM holds at once (0: none, or no cooperative launch) */
};

struct cu_dev {
  int ordinal;                 /* among the visible devices */
  CUdevice dev;
  CUcontext ctx;               /* the retained primary context; NULL before retain */
  CUstream stream;
  int arch;                    /* 10*major + minor */
  int sm_count;
  int nvrtc;                   /* 1000*major + 10*minor */
  size_t max_smem;             /* opt-in maximum per block */
  int coop;                    /* the device takes cooperative launches (and the driver has the entry points) */
  size_t total_mem;
  char arch_opt[32];           /* what NVRTC compiles for: "sm_90" or "compute_90" */
  uint32_t kind;               /* 0 CUBIN, 1 PTX */
  char name[NAME_MAX_DEV];
  char desc[DESC_MAX];
  uint64_t seed;               /* key seed: format, NVRTC, options, arch, headers */
  int debug;                   /* CU_DEBUG_* */
  int disk;                    /* 1 when cache_dir is usable */
  char cache_dir[CU_PATH_MAX];
  int ship;                    /* 1 when ship_dir (the shipped kernels) exists */
  char ship_dir[CU_PATH_MAX];
  void *pin;                   /* page-locked staging for small downloads (PIN_BYTES), or NULL */
  int pin_tried;               /* its allocation was asked for (once) */
  /* mapped pool (cu_alloc_mapped): CU_MAPPED_SLOTS blocks of CU_MAPPED_MAX */
  char *mhost;                 /* its host address, or NULL */
  cu_ptr mdev;                 /* its device address */
  int mtried;                  /* its allocation was asked for (once) */
  unsigned nmfree;
  uint16_t mfree[CU_MAPPED_SLOTS];  /* free block numbers (a stack) */
  unsigned mseq[CU_MAPPED_SLOTS];   /* per block: the completion number that marks it written, or 0 (cu_done_mark) */
  unsigned dseq;                    /* the last completion number handed out (cu_done_next) */
  int nodone;                       /* GK_CU_DONE=0: no completion flags */
  cu_cstats cs;                /* driver call counters */
  int idle;                    /* nothing was enqueued since the last successful wait */
  int timing;                  /* GK_CU_STATS: time the launches and waits */
  int dead;                    /* a sticky error happened */
  char dead_what[ERR_MAX];     /* the first sticky error */
  char err[ERR_MAX];           /* the last error */
  char *errlong;               /* the last error when longer than err */
  /* allocator */
  stack bins[NBINS];
  blk *large;                  /* cached blocks above CU_ALLOC_SMALL_MAX */
  size_t nlarge, caplarge;
  blk *live;                   /* open addressing by address */
  size_t livecap, nlive;
  size_t in_use, cached;       /* bytes */
  /* kernels */
  cu_fn **ktab;                /* open addressing by key hash */
  size_t kcap, kn;
  cu_kstats ks;
  /* cuBLAS */
  cublasHandle_t blas;
  int blas_mode;               /* math mode last set; -1 unknown */
  /* slow-compile notices (cu_set_compile_hook) */
  void (*note)(void *ud, int done, const char *kernel, double ms);
  void *note_ud;
};

void cu_set_compile_hook(cu_dev *d, void (*fn)(void *ud, int done, const char *kernel, double ms), void *ud) {
  d->note = fn;
  d->note_ud = ud;
}

/* ---------------------------------------------------------------- errors */

static int vfail(cu_dev *d, int status, const char *fmt, va_list ap) {
  va_list ap2;
  int n;
  va_copy(ap2, ap);
  free(d->errlong);
  d->errlong = NULL;
  n = vsnprintf(d->err, sizeof d->err, fmt, ap);
  if (n >= (int)sizeof d->err) {
    d->errlong = (char *)malloc((size_t)n + 1);
    if (d->errlong) vsnprintf(d->errlong, (size_t)n + 1, fmt, ap2);
  }
  va_end(ap2);
  return status;
}

int cu_fail(cu_dev *d, int status, const char *fmt, ...) {
  va_list ap;
  if (!d) return status;
  va_start(ap, fmt);
  vfail(d, status, fmt, ap);
  va_end(ap);
  return status;
}

static const char dead_fmt[] =
    "the CUDA device is in an unrecoverable state after %s; restart gk";

int cu_check(cu_dev *d, int lib, int rc, const char *call, const char *file, int line) {
  char st[256];
  if (d) d->cs.calls++;
  if (rc == 0 || !d) return rc;
  cu_status_text(lib, rc, st, sizeof st);
  if (lib == CU_LIB_drv && cu_sticky(rc)) {
    if (!d->dead) {
      d->dead = 1;
      snprintf(d->dead_what, sizeof d->dead_what, "%s failed at %s:%d: %s", call, file, line, st);
    }
    cu_fail(d, GK_EDEVICE, dead_fmt, d->dead_what);
  } else {
    cu_fail(d, GK_EDEVICE, "%s failed at %s:%d: %s", call, file, line, st);
  }
  return rc;
}

/* The status for a failed driver result rc. */
static int status_of(int rc) {
  return rc == 0 ? GK_OK : rc == CUDA_ERROR_OUT_OF_MEMORY ? GK_ENOMEM : GK_EDEVICE;
}

static int fail_dead(cu_dev *d) { return cu_fail(d, GK_EDEVICE, dead_fmt, d->dead_what); }

/* Makes d's context current on this thread; fails fast when d is dead. */
static int enter(cu_dev *d) {
  CUcontext cur = NULL;
  if (d->dead) return fail_dead(d);
  if (CU_CALL(d, drv, cuCtxGetCurrent, &cur)) return GK_EDEVICE;
  if (cur != d->ctx && CU_CALL(d, drv, cuCtxSetCurrent, d->ctx)) return GK_EDEVICE;
  return GK_OK;
}

const char *cu_errmsg(cu_dev *d) {
  if (!d) return "no CUDA device";
  return d->errlong ? d->errlong : d->err;
}

int cu_dead(cu_dev *d) { return d ? d->dead : 1; }

/* Writes a human size such as "1.5 GiB" into buf. */
static const char *human(char *buf, size_t len, size_t bytes) {
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    u++;
  }
  if (u == 0) snprintf(buf, len, "%zu B", bytes);
  else snprintf(buf, len, "%.1f %s", v, unit[u]);
  return buf;
}

/* ------------------------------------------------------- open and close */

static void no_device(char *why, size_t len) {
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  if (vis) snprintf(why, len, "no CUDA device (CUDA_VISIBLE_DEVICES=%s)", vis);
  else snprintf(why, len, "no CUDA device");
}

/* Loads the driver and counts the visible devices.  0 and *count > 0, or -1
** with the reason in why. */
static int probe(int *count, char *why, size_t len) {
  char st[256];
  int rc;
  *count = 0;
  if (cu_load_driver(why, len)) return -1;
  rc = CU_CALL(NULL, drv, cuInit, 0);
  if (rc == CUDA_ERROR_NO_DEVICE) {
    no_device(why, len);
    return -1;
  }
  if (rc) {
    cu_status_text(CU_LIB_drv, rc, st, sizeof st);
    snprintf(why, len, "cuInit failed: %s", st);
    return -1;
  }
  rc = CU_CALL(NULL, drv, cuDeviceGetCount, count);
  if (rc) {
    cu_status_text(CU_LIB_drv, rc, st, sizeof st);
    snprintf(why, len, "cuDeviceGetCount failed: %s", st);
    return -1;
  }
  if (*count <= 0) {
    no_device(why, len);
    return -1;
  }
  return 0;
}

int cu_available(char *why, size_t len) {
  char buf[ERR_MAX];
  int count;
  if (probe(&count, buf, sizeof buf)) {
    if (why && len) snprintf(why, len, "%s", buf);
    return 0;
  }
  if (why && len) why[0] = 0;
  return 1;
}

/* Chooses what NVRTC compiles for: sm_XY when NVRTC supports the device,
** else PTX for the newest compute_XY it supports below the device (the
** driver then JIT-compiles it). */
static void pick_arch(cu_dev *d) {
  enum { MAX_ARCHS = 64 };
  int n = 0, archs[MAX_ARCHS], best = 0, found = 0;
  d->kind = 0;
  snprintf(d->arch_opt, sizeof d->arch_opt, "sm_%d", d->arch);
  if (CU_CALL(NULL, rtc, nvrtcGetNumSupportedArchs, &n) || n <= 0 || n > MAX_ARCHS) return;
  if (CU_CALL(NULL, rtc, nvrtcGetSupportedArchs, archs)) return;
  for (int i = 0; i < n; i++) {
    if (archs[i] == d->arch) found = 1;
    if (archs[i] <= d->arch && archs[i] > best) best = archs[i];
  }
  if (found || best == 0) return;
  d->kind = 1;
  snprintf(d->arch_opt, sizeof d->arch_opt, "compute_%d", best);
}


/* GK_CU_SCHED=spin|yield|block|auto: how the host waits for the device
** (cuCtxSetFlags on the primary context, which the whole process shares; a
** measuring switch, unset = the driver's choice).  Ignored when the driver
** lacks cuCtxSetFlags or refuses. */
static void set_sched(cu_dev *d) {
  const char *v = getenv("GK_CU_SCHED");
  unsigned f;
  if (!v || !*v || !cu_drv.cuCtxSetFlags) return;
  if (!strcmp(v, "spin")) f = CU_CTX_SCHED_SPIN;
  else if (!strcmp(v, "yield")) f = CU_CTX_SCHED_YIELD;
  else if (!strcmp(v, "block")) f = CU_CTX_SCHED_BLOCKING_SYNC;
  else if (!strcmp(v, "auto")) f = CU_CTX_SCHED_AUTO;
  else return;
  if (CU_CALL(d, drv, cuCtxSetFlags, f)) d->err[0] = 0;
}

int cu_open(cu_dev **out, char *err, size_t errlen) {
  char why[ERR_MAX], sz[32];
  const char *env;
  cu_dev *d = NULL;
  int count = 0, ordinal = 0, v, major = 0, minor = 0;
  size_t total = 0;

  if (!out) return GK_EMISUSE;
  *out = NULL;
  if (probe(&count, why, sizeof why)) goto fail_why;
  env = getenv("GK_DEVICE");
  if (env && *env) {
    char *end;
    long o;
    errno = 0;
    o = strtol(env, &end, 10);
    if (errno || *end || o < 0 || o >= count) {
      snprintf(why, sizeof why,
               "GK_DEVICE=%s is not a device ordinal: %d CUDA device%s visible (0..%d)", env,
               count, count == 1 ? " is" : "s are", count - 1);
      goto fail_why;
    }
    ordinal = (int)o;
  }
  if (cu_load_nvrtc(why, sizeof why)) goto fail_why;

  d = (cu_dev *)calloc(1, sizeof *d);
  if (!d) {
    snprintf(why, sizeof why, "out of host memory opening the CUDA device");
    if (err && errlen) snprintf(err, errlen, "%s", why);
    return GK_ENOMEM;
  }
  d->ordinal = ordinal;
  d->blas_mode = -1;
  d->debug = cu_debug_flags();
  env = getenv("GK_CU_STATS");
  d->timing = env && *env && strcmp(env, "0");
  env = getenv("GK_CU_DONE");   /* GK_CU_DONE=0: wait for mapped results by the stream (cu_done_next) */
  d->nodone = env && !strcmp(env, "0");
  if (CU_CALL(d, drv, cuDeviceGet, &d->dev, ordinal)) goto fail;
  if (CU_CALL(d, drv, cuDeviceGetName, d->name, (int)sizeof d->name, d->dev)) goto fail;
  if (CU_CALL(d, drv, cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
              d->dev) ||
      CU_CALL(d, drv, cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
              d->dev) ||
      CU_CALL(d, drv, cuDeviceGetAttribute, &d->sm_count,
              CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev) ||
      CU_CALL(d, drv, cuDeviceTotalMem_v2, &total, d->dev))
    goto fail;
  d->arch = 10 * major + minor;
  d->total_mem = total;
  if (CU_CALL(d, drv, cuDeviceGetAttribute, &v,
              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d->dev) || v <= 0) {
    if (CU_CALL(d, drv, cuDeviceGetAttribute, &v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                d->dev))
      goto fail;
  }
  d->max_smem = (size_t)v;
  v = 0;
  if (cu_drv.cuLaunchCooperativeKernel && cu_drv.cuOccupancyMaxActiveBlocksPerMultiprocessor &&
      CU_CALL(d, drv, cuDeviceGetAttribute, &v, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, d->dev))
    v = 0;
  d->err[0] = 0;
  d->coop = v > 0;
  if (CU_CALL(d, drv, cuDevicePrimaryCtxRetain, &d->ctx, d->dev)) {
    d->ctx = NULL;
    goto fail;
  }
  if (CU_CALL(d, drv, cuCtxSetCurrent, d->ctx)) goto fail;
  set_sched(d);
  if (CU_CALL(d, drv, cuStreamCreate, &d->stream, CU_STREAM_NON_BLOCKING)) {
    d->stream = NULL;
    goto fail;
  }
  if (CU_CALL(d, rtc, nvrtcVersion, &major, &minor)) goto fail;
  d->nvrtc = 1000 * major + 10 * minor;
  pick_arch(d);
  d->seed = cu_key_seed(d->nvrtc, d->arch_opt);
  d->disk = cu_cache_dir(d->cache_dir, sizeof d->cache_dir);
  d->ship = cu_ship_dir(d->ship_dir, sizeof d->ship_dir);
  snprintf(d->desc, sizeof d->desc,
           "%s (sm_%d, %d SMs, %s, device %d), NVRTC %d.%d -> %s, kernel cache %s%s%s", d->name,
           d->arch, d->sm_count, human(sz, sizeof sz, d->total_mem), d->ordinal,
           d->nvrtc / 1000, d->nvrtc % 1000 / 10, d->arch_opt,
           d->disk ? d->cache_dir : "in memory only", d->ship ? ", shipped kernels " : "", d->ship_dir);
  d->err[0] = 0;
  *out = d;
  return GK_OK;

fail:
  snprintf(why, sizeof why, "%s", cu_errmsg(d));
  cu_close(d);
fail_why:
  if (err && errlen) snprintf(err, errlen, "%s", why);
  return GK_EDEVICE;
}

/* Makes d's context current without the dead check (for cleanup). */
static void bind(cu_dev *d) {
  CUcontext cur = NULL;
  if (!d->ctx) return;
  if (CU_CALL(d, drv, cuCtxGetCurrent, &cur) != 0 || cur != d->ctx)
    CU_CALL(d, drv, cuCtxSetCurrent, d->ctx);
}

void cu_close(cu_dev *d) {
  if (!d) return;
  if (d->ctx) {
    bind(d);
    if (d->stream && !d->dead) CU_CALL(d, drv, cuStreamSynchronize, d->stream);
    cu_trim(d);
    for (size_t i = 0; i < d->livecap; i++)
      if (d->live[i].p) CU_CALL(d, drv, cuMemFree_v2, d->live[i].p);
  }
  for (size_t i = 0; i < d->kcap; i++) {
    cu_fn *f = d->ktab[i];
    if (!f) continue;
    if (f->mod && !f->borrowed && d->ctx) CU_CALL(d, drv, cuModuleUnload, f->mod);
    free(f->src);
    free(f->name);
    free(f);
  }
  if (d->blas) CU_CALL(d, blas, cublasDestroy_v2, d->blas);
  if (d->stream) CU_CALL(d, drv, cuStreamDestroy_v2, d->stream);
  if (d->pin && d->ctx) CU_CALL(d, drv, cuMemFreeHost, d->pin);
  if (d->mhost && d->ctx) CU_CALL(d, drv, cuMemFreeHost, d->mhost);
  if (d->ctx) CU_CALL(d, drv, cuDevicePrimaryCtxRelease_v2, d->dev);
  for (int i = 0; i < NBINS; i++) free(d->bins[i].v);
  free(d->large);
  free(d->live);
  free(d->ktab);
  free(d->errlong);
  free(d);
}

/* ------------------------------------------------------------ attributes */

int cu_sm_count(cu_dev *d) { return d->sm_count; }
int cu_ordinal(cu_dev *d) { return d->ordinal; }
int cu_arch(cu_dev *d) { return d->arch; }
size_t cu_max_smem(cu_dev *d) { return d->max_smem; }
size_t cu_total_mem(cu_dev *d) { return d->total_mem; }
int cu_nvrtc_version(cu_dev *d) { return d->nvrtc; }
const char *cu_describe(cu_dev *d) { return d->desc; }

/* ------------------------------------------------------------- allocator */

/* The size class of a request; 0 when it cannot be represented. */
static size_t size_class(size_t bytes) {
  size_t r = CU_ALLOC_MIN;
  if (bytes <= CU_ALLOC_SMALL_MAX) {
    while (r < bytes) r <<= 1;
    return r;
  }
  if (bytes > SIZE_MAX - CU_ALLOC_LARGE_GRAIN) return 0;
  return (bytes + CU_ALLOC_LARGE_GRAIN - 1) / CU_ALLOC_LARGE_GRAIN * CU_ALLOC_LARGE_GRAIN;
}

static int bin_of(size_t cls) {
  int b = 0;
  while (((size_t)CU_ALLOC_MIN << b) < cls) b++;
  return b;
}

static size_t live_slot(cu_dev *d, cu_ptr p) {
  uint64_t h = (uint64_t)(p >> 8) * 0x9E3779B97F4A7C15ULL;
  return (size_t)(h ^ (h >> 31)) & (d->livecap - 1);
}

/* Records live block (p, size); -1 when out of host memory. */
static int live_put(cu_dev *d, cu_ptr p, size_t size) {
  if ((d->nlive + 1) * 2 > d->livecap) {
    size_t ncap = d->livecap ? d->livecap * 2 : LIVE_MIN, ocap = d->livecap;
    blk *old = d->live, *nv = (blk *)calloc(ncap, sizeof *nv);
    if (!nv) return -1;
    d->live = nv;
    d->livecap = ncap;
    for (size_t i = 0; i < ocap; i++) {
      if (!old[i].p) continue;
      size_t j = live_slot(d, old[i].p);
      while (nv[j].p) j = (j + 1) & (ncap - 1);
      nv[j] = old[i];
    }
    free(old);
  }
  size_t j = live_slot(d, p);
  while (d->live[j].p) j = (j + 1) & (d->livecap - 1);
  d->live[j].p = p;
  d->live[j].size = size;
  d->nlive++;
  return 0;
}

/* Removes live block p; returns its size, 0 when p is not live. */
static size_t live_take(cu_dev *d, cu_ptr p) {
  size_t mask = d->livecap - 1, i, j, size;
  if (!d->livecap) return 0;
  i = live_slot(d, p);
  while (d->live[i].p && d->live[i].p != p) i = (i + 1) & mask;
  if (!d->live[i].p) return 0;
  size = d->live[i].size;
  /* Backward-shift deletion keeps every probe chain unbroken. */
  for (j = (i + 1) & mask; d->live[j].p; j = (j + 1) & mask) {
    size_t k = live_slot(d, d->live[j].p);
    if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
      d->live[i] = d->live[j];
      i = j;
    }
  }
  d->live[i].p = 0;
  d->live[i].size = 0;
  d->nlive--;
  return size;
}

/* Takes a cached block of class cls; 0 when none fits. */
static cu_ptr cache_take(cu_dev *d, size_t cls, size_t *size) {
  if (cls <= CU_ALLOC_SMALL_MAX) {
    stack *s = &d->bins[bin_of(cls)];
    if (!s->n) return 0;
    *size = cls;
    d->cached -= cls;
    return s->v[--s->n];
  }
  size_t best = SIZE_MAX, bi = 0, limit = cls + cls / CU_ALLOC_LARGE_SLACK;
  for (size_t i = 0; i < d->nlarge; i++) {
    if (d->large[i].size >= cls && d->large[i].size <= limit && d->large[i].size < best) {
      best = d->large[i].size;
      bi = i;
    }
  }
  if (best == SIZE_MAX) return 0;
  cu_ptr p = d->large[bi].p;
  *size = best;
  d->large[bi] = d->large[--d->nlarge];
  d->cached -= best;
  return p;
}

/* Puts a freed block in the cache; -1 when out of host memory. */
static int cache_put(cu_dev *d, cu_ptr p, size_t size) {
  if (size <= CU_ALLOC_SMALL_MAX) {
    stack *s = &d->bins[bin_of(size)];
    if (s->n == s->cap) {
      size_t ncap = s->cap ? 2 * s->cap : 16;
      cu_ptr *nv = (cu_ptr *)realloc(s->v, ncap * sizeof *nv);
      if (!nv) return -1;
      s->v = nv;
      s->cap = ncap;
    }
    s->v[s->n++] = p;
  } else {
    if (d->nlarge == d->caplarge) {
      size_t ncap = d->caplarge ? 2 * d->caplarge : 16;
      blk *nv = (blk *)realloc(d->large, ncap * sizeof *nv);
      if (!nv) return -1;
      d->large = nv;
      d->caplarge = ncap;
    }
    d->large[d->nlarge].p = p;
    d->large[d->nlarge].size = size;
    d->nlarge++;
  }
  d->cached += size;
  return 0;
}

int cu_alloc(cu_dev *d, size_t bytes, cu_ptr *out) {
  char a[32], b[32];
  size_t cls, size = 0, cached_before;
  cu_ptr p;
  int rc;
  if (!out) return cu_fail(d, GK_EMISUSE, "cu_alloc: NULL result pointer");
  *out = 0;
  if ((rc = enter(d)) != GK_OK) return rc;
  cls = size_class(bytes);
  if (!cls) goto oom;
  p = cache_take(d, cls, &size);
  if (!p) {
    CUdeviceptr dp = 0;
    size = cls;
    rc = CU_CALL(d, drv, cuMemAlloc_v2, &dp, cls);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
      cached_before = d->cached;
      cu_trim(d);
      rc = CU_CALL(d, drv, cuMemAlloc_v2, &dp, cls);
      if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
        return cu_fail(d, GK_ENOMEM,
                       "out of device memory: asked for %zu bytes (%s); gk holds %zu bytes "
                       "(%zu in use, %zu cached, released before retrying), device total %s",
                       bytes, human(a, sizeof a, bytes), d->in_use + cached_before, d->in_use,
                       cached_before, human(b, sizeof b, d->total_mem));
      }
    }
    if (rc) return status_of(rc);
    p = dp;
  }
  if (live_put(d, p, size)) {
    CU_CALL(d, drv, cuMemFree_v2, p);
    return cu_fail(d, GK_ENOMEM, "out of host memory tracking device allocations");
  }
  d->in_use += size;
  *out = p;
  return GK_OK;
oom:
  return cu_fail(d, GK_ENOMEM, "out of device memory: asked for %zu bytes (%s); gk holds %zu "
                 "bytes (%zu in use, %zu cached)", bytes, human(a, sizeof a, bytes),
                 d->in_use + d->cached, d->in_use, d->cached);
}

/* The host address of [p, p + n) when it lies in the mapped pool, else NULL. */
static const char *mapped_host(cu_dev *d, cu_ptr p, size_t n) {
  cu_ptr end = d->mdev + (cu_ptr)CU_MAPPED_SLOTS * CU_MAPPED_MAX;
  if (!d->mhost || p < d->mdev || p >= end || n > end - p) return NULL;
  return d->mhost + (p - d->mdev);
}

void cu_free(cu_dev *d, cu_ptr p) {
  size_t size;
  if (!d || !p) return;
  if (mapped_host(d, p, 1)) {
    unsigned slot = (unsigned)((p - d->mdev) / CU_MAPPED_MAX);
    d->mseq[slot] = 0;
    d->mfree[d->nmfree++] = (uint16_t)slot;   /* stream-ordered, as below */
    return;
  }
  size = live_take(d, p);
  if (!size) return;
  d->in_use -= size;
  if (cache_put(d, p, size)) {
    bind(d);
    CU_CALL(d, drv, cuMemFree_v2, p);
  }
}

void cu_trim(cu_dev *d) {
  if (!d || !d->cached) return;
  bind(d);
  for (int b = 0; b < NBINS; b++) {
    stack *s = &d->bins[b];
    for (size_t i = 0; i < s->n; i++) CU_CALL(d, drv, cuMemFree_v2, s->v[i]);
    s->n = 0;
  }
  for (size_t i = 0; i < d->nlarge; i++) CU_CALL(d, drv, cuMemFree_v2, d->large[i].p);
  d->nlarge = 0;
  d->cached = 0;
}

/* The mapped pool, made at the first request: one page-locked allocation
** mapped into the device (CU_MEMHOSTALLOC_DEVICEMAP), cut into blocks, then
** the completion word (cu_done_next) in a 64-byte line of its own. */
#define MAPPED_DONE ((size_t)CU_MAPPED_SLOTS * CU_MAPPED_MAX)
#define MAPPED_BYTES (MAPPED_DONE + 64)
int cu_alloc_mapped(cu_dev *d, size_t bytes, cu_ptr *out) {
  int rc;
  *out = 0;
  if (bytes > CU_MAPPED_MAX) return GK_ENOMEM;
  if ((rc = enter(d)) != GK_OK) return rc;
  if (!d->mtried) {
    void *h = NULL;
    CUdeviceptr dp = 0;
    d->mtried = 1;
    if (CU_CALL(d, drv, cuMemHostAlloc, &h, MAPPED_BYTES, CU_MEMHOSTALLOC_DEVICEMAP)) h = NULL;
    else if (CU_CALL(d, drv, cuMemHostGetDevicePointer_v2, &dp, h, 0)) {
      CU_CALL(d, drv, cuMemFreeHost, h);
      h = NULL;
    }
    if (!h) {
      d->err[0] = 0;   /* not an error: the caller falls back to device memory */
      return GK_ENOMEM;
    }
    memset(h, 0, MAPPED_BYTES);   /* the completion word starts at 0 */
    d->mhost = (char *)h;
    d->mdev = dp;
    for (unsigned i = 0; i < CU_MAPPED_SLOTS; i++) d->mfree[i] = (uint16_t)(CU_MAPPED_SLOTS - 1 - i);
    d->nmfree = CU_MAPPED_SLOTS;
  }
  if (!d->mhost || !d->nmfree) return GK_ENOMEM;
  *out = d->mdev + (cu_ptr)d->mfree[--d->nmfree] * CU_MAPPED_MAX;
  return GK_OK;
}

int cu_is_mapped(cu_dev *d, cu_ptr p) { return mapped_host(d, p, 1) != NULL; }

cu_ptr cu_done_next(cu_dev *d, unsigned *seq) {
  *seq = 0;
  if (!d || !d->mhost || d->nodone || !cu_drv.cuStreamQuery) return 0;
  if (++d->dseq == 0) d->dseq = 1;   /* 0 marks nothing */
  *seq = d->dseq;
  return d->mdev + (cu_ptr)MAPPED_DONE;
}

void cu_done_mark(cu_dev *d, cu_ptr p, unsigned seq) {
  if (d && mapped_host(d, p, 1)) d->mseq[(p - d->mdev) / CU_MAPPED_MAX] = seq;
}

/* Waits until the completion word reaches seq (cu_done_next), asking the
** stream every 4096 spins: done (or failed) there, cu_sync finishes the wait
** and reports an error. */
static int wait_done(cu_dev *d, unsigned seq) {
  const volatile unsigned *w = (const volatile unsigned *)(d->mhost + MAPPED_DONE);
  for (unsigned spin = 1;; spin++) {
    if ((int)(*w - seq) >= 0) {
      __atomic_thread_fence(__ATOMIC_ACQUIRE);   /* the results were written before the word */
      return GK_OK;
    }
    if (!(spin & 4095) && (int)cu_drv.cuStreamQuery(d->stream) != CUDA_ERROR_NOT_READY) return cu_sync(d);
  }
}

/* From the pool's host address: a copy from page-locked memory is
** stream-ordered like any other (and the source is plainly host memory). */
int cu_copy_mapped_async(cu_dev *d, cu_ptr dst, cu_ptr src, size_t n) {
  int rc;
  const char *m = mapped_host(d, src, n);
  if (!m) return cu_fail(d, GK_EMISUSE, "cu_copy_mapped_async: the source is not mapped memory");
  if (n == 0) return GK_OK;
  if ((rc = enter(d)) != GK_OK) return rc;
  d->cs.copies++;
  d->idle = 0;
  return status_of(CU_CALL(d, drv, cuMemcpyHtoDAsync_v2, dst, m, n, d->stream));
}

void cu_call_stats(cu_dev *d, cu_cstats *st) { *st = d->cs; }

void cu_mem_stats(cu_dev *d, size_t *in_use, size_t *cached) {
  if (in_use) *in_use = d->in_use;
  if (cached) *cached = d->cached;
}

/* ---------------------------------------------------- copies and stream */

int cu_upload(cu_dev *d, cu_ptr dst, const void *src, size_t n) {
  int rc;
  if (n == 0) return GK_OK;
  if ((rc = enter(d)) != GK_OK) return rc;
  d->cs.copies++;
  d->idle = 0;
  return status_of(CU_CALL(d, drv, cuMemcpyHtoDAsync_v2, dst, src, n, d->stream));
}

/* A small read (a reduction's result) goes through page-locked staging: a
** copy from the device into pageable memory is staged by the driver, which
** costs microseconds a scalar read should not.  Without it (allocation
** refused), the plain path.  A block of the mapped pool is read in place
** once the stream is idle (the kernels that wrote it are done). */
int cu_download(cu_dev *d, void *dst, cu_ptr src, size_t n) {
  int rc;
  const char *m;
  if ((rc = enter(d)) != GK_OK) return rc;
  if (n && (m = mapped_host(d, src, n)) != NULL) {
    unsigned seq = d->mseq[(src - d->mdev) / CU_MAPPED_MAX];
    d->cs.mapped_reads++;
    /* the kernel that wrote it says so (cu_done_next); else the stream */
    if ((rc = !d->idle && seq ? wait_done(d, seq) : cu_sync(d)) != GK_OK) return rc;
    memcpy(dst, m, n);
    return GK_OK;
  }
  if (n && n <= PIN_BYTES && !d->pin_tried) {
    d->pin_tried = 1;
    if (CU_CALL(d, drv, cuMemAllocHost_v2, &d->pin, (size_t)PIN_BYTES)) d->pin = NULL;
  }
  int staged = n && n <= PIN_BYTES && d->pin;
  d->cs.copies += n > 0;
  d->idle = 0;
  if (n && CU_CALL(d, drv, cuMemcpyDtoHAsync_v2, staged ? d->pin : dst, src, n, d->stream)) return GK_EDEVICE;
  if ((rc = cu_sync(d)) != GK_OK) return rc;
  if (staged) memcpy(dst, d->pin, n);
  return GK_OK;
}

int cu_copy_d2d_async(cu_dev *d, cu_ptr dst, cu_ptr src, size_t n) {
  int rc;
  if (n == 0) return GK_OK;
  if ((rc = enter(d)) != GK_OK) return rc;
  d->cs.copies++;
  d->idle = 0;
  return status_of(CU_CALL(d, drv, cuMemcpyDtoDAsync_v2, dst, src, n, d->stream));
}

int cu_memset_async(cu_dev *d, cu_ptr p, int byte, size_t n) {
  int rc;
  if (n == 0) return GK_OK;
  if ((rc = enter(d)) != GK_OK) return rc;
  d->cs.memsets++;
  d->idle = 0;
  return status_of(CU_CALL(d, drv, cuMemsetD8Async, p, (unsigned char)byte, n, d->stream));
}

/* A wait with nothing enqueued since the last one that succeeded returns
** at once (every copy, memset, launch and gemm on d's stream goes through
** this file, and each clears d->idle). */
int cu_sync(cu_dev *d) {
  int rc;
  if ((rc = enter(d)) != GK_OK) return rc;
  if (d->idle) return GK_OK;
  d->cs.syncs++;
  double t0 = d->timing ? cu_now() : 0;
  rc = status_of(CU_CALL(d, drv, cuStreamSynchronize, d->stream));
  if (d->timing) d->cs.sync_s += cu_now() - t0;
  d->idle = rc == GK_OK;
  return rc;
}

/* --------------------------------------------------------------- kernels */

static int ktab_grow(cu_dev *d) {
  size_t ncap = d->kcap ? 2 * d->kcap : KTAB_MIN;
  cu_fn **nv = (cu_fn **)calloc(ncap, sizeof *nv);
  if (!nv) return -1;
  for (size_t i = 0; i < d->kcap; i++) {
    cu_fn *f = d->ktab[i];
    if (!f) continue;
    size_t j = (size_t)f->hash & (ncap - 1);
    while (nv[j]) j = (j + 1) & (ncap - 1);
    nv[j] = f;
  }
  free(d->ktab);
  d->ktab = nv;
  d->kcap = ncap;
  return 0;
}

/* Writes src to "<dir>/gk-<id>.cu" (the cache directory, else /tmp) for a
** failed compile; the path goes to path ("" when nothing could be written). */
static void dump_source(cu_dev *d, const char *src, const char *name, char *path, size_t len) {
  const char *dirs[2] = { d->disk ? d->cache_dir : "/tmp", "/tmp" };
  char id[64];
  size_t n = 0;
  if (!strncmp(name, "gk_k_", 5)) name += 5;
  for (; *name && n + 1 < sizeof id; name++)
    id[n++] = (char)((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') ||
                     (*name >= '0' && *name <= '9') || *name == '_' || *name == '-'
                         ? *name : '_');
  id[n] = 0;
  for (int i = 0; i < 2; i++) {
    int fd;
    size_t left = strlen(src);
    const char *s = src;
    if (snprintf(path, len, "%s/gk-%s.cu", dirs[i], id) >= (int)len) continue;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) continue;
    while (left > 0) {
      ssize_t w = write(fd, s, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      s += w;
      left -= (size_t)w;
    }
    close(fd);
    if (left == 0) return;
  }
  if (len) path[0] = 0;
}

static char *dup_n(const char *s, size_t n) {
  char *p = (char *)malloc(n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

/* The miss path of cu_kernel: disk cache, else NVRTC; then load. */
static int load_kernel(cu_dev *d, const char *src, size_t n, const char *name, uint64_t h,
                       cu_fn **out) {
  size_t nl = strlen(name), plen = 0;
  cu_cache_key key;
  cu_fn *f = NULL;
  void *payload = NULL;
  char *log = NULL;
  CUmodule mod = NULL;
  double ms = 0;
  int rc;

  if ((rc = enter(d)) != GK_OK) return rc;
  if ((d->kn + 1) * 2 > d->kcap && ktab_grow(d)) goto nomem;
  f = (cu_fn *)calloc(1, sizeof *f);
  if (!f || !(f->src = dup_n(src, n)) || !(f->name = dup_n(name, nl))) goto nomem;
  f->hash = h;
  f->srclen = n;
  f->static_smem = -1;
  f->cluster = -1;

  /* another kernel of this source is loaded: its module holds this one too */
  for (size_t i = 0; i < d->kcap && !mod; i++) {
    const cu_fn *o = d->ktab[i];
    if (o && o->mod && o->srclen == n && memcmp(o->src, src, n) == 0) { mod = o->mod; f->borrowed = 1; }
  }
  cu_kernel_key(&key, d->seed, src, n, name, d->arch, d->nvrtc, d->kind);
  /* the user's disk cache, then the kernels shipped with gk (read only) */
  for (int lvl = 0; lvl < 2 && !mod; lvl++) {
    const char *dir = lvl == 0 ? (d->disk ? d->cache_dir : NULL) : (d->ship ? d->ship_dir : NULL);
    if (!dir || !cu_cache_read(dir, &key, &payload, &plen)) continue;
    if (CU_CALL(d, drv, cuModuleLoadData, &mod, payload) == 0) {
      if (lvl == 0) d->ks.disk_hits++;
      else d->ks.ship_hits++;
      if (d->debug & CU_DEBUG_CACHE)
        fprintf(stderr, "gk: kernel cache: %s hit %s (%016llx)\n", lvl == 0 ? "disk" : "shipped", name,
                (unsigned long long)h);
    } else {
      if (d->dead) goto fail;
      mod = NULL;   /* an entry the driver rejects is a miss */
    }
    free(payload);
    payload = NULL;
  }
  if (!mod) {
    rc = cu_nvrtc_build_noted(src, name, d->arch_opt, d->debug, d->note, d->note_ud, (char **)&payload, &plen,
                              &log, &ms);
    if (rc == GK_EJIT) {
      char path[CU_PATH_MAX + 64];
      dump_source(d, src, name, path, sizeof path);
      cu_fail(d, GK_EJIT, "NVRTC failed to compile kernel %s (source %s%s):\n%s", name,
              path[0] ? "written to " : "could not be written", path, log ? log : "");
      goto fail;
    }
    if (rc != GK_OK) {
      cu_fail(d, rc, "NVRTC could not compile kernel %s: %s", name, log ? log : "out of memory");
      goto fail;
    }
    d->ks.compiled++;
    d->ks.compile_ms += ms;
    if (d->debug & CU_DEBUG_CACHE)
      fprintf(stderr, "gk: kernel cache: miss %s (%016llx), compiled in %.1f ms\n", name,
              (unsigned long long)h, ms);
    if ((rc = CU_CALL(d, drv, cuModuleLoadData, &mod, payload)) != 0) {
      mod = NULL;
      rc = status_of(rc);
      goto fail;
    }
    if (d->disk) cu_cache_write(d->cache_dir, &key, payload, plen);
  }
  if ((rc = CU_CALL(d, drv, cuModuleGetFunction, &f->f, mod, name)) != 0) {
    char first[ERR_MAX];
    snprintf(first, sizeof first, "%s", cu_errmsg(d));
    cu_fail(d, GK_EDEVICE, "%s (is kernel %s declared extern \"C\" __global__?)", first, name);
    rc = GK_EDEVICE;
    goto fail;
  }
  f->mod = mod;
  {
    size_t j = (size_t)h & (d->kcap - 1);
    while (d->ktab[j]) j = (j + 1) & (d->kcap - 1);
    d->ktab[j] = f;
    d->kn++;
  }
  free(payload);
  free(log);
  *out = f;
  return GK_OK;

nomem:
  rc = cu_fail(d, GK_ENOMEM, "out of host memory loading kernel %s", name);
fail:
  if (mod && !(f && f->borrowed)) CU_CALL(d, drv, cuModuleUnload, mod);
  if (f) {
    free(f->src);
    free(f->name);
    free(f);
  }
  free(payload);
  free(log);
  return rc ? rc : GK_EDEVICE;
}

int cu_kernel(cu_dev *d, const char *src, const char *name, cu_fn **out) {
  size_t n;
  uint64_t h;
  if (!out) return cu_fail(d, GK_EMISUSE, "cu_kernel: NULL result pointer");
  *out = NULL;
  if (!src || !name) return cu_fail(d, GK_EMISUSE, "cu_kernel: NULL source or name");
  if (d->dead) return fail_dead(d);
  n = strlen(src);
  h = cu_hash64(name, strlen(name), cu_hash64(src, n, d->seed));
  if (d->kcap) {
    size_t mask = d->kcap - 1, j = (size_t)h & mask;
    cu_fn *f;
    while ((f = d->ktab[j]) != NULL) {
      if (f->hash == h && f->srclen == n && memcmp(f->src, src, n) == 0 &&
          strcmp(f->name, name) == 0) {
        d->ks.mem_hits++;
        if (d->debug & CU_DEBUG_CACHE)
          fprintf(stderr, "gk: kernel cache: memory hit %s\n", name);
        *out = f;
        return GK_OK;
      }
      j = (j + 1) & mask;
    }
  }
  return load_kernel(d, src, n, name, h, out);
}

void cu_kernel_stats(cu_dev *d, cu_kstats *st) { *st = d->ks; }

/* Opts fn in to shmem bytes of dynamic shared memory where it needs it:
** the 48 KB a block gets without opting in counts static and dynamic
** shared memory together, and so does the opt-in maximum. */
static int smem_optin(cu_dev *d, cu_fn *fn, unsigned shmem) {
  if (shmem && fn->static_smem < 0) {
    int v = 0;
    if (CU_CALL(d, drv, cuFuncGetAttribute, &v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn->f)) return GK_EDEVICE;
    fn->static_smem = v > 0 ? v : 0;
  }
  size_t total = (size_t)shmem + (size_t)(shmem ? fn->static_smem : 0);
  if (total > SMEM_DEFAULT && shmem > fn->smem) {
    if (total > d->max_smem)
      return cu_fail(d, GK_ELIMIT, "kernel %s asks for %zu bytes of shared memory; the device "
                     "allows %zu per block", fn->name, total, d->max_smem);
    if (CU_CALL(d, drv, cuFuncSetAttribute, fn->f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                (int)shmem))
      return GK_EDEVICE;
    fn->smem = shmem;
  }
  return GK_OK;
}

/* The launch itself, plain or cooperative, counted (and timed) in d->cs. */
static int launch_counted(cu_dev *d, cu_fn *fn, int coop, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shmem, void **args) {
  d->cs.launches++;
  d->idle = 0;
  double t0 = d->timing ? cu_now() : 0;
  int r = coop ? CU_CALL(d, drv, cuLaunchCooperativeKernel, fn->f, gx, gy, gz, bx, by, bz, shmem, d->stream, args)
              : CU_CALL(d, drv, cuLaunchKernel, fn->f, gx, gy, gz, bx, by, bz, shmem, d->stream, args, NULL);
  if (d->timing) d->cs.launch_s += cu_now() - t0;
  return r;
}

int cu_launch(cu_dev *d, cu_fn *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
              unsigned by, unsigned bz, unsigned shmem, void **args) {
  int rc;
  if (!fn) return cu_fail(d, GK_EMISUSE, "cu_launch: NULL kernel");
  if ((rc = enter(d)) != GK_OK) return rc;
  if ((rc = smem_optin(d, fn, shmem)) != GK_OK) return rc;
  /* a kernel of thread-block clusters takes any grid of whole clusters
  ** (the row kernels stride over rows by clusters): no more clusters than
  ** are resident at once, since those past it would run as a second wave
  ** (a GPC holds only whole clusters: 33 clusters of 4 took twice 32's time) */
  if (fn->cluster < 0) {
    int v = 0;
    fn->cluster = CU_CALL(d, drv, cuFuncGetAttribute, &v, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, fn->f) ? 0 : v;
    d->err[0] = 0;
    /* past the 8 blocks every sm_90 part runs (16 on the H100 / H200), the kernel must opt in */
    if (fn->cluster > 8 && CU_CALL(d, drv, cuFuncSetAttribute, fn->f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
      return GK_EDEVICE;
  }
  if (fn->cluster > 1 && gy == 1 && gz == 1 && cu_drv.cuOccupancyMaxActiveClusters) {
    if (fn->occ_block != bx * by * bz || fn->occ_smem != shmem) {
      CUlaunchConfig cfg = {gx, 1, 1, bx, by, bz, shmem, d->stream, NULL, 0};
      int n = 0;
      fn->max_clusters = CU_CALL(d, drv, cuOccupancyMaxActiveClusters, &n, fn->f, &cfg) || n < 1 ? 0 : (unsigned)n;
      d->err[0] = 0;
      fn->occ_block = bx * by * bz;
      fn->occ_smem = shmem;
    }
    if (fn->max_clusters && gx > fn->max_clusters * (unsigned)fn->cluster) gx = fn->max_clusters * (unsigned)fn->cluster;
  }
  return status_of(launch_counted(d, fn, 0, gx, gy, gz, bx, by, bz, shmem, args));
}

int cu_launch_coop(cu_dev *d, cu_fn *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned shmem, void **args) {
  int rc;
  if (!fn) return cu_fail(d, GK_EMISUSE, "cu_launch_coop: NULL kernel");
  if ((rc = enter(d)) != GK_OK) return rc;
  if ((rc = smem_optin(d, fn, shmem)) != GK_OK) return rc;
  /* the blocks of this shape an SM holds at once (registers, shared memory), asked once a shape */
  if (fn->coop_block != bx * by * bz || fn->coop_smem != shmem) {
    int n = 0;
    if (!d->coop || CU_CALL(d, drv, cuOccupancyMaxActiveBlocksPerMultiprocessor, &n, fn->f, (int)(bx * by * bz),
                            (size_t)shmem))
      n = 0;
    d->err[0] = 0;
    fn->coop_per_sm = n > 0 ? n : 0;
    fn->coop_block = bx * by * bz;
    fn->coop_smem = shmem;
  }
  const uint64_t fit = (uint64_t)fn->coop_per_sm * (uint64_t)(d->sm_count > 0 ? d->sm_count : 0);
  const uint64_t slice = (uint64_t)gx * gz;
  if (fit >= slice && slice > 0) {
    unsigned gy2 = (uint64_t)gy * slice > fit ? (unsigned)(fit / slice) : gy;
    int r = launch_counted(d, fn, 1, gx, gy2, gz, bx, by, bz, shmem, args);
    if (r != CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) return status_of(r);
    d->err[0] = 0;
  }
  /* not resident at once: a block a row group, which the kernel streams (no waits between blocks) */
  if (d->debug)
    fprintf(stderr, "gk: kernel %s: %u x %u x %u blocks cannot be resident at once (%d an SM); launched as 1 x %u x %u\n",
            fn->name, gx, gy, gz, fn->coop_per_sm, gy, gz);
  return cu_launch(d, fn, 1, gy, gz, bx, by, bz, 0, args);
}

/* ----------------------------------------------------------------- gemm */

int cu_gemm(cu_dev *d, gk_dtype t, int64_t m, int64_t n, int64_t k, cu_ptr a, cu_ptr b,
            cu_ptr c, int tf32) {
  char why[ERR_MAX];
  int rc, mode;
  if (t != GK_F32 && t != GK_F64)
    return cu_fail(d, GK_EMISUSE, "cu_gemm: dtype %d is not f32 or f64", (int)t);
  if (m < 0 || n < 0 || k < 0) return cu_fail(d, GK_EMISUSE, "cu_gemm: negative dimension");
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return cu_fail(d, GK_ELIMIT, "matmul dimension above %d (m=%lld, n=%lld, k=%lld)", INT_MAX,
                   (long long)m, (long long)n, (long long)k);
  if ((rc = enter(d)) != GK_OK) return rc;
  if (m == 0 || n == 0) return GK_OK;
  if (k == 0)
    return cu_memset_async(d, c, 0, (size_t)m * (size_t)n * (t == GK_F32 ? 4u : 8u));
  if (!d->blas) {
    if (cu_load_cublas(why, sizeof why))
      return cu_fail(d, GK_EDEVICE, "matmul needs cuBLAS: %s", why);
    if (CU_CALL(d, blas, cublasCreate_v2, &d->blas)) {
      d->blas = NULL;
      return GK_EDEVICE;
    }
    if (CU_CALL(d, blas, cublasSetStream_v2, d->blas, d->stream)) return GK_EDEVICE;
    d->blas_mode = -1;
  }
  mode = (t == GK_F32 && tf32) ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  if (mode != d->blas_mode) {
    if (CU_CALL(d, blas, cublasSetMathMode, d->blas, mode)) return GK_EDEVICE;
    d->blas_mode = mode;
  }
  /* Row-major C = A B is column-major C^T = B^T A^T: the buffers as they
  ** are, with B first. */
  d->idle = 0;
  if (t == GK_F32) {
    const float one = 1.0f, zero = 0.0f;
    rc = CU_CALL(d, blas, cublasSgemm_v2, d->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m,
                 (int)k, &one, (const float *)(uintptr_t)b, (int)n, (const float *)(uintptr_t)a,
                 (int)k, &zero, (float *)(uintptr_t)c, (int)n);
  } else {
    const double one = 1.0, zero = 0.0;
    rc = CU_CALL(d, blas, cublasDgemm_v2, d->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m,
                 (int)k, &one, (const double *)(uintptr_t)b, (int)n,
                 (const double *)(uintptr_t)a, (int)k, &zero, (double *)(uintptr_t)c, (int)n);
  }
  return rc ? GK_EDEVICE : GK_OK;
}
