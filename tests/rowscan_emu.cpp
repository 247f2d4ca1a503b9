/*
** tests/rowscan_emu.cpp -- kernels/gk_scan.cuh's gk_row_scan_lb (each of
** few long rows scanned by the decoupled look-back over its own tiles) run
** on the host: a block is THREADS pthreads with a barrier for
** __syncthreads, a barrier a warp for __syncwarp, and real warp votes
** and shuffles (a slot a lane); blocks run one after another in an order that
** interleaves the rows at random but keeps each row's tiles in order (a
** tile waits only on earlier tiles of its row, as on the GPU, where they
** have lower block indices).  The Makefile compiles a copy of gk_scan.cuh
** whose relaxed PTX loads and stores are plain ones (blocks do not overlap
** here) and whose nanosleep counts polls: a tile polling a descriptor that
** no earlier block of its row publishes (a look-back leaving its row)
** would spin forever, and aborts instead.
** Checked against float64 / integer loops written here, on fresh random
** data: the sum of f32 rows in double stored as f32 (the Y path), the
** product of i64 rows in wrapping gk_u64, the max of i32 rows, inclusive
** and exclusive, at the tile of the f32 default (256 x 32) and a small one
** (64 x 4: rows of 10001 are 40 tiles, past a look-back group); lengths
** 1, 31, 33, a tile +- 1, one row and several; `rowscan_emu SEED long`
** adds rows of 300001, 1000003 and 2^20 + 1 (123-257 tiles; minutes: the
** barriers are pthreads').  Two block
** orders must give the same bits.  The launch geometry and the tile-state
** size are launch.h's gk_row_scan_lb_plan.
** No GPU: this checks the indexing and the data flow, not the hardware.
** Build and run: make rowscan-emu.
*/
#include <pthread.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <algorithm>

/* ---- CUDA on the host (tests/emu_cuda.h, emu_pthreads.h), and what this emulation adds ---- */
#include "emu_pthreads.h"
static inline void __syncwarp(unsigned = 0xffffffffu) { pthread_barrier_wait(&emu_wbar[threadIdx.x >> 5]); }
/* a vote: every lane's predicate through the slots, all 32 lanes */
static inline unsigned __ballot_sync(unsigned, int p) {
  const unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31;
  emu_slot[w][l] = p != 0;
  pthread_barrier_wait(&emu_wbar[w]);
  unsigned m = 0;
  for (int j = 0; j < 32; ++j) m |= (unsigned)(emu_slot[w][j] != 0) << j;
  pthread_barrier_wait(&emu_wbar[w]);
  return m;
}
static inline int __all_sync(unsigned, int p) { return __ballot_sync(0xffffffffu, p) == 0xffffffffu; }
static inline int __any_sync(unsigned, int p) { return __ballot_sync(0xffffffffu, p) != 0; }
static long long emu_polls;   /* the copy's gk_nanosleep counts (SLEEP > 0 policies) */
static void emu_spin() {
  if (++emu_polls > 100000000LL) { fprintf(stderr, "rowscan_emu: a look-back waits on a descriptor no earlier tile publishes\n"); abort(); }
}

#include "gk_scan.cuh"   /* the Makefile's copy (plain loads and stores, counted polls) */
#include "launch.h"

typedef int I;

/* the functors as runtime/cuda_lower.c writes them for gk_row_scan_lb */
template <class XT, class YT> struct K {
  typedef XT X;
  typedef YT Y;
  const XT *in; YT *out; I C;
  template <int N> void load(X *d, I row, I col) const { for (int k = 0; k < N; ++k) d[k] = in[(int64_t)row * C + col + k]; }
  template <int N> void store(I row, I col, const Y *v) const { for (int k = 0; k < N; ++k) out[(int64_t)row * C + col + k] = v[k]; }
};

