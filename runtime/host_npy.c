/*
** runtime/host_npy.c -- reading and writing numpy .npy files.
**
** The format (numpy/lib/format.py): the magic "\x93NUMPY", a major and a
** minor version byte, a little-endian header length (2 bytes in version 1.0,
** 4 bytes in 2.0 and 3.0), then the header: a Python dict literal with
** exactly the keys 'descr' (a dtype string such as '<f4'), 'fortran_order'
** (True/False) and 'shape' (a tuple of ints), padded with spaces and ended
** by '\n'; then the raw data.  Version 3.0 differs from 2.0 only in allowing
** UTF-8 in the header, which no dtype gk reads needs.
**
** npy_load trusts nothing in the file: every field is checked, the element
** count and byte size are computed with overflow checks, and the file size is
** compared with the size the shape implies BEFORE any data buffer is
** allocated, so a hostile header cannot make us allocate or read past the
** end.  Trailing bytes after the data are accepted (numpy does).  Every
** malformed or unreadable file is GK_EIO with a one-line message that starts
** with the file name.
**
** npy_save writes version 1.0 (2.0 when the header would not fit 65535
** bytes), the header padded so that the data starts at a multiple of
** NPY_ALIGN, into "PATH.tmp.PID.N" and renames that over PATH, so a reader
** never sees a half-written file.
*/
#include "runtime/host.h"
#include "runtime/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64         /* numpy's ARRAY_ALIGN: data offset multiple */
#define NPY_DESCR_MAX 64     /* longest descr string we keep for messages */
#define NPY_PATH_MAX 4096    /* longest path npy_save accepts (temp name) */

/* Writes "PATH: message" into err; returns code (host.h; also the .npz and
** text readers'). */
int host_file_err(char *err, size_t errlen, int code, const char *path, const char *f, ...) {
  if (err && errlen) {
    int n = snprintf(err, errlen, "%s: ", path);
    if (n >= 0 && (size_t)n < errlen) {
      va_list ap;
      va_start(ap, f);
      vsnprintf(err + n, errlen - (size_t)n, f, ap);
      va_end(ap);
      /* header bytes quoted from a broken file: keep the message printable */
      for (char *q = err + n; *q; q++)
        if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f) *q = '?';
    }
  }
  return code;
}

static size_t dtype_size(gk_dtype t) { return rt_dtype_size(t); }

/* ---------------------------------------------------------- header parser */

/* Parser state over the header text [p, end). */
typedef struct hparse {
  const char *p, *end;
  char descr[NPY_DESCR_MAX]; /* the 'descr' string */
  int fortran;               /* the 'fortran_order' value */
  int ndim;                  /* entries of 'shape' */
  int64_t shape[GK_MAX_DIMS];
  const char *why;           /* what was wrong, for the message */
} hparse;

static void skip_ws(hparse *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
    h->p++;
}

/* Consumes character c (after white space) if it is next. */
static int accept(hparse *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return 1;
  }
  return 0;
}

/* A quoted string without escapes into out (cap bytes); 0 on error. */
static int parse_str(hparse *h, char *out, size_t cap) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return 0;
  char q = *h->p++;
  size_t n = 0;
  while (h->p < h->end && *h->p != q) {
    if (*h->p == '\\' || n + 1 >= cap) return 0;
    out[n++] = *h->p++;
  }
  if (h->p >= h->end) return 0;
  h->p++;
  out[n] = 0;
  return 1;
}

/* The word w (True/False) if it is next and not followed by a name char. */
static int accept_word(hparse *h, const char *w) {
  skip_ws(h);
  size_t n = strlen(w);
  if ((size_t)(h->end - h->p) < n || memcmp(h->p, w, n) != 0) return 0;
  if (h->p + n < h->end && (h->p[n] == '_' || ((h->p[n] | 32) >= 'a' && (h->p[n] | 32) <= 'z')))
    return 0;
  h->p += n;
  return 1;
}

