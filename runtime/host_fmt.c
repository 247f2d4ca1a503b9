/*
** runtime/host_fmt.c -- text output: a growable string buffer, and arrays
** printed exactly as numpy prints them.
**
** fmt_array reproduces numpy.array2string(a, precision=6, threshold=1000,
** edgeitems=3, max_line_width=75) (numpy 2.x, legacy=False, floatmode
** 'maxprec', sign '-') byte for byte, except booleans, which are written
** `true`/`false` (padded like numpy's ` True`/`False`).  The code follows
** numpy/_core/arrayprint.py closely; the names below (pad_left, pad_right,
** exp_size, _formatArray's hanging indent and width) are numpy's:
**
**   1. If the size exceeds FMT_THRESHOLD, only the "shown" elements (the
**      first and last FMT_EDGE of every axis longer than 2*FMT_EDGE) are
**      used to choose the element format, and "..." replaces the rest.
**   2. A dtype-wide element format is chosen from the shown elements:
**      ints are right-aligned to the widest of str(max), str(min); floats
**      use scientific notation when the largest finite non-zero magnitude is
**      >= 1e8 (1e6 for float32: numpy 2.x takes 10**min(8, finfo.precision)),
**      the smallest is < 1e-4, or their ratio > 1000 (compared in the
**      array's own float type, as numpy's weak-scalar rules do), else
**      positional.  Each value is written with the shortest digits that
**      round-trip in its own dtype, capped at 6 fraction digits (then
**      correctly rounded, ties to even, which is what Dragon4 does at its
**      cutoff); all values are padded to a common integer/fraction width
**      (in scientific notation the mantissas are extended to a common
**      number of digits with the value's exact digits, not with zeros).
**   3. Elements are laid out with numpy's line wrapping and nesting.
**
** Shortest round-trip digits are found by trying "%.*e" at increasing
** precision until strtod (strtof for float32) gives the value back: simple
** and exact, and glibc's printf is correctly rounded.  It can differ from
** numpy's Dragon4 only in the last digit of a value at a power-of-two
** boundary whose two candidate strings are equally short -- none was seen
** in the randomized comparison (tests/unit/fmt_check.py).
*/
#include "runtime/host.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FMT_PRECISION 6    /* numpy print option precision */
#define FMT_THRESHOLD 1000 /* numpy threshold: summarise above this size */
#define FMT_EDGE 3         /* numpy edgeitems */
#define FMT_LINEWIDTH 75   /* numpy linewidth */
#define FMT_WORD 80        /* longest element text: "-1.23456789012345678e+308" is 25 */

/* The precision of the array being formatted (fmt_buf.digits, else
** FMT_PRECISION): set by fmt_array and fmt_scalar for the static helpers
** below; thread-local because contexts print on their own threads. */
static _Thread_local int fmt_prec = FMT_PRECISION;

/* ------------------------------------------------------------------ buffer */

void fmt_init(fmt_buf *b) {
  b->data = NULL;
  b->len = b->cap = 0;
  b->status = GK_OK;
  b->digits = b->width = 0;
}

void fmt_free(fmt_buf *b) {
  free(b->data);
  fmt_init(b);
}

void fmt_reset(fmt_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = 0;
}

/* Makes room for `extra` more bytes plus the NUL; sets b->status on failure. */
static int reserve(fmt_buf *b, size_t extra) {
  if (b->status) return b->status;
  if (extra >= FMT_MAX_BYTES - b->len) return b->status = GK_ELIMIT;
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return GK_OK;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) return b->status = GK_ENOMEM;
  b->data = p;
  b->cap = cap;
  return GK_OK;
}

int fmt_append(fmt_buf *b, const char *s, size_t n) {
  if (reserve(b, n)) return b->status;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
  return GK_OK;
}

int fmt_puts(fmt_buf *b, const char *s) { return fmt_append(b, s, strlen(s)); }

int fmt_putc(fmt_buf *b, char c) { return fmt_append(b, &c, 1); }

int fmt_spaces(fmt_buf *b, size_t n) {
  if (reserve(b, n)) return b->status;
  memset(b->data + b->len, ' ', n);
  b->len += n;
  b->data[b->len] = 0;
  return GK_OK;
}

