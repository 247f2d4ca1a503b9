/*
** tests/fuzz/fuzz_gk.c -- libFuzzer target for the whole pipeline: bytes as
** gk source through parse, check, plan and execution on the cpu backend,
** under a 256 MiB allocator cap and a 300 ms watchdog that calls
** gk_interrupt (tests/fuzz/fuzz_common.h), so no input may hang, wrap,
** crash or leave the context broken.  An input that names `save` is
** skipped (the fuzzer must not write files).  `make fuzz` runs it;
** tests/fuzz/corpus/gk and tests/fuzz/crashes/gk replay in `make test`.
*/
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char *src = malloc(size + 1);
  if (!src) return 0;
  memcpy(src, data, size);
  src[size] = 0;
  if (strstr(src, "save")) { free(src); return 0; }
  gk_ctx *g = fz_open();
  fz_eval(g, src);
  fz_sane(g);
  gk_close(g);
  free(src);
  if (fz_live) { fprintf(stderr, "%zu bytes still allocated after gk_close\n", fz_live); abort(); }
  return 0;
}
