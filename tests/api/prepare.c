/*
** tests/api/prepare.c -- compile once, run many: gk_prepare / gk_step /
** gk_finalize give the same results as gk_eval, step after step on fresh
** inputs; a script runs as a loop over the tail; errors; and the per-call
** overhead, measured on inputs so small that the arithmetic is nothing:
**   eval   gk_eval(text) + gk_get       (parse, check, plan, run)
**   step   gk_set + gk_step + gk_get    (check, plan, run; no parse)
** printed in microseconds per call.
**
** Usage: api_prepare [iterations]   (default 20000)
*/
#include <gk.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include "check.h"

static const char *STMT = "y = layernorm(rows(m)) @ w";

static void fill(float *p, int n, int seed) {
  uint32_t s = (uint32_t)seed * 2654435761u + 1;
  for (int i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; p[i] = (float)(s >> 8) / 16777216.0f - 0.5f; }
}

static void test_same_as_eval(void) {
  gk_ctx *a = gk_open("cpu"), *b = gk_open("cpu");
  enum { R = 33, C = 20, O = 7 };
  float m[R * C], w[C * O], ya[R * O], yb[R * O];
  int64_t ms[2] = {R, C}, ws[2] = {C, O};
  gk_stmt *st = NULL;
  const char *tail = NULL;
  OK(b, gk_prepare(b, STMT, &st, &tail));
  CHECK(st != NULL && tail && *tail == 0);
  fill(w, C * O, 99);
  OK(a, gk_set(a, "w", GK_F32, 2, ws, w));
  OK(b, gk_set(b, "w", GK_F32, 2, ws, w));
  int same = 1;
  for (int it = 0; it < 25; it++) {
    fill(m, R * C, it);
    OK(a, gk_set(a, "m", GK_F32, 2, ms, m));
    OK(b, gk_set(b, "m", GK_F32, 2, ms, m));
    OK(a, gk_eval(a, STMT));
    OK(b, gk_step(st));
    OK(a, gk_get(a, "y", ya, sizeof ya));
    OK(b, gk_get(b, "y", yb, sizeof yb));
    same &= !memcmp(ya, yb, sizeof ya);
  }
  CHECK(same);
  /* a new shape: the statement is checked again, still the same as eval */
  int64_t ms2[2] = {5, C};
  OK(a, gk_set(a, "m", GK_F32, 2, ms2, m));
  OK(b, gk_set(b, "m", GK_F32, 2, ms2, m));
  OK(a, gk_eval(a, STMT));
  OK(b, gk_step(st));
  OK(a, gk_get(a, "y", ya, 5 * O * sizeof(float)));
  OK(b, gk_get(b, "y", yb, 5 * O * sizeof(float)));
  CHECK(!memcmp(ya, yb, 5 * O * sizeof(float)));
  /* a step that fails binds nothing and leaves y as it was */
  int64_t bad[2] = {5, C + 1};
  OK(b, gk_set(b, "m", GK_F32, 2, bad, m));
  CHECK_RC(b, gk_step(st), GK_ETYPE);
  CHECK(strstr(gk_errmsg(b), "<expr>:1:") == gk_errmsg(b));
  float yc[5 * O];
  OK(b, gk_get(b, "y", yc, sizeof yc));
  CHECK(!memcmp(yb, yc, sizeof yc));
  OK(b, gk_unset(b, "m"));
  CHECK_RC(b, gk_step(st), GK_ETYPE);
  CHECK(strstr(gk_errmsg(b), "unknown name 'm'") != NULL);
  OK(b, gk_set(b, "m", GK_F32, 2, ms2, m));
  OK(b, gk_step(st));
  gk_finalize(st);
  gk_close(a);
  gk_close(b);
}

