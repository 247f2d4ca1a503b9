/*
** gk_scan.cuh -- single-pass prefix scan with decoupled look-back
** (Merrill & Garland, as in CUB's tile_scan / single_pass_scan_operator).
**
** Each block scans one tile of Policy::TILE elements.  It publishes its
** aggregate (status AGGREGATE), then warp 0 looks back over the preceding
** tiles 32 at a time: it waits until all 32 flags are valid, folds the
** aggregates up to the nearest INCLUSIVE prefix, and repeats further back if
** none was found.  The block then publishes its inclusive prefix.  The
** fold is a left fold forward from the prefix found, which makes results
** bit-identical run to run even for floating-point sums (see gk_lookback).
**
** Flags carry an epoch so the tile-state buffer never needs clearing between
** launches: flag = epoch << 2 | status; a flag from another epoch reads as
** INVALID.  The buffer must be zero when allocated, and each launch that
** reuses it must pass an epoch different from the previous launch's (the host
** counts 1, 2, ... wrapping below 2^30).
**
** Functor contracts:
**   Load : typedef X; template <int N> void load(X *dst, Idx i) const;  (N = 1)
**   Op   : gk_common.cuh contract; associative (need not be commutative).
**   Store: template <int N> void store(Idx i, const typename Op::A *v) const;
** Output element i is op(lift(x0),...,lift(xi)) (inclusive) or the same up to
** i-1 with identity first (exclusive).
*/
#ifndef GK_SCAN_CUH
#define GK_SCAN_CUH
#include "gk_reduce.cuh"

template <int THREADS_, int ITEMS_> struct gk_scan_policy {
  enum { THREADS = THREADS_, ITEMS = ITEMS_, TILE = THREADS_ * ITEMS_ };
};
typedef gk_scan_policy<256, 16> gk_scan_policy_default;   /* 4096 per tile */

#define GK_TILE_AGGREGATE 1u
#define GK_TILE_PREFIX 2u

/* Views into the tile-state temp buffer: flags[ntiles] (u32), then
** aggregates[ntiles] and inclusives[ntiles] (A), each 16-byte aligned.
** Size: launch.h gk_tile_state_bytes(ntiles, sizeof(A)). */
template <class A> struct gk_tile_state {
  gk_u32 *flag; A *agg; A *incl;
  GK_DEV gk_tile_state(void *buf, gk_i64 ntiles) {
    char *p = (char *)buf;
    flag = (gk_u32 *)p;
    gk_i64 off = ((ntiles * 4 + 15) / 16) * 16;
    agg = (A *)(p + off);
    off += ((ntiles * (gk_i64)sizeof(A) + 15) / 16) * 16;
    incl = (A *)(p + off);
  }
};

GK_DEV gk_u32 gk_ld_volatile_u32(const gk_u32 *p) { return *(const volatile gk_u32 *)p; }

