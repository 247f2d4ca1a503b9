/*
** tests/api/dl.h -- the DLPack v0.8 ABI as a consumer's own dlpack.h
** declares it (dmlc/dlpack).  gk.h passes these structs as void*.
*/
#ifndef GK_TEST_DL_H
#define GK_TEST_DL_H
#include <stdint.h>
#include <string.h>
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void *data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t *shape; int64_t *strides; uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor; void *manager_ctx; void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
enum { kDLCPU = 1, kDLCUDA = 2 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBool = 6 };

/* A producer's tensor whose deleter counts its calls and, when it wraps a
** tensor from gk, calls that one's deleter (a consumer's duty); owned data
** is given back with free_owned. */
typedef struct producer {
  DLManagedTensor t;
  int64_t shape[8], strides[8];
  int deletes;
  DLManagedTensor *inner;            /* a gk export passed on, or NULL */
  void *owned;                       /* data this program allocated, or NULL */
  void (*free_owned)(void *owned);
} producer;

static void producer_deleter(DLManagedTensor *self) {
  producer *p = (producer *)self->manager_ctx;
  p->deletes++;
  if (p->inner) { p->inner->deleter(p->inner); p->inner = NULL; }
  if (p->owned && p->free_owned) p->free_owned(p->owned);
  p->owned = NULL;
}

/* A compact tensor of ndim dims on device_type at data; lanes 1. */
static inline void dl_make(producer *p, void *data, int device_type, int code, int bits, int ndim, const int64_t *shape) {
  memset(p, 0, sizeof *p);
  p->t.dl_tensor.data = data;
  p->t.dl_tensor.device.device_type = device_type;
  p->t.dl_tensor.ndim = ndim;
  p->t.dl_tensor.dtype.code = (uint8_t)code;
  p->t.dl_tensor.dtype.bits = (uint8_t)bits;
  p->t.dl_tensor.dtype.lanes = 1;
  for (int i = 0; i < ndim; i++) p->shape[i] = shape[i];
  p->t.dl_tensor.shape = p->shape;
  p->t.manager_ctx = p;
  p->t.deleter = producer_deleter;
}
#endif
