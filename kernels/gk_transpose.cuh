/*
** gk_transpose.cuh -- tiled transpose through padded shared memory, and a
** general permute of up to GK_MAX_DIMS axes.
**
** gk_transpose: out[c, r] = in[r, c] for an R x C row-major input, batched
** over gridDim.z (batch b reads in + b*R*C, writes out + b*R*C).  Tile
** 64 x 64 (TILE_DIM) read and written coalesced by a 32 x 8 block, 16
** elements a thread (16 loads in flight); the shared tile is [64][65] so
** column reads hit 32 distinct banks.
** Grid: (ceil(C/64), ceil(R/64), batch) with gridDim.y <= 65535 (launch.h).
**
** gk_transpose_al: the same transpose for 4- and 8-byte elements when the
** output row pitch R is not a whole number of 128-byte lines (R odd: every
** 32-element store of gk_transpose straddles two lines, half written by
** another warp).  A block takes TC input columns (= output rows; the
** template's default 64 for 4-byte, 32 for 8-byte elements; TC = 32 halves
** the shared ring, and the lowering uses it for f32: 8 blocks an SM) and a
** segment of seg input rows, and walks
** it 64 rows a step through a shared ring of two steps (128 rows).  Output
** row c is written in windows that start on a line: the step at input row
** r_lo writes [r_lo - s_c, r_lo - s_c + 64), s_c = the elements of
** out[c, r_lo]'s line before it (< 32), which the ring still holds from the
** step before.  Every warp store is one whole line (two for 8-byte) except
** at the ends of a segment, where the window is cut to [s0, s1); one extra
** step after the last load writes the segment's last s_c columns.  The next
** step's loads are in registers while a step's window is written.
** Grid: (ceil(C/TC), ceil(R/seg), batch), block 32 x 8, seg a multiple of 64.
**
** gk_transpose_narrow: the same transpose when one side S = min(R, C) is
** small (<= 32 by default: launch.h GK_TN_MAX_S; a 64 x 64 tile
** of a 3 x 1000003 input is 3/64 full: 143.6 us against a copy's 13.2 on
** the H100).  A block takes a run of `run` indices l of the long side (R of
** an R x 3 input, C of a 3 x C one): an S x run sub-matrix that is one
** contiguous span of run * S elements on one side (SCOLS: the input, C
** small; else the output) and S rows of run elements, L apart, on the other.
** It stages the span in shared memory (K elements at most, a pad slot every
** 32 elements, 16 for 8-byte ones, so that stride-S accesses spread over the
** banks): loads, barrier, stores.
** Every warp access, both sides, is 32 consecutive elements from an element
** whose address is a multiple of 32 elements (windows aligned on the
** pointer, lanes outside the range idle): whole 32-byte sectors (a line for
** 4-byte elements), whatever S, R, C and the batch offset are; only the two
** ends of each row of a run share a sector with the next block.  All of a
** thread's loads are issued before the shared stores (up to IS or IC in
** flight).  Grid: (ceil(L / run), batch), block 256; run: launch.h
** gk_transpose_narrow_run, the most that fits K and the windows' bound.
**
** gk_permute: out has dims odims[0..nd); out element (o_0..o_{nd-1}) comes
** from in at sum_k o_k * istride[k], where istride[k] is the input stride
** (in elements) of the input axis that becomes output axis k.  One element
** per thread, grid-stride, 64-bit indices.  When the last axis is kept in
** place (istride[nd-1] == 1) accesses are coalesced; when the permutation
** swaps the last two axes, use gk_transpose with batch instead.
*/
#ifndef GK_TRANSPOSE_CUH
#define GK_TRANSPOSE_CUH
#include "gk_common.cuh"

#define GK_MAX_DIMS 8   /* gk arrays have at most 8 dims (gk.h shape[8]) */
#define GK_TILE_DIM 64
#define GK_TILE_ROWS 8

template <class T, class Idx>
GK_DEV void gk_transpose(const T *in, T *out, Idx R, Idx C) {
  __shared__ T tile[GK_TILE_DIM][GK_TILE_DIM + 1];
  const Idx b = blockIdx.z;
  in += b * R * C; out += b * R * C;
  const Idx c0 = (Idx)blockIdx.x * GK_TILE_DIM, r0 = (Idx)blockIdx.y * GK_TILE_DIM;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int j = 0; j < GK_TILE_DIM; j += GK_TILE_ROWS)
#pragma unroll
    for (int h = 0; h < GK_TILE_DIM; h += 32) {
      const Idx r = r0 + ty + j, c = c0 + tx + h;
      if (r < R && c < C) tile[ty + j][tx + h] = in[r * C + c];
    }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < GK_TILE_DIM; j += GK_TILE_ROWS)
