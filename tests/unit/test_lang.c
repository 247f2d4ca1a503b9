/*
** tests/unit/test_lang.c -- unit tests of gk's front end (lang/): the lexer
** and the parser through lang_parse + ast_dump, diagnostics word for word
** with their line:col, the incomplete-input flag the REPL relies on, the
** limits, random inputs, and allocation failure at every allocation.
**
** Build: make build/tests/test_lang   (or see the Makefile's asan target)
** Prints "N passed, M failed" and exits non-zero on any failure.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gk.h"
#include "lang/ast.h"

static int npass, nfail;

#define CHECK(cond, ...) do { \
    if (cond) npass++; \
    else { nfail++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } \
  } while (0)

/* Parses src (len bytes) and renders the result: the statements' dumps
** joined by " ; ", or "E<status> L:C[+]: msg" on error ('+' = incomplete). */
static char out[1 << 16];

static const char *parse_n(const char *src, size_t len)
{
  lang_arena a;
  lang_program p;
  lang_diag d;
  size_t n = 0;
  int i, rc;
  lang_arena_init(&a, NULL, NULL);
  rc = lang_parse(&a, src, len, &p, &d);
  if (rc != GK_OK) {
    snprintf(out, sizeof out, "E%d %d:%d%s: %s", rc, d.loc.line, d.loc.col,
             d.incomplete ? "+" : "", d.msg);
  } else {
    out[0] = 0;
    for (i = 0; i < p.nstmts; i++) {
      if (i) n += (size_t)snprintf(out + n, sizeof out - n, " ; ");
      if (n < sizeof out) n += ast_dump(p.stmts[i], out + n, sizeof out - n);
      if (n >= sizeof out) n = sizeof out - 1;
    }
  }
  lang_arena_free(&a);
  return out;
}

static const char *parse(const char *src) { return parse_n(src, strlen(src)); }

