/*
** gk_rows.cuh -- per-row programs (reduce, softmax, layernorm, ...), per-row
** scan on an R x C row-major matrix (per-column reduce and scan: gk_cols.cuh).
**
** ROW PROGRAM (OneFlow softmax.cuh's shape, generalised).  A program is up
** to two per-row reduction passes followed by an optional per-element map:
**   pass A: a = fold_opA(lift_a(x, col))          over the row
**   pass B: b = fold_opB(lift_b(x, col, a))       over the row (PASSES == 2)
**   store : store<N>(row, col, x, a, b)           per element (HAS_STORE)
**           row_out(row, a, b)                    once per row
** softmax = one pass of gk_op_logsumexp then exp(x - m) / s;
** layernorm = pass A sum, pass B sum of (x - mean)^2, then the affine map.
**
**   struct Prog {
**     typedef X;                       // element type held in registers
**     typedef OpA; typedef OpB;        // gk_common.cuh operators (OpB = gk_op_nop if PASSES == 1)
**     enum { PASSES = 1|2, HAS_STORE = 0|1 };
**     OpA opa; OpB opb;
**     template <int N> void load(X *dst, Idx row, Idx col) const;   // N consecutive
**     typename OpA::A lift_a(X x, Idx col) const;
**     typename OpB::A lift_b(X x, Idx col, const typename OpA::A &a) const;  // PASSES == 2
**     template <int N> void store(Idx row, Idx col, const X *x,
**                                 const typename OpA::A &a, const typename OpB::A &b) const;
**     void row_out(Idx row, const typename OpA::A &a, const typename OpB::A &b) const;
**   };
** N is Policy::PACK (1, 2 or 4); when N > 1 cols % N == 0 and the host
** guarantees alignment of every row start -- except under Policy::ALIGN
** (gk_row_stream, gk_row_split): the arrays are aligned but a row may start
** anywhere; the program then also has
**     Idx phase(Idx row) const;   // (row * cols) % PACK: where row's element 0 sits in its pack
** and the kernels read and write packs from the row's first aligned element,
** the < PACK elements before it and after the last full pack one by one
** (gk_row_span).
**
** Kernels (the host picks one with gk_rows_plan() in launch.h):
**   gk_row_cached<P>  row held in registers by a group of P::WIDTH threads
**                     (WIDTH <= 32: lanes of one warp, several rows per warp,
**                     P::BATCH rows a group at once; WIDTH == THREADS: the
**                     whole block).  One global read.
**   gk_row_stream<P>  block per row, the row re-read from global memory for
**                     each pass (PASSES + HAS_STORE reads, one less under
**                     ONLINE_B; re-reads mostly hit L2).  Any length.
**   gk_row_cluster<P, CS>  long rows over a cluster of CS blocks, each with
**                     its share in registers: one global read (sm_90).
**   gk_row_cluster_smem<P, CS>  the same with the shares in shared memory.
**   gk_row_cluster_async<P, CS>  the same, the next row's share copied by
**                     cp.async while this one is folded and stored.
**   gk_row_grid<P, SP>  few long rows: S blocks a row anywhere in a
**                     co-resident grid, shares in shared memory, the pass
**                     partials exchanged through global memory behind a
**                     barrier a row.  One global read.
**   gk_row_split<P>   pure row reductions (HAS_STORE == 0) of few long rows:
**                     several blocks per row, partials + per-row ticket, the
**                     last block combines in fixed order.  PASSES must be 1.
*/
#ifndef GK_ROWS_CUH
#define GK_ROWS_CUH
#include "gk_reduce.cuh"

struct gk_op_nop {
  typedef gk_none A;
  GK_DEV A identity() const { return A(); }
  GK_DEV A operator()(A, A) const { return A(); }
  template <class X, class I> GK_DEV A lift(X, I) const { return A(); }
};

template <int THREADS_, int WIDTH_, int PACKS_, int PACK_, int BATCH_ = 1, int ALIGN_ = 0, int FULL_ = 0>
struct gk_rows_policy {
  enum { THREADS = THREADS_,   /* block size */
         ALIGN = ALIGN_,       /* stream / split: rows need not start aligned (gk_row_span) */
         FULL = FULL_,         /* gk_row_cached: cols == WIDTH * PACKS * PACK (no column test; see there) */
         WIDTH = WIDTH_,       /* threads per row: 1..32 (power of 2) or THREADS */
         PACKS = PACKS_,       /* packs per thread (cached) / packs in flight (stream) */
         PACK = PACK_,         /* elements per pack: 1, 2, 4 */
         BATCH = BATCH_,       /* gk_row_cached, WIDTH <= 32: rows a group holds at once (loads of all in flight) */
         GROUPS = THREADS_ / WIDTH_,
         CAPACITY = WIDTH_ * PACKS_ * PACK_ };
};

/* A pack's fold.  A program may declare enum { PACK_A = 1 } (PACK_B for
** pass B) with
**     template <int N> typename OpA::A lift_a_pack(const X *x, Idx col) const;
**     template <int N> typename OpB::A lift_b_pack(const X *x, Idx col, const typename OpA::A &a) const;
** the lift of N consecutive elements as one value (the lowering's f32 sums:
** the pack summed in f32, then one conversion and one double add, not N);
** the kernels fold a whole pack of N > 1 with it, else element by element.
** Another grouping of the sum (last bits), the same every run. */
template <class Prog, class = void> struct gk_pack_a { enum { V = 0 }; };
template <class Prog> struct gk_pack_a<Prog, decltype((void)Prog::PACK_A)> { enum { V = Prog::PACK_A }; };
template <class Prog, class = void> struct gk_pack_b { enum { V = 0 }; };
template <class Prog> struct gk_pack_b<Prog, decltype((void)Prog::PACK_B)> { enum { V = Prog::PACK_B }; };
template <int PASS, int N, class Prog, class Op, class R, class X, class Idx, class AA>
GK_DEV R gk_row_fold_pack(R acc, const Prog &pg, const Op &op, const X *x, Idx col, const AA &a) {
  if constexpr (N > 1 && PASS == 0 && gk_pack_a<Prog>::V) return op(acc, pg.template lift_a_pack<N>(x, col));
  else if constexpr (N > 1 && PASS == 1 && gk_pack_b<Prog>::V) return op(acc, pg.template lift_b_pack<N>(x, col, a));
  else {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if constexpr (PASS == 0) acc = op(acc, pg.lift_a(x[k], col + k));
      else acc = op(acc, pg.lift_b(x[k], col + k, a));
    }
    return acc;
  }
}
/* N floats summed pairwise ((v0 + v1) + (v2 + v3)) */
template <int N> GK_DEV float gk_pack_sum(const float *v) {
  if constexpr (N == 1) return v[0];
  else return gk_pack_sum<N / 2>(v) + gk_pack_sum<N - N / 2>(v + N / 2);
}

/* ONLINE PASS B.  A program whose pass B is a sum of exp(E - m(a)), m(a)
** the row's pass-A max (softmax's sum of exps) may declare
**     enum { ONLINE_B = 1 };
**     typename OpB::A rescale_b(const typename OpB::A &b, const typename OpA::A &from,
**                               const typename OpA::A &to) const;   // b folded at a = from, as if at a = to
** The kernels whose reductions cost barriers (block mode, the cluster
** kernels) then fold pass B at each warp's own pass-A value, and the warps
** (of every block of the cluster) exchange their (a, b) pairs once a row:
** one barrier a row instead of two reductions of their own (gk_row_pairs).
** Each term of b is then exp(E - m(a_warp)) times exp(m(a_warp) - m(a))
** (rescale_b, in double): another rounding of the same sum, the same every
** run. */
template <class Prog, class = void> struct gk_online_b { enum { V = 0 }; };
template <class Prog> struct gk_online_b<Prog, decltype((void)Prog::ONLINE_B)> { enum { V = Prog::ONLINE_B }; };
/* Pair slots of a block's NW warps, two rows' worth (alternating by row
** parity: a slot is written again only after the next row's barrier, which
** every thread reaches after reading it). */
template <int NW, class A, class B> struct gk_row_pairs { A a[2][NW]; B b[2][NW]; };
/* The N pairs ga(i), gb(i) folded into (a, b): a the pass-A fold of them,
** b the sum of each b rescaled to a.  Every lane of every warp computes the
** same values (lane l folds pairs l, l + 32, ..., then a lower-lane-first
** butterfly), so each thread of the row holds the row's (a, b). */
template <int N, class Prog, class GA, class GB>
GK_DEV void gk_row_pairs_fold(const Prog &pg, const GA &ga, const GB &gb, typename Prog::OpA::A &a,
                              typename Prog::OpB::A &b) {
  typename Prog::OpA::A al = pg.opa.identity();
  for (int i = gk_lane(); i < N; i += 32) al = pg.opa(al, ga(i));
  a = gk_warp_allreduce<32>(al, pg.opa);
  typename Prog::OpB::A bl = pg.opb.identity();
  for (int i = gk_lane(); i < N; i += 32) bl = pg.opb(bl, pg.rescale_b(gb(i), ga(i), a));
  b = gk_warp_allreduce<32>(bl, pg.opb);
}

