/*
** runtime/cu.h -- the CUDA device layer of gk.
**
** A thin C layer between the cuda backend and the NVIDIA libraries.  It knows
** nothing about gk's IR or language.  It
**   - loads the driver (libcuda.so.1), NVRTC and cuBLAS with dlopen at first
**     use: nothing CUDA is linked and no CUDA header is included, so gk
**     builds on a machine without the toolkit;
**   - opens one device (CUDA_VISIBLE_DEVICES, then GK_DEVICE = ordinal among
**     the visible ones) on its primary context, with one stream;
**   - compiles CUDA C source with NVRTC and caches the result in memory and
**     on disk ($XDG_CACHE_HOME/gk or ~/.cache/gk; GK_CACHE=0 turns the disk
**     level off);
**   - allocates device memory through a caching allocator;
**   - copies, launches, synchronises, and runs cuBLAS gemm.
**
** Conventions:
**   - Fallible calls return GK_OK or a GK_E* status (gk.h); the message of
**     the most recent failure is cu_errmsg(d), owned by the device.
**   - Every driver/NVRTC/cuBLAS call goes through one checking macro that
**     records the call, file, line and the library's message.  A sticky
**     driver error (illegal address, launch failure, ...) marks the device
**     dead: every later call fails at once with GK_EDEVICE and
**     "the CUDA device is in an unrecoverable state after <first error>;
**     restart gk".
**   - A cu_dev is used by one thread at a time; different cu_devs are
**     independent and may live on different threads (they share the driver's
**     primary context of their device).  The only process-wide state is the
**     set of dlopen'ed library handles, loaded once under pthread_once.
**   - Nothing here calls exit() or abort().
**   - GK_DEBUG=src (or all) prints every compiled source and NVRTC log to
**     stderr; GK_DEBUG=cache reports kernel cache hits and misses.
*/
#ifndef GK_CU_H
#define GK_CU_H

#include <stddef.h>
#include <stdint.h>
#include "../gk.h"

typedef struct cu_dev cu_dev;            /* an open device: stream, caches */
typedef struct cu_fn cu_fn;              /* a loaded kernel; owned by its cu_dev */
typedef unsigned long long cu_ptr;       /* a device address (CUdeviceptr) */

/* ---------------------------------------------------------------------------
** Kernel headers handed to NVRTC in memory.  The build generates
** build/kernels_embed.c from kernels/<name>.cuh with these three definitions;
** a kernel source may #include "<name>" for any of them.  Their text is part
** of the kernel cache key.
*/
extern const int gk_kernel_header_count;
extern const char *const gk_kernel_header_names[];
extern const char *const gk_kernel_header_srcs[];

/* ---------------------------------------------------------------------------
** Opening and closing.
*/

/* Cheap probe: returns 1 when the driver loads and at least one device is
** visible, else 0 with the reason in why (may be NULL).  Does not load NVRTC
** and creates no context. */
int cu_available(char *why, size_t len);

/* Opens the device GK_DEVICE (default 0) among the visible ones: retains its
** primary context, creates the stream, loads NVRTC, resolves the disk cache
** directory.  On success *out owns everything and GK_OK is returned.  On
** failure *out is NULL, GK_EDEVICE is returned and err (may be NULL) holds a
** message naming what is missing, e.g. "libcuda.so.1 not found: no NVIDIA
** driver", "no CUDA device", "libnvrtc not found (looked in ...)". */
int cu_open(cu_dev **out, char *err, size_t errlen);

/* Waits for the stream, frees every allocation (cached and in use), unloads
** the modules, destroys the stream and cuBLAS handle, releases the primary
** context.  Safe on a dead device; NULL is a no-op.  Every cu_fn and cu_ptr
** of d is invalid afterwards. */
void cu_close(cu_dev *d);

/* The message of the most recent failed call on d; "" if none.  Owned by d,
** valid until the next call on d. */
const char *cu_errmsg(cu_dev *d);

