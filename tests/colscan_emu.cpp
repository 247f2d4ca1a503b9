/*
** tests/colscan_emu.cpp -- kernels/gk_cols.cuh's column scan look-back (LB 2)
** run on the host: blocks are OS threads taking tiles by ticket, as the
** persistent grid does; inside a block the code between two barriers runs
** thread after thread (the glue below mirrors gk_col_scan's LB 2 branch
** barrier for barrier), and the phases are the kernel's own functions
** (gk_col_lb_fetch, gk_col_lb_groups, gk_col_lb_state) over a host
** descriptor codec: each 8-byte entry one relaxed atomic, the entries of a
** descriptor stored and loaded one by one with random yields between (torn
** reads must be refused), and in the "lazy" runs most group prefixes (PRE)
** never published, so the look-back must go back past its first window
** (the far path) and fold the groups' aggregates.  Every run of a case --
** one block, 4 blocks, 16 blocks with yields, 16 lazy blocks -- must give
** the same bits, and those must match a float64 (or exact integer) column
** scan.  Shapes: 1x1, 31x33, 33x31, 1000003x3, 4097x65, 33x1000003 (and a
** few more), sum of f32 (double accumulator), sum of i32 (u64), max of f32,
** min of i32, inclusive and exclusive.  Shapes of fewer rows than a tile
** (128) also run LB 0, a thread a column (gk_col_scan_seq, what the
** lowering takes there), against the same reference.
** No GPU: this checks the protocol and the fold order, not the hardware.
** Build and run: make colscan-emu (`colscan_emu SEED quick`: 33 x 1000003
** by LB 0 only; without quick, by every path too: about 1.5 minutes on 2
** busy cores).
*/
#include <pthread.h>
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

static inline int __syncthreads_or(int p) { return p; }
static inline int __all_sync(unsigned, int p) { return p; }

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <type_traits>
#define GK_COL_LB_BACKOFF() std::this_thread::yield()   /* the kernel's nanosleep */
#include "gk_cols.cuh"
#include "launch.h"

/* ---- the descriptor codec on the host (gk_lb_desc's layout) ---------------- */
static thread_local std::mt19937 *emu_rng;
static int emu_noise;        /* yields between the entries and phases */
static int emu_lazy;         /* skip most PRE publications of groups */
static const gk_u64 *emu_lo, *emu_hi;   /* the state buffer: every descriptor must lie in it */
static void emu_in(const gk_u64 *d, int ent) {
  if (d < emu_lo || d + ent > emu_hi) { fprintf(stderr, "descriptor outside the state buffer\n"); exit(1); }
}
static void emu_jitter() {
  if (!emu_noise || !emu_rng) return;
  const unsigned r = (*emu_rng)() & 1023;
  if (r < 3) std::this_thread::yield();
  else if (r < 24) for (volatile int i = 0; i < 500; i = i + 1) {}
}
template <class A> struct HD {
  enum { WORDS = (int)((sizeof(A) + 3) / 4), ENT = WORDS == 1 ? 1 : (WORDS + 1) / 2 * 2, BYTES = 8 * ENT };
  union U { A a; gk_u32 w[ENT]; U() {} };
  static void put(gk_u64 *d, gk_u32 tag, const A &v) {
    if (emu_lazy && tag == GK_LB_PRE && (gk_u32)__atomic_load_n(d, __ATOMIC_RELAXED) == GK_LB_AGG &&
        emu_rng && (*emu_rng)() % 64 != 0)
      return;   /* a prefix that nobody gets to see */
    emu_in(d, ENT);
    U u;
    for (int k = 0; k < ENT; ++k) u.w[k] = 0;
    u.a = v;
    for (int k = 0; k < ENT; ++k) {
      __atomic_store_n(d + k, (gk_u64)tag | (gk_u64)u.w[k] << 32, __ATOMIC_RELAXED);
      emu_jitter();
    }
  }
  static gk_u32 get(const gk_u64 *d, A &v) {
    gk_u64 e[ENT];
    emu_in(d, ENT);
    for (int k = 0; k < ENT; ++k) {
      e[k] = __atomic_load_n(d + k, __ATOMIC_RELAXED);
      emu_jitter();
    }
    U u;
    gk_u32 tag = (gk_u32)e[0];
    bool same = true;
    for (int k = 0; k < ENT; ++k) { u.w[k] = (gk_u32)(e[k] >> 32); same &= (gk_u32)e[k] == tag; }
    v = u.a;
    if (!same || (tag & 3u) == 0) std::this_thread::yield();   /* not published yet: let its writer run */
    return same ? tag : 0u;
  }
};