int fmt_printf(fmt_buf *b, const char *f, ...) {
  va_list ap;
  if (reserve(b, 64)) return b->status;
  va_start(ap, f);
  int n = vsnprintf(b->data + b->len, b->cap - b->len, f, ap);
  va_end(ap);
  if (n < 0) return b->status = GK_EMISUSE;
  if ((size_t)n >= b->cap - b->len) {
    if (reserve(b, (size_t)n)) return b->status;
    va_start(ap, f);
    vsnprintf(b->data + b->len, b->cap - b->len, f, ap);
    va_end(ap);
  }
  b->len += (size_t)n;
  return GK_OK;
}

/* Removes trailing spaces (numpy's line.rstrip() before a wrap). */
static void rstrip(fmt_buf *b) {
  while (b->len > 0 && b->data[b->len - 1] == ' ') b->len--;
  if (b->data) b->data[b->len] = 0;
}

/* ------------------------------------------------------------ float digits */

/* Decimal digits of a finite magnitude: value = d[0].d[1..n) * 10^e. */
typedef struct digits {
  char d[40]; /* digits, no trailing zeros (at least one digit) */
  int n;      /* number of digits */
  int e;      /* decimal exponent of d[0] */
} digits;

/* Parses "D.DDDDe+XX" (as printed by %e) into g, dropping trailing zeros. */
static void parse_e(const char *s, digits *g) {
  g->n = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9' && g->n < (int)sizeof g->d - 1) g->d[g->n++] = *s;
  g->e = *s == 'e' ? atoi(s + 1) : 0;
  while (g->n > 1 && g->d[g->n - 1] == '0') g->n--;
  g->d[g->n] = 0;
}

/* Shortest digits of |x| that read back (as float when f32) to x. */
static void shortest(double x, int f32, digits *g) {
  char buf[64];
  double a = fabs(x);
  if (a == 0) {
    g->d[0] = '0', g->d[1] = 0, g->n = 1, g->e = 0;
    return;
  }
  int maxp = f32 ? 8 : 16; /* 9 / 17 significant digits always round-trip */
  for (int p = 0; p <= maxp; p++) {
    snprintf(buf, sizeof buf, "%.*e", p, a);
    if (p == maxp || (f32 ? strtof(buf, NULL) == (float)a : strtod(buf, NULL) == a)) break;
  }
  parse_e(buf, g);
}

/* A float as numpy's first pass writes it, unpadded: sign+integer part,
** fraction digits, and (scientific only) the exponent. */
typedef struct fparts {
  char ip[48]; /* sign and integer digits ("-0", "12", "3") */
  char fp[48]; /* fraction digits, possibly empty */
  int exp;     /* decimal exponent (scientific) */
} fparts;

/* dragon4_positional(x, precision=6, unique=True, fractional=True, trim='.'). */
static void positional(double x, int f32, fparts *o) {
  digits g;
  shortest(x, f32, &g);
  const char *sign = signbit(x) ? "-" : "";
  int nfrac = g.n - 1 - g.e;
  if (nfrac > fmt_prec) {
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", fmt_prec, fabs(x));
    char *dot = strchr(buf, '.');
    *dot = 0;
    snprintf(o->ip, sizeof o->ip, "%s%.40s", sign, buf); /* < 1e8 here */
    snprintf(o->fp, sizeof o->fp, "%s", dot + 1);
    size_t k = strlen(o->fp);
    while (k > 0 && o->fp[k - 1] == '0') o->fp[--k] = 0;
  } else if (g.e >= 0) {
    /* integer part: digits 0..e (zero-filled), fraction: the rest */
    int p = snprintf(o->ip, sizeof o->ip, "%s", sign);
    for (int i = 0; i <= g.e && p < (int)sizeof o->ip - 1; i++) o->ip[p++] = i < g.n ? g.d[i] : '0';
    o->ip[p] = 0;
    snprintf(o->fp, sizeof o->fp, "%s", g.e + 1 < g.n ? g.d + g.e + 1 : "");
  } else {
    snprintf(o->ip, sizeof o->ip, "%s0", sign);
    int p = 0;
    for (int i = 0; i < -g.e - 1; i++) o->fp[p++] = '0';
    for (int i = 0; i < g.n; i++) o->fp[p++] = g.d[i];
    o->fp[p] = 0;
  }
  o->exp = 0;
}

/* dragon4_scientific(x, precision=6, unique=True, trim='.'). */
static void scientific(double x, int f32, fparts *o) {
  digits g;
  shortest(x, f32, &g);
  if (g.n - 1 > fmt_prec) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.*e", fmt_prec, fabs(x));
    parse_e(buf, &g);
  }
  snprintf(o->ip, sizeof o->ip, "%s%c", signbit(x) ? "-" : "", g.d[0]);
  snprintf(o->fp, sizeof o->fp, "%s", g.d + 1);
  o->exp = g.e;
}