/* A block's row under ONLINE_B: lane 0 of each warp publishes the warp's
** pair (aw, bw; bw folded at aw) in the slots of parity par, one barrier,
** and every thread folds the NW pairs into the row's (a, b). */
template <int NW, class Prog>
GK_DEV void gk_row_pairs_block(const Prog &pg, gk_row_pairs<NW, typename Prog::OpA::A, typename Prog::OpB::A> &prs, int par,
                               const typename Prog::OpA::A &aw, const typename Prog::OpB::A &bw,
                               typename Prog::OpA::A &a, typename Prog::OpB::A &b) {
  if (gk_lane() == 0) { prs.a[par][threadIdx.x >> 5] = aw; prs.b[par][threadIdx.x >> 5] = bw; }
  __syncthreads();
  gk_row_pairs_fold<NW>(pg, [&](int i) { return prs.a[par][i]; }, [&](int i) { return prs.b[par][i]; }, a, b);
}

/* Group all-reduce: warp shuffles when WIDTH <= 32, else through shared. */
template <int WIDTH, int THREADS, class Op>
GK_DEV typename Op::A gk_group_allreduce(typename Op::A v, const Op &op,
                                         typename gk_block_reduce<THREADS, Op>::TempStorage &ts) {
  if constexpr (WIDTH <= 32) return gk_warp_allreduce<(WIDTH <= 32 ? WIDTH : 32)>(v, op);
  else return gk_block_reduce<THREADS, Op>(ts).reduce_all(v, op);   /* not instantiated in warp mode */
}

/* P::FULL (the row fills the group's packs exactly): no column tests, and
** a group past the last row reads and folds the last row (its result is
** never stored), so the loads, lifts and folds run unconditionally: the
** compiler may then reuse the lift_b values in store (softmax's exp(x - m),
** computed once instead of twice). */
template <class P, class Prog, class Idx>
GK_DEV void gk_row_cached(Idx rows, Idx cols, const Prog &pg) {
  typedef typename Prog::X X;
  typedef typename Prog::OpA OpA; typedef typename OpA::A A;
  typedef typename Prog::OpB OpB; typedef typename OpB::A B;
  enum { W = P::WIDTH, NP = P::PACKS, PK = P::PACK, G = P::GROUPS, RB = P::BATCH };
  static_assert(RB == 1 || W <= 32, "batches of rows: warp mode only");
  enum { ONL = gk_online_b<Prog>::V && Prog::PASSES == 2 && W > 32 };
  __shared__ typename gk_block_reduce<P::THREADS, OpA>::TempStorage tsa;
  __shared__ typename gk_block_reduce<P::THREADS, OpB>::TempStorage tsb;
  __shared__ gk_row_pairs<(ONL ? P::THREADS / 32 : 1), A, B> prs;
  int par = 0;
  (void)par; (void)prs;
  const int g = threadIdx.x / W, t = threadIdx.x % W;
  /* a block step covers G * RB rows: row b of group g is row0 + b * G + g */
  for (Idx row0 = (Idx)blockIdx.x * G * RB; row0 < rows; row0 += (Idx)gridDim.x * G * RB) {
    X x[RB][NP][PK];
#pragma unroll
    for (int b = 0; b < RB; ++b) {
      const Idx row = row0 + (Idx)b * G + g;
      const Idx lr = P::FULL && row >= rows ? rows - 1 : row;   /* FULL: a real row for every group */
#pragma unroll
      for (int p = 0; p < NP; ++p) {
        const Idx col = ((Idx)p * W + t) * PK;
        if (P::FULL || (row < rows && col < cols)) pg.template load<PK>(x[b][p], lr, col);
      }
    }
#pragma unroll
    for (int b = 0; b < RB; ++b) {
      const Idx row = row0 + (Idx)b * G + g;
      const bool rv = row < rows;
      A a = pg.opa.identity();
#pragma unroll
      for (int p = 0; p < NP; ++p) {
        const Idx col = ((Idx)p * W + t) * PK;
        if (P::FULL || (rv && col < cols)) a = gk_row_fold_pack<0, PK>(a, pg, pg.opa, x[b][p], col, 0);
      }
      /* pass B folds at af: the row's a, or under ONL this warp's (one barrier for both passes) */
      B bb = pg.opb.identity();
      A af;
      if constexpr (ONL) af = gk_warp_allreduce<32>(a, pg.opa);
      else af = a = gk_group_allreduce<W, P::THREADS>(a, pg.opa, tsa);
      if constexpr (Prog::PASSES == 2) {
#pragma unroll
        for (int p = 0; p < NP; ++p) {
          const Idx col = ((Idx)p * W + t) * PK;
          if (P::FULL || (rv && col < cols)) bb = gk_row_fold_pack<1, PK>(bb, pg, pg.opb, x[b][p], col, af);
        }
      }
      if constexpr (ONL) {
        const B bw = gk_warp_allreduce<32>(bb, pg.opb);
        gk_row_pairs_block<P::THREADS / 32>(pg, prs, par, af, bw, a, bb);
        par ^= 1;
      } else if constexpr (Prog::PASSES == 2) bb = gk_group_allreduce<W, P::THREADS>(bb, pg.opb, tsb);
      if (!rv) continue;
      if constexpr (Prog::HAS_STORE) {
#pragma unroll
        for (int p = 0; p < NP; ++p) {
          const Idx col = ((Idx)p * W + t) * PK;
          if (P::FULL || col < cols) pg.template store<PK>(row, col, x[b][p], a, bb);
        }
      }
      if (t == 0) pg.row_out(row, a, bb);
    }
  }
}

/* The packed part of a row for a block-per-row kernel: packs of PK at
** columns lead + j * PK, j * PK < body; the rest (lead elements before, at
** most PK - 1 after) one by one: extra e < cols - body is column
** e < lead ? e : body + e.  Without P::ALIGN lead = 0 and body = cols. */
template <class Idx> struct gk_row_span { Idx lead, body; };
template <class P, class Prog, class Idx>
GK_DEV gk_row_span<Idx> gk_row_span_of(Idx row, Idx cols, const Prog &pg) {
  gk_row_span<Idx> s = {0, cols};
  if constexpr (P::ALIGN) {
    const Idx ph = pg.phase(row) % P::PACK;
    s.lead = ph ? (Idx)P::PACK - ph : 0;
    if (s.lead > cols) s.lead = cols;
    s.body = (cols - s.lead) / P::PACK * P::PACK;
  }
  return s;
}
template <class Idx> GK_DEV Idx gk_row_extra_col(const gk_row_span<Idx> &s, Idx e) { return e < s.lead ? e : s.body + e; }

/* A block-per-row sweep's loads.  gk_row_extra_load: this thread's element
** of the row's unaligned head and tail (ALIGN; one at most), if it has one.
** gk_row_step_load: this thread's packs of the step from base, pack p at
** column sp.lead + base + (p * THREADS + threadIdx.x) * PACK where that
** lies inside the body (the caller tests the same offset). */
template <class P, class Prog, class Idx>
GK_DEV bool gk_row_extra_load(typename Prog::X *x1, Idx &col, Idx row, Idx cols, const gk_row_span<Idx> &sp,
                              const Prog &pg) {
  if constexpr (!P::ALIGN) return false;
  else {
    if ((Idx)threadIdx.x >= cols - sp.body) return false;
    col = gk_row_extra_col(sp, (Idx)threadIdx.x);
    pg.template load<1>(x1, row, col);
    return true;
  }
}
template <class P, class Prog, class Idx>
GK_DEV void gk_row_step_load(typename Prog::X (&x)[P::PACKS][P::PACK], Idx row, Idx base, const gk_row_span<Idx> &sp,
                             const Prog &pg) {
#pragma unroll
  for (int p = 0; p < P::PACKS; ++p) {
    const Idx off = base + ((Idx)p * P::THREADS + threadIdx.x) * P::PACK;
    if (off < sp.body) pg.template load<P::PACK>(x[p], row, sp.lead + off);
  }
}

