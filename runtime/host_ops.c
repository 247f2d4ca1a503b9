/*
** runtime/host_ops.c -- the CPU backend's whole-array routines.
**
** numpy-exact histograms, stable filter and partition, blocked matmul,
** min/max.  (Scans, transposes, permutes, gathers and slices run in
** runtime/cpu.c's chunked evaluator, on views.)
** Every routine takes contiguous C-order buffers and 64-bit sizes, and runs
** large inputs on the thread pool (host_par.c) with chunk boundaries that
** depend only on the sizes, so results are bit-identical run to run.
**
** Type genericity is by macros that stamp out one function per element
** type; the dispatchers validate arguments and pick the entry.  Integer
** arithmetic that may overflow (sums, products) is done in the unsigned type
** of the same width, so it wraps like numpy's instead of being undefined.
*/
#include "runtime/host.h"
#include "runtime/plan.h"
#include "kernels/gk_scalar.h"   /* GK_COMB_MIN / GK_COMB_MAX: NaN-propagating, as every reduction */
#include "runtime/cpu_mm.h"        /* the f32 product with FMA */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local host_alloc_fn scr_fn;
static _Thread_local void *scr_ud;

void host_scratch(host_alloc_fn fn, void *ud) { scr_fn = fn; scr_ud = ud; }

static void *scr_alloc(size_t n) {
  if (!n) n = 1;
  return scr_fn ? scr_fn(scr_ud, NULL, 0, n) : malloc(n);
}
static void *scr_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  size_t n = count * size;
  void *p = scr_alloc(n);
  if (p) memset(p, 0, n ? n : 1);
  return p;
}
static void scr_free(void *p, size_t n) {
  if (!p) return;
  if (scr_fn) scr_fn(scr_ud, p, n ? n : 1, 0);
  else free(p);
}

#define SCAN_GRAIN 65536   /* elements per parallel scan chunk */
#define SCAN_TILE 256      /* columns scanned together in a column scan */
#define HIST_GRAIN 262144  /* elements per parallel histogram chunk */
#define HIST_MAX_PRIVATE ((int64_t)1 << 26) /* most private bins (x8 bytes) */
#define MOVE_GRAIN 131072  /* elements per parallel filter/gather chunk */
#define TR_TILE 32         /* transpose tile edge: 32x32 x 8 bytes = 8 KiB */
#define HOST_MM_KB 256     /* matmul k block: f32 partial sums span this */
#define HOST_MM_JB 512     /* matmul j block: B block (KB x JB) stays in L2 */
#define HOST_MM_MR 4       /* matmul rows per micro-kernel */

/* Keeps a*b+c as two roundings, like numpy, even where FMA is available. */
#if defined(__GNUC__) && !defined(__clang__)
#define HOST_NOCONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define HOST_NOCONTRACT
#endif

static size_t esize(gk_dtype t) { return rt_dtype_size(t); }

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* ================================================================= minmax */

/* Loops over the data or the bins check host_stopped() every HIST_POLL + 1
** elements. */
#define HIST_POLL (((int64_t)1 << 20) - 1)

int host_minmax(gk_dtype t, const void *x, int64_t n, double *mn, double *mx) {
  if (n <= 0) return GK_EVALUE;
  switch (t) {
#define MM_CASE(DT, T)                                   \
  case DT: {                                             \
    const T *p = x;                                      \
    T lo = p[0], hi = p[0];                              \
    for (int64_t i = 1; i < n; i++) {                    \
      if (!(i & HIST_POLL) && host_stopped()) return GK_EINTERRUPT; \
      lo = GK_COMB_MIN(lo, p[i]);                        \
      hi = GK_COMB_MAX(hi, p[i]);                        \
    }                                                    \
    *mn = (double)lo, *mx = (double)hi;                  \
    return GK_OK;                                        \
  }
    MM_CASE(GK_BOOL, uint8_t)
    MM_CASE(GK_I32, int32_t)
    MM_CASE(GK_I64, int64_t)
    MM_CASE(GK_F32, float)
    MM_CASE(GK_F64, double)
#undef MM_CASE
  default: return GK_EMISUSE;
  }
}