/* ------------------------------------------------------- element formats */

typedef struct afmt {
  gk_dtype t;
  int width;     /* ints: field width */
  int expf;      /* floats: scientific notation */
  int pad_left;  /* floats: width of sign + integer part */
  int pad_right; /* floats: width of fraction (positional) / exp+mantissa */
  int prec;      /* floats, scientific: mantissa fraction digits */
  int exp_size;  /* floats, scientific: exponent digits */
} afmt;

static double load_f(gk_dtype t, const void *data, int64_t i) {
  switch (t) {
  case GK_BOOL: return ((const uint8_t *)data)[i] != 0;
  case GK_I32: return ((const int32_t *)data)[i];
  case GK_I64: return (double)((const int64_t *)data)[i];
  case GK_F32: return ((const float *)data)[i];
  default: return ((const double *)data)[i];
  }
}

static int64_t load_i(gk_dtype t, const void *data, int64_t i) {
  return t == GK_I32 ? ((const int32_t *)data)[i] : ((const int64_t *)data)[i];
}

static int ndigits_i(int64_t v) {
  char buf[32];
  return snprintf(buf, sizeof buf, "%lld", (long long)v);
}

/* The walk over shown elements (numpy's _leading_trailing). */
typedef struct walk {
  const int64_t *shape;
  int64_t stride[GK_MAX_DIMS];
  int ndim;
  int summary;        /* size > FMT_THRESHOLD */
  void (*visit)(void *u, int64_t flat);
  void *u;
} walk;

static void walk_axis(walk *w, int axis, int64_t off) {
  if (axis == w->ndim) {
    w->visit(w->u, off);
    return;
  }
  int64_t n = w->shape[axis];
  int cut = w->summary && n > 2 * FMT_EDGE;
  for (int64_t i = 0; i < n; i++) {
    if (cut && i == FMT_EDGE) i = n - FMT_EDGE;
    walk_axis(w, axis + 1, off + i * w->stride[axis]);
  }
}

/* Statistics of the shown elements, gathered by one walk. */
typedef struct stats {
  gk_dtype t;
  const void *data;
  int any;                  /* any element seen */
  int64_t imax, imin;       /* ints */
  int nz;                   /* floats: any finite non-zero */
  double dmax, dmin;        /* floats: max/min finite non-zero magnitude */
  float fmax, fmin;         /* same, in float32 for f32 data */
  int nonfinite, neginf;    /* floats: any inf/nan, any -inf */
  int nfinite;              /* floats: any finite */
  afmt *f;                  /* second walk: widths being accumulated */
} stats;

static void visit_stats(void *u, int64_t i) {
  stats *s = u;
  if (s->t == GK_I32 || s->t == GK_I64) {
    int64_t v = load_i(s->t, s->data, i);
    if (!s->any || v > s->imax) s->imax = v;
    if (!s->any || v < s->imin) s->imin = v;
    s->any = 1;
    return;
  }
  double v = load_f(s->t, s->data, i);
  s->any = 1;
  if (!isfinite(v)) {
    s->nonfinite = 1;
    if (isinf(v) && v < 0) s->neginf = 1;
    return;
  }
  s->nfinite = 1;
  if (v == 0) return;
  double a = fabs(v);
  if (!s->nz || a > s->dmax) s->dmax = a, s->fmax = (float)a;
  if (!s->nz || a < s->dmin) s->dmin = a, s->fmin = (float)a;
  s->nz = 1;
}

/* Second pass over finite values: widths of integer/fraction/exponent. */
static void visit_widths(void *u, int64_t i) {
  stats *s = u;
  afmt *f = s->f;
  double v = load_f(s->t, s->data, i);
  if (!isfinite(v)) return;
  fparts p;
  if (f->expf) {
    scientific(v, s->t == GK_F32, &p);
    char eb[16];
    int el = snprintf(eb, sizeof eb, "%+03d", p.exp) - 1; /* digits after the sign */
    if (el > f->exp_size) f->exp_size = el;
    if ((int)strlen(p.fp) > f->prec) f->prec = (int)strlen(p.fp);
  } else {
    positional(v, s->t == GK_F32, &p);
    if ((int)strlen(p.fp) > f->pad_right) f->pad_right = (int)strlen(p.fp);
  }
  if ((int)strlen(p.ip) > f->pad_left) f->pad_left = (int)strlen(p.ip);
}

