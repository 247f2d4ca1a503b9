/*
** nvrtc_check.c -- every kernels/*.cuh header compiles under NVRTC, fast.
**
** Hands each header to NVRTC as an in-memory header by file name (as the
** runtime does), compiles one generated-style source per primitive for
** --gpu-architecture=sm_90 to CUBIN, and prints the compile time in ms.
** Needs no GPU.  Build: cc -O2 -I/usr/local/cuda/include tests/kernels/nvrtc_check.c
**   -L/usr/local/cuda/lib64 -lnvrtc -o build/kt/nvrtc_check; run from the repo root.
** Prints "N passed, M failed".
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nvrtc.h>

static const char *HEADERS[] = {"gk_scalar.h", "gk_common.cuh", "gk_warp.cuh", "gk_block.cuh", "gk_reduce.cuh", "gk_scan.cuh",
                                "gk_rows.cuh", "gk_hist.cuh", "gk_select.cuh", "gk_transpose.cuh", "gk_fused.cuh"};
#define NH (int)(sizeof HEADERS / sizeof HEADERS[0])

/* The three README examples, verbatim, plus one source per other primitive. */
static const char *SRC_SUM_XY1 =
  "#include \"gk_reduce.cuh\"\n"
  "struct L0 { typedef float X; const float *x, *y;\n"
  "  template <int N> __device__ void load(float *d, gk_i64 i) const {\n"
  "    float a[N], b[N]; gk_ld<N>(a, x + i); gk_ld<N>(b, y + i);\n"
  "#pragma unroll\n"
  "    for (int k = 0; k < N; ++k) d[k] = a[k] * b[k] + 1.0f; } };\n"
  "struct E0 { float *out; __device__ void operator()(float r) const { *out = r; } };\n"
  "extern \"C\" __global__ void __launch_bounds__(512)\n"
  "gk_k_sum_xy1(gk_i64 n, const float *x, const float *y, float *out, float *partials, gk_u32 *counter) {\n"
  "  L0 l = {x, y}; E0 e = {out};\n"
  "  gk_grid_reduce<gk_reduce_policy_v4>(n, l, gk_op_sum<float>(), e, partials, counter);\n"
  "}\n";
static const char *SRC_SOFTMAX =
  "#include \"gk_rows.cuh\"\n"
  "struct P0 {\n"
  "  typedef float X; typedef gk_op_logsumexp<float> OpA; typedef gk_op_nop OpB;\n"
  "  enum { PASSES = 1, HAS_STORE = 1 };\n"
  "  OpA opa; OpB opb; const float *x; float *y; gk_i64 ld;\n"
  "  template <int N> __device__ void load(float *d, gk_i64 r, gk_i64 c) const { gk_ld<N>(d, x + r * ld + c); }\n"
  "  __device__ OpA::A lift_a(float v, gk_i64 c) const { return opa.lift(v, c); }\n"
  "  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *v, const OpA::A &a, gk_none) const {\n"
  "    float o[N]; const float inv = 1.0f / a.s;\n"
  "#pragma unroll\n"
  "    for (int k = 0; k < N; ++k) o[k] = __expf(v[k] - a.m) * inv;\n"
  "    gk_st<N>(y + r * ld + c, o); }\n"
  "  __device__ void row_out(gk_i64, const OpA::A &, gk_none) const {}\n"
  "};\n"
  "typedef gk_rows_policy<128, 32, 8, 4> POL;   /* from gk_rows_plan(): warp mode, 8 packs of 4 */\n"
  "extern \"C\" __global__ void __launch_bounds__(128)\n"
  "gk_k_softmax(gk_i64 rows, gk_i64 cols, const float *x, float *y) {\n"
  "  P0 p; p.x = x; p.y = y; p.ld = cols;\n"
  "  gk_row_cached<POL>(rows, cols, p);\n"
  "}\n";
static const char *SRC_SCAN =
  "#include \"gk_scan.cuh\"\n"
  "struct L0 { typedef float X; const float *x;\n"
  "  template <int N> __device__ void load(float *d, gk_i64 i) const { d[0] = fabsf(x[i]) * 2.0f; } };\n"
  "struct S0 { float *y;\n"
  "  template <int N> __device__ void store(gk_i64 i, const float *v) const { y[i] = v[0]; } };\n"
  "extern \"C\" __global__ void __launch_bounds__(256)\n"
  "gk_k_scan(gk_i64 n, const float *x, float *y, void *tile_state, gk_u32 epoch) {\n"
  "  L0 l = {x}; S0 s = {y};\n"
  "  gk_scan<gk_scan_policy_default, false>(n, l, gk_op_sum<float>(), s, tile_state, epoch);\n"
  "}\n";
