/*
** runtime/cuda.c -- the cuda backend: values in device memory, plan groups
** prepared by runtime/cuda_lower.c (prepare_group: CUDA source and a launch
** list) and run through the device layer runtime/cu.h.
**
** run_group: temp from the caching allocator (zeroed when the group says
** so), then the launch list in order: cu_kernel(src, kname) (a memory cache
** hit costs about a microsecond) and cu_launch for a kernel, cu_gemm for a
** matmul.  Everything is enqueued on the device's one stream: nothing waits
** until a value is read (read -> cu_download) or sync is asked for.
**
** GK_PROFILE=1 times every launch with CUDA events and prints, when the
** backend closes, one line per kernel on stderr:
**   gk-profile: KNAME KIND launches=N median_us=M min_us=m bytes=B
** (B = the group's inputs read once plus its outputs written once);
** GK_PROFILE=2 adds, before each, every launch's time in launch order:
**   gk-profile-times: KNAME t1 t2 ... (us, the first 512 launches)
*/
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime/rt.h"
#include "runtime/cu.h"
#include "runtime/cuda_lower.h"

#define PROF_MAX_KERNELS 256   /* distinct kernels profiled */
#define PROF_MAX_TIMES 512     /* launch times kept per kernel */
#define PROF_PENDING 256       /* event pairs in flight before they are harvested */

typedef struct prof_k {
  char kname[32];
  const char *kind;
  int64_t bytes;
  int n;
  float t[PROF_MAX_TIMES];     /* ms */
} prof_k;

typedef struct prof {
  int on;
  int all;                     /* GK_PROFILE=2: print every launch's time too */
  void *stream;                /* the device's CUstream */
  int (*create)(void **, unsigned);
  int (*record)(void *, void *);
  int (*sync)(void *);
  int (*elapsed)(float *, void *, void *);
  int (*destroy)(void *);
  struct { void *a, *b; int k; } pend[PROF_PENDING];
  int npend;
  prof_k *ks;
  int nk;
} prof;

#define HOT_MAX 32             /* kernels remembered by the mapped-result heuristic */
#define RECENT_MAX 16          /* small results remembered with the kernel that wrote them */
#define KNAME_MAX 32           /* a kernel's name: "gk_" and 16 hex digits, with room */
#define SHADOW_MAX 64          /* mapped values with a device copy for the kernels reading them */

/* A kernel whose small results the host reads (state 1: they go to mapped
** memory), or whose mapped result a kernel read (state -1: never again). */
typedef struct hot_k { char kname[KNAME_MAX]; int state; } hot_k;

typedef struct cuda_be {
  rt_backend b;
  cu_dev *d;
  prof pf;
  cu_ptr errw;                 /* kernels' error record (rt_group.errflag), allocated at first use */
  double copy_bps;             /* cuda_copy_rate's measurement (0: not yet, < 0: failed) */
  int err_pending;             /* a kernel that may set it was launched since the last check */
  int mapped;                  /* GK_CU_MAPPED: 0 never, 1 learned (default), 2 every small result */
  int stats;                   /* GK_CU_STATS: print the driver call counts at close */
  hot_k hot[HOT_MAX];
  int nhot, hot_next;
  struct { cu_ptr p; char kname[KNAME_MAX]; } recent[RECENT_MAX];
  int recent_next;
  struct { const rt_value *v; cu_ptr p; } shadow[SHADOW_MAX];   /* device copies of mapped inputs */
  int shadow_next;
} cuda_be;

static cuda_be *CB(rt_backend *b) { return (cuda_be *)b; }

int rt_cuda_available(char *why, size_t len) { return cu_available(why, len); }

int rt_cuda_device(rt_backend *b) {
  if (b && b->name && !strcmp(b->name, "cuda") && CB(b)->d) return cu_ordinal(CB(b)->d);
  return 0;
}

static int fail_dev(rt_backend *b, int rc) {
  return rt_seterr(&b->err, rc ? rc : GK_EDEVICE, "%s", cu_errmsg(CB(b)->d));
}

/* ------------------------------------------------------------ profiling */

/* The device's stream: cu_dev's fourth member (runtime/cu_dev.c: ordinal,
** dev, ctx, stream).  Read only when GK_PROFILE is set. */
struct cu_dev_head { int ordinal; int dev; void *ctx; void *stream; };

