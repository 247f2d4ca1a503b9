/*
** compiler/plan_print.c -- the text of a plan as it runs: a group's --plan
** lines (inputs, fused nodes, outputs; with --cuda the kernel text, on the
** cpu backend lowered here to show what the cuda backend would run) and its
** --profile line.  Calls no other file of compiler/.
*/
#include <stdio.h>
#include <string.h>
#include "compiler/cc_int.h"
#include "runtime/host.h"
#include "runtime/cuda_lower.h"

/* Writes b to the session's output hook (stdout without one) and frees it. */
static void emit(cc_session *s, fmt_buf *b) {
  if (b->status == GK_OK) {
    if (s->hooks.output) s->hooks.output(s->hooks.ud, b->data, b->len);
    else fwrite(b->data, 1, b->len, stdout);
  }
  fmt_free(b);
}

static const char *prim_name(rt_group_kind k) {
  static const char *const names[] = { "map", "grid_reduce", "row_kernel", "lookback_scan", "select",
                                       "select", "histogram", "gemm", "tiled_transpose", "radix_sort" };
  return names[k];
}

static void node_ref(fmt_buf *b, const rt_node *x) {
  if (x->op == RT_CONST && x->n == 1) {
    if (rt_is_float(x->t)) fmt_printf(b, "%g", x->c.f);
    else if (x->t == GK_BOOL) fmt_puts(b, x->c.i ? "true" : "false");
    else fmt_printf(b, "%lld", (long long)x->c.i);
  } else fmt_printf(b, "%%%d", x->id);
}

static void type_str(fmt_buf *b, const rt_node *x) {
  fmt_printf(b, "%s[", rt_dtype_name(x->t));
  for (int i = 0; i < x->ndim; i++) fmt_printf(b, "%s%lld", i ? "," : "", (long long)x->shape[i]);
  fmt_puts(b, "]");
}

/* The --plan text of one group. */
void cc_print_group(cc_session *s, const rt_group *g, int64_t number) {
  fmt_buf b; fmt_init(&b);
  fmt_printf(&b, "kernel %lld: %s (%s", (long long)number, rt_group_name[g->kind], prim_name(g->kind));
  fmt_printf(&b, g->nlaunch > 1 ? ", %d launches)\n" : ")\n", g->nlaunch);
  fmt_puts(&b, "  in: ");
  if (!g->nin) fmt_puts(&b, "-");
  for (int i = 0; i < g->nin; i++) { if (i) fmt_puts(&b, ", "); node_ref(&b, g->ins[i]); fmt_puts(&b, " "); type_str(&b, g->ins[i]); }
  fmt_puts(&b, "\n");
  for (int i = 0; i < g->nnodes; i++) {
    const rt_node *x = g->nodes[i];
    if (x->op == RT_CONST && x->n == 1) continue;
    fmt_printf(&b, "  %%%d = ", x->id);
    switch (x->op) {
    case RT_REDUCE: fmt_printf(&b, "%s%s", rt_rop_name[x->rop], x->axis == 1 ? ".rows" : x->axis == 0 ? ".cols" : ""); break;
    case RT_SCAN: fmt_printf(&b, "%s%s%s", x->excl ? "exscan." : "scan.", rt_rop_name[x->rop], x->axis == 1 ? ".rows" : x->axis == 0 ? ".cols" : ""); break;
    case RT_SORT: case RT_ARGSORT: case RT_TOPK: case RT_ARGTOPK:
      fmt_printf(&b, "%s%s", rt_op_info[x->op].name, x->axis == 1 ? ".rows" : x->axis == 0 ? ".cols" : "");
      if (x->op == RT_TOPK || x->op == RT_ARGTOPK) fmt_printf(&b, " k=%lld", (long long)x->nbins);
      break;
    case RT_CAST: fmt_printf(&b, "%s", rt_dtype_name(x->t)); break;
    case RT_CONST: fmt_puts(&b, "fill "); break;
    default: fmt_puts(&b, rt_op_info[x->op].name); break;
    }
    if (x->op == RT_CONST) { rt_node c = *x; c.n = 1; node_ref(&b, &c); }
    for (int k = 0; k < x->nin; k++) { fmt_puts(&b, " "); node_ref(&b, x->in[k]); }
    fmt_puts(&b, " : "); type_str(&b, x);
    fmt_puts(&b, "\n");
  }
  fmt_puts(&b, "  out: ");
  for (int i = 0; i < g->nout; i++) { if (i) fmt_puts(&b, ", "); node_ref(&b, g->outs[i]); }
  fmt_puts(&b, "\n");
  if (s->opt_cuda && rt_prep_source(g->prep)) { fmt_puts(&b, rt_prep_source(g->prep)); fmt_puts(&b, "\n"); }
  else if (s->opt_cuda && !strcmp(s->be->name, "cpu")) {
    /* The cpu backend lowers nothing to run; lower a copy here to show the
    ** CUDA the cuda backend would run (GK_NVRTC_CHECK=1 also compiles it). */
    rt_group f = *g;
    rt_err e;
    f.prep = NULL;
    rt_err_clear(&e);
    if (cuda_lower(&f, s->mem, 132, -1, s->opt_tf32, &e) == GK_OK && rt_prep_source(f.prep))
      fmt_printf(&b, "// the CUDA the cuda backend would run (lowered on the cpu backend for 132 SMs, an H200;\n"
                     "// the cuda backend lowers for its device)\n%s\n", rt_prep_source(f.prep));
    else if (e.status)
      fmt_printf(&b, "// no CUDA for this kernel: the lowering failed: %s\n", e.msg);
    else
      fmt_printf(&b, "// no CUDA for this kernel: a %s group runs no generated code (its primitive is called as it is)\n",
                 rt_group_name[g->kind]);
    rt_prep_free(s->mem, f.prep);
  }
  emit(s, &b);
}

