/*
** bench_kernels.cu -- gk kernels/ primitives against CUB on the H200.
**
** 2^28 float32 elements (1 GiB per array, far above the 50 MB L2), random
** U[0,1) data, event timing, median of 30 runs after 3 warm-ups.  GB/s
** counts the fewest bytes the operation must move.  Peers: CUB measured in
** the same run; torch numbers from shared/PERFORMANCE.md (marked "doc").
** Prints a table and writes JSON to argv[1] (default bench_kernels.json).
** Build: nvcc -arch=sm_90 -O3 -std=c++17 -Ikernels tests/bench/bench_kernels.cu
*/
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <string>
#include <type_traits>
#include <cub/cub.cuh>
#include "gk_reduce.cuh"
#include "gk_scan.cuh"
#include "gk_rows.cuh"
#include "gk_hist.cuh"
#include "gk_select.cuh"
#include "gk_transpose.cuh"
extern "C" {
#include "launch.h"
}
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)

static int g_sms;
static cudaEvent_t e0, e1;
template <class F> static double time_ms(F f, int reps = 30) {
  for (int i = 0; i < 3; ++i) f();
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  std::vector<float> t(reps);
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(e0)); f(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&t[i], e0, e1));
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[reps / 2];
}
struct Row { std::string op; double gk_gbs, peer_gbs, target; std::string peer; };
static std::vector<Row> rows_out;
static void report(const std::string &op, double bytes, double gk_ms, double peer_gbs, const char *peer, double target) {
  double g = bytes / gk_ms / 1e6;
  rows_out.push_back({op, g, peer_gbs, target, peer});
  printf("%-34s gk %7.0f GB/s (%.3f ms) | %-22s %7.0f | ratio %5.2f | target %5.0f (%.2f)\n", op.c_str(), g, gk_ms, peer, peer_gbs,
         peer_gbs > 0 ? g / peer_gbs : 0, target, target > 0 ? g / target : 0);
  fflush(stdout);
}

struct LoadF { typedef float X; const float *x;
  template <int N, class I> __device__ void load(float *d, I i) const { gk_ld<N>(d, x + i); } };
struct LoadXY1 { typedef float X; const float *x, *y;
  template <int N> __device__ void load(float *d, gk_i64 i) const {
    float a[N], b[N]; gk_ld<N>(a, x + i); gk_ld<N>(b, y + i);
#pragma unroll
    for (int k = 0; k < N; ++k) d[k] = a[k] * b[k] + 1.f; } };
template <class A> struct EpiStore { A *out; __device__ void operator()(const A &r) const { *out = r; } };
struct EpiLse { float *out; __device__ void operator()(const gk_ms<float> &r) const { *out = r.s; } };
template <class P, class L, class Op, class E>
__global__ void __launch_bounds__(512) k_reduce(gk_i64 n, L l, Op op, E e, typename Op::A *part, gk_u32 *ctr) {
  gk_grid_reduce<P>(n, l, op, e, part, ctr); }
template <class A> struct StoreA { A *o; template <int N> __device__ void store(gk_i64 i, const A *v) const { gk_st<N>(o + i, v); } };
/* what compiler/lower.c generates for a float scan: f64 accumulator, f32 out */
struct StoreD2F { float *o; template <int N> __device__ void store(int i, const double *v) const { o[i] = (float)v[0]; } };
template <class P, class Op, class S>
__global__ void __launch_bounds__(P::THREADS) k_scan(int n, LoadF l, S s, void *ts, gk_u32 ep) {
  gk_scan<P, false>(n, l, Op(), s, ts, ep); }
__global__ void __launch_bounds__(GK_HIST_THREADS) k_hist(gk_i64 n, LoadF l, gk_i64 *c) { gk_hist<gk_hist_policy_v4>(n, l, 0.0, 1.0, 256, c); }
struct SelLoad { typedef float X; const float *x; __device__ bool operator()(int i, float &v) const { v = x[i]; return v > 0.5f; } };
struct SelStore { float *o; __device__ void operator()(int d, const float &v, int) const { o[d] = v; } };
template <class P>
__global__ void __launch_bounds__(P::THREADS) k_select(int n, SelLoad l, SelStore s, gk_i64 *cnt, void *ts, gk_u32 ep) {
  gk_select<P, false>(n, l, s, cnt, ts, ep); }