/* 1 when a sticky error has made d unusable. */
int cu_dead(cu_dev *d);

/* ---------------------------------------------------------------------------
** Device attributes (read at open; never fail).
*/
int cu_sm_count(cu_dev *d);          /* streaming multiprocessors */
int cu_ordinal(cu_dev *d);           /* the device's ordinal among the visible ones */
int cu_arch(cu_dev *d);              /* compute capability as 10*major+minor, e.g. 90 */
size_t cu_max_smem(cu_dev *d);       /* max dynamic shared memory per block, opt-in */
size_t cu_total_mem(cu_dev *d);      /* device memory in bytes */
int cu_nvrtc_version(cu_dev *d);     /* 1000*major + 10*minor, e.g. 13000 */
int cu_nvrtc_lib_version(void);      /* the same without a device: 0 when NVRTC is not found */
/* 1 when the NVRTC option opt (n bytes) leaves NVRTC's output as it is
** (--no-cache): not part of a kernel's cache key. */
int cu_nvrtc_opt_neutral(const char *opt, size_t n);
/* One line such as "NVIDIA H200 (sm_90, 132 SMs, 140.4 GiB), NVRTC 13.0,
** kernel cache /home/u/.cache/gk".  Owned by d. */
const char *cu_describe(cu_dev *d);

/* ---------------------------------------------------------------------------
** Memory.  cu_alloc rounds up to a size class (powers of two from
** CU_ALLOC_MIN to CU_ALLOC_SMALL_MAX, multiples of CU_ALLOC_LARGE_GRAIN
** above) and reuses freed blocks.  Work on the stream is in order, so a
** block freed after a launch that uses it may be handed out again at once.
*/
#define CU_ALLOC_MIN          256u            /* smallest class: alignment of every block */
#define CU_ALLOC_SMALL_MAX    (1u << 20)      /* power-of-two classes up to 1 MiB */
#define CU_ALLOC_LARGE_GRAIN  (2u << 20)      /* the driver's own granularity above */
#define CU_ALLOC_LARGE_SLACK  8               /* reuse a cached block up to 1/8 larger */

/* Allocates at least `bytes` (0 allowed) aligned to 256.  When the driver is
** out of memory the cache is emptied and the allocation tried once more;
** then GK_ENOMEM with a message giving the bytes asked for and the bytes gk
** holds (in use + cached).  Other failures: GK_EDEVICE. */
int cu_alloc(cu_dev *d, size_t bytes, cu_ptr *p);

/* Returns p (from cu_alloc on d) to the cache.  0 and unknown pointers are
** ignored. */
void cu_free(cu_dev *d, cu_ptr p);

/* Gives every cached (free) block back to the driver. */
void cu_trim(cu_dev *d);

/* Bytes in live blocks and in cached free blocks (after rounding). */
void cu_mem_stats(cu_dev *d, size_t *in_use, size_t *cached);

