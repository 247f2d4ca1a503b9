/*
** runtime/cpu_exp.h -- expf over an array with the C library's bits,
** vectorised where that can be checked (runtime/cpu_exp.c).
*/
#ifndef RT_CPU_EXP_H
#define RT_CPU_EXP_H

#include <stdint.h>

/* o[i] = expf(a[i]) for i < n, bit for bit; 0 (nothing written) when this
** cpu or C library is not the one the vector code reproduces. */
int cpu_expf(const float *a, float *o, int64_t n);

#endif /* RT_CPU_EXP_H */
