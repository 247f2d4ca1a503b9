/*
** runtime/cuda_lower.c -- one fused group (runtime/plan.h) to CUDA C source.
**
** The fuser generates functors, not kernels: every group becomes one struct
** K holding the kernel parameters and the generated load / lift / combine /
** store code, and one extern "C" __global__ wrapper that hands K to a
** kernels/ primitive:
**
**   MAP        grid-stride elementwise loop over the outputs (staged kernel, 0 stages)
**   REDUCE     one stage: gk_grid_reduce with a tuple accumulator and a scalar
**              epilogue run by the last block; dependent chains: the staged
**              kernel (co-resident grid, a grid barrier between stages)
**   ROWS       axis 1, up to two dependent stages: gk_row_cached / _stream /
**              _split as gk_rows_plan says; anything else: the staged kernel
**   SCAN       gk_scan (look-back), gk_row_scan, gk_col_scan
**   FILTER     gk_select; PARTITION adds the stable tail reversal, done by
**              the last block to finish (a ticket), so one launch
**   HIST       gk_hist (shared bins) or global atomics for many bins
**   TRANSPOSE  gk_transpose (2-d) or gk_permute
**   MATMUL     cu_gemm (f32/f64; a prologue kernel materializes computed
**              operands), a generated kernel for integers
**
** Element code is table driven: runtime/ops.h's RT_OPS rows give each op's C
** expression per dtype class, the same text runtime/cpu.c compiles, calling
** kernels/gk_scalar.h's helpers (no device code is written here as strings
** beyond that).  Every node value
** needed at one index becomes one `const T tN = ...;` (memoised per scope).
** Float sums, products and variances accumulate in double, as the cpu
** backend does.  The kernel name is gk_<16 hex digits of a hash of
** the text written with a zero name (cu_hash64)>.
*/
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime/cuda_lower.h"
#include "runtime/host.h"
#include "runtime/cu.h"
#include "kernels/launch.h"

/* The environment switches, read once (contexts on several threads lower at
** once: a lazy `static int x = -1` read was a data race). */
static int env_novec, env_lit, env_check, env_show, env_compact;
static gk_rows_knobs env_rows;          /* GK_ROWS_VARIANT: row/column geometry knobs (launch.h), speed only */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int env_on(const char *name) { const char *e = getenv(name); return e && *e && strcmp(e, "0"); }
/* A knob list "key=value,..." from the environment variable var into the
** int fields of *dst named by kn (unknown keys are ignored). */
typedef struct env_knob { const char *k; size_t off; } env_knob;
static void env_knobs(const char *var, const env_knob *kn, size_t n, void *dst) {
  const char *e = getenv(var);
  while (e && *e) {
    const char *eq = strchr(e, '='), *end = strchr(e, ',');
    if (!end) end = e + strlen(e);
    if (eq && eq < end)
      for (size_t i = 0; i < n; i++)
        if ((size_t)(eq - e) == strlen(kn[i].k) && !strncmp(e, kn[i].k, (size_t)(eq - e)))
          *(int *)((char *)dst + kn[i].off) = atoi(eq + 1);
    e = *end ? end + 1 : end;
  }
}
/* GK_ROWS_VARIANT="wp=4,sb=1,...": launch.h gk_rows_knobs by field name */
static void env_rows_init(void) {
  static const env_knob kn[] = {
#define KN(f) { #f, offsetof(gk_rows_knobs, f) }
    KN(wp), KN(wx), KN(wb), KN(wg), KN(wr), KN(bx), KN(bt), KN(bg), KN(sp), KN(st), KN(sb), KN(xp), KN(xt), KN(xs),
    KN(ci), KN(cb), KN(cu), KN(cs), KN(cw), KN(va), KN(vp), KN(kc), KN(kt), KN(wf), KN(rp), KN(we), KN(cq), KN(rv), KN(ks), KN(ol), KN(tt), KN(tb), KN(sl), KN(cl), KN(ct), KN(gg), KN(gt), KN(gb)
#undef KN
  };
  env_knobs("GK_ROWS_VARIANT", kn, sizeof kn / sizeof kn[0], &env_rows);
}
/* GK_RED_VARIANT="rt=256,ri=8,...": launch.h gk_red_knobs (1-D reduce, scan, map), as GK_ROWS_VARIANT */
static gk_red_knobs env_red;
static void env_red_init(void) {
  static const env_knob kn[] = {
#define KN(f) { #f, offsetof(gk_red_knobs, f) }
    KN(rt), KN(ri), KN(rb), KN(rl), KN(ra), KN(st), KN(si), KN(sw), KN(sn), KN(mt), KN(mg), KN(mf), KN(rs), KN(ss), KN(me), KN(ma)
#undef KN
  };
  env_knobs("GK_RED_VARIANT", kn, sizeof kn / sizeof kn[0], &env_red);
  /* only shapes the kernels compile for: powers of two, within a block's limits */
  int *v[] = {&env_red.rt, &env_red.st, &env_red.mt};
  for (int i = 0; i < 3; i++) if (*v[i] != 128 && *v[i] != 256 && *v[i] != 512 && *v[i] != 1024) *v[i] = 0;
  if (env_red.ri < 0 || env_red.ri > 32) env_red.ri = 0;
  if (env_red.si < 0 || env_red.si > 64 || (env_red.si & (env_red.si - 1))) env_red.si = 0;
  if (env_red.rb < 0 || env_red.rb > 64) env_red.rb = 0;
  if (env_red.rl < 0 || env_red.rl > 16) env_red.rl = 0;
  if (env_red.mg < 0 || env_red.mg > 64) env_red.mg = 0;
}
static void env_init(void) {
  env_rows_init();
  env_red_init();
  env_novec = env_on("GK_NOVEC");        /* scalar loads everywhere (to check that variant) */
  env_lit = env_on("GK_SPECIALIZE");     /* sizes printed as literals (one text per size, as before) */
  /* GK_COMPACT=0: never the compact variant of heavy element code, =1: always (to check it) */
  const char *c = getenv("GK_COMPACT");
  env_compact = !c || !*c ? -1 : strcmp(c, "0") != 0;
  /* GK_NVRTC_CHECK=src also prints each kernel's text, =names its name, =time
  ** its NVRTC time; =lower only lowers (no NVRTC: cheap enough for every
  ** differential program), =lower-names lowers and prints the names,
  ** =ship also writes each kernel into the shipped-kernel directory
  ** GK_KERNELS_OUT for the arch GK_SHIP_ARCH (default 90): `make kernels`;
  ** =shipped only says whether the shipped kernels hold each kernel */
  env_check = env_on("GK_NVRTC_CHECK");
  const char *v = getenv("GK_NVRTC_CHECK");
  env_show = !env_check ? 0 : !strcmp(v, "src") ? 1 : !strcmp(v, "names") ? 2 : !strcmp(v, "lower") ? 3
           : !strcmp(v, "time") ? 4 : !strcmp(v, "lower-names") ? 5 : !strcmp(v, "ship") ? 6 : !strcmp(v, "shipped") ? 7 : 0;
}

#define LW_MEMO 1024           /* memoised (node, index) values per scope */
#define LW_MEMO_BLOCK 32       /* allocated in blocks of this many (stable addresses, cheap small kernels) */
#define LW_NAME 160            /* longest index expression kept */
#define STAGED_THREADS 256     /* block of the staged kernel: 2 blocks per SM co-resident */
#define MAP_THREADS 256
/* Defaults of the GK_RED_VARIANT knobs ra, sn, sw (a knob's -1 turns one off,
** 1 on), as the session-9 device run measured them (NOTES.md): light
** whole-array folds bounded to 4 blocks an SM; an integer scan's widening
** cast in the lift; scans of 8-byte values by 128 x 32 with one-round
** transposes (tile 4096). */
#define RED_LIGHT_BOUNDS 1
#define SCAN_NARROW 1
#define SCAN_WIDE 1
#define HIST_SMEM_MAX (96 << 10) /* more bins than this in shared memory: global atomics */

enum { TAG_OTHER, TAG_BASE, TAG_ROW, TAG_COL };
enum { RM_STORAGE, RM_REG };

typedef struct ixv { char s[LW_NAME]; int tag; } ixv;

typedef struct lw {
  rt_group *g;
  rt_prep *p;                  /* what the lowering makes: text, launches, parameters */
  fmt_buf *o;                  /* the body being written */
  int i64;                     /* index type is 64-bit */
  int sms;
  int64_t smem_block;          /* shared memory a block may take for the row kernels' shares (0: below sm_90) */
  /* scope */
  struct lw_memo { const rt_node *x; char ix[LW_NAME]; char v[24]; } *memo[LW_MEMO / LW_MEMO_BLOCK];
  int nmemo, ntmp;
  /* context */
  int rowctx;                  /* element (row, col) of an R x C matrix */
  int64_t R, C;
  const char *row, *col;       /* their expressions in this scope */
  int64_t base_n;              /* fields apply to inputs of this element count read at TAG_BASE */
  const char *xf;              /* field prefix ("x." / "x[kk].") or NULL */
  int used_field[64];          /* ins index -> read as a field */
  int lift_row;                /* the scope used the row through the X field r */
  int vpack;                   /* > 0: views over the matrix may be fields, loaded this many columns at once */
  struct lw_vf { const rt_node *x; int in; char ix[1024]; } vf[8];   /* those fields v<k>: the view, */
  int nvf;                     /* its input and its index at (row, col) */
  int in_lift;                 /* row expression comes from x.r */
  /* reductions */
  int rmode;
  int rtag;                    /* RM_REG: tag a per-row read must have */
  const char *acc[4];          /* RM_REG: accumulator variable of stage s (1-based) */
  int avail;                   /* stages readable here: stage <= avail */
  int *stage;                  /* per g->nodes index: reduce stage (0: not a reduce) */
  int *field;                  /* per g->nodes index: field in its stage's tuple */
  const rt_node **onl;         /* per g->nodes index: m' of an online sum(exp(E - m')), else NULL */
  int has_onl;
  int *maxof;                  /* per g->nodes index: 1 + the online node whose running max this max is, or 0 */
  char *shared;                /* per g->nodes index: its field is an equal reduction's (field[] says which) */
  char *varm;                  /* per g->nodes index: how a var is computed without Welford merges
                               ** (VAR_*), or 0 */
  ixv pivot;                   /* VAR_SHIFT: the index of the pivot element (row start, or 0) */
  const rt_node *rn[RT_MAX_RAND / 2]; /* RAND/RANDN nodes whose (seed, offset) are params sc2k, sc2k+1 */
  int nrn;
  /* size parameters (prm): what each scalar after the random streams' is */
  /* each entry on its own: prm() hands out q->name, which must outlive the
  ** table's growth (a kernel with over 32 size parameters read freed names) */
  struct lw_prm { const void *who; int what; char name[40]; } **prm;
  int nprm, capprm;
  int sealed;                  /* the parameter list is written: no new parameter */
  int lit;                     /* GK_SPECIALIZE=1: sizes as literals (the old text, to compare) */
  int vec_ok;                  /* every input is 16-byte aligned: vector loads allowed */
  int mapt;                    /* map_vector's block (MAP_THREADS, or the knob mt) */
  int hoist_pv;                /* VAR_SHIFT's pivot is the member pv<i> (set once per thread), not recomputed */
  int ool;                     /* compact element code being written: heavy ops through gkn<k> wrappers */
  fmt_buf wrap;                /* the wrappers' definitions (head() writes them) */
  struct lw_wr { int op; gk_dtype t, a[3]; } wr[16];
  int nwr;
  int fail;
  char err[256];
} lw;

/* ------------------------------------------------------------- helpers */

/* A var without Welford merges (lw.varm): two passes over a cached row, the
** first summing into its own field or into an equal sum's (SHARED), or one
** pass of sums shifted by a pivot element. */
enum { VAR_TWO = 1, VAR_TWO_SHARED = 2, VAR_SHIFT = 3 };

/* Reduction node i has an accumulator field of its own (else it reads an
** equal one's, or a two-pass var's shared sum, or an online pair's max). */
static int own_field(const struct lw *L, int i) {
  return L->varm[i] != VAR_TWO_SHARED && !L->maxof[i] && !L->shared[i];
}

/* The stage whose tuple holds var node i's sum of squares q<i> (0: none). */
static int q_stage(const struct lw *L, int i) {
  return L->varm[i] == VAR_SHIFT ? 1 : L->varm[i] ? 2 : 0;
}

static const char *ctype(gk_dtype t) { return rt_dtype_info[t].cuda; }
static const char *utype(gk_dtype t) {
  return t == GK_I64 ? "gk_u64" : "unsigned";
}
static int isf(gk_dtype t) { return t == GK_F32 || t == GK_F64; }

static int node_index(const rt_group *g, const rt_node *x) {
  for (int i = 0; i < g->nnodes; i++) if (g->nodes[i] == x) return i;
  return -1;
}
static int in_index(const rt_group *g, const rt_node *x) {
  for (int i = 0; i < g->nin; i++) if (g->ins[i] == x) return i;
  return -1;
}
static int out_index(const rt_group *g, const rt_node *x) {
  for (int i = 0; i < g->nout; i++) if (g->outs[i] == x) return i;
  return -1;
}
static int is_red(const rt_node *x) { return x->op == RT_REDUCE; }
static int same_shape2(const rt_node *x, int64_t R, int64_t C) {
  return x->ndim == 2 && x->shape[0] == R && x->shape[1] == C;
}

static void lw_fail(lw *L, const char *why) {
  if (!L->fail) { L->fail = 1; snprintf(L->err, sizeof L->err, "%s", why); }
}

/* What a size parameter is (with its node, `who`): the kernel text names the
** parameter, never the size, so one text serves every size of a structure. */
enum { P_N, P_VOFF, P_R, P_C, P_LEN, P_NB, P_OFF, P_COFF, P_PART, P_CNT, P_TICK, P_HI, P_BITS,
       P_SHAPE = 16, P_STRIDE = 16 + GK_MAX_DIMS, P_DIV = 16 + 2 * GK_MAX_DIMS,
       P_DIVM = 16 + 3 * GK_MAX_DIMS, P_DIVS = 16 + 4 * GK_MAX_DIMS, P_SHM = 16 + 5 * GK_MAX_DIMS,
       P_SHS = 16 + 6 * GK_MAX_DIMS, P_RDIV = 16 + 7 * GK_MAX_DIMS, P_RDIVM = 16 + 8 * GK_MAX_DIMS,
       P_RDIVS = 16 + 9 * GK_MAX_DIMS };

/* The expression of size v (a kernel parameter sc<k>, `(I)` or `(double)`
** cast by the caller), the same parameter for the same (who, what).  With
** GK_SPECIALIZE=1, or when the parameters run out, the literal. */
static const char *prm(lw *L, const void *who, int what, int64_t v) {
  for (int k = 0; k < L->nprm; k++)
    if (L->prm[k]->who == who && L->prm[k]->what == what) return L->prm[k]->name;
  if (L->nprm == L->capprm) {
    int nc = L->capprm ? 2 * L->capprm : 32;
    struct lw_prm **t = realloc(L->prm, sizeof *t * (size_t)nc);
    if (!t) { lw_fail(L, "out of memory"); return "0"; }
    L->prm = t; L->capprm = nc;
  }
  struct lw_prm *q = malloc(sizeof *q);
  if (!q) { lw_fail(L, "out of memory"); return "0"; }
  L->prm[L->nprm++] = q;
  q->who = who; q->what = what;
  if (L->lit || L->p->nscal == RT_MAX_SCAL) snprintf(q->name, sizeof q->name, "((gk_i64)%lldLL)", (long long)v);
  else if (L->sealed) { lw_fail(L, "size parameter after the parameter list"); return "0"; }
  else {
    snprintf(q->name, sizeof q->name, "((gk_i64)sc%d)", L->p->nscal);
    L->p->scal[L->p->nscal++] = (uint64_t)v;
  }
  return q->name;
}

/* A literal of dtype t with value from x->c, exact. */
static void literal(fmt_buf *b, gk_dtype t, double f, int64_t i) {
  switch (t) {
  case GK_BOOL: fmt_printf(b, "((gk_u8)%d)", i != 0); break;
  case GK_I32: fmt_printf(b, "((int)%lldLL)", (long long)(int32_t)i); break;
  case GK_I64:
    if (i == INT64_MIN) fmt_puts(b, "((gk_i64)0x8000000000000000ULL)");
    else fmt_printf(b, "((gk_i64)%lldLL)", (long long)i);
    break;
  case GK_F32: {
    float v = (float)f;
    if (!isfinite(v)) { uint32_t u; memcpy(&u, &v, 4); fmt_printf(b, "__int_as_float(0x%08x)", u); break; }
    char s[64]; snprintf(s, sizeof s, "%.9g", (double)v);
    if (!strpbrk(s, ".en")) strcat(s, ".0");
    fmt_printf(b, "(%sf)", s);
    break;
  }
  default: {
    if (!isfinite(f)) { uint64_t u; memcpy(&u, &f, 8); fmt_printf(b, "__longlong_as_double(0x%016llxLL)", (unsigned long long)u); break; }
    char s[64]; snprintf(s, sizeof s, "%.17g", f);
    if (!strpbrk(s, ".en")) strcat(s, ".0");
    fmt_printf(b, "(%s)", s);
  }
  }
}

/* --------------------------------------------------------- the op table */

/* Writes op expression tp (an RT_OPS column, runtime/ops.h) with the
** identifiers a, b, c replaced by the operands and T, U by the result type
** and the operands' unsigned type. */
static void subst(fmt_buf *b, const char *tp, const char *a, const char *bb, const char *c,
                  const char *T, const char *U) {
  for (const char *p = tp; *p;) {
    if (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) {
      const char *q = p;
      while (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')) q++;
      const char *r = NULL;
      if (q - p == 1) switch (*p) {
        case 'a': r = a; break;
        case 'b': r = bb; break;
        case 'c': r = c; break;
        case 'T': r = T; break;
        case 'U': r = U; break;
        }
      if (r) fmt_puts(b, r);
      else fmt_printf(b, "%.*s", (int)(q - p), p);
      p = q;
    } else fmt_putc(b, *p++);
  }
}

/* ------------------------------------------------------- element code */

static const char *emit_val(lw *L, const rt_node *x, const ixv *ix);

#define MEMO(L, k) ((L)->memo[(k) / LW_MEMO_BLOCK][(k) % LW_MEMO_BLOCK])

static const char *memo_get(lw *L, const rt_node *x, const char *ix) {
  for (int k = L->nmemo - 1; k >= 0; k--)
    if (MEMO(L, k).x == x && !strcmp(MEMO(L, k).ix, ix)) return MEMO(L, k).v;
  return NULL;
}
static const char *memo_put(lw *L, const rt_node *x, const char *ix, const char *v) {
  if (L->nmemo == LW_MEMO) { lw_fail(L, "too many values in one kernel"); return "0"; }
  int k = L->nmemo;
  if (!L->memo[k / LW_MEMO_BLOCK] && !(L->memo[k / LW_MEMO_BLOCK] = malloc(LW_MEMO_BLOCK * sizeof(struct lw_memo)))) {
    lw_fail(L, "out of memory"); return "0";
  }
  L->nmemo++;
  MEMO(L, k).x = x;
  snprintf(MEMO(L, k).ix, LW_NAME, "%s", ix);
  snprintf(MEMO(L, k).v, sizeof MEMO(L, k).v, "%s", v);
  return MEMO(L, k).v;
}
static void scope_reset(lw *L) { L->nmemo = 0; }

/* The row expression; in a lift it comes from the X field r. */
static const char *row_expr(lw *L) {
  if (L->in_lift) L->lift_row = 1;
  return L->row;
}

void cuda_fdiv_magic(int64_t d, uint32_t *m, uint32_t *s) {
  if (d < 1) d = 1;   /* an empty array: never divided */
  uint32_t sh = 0;
  while (((uint64_t)1 << sh) < (uint64_t)d) sh++;
  *s = sh;
  *m = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << sh) - (uint64_t)d)) / (uint64_t)d + 1);
}

/* Writes "(e) / d" (quot) or "(e) %% d" into b, d = the parameter of size v
** for (who, role): with 32-bit indices by a multiply (gk_fdiv32). */
static void divmod(lw *L, fmt_buf *b, const char *e, const void *who, int role, int mrole, int srole, int64_t v, int quot) {
  const char *dv = prm(L, who, role, v);
  if (L->i64 || L->lit) { fmt_printf(b, quot ? "(%s) / (I)%s" : "(%s) %% (I)%s", e, dv); return; }
  uint32_t m, s;
  cuda_fdiv_magic(v, &m, &s);
  const char *pm = prm(L, who, mrole, m), *ps = prm(L, who, srole, s);
  if (quot) fmt_printf(b, "(I)gk_fdiv32((unsigned)(%s), (unsigned)%s, (unsigned)%s)", e, pm, ps);
  else fmt_printf(b, "((I)(%s) - (I)gk_fdiv32((unsigned)(%s), (unsigned)%s, (unsigned)%s) * (I)%s)", e, e, pm, ps, dv);
}

/* The split of VIEW x's dims for the element (row, col) of the R x C
** matrix of a row/column kernel: p with dims [0, p) spanning R and [p, nd)
** spanning C (x's flat index row * C + col), or 0 where there is none. */
static int rc_split(const lw *L, const rt_node *x) {
  if (L->R <= 0 || L->C <= 0 || x->n != L->R * L->C) return 0;
  int64_t r = 1;
  for (int p = 1; p < x->ndim; p++) {
    r *= x->shape[p - 1];
    if (r == L->R) return p;
    if (r > L->R) return 0;
  }
  return 0;
}

/* Appends " + i_d * stride_d" for the dims [d0, d1) of VIEW x, the i_d those
** of flat index e over these dims alone (e < their product: dim d0 needs no
** modulo).  rdiv: the quotients' divisors as the row part's parameters (a
** divisor of dims [d + 1, d1) is not x's divisor of dim d in view_index). */
static void view_terms(lw *L, fmt_buf *b, const rt_node *x, int d0, int d1, const char *e, int rdiv) {
  int pd = rdiv ? P_RDIV : P_DIV, pm = rdiv ? P_RDIVM : P_DIVM, ps = rdiv ? P_RDIVS : P_DIVS;
  int64_t div = 1;
  int first = 1;
  for (int d = d1 - 1; d >= d0; d--) {
    if (x->shape[d] != 1 && x->vstride[d] != 0) {
      fmt_puts(b, " + ");
      if (first && d == d0) fmt_printf(b, "(I)(%s)", e);
      else if (first) divmod(L, b, e, x, P_SHAPE + d, P_SHM + d, P_SHS + d, x->shape[d], 0);
      else if (d == d0) divmod(L, b, e, x, pd + d, pm + d, ps + d, div, 1);
      else {
        fmt_buf q; fmt_init(&q);
        divmod(L, &q, e, x, pd + d, pm + d, ps + d, div, 1);
        divmod(L, b, q.data ? q.data : "0", x, P_SHAPE + d, P_SHM + d, P_SHS + d, x->shape[d], 0);
        if (q.status) b->status = q.status;
        fmt_free(&q);
      }
      if (x->vstride[d] != 1) fmt_printf(b, " * (I)%s", prm(L, x, P_STRIDE + d, x->vstride[d]));
    }
    if (x->shape[d] != 1) first = 0;
    div *= x->shape[d];
  }
}

/* Index handle of VIEW x's input for x's own index ix. */
static void view_index(lw *L, const rt_node *x, const ixv *ix, ixv *out) {
  const rt_node *in = x->in[0];
  int nd = x->ndim;
  /* identity view: contiguous strides, no offset */
  if (x->voff == 0 && x->n == in->n) {
    int id = 1; int64_t st = 1;
    for (int d = nd - 1; d >= 0; d--) {
      if (x->shape[d] != 1 && x->vstride[d] != st) { id = 0; break; }
      st *= x->shape[d];
    }
    if (id) { *out = *ix; return; }
  }
  out->tag = TAG_OTHER;
  if (nd == 0 || x->n == 1) { snprintf(out->s, LW_NAME, "(I)%s", prm(L, x, P_VOFF, x->voff)); return; }
  fmt_buf b; fmt_init(&b);
  /* the offset, strides and dims are parameters; which of them are zero (no
  ** offset, a broadcast) or one (a unit dim) is structure */
  const char *off = x->voff ? prm(L, x, P_VOFF, x->voff) : "0";
  if (L->rowctx && ix->tag == TAG_BASE && nd == 2 && x->shape[0] == L->R && x->shape[1] == L->C) {
    int64_t s0 = x->vstride[0], s1 = x->vstride[1];
    if (x->voff == 0 && s0 == 1 && s1 == 0 && in->n == L->R) out->tag = TAG_ROW;
    if (x->voff == 0 && s0 == 0 && s1 == 1 && in->n == L->C) out->tag = TAG_COL;
    if (out->tag == TAG_ROW) fmt_printf(&b, "%s", row_expr(L));
    else if (out->tag == TAG_COL) fmt_printf(&b, "%s", L->col);
    else {
      fmt_printf(&b, "((I)%s", off);
      if (s0) fmt_printf(&b, " + (I)%s * (I)%s", row_expr(L), s0 == 1 ? "1" : prm(L, x, P_STRIDE, s0));
      if (s1) fmt_printf(&b, " + (I)%s * (I)%s", L->col, s1 == 1 ? "1" : prm(L, x, P_STRIDE + 1, s1));
      fmt_puts(&b, ")");
    }
  } else if (L->rowctx && ix->tag == TAG_BASE && nd > 2 && rc_split(L, x)) {
    /* a view of more dims over the matrix (axis= on a middle axis: the
    ** permuted array as len x outer*inner): the row's part and the column's
    ** part apart, the latter loop-invariant in a column kernel's row loop */
    int p = rc_split(L, x), rp = 0;
    for (int d = 0; d < p; d++) rp |= x->shape[d] != 1 && x->vstride[d] != 0;
    fmt_printf(&b, "((I)%s", off);
    view_terms(L, &b, x, p, nd, L->col, 0);
    if (rp) view_terms(L, &b, x, 0, p, row_expr(L), 1);
    fmt_puts(&b, ")");
  } else {
    if ((ix->tag == TAG_ROW || ix->tag == TAG_COL) && nd == 1 && x->voff == 0 && x->vstride[0] == 1)
      out->tag = ix->tag;
    fmt_printf(&b, "((I)%s", off);
    int64_t div = 1;
    int first = 1;   /* div is still 1: no dim of size > 1 with a stride to the right */
    for (int d = nd - 1; d >= 0; d--) {
      if (x->shape[d] != 1 && x->vstride[d] != 0) {
        fmt_puts(&b, " + ");
        if (first && d == 0) fmt_printf(&b, "(%s)", ix->s);
        else if (first) divmod(L, &b, ix->s, x, P_SHAPE + d, P_SHM + d, P_SHS + d, x->shape[d], 0);
        else if (d == 0) divmod(L, &b, ix->s, x, P_DIV + d, P_DIVM + d, P_DIVS + d, div, 1);
        else {
          fmt_buf q; fmt_init(&q);
          divmod(L, &q, ix->s, x, P_DIV + d, P_DIVM + d, P_DIVS + d, div, 1);
          divmod(L, &b, q.data ? q.data : "0", x, P_SHAPE + d, P_SHM + d, P_SHS + d, x->shape[d], 0);
          if (q.status) b.status = q.status;
          fmt_free(&q);
        }
        if (x->vstride[d] != 1) fmt_printf(&b, " * (I)%s", prm(L, x, P_STRIDE + d, x->vstride[d]));
      }
      if (x->shape[d] != 1) first = 0;
      div *= x->shape[d];
    }
    fmt_puts(&b, ")");
  }
  /* name it */
  if (b.status || b.len >= 60) {
    char v[24]; snprintf(v, sizeof v, "j%d", L->ntmp++);
    fmt_printf(L->o, "    const I %s = %s;\n", v, b.data ? b.data : "0");
    snprintf(out->s, LW_NAME, "%s", v);
  } else snprintf(out->s, LW_NAME, "%s", b.data);
  fmt_free(&b);
}