static void prof_open(cuda_be *c) {
  const char *v = getenv("GK_PROFILE");
  if (!v || !*v || !strcmp(v, "0")) return;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) return;
  prof *p = &c->pf;
  p->create = (int (*)(void **, unsigned))dlsym(h, "cuEventCreate");
  p->record = (int (*)(void *, void *))dlsym(h, "cuEventRecord");
  p->sync = (int (*)(void *))dlsym(h, "cuEventSynchronize");
  p->elapsed = (int (*)(float *, void *, void *))dlsym(h, "cuEventElapsedTime_v2");
  if (!p->elapsed) p->elapsed = (int (*)(float *, void *, void *))dlsym(h, "cuEventElapsedTime");
  p->destroy = (int (*)(void *))dlsym(h, "cuEventDestroy_v2");
  p->ks = calloc(PROF_MAX_KERNELS, sizeof(prof_k));
  p->stream = ((struct cu_dev_head *)c->d)->stream;
  p->all = !strcmp(v, "2");
  p->on = p->create && p->record && p->sync && p->elapsed && p->destroy && p->ks;
}

static void prof_harvest(prof *p) {
  for (int i = 0; i < p->npend; i++) {
    float ms = 0;
    p->sync(p->pend[i].b);
    if (p->elapsed(&ms, p->pend[i].a, p->pend[i].b) == 0) {
      prof_k *k = &p->ks[p->pend[i].k];
      if (k->n < PROF_MAX_TIMES) k->t[k->n++] = ms;
    }
    p->destroy(p->pend[i].a); p->destroy(p->pend[i].b);
  }
  p->npend = 0;
}

static void *prof_begin(prof *p) {
  if (!p->on) return NULL;
  if (p->npend == PROF_PENDING) prof_harvest(p);
  void *a = NULL;
  if (p->create(&a, 0) || p->record(a, p->stream)) return NULL;
  return a;
}

/* Returns the new record's index when this kernel is first seen (its bytes
** counted now), else -1. */
static int prof_end(prof *p, void *a, const rt_group *g, const char *kname) {
  if (!a) return -1;
  void *b = NULL;
  if (p->create(&b, 0) || p->record(b, p->stream)) { p->destroy(a); return -1; }
  int k, fresh = -1;
  for (k = 0; k < p->nk; k++) if (!strcmp(p->ks[k].kname, kname)) break;
  if (k == p->nk) {
    if (p->nk == PROF_MAX_KERNELS) { p->destroy(a); p->destroy(b); return -1; }
    p->nk++;
    fresh = k;
    snprintf(p->ks[k].kname, sizeof p->ks[k].kname, "%s", kname);
    p->ks[k].kind = rt_group_name[g->kind];
    int64_t bytes = 0;
    for (int i = 0; i < g->nin; i++) bytes += g->ins[i]->n * (int64_t)rt_dtype_size(g->ins[i]->t);
    for (int i = 0; i < g->nout; i++) bytes += g->outs[i]->n * (int64_t)rt_dtype_size(g->outs[i]->t);
    p->ks[k].bytes = bytes;
  }
  p->pend[p->npend].a = a; p->pend[p->npend].b = b; p->pend[p->npend].k = k;
  p->npend++;
  return fresh;
}

