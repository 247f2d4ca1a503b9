/*
** api/dlpack.h -- the DLPack v0.8 ABI (https://github.com/dmlc/dlpack), the
** subset gk exchanges: DLDevice, DLDataType, DLTensor, DLManagedTensor.
**
** Written from the DLPack specification so that gk does not depend on a
** third-party header; the layouts are the ABI of dlpack.h v0.8 (DLPACK_VERSION
** 80, DLPACK_ABI_VERSION 1) and must not change.  Internal to api/: gk.h
** passes these structs as void* so that a host program may include the real
** dlpack.h (PyTorch's, CuPy's) next to gk.h without a clash.
*/
#ifndef GK_DLPACK_H
#define GK_DLPACK_H

#include <stdint.h>

#define GK_DLPACK_VERSION 80

/* Device types.  Only the values gk uses or recognises are listed; the
** numbers are DLPack's. */
typedef enum {
  kDLCPU = 1,          /* system memory */
  kDLCUDA = 2,         /* CUDA device memory */
  kDLCUDAHost = 3,     /* pinned host memory (cudaMallocHost) */
  kDLCUDAManaged = 13  /* CUDA managed memory */
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;   /* device ordinal; 0 for kDLCPU */
} DLDevice;

/* Type codes.  ORDER: DLPack's numbers. */
typedef enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
} DLDataTypeCode;

typedef struct {
  uint8_t code;        /* DLDataTypeCode */
  uint8_t bits;        /* bits per lane: 8 for bool, 32, 64 */
  uint16_t lanes;      /* 1 for every gk dtype */
} DLDataType;

typedef struct {
  void *data;          /* base pointer (host or device address) */
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;      /* ndim entries */
  int64_t *strides;    /* in elements; NULL = compact C order */
  uint64_t byte_offset;/* from data to the first element */
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;   /* the producer's state */
  void (*deleter)(struct DLManagedTensor *self); /* called once by the consumer; may be NULL */
} DLManagedTensor;

#endif /* GK_DLPACK_H */
