/*
** tests/rowgrid_emu.cpp -- kernels/gk_rows.cuh's gk_row_grid (few long rows,
** S blocks a row anywhere in the grid, their pass partials exchanged through
** global memory behind a barrier a row) run on the host with its blocks
** RUNNING AT ONCE, as the cooperative launch has them on the GPU: a block
** is a process (fork) of THREADS pthreads, so that its `__shared__`
** statics, its dynamic shared memory and its __syncthreads barrier are its
** own, and the input, output and temp live in memory every block shares
** (mmap MAP_SHARED).  The Makefile compiles a copy of gk_rows.cuh whose
** `extern __shared__` is plain `extern`, whose barrier atomics are the
** host's (__atomic builtins: the blocks are processes) and whose
** nanosleep counts polls (a barrier that is never completed aborts the
** block; the parent also kills every block of a launch after a timeout and
** fails it, so a hang is a failure, never a hung test).
** Programs shaped as runtime/cuda_lower.c writes them: softmax of f32 rows
** with ONLINE_B (one exchange of pairs a row) and without (max, then sum:
** two exchanges), layernorm (sum, then the sum of squared deviations:
** two exchanges, no ONLINE_B), rmsnorm (one exchange), each against a
** float64 loop written here on fresh random data; lengths 1, 31, 33, 1000,
** 65537, 1000003 and 2^20 + 1 (odd lengths: rows start anywhere in their
** 16 bytes, gk_row_span), S of 2 to 16 blocks a row, as many row groups as
** rows or fewer (gridDim.y < rows: the row loop and the slots' parity).
** Every launch runs twice on the same temp, not cleared between (the
** barrier leaves its count 0: checked), and must give the same bits; the
** fallback (gridDim.x == 1: the rows streamed, what cu_launch_coop does
** where the grid cannot be resident at once) is checked against float64
** as well.  Temp size: launch.h's gk_rows_grid_temp.
** No GPU: this checks the indexing, the data flow and the barrier's
** protocol on a host's memory model, not the hardware.
** Build and run: make rowgrid-emu (`rowgrid_emu SEED long` adds 3 x
** 1000003 and 2 x 2^20 + 1 at more blocks a row).
*/
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sched.h>
#include <time.h>
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
static inline unsigned emu_atomic_add(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned emu_atomic_exch(unsigned *p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
static thread_local long long emu_polls;
static inline void emu_nap() {   /* the copy's nanosleep: give the other blocks the cores; a barrier never met aborts */
  sched_yield();
  if (++emu_polls > 20000000LL) { fprintf(stderr, "rowgrid_emu: a block waits at a barrier no other block completes\n"); _exit(3); }
}

#include "gk_rows.cuh"   /* the Makefile's copy (extern __shared__ -> extern, host atomics, counted polls) */
#include "launch.h"

enum { T = 128, NP = 1024 };   /* threads a block; the packs a thread may hold (the kernel's loop bound) */
__attribute__((aligned(16))) unsigned char gk_row_smem[NP * T * 16];   /* this block's (process's) dynamic shared memory */

typedef int I;

/* a stage's tuple of one field and its operator, as lower_rows writes S1 / O1 */
template <class T_, template <class> class M> struct Op1 {
  struct A { T_ f0; };
  M<T_> o0;
  A identity() const { A r; r.f0 = o0.identity(); return r; }
  A operator()(const A &a, const A &b) const { A r; r.f0 = o0(a.f0, b.f0); return r; }
};

/* what every program of one f32 input and one f32 output has (X, XS, load, phase) */
struct Base {
  struct XF { float f0; I r; };
  typedef XF X;
  struct XS { float f0; };
  const float *in0; float *out0; I C;
  I phase(I row) const { return row * C; }
  template <int N> void load(X *d, I row, I col) const {
    for (int kk = 0; kk < N; ++kk) { d[kk].f0 = in0[(int64_t)row * C + col + kk]; d[kk].r = row; }
  }
  static XS to_s(const X &x) { XS s; s.f0 = x.f0; return s; }
  static X from_s(const XS &s, I row) { X x; x.f0 = s.f0; x.r = row; return x; }
};

/* softmax: pass A max m, pass B sum of exp(x - m') in double (packs summed in
** f32 first; m' = m > -inf ? m : 0), store exp(x - m') * (1 / s) */
struct Softmax : Base {
  typedef Op1<float, gk_op_max> OpA;
  typedef Op1<double, gk_op_sum> OpB;
  enum { PASSES = 2, HAS_STORE = 1 };
  OpA opa; OpB opb;
  OpA::A lift_a(const X &x, I) const { OpA::A r; r.f0 = x.f0; return r; }
  static float guard(float m) { return m > -INFINITY ? m : 0.0f; }
  OpB::A lift_b(const X &x, I, const OpA::A &a) const { OpB::A r; r.f0 = (double)expf(x.f0 - guard(a.f0)); return r; }
  enum { PACK_B = 1 };
  template <int N> OpB::A lift_b_pack(const X *x, I col, const OpA::A &a) const {
    float v_[N];
    for (int kk = 0; kk < N; ++kk) v_[kk] = (float)lift_b(x[kk], col + kk, a).f0;
    OpB::A r; r.f0 = (double)gk_pack_sum<N>(v_); return r;
  }
  template <int N> void store(I row, I col, const X *x, const OpA::A &a, const OpB::A &b) const {
    for (int kk = 0; kk < N; ++kk) out0[(int64_t)row * C + col + kk] = expf(x[kk].f0 - guard(a.f0)) * (1.0f / (float)b.f0);
  }
  void row_out(I, const OpA::A &, const OpB::A &) const {}
};
struct SoftmaxOnline : Softmax {
  enum { ONLINE_B = 1 };
  OpB::A rescale_b(const OpB::A &b, const OpA::A &f, const OpA::A &t) const {
    OpB::A r = b;
    r.f0 = b.f0 == 0 ? b.f0 : b.f0 * exp((double)guard(f.f0) - (double)guard(t.f0));
    return r;
  }
};
/* layernorm without gamma / beta: pass A the sum, pass B the squared deviations from sum / C, in double */
struct Layernorm : Base {
  typedef Op1<double, gk_op_sum> OpA;
  typedef Op1<double, gk_op_sum> OpB;
  enum { PASSES = 2, HAS_STORE = 1 };
  OpA opa; OpB opb;
  OpA::A lift_a(const X &x, I) const { OpA::A r; r.f0 = (double)x.f0; return r; }
  OpB::A lift_b(const X &x, I, const OpA::A &a) const { OpB::A r; const double d = (double)x.f0 - a.f0 / C; r.f0 = d * d; return r; }
  template <int N> void store(I row, I col, const X *x, const OpA::A &a, const OpB::A &b) const {
    const float mean = (float)(a.f0 / C), rs = (float)(1.0 / sqrt(b.f0 / C + 1e-5));
    for (int kk = 0; kk < N; ++kk) out0[(int64_t)row * C + col + kk] = (x[kk].f0 - mean) * rs;
  }
  void row_out(I, const OpA::A &, const OpB::A &) const {}
};
/* rmsnorm: one pass, the sum of squares; x * rsqrt(q / C + eps) */
struct Rmsnorm : Base {
  typedef Op1<double, gk_op_sum> OpA;
  typedef gk_op_nop OpB;
  enum { PASSES = 1, HAS_STORE = 1 };
  OpA opa; OpB opb;
  OpA::A lift_a(const X &x, I) const { OpA::A r; r.f0 = (double)x.f0 * (double)x.f0; return r; }
  OpB::A lift_b(const X &, I, const OpA::A &) const { return OpB::A(); }
  template <int N> void store(I row, I col, const X *x, const OpA::A &a, const OpB::A &) const {
    const float rs = (float)(1.0 / sqrt(a.f0 / C + 1e-6));
    for (int kk = 0; kk < N; ++kk) out0[(int64_t)row * C + col + kk] = x[kk].f0 * rs;
  }
  void row_out(I, const OpA::A &, const OpB::A &) const {}
};

/* ---- the launch: every block a process of T pthreads, all at once -------- */
typedef gk_rows_policy<T, T, NP, 4, 1, 1> POL;
typedef gk_rows_policy<T, T, 4, 4, 1, 1> SPOL;   /* the fallback's stream */
template <class Prog> struct Thr { const Prog *pg; I rows, cols; unsigned char *tmp; unsigned t, bx, by; };
template <class Prog> static void *run_thread(void *arg) {
  Thr<Prog> *th = (Thr<Prog> *)arg;
  threadIdx.x = th->t;
  blockIdx.x = th->bx; blockIdx.y = th->by;
  gk_row_grid<POL, SPOL>(th->rows, th->cols, *th->pg, th->tmp);
  return nullptr;
}
template <class Prog> static void run_block(const Prog &pg, I rows, I cols, unsigned char *tmp, unsigned bx, unsigned by) {
  pthread_barrier_init(&emu_bar, nullptr, T);
  for (int w = 0; w < T / 32; ++w) pthread_barrier_init(&emu_wbar[w], nullptr, 32);
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 256 << 10);
  std::vector<pthread_t> th(T);
  std::vector<Thr<Prog>> a(T);
  for (int t = 0; t < T; ++t) {
    a[t] = {&pg, rows, cols, tmp, (unsigned)t, bx, by};
    if (pthread_create(&th[t], &at, run_thread<Prog>, &a[t])) { fprintf(stderr, "rowgrid_emu: pthread_create\n"); _exit(4); }
  }
  for (int t = 0; t < T; ++t) pthread_join(th[t], nullptr);
}
/* grid (gx, gy) of blocks, each a process; 0 when every block ended well within the time */
template <class Prog> static int launch(const Prog &pg, I rows, I cols, unsigned gx, unsigned gy, unsigned char *tmp) {
  gridDim.x = gx; gridDim.y = gy; blockDim.x = T;
  fflush(stdout); fflush(stderr);
  std::vector<pid_t> kids;
  for (unsigned y = 0; y < gy; ++y)
    for (unsigned x = 0; x < gx; ++x) {
      pid_t p = fork();
      if (p == 0) { run_block(pg, rows, cols, tmp, x, y); _exit(0); }
      if (p < 0) { perror("fork"); for (pid_t k : kids) kill(k, SIGKILL); return 1; }
      kids.push_back(p);
    }
  int bad = 0;
  size_t left = kids.size();
  const time_t t0 = time(nullptr);
  std::vector<char> done(kids.size(), 0);
  while (left) {
    for (size_t i = 0; i < kids.size(); ++i) {
      if (done[i]) continue;
      int st = 0;
      pid_t r = waitpid(kids[i], &st, WNOHANG);
      if (r == kids[i]) { done[i] = 1; --left; if (!WIFEXITED(st) || WEXITSTATUS(st)) bad = 1; }
    }
    if (left && time(nullptr) - t0 > 300) {   /* a launch that never ends: a failure, not a hung test */
      fprintf(stderr, "rowgrid_emu: a launch of %u x %u blocks still runs after 300 s: killed\n", gx, gy);
      for (size_t i = 0; i < kids.size(); ++i) if (!done[i]) { kill(kids[i], SIGKILL); waitpid(kids[i], nullptr, 0); }
      return 1;
    }
    if (left) usleep(2000);
  }
  return bad;
}

/* memory every block (process) shares */
static void *shared_alloc(size_t n) {
  void *p = mmap(nullptr, n ? n : 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); exit(2); }
  return p;
}
static void shared_free(void *p, size_t n) { munmap(p, n ? n : 16); }

