#!/bin/sh
# tests/run_gpu.sh -- the GPU suites on the cuda backend (needs a GPU).
#   1. the golden suite:        python3 tests/run_gk.py --backend cuda
#   2. numpy cross-check:       python3 tests/numpy_check.py --backend cuda
#   3. cpu vs cuda:             every golden case gives the same stdout and
#                               exit status on both backends (a case marked
#                               `# gpu: differs` is skipped)
#   4. sizes past 2^31:         sum, argmax, scan, filter on 2^31 + 7 elements
#   5. determinism:             float reductions, row programs and scans run
#                               twice give bit-identical .npy files
#   6. compute-sanitizer:       memcheck and racecheck on a subset of cases
#   7. tests/plan on cuda:      kernel counts and GK_FUSION=0 equality
#   8. the C API on the device: $B/api_device (tests/api/device.c: borrowed
#                               device pointers, kDLCUDA DLPack in and out),
#                               also under compute-sanitizer memcheck
#   9. differential programs:   tests/diff/gkdiff.py --backend cuda: random
#                               programs against numpy and against the cpu
#                               backend (GPU_DIFF_N programs, default 5000)
#  10. op table edge values:    $B/tests/test_ops with GK_TEST_OPS_BACKEND=cuda
#                               (every op row x dtype, cuda against cpu)
#  11. the REPL on the GPU:     tests/cli/test_repl.py with REPL_BACKEND=cuda
#                               (:profile, the status line, Ctrl-C in a pty)
# Each section prints its own `N passed, M failed`; the last line sums them.
# GPU_NUMPY_ARGS passes options to numpy_check.py (e.g. --quick).
# GPU_QUICK=1 skips sections 4 and 6, GPU_NOSAN=1 section 6; GPU_SAN_N=k
# sanitizes k cases per topic (default 3).  OUT=dir keeps logs there.
B=${B:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "$B" in /*) GK=$B/gk;; *) GK=$ROOT/$B/gk;; esac
LOGD=${OUT:-$(mktemp -d)}
mkdir -p "$LOGD"
TP=0; TF=0
count() {  # count NAME LOGFILE: adds the last "N passed, M failed" line
  l=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -1)
  p=$(echo "$l" | sed 's/ passed.*//'); f=$(echo "$l" | sed 's/.*passed, \([0-9]*\) failed/\1/')
  [ -z "$l" ] && { p=0; f=1; }
  echo "[$1] ${p:-0} passed, ${f:-1} failed"
  TP=$((TP + ${p:-0})); TF=$((TF + ${f:-1}))
}

want() { case " ${GPU_SECTIONS:-1 2 3 4 5 6 7 8 9 10 11} " in *" $1 "*) return 0;; esac; return 1; }
J=$(nproc 2>/dev/null || echo 8)

# 1 + 2 (GPU_SKIP_SUITES=1 skips sections 1-3; GPU_SECTIONS="1 3" picks sections)
if [ -z "$GPU_SKIP_SUITES" ]; then
if want 1; then
B=$B python3 "$ROOT/tests/run_gk.py" --backend cuda --timeout 120 -j $J > "$LOGD/golden_cuda.log" 2>&1
count golden "$LOGD/golden_cuda.log"
fi
if want 2; then
B=$B python3 "$ROOT/tests/numpy_check.py" --backend cuda -j $J $GPU_NUMPY_ARGS > "$LOGD/numpy_cuda.log" 2>&1
count numpy "$LOGD/numpy_cuda.log"
fi

# 3: cpu vs cuda on every case
if want 3; then
CMP=$(mktemp -d)
find "$ROOT/tests/gk" -name '*.gk' | sort | while read -r t; do grep -q '# gpu: differs' "$t" || echo "$t"; done | \
  xargs -P $J -I{} sh -c 'd=$(dirname "$1"); n=$(basename "$1"); k=$(echo "$1" | md5sum | cut -c1-12)
    (cd "$d" && timeout 60 "$2" --backend cpu "$n" > "$3/$k.a" 2>/dev/null; echo "rc=$?" >> "$3/$k.a")
    (cd "$d" && timeout 60 "$2" --backend cuda "$n" > "$3/$k.b" 2>/dev/null; echo "rc=$?" >> "$3/$k.b")
    if cmp -s "$3/$k.a" "$3/$k.b"; then echo PASS > "$3/$k.r"; else { echo "DIFF $1"; diff "$3/$k.a" "$3/$k.b" | head -8; } > "$3/$k.r"; fi' _ {} "$GK" "$CMP"