/* ================================================================== hist */

/* How numpy.histogram's uniform-bin path computes, per case:
**   f32 data, explicit range (Python floats lo, hi):
**     keep     x >= (float)lo && x <= (float)hi           (float32 compare)
**     index    (double)(float)(x - (float)lo) / (hi - lo) * nbins  (float64)
**     edges    linspace in float64, rounded to float32
**   f32 data, range from the data (float32 scalars lo, hi):
**     index    ((x - lo) / (float)(hi - lo)) * nbins       (all float32)
**     edges    linspace in float32
**   other data: everything in float64 (x converted to double).
** Then: i = (intp)index; i == nbins -> nbins-1; x < edge[i] -> i-1;
** x >= edge[i+1] and i != nbins-1 -> i+1 (numpy's +-1 ulp correction). */
typedef struct hist_job {
  gk_dtype t;
  const void *x;
  int64_t nbins, cs;
  int mode32;        /* 0: float64 path, 1: f32 explicit, 2: f32 auto */
  double lo, hi, denom;
  float flo, fhi, fdenom;
  const double *edges;   /* float64 edges (mode 0) */
  const float *fedges;   /* float32 edges (modes 1, 2) */
  int64_t *counts;       /* shared counts (serial) */
  int64_t *priv;         /* per-chunk counts (parallel), nchunks x nbins */
  int unit;              /* integer data, bins of width 1 at integer edges: bin = x - lo */
  int64_t ilo, ihi;
} hist_job;

static HOST_NOCONTRACT int64_t hist_index_d(const hist_job *j, double v) {
  double f = (v - j->lo) / j->denom * (double)j->nbins;
  int64_t i = (int64_t)f;
  if (i >= j->nbins) i = j->nbins - 1;
  if (i < 0) i = 0;
  if (v < j->edges[i]) i--;
  if (i >= 0 && i + 1 <= j->nbins && v >= j->edges[i + 1] && i != j->nbins - 1) i++;
  return i < 0 ? 0 : i;
}

static HOST_NOCONTRACT int64_t hist_index_f(const hist_job *j, float v) {
  int64_t i;
  if (j->mode32 == 1) {
    volatile float d = v - j->flo;
    double f = (double)d / j->denom * (double)j->nbins;
    i = (int64_t)f;
  } else {
    volatile float q = (v - j->flo) / j->fdenom;
    volatile float f = q * (float)j->nbins;
    i = (int64_t)f;
  }
  if (i >= j->nbins) i = j->nbins - 1;
  if (i < 0) i = 0;
  if (v < j->fedges[i]) i--;
  if (i >= 0 && v >= j->fedges[i + 1] && i != j->nbins - 1) i++;
  return i < 0 ? 0 : i;
}

