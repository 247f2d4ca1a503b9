/*
** gk_cols.cuh -- per-column reduce and scan of an R x C row-major matrix.
**
** Both read rows coalesced: a block covers a strip of columns, its warps read
** consecutive columns of one row per load (torch's and OneFlow's layout for
** a reduction over the outer axis), and many rows are in flight per thread.
** Results are bit-identical run to run: every combination order is fixed by
** the launch geometry (no float atomics; the only atomics are integer
** tickets).
**
** COLUMN REDUCE gk_col_reduce<P>(rows, cols, prog, partials, counters).
** Block of P::THREADS = TX x TY threads; thread (tx, ty) owns the PK
** consecutive columns c = strip * TX * PK + tx * PK .. + PK - 1 and reads rows
** ty, ty + TY, ... of its row range, U rows per step (U loads in flight).
** Grid: (strips = ceil(C / (TX * PK)), splits): block y folds the rows
** [y * chunk, (y + 1) * chunk), chunk a multiple of TY * U.  The TY partials
** of a column are combined by a tree in shared memory; with splits > 1 the
** block stores them in partials[y * C + c] (no init), takes a ticket on
** counters[strip] (zero before the launch), and the last block of a strip
** folds the splits in order 0, 1, ... (the ticket only picks who does it).
**   struct Prog {
**     typedef X; typedef Op; Op op;
**     template <int N> void load(X *dst, Idx row, Idx col) const;   // N consecutive columns
**     typename Op::A lift(const X &x, Idx row, Idx col) const;
**     void out(Idx col, const typename Op::A &a) const;
**   };
** PK > 1 needs cols % PK == 0 and every row start aligned (host checks).
**
** COLUMN SCAN gk_col_scan<P, EXCLUSIVE>(rows, cols, load, op, store, state).
** Tiles of P::TY * P::RPT rows by 32 columns; thread (tx, ty) loads RPT rows
** of column tx (a warp reads 32 consecutive columns of a row per load) and
** folds them; the block scans the TY thread totals of each column in shared
** memory, and each thread folds its elements again from its prefix.  A tile's prefix is the inclusive prefix of the
** tile above it in the same strip (chained, never a fold of aggregates: one
** fixed combination order), published per column as a tagged descriptor
** (gk_scan.cuh's gk_lb_desc, tag 1: temp zeroed before every launch).  Tiles
** are taken in ticket order (row tile major), so the tile a block waits for
** is held by a block that already runs: no deadlock whatever the grid.
** state: 16 bytes (the ticket), then strips * row_tiles * 32 descriptors.
**   Load : typedef X; template <int N> void load(X *dst, Idx row, Idx col) const;  (N = 1)
**   Store: template <int N> void store(Idx row, Idx col, const typename Op::A *v) const;  (N = 1)
*/
#ifndef GK_COLS_CUH
#define GK_COLS_CUH
#include "gk_reduce.cuh"
#include "gk_scan.cuh"

template <int TX_, int PK_, int U_> struct gk_cols_policy {
  enum { THREADS = 256, TX = TX_, TY = 256 / TX_, PK = PK_, U = U_, STRIP = TX_ * PK_, STEP = (256 / TX_) * U_ };
};

template <class P, class Prog, class Idx>
GK_DEV void gk_col_reduce(Idx rows, Idx cols, const Prog &pg, typename Prog::Op::A *partials, gk_u32 *counters) {
  typedef typename Prog::X X;
  typedef typename Prog::Op Op;
  typedef typename Op::A A;
  enum { TX = P::TX, TY = P::TY, PK = P::PK, U = P::U };
  __shared__ A sh[TY][TX];
  __shared__ int is_last;
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const Idx c = (Idx)blockIdx.x * P::STRIP + (Idx)tx * PK;
  const bool cv = c < cols;
  const Idx splits = gridDim.y;
  const Idx chunk = gk_cdiv(gk_cdiv(rows, splits), (Idx)P::STEP) * (Idx)P::STEP;
  const Idx r0 = chunk * blockIdx.y, r1 = r0 + chunk < rows ? r0 + chunk : rows;
  A acc[PK];
#pragma unroll
  for (int k = 0; k < PK; ++k) acc[k] = pg.op.identity();
  if (cv) {
    Idx r = r0 + ty;
    for (; r + (Idx)(U - 1) * TY < r1; r += (Idx)U * TY) {
      X x[U][PK];
#pragma unroll
      for (int u = 0; u < U; ++u) pg.template load<PK>(x[u], r + (Idx)u * TY, c);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int k = 0; k < PK; ++k) acc[k] = pg.op(acc[k], pg.lift(x[u][k], r + (Idx)u * TY, c + k));
    }
    for (; r < r1; r += TY) {
      X x[PK];
      pg.template load<PK>(x, r, c);
#pragma unroll
      for (int k = 0; k < PK; ++k) acc[k] = pg.op(acc[k], pg.lift(x[k], r, c + k));
    }
  }
  /* the TY partials of each column: a tree over ty, lower rows on the left */