static int fails, checks;
static void report(const char *what, I rows, I cols, unsigned S, unsigned groups, bool ok, const char *why) {
  ++checks;
  if (!ok) { ++fails; printf("FAIL %s %dx%d S %u groups %u: %s\n", what, rows, cols, S, groups, why); }
}

/* float64 references */
static void ref_softmax(const float *x, double *r, I rows, I C) {
  for (I i = 0; i < rows; ++i) {
    const float *xr = x + (int64_t)i * C;
    double m = -INFINITY, s = 0;
    for (I c = 0; c < C; ++c) m = xr[c] > m ? xr[c] : m;
    for (I c = 0; c < C; ++c) s += exp((double)xr[c] - m);
    for (I c = 0; c < C; ++c) r[(int64_t)i * C + c] = exp((double)xr[c] - m) / s;
  }
}
static void ref_layernorm(const float *x, double *r, I rows, I C) {
  for (I i = 0; i < rows; ++i) {
    const float *xr = x + (int64_t)i * C;
    double s = 0, q = 0;
    for (I c = 0; c < C; ++c) s += xr[c];
    const double mean = s / C;
    for (I c = 0; c < C; ++c) q += (xr[c] - mean) * (xr[c] - mean);
    const double rs = 1.0 / sqrt(q / C + 1e-5);
    for (I c = 0; c < C; ++c) r[(int64_t)i * C + c] = (xr[c] - mean) * rs;
  }
}
static void ref_rmsnorm(const float *x, double *r, I rows, I C) {
  for (I i = 0; i < rows; ++i) {
    const float *xr = x + (int64_t)i * C;
    double q = 0;
    for (I c = 0; c < C; ++c) q += (double)xr[c] * xr[c];
    const double rs = 1.0 / sqrt(q / C + 1e-6);
    for (I c = 0; c < C; ++c) r[(int64_t)i * C + c] = xr[c] * rs;
  }
}
/* ||out - ref|| / ||ref|| within tol, every value finite */
static bool close(const float *o, const double *r, int64_t n, double tol, char *why, size_t wn) {
  double e = 0, d = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(o[i])) { snprintf(why, wn, "value %lld is %g", (long long)i, (double)o[i]); return false; }
    e += (o[i] - r[i]) * (o[i] - r[i]);
    d += r[i] * r[i];
  }
  const double rel = d > 0 ? sqrt(e / d) : sqrt(e);
  snprintf(why, wn, "relative error %.3g (tolerance %.1g)", rel, tol);
  return rel <= tol;
}

