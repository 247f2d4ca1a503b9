/*
** tests/fuzz/replay.c -- runs a fuzz target's LLVMFuzzerTestOneInput over
** files and directories (default: the ones compiled in as FZ_DIRS, the
** target's corpus and crashes) without libFuzzer, so `make test` replays
** them with gcc.  A crash or abort() fails the run; otherwise it prints
** "N passed, 0 failed".
*/
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n;

static void one(const char *path) {
  struct stat st;
  if (stat(path, &st)) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", path, e->d_name);
      one(p);
    }
    closedir(d);
    return;
  }
  FILE *f = fopen(path, "rb");
  if (!f) return;
  uint8_t *buf = malloc((size_t)st.st_size + 1);
  size_t len = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
  fclose(f);
  if (getenv("FZ_VERBOSE")) fprintf(stderr, "%s\n", path);
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  n++;
}

int main(int argc, char **argv) {
  if (argc > 1) for (int i = 1; i < argc; i++) one(argv[i]);
  else {
    static const char *dirs[] = { FZ_DIRS };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) one(dirs[i]);
  }
  printf("%d passed, 0 failed\n", n);
  return 0;
}
