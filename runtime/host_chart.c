/*
** runtime/host_chart.c -- text charts: plot(x), plot(x, y) and the chart
** under a printed hist result.
**
** Every chart is text appended to a fmt_buf, `width` columns wide at most,
** in one of two alphabets: Unicode (block elements U+2581..U+2588 and
** U+258F..U+2589 for eighths of a cell, U+2022 for points, box drawing for
** the axes) or plain ASCII ('#', '*', '|', '-', '+').  The caller chooses
** (the REPL: Unicode on a terminal unless NO_COLOR is set).
**
**   chart_plot(x only)   a column chart of x: when no value is negative,
**                        bars from 0 (eighth-cell tops in Unicode); else
**                        each column marks the range [min, max] of the
**                        values it covers (a long vector is bucketed into
**                        the columns there are), with the zero line drawn.
**   chart_plot(x and y)  a scatter of the points (x[i], y[i]).
**   chart_hist           one horizontal bar per bin, with its count (more
**                        bins than CHART_HBARS: a column chart instead).
** NaN values are left out; infinities too (they have no place on an axis).
*/
#include "runtime/host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_ROWS 10     /* plot height in text rows */
#define CHART_HBARS 40    /* hist bins drawn as horizontal bars at most */
#define CHART_LABEL 10    /* width of the y-axis labels */

typedef struct alphabet {
  const char *vbar[9];  /* 0..8 eighths of a cell, bottom up */
  const char *hbar[9];  /* 0..8 eighths of a cell, left to right */
  const char *point, *yaxis, *corner, *xaxis, *zero, *tick;
} alphabet;

static const alphabet UNI = {
  { " ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88" },
  { "", "\xe2\x96\x8f", "\xe2\x96\x8e", "\xe2\x96\x8d", "\xe2\x96\x8c", "\xe2\x96\x8b", "\xe2\x96\x8a", "\xe2\x96\x89", "\xe2\x96\x88" },
  "\xe2\x80\xa2", "\xe2\x94\x82", "\xe2\x94\x94", "\xe2\x94\x80", "\xe2\x94\x88", "\xe2\x94\xa4",
};
static const alphabet ASC = {
  { " ", " ", " ", " ", "#", "#", "#", "#", "#" },
  { "", "", "", "", "#", "#", "#", "#", "#" },
  "*", "|", "+", "-", "-", "+",
};

static void label(fmt_buf *b, double v) {
  char t[32];
  snprintf(t, sizeof t, "%.4g", v);
  fmt_printf(b, "%*s", CHART_LABEL, t);
}

/* The y range of the finite values; 0 when there is none. */
static int range(const double *v, int64_t n, double *lo, double *hi) {
  int any = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(v[i])) continue;
    if (!any || v[i] < *lo) *lo = v[i];
    if (!any || v[i] > *hi) *hi = v[i];
    any = 1;
  }
  if (any && *lo == *hi) { *lo -= 0.5; *hi += 0.5; }
  return any;
}

static int row_of(double v, double lo, double hi, int rows) {
  int r = (int)floor((v - lo) / (hi - lo) * rows);
  return r < 0 ? 0 : r >= rows ? rows - 1 : r;
}

/* The x axis line and its end labels. */
static void x_axis(fmt_buf *b, const alphabet *a, int cols, double x0, double x1) {
  fmt_printf(b, "%*s%s", CHART_LABEL, "", a->corner);
  for (int c = 0; c < cols; c++) fmt_puts(b, a->xaxis);
  fmt_putc(b, '\n');
  char l[32], r[32];
  snprintf(l, sizeof l, "%.4g", x0);
  snprintf(r, sizeof r, "%.4g", x1);
  int gap = cols - (int)strlen(l) - (int)strlen(r) + 1;
  fmt_printf(b, "%*s%s%*s%s\n", CHART_LABEL, "", l, gap > 1 ? gap : 1, "", r);
}

static int plot_columns(fmt_buf *b, const alphabet *a, const double *y, int64_t n, int width, double x0, double x1) {
  int cols = width - CHART_LABEL - 2;
  if (cols < 8) cols = 8;
  if (n < cols) cols = (int)n;
  double lo = 0, hi = 0;
  if (!range(y, n, &lo, &hi)) return fmt_puts(b, "(nothing to plot: no finite value)\n");
  int bars = lo >= 0;
  if (bars) lo = 0;
  double *cmin = malloc(sizeof(double) * (size_t)cols * 2), *cmax;
  if (!cmin) return b->status = GK_ENOMEM;
  cmax = cmin + cols;
  for (int c = 0; c < cols; c++) {
    int64_t s = (int64_t)((double)c * (double)n / cols), e = (int64_t)((double)(c + 1) * (double)n / cols);
    if (e <= s) e = s + 1;
    cmin[c] = NAN; cmax[c] = NAN;
    for (int64_t i = s; i < e && i < n; i++) {
      if (!isfinite(y[i])) continue;
      if (isnan(cmin[c]) || y[i] < cmin[c]) cmin[c] = y[i];
      if (isnan(cmax[c]) || y[i] > cmax[c]) cmax[c] = y[i];
    }
  }
  int zrow = !bars && lo < 0 && hi > 0 ? row_of(0, lo, hi, CHART_ROWS) : -1;
  for (int r = CHART_ROWS - 1; r >= 0; r--) {
    if (r == CHART_ROWS - 1) label(b, hi);
    else if (r == 0) label(b, lo);
    else fmt_printf(b, "%*s", CHART_LABEL, "");
    fmt_puts(b, r == CHART_ROWS - 1 || r == 0 ? a->tick : a->yaxis);
    for (int c = 0; c < cols; c++) {
      if (bars) {
        int eighths = isnan(cmax[c]) ? 0 : (int)lround(cmax[c] / hi * CHART_ROWS * 8);
        int k = eighths - r * 8;
        fmt_puts(b, a->vbar[k <= 0 ? 0 : k >= 8 ? 8 : k]);
      } else {
        int on = !isnan(cmin[c]) && r >= row_of(cmin[c], lo, hi, CHART_ROWS) && r <= row_of(cmax[c], lo, hi, CHART_ROWS);
        fmt_puts(b, on ? a->point : r == zrow ? a->zero : " ");
      }
    }
    fmt_putc(b, '\n');
  }
  free(cmin);
  x_axis(b, a, cols, x0, x1);
  return b->status;
}