/* ---- one launch: nb blocks of gk_col_scan<gk_col_scan_policy<8, 16>> ---------- */
enum { TY = 8, RPT = 16, TILE_ROWS = TY * RPT };
static std::atomic<long> emu_far;   /* tiles that took the far path */

template <class X, class Op, bool EXCL> struct Launch {
  typedef typename Op::A A;
  typedef HD<A> D;
  const X *in; A *out; gk_i64 rows, cols; Op op;
  std::vector<gk_u64> state;
  std::atomic<unsigned> ticket{0};
  gk_i64 strips, rtiles, ntiles;

  void block(unsigned seed) {
    std::mt19937 rng(seed);
    emu_rng = &rng;
    std::unique_ptr<gk_col_lb_smem<A, 64>> lbp(new gk_col_lb_smem<A, 64>());
    gk_col_lb_smem<A, 64> &lb = *lbp;
    A tot[TY][32], carry[32];
    const gk_col_lb_state<D, gk_i64> ls(state.data(), strips, rtiles);
    int order[TY * 32];
    for (int i = 0; i < TY * 32; ++i) order[i] = i;
    /* a phase: every thread of the block, in a random order (the barriers of
    ** the kernel are between phases) */
    auto each = [&](auto f) {
      if (emu_noise) std::shuffle(order, order + TY * 32, rng);
      for (int i = 0; i < TY * 32; ++i) { f(order[i] >> 5, order[i] & 31); emu_jitter(); }
    };
    for (;;) {
      const gk_i64 t = ticket.fetch_add(1);
      if (t >= ntiles) break;
      const gk_i64 rt = t / strips, st = t - rt * strips;
      each([&](int ty, int tx) {
        const gk_i64 c = st * 32 + tx, rb = rt * TILE_ROWS + (gk_i64)ty * RPT;
        A a = op.identity();
        for (int i = 0; i < RPT; ++i)
          if (c < cols && rb + i < rows) a = op(a, op.lift(in[(rb + i) * cols + c], rb + i));
        tot[ty][tx] = a;
      });
      /* gk_col_scan's LB 2 branch; lane arrays for warp 0's registers */
      const gk_i64 g = rt / 32;
      const int j = (int)(rt % 32);
      const bool last = j == 31, more = rt + 1 < rtiles;
      A agg[32], w[32], acc[32], pre[32];
      bool have[32];
      for (int tx = 0; tx < 32; ++tx) {
        agg[tx] = w[tx] = acc[tx] = pre[tx] = op.identity();
        have[tx] = false;
        agg[tx] = tot[0][tx];
        for (int k = 1; k < TY; ++k) agg[tx] = op(agg[tx], tot[k][tx]);
        if (more && !last) D::put(ls.td(rt, st, tx), GK_LB_AGG, agg[tx]);
      }
      if (rt > 0) {
        const gk_i64 gb = g - 32;
        each([&](int ty, int tx) { gk_col_lb_fetch<D, TY>(lb, ls, st, g, j, !last, gb, ty, tx); });
        for (int tx = 0; tx < 32; ++tx) {
          if (j > 0) {
            w[tx] = lb.v[0][tx];
            for (int k = 1; k < j; ++k) w[tx] = op(w[tx], lb.v[k][tx]);
          }
          if (last && more) D::put(ls.gd(g, st, tx), g == 0 ? GK_LB_PRE : GK_LB_AGG, op(w[tx], agg[tx]));
        }
        if (g > 0) {
          if (last) each([&](int ty, int tx) { gk_col_lb_fetch<D, TY>(lb, ls, st, g, 0, true, gb, ty, tx); });
          bool any = false;
          for (int tx = 0; tx < 32; ++tx) { gk_col_lb_groups(lb, op, g, gb, tx, acc[tx], have[tx]); any |= !have[tx]; }
          if (any) {
            emu_far++;
            gk_i64 b = gb;
            for (;;) {
              b -= 32;
              each([&](int ty, int tx) { gk_col_lb_fetch<D, TY>(lb, ls, st, g, 0, true, b, ty, tx); });
              bool nf = false;
              for (int tx = 0; tx < 32; ++tx) {
                bool f = false;
                for (int k = 0; k < 32; ++k) f |= b + k >= 0 && lb.pre[32 + k][tx];
                nf |= !f;
              }
              if (!nf) break;
            }
            for (int tx = 0; tx < 32; ++tx) { have[tx] = false; gk_col_lb_groups(lb, op, g, b, tx, acc[tx], have[tx]); }
            while (b < gb) {
              b += 32;
              each([&](int ty, int tx) { gk_col_lb_fetch<D, TY>(lb, ls, st, g, 0, true, b, ty, tx); });
              for (int tx = 0; tx < 32; ++tx) gk_col_lb_groups(lb, op, g, b, tx, acc[tx], have[tx]);
            }
          }
          for (int tx = 0; tx < 32; ++tx) {
            if (!have[tx]) { fprintf(stderr, "no prefix: tile %lld column %d\n", (long long)rt, tx); exit(1); }
            if (last && more) D::put(ls.gd(g, st, tx), GK_LB_PRE, op(acc[tx], op(w[tx], agg[tx])));
          }
        }
        for (int tx = 0; tx < 32; ++tx) pre[tx] = g == 0 ? w[tx] : j > 0 ? op(acc[tx], w[tx]) : acc[tx];
      }
      for (int tx = 0; tx < 32; ++tx) carry[tx] = pre[tx];
      each([&](int ty, int tx) {
        const gk_i64 c = st * 32 + tx, rb = rt * TILE_ROWS + (gk_i64)ty * RPT;
        if (c >= cols) return;
        A p = rt > 0 ? carry[tx] : op.identity();
        for (int k = 0; k < ty; ++k) p = op(p, tot[k][tx]);
        for (int i = 0; i < RPT; ++i)
          if (rb + i < rows) {
            const A n = op(p, op.lift(in[(rb + i) * cols + c], rb + i));
            out[(rb + i) * cols + c] = EXCL ? p : n;
            p = n;
          }
      });
    }
    emu_rng = nullptr;
  }

  void run(int nb, unsigned seed) {
    strips = (cols + 31) / 32;
    rtiles = (rows + TILE_ROWS - 1) / TILE_ROWS;
    ntiles = strips * rtiles;
    /* launch.h's temp size, less the ticket's 16 bytes (which live in `ticket` here) */
    gk_launch L = gk_col_scan_plan(rows, cols, 132, sizeof(A));
    state.assign((size_t)(L.temp_bytes + 16 + 7) / 8, 0);
    ticket = 0;
    emu_lo = state.data() + 2;
    emu_hi = state.data() + 2 + L.temp_bytes / 8 - 2;   /* past the ticket's 16 bytes */
    std::vector<std::thread> th;
    for (int b = 0; b < nb; ++b) th.emplace_back([this, seed, b] { block(seed * 131u + (unsigned)b); });
    for (auto &x : th) x.join();
  }
};

