#!/bin/sh
# tests/run_nvrtc.sh -- compile every kernel the .gk suite generates with
# NVRTC (sm_90 CUBIN), without a GPU.  Each tests/gk/**/*.gk script runs on
# the cpu backend with GK_NVRTC_CHECK=1 (and GK_PLAN_CACHE=verify: a group
# taken from the plan cache is lowered afresh and must give the same text and
# launch description): the compiler lowers every group to
# CUDA C and compiles it (runtime/cuda_lower.c); a failure prints the NVRTC log.
# Prints `N passed, M failed` (N = kernels compiled); exit 1 on any failure.
# Without libnvrtc: a skip line and `0 passed, 0 failed`.
B=${B:-build}
case "$B" in /*) GK=$B/gk;; *) GK=$(cd "$(dirname "$0")/.." && pwd)/$B/gk;; esac
ROOT=$(cd "$(dirname "$0")" && pwd)
LOG=$(mktemp -d "${TMPDIR:-/tmp}/gk-nvrtc.XXXXXX")
trap 'rm -rf "$LOG"' EXIT
[ -x "$GK" ] || { echo "run_nvrtc: $GK not built"; exit 2; }
JOBS=$(nproc 2>/dev/null || echo 4)

# one probe: is NVRTC there at all?
probe=$(cd "$LOG" && GK_NVRTC_CHECK=1 "$GK" --backend cpu -e 'sum(iota(10))' 2>&1 >/dev/null)
case "$probe" in
  *"gk-nvrtc: skipped"*) echo "run_nvrtc: skipped: $(echo "$probe" | sed -n 's/.*skipped: //p' | head -1)"
                         echo "0 passed, 0 failed"; exit 0;;
esac

find "$ROOT/gk" -name '*.gk' | sort > "$LOG/list"
i=0
while read -r f; do i=$((i+1)); echo "$i $f"; done < "$LOG/list" | \
  xargs -P "$JOBS" -n 2 sh -c 'cd "$(dirname "$2")" && GK_NVRTC_CHECK=1 GK_PLAN_CACHE=verify timeout 120 "$0" --backend cpu "$(basename "$2")" \
      >/dev/null 2>"'"$LOG"'/$1.err"; echo "$2" > "'"$LOG"'/$1.name"' "$GK"

pass=0; fail=0
for e in "$LOG"/*.err; do
  [ -f "$e" ] || continue
  line=$(grep '^gk-nvrtc: [0-9]* compiled' "$e" | tail -1)
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed 's/gk-nvrtc: \([0-9]*\) compiled, \([0-9]*\) failed/\1/')
    q=$(echo "$line" | sed 's/gk-nvrtc: \([0-9]*\) compiled, \([0-9]*\) failed/\2/')
    pass=$((pass + p)); fail=$((fail + q))
  fi
  if grep -q 'gk-nvrtc: FAILED\|cannot lower\|differs from a fresh lowering' "$e"; then
    name=$(cat "${e%.err}.name")
    grep -q 'cannot lower\|differs from a fresh lowering' "$e" && fail=$((fail + 1))
    echo "FAIL $name" >&2
    sed -n '/gk-nvrtc: FAILED\|cannot lower\|differs from a fresh/,/--- source ---/p' "$e" | head -40 >&2
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
