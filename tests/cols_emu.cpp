/*
** tests/cols_emu.cpp -- kernels/gk_cols.cuh's gk_col_reduce run on the host:
** a block is 256 fibres (ucontext) taking turns, __syncthreads a switch back
** to the scheduler, which runs every fibre to its next barrier before any
** goes past it (pthreads were too slow on two cores); the blocks of a
** launch one after another in a random order (so a different block takes
** the last ticket and folds the splits each time), over the real kernel
** text (the Makefile compiles a copy of gk_cols.cuh without the column scan,
** whose inline PTX does not build here).
**   Programs shaped as runtime/cuda_lower.c writes them (S1 / O1 / K): the
** sum of f32 in float and in double, the max of f32, argmax of f32 (ties to
** the first row), and the element count with the sum of the flat indices
** in int64 (each element read exactly once).  Shapes: 1x1, 31x33, 33x31,
** 1000003x3, 100000x1000, 2^20+1 x 2 (and 7 and 1000 columns), and few rows
** (33x100003, 1x5003, 5x1000, 70x999: strips past 32 lanes); splits 1, 8,
** the plan's (launch.h gk_col_reduce_plan_k, 132 SMs) and many (up to past
** one a row step) and each pack the width allows on the small shapes, the
** plan's splits and those of cs=8 at lower_cols's pack on the big ones.
** Checked: against float64 loops (max, argmax and the count exact, the f32
** sum to 1e-5 of the column's sum of |x|, the f64 one to a relative
** 1e-12), and the same bits for two block orders.
** No GPU: this checks the indexing and the data flow, not the hardware.
** Build and run: make cols-emu.
*/
#include <ucontext.h>
#include <functional>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

/* ---- CUDA on the host (tests/emu_cuda.h), and what this emulation adds ---- */
#include "emu_cuda.h"
struct dim3 { unsigned x = 0, y = 0, z = 0; };
static dim3 threadIdx, blockIdx, blockDim, gridDim;
/* the block's 256 fibres: on x86-64 a switch of the callee-saved registers
** and the stack (ucontext's swapcontext makes a system call a switch: 4 ms a
** block), elsewhere ucontext */
static bool emu_done[256];
static unsigned emu_cur;
static std::vector<char> emu_stacks;
static std::function<void()> emu_kernel;
static const size_t emu_stack = 1 << 17;
#if defined(__x86_64__)
extern "C" void emu_switch(void **save_sp, void *to_sp);
asm(".text\n.globl emu_switch\n.type emu_switch,@function\nemu_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n");
static void *emu_sched, *emu_fib[256];
static inline void __syncthreads() { emu_switch(&emu_fib[emu_cur], emu_sched); }
static void emu_entry() {
  emu_kernel();
  emu_done[emu_cur] = true;
  emu_switch(&emu_fib[emu_cur], emu_sched);   /* never resumed */
  abort();
}
static void emu_start(unsigned t) {
  /* 6 registers, then the return address at a 16-aligned slot (the entry's rsp is 8 mod 16, as after a call) */
  uintptr_t top = ((uintptr_t)(emu_stacks.data() + (t + 1) * emu_stack) & ~(uintptr_t)15) - 16;
  void **sp = (void **)top;
  sp[0] = (void *)emu_entry;
  sp[1] = 0;
  for (int k = 1; k <= 6; ++k) sp[-k] = 0;
  emu_fib[t] = (void *)(sp - 6);
}
static inline void emu_resume(unsigned t) { emu_switch(&emu_sched, emu_fib[t]); }
#else
static ucontext_t emu_sched, emu_fib[256];
static inline void __syncthreads() { swapcontext(&emu_fib[emu_cur], &emu_sched); }
static void emu_entry() { emu_kernel(); emu_done[emu_cur] = true; }   /* then uc_link: the scheduler */
static void emu_start(unsigned t) {
  getcontext(&emu_fib[t]);
  emu_fib[t].uc_stack.ss_sp = emu_stacks.data() + t * emu_stack;
  emu_fib[t].uc_stack.ss_size = emu_stack;
  emu_fib[t].uc_link = &emu_sched;
  makecontext(&emu_fib[t], emu_entry, 0);
}
static inline void emu_resume(unsigned t) { swapcontext(&emu_sched, &emu_fib[t]); }
#endif
/* one block: each round runs every live fibre up to its next barrier (or its end) */
static void emu_block() {
  emu_stacks.resize(256 * emu_stack);
  for (unsigned t = 0; t < 256; ++t) { emu_start(t); emu_done[t] = false; }
  for (bool live = true; live;) {
    live = false;
    for (unsigned t = 0; t < 256; ++t)
      if (!emu_done[t]) { emu_cur = t; threadIdx.x = t; emu_resume(t); live = true; }
  }
}

