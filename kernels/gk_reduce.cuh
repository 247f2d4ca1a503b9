/*
** gk_reduce.cuh -- deterministic single-pass grid reduction.
**
** Every block folds a fixed, contiguous-tiled share of [0, n) into per-thread
** accumulators, reduces them to one block partial, writes it to
** partials[blockIdx.x], and takes a ticket from an integer counter after a
** __threadfence().  The block that draws the last ticket reads all partials
** in index order, combines them with a fixed tree, applies the epilogue and
** resets the counter to 0.  No floating-point atomics: for a given (n, grid)
** the bits are the same on every run.
**
** Several reductions in one pass: make Op's accumulator a struct (see
** gk_op_pair below, or write one: Welford mean/var is gk_op_welford).
**
** Functor contracts (all members const, __device__):
**   Load : typedef X;  template <int N> void load(X *dst, Idx i) const;
**          writes elements i .. i+N-1 to dst.  N is 1 or Policy::VEC; when
**          N > 1, i % N == 0 and the host guarantees 16-byte alignment.
**   Op   : see gk_common.cuh (identity, operator(), lift(x, i), optional
**          fold(acc, x, i): elements are added with gk_fold); optional
**          template <int U, int V> void fold_tile(A (&acc)[U],
**          const X (&x)[U][V], const Idx (&j)[U]): a full tile's elements of
**          one thread at once (x[u][v] is element j[u] + v, for acc[u]).  Must be
**          associative AND commutative (per-thread accumulators interleave).
**          Optional template <int THREADS> void block_align(A &v) const:
**          called by every thread before each block tree; it may move v to
**          an equal value that merges more cheaply (gk_fused.cuh's online
**          max/sum-exp pair: every thread's sum rescaled to the block's max).
**   Epi  : void operator()(const typename Op::A &r) const;  called once, by
**          thread 0 of the finishing block, with the total.
** Temp:  partials: grid * sizeof(A) bytes (no init needed);
**        counter : one gk_u32, zero before the FIRST launch; every launch
**                  leaves it zero again.
*/
#ifndef GK_REDUCE_CUH
#define GK_REDUCE_CUH
#include "gk_block.cuh"

template <int THREADS_, int ITEMS_, int VEC_> struct gk_reduce_policy {
  enum { THREADS = THREADS_,   /* block size */
         ITEMS = ITEMS_,       /* independent vector loads in flight per thread */
         VEC = VEC_,           /* elements per load (1 when unaligned) */
         TILE = THREADS_ * ITEMS_ * VEC_ };
};
/* 512 x 4 x float4 = 8192 elements per block tile.  launch.h: GK_REDUCE_*. */
typedef gk_reduce_policy<512, 4, 4> gk_reduce_policy_v4;
/* 8-byte elements: 512 x 8 x 2 (eight 16-byte loads in flight per thread,
** eight independent accumulators), the same 8192-element tile as v4. */
typedef gk_reduce_policy<512, 8, 2> gk_reduce_policy_v2;
typedef gk_reduce_policy<512, 8, 1> gk_reduce_policy_v1;

/* Two reductions of the same element as one accumulator; nest for more. */
template <class O1, class O2> struct gk_op_pair {
  struct A { typename O1::A a; typename O2::A b; };
  O1 o1; O2 o2;
  GK_DEV A identity() const { A r; r.a = o1.identity(); r.b = o2.identity(); return r; }
  GK_DEV A operator()(A x, A y) const { A r; r.a = o1(x.a, y.a); r.b = o2(x.b, y.b); return r; }
  template <class X, class I> GK_DEV A lift(X x, I i) const { A r; r.a = o1.lift(x, i); r.b = o2.lift(x, i); return r; }
};

/* Coherent (L2) load of any POD written by another block in this launch. */
template <class T> GK_DEV T gk_ld_cg(const T *p) {
  gk_words_<T> u;
  const int *q = reinterpret_cast<const int *>(p);
#pragma unroll
  for (int k = 0; k < (int)((sizeof(T) + 3) / 4); ++k) u.w[k] = __ldcg(q + k);
  return u.t;
}
template <class T> GK_DEV void gk_st_cg(T *p, const T &v) {
  gk_words_<T> u; u.t = v;
  int *q = reinterpret_cast<int *>(p);
#pragma unroll
  for (int k = 0; k < (int)((sizeof(T) + 3) / 4); ++k) __stcg(q + k, u.w[k]);
}

