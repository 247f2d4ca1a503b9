/*
** gk.h -- the one public header of gk, an array language for NVIDIA GPUs.
**
** A host program opens a context, hands it arrays, evaluates gk source text
** in it and reads arrays back:
**
**     gk_ctx *g = gk_open(NULL);                     // cuda if usable, else cpu
**     int64_t shape[2] = {3, 4};
**     gk_set(g, "m", GK_F32, 2, shape, data);        // copies data
**     if (gk_eval(g, "s = sum(rows(m))") != GK_OK) fputs(gk_errmsg(g), stderr);
**     float s[3];
**     gk_get_as(g, "s", GK_F32, s, sizeof s);        // says what it expects
**     gk_close(g);
**
** Everything inside the library is reached through the opaque handles
** declared here; nothing else is exported.  docs/embedding.md is the guide.
**
** Conventions (they hold for every function below):
**   - A fallible call returns an int status: GK_OK (0) or one of the GK_E*
**     codes.  gk_errmsg() gives the message of the last call on the context
**     ("" after a call that succeeded); within one call the FIRST error
**     raised is the one kept (the cause, not its consequences).
**   - A failed call leaves the context usable and every variable as it was
**     (for gk_eval: as it was before the failing statement).
**   - Strings passed in are copied (or only read during the call); strings
**     returned are owned by the context and stay valid until the next call on
**     that context.
**   - A context may be used by one thread at a time; different contexts are
**     fully independent and may be used from different threads at once.
**   - Passing a NULL context returns GK_EMISUSE (or does nothing).
**   - Nothing in the library calls exit() or abort(), or writes to stderr
**     (except the GK_DEBUG traces asked for in the environment).
*/
#ifndef GK_H
#define GK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Compile-time version; gk_version() is the run-time one (they differ when
** a program runs against a newer libgk.so than the gk.h it was built with). */
#define GK_VERSION_MAJOR 0
#define GK_VERSION_MINOR 1
#define GK_VERSION_PATCH 0
#define GK_VERSION "0.1.0"
#define GK_VERSION_NUMBER (GK_VERSION_MAJOR * 10000 + GK_VERSION_MINOR * 100 + GK_VERSION_PATCH)

/* The most dimensions an array may have. */
#define GK_MAX_DIMS 8

/* Status codes.  ORDER: keep in step with gk_errstr()'s table in api/api.c. */
enum {
  GK_OK = 0,      /* success */
  GK_ESYNTAX,     /* the source text does not parse */
  GK_ETYPE,       /* unknown name, wrong arity, dtype or shape mismatch */
  GK_ENOMEM,      /* host or device memory exhausted (also: the allocator hook said no) */
  GK_EDEVICE,     /* the CUDA driver reported an error, or no usable device */
  GK_EJIT,        /* NVRTC failed to compile a generated kernel */
  GK_EIO,         /* a file could not be read or written, or is malformed */
  GK_EMISUSE,     /* bad arguments to an API call (NULL, unknown name, short buffer, wrong backend) */
  GK_EVALUE,      /* a run-time value error: empty array, index out of range */
  GK_EINTERRUPT,  /* gk_interrupt() stopped the statement */
  GK_ELIMIT       /* a named limit was exceeded (nesting, source size, rank, bytes) */
};

/* Element types.  ORDER: keep in step with RT_DTYPES in runtime/ops.h. */
typedef enum { GK_BOOL, GK_I32, GK_I64, GK_F32, GK_F64 } gk_dtype;

typedef struct gk_ctx gk_ctx;   /* a gk context: variables, backend, caches */
typedef struct gk_stmt gk_stmt; /* a prepared statement (see gk_prepare) */

/* The library's version string, e.g. "0.1.0"; static storage. */
const char *gk_version(void);

