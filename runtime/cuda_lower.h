/*
** compiler/lower.h -- lowering of one fused group (runtime/plan.h) to CUDA C
** source that instantiates the kernels/ primitives with generated functors.
**
** The source is deterministic text; the kernel is named gk_<16 hex digits of
** a hash of the text>.  Sizes are baked in as constants.  The launch
** description (grid, block, shared memory, temp, gemm) goes into the group's
** launch fields (runtime/plan.h).  Kernel parameters: the device pointers of
** g->ins in order, then of g->outs in order, then the temp pointer, then
** g->nscal unsigned long long scalars g->scal[] (sc0, sc1, ...: the seed and
** offset of every RAND/RANDN node), so that statements that differ only in
** those values share one kernel text and hit the kernel cache.
*/
#ifndef GK_LOWER_H
#define GK_LOWER_H

#include "runtime/rt.h"

/* Lowers g: sets g->src (allocated with mem; the caller frees it with
** rt_free(mem, src, strlen(src) + 1)), g->kname and the launch fields.
** sms is the device's multiprocessor count (grids of persistent kernels
** depend on it); tf32 allows TF32 tensor cores for f32 matmul.  Returns
** GK_OK, or GK_ENOMEM / GK_EMISUSE with the message in e. */
int lower_group(rt_group *g, rt_mem *mem, int sms, int tf32, rt_err *e);

/* The fuse step's hook, called for every group before it runs: lowers g when
** the backend is "cuda" or the environment sets GK_NVRTC_CHECK; with
** GK_NVRTC_CHECK also compiles the source with NVRTC for sm_90 and counts
** the result (a failure prints the NVRTC log on stderr; a summary line
** "gk-nvrtc: N compiled, M failed" is printed on stderr at exit).  Returns
** GK_OK or an error status with the message in be->err. */
int lower_hook(rt_backend *be, rt_group *g, rt_mem *mem, int tf32);

/* Refreshes the per-launch scalars of a group whose text and launch fields
** were copied from an earlier lowering of the same structure (the plan
** cache in fuse.c): the seed and offset of every random source, in node
** order.  Returns 0, or -1 when the text baked values in (too many random
** sources for parameters) and the group must be lowered again. */
int lower_rebind(rt_group *g);

#endif /* GK_LOWER_H */
