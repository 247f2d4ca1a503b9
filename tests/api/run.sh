#!/bin/sh
# tests/api/run.sh -- the C API suite: every api test binary
# ($B/tests/api_*), the embedding example, the install test, and the API
# tests again under valgrind (--leak-check=full; definite and indirect leaks
# and memory errors fail; the CPU thread pool's parked worker threads are
# "possibly lost" by design and ignored), with smaller sizes where valgrind
# would be slow.
#
# Prints one line per part and "N passed, M failed" last (the sum of the
# parts' own counts); exits 1 on any failure.  B is the build directory.
# Called by tests/run_all.sh.  Builds what it needs with make if missing.

B=${B:-build}
MAKE=${MAKE:-make}
export B
total_p=0; total_f=0
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT INT TERM

# run NAME CMD...: counts the last "N passed, M failed" line of CMD's output;
# a non-zero exit with no failure counted is one failure.
run() {
  name=$1; shift
  "$@" >"$log/out" 2>&1
  rc=$?
  line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log/out" | tail -n 1)
  p=$(printf '%s' "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
  f=$(printf '%s' "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')
  [ -n "$p" ] || p=0
  [ -n "$f" ] || f=0
  if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
  total_p=$((total_p + p)); total_f=$((total_f + f))
  printf '%-26s %s passed, %s failed\n' "$name" "$p" "$f"
  if [ "$f" != 0 ]; then tail -n 30 "$log/out" | sed 's/^/    /'; fi
}

# one pass/fail for a command without its own count
run1() {
  name=$1; shift
  "$@" >"$log/out" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then total_p=$((total_p + 1)); printf '%-26s ok\n' "$name"
  else total_f=$((total_f + 1)); printf '%-26s FAILED (exit %d)\n' "$name" $rc; tail -n 30 "$log/out" | sed 's/^/    /'; fi
}

# build what is missing
bins=""
for src in tests/api/*.c; do
  t=$(basename "$src" .c)
  bins="$bins $B/tests/api_$t"
done
$MAKE --no-print-directory -s $bins >"$log/make" 2>&1 || { cat "$log/make"; echo "0 passed, 1 failed"; exit 1; }
CC=${CC:-cc}
$CC -std=c11 -O2 -Wall -Wextra -I. -o "$B/embed" examples/embed.c "$B/libgk.a" -ldl -lpthread -lm >"$log/cc" 2>&1 ||
  { cat "$log/cc"; echo "0 passed, 1 failed"; exit 1; }

# 1. the tests as they are
for src in tests/api/*.c; do
  t=$(basename "$src" .c)
  run "api_$t" "$B/tests/api_$t"
done
run "api_oom (1 thread)" env GK_THREADS=1 "$B/tests/api_oom"

# 2. the embedding example, on defaults and on a shape of its own
run1 "embed" "$B/embed"
run1 "embed 100x33x5" "$B/embed" 100 33 5 4

# 3. packaging
run "install" sh tests/api/install_test.sh

# 4. under valgrind
if ! command -v valgrind >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind) >/dev/null 2>&1
fi
if command -v valgrind >/dev/null 2>&1; then
  VG="valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=9"
  for src in tests/api/*.c; do
    t=$(basename "$src" .c)
    case $t in
      prepare) args=200 ;;       # iterations of the overhead loop
      oom) args=24 ;;            # rows of the test matrix
      hang) args=valgrind ;;     # time limits for a 50x slower run
      *) args= ;;
    esac
    run "valgrind api_$t" $VG "$B/tests/api_$t" $args
  done
  run1 "valgrind embed" $VG "$B/embed" 64 32 8 3
else
  echo "valgrind: not available (could not be installed): skipped"
fi

echo "$total_p passed, $total_f failed"
[ $total_f -eq 0 ]