double cc_copy_rate(cc_session *s) { return s->be->copy_rate ? s->be->copy_rate(s->be) : 0; }

/* The profile line of one group (the "profile" option): its time, the
** bytes it reads and writes once (inputs and outputs), the rate and its
** share of the backend's copy rate (cuda: measured once per process; "-"
** where there is none), the lowering/JIT time when it was prepared now, and
** its fused ops. */
void cc_profile_group(cc_session *s, const rt_group *g, int64_t number, double run_ms, double jit_ms) {
  double bytes = 0;
  for (int i = 0; i < g->nin; i++) bytes += (double)g->ins[i]->n * (double)rt_dtype_size(g->ins[i]->t);
  for (int i = 0; i < g->nout; i++) bytes += (double)g->outs[i]->n * (double)rt_dtype_size(g->outs[i]->t);
  atomic_fetch_add_explicit(&s->prof_bytes, (int64_t)bytes, memory_order_relaxed);
  fmt_buf b; fmt_init(&b);
  char jit[32] = "";
  if (jit_ms > 0) snprintf(jit, sizeof jit, "%.3f ms", jit_ms);
  double copy = cc_copy_rate(s);   /* bytes/s */
  char share[16] = "-";
  if (copy > 0 && run_ms > 0) snprintf(share, sizeof share, "%.0f%%", 100.0 * bytes / (run_ms * 1e-3) / copy);
  fmt_printf(&b, "  %-4lld %-9s %10.3f ms %10.3f MB %8.2f GB/s %7s %11s  ", (long long)number, rt_group_name[g->kind],
             run_ms, bytes / 1e6, run_ms > 0 ? bytes / (run_ms * 1e6) : 0.0, share, jit[0] ? jit : "-");
  int shown = 0;
  for (int i = 0; i < g->nnodes && b.len < 4000; i++) {
    const rt_node *x = g->nodes[i];
    if (x->op == RT_CONST || x->op == RT_INPUT || x->op == RT_VIEW) continue;
    const char *nm = x->op == RT_REDUCE ? rt_rop_name[x->rop] : x->op == RT_SCAN ? "scan" :
                     x->op == RT_CAST ? rt_dtype_name(x->t) : rt_op_info[x->op].name;
    fmt_printf(&b, "%s%s", shown++ ? " " : "", nm);
  }
  if (!shown) fmt_puts(&b, "(copy)");
  fmt_putc(&b, '\n');
  emit(s, &b);
}
