/*
** gk_hist.cuh -- histogram with per-block shared-memory bins.
**
** numpy.histogram semantics: NBINS equal bins over [lo, hi]; the last bin is
** closed; values outside [lo, hi] and NaN are ignored.  The bin of a value is
** computed with numpy's exact arithmetic, which depends on the data type and
** on where the range came from (runtime/host_ops.c, hist_job, is the
** reference; every operation here is the same IEEE operation, written with
** the _rn intrinsics so that nothing is contracted into an FMA):
**   mode 0  non-f32 data: x as double; f = (x - lo) / denom * nbins; edges
**           linspace(lo, hi) in double.
**   mode 1  f32 data, explicit range: keep (float)lo <= x <= (float)hi in
**           float; f = (double)(float)(x - flo) / denom * nbins; edges the
**           double linspace rounded to float.
**   mode 2  f32 data, range from the data: all float: f = ((x - flo) /
**           (fhi - flo)) * nbins; edges linspace in float.
** Then i = (long long)f clamped to [0, nbins-1]; x < edge[i] -> i-1;
** x >= edge[i+1] and i != nbins-1 -> i+1; i < 0 -> 0.
** Each block counts its share into shared 32-bit bins (SUB copies to spread
** same-bin contention), then adds them to the int64 output with integer
** atomics (exact; order does not matter).
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

/* The binning of one histogram, prepared by gk_hist_explicit / gk_hist_auto. */
struct gk_hist_range {
  int mode;                    /* 0, 1, 2 as above */
  int nbins;
  double lo, hi, denom, step;  /* modes 0, 1 (step: linspace's delta / nbins) */
  float flo, fhi, fdenom, fstep;  /* modes 1 (flo, fhi), 2 (all) */
};

/* numpy.histogram(x, nbins, range=(lo, hi)) (host_hist): false when the range
** is not finite or lo > hi (nothing may be counted then).  f32: the data is
** float32. */
GK_DEV bool gk_hist_explicit(gk_hist_range &r, double lo, double hi, int nbins, bool f32) {
  if (lo > hi || !isfinite(lo) || !isfinite(hi)) return false;
  if (lo == hi) { lo = __dsub_rn(lo, 0.5); hi = __dadd_rn(hi, 0.5); }
  r.mode = f32 ? 1 : 0; r.nbins = nbins;
  r.lo = lo; r.hi = hi; r.denom = __dsub_rn(hi, lo); r.step = __ddiv_rn(r.denom, (double)nbins);
  r.flo = (float)lo; r.fhi = (float)hi; r.fdenom = 0.0f; r.fstep = 0.0f;
  return true;
}

/* numpy.histogram(x, nbins) (host_hist_auto) with lo = min(x), hi = max(x)
** as double; for i64 data, denom is (double)((u64)max - (u64)min) (numpy
** subtracts the int64 extremes as uint64), else pass hi - lo.  false when the
** range is not finite.  Call only for n > 0 (empty data: range [0, 1]). */
GK_DEV bool gk_hist_auto(gk_hist_range &r, double lo, double hi, double denom, int nbins, bool f32) {
  if (!isfinite(lo) || !isfinite(hi)) return false;
  r.nbins = nbins;
  if (f32) {
    float flo = (float)lo, fhi = (float)hi;
    if (flo == fhi) { flo = __fsub_rn(flo, 0.5f); fhi = __fadd_rn(fhi, 0.5f); }
    r.mode = 2; r.lo = flo; r.hi = fhi; r.denom = 0.0; r.step = 0.0;
    r.flo = flo; r.fhi = fhi; r.fdenom = __fsub_rn(fhi, flo); r.fstep = __fdiv_rn(r.fdenom, (float)nbins);
    return true;
  }
  if (lo == hi) { lo = __dsub_rn(lo, 0.5); hi = __dadd_rn(hi, 0.5); denom = 1.0; }
  r.mode = 0; r.lo = lo; r.hi = hi; r.denom = denom; r.step = __ddiv_rn(__dsub_rn(hi, lo), (double)nbins);
  r.flo = r.fhi = r.fdenom = r.fstep = 0.0f;
  return true;
}