/* FloatingFormat.fillFormat / IntegerFormat.__init__ over the shown data. */
static void choose_format(walk *w, gk_dtype t, const void *data, afmt *f) {
  stats s;
  memset(&s, 0, sizeof s);
  memset(f, 0, sizeof *f);
  f->t = t;
  s.t = t;
  s.data = data;
  s.f = f;
  if (t == GK_BOOL) return;
  w->visit = visit_stats;
  w->u = &s;
  walk_axis(w, 0, 0);
  if (t == GK_I32 || t == GK_I64) {
    int a = ndigits_i(s.imax), b = ndigits_i(s.imin);
    f->width = a > b ? a : b;
    return;
  }
  if (s.nz) {
    if (t == GK_F32) {
      volatile float ratio = s.fmax / s.fmin; /* float32 division, as numpy */
      f->expf = s.fmax >= 1e6f || s.fmin < 1e-4f || ratio > 1000.0f;
    } else {
      f->expf = s.dmax >= 1e8 || s.dmin < 1e-4 || s.dmax / s.dmin > 1000.0;
    }
  }
  if (!s.nfinite) {
    f->expf = 0;
    f->pad_left = f->pad_right = 0;
  } else {
    w->visit = visit_widths;
    walk_axis(w, 0, 0);
    if (f->expf) f->pad_right = f->exp_size + 2 + f->prec;
  }
  if (s.nonfinite) {
    int offset = f->pad_right + 1;
    if (3 - offset > f->pad_left) f->pad_left = 3 - offset;
    if (3 + s.neginf - offset > f->pad_left) f->pad_left = 3 + s.neginf - offset;
  }
}

/* Writes element i as numpy's format function would; returns its length. */
static int format_elem(const afmt *f, const void *data, int64_t i, char *out) {
  switch (f->t) {
  case GK_BOOL: return snprintf(out, FMT_WORD, "%s", ((const uint8_t *)data)[i] ? " true" : "false");
  case GK_I32:
  case GK_I64: return snprintf(out, FMT_WORD, "%*lld", f->width, (long long)load_i(f->t, data, i));
  default: break;
  }
  double v = load_f(f->t, data, i);
  if (!isfinite(v)) {
    const char *r = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
    return snprintf(out, FMT_WORD, "%*s", f->pad_left + f->pad_right + 1, r);
  }
  fparts p;
  if (f->expf) {
    scientific(v, f->t == GK_F32, &p);
    if ((int)strlen(p.fp) < f->prec) {
      /* numpy's min_digits: Dragon4 goes on with the value's exact digits
      ** (visible for float32 subnormals: 1.25996e-40 -> 1.259964e-40) */
      char buf[64];
      snprintf(buf, sizeof buf, "%.*e", f->prec, fabs(v));
      char *e = strchr(buf, 'e');
      *e = 0;
      snprintf(p.fp, sizeof p.fp, "%.*s", f->prec, buf + 2); /* prec <= FMT_MAX_DIGITS */
      p.exp = atoi(e + 1);
      snprintf(p.ip, sizeof p.ip, "%s%c", signbit(v) ? "-" : "", buf[0]);
    }
    return snprintf(out, FMT_WORD, "%*s.%s%.*se%c%0*d", f->pad_left, p.ip, p.fp,
                    f->prec - (int)strlen(p.fp), "00000000000000000000", p.exp < 0 ? '-' : '+',
                    f->exp_size, abs(p.exp));
  }
  positional(v, f->t == GK_F32, &p);
  return snprintf(out, FMT_WORD, "%*s.%-*s", f->pad_left, p.ip, f->pad_right, p.fp);
}

/* ------------------------------------------------------------------ layout */

typedef struct layout {
  fmt_buf *b;
  walk *w;
  const afmt *f;
  const void *data;
} layout;

/* Appends one word to the current line of a 1-d row (numpy's _extendLine):
** wraps first when it would pass `width` and the line holds more than the
** hanging indent. */
static void extend_line(layout *L, size_t *linelen, const char *word, size_t wlen, int indent,
                        int width) {
  if (*linelen + wlen > (size_t)width && *linelen > (size_t)indent) {
    rstrip(L->b);
    fmt_putc(L->b, '\n');
    fmt_spaces(L->b, (size_t)indent);
    *linelen = (size_t)indent;
  }
  fmt_append(L->b, word, wlen);
  *linelen += wlen;
}

