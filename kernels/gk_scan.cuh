/*
** gk_scan.cuh -- single-pass prefix scan with decoupled look-back
** (Merrill & Garland, as in CUB's agent_scan / single_pass_scan_operators),
** arranged so that floating-point results are bit-identical run to run.
**
** Each block scans one tile of Policy::TILE elements.  Tiles form groups of
** 32 (GK_LB_GROUP).  The exclusive prefix of tile t = 32g + j is defined as
**
**     excl(t) = GP(g) (+) W(g, t)
**     W(g, t) = agg(32g) (+) ... (+) agg(t-1)            left fold, in order
**     GP(g+1) = GP(g) (+) GA(g),  GA(g) = W(g, 32g+32)   left fold over groups
**
** (GP(0) and an empty W are absent, not identity, so no extra operation is
** applied).  That is one fixed combination tree whatever the timing, so the
** look-back may take any published prefix it finds and the result is the
** same bits.  The expensive sequential part of a deterministic look-back --
** folding the aggregates from the nearest published prefix forward -- runs
** over at most 31 tiles and 31 groups, never over the whole distance the
** prefix front lags behind.
**
** Tile state: one descriptor per tile (its aggregate) and one per group (GA,
** later replaced by the group's inclusive prefix GP(g+1)).  A descriptor is
** the value's 32-bit words, each paired with a 32-bit tag (epoch << 2 |
** status) in one 64-bit entry, written with one relaxed 8- or 16-byte store
** and read with one relaxed load: a reader sees each entry whole, accepts a
** descriptor only when every tag is equal and of this epoch, and so never
** needs a fence between value and flag (CUB packs status and value the same
** way).  A buffer zeroed once reads as all-invalid; each launch that reuses
** it passes an epoch different from the previous launch's (the host counts
** 1, 2, ... wrapping below 2^30; launch.h gk_next_epoch).
**
** Functor contracts:
**   Load : typedef X; template <int N> void load(X *dst, Idx i) const;  (N = 1)
**   Op   : gk_common.cuh contract; associative (need not be commutative).
**   Store: template <int N> void store(Idx i, const Y *v) const;  (N = 1), where
**          Y is Store::Y if the Store declares it (typedef Y: the type the
**          output is stored in; the scan converts each accumulator to Y
**          before the transpose through shared memory, so an f32 scan with
**          an f64 accumulator moves 4-byte values, in one round), else Op::A.
** Output element i is op(lift(x0),...,lift(xi)) (inclusive) or the same up to
** i-1 with identity first (exclusive).
*/
#ifndef GK_SCAN_CUH
#define GK_SCAN_CUH
#include "gk_reduce.cuh"

/* THREADS x ITEMS elements per tile; SLEEP: ns a polling warp waits between
** unsuccessful polls (0: spin); GW: lanes that look back over group
** descriptors per step (32; tests use 1 to force the multi-window path);
** WIDE: the shared buffer holds every warp's span of 8-byte values (an i32
** scan's i64 output leaves in one round, not two; 2x the shared memory). */
template <int THREADS_, int ITEMS_, int SLEEP_ = 0, int GW_ = 32, int WIDE_ = 0> struct gk_scan_policy {
  enum { THREADS = THREADS_, ITEMS = ITEMS_, TILE = THREADS_ * ITEMS_, SLEEP = SLEEP_, GW = GW_, WIDE = WIDE_ };
};
typedef gk_scan_policy<256, 32> gk_scan_policy_default;   /* 8192 per tile; launch.h GK_SCAN_* */

#define GK_LB_GROUP 32      /* tiles per look-back group (one warp's lanes) */
#define GK_LB_AGG 1u        /* descriptor holds an aggregate (tile: agg; group: GA) */
#define GK_LB_PRE 2u        /* group descriptor holds the inclusive prefix GP(g+1) */

