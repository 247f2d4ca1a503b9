/*
** tests/transpose_emu.cpp -- kernels/gk_transpose.cuh's gk_transpose_narrow
** (a transpose with a side of at most 32) run on the host: a block is
** GK_TN_THREADS fibers (ucontext) switched at __syncthreads, blocks one after
** another over one shared buffer (`__shared__` is `static` here), the
** launch as runtime/cuda_lower.c writes it (launch.h's K, run and grid).
** Each case transposes fresh random data of every element size (1, 4, 8
** bytes), batched or not, with 32- and 64-bit indices, from base pointers
** 0..31 elements past a 128-byte line (the windows align on the pointer),
** and compares with out[b, c, r] = in[b, r, c] written here.  The elements
** just before and after the output are checked untouched; under
** `make transpose-emu-asan` reads outside the input fault too.
** Also counts, per warp access of global memory (32 lanes, one window), the
** 32-byte sectors it touches against the fewest its bytes could: the kernel
** claims whole sectors except at the ends of a block's rows.
** No GPU: this checks the indexing and the data flow, not the hardware.
** Build and run: make transpose-emu.
*/
#include <ucontext.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <map>
#include <sys/mman.h>
#include <unistd.h>

/* ---- CUDA on the host (tests/emu_cuda.h), and what this emulation adds ---- */
#include "emu_cuda.h"
#define GK_EMU_NT 256   /* GK_TN_THREADS (checked below) */
struct dim3 { unsigned x = 0, y = 0, z = 0; };
static dim3 threadIdx, blockIdx, blockDim, gridDim;
static ucontext_t emu_main, emu_fib[GK_EMU_NT];
static unsigned emu_cur;
static inline void __syncthreads() { swapcontext(&emu_fib[emu_cur], &emu_main); }

#include "gk_transpose.cuh"
#include "launch.h"

/* ---- a launch: a block's threads as fibers on this thread, run in turn to
** their next __syncthreads; every thread of a block must reach each barrier
** (a thread that ends while others wait is an error); blocks in order ------ */
static_assert(GK_EMU_NT == GK_TN_THREADS, "the emulation's block");
struct Launch {
  dim3 grid;
  void (*body)(void *);
  void *arg;
};
static Launch *emu_launch;
static bool emu_done[GK_EMU_NT];
static int emu_diverged;
static void fiber_entry() { emu_launch->body(emu_launch->arg); emu_done[emu_cur] = true; }
static void launch(Launch &L) {
  const unsigned NT = GK_EMU_NT;
  static std::vector<char> stacks((size_t)NT << 17);
  blockDim.x = NT; blockDim.y = 1; blockDim.z = 1; gridDim = L.grid;
  emu_launch = &L;
  for (unsigned by = 0; by < L.grid.y; ++by)
    for (unsigned bx = 0; bx < L.grid.x; ++bx) {
      blockIdx.x = bx; blockIdx.y = by; blockIdx.z = 0;
      for (unsigned t = 0; t < NT; ++t) {
        getcontext(&emu_fib[t]);
        emu_fib[t].uc_stack.ss_sp = &stacks[(size_t)t << 17];
        emu_fib[t].uc_stack.ss_size = (size_t)1 << 17;
        emu_fib[t].uc_link = &emu_main;
        makecontext(&emu_fib[t], fiber_entry, 0);
        emu_done[t] = false;
      }
      for (;;) {
        unsigned done = 0;
        for (unsigned t = 0; t < NT; ++t) {
          if (emu_done[t]) { ++done; continue; }
          emu_cur = t; threadIdx.x = t; threadIdx.y = 0; threadIdx.z = 0;
          swapcontext(&emu_main, &emu_fib[t]);
          done += emu_done[t];
        }
        if (done == NT) break;
        if (done) { ++emu_diverged; break; }          /* some ended while others wait at a barrier */
      }
    }
}

template <class T, class Idx> struct Args { const T *in; T *out; Idx R, C, run; };
template <class T, int K, bool SCOLS, class Idx> static void body(void *p) {
  Args<T, Idx> *a = (Args<T, Idx> *)p;
  gk_transpose_narrow<T, K, SCOLS, Idx>(a->in, a->out, a->R, a->C, a->run);
}

/* bytes of readable memory between two PROT_NONE pages: the input's reads
** before its first or past its last element fault */
struct Guarded {
  char *base = nullptr; size_t len = 0;
  char *data(size_t bytes, bool at_end) {
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (bytes + pg - 1) / pg * pg;
    len = body + 2 * pg;
    base = (char *)mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) { perror("mmap"); exit(2); }
    mprotect(base, pg, PROT_NONE);
    mprotect(base + pg + body, pg, PROT_NONE);
    return at_end ? base + pg + body - bytes : base + pg;
  }
  ~Guarded() { if (base) munmap(base, len); }
};

