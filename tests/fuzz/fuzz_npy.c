/*
** tests/fuzz/fuzz_npy.c -- libFuzzer target for .npy files: the bytes are
** written to a private temporary file which gk loads (`x = load(...)`),
** prints and reduces on the cpu backend (tests/fuzz/fuzz_common.h's cap,
** watchdog and invariants).  A load either fails with a clear error or
** gives an array every later statement can use.
*/
#include <unistd.h>
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64], prog[128];
  static const char *const after[] = {   /* each may fail (x[0] of a scalar), none may break anything */
    "print(x)", "print(sum(x), size(x), max(x), min(x))", "y = x + 1; print(y)", "print(x[0])",
    "print(x[::-1])", "print(scan(x), hist(x, 3))", "print(x @ transpose(x))", "print(filter(x, x > 0), softmax(x))",
  };
  if (!path[0]) {
    const char *d = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/gkfz%ld.npy", d && strlen(d) < 40 ? d : "/tmp", (long)getpid());
    snprintf(prog, sizeof prog, "x = load(\"%s\")", path);
  }
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  gk_ctx *g = fz_open();
  if (fz_eval(g, prog) == GK_OK) {
    gk_dtype t; int nd; int64_t sh[GK_MAX_DIMS];
    if (gk_shape(g, "x", &t, &nd, sh)) abort();
    for (size_t i = 0; i < sizeof after / sizeof *after; i++) fz_eval(g, after[i]);
  }
  fz_sane(g);
  gk_close(g);
  unlink(path);
  if (fz_live) { fprintf(stderr, "%zu bytes still allocated after gk_close\n", fz_live); abort(); }
  return 0;
}
