/*
** tests/sort_emu.cpp -- kernels/gk_sort.cuh's onesweep passes (gk_sort_zero,
** gk_sort_hist, gk_sort_sweep) run on the host: a block is 256 threads
** (pthreads) with barriers for __syncthreads and per-warp barriers for the
** warp intrinsics; blocks run one after another (so a look-back always
** finds its predecessor's inclusive prefix).  Every case is compared with
** std::stable_sort of the same keys (an independent reference).  No GPU:
** this checks the algorithm and its indexing, not the hardware's memory
** model.  Build and run: make sort-emu (g++ -O1 -pthread).
*/
#include <pthread.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#define GK_COMMON_CUH
#define GK_SORT_HOST
typedef unsigned char gk_u8;
typedef unsigned int gk_u32;
typedef long long gk_i64;
typedef unsigned long long gk_u64;
#define GK_WARP 32
#define GK_FULL_MASK 0xffffffffu
#define GK_DEV inline
#define __device__
#define __shared__ static   /* one block runs at a time: its threads share the statics */

struct dim3 { unsigned x = 0, y = 1, z = 1; };
struct uint4 { unsigned x, y, z, w; };
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }

static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
struct blk_sync { pthread_barrier_t all, warp[32]; uint64_t slot[32][32]; };
static thread_local blk_sync *cur;

