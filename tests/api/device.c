/*
** tests/api/device.c -- device memory through gk.h on the cuda backend:
** gk_borrow_device at an aligned pointer and at base + 4 (which kernels
** must read with scalar loads), DLPack export of kDLCUDA tensors (read back
** with the driver, valid after gk_close) and import of tensors this program
** allocated itself, every release and deleter counted, and the rejections
** (bad alignment, wrong device type) releasing exactly once; whole-array
** reductions and few-long-row softmaxes rerun on fresh data, 20 sizes in turn.
**
** The buffers are made with the CUDA driver API, loaded here with dlopen as
** any host program would, in the device's primary context (gk.h's rule).
** Without a usable GPU only the cpu reference of the kernel-error case runs.
** Argument: element count of the large arrays (default 1000003).
*/
#include <gk.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"
#include "dl.h"

/* ------------------------------------------------ the driver, by hand */

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef uint64_t CUdeviceptr;

static struct {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*retain)(CUcontext *, CUdevice);
  CUresult (*release)(CUdevice);
  CUresult (*set_current)(CUcontext);
  CUresult (*alloc)(CUdeviceptr *, size_t);
  CUresult (*free)(CUdeviceptr);
  CUresult (*htod)(CUdeviceptr, const void *, size_t);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*sync)(void);
  CUdevice dev;
} cu;

static int cu_load(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return 0;
#define SYM(f, s) if (!(*(void **)&cu.f = dlsym(h, s))) return 0
  SYM(init, "cuInit"); SYM(device_get, "cuDeviceGet");
  SYM(retain, "cuDevicePrimaryCtxRetain"); SYM(release, "cuDevicePrimaryCtxRelease_v2");
  SYM(set_current, "cuCtxSetCurrent"); SYM(alloc, "cuMemAlloc_v2"); SYM(free, "cuMemFree_v2");
  SYM(htod, "cuMemcpyHtoD_v2"); SYM(dtoh, "cuMemcpyDtoH_v2"); SYM(sync, "cuCtxSynchronize");
#undef SYM
  CUcontext ctx;
  if (cu.init(0) || cu.device_get(&cu.dev, 0) || cu.retain(&ctx, cu.dev) || cu.set_current(ctx)) return 0;
  return 1;
}

/* a device buffer holding a copy of host bytes */
static CUdeviceptr upload(const void *host, size_t bytes) {
  CUdeviceptr d = 0;
  if (cu.alloc(&d, bytes ? bytes : 1)) { CHECK(0); return 0; }
  if (bytes && cu.htod(d, host, bytes)) CHECK(0);
  return d;
}

/* ------------------------------------------------ helpers */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {   /* xorshift64*, [0, 1) */
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) * 0x1p-53;
}

typedef struct counter { int calls; uint64_t last; } counter;
static void count_release(void *ud, uint64_t dptr) {
  counter *c = ud;
  c->calls++;
  c->last = dptr;
}

/* relative closeness for sums computed in a different order */
static int close_to(double got, double want, double rtol) {
  return fabs(got - want) <= rtol * (fabs(want) + 1.0);
}

/* ------------------------------------------------ gk_borrow_device */