#define T(src, want) do { const char *got_ = parse(src); \
    CHECK(!strcmp(got_, want), "%s\n   got  %s\n   want %s", #src, got_, want); } while (0)

/* Error: status code, "L:C" (with "+" if incomplete) and message. */
#define SY GK_ESYNTAX
#define LI GK_ELIMIT
#define E(src, status, where, msg) do { char w_[512]; \
    snprintf(w_, sizeof w_, "E%d %s: %s", status, where, msg); \
    const char *got_ = parse(src); \
    CHECK(!strcmp(got_, w_), "%s\n   got  %s\n   want %s", #src, got_, w_); } while (0)

/* ---- tokens and literals ------------------------------------------------- */

static void test_literals(void)
{
  T("3", "(expr (int 3))");
  T("0", "(expr (int 0))");
  T("007", "(expr (int 7))");
  T("9223372036854775807", "(expr (int 9223372036854775807))");
  T("-9223372036854775808", "(expr (int -9223372036854775808))");
  T("2.5", "(expr (float 2.5))");
  T("1e6", "(expr (float 1e+06))");
  T("1.", "(expr (float 1))");
  T(".5", "(expr (float 0.5))");
  T("1e-6", "(expr (float 1e-06))");
  T("1E+3", "(expr (float 1e+03))");
  T("1.5e2", "(expr (float 1.5e+02))");
  T("123.25", "(expr (float 123.25))");
  T("1.e2", "(expr (float 1e+02))");
  T(".5e1", "(expr (float 5))");
  T("-2.5", "(expr (float -2.5))");
  T("1e-400", "(expr (float 0))");
  T("true", "(expr (bool true))");
  T("false", "(expr (bool false))");
  T("\"file.npy\"", "(expr (str \"file.npy\"))");
  T("\"\"", "(expr (str \"\"))");
  T("\"a\\\"b\\\\c\\nd\\te\"", "(expr (str \"a\\\"b\\\\c\\nd\\te\"))");
  T("\"h\xc3\xa9\"", "(expr (str \"h\xc3\xa9\"))");
  T("\"# not a comment\"", "(expr (str \"# not a comment\"))");
  T("x", "(expr (name x))");
  T("_a1_B2", "(expr (name _a1_B2))");
  T("fnx", "(expr (name fnx))");
  T("android", "(expr (name android))");
  T("nota", "(expr (name nota))");
  T("true_", "(expr (name true_))");
  T("[1, 2, 3]", "(expr (list (int 1) (int 2) (int 3)))");
  T("[[1, 2], [3, 4]]", "(expr (list (list (int 1) (int 2)) (list (int 3) (int 4))))");
  T("[]", "(expr (list))");
  T("[[]]", "(expr (list (list)))");
  T("[1,]", "(expr (list (int 1)))");
  T("[[1, 2,], [3, 4],]", "(expr (list (list (int 1) (int 2)) (list (int 3) (int 4))))");
  T("[-1, 2.5, true, \"s\", x]",
    "(expr (list (int -1) (float 2.5) (bool true) (str \"s\") (name x)))");
  T("[1 + 2, f(x)]", "(expr (list (+ (int 1) (int 2)) (call f (name x))))");
}

static void test_operators(void)
{
  T("a + b", "(expr (+ (name a) (name b)))");
  T("a - b", "(expr (- (name a) (name b)))");
  T("a * b", "(expr (* (name a) (name b)))");
  T("a / b", "(expr (/ (name a) (name b)))");
  T("a % b", "(expr (% (name a) (name b)))");
  T("a @ b", "(expr (@ (name a) (name b)))");
  T("a ** b", "(expr (** (name a) (name b)))");
  T("a == b", "(expr (== (name a) (name b)))");
  T("a != b", "(expr (!= (name a) (name b)))");
  T("a < b", "(expr (< (name a) (name b)))");
  T("a <= b", "(expr (<= (name a) (name b)))");
  T("a > b", "(expr (> (name a) (name b)))");
  T("a >= b", "(expr (>= (name a) (name b)))");
  T("a and b", "(expr (and (name a) (name b)))");
  T("a or b", "(expr (or (name a) (name b)))");
  T("not a", "(expr (not (name a)))");
  T("-a", "(expr (neg (name a)))");
  T("a+b*c-d/e%f@g", "(expr (- (+ (name a) (* (name b) (name c))) (@ (% (/ (name d) (name e)) (name f)) (name g))))");
  /* associativity */
  T("a - b - c", "(expr (- (- (name a) (name b)) (name c)))");
  T("a / b * c", "(expr (* (/ (name a) (name b)) (name c)))");
  T("a @ b @ c", "(expr (@ (@ (name a) (name b)) (name c)))");
  T("a or b or c", "(expr (or (or (name a) (name b)) (name c)))");
  T("a and b and c", "(expr (and (and (name a) (name b)) (name c)))");
  T("2 ** 3 ** 2", "(expr (** (int 2) (** (int 3) (int 2))))");
  /* precedence, loosest first */
  T("a or b and c", "(expr (or (name a) (and (name b) (name c))))");
  T("a and b or c", "(expr (or (and (name a) (name b)) (name c)))");
  T("not a and b", "(expr (and (not (name a)) (name b)))");
  T("not a == b", "(expr (not (== (name a) (name b))))");
  T("not not a", "(expr (not (not (name a))))");
  T("a == b + c", "(expr (== (name a) (+ (name b) (name c))))");
  T("a + b < c * d", "(expr (< (+ (name a) (name b)) (* (name c) (name d))))");
  T("a + b * c", "(expr (+ (name a) (* (name b) (name c))))");
  T("a * -b", "(expr (* (name a) (neg (name b))))");
  T("-a * b", "(expr (* (neg (name a)) (name b)))");
  T("-x ** 2", "(expr (neg (** (name x) (int 2))))");
  T("-2 ** 2", "(expr (neg (** (int 2) (int 2))))");
  T("2 ** -1", "(expr (** (int 2) (int -1)))");
  T("x ** -y", "(expr (** (name x) (neg (name y))))");
  T("2 ** -x ** 2", "(expr (** (int 2) (neg (** (name x) (int 2)))))");
  T("a * b ** c", "(expr (* (name a) (** (name b) (name c))))");
  T("-x[0]", "(expr (neg (index (name x) (int 0))))");
  T("x[0] ** 2", "(expr (** (index (name x) (int 0)) (int 2)))");
  T("- -3", "(expr (int 3))");
  T("--3", "(expr (int 3))");
  T("- -x", "(expr (neg (neg (name x))))");
  T("-(3)", "(expr (int -3))");
  T("(a + b) * c", "(expr (* (+ (name a) (name b)) (name c)))");
  T("((a))", "(expr (name a))");
  T("a - -1", "(expr (- (name a) (int -1)))");
  T("a-1", "(expr (- (name a) (int 1)))");
  T("a == (b < c)", "(expr (== (name a) (< (name b) (name c))))");
  T("(a < b) < c", "(expr (< (< (name a) (name b)) (name c)))");
  T("m @ w + b", "(expr (+ (@ (name m) (name w)) (name b)))");
}

static void test_calls_index(void)
{
  T("f()", "(expr (call f))");
  T("f(x)", "(expr (call f (name x)))");
  T("f(x,)", "(expr (call f (name x)))");
  T("f(a, b, c)", "(expr (call f (name a) (name b) (name c)))");
  T("sum(x, eps=1e-6)", "(expr (call sum (name x) (kw eps (float 1e-06))))");
  T("layernorm(rows(m), eps=1e-6)",
    "(expr (call layernorm (call rows (name m)) (kw eps (float 1e-06))))");
  T("f(a=1, b=2,)", "(expr (call f (kw a (int 1)) (kw b (int 2))))");
  T("f(a, b=c == d)", "(expr (call f (name a) (kw b (== (name c) (name d)))))");
  T("f(g(h(x)))", "(expr (call f (call g (call h (name x)))))");
  T("scan(x, max)", "(expr (call scan (name x) (name max)))");
  T("f(x)[0]", "(expr (index (call f (name x)) (int 0)))");
  T("x[i]", "(expr (index (name x) (name i)))");
  T("x[a:b]", "(expr (index (name x) (slice (name a) (name b) _)))");
  T("x[:b]", "(expr (index (name x) (slice _ (name b) _)))");
  T("x[a:]", "(expr (index (name x) (slice (name a) _ _)))");
  T("x[:]", "(expr (index (name x) (slice _ _ _)))");
  T("x[a:b:c]", "(expr (index (name x) (slice (name a) (name b) (name c))))");
  T("x[::2]", "(expr (index (name x) (slice _ _ (int 2))))");
  T("x[::]", "(expr (index (name x) (slice _ _ _)))");
  T("x[a::c]", "(expr (index (name x) (slice (name a) _ (name c))))");
  T("x[:b:]", "(expr (index (name x) (slice _ (name b) _)))");
  T("x[-1:]", "(expr (index (name x) (slice (int -1) _ _)))");
  T("m[i, j]", "(expr (index (name m) (name i) (name j)))");
  T("m[i, a:b]", "(expr (index (name m) (name i) (slice (name a) (name b) _)))");
  T("m[:, 0]", "(expr (index (name m) (slice _ _ _) (int 0)))");
  T("x[mask]", "(expr (index (name x) (name mask)))");
  T("x[x > 0]", "(expr (index (name x) (> (name x) (int 0))))");
  T("x[0][1]", "(expr (index (index (name x) (int 0)) (int 1)))");
  T("x[i + 1 : n - 1]", "(expr (index (name x) (slice (+ (name i) (int 1)) (- (name n) (int 1)) _)))");
  T("[1, 2][0]", "(expr (index (list (int 1) (int 2)) (int 0)))");
  T("(a + b)[0]", "(expr (index (+ (name a) (name b)) (int 0)))");
  T("\"s\"[0]", "(expr (index (str \"s\") (int 0)))");
}

static void test_statements(void)
{
  T("x = 1", "(assign x (int 1))");
  T("x = y = 1", "E1 1:7: unexpected '='");
  T("fn f() = 1", "(fn f () (int 1))");
  T("fn f(x) = x * 2", "(fn f (x) (* (name x) (int 2)))");
  T("fn f(a, b) = a + b", "(fn f (a b) (+ (name a) (name b)))");
  T("fn f(a, b,) = a", "(fn f (a b) (name a))");
  T("fn softmax(x) = exp(x - max(x)) / sum(exp(x - max(x)))",
    "(fn softmax (x) (/ (call exp (- (name x) (call max (name x)))) (call sum (call exp (- (name x) (call max (name x)))))))");
  T("a; b", "(expr (name a)) ; (expr (name b))");
  T("a\nb", "(expr (name a)) ; (expr (name b))");
  T("a\r\nb\r\n", "(expr (name a)) ; (expr (name b))");
  T("", "");
  T("\n\n\n", "");
  T(";;;", "");
  T("  # only a comment", "");
  T("a # comment\nb", "(expr (name a)) ; (expr (name b))");
  T("a # comment\r\nb # c2", "(expr (name a)) ; (expr (name b))");
  T("\n\na\n\n\nb\n\n", "(expr (name a)) ; (expr (name b))");
  T("a;\nb;", "(expr (name a)) ; (expr (name b))");
  T("a ; ; b", "(expr (name a)) ; (expr (name b))");
  T("x = 1; y = x + 1\nprint(y)",
    "(assign x (int 1)) ; (assign y (+ (name x) (int 1))) ; (expr (call print (name y)))");
  T("\tx\t=\t1\t", "(assign x (int 1))");
  /* continuation: newlines inside brackets and after operators */
  T("x = 1 +\n 2", "(assign x (+ (int 1) (int 2)))");
  T("x =\n 1", "(assign x (int 1))");
  T("f(1,\n 2)", "(expr (call f (int 1) (int 2)))");
  T("f(\n1\n,\n2\n)", "(expr (call f (int 1) (int 2)))");
  T("[1,\n 2,\n]", "(expr (list (int 1) (int 2)))");
  T("(1\n + 2)", "(expr (+ (int 1) (int 2)))");
  T("a and\nb", "(expr (and (name a) (name b)))");
  T("a or # why\n b", "(expr (or (name a) (name b)))");
  T("not\nx", "(expr (not (name x)))");
  T("x[1:\n2]", "(expr (index (name x) (slice (int 1) (int 2) _)))");
  T("a ==\r\n b", "(expr (== (name a) (name b)))");
  T("fn\nf(x) =\n x", "(fn f (x) (name x))");
  T("a\n- b", "(expr (name a)) ; (expr (neg (name b)))");
  T("a\n* b", "E1 2:1: unexpected '*'");
  T("x = (1 +\n2)\ny = 3", "(assign x (+ (int 1) (int 2))) ; (assign y (int 3))");
}

/* stmt_end: offsets just past each statement's terminator. */
static void test_stmt_end(void)
{
  static const struct { const char *src; int n; int end[4]; } cases[] = {
    { "a = 1\nb = 2", 2, { 6, 11 } },
    { "a;b", 2, { 2, 3 } },
    { "a\r\nb\r\n", 2, { 3, 6 } },
    { "a # c\nb", 2, { 6, 7 } },
    { "f(1,\n2); g", 2, { 8, 10 } },
  };
  size_t i;
  int j;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lang_arena a;
    lang_program p;
    lang_diag d;
    lang_arena_init(&a, NULL, NULL);
    int rc = lang_parse(&a, cases[i].src, strlen(cases[i].src), &p, &d);
    CHECK(rc == GK_OK && p.nstmts == cases[i].n, "stmt_end case %zu: rc %d n %d", i, rc, p.nstmts);
    for (j = 0; rc == GK_OK && j < p.nstmts && j < cases[i].n; j++)
      CHECK(p.stmt_end[j] == cases[i].end[j], "stmt_end case %zu stmt %d: %d want %d",
            i, j, p.stmt_end[j], cases[i].end[j]);
    lang_arena_free(&a);
  }
  /* Statements before an error are kept. */
  {
    lang_arena a;
    lang_program p;
    lang_diag d;
    lang_arena_init(&a, NULL, NULL);
    int rc = lang_parse(&a, "a = 1\nb = )\nc", 13, &p, &d);
    CHECK(rc == GK_ESYNTAX && p.nstmts == 1 && p.stmts[0]->kind == AST_ASSIGN, "partial: rc %d n %d", rc, p.nstmts);
    lang_arena_free(&a);
  }
}

/* Locations of nodes (the compiler reports errors at them). */
static void test_locations(void)
{
  lang_arena a;
  lang_program p;
  lang_diag d;
  const char *src = "x = 1\n  y = f(a,\n b=2) + c[1:2]";
  ast *s, *e;
  lang_arena_init(&a, NULL, NULL);
  CHECK(lang_parse(&a, src, strlen(src), &p, &d) == GK_OK && p.nstmts == 2, "locations parse");
  if (p.nstmts == 2) {
    s = p.stmts[1];
    CHECK(s->kind == AST_ASSIGN && s->loc.line == 2 && s->loc.col == 3 && s->loc.offset == 8, "assign loc %d:%d", s->loc.line, s->loc.col);
    CHECK(s->len == 1 && !strcmp(s->str, "y"), "assign name");
    e = s->kids[0];
    CHECK(e->kind == AST_BINARY && e->op == AST_OP_ADD && e->loc.line == 3 && e->loc.col == 7, "binary loc %d:%d", e->loc.line, e->loc.col);
    CHECK(e->kids[0]->kind == AST_CALL && e->kids[0]->loc.col == 7 && e->kids[0]->loc.line == 2, "call loc");
    CHECK(e->kids[0]->kwname[0] == NULL && !strcmp(e->kids[0]->kwname[1], "b") &&
          e->kids[0]->kwloc[1].line == 3 && e->kids[0]->kwloc[1].col == 2, "kw loc");
    CHECK(e->kids[1]->kind == AST_INDEX && e->kids[1]->nkids == 2 && e->kids[1]->kids[1]->kind == AST_SLICE &&
          e->kids[1]->kids[1]->nkids == 3, "index shape");
  }
  lang_arena_free(&a);
  lang_arena_init(&a, NULL, NULL);
  src = "fn g(p, q) = p";
  CHECK(lang_parse(&a, src, strlen(src), &p, &d) == GK_OK, "fn parse");
  s = p.stmts[0];
  CHECK(s->kind == AST_FN && s->ival == 2 && !strcmp(s->kwname[1], "q") && s->kwloc[1].col == 9 &&
        !strcmp(s->str, "g") && s->nkids == 1, "fn fields");
  lang_arena_free(&a);
  /* strings may hold escapes; len is the decoded length */
  lang_arena_init(&a, NULL, NULL);
  src = "\"a\\nb\"";
  CHECK(lang_parse(&a, src, strlen(src), &p, &d) == GK_OK && p.stmts[0]->kids[0]->len == 3 &&
        !memcmp(p.stmts[0]->kids[0]->str, "a\nb", 4), "string len");
  lang_arena_free(&a);
}

/* ---- errors, word for word ---------------------------------------------------- */

static void test_errors(void)
{
  /* incomplete: the REPL asks for another line */
  E("(1 + 2", SY, "1:7+", "unexpected end of input");
  E("x = 1 +", SY, "1:8+", "unexpected end of input");
  E("x = 1 +\n", SY, "1:8+", "unexpected end of input");
  E("x = 1 +  # more\n\n", SY, "1:16+", "unexpected end of input");
  E("[1, 2", SY, "1:6+", "unexpected end of input");
  E("\"abc", SY, "1:1+", "unterminated string");
  E("x = \"ab\\", SY, "1:5+", "unterminated string");
  E("f(1,", SY, "1:5+", "unexpected end of input");
  E("fn f(", SY, "1:6+", "unexpected end of input");
  E("fn f(x)", SY, "1:8+", "unexpected end of input");
  E("fn", SY, "1:3+", "unexpected end of input");
  E("not", SY, "1:4+", "unexpected end of input");
  E("-", SY, "1:2+", "unexpected end of input");
  E("x[1:", SY, "1:5+", "unexpected end of input");
  E("x =", SY, "1:4+", "unexpected end of input");
  E("a = 1\nb = f(2,\n", SY, "2:9+", "unexpected end of input");
  E("a = 1\nb = (2,\n", SY, "2:7", "unexpected ','");
  E("f(a=", SY, "1:5+", "unexpected end of input");
  /* wrong */
  E("1 + )", SY, "1:5", "expected expression after '+'");
  E("x = = 2", SY, "1:5", "expected expression after '='");
  E("a ** ]", SY, "1:6", "expected expression after '**'");
  E("a and or b", SY, "1:7", "expected expression after 'and'");
  E("a < b < c", SY, "1:7", "unexpected '<'");
  E("a == b != c", SY, "1:8", "unexpected '!='");
  E("$", SY, "1:1", "unexpected character '$'");
  E("x = 1 $ 2", SY, "1:7", "unexpected character '$'");
  E("x = !a", SY, "1:5", "unexpected character '!'; gk writes 'not' (on bools)");
  E("a.b", SY, "1:2", "unexpected character '.'; gk has no attributes or methods: write b(a), not a.b");
  E("\x01", SY, "1:1", "unexpected byte 0x01");
  E("a\rb", SY, "1:2", "unexpected byte 0x0d");
  E("x = 1 \xc3\x97 2", SY, "1:7", "unexpected character '\xc3\x97'");
  E("x = \xff", SY, "1:5", "unexpected byte 0xff");
  E(")", SY, "1:1", "unexpected ')'");
  E("x = 1)", SY, "1:6", "unexpected ')'");
  E("x = 1 ]", SY, "1:7", "unexpected ']'");
  E("1 2", SY, "1:3", "unexpected '2'");
  E("a b", SY, "1:3", "unexpected 'b'");
  E("a \"s\"", SY, "1:3", "unexpected string");
  E("a == not b", SY, "1:6", "unexpected 'not'");
  E("1 + not b", SY, "1:5", "unexpected 'not'");
  E("1 = 2", SY, "1:3", "unexpected '='");
  E("f(x)(y)", SY, "1:5", "unexpected '('");
  E("(f)(1)", SY, "1:4", "unexpected '('");
  E("x[]", SY, "1:3", "unexpected ']'");
  E("[1, , 2]", SY, "1:5", "unexpected ','");
  E("f(,)", SY, "1:3", "unexpected ','");
  E("x[1,]", SY, "1:5", "unexpected ']'");
  E("fn f()\n= 1", SY, "1:7", "unexpected newline");
  E("fn (x) = 1", SY, "1:4", "unexpected '('");
  E("fn f(1) = 2", SY, "1:6", "unexpected '1'");
  E("fn f(x) = ", SY, "1:11+", "unexpected end of input");
  E("fn f(x) x", SY, "1:9", "unexpected 'x'");
  E("x = fn", SY, "1:5", "expected expression after '='");
  E("x fn", SY, "1:3", "unexpected 'fn'");
  E("a = 1\nb = )", SY, "2:5", "expected expression after '='");
  E("a\r\nb $", SY, "2:3", "unexpected character '$'");
  E("a\n\n  c d", SY, "3:5", "unexpected 'd'");
  E("a ;) b", SY, "1:4", "unexpected ')'");
  E("1.5.2", SY, "1:4", "unexpected '.2'");
  E("x = averyveryveryveryveryveryverylongname1 averyveryveryveryveryveryverylongname2", SY, "1:44",
    "unexpected 'averyveryveryveryveryveryverylon...'");
  E("\"ab\ncd\"", SY, "1:1", "unterminated string");
  E("x = \"ab\r\n", SY, "1:5", "unterminated string");
  E("\"a\\q\"", SY, "1:3", "unknown escape '\\q' in string");
  E("\"a\\0\"", SY, "1:3", "unknown escape '\\0' in string");
  E("\"a\\\x01\"", SY, "1:3", "unknown escape in string ('\\' then byte 0x01)");
  E("1e", SY, "1:1", "invalid number '1e'");
  E("1e+", SY, "1:1", "invalid number '1e+'");
  E("x = 1.5e-", SY, "1:5", "invalid number '1.5e-'");
  E("2x", SY, "1:1", "invalid number '2x'");
  E("3.0f", SY, "1:1", "invalid number '3.0f'");
  E("99999999999999999999", SY, "1:1", "integer literal too large");
  E("x = 18446744073709551616", SY, "1:5", "integer literal too large");
  E("9223372036854775808", SY, "1:1", "integer literal too large");
  E("1 + 9223372036854775808", SY, "1:5", "integer literal too large");
  E("f(9223372036854775808)", SY, "1:3", "integer literal too large");
  E("-9223372036854775808 ** 2", SY, "1:2", "integer literal too large");
  E("- -9223372036854775808", SY, "1:1", "integer literal too large");
  E("-(9223372036854775808)", SY, "1:3", "integer literal too large");
  E("2 ** 9223372036854775808", SY, "1:6", "integer literal too large");
  E("9223372036854775808[0]", SY, "1:1", "integer literal too large");
  E("1e999", SY, "1:1", "float literal too large");
  E("f(a=1, 2)", SY, "1:8", "positional argument after keyword argument");
  E("f(a=1, b + 1)", SY, "1:8", "positional argument after keyword argument");
  E("f(a=1, a=2)", SY, "1:8", "duplicate keyword argument 'a'");
  E("fn f(a, a) = 1", SY, "1:9", "duplicate parameter 'a'");
  E("fn f(a, b, c, a) = 1", SY, "1:15", "duplicate parameter 'a'");
  /* NUL bytes */
  {
    const char *got = parse_n("a\0b", 3);
    CHECK(!strcmp(got, "E1 1:2: unexpected byte 0x00"), "NUL: %s", got);
    got = parse_n("\"a\0b\"", 5);
    CHECK(!strcmp(got, "E1 1:3: unexpected byte 0x00"), "NUL in string: %s", got);
    got = parse_n("# c\0\nx", 6);
    CHECK(!strcmp(got, "E1 1:4: unexpected byte 0x00"), "NUL in comment: %s", got);
    got = parse_n("x = 1", 3);   /* not NUL-terminated: only "x =" */
    CHECK(!strcmp(got, "E1 1:4+: unexpected end of input"), "length: %s", got);
    got = parse_n(NULL, 0);
    CHECK(!strcmp(got, ""), "NULL source: %s", got);
  }
}

/* ---- lang_format_error ---------------------------------------------------------- */

static void fmt_case(const char *src, int line, const char *want)
{
  lang_arena a;
  lang_program p;
  lang_diag d;
  char buf[512];
  lang_arena_init(&a, NULL, NULL);
  lang_parse(&a, src, strlen(src), &p, &d);
  lang_format_error(buf, sizeof buf, "<expr>", src, strlen(src), d.loc, d.msg);
  CHECK(!strcmp(buf, want), "format (line %d)\n---got---\n%s---want---\n%s", line, buf, want);
  lang_arena_free(&a);
}

static void test_format(void)
{
  char small[16];
  size_t n;
  lang_loc loc = { 1, 5, 4 };
  fmt_case("x = (1 + $)", __LINE__, "<expr>:1:10: error: unexpected character '$'\nx = (1 + $)\n         ^\n");
  fmt_case("\tx = $", __LINE__, "<expr>:1:6: error: unexpected character '$'\n\tx = $\n\t    ^\n");
  fmt_case("a = 1\r\nb $\r\nc", __LINE__, "<expr>:2:3: error: unexpected character '$'\nb $\n  ^\n");
  fmt_case("(1 +\n", __LINE__, "<expr>:1:5: error: unexpected end of input\n(1 +\n    ^\n");
  fmt_case("a\n(1 +\r\n\r\n\n", __LINE__, "<expr>:2:5: error: unexpected end of input\n(1 +\n    ^\n");
  fmt_case("x = ", __LINE__, "<expr>:1:5: error: unexpected end of input\nx = \n    ^\n");
  fmt_case("(", __LINE__, "<expr>:1:2: error: unexpected end of input\n(\n ^\n");
  fmt_case("\"\xc3\xa9\" $", __LINE__, "<expr>:1:6: error: unexpected character '$'\n\"\xc3\xa9\" $\n    ^\n");
  fmt_case("f(a=1,\n\t2)", __LINE__,
           "<expr>:2:2: error: positional argument after keyword argument\n\t2)\n\t^\n");
  /* no source: only the first line */
  n = lang_format_error(small, 0, "f.gk", NULL, 0, loc, "boom");
  CHECK(n == strlen("f.gk:1:5: error: boom\n"), "needed length %zu", n);
  n = lang_format_error(small, sizeof small, "f.gk", NULL, 0, loc, "boom");
  CHECK(n == 22 && !strcmp(small, "f.gk:1:5: error"), "truncated: '%s' %zu", small, n);
  {
    char buf[128];
    lang_format_error(buf, sizeof buf, NULL, "abcdef", 6, loc, "m");
    CHECK(!strcmp(buf, "<expr>:1:5: error: m\nabcdef\n    ^\n"), "null file: %s", buf);
  }
}

/* ---- names -------------------------------------------------------------------- */

static void test_names(void)
{
  CHECK(!strcmp(ast_kind_name(AST_INT), "int") && !strcmp(ast_kind_name(AST_EXPR), "expr") &&
        !strcmp(ast_kind_name(AST_SLICE), "slice") && !strcmp(ast_kind_name((ast_kind)99), "?"), "kind names");
  CHECK(!strcmp(ast_op_name(AST_OP_ADD), "+") && !strcmp(ast_op_name(AST_OP_POW), "**") &&
        !strcmp(ast_op_name(AST_OP_AND), "and") && !strcmp(ast_op_name(AST_OP_NOT), "not") &&
        !strcmp(ast_op_name(AST_OP_NEG), "-") && !strcmp(ast_op_name(AST_OP_MATMUL), "@") &&
        !strcmp(ast_op_name(AST_OP_GE), ">=") && !strcmp(ast_op_name((ast_op)99), "?"), "op names");
}

/* ---- limits ------------------------------------------------------------------- */

static char *repeat(const char *head, const char *unit, int n, const char *mid, const char *unit2, int n2, const char *tail)
{
  size_t len = strlen(head) + strlen(unit) * (size_t)n + strlen(mid) + strlen(unit2) * (size_t)n2 + strlen(tail) + 1;
  char *s = malloc(len), *p = s;
  int i;
  p += sprintf(p, "%s", head);
  for (i = 0; i < n; i++) p += sprintf(p, "%s", unit);
  p += sprintf(p, "%s", mid);
  for (i = 0; i < n2; i++) p += sprintf(p, "%s", unit2);
  sprintf(p, "%s", tail);
  return s;
}

static void limit_case(const char *head, const char *unit, int n, const char *mid, const char *unit2, int n2,
                       const char *want_prefix, int line)
{
  char *s = repeat(head, unit, n, mid, unit2, n2, "");
  const char *got = parse(s);
  CHECK(!strncmp(got, want_prefix, strlen(want_prefix)), "limit (line %d): got %.200s want %s", line, got, want_prefix);
  free(s);
}

static void test_limits(void)
{
  const char *deep = "E10 ";
  limit_case("", "(", 10000, "1", ")", 10000, "E10 1:201: expression nested too deeply (limit 200)", __LINE__);
  limit_case("", "(", 200, "1", ")", 200, "(expr (int 1))", __LINE__);
  limit_case("", "(", 201, "1", ")", 201, "E10 1:201: expression nested too deeply (limit 200)", __LINE__);
  limit_case("", "[", 300, "1", "]", 300, "E10 1:201: expression nested too deeply (limit 200)", __LINE__);
  limit_case("", "[", 200, "", "]", 200, "(expr (list (list", __LINE__);
  limit_case("", "f(", 300, "1", ")", 300, deep, __LINE__);
  limit_case("x", "[0]", 300, "", "", 0, "(expr (index (index", __LINE__);
  limit_case("x", "[0]", 700, "", "", 0, "E10 1:1799: expression too complex (depth limit 600)", __LINE__);
  limit_case("", "not ", 300, "x", "", 0, deep, __LINE__);
  limit_case("", "not ", 100000, "x", "", 0, deep, __LINE__);
  limit_case("", "not ", 199, "x", "", 0, "(expr (not (not", __LINE__);
  limit_case("", "- ", 300, "x", "", 0, deep, __LINE__);
  limit_case("", "-", 300, "3", "", 0, deep, __LINE__);
  limit_case("", "- ", 100000, "x", "", 0, deep, __LINE__);
  limit_case("", "2 ** ", 300, "2", "", 0, deep, __LINE__);
  limit_case("", "2 ** ", 100000, "2", "", 0, deep, __LINE__);
  limit_case("", "2 ** ", 150, "2", "", 0, "(expr (** (int 2)", __LINE__);
  limit_case("", "-(", 150, "x", ")", 150, deep, __LINE__);
  limit_case("", "(1 + ", 150, "x", ")", 150, "(expr (+ (int 1)", __LINE__);
  /* Long left-assoc chains: the tree's depth is bounded too. */
  limit_case("1", " + 1", 100000, "", "", 0, "E10 1:2399: expression too complex (depth limit 600)", __LINE__);
  limit_case("1", " + 1", 500, "", "", 0, "(expr (+ (+ (+", __LINE__);
  limit_case("x", "[0]", 150, "", "", 0, "(expr (index (index", __LINE__);
  limit_case("a", " or a", 5000, "", "", 0, deep, __LINE__);
  /* The most stack-hungry nesting the limit allows still parses. */
  limit_case("", "a or b and c == d + e * f ** g(x, k=(", 66, "1", "))", 66, "(expr (or (name a)", __LINE__);
  limit_case("", "a or b and c == d + e * f ** g(x, k=(", 80, "1", "))", 80, deep, __LINE__);
  limit_case("", "a or b and c == -d + e * f ** [x, x[(", 50, "1", ")]]", 50, "(expr (or (name a)", __LINE__);
  /* widths */
  limit_case("f(", "1, ", 64, "", "", 0, "E1 1:195+", __LINE__);
  {
    char *s = repeat("f(", "1, ", 64, "1)", "", 0, "");
    CHECK(!strcmp(parse(s), "E10 1:195: too many arguments (limit 64)"), "65 args: %s", out);
    free(s);
    s = repeat("f(", "1, ", 63, "1)", "", 0, "");
    CHECK(!strncmp(parse(s), "(expr (call f (int 1)", 21), "64 args: %.60s", out);
    free(s);
    s = repeat("f(", "1, ", 64, "k=1)", "", 0, "");
    CHECK(!strcmp(parse(s), "E10 1:195: too many arguments (limit 64)"), "65 args kw: %s", out);
    free(s);
    s = repeat("[", "1, ", LANG_MAX_LIST, "1]", "", 0, "");
    CHECK(!strcmp(parse(s), "E10 1:3145730: too many list elements (limit 1048576)"), "2^20+1 elems: %s", out);
    free(s);
    s = repeat("[", "1, ", LANG_MAX_LIST - 1, "1]", "", 0, "");
    CHECK(!strncmp(parse(s), "(expr (list (int 1)", 19), "2^20 elems: %.60s", out);
    free(s);
    s = repeat("x[", "1, ", 64, "1]", "", 0, "");
    CHECK(!strcmp(parse(s), "E10 1:195: too many indices (limit 64)"), "65 indices: %s", out);
    free(s);
    s = repeat("fn f(", "a, ", 0, "a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,b0,b1,b2,b3,b4,b5,b6) = 1", "", 0, "");
    CHECK(!strcmp(parse(s), "E10 1:54: too many parameters (limit 16)"), "17 params: %s", out);
    free(s);
    s = repeat("fn f(", "a, ", 0, "a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,b0,b1,b2,b3,b4,b5) = 1", "", 0, "");
    CHECK(!strncmp(parse(s), "(fn f (a0 a1", 12), "16 params: %s", out);
    free(s);
  }
  /* 300 nested lists */
  limit_case("x = ", "[", 300, "", "]", 300, "E10 1:205: expression nested too deeply (limit 200)", __LINE__);
  /* huge integer */
  limit_case("", "9", 5000, "", "", 0, "E1 1:1: integer literal too large", __LINE__);
  limit_case("", "0", 5000, "1", "", 0, "(expr (int 1))", __LINE__);
  limit_case("", "1", 400, ".5", "", 0, "E1 1:1: float literal too large", __LINE__);
  limit_case("0.", "0", 300, "1", "", 0, "(expr (float 1e-301))", __LINE__);
  /* Many statements are fine. */
  {
    char *s = repeat("", "x = x + 1\n", 20000, "", "", 0, "");
    lang_arena a;
    lang_program p;
    lang_diag d;
    lang_arena_init(&a, NULL, NULL);
    CHECK(lang_parse(&a, s, strlen(s), &p, &d) == GK_OK && p.nstmts == 20000 &&
          p.stmt_end[19999] == (int)strlen(s), "20000 statements");
    lang_arena_free(&a);
    free(s);
  }
  /* Source size. */
  {
    size_t big = (size_t)LANG_MAX_SOURCE + 1;
    char *s = malloc(big);
    if (s) {
      memset(s, ' ', big);
      CHECK(!strcmp(parse_n(s, big), "E10 1:1: source text too large (67108865 bytes; limit 67108864)"),
            "source limit: %s", out);
      free(s);
    }
  }
}

/* ---- random inputs --------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

/* The outcome must be OK (and dumpable), a syntax error or a limit, with a
** message and a location inside (or just past) the text. */
static void check_any(const char *src, size_t len, const char *what, int i)
{
  lang_arena a;
  lang_program p;
  lang_diag d;
  char buf[256];
  int rc, j, ok;
  lang_arena_init(&a, NULL, NULL);
  rc = lang_parse(&a, src, len, &p, &d);
  ok = rc == GK_OK || rc == GK_ESYNTAX || rc == GK_ELIMIT;
  if (rc == GK_OK) {
    for (j = 0; j < p.nstmts; j++) ast_dump(p.stmts[j], buf, sizeof buf);
  } else {
    ok = ok && d.msg[0] && d.loc.line >= 1 && d.loc.col >= 1 && d.loc.offset >= 0 && (size_t)d.loc.offset <= len;
    lang_format_error(buf, sizeof buf, "<fuzz>", src, len, d.loc, d.msg);
  }
  CHECK(ok, "%s %d: rc %d msg '%s'", what, i, rc, d.msg);
  lang_arena_free(&a);
}

static void test_random(void)
{
  static const char alphabet[] = "abfnotrue()[],:;=+-*/%@<>!.#\"\\ \t\n\r0123456789eE_$";
  static const char *const toks[] = {
    "x", "f", "fn", "and", "or", "not", "true", "false", "1", "2.5", "1e6", ".5", "\"s\"",
    "+", "-", "*", "/", "%", "@", "**", "==", "!=", "<", "<=", ">", ">=", "=", "(", ")",
    "[", "]", ",", ":", ";", "\n", "\r\n", "# c\n", "9223372036854775808", "\"\\n\"", "1e",
  };
  char buf[256];
  int i, j, n;
  for (i = 0; i < 2000; i++) {
    n = (int)(rnd() % 64);
    for (j = 0; j < n; j++)
      buf[j] = (rnd() % 4 == 0) ? (char)(rnd() & 0xff) : alphabet[rnd() % (sizeof alphabet - 1)];
    check_any(buf, (size_t)n, "bytes", i);
  }
  for (i = 0; i < 2000; i++) {
    size_t len = 0;
    n = (int)(rnd() % 40);
    for (j = 0; j < n; j++) {
      const char *t = toks[rnd() % (sizeof toks / sizeof toks[0])];
      size_t tl = strlen(t);
      if (len + tl + 1 >= sizeof buf) break;
      memcpy(buf + len, t, tl);
      len += tl;
      if (rnd() % 2) buf[len++] = ' ';
    }
    check_any(buf, len, "tokens", i);
  }
}

/* ---- allocation failure ------------------------------------------------------------ */

typedef struct failer {
  long count;      /* allocations so far */
  long fail_at;    /* the allocation number that fails (0-based), -1 never */
  long live;       /* blocks not yet freed */
  size_t bytes;    /* bytes not yet freed */
} failer;

static void *failing_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
  failer *f = ud;
  if (new_size == 0) {
    if (ptr) {
      f->live--;
      f->bytes -= old_size;
    }
    free(ptr);
    return NULL;
  }
  if (ptr) return NULL;  /* the front end never resizes */
  if (f->count++ == f->fail_at) return NULL;
  ptr = malloc(new_size);
  if (ptr) {
    f->live++;
    f->bytes += new_size;
  }
  return ptr;
}

