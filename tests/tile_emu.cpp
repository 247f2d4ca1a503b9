/*
** tests/tile_emu.cpp -- kernels/gk_rows.cuh's row kernels run on the host
** where they are hard to reach from a GPU-less test: a block is THREADS
** pthreads with a barrier for __syncthreads and real warp shuffles (a slot
** a lane and a barrier a warp), blocks one after another over one shared
** memory (the Makefile compiles a copy of gk_rows.cuh whose `extern
** __shared__` is plain `extern`; `__shared__` is `static` here).
**   gk_row_tile (short rows a row a thread through shared memory): three
** programs shaped as runtime/cuda_lower.c writes them (X, XS / from_s /
** src_s, YS / store_s / dst_s, lift_a / lift_b, the f32 pack sums of pass
** B) are compared, on fresh random data, with float64 loops written here:
** softmax of f32 rows (two passes, a store), the sum of f64 rows (one pass,
** no store), and the deviation from the row mean of i32 rows as f64 (4-byte
** input, 8-byte output).  Row counts cover a partial last tile and tiles
** that start in the middle of a 16-byte vector's rows; lengths 1..33 cover
** every tail of the 16-byte copies.  The launch geometry is
** gk_rows_plan_tile's (launch.h).
**   gk_row_stream (a block a row) of softmax with ONLINE_B (pass A and B in
** one read, each thread rescaling its sum as its max grows, the warps'
** pairs folded once a row) and without it (three reads), packs of 4 and 1
** from each row's aligned element (ALIGN): both against float64, rows with
** -inf elements and a row all -inf included.
** No GPU: this checks the indexing and the data flow, not the hardware.
** Build and run: make tile-emu.
*/
#include <pthread.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

/* ---- CUDA on the host (tests/emu_cuda.h, emu_pthreads.h), and what this emulation adds ---- */
#include "emu_pthreads.h"
static inline void __syncwarp(unsigned = 0xffffffffu) {}
static inline unsigned __ballot_sync(unsigned, int p) { return p; }

#include "gk_rows.cuh"   /* the Makefile's copy (extern __shared__ -> extern) */
#include "launch.h"

__attribute__((aligned(16))) unsigned char gk_row_smem[232448];   /* the dynamic shared memory of the block that runs */

typedef int I;

/* a stage's tuple of one field and its operator, as lower_rows writes S1 / O1 */
template <class T, template <class> class M> struct Op1 {
  struct A { T f0; };
  M<T> o0;
  A identity() const { A r; r.f0 = o0.identity(); return r; }
  A operator()(const A &a, const A &b) const { A r; r.f0 = o0(a.f0, b.f0); return r; }
};

/* softmax of f32 rows, as lower_rows writes it: pass A max m, pass B sum
** of exp(x - m') in double (packs summed in f32 first; m' = m > -inf ? m :
** 0, the guard), store exp(x - m') * (1 / s) */
struct Softmax {
  struct XF { float f0; I r; };
  typedef XF X;
  typedef Op1<float, gk_op_max> OpA;
  typedef Op1<double, gk_op_sum> OpB;
  enum { PASSES = 2, HAS_STORE = 1 };
  OpA opa; OpB opb;
  const float *in0; float *out0; I C;
  OpA::A lift_a(const X &x, I) const { OpA::A r; r.f0 = x.f0; return r; }
  static float guard(float m) { return m > -INFINITY ? m : 0.0f; }
  OpB::A lift_b(const X &x, I, const OpA::A &a) const { OpB::A r; r.f0 = (double)expf(x.f0 - guard(a.f0)); return r; }
  enum { PACK_B = 1 };
  template <int N> OpB::A lift_b_pack(const X *x, I col, const OpA::A &a) const {
    float v_[N];
    for (int kk = 0; kk < N; ++kk) v_[kk] = (float)lift_b(x[kk], col + kk, a).f0;
    OpB::A r; r.f0 = (double)gk_pack_sum<N>(v_); return r;
  }
  void row_out(I, const OpA::A &, const OpB::A &) const {}
  struct XS { float f0; };
  static X from_s(const XS &s, I row) { X x; x.f0 = s.f0; x.r = row; return x; }
  const XS *src_s(I row, I col) const { return reinterpret_cast<const XS *>(in0 + row * C + col); }
  typedef float YS;
  template <int N> void store_s(YS *v0, I, I, const X *x, const OpA::A &a, const OpB::A &b) const {
    for (int kk = 0; kk < N; ++kk) v0[kk] = expf(x[kk].f0 - guard(a.f0)) * (1.0f / (float)b.f0);
  }
  YS *dst_s(I row, I col) const { return out0 + row * C + col; }
};

