/*
** tests/reduce_emu.cpp -- kernels/gk_reduce.cuh's gk_grid_reduce of the
** online (max, sum of exp(x - max)) pair on the host: the whole-array
** sum(exp(x - max(x))) that runtime/cuda_lower.c lower_reduce1 writes, with
** its functor shaped as the generated one (lift, fold, fold_tile through
** gkl_ms_fold_tile<1>, the epilogue's guard) and with and without the
** optional block_align (gkl_op_ms::block_align: every thread's sum
** rescaled to the block's max before the block tree; GK_RED_VARIANT ma).
** A block is THREADS pthreads (tests/emu_pthreads.h), blocks one after
** another, so the last ticket is the last block's.  On fresh random data
** (f32 and f64; n = 1, 31, 33, 1000, 8193, 40003, 100003; grids of 1 to
** 17 blocks; 64 and 128 threads: the kernels run 256 and 512, whose
** code is the same but for the warp count) both are compared with float64 sums of
** the elements' own terms; where an element is NaN, +inf or -inf, the two
** give the same class of result (NaN, inf, or values within 1e-6).
** No GPU: this checks the data flow and the merge's special values, not the
** hardware.  Build and run: make reduce-emu.
*/
#include <pthread.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "emu_pthreads.h"
static inline void __syncwarp(unsigned = 0xffffffffu) {}
#include "gk_reduce.cuh"
#include "gk_fused.cuh"

typedef long long I;

/* the generated functor of sum(exp(x - max(x))) (load, op and epilogue at once) */
template <class T, bool ALIGN> struct K {
  struct A { gkl_ms<T> f; };
  typedef T X;
  gkl_op_ms<T, sizeof(T) == 4> o;
  const T *in;
  double *out;
  template <int N> void load(X *d, I i) const { for (int k = 0; k < N; ++k) d[k] = in[i + k]; }
  A identity() const { A r; r.f = o.identity(); return r; }
  A operator()(const A &a, const A &b) const { A r; r.f = o(a.f, b.f); return r; }
  template <class J> A lift(const X &x, J) const { A r; r.f.m = x; r.f.s = 1.0; return r; }
  template <class J> A fold(const A &a, const X &x, J) const { A b; b.f = gkl_ms_fold(a.f, x); return b; }
  template <int U, int V, class J> void fold_tile(A (&a)[U], const X (&x)[U][V], const J (&)[U]) const {
    gkl_ms<T> m[U];
    for (int u = 0; u < U; ++u) m[u] = a[u].f;
    gkl_ms_fold_tile<1>(m, x);
    for (int u = 0; u < U; ++u) a[u].f = m[u];
  }
  template <int TH, bool B = ALIGN> typename std::enable_if<B>::type block_align(A &v) const {
    o.template block_align<TH>(v.f);
  }
  void operator()(const A &t) const {   /* the epilogue: m' = m, or -inf where nothing was summed */
    const T mp = t.f.m != t.f.m ? t.f.m : t.f.s == 0.0 ? -(T)INFINITY : t.f.m;
    *out = gkl_ms_final(t.f, mp);
  }
};