/* Borrows n f32 at base + off bytes, computes a fused map and sum from it,
** and checks both against double references. */
static void borrow_at(gk_ctx *g, const float *host, CUdeviceptr base, size_t off, int64_t n) {
  counter c = {0, 0};
  int64_t sh[1] = {n};
  const float *h = (const float *)((const char *)host + off);
  OK(g, gk_borrow_device(g, "x", GK_F32, 1, sh, base + off, count_release, &c));
  CHECK(c.calls == 0);
  OK(g, gk_eval(g, "s = sum(x); y = x * 2 + 1; m = max(x); i = argmax(x)"));
  float s = 0, m = 0;
  int64_t i = -1;
  float *y = malloc(sizeof(float) * (size_t)n);
  OK(g, gk_get(g, "s", &s, sizeof s));
  OK(g, gk_get(g, "m", &m, sizeof m));
  OK(g, gk_get(g, "i", &i, sizeof i));
  OK(g, gk_get(g, "y", y, sizeof(float) * (size_t)n));
  double ref = 0; float rm = -INFINITY; int64_t ri = 0;
  int bad = 0;
  for (int64_t k = 0; k < n; k++) {
    ref += h[k];
    if (h[k] > rm) { rm = h[k]; ri = k; }
    if (y[k] != h[k] * 2.0f + 1.0f) bad++;
  }
  CHECK(bad == 0);
  CHECK(close_to(s, ref, 1e-5));
  CHECK(m == rm && i == ri);
  free(y);
  /* still borrowed: the variable holds the pointer */
  CHECK(c.calls == 0);
  /* an export of a borrowed variable shares the caller's pointer */
  void *o = NULL;
  OK(g, gk_to_dlpack(g, "x", &o));
  if (o) {
    DLManagedTensor *mt = o;
    CHECK(mt->dl_tensor.device.device_type == kDLCUDA);
    CHECK((uint64_t)(uintptr_t)mt->dl_tensor.data + mt->dl_tensor.byte_offset == base + off);
    mt->deleter(mt);
  }
  OK(g, gk_unset(g, "x"));
  OK(g, gk_eval(g, "x = 0"));   /* drains queued exports */
  CHECK(c.calls == 1 && c.last == base + off);
}

static void test_borrow(int64_t n) {
  gk_ctx *g = gk_open("cuda");
  if (!g) { CHECK(0); return; }
  CHECK_STR(gk_backend(g), "cuda");
  size_t bytes = sizeof(float) * (size_t)(n + 4);
  float *host = malloc(bytes);
  for (int64_t k = 0; k < n + 4; k++) host[k] = (float)(urand() * 2 - 1);
  CUdeviceptr d = upload(host, bytes);
  int64_t sizes[] = {1, 31, 33, n};
  for (int k = 0; k < 4; k++) {
    borrow_at(g, host, d, 0, sizes[k]);                 /* aligned */
    borrow_at(g, (const float *)host, d, 4, sizes[k]);  /* base + 4: scalar-load path */
    borrow_at(g, (const float *)host, d, 12, sizes[k]); /* base + 12 */
  }
  /* not aligned to the element: refused, released once, nothing bound */
  counter c = {0, 0};
  int64_t sh[1] = {n};
  OK(g, gk_eval(g, "keep = 5"));
  CHECK_RC(g, gk_borrow_device(g, "keep", GK_F32, 1, sh, d + 2, count_release, &c), GK_EMISUSE);
  CHECK(c.calls == 1 && c.last == d + 2);
  CHECK(strstr(gk_errmsg(g), "not aligned") != NULL);
  CHECK_RC(g, gk_borrow_device(g, "keep", GK_F32, 1, sh, 0, count_release, &c), GK_EMISUSE);
  CHECK(c.calls == 2);
  CHECK_RC(g, gk_borrow_device(g, "fn", GK_F32, 1, sh, d, count_release, &c), GK_EMISUSE);
  CHECK(c.calls == 3);
  int64_t keep = 0;
  OK(g, gk_get(g, "keep", &keep, sizeof keep));
  CHECK(keep == 5);
  /* other dtypes, 2-d, a lazy value computed after the name is rebound,
  ** release at gk_close */
  int64_t *hi = malloc(sizeof(int64_t) * 1000);
  double *hd = malloc(sizeof(double) * 1000);
  unsigned char hb[1000];
  for (int k = 0; k < 1000; k++) { hi[k] = (int64_t)(urand() * 2e12) - (int64_t)1e12; hd[k] = urand(); hb[k] = urand() < 0.3; }
  CUdeviceptr di = upload(hi, sizeof(int64_t) * 1000), dd = upload(hd, sizeof(double) * 1000), db = upload(hb, 1000);
  counter ci = {0, 0}, cd = {0, 0}, cb = {0, 0};
  int64_t sh2[2] = {40, 25};
  OK(g, gk_borrow_device(g, "bi", GK_I64, 1, (int64_t[]){1000}, di, count_release, &ci));
  OK(g, gk_borrow_device(g, "bd", GK_F64, 2, sh2, dd, count_release, &cd));
  OK(g, gk_borrow_device(g, "bb", GK_BOOL, 1, (int64_t[]){1000}, db, count_release, &cb));
  OK(g, gk_eval(g, "si = sum(bi); rd = sum(rows(bd)); nb = sum(i32(bb)); later = bd * 3"));
  OK(g, gk_eval(g, "bd = 0"));  /* later still needs the buffer */
  CHECK(cd.calls == 0);
  int64_t si = 0, nb = 0; double rd[40], later[1000];
  OK(g, gk_get(g, "si", &si, sizeof si));
  OK(g, gk_get(g, "rd", rd, sizeof rd));
  OK(g, gk_get(g, "nb", &nb, sizeof nb));
  OK(g, gk_get(g, "later", later, sizeof later));
  int64_t rsi = 0, rnb = 0; int bad = 0;
  for (int k = 0; k < 1000; k++) { rsi += hi[k]; rnb += hb[k]; if (later[k] != hd[k] * 3) bad++; }
  for (int r = 0; r < 40; r++) {
    double acc = 0;
    for (int k = 0; k < 25; k++) acc += hd[r * 25 + k];
    if (!close_to(rd[r], acc, 1e-12)) bad++;
  }
  CHECK(si == rsi && nb == rnb && bad == 0);
  OK(g, gk_eval(g, "later = 0"));
  CHECK(cd.calls == 1);
  CHECK(ci.calls == 0 && cb.calls == 0);
  gk_close(g);
  CHECK(ci.calls == 1 && cb.calls == 1 && cd.calls == 1);
  cu.free(d); cu.free(di); cu.free(dd); cu.free(db);
  free(host); free(hi); free(hd);
}