/* '(' [int {',' int}] [','] ')' -- a one-element tuple needs its comma. */
static int parse_shape(hparse *h) {
  if (!accept(h, '(')) return h->why = "'shape' is not a tuple", 0;
  h->ndim = 0;
  int comma = 0;
  for (;;) {
    if (accept(h, ')')) break;
    if (h->ndim > 0 && !comma) return h->why = "'shape' is not a tuple of integers", 0;
    skip_ws(h);
    if (h->p < h->end && *h->p == '-') return h->why = "'shape' has a negative dimension", 0;
    if (h->p >= h->end || *h->p < '0' || *h->p > '9')
      return h->why = "'shape' is not a tuple of integers", 0;
    int64_t v = 0;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
      int d = *h->p++ - '0';
      if (v > (INT64_MAX - d) / 10) return h->why = "a 'shape' dimension is too large", 0;
      v = v * 10 + d;
    }
    if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2 long, old writers */
    if (h->ndim == GK_MAX_DIMS) return h->why = "'shape' has more than 8 dimensions", 0;
    h->shape[h->ndim++] = v;
    comma = accept(h, ',');
  }
  if (h->ndim == 1 && !comma) return h->why = "'shape' is not a tuple", 0;
  return 1;
}

/* The whole header dict; 1 on success, else h->why says what is wrong. */
static int parse_header(hparse *h) {
  int have_descr = 0, have_fo = 0, have_shape = 0;
  if (!accept(h, '{')) return h->why = "header is not a Python dict literal", 0;
  for (;;) {
    char key[32];
    if (accept(h, '}')) break;
    if (!parse_str(h, key, sizeof key)) return h->why = "header dict has a malformed key", 0;
    if (!accept(h, ':')) return h->why = "header dict is malformed (expected ':')", 0;
    if (strcmp(key, "descr") == 0) {
      if (have_descr++) return h->why = "header repeats 'descr'", 0;
      skip_ws(h);
      if (h->p < h->end && *h->p == '[')
        return h->why = "structured dtypes are not supported", 0;
      if (!parse_str(h, h->descr, sizeof h->descr)) return h->why = "'descr' is not a dtype string", 0;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (have_fo++) return h->why = "header repeats 'fortran_order'", 0;
      if (accept_word(h, "True")) h->fortran = 1;
      else if (accept_word(h, "False")) h->fortran = 0;
      else return h->why = "'fortran_order' is not True or False", 0;
    } else if (strcmp(key, "shape") == 0) {
      if (have_shape++) return h->why = "header repeats 'shape'", 0;
      if (!parse_shape(h)) return 0;
    } else {
      return h->why = "header has a key other than 'descr', 'fortran_order', 'shape'", 0;
    }
    if (accept(h, '}')) break;
    if (!accept(h, ',')) return h->why = "header dict is malformed (expected ',' or '}')", 0;
  }
  skip_ws(h);
  if (h->p != h->end) return h->why = "header has text after the dict", 0;
  if (!have_descr) return h->why = "header lacks 'descr'", 0;
  if (!have_fo) return h->why = "header lacks 'fortran_order'", 0;
  if (!have_shape) return h->why = "header lacks 'shape'", 0;
  return 1;
}

/* How a file's elements become gk's (descr_dtype): their size in the file,
** their kind ('b' bool, 'i', 'u', 'f'), big-endian, and whether they are
** already gk's bytes (then read straight into the buffer). */
typedef struct npy_elem { int size; char kind; int big; int direct; } npy_elem;

/* Maps a descr string to the dtype gk reads it as; returns -1 and sets *why
** otherwise.  gk's five dtypes are read as they are; numpy's narrower ones
** widen to one that holds every value (i1, u1, i2, u2 to i32; u4 to i64;
** f2 to f32) and big-endian data is byte-swapped, as numpy's astype would
** do; u8 is refused (values past 2^63 fit no gk dtype). */
static int descr_dtype(const char *d, const char **why, npy_elem *el) {
  char order = 0;
  if (*d == '<' || *d == '>' || *d == '|' || *d == '=') order = *d++;
  int t = strcmp(d, "?") == 0 ? GK_BOOL : -1;   /* '?' is numpy's other name for bool */
  for (int k = 0; t < 0 && rt_dtype_size((gk_dtype)k); k++)
    if (strcmp(d, rt_dtype_info[k].npy + 1) == 0) t = k;   /* the table's descr without its byte order */
  el->big = order == '>';
  if (t >= 0) {
    el->size = (int)rt_dtype_size((gk_dtype)t);
    el->kind = t == GK_BOOL ? 'b' : t == GK_I32 || t == GK_I64 ? 'i' : 'f';
    if (el->size == 1) el->big = 0;
    el->direct = !el->big;
    return t;
  }
  static const struct { const char *d; int t; } wide[] = {
    { "i1", GK_I32 }, { "u1", GK_I32 }, { "i2", GK_I32 }, { "u2", GK_I32 }, { "u4", GK_I64 }, { "f2", GK_F32 },
  };
  for (size_t k = 0; k < sizeof wide / sizeof wide[0]; k++)
    if (strcmp(d, wide[k].d) == 0) {
      el->kind = d[0];
      el->size = d[1] - '0';
      if (el->size == 1) el->big = 0;
      el->direct = 0;
      return wide[k].t;
    }
  if (*d == 'O') *why = "object arrays are not supported";
  else if (*d == 'U' || *d == 'S' || *d == 'a') *why = "string dtypes are not supported";
  else if (!strcmp(d, "u8")) *why = "uint64 is not supported (values past 2^63 fit no gk dtype): convert it first, as a.astype(np.int64)";
  else *why = "dtype not supported (bool, int8 to int64, uint8 to uint32, float16 to float64)";
  return -1;
}

