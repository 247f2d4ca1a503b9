/*
** test_kernels.cu -- correctness of every kernels/ primitive against float64
** CPU references.  Fresh random data per case (never zeros), outputs poisoned
** with NaN bytes before each launch, reductions/scans run twice and compared
** bit for bit.  Prints "N passed, M failed"; exit status 1 if any failed.
**
** Build: nvcc -arch=sm_90 -O3 -std=c++17 -Ikernels tests/kernels/test_kernels.cu
*/
#include <cstdio>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <type_traits>
#include <string>
#include "gk_reduce.cuh"
#include "gk_scan.cuh"
#include "gk_rows.cuh"
#include "gk_cols.cuh"
#include "gk_hist.cuh"
#include "gk_select.cuh"
#include "gk_transpose.cuh"
extern "C" {
#include "launch.h"
}

static int g_pass = 0, g_fail = 0, g_sms = 132;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)
#define LAUNCHED() do { CK(cudaGetLastError()); CK(cudaDeviceSynchronize()); } while (0)
static void result(bool ok, const std::string &name) {
  if (ok) ++g_pass; else { ++g_fail; printf("FAIL %s\n", name.c_str()); }
}
static std::string fmt(const char *f, ...) {
  char b[512]; va_list a; va_start(a, f); vsnprintf(b, sizeof b, f, a); va_end(a); return b;
}

/* ---- random ---- */
static unsigned long long g_rng = 0x9E3779B97F4A7C15ULL;
static double urand() { g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17; return (g_rng >> 11) * (1.0 / 9007199254740992.0); }
static std::vector<float> randf(size_t n, float lo = 0.f, float hi = 1.f) {
  std::vector<float> v(n); for (auto &x : v) { x = (float)(lo + (hi - lo) * urand()); if (x == 0.f) x = 0.5f; } return v;
}
template <class T> struct DBuf {
  T *p = nullptr; size_t n = 0;
  DBuf(size_t n_) : n(n_) { CK(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T))); }
  DBuf(const std::vector<T> &h) : DBuf(h.size()) { put(h); }
  ~DBuf() { cudaFree(p); }
  void put(const std::vector<T> &h) { CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> get() const { std::vector<T> h(n); CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost)); return h; }
  void poison() { CK(cudaMemset(p, 0xff, std::max<size_t>(n, 1) * sizeof(T))); }
  void zero() { CK(cudaMemset(p, 0, std::max<size_t>(n, 1) * sizeof(T))); }
};
static bool close_rel(double got, double ref, double tol) {
  if (std::isnan(ref)) return std::isnan(got);
  return std::fabs(got - ref) <= tol * std::max(1e-30, std::fabs(ref)) || got == ref;
}

/* ---- functors ---- */
template <int VEC> struct LoadF { typedef float X; const float *x;
  template <int N> __device__ void load(float *d, gk_i64 i) const { gk_ld<N>(d, x + i); } };
struct LoadXY1 { typedef float X; const float *x, *y;   /* x*y+1 */
  template <int N> __device__ void load(float *d, gk_i64 i) const {
    float a[N], b[N]; gk_ld<N>(a, x + i); gk_ld<N>(b, y + i);
#pragma unroll
    for (int k = 0; k < N; ++k) d[k] = a[k] * b[k] + 1.f; } };
struct LoadD { typedef double X; const double *x;
  template <int N> __device__ void load(double *d, gk_i64 i) const { gk_ld<N>(d, x + i); } };
struct LoadI32 { typedef int X; const int *x;
  template <int N> __device__ void load(int *d, gk_i64 i) const { gk_ld<N>(d, x + i); } };
template <class A> struct EpiStore { A *out; __device__ void operator()(const A &r) const { *out = r; } };
struct EpiWelford { float *out; __device__ void operator()(const gk_welford<float> &r) const { out[0] = r.mean; out[1] = r.m2 / r.n; } };
/* sqrt(sum)/n epilogue on a sum of squares */
struct OpSumSq : gk_op_sum<float> { template <class X, class I> __device__ float lift(X x, I) const { return x * x; } };
struct EpiNorm { float *out; gk_i64 n; __device__ void operator()(float r) const { *out = sqrtf(r) / (float)n; } };

template <class P, class L, class Op, class E>
__global__ void __launch_bounds__(512) k_reduce(gk_i64 n, L l, Op op, E e, typename Op::A *part, gk_u32 *ctr) {
  gk_grid_reduce<P>(n, l, op, e, part, ctr);
}

/* Runs one reduction twice; returns both results (host copies). */
template <class P, class L, class Op, class E, class A>
static void run_reduce(gk_i64 n, L l, Op op, E e, A *dout, size_t outbytes, std::vector<char> &r1, std::vector<char> &r2) {
  gk_launch Ln = gk_reduce_launch(n, P::VEC == 4, g_sms, sizeof(typename Op::A));
  DBuf<char> tmp(Ln.temp_bytes); tmp.zero();
  typename Op::A *part = (typename Op::A *)tmp.p;
  gk_u32 *ctr = (gk_u32 *)(tmp.p + gk_reduce_counter_offset(&Ln, sizeof(typename Op::A)));
  for (int rep = 0; rep < 2; ++rep) {
    CK(cudaMemset(dout, 0xff, outbytes));
    k_reduce<P><<<(unsigned)Ln.grid[0], P::THREADS>>>(n, l, op, e, part, ctr);
    LAUNCHED();
    std::vector<char> &r = rep ? r2 : r1; r.resize(outbytes);
    CK(cudaMemcpy(r.data(), dout, outbytes, cudaMemcpyDeviceToHost));
  }
}

static const gk_i64 SIZES[] = {1, 31, 33, 1000, 1000003, (1 << 20) + 1};

static void test_reduce() {
  for (gk_i64 n : SIZES) {
    std::vector<float> hx = randf(n), hy = randf(n, -1.f, 1.f);
    DBuf<float> x(hx), y(hy);
    DBuf<char> out(64);
    std::vector<char> a, b;
    double s = 0, sxy = 0, mx = -INFINITY, mn = INFINITY, ss = 0; gk_i64 amx = 0;
    for (gk_i64 i = 0; i < n; ++i) {
      s += hx[i]; sxy += (double)(float)(hx[i] * hy[i] + 1.f); ss += (double)hx[i] * hx[i];
      if (hx[i] > mx) { mx = hx[i]; amx = i; } mn = std::min(mn, (double)hx[i]);
    }
    /* sum, vec4 and scalar paths */
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_sum<float>(), EpiStore<float>{(float *)out.p}, out.p, 4, a, b);
    result(close_rel(*(float *)a.data(), s, 1e-6) && a == b, fmt("reduce sum v4 n=%lld got %.9g ref %.9g", n, *(float *)a.data(), s));
    run_reduce<gk_reduce_policy_v1>(n, LoadF<1>{x.p}, gk_op_sum<float>(), EpiStore<float>{(float *)out.p}, out.p, 4, a, b);
    result(close_rel(*(float *)a.data(), s, 1e-6) && a == b, fmt("reduce sum v1 n=%lld", n));
    run_reduce<gk_reduce_policy_v4>(n, LoadXY1{x.p, y.p}, gk_op_sum<float>(), EpiStore<float>{(float *)out.p}, out.p, 4, a, b);
    result(close_rel(*(float *)a.data(), sxy, 1e-5) && a == b, fmt("reduce sum(x*y+1) n=%lld got %.9g ref %.9g", n, *(float *)a.data(), sxy));
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_max<float>(), EpiStore<float>{(float *)out.p}, out.p, 4, a, b);
    result(*(float *)a.data() == (float)mx && a == b, fmt("reduce max n=%lld", n));
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_min<float>(), EpiStore<float>{(float *)out.p}, out.p, 4, a, b);
    result(*(float *)a.data() == (float)mn && a == b, fmt("reduce min n=%lld", n));
    typedef gk_op_argmax<float> AM;
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, AM(), EpiStore<AM::A>{(AM::A *)out.p}, out.p, 16, a, b);
    result(((AM::A *)a.data())->i == amx && a == b, fmt("reduce argmax n=%lld got %lld ref %lld", n, ((AM::A *)a.data())->i, amx));
    /* min, max, sum in one pass */
    typedef gk_op_pair<gk_op_min<float>, gk_op_pair<gk_op_max<float>, gk_op_sum<float>>> MMS;
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, MMS(), EpiStore<MMS::A>{(MMS::A *)out.p}, out.p, sizeof(MMS::A), a, b);
    { MMS::A r = *(MMS::A *)a.data();
      result(r.a == (float)mn && r.b.a == (float)mx && close_rel(r.b.b, s, 1e-6) && a == b, fmt("reduce min+max+sum n=%lld", n)); }
    /* Welford mean / var */
    { double mean = s / n, var = 0; for (gk_i64 i = 0; i < n; ++i) var += (hx[i] - mean) * (hx[i] - mean); var /= n;
      run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_welford<float>(), EpiWelford{(float *)out.p}, out.p, 8, a, b);
      float *r = (float *)a.data();
      result(close_rel(r[0], mean, 1e-5) && (n == 1 ? r[1] == 0 : close_rel(r[1], var, 1e-4)) && a == b,
             fmt("reduce welford n=%lld mean %g/%g var %g/%g", n, r[0], mean, r[1], var)); }
    /* epilogue sqrt(sum x^2)/n */
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, OpSumSq(), EpiNorm{(float *)out.p, n}, out.p, 4, a, b);
    result(close_rel(*(float *)a.data(), std::sqrt(ss) / n, 1e-5) && a == b, fmt("reduce norm epilogue n=%lld", n));
    /* online logsumexp: s = sum(exp(x - max)) in one pass */
    { std::vector<float> hz = randf(n, -20.f, 20.f); DBuf<float> z(hz);
      double m = -INFINITY; for (float v : hz) m = std::max(m, (double)v);
      double se = 0; for (float v : hz) se += std::exp(v - m);
      typedef gk_op_logsumexp<float> LSE;
      run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{z.p}, LSE(), EpiStore<LSE::A>{(LSE::A *)out.p}, out.p, 8, a, b);
      LSE::A r = *(LSE::A *)a.data();
      result(r.m == (float)m && close_rel(r.s, se, 2e-5) && a == b, fmt("reduce logsumexp n=%lld s %g/%g", n, r.s, se)); }
    /* int32 -> int64 sum, exact */
    { std::vector<int> hi(n); long long si = 0; for (auto &v : hi) { v = (int)(urand() * 2e9) - 1000000000; si += v; }
      DBuf<int> xi(hi);
      run_reduce<gk_reduce_policy_v4>(n, LoadI32{xi.p}, gk_op_sum<gk_i64>(), EpiStore<gk_i64>{(gk_i64 *)out.p}, out.p, 8, a, b);
      result(*(gk_i64 *)a.data() == si, fmt("reduce i32->i64 sum n=%lld", n)); }
  }
  /* NaN: sum/max propagate, argmax returns the first NaN */
  { gk_i64 n = 100000; std::vector<float> hx = randf(n); hx[777] = NAN; hx[50000] = NAN; DBuf<float> x(hx); DBuf<char> out(64);
    std::vector<char> a, b;
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_sum<float>(), EpiStore<float>{(float *)out.p}, out.p, 4, a, b);
    result(std::isnan(*(float *)a.data()), "reduce sum NaN");
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_max<float>(), EpiStore<float>{(float *)out.p}, out.p, 4, a, b);
    result(std::isnan(*(float *)a.data()), "reduce max NaN");
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_argmax<float>(), EpiStore<gk_vi<float>>{(gk_vi<float> *)out.p}, out.p, 16, a, b);
    result(((gk_vi<float> *)a.data())->i == 777, "reduce argmax first NaN");
    /* ties: first max wins */
    hx = randf(n); hx[300] = 2.f; hx[40000] = 2.f; hx[99999] = 2.f; x.put(hx);
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_argmax<float>(), EpiStore<gk_vi<float>>{(gk_vi<float> *)out.p}, out.p, 16, a, b);
    result(((gk_vi<float> *)a.data())->i == 300, "reduce argmax first of ties");
    run_reduce<gk_reduce_policy_v4>(n, LoadF<4>{x.p}, gk_op_argmin<float>(), EpiStore<gk_vi<float>>{(gk_vi<float> *)out.p}, out.p, 16, a, b);
    gk_i64 am = 0; for (gk_i64 i = 1; i < n; ++i) if (hx[i] < hx[am]) am = i;
    result(((gk_vi<float> *)a.data())->i == am, "reduce argmin");
  }
}

