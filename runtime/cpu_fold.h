/*
** runtime/cpu_fold.h -- vectorised float folds of the cpu backend
** (runtime/cpu_fold.c): the bits of runtime/cpu.c's 8-lane loops.
*/
#ifndef RT_CPU_FOLD_H
#define RT_CPU_FOLD_H

#include <stdint.h>

/* init folded with v[0..n) in 8 double lanes (sum, prod). */
double cpu_sum_f32(const float *v, int64_t n, double init);
double cpu_sum_f64(const double *v, int64_t n, double init);
double cpu_prod_f32(const float *v, int64_t n, double init);
double cpu_prod_f64(const double *v, int64_t n, double init);
/* out[g] = cpu_sum_f32(v + g * n, n, 0) for g < 4, in one pass. */
void cpu_sum4_f32(const float *v, int64_t n, double *out);
/* *acc folded with v[0..n) (max, min); 0 (nothing written) when a NaN is met,
** or (floats) when the extreme is a zero. */
int cpu_max_f32(const float *v, int64_t n, double *acc);
int cpu_min_f32(const float *v, int64_t n, double *acc);
int cpu_max_f64(const double *v, int64_t n, double *acc);
int cpu_min_f64(const double *v, int64_t n, double *acc);
/* The run's mean and sum of squared deviations from it (n > 0). */
void cpu_var_f32(const float *v, int64_t n, double *mean, double *m2);
void cpu_var_f64(const double *v, int64_t n, double *mean, double *m2);

#endif /* RT_CPU_FOLD_H */