static void test_nomem(void)
{
  /* Enough text to need several arena blocks, a long float (copied to the
  ** arena), strings, calls, lists, slices and many statements. */
  char *src = repeat("fn f(a, b) = a + b * 2\ns = \"str\\n\"\nv = 1.00000000000000000000000000000000000000000000000000000000000000000000000001\n",
                     "y = f(x[1:2, ::3], [[1, 2], [3, 4]], eps=1e-6) ** -2; z = not a or b and c\n", 400,
                     "", "", 0, "");
  failer f;
  lang_arena a;
  lang_program p;
  lang_diag d;
  long n;
  int rc, bad = 0, leaks = 0;
  for (n = 0;; n++) {
    memset(&f, 0, sizeof f);
    f.fail_at = n;
    lang_arena_init(&a, failing_alloc, &f);
    rc = lang_parse(&a, src, strlen(src), &p, &d);
    lang_arena_free(&a);
    if (f.live != 0 || f.bytes != 0) leaks++;
    if (rc == GK_OK) break;
    if (rc != GK_ENOMEM || strcmp(d.msg, "out of memory")) {
      bad++;
      printf("  nomem at %ld: rc %d %s\n", n, rc, d.msg);
    }
    if (n > 100000) break;
  }
  printf("nomem: %ld allocation failure points checked\n", n);
  CHECK(rc == GK_OK && n > 5, "nomem: parse succeeded after %ld failures", n);
  CHECK(bad == 0, "nomem: %d runs did not give GK_ENOMEM", bad);
  CHECK(leaks == 0, "nomem: %d runs leaked", leaks);
  CHECK(f.count == n, "nomem: the successful run made %ld allocations, expected %ld", f.count, n);
  /* Errors other than memory at every failure point of a failing text. */
  for (n = 0; n < 50; n++) {
    memset(&f, 0, sizeof f);
    f.fail_at = n;
    lang_arena_init(&a, failing_alloc, &f);
    rc = lang_parse(&a, "x = f(1, \"s\") +", 15, &p, &d);
    lang_arena_free(&a);
    CHECK(f.live == 0 && (rc == GK_ENOMEM || (rc == GK_ESYNTAX && d.incomplete)), "nomem/syntax at %ld: rc %d", n, rc);
  }
  free(src);
  /* The arena itself. */
  memset(&f, 0, sizeof f);
  f.fail_at = -1;
  lang_arena_init(&a, failing_alloc, &f);
  {
    char *s1 = lang_arena_alloc(&a, 10), *s2 = lang_arena_alloc(&a, 1 << 20), *s3 = lang_arena_alloc(&a, 3);
    char *s4 = lang_arena_strdup(&a, "hello", 5);
    CHECK(s1 && s2 && s3 && s4 && !strcmp(s4, "hello") && ((uintptr_t)s1 % 16) == 0 && ((uintptr_t)s2 % 16) == 0 &&
          ((uintptr_t)s3 % 16) == 0 && s3 == s1 + 16 && s2[12345] == 0, "arena basics");
    CHECK(lang_arena_alloc(&a, (size_t)-1) == NULL, "arena huge request");
  }
  lang_arena_free(&a);
  CHECK(f.live == 0 && f.bytes == 0, "arena free");
}

int main(void)
{
  test_literals();
  test_operators();
  test_calls_index();
  test_statements();
  test_stmt_end();
  test_locations();
  test_errors();
  test_format();
  test_names();
  test_limits();
  test_random();
  test_nomem();
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail != 0;
}
