/*
** runtime/host_npz.c -- numpy's .npz files: a zip archive of .npy members.
**
** Reading: the End of Central Directory record is found from the end of the
** file (after at most a 64 KiB comment), then the ZIP64 one when a field is
** saturated (numpy writes its members with force_zip64, so the sizes of a
** local header are 0xFFFFFFFF and the real ones are in its ZIP64 extra; the
** central directory's entries are read instead, with their own ZIP64 extra
** when present).  A member is read whole into memory, stored (method 0,
** numpy.savez) or deflated (method 8, numpy.savez_compressed), its CRC-32
** checked, and handed to npy_load_mem.  Every size and offset is checked
** against the file size before it is used.
**
** Inflate is written here (a compact RFC 1951 decoder after Mark Adler's
** puff.c: canonical Huffman tables decoded a bit at a time with counts per
** length) rather than taken from zlib: it is ~150 lines, reading is all gk
** needs (saves are stored, as numpy.savez's), and the library then loads no
** other library for it (NOTES.md, session 4, says why not dlopen).
**
** Writing (npz_save) builds stored members with CRC-32 and a central
** directory (no ZIP64: a member of 4 GiB or more is refused), and writes the
** archive through host_write_file (temp file, rename).
*/
#include "runtime/host.h"
#include "runtime/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPZ_MAX_MEMBERS 4096      /* members listed in a message or read from a directory */
#define NPZ_NAME_MAX 256          /* longest member name kept */


/* ---------------------------------------------------------------- crc32 */

uint32_t npz_crc32(uint32_t crc, const void *buf, size_t n) {
  static uint32_t table[256];
  static int ready;   /* benign race: every thread computes the same table */
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = 1;
  }
  const unsigned char *p = buf;
  crc = ~crc;
  while (n--) crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* --------------------------------------------------------------- inflate */

typedef struct inf {
  const unsigned char *in;
  size_t inlen, inpos;
  unsigned char *out;
  size_t outlen, outpos;
  uint32_t bitbuf;
  int bitcnt;
  int bad;
} inf;

static int bits(inf *s, int need) {
  uint32_t v = s->bitbuf;
  while (s->bitcnt < need) {
    if (s->inpos >= s->inlen) { s->bad = 1; return 0; }
    v |= (uint32_t)s->in[s->inpos++] << s->bitcnt;
    s->bitcnt += 8;
  }
  s->bitbuf = v >> need;
  s->bitcnt -= need;
  return (int)(v & ((1u << need) - 1));
}

typedef struct huff {
  short count[16];    /* codes of each length */
  short symbol[320];  /* symbols ordered by code */
} huff;

static int decode(inf *s, const huff *h) {
  int code = 0, first = 0, index = 0;
  for (int len = 1; len < 16; len++) {
    code |= bits(s, 1);
    if (s->bad) return -1;
    int count = h->count[len];
    if (code - count < first) return h->symbol[index + (code - first)];
    index += count;
    first += count;
    first <<= 1;
    code <<= 1;
  }
  return -1;
}

/* Builds h from n code lengths; 0 when complete or a permitted incomplete
** code, -1 when over-subscribed. */
static int construct(huff *h, const short *length, int n) {
  short offs[16];
  for (int len = 0; len < 16; len++) h->count[len] = 0;
  for (int sym = 0; sym < n; sym++) h->count[length[sym]]++;
  if (h->count[0] == n) return 0;
  int left = 1;
  for (int len = 1; len < 16; len++) {
    left <<= 1;
    left -= h->count[len];
    if (left < 0) return -1;
  }
  offs[1] = 0;
  for (int len = 1; len < 15; len++) offs[len + 1] = (short)(offs[len] + h->count[len]);
  for (int sym = 0; sym < n; sym++)
    if (length[sym] != 0) h->symbol[offs[length[sym]]++] = (short)sym;
  return left;
}

