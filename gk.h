/*
** gk.h -- the one public header of gk, an array language for NVIDIA GPUs.
**
** A host program opens a context, hands it arrays, evaluates gk source text
** in it and reads arrays back.  Everything inside the library is reached
** through the opaque handles declared here; nothing else is exported.
**
** Conventions (they hold for every function below):
**   - A fallible call returns an int status: GK_OK (0) or one of the GK_E*
**     codes.  The message of the FIRST error since the last successful call
**     is kept by the context and returned by gk_errmsg().
**   - A failed call leaves the context usable and every variable as it was.
**   - Strings passed in are copied; strings returned are owned by the context
**     and stay valid until the next call on that context.
**   - A context may be used by one thread at a time; different contexts are
**     fully independent and may be used from different threads at once.
**   - Nothing in the library calls exit() or abort().
*/
#ifndef GK_H
#define GK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GK_VERSION_MAJOR 0
#define GK_VERSION_MINOR 1
#define GK_VERSION_PATCH 0
#define GK_VERSION "0.1.0"
#define GK_VERSION_NUMBER (GK_VERSION_MAJOR * 10000 + GK_VERSION_MINOR * 100 + GK_VERSION_PATCH)

/* The most dimensions an array may have. */
#define GK_MAX_DIMS 8

/* Status codes.  ORDER: keep in step with the message table in runtime/api.c. */
enum {
  GK_OK = 0,      /* success */
  GK_ESYNTAX,     /* the source text does not parse */
  GK_ETYPE,       /* unknown name, wrong arity, dtype or shape mismatch */
  GK_ENOMEM,      /* host or device memory exhausted */
  GK_EDEVICE,     /* the CUDA driver reported an error, or no usable device */
  GK_EJIT,        /* NVRTC failed to compile a generated kernel */
  GK_EIO,         /* a file could not be read or written, or is malformed */
  GK_EMISUSE,     /* bad arguments to an API call (NULL, unknown name, short buffer) */
  GK_EVALUE,      /* a run-time value error: empty array, index out of range */
  GK_EINTERRUPT,  /* gk_interrupt() stopped the statement */
  GK_ELIMIT       /* a named limit was exceeded (nesting, source size, rank, bytes) */
};

/* Element types.  ORDER: keep in step with runtime/dtype.c. */
typedef enum { GK_BOOL, GK_I32, GK_I64, GK_F32, GK_F64 } gk_dtype;

typedef struct gk_ctx gk_ctx;   /* a gk context: variables, backend, caches */
typedef struct gk_stmt gk_stmt; /* a prepared statement (see gk_prepare) */

/* The library's version string, e.g. "0.1.0"; static storage. */
const char *gk_version(void);

/* Size in bytes of one element of dtype t; 0 for an invalid t. */
size_t gk_dtype_size(gk_dtype t);

/* Name of dtype t ("bool", "i32", "i64", "f32", "f64"); "?" when invalid. */
const char *gk_dtype_name(gk_dtype t);

/* ---------------------------------------------------------------------------
** Host hooks.  A gk_config, zero-initialised, means "use the defaults".
*/
typedef struct gk_config {
  /* Allocator for every host allocation the context makes.  realloc-like:
  ** alloc(ud, NULL, 0, n) allocates, alloc(ud, p, old, 0) frees and returns
  ** NULL, otherwise resizes.  Returning NULL for a non-zero size is an
  ** out-of-memory failure that gk reports as GK_ENOMEM. NULL = malloc/free. */
  void *(*alloc)(void *ud, void *ptr, size_t old_size, size_t new_size);
  void *alloc_ud;
  /* Receives everything `print` and bare expression statements write.
  ** NULL = stdout. */
  void (*output)(void *ud, const char *text, size_t len);
  void *output_ud;
  /* Called with each error message as it is raised (formatted as
  ** "FILE:LINE:COL: error: ..." plus source line and caret where known).
  ** NULL = no callback; the message is still kept for gk_errmsg. */
  void (*error)(void *ud, int status, const char *msg);
  void *error_ud;
  /* Backend: NULL or "" = default (cuda when usable, else cpu), "cpu", "cuda". */
  const char *backend;
} gk_config;

/* Opens a context on `backend` (NULL or "" = default, "cpu", "cuda").
** Returns NULL on failure (for example "cuda" with no usable GPU). */
gk_ctx *gk_open(const char *backend);

/* Opens a context with host hooks; cfg may be NULL.  On failure returns NULL
** and, when errmsg is not NULL, stores a static or malloc'd-by-nobody message
** pointer valid until the next gk_open_ex call on any thread. */
gk_ctx *gk_open_ex(const gk_config *cfg, const char **errmsg);

/* Frees the context and everything it owns.  NULL is a no-op. */
void gk_close(gk_ctx *g);