#define UNIT_SPLIT 2048   /* bins from which unit bins count into one table */
static void hist_range(const hist_job *j, int64_t b, int64_t e, int64_t *cnt) {
  if (j->unit) {   /* the float path's bin, exactly: its edges are the integers lo..hi */
    /* up to UNIT_SPLIT bins: four tables counted in turn (an increment does
    ** not wait on the one before when two neighbours share a bin), summed */
    uint32_t sub[4][UNIT_SPLIT];
    int split = j->nbins <= UNIT_SPLIT && e - b < ((int64_t)1 << 32);
    if (split) memset(sub, 0, sizeof sub[0] * 4);
#define UNIT_BIN(v) ((uint64_t)(v) - (uint64_t)lo > span ? -1 : (v) == hi ? last : (v) - lo)
#define UNIT_CASE(T) do { const T *x = j->x; int64_t lo = j->ilo, hi = j->ihi, last = j->nbins - 1, i = b; \
    uint64_t span = (uint64_t)(hi - lo); \
    if (split) { \
      for (; i + 4 <= e; i += 4) \
        for (int k = 0; k < 4; k++) { int64_t v = (int64_t)x[i + k], q = UNIT_BIN(v); if (q >= 0) sub[k][q]++; } \
      for (int64_t q = 0; q < j->nbins; q++) cnt[q] += (int64_t)sub[0][q] + sub[1][q] + sub[2][q] + sub[3][q]; \
    } \
    for (; i < e; i++) { int64_t v = (int64_t)x[i], q = UNIT_BIN(v); if (q >= 0) cnt[q]++; } } while (0)
    if (j->t == GK_I64) UNIT_CASE(int64_t); else if (j->t == GK_I32) UNIT_CASE(int32_t); else UNIT_CASE(uint8_t);
#undef UNIT_CASE
#undef UNIT_BIN
    return;
  }
  switch (j->t) {
  case GK_F32: {
    const float *x = j->x;
    for (int64_t i = b; i < e; i++) {
      float v = x[i];
      if (v >= j->flo && v <= j->fhi) cnt[hist_index_f(j, v)]++;
    }
    break;
  }
#define HIST_CASE(DT, T)                                       \
  case DT: {                                                   \
    const T *x = j->x;                                         \
    for (int64_t i = b; i < e; i++) {                          \
      double v = (double)x[i];                                 \
      if (v >= j->lo && v <= j->hi) cnt[hist_index_d(j, v)]++; \
    }                                                          \
    break;                                                     \
  }
    HIST_CASE(GK_BOOL, uint8_t)
    HIST_CASE(GK_I32, int32_t)
    HIST_CASE(GK_I64, int64_t)
    HIST_CASE(GK_F64, double)
#undef HIST_CASE
  default: break;
  }
}

static void hist_chunk(void *c, int64_t b, int64_t e) {
  hist_job *j = c;
  hist_range(j, b, e, j->priv + (b / j->cs) * j->nbins);
}

/* linspace(lo, hi, nbins+1) in float64 (numpy's: i*step + lo, last = hi). */
static HOST_NOCONTRACT void linspace_d(double lo, double hi, int64_t nbins, double *e) {
  double delta = hi - lo, step = delta / (double)nbins;
  for (int64_t i = 0; i <= nbins; i++) {
    if (!(i & HIST_POLL) && host_stopped()) return;   /* the caller sees it too */
    volatile double p = step == 0 ? (double)i / (double)nbins * delta : (double)i * step;
    e[i] = p + lo;
  }
  e[nbins] = hi;
}

/* The same in float32 arithmetic (numpy's linspace on float32 scalars). */
static HOST_NOCONTRACT void linspace_f(float lo, float hi, int64_t nbins, float *e) {
  float delta = hi - lo, step = delta / (float)nbins;
  for (int64_t i = 0; i <= nbins; i++) {
    if (!(i & HIST_POLL) && host_stopped()) return;
    volatile float p = step == 0 ? (float)i / (float)nbins * delta : (float)i * step;
    e[i] = p + lo;
  }
  e[nbins] = hi;
}

/* The bins have a finite, nonzero width in the job's arithmetic: every
** quotient hist_index_* forms is finite and the edges increase strictly
** (numpy refuses otherwise: "Too many bins for data range"; its counts
** past that would index with a NaN cast). */
static int hist_ok(const hist_job *j, const void *edges) {
  if (j->mode32 == 2) {
    if (!isfinite(j->fdenom) || !isfinite(j->fdenom / (float)j->nbins)) return 0;
  } else {
    if (!isfinite(j->denom) || !(j->denom > 0)) return 0;
    if (j->mode32 == 1 && !isfinite(j->fhi - j->flo)) return 0;   /* v - flo in float */
  }
  for (int64_t i = 0; i < j->nbins; i++) {
    if (!(i & HIST_POLL) && host_stopped()) return 1;   /* hist_run reports the interrupt */
    if (j->mode32 == 0 ? !(((const double *)edges)[i] < ((const double *)edges)[i + 1])
                       : !(((const float *)edges)[i] < ((const float *)edges)[i + 1])) return 0;
  }
  return 1;
}

