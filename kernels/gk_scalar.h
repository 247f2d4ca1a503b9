/*
** kernels/gk_scalar.h -- the scalar semantics of gk, written once.
**
** This header compiles both as C11 (runtime/cpu.c, runtime/host_rng.c,
** compiler/build.c's constant folding, tests) and as CUDA C++ under NVRTC
** (embedded by the Makefile like every kernels/ header; every generated
** kernel includes it through gk_common.cuh).  The op table (runtime/ops.h)
** names these functions in its per-dtype expressions; the cpu backend
** expands the expressions as C and compiler/lower.c writes the same
** characters into the kernel text, so an elementwise op is the same code on
** both backends.  Bit parity also needs the same contraction rule: the host
** builds with -ffp-contract=off, NVRTC compiles with --fmad=false.
**
** Owns: the fixed-width integer typedefs (NVRTC sees no system headers),
** integer and float mod (numpy: the sign of the divisor), integer pow,
** NaN-propagating maximum/minimum, the one float -> int conversion,
** sigmoid, sign, Philox4x32-10 and the rand/randn transforms (defined in
** runtime/host_rng.c's header comment), and the scalar steps of the online
** (max, sum of exp) fold behind one-pass logsumexp/softmax.
**
** C has no overloading, so every float helper comes in an _f (float) and a
** _d (double) form.
*/
#ifndef GK_SCALAR_H
#define GK_SCALAR_H

#ifdef __CUDACC__
#define GKS_FN static __device__ __forceinline__
#define GKS_NAN_F __int_as_float(0x7fc00000)
#define GKS_NAN_D __longlong_as_double(0x7ff8000000000000LL)
#define GKS_INF_D __longlong_as_double(0x7ff0000000000000LL)
#define GKS_UNROLL _Pragma("unroll")
#else
#include <math.h>
#define GKS_FN static inline
#define GKS_NAN_F ((float)NAN)
#define GKS_NAN_D ((double)NAN)
#define GKS_INF_D ((double)INFINITY)
#define GKS_UNROLL
#endif

typedef signed char        gk_i8;
typedef unsigned char      gk_u8;
typedef short              gk_i16;
typedef unsigned short     gk_u16;
typedef int                gk_i32;
typedef unsigned int       gk_u32;
typedef long long          gk_i64;
typedef unsigned long long gk_u64;

#define GK_I32_MIN (-2147483647 - 1)
#define GK_I64_MIN (-9223372036854775807LL - 1)

/* ---- integers ------------------------------------------------------------ */

/* a % b with the sign of b (numpy); x % 0 = 0 and x % -1 = 0 (no trap on
** INT64_MIN % -1). */
GKS_FN gk_i64 gk_imod(gk_i64 a, gk_i64 b) {
  if (b == 0 || b == -1) return 0;
  gk_i64 r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/* b ** e, wrapping; a negative e gives 1 / b ** -e truncated (the checker
** rejects negative constant exponents). */
GKS_FN gk_i64 gk_ipow(gk_i64 b, gk_i64 e) {
  if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  gk_u64 r = 1, x = (gk_u64)b;
  while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }
  return (gk_i64)r;
}

/* ---- floats -------------------------------------------------------------- */

/* a % b with the sign of b (numpy.remainder); a zero result takes b's sign. */
GKS_FN double gk_fmod_d(double a, double b) {
  double r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  else if (r == 0) r = copysign(0.0, b);
  return r;
}
GKS_FN float gk_fmod_f(float a, float b) { return (float)gk_fmod_d((double)a, (double)b); }

/* maximum / minimum: a NaN operand gives NaN (numpy.maximum). */
GKS_FN double gk_nanmax_d(double a, double b) { return (a != a || b != b) ? GKS_NAN_D : a > b ? a : b; }
GKS_FN double gk_nanmin_d(double a, double b) { return (a != a || b != b) ? GKS_NAN_D : a < b ? a : b; }
GKS_FN float gk_nanmax_f(float a, float b) { return (a != a || b != b) ? GKS_NAN_F : a > b ? a : b; }
GKS_FN float gk_nanmin_f(float a, float b) { return (a != a || b != b) ? GKS_NAN_F : a < b ? a : b; }

GKS_FN float gk_sigmoid_f(float x) { return 1.0f / (1.0f + expf(-x)); }
GKS_FN double gk_sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }

/* sign: -1, 0 or 1 (numpy: -0.0 gives +0.0); NaN stays NaN. */
GKS_FN float gk_sign_f(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x; }
GKS_FN double gk_sign_d(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x == 0.0 ? 0.0 : x; }