p=$(cat "$CMP"/*.r 2>/dev/null | grep -c '^PASS'); f=$(cat "$CMP"/*.r 2>/dev/null | grep -c '^DIFF')
cat "$CMP"/*.r 2>/dev/null | grep -v '^PASS' > "$LOGD/compare.log"
echo "$p passed, $f failed" >> "$LOGD/compare.log"
count cpu-vs-cuda "$LOGD/compare.log"
rm -rf "$CMP"
fi
fi

# 4: past 2^31 elements
if [ -z "$GPU_QUICK" ] && want 4; then
  W=$(mktemp -d)
  cat > "$W/big.gk" <<'GK'
n = 2147483655
x = rand(n)
print(abs(sum(x) / n - 0.5) < 0.001)
y = where(iota(n) == 2147483650, 2.0, x)
print(argmax(y))
c = scan(i64(fill(1, n)))
print(c[n - 1])
print(c[2147483648])
z = iota(n)
f = z[z > 5]
print(len(f))
print(f[2147483640])
GK
  printf 'true\n2147483650\n2147483655\n2147483649\n2147483649\n2147483646\n' > "$W/want"
  (cd "$W" && timeout 300 "$GK" --backend cuda big.gk > got 2> err)
  if cmp -s "$W/want" "$W/got"; then echo "1 passed, 0 failed" > "$LOGD/big.log"
  else { echo "big: got"; cat "$W/got" "$W/err"; echo "0 passed, 1 failed"; } > "$LOGD/big.log"; fi
  count big-2^31+7 "$LOGD/big.log"
  rm -rf "$W"
fi

# 5: determinism
if want 5; then
W=$(mktemp -d)
cat > "$W/det.gk" <<'GK'
seed(7)
x = randn(10000019)
m = randn(4099, 1031)
save("a.npy", sum(x))
save("b.npy", logsumexp(x))
save("c.npy", var(x))
save("d.npy", softmax(rows(m)))
save("e.npy", layernorm(rows(m)))
save("f.npy", scan(x))
save("g.npy", sum(cols(m)))
save("h.npy", sum(exp(x - max(x))))
save("t.npy", randn(1000003, 3))
save("w.npy", randn(3, 1000003))
save("q.npy", randn(3, 200003))
save("p.npy", randn(5, 130001))
t = load("t.npy")
w = load("w.npy")
q = load("q.npy")
p = load("p.npy")
save("i.npy", sum(cols(t)))
save("j.npy", scan(cols(t)))
save("k.npy", scan(rows(w)))
save("l.npy", softmax(rows(p)))
save("n.npy", rmsnorm(rows(q)))
save("o.npy", softmax(rows(w)))
save("r.npy", layernorm(rows(w)))
GK
p=0; f=0
(cd "$W" && mkdir r1 r2 && cp det.gk r1 && cp det.gk r2 && (cd r1 && "$GK" --backend cuda det.gk) && (cd r2 && "$GK" --backend cuda det.gk)) > "$LOGD/det.log" 2>&1
for o in a b c d e f g h i j k l n o r; do
  if [ -f "$W/r1/$o.npy" ] && cmp -s "$W/r1/$o.npy" "$W/r2/$o.npy"; then p=$((p+1)); else f=$((f+1)); echo "nondeterministic: $o" >> "$LOGD/det.log"; fi
done
echo "$p passed, $f failed" >> "$LOGD/det.log"
count determinism "$LOGD/det.log"
# the random streams are bit-identical on both backends
cat > "$W/rng.gk" <<'GK'
seed(12345)
save("u.npy", rand(1000003))
save("n.npy", randn(1000003))
save("m.npy", rand(333, 777) * 2 - 1)
GK
p=0; f=0
(cd "$W" && mkdir c g && cp rng.gk c && cp rng.gk g && (cd c && "$GK" --backend cpu rng.gk) && (cd g && "$GK" --backend cuda rng.gk)) > "$LOGD/rng.log" 2>&1
for o in u n m; do
  if [ -f "$W/c/$o.npy" ] && cmp -s "$W/c/$o.npy" "$W/g/$o.npy"; then p=$((p+1)); else f=$((f+1)); echo "rng stream differs: $o" >> "$LOGD/rng.log"; fi
done
echo "$p passed, $f failed" >> "$LOGD/rng.log"
count rng-cpu-vs-cuda "$LOGD/rng.log"
rm -rf "$W"
fi

# 7 (runs first here): the fusion plans and their results on cuda
if want 7; then
  B=$B python3 "$ROOT/tests/run_plan.py" --backend cuda > "$LOGD/plan_cuda.log" 2>&1
  count plan-cuda "$LOGD/plan_cuda.log"
fi

# 8: device memory through gk.h
if want 8; then
  API=$B/api_device; [ -x "$API" ] || API=$B/tests/api_device
  if [ -x "$API" ]; then
    "$API" > "$LOGD/api_device.log" 2>&1
    count api-device "$LOGD/api_device.log"
    CS8=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    if [ -n "$CS8" ] && [ -z "$GPU_NOSAN" ]; then
      "$CS8" --tool memcheck --error-exitcode 99 "$API" 1000 > "$LOGD/api_device_san.log" 2>&1 ||
        printf 'memcheck exit status %s\n0 passed, 1 failed\n' $? >> "$LOGD/api_device_san.log"
      count api-device-memcheck "$LOGD/api_device_san.log"
    fi
  else
    echo "0 passed, 1 failed (no api_device binary)" > "$LOGD/api_device.log"
    count api-device "$LOGD/api_device.log"
  fi
fi

# 10: the op table's edge values on the device: tests/unit/test_ops.c with
# GK_TEST_OPS_BACKEND=cuda compares every row x dtype with the cpu backend
if want 10; then
  OPS=$B/tests/test_ops
  if [ -x "$OPS" ]; then GK_NVRTC_CHECK=0 GK_TEST_OPS_BACKEND=cuda "$OPS" > "$LOGD/ops_cuda.log" 2>&1
  else echo "0 passed, 1 failed (no test_ops binary)" > "$LOGD/ops_cuda.log"; fi
  count ops-cuda "$LOGD/ops_cuda.log"
fi

# 11: the REPL in a pseudo-terminal, on cuda
if want 11; then
  B=$B REPL_BACKEND=cuda python3 "$ROOT/tests/cli/test_repl.py" > "$LOGD/repl_cuda.log" 2>&1
  count repl-cuda "$LOGD/repl_cuda.log"
fi

# 9: random programs, cuda against numpy and against cpu
if want 9; then
  B=$B python3 "$ROOT/tests/diff/gkdiff.py" --backend cuda -n "${GPU_DIFF_N:-5000}" -j $J > "$LOGD/diff_cuda.log" 2>&1
  count diff-cuda "$LOGD/diff_cuda.log"
fi

# 6: compute-sanitizer on one case per topic
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -z "$GPU_QUICK" ] && [ -z "$GPU_NOSAN" ] && [ -n "$CS" ] && want 6; then
  for tool in memcheck racecheck; do
    p=0; f=0
    for dir in $(ls -d "$ROOT"/tests/gk/*/); do
      for t in $(ls "$dir"*.gk | head -${GPU_SAN_N:-3}); do
        grep -q 'expect error' "$t" && continue
        if (cd "$dir" && timeout 120 "$CS" --tool $tool --error-exitcode 99 "$GK" --backend cuda "$(basename "$t")" > /dev/null 2> "$LOGD/cs.err"); then p=$((p+1))
        else f=$((f+1)); { echo "FAIL $tool $t"; grep -v '^=* *$' "$LOGD/cs.err" | head -15; } >> "$LOGD/sanitizer_$tool.log"; fi
      done
    done
    echo "$p passed, $f failed" >> "$LOGD/sanitizer_$tool.log"
    count "sanitizer-$tool" "$LOGD/sanitizer_$tool.log"
  done
fi
echo "$TP passed, $TF failed"
[ "$TF" -eq 0 ]
