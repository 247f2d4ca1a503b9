/*
** tests/api/dlpack.c -- DLPack exchange through gk.h: export, import into a
** second context, data checked, and every deleter called exactly once --
** on success, on every rejected tensor, after gk_close, and from another
** thread.  The DLPack v0.8 structs come from dl.h, as a consumer's own
** dlpack.h would declare them (gk.h passes them as void*).
*/
#include <gk.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include "check.h"

#include "dl.h"

static void make(producer *p, void *data, int code, int bits, int ndim, const int64_t *shape) {
  dl_make(p, data, kDLCPU, code, bits, ndim, shape);
  p->free_owned = free;
}

static void test_export_import(void) {
  gk_ctx *a = gk_open("cpu"), *b = gk_open("cpu");
  CHECK(a && b);
  if (!a || !b) return;
  OK(a, gk_eval(a, "x = reshape(f32(iota(6)), 2, 3) + 0.5"));
  void *out = NULL;
  OK(a, gk_to_dlpack(a, "x", &out));
  DLManagedTensor *mt = out;
  CHECK(mt != NULL && mt->deleter != NULL);
  if (!mt) return;
  DLTensor *t = &mt->dl_tensor;
  CHECK(t->device.device_type == kDLCPU && t->device.device_id == 0);
  CHECK(t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3);
  CHECK(t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1);
  CHECK(t->strides == NULL && t->byte_offset == 0);
  const float *d = (const float *)((char *)t->data + t->byte_offset);
  CHECK(d[0] == 0.5f && d[5] == 5.5f);
  /* hand it to b through a counting wrapper (the wrapper calls gk's deleter) */
  producer w;
  make(&w, t->data, t->dtype.code, t->dtype.bits, t->ndim, t->shape);
  w.inner = mt;
  OK(b, gk_from_dlpack(b, "y", &w.t));
  CHECK(w.deletes == 0);
  OK(b, gk_eval(b, "z = sum(rows(y * 2))"));
  float z[2];
  OK(b, gk_get(b, "z", z, sizeof z));
  CHECK(z[0] == 2 * (0.5f + 1.5f + 2.5f) && z[1] == 2 * (3.5f + 4.5f + 5.5f));
  /* export of an import shares the same buffer (no copy anywhere) */
  void *again = NULL;
  OK(b, gk_to_dlpack(b, "y", &again));
  if (again) {
    CHECK(((DLManagedTensor *)again)->dl_tensor.data == t->data);
    ((DLManagedTensor *)again)->deleter(again);
  }
  CHECK(w.deletes == 0);             /* b's variable still holds it */
  /* a rebinds x: b's view stays valid (the export holds a reference) */
  OK(a, gk_eval(a, "x = 0"));
  OK(b, gk_eval(b, "y2 = y + 0"));   /* lazy: holds y's value */
  OK(b, gk_unset(b, "y"));
  CHECK(w.deletes == 0);
  float y2[6];
  OK(b, gk_get(b, "y2", y2, sizeof y2));
  CHECK(y2[0] == 0.5f && y2[5] == 5.5f);
  CHECK(w.deletes == 1);             /* computed: the tensor is given back, once */
  gk_close(b);
  CHECK(w.deletes == 1);
  OK(a, gk_eval(a, "x = 1"));        /* a frees its queued export here */
  gk_close(a);
}

