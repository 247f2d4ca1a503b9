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
** folds the splits: thread (tx, ty) those of [ty * per, (ty + 1) * per) in
** order (per = ceil(splits / TY)), then the same tree over ty (the ticket
** only picks who does it: one order for a given grid, whatever the timing).
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
** memory, and each thread folds its elements again from its prefix.  A
** tile's prefix, per column (descriptors: gk_scan.cuh's gk_lb_desc; temp
** zeroed before every launch), is by policy LB
**   1: the inclusive prefix of the tile above it in the strip, a chain: a
**      strip of n tiles waits n times in a row (1000003 x 3: 7813 tiles,
**      2744 us on an H100 where a copy takes ~10);
**   2: gk_scan.cuh's grouped look-back over the strip's row tiles, every
**      column its own 1-D scan (see "the grouped look-back" below): at most
**      31 tiles and a window of 32 groups a tile, whatever the lag.
** Both fix one combination order (bit-identical run to run; the two differ
** in the last bits of float sums).  Tiles are taken in ticket order (row
** tile major), so every tile a block waits for is held by a block that
** already runs: no deadlock whatever the grid.  launch.h gk_col_scan_lb
** picks LB.  state: 16 bytes (the ticket), then strips * row_tiles * 32
** descriptors, then strips * ceil(row_tiles / 32) * 32 (LB 2's groups).
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

/* The TY values a of column tx (one a thread (tx, ty)) folded by a tree over
** ty in shared memory, lower ty on the left; the result in thread ty == 0.
** Every thread of the block calls it (it syncs). */
template <int TX, int TY, class Op, class A>
GK_DEV A gk_col_tree(const Op &op, A (*sh)[TX], A a, int tx, int ty) {
  if (TY == 1) return a;
  sh[ty][tx] = a;
  __syncthreads();
#pragma unroll
  for (int s = TY / 2; s > 0; s >>= 1) {
    if (ty < s) sh[ty][tx] = op(sh[ty][tx], sh[ty + s][tx]);
    __syncthreads();
  }
  if (ty == 0) a = sh[0][tx];
  __syncthreads();
  return a;
}

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
#pragma unroll
  for (int k = 0; k < PK; ++k) acc[k] = gk_col_tree<TX, TY>(pg.op, sh, acc[k], tx, ty);
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
  /* the splits of a column, folded by its TY threads at once (one at a time
  ** by thread ty == 0 before: 64 splits of 8192^2 took 93 us, 16 took 75,
  ** which capped the splits at 8): thread ty folds the splits
  ** [ty * per, (ty + 1) * per) in order, then the same tree over ty.  The
  ** order depends on splits and TY only, never on which block is last. */
  const Idx per = gk_cdiv(splits, (Idx)TY), s0 = per * ty, s1 = s0 + per < splits ? s0 + per : splits;
#pragma unroll
  for (int k = 0; k < PK; ++k) {
    acc[k] = pg.op.identity();
    if (!cv) continue;
    /* 4 loads in flight; one for wide accumulators (var's Welford at pack
    ** 4: 74 registers unrolled, 64 as before the fold without) */
#pragma unroll(sizeof(A) <= 16 ? 4 : 1)
    for (Idx s = s0; s < s1; ++s) acc[k] = pg.op(acc[k], gk_ld_cg(partials + s * cols + c + k));
  }
#pragma unroll
  for (int k = 0; k < PK; ++k) acc[k] = gk_col_tree<TX, TY>(pg.op, sh, acc[k], tx, ty);
  if (ty == 0 && cv)
#pragma unroll
    for (int k = 0; k < PK; ++k) pg.out(c + k, acc[k]);
}

/* LB: 2 the grouped look-back, 1 the chain of tiles (before session 25), 0 a thread a column
** (gk_col_scan_seq; session 26); gk_col_scan_lb picks, knob cl */
template <int TY_, int RPT_, int LB_ = 2> struct gk_col_scan_policy {
  enum { TX = 32, TY = TY_, THREADS = 32 * TY_, RPT = RPT_, TILE_ROWS = TY_ * RPT_, LB = LB_ };
};