/* Finalized value of a reduce node from its accumulator expression acc. */
static void red_final(fmt_buf *b, const rt_node *x, const char *acc) {
  const char *T = ctype(x->t);
  gk_dtype ti = x->in[0]->t;
  switch (x->rop) {
  case ROP_SUM: case ROP_PROD:
    if (isf(ti)) fmt_printf(b, "((%s)%s)", T, acc);
    else if (x->t == GK_BOOL) fmt_printf(b, "((gk_u8)(%s != 0))", acc);
    else if (isf(x->t)) fmt_printf(b, "((%s)(gk_i64)%s)", T, acc);
    else fmt_printf(b, "((%s)(gk_i64)%s)", T, acc);
    break;
  case ROP_MAX: case ROP_MIN:
    if (x->t == GK_BOOL) fmt_printf(b, "((gk_u8)(%s != 0))", acc);
    else fmt_printf(b, "((%s)%s)", T, acc);
    break;
  case ROP_ARGMAX: case ROP_ARGMIN:
    fmt_printf(b, "((%s)(%s.i == GK_I64_MAX ? 0 : %s.i))", T, acc, acc);
    break;
  case ROP_ANY: case ROP_ALL:
    fmt_printf(b, "((%s)%s)", T, acc);
    break;
  default: /* VAR */
    fmt_printf(b, "((%s)GK_WELFORD_VAR(%s.n, %s.mean, %s.m2))", T, acc, acc, acc);   /* gk_scalar.h, as the cpu's */
  }
}

/* Accumulator type, combining op type and lift expression of reduce node x. */
static const char *red_acc(const rt_node *x, char *buf, size_t n) {
  gk_dtype ti = x->in[0]->t;
  switch (x->rop) {
  case ROP_SUM: case ROP_PROD: return isf(ti) ? "double" : "gk_u64";
  case ROP_MAX: case ROP_MIN: return ctype(ti);
  case ROP_ARGMAX: case ROP_ARGMIN: snprintf(buf, n, "gk_vi<%s>", ctype(ti)); return buf;
  case ROP_ANY: case ROP_ALL: return "gk_u8";
  default: return "gk_welford<double>";
  }
}
static const char *red_op(const rt_node *x, char *buf, size_t n) {
  /* gk_op_<name>: kernels/gk_common.cuh defines one per RT_ROPS row */
  char A[64];
  gk_dtype ti = x->in[0]->t;
  switch (x->rop) {
  case ROP_ARGMAX: case ROP_ARGMIN: case ROP_MAX: case ROP_MIN: snprintf(A, sizeof A, "%s", ctype(ti)); break;
  case ROP_VAR: return "gk_op_welford<double>";
  default: snprintf(A, sizeof A, "%s", red_acc(x, buf, n));
  }
  snprintf(buf, n, "gk_op_%s<%s>", rt_rop_name[x->rop], A);
  return buf;
}
static void red_lift(fmt_buf *b, const rt_node *x, const char *v, const char *idx) {
  gk_dtype ti = x->in[0]->t;
  switch (x->rop) {
  case ROP_SUM: case ROP_PROD: fmt_printf(b, "(%s)%s", isf(ti) ? "double" : "gk_u64", v); break;
  case ROP_MAX: case ROP_MIN: fmt_printf(b, "%s", v); break;
  case ROP_ARGMAX: case ROP_ARGMIN: fmt_printf(b, "gk_vi<%s>{%s, (gk_i64)(%s)}", ctype(ti), v, idx); break;
  case ROP_ANY: case ROP_ALL: fmt_printf(b, "(gk_u8)(%s != 0)", v); break;
  default: fmt_printf(b, "gk_welford<double>{1.0, (double)%s, 0.0}", v);
  }
}

/* Name of the storage pointer of reduce node x (staged kernels). */
static void red_store_name(lw *L, const rt_node *x, char *buf, size_t n) {
  int o = out_index(L->g, x);
  if (o >= 0) snprintf(buf, n, "out%d", o);
  else snprintf(buf, n, "rv%d", node_index(L->g, x));
}

static const char *emit_red_ref(lw *L, const rt_node *x, const ixv *ix) {
  int k = node_index(L->g, x);
  int st = k >= 0 ? L->stage[k] : 0;
  if (st == 0 || st > L->avail) { lw_fail(L, "reduction read before it is computed"); return "0"; }
  char v[24];
  snprintf(v, sizeof v, "r%d", L->ntmp++);
  if (L->rmode == RM_STORAGE && x->n == 1) {
    snprintf(v, sizeof v, "h%d", k);             /* hoisted by the staged kernel */
    return memo_put(L, x, "", v);
  }
  if (L->rmode == RM_STORAGE) {
    char p[32]; red_store_name(L, x, p, sizeof p);
    if (x->n == 1) fmt_printf(L->o, "    const %s %s = gkl_ld(%s);\n", ctype(x->t), v, p);
    else fmt_printf(L->o, "    const %s %s = gkl_ld(%s + (%s));\n", ctype(x->t), v, p, ix->s);
  } else {
    if (x->n != 1 && ix->tag != L->rtag) { lw_fail(L, "per-row value read at another index"); return "0"; }
    if (L->maxof[k]) {   /* the running max of an online pair: NaN, -inf (s = 0: nothing above -inf), or m */
      int j = L->maxof[k] - 1;
      const char *T = ctype(x->t);
      fmt_printf(L->o, "    const %s %s = %s.f%d.m != %s.f%d.m ? %s.f%d.m : %s.f%d.s == 0.0 ? (%s)-__longlong_as_double(0x7ff0000000000000LL) : %s.f%d.m;\n",
                 T, v, L->acc[st], L->field[j], L->acc[st], L->field[j], L->acc[st], L->field[j], L->acc[st],
                 L->field[j], T, L->acc[st], L->field[j]);
      return memo_put(L, x, x->n == 1 ? "" : ix->s, v);
    }
    if (L->varm[k] == VAR_SHIFT) {   /* m2 = sum d^2 - (sum d)^2 / n, d = x - pivot; never below 0 */
      const char *a = L->acc[st];
      const char *nn = prm(L, x, P_LEN, x->in[0]->n / (x->n ? x->n : 1));   /* elements per result */
      fmt_printf(L->o, "    const double m%s = %s.q%d - %s.f%d * %s.f%d / (double)%s;\n", v, a, k, a, L->field[k], a,
                 L->field[k], nn);
      fmt_printf(L->o, "    const %s %s = (%s)((m%s < 0.0 ? 0.0 : m%s) / (double)%s);\n", ctype(x->t), v, ctype(x->t), v, v, nn);
      return memo_put(L, x, x->n == 1 ? "" : ix->s, v);
    }
    if (L->varm[k]) {   /* two-pass var: sum of squared deviations / C */
      if (L->avail < 2) { lw_fail(L, "two-pass variance read before its second pass"); return "0"; }
      fmt_printf(L->o, "    const %s %s = (%s)(%s.q%d / (double)%s);\n", ctype(x->t), v, ctype(x->t), L->acc[2], k,
                 prm(L, NULL, P_C, L->C));
      return memo_put(L, x, x->n == 1 ? "" : ix->s, v);
    }
    char acc[48];
    snprintf(acc, sizeof acc, "%s.f%d", L->acc[st], L->field[k]);
    if (L->onl && L->onl[k]) {
      /* online sum: rescale the running (max, sum) to m' (the edge cases of
      ** a non-finite max as the two-pass form gives them) */
      char v2[24]; snprintf(v2, sizeof v2, "%s", v);
      const char *mp = emit_val(L, L->onl[k], ix);
      fmt_printf(L->o, "    const %s %s = (%s)gkl_ms_final(%s, %s);\n", ctype(x->t), v2, ctype(x->t), acc, mp);
      return memo_put(L, x, "", v2);
    }
    fmt_printf(L->o, "    const %s %s = ", ctype(x->t), v);
    red_final(L->o, x, acc);
    fmt_puts(L->o, ";\n");
  }
  return memo_put(L, x, x->n == 1 ? "" : ix->s, v);
}

static int elem_cost(const rt_node *x);

/* In compact element code (L->ool), a heavy op (elem_cost >= 8: libm,
** fmod, Philox) that the group computes at two or more nodes of the same
** types calls one out-of-line wrapper gkn<k> around its table expression
** (the same text, so the same value) instead of an inlined copy per node.
** Returns k, or -1: inline. */
static int ool_wrapper(lw *L, const rt_node *x) {
  if (!L->ool || elem_cost(x) < 8 || x->nin > 3) return -1;
  const rt_group *g = L->g;
  int same = 0;
  for (int i = 0; i < g->nnodes && same < 2; i++) {
    const rt_node *y = g->nodes[i];
    int eq = y->op == x->op && y->t == x->t && y->nin == x->nin && in_index(g, y) < 0;
    for (int j = 0; eq && j < x->nin; j++) eq = y->in[j]->t == x->in[j]->t;
    same += eq;
  }
  if (same < 2) return -1;
  for (int k = 0; k < L->nwr; k++) {
    const struct lw_wr *w = &L->wr[k];
    int eq = w->op == x->op && w->t == x->t;
    for (int j = 0; eq && j < x->nin; j++) eq = w->a[j] == x->in[j]->t;
    if (eq) return k;
  }
  if (L->nwr == (int)(sizeof L->wr / sizeof L->wr[0])) return -1;
  int k = L->nwr++;
  struct lw_wr *w = &L->wr[k];
  w->op = x->op; w->t = x->t;
  for (int j = 0; j < x->nin; j++) w->a[j] = x->in[j]->t;
  const char *T = ctype(x->t);
  if (x->op == RT_RAND || x->op == RT_RANDN) {
    fmt_printf(&L->wrap, "static __device__ __noinline__ %s gkn%d(gk_u64 s, gk_u64 c) { return %s(s, c); }\n", T, k,
               x->op == RT_RAND ? "gk_rand" : "gk_randn");
    return k;
  }
  static const char *const an[3] = {"a", "b", "c"};
  fmt_printf(&L->wrap, "static __device__ __noinline__ %s gkn%d(", T, k);
  for (int j = 0; j < x->nin; j++) fmt_printf(&L->wrap, "%s%s %s", j ? ", " : "", ctype(x->in[j]->t), an[j]);
  fmt_puts(&L->wrap, ") { return ");
  gk_dtype ti = x->in[x->op == RT_WHERE ? 1 : 0]->t;
  int col = ti == GK_F32 ? 0 : ti == GK_F64 ? 1 : ti == GK_BOOL ? 3 : 2;
  subst(&L->wrap, rt_op_info[x->op].expr[col], "a", "b", "c", T, utype(ti));
  fmt_puts(&L->wrap, "; }\n");
  return k;
}

/* VIEW x of an input, of more dims over the matrix of a column kernel
** (rc_split), as a field of X that load<N> reads N columns at a time (one
** vector load where N > 1): the index of columns col .. col + N - 1 is that
** of col plus 0 .. N - 1 when x's last dim is contiguous, N divides its
** length and every other stride and the offset (col a multiple of N).  x
** may view a reshape of the input.  The field's number, or -1: read it in
** the lift. */
static int view_field(lw *L, const rt_node *x) {
  const rt_node *in = x->in[0];
  while (in->op == RT_RESHAPE && in_index(L->g, in) < 0) in = in->in[0];   /* the same flat index */
  int k = in_index(L->g, in), nd = x->ndim, N = L->vpack, p;
  if (k < 0 || nd <= 2 || !(p = rc_split(L, x))) return -1;
  for (int f = 0; f < L->nvf; f++) if (L->vf[f].x == x) return f;
  if (L->nvf == (int)(sizeof L->vf / sizeof L->vf[0])) return -1;
  if (N > 1 && (x->vstride[nd - 1] != 1 || x->shape[nd - 1] % N || x->voff % N)) return -1;
  for (int d = 0; d < nd - 1; d++) if (x->shape[d] != 1 && x->vstride[d] % N) return -1;
  fmt_buf b; fmt_init(&b);
  int rp = 0;
  for (int d = 0; d < p; d++) rp |= x->shape[d] != 1 && x->vstride[d] != 0;
  fmt_printf(&b, "((I)%s", x->voff ? prm(L, x, P_VOFF, x->voff) : "0");
  view_terms(L, &b, x, p, nd, "col", 0);
  if (rp) view_terms(L, &b, x, 0, p, "row", 1);
  fmt_puts(&b, ")");
  int ok = !b.status && b.data && b.len < sizeof L->vf[0].ix;
  if (ok) {
    struct lw_vf *w = &L->vf[L->nvf];
    w->x = x; w->in = k;
    memcpy(w->ix, b.data, b.len + 1);
  }
  fmt_free(&b);
  return ok ? L->nvf++ : -1;
}

static const char *emit_val(lw *L, const rt_node *x, const ixv *ix) {
  const char *m = memo_get(L, x, (x->n == 1 && (in_index(L->g, x) >= 0 || is_red(x))) ? "" : ix->s);
  if (m) return m;
  if (L->fail) return "0";
  const char *T = ctype(x->t);
  char v[24];
  int k = in_index(L->g, x);
  if (k >= 0) {
    snprintf(v, sizeof v, "t%d", L->ntmp++);
    if (x->n == 1) {
      fmt_printf(L->o, "    const %s %s = in%d[0];\n", T, v, k);
      return memo_put(L, x, "", v);
    }
    if (L->xf && ix->tag == TAG_BASE && x->n == L->base_n && k < 64) {
      L->used_field[k] = 1;
      fmt_printf(L->o, "    const %s %s = %sf%d;\n", T, v, L->xf, k);
    } else fmt_printf(L->o, "    const %s %s = in%d[%s];\n", T, v, k, ix->s);
    return memo_put(L, x, ix->s, v);
  }
  if (is_red(x)) return emit_red_ref(L, x, ix);
  if (rt_op_info[x->op].cls == RC_HEAVY) { lw_fail(L, "heavy node read inside a kernel"); return "0"; }
  if (x->op == RT_VIEW && L->vpack && L->xf && ix->tag == TAG_BASE) {
    int f = view_field(L, x);
    if (f >= 0) {
      snprintf(v, sizeof v, "t%d", L->ntmp++);
      fmt_printf(L->o, "    const %s %s = %sv%d;\n", T, v, L->xf, f);
      return memo_put(L, x, ix->s, v);
    }
  }
  if (x->op == RT_VIEW) {
    ixv j; view_index(L, x, ix, &j);
    const char *r = emit_val(L, x->in[0], &j);
    return memo_put(L, x, ix->s, r);
  }
  if (x->op == RT_RESHAPE) return memo_put(L, x, ix->s, emit_val(L, x->in[0], ix));
  if (x->op == RT_GATHER) {   /* in0's element idx[j / inner] * inner + j % inner (runtime/cpu.c) */
    const rt_node *d = x->in[0];
    int64_t len = d->shape[0], inner = len ? d->n / len : 1;
    ixv qi = *ix, si;
    if (inner != 1) {
      fmt_buf q; fmt_init(&q);
      divmod(L, &q, ix->s, x, P_DIV, P_DIVM, P_DIVS, inner, 1);
      snprintf(qi.s, LW_NAME, "j%d", L->ntmp++);
      fmt_printf(L->o, "    const I %s = %s;\n", qi.s, q.data ? q.data : "0");
      if (q.status) lw_fail(L, "out of memory");
      fmt_free(&q);
      qi.tag = TAG_OTHER;
    }
    const char *v = emit_val(L, x->in[1], &qi);
    const char *ln = prm(L, x, P_LEN, len);
    snprintf(si.s, LW_NAME, "j%d", L->ntmp++);
    si.tag = TAG_OTHER;
    fmt_printf(L->o, "    const I %s = ((I)%s < 0 ? (I)%s + (I)%s : (I)%s)", si.s, v, v, ln, v);
    if (inner != 1) {
      fmt_buf r; fmt_init(&r);
      divmod(L, &r, ix->s, x, P_SHAPE, P_SHM, P_SHS, inner, 0);
      fmt_printf(L->o, " * (I)%s + %s", prm(L, x, P_SHAPE, inner), r.data ? r.data : "0");
      if (r.status) lw_fail(L, "out of memory");
      fmt_free(&r);
    }
    fmt_puts(L->o, ";\n");
    return memo_put(L, x, ix->s, emit_val(L, d, &si));
  }
  if (x->op == RT_CONCAT) {   /* [R, A] beside [R, B]: a branch per side, each side's values scoped to it */
    int64_t A = x->in[0]->shape[1], W = x->shape[1];
    fmt_buf fr, fk; fmt_init(&fr); fmt_init(&fk);
    divmod(L, &fr, ix->s, x, P_DIV, P_DIVM, P_DIVS, W, 1);
    divmod(L, &fk, ix->s, x, P_SHAPE + 1, P_SHM + 1, P_SHS + 1, W, 0);
    char rv[24], kv[24];
    snprintf(rv, sizeof rv, "j%d", L->ntmp++);
    snprintf(kv, sizeof kv, "j%d", L->ntmp++);
    fmt_printf(L->o, "    const I %s = %s;\n    const I %s = %s;\n", rv, fr.data ? fr.data : "0", kv, fk.data ? fk.data : "0");
    if (fr.status || fk.status) lw_fail(L, "out of memory");
    fmt_free(&fr); fmt_free(&fk);
    const char *pa = prm(L, x, P_SHAPE, A), *pb = prm(L, x, P_LEN, W - A);
    snprintf(v, sizeof v, "t%d", L->ntmp++);
    fmt_printf(L->o, "    %s %s;\n    if (%s < (I)%s) {\n", T, v, kv, pa);
    int saved = L->nmemo;
    ixv sa, sb;
    sa.tag = sb.tag = TAG_OTHER;
    snprintf(sa.s, LW_NAME, "(%s * (I)%s + %s)", rv, pa, kv);
    const char *va = emit_val(L, x->in[0], &sa);
    fmt_printf(L->o, "    %s = %s;\n    } else {\n", v, va);
    L->nmemo = saved;
    snprintf(sb.s, LW_NAME, "(%s * (I)%s + %s - (I)%s)", rv, pb, kv, pa);
    const char *vb = emit_val(L, x->in[1], &sb);
    fmt_printf(L->o, "    %s = %s;\n    }\n", v, vb);
    L->nmemo = saved;
    return memo_put(L, x, ix->s, v);
  }
  /* operands first */
  const char *a[3] = {"", "", ""};
  for (int q = 0; q < x->nin; q++) a[q] = emit_val(L, x->in[q], ix);
  snprintf(v, sizeof v, "t%d", L->ntmp++);
  fmt_buf *o = L->o;
  fmt_printf(o, "    const %s %s = ", T, v);
  switch (x->op) {
  case RT_CONST:
    /* a float constant other than 0, +-1 and the non-finite ones is a
    ** parameter (its bits): mean(x)'s 1 / n, hist ranges and the scale of
    ** `x * 2.5` do not change the text */
    if (isf(x->t) && isfinite(x->c.f) && x->c.f != 0 && x->c.f != 1 && x->c.f != -1 && !L->lit) {
      uint64_t u;
      if (x->t == GK_F32) { float f = (float)x->c.f; uint32_t w; memcpy(&w, &f, 4); u = w; }
      else memcpy(&u, &x->c.f, 8);
      const char *p = prm(L, x, P_BITS, (int64_t)u);   /* not P_N: a fill is also its group's output */
      if (x->t == GK_F32) fmt_printf(o, "__uint_as_float((unsigned)%s)", p);
      else fmt_printf(o, "__longlong_as_double((long long)%s)", p);
    } else literal(o, x->t, x->c.f, x->c.i);
    break;
  case RT_IOTA: fmt_printf(o, "(%s)(%s)", T, ix->s); break;
  case RT_RAND: case RT_RANDN: {
    /* seed and offset are kernel parameters: the text does not depend on them */
    const char *fn = x->op == RT_RAND ? "gk_rand" : "gk_randn";
    char fw[16];
    int w = ool_wrapper(L, x);
    if (w >= 0) { snprintf(fw, sizeof fw, "gkn%d", w); fn = fw; }
    int r = -1;
    for (int q = 0; q < L->nrn; q++) if (L->rn[q] == x) r = q;
    if (r >= 0) fmt_printf(o, "%s(sc%d, sc%d + (gk_u64)(%s))", fn, 2 * r, 2 * r + 1, ix->s);
    else fmt_printf(o, "%s(%lluULL, %lluULL + (gk_u64)(%s))", fn, (unsigned long long)x->seed, (unsigned long long)x->offset, ix->s);
    break;
  }
  case RT_CAST: {
    gk_dtype f = x->in[0]->t;
    if (x->t == GK_BOOL) fmt_printf(o, "(gk_u8)(%s != 0)", a[0]);
    else if (f == GK_BOOL) fmt_printf(o, "(%s)(%s != 0)", T, a[0]);
    else if (isf(f) && x->t == GK_I32) fmt_printf(o, "gk_f2i32((double)%s)", a[0]);
    else if (isf(f) && x->t == GK_I64) fmt_printf(o, "gk_f2i64((double)%s)", a[0]);
    else fmt_printf(o, "(%s)%s", T, a[0]);
    break;
  }
  default: {
    const rt_opinfo *d = &rt_op_info[x->op];
    if (d->cls != RC_MAP) { lw_fail(L, "op without a lowering"); fmt_puts(o, "0"); break; }
    gk_dtype ti = x->in[x->op == RT_WHERE ? 1 : 0]->t;
    int col = ti == GK_F32 ? 0 : ti == GK_F64 ? 1 : ti == GK_BOOL ? 3 : 2;
    int w = ool_wrapper(L, x);
    if (w >= 0) fmt_printf(o, "gkn%d(%s%s%s%s%s)", w, a[0], x->nin > 1 ? ", " : "", x->nin > 1 ? a[1] : "",
                           x->nin > 2 ? ", " : "", x->nin > 2 ? a[2] : "");
    else subst(o, d->expr[col], a[0], a[1], a[2], T, utype(ti));
  }
  }
  fmt_puts(o, ";\n");
  return memo_put(L, x, ix->s, v);
}

/* An upper bound of sizeof(S<s>) for a stage of nf reductions (24 bytes is the widest accumulator). */
static int64_t acc_bound(int nf) { return gk_align16(8 + 24 * (int64_t)(nf > 0 ? nf : 1)); }

/* ------------------------------------------------- compact variants */

