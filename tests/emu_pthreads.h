/*
** tests/emu_pthreads.h -- a block as pthreads (tests/tile_emu.cpp,
** colscan_emu.cpp, rowscan_emu.cpp): one thread a CUDA thread, a barrier
** for __syncthreads (emu_bar, sized by the emulation to its block), a
** barrier a warp (emu_wbar) under the shuffles: every lane writes its slot,
** waits for the warp, reads the source lane's slot and waits again (blocks
** of whole warps).  The emulation sets blockIdx / gridDim / blockDim and
** the barriers before it starts a block's threads.
*/
#ifndef GK_EMU_PTHREADS_H
#define GK_EMU_PTHREADS_H
#include <pthread.h>
#include "emu_cuda.h"
struct dim3 { unsigned x = 0, y = 1, z = 1; };
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static pthread_barrier_t emu_bar;
static inline void __syncthreads() { pthread_barrier_wait(&emu_bar); }
static long long emu_slot[32][32];
static pthread_barrier_t emu_wbar[32];
template <class T> static T emu_exchange(T v, unsigned src) {
  static_assert(sizeof(T) <= sizeof(long long), "a shuffle moves one word");
  const unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31;
  long long s = 0;
  memcpy(&s, &v, sizeof v);
  emu_slot[w][l] = s;
  pthread_barrier_wait(&emu_wbar[w]);
  T r;
  memcpy(&r, &emu_slot[w][src & 31], sizeof r);
  pthread_barrier_wait(&emu_wbar[w]);
  return r;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int m, int = 32) { return emu_exchange(v, (threadIdx.x & 31) ^ m); }
template <class T> T __shfl_sync(unsigned, T v, int src, int width = 32) {
  return emu_exchange(v, ((threadIdx.x & 31) & ~(width - 1)) | (src & (width - 1)));
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
  const unsigned l = threadIdx.x & 31;
  return emu_exchange(v, (l & (width - 1)) < d ? l : l - d);
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
  const unsigned l = threadIdx.x & 31;
  return emu_exchange(v, (l & (width - 1)) + d >= (unsigned)width ? l : l + d);
}
#endif