/* ---- scan ---- */
struct Load2x { typedef float X; const float *x;   /* prologue: 2*x */
  template <int N> __device__ void load(float *d, gk_i64 i) const { gk_ld<N>(d, x + i);
#pragma unroll
    for (int k = 0; k < N; ++k) d[k] *= 2.f; } };
template <class A> struct StoreA { A *o; template <int N> __device__ void store(gk_i64 i, const A *v) const { gk_st<N>(o + i, v); } };
/* what compiler/lower.c generates for a float scan: f32 in, double accumulator, f32 out */
struct StoreD2F { float *o; template <int N, class I> __device__ void store(I i, const double *v) const { o[i] = (float)v[0]; } };
template <class P, bool EX, class Idx, class L, class Op, class S>
__global__ void __launch_bounds__(P::THREADS) k_scan(Idx n, L l, Op op, S s, void *ts, gk_u32 ep) { gk_scan<P, EX>(n, l, op, s, ts, ep); }
/* forces the multi-window group look-back (one group per window) */
typedef gk_scan_policy<GK_SCAN_THREADS, GK_SCAN_TILE / GK_SCAN_THREADS, 0, 1> scan_policy_gw1;

static unsigned g_epoch = 0;
template <bool EX, class P = gk_scan_policy_default, class Idx = gk_i64, class S0 = void, class L, class Op, class A>
static void run_scan(gk_i64 n, L l, Op op, DBuf<A> &out, DBuf<char> &ts, std::vector<A> &r1, std::vector<A> &r2) {
  typedef typename std::conditional<std::is_void<S0>::value, StoreA<A>, S0>::type S;
  gk_launch Ln = gk_scan_launch(n, sizeof(typename Op::A));
  if (Ln.temp_bytes > (int64_t)ts.n) { fprintf(stderr, "tile state too small\n"); exit(2); }
  for (int rep = 0; rep < 2; ++rep) {
    out.poison();
    g_epoch = gk_next_epoch(g_epoch);
    k_scan<P, EX><<<(unsigned)Ln.grid[0], GK_SCAN_THREADS>>>((Idx)n, l, op, S{out.p}, ts.p, g_epoch);
    LAUNCHED();
    (rep ? r2 : r1) = out.get();
  }
}
/* sum(2x) in f32 or (as generated) f64 accumulators; inclusive and exclusive */
template <class P, class Idx, bool DBL>
static void check_scan_sum(gk_i64 n, const std::vector<float> &hx, DBuf<float> &x, DBuf<float> &out, DBuf<char> &ts, const char *tag) {
  std::vector<float> a, b;
  for (int ex = 0; ex < 2; ++ex) {
    if (DBL) { if (ex) run_scan<true, P, Idx, StoreD2F>(n, Load2x{x.p}, gk_op_sum<double>(), out, ts, a, b);
               else run_scan<false, P, Idx, StoreD2F>(n, Load2x{x.p}, gk_op_sum<double>(), out, ts, a, b); }
    else { if (ex) run_scan<true, P, Idx>(n, Load2x{x.p}, gk_op_sum<float>(), out, ts, a, b);
           else run_scan<false, P, Idx>(n, Load2x{x.p}, gk_op_sum<float>(), out, ts, a, b); }
    double c = 0; bool ok = a == b; gk_i64 bad = -1;
    const double tol = DBL ? 1e-7 : 1e-4;
    for (gk_i64 i = 0; i < n; ++i) {
      double inc = c + 2.0 * hx[i];
      double ref = ex ? c : inc;
      if (!(std::fabs(a[i] - ref) <= tol * std::max(1.0, ref))) { ok = false; if (bad < 0) bad = i; }
      c = inc;
    }
    result(ok, fmt("scan %s %s sum(2x) n=%lld first bad %lld%s", ex ? "exclusive" : "inclusive", tag, n, bad,
                   a == b ? "" : " (runs differ)"));
  }
}
static void test_scan() {
  std::vector<gk_i64> sizes(SIZES, SIZES + sizeof SIZES / sizeof SIZES[0]);
  sizes.push_back((1 << 24) + 5);                     /* > 32 look-back groups */
  sizes.push_back(0);
  for (gk_i64 n : sizes) {
    std::vector<float> hx = randf(n); DBuf<float> x(hx); DBuf<float> out(n);
    DBuf<char> ts(gk_scan_launch(n, 16).temp_bytes); ts.zero();
    std::vector<float> a, b;
    check_scan_sum<gk_scan_policy_default, gk_i64, false>(n, hx, x, out, ts, "f32");
    check_scan_sum<gk_scan_policy_default, gk_i64, true>(n, hx, x, out, ts, "f64-acc");
    check_scan_sum<gk_scan_policy_default, int, true>(n, hx, x, out, ts, "f64-acc int-idx");
    check_scan_sum<scan_policy_gw1, gk_i64, false>(n, hx, x, out, ts, "f32 gw1");
    /* running max / min, exact */
    { std::vector<float> hz = randf(n, -1.f, 1.f); x.put(hz);
      run_scan<false>(n, LoadF<1>{x.p}, gk_op_max<float>(), out, ts, a, b);
      float m = -INFINITY; bool ok = a == b;
      for (gk_i64 i = 0; i < n; ++i) { m = std::max(m, hz[i]); ok &= a[i] == m; }
      result(ok, fmt("scan max n=%lld", n));
      run_scan<true, gk_scan_policy_default, int>(n, LoadF<1>{x.p}, gk_op_min<float>(), out, ts, a, b);
      m = INFINITY; ok = a == b;
      for (gk_i64 i = 0; i < n; ++i) { ok &= a[i] == m; m = std::min(m, hz[i]); }
      result(ok, fmt("scan exclusive min int-idx n=%lld", n));
      x.put(hx); }
    /* int32 -> int64 exclusive sum, exact; u64 sum, i64 max, int prod (wraps), double prod */
    { std::vector<int> hi(n); for (auto &v : hi) v = (int)(urand() * 2000) - 1000; DBuf<int> xi(hi); DBuf<gk_i64> oi(n);
      std::vector<gk_i64> c, d;
      run_scan<true>(n, LoadI32{xi.p}, gk_op_sum<gk_i64>(), oi, ts, c, d);
      gk_i64 s = 0; bool ok = c == d;
      for (gk_i64 i = 0; i < n; ++i) { ok &= c[i] == s; s += hi[i]; }
      result(ok, fmt("scan exclusive i64 n=%lld", n));
      run_scan<false>(n, LoadI32{xi.p}, gk_op_max<gk_i64>(), oi, ts, c, d);
      gk_i64 mx = gk_i64(-1) << 62; ok = c == d;
      for (gk_i64 i = 0; i < n; ++i) { mx = std::max(mx, (gk_i64)hi[i]); ok &= c[i] == mx; }
      result(ok, fmt("scan max i64 n=%lld", n));
      DBuf<gk_u64> ou(n); std::vector<gk_u64> e, f;
      run_scan<false, gk_scan_policy_default, int>(n, LoadI32{xi.p}, gk_op_sum<gk_u64>(), ou, ts, e, f);
      gk_u64 su = 0; ok = e == f;
      for (gk_i64 i = 0; i < n; ++i) { su += (gk_u64)(gk_i64)hi[i]; ok &= e[i] == su; }
      result(ok, fmt("scan sum u64 n=%lld", n));
      for (auto &v : hi) v = urand() < 0.5 ? 1 : 3;   /* odd: the wrapping product never reaches 0 */
      xi.put(hi);
      DBuf<int> o32(n); std::vector<int> g, h;
      run_scan<false>(n, LoadI32{xi.p}, gk_op_prod<int>(), o32, ts, g, h);
      unsigned pu = 1; ok = g == h;
      for (gk_i64 i = 0; i < n; ++i) { pu *= (unsigned)hi[i]; ok &= g[i] == (int)pu; }
      result(ok, fmt("scan prod int n=%lld", n)); }
    /* f64 input (8-byte X goes through shared memory in rounds) */
    { std::vector<double> hd(n); for (auto &v : hd) v = urand() - 0.25; DBuf<double> xd(hd), od(n);
      std::vector<double> c, d;
      run_scan<false>(n, LoadD{xd.p}, gk_op_sum<double>(), od, ts, c, d);
      double s = 0; bool ok = c == d;
      for (gk_i64 i = 0; i < n; ++i) { s += hd[i]; ok &= std::fabs(c[i] - s) <= 1e-9 * std::max(1.0, std::fabs(s)); }
      result(ok, fmt("scan f64 in sum n=%lld", n)); }
    { std::vector<float> hp(n); for (auto &v : hp) v = (float)(0.999 + 0.002 * urand()); x.put(hp);
      DBuf<double> od(n); std::vector<double> c, d;
      run_scan<false>(n, LoadF<1>{x.p}, gk_op_prod<double>(), od, ts, c, d);
      double p = 1; bool ok = c == d; gk_i64 bad = -1;
      for (gk_i64 i = 0; i < n; ++i) { p *= hp[i]; if (!close_rel(c[i], p, 1e-9)) { ok = false; if (bad < 0) bad = i; } }
      result(ok, fmt("scan prod f64 n=%lld first bad %lld", n, bad));
      x.put(hx); }
  }
}
/* Beyond 2^31 elements with gk_i64 indices: elements generated from the
** index, outputs checked at a few positions (no 8 GiB buffers). */
struct LoadMod { typedef int X; template <int N> __device__ void load(int *d, gk_i64 i) const { d[0] = (int)(i % 7) - 3; } };
struct StoreProbe { gk_i64 *o; gk_i64 n;
  template <int N> __device__ void store(gk_i64 i, const gk_i64 *v) const {
    if (i % 1000003 == 0) o[i / 1000003] = v[0];
    if (i == n - 1) o[n / 1000003 + 1] = v[0]; } };