static int codes(inf *s, const huff *lencode, const huff *distcode) {
  static const short lbase[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                   35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
  static const short lext[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                  3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
  static const short dbase[30] = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                   257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
                                   8193, 12289, 16385, 24577 };
  static const short dext[30] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                  7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
  for (;;) {
    int sym = decode(s, lencode);
    if (sym < 0) return -1;
    if (sym < 256) {
      if (s->outpos >= s->outlen) return -1;
      s->out[s->outpos++] = (unsigned char)sym;
    } else if (sym == 256) {
      return 0;
    } else {
      sym -= 257;
      if (sym >= 29) return -1;
      size_t len = (size_t)lbase[sym] + (size_t)bits(s, lext[sym]);
      int ds = decode(s, distcode);
      if (ds < 0 || ds >= 30) return -1;
      size_t dist = (size_t)dbase[ds] + (size_t)bits(s, dext[ds]);
      if (s->bad || dist > s->outpos || len > s->outlen - s->outpos) return -1;
      for (size_t i = 0; i < len; i++, s->outpos++) s->out[s->outpos] = s->out[s->outpos - dist];
    }
  }
}

static int fixed(inf *s) {
  static huff lencode, distcode;
  static int ready;
  if (!ready) {
    short len[288];
    int sym = 0;
    for (; sym < 144; sym++) len[sym] = 8;
    for (; sym < 256; sym++) len[sym] = 9;
    for (; sym < 280; sym++) len[sym] = 7;
    for (; sym < 288; sym++) len[sym] = 8;
    construct(&lencode, len, 288);
    for (sym = 0; sym < 30; sym++) len[sym] = 5;
    construct(&distcode, len, 30);
    ready = 1;
  }
  return codes(s, &lencode, &distcode);
}

static int dynamic(inf *s) {
  static const short order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
  short lengths[320];
  huff lencode, distcode;
  int nlen = bits(s, 5) + 257, ndist = bits(s, 5) + 1, ncode = bits(s, 4) + 4;
  if (s->bad || nlen > 286 || ndist > 30) return -1;
  int index;
  for (index = 0; index < ncode; index++) lengths[order[index]] = (short)bits(s, 3);
  for (; index < 19; index++) lengths[order[index]] = 0;
  if (s->bad || construct(&lencode, lengths, 19) != 0) return -1;
  index = 0;
  while (index < nlen + ndist) {
    int sym = decode(s, &lencode);
    if (sym < 0) return -1;
    if (sym < 16) {
      lengths[index++] = (short)sym;
    } else {
      int len = 0, rep;
      if (sym == 16) {
        if (index == 0) return -1;
        len = lengths[index - 1];
        rep = 3 + bits(s, 2);
      } else if (sym == 17) {
        rep = 3 + bits(s, 3);
      } else {
        rep = 11 + bits(s, 7);
      }
      if (s->bad || index + rep > nlen + ndist) return -1;
      while (rep--) lengths[index++] = (short)len;
    }
  }
  if (lengths[256] == 0) return -1;
  int err = construct(&lencode, lengths, nlen);
  if (err < 0 || (err > 0 && nlen - lencode.count[0] != 1)) return -1;
  err = construct(&distcode, lengths + nlen, ndist);
  if (err < 0 || (err > 0 && ndist - distcode.count[0] != 1)) return -1;
  return codes(s, &lencode, &distcode);
}

static int stored(inf *s) {
  s->bitbuf = 0;
  s->bitcnt = 0;
  if (s->inpos + 4 > s->inlen) return -1;
  unsigned len = s->in[s->inpos] | (unsigned)s->in[s->inpos + 1] << 8;
  unsigned nlen = s->in[s->inpos + 2] | (unsigned)s->in[s->inpos + 3] << 8;
  s->inpos += 4;
  if (len != (~nlen & 0xffff) || s->inpos + len > s->inlen || len > s->outlen - s->outpos) return -1;
  memcpy(s->out + s->outpos, s->in + s->inpos, len);
  s->inpos += len;
  s->outpos += len;
  return 0;
}

int npz_inflate(unsigned char *dst, size_t dlen, const unsigned char *src, size_t slen) {
  inf s;
  memset(&s, 0, sizeof s);
  s.in = src;
  s.inlen = slen;
  s.out = dst;
  s.outlen = dlen;
  int last;
  do {
    last = bits(&s, 1);
    int type = bits(&s, 2);
    if (s.bad) return -1;
    int rc = type == 0 ? stored(&s) : type == 1 ? fixed(&s) : type == 2 ? dynamic(&s) : -1;
    if (rc != 0 || s.bad) return -1;
  } while (!last);
  return s.outpos == dlen ? 0 : -1;
}

/* ------------------------------------------------------------------ read */

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Reads n bytes at off of f into buf; 0 or -1. */
static int pread_all(int fd, void *buf, size_t n, uint64_t off) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = pread(fd, p, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return 0;
}

/* One central-directory entry. */
typedef struct member {
  char name[NPZ_NAME_MAX];
  int method;
  uint32_t crc;
  uint64_t csize, usize, local;
} member;

/* Reads the central directory into *ms (malloc'd), *n entries. */
static int read_directory(int fd, uint64_t fsize, const char *path, member **ms, int *n, char *err, size_t errlen) {
  unsigned char tail[65536 + 22];
  size_t tl = fsize < sizeof tail ? (size_t)fsize : sizeof tail;
  *ms = NULL;
  *n = 0;
  if (tl < 22 || pread_all(fd, tail, tl, fsize - tl) != 0) return host_file_err(err, errlen, GK_EIO, path, "not a .npz file (too short for a zip archive)");
  size_t e = tl - 22 + 1;
  while (e-- > 0)
    if (rd32(tail + e) == 0x06054b50u && e + 22 + rd16(tail + e + 20) <= tl) break;
  if (e == (size_t)-1) return host_file_err(err, errlen, GK_EIO, path, "not a .npz file (no zip directory)");
  uint64_t count = rd16(tail + e + 10), dsize = rd32(tail + e + 12), doff = rd32(tail + e + 16);
  if ((count == 0xffff || dsize == 0xffffffffu || doff == 0xffffffffu) && e >= 20 && rd32(tail + e - 20) == 0x07064b50u) {
    unsigned char z[56];
    uint64_t zoff = rd64(tail + e - 20 + 8);
    if (zoff + 56 > fsize || pread_all(fd, z, 56, zoff) != 0 || rd32(z) != 0x06064b50u)
      return host_file_err(err, errlen, GK_EIO, path, "corrupt zip64 directory record");
    count = rd64(z + 32);
    dsize = rd64(z + 40);
    doff = rd64(z + 48);
  }
  if (doff > fsize || dsize > fsize - doff || count > NPZ_MAX_MEMBERS || count * 46 > dsize + 0)
    return count > NPZ_MAX_MEMBERS ? host_file_err(err, errlen, GK_EIO, path, "more than %d members", NPZ_MAX_MEMBERS)
           : host_file_err(err, errlen, GK_EIO, path, "corrupt zip directory");
  unsigned char *d = malloc(dsize ? (size_t)dsize : 1);
  member *m = calloc(count ? (size_t)count : 1, sizeof *m);
  if (!d || !m) { free(d); free(m); return host_file_err(err, errlen, GK_ENOMEM, path, "out of memory"); }
  if (pread_all(fd, d, (size_t)dsize, doff) != 0) { free(d); free(m); return host_file_err(err, errlen, GK_EIO, path, "read error"); }
  size_t p = 0;
  for (uint64_t i = 0; i < count; i++) {
    if (p + 46 > dsize || rd32(d + p) != 0x02014b50u) { free(d); free(m); return host_file_err(err, errlen, GK_EIO, path, "corrupt zip directory entry %llu", (unsigned long long)i + 1); }
    size_t nl = rd16(d + p + 28), xl = rd16(d + p + 30), cl = rd16(d + p + 32);
    if (p + 46 + nl + xl + cl > dsize) { free(d); free(m); return host_file_err(err, errlen, GK_EIO, path, "corrupt zip directory entry %llu", (unsigned long long)i + 1); }
    member *x = &m[i];
    x->method = (int)rd16(d + p + 10);
    x->crc = rd32(d + p + 16);
    x->csize = rd32(d + p + 20);
    x->usize = rd32(d + p + 24);
    x->local = rd32(d + p + 42);
    snprintf(x->name, sizeof x->name, "%.*s", (int)(nl < NPZ_NAME_MAX - 1 ? nl : NPZ_NAME_MAX - 1), (const char *)d + p + 46);
    /* the ZIP64 extra (id 1) holds, in order, each field that is saturated */
    for (size_t q = p + 46 + nl; q + 4 <= p + 46 + nl + xl;) {
      size_t id = rd16(d + q), sz = rd16(d + q + 2), r = q + 4;
      if (q + 4 + sz > p + 46 + nl + xl) break;
      if (id == 1) {
        if (x->usize == 0xffffffffu && r + 8 <= q + 4 + sz) { x->usize = rd64(d + r); r += 8; }
        if (x->csize == 0xffffffffu && r + 8 <= q + 4 + sz) { x->csize = rd64(d + r); r += 8; }
        if (x->local == 0xffffffffu && r + 8 <= q + 4 + sz) { x->local = rd64(d + r); r += 8; }
      }
      q += 4 + sz;
    }
    p += 46 + nl + xl + cl;
  }
  free(d);
  *ms = m;
  *n = (int)count;
  return GK_OK;
}

/* "a, b, c" (member names less ".npy") into out. */
static void list_names(const member *m, int n, char *out, size_t cap) {
  size_t o = 0;
  out[0] = '\0';
  for (int i = 0; i < n && o + 8 < cap; i++) {
    size_t l = strlen(m[i].name);
    if (l > 4 && !strcmp(m[i].name + l - 4, ".npy")) l -= 4;
    o += (size_t)snprintf(out + o, cap - o, "%s'%.*s'", i ? ", " : "", (int)l, m[i].name);
  }
  if (o >= cap - 8 && cap > 4) strcpy(out + cap - 5, "...");
}

int npz_load(const char *path, const char *name, npy_alloc_fn alloc_data, void *ud, char *err, size_t errlen) {
  int fd, orc;
  struct stat st;
  if ((orc = host_open_regular(path, &fd, &st, err, errlen)) != GK_OK) return orc;
  uint64_t fsize = (uint64_t)st.st_size;
  member *m;
  int n, rc = read_directory(fd, fsize, path, &m, &n, err, errlen);
  if (rc) { close(fd); return rc; }
  int pick = -1;
  char names[512];
  list_names(m, n, names, sizeof names);
  if (!name) {
    if (n == 1) pick = 0;
    else {
      rc = n == 0 ? host_file_err(err, errlen, GK_EIO, path, "the archive holds no arrays")
                  : host_file_err(err, errlen, GK_EIO, path, "holds %d arrays (%s): name one, as load(\"%s\", \"NAME\")", n, names, path);
      goto done;
    }
  } else {
    for (int i = 0; i < n && pick < 0; i++) {
      size_t l = strlen(m[i].name);
      if (!strcmp(m[i].name, name) || (l == strlen(name) + 4 && !strncmp(m[i].name, name, l - 4) && !strcmp(m[i].name + l - 4, ".npy")))
        pick = i;
    }
    if (pick < 0) {
      rc = host_file_err(err, errlen, GK_EIO, path, "no array '%s' (it holds %s)", name, n ? names : "none");
      goto done;
    }
  }
  member *x = &m[pick];
  unsigned char lh[30];
  if (x->local > fsize || fsize - x->local < 30 || pread_all(fd, lh, 30, x->local) != 0 || rd32(lh) != 0x04034b50u) {
    rc = host_file_err(err, errlen, GK_EIO, path, "corrupt local header of '%s'", x->name);
    goto done;
  }
  uint64_t data = x->local + 30 + rd16(lh + 26) + rd16(lh + 28);
  if (x->method != 0 && x->method != 8) {
    rc = host_file_err(err, errlen, GK_EIO, path, "'%s' uses zip compression method %d (gk reads stored and deflated members)", x->name, x->method);
    goto done;
  }
  if (data > fsize || x->csize > fsize - data || (x->method == 0 && x->csize != x->usize) ||
      x->usize > (uint64_t)(SIZE_MAX / 2)) {
    rc = host_file_err(err, errlen, GK_EIO, path, "corrupt sizes of '%s'", x->name);
    goto done;
  }
  unsigned char *c = malloc(x->csize ? (size_t)x->csize : 1);
  unsigned char *u = x->method == 0 ? c : malloc(x->usize ? (size_t)x->usize : 1);
  if (!c || !u) {
    free(c);
    rc = host_file_err(err, errlen, GK_ENOMEM, path, "out of memory for '%s'", x->name);
    goto done;
  }
  if (pread_all(fd, c, (size_t)x->csize, data) != 0) rc = host_file_err(err, errlen, GK_EIO, path, "read error in '%s'", x->name);
  else if (x->method == 8 && npz_inflate(u, (size_t)x->usize, c, (size_t)x->csize) != 0)
    rc = host_file_err(err, errlen, GK_EIO, path, "'%s': corrupt deflate data", x->name);
  else if (npz_crc32(0, u, (size_t)x->usize) != x->crc)
    rc = host_file_err(err, errlen, GK_EIO, path, "'%s': CRC-32 mismatch (a corrupt archive)", x->name);
  else {
    char mname[4096 + NPZ_NAME_MAX + 8];
    snprintf(mname, sizeof mname, "%s[%s]", path, x->name);
    rc = npy_load_mem(mname, u, (size_t)x->usize, alloc_data, ud, err, errlen);
  }
  if (u != c) free(u);
  free(c);
done:
  free(m);
  close(fd);
  return rc;
}

/* ----------------------------------------------------------------- write */

static void put16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }

