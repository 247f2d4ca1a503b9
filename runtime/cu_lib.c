/*
** runtime/cu_lib.c -- loading the NVIDIA libraries with dlopen.
**
** This file owns the only process-wide state of the CUDA layer: the three
** tables of entry points (driver, NVRTC, cuBLAS), each filled exactly once
** under pthread_once and read-only afterwards, and the reason a load failed.
** It also turns library status codes into text, and holds small helpers
** (GK_DEBUG flags, a monotonic clock) shared by the other cu_*.c files.
**
** Nothing CUDA is linked or included: the prototypes are declared in cu.h
** with the values of the CUDA 13.0 headers, and symbols are looked up by the
** names the libraries export (the _v2 names where the driver has them).
*/
#define CU_INTERNAL
#include "cu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

cu_driver_api cu_drv;
cu_nvrtc_api cu_rtc;
cu_cublas_api cu_blas;

#define WHY_MAX 1024   /* longest load-failure reason kept */

typedef struct sym {
  const char *name;
  size_t off;          /* offset of the function pointer in its table */
  int optional;        /* 1: a missing symbol leaves the pointer NULL */
} sym;

#define DSYM(f) { #f, offsetof(cu_driver_api, f), 0 }
#define DSYM_OPT(f) { #f, offsetof(cu_driver_api, f), 1 }
static const sym drv_syms[] = {
  DSYM(cuGetErrorName), DSYM(cuGetErrorString), DSYM(cuInit), DSYM(cuDriverGetVersion),
  DSYM(cuDeviceGetCount), DSYM(cuDeviceGet), DSYM(cuDeviceGetName),
  DSYM(cuDeviceGetAttribute), DSYM(cuDeviceTotalMem_v2), DSYM(cuDevicePrimaryCtxRetain),
  DSYM(cuDevicePrimaryCtxRelease_v2), DSYM(cuCtxGetCurrent), DSYM(cuCtxSetCurrent),
  DSYM(cuStreamCreate), DSYM(cuStreamDestroy_v2), DSYM(cuStreamSynchronize), DSYM_OPT(cuStreamQuery),
  DSYM(cuMemAlloc_v2), DSYM(cuMemFree_v2), DSYM(cuMemcpyHtoDAsync_v2),
  DSYM(cuMemcpyDtoHAsync_v2), DSYM(cuMemcpyDtoDAsync_v2), DSYM(cuMemsetD8Async),
  DSYM(cuMemAllocHost_v2), DSYM(cuMemHostAlloc), DSYM(cuMemHostGetDevicePointer_v2), DSYM(cuMemFreeHost),
  DSYM_OPT(cuCtxSetFlags),
  DSYM(cuModuleLoadData), DSYM(cuModuleUnload), DSYM(cuModuleGetFunction),
  DSYM(cuFuncSetAttribute), DSYM(cuFuncGetAttribute), DSYM(cuLaunchKernel), DSYM_OPT(cuOccupancyMaxActiveClusters),
  DSYM_OPT(cuLaunchCooperativeKernel), DSYM_OPT(cuOccupancyMaxActiveBlocksPerMultiprocessor),
};
#define RSYM(f) { #f, offsetof(cu_nvrtc_api, f), 0 }
static const sym rtc_syms[] = {
  RSYM(nvrtcGetErrorString), RSYM(nvrtcVersion), RSYM(nvrtcGetNumSupportedArchs),
  RSYM(nvrtcGetSupportedArchs), RSYM(nvrtcCreateProgram), RSYM(nvrtcDestroyProgram),
  RSYM(nvrtcCompileProgram), RSYM(nvrtcGetProgramLogSize), RSYM(nvrtcGetProgramLog),
  RSYM(nvrtcGetPTXSize), RSYM(nvrtcGetPTX), RSYM(nvrtcGetCUBINSize), RSYM(nvrtcGetCUBIN),
};
#define BSYM(f, opt) { #f, offsetof(cu_cublas_api, f), opt }
static const sym blas_syms[] = {
  BSYM(cublasCreate_v2, 0), BSYM(cublasDestroy_v2, 0), BSYM(cublasSetStream_v2, 0),
  BSYM(cublasSetMathMode, 0), BSYM(cublasSgemm_v2, 0), BSYM(cublasDgemm_v2, 0),
  BSYM(cublasGetStatusString, 1),
};

/* One library's load state.  Written only inside its pthread_once routine. */
typedef struct lib {
  pthread_once_t once;
  void *handle;
  int ok;
  char why[WHY_MAX];
} lib;

static lib drv_lib = { PTHREAD_ONCE_INIT, NULL, 0, "" };
static lib rtc_lib = { PTHREAD_ONCE_INIT, NULL, 0, "" };
static lib blas_lib = { PTHREAD_ONCE_INIT, NULL, 0, "" };

/* Resolves every symbol of syms into table.  0, or -1 with the first
** missing name in why. */
static int resolve(lib *L, const char *libname, const sym *syms, size_t n, void *table) {
  for (size_t i = 0; i < n; i++) {
    void *p = dlsym(L->handle, syms[i].name);
    if (!p && !syms[i].optional) {
      snprintf(L->why, sizeof L->why, "%s lacks %s: the library is too old", libname,
               syms[i].name);
      return -1;
    }
    memcpy((char *)table + syms[i].off, &p, sizeof p);
  }
  return 0;
}

static void load_driver(void) {
  lib *L = &drv_lib;
  L->handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!L->handle) {
    snprintf(L->why, sizeof L->why, "libcuda.so.1 not found: no NVIDIA driver");
    return;
  }
  if (resolve(L, "libcuda.so.1", drv_syms, sizeof drv_syms / sizeof drv_syms[0], &cu_drv))
    return;
  L->ok = 1;
}