/* IEEE half to float (exact). */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023u, bits;
  if (e == 31) bits = sign | 0x7f800000u | m << 13;                 /* inf, nan */
  else if (e) bits = sign | (e + 112) << 23 | m << 13;              /* normal */
  else if (!m) bits = sign;                                         /* zero */
  else {                                                            /* subnormal */
    e = 113;
    while (!(m & 1024u)) { m <<= 1; e--; }
    bits = sign | e << 23 | (m & 1023u) << 13;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* n elements of the file's form (el) at src into gk's dtype t at dst. */
static void npy_widen(void *dst, gk_dtype t, const unsigned char *src, int64_t n, const npy_elem *el) {
  for (int64_t i = 0; i < n; i++, src += el->size) {
    uint64_t u = 0;
    for (int b = 0; b < el->size; b++) u |= (uint64_t)src[el->big ? el->size - 1 - b : b] << (8 * b);
    int64_t v = (int64_t)u;
    if (el->kind == 'i' && el->size < 8) v = (int64_t)(u << (64 - 8 * el->size)) >> (64 - 8 * el->size);
    switch (t) {
    case GK_BOOL: ((uint8_t *)dst)[i] = u != 0; break;
    case GK_I32: ((int32_t *)dst)[i] = (int32_t)v; break;
    case GK_I64: ((int64_t *)dst)[i] = v; break;
    case GK_F32: {
      float f;
      if (el->size == 2) f = half_to_float((uint16_t)u);
      else { uint32_t w = (uint32_t)u; memcpy(&f, &w, 4); }
      ((float *)dst)[i] = f;
      break;
    }
    default: memcpy((double *)dst + i, &u, 8); break;
    }
  }
}

/* ------------------------------------------------------------------- load */

static uint32_t le32(const unsigned char *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Copies count elements of es bytes from Fortran order (first axis
** fastest) in src to C order in dst. */
static void fortran_to_c(void *dst, const void *src, int ndim, const int64_t *shape, int64_t count, size_t es) {
  int64_t idx[GK_MAX_DIMS] = {0}, cstride[GK_MAX_DIMS];
  int64_t st = 1;
  for (int d = ndim - 1; d >= 0; d--) { cstride[d] = st; st *= shape[d]; }
  int64_t off = 0;   /* C offset of idx */
  for (int64_t k = 0; k < count; k++) {
    memcpy((char *)dst + (size_t)off * es, (const char *)src + (size_t)k * es, es);
    for (int d = 0; d < ndim; d++) {   /* next F-order index */
      if (++idx[d] < shape[d]) { off += cstride[d]; break; }
      off -= (idx[d] - 1) * cstride[d];
      idx[d] = 0;
    }
  }
}

static int npy_read(FILE *f, int64_t fsize, const char *path, npy_alloc_fn alloc_data, void *ud,
                    char *err, size_t errlen);

int npy_load_mem(const char *name, const void *buf, size_t len, npy_alloc_fn alloc_data, void *ud,
                 char *err, size_t errlen) {
  FILE *f = len ? fmemopen((void *)buf, len, "rb") : NULL;
  if (!f) return host_file_err(err, errlen, len ? GK_ENOMEM : GK_EIO, name, len ? "out of memory" : "not a .npy file (empty)");
  return npy_read(f, (int64_t)len, name, alloc_data, ud, err, errlen);
}

/* O_NONBLOCK: opening a FIFO must not wait for a writer; the type is
** checked before any read, then the descriptor goes back to blocking. */
int host_open_regular(const char *path, int *fd, struct stat *st, char *err, size_t errlen) {
  *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0) return host_file_err(err, errlen, GK_EIO, path, "cannot open: %s", strerror(errno));
  if (fstat(*fd, st) != 0 || !S_ISREG(st->st_mode)) {
    close(*fd);
    *fd = -1;
    return host_file_err(err, errlen, GK_EIO, path, "not a regular file");
  }
  fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK);
  return GK_OK;
}

