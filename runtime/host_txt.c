/*
** runtime/host_txt.c -- delimited text files: numpy.loadtxt and savetxt.
**
** txt_load reads the whole file, then makes two passes over its lines: the
** first counts rows and columns and checks every cell (so nothing is
** allocated for a file that will be refused, and the error names the row
** and column of the first bad cell), the second converts into the f64
** buffer.  A cell is what lies between delimiters, blanks around it
** trimmed; it must be a whole number as strtod reads it ("nan", "inf",
** "1e-3", "-0x1p3" included); an empty cell is an error, as in numpy.  A
** '#' starts a comment to the end of the line; lines that are blank (after
** comments are cut) are skipped; the first `skiprows` lines are skipped
** whatever they hold (numpy's skiprows).  Rows are numbered by their line
** in the file, from 1, columns from 1.
**
** txt_save writes into a buffer, then through host_write_file (temp file,
** rename), so a failed save leaves the old file.
*/
#include "runtime/host.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TXT_MAX_BYTES ((int64_t)1 << 34)   /* 16 GiB: text this large is not a table to parse in memory */
#define TXT_CELL_SHOW 24                    /* bytes of a bad cell quoted in a message */


static int blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

/* One pass over the lines of [buf, buf+len).  With out NULL: counts rows
** (*rows) and the columns of the first (*cols), checking each cell; else
** writes the cells into out. */
static int pass(const char *path, char *buf, size_t len, const char *delim, int64_t skiprows,
                int64_t *rows, int64_t *cols, double *out, char *err, size_t errlen) {
  size_t dl = delim ? strlen(delim) : 0;
  int64_t line = 0, r = 0, k = 0;
  char *p = buf, *end = buf + len;
  while (p < end) {
    char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    line++;
    if (line <= skiprows) { p = eol + 1; continue; }
    char *hash = memchr(p, '#', (size_t)(eol - p));
    char *stop = hash ? hash : eol;
    char *q = p;
    while (q < stop && blank(*q)) q++;
    if (q == stop) { p = eol + 1; continue; }
    int64_t c = 0;
    char *cell = p;
    for (;;) {
      char *ce;   /* end of this cell */
      char *next;
      if (delim) {
        ce = cell;
        while (ce < stop && !((size_t)(stop - ce) >= dl && !memcmp(ce, delim, dl))) ce++;
        next = ce < stop ? ce + dl : NULL;
      } else {
        while (cell < stop && blank(*cell)) cell++;
        ce = cell;
        while (ce < stop && !blank(*ce)) ce++;
        next = ce;
        while (next < stop && blank(*next)) next++;
        if (next == stop) next = NULL;
      }
      char *a = cell, *b = ce;
      while (a < b && blank(*a)) a++;
      while (b > a && blank(b[-1])) b--;
      c++;
      char save = *b, *e2;
      *b = '\0';
      double v = a < b ? strtod(a, &e2) : 0;
      int ok = a < b && e2 == b;
      *b = save;
      if (!ok) {
        if (a == b) return host_file_err(err, errlen, GK_EIO, path, "row %lld, column %lld: empty cell", (long long)line, (long long)c);
        return host_file_err(err, errlen, GK_EIO, path, "row %lld, column %lld: cannot read '%.*s%s' as a number",
                       (long long)line, (long long)c, (int)(b - a > TXT_CELL_SHOW ? TXT_CELL_SHOW : b - a), a,
                       b - a > TXT_CELL_SHOW ? "..." : "");
      }
      if (out) out[k++] = v;
      if (!next) break;
      cell = next;
    }
    if (r == 0 && !out) *cols = c;
    else if (c != *cols)
      return host_file_err(err, errlen, GK_EIO, path, "row %lld has %lld column%s, the rows before it %lld",
                     (long long)line, (long long)c, c == 1 ? "" : "s", (long long)*cols);
    r++;
    p = eol + 1;
  }
  if (!out) *rows = r;
  return GK_OK;
}

int txt_load(const char *path, const char *delim, int64_t skiprows, npy_alloc_fn alloc_data, void *ud,
             char *err, size_t errlen) {
  if (delim && !*delim) return host_file_err(err, errlen, GK_EVALUE, path, "the delimiter is empty");
  int fd, orc;
  struct stat st;
  if ((orc = host_open_regular(path, &fd, &st, err, errlen)) != GK_OK) return orc;
  if ((int64_t)st.st_size > TXT_MAX_BYTES) {
    close(fd);
    return host_file_err(err, errlen, GK_ELIMIT, path, "a text file over 16 GiB (save it as .npy)");
  }
  size_t len = (size_t)st.st_size;
  char *buf = malloc(len + 1);
  if (!buf) { close(fd); return host_file_err(err, errlen, GK_ENOMEM, path, "out of memory"); }
  size_t got = 0;
  while (got < len) {
    ssize_t r = read(fd, buf + got, len - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  len = got;
  buf[len] = '\0';
  if (memchr(buf, '\0', len)) { free(buf); return host_file_err(err, errlen, GK_EIO, path, "not a text file (it contains a NUL byte)"); }
  int64_t rows = 0, cols = 0;
  int rc = pass(path, buf, len, delim, skiprows, &rows, &cols, NULL, err, errlen);
  if (rc == GK_OK) {
    /* numpy's ndmin=0: squeeze axes of length 1 */
    int64_t shape[2];
    int ndim = 0;
    if (rows == 0) shape[ndim++] = 0;
    else {
      if (rows != 1) shape[ndim++] = rows;
      if (cols != 1) shape[ndim++] = cols;
    }
    double *out = alloc_data(ud, GK_F64, ndim, shape, (size_t)(rows * cols) * sizeof(double));
    if (!out && rows * cols > 0) rc = host_file_err(err, errlen, GK_ENOMEM, path, "out of memory");
    else if (rows * cols > 0) rc = pass(path, buf, len, delim, skiprows, &rows, &cols, out, err, errlen);
  }
  free(buf);
  return rc;
}

int txt_save(const char *path, const char *delim, gk_dtype t, int ndim, const int64_t *shape, const void *data,
             char *err, size_t errlen) {
  if (ndim != 1 && ndim != 2)
    return host_file_err(err, errlen, GK_ETYPE, path, "savetxt writes a vector or a matrix, got %d dimensions", ndim);
  if (!delim) delim = " ";
  int64_t rows = shape[0], cols = ndim == 2 ? shape[1] : 1;
  fmt_buf b;
  fmt_init(&b);
  for (int64_t r = 0; r < rows && b.status == GK_OK; r++) {
    for (int64_t c = 0; c < cols; c++) {
      int64_t i = r * cols + c;
      if (c) fmt_puts(&b, delim);
      switch (t) {
      case GK_BOOL: fmt_putc(&b, ((const uint8_t *)data)[i] ? '1' : '0'); break;
      case GK_I32: fmt_printf(&b, "%d", ((const int32_t *)data)[i]); break;
      case GK_I64: fmt_printf(&b, "%lld", (long long)((const int64_t *)data)[i]); break;
      case GK_F32: fmt_printf(&b, "%.18e", (double)((const float *)data)[i]); break;
      default: fmt_printf(&b, "%.18e", ((const double *)data)[i]); break;
      }
    }
    fmt_putc(&b, '\n');
  }
  int rc;
  if (b.status) rc = host_file_err(err, errlen, b.status, path, "out of memory");
  else {
    const void *bufs[1] = { b.data };
    size_t lens[1] = { b.len };
    rc = host_write_file(path, bufs, lens, 1, err, errlen);
  }
  fmt_free(&b);
  return rc;
}