/* ------------------------------------------------ DLPack on the device */

static void free_dev(void *owned) { cu.free((CUdeviceptr)(uintptr_t)owned); }

static void make(producer *p, CUdeviceptr data, int code, int bits, int ndim, const int64_t *shape) {
  dl_make(p, (void *)(uintptr_t)data, kDLCUDA, code, bits, ndim, shape);
  p->free_owned = free_dev;
}

static void test_export(int64_t n) {
  gk_ctx *a = gk_open("cuda"), *b = gk_open("cuda");
  CHECK(a && b);
  if (!a || !b) { gk_close(a); gk_close(b); return; }
  char src[128];
  snprintf(src, sizeof src, "x = f32(iota(%lld)) * 0.5 - 7", (long long)n);
  OK(a, gk_eval(a, src));
  void *o = NULL;
  OK(a, gk_to_dlpack(a, "x", &o));
  DLManagedTensor *mt = o;
  if (!mt) return;
  DLTensor *t = &mt->dl_tensor;
  CHECK(t->device.device_type == kDLCUDA && t->device.device_id == 0);
  CHECK(t->ndim == 1 && t->shape[0] == n && t->strides == NULL);
  CHECK(t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1);
  CUdeviceptr dp = (CUdeviceptr)(uintptr_t)t->data + t->byte_offset;
  float *h = malloc(sizeof(float) * (size_t)n);
  /* the work is finished when gk_to_dlpack returns: read with the driver */
  CHECK(cu.dtoh(h, dp, sizeof(float) * (size_t)n) == 0);
  int bad = 0;
  for (int64_t k = 0; k < n; k++) if (h[k] != (float)k * 0.5f - 7.0f) bad++;
  CHECK(bad == 0);
  /* pass it to b through a counting wrapper: no copy, b computes on it */
  producer w;
  make(&w, (CUdeviceptr)(uintptr_t)t->data, t->dtype.code, t->dtype.bits, 1, t->shape);
  w.t.dl_tensor.byte_offset = t->byte_offset;
  w.inner = mt;
  OK(b, gk_from_dlpack(b, "y", &w.t));
  void *again = NULL;
  OK(b, gk_to_dlpack(b, "y", &again));
  if (again) {
    DLTensor *t2 = &((DLManagedTensor *)again)->dl_tensor;
    CHECK((CUdeviceptr)(uintptr_t)t2->data + t2->byte_offset == dp);
    ((DLManagedTensor *)again)->deleter(again);
  }
  /* a closes: the export stays valid */
  gk_close(a);
  OK(b, gk_eval(b, "s = sum(f64(y)); z = y + 7"));
  double s = 0;
  OK(b, gk_get(b, "s", &s, sizeof s));
  double ref = 0;
  for (int64_t k = 0; k < n; k++) ref += (double)((float)k * 0.5f - 7.0f);
  CHECK(close_to(s, ref, 1e-12));
  CHECK(w.deletes == 0);
  OK(b, gk_unset(b, "y"));
  OK(b, gk_get(b, "z", h, sizeof(float) * (size_t)n));
  CHECK(h[n - 1] == (float)(n - 1) * 0.5f);
  CHECK(w.deletes == 1);
  gk_close(b);
  CHECK(w.deletes == 1);
  free(h);
}

