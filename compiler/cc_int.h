/*
** compiler/cc_int.h -- internals shared by the compiler's files: graph
** nodes with reference counts and CSE, the session, typed values as the
** checker sees them (a node plus its view and literal-ness), and the
** pending graph, plan and plan-cache key that computing a value passes
** between its steps.
**
** The files, one job each, and who calls whom (an arrow is "calls"; it is a
** DAG, checked by tests/tools/layers.py in make test):
**
**   api/api.c
**     |-> session.c    open, close, options, progress; cc_lookup, cc_sync, cc_bind_value
**     |-> build.c      the checker and constant folding: cc_exec (+ the builtin table)
**     |-> names.c      variables and user functions
**     '-> suggest.c    "did you mean" (cc_hint; given the builtin names)
**   session.c -> run.c, names.c, plancache.c, graph.c
**   build.c   -> run.c, names.c, suggest.c, graph.c
**   run.c        cc_compute: collect, plan or take from the cache, run, store, freeze
**             -> fuse.c, plancache.c, plan_print.c, graph.c
**   fuse.c       the pending graph (cc_collect) and the plan step (cc_fuse)  -> graph.c
**   plancache.c  the plan cache: signature, lookup, store, verify, stats    -> graph.c
**   plan_print.c a group's --plan and --profile text                        -> (runtime only)
**   names.c   -> graph.c
**   graph.c      nodes, hash-consing, references, freezing, cc_error        -> (runtime only)
**
** Every file may call the runtime (runtime/rt.h, plan.h, host.h) and lang/;
** nothing below calls up.
*/
#ifndef CC_INT_H
#define CC_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include "compiler/cc.h"

/* A graph node: the runtime node plus the graph's bookkeeping. */
typedef struct gnode {
  rt_node r;              /* must be first: a gnode* is an rt_node* */
  int refs;               /* users: variables, other nodes, the current statement */
  uint64_t hash;          /* CSE key hash */
  int in_hash;            /* linked in the CSE table */
  struct gnode *hnext;    /* CSE bucket chain */
  struct gnode *snext;    /* nodes created by the current statement */
  int in_stmt;            /* on that list: holds the current statement's reference */
  int mark;               /* planning: visit stamp */
  int grp;                /* planning: group index, -1 none */
  int anchor;             /* planning: starts or belongs to a group as an anchor */
  int post;               /* planning: post-order index */
  int bound;              /* variables bound to this node: computed values worth keeping */
} gnode;

#define G(x) ((gnode *)(x))

/* Views: how reductions and broadcasting treat a matrix. */
enum { V_NONE, V_ROWS, V_COLS };

/* Kinds of checker values. */
enum { K_ARRAY, K_STR, K_NONE, K_OPNAME };

/* A value as the checker sees it. */
typedef struct cval {
  int kind;               /* K_* */
  rt_node *x;             /* K_ARRAY: the node */
  int view;               /* V_* */
  int weak;               /* from a literal: adapts its dtype to the other operand */
  const char *str;        /* K_STR text, K_OPNAME name */
  size_t len;
  int rop;                /* K_OPNAME: rt_rop */
} cval;

typedef struct cvar {
  char *name;
  cval v;                 /* K_ARRAY only; holds a reference on v.x */
} cvar;

typedef struct cfn {
  char *name;
  lang_arena arena;       /* owns body and params */
  const ast *body;
  int nparams;
  const char **params;
  int expanding;          /* being inlined right now (recursion check) */
} cfn;

struct cc_session {
  rt_mem *mem;
  rt_backend *be;
  cc_hooks hooks;
  /* graph */
  gnode **htab;           /* CSE buckets */
  size_t hcap;
  gnode *stmt_nodes;      /* created by the current statement (each holds one ref) */
  int64_t steps;          /* checker steps (eval calls) of the current statement: CC_MAX_STEPS */
  int64_t nlive;          /* live nodes */
  int next_id;
  int stamp;              /* planning visit stamp */
  /* names */
  cvar *vars; int nvars, capvars;   /* sorted by name */
  cfn *fns; int nfns, capfns;
  /* random stream */
  uint64_t seed, rng_offset;
  /* options and counters */
  int opt_plan, opt_cuda, opt_fusion, opt_tf32;
  int opt_digits, opt_width, opt_last;   /* print options (0: numpy's), `_` binding */
  int opt_charts;         /* 0: none (hist prints counts; plot draws ASCII), 1: ASCII, 2: Unicode */
  int opt_profile;        /* a line per group run: time, bytes, GB/s, JIT time, ops */
  _Atomic int64_t prof_run_ns, prof_jit_ns;   /* time in run_group / prepare_group since the session opened */
  _Atomic int64_t prof_bytes;   /* bytes the profiled groups read and wrote */
  /* progress, read by gk_progress from any thread while a statement runs */
  _Atomic int64_t prog_done, prog_planned;   /* kernels finished / finished + planned in the running plan */
  _Atomic int prog_jit;   /* 1 while a group is being lowered or compiled */
  int64_t kernels;
  /* plan cache (plancache.c): plans of recently run graph shapes */
  struct pc_entry *pcache;
  int pc_next;
  int pc_off;             /* GK_PLAN_CACHE=0 */
  int pc_verify;          /* GK_PLAN_CACHE=verify: re-lower cached groups and compare */
  int64_t pc_hits, pc_misses;
  /* the current statement's error */
  rt_err *err;
  lang_loc errloc;
  int depth;              /* recursion depth of the checker */
};