/* ---- descriptors ---------------------------------------------------------- */
GK_DEV void gk_st_relaxed(gk_u64 *p, gk_u64 a) {
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(a) : "memory");
}
GK_DEV void gk_st_relaxed2(gk_u64 *p, gk_u64 a, gk_u64 b) {
  asm volatile("st.relaxed.gpu.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
GK_DEV gk_u64 gk_ld_relaxed(const gk_u64 *p) {
  gk_u64 a;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(a) : "l"(p) : "memory");
  return a;
}
GK_DEV void gk_ld_relaxed2(const gk_u64 *p, gk_u64 &a, gk_u64 &b) {
  asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}
GK_DEV void gk_nanosleep(unsigned ns) { asm volatile("nanosleep.u32 %0;" ::"r"(ns)); }

/* Descriptor codec for accumulator A: ENT 64-bit entries (tag | word << 32).
** Size per descriptor: launch.h gk_tile_state_bytes's per-tile term. */
template <class A> struct gk_lb_desc {
  enum { WORDS = (int)((sizeof(A) + 3) / 4), ENT = WORDS == 1 ? 1 : (WORDS + 1) / 2 * 2, BYTES = 8 * ENT };
  union U { A a; gk_u32 w[ENT]; GK_DEV U() {} };
  static GK_DEV void put(gk_u64 *d, gk_u32 tag, const A &v) {
    U u;
#pragma unroll
    for (int k = 0; k < ENT; ++k) u.w[k] = 0;
    u.a = v;
    if (ENT == 1) {
      gk_st_relaxed(d, (gk_u64)tag | (gk_u64)u.w[0] << 32);
    } else {
#pragma unroll
      for (int k = 0; k < ENT; k += 2)
        gk_st_relaxed2(d + k, (gk_u64)tag | (gk_u64)u.w[k] << 32, (gk_u64)tag | (gk_u64)u.w[k + 1] << 32);
    }
  }
  /* The descriptor's tag, or 0 if its entries came from different stores. */
  static GK_DEV gk_u32 get(const gk_u64 *d, A &v) {
    gk_u64 e[ENT];
    if (ENT == 1) e[0] = gk_ld_relaxed(d);
    else {
#pragma unroll
      for (int k = 0; k < ENT; k += 2) gk_ld_relaxed2(d + k, e[k], e[k + 1]);
    }
    U u;
    gk_u32 tag = (gk_u32)e[0];
    bool same = true;
#pragma unroll
    for (int k = 0; k < ENT; ++k) { u.w[k] = (gk_u32)(e[k] >> 32); same &= (gk_u32)e[k] == tag; }
    v = u.a;
    return same ? tag : 0u;
  }
};

/* Views into the tile-state buffer: tile descriptors [ntiles], then group
** descriptors [ceil(ntiles / 32)], each array 16-byte aligned.  ntiles is the
** count the host sized the buffer with (gk_scan: gridDim.x; gk_row_scan_lb:
** a row's tiles). */
template <class A> struct gk_tile_state {
  gk_u64 *tile, *group;
  /* bytes of n descriptors, 16-byte aligned: tiles, then groups */
  static GK_DEV gk_i64 span(gk_i64 n) { return (n * gk_lb_desc<A>::BYTES + 15) / 16 * 16; }
  static GK_DEV gk_i64 bytes(gk_i64 ntiles) { return span(ntiles) + span((ntiles + GK_LB_GROUP - 1) / GK_LB_GROUP); }
  GK_DEV gk_tile_state(void *buf, gk_i64 ntiles) {
    char *p = (char *)buf;
    tile = (gk_u64 *)p;
    group = (gk_u64 *)(p + span(ntiles));
  }
  GK_DEV gk_u64 *tdesc(gk_i64 t) const { return tile + t * gk_lb_desc<A>::ENT; }
  GK_DEV gk_u64 *gdesc(gk_i64 g) const { return group + g * gk_lb_desc<A>::ENT; }
};

GK_DEV bool gk_lb_valid(gk_u32 tag, gk_u32 ep) { return (tag & ~3u) == ep && (tag & 3u) != 0; }

/* Wait until this lane's descriptor (if `need`) and every other lane's are
** valid; *tag and *v hold the first valid read. */
template <int SLEEP, class A>
GK_DEV void gk_lb_poll(const gk_u64 *d, bool need, gk_u32 ep, gk_u32 *tag, A *v) {
  *tag = 0;
  for (;;) {
    if (need && !gk_lb_valid(*tag, ep)) *tag = gk_lb_desc<A>::get(d, *v);
    if (__all_sync(GK_FULL_MASK, !need || gk_lb_valid(*tag, ep))) return;
    if (SLEEP > 0) gk_nanosleep(SLEEP);
  }
}

/* Group look-back beyond the first window (the prefix front lags more than
** GW groups): slide back GW groups at a time to the nearest group p with a
** published prefix (group 0's GA is its prefix), then fold forward from p to
** g-1.  A group that has meanwhile switched to PRE is taken as the restart
** value -- it holds exactly the left fold the loop would compute. */
template <class P, class Op>
GK_DEV typename Op::A gk_lb_far(const gk_tile_state<typename Op::A> &st, gk_i64 g, const Op &op, gk_u32 ep) {
  typedef typename Op::A A;
  const int lane = gk_lane();
  gk_i64 top = g - 1 - P::GW;               /* group polled by lane 0 */
  gk_i64 p;
  for (;;) {
    const gk_i64 q = top - lane;
    const bool need = lane < P::GW && q >= 0;
    gk_u32 tag; A v;
    gk_lb_poll<P::SLEEP>(st.gdesc(need ? q : 0), need, ep, &tag, &v);
    const unsigned pm = __ballot_sync(GK_FULL_MASK, need && ((tag & 3u) == GK_LB_PRE || q == 0));
    if (pm) { p = top - (__ffs(pm) - 1); break; }
    top -= P::GW;
  }
  A acc = op.identity();
  for (gk_i64 q0 = p; q0 < g; q0 += 32) {
    const gk_i64 q = q0 + lane;
    const bool need = q < g;
    gk_u32 tag; A v;
    gk_lb_poll<P::SLEEP>(st.gdesc(need ? q : 0), need, ep, &tag, &v);
    const bool pre = (tag & 3u) == GK_LB_PRE || q == 0;
#pragma unroll
    for (int k = 0; k < 32; ++k) {
      const A x = gk_shfl(v, k);
      const bool xpre = __shfl_sync(GK_FULL_MASK, pre, k);
      if (q0 + k < g) acc = (xpre || q0 + k == p) ? x : op(acc, x);
    }
  }
  return acc;
}

/* Called by all 32 lanes of ONE warp of the block owning `tile`, once the
** tile's aggregate is known.  Publishes what later tiles need and returns
** the tile's exclusive prefix (all lanes; identity for tile 0, which the
** caller must not apply). */
template <class P, class Op, class Idx>
GK_DEV typename Op::A gk_lookback(void *tile_state, Idx ntiles, Idx tile, typename Op::A agg, const Op &op,
                                  gk_u32 epoch) {
  typedef typename Op::A A;
  typedef gk_lb_desc<A> D;
  const gk_tile_state<A> st(tile_state, (gk_i64)ntiles);
  const int lane = gk_lane();
  const gk_u32 ep = epoch << 2;
  const gk_i64 t = (gk_i64)tile, g = t / GK_LB_GROUP;
  const int j = (int)(t % GK_LB_GROUP);
  const bool last_of_group = j == GK_LB_GROUP - 1, more = t + 1 < (gk_i64)ntiles;
  if (lane == 0 && more && !last_of_group) D::put(st.tdesc(t), ep | GK_LB_AGG, agg);
  /* 1. the aggregates of the earlier tiles of this group; for all but the
  **    group's last tile, poll the preceding groups in the same round trip */
  const bool need_t = lane < j;
  const gk_i64 q = g - 1 - lane;
  const bool need_g = g > 0 && lane < P::GW && q >= 0;
  gk_u32 tt = 0, tg = 0;
  A vt = op.identity(), vg = op.identity();
  for (;;) {
    if (need_t && !gk_lb_valid(tt, ep)) tt = D::get(st.tdesc(g * GK_LB_GROUP + lane), vt);
    if (!last_of_group && need_g && !gk_lb_valid(tg, ep)) tg = D::get(st.gdesc(q), vg);
    const bool ok = (!need_t || gk_lb_valid(tt, ep)) && (last_of_group || !need_g || gk_lb_valid(tg, ep));
    if (__all_sync(GK_FULL_MASK, ok)) break;
    if (P::SLEEP > 0) gk_nanosleep(P::SLEEP);
  }
  A w = gk_shfl(vt, 0);                      /* W(g, t), valid when j > 0 */
#pragma unroll
  for (int k = 1; k < 31; ++k) {
    const A x = gk_shfl(vt, k);
    if (k < j) w = op(w, x);
  }
  A ga = agg;                                /* GA(g), for the group's last tile */
  if (last_of_group) {
    ga = op(w, agg);
    if (more && lane == 0) D::put(st.gdesc(g), ep | (g == 0 ? GK_LB_PRE : GK_LB_AGG), ga);
    if (g > 0) gk_lb_poll<P::SLEEP>(st.gdesc(need_g ? q : 0), need_g, ep, &tg, &vg);
  }
  if (g == 0) return j > 0 ? w : op.identity();
  /* 2. GP(g): fold forward from the nearest group with a published prefix */
  A gp;
  const unsigned pm = __ballot_sync(GK_FULL_MASK, need_g && ((tg & 3u) == GK_LB_PRE || q == 0));
  if (pm) {
    const int lp = __ffs(pm) - 1;
    gp = gk_shfl(vg, lp);
#pragma unroll
    for (int k = 30; k >= 0; --k) {
      const A x = gk_shfl(vg, k);
      if (k < lp) gp = op(gp, x);
    }
  } else {
    gp = gk_lb_far<P>(st, g, op, ep);
  }
  if (last_of_group && more && lane == 0) D::put(st.gdesc(g), ep | GK_LB_PRE, op(gp, ga));
  return j > 0 ? op(gp, w) : gp;
}

template <class> struct gk_voidt { typedef void type; };
template <class S, class A, class = void> struct gk_store_type { typedef A type; };
template <class S, class A> struct gk_store_type<S, A, typename gk_voidt<typename S::Y>::type> { typedef typename S::Y type; };

/* Per-warp transposes through one shared buffer.  A warp's span of WSPAN
** elements of E bytes takes SLOT(E) = (WSPAN + WSPAN/32) * E bytes (one
** element of padding per 32: conflict-free blocked access for 4- and 8-byte
** elements with 32 items).  The buffer holds WARPS slots of 4-byte elements;
** wider types go through it in rounds of WPR warps, the other warps waiting
** at a barrier with their values in registers. */
GK_DEV int gk_tpadi(int j) { return j + (j >> 5); }
template <int BYTES> struct __align__(16) gk_scan_smem { char b[BYTES]; };
template <int BUF, int SLOT, int WARPS> struct gk_rounds {
  enum { WPR = BUF / SLOT < 1 ? 1 : (BUF / SLOT > WARPS ? WARPS : BUF / SLOT), R = (WARPS + WPR - 1) / WPR };
};

/* One tile per block; grid = ceil(n / TILE) (launch.h gk_scan_launch).
** Each warp loads 32 x ITEMS consecutive elements striped (coalesced) and
** transposes them through shared memory so each lane holds ITEMS consecutive
** elements in registers; lanes fold their lifted items, the block scans the
** lane totals, warp 0 looks back, and each lane folds its items again from
** its prefix, transposing the accumulators back for striped stores.
** gk_scan_tile is the block's work on tile `tile` of `ntiles` over n
** elements (gk_scan: blockIdx.x of gridDim.x; gk_row_scan_lb: a tile of a
** row, the row's own tile state). */
template <class P, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_scan_tile(Idx n, Idx tile, Idx ntiles, const Load &load, const Op &op, const Store &store,
                         void *tile_state, gk_u32 epoch) {
  typedef typename Op::A A;
  typedef typename Load::X X;
  typedef typename gk_store_type<Store, A>::type Y;   /* what goes through shared memory on the way out */
  enum { T = P::THREADS, K = P::ITEMS, WARPS = P::THREADS / 32, WSPAN = 32 * P::ITEMS,
         SX = (WSPAN + WSPAN / 32) * (int)sizeof(X), SA = (WSPAN + WSPAN / 32) * (int)sizeof(Y),
         BUF0 = WARPS * (WSPAN + WSPAN / 32) * (P::WIDE ? 8 : 4),   /* WIDE: 8-byte values in one round */
         BUF = ((BUF0 > SX ? (BUF0 > SA ? BUF0 : SA) : (SX > SA ? SX : SA)) + 15) / 16 * 16 };
  typedef gk_rounds<BUF, SX, WARPS> RX;
  typedef gk_rounds<BUF, SA, WARPS> RA;
  __shared__ gk_scan_smem<BUF> sh;
  __shared__ typename gk_block_scan<T, Op>::TempStorage bs;
  __shared__ A block_excl;
  const int warp = threadIdx.x >> 5, lane = gk_lane();
  const Idx base = tile * (Idx)P::TILE;
  const bool full = n - base >= (Idx)P::TILE;
  const Idx wbase = base + (Idx)warp * WSPAN;
  /* striped, coalesced load */
  X x[K];
  if (full) {
#pragma unroll
    for (int k = 0; k < K; ++k) load.template load<1>(x + k, wbase + k * 32 + lane);
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const Idx i = wbase + k * 32 + lane;
      if (i < n) load.template load<1>(x + k, i);
      else x[k] = X();
    }
  }
  /* to blocked: lane owns elements e0 .. e0+K-1.  When every warp's span
  ** fits the buffer at once it stays there until the output pass (few live
  ** registers during the look-back); else it comes back to registers. */
  const Idx e0 = wbase + (Idx)(lane * K);
  X *sx = (X *)(sh.b + (warp % RX::WPR) * SX);
  A tsum;
  if (RX::R == 1) {
#pragma unroll
    for (int k = 0; k < K; ++k) sx[gk_tpadi(k * 32 + lane)] = x[k];
    __syncwarp();
    tsum = (full || e0 < n) ? op.lift(sx[gk_tpadi(lane * K)], e0) : op.identity();
#pragma unroll
    for (int k = 1; k < K; ++k)
      if (full || e0 + k < n) tsum = op(tsum, op.lift(sx[gk_tpadi(lane * K + k)], e0 + k));
  } else {
#pragma unroll
    for (int r = 0; r < RX::R; ++r) {
      if (warp / RX::WPR == r) {
#pragma unroll
        for (int k = 0; k < K; ++k) sx[gk_tpadi(k * 32 + lane)] = x[k];
        __syncwarp();
#pragma unroll
        for (int k = 0; k < K; ++k) x[k] = sx[gk_tpadi(lane * K + k)];
      }
      __syncthreads();
    }
    tsum = (full || e0 < n) ? op.lift(x[0], e0) : op.identity();
#pragma unroll
    for (int k = 1; k < K; ++k)
      if (full || e0 + k < n) tsum = op(tsum, op.lift(x[k], e0 + k));
  }
  A agg;
  const A tpre = gk_block_scan<T, Op>(bs).exclusive(tsum, op, &agg);   /* ends with a barrier */
  if (ntiles > 1) {                            /* one call site: the look-back is compiled once */
    if (warp == 0) {
      const A e = gk_lookback<P>(tile_state, ntiles, tile, agg, op, epoch);   /* tile 0: publishes only */
      if (lane == 0 && tile > 0) block_excl = e;
    }
    if (tile > 0) __syncthreads();
  }
  A run = tile == 0 ? tpre : (threadIdx.x == 0 ? block_excl : op(block_excl, tpre));
  /* accumulators replace elements in place when they have the same size;
  ** else the elements come back to registers first */
  enum { INPLACE = RX::R == 1 && RA::R == 1 && SA == SX };
  if (RX::R == 1 && !INPLACE) {
#pragma unroll
    for (int k = 0; k < K; ++k) x[k] = sx[gk_tpadi(lane * K + k)];
    __syncthreads();                              /* accumulators overwrite other warps' elements */
  }
  /* fold again from the prefix; back to striped through shared memory */
#pragma unroll
  for (int r = 0; r < RA::R; ++r) {
    if (warp / RA::WPR == r) {
      Y *s = (Y *)(sh.b + (warp % RA::WPR) * SA);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const A a = op.lift(INPLACE ? sx[gk_tpadi(lane * K + k)] : x[k], e0 + k);   /* past n: not stored */
        if (EXCLUSIVE) { s[gk_tpadi(lane * K + k)] = (Y)run; run = op(run, a); }
        else { run = op(run, a); s[gk_tpadi(lane * K + k)] = (Y)run; }
      }
      __syncwarp();
      if (full) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const Y v = s[gk_tpadi(k * 32 + lane)];
          store.template store<1>(wbase + k * 32 + lane, &v);
        }
      } else {
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const Idx i = wbase + k * 32 + lane;
          if (i < n) { const Y v = s[gk_tpadi(k * 32 + lane)]; store.template store<1>(i, &v); }
        }
      }
    }
    if (RA::R > 1 && r + 1 < RA::R) __syncthreads();
  }
}
template <class P, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_scan(Idx n, const Load &load, const Op &op, const Store &store, void *tile_state, gk_u32 epoch) {
  gk_scan_tile<P, EXCLUSIVE>(n, (Idx)blockIdx.x, (Idx)gridDim.x, load, op, store, tile_state, epoch);
}