static const char *SRC_MULTI =
  "#include \"gk_reduce.cuh\"\n"
  "struct L0 { typedef float X; const float *x;\n"
  "  template <int N> __device__ void load(float *d, gk_i64 i) const { gk_ld<N>(d, x + i); } };\n"
  "typedef gk_op_pair<gk_op_min<float>, gk_op_pair<gk_op_max<float>, gk_op_welford<float> > > OP;\n"
  "struct E0 { float *o; __device__ void operator()(const OP::A &r) const { o[0] = r.a; o[1] = r.b.a; o[2] = r.b.b.mean; o[3] = r.b.b.m2 / r.b.b.n; } };\n"
  "extern \"C\" __global__ void __launch_bounds__(512)\n"
  "gk_k_multi(gk_i64 n, const float *x, float *o, OP::A *partials, gk_u32 *counter) {\n"
  "  L0 l = {x}; E0 e = {o};\n"
  "  gk_grid_reduce<gk_reduce_policy_v4>(n, l, OP(), e, partials, counter);\n"
  "}\n";
static const char *SRC_LSE =
  "#include \"gk_reduce.cuh\"\n"
  "struct L0 { typedef float X; const float *x;\n"
  "  template <int N> __device__ void load(float *d, gk_i64 i) const { gk_ld<N>(d, x + i); } };\n"
  "struct E0 { float *o; __device__ void operator()(const gk_ms<float> &r) const { o[0] = r.s; o[1] = r.m + logf(r.s); } };\n"
  "extern \"C\" __global__ void __launch_bounds__(512)\n"
  "gk_k_lse(gk_i64 n, const float *x, float *o, gk_ms<float> *partials, gk_u32 *counter) {\n"
  "  L0 l = {x}; E0 e = {o};\n"
  "  gk_grid_reduce<gk_reduce_policy_v4>(n, l, gk_op_logsumexp<float>(), e, partials, counter);\n"
  "}\n";
static const char *SRC_LAYERNORM_STREAM =
  "#include \"gk_rows.cuh\"\n"
  "struct P0 {\n"
  "  typedef float X; typedef gk_op_sum<float> OpA; typedef gk_op_sum<float> OpB;\n"
  "  enum { PASSES = 2, HAS_STORE = 1 };\n"
  "  OpA opa; OpB opb; const float *x; float *y; gk_i64 ld; float inv_n, eps;\n"
  "  template <int N> __device__ void load(float *d, gk_i64 r, gk_i64 c) const { gk_ld<N>(d, x + r * ld + c); }\n"
  "  __device__ float lift_a(float v, gk_i64) const { return v; }\n"
  "  __device__ float lift_b(float v, gk_i64, float s) const { float d = v - s * inv_n; return d * d; }\n"
  "  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *v, float s, float q) const {\n"
  "    float o[N]; const float m = s * inv_n, rs = rsqrtf(q * inv_n + eps);\n"
  "#pragma unroll\n"
  "    for (int k = 0; k < N; ++k) o[k] = (v[k] - m) * rs;\n"
  "    gk_st<N>(y + r * ld + c, o); }\n"
  "  __device__ void row_out(gk_i64, float, float) const {}\n"
  "};\n"
  "extern \"C\" __global__ void __launch_bounds__(1024)\n"
  "gk_k_ln(gk_i64 rows, gk_i64 cols, const float *x, float *y) {\n"
  "  P0 p; p.x = x; p.y = y; p.ld = cols; p.inv_n = 1.0f / cols; p.eps = 1e-5f;\n"
  "  gk_row_stream<gk_rows_policy<1024, 1024, 4, 4> >(rows, cols, p);\n"
  "}\n";
static const char *SRC_ROWSCAN_COLS =
  "#include \"gk_rows.cuh\"\n"
  "struct L0 { typedef float X; const float *x; gk_i64 ld;\n"
  "  template <int N> __device__ void load(float *d, gk_i64 r, gk_i64 c) const { gk_ld<N>(d, x + r * ld + c); } };\n"
  "struct S0 { float *y; gk_i64 ld;\n"
  "  template <int N> __device__ void store(gk_i64 r, gk_i64 c, const float *v) const { gk_st<N>(y + r * ld + c, v); } };\n"
  "struct O0 { float *y; __device__ void operator()(gk_i64 c, float v) const { y[c] = v; } };\n"
  "extern \"C\" __global__ void gk_k_rowscan(gk_i64 R, gk_i64 C, const float *x, float *y) {\n"
  "  L0 l = {x, C}; S0 s = {y, C};\n"
  "  gk_row_scan<gk_rows_policy<128, 32, 1, 4>, false>(R, C, l, gk_op_max<float>(), s);\n"
  "}\n"
  "extern \"C\" __global__ void __launch_bounds__(256) gk_k_colsum(gk_i64 R, gk_i64 C, const float *x, float *y, float *part, gk_u32 *ctr) {\n"
  "  L0 l = {x, C}; O0 o = {y};\n"
  "  gk_col_reduce<256>(R, C, l, gk_op_sum<float>(), o, part, ctr);\n"
  "}\n";