/* Name of the backend the context runs on: "cpu" or "cuda". */
const char *gk_backend(gk_ctx *g);

/* Parses, checks and runs `src` (statements separated by newlines or ';').
** `name` labels diagnostics (NULL = "<expr>").  Returns GK_OK or an error code;
** on error nothing of the failing statement is bound, earlier statements of
** the same text stay done. */
int gk_eval(gk_ctx *g, const char *src);
int gk_eval_named(gk_ctx *g, const char *src, const char *name);

/* The message of the first error since the last successful call; "" if none.
** Owned by the context. */
const char *gk_errmsg(gk_ctx *g);

/* The status of the last call on g. */
int gk_errcode(gk_ctx *g);

/* Binds `name` to a copy of host_data (C order, ndim dims of `shape`). */
int gk_set(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape,
           const void *host_data);

/* Binds `name` to the caller's host buffer WITHOUT copying.  The buffer must
** stay valid and unchanged until the variable is rebound or removed, or the
** context is closed; `release` (may be NULL) is called exactly once then. */
int gk_borrow(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape,
              void *host_data, void (*release)(void *ud, void *data), void *ud);

/* Like gk_borrow for a CUDA device pointer (cuda backend only; on the cpu
** backend it fails with GK_EMISUSE). */
int gk_borrow_device(gk_ctx *g, const char *name, gk_dtype t, int ndim,
                     const int64_t *shape, uint64_t device_ptr,
                     void (*release)(void *ud, uint64_t dptr), void *ud);

/* Type and shape of variable `name` (computing it if pending: shapes are
** always known without computing).  shape must have room for GK_MAX_DIMS. */
int gk_shape(gk_ctx *g, const char *name, gk_dtype *t, int *ndim, int64_t shape[GK_MAX_DIMS]);

/* Copies variable `name` into host_out (C order); out_bytes must be at least
** the array's size in bytes.  Computes the value if it is pending. */
int gk_get(gk_ctx *g, const char *name, void *host_out, size_t out_bytes);

/* Removes variable `name`. */
int gk_unset(gk_ctx *g, const char *name);

/* Computes every pending value; returns when the device is done. */
int gk_sync(gk_ctx *g);

/* Asks the statement running on g to stop at its next check point; safe to
** call from a signal handler or another thread.  The statement fails with
** GK_EINTERRUPT and binds nothing. */
void gk_interrupt(gk_ctx *g);

/* ---------------------------------------------------------------------------
** Compile once, run many.  gk_prepare parses and checks ONE statement of src
** and stores in *tail the rest of the text (NULL tail pointer allowed).  The
** plan is built on the first gk_step and reused while the dtypes and shapes
** of the variables it reads stay the same (new values, same shapes: no
** parsing, checking or planning).  *stmt is NULL when src held no statement.
*/
int gk_prepare(gk_ctx *g, const char *src, gk_stmt **stmt, const char **tail);
int gk_step(gk_stmt *s);
void gk_finalize(gk_stmt *s);

/* ---------------------------------------------------------------------------
** DLPack exchange.  The structs are DLPack's (dlpack.h, v0.8 ABI); gk.h
** declares them only as opaque pointers so that it does not depend on
** dlpack.h.  gk_to_dlpack returns a DLManagedTensor* (as void*) that owns a
** reference to the variable's buffer; the consumer calls its deleter.
** gk_from_dlpack binds `name` to the tensor without copying; gk calls the
** tensor's deleter exactly once, when the variable no longer needs it, or
** before returning if the call fails.
*/
int gk_to_dlpack(gk_ctx *g, const char *name, void **dl_managed_tensor);
int gk_from_dlpack(gk_ctx *g, const char *name, void *dl_managed_tensor);

/* 1 when src is complete: it parses, or it has an error that more text could
** not fix.  0 when it ends inside a construct (open bracket or string,
** trailing operator): a REPL then reads a continuation line. */
int gk_is_complete(const char *src);

/* ---------------------------------------------------------------------------
** Variables listing, for tools such as the REPL's :vars.  Calls fn once per
** variable, in name order. */
typedef struct gk_varinfo {
  const char *name;
  gk_dtype dtype;
  int ndim;
  const int64_t *shape;
  size_t bytes;
  const char *where;  /* "cpu", "cuda" or "pending" */
} gk_varinfo;
int gk_vars(gk_ctx *g, void (*fn)(void *ud, const gk_varinfo *v), void *ud);

/* Options, by name: "plan" (0/1: print the plan of every kernel launched),
** "cuda" (0/1: also print generated CUDA source), "fusion" (0/1),
** "tf32" (0/1: allow tf32 in matmul), "time" (0/1). */
int gk_option(gk_ctx *g, const char *name, int value);

#ifdef __cplusplus
}
#endif
#endif /* GK_H */