static gk_i64 modsum(gk_i64 m) {   /* sum of (i % 7) - 3 over [0, m): each full period sums to 0 */
  gk_i64 s = 0; for (gk_i64 k = 0; k < m % 7; ++k) s += k - 3; return s; }
template <bool EX> __global__ void __launch_bounds__(GK_SCAN_THREADS) k_scan_big(gk_i64 n, gk_i64 *o, void *ts, gk_u32 ep) {
  gk_scan<gk_scan_policy_default, EX>(n, LoadMod(), gk_op_sum<gk_i64>(), StoreProbe{o, n}, ts, ep); }
struct SelMod { typedef int X; __device__ bool operator()(gk_i64 i, int &v) const { v = (int)(i % 7); return v == 2 || v == 5; } };
struct SelProbe { int *o; __device__ void operator()(gk_i64 d, const int &v, gk_i64 src) const { if (d % 1000003 == 0) o[d / 1000003] = (int)(src % 1000000007); } };
__global__ void __launch_bounds__(GK_SELECT_THREADS) k_select_big(gk_i64 n, int *o, gk_i64 *cnt, void *ts, gk_u32 ep) {
  gk_select<gk_select_policy_default, false>(n, SelMod(), SelProbe{o}, cnt, ts, ep); }
static void test_scan_big() {
  const gk_i64 n = ((gk_i64)1 << 31) + 123457;
  gk_launch L = gk_scan_launch(n, 8);
  DBuf<char> ts(L.temp_bytes); ts.zero();
  const gk_i64 np = n / 1000003 + 2;
  DBuf<gk_i64> o(np);
  for (int ex = 0; ex < 2; ++ex) {
    o.poison();
    g_epoch = gk_next_epoch(g_epoch);
    if (ex) k_scan_big<true><<<(unsigned)L.grid[0], GK_SCAN_THREADS>>>(n, o.p, ts.p, g_epoch);
    else k_scan_big<false><<<(unsigned)L.grid[0], GK_SCAN_THREADS>>>(n, o.p, ts.p, g_epoch);
    LAUNCHED();
    std::vector<gk_i64> h = o.get(); bool ok = true;
    for (gk_i64 k = 0; k + 1 < np; ++k) ok &= h[k] == modsum(k * 1000003 + (ex ? 0 : 1));
    ok &= h[np - 1] == modsum(n - 1 + (ex ? 0 : 1));
    result(ok, fmt("scan %s i64 n=2^31+123457 (generated input)", ex ? "exclusive" : "inclusive"));
  }
  gk_launch Lf = gk_select_launch(n);
  DBuf<char> tf(Lf.temp_bytes); tf.zero(); DBuf<gk_i64> cnt(1); DBuf<int> so(n / 1000003 + 1); so.poison();
  g_epoch = gk_next_epoch(g_epoch);
  k_select_big<<<(unsigned)Lf.grid[0], GK_SELECT_THREADS>>>(n, so.p, cnt.p, tf.p, g_epoch);
  LAUNCHED();
  gk_i64 k = cnt.get()[0], want = n / 7 * 2 + (n % 7 > 2) + (n % 7 > 5);
  std::vector<int> h = so.get(); bool ok = k == want;
  for (gk_i64 d = 0; d < want; d += 1000003) { gk_i64 src = d / 2 * 7 + (d % 2 ? 5 : 2); ok &= h[d / 1000003] == (int)(src % 1000000007); }
  result(ok, fmt("filter n=2^31+123457 (generated) count %lld/%lld", k, want));
}

/* ---- row programs ---- */
struct RLoad { const float *x; gk_i64 ld;
  template <int N> __device__ void load(float *d, gk_i64 r, gk_i64 c) const { gk_ld<N>(d, x + r * ld + c); } };
