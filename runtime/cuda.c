/*
** runtime/cuda.c -- the cuda backend: runs plan groups as generated CUDA
** kernels through runtime/cu.h.  (Being written: until it lands, opening it
** reports that the backend is unavailable.)
*/
#include <stdio.h>
#include "runtime/rt.h"
#include "runtime/cu.h"
#include "compiler/lower.h"

int rt_cuda_available(char *why, size_t len) { return cu_available(why, len); }

int rt_cuda_open(rt_mem *mem, rt_backend **out, rt_err *e) {
  char why[256] = "";
  if (!cu_available(why, sizeof why)) return rt_seterr(e, GK_EDEVICE, "cuda backend unavailable: %s", why);
  (void)mem; (void)out;
  return rt_seterr(e, GK_EDEVICE, "cuda backend unavailable: not built into this version");
}

int rt_cuda_sms(rt_backend *b) { (void)b; return 132; }
