/*
** tests/api/dl.h -- the DLPack v0.8 ABI as a consumer's own dlpack.h
** declares it (dmlc/dlpack).  gk.h passes these structs as void*.
*/
#ifndef GK_TEST_DL_H
#define GK_TEST_DL_H
#include <stdint.h>
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
#endif