struct Softmax : RLoad {
  typedef float X; typedef gk_op_logsumexp<float> OpA; typedef gk_op_nop OpB;
  enum { PASSES = 1, HAS_STORE = 1 };
  OpA opa; OpB opb; float *y; int log;
  __device__ OpA::A lift_a(float x, gk_i64) const { return opa.lift(x, 0); }
  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *x, const OpA::A &a, gk_none) const {
    float o[N]; float inv = 1.f / a.s, ls = __logf(a.s);
#pragma unroll
    for (int k = 0; k < N; ++k) o[k] = log ? x[k] - a.m - ls : __expf(x[k] - a.m) * inv;
    gk_st<N>(y + r * ld + c, o); }
  __device__ void row_out(gk_i64, const OpA::A &, gk_none) const {}
};
struct Softmax2 : RLoad {   /* two-pass form for cached rows: max, then sum exp(x - max) */
  typedef float X; typedef gk_op_max<float> OpA; typedef gk_op_sum<float> OpB;
  enum { PASSES = 2, HAS_STORE = 1 };
  OpA opa; OpB opb; float *y;
  __device__ float lift_a(float x, gk_i64) const { return x; }
  __device__ float lift_b(float x, gk_i64, float m) const { return __expf(x - m); }
  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *x, float m, float s) const {
    float o[N]; float inv = 1.f / s;
#pragma unroll
    for (int k = 0; k < N; ++k) o[k] = __expf(x[k] - m) * inv;
    gk_st<N>(y + r * ld + c, o); }
  __device__ void row_out(gk_i64, float, float) const {}
};
struct Layernorm : RLoad {
  typedef float X; typedef gk_op_sum<float> OpA; typedef gk_op_sum<float> OpB;
  enum { PASSES = 2, HAS_STORE = 1 };
  OpA opa; OpB opb; float *y; const float *g, *bb; gk_i64 cols; float eps;
  __device__ float lift_a(float x, gk_i64) const { return x; }
  __device__ float lift_b(float x, gk_i64, float s) const { float d = x - s / cols; return d * d; }
  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *x, float s, float q) const {
    float o[N]; float mean = s / cols, rs = rsqrtf(q / cols + eps);
#pragma unroll
    for (int k = 0; k < N; ++k) o[k] = (x[k] - mean) * rs * g[c + k] + bb[c + k];
    gk_st<N>(y + r * ld + c, o); }
  __device__ void row_out(gk_i64, float, float) const {}
};
struct Rmsnorm : RLoad {
  typedef float X; typedef gk_op_sum<float> OpA; typedef gk_op_nop OpB;
  enum { PASSES = 1, HAS_STORE = 1 };
  OpA opa; OpB opb; float *y; gk_i64 cols; float eps;
  __device__ float lift_a(float x, gk_i64) const { return x * x; }
  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *x, float q, gk_none) const {
    float o[N]; float rs = rsqrtf(q / cols + eps);
#pragma unroll
    for (int k = 0; k < N; ++k) o[k] = x[k] * rs;
    gk_st<N>(y + r * ld + c, o); }
  __device__ void row_out(gk_i64, float, gk_none) const {}
};
struct RowSum : RLoad {
  typedef float X; typedef gk_op_sum<float> OpA; typedef gk_op_nop OpB;
  enum { PASSES = 1, HAS_STORE = 0 };
  OpA opa; OpB opb; float *y;
  __device__ float lift_a(float x, gk_i64) const { return x; }
  template <int N> __device__ void store(gk_i64, gk_i64, const float *, float, gk_none) const {}
  __device__ void row_out(gk_i64 r, float s, gk_none) const { y[r] = s; }
};
struct RowArgmax : RLoad {
  typedef float X; typedef gk_op_argmax<float> OpA; typedef gk_op_nop OpB;
  enum { PASSES = 1, HAS_STORE = 0 };
  OpA opa; OpB opb; gk_i64 *y;
  __device__ OpA::A lift_a(float x, gk_i64 c) const { return opa.lift(x, c); }
  template <int N> __device__ void store(gk_i64, gk_i64, const float *, const OpA::A &, gk_none) const {}
  __device__ void row_out(gk_i64 r, const OpA::A &a, gk_none) const { y[r] = a.i; }
};

#include "rows_launch.cuh"

struct Shape { gk_i64 r, c; };
static const Shape SHAPES[] = {{1, 1}, {3, 1000}, {1000, 3}, {7, 33}, {129, 32}, {300, 128}, {65, 1000}, {5, 1024},
                               {9, 4097}, {3, 8192}, {4, 16384}, {2, 70000}, {1000, 17}, {2048, 1024}, {1, 200003}};
static void test_rows() {
  for (const Shape &s : SHAPES) {
    const gk_i64 R = s.r, C = s.c, n = R * C;
    std::vector<float> hx = randf(n, -4.f, 4.f), hg = randf(C, 0.5f, 1.5f), hb = randf(C, -1.f, 1.f);
    DBuf<float> x(hx), y(n), g(hg), bb(hg.size()); bb.put(hb);
    const int vec = C % 4 == 0 ? 4 : 1;
    gk_launch L = gk_rows_plan(R, C, vec, g_sms);
    const char *mode = L.mode == GK_ROWS_WARP ? "warp" : L.mode == GK_ROWS_BLOCK ? "block" : "stream";
    for (int which = 0; which < 5; ++which) {
      y.poison();
      bool ok = true;
      if (which <= 1) { Softmax p; p.x = x.p; p.ld = C; p.y = y.p; p.log = which; ok = launch_rows(L, R, C, p); }
      else if (which == 2) { Layernorm p; p.x = x.p; p.ld = C; p.y = y.p; p.g = g.p; p.bb = bb.p; p.cols = C; p.eps = 1e-5f; ok = launch_rows(L, R, C, p); }
      else if (which == 4) { Softmax2 p; p.x = x.p; p.ld = C; p.y = y.p; ok = launch_rows(L, R, C, p); }
      else { Rmsnorm p; p.x = x.p; p.ld = C; p.y = y.p; p.cols = C; p.eps = 1e-5f; ok = launch_rows(L, R, C, p); }
      LAUNCHED();
      std::vector<float> hy = y.get();
      double maxerr = 0;
      for (gk_i64 r = 0; r < R && ok; ++r) {
        const float *xr = &hx[r * C];
        double m = -INFINITY, se = 0, mean = 0, var = 0, sq = 0;
        for (gk_i64 c = 0; c < C; ++c) { m = std::max(m, (double)xr[c]); mean += xr[c]; sq += (double)xr[c] * xr[c]; }
        mean /= C;
        for (gk_i64 c = 0; c < C; ++c) { se += std::exp(xr[c] - m); var += (xr[c] - mean) * (xr[c] - mean); }
        var /= C;
        for (gk_i64 c = 0; c < C; ++c) {
          double ref;
          if (which == 0 || which == 4) ref = std::exp(xr[c] - m) / se;
          else if (which == 1) ref = xr[c] - m - std::log(se);
          else if (which == 2) ref = (xr[c] - mean) / std::sqrt(var + 1e-5) * hg[c] + hb[c];
          else ref = xr[c] / std::sqrt(sq / C + 1e-5);
          double got = hy[r * C + c];
          double err = std::fabs(got - ref) / std::max(1.0, std::fabs(ref));
          if (!(err <= 1e-4)) { ok = false; }
          maxerr = std::max(maxerr, err);
        }
      }
      static const char *names[] = {"softmax", "logsoftmax", "layernorm", "rmsnorm", "softmax2pass"};
      result(ok, fmt("rows %s %lldx%lld (%s w%d p%d v%d) maxerr %g", names[which], R, C, mode, L.width, L.packs, L.pack, maxerr));
    }
    /* row sum through the reduce plan (split for few long rows), row argmax */
    { gk_launch Lr = gk_row_reduce_plan(R, C, vec, g_sms, 4);
      DBuf<char> tmp(std::max<gk_i64>(Lr.temp_bytes, 16)); tmp.zero();
      RowSum p; p.x = x.p; p.ld = C; p.y = y.p;
      std::vector<float> r1, r2;
      for (int rep = 0; rep < 2; ++rep) {
        y.poison();
        float *part = (float *)tmp.p; gk_u32 *ctr = (gk_u32 *)(tmp.p + gk_align16(R * Lr.grid[0] * 4));
        if (!launch_row_reduce(Lr, R, C, p, part, ctr))
          result(false, fmt("rows sum %lldx%lld: no instance for mode %d width %d packs %d", R, C, Lr.mode, Lr.width, Lr.packs));
        LAUNCHED();
        std::vector<float> h = y.get(); h.resize(R); (rep ? r2 : r1) = h;
      }
      bool ok = r1 == r2;
      for (gk_i64 r = 0; r < R; ++r) { double sref = 0; for (gk_i64 c = 0; c < C; ++c) sref += hx[r * C + c];
        ok &= std::fabs(r1[r] - sref) <= 1e-5 * std::max(1.0, std::sqrt((double)C) * 4); }
      result(ok, fmt("rows sum %lldx%lld mode %d splits %lld", R, C, Lr.mode, Lr.grid[0]));
      DBuf<gk_i64> yi(R); yi.poison();
      RowArgmax q; q.x = x.p; q.ld = C; q.y = yi.p;
      launch_rows(L, R, C, q); LAUNCHED();
      std::vector<gk_i64> hi = yi.get(); ok = true;
      for (gk_i64 r = 0; r < R; ++r) { gk_i64 am = 0; for (gk_i64 c = 1; c < C; ++c) if (hx[r * C + c] > hx[r * C + am]) am = c; ok &= hi[r] == am; }
      result(ok, fmt("rows argmax %lldx%lld", R, C)); }
  }
}

/* ---- row / column scan, column reduce ---- */
struct RLoad1 { typedef float X; const float *x; gk_i64 ld;
  template <int N> __device__ void load(float *d, gk_i64 r, gk_i64 c) const { gk_ld<N>(d, x + r * ld + c); } };
struct RStore { float *y; gk_i64 ld;
  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *v) const { gk_st<N>(y + r * ld + c, v); } };
struct CProg { typedef float X; typedef gk_op_sum<double> Op; Op op; const float *x; gk_i64 ld; float *y;
  template <int N> __device__ void load(float *d, gk_i64 r, gk_i64 c) const { gk_ld<N>(d, x + r * ld + c); }
  __device__ double lift(float v, gk_i64, gk_i64) const { return (double)v; }
  __device__ void out(gk_i64 c, double v) const { y[c] = (float)v; } };
