/*
** runtime/cu_cache.c -- the kernel key hash and the disk level of the
** kernel cache.
**
** cu_hash64 is an xxh64-style hash: four 64-bit lanes over 32-byte stripes,
** then an avalanche.  It runs at several GB/s, which keeps a memory-cache hit
** (hash of the whole kernel source) well under a microsecond for the sources
** gk generates.
**
** The disk level stores one file per key (format in cu.h).  Entries are
** written to a temporary file in the same directory and renamed, so a reader
** never sees a half-written entry under the final name; a short, corrupt or
** foreign entry is a miss, and the next compile overwrites it.  Nothing here
** reports errors: a cache that cannot be read or written is just a cache
** that misses.
**
** The directory is bounded: a hit touches its entry (mtime = now), and a
** write that takes the entries' total size over the cap (GK_CACHE_MAX MiB,
** default 512; 0 = no cap) removes the least recently used entries until the
** total is at most 90% of the cap.  Several processes may share the
** directory: the worst a race does is remove an entry another process
** wanted (a miss) or remove less than it could.
*/
#define CU_INTERNAL
#include "cu.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ----------------------------------------------------------------- hash */

#define H1 0x9E3779B185EBCA87ULL
#define H2 0xC2B2AE3D27D4EB4FULL
#define H3 0x165667B19E3779F9ULL
#define H4 0x85EBCA77C2B2AE63ULL
#define H5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t round1(uint64_t acc, uint64_t in) {
  acc += in * H2;
  acc = rotl(acc, 31);
  return acc * H1;
}
static inline uint64_t merge(uint64_t acc, uint64_t v) {
  acc ^= round1(0, v);
  return acc * H1 + H4;
}

uint64_t cu_hash64(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = (const unsigned char *)data, *end = p + n;
  uint64_t h;
  if (n >= 32) {
    const unsigned char *limit = end - 32;
    uint64_t v1 = seed + H1 + H2, v2 = seed + H2, v3 = seed, v4 = seed - H1;
    do {
      v1 = round1(v1, rd64(p));
      v2 = round1(v2, rd64(p + 8));
      v3 = round1(v3, rd64(p + 16));
      v4 = round1(v4, rd64(p + 24));
      p += 32;
    } while (p <= limit);
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    h = merge(h, v4);
  } else {
    h = seed + H5;
  }
  h += (uint64_t)n;
  while (p + 8 <= end) {
    h ^= round1(0, rd64(p));
    h = rotl(h, 27) * H1 + H4;
    p += 8;
  }
  if (p + 4 <= end) {
    h ^= (uint64_t)rd32(p) * H1;
    h = rotl(h, 23) * H2 + H3;
    p += 4;
  }
  while (p < end) {
    h ^= (*p++) * H5;
    h = rotl(h, 11) * H1;
  }
  h ^= h >> 33;
  h *= H2;
  h ^= h >> 29;
  h *= H3;
  h ^= h >> 32;
  return h;
}

/* ------------------------------------------------------------ directory */

/* mkdir -p for the last two components at most (…/.cache/gk). */
static int make_dir(const char *path) {
  char tmp[CU_PATH_MAX];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof tmp) return -1;
  memcpy(tmp, path, n + 1);
  for (char *s = tmp + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
    *s = '/';
  }
  if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
  return 0;
}

int cu_cache_dir(char *buf, size_t len) {
  const char *off = getenv("GK_CACHE");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  struct stat st;
  int n;
  if (len) buf[0] = 0;
  if (off && !strcmp(off, "0")) return 0;
  if (xdg && xdg[0] == '/') n = snprintf(buf, len, "%s/gk", xdg);
  else if (home && home[0] == '/') n = snprintf(buf, len, "%s/.cache/gk", home);
  else n = -1;
  /* Leave room for "/<16 hex>.bin.tmp.<pid>.<n>" after the directory. */
  if (n < 0 || (size_t)n + 64 >= len) goto none;
  if (make_dir(buf) != 0) goto none;
  if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode) || access(buf, W_OK | X_OK) != 0) goto none;
  return 1;
none:
  if (len) buf[0] = 0;
  return 0;
}