static const char *SRC_HIST =
  "#include \"gk_hist.cuh\"\n"
  "struct L0 { typedef float X; const float *x;\n"
  "  template <int N> __device__ void load(float *d, gk_i64 i) const { gk_ld<N>(d, x + i); } };\n"
  "extern \"C\" __global__ void __launch_bounds__(gk_hist_policy_v4::THREADS)\n"
  "gk_k_hist(gk_i64 n, const float *x, double lo, double hi, int nbins, gk_i64 *counts) {\n"
  "  L0 l = {x}; gk_hist<gk_hist_policy_v4>(n, l, lo, hi, nbins, counts);\n"
  "}\n";
static const char *SRC_SELECT =
  "#include \"gk_select.cuh\"\n"
  "struct L0 { typedef float X; const float *x;\n"
  "  __device__ bool operator()(gk_i64 i, float &v) const { v = x[i]; return v > 0.5f; } };\n"
  "struct S0 { float *y; __device__ void operator()(gk_i64 d, const float &v, gk_i64) const { y[d] = v; } };\n"
  "extern \"C\" __global__ void __launch_bounds__(256)\n"
  "gk_k_filter(gk_i64 n, const float *x, float *y, gk_i64 *count, void *ts, gk_u32 epoch) {\n"
  "  L0 l = {x}; S0 s = {y}; gk_select<gk_select_policy_default, false>(n, l, s, count, ts, epoch);\n"
  "}\n"
  "extern \"C\" __global__ void gk_k_rev(float *y, gk_i64 lo, gk_i64 hi) { gk_reverse_tail(y, lo, hi); }\n";
static const char *SRC_TRANSPOSE =
  "#include \"gk_transpose.cuh\"\n"
  "extern \"C\" __global__ void gk_k_tr(const float *x, float *y, gk_i64 R, gk_i64 C) { gk_transpose(x, y, R, C); }\n"
  "extern \"C\" __global__ void gk_k_perm(const float *x, float *y, gk_i64 n, gk_permute_args a) { gk_permute(x, y, n, a); }\n";

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (fread(b, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(b); return NULL; }
  b[n] = 0; fclose(f); return b;
}
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "kernels";
  const char *texts[NH];
  for (int i = 0; i < NH; ++i) {
    char p[1024]; snprintf(p, sizeof p, "%s/%s", dir, HEADERS[i]);
    texts[i] = slurp(p);
    if (!texts[i]) { fprintf(stderr, "cannot read %s\n", p); return 2; }
  }
  struct { const char *name, *src; } cases[] = {
    {"reduce sum(x*y+1)", SRC_SUM_XY1}, {"row softmax", SRC_SOFTMAX}, {"scan with prologue", SRC_SCAN},
    {"reduce min+max+welford", SRC_MULTI}, {"logsumexp online", SRC_LSE}, {"layernorm stream", SRC_LAYERNORM_STREAM},
    {"row scan + col reduce", SRC_ROWSCAN_COLS}, {"histogram", SRC_HIST}, {"filter", SRC_SELECT}, {"transpose+permute", SRC_TRANSPOSE}};
  int pass = 0, fail = 0;
  const char *opts[] = {"--gpu-architecture=sm_90", "-default-device", "--std=c++17", "-minimal"};
  for (int rep = 0; rep < 2; ++rep)   /* first round pays NVRTC's one-time start-up */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
      double t0 = now_ms();
      nvrtcProgram prog;
      nvrtcResult r = nvrtcCreateProgram(&prog, cases[c].src, "gk_gen.cu", NH, texts, HEADERS);
      if (r == NVRTC_SUCCESS) r = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
      size_t cubin = 0;
      if (r == NVRTC_SUCCESS) nvrtcGetCUBINSize(prog, &cubin);
      double ms = now_ms() - t0;
      if (r != NVRTC_SUCCESS) {
        size_t ln = 0; nvrtcGetProgramLogSize(prog, &ln);
        char *log = malloc(ln + 1); nvrtcGetProgramLog(prog, log); log[ln] = 0;
        if (rep) { printf("FAIL %-26s %s\n%s\n", cases[c].name, nvrtcGetErrorString(r), log); ++fail; }
        free(log);
      } else if (rep) {
        printf("ok   %-26s %7.1f ms  cubin %zu bytes\n", cases[c].name, ms, cubin);
        ++pass;
      }
      nvrtcDestroyProgram(&prog);
    }
  printf("%d passed, %d failed\n", pass, fail);
  return fail ? 1 : 0;
}