/* Small results in page-locked host memory mapped into the device: a
** kernel writes them straight to the host, so reading one back is a wait
** for the stream and a memcpy -- no device-to-host copy queued behind the
** kernel (a second trip through the copy engine).  cu_alloc_mapped hands
** out a block of at most CU_MAPPED_MAX bytes (aligned to CU_ALLOC_MIN)
** whose device address works wherever a cu_alloc block does (kernels,
** copies, memsets); cu_free returns it; cu_download of it reads it in
** place.  Returns GK_OK, or GK_ENOMEM when the mapped pool is used up or
** could not be made (the caller then uses cu_alloc). */
#define CU_MAPPED_MAX   256u          /* one block */
#define CU_MAPPED_SLOTS 256u          /* blocks in the pool (64 KiB) */
int cu_alloc_mapped(cu_dev *d, size_t bytes, cu_ptr *p);
/* 1 when p lies in d's mapped pool. */
int cu_is_mapped(cu_dev *d, cu_ptr p);
/* Completion flags for kernels whose results are mapped.  The mapped pool
** ends in one flag word; a kernel given its device address (the reduce
** kernels' last parameters, rt_prep.doneflag) writes its launch's sequence
** number there after its results, with __threadfence_system() between.
** Kernels on the stream run in order, so the word only grows.  cu_download
** of a mapped block marked with a sequence number spins until the word has
** reached it, instead of waiting for the stream (on the lent H200 host a
** one-block sum into mapped memory took 9.1 us that way against 10.6 with
** cuStreamSynchronize); every few thousand spins it asks the stream
** (cuStreamQuery), so a kernel that failed is reported, not waited for.
** cu_done_next: the flag's device address (0 where there is no mapped pool
** or no cuStreamQuery: the kernel then writes nothing) and, in *seq, the
** number for the next launch.  cu_done_mark: block p (mapped) is written
** once the word reaches seq (after a successful launch); cu_free forgets. */
cu_ptr cu_done_next(cu_dev *d, unsigned *seq);
void cu_done_mark(cu_dev *d, cu_ptr p, unsigned seq);
/* Enqueues a copy of n bytes from src, a block of the mapped pool, to dst
** (device memory): it reads src when the work queued before it is done. */
int cu_copy_mapped_async(cu_dev *d, cu_ptr dst, cu_ptr src, size_t n);

/* Driver calls made through d since open (every CU_CALL on d), and those
** of the kinds that cost microseconds. */
typedef struct cu_cstats {
  uint64_t calls;       /* every driver, NVRTC and cuBLAS call */
  uint64_t launches;    /* cuLaunchKernel */
  uint64_t copies;      /* cuMemcpy*Async */
  uint64_t memsets;     /* cuMemsetD8Async */
  uint64_t syncs;       /* cuStreamSynchronize */
  uint64_t mapped_reads;/* cu_download answered from mapped memory */
  double launch_s;      /* host time inside cuLaunchKernel, and */
  double sync_s;        /* inside cuStreamSynchronize (timed only under GK_CU_STATS=1) */
} cu_cstats;
void cu_call_stats(cu_dev *d, cu_cstats *st);

/* ---------------------------------------------------------------------------
** Copies and the stream.  Everything is enqueued on d's one stream.
*/

/* Host to device; returns when src may be reused (src may be pageable). */
int cu_upload(cu_dev *d, cu_ptr dst, const void *src, size_t n);

/* Device to host; waits for the stream first, so it sees all earlier work,
** and surfaces any asynchronous error. */
int cu_download(cu_dev *d, void *dst, cu_ptr src, size_t n);

/* Enqueues a device-to-device copy of n bytes (the cuda backend's copy-rate
** yardstick for profiles). */
int cu_copy_d2d_async(cu_dev *d, cu_ptr dst, cu_ptr src, size_t n);

/* Enqueues setting n bytes at p to `byte`. */
int cu_memset_async(cu_dev *d, cu_ptr p, int byte, size_t n);

/* Waits until the stream is idle; returns the first asynchronous error
** (a sticky one marks d dead). */
int cu_sync(cu_dev *d);

/* ---------------------------------------------------------------------------
** Kernels.
*/

/* Compile options given to NVRTC besides the architecture.  No fast math,
** and no contraction of a * b + c into one fma (--fmad=false): elementwise
** results must be the CPU backend's bits (kernels that want an fma say
** __fma_rn).  -minimal: NVRTC leaves out the runtime-API, texture and
** device-launch declarations no gk kernel uses (a third of the front end's
** time on a small kernel).  Part of the cache key. */
#define CU_NVRTC_OPTIONS "--std=c++17", "-lineinfo", "--fmad=false", "-minimal"

