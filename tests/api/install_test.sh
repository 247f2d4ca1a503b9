#!/bin/sh
# tests/api/install_test.sh -- the packaging, as a user meets it.
#
# Runs `make install PREFIX=$tmp` (and once with DESTDIR), checks the
# installed tree (bin/gk, include/gk.h, lib/libgk.a, lib/libgk.so with its
# SONAME links, lib/pkgconfig/gk.pc, share/man/man1/gk.1), that libgk.so
# exports only gk_* symbols, then builds a small program written against
# DESIGN.md's core API with $(pkg-config --cflags --libs gk) -- linked
# against the shared library (rpath), and once statically -- and runs it.
#
# Prints "N passed, M failed" last; exits 1 on any failure.  B is the build
# directory (default build); MAKE the make to use.

B=${B:-build}
MAKE=${MAKE:-make}
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAILED: $*"; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }

if ! command -v pkg-config >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config) >/dev/null 2>&1
fi
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "install_test: pkg-config is missing and could not be installed"
  echo "0 passed, 1 failed"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix

if ! $MAKE --no-print-directory -s install B="$B" PREFIX="$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  bad "make install PREFIX=$prefix"
  echo "$pass passed, $fail failed"
  exit 1
fi
ok

check '[ -x "$prefix/bin/gk" ]' "bin/gk installed"
check '[ -f "$prefix/include/gk.h" ]' "include/gk.h installed"
check '[ -f "$prefix/lib/libgk.a" ]' "lib/libgk.a installed"
check '[ -f "$prefix/lib/libgk.so" ]' "lib/libgk.so installed"
check '[ -L "$prefix/lib/libgk.so.0" ]' "lib/libgk.so.0 link installed"
check '[ -f "$prefix/lib/pkgconfig/gk.pc" ]' "lib/pkgconfig/gk.pc installed"
check '[ -f "$prefix/share/man/man1/gk.1" ]' "share/man/man1/gk.1 installed"
check 'cmp -s "$prefix/include/gk.h" gk.h' "installed gk.h is the tree's"
check '"$prefix/bin/gk" -e "print(sum(iota(10)))" 2>&1 | grep -qx 45' "installed gk runs"
# the shipped kernels (make kernels), where NVRTC is: installed, and found by the installed gk
if ! GK_NVRTC_CHECK=1 "$prefix/bin/gk" -e 'sum(iota(3))' 2>&1 | grep -q "gk-nvrtc: skipped"; then
  check '[ -n "$(ls "$prefix/lib/gk/kernels" 2>/dev/null | head -1)" ]' "lib/gk/kernels installed"
  "$prefix/bin/gk" -e "save(\"$tmp/x.npy\", rand(1000))"
  check 'GK_NVRTC_CHECK=shipped "$prefix/bin/gk" -e "x = load(\"$tmp/x.npy\")" -e "print(sum(x))" 2>&1 | grep -q "gk-nvrtc: shipped gk_"' "the installed gk finds the installed kernels"
fi

if command -v readelf >/dev/null 2>&1; then
  check 'readelf -d "$prefix/lib/libgk.so" | grep -q "SONAME.*libgk\.so\.0"' "SONAME is libgk.so.0"
  # every exported (defined, global) function or object is gk_*
  leaked=$(readelf -W --dyn-syms "$prefix/lib/libgk.so" | awk '$5 == "GLOBAL" && $7 != "UND" && ($4 == "FUNC" || $4 == "OBJECT") {print $8}' | sed 's/@.*//' | grep -v '^gk_' | head -5)
  check '[ -z "$leaked" ]' "libgk.so exports only gk_* (leaked: $leaked)"
  for f in gk_open gk_close gk_eval gk_errmsg gk_set gk_shape gk_get gk_sync gk_prepare gk_step gk_finalize gk_to_dlpack gk_from_dlpack gk_borrow gk_open_ex gk_version; do
    check 'readelf -W --dyn-syms "$prefix/lib/libgk.so" | grep -q " $f\$"' "libgk.so exports $f"
  done
fi

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
check '[ "$(pkg-config --modversion gk)" = "$(sed -n "s/^#define GK_VERSION \"\(.*\)\"/\1/p" gk.h)" ]' "pkg-config --modversion gk matches GK_VERSION"
check 'pkg-config --cflags gk | grep -q -- "-I$prefix/include"' "pkg-config --cflags gk"

# A program written against DESIGN.md's core API only.
cat > "$tmp/user.c" <<'EOF'
#include <gk.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  gk_ctx *g = gk_open(NULL);
  if (!g) { printf("open failed\n"); return 1; }
  int64_t shape[2] = {2, 3};
  float m[6] = {1, 2, 3, 4, 5, 6}, s[2] = {0, 0};
  if (gk_set(g, "m", GK_F32, 2, shape, m) != 0) { printf("set: %s\n", gk_errmsg(g)); return 1; }
  if (gk_eval(g, "s = sum(rows(m)); e = softmax(rows(m))") != 0) { printf("eval: %s\n", gk_errmsg(g)); return 1; }
  gk_dtype t; int nd; int64_t sh[8];
  if (gk_shape(g, "s", &t, &nd, sh) != 0 || t != GK_F32 || nd != 1 || sh[0] != 2) { printf("shape\n"); return 1; }
  if (gk_get(g, "s", s, sizeof s) != 0 || s[0] != 6 || s[1] != 15) { printf("get\n"); return 1; }
  if (gk_sync(g) != 0) { printf("sync\n"); return 1; }
  if (gk_eval(g, "q = nosuch + 1") == 0 || !strstr(gk_errmsg(g), "unknown name 'nosuch'")) { printf("error\n"); return 1; }
  if (gk_get(g, "s", s, sizeof s) != 0 || s[0] != 6) { printf("state\n"); return 1; }
  gk_close(g);
  printf("user program ok (gk %s)\n", gk_version());
  return 0;
}
EOF

