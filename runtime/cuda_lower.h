/*
** runtime/cuda_lower.h -- the cuda backend's lowering of one fused group
** (runtime/plan.h) to CUDA C source that instantiates the kernels/
** primitives with generated functors, and the launch list that runs it.
**
** The source is deterministic text that depends on the group's structure
** (ops, dtypes, ranks, which sizes are 0 or 1, 32/64-bit indices, alignment
** and the primitive variant a size class selects), never on its sizes:
** element, row and column counts, view offsets and strides, temp offsets and
** float constants are kernel parameters (sc<k>), so one kernel serves every
** size of a structure.  The kernel is named gk_<16 hex digits of a hash of
** the text>.  Kernel parameters: the device pointers of g->ins in order,
** then of g->outs in order, then the temp pointer, then nscal unsigned long
** long scalars scal[] (the seed and offset of every RAND/RANDN node first,
** then the sizes), then the error record when errflag, then when doneflag
** the completion flag's address and sequence number (gk_u64 each).
*/
#ifndef RT_CUDA_LOWER_H
#define RT_CUDA_LOWER_H

#include "runtime/rt.h"

#define RT_MAX_SCAL 128    /* per-launch scalar parameters of one kernel: random streams, then sizes */
#define RT_MAX_RAND 32     /* of them for random streams (16) */
#define CU_MAX_STEPS 40    /* launches of one group (a sort of 8-byte keys in 2^32 segments: 3 x 12 passes) */

/* One launch of a group's launch list. */
enum { CU_STEP_KERNEL, CU_STEP_GEMM };
typedef struct cu_step {
  int op;                  /* CU_STEP_* */
  char kname[32];          /* KERNEL: the kernel in the group's source */
  uint32_t grid[3], block[3], smem;   /* KERNEL: geometry, dynamic shared memory bytes */
  int8_t a, b;             /* GEMM: ins index of A / B, or -1: in temp at aoff / boff */
  uint8_t tf32;            /* GEMM: may use TF32 tensor cores */
  uint8_t coop;            /* KERNEL: every block resident at once (cu_launch_coop; gk_row_grid) */
  int64_t aoff, boff, m, n, k;
} cu_step;

/* A group lowered for the cuda backend (rt_group.prep). */
struct rt_prep {
  char *src;               /* CUDA source (all of the group's kernels) */
  size_t srclen;
  char kname[32];          /* its (first) kernel's name */
  int nstep;               /* the launch list, run in order */
  cu_step step[CU_MAX_STEPS];
  int64_t temp_bytes;      /* device temp buffer for the launches */
  uint8_t temp_zero;       /* zero temp before the group runs */
  uint8_t outs_zero;       /* zero every output before the group runs (hist counts) */
  /* The kernel's last parameter is an error record (unsigned long long[3],
  ** zero when clear): a kernel that finds its input invalid (hist: a range
  ** that is not finite or lo > hi) sets [0] = 1, [1], [2] = the bits of the
  ** two doubles lo, hi (first error wins).  The backend reports it after the
  ** next read or sync. */
  uint8_t errflag;
  /* A whole-array reduction (lower_reduce1): its last two parameters are a
  ** flag address and a sequence number; when the address is not 0 the
  ** thread that writes the results then writes the number there (after
  ** __threadfence_system), so the host can see a mapped result land without
  ** waiting for the stream (runtime/cu.h, cu_done_next). */
  uint8_t doneflag;
  uint8_t aligned16;       /* lowered for 16-byte-aligned inputs (vector loads); else scalar loads only */
  /* A filter: its kernel writes the count of selected elements (gk_i64) at
  ** temp + count_at; the backend downloads it into outs[0]->val->count
  ** after the launch (the filter's one sync: its length is the count). */
  uint8_t count_out;
  int64_t count_at;
  int nscal, nrand;        /* per-launch scalars, the first nrand of the random streams */
  uint64_t scal[RT_MAX_SCAL];
  /* while lowering: the kernel launch and the gemm the steps are made of */
  uint8_t nokernel, gemm;
  uint8_t multi;           /* the lowering wrote step[] itself, each kname a suffix of the source's name (sort passes) */
  cu_step kl, gm;
};

/* Lowers g into a new g->prep (replacing one it had), allocated with mem.
** sms is the device's multiprocessor count (grids of persistent kernels
** depend on it); smem_block the dynamic shared memory a block may take for
** the long-row kernels' shares (the device's opt-in maximum on sm_90 and
** later, 0 below: there the cluster kernels' text streams the row; -1: an
** H200's, for a lowering without a device); tf32
** allows TF32 tensor cores for f32 matmul.  Returns GK_OK, or GK_ENOMEM /
** GK_EMISUSE with the message in e. */
int cuda_lower(rt_group *g, rt_mem *mem, int sms, int64_t smem_block, int tf32, rt_err *e);

/* prepare_group of both backends: lowers g when `lower` (the cuda backend)
** or the environment sets GK_NVRTC_CHECK (then for an H200); with GK_NVRTC_CHECK also compiles
** the source with NVRTC for sm_90 and counts the result (a failure prints
** the NVRTC log on stderr; "gk-nvrtc: N compiled, M failed" is printed on
** stderr at exit; GK_NVRTC_CHECK=src prints every kernel's text, =names its
** name).  Sets g->nlaunch.  Returns GK_OK or an error status with the
** message in be->err. */
int cuda_prepare(rt_backend *be, rt_group *g, int lower, int sms, int64_t smem_block, int tf32);

/* The multiplier m and shift s of gk_fdiv32 (kernels/gk_common.cuh) for a
** divisor 1 <= d < 2^31: n / d == (umulhi(n, m) + n) >> s for n < 2^31. */
void cuda_fdiv_magic(int64_t d, uint32_t *m, uint32_t *s);

#endif /* RT_CUDA_LOWER_H */
