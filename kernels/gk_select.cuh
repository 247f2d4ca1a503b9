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
** Temp: tile state for Idx sums (launch.h gk_select_launch(n).temp_bytes),
** zero when allocated; epoch as for gk_scan.  Counts are integers, so the
** look-back's order of additions cannot change a result.
*/
#ifndef GK_SELECT_CUH
#define GK_SELECT_CUH
#include "gk_scan.cuh"

/* THREADS x ITEMS (<= 32) elements per tile; SLEEP and GW as gk_scan_policy. */
template <int THREADS_, int ITEMS_, int SLEEP_ = 0, int GW_ = 32> struct gk_select_policy {
  enum { THREADS = THREADS_, ITEMS = ITEMS_, TILE = THREADS_ * ITEMS_, SLEEP = SLEEP_, GW = GW_ };
};
typedef gk_select_policy<256, 32> gk_select_policy_default;   /* launch.h GK_SELECT_* */

template <class P, bool PARTITION, class Load, class Store, class Idx>
GK_DEV void gk_select(Idx n, const Load &load, const Store &store, gk_i64 *count, void *tile_state, gk_u32 epoch) {
  typedef typename Load::X X;
  typedef gk_op_sum<Idx> Op;                   /* counts fit the index type */
  enum { K = P::ITEMS, WARPS = P::THREADS / 32, WSPAN = 32 * P::ITEMS };
  static_assert(P::ITEMS <= 32, "flags of a lane's items live in one 32-bit word");
  __shared__ int wsum[WARPS];
  __shared__ Idx block_excl;
  const Idx tile = blockIdx.x;
  const int warp = threadIdx.x >> 5, lane = gk_lane();
  const Idx base = tile * (Idx)P::TILE;
  const bool full = n - base >= (Idx)P::TILE;
  const Idx wbase = base + (Idx)warp * WSPAN;
  const unsigned lt = (1u << lane) - 1u;
  X v[K];
  unsigned bits = 0;                           /* bit k: item k selected */
  if (full) {
#pragma unroll
    for (int k = 0; k < K; ++k) bits |= (unsigned)load(wbase + k * 32 + lane, v[k]) << k;
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const Idx i = wbase + k * 32 + lane;
      if (i < n) bits |= (unsigned)load(i, v[k]) << k;
    }
  }
  int wcount = __popc(bits);
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) wcount += __shfl_xor_sync(GK_FULL_MASK, wcount, d);
  if (lane == 0) wsum[warp] = wcount;
  __syncthreads();
  int wpre = 0, agg = 0;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) { const int c = wsum[w]; if (w < warp) wpre += c; agg += c; }
  Idx excl = 0;
  if (gridDim.x > 1) {
    if (warp == 0) {
      const Idx e = gk_lookback<P>(tile_state, (Idx)gridDim.x, tile, (Idx)agg, Op(), epoch);
      if (lane == 0) block_excl = tile > 0 ? e : 0;
    }
    __syncthreads();
    excl = block_excl;
  }
  if (tile == (Idx)gridDim.x - 1 && threadIdx.x == 0) *count = (gk_i64)(excl + agg);
  Idx rank = excl + wpre;                      /* selected before this warp's span */
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Idx i = wbase + k * 32 + lane;
    const unsigned m = __ballot_sync(GK_FULL_MASK, (bits >> k) & 1u);
    const Idx r = rank + __popc(m & lt);
    if ((bits >> k) & 1u) store(r, v[k], i);
    else if (PARTITION && (full || i < n)) store(n - 1 - (i - r), v[k], i);
    rank += __popc(m);
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