/* Fold one pass over [0, cols) of `row` with the block; result in all threads. */
template <class P, int PASS, class Prog, class Op, class Idx, class AA>
GK_DEV typename Op::A gk_row_stream_pass(Idx row, Idx cols, const Prog &pg, const Op &op, const AA &a,
                                         typename gk_block_reduce<P::THREADS, Op>::TempStorage &ts) {
  typedef typename Prog::X X;
  typedef typename Op::A R;
  enum { T = P::THREADS, NP = P::PACKS, PK = P::PACK };
  R acc[NP];
#pragma unroll
  for (int p = 0; p < NP; ++p) acc[p] = op.identity();
  const gk_row_span<Idx> sp = gk_row_span_of<P>(row, cols, pg);
  X x1[1];
  Idx c1;
  if (gk_row_extra_load<P>(x1, c1, row, cols, sp, pg)) {   /* the unaligned head and tail */
    if constexpr (PASS == 0) acc[0] = op(acc[0], pg.lift_a(x1[0], c1));
    else acc[0] = op(acc[0], pg.lift_b(x1[0], c1, a));
  }
  const Idx step = (Idx)T * PK * NP;
  for (Idx base = 0; base < sp.body; base += step) {
    X x[NP][PK];
    gk_row_step_load<P>(x, row, base, sp, pg);
#pragma unroll
    for (int p = 0; p < NP; ++p) {
      const Idx off = base + ((Idx)p * T + threadIdx.x) * PK, col = sp.lead + off;
      if (off < sp.body) acc[p] = gk_row_fold_pack<PASS, PK>(acc[p], pg, op, x[p], col, a);
    }
  }
#pragma unroll
  for (int s = 1; s < NP; s <<= 1)
#pragma unroll
    for (int p = 0; p + s < NP; p += 2 * s) acc[p] = op(acc[p], acc[p + s]);
  return gk_block_reduce<T, Op>(ts).reduce_all(acc[0], op);
}

/* ONLINE_B in one read (gk_row_stream): each thread folds pass A and pass B
** together, a step of NP packs at a time: the step's pass-A value an, the
** step's pass-B sum at an, and the thread's sum so far rescaled from its
** previous pass-A value to an (rescale_b); then each warp's pairs, one
** barrier and gk_row_pairs_fold as in block mode.  Result in all threads. */
template <class P, class Prog, class Idx>
GK_DEV void gk_row_stream_online(Idx row, Idx cols, const Prog &pg, typename Prog::OpA::A &a, typename Prog::OpB::A &b,
                                 gk_row_pairs<P::THREADS / 32, typename Prog::OpA::A, typename Prog::OpB::A> &prs, int par) {
  typedef typename Prog::X X;
  typedef typename Prog::OpA::A A;
  typedef typename Prog::OpB::A B;
  enum { T = P::THREADS, NP = P::PACKS, PK = P::PACK };
  A at = pg.opa.identity();
  B bt = pg.opb.identity();
  const gk_row_span<Idx> sp = gk_row_span_of<P>(row, cols, pg);
  X x1[1];
  Idx c1;
  if (gk_row_extra_load<P>(x1, c1, row, cols, sp, pg)) {   /* the unaligned head and tail */
    at = pg.opa(at, pg.lift_a(x1[0], c1));
    bt = pg.lift_b(x1[0], c1, at);
  }
  const Idx step = (Idx)T * PK * NP;
  for (Idx base = 0; base < sp.body; base += step) {
    X x[NP][PK];
    gk_row_step_load<P>(x, row, base, sp, pg);
    A an = at;
#pragma unroll
    for (int p = 0; p < NP; ++p) {
      const Idx off = base + ((Idx)p * T + threadIdx.x) * PK;
      if (off < sp.body) an = gk_row_fold_pack<0, PK>(an, pg, pg.opa, x[p], sp.lead + off, 0);
    }
    B bs = pg.opb.identity();
#pragma unroll
    for (int p = 0; p < NP; ++p) {
      const Idx off = base + ((Idx)p * T + threadIdx.x) * PK;
      if (off < sp.body) bs = gk_row_fold_pack<1, PK>(bs, pg, pg.opb, x[p], sp.lead + off, an);
    }
    bt = pg.opb(pg.rescale_b(bt, at, an), bs);
    at = an;
  }
  const A aw = gk_warp_allreduce<32>(at, pg.opa);
  const B bw = gk_warp_allreduce<32>(pg.rescale_b(bt, at, aw), pg.opb);
  gk_row_pairs_block<T / 32>(pg, prs, par, aw, bw, a, b);
}

/* rows r0, r0 + dr, ... (gk_row_stream: blockIdx.x, gridDim.x; gk_row_grid's fallback: blockIdx.y, gridDim.y) */
template <class P, class Prog, class Idx>
GK_DEV void gk_row_stream_rows(Idx rows, Idx cols, const Prog &pg, Idx r0, Idx dr) {
  typedef typename Prog::X X;
  typedef typename Prog::OpA OpA; typedef typename OpA::A A;
  typedef typename Prog::OpB OpB; typedef typename OpB::A B;
  enum { T = P::THREADS, NP = P::PACKS, PK = P::PACK };
  enum { ONL = gk_online_b<Prog>::V && Prog::PASSES == 2 };
  __shared__ typename gk_block_reduce<T, OpA>::TempStorage tsa;
  __shared__ typename gk_block_reduce<T, OpB>::TempStorage tsb;
  __shared__ gk_row_pairs<(ONL ? T / 32 : 1), A, B> prs;
  int par = 0;
  (void)par; (void)prs;
  for (Idx row = r0; row < rows; row += dr) {
    A a;
    B b = pg.opb.identity();
    if constexpr (ONL) {   /* both passes in one read */
      gk_row_stream_online<P>(row, cols, pg, a, b, prs, par);
      par ^= 1;
    } else {
      a = gk_row_stream_pass<P, 0>(row, cols, pg, pg.opa, 0, tsa);
      if constexpr (Prog::PASSES == 2) b = gk_row_stream_pass<P, 1>(row, cols, pg, pg.opb, a, tsb);
    }
    if constexpr (Prog::HAS_STORE) {
      const gk_row_span<Idx> sp = gk_row_span_of<P>(row, cols, pg);
      X x1[1];
      Idx c1;
      if (gk_row_extra_load<P>(x1, c1, row, cols, sp, pg)) pg.template store<1>(row, c1, x1, a, b);
      const Idx step = (Idx)T * PK * NP;
      for (Idx base = 0; base < sp.body; base += step) {
        X x[NP][PK];
        gk_row_step_load<P>(x, row, base, sp, pg);
#pragma unroll
        for (int p = 0; p < NP; ++p) {
          const Idx off = base + ((Idx)p * T + threadIdx.x) * PK;
          if (off < sp.body) pg.template store<PK>(row, sp.lead + off, x[p], a, b);
        }
      }
    }
    if (threadIdx.x == 0) pg.row_out(row, a, b);
  }
}
template <class P, class Prog, class Idx>
GK_DEV void gk_row_stream(Idx rows, Idx cols, const Prog &pg) {
  gk_row_stream_rows<P>(rows, cols, pg, (Idx)blockIdx.x, (Idx)gridDim.x);
}

