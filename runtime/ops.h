/*
** runtime/ops.h -- the registry: one row per op, reduction and dtype.
**
** Everything about an op is its row of RT_OPS: the name (--plan, and the
** builtin's name when OF_FN says it is one), the number of inputs, the
** class, the named dtype rule the checker applies (compiler/build.c), the
** symbol error messages use, and one C expression per dtype class of its
** operands (f32, f64, i32/i64, bool).  An expression reads the operands a,
** b, c and may name T (the result's C type) and U (the unsigned type of an
** integer operand); the scalar helpers it calls are kernels/gk_scalar.h's.
** runtime/cpu.c expands each expression as C inside its loops
** (rt_map_loop: a, b, c are the elements; T, U block-scope typedefs);
** compiler/lower.c stringifies the same expression (RT_STR) and writes it
** into the kernel text with the operand names substituted.  The two
** backends therefore run the same characters, compiled with the same
** contraction rule (host -ffp-contract=off, NVRTC --fmad=false).
**
** Adding an elementwise op is one row here (plus its docs row in
** docs/language.md and its tests); the checker, both backends, --plan and
** the builtin list (gk_builtin_names) take it from the row.
**
** ORDER: the rows define rt_opcode; rt_op_info[] (runtime/plan.c) is
** generated from them, as are rt_rop_info[] and rt_dtype_info[] from theirs.
*/
#ifndef RT_OPS_H
#define RT_OPS_H

/* Op classes. */
enum { RC_SRC, RC_IDX, RC_MAP, RC_HEAVY };

/* Dtype rules (docs/language.md), applied by the checker to the operands
** after the weak/strong promotion of binary operands. */
typedef enum {
  RR_NONE,   /* not an elementwise op, or one with its own code (cast, where) */
  RR_ARITH,  /* promoted type; bool becomes i64 */
  RR_SAME,   /* promoted (binary) or operand (unary) type, bool included */
  RR_FLOAT,  /* ints become floats: bool/i32 -> f32, i64 -> f64 */
  RR_CMP,    /* operands promoted, result bool */
  RR_LOGIC,  /* bool operands only, result bool */
  RR_PRED    /* any operand type, result bool (isnan, isinf, isfinite) */
} rt_rule;

/* Op flags.  The column is one token, 0 or OF_FN: compiler/build.c pastes
** it (OP_BUILTIN_##flags) to make the builtin rows. */
#define OF_FN 1    /* a builtin function of that name: name(x) or name(a, b) */