/* ---- per-row scan over the rows' own tiles ----------------------------------
** For few long rows (launch.h gk_row_scan_lb_use): a row of cols elements is
** ntiles = ceil(cols / TILE) tiles, block b scans tile b % ntiles of row
** b / ntiles with gk_scan_tile, and the look-back runs over that row's own
** tile state (gk_tile_state<A>::bytes a row, rows one after another in
** tile_state: launch.h gk_row_scan_lb_plan sizes it with 16-byte
** descriptors, the most any A here takes).  A row's tiles have increasing
** block indices, so a tile waits only on blocks scheduled before it, as in
** gk_scan; the look-back never leaves the row, and each row's combination
** tree is gk_scan's over its own elements: the same bits run to run.
** Functors are the row scan's (gk_row_scan): Load: typedef X; load<N>(X *,
** Idx row, Idx col); Store: store<N>(Idx row, Idx col, const Y *v) with Y
** = Store::Y if declared, else Op::A; lift sees the column. */
template <class Load, class Idx> struct gk_row_at_load {   /* a row's elements by column */
  typedef typename Load::X X;
  const Load &l;
  Idx row;
  GK_DEV gk_row_at_load(const Load &l_, Idx row_) : l(l_), row(row_) {}
  template <int N> GK_DEV void load(X *d, Idx i) const { l.template load<N>(d, row, i); }
};
template <class Store, class A, class Idx> struct gk_row_at_store {
  typedef typename gk_store_type<Store, A>::type Y;
  const Store &s;
  Idx row;
  GK_DEV gk_row_at_store(const Store &s_, Idx row_) : s(s_), row(row_) {}
  template <int N> GK_DEV void store(Idx i, const Y *v) const { s.template store<N>(row, i, v); }
};
template <class P, bool EXCLUSIVE, class Load, class Op, class Store, class Idx>
GK_DEV void gk_row_scan_lb(Idx rows, Idx cols, const Load &load, const Op &op, const Store &store, void *tile_state,
                           gk_u32 epoch) {
  (void)rows;
  const Idx ntiles = (cols + (Idx)P::TILE - 1) / (Idx)P::TILE;
  const Idx b = (Idx)blockIdx.x, row = b / ntiles, tile = b - row * ntiles;
  char *st = (char *)tile_state + (gk_i64)row * gk_tile_state<typename Op::A>::bytes((gk_i64)ntiles);
  gk_scan_tile<P, EXCLUSIVE>(cols, tile, ntiles, gk_row_at_load<Load, Idx>(load, row),
                             op, gk_row_at_store<Store, typename Op::A, Idx>(store, row), (void *)st, epoch);
}

#endif /* GK_SCAN_CUH */