struct RStoreD { float *y; gk_i64 ld;
  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const double *v) const {
    float f[N];
#pragma unroll
    for (int k = 0; k < N; ++k) f[k] = (float)v[k];
    gk_st<N>(y + r * ld + c, f); } };
template <class P, bool EX> __global__ void k_row_scan(gk_i64 R, gk_i64 C, RLoad1 l, RStoreD s) { gk_row_scan<P, EX>(R, C, l, gk_op_sum<double>(), s); }
template <class P> __global__ void __launch_bounds__(256) k_col_reduce(gk_i64 R, gk_i64 C, CProg p, double *part, gk_u32 *ctr) { gk_col_reduce<P>(R, C, p, part, ctr); }
template <bool EX> __global__ void __launch_bounds__(256) k_col_scan(gk_i64 R, gk_i64 C, RLoad1 l, RStoreD s, char *st) {
  gk_col_scan<gk_col_scan_policy<GK_COL_SCAN_TY, GK_COL_SCAN_RPT>, EX>(R, C, l, gk_op_sum<double>(), s, st); }

static void test_rowscan_cols() {
  for (const Shape &s : SHAPES) {
    const gk_i64 R = s.r, C = s.c, n = R * C;
    std::vector<float> hx = randf(n); DBuf<float> x(hx), y(n);
    const int vec = C % 4 == 0 ? 4 : 1;
    for (int ex = 0; ex < 2; ++ex) {
      gk_launch L = gk_row_scan_plan(R, C, vec, g_sms);
      RLoad1 l{x.p, C}; RStoreD st{y.p, C};
      std::vector<float> h1;
      for (int rep = 0; rep < 2; ++rep) {
        y.poison();
        dim3 g((unsigned)L.grid[0]);
        bool launched = false;
#define RSB(W, NP, PK, BT) if (L.width == W && L.packs == NP && L.pack == PK && (L.batch > 1 ? L.batch : 1) == BT) { \
        launched = true; \
        if (ex) k_row_scan<gk_rows_policy<128, W, NP, PK, BT>, true><<<g, 128>>>(R, C, l, st); \
        else k_row_scan<gk_rows_policy<128, W, NP, PK, BT>, false><<<g, 128>>>(R, C, l, st); }
#define RS(W, NP, PK) RSB(W, NP, PK, 1)
        RS(1, 1, 1) RS(2, 1, 1) RS(4, 1, 1) RS(8, 1, 1) RS(16, 1, 1) RS(32, 1, 1) RS(32, 2, 1) RS(32, 4, 1) RS(32, 8, 1) RS(32, 16, 1)
        RS(1, 1, 4) RS(2, 1, 4) RS(4, 1, 4) RS(8, 1, 4) RS(16, 1, 4) RS(32, 1, 4) RS(32, 2, 4) RS(32, 4, 4)
        RSB(32, 2, 4, 2) RSB(32, 4, 4, 2)   /* the next chunk loaded ahead (launch.h cq) */
#undef RS
#undef RSB
        if (!launched) { result(false, fmt("rows scan %lldx%lld: no instance for width %d packs %d pack %d", R, C, L.width, L.packs, L.pack)); break; }
        LAUNCHED();
        std::vector<float> h = y.get(); bool ok = true;
        for (gk_i64 r = 0; r < R; ++r) { double c = 0; for (gk_i64 j = 0; j < C; ++j) { double inc = c + hx[r * C + j];
          double ref = ex ? c : inc; ok &= std::fabs(h[r * C + j] - ref) <= 1e-4 * std::max(1.0, std::fabs(ref)); c = inc; } }
        if (rep) ok &= h == h1;
        h1 = h;
        result(ok, fmt("rows scan %s %lldx%lld width %d items %d rep %d", ex ? "ex" : "in", R, C, L.width, L.packs * L.pack, rep));
      }
      /* column scan, twice (same bits) */
      gk_launch Lc = gk_col_scan_plan(R, C, g_sms, 8);
      DBuf<char> cst(Lc.temp_bytes);
      for (int rep = 0; rep < 2; ++rep) {
        y.poison(); cst.zero();
        if (ex) k_col_scan<true><<<(unsigned)Lc.grid[0], 256>>>(R, C, l, st, cst.p);
        else k_col_scan<false><<<(unsigned)Lc.grid[0], 256>>>(R, C, l, st, cst.p);
        LAUNCHED();
        std::vector<float> h = y.get(); bool ok = true;
        for (gk_i64 j = 0; j < C; ++j) { double c = 0; for (gk_i64 r = 0; r < R; ++r) { double inc = c + hx[r * C + j];
          double ref = ex ? c : inc; ok &= std::fabs(h[r * C + j] - ref) <= 1e-4 * std::max(1.0, std::fabs(ref)); c = inc; } }
        if (rep) ok &= h == h1;
        h1 = h;
        result(ok, fmt("cols scan %s %lldx%lld rep %d", ex ? "ex" : "in", R, C, rep));
      }
    }
    /* column reduce, each pack the shape allows, twice (same bits) */
    for (int pk = 1; pk <= 4; pk *= 2) {
      if (C % pk) continue;
      gk_launch L = gk_col_reduce_plan(R, C, pk, g_sms, 8);
      DBuf<char> tmp(std::max<gk_i64>(L.temp_bytes, 16));
      std::vector<float> r1, r2;
      bool launched = false;
      for (int rep = 0; rep < 2; ++rep) {
        y.poison(); tmp.zero();
        CProg p; p.x = x.p; p.ld = C; p.y = y.p;
        dim3 g((unsigned)L.grid[0], (unsigned)L.grid[1]);
        double *part = (double *)tmp.p; gk_u32 *ctr = (gk_u32 *)(tmp.p + gk_align16(L.grid[1] * C * 8));
#define CR(TX, PK) if (L.width == TX && L.pack == PK) { launched = true; \
        if (PK == 1 && L.packs == 4) k_col_reduce<gk_cols_policy<TX, PK, 4>><<<g, 256>>>(R, C, p, part, ctr); \
        else k_col_reduce<gk_cols_policy<TX, PK, 16 / PK>><<<g, 256>>>(R, C, p, part, ctr); }
        CR(1, 1) CR(2, 1) CR(4, 1) CR(8, 1) CR(16, 1) CR(32, 1) CR(1, 2) CR(2, 2) CR(4, 2) CR(8, 2) CR(16, 2) CR(32, 2)
        CR(1, 4) CR(2, 4) CR(4, 4) CR(8, 4) CR(16, 4) CR(32, 4)
        CR(64, 1) CR(128, 1) CR(256, 1) CR(64, 2) CR(128, 2) CR(256, 2) CR(64, 4) CR(128, 4) CR(256, 4)   /* fewer than 128 rows */
#undef CR
        if (!launched) break;
        LAUNCHED();
        std::vector<float> h = y.get(); h.resize(C); (rep ? r2 : r1) = h;
      }
      bool ok = launched && r1 == r2;
      for (gk_i64 j = 0; j < C && ok; ++j) { double sr = 0; for (gk_i64 r = 0; r < R; ++r) sr += hx[r * C + j]; ok &= close_rel(r1[j], sr, 1e-5); }
      result(ok, fmt("cols sum %lldx%lld pack %d tx %d splits %lld", R, C, pk, L.width, L.grid[1]));
    }
  }
}

