/*
** launch.h -- host-side launch geometry for every kernels/ primitive.
**
** Plain C11, no CUDA headers: the C runtime and the tests compute grids,
** blocks, dynamic shared memory and temp-buffer sizes with these functions so
** they always agree with the kernels.  Constants here MUST stay in step with
** the default policies in the .cuh files (ORDER: gk_reduce_policy_v4/_v1,
** gk_scan_policy_default, gk_select_policy_default, gk_hist_policy_v4/_v1).
**
** All sizes are int64; every grid dimension returned fits its CUDA limit.
*/
#ifndef GK_KERNELS_LAUNCH_H
#define GK_KERNELS_LAUNCH_H

#include <stdint.h>

typedef struct gk_launch {
  int64_t grid[3];        /* gridDim.x, .y, .z */
  int block[3];           /* blockDim.x, .y, .z */
  int64_t smem;           /* dynamic shared memory bytes */
  int64_t temp_bytes;     /* device temp buffer the call needs (0 = none) */
  int temp_zero_once;     /* 1: temp must be zero when first allocated; kernels leave it reusable */
  int mode;               /* primitive-specific variant (rows: GK_ROWS_*) */
  int width, packs, pack; /* rows: policy template arguments */
  int batch;              /* rows, warp mode: rows a group holds at once (0 or 1: one) */
  int align;              /* rows, stream / split: policy ALIGN (rows start anywhere, packs from the aligned element) */
  int cluster;            /* rows, GK_ROWS_CLUSTER: blocks a cluster (a row) */
  int full;               /* rows, warp / block mode: policy FULL (cols == width * packs * pack) */
  int async;              /* rows, GK_ROWS_CLUSTER with smem: shares copied by cp.async, two buffers (gk_row_cluster_async) */
  int coop;               /* rows, GK_ROWS_GRID: blocks an SM the launch bounds promise; launched cooperatively */
} gk_launch;

