/*
** runtime/host_rng.c -- Philox4x32-10 and gk's rand/randn streams.
**
** This comment is the DEFINITION of gk's random numbers; the code is
** kernels/gk_scalar.h's (gk_philox, gk_rand, gk_randn), which the cuda
** backend's kernels include, so a seed gives the same numbers on every
** backend, for every request size, on every machine:
**
**   Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11; Random123):
**     round(c, k):  p0 = 0xD2511F53 * c0 (64-bit product), p1 = 0xCD9E8D57 * c2
**                   c' = ( hi32(p1) ^ c1 ^ k0,  lo32(p1),
**                          hi32(p0) ^ c3 ^ k1,  lo32(p0) )
**     bump(k):      k0 += 0x9E3779B9, k1 += 0xBB67AE85   (mod 2^32)
**     philox(c, k): 10 rounds; the key is bumped between rounds (9 bumps),
**                   the first round uses k itself.  Output = the final c.
**
**   Element c (uint64: c = stream offset + index) of a stream with 64-bit
**   seed s uses key k = (lo32(s), hi32(s)).
**   rand  (U[0,1) f32): w = philox((lo32(c/4), hi32(c/4), 0, 0), k)[c % 4];
**                       value = (float)(w >> 8) * 2^-24      (exact).
**   randn (N(0,1) f32): o = philox((lo32(c), hi32(c), 1, 0), k);
**                       u1 = ((o[0] >> 8) + 1) * 2^-24       (in (0,1])
**                       u2 =  (o[1] >> 8)      * 2^-24       (in [0,1))
**                       z  = sqrt(-2 log u1) * cos(2 pi u2)  in double,
**                       value = (float)z (round to nearest).
**   u1, u2 and the products are exact; only log, sqrt and cos round, in
**   double, so a backend whose double log/cos are within an ulp or two of
**   correctly rounded gives the same float except in astronomically rare
**   ties.  Four consecutive rand elements share one Philox call; every randn
**   element uses its own.
**
** Known answers (Random123 tests/kat_vectors), checked by test_host:
**   ctr 0,0,0,0 key 0,0 -> 6627e8d5 e169c58d bc57ac4c 9b00dbd8
**   ctr ff..ff  key ff..ff -> 408f276d 41c83b0e a20bc7c6 6d5451fd
**   ctr 243f6a88 85a308d3 13198a2e 03707344 key a4093822 299f31d0
**       -> d16cfe09 94fdcceb 5001e420 24126ea1
*/
#include "runtime/host.h"
#include "kernels/gk_scalar.h"   /* gk_philox, gk_rand, gk_randn: the definition both backends run */

#define RNG_GRAIN 65536 /* elements per parallel chunk: ~100 us of work */

float rng_uniform_at(uint64_t seed, uint64_t c) { return gk_rand(seed, c); }
float rng_normal_at(uint64_t seed, uint64_t c) { return gk_randn(seed, c); }

typedef struct rng_job {
  uint64_t seed, offset;
  float *out;
} rng_job;

/* Uniform elements [b, e) of a job: one Philox call per aligned group of 4. */
static void uniform_chunk(void *ctx, int64_t b, int64_t e) {
  rng_job *j = ctx;
  uint32_t key[2] = {(uint32_t)j->seed, (uint32_t)(j->seed >> 32)};
  int64_t i = b;
  while (i < e) {
    uint64_t c = j->offset + (uint64_t)i;
    uint64_t blk = c >> 2;
    gk_u32 o[4] = {(gk_u32)blk, (gk_u32)(blk >> 32), 0, 0};
    gk_philox(o, key[0], key[1]);
    for (unsigned w = (unsigned)(c & 3); w < 4 && i < e; w++, i++) j->out[i] = gk_u24(o[w]);
  }
}

static void normal_chunk(void *ctx, int64_t b, int64_t e) {
  rng_job *j = ctx;
  for (int64_t i = b; i < e; i++) j->out[i] = rng_normal_at(j->seed, j->offset + (uint64_t)i);
}

void rng_fill_uniform(uint64_t seed, uint64_t offset, float *out, int64_t n) {
  rng_job j = {seed, offset, out};
  par_for(n, RNG_GRAIN, uniform_chunk, &j);
}

void rng_fill_normal(uint64_t seed, uint64_t offset, float *out, int64_t n) {
  rng_job j = {seed, offset, out};
  par_for(n, RNG_GRAIN / 4, normal_chunk, &j);
}