/* ---- histogram ----
** The reference follows runtime/host_ops.c (hist_job) operation by operation
** (volatile where it must not be contracted or kept wider).  Cases: the
** three arithmetics (f32 explicit range, f32 range from the data, f64/int
** data), nbins 1..1000, ranges whose float rounding is far from the double
** one, lo == hi, values exactly on every edge, 1-3 ulps either side and at
** 2^-8 .. 2^-22 of a bin (around the fast path's margin), NaN, +-inf.
** Checked per element (gk_hist_bin) and as counts (gk_hist, both policies). */
struct HistRef {
  int mode; long long nb; double lo, hi, denom; float flo, fhi, fdenom;
  std::vector<double> e; std::vector<float> fe;
};
static void href_linspace_d(double lo, double hi, long long nb, std::vector<double> &e) {
  e.resize(nb + 1); double delta = hi - lo, step = delta / (double)nb;
  for (long long i = 0; i <= nb; i++) { volatile double p = step == 0 ? (double)i / (double)nb * delta : (double)i * step; e[i] = p + lo; }
  e[nb] = hi;
}
static void href_linspace_f(float lo, float hi, long long nb, std::vector<float> &e) {
  e.resize(nb + 1); float delta = hi - lo, step = delta / (float)nb;
  for (long long i = 0; i <= nb; i++) { volatile float p = step == 0 ? (float)i / (float)nb * delta : (float)i * step; e[i] = p + lo; }
  e[nb] = hi;
}
/* host_hist (autor 0) / host_hist_auto (autor 1, lo/hi the data's extremes, den its denom) */
static HistRef href_make(double lo, double hi, double den, long long nb, bool f32, bool autor) {
  HistRef h; h.nb = nb; h.flo = h.fhi = h.fdenom = 0;
  if (autor && f32) {
    float flo = (float)lo, fhi = (float)hi;
    if (flo == fhi) flo -= 0.5f, fhi += 0.5f;
    h.mode = 2; h.lo = flo; h.hi = fhi; h.denom = 0; h.flo = flo; h.fhi = fhi; h.fdenom = fhi - flo;
    href_linspace_f(flo, fhi, nb, h.fe);
    return h;
  }
  if (!autor) { if (lo == hi) lo -= 0.5, hi += 0.5; den = hi - lo; }
  else if (lo == hi) lo -= 0.5, hi += 0.5, den = 1.0;
  h.mode = f32 ? 1 : 0; h.lo = lo; h.hi = hi; h.denom = den;
  href_linspace_d(lo, hi, nb, h.e);
  if (f32) { h.flo = (float)lo; h.fhi = (float)hi; h.fe.resize(nb + 1); for (long long i = 0; i <= nb; i++) h.fe[i] = (float)h.e[i]; }
  return h;
}
static long long href_bin(const HistRef &j, double v) {       /* mode 0; -1: ignored */
  if (!(v >= j.lo && v <= j.hi)) return -1;
  volatile double q = (v - j.lo) / j.denom; volatile double f = q * (double)j.nb;
  long long i = (long long)f;
  if (i >= j.nb) i = j.nb - 1;
  if (i < 0) i = 0;
  if (v < j.e[i]) i--;
  if (i >= 0 && i + 1 <= j.nb && v >= j.e[i + 1] && i != j.nb - 1) i++;
  return i < 0 ? 0 : i;
}
static long long href_bin(const HistRef &j, float v) {        /* modes 1, 2 */
  if (!(v >= j.flo && v <= j.fhi)) return -1;
  long long i;
  if (j.mode == 1) { volatile float d = v - j.flo; volatile double q = (double)d / j.denom; volatile double f = q * (double)j.nb; i = (long long)f; }
  else { volatile float q = (v - j.flo) / j.fdenom; volatile float f = q * (float)j.nb; i = (long long)f; }
  if (i >= j.nb) i = j.nb - 1;
  if (i < 0) i = 0;
  if (v < j.fe[i]) i--;
  if (i >= 0 && v >= j.fe[i + 1] && i != j.nb - 1) i++;
  return i < 0 ? 0 : i;
}
template <class T> static long long href_bin_any(const HistRef &j, T v) { return href_bin(j, (double)v); }
template <> long long href_bin_any<float>(const HistRef &j, float v) { return href_bin(j, v); }

template <class T> struct LoadT { typedef T X; const T *x;
  template <int N> __device__ void load(T *d, gk_i64 i) const { gk_ld<N>(d, x + i); } };
template <class X> __device__ bool hist_range_dev(gk_hist_range &r, double lo, double hi, double den, int nb, int autor) {
  const bool f32 = sizeof(gk_hist_val(X())) == 4;
  return autor ? gk_hist_auto(r, lo, hi, den, nb, f32) : gk_hist_explicit(r, lo, hi, nb, f32);
}
template <class P, class L> __global__ void __launch_bounds__(P::THREADS) k_hist(gk_i64 n, L l, double lo, double hi, int nb, gk_i64 *c) { gk_hist<P>(n, l, lo, hi, nb, c); }
template <class P, class L> __global__ void __launch_bounds__(P::THREADS)
k_hist_r(gk_i64 n, L l, double lo, double hi, double den, int nb, int autor, gk_i64 *c) {
  gk_hist_range r;
  if (hist_range_dev<typename L::X>(r, lo, hi, den, nb, autor)) gk_hist<P>(n, l, r, c);
}
template <class X> __global__ void k_hist_bins(gk_i64 n, const X *x, double lo, double hi, double den, int nb, int autor, int *out) {
  gk_hist_range r;
  const bool ok = hist_range_dev<X>(r, lo, hi, den, nb, autor);
  for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (gk_i64)gridDim.x * blockDim.x)
    out[i] = ok ? gk_hist_bin(r, gk_hist_val(x[i])) : -2;
}

/* One case: per-element bins and counts (v4 and v1 policies) vs the reference. */
template <class T> static void hist_case(const std::vector<T> &hx, double lo, double hi, double den, int nb, bool autor, const std::string &name) {
  const bool f32 = sizeof(T) == 4 && (T)0.5 != 0;
  HistRef j = href_make(lo, hi, den, nb, f32, autor);
  gk_i64 n = (gk_i64)hx.size();
  std::vector<gk_i64> ref(nb, 0); std::vector<int> rb(n);
  for (gk_i64 i = 0; i < n; i++) { long long b = href_bin_any(j, hx[i]); rb[i] = (int)b; if (b >= 0) ref[b]++; }
  DBuf<T> x(hx); DBuf<int> bins(n); DBuf<gk_i64> c(nb);
  bins.poison();
  k_hist_bins<T><<<256, 256>>>(n, x.p, lo, hi, den, nb, autor, bins.p);
  LAUNCHED();
  std::vector<int> gb = bins.get();
  gk_i64 bad = 0, first = -1;
  for (gk_i64 i = 0; i < n; i++) if (gb[i] != rb[i]) { if (first < 0) first = i; bad++; }
  if (bad) printf("  %s: %lld bins differ, first x[%lld] = %.17g gk %d ref %d\n", name.c_str(), (long long)bad, (long long)first,
                  (double)hx[first], gb[first], rb[first]);
  result(bad == 0, fmt("hist bins %s", name.c_str()));
  for (int v4 = 0; v4 < 2; ++v4) {
    gk_launch L = gk_hist_launch(n, nb, v4, g_sms);
    c.zero();
    if (v4) k_hist_r<gk_hist_policy_v4><<<(unsigned)L.grid[0], GK_HIST_THREADS, L.smem>>>(n, LoadT<T>{x.p}, lo, hi, den, nb, (int)autor, c.p);
    else k_hist_r<gk_hist_policy_v1><<<(unsigned)L.grid[0], GK_HIST_THREADS, L.smem>>>(n, LoadT<T>{x.p}, lo, hi, den, nb, (int)autor, c.p);
    LAUNCHED();
    result(c.get() == ref, fmt("hist counts %s v%d", name.c_str(), v4 ? 4 : 1));
  }
}
/* The neighbouring value of x in its own type; specials only for floats. */
static float hist_next(float x, int dir) { return std::nextafter(x, dir < 0 ? -INFINITY : INFINITY); }
static double hist_next(double x, int dir) { return std::nextafter(x, dir < 0 ? -(double)INFINITY : (double)INFINITY); }
template <class T> static T hist_next(T x, int dir) { return x + dir; }
template <class T> static void hist_specials(std::vector<T> &v) {
  v.push_back((T)NAN); v.push_back((T)INFINITY); v.push_back((T)-INFINITY); v.push_back((T)0.0); v.push_back(-(T)0.0);
}
static void hist_specials(std::vector<int> &) {}
static void hist_specials(std::vector<gk_i64> &) {}
/* Values on and around every edge of the reference range, kept inside [a, b]. */
template <class T> static void hist_edges(std::vector<T> &v, const HistRef &j, bool clip, T a, T b, bool integral) {
  const double w = (j.mode == 2 ? (double)j.fdenom : j.hi - j.lo) / (double)j.nb;
  for (long long k = 0; k <= j.nb; k++) {
    const double e = j.mode == 0 ? j.e[k] : (double)j.fe[k];
    std::vector<double> c;
    if (integral) { for (int d = -1; d <= 2; d++) c.push_back(std::floor(e) + d); }
    else {
      T t = (T)e, lo = t, hi = t;
      c.push_back((double)t);
      for (int u = 0; u < 3; u++) { lo = hist_next(lo, -1); hi = hist_next(hi, 1); c.push_back((double)lo); c.push_back((double)hi); }
      for (int s = 8; s <= 22; s += 2) { c.push_back(e + w * std::ldexp(1.0, -s)); c.push_back(e - w * std::ldexp(1.0, -s)); }
    }
    for (double d : c) { T t = (T)d; if (!clip || (t >= a && t <= b)) v.push_back(t); }
  }
}
template <class T> static T hist_rand(double a, double b, bool integral) {
  double r = a + (b - a) * urand(); return integral ? (T)std::floor(r) : (T)r;
}
/* A case over [lo, hi] (explicit) or with the data's own extremes (auto). */
template <class T> static void hist_range_case(double lo, double hi, int nb, bool autor, const char *what) {
  const bool integral = (T)0.5 == 0, f32 = sizeof(T) == 4 && !integral;
  std::vector<T> v;
  double w = hi - lo, a = autor ? lo : lo - 0.1 * w - 1, b = autor ? hi : hi + 0.1 * w + 1;
  if (autor) { v.push_back((T)lo); v.push_back((T)hi); }
  for (int i = 0; i < 20000; i++) v.push_back(hist_rand<T>(a, b, integral));
  double dlo = lo, dhi = hi, den = hi - lo;
  if (autor) {   /* what the generated code passes: the extremes as double; i64: uint64 difference */
    T mn = *std::min_element(v.begin(), v.end()), mx = *std::max_element(v.begin(), v.end());
    dlo = (double)mn; dhi = (double)mx; den = dhi - dlo;
    if (sizeof(T) == 8 && integral) den = (double)((unsigned long long)(long long)mx - (unsigned long long)(long long)mn);
  }
  HistRef j = href_make(dlo, dhi, den, nb, f32, autor);
  hist_edges<T>(v, j, autor, (T)dlo, (T)dhi, integral);
  if (!integral) { v.push_back((T)j.lo); v.push_back((T)j.hi); }
  if (!autor) hist_specials(v);
  for (size_t i = v.size() - 1; i > 0; i--) std::swap(v[i], v[(size_t)(urand() * (double)(i + 1))]);
  hist_case<T>(v, dlo, dhi, den, nb, autor, fmt("%s %s [%.17g, %.17g] nbins=%d n=%zu", what, autor ? "auto" : "explicit", dlo, dhi, nb, v.size()));
}

