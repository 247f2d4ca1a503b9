/*
** compiler/names.c -- a session's names: the variables (sorted by name, each
** holding a reference on its node and counted in the node's `bound`) and the
** user's functions.  Calls only graph.c.
*/
#include <string.h>
#include "compiler/cc_int.h"

static int var_pos(cc_session *s, const char *name, int *found) {
  int lo = 0, hi = s->nvars;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    int c = strcmp(s->vars[mid].name, name);
    if (c == 0) { *found = 1; return mid; }
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  *found = 0;
  return lo;
}

cvar *cc_findvar(cc_session *s, const char *name) {
  int f, i = var_pos(s, name, &f);
  return f ? &s->vars[i] : NULL;
}

/* Binds name to v (taking a reference on v.x), dropping the old binding. */
int cc_setvar(cc_session *s, const char *name, cval v) {
  int f, i = var_pos(s, name, &f);
  if (f) {
    rt_node *old = s->vars[i].v.x;
    cc_ref(v.x);
    G(v.x)->bound++;
    G(old)->bound--;
    s->vars[i].v = v;
    cc_unref(s, old);
    return GK_OK;
  }
  if (s->nvars >= CC_MAX_VARS) return cc_error(s, s->errloc, GK_ELIMIT, "too many variables (limit %d)", CC_MAX_VARS);
  if (s->nvars == s->capvars) {
    int nc = s->capvars ? s->capvars * 2 : 16;
    cvar *nv = rt_realloc(s->mem, s->vars, sizeof(cvar) * (size_t)s->capvars, sizeof(cvar) * (size_t)nc);
    if (!nv) return cc_error(s, s->errloc, GK_ENOMEM, "out of memory");
    s->vars = nv; s->capvars = nc;
  }
  size_t ln = strlen(name);
  char *nm = rt_alloc(s->mem, ln + 1);
  if (!nm) return cc_error(s, s->errloc, GK_ENOMEM, "out of memory");
  memcpy(nm, name, ln + 1);
  memmove(&s->vars[i + 1], &s->vars[i], sizeof(cvar) * (size_t)(s->nvars - i));
  s->vars[i].name = nm;
  s->vars[i].v = v;
  cc_ref(v.x);
  G(v.x)->bound++;
  s->nvars++;
  return GK_OK;
}

int cc_unbind(cc_session *s, const char *name) {
  int f, i = var_pos(s, name, &f);
  if (!f) return GK_EMISUSE;
  rt_node *old = s->vars[i].v.x;
  G(old)->bound--;
  rt_free(s->mem, s->vars[i].name, strlen(s->vars[i].name) + 1);
  memmove(&s->vars[i], &s->vars[i + 1], sizeof(cvar) * (size_t)(s->nvars - i - 1));
  s->nvars--;
  cc_unref(s, old);
  return GK_OK;
}

cfn *cc_findfn(cc_session *s, const char *name) {
  for (int i = 0; i < s->nfns; i++) if (!strcmp(s->fns[i].name, name)) return &s->fns[i];
  return NULL;
}

int cc_has_fn(cc_session *s, const char *name) { return cc_findfn(s, name) != NULL; }

void cc_each_var(cc_session *s, cc_var_fn fn, void *ud) {
  for (int i = 0; i < s->nvars; i++) fn(ud, s->vars[i].name, s->vars[i].v.x);
}

/* Frees every variable's name and reference and every user function. */
void cc_names_free(cc_session *s) {
  for (int i = 0; i < s->nvars; i++) {
    rt_node *x = s->vars[i].v.x;
    rt_free(s->mem, s->vars[i].name, strlen(s->vars[i].name) + 1);
    cc_unref(s, x);
  }
  rt_free(s->mem, s->vars, sizeof(cvar) * (size_t)s->capvars);
  for (int i = 0; i < s->nfns; i++) {
    rt_free(s->mem, s->fns[i].name, strlen(s->fns[i].name) + 1);
    lang_arena_free(&s->fns[i].arena);
  }
  rt_free(s->mem, s->fns, sizeof(cfn) * (size_t)s->capfns);
  s->vars = NULL; s->nvars = s->capvars = 0;
  s->fns = NULL; s->nfns = s->capfns = 0;
}

/* Binds nf as the user function nf->name, replacing one of that name; nf
** is taken (freed on failure, loc: where the error points). */
int cc_setfn(cc_session *s, cfn *nf, lang_loc loc) {
  cfn *old = cc_findfn(s, nf->name);
  if (old) {
    rt_free(s->mem, old->name, strlen(old->name) + 1);
    lang_arena_free(&old->arena);
    *old = *nf;
    return GK_OK;
  }
  if (s->nfns == s->capfns) {
    int nc = s->capfns ? s->capfns * 2 : 8;
    cfn *n2 = rt_realloc(s->mem, s->fns, sizeof(cfn) * (size_t)s->capfns, sizeof(cfn) * (size_t)nc);
    if (!n2) {
      lang_arena_free(&nf->arena);
      rt_free(s->mem, nf->name, strlen(nf->name) + 1);
      return cc_error(s, loc, GK_ENOMEM, "out of memory");
    }
    s->fns = n2; s->capfns = nc;
  }
  s->fns[s->nfns++] = *nf;
  return GK_OK;
}