/* Runs the counting of a prepared job over x[0..n) into counts. */
static int hist_run(hist_job *j, int64_t n, int64_t *counts) {
  for (int64_t b = 0; b < j->nbins; b += HIST_POLL + 1) {   /* 800 MB for 10^8 bins: not at once */
    if (host_stopped()) return GK_EINTERRUPT;
    memset(counts + b, 0, (size_t)min64(HIST_POLL + 1, j->nbins - b) * sizeof *counts);
  }
  int64_t grain = max64(HIST_GRAIN, n / (2 * par_threads()) + 1);
  int64_t nc = par_nchunks(n, grain);
  j->priv = NULL;
  if (nc > 1 && nc * j->nbins <= HIST_MAX_PRIVATE)
    j->priv = scr_calloc((size_t)(nc * j->nbins), sizeof *j->priv);
  if (!j->priv) { /* small, or too many bins to privatise: one pass, in blocks between interrupt checks */
    for (int64_t b = 0; b < n; b += HIST_GRAIN) {
      if (host_stopped()) return GK_EINTERRUPT;
      hist_range(j, b, b + HIST_GRAIN < n ? b + HIST_GRAIN : n, counts);
    }
    return GK_OK;
  }
  j->cs = par_chunk_size(n, grain);
  par_for(n, grain, hist_chunk, j);
  for (int64_t k = 0; k < nc; k++)
    for (int64_t b = 0; b < j->nbins; b++) counts[b] += j->priv[k * j->nbins + b];
  scr_free(j->priv, (size_t)(nc * j->nbins) * sizeof *j->priv);
  return GK_OK;
}

/* Common body: mode32 as in hist_job; lo/hi already widened. */
static int hist_common(gk_dtype t, const void *x, int64_t n, int64_t nbins, double lo, double hi,
                       double denom, int mode32, int64_t *counts) {
  if (esize(t) == 0) return GK_EMISUSE;
  hist_job j;
  memset(&j, 0, sizeof j);
  j.t = t;
  j.x = x;
  j.nbins = nbins;
  j.mode32 = t == GK_F32 ? mode32 : 0;
  j.lo = lo, j.hi = hi, j.denom = denom;
  size_t eb = (size_t)(nbins + 1) * sizeof(double);
  void *edges = scr_alloc(eb);
  if (!edges) return GK_ENOMEM;
  if (j.mode32 == 0) {
    linspace_d(lo, hi, nbins, edges);
    j.edges = edges;
  } else if (j.mode32 == 1) {
    double *d = edges;
    float *f = edges;
    linspace_d(lo, hi, nbins, d);
    for (int64_t i = 0; i <= nbins; i++) f[i] = (float)d[i]; /* in place: f[i] lags d[i] */
    j.fedges = f;
    j.flo = (float)lo, j.fhi = (float)hi;
  } else {
    j.flo = (float)lo, j.fhi = (float)hi;
    j.fdenom = j.fhi - j.flo;
    linspace_f(j.flo, j.fhi, nbins, edges);
    j.fedges = edges;
  }
  /* integer data in bins of width 1 between integer edges below 2^52:
  ** linspace's edges are exact integers, and the index with its +-1
  ** correction lands on x - lo (x == hi: the last bin) */
  j.unit = (t == GK_I64 || t == GK_I32 || t == GK_BOOL) && j.mode32 == 0 && lo == floor(lo) && hi == floor(hi) &&
           hi - lo == (double)nbins && fabs(lo) < 0x1p52 && fabs(hi) < 0x1p52;
  j.ilo = j.unit ? (int64_t)lo : 0;
  j.ihi = j.unit ? (int64_t)hi : 0;
  /* stopped in linspace, the edges are garbage: no check of them */
  int rc = host_stopped() ? GK_EINTERRUPT : hist_ok(&j, edges) ? hist_run(&j, n, counts) : GK_ELIMIT;
  scr_free(edges, eb);
  return rc;
}