/* Heavy element code (issue 11.3).  The primitives unroll the element
** function: 17 copies in a grid reduce (ITEMS x VEC + the tail), 64 in a
** scan or select tile (32 items, a full and a partial body), 9 in a vector
** map.  When the element code is expensive (Philox, Box-Muller, fmod, libm),
** those copies are most of the kernel and most of its NVRTC time, and the
** kernel is compute-bound: the compact variant emits the generated element
** function (lift / load / select) `__noinline__`, so it is compiled once and
** called from every unrolled slot.  The primitive, the accumulators and the
** order of every combine are the same, hence the same bits (--fmad=false: no
** contraction across the call either).  A map computes its outputs in the
** scalar grid-stride loop instead of the vector loop.
**
** elem_cost estimates an op's inlined code in units of ~256 bytes of sm_90
** code (measured: sum(f(x)) of 1000 f32 minus sum(x), per copy); a group's
** element code is compact when cost x copies > COMPACT_BUDGET and the cost is
** at least COMPACT_MIN_COST (copies: the most the primitive's policies
** unroll, whatever the size class, so the choice depends on the element code
** and the primitive only).  Every
** statement of tests/bench/bench_gk.py and latency.py stays below (the
** heaviest, sin(x) * cos(y) + 0.5 in a map: 42 x 9 = 378; tests/tools/
** kernel_names.py checks that their kernel texts are unchanged). */
#define COMPACT_BUDGET 512
/* ... and at least this much per element (one Philox, sin, pow or fmod):
** each slot then calls the element function, and that call must stay small
** beside the element's own work (a scan of log(x), cost 9 x 64 copies, keeps
** its unrolled text) */
#define COMPACT_MIN_COST 20
static int elem_cost(const rt_node *x) {
  int f = isf(x->t) || (x->nin > 0 && isf(x->in[0]->t));
  switch (x->op) {
  case RT_INPUT: case RT_CONST: case RT_IOTA: case RT_VIEW: case RT_RESHAPE: case RT_REDUCE: return 0;
  case RT_RANDN: return 56;
  case RT_MOD: return f ? 56 : 2;
  case RT_POW: return f ? 20 : 4;
  case RT_RAND: case RT_SIN: case RT_COS: case RT_TAN: return 20;
  case RT_ATAN2: return 14;
  case RT_LOG: case RT_LOG2: case RT_LOG10: case RT_LOG1P: case RT_EXPM1: case RT_ASIN: case RT_ACOS:
  case RT_ATAN: case RT_SINH: case RT_COSH: case RT_HYPOT: return 8;
  case RT_TANH: case RT_SIGMOID: return 4;
  case RT_EXP: case RT_EXP2: case RT_DIV: case RT_SQRT: case RT_RSQRT: return 2;
  default: return 1;
  }
}
/* The element code under x computed in this group (each node once: seen[],
** per g->nodes index); stops at the group's inputs and at reductions, scans
** and the other heavy ops (their values are accumulators or loads). */
static long expr_cost(const rt_group *g, const rt_node *x, char *seen) {
  int k = node_index(g, x);
  if (k < 0 || seen[k] || in_index(g, x) >= 0) return 0;
  seen[k] = 1;
  if (rt_op_info[x->op].cls == RC_HEAVY) return 0;
  long c = elem_cost(x);
  for (int j = 0; j < x->nin; j++) c += expr_cost(g, x->in[j], seen);
  return c;
}
/* Whether element code of the nr roots, unrolled `copies` times, takes the compact variant. */
static int compact(lw *L, const rt_node *const *roots, int nr, int copies) {
  if (env_compact >= 0) return env_compact;
  char *seen = calloc((size_t)L->g->nnodes + 1, 1);
  if (!seen) return 0;
  long c = 0;
  for (int r = 0; r < nr; r++) if (roots[r]) c += expr_cost(L->g, roots[r], seen);
  free(seen);
  return c >= COMPACT_MIN_COST && c * copies > COMPACT_BUDGET;
}
static int compact1(lw *L, const rt_node *root, int copies) { return compact(L, &root, 1, copies); }
static const char *noinl(int on) { return on ? "__noinline__ " : ""; }

static void head(lw *L, fmt_buf *b, const char *inc, int sync) {
  fmt_printf(b, "#include \"%s\"\n", inc);
  fmt_puts(b, "#include \"gk_fused.cuh\"\n");   /* gk_scalar.h's semantics + the generated kernels' helpers */
  fmt_printf(b, "typedef %s I;\n", L->i64 ? "gk_i64" : "int");
  if (L->wrap.data && L->wrap.len) fmt_puts(b, L->wrap.data);
  if (L->wrap.status) b->status = L->wrap.status;
}

/* The parameter members of K and the kernel's parameter list. */
static void members(lw *L, fmt_buf *b) {
  rt_group *g = L->g;
  L->sealed = 1;
  for (int i = 0; i < g->nin; i++) fmt_printf(b, "  const %s *__restrict__ in%d;\n", ctype(g->ins[i]->t), i);
  for (int i = 0; i < g->nout; i++) fmt_printf(b, "  %s *__restrict__ out%d;\n", ctype(g->outs[i]->t), i);
  fmt_puts(b, "  char *tmp;\n");
  for (int i = 0; i < L->p->nscal; i++) fmt_printf(b, "  gk_u64 sc%d;\n", i);
}
static void params(lw *L, fmt_buf *b) {
  rt_group *g = L->g;
  L->sealed = 1;
  for (int i = 0; i < g->nin; i++) fmt_printf(b, "const %s *in%d, ", ctype(g->ins[i]->t), i);
  for (int i = 0; i < g->nout; i++) fmt_printf(b, "%s *out%d, ", ctype(g->outs[i]->t), i);
  fmt_puts(b, "char *tmp");
  for (int i = 0; i < L->p->nscal; i++) fmt_printf(b, ", gk_u64 sc%d", i);
  if (L->p->errflag) fmt_puts(b, ", unsigned long long *gkerr");
  if (L->p->doneflag) fmt_puts(b, ", gk_u64 gkdone, gk_u64 gkseq");
}
static void init_k(lw *L, fmt_buf *b) {
  rt_group *g = L->g;
  fmt_puts(b, "  K k;\n");
  for (int i = 0; i < g->nin; i++) fmt_printf(b, "  k.in%d = in%d;\n", i, i);
  for (int i = 0; i < g->nout; i++) fmt_printf(b, "  k.out%d = out%d;\n", i, i);
  fmt_puts(b, "  k.tmp = tmp;\n");
  for (int i = 0; i < L->p->nscal; i++) fmt_printf(b, "  k.sc%d = sc%d;\n", i, i);
}

/* Stores output o's value at index expression ix (scope already set). */
static void store_out(lw *L, int o, const ixv *ix) {
  const char *v = emit_val(L, L->g->outs[o], ix);
  fmt_printf(L->o, "    out%d[%s] = %s;\n", o, ix->s, v);
}

static void set_launch(rt_prep *p, int64_t gx, int64_t gy, int64_t gz, int bx, int by, int64_t smem) {
  p->kl.grid[0] = (uint32_t)gx; p->kl.grid[1] = (uint32_t)gy; p->kl.grid[2] = (uint32_t)gz;
  p->kl.block[0] = (uint32_t)bx; p->kl.block[1] = (uint32_t)by; p->kl.block[2] = 1;
  p->kl.smem = (uint32_t)smem;
}

/* ---------------------------------------------------- stage analysis */

/* Fills L->stage (reduce nodes: 1 + the deepest reduce they read) and
** L->field (index within its stage).  Returns the number of stages. */
static int stages(lw *L, int *nper) {
  rt_group *g = L->g;
  int n = g->nnodes, maxs = 0;
  int *dep = calloc((size_t)n + 1, sizeof(int));
  if (!dep) { lw_fail(L, "out of memory"); return 0; }
  for (int i = 0; i < n; i++) {
    const rt_node *x = g->nodes[i];
    int d = 0;
    for (int q = 0; q < x->nin; q++) {
      const rt_node *y = L->onl && L->onl[i] ? x->in[0]->in[0]->in[0] : x->in[q];   /* online: reads E only */
      int k = node_index(g, y);
      if (k < 0 || in_index(g, y) >= 0) continue;
      int s = L->stage[k] ? L->stage[k] : dep[k];
      if (s > d) d = s;
    }
    dep[i] = d;
    if (is_red(x) && in_index(g, x) < 0) {
      L->stage[i] = d + 1;
      if (d + 1 > maxs) maxs = d + 1;
    }
  }
  for (int s = 0; s <= maxs && s < 8; s++) nper[s] = 0;
  for (int i = 0; i < n; i++) if (L->stage[i]) L->field[i] = nper[L->stage[i] < 8 ? L->stage[i] : 7]++;
  free(dep);
  return maxs;
}

/* struct S<s> { A f0; ... } and struct O<s> combining op for stage s. */
static void stage_structs(lw *L, fmt_buf *b, int s) {
  rt_group *g = L->g;
  char buf[96], buf2[96];
  /* a two-pass var: stage 1 sums its input (f<field>), stage 2 sums the
  ** squared deviations from that mean (q<node>) */
  fmt_printf(b, "struct alignas(8) S%d {", s);
  int any = 0;
  for (int i = 0; i < g->nnodes; i++) {
    if (L->stage[i] == s && own_field(L, i)) {
      if (L->onl && L->onl[i]) fmt_printf(b, " gkl_ms<%s> f%d;", ctype(g->nodes[i]->t), L->field[i]);
      else if (L->varm[i]) fmt_printf(b, " double f%d;", L->field[i]);
      else fmt_printf(b, " %s f%d;", red_acc(g->nodes[i], buf, sizeof buf), L->field[i]);
      any = 1;
    }
    if (q_stage(L, i) == s) { fmt_printf(b, " double q%d;", i); any = 1; }
  }
  if (!any) fmt_puts(b, " char f_;");
  fmt_puts(b, " };\n");
  fmt_printf(b, "struct O%d {\n  typedef S%d A;\n", s, s);
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == s && own_field(L, i)) {
    if (L->onl && L->onl[i])   /* whole-array reductions rescale f32 pairs with expf (GK_RED_VARIANT mf) */
      fmt_printf(b, "  gkl_op_ms<%s%s> o%d;\n", ctype(g->nodes[i]->t),
                 env_red.mf == 1 || (!env_red.mf && g->kind == RG_REDUCE) ? ", 1" : "", L->field[i]);
    else if (L->varm[i]) fmt_printf(b, "  gk_op_sum<double> o%d;\n", L->field[i]);
    else fmt_printf(b, "  %s o%d;\n", red_op(g->nodes[i], buf2, sizeof buf2), L->field[i]);
  }
  fmt_puts(b, "  __device__ A identity() const { A r;");
  for (int i = 0; i < g->nnodes; i++) {
    if (L->stage[i] == s && own_field(L, i)) fmt_printf(b, " r.f%d = o%d.identity();", L->field[i], L->field[i]);
    if (q_stage(L, i) == s) fmt_printf(b, " r.q%d = 0.0;", i);
  }
  fmt_puts(b, " return r; }\n  __device__ A operator()(const A &a, const A &b) const { A r;");
  for (int i = 0; i < g->nnodes; i++) {
    if (L->stage[i] == s && own_field(L, i))
      fmt_printf(b, " r.f%d = o%d(a.f%d, b.f%d);", L->field[i], L->field[i], L->field[i], L->field[i]);
    if (q_stage(L, i) == s) fmt_printf(b, " r.q%d = a.q%d + b.q%d;", i, i, i);
  }
  fmt_puts(b, " return r; }\n  template <class X, class J> __device__ A lift(const X &, J) const { return identity(); }\n};\n");
}

/* The lift of a VAR_SHIFT var: d = x - pivot (the element at L->pivot) into
** f, d^2 into q.  Every element is shifted by the same data value, so the
** sums stay small wherever the data sits (no cancellation of a large mean). */
static void shift_lift(lw *L, fmt_buf *o, int i, const char *v) {
  char vv[24], pv[24];
  snprintf(vv, sizeof vv, "%s", v);
  snprintf(pv, sizeof pv, "pv%d", i);
  const char *p = L->hoist_pv ? pv : emit_val(L, L->g->nodes[i]->in[0], &L->pivot);
  fmt_printf(o, "    { const double d_ = (double)%s - (double)%s; r.f%d = d_; r.q%d = d_ * d_; }\n", vv, p, L->field[i], i);
}

/* Writes into L->o the lift of stage s at index ix into "A r". idxexpr is
** the index argmax reports (flat, column or row). */
static void stage_lift(lw *L, int s, const ixv *ix, const char *idxexpr) {
  rt_group *g = L->g;
  fmt_buf *o = L->o;
  fmt_printf(o, "    S%d r;\n", s);
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == s && own_field(L, i)) {
    if (L->onl && L->onl[i]) {   /* online sum(exp(E - m')): lift E itself */
      const rt_node *E = g->nodes[i]->in[0]->in[0]->in[0];
      const char *v = emit_val(L, E, ix);
      fmt_printf(o, "    r.f%d.m = %s; r.f%d.s = 1.0;\n", L->field[i], v, L->field[i]);
      continue;
    }
    const char *v = emit_val(L, g->nodes[i]->in[0], ix);
    if (L->varm[i] == VAR_SHIFT) { shift_lift(L, o, i, v); continue; }
    fmt_printf(o, "    r.f%d = ", L->field[i]);
    red_lift(o, g->nodes[i], v, idxexpr);
    fmt_puts(o, ";\n");
  }
}

/* ------------------------------------------------------ staged kernel */

/* Declares h<k> = the value of every whole-array reduction of stage <= upto
** (computed earlier in this launch), once per block scope. */
static void hoist(lw *L, fmt_buf *b, int upto) {
  for (int i = 0; i < L->g->nnodes; i++) {
    const rt_node *x = L->g->nodes[i];
    if (L->stage[i] <= 0 || L->stage[i] > upto || x->n != 1) continue;
    char p[32]; red_store_name(L, x, p, sizeof p);
    fmt_printf(b, "    const %s h%d = gkl_ld(%s);\n", ctype(x->t), i, p);
  }
}

/* map_vector's vector width for the loop over the outputs of length n: 4
** elements, 2 where an input or output of that length has 8 bytes. */
static int map_vec_width(const rt_group *g, int64_t n) {
  int V = 4;
  for (int k = 0; k < g->nin; k++) if (g->ins[k]->n == n && rt_dtype_size(g->ins[k]->t) == 8) V = 2;
  for (int p = 0; p < g->nout; p++) if (g->outs[p]->n == n && rt_dtype_size(g->outs[p]->t) == 8) V = 2;
  return V;
}
/* The elementwise outputs o.. of g->outs[o]'s size n_ (every input is
** 16-byte aligned): a grid-stride loop over vectors of V elements (V = 4, or
** 2 when an input or output of that size has 8-byte elements), two vectors
** per thread and step (lower_staged's grid gives each thread one vector, so
** the loop runs once but where the grid is capped).  Inputs of n_ elements read at the element's own index (no view but
** the identity, so no broadcast) are loaded as vectors into the fields of
** x_[kk]; everything else (views, broadcasts, iota, random streams, scalars)
** reads at index i as the scalar loop does.  Outputs are stored as vectors
** (gk's own allocations: 16-byte aligned).  Leaves open the scalar loop over
** the last n_ % V elements, which the caller writes and closes. */
static void map_vector(lw *L, fmt_buf *body, int o) {
  rt_group *g = L->g;
  const rt_node *x = g->outs[o];
  const int V = map_vec_width(g, x->n);
  fmt_buf elt; fmt_init(&elt);
  L->o = &elt; scope_reset(L); L->rowctx = 0;
  memset(L->used_field, 0, sizeof L->used_field);
  L->xf = "x_[kk]."; L->base_n = x->n;
  ixv ix = {"i", TAG_BASE};
  for (int p = o; p < g->nout; p++) {
    const rt_node *y = g->outs[p];
    if ((is_red(y) && L->stage[node_index(g, y)]) || y->n != x->n) continue;
    const char *v = emit_val(L, y, &ix);
    fmt_printf(&elt, "    ov%d[kk] = %s;\n", p, v);
  }
  L->xf = NULL; L->o = body;
  fmt_puts(body, "  struct XM {");
  int nf = 0;
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k]) { fmt_printf(body, " %s f%d;", ctype(g->ins[k]->t), k); nf++; }
  fmt_puts(body, nf ? " };\n" : " char f_; };\n");
  const int T = L->mapt;
  fmt_printf(body, "  const I nv_ = n_ / %d, gs_ = (I)gridDim.x * %d;\n", V, T);
  fmt_printf(body, "  for (I q = (I)blockIdx.x * %d + threadIdx.x; q < nv_; q += 2 * gs_) {\n", T);
  fmt_printf(body, "    const bool two = q + gs_ < nv_;\n    const I b_[2] = {q * %d, (q + gs_) * %d};\n    XM x_[%d];\n", V, V, 2 * V);
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k])
    for (int h = 0; h < 2; h++)
      fmt_printf(body, "    %s{ %s v[%d]; gk_ld<%d>(v, in%d + b_[%d]);\n#pragma unroll\n      for (int kk = 0; kk < %d; ++kk) x_[%d + kk].f%d = v[kk]; }\n",
                 h ? "if (two) " : "", ctype(g->ins[k]->t), V, V, k, h, V, h * V, k);
  for (int p = o; p < g->nout; p++) {
    const rt_node *y = g->outs[p];
    if ((is_red(y) && L->stage[node_index(g, y)]) || y->n != x->n) continue;
    fmt_printf(body, "    %s ov%d[%d];\n", ctype(y->t), p, 2 * V);
  }
  fmt_printf(body, "#pragma unroll\n    for (int kk = 0; kk < %d; ++kk) if (kk < %d || two) {\n", 2 * V, V);
  fmt_printf(body, "    const I i = b_[kk / %d] + kk %% %d;\n    (void)i;\n", V, V);
  fmt_puts(body, elt.data ? elt.data : "");
  if (elt.status) body->status = elt.status;
  fmt_free(&elt);
  fmt_puts(body, "    }\n");
  for (int p = o; p < g->nout; p++) {
    const rt_node *y = g->outs[p];
    if ((is_red(y) && L->stage[node_index(g, y)]) || y->n != x->n) continue;
    fmt_printf(body, "    gk_st<%d>(out%d + b_[0], ov%d);\n    if (two) gk_st<%d>(out%d + b_[1], ov%d + %d);\n", V, p, p, V, p, p, V);
  }
  fmt_puts(body, "  }\n");
  fmt_printf(body, "  for (I i = nv_ * %d + (I)blockIdx.x * %d + threadIdx.x; i < n_; i += gs_) {\n", V, T);
}

/* Any MAP / REDUCE / ROWS group: reductions in dependency stages (whole
** array: block partials, grid barrier, block 0 combines; per row / column:
** a warp per row / column), a grid barrier after each stage, then every
** elementwise output by a grid-stride loop.  Reduce results live in their
** output buffer or in temp. */
static int lower_staged(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  int nper[8];
  memset(L->stage, 0, sizeof(int) * (size_t)g->nnodes);
  int ns = stages(L, nper);
  if (ns > RT_MAX_STAGES) { lw_fail(L, "too many dependent reduction stages"); return -1; }   /* the fuser splits deeper chains */
  L->rmode = RM_STORAGE;
  fmt_buf body; fmt_init(&body);
  L->o = &body;
  /* temp layout: barrier counter, then partials per whole stage, then result slots */
  int64_t off = 256, grid;
  int has_whole = 0;
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i] && g->nodes[i]->axis < 0) has_whole = 1;
  int64_t maxn = 1;
  for (int o = 0; o < g->nout; o++) if (g->outs[o]->n > maxn) maxn = g->outs[o]->n;
  const int mapt = L->vec_ok && ns == 0 && env_red.mt ? env_red.mt : MAP_THREADS;   /* knob mt: map_vector's block */
  L->mapt = mapt;
  if (ns > 0) grid = (int64_t)L->sms * 2;
  else if (L->vec_ok)   /* map_vector: one vector a thread, one step: a block reads and writes its 4 KB and
                        ** retires (x * 2 + 1 on 2^28 f32 505 us against 544 for a grid-stride loop over 32
                        ** blocks an SM, cudaMemcpy 510; NOTES.md, session 15).  Knob mg: the old cap. */
    grid = env_red.mg ? gk_max64(1, gk_min64(gk_cdiv64(maxn, mapt * 8), (int64_t)L->sms * env_red.mg * MAP_THREADS / mapt))
                      : gk_max64(1, gk_min64(gk_cdiv64(maxn, mapt * map_vec_width(g, maxn)),
                                             (((int64_t)1 << 31) - 1) / (3 * mapt)));   /* q + 2 gs_ fits an int */
  else grid = gk_max64(1, gk_min64(gk_cdiv64(maxn, MAP_THREADS * 4), (int64_t)L->sms * 16));
  fmt_puts(&body, "  unsigned goal = 0;\n  unsigned *bar = (unsigned *)tmp;\n  (void)goal; (void)bar;\n");
  for (int i = 0; i < g->nnodes; i++) {
    const rt_node *x = g->nodes[i];
    if (!L->stage[i] || out_index(g, x) >= 0) continue;
    fmt_printf(&body, "  %s *rv%d = (%s *)(tmp + %s);\n", ctype(x->t), i, ctype(x->t), prm(L, x, P_OFF, off));
    off += gk_align16(x->n * (int64_t)rt_dtype_size(x->t));
  }
  int64_t part_off = off;
  int maxper = 1;
  for (int q = 1; q <= ns; q++) if (nper[q] > maxper) maxper = nper[q];
  if (has_whole) off += grid * acc_bound(maxper);
  for (int s = 1; s <= ns; s++) {
    L->avail = s - 1;
    /* whole-array reductions of this stage */
    int whole = 0, rowsred = 0;
    const rt_node *w0 = NULL;
    for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == s) {
      if (g->nodes[i]->axis < 0) { whole = 1; w0 = g->nodes[i]; } else rowsred = 1;
    }
    fmt_printf(&body, "  /* stage %d */\n", s);
    if (whole) {
      const char *len = prm(L, w0->in[0], P_N, w0->in[0]->n);
      fmt_printf(&body, "  {\n    O%d op;\n    S%d acc = op.identity(), accu[4];\n", s, s);
      hoist(L, &body, s - 1);
      fmt_puts(&body, "#pragma unroll\n    for (int u = 0; u < 4; ++u) accu[u] = op.identity();\n");
      fmt_printf(&body, "    const I n_ = (I)%s;\n", len);
      fmt_printf(&body, "    for (I i0 = (I)blockIdx.x * %d + threadIdx.x; i0 < n_; i0 += (I)gridDim.x * %d) {\n",
                 STAGED_THREADS * 4, STAGED_THREADS * 4);
      fmt_printf(&body, "#pragma unroll\n    for (int u = 0; u < 4; ++u) {\n    const I i = i0 + u * %d;\n    if (i < n_) {\n",
                 STAGED_THREADS);
      scope_reset(L); L->rowctx = 0;
      ixv ix = {"i", TAG_BASE};
      /* only this stage's whole reductions */
      fmt_printf(&body, "    S%d r;\n", s);
      for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == s && g->nodes[i]->axis < 0) {
        const char *v = emit_val(L, g->nodes[i]->in[0], &ix);
        fmt_printf(&body, "    r.f%d = ", L->field[i]);
        red_lift(&body, g->nodes[i], v, "i");
        fmt_puts(&body, ";\n");
      }
      fmt_puts(&body, "    accu[u] = op(accu[u], r);\n    }\n    }\n    }\n");
      fmt_puts(&body, "    acc = op(op(accu[0], accu[1]), op(accu[2], accu[3]));\n");
      fmt_printf(&body, "    __shared__ typename gk_block_reduce<%d, O%d>::TempStorage ts;\n", STAGED_THREADS, s);
      fmt_printf(&body, "    acc = gk_block_reduce<%d, O%d>(ts).reduce(acc, op);\n", STAGED_THREADS, s);
      fmt_printf(&body, "    S%d *part = (S%d *)(tmp + %s);\n", s, s, prm(L, NULL, P_PART, part_off));
      fmt_puts(&body, "    if (threadIdx.x == 0) gk_st_cg(part + blockIdx.x, acc);\n");
      fmt_puts(&body, "    gkl_grid_sync(bar, goal);\n");
      fmt_puts(&body, "    if (blockIdx.x == 0) {\n      acc = op.identity();\n");
      fmt_printf(&body, "      for (unsigned b = threadIdx.x; b < gridDim.x; b += %d) acc = op(acc, gk_ld_cg(part + b));\n", STAGED_THREADS);
      fmt_printf(&body, "      __shared__ typename gk_block_reduce<%d, O%d>::TempStorage ts2;\n", STAGED_THREADS, s);
      fmt_printf(&body, "      acc = gk_block_reduce<%d, O%d>(ts2).reduce(acc, op);\n", STAGED_THREADS, s);
      fmt_puts(&body, "      if (threadIdx.x == 0) {\n");
      for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == s && g->nodes[i]->axis < 0) {
        char p[32], a[32]; red_store_name(L, g->nodes[i], p, sizeof p);
        snprintf(a, sizeof a, "acc.f%d", L->field[i]);
        fmt_printf(&body, "        gkl_st(%s, ", p);
        red_final(&body, g->nodes[i], a);
        fmt_puts(&body, ");\n");
      }
      fmt_puts(&body, "      }\n    }\n  }\n");
    }
    if (rowsred) {
      /* a warp per row (axis 1) or per column (axis 0); one loop per matrix shape */
      char *done = calloc((size_t)g->nnodes + 1, 1);
      if (!done) { lw_fail(L, "out of memory"); break; }
      for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == s && g->nodes[i]->axis >= 0 && !done[i]) {
        const rt_node *x = g->nodes[i];
        int64_t R = x->in[0]->shape[0], C = x->in[0]->shape[1];
        int ax = x->axis;
        for (int q = i; q < g->nnodes; q++)
          if (L->stage[q] == s && g->nodes[q]->axis == ax && same_shape2(g->nodes[q]->in[0], R, C)) done[q] = (char)(i + 1 == 0 ? 1 : 2);
        fmt_printf(&body, "  {\n    O%d op;\n    const int lane = threadIdx.x & 31;\n", s);
        hoist(L, &body, s - 1);
        const char *pR = prm(L, x->in[0], P_R, R), *pC = prm(L, x->in[0], P_C, C);
        fmt_printf(&body, "    const I R_ = (I)%s, C_ = (I)%s;\n", pR, pC);
        fmt_printf(&body, "    for (I seg = ((I)blockIdx.x * %d + threadIdx.x) >> 5; seg < %s; seg += ((I)gridDim.x * %d) >> 5) {\n",
                   STAGED_THREADS, ax == 1 ? "R_" : "C_", STAGED_THREADS);
        fmt_printf(&body, "      S%d acc = op.identity();\n", s);
        fmt_printf(&body, "      for (I e = lane; e < %s; e += 32) {\n", ax == 1 ? "C_" : "R_");
        scope_reset(L);
        L->rowctx = 1; L->R = R; L->C = C;
        L->row = ax == 1 ? "seg" : "e"; L->col = ax == 1 ? "e" : "seg";
        fmt_printf(&body, "    const I fi = %s * C_ + %s;\n", L->row, L->col);
        ixv ix = {"fi", TAG_BASE};
        fmt_printf(&body, "    S%d r = op.identity();\n", s);
        for (int q = i; q < g->nnodes; q++) if (done[q] == 2) {
          const char *v = emit_val(L, g->nodes[q]->in[0], &ix);
          fmt_printf(&body, "    r.f%d = ", L->field[q]);
          red_lift(&body, g->nodes[q], v, "e");
          fmt_puts(&body, ";\n");
        }
        L->rowctx = 0;
        fmt_puts(&body, "        acc = op(acc, r);\n      }\n");
        fmt_printf(&body, "      acc = gk_warp_reduce<32>(acc, op);\n      if (lane == 0) {\n");
        for (int q = i; q < g->nnodes; q++) if (done[q] == 2) {
          char p[32], a[32]; red_store_name(L, g->nodes[q], p, sizeof p);
          snprintf(a, sizeof a, "acc.f%d", L->field[q]);
          fmt_printf(&body, "        gkl_st(%s + seg, ", p);
          red_final(&body, g->nodes[q], a);
          fmt_puts(&body, ");\n");
          done[q] = 1;
        }
        fmt_puts(&body, "      }\n    }\n  }\n");
      }
      free(done);
    }
    fmt_puts(&body, "  gkl_grid_sync(bar, goal);\n");
  }
  /* elementwise outputs */
  L->avail = ns;
  for (int o = 0; o < g->nout; o++) {
    const rt_node *x = g->outs[o];
    if (is_red(x) && node_index(g, x) >= 0 && L->stage[node_index(g, x)]) continue;
    int first = 1;
    for (int p = 0; p < o; p++) {
      const rt_node *y = g->outs[p];
      if (!(is_red(y) && L->stage[node_index(g, y)]) && y->n == x->n) first = 0;
    }
    if (!first) continue;
    fmt_puts(&body, "  {\n");
    hoist(L, &body, ns);
    fmt_printf(&body, "  const I n_ = (I)%s;\n", prm(L, x, P_N, x->n));
    /* heavy element code: the scalar loop (one copy), not the vector loop's 2V + 1 */
    int cmap = 0;
    for (int p = o; p < g->nout && L->vec_ok; p++)
      if (!(is_red(g->outs[p]) && L->stage[node_index(g, g->outs[p])]) && g->outs[p]->n == x->n)
        cmap |= compact1(L, g->outs[p], 9);
    L->ool = cmap;
    if (L->vec_ok && !cmap) map_vector(L, &body, o);
    else fmt_printf(&body, "  for (I i = (I)blockIdx.x * %d + threadIdx.x; i < n_; i += (I)gridDim.x * %d) {\n",
                    mapt, mapt);
    scope_reset(L); L->rowctx = 0;
    ixv ix = {"i", TAG_BASE};
    for (int p = o; p < g->nout; p++) {
      const rt_node *y = g->outs[p];
      if (is_red(y) && L->stage[node_index(g, y)]) continue;
      if (y->n == x->n) store_out(L, p, &ix);
    }
    L->ool = 0;
    fmt_puts(&body, "  }\n  }\n");
  }
  /* assemble */
  head(L, src, "gk_reduce.cuh", ns > 0);
  for (int s = 1; s <= ns; s++) stage_structs(L, src, s);
  fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d%s) gk_0000000000000000(", ns ? STAGED_THREADS : mapt, ns ? ", 2" : "");
  params(L, src);
  fmt_puts(src, ") {\n");
  fmt_puts(src, body.data ? body.data : "");
  fmt_puts(src, "}\n");
  fmt_free(&body);
  set_launch(L->p, grid, 1, 1, ns ? STAGED_THREADS : mapt, 1, 0);
  L->p->temp_bytes = ns ? off : 0;
  L->p->temp_zero = ns > 0;
  if (ns == 0 && maxn == 0) L->p->nokernel = 1;
  return L->fail ? -1 : 0;
}

