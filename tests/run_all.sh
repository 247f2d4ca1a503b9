#!/bin/sh
# tests/run_all.sh -- runs every test suite that applies and sums their
# "N passed, M failed" lines.  Called by `make test` (no GPU needed),
# `make test-gpu` (--gpu) and `make asan` (--asan).  B is the build dir.
B=${B:-build}
B=$(cd "$B" 2>/dev/null && pwd || echo "$B")
mode=${1:-}
export B
total_p=0; total_f=0; bad=""
log=$(mktemp -d)
start_all=$(date +%s)
run() {   # run NAME CMD...  -- a suite; its last "N passed, M failed" line counts
  name=$1; shift
  printf '%-14s ... ' "$name"   # the name as the suite starts, its count when it ends
  t0=$(date +%s)
  "$@" > "$log/$name.out" 2>&1
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log/$name.out" | tail -n 1)
  p=$(printf '%s' "$line" | sed -E 's/.*([0-9]+) passed.*/\1/;s/[^0-9].*//' )
  p=$(printf '%s' "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
  f=$(printf '%s' "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')
  [ -n "$p" ] || p=0
  [ -n "$f" ] || f=0
  if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
  total_p=$((total_p + p)); total_f=$((total_f + f))
  if [ "$f" != 0 ]; then
    bad="$bad $name"
    echo "$p passed, $f failed  (${secs} s; log below)"
    tail -n 40 "$log/$name.out" | sed 's/^/    /'
  else
    echo "$p passed, $f failed  (${secs} s)"
  fi
}

case "$mode" in
--gpu)
  run gpu sh tests/run_gpu.sh
  ;;
--asan)
  for t in "$B"/tests/test_* "$B"/tests/api_*; do [ -x "$t" ] && run "asan-$(basename "$t")" "$t"; done
  run asan-golden python3 tests/run_gk.py --timeout 120
  ;;
*)
  for t in "$B"/tests/test_*; do [ -x "$t" ] && run "$(basename "$t")" "$t"; done
  [ -f tests/cli/test_cli.sh ] && run cli sh tests/cli/test_cli.sh
  run repl python3 tests/cli/test_repl.py
  run golden python3 tests/run_gk.py --compare-fusion
  run generated python3 tests/gen_golden.py --verify
  run plan python3 tests/run_plan.py
  run docs python3 docs/gen_language.py --check
  run numpy python3 tests/numpy_check.py
  run threads python3 tests/run_threads.py
  run io python3 tests/io/io_check.py
  run diff env GK_NVRTC_CHECK=lower python3 tests/diff/gkdiff.py -n "${GKDIFF_N:-3000}" --seed "${GKDIFF_SEED:-20261201}" --max-minimise 3 --min-budget 20 -j "$(nproc 2>/dev/null || echo 2)"
  # the cuda-only comparisons of gkdiff (cuda against cpu, NaN and infinities
  # included) run with the cpu standing in for cuda
  run diff-cudapath env GKDIFF_CUDA_AS=cpu python3 tests/diff/gkdiff.py --backend cuda -n "${GKDIFF_CUDA_N:-400}" --seed 701 --max-minimise 2 --min-budget 20 -j "$(nproc 2>/dev/null || echo 2)"
  [ -f tests/run_nvrtc.sh ] && run nvrtc sh tests/run_nvrtc.sh
  # the shipped kernels (make kernels): the standard list lowers; shipped keys are found at other sizes
  run ship python3 tests/run_ship.py
  # gk_sort.cuh's onesweep and one-block sorts run on the host (needs a C++17 compiler)
  command -v "${CXX:-g++}" >/dev/null 2>&1 && run sort-emu make --no-print-directory B="$B" sort-emu
  command -v "${CXX:-g++}" >/dev/null 2>&1 && run tile-emu make --no-print-directory B="$B" tile-emu
  command -v "${CXX:-g++}" >/dev/null 2>&1 && run rowscan-emu make --no-print-directory B="$B" rowscan-emu
  command -v "${CXX:-g++}" >/dev/null 2>&1 && run rowgrid-emu make --no-print-directory B="$B" rowgrid-emu
  command -v "${CXX:-g++}" >/dev/null 2>&1 && run colscan-emu make --no-print-directory B="$B" colscan-emu
  command -v "${CXX:-g++}" >/dev/null 2>&1 && run reduce-emu make --no-print-directory B="$B" reduce-emu
  command -v "${CXX:-g++}" >/dev/null 2>&1 && run transpose-emu make --no-print-directory B="$B" transpose-emu
  # gk_cols.cuh's column reduce (its splits folded by the last block) runs on the host
  command -v "${CXX:-g++}" >/dev/null 2>&1 && run cols-emu make --no-print-directory B="$B" cols-emu
  run shapes python3 tests/run_shapes.py
  # the benchmark's driver on the cpu backend with numpy as the peer (shrunk cases: checks, guard,
  # poison, gk timed before and after the peers), nothing measured
  run bench-local env OUT="$log" python3 tests/bench/bench_gk.py --local
  run bench-harness python3 tests/bench/test_harness.py
  run kernel_names python3 tests/tools/kernel_names.py
  [ -f tests/run_nvrtc.sh ] && run nvrtc-compact env GK_COMPACT=1 sh tests/run_nvrtc.sh
  run fuse_cost python3 tests/run_fuse_cost.py
  run compile_note python3 tests/run_compile_note.py
  # structure: no function in compiler/ over 90 lines; no circle between the
  # library's files, no call up the layers; no function the library never
  # calls but those deadcode.py keeps for a reason (NOTES.md, session 5, rooms)
  run fnlen python3 tests/tools/fnlen.py compiler/*.c
  run layers python3 tests/tools/layers.py "$B/obj"
  run deadcode python3 tests/tools/deadcode.py --build-dir "$B/gc"
  [ -f tests/api/run.sh ] && run api sh tests/api/run.sh
  run python make --no-print-directory B="$B" test-python
  run asan make --no-print-directory asan
  run tsan make --no-print-directory tsan
  ;;
esac
echo
# the failing checks again, last: a CI log may keep only its tail
for name in $bad; do
  echo "failing in $name:"
  grep -E 'FAIL' "$log/$name.out" | head -n 20 | sed 's/^/    /'
done
rm -rf "$log"
[ -n "$bad" ] && echo "failing suites:$bad"
echo "$total_p passed, $total_f failed in $(( $(date +%s) - start_all )) s"
[ "$total_f" = 0 ]