/* ---- the launch: THREADS pthreads, blocks one after another in `order` ---- */
template <class P, bool EX, class Kf, class Op> struct Launch {
  const Kf *k; I rows, cols; void *state; const std::vector<int64_t> *order;
};
template <class L> struct Thr { const L *l; unsigned t; };
template <class P, bool EX, class Kf, class Op> static void *run_thread(void *arg) {
  typedef Launch<P, EX, Kf, Op> L;
  Thr<L> *th = (Thr<L> *)arg;
  threadIdx.x = th->t;
  for (int64_t b : *th->l->order) {
    blockIdx.x = (unsigned)b;
    gk_row_scan_lb<P, EX>(th->l->rows, th->l->cols, *th->l->k, Op(), *th->l->k, th->l->state, 1u);
    pthread_barrier_wait(&emu_bar);   /* the block is done before the next one takes the shared memory */
  }
  return nullptr;
}
template <class P, bool EX, class Op, class Kf>
static void launch(const Kf &k, I rows, I cols, std::mt19937_64 &rng, int shuffle) {
  enum { T = P::THREADS };
  gk_launch g = gk_row_scan_lb_plan(rows, cols, T, P::TILE);
  std::vector<unsigned char> state((size_t)g.temp_bytes + 16, 0);   /* zeroed, as the lowering's temp_zero */
  const int64_t nt = (cols + P::TILE - 1) / P::TILE;
  std::vector<int64_t> order, next(rows, 0);
  /* rows interleaved at random (shuffle), each row's tiles in order */
  std::vector<I> left;
  for (I r = 0; r < rows; ++r) for (int64_t t = 0; t < nt; ++t) left.push_back(r);
  if (shuffle) std::shuffle(left.begin(), left.end(), rng);
  for (I r : left) order.push_back(r * nt + next[r]++);
  if ((int64_t)order.size() != g.grid[0]) { fprintf(stderr, "grid %lld, expected %lld\n", (long long)g.grid[0], (long long)order.size()); exit(1); }
  typedef Launch<P, EX, Kf, Op> L;
  L l = {&k, rows, cols, (void *)state.data(), &order};
  gridDim.x = (unsigned)g.grid[0]; blockDim.x = T;
  pthread_barrier_init(&emu_bar, nullptr, T);
  for (int w = 0; w < T / 32; ++w) pthread_barrier_init(&emu_wbar[w], nullptr, 32);
  std::vector<pthread_t> th(T);
  std::vector<Thr<L>> a(T);
  for (int t = 0; t < T; ++t) { a[t] = {&l, (unsigned)t}; pthread_create(&th[t], nullptr, run_thread<P, EX, Kf, Op>, &a[t]); }
  for (int t = 0; t < T; ++t) pthread_join(th[t], nullptr);
  for (int w = 0; w < T / 32; ++w) pthread_barrier_destroy(&emu_wbar[w]);
  pthread_barrier_destroy(&emu_bar);
}

static int fails, checks;
static void report(const char *what, I rows, I cols, bool ok, const char *why) {
  ++checks;
  if (!ok) { ++fails; printf("FAIL %s %dx%d: %s\n", what, rows, cols, why); }
}

