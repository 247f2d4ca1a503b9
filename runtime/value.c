/*
** runtime/value.c -- host memory hook, error records and reference-counted
** array values shared by every backend.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/rt.h"

void *rt_default_alloc(void *ud, void *ptr, size_t old_size, size_t new_size) {
  (void)ud; (void)old_size;
  if (new_size == 0) { free(ptr); return NULL; }
  return realloc(ptr, new_size);
}

void *rt_alloc(rt_mem *m, size_t n) {
  if (n == 0) n = 1;
  return m->fn(m->ud, NULL, 0, n);
}

void *rt_calloc(rt_mem *m, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  size_t bytes = count * size;
  void *p = rt_alloc(m, bytes);
  if (p) memset(p, 0, bytes ? bytes : 1);   /* rt_alloc gives at least one byte */
  return p;
}

void *rt_realloc(rt_mem *m, void *p, size_t old_n, size_t new_n) {
  if (new_n == 0) new_n = 1;
  return m->fn(m->ud, p, old_n, new_n);
}

void rt_free(rt_mem *m, void *p, size_t n) {
  if (n == 0) n = 1;   /* what rt_alloc(m, 0) asked for */
  if (p) m->fn(m->ud, p, n, 0);
}

int rt_seterr(rt_err *e, int status, const char *fmt, ...) {
  if (e->status == GK_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = status;
  }
  return status;
}

void rt_err_clear(rt_err *e) { e->status = GK_OK; e->msg[0] = 0; }

int rt_is_float(gk_dtype t) { return rt_dtype_size(t) && rt_dtype_info[t].kind == 2; }

/* Element count and byte size of a shape, with every product checked for
** overflow before anything is allocated.  Dims must be >= 0.  The limit is
** on the count with empty dimensions taken as 1, so an empty array of absurd
** dimensions is refused too (a later product of its dims would wrap). */
int rt_shape_count(int ndim, const int64_t *shape, size_t esize, int64_t *n, size_t *bytes, rt_err *e) {
  int64_t c = 1, nominal = 1;
  if (ndim < 0 || ndim > GK_MAX_DIMS)
    return rt_seterr(e, GK_ELIMIT, "arrays have at most %d dimensions, got %d", GK_MAX_DIMS, ndim);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) return rt_seterr(e, GK_ETYPE, "negative dimension %lld", (long long)shape[i]);
  for (int i = 0; i < ndim; i++) {
    int64_t d = shape[i] ? shape[i] : 1;
    if (d > RT_MAX_ELEMENTS / nominal)
      return rt_seterr(e, GK_ELIMIT, "array too large (limit %lld elements)", (long long)RT_MAX_ELEMENTS);
    nominal *= d;
    c *= shape[i];
  }
  if (esize && (uint64_t)c > (uint64_t)(SIZE_MAX / 2) / esize)
    return rt_seterr(e, GK_ELIMIT, "array too large (limit %lld elements)", (long long)RT_MAX_ELEMENTS);
  if (n) *n = c;
  if (bytes) *bytes = (size_t)c * esize;
  return GK_OK;
}

int rt_value_new(rt_backend *b, gk_dtype t, int ndim, const int64_t *shape, rt_value **out) {
  return b->alloc_value(b, t, ndim, shape, out);
}

void rt_value_ref(rt_value *v) { if (v) v->refs++; }

void rt_value_unref(rt_value *v) {
  if (!v || --v->refs > 0) return;
  rt_backend *b = v->be;
  if (v->base) {   /* storage is the base's */
    rt_value *base = v->base;
    rt_free(b->mem, v, sizeof *v);
    rt_value_unref(base);
    return;
  }
  b->free_storage(b, v);
}

int rt_value_prefix(rt_value *v, int64_t n, rt_value **out) {
  rt_backend *b = v->be;
  size_t es = rt_dtype_size(v->t);
  if (n < 0 || n > v->n) return rt_seterr(&b->err, GK_EMISUSE, "internal: a prefix of %lld elements of %lld", (long long)n, (long long)v->n);
  rt_value *p = rt_calloc(b->mem, 1, sizeof *p);
  if (!p) return rt_seterr(&b->err, GK_ENOMEM, "out of memory");
  p->refs = 1; p->t = v->t; p->ndim = 1; p->shape[0] = n; p->n = n; p->bytes = (size_t)n * es;
  p->where = v->where; p->host = v->host; p->dev = v->dev; p->be = b;
  p->base = v;
  rt_value_ref(v);
  *out = p;
  return GK_OK;
}

int rt_value_scalar(rt_backend *b, rt_value *v, double *f, int64_t *i) {
  unsigned char buf[8] = {0};
  double fv = 0; int64_t iv = 0;
  if (v->where == RT_ON_HOST) memcpy(buf, v->host, rt_dtype_size(v->t));
  else {
    /* read the whole value only when it is one element */
    if (v->n != 1) return rt_seterr(&b->err, GK_EMISUSE, "internal: scalar read of an array");
    int rc = b->read(b, v, buf);
    if (rc) return rc;
  }
  /* nan, inf and values past int64 have no integer value: INT64_MIN, as the kernels' cast (gk_scalar.h) */
#define F2I(d) ((d) >= -0x1p63 && (d) < 0x1p63 ? (int64_t)(d) : INT64_MIN)
  switch (v->t) {
  case GK_BOOL: iv = buf[0] != 0; fv = (double)iv; break;
  case GK_I32: { int32_t x; memcpy(&x, buf, 4); iv = x; fv = x; break; }
  case GK_I64: { int64_t x; memcpy(&x, buf, 8); iv = x; fv = (double)x; break; }
  case GK_F32: { float x; memcpy(&x, buf, 4); fv = x; iv = F2I(fv); break; }
  case GK_F64: { double x; memcpy(&x, buf, 8); fv = x; iv = F2I(fv); break; }
  }
#undef F2I
  if (f) *f = fv;
  if (i) *i = iv;
  return GK_OK;
}