int host_hist(gk_dtype t, const void *x, int64_t n, int64_t nbins, double lo, double hi,
              int64_t *counts) {
  if (nbins < 1 || n < 0) return GK_EVALUE;
  if (lo > hi || !isfinite(lo) || !isfinite(hi)) return GK_EVALUE;
  if (lo == hi) lo -= 0.5, hi += 0.5;
  return hist_common(t, x, n, nbins, lo, hi, hi - lo, 1, counts);
}

int host_hist_auto(gk_dtype t, const void *x, int64_t n, int64_t nbins, int64_t *counts) {
  if (nbins < 1 || n < 0) return GK_EVALUE;
  if (esize(t) == 0) return GK_EMISUSE;
  if (n == 0) return host_hist(t, x, n, nbins, 0, 1, counts);
  double lo, hi;
  int rc = host_minmax(t, x, n, &lo, &hi);   /* GK_EINTERRUPT when stopped */
  if (rc) return rc;
  if (!isfinite(lo) || !isfinite(hi)) return GK_EVALUE;
  double denom = hi - lo;
  if (t == GK_F32) {
    float flo = (float)lo, fhi = (float)hi;
    if (flo == fhi) flo -= 0.5f, fhi += 0.5f;
    return hist_common(t, x, n, nbins, flo, fhi, 0, 2, counts);
  }
  if (lo == hi) {
    lo -= 0.5, hi += 0.5, denom = 1.0;
  } else if (t == GK_I64) { /* numpy subtracts int64 extremes as uint64 */
    int64_t a = 0, b = 0;
    const int64_t *p = x;
    a = b = p[0];
    for (int64_t i = 1; i < n; i++) a = p[i] < a ? p[i] : a, b = p[i] > b ? p[i] : b;
    denom = (double)((uint64_t)b - (uint64_t)a);
  }
  return hist_common(t, x, n, nbins, lo, hi, denom, 0, counts);
}

/* ========================================================= filter, partition */

int64_t host_count(const uint8_t *mask, int64_t n) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++) c += mask[i] != 0;
  return c;
}

typedef struct move_job {
  const char *x;
  const uint8_t *mask;
  char *out;
  size_t es;
  int64_t cs;
  int part;                        /* partition (else filter) */
  int64_t n;                       /* elements */
  int64_t ntrue;                   /* total trues (partition) */
  int64_t cnt[PAR_MAX_CHUNKS];     /* trues per chunk, then their offsets */
  int64_t base[PAR_MAX_CHUNKS];    /* chunk starts */
} move_job;

static void count_chunk(void *c, int64_t b, int64_t e) {
  move_job *j = c;
  j->cnt[b / j->cs] = host_count(j->mask + b, e - b);
}

/* Copies element i of x to slot o of out, for the three element sizes. */
#define COPY_EL(es, out, o, x, i)                                                      \
  do {                                                                                 \
    if ((es) == 4) memcpy((out) + (size_t)(o) * 4, (x) + (size_t)(i) * 4, 4);         \
    else if ((es) == 8) memcpy((out) + (size_t)(o) * 8, (x) + (size_t)(i) * 8, 8);     \
    else (out)[o] = (x)[i];                                                            \
  } while (0)

