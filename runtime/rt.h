/*
** runtime/rt.h -- the runtime's core types: host memory hook, error record,
** array values, and the backend interface both backends implement.
**
** A value (rt_value) is a reference-counted, contiguous, C-order array that
** lives on one backend: in host memory (cpu) or device memory (cuda).  A
** backend runs plan groups (runtime/plan.h), moves values to and from the
** host, and reports errors into an rt_err that the caller owns.
*/
#ifndef RT_H
#define RT_H

#include <stdarg.h>
#include <stdatomic.h>
#include "runtime/plan.h"

/* Host allocation hook (gk_config.alloc's contract). */
typedef struct rt_mem {
  void *(*fn)(void *ud, void *ptr, size_t old_size, size_t new_size);
  void *ud;
} rt_mem;

void *rt_alloc(rt_mem *m, size_t n);              /* NULL on failure */
void *rt_calloc(rt_mem *m, size_t count, size_t size); /* zeroed; NULL on failure or overflow */
void *rt_realloc(rt_mem *m, void *p, size_t old_n, size_t new_n);
void rt_free(rt_mem *m, void *p, size_t n);
void *rt_default_alloc(void *ud, void *ptr, size_t old_size, size_t new_size);

/* An error record: the first error wins until rt_err_clear. */
typedef struct rt_err {
  int status;          /* GK_OK or the first error's code */
  char msg[2048];      /* its message, without location */
} rt_err;

int rt_seterr(rt_err *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rt_err_clear(rt_err *e);

/* Where a value's data is. */
enum { RT_ON_HOST = 1, RT_ON_DEVICE = 2 };

typedef struct rt_backend rt_backend;

struct rt_value {
  int refs;                      /* references from nodes, variables, exports */
  gk_dtype t;
  int ndim;
  int64_t shape[GK_MAX_DIMS];
  int64_t n;                     /* element count */
  size_t bytes;                  /* n * element size */
  int where;                     /* RT_ON_HOST or RT_ON_DEVICE */
  void *host;                    /* host data when RT_ON_HOST */
  uint64_t dev;                  /* device pointer when RT_ON_DEVICE */
  void (*release)(void *ud, void *data); /* borrowed storage: called once at free, else NULL */
  void *release_ud;
  rt_backend *be;                /* the backend that owns the storage */
  /* A filter's output (RT_FILTER) is computed into a buffer of the input's
  ** length; the backend that ran it sets count (the elements selected), and
  ** the filter's value is rt_value_prefix(v, count): the first count
  ** elements, sharing v's storage.  base: the value whose storage this one
  ** is a prefix of (unref'd at free, never freed here), else NULL. */
  int64_t count;
  rt_value *base;
};

/* The backend interface.  Every function returns GK_OK or a status with the
** message in be->err. */
struct rt_backend {
  const char *name;              /* "cpu" or "cuda" */
  rt_mem *mem;                   /* host allocation hook (the context's) */
  rt_err err;                    /* this backend's last error */
  _Atomic int *interrupt;        /* set asynchronously to stop work; checked between chunks */
  /* Told when a kernel compile is slow (gk_config.compile's contract): the
  ** cuda backend calls it; NULL = none. */
  void (*compile_note)(void *ud, int done, const char *kernel, double ms);
  void *compile_ud;
  int (*alloc_value)(rt_backend *b, gk_dtype t, int ndim, const int64_t *shape, rt_value **out);
  /* Makes g ready to run: sets g->nlaunch, and g->prep where the backend
  ** needs one (the cuda backend lowers g to a kernel and a launch list; the
  ** cpu backend needs nothing, except under GK_NVRTC_CHECK, where it lowers
  ** and compiles the CUDA kernel to check it).  tf32: f32 matmul may use
  ** TF32.  A group taken from the plan cache with a copy of its prep skips
  ** this when rt_prep_rebind accepts it. */
  int (*prepare_group)(rt_backend *b, rt_group *g, int tf32);
  int (*run_group)(rt_backend *b, rt_group *g);
  int (*read)(rt_backend *b, rt_value *v, void *dst);         /* v's data to host dst (v->bytes) */
  int (*write)(rt_backend *b, rt_value *v, const void *src);  /* host src (v->bytes) into v */
  int (*sync)(rt_backend *b);
  /* Bytes per second a large device-to-device copy moves (read + write
  ** counted), measured by wall clock around the copy and a sync the first
  ** time it is asked, then cached: the yardstick a profile's GB/s is read
  ** against.  0 when it cannot be measured; NULL: the backend has none. */
  double (*copy_rate)(rt_backend *b);
  void (*free_storage)(rt_backend *b, rt_value *v);
  void (*close)(rt_backend *b);
  void *impl;                    /* backend state */
};

/* Value helpers (runtime/value.c). */
#define RT_MAX_ELEMENTS ((int64_t)1 << 34) /* elements in one array (64 GiB of f32), counting an empty dimension as 1: bigger is beyond any one machine here, and a lazy loop over it would run for minutes */
/* Element count and bytes of a shape; GK_ELIMIT past RT_MAX_ELEMENTS (the one size check). */
int rt_shape_count(int ndim, const int64_t *shape, size_t esize, int64_t *n, size_t *bytes, rt_err *e);
int rt_value_new(rt_backend *b, gk_dtype t, int ndim, const int64_t *shape, rt_value **out);
void rt_value_ref(rt_value *v);
void rt_value_unref(rt_value *v);
/* A 1-d value of v's first n elements sharing v's storage (v is ref'd and
** outlives it): a filter's result within its capacity buffer. */
int rt_value_prefix(rt_value *v, int64_t n, rt_value **out);
/* Reads one element of v as double / int64 (v read to host if needed). */
int rt_value_scalar(rt_backend *b, rt_value *v, double *f, int64_t *i);

/* Elementwise op loops (runtime/ops.c, expanded from runtime/ops.h): op on
** n elements of operand dtype ti (WHERE: in[0] bool, in[1], in[2] of ti)
** into out of dtype to.  The cpu backend and the constant folder use them. */
void rt_map_loop(int op, gk_dtype ti, gk_dtype to, const void *const in[3], void *out, int64_t n);
void rt_cast_loop(gk_dtype from, gk_dtype to, const void *in, void *out, int64_t n);

/* Prepared groups (runtime/cuda_lower.c).  A prep is the backend's; the
** compiler only copies (plan cache), compares (GK_PLAN_CACHE=verify), frees
** and prints it. */
struct rt_prep *rt_prep_copy(rt_mem *m, const struct rt_prep *p);   /* NULL on failure */
void rt_prep_free(rt_mem *m, struct rt_prep *p);                     /* p may be NULL */
int rt_prep_same(const struct rt_prep *a, const struct rt_prep *b);  /* same text and launch list */
/* Refreshes what changes from run to run in a group whose prep was copied
** from an earlier preparation of the same structure and sizes (the random
** streams' seeds and offsets); 0, or -1 when it must be prepared again (an
** input it read with vector loads is not 16-byte aligned now). */
int rt_prep_rebind(rt_group *g);
const char *rt_prep_source(const struct rt_prep *p);   /* generated source, or NULL */

/* Backends. */
int rt_cpu_open(rt_mem *mem, rt_backend **out, rt_err *e);
int rt_cuda_open(rt_mem *mem, rt_backend **out, rt_err *e);
int rt_cuda_available(char *why, size_t len);
/* The device ordinal a cuda backend runs on (GK_DEVICE); 0 for any other. */
int rt_cuda_device(rt_backend *b);

/* dtype helpers */
int rt_is_float(gk_dtype t);

#endif /* RT_H */