static int plot_scatter(fmt_buf *b, const alphabet *a, const double *x, const double *y, int64_t n, int width) {
  int cols = width - CHART_LABEL - 2;
  if (cols < 8) cols = 8;
  double xl = 0, xh = 0, yl = 0, yh = 0;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(x[i]) || !isfinite(y[i])) continue;
    if (!k || x[i] < xl) xl = x[i];
    if (!k || x[i] > xh) xh = x[i];
    if (!k || y[i] < yl) yl = y[i];
    if (!k || y[i] > yh) yh = y[i];
    k++;
  }
  if (!k) return fmt_puts(b, "(nothing to plot: no finite point)\n");
  if (xl == xh) { xl -= 0.5; xh += 0.5; }
  if (yl == yh) { yl -= 0.5; yh += 0.5; }
  unsigned char *grid = calloc((size_t)cols, CHART_ROWS);
  if (!grid) return b->status = GK_ENOMEM;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(x[i]) || !isfinite(y[i])) continue;
    int c = (int)floor((x[i] - xl) / (xh - xl) * cols);
    if (c >= cols) c = cols - 1;
    grid[(size_t)row_of(y[i], yl, yh, CHART_ROWS) * (size_t)cols + (size_t)c] = 1;
  }
  for (int r = CHART_ROWS - 1; r >= 0; r--) {
    if (r == CHART_ROWS - 1) label(b, yh);
    else if (r == 0) label(b, yl);
    else fmt_printf(b, "%*s", CHART_LABEL, "");
    fmt_puts(b, r == CHART_ROWS - 1 || r == 0 ? a->tick : a->yaxis);
    for (int c = 0; c < cols; c++) fmt_puts(b, grid[(size_t)r * (size_t)cols + (size_t)c] ? a->point : " ");
    fmt_putc(b, '\n');
  }
  free(grid);
  x_axis(b, a, cols, xl, xh);
  return b->status;
}

/* Drops the blanks that end lines of b from offset `from` on: a chart's
** empty cells at a row's end are not worth bytes (or diffs). */
static int trim(fmt_buf *b, size_t from) {
  if (b->status || !b->data) return b->status;
  size_t w = from;
  for (size_t r = from; r < b->len; r++) {
    if (b->data[r] == '\n') while (w > from && b->data[w - 1] == ' ') w--;
    b->data[w++] = b->data[r];
  }
  b->len = w;
  b->data[w] = '\0';
  return GK_OK;
}

int chart_plot(fmt_buf *b, const double *x, const double *y, int64_t n, int width, int unicode) {
  const alphabet *a = unicode ? &UNI : &ASC;
  size_t from = b->len;
  if (width <= 0) width = 75;
  if (n == 0) return fmt_puts(b, "(nothing to plot: empty)\n");
  if (x) plot_scatter(b, a, x, y, n, width);
  else plot_columns(b, a, y, n, width, 0, (double)(n - 1));
  return trim(b, from);
}

int chart_hist(fmt_buf *b, const int64_t *counts, int64_t n, double lo, double hi, int width, int unicode) {
  const alphabet *a = unicode ? &UNI : &ASC;
  if (width <= 0) width = 75;
  if (n == 0) return GK_OK;
  if (n > CHART_HBARS) {
    double *v = malloc(sizeof(double) * (size_t)n);
    if (!v) return b->status = GK_ENOMEM;
    for (int64_t i = 0; i < n; i++) v[i] = (double)counts[i];
    size_t from = b->len;
    plot_columns(b, a, v, n, width, lo, hi);
    free(v);
    return trim(b, from);
  }
  int64_t top = 0;
  for (int64_t i = 0; i < n; i++) if (counts[i] > top) top = counts[i];
  char l0[32], l1[32];
  int lw = 0;
  for (int64_t i = 0; i < n; i++) {   /* the bins' left edges, as labels */
    snprintf(l0, sizeof l0, "%.4g", lo + (hi - lo) * (double)i / (double)n);
    if ((int)strlen(l0) > lw) lw = (int)strlen(l0);
  }
  snprintf(l1, sizeof l1, "%lld", (long long)top);
  int bar = width - lw - 3 - (int)strlen(l1);
  if (bar < 8) bar = 8;
  for (int64_t i = 0; i < n; i++) {
    snprintf(l0, sizeof l0, "%.4g", lo + (hi - lo) * (double)i / (double)n);
    fmt_printf(b, "%*s %s", lw, l0, a->yaxis);
    int64_t eighths = top ? (int64_t)llround((double)counts[i] / (double)top * bar * 8) : 0;
    for (int64_t k = 0; k < eighths / 8; k++) fmt_puts(b, a->hbar[8]);
    fmt_puts(b, a->hbar[eighths % 8]);
    fmt_printf(b, " %lld\n", (long long)counts[i]);
  }
  return b->status;
}