/* ---- a row over a thread-block cluster (sm_90) -----------------------------
** gk_row_cluster<P, CS>: a cluster of CS blocks per row, each holding its
** share of the row's packs in registers (packs of P::PACK from the row's
** aligned element, the elements around them in block 0: gk_row_span, so P
** has ALIGN and the program phase()), so a long row is read from memory
** once whatever the program's passes.  A pass: each block folds its share,
** thread 0 publishes the block's partial in its shared memory, a cluster
** barrier, and thread 0 of every block folds the CS partials from
** distributed shared memory in rank order 0..CS-1 (the same value in every
** block; fixed order).  Partials alternate between two slots by row
** parity: a slot is written again only after the next barrier, which every
** block reaches after reading it.  Launch: GK_CLUSTER_DIMS(CS) on the
** kernel, grid a multiple of CS; cluster i takes rows i, i + gridDim.x / CS,
** ...  Below sm_90 the attribute is empty and the generated kernel calls
** gk_row_stream with the same policy instead (ALIGN works there too). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GK_CLUSTER_DIMS(n) __cluster_dims__(n, 1, 1)
#else
#define GK_CLUSTER_DIMS(n)   /* no clusters: the kernel text streams the row instead */
#endif
GK_DEV unsigned gk_cluster_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
/* every thread of every block of the cluster; arrive releases, wait acquires */
GK_DEV void gk_cluster_sync() { asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory"); }
template <class T> GK_DEV const T *gk_cluster_map(const T *p, unsigned rank) {
  const T *r;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
  return r;
}
template <int CS, int T, class Op>
GK_DEV typename Op::A gk_cluster_allreduce(typename Op::A v, const Op &op, typename gk_block_reduce<T, Op>::TempStorage &ts,
                                           typename Op::A *slot, typename Op::A &all) {
  typedef typename Op::A A;
  v = gk_block_reduce<T, Op>(ts).reduce(v, op);
  if (threadIdx.x == 0) *slot = v;
  gk_cluster_sync();
  if (threadIdx.x == 0) {
    A t = *gk_cluster_map(slot, 0);
#pragma unroll
    for (int r = 1; r < CS; ++r) t = op(t, *gk_cluster_map(slot, (unsigned)r));
    all = t;
  }
  __syncthreads();
  return all;
}
/* What the blocks of a row's cluster share (the cluster kernels); under
** ONLINE_B only each warp's pairs (static shared memory: 1 KB at most,
** GK_ROWS_SMEM_EXTRA). */
template <int T, class OpA, class OpB, bool ONL = false> struct gk_row_cluster_shared {
  typename gk_block_reduce<T, OpA>::TempStorage tsa;
  typename gk_block_reduce<T, OpB>::TempStorage tsb;
  typename OpA::A sa[2], ca;
  typename OpB::A sb[2], cb;
};
template <int T, class OpA, class OpB> struct gk_row_cluster_shared<T, OpA, OpB, true> {
  gk_row_pairs<T / 32, typename OpA::A, typename OpB::A> pr;
};
/* ONLINE_B over a cluster: each warp publishes its pair (aw, bw) in its
** block's shared memory, one cluster barrier, and every warp folds the CS x
** NW pairs in (rank, warp) order from distributed shared memory. */
template <int CS, int NW, class Prog, class Pr>
GK_DEV void gk_cluster_pairs(const Prog &pg, Pr &pr, int par, const typename Prog::OpA::A &aw,
                             const typename Prog::OpB::A &bw, typename Prog::OpA::A &a, typename Prog::OpB::A &b) {
  if (gk_lane() == 0) { pr.a[par][threadIdx.x >> 5] = aw; pr.b[par][threadIdx.x >> 5] = bw; }
  gk_cluster_sync();
  gk_row_pairs_fold<CS * NW>(pg, [&](int i) { return *gk_cluster_map(&pr.a[par][i % NW], (unsigned)(i / NW)); },
                             [&](int i) { return *gk_cluster_map(&pr.b[par][i % NW], (unsigned)(i / NW)); }, a, b);
}
/* THE EXCHANGE of the blocks that share a row (gk_row_share_rest): Ex has
**   A all_a(const Prog &, A v, int par);   // v: this thread's pass-A partial; the row's pass A, every thread
**   B all_b(const Prog &, B v, int par);   // the same for pass B
**   void pairs(const Prog &, int par, const A &aw, const B &bw, A &a, B &b);   // ONLINE_B: this warp's pair in, the row's out
** par: the row's parity (the slots a block writes alternate by it).
** gk_row_ex_cluster: distributed shared memory (the cluster kernels);
** gk_row_ex_grid: global memory and a barrier a row (gk_row_grid). */
template <int CS, int T, class Prog, class Sh> struct gk_row_ex_cluster {
  typedef typename Prog::OpA::A A;
  typedef typename Prog::OpB::A B;
  Sh &sh;
  GK_DEV A all_a(const Prog &pg, A v, int par) { return gk_cluster_allreduce<CS, T>(v, pg.opa, sh.tsa, &sh.sa[par], sh.ca); }
  GK_DEV B all_b(const Prog &pg, B v, int par) { return gk_cluster_allreduce<CS, T>(v, pg.opb, sh.tsb, &sh.sb[par], sh.cb); }
  GK_DEV void pairs(const Prog &pg, int par, const A &aw, const B &bw, A &a, B &b) {
    gk_cluster_pairs<CS, T / 32>(pg, sh.pr, par, aw, bw, a, b);
  }
};
/* A cluster block's share of row: packs [q0, q0 + qn) of the row's body
** (gk_row_span) and, in block 0, the element ec around them (ev: this
** thread has one). */
template <class Idx> struct gk_row_share { gk_row_span<Idx> sp; Idx q0, qn, ec; bool ev; unsigned rank; };
template <class P, class Prog, class Idx>
GK_DEV gk_row_share<Idx> gk_row_share_in(Idx row, Idx cols, const Prog &pg, unsigned rank, Idx cs) {
  gk_row_share<Idx> s;
  s.rank = rank;
  s.sp = gk_row_span_of<P>(row, cols, pg);
  const Idx npk = s.sp.body / P::PACK, ppb = gk_cdiv(npk, cs);
  s.q0 = (Idx)rank * ppb;
  s.qn = npk - s.q0 < ppb ? (npk > s.q0 ? npk - s.q0 : 0) : ppb;
  s.ev = rank == 0 && (Idx)threadIdx.x < cols - s.sp.body;
  s.ec = gk_row_extra_col(s.sp, (Idx)threadIdx.x);
  return s;
}
/* the same for a cluster of CS blocks (rank: gk_cluster_rank) */
template <class P, int CS, class Prog, class Idx>
GK_DEV gk_row_share<Idx> gk_row_share_of(Idx row, Idx cols, const Prog &pg, unsigned rank) {
  return gk_row_share_in<P>(row, cols, pg, rank, (Idx)CS);
}
template <class P, int CS, class Prog, class Idx>
GK_DEV void gk_row_cluster(Idx rows, Idx cols, const Prog &pg) {
  typedef typename Prog::X X;
  typedef typename Prog::OpA OpA; typedef typename OpA::A A;
  typedef typename Prog::OpB OpB; typedef typename OpB::A B;
  enum { T = P::THREADS, NP = P::PACKS, PK = P::PACK };
  static_assert(P::ALIGN && P::WIDTH == P::THREADS, "cluster rows: block width, aligned packs");
  enum { ONL = gk_online_b<Prog>::V && Prog::PASSES == 2 };
  __shared__ gk_row_cluster_shared<T, OpA, OpB, ONL> sh;
  int par = 0;
  for (Idx row = (Idx)blockIdx.x / CS; row < rows; row += (Idx)gridDim.x / CS, par ^= 1) {
    const gk_row_share<Idx> ss = gk_row_share_of<P, CS>(row, cols, pg, gk_cluster_rank());
    const Idx q0 = ss.q0, qn = ss.qn, ec = ss.ec, lead = ss.sp.lead;   /* this block's packs */
    X x[NP][PK], xe[1];
#pragma unroll
    for (int p = 0; p < NP; ++p) {
      const Idx q = (Idx)p * T + threadIdx.x;
      if (q < qn) pg.template load<PK>(x[p], row, lead + (q0 + q) * PK);
    }
    if (ss.ev) pg.template load<1>(xe, row, ec);
    A a = pg.opa.identity();
    if (ss.ev) a = pg.opa(a, pg.lift_a(xe[0], ec));
#pragma unroll
    for (int p = 0; p < NP; ++p) {
      const Idx q = (Idx)p * T + threadIdx.x, col = lead + (q0 + q) * PK;
      if (q < qn) a = gk_row_fold_pack<0, PK>(a, pg, pg.opa, x[p], col, 0);
    }
    /* pass B folds at af: the row's a, or under ONL this warp's (one cluster barrier a row) */
    B b = pg.opb.identity();
    A af;
    if constexpr (ONL) af = gk_warp_allreduce<32>(a, pg.opa);
    else af = a = gk_cluster_allreduce<CS, T>(a, pg.opa, sh.tsa, &sh.sa[par], sh.ca);
    if constexpr (Prog::PASSES == 2) {
      if (ss.ev) b = pg.opb(b, pg.lift_b(xe[0], ec, af));
#pragma unroll
      for (int p = 0; p < NP; ++p) {
        const Idx q = (Idx)p * T + threadIdx.x, col = lead + (q0 + q) * PK;
        if (q < qn) b = gk_row_fold_pack<1, PK>(b, pg, pg.opb, x[p], col, af);
      }
    }
    if constexpr (ONL) gk_cluster_pairs<CS, T / 32>(pg, sh.pr, par, af, gk_warp_allreduce<32>(b, pg.opb), a, b);
    else if constexpr (Prog::PASSES == 2) b = gk_cluster_allreduce<CS, T>(b, pg.opb, sh.tsb, &sh.sb[par], sh.cb);
    if constexpr (Prog::HAS_STORE) {
#pragma unroll
      for (int p = 0; p < NP; ++p) {
        const Idx q = (Idx)p * T + threadIdx.x;
        if (q < qn) pg.template store<PK>(row, lead + (q0 + q) * PK, x[p], a, b);
      }
      if (ss.ev) pg.template store<1>(row, ec, xe, a, b);
    }
    if (ss.rank == 0 && threadIdx.x == 0) pg.row_out(row, a, b);
  }
  gk_cluster_sync();   /* no block leaves while another may read its partials */
}

/* gk_row_cluster_smem<P, CS>: gk_row_cluster with each block's share of the
** row in dynamic shared memory instead of registers, so that registers no
** longer bound the blocks an SM holds: two blocks of ~100 KB each keep two
** rows of an SM going at once, one loading while the other reduces or
** stores (gk_row_cluster: one block of 1024 threads an SM, its row's
** phases one after another).  P::PACKS bounds the packs a thread holds (the
** loops stop at the block's share, so the text does not depend on the row
** length); G packs load at once.  Each thread reads back only the packs it
** wrote, so the data needs no barrier; the values are gk_row_cluster's (the
** same folds in the same order).  A share keeps Prog::XS of an element
** (Prog::to_s; Prog::from_s(s, row) gives the X back).  Dynamic shared
** memory: (packs a thread) x THREADS x PACK x sizeof(XS),
** gk_rows_plan_cluster_smem. */
/* A pack of a share back from shared memory (gk_row_cluster_smem). */
template <int PK, class Prog, class X, class XS, class Idx>
GK_DEV void gk_row_unshare(X *x, const XS *s, Idx row) {
  XS v[PK];
  gk_ld<PK>(v, s);
#pragma unroll
  for (int e = 0; e < PK; ++e) x[e] = Prog::from_s(v[e], row);
}
/* The rest of a row once this block's share is in shared memory at buf
** (pack q at buf + q * PACK, read back by thread q % THREADS) and its pass-A
** partial is in a: the row's pass A over the exchange ex, pass B from the
** share, the store and the row's outputs (gk_row_cluster_smem,
** gk_row_cluster_async, gk_row_grid). */
template <class P, class Prog, class XS, class Idx, class Ex>
GK_DEV void gk_row_share_rest(const Prog &pg, const XS *buf, const gk_row_share<Idx> &ss, Idx row,
                              const typename Prog::X *xe, typename Prog::OpA::A a, int par, Ex &ex) {
  typedef typename Prog::X X;
  typedef typename Prog::OpB::A B;
  enum { T = P::THREADS, PK = P::PACK };
  const Idx q0 = ss.q0, qn = ss.qn, ec = ss.ec, lead = ss.sp.lead;
  enum { ONL = gk_online_b<Prog>::V && Prog::PASSES == 2 };
  /* pass B folds at af: the row's a, or under ONL this warp's (one cluster barrier a row) */
  B b = pg.opb.identity();
  typename Prog::OpA::A af;
  if constexpr (ONL) af = gk_warp_allreduce<32>(a, pg.opa);
  else af = a = ex.all_a(pg, a, par);
  if constexpr (Prog::PASSES == 2) {
    if (ss.ev) b = pg.opb(b, pg.lift_b(xe[0], ec, af));
#pragma unroll 4
    for (Idx q = threadIdx.x; q < qn; q += T) {
      X x[PK];
      gk_row_unshare<PK, Prog>(x, buf + q * PK, row);
      b = gk_row_fold_pack<1, PK>(b, pg, pg.opb, x, lead + (q0 + q) * PK, af);
    }
  }
  if constexpr (ONL) ex.pairs(pg, par, af, gk_warp_allreduce<32>(b, pg.opb), a, b);
  else if constexpr (Prog::PASSES == 2) b = ex.all_b(pg, b, par);
  if constexpr (Prog::HAS_STORE) {
#pragma unroll 4
    for (Idx q = threadIdx.x; q < qn; q += T) {
      X x[PK];
      gk_row_unshare<PK, Prog>(x, buf + q * PK, row);
      pg.template store<PK>(row, lead + (q0 + q) * PK, x, a, b);
    }
    if (ss.ev) pg.template store<1>(row, ec, xe, a, b);
  }
  if (ss.rank == 0 && threadIdx.x == 0) pg.row_out(row, a, b);
}
/* This block's share ss of row into shared memory at xs (pack q at xs + q *
** PACK, from thread q % THREADS), G packs a thread loaded at once, and the
** share's pass-A fold with its element xe around the packs (block 0, ss.ev;
** loaded here): the block's partial of pass A in this thread. */
template <class P, class Prog, class XS, class Idx>
GK_DEV typename Prog::OpA::A gk_row_share_load(const Prog &pg, XS *xs, const gk_row_share<Idx> &ss, Idx row,
                                               typename Prog::X *xe) {
  typedef typename Prog::X X;
  enum { T = P::THREADS, NP = P::PACKS, PK = P::PACK, G = 4 };
  const Idx q0 = ss.q0, qn = ss.qn, ec = ss.ec, lead = ss.sp.lead;   /* this block's packs */
  if (ss.ev) pg.template load<1>(xe, row, ec);
  typename Prog::OpA::A a = pg.opa.identity();
  if (ss.ev) a = pg.opa(a, pg.lift_a(xe[0], ec));
  /* load G packs at once, fold them (pass A), keep them in shared memory */
  for (int p0 = 0; p0 < NP && (Idx)p0 * T < qn; p0 += G) {
    X x[G][PK];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const Idx q = (Idx)(p0 + g) * T + threadIdx.x;
      if (p0 + g < NP && q < qn) pg.template load<PK>(x[g], row, lead + (q0 + q) * PK);
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const Idx q = (Idx)(p0 + g) * T + threadIdx.x, col = lead + (q0 + q) * PK;
      if (p0 + g < NP && q < qn) {
        a = gk_row_fold_pack<0, PK>(a, pg, pg.opa, x[g], col, 0);
        XS v[PK];
#pragma unroll
        for (int e = 0; e < PK; ++e) v[e] = Prog::to_s(x[g][e]);
        gk_st<PK>(xs + ((p0 + g) * T + threadIdx.x) * PK, v);   /* 16-byte stores: no bank conflicts */
      }
    }
  }
  return a;
}
template <class P, int CS, class Prog, class Idx>
GK_DEV void gk_row_cluster_smem(Idx rows, Idx cols, const Prog &pg) {
  typedef typename Prog::X X;
  typedef typename Prog::OpA OpA; typedef typename OpA::A A;
  typedef typename Prog::OpB OpB;
  enum { T = P::THREADS };
  static_assert(P::ALIGN && P::WIDTH == P::THREADS, "cluster rows: block width, aligned packs");
  extern __shared__ __align__(16) unsigned char gk_row_smem[];
  typedef typename Prog::XS XS;                 /* what a share keeps of an element (Prog::to_s, from_s) */
  XS *xs = reinterpret_cast<XS *>(gk_row_smem);  /* pack p of thread t at xs + (p * T + t) * PK */
  typedef gk_row_cluster_shared<T, OpA, OpB, gk_online_b<Prog>::V && Prog::PASSES == 2> Sh;
  __shared__ Sh sh;
  gk_row_ex_cluster<CS, T, Prog, Sh> ex = {sh};
  int par = 0;
  for (Idx row = (Idx)blockIdx.x / CS; row < rows; row += (Idx)gridDim.x / CS, par ^= 1) {
    const gk_row_share<Idx> ss = gk_row_share_of<P, CS>(row, cols, pg, gk_cluster_rank());
    X xe[1];
    const A a = gk_row_share_load<P>(pg, xs, ss, row, xe);
    gk_row_share_rest<P>(pg, xs, ss, row, xe, a, par, ex);
  }
  gk_cluster_sync();   /* no block leaves while another may read its partials */
}