static void test_tail_loop(void) {
  gk_ctx *g = gk_open("cpu");
  const char *script =
    "# a script, run statement by statement\n"
    "x = iota(10)\n"
    "fn twice(a) = a * 2\n"
    "\n"
    "y = twice(x); z = sum(y)   # two on a line\n"
    "  # trailing comment\n";
  const char *p = script;
  int n = 0, rc = GK_OK;
  while (p && *p && rc == GK_OK) {
    gk_stmt *st = NULL;
    rc = gk_prepare(g, p, &st, &p);
    if (rc || !st) break;
    rc = gk_step(st);
    gk_finalize(st);
    n++;
  }
  OK(g, rc);
  CHECK(n == 4);
  CHECK(p && *p == 0);
  int64_t z = 0;
  OK(g, gk_get(g, "z", &z, sizeof z));
  CHECK(z == 90);
  /* blank text: GK_OK and no statement */
  gk_stmt *st = (gk_stmt *)1;
  const char *tail = NULL;
  OK(g, gk_prepare(g, "  # nothing\n\n", &st, &tail));
  CHECK(st == NULL && tail && *tail == 0);
  OK(g, gk_prepare(g, "", &st, NULL));
  CHECK(st == NULL);
  /* errors */
  st = (gk_stmt *)1;
  CHECK_RC(g, gk_prepare(g, "a = 1; b = (2 +", &st, &tail), GK_ESYNTAX);
  CHECK(st == NULL);
  CHECK_STR(gk_errmsg(g), "<expr>:1:16: error: unexpected end of input\na = 1; b = (2 +\n               ^\n");
  CHECK_RC(g, gk_prepare(g, NULL, &st, &tail), GK_EMISUSE);
  CHECK_RC(g, gk_prepare(g, "x = 1", NULL, &tail), GK_EMISUSE);
  /* printing statements step by step, through the output hook of a second context */
  gk_finalize(NULL);
  /* statements left unfinalized are freed by gk_close */
  OK(g, gk_prepare(g, "q = x + 1", &st, NULL));
  OK(g, gk_prepare(g, "r = x + 2", &st, NULL));
  OK(g, gk_step(st));
  gk_close(g);
}

/* gk_prepare_named: a script run as a loop over the tail, with the position
** carried along, reports its errors at their line and column in the file --
** check errors at gk_step, on line 3 and after a ';' on line 5, and a syntax
** error at gk_prepare, on line 4 of a second script (issue 9.11). */
static int run_script(gk_ctx *g, const char *script, const char *name, int *steps) {
  const char *p = script;
  gk_pos at = {1, 1};
  int rc = GK_OK;
  *steps = 0;
  while (*p) {
    gk_stmt *st = NULL;
    if ((rc = gk_prepare_named(g, p, name, &at, &st, &p)) != GK_OK || !st) break;
    rc = gk_step(st);
    gk_finalize(st);
    if (rc) break;
    ++*steps;
  }
  return rc;
}

static void test_named_lines(void) {
  gk_ctx *g = gk_open("cpu");
  int steps = 0;
  CHECK_RC(g, run_script(g, "# model\nx = iota(4)\ny = x + nosuch\nz = 1\n", "model.gk", &steps), GK_ETYPE);
  CHECK(steps == 1);
  CHECK_STR(gk_errmsg(g), "model.gk:3:9: error: unknown name 'nosuch'\ny = x + nosuch\n        ^\n");
  /* the same statement after a ';': the column counts from the line's start;
  ** the line shown is the statement's part of it, the caret under the name */
  CHECK_RC(g, run_script(g, "a = 1\n\nb = 2\n\nc = a + b; d = c * nope\n", "s.gk", &steps), GK_ETYPE);
  CHECK(steps == 3);
  CHECK_STR(gk_errmsg(g), "s.gk:5:20: error: unknown name 'nope'\n d = c * nope\n         ^\n");
  /* a syntax error is found by the first gk_prepare (the whole text must
  ** parse), at its place in the file */
  CHECK_RC(g, run_script(g, "u = 1\nv = 2\nw = 3\nq = (u +\n", "bad.gk", &steps), GK_ESYNTAX);
  CHECK(steps == 0);
  CHECK_STR(gk_errmsg(g), "bad.gk:4:9: error: unexpected end of input\nq = (u +\n        ^\n");
  /* the second of three statements, prepared at its own position */
  const char *src = "u = 1\nv = 2\nw = 3\n", *tail = src;
  gk_pos at = {10, 3};
  gk_stmt *st = NULL;
  OK(g, gk_prepare_named(g, src, "f.gk", &at, &st, &tail));
  CHECK(at.line == 11 && at.col == 1 && tail == src + 6);
  gk_finalize(st);
  OK(g, gk_prepare_named(g, "  # only a comment", "f.gk", &at, &st, &tail));
  CHECK(st == NULL && at.line == 11 && at.col == 19);
  /* the name is copied: the statement keeps it after the caller's is gone */
  char name[16];
  snprintf(name, sizeof name, "tmp.gk");
  gk_pos p2 = {7, 1};
  OK(g, gk_prepare_named(g, "k = nosuch2", name, &p2, &st, NULL));
  memset(name, 'X', sizeof name - 1);
  CHECK_RC(g, gk_step(st), GK_ETYPE);
  CHECK_STR(gk_errmsg(g), "tmp.gk:7:5: error: unknown name 'nosuch2'\nk = nosuch2\n    ^\n");
  gk_finalize(st);
  /* a position below 1:1 is misuse */
  gk_pos zero = {0, 1};
  CHECK_RC(g, gk_prepare_named(g, "k = 1", "f.gk", &zero, &st, NULL), GK_EMISUSE);
  CHECK(st == NULL);
  /* plain gk_prepare counts from its text, as before */
  OK(g, gk_prepare(g, "\nm = nosuch3", &st, NULL));
  CHECK_RC(g, gk_step(st), GK_ETYPE);
  CHECK(!strncmp(gk_errmsg(g), "<expr>:2:5: error: unknown name 'nosuch3'", 41));
  gk_finalize(st);
  gk_close(g);
}