/* ------------------------------------------------- reduce fast path */

/* m' when x is sum(exp(E - bcast(m'))) with m' = max(E) or one of the
** guards compiler/build.c's safe_max writes (where(m > -inf, m, c),
** where(isfinite(m), m, c), c a finite constant) and max(E) computed in this
** group: such a sum folds in the same pass as max(E), with online
** rescaling (gkl_op_ms).  Else NULL.  axis -1: whole arrays (m' one value);
** 1: rows (sum and max per row, m' broadcast along the row: lower_rows'
** ONLINE_B). */
static const rt_node *online_mprime_ax(const rt_group *g, const rt_node *x, int axis) {
  if (x->op != RT_REDUCE || x->rop != ROP_SUM || x->axis != axis || !isf(x->t) || in_index(g, x) >= 0) return NULL;
  const rt_node *e = x->in[0];
  if (e->op != RT_EXP || e->t != x->t || in_index(g, e) >= 0 || node_index(g, e) < 0) return NULL;
  const rt_node *d = e->in[0];
  if (d->op != RT_SUB || in_index(g, d) >= 0 || node_index(g, d) < 0) return NULL;
  const rt_node *E = d->in[0], *v = d->in[1];
  if (v->op != RT_VIEW || in_index(g, v) >= 0 || v->voff != 0 || v->in[0]->n != (axis < 0 ? 1 : x->n) || v->n != E->n)
    return NULL;
  if (axis < 0) {
    for (int k = 0; k < v->ndim; k++) if (v->shape[k] != 1 && v->vstride[k] != 0) return NULL;
  } else if (v->ndim != 2 || v->vstride[1] != 0 || (v->shape[0] != 1 && v->vstride[0] != 1)) return NULL;
  const rt_node *mp = v->in[0], *M = mp;
  if (in_index(g, mp) >= 0) return NULL;
  if (mp->op == RT_WHERE) {
    const rt_node *c = mp->in[0], *k = mp->in[2];
    M = mp->in[1];
    if (k->op != RT_CONST || k->n != (axis < 0 ? 1 : x->n) || k->t != M->t || !isfinite(k->c.f) || in_index(g, c) >= 0) return NULL;
    int gt = c->op == RT_GT && c->in[0] == M && c->in[1]->op == RT_CONST && c->in[1]->t == M->t &&
             c->in[1]->c.f == -INFINITY;
    if (!gt && !(c->op == RT_ISFINITE && c->in[0] == M)) return NULL;
  }
  if (M->op != RT_REDUCE || M->rop != ROP_MAX || M->axis != axis || M->in[0] != E || M->t != E->t || E->t != x->t ||
      in_index(g, M) >= 0 || node_index(g, M) < 0)
    return NULL;
  return mp;
}
static const rt_node *online_mprime(const rt_group *g, const rt_node *x) { return online_mprime_ax(g, x, -1); }

/* lower_reduce1: blocks an SM of a kernel that folds an online pair */
#define ONLINE_BLOCKS_PER_SM 3

/* One stage of whole-array reductions: gk_grid_reduce, K is load, op and
** epilogue at once.  A sum(exp(E - max(E))) (online_mprime) counts as stage 1. */
static int lower_reduce1(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  int nper[8];
  memset(L->stage, 0, sizeof(int) * (size_t)g->nnodes);
  for (int i = 0; i < g->nnodes; i++)
    if ((L->onl[i] = online_mprime(g, g->nodes[i]))) L->has_onl = 1;
  int ns = stages(L, nper);
  if (ns != 1) return -1;
  /* a var: one pass of sums shifted by the first element */
  snprintf(L->pivot.s, sizeof L->pivot.s, "(I)0");
  L->pivot.tag = TAG_OTHER;
  for (int i = 0; i < g->nnodes; i++)
    if (L->stage[i] == 1 && g->nodes[i]->rop == ROP_VAR) L->varm[i] = VAR_SHIFT;
  /* max(E) next to an online sum(exp(E - max(E))) is the pair's running max:
  ** no reduction of its own */
  for (int j = 0; j < g->nnodes; j++) if (L->onl[j] && !L->shared[j]) {
    const rt_node *E = g->nodes[j]->in[0]->in[0]->in[0];
    for (int i = j + 1; i < g->nnodes; i++)   /* logsumexp(E) next to sum(exp(E - max(E))): one pair */
      if (L->onl[i] && L->stage[i] == 1 && g->nodes[i]->in[0]->in[0]->in[0] == E && g->nodes[i]->t == g->nodes[j]->t) {
        L->shared[i] = 1;
        L->field[i] = L->field[j];
      }
    for (int i = 0; i < g->nnodes; i++) {
      const rt_node *M = g->nodes[i];
      if (L->stage[i] == 1 && !L->maxof[i] && M->rop == ROP_MAX && M->axis < 0 && M->in[0] == E && M->t == E->t &&
          g->nodes[j]->t == E->t)
        L->maxof[i] = j + 1;
    }
  }
  int64_t len = -1;
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i]) {
    if (g->nodes[i]->axis >= 0) return -1;
    if (len < 0) len = g->nodes[i]->in[0]->n;
    else if (len != g->nodes[i]->in[0]->n) return -1;
  }
  for (int o = 0; o < g->nout; o++) if (!(is_red(g->outs[o])) && g->outs[o]->n > 64) return -1;
  fmt_buf lift, epi, piv; fmt_init(&lift); fmt_init(&epi); fmt_init(&piv);
  memset(L->used_field, 0, sizeof L->used_field);
  /* heavy element code: lift out of line, a var's pivot computed once per thread */
  const rt_node **roots = calloc((size_t)g->nnodes + 1, sizeof *roots);
  int nroots = 0;
  if (!roots) { lw_fail(L, "out of memory"); return -1; }
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 1) roots[nroots++] = g->nodes[i]->in[0];
  int cmp = compact(L, roots, nroots, L->vec_ok ? 17 : 9);
  free(roots);
  L->hoist_pv = L->ool = cmp;
  /* lift */
  L->o = &lift; scope_reset(L); L->rowctx = 0;
  L->xf = "x."; L->base_n = len; L->avail = 0; L->rmode = RM_REG;
  ixv ix = {"i", TAG_BASE};
  stage_lift(L, 1, &ix, "i");
  L->hoist_pv = 0;
  if (cmp) {
    L->o = &piv; scope_reset(L); L->xf = NULL;
    for (int i = 0; i < g->nnodes; i++)
      if (L->stage[i] == 1 && own_field(L, i) && !L->onl[i] && L->varm[i] == VAR_SHIFT)
        fmt_printf(&piv, "    pv%d = (double)%s;\n", i, emit_val(L, g->nodes[i]->in[0], &L->pivot));
  }
  L->ool = 0;
  /* epilogue */
  L->o = &epi; scope_reset(L); L->xf = NULL; L->avail = 1; L->acc[1] = "t"; L->rtag = TAG_BASE;
  for (int o = 0; o < g->nout; o++) {
    const rt_node *x = g->outs[o];
    if (x->n == 1) {
      ixv ie = {"(I)0", TAG_OTHER};
      const char *v = emit_val(L, x, &ie);
      fmt_printf(&epi, "    out%d[0] = %s;\n", o, v);
    } else if (x->n > 1) {   /* a small output (<= 64 elements): a loop, its values in their own scope */
      int saved = L->nmemo;
      fmt_printf(&epi, "    for (I e%d = 0; e%d < (I)%s; ++e%d) {\n", o, o, prm(L, x, P_N, x->n), o);
      ixv ie; snprintf(ie.s, sizeof ie.s, "e%d", o); ie.tag = TAG_OTHER;
      const char *v = emit_val(L, x, &ie);
      fmt_printf(&epi, "    out%d[e%d] = %s;\n    }\n", o, o, v);
      L->nmemo = saved;
    }
  }
  int64_t ab = acc_bound(nper[1]);
  /* 8-byte fields: two per 16-byte load (v2), else four (v4); same tile */
  int wide = 0;
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k] && rt_dtype_size(g->ins[k]->t) == 8) wide = 1;
  /* the policy <threads, loads in flight, vector>: v4 / v2 / v1, or the knobs rt, ri, rb */
  const int rvec = !L->vec_ok ? 1 : wide ? 2 : 4;
  int nfl = 0;
  for (int k = 0; k < g->nin && k < 64; k++) nfl += L->used_field[k] != 0;
  /* two or more vector inputs of 8 bytes (dot): 1024 threads x 4 loads of 2 elements, one tile a block
  ** (no grid-stride loop; the last block combines every block's partial): dot 2^28 f64 988 -> 941 us,
  ** 10^8+3 374 -> 357.  With 4-byte inputs one tile a block lost (dot 2^28 f32 488 -> 497-515; NOTES.md,
  ** session 15).  Knob rb: the capped grid of before. */
  const int oneshot = nfl >= 2 && rvec == 2 && !env_red.rb;
  /* small n (launch.h gk_small_1d; knob rs=-1 off): blocks of 256, tiles of
  ** half the size, so that every SM gets one (H100, session 26, rt=256 at
  ** 10^6 + 3: sum 8.8 -> 8.4 us, sum-exp 12.2 -> 11.0; 3e7 + 1 is not small) */
  const int small = !oneshot && env_red.rs >= 0 && gk_small_1d(len, L->sms);
  const int rthr = env_red.rt ? env_red.rt : oneshot ? 1024 : small ? GK_REDUCE_THREADS / 2 : GK_REDUCE_THREADS;
  const int ritems = env_red.ri ? env_red.ri : rvec == 4 || oneshot ? 4 : 8;
  const int rbps = env_red.rb ? env_red.rb : oneshot ? 1 << 20 : 2048 / rthr;
  gk_launch gl = gk_reduce_launch_k(len, (int64_t)rthr * ritems * rvec, rthr, rbps, L->sms, ab);
  /* a light fold (one plain reduction of one input as it is, accumulators of
  ** at most 8 bytes, or argmax / argmin of 4-byte values) fits 32 registers with
  ** rl = 4 blocks an SM of 512 threads without spilling (ptxas, sm_90); at
  ** 33-40 registers only 3 of the grid's 4 blocks an SM are resident and the
  ** fourth runs as a second, partial wave.  Knob ra=1: these folds get
  ** __launch_bounds__(threads, 2048 / threads); rl=N: every fold gets N. */
  int light = !L->has_onl && nper[1] == 1 && !piv.data && !cmp && nfl == 1;
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 1) {
    const int rop = g->nodes[i]->rop;
    const rt_node *e = g->nodes[i]->in[0];
    if (e->op == RT_CAST && e->nin == 1) e = e->in[0];
    if (e->op == RT_MUL && e->nin == 2 && e->in[0] == e->in[1]) e = e->in[0];   /* norm's x * x */
    if (in_index(g, e) < 0) light = 0;   /* element code (even x * x + 1) spilled at 32 registers */
    if (L->varm[i] || rop == ROP_VAR || ((rop == ROP_ARGMAX || rop == ROP_ARGMIN) && wide)) light = 0;
  }
  const int ra = env_red.ra ? env_red.ra > 0 : RED_LIGHT_BOUNDS;
  const int rl = env_red.rl ? env_red.rl : ra && light ? 2048 / rthr : 0;
  /* Online pairs alone over 4-byte inputs fold in up to 40 registers a
  ** thread: three blocks an SM, the whole grid resident (four, of which three
  ** fit, left a second, partial wave: 15% of the SMs' time idle).  With
  ** 8-byte inputs or other reductions beside, the fold needs 50-110
  ** registers: one or two blocks an SM, whole waves, as before. */
  int onl3 = L->has_onl;
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k] && rt_dtype_size(g->ins[k]->t) > 4) onl3 = 0;
  for (int i = 0; i < g->nnodes; i++)
    if (L->stage[i] == 1 && ((own_field(L, i) && (!L->onl[i] || rt_dtype_size(g->nodes[i]->t) > 4)) || q_stage(L, i) == 1))
      onl3 = 0;
  if (onl3) gl.grid[0] = gk_min64(gl.grid[0], (int64_t)L->sms * ONLINE_BLOCKS_PER_SM * GK_REDUCE_THREADS / rthr);
  int64_t coff = gk_reduce_counter_offset(&gl, ab);
  const char *plen = prm(L, NULL, P_LEN, len), *pcoff = prm(L, NULL, P_COFF, coff);
  head(L, src, "gk_reduce.cuh", 0);
  stage_structs(L, src, 1);
  fmt_puts(src, "struct XF {");
  int nf = 0;
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k]) { fmt_printf(src, " %s f%d;", ctype(g->ins[k]->t), k); nf++; }
  if (!nf) fmt_puts(src, " char f_;");
  fmt_puts(src, " };\nstruct K : O1 {\n  typedef XF X;\n  using O1::operator();\n");
  members(L, src);
  L->p->doneflag = 1;
  fmt_puts(src, "  gk_u64 done_, seq_;\n");
  if (piv.data) {
    for (int i = 0; i < g->nnodes; i++)
      if (L->stage[i] == 1 && own_field(L, i) && !L->onl[i] && L->varm[i] == VAR_SHIFT) fmt_printf(src, "  double pv%d;\n", i);
    fmt_printf(src, "  __device__ void pivots() {\n%s  }\n", piv.data);
  }
  fmt_puts(src, "  template <int N> __device__ void load(X *d, I i) const {\n");
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k])
    fmt_printf(src, "    { %s v[N]; gk_ld<N>(v, in%d + i);\n#pragma unroll\n      for (int kk = 0; kk < N; ++kk) d[kk].f%d = v[kk]; }\n",
               ctype(g->ins[k]->t), k, k);
  fmt_printf(src, "  }\n  template <class XX, class J> __device__ %sS1 lift(const XX &x, J i_) const {\n    const I i = (I)i_;\n",
             noinl(cmp));
  fmt_puts(src, lift.data ? lift.data : "");
  fmt_puts(src, "    return r;\n  }\n");
  /* gk_fold: one element without the online pair's general merge, and
  ** argmax / argmin without the index tie-break (gk_block_fold folds each
  ** accumulator's elements in index order) */
  int argx = 0;
  for (int i = 0; i < g->nnodes; i++)
    if (L->stage[i] == 1 && own_field(L, i) && !L->onl[i] && !L->varm[i] &&
        (g->nodes[i]->rop == ROP_ARGMAX || g->nodes[i]->rop == ROP_ARGMIN))
      argx = 1;
  if (L->has_onl || argx) {
    fmt_puts(src, "  template <class XX, class J> __device__ S1 fold(const S1 &a, const XX &x, J i_) const {\n"
                  "    const S1 r = lift(x, i_);\n    S1 b;\n");
    for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 1) {
      int f = L->field[i];
      const rt_node *x = g->nodes[i];
      if (own_field(L, i) && L->onl[i]) fmt_printf(src, "    b.f%d = gkl_ms_fold(a.f%d, r.f%d.m);\n", f, f, f);
      else if (own_field(L, i) && !L->varm[i] && (x->rop == ROP_ARGMAX || x->rop == ROP_ARGMIN))
        fmt_printf(src, "    b.f%d = o%d.later(a.f%d, r.f%d);\n", f, f, f, f);
      else if (own_field(L, i)) fmt_printf(src, "    b.f%d = o%d(a.f%d, r.f%d);\n", f, f, f, f);
      /* every member of S1, a VAR_SHIFT's sum of squares included */
      if (q_stage(L, i) == 1) fmt_printf(src, "    b.q%d = a.q%d + r.q%d;\n", i, i, i);
    }
    fmt_puts(src, "    return b;\n  }\n");
  }
  /* gk_block_fold's full tiles: each online pair's elements of a thread's
  ** tile folded together (gkl_ms_fold_tile), the other fields as in fold */
  if (L->has_onl) {
    fmt_puts(src, "  template <int U, int V, class XX, class J> __device__ void fold_tile(S1 (&a)[U], const XX (&x)[U][V], "
                  "const J (&j)[U]) const {\n    S1 r[U][V];\n"
                  "#pragma unroll\n    for (int u = 0; u < U; ++u)\n#pragma unroll\n"
                  "      for (int v = 0; v < V; ++v) r[u][v] = lift(x[u][v], j[u] + v);\n");
    for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 1 && own_field(L, i) && L->onl[i]) {
      int f = L->field[i];
      fmt_printf(src, "    { decltype(a[0].f%d) m[U]; decltype(a[0].f%d.m) e[U][V];\n"
                      "#pragma unroll\n      for (int u = 0; u < U; ++u) {\n        m[u] = a[u].f%d;\n"
                      "#pragma unroll\n        for (int v = 0; v < V; ++v) e[u][v] = r[u][v].f%d.m;\n      }\n"
                      "      gkl_ms_fold_tile%s(m, e);\n"
                      "#pragma unroll\n      for (int u = 0; u < U; ++u) a[u].f%d = m[u]; }\n", f, f, f, f,
                 env_red.me < 0 ? "" : "<1>", f);   /* <1>: a first tile skips the rescale (gk_fused.cuh) */
    }
    fmt_buf rest; fmt_init(&rest);
    for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 1) {
      int f = L->field[i];
      const rt_node *x = g->nodes[i];
      if (own_field(L, i) && L->onl[i]) continue;
      if (own_field(L, i) && !L->varm[i] && (x->rop == ROP_ARGMAX || x->rop == ROP_ARGMIN))
        fmt_printf(&rest, "        a[u].f%d = o%d.later(a[u].f%d, r[u][v].f%d);\n", f, f, f, f);
      else if (own_field(L, i)) fmt_printf(&rest, "        a[u].f%d = o%d(a[u].f%d, r[u][v].f%d);\n", f, f, f, f);
      if (q_stage(L, i) == 1) fmt_printf(&rest, "        a[u].q%d = a[u].q%d + r[u][v].q%d;\n", i, i, i);
    }
    if (rest.status) lw_fail(L, "out of memory");
    if (rest.data && rest.data[0])
      fmt_printf(src, "#pragma unroll\n    for (int u = 0; u < U; ++u)\n#pragma unroll\n      for (int v = 0; v < V; ++v) {\n%s      }\n",
                 rest.data);
    fmt_puts(src, "  }\n");
    fmt_free(&rest);
    /* the block trees merge at one max (gkl_op_ms::block_align; GK_RED_VARIANT ma=-1: pair merges) */
    if (env_red.ma >= 0) {
      fmt_puts(src, "  template <int TH> __device__ void block_align(S1 &v) const {");
      for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 1 && own_field(L, i) && L->onl[i])
        fmt_printf(src, " o%d.template block_align<TH>(v.f%d);", L->field[i], L->field[i]);
      fmt_puts(src, " }\n");
    }
  }
  fmt_puts(src, "  __device__ void operator()(const S1 &t) const {\n");
  fmt_puts(src, epi.data ? epi.data : "");
  /* the results are written: tell a host that waits on a mapped one */
  fmt_puts(src, "    if (done_) { __threadfence_system(); *(volatile unsigned *)done_ = (unsigned)seq_; }\n");
  fmt_puts(src, "  }\n};\n");
  if (onl3) fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d, %d) gk_0000000000000000(", rthr,
                      ONLINE_BLOCKS_PER_SM * GK_REDUCE_THREADS / rthr);
  else if (rl) fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d, %d) gk_0000000000000000(", rthr, rl);
  else fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", rthr);
  params(L, src);
  fmt_puts(src, ") {\n");
  init_k(L, src);
  fmt_puts(src, "  k.done_ = gkdone;\n  k.seq_ = gkseq;\n");
  if (piv.data) fmt_printf(src, "  if ((I)%s > 0) k.pivots();\n", plen);
  char pol[64];
  if (rthr == GK_REDUCE_THREADS && ritems == (rvec == 4 ? 4 : 8))   /* the defaults keep their names (shipped kernels' texts) */
    snprintf(pol, sizeof pol, "gk_reduce_policy_%s", rvec == 1 ? "v1" : rvec == 2 ? "v2" : "v4");
  else snprintf(pol, sizeof pol, "gk_reduce_policy<%d, %d, %d>", rthr, ritems, rvec);
  fmt_printf(src, "  gk_grid_reduce<%s>((I)%s, k, k, k, (S1 *)tmp, (gk_u32 *)(tmp + %s));\n}\n", pol, plen, pcoff);
  fmt_free(&lift); fmt_free(&epi); fmt_free(&piv);
  set_launch(L->p, gl.grid[0], 1, 1, rthr, 1, 0);
  /* one block touches neither partials nor counter: no temp, no memset */
  L->p->temp_bytes = gl.grid[0] > 1 ? coff + 16 : 0;
  L->p->temp_zero = gl.grid[0] > 1;
  return L->fail ? -1 : 0;
}

/* --------------------------------------------------- row fast path */

static int same_rc(const rt_node *x, int64_t R, int64_t C) {
  while (x->op == RT_RESHAPE && x->n == R * C) x = x->in[0];   /* axis=k's result: the row matrix, reshaped back */
  return x->ndim == 2 && x->shape[0] == R && x->shape[1] == C;
}

/* The element record X of a row/column kernel: a field per input the lifts
** read (f<k>), and the row index where a lift needs it. */
static void xf_struct(lw *L, fmt_buf *src, int with_row) {
  const rt_group *g = L->g;
  int nfx = 0;
  fmt_puts(src, "struct XF {");
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k]) { fmt_printf(src, " %s f%d;", ctype(g->ins[k]->t), k); nfx++; }
  if (with_row) { fmt_puts(src, " I r;"); nfx++; }
  for (int f = 0; f < L->nvf; f++) { fmt_printf(src, " %s v%d;", ctype(L->vf[f].x->t), f); nfx++; }
  fmt_puts(src, nfx ? " };\n" : " char f_; };\n");
}
/* Its load functor: N consecutive elements of row `row` from column col of
** the R x C inputs (pC: the column count's name); the caller closes it. */
static void xf_load(lw *L, fmt_buf *src, const char *pC, int with_row) {
  const rt_group *g = L->g;
  fmt_puts(src, "  template <int N> __device__ void load(X *d, I row, I col) const {\n");
  fmt_printf(src, "    const I base = row * (I)%s + col;\n    (void)base;\n", pC);
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k])
    fmt_printf(src, "    { %s v[N]; gk_ld<N>(v, in%d + base);\n#pragma unroll\n      for (int kk = 0; kk < N; ++kk) d[kk].f%d = v[kk]; }\n",
               ctype(g->ins[k]->t), k, k);
  if (with_row) fmt_puts(src, "#pragma unroll\n    for (int kk = 0; kk < N; ++kk) d[kk].r = row;\n");
  for (int f = 0; f < L->nvf; f++)
    fmt_printf(src, "    { %s v[N]; gk_ld<N>(v, in%d + %s);\n#pragma unroll\n      for (int kk = 0; kk < N; ++kk) d[kk].v%d = v[kk]; }\n",
               ctype(L->vf[f].x->t), L->vf[f].in, L->vf[f].ix, f);
}