/* Finds or builds the kernel `name` (declared extern "C" __global__) of the
** CUDA C source `src`.  The key is a 64-bit hash of (src, name, embedded
** headers, NVRTC version, options, device arch); memory hits compare the
** full source text and cost no allocation.  A miss looks in the disk cache,
** then compiles with NVRTC (CUBIN for the device's sm_XY; PTX for the
** newest supported compute_XY when NVRTC does not know the device).
** *fn stays valid until cu_close.  An NVRTC failure returns GK_EJIT with
** "NVRTC failed to compile kernel NAME (source written to FILE):\nLOG". */
int cu_kernel(cu_dev *d, const char *src, const char *name, cu_fn **fn);

/* Slow-compile notices: fn(ud, 0, kernel, ms) once a kernel's NVRTC compile
** has run for 500 ms (called on a watchdog thread while the compile goes
** on), then fn(ud, 1, kernel, total ms) when it ends (on the compiling
** thread).  Compiles under 500 ms say nothing.  NULL: none. */
void cu_set_compile_hook(cu_dev *d, void (*fn)(void *ud, int done, const char *kernel, double ms), void *ud);

/* Enqueues fn on the stream.  args[i] points at the i-th kernel parameter.
** shmem above 48 KiB is opted in automatically (up to cu_max_smem). */
int cu_launch(cu_dev *d, cu_fn *fn, unsigned gx, unsigned gy, unsigned gz,
              unsigned bx, unsigned by, unsigned bz, unsigned shmem, void **args);
/* cu_launch with every block of the grid resident at once (the blocks of a
** row wait for each other: kernels/gk_rows.cuh gk_row_grid), by
** cuLaunchCooperativeKernel; gy is lowered to what the device holds at once
** (the kernel strides over gy).  Where not even gx x 1 x gz blocks can be
** resident (no cooperative launch: the driver or the device; the kernel's
** registers or shared memory), it launches (1, gy, gz) plainly without the
** dynamic shared memory instead, which such a kernel must run without
** waiting between blocks (gk_row_grid streams its rows).  Never leaves a
** grid that could wait forever. */
int cu_launch_coop(cu_dev *d, cu_fn *fn, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned shmem, void **args);

/* Kernel cache counters of d since open. */
typedef struct cu_kstats {
  uint64_t mem_hits;      /* found in the memory table */
  uint64_t disk_hits;     /* loaded from the disk cache */
  uint64_t ship_hits;     /* loaded from the shipped kernels (cu_ship_dir) */
  uint64_t compiled;      /* compiled by NVRTC */
  double compile_ms;      /* total NVRTC time */
} cu_kstats;
void cu_kernel_stats(cu_dev *d, cu_kstats *st);

/* Compiles src with NVRTC for `arch` ("sm_90" gives a CUBIN, "compute_90"
** gives PTX) with CU_NVRTC_OPTIONS and the embedded headers.  Needs only
** NVRTC: no driver, no device.  On GK_OK *bin (malloc'd, *len bytes) holds
** the binary.  *log (may be NULL) receives a malloc'd NUL-terminated text:
** the NVRTC log (possibly empty) or, on failure, the log or the reason; the
** caller frees *bin and *log.  Returns GK_OK, GK_EJIT (compile error),
** GK_EDEVICE (NVRTC not found) or GK_ENOMEM. */
int cu_nvrtc_compile(const char *src, const char *name, const char *arch,
                     char **bin, size_t *len, char **log);

/* cu_nvrtc_build with the slow-compile watchdog: when note is not NULL and
** the compile runs past 500 ms, note(ud, 0, name, 500) is called from a
** watchdog thread while it runs, then note(ud, 1, name, total_ms) from the
** caller's thread when it ends (gk_config.compile's contract).  debug: the
** GK_DEBUG flags, or -1 to read them from the environment; *ms (may be
** NULL): the compile time. */
typedef void (*cu_note_fn)(void *ud, int done, const char *kernel, double ms);
int cu_nvrtc_build_noted(const char *src, const char *name, const char *arch, int debug, cu_note_fn note,
                         void *ud, char **bin, size_t *len, char **log, double *ms);