/* f32 rows, sum in double, f32 stored: within 1e-6 of float64 relative to the running sum of |x| */
template <class P, bool EX> static void check_sum(I rows, I cols, std::mt19937_64 &rng) {
  std::vector<float> x((size_t)rows * cols), y1(x.size()), y2(x.size());
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (auto &v : x) v = u(rng);
  K<float, float> k1 = {x.data(), y1.data(), cols}, k2 = {x.data(), y2.data(), cols};
  launch<P, EX, gk_op_sum<double>>(k1, rows, cols, rng, 1);
  launch<P, EX, gk_op_sum<double>>(k2, rows, cols, rng, 1);
  char why[160] = "";
  bool ok = memcmp(y1.data(), y2.data(), y1.size() * 4) == 0;
  if (!ok) snprintf(why, sizeof why, "two block orders differ");
  for (I r = 0; r < rows && ok; ++r) {
    double s = 0, a = 0;
    for (I c = 0; c < cols; ++c) {
      const size_t i = (size_t)r * cols + c;
      const double pre = s;
      s += x[i]; a += std::fabs(x[i]);
      const double ref = EX ? pre : s;
      if (!(std::fabs(y1[i] - ref) <= 1e-6 * a + 1e-30)) {
        snprintf(why, sizeof why, "row %d col %d: got %.9g, expected %.9g", r, c, y1[i], ref);
        ok = false; break;
      }
    }
  }
  report(EX ? "exscan sum f32" : "scan sum f32", rows, cols, ok, why);
}
/* i64 rows, product in wrapping gk_u64 (i64 stored); i32 rows, max: exact */
template <class P, bool EX> static void check_int(I rows, I cols, std::mt19937_64 &rng) {
  const size_t n = (size_t)rows * cols;
  std::vector<long long> x(n), y(n);
  std::vector<int> xi(n), yi(n);
  std::uniform_int_distribution<int> u(-20, 20);
  for (size_t i = 0; i < n; ++i) { x[i] = u(rng) | 1; xi[i] = u(rng) * 1000 + u(rng); }
  K<long long, long long> kp = {x.data(), y.data(), cols};
  K<int, int> km = {xi.data(), yi.data(), cols};
  launch<P, EX, gk_op_prod<gk_u64>>(kp, rows, cols, rng, 1);
  launch<P, EX, gk_op_max<int>>(km, rows, cols, rng, 1);
  char why[160] = "";
  bool okp = true, okm = true;
  for (I r = 0; r < rows; ++r) {
    unsigned long long p = 1;
    int m = INT32_MIN;
    for (I c = 0; c < cols; ++c) {
      const size_t i = (size_t)r * cols + c;
      const unsigned long long pp = p; const int pm = m;
      p *= (unsigned long long)x[i]; m = std::max(m, xi[i]);
      if (okp && y[i] != (long long)(EX ? pp : p)) {
        snprintf(why, sizeof why, "prod row %d col %d: got %lld, expected %lld", r, c, y[i], (long long)(EX ? pp : p));
        okp = false;
      }
      if (okm && yi[i] != (EX ? pm : m)) {
        snprintf(why, sizeof why, "max row %d col %d: got %d, expected %d", r, c, yi[i], EX ? pm : m);
        okm = false;
      }
    }
  }
  report(EX ? "exscan prod i64 / max i32" : "scan prod i64 / max i32", rows, cols, okp && okm, why);
}

int main(int argc, char **argv) {
  std::mt19937_64 rng(argc > 1 ? strtoull(argv[1], 0, 10) : 1);
  typedef gk_scan_policy<64, 4, 1> Small;       /* tile 256; SLEEP 1: polls counted */
  typedef gk_scan_policy<256, 32, 1> Big;       /* the f32 default's tile, 8192 */
  typedef gk_scan_policy<128, 32, 1, 32, 1> Wide;   /* the 8-byte default's, 4096 (WIDE) */
  const int small[][2] = {{1, 1}, {3, 31}, {2, 33}, {4, 255}, {3, 256}, {5, 257}, {1, 513}, {3, 1000}, {2, 8193},
                          {1, 10001}};
  for (auto &s : small) {
    check_sum<Small, false>(s[0], s[1], rng); check_sum<Small, true>(s[0], s[1], rng);
    check_int<Small, false>(s[0], s[1], rng); check_int<Small, true>(s[0], s[1], rng);
  }
  std::vector<std::pair<int, int>> big = {{2, 8193}, {1, 16385}};
  if (argc > 2 && !strcmp(argv[2], "long")) big.insert(big.end(), {{2, 24575}, {1, 300001}, {2, 1000003}, {1, 1048577}});
  for (auto &s : big) {
    check_sum<Big, false>(s.first, s.second, rng); check_sum<Big, true>(s.first, s.second, rng);
    check_int<Wide, false>(s.first, s.second, rng); check_int<Wide, true>(s.first, s.second, rng);
  }
  printf("rowscan_emu: %d passed, %d failed\n", checks - fails, fails);
  return fails ? 1 : 0;
}