#pragma unroll
  for (int k = 0; k < PK; ++k) {
    if (TY > 1) {
      sh[ty][tx] = acc[k];
      __syncthreads();
#pragma unroll
      for (int s = TY / 2; s > 0; s >>= 1) {
        if (ty < s) sh[ty][tx] = pg.op(sh[ty][tx], sh[ty + s][tx]);
        __syncthreads();
      }
      if (ty == 0) acc[k] = sh[0][tx];
      __syncthreads();
    }
  }
  if (splits == 1) {
    if (ty == 0 && cv)
#pragma unroll
      for (int k = 0; k < PK; ++k) pg.out(c + k, acc[k]);
    return;
  }
  if (ty == 0 && cv)
#pragma unroll
    for (int k = 0; k < PK; ++k) gk_st_cg(partials + (Idx)blockIdx.y * cols + c + k, acc[k]);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(counters + blockIdx.x, 1u) == (unsigned)(splits - 1);
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  if (ty == 0 && cv) {
#pragma unroll
    for (int k = 0; k < PK; ++k) {
      A w = gk_ld_cg(partials + c + k);
      for (Idx s = 1; s < splits; ++s) w = pg.op(w, gk_ld_cg(partials + s * cols + c + k));
      pg.out(c + k, w);
    }
  }
}

template <int TY_, int RPT_> struct gk_col_scan_policy {
  enum { TX = 32, TY = TY_, THREADS = 32 * TY_, RPT = RPT_, TILE_ROWS = TY_ * RPT_ };
};

template <class P, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_col_scan(Idx rows, Idx cols, const Load &load, const Op &op, const Store &store, void *state) {
  typedef typename Op::A A;
  typedef typename Load::X X;
  typedef gk_lb_desc<A> D;
  enum { TY = P::TY, RPT = P::RPT };
  __shared__ A tot[TY][32];
  __shared__ A carry[32];
  __shared__ unsigned tk;
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const Idx strips = gk_cdiv(cols, (Idx)32);
  const Idx rtiles = gk_cdiv(rows, (Idx)P::TILE_ROWS);
  const Idx ntiles = strips * rtiles;
  unsigned *ticket = (unsigned *)state;
  gk_u64 *desc = (gk_u64 *)((char *)state + 16);
  for (;;) {
    if (threadIdx.x == 0) tk = atomicAdd(ticket, 1u);
    __syncthreads();
    const Idx t = tk;
    __syncthreads();   /* tk is rewritten by the next iteration */
    if (t >= ntiles) return;
    const Idx rt = t / strips, st = t - rt * strips;
    const Idx c = st * 32 + tx;
    const Idx rb = rt * P::TILE_ROWS + (Idx)ty * RPT;
    const bool cv = c < cols;
    /* only the elements stay in registers: the thread total is one fold,
    ** the outputs a second fold from the prefix (each a left fold in row
    ** order, so the bits do not depend on the timing) */
    X x[RPT];
#pragma unroll
    for (int i = 0; i < RPT; ++i)
      if (cv && rb + i < rows) load.template load<1>(x + i, rb + i, c);
    A a = op.identity();
#pragma unroll
    for (int i = 0; i < RPT; ++i)
      if (cv && rb + i < rows) a = op(a, op.lift(x[i], rb + i));
    tot[ty][tx] = a;
    __syncthreads();
    /* warp 0: the tile's column totals, the chained prefix, the publication */
    if (ty == 0) {
      A agg = tot[0][tx];
#pragma unroll
      for (int k = 1; k < TY; ++k) agg = op(agg, tot[k][tx]);
      A pre = op.identity();
      if (rt > 0) {
        const gk_u64 *d = desc + ((rt - 1) * strips + st) * (Idx)(32 * D::ENT) + (Idx)tx * D::ENT;
        while (D::get(d, pre) != 1u) { }
        agg = op(pre, agg);
      }
      if (rt + 1 < rtiles) D::put(desc + (rt * strips + st) * (Idx)(32 * D::ENT) + (Idx)tx * D::ENT, 1u, agg);
      carry[tx] = pre;
    }
    __syncthreads();
    if (cv) {
      A p = rt > 0 ? carry[tx] : op.identity();
      for (int k = 0; k < ty; ++k) p = op(p, tot[k][tx]);
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        if (rb + i < rows) {
          const A n = op(p, op.lift(x[i], rb + i));
          store.template store<1>(rb + i, c, EXCLUSIVE ? &p : &n);
          p = n;
        }
      }
    }
  }
}

#endif /* GK_COLS_CUH */