static void test_import(void) {
  gk_ctx *g = gk_open("cuda");
  if (!g) { CHECK(0); return; }
  /* a 2-d f64 tensor at byte_offset 8 with explicit C strides */
  enum { R = 33, C = 31 };
  double *h = malloc(sizeof(double) * (R * C + 1));
  for (int k = 0; k < R * C + 1; k++) h[k] = urand() * 10 - 5;
  producer p;
  make(&p, upload(h, sizeof(double) * (R * C + 1)), kDLFloat, 64, 2, (int64_t[]){R, C});
  p.owned = p.t.dl_tensor.data;
  p.t.dl_tensor.byte_offset = sizeof(double);
  p.strides[0] = C; p.strides[1] = 1;
  p.t.dl_tensor.strides = p.strides;
  OK(g, gk_from_dlpack(g, "m", &p.t));
  OK(g, gk_eval(g, "r = sum(rows(m)); c = sum(cols(m)); t = transpose(m)"));
  double r[R], c[C], tt[R * C];
  OK(g, gk_get(g, "r", r, sizeof r));
  OK(g, gk_get(g, "c", c, sizeof c));
  OK(g, gk_get(g, "t", tt, sizeof tt));
  int bad = 0;
  const double *m = h + 1;
  for (int i = 0; i < R; i++) {
    double acc = 0;
    for (int j = 0; j < C; j++) { acc += m[i * C + j]; if (tt[j * R + i] != m[i * C + j]) bad++; }
    if (!close_to(r[i], acc, 1e-12)) bad++;
  }
  for (int j = 0; j < C; j++) {
    double acc = 0;
    for (int i = 0; i < R; i++) acc += m[i * C + j];
    if (!close_to(c[j], acc, 1e-12)) bad++;
  }
  CHECK(bad == 0);
  CHECK(p.deletes == 0);
  OK(g, gk_unset(g, "m"));
  CHECK(p.deletes == 1);
  /* i32 at a 4-byte offset: kernels cannot use vector loads */
  int32_t hi[1001];
  for (int k = 0; k < 1001; k++) hi[k] = (int32_t)(urand() * 2000) - 1000;
  producer q;
  make(&q, upload(hi, sizeof hi), kDLInt, 32, 1, (int64_t[]){1000});
  q.owned = q.t.dl_tensor.data;
  q.t.dl_tensor.byte_offset = 4;
  OK(g, gk_from_dlpack(g, "v", &q.t));
  OK(g, gk_eval(g, "sv = sum(v); pv = scan(v)"));
  int64_t sv = 0, pv[1000];
  OK(g, gk_get(g, "sv", &sv, sizeof sv));
  OK(g, gk_get(g, "pv", pv, sizeof pv));
  int64_t acc = 0; bad = 0;
  for (int k = 0; k < 1000; k++) { acc += hi[k + 1]; if (pv[k] != acc) bad++; }
  CHECK(sv == acc && bad == 0);
  /* rejections release once and leave the variable alone */
  producer e;
  CUdeviceptr scratch = upload(hi, sizeof hi);
  make(&e, scratch, kDLInt, 32, 1, (int64_t[]){1000});
  e.t.dl_tensor.device.device_type = kDLCPU;
  CHECK_RC(g, gk_from_dlpack(g, "v", &e.t), GK_EMISUSE);
  CHECK(e.deletes == 1);
  CHECK(strstr(gk_errmsg(g), "cannot be used by the cuda backend") != NULL);
  make(&e, scratch, kDLInt, 32, 1, (int64_t[]){1000});
  e.t.dl_tensor.byte_offset = 2;
  CHECK_RC(g, gk_from_dlpack(g, "v", &e.t), GK_EMISUSE);
  CHECK(e.deletes == 1);
  make(&e, scratch, kDLInt, 32, 1, (int64_t[]){1000});
  e.t.dl_tensor.device.device_id = 1;   /* the context runs on device 0 */
  CHECK_RC(g, gk_from_dlpack(g, "v", &e.t), GK_EMISUSE);
  CHECK(e.deletes == 1);
  CHECK(strstr(gk_errmsg(g), "on CUDA device 1") != NULL);
  make(&e, scratch, kDLInt, 32, 2, (int64_t[]){10, 100});
  e.strides[0] = 1; e.strides[1] = 10; e.t.dl_tensor.strides = e.strides;
  CHECK_RC(g, gk_from_dlpack(g, "v", &e.t), GK_EMISUSE);
  CHECK(e.deletes == 1);
  OK(g, gk_eval(g, "sv2 = sum(v)"));
  int64_t sv2 = 0;
  OK(g, gk_get(g, "sv2", &sv2, sizeof sv2));
  CHECK(sv2 == sv);
  CHECK(q.deletes == 0);
  gk_close(g);
  CHECK(q.deletes == 1);
  cu.free(scratch);
  free(h);
}