/* ---- the grouped look-back of a strip (LB 2) ------------------------------
** Every column of a strip is gk_scan.cuh's 1-D problem over its row tiles
** rt = 32g + j: excl(rt) = GP(g) (+) W(g, rt), the same fixed tree.  The 32
** columns of a tile are the 32 lanes of warp 0, each its own scan; the
** descriptors of one (tile, strip) are 32 consecutive gk_lb_desc (one per
** column), so a warp reads one tile's or group's descriptors of the whole
** strip in one coalesced load.  The block's TY warps fetch them (64 entries:
** the tiles 32g .. rt-1 and a window of 32 groups, entry k by warp k % TY),
** into shared memory, in one round trip; warp 0 folds in order.  Tags as
** gk_scan.cuh's with epoch 0 (state zeroed before the launch): a tile's
** aggregate AGG; a group's GA(q) AGG, replaced by GP(q+1) PRE (group 0: PRE
** at once).  A group's last tile publishes GA from its own group's tiles
** only, then polls the groups: no chain of groups behind GA. */
template <class A, int E> struct gk_col_lb_smem {
  A v[E][32];                  /* entries 0..31: tile aggregates; 32..63: the group window */
  unsigned char pre[E][32];    /* a group entry holds a prefix (PRE, or group 0) */
};

/* Descriptor addresses: state + 16, tiles [rtiles][strips][32], then groups
** [ceil(rtiles / 32)][strips][32]; launch.h gk_col_scan_plan sizes it. */
template <class D, class Idx> struct gk_col_lb_state {
  gk_u64 *tile, *group;
  Idx strips;   /* word offsets fit Idx: half the elements' count at most */
  GK_DEV gk_col_lb_state(void *state, Idx strips_, Idx rtiles) : strips(strips_) {
    tile = (gk_u64 *)((char *)state + 16);
    group = (gk_u64 *)((char *)state + 16 + ((gk_i64)rtiles * strips_ * 32 * D::BYTES + 15) / 16 * 16);
  }
  GK_DEV gk_u64 *td(Idx rt, Idx st, int c) const { return tile + ((rt * strips + st) * 32 + c) * D::ENT; }
  GK_DEV gk_u64 *gd(Idx g, Idx st, int c) const { return group + ((g * strips + st) * 32 + c) * D::ENT; }
};

/* A block's 8 warps poll where gk_scan's one warp does: a pause between
** unsuccessful polls keeps them off the L2 the tiles still loading need */
#ifndef GK_COL_LB_BACKOFF
#define GK_COL_LB_BACKOFF() gk_nanosleep(64)
#endif

/* Thread (ty, tx): entries k = ty, ty + TY, ... < 64 of column tx -- tile
** 32g + k for k < nt, group gb + k - 32 for k >= 32 where that group is in
** [0, g) and gwin -- loaded at once, then polled until valid.  Entry i of
** a thread is 64-bit words base + i * step away (TY divides 32: the first
** 32 / TY entries are tiles), so few registers hold addresses. */
template <class D, int TY, class A, int E, class Idx>
GK_DEV void gk_col_lb_fetch(gk_col_lb_smem<A, E> &s, const gk_col_lb_state<D, Idx> &ls, Idx st, Idx g, int nt,
                            bool gwin, Idx gb, int ty, int tx) {
  enum { N = 64 / TY, NT = 32 / TY };
  const Idx rs = ls.strips * 32 * D::ENT, step = rs * TY;   /* words from a row tile (group) to the next */
  const gk_u64 *tb = ls.td(g * 32, st, tx) + ty * rs, *gbp = ls.group + ((gb + ty) * ls.strips + st) * 32 * D::ENT + tx * D::ENT;
  gk_u32 tag[N];
  A v[N];
  unsigned need = 0;   /* bit i: entry ty + i * TY is wanted */
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int k = ty + i * TY;
    const Idx q = gb + (k - 32);
    if (i < NT ? k < nt : gwin && q >= 0 && q < g) need |= 1u << i;
  }