/* gk_row_cluster_async<P, CS>: gk_row_cluster_smem with the shares copied
** by cp.async (sm_80+) into two buffers, the next row's while this row is
** folded, reduced over the cluster and stored, so the memory system always
** has a whole share in flight a block and never waits for the cluster's
** barriers (gk_row_cluster_smem: 4 packs a thread in flight while loading,
** none while reducing).  The copies go straight to shared memory: no
** registers hold them.  Pack q of a block's share sits at buffer + q *
** PACK, copied and read back by thread q % THREADS only, so neither the
** data nor the buffer's reuse two rows later needs a barrier
** (cp.async.wait_group orders a thread's own copies).  The program gives
** the bytes: Prog::src_s(row, col), the XS elements of its one input at
** (row, col) (16-byte aligned packs), Prog::from_s as for the smem kernel.
** Dynamic shared memory: two buffers of the largest share (packs a block,
** rounded up to THREADS), gk_rows_plan_cluster_async; each buffer is half of
** it (%dynamic_smem_size).  Values: the folds of gk_row_cluster_smem with
** the same threads, in the same order. */
GK_DEV void gk_cp_async16(void *dst, const void *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
GK_DEV void gk_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
GK_DEV void gk_cp_async_wait1() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
GK_DEV unsigned gk_dynamic_smem() { unsigned n; asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n)); return n; }
template <class P, int CS, class Prog, class XS, class Idx>
GK_DEV void gk_row_share_fetch(XS *buf, Idx row, Idx cols, const Prog &pg, unsigned rank) {
  const gk_row_share<Idx> ss = gk_row_share_of<P, CS>(row, cols, pg, rank);
  for (Idx q = threadIdx.x; q < ss.qn; q += P::THREADS)
    gk_cp_async16(buf + q * P::PACK, pg.src_s(row, ss.sp.lead + (ss.q0 + q) * P::PACK));
}
template <class P, int CS, class Prog, class Idx>
GK_DEV void gk_row_cluster_async(Idx rows, Idx cols, const Prog &pg) {
  typedef typename Prog::X X;
  typedef typename Prog::OpA OpA; typedef typename OpA::A A;
  typedef typename Prog::OpB OpB;
  typedef typename Prog::XS XS;
  enum { T = P::THREADS, PK = P::PACK };
  static_assert(P::ALIGN && P::WIDTH == P::THREADS && PK * sizeof(XS) == 16, "async cluster rows: block width, 16-byte packs");
  extern __shared__ __align__(16) unsigned char gk_row_smem[];
  typedef gk_row_cluster_shared<T, OpA, OpB, gk_online_b<Prog>::V && Prog::PASSES == 2> Sh;
  __shared__ Sh sh;
  gk_row_ex_cluster<CS, T, Prog, Sh> ex = {sh};
  XS *const xs = reinterpret_cast<XS *>(gk_row_smem);
  const Idx half = (Idx)(gk_dynamic_smem() / (2 * sizeof(XS)));   /* elements a buffer */
  const unsigned rank = gk_cluster_rank();
  const Idx stride = (Idx)gridDim.x / CS;
  Idx row = (Idx)blockIdx.x / CS;
  if (row < rows) gk_row_share_fetch<P, CS>(xs, row, cols, pg, rank);
  gk_cp_async_commit();
  int par = 0;
  for (; row < rows; row += stride, par ^= 1) {
    XS *const cur = xs + (par ? half : 0);
    if (row + stride < rows) gk_row_share_fetch<P, CS>(xs + (par ? 0 : half), row + stride, cols, pg, rank);
    gk_cp_async_commit();
    const gk_row_share<Idx> ss = gk_row_share_of<P, CS>(row, cols, pg, rank);
    const Idx q0 = ss.q0, qn = ss.qn, ec = ss.ec, lead = ss.sp.lead;   /* this block's packs */
    X xe[1];
    if (ss.ev) pg.template load<1>(xe, row, ec);
    gk_cp_async_wait1();   /* this thread's packs of `row` have landed */
    A a = pg.opa.identity();
    if (ss.ev) a = pg.opa(a, pg.lift_a(xe[0], ec));
#pragma unroll 4
    for (Idx q = threadIdx.x; q < qn; q += T) {
      X x[PK];
      gk_row_unshare<PK, Prog>(x, cur + q * PK, row);
      a = gk_row_fold_pack<0, PK>(a, pg, pg.opa, x, lead + (q0 + q) * PK, 0);
    }
    gk_row_share_rest<P>(pg, cur, ss, row, xe, a, par, ex);
  }
  gk_cp_async_wait1();
  gk_cluster_sync();   /* no block leaves while another may read its partials */
}