/* A filter's chunk without a branch on the mask: every element is written
** at the next slot, which advances on a true; a false's write is
** overwritten by the next true.  Only while the slot is below the chunk's
** last (the next chunk's first, another thread's) -- then the rest are falses. */
#define FILTER_BRANCHLESS(T) do { \
    const T *x_ = (const T *)(const void *)j->x; T *o_ = (T *)(void *)j->out; \
    for (int64_t i = b; i < e && ot < end; i++) { o_[ot] = x_[i]; ot += j->mask[i] != 0; } } while (0)

static void scatter_chunk(void *c, int64_t b, int64_t e) {
  move_job *j = c;
  int64_t k = b / j->cs;
  int64_t ot = j->cnt[k];                      /* next true slot */
  int64_t of = j->ntrue + (b - ot);            /* next false slot: falses before b */
  size_t es = j->es;
  if (!j->part) {
    int64_t end = e < j->n ? j->cnt[k + 1] : j->ntrue;   /* the chunk's trues end here */
    switch (es) {
    case 1: FILTER_BRANCHLESS(uint8_t); return;
    case 4: FILTER_BRANCHLESS(uint32_t); return;
    case 8: FILTER_BRANCHLESS(uint64_t); return;
    }
  }
  for (int64_t i = b; i < e; i++) {
    if (j->mask[i]) {
      COPY_EL(es, j->out, ot, j->x, i);
      ot++;
    } else if (j->part) {
      COPY_EL(es, j->out, of, j->x, i);
      of++;
    }
  }
}

/* Two passes: trues per chunk, then each chunk scatters from its offsets. */
static int move_run(gk_dtype t, const void *x, const uint8_t *mask, int64_t n, void *out,
                    int part, int64_t *count) {
  size_t es = esize(t);
  if (!es || n < 0) return GK_EMISUSE;
  move_job *j = scr_alloc(sizeof *j);
  if (!j) return GK_ENOMEM;
  j->x = x, j->mask = mask, j->out = out, j->es = es, j->part = part, j->n = n;
  j->cs = par_chunk_size(n, MOVE_GRAIN);
  int64_t nc = par_nchunks(n, MOVE_GRAIN);
  /* interrupted (host_stopped), the counts of the chunks not run are
  ** garbage: no scatter from them */
  int rc = par_for(n, MOVE_GRAIN, count_chunk, j);
  int64_t tot = 0;
  for (int64_t k = 0; !rc && k < nc; k++) {
    int64_t c = j->cnt[k];
    j->cnt[k] = tot;
    tot += c;
  }
  j->ntrue = tot;
  if (!rc) rc = par_for(n, MOVE_GRAIN, scatter_chunk, j);
  *count = tot;
  scr_free(j, sizeof *j);
  return rc;
}

int host_filter(gk_dtype t, const void *x, const uint8_t *mask, int64_t n, void *out,
                int64_t *count) {
  return move_run(t, x, mask, n, out, 0, count);
}

int host_partition(gk_dtype t, const void *x, const uint8_t *mask, int64_t n, void *out,
                   int64_t *ntrue) {
  return move_run(t, x, mask, n, out, 1, ntrue);
}

/* B is first copied into column panels of JR columns (panel p holds
** B[k][p*JR .. p*JR+JR) for every k, contiguously), so the micro-kernel
** reads it sequentially instead of with stride N (with N a multiple of
** 1024 the rows of B alias in the L1 cache).  Columns past the last full
** panel are read from B directly.  Without memory for the copy the kernel
** reads B in place (bp == NULL), slower but the same result. */
typedef struct mm_job {
  const void *A, *B;
  void *C;
  void *bp;           /* packed full panels of B, or NULL */
  void *cacc;         /* f32 with K > HOST_MM_KB: C accumulated in double, or NULL */
  int64_t M, N, K;
  int64_t jr;         /* panel width for this dtype */
  gk_dtype t;
} mm_job;

