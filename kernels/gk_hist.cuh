/*
** gk_hist.cuh -- histogram with per-block shared-memory bins.
**
** numpy.histogram semantics: NBINS equal bins over [lo, hi]; the last bin is
** closed; values outside [lo, hi] and NaN are ignored.  Binning is done in
** double with numpy's edge correction, so bin choice matches a float64 CPU
** reference exactly.  Each block counts its share into shared 32-bit bins
** (SUB copies to spread same-bin contention), then adds them to the int64
** output with integer atomics (exact; order does not matter).
**
** Load: typedef X; template <int N> void load(X *dst, Idx i) const (N = 1 or
** Policy::VEC).  counts: nbins gk_i64, ZEROED by the host before launch.
** Dynamic shared memory: launch.h gk_hist_smem(nbins) bytes.
*/
#ifndef GK_HIST_CUH
#define GK_HIST_CUH
#include "gk_common.cuh"

template <int THREADS_, int ITEMS_, int VEC_, int SUB_> struct gk_hist_policy {
  enum { THREADS = THREADS_, ITEMS = ITEMS_, VEC = VEC_, SUB = SUB_, TILE = THREADS_ * ITEMS_ * VEC_ };
};
typedef gk_hist_policy<512, 4, 4, 4> gk_hist_policy_v4;
typedef gk_hist_policy<512, 8, 1, 4> gk_hist_policy_v1;

/* Bin of x, or -1 when ignored.  Mirrors numpy: index from the scaled
** offset, then corrected against the edges lo + k * (hi - lo) / nbins. */
GK_DEV int gk_hist_bin(double x, double lo, double hi, int nbins, double scale, double step) {
  if (!(x >= lo && x <= hi)) return -1;       /* also drops NaN */
  int b = (int)((x - lo) * scale);            /* scale = nbins / (hi - lo), step = (hi - lo) / nbins */
  if (b >= nbins) b = nbins - 1;
  if (b > 0 && x < lo + b * step) --b;
  else if (b < nbins - 1 && x >= lo + (b + 1) * step) ++b;
  return b;
}

template <class P, class Load, class Idx>
GK_DEV void gk_hist(Idx n, const Load &load, double lo, double hi, int nbins, gk_i64 *counts) {
  typedef typename Load::X X;
  extern __shared__ gk_u32 gk_hist_bins_[];        /* SUB * nbins */
  const int T = P::THREADS, U = P::ITEMS, V = P::VEC;
  const double scale = nbins / (hi - lo), step = (hi - lo) / nbins;
  for (int k = threadIdx.x; k < P::SUB * nbins; k += T) gk_hist_bins_[k] = 0;
  __syncthreads();
  gk_u32 *mine = gk_hist_bins_ + (threadIdx.x / 32 % P::SUB) * nbins;
  const Idx tile = (Idx)P::TILE;
  const Idx ntiles = n / tile;
  for (Idx t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const Idx base = t * tile;
    X x[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) load.template load<V>(x[u], base + ((Idx)u * T + threadIdx.x) * V);
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        int b = gk_hist_bin((double)x[u][v], lo, hi, nbins, scale, step);
        if (b >= 0) atomicAdd(mine + b, 1u);
      }
  }
  if ((Idx)blockIdx.x == ntiles % (Idx)gridDim.x)
    for (Idx i = ntiles * tile + threadIdx.x; i < n; i += T) {
      X x[1];
      load.template load<1>(x, i);
      int b = gk_hist_bin((double)x[0], lo, hi, nbins, scale, step);
      if (b >= 0) atomicAdd(mine + b, 1u);
    }
  __syncthreads();
  for (int k = threadIdx.x; k < nbins; k += T) {
    gk_u64 c = 0;
    for (int s = 0; s < P::SUB; ++s) c += gk_hist_bins_[s * nbins + k];
    if (c) atomicAdd((unsigned long long *)(counts + k), (unsigned long long)c);
  }
}

#endif /* GK_HIST_CUH */
