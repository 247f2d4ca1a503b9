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
**
** Fast path.  That costs a division (double in modes 0 and 1) and two edges
** per element.  Instead, g = (x - flo) * rs with rs = nbins / denom rounded
** once (float in modes 1 and 2, double in mode 0: two roundings more than
** numpy's f).  With pos(x) = (x - lo) * nbins / denom the exact position,
** M = max(|lo|, |hi|) * nbins / denom and u the unit roundoff (2^-24 or
** 2^-53): |g - pos(x)| and |f - pos(x)| are at most about u*(M + 3 nbins)
** (the (float)lo rounding, x - flo, the products), |f - g| at most about
** 6 u nbins, and every edge k satisfies |pos(edge[k]) - k| <= u*(M + 2k)
** (the float or double linspace).  So when g is farther than
** B = 8u*(M + nbins) from every integer, k = floor(g) is numpy's i
** unchanged by the edge correction (edge[k] < x < edge[k+1] and i = k):
** the bin is k with no division and no edge.  Otherwise (about 2B of the
** values: x within rounding of an edge, x == lo, x == hi) the exact
** arithmetic above decides.  The fast path is off (B = +inf) when its
** assumptions fail: B >= 1/4, nbins > 2^20, rs outside [2^-100, 2^100],
** a non-finite float range, or (mode 0) denom != hi - lo (i64 data whose
** uint64 difference rounds differently).  floor and the distance use the
** 1.5 * 2^23 (2^52) rounding constant: float adds only.  The margin is
** checked on the host by emulation (1.5e9 values on and around the edges of
** 30 ranges x 10 bin counts, all three modes: 0 mismatches; a margin of 2u
** also passes, 0.5u fails) and on the GPU by tests/kernels/test_kernels.cu.
**
** Each block counts its share into shared 32-bit bins (SUB copies; the bin
** after the last takes ignored and undecided items, so that the unrolled
** loop counts every item with one atomic and no branch), then adds them to
** the int64 output with integer atomics (exact; order does not matter).
** Undecided items are marked in a per-thread mask and binned exactly after
** the tile (one copy of the exact code).
**
** Load: typedef X; template <int N> void load(X *dst, Idx i) const (N = 1 or
** Policy::VEC).  counts: nbins gk_i64, ZEROED by the host before launch.
** Dynamic shared memory: launch.h gk_hist_smem(nbins) bytes.
*/
#ifndef GK_HIST_CUH
#define GK_HIST_CUH
#include "gk_common.cuh"

/* LEAN: the tile loop bins with gk_hist_lean (0: gk_hist_bin_fast, as before) */
template <int THREADS_, int ITEMS_, int VEC_, int SUB_, int LEAN_ = 1> struct gk_hist_policy {
  enum { THREADS = THREADS_, ITEMS = ITEMS_, VEC = VEC_, SUB = SUB_, TILE = THREADS_ * ITEMS_ * VEC_, LEAN = LEAN_ };
};
/* launch.h GK_HIST_THREADS, GK_HIST_SUB, GK_HIST_TILE_V4/_V1 must match (ORDER) */
typedef gk_hist_policy<1024, 4, 4, 2> gk_hist_policy_v4;
typedef gk_hist_policy<1024, 8, 1, 2> gk_hist_policy_v1;
typedef gk_hist_policy<1024, 4, 4, 2, 0> gk_hist_policy_v4_old;

#define GK_HIST_FAST_MAX_BINS (1 << 20)   /* g < 2^22 for the float rounding constant */

/* The binning of one histogram, prepared by gk_hist_explicit / gk_hist_auto. */
struct gk_hist_range {
  int mode;                    /* 0, 1, 2 as above */
  int nbins;
  double lo, hi, denom, step;  /* modes 0, 1 (step: linspace's delta / nbins) */
  float flo, fhi, fdenom, fstep;  /* modes 1 (flo, fhi), 2 (all) */
  double drs, dB;              /* fast path, mode 0: nbins / denom, margin (+inf: off) */
  float frs, fB;               /* fast path, modes 1, 2 */
};

/* Fills the fast-path fields of a prepared range (see the header comment). */
GK_DEV void gk_hist_fast_setup(gk_hist_range &r) {
  const double inf = __longlong_as_double(0x7ff0000000000000LL);
  const double N = (double)r.nbins;
  r.drs = 0.0; r.dB = inf; r.frs = 0.0f; r.fB = __int_as_float(0x7f800000);
  if (r.nbins > GK_HIST_FAST_MAX_BINS) return;
  double den, a, b, u;
  if (r.mode == 0) {
    if (__dsub_rn(r.hi, r.lo) != r.denom) return;
    den = r.denom; a = r.lo; b = r.hi; u = 0x1p-53;
  } else {
    if (!isfinite(r.flo) || !isfinite(r.fhi)) return;
    den = r.mode == 1 ? r.denom : (double)r.fdenom;
    a = r.mode == 1 ? r.lo : (double)r.flo; b = r.mode == 1 ? r.hi : (double)r.fhi; u = 0x1p-24;
  }
  if (!(den > 0.0) || !isfinite(den)) return;
  const double rs = N / den;
  if (!(rs >= 0x1p-100 && rs <= 0x1p100)) return;
  const double B = 8.0 * u * (fmax(fabs(a), fabs(b)) * rs + N);
  if (!(B < 0.25)) return;
  if (r.mode == 0) { r.drs = rs; r.dB = B; }
  else { r.frs = (float)rs; r.fB = (float)B; }
}

/* numpy.histogram(x, nbins, range=(lo, hi)) (host_hist): false when the range
** is not finite or lo > hi (nothing may be counted then).  f32: the data is
** float32. */
GK_DEV bool gk_hist_explicit(gk_hist_range &r, double lo, double hi, int nbins, bool f32) {
  if (lo > hi || !isfinite(lo) || !isfinite(hi)) return false;
  if (lo == hi) { lo = __dsub_rn(lo, 0.5); hi = __dadd_rn(hi, 0.5); }
  r.mode = f32 ? 1 : 0; r.nbins = nbins;
  r.lo = lo; r.hi = hi; r.denom = __dsub_rn(hi, lo); r.step = __ddiv_rn(r.denom, (double)nbins);
  r.flo = (float)lo; r.fhi = (float)hi; r.fdenom = 0.0f; r.fstep = 0.0f;
  gk_hist_fast_setup(r);
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
    gk_hist_fast_setup(r);
    return true;
  }
  if (lo == hi) { lo = __dsub_rn(lo, 0.5); hi = __dadd_rn(hi, 0.5); denom = 1.0; }
  r.mode = 0; r.lo = lo; r.hi = hi; r.denom = denom; r.step = __ddiv_rn(__dsub_rn(hi, lo), (double)nbins);
  r.flo = r.fhi = r.fdenom = r.fstep = 0.0f;
  gk_hist_fast_setup(r);
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

/* Exact bin of an in-range non-f32 value (mode 0). */
GK_DEV int gk_hist_bin_exact(const gk_hist_range &r, double v) {
  const double f = __dmul_rn(__ddiv_rn(__dsub_rn(v, r.lo), r.denom), (double)r.nbins);
  long long i = (long long)f;
  if (i >= r.nbins) i = r.nbins - 1;
  if (i < 0) i = 0;
  if (v < gk_hist_edge_d(r, i)) i--;
  else if (v >= gk_hist_edge_d(r, i + 1) && i != r.nbins - 1) i++;
  return i < 0 ? 0 : (int)i;
}

/* Exact bin of an in-range f32 value (modes 1, 2). */
GK_DEV int gk_hist_bin_exact(const gk_hist_range &r, float v) {
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

/* The fast path, branch-free: the bin, -1 when ignored (outside [lo, hi],
** NaN), or -2 when x is too close to an edge to decide without the exact
** arithmetic (also whenever the fast path is off: B = +inf). */
GK_DEV int gk_hist_bin_fast(const gk_hist_range &r, double v) {
  const double C = 0x1.8p52;                      /* adding it rounds to an integer */
  const double g = __dmul_rn(__dsub_rn(v, r.lo), r.drs);
  const double t = __dadd_rn(g, C), k = __dsub_rn(t, C);
  const int i = (int)(__double_as_longlong(t) - 0x4338000000000000LL) - (g < k ? 1 : 0);
  const int c = fabs(__dsub_rn(g, k)) > r.dB ? (i < r.nbins ? i : r.nbins - 1) : -2;
  return v >= r.lo && v <= r.hi ? c : -1;         /* NaN: -1 */
}
GK_DEV int gk_hist_bin_fast(const gk_hist_range &r, float v) {
  const float C = 0x1.8p23f;
  const float g = __fmul_rn(__fsub_rn(v, r.flo), r.frs);
  const float t = __fadd_rn(g, C), k = __fsub_rn(t, C);
  const int i = (__float_as_int(t) - 0x4B400000) - (g < k ? 1 : 0);
  const int c = fabsf(__fsub_rn(g, k)) > r.fB ? (i < r.nbins ? i : r.nbins - 1) : -2;
  return v >= r.flo && v <= r.fhi ? c : -1;
}

/* The tile loop's binning (the same decisions as gk_hist_bin_fast, fewer
** instructions): bin = the bin of a decided in-range value, else the spare
** bin nbins; und = in range but undecided (the exact path bins it).  floor(g)
** is k plus the sign bit of d = g - k (d's rounding keeps its sign; d == 0 is
** undecided).  A decided in-range g lies in (B, nbins - B), so its floor is
** in [0, nbins - 1]; the unsigned min only keeps a wrong margin in bounds. */
GK_DEV void gk_hist_lean(const gk_hist_range &r, float v, int &bin, bool &und) {
  const float C = 0x1.8p23f;
  const float g = __fmul_rn(__fsub_rn(v, r.flo), r.frs);
  const float t = __fadd_rn(g, C), k = __fsub_rn(t, C), d = __fsub_rn(g, k);
  const unsigned i = (unsigned)(__float_as_int(t) - 0x4B400000 + (__float_as_int(d) >> 31));
  const bool in = v >= r.flo && v <= r.fhi, dec = fabsf(d) > r.fB;
  bin = in && dec ? (int)min(i, (unsigned)r.nbins - 1u) : r.nbins;
  und = in && !dec;
}
GK_DEV void gk_hist_lean(const gk_hist_range &r, double v, int &bin, bool &und) {
  const double C = 0x1.8p52;
  const double g = __dmul_rn(__dsub_rn(v, r.lo), r.drs);
  const double t = __dadd_rn(g, C), k = __dsub_rn(t, C), d = __dsub_rn(g, k);
  const unsigned i = (unsigned)((int)(__double_as_longlong(t) - 0x4338000000000000LL) + (int)(__double_as_longlong(d) >> 63));
  const bool in = v >= r.lo && v <= r.hi, dec = fabs(d) > r.dB;
  bin = in && dec ? (int)min(i, (unsigned)r.nbins - 1u) : r.nbins;
  und = in && !dec;
}

/* Bin of a value (double: mode 0; float: modes 1, 2), or -1 when ignored. */
template <class V> GK_DEV int gk_hist_bin(const gk_hist_range &r, V v) {
  const int b = gk_hist_bin_fast(r, v);
  return b != -2 ? b : gk_hist_bin_exact(r, v);
}

/* The value a bin is computed from: f32 stays float, anything else double. */
template <class X> GK_DEV double gk_hist_val(X x) { return (double)x; }
GK_DEV float gk_hist_val(float x) { return x; }

template <class P, class Load, class Idx>
GK_DEV void gk_hist(Idx n, const Load &load, const gk_hist_range &r, gk_i64 *counts) {
  typedef typename Load::X X;
  extern __shared__ gk_u32 gk_hist_bins_[];        /* SUB copies of nbins + 1 (the last: a bin for ignored items) */
  /* 8-byte elements: half the items (the same bytes in flight, fewer registers) */
  const int T = P::THREADS, V = P::VEC, U = sizeof(X) > 4 && P::ITEMS > 1 ? P::ITEMS / 2 : P::ITEMS;
  const int nbins = r.nbins, stride = nbins + 1;
  for (int k = threadIdx.x; k < P::SUB * stride; k += T) gk_hist_bins_[k] = 0;
  __syncthreads();
  gk_u32 *mine = gk_hist_bins_ + (threadIdx.x / 32 % P::SUB) * stride;
  /* the tile loop counts through the copy's 32-bit shared address: one
  ** instruction for an item's address (the generic pointer costs two) */
  const unsigned mine_s = (unsigned)__cvta_generic_to_shared(mine);
  const Idx tile = (Idx)T * U * V;
  static_assert(P::ITEMS * P::VEC <= 32, "gk_hist: one bit per item in a 32-bit mask");
  const Idx ntiles = n / tile;
  for (Idx t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const Idx base = t * tile;
    X x[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) load.template load<V>(x[u], base + ((Idx)u * T + threadIdx.x) * V);
    gk_u32 pend = 0;                               /* items the fast path left undecided */
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        if (P::LEAN) {
          int b; bool und;
          gk_hist_lean(r, gk_hist_val(x[u][v]), b, und);
          /* ignored and undecided items: the spare bin */
          asm volatile("red.shared.add.u32 [%0], 1;" :: "r"(mine_s + 4u * (unsigned)b) : "memory");
          if (und) pend |= 1u << (u * V + v);
        } else {
          const int b = gk_hist_bin_fast(r, gk_hist_val(x[u][v]));
          atomicAdd(mine + (b >= 0 ? b : nbins), 1u);   /* no branch: ignored items go to the spare bin */
          pend |= (b == -2 ? 1u : 0u) << (u * V + v);
        }
      }
    while (pend) {                                 /* rare: one copy of the exact path */
      const int j = __ffs(pend) - 1;
      pend &= pend - 1;
      X xj = x[0][0];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int v = 0; v < V; ++v) if (u * V + v == j) xj = x[u][v];
      atomicAdd(mine + gk_hist_bin_exact(r, gk_hist_val(xj)), 1u);
    }
  }
  if ((Idx)blockIdx.x == ntiles % (Idx)gridDim.x)
    for (Idx i = ntiles * tile + threadIdx.x; i < n; i += T) {
      X x[1];
      load.template load<1>(x, i);
      const int b = gk_hist_bin(r, gk_hist_val(x[0]));
      if (b >= 0) atomicAdd(mine + b, 1u);
    }
  __syncthreads();
  for (int k = threadIdx.x; k < nbins; k += T) {
    gk_u64 c = 0;
    for (int s = 0; s < P::SUB; ++s) c += gk_hist_bins_[s * stride + k];
    if (c) atomicAdd((unsigned long long *)(counts + k), (unsigned long long)c);
  }
}

/* numpy's "Too many bins for data range" (runtime/host_ops.c hist_ok): the
** bins of a prepared range have a finite, nonzero width.  gk_hist_width_ok is
** the O(1) part (every quotient finite); gk_hist_edges_ok(r, k) says edges k
** and k + 1 increase strictly, in the arithmetic of the range's mode. */
GK_DEV bool gk_hist_width_ok(const gk_hist_range &r) {
  if (r.mode == 2) return isfinite(r.fdenom) && isfinite(__fdiv_rn(r.fdenom, (float)r.nbins));
  if (!isfinite(r.denom) || !(r.denom > 0.0)) return false;
  return r.mode != 1 || isfinite(__fsub_rn(r.fhi, r.flo));
}
GK_DEV bool gk_hist_edges_ok(const gk_hist_range &r, long long k) {
  if (r.mode == 0) return gk_hist_edge_d(r, k) < gk_hist_edge_d(r, k + 1);
  if (r.mode == 1) return (float)gk_hist_edge_d(r, k) < (float)gk_hist_edge_d(r, k + 1);
  return gk_hist_edge_f(r, k) < gk_hist_edge_f(r, k + 1);
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