/* One full tile's elements of this thread, x[u][v] at index j[u] + v, into
** acc[u]: op.fold_tile(acc, x, j) where Op has one (the online max/sum-exp
** folds a tile's elements together), else gk_fold each in index order. */
template <int U, int V, class Op, class A, class X, class Idx>
GK_DEV auto gk_fold_tile_(const Op &op, A (&acc)[U], const X (&x)[U][V], const Idx (&j)[U], int)
    -> decltype(op.template fold_tile<U, V>(acc, x, j)) {
  return op.template fold_tile<U, V>(acc, x, j);
}
template <int U, int V, class Op, class A, class X, class Idx>
GK_DEV void gk_fold_tile_(const Op &op, A (&acc)[U], const X (&x)[U][V], const Idx (&j)[U], long) {
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[u] = gk_fold(op, acc[u], x[u][v], j[u] + v);
}

/* op.block_align<THREADS>(v) where Op has it (the contract above), else nothing. */
template <int T, class Op, class A>
GK_DEV auto gk_block_align_(const Op &op, A &v, int) -> decltype(op.template block_align<T>(v)) {
  return op.template block_align<T>(v);
}
template <int T, class Op, class A> GK_DEV void gk_block_align_(const Op &, A &, long) {}

/* Fold this thread's share of [0, n) into one value (the block reduce is the caller's). */
template <class P, class Load, class Op, class Idx>
GK_DEV typename Op::A gk_block_fold(Idx n, const Load &load, const Op &op) {
  typedef typename Op::A A;
  typedef typename Load::X X;
  const int T = P::THREADS, U = P::ITEMS, V = P::VEC;
  const Idx tile = (Idx)P::TILE;
  A acc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = op.identity();
  const Idx ntiles = n / tile;
  for (Idx t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const Idx base = t * tile;
    X x[U][V];
    Idx j[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      j[u] = base + ((Idx)u * T + threadIdx.x) * V;
      load.template load<V>(x[u], j[u]);
    }
    gk_fold_tile_(op, acc, x, j, 0);
  }
  /* ragged tail (< one tile): the block whose turn the next tile would be */
  if ((Idx)blockIdx.x == ntiles % (Idx)gridDim.x) {
    int u = 0;
    for (Idx i = ntiles * tile + threadIdx.x; i < n; i += T) {
      X x[1];
      load.template load<1>(x, i);
      acc[0] = gk_fold(op, acc[0], x[0], i);
      (void)u;
    }
  }
#pragma unroll
  for (int s = 1; s < U; s <<= 1)
#pragma unroll
    for (int u = 0; u + s < U; u += 2 * s) acc[u] = op(acc[u], acc[u + s]);
  return acc[0];
}

/* The whole single-pass reduction; call from a __global__ launched with
** Policy::THREADS threads and gk_reduce_grid() blocks (launch.h). */
template <class P, class Load, class Op, class Epi, class Idx>
GK_DEV void gk_grid_reduce(Idx n, const Load &load, const Op &op, const Epi &epi,
                           typename Op::A *partials, gk_u32 *counter) {
  typedef typename Op::A A;
  __shared__ typename gk_block_reduce<P::THREADS, Op>::TempStorage ts;
  __shared__ int is_last;
  A v = gk_block_fold<P>(n, load, op);
  /* Stage 0 reduces the block's values, stage 1 (the last block to finish)
  ** the blocks' partials: one loop, so the block reduce and the epilogue are
  ** compiled once, not twice. */
#pragma unroll 1
  for (int stage = 0;; ++stage) {
    gk_block_align_<P::THREADS>(op, v, 0);
    v = gk_block_reduce<P::THREADS, Op>(ts).reduce(v, op);
    if (stage == 1 || gridDim.x == 1) {   /* small n: no second stage at all */
      if (threadIdx.x == 0) {
        epi(v);
        if (stage == 1) *counter = 0;     /* ready for the next launch */
      }
      return;
    }
    if (threadIdx.x == 0) {
      gk_st_cg(partials + blockIdx.x, v);
      __threadfence();
      unsigned ticket = atomicAdd(counter, 1u);
      is_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();                      /* also: ts is free again */
    if (!is_last) return;
    __threadfence();
    v = op.identity();
    for (unsigned b = threadIdx.x; b < gridDim.x; b += P::THREADS) v = op(v, gk_ld_cg(partials + b));
  }
}

#endif /* GK_REDUCE_CUH */