int npy_load(const char *path, npy_alloc_fn alloc_data, void *ud, char *err, size_t errlen) {
  int fd, rc;
  struct stat st;
  if ((rc = host_open_regular(path, &fd, &st, err, errlen)) != GK_OK) return rc;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return host_file_err(err, errlen, GK_EIO, path, "cannot open: %s", strerror(errno));
  }
  return npy_read(f, (int64_t)st.st_size, path, alloc_data, ud, err, errlen);
}

/* Reads a whole .npy from f (fsize bytes long) and closes f. */
static int npy_read(FILE *f, int64_t fsize, const char *path, npy_alloc_fn alloc_data, void *ud,
                    char *err, size_t errlen) {
  int rc = GK_EIO;
  char *hdr = NULL;
  void *ftmp = NULL;
  unsigned char pre[12];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
    host_file_err(err, errlen, GK_EIO, path, "not a .npy file (bad magic)");
    goto fail;
  }
  int major = pre[6], minor = pre[7];
  int64_t hlen, hoff;
  if (major == 1 && minor == 0) {
    hlen = pre[8] | pre[9] << 8;
    hoff = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (fread(pre + 10, 1, 2, f) != 2) {
      host_file_err(err, errlen, GK_EIO, path, "truncated header");
      goto fail;
    }
    hlen = le32(pre + 8);
    hoff = 12;
  } else {
    host_file_err(err, errlen, GK_EIO, path, "unsupported .npy format version %d.%d", major, minor);
    goto fail;
  }
  if (hlen > NPY_MAX_HEADER) {
    host_file_err(err, errlen, GK_EIO, path, "header length %lld exceeds the %u-byte limit",
            (long long)hlen, NPY_MAX_HEADER);
    goto fail;
  }
  if (hoff + hlen > fsize) {
    host_file_err(err, errlen, GK_EIO, path, "truncated header (%lld bytes announced, file has %lld)",
            (long long)hlen, (long long)(fsize - hoff));
    goto fail;
  }
  hdr = malloc((size_t)hlen + 1);
  if (!hdr) {
    rc = host_file_err(err, errlen, GK_ENOMEM, path, "out of memory reading the header");
    goto fail;
  }
  if (fread(hdr, 1, (size_t)hlen, f) != (size_t)hlen) {
    host_file_err(err, errlen, GK_EIO, path, "read error in header");
    goto fail;
  }
  hdr[hlen] = 0;
  hparse h;
  memset(&h, 0, sizeof h);
  h.p = hdr;
  h.end = hdr + hlen;
  if (!parse_header(&h)) {
    host_file_err(err, errlen, GK_EIO, path, "bad header: %s", h.why);
    goto fail;
  }
  const char *why = NULL;
  npy_elem el;
  int t = descr_dtype(h.descr, &why, &el);
  if (t < 0) {
    host_file_err(err, errlen, GK_EIO, path, "dtype '%s': %s", h.descr, why);
    goto fail;
  }
  int64_t count = 1;
  for (int i = 0; i < h.ndim; i++) {
    if (h.shape[i] != 0 && count > INT64_MAX / h.shape[i]) {
      host_file_err(err, errlen, GK_EIO, path, "shape's element count overflows");
      goto fail;
    }
    count *= h.shape[i];
  }
  size_t es = (size_t)el.size;   /* bytes of an element in the file */
  if (count > (int64_t)(SIZE_MAX / 2) / 8 || count > INT64_MAX / 8) {
    host_file_err(err, errlen, GK_EIO, path, "shape's byte size overflows");
    goto fail;
  }
  int64_t bytes = count * (int64_t)es;
  if (fsize - hoff - hlen < bytes) {
    host_file_err(err, errlen, GK_EIO, path, "truncated data (shape needs %lld bytes, file has %lld)",
            (long long)bytes, (long long)(fsize - hoff - hlen));
    goto fail;
  }
  int64_t gbytes = count * (int64_t)dtype_size((gk_dtype)t);   /* in gk's dtype */
  void *data = alloc_data(ud, (gk_dtype)t, h.ndim, h.shape, (size_t)gbytes);
  if (!data && gbytes > 0) {
    rc = host_file_err(err, errlen, GK_ENOMEM, path, "out of memory for %lld bytes", (long long)gbytes);
    goto fail;
  }
  /* Fortran order (numpy writes it for a transposed or np.asfortranarray
  ** array): read as it is, then reorder into the C-order buffer; elements
  ** to widen or byte-swap are read whole first, reordered, then widened. */
  int reorder = h.fortran && h.ndim > 1;
  if (bytes > 0 && (reorder || !el.direct) && !(ftmp = malloc((size_t)bytes * (reorder && !el.direct ? 2 : 1)))) {
    rc = host_file_err(err, errlen, GK_ENOMEM, path, "out of memory for %lld bytes", (long long)bytes);
    goto fail;
  }
  if (bytes > 0 && fread(ftmp ? ftmp : data, 1, (size_t)bytes, f) != (size_t)bytes) {
    host_file_err(err, errlen, GK_EIO, path, "read error in data");
    goto fail;
  }
  if (ftmp && el.direct) fortran_to_c(data, ftmp, h.ndim, h.shape, count, es);
  else if (ftmp) {
    unsigned char *raw = ftmp;
    if (reorder) { fortran_to_c(raw + bytes, raw, h.ndim, h.shape, count, es); raw += bytes; }
    npy_widen(data, (gk_dtype)t, raw, count, &el);
  }
  if (t == GK_BOOL) {
    uint8_t *b = data;
    for (int64_t i = 0; i < count; i++) b[i] = b[i] != 0;
  }
  rc = GK_OK;
