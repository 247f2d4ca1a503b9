/*
** runtime/host.h -- host-side numeric building blocks of the CPU backend.
**
** Pure functions over raw, contiguous, C-order typed buffers.  They know
** nothing about the language, the IR or contexts: the CPU backend's fused
** group executor calls them for everything that is not an elementwise chain
** or a plain reduction.  Modules and prefixes:
**
**   par_   host_par.c   a tiny lazily-started pthread pool (par_for)
**   rng_   host_rng.c   Philox4x32-10 and the rand/randn streams
**   fmt_   host_fmt.c   growable string buffer; numpy-exact array printing
**   npy_   host_npy.c   .npy load and save
**   host_  host_ops.c   scans, histogram, filter/partition, transpose,
**                       permute, matmul, gather, min/max
**
** Conventions: sizes and counts are int64_t; a fallible function returns a
** GK_* status from gk.h and, where it takes `char *err, size_t errlen`,
** writes a one-line message there (err may be NULL).  Nothing here calls
** exit() or abort(); nothing keeps global state except the thread pool.
*/
#ifndef GK_RUNTIME_HOST_H
#define GK_RUNTIME_HOST_H

#include <stddef.h>
#include <stdint.h>
#include "gk.h"

/* ===================================================================== par
** par_for(n, grain, fn, ctx) splits [0,n) into chunks and calls
** fn(ctx, begin, end) once per chunk, on up to par_threads() threads (the
** caller's thread is one of them).  Chunk boundaries depend ONLY on n and
** grain (never on the thread count or on scheduling): every chunk but the
** last has exactly par_chunk_size(n, grain) elements, so a caller that keeps
** one partial result per chunk (index begin / par_chunk_size) and combines
** them in chunk order gets bit-identical results on every run and machine.
** Runs inline when that makes one chunk (n <= grain), when the pool has no
** workers, or when the pool is busy (another thread's par_for, or a nested
** call from inside fn).
** fn must not fail; it records failures in ctx.  Returns GK_OK.
*/
#define PAR_MAX_CHUNKS 256 /* chunks per par_for: enough to balance 64 threads */
#define PAR_MAX_THREADS 64 /* cap on GK_THREADS: more buys nothing here */

typedef void (*par_fn)(void *ctx, int64_t begin, int64_t end);
int par_threads(void);                         /* threads par_for may use (>=1) */
int64_t par_chunk_size(int64_t n, int64_t grain); /* elements per chunk (>=1) */
int64_t par_nchunks(int64_t n, int64_t grain); /* chunks par_for will make */
int par_for(int64_t n, int64_t grain, par_fn fn, void *ctx);
/* The interrupt flag (gk_interrupt's) of the work this thread runs, NULL =
** none.  While it is set, par_for starts no more chunks (on any of its
** threads) and returns GK_EINTERRUPT, and the host_* loops without a par_for
** (a serial histogram, npy_save's writes) stop between blocks: their results
** are then garbage, and the caller must check host_stopped() and fail. */
void host_interrupt(_Atomic int *flag);
int host_stopped(void);