/* a one-pass program of rows of E: the row's sum in double (pass A) */
template <class E, int STORE> struct SumPass {
  struct XF { E f0; };
  typedef XF X;
  typedef Op1<double, gk_op_sum> OpA;
  typedef gk_op_nop OpB;
  enum { PASSES = 1, HAS_STORE = STORE };
  OpA opa; OpB opb;
  const E *in0; I C;
  OpA::A lift_a(const X &x, I) const { OpA::A r; r.f0 = (double)x.f0; return r; }
  OpB::A lift_b(const X &, I, const OpA::A &) const { return OpB::A(); }
  struct XS { E f0; };
  static X from_s(const XS &s, I) { X x; x.f0 = s.f0; return x; }
  const XS *src_s(I row, I col) const { return reinterpret_cast<const XS *>(in0 + row * C + col); }
  template <int N> void load(X *d, I row, I col) const { for (int kk = 0; kk < N; ++kk) d[kk].f0 = in0[row * C + col + kk]; }
};

/* the sum of rows of E: one pass, no store, one value a row */
template <class E> struct RowSumOf : SumPass<E, 0> {
  double *out0;
  void row_out(I row, const typename SumPass<E, 0>::OpA::A &a, const gk_none &) const { out0[row] = a.f0; }
};
typedef RowSumOf<double> RowSum;

/* i32 rows to f64: x - mean(row) + 0.25 * col, the mean also out per row */
struct Centre : SumPass<int, 1> {
  double *out0, *out1;
  void row_out(I row, const OpA::A &a, const OpB::A &) const { out1[row] = a.f0 / C; }
  typedef double YS;
  template <int N> void store_s(YS *v0, I, I col, const X *x, const OpA::A &a, const OpB::A &) const {
    for (int kk = 0; kk < N; ++kk) v0[kk] = (double)x[kk].f0 - a.f0 / C + 0.25 * (col + kk);
  }
  YS *dst_s(I row, I col) const { return out0 + row * C + col; }
};

/* the same for a block a row (load, phase, store); with SoftmaxOnline also
** ONLINE_B and rescale_b (in double, an empty sum stays 0) */
struct SoftmaxRows : Softmax {
  I phase(I row) const { return row * C; }
  template <int N> void load(X *d, I row, I col) const {
    for (int kk = 0; kk < N; ++kk) { d[kk].f0 = in0[row * C + col + kk]; d[kk].r = row; }
  }
  template <int N> void store(I row, I col, const X *x, const OpA::A &a, const OpB::A &b) const {
    store_s<N>(out0 + row * C + col, row, col, x, a, b);
  }
};
struct SoftmaxOnline : SoftmaxRows {
  enum { ONLINE_B = 1 };
  OpB::A rescale_b(const OpB::A &b, const OpA::A &f, const OpA::A &t) const {
    OpB::A r = b;
    r.f0 = b.f0 == 0 ? b.f0 : b.f0 * exp((double)guard(f.f0) - (double)guard(t.f0));
    return r;
  }
};