static int fails, cases;

/* One case: batch x R x C of T, bytes staged (launch.h: K), index type Idx; the input at a page's
** start (at_end 0) or ending at a page's end (1: then any alignment), the output oo elements past a line. */
template <class T, class Idx>
static void one(std::mt19937_64 &rng, long long B, long long R, long long C, int bytes, bool at_end, int oo) {
  const int esz = (int)sizeof(T);
  const int K = gk_transpose_narrow_k(esz, bytes);
  const long long S = R < C ? R : C, n = B * R * C;
  if (S > K / 32) return;                              /* the lowering's bound */
  const long long run = gk_transpose_narrow_run(S, K);
  const gk_launch gl = gk_transpose_narrow_launch(R, C, B, run);
  const int G = 64;                                    /* guard elements around the output */
  Guarded gi;
  T *in = (T *)gi.data((size_t)n * esz, at_end);
  std::vector<T> vout(n + 2 * G + 32 + 128 / esz);
  T *out = (T *)(((uintptr_t)vout.data() + 127) & ~(uintptr_t)127) + G + oo;
  for (long long i = 0; i < n; ++i) {
    unsigned long long r = rng();
    if (esz == 1) in[i] = (T)(r & 1); else memcpy(&in[i], &r, esz);   /* bool: 0 / 1; others: any bits */
  }
  for (long long i = -G; i < n + G; ++i) memset(&out[i], 0xA5, esz);
  Launch L;
  L.grid.x = (unsigned)gl.grid[0]; L.grid.y = (unsigned)gl.grid[1]; L.grid.z = 1;
  Args<T, Idx> args = {in, out, (Idx)R, (Idx)C, (Idx)run};
  L.arg = &args;
  if (C <= R) L.body = K == 1024 ? body<T, 1024, true, Idx> : K == 2048 ? body<T, 2048, true, Idx> : body<T, 4096, true, Idx>;
  else L.body = K == 1024 ? body<T, 1024, false, Idx> : K == 2048 ? body<T, 2048, false, Idx> : body<T, 4096, false, Idx>;
  launch(L);
  long long bad = 0, first = -1;
  for (long long b = 0; b < B; ++b)
    for (long long r = 0; r < R; ++r)
      for (long long c = 0; c < C; ++c) {
        const long long o = b * R * C + c * R + r, i = b * R * C + r * C + c;
        if (memcmp(&out[o], &in[i], esz)) { if (first < 0) first = o; ++bad; }
      }
  unsigned char z[8];
  memset(z, 0xA5, 8);
  for (long long i = -G; i < 0; ++i) bad += memcmp(&out[i], z, esz) != 0;
  for (long long i = n; i < n + G; ++i) bad += memcmp(&out[i], z, esz) != 0;
  ++cases;
  if (bad) {
    ++fails;
    printf("FAIL %dB idx%d %lldx%lldx%lld K %d run %lld input %s, output +%d: %lld wrong (first at %lld)\n", esz,
           (int)sizeof(Idx) * 8, B, R, C, K, run, at_end ? "at a page end" : "at a page start", oo, bad, first);
  }
}

/* The 32-byte sectors the warp accesses of a case touch, summed, against the sectors of its input
** and output (the excess: sectors two accesses share), and the accesses that touch more sectors
** than their bytes need (none: each window starts on a line or at the range's start).  The
** contiguous side by the kernel's rule (item i of thread t: element i * NT + t - head), the strided
** side by the kernel's own walk (gk_tn_walk, each thread's windows recorded). */
template <class T, int K, bool SCOLS>
static void sectors(long long R, long long C, long long B, long long *got, long long *least, long long *over) {
  const long long S = SCOLS ? C : R, L = SCOLS ? R : C;
  const long long run = gk_transpose_narrow_run(S, K);
  const T *in = (const T *)(uintptr_t)4096;
  const T *out = (const T *)(uintptr_t)((size_t)1 << 40);
  *got = *least = *over = 0;
  constexpr int NT = GK_TN_THREADS, NW = NT / 32, IS = K / 128, IC = K / NT + 1;
  std::map<std::pair<int, int>, std::vector<unsigned long long>> acc;   /* (warp, item) -> lanes' addresses */
  auto count = [&]() {
    for (auto &kv : acc) {
      std::vector<unsigned long long> &a = kv.second;
      long long u = 0;
      for (size_t k = 0; k < a.size(); ++k) u += k == 0 || a[k] / 32 != a[k - 1] / 32;
      const long long fewest = ((long long)a.size() * (long long)sizeof(T) + 31) / 32;
      *got += u; *over += u > fewest;
    }
    acc.clear();
  };
  *least = 2 * ((B * R * C * (long long)sizeof(T) + 31) / 32);    /* both arrays from a line */
  for (long long b = 0; b < B; ++b)
    for (long long l0 = 0; l0 < L; l0 += run) {
      const long long n = (l0 + run < L ? l0 + run : L) - l0, N = n * S;
      const T *cp = (SCOLS ? in : out) + b * R * C + l0 * S;
      const int head = (int)(((unsigned long long)(size_t)cp / sizeof(T)) & 31);
      for (int t = 0; t < NT; ++t)
        for (int i = 0; i < IC; ++i) {
          const long long j = i * NT + t - head;
          if (j >= 0 && j < N) acc[{t >> 5, i}].push_back((unsigned long long)(size_t)(cp + j));
        }
      count();
      const T *sp = (SCOLS ? out : in) + b * R * C;
      for (int t = 0; t < NT; ++t) {
        threadIdx.x = (unsigned)t;
        gk_tn_walk<IS, NW>(sp, L, l0, (int)S, (int)n, [&](int i, int, long long row, int dl) {
          acc[{t >> 5, i}].push_back((unsigned long long)(size_t)(sp + row + l0 + dl));
        });
      }
      count();
    }
}