int cu_ship_dir(char *buf, size_t len) {
  static const char *const rel[] = { "gk-kernels", "../lib/gk/kernels" };
  const char *env = getenv("GK_KERNELS");
  struct stat st;
  Dl_info info;
  if (len) buf[0] = 0;
  if (!len || (env && !strcmp(env, "0"))) return 0;
  if (env && *env) {
    if ((size_t)snprintf(buf, len, "%s", env) + 64 >= len) goto none;
    if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
    goto none;
  }
  /* the file that holds this function: the gk executable (static libgk) or libgk.so */
  if (!dladdr((void *)cu_ship_dir, &info) || !info.dli_fname || !strchr(info.dli_fname, '/')) goto none;
  {
    const char *slash = strrchr(info.dli_fname, '/');
    int dn = (int)(slash - info.dli_fname);
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
      int n = snprintf(buf, len, "%.*s/%s", dn, info.dli_fname, rel[i]);
      if (n < 0 || (size_t)n + 64 >= len) continue;
      if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
    }
  }
none:
  buf[0] = 0;
  return 0;
}

int cu_cache_path(char *buf, size_t len, const char *dir, uint64_t hash) {
  int n = snprintf(buf, len, "%s/%016llx.bin", dir, (unsigned long long)hash);
  return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* ------------------------------------------------------------------ key */

#define SEED2 0x6b2f9e0d4c1a3857ULL  /* seed of the second (collision guard) hash */

uint64_t cu_key_seed(int nvrtc, const char *arch_opt) {
  static const char *const opts[] = { CU_NVRTC_OPTIONS };
  char buf[256];
  uint64_t h;
  int n = snprintf(buf, sizeof buf, "gk-cu format=%d nvrtc=%d target=%s", CU_CACHE_FORMAT, nvrtc, arch_opt);
  h = cu_hash64(buf, (size_t)n, 0);
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    h = cu_hash64(opts[i], strlen(opts[i]) + 1, h);
  for (const char *e = cu_nvrtc_env_opts(); e && *e;) {   /* GK_NVRTC_OPTS, blank-separated */
    size_t k;
    while (*e == ' ') e++;
    k = strcspn(e, " ");
    if (k && !cu_nvrtc_opt_neutral(e, k)) h = cu_hash64(e, k + 1, h);   /* the blank or NUL after it, too */
    e += k;
  }
  for (int i = 0; i < gk_kernel_header_count; i++) {
    h = cu_hash64(gk_kernel_header_names[i], strlen(gk_kernel_header_names[i]) + 1, h);
    h = cu_hash64(gk_kernel_header_srcs[i], strlen(gk_kernel_header_srcs[i]) + 1, h);
  }
  return h;
}

void cu_kernel_key(cu_cache_key *k, uint64_t seed, const char *src, size_t n, const char *name, int arch,
                   int nvrtc, int kind) {
  size_t nl = strlen(name);
  k->hash = cu_hash64(name, nl, cu_hash64(src, n, seed));
  k->hash2 = cu_hash64(name, nl, cu_hash64(src, n, seed ^ SEED2));
  k->arch = (uint32_t)arch;
  k->nvrtc = (uint32_t)nvrtc;
  k->kind = (uint32_t)kind;
}

/* --------------------------------------------------------------- header */

static const char magic[8] = { 'g', 'k', 'c', 'u', 'b', 'i', 'n', 0 };

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

static void make_header(unsigned char h[CU_CACHE_HEADER], const cu_cache_key *k,
                        const void *payload, size_t n) {
  memcpy(h, magic, 8);
  put32(h + 8, CU_CACHE_FORMAT);
  put32(h + 12, k->arch);
  put32(h + 16, k->nvrtc);
  put32(h + 20, k->kind);
  put64(h + 24, k->hash);
  put64(h + 32, k->hash2);
  put64(h + 40, (uint64_t)n);
  put64(h + 48, cu_hash64(payload, n, 0));
  put64(h + 56, cu_hash64(h, 56, 0));
}

static int write_all(int fd, const void *p, size_t n) {
  const char *s = (const char *)p;
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

int cu_cache_write(const char *dir, const cu_cache_key *k, const void *payload, size_t n) {
  static const int max_tries = 8;   /* temp-name collisions tolerated */
  char path[CU_PATH_MAX], tmp[CU_PATH_MAX + 64];
  unsigned char h[CU_CACHE_HEADER];
  int fd = -1;
  if (!dir || !dir[0] || n > CU_CACHE_MAX_ENTRY) return -1;
  if (cu_cache_path(path, sizeof path, dir, k->hash)) return -1;
  for (int i = 0; i < max_tries && fd < 0; i++) {
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%d", path, (long)getpid(), i);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) return -1;
  }
  if (fd < 0) return -1;
  make_header(h, k, payload, n);
  if (write_all(fd, h, sizeof h) || write_all(fd, payload, n)) goto fail;
  if (close(fd) != 0) {
    fd = -1;
    goto fail;
  }
  fd = -1;
  if (rename(tmp, path) != 0) goto fail;
  cu_cache_trim(dir, cu_cache_cap());
  return 0;
fail:
  if (fd >= 0) close(fd);
  unlink(tmp);
  return -1;
}

int cu_cache_read(const char *dir, const cu_cache_key *k, void **payload, size_t *n) {
  char path[CU_PATH_MAX];
  unsigned char h[CU_CACHE_HEADER], want[CU_CACHE_HEADER];
  unsigned char *buf = NULL;
  struct stat st;
  uint64_t plen;
  size_t got = 0;
  int fd = -1;
  *payload = NULL;
  *n = 0;
  if (!dir || !dir[0] || cu_cache_path(path, sizeof path, dir, k->hash)) return 0;
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < CU_CACHE_HEADER ||
      (uint64_t)st.st_size > (uint64_t)CU_CACHE_MAX_ENTRY + CU_CACHE_HEADER)
    goto miss;
  buf = (unsigned char *)malloc((size_t)st.st_size);
  if (!buf) goto miss;
  while (got < (size_t)st.st_size) {
    ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) goto miss;
    got += (size_t)r;
  }
  memcpy(h, buf, CU_CACHE_HEADER);
  memcpy(&plen, h + 40, 8);
  if (plen != got - CU_CACHE_HEADER) goto miss;
  /* Rebuilding the header we expect checks magic, format, key, NVRTC, arch,
  ** kind, length, payload checksum and header checksum in one compare. */
  make_header(want, k, buf + CU_CACHE_HEADER, (size_t)plen);
  if (memcmp(h, want, CU_CACHE_HEADER) != 0) goto miss;
  close(fd);
  utimensat(AT_FDCWD, path, NULL, 0);   /* used now: last in line for eviction */
  memmove(buf, buf + CU_CACHE_HEADER, (size_t)plen);
  *payload = buf;
  *n = (size_t)plen;
  return 1;
miss:
  free(buf);
  if (fd >= 0) close(fd);
  return 0;
}