/* ---- the launch: THREADS pthreads, blocks one after another ------------- */
template <int T> struct TileK {
  template <class Prog> static void run(I rows, I cols, const Prog &pg) { gk_row_tile<gk_rows_policy<T, T, 1, 1>>(rows, cols, pg); }
};
template <class P> struct CachedK {
  template <class Prog> static void run(I rows, I cols, const Prog &pg) { gk_row_cached<P>(rows, cols, pg); }
};
template <class P> struct StreamK {
  template <class Prog> static void run(I rows, I cols, const Prog &pg) { gk_row_stream<P>(rows, cols, pg); }
};
template <class Prog> struct Launch { const Prog *pg; I rows, cols; int64_t grid; };
template <class Prog> struct Thr { const Launch<Prog> *L; unsigned t; };
template <class Prog, class Kern> static void *run_thread(void *arg) {
  Thr<Prog> *th = (Thr<Prog> *)arg;
  threadIdx.x = th->t;
  for (int64_t b = 0; b < th->L->grid; ++b) {
    blockIdx.x = (unsigned)b;
    Kern::run(th->L->rows, th->L->cols, *th->L->pg);
    pthread_barrier_wait(&emu_bar);   /* the block is done before the next one takes the shared memory */
  }
  return nullptr;
}
template <class Prog, int T, class Kern> static void launch(const Prog &pg, I rows, I cols, int64_t grid) {
  static_assert(T % 32 == 0 && T <= 1024, "whole warps");
  Launch<Prog> L = {&pg, rows, cols, grid};
  gridDim.x = (unsigned)grid; blockDim.x = T;
  pthread_barrier_init(&emu_bar, nullptr, T);
  for (int w = 0; w < T / 32; ++w) pthread_barrier_init(&emu_wbar[w], nullptr, 32);
  std::vector<pthread_t> th(T);
  std::vector<Thr<Prog>> a(T);
  for (int t = 0; t < T; ++t) { a[t] = {&L, (unsigned)t}; pthread_create(&th[t], nullptr, run_thread<Prog, Kern>, &a[t]); }
  for (int t = 0; t < T; ++t) pthread_join(th[t], nullptr);
  for (int w = 0; w < T / 32; ++w) pthread_barrier_destroy(&emu_wbar[w]);
  pthread_barrier_destroy(&emu_bar);
}
template <class Prog> static int run(const Prog &pg, I rows, I cols, int xs, int ys) {
  gk_rows_knobs k = {};
  k.tt = 64;
  gk_launch L = gk_launch_blocks(128, 1);
  L.mode = GK_ROWS_WARP;
  L = gk_rows_plan_tile(L, rows, cols, 1, xs, ys, 227 << 10, &k);
  if (L.mode != GK_ROWS_TILE || L.smem > (int64_t)sizeof gk_row_smem) return -1;
  memset(gk_row_smem, 0xa5, sizeof gk_row_smem);   /* poison: a tile element never copied in shows */
  switch (L.block[0]) {
    case 256: launch<Prog, 256, TileK<256>>(pg, rows, cols, L.grid[0]); break;
    case 128: launch<Prog, 128, TileK<128>>(pg, rows, cols, L.grid[0]); break;
    case 64: launch<Prog, 64, TileK<64>>(pg, rows, cols, L.grid[0]); break;
    default: return -1;
  }
  return 0;
}

static int npass, nfail;
static void check(bool ok, const char *what, I rows, I cols, double err) {
  if (ok) npass++;
  else { nfail++; printf("FAIL %s %dx%d: max error %g\n", what, rows, cols, err); }
}

/* a float64 softmax of each row against the kernel's; a row whose every
** element is -inf must come out NaN (0 / 0) as the reference does */
static double softmax_err(const std::vector<float> &x, const std::vector<float> &y, I rows, I cols) {
  double err = 0;
  for (I r = 0; r < rows; ++r) {
    double m = -INFINITY, sm = 0;
    for (I c = 0; c < cols; ++c) m = fmax(m, x[(size_t)r * cols + c]);
    const double mg = m > -INFINITY ? m : 0;
    for (I c = 0; c < cols; ++c) sm += exp((double)x[(size_t)r * cols + c] - mg);
    for (I c = 0; c < cols; ++c) {
      const double ref = exp((double)x[(size_t)r * cols + c] - mg) / sm, got = y[(size_t)r * cols + c];
      if (std::isnan(ref) || std::isnan(got)) { if (std::isnan(ref) != std::isnan(got)) err = INFINITY; }
      else err = fmax(err, fabs(got - ref) / fmax(ref, 1e-30));
    }
  }
  return err;
}
template <class P> static void stream_cases(std::mt19937_64 &rng, const char *name, int64_t grid_cap) {
  std::uniform_real_distribution<double> U(-4, 4);
  const I colsv[] = {1, 2, 3, 5, 31, 33, 257, 1001, 4099, 50257};
  const I rowsv[] = {1, 3, 7};
  for (I cols : colsv)
    for (I rows : rowsv) {
      if ((int64_t)rows * cols > 120000) continue;
      const size_t n = (size_t)rows * cols;
      std::vector<float> x(n), y0(n, 0.5f), y1(n, 0.5f);
      for (auto &v : x) v = (float)(U(rng) * (1 + (rng() % 8)));   /* spread: the max moves along the row */
      if (rows > 1) for (I c = 0; c < cols; c += 7) x[(size_t)cols + c] = -INFINITY;
      if (rows == 7) for (I c = 0; c < cols; ++c) x[(size_t)6 * cols + c] = -INFINITY;
      const int64_t grid = rows < grid_cap ? rows : grid_cap;
      SoftmaxRows two; two.in0 = x.data(); two.out0 = y0.data(); two.C = cols;
      SoftmaxOnline one; one.in0 = x.data(); one.out0 = y1.data(); one.C = cols;
      launch<SoftmaxRows, P::THREADS, StreamK<P>>(two, rows, cols, grid);
      launch<SoftmaxOnline, P::THREADS, StreamK<P>>(one, rows, cols, grid);
      char what[96];
      double e0 = softmax_err(x, y0, rows, cols), e1 = softmax_err(x, y1, rows, cols);
      snprintf(what, sizeof what, "%s softmax", name);
      check(e0 < 1e-5, what, rows, cols, e0);
      snprintf(what, sizeof what, "%s softmax ONLINE_B", name);
      check(e1 < 1e-5, what, rows, cols, e1);
    }
}