static void test_hist() {
  /* the (lo, hi, nbins) interface over the sizes (tiles and tail) */
  for (gk_i64 n : SIZES) for (int nb : {256, 10, 1}) {
    std::vector<float> hx = randf(n, -0.1f, 1.1f);
    for (gk_i64 i = 0; i < n; i += 97) hx[i] = (i / 97) % 3 == 0 ? 1.0f : (i / 97) % 3 == 1 ? NAN : 0.0f;
    HistRef j = href_make(0.0, 1.0, 1.0, nb, true, false);
    std::vector<gk_i64> ref(nb, 0);
    for (float v : hx) { long long b = href_bin(j, v); if (b >= 0) ref[b]++; }
    DBuf<float> x(hx); DBuf<gk_i64> c(nb);
    for (int v4 = 0; v4 < 2; ++v4) {
      gk_launch L = gk_hist_launch(n, nb, v4, g_sms);
      c.zero();
      if (v4) k_hist<gk_hist_policy_v4><<<(unsigned)L.grid[0], GK_HIST_THREADS, L.smem>>>(n, LoadF<4>{x.p}, 0.0, 1.0, nb, c.p);
      else k_hist<gk_hist_policy_v1><<<(unsigned)L.grid[0], GK_HIST_THREADS, L.smem>>>(n, LoadF<1>{x.p}, 0.0, 1.0, nb, c.p);
      LAUNCHED();
      result(c.get() == ref, fmt("hist n=%lld nbins=%d v%d", n, nb, v4 ? 4 : 1));
    }
  }
  static const double R[][2] = {{0, 1}, {-0.1, 0.7}, {0.1, 0.3}, {-3, 3}, {5, 5}, {-1e-3, 2.5e-3},
                                {100, 1e4}, {1e6 + 0.01, 1e6 + 0.02}, {-1e30, 1e30}, {1e-30, 3e-30}};
  for (int nb : {1, 7, 10, 256, 1000})
    for (const auto &r : R)
      for (int autor = 0; autor < 2; ++autor) {
        hist_range_case<float>(r[0], r[1], nb, autor, "f32");
        hist_range_case<double>(r[0], r[1], nb, autor, "f64");
      }
  static const double RI[][2] = {{0, 100}, {0, 1000}, {-5, 5}, {3, 3}, {-1000000, 7}};
  for (int nb : {1, 7, 10, 256, 1000})
    for (const auto &r : RI)
      for (int autor = 0; autor < 2; ++autor) {
        hist_range_case<gk_i64>(r[0], r[1], nb, autor, "i64");
        hist_range_case<int>(r[0], r[1], nb, autor, "i32");
      }
  /* i64 extremes whose uint64 difference is not hi - lo in double (fast path off) */
  for (int nb : {7, 256}) {
    std::vector<gk_i64> v;
    for (int i = 0; i < 20000; i++) v.push_back((1LL << 60) + (gk_i64)(urand() * 5000));
    gk_i64 mn = *std::min_element(v.begin(), v.end()), mx = *std::max_element(v.begin(), v.end());
    hist_case<gk_i64>(v, (double)mn, (double)mx, (double)((unsigned long long)mx - (unsigned long long)mn), nb, true,
                      fmt("i64 auto near 2^60 nbins=%d", nb));
  }
  /* all-equal data, range from the data */
  hist_case<float>(std::vector<float>(1000, 0.25f), 0.25, 0.25, 0.0, 10, true, "f32 auto all equal");
  hist_case<double>(std::vector<double>(1000, -2.0), -2.0, -2.0, 0.0, 10, true, "f64 auto all equal");
}

/* ---- select ---- */
struct SelLoad { typedef float X; const float *x; float t;
  __device__ bool operator()(gk_i64 i, float &v) const { v = x[i]; return v > t; } };
struct SelStore { float *o; __device__ void operator()(gk_i64 d, const float &v, gk_i64) const { o[d] = v; } };
template <bool PART> __global__ void __launch_bounds__(256) k_select(gk_i64 n, SelLoad l, SelStore s, gk_i64 *cnt, void *ts, gk_u32 ep) {
  gk_select<gk_select_policy_default, PART>(n, l, s, cnt, ts, ep); }
__global__ void k_reverse(float *a, gk_i64 lo, gk_i64 hi) { gk_reverse_tail(a, lo, hi); }
static void test_select() {
  std::vector<gk_i64> sizes(SIZES, SIZES + sizeof SIZES / sizeof SIZES[0]);
  sizes.push_back((1 << 24) + 5);
  sizes.push_back(0);
  for (gk_i64 n : sizes) for (float t : {0.5f, 0.01f, 0.99f}) {
    std::vector<float> hx = randf(n); DBuf<float> x(hx), y(n); DBuf<gk_i64> cnt(1);
    gk_launch L = gk_select_launch(n);
    DBuf<char> ts(L.temp_bytes); ts.zero();
    std::vector<float> tr, fa; for (float v : hx) (v > t ? tr : fa).push_back(v);
    for (int part = 0; part < 2; ++part) {
      y.poison(); cnt.poison();
      g_epoch = gk_next_epoch(g_epoch);
      if (part) k_select<true><<<(unsigned)L.grid[0], 256>>>(n, SelLoad{x.p, t}, SelStore{y.p}, cnt.p, ts.p, g_epoch);
      else k_select<false><<<(unsigned)L.grid[0], 256>>>(n, SelLoad{x.p, t}, SelStore{y.p}, cnt.p, ts.p, g_epoch);
      LAUNCHED();
      gk_i64 k = cnt.get()[0];
      if (part && n - k > 1) { gk_launch Lr = gk_reverse_launch(n - k, g_sms); k_reverse<<<(unsigned)Lr.grid[0], 256>>>(y.p, k, n); LAUNCHED(); }
      std::vector<float> h = y.get();
      bool ok = k == (gk_i64)tr.size();
      if (ok) {
        ok = std::equal(tr.begin(), tr.end(), h.begin());
        if (part) ok &= std::equal(fa.begin(), fa.end(), h.begin() + k);
      }
      result(ok, fmt("%s n=%lld t=%g count %lld/%zu", part ? "partition" : "filter", n, t, k, tr.size()));
    }
  }
}