/* Tries the bare names (the loader's search path), then each name in
** $CUDA_HOME/lib64 and /usr/local/cuda/lib64.  On failure writes
** "<what> not found (looked in ...)" into L->why. */
static void *open_toolkit_lib(lib *L, const char *what, const char *const *names) {
  const char *dirs[2];
  int ndirs = 0;
  const char *home = getenv("CUDA_HOME");
  if (home && *home) dirs[ndirs++] = home;
  dirs[ndirs++] = "/usr/local/cuda";
  for (int i = 0; names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  for (int d = 0; d < ndirs; d++) {
    for (int i = 0; names[i]; i++) {
      char path[CU_PATH_MAX];
      if (snprintf(path, sizeof path, "%s/lib64/%s", dirs[d], names[i]) >= (int)sizeof path)
        continue;
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) return h;
    }
  }
  /* The reason lists every place searched. */
  size_t o = (size_t)snprintf(L->why, sizeof L->why, "%s not found (looked in the library path", what);
  for (int d = 0; d < ndirs && o < sizeof L->why; d++)
    o += (size_t)snprintf(L->why + o, sizeof L->why - o, ", %s/lib64", dirs[d]);
  if (o < sizeof L->why) {
    o += (size_t)snprintf(L->why + o, sizeof L->why - o, " for");
    for (int i = 0; names[i] && o < sizeof L->why; i++)
      o += (size_t)snprintf(L->why + o, sizeof L->why - o, "%s %s", i ? "," : "", names[i]);
  }
  if (o < sizeof L->why)
    snprintf(L->why + o, sizeof L->why - o, "); install the CUDA toolkit or set CUDA_HOME");
  return NULL;
}

static void load_nvrtc(void) {
  static const char *const names[] = { "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                       "libnvrtc.so.11.2", NULL };
  lib *L = &rtc_lib;
  L->handle = open_toolkit_lib(L, "libnvrtc", names);
  if (!L->handle) return;
  if (resolve(L, "libnvrtc", rtc_syms, sizeof rtc_syms / sizeof rtc_syms[0], &cu_rtc)) return;
  L->ok = 1;
}

static void load_cublas(void) {
  static const char *const names[] = { "libcublas.so", "libcublas.so.13", "libcublas.so.12",
                                       "libcublas.so.11", NULL };
  lib *L = &blas_lib;
  L->handle = open_toolkit_lib(L, "libcublas", names);
  if (!L->handle) return;
  if (resolve(L, "libcublas", blas_syms, sizeof blas_syms / sizeof blas_syms[0], &cu_blas))
    return;
  L->ok = 1;
}

static int loaded(lib *L, void (*init)(void), char *why, size_t len) {
  if (pthread_once(&L->once, init) != 0) {
    if (why && len) snprintf(why, len, "pthread_once failed");
    return -1;
  }
  if (L->ok) return 0;
  if (why && len) snprintf(why, len, "%s", L->why);
  return -1;
}

int cu_load_driver(char *why, size_t len) { return loaded(&drv_lib, load_driver, why, len); }
int cu_load_nvrtc(char *why, size_t len) { return loaded(&rtc_lib, load_nvrtc, why, len); }
int cu_load_cublas(char *why, size_t len) { return loaded(&blas_lib, load_cublas, why, len); }

static const char *blas_name(int rc) {
  switch (rc) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return NULL;
  }
}

void cu_status_text(int lib, int rc, char *buf, size_t len) {
  const char *name = NULL, *text = NULL;
  switch (lib) {
    case CU_LIB_drv:
      if (cu_drv.cuGetErrorName && cu_drv.cuGetErrorName(rc, &name) != 0) name = NULL;
      if (cu_drv.cuGetErrorString && cu_drv.cuGetErrorString(rc, &text) != 0) text = NULL;
      if (name && text) snprintf(buf, len, "%s (%s)", name, text);
      else snprintf(buf, len, "CUresult %d", rc);
      return;
    case CU_LIB_rtc:
      if (cu_rtc.nvrtcGetErrorString) name = cu_rtc.nvrtcGetErrorString(rc);
      if (name) snprintf(buf, len, "%s", name);
      else snprintf(buf, len, "nvrtcResult %d", rc);
      return;
    default:
      name = blas_name(rc);
      if (cu_blas.cublasGetStatusString) text = cu_blas.cublasGetStatusString(rc);
      if (name && text) snprintf(buf, len, "%s (%s)", name, text);
      else if (name) snprintf(buf, len, "%s", name);
      else snprintf(buf, len, "cublasStatus %d", rc);
      return;
  }
}

int cu_sticky(int rc) {
  switch (rc) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
      return 1;
    default:
      return 0;
  }
}

/* GK_DEBUG is a comma-separated list: src, cache, all. */
int cu_debug_flags(void) {
  const char *s = getenv("GK_DEBUG");
  int f = 0;
  if (!s) return 0;
  while (*s) {
    size_t n = strcspn(s, ",");
    if ((n == 3 && !strncmp(s, "src", 3)) || (n == 4 && !strncmp(s, "cuda", 4))) f |= CU_DEBUG_SRC;
    else if (n == 5 && !strncmp(s, "cache", 5)) f |= CU_DEBUG_CACHE;
    else if ((n == 3 && !strncmp(s, "all", 3)) || (n == 1 && s[0] == '1'))
      f |= CU_DEBUG_SRC | CU_DEBUG_CACHE;
    s += n;
    if (*s == ',') s++;
  }
  return f;
}

double cu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
