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