/* The member of stage s's tuple (f<k> or q<i>) when the tuple is one sum of
** f32 values in double -- a sum, a two-pass var's sum, or (knob rv=2, its
** deviations in f32) its squared deviations -- else 0: its packs may then
** be summed in f32 first. */
static int pack_member(const lw *L, int s, char *m, size_t n) {
  const rt_group *g = L->g;
  int k = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const rt_node *x = g->nodes[i];
    if (q_stage(L, i) == s) {
      if (k++ || L->varm[i] == VAR_SHIFT || env_rows.rv != 2 || x->in[0]->t != GK_F32) return 0;
      snprintf(m, n, "q%d", i);
    }
    if (L->stage[i] != s || !own_field(L, i)) continue;
    if (k++ || x->in[0]->t != GK_F32 || (L->onl && L->onl[i])) return 0;
    if (!(x->rop == ROP_SUM && !L->varm[i]) && L->varm[i] != VAR_TWO) return 0;
    snprintf(m, n, "f%d", L->field[i]);
  }
  return k == 1;
}

/* A row program's per-element loop over a pack of N at (row, col): the
** store body st (writing v<o>[kk]) with c and the flat index fi in scope. */
static void store_loop(fmt_buf *src, const fmt_buf *st, const char *pC) {
  fmt_puts(src, "#pragma unroll\n    for (int kk = 0; kk < N; ++kk) {\n");
  fmt_printf(src, "    const I c = col + kk;\n    const I fi = row * (I)%s + c;\n    (void)fi;\n", pC);
  fmt_puts(src, st->data ? st->data : "");
  fmt_puts(src, "    }\n");
}

/* Per-row reductions (axis 1) in at most two stages, elementwise outputs of
** the matrix shape, per-row outputs: one row program. */
static int lower_rows(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  int nper[8];
  memset(L->stage, 0, sizeof(int) * (size_t)g->nnodes);
  int ns = stages(L, nper);
  if (ns < 1 || ns > 2) return -1;
  int64_t R = -1, C = -1;
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i]) {
    const rt_node *x = g->nodes[i];
    if (x->axis != 1) return -1;
    if (R < 0) { R = x->in[0]->shape[0]; C = x->in[0]->shape[1]; }
    else if (!same_rc(x->in[0], R, C)) return -1;
  }
  int has_store = 0;
  for (int o = 0; o < g->nout; o++) {
    const rt_node *x = g->outs[o];
    if (same_rc(x, R, C) && !is_red(x)) has_store = 1;
    else if (x->n != R) return -1;
  }
  if (R == 0 || C == 0) return -1;
  int vec = !L->vec_ok ? 1 : C % 4 == 0 ? 4 : C % 2 == 0 ? 2 : 1;
  /* Welford merges divide per element.  With one stage of reductions, a var
  ** over a row held in registers takes two passes over the registers (sum,
  ** then squared deviations from the mean: numpy's algorithm; the second pass
  ** is the second stage); over a streamed row, one pass of sums shifted by the
  ** row's first element. */
  /* R and C are parameters; K reads them as members */
  const char *pR = prm(L, NULL, P_R, R), *pC = prm(L, NULL, P_C, C);
  snprintf(L->pivot.s, sizeof L->pivot.s, "(x.r * (I)%s)", pC);
  L->pivot.tag = TAG_OTHER;
  if (ns == 1) {
    int cached = gk_rows_plan_k(R, C, vec, L->sms, &env_rows).mode != GK_ROWS_STREAM;
    for (int i = 0; i < g->nnodes && !cached; i++)
      if (L->stage[i] == 1 && g->nodes[i]->rop == ROP_VAR) L->varm[i] = VAR_SHIFT;
    for (int i = 0; i < g->nnodes && cached; i++)
      if (L->stage[i] == 1 && g->nodes[i]->rop == ROP_VAR) {
        L->varm[i] = VAR_TWO;
        ns = 2;
        for (int j = 0; j < g->nnodes; j++)   /* mean(x) next to var(x): one sum */
          if (L->stage[j] == 1 && g->nodes[j]->rop == ROP_SUM && g->nodes[j]->in[0] == g->nodes[i]->in[0] &&
              isf(g->nodes[i]->in[0]->t)) {
            L->varm[i] = VAR_TWO_SHARED;
            L->field[i] = L->field[j];
            break;
          }
      }
  }
  /* heavy element code: lift_a / lift_b / store out of line (each inlined
  ** once per item of a thread's packs: at most 8 packs of 4 and a tail) */
  const int ncp = GK_ROWS_WARP_MAX_PACKS * 4 + 1;
  const rt_node **ra = calloc(3 * ((size_t)g->nnodes + (size_t)g->nout) + 1, sizeof *ra);
  if (!ra) { lw_fail(L, "out of memory"); return -1; }
  const rt_node **rb = ra + g->nnodes + g->nout, **rs = rb + g->nnodes + g->nout;
  int na = 0, nb = 0, nst = 0;
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i]) {
    if (L->stage[i] == 1) ra[na++] = g->nodes[i]->in[0];
    if (L->stage[i] == 2 || (L->varm[i] && L->varm[i] != VAR_SHIFT)) rb[nb++] = g->nodes[i]->in[0];
  }
  for (int o = 0; o < g->nout; o++) if (same_rc(g->outs[o], R, C) && !is_red(g->outs[o])) rs[nst++] = g->outs[o];
  int cla = compact(L, ra, na, ncp), clb = compact(L, rb, nb, ncp), cst = compact(L, rs, nst, ncp);
  free(ra);
  /* a streamed row's var (VAR_SHIFT) recomputes its pivot, the row's first
  ** element, in lift_a: inlined, the copies of a pack share it; out of line
  ** each element would compute it again */
  for (int i = 0; i < g->nnodes; i++) if (L->varm[i] == VAR_SHIFT && env_compact < 0) cla = 0;
  fmt_buf la, lb, st, ro; fmt_init(&la); fmt_init(&lb); fmt_init(&st); fmt_init(&ro);
  memset(L->used_field, 0, sizeof L->used_field);
  L->rmode = RM_REG; L->rtag = TAG_ROW; L->rowctx = 1; L->R = R; L->C = C; L->base_n = R * C;
  L->lift_row = 0;
  char flat[96];
  /* lift_a */
  L->o = &la; scope_reset(L); L->xf = "x."; L->avail = 0; L->in_lift = 1; L->row = "x.r"; L->col = "col"; L->ool = cla;
  snprintf(flat, sizeof flat, "(%s * (I)%s + col)", "x.r", pC);
  ixv ix; snprintf(ix.s, sizeof ix.s, "%s", flat); ix.tag = TAG_BASE;
  int fi = 0;
  /* the flat index mentions x.r: only emit it when needed */
  (void)fi;
  {
    /* stage 1 lift */
    fmt_buf *o = L->o;
    fmt_puts(o, "    S1 r;\n");
    for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 1) {
      const char *v = emit_val(L, g->nodes[i]->in[0], &ix);
      if (L->varm[i] == VAR_TWO_SHARED) continue;
      if (L->varm[i] == VAR_SHIFT) { shift_lift(L, o, i, v); continue; }
      if (L->varm[i]) { fmt_printf(o, "    r.f%d = (double)%s;\n", L->field[i], v); continue; }
      fmt_printf(o, "    r.f%d = ", L->field[i]);
      red_lift(o, g->nodes[i], v, "col");
      fmt_puts(o, ";\n");
    }
  }
  if (strstr(la.data ? la.data : "", "x.r")) L->lift_row = 1;
  if (ns == 2) {
    L->o = &lb; scope_reset(L); L->avail = 1; L->acc[1] = "a"; L->ool = clb;
    fmt_puts(&lb, "    S2 r;\n");
    for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 2) {
      const char *v = emit_val(L, g->nodes[i]->in[0], &ix);
      fmt_printf(&lb, "    r.f%d = ", L->field[i]);
      red_lift(&lb, g->nodes[i], v, "col");
      fmt_puts(&lb, ";\n");
    }
    for (int i = 0; i < g->nnodes; i++) if (L->varm[i] && L->varm[i] != VAR_SHIFT) {
      const char *v = emit_val(L, g->nodes[i]->in[0], &ix);
      if (env_rows.rv == 2 && g->nodes[i]->in[0]->t == GK_F32)   /* knob rv=2: the deviation in f32 */
        fmt_printf(&lb, "    { const float d_ = %s - (float)(a.f%d / (double)%s); r.q%d = (double)(d_ * d_); }\n", v,
                   L->field[i], pC, i);
      else fmt_printf(&lb, "    { const double d_ = (double)%s - a.f%d / (double)%s; r.q%d = d_ * d_; }\n", v, L->field[i],
                 pC, i);
    }
    if (strstr(lb.data ? lb.data : "", "x.r")) L->lift_row = 1;
  }
  L->in_lift = 0;
  /* store */
  L->acc[1] = "a"; L->acc[2] = "b"; L->avail = ns;
  if (has_store) {
    L->o = &st; scope_reset(L); L->xf = "x[kk]."; L->row = "row"; L->col = "c"; L->ool = cst;
    ixv is = {"fi", TAG_BASE};
    for (int o = 0; o < g->nout; o++) {
      const rt_node *x = g->outs[o];
      if (!same_rc(x, R, C) || is_red(x)) continue;
      const char *v = emit_val(L, x, &is);
      fmt_printf(&st, "    v%d[kk] = %s;\n", o, v);
    }
  }
  /* row_out */
  L->o = &ro; scope_reset(L); L->xf = NULL; L->row = "row"; L->col = "0"; L->ool = 0;
  L->rowctx = 0;
  {
    ixv ir = {"row", TAG_ROW};
    for (int o = 0; o < g->nout; o++) {
      const rt_node *x = g->outs[o];
      if (same_rc(x, R, C) && !is_red(x)) continue;
      const char *v = emit_val(L, x, &ir);
      fmt_printf(&ro, "    out%d[row] = %s;\n", o, v);
    }
  }
  /* ONLINE_B (gk_rows.cuh): every pass-B value is a sum(exp(E - m')) of a
  ** pass-A max(E); rescale_b moves such a sum from one pass-A value to
  ** another: s * exp(m'(from) - m'(to)), in double (an empty sum stays 0) */
  fmt_buf rsb; fmt_init(&rsb);
  int online = ns == 2 && env_rows.ol != 1;   /* on by default since session 20 (NOTES); knob ol=1 turns it off */
  for (int i = 0; i < g->nnodes && online; i++)
    if (L->varm[i] || (L->stage[i] == 2 && !online_mprime_ax(g, g->nodes[i], 1))) online = 0;
  for (int i = 0; i < g->nnodes && online; i++) if (L->stage[i] == 2) {
    const rt_node *mp = online_mprime_ax(g, g->nodes[i], 1);
    ixv ir = {"row", TAG_ROW};
    char mf[32], mt[32];
    L->o = &rsb; L->avail = 1;
    scope_reset(L); L->acc[1] = "f"; snprintf(mf, sizeof mf, "%s", emit_val(L, mp, &ir));
    scope_reset(L); L->acc[1] = "t"; snprintf(mt, sizeof mt, "%s", emit_val(L, mp, &ir));
    fmt_printf(&rsb, "    r.f%d = b.f%d == 0 ? b.f%d : b.f%d * exp((double)%s - (double)%s);\n", L->field[i], L->field[i],
               L->field[i], L->field[i], mf, mt);
  }
  L->acc[1] = "a";
  L->rowctx = 0;
  if (L->fail) { fmt_free(&la); fmt_free(&lb); fmt_free(&st); fmt_free(&ro); fmt_free(&rsb); return -1; }
  /* plan */
  /* light: one accumulator field a pass, no shifted var (few registers) */
  int light = nper[1] <= 1 && (ns < 2 || nper[2] <= 1);
  for (int i = 0; i < g->nnodes; i++) if (L->varm[i]) light = 0;
  gk_launch pl = (!has_store && ns == 1) ? gk_row_reduce_plan_k(R, C, vec, L->sms, acc_bound(nper[1]), &env_rows)
                : gk_rows_plan_store(R, C, vec, L->sms, light, &env_rows);
  /* long rows: over clusters of blocks (a light program of one input of <= 4 bytes), or, of an odd
  ** (or 2 mod 4) length, packs of 4 from each row's aligned element */
  int nin1 = 0, small = 1;
  for (int k = 0; k < g->nin && k < 64; k++)
    if (L->used_field[k]) { nin1++; if (rt_dtype_size(g->ins[k]->t) > 4) small = 0; }
  /* knob ks: the shares in shared memory hold the one input's field alone
  ** (K::XS; the row comes back from the loop) */
  int xin = -1;
  for (int k = 0; k < g->nin && k < 64; k++) if (L->used_field[k] && nin1 == 1) xin = k;
  if (!L->nvf && (has_store || ns == 2) && xin >= 0)
    pl = gk_rows_plan_cluster_async(pl, R, C, L->vec_ok, L->sms, L->smem_block, small, light, ns, rt_dtype_size(g->ins[xin]->t),
                                     &env_rows);
  if (!L->nvf && (has_store || ns == 2) && xin >= 0)
    pl = gk_rows_plan_cluster_smem(pl, R, C, L->vec_ok, L->sms, L->smem_block, light && small, small, rt_dtype_size(g->ins[xin]->t), &env_rows);
  if (!L->nvf && (has_store || ns == 2))
    pl = gk_rows_plan_cluster(pl, R, C, L->vec_ok, L->sms, light && nin1 == 1 && small, ns, &env_rows);
  /* few long rows over the grid's blocks (gk_row_grid), where the plans above leave most SMs idle; a
  ** slot holds a block's pass values (K::OpA::A, K::OpB::A: the text asserts the bound) */
  const int64_t slotb = acc_bound(nper[1]) + (ns == 2 ? acc_bound(nper[2]) : 16);
  if (!L->nvf && (has_store || ns == 2) && xin >= 0)
    pl = gk_rows_plan_grid(pl, R, C, L->vec_ok, L->sms, L->smem_block, small, (int)rt_dtype_size(g->ins[xin]->t), slotb,
                           &env_rows);
  /* short rows: a row a thread through shared memory (one input, at most one per-element output) */
  int yo = -1, nyo = 0;
  for (int o = 0; o < g->nout; o++) if (same_rc(g->outs[o], R, C) && !is_red(g->outs[o])) { yo = o; nyo++; }
  if (!L->nvf && xin >= 0 && nyo <= 1)
    pl = gk_rows_plan_tile(pl, R, C, L->vec_ok, (int)rt_dtype_size(g->ins[xin]->t),
                           yo >= 0 ? (int)rt_dtype_size(g->outs[yo]->t) : 0, L->smem_block, &env_rows);
  if (!L->nvf) pl = gk_rows_plan_aligned(pl, R, C, L->vec_ok, L->sms, acc_bound(nper[1]), !has_store && ns == 1, light,
                                              small, &env_rows);
  int threads = pl.block[0];
  const char *pcnt = pl.mode == GK_ROWS_SPLIT ? prm(L, NULL, P_CNT, gk_align16(R * pl.grid[0] * acc_bound(nper[1]))) : "";
  /* assemble */
  head(L, src, "gk_rows.cuh", 0);
  for (int s = 1; s <= ns; s++) stage_structs(L, src, s);
  xf_struct(L, src, L->lift_row);
  fmt_printf(src, "struct K {\n  typedef XF X;\n  typedef O1 OpA;\n  typedef %s OpB;\n", ns == 2 ? "O2" : "gk_op_nop");
  fmt_printf(src, "  enum { PASSES = %d, HAS_STORE = %d };\n  OpA opa;\n  OpB opb;\n", ns, has_store);
  members(L, src);
  xf_load(L, src, pC, L->lift_row);
  if (pl.align) fmt_printf(src, "  }\n  __device__ I phase(I row) const {\n    return row * (I)%s %% 4;\n", pC);
  fmt_printf(src, "  }\n  __device__ %sOpA::A lift_a(const X &x, I col) const {\n", noinl(cla));
  fmt_puts(src, la.data ? la.data : "");
  fmt_printf(src, "    return r;\n  }\n  __device__ %sOpB::A lift_b(const X &x, I col, const OpA::A &a) const {\n", noinl(clb));
  if (ns == 2) { fmt_puts(src, lb.data ? lb.data : ""); fmt_puts(src, "    return r;\n"); }
  else fmt_puts(src, "    return OpB::A();\n");
  fmt_printf(src, "  }\n  template <int N> __device__ %svoid store(I row, I col, const X *x, const OpA::A &a, const OpB::A &b) const {\n",
             noinl(cst));
  if (has_store) {
    for (int o = 0; o < g->nout; o++) if (same_rc(g->outs[o], R, C) && !is_red(g->outs[o]))
      fmt_printf(src, "    %s v%d[N];\n", ctype(g->outs[o]->t), o);
    store_loop(src, &st, pC);
    for (int o = 0; o < g->nout; o++) if (same_rc(g->outs[o], R, C) && !is_red(g->outs[o]))
      fmt_printf(src, "    gk_st<N>(out%d + row * (I)%s + col, v%d);\n", o, pC, o);
  }
  fmt_puts(src, "  }\n  __device__ void row_out(I row, const OpA::A &a, const OpB::A &b) const {\n");
  fmt_puts(src, ro.data ? ro.data : "");
  fmt_puts(src, "  }\n");
  /* a stage that is one f32 sum folds a pack in f32 (gk_row_fold_pack): by
  ** default pass B only (softmax's sum of exps; on pass A it cost layernorm
  ** 0.85x and the 4096x50257 row sum 0.95x, session 9); rp=2 both, rp=1 never */
  for (int s = 1; s <= ns && env_rows.rp != 1; s++) {
    if (s == 1 && env_rows.rp != 2) continue;
    char f[24];
    if (!pack_member(L, s, f, sizeof f) || (s == 1 ? cla : clb)) continue;
    fmt_printf(src, "  enum { PACK_%c = 1 };\n  template <int N> __device__ Op%c::A lift_%c_pack(const X *x, I col%s) const {\n"
                    "    float v_[N];\n#pragma unroll\n    for (int kk = 0; kk < N; ++kk) v_[kk] = (float)lift_%c(x[kk], col + kk%s).%s;\n"
                    "    Op%c::A r;\n    r.%s = (double)gk_pack_sum<N>(v_);\n    return r;\n  }\n",
               "AB"[s - 1], "AB"[s - 1], "ab"[s - 1], s == 2 ? ", const OpA::A &a" : "", "ab"[s - 1], s == 2 ? ", a" : "", f,
               "AB"[s - 1], f);
  }
  if (online && (env_rows.ol != 3 || pl.mode == GK_ROWS_CLUSTER))   /* knob ol=3: the cluster kernels only */
    fmt_printf(src, "  enum { ONLINE_B = 1 };\n  __device__ OpB::A rescale_b(const OpB::A &b, const OpA::A &f, const OpA::A &t) const {\n"
                    "    OpB::A r = b;\n%s    return r;\n  }\n", rsb.data ? rsb.data : "");
  if (pl.smem) {   /* gk_row_cluster_smem: what a share keeps of an element */
    const char *ct = ctype(g->ins[xin]->t);
    fmt_printf(src, "  struct XS { %s f%d; };\n  static __device__ XS to_s(const X &x) { XS s; s.f%d = x.f%d; return s; }\n"
                    "  static __device__ X from_s(const XS &s, I row) { X x; x.f%d = s.f%d;%s (void)row; return x; }\n",
               ct, xin, xin, xin, xin, xin, L->lift_row ? " x.r = row;" : "");
    if (pl.async || pl.mode == GK_ROWS_TILE)   /* gk_row_cluster_async and gk_row_tile copy the input's bytes */
      fmt_printf(src, "  __device__ const XS *src_s(I row, I col) const { return reinterpret_cast<const XS *>(in%d + row * (I)%s + col); }\n",
                 xin, pC);
  }
  if (pl.mode == GK_ROWS_TILE && yo >= 0) {   /* gk_row_tile: the one output's values into shared memory */
    fmt_printf(src, "  typedef %s YS;\n  template <int N> __device__ %svoid store_s(YS *v%d, I row, I col, const X *x, "
                    "const OpA::A &a, const OpB::A &b) const {\n", ctype(g->outs[yo]->t), noinl(cst), yo);
    store_loop(src, &st, pC);
    fmt_printf(src, "  }\n  __device__ YS *dst_s(I row, I col) const { return out%d + row * (I)%s + col; }\n", yo, pC);
  }
  fmt_puts(src, "};\n");
  const char *fn = pl.mode == GK_ROWS_GRID ? "gk_row_grid" : pl.mode == GK_ROWS_TILE ? "gk_row_tile" : pl.mode == GK_ROWS_STREAM ? "gk_row_stream" : pl.mode == GK_ROWS_SPLIT ? "gk_row_split"
                 : pl.mode == GK_ROWS_CLUSTER ? (pl.async ? "gk_row_cluster_async" : pl.smem ? "gk_row_cluster_smem" : "gk_row_cluster") : "gk_row_cached";
  if (pl.full)
    fmt_printf(src, "typedef gk_rows_policy<%d, %d, %d, %d, %d, 0, 1> POL;\n", threads, pl.width, pl.packs, pl.pack,
               pl.batch > 1 ? pl.batch : 1);
  else if (pl.batch > 1 || pl.align)
    fmt_printf(src, "typedef gk_rows_policy<%d, %d, %d, %d, %d, %d> POL;\n", threads, pl.width, pl.packs, pl.pack,
               pl.batch > 1 ? pl.batch : 1, pl.align);
  else fmt_printf(src, "typedef gk_rows_policy<%d, %d, %d, %d> POL;\n", threads, pl.width, pl.packs, pl.pack);
  if (pl.mode == GK_ROWS_CLUSTER)
    fmt_printf(src, "extern \"C\" __global__ void GK_CLUSTER_DIMS(%d) __launch_bounds__(%d) gk_0000000000000000(",
               pl.cluster, threads);
  else if (pl.mode == GK_ROWS_GRID)   /* the plan's blocks an SM, co-resident (registers capped to fit them) */
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d, %d) gk_0000000000000000(", threads, pl.coop);
  else fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", threads);
  params(L, src);
  fmt_puts(src, ") {\n");
  init_k(L, src);
  if (pl.smem)   /* the shares' shared memory was sized for this X */
    fmt_printf(src, "  static_assert(sizeof(K::XS) == %d, \"gk_row_cluster_smem: XS\");\n", (int)rt_dtype_size(g->ins[xin]->t));
  if (pl.mode == GK_ROWS_CLUSTER)   /* below sm_90: streamed, 4 packs of 4 in flight (8 spilled) */
    fmt_printf(src, "#if __CUDA_ARCH__ >= 900\n  %s<POL, %d>((I)%s, (I)%s, k);\n#else\n"
                    "  gk_row_stream<gk_rows_policy<%d, %d, 4, 4, 1, 1> >((I)%s, (I)%s, k);\n#endif\n}\n",
               fn, pl.cluster, pR, pC, threads, threads, pR, pC);
  else if (pl.mode == GK_ROWS_SPLIT)
    fmt_printf(src, "  %s<POL>((I)%s, (I)%s, k, (S1 *)tmp, (gk_u32 *)(tmp + %s));\n}\n", fn, pR, pC, pcnt);
  else if (pl.mode == GK_ROWS_GRID)   /* the fallback where the grid cannot be resident at once: streamed, 4 packs of 4
                                      ** in flight (2 for programs that are not light: layernorm spilled at 4) */
    fmt_printf(src, "  static_assert(sizeof(gk_row_grid_slot<K::OpA::A, K::OpB::A>) <= %d, \"gk_row_grid: slot\");\n"
                    "  %s<POL, gk_rows_policy<%d, %d, %d, 4, 1, 1> >((I)%s, (I)%s, k, (unsigned char *)tmp);\n}\n",
               (int)slotb, fn, threads, threads, light ? 4 : 2, pR, pC);
  else fmt_printf(src, "  %s<POL>((I)%s, (I)%s, k);\n}\n", fn, pR, pC);
  fmt_free(&la); fmt_free(&lb); fmt_free(&st); fmt_free(&ro); fmt_free(&rsb);
  set_launch(L->p, pl.grid[0], pl.grid[1], 1, threads, 1,
             pl.mode == GK_ROWS_CLUSTER || pl.mode == GK_ROWS_TILE || pl.mode == GK_ROWS_GRID ? pl.smem : 0);
  if (pl.mode == GK_ROWS_GRID) {   /* every block resident at once (cu_launch_coop); the barriers' counts zero */
    L->p->kl.coop = 1;
    L->p->temp_bytes = pl.temp_bytes;
    L->p->temp_zero = 1;
  }
  if (pl.mode == GK_ROWS_SPLIT && pl.grid[0] > 1) {
    L->p->temp_bytes = gk_align16(R * pl.grid[0] * acc_bound(nper[1])) + gk_align16(R * 4);
    L->p->temp_zero = 1;
  }
  return 0;
}