template <class P, class Kn> struct Run { const Kn *k; I n; typename Kn::A *partials; gk_u32 *counter; int grid; };
template <class P, class Kn> static void *run_thread(void *arg) {
  const Run<P, Kn> *r = (const Run<P, Kn> *)((void **)arg)[0];
  threadIdx.x = (unsigned)(size_t)((void **)arg)[1];
  for (int b = 0; b < r->grid; ++b) {
    blockIdx.x = (unsigned)b;
    gk_grid_reduce<P>(r->n, *r->k, *r->k, *r->k, r->partials, r->counter);
    pthread_barrier_wait(&emu_bar);   /* the block is done before the next one takes the shared memory */
  }
  return nullptr;
}
template <class P, class T, bool ALIGN> static double launch(const std::vector<T> &x, int grid) {
  typedef K<T, ALIGN> Kn;
  double out = NAN;
  Kn k;
  k.in = x.data(); k.out = &out;
  std::vector<typename Kn::A> partials((size_t)grid);
  gk_u32 counter = 0;
  Run<P, Kn> r = {&k, (I)x.size(), partials.data(), &counter, grid};
  gridDim.x = (unsigned)grid; blockDim.x = P::THREADS;
  pthread_barrier_init(&emu_bar, nullptr, P::THREADS);
  for (int w = 0; w < P::THREADS / 32; ++w) pthread_barrier_init(&emu_wbar[w], nullptr, 32);
  std::vector<pthread_t> th(P::THREADS);
  std::vector<void *> args(2 * P::THREADS);
  for (int t = 0; t < P::THREADS; ++t) {
    args[2 * t] = &r; args[2 * t + 1] = (void *)(size_t)t;
    pthread_create(&th[t], nullptr, run_thread<P, Kn>, &args[2 * t]);
  }
  for (int t = 0; t < P::THREADS; ++t) pthread_join(th[t], nullptr);
  for (int w = 0; w < P::THREADS / 32; ++w) pthread_barrier_destroy(&emu_wbar[w]);
  pthread_barrier_destroy(&emu_bar);
  if (counter != 0) { printf("FAIL: the counter is %u after the launch\n", counter); out = -12345; }
  return out;
}

static int fails, checks;
static int klass(double v) { return v != v ? 0 : std::isinf(v) ? 1 : 2; }

/* special: 0 plain, 1 a NaN, 2 a +inf, 3 a -inf, 4 all -inf */
template <class P, class T> static void check(const char *name, I n, int grid, int special, std::mt19937_64 &rng) {
  std::normal_distribution<double> nd(0.0, 8.0);
  std::vector<T> x((size_t)n);
  for (auto &v : x) v = (T)nd(rng);
  const I at = (I)(rng() % (unsigned long long)n);
  if (special == 1) x[at] = (T)NAN;
  if (special == 2) x[at] = (T)INFINITY;
  if (special == 3) x[at] = -(T)INFINITY;
  if (special == 4) for (auto &v : x) v = -(T)INFINITY;
  const double a = launch<P, T, true>(x, grid), b = launch<P, T, false>(x, grid);
  ++checks;
  bool ok;
  double ref = NAN;
  if (special == 0 || (special == 3 && n > 1)) {
    T m = x[0];
    for (T v : x) m = v > m ? v : m;
    double s = 0;
    for (T v : x) s += (double)(sizeof(T) == 4 ? (T)expf((float)(v - m)) : (T)exp((double)(v - m)));
    ref = s;
    const double tol = sizeof(T) == 4 ? 2e-6 : 1e-10;   /* f64: the sum's own order */
    ok = std::fabs(a - ref) <= tol * ref && std::fabs(b - ref) <= tol * ref;
  } else {
    ok = klass(a) == klass(b) && (klass(a) != 2 || std::fabs(a - b) <= 1e-6 * std::fabs(b));
  }
  if (!ok) {
    ++fails;
    printf("FAIL %s n=%lld grid=%d special=%d: aligned %.17g, pair merges %.17g, float64 %.17g\n", name, n, grid,
           special, a, b, ref);
  }
}

int main(int argc, char **argv) {
  std::mt19937_64 rng(argc > 1 ? (unsigned long long)atoll(argv[1]) : 1);
  setvbuf(stdout, NULL, _IOLBF, 0);
  const I ns[] = {1, 31, 33, 1000, 8193, 40003, 100003};
  const int grids[] = {1, 3, 17};
  for (I n : ns)
    for (int g : grids) {
      if ((n < 8192 && g > 3) || (n > 40003 && g < 17)) continue;
      for (int sp = 0; sp < 5; ++sp) {
        if (n > 40003 && sp > 1) continue;
        check<gk_reduce_policy<64, 4, 4>, float>("f32 64x4x4", n, g, sp, rng);
        check<gk_reduce_policy<128, 8, 2>, double>("f64 128x8x2", n, g, sp, rng);
      }
    }
  printf("reduce-emu: %d passed, %d failed\n", checks - fails, fails);
  return fails != 0;
}