/* ---- LB 0 (gk_col_scan_seq, fewer rows than a tile): a thread a column, no barrier, so
** the blocks' threads run one after another on this thread ---------------------- */
template <class XT, class A> struct SeqIo {
  typedef XT X;
  const X *in; A *out; gk_i64 cols;
  template <int N> void load(X *d, gk_i64 r, gk_i64 c) const { d[0] = in[r * cols + c]; }
  template <int N> void store(gk_i64 r, gk_i64 c, const A *v) const { out[r * cols + c] = v[0]; }
};
template <class X, class Op, bool EXCL>
static void run_seq(const X *in, typename Op::A *out, gk_i64 R, gk_i64 C) {
  typedef typename Op::A A;
  const int lb = gk_col_scan_lb(R, C, NULL);
  gk_launch L = gk_col_scan_plan_lb(R, C, 132, sizeof(A), lb);
  if (lb != 0 || L.temp_bytes != 0) { fprintf(stderr, "%lldx%lld: not LB 0\n", (long long)R, (long long)C); exit(1); }
  SeqIo<X, A> io{in, out, C};
  blockDim.x = (unsigned)L.block[0]; gridDim.x = (unsigned)L.grid[0];
  for (unsigned b = 0; b < gridDim.x; ++b)
    for (unsigned t = 0; t < blockDim.x; ++t) {
      blockIdx.x = b; threadIdx.x = t;
      gk_col_scan_seq<RPT, EXCL>(R, C, io, Op(), io);
    }
}

/* ---- the cases ------------------------------------------------------------------ */
static int fails, checks;
static bool seq_only;   /* a case's LB 0 run only */   /* one check a run of a case: against the reference, or in bits against run 0 */