/* one program over rows x cols at S blocks a row and `groups` row groups: two
** launches on one temp (same bits, counts left 0), the fallback, float64 */
template <class Prog>
static void check(const char *what, void (*ref)(const float *, double *, I, I), I rows, I cols, unsigned S, unsigned groups,
                  std::mt19937_64 &rng) {
  const int64_t n = (int64_t)rows * cols;
  const size_t nb = (size_t)n * 4 + 64;
  float *x = (float *)shared_alloc(nb), *y = (float *)shared_alloc(nb), *y2 = (float *)shared_alloc(nb);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (int64_t i = 0; i < n; ++i) x[i] = nd(rng) + 0.5f;
  const int64_t slot = sizeof(gk_row_grid_slot<typename Prog::OpA::A, typename Prog::OpB::A>);
  const size_t tb = (size_t)gk_rows_grid_temp(groups, S, slot);
  unsigned char *tmp = (unsigned char *)shared_alloc(tb);   /* zero, as the lowering's temp_zero */
  std::vector<double> r((size_t)n);
  ref(x, r.data(), rows, cols);
  char why[160];
  Prog pg;
  pg.in0 = x; pg.C = cols;
  pg.out0 = y;
  int rc = launch(pg, rows, cols, S, groups, tmp);
  report(what, rows, cols, S, groups, rc == 0, "a block failed or hung (first launch)");
  if (rc == 0) report(what, rows, cols, S, groups, close(y, r.data(), n, 1e-5, why, sizeof why), why);
  pg.out0 = y2;
  rc = launch(pg, rows, cols, S, groups, tmp);   /* the same temp, not cleared */
  report(what, rows, cols, S, groups, rc == 0, "a block failed or hung (second launch, temp reused)");
  if (rc == 0) report(what, rows, cols, S, groups, memcmp(y, y2, (size_t)n * 4) == 0, "the second launch's bits differ");
  bool zero = true;
  for (unsigned g = 0; g < groups; ++g)
    zero = zero && *(unsigned *)(tmp + g * gk_row_grid_stride(S, (unsigned long long)slot)) == 0;
  report(what, rows, cols, S, groups, zero, "a barrier's count is not 0 after the launch");
  /* the fallback: gridDim.x == 1, a block a row group streams its rows */
  memset(y2, 0, (size_t)n * 4);
  rc = launch(pg, rows, cols, 1, groups, tmp);
  report(what, rows, cols, 1, groups, rc == 0, "a block failed (fallback)");
  if (rc == 0) report(what, rows, cols, 1, groups, close(y2, r.data(), n, 1e-5, why, sizeof why), why);
  shared_free(x, nb); shared_free(y, nb); shared_free(y2, nb); shared_free(tmp, tb);
}

