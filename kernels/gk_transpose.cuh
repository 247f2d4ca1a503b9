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