#pragma unroll
    for (int h = 0; h < GK_TILE_DIM; h += 32) {
      const Idx c = c0 + ty + j, r = r0 + tx + h;     /* output row c, column r */
      if (r < R && c < C) out[c * R + r] = tile[tx + h][ty + j];
    }
}

#define GK_TAL_STEP 64    /* input rows a step of gk_transpose_al */
#define GK_TAL_RING 128   /* rows of its shared ring: two steps */

template <class T, int TC_ = (sizeof(T) == 8 ? 32 : 64), bool EARLY = true, class Idx>
GK_DEV void gk_transpose_al(const T *in, T *out, Idx R, Idx C, Idx seg) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "gk_transpose_al: 4- or 8-byte elements");
  static_assert(TC_ == 32 || TC_ == 64, "gk_transpose_al: 32 or 64 columns");
  constexpr int TC = TC_;                             /* input columns (output rows) of a block */
  constexpr int E = 128 / (int)sizeof(T);             /* elements of a 128-byte line */
  constexpr int LR = GK_TAL_STEP / GK_TILE_ROWS;      /* rows a thread loads in a step */
  constexpr int LC = TC / 32;                         /* columns a thread loads in a row */
  constexpr int WQ = TC / GK_TILE_ROWS;               /* output rows a warp writes in a step */
  __shared__ T ring[GK_TAL_RING][TC + 1];
  const Idx b = blockIdx.z;
  in += b * R * C; out += b * R * C;
  const Idx c0 = (Idx)blockIdx.x * TC, s0 = (Idx)blockIdx.y * seg;
  const Idx s1 = s0 + seg < R ? s0 + seg : R;
  const int tx = threadIdx.x, ty = threadIdx.y;
  int skew[WQ];                                       /* s_c of the output rows this warp writes */
#pragma unroll
  for (int q = 0; q < WQ; ++q) {
    const Idx c = c0 + ty + q * GK_TILE_ROWS;
    skew[q] = (int)(((unsigned long long)(size_t)(out + (c < C ? c : 0) * R + s0) / sizeof(T)) & (E - 1));
  }
  T v[LR][LC];
#pragma unroll
  for (int j = 0; j < LR; ++j)
#pragma unroll
    for (int h = 0; h < LC; ++h) {
      const Idx r = s0 + ty + j * GK_TILE_ROWS, c = c0 + tx + h * 32;
      if (r < s1 && c < C) v[j][h] = in[r * C + c];
    }
  for (Idx r_lo = s0;; r_lo += GK_TAL_STEP) {
    const bool more = r_lo < s1;                      /* a step with rows to load (else: the last window) */
    if (more) {
#pragma unroll
      for (int j = 0; j < LR; ++j)
#pragma unroll
        for (int h = 0; h < LC; ++h) ring[(int)((r_lo + ty + j * GK_TILE_ROWS) & (GK_TAL_RING - 1))][tx + h * 32] = v[j][h];
    }
    if (!EARLY) __syncthreads();
    if (r_lo + GK_TAL_STEP < s1) {                    /* the next step's loads (EARLY: before the barrier) */
#pragma unroll
      for (int j = 0; j < LR; ++j)
#pragma unroll
        for (int h = 0; h < LC; ++h) {
          const Idx r = r_lo + GK_TAL_STEP + ty + j * GK_TILE_ROWS, c = c0 + tx + h * 32;
          if (r < s1 && c < C) v[j][h] = in[r * C + c];
        }
    }
    if (EARLY) __syncthreads();
#pragma unroll
    for (int q = 0; q < WQ; ++q) {
      const int jj = ty + q * GK_TILE_ROWS;
      const Idx c = c0 + jj;
      if (c < C) {
        T *orow = out + c * R;
#pragma unroll
        for (int h = 0; h < GK_TAL_STEP; h += 32) {
          const Idx r = r_lo - skew[q] + h + tx;
          if (r >= s0 && r < s1) orow[r] = ring[(int)(r & (GK_TAL_RING - 1))][jj];
        }
      }
    }
    if (!more) break;
    __syncthreads();
  }
}

/* ORDER: launch.h GK_TN_* (gk_transpose_narrow_run keeps a block's windows within NW * IS) */
#define GK_TN_THREADS 256