static inline void __syncwarp(unsigned = 0xffffffffu) {}
template <class T> T __shfl_xor_sync(unsigned, T v, int, int = 32) { abort(); return v; }
template <class T> T __shfl_sync(unsigned, T v, int, int = 32) { abort(); return v; }
template <class T> T __shfl_up_sync(unsigned, T v, unsigned, int = 32) { abort(); return v; }
template <class T> T __shfl_down_sync(unsigned, T v, unsigned, int = 32) { abort(); return v; }
static inline unsigned __ballot_sync(unsigned, int p) { return p; }

#include "gk_cols.cuh"   /* the Makefile's copy (no column scan) */
#include "launch.h"

typedef int I;

/* one field and its operator, as lower_cols writes S1 / O1 */
template <class T, class M> struct Op1 {
  struct A { T f0; };
  M o0;
  A identity() const { A r; r.f0 = o0.identity(); return r; }
  A operator()(const A &a, const A &b) const { A r; r.f0 = o0(a.f0, b.f0); return r; }
};
/* two fields (count and index sum) */
struct OpCnt {
  struct A { gk_i64 n, s; };
  A identity() const { return A{0, 0}; }
  A operator()(const A &a, const A &b) const { return A{a.n + b.n, a.s + b.s}; }
};

/* K as lower_cols writes it: load N consecutive columns (gk_ld), lift, out */
template <class Op_, class Lift> struct Prog {
  struct XF { float f0; };
  typedef XF X;
  typedef Op_ Op;
  Op op;
  const float *in0; typename Op::A *out0; I C;
  template <int N> void load(X *d, I row, I col) const {
    float v[N]; gk_ld<N>(v, in0 + (gk_i64)row * C + col);
    for (int kk = 0; kk < N; ++kk) d[kk].f0 = v[kk];
  }
  typename Op::A lift(const X &x, I row, I col) const { return Lift()(x.f0, row, col, C); }
  void out(I col, const typename Op::A &a) const { out0[col] = a; }
};
struct LiftSumF { Op1<float, gk_op_sum<float>>::A operator()(float v, I, I, I) const { return {v}; } };
struct LiftSumD { Op1<double, gk_op_sum<double>>::A operator()(float v, I, I, I) const { return {(double)v}; } };
struct LiftMax { Op1<float, gk_op_max<float>>::A operator()(float v, I, I, I) const { return {v}; } };
struct LiftArg { Op1<gk_vi<float>, gk_op_argmax<float>>::A operator()(float v, I r, I, I) const { return {gk_vi<float>{v, (gk_i64)r}}; } };
struct LiftCnt { OpCnt::A operator()(float, I r, I c, I C) const { return {1, (gk_i64)r * C + c + 1}; } };

