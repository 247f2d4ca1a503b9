/*
** runtime/plan.c -- tables that describe the ops, reductions and group kinds
** of runtime/plan.h (expanded from runtime/ops.h), and small helpers shared
** by both backends.
*/
#include "runtime/rt.h"

#define X(name, str, nin, cls, rule, fl, sym, ef, ed, ei, eb) \
  { str, nin, cls, rule, fl, sym, { RT_STR(ef), RT_STR(ed), RT_STR(ei), RT_STR(eb) } },
const rt_opinfo rt_op_info[RT_NOPS] = { RT_OPS(X) };
#undef X

#define X(name, str, acc, fl, fn) { str, acc, fl },
const rt_ropinfo rt_rop_info[ROP_N] = { RT_ROPS(X) };
#undef X
#define X(name, str, acc, fl, fn) str,
const char *const rt_rop_name[] = { RT_ROPS(X) };
#undef X

#define X(name, str, size, ct, cuda, rank, kind, npy, dl) { str, size, cuda, rank, kind, npy, dl },
const rt_dtypeinfo rt_dtype_info[] = { RT_DTYPES(X) };
#undef X
#define X(name, ...) + 1
enum { RT_NDTYPES = 0 RT_DTYPES(X) };
#undef X

size_t rt_dtype_size(gk_dtype t) { return (unsigned)t < RT_NDTYPES ? rt_dtype_info[t].size : 0; }
const char *rt_dtype_name(gk_dtype t) { return (unsigned)t < RT_NDTYPES ? rt_dtype_info[t].name : "?"; }

/* ORDER: rt_group_kind */
const char *const rt_group_name[] = { "map", "reduce", "rows", "scan", "filter", "partition", "hist",
                                      "matmul", "transpose", "sort" };