/* The strided side's windows of a gk_transpose_narrow block: S rows (row s
** at p + s * L) of n elements from l0, each cut into W = ceil((n + 31) / 32)
** windows of 32 from the aligned element at or before row s's first; the
** block's NW warps take the S * W windows round robin, IS each at most.
** f(i, s, row, dl) for each lane's element in range: its i-th window, row s
** at row = s * L, l - l0 = dl.  The warp's lanes read the same s: one address a window. */
template <int IS, int NW, class T, class Idx, class F>
GK_DEV void gk_tn_walk(const T *p, Idx L, Idx l0, int S, int n, F f) {
  const int lane = threadIdx.x & 31, W = (n + 62) >> 5;
  int s = (int)(threadIdx.x >> 5) / W, w = (int)(threadIdx.x >> 5) - s * W;
#pragma unroll
  for (int i = 0; i < IS; ++i) {
    if (s < S) {
      const Idx row = (Idx)s * L;
      const int head = (int)(((unsigned long long)(size_t)(p + row + l0) / sizeof(T)) & 31);
      const int dl = w * 32 + lane - head;
      if (dl >= 0 && dl < n) f(i, s, row, dl);
    }
    w += NW;
    while (w >= W) { w -= W; ++s; }
  }
}

template <class T, int K, bool SCOLS, class Idx>
GK_DEV void gk_transpose_narrow(const T *in, T *out, Idx R, Idx C, Idx run) {
  static_assert(K == 1024 || K == 2048 || K == 4096, "gk_transpose_narrow: 1024, 2048 or 4096 elements staged");
  constexpr int NT = GK_TN_THREADS, NW = NT / 32;
  constexpr int LP = sizeof(T) == 8 ? 4 : 5;          /* a pad slot every 1 << LP elements (16 for 8-byte: each
                                                      ** half warp's 8-byte accesses at stride S spread too) */
  constexpr int IC = K / NT + 1;                      /* contiguous side: elements a thread (K and a head < 32) */
  constexpr int IS = K / 128;                         /* strided side: windows a warp */
  __shared__ T buf[K + (K >> LP)];
  const Idx b = blockIdx.y;
  in += b * R * C; out += b * R * C;
  const Idx S = SCOLS ? C : R, L = SCOLS ? R : C;
  const Idx l0 = (Idx)blockIdx.x * run, l1 = l0 + run < L ? l0 + run : L;
  const int n = (int)(l1 - l0), N = n * (int)S;       /* N <= K */
  const int tid = threadIdx.x;
  /* the contiguous span: elements [0, N) of cp, in windows of 32 from the aligned element at -head */
  const T *cpi = in + l0 * S;
  T *cpo = out + l0 * S;
  const int head = (int)(((unsigned long long)(size_t)(SCOLS ? cpi : (const T *)cpo) / sizeof(T)) & 31);
  if (SCOLS) {
    T v[IC];
#pragma unroll
    for (int i = 0; i < IC; ++i) {
      const int j = i * NT + tid - head;
      if (j >= 0 && j < N) v[i] = cpi[j];
    }
#pragma unroll
    for (int i = 0; i < IC; ++i) {
      const int j = i * NT + tid - head;
      if (j >= 0 && j < N) buf[j + (j >> LP)] = v[i];
    }
    __syncthreads();
    gk_tn_walk<IS, NW>((const T *)out, L, l0, (int)S, n, [&](int, int s, Idx row, int dl) {
      const int j = dl * (int)S + s;
      out[row + l0 + dl] = buf[j + (j >> LP)];
    });
  } else {
    T v[IS];
    gk_tn_walk<IS, NW>(in, L, l0, (int)S, n, [&](int i, int, Idx row, int dl) { v[i] = in[row + l0 + dl]; });
    gk_tn_walk<IS, NW>(in, L, l0, (int)S, n, [&](int i, int s, Idx, int dl) {
      const int j = dl * (int)S + s;
      buf[j + (j >> LP)] = v[i];
    });
    __syncthreads();
#pragma unroll
    for (int i = 0; i < IC; ++i) {
      const int j = i * NT + tid - head;
      if (j >= 0 && j < N) cpo[j] = buf[j + (j >> LP)];
    }
  }
}

struct gk_permute_args {
  int nd;
  gk_i64 odims[GK_MAX_DIMS];
  gk_i64 istride[GK_MAX_DIMS];
};

template <class T, class Idx>
GK_DEV void gk_permute(const T *in, T *out, Idx total, const gk_permute_args &a) {
  for (Idx o = (Idx)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += (Idx)gridDim.x * blockDim.x) {
    Idx rem = o, src = 0;
    for (int k = a.nd - 1; k >= 0; --k) {
      const Idx d = (Idx)a.odims[k];
      const Idx q = rem / d;
      src += (rem - q * d) * (Idx)a.istride[k];
      rem = q;
    }
    out[o] = in[src];
  }
}

#endif /* GK_TRANSPOSE_CUH */