/* ---- the launch: blocks one after another in a random order ------------- */
template <class Pol, class Pg>
static void launch(const Pg &pg, I rows, I cols, int64_t gx, int64_t gy, uint64_t seed) {
  std::vector<typename Pg::Op::A> part(gy > 1 ? gy * cols : 1);
  std::vector<gk_u32> ctr(gx, 0u);
  std::vector<int64_t> order(gx * gy);
  for (int64_t i = 0; i < gx * gy; ++i) order[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  gridDim.x = (unsigned)gx; gridDim.y = (unsigned)gy; blockDim.x = 256;
  emu_kernel = [&]() { gk_col_reduce<Pol>(rows, cols, pg, part.data(), ctr.data()); };
  for (int64_t b : order) {
    blockIdx.x = (unsigned)(b % gx); blockIdx.y = (unsigned)(b / gx);
    emu_block();
  }
}

static int g_fail = 0, g_pass = 0;
static void check(bool ok, const char *what, I R, I C, int tx, int pk, int u, int64_t splits) {
  if (ok) ++g_pass; else ++g_fail;
  if (!ok) printf("FAIL %s %dx%d tx %d pack %d u %d splits %lld\n", what, R, C, tx, pk, u, (long long)splits);
}

/* every program at one geometry, two block orders */
template <int TX, int PK, int U>
static void run_geom(const std::vector<float> &x, I R, I C, int64_t gy, const std::vector<double> &sum,
                     const std::vector<double> &asum,
                     const std::vector<float> &mx, const std::vector<gk_i64> &am, uint64_t seed) {
  typedef gk_cols_policy<TX, PK, U> Pol;
  const int64_t gx = gk_cdiv64(C, TX * PK);
  {
    typedef Prog<Op1<float, gk_op_sum<float>>, LiftSumF> Pg;
    std::vector<Pg::Op::A> o1(C), o2(C);
    Pg p; p.in0 = x.data(); p.C = C;
    p.out0 = o1.data(); launch<Pol>(p, R, C, gx, gy, seed);
    p.out0 = o2.data(); launch<Pol>(p, R, C, gx, gy, seed * 7 + 1);
    bool ok = true;
    for (I j = 0; j < C; ++j) {
      bool e = memcmp(&o1[j], &o2[j], sizeof o1[j]) == 0 && std::fabs(o1[j].f0 - sum[j]) <= 1e-5 * std::max(1.0, asum[j]);
      if (!e && ok) printf("  col %d: %.9g %.9g, float64 %.9g\n", j, o1[j].f0, o2[j].f0, sum[j]);
      ok &= e;
    }
    check(ok, "sum f32", R, C, TX, PK, U, gy);
  }
  {
    typedef Prog<Op1<double, gk_op_sum<double>>, LiftSumD> Pg;
    std::vector<Pg::Op::A> o1(C), o2(C);
    Pg p; p.in0 = x.data(); p.C = C;
    p.out0 = o1.data(); launch<Pol>(p, R, C, gx, gy, seed + 3);
    p.out0 = o2.data(); launch<Pol>(p, R, C, gx, gy, seed * 5 + 2);
    bool ok = true;
    for (I j = 0; j < C; ++j)
      ok &= memcmp(&o1[j], &o2[j], sizeof o1[j]) == 0 && std::fabs(o1[j].f0 - sum[j]) <= 1e-12 * std::max(1.0, std::fabs(sum[j]));
    check(ok, "sum f64", R, C, TX, PK, U, gy);
  }
  {
    typedef Prog<Op1<float, gk_op_max<float>>, LiftMax> Pg;
    std::vector<Pg::Op::A> o1(C);
    Pg p; p.in0 = x.data(); p.C = C; p.out0 = o1.data();
    launch<Pol>(p, R, C, gx, gy, seed + 5);
    bool ok = true;
    for (I j = 0; j < C; ++j) ok &= o1[j].f0 == mx[j];
    check(ok, "max f32", R, C, TX, PK, U, gy);
  }
  {
    typedef Prog<Op1<gk_vi<float>, gk_op_argmax<float>>, LiftArg> Pg;
    std::vector<Pg::Op::A> o1(C);
    Pg p; p.in0 = x.data(); p.C = C; p.out0 = o1.data();
    launch<Pol>(p, R, C, gx, gy, seed + 9);
    bool ok = true;
    for (I j = 0; j < C; ++j) ok &= o1[j].f0.i == am[j];
    check(ok, "argmax f32", R, C, TX, PK, U, gy);
  }
  {
    typedef Prog<OpCnt, LiftCnt> Pg;
    std::vector<Pg::Op::A> o1(C);
    Pg p; p.in0 = x.data(); p.C = C; p.out0 = o1.data();
    launch<Pol>(p, R, C, gx, gy, seed + 11);
    bool ok = true;
    for (I j = 0; j < C; ++j) {
      gk_i64 s = 0;
      for (I r = 0; r < R; ++r) s += (gk_i64)r * C + j + 1;
      ok &= o1[j].n == R && o1[j].s == s;
    }
    check(ok, "each element once", R, C, TX, PK, U, gy);
  }
}

/* the width and pack the plan takes, U as the plan's packs */
template <int PK, int U>
static bool by_tx(int tx, const std::vector<float> &x, I R, I C, int64_t gy, const std::vector<double> &sum,
                  const std::vector<double> &asum,
                  const std::vector<float> &mx, const std::vector<gk_i64> &am, uint64_t seed) {
  switch (tx) {
    case 1: run_geom<1, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
    case 2: run_geom<2, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
    case 4: run_geom<4, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
    case 8: run_geom<8, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
    case 16: run_geom<16, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
    case 32: run_geom<32, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
    case 64: run_geom<64, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
    case 128: run_geom<128, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
    case 256: run_geom<256, PK, U>(x, R, C, gy, sum, asum, mx, am, seed); return true;
  }
  return false;
}

static void run_shape(I R, I C, uint64_t seed, bool many) {
  std::mt19937_64 rng(seed ^ ((uint64_t)R * 1000003u + C));
  std::uniform_real_distribution<float> U(-1.0f, 1.0f);
  std::vector<float> x((size_t)R * C);
  for (auto &v : x) v = U(rng);
  /* ties for argmax: a few exact repeats of a column's max */
  for (I j = 0; j < C && R > 2; j += 3) { x[(size_t)(R / 2) * C + j] = 2.0f; x[(size_t)(R - 1) * C + j] = 2.0f; }
  std::vector<double> sum(C, 0.0), asum(C, 0.0);
  std::vector<float> mx(C, -INFINITY);
  std::vector<gk_i64> am(C, 0);
  for (I r = 0; r < R; ++r)
    for (I j = 0; j < C; ++j) {
      float v = x[(size_t)r * C + j];
      sum[j] += v;
      asum[j] += std::fabs(v);
      if (v > mx[j]) { mx[j] = v; am[j] = r; }
    }
  for (int vec = 1; vec <= 4; vec *= 2) {
    if (C % vec || (!many && vec != (C % 4 == 0 ? 4 : C % 2 == 0 ? 2 : 1))) continue;   /* big: lower_cols's pack */
    gk_launch L = gk_col_reduce_plan_k(R, C, vec, 132, 8, 0);
    gk_rows_knobs k8 = {}; k8.cs = 8;
    gk_launch L8 = gk_col_reduce_plan_k(R, C, vec, 132, 8, &k8);
    const int64_t step = (256 / L.width) * L.packs;
    /* and a row step a split: the last split holds rows and splits % TY != 0 on most shapes */
    std::vector<int64_t> gys = {1, L8.grid[1], L.grid[1]};
    if (L.grid[0] * gk_cdiv64(R, step) <= 5000) gys.push_back(gk_cdiv64(R, step));   /* (emulation time) */
    if (many) { gys.push_back(gk_min64(65535, gk_cdiv64(R, step) + 3)); gys.push_back(R > 1000 ? 1000 : 97); }
    std::sort(gys.begin(), gys.end());
    gys.erase(std::unique(gys.begin(), gys.end()), gys.end());
    for (int64_t gy : gys) {
      bool ok = vec == 1 ? (L.packs == 4 ? by_tx<1, 4>(L.width, x, R, C, gy, sum, asum, mx, am, seed)
                                          : by_tx<1, 16>(L.width, x, R, C, gy, sum, asum, mx, am, seed))
              : vec == 2 ? by_tx<2, 8>(L.width, x, R, C, gy, sum, asum, mx, am, seed)
                         : by_tx<4, 4>(L.width, x, R, C, gy, sum, asum, mx, am, seed);
      if (!ok || (vec == 1 && L.packs != 4 && L.packs != 16) || (vec == 2 && L.packs != 8) || (vec == 4 && L.packs != 4)) {
        printf("FAIL no instance %dx%d vec %d width %d packs %d\n", R, C, vec, L.width, L.packs);
        ++g_fail;
      }
    }
    printf("%dx%d vec %d: plan tx %d packs %d grid %lld x %lld (cs=8: %lld), emulated splits", R, C, vec, L.width,
           L.packs, (long long)L.grid[0], (long long)L.grid[1], (long long)L8.grid[1]);
    for (int64_t gy : gys) printf(" %lld", (long long)gy);
    printf("\n");
  }
}

int main(int argc, char **argv) {
  uint64_t seed = argc > 1 ? strtoull(argv[1], 0, 10) : 1;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  struct { I r, c; bool many; } sh[] = {{1, 1, true}, {31, 33, true}, {33, 31, true}, {1000, 7, true}, {2049, 2, true},
                                        {1000003, 3, false}, {(1 << 20) + 1, 2, false}, {100000, 7, false},
                                        {100000, 1000, false}, {8192, 1000, false},
                                        {33, 100003, false}, {1, 5003, true}, {5, 1000, true}, {70, 999, true}};
  for (auto &s : sh) run_shape(s.r, s.c, seed, s.many);
  printf("cols-emu: %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