/* ------------------------------------------------------------ eviction */

uint64_t cu_cache_cap(void) {
  const char *v = getenv("GK_CACHE_MAX");
  if (!v || !*v) return (uint64_t)512 << 20;
  char *end;
  unsigned long long mb = strtoull(v, &end, 10);
  if (*end) return (uint64_t)512 << 20;   /* not a number: the default */
  return (uint64_t)mb << 20;
}

typedef struct centry { struct timespec t; uint64_t size; char name[32]; } centry;

static int older(const void *a, const void *b) {
  const centry *x = (const centry *)a, *y = (const centry *)b;
  if (x->t.tv_sec != y->t.tv_sec) return x->t.tv_sec < y->t.tv_sec ? -1 : 1;
  if (x->t.tv_nsec != y->t.tv_nsec) return x->t.tv_nsec < y->t.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* An entry's file name: 16 hex digits and ".bin". */
static int entry_name(const char *s) {
  for (int i = 0; i < 16; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return !strcmp(s + 16, ".bin");
}

int cu_cache_trim(const char *dir, uint64_t cap) {
  if (!dir || !dir[0] || cap == 0) return 0;
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  centry *e = NULL;
  size_t n = 0, ecap = 0;
  uint64_t total = 0;
  struct dirent *de;
  char path[CU_PATH_MAX + 64];
  while ((de = readdir(dp)) != NULL) {
    struct stat st;
    if (!entry_name(de->d_name)) continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (n == ecap) {
      size_t nc = ecap ? ecap * 2 : 256;
      centry *w = (centry *)realloc(e, nc * sizeof *e);
      if (!w) break;
      e = w; ecap = nc;
    }
    e[n].t = st.st_mtim;
    e[n].size = (uint64_t)st.st_size;
    memcpy(e[n].name, de->d_name, 21);   /* entry_name: 20 characters */
    total += e[n].size;
    n++;
  }
  closedir(dp);
  int removed = 0;
  if (total > cap) {
    qsort(e, n, sizeof *e, older);
    uint64_t goal = cap / 10 * 9;
    for (size_t i = 0; i < n && total > goal; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, e[i].name);
      if (unlink(path) == 0) { total -= e[i].size; removed++; }
    }
  }
  free(e);
  return removed;
}