/* ---- transpose / permute ---- */
__global__ void k_transpose(const float *in, float *out, gk_i64 R, gk_i64 C) { gk_transpose(in, out, R, C); }
__global__ void k_permute(const float *in, float *out, gk_i64 total, gk_permute_args a) { gk_permute(in, out, total, a); }
template <class T, int TC = (sizeof(T) == 8 ? 32 : 64)>
__global__ void __launch_bounds__(256, 6) k_transpose_al(const T *in, T *out, gk_i64 R, gk_i64 C, gk_i64 seg) {
  gk_transpose_al<T, TC>(in, out, R, C, seg);
}
template <class T, int K, bool SCOLS>
__global__ void __launch_bounds__(GK_TN_THREADS) k_transpose_narrow(const T *in, T *out, gk_i64 R, gk_i64 C, gk_i64 run) {
  gk_transpose_narrow<T, K, SCOLS>(in, out, R, C, run);
}
template <class T, int K> static void launch_narrow(const T *in, T *out, gk_i64 b, gk_i64 r, gk_i64 c) {
  gk_i64 run = gk_transpose_narrow_run(r < c ? r : c, K);
  gk_launch L = gk_transpose_narrow_launch(r, c, b, run);
  dim3 g((unsigned)L.grid[0], (unsigned)L.grid[1]);
  if (c <= r) k_transpose_narrow<T, K, true><<<g, GK_TN_THREADS>>>(in, out, r, c, run);
  else k_transpose_narrow<T, K, false><<<g, GK_TN_THREADS>>>(in, out, r, c, run);
}
static void test_transpose() {
  /* gk_transpose_narrow: a side of at most 32, either direction, batched, the output off a line */
  struct NS { gk_i64 b, r, c; int off; };
  for (NS s : {NS{1, 3, 1000, 0}, NS{1, 1000, 3, 5}, NS{2, 3, 100001, 3}, NS{2, 100001, 3, 0}, NS{1, 17, 1000, 31},
               NS{1, 1000, 17, 1}, NS{1, 31, 33, 0}, NS{1, 33, 31, 7}, NS{1, 32, 999, 2}, NS{3, 2, 5, 1}}) {
    gk_i64 n = s.b * s.r * s.c;
    std::vector<float> hx = randf(n); DBuf<float> x(hx), y(n + 32); y.poison();
    std::vector<double> hd(n); for (gk_i64 i = 0; i < n; ++i) hd[i] = hx[i] * 3.0 + 1e-9 * (double)i;
    DBuf<double> xd(hd), yd(n + 32); yd.poison();
    launch_narrow<float, 2048>(x.p, y.p + s.off, s.b, s.r, s.c); LAUNCHED();
    launch_narrow<double, 1024>(xd.p, yd.p + s.off, s.b, s.r, s.c); LAUNCHED();
    std::vector<float> h = y.get(); std::vector<double> hy = yd.get(); bool ok = true;
    for (gk_i64 b = 0; b < s.b; ++b) for (gk_i64 r = 0; r < s.r; ++r) for (gk_i64 c = 0; c < s.c; ++c) {
      ok &= h[s.off + b * s.r * s.c + c * s.r + r] == hx[b * s.r * s.c + r * s.c + c];
      ok &= hy[s.off + b * s.r * s.c + c * s.r + r] == hd[b * s.r * s.c + r * s.c + c];
    }
    for (int k = 0; k < s.off; ++k) ok &= std::isnan(h[k]) && std::isnan(hy[k]);   /* nothing written before or after */
    for (int k = 0; k < 32 - s.off; ++k) ok &= std::isnan(h[s.off + n + k]) && std::isnan(hy[s.off + n + k]);
    result(ok, fmt("transpose_narrow %lldx%lldx%lld off %d", s.b, s.r, s.c, s.off));
  }
  struct TS { gk_i64 b, r, c; };
  for (TS s : {TS{1, 1, 1}, TS{1, 3, 1000}, TS{1, 1000, 3}, TS{1, 33, 4097}, TS{2, 1024, 1024}, TS{3, 70, 33}}) {
    gk_i64 n = s.b * s.r * s.c;
    std::vector<float> hx = randf(n); DBuf<float> x(hx), y(n); y.poison();
    gk_launch L = gk_transpose_launch(s.r, s.c, s.b);
    k_transpose<<<dim3((unsigned)L.grid[0], (unsigned)L.grid[1], (unsigned)L.grid[2]), dim3(32, 8)>>>(x.p, y.p, s.r, s.c);
    LAUNCHED();
    std::vector<float> h = y.get(); bool ok = true;
    for (gk_i64 b = 0; b < s.b; ++b) for (gk_i64 r = 0; r < s.r; ++r) for (gk_i64 c = 0; c < s.c; ++c)
      ok &= h[b * s.r * s.c + c * s.r + r] == hx[b * s.r * s.c + r * s.c + c];
    result(ok, fmt("transpose %lldx%lldx%lld", s.b, s.r, s.c));
  }
  /* gk_transpose_al: output rows that are not whole lines, segments of 1, 2 and
  ** the planned steps, an output that starts off a line (off elements in) */
  struct AS { gk_i64 b, r, c; int steps, off; };
  for (AS s : {AS{1, 1, 1, 0, 0}, AS{1, 31, 33, 0, 0}, AS{1, 1000, 3, 1, 5}, AS{1, 1031, 257, 2, 0}, AS{2, 257, 130, 0, 31},
               AS{1, 4097, 33, 0, 3}, AS{3, 70, 1000, 1, 1}}) {
    gk_i64 n = s.b * s.r * s.c;
    std::vector<float> hx = randf(n); DBuf<float> x(hx), y(n + 32); y.poison();
    std::vector<double> hd(n); for (gk_i64 i = 0; i < n; ++i) hd[i] = hx[i] * 3.0 + 1e-9 * (double)i;
    DBuf<double> xd(hd), yd(n + 16); yd.poison();
    gk_i64 seg = gk_transpose_al_seg(s.r, s.c, s.b, 4, g_sms, s.steps, 0), segd = gk_transpose_al_seg(s.r, s.c, s.b, 8, g_sms, s.steps, 0);
    gk_launch L = gk_transpose_al_launch(s.r, s.c, s.b, 4, seg, 0), Ld = gk_transpose_al_launch(s.r, s.c, s.b, 8, segd, 0);
    k_transpose_al<float><<<dim3((unsigned)L.grid[0], (unsigned)L.grid[1], (unsigned)L.grid[2]), dim3(32, 8)>>>(x.p, y.p + s.off, s.r, s.c, seg);
    LAUNCHED();
    k_transpose_al<double><<<dim3((unsigned)Ld.grid[0], (unsigned)Ld.grid[1], (unsigned)Ld.grid[2]), dim3(32, 8)>>>(xd.p, yd.p + s.off % 16, s.r, s.c, segd);
    LAUNCHED();
    std::vector<float> h = y.get(); std::vector<double> hy = yd.get(); bool ok = true;
    DBuf<float> y32(n + 32); y32.poison();   /* 32 columns a block (GK_TRANSPOSE=al32) */
    gk_i64 seg32 = gk_transpose_al_seg(s.r, s.c, s.b, 4, g_sms, s.steps, 1);
    gk_launch L32 = gk_transpose_al_launch(s.r, s.c, s.b, 4, seg32, 1);
    k_transpose_al<float, 32><<<dim3((unsigned)L32.grid[0], (unsigned)L32.grid[1], (unsigned)L32.grid[2]), dim3(32, 8)>>>(x.p, y32.p + s.off, s.r, s.c, seg32);
    LAUNCHED();
    std::vector<float> h32 = y32.get();
    for (gk_i64 b = 0; b < s.b; ++b) for (gk_i64 r = 0; r < s.r; ++r) for (gk_i64 c = 0; c < s.c; ++c) {
      ok &= h32[s.off + b * s.r * s.c + c * s.r + r] == hx[b * s.r * s.c + r * s.c + c];
      ok &= h[s.off + b * s.r * s.c + c * s.r + r] == hx[b * s.r * s.c + r * s.c + c];
      ok &= hy[s.off % 16 + b * s.r * s.c + c * s.r + r] == hd[b * s.r * s.c + r * s.c + c];
    }
    for (int k = 0; k < s.off; ++k) ok &= std::isnan(h[k]) && std::isnan(h32[k]);   /* nothing written before or after */
    for (int k = 0; k < 32 - s.off; ++k) ok &= std::isnan(h[s.off + n + k]) && std::isnan(h32[s.off + n + k]);
    result(ok, fmt("transpose_al %lldx%lldx%lld steps %d off %d", s.b, s.r, s.c, s.steps, s.off));
  }
  /* permute: dims d[0..nd), axes perm; out dim k = d[perm[k]] */
  struct PS { int nd; gk_i64 d[8]; int p[8]; };
  for (PS s : {PS{3, {4, 5, 6}, {2, 0, 1}}, PS{4, {3, 7, 2, 33}, {1, 3, 0, 2}}, PS{2, {100, 37}, {1, 0}}, PS{1, {1000}, {0}},
               PS{8, {2, 3, 2, 3, 2, 3, 2, 5}, {7, 6, 5, 4, 3, 2, 1, 0}}}) {
    gk_i64 n = 1, istr[8]; for (int k = s.nd - 1; k >= 0; --k) { istr[k] = n; n *= s.d[k]; }
    gk_permute_args a; a.nd = s.nd;
    for (int k = 0; k < s.nd; ++k) { a.odims[k] = s.d[s.p[k]]; a.istride[k] = istr[s.p[k]]; }
    std::vector<float> hx = randf(n); DBuf<float> x(hx), y(n); y.poison();
    gk_launch L = gk_permute_launch(n, g_sms);
    k_permute<<<(unsigned)L.grid[0], 256>>>(x.p, y.p, n, a); LAUNCHED();
    std::vector<float> h = y.get(); bool ok = true;
    for (gk_i64 o = 0; o < n; ++o) { gk_i64 rem = o, src = 0; for (int k = s.nd - 1; k >= 0; --k) { src += (rem % a.odims[k]) * a.istride[k]; rem /= a.odims[k]; }
      ok &= h[o] == hx[src]; }
    result(ok, fmt("permute nd=%d", s.nd));
  }
}

/* `tk` runs every section; `tk NAME...` only those (reduce scan rows rowscan_cols hist select transpose). */
static bool want(int argc, char **argv, const char *name) {
  if (argc < 2) return true;
  for (int i = 1; i < argc; ++i) if (!strcmp(argv[i], name)) return true;
  return false;
}
int main(int argc, char **argv) {
  int dev = 0; CK(cudaSetDevice(dev));
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev));
  if (want(argc, argv, "reduce")) { test_reduce(); printf("reduce done: %d passed, %d failed\n", g_pass, g_fail); fflush(stdout); }
  if (want(argc, argv, "scan")) { test_scan(); test_scan_big(); printf("scan done: %d passed, %d failed\n", g_pass, g_fail); fflush(stdout); }
  if (want(argc, argv, "rows")) { test_rows(); printf("rows done: %d passed, %d failed\n", g_pass, g_fail); fflush(stdout); }
  if (want(argc, argv, "rowscan_cols")) { test_rowscan_cols(); printf("rowscan/cols done: %d passed, %d failed\n", g_pass, g_fail); fflush(stdout); }
  if (want(argc, argv, "hist")) test_hist();
  if (want(argc, argv, "select")) test_select();
  if (want(argc, argv, "transpose")) test_transpose();
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