/* The library's GK_VERSION_NUMBER (major*10000 + minor*100 + patch). */
int gk_version_number(void);
/* sizeof(gk_config) in this library: a binding that declares gk_config
** itself (ctypes, another language's FFI) checks its own size against it,
** since gk_open_ex reads the whole struct. */
size_t gk_config_size(void);

/* A short English description of a status code ("out of memory"); static
** storage; "unknown status" for a value that is not a GK_* code. */
const char *gk_errstr(int status);

/* Size in bytes of one element of dtype t (bool is one byte, 0 or 1); 0 for
** an invalid t. */
size_t gk_dtype_size(gk_dtype t);

/* Name of dtype t ("bool", "i32", "i64", "f32", "f64"); "?" when invalid.
** Static storage. */
const char *gk_dtype_name(gk_dtype t);

/* The names of the builtin functions (sum, exp, softmax, ...), NULL-terminated,
** in the order of the language's table; static storage.  For tools: completion,
** help, documentation generators. */
const char *const *gk_builtin_names(void);

/* ---------------------------------------------------------------------------
** Contexts and host hooks.  A gk_config, zero-initialised, means "use the
** defaults".  The struct is copied by gk_open_ex; the hooks and their ud
** pointers must stay valid until gk_close (and, if a DLPack export outlives
** the context, until the last export's deleter has returned).
*/
typedef struct gk_config {
  /* Allocator for every host allocation the context makes (lua_Alloc's
  ** contract): alloc(ud, NULL, 0, n) allocates n bytes, alloc(ud, p, old, 0)
  ** frees p and returns NULL, otherwise it resizes p from old to n bytes.
  ** old is the size gk asked for.  Returning NULL for a non-zero size is an
  ** out-of-memory failure that the call reports as GK_ENOMEM, leaving the
  ** context and its variables as they were.  The cpu backend's worker
  ** threads allocate scratch memory too, but gk serialises the calls of one
  ** context (a per-context lock), so the hook needs no lock of its own unless
  ** several contexts share its ud.  Memory must be aligned for any type
  ** (as malloc's).  NULL = malloc/realloc/free.  (A few helpers -- .npy file
  ** headers, histogram and scan scratch -- still use malloc directly.) */
  void *(*alloc)(void *ud, void *ptr, size_t old_size, size_t new_size);
  void *alloc_ud;
  /* Receives everything `print`, bare expression statements and the "plan"
  ** option write, in pieces of len bytes (not NUL-terminated; a piece may
  ** hold several lines).  Called on the thread running the statement.
  ** NULL = stdout. */
  void (*output)(void *ud, const char *text, size_t len);
  void *output_ud;
  /* Called with each failing call's status and message (formatted as
  ** "FILE:LINE:COL: error: ...\n", source line and caret, where the error has
  ** a place in source text), once per failing call, before the call returns.
  ** msg is the string gk_errmsg will return.  NULL = no callback.  gk never
  ** prints errors itself. */
  void (*error)(void *ud, int status, const char *msg);
  void *error_ud;
  /* Backend: NULL or "" = $GK_BACKEND, else default (cuda when a usable GPU
  ** and driver are found, else cpu); "cpu"; "cuda".  Read during gk_open_ex
  ** only. */
  const char *backend;
  /* Told when a kernel compile is slow, so that an interactive host can say
  ** so (gk's CLI prints a one-line status in its REPL): compile(ud, 0,
  ** kernel, ms) once a compile has run for 500 ms -- called on a gk thread
  ** while the statement's thread waits for the compile -- then
  ** compile(ud, 1, kernel, total_ms) on the statement's thread when it
  ** ends.  Compiles under 500 ms and memory or disk cache hits say nothing.
  ** cuda backend (and any backend under GK_NVRTC_CHECK); NULL = none.  This
  ** is the interactive guarantee gk builds: a status while the compile
  ** runs -- not an unfused fallback run meanwhile. */
  void (*compile)(void *ud, int done, const char *kernel, double ms);
  void *compile_ud;
} gk_config;

