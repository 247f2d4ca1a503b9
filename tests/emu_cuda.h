/*
** tests/emu_cuda.h -- just enough CUDA for the kernels/ headers to compile on the
** host: what every kernel emulation (the tests/..._emu.cpp files) shares.  Keywords
** vanish (__shared__ becomes static: one block runs at a time), the bit
** casts and cached loads are plain C++, fences and the integer atomics (add, exchange)
** are what a single host thread at a time makes them.  Each emulation adds
** its own threads (pthreads: tests/emu_pthreads.h; fibres) and with them
** __syncthreads, __syncwarp, the shuffles and the votes.
*/
#ifndef GK_EMU_CUDA_H
#define GK_EMU_CUDA_H
#include <cstring>
#define __CUDACC__ 1
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __restrict__
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
static inline void __threadfence() {}
static inline void __threadfence_system() {}
static inline unsigned atomicAdd(unsigned *p, unsigned v) { unsigned o = *p; *p += v; return o; }
static inline unsigned atomicExch(unsigned *p, unsigned v) { unsigned o = *p; *p = v; return o; }
static inline int __ffs(unsigned x) { return x ? __builtin_ctz(x) + 1 : 0; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
static inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
struct float4 { float x, y, z, w; };
struct float2 { float x, y; };
struct double2 { double x, y; };
struct int4 { int x, y, z, w; };
struct int2 { int x, y; };
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
template <class T> T __ldcs(const T *p) { return *p; }
template <class T> T __ldcg(const T *p) { return *p; }
template <class T> T __ldg(const T *p) { return *p; }
template <class T> T __ldlu(const T *p) { return *p; }
template <class T> void __stcg(T *p, T v) { *p = v; }
template <class T> void __stcs(T *p, T v) { *p = v; }
static inline size_t __cvta_generic_to_shared(const void *p) { return (size_t)p; }
#endif