#pragma unroll
  for (int i = 0; i < N; ++i)
    tag[i] = (need >> i & 1u) ? D::get(i < NT ? tb + i * step : gbp + (i - NT) * step, v[i]) : 0u;
  for (;;) {
    unsigned miss = 0;
#pragma unroll
    for (int i = 0; i < N; ++i)
      if ((need >> i & 1u) && !gk_lb_valid(tag[i], 0u)) miss |= 1u << i;
    if (!miss) break;
    GK_COL_LB_BACKOFF();
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (miss >> i & 1u) tag[i] = D::get(i < NT ? tb + i * step : gbp + (i - NT) * step, v[i]);
  }
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int k = ty + i * TY;
    if (need >> i & 1u) {
      s.v[k][tx] = v[i];
      if (k >= 32) s.pre[k][tx] = (tag[i] & 3u) == GK_LB_PRE || gb + (k - 32) == 0;
    }
  }
}

/* Warp 0, column tx: fold the window's groups [gb, gb + 32) within [0, g)
** forward into acc, restarting at every prefix (a prefix holds exactly the
** fold it replaces, so the bits do not depend on where the fold restarts);
** have: acc holds a prefix fold. */
template <class Op, int E, class Idx>
GK_DEV void gk_col_lb_groups(const gk_col_lb_smem<typename Op::A, E> &s, const Op &op, Idx g, Idx gb, int tx,
                             typename Op::A &acc, bool &have) {
#pragma unroll 1
  for (int k = 0; k < 32; ++k) {
    const Idx q = gb + k;
    if (q < 0 || q >= g) continue;
    const typename Op::A x = s.v[32 + k][tx];
    if (s.pre[32 + k][tx]) { acc = x; have = true; }
    else if (have) acc = op(acc, x);
  }
}

/* A thread's run of column c: rows r0 .. r0 + N - 1 (those < rows) of x
** folded from prefix p in row order, each stored (its prefix before it when
** EXCLUSIVE); returns the prefix after them. */
template <int N, bool EXCLUSIVE, class X, class Idx, class A, class Op, class Store>
GK_DEV A gk_col_scan_run(const X (&x)[N], Idx r0, Idx rows, Idx c, A p, const Op &op, const Store &store) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (r0 + i < rows) {
      const A n = op(p, op.lift(x[i], r0 + i));
      store.template store<1>(r0 + i, c, EXCLUSIVE ? &p : &n);
      p = n;
    }
  }
  return p;
}

/* ---- a thread a column (LB 0) ----------------------------------------------
** Few rows (fewer than one tile's): the tile kernel would keep most of its
** warps idle (33 x 1000003: warps 3-7 of 8 had no rows; 155 us on the
** H200 where torch takes 98).  Thread c scans column c from row 0 down,
** U loads in flight (a warp reads 32 consecutive columns of a row at
** once), a left fold in row order: no shared memory, no state.  Grid:
** ceil(cols / blockDim.x) blocks (launch.h gk_col_scan_plan_lb). */
template <int U, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_col_scan_seq(Idx rows, Idx cols, const Load &load, const Op &op, const Store &store) {
  typedef typename Op::A A;
  typedef typename Load::X X;
  const Idx c = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x;
  if (c >= cols) return;
  A p = op.identity();
  for (Idx r0 = 0; r0 < rows; r0 += U) {
    X x[U];
#pragma unroll
    for (int i = 0; i < U; ++i)
      if (r0 + i < rows) load.template load<1>(x + i, r0 + i, c);
    p = gk_col_scan_run<U, EXCLUSIVE>(x, r0, rows, c, p, op, store);
  }
}