/* numpy's _formatArray recurser: the sub-array at `axis` starting at flat
** offset `off`, with hanging indent `indent` spaces and width `width`. */
static void recurse(layout *L, int axis, int64_t off, int indent, int width) {
  walk *w = L->w;
  int64_t n = w->shape[axis];
  int cut = w->summary && n > 2 * FMT_EDGE;
  fmt_putc(L->b, '[');
  if (axis == w->ndim - 1) {
    char word[FMT_WORD];
    size_t linelen = (size_t)indent;
    int elem_width = width - 1; /* room for the closing ']' or separator */
    for (int64_t i = 0; i < n; i++) {
      if (cut && i == FMT_EDGE) {
        extend_line(L, &linelen, "...", 3, indent, elem_width);
        fmt_putc(L->b, ' ');
        linelen++;
        i = n - FMT_EDGE;
      }
      int wl = format_elem(L->f, L->data, off + i * w->stride[axis], word);
      extend_line(L, &linelen, word, (size_t)wl, indent, elem_width);
      if (i + 1 < n) {
        fmt_putc(L->b, ' ');
        linelen++;
      }
    }
  } else {
    int nl = w->ndim - axis - 1; /* blank lines between blocks grow with depth */
    for (int64_t i = 0; i < n; i++) {
      if (i > 0) fmt_spaces(L->b, (size_t)indent);
      if (cut && i == FMT_EDGE) {
        fmt_puts(L->b, "...");
        for (int k = 0; k < nl; k++) fmt_putc(L->b, '\n');
        fmt_spaces(L->b, (size_t)indent);
        i = n - FMT_EDGE;
      }
      recurse(L, axis + 1, off + i * w->stride[axis], indent + 1, width - 1);
      if (i + 1 < n)
        for (int k = 0; k < nl; k++) fmt_putc(L->b, '\n');
    }
  }
  fmt_putc(L->b, ']');
}

int fmt_scalar(fmt_buf *b, gk_dtype t, const void *data) {
  switch (t) {
  case GK_BOOL: return fmt_puts(b, *(const uint8_t *)data ? "true" : "false");
  case GK_I32: return fmt_printf(b, "%lld", (long long)*(const int32_t *)data);
  case GK_I64: return fmt_printf(b, "%lld", (long long)*(const int64_t *)data);
  case GK_F32:
  case GK_F64: break;
  default: return GK_EMISUSE;
  }
  double v = load_f(t, data, 0);
  if (isnan(v)) return fmt_puts(b, "nan");
  if (isinf(v)) return fmt_puts(b, v < 0 ? "-inf" : "inf");
  char buf[48];
  int prec = b->digits > 0 && b->digits <= FMT_MAX_DIGITS ? b->digits : FMT_PRECISION;
  if (t == GK_F32 && prec > 9) prec = 9;   /* 9 digits round-trip any float32: more is noise */
  snprintf(buf, sizeof buf, "%.*g", prec, v);
  if (!strpbrk(buf, ".e")) strcat(buf, ".0");
  return fmt_puts(b, buf);
}

int fmt_array(fmt_buf *b, gk_dtype t, int ndim, const int64_t *shape, const void *data) {
  if ((unsigned)t > GK_F64 || ndim < 0 || ndim > GK_MAX_DIMS) return GK_EMISUSE;
  if (ndim == 0) return fmt_scalar(b, t, data);
  walk w;
  memset(&w, 0, sizeof w);
  int64_t size = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    if (shape[i] < 0) return GK_EMISUSE;
    w.stride[i] = size;
    size *= shape[i]; /* shapes of real arrays cannot overflow */
  }
  if (size == 0) return fmt_puts(b, "[]");
  w.shape = shape;
  w.ndim = ndim;
  w.summary = size > FMT_THRESHOLD;
  afmt f;
  fmt_prec = b->digits > 0 && b->digits <= FMT_MAX_DIGITS ? b->digits : FMT_PRECISION;
  choose_format(&w, t, data, &f);
  layout L = {b, &w, &f, data};
  recurse(&L, 0, 0, 1, b->width >= FMT_MIN_WIDTH && b->width <= FMT_MAX_WIDTH ? b->width : FMT_LINEWIDTH);
  return b->status;
}
