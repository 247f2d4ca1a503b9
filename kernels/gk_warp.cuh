/*
** gk_warp.cuh -- warp-level reduce and scan on shuffles.
**
** Any trivially-copyable accumulator type moves through the shuffles as
** 32-bit words.  WIDTH (a power of two <= 32) splits a warp into independent
** logical warps of WIDTH lanes (row kernels use it for short rows).
** Combination order is fixed by lane number, so results are deterministic.
*/
#ifndef GK_WARP_CUH
#define GK_WARP_CUH
#include "gk_common.cuh"

template <class T> union gk_words_ {
  T t;
  int w[(sizeof(T) + 3) / 4];
  GK_DEV gk_words_() {}
};

template <class T> GK_DEV T gk_shfl_down(T v, unsigned d, int width = 32) {
  gk_words_<T> u; u.t = v;
#pragma unroll
  for (int k = 0; k < (int)((sizeof(T) + 3) / 4); ++k) u.w[k] = __shfl_down_sync(GK_FULL_MASK, u.w[k], d, width);
  return u.t;
}
template <class T> GK_DEV T gk_shfl_up(T v, unsigned d, int width = 32) {
  gk_words_<T> u; u.t = v;
#pragma unroll
  for (int k = 0; k < (int)((sizeof(T) + 3) / 4); ++k) u.w[k] = __shfl_up_sync(GK_FULL_MASK, u.w[k], d, width);
  return u.t;
}
template <class T> GK_DEV T gk_shfl_xor(T v, int m, int width = 32) {
  gk_words_<T> u; u.t = v;
#pragma unroll
  for (int k = 0; k < (int)((sizeof(T) + 3) / 4); ++k) u.w[k] = __shfl_xor_sync(GK_FULL_MASK, u.w[k], m, width);
  return u.t;
}
template <class T> GK_DEV T gk_shfl(T v, int src, int width = 32) {
  gk_words_<T> u; u.t = v;
#pragma unroll
  for (int k = 0; k < (int)((sizeof(T) + 3) / 4); ++k) u.w[k] = __shfl_sync(GK_FULL_MASK, u.w[k], src, width);
  return u.t;
}

GK_DEV int gk_lane() { return threadIdx.x & 31; }

/* Reduce over WIDTH lanes; the result is valid in the logical warp's lane 0.
** Lower lanes are the left operand: r = op(v[lane], v[lane + d]). */
template <int WIDTH, class Op>
GK_DEV typename Op::A gk_warp_reduce(typename Op::A v, const Op &op) {
#pragma unroll
  for (int d = WIDTH / 2; d > 0; d >>= 1) v = op(v, gk_shfl_down(v, d, WIDTH));
  return v;
}
/* Reduce over WIDTH lanes, result in every lane (butterfly).  Every lane
** computes the same combination tree modulo operand order, so for
** commutative operators (all of gk_op_*) every lane holds identical bits. */
template <int WIDTH, class Op>
GK_DEV typename Op::A gk_warp_allreduce(typename Op::A v, const Op &op) {
#pragma unroll
  for (int m = WIDTH / 2; m > 0; m >>= 1) {
    typename Op::A o = gk_shfl_xor(v, m, WIDTH);
    /* keep a fixed (lower lane first) operand order so non-commutative ops work */
    v = ((gk_lane() & m) == 0) ? op(v, o) : op(o, v);
  }
  return v;
}
/* Inclusive scan over WIDTH lanes (Kogge-Stone). */
template <int WIDTH, class Op>
GK_DEV typename Op::A gk_warp_scan_incl(typename Op::A v, const Op &op) {
  const int l = gk_lane() & (WIDTH - 1);
#pragma unroll
  for (int d = 1; d < WIDTH; d <<= 1) {
    typename Op::A t = gk_shfl_up(v, d, WIDTH);
    if (l >= d) v = op(t, v);
  }
  return v;
}
/* Exclusive scan over WIDTH lanes; lane 0 gets identity.  *total gets the
** logical warp's aggregate in every lane. */
template <int WIDTH, class Op>
GK_DEV typename Op::A gk_warp_scan_excl(typename Op::A v, const Op &op, typename Op::A *total) {
  typename Op::A inc = gk_warp_scan_incl<WIDTH>(v, op);
  *total = gk_shfl(inc, WIDTH - 1, WIDTH);
  typename Op::A ex = gk_shfl_up(inc, 1, WIDTH);
  return (gk_lane() & (WIDTH - 1)) == 0 ? op.identity() : ex;
}

#endif /* GK_WARP_CUH */