fail:
  free(ftmp);
  free(hdr);
  fclose(f);
  return rc;
}

/* ------------------------------------------------------------------- save */

/* write() all of buf, retrying short writes and EINTR; 0, -1 (errno), or 1
** when interrupted (host_stopped, checked every 16 MiB). */
static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    if (host_stopped()) return 1;
    size_t chunk = n > ((size_t)1 << 24) ? ((size_t)1 << 24) : n;
    ssize_t w = write(fd, p, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Where a save may write.  A save replaces only a regular file: a device
** (/dev/null), a FIFO, a socket or a folder at PATH is refused, as is a
** regular file without write permission (checked on the mode bits, so that
** root too is refused).  A symbolic link is followed: the file it names is
** replaced and the link stays (dst receives the resolved path).  The new
** file keeps the replaced file's permission bits. */
static int save_target(const char *path, char *dst, size_t dstlen, mode_t *mode,
                       char *err, size_t errlen) {
  struct stat st;
  *mode = 0;
  snprintf(dst, dstlen, "%s", path);
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? GK_OK : host_file_err(err, errlen, GK_EIO, path, "cannot save: %s", strerror(errno));
  if (S_ISLNK(st.st_mode)) {
    char *real = realpath(path, NULL);
    if (!real) {  /* a dangling link: refuse rather than guess where it points */
      return host_file_err(err, errlen, GK_EIO, path, "cannot save through a dangling symbolic link");
    }
    int too_long = strlen(real) >= dstlen;
    if (!too_long) snprintf(dst, dstlen, "%s", real);
    free(real);
    if (too_long) return host_file_err(err, errlen, GK_EIO, path, "path too long");
    if (stat(dst, &st) != 0) return host_file_err(err, errlen, GK_EIO, path, "cannot save: %s", strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    return host_file_err(err, errlen, GK_EIO, path, "cannot save: not a regular file");
  if (!(st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) || access(dst, W_OK) != 0)
    return host_file_err(err, errlen, GK_EIO, path, "cannot save: the file is read-only");
  *mode = st.st_mode & 07777;
  return GK_OK;
}

size_t npy_header(gk_dtype t, int ndim, const int64_t *shape, char **out) {
  /* "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" + pad + "\n" */
  char dict[64 + GK_MAX_DIMS * 24];
  *out = NULL;
  if (!dtype_size(t) || ndim < 0 || ndim > GK_MAX_DIMS) return 0;
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   rt_dtype_info[t].npy);
  for (int i = 0; i < ndim; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, i ? ", %lld" : "%lld", (long long)shape[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, ndim == 1 ? ",), }" : "), }");
  size_t pre = 10, total = (pre + (size_t)n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
  if (total - pre > 65535) /* version 1.0's 2-byte length cannot hold it */
    pre = 12, total = (pre + (size_t)n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
  char *hdr = malloc(total);
  if (!hdr) return 0;
  size_t hlen = total - pre;
  memcpy(hdr, NPY_MAGIC, NPY_MAGIC_LEN);
  hdr[6] = pre == 10 ? 1 : 2;
  hdr[7] = 0;
  for (size_t k = 0; k < pre - 8; k++) hdr[8 + k] = (char)(hlen >> (8 * k));
  memcpy(hdr + pre, dict, (size_t)n);
  memset(hdr + pre + n, ' ', total - pre - (size_t)n - 1);
  hdr[total - 1] = '\n';
  *out = hdr;
  return total;
}

int host_write_file(const char *path, const void *const *bufs, const size_t *lens, int n,
                    char *err, size_t errlen) {
  static atomic_uint tmp_counter;
  int fd = -1, rc = GK_EIO;
  char tmp[NPY_PATH_MAX + 48];
  tmp[0] = 0;
  if (strlen(path) > NPY_PATH_MAX) return host_file_err(err, errlen, GK_EIO, path, "path too long");
  char dst[NPY_PATH_MAX + 1];
  mode_t keep_mode;
  if ((rc = save_target(path, dst, sizeof dst, &keep_mode, err, errlen)) != GK_OK) return rc;
  rc = GK_EIO;
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", dst, (long)getpid(),
           atomic_fetch_add(&tmp_counter, 1));
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    host_file_err(err, errlen, GK_EIO, path, "cannot create: %s", strerror(errno));
    tmp[0] = 0;
    goto fail;
  }
  for (int i = 0; i < n; i++) {
    int wr = lens[i] ? write_all(fd, bufs[i], lens[i]) : 0;
    if (wr > 0) { rc = GK_EINTERRUPT; snprintf(err, errlen, "interrupted"); goto fail; }   /* the old file stays */
    if (wr) {
      host_file_err(err, errlen, GK_EIO, path, "write failed: %s", strerror(errno));
      goto fail;
    }
  }
  if (keep_mode) fchmod(fd, keep_mode);
  int cfd = fd;
  fd = -1;
  if (close(cfd) != 0) {
    host_file_err(err, errlen, GK_EIO, path, "write failed: %s", strerror(errno));
    goto fail;
  }
  if (rename(tmp, dst) != 0) {
    host_file_err(err, errlen, GK_EIO, path, "cannot replace: %s", strerror(errno));
    goto fail;
  }
  tmp[0] = 0;
  rc = GK_OK;
fail:
  if (fd >= 0) close(fd);
  if (tmp[0]) unlink(tmp);
  return rc;
}

int npy_save(const char *path, gk_dtype t, int ndim, const int64_t *shape, const void *data,
             char *err, size_t errlen) {
  size_t es = dtype_size(t);
  if (!es || ndim < 0 || ndim > GK_MAX_DIMS || (ndim > 0 && !shape))
    return host_file_err(err, errlen, GK_EMISUSE, path, "bad dtype or rank for save");
  int64_t count = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || (shape[i] != 0 && count > INT64_MAX / (int64_t)es / shape[i]))
      return host_file_err(err, errlen, GK_EMISUSE, path, "bad shape for save");
    count *= shape[i];
  }
  char *hdr;
  size_t total = npy_header(t, ndim, shape, &hdr);
  if (!total) return host_file_err(err, errlen, GK_ENOMEM, path, "out of memory");
  const void *bufs[2] = { hdr, data };
  size_t lens[2] = { total, (size_t)count * es };
  int rc = host_write_file(path, bufs, lens, 2, err, errlen);
  free(hdr);
  return rc;
}
