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
  int digits;   /* print option for fmt_array/fmt_scalar: precision, 1..FMT_MAX_DIGITS; 0 = numpy's 6 */
  int width;    /* print option: line width, FMT_MIN_WIDTH..FMT_MAX_WIDTH; 0 = numpy's 75 */
} fmt_buf;
#define FMT_MAX_DIGITS 17   /* a double's round-trip digits: more would print noise */
#define FMT_MIN_WIDTH 10
#define FMT_MAX_WIDTH 4096

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
/* "PATH: message" (printf-style, made printable) into err[errlen]; returns
** code.  The file readers' and writers' one error format. */
int host_file_err(char *err, size_t errlen, int code, const char *path, const char *f, ...)
    __attribute__((format(printf, 5, 6)));
/* Opens path for reading, refusing anything but a regular file without
** blocking on it (a FIFO); *fd blocking again, *st its stat.  GK_EIO with a
** message otherwise. */
struct stat;
int host_open_regular(const char *path, int *fd, struct stat *st, char *err, size_t errlen);

int npy_save(const char *path, gk_dtype t, int ndim, const int64_t *shape, const void *data,
             char *err, size_t errlen);
/* npy_load of a .npy image in memory (an .npz member); name is for messages. */
int npy_load_mem(const char *name, const void *buf, size_t len, npy_alloc_fn alloc_data, void *ud,
                 char *err, size_t errlen);
/* The header npy_save writes for an array (magic to '\n', a multiple of 64
** bytes) in a malloc'd *out; returns its length, 0 when out of memory. */
size_t npy_header(gk_dtype t, int ndim, const int64_t *shape, char **out);
/* Writes the n pieces bufs[i] (lens[i] bytes) as the new content of path,
** the way npy_save does: only over a writable regular file (a symbolic link
** is followed), through "PATH.tmp.PID.N" renamed over it, keeping the mode.
** GK_EIO with "PATH: message" in err on failure. */
int host_write_file(const char *path, const void *const *bufs, const size_t *lens, int n,
                    char *err, size_t errlen);

/* ===================================================================== chart
** Text charts (runtime/host_chart.c), at most `width` columns (0: 75),
** Unicode block elements or plain ASCII.  chart_plot: x NULL, a column
** chart of y (bars from 0 when nothing is negative, else each column's
** [min, max]); else a scatter of (x[i], y[i]).  chart_hist: one bar per bin
** (bins of [lo, hi]) with its count. */
int chart_plot(fmt_buf *b, const double *x, const double *y, int64_t n, int width, int unicode);
int chart_hist(fmt_buf *b, const int64_t *counts, int64_t n, double lo, double hi, int width, int unicode);

/* ===================================================================== npz
** numpy's .npz: a zip archive of .npy members named NAME.npy
** (runtime/host_npz.c).  npz_load reads member `name` (NULL: the only one;
** an archive of several then fails with their names in the message),
** stored or deflated (numpy.savez / savez_compressed), its CRC-32 checked.
** npz_save writes the n arrays as stored members names[i].npy, as
** numpy.savez does.  Errors as npy_load's. */
int npz_load(const char *path, const char *name, npy_alloc_fn alloc_data, void *ud, char *err, size_t errlen);
int npz_save(const char *path, int n, const char *const *names, const gk_dtype *t, const int *ndim,
             const int64_t *const *shape, const void *const *data, char *err, size_t errlen);
/* inflate (RFC 1951) of src into dst of exactly dlen bytes: 0, or -1 when
** the stream is malformed or does not fill dst exactly. */
int npz_inflate(unsigned char *dst, size_t dlen, const unsigned char *src, size_t slen);
uint32_t npz_crc32(uint32_t crc, const void *buf, size_t n);

/* ===================================================================== txt
** Delimited text (runtime/host_txt.c), numpy.loadtxt / savetxt.  txt_load
** reads numbers separated by `delim` (NULL: runs of blanks), skipping the
** first `skiprows` lines, blank lines and '#' comments, into f64; like
** numpy (ndmin=0) one row or one column gives a vector, one cell a scalar.
** A bad cell is GK_EIO "PATH: row R, column C: cannot read 'TEXT' as a
** number" (R the line of the file, C the field, both from 1); rows of
** different lengths name the row.  txt_save writes a vector one value a
** line or a matrix one row a line (floats "%.18e" as numpy, ints and bools
** as integers), `delim` between (NULL: " "). */
int txt_load(const char *path, const char *delim, int64_t skiprows, npy_alloc_fn alloc_data, void *ud,
             char *err, size_t errlen);
int txt_save(const char *path, const char *delim, gk_dtype t, int ndim, const int64_t *shape, const void *data,
             char *err, size_t errlen);

/* ===================================================================== ops
** All buffers contiguous, C order, of dtype t; sizes int64_t.  A dtype the
** function does not support gives GK_EMISUSE.
*/
/* Smallest and largest value of x[0..n) as doubles (i64 beyond 2^53 is
** rounded); NaN if any element is NaN (numpy's min/max).  n must be > 0
** (GK_EVALUE otherwise); GK_EINTERRUPT when host_stopped().  bool/i32/i64/f32/f64. */
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

/* C (M x N) = A (M x K) @ B (K x N), row-major.  f32 accumulates in f32:
** each element sums its products over blocks of 256 k's in f32, and the
** block sums are added into C in f32 (HOST_MM_KB in host_ops.c); f64
** likewise in f64; i32/i64 exactly, with
** wraparound.  K = 0 gives zeros.  Parallel over row blocks, B packed into
** column panels first (a temporary copy of B; without memory for it, it
** runs unpacked); deterministic.  C must not alias A or B. */
int host_matmul(gk_dtype t, const void *A, const void *B, void *C, int64_t M, int64_t N,
                int64_t K);

/* ==================================================================== sort
** host_sort.c.  host_sort_key: x's order-preserving unsigned key (numpy's
** order: NaN after +inf, all NaNs equal, -0.0 == 0.0).  host_sort: along
** the rows (cols = 0: R segments of C) or columns (cols = 1: C segments of
** R, stride C) of an R x C matrix, op 0 sort / 1 argsort (i64 index within
** the segment) / 2 topk / 3 argtopk (the k largest, descending, ties by
** lower index, NaN largest): out is R x m (rows) or m x C (cols), m = C or
** R, or k.  Stable; parallel over segments.  GK_ENOMEM without scratch.
** host_runs: out[i] = i == 0 or key(x[i]) != key(x[i-1]).
** host_searchsorted: out[i] = the first position of sorted a whose key is
** not below v[i]'s (numpy's side='left'). */
uint64_t host_sort_key(gk_dtype t, const void *p);
int host_sort(gk_dtype t, const void *x, int64_t R, int64_t C, int cols, int op, int64_t k, void *out);
void host_runs(gk_dtype t, const void *x, int64_t n, uint8_t *out);
void host_searchsorted(gk_dtype t, const void *a, int64_t na, const void *v, int64_t nv, int64_t *out);

#endif /* GK_RUNTIME_HOST_H */