/* Opens a context on `backend` (NULL or "" = default, "cpu", "cuda") with the
** default hooks.  Returns NULL on failure (for example "cuda" with no usable
** GPU, or out of memory); use gk_open_ex to learn why.  The context is the
** caller's until gk_close. */
gk_ctx *gk_open(const char *backend);

/* Opens a context with host hooks; cfg may be NULL (= defaults).  On failure
** returns NULL and, when errmsg is not NULL, sets *errmsg to a message in
** thread-local storage, valid until the next gk_open_ex on the same thread. */
gk_ctx *gk_open_ex(const gk_config *cfg, const char **errmsg);

/* Frees the context and everything it owns: variables, caches, and every
** statement prepared on it and not yet finalized (their handles become
** invalid).  Borrowed buffers are released (their release callbacks run
** now).  DLPack tensors exported from it stay valid: the backend is kept
** until the last one's deleter runs.  NULL is a no-op. */
void gk_close(gk_ctx *g);

/* Name of the backend the context runs on: "cpu" or "cuda" (static
** storage); "none" for NULL. */
const char *gk_backend(gk_ctx *g);

/* Parses, checks and runs `src` (statements separated by newlines or ';').
** The whole text is parsed first: a syntax error anywhere runs nothing.
** Statements then run in order; at the first that fails the call returns
** its status: that statement binds nothing, earlier ones stay done.
** Values are computed lazily (when printed, saved, read by gk_get, or by
** gk_sync).  `name` labels diagnostics (NULL = "<expr>"); it is only read
** during the call.  Errors: GK_ESYNTAX, GK_ETYPE, GK_EVALUE, GK_EIO,
** GK_ENOMEM, GK_EDEVICE, GK_EJIT, GK_ELIMIT, GK_EINTERRUPT, GK_EMISUSE (src
** NULL). */
int gk_eval(gk_ctx *g, const char *src);
int gk_eval_named(gk_ctx *g, const char *src, const char *name);

/* The message of the last call on g; "" if it succeeded.  Owned by the
** context, valid until the next call on it.  Never NULL. */
const char *gk_errmsg(gk_ctx *g);

/* The status of the last call on g (GK_EMISUSE for NULL). */
int gk_errcode(gk_ctx *g);

/* Binds `name` to a COPY of host_data: ndim (0..GK_MAX_DIMS) dims of
** `shape`, C order, elements of dtype t (bool: any non-zero byte is true).
** The caller keeps host_data; it may be NULL when the array is empty.
** Rebinding a name replaces its value (values already computed from the old
** one keep it).  Errors: GK_EMISUSE (invalid name -- it must be an
** identifier that is not a keyword --, dtype, ndim, negative dimension, NULL
** shape or data), GK_ELIMIT (size overflows), GK_ENOMEM, GK_EDEVICE. */
int gk_set(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape,
           const void *host_data);

/* Binds `name` to the caller's host buffer WITHOUT copying (cpu backend).
** Lifetime rule: host_data must stay valid and unchanged until gk calls
** release(ud, host_data) -- exactly once, when no variable or pending value
** uses the buffer any more (the name is rebound or unset and what was
** computed from it is computed, or the context is closed).  If the call
** fails, release has been called before it returns.  release may be NULL
** (then the buffer must outlive the context).  host_data must be aligned to
** its element size; bool elements must be 0 or 1.  On the cuda backend
** kernels cannot read pageable host memory: the data is copied to the device
** during the call and release is called before it returns.  Errors: as
** gk_set. */
int gk_borrow(gk_ctx *g, const char *name, gk_dtype t, int ndim, const int64_t *shape,
              void *host_data, void (*release)(void *ud, void *data), void *ud);

