/*
** runtime/plan.c -- tables that describe the ops, reductions and group kinds
** of runtime/plan.h, and small helpers shared by both backends.
*/
#include "runtime/rt.h"

#define X(name, str, nin, cls) { str, nin, cls },
const rt_opinfo rt_op_info[RT_NOPS] = { RT_OPS(X) };
#undef X

/* ORDER: rt_rop */
const char *const rt_rop_name[] = { "sum", "prod", "max", "min", "argmax", "argmin", "any", "all", "var" };

/* ORDER: rt_group_kind */
const char *const rt_group_name[] = { "map", "reduce", "rows", "scan", "filter", "partition", "hist",
                                      "matmul", "transpose" };