/* ref: a float64 (or exact integer) scan of each column; tol: relative to the
** running sum of magnitudes (0: exact) */
template <class X, class Op, bool EXCL>
static void check(const char *name, gk_i64 R, gk_i64 C, unsigned seed) {
  typedef typename Op::A A;
  std::mt19937 rng(seed);
  std::vector<X> in((size_t)(R * C));
  for (auto &v : in) v = (X)((int)(rng() % 2001) - 1000) / (X)(sizeof(X) == 4 && (X)0.5 != 0 ? 7 : 1);
  std::vector<A> ref((size_t)(R * C));
  std::vector<double> mag((size_t)(R * C));
  const Op op;
  const bool fl = (X)0.5 != 0;
  for (gk_i64 c = 0; c < C; ++c) {
    A a = op.identity();
    double s = 0, m = 0;
    for (gk_i64 r = 0; r < R; ++r) {
      const gk_i64 i = r * C + c;
      const A n = fl && std::is_same<A, double>::value ? (A)(s + (double)in[i]) : op(a, op.lift(in[i], r));
      if (std::is_same<A, double>::value) s += (double)in[i];
      m += std::fabs((double)in[i]);
      ref[i] = EXCL ? a : n;
      mag[i] = m;
      a = n;
    }
  }
  auto compare = [&](const std::vector<A> &out, const char *how) {
    gk_i64 bad = 0, worst = -1;
    for (gk_i64 i = 0; i < R * C; ++i) {
      const double d = std::fabs((double)out[i] - (double)ref[i]);
      const bool ok = std::is_same<A, double>::value ? d <= 1e-12 * mag[i] + 1e-300 : out[i] == ref[i];
      if (!ok) { if (!bad) worst = i; ++bad; }
    }
    if (bad) {
      ++fails;
      printf("FAIL %s %lldx%lld%s: %lld elements differ from the reference (first at %lld: %.17g vs %.17g)\n", name,
             (long long)R, (long long)C, how, (long long)bad, (long long)worst, (double)out[worst], (double)ref[worst]);
    }
  };
  if (R < TILE_ROWS) {   /* LB 0, what the lowering takes for these rows */
    ++checks;
    std::vector<A> out((size_t)(R * C));
    run_seq<X, Op, EXCL>(in.data(), out.data(), R, C);
    compare(out, " (a thread a column)");
  }
  if (seq_only) { printf("ok   %s %lldx%lld (a thread a column)\n", name, (long long)R, (long long)C); return; }
  std::vector<A> first;
  struct Cfg { int nb, noise, lazy; } cfg[] = {{1, 0, 0}, {4, 0, 0}, {16, 1, 0}, {16, 1, 1}};
  const gk_i64 big = R * C > 4000000;   /* 33 x 1000003 */
  for (int k = 0; k < 4; ++k) {
    if (big && cfg[k].noise) continue;   /* 33 x 1000003: one row tile a strip, no look-back to disturb */
    ++checks;
    std::vector<A> out((size_t)(R * C));
    Launch<X, Op, EXCL> L;
    L.in = in.data(); L.out = out.data(); L.rows = R; L.cols = C;
    emu_noise = cfg[k].noise; emu_lazy = cfg[k].lazy;
    emu_far = 0;
    L.run(cfg[k].nb, seed + (unsigned)k);
    const long far = emu_far;
    if (k == 0) {
      first = out;
      compare(out, "");
    } else if (memcmp(first.data(), out.data(), first.size() * sizeof(A))) {
      ++fails;
      printf("FAIL %s %lldx%lld: run %d (%d blocks%s%s) differs in bits from run 0\n", name, (long long)R, (long long)C, k,
             cfg[k].nb, cfg[k].noise ? ", yields" : "", cfg[k].lazy ? ", lazy prefixes" : "");
    }
    if (cfg[k].lazy) printf("  %s %lldx%lld lazy: %ld tiles took the far path\n", name, (long long)R, (long long)C, far);
  }
  printf("ok   %s %lldx%lld\n", name, (long long)R, (long long)C);
}

int main(int argc, char **argv) {
  const unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  setvbuf(stdout, NULL, _IOLBF, 0);
  const gk_i64 shapes[][2] = {{1, 1}, {31, 33}, {33, 31}, {129, 1}, {4097, 65}, {128 * 32 * 33 + 5, 2},
                              {1000003, 3}, {33, 1000003}};
  const bool quick = argc > 2 && !strcmp(argv[2], "quick");   /* make test: not 33 x 1000003 (one tile a strip, 1.2 GB) */
  for (auto &s : shapes) {
    const gk_i64 R = s[0], C = s[1];
    seq_only = quick && R * C > 4000000;   /* quick: 33 x 1000003 by a thread a column only (seconds) */
    check<float, gk_op_sum<double>, false>("sum f32", R, C, seed);
    if (R * C > 1000000) continue;   /* the long ones: one op (the rest is the same code) */
    check<float, gk_op_sum<double>, true>("excl sum f32", R, C, seed + 1);
    check<int, gk_op_sum<gk_u64>, false>("sum i32", R, C, seed + 2);
    check<float, gk_op_max<float>, false>("max f32", R, C, seed + 3);
    check<int, gk_op_min<int>, true>("excl min i32", R, C, seed + 4);
  }
  printf("colscan-emu: %d passed, %d failed\n", checks - fails, fails);
  return fails != 0;
}
