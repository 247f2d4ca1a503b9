/*
** gk_fused.cuh -- device helpers of the kernels compiler/lower.c generates.
**
** Every generated kernel includes this after its primitive's header.  The
** scalar semantics (mod, pow, NaN max, float -> int, rand, the online
** max/sum-exp steps) are kernels/gk_scalar.h's, shared with the cpu
** backend; this file adds only what is device-specific: volatile loads and
** stores of values other blocks wrote, the any/all and online max/sum-exp
** reduction operators, and the grid barrier of the staged kernel.
*/
#ifndef GK_FUSED_CUH
#define GK_FUSED_CUH

#include "gk_common.cuh"

template <class T> GK_DEV T gkl_ld(const T *p) { return *(const volatile T *)p; }
template <class T> GK_DEV void gkl_st(T *p, T v) { *(volatile T *)p = v; }

/* max that propagates NaN (either operand NaN -> NaN); one instruction for
** f32 on sm_80 and later. */
GK_DEV float gkl_max_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return a > b || a != a ? a : b;
#endif
}
GK_DEV double gkl_max_nan(double a, double b) { return a > b || a != a ? a : b; }

/* The online (running max m, sum s of exp(x - m)) pair of a one-pass
** sum(exp(E - m')) (gk_scalar.h's gk_ms_* steps). */
template <class T> struct alignas(8) gkl_ms { T m; double s; };
GK_DEV double gkl_ms_add(double s, float m, float x) { return gk_ms_add_f(s, m, x); }
GK_DEV double gkl_ms_add(double s, double m, double x) { return gk_ms_add_d(s, m, x); }
/* The merge's rescale of s from max m to mnew > m: gk_ms_rescale (exp in
** double), or with F and float maxima s * expf(m - mnew) -- the rounding of
** the elements' own terms (gk_ms_add_f), an FP32 exp where the block and
** grid merges run one after another (whole-array reductions; GK_RED_VARIANT mf, session 26).
** The difference of two floats in double, rounded to float, is their float
** difference (53 >= 2 x 24 + 2 bits: no double rounding); NVVM emits one
** sub.f32 for it. */
template <int F, class T> GK_DEV double gkl_ms_rescale(double s, T m, T mnew) {
  if constexpr (F && sizeof(T) == 4) return s * (double)expf((float)((double)m - (double)mnew));
  else return gk_ms_rescale(s, (double)m, (double)mnew);
}
template <class T, int F = 0> struct gkl_op_ms {
  typedef gkl_ms<T> A;
  GK_DEV A identity() const { A r; r.m = gk_limits<T>::lowest(); r.s = 0.0; return r; }
  GK_DEV A operator()(A a, A b) const {
    if (a.m != a.m) return a;
    if (b.m != b.m) return b;
    if (a.m < b.m) { A t = a; a = b; b = t; }
    if (a.m == b.m) { a.s += b.s; return a; }
    if (b.s == 1.0) a.s = gkl_ms_add(a.s, a.m, b.m);
    else a.s += gkl_ms_rescale<F>(b.s, b.m, a.m);
    return a;
  }
  template <class X, class J> GK_DEV A lift(X x, J) const { A r; r.m = (T)x; r.s = 1.0; return r; }
  /* Before a block tree (gk_reduce.cuh's optional block_align): the block's
  ** max first (a max tree: exact, no exp), then every thread rescales its sum
  ** to it once, in parallel; the tree's merges then all take the a.m == b.m
  ** add.  The merge tree of (m, s) pairs instead has an exp on each of its
  ** ~9 serial levels, twice a launch (the block's and the last block's).
  ** Measured (H100, session 27): no gain the noise shows at 10^6 elements,
  ** where ncu puts sum-exp's extra time in the per-element work; kept for
  ** its shorter serial path (GK_RED_VARIANT ma=-1 leaves it out).  A NaN
  ** max makes every m NaN, as the merge would. */
  template <int THREADS> GK_DEV void block_align(A &a) const {
    __shared__ T wm[THREADS / 32];
    T m = a.m;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m = gkl_max_nan(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) wm[threadIdx.x >> 5] = m;
    __syncthreads();
    m = wm[0];
#pragma unroll
    for (int w = 1; w < THREADS / 32; ++w) m = gkl_max_nan(m, wm[w]);
    if (m != m) a.m = m;
    else if (a.m != m) { a.s = gkl_ms_rescale<F>(a.s, a.m, m); a.m = m; }
  }
};
/* op(a, lift(x)) for one element, without the general merge: x <= m adds
** exp(x - m); a larger x rescales s; a NaN x makes m NaN; a NaN m stays. */
template <class T> GK_DEV gkl_ms<T> gkl_ms_fold(gkl_ms<T> a, T x) {
  if (x <= a.m) a.s = gkl_ms_add(a.s, a.m, x);
  else if (a.m == a.m) {
    if (x != x) a.m = x;
    else { a.s = gk_ms_rescale(a.s, (double)a.m, (double)x) + 1.0; a.m = x; }
  }
  return a;
}
/* A warp's elements of one tile (every lane calls it: gk_block_fold's full
** tiles are the whole block's), e[u][v] folded into this lane's a[u], in two
** steps: the max of the warp's tile first (a NaN-propagating max, no branch
** per element), then -- where it grew (a few times in a warp's life on any
** data: warp-uniform, unlike a per-lane running max) -- one rescale of each
** running sum to it, then branch-free adds at that fixed max.  Every lane's
** (m, s) stays a valid pair (m >= its elements), and each term is gk_ms_add's
** (expf of x - m, added in double): only where the max moves differs from
** gkl_ms_fold's order of rounding.  A NaN in the warp's tile: each
** accumulator that meets one takes its first NaN as m (gkl_ms_fold's), the
** sums no longer matter.  Z = 1: no rescale while every sum is 0 (a lane's
** first tile: s * f is 0 for any f in [0, 1), so the same bits without the
** exp in double, which a block of one tile -- 10^6 elements -- has on its
** serial path; session 27, GK_RED_VARIANT me=-1 the old text). */
template <int Z = 0, int U, int V, class T> GK_DEV void gkl_ms_fold_tile(gkl_ms<T> (&a)[U], const T (&e)[U][V]) {
  T mx = e[0][0];
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int v = 0; v < V; ++v) mx = gkl_max_nan(mx, e[u][v]);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = gkl_max_nan(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  T m = a[0].m;   /* the lane's accumulators share one max (they all start at the identity) */
  if (mx != mx) {
    T q = m;
#pragma unroll
    for (int u = U - 1; u >= 0; --u)
#pragma unroll
      for (int v = V - 1; v >= 0; --v) q = e[u][v] != e[u][v] ? e[u][v] : q;
    if (m == m) m = q;
  } else {
    if (mx > m) {
      bool zero = Z != 0;
#pragma unroll
      for (int u = 0; u < U; ++u) zero = zero && a[u].s == 0.0;
      if (!zero) {
        const double f = exp((double)m - (double)mx);   /* gk_ms_rescale's factor, once */
#pragma unroll
        for (int u = 0; u < U; ++u) a[u].s *= f;
      }
      m = mx;
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int v = 0; v < V; ++v) a[u].s = gkl_ms_add(a[u].s, m, e[u][v]);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) a[u].m = m;
}
template <class T> GK_DEV double gkl_ms_final(const gkl_ms<T> &a, T mp) {
  return gk_ms_final_d((double)a.m, a.s, (double)mp);
}

/* Grid barrier of a co-resident grid; *bar is zero at launch. */
GK_DEV void gkl_grid_sync(unsigned *bar, unsigned &goal) {
  __syncthreads();
  if (threadIdx.x == 0) {
    goal += gridDim.x;
    __threadfence();
    atomicAdd(bar, 1u);
    while (*(volatile unsigned *)bar < goal) { }
    __threadfence();
  }
  __syncthreads();
}

#endif /* GK_FUSED_CUH */
