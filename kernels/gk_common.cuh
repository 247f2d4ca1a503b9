/*
** gk_common.cuh -- the base every gk kernel header stands on.
**
** Owns (on top of gk_scalar.h: the integer typedefs and the scalar
** semantics shared with the cpu backend): numeric limits, NaN tests, the standard
** reduction operators (sum, prod, max, min, argmax, argmin, and the online
** max/sum pair behind logsumexp), and the 4/8/16-byte vector load/store
** helpers that load and store functors use.
**
** Operator contract (every primitive takes one as a template parameter):
**   struct Op {
**     typedef ... A;                              // accumulator type
**     __device__ A identity() const;              // op(identity, a) == a
**     __device__ A operator()(A a, A b) const;    // associative; a precedes b
**     template <class X, class I>
**     __device__ A lift(X x, I i) const;          // element x at index i -> A
**   };
** Primitives combine in a fixed order (no float atomics), so a result is
** bit-identical from run to run for a given launch shape.
*/
#ifndef GK_COMMON_CUH
#define GK_COMMON_CUH

#include "gk_scalar.h"   /* the integer typedefs and the scalar semantics */

#define GK_WARP 32              /* lanes per warp on every NVIDIA GPU */
#define GK_FULL_MASK 0xffffffffu
#define GK_I64_MAX 0x7fffffffffffffffLL

#define GK_DEV __device__ __forceinline__

/* ---- limits and NaN ------------------------------------------------------ */
template <class T> struct gk_limits;
template <> struct gk_limits<float> {
  static GK_DEV float lowest() { return -__int_as_float(0x7f800000); }
  static GK_DEV float highest() { return __int_as_float(0x7f800000); }
};
template <> struct gk_limits<double> {
  static GK_DEV double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); }
  static GK_DEV double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};
template <> struct gk_limits<int> {
  static GK_DEV int lowest() { return (int)0x80000000; }
  static GK_DEV int highest() { return 0x7fffffff; }
};
template <> struct gk_limits<long long> {
  static GK_DEV long long lowest() { return (long long)0x8000000000000000ULL; }
  static GK_DEV long long highest() { return GK_I64_MAX; }
};
template <> struct gk_limits<unsigned char> {   /* bool is stored as u8 */
  static GK_DEV unsigned char lowest() { return 0; }
  static GK_DEV unsigned char highest() { return 1; }
};

/* n / d for n, d < 2^31 by a multiply: m, s from the host (cuda_fdiv_magic in
** runtime/cuda_lower.c: s = ceil(log2 d), m = floor(2^32 (2^s - d) / d) + 1),
** so that a divisor that is a kernel parameter costs what a literal one does. */
GK_DEV unsigned gk_fdiv32(unsigned n, unsigned m, unsigned s) { return (__umulhi(n, m) + n) >> s; }

template <class T> GK_DEV bool gk_isnan(T x) { return x != x; }  /* false for ints */

GK_DEV float gk_exp(float x) { return __expf(x); }
GK_DEV double gk_exp(double x) { return exp(x); }
GK_DEV float gk_log(float x) { return __logf(x); }
GK_DEV double gk_log(double x) { return log(x); }

/* ---- vectors: N consecutive elements, 16-byte access where aligned ------- */
template <class T, int N> struct alignas(sizeof(T) * N) gk_vec { T v[N]; };

/* Cache hints of the vector accesses, for timing experiments only (NVRTC
** option -DGK_LD_HINT=n / -DGK_ST_HINT=n through GK_NVRTC_OPTS; off by
** default, so the kernels' texts and binaries are those without them).
** Loads: 1 ld.global.cs (evict first), 2 ld.global.nc, 3 ld.global.lu (last
** use), 4 ld.global.nc.L1::no_allocate.L2::256B.  Stores: 1 st.global.cs,
** 2 st.global.cg. */
#ifndef GK_LD_HINT
#define GK_LD_HINT 0
#endif
#ifndef GK_ST_HINT
#define GK_ST_HINT 0
#endif
template <int B> struct gk_raw_of;
template <> struct gk_raw_of<4> { typedef unsigned T; };
template <> struct gk_raw_of<8> { typedef uint2 T; };
template <> struct gk_raw_of<16> { typedef uint4 T; };
template <class V>
GK_DEV V gk_ld_vec(const V *p) {
  if constexpr (GK_LD_HINT == 0) return *p;
  else {
    typedef typename gk_raw_of<sizeof(V)>::T R;
    const R *q = reinterpret_cast<const R *>(p);
    R r;
    if constexpr (GK_LD_HINT == 1) r = __ldcs(q);
    else if constexpr (GK_LD_HINT == 2) r = __ldg(q);
    else if constexpr (GK_LD_HINT == 3) r = __ldlu(q);
    else if constexpr (sizeof(V) == 16)
      asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(q));
    else r = __ldg(q);
    return *reinterpret_cast<const V *>(&r);
  }
}
template <class V>
GK_DEV void gk_st_vec(V *p, const V &v) {
  if constexpr (GK_ST_HINT == 0) *p = v;
  else {
    typedef typename gk_raw_of<sizeof(V)>::T R;
    const R r = *reinterpret_cast<const R *>(&v);
    if constexpr (GK_ST_HINT == 1) __stcs(reinterpret_cast<R *>(p), r);
    else __stcg(reinterpret_cast<R *>(p), r);
  }
}