/* Like gk_borrow for a CUDA device pointer (a CUdeviceptr in the context's
** device and CUDA primary context) on the cuda backend: no copy; gk reads it
** on its stream, so work that writes it on another stream must be finished
** (synchronised) before the call.  release(ud, device_ptr) is called exactly
** once, when gk no longer needs the buffer (or before a failing call
** returns).  On the cpu backend it fails with GK_EMISUSE (and releases). */
int gk_borrow_device(gk_ctx *g, const char *name, gk_dtype t, int ndim,
                     const int64_t *shape, uint64_t device_ptr,
                     void (*release)(void *ud, uint64_t dptr), void *ud);

/* Type and shape of variable `name`, without computing it (shapes are always
** known).  Any of t, ndim, shape may be NULL; shape must have room for
** GK_MAX_DIMS.  Errors: GK_EMISUSE (no such variable). */
int gk_shape(gk_ctx *g, const char *name, gk_dtype *t, int *ndim, int64_t shape[GK_MAX_DIMS]);

/* Copies variable `name`, converted to dtype `want`, into host_out (C order;
** bool as bytes 0/1).  out_bytes must EQUAL the element count times
** gk_dtype_size(want).  The conversion is gk's own cast op (`f64(x)`,
** `i32(x)`, ...), numpy's astype: to a float, the nearest value (f64 to f32
** may overflow to +-inf); float to integer truncates toward zero, and NaN or
** a value outside the integer type gives its lowest value (INT32_MIN,
** INT64_MIN); i64 to i32 keeps the low 32 bits; to bool, != 0 (NaN is
** true); from bool, 0 or 1.  want equal to the variable's dtype copies the
** bytes.  Computes the value if it is pending (errors of that computation
** are returned, e.g. GK_EVALUE for max of an empty array, GK_ENOMEM; the
** variable stays pending).  Errors: GK_EMISUSE (no such variable, want not
** a gk_dtype, out_bytes not the size, NULL buffer; nothing is written). */
int gk_get_as(gk_ctx *g, const char *name, gk_dtype want, void *host_out, size_t out_bytes);

/* One value, converted as gk_get_as does (sqlite3_column_double's shape):
** the variable must hold exactly one element (a scalar, or any shape of
** size 1), else GK_EMISUSE and *out is not written.  gk_get_i64 of a float
** truncates (NaN and out of range: INT64_MIN). */
int gk_get_f64(gk_ctx *g, const char *name, double *out);
int gk_get_i64(gk_ctx *g, const char *name, int64_t *out);

/* Copies variable `name` in its own dtype (no conversion) into host_out.
** out_bytes must EQUAL the array's size in bytes (element count times
** gk_dtype_size of its dtype, gk_shape tells both): a buffer sized for
** another dtype -- a double for an f32 scalar -- is refused with GK_EMISUSE
** instead of being filled in part.  (gk 0.1.0 accepted a larger buffer;
** callers that relied on that pass the exact size, or call
** gk_get_as, which also states the dtype expected.)  Otherwise as
** gk_get_as. */
int gk_get(gk_ctx *g, const char *name, void *host_out, size_t out_bytes);

/* Removes variable `name`.  Errors: GK_EMISUSE (no such variable). */
int gk_unset(gk_ctx *g, const char *name);

/* Computes every pending value; returns when the device is done. */
int gk_sync(gk_ctx *g);

/* Computes every pending value without waiting for the device: on cuda the
** kernels are queued on the context's stream, in order, and the call returns
** once they are (a later read, gk_to_dlpack or gk_sync waits for them); on
** the cpu backend it is gk_sync.  For a loop of gk_step + gk_flush that keeps
** the GPU busy while the host prepares the next step (torch's asynchronous
** launches).  Errors as gk_sync's; those the device reports later come from
** the call that waits. */
int gk_flush(gk_ctx *g);

/* Asks the statement running on g to stop at its next check point; safe to
** call from a signal handler or another thread.  The statement fails with
** GK_EINTERRUPT and binds nothing. */
void gk_interrupt(gk_ctx *g);