/* ---------------------------------------------------------------------------
** cuBLAS.  libcublas is loaded at the first call.
*/

/* Row-major C[m x n] = A[m x k] @ B[k x n] for t = GK_F32 or GK_F64, enqueued
** on the stream.  fp32 is exact fp32 unless tf32 != 0 allows TF32 tensor
** cores.  GK_EMISUSE for another dtype, GK_ELIMIT for a dimension above
** INT_MAX, GK_EDEVICE when libcublas is missing or fails. */
int cu_gemm(cu_dev *d, gk_dtype t, int64_t m, int64_t n, int64_t k,
            cu_ptr a, cu_ptr b, cu_ptr c, int tf32);

/* ---------------------------------------------------------------------------
** Hashing and the disk cache format, exposed so that they can be tested
** without a device.
**
** An entry is one file "<dir>/<key hash as 16 hex digits>.bin":
**   offset  0  magic "gkcubin\0"
**           8  u32 format version (CU_CACHE_FORMAT)
**          12  u32 arch (e.g. 90)
**          16  u32 NVRTC version (1000*major + 10*minor)
**          20  u32 payload kind (0 CUBIN, 1 PTX)
**          24  u64 key hash
**          32  u64 second, independent hash of the source (collision guard)
**          40  u64 payload length
**          48  u64 payload checksum (cu_hash64 of the payload)
**          56  u64 header checksum (cu_hash64 of bytes 0..55)
**          64  payload
** in host byte order.  It is written to a temporary file in the same
** directory and renamed.  Any entry that is short, corrupt or from another
** format, NVRTC version or arch is a miss.
*/
#define CU_CACHE_FORMAT     1
#define CU_CACHE_HEADER     64
#define CU_CACHE_MAX_ENTRY  (64u << 20)  /* larger files are not cache entries */
#define CU_PATH_MAX         1024         /* longest cache path we build */

typedef struct cu_cache_key {
  uint64_t hash;       /* the kernel key hash (file name) */
  uint64_t hash2;      /* independent hash of source and name */
  uint32_t arch;       /* 10*major+minor */
  uint32_t nvrtc;      /* 1000*major + 10*minor */
  uint32_t kind;       /* 0 CUBIN, 1 PTX */
} cu_cache_key;

/* A 64-bit hash of n bytes at p (xxh64-style: 32 bytes per round). */
uint64_t cu_hash64(const void *p, size_t n, uint64_t seed);

/* The key seed: everything besides a kernel's source and name that changes
** what NVRTC makes of it (cache format, NVRTC version, target such as
** "sm_90", options, the embedded headers). */
uint64_t cu_key_seed(int nvrtc, const char *arch_opt);
/* The cache key of kernel `name` of src (n bytes) under seed, for a device of
** arch (10*major+minor) and a payload kind (0 CUBIN, 1 PTX). */
void cu_kernel_key(cu_cache_key *k, uint64_t seed, const char *src, size_t n, const char *name, int arch,
                   int nvrtc, int kind);

/* The shipped kernels: a read-only directory of cache entries made at build
** time (`make kernels`: the standard kernel structures compiled ahead), looked
** up after the user's cache misses.  GK_KERNELS=0 turns it off, GK_KERNELS=DIR
** names it; else "gk-kernels" beside the binary that holds libgk (the gk
** executable or libgk.so), then "../lib/gk/kernels" from there (an install).
** Returns 1 with buf set when the directory exists, else 0 (buf = ""). */
int cu_ship_dir(char *buf, size_t len);

/* Resolves the disk cache directory into buf: none when GK_CACHE=0, else
** $XDG_CACHE_HOME/gk or $HOME/.cache/gk, created if missing.  Returns 1 when
** the directory exists and is writable, else 0 (buf = "": memory only). */
int cu_cache_dir(char *buf, size_t len);

