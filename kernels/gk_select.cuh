/*
** gk_select.cuh -- single-pass stable stream compaction (filter) and
** partition, with the decoupled look-back of gk_scan.cuh carrying the count
** of selected elements before each tile.
**
** Within a warp, item k of lane l is element wbase + 32k + l, so ballots give
** each selected element its rank in index order directly (no transposes).
**
** Functors:
**   Load : typedef X; bool operator()(Idx i, X &v) const;  // v = value, returns the flag
**   Store: void operator()(Idx dst, const X &v, Idx src) const;
**          filter   : called for each selected element, dst = its rank.
**          partition: called for every element; a selected one goes to
**                     dst = rank among selected, an unselected one to
**                     dst = n - 1 - rank among unselected (so the unselected
**                     land REVERSED at the end: follow with gk_reverse_tail
**                     over [count, n) to make them stable).
**   count: one gk_i64, written by the last tile.
** Temp: tile state for gk_i64 sums (launch.h gk_select_temp_bytes), zero
** when allocated; epoch as for gk_scan.
*/
#ifndef GK_SELECT_CUH
#define GK_SELECT_CUH
#include "gk_scan.cuh"

template <int THREADS_, int ITEMS_> struct gk_select_policy {
  enum { THREADS = THREADS_, ITEMS = ITEMS_, TILE = THREADS_ * ITEMS_ };
};
typedef gk_select_policy<256, 16> gk_select_policy_default;

template <class P, bool PARTITION, class Load, class Store, class Idx>
GK_DEV void gk_select(Idx n, const Load &load, const Store &store, gk_i64 *count, void *tile_state, gk_u32 epoch) {
  typedef typename Load::X X;
  typedef gk_op_sum<gk_i64> Op;
  enum { K = P::ITEMS, WARPS = P::THREADS / 32, WSPAN = 32 * P::ITEMS };
  __shared__ gk_i64 wsum[WARPS];
  __shared__ gk_i64 block_excl;
  const Op op;
  const Idx tile = blockIdx.x;
  const int warp = threadIdx.x >> 5, lane = gk_lane();
  const Idx wbase = tile * (Idx)P::TILE + (Idx)warp * WSPAN;
  const unsigned lt = (1u << lane) - 1u;
  X v[K];
  unsigned m[K];
  int wcount = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Idx i = wbase + k * 32 + lane;
    bool f = false;
    if (i < n) f = load(i, v[k]);
    m[k] = __ballot_sync(GK_FULL_MASK, f);
    wcount += __popc(m[k]);
  }
  if (lane == 0) wsum[warp] = wcount;
  __syncthreads();
  gk_i64 wpre = 0, agg = 0;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) { gk_i64 c = wsum[w]; if (w < warp) wpre += c; agg += c; }
  if (warp == 0) {
    gk_i64 e = gk_lookback(gk_tile_state<gk_i64>(tile_state, gk_cdiv(n, (Idx)P::TILE)), tile, agg, op, epoch);
    if (lane == 0) {
      block_excl = e;
      if (tile == (Idx)gridDim.x - 1) *count = e + agg;
    }
  }
  __syncthreads();
  gk_i64 rank = block_excl + wpre;             /* selected before this warp's span */
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Idx i = wbase + k * 32 + lane;
    const bool f = (m[k] >> lane) & 1u;
    const gk_i64 r = rank + __popc(m[k] & lt);
    if (f) store((Idx)r, v[k], i);
    else if (PARTITION && i < n) store(n - 1 - (i - (Idx)r), v[k], i);
    rank += __popc(m[k]);
  }
}

/* Reverse a[lo, hi) in place (the unselected tail of a partition).
** Grid: ceil((hi - lo) / 2 / THREADS) blocks of THREADS (launch.h). */
template <class T, class Idx>
GK_DEV void gk_reverse_tail(T *a, Idx lo, Idx hi) {
  const Idx half = (hi - lo) / 2;
  for (Idx k = (Idx)blockIdx.x * blockDim.x + threadIdx.x; k < half; k += (Idx)gridDim.x * blockDim.x) {
    T x = a[lo + k], y = a[hi - 1 - k];
    a[lo + k] = y; a[hi - 1 - k] = x;
  }
}

#endif /* GK_SELECT_CUH */