static inline void __syncthreads() { pthread_barrier_wait(&cur->all); }
static inline void __syncwarp() { pthread_barrier_wait(&cur->warp[threadIdx.x / 32]); }
template <class T> static inline T xwarp(T v, int src) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  uint64_t u = 0;
  memcpy(&u, &v, sizeof v);
  cur->slot[w][l] = u;
  pthread_barrier_wait(&cur->warp[w]);
  u = cur->slot[w][src];
  pthread_barrier_wait(&cur->warp[w]);
  T r;
  memcpy(&r, &u, sizeof r);
  return r;
}
static inline unsigned __ballot_sync(unsigned, bool p) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  cur->slot[w][l] = p;
  pthread_barrier_wait(&cur->warp[w]);
  unsigned m = 0;
  for (int i = 0; i < 32; i++) m |= cur->slot[w][i] ? 1u << i : 0u;
  pthread_barrier_wait(&cur->warp[w]);
  return m;
}
template <class T> static inline T __shfl_sync(unsigned, T v, int src) { return xwarp(v, src); }
template <class T> static inline T __shfl_up_sync(unsigned, T v, int d) {
  const int l = threadIdx.x % 32;
  return xwarp(v, l >= d ? l - d : l);
}
static inline unsigned __match_any_sync(unsigned, int v) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  cur->slot[w][l] = (uint64_t)(int64_t)v;
  pthread_barrier_wait(&cur->warp[w]);
  unsigned m = 0;
  for (int i = 0; i < 32; i++) m |= cur->slot[w][i] == cur->slot[w][l] ? 1u << i : 0u;
  pthread_barrier_wait(&cur->warp[w]);
  return m;
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
template <class T> static inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline void gk_sort_st(gk_u32 *p, gk_u32 v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline void gk_sort_st(gk_u64 *p, gk_u64 v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline gk_u32 gk_sort_ld(const gk_u32 *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline gk_u64 gk_sort_ld(const gk_u64 *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static unsigned char *emu_dyn;   /* the launch's dynamic shared memory */
#define GK_SORT_DYN unsigned char *gk_sort_dyn = emu_dyn
#define __align__(n)

#include "../kernels/gk_sort.cuh"

/* One launch: grid blocks of nt threads, one block at a time (the same nt
** threads run every block, a barrier between blocks). */
static void launch(unsigned grid, const std::function<void()> &fn, unsigned nt = 256) {
  gridDim.x = grid; blockDim.x = nt;
  blk_sync s;
  pthread_barrier_init(&s.all, NULL, nt);
  for (unsigned w = 0; w < nt / 32; w++) pthread_barrier_init(&s.warp[w], NULL, 32);
  struct arg { unsigned t, grid; blk_sync *s; const std::function<void()> *fn; } a[1024];
  pthread_t th[1024];
  for (unsigned t = 0; t < nt; t++) {
    a[t] = {t, grid, &s, &fn};
    pthread_create(&th[t], NULL, [](void *p) -> void * {
      arg *q = (arg *)p;
      threadIdx.x = q->t; cur = q->s;
      for (unsigned b = 0; b < q->grid; b++) {
        blockIdx.x = b;
        (*q->fn)();
        pthread_barrier_wait(&q->s->all);
      }
      return NULL;
    }, &a[t]);
  }
  for (unsigned t = 0; t < nt; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&s.all);
  for (unsigned w = 0; w < nt / 32; w++) pthread_barrier_destroy(&s.warp[w]);
}

template <class T> struct Fn {
  typedef T X;
  const T *in;
  T *out;
  gk_i64 *oix;
  bool arg;
  T load(long long i) const { return in[i]; }
  void put(long long o, long long src, long long j) const { if (arg) oix[o] = j; else out[o] = in[src]; }
  void putv(long long o, T v) const { out[o] = v; }
};

template <class F, class I, class ST, bool DESC, bool COLS, bool IDX, int KP, int NP, int PASS, bool PACK, bool EARLY, int IT>
struct passes {
  static void run(const F &f, I n, I L, I nseg, I m, I nb, char *tmp) {
    launch((unsigned)nb, [&] { gk_sort_sweep<F, I, ST, DESC, COLS, IDX, PASS, KP, NP, IT, PACK, EARLY, 4>(f, n, L, nseg, m, nb, tmp); });
    passes<F, I, ST, DESC, COLS, IDX, KP, NP, PASS + 1, PACK, EARLY, IT>::run(f, n, L, nseg, m, nb, tmp);
  }
};
template <class F, class I, class ST, bool DESC, bool COLS, bool IDX, int KP, int NP, bool PACK, bool EARLY, int IT>
struct passes<F, I, ST, DESC, COLS, IDX, KP, NP, NP, PACK, EARLY, IT> {
  static void run(const F &, I, I, I, I, I, char *) {}
};

static int fails, cases;

/* Sort n elements as nseg segments of L (rows or columns), outputs m a segment. */
template <class X, bool DESC, bool COLS>
static void check(const char *name, const std::vector<X> &x, long long L, long long nseg, long long m, bool arg,
                  const std::vector<X> &out, const std::vector<gk_i64> &oix, long long n, long long nb);

/* I: the index type (int below 2^31 elements, as the lowering picks); ST the tile state's word;
** PACK: (key, index) in one 8-byte word (4-byte keys and index); EARLY: stage before the look-back;
** HU: the histogram's loads in flight; IT: a thread's items in a pass. */
template <class X, bool DESC, bool COLS, bool IDX, int NP, class I = int, class ST = gk_u32, bool PACK = false, bool EARLY = false,
          int HU = 4, int IT = GK_SORT_OITEMS, int AGGP = 0>
static void one(const char *name, const std::vector<X> &x, long long L, long long nseg, long long m, bool arg) {
  typedef typename gk_sort_kt<X>::T KT;
  const int KP = sizeof(KT) == 8 ? 8 : gk_sort_kt<X>::BITS == 8 ? 1 : 4;
  const long long n = (long long)x.size(), nb = (n + GK_SORT_THREADS * IT - 1) / (GK_SORT_THREADS * IT);
  const long long zb = NP * nb * 256 * (long long)sizeof(ST) + NP * 256 * (long long)sizeof(I) + 64;
  const long long ksz = PACK ? 8 : (long long)sizeof(KT);
  const long long tb = zb + 2 * ((n * ksz + 15) / 16 * 16) + (IDX && !PACK ? 2 * ((n * (long long)sizeof(I) + 15) / 16 * 16) : 0);
  std::vector<char> tmp(tb + 64, (char)0x5a);   /* garbage: _z must zero what needs it */
  std::vector<X> out(m * nseg, X(0));
  std::vector<gk_i64> oix(m * nseg, -1);
  Fn<X> f{x.data(), out.data(), oix.data(), arg};
  char *t = tmp.data();
  launch(4, [&] { gk_sort_zero<KT, I, ST>((I)n, (I)nb, NP, t); });
  launch(3, [&] { gk_sort_hist<Fn<X>, I, ST, DESC, COLS, KP, NP, HU, AGGP>(f, (I)n, (I)L, (I)nseg, (I)nb, t); });
  passes<Fn<X>, I, ST, DESC, COLS, IDX, KP, NP, 0, PACK, EARLY, IT>::run(f, (I)n, (I)L, (I)nseg, (I)m, (I)nb, t);
  check<X, DESC, COLS>(name, x, L, nseg, m, arg, out, oix, n, nb);
}

/* Compare out / oix with a stable sort of each segment's keys (std::stable_sort). */
template <class X, bool DESC, bool COLS>
static void check(const char *name, const std::vector<X> &x, long long L, long long nseg, long long m, bool arg,
                  const std::vector<X> &out, const std::vector<gk_i64> &oix, long long n, long long nb) {
  typedef typename gk_sort_kt<X>::T KT;
  /* reference: per segment, stable sort of positions by key */
  int bad = 0;
  for (long long s = 0; s < nseg && !bad; s++) {
    std::vector<long long> pos(L);
    for (long long j = 0; j < L; j++) pos[j] = j;
    auto in = [&](long long j) { return COLS ? j * nseg + s : s * L + j; };
    auto key = [&](long long j) {
      KT k = gk_sort_key(x[in(j)]);
      if (DESC) { const KT all = gk_sort_kt<X>::BITS >= 8 * (int)sizeof(KT) ? (KT)~(KT)0 : (KT)(((KT)1 << gk_sort_kt<X>::BITS) - 1); k = ~k & all; }
      return k;
    };
    std::stable_sort(pos.begin(), pos.end(), [&](long long a, long long b) { return key(a) < key(b); });
    for (long long r = 0; r < m && !bad; r++) {
      const long long o = COLS ? r * nseg + s : s * m + r;
      if (arg ? oix[o] != pos[r] : memcmp(&out[o], &x[in(pos[r])], sizeof(X)) != 0) {
        printf("FAIL %s: segment %lld rank %lld: got %s %lld, expected index %lld\n", name, s, r, arg ? "index" : "value",
               arg ? oix[o] : -1LL, pos[r]);
        bad = 1;
      }
    }
  }
  cases++;
  fails += bad;
  if (!bad) printf("ok %s (n %lld, %lld tiles/blocks)\n", name, n, nb);
}


/* gk_sort_lookback on published states (the passes above run one block at a
** time, so their look-backs always stop at the tile before): random
** aggregates and inclusive prefixes over nb tiles x 256 digits, every tile's
** exclusive prefix against a plain walk. */
template <class ST, int LB>
static void lookback(const char *name, std::mt19937_64 &g, long long nb) {
  const int SH = 8 * (int)sizeof(ST) - 2;
  std::vector<ST> st(nb * 256);
  for (long long j = 0; j < nb; j++)
    for (int d = 0; d < 256; d++) st[j * 256 + d] = ((j == 0 || g() % 5 == 0 ? (ST)2 : (ST)1) << SH) | (ST)(g() % 100000);
  int bad = 0;
  for (long long blk = 1; blk < nb && !bad; blk++)
    for (int d = 0; d < 256 && !bad; d++) {
      long long want = 0;
      for (long long j = blk - 1;; j--) {
        const ST v = st[j * 256 + d];
        want += (long long)(v & (((ST)1 << SH) - 1));
        if (v >> SH == 2) break;
      }
      const long long got = gk_sort_lookback<long long, ST, LB>(st.data(), blk, d);
      if (got != want) { printf("FAIL %s: tile %lld digit %d: %lld, expected %lld\n", name, blk, d, got, want); bad = 1; }
    }
  cases++;
  fails += bad;
  if (!bad) printf("ok %s (%lld tiles)\n", name, nb);
}

/* gk_sort_big: one block of T threads x 16 items a segment (grid 2: the loop over segments too). */
template <class X, bool DESC, bool COLS, int T, bool KO = false>
static void big(const char *name, const std::vector<X> &x, long long L, long long nseg, long long m, bool arg) {
  typedef typename gk_sort_kt<X>::T KT;
  const long long n = (long long)x.size();
  std::vector<unsigned char> dyn(T * 16 * sizeof(KT) + (KO ? 0 : T * 16 * 4) + 257 * (T / 32) * 4, 0x5a);
  emu_dyn = dyn.data();
  std::vector<X> out(m * nseg, X(0));
  std::vector<gk_i64> oix(m * nseg, -1);
  Fn<X> f{x.data(), out.data(), oix.data(), arg};
  launch(nseg < 2 ? 1 : 2, [&] { gk_sort_big<Fn<X>, int, DESC, COLS, T, 16, KO>(f, (int)L, (int)nseg, (int)m); }, T);
  check<X, DESC, COLS>(name, x, L, nseg, m, arg, out, oix, n, nseg);
}

int main(int argc, char **argv) {
  std::mt19937_64 g(argc > 1 ? atoi(argv[1]) : 7);
  const long long N = argc > 2 ? atoll(argv[2]) : 20011;
  std::vector<float> xf(N);
  for (auto &v : xf) {
    const double u = (double)(g() % 1000000) / 1e6;
    v = u < 0.02 ? NAN : u < 0.03 ? -0.0f : u < 0.04 ? 0.0f : u < 0.05 ? INFINITY : u < 0.2 ? 1.5f : (float)((u - 0.5) * 1e3);
  }
  std::vector<double> xd(xf.begin(), xf.end());
  std::vector<int> xi(N);
  for (auto &v : xi) v = g() % 4 ? (int)g() : (int)(g() % 7) - 3;
  std::vector<gk_i64> xl(N);
  for (auto &v : xl) v = g() % 4 ? (gk_i64)g() : (gk_i64)(g() % 7) - 3;
  std::vector<gk_u8> xb(N);
  for (auto &v : xb) v = (gk_u8)(g() % 3 == 0 ? 0 : g() % 5);   /* nonzero bytes besides 1 */
  const long long R = 3, C = N / 3;   /* 3 segments: 1 byte of segment number */
  std::vector<float> xr(xf.begin(), xf.begin() + R * C);
  one<float, false, false, false, 4, int, gk_u32, false, false, 1>("sort f32 keys-only (histogram 1 load)", xf, N, 1, N, false);
  one<float, false, false, true, 4, int, gk_u32, true, true>("argsort f32 packed early", xf, N, 1, N, true);
  /* the lowering's defaults: packed pairs 8 items a thread, keys only 16, both early, 1 histogram load */
  one<float, false, false, true, 4, int, gk_u32, true, true, 1, 12>("argsort f32 packed early 12 items", xf, N, 1, N, true);
  one<int, true, false, true, 4, int, gk_u32, true, true, 1, 8>("argtopk i32 packed early 8 items", xi, N, 1, N / 2, true);
  one<float, false, true, true, 5, int, gk_u32, true, true, 1, 8>("argsort cols f32 packed early 8 items", xr, C, R, C, true);
  one<float, false, false, false, 4, int, gk_u32, false, true, 1>("sort f32 keys-only early", xf, N, 1, N, false);
  one<float, false, false, true, 4, int, gk_u32, true, true, 1, 8, 2>("argsort f32 packed, histogram top 2 bytes matched", xf, N,
                                                                       1, N, true);
  one<double, false, false, false, 8, int, gk_u32, false, true, 4, 16, 8>("sort f64, histogram all bytes matched (4 loads)", xd, N,
                                                                          1, N, false);
  one<float, false, false, true, 5, int, gk_u32, true, true, 1, 8, 1>("argsort rows f32 packed, histogram top byte matched", xr,
                                                                      C, R, C, true);
  one<double, false, false, true, 8, int, gk_u32, false, true, 1>("argsort f64 early", xd, N, 1, N, true);
  one<float, false, false, true, 4, int, gk_u32, false, true>("argsort f32 early", xf, N, 1, N, true);
  one<float, false, false, true, 4>("sort f32 pairs", xf, N, 1, N, false);
  one<float, false, false, false, 4, long long, gk_u64>("sort f32 keys-only (i64 index, u64 states)", xf, N, 1, N, false);
  one<float, false, false, true, 4, long long, gk_u64>("argsort f32 (i64 index, u64 states)", xf, N, 1, N, true);
  one<float, false, false, true, 4>("argsort f32", xf, N, 1, N, true);
  one<float, false, false, true, 4, int, gk_u32, true>("argsort f32 packed", xf, N, 1, N, true);
  one<float, true, false, true, 4, int, gk_u32, true>("argtopk f32 packed", xf, N, 1, N / 3, true);
  one<int, false, false, true, 4, int, gk_u32, true>("argsort i32 packed", xi, N, 1, N, true);
  one<gk_u8, true, false, true, 1, int, gk_u32, true>("argtopk bool packed", xb, N, 1, N, true);
  one<float, true, false, false, 4>("topk f32 values", xf, N, 1, N / 2 + 1, false);
  one<float, true, false, true, 4>("argtopk f32", xf, N, 1, N / 3, true);
  one<double, false, false, false, 8>("sort f64 keys-only", xd, N, 1, N, false);
  one<double, false, false, true, 8>("argsort f64", xd, N, 1, N, true);
  one<int, false, false, false, 4>("sort i32 keys-only", xi, N, 1, N, false);
  one<gk_i64, false, false, true, 8>("argsort i64", xl, N, 1, N, true);
  one<gk_i64, true, false, false, 8>("topk i64 values", xl, N, 1, 5000, false);
  one<gk_u8, false, false, false, 1>("sort bool keys-only", xb, N, 1, N, false);
  one<gk_u8, true, false, true, 1>("argtopk bool", xb, N, 1, N, true);
  lookback<gk_u32, 1>("look-back 1 state at a time", g, 300);
  lookback<gk_u32, 4>("look-back 4 states at a time", g, 300);
  lookback<gk_u64, 3>("look-back 3 states at a time (u64 states)", g, 301);
  lookback<gk_u32, 8>("look-back 8 states at a time", g, 37);
  one<float, false, false, true, 5>("sort rows f32", xr, C, R, C, false);
  one<float, false, true, true, 5>("argsort cols f32", xr, C, R, C, true);
  one<float, false, false, true, 5, int, gk_u32, true>("sort rows f32 packed", xr, C, R, C, false);
  one<float, false, true, true, 5, int, gk_u32, true>("argsort cols f32 packed", xr, C, R, C, true);
  one<float, false, true, true, 5, int, gk_u32, true, true>("argsort cols f32 packed early", xr, C, R, C, true);
  one<int, true, false, true, 5>("topk rows i32", std::vector<int>(xi.begin(), xi.begin() + R * C), C, R, 2100, false);
  if (argc <= 3) {   /* gk_sort_big: rows of 8192 and of 3001 (256 threads), columns, topk, f64, bool */
    std::vector<float> x8(xf.begin(), xf.begin() + std::min<long long>(N, 3 * 8192));
    while (x8.size() < 3 * 8192) x8.push_back(xf[x8.size() % N]);
    big<float, false, false, 512>("big sort rows 3 x 8192 f32", x8, 8192, 3, 8192, false);
    big<float, false, true, 512>("big argsort cols 8192 x 3 f32", x8, 8192, 3, 8192, true);
    big<float, true, false, 512>("big topk rows 3 x 8192 f32 (m 5000)", x8, 8192, 3, 5000, false);
    std::vector<double> d8(x8.begin(), x8.end());
    big<double, false, false, 512>("big argsort rows 3 x 8192 f64", d8, 8192, 3, 8192, true);
    std::vector<int> i3(3 * 3001);   /* 3 x 3001 may be more than N: wrap around */
    for (size_t j = 0; j < i3.size(); j++) i3[j] = xi[j % N];
    big<int, false, false, 256>("big sort rows 3 x 3001 i32", i3, 3001, 3, 3001, false);
    std::vector<gk_u8> b3(3 * 3001);
    for (size_t j = 0; j < b3.size(); j++) b3[j] = xb[j % N];
    big<gk_u8, false, false, 256>("big argsort rows 3 x 3001 bool", b3, 3001, 3, 3001, true);
    /* KO: the values' bits alone (sort, topk) */
    big<float, false, false, 512, true>("big sort rows 3 x 8192 f32 values", x8, 8192, 3, 8192, false);
    big<float, false, true, 512, true>("big sort cols 8192 x 3 f32 values", x8, 8192, 3, 8192, false);
    big<double, true, false, 512, true>("big topk rows 3 x 8192 f64 values (m 8192)", d8, 8192, 3, 8192, false);
    big<int, false, false, 256, true>("big sort rows 3 x 3001 i32 values (padding)", i3, 3001, 3, 3001, false);
    big<gk_u8, true, false, 256, true>("big topk rows 3 x 3001 bool values (padding)", b3, 3001, 3, 2000, false);
    std::vector<float> f5(3 * 5003);
    for (size_t j = 0; j < f5.size(); j++) f5[j] = xf[j % N];
    big<float, true, false, 512, true>("big topk rows 3 x 5003 f32 values (padding, NaN)", f5, 5003, 3, 5003, false);
  }
  printf("%d passed, %d failed\n", cases - fails, fails);
  return fails != 0;
}