/* Per-column reductions (axis 0) of one R x C matrix in one stage, every
** output of C elements (the reductions and maps of them): gk_col_reduce
** (gk_cols.cuh), a strip of columns per block read row by row, rows split
** over blocks when there are few strips, the splits folded in order by the
** last block of a strip. */
static int lower_cols(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  int nper[8];
  memset(L->stage, 0, sizeof(int) * (size_t)g->nnodes);
  if (stages(L, nper) != 1) return -1;
  int64_t R = -1, C = -1;
  for (int i = 0; i < g->nnodes; i++) if (L->stage[i]) {
    const rt_node *x = g->nodes[i];
    if (x->axis != 0 || x->in[0]->ndim != 2) return -1;
    if (R < 0) { R = x->in[0]->shape[0]; C = x->in[0]->shape[1]; }
    else if (!same_rc(x->in[0], R, C)) return -1;
  }
  if (R <= 0 || C <= 0) return -1;
  for (int o = 0; o < g->nout; o++)
    if (g->outs[o]->n != C || same_rc(g->outs[o], R, C)) return -1;
  int vec = !L->vec_ok ? 1 : C % 4 == 0 ? 4 : C % 2 == 0 ? 2 : 1;
  const char *pR = prm(L, NULL, P_R, R), *pC = prm(L, NULL, P_C, C);
  gk_launch pl = gk_col_reduce_plan_k(R, C, vec, L->sms, acc_bound(nper[1]), &env_rows);
  const char *pcnt = prm(L, NULL, P_CNT, pl.grid[1] > 1 ? gk_align16(pl.grid[1] * C * acc_bound(nper[1])) : 0);
  /* heavy element code: the lift out of line (inlined once per column of a
  ** pack, per row in flight, and a tail: 16 + pack <= 20 copies) */
  int cla = 0;
  for (int i = 0; i < g->nnodes; i++)
    if (L->stage[i] == 1) cla |= compact1(L, g->nodes[i]->in[0], 20);
  fmt_buf la, ro; fmt_init(&la); fmt_init(&ro);
  memset(L->used_field, 0, sizeof L->used_field);
  /* lift: the element (row, col), inputs of R x C read at it as fields of x */
  L->rmode = RM_REG; L->rtag = TAG_ROW; L->rowctx = 1; L->R = R; L->C = C; L->base_n = R * C;
  L->lift_row = 0; L->in_lift = 0;
  L->o = &la; scope_reset(L); L->xf = "x."; L->avail = 0; L->row = "row"; L->col = "col"; L->ool = cla;
  L->nvf = 0; L->vpack = pl.pack;
  {
    ixv ix = {"fi", TAG_BASE};
    fmt_printf(&la, "    const I fi = row * (I)%s + col;\n    (void)fi;\n    S1 r;\n", pC);
    for (int i = 0; i < g->nnodes; i++) if (L->stage[i] == 1) {
      const char *v = emit_val(L, g->nodes[i]->in[0], &ix);
      fmt_printf(&la, "    r.f%d = ", L->field[i]);
      red_lift(&la, g->nodes[i], v, "row");
      fmt_puts(&la, ";\n");
    }
  }
  L->vpack = 0;
  /* out: every output at column col */
  L->o = &ro; scope_reset(L); L->xf = NULL; L->rowctx = 0; L->acc[1] = "a"; L->avail = 1; L->ool = 0;
  {
    ixv ic = {"col", TAG_ROW};
    for (int o = 0; o < g->nout; o++) {
      const char *v = emit_val(L, g->outs[o], &ic);
      fmt_printf(&ro, "    out%d[col] = %s;\n", o, v);
    }
  }
  if (L->fail) { fmt_free(&la); fmt_free(&ro); return -1; }
  head(L, src, "gk_cols.cuh", 0);
  stage_structs(L, src, 1);
  xf_struct(L, src, 0);
  fmt_puts(src, "struct K {\n  typedef XF X;\n  typedef O1 Op;\n  Op op;\n");
  members(L, src);
  xf_load(L, src, pC, 0);
  fmt_printf(src, "  }\n  __device__ %sOp::A lift(const X &x, I row, I col) const {\n", noinl(cla));
  fmt_puts(src, la.data ? la.data : "");
  fmt_puts(src, "    (void)x;\n    return r;\n  }\n  __device__ void out(I col, const Op::A &a) const {\n");
  fmt_puts(src, ro.data ? ro.data : "");
  fmt_puts(src, "  }\n};\n");
  fmt_printf(src, "typedef gk_cols_policy<%d, %d, %d> POL;\n", pl.width, pl.pack, pl.packs);
  fmt_puts(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000(");
  params(L, src);
  fmt_puts(src, ") {\n");
  init_k(L, src);
  fmt_printf(src, "  gk_col_reduce<POL>((I)%s, (I)%s, k, (S1 *)tmp, (gk_u32 *)(tmp + %s));\n}\n", pR, pC, pcnt);
  fmt_free(&la); fmt_free(&ro);
  set_launch(L->p, pl.grid[0], pl.grid[1], 1, 256, 1, 0);
  if (pl.grid[1] > 1) {
    L->p->temp_bytes = gk_align16(pl.grid[1] * C * acc_bound(nper[1])) + gk_align16(pl.grid[0] * 4);
    L->p->temp_zero = 1;
  }
  return L->fail ? -1 : 0;
}

/* --------------------------------------------------------------- scan */

static const rt_node *the_heavy(const rt_group *g, int op) {
  for (int i = 0; i < g->nnodes; i++) if (g->nodes[i]->op == op && in_index(g, g->nodes[i]) < 0) return g->nodes[i];
  return NULL;
}

/* gk_scan's policy for a scan of input dtype ti into x->t: knobs st, si
** (threads, items: the tile), sw (8-byte outputs in one round); pol names
** it in the text.  gk_row_scan_lb's tiles take the same. */
static void scan_policy(const rt_node *x, gk_dtype ti, int sms, int *threads, int *items, char *pol, size_t len) {
  const int wide8 = rt_dtype_size(x->t) == 8 || rt_dtype_size(ti) == 8;
  const int dw = SCAN_WIDE && wide8 && !env_red.st && !env_red.si && env_red.sw >= 0;   /* the 8-byte default */
  /* a small 1-D scan (launch.h gk_small_1d; knob ss=-1 off) takes 128 x 32
  ** too: 245 tiles at 10^6, not 123 (H100, session 26: the f32 scan of
  ** 10^6 + 3 at 256 x 32 took 13.2 us, the i32 and f64 ones at 128 x 32,
  ** with more bytes, 10.5 and 11.8) */
  const int small = x->axis < 0 && env_red.ss >= 0 && gk_small_1d(x->n, sms);
  *threads = env_red.st ? env_red.st : dw || small ? 128 : GK_SCAN_THREADS;
  *items = env_red.si ? env_red.si : GK_SCAN_TILE / GK_SCAN_THREADS;
  const int sw = (env_red.sw > 0 || dw) && wide8 &&
                 *threads * *items <= 4096;   /* 8-byte spans of every warp within 48 KB of static shared memory */
  if (*threads == GK_SCAN_THREADS && *items * *threads == GK_SCAN_TILE && !sw) snprintf(pol, len, "gk_scan_policy_default");
  else snprintf(pol, len, "gk_scan_policy<%d, %d, 0, 32, %d>", *threads, *items, sw);
}

static int lower_scan(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  const rt_node *x = the_heavy(g, RT_SCAN);
  if (!x) { lw_fail(L, "scan group shape"); return -1; }
  for (int q = 0; q < g->nout; q++)   /* the scan and its elementwise epilogue, all of its shape */
    if (g->outs[q]->n != x->n || g->outs[q]->ndim != x->ndim) { lw_fail(L, "scan group shape"); return -1; }
  if (x->n == 0) { L->p->nokernel = 1; }
  const char *T = ctype(x->t);
  gk_dtype ti = x->in[0]->t;
  const char *A, *op;
  char opb[64];
  switch (x->rop) {
  case ROP_SUM: A = isf(ti) ? "double" : "gk_u64"; snprintf(opb, sizeof opb, "gk_op_sum<%s>", A); break;
  case ROP_PROD: A = isf(ti) ? "double" : "gk_u64"; snprintf(opb, sizeof opb, "gk_op_prod<%s>", A); break;
  case ROP_MAX: A = ctype(ti); snprintf(opb, sizeof opb, "gk_op_max<%s>", A); break;
  case ROP_MIN: A = ctype(ti); snprintf(opb, sizeof opb, "gk_op_min<%s>", A); break;
  default: lw_fail(L, "scan operator without a lowering"); return -1;
  }
  op = opb;
  int64_t R = x->axis < 0 ? 1 : x->shape[0], C = x->axis < 0 ? x->n : x->shape[1];
  const char *pN = x->axis < 0 ? prm(L, NULL, P_N, x->n) : "";
  const char *pR = x->axis >= 0 ? prm(L, NULL, P_R, R) : "", *pC = x->axis >= 0 ? prm(L, NULL, P_C, C) : "";
  /* few long rows: each row by the look-back over its own tiles (gk_row_scan_lb, knob sl) */
  int sthreads, sitems;
  char spol[64];
  scan_policy(x, ti, L->sms, &sthreads, &sitems, spol, sizeof spol);
  const int lb = x->axis == 1 && gk_row_scan_lb_use(R, C, L->sms, (int64_t)sthreads * sitems, &env_rows);
  /* a row scan reads and writes PACK consecutive elements (every input
  ** 16-byte aligned, C a multiple of the pack); gk_row_scan_lb one at a time */
  int vec = x->axis != 1 || !L->vec_ok || lb ? 1 : C % 4 == 0 ? 4 : C % 2 == 0 ? 2 : 1;
  /* heavy element code: load / store out of line (a tile of 32 items: 64
  ** inlined loads; a row scan's chunk: a pack and its ragged tail) */
  int ncp = x->axis < 0 || lb ? 64 : 32;   /* rows: 2 x <= 16 items; columns: 2 x GK_COL_SCAN_RPT */
  int cld = compact1(L, x->in[0], ncp), cst = 0;
  for (int q = 0; q < g->nout; q++) if (g->outs[q] != x) cst |= compact1(L, g->outs[q], ncp);
  fmt_buf ld; fmt_init(&ld);
  L->o = &ld; scope_reset(L); L->xf = NULL; L->rmode = RM_STORAGE; L->avail = 0; L->ool = cld;
  /* knob sn: an integer sum's widening cast (i32 -> i64) moves to the lift:
  ** the tile goes through shared memory as the narrow type (exact: the same bits) */
  const rt_node *xin = x->in[0];
  if ((env_red.sn ? env_red.sn > 0 : SCAN_NARROW) && x->axis < 0 && x->rop == ROP_SUM && xin->op == RT_CAST && !isf(xin->t) &&
      xin->in[0]->t == GK_I32 && rt_dtype_size(xin->t) == 8 && in_index(g, xin) < 0 && in_index(g, xin->in[0]) >= 0)   /* an i32 input as it is */
    xin = xin->in[0], ti = xin->t;
  if (x->axis < 0) {
    ixv ix = {"i", TAG_BASE};
    const char *v = emit_val(L, xin, &ix);
    fmt_printf(&ld, "    d[0] = %s;\n", v);
  } else if (vec > 1 && in_index(g, x->in[0]) >= 0) {   /* the matrix itself: N consecutive elements at once */
    fmt_printf(&ld, "    gk_ld<N>(d, in%d + row * (I)%s + col);\n", in_index(g, x->in[0]), pC);
  } else {
    L->rowctx = 1; L->R = R; L->C = C; L->row = "row"; L->col = "c_";
    fmt_printf(&ld, "#pragma unroll\n    for (int kk = 0; kk < N; ++kk) {\n    const I c_ = col + kk;\n    const I fi = row * (I)%s + c_;\n", pC);
    ixv ix = {"fi", TAG_BASE};
    const char *v = emit_val(L, x->in[0], &ix);
    fmt_printf(&ld, "    d[kk] = %s;\n    }\n", v);
    L->rowctx = 0;
  }
  char fin[128];
  if (!strcmp(A, "double") || !strcmp(A, "gk_u64")) snprintf(fin, sizeof fin, "(%s)%sv[0]", T, !strcmp(A, "gk_u64") ? "(gk_i64)" : "");
  else snprintf(fin, sizeof fin, "(%s)v[0]", T);
  /* store: the scan value, then every output computed from it at the same
  ** index (the fused epilogue; the planner guarantees no index map between) */
  fmt_buf stb; fmt_init(&stb);
  L->o = &stb; scope_reset(L); L->xf = NULL; L->rmode = RM_STORAGE; L->avail = 0; L->ool = cst;
  const char *si = x->axis < 0 ? "i" : "fi";
  if (x->axis >= 0) {   /* N consecutive elements of a row: values in o<q>[N], one gk_st<N> per output */
    L->rowctx = 1; L->R = R; L->C = C; L->row = "row"; L->col = "c_";
    for (int q = 0; q < g->nout; q++) fmt_printf(&stb, "    %s o%d[N];\n", ctype(g->outs[q]->t), q);
    fmt_printf(&stb, "#pragma unroll\n    for (int kk = 0; kk < N; ++kk) {\n    const I c_ = col + kk;\n    const I fi = row * (I)%s + c_;\n", pC);
    snprintf(fin, sizeof fin, "(%s)%sv[kk]", T, !strcmp(A, "gk_u64") ? "(gk_i64)" : "");
  }
  fmt_printf(&stb, "    const %s sv = %s;\n", T, fin);
  memo_put(L, x, si, "sv");
  for (int q = 0; q < g->nout; q++) {
    ixv ix;
    snprintf(ix.s, sizeof ix.s, "%s", si);
    ix.tag = TAG_BASE;
    const char *v = g->outs[q] == x ? "sv" : emit_val(L, g->outs[q], &ix);
    if (x->axis >= 0) fmt_printf(&stb, "    o%d[kk] = %s;\n", q, v);
    else fmt_printf(&stb, "    out%d[%s] = %s;\n", q, si, v);
  }
  if (x->axis >= 0) {
    fmt_puts(&stb, "    }\n");
    for (int q = 0; q < g->nout; q++) fmt_printf(&stb, "    gk_st<N>(out%d + row * (I)%s + col, o%d);\n", q, pC, q);
  }
  L->rowctx = 0; L->ool = 0;
  head(L, src, "gk_rows.cuh", 0);
  fmt_puts(src, "#include \"gk_scan.cuh\"\n");
  if (x->axis == 0) fmt_puts(src, "#include \"gk_cols.cuh\"\n");
  fmt_printf(src, "struct K {\n  typedef %s X;\n", ctype(ti));
  members(L, src);
  if (x->axis < 0) {   /* gk_scan stores in the output type (Y): 4-byte values through shared memory for f32 */
    fmt_printf(src, "  template <int N> __device__ %svoid load(X *d, I i) const {\n", noinl(cld));
    fmt_puts(src, ld.data ? ld.data : "");
    fmt_printf(src, "  }\n  typedef %s Y;\n  template <int N> __device__ %svoid store(I i, const Y *v) const {\n", T,
               noinl(cst));
  } else {
    fmt_printf(src, "  template <int N> __device__ %svoid load(X *d, I row, I col) const {\n", noinl(cld));
    fmt_puts(src, ld.data ? ld.data : "");
    if (lb)   /* gk_row_scan_lb stores in the output type, as gk_scan */
      fmt_printf(src, "  }\n  typedef %s Y;\n  template <int N> __device__ %svoid store(I row, I col, const Y *v) const {\n",
                 T, noinl(cst));
    else
      fmt_printf(src, "  }\n  template <int N> __device__ %svoid store(I row, I col, const %s *v) const {\n", noinl(cst),
                 A);
  }
  fmt_puts(src, stb.data ? stb.data : "");
  fmt_puts(src, "  }\n};\n");
  fmt_free(&stb);
  fmt_free(&ld);
  int threads;
  if (x->axis < 0) {
    threads = sthreads;
    gk_launch gl = gk_scan_launch_k(x->n, 8, threads, (int64_t)threads * sitems);
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", threads);
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    fmt_printf(src, "  gk_scan<%s, %s>((I)%s, k, %s(), k, (void *)tmp, 1u);\n}\n",
               spol, x->excl ? "true" : "false", pN, op);
    set_launch(L->p, gl.grid[0], 1, 1, threads, 1, 0);
    L->p->temp_bytes = gk_tile_state_bytes(gl.grid[0], 8);
    L->p->temp_zero = 1;
  } else if (lb) {
    threads = sthreads;
    gk_launch gl = gk_row_scan_lb_plan(R, C, threads, (int64_t)threads * sitems);
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", threads);
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    fmt_printf(src, "  gk_row_scan_lb<%s, %s>((I)%s, (I)%s, k, %s(), k, (void *)tmp, 1u);\n}\n",
               spol, x->excl ? "true" : "false", pR, pC, op);
    set_launch(L->p, gl.grid[0], 1, 1, threads, 1, 0);
    L->p->temp_bytes = gl.temp_bytes;
    L->p->temp_zero = 1;
  } else if (x->axis == 1) {
    gk_launch gl = gk_row_scan_plan_k(R, C, vec, L->sms, &env_rows);
    threads = gl.block[0];
    if (gl.batch > 1)   /* staged chunks loaded one ahead */
      fmt_printf(src, "typedef gk_rows_policy<%d, %d, %d, %d, %d> POL;\n", threads, gl.width, gl.packs, gl.pack, gl.batch);
    else fmt_printf(src, "typedef gk_rows_policy<%d, %d, %d, %d> POL;\n", threads, gl.width, gl.packs, gl.pack);
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", threads);
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    fmt_printf(src, "  gk_row_scan<POL, %s>((I)%s, (I)%s, k, %s(), k);\n}\n", x->excl ? "true" : "false",
               pR, pC, op);
    set_launch(L->p, gl.grid[0], 1, 1, threads, 1, 0);
  } else {
    const int lb = gk_col_scan_lb(R, C, &env_rows);
    gk_launch gl = gk_col_scan_plan_lb(R, C, L->sms, 8, lb);
    fmt_printf(src, "typedef gk_col_scan_policy<%d, %d, %d> POL;\n", GK_COL_SCAN_TY, GK_COL_SCAN_RPT, lb);
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(256%s) gk_0000000000000000(",
               lb == 2 && env_rows.cl == 3 ? ", 4" : "");
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    fmt_printf(src, "  gk_col_scan<POL, %s>((I)%s, (I)%s, k, %s(), k, (void *)tmp);\n}\n", x->excl ? "true" : "false",
               pR, pC, op);
    set_launch(L->p, gl.grid[0], 1, 1, 256, 1, 0);
    L->p->temp_bytes = gl.temp_bytes;
    L->p->temp_zero = gl.temp_bytes > 0;
  }
  return L->fail ? -1 : 0;
}

/* ------------------------------------------------- filter / partition */

static int lower_select(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  int part = g->kind == RG_PARTITION;
  const rt_node *x = the_heavy(g, part ? RT_PARTITION : RT_FILTER);
  if (!x || g->nout != 1 || g->outs[0] != x) { lw_fail(L, "select group shape"); return -1; }
  int64_t n = x->in[0]->n;
  if (n == 0 || x->n == 0) L->p->nokernel = 1;
  gk_launch gl = gk_select_launch(n);
  int64_t ts = gk_tile_state_bytes(gl.grid[0], 8);
  int64_t cnt = gk_align16(ts), tick = cnt + 16;
  const char *pN = prm(L, NULL, P_N, n), *pcnt = prm(L, NULL, P_CNT, cnt), *ptick = part ? prm(L, NULL, P_TICK, tick) : "";
  /* heavy element code out of line (a tile of 32 items: a full and a partial body, 64 inlined loads) */
  const rt_node *rs[2] = {x->in[0], x->in[1]};
  int cld = compact(L, rs, 2, 64);
  fmt_buf ld; fmt_init(&ld);
  L->o = &ld; scope_reset(L); L->xf = NULL; L->rmode = RM_STORAGE; L->avail = 0; L->rowctx = 0; L->ool = cld;
  ixv ix = {"i", TAG_BASE};
  const char *m = emit_val(L, x->in[1], &ix);
  const char *v = emit_val(L, x->in[0], &ix);
  fmt_printf(&ld, "    v = %s;\n    return %s != 0;\n", v, m);
  L->ool = 0;
  head(L, src, "gk_select.cuh", 0);
  fmt_printf(src, "struct K {\n  typedef %s X;\n", ctype(x->t));
  members(L, src);
  fmt_printf(src, "  __device__ %sbool operator()(I i, X &v) const {\n", noinl(cld));
  fmt_puts(src, ld.data ? ld.data : "");
  fmt_puts(src, "  }\n  __device__ void operator()(I dst, const X &v, I) const { out0[dst] = v; }\n};\n");
  fmt_free(&ld);
  fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", GK_SELECT_THREADS);
  params(L, src);
  fmt_puts(src, ") {\n");
  init_k(L, src);
  fmt_printf(src, "  gk_select<gk_select_policy_default, %s>((I)%s, k, k, (gk_i64 *)(tmp + %s), (void *)tmp, 1u);\n",
             part ? "true" : "false", pN, pcnt);
  if (part) {
    /* The last W blocks to finish restore the order of the unselected tail
    ** (one block alone took 111 ms for 2^28): each waits for every block's
    ** ticket, then reverses its share.  W < the SM count, and every SM holds
    ** a block, so the blocks not yet finished always find a free slot. */
    int w = L->sms > 2 ? L->sms - 1 : 1;
    fmt_printf(src,
      "  __shared__ int last;\n  __syncthreads();\n"
      "  const unsigned W = gridDim.x < %du ? gridDim.x : %du;\n"
      "  if (threadIdx.x == 0) { __threadfence(); last = (int)atomicAdd((unsigned *)(tmp + %s), 1u) - (int)(gridDim.x - W); }\n"
      "  __syncthreads();\n  if (last < 0) return;\n"
      "  if (threadIdx.x == 0) while (gkl_ld((const unsigned *)(tmp + %s)) < gridDim.x) { }\n"
      "  __syncthreads();\n  __threadfence();\n"
      "  const I lo = (I)gkl_ld((const gk_i64 *)(tmp + %s)), hi = (I)%s, half = (hi - lo) / 2;\n"
      "  for (I q = (I)last * blockDim.x + threadIdx.x; q < half; q += (I)W * blockDim.x) {\n"
      "    %s a = gkl_ld(out0 + lo + q), b = gkl_ld(out0 + hi - 1 - q);\n"
      "    out0[lo + q] = b; out0[hi - 1 - q] = a;\n  }\n",
      w, w, ptick, ptick, pcnt, pN, ctype(x->t));
  }
  fmt_puts(src, "}\n");
  set_launch(L->p, gl.grid[0], 1, 1, GK_SELECT_THREADS, 1, 0);
  L->p->temp_bytes = tick + 16;
  L->p->temp_zero = 1;
  L->p->count_out = !part;   /* the filter's output is a buffer of n: its length is this count */
  L->p->count_at = cnt;
  return L->fail ? -1 : 0;
}

/* ---------------------------------------------------------------- hist */

/* The value of x when it is a constant (through casts and views). */
static int const_value(const rt_node *x, double *d) {
  int f32 = x->t == GK_F32;
  while ((x->op == RT_CAST || x->op == RT_VIEW) && x->nin == 1 && isf(x->t)) {
    if (x->t == GK_F32) f32 = 1;
    x = x->in[0];
  }
  if (x->op != RT_CONST) return 0;
  *d = isf(x->t) ? x->c.f : (double)x->c.i;
  if (f32) *d = (double)(float)*d;
  return 1;
}

static int lower_hist(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  const rt_node *x = the_heavy(g, RT_HIST);
  if (!x || g->nout != 1 || g->outs[0] != x) { lw_fail(L, "hist group shape"); return -1; }
  int64_t n = x->in[0]->n;
  int nb = (int)x->nbins;
  const char *pN = prm(L, NULL, P_N, n), *pnb = prm(L, NULL, P_NB, nb);
  fmt_buf ld, lh; fmt_init(&ld); fmt_init(&lh);
  L->o = &ld; scope_reset(L); L->xf = NULL; L->rmode = RM_STORAGE; L->avail = 0; L->rowctx = 0;
  ixv ix = {"i", TAG_BASE};
  const char *v = emit_val(L, x->in[0], &ix);
  fmt_printf(&ld, "    d[0] = %s;\n", v);
  L->o = &lh; scope_reset(L);
  ixv z = {"(I)0", TAG_OTHER};
  const char *lo = emit_val(L, x->in[1], &z);
  const char *hi = emit_val(L, x->in[2], &z);
  gk_dtype dt = x->in[0]->t;
  int f32 = dt == GK_F32;
  fmt_printf(&lh, "  const double lo = (double)%s, hi = (double)%s;\n  gk_hist_range r;\n", lo, hi);
  if (x->excl && n > 0) {
    /* range from the data (host_hist_auto); i64: numpy's uint64 difference of the extremes */
    const rt_node *a = x->in[1], *b = x->in[2];
    if (dt == GK_I64 && a->op == RT_CAST && b->op == RT_CAST && a->in[0]->t == GK_I64 && b->in[0]->t == GK_I64 &&
        in_index(g, a) < 0 && in_index(g, b) < 0) {
      const char *ra = emit_val(L, a->in[0], &z), *rb = emit_val(L, b->in[0], &z);
      fmt_printf(&lh, "  const double den = (double)((gk_u64)%s - (gk_u64)%s);\n", rb, ra);
    } else fmt_puts(&lh, "  const double den = __dsub_rn(hi, lo);\n");
    fmt_printf(&lh, "  const bool ok = gk_hist_auto(r, lo, hi, den, (int)%s, %s);\n", pnb, f32 ? "true" : "false");
  } else if (x->excl) fmt_printf(&lh, "  const bool ok = gk_hist_explicit(r, 0.0, 1.0, (int)%s, %s);\n", pnb, f32 ? "true" : "false");
  else fmt_printf(&lh, "  const bool ok = gk_hist_explicit(r, lo, hi, (int)%s, %s);\n", pnb, f32 ? "true" : "false");
  /* a bad range: the first one is reported through gkerr (runtime/cuda.c,
  ** which waits for the kernel to check it); none with a valid constant range */
  double clo, chi;
  int valid = !x->excl && const_value(x->in[1], &clo) && const_value(x->in[2], &chi) && isfinite(clo) &&
              isfinite(chi) && clo <= chi;
  if (valid) fmt_puts(&lh, "  if (!ok) return;\n");
  else {
    /* record kind 1: the range is not finite; kind 2 | nbins << 2: the bins
    ** have no finite width (block 0 checks the edges, the counts are discarded) */
    fmt_puts(&lh, "  if (!ok) {\n"
                "    if (blockIdx.x == 0 && threadIdx.x == 0 && atomicCAS(gkerr, 0ull, 1ull) == 0ull) {\n"
                "      gkerr[1] = (unsigned long long)__double_as_longlong(lo); gkerr[2] = (unsigned long long)__double_as_longlong(hi);\n"
                "      __threadfence_system();\n    }\n    return;\n  }\n");
    fmt_printf(&lh, "  if (blockIdx.x == 0) {\n"
                "    bool bad = !gk_hist_width_ok(r);\n"
                "    for (long long kb = threadIdx.x; !bad && kb < (long long)%s; kb += blockDim.x) bad = !gk_hist_edges_ok(r, kb);\n"
                "    if (bad && atomicCAS(gkerr, 0ull, 2ull | ((unsigned long long)%s << 2)) == 0ull) {\n"
                "      gkerr[1] = (unsigned long long)__double_as_longlong(lo); gkerr[2] = (unsigned long long)__double_as_longlong(hi);\n"
                "      __threadfence_system();\n    }\n  }\n", pnb, pnb);
  }
  L->p->errflag = !valid;
  head(L, src, "gk_hist.cuh", 0);
  fmt_printf(src, "struct K {\n  typedef %s X;\n", ctype(dt));
  members(L, src);
  /* the data an input of the group: one 16-byte load a pack (gk_hist's packs
  ** start at multiples of VEC elements); GK_HIST=old: element by element and
  ** the tile loop of gk_hist_bin_fast (gk_hist_policy_v4_old) */
  const char *hv = getenv("GK_HIST");
  int din = in_index(g, x->in[0]);
  if (din >= 0 && L->vec_ok && !(hv && !strcmp(hv, "old")))
    fmt_printf(src, "  template <int N> __device__ void load(X *d, I i) const { gk_ld<N>(d, in%d + i); }\n};\n", din);
  else {
  fmt_puts(src, "  template <int N> __device__ void load(X *d, I i) const {\n#pragma unroll\n  for (int kk = 0; kk < N; ++kk) {\n    const I ii = i + kk;\n");
  {
    /* per element of the pack: re-emit with index ii */
    fmt_buf l2; fmt_init(&l2);
    L->o = &l2; scope_reset(L);
    ixv i2 = {"ii", TAG_BASE};
    const char *v2 = emit_val(L, x->in[0], &i2);
    fmt_printf(&l2, "    d[kk] = %s;\n", v2);
    fmt_puts(src, l2.data);
    fmt_free(&l2);
  }
  fmt_puts(src, "  }\n  }\n};\n");
  }
  /* testing (device sweeps): GK_HIST_SUB copies of the bins (1, 2, 4, 8) and
  ** GK_HIST_ITEMS packs a thread a tile (2, 4, 8) for the shared-bin kernel */
  const char *hsub = getenv("GK_HIST_SUB"), *hitems = getenv("GK_HIST_ITEMS");
  int sub = hsub ? atoi(hsub) : GK_HIST_SUB, items = hitems ? atoi(hitems) : 4;
  if (sub != 1 && sub != 2 && sub != 4 && sub != 8) sub = GK_HIST_SUB;
  if (items != 2 && items != 4 && items != 8) items = 4;
  int64_t hsmem = (int64_t)sub * (nb + 1) * 4;
  int shared = hsmem <= HIST_SMEM_MAX;
  gk_launch gl = gk_hist_launch(n, nb, 1, L->sms);
  gl.smem = hsmem;
  fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", GK_HIST_THREADS);
  params(L, src);
  fmt_puts(src, ") {\n");
  init_k(L, src);
  fmt_puts(src, lh.data ? lh.data : "");
  if (shared && sub == GK_HIST_SUB && items == 4)
    fmt_printf(src, "  gk_hist<gk_hist_policy_v4%s>((I)%s, k, r, out0);\n}\n", hv && !strcmp(hv, "old") ? "_old" : "", pN);
  else if (shared)
    fmt_printf(src, "  gk_hist<gk_hist_policy<%d, %d, 4, %d, %d>>((I)%s, k, r, out0);\n}\n", GK_HIST_THREADS, items, sub,
               !(hv && !strcmp(hv, "old")), pN);
  else
    fmt_printf(src,
      "  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < (I)%s; i += (I)gridDim.x * blockDim.x) {\n"
      "    K::X v[1]; k.load<1>(v, i);\n"
      "    int b = gk_hist_bin(r, gk_hist_val(v[0]));\n"
      "    if (b >= 0) atomicAdd((unsigned long long *)(out0 + b), 1ull);\n  }\n}\n",
      pN);
  fmt_free(&ld); fmt_free(&lh);
  set_launch(L->p, gl.grid[0], 1, 1, GK_HIST_THREADS, 1, shared ? gl.smem : 0);
  L->p->outs_zero = 1;
  return L->fail ? -1 : 0;
}

/* ------------------------------------------------------------ transpose */

static int lower_transpose(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  const rt_node *x = g->outs[0];
  if (g->nout != 1 || x->op != RT_VIEW || in_index(g, x->in[0]) != 0) return lower_staged(L, src);
  const char *T = ctype(x->t);
  head(L, src, "gk_transpose.cuh", 0);
  /* the permutation with adjacent output axes that stay adjacent in the
  ** input merged (unit axes dropped): NCHW -> NHWC is (B, H*W, C) of a
  ** (B, C, H*W) input, a batched 2-d transpose */
  int m = 0;
  int64_t md[GK_MAX_DIMS], ms[GK_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) {
    if (x->shape[d] == 1) continue;
    if (m > 0 && ms[m - 1] == x->vstride[d] * x->shape[d]) { md[m - 1] *= x->shape[d]; ms[m - 1] = x->vstride[d]; }
    else { md[m] = x->shape[d]; ms[m] = x->vstride[d]; m++; }
  }
  int64_t B = 0, Rin = 0, Cin = 0;
  if (x->voff == 0 && x->n == x->in[0]->n) {
    if (m == 2 && ms[0] == 1 && ms[1] == md[0]) { B = 1; Rin = md[1]; Cin = md[0]; }
    if (m == 3 && ms[1] == 1 && ms[2] == md[1] && ms[0] == md[1] * md[2]) { B = md[0]; Rin = md[2]; Cin = md[1]; }
  }
  /* an output row pitch of whole 128-byte lines, or fewer than 256 input
  ** columns (a ragged column block is a third of 129: measured slower):
  ** gk_transpose; else gk_transpose_al, whose stores start on a line, for
  ** f32 with 32 columns a block and segments of 2 steps (8191x8193: 3% faster
  ** than 4 in three paired device runs, NOTES.md session 11; session 9 had
  ** timed 4 against 8 only).  GK_TRANSPOSE=old / al / al64 picks one
  ** whenever both apply (al64: 64 f32 columns a block, segments by the wave
  ** rule); GK_TRANSPOSE_STEPS the segment */
  const char *tv = getenv("GK_TRANSPOSE"), *ts = getenv("GK_TRANSPOSE_STEPS");
  int esz = rt_dtype_size(x->t), tc32 = esz == 4 && !(tv && !strcmp(tv, "al64"));
  int al = (esz == 4 || esz == 8) &&
           (tv && !strncmp(tv, "al", 2) ? 1 : tv && !strcmp(tv, "old") ? 0 : Rin * esz % 128 != 0 && Cin >= 256);
  int64_t seg = gk_transpose_al_seg(Rin, Cin, B, esz, L->sms, ts ? atoi(ts) : tc32 ? 2 : 0, tc32);
  /* a small side S = min(R, C) <= GK_TN_MAX_S: gk_transpose_narrow, runs of
  ** the long side staged whole (the tiles of 3 x 1000003 are 3/64 full).
  ** GK_TRANSPOSE_NARROW=0 the paths above (before session 25), =S its most
  ** S (to K / 32); GK_TRANSPOSE_NARROW_BYTES its staging (4096 / 8192 / 16384) */
  const char *tn = getenv("GK_TRANSPOSE_NARROW"), *tnb = getenv("GK_TRANSPOSE_NARROW_BYTES");
  int tk = gk_transpose_narrow_k(esz, tnb && atoi(tnb) > 0 ? atoi(tnb) : GK_TN_BYTES);
  int64_t tmax = gk_min64(tn && *tn ? atoi(tn) : GK_TN_MAX_S, tk / 32), S = gk_min64(Rin, Cin);
  int64_t run = gk_transpose_narrow_run(S, tk);
  if (B > 0 && B <= 65535 && S >= 1 && S <= tmax && gk_cdiv64(gk_max64(Rin, Cin), run) <= 0x7fffffff) {
    const char *pR = prm(L, NULL, P_R, Rin), *pC = prm(L, NULL, P_C, Cin), *pL = prm(L, NULL, P_LEN, run);
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", GK_TN_THREADS);
    params(L, src);
    fmt_printf(src, ") {\n  gk_transpose_narrow<%s, %d, %s>(in0, out0, (I)%s, (I)%s, (I)%s);\n}\n", T, tk,
               Cin <= Rin ? "true" : "false", pR, pC, pL);
    gk_launch gl = gk_transpose_narrow_launch(Rin, Cin, B, run);
    set_launch(L->p, gl.grid[0], gl.grid[1], gl.grid[2], gl.block[0], 1, 0);
  } else if (B > 0 && B <= 65535 && al && gk_cdiv64(Rin, seg) <= 65535) {
    const char *pR = prm(L, NULL, P_R, Rin), *pC = prm(L, NULL, P_C, Cin), *pS = prm(L, NULL, P_LEN, seg);
    /* 6 blocks of 33 KB shared a SM, 40 registers (80 unbounded); tc32: 8 of 17 KB */
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(256, %d) gk_0000000000000000(", tc32 ? 8 : 6);
    params(L, src);
    const char *te = getenv("GK_TRANSPOSE_EARLY");   /* 0: the next step's loads after the barrier (to measure) */
    fmt_printf(src, ") {\n  gk_transpose_al<%s, %d, %s>(in0, out0, (I)%s, (I)%s, (I)%s);\n}\n", T, esz == 8 || tc32 ? 32 : 64,
               te && !strcmp(te, "0") ? "false" : "true", pR, pC, pS);
    gk_launch gl = gk_transpose_al_launch(Rin, Cin, B, esz, seg, tc32);
    set_launch(L->p, gl.grid[0], gl.grid[1], gl.grid[2], 32, 8, 0);
  } else if (B > 0 && B <= 65535 && gk_cdiv64(Rin, 64) <= 65535) {
    const char *pR = prm(L, NULL, P_R, Rin), *pC = prm(L, NULL, P_C, Cin);
    fmt_puts(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000(");
    params(L, src);
    fmt_printf(src, ") {\n  gk_transpose<%s>(in0, out0, (I)%s, (I)%s);\n}\n", T, pR, pC);
    gk_launch gl = gk_transpose_launch(Rin, Cin, B);
    set_launch(L->p, gl.grid[0], gl.grid[1], gl.grid[2], 32, 8, 0);
  } else {
    const char *pd[GK_MAX_DIMS], *ps[GK_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) { pd[d] = prm(L, x, P_SHAPE + d, x->shape[d]); ps[d] = prm(L, x, P_STRIDE + d, x->vstride[d]); }
    const char *pN = prm(L, x, P_N, x->n);
    fmt_puts(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000(");
    params(L, src);
    fmt_printf(src, ") {\n  gk_permute_args a;\n  a.nd = %d;\n", x->ndim);
    for (int d = 0; d < x->ndim; d++)
      fmt_printf(src, "  a.odims[%d] = %s; a.istride[%d] = %s;\n", d, pd[d], d, ps[d]);
    fmt_printf(src, "  gk_permute<%s>(in0, out0, (I)%s, a);\n}\n", T, pN);
    gk_launch gl = gk_permute_launch(x->n, L->sms);
    set_launch(L->p, gl.grid[0], 1, 1, 256, 1, 0);
  }
  if (x->n == 0) L->p->nokernel = 1;
  return 0;
}

/* --------------------------------------------------------------- matmul */

static int lower_matmul(lw *L, fmt_buf *src, int tf32) {
  rt_group *g = L->g;
  const rt_node *x = the_heavy(g, RT_MATMUL);
  if (!x || g->nout != 1 || g->outs[0] != x) { lw_fail(L, "matmul group shape"); return -1; }
  const rt_node *a = x->in[0], *b = x->in[1];
  int64_t M = a->ndim == 2 ? a->shape[0] : 1, K = a->ndim == 2 ? a->shape[1] : a->shape[0];
  int64_t N = b->ndim == 2 ? b->shape[1] : 1;
  L->p->gm.m = M; L->p->gm.n = N; L->p->gm.k = K;
  L->rmode = RM_STORAGE; L->avail = 0; L->xf = NULL; L->rowctx = 0;
  fmt_buf body; fmt_init(&body);
  L->o = &body;
  if (isf(x->t)) {
    int ia = in_index(g, a), ib = in_index(g, b);
    L->p->gemm = 1; L->p->gm.tf32 = (uint8_t)(tf32 != 0);
    L->p->gm.a = (int8_t)ia; L->p->gm.b = (int8_t)ib;
    int64_t off = 0;
    if (ia < 0) { L->p->gm.aoff = off; off += gk_align16(a->n * (int64_t)rt_dtype_size(a->t)) + 256; }
    if (ib < 0) { L->p->gm.boff = off; off += gk_align16(b->n * (int64_t)rt_dtype_size(b->t)); }
    L->p->temp_bytes = off;
    if (ia >= 0 && ib >= 0) { L->p->nokernel = 1; fmt_free(&body); fmt_puts(src, "/* cuBLAS gemm only */\n"); return 0; }
    /* prologue: materialize the computed operands into temp */
    const rt_node *ops[2] = {a, b};
    int64_t offs[2] = {L->p->gm.aoff, L->p->gm.boff};
    int idx[2] = {ia, ib};
    int64_t mx = 0;
    for (int q = 0; q < 2; q++) if (idx[q] < 0) {
      if (ops[q]->n > mx) mx = ops[q]->n;
      fmt_printf(&body, "  for (I i = (I)blockIdx.x * %d + threadIdx.x; i < (I)%s; i += (I)gridDim.x * %d) {\n",
                 MAP_THREADS, prm(L, ops[q], P_N, ops[q]->n), MAP_THREADS);
      scope_reset(L);
      ixv ix = {"i", TAG_BASE};
      const char *v = emit_val(L, ops[q], &ix);
      fmt_printf(&body, "    ((%s *)(tmp + %s))[i] = %s;\n  }\n", ctype(ops[q]->t), prm(L, ops[q], P_OFF, offs[q]), v);
    }
    head(L, src, "gk_common.cuh", 0);
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", MAP_THREADS);
    params(L, src);
    fmt_puts(src, ") {\n");
    fmt_puts(src, body.data ? body.data : "");
    fmt_puts(src, "}\n");
    set_launch(L->p, gk_max64(1, gk_min64(gk_cdiv64(mx, MAP_THREADS), (int64_t)L->sms * 16)), 1, 1, MAP_THREADS, 1, 0);
    fmt_free(&body);
    return L->fail ? -1 : 0;
  }
  /* integers: one thread per output element, wrapping sums */
  const char *pMN = prm(L, NULL, P_N, M * N), *pN = prm(L, NULL, P_C, N), *pK = prm(L, NULL, P_LEN, K);
  fmt_printf(&body, "  for (I o = (I)blockIdx.x * %d + threadIdx.x; o < (I)%s; o += (I)gridDim.x * %d) {\n",
             MAP_THREADS, pMN, MAP_THREADS);
  fmt_printf(&body, "    const I m = o / (I)%s, n = o %% (I)%s;\n    gk_u64 acc = 0;\n", pN, pN);
  fmt_printf(&body, "    for (I q = 0; q < (I)%s; ++q) {\n", pK);
  scope_reset(L);
  ixv ia, ib;
  snprintf(ia.s, sizeof ia.s, "(m * (I)%s + q)", pK); ia.tag = TAG_OTHER;
  snprintf(ib.s, sizeof ib.s, "(q * (I)%s + n)", pN); ib.tag = TAG_OTHER;
  const char *va = emit_val(L, a, &ia);
  const char *vb = emit_val(L, b, &ib);
  fmt_printf(&body, "      acc += (gk_u64)(gk_i64)%s * (gk_u64)(gk_i64)%s;\n    }\n", va, vb);
  fmt_printf(&body, "    out0[o] = (%s)(gk_i64)acc;\n  }\n", ctype(x->t));
  head(L, src, "gk_common.cuh", 0);
  fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%d) gk_0000000000000000(", MAP_THREADS);
  params(L, src);
  fmt_puts(src, ") {\n");
  fmt_puts(src, body.data ? body.data : "");
  fmt_puts(src, "}\n");
  fmt_free(&body);
  set_launch(L->p, gk_max64(1, gk_min64(gk_cdiv64(M * N, MAP_THREADS), (int64_t)L->sms * 16)), 1, 1, MAP_THREADS, 1, 0);
  if (M * N == 0) L->p->nokernel = 1;
  return L->fail ? -1 : 0;
}

/* ---------------------------------------------------------------- entry */

/* ------------------------------------------------------------ sort family
** SORT / ARGSORT / TOPK / ARGTOPK: kernels/gk_sort.cuh.  Segments of at most
** GK_SORT_TILE elements: one block per segment (one launch); so is a top-k
** of at most GK_SORT_TILE of longer ones (radix select).  Longer ones:
** global LSD passes, 8 bits each, over the key bytes and then over the
** bytes of the segment number (none for a whole array), three launches a
** pass (histogram, scan, scatter), kernels _u<p>, _s, _c<p> of one source.
** RUNS and SEARCH are one elementwise kernel each. */

/* The segments of sort node x: length, count, per-segment outputs, columns. */
static void sort_shape(const rt_node *x, int64_t *len, int64_t *nseg, int64_t *m, int *cols) {
  const rt_node *in = x->in[0];
  *cols = x->axis == 0;
  *len = x->axis < 0 ? in->n : x->axis == 1 ? in->shape[1] : in->shape[0];
  *nseg = x->axis < 0 ? 1 : x->axis == 1 ? in->shape[0] : in->shape[1];
  *m = x->op == RT_TOPK || x->op == RT_ARGTOPK ? x->nbins : *len;
}

/* A top-k of long segments by radix select (gk_topk_select): k fits one block. */
static int sort_select(const rt_node *x) {
  int64_t len, nseg, m; int cols;
  sort_shape(x, &len, &nseg, &m, &cols);
  return (x->op == RT_TOPK || x->op == RT_ARGTOPK) && len > GK_SORT_TILE && m <= GK_SORT_TILE && len < INT32_MAX;
}

/* Segments of 2049 .. 8192 in one block each (gk_sort_big, dynamic shared
** memory); GK_SORT_BIG=0: the global passes (kept to time the two). */
static int sort_big_on(void) { const char *e = getenv("GK_SORT_BIG"); return !(e && !strcmp(e, "0")); }

/* Key passes and segment passes of the global path (0, 0: one block per segment). */
static void sort_passes(const rt_node *x, int *kp, int *sp) {
  int64_t len, nseg, m; int cols;
  sort_shape(x, &len, &nseg, &m, &cols);
  *kp = *sp = 0;
  if (len <= GK_SORT_TILE || sort_select(x) || (sort_big_on() && len <= GK_SORT_BIG)) return;
  gk_dtype t = x->in[0]->t;
  *kp = t == GK_BOOL ? 1 : (int)rt_dtype_size(t);
  for (uint64_t v = (uint64_t)(nseg - 1); v; v >>= 8) (*sp)++;
}

/* The global passes run as onesweep (gk_sort_sweep: zero, histogram, one
** kernel a pass) unless GK_SORT_ONESWEEP=0 picks the older three launches a
** pass (kept to time the two side by side). */
static int sort_onesweep(void) { const char *e = getenv("GK_SORT_ONESWEEP"); return !(e && !strcmp(e, "0")); }

/* Items a thread of a onesweep pass (GK_SORT_OITEMS: 8 .. 24, for timing
** the choice; 16 at most when the stage holds 8-byte words: 48 KB of static
** shared memory), and the blocks an SM the registers are budgeted for
** (GK_SORT_OMINB: 1 .. 4). */
static int sort_env_int(const char *name, int lo, int hi, int dflt) {
  const char *e = getenv(name);
  int v = e && *e ? atoi(e) : dflt;
  return v < lo ? lo : v > hi ? hi : v;
}
static int sort_items(int wide, int pack) {
  int it = sort_env_int("GK_SORT_OITEMS", 8, 24, pack ? 12 : 16);
  return wide && it > 16 ? 16 : it;
}
static int sort_minb(int idx, int pack) { return sort_env_int("GK_SORT_OMINB", 1, 4, pack ? 3 : idx ? 2 : 3); }
/* gk_sort_big carries the values' bits alone for sort and topk (its KO;
** GK_SORT_BIGV=0: (key, index) pairs and a gather, as in session 7). */
static int sort_bigv(void) { return sort_env_int("GK_SORT_BIGV", 0, 1, 1); }
/* (key, index) pairs of 4-byte keys and a 4-byte index travel as one 8-byte
** word, key << 32 | index (gk_sort_sweep's PACK; 12 items a thread and 3
** blocks an SM: session 9 checked them on the GPU with sortcheck, 102/102,
** and timed argsort 2^26 f32 at 2706 us against 2893-2901 for 8 and 4);
** GK_SORT_PACK=0 keeps them apart (two loads and stores an element a pass;
** kept to time the two). */
static int sort_pack(int kp, int idx, int i64) { return idx && kp < 8 && !i64 && sort_env_int("GK_SORT_PACK", 0, 1, 1); }
/* A pass's block loads its tile before it scans the digit totals,
** publishes its counts before their scan and stages its tile before the
** look-back (gk_sort_sweep's EARLY; GK_SORT_EARLY=0: as in session 7, to
** time the two); the histogram keeps GK_SORT_HU loads of a thread in flight
** (1 .. 8, default 1: 4 was no faster). */
static int sort_early(void) { return sort_env_int("GK_SORT_EARLY", 0, 1, 1); }
/* A look-back loads GK_SORT_LB earlier tiles' states at a time (1 .. 8, 4). */
static int sort_lb(void) { return sort_env_int("GK_SORT_LB", 1, 8, 4); }
static int sort_hu(void) { return sort_env_int("GK_SORT_HU", 1, 8, 1); }
/* GK_SORT_HAGG=a: the histogram counts the top a key bytes a warp's match at
** a time (gk_sort_hist's AGGP; 0 .. 8, 0 until timed). */
static int sort_hagg(int kp) { int a = sort_env_int("GK_SORT_HAGG", 0, 8, 0); return a > kp ? kp : a; }

static int sort_launches(const rt_node *x) {
  int kp, sp;
  if (x->op == RT_RUNS || x->op == RT_SEARCH) return 1;
  sort_passes(x, &kp, &sp);
  return !kp ? 1 : sort_onesweep() ? 2 + kp + sp : 3 * (kp + sp);
}

static void sort_step(rt_prep *p, const char *suffix, int64_t grid) {
  cu_step *s = &p->step[p->nstep++];
  memset(s, 0, sizeof *s);
  s->op = CU_STEP_KERNEL;
  snprintf(s->kname, sizeof s->kname, "%s", suffix);
  s->grid[0] = (uint32_t)grid; s->grid[1] = s->grid[2] = 1;
  s->block[0] = GK_SORT_THREADS; s->block[1] = s->block[2] = 1;
}

/* The onesweep launch list of the global path (after lower_sort's functor K):
** _z, _h, then _o<p> for the np passes.  idx: carry the flat index (argsort,
** segments, GK_SORT_KEYS_ONLY=0); else the values' bits alone.  items: a
** thread's elements (sort_items). */
static int sort_sweep_steps(lw *L, fmt_buf *src, const rt_node *x, int kp, int np, int idx, int items, int64_t n, int64_t nb) {
  int64_t len, nseg, m; int cols;
  sort_shape(x, &len, &nseg, &m, &cols);
  int desc = x->op == RT_TOPK || x->op == RT_ARGTOPK;
  const char *pN = prm(L, x, P_N, n), *pL = prm(L, x, P_LEN, len), *pS = prm(L, x, P_R, nseg),
             *pM = prm(L, x, P_C, m), *pB = prm(L, x, P_NB, nb);
  const char *KT = kp == 8 ? "gk_u64" : "gk_u32", *ST = n < ((int64_t)1 << 30) ? "gk_u32" : "gk_u64";
  const char *D = desc ? "true" : "false", *Cl = cols ? "true" : "false", *Ix = idx ? "true" : "false";
  int pack = sort_pack(kp, idx, L->i64);
  rt_prep *P = L->p;
  fmt_puts(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000_z(");
  params(L, src);
  fmt_printf(src, ") {\n  gk_sort_zero<%s, I, %s>((I)%s, (I)%s, %d, tmp);\n}\n", KT, ST, pN, pB, np);
  fmt_puts(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000_h(");
  params(L, src);
  fmt_puts(src, ") {\n");
  init_k(L, src);
  fmt_printf(src, "  gk_sort_hist<K, I, %s, %s, %s, %d, %d, %d, %d>(k, (I)%s, (I)%s, (I)%s, (I)%s, tmp);\n}\n", ST, D, Cl, kp,
             np, sort_hu(), sort_hagg(kp), pN, pL, pS, pB);
  for (int p = 0; p < np; p++) {
    /* registers for 3 (keys only) or 2 (pairs) blocks an SM: no spills at 16 items */
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(256, %d) gk_0000000000000000_o%d(", sort_minb(idx, pack), p);
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    fmt_printf(src, "  gk_sort_sweep<K, I, %s, %s, %s, %s, %d, %d, %d, %d, %s, %s, %d>(k, (I)%s, (I)%s, (I)%s, (I)%s, (I)%s, tmp);\n}\n",
               ST, D, Cl, Ix, p, kp, np, items, pack ? "true" : "false", sort_early() ? "true" : "false", sort_lb(), pN, pL, pS,
               pM, pB);
  }
  int64_t ssz = n < ((int64_t)1 << 30) ? 4 : 8, isz = L->i64 ? 8 : 4, ksz = kp == 8 || pack ? 8 : 4;
  int64_t zb = np * nb * 256 * ssz + np * 256 * isz + 64;
  sort_step(P, "_z", gk_max64(1, gk_min64(gk_cdiv64(zb / 16, GK_SORT_THREADS), 4096)));
  sort_step(P, "_h", gk_max64(1, gk_min64(gk_cdiv64(n, GK_SORT_THREADS), (int64_t)L->sms * 8)));
  for (int p = 0; p < np; p++) {
    char sfx[16];
    snprintf(sfx, sizeof sfx, "_o%d", p);
    sort_step(P, sfx, nb);
  }
  P->temp_bytes = zb + 2 * gk_align16(n * ksz) + (idx && !pack ? 2 * gk_align16(n * isz) : 0);
  return L->fail ? -1 : 0;
}

static int lower_sort(lw *L, fmt_buf *src) {
  rt_group *g = L->g;
  const rt_node *x = NULL;
  for (int i = 0; i < g->nnodes && !x; i++)
    if (g->nodes[i]->op >= RT_SORT && g->nodes[i]->op <= RT_SEARCH && in_index(g, g->nodes[i]) < 0) x = g->nodes[i];
  if (!x || g->nout != 1 || g->outs[0] != x) { lw_fail(L, "sort group shape"); return -1; }
  const rt_node *in = x->in[0];
  const char *X = ctype(in->t);
  fmt_buf ld; fmt_init(&ld);
  L->o = &ld; scope_reset(L); L->xf = NULL; L->rmode = RM_STORAGE; L->avail = 0; L->rowctx = 0;
  ixv ix = {"i", TAG_BASE};
  fmt_printf(&ld, "    return %s;\n", emit_val(L, in, &ix));
  if (x->op == RT_RUNS || x->op == RT_SEARCH) {
    fmt_buf lv; fmt_init(&lv);
    const rt_node *v = x->op == RT_SEARCH ? x->in[1] : NULL;
    if (v) { L->o = &lv; scope_reset(L); fmt_printf(&lv, "    return %s;\n", emit_val(L, v, &ix)); }
    int64_t n = x->n;
    if (n == 0) L->p->nokernel = 1;
    const char *pN = prm(L, x, P_N, n), *pA = prm(L, x, P_LEN, in->n);
    head(L, src, "gk_sort.cuh", 0);
    fmt_printf(src, "struct K {\n  typedef %s X;\n", X);
    members(L, src);
    fmt_printf(src, "  __device__ X load(I i) const {\n%s  }\n", ld.data ? ld.data : "");
    if (v) fmt_printf(src, "  __device__ X value(I i) const {\n%s  }\n", lv.data ? lv.data : "");
    fmt_puts(src, "};\n");
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000(");
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    fmt_printf(src, "  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < (I)%s; i += (I)gridDim.x * blockDim.x) {\n", pN);
    if (v)   /* numpy side='left': the first position whose key is not below v's */
      fmt_printf(src, "    const auto kv = gk_sort_key(k.value(i));\n    I lo = 0, hi = (I)%s;\n"
                 "    while (lo < hi) { const I mid = lo + (hi - lo) / 2; if (gk_sort_key(k.load(mid)) < kv) lo = mid + 1; else hi = mid; }\n"
                 "    out0[i] = (gk_i64)lo;\n  }\n}\n", pA);
    else fmt_puts(src, "    out0[i] = (gk_u8)(i == 0 || gk_sort_key(k.load(i)) != gk_sort_key(k.load(i - 1)));\n  }\n}\n");
    set_launch(L->p, gk_max64(1, gk_min64(gk_cdiv64(n, 256), 65535)), 1, 1, 256, 1, 0);
    fmt_free(&ld); fmt_free(&lv);
    return L->fail ? -1 : 0;
  }
  int64_t len, nseg, m; int cols, kp, sp;
  sort_shape(x, &len, &nseg, &m, &cols);
  sort_passes(x, &kp, &sp);
  int desc = x->op == RT_TOPK || x->op == RT_ARGTOPK, arg = x->op == RT_ARGSORT || x->op == RT_ARGTOPK;
  int sweep = kp && sort_onesweep(), idx = arg || sp > 0 || !sort_env_int("GK_SORT_KEYS_ONLY", 0, 1, 1);
  int items = sweep ? sort_items(kp == 8 || (idx && L->i64) || sort_pack(kp, idx, L->i64), sort_pack(kp, idx, L->i64)) : 0;
  int64_t n = in->n, nb = gk_cdiv64(n, sweep ? GK_SORT_THREADS * items : GK_SORT_TILE);
  const char *pN = prm(L, x, P_N, n), *pL = prm(L, x, P_LEN, len), *pS = prm(L, x, P_R, nseg),
             *pM = prm(L, x, P_C, m), *pB = prm(L, x, P_NB, nb);
  head(L, src, "gk_sort.cuh", 0);
  fmt_printf(src, "struct K {\n  typedef %s X;\n", X);
  members(L, src);
  fmt_printf(src, "  __device__ X load(I i) const {\n%s  }\n", ld.data ? ld.data : "");
  if (arg) fmt_puts(src, "  __device__ void put(I o, I src, I j) const { out0[o] = (gk_i64)j; }\n};\n");
  else fmt_puts(src, "  __device__ void put(I o, I src, I j) const { out0[o] = load(src); }\n"
                     "  __device__ void putv(I o, X v) const { out0[o] = v; }\n};\n");
  fmt_free(&ld);
  const char *D = desc ? "true" : "false", *Cl = cols ? "true" : "false";
  rt_prep *P = L->p;
  P->nokernel = 1;    /* the steps are this group's own (sort_step) */
  P->multi = 1;
  if (n == 0 || m == 0) { fmt_puts(src, "/* nothing to sort */\n"); return L->fail ? -1 : 0; }
  if (!kp) {
    int big = !sort_select(x) && len > GK_SORT_TILE, bt = big && len > 4096 ? 512 : 256, ko = !arg && sort_bigv();
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(%s) gk_0000000000000000_b(", bt == 512 ? "512, 2" : "256");
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    if (sort_select(x))
      fmt_printf(src, "  gk_topk_select<K, I, %s, %d>(k, (I)%s, (I)%s, (I)%s);\n}\n", Cl, m <= GK_SORT_THREADS ? 1 : 8, pL, pS, pM);
    else if (big) fmt_printf(src, "  gk_sort_big<K, I, %s, %s, %d, 16, %s>(k, (I)%s, (I)%s, (I)%s);\n}\n", D, Cl, bt,
                             ko ? "true" : "false", pL, pS, pM);
    else fmt_printf(src, "  gk_sort_block<K, I, %s, %s>(k, (I)%s, (I)%s, (I)%s);\n}\n", D, Cl, pL, pS, pM);
    sort_step(P, "_b", gk_min64(nseg, 1 << 20));
    if (big) {   /* N keys, N indices (not ko), 256 x warps counts, warps scan words: all of it dynamic */
      cu_step *st = &P->step[P->nstep - 1];
      st->block[0] = (uint32_t)bt;
      st->smem = (uint32_t)(bt * 16 * (rt_dtype_size(in->t) == 8 ? 8 : 4) + (ko ? 0 : bt * 16 * 4) + 257 * (bt / 32) * 4);
    }
    return L->fail ? -1 : 0;
  }
  const char *KT = kp == 8 ? "gk_u64" : "gk_u32";
  int np = kp + sp;
  if (sweep) return sort_sweep_steps(L, src, x, kp, np, idx, items, n, nb);
  int64_t grid = gk_min64(nb, 1 << 20);
  for (int p = 0; p < np; p++) {
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000_u%d(", p);
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    fmt_printf(src, "  gk_sort_up<K, I, %s, %s, %d, %d>(k, (I)%s, (I)%s, (I)%s, (I)%s, tmp);\n}\n", D, Cl, p, kp, pN, pL, pS, pB);
    fmt_printf(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000_c%d(", p);
    params(L, src);
    fmt_puts(src, ") {\n");
    init_k(L, src);
    fmt_printf(src, "  gk_sort_scatter<K, I, %s, %s, %d, %d, %s>(k, (I)%s, (I)%s, (I)%s, (I)%s, (I)%s, tmp);\n}\n", D, Cl, p,
               kp, p == np - 1 ? "true" : "false", pN, pL, pS, pM, pB);
  }
  fmt_puts(src, "extern \"C\" __global__ void __launch_bounds__(256) gk_0000000000000000_s(");
  params(L, src);
  fmt_printf(src, ") {\n  gk_sort_scan<%s, I>((I)%s, (I)%s, tmp);\n}\n", KT, pN, pB);
  for (int p = 0; p < np; p++) {
    char sfx[16];
    snprintf(sfx, sizeof sfx, "_u%d", p); sort_step(P, sfx, grid);
    sort_step(P, "_s", 256);
    snprintf(sfx, sizeof sfx, "_c%d", p); sort_step(P, sfx, grid);
  }
  int64_t isz = L->i64 ? 8 : 4;
  P->temp_bytes = gk_align16(2 * n * (kp == 8 ? 8 : 4)) + (2 * n + 256 * nb + 256) * isz;
  return L->fail ? -1 : 0;
}

static uint64_t fnv64(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
  return h;
}

static void reset_launch(rt_prep *p) {
  memset(&p->kl, 0, sizeof p->kl); memset(&p->gm, 0, sizeof p->gm);
  p->kl.op = CU_STEP_KERNEL; p->gm.op = CU_STEP_GEMM; p->gm.a = p->gm.b = -1;
  p->temp_bytes = 0; p->temp_zero = 0; p->outs_zero = 0; p->nokernel = 0; p->gemm = 0; p->errflag = 0; p->doneflag = 0;
  p->count_out = 0; p->count_at = 0;
}

/* Forgets what a fast path decided per node, before the general lowering. */
static void clear_marks(lw *L) {
  size_t n = (size_t)L->g->nnodes;
  memset(L->onl, 0, sizeof(*L->onl) * n);
  L->has_onl = 0;
  memset(L->maxof, 0, sizeof(int) * n);
  memset(L->shared, 0, n);
  memset(L->varm, 0, n);
  fmt_reset(&L->wrap);
  L->nwr = L->ool = L->hoist_pv = 0;
}

int cuda_lower(rt_group *g, rt_mem *mem, int sms, int64_t smem_block, int tf32, rt_err *e) {
  lw L;
  memset(&L, 0, sizeof L);
  rt_prep *P = calloc(1, sizeof *P);
  if (!P) return rt_seterr(e, GK_ENOMEM, "out of memory lowering a kernel");
  L.p = P;
  L.g = g; L.sms = sms > 0 ? sms : 132;
  L.smem_block = smem_block < 0 ? GK_ROWS_SMEM_BLOCK : smem_block;   /* -1: an H200's */
  int64_t mx = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const rt_node *x = g->nodes[i];
    if (x->n > mx) mx = x->n;
    for (int q = 0; q < x->nin; q++) if (x->in[q]->n > mx) mx = x->in[q]->n;
  }
  for (int i = 0; i < g->nin; i++) if (g->ins[i]->n > mx) mx = g->ins[i]->n;
  L.i64 = gk_need_i64(mx * 2 + 65536);
  /* vector (8/16-byte) loads only when every input's storage is 16-byte
  ** aligned: borrowed device buffers and DLPack imports may start anywhere */
  L.vec_ok = 1;
  for (int i = 0; i < g->nin; i++) {
    const rt_value *v = g->ins[i]->val;
    if (v && v->where == RT_ON_DEVICE && (v->dev & 15)) L.vec_ok = 0;
  }
  pthread_once(&env_once, env_init);
  if (env_novec) L.vec_ok = 0;
  P->aligned16 = (uint8_t)L.vec_ok;
  L.stage = calloc((size_t)g->nnodes + 1, sizeof(int));
  L.field = calloc((size_t)g->nnodes + 1, sizeof(int));
  L.onl = calloc((size_t)g->nnodes + 1, sizeof(*L.onl));
  L.varm = calloc((size_t)g->nnodes + 1, 1);
  L.maxof = calloc((size_t)g->nnodes + 1, sizeof(int));
  L.shared = calloc((size_t)g->nnodes + 1, 1);
  if (!L.stage || !L.field || !L.onl || !L.varm || !L.maxof || !L.shared) {
    free(L.stage); free(L.field); free(L.onl); free(L.varm); free(L.maxof); free(L.shared); free(P);
    return rt_seterr(e, GK_ENOMEM, "out of memory lowering a kernel");
  }
  /* per-launch scalars: (seed, offset) of every random source, in node order */
  P->nscal = 0;
  L.lit = env_lit;
  for (int i = 0; i < g->nnodes; i++) {
    const rt_node *x = g->nodes[i];
    if ((x->op != RT_RAND && x->op != RT_RANDN) || in_index(g, x) >= 0 || L.nrn == RT_MAX_RAND / 2) continue;
    L.rn[L.nrn++] = x;
    P->scal[P->nscal++] = x->seed;
    P->scal[P->nscal++] = x->offset;
  }
  P->nrand = P->nscal;
  fmt_buf src; fmt_init(&src);
  reset_launch(P);
  int rc = -1;
  switch (g->kind) {
  case RG_REDUCE:
    rc = lower_reduce1(&L, &src);
    if (rc) {
      fmt_reset(&src); reset_launch(P); L.fail = 0; L.ntmp = 0;
      P->nscal = P->nrand; L.nprm = 0; L.sealed = 0;
      clear_marks(&L);
      rc = lower_staged(&L, &src);
    }
    break;
  case RG_ROWS:
    rc = lower_rows(&L, &src);
    if (rc) {   /* column reductions */
      fmt_reset(&src); reset_launch(P); L.fail = 0; L.ntmp = 0; L.xf = NULL;
      P->nscal = P->nrand; L.nprm = 0; L.sealed = 0;
      clear_marks(&L);
      rc = lower_cols(&L, &src);
    }
    if (rc) {
      fmt_reset(&src); reset_launch(P); L.fail = 0; L.ntmp = 0; L.xf = NULL;
      P->nscal = P->nrand; L.nprm = 0; L.sealed = 0;
      clear_marks(&L);
      rc = lower_staged(&L, &src);
    }
    break;
  case RG_MAP: rc = lower_staged(&L, &src); break;
  case RG_SCAN: rc = lower_scan(&L, &src); break;
  case RG_FILTER: case RG_PARTITION: rc = lower_select(&L, &src); break;
  case RG_HIST: rc = lower_hist(&L, &src); break;
  case RG_TRANSPOSE: rc = lower_transpose(&L, &src); break;
  case RG_MATMUL: rc = lower_matmul(&L, &src, tf32); break;
  case RG_SORT: rc = lower_sort(&L, &src); break;
  }
  free(L.stage); free(L.field); free(L.onl); free(L.varm); free(L.maxof); free(L.shared);
  fmt_free(&L.wrap);
  for (int k = 0; k < L.nprm; k++) free(L.prm[k]);
  free(L.prm);
  for (int k = 0; k < LW_MEMO / LW_MEMO_BLOCK; k++) free(L.memo[k]);
  if (src.status || rc || L.fail) {
    fmt_free(&src); free(P);
    if (!rc && !L.fail) return rt_seterr(e, GK_ENOMEM, "out of memory lowering a kernel");
    return rt_seterr(e, GK_EMISUSE, "internal error: cannot lower the %s group: %s", rt_group_name[g->kind],
                     L.err[0] ? L.err : "unsupported pattern");
  }
  /* name = hash of the text written with the zero name */
  char name[32];
  snprintf(name, sizeof name, "gk_%016llx", (unsigned long long)cu_hash64(src.data, src.len, 0));
  for (char *q = strstr(src.data, "gk_0000000000000000"); q; q = strstr(q + 19, "gk_0000000000000000"))
    memcpy(q, name, 19);   /* every kernel of the source (a sort's passes: gk_<hash>_<step>) */
  snprintf(P->kname, sizeof P->kname, "%s", name);
  for (int k = 0; P->multi && k < P->nstep; k++) {   /* steps named by their suffix */
    char full[32];
    snprintf(full, sizeof full, "%s%s", name, P->step[k].kname);
    memcpy(P->step[k].kname, full, sizeof full);
  }
  /* the launch list: the kernel, then the gemm */
  if (!P->nokernel) { P->step[P->nstep] = P->kl; snprintf(P->step[P->nstep].kname, 32, "%s", name); P->nstep++; }
  if (P->gemm) P->step[P->nstep++] = P->gm;
  g->nlaunch = P->nstep;
  P->srclen = src.len;
  P->src = rt_alloc(mem, src.len + 1);
  if (!P->src) { fmt_free(&src); free(P); return rt_seterr(e, GK_ENOMEM, "out of memory"); }
  memcpy(P->src, src.data, src.len + 1);
  fmt_free(&src);
  /* the prep lives in mem (the compiler frees it with rt_prep_free) */
  rt_prep *Q = rt_alloc(mem, sizeof *Q);
  if (!Q) { rt_free(mem, P->src, P->srclen + 1); free(P); return rt_seterr(e, GK_ENOMEM, "out of memory"); }
  memcpy(Q, P, sizeof *Q);
  free(P);
  rt_prep_free(mem, g->prep);
  g->prep = Q;
  return GK_OK;
}

/* ------------------------------------------------ prepared groups */

rt_prep *rt_prep_copy(rt_mem *m, const rt_prep *p) {
  if (!p) return NULL;
  rt_prep *q = rt_alloc(m, sizeof *q);
  if (!q) return NULL;
  memcpy(q, p, sizeof *q);
  q->src = NULL;
  if (p->src && !(q->src = rt_alloc(m, p->srclen + 1))) { rt_free(m, q, sizeof *q); return NULL; }
  if (p->src) memcpy(q->src, p->src, p->srclen + 1);
  return q;
}

void rt_prep_free(rt_mem *m, rt_prep *p) {
  if (!p) return;
  if (p->src) rt_free(m, p->src, p->srclen + 1);
  rt_free(m, p, sizeof *p);
}

int rt_prep_same(const rt_prep *a, const rt_prep *b) {
  if (!a || !b) return a == b;
  if (a->nstep != b->nstep || a->srclen != b->srclen || strcmp(a->src, b->src) || strcmp(a->kname, b->kname) ||
      a->temp_bytes != b->temp_bytes || a->temp_zero != b->temp_zero || a->outs_zero != b->outs_zero ||
      a->errflag != b->errflag || a->doneflag != b->doneflag || a->aligned16 != b->aligned16 || a->nscal != b->nscal || a->nrand != b->nrand ||
      a->count_out != b->count_out || a->count_at != b->count_at ||
      memcmp(a->scal, b->scal, sizeof(uint64_t) * (size_t)a->nscal))
    return 0;
  for (int i = 0; i < a->nstep; i++) {
    const cu_step *x = &a->step[i], *y = &b->step[i];
    if (x->op != y->op || strcmp(x->kname, y->kname) || memcmp(x->grid, y->grid, sizeof x->grid) ||
        memcmp(x->block, y->block, sizeof x->block) || x->smem != y->smem || x->a != y->a || x->b != y->b ||
        x->tf32 != y->tf32 || x->coop != y->coop || x->aoff != y->aoff || x->boff != y->boff || x->m != y->m || x->n != y->n || x->k != y->k)
      return 0;
  }
  return 1;
}

const char *rt_prep_source(const rt_prep *p) { return p ? p->src : NULL; }

int rt_prep_rebind(rt_group *g) {
  rt_prep *p = g->prep;
  if (!p) return 0;
  /* a kernel with vector loads meets an input that is not 16-byte aligned
  ** (a borrowed buffer): lower it again for scalar loads */
  if (p->aligned16)
    for (int i = 0; i < g->nin; i++) {
      const rt_value *v = g->ins[i]->val;
      if (v && v->where == RT_ON_DEVICE && (v->dev & 15)) return -1;
    }
  int n = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const rt_node *x = g->nodes[i];
    if ((x->op != RT_RAND && x->op != RT_RANDN) || in_index(g, x) >= 0) continue;
    if (n + 2 > RT_MAX_RAND) return -1;   /* cuda_lower baked the rest into the text */
    p->scal[n++] = x->seed;
    p->scal[n++] = x->offset;
  }
  return n == p->nrand ? 0 : -1;
}

/* ------------------------------------------------- prepare_group */


#define NVRTC_SEEN 4096   /* distinct kernels remembered per process (compiled once) */
static struct { uint64_t seen[NVRTC_SEEN]; int nseen; long ok, bad; int registered; } nv;

static void nvrtc_summary(void) {
  fprintf(stderr, "gk-nvrtc: %ld compiled, %ld failed\n", nv.ok, nv.bad);
}

/* What GK_NVRTC_CHECK=ship and =shipped compile for and key by: sm_<GK_SHIP_ARCH>
** (default 90), the NVRTC found here and the key seed of both (once a process). */
static struct { int arch, nvrtc; char opt[16]; uint64_t seed; } ship_tg;
static pthread_once_t ship_once = PTHREAD_ONCE_INIT;
static void ship_target_init(void) {
  const char *a = getenv("GK_SHIP_ARCH");
  ship_tg.arch = a && atoi(a) > 0 ? atoi(a) : 90;
  snprintf(ship_tg.opt, sizeof ship_tg.opt, "sm_%d", ship_tg.arch);
  ship_tg.nvrtc = cu_nvrtc_lib_version();
  if (ship_tg.nvrtc > 0) ship_tg.seed = cu_key_seed(ship_tg.nvrtc, ship_tg.opt);
}

/* The key the cuda backend looks p up by in the shipped kernels: its first
** launch's kernel name (a later launch of the same source borrows the
** loaded module).  Returns that name, or NULL without NVRTC or without a
** kernel launch (a gemm alone). */
static const char *ship_key(const rt_prep *p, cu_cache_key *k) {
  pthread_once(&ship_once, ship_target_init);
  if (ship_tg.nvrtc <= 0) return NULL;
  const char *name = p->nstep ? NULL : p->kname;
  for (int i = 0; i < p->nstep && !name; i++)
    if (p->step[i].op == CU_STEP_KERNEL) name = p->step[i].kname;
  if (name) cu_kernel_key(k, ship_tg.seed, p->src, p->srclen, name, ship_tg.arch, ship_tg.nvrtc, 0);
  return name;
}

/* Does dir hold p's shipped kernel?  A hit marks the entry used (its mtime). */
static int ship_in(const char *dir, const rt_prep *p, const char **name) {
  cu_cache_key k;
  void *bin = NULL;
  size_t len = 0;
  if (!(*name = ship_key(p, &k)) || !dir || !*dir) return 0;
  int hit = cu_cache_read(dir, &k, &bin, &len);
  free(bin);
  return hit;
}

/* GK_NVRTC_CHECK=ship: the cubin of p becomes a shipped-kernel entry (cu_ship_dir). */
static void ship_write(const rt_prep *p, const void *bin, size_t len) {
  const char *dir = getenv("GK_KERNELS_OUT"), *name;
  cu_cache_key k;
  if (!dir || !*dir || !(name = ship_key(p, &k))) return;
  if (cu_cache_write(dir, &k, bin, len))
    fprintf(stderr, "gk-nvrtc: could not write kernel %s into %s\n", name, dir);
}

/* GK_NVRTC_CHECK=shipped: does the shipped-kernel directory hold p? */
static void ship_probe(const rt_prep *p) {
  char dir[CU_PATH_MAX];
  const char *name;
  int hit = ship_in(cu_ship_dir(dir, sizeof dir) ? dir : NULL, p, &name);
  if (ship_tg.nvrtc <= 0) fprintf(stderr, "gk-nvrtc: skipped: NVRTC not found\n");
  else if (name) fprintf(stderr, "gk-nvrtc: %s %s\n", hit ? "shipped" : "not shipped", name);
}

static void nvrtc_check(const rt_backend *be, const rt_group *g, int show) {
  const rt_prep *p = g->prep;
  if (!p || !p->src || (p->nokernel && !p->nstep)) return;
  if (show == 1) fprintf(stderr, "gk-nvrtc: %s (%s group)\n%s\n", p->kname, rt_group_name[g->kind], p->src);
  if (show == 2 || show == 5) fprintf(stderr, "gk-nvrtc: kernel %s (%s group)\n", p->kname, rt_group_name[g->kind]);
  if (show == 5) return;
  if (show == 7) { ship_probe(p); return; }
  const char *shipped;
  if (show == 6 && ship_in(getenv("GK_KERNELS_OUT"), p, &shipped)) { nv.ok++; return; }   /* by an earlier run */
  uint64_t h = fnv64(p->src, p->srclen);
  for (int i = 0; i < nv.nseen; i++) if (nv.seen[i] == h) return;
  if (nv.nseen < NVRTC_SEEN) nv.seen[nv.nseen++] = h;
  if (!nv.registered) { nv.registered = 1; atexit(nvrtc_summary); }
  char *bin = NULL, *log = NULL; size_t len = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* the compile hook hears of a slow compile here too: the REPL's status line works without a GPU */
  if (show == 6) pthread_once(&ship_once, ship_target_init);
  int rc = cu_nvrtc_build_noted(p->src, p->kname, show == 6 ? ship_tg.opt : "sm_90", -1, be->compile_note,
                                be->compile_ud, &bin, &len, &log, NULL);
  if (rc == GK_OK && show == 6) ship_write(p, bin, len);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (show == 4)
    fprintf(stderr, "gk-nvrtc: kernel %s (%s group) compiled in %.1f ms, %zu bytes of cubin\n", p->kname,
            rt_group_name[g->kind], (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6, len);
  if (rc == GK_OK) nv.ok++;
  else if (rc == GK_EDEVICE) {
    static int said;
    if (!said) { said = 1; fprintf(stderr, "gk-nvrtc: skipped: %s\n", log ? log : "NVRTC not found"); }
  } else {
    nv.bad++;
    fprintf(stderr, "gk-nvrtc: FAILED %s (%s group)\n%s\n--- source ---\n%s\n", p->kname, rt_group_name[g->kind],
            log ? log : "", p->src);
  }
  free(bin); free(log);
}

/* The device launches g costs, from its structure alone (what lower_group
** sets in g->nlaunch, except that empty work still counts one), so that
** --plan counts the same on every backend: a float matmul with a computed
** operand is a prologue kernel and the gemm. */
static int group_launches(const rt_group *g) {
  if (g->kind == RG_SORT)
    for (int i = 0; i < g->nnodes; i++)
      if (g->nodes[i]->op >= RT_SORT && g->nodes[i]->op <= RT_SEARCH && in_index(g, g->nodes[i]) < 0) return sort_launches(g->nodes[i]);
  const rt_node *x = g->kind == RG_MATMUL ? the_heavy(g, RT_MATMUL) : NULL;
  if (x && isf(x->t) && (in_index(g, x->in[0]) < 0 || in_index(g, x->in[1]) < 0)) return 2;
  return 1;
}

int cuda_prepare(rt_backend *be, rt_group *g, int lower, int sms, int64_t smem_block, int tf32) {
  pthread_once(&env_once, env_init);
  int check = env_check, show = env_show;
  if (!lower && !check) { g->nlaunch = group_launches(g); return GK_OK; }
  int rc = cuda_lower(g, be->mem, lower ? sms : 132, lower ? smem_block : -1, tf32, &be->err);
  if (rc) return rc;
  if (check && show != 3) nvrtc_check(be, g, show);
  return GK_OK;
}