/* Called by all 32 lanes of ONE warp of the block owning `tile`, once its
** aggregate is known.  Returns the exclusive prefix of the tile (all lanes)
** and publishes the tile's inclusive prefix. */
template <class Op, class Idx>
GK_DEV typename Op::A gk_lookback(gk_tile_state<typename Op::A> st, Idx tile, typename Op::A agg,
                                  const Op &op, gk_u32 epoch) {
  typedef typename Op::A A;
  const int lane = gk_lane();
  const gk_u32 ep = epoch << 2;
  if (tile == 0) {
    if (lane == 0) {
      gk_st_cg(st.incl, agg);
      __threadfence();
      *(volatile gk_u32 *)st.flag = ep | GK_TILE_PREFIX;
    }
    return op.identity();
  }
  if (lane == 0) {
    gk_st_cg(st.agg + tile, agg);
    __threadfence();
    *(volatile gk_u32 *)(st.flag + tile) = ep | GK_TILE_AGGREGATE;
  }
  /* 1. find the nearest predecessor p with an inclusive prefix, waiting for
  **    every flag between p and tile to be valid, 32 tiles per step. */
  Idx pred = tile - 1, p;
  for (;;) {
    const Idx t = pred - lane;
    gk_u32 f = ep | GK_TILE_PREFIX;           /* lanes before tile 0: pretend prefix */
    if (t >= 0) {
      for (;;) {
        f = gk_ld_volatile_u32(st.flag + t);
        if ((f & ~3u) == ep && (f & 3u)) break;
      }
    }
    __syncwarp();
    const unsigned pm = __ballot_sync(GK_FULL_MASK, (f & 3u) == GK_TILE_PREFIX);
    if (pm) { p = pred - (__ffs(pm) - 1); break; }
    pred -= 32;
  }
  __threadfence();
  /* 2. fold forward from p as a left fold: excl = incl(p) + agg(p+1) + ... +
  **    agg(tile-1).  By induction this is the chained left fold of all tile
  **    aggregates whatever p the race produced, so float results are
  **    bit-identical from run to run. */
  A excl = gk_ld_cg(st.incl + p);
  for (Idx j = p + 1; j < tile; j += 32) {
    A v = op.identity();
    if (j + lane < tile) v = gk_ld_cg(st.agg + j + lane);
    const int m = (int)(tile - j < 32 ? tile - j : 32);
    for (int k = 0; k < m; ++k) excl = op(excl, gk_shfl(v, k));
  }
  if (lane == 0) {
    gk_st_cg(st.incl + tile, op(excl, agg));
    __threadfence();
    *(volatile gk_u32 *)(st.flag + tile) = ep | GK_TILE_PREFIX;
  }
  return excl;
}

/* One tile per block; grid = ceil(n / TILE) (launch.h gk_scan_grid). */
template <class P, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_scan(Idx n, const Load &load, const Op &op, const Store &store, void *tile_state, gk_u32 epoch) {
  typedef typename Op::A A;
  typedef typename Load::X X;
  enum { T = P::THREADS, K = P::ITEMS, WARPS = P::THREADS / 32, WSPAN = 32 * P::ITEMS,
         PADDED = WSPAN + WSPAN / 32 };
  __shared__ A sh[WARPS][PADDED];
  __shared__ typename gk_block_scan<T, Op>::TempStorage bs;
  __shared__ A block_excl;
  const Idx tile = blockIdx.x;
  const int warp = threadIdx.x >> 5, lane = gk_lane();
  const Idx wbase = tile * (Idx)P::TILE + (Idx)warp * WSPAN;
  A *s = sh[warp];
  /* striped, coalesced load -> shared */
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Idx i = wbase + k * 32 + lane;
    A a = op.identity();
    if (i < n) { X x[1]; load.template load<1>(x, i); a = op.lift(x[0], i); }
    const int j = k * 32 + lane;
    s[j + (j >> 5)] = a;
  }
  __syncwarp();
  /* blocked: lane owns items lane*K .. lane*K+K-1 of the warp's span */
  A a[K];
#pragma unroll
  for (int k = 0; k < K; ++k) { const int j = lane * K + k; a[k] = s[j + (j >> 5)]; }
#pragma unroll
  for (int k = 1; k < K; ++k) a[k] = op(a[k - 1], a[k]);
  A agg;
  A tpre = gk_block_scan<T, Op>(bs).exclusive(a[K - 1], op, &agg);
  if (warp == 0) {
    A e = gk_lookback(gk_tile_state<A>(tile_state, gk_cdiv(n, (Idx)P::TILE)), tile, agg, op, epoch);
    if (lane == 0) block_excl = e;
  }
  __syncthreads();
  const A pre = tile == 0 ? tpre : op(block_excl, tpre);
  __syncwarp();
  if (EXCLUSIVE) {
#pragma unroll
    for (int k = K - 1; k > 0; --k) a[k] = op(pre, a[k - 1]);
    a[0] = pre;
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) a[k] = op(pre, a[k]);
  }
#pragma unroll
  for (int k = 0; k < K; ++k) { const int j = lane * K + k; s[j + (j >> 5)] = a[k]; }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Idx i = wbase + k * 32 + lane;
    const int j = k * 32 + lane;
    if (i < n) { A v = s[j + (j >> 5)]; store.template store<1>(i, &v); }
  }
}

#endif /* GK_SCAN_CUH */
