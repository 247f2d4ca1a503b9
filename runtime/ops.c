/*
** runtime/ops.c -- the elementwise op loops, expanded from runtime/ops.h.
**
** Each RT_OPS row's expression for a dtype class is compiled here as C, in
** a loop over n elements (a, b, c the operands' elements; T the result
** type, U the operands' unsigned type as block-scope typedefs), calling
** kernels/gk_scalar.h's helpers.  The cpu backend runs these loops on its
** chunks; the checker's constant folding (compiler/build.c) runs them on one
** element, so a folded constant is the value the cpu backend computes; the
** cuda lowering writes the same expression text into its kernels.
*/
#include <math.h>
#include <string.h>
#include "runtime/rt.h"
#include "kernels/gk_scalar.h"

/* Result type of an op of dtype rule R on operands of C type TI. */
#define OUT_RR_NONE(TI) TI
#define OUT_RR_ARITH(TI) TI
#define OUT_RR_SAME(TI) TI
#define OUT_RR_FLOAT(TI) TI
#define OUT_RR_CMP(TI) gk_u8
#define OUT_RR_LOGIC(TI) gk_u8
#define OUT_RR_PRED(TI) gk_u8

/* Loops by number of inputs (the row's nin, token-pasted). */
#define LOOP_0(TI, TO, UI, e)
#define LOOP_1(TI, TO, UI, e) do { typedef TO T; typedef UI U; (void)sizeof(T); (void)sizeof(U); \
    const TI *pa = in[0]; TO *o = out; \
    for (int64_t i = 0; i < n; i++) { const TI a = pa[i]; (void)a; o[i] = e; } } while (0)
#define LOOP_2(TI, TO, UI, e) do { typedef TO T; typedef UI U; (void)sizeof(T); (void)sizeof(U); \
    const TI *pa = in[0], *pb = in[1]; TO *o = out; \
    for (int64_t i = 0; i < n; i++) { const TI a = pa[i], b = pb[i]; (void)a; (void)b; o[i] = e; } } while (0)
#define LOOP_3(TI, TO, UI, e) do { typedef TO T; typedef UI U; (void)sizeof(T); (void)sizeof(U); \
    const gk_u8 *pa = in[0]; const TI *pb = in[1], *pc = in[2]; TO *o = out; \
    for (int64_t i = 0; i < n; i++) { const gk_u8 a = pa[i]; const TI b = pb[i], c = pc[i]; (void)a; (void)b; (void)c; o[i] = e; } } while (0)

#define CASE_F(NAME, str, nin, cls, rule, fl, sym, ef, ed, ei, eb) \
  case RT_##NAME: LOOP_##nin(TI, OUT_##rule(TI), UI, ef); break;
#define CASE_D(NAME, str, nin, cls, rule, fl, sym, ef, ed, ei, eb) \
  case RT_##NAME: LOOP_##nin(TI, OUT_##rule(TI), UI, ed); break;
#define CASE_I(NAME, str, nin, cls, rule, fl, sym, ef, ed, ei, eb) \
  case RT_##NAME: LOOP_##nin(TI, OUT_##rule(TI), UI, ei); break;
#define CASE_B(NAME, str, nin, cls, rule, fl, sym, ef, ed, ei, eb) \
  case RT_##NAME: LOOP_##nin(TI, OUT_##rule(TI), UI, eb); break;

#define TI float
#define UI float
static void map_f32(int op, const void *const in[3], void *out, int64_t n) { switch (op) { RT_OPS(CASE_F) } }
#undef TI
#undef UI
#define TI double
#define UI double
static void map_f64(int op, const void *const in[3], void *out, int64_t n) { switch (op) { RT_OPS(CASE_D) } }
#undef TI
#undef UI
#define TI int32_t
#define UI uint32_t
static void map_i32(int op, const void *const in[3], void *out, int64_t n) { switch (op) { RT_OPS(CASE_I) } }
#undef TI
#undef UI
#define TI int64_t
#define UI uint64_t
static void map_i64(int op, const void *const in[3], void *out, int64_t n) { switch (op) { RT_OPS(CASE_I) } }
#undef TI
#undef UI
#define TI gk_u8
#define UI unsigned
static void map_bool(int op, const void *const in[3], void *out, int64_t n) { switch (op) { RT_OPS(CASE_B) } }
#undef TI
#undef UI

/* The conversions of a cast: bool is (x != 0); float -> int is gk_f2i32 /
** gk_f2i64 (through double); int -> int wraps; the rest are C's. */
void rt_cast_loop(gk_dtype from, gk_dtype to, const void *pa, void *po, int64_t n) {
#define CONV(TO, F2I, I2T) do { TO *o = po; switch (from) { \
    case GK_BOOL: { const gk_u8 *a = pa; for (int64_t i = 0; i < n; i++) o[i] = (TO)(a[i] != 0); } break; \
    case GK_I32: { const int32_t *a = pa; for (int64_t i = 0; i < n; i++) o[i] = I2T(a[i]); } break; \
    case GK_I64: { const int64_t *a = pa; for (int64_t i = 0; i < n; i++) o[i] = I2T(a[i]); } break; \
    case GK_F32: { const float *a = pa; for (int64_t i = 0; i < n; i++) o[i] = F2I((double)a[i]); } break; \
    case GK_F64: { const double *a = pa; for (int64_t i = 0; i < n; i++) o[i] = F2I(a[i]); } break; \
    } } while (0)
#define TOBOOL(v) ((gk_u8)((v) != 0))
#define TOF32(v) ((float)(v))
#define TOF64(v) (v)
  switch (to) {
  case GK_BOOL: CONV(gk_u8, TOBOOL, TOBOOL); break;
  case GK_I32: CONV(int32_t, gk_f2i32, (int32_t)); break;
  case GK_I64: CONV(int64_t, gk_f2i64, (int64_t)); break;
  case GK_F32: CONV(float, TOF32, (float)); break;
  case GK_F64: CONV(double, TOF64, (double)); break;
  }
#undef CONV
}

void rt_map_loop(int op, gk_dtype ti, gk_dtype to, const void *const in[3], void *out, int64_t n) {
  if (op == RT_CAST) { rt_cast_loop(ti, to, in[0], out, n); return; }
  switch (ti) {
  case GK_F32: map_f32(op, in, out, n); break;
  case GK_F64: map_f64(op, in, out, n); break;
  case GK_I32: map_i32(op, in, out, n); break;
  case GK_I64: map_i64(op, in, out, n); break;
  case GK_BOOL: map_bool(op, in, out, n); break;
  }
}