/* Load N consecutive elements starting at p.  When N*sizeof(T) is 4, 8 or 16
** the access is one vector instruction and p must be aligned to N*sizeof(T);
** 32 bytes are two 16-byte accesses (p 16-byte aligned); the host picks N > 1
** only when every pointer and the row stride are aligned. */
template <int N, class T>
GK_DEV void gk_ld(T *dst, const T *p) {
  if constexpr (N > 1 && (N * sizeof(T) == 16 || N * sizeof(T) == 8 || N * sizeof(T) == 4)) {
    gk_vec<T, N> v = gk_ld_vec(reinterpret_cast<const gk_vec<T, N> *>(p));
#pragma unroll
    for (int k = 0; k < N; ++k) dst[k] = v.v[k];
  } else if constexpr (N * sizeof(T) == 32) {   /* two 16-byte halves (p 16-byte aligned) */
    gk_ld<N / 2>(dst, p);
    gk_ld<N / 2>(dst + N / 2, p + N / 2);
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) dst[k] = p[k];
  }
}
template <int N, class T>
GK_DEV void gk_st(T *p, const T *src) {
  if constexpr (N > 1 && (N * sizeof(T) == 16 || N * sizeof(T) == 8 || N * sizeof(T) == 4)) {
    gk_vec<T, N> v;
#pragma unroll
    for (int k = 0; k < N; ++k) v.v[k] = src[k];
    gk_st_vec(reinterpret_cast<gk_vec<T, N> *>(p), v);
  } else if constexpr (N * sizeof(T) == 32) {
    gk_st<N / 2>(p, src);
    gk_st<N / 2>(p + N / 2, src + N / 2);
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) p[k] = src[k];
  }
}
/* ---- folding one element into an accumulator ---------------------------
** gk_fold(op, acc, x, i) is op(acc, op.lift(x, i)), or op.fold(acc, x, i)
** when Op has such a member: an operator whose merge of two partial
** results is costly (the online max/sum-exp pair) can add one element
** cheaply.  Primitives fold elements with it. */
template <class Op, class A, class X, class I>
GK_DEV auto gk_fold_(const Op &op, const A &acc, const X &x, I i, int) -> decltype(op.fold(acc, x, i)) {
  return op.fold(acc, x, i);
}
template <class Op, class A, class X, class I>
GK_DEV A gk_fold_(const Op &op, const A &acc, const X &x, I i, long) { return op(acc, op.lift(x, i)); }
template <class Op, class A, class X, class I>
GK_DEV A gk_fold(const Op &op, const A &acc, const X &x, I i) { return gk_fold_(op, acc, x, i, 0); }

/* ---- (value, index) pair for argmax / argmin ----------------------------- */
template <class T> struct gk_vi { T v; gk_i64 i; };

/* ---- standard operators -------------------------------------------------- */
/* sum, prod, max, min, any, all: one struct per row of gk_scalar.h's
** GK_MONOIDS (identity and combine shared with the cpu backend).  any/all
** accumulate gk_u8 0 / 1; max/min propagate NaN (numpy). */
template <class T, int K> struct gk_ident;
template <class T> struct gk_ident<T, GK_ID_ZERO> { static GK_DEV T get() { return (T)0; } };
template <class T> struct gk_ident<T, GK_ID_ONE> { static GK_DEV T get() { return (T)1; } };
template <class T> struct gk_ident<T, GK_ID_LOWEST> { static GK_DEV T get() { return gk_limits<T>::lowest(); } };
template <class T> struct gk_ident<T, GK_ID_HIGHEST> { static GK_DEV T get() { return gk_limits<T>::highest(); } };
#define GK_OP_MONOID(NAME, name, ID, COMB) \
  template <class T> struct gk_op_##name { \
    typedef T A; \
    GK_DEV A identity() const { return gk_ident<T, ID>::get(); } \
    GK_DEV A operator()(A a, A b) const { return (A)COMB(a, b); } \
    template <class X, class I> GK_DEV A lift(X x, I) const { return (T)x; } \
  };
