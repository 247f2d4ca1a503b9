/*
** tests/kernels/rows_launch.cuh -- row programs launched the way the runtime
** launches them: gk_rows_plan's (mode, width, packs, pack), then the matching
** instantiation.  Shared by test_kernels.cu and bench_kernels.cu so that both
** follow every plan launch.h can make.
*/
#ifndef GK_TEST_ROWS_LAUNCH_CUH
#define GK_TEST_ROWS_LAUNCH_CUH
#include "gk_rows.cuh"
extern "C" {
#include "launch.h"
}

template <class P, class Prog> __global__ void __launch_bounds__(P::THREADS) k_row_cached(gk_i64 R, gk_i64 C, Prog p) { gk_row_cached<P>(R, C, p); }
template <class P, class Prog> __global__ void __launch_bounds__(P::THREADS) k_row_stream(gk_i64 R, gk_i64 C, Prog p) { gk_row_stream<P>(R, C, p); }
template <class P, class Prog> __global__ void __launch_bounds__(P::THREADS) k_row_split(gk_i64 R, gk_i64 C, Prog p, typename Prog::OpA::A *part, gk_u32 *ctr) { gk_row_split<P>(R, C, p, part, ctr); }

/* Launch the row program the way the runtime would: plan, then pick the
** matching instantiation. Returns false if no instantiation matches. */
template <class Prog, int PK>
static bool launch_rows_pk(const gk_launch &L, gk_i64 R, gk_i64 C, const Prog &p, cudaStream_t st = 0) {
  dim3 g((unsigned)L.grid[0], (unsigned)L.grid[1]);
#define GK_W(W, NP) if (L.mode == GK_ROWS_WARP && L.width == W && L.packs == NP && L.block[0] == 128) { \
    k_row_cached<gk_rows_policy<128, W, NP, PK>><<<g, 128, 0, st>>>(R, C, p); return true; } \
  if (L.mode == GK_ROWS_WARP && L.width == W && L.packs == NP && L.block[0] == 256) { \
    k_row_cached<gk_rows_policy<256, W, NP, PK>><<<g, 256, 0, st>>>(R, C, p); return true; }
  GK_W(1, 1) GK_W(2, 1) GK_W(4, 1) GK_W(8, 1) GK_W(16, 1) GK_W(32, 1) GK_W(32, 2) GK_W(32, 4) GK_W(32, 8)
  GK_W(1, 2) GK_W(2, 2) GK_W(4, 2) GK_W(8, 2) GK_W(16, 2)   /* short rows: two packs per lane */
#define GK_B(T) if (L.mode == GK_ROWS_BLOCK && L.width == T && L.packs == 4) { \
    k_row_cached<gk_rows_policy<T, T, 4, PK>><<<g, T, 0, st>>>(R, C, p); return true; }
  GK_B(128) GK_B(256) GK_B(512) GK_B(1024)
#define GK_B8(T) if (L.mode == GK_ROWS_BLOCK && L.width == T && L.packs == 8) { \
    k_row_cached<gk_rows_policy<T, T, 8, PK>><<<g, T, 0, st>>>(R, C, p); return true; }
  GK_B8(256) GK_B8(512)   /* half the threads, 8 packs (launch.h) */
  if (L.mode == GK_ROWS_STREAM) { k_row_stream<gk_rows_policy<1024, 1024, 4, PK>><<<g, 1024, 0, st>>>(R, C, p); return true; }
  return false;
#undef GK_W
#undef GK_B
#undef GK_B8
}
/* A pure row reduction the way gk_row_reduce_plan says (split mode, or launch_rows). */
template <class Prog>
static bool launch_row_reduce(const gk_launch &L, gk_i64 R, gk_i64 C, const Prog &p, typename Prog::OpA::A *part,
                              gk_u32 *ctr, cudaStream_t st = 0) {
  if (L.mode != GK_ROWS_SPLIT) return launch_rows(L, R, C, p, st);
  dim3 g((unsigned)L.grid[0], (unsigned)L.grid[1]);
#define GK_S(T, NP, PK) if (L.width == T && L.packs == NP && L.pack == PK) { \
    k_row_split<gk_rows_policy<T, T, NP, PK>><<<g, T, 0, st>>>(R, C, p, part, ctr); return true; }
  GK_S(256, 4, 4) GK_S(256, 4, 1) GK_S(256, 16, 4) GK_S(512, 8, 1)
#undef GK_S
  return false;
}
template <class Prog>
static bool launch_rows(const gk_launch &L, gk_i64 R, gk_i64 C, const Prog &p, cudaStream_t st = 0) {
  return L.pack == 4 ? launch_rows_pk<Prog, 4>(L, R, C, p, st) : launch_rows_pk<Prog, 1>(L, R, C, p, st);
}

#endif