int npz_save(const char *path, int n, const char *const *names, const gk_dtype *t, const int *ndim,
             const int64_t *const *shape, const void *const *data, char *err, size_t errlen) {
  int np = 3 * n + 2, rc = GK_OK;
  const void **bufs = calloc((size_t)np, sizeof *bufs);
  size_t *lens = calloc((size_t)np, sizeof *lens);
  unsigned char *local = calloc((size_t)n + 1, 30 + NPZ_NAME_MAX);
  unsigned char *central = calloc((size_t)n + 1, 46 + NPZ_NAME_MAX);
  char **hdrs = calloc((size_t)n + 1, sizeof *hdrs);
  unsigned char end[22];
  if (!bufs || !lens || !local || !central || !hdrs) { rc = host_file_err(err, errlen, GK_ENOMEM, path, "out of memory"); goto out; }
  uint64_t off = 0;
  size_t clen = 0;
  for (int i = 0; i < n; i++) {
    char fname[NPZ_NAME_MAX];
    int nl = snprintf(fname, sizeof fname, "%s.npy", names[i]);
    if (nl <= 0 || nl >= NPZ_NAME_MAX - 1) { rc = host_file_err(err, errlen, GK_EMISUSE, path, "array name too long"); goto out; }
    int64_t count = 1;
    for (int d = 0; d < ndim[i]; d++) count *= shape[i][d];
    size_t hl = npy_header(t[i], ndim[i], shape[i], &hdrs[i]);
    if (!hl) { rc = host_file_err(err, errlen, GK_ENOMEM, path, "out of memory"); goto out; }
    uint64_t dl = (uint64_t)count * rt_dtype_size(t[i]), total = hl + dl;
    if (total >= 0xffffffffu || off + total + 30 + (uint64_t)nl >= 0xffffffffu) {
      rc = host_file_err(err, errlen, GK_ELIMIT, path, "'%s' would pass 4 GiB, which gk's .npz writer does not do (save it as .npy)", names[i]);
      goto out;
    }
    uint32_t crc = npz_crc32(npz_crc32(0, hdrs[i], hl), data[i], (size_t)dl);
    unsigned char *L = local + (size_t)i * (30 + NPZ_NAME_MAX), *C = central + clen;
    put32(L, 0x04034b50u); put16(L + 4, 20); put16(L + 6, 0); put16(L + 8, 0);
    put16(L + 10, 0); put16(L + 12, 0x21);   /* 1980-01-01 00:00: reproducible bytes */
    put32(L + 14, crc); put32(L + 18, (uint32_t)total); put32(L + 22, (uint32_t)total);
    put16(L + 26, (uint32_t)nl); put16(L + 28, 0);
    memcpy(L + 30, fname, (size_t)nl);
    put32(C, 0x02014b50u); put16(C + 4, 20); put16(C + 6, 20); put16(C + 8, 0); put16(C + 10, 0);
    put16(C + 12, 0); put16(C + 14, 0x21); put32(C + 16, crc); put32(C + 20, (uint32_t)total);
    put32(C + 24, (uint32_t)total); put16(C + 28, (uint32_t)nl); put16(C + 30, 0); put16(C + 32, 0);
    put16(C + 34, 0); put16(C + 36, 0); put32(C + 38, 0644u << 16); put32(C + 42, (uint32_t)off);
    memcpy(C + 46, fname, (size_t)nl);
    clen += 46 + (size_t)nl;
    bufs[3 * i] = L; lens[3 * i] = 30 + (size_t)nl;
    bufs[3 * i + 1] = hdrs[i]; lens[3 * i + 1] = hl;
    bufs[3 * i + 2] = data[i]; lens[3 * i + 2] = (size_t)dl;
    off += 30 + (uint64_t)nl + total;
  }
  if (off + clen >= 0xffffffffu) { rc = host_file_err(err, errlen, GK_ELIMIT, path, "the archive would pass 4 GiB (save arrays as .npy)"); goto out; }
  put32(end, 0x06054b50u); put16(end + 4, 0); put16(end + 6, 0); put16(end + 8, (uint32_t)n);
  put16(end + 10, (uint32_t)n); put32(end + 12, (uint32_t)clen); put32(end + 16, (uint32_t)off); put16(end + 20, 0);
  bufs[3 * n] = central; lens[3 * n] = clen;
  bufs[3 * n + 1] = end; lens[3 * n + 1] = 22;
  rc = host_write_file(path, bufs, lens, np, err, errlen);
out:
  for (int i = 0; hdrs && i < n; i++) free(hdrs[i]);
  free(hdrs);
  free(bufs);
  free(lens);
  free(local);
  free(central);
  return rc;
}