GK_MONOIDS(GK_OP_MONOID)
#undef GK_OP_MONOID
/* 32-bit integer max/min in 64-bit arithmetic, not as a comparison.  ptxas
** of CUDA 13.0 (sm_90) miscompiles chains of 32-bit integer max/min that it
** turns into Hopper's three-input VIMNMX3 when an operand is a negation:
** min(-m, axis=0) of an i32 64x64 matrix gave min(m, -m) per column (gkdiff
** seed 701 program 565; the same kernel text built by nvcc -Xptxas -O0 is
** right, -O1 and -O3 are wrong).  Arithmetic ptxas does not rebuild into a
** min keeps every result exact, at the same speed (max of 2^28 i32: 253 vs
** 251 us, CUB 252).  gk_imax / gk_imin (gk_scalar.h); NOTES.md, session 7. */
template <> GK_DEV int gk_op_max<int>::operator()(int a, int b) const { return gk_imax(a, b); }
template <> GK_DEV int gk_op_min<int>::operator()(int a, int b) const { return gk_imin(a, b); }
/* argmax: the first maximum wins; any NaN beats every number, first NaN wins.
** Ties are broken by index, so the operator is commutative as well. */
template <class T> struct gk_op_argmax {
  typedef gk_vi<T> A;
  GK_DEV A identity() const { A r; r.v = gk_limits<T>::lowest(); r.i = GK_I64_MAX; return r; }
  GK_DEV A operator()(A a, A b) const { return GK_ARG_TAKE(1, a.v, a.i, b.v, b.i) ? b : a; }
  /* operator()(a, b) when b's index is above every index a holds (elements
  ** folded in index order): no index compare but the identity's (its high
  ** word; every real index is below 2^62).  a NaN in a stays. */
  GK_DEV A later(A a, A b) const {
    return (a.v == a.v && !(b.v <= a.v)) || (int)(a.i >> 32) == 0x7fffffff ? b : a;
  }
  template <class X, class I> GK_DEV A lift(X x, I i) const { A r; r.v = (T)x; r.i = (gk_i64)i; return r; }
};
template <class T> struct gk_op_argmin {
  typedef gk_vi<T> A;
  GK_DEV A identity() const { A r; r.v = gk_limits<T>::highest(); r.i = GK_I64_MAX; return r; }
  GK_DEV A operator()(A a, A b) const { return GK_ARG_TAKE(0, a.v, a.i, b.v, b.i) ? b : a; }
  GK_DEV A later(A a, A b) const {   /* as gk_op_argmax::later */
    return (a.v == a.v && !(b.v >= a.v)) || (int)(a.i >> 32) == 0x7fffffff ? b : a;
  }
  template <class X, class I> GK_DEV A lift(X x, I i) const { A r; r.v = (T)x; r.i = (gk_i64)i; return r; }
};

/* Online (running max m, sum s of exp(x - m)): logsumexp = m + log(s).
** One exp per combine: the smaller max is rescaled to the larger.  NaN
** propagates through m; all -inf gives m = -inf, s = 0 (log -> -inf). */
template <class T> struct gk_ms { T m, s; };
template <class T> struct gk_op_logsumexp {
  typedef gk_ms<T> A;
  GK_DEV A identity() const { A r; r.m = gk_limits<T>::lowest(); r.s = (T)0; return r; }
  GK_DEV A operator()(A a, A b) const {
    if (gk_isnan(a.m) || gk_isnan(b.m)) { A r; r.m = a.m + b.m; r.s = a.s + b.s; return r; }
    if (a.m < b.m) { A t = a; a = b; b = t; }          /* a has the larger max */
    if (b.s == (T)0) return a;                        /* b empty (or all -inf) */
    a.s = a.s + b.s * gk_exp(b.m - a.m);
    return a;
  }
  template <class X, class I> GK_DEV A lift(X x, I) const { A r; r.m = (T)x; r.s = (T)1; return r; }
};

/* Welford (count, mean, M2): population var = M2 / n.  Chan's merge. */
template <class T> struct gk_welford { T n, mean, m2; };
template <class T> struct gk_op_welford {
  typedef gk_welford<T> A;
  GK_DEV A identity() const { A r; r.n = 0; r.mean = 0; r.m2 = 0; return r; }
  GK_DEV A operator()(A a, A b) const {
    if (b.n == (T)0) return a;
    if (a.n == (T)0) return b;
    A r;
    GK_WELFORD_JOIN(T, a.n, a.mean, a.m2, b.n, b.mean, b.m2, r.n, r.mean, r.m2);
    return r;
  }
  template <class X, class I> GK_DEV A lift(X x, I) const { A r; r.n = 1; r.mean = (T)x; r.m2 = 0; return r; }
};

/* Empty type for unused stages. */
struct gk_none {};

/* Integer divide rounding up. */
template <class I> GK_DEV I gk_cdiv(I a, I b) { return (a + b - 1) / b; }

#endif /* GK_COMMON_CUH */