typedef RowSumOf<float> RowSumRows;   /* gk_row_cached's one-pass program */
/* gk_row_cached in warp mode (W lanes a row, P::BATCH rows a group at once)
** on every row length its packs hold, with the grid that covers the rows in
** one step and with a grid of 2 blocks (the grid-stride loop): softmax and
** the f32 row sum against float64 */
template <class P> static void cached_cases(std::mt19937_64 &rng, const char *name) {
  std::uniform_real_distribution<double> U(-4, 4);
  const I rowsv[] = {1, 3, 31, 33, 257, 1000};
  for (I cols = 1; cols <= P::CAPACITY; ++cols) {
    if (P::FULL && cols != P::CAPACITY) continue;
    if (cols % P::PACK) continue;   /* the lowering's pack divides the row */
    for (I rows : rowsv) {
      const size_t n = (size_t)rows * cols;
      std::vector<float> x(n), y(n, 0.5f);
      std::vector<double> s(rows, NAN);
      for (auto &v : x) v = (float)(U(rng) * (1 + (rng() % 8)));
      if (rows > 1) x[(size_t)cols] = -INFINITY;
      const int64_t whole = (rows + P::GROUPS * P::BATCH - 1) / (P::GROUPS * P::BATCH);
      for (int64_t grid : {whole, (int64_t)2}) {
        if (grid > whole) continue;
        SoftmaxRows sm; sm.in0 = x.data(); sm.out0 = y.data(); sm.C = cols;
        RowSumRows rs; rs.in0 = x.data(); rs.out0 = s.data(); rs.C = cols;
        launch<SoftmaxRows, P::THREADS, CachedK<P>>(sm, rows, cols, grid);
        launch<RowSumRows, P::THREADS, CachedK<P>>(rs, rows, cols, grid);
        char what[96];
        double e = softmax_err(x, y, rows, cols), es = 0;
        snprintf(what, sizeof what, "%s softmax grid %lld", name, (long long)grid);
        check(e < 1e-5, what, rows, cols, e);
        for (I r = 0; r < rows; ++r) {
          double t = 0, a = 0;
          for (I c = 0; c < cols; ++c) { const double v = x[(size_t)r * cols + c]; if (std::isinf(v)) { t = -INFINITY; break; } t += v; a += fabs(v); }
          if (std::isinf(t)) { if (!(std::isinf(s[r]) && s[r] < 0)) es = INFINITY; continue; }
          es = std::isnan(s[r]) ? INFINITY : fmax(es, fabs(s[r] - t) / fmax(a, 1e-300));
        }
        snprintf(what, sizeof what, "%s rowsum grid %lld", name, (long long)grid);
        check(es < 1e-12, what, rows, cols, es);
      }
    }
  }
}