static void all(I rows, I cols, unsigned S, unsigned groups, std::mt19937_64 &rng) {
  check<SoftmaxOnline>("softmax online", ref_softmax, rows, cols, S, groups, rng);
  check<Softmax>("softmax two exchanges", ref_softmax, rows, cols, S, groups, rng);
  check<Layernorm>("layernorm", ref_layernorm, rows, cols, S, groups, rng);
  check<Rmsnorm>("rmsnorm", ref_rmsnorm, rows, cols, S, groups, rng);
}

int main(int argc, char **argv) {
  const unsigned long long seed = argc > 1 ? strtoull(argv[1], nullptr, 10) : 1;
  const bool lng = argc > 2 && !strcmp(argv[2], "long");
  std::mt19937_64 rng(seed);
  printf("rowgrid_emu: seed %llu\n", seed);
  struct { I rows, cols; unsigned S, groups; } cs[] = {
    {1, 1, 2, 1}, {2, 31, 2, 2}, {3, 33, 3, 3}, {2, 1000, 4, 2}, {3, 1000, 2, 2}, {5, 1001, 3, 2},
    {1, 65537, 8, 1}, {3, 65537, 5, 3}, {2, 65539, 16, 1}, {1, 1000003, 6, 1},
  };
  for (auto &c : cs) all(c.rows, c.cols, c.S, c.groups, rng);
  if (lng) {
    all(3, 1000003, 8, 3, rng);
    all(2, (1 << 20) + 1, 12, 2, rng);
  } else check<SoftmaxOnline>("softmax online", ref_softmax, 2, (1 << 20) + 1, 4, 2, rng);
  printf("%d passed, %d failed\n", checks - fails, fails);
  return fails ? 1 : 0;
}
