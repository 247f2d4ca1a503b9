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

/* One row into n columns' running values: l[q] = COMB(l[q], (double)v[q])
** for sum, prod, max, min (max / min with GK_COMB_MAX / MIN's NaN rule). */
void cpu_colsum_f32(const float *v, int64_t n, double *l);
void cpu_colsum_f64(const double *v, int64_t n, double *l);
void cpu_colprod_f32(const float *v, int64_t n, double *l);
void cpu_colprod_f64(const double *v, int64_t n, double *l);
void cpu_colmax_f32(const float *v, int64_t n, double *l);
void cpu_colmax_f64(const double *v, int64_t n, double *l);
void cpu_colmin_f32(const float *v, int64_t n, double *l);
void cpu_colmin_f64(const double *v, int64_t n, double *l);

/* The first q < n with v[q] == x (n - 1 when there is none). */
int64_t cpu_find_f64(const double *v, int64_t n, double x);

/* init folded with v[0..n) by integer max / min (exact in any order). */
int64_t cpu_max_i32(const int32_t *v, int64_t n, int64_t init);
int64_t cpu_min_i32(const int32_t *v, int64_t n, int64_t init);
int64_t cpu_max_i64(const int64_t *v, int64_t n, int64_t init);
int64_t cpu_min_i64(const int64_t *v, int64_t n, int64_t init);

/* argmax (mx) / argmin of v[0..n), 32 <= n < 2^31: the first extreme's
** index and value; 0 (nothing written) when a NaN is met or n is out of range. */
int cpu_argext_f32(const float *v, int64_t n, int mx, int64_t *at, double *val);

#endif /* RT_CPU_FOLD_H */