/* ---- a row over S blocks anywhere in the grid (GK_ROWS_GRID) --------------
** gk_row_grid<P, SP>: few long rows, where a block or a cluster a row would
** leave most SMs idle.  Grid (S, groups): block (s, y) keeps share s of S =
** gridDim.x (gk_row_share_in) of rows y, y + gridDim.y, ... in dynamic
** shared memory as gk_row_cluster_smem does (gk_row_share_load,
** gk_row_share_rest), and the S blocks of a row meet through global memory
** (gk_row_ex_grid): each writes its pass partial (under ONLINE_B its
** block's pair) to its slot, arrives at its group's barrier and, once all S
** have, folds the S slots itself: slot i by thread i % THREADS in slot
** order, then gk_block_reduce's fixed tree, so every block of the row holds
** the same bits, run after run (integer atomics only).  Slots alternate by
** the row's parity as the cluster kernels' do.
** The barrier (gk_row_grid_sync) is a count and a generation: the last
** block to arrive puts the count back to 0 and then bumps the generation;
** the others poll the generation (ld.acquire, nanosleep).  The count is 0
** when the buffer is first zeroed and again after every barrier, so the
** buffer is reusable launch after launch without clearing.
** Every block of the grid must be resident at once (a block waits for the
** other blocks of its row): the host launches cooperatively
** (cu_launch_coop), which either makes them resident or fails, and the plan
** (gk_rows_plan_grid) asks for no more blocks than fit.  Where the device
** cannot have them all at once the host launches (1, groups) instead, and
** gridDim.x == 1 streams each row with one block (gk_row_stream_rows,
** policy SP): nothing ever waits for a block that cannot run.
** tmp: gk_row_grid_stride(S, sizeof slot) bytes a group (launch.h
** gk_rows_grid_temp sizes it; ORDER): the barrier's 16 bytes, then 2 x S
** slots. */
template <class A, class B> struct gk_row_grid_slot { A a; B b; };
GK_DEV unsigned long long gk_row_grid_stride(unsigned n, unsigned long long slot) {
  return 16 + ((2ull * n * slot + 15) & ~15ull);
}
GK_DEV unsigned gk_ld_acquire_u32(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
GK_DEV void gk_row_grid_nap(unsigned ns) { asm volatile("nanosleep.u32 %0;" ::"r"(ns)); }
/* The n blocks of a row meet at bar (count, generation): every block's
** writes before are seen by every block's threads after. */
GK_DEV void gk_row_grid_sync(unsigned *bar, unsigned n) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned g0 = gk_ld_acquire_u32(bar + 1);   /* before arriving: the generation this barrier ends */
    __threadfence();                                  /* the block's slot is written before it arrives */
    if (atomicAdd(bar, 1u) == n - 1) {
      atomicExch(bar, 0u);
      __threadfence();
      atomicAdd(bar + 1, 1u);
    } else {
      unsigned ns = 32;
      while (gk_ld_acquire_u32(bar + 1) == g0) {
        gk_row_grid_nap(ns);
        if (ns < 256) ns *= 2;
      }
    }
    __threadfence();
  }
  __syncthreads();
}
template <int T, class Prog> struct gk_row_grid_shared {
  typename gk_block_reduce<T, typename Prog::OpA>::TempStorage tsa;
  typename gk_block_reduce<T, typename Prog::OpB>::TempStorage tsb;
  gk_row_pairs<T / 32, typename Prog::OpA::A, typename Prog::OpB::A> pr;
};
/* The exchange (THE EXCHANGE above) of n blocks through global memory: the
** barrier bar, the slots slot[2][n]; this block is slot rank. */
template <int T, class Prog> struct gk_row_ex_grid {
  typedef typename Prog::OpA OpA; typedef typename OpA::A A;
  typedef typename Prog::OpB OpB; typedef typename OpB::A B;
  typedef gk_row_grid_slot<A, B> Slot;
  gk_row_grid_shared<T, Prog> &sh;
  unsigned *bar;
  Slot *slot;
  unsigned n, rank;
  /* a pass's value of the row: this block's into its slot's field F, the barrier, then the n slots' folded
  ** by every block alike (thread i % T in slot order, the block's fixed tree) */
  template <class Op, class V, class TS>
  GK_DEV V all(const Op &op, TS &ts, V v, V Slot::*f, int par) {
    v = gk_block_reduce<T, Op>(ts).reduce(v, op);
    if (threadIdx.x == 0) gk_st_cg(&(slot[par * n + rank].*f), v);
    gk_row_grid_sync(bar, n);
    V t = op.identity();
    for (unsigned i = threadIdx.x; i < n; i += T) t = op(t, gk_ld_cg(&(slot[par * n + i].*f)));
    return gk_block_reduce<T, Op>(ts).reduce_all(t, op);
  }
  GK_DEV A all_a(const Prog &pg, A v, int par) { return all(pg.opa, sh.tsa, v, &Slot::a, par); }
  GK_DEV B all_b(const Prog &pg, B v, int par) { return all(pg.opb, sh.tsb, v, &Slot::b, par); }
  /* ONLINE_B: the block's warps' pairs into the block's (gk_row_pairs_block),
  ** that one to the slot, then the n pairs folded as gk_row_pairs_fold does
  ** (a first, then each b rescaled to it), by the block's threads */
  GK_DEV void pairs(const Prog &pg, int par, const A &aw, const B &bw, A &a, B &b) {
    A ab;
    B bb;
    gk_row_pairs_block<T / 32>(pg, sh.pr, par, aw, bw, ab, bb);
    if (threadIdx.x == 0) { gk_st_cg(&slot[par * n + rank].a, ab); gk_st_cg(&slot[par * n + rank].b, bb); }
    gk_row_grid_sync(bar, n);
    A al = pg.opa.identity();
    for (unsigned i = threadIdx.x; i < n; i += T) al = pg.opa(al, gk_ld_cg(&slot[par * n + i].a));
    a = gk_block_reduce<T, OpA>(sh.tsa).reduce_all(al, pg.opa);
    B bl = pg.opb.identity();
    for (unsigned i = threadIdx.x; i < n; i += T)
      bl = pg.opb(bl, pg.rescale_b(gk_ld_cg(&slot[par * n + i].b), gk_ld_cg(&slot[par * n + i].a), a));
    b = gk_block_reduce<T, OpB>(sh.tsb).reduce_all(bl, pg.opb);
  }
};
template <class P, class SP, class Prog, class Idx>
GK_DEV void gk_row_grid(Idx rows, Idx cols, const Prog &pg, unsigned char *tmp) {
  typedef typename Prog::X X;
  typedef typename Prog::OpA::A A;
  typedef typename Prog::XS XS;
  enum { T = P::THREADS };
  static_assert(P::ALIGN && P::WIDTH == P::THREADS, "grid rows: block width, aligned packs");
  static_assert((int)SP::THREADS == (int)P::THREADS, "grid rows: the fallback's block is the same");
  if (gridDim.x == 1) {   /* the device could not hold the grid at once (cu_launch_coop) */
    gk_row_stream_rows<SP>(rows, cols, pg, (Idx)blockIdx.y, (Idx)gridDim.y);
    return;
  }
  extern __shared__ __align__(16) unsigned char gk_row_smem[];
  XS *const xs = reinterpret_cast<XS *>(gk_row_smem);
  __shared__ gk_row_grid_shared<T, Prog> sh;
  typedef gk_row_ex_grid<T, Prog> Ex;
  unsigned char *const base = tmp + blockIdx.y * gk_row_grid_stride(gridDim.x, sizeof(typename Ex::Slot));
  Ex ex = {sh, reinterpret_cast<unsigned *>(base), reinterpret_cast<typename Ex::Slot *>(base + 16), gridDim.x, blockIdx.x};
  int par = 0;
  for (Idx row = blockIdx.y; row < rows; row += gridDim.y, par ^= 1) {
    const gk_row_share<Idx> ss = gk_row_share_in<P>(row, cols, pg, blockIdx.x, (Idx)gridDim.x);
    X xe[1];
    const A a = gk_row_share_load<P>(pg, xs, ss, row, xe);
    gk_row_share_rest<P>(pg, xs, ss, row, xe, a, par, ex);
  }
}