CC=${CC:-cc}
# shared, found through rpath
if $CC -std=c11 -Wall -Wextra -o "$tmp/user_so" "$tmp/user.c" $(pkg-config --cflags --libs gk) -Wl,-rpath,"$prefix/lib" 2>"$tmp/cc.log"; then
  ok
  check '"$tmp/user_so" | grep -q "user program ok"' "shared-linked program runs"
  if command -v ldd >/dev/null 2>&1; then
    check 'ldd "$tmp/user_so" | grep -q "libgk.so.0 => $prefix/lib/libgk.so.0"' "program uses the installed libgk.so.0"
  fi
  # and through LD_LIBRARY_PATH without rpath
  if $CC -std=c11 -o "$tmp/user_ld" "$tmp/user.c" $(pkg-config --cflags --libs gk) 2>>"$tmp/cc.log"; then
    check 'LD_LIBRARY_PATH="$prefix/lib" "$tmp/user_ld" | grep -q "user program ok"' "program runs with LD_LIBRARY_PATH"
  else bad "build without rpath"; fi
else
  cat "$tmp/cc.log"; bad "build with pkg-config --cflags --libs gk"
fi
# static
if $CC -std=c11 -o "$tmp/user_a" "$tmp/user.c" $(pkg-config --cflags gk) "$prefix/lib/libgk.a" $(pkg-config --libs-only-other --static gk) $(pkg-config --static --libs gk | tr ' ' '\n' | grep -v -- '-lgk' | tr '\n' ' ') 2>"$tmp/cc.log"; then
  check '"$tmp/user_a" | grep -q "user program ok"' "statically linked program runs"
else
  cat "$tmp/cc.log"; bad "static build with pkg-config --static"
fi
# the embedding example builds against the installed tree too
if [ -f examples/embed.c ]; then
  if $CC -std=c11 -o "$tmp/embed" examples/embed.c $(pkg-config --cflags --libs gk) -lm -Wl,-rpath,"$prefix/lib" 2>"$tmp/cc.log"; then
    check '"$tmp/embed" 64 32 8 3 >/dev/null 2>&1' "examples/embed.c built against the install runs"
  else cat "$tmp/cc.log"; bad "examples/embed.c against the installed tree"; fi
fi

# The README's embedding steps, verbatim, as a user without root would
# follow them: its C program saved as embed.c, its sh block run line by line
# with HOME in a temporary folder (make runs in this tree), the output
# compared with the README's text block on the cpu backend.
check '[ -f "$prefix/share/doc/gk/language.md" ]' "share/doc/gk/language.md installed"
check '"$prefix/bin/gk" --help | grep -qF "The language: $(cd "$prefix" && pwd -P)/share/doc/gk/language.md"' "installed gk --help names the installed reference"
home=$tmp/home
mkdir -p "$home/work"
if python3 - "$home/work" <<'PY'
import re, sys
t = open("README.md").read().split("## Embedding in C", 1)[1].split("\n## ", 1)[0]
c = re.search(r"```c\n(.*?)```", t, re.S).group(1)
sh = [b for b in re.findall(r"```sh\n(.*?)```", t, re.S) if "PREFIX=$HOME/.local" in b][0]
out = re.findall(r"```text\n(.*?)```", t, re.S)[0]
d = sys.argv[1]
open(d + "/embed.c", "w").write(c)
open(d + "/steps.sh", "w").write(sh)
open(d + "/expected", "w").write(out)
PY
then
  root=$(pwd)
  # `make` in the steps is this tree's make (the user runs it in the gk folder)
  if (cd "$home/work" && HOME=$home GK_BACKEND=cpu PKG_CONFIG_PATH= \
        MAKE_ROOT=$root MAKE_B=$B sh -e -c 'make() { command '"$MAKE"' --no-print-directory -s -C "$MAKE_ROOT" B="$MAKE_B" "$@"; }; . ./steps.sh' \
        >"$home/out" 2>&1); then
    grep -v '^  [A-Z][A-Z]* ' "$home/out" > "$home/out2"   # make's quiet lines (CC, LD, ...)
    diff "$home/out2" "$home/work/expected" >"$home/diff" 2>&1
    check '[ ! -s "$home/diff" ]' "README embedding steps give the README's output: $(cat "$home/diff")"
  else
    cat "$home/out"; bad "README embedding steps, run verbatim"
  fi
else
  bad "README embedding section (C, sh and text blocks) not found"
fi

# DESTDIR staging: files land under DESTDIR, gk.pc names PREFIX
dest=$tmp/stage
if $MAKE --no-print-directory -s install B="$B" PREFIX=/opt/gk DESTDIR="$dest" >"$tmp/install2.log" 2>&1; then
  check '[ -f "$dest/opt/gk/include/gk.h" ] && [ -f "$dest/opt/gk/lib/libgk.so" ]' "DESTDIR install"
  check 'grep -q "^prefix=/opt/gk" "$dest/opt/gk/lib/pkgconfig/gk.pc"' "gk.pc names PREFIX, not DESTDIR"
else
  cat "$tmp/install2.log"; bad "make install DESTDIR=..."
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