/* ---------------------------------------------------------------------------
** Compile once, run many (sqlite3_prepare_v2's shape).
**
** gk_prepare parses ONE statement -- the first of src -- and stores in
** *stmt a handle that runs it; *tail (if tail is not NULL) is set to the
** text after it, so a script is a loop over the tail.  *stmt is NULL when
** src holds no statement (only blanks and comments); that is GK_OK.  The
** whole of src must parse (GK_ESYNTAX otherwise, *stmt NULL).  The statement
** is owned by the context; gk_finalize frees it (gk_close frees those left).
**
** gk_step runs the statement against the variables' CURRENT values: rebind
** its inputs with gk_set / gk_borrow between steps and step again.  A step
** does no parsing; it type-checks and builds the statement's graph (a few
** microseconds, see docs/embedding.md for measured numbers), and the fused
** plan is made when the result is computed.  Errors as gk_eval's; a failed
** step binds nothing.
*/
int gk_prepare(gk_ctx *g, const char *src, gk_stmt **stmt, const char **tail);

/* A place in source text: 1-based line and column (columns count bytes). */
typedef struct gk_pos { int line, col; } gk_pos;

/* gk_prepare for a statement of a named file or script.  Its diagnostics, at
** prepare and at every step, read `name:LINE:COL: error: ...` (name NULL =
** "<expr>"; the string is copied), LINE:COL counted in the whole file: *pos
** is where src's first byte is in it (pos NULL = 1:1), and on success *pos
** is moved to where *tail starts, so a loop over the tail carries the
** position along (docs/embedding.md).  gk_prepare is gk_prepare_named(g,
** src, NULL, NULL, stmt, tail): positions count from src.  Errors: as
** gk_prepare, GK_EMISUSE for a line or column below 1. */
int gk_prepare_named(gk_ctx *g, const char *src, const char *name, gk_pos *pos, gk_stmt **stmt,
                     const char **tail);
int gk_step(gk_stmt *s);
void gk_finalize(gk_stmt *s);   /* NULL is a no-op */

/* ---------------------------------------------------------------------------
** DLPack exchange (the v0.8 ABI: DLManagedTensor with manager_ctx and
** deleter).  gk.h passes the structs as void* so that it does not depend on
** dlpack.h; cast to/from DLManagedTensor*.  Works with PyTorch
** (torch.utils.dlpack), CuPy (cupy.from_dlpack / toDlpack) and JAX
** (jax.dlpack) through a PyCapsule named "dltensor".
**
** gk_to_dlpack computes `name` and returns in *dl_managed_tensor a tensor
** that SHARES the variable's buffer (no copy; compact C order, strides NULL;
** kDLCPU on the cpu backend, kDLCUDA on the context's device (GK_DEVICE,
** default 0) on the cuda backend, whose
** work is finished before the call returns; bool is kDLBool, 8 bits).  The
** consumer must call its deleter exactly once; the deleter may run on any
** thread and even after gk_close.  gk's values are immutable: the consumer
** must not write through the tensor.  Errors: GK_EMISUSE (no variable, NULL
** argument), errors of computing it, GK_ENOMEM (nothing handed out).
**
** gk_from_dlpack binds `name` to the tensor WITHOUT copying and takes
** ownership of it: gk calls its deleter exactly once -- when the variable no
** longer needs it, or before returning if the call fails (any error,
** GK_ENOMEM included).  Accepted: bool (kDLBool, 8 bits, values 0/1), int32,
** int64, float32, float64, lanes 1, compact C order (strides NULL or C
** strides; dims of size 1 may have any stride), the data pointer plus
** byte_offset aligned to the element size, on kDLCPU (or kDLCUDAHost) for
** the cpu backend, kDLCUDA (on the context's device) or kDLCUDAManaged for
** the cuda backend.
** Anything else fails with GK_EMISUSE and a message naming the problem.
** The producer must not modify the data while gk holds it.
*/
int gk_to_dlpack(gk_ctx *g, const char *name, void **dl_managed_tensor);
int gk_from_dlpack(gk_ctx *g, const char *name, void *dl_managed_tensor);