/* a kernel's data-dependent error (hist's range from data holding NaN) is
** the statement's: it is computed when it runs, fails there and binds
** nothing (issue 12 item 5) */
static void test_kernel_error(const char *backend) {
  gk_ctx *g = gk_open(backend);
  if (!g) { CHECK(0); return; }
  OK(g, gk_eval(g, "x = [1.0, 2.0, 3.0]; y = x / (x - 2.0) * 0.0"));
  int64_t h[2] = {7, 7};
  CHECK_RC(g, gk_eval(g, "h = hist(y, 2)"), GK_EVALUE);
  CHECK(strstr(gk_errmsg(g), "not finite") != NULL);
  CHECK_RC(g, gk_get(g, "h", h, sizeof h), GK_EMISUSE);   /* never bound */
  CHECK(h[0] == 7 && h[1] == 7);
  OK(g, gk_eval(g, "h2 = hist(x, 2)"));
  OK(g, gk_get(g, "h2", h, sizeof h));
  CHECK(h[0] == 1 && h[1] == 2);
  gk_close(g);
}

/* ------------------------------------------------ one launch, run again */

/* A whole-array reduction of more than one block leaves its temp (partials,
** and the counter its last block resets) as the next run of the same launch
** needs it; so does a softmax of few long rows over the whole grid (its
** barriers end at count 0).  The same statements, run again and again on
** fresh data, over 20 sizes and back to the first, give the double
** references every time: the test a backend that keeps such temps between
** runs (branch keep-temps, NOTES.md session 27) must pass. */
static void test_rerun(void) {
  static const int64_t ns[] = {1000003, 262147, 1048577, 33001, 131071, 8193,   65537,  500009, 12289, 200003,
                               16385,   99991,  2000003, 40961, 77777,  300007, 180181, 24577,  600011, 9001};
  enum { NN = sizeof ns / sizeof ns[0] };
  gk_ctx *g = gk_open("cuda");
  if (!g) { CHECK(0); return; }
  float *x = malloc(sizeof(float) * 2000003);
  int wrong = 0;
  for (int round = 0; round < 3; round++)
    for (int k = 0; k < NN; k++) {
      const int64_t n = ns[(k * 7 + round) % NN];
      double ref = 0, se = 0;
      float rm = -INFINITY;
      int64_t ri = 0;
      for (int64_t j = 0; j < n; j++) {
        x[j] = (float)(urand() * 8.0 - 4.0);
        if (x[j] > rm) { rm = x[j]; ri = j; }
      }
      for (int64_t j = 0; j < n; j++) { ref += x[j]; se += exp((double)x[j] - (double)rm); }
      OK(g, gk_set(g, "x", GK_F32, 1, &n, x));
      OK(g, gk_eval(g, "s = sum(x); m = max(x); i = argmax(x); e = sum(exp(x - max(x)))"));
      float s = 0, m = 0, e = 0;
      int64_t i = -1;
      OK(g, gk_get(g, "s", &s, sizeof s));
      OK(g, gk_get(g, "m", &m, sizeof m));
      OK(g, gk_get(g, "i", &i, sizeof i));
      OK(g, gk_get(g, "e", &e, sizeof e));
      if (!close_to(s, ref, 1e-5) || m != rm || i != ri || !close_to(e, se, 1e-5)) {
        if (!wrong++) printf("rerun: n %lld round %d: sum %.9g (%.9g) max %g (%g) argmax %lld (%lld) sum-exp %.9g (%.9g)\n",
                             (long long)n, round, s, ref, m, rm, (long long)i, (long long)ri, e, se);
      }
    }
  CHECK(wrong == 0);
  /* few long rows: softmax over the whole grid (gk_row_grid) */
  static const int64_t sh[][2] = {{1, 1000003}, {3, 200003}, {2, 65537}, {5, 40001}};
  float *p = malloc(sizeof(float) * 1000003);
  wrong = 0;
  for (int round = 0; round < 3; round++)
    for (int k = 0; k < 4; k++) {
      const int64_t r = sh[k][0], c = sh[k][1];
      for (int64_t j = 0; j < r * c; j++) x[j] = (float)(urand() * 16.0 - 8.0);
      OK(g, gk_set(g, "m", GK_F32, 2, sh[k], x));
      OK(g, gk_eval(g, "p = softmax(rows(m))"));
      OK(g, gk_get(g, "p", p, sizeof(float) * (size_t)(r * c)));
      for (int64_t i = 0; i < r; i++) {
        const float *xr = x + i * c, *pr = p + i * c;
        double mx = -INFINITY, se = 0;
        for (int64_t j = 0; j < c; j++) mx = xr[j] > mx ? xr[j] : mx;
        for (int64_t j = 0; j < c; j++) se += exp((double)xr[j] - mx);
        for (int64_t j = 0; j < c; j++) {
          const double want = exp((double)xr[j] - mx) / se;
          if (fabs(pr[j] - want) > 1e-5 * want + 1e-12) {
            if (!wrong++) printf("rerun: softmax %lldx%lld round %d: [%lld, %lld] %.9g (%.9g)\n", (long long)r,
                                 (long long)c, round, (long long)i, (long long)j, pr[j], want);
            break;
          }
        }
      }
    }
  CHECK(wrong == 0);
  free(p);
  free(x);
  gk_close(g);
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000003;
  if (n < 34) n = 34;
  test_kernel_error("cpu");   /* the reference behaviour */
  gk_ctx *probe = gk_open("cuda");
  if (!probe || !cu_load()) {
    gk_close(probe);
    printf("cuda: skipped: no usable GPU\n");
    return t_done();
  }
  gk_close(probe);
  test_borrow(n);
  test_export(n);
  test_import();
  test_kernel_error("cuda");
  test_rerun();
  cu.sync();
  return t_done();
}