/* Panels [p0, p1) of B, each JR columns wide, copied k by k for the tiles below. */
#define MM_PACK(NAME, T, JR)                                                          \
  static void NAME##_pack(const mm_job *m, int64_t p0, int64_t p1) {                  \
    const T *B = m->B;                                                                \
    T *bp = m->bp;                                                                    \
    for (int64_t p = p0; p < p1; p++)                                                 \
      for (int64_t k = 0; k < m->K; k++)                                              \
        memcpy(bp + (p * m->K + k) * JR, B + k * m->N + p * JR, JR * sizeof(T));      \
  }

/* Rows [i0, i1) of C.  For each strip of HOST_MM_JB columns and block of
** HOST_MM_KB k's, tiles of HOST_MM_MR rows x JR columns accumulate a*b in
** registers (type ACC, over the k block), then are added into C; leftover
** rows and columns take a plain loop with the same order of operations
** per element.  The order of additions is fixed by the sizes alone. */
#define MM_DEF(NAME, T, ACC, JR, CT)                                                  \
  static void NAME(const mm_job *m, int64_t i0, int64_t i1) {                         \
    const T *A = m->A, *B = m->B, *bp = m->bp;                                        \
    CT *C = sizeof(CT) != sizeof(T) ? (CT *)m->cacc : (CT *)m->C;                     \
    int64_t N = m->N, K = m->K, full = N / JR * JR;                                   \
    for (int64_t i = i0; i < i1; i++)                                                 \
      for (int64_t jj = 0; jj < N; jj++) C[i * N + jj] = 0;                           \
    for (int64_t j0 = 0; j0 < N; j0 += HOST_MM_JB) {                                  \
      int64_t j1 = min64(j0 + HOST_MM_JB, N);                                         \
      for (int64_t k0 = 0; k0 < K; k0 += HOST_MM_KB) {                                \
        int64_t k1 = min64(k0 + HOST_MM_KB, K);                                       \
        int64_t i = i0;                                                               \
        for (; i + HOST_MM_MR <= i1; i += HOST_MM_MR) {                               \
          const T *a0 = A + i * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;          \
          int64_t j = j0;                                                             \
          for (; j + JR <= j1 && j + JR <= full; j += JR) {                           \
            ACC c0[JR] = {0}, c1[JR] = {0}, c2[JR] = {0}, c3[JR] = {0};               \
            const T *b = bp ? bp + ((j / JR) * K + k0) * JR : B + k0 * N + j;         \
            int64_t bs = bp ? JR : N;                                                 \
            for (int64_t k = k0; k < k1; k++, b += bs) {                              \
              ACC x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];                     \
              for (int q = 0; q < JR; q++) {                                          \
                ACC bv = b[q];                                                        \
                c0[q] += x0 * bv, c1[q] += x1 * bv, c2[q] += x2 * bv, c3[q] += x3 * bv; \
              }                                                                       \
            }                                                                         \
            CT *c = C + i * N + j;                                                    \
            for (int q = 0; q < JR; q++) {                                            \
              c[q] = (CT)(c[q] + c0[q]), c[N + q] = (CT)(c[N + q] + c1[q]);           \
              c[2 * N + q] = (CT)(c[2 * N + q] + c2[q]);                              \
              c[3 * N + q] = (CT)(c[3 * N + q] + c3[q]);                              \
            }                                                                         \
          }                                                                           \
          for (int r = 0; r < HOST_MM_MR; r++)                                        \
            for (int64_t jj = j; jj < j1; jj++) {                                     \
              ACC acc = 0;                                                            \
              for (int64_t k = k0; k < k1; k++) acc += (ACC)A[(i + r) * K + k] * B[k * N + jj]; \
              C[(i + r) * N + jj] = (CT)(C[(i + r) * N + jj] + acc);                  \
            }                                                                         \
        }                                                                             \
        for (; i < i1; i++)                                                           \
          for (int64_t jj = j0; jj < j1; jj++) {                                      \
            ACC acc = 0;                                                              \
            for (int64_t k = k0; k < k1; k++) acc += (ACC)A[i * K + k] * B[k * N + jj]; \
            C[i * N + jj] = (CT)(C[i * N + jj] + acc);                                \
          }                                                                           \
      }                                                                               \
    }                                                                                 \
    if (sizeof(CT) != sizeof(T))                                                      \
      for (int64_t i = i0; i < i1; i++)                                               \
        for (int64_t jj = 0; jj < N; jj++) ((T *)m->C)[i * N + jj] = (T)C[i * N + jj]; \
  }