/* relu: NaN stays NaN, -0.0 becomes 0.0. */
GKS_FN float gk_relu_f(float x) { return x != x ? x : x > 0.0f ? x : 0.0f; }
GKS_FN double gk_relu_d(double x) { return x != x ? x : x > 0.0 ? x : 0.0; }

/* The one float -> int conversion: truncation toward zero; NaN and values
** outside the type's range give its lowest value, as numpy does on x86
** (cvttsd2si).  Every f32 goes through double first (exact). */
GKS_FN gk_i32 gk_f2i32(double v) {
  return (v != v || v >= 2147483648.0 || v < -2147483648.0) ? GK_I32_MIN : (gk_i32)v;
}
GKS_FN gk_i64 gk_f2i64(double v) {
  return (v != v || v >= 9223372036854775808.0 || v < -9223372036854775808.0) ? GK_I64_MIN : (gk_i64)v;
}

/* ---- random numbers (runtime/host_rng.c's header comment defines them) --- */

#define GK_PHILOX_M0 0xD2511F53u
#define GK_PHILOX_M1 0xCD9E8D57u
#define GK_PHILOX_W0 0x9E3779B9u
#define GK_PHILOX_W1 0xBB67AE85u

/* Philox4x32-10 of counter c under key (k0, k1), in place. */
GKS_FN void gk_philox(gk_u32 c[4], gk_u32 k0, gk_u32 k1) {
  GKS_UNROLL
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { k0 += GK_PHILOX_W0; k1 += GK_PHILOX_W1; }
    gk_u64 p0 = (gk_u64)GK_PHILOX_M0 * c[0], p1 = (gk_u64)GK_PHILOX_M1 * c[2];
    gk_u32 n0 = (gk_u32)(p1 >> 32) ^ c[1] ^ k0, n2 = (gk_u32)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0; c[1] = (gk_u32)p1; c[2] = n2; c[3] = (gk_u32)p0;
  }
}

/* The top 24 bits of w as a float in [0, 1) (exact). */
GKS_FN float gk_u24(gk_u32 w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }

/* Element c of the uniform stream of seed: four elements per Philox call. */
GKS_FN float gk_rand(gk_u64 seed, gk_u64 c) {
  gk_u64 b = c >> 2;
  gk_u32 w[4] = {(gk_u32)b, (gk_u32)(b >> 32), 0u, 0u};
  gk_philox(w, (gk_u32)seed, (gk_u32)(seed >> 32));
  return gk_u24(w[c & 3]);
}

/* Element c of the normal stream of seed: Box-Muller in double, one Philox
** call per element. */
GKS_FN float gk_randn(gk_u64 seed, gk_u64 c) {
  gk_u32 w[4] = {(gk_u32)c, (gk_u32)(c >> 32), 1u, 0u};
  gk_philox(w, (gk_u32)seed, (gk_u32)(seed >> 32));
  double u1 = ((double)(w[0] >> 8) + 1.0) * (1.0 / 16777216.0);
  double u2 = (double)(w[1] >> 8) * (1.0 / 16777216.0);
  return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925286766559 * u2));
}

/* ---- the online (running max m, sum s of exp(x - m)) fold ---------------
** One-pass sum(exp(E - m')) with m' = max(E) (or a finite guard of it):
** s accumulates in double; the per-element term is exp(x - m) in the
** element's type, exactly the two-pass term once m is the maximum.
** gk_ms_add_*: s after adding one element x <= m (x == m == inf: min(x - m, 0)
** turns inf - inf into 0).  gk_ms_rescale: s for a new max (s * exp(m - m')
** in double).  gk_ms_final_*: sum(exp(E - m')) from (m, s): NaN max -> NaN;
** an infinite max -> inf (+inf, finite m') / 0 (-inf, finite m') / NaN
** (m' infinite); else s rescaled from m to m'. */
GKS_FN double gk_ms_add_f(double s, float m, float x) { return s + (double)expf(fminf(x - m, 0.0f)); }
GKS_FN double gk_ms_add_d(double s, double m, double x) { return s + exp(fmin(x - m, 0.0)); }
GKS_FN double gk_ms_rescale(double s, double m, double mnew) { return s * exp(m - mnew); }
GKS_FN double gk_ms_final_d(double m, double s, double mp) {
  if (m != m || mp != mp) return GKS_NAN_D;
  if (m - m != m - m) return mp - mp == 0 ? (m > 0 ? GKS_INF_D : 0.0) : GKS_NAN_D;
  return mp == m ? s : s * exp(m - mp);
}