/* Writes an entry atomically.  Returns 0, or -1 on any failure (silently). */
int cu_cache_write(const char *dir, const cu_cache_key *k, const void *payload, size_t n);

/* Reads the entry of k.  Returns 1 with *payload (malloc'd) and *n on a hit,
** 0 on a miss (absent, short, corrupt, other version/arch/NVRTC). */
int cu_cache_read(const char *dir, const cu_cache_key *k, void **payload, size_t *n);

/* The path of k's entry; 0, or -1 when it does not fit. */
int cu_cache_path(char *buf, size_t len, const char *dir, uint64_t hash);

/* The disk cache's size cap in bytes: GK_CACHE_MAX (MiB; default 512; 0 =
** none).  cu_cache_write trims after every write; a read hit marks its
** entry used (mtime). */
uint64_t cu_cache_cap(void);
/* Removes the least recently used entries (oldest mtime) of dir until their
** total size is at most 90% of cap, when it is over cap.  Returns how many
** were removed. */
int cu_cache_trim(const char *dir, uint64_t cap);

/* ---------------------------------------------------------------------------
** Internals shared by runtime/cu_*.c only (they define CU_INTERNAL before
** including this header).  The CUDA types are declared here by hand, with
** the values of cuda.h / nvrtc.h / cublas_api.h (CUDA 13.0); nothing CUDA is
** included.
*/
#ifdef CU_INTERNAL
#include <stdarg.h>

typedef int CUresult;                          /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
/* cuda.h's CUlaunchConfig (cuOccupancyMaxActiveClusters; no attributes passed) */
typedef struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream;
  void *attrs;
  unsigned numAttrs;
} CUlaunchConfig;
typedef int nvrtcResult;                       /* NVRTC_SUCCESS = 0 */
typedef struct _nvrtcProgram *nvrtcProgram;
typedef int cublasStatus_t;                    /* CUBLAS_STATUS_SUCCESS = 0 */
typedef struct cublasContext *cublasHandle_t;

enum {  /* CUresult values we act on */
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_NVLINK_UNCORRECTABLE = 220,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_ASSERT = 710,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  CUDA_ERROR_EXTERNAL_DEVICE = 911
};
enum {  /* CUdevice_attribute */
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
};
enum { CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
       CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
       CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14 };
enum { CU_STREAM_NON_BLOCKING = 1 };
enum { CU_MEMHOSTALLOC_PORTABLE = 1, CU_MEMHOSTALLOC_DEVICEMAP = 2 };
enum { CU_CTX_SCHED_AUTO = 0, CU_CTX_SCHED_SPIN = 1, CU_CTX_SCHED_YIELD = 2, CU_CTX_SCHED_BLOCKING_SYNC = 4 };
enum { NVRTC_ERROR_COMPILATION = 6 };
enum { CUBLAS_OP_N = 0, CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3 };

/* The driver entry points we use, by their exported (_v2 where it exists)
** names.  Each is looked up by its field name (drv_syms in cu_lib.c lists
** every field: add a field there too). */
typedef struct cu_driver_api {
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy_v2)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamQuery)(CUstream);      /* optional: may be NULL (then no completion flags) */
  CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync_v2)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemAllocHost_v2)(void **, size_t);
  CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
  CUresult (*cuMemHostGetDevicePointer_v2)(CUdeviceptr *, void *, unsigned);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuCtxSetFlags)(unsigned);     /* optional (CUDA 12.1): may be NULL */
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **, void **);
  CUresult (*cuOccupancyMaxActiveClusters)(int *, CUfunction, const CUlaunchConfig *);   /* optional (CUDA 12.0) */
  CUresult (*cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        CUstream, void **);                                 /* optional (CUDA 9.0) */
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);  /* optional (CUDA 6.5) */
} cu_driver_api;