MM_DEF(mm_f32, float, float, 16, float)
MM_DEF(mm_f32d, float, float, 16, double)  /* K > HOST_MM_KB: k-block sums added in double */
MM_DEF(mm_f64, double, double, 8, double)
MM_DEF(mm_u32, uint32_t, uint32_t, 16, uint32_t)
MM_DEF(mm_u64, uint64_t, uint64_t, 8, uint64_t)
MM_PACK(mm_f32, float, 16)                 /* mm_f32d reads the same panels */
MM_PACK(mm_f64, double, 8)
MM_PACK(mm_u32, uint32_t, 16)
MM_PACK(mm_u64, uint64_t, 8)

static void mm_pack_chunk(void *c, int64_t b, int64_t e) {
  mm_job *m = c;
  switch (m->t) {
  case GK_F32: mm_f32_pack(m, b, e); break;
  case GK_F64: mm_f64_pack(m, b, e); break;
  case GK_I32: mm_u32_pack(m, b, e); break;
  default: mm_u64_pack(m, b, e); break;
  }
}

static void mm_chunk(void *c, int64_t b, int64_t e) {
  mm_job *m = c;
  switch (m->t) {
  case GK_F32: if (m->cacc) mm_f32d(m, b, e); else mm_f32(m, b, e); break;
  case GK_F64: mm_f64(m, b, e); break;
  case GK_I32: mm_u32(m, b, e); break; /* same bits as int32, wraps */
  default: mm_u64(m, b, e); break;
  }
}

int host_matmul(gk_dtype t, const void *A, const void *B, void *C, int64_t M, int64_t N,
                int64_t K) {
  if (t < GK_I32 || t > GK_F64 || M < 0 || N < 0 || K < 0) return GK_EMISUSE;
  if (M == 0 || N == 0) return GK_OK;
  if (t == GK_F32 && cpu_sgemm(A, B, C, M, N, K, HOST_MM_KB, scr_alloc, scr_free)) return GK_OK;
  size_t es = esize(t);
  mm_job m = {A, B, C, NULL, NULL, M, N, K, es == 4 ? 16 : 8, t};
  /* many k blocks: add their f32 partial sums in double (accuracy ~1e-7
  ** relative even for K = 10^6); without the memory, plain f32 */
  if (t == GK_F32 && K > HOST_MM_KB && (uint64_t)M * (uint64_t)N < ((uint64_t)1 << 40) / 8)
    m.cacc = scr_alloc((size_t)M * (size_t)N * sizeof(double));
  int64_t panels = N / m.jr;
  if (panels > 0 && K > 0 && M >= 2 * HOST_MM_MR) {
    m.bp = scr_alloc((size_t)(panels * K * m.jr) * es);
    if (m.bp) par_for(panels, max64(1, MOVE_GRAIN / (K * m.jr)), mm_pack_chunk, &m);
  }
  /* ~4 M multiply-adds per chunk, rows in multiples of the micro-kernel */
  int64_t work = max64(1, N * max64(K, 1));
  int64_t grain = max64(HOST_MM_MR, ((int64_t)1 << 22) / work / HOST_MM_MR * HOST_MM_MR);
  par_for(M, grain, mm_chunk, &m);
  if (m.bp) scr_free(m.bp, (size_t)(panels * K * m.jr) * es);
  if (m.cacc) scr_free(m.cacc, (size_t)M * (size_t)N * sizeof(double));
  return GK_OK;
}