template <class P, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_col_scan_tiles(Idx rows, Idx cols, const Load &load, const Op &op, const Store &store, void *state) {
  typedef typename Op::A A;
  typedef typename Load::X X;
  typedef gk_lb_desc<A> D;
  enum { TY = P::TY, RPT = P::RPT };
  __shared__ A tot[TY][32];
  __shared__ A carry[32];
  __shared__ gk_col_lb_smem<A, P::LB == 2 ? 64 : 1> lb;
  __shared__ unsigned tk;
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const Idx strips = gk_cdiv(cols, (Idx)32);
  const Idx rtiles = gk_cdiv(rows, (Idx)P::TILE_ROWS);
  const Idx ntiles = strips * rtiles;
  unsigned *ticket = (unsigned *)state;
  gk_u64 *desc = (gk_u64 *)((char *)state + 16);
  const gk_col_lb_state<D, Idx> ls(state, strips, rtiles);
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
    if (P::LB == 2) {
      /* warp 0: the tile's column totals and its aggregate's publication;
      ** all warps fetch the look-back's descriptors, warp 0 folds them */
      const Idx g = rt / 32;
      const int j = (int)(rt % 32);
      const bool last = j == 31, more = rt + 1 < rtiles;
      A agg = op.identity(), w = op.identity(), acc = op.identity(), pre = op.identity();
      bool have = false;
      if (ty == 0) {
        agg = tot[0][tx];
#pragma unroll
        for (int k = 1; k < TY; ++k) agg = op(agg, tot[k][tx]);
        if (more && !last) D::put(ls.td(rt, st, tx), GK_LB_AGG, agg);
      }
      if (rt > 0) {
        const Idx gb = g - 32;   /* the first window: groups g-32 .. g-1 */
        gk_col_lb_fetch<D, TY>(lb, ls, st, g, j, !last, gb, ty, tx);
        __syncthreads();
        if (ty == 0) {
          if (j > 0) {
            w = lb.v[0][tx];
#pragma unroll 1
            for (int k = 1; k < j; ++k) w = op(w, lb.v[k][tx]);
          }
          if (last && more) D::put(ls.gd(g, st, tx), g == 0 ? GK_LB_PRE : GK_LB_AGG, op(w, agg));   /* GA(g) */
        }
        if (g > 0) {
          if (last) {   /* the groups after GA is out */
            gk_col_lb_fetch<D, TY>(lb, ls, st, g, 0, true, gb, ty, tx);
            __syncthreads();
          }
          if (ty == 0) gk_col_lb_groups(lb, op, g, gb, tx, acc, have);
          if (__syncthreads_or(ty == 0 && !have)) {
            /* the prefix front lags more than 32 groups: back 32 groups at a
            ** time to a window with a prefix for every column, then forward */
            Idx b = gb;
            for (;;) {
              b -= 32;
              gk_col_lb_fetch<D, TY>(lb, ls, st, g, 0, true, b, ty, tx);
              __syncthreads();
              bool f = false;
              if (ty == 0)
#pragma unroll 1
                for (int k = 0; k < 32; ++k) f |= b + k >= 0 && lb.pre[32 + k][tx];
              if (!__syncthreads_or(ty == 0 && !f)) break;
            }
            have = false;
            if (ty == 0) gk_col_lb_groups(lb, op, g, b, tx, acc, have);
            while (b < gb) {
              __syncthreads();
              b += 32;
              gk_col_lb_fetch<D, TY>(lb, ls, st, g, 0, true, b, ty, tx);
              __syncthreads();
              if (ty == 0) gk_col_lb_groups(lb, op, g, b, tx, acc, have);
            }
          }
          if (ty == 0 && last && more) D::put(ls.gd(g, st, tx), GK_LB_PRE, op(acc, op(w, agg)));   /* GP(g+1) */
        }
        pre = g == 0 ? w : j > 0 ? op(acc, w) : acc;
        /* the elements again (L1 / L2): kept in registers across the
        ** look-back they cost 16 (f32) or 32 (f64) registers where the
        ** fetch holds 8 descriptors in flight */
#pragma unroll
        for (int i = 0; i < RPT; ++i)
          if (cv && rb + i < rows) load.template load<1>(x + i, rb + i, c);
      }
      if (ty == 0) carry[tx] = pre;
    } else if (ty == 0) {
      /* warp 0: the tile's column totals, the chained prefix, the publication */
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
      gk_col_scan_run<RPT, EXCLUSIVE>(x, rb, rows, c, p, op, store);
    }
  }
}

template <class P, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_col_scan(Idx rows, Idx cols, const Load &load, const Op &op, const Store &store, void *state) {
  if constexpr (P::LB == 0) gk_col_scan_seq<P::RPT, EXCLUSIVE>(rows, cols, load, op, store);
  else gk_col_scan_tiles<P, EXCLUSIVE>(rows, cols, load, op, store, state);
}

#endif /* GK_COLS_CUH */