/* ===================================================================== rng
** Philox4x32-10 and the two streams built on it.  The exact definition is in
** the comment at the top of host_rng.c; the CUDA backend reproduces it bit for
** bit.  Element c of a stream (c = stream offset + index) depends only on
** (seed, c), never on the size of the request or the machine.
*/
void rng_philox(uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
float rng_uniform_at(uint64_t seed, uint64_t c); /* U[0,1) */
float rng_normal_at(uint64_t seed, uint64_t c);  /* N(0,1) */
void rng_fill_uniform(uint64_t seed, uint64_t offset, float *out, int64_t n);
void rng_fill_normal(uint64_t seed, uint64_t offset, float *out, int64_t n);

/* ===================================================================== fmt
** A growable NUL-terminated string.  Zero-initialise (or fmt_init) before
** use; fmt_free releases it.  The first allocation failure makes the buffer
** "failed": every later append is a no-op that returns GK_ENOMEM, and
** b->status keeps GK_ENOMEM (or GK_ELIMIT past FMT_MAX_BYTES), so a caller
** may append many pieces and check once at the end.
*/
#define FMT_MAX_BYTES ((size_t)1 << 30) /* 1 GiB: no printout is bigger */

typedef struct fmt_buf {
  char *data;   /* NUL-terminated text; NULL until the first append */
  size_t len;   /* bytes of text, not counting the NUL */
  size_t cap;   /* bytes allocated at data */
  int status;   /* GK_OK, or the first failure (GK_ENOMEM / GK_ELIMIT) */
} fmt_buf;

void fmt_init(fmt_buf *b);
void fmt_free(fmt_buf *b);
void fmt_reset(fmt_buf *b);                       /* len = 0, keeps memory */
int fmt_append(fmt_buf *b, const char *s, size_t n);
int fmt_puts(fmt_buf *b, const char *s);
int fmt_putc(fmt_buf *b, char c);
int fmt_spaces(fmt_buf *b, size_t n);
int fmt_printf(fmt_buf *b, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Appends the array exactly as numpy.array2string(a, precision=6,
** threshold=1000, edgeitems=3, max_line_width=75) prints it, except that
** booleans are `true`/`false`.  ndim 0 appends a scalar (see fmt_scalar).
** ndim must be 0..GK_MAX_DIMS.  Returns GK_OK, GK_ENOMEM, or GK_EMISUSE for
** a bad dtype/ndim. */
int fmt_array(fmt_buf *b, gk_dtype t, int ndim, const int64_t *shape, const void *data);

/* Appends one scalar: ints as %lld, bools true/false, floats "%.6g" with
** ".0" appended when that has no '.', 'e', "inf" or "nan" (45.0 -> "45.0",
** 1e6 -> "1e+06", -0.0 -> "-0.0", NaN -> "nan"). */
int fmt_scalar(fmt_buf *b, gk_dtype t, const void *data);

/* ===================================================================== npy
** .npy files.  npy_load reads versions 1.0, 2.0 and 3.0, little-endian or
** byte-order-free, C order, dtypes bool/i4/i8/f4/f8.  It validates the whole
** header and the file size BEFORE calling alloc_data(ud, t, ndim, shape,
** bytes) once for the data (bytes may be 0 for an empty array: then a NULL
** return is not an error), then reads the data into it.  On failure after
** alloc_data succeeded the buffer is the caller's to free.  Returns GK_OK,
** GK_EIO (any unreadable or malformed file; the message names it),
** GK_ENOMEM (alloc_data returned NULL).  Bool data is normalised to 0/1.
** npy_save writes format 1.0 (2.0 when the header needs it), data aligned
** to 64 bytes, to a temporary file renamed over path.
*/
#define NPY_MAX_HEADER (1u << 20) /* 1 MiB: real headers are ~100 bytes */

typedef void *(*npy_alloc_fn)(void *ud, gk_dtype t, int ndim, const int64_t *shape,
                              size_t bytes);
int npy_load(const char *path, npy_alloc_fn alloc_data, void *ud, char *err, size_t errlen);
int npy_save(const char *path, gk_dtype t, int ndim, const int64_t *shape, const void *data,
             char *err, size_t errlen);

/* ===================================================================== ops
** All buffers contiguous, C order, of dtype t; sizes int64_t.  A dtype the
** function does not support gives GK_EMISUSE.
*/
typedef enum { HOST_SUM, HOST_PROD, HOST_MAX, HOST_MIN } host_op; /* ORDER: names in host_op_name */
const char *host_op_name(host_op op);

/* Inclusive or exclusive scan of x (rows x cols, row-major) into y (same
** shape; may equal x).  axis 1: each row is scanned; axis 0: each column.
** A vector is rows = 1, axis = 1.  Exclusive identities: sum 0, prod 1,
** max the lowest value (-inf), min the highest (+inf).  i32/i64/f32/f64.
** Integer sums and products wrap (two's complement).  f32 sums and
** products accumulate in double and round each output.  NaN propagates
** through max/min like numpy.maximum.accumulate.  A long vector is scanned
** in parallel chunks (carry added per chunk): deterministic, but float
** sums may differ from a serial loop in the last bits. */
int host_scan(gk_dtype t, host_op op, int exclusive, const void *x, void *y, int64_t rows,
              int64_t cols, int axis);

/* Smallest and largest value of x[0..n) as doubles (i64 beyond 2^53 is
** rounded); NaN if any element is NaN (numpy's min/max).  n must be > 0
** (GK_EVALUE otherwise).  bool/i32/i64/f32/f64. */
int host_minmax(gk_dtype t, const void *x, int64_t n, double *mn, double *mx);

/* The allocator host_* calls on this thread take their scratch memory from
** (histogram edges and private counts, scan and filter jobs, matmul
** panels): gk_config.alloc's contract; NULL = malloc.  The cpu backend sets
** the context's hook around each group it runs, so the hook's limit holds. */
typedef void *(*host_alloc_fn)(void *ud, void *p, size_t old_size, size_t new_size);
void host_scratch(host_alloc_fn fn, void *ud);

/* numpy.histogram(x, bins=nbins, range=(lo, hi)) counts: nbins equal bins,
** last bin closed, values outside [lo, hi] and NaN ignored; a zero-width
** range is widened by 0.5 each side.  The arithmetic (float32 for f32 data,
** float64 otherwise) and the edge correction are numpy's, so counts match
** numpy exactly.  GK_EVALUE when lo > hi, either is not finite, or nbins < 1;
** GK_ELIMIT when the bins have no finite width in that arithmetic (hi - lo
** overflows, or two edges coincide: numpy's "Too many bins for data range").
** host_hist_auto is numpy.histogram(x, bins=nbins) (range = data min/max;
** GK_EVALUE when that range is not finite; empty x uses (0, 1)).
** i32/i64/f32/f64 (bool as 0/1). */
int host_hist(gk_dtype t, const void *x, int64_t n, int64_t nbins, double lo, double hi,
              int64_t *counts);
int host_hist_auto(gk_dtype t, const void *x, int64_t n, int64_t nbins, int64_t *counts);

/* Stable compaction: out gets x[i] for each i with mask[i] != 0, in order;
** *count the number written (out must have room for n).  All dtypes. */
int host_filter(gk_dtype t, const void *x, const uint8_t *mask, int64_t n, void *out,
                int64_t *count);
/* Stable partition: the elements with mask true, in order, then the rest in
** order; *ntrue the number of trues.  out must not alias x.  All dtypes. */
int host_partition(gk_dtype t, const void *x, const uint8_t *mask, int64_t n, void *out,
                   int64_t *ntrue);
/* Number of non-zero mask bytes. */
int64_t host_count(const uint8_t *mask, int64_t n);

/* out (cols x rows) = transpose of x (rows x cols); cache-blocked; all dtypes. */
int host_transpose(gk_dtype t, const void *x, int64_t rows, int64_t cols, void *out);
/* numpy.transpose(x, axes): out's dim i is x's dim axes[i].  ndim 1..8;
** axes must be a permutation (GK_EVALUE otherwise).  All dtypes. */
int host_permute(gk_dtype t, const void *x, int ndim, const int64_t *shape, const int *axes,
                 void *out);

/* C (M x N) = A (M x K) @ B (K x N), row-major.  f32 accumulates in f32:
** each element sums its products over blocks of 256 k's in f32, and the
** block sums are added into C in f32 (HOST_MM_KB in host_ops.c); f64
** likewise in f64; i32/i64 exactly, with
** wraparound.  K = 0 gives zeros.  Parallel over row blocks, B packed into
** column panels first (a temporary copy of B; without memory for it, it
** runs unpacked); deterministic.  C must not alias A or B. */
int host_matmul(gk_dtype t, const void *A, const void *B, void *C, int64_t M, int64_t N,
                int64_t K);

/* out[i] = x[idx[i]] for i < n.  Every idx value must lie in [0, xn): else
** GK_EVALUE and nothing is written (negative indices are NOT wrapped: the
** caller normalises them and reports which one was bad).  All dtypes. */
int host_gather(gk_dtype t, const void *x, int64_t xn, const int64_t *idx, int64_t n, void *out);
/* A strided slice: out[i] = x[start + i*step] for i < n (step may be
** negative).  The caller guarantees every position is inside x.  All dtypes. */
int host_slice(gk_dtype t, const void *x, int64_t start, int64_t step, int64_t n, void *out);

#endif /* GK_RUNTIME_HOST_H */