static int fcmp(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static void prof_close(prof *p) {
  if (!p->on) return;
  prof_harvest(p);
  for (int k = 0; k < p->nk; k++) {
    prof_k *q = &p->ks[k];
    if (!q->n) continue;
    if (p->all) {
      fprintf(stderr, "gk-profile-times: %s", q->kname);
      for (int i = 0; i < q->n; i++) fprintf(stderr, " %.2f", q->t[i] * 1000.0);
      fputc('\n', stderr);
    }
    qsort(q->t, (size_t)q->n, sizeof(float), fcmp);
    fprintf(stderr, "gk-profile: %s %s launches=%d median_us=%.2f min_us=%.2f bytes=%lld\n", q->kname, q->kind, q->n,
            q->t[q->n / 2] * 1000.0, q->t[0] * 1000.0, (long long)q->bytes);
  }
  free(p->ks);
  p->on = 0;
}

/* --------------------------------------------------------------- values */

/* A value of device memory, or (mapped, when it is small and the mapped
** pool has room) of mapped host memory. */
static int alloc_value(rt_backend *b, gk_dtype t, int ndim, const int64_t *shape, int mapped, rt_value **out) {
  int64_t n; size_t bytes;
  int rc = rt_shape_count(ndim, shape, rt_dtype_size(t), &n, &bytes, &b->err);
  if (rc) return rc;
  rt_value *v = rt_calloc(b->mem, 1, sizeof *v);
  if (!v) return rt_seterr(&b->err, GK_ENOMEM, "out of memory");
  cu_ptr p = 0;
  rc = GK_ENOMEM;
  if (mapped && bytes && bytes <= CU_MAPPED_MAX) rc = cu_alloc_mapped(CB(b)->d, bytes, &p);
  if (rc) rc = cu_alloc(CB(b)->d, bytes, &p);
  if (rc) { rt_free(b->mem, v, sizeof *v); return fail_dev(b, rc); }
  v->refs = 1; v->t = t; v->ndim = ndim; v->n = n; v->bytes = bytes;
  memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
  v->where = RT_ON_DEVICE; v->dev = p; v->be = b;
  *out = v;
  return GK_OK;
}

static int cuda_alloc_value(rt_backend *b, gk_dtype t, int ndim, const int64_t *shape, rt_value **out) {
  return alloc_value(b, t, ndim, shape, 0, out);
}

static void shadow_drop(cuda_be *c, const rt_value *v);

static void cuda_free_storage(rt_backend *b, rt_value *v) {
  if (v->where == RT_ON_DEVICE && !v->release && cu_is_mapped(CB(b)->d, v->dev)) shadow_drop(CB(b), v);
  /* borrowed or imported storage goes back to its owner (never cu_free);
  ** device storage only once the kernels queued on it are done */
  if (v->release && v->where == RT_ON_DEVICE && v->dev) cu_sync(CB(b)->d);
  if (v->release) v->release(v->release_ud, v->host);
  else if (v->where == RT_ON_DEVICE) cu_free(CB(b)->d, v->dev);
  else if (v->host) rt_free(b->mem, v->host, v->bytes ? v->bytes : 1);
  rt_free(b->mem, v, sizeof *v);
}

/* Reports the error record a kernel left (rt_group.errflag) once the stream
** has been waited for: GK_EVALUE with the cpu backend's message; the record
** is cleared. */
static int check_kernel_error(rt_backend *b) {
  cuda_be *c = CB(b);
  if (!c->err_pending || !c->errw) return GK_OK;
  c->err_pending = 0;
  unsigned long long rec[3] = {0, 0, 0};
  int rc = cu_download(c->d, rec, c->errw, sizeof rec);
  if (rc) return fail_dev(b, rc);
  if (!rec[0]) return GK_OK;
  double lo, hi;
  memcpy(&lo, &rec[1], 8); memcpy(&hi, &rec[2], 8);
  if (isnan(lo)) lo = fabs(lo);   /* "nan", never "-nan" */
  if (isnan(hi)) hi = fabs(hi);
  if ((rc = cu_memset_async(c->d, c->errw, 0, sizeof rec))) return fail_dev(b, rc);
  if ((rec[0] & 3) == 2)   /* numpy's words: the bins have no finite width (as runtime/cpu.c) */
    return rt_seterr(&b->err, GK_EVALUE, "hist: too many bins for the data range [%g, %g]: cannot create %lld finite-sized bins",
                     lo, hi, (long long)(rec[0] >> 2));
  return rt_seterr(&b->err, GK_EVALUE, "hist: the range [%g, %g] is not finite or lo > hi", lo, hi);
}

/* ------------------------------------------------ small results, mapped */

/* A small result the host reads back costs, besides the kernel, a
** device-to-host copy queued behind it and a second trip through the copy
** engine.  Written by the kernel straight into mapped host memory
** (cu_alloc_mapped), reading it is a wait and a memcpy.  But a later kernel
** that reads such a value reads host memory over the bus, element by
** element.  So the cuda backend learns, per kernel (by name: the same text
** on every step of a statement), which results go there: a kernel's small
** result (CU_MAPPED_MAX bytes at most) read by the host (cuda_read) marks
** that kernel hot, and its later small results are mapped; one of them
** read by a kernel marks it cold for good.  GK_CU_MAPPED=0 turns this off,
** =2 maps every small kernel result (a measuring switch). */

static hot_k *hot_find(cuda_be *c, const char *kname) {
  for (int i = 0; i < c->nhot; i++) if (!strcmp(c->hot[i].kname, kname)) return &c->hot[i];
  return NULL;
}

/* Sets kname's state (a new entry replaces the oldest when full, unless
** that one is cold). */
static void hot_set(cuda_be *c, const char *kname, int state) {
  hot_k *h = hot_find(c, kname);
  if (!h) {
    if (c->nhot < HOT_MAX) h = &c->hot[c->nhot++];
    else {
      h = &c->hot[c->hot_next];
      c->hot_next = (c->hot_next + 1) % HOT_MAX;
      if (h->state < 0 && state > 0) return;
    }
    snprintf(h->kname, sizeof h->kname, "%s", kname);
  } else if (h->state < 0) return;
  h->state = state;
}

static const char *recent_kernel(cuda_be *c, cu_ptr p) {
  for (int i = 0; i < RECENT_MAX; i++) if (c->recent[i].p == p) return c->recent[i].kname;
  return NULL;
}

static void recent_put(cuda_be *c, cu_ptr p, const char *kname) {
  c->recent[c->recent_next].p = p;
  snprintf(c->recent[c->recent_next].kname, KNAME_MAX, "%s", kname);
  c->recent_next = (c->recent_next + 1) % RECENT_MAX;
}

/* The kernel that writes g's outputs: its only kernel step, or NULL when
** the group also runs a gemm or a memset, zeroes its outputs or counts them
** (a filter). */
static const char *result_kernel(const rt_prep *p) {
  const char *k = NULL;
  if (p->outs_zero || p->count_out) return NULL;
  for (int st = 0; st < p->nstep; st++) {
    if (p->step[st].op != CU_STEP_KERNEL || k) return NULL;
    k = p->step[st].kname;
  }
  return k && strlen(k) < KNAME_MAX ? k : NULL;
}

/* Where a kernel reads input value v: its own storage, or for a mapped
** value a device copy made at its first use as an input (kept until the
** value goes, or until SHADOW_MAX later copies push it out), so that a
** result the host has read, then used by many kernels, is read from host
** memory once, by a copy.  Without room for the copy: the mapped storage
** itself (right, only slower). */
static cu_ptr input_at(cuda_be *c, const rt_value *v) {
  if (!v->bytes || v->release || !cu_is_mapped(c->d, v->dev)) return v->dev;
  for (int i = 0; i < SHADOW_MAX; i++) if (c->shadow[i].v == v && c->shadow[i].p) return c->shadow[i].p;
  cu_ptr p = 0;
  if (cu_alloc(c->d, v->bytes, &p)) return v->dev;
  if (cu_copy_mapped_async(c->d, p, v->dev, v->bytes)) { cu_free(c->d, p); return v->dev; }
  int k = c->shadow_next;
  c->shadow_next = (k + 1) % SHADOW_MAX;
  if (c->shadow[k].p) cu_free(c->d, c->shadow[k].p);   /* stream-ordered: the kernels queued on it are ahead */
  c->shadow[k].v = v;
  c->shadow[k].p = p;
  return p;
}

static void shadow_drop(cuda_be *c, const rt_value *v) {
  for (int i = 0; i < SHADOW_MAX; i++)
    if (c->shadow[i].v == v) { cu_free(c->d, c->shadow[i].p); c->shadow[i].v = NULL; c->shadow[i].p = 0; }
}

static int cuda_read(rt_backend *b, rt_value *v, void *dst) {
  if (v->where == RT_ON_HOST) { memcpy(dst, v->host, v->bytes); return check_kernel_error(b); }
  if (!v->bytes) return check_kernel_error(b);
  cuda_be *c = CB(b);
  if (c->mapped == 1 && v->bytes <= CU_MAPPED_MAX && !v->release) {
    const char *k = recent_kernel(c, v->dev);
    if (k) hot_set(c, k, 1);
  }
  int rc = cu_download(CB(b)->d, dst, v->dev, v->bytes);
  return rc ? fail_dev(b, rc) : check_kernel_error(b);
}

static int cuda_write(rt_backend *b, rt_value *v, const void *src) {
  if (v->where == RT_ON_HOST) { memcpy(v->host, src, v->bytes); return GK_OK; }
  if (!v->bytes) return GK_OK;
  int rc = cu_upload(CB(b)->d, v->dev, src, v->bytes);
  return rc ? fail_dev(b, rc) : GK_OK;
}

static int cuda_sync(rt_backend *b) {
  int rc = cu_sync(CB(b)->d);
  return rc ? fail_dev(b, rc) : check_kernel_error(b);
}

/* A 128 MiB device-to-device copy (source and destination past the 50 MB
** L2), best of three after a warm-up, timed by wall clock around the copy
** and the sync -- the way a profile times a kernel. */
static double cuda_copy_rate(rt_backend *b) {
  cuda_be *c = CB(b);
  if (c->copy_bps) return c->copy_bps > 0 ? c->copy_bps : 0;
  const size_t n = (size_t)128 << 20;
  cu_ptr src = 0, dst = 0;
  double best = 0;
  c->copy_bps = -1;
  if (cu_alloc(c->d, n, &src) == GK_OK && cu_alloc(c->d, n, &dst) == GK_OK &&
      cu_memset_async(c->d, src, 1, n) == GK_OK && cu_copy_d2d_async(c->d, dst, src, n) == GK_OK &&
      cu_sync(c->d) == GK_OK) {
    for (int r = 0; r < 3; r++) {
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      if (cu_copy_d2d_async(c->d, dst, src, n) != GK_OK || cu_sync(c->d) != GK_OK) { best = 0; break; }
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
      if (s > 0 && (best == 0 || s < best)) best = s;
    }
  }
  cu_free(c->d, src);
  cu_free(c->d, dst);
  if (best > 0) c->copy_bps = 2.0 * (double)n / best;
  return c->copy_bps > 0 ? c->copy_bps : 0;
}

/* ---------------------------------------------------------- run a group */

#define MAX_PARAMS 500   /* 4000 bytes of kernel parameters */

static cu_ptr dev_of(const rt_node *x) { return x->val ? x->val->dev : 0; }

static int cuda_prepare_group(rt_backend *b, rt_group *g, int tf32) {
  cu_dev *d = CB(b)->d;
  return cuda_prepare(b, g, 1, cu_sm_count(d), cu_arch(d) >= 90 ? (int64_t)cu_max_smem(d) : 0, tf32);
}

/* Runs g's launch list (runtime/cuda_lower.h): temp and zeroed outputs
** first, then each kernel and gemm in order, all on the device's stream. */
static int cuda_run_group(rt_backend *b, rt_group *g) {
  cuda_be *c = CB(b);
  cu_dev *d = c->d;
  const rt_prep *p = g->prep;
  int rc = GK_OK, i;
  if (!p) return rt_seterr(&b->err, GK_EMISUSE, "internal error: the %s group was not lowered", rt_group_name[g->kind]);
  if (g->nin + g->nout + 2 + p->nscal + p->errflag + 2 * p->doneflag > MAX_PARAMS)
    return rt_seterr(&b->err, GK_ELIMIT, "a fused kernel has more than %d parameters", MAX_PARAMS);
  int misaligned = 0;
  for (i = 0; i < g->nin; i++) {
    if (!g->ins[i]->val || g->ins[i]->val->where != RT_ON_DEVICE)
      return rt_seterr(&b->err, GK_EMISUSE, "internal error: a kernel input is not on the device");
    if (g->ins[i]->val->dev & 15) misaligned = 1;
  }
  /* a group is lowered for the pointers it will run on (scalar loads for a
  ** borrowed buffer that is not 16-byte aligned) */
  if (misaligned && p->aligned16)
    return rt_seterr(&b->err, GK_EMISUSE, "internal error: a kernel with vector loads met an unaligned input");
  /* a kernel reading a mapped result: its maker's results stay on the device */
  if (c->mapped == 1)
    for (i = 0; i < g->nin; i++) {
      const rt_value *v = g->ins[i]->val;
      const char *k = v->bytes <= CU_MAPPED_MAX && cu_is_mapped(d, v->dev) ? recent_kernel(c, v->dev) : NULL;
      if (k) hot_set(c, k, -1);
    }
  cu_ptr inp[MAX_PARAMS];
  for (i = 0; i < g->nin; i++) inp[i] = input_at(c, g->ins[i]->val);
  const char *rk = c->mapped ? result_kernel(p) : NULL;
  hot_k *hk = rk && c->mapped == 1 ? hot_find(c, rk) : NULL;
  int map = rk && (c->mapped == 2 || (hk && hk->state > 0));
  for (i = 0; i < g->nout && !rc; i++) {
    rt_node *x = g->outs[i];
    if (x->val) continue;
    rc = alloc_value(b, x->t, x->ndim, x->shape, map, &x->val);
    if (!rc && rk && x->val->bytes <= CU_MAPPED_MAX) recent_put(c, x->val->dev, rk);
  }
  cu_ptr temp = 0;
  int pfresh = -1;   /* the profile record the last kernel made (prof_end) */
  if (!rc && p->temp_bytes > 0) {
    rc = cu_alloc(d, (size_t)p->temp_bytes, &temp);
    if (!rc && p->temp_zero) rc = cu_memset_async(d, temp, 0, (size_t)p->temp_bytes);
    if (rc) rc = fail_dev(b, rc);
  }
  if (!rc && p->outs_zero)
    for (i = 0; i < g->nout && !rc; i++)
      if (g->outs[i]->val->bytes && (rc = cu_memset_async(d, g->outs[i]->val->dev, 0, g->outs[i]->val->bytes))) rc = fail_dev(b, rc);
  if (!rc && p->errflag && !c->errw) {
    if ((rc = cu_alloc(d, 32, &c->errw)) || (rc = cu_memset_async(d, c->errw, 0, 32))) {
      rc = fail_dev(b, rc);
      if (c->errw) { cu_free(d, c->errw); c->errw = 0; }
    }
  }
  for (int st = 0; st < p->nstep && !rc; st++) {
    const cu_step *sp = &p->step[st];
    if (sp->op == CU_STEP_KERNEL) {
      cu_fn *fn = NULL;
      cu_set_compile_hook(d, b->compile_note, b->compile_ud);
      if ((rc = cu_kernel(d, p->src, sp->kname, &fn))) { rc = fail_dev(b, rc); break; }
      cu_ptr pv[MAX_PARAMS];
      void *args[MAX_PARAMS];
      int np = 0;
      for (i = 0; i < g->nin; i++) pv[np++] = inp[i];
      for (i = 0; i < g->nout; i++) pv[np++] = dev_of(g->outs[i]);
      pv[np++] = temp;
      for (i = 0; i < p->nscal; i++) pv[np++] = (cu_ptr)p->scal[i];   /* per-launch scalars */
      if (p->errflag) { pv[np++] = c->errw; c->err_pending = 1; }
      /* a mapped result: the kernel says when it is written (cu_done_next) */
      unsigned seq = 0;
      if (p->doneflag) {
        int mapped = 0;
        for (i = 0; i < g->nout; i++) mapped |= g->outs[i]->val->bytes && cu_is_mapped(d, g->outs[i]->val->dev);
        pv[np] = mapped ? cu_done_next(d, &seq) : 0;
        pv[np + 1] = seq;
        np += 2;
      }
      for (i = 0; i < np; i++) args[i] = &pv[i];
      void *ev = prof_begin(&c->pf);
      pfresh = -1;
      rc = (sp->coop ? cu_launch_coop : cu_launch)(d, fn, sp->grid[0], sp->grid[1], sp->grid[2], sp->block[0], sp->block[1],
                                                   sp->block[2], sp->smem, args);
      if (rc) rc = fail_dev(b, rc);
      else pfresh = prof_end(&c->pf, ev, g, sp->kname);
      for (i = 0; !rc && seq && i < g->nout; i++) cu_done_mark(d, g->outs[i]->val->dev, seq);
    } else if (sp->op == CU_STEP_GEMM) {
      cu_ptr pa = sp->a >= 0 ? inp[sp->a] : temp + (cu_ptr)sp->aoff;
      cu_ptr pb = sp->b >= 0 ? inp[sp->b] : temp + (cu_ptr)sp->boff;
      if (sp->m && sp->n) {
        if (!sp->k) rc = cu_memset_async(d, dev_of(g->outs[0]), 0, g->outs[0]->val->bytes);
        else rc = cu_gemm(d, g->outs[0]->t, sp->m, sp->n, sp->k, pa, pb, dev_of(g->outs[0]), sp->tf32);
        if (rc) rc = fail_dev(b, rc);
      }
    }
  }
  /* a kernel that can fail (a histogram whose range comes from the data)
  ** is waited for here, so that its outputs are never bound to a result
  ** that is not one: the error is this statement's, as on the cpu */
  if (!rc && p->errflag && p->nstep) {
    if ((rc = cu_sync(d))) rc = fail_dev(b, rc);
    else rc = check_kernel_error(b);
  }
  /* a filter's length: the count its kernel left in temp (zero when no
  ** kernel ran: an empty input) */
  if (!rc && p->count_out && p->nstep) {
    int64_t cnt = 0;
    if ((rc = cu_download(d, &cnt, temp + (cu_ptr)p->count_at, sizeof cnt))) rc = fail_dev(b, rc);
    else {
      g->outs[0]->val->count = cnt;
      /* the kernel wrote cnt elements, not the buffer's n */
      if (pfresh >= 0) c->pf.ks[pfresh].bytes -= (g->outs[0]->n - cnt) * (int64_t)rt_dtype_size(g->outs[0]->t);
    }
  }
  if (temp) cu_free(d, temp);   /* stream-ordered: reusable by later work */
  if (rc) for (i = 0; i < g->nout; i++) {
    rt_node *x = g->outs[i];
    if (x->val) { rt_value_unref(x->val); x->val = NULL; }
  }
  return rc;
}

static void cuda_close(rt_backend *b) {
  cuda_be *c = CB(b);
  prof_close(&c->pf);
  if (c->stats) {
    cu_cstats st;
    cu_call_stats(c->d, &st);
    fprintf(stderr, "gk-cu: driver calls=%llu launches=%llu copies=%llu memsets=%llu syncs=%llu mapped_reads=%llu"
            " launch_us=%.0f sync_us=%.0f\n",
            (unsigned long long)st.calls, (unsigned long long)st.launches, (unsigned long long)st.copies,
            (unsigned long long)st.memsets, (unsigned long long)st.syncs, (unsigned long long)st.mapped_reads,
            st.launch_s * 1e6, st.sync_s * 1e6);
  }
  cu_close(c->d);
  rt_free(b->mem, c, sizeof *c);
}

int rt_cuda_open(rt_mem *mem, rt_backend **out, rt_err *e) {
  char why[512] = "";
  if (!cu_available(why, sizeof why)) return rt_seterr(e, GK_EDEVICE, "cuda backend unavailable: %s", why);
  cuda_be *c = rt_calloc(mem, 1, sizeof *c);
  if (!c) return rt_seterr(e, GK_ENOMEM, "out of memory");
  if (cu_open(&c->d, why, sizeof why) != GK_OK) {
    rt_free(mem, c, sizeof *c);
    return rt_seterr(e, GK_EDEVICE, "cuda backend unavailable: %s", why);
  }
  rt_backend *b = &c->b;
  b->name = "cuda";
  b->mem = mem;
  b->alloc_value = cuda_alloc_value;
  b->prepare_group = cuda_prepare_group;
  b->run_group = cuda_run_group;
  b->read = cuda_read;
  b->write = cuda_write;
  b->sync = cuda_sync;
  b->copy_rate = cuda_copy_rate;
  b->free_storage = cuda_free_storage;
  b->close = cuda_close;
  b->impl = c;
  const char *v = getenv("GK_CU_MAPPED");
  c->mapped = !v || !*v ? 1 : !strcmp(v, "0") ? 0 : !strcmp(v, "2") ? 2 : 1;
  v = getenv("GK_CU_STATS");
  c->stats = v && *v && strcmp(v, "0");
  prof_open(c);
  *out = b;
  return GK_OK;
}