static void test_dtypes(void) {
  gk_ctx *g = gk_open("cpu");
  if (!g) { CHECK(0); return; }
  struct { gk_dtype t; int code, bits; } map[] = {
    { GK_BOOL, kDLBool, 8 }, { GK_I32, kDLInt, 32 }, { GK_I64, kDLInt, 64 },
    { GK_F32, kDLFloat, 32 }, { GK_F64, kDLFloat, 64 } };
  for (int k = 0; k < 5; k++) {
    unsigned char buf[64];
    for (int i = 0; i < 64; i++) buf[i] = (unsigned char)(i % 2);
    int64_t sh[1] = {4};
    OK(g, gk_set(g, "v", map[k].t, 1, sh, buf));
    void *o = NULL;
    OK(g, gk_to_dlpack(g, "v", &o));
    if (!o) continue;
    DLManagedTensor *mt = o;
    CHECK(mt->dl_tensor.dtype.code == map[k].code && mt->dl_tensor.dtype.bits == map[k].bits);
    /* and back into the same context under another name */
    producer p;
    make(&p, mt->dl_tensor.data, map[k].code, map[k].bits, 1, sh);
    p.inner = mt;
    OK(g, gk_from_dlpack(g, "w", &p.t));
    gk_dtype t; int nd; int64_t s2[GK_MAX_DIMS];
    OK(g, gk_shape(g, "w", &t, &nd, s2));
    CHECK(t == map[k].t && nd == 1 && s2[0] == 4);
    OK(g, gk_eval(g, "same = all(w == v)"));
    unsigned char same = 0;
    OK(g, gk_get(g, "same", &same, 1));
    CHECK(same == 1);
    OK(g, gk_unset(g, "w"));
    CHECK(p.deletes == 1);
  }
  /* 0-d and empty */
  double s = 3.25;
  producer p;
  make(&p, &s, kDLFloat, 64, 0, NULL);
  p.t.dl_tensor.shape = NULL;
  OK(g, gk_from_dlpack(g, "s", &p.t));
  OK(g, gk_eval(g, "s2 = s * 2"));
  double s2 = 0;
  OK(g, gk_get(g, "s2", &s2, sizeof s2));
  CHECK(s2 == 6.5);
  int64_t z[2] = {0, 3};
  producer e;
  make(&e, NULL, kDLFloat, 32, 2, z);
  OK(g, gk_from_dlpack(g, "e", &e.t));
  OK(g, gk_eval(g, "en = size(e)"));
  /* explicit C strides, odd stride on a size-1 dim, byte_offset */
  float m[8] = {9, 9, 0, 1, 2, 3, 4, 5};
  int64_t sh[3] = {2, 1, 3};
  producer c;
  make(&c, m, kDLFloat, 32, 3, sh);
  c.strides[0] = 3; c.strides[1] = 77; c.strides[2] = 1;
  c.t.dl_tensor.strides = c.strides;
  c.t.dl_tensor.byte_offset = 2 * sizeof(float);
  OK(g, gk_from_dlpack(g, "c", &c.t));
  OK(g, gk_eval(g, "cs = sum(reshape(c, 2, 3)[1])"));
  float cs = 0;
  OK(g, gk_get(g, "cs", &cs, sizeof cs));
  CHECK(cs == 12);
  gk_close(g);
  CHECK(p.deletes == 1 && e.deletes == 1 && c.deletes == 1);
}