/* X(NAME, "name", inputs, class, rule, flags, "symbol",
**   f32 expression, f64 expression, i32/i64 expression, bool expression) */
#define RT_OPS(X) \
  X(INPUT,   "input",   0, RC_SRC, RR_NONE, 0, "input", 0, 0, 0, 0)  /* a materialized value */ \
  X(CONST,   "const",   0, RC_SRC, RR_NONE, 0, "const", 0, 0, 0, 0)  /* scalar constant c (0-d), in dtype t */ \
  X(IOTA,    "iota",    0, RC_SRC, RR_NONE, 0, "iota", 0, 0, 0, 0)   /* element i = i (flat index) */ \
  X(RAND,    "rand",    0, RC_SRC, RR_NONE, 0, "rand", 0, 0, 0, 0)   /* U[0,1) f32: gk_rand(seed, offset + i) */ \
  X(RANDN,   "randn",   0, RC_SRC, RR_NONE, 0, "randn", 0, 0, 0, 0)  /* N(0,1) f32: gk_randn(seed, offset + i) */ \
  X(VIEW,    "view",    1, RC_IDX, RR_NONE, 0, "view", 0, 0, 0, 0)   /* in index = voff + sum_d coord_d * vstride[d] */ \
  X(RESHAPE, "reshape", 1, RC_IDX, RR_NONE, 0, "reshape", 0, 0, 0, 0) /* same flat index, new shape */ \
  X(GATHER,  "gather",  2, RC_IDX, RR_NONE, 0, "gather", 0, 0, 0, 0)  /* in0 rows picked by in1 (ints in range, negative from the end): see cpu.c */ \
  X(CONCAT,  "concat",  2, RC_IDX, RR_NONE, 0, "concat", 0, 0, 0, 0)  /* [R,A] and [R,B] side by side: [R,A+B] (A, B > 0) */ \
  X(CAST,    "cast",    1, RC_MAP, RR_NONE, 0, "cast", a, a, a, a)   /* rt_cast_loop; float -> int is gk_f2i32/gk_f2i64 */ \
  X(NEG,     "neg",     1, RC_MAP, RR_ARITH, 0, "-", (-a), (-a), ((T)((U)0 - (U)a)), a) \
  X(NOT,     "not",     1, RC_MAP, RR_LOGIC, 0, "not", a, a, a, ((gk_u8)!a)) \
  X(ABS,     "abs",     1, RC_MAP, RR_SAME, OF_FN, "abs", fabsf(a), fabs(a), (a < 0 ? (T)((U)0 - (U)a) : a), a) \
  X(EXP,     "exp",     1, RC_MAP, RR_FLOAT, OF_FN, "exp", expf(a), exp(a), a, a) \
  X(LOG,     "log",     1, RC_MAP, RR_FLOAT, OF_FN, "log", logf(a), log(a), a, a) \
  X(SQRT,    "sqrt",    1, RC_MAP, RR_FLOAT, OF_FN, "sqrt", sqrtf(a), sqrt(a), a, a) \
  X(RSQRT,   "rsqrt",   1, RC_MAP, RR_FLOAT, OF_FN, "rsqrt", (1.0f / sqrtf(a)), (1.0 / sqrt(a)), a, a) \
  X(SIN,     "sin",     1, RC_MAP, RR_FLOAT, OF_FN, "sin", sinf(a), sin(a), a, a) \
  X(COS,     "cos",     1, RC_MAP, RR_FLOAT, OF_FN, "cos", cosf(a), cos(a), a, a) \
  X(TAN,     "tan",     1, RC_MAP, RR_FLOAT, OF_FN, "tan", tanf(a), tan(a), a, a) \
  X(ASIN,    "asin",    1, RC_MAP, RR_FLOAT, OF_FN, "asin", asinf(a), asin(a), a, a) \
  X(ACOS,    "acos",    1, RC_MAP, RR_FLOAT, OF_FN, "acos", acosf(a), acos(a), a, a) \
  X(ATAN,    "atan",    1, RC_MAP, RR_FLOAT, OF_FN, "atan", atanf(a), atan(a), a, a) \
  X(SINH,    "sinh",    1, RC_MAP, RR_FLOAT, OF_FN, "sinh", sinhf(a), sinh(a), a, a) \
  X(COSH,    "cosh",    1, RC_MAP, RR_FLOAT, OF_FN, "cosh", coshf(a), cosh(a), a, a) \
  X(TANH,    "tanh",    1, RC_MAP, RR_FLOAT, OF_FN, "tanh", tanhf(a), tanh(a), a, a) \
  X(LOG2,    "log2",    1, RC_MAP, RR_FLOAT, OF_FN, "log2", log2f(a), log2(a), a, a) \
  X(LOG10,   "log10",   1, RC_MAP, RR_FLOAT, OF_FN, "log10", log10f(a), log10(a), a, a) \
  X(EXP2,    "exp2",    1, RC_MAP, RR_FLOAT, OF_FN, "exp2", exp2f(a), exp2(a), a, a) \
  X(EXPM1,   "expm1",   1, RC_MAP, RR_FLOAT, OF_FN, "expm1", expm1f(a), expm1(a), a, a) \
  X(LOG1P,   "log1p",   1, RC_MAP, RR_FLOAT, OF_FN, "log1p", log1pf(a), log1p(a), a, a) \
  X(SIGMOID, "sigmoid", 1, RC_MAP, RR_FLOAT, OF_FN, "sigmoid", gk_sigmoid_f(a), gk_sigmoid_d(a), a, a) \
  X(RELU,    "relu",    1, RC_MAP, RR_SAME, OF_FN, "relu", gk_relu_f(a), gk_relu_d(a), (a > 0 ? a : (T)0), a) \
  X(FLOOR,   "floor",   1, RC_MAP, RR_FLOAT, OF_FN, "floor", floorf(a), floor(a), a, a) \
  X(CEIL,    "ceil",    1, RC_MAP, RR_FLOAT, OF_FN, "ceil", ceilf(a), ceil(a), a, a) \
  X(ROUND,   "round",   1, RC_MAP, RR_SAME, OF_FN, "round", rintf(a), rint(a), a, a) /* half to even */ \
  X(SIGN,    "sign",    1, RC_MAP, RR_SAME, OF_FN, "sign", gk_sign_f(a), gk_sign_d(a), ((T)((a > 0) - (a < 0))), a) \
  X(ISFINITE,"isfinite",1, RC_MAP, RR_PRED, OF_FN, "isfinite", ((gk_u8)(isfinite(a) != 0)), ((gk_u8)(isfinite(a) != 0)), ((gk_u8)1), ((gk_u8)1)) \
  X(ISNAN,   "isnan",   1, RC_MAP, RR_PRED, OF_FN, "isnan", ((gk_u8)(isnan(a) != 0)), ((gk_u8)(isnan(a) != 0)), ((gk_u8)0), ((gk_u8)0)) \
  X(ISINF,   "isinf",   1, RC_MAP, RR_PRED, OF_FN, "isinf", ((gk_u8)(isinf(a) != 0)), ((gk_u8)(isinf(a) != 0)), ((gk_u8)0), ((gk_u8)0)) \
  X(ADD,     "add",     2, RC_MAP, RR_ARITH, 0, "+", (a + b), (a + b), ((T)((U)a + (U)b)), ((T)((U)a + (U)b))) \
  X(SUB,     "sub",     2, RC_MAP, RR_ARITH, 0, "-", (a - b), (a - b), ((T)((U)a - (U)b)), ((T)((U)a - (U)b))) \
  X(MUL,     "mul",     2, RC_MAP, RR_ARITH, 0, "*", (a * b), (a * b), ((T)((U)a * (U)b)), ((T)((U)a * (U)b))) \
  X(DIV,     "div",     2, RC_MAP, RR_FLOAT, 0, "/", (a / b), (a / b), (b ? (T)(a / b) : (T)0), (b ? (T)(a / b) : (T)0)) \
  X(MOD,     "mod",     2, RC_MAP, RR_ARITH, 0, "%", gk_fmod_f(a, b), gk_fmod_d(a, b), ((T)gk_imod((gk_i64)a, (gk_i64)b)), ((T)gk_imod((gk_i64)a, (gk_i64)b))) \
  X(POW,     "pow",     2, RC_MAP, RR_ARITH, OF_FN, "**", powf(a, b), pow(a, b), ((T)gk_ipow((gk_i64)a, (gk_i64)b)), ((T)gk_ipow((gk_i64)a, (gk_i64)b))) \
  X(MAXIMUM, "maximum", 2, RC_MAP, RR_SAME, OF_FN, "maximum", gk_nanmax_f(a, b), gk_nanmax_d(a, b), GK_IMAX(a, b), (a > b ? a : b)) \
  X(MINIMUM, "minimum", 2, RC_MAP, RR_SAME, OF_FN, "minimum", gk_nanmin_f(a, b), gk_nanmin_d(a, b), GK_IMIN(a, b), (a < b ? a : b)) \
  X(ATAN2,   "atan2",   2, RC_MAP, RR_FLOAT, OF_FN, "atan2", atan2f(a, b), atan2(a, b), a, a) \
  X(HYPOT,   "hypot",   2, RC_MAP, RR_FLOAT, OF_FN, "hypot", hypotf(a, b), hypot(a, b), a, a) \
  X(EQ,      "eq",      2, RC_MAP, RR_CMP, 0, "==", ((gk_u8)(a == b)), ((gk_u8)(a == b)), ((gk_u8)(a == b)), ((gk_u8)(a == b))) \
  X(NE,      "ne",      2, RC_MAP, RR_CMP, 0, "!=", ((gk_u8)(a != b)), ((gk_u8)(a != b)), ((gk_u8)(a != b)), ((gk_u8)(a != b))) \
  X(LT,      "lt",      2, RC_MAP, RR_CMP, 0, "<", ((gk_u8)(a < b)), ((gk_u8)(a < b)), ((gk_u8)(a < b)), ((gk_u8)(a < b))) \
  X(LE,      "le",      2, RC_MAP, RR_CMP, 0, "<=", ((gk_u8)(a <= b)), ((gk_u8)(a <= b)), ((gk_u8)(a <= b)), ((gk_u8)(a <= b))) \
  X(GT,      "gt",      2, RC_MAP, RR_CMP, 0, ">", ((gk_u8)(a > b)), ((gk_u8)(a > b)), ((gk_u8)(a > b)), ((gk_u8)(a > b))) \
  X(GE,      "ge",      2, RC_MAP, RR_CMP, 0, ">=", ((gk_u8)(a >= b)), ((gk_u8)(a >= b)), ((gk_u8)(a >= b)), ((gk_u8)(a >= b))) \
  X(AND,     "and",     2, RC_MAP, RR_LOGIC, 0, "and", ((gk_u8)(a && b)), ((gk_u8)(a && b)), ((gk_u8)(a && b)), ((gk_u8)(a && b))) \
  X(OR,      "or",      2, RC_MAP, RR_LOGIC, 0, "or", ((gk_u8)(a || b)), ((gk_u8)(a || b)), ((gk_u8)(a || b)), ((gk_u8)(a || b))) \
  X(WHERE,   "where",   3, RC_MAP, RR_NONE, 0, "where", (a ? b : c), (a ? b : c), (a ? b : c), (a ? b : c)) /* a bool; class of b */ \
  X(REDUCE,  "reduce",  1, RC_HEAVY, RR_NONE, 0, "reduce", 0, 0, 0, 0) /* rop over axis (-1 all, 1 per row, 0 per column) */ \
  X(SCAN,    "scan",    1, RC_HEAVY, RR_NONE, 0, "scan", 0, 0, 0, 0)   /* rop prefix over axis, excl */ \
  X(FILTER,  "filter",  2, RC_HEAVY, RR_NONE, 0, "filter", 0, 0, 0, 0) /* in0 values, in1 bool mask; n = number of trues */ \
  X(PARTITION,"partition",2,RC_HEAVY, RR_NONE, 0, "partition", 0, 0, 0, 0) /* trues first (stable), then falses (stable) */ \
  X(HIST,    "hist",    3, RC_HEAVY, RR_NONE, 0, "hist", 0, 0, 0, 0)   /* in0 values, in1 lo, in2 hi (0-d f64); nbins; i64 counts */ \
  X(MATMUL,  "matmul",  2, RC_HEAVY, RR_NONE, 0, "@", 0, 0, 0, 0)      /* [M,K] @ [K,N] */ \
  X(SORT,    "sort",    1, RC_HEAVY, RR_NONE, 0, "sort", 0, 0, 0, 0)   /* ascending, stable, NaN last; axis -1 whole 1-d, 1 per row, 0 per column */ \
  X(ARGSORT, "argsort", 1, RC_HEAVY, RR_NONE, 0, "argsort", 0, 0, 0, 0) /* SORT's permutation: i64 index within the row / column */ \
  X(TOPK,    "topk",    1, RC_HEAVY, RR_NONE, 0, "topk", 0, 0, 0, 0)   /* the nbins (= k) largest per segment, descending, ties by lower index, NaN largest */ \
  X(ARGTOPK, "argtopk", 1, RC_HEAVY, RR_NONE, 0, "argtopk", 0, 0, 0, 0) /* TOPK's i64 indices */ \
  X(RUNS,    "runs",    1, RC_HEAVY, RR_NONE, 0, "runs", 0, 0, 0, 0)   /* 1-d sorted in: bool, i == 0 or in[i] differs from in[i-1] (NaNs equal): unique's mask */ \
  X(SEARCH,  "searchsorted", 2, RC_HEAVY, RR_NONE, 0, "searchsorted", 0, 0, 0, 0) /* in0 sorted 1-d a, in1 v: i64 count of a's elements before v (numpy side=left) */