/* A column chunk of a row program seen as a row of its own (gk_row_split). */
template <class Prog, class Idx> struct gk_row_shift_ {
  const Prog &pg; Idx c0;
  typedef typename Prog::X X;
  template <int N> GK_DEV void load(X *d, Idx r, Idx c) const { pg.template load<N>(d, r, c + c0); }
  GK_DEV Idx phase(Idx r) const { return pg.phase(r) + c0; }   /* gk_row_span_of takes it % PACK */
  GK_DEV typename Prog::OpA::A lift_a(X x, Idx c) const { return pg.lift_a(x, c + c0); }
  enum { PACK_A = gk_pack_a<Prog>::V };
  template <int N> GK_DEV typename Prog::OpA::A lift_a_pack(const X *x, Idx c) const { return pg.template lift_a_pack<N>(x, c + c0); }
  template <class AA> GK_DEV typename Prog::OpB::A lift_b(X, Idx, const AA &) const { return typename Prog::OpB::A(); }
};

/* Several blocks per row for pure one-pass row reductions.  Grid: (splits,
** min(rows, 65535)); block (s, y) folds the s-th of `splits` equal column
** chunks of rows y, y + gridDim.y, ...  Temp: partials[rows * splits] of
** OpA::A (no init), counters[rows] of gk_u32 zero before the first launch
** (left zero).  splits == 1 needs no temp. */
template <class P, class Prog, class Idx>
GK_DEV void gk_row_split(Idx rows, Idx cols, const Prog &pg, typename Prog::OpA::A *partials, gk_u32 *counters) {
  typedef typename Prog::OpA OpA; typedef typename OpA::A A;
  typedef typename Prog::OpB OpB; typedef typename OpB::A B;
  enum { T = P::THREADS };
  __shared__ typename gk_block_reduce<T, OpA>::TempStorage tsa;
  __shared__ int is_last;
  const Idx splits = gridDim.x;
  const Idx chunk = gk_cdiv(gk_cdiv(cols, splits), (Idx)(T * P::PACK * P::PACKS)) * (T * P::PACK * P::PACKS);
  const Idx c0 = chunk * blockIdx.x;
  const Idx c1 = c0 + chunk < cols ? c0 + chunk : cols;
  for (Idx row = blockIdx.y; row < rows; row += gridDim.y) {
    gk_row_shift_<Prog, Idx> sv = {pg, c0};
    A a = c1 > c0 ? gk_row_stream_pass<P, 0>(row, c1 - c0, sv, pg.opa, 0, tsa) : pg.opa.identity();
    if (splits == 1) {
      if (threadIdx.x == 0) pg.row_out(row, a, pg.opb.identity());
      continue;
    }
    if (threadIdx.x == 0) {
      gk_st_cg(partials + row * splits + blockIdx.x, a);
      __threadfence();
      is_last = atomicAdd(counters + row, 1u) == (unsigned)(splits - 1);
    }
    __syncthreads();
    if (is_last) {
      __threadfence();
      if (threadIdx.x < 32) {
        A v = pg.opa.identity();
        for (Idx s = threadIdx.x; s < splits; s += 32) v = pg.opa(v, gk_ld_cg(partials + row * splits + s));
        v = gk_warp_reduce<32>(v, pg.opa);
        if (threadIdx.x == 0) { pg.row_out(row, v, pg.opb.identity()); counters[row] = 0; }
      }
    }
    __syncthreads();
  }
}

/* ---- short rows through shared memory (gk_row_tile) ----------------------
** Rows of a few dozen elements or fewer, a row a thread.  A block takes the
** P::THREADS rows from row blockIdx.x * THREADS -- contiguous in memory, since
** the one input's row stride is cols (Prog::src_s) -- into shared memory
** with 16-byte loads, each thread folds and stores its own row from there,
** and the per-element output (at most one, Prog::store_s / Prog::dst_s) goes
** back the same way with 16-byte stores: every global access whole, where
** the warp mode gives rows of 10 a quarter of a warp's lanes and 8-byte
** loads that straddle rows.  A row sits at a pitch of cols | 1 elements, so
** the threads of a warp reading column c of their rows hit 32 banks.
**   Prog: XS, from_s, src_s (the input's elements at (row, col)); with a
**   store also YS (the output's element) and
**     template <int N> void store_s(YS *v, Idx row, Idx col, const X *x, const OpA::A &a, const OpB::A &b) const;
**     YS *dst_s(Idx row, Idx col) const;
** Dynamic shared memory: THREADS x (cols | 1) x (sizeof(XS) + sizeof(YS)),
** 16-aligned between the two (gk_rows_plan_tile).  Both arrays 16-byte
** aligned (the host's vec_ok).  One tile a block: no grid-stride loop. */
template <class Prog, class = void> struct gk_tile_ys { typedef char T; };
template <class Prog> struct gk_tile_ys<Prog, decltype((void)sizeof(typename Prog::YS))> { typedef typename Prog::YS T; };
/* ne elements of a tile between global g (contiguous, 16-byte aligned) and
** shared s (row pitch `pitch`): IN true copies g -> s, else s -> g. */
template <int T, bool IN, class E>
GK_DEV void gk_tile_move(E *g, E *s, int ne, int cols, int pitch) {
  enum { V = 16 / sizeof(E) };
  const int nv = ne / V;
  for (int q = threadIdx.x; q < nv; q += T) {
    int r = q * V / cols, c = q * V - r * cols;
    E v[V];
    if (IN) gk_ld<V>(v, g + q * V);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (IN) s[r * pitch + c] = v[k]; else v[k] = s[r * pitch + c];
      if (++c == cols) { c = 0; ++r; }
    }
    if (!IN) gk_st<V>(g + q * V, v);
  }
  for (int e = nv * V + threadIdx.x; e < ne; e += T) {
    const int r = e / cols, c = e - r * cols;
    if (IN) s[r * pitch + c] = g[e]; else g[e] = s[r * pitch + c];
  }
}
/* A pass over a row of nc elements at xr in shared memory: packs of 4, then one by one. */
template <int PASS, class Prog, class Op, class XS, class Idx, class AA>
GK_DEV typename Op::A gk_tile_fold(const Prog &pg, const Op &op, const XS *xr, int nc, Idx row, const AA &a) {
  typedef typename Prog::X X;
  typename Op::A acc = op.identity();
  const int body = nc & ~3;
  for (int c = 0; c < body; c += 4) {
    X x[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) x[k] = Prog::from_s(xr[c + k], row);
    acc = gk_row_fold_pack<PASS, 4>(acc, pg, op, x, (Idx)c, a);
  }
  for (int c = body; c < nc; ++c) { X x[1] = {Prog::from_s(xr[c], row)}; acc = gk_row_fold_pack<PASS, 1>(acc, pg, op, x, (Idx)c, a); }
  return acc;
}
template <class P, class Prog, class Idx>
GK_DEV void gk_row_tile(Idx rows, Idx cols, const Prog &pg) {
  typedef typename Prog::X X;
  typedef typename Prog::XS XS;
  typedef typename gk_tile_ys<Prog>::T YS;
  typedef typename Prog::OpA::A A; typedef typename Prog::OpB::A B;
  enum { T = P::THREADS };
  static_assert(sizeof(XS) >= 4 && 16 % sizeof(XS) == 0 && 16 % sizeof(YS) == 0, "gk_row_tile: 4-, 8- or 16-byte elements");
  extern __shared__ __align__(16) unsigned char gk_row_smem[];
  const int nc = (int)cols, pitch = nc | 1;
  XS *const xs = reinterpret_cast<XS *>(gk_row_smem);
  YS *const ys = reinterpret_cast<YS *>(gk_row_smem + ((T * pitch * (int)sizeof(XS) + 15) & ~15));
  const Idx r0 = (Idx)blockIdx.x * T;
  if (r0 >= rows) return;
  const int nr = rows - r0 < (Idx)T ? (int)(rows - r0) : T;
  gk_tile_move<T, true>(const_cast<XS *>(pg.src_s(r0, 0)), xs, nr * nc, nc, pitch);
  __syncthreads();
  const int t = threadIdx.x;
  const Idx row = r0 + t;
  if (t < nr) {
    const XS *xr = xs + t * pitch;
    const A a = gk_tile_fold<0>(pg, pg.opa, xr, nc, row, 0);
    B b = pg.opb.identity();
    if constexpr (Prog::PASSES == 2) b = gk_tile_fold<1>(pg, pg.opb, xr, nc, row, a);
    if constexpr (Prog::HAS_STORE) {
      YS *yr = ys + t * pitch;
      for (int c = 0; c < nc; ++c) { X x[1] = {Prog::from_s(xr[c], row)}; pg.template store_s<1>(yr + c, row, (Idx)c, x, a, b); }
    }
    pg.row_out(row, a, b);
  }
  if constexpr (Prog::HAS_STORE) {
    __syncthreads();
    gk_tile_move<T, false>(pg.dst_s(r0, 0), ys, nr * nc, nc, pitch);
  }
}