/* Line noise of a step: a statement whose check fails at the second
** statement of the text, prepared from the middle of a text. */
static void test_locations(void) {
  gk_ctx *g = gk_open("cpu");
  const char *src = "a = 1\nb = a + nosuch\n";
  const char *tail;
  gk_stmt *s1 = NULL, *s2 = NULL;
  OK(g, gk_prepare(g, src, &s1, &tail));
  OK(g, gk_prepare(g, tail, &s2, &tail));
  OK(g, gk_step(s1));
  CHECK_RC(g, gk_step(s2), GK_ETYPE);
  CHECK(strstr(gk_errmsg(g), "unknown name 'nosuch'\nb = a + nosuch\n        ^\n") != NULL);
  gk_finalize(s1);
  gk_finalize(s2);
  gk_close(g);
}

static void overhead(int iters) {
  gk_ctx *g = gk_open("cpu");
  enum { R = 4, C = 8, O = 4 };
  float m[R * C], w[C * O], y[R * O];
  int64_t ms[2] = {R, C}, ws[2] = {C, O};
  fill(m, R * C, 1);
  fill(w, C * O, 2);
  OK(g, gk_set(g, "w", GK_F32, 2, ws, w));
  OK(g, gk_set(g, "m", GK_F32, 2, ms, m));
  gk_stmt *st = NULL;
  OK(g, gk_prepare(g, STMT, &st, NULL));
  int bad = 0;
  /* warm up */
  for (int i = 0; i < 100; i++) bad |= gk_eval(g, STMT) | gk_step(st) | gk_get(g, "y", y, sizeof y);
  double t0 = t_now();
  for (int i = 0; i < iters; i++) { bad |= gk_eval(g, STMT); bad |= gk_get(g, "y", y, sizeof y); }
  double t1 = t_now();
  for (int i = 0; i < iters; i++) {
    bad |= gk_set(g, "m", GK_F32, 2, ms, m);
    bad |= gk_step(st);
    bad |= gk_get(g, "y", y, sizeof y);
  }
  double t2 = t_now();
  for (int i = 0; i < iters; i++) bad |= gk_step(st);
  double t3 = t_now();
  for (int i = 0; i < iters; i++) bad |= gk_set(g, "m", GK_F32, 2, ms, m);
  double t4 = t_now();
  for (int i = 0; i < iters; i++) { bad |= gk_step(st); bad |= gk_get(g, "y", y, sizeof y); }
  double t5 = t_now();
  CHECK(bad == 0);
  double us = 1e6 / iters;
  printf("per-call overhead, %s backend, %dx%d @ %dx%d, %d iterations:\n", gk_backend(g), R, C, C, O, iters);
  printf("  gk_eval + gk_get          %7.2f us\n", (t1 - t0) * us);
  printf("  gk_set + gk_step + gk_get %7.2f us\n", (t2 - t1) * us);
  printf("  gk_step alone (no compute)%7.2f us\n", (t3 - t2) * us);
  printf("  gk_set (4x8 f32)          %7.2f us\n", (t4 - t3) * us);
  printf("  gk_step + gk_get          %7.2f us\n", (t5 - t4) * us);
  /* printed, never checked: speed is a benchmark's business (a loaded CI
  ** machine would make a timing check flaky) */
  gk_finalize(st);
  gk_close(g);
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  if (iters < 1) iters = 1;
  test_same_as_eval();
  test_tail_loop();
  test_named_lines();
  test_locations();
  overhead(iters);
  return t_done();
}