#define RT_STR_(x) #x
#define RT_STR(x) RT_STR_(x)   /* an expression column as text (no macro expansion inside: operands stay a, b, c) */

/* Reduction / scan operators.
** X(NAME, "name", accumulator, flags, builtin); the identity and combine of the
** monoid rows (sum, prod, max, min, any, all) are the row of the same NAME in
** kernels/gk_scalar.h's GK_MONOIDS, which both backends expand (below the
** runtime, so NVRTC sees it).  The accumulator rule RA_* says what the
** partials are (the cpu backend's acc, the cuda backend's gk_op_*); RF_SCAN:
** scan/exscan take it; RF_HMERGE: partials of equal rows merge horizontally
** (one tuple field can serve two reductions of one input); builtin FN:
** name(x) is the builtin reduction, NOFN: not (var is a composite, b_var). */
enum { RA_WIDE,    /* sum/prod: double for floats, wrapping u64 for ints */
       RA_SAME,    /* max/min: the input type, NaN propagates; identity lowest / highest */
       RA_INDEX,   /* argmax/argmin: (value, first index) */
       RA_BOOL,    /* any/all: identity false / true */
       RA_WELFORD  /* var: (n, mean, m2) in double, Chan's merge */ };
#define RF_SCAN 1     /* scan(x, name) / exscan(x, name) take it */
#define RF_HMERGE 2   /* partials of equal rows merge horizontally */
#define RT_ROPS(X) \
  X(SUM,    "sum",    RA_WIDE,    RF_SCAN | RF_HMERGE, FN) \
  X(PROD,   "prod",   RA_WIDE,    RF_SCAN | RF_HMERGE, FN) \
  X(MAX,    "max",    RA_SAME,    RF_SCAN | RF_HMERGE, FN) \
  X(MIN,    "min",    RA_SAME,    RF_SCAN | RF_HMERGE, FN) \
  X(ARGMAX, "argmax", RA_INDEX,   0, FN) \
  X(ARGMIN, "argmin", RA_INDEX,   0, FN) \
  X(ANY,    "any",    RA_BOOL,    RF_HMERGE, FN) \
  X(ALL,    "all",    RA_BOOL,    RF_HMERGE, FN) \
  X(VAR,    "var",    RA_WELFORD, 0, NOFN)        /* population variance, float in, float out */

/* Dtypes.  ORDER: gk_dtype in gk.h.
** X(NAME, "name", size, C type, CUDA C type, promotion rank within its kind,
**   kind (0 bool, 1 int, 2 float), .npy descr, DLPack type code) */
#define RT_DTYPES(X) \
  X(BOOL, "bool", 1, uint8_t, "gk_u8",  0, 0, "|b1", 6) \
  X(I32,  "i32",  4, int32_t, "int",    0, 1, "<i4", 0) \
  X(I64,  "i64",  8, int64_t, "gk_i64", 1, 1, "<i8", 0) \
  X(F32,  "f32",  4, float,   "float",  0, 2, "<f4", 2) \
  X(F64,  "f64",  8, double,  "double", 1, 2, "<f8", 2)

#endif /* RT_OPS_H */