static void test_rejects(void) {
  gk_ctx *g = gk_open("cpu");
  if (!g) { CHECK(0); return; }
  float f[6] = {1, 2, 3, 4, 5, 6};
  int64_t sh[2] = {2, 3};
  OK(g, gk_set(g, "keep", GK_F32, 2, sh, f));
  producer p;
#define REJECT(setup, text) do { make(&p, f, kDLFloat, 32, 2, sh); setup; \
    CHECK_RC(g, gk_from_dlpack(g, "keep", &p.t), GK_EMISUSE); \
    CHECK(p.deletes == 1); \
    CHECK(strstr(gk_errmsg(g), text) != NULL); } while (0)
  REJECT(p.t.dl_tensor.dtype.bits = 16, "unsupported dtype (code 2, 16 bits)");
  REJECT(p.t.dl_tensor.dtype.code = kDLUInt, "unsupported dtype");
  REJECT(p.t.dl_tensor.dtype.code = 5, "unsupported dtype");
  REJECT(p.t.dl_tensor.dtype.lanes = 4, "lanes = 4");
  REJECT((p.strides[0] = 1, p.strides[1] = 2, p.t.dl_tensor.strides = p.strides), "not contiguous");
  REJECT(p.t.dl_tensor.device.device_type = kDLCUDA, "device type 2 cannot be used by the cpu backend");
  REJECT(p.t.dl_tensor.device.device_type = 7, "device type 7");
  REJECT(p.t.dl_tensor.data = NULL, "data is NULL");
  REJECT(p.t.dl_tensor.byte_offset = 1, "aligned");
  REJECT(p.t.dl_tensor.ndim = 9, "ndim must be 0..8");
  REJECT(p.t.dl_tensor.ndim = -1, "ndim must be 0..8");
  REJECT(p.t.dl_tensor.shape = NULL, "shape is NULL");
  REJECT(p.shape[1] = -3, "negative dimension -3");
  REJECT((p.shape[0] = (int64_t)1 << 20, p.shape[1] = (int64_t)1 << 20), "gk_from_dlpack: array too large (limit 17179869184 elements)");
  REJECT((p.shape[0] = 0, p.shape[1] = INT64_MAX), "gk_from_dlpack: array too large (limit 17179869184 elements)");
  make(&p, f, kDLFloat, 32, 2, sh);
  CHECK_RC(g, gk_from_dlpack(g, "sum", &p.t), GK_EMISUSE);
  CHECK(p.deletes == 1);
  CHECK(strstr(gk_errmsg(g), "'sum' is a function; choose another variable name") != NULL);
  make(&p, f, kDLFloat, 32, 2, sh);
  CHECK_RC(g, gk_from_dlpack(g, "fn", &p.t), GK_EMISUSE);
  CHECK(p.deletes == 1);
  make(&p, f, kDLFloat, 32, 2, sh);
  CHECK_RC(g, gk_from_dlpack(g, NULL, &p.t), GK_EMISUSE);
  CHECK(p.deletes == 1);
  make(&p, f, kDLFloat, 32, 2, sh);
  CHECK(gk_from_dlpack(NULL, "x", &p.t) == GK_EMISUSE);
  CHECK(p.deletes == 1);
  CHECK_RC(g, gk_from_dlpack(g, "x", NULL), GK_EMISUSE);
  /* a NULL deleter is allowed */
  make(&p, f, kDLFloat, 32, 2, sh);
  p.t.deleter = NULL;
  OK(g, gk_from_dlpack(g, "nd", &p.t));
  OK(g, gk_unset(g, "nd"));
  /* the failures left "keep" alone */
  float fo[6];
  OK(g, gk_get(g, "keep", fo, sizeof fo));
  CHECK(!memcmp(f, fo, sizeof f));
  /* export errors */
  void *o = (void *)1;
  CHECK_RC(g, gk_to_dlpack(g, "nosuch", &o), GK_EMISUSE);
  CHECK(o == NULL);
  CHECK_RC(g, gk_to_dlpack(g, "keep", NULL), GK_EMISUSE);
  CHECK_RC(g, gk_to_dlpack(g, NULL, &o), GK_EMISUSE);
  OK(g, gk_eval(g, "lazy = keep * 2"));                  /* pending: computed by the export */
  OK(g, gk_to_dlpack(g, "lazy", &o));
  if (o) {
    CHECK(((const float *)((DLManagedTensor *)o)->dl_tensor.data)[5] == 12);
    ((DLManagedTensor *)o)->deleter(o);
  }
  gk_close(g);
}

static void *call_deleter(void *arg) {
  DLManagedTensor *t = arg;
  t->deleter(t);
  return NULL;
}

static void test_lifetimes(void) {
  /* an export outlives its context */
  gk_ctx *g = gk_open("cpu");
  if (!g) { CHECK(0); return; }
  OK(g, gk_eval(g, "a = iota(1000) * 3; b = a + 1"));
  void *ea = NULL, *eb = NULL, *ec = NULL;
  OK(g, gk_to_dlpack(g, "a", &ea));
  OK(g, gk_to_dlpack(g, "b", &eb));
  OK(g, gk_to_dlpack(g, "a", &ec));   /* twice: two references */
  gk_close(g);
  if (ea && eb && ec) {
    const int64_t *pa = ((DLManagedTensor *)ea)->dl_tensor.data, *pb = ((DLManagedTensor *)eb)->dl_tensor.data;
    CHECK(pa[999] == 2997 && pb[999] == 2998);
    ((DLManagedTensor *)ea)->deleter(ea);
    CHECK(((const int64_t *)((DLManagedTensor *)ec)->dl_tensor.data)[10] == 30);
    /* the last deleters from other threads */
    pthread_t t1, t2;
    pthread_create(&t1, NULL, call_deleter, eb);
    pthread_create(&t2, NULL, call_deleter, ec);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(1);
  }
  /* deleters from other threads while the context is in use */
  g = gk_open("cpu");
  if (!g) { CHECK(0); return; }
  OK(g, gk_eval(g, "v = rand(100)"));
  enum { N = 8 };
  void *ex[N];
  pthread_t th[N];
  for (int i = 0; i < N; i++) OK(g, gk_to_dlpack(g, "v", &ex[i]));
  for (int i = 0; i < N; i++) pthread_create(&th[i], NULL, call_deleter, ex[i]);
  for (int k = 0; k < 50; k++) OK(g, gk_eval(g, "w = sum(v)"));
  for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
  OK(g, gk_eval(g, "v = 0"));
  gk_close(g);
}

int main(void) {
  test_export_import();
  test_dtypes();
  test_rejects();
  test_lifetimes();
  return t_done();
}