/* Edge k of linspace(lo, hi, nbins + 1) in double (numpy: k * step + lo,
** the last one hi exactly). */
GK_DEV double gk_hist_edge_d(const gk_hist_range &r, long long k) {
  if (k >= r.nbins) return r.hi;
  const double p = r.step == 0.0 ? __dmul_rn(__ddiv_rn((double)k, (double)r.nbins), __dsub_rn(r.hi, r.lo))
                                 : __dmul_rn((double)k, r.step);
  return __dadd_rn(p, r.lo);
}
/* The same in float arithmetic (mode 2). */
GK_DEV float gk_hist_edge_f(const gk_hist_range &r, long long k) {
  if (k >= r.nbins) return r.fhi;
  const float p = r.fstep == 0.0f ? __fmul_rn(__fdiv_rn((float)k, (float)r.nbins), r.fdenom)
                                  : __fmul_rn((float)k, r.fstep);
  return __fadd_rn(p, r.flo);
}

/* Bin of non-f32 data (mode 0), or -1 when ignored. */
GK_DEV int gk_hist_bin(const gk_hist_range &r, double v) {
  if (!(v >= r.lo && v <= r.hi)) return -1;       /* also drops NaN */
  const double f = __dmul_rn(__ddiv_rn(__dsub_rn(v, r.lo), r.denom), (double)r.nbins);
  long long i = (long long)f;
  if (i >= r.nbins) i = r.nbins - 1;
  if (i < 0) i = 0;
  if (v < gk_hist_edge_d(r, i)) i--;
  else if (v >= gk_hist_edge_d(r, i + 1) && i != r.nbins - 1) i++;
  return i < 0 ? 0 : (int)i;
}

/* Bin of f32 data (modes 1, 2), or -1 when ignored. */
GK_DEV int gk_hist_bin(const gk_hist_range &r, float v) {
  if (!(v >= r.flo && v <= r.fhi)) return -1;
  long long i;
  if (r.mode == 1) {
    const float d = __fsub_rn(v, r.flo);
    i = (long long)__dmul_rn(__ddiv_rn((double)d, r.denom), (double)r.nbins);
  } else {
    const float q = __fdiv_rn(__fsub_rn(v, r.flo), r.fdenom);
    i = (long long)__fmul_rn(q, (float)r.nbins);
  }
  if (i >= r.nbins) i = r.nbins - 1;
  if (i < 0) i = 0;
  if (r.mode == 1) {
    if (v < (float)gk_hist_edge_d(r, i)) i--;
    else if (v >= (float)gk_hist_edge_d(r, i + 1) && i != r.nbins - 1) i++;
  } else {
    if (v < gk_hist_edge_f(r, i)) i--;
    else if (v >= gk_hist_edge_f(r, i + 1) && i != r.nbins - 1) i++;
  }
  return i < 0 ? 0 : (int)i;
}

/* The value a bin is computed from: f32 stays float, anything else double. */
template <class X> GK_DEV double gk_hist_val(X x) { return (double)x; }
GK_DEV float gk_hist_val(float x) { return x; }

template <class P, class Load, class Idx>
GK_DEV void gk_hist(Idx n, const Load &load, const gk_hist_range &r, gk_i64 *counts) {
  typedef typename Load::X X;
  extern __shared__ gk_u32 gk_hist_bins_[];        /* SUB * nbins */
  const int T = P::THREADS, U = P::ITEMS, V = P::VEC;
  const int nbins = r.nbins;
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
        int b = gk_hist_bin(r, gk_hist_val(x[u][v]));
        if (b >= 0) atomicAdd(mine + b, 1u);
      }
  }
  if ((Idx)blockIdx.x == ntiles % (Idx)gridDim.x)
    for (Idx i = ntiles * tile + threadIdx.x; i < n; i += T) {
      X x[1];
      load.template load<1>(x, i);
      int b = gk_hist_bin(r, gk_hist_val(x[0]));
      if (b >= 0) atomicAdd(mine + b, 1u);
    }
  __syncthreads();
  for (int k = threadIdx.x; k < nbins; k += T) {
    gk_u64 c = 0;
    for (int s = 0; s < P::SUB; ++s) c += gk_hist_bins_[s * nbins + k];
    if (c) atomicAdd((unsigned long long *)(counts + k), (unsigned long long)c);
  }
}

/* The earlier interface: explicit range [lo, hi] (numpy's arithmetic for the
** load's element type); a bad range counts nothing. */
template <class P, class Load, class Idx>
GK_DEV void gk_hist(Idx n, const Load &load, double lo, double hi, int nbins, gk_i64 *counts) {
  gk_hist_range r;
  if (!gk_hist_explicit(r, lo, hi, nbins, sizeof(gk_hist_val(typename Load::X())) == 4)) return;
  gk_hist<P>(n, load, r, counts);
}

#endif /* GK_HIST_CUH */
