/*
** tests/tile_emu.cpp -- kernels/gk_rows.cuh's gk_row_tile (short rows a row a
** thread through shared memory) run on the host: a block is THREADS pthreads
** with a barrier for __syncthreads, blocks one after another over one shared
** memory array.  Three programs shaped as runtime/cuda_lower.c writes them
** (X, XS / from_s / src_s, YS / store_s / dst_s, lift_a / lift_b, the f32
** pack sums of pass B) are compared, on fresh random data, with float64
** loops written here: softmax of f32 rows (two passes, a store), the sum of
** f64 rows (one pass, no store), and the deviation from the row mean of i32
** rows as f64 (4-byte input, 8-byte output).  Row counts cover a partial
** last tile and tiles that start in the middle of a 16-byte vector's rows;
** lengths 1..33 cover every tail of the 16-byte copies.  The launch
** geometry is gk_rows_plan_tile's (launch.h).  No GPU: this checks the
** indexing (tiles, pitch, tails, the output tile), not the hardware.
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

/* ---- just enough CUDA for gk_rows.cuh to compile on the host ---------------- */
#define __CUDACC__ 1
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __restrict__
#define __shared__
#define __align__(n) __attribute__((aligned(n)))
struct dim3 { unsigned x = 0, y = 1, z = 1; };
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static pthread_barrier_t emu_bar;
static inline void __syncthreads() { pthread_barrier_wait(&emu_bar); }
static inline void __syncwarp(unsigned = 0xffffffffu) {}
static inline void __threadfence() {}
static inline void __threadfence_system() {}
template <class T> T __shfl_xor_sync(unsigned, T v, int, int = 32) { return v; }
template <class T> T __shfl_sync(unsigned, T v, int, int = 32) { return v; }
template <class T> T __shfl_up_sync(unsigned, T v, unsigned, int = 32) { return v; }
template <class T> T __shfl_down_sync(unsigned, T v, unsigned, int = 32) { return v; }
static inline unsigned __ballot_sync(unsigned, int p) { return p; }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { unsigned o = *p; *p += v; return o; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
static inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
struct float4 { float x, y, z, w; };
struct float2 { float x, y; };
struct double2 { double x, y; };
struct int4 { int x, y, z, w; };
struct int2 { int x, y; };
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
template <class T> T __ldcs(const T *p) { return *p; }
template <class T> T __ldcg(const T *p) { return *p; }
template <class T> T __ldg(const T *p) { return *p; }
template <class T> void __stcg(T *p, T v) { *p = v; }
template <class T> void __stcs(T *p, T v) { *p = v; }
static inline size_t __cvta_generic_to_shared(const void *p) { return (size_t)p; }

#include "../kernels/gk_rows.cuh"
#include "../kernels/launch.h"

__attribute__((aligned(16))) unsigned char gk_row_smem[232448];   /* the dynamic shared memory of the block that runs */

typedef int I;

/* a stage's tuple of one field and its operator, as lower_rows writes S1 / O1 */
template <class T, template <class> class M> struct Op1 {
  struct A { T f0; };
  M<T> o0;
  A identity() const { A r; r.f0 = o0.identity(); return r; }
  A operator()(const A &a, const A &b) const { A r; r.f0 = o0(a.f0, b.f0); return r; }
};

/* softmax of f32 rows, as lower_rows writes it: pass A max, pass B sum of
** exp(x - m) in double (packs summed in f32 first), store exp(x - m) / s */
struct Softmax {
  struct XF { float f0; I r; };
  typedef XF X;
  typedef Op1<float, gk_op_max> OpA;
  typedef Op1<double, gk_op_sum> OpB;
  enum { PASSES = 2, HAS_STORE = 1 };
  OpA opa; OpB opb;
  const float *in0; float *out0; I C;
  OpA::A lift_a(const X &x, I) const { OpA::A r; r.f0 = x.f0; return r; }
  OpB::A lift_b(const X &x, I, const OpA::A &a) const { OpB::A r; r.f0 = (double)expf(x.f0 - a.f0); return r; }
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
    for (int kk = 0; kk < N; ++kk) v0[kk] = expf(x[kk].f0 - a.f0) * (float)(1.0 / b.f0);
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
};

/* the sum of f64 rows: one pass, no store, one value a row */
struct RowSum : SumPass<double, 0> {
  double *out0;
  void row_out(I row, const OpA::A &a, const OpB::A &) const { out0[row] = a.f0; }
};

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

/* ---- the launch: THREADS pthreads, blocks one after another ------------- */
template <class Prog, int T> struct Launch { const Prog *pg; I rows, cols; int64_t grid; };
template <class Prog, int T> struct Thr { const Launch<Prog, T> *L; unsigned t; };
template <class Prog, int T> static void *run_thread(void *arg) {
  Thr<Prog, T> *th = (Thr<Prog, T> *)arg;
  threadIdx.x = th->t;
  for (int64_t b = 0; b < th->L->grid; ++b) {
    blockIdx.x = (unsigned)b;
    gk_row_tile<gk_rows_policy<T, T, 1, 1>>(th->L->rows, th->L->cols, *th->L->pg);
    pthread_barrier_wait(&emu_bar);   /* the block is done before the next one takes the shared memory */
  }
  return nullptr;
}
template <class Prog, int T> static void launch(const Prog &pg, I rows, I cols, int64_t grid) {
  Launch<Prog, T> L = {&pg, rows, cols, grid};
  gridDim.x = (unsigned)grid; blockDim.x = T;
  pthread_barrier_init(&emu_bar, nullptr, T);
  std::vector<pthread_t> th(T);
  std::vector<Thr<Prog, T>> a(T);
  for (int t = 0; t < T; ++t) { a[t] = {&L, (unsigned)t}; pthread_create(&th[t], nullptr, run_thread<Prog, T>, &a[t]); }
  for (int t = 0; t < T; ++t) pthread_join(th[t], nullptr);
  pthread_barrier_destroy(&emu_bar);
}
template <class Prog> static int run(const Prog &pg, I rows, I cols, int xs, int ys) {
  gk_rows_knobs k = {};
  k.tt = 64;
  gk_launch L = {{1, 1, 1}, {128, 1, 1}, 0, 0, 0, GK_ROWS_WARP, 0, 0, 0, 0, 0, 0, 0, 0};
  L = gk_rows_plan_tile(L, rows, cols, 1, xs, ys, 227 << 10, &k);
  if (L.mode != GK_ROWS_TILE || L.smem > (int64_t)sizeof gk_row_smem) return -1;
  memset(gk_row_smem, 0xa5, sizeof gk_row_smem);   /* poison: a tile element never copied in shows */
  switch (L.block[0]) {
    case 256: launch<Prog, 256>(pg, rows, cols, L.grid[0]); break;
    case 128: launch<Prog, 128>(pg, rows, cols, L.grid[0]); break;
    case 64: launch<Prog, 64>(pg, rows, cols, L.grid[0]); break;
    default: return -1;
  }
  return 0;
}

static int npass, nfail;
static void check(bool ok, const char *what, I rows, I cols, double err) {
  if (ok) npass++;
  else { nfail++; printf("FAIL %s %dx%d: max error %g\n", what, rows, cols, err); }
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
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail != 0;
}