template <class T> static void all_shapes(std::mt19937_64 &rng, bool big) {
  struct Sh { long long B, R, C; };
  std::vector<Sh> sh = {{1, 1, 1}, {1, 31, 33}, {1, 33, 31}, {1, 1, 5}, {1, 5, 1}, {1, 17, 1000}, {1, 1000, 17},
                        {2, 3, 100001}, {2, 100001, 3}, {1, 2, 77}, {1, 77, 2}, {1, 32, 999}, {1, 999, 32},
                        {3, 31, 1}, {1, 22, 4097}, {1, 4097, 22}, {1, 30, 1025}, {1, 1025, 30}, {1, 64, 129},
                        {1, 129, 64}, {1, 33, 100}, {1, 100, 33}, {5, 7, 9}};
  if (big) { sh.push_back({1, 3, 1000003}); sh.push_back({1, 1000003, 3}); }
  for (const Sh &s : sh)
    for (int bytes : {GK_TN_BYTES, 4096, 16384}) {
      if (bytes != GK_TN_BYTES && s.R * s.C * s.B > 300000) continue;
      one<T, int>(rng, s.B, s.R, s.C, bytes, false, (int)(rng() % 32));
      one<T, int>(rng, s.B, s.R, s.C, bytes, true, (int)(rng() % 32));
      if (bytes == GK_TN_BYTES) one<T, long long>(rng, s.B, s.R, s.C, bytes, true, (int)(rng() % 32));
    }
}

int main(int argc, char **argv) {
  std::mt19937_64 rng(argc > 1 ? strtoull(argv[1], nullptr, 10) : 2501);
  const bool big = !(argc > 2 && !strcmp(argv[2], "quick"));
  all_shapes<float>(rng, big);
  all_shapes<double>(rng, big);
  all_shapes<unsigned char>(rng, big);
  all_shapes<int>(rng, false);
  all_shapes<long long>(rng, false);
  printf("transpose-emu: %d cases, %d failed, %d blocks with threads past a barrier others wait at\n", cases, fails,
         emu_diverged);
  fails += emu_diverged;
  /* sectors: 3 x 1000003 and 1000003 x 3 (f32, f64), 17 x 1000, 1000 x 32, batched 2 x 3 x 100001 */
  struct Sc { const char *name; long long R, C, B; int esz; };
  const Sc sc[] = {{"3x1000003 f32", 3, 1000003, 1, 4}, {"1000003x3 f32", 1000003, 3, 1, 4},
                   {"3x1000003 f64", 3, 1000003, 1, 8}, {"1000003x3 f64", 1000003, 3, 1, 8},
                   {"17x1000 f32", 17, 1000, 1, 4}, {"1000x32 f32", 1000, 32, 1, 4},
                   {"2x3x100001 f32", 3, 100001, 2, 4}};
  for (const Sc &c : sc) {
    if (!big && c.R * c.C > 200000) continue;
    long long got, least, over;
    const bool scols = c.C <= c.R;
    if (c.esz == 4) {
      if (scols) sectors<float, 2048, true>(c.R, c.C, c.B, &got, &least, &over);
      else sectors<float, 2048, false>(c.R, c.C, c.B, &got, &least, &over);
    } else {
      if (scols) sectors<double, 1024, true>(c.R, c.C, c.B, &got, &least, &over);
      else sectors<double, 1024, false>(c.R, c.C, c.B, &got, &least, &over);
    }
    printf("  sectors %-15s %lld touched, %lld in the arrays (%.4fx); %lld warp accesses over their fewest\n", c.name,
           got, least, (double)got / least, over);
  }
  printf("transpose-emu: %d passed, %d failed\n", cases - (fails < cases ? fails : cases), fails);
  return fails ? 1 : 0;
}