int main(int argc, char **argv) {
  std::mt19937_64 rng(argc > 1 ? strtoull(argv[1], nullptr, 10) : 1901);
  std::uniform_real_distribution<double> U(-4, 4);
  const I rowsv[] = {1, 3, 31, 33, 255, 257, 1000};
  for (I cols = 1; cols <= 33; ++cols)
    for (I rows : rowsv) {
      const size_t n = (size_t)rows * cols;
      /* softmax f32 */
      {
        std::vector<float> x(n), y(n, NAN);
        for (auto &v : x) v = (float)U(rng);
        Softmax pg; pg.in0 = x.data(); pg.out0 = y.data(); pg.C = cols;
        if (run(pg, rows, cols, 4, 4)) { check(false, "softmax plan", rows, cols, 0); continue; }
        double err = 0;
        for (I r = 0; r < rows; ++r) {
          double m = -INFINITY, s = 0;
          for (I c = 0; c < cols; ++c) m = fmax(m, x[(size_t)r * cols + c]);
          for (I c = 0; c < cols; ++c) s += exp((double)x[(size_t)r * cols + c] - m);
          for (I c = 0; c < cols; ++c) {
            double ref = exp((double)x[(size_t)r * cols + c] - m) / s, got = y[(size_t)r * cols + c];
            err = std::isnan(got) ? INFINITY : fmax(err, fabs(got - ref) / fmax(ref, 1e-30));
          }
        }
        check(err < 1e-5, "softmax f32", rows, cols, err);
      }
      /* row sums f64 */
      {
        std::vector<double> x(n), y(rows, NAN);
        for (auto &v : x) v = U(rng);
        RowSum pg; pg.in0 = x.data(); pg.out0 = y.data(); pg.C = cols;
        if (run(pg, rows, cols, 8, 0)) { check(false, "rowsum plan", rows, cols, 0); continue; }
        double err = 0;
        for (I r = 0; r < rows; ++r) {
          double s = 0, a = 0;
          for (I c = 0; c < cols; ++c) { s += x[(size_t)r * cols + c]; a += fabs(x[(size_t)r * cols + c]); }
          err = std::isnan(y[r]) ? INFINITY : fmax(err, fabs(y[r] - s) / fmax(a, 1e-300));
        }
        check(err < 1e-13, "rowsum f64", rows, cols, err);
      }
      /* i32 -> f64 with a per-row output */
      {
        std::vector<int> x(n);
        std::vector<double> y(n, NAN), mu(rows, NAN);
        for (auto &v : x) v = (int)(rng() % 20001) - 10000;
        Centre pg; pg.in0 = x.data(); pg.out0 = y.data(); pg.out1 = mu.data(); pg.C = cols;
        if (run(pg, rows, cols, 4, 8)) { check(false, "centre plan", rows, cols, 0); continue; }
        double err = 0;
        for (I r = 0; r < rows; ++r) {
          double s = 0;
          for (I c = 0; c < cols; ++c) s += x[(size_t)r * cols + c];
          const double m = s / cols;
          err = std::isnan(mu[r]) ? INFINITY : fmax(err, fabs(mu[r] - m));
          for (I c = 0; c < cols; ++c) {
            const double ref = x[(size_t)r * cols + c] - m + 0.25 * c, got = y[(size_t)r * cols + c];
            err = std::isnan(got) ? INFINITY : fmax(err, fabs(got - ref));
          }
        }
        check(err < 1e-9, "centre i32->f64", rows, cols, err);
      }
    }
  /* gk_row_stream: softmax with and without ONLINE_B */
  stream_cases<gk_rows_policy<64, 64, 2, 4, 1, 1>>(rng, "stream 64x2x4", 2);
  stream_cases<gk_rows_policy<128, 128, 4, 1, 1, 1>>(rng, "stream 128x4x1", 3);
  stream_cases<gk_rows_policy<1024, 1024, 4, 4, 1, 1>>(rng, "stream 1024x4x4", 1);
  /* gk_row_cached's warp mode, batched as gk_rows_plan_k picks for short rows (2000000x10: 4 lanes x 2
  ** packs of 2, 4 rows a group) and not */
  cached_cases<gk_rows_policy<128, 4, 2, 2, 4>>(rng, "cached 4x2x2 batch 4");
  cached_cases<gk_rows_policy<128, 4, 2, 2, 1>>(rng, "cached 4x2x2");
  cached_cases<gk_rows_policy<128, 4, 2, 1, 4>>(rng, "cached 4x2x1 batch 4");
  cached_cases<gk_rows_policy<64, 1, 1, 1, 4>>(rng, "cached 1x1x1 batch 4");
  cached_cases<gk_rows_policy<128, 2, 2, 1, 4>>(rng, "cached 2x2x1 batch 4");
  cached_cases<gk_rows_policy<128, 4, 2, 2, 4, 0, 1>>(rng, "cached 4x2x2 batch 4 FULL");
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail != 0;
}
