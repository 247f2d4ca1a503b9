/*
** runtime/plan.h -- what the runtime executes: typed array-op nodes, groups
** of them (one kernel each), and plans (groups in order).
**
** This is the interface between compiler/ and runtime/.  The compiler owns
** the lazy graph, checks, CSE and fusion; it hands the runtime a plan whose
** groups reference rt_node structs.  A backend runs a plan group by group:
** every node in a group that is not materialized is computed inside the
** group; every node in `outs` gets a value (rt_node.val) when the group ends.
**
** Semantics of every op are defined by the cpu backend (runtime/cpu.c); the
** cuda backend must agree with it (exactly for integers, orderings and
** counts; within the tolerances in docs/language.md for floats).
*/
#ifndef RT_PLAN_H
#define RT_PLAN_H

#include <stdint.h>
#include <stddef.h>
#include "gk.h"

#include "runtime/ops.h"   /* the op, reduction and dtype tables */

#define X(name, str, nin, cls, rule, fl, sym, ef, ed, ei, eb) RT_##name,
typedef enum { RT_OPS(X) RT_NOPS } rt_opcode;
#undef X

typedef struct rt_opinfo {
  const char *name;  /* as printed by --plan; the builtin's name when OF_FN */
  int nin;           /* inputs */
  int cls;           /* RC_* */
  int rule;          /* rt_rule: the checker's dtype rule */
  int flags;         /* OF_* */
  const char *sym;   /* as error messages name it ("+", "**", "maximum") */
  const char *expr[4]; /* C expression per operand class: f32, f64, integers, bool (RT_OPS) */
} rt_opinfo;
extern const rt_opinfo rt_op_info[RT_NOPS];

/* Reduction / scan operators (RT_ROPS). */
#define X(name, str, acc, fl, fn) ROP_##name,
typedef enum { RT_ROPS(X) ROP_N } rt_rop;
#undef X
typedef struct rt_ropinfo {
  const char *name;
  int acc;           /* RA_* */
  int flags;         /* RF_* */
} rt_ropinfo;
extern const rt_ropinfo rt_rop_info[ROP_N];
extern const char *const rt_rop_name[];

/* Dtypes (RT_DTYPES): every property of gk_dtype t is rt_dtype_info[t]'s. */
typedef struct rt_dtypeinfo {
  const char *name;  /* "f32" */
  size_t size;       /* bytes per element */
  const char *cuda;  /* C type in kernel text */
  int rank;          /* promotion rank within its kind (i32 < i64, f32 < f64) */
  int kind;          /* 0 bool, 1 integer, 2 float */
  const char *npy;   /* .npy descr */
  int dlpack;        /* DLPack type code (kDLInt 0, kDLFloat 2, kDLBool 6) */
} rt_dtypeinfo;
extern const rt_dtypeinfo rt_dtype_info[];
size_t rt_dtype_size(gk_dtype t);        /* 0 when t is not a dtype */
const char *rt_dtype_name(gk_dtype t);   /* "?" when t is not a dtype */

typedef struct rt_value rt_value;

/* One node of the array-op DAG.  Shapes are always known. */
typedef struct rt_node {
  uint8_t op;                    /* rt_opcode */
  uint8_t rop;                   /* REDUCE / SCAN: rt_rop */
  int8_t axis;                   /* REDUCE / SCAN: -1 whole array, 1 per row, 0 per column */
  uint8_t excl;                  /* SCAN: exclusive; HIST: range taken from the data (numpy.histogram without range) */
  gk_dtype t;                    /* element type of the result */
  int ndim;                      /* 0..GK_MAX_DIMS */
  int64_t shape[GK_MAX_DIMS];    /* dims */
  int64_t n;                     /* element count (product of shape; 1 for 0-d) */
  int nin;                       /* inputs in use */
  struct rt_node *in[3];         /* inputs */
  union { int64_t i; double f; } c; /* CONST value: .i for bool/ints, .f for floats */
  uint64_t seed, offset;         /* RAND / RANDN stream */
  int64_t voff;                  /* VIEW: offset into the input */
  int64_t vstride[GK_MAX_DIMS];  /* VIEW: input stride per output dim (0 = broadcast) */
  int64_t nbins;                 /* HIST; TOPK / ARGTOPK: k */
  int id;                        /* stable number for plan printing */
  rt_value *val;                 /* the value once materialized, else NULL */
  void *aux;                     /* owner's use (the compiler's graph entry) */
} rt_node;

/* Group kinds: the primitive a group runs on.  ORDER: rt_group_name[]. */
typedef enum {
  RG_MAP,        /* elementwise outputs of one shape */
  RG_REDUCE,     /* whole-array reductions of one element count (+ scalar epilogue) */
  RG_ROWS,       /* per-row (or per-column) reductions and maps of one matrix shape */
  RG_SCAN,       /* prefix scan with fused prologue */
  RG_FILTER,     /* stream compaction */
  RG_PARTITION,  /* stable partition */
  RG_HIST,       /* histogram */
  RG_MATMUL,     /* matrix product */
  RG_TRANSPOSE,  /* materialized permutation of an input */
  RG_SORT        /* one sort-family node (sort, argsort, topk, argtopk, runs, searchsorted): radix passes */
} rt_group_kind;
extern const char *const rt_group_name[];

/* A planning constraint every backend may rely on: a group holds at most
** this many dependent reduction stages (a reduction reading another of its
** group is one stage later).  The fuser splits a deeper chain into more
** groups (compiler/fuse.c); the CUDA lowering's staged kernel has this many
** grid-barrier stages at most (at most 7: its stage tables have 8 slots). */
#define RT_MAX_STAGES 6

typedef struct rt_prep rt_prep;   /* a backend's prepared group (runtime/cuda_lower.h for cuda) */

typedef struct rt_group {
  rt_group_kind kind;
  int nnodes;              /* nodes computed in this group, inputs before users */
  rt_node **nodes;
  int nout;                /* nodes this group materializes */
  rt_node **outs;
  int nin;                 /* materialized nodes it reads */
  rt_node **ins;
  int nlaunch;             /* device launches this group costs (--plan counts them; the same on every backend) */
  rt_prep *prep;           /* what the backend's prepare_group made of it (the cuda backend: kernel text
                           ** and launch list, runtime/cuda_lower.h), or NULL; rt_prep_free frees it */
} rt_group;

typedef struct rt_plan {
  int ngroups;
  rt_group *groups;
} rt_plan;

#endif /* RT_PLAN_H */
