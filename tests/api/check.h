/*
** tests/api/check.h -- the few macros the C API tests share.  The tests
** include only <gk.h> from the library (the API is tested through it alone)
** and this header.  Each test program prints "N passed, M failed" last and
** exits non-zero when something failed.
*/
#ifndef GK_TEST_CHECK_H
#define GK_TEST_CHECK_H

#include <stdio.h>
#include <string.h>
#include <time.h>

static int t_pass, t_fail;

#define CHECK(cond) do { if (cond) t_pass++; else { t_fail++; \
  fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); } } while (0)

/* status check that shows gk_errmsg on failure */
#define CHECK_RC(g, call, want) do { int rc_ = (call); if (rc_ == (want)) t_pass++; else { t_fail++; \
  fprintf(stderr, "%s:%d: FAILED: %s returned %d, expected %d: %s\n", __FILE__, __LINE__, #call, rc_, (int)(want), \
          (g) ? gk_errmsg(g) : ""); } } while (0)
#define OK(g, call) CHECK_RC(g, call, GK_OK)

#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); if (a_ && b_ && !strcmp(a_, b_)) t_pass++; else { \
  t_fail++; fprintf(stderr, "%s:%d: FAILED: %s\n  got:      \"%s\"\n  expected: \"%s\"\n", __FILE__, __LINE__, #a, \
                    a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)

static inline int t_done(void) {
  printf("%d passed, %d failed\n", t_pass, t_fail);
  return t_fail ? 1 : 0;
}

static inline double t_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