/* 1 when src is complete: it parses, or it has an error that more text could
** not fix.  0 when it ends inside a construct (open bracket or string,
** trailing operator): a REPL then reads a continuation line.  Needs no
** context; uses malloc. */
int gk_is_complete(const char *src);

/* ---------------------------------------------------------------------------
** Variables listing, for tools such as the REPL's :vars.  Calls fn once per
** variable, in name order; the gk_varinfo and its strings are valid during
** the callback only, which must not call back into g. */
typedef struct gk_varinfo {
  const char *name;
  gk_dtype dtype;
  int ndim;
  const int64_t *shape;
  size_t bytes;
  const char *where;  /* "cpu", "cuda" or "pending" */
} gk_varinfo;
int gk_vars(gk_ctx *g, void (*fn)(void *ud, const gk_varinfo *v), void *ud);

/* Counters for tools such as the REPL's profile totals and its status line
** for a long statement. */
typedef struct gk_progress {
  int64_t kernels;   /* kernels run since the context opened */
  int64_t planned;   /* kernels plus those still to run in the plan now running */
  int jit;           /* 1 while a kernel is being lowered or compiled */
  double run_ms;     /* wall time spent running kernels (under "profile" each is waited for) */
  double jit_ms;     /* wall time spent lowering and compiling kernels (plan-cache hits: none) */
  int64_t bytes;     /* bytes read and written by the kernels run under "profile" */
} gk_progress;
/* Fills *p; GK_EMISUSE for NULL.  Unlike other calls it may run on another
** thread while g evaluates (every field is read atomically; a status line
** for a long statement polls it), and it sets no error. */
int gk_get_progress(gk_ctx *g, gk_progress *p);

/* The bytes per second a large copy within the backend's memory moves (read
** plus write), the yardstick of a profile's "of copy" column: the cuda
** backend measures a 128 MiB device-to-device copy the first time it is asked
** (about a millisecond) and keeps the answer; 0 where there is none (the cpu
** backend) or for NULL.  Call it from the thread that owns g. */
double gk_copy_rate(gk_ctx *g);

/* The "did you mean" hint that gk's error for an unknown name or function
** carries, for tools such as the REPL's :help: "; gk writes it scan(x)" for
** a spelling from numpy, torch or Julia, "; did you mean 'softmax'?" for the
** closest builtin, user function or variable of g by edit distance (g may be
** NULL: builtins only), "" when nothing is close.  Written NUL-terminated
** into buf (n bytes, cut if longer); returns buf.  Sets no error. */
const char *gk_suggest(gk_ctx *g, const char *name, char *buf, size_t n);

/* Options, by name: "plan" (0/1: print the plan of every kernel launched, to
** the output hook), "cuda" (0/1: also print generated CUDA source),
** "fusion" (0/1), "tf32" (0/1: allow tf32 in matmul), "time" (accepted, no
** effect in the library), "digits" (1..17: significant digits of printed
** floats, numpy's print precision; 0 = the default, 6), "linewidth"
** (10..4096: numpy's max_line_width for printed arrays; 0 = the default,
** 75), "last" (0/1: an expression statement that prints a value also binds
** it to the variable `_`, as the REPL does), "profile" (0/1: after each
** kernel, a line to the output hook: its number, group kind, wall time,
** bytes it reads and writes once, GB/s, the time spent lowering/compiling
** it when that happened now, and its fused ops; each kernel is waited for,
** so the times are its own), "charts" (0: none, the default; 1: ASCII;
** 2: Unicode: a printed hist(...) result is followed by a bar chart of its
** bins, and plot() draws in that alphabet -- ASCII when 0).  Errors: GK_EMISUSE (unknown name, a value
** out of range: the on/off options take exactly 0 or 1). */
int gk_option(gk_ctx *g, const char *name, int value);

#ifdef __cplusplus
}
#endif
#endif /* GK_H */