__global__ void __launch_bounds__(256) k_transpose(const float *in, float *out, gk_i64 R, gk_i64 C) { gk_transpose(in, out, R, C); }

struct RLoad { const float *x; gk_i64 ld;
  template <int N> __device__ void load(float *d, gk_i64 r, gk_i64 c) const { gk_ld<N>(d, x + r * ld + c); } };
struct Softmax : RLoad {
  typedef float X; typedef gk_op_logsumexp<float> OpA; typedef gk_op_nop OpB;
  enum { PASSES = 1, HAS_STORE = 1 };
  OpA opa; OpB opb; float *y;
  __device__ OpA::A lift_a(float x, gk_i64) const { return opa.lift(x, 0); }
  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *x, const OpA::A &a, gk_none) const {
    float o[N]; float inv = 1.f / a.s;
#pragma unroll
    for (int k = 0; k < N; ++k) o[k] = __expf(x[k] - a.m) * inv;
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
  OpA opa; OpB opb; float *y; float inv_n, eps;
  __device__ float lift_a(float x, gk_i64) const { return x; }
  __device__ float lift_b(float x, gk_i64, float s) const { float d = x - s * inv_n; return d * d; }
  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *x, float s, float q) const {
    float o[N]; float mean = s * inv_n, rs = rsqrtf(q * inv_n + eps);
#pragma unroll
    for (int k = 0; k < N; ++k) o[k] = (x[k] - mean) * rs;
    gk_st<N>(y + r * ld + c, o); }
  __device__ void row_out(gk_i64, float, float) const {}
};
struct RowSum : RLoad {
  typedef float X; typedef gk_op_sum<float> OpA; typedef gk_op_nop OpB;
  enum { PASSES = 1, HAS_STORE = 0 };
  OpA opa; OpB opb; float *y;
  __device__ float lift_a(float x, gk_i64) const { return x; }
  template <int N> __device__ void store(gk_i64, gk_i64, const float *, float, gk_none) const {}
  __device__ void row_out(gk_i64 r, float s, gk_none) const { y[r] = s; }
};
#include "../kernels/rows_launch.cuh"
/* the plan's instantiation, or stop: a bench that launched nothing would time nothing */
template <class Prog>
static void run_rows(const gk_launch &L, gk_i64 R, gk_i64 C, const Prog &p) {
  if (launch_rows(L, R, C, p)) return;
  fprintf(stderr, "no instantiation for mode %d width %d packs %d\n", L.mode, L.width, L.packs);
  exit(3);
}

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : "bench_kernels.json";
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const gk_i64 n = (gk_i64)1 << 28;
  const double B = 4.0 * n;
  float *x, *y, *o; char *tmp; void *ctmp = nullptr; size_t ctb = 0;
  CK(cudaMalloc(&x, B)); CK(cudaMalloc(&y, B)); CK(cudaMalloc(&o, B)); CK(cudaMalloc(&tmp, 64 << 20));
  { std::vector<float> h(n); unsigned long long s = 88172645463325252ULL;
    for (auto &v : h) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; v = (float)((s >> 40) * (1.0 / 16777216.0)); if (v == 0.f) v = 0.25f; }
    CK(cudaMemcpy(x, h.data(), B, cudaMemcpyHostToDevice));
    for (auto &v : h) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; v = (float)((s >> 40) * (1.0 / 16777216.0)); if (v == 0.f) v = 0.75f; }
    CK(cudaMemcpy(y, h.data(), B, cudaMemcpyHostToDevice)); }
  CK(cudaMemset(tmp, 0, 64 << 20));
  float *res = (float *)(tmp + (60 << 20));
  auto cub_tmp = [&](size_t need) { if (need > ctb) { if (ctmp) cudaFree(ctmp); CK(cudaMalloc(&ctmp, need)); ctb = need; } };

  double copy = time_ms([&] { CK(cudaMemcpyAsync(o, x, B, cudaMemcpyDeviceToDevice)); });
  report("d2d copy (read+write)", 2 * B, copy, 2 * B / copy / 1e6, "cudaMemcpy", 0);

  /* sum / max */
  gk_launch L = gk_reduce_launch(n, 1, g_sms, 8);
  gk_u32 *ctr = (gk_u32 *)(tmp + gk_reduce_counter_offset(&L, 8));
  double t = time_ms([&] { k_reduce<gk_reduce_policy_v4><<<(unsigned)L.grid[0], 512>>>(n, LoadF{x}, gk_op_sum<float>(), EpiStore<float>{res}, (float *)tmp, ctr); });
  cub_tmp(0); size_t need = 0; cub::DeviceReduce::Sum(nullptr, need, x, o, n); cub_tmp(need);
  double tc = time_ms([&] { size_t nb = ctb; cub::DeviceReduce::Sum(ctmp, nb, x, o, n); });
  report("sum", B, t, B / tc / 1e6, "CUB DeviceReduce::Sum", 4450);
  t = time_ms([&] { k_reduce<gk_reduce_policy_v4><<<(unsigned)L.grid[0], 512>>>(n, LoadF{x}, gk_op_max<float>(), EpiStore<float>{res}, (float *)tmp, ctr); });
  need = 0; cub::DeviceReduce::Max(nullptr, need, x, o, n); cub_tmp(need);
  tc = time_ms([&] { size_t nb = ctb; cub::DeviceReduce::Max(ctmp, nb, x, o, n); });
  report("max", B, t, B / tc / 1e6, "CUB DeviceReduce::Max", 4450);
  t = time_ms([&] { k_reduce<gk_reduce_policy_v4><<<(unsigned)L.grid[0], 512>>>(n, LoadXY1{x, y}, gk_op_sum<float>(), EpiStore<float>{res}, (float *)tmp, ctr); });
  report("sum(x*y+1)", 2 * B, t, 4202, "torch.compile (doc)", 4400);
  { gk_launch L1 = gk_reduce_launch(n, 0, g_sms, 8);
    gk_u32 *c1 = (gk_u32 *)(tmp + gk_reduce_counter_offset(&L1, 8));
    t = time_ms([&] { k_reduce<gk_reduce_policy_v1><<<(unsigned)L1.grid[0], 512>>>(n, LoadF{x}, gk_op_sum<float>(), EpiStore<float>{res}, (float *)tmp, c1); });
    report("sum (scalar loads, unaligned path)", B, t, B / tc / 1e6 * 0 + 4434, "CUB (doc)", 4450); }
  t = time_ms([&] { k_reduce<gk_reduce_policy_v4><<<(unsigned)L.grid[0], 512>>>(n, LoadF{x}, gk_op_logsumexp<float>(), EpiLse{res}, (gk_ms<float> *)tmp, ctr); });
  report("sum(exp(x-max(x))) one pass", B, t, 1926, "torch.compile (doc)", 4000);

  /* inclusive scan: gk policies (int indices, as generated for n < 2^31), f32 and f64 accumulators */
  { unsigned ep = 0;
    const int64_t tsb = gk_tile_state_bytes(gk_cdiv64(n, 1024), 16);
    char *ts; CK(cudaMalloc(&ts, tsb)); CK(cudaMemset(ts, 0, tsb));
    auto scan_pol = [&](auto pol, const char *name, auto dblc) {
      typedef decltype(pol) P;
      constexpr bool dbl = decltype(dblc)::value;
      unsigned g = (unsigned)gk_cdiv64(n, P::TILE);
      double tt;
      if constexpr (dbl) tt = time_ms([&] { ep = gk_next_epoch(ep); k_scan<P, gk_op_sum<double>><<<g, P::THREADS>>>((int)n, LoadF{x}, StoreD2F{o}, ts, ep); });
      else tt = time_ms([&] { ep = gk_next_epoch(ep); k_scan<P, gk_op_sum<float>><<<g, P::THREADS>>>((int)n, LoadF{x}, StoreA<float>{o}, ts, ep); });
      printf("  scan %-4s acc %-22s %7.0f GB/s\n", dbl ? "f64" : "f32", name, 2 * B / tt / 1e6);
      return tt;
    };
#define GK_SP(T, I, S) scan_pol(gk_scan_policy<T, I, S>(), #T "x" #I " sleep " #S, std::false_type()); scan_pol(gk_scan_policy<T, I, S>(), #T "x" #I " sleep " #S, std::true_type());
    GK_SP(128, 32, 0) GK_SP(256, 16, 0) GK_SP(256, 32, 0) GK_SP(256, 32, 100) GK_SP(512, 16, 0)
#undef GK_SP
    t = scan_pol(gk_scan_policy_default(), "default", std::false_type());
    need = 0; cub::DeviceScan::InclusiveSum(nullptr, need, x, o, (int)n); cub_tmp(need);
    tc = time_ms([&] { size_t nb = ctb; cub::DeviceScan::InclusiveSum(ctmp, nb, x, o, (int)n); });
    report("inclusive scan (f32 acc)", 2 * B, t, 2 * B / tc / 1e6, "CUB DeviceScan", 3600);
    t = scan_pol(gk_scan_policy_default(), "default", std::true_type());
    report("inclusive scan (f64 acc, as generated)", 2 * B, t, 2 * B / tc / 1e6, "CUB DeviceScan (f32)", 3600);
    /* filter x > 0.5 : bytes = read n + write selected */
    gk_i64 *cnt = (gk_i64 *)(tmp + (61 << 20));
    auto sel_pol = [&](auto pol, const char *name) {
      typedef decltype(pol) P;
      unsigned g = (unsigned)gk_cdiv64(n, P::TILE);
      double tt = time_ms([&] { ep = gk_next_epoch(ep); k_select<P><<<g, P::THREADS>>>((int)n, SelLoad{x}, SelStore{o}, cnt, ts, ep); });
      gk_i64 k; CK(cudaMemcpy(&k, cnt, 8, cudaMemcpyDeviceToHost));
      printf("  select %-22s %7.0f GB/s (count %lld)\n", name, (B + 4.0 * k) / tt / 1e6, k);
      return tt;
    };
#define GK_FP(T, I, S) sel_pol(gk_select_policy<T, I, S>(), #T "x" #I " sleep " #S);
    GK_FP(256, 16, 0) GK_FP(256, 32, 0) GK_FP(256, 32, 100) GK_FP(128, 32, 0)
#undef GK_FP
    t = sel_pol(gk_select_policy_default(), "default");
    gk_i64 k; CK(cudaMemcpy(&k, cnt, 8, cudaMemcpyDeviceToHost));
    auto pred = [] __device__(float v) { return v > 0.5f; };
    int *nsel = (int *)(tmp + (62 << 20));
    need = 0; cub::DeviceSelect::If(nullptr, need, x, o, nsel, (int)n, pred); cub_tmp(need);
    tc = time_ms([&] { size_t nb = ctb; cub::DeviceSelect::If(ctmp, nb, x, o, nsel, (int)n, pred); });
    double fb = B + 4.0 * k;
    report("filter x>0.5", fb, t, fb / tc / 1e6, "CUB DeviceSelect::If", 3000);
    cudaFree(ts); }

  /* histogram 256 bins */
  { gk_launch Lh = gk_hist_launch(n, 256, 1, g_sms); gk_i64 *cnt = (gk_i64 *)(tmp + (50 << 20));
    t = time_ms([&] { cudaMemsetAsync(cnt, 0, 256 * 8); k_hist<<<(unsigned)Lh.grid[0], GK_HIST_THREADS, Lh.smem>>>(n, LoadF{x}, cnt); });
    int *hc = (int *)(tmp + (51 << 20));
    need = 0; cub::DeviceHistogram::HistogramEven(nullptr, need, x, hc, 257, 0.f, 1.f, (int)n); cub_tmp(need);
    tc = time_ms([&] { size_t nb = ctb; cub::DeviceHistogram::HistogramEven(ctmp, nb, x, hc, 257, 0.f, 1.f, (int)n); });
    report("histogram 256 bins", B, t, B / tc / 1e6, "CUB HistogramEven", 4000); }

  /* transpose 16384^2 */
  { gk_i64 R = 16384; gk_launch Lt = gk_transpose_launch(R, R, 1);
    t = time_ms([&] { k_transpose<<<dim3((unsigned)Lt.grid[0], (unsigned)Lt.grid[1]), dim3(32, 8)>>>(x, o, R, R); });
    report("transpose 16384^2", 2 * B, t, 1162, "torch .t().contiguous (doc)", 3600); }

  /* row programs on the five shapes */
  struct S { gk_i64 r, c; double sm, ln, rs; } shapes[] = {
    {65536, 1024, 3757, 2500, 3288}, {8192, 8192, 1872, 2313, 3082}, {1024, 65536, 1923, 2131, 3552},
    {1048576, 128, 4062, 694, 2103}, {262144, 32, 1809, 167, 508}};
  for (auto &s : shapes) {
    gk_launch Lr = gk_rows_plan(s.r, s.c, 4, g_sms);
    double b2 = 8.0 * s.r * s.c;
    char nm[64];
    Softmax sm; sm.x = x; sm.ld = s.c; sm.y = o;
    Softmax2 sm2; sm2.x = x; sm2.ld = s.c; sm2.y = o;
    if (Lr.mode == GK_ROWS_STREAM) t = time_ms([&] { run_rows(Lr, s.r, s.c, sm); });
    else t = time_ms([&] { run_rows(Lr, s.r, s.c, sm2); });
    snprintf(nm, sizeof nm, "row softmax %lldx%lld", s.r, s.c); report(nm, b2, t, s.sm, "torch.softmax (doc)", s.sm > 3700 ? (s.c == 32 ? 3000 : 4000) : 3700);
    Layernorm ln; ln.x = x; ln.ld = s.c; ln.y = o; ln.inv_n = 1.f / s.c; ln.eps = 1e-5f;
    t = time_ms([&] { run_rows(Lr, s.r, s.c, ln); });
    snprintf(nm, sizeof nm, "row layernorm %lldx%lld", s.r, s.c); report(nm, b2, t, s.ln, "torch layer_norm (doc)", 3500);
    gk_launch Ls = gk_row_reduce_plan(s.r, s.c, 4, g_sms, 4);
    RowSum rs; rs.x = x; rs.ld = s.c; rs.y = o;
    float *part = (float *)tmp; gk_u32 *c2 = (gk_u32 *)(tmp + gk_align16(s.r * Ls.grid[0] * 4));
    if (Ls.temp_bytes > (40 << 20)) { fprintf(stderr, "temp too big\n"); exit(3); }
    CK(cudaMemset(tmp, 0, 48 << 20));
    t = time_ms([&] {
      if (Ls.mode == GK_ROWS_SPLIT) launch_row_reduce(Ls, s.r, s.c, rs, part, c2);
      else run_rows(Ls, s.r, s.c, rs); });
    snprintf(nm, sizeof nm, "row sum %lldx%lld", s.r, s.c); report(nm, 4.0 * s.r * s.c + 4.0 * s.r, t, s.rs, "torch sum(1) (doc)", 3800);
  }
  FILE *f = fopen(json, "w");
  if (f) {
    fprintf(f, "{\"device_sms\": %d, \"n\": %lld, \"results\": [\n", g_sms, n);
    for (size_t i = 0; i < rows_out.size(); ++i)
      fprintf(f, "  {\"op\": \"%s\", \"gk_gbs\": %.1f, \"peer\": \"%s\", \"peer_gbs\": %.1f, \"ratio\": %.3f, \"target_gbs\": %.0f}%s\n",
              rows_out[i].op.c_str(), rows_out[i].gk_gbs, rows_out[i].peer.c_str(), rows_out[i].peer_gbs,
              rows_out[i].peer_gbs > 0 ? rows_out[i].gk_gbs / rows_out[i].peer_gbs : 0, rows_out[i].target, i + 1 < rows_out.size() ? "," : "");
    fprintf(f, "]}\n"); fclose(f);
  }
  return 0;
}
