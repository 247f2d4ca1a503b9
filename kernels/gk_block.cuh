/*
** gk_block.cuh -- block-level reduce and scan built on gk_warp.cuh.
**
** THREADS is the block size (a multiple of 32, at most 1024).  The caller
** owns the shared scratch: declare `__shared__ typename X::TempStorage ts;`
** (or carve it from dynamic shared memory) and pass it in.  Every call ends
** with the scratch free for reuse only after a __syncthreads() by the caller
** (the *_all variants do the trailing barrier themselves).
*/
#ifndef GK_BLOCK_CUH
#define GK_BLOCK_CUH
#include "gk_warp.cuh"

template <int THREADS, class Op> struct gk_block_reduce {
  typedef typename Op::A A;
  enum { WARPS = THREADS / 32 };
  struct TempStorage { A warp[WARPS]; A all; };
  TempStorage &ts;
  GK_DEV gk_block_reduce(TempStorage &t) : ts(t) {}

  /* Result valid in thread 0.  Fixed order: warp trees, then warp 0 over the
  ** warp partials in warp order. */
  GK_DEV A reduce(A v, const Op &op) {
    v = gk_warp_reduce<32>(v, op);
    if (WARPS == 1) return v;
    const int w = threadIdx.x >> 5;
    if (gk_lane() == 0) ts.warp[w] = v;
    __syncthreads();
    if (w == 0) {
      A x = gk_lane() < WARPS ? ts.warp[gk_lane()] : op.identity();
      v = gk_warp_reduce<(WARPS > 16 ? 32 : WARPS > 8 ? 16 : WARPS > 4 ? 8 : WARPS > 2 ? 4 : 2)>(x, op);
    }
    return v;
  }
  /* Result in every thread (one extra barrier). */
  GK_DEV A reduce_all(A v, const Op &op) {
    v = reduce(v, op);
    if (threadIdx.x == 0) ts.all = v;
    __syncthreads();
    v = ts.all;
    __syncthreads();
    return v;
  }
};

/* Block scan of one value per thread. */
template <int THREADS, class Op> struct gk_block_scan {
  typedef typename Op::A A;
  enum { WARPS = THREADS / 32 };
  struct TempStorage { A warp[WARPS]; };
  TempStorage &ts;
  GK_DEV gk_block_scan(TempStorage &t) : ts(t) {}

  /* Exclusive scan; *aggregate gets the block total in every thread.
  ** Ends with a barrier, so ts may be reused right after. */
  GK_DEV A exclusive(A v, const Op &op, A *aggregate) {
    A wtot;
    A ex = gk_warp_scan_excl<32>(v, op, &wtot);
    if (WARPS == 1) { *aggregate = wtot; return ex; }
    const int w = threadIdx.x >> 5;
    if (gk_lane() == 31) ts.warp[w] = wtot;
    __syncthreads();
    A pre = op.identity(), tot = op.identity();
#pragma unroll
    for (int k = 0; k < WARPS; ++k) {
      A t = ts.warp[k];
      if (k < w) pre = op(pre, t);
      tot = op(tot, t);
    }
    __syncthreads();
    *aggregate = tot;
    return w == 0 ? ex : (gk_lane() == 0 ? pre : op(pre, ex));
  }
  GK_DEV A inclusive(A v, const Op &op, A *aggregate) {
    A ex = exclusive(v, op, aggregate);
    return op(ex, v);
  }
};

#endif /* GK_BLOCK_CUH */
