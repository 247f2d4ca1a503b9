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

/* The online (running max m, sum s of exp(x - m)) pair of a one-pass
** sum(exp(E - m')) (gk_scalar.h's gk_ms_* steps). */
template <class T> struct alignas(8) gkl_ms { T m; double s; };
GK_DEV double gkl_ms_add(double s, float m, float x) { return gk_ms_add_f(s, m, x); }
GK_DEV double gkl_ms_add(double s, double m, double x) { return gk_ms_add_d(s, m, x); }
template <class T> struct gkl_op_ms {
  typedef gkl_ms<T> A;
  GK_DEV A identity() const { A r; r.m = gk_limits<T>::lowest(); r.s = 0.0; return r; }
  GK_DEV A operator()(A a, A b) const {
    if (a.m != a.m) return a;
    if (b.m != b.m) return b;
    if (a.m < b.m) { A t = a; a = b; b = t; }
    if (a.m == b.m) { a.s += b.s; return a; }
    if (b.s == 1.0) a.s = gkl_ms_add(a.s, a.m, b.m);
    else a.s += gk_ms_rescale(b.s, (double)b.m, (double)a.m);
    return a;
  }
  template <class X, class J> GK_DEV A lift(X x, J) const { A r; r.m = (T)x; r.s = 1.0; return r; }
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
/* A thread's elements of one tile, e[u][v] folded into a[u], in two steps:
** the tile's max first (one compare per element, no branch), then one
** rescale of each running sum where the max grew (rare), then branch-free
** adds at a fixed max.  Each term is gk_ms_add's (expf of x - m, added in
** double), so only where the max moves differs from gkl_ms_fold's order of
** rounding.  A NaN in the tile makes the accumulators that hold one NaN (its
** first NaN, as gkl_ms_fold would); the sums then no longer matter. */
template <int U, int V, class T> GK_DEV void gkl_ms_fold_tile(gkl_ms<T> (&a)[U], const T (&e)[U][V]) {
  T mx = e[0][0];
  bool nan = false;
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int v = 0; v < V; ++v) { mx = e[u][v] > mx ? e[u][v] : mx; nan |= e[u][v] != e[u][v]; }
  if (nan) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int v = 0; v < V; ++v) if (e[u][v] != e[u][v] && a[u].m == a[u].m) a[u].m = e[u][v];
    return;
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (mx > a[u].m) { a[u].s = gk_ms_rescale(a[u].s, (double)a[u].m, (double)mx); a[u].m = mx; }
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int v = 0; v < V; ++v) a[u].s = gkl_ms_add(a[u].s, a[u].m, e[u][v]);
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