/* A node of the graph being planned: not materialized, reached by this
** planning's walk (fuse.c cc_collect stamps it). */
static inline int cc_is_pending(const cc_session *s, const rt_node *x) { return !x->val && G(x)->mark == s->stamp; }

/* Arrays freed where their length is not at hand carry it in a header, so
** the allocator hook is told the size it gave (gk.h's contract). */
#define CC_SZ_HDR 16   /* keeps max_align_t alignment */
static inline void *cc_sz_alloc(rt_mem *m, size_t n) {
  if (n > SIZE_MAX - CC_SZ_HDR) return NULL;
  char *p = rt_alloc(m, n + CC_SZ_HDR);
  if (!p) return NULL;
  memcpy(p, &(size_t){ n + CC_SZ_HDR }, sizeof(size_t));
  return p + CC_SZ_HDR;
}
static inline void *cc_sz_calloc(rt_mem *m, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = cc_sz_alloc(m, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}
static inline void cc_sz_free(rt_mem *m, void *p) {
  if (!p) return;
  size_t n;
  memcpy(&n, (char *)p - CC_SZ_HDR, sizeof n);
  rt_free(m, (char *)p - CC_SZ_HDR, n);
}

/* The pending graph of one cc_compute (fuse.c cc_collect): every node the
** targets need that is not materialized, inputs before users. */
typedef struct cc_pending {
  rt_node **post;         /* in post-order; gnode.post is a node's index, gnode.mark == s->stamp */
  int npost, cap;
  rt_node **targets;      /* the targets, with pending sibling reductions added (fusion) */
  int ntargets;
  rt_node **own;          /* the array targets points to when siblings were added; NULL otherwise */
  int nown;
} cc_pending;

/* A plan: groups (one kernel each) and the order they run in. */
typedef struct cc_plan {
  rt_group *groups;       /* each array of a group from cc_sz_alloc */
  int ngroups;
  int *order;             /* group indices in run order */
  char *relower;          /* from the plan cache: groups whose text must be lowered again; NULL: planned now */
} cc_plan;

/* A plan cache key (plancache.c; the fields are its own): the pending
** graph's signature, its sizes and constants beside it, and the
** materialized inputs numbered in order of first use. */
typedef struct cc_pkey {
  uint64_t *w; size_t n, cap; int fail;   /* the signature words; fail: out of memory making them */
  int64_t *vals; size_t nv, capv;   /* distinct sizes other than 0 and 1, in order of appearance */
  int64_t *cv; size_t ncv, capcv;   /* constants' values, in order */
  uint32_t *ht; size_t htcap;       /* open addressing: 1 + index into vals, 0 empty */
  uint64_t hash;
  rt_node **mat; int nmat;          /* materialized inputs: gnode.post of one is its number here */
  int hit;                          /* the plan came from the cache */
  struct pc_entry *resized;         /* it was cached for other sizes: lowered again, stored back there */
} cc_pkey;

/* The hash step of the CSE table and the plan cache's signatures. */
static inline uint64_t cc_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* graph.c */
rt_node *cc_node(cc_session *s, const rt_node *tmpl);   /* interned copy; NULL on OOM (error set) */
void cc_ref(rt_node *x);
void cc_unref(cc_session *s, rt_node *x);
void cc_end_statement(cc_session *s);                  /* drops the statement's references */
void cc_freeze(cc_session *s, rt_node *x);             /* materialized: forget inputs */
rt_node *cc_input(cc_session *s, rt_value *v);         /* a node for a materialized value */
void cc_graph_free(cc_session *s);                     /* the CSE table (cc_close) */
int cc_error(cc_session *s, lang_loc loc, int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* names.c */
cvar *cc_findvar(cc_session *s, const char *name);
int cc_setvar(cc_session *s, const char *name, cval v);
cfn *cc_findfn(cc_session *s, const char *name);
int cc_setfn(cc_session *s, cfn *nf, lang_loc loc);    /* takes nf; replaces a function of its name */
void cc_names_free(cc_session *s);                     /* every variable and function (cc_close) */

/* run.c */
int cc_compute(cc_session *s, rt_node **targets, int n);   /* materializes targets */
int cc_compute_vars(cc_session *s, int wait);              /* every pending variable, then (wait) the backend's sync */

/* fuse.c */
int cc_collect(cc_session *s, rt_node **targets, int nt, cc_pending *pg);   /* the pending graph of targets */
void cc_pending_free(cc_session *s, cc_pending *pg);
int cc_fuse(cc_session *s, const cc_pending *pg, cc_plan *pl);   /* plans pg: fused groups, ordered */
void cc_plan_free(cc_session *s, cc_plan *pl);

/* plancache.c */
int cc_pc_lookup(cc_session *s, const cc_pending *pg, cc_pkey *k, cc_plan *pl);   /* k->hit: pl is the cached plan */
void cc_pc_store(cc_session *s, const cc_pkey *k, const cc_plan *pl);   /* remembers pl, run for the graph of k */
void cc_pc_key_free(cc_session *s, cc_pkey *k);
int cc_pc_verify(cc_session *s, const rt_group *g);   /* GK_PLAN_CACHE=verify: g's cached text is a fresh lowering's */
void cc_plan_cache_free(cc_session *s);

/* plan_print.c */
void cc_print_group(cc_session *s, const rt_group *g, int64_t number);   /* --plan: a group as it runs */
void cc_profile_group(cc_session *s, const rt_group *g, int64_t number, double run_ms, double jit_ms);   /* --profile */

/* build.c */
void cc_shape_str(const rt_node *x, char *buf, size_t len);

#endif /* CC_INT_H */