/* One block of bx x by threads, no shared memory, no temp, no variant: each
** plan starts from it and sets what its primitive needs. */
static inline gk_launch gk_launch_blocks(int bx, int by) {
  gk_launch L = {{1, 1, 1}, {bx, by, 1}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  return L;
}

#define GK_REDUCE_THREADS 512      /* gk_reduce_policy_v4/_v1 THREADS */
#define GK_REDUCE_TILE_V4 8192     /* 512 threads x 4 loads x float4 (v2: 8 loads x double2) */
#define GK_REDUCE_TILE_V1 4096     /* 512 threads x 8 scalar loads */
#define GK_REDUCE_BLOCKS_PER_SM 4  /* 2048 threads per SM / 512 */
#define GK_SCAN_THREADS 256        /* gk_scan_policy_default */
#define GK_SCAN_TILE 8192
#define GK_SELECT_THREADS 256      /* gk_select_policy_default */
#define GK_SELECT_TILE 8192
#define GK_HIST_THREADS 1024       /* gk_hist_policy_v4/_v1; launch bounds of 1024 keep the */
#define GK_HIST_SUB 2              /* kernel within 64 registers, so one block per SM always fits */
#define GK_HIST_TILE_V4 16384
#define GK_HIST_TILE_V1 8192
#define GK_HIST_BLOCKS_PER_SM 1
#define GK_SORT_THREADS 256        /* kernels/gk_sort.cuh */
#define GK_SORT_TILE 2048          /* elements per block of a global pass; the longest one-block segment */
#define GK_SORT_BIG 8192           /* the longest segment of gk_sort_big (one block; GK_SORT_BIG=0: the passes) */
#define GK_EPOCH_MAX (1u << 30)    /* look-back flags keep 30 bits of epoch */

static inline int64_t gk_cdiv64(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t gk_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t gk_max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t gk_align16(int64_t x) { return (x + 15) / 16 * 16; }

/* Next look-back epoch after `prev` (1, 2, ..., GK_EPOCH_MAX-1, 1, ...). */
static inline unsigned gk_next_epoch(unsigned prev) { return prev + 1 >= GK_EPOCH_MAX ? 1u : prev + 1; }

/* 64-bit indexing is needed when any index reaches 2^31. */
static inline int gk_need_i64(int64_t n) { return n >= ((int64_t)1 << 31); }

/* ---- gk_grid_reduce ----------------------------------------------------
** vec4: 1 if the Load functor reads with N = 4 (every pointer 16-byte aligned).
** temp: partials (grid * acc_bytes, 16-aligned) then one gk_u32 counter; the
** counter must be zero when first allocated (temp_zero_once). */
/* Speed-only knobs of the 1-D reduce, scan and map kernels
** (GK_RED_VARIANT="key=value,...", read once by runtime/cuda_lower.c; 0 =
** the default).  A reduce or scan policy other than the default changes the
** order a float sum or scan combines in (deterministic still); max, min,
** argmax, integer sums and every map compute the same bits under any knob. */
typedef struct gk_red_knobs {
  int rt, ri, rb;   /* whole-array reduce: threads a block, loads in flight a thread, blocks an SM (grid cap) */
  int rl;           /* whole-array reduce: __launch_bounds__ blocks an SM (registers capped to fit them) */
  int ra;           /* ra=1: that bound (2048 / threads) for light folds only (cuda_lower.c lower_reduce1) */
  int st, si, sw;   /* 1-D scan: threads, items a thread; sw=1: 8-byte values through shared memory in one round */
  int sn;           /* 1-D scan: an integer sum's widening cast in the lift (the tile moves narrow) */
  int mt, mg;       /* elementwise map (vector loop): threads a block, blocks an SM */
  int mf;           /* the online max/sum-exp merges of f32 rescale with expf, not exp in double (gk_fused.cuh): by
                    ** default in whole-array reductions (H100, session 26: sum(exp(x - max(x))) of 10^6 + 3 14.3 ->
                    ** 12.2 us, of 3e7 + 1 49.6 -> 48.4), mf=1 everywhere (rows too), mf=2 nowhere (before session 26) */
  int me;           /* me=-1: a whole-array online fold rescales on every lane's first tile (an exp in double of a sum
                    ** of 0), as before session 27 (gk_fused.cuh gkl_ms_fold_tile's Z) */
  int ma;           /* ma=-1: the whole-array online pair's block trees merge (m, s) pairs, an exp a level (before
                    ** session 27); by default every thread's sum is rescaled to the block's max first (gk_fused.cuh) */
  int rs, ss;       /* small n (gk_small_1d): rs=-1 the reduce keeps 512 threads, ss=-1 the f32 / 4-byte scan 256 x 32
                    ** (before session 27); the default halves the block so that every SM gets tiles */
} gk_red_knobs;
/* A 1-D reduce or scan of n elements is small when its default tiles (8192
** elements) number at most GK_SMALL_TILES_PER_SM an SM: one tile a block
** then leaves SMs idle (10^6 elements: 123 blocks on 132 SMs) or unevenly
** loaded (1.5 x 10^6: 184 blocks, 52 SMs with two), and the block's serial
** part (its tree, the look-back) is not hidden behind other blocks' loads.
** Tiles of 4096 there: 245 at 10^6, every SM with one or two. */
#define GK_SMALL_TILES_PER_SM 2
static inline int gk_small_1d(int64_t n, int sms) {
  return gk_cdiv64(n, 8192) <= (int64_t)GK_SMALL_TILES_PER_SM * sms;
}
/* gk_grid_reduce with a tile of `tile` elements, `threads` a block, at most
** `bps` blocks an SM. */
static inline gk_launch gk_reduce_launch_k(int64_t n, int64_t tile, int threads, int bps, int sms, int64_t acc_bytes) {
  gk_launch L = gk_launch_blocks(threads, 1);
  L.temp_zero_once = 1;
  L.grid[0] = gk_max64(1, gk_min64(gk_cdiv64(n, tile), (int64_t)sms * bps));
  L.temp_bytes = gk_align16(L.grid[0] * acc_bytes) + 16;
  return L;
}
static inline gk_launch gk_reduce_launch(int64_t n, int vec4, int sms, int64_t acc_bytes) {
  return gk_reduce_launch_k(n, vec4 ? GK_REDUCE_TILE_V4 : GK_REDUCE_TILE_V1, GK_REDUCE_THREADS,
                            GK_REDUCE_BLOCKS_PER_SM, sms, acc_bytes);
}
/* Offset of the counter inside the reduce temp buffer. */
static inline int64_t gk_reduce_counter_offset(const gk_launch *L, int64_t acc_bytes) {
  return gk_align16(L->grid[0] * acc_bytes);
}

/* ---- tile state for look-back (gk_scan, gk_select) ----------------------
** One descriptor per tile and one per group of 32 tiles (gk_scan.cuh), each
** 8 bytes per 4-byte word of the accumulator (a tag beside every word): 8
** bytes for acc_bytes <= 4, else 16 per 8 bytes.  Sufficient for any
** accumulator of at most acc_bytes. */
static inline int64_t gk_tile_state_bytes(int64_t ntiles, int64_t acc_bytes) {
  int64_t d = acc_bytes <= 4 ? 8 : 16 * gk_cdiv64(acc_bytes, 8);
  return gk_align16(ntiles * d) + gk_align16(gk_cdiv64(ntiles, 32) * d);
}
/* ---- gk_scan: one tile per block.  temp zeroed once; pass a fresh epoch each launch. */
static inline gk_launch gk_scan_launch_k(int64_t n, int64_t acc_bytes, int threads, int64_t tile) {
  gk_launch L = gk_launch_blocks(threads, 1);
  L.temp_zero_once = 1;
  L.grid[0] = gk_max64(1, gk_cdiv64(n, tile));
  L.temp_bytes = gk_tile_state_bytes(L.grid[0], acc_bytes);
  return L;
}
static inline gk_launch gk_scan_launch(int64_t n, int64_t acc_bytes) {
  return gk_scan_launch_k(n, acc_bytes, GK_SCAN_THREADS, GK_SCAN_TILE);
}
/* ---- gk_select (filter / partition) ------------------------------------ */
static inline gk_launch gk_select_launch(int64_t n) {
  gk_launch L = gk_launch_blocks(GK_SELECT_THREADS, 1);
  L.temp_zero_once = 1;
  L.grid[0] = gk_max64(1, gk_cdiv64(n, GK_SELECT_TILE));
  L.temp_bytes = gk_tile_state_bytes(L.grid[0], 8);
  return L;
}
/* gk_reverse_tail over `len` elements, 256 threads. */
static inline gk_launch gk_reverse_launch(int64_t len, int sms) {
  gk_launch L = gk_launch_blocks(256, 1);
  L.grid[0] = gk_max64(1, gk_min64(gk_cdiv64(len / 2, 256), (int64_t)sms * 8));
  return L;
}

/* ---- gk_hist ------------------------------------------------------------
** counts (nbins int64) must be zeroed before EVERY launch (integer atomics add).
** Shared memory: GK_HIST_SUB copies of nbins + 1 u32 bins (the last one takes
** ignored items, so that counting needs no branch). */
static inline int64_t gk_hist_smem(int nbins) { return (int64_t)GK_HIST_SUB * (nbins + 1) * 4; }
static inline gk_launch gk_hist_launch(int64_t n, int nbins, int vec4, int sms) {
  gk_launch L = gk_launch_blocks(GK_HIST_THREADS, 1);
  int64_t tile = vec4 ? GK_HIST_TILE_V4 : GK_HIST_TILE_V1;
  L.grid[0] = gk_max64(1, gk_min64(gk_cdiv64(n, tile), (int64_t)sms * GK_HIST_BLOCKS_PER_SM));
  L.smem = gk_hist_smem(nbins);
  return L;
}

/* ---- row programs --------------------------------------------------------
** gk_rows_plan picks the kernel and its policy <THREADS, WIDTH, PACKS, PACK>:
**   GK_ROWS_WARP  : gk_row_cached, WIDTH = 1..32 lanes per row, row in registers
**   GK_ROWS_BLOCK : gk_row_cached, WIDTH = THREADS, row in registers
**   GK_ROWS_STREAM: gk_row_stream, block per row, PACKS loads in flight
** vec: the largest pack (1, 2 or 4) for which cols % pack == 0 and every row
** start is aligned (host checks pointers); elem_bytes is sizeof(X). */
#define GK_ROWS_WARP 0
#define GK_ROWS_BLOCK 1
#define GK_ROWS_STREAM 2
#define GK_ROWS_SPLIT 3
#define GK_ROWS_CLUSTER 4
#define GK_ROWS_TILE 5
#define GK_ROWS_GRID 6
#define GK_ROWS_WARP_MAX_PACKS 8     /* warp mode: <= 32 elements per lane in registers */
#define GK_ROWS_BLOCK_MAX_PACKS 4    /* block mode: 1024 threads x 4 packs x 4 = 16384 cols */
/* Speed-only geometry knobs (GK_ROWS_VARIANT="key=value,...", read once by
** runtime/cuda_lower.c; 0 = the default choice, which depends on the size
** class as the session-7 sweep measured, NOTES.md).  Every combination
** computes the same values (a reduction's order is fixed by its geometry);
** they exist so that one device run can time several geometries. */
typedef struct gk_rows_knobs {
  int wp;   /* warp mode: at least this many packs a lane (default: 2 where the row has them) */
  int wx;   /* warp mode: most packs a lane (default GK_ROWS_WARP_MAX_PACKS) */
  int wb;   /* warp mode: threads a block (128; 256 where WIDTH >= 16) */
  int wg;   /* warp mode: grid cap in blocks an SM (32; none where WIDTH >= 16) */
  int wr;   /* warp mode: rows a group holds at once (policy BATCH; 4 where a lane holds <= 4 elements of a row
            ** of <= 4 lanes, else 1) */
  int bx;   /* block mode: most packs a thread (GK_ROWS_BLOCK_MAX_PACKS; 8 at half the threads where 4 took >= 512) */
  int bt;   /* block mode: fewest threads (128) */
  int bg;   /* block mode: grid cap in resident blocks an SM times (4; none for programs with a store, gk_rows_plan_store) */
  int sp;   /* stream mode: packs in flight (4; 8 for light programs of PACK 1, gk_rows_plan_store) */
  int st;   /* stream mode: threads (1024) */
  int sb;   /* stream mode: grid cap in blocks an SM (16) */
  int xp;   /* split mode: packs in flight (4; one split a row: 16 at PACK 4, else 8) */
  int xt;   /* split mode: threads (256; one split a row: 256 at PACK 4, else 512) */
  int xs;   /* split mode: blocks an SM wanted (8) */
  int ci;   /* row scan: most elements a lane (8) */
  int cb;   /* row scan: threads a block (128) */
  int cu;   /* col reduce: rows in flight a thread x pack (16; 4 at PACK 1) */
  int cs;   /* col reduce: most splits (4096; 8 before the parallel fold of the splits) */
  int cw;   /* col reduce: blocks an SM wanted (32) */
  int va;   /* stream / split of rows not 16-byte aligned (cols % 4 != 0): 1 scalar loads (before session 8), 2 packs of 4 from the aligned element (default),
            ** 3 as 2 but a pure row reduction of 4097-16384 columns keeps the scalar plan (before session 26) */
  int vp;   /* stream mode under va: packs of 4 in flight (4 for light programs, 1 where an input has 8 bytes, else 2) */
  int kc;   /* rows over a cluster of kc blocks (2, 4, 8; 16 gk_row_cluster_async / _smem only; 1 = never; default 2 where gk_rows_plan_cluster says): GK_ROWS_CLUSTER */
  int kt;   /* cluster mode: threads a block (the fewest from 128 that hold the share in 4 packs of 4) */
  int wf;   /* warp / block mode, rows filling the packs exactly: 2 policy FULL (unconditional loads and lifts), 3 the same
            ** but not for heavy programs with a store (gk_rows_plan_store; the default), 1 never */
  int rp;   /* row programs (the lowering): a stage that is one f32 sum adds each pack in f32, then once in double: pass B only
            ** (default), 2 both passes, 1 never */
  int cq;   /* row scan, whole warps a row with several packs a lane (staged): 2 the next chunk loaded before this one is scanned
            ** (policy BATCH 2; the default where the pack is 2 or 4), 1 not */
  int rv;   /* row programs (the lowering): 2 a two-pass var of f32 values takes its deviations in f32 (with rp=2 a pack's squares summed in f32); 1 double (default) */
  int we;   /* warp mode: 2 packs a lane need not be a power of two where the row fills them exactly (768 = 32 x 6 x 4: FULL;
            ** the default of gk_rows_plan_store), 1 powers of two (the default elsewhere) */
  int ks;   /* long rows over clusters with the shares in shared memory (gk_row_cluster_smem; sm_90's 227 KB a block):
            ** 1 where gk_rows_plan_cluster would take the row, 2 any program of one input of <= 4 bytes; default off;
            ** 3 always the shares copied by cp.async into two buffers (gk_row_cluster_async; by default where
            ** gk_rows_plan_cluster_async says), 4 neither kind of shared-memory share */
  int tt;   /* short rows through shared memory, a row a thread (gk_row_tile): rows of at most tt elements (default 0: off) */
  int tb;   /* gk_row_tile: threads (rows) a block (256; 128 past 16 columns) */
  int ol;   /* row programs (the lowering): a pass B of sums of exp(E - max E) declared ONLINE_B (gk_rows.cuh: folded at
            ** each warp's max, one exchange of pairs a row in block and cluster modes): on by default (timed and checked
            ** on the GPU in sessions 18 and 20), 1 off, 3 cluster modes only.  Not speed only: the sums round differently
            ** in their last bits */
  int sl;   /* row scan: few long rows each scanned by the look-back over its own tiles (gk_row_scan_lb): 2 where
            ** gk_row_scan_lb_use says (default), 1 never (lane groups, as before), 3 wherever a row has 2+ tiles */
  int cl;   /* column scan: a tile's prefix by the grouped look-back (gk_cols.cuh LB 2) where gk_col_scan_lb says (0, the
            ** default: more than one row tile, fewer than 512 columns), 1 the chain of a strip's tiles everywhere (before
            ** session 25), 2 the look-back everywhere, 3 as 0 with the look-back's kernel capped at 64 registers
            ** (__launch_bounds__(256, 4)), 4 as 0 but never a thread a column (before session 26: fewer than
            ** 128 rows took the chain's one tile), 5 a thread a column everywhere (gk_col_scan_seq).  Not speed
            ** only: float sums round differently in their last bits */
  int ct;   /* col reduce: most threads across a strip where there are fewer than 128 rows (256; 32 before) */
  int gg;   /* few long rows over the grid (GK_ROWS_GRID, gk_row_grid, gk_rows_plan_grid): 2 where the plan before leaves
            ** most SMs idle (the default), 1 never (the plans before), 3 wherever the shares fit at two blocks a row or more */
  int gt;   /* grid rows: threads a block (512) */
  int gb;   /* grid rows: blocks an SM (2; the launch bounds promise them, the plan fills them once) */
} gk_rows_knobs;
static inline int gk_knob(const gk_rows_knobs *k, int v, int dflt) { return k && v > 0 ? v : dflt; }
#define GK_KNOB(k, f, d) gk_knob(k, (k) ? (k)->f : 0, d)

static inline gk_launch gk_rows_plan_k(int64_t rows, int64_t cols, int vec, int sms, const gk_rows_knobs *k) {
  gk_launch L = gk_launch_blocks(128, 1);
  int pack = vec;
  int wx = GK_KNOB(k, wx, GK_ROWS_WARP_MAX_PACKS), bx = GK_KNOB(k, bx, GK_ROWS_BLOCK_MAX_PACKS);
  if (cols <= 32 * wx * pack) {
    int width = 32;
    int64_t lane_elems = gk_cdiv64(cols, pack);         /* packs needed per row */
    /* at least two packs per lane where the row has them: more bytes in
    ** flight per thread and one shuffle level less (short rows) */
    if (k && k->wp > 0) while (width > 1 && (int64_t)width * k->wp > lane_elems) width /= 2;
    else while (width > 1 && width >= lane_elems) width /= 2;
    int packs = (int)gk_cdiv64(lane_elems, width);
    int p2 = 1;
    while (p2 < packs) p2 *= 2;                           /* instantiate 1, 2, 4, 8 */
    if (GK_KNOB(k, we, 1) == 2 && cols == (int64_t)width * packs * pack) p2 = packs;
    int wb = GK_KNOB(k, wb, width >= 16 ? 256 : 128);   /* 256 for rows of 16-32 lanes (check2) */
    L.mode = GK_ROWS_WARP; L.width = width; L.packs = p2; L.pack = pack;
    L.block[0] = wb;
    /* rows whose lane holds at most 4 elements (<= 4 lanes a row): 4 rows a
    ** group at once, their loads all in flight (2000000x10 on the H100:
    ** rowsum 41.4 -> 35.3 us; session 21); knob wr */
    L.batch = GK_KNOB(k, wr, width <= 4 && p2 * pack <= 4 ? 4 : 1);
    int64_t rows_per_block = wb / width * L.batch;
    /* rows of 16 or 32 lanes: a block per group of rows, no grid-stride loop
    ** (measured 1.02-1.10x on 1048576x128, 65536x1024; rows of fewer lanes
    ** lose 4-30% that way, 2000000x10 / 262144x32) */
    int64_t cap = k && k->wg > 0 ? (int64_t)sms * k->wg : width >= 16 ? ((int64_t)1 << 31) - 1 : (int64_t)sms * 32;
    L.grid[0] = gk_max64(1, gk_min64(gk_cdiv64(rows, rows_per_block), cap));
    L.full = GK_KNOB(k, wf, 3) >= 2 && cols == (int64_t)width * p2 * pack;
    return L;
  }
  for (int threads = GK_KNOB(k, bt, 128); threads <= 1024; threads *= 2) {
    if (cols <= (int64_t)threads * bx * pack) {
      int packs = (int)gk_cdiv64(cols, (int64_t)threads * pack);
      int p2 = 1;
      while (p2 < packs) p2 *= 2;
      /* half the threads with twice the packs where 4 packs took 512 or
      ** 1024 threads: 8192 floats by 256 x 8 x 4 ran softmax 1.21x,
      ** layernorm 1.04x faster than by 512 x 4 x 4 */
      if (!(k && k->bx > 0) && threads >= 512 && p2 == 4) { threads /= 2; p2 = 8; }
      L.mode = GK_ROWS_BLOCK; L.width = threads; L.packs = p2; L.pack = pack;
      L.block[0] = threads;
      L.grid[0] = gk_max64(1, gk_min64(rows, (int64_t)sms * (2048 / threads) * GK_KNOB(k, bg, 4)));
      L.full = GK_KNOB(k, wf, 3) >= 2 && cols == (int64_t)threads * p2 * pack;
      return L;
    }
  }
  int st = GK_KNOB(k, st, 1024);
  L.mode = GK_ROWS_STREAM; L.width = st; L.packs = GK_KNOB(k, sp, 4); L.pack = pack;
  L.block[0] = st;
  L.grid[0] = gk_max64(1, gk_min64(rows, (int64_t)sms * GK_KNOB(k, sb, 2048 / st * 8)));
  return L;
}
static inline gk_launch gk_rows_plan(int64_t rows, int64_t cols, int vec, int sms) {
  return gk_rows_plan_k(rows, cols, vec, sms, 0);
}
/* A row program with a store or two passes: gk_rows_plan_k, but a light
** program (one accumulator field a pass, no shifted variance: few registers)
** of streamed rows with PACK 1 keeps 8 packs in flight (4096x50257: softmax
** 1.02x, logsoftmax 1.07x, rmsnorm 1.24x; layernorm, heavier, 0.66x). */
static inline gk_launch gk_rows_plan_store(int64_t rows, int64_t cols, int vec, int sms, int light,
                                           const gk_rows_knobs *k) {
  /* exact packs a lane (we=2): 32768x768 softmax, logsoftmax, layernorm,
  ** rmsnorm 1.02-1.04x (session 9) */
  gk_rows_knobs kw = {0};
  if (k) kw = *k;
  if (!kw.we) kw.we = 2;
  /* rows of 1024 floats, which fill 128 threads x 2 packs of 4 exactly: a block of 128 a row, not a
  ** warp with 8 packs a lane (65536x1024 softmax 137 -> 132.5 us, logsoftmax 137 -> 132, rmsnorm
  ** 136 -> 133, layernorm the same; session 15) */
  if (!kw.wx && vec == 4 && cols == 128 * 2 * 4) kw.wx = 4;
  k = &kw;
  gk_launch L = gk_rows_plan_k(rows, cols, vec, sms, k);
  /* block mode: a block a row, no grid-stride loop (8192x8192 layernorm 139 -> 135 us, rmsnorm 140
  ** -> 136; 65536x1024 as above; session 15); knob bg: the cap of gk_rows_plan_k */
  if (L.mode == GK_ROWS_BLOCK && !kw.bg) L.grid[0] = gk_max64(1, gk_min64(rows, (int64_t)1 << 30));
  /* batched warp mode with a store: a block per group of rows, no grid-stride
  ** loop (2000000x10 on the H100, 4 rows a group: softmax 68.3 -> 66.8 us,
  ** layernorm 69.2 -> 66.5; a pure row reduction keeps the cap: rowsum
  ** 35.3 capped, 39.7 not; session 21); knob wg */
  if (L.mode == GK_ROWS_WARP && L.batch > 1 && !kw.wg)
    L.grid[0] = gk_max64(1, gk_min64(gk_cdiv64(rows, L.block[0] / L.width * L.batch), (int64_t)1 << 30));
  if (L.mode == GK_ROWS_STREAM && light && L.pack == 1 && !(k && k->sp > 0)) L.packs = 8;
  /* FULL keeps lift_b's values live into store: layernorm 65536x1024 took
  ** 118 registers (64 without), so light programs only (softmax 1048576x128
  ** 1.05x, 65536x1024 1.03-1.11x; session 8) */
  if (GK_KNOB(k, wf, 3) == 3 && !light) L.full = 0;
  return L;
}
/* Pure one-pass row reduction (no per-element store): like gk_rows_plan, but
** few long rows are split over several blocks (GK_ROWS_SPLIT, gk_row_split,
** policy <256, 256, 4, pack>; where a row gets one block, more loads in
** flight: <256, 256, 16, 4> at PACK 4 (1024x65536 sum 1.14x, max 1.08x),
** <512, 512, 8, pack> else (4096x50257 sum 1.08x, max 0.98x)).  temp:
** partials rows*splits*acc_bytes (16-aligned) then rows gk_u32 counters,
** zero when first allocated. */
static inline gk_launch gk_row_split_plan_k(int64_t rows, int64_t cols, int vec, int sms, int64_t acc_bytes,
                                            const gk_rows_knobs *k);
static inline gk_launch gk_row_reduce_plan_k(int64_t rows, int64_t cols, int vec, int sms, int64_t acc_bytes,
                                             const gk_rows_knobs *k) {
  gk_launch L = gk_rows_plan_k(rows, cols, vec, sms, k);
  if (L.mode == GK_ROWS_WARP) return L;
  if (rows >= 2 * (int64_t)sms && L.mode == GK_ROWS_BLOCK) return L;
  return gk_row_split_plan_k(rows, cols, vec, sms, acc_bytes, k);
}
/* The split plan of gk_row_reduce_plan_k (GK_ROWS_SPLIT, whatever the rows and columns). */
static inline gk_launch gk_row_split_plan_k(int64_t rows, int64_t cols, int vec, int sms, int64_t acc_bytes,
                                            const gk_rows_knobs *k) {
  gk_launch L = gk_launch_blocks(128, 1);
  int xt = GK_KNOB(k, xt, 256), xp = GK_KNOB(k, xp, 4), xs = GK_KNOB(k, xs, 8);
  int64_t splits = 0;
  if (!(k && (k->xt > 0 || k->xp > 0))) {                 /* the wide policy where it gives a row one block */
    int wt = vec >= 4 ? 256 : 512, wp = vec >= 4 ? 16 : 8;
    int64_t per = (int64_t)wt * wp * vec;
    if (gk_min64(gk_cdiv64(cols, per * 4), gk_cdiv64((int64_t)sms * xs * 256 / wt, rows)) <= 1) {
      xt = wt; xp = wp; splits = 1;
    }
  }
  int64_t per = (int64_t)xt * xp * (int64_t)vec;          /* columns per block step */
  if (!splits)
    splits = gk_max64(1, gk_min64(gk_cdiv64(cols, per * 4), gk_cdiv64((int64_t)sms * xs * 256 / xt, rows)));
  L.mode = GK_ROWS_SPLIT; L.width = xt; L.packs = xp; L.pack = vec; L.full = 0;
  L.block[0] = xt;
  L.grid[0] = splits;
  L.grid[1] = gk_min64(rows, 65535);
  L.temp_bytes = splits > 1 ? gk_align16(rows * splits * acc_bytes) + gk_align16(rows * 4) : 0;
  L.temp_zero_once = splits > 1;
  return L;
}
static inline gk_launch gk_row_reduce_plan(int64_t rows, int64_t cols, int vec, int sms, int64_t acc_bytes) {
  return gk_row_reduce_plan_k(rows, cols, vec, sms, acc_bytes, 0);
}
/* Long rows whose arrays are 16-byte aligned but whose length is not a
** multiple of 4 (4096x50257: every row starts elsewhere in its 16 bytes):
** where the plan above gives a row one block or more (stream, split) and
** picked scalar or pair loads, the kernels take packs of 4 from each row's
** first aligned element instead (policy ALIGN, gk_row_span in gk_rows.cuh)
** with the pack-4 geometry: a split plan as gk_row_reduce_plan_k plans
** pack 4 (with 8 packs of 256 threads), a stream keeps its threads with `vp` packs of 4 in flight (4 for
** a light program, else 2: layernorm spilled at 4).  reduce: the pure
** one-pass row reduction (gk_row_reduce_plan_k), else a program with a
** store (gk_rows_plan_store; light as there).  aligned: every array is
** 16-byte aligned.  The values change (another order of the fold), not
** their determinism. */
#define GK_ROWS_ASYNC_ONE 28672   /* the longest row whose two buffers fit one block (512 x 14 packs of 4, twice) (gk_row_cluster_async) */
#define GK_ROWS_ASYNC_TWO_MIN 32768   /* softmax's rows past this take gk_row_cluster_async 4 x 256 where two blocks fit an SM */
#define GK_ROWS_ASYNC_EIGHT_MIN 65536 /* and past this (gk_row_cluster's reach) 8 x 256 where one block fits */
/* A streamed row program (a store or two passes) over thread-block
** clusters (gk_row_cluster; the kernel text falls back to gk_row_stream
** with the same policy below sm_90): cs blocks a row, each holding its
** share of the row's packs of 4 in registers (policy <threads, threads,
** packs, 4, 1, ALIGN 1>), so the row is read once.  The share must fit 8
** packs a thread of at most 1024 threads, else the plan stays.  Grid: as
** many clusters as 2048 threads an SM allow (rows beyond, cluster-strided).
** `eligible` (the caller): a light program of one input of at most 4 bytes
** (session 8, 4096x50257 / 1024x65536: softmax 1.02x / 1.09x faster than
** the stream, logsoftmax 1.02x / 1.20x, rmsnorm 1.09x / 1.26x; layernorm,
** heavier, spilled and lost 0.68x / 0.73x; 4 or 8 blocks a cluster lost
** everywhere).  By default cs = 2 for eligible rows of 32768 or more
** (measured at 50257 and 65536); knob kc: 1 never, 2 / 4 / 8 for any row
** the stream would take. */
static inline gk_launch gk_rows_plan_cluster(gk_launch L, int64_t rows, int64_t cols, int aligned, int sms, int eligible,
                                             int passes, const gk_rows_knobs *k) {
  /* two passes (softmax, logsoftmax) past GK_ROWS_ASYNC_ONE that gk_rows_plan_cluster_async left (rows of
  ** 28673-32768 and past 57344): 4 blocks of 512 a row, two an SM (session 14, 4096 x 32000 / 50257,
  ** 2048 x 40000, 1024 x 65536: 0.97x / 0.93x / 0.92x / 0.93x the time of 2 of 1024 or of the stream;
  ** rmsnorm, one pass, 1.01-1.05x: not there) */
  int two = eligible && passes == 2 && cols > GK_ROWS_ASYNC_ONE && cols <= 65536;
  int cs = k && k->kc > 0 ? k->kc : two ? 4 : eligible && cols >= 32768 ? 2 : 0;
  if (!aligned || L.mode != GK_ROWS_STREAM || (cs != 2 && cs != 4 && cs != 8)) return L;
  int64_t ppb = gk_cdiv64(gk_cdiv64(cols, 4), cs);          /* packs a block, at most */
  int t = GK_KNOB(k, kt, two && !(k && k->kc > 0) ? 512 : 0);
  if (!t) for (t = 128; t < 1024 && (int64_t)t * 4 < ppb; t *= 2) {}
  int64_t np = gk_cdiv64(ppb, t), p2 = 1;
  while (p2 < np) p2 *= 2;
  if (p2 > 8) return L;
  L.mode = GK_ROWS_CLUSTER; L.width = t; L.packs = (int)p2; L.pack = 4; L.align = 1; L.cluster = cs;
  L.block[0] = t;
  L.grid[0] = gk_max64(1, gk_min64(rows, (int64_t)sms * (2048 / t) / cs)) * cs;
  return L;
}
#define GK_ROWS_SMEM_SM (228 << 10)     /* sm_90: shared memory an SM */
#define GK_ROWS_SMEM_BLOCK (227 << 10)  /* sm_90: shared memory a block at most (the planners take the device's: smem_block) */
#define GK_ROWS_SMEM_EXTRA 2048         /* a block's static shared memory and the 1 KB the system keeps, at most */
#define GK_ROWS_SMEM_PACKS 64
/* Rows past GK_ROWS_ASYNC_EIGHT_MIN of one 4-byte input, any program with a
** store or two passes: gk_row_cluster_smem (one buffer, loads through
** registers) with blocks of 256 threads, 8 a row where three such blocks
** share an SM (rows up to ~148000 elements), else 16 (a non-portable
** cluster, sm_90) up to ~296000; past that, or where neither lets three
** blocks share an SM, 0 (the planners' other rules).  On the H100 (session
** 25, against the plans before: the stream, or for softmax gk_row_cluster_async
** 8 x 256 at one block an SM) 4096 x 128256 at 8: softmax 1923 -> 1541 us,
** logsoftmax 1795 -> 1525, layernorm 1761 -> 1572, rmsnorm 2076 -> 1456;
** 2048 x 151936 at 16 (5 blocks an SM): layernorm 1000 -> 954, rmsnorm 1237
** -> 910, but softmax 1071 -> 1084 and logsoftmax 1024 -> 1206 (they keep
** the async kernel there: gk_rows_plan_cluster_async); 1024 x 256000 at 16:
** softmax 1051 -> 922, logsoftmax 1052 -> 910, layernorm 1060 -> 807,
** rmsnorm 1054 -> 749.  Three blocks an SM was the common thread: 8 at 2 an
** SM (151936) lost to the async kernel, 16 at 6 an SM (128256) won less
** than 8 at 3 (1855 against 1541 us), and the async kernel at 16 lost
** (2058).  Rows of 256 threads x 16 packs of 4 at most a thread. */
static inline int gk_rows_smem_long_cs(int64_t cols, int elem_bytes) {
  if (cols <= GK_ROWS_ASYNC_EIGHT_MIN) return 0;
  for (int cs = 8; cs <= 16; cs *= 2) {
    int64_t block = gk_cdiv64(gk_cdiv64(gk_cdiv64(cols, 4), cs), 256) * 256 * 4 * elem_bytes + GK_ROWS_SMEM_EXTRA;
    if (3 * block <= GK_ROWS_SMEM_SM) return cs;
  }
  return 0;
}
/* The same with each block's share in shared memory (gk_row_cluster_smem),
** so that registers do not bound the blocks an SM holds (gk_row_cluster's
** 62 registers x 1024 threads: one block, one row's phases at a time): knob
** ks (1 / 2; by default only rows past 65536: gk_rows_smem_long_cs).  eligible: as above;
** any: a program of one input of elem_bytes <= 4 bytes (its X), e.g.
** layernorm.  cs: knob kc, else the fewest of 2, 4, 8 blocks a row whose
** shares let two blocks share an SM's GK_ROWS_SMEM_SM bytes; threads: knob
** kt, else 512.  PACKS in the text is the bound GK_ROWS_SMEM_PACKS (the
** loops stop at the share), so one text serves every row length. */
static inline gk_launch gk_rows_plan_cluster_smem(gk_launch L, int64_t rows, int64_t cols, int aligned, int sms, int64_t smem_block,
                                                  int eligible, int any, int elem_bytes, const gk_rows_knobs *k) {
  int ks = GK_KNOB(k, ks, 0), t = GK_KNOB(k, kt, 512), kc = GK_KNOB(k, kc, 0), cs = kc ? kc : 2;
  /* by default rows past 65536 of one 4-byte input: gk_rows_smem_long_cs's clusters of 256 threads */
  int long_cs = !ks && any && elem_bytes == 4 ? gk_rows_smem_long_cs(cols, elem_bytes) : 0;
  if (long_cs) { ks = 2; cs = long_cs; kc = long_cs; t = 256; }
  if (!((ks == 1 && eligible) || (ks == 2 && any)) || !aligned || L.mode != GK_ROWS_STREAM) return L;
  int64_t npk = gk_cdiv64(cols, 4), np, block;   /* packs of 4 a row; a thread's; a block's bytes */
  for (;; cs *= 2) {
    np = gk_cdiv64(gk_cdiv64(npk, cs), t);
    block = np * t * 4 * elem_bytes + GK_ROWS_SMEM_EXTRA;
    if (kc || cs == 8 || 2 * block <= GK_ROWS_SMEM_SM) break;
  }
  int per_sm = (int)gk_min64(2048 / t, GK_ROWS_SMEM_SM / block);
  if (np > GK_ROWS_SMEM_PACKS || block > smem_block || per_sm < 1) return L;
  L.mode = GK_ROWS_CLUSTER; L.width = t; L.packs = GK_ROWS_SMEM_PACKS; L.pack = 4; L.align = 1; L.cluster = cs;
  L.block[0] = t;
  L.smem = block - GK_ROWS_SMEM_EXTRA;
  L.grid[0] = gk_max64(1, gk_min64(rows, (int64_t)sms * per_sm / cs)) * cs;
  return L;
}
/* Few long rows over the grid (gk_row_grid, GK_ROWS_GRID): a program with a
** store or two passes of one input of elem_bytes <= 4 (`any`, the caller),
** 16-byte aligned, rows longer than GK_ROWS_GRID_MIN, where the plan L so
** far gives the GPU fewer blocks than it has SMs (the stream's block a row,
** a cluster of 8 or 16 a row: 1 x 1000003 ran one block of 1024 threads,
** 190 us on the H200 where a row sum over the split's many blocks took
** 11).  Each row gets S blocks of t threads (knob gt, 512), S = the blocks
** `per` an SM (knob gb, 2) on every SM share among the rows, but no more
** than a pack of 4 a thread needs; S >= 2.  A block keeps its share of the
** row (gk_row_share_in: ceil(packs / S) packs of 4) in dynamic shared
** memory, rounded up to t threads; the plan stays where per such blocks do
** not fit an SM (GK_ROWS_SMEM_SM, GK_ROWS_GRID_EXTRA each) or one does not
** fit smem_block (0 below sm_90: never), i.e. where the rows' data exceed
** about the GPU's shared memory.  Grid (S, rows): every block resident at
** once (rows x S <= SMs x per; the launch bounds promise per blocks an SM
** in registers: L.coop), launched cooperatively.  temp: a group's barrier
** and 2 x S slots of slot_bytes (the pass values; gk_rows_grid_temp),
** zero once.  Knob gg: 1 never, 3 wherever it fits (S >= 2). */
#define GK_ROWS_GRID_MIN 16384    /* rows longer than this (a block a row holds shorter ones in registers) */
#define GK_ROWS_GRID_EXTRA 4096   /* a block's static shared memory (the exchange's, the fallback stream's) and the 1 KB the system keeps, at most */
/* ORDER: gk_rows.cuh gk_row_grid_stride */
static inline int64_t gk_rows_grid_temp(int64_t groups, int64_t S, int64_t slot_bytes) {
  return groups * (16 + gk_align16(2 * S * slot_bytes));
}
static inline gk_launch gk_rows_plan_grid(gk_launch L, int64_t rows, int64_t cols, int aligned, int sms, int64_t smem_block,
                                          int any, int elem_bytes, int64_t slot_bytes, const gk_rows_knobs *k) {
  const int gg = GK_KNOB(k, gg, 2), t = GK_KNOB(k, gt, 512), per = GK_KNOB(k, gb, 2);
  if (gg == 1 || !any || !aligned || smem_block <= 0 || elem_bytes > 4 || cols <= GK_ROWS_GRID_MIN || rows < 1) return L;
  if (gg == 2 && L.grid[0] * L.grid[1] >= sms) return L;
  if ((t != 128 && t != 256 && t != 512 && t != 1024) || per < 1 || per * t > 2048) return L;
  const int64_t npk = gk_cdiv64(cols, 4);
  const int64_t S = gk_min64((int64_t)sms * per / rows, gk_cdiv64(npk, t));
  if (S < 2) return L;
  const int64_t np = gk_cdiv64(gk_cdiv64(npk, S), t), block = np * t * 4 * elem_bytes;
  if (np > GK_ROWS_SMEM_PACKS || block + GK_ROWS_GRID_EXTRA > smem_block || per * (block + GK_ROWS_GRID_EXTRA) > GK_ROWS_SMEM_SM)
    return L;
  L.mode = GK_ROWS_GRID; L.width = t; L.packs = GK_ROWS_SMEM_PACKS; L.pack = 4; L.align = 1; L.cluster = 0; L.async = 0;
  L.batch = 1; L.full = 0; L.coop = per;
  L.block[0] = t;
  L.smem = block;
  L.grid[0] = S; L.grid[1] = rows;
  L.temp_bytes = gk_rows_grid_temp(rows, S, slot_bytes);
  L.temp_zero_once = 1;
  return L;
}
/* Short rows through shared memory (gk_row_tile, a row a thread, a block's
** rows copied in and the per-element output copied out with 16-byte
** accesses) for a program of one input and at most one per-element output
** (the caller checks), xs_bytes / ys_bytes their element sizes (ys 0
** without a store), every array 16-byte aligned, rows the warp mode would
** take.  Knob tt: rows of at most tt elements (default off); tb threads.
** smem: the input tile, 16-aligned, then the output tile, both at a pitch
** of cols | 1. */
static inline gk_launch gk_rows_plan_tile(gk_launch L, int64_t rows, int64_t cols, int aligned, int xs_bytes,
                                          int ys_bytes, int64_t smem_block, const gk_rows_knobs *k) {
  int tt = GK_KNOB(k, tt, 0);
  if (!aligned || cols > tt || L.mode != GK_ROWS_WARP) return L;
  if (xs_bytes < 4 || 16 % xs_bytes || (ys_bytes && (ys_bytes < 4 || 16 % ys_bytes))) return L;
  int t = GK_KNOB(k, tb, cols <= 16 ? 256 : 128);
  int64_t pitch = cols | 1, smem;
  /* the tiles within what a block may take (48 KB without the opt-in below sm_90) */
  for (;; t /= 2) {
    smem = gk_align16((int64_t)t * pitch * xs_bytes) + (int64_t)t * pitch * ys_bytes;
    if (smem <= (smem_block > 0 ? smem_block : 48 << 10) - GK_ROWS_SMEM_EXTRA) break;
    if (t <= 32) return L;
  }
  L.mode = GK_ROWS_TILE; L.width = t; L.packs = 1; L.pack = 1; L.batch = 1; L.full = 0; L.align = 0;
  L.block[0] = t;
  L.smem = smem;
  L.grid[0] = gk_max64(1, gk_cdiv64(rows, t));
  return L;
}
/* The same with the shares copied by cp.async into two buffers, the next
** row's while this one is folded and stored (gk_row_cluster_async): any
** program of one input of elem_bytes 4 (16-byte packs) whose rows the
** stream would take.  By default (ks unset):
** - where a row's two buffers fit one block (cs 1: rows of at most 28672
**   elements);
** - programs that are not light (layernorm) at any length, with the fewest
**   of 2, 4, 8 blocks of 512 a row whose buffers fit; where that leaves one
**   block an SM using less than 60 % of its shared memory (rows of
**   28673-32768 and 57345-65536 elements), twice the blocks of 256 threads,
**   so that 3 blocks share an SM (1024 x 65536 on the H100: 230 -> 209 us;
**   on the H200, session 14: 186 -> 174; 4096 x 32000 on the H200 329-335
**   -> 326);
** - light programs of two passes (softmax, logsoftmax) of rows of 32769-57344
**   elements: 4 blocks of 256 a row, the longest rows whose buffers let two
**   blocks share an SM (4096 x 50257 on the H100: 677 -> 623 us, 2048 x
**   40000: 289 -> 268; on the H200 before ONLINE_B, session 14: 550 -> 545,
**   243 -> 235; 1024 x 65536, one block an SM, lost: 207 -> 235); past
**   65536 elements, where gk_row_cluster does not reach and the stream took
**   them, 8 blocks of 256 a row wherever a block's buffers fit (rows of up
**   to ~232000 elements; on the H100, session 24: 4096 x 128256 softmax
**   2081 -> 1928 us, logsoftmax 2079 -> 1794; 2048 x 152064 1243 -> 1070,
**   1244 -> 1015; 8 x 512 gained less, 2187 / 1172);
** other light programs of rows past 28672 keep gk_row_cluster (session 14,
** 4096 x 20000 / 24000 / 50257, 2048 x 40000, 1024 x 65536: softmax 0.79x /
** 0.90x the stream's time, layernorm 0.79x / 0.82x / 0.89x / 0.94x / 0.95x;
** rmsnorm at 50257 1.03x gk_row_cluster's).  Knob ks: 3 always (cs: knob
** kc, else the fit rule from 1, kt threads, 512), 4 never (nor the smem
** kernel's ks 1 / 2).  smem: two buffers of the largest share rounded up to
** the threads (the kernel splits it in halves).  smem_block: the shared
** memory a block of the device may take (0 below sm_90, whose kernel text
** streams the row instead and would only carry the request).  passes: the
** program's passes over a row (1 or 2). */
/* a block's shared memory in gk_row_cluster_async: two buffers of its share of npk packs over cs blocks, rounded up to t threads */
static inline int64_t gk_rows_async_block(int64_t npk, int cs, int t, int elem_bytes) {
  return 2 * gk_cdiv64(gk_cdiv64(npk, cs), t) * t * 4 * elem_bytes + GK_ROWS_SMEM_EXTRA;
}
static inline gk_launch gk_rows_plan_cluster_async(gk_launch L, int64_t rows, int64_t cols, int aligned, int sms, int64_t smem_block,
                                                   int any, int light, int passes, int elem_bytes, const gk_rows_knobs *k) {
  int ks = GK_KNOB(k, ks, 0), t = GK_KNOB(k, kt, 512), kc = ks == 3 ? GK_KNOB(k, kc, 0) : 0, cs = kc ? kc : 1;
  if ((ks && ks != 3) || !any || elem_bytes != 4 || !aligned || L.mode != GK_ROWS_STREAM) return L;
  /* rows past 65536 go to gk_row_cluster_smem where three blocks an SM fit, except light two-pass
  ** programs where that takes 16 blocks a row (gk_rows_smem_long_cs) */
  const int long_cs = ks ? 0 : gk_rows_smem_long_cs(cols, elem_bytes);
  if (long_cs == 8 || (long_cs == 16 && !(light && passes == 2))) return L;
  int two = !ks && light && passes == 2 && cols > GK_ROWS_ASYNC_TWO_MIN;   /* softmax's long rows: 4 x 256 */
  if (!ks && light && cols > GK_ROWS_ASYNC_ONE && !two) return L;
  if (two) { cs = cols > GK_ROWS_ASYNC_EIGHT_MIN ? 8 : 4; t = 256; }
  const int64_t npk = gk_cdiv64(cols, 4);   /* packs of 4 a row */
  int64_t block;
  for (;; cs *= 2) {
    block = gk_rows_async_block(npk, cs, t, elem_bytes);
    if (kc || two || cs == 8 || block <= smem_block) break;
  }
  if (two && cs == 4 && 2 * block > GK_ROWS_SMEM_SM) return L;
  /* one block an SM under 60 % of its shared memory: twice the blocks, half the threads */
  if (!ks && !light && cs < 8 && t == 512 && block <= smem_block && 10 * block < 6 * GK_ROWS_SMEM_SM) {
    cs *= 2; t = 256;
    block = gk_rows_async_block(npk, cs, t, elem_bytes);
  }
  int per_sm = (int)gk_min64(2048 / t, GK_ROWS_SMEM_SM / block);
  if (block > smem_block || per_sm < 1) return L;
  L.mode = GK_ROWS_CLUSTER; L.width = t; L.packs = 1; L.pack = 4; L.align = 1; L.cluster = cs; L.async = 1;
  L.block[0] = t;
  L.smem = block - GK_ROWS_SMEM_EXTRA;
  L.grid[0] = gk_max64(1, gk_min64(rows, (int64_t)sms * per_sm / cs)) * cs;
  return L;
}
static inline gk_launch gk_rows_plan_aligned(gk_launch L, int64_t rows, int64_t cols, int aligned, int sms,
                                             int64_t acc_bytes, int reduce, int light, int small, const gk_rows_knobs *k) {
  if (!aligned || L.pack >= 4 || GK_KNOB(k, va, 2) == 1) return L;
  if (reduce && L.mode == GK_ROWS_SPLIT) {
    /* <256, 256, 8, 4> where the pack-4 plan would take 16 packs (4096x50257
    ** sum 1.14x, max 1.19x faster than the scalar <512, 512, 8, 1>; 16 packs
    ** gained nothing on sum) */
    gk_rows_knobs k8 = {0};
    if (k) k8 = *k;
    if (!k8.xt && !k8.xp) { k8.xt = 256; k8.xp = 8; }
    gk_launch L4 = gk_row_reduce_plan_k(rows, cols, 4, sms, acc_bytes, &k8);
    /* where the pack-4 plan is a block a row (gk_row_cached, which needs aligned rows: 4097-16384
    ** columns, 264 rows or more), the split plan's block a row with ALIGN (8191x8193 took the scalar
    ** <512, 512, 8, 1>: sum 0.91x, max 0.87x torch on the H200, session 25); knob va=3 keeps the scalar plan there */
    if (L4.mode == GK_ROWS_BLOCK && GK_KNOB(k, va, 2) == 2) L4 = gk_row_split_plan_k(rows, cols, 4, sms, acc_bytes, &k8);
    if (L4.mode != GK_ROWS_SPLIT) return L;
    L4.align = 1;
    return L4;
  }
  /* a stream's packs of 4 in flight: 4 for a light program, else 2 (layernorm spilled at 4); an input of
  ** 8 bytes holds twice the registers a pack, so 1 for a light program (ptxas, sm_90, 1024 threads at 64
  ** registers: f64 softmax spilled 840 bytes a thread at 4, 376 at 2, 16 at 1; rmsnorm 172 at 4, none at
  ** 2 or 1; layernorm none at 2.  H100, session 27: softmax 1000 x 32769 f64 715.5 us at 4, 282.1 at 1,
  ** torch eager 359.7; layernorm 490.9 -> 252.1) */
  if (!reduce && L.mode == GK_ROWS_STREAM) {
    L.pack = 4; L.packs = GK_KNOB(k, vp, light ? (small ? 4 : 1) : 2); L.align = 1;
  }
  return L;
}
static inline int64_t gk_pow2ceil64(int64_t x) { int64_t p = 1; while (p < x) p *= 2; return p; }
/* ---- gk_row_scan: groups of `width` lanes (<= 32) per row, each lane
** scanning packs * pack consecutive elements (<= 16) in registers; 128
** threads a block.  vec: the pack (1, 2, 4; cols % vec == 0, rows aligned). */
static inline gk_launch gk_row_scan_plan_k(int64_t rows, int64_t cols, int vec, int sms, const gk_rows_knobs *k) {
  int cb = GK_KNOB(k, cb, 128);
  gk_launch L = gk_launch_blocks(cb, 1);
  /* 8 elements a lane (16 before: 8192^2 1.20x, 4096x50257 1.05x faster with 8) */
  int64_t items = gk_min64(GK_KNOB(k, ci, 8), gk_max64(vec, gk_pow2ceil64(gk_cdiv64(cols, 32))));
  int64_t width = gk_min64(32, gk_pow2ceil64(gk_cdiv64(cols, items)));
  L.mode = GK_ROWS_WARP; L.width = (int)width; L.pack = vec; L.packs = (int)(items / vec);
  /* 8192^2 f32 1.08-1.15x; with scalar loads (4096x50257) 0.99x: not there */
  L.batch = GK_KNOB(k, cq, vec >= 2 ? 2 : 1) == 2 && width == 32 && L.packs > 1 ? 2 : 1;
  L.grid[0] = gk_max64(1, gk_min64(gk_cdiv64(rows, cb / width), (int64_t)sms * 32 * 128 / cb));
  return L;
}
static inline gk_launch gk_row_scan_plan(int64_t rows, int64_t cols, int vec, int sms) {
  return gk_row_scan_plan_k(rows, cols, vec, sms, 0);
}
/* ---- gk_row_scan_lb (gk_scan.cuh): a row of few long rows is scanned
** by the look-back over its own tiles of `tile` elements (gk_scan's policy
** for the dtypes), a block a tile: grid rows x ceil(cols / tile); temp: a
** tile state a row (16-byte descriptors), zeroed, epoch 1.
** When: gk_row_scan gives a row of 256+ elements one warp, which keeps two
** chunks of 32 x 8 elements (2 KB of f32) in flight; covering the H100's
** latency x bandwidth (~1 us x 3.35 TB/s / 132 SMs ~ 25 KB an SM) takes
** ~12-16 such warps an SM, so below GK_ROW_SCAN_LB_WARPS rows an SM the
** lane groups cannot fill HBM (1000 x 100000 f32: 531 us where a copy takes
** ~270; 33 x 1000003: 3473 us, 33 warps on 132 SMs).  The look-back gives a
** row ceil(cols / tile) blocks of 4-8 warps; with 2+ tiles a row (cols >
** tile) that is 8-16 times the lane groups' warps at any row count, and the 1-D scan runs 10^6 elements (123 tiles) in ~13 us, so its
** chain along a row costs little.  Rows <= one tile stay on lane groups
** (8192 x 8192 f32 is one tile a row and already at torch.compile's speed).
** The sizes choose the text (a size class, as the other plans do). */
#define GK_ROW_SCAN_LB_WARPS 16
static inline int gk_row_scan_lb_use(int64_t rows, int64_t cols, int sms, int64_t tile, const gk_rows_knobs *k) {
  int sl = GK_KNOB(k, sl, 2);
  int64_t ntiles = gk_cdiv64(cols, tile);
  if (sl == 1 || rows < 1 || ntiles < 2 || rows * ntiles > 0x7fffffffLL) return 0;
  return sl == 3 || rows < (int64_t)sms * GK_ROW_SCAN_LB_WARPS;
}
static inline gk_launch gk_row_scan_lb_plan(int64_t rows, int64_t cols, int threads, int64_t tile) {
  gk_launch L = gk_launch_blocks(threads, 1);
  L.temp_zero_once = 1;
  int64_t ntiles = gk_max64(1, gk_cdiv64(cols, tile));
  L.grid[0] = gk_max64(1, rows * ntiles);
  L.temp_bytes = gk_max64(1, rows) * gk_tile_state_bytes(ntiles, 8);
  return L;
}
/* ---- gk_col_reduce (gk_cols.cuh, 256 threads) ----------------------------
** policy <width = TX, pack = PK, packs = U>; grid (strips, splits).  temp
** (splits > 1): partials splits * cols * acc_bytes (16-aligned), then one
** gk_u32 counter per strip, zero before the launch. */
static inline gk_launch gk_col_reduce_plan_k(int64_t rows, int64_t cols, int vec, int sms, int64_t acc_bytes,
                                             const gk_rows_knobs *k) {
  gk_launch L = gk_launch_blocks(256, 1);
  int64_t tx = gk_min64(32, gk_pow2ceil64(gk_cdiv64(cols, vec)));
  /* few rows (< 128): wider strips, fewer threads a column, so that a
  ** thread keeps ~16 rows (33x1000003 ran 31251 blocks of 33 rows x 32
  ** columns, 64.8 us, torch 52.7; 1 x n kept 7 threads in 8 idle) */
  if (tx == 32 && rows < 128) {
    int64_t ty = 1;
    while (ty < 4 && ty * 2 <= rows / 16) ty *= 2;
    tx = gk_max64(32, gk_min64(gk_min64(GK_KNOB(k, ct, 256), 256 / ty), gk_pow2ceil64(gk_cdiv64(cols, vec))));
  }
  /* PACK 1 (odd widths): 4 rows in flight, not 16 (4096x50257 sum 1.02x, max 1.04x) */
  int64_t u = gk_max64(1, GK_KNOB(k, cu, vec == 1 ? 4 : 16) / vec), step = (256 / tx) * u;
  L.width = (int)tx; L.pack = vec; L.packs = (int)u;
  L.grid[0] = gk_cdiv64(cols, tx * vec);
  /* about four waves of 8 blocks an SM (a partial last wave costs little),
  ** at most cs splits.  cs was 8 while one thread folded a column's splits
  ** serially (64 splits of 8192^2 took 93 us where 16 took 75; 8: sum 1.03x,
  ** max 1.08x faster than 16, session 7); its TY threads fold them now, so
  ** few strips (1000003x3: 1 strip, 8 blocks, 153.7 us, torch 25.2;
  ** 100000x1000: 8 strips, 64 blocks, 383 us, torch 164) take more splits. */
  int64_t want = gk_min64(GK_KNOB(k, cs, 4096), gk_cdiv64((int64_t)sms * GK_KNOB(k, cw, 32), L.grid[0]));
  /* where the strips alone give every SM two blocks, a split keeps at least
  ** 1024 rows: 64x1024x1024 axis 1 (512 strips of 1024 rows) took 80.0 us
  ** in 8 splits, 70.8 in one (torch 76.2); 4096x50257 (1571 strips) 226 in
  ** 3, 241 in 1; 8192^2 (64 strips) needs its 8 (239 us in one) -- session 9.
  ** Past 8 splits (fewer strips), each keeps at least 1024 rows as well:
  ** 8192^2 stays at 8, 1000003x3 takes 782 of 1280 rows, 100000x1000 95
  ** of 1056 (cs=8 gives the plans from before the parallel fold). */
  if (L.grid[0] >= 2 * (int64_t)sms) want = gk_min64(want, gk_max64(1, rows / 1024));
  else if (want > 8) want = gk_min64(want, gk_max64(8, rows / 1024));
  L.grid[1] = gk_max64(1, gk_min64(gk_min64(want, gk_cdiv64(rows, step * 4)), 65535));
  /* past 8, no split left without rows (the kernel's chunk is a multiple of
  ** the step: 976 splits of 1000003x3 are 782 of 1280 rows and 194 empty) */
  if (L.grid[1] > 8) L.grid[1] = gk_cdiv64(rows, gk_cdiv64(gk_cdiv64(rows, L.grid[1]), step) * step);
  if (L.grid[1] > 1) {
    L.temp_bytes = gk_align16(L.grid[1] * cols * acc_bytes) + gk_align16(L.grid[0] * 4);
    L.temp_zero_once = 1;
  }
  return L;
}
static inline gk_launch gk_col_reduce_plan(int64_t rows, int64_t cols, int vec, int sms, int64_t acc_bytes) {
  return gk_col_reduce_plan_k(rows, cols, vec, sms, acc_bytes, 0);
}
/* ---- gk_col_scan (gk_cols.cuh): policy <TY = 8, RPT = 16>, 256 threads, a
** persistent grid taking 128 x 32 tiles by ticket.  temp (zero before the
** launch): 16 bytes, then one descriptor per column of every tile, then one
** per column of every group of 32 row tiles of a strip (the look-back's). */
#define GK_COL_SCAN_TY 8
#define GK_COL_SCAN_RPT 16
/* The policy's LB: 2 (the grouped look-back) where a strip's chain of tiles
** would be what takes the time, and 1 (the chain) elsewhere.  The chain
** costs about 0.35 us a row tile of 128 rows whatever the width; the
** look-back's kernel (80 to 128 registers against the chain's 40: 2 or 3
** blocks an SM, not 6) moved 1.4 TB/s on the H200 (session 25: 100000 x
** 1000, 32 strips, 384 -> 574 us, a loss; 1000003 x 3, one strip, 2714 ->
** 235 us).  They meet where rows / 128 x 0.35 us = rows x cols x 8 bytes /
** 1.4 TB/s, at ~480 columns whatever the rows: the look-back below 512
** columns.  8192 x 8192 and 4096 x 50257 (met against torch.compile) keep
** the chain.  Knob cl=3 caps the look-back's kernel at 64 registers (some
** spills).  One row tile: no look-back either way, LB 1's smaller kernel,
** or where the tile's rows leave warps idle (fewer than 128), LB 0: a
** thread a column (gk_col_scan_seq; knob cl=4 keeps LB 1 there, as before
** session 26; cl=5 takes LB 0 whatever the rows). */
static inline int gk_col_scan_lb(int64_t rows, int64_t cols, const gk_rows_knobs *k) {
  int cl = k ? k->cl : 0;
  if (cl == 1 || cl == 2) return cl;
  if (cl == 5 || (cl != 4 && rows < GK_COL_SCAN_TY * GK_COL_SCAN_RPT)) return 0;
  return rows > GK_COL_SCAN_TY * GK_COL_SCAN_RPT && cols < 512 ? 2 : 1;
}
static inline gk_launch gk_col_scan_plan(int64_t rows, int64_t cols, int sms, int64_t acc_bytes) {
  gk_launch L = gk_launch_blocks(256, 1);
  int64_t rtiles = gk_cdiv64(rows, GK_COL_SCAN_TY * GK_COL_SCAN_RPT), tiles = gk_cdiv64(cols, 32) * rtiles;
  int64_t d = acc_bytes <= 4 ? 8 : 16 * gk_cdiv64(acc_bytes, 8);
  L.grid[0] = gk_max64(1, gk_min64(tiles, (int64_t)sms * 8));
  L.temp_bytes = 16 + gk_align16(tiles * 32 * d) + gk_align16(gk_cdiv64(cols, 32) * gk_cdiv64(rtiles, 32) * 32 * d);
  L.temp_zero_once = 1;
  return L;
}
/* The launch of policy LB (gk_col_scan_lb): LB 0 is a thread a column, 256 a block, no temp. */
static inline gk_launch gk_col_scan_plan_lb(int64_t rows, int64_t cols, int sms, int64_t acc_bytes, int lb) {
  if (lb != 0) return gk_col_scan_plan(rows, cols, sms, acc_bytes);
  gk_launch L = gk_launch_blocks(256, 1);
  L.grid[0] = gk_max64(1, gk_cdiv64(cols, 256));
  return L;
}
/* ---- gk_transpose: tile 64 x 64, block 32 x 8; batch in grid z ------------------------- */
static inline gk_launch gk_transpose_launch(int64_t R, int64_t C, int64_t batch) {
  gk_launch L = gk_launch_blocks(32, 8);
  L.grid[0] = gk_cdiv64(C, 64); L.grid[1] = gk_cdiv64(R, 64); L.grid[2] = batch;
  return L;
}
/* ---- gk_transpose_al: TC = 64 (4-byte; tc32: 32) or 32 (8-byte) columns by a segment
** of seg input rows (a multiple of GK_TAL_STEP = 64); block 32 x 8; batch in grid z.
** The segment: 2..8 steps of 64 rows (each segment end cuts one line of every
** output row in two), the most steps that keep the last wave of blocks (6 a
** SM: 33 KB shared each) >= 90% full, else the fullest; steps > 0 forces it. */
#define GK_TAL_BLOCKS_PER_SM 6   /* TC = 64 f32 / 32 f64: 33 KB; TC = 32 f32 (tc32): 17 KB, 8 an SM */
static inline int64_t gk_transpose_al_seg(int64_t R, int64_t C, int64_t batch, int elem_bytes, int sms, int steps, int tc32) {
  int64_t tiles = gk_max64(1, gk_cdiv64(R, 64));
  if (steps > 0) return 64 * gk_min64(steps, tiles);
  int64_t cx = gk_cdiv64(C, elem_bytes == 8 || tc32 ? 32 : 64);
  int64_t res = (int64_t)gk_max64(1, sms) * (tc32 && elem_bytes == 4 ? 8 : GK_TAL_BLOCKS_PER_SM);
  int64_t best = 2, bestf = -1;
  for (int64_t k = 8; k >= 2; k--) {
    int64_t blocks = gk_max64(1, cx * gk_cdiv64(tiles, k) * batch);   /* empty arrays: no launch */
    int64_t f = 1000 * blocks / (gk_cdiv64(blocks, res) * res);   /* per mille of the last wave's slots used, overall */
    if (f >= 900) { best = k; break; }
    if (f > bestf) { bestf = f; best = k; }
  }
  return 64 * gk_min64(best, tiles);
}
static inline gk_launch gk_transpose_al_launch(int64_t R, int64_t C, int64_t batch, int elem_bytes, int64_t seg, int tc32) {
  gk_launch L = gk_launch_blocks(32, 8);
  L.grid[0] = gk_cdiv64(C, elem_bytes == 8 || tc32 ? 32 : 64); L.grid[1] = gk_cdiv64(R, seg); L.grid[2] = batch;
  return L;
}
/* ---- gk_transpose_narrow: S = min(R, C) <= GK_TN_MAX_S (GK_TRANSPOSE_NARROW), block 256,
** a run of `run` long-side indices a block (S * run <= K staged elements), grid
** (ceil(L / run), batch).  K: GK_TN_BYTES of elements, a power of two in
** 1024..4096.  ORDER: gk_transpose.cuh GK_TN_THREADS, its IS = K / 128 windows a
** warp (W = ceil((run + 31) / 32) a row: S * W <= 8 warps x IS; S <= K / 32 keeps run >= 32). */
#define GK_TN_THREADS 256
#define GK_TN_MAX_S 32       /* the 64 x 64 tiles still meet 0.8x copy at 33 (1000003x33) */
#define GK_TN_BYTES 8192     /* staged a block: 8 blocks an SM hold 64 KB of loads in flight */
static inline int gk_transpose_narrow_k(int elem_bytes, int bytes) {
  int k = bytes / (elem_bytes > 0 ? elem_bytes : 1);
  return k >= 4096 ? 4096 : k >= 2048 ? 2048 : 1024;
}
static inline int64_t gk_transpose_narrow_run(int64_t S, int K) {
  int64_t run = K / gk_max64(1, S);
  while (run > 1 && S * ((run + 62) / 32) > (GK_TN_THREADS / 32) * (K / 128)) run--;
  return run;
}
static inline gk_launch gk_transpose_narrow_launch(int64_t R, int64_t C, int64_t batch, int64_t run) {
  gk_launch L = gk_launch_blocks(GK_TN_THREADS, 1);
  L.grid[0] = gk_cdiv64(C <= R ? R : C, run); L.grid[1] = batch;
  return L;
}
static inline gk_launch gk_permute_launch(int64_t total, int sms) {
  gk_launch L = gk_launch_blocks(256, 1);
  L.grid[0] = gk_max64(1, gk_min64(gk_cdiv64(total, 256), (int64_t)sms * 32));
  return L;
}

#endif /* GK_KERNELS_LAUNCH_H */