/* ---- per-row scan --------------------------------------------------------
** A group of P::WIDTH threads (<= 32, or == THREADS for block per row) walks
** the row in chunks of WIDTH * PACKS * PACK, each thread scanning its
** IT = PACKS * PACK consecutive elements, the group scanning the thread
** totals, and a carry crossing chunks.  With whole warps per row and several
** packs a thread, the chunk goes through shared memory (one buffer per
** warp, a pad word every 32): loads and stores are warp-striped (each pack
** instruction covers 32 * PACK consecutive elements), the scan sees IT
** consecutive elements a lane, and only the elements stay in registers (the
** lane total is one left fold, the outputs a second fold from the lane's
** prefix).  Functors: Load as for row programs (typedef X;
** load<N>(dst,row,col)), Op (gk_common.cuh), Store: template <int N> void
** store(Idx row, Idx col, const typename Op::A *v) const.  The combination
** order is fixed by the policy, so results are the same bits run to run.
** P::BATCH == 2 (staged chunks only): the next chunk's loads are issued
** before the current chunk is scanned and stored (two chunks in flight a
** warp); the same values. */
GK_DEV int gk_pad32(int e) { return e + (e >> 5); }
/* the PK elements of a row at cc (those before cols; cc < cols) */
template <int PK, class Load, class X, class Idx>
GK_DEV void gk_row_scan_ld(const Load &load, X *v, Idx row, Idx cc, Idx cols) {
  if (cc + PK <= cols) load.template load<PK>(v, row, cc);
  else {
#pragma unroll
    for (int k = 0; k < PK; ++k) if (cc + k < cols) load.template load<1>(v + k, row, cc + k);
  }
}

template <class P, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_row_scan(Idx rows, Idx cols, const Load &load, const Op &op, const Store &store) {
  typedef typename Op::A A;
  typedef typename Load::X X;
  enum { W = P::WIDTH, PK = P::PACK, NP = P::PACKS, IT = P::PACKS * P::PACK, G = P::GROUPS,
         STAGE = W == 32 && P::PACKS > 1,
         SZ = sizeof(A) > sizeof(X) ? sizeof(A) : sizeof(X),
         SE = 32 * IT + IT,                                        /* staged elements a warp, padded */
         SBYTES = STAGE ? (P::THREADS / 32) * SE * SZ : 16 };
  __shared__ typename gk_block_scan<P::THREADS, Op>::TempStorage ts;
  __shared__ alignas(16) unsigned char stg[SBYTES];
  const int g = threadIdx.x / W, t = threadIdx.x % W;
  enum { PRE = STAGE && P::BATCH > 1 };
  for (Idx row0 = (Idx)blockIdx.x * G; row0 < rows; row0 += (Idx)gridDim.x * G) {
    const Idx row = row0 + g;
    const bool rv = row < rows;
    A carry = op.identity();
    X nx[PRE ? NP : 1][PK];   /* PRE: the chunk at base, loaded one chunk ahead */
    if constexpr (PRE) {
#pragma unroll
      for (int p = 0; p < NP; ++p)
        if (rv && (Idx)(p * 32 + t) * PK < cols) gk_row_scan_ld<PK>(load, nx[p], row, (Idx)(p * 32 + t) * PK, cols);
    }
    for (Idx base = 0; base < cols; base += (Idx)W * IT) {
      const Idx col = base + (Idx)t * IT;
      if constexpr (STAGE) {
        X *sx = reinterpret_cast<X *>(stg + (threadIdx.x >> 5) * SE * SZ);
        A *sa = reinterpret_cast<A *>(stg + (threadIdx.x >> 5) * SE * SZ);
#pragma unroll
        for (int p = 0; p < NP; ++p) {
          const int e = (p * 32 + t) * PK;
          const Idx cc = base + e;
          if (rv && cc < cols) {
            X v[PK];
            if constexpr (PRE) {
#pragma unroll
              for (int k = 0; k < PK; ++k) v[k] = nx[p][k];
            } else gk_row_scan_ld<PK>(load, v, row, cc, cols);
#pragma unroll
            for (int k = 0; k < PK; ++k) sx[gk_pad32(e + k)] = v[k];
          }
        }
        if constexpr (PRE) {
          const Idx nb = base + (Idx)W * IT;
#pragma unroll
          for (int p = 0; p < NP; ++p) {
            const Idx cc = nb + (Idx)(p * 32 + t) * PK;
            if (rv && cc < cols) gk_row_scan_ld<PK>(load, nx[p], row, cc, cols);
          }
        }
        __syncwarp();
        X x[IT];
#pragma unroll
        for (int i = 0; i < IT; ++i) x[i] = sx[gk_pad32(t * IT + i)];
        __syncwarp();   /* sa overwrites sx */
        A a = op.identity();
#pragma unroll
        for (int i = 0; i < IT; ++i) if (rv && col + i < cols) a = op(a, op.lift(x[i], col + i));
        A tot;
        const A ex = gk_warp_scan_excl<32>(a, op, &tot);
        A pc = op(carry, ex);
#pragma unroll
        for (int i = 0; i < IT; ++i)
          if (rv && col + i < cols) {
            const A n = op(pc, op.lift(x[i], col + i));
            sa[gk_pad32(t * IT + i)] = EXCLUSIVE ? pc : n;
            pc = n;
          }
        __syncwarp();
#pragma unroll
        for (int p = 0; p < NP; ++p) {
          const int e = (p * 32 + t) * PK;
          const Idx cc = base + e;
          if (rv && cc < cols) {
            A o[PK];
#pragma unroll
            for (int k = 0; k < PK; ++k) o[k] = sa[gk_pad32(e + k)];
            if (cc + PK <= cols) store.template store<PK>(row, cc, o);
            else {
#pragma unroll
              for (int k = 0; k < PK; ++k) if (cc + k < cols) store.template store<1>(row, cc + k, o + k);
            }
          }
        }
        __syncwarp();   /* the next chunk's sx overwrites sa */
        carry = op(carry, tot);
      } else {
        A a[IT];
        {
          X x[IT];
          if (rv && col < cols) {
            if (col + IT <= cols) {
#pragma unroll
              for (int p = 0; p < NP; ++p) load.template load<PK>(x + p * PK, row, col + p * PK);
            } else {
#pragma unroll
              for (int k = 0; k < IT; ++k) if (col + k < cols) load.template load<1>(x + k, row, col + k);
            }
          }
#pragma unroll
          for (int k = 0; k < IT; ++k) {
            const A v = rv && col + k < cols ? op.lift(x[k], col + k) : op.identity();
            a[k] = k == 0 ? v : op(a[k - 1], v);
          }
        }
        A tot, ex;
        if (W <= 32) ex = gk_warp_scan_excl<(W <= 32 ? W : 32)>(a[IT - 1], op, &tot);
        else ex = gk_block_scan<P::THREADS, Op>(ts).exclusive(a[IT - 1], op, &tot);
        const A pre = op(carry, ex);
        if (rv && col < cols) {
          if (col + IT <= cols) {
#pragma unroll
            for (int p = 0; p < NP; ++p) {
              A o[PK];
#pragma unroll
              for (int k = 0; k < PK; ++k) {
                const int q = p * PK + k;
                o[k] = EXCLUSIVE ? (q == 0 ? pre : op(pre, a[q - 1])) : op(pre, a[q]);
              }
              store.template store<PK>(row, col + p * PK, o);
            }
          } else {
#pragma unroll
            for (int k = 0; k < IT; ++k)
              if (col + k < cols) {
                const A o = EXCLUSIVE ? (k == 0 ? pre : op(pre, a[k - 1])) : op(pre, a[k]);
                store.template store<1>(row, col + k, &o);
              }
          }
        }
        carry = op(carry, tot);
      }
    }
  }
}

#endif /* GK_ROWS_CUH */