/* NVRTC entry points; every field is listed in rtc_syms in cu_lib.c. */
typedef struct cu_nvrtc_api {
  const char *(*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int *, int *);
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int *);
  nvrtcResult (*nvrtcGetSupportedArchs)(int *);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                    const char *const *, const char *const *);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
} cu_nvrtc_api;

/* cuBLAS entry points; every field is listed in blas_syms in cu_lib.c. */
typedef struct cu_cublas_api {
  cublasStatus_t (*cublasCreate_v2)(cublasHandle_t *);
  cublasStatus_t (*cublasDestroy_v2)(cublasHandle_t);
  cublasStatus_t (*cublasSetStream_v2)(cublasHandle_t, CUstream);
  cublasStatus_t (*cublasSetMathMode)(cublasHandle_t, int);
  cublasStatus_t (*cublasSgemm_v2)(cublasHandle_t, int, int, int, int, int, const float *,
                                   const float *, int, const float *, int, const float *,
                                   float *, int);
  cublasStatus_t (*cublasDgemm_v2)(cublasHandle_t, int, int, int, int, int, const double *,
                                   const double *, int, const double *, int,
                                   const double *, double *, int);
  const char *(*cublasGetStatusString)(cublasStatus_t);   /* optional: may be NULL */
} cu_cublas_api;

/* Filled once by the loaders below; read-only afterwards. */
extern cu_driver_api cu_drv;
extern cu_nvrtc_api cu_rtc;
extern cu_cublas_api cu_blas;

/* Load each library once (pthread_once).  0 on success, else -1 with the
** reason (the same on every call) copied into why. */
int cu_load_driver(char *why, size_t len);
int cu_load_nvrtc(char *why, size_t len);
int cu_load_cublas(char *why, size_t len);

/* Which library a status came from, for cu_check. */
enum { CU_LIB_drv, CU_LIB_rtc, CU_LIB_blas };  /* named after the CU_CALL tokens */

/* Formats "NAME (description)" of a status of library lib into buf. */
void cu_status_text(int lib, int rc, char *buf, size_t len);

/* THE checking macro: every driver, NVRTC and cuBLAS call is written
** CU_CALL(d, drv|rtc|blas, function, args...).  It returns the status and,
** when it is not 0, records "function failed at FILE:LINE: NAME (text)" in
** d's error buffer (d may be NULL: nothing is recorded) and marks d dead on
** a sticky driver error. */
#define CU_CALL(d, lib, fn, ...) \
  cu_check((d), CU_LIB_##lib, (int)cu_##lib.fn(__VA_ARGS__), #fn, __FILE__, __LINE__)
int cu_check(cu_dev *d, int lib, int rc, const char *call, const char *file, int line);
/* The same call with no device to record into (NVRTC without a GPU,
** cu_nvrtc.c): the status alone, as CU_CALL(NULL, ...) gives it. */
#define CU_CALL0(lib, fn, ...) ((int)cu_##lib.fn(__VA_ARGS__))

/* 1 when driver status rc leaves the context unusable. */
int cu_sticky(int rc);

/* Records a formatted message as d's error; returns status. */
int cu_fail(cu_dev *d, int status, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;

/* GK_DEBUG flags, parsed from the environment. */
enum { CU_DEBUG_SRC = 1, CU_DEBUG_CACHE = 2 };
int cu_debug_flags(void);

/* $GK_NVRTC_OPTS (extra NVRTC options, appended), or NULL when unset or empty. */
const char *cu_nvrtc_env_opts(void);

/* The NVRTC core shared by cu_nvrtc_compile and cu_kernel: compiles for arch
** ("sm_90" -> CUBIN, "compute_90" -> PTX, NUL-terminated).  Same contract as
** cu_nvrtc_compile; *ms receives the compile time. */
int cu_nvrtc_build(const char *src, const char *name, const char *arch, int debug,
                   char **bin, size_t *len, char **log, double *ms);

/* A monotonic clock in seconds. */
double cu_now(void);
#endif /* CU_INTERNAL */

#endif /* GK_CU_H */