/* ---- monoid reductions: identity and combine -----------------------------
** One row per reduction that is a plain monoid over its accumulator (the
** NAME of its runtime/ops.h RT_ROPS row; argmax/argmin carry an index and var
** is Welford's triple, so they are not rows here).  X(NAME, name, identity,
** combine): identity is GK_ID_ZERO / ONE / LOWEST / HIGHEST (the
** accumulator type's lowest / highest value, -inf / +inf for floats);
** combine is one expression of a (the earlier part) and b (the later part),
** for any accumulator type -- x != x is false for integers, so max/min
** propagate NaN (numpy) and are plain comparisons on integers.  The cpu
** backend (runtime/cpu.c) expands these rows for its double / int64 / u64
** accumulators; kernels/gk_common.cuh defines gk_op_<name> from them. */
/* ---- integer maximum / minimum (maximum(), minimum() on ints) -----------
** On the device, 32-bit ones go through 64-bit arithmetic rather than a
** comparison: ptxas of CUDA 13.0 (sm_90) miscompiles chains of 32-bit
** integer max/min that it merges into a three-input VIMNMX3 when an operand
** is a negation (maximum(maximum(-m, m2), -m2), and the reductions' combine
** in kernels/gk_common.cuh; NOTES.md, session 7). */
#ifdef __CUDACC__
GKS_FN int gk_imax(int a, int b) { long long d = (long long)b - a; return (int)(a + (d & ~(d >> 63))); }
GKS_FN int gk_imin(int a, int b) { long long d = (long long)b - a; return (int)(a + (d & (d >> 63))); }
GKS_FN long long gk_imax(long long a, long long b) { return a > b ? a : b; }
GKS_FN long long gk_imin(long long a, long long b) { return a < b ? a : b; }
#define GK_IMAX(a, b) gk_imax(a, b)
#define GK_IMIN(a, b) gk_imin(a, b)
#else
#define GK_IMAX(a, b) ((a) > (b) ? (a) : (b))
#define GK_IMIN(a, b) ((a) < (b) ? (a) : (b))
#endif

#define GK_COMB_SUM(a, b)  ((a) + (b))
#define GK_COMB_PROD(a, b) ((a) * (b))
#define GK_COMB_MAX(a, b)  ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) > (a) ? (b) : (a))
#define GK_COMB_MIN(a, b)  ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define GK_COMB_ANY(a, b)  ((a) || (b))
#define GK_COMB_ALL(a, b)  ((a) && (b))
#define GK_MONOIDS(X) \
  X(SUM,  sum,  GK_ID_ZERO,    GK_COMB_SUM) \
  X(PROD, prod, GK_ID_ONE,     GK_COMB_PROD) \
  X(MAX,  max,  GK_ID_LOWEST,  GK_COMB_MAX) \
  X(MIN,  min,  GK_ID_HIGHEST, GK_COMB_MIN) \
  X(ANY,  any,  GK_ID_ZERO,    GK_COMB_ANY) \
  X(ALL,  all,  GK_ID_ONE,     GK_COMB_ALL)
enum { GK_ID_ZERO, GK_ID_ONE, GK_ID_LOWEST, GK_ID_HIGHEST };

/* ---- the two reductions that are not monoid rows ---------------------------
** argmax / argmin: does the later candidate bv (index bi) replace av (index
** ai)?  The first extreme wins; a NaN beats every number, the first NaN wins
** (numpy).  var: Welford's (n, mean, m2) of part a joined with part b
** (Chan's formula); population variance = m2 / n.  Both backends use these. */
#define GK_ARG_TAKE(MX, av, ai, bv, bi) \
  (((av) != (av) || (bv) != (bv)) ? ((bv) != (bv) && ((av) == (av) || (bi) < (ai))) \
   : (MX) ? ((bv) > (av) || ((bv) == (av) && (bi) < (ai))) : ((bv) < (av) || ((bv) == (av) && (bi) < (ai))))
#define GK_WELFORD_JOIN(T, an, am, am2, bn, bm, bm2, rn, rm, rm2) do { \
    T n_ = (an) + (bn), d_ = (bm) - (am), f_ = (bn) / n_; \
    (rm) = (am) + d_ * f_; \
    (rm2) = (am2) + (bm2) + d_ * d_ * (an) * f_; \
    (rn) = n_; \
  } while (0)
/* The population variance of (n, mean, m2), double: NaN for no values, and
** where the mean is not finite (an inf in the data: numpy's inf - inf), where
** element-wise joins leave m2 = inf.  m - m == 0 is the finiteness test. */
#define GK_WELFORD_VAR(n, m, m2) \
  ((n) > 0 && (m) - (m) == 0 ? (double)(m2) / (double)(n) : GKS_NAN_D)

#endif /* GK_SCALAR_H */
