/*
** runtime/cpu_mm.h -- the f32 matrix product with FMA micro-kernels
** (runtime/cpu_mm.c), called by host_matmul.
*/
#ifndef RT_CPU_MM_H
#define RT_CPU_MM_H

#include <stddef.h>
#include <stdint.h>

/* C[M x N] = A[M x K] B[K x N] (row-major f32), k blocks of kb, every
** multiply-add an fma; scratch through alloc / release (size in bytes).
** Returns 1 when done, 0 when the cpu has no FMA or scratch is short (C
** untouched: the caller's portable loop runs).  GK_CPU_ISA=1 caps it at the
** AVX2 kernel, 0 turns it off (tests compare the kernels' bits). */
int cpu_sgemm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K, int64_t kb,
              void *(*alloc)(size_t), void (*release)(void *, size_t));

#endif /* RT_CPU_MM_H */
