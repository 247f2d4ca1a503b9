#!/bin/sh
# tests/bench/device_run.sh -- the benchmark in one call on a GPU machine that
# cannot build gk (no re2c/lemon there).  Prepare on the build machine a
# folder D that travels with the call (git-ignored): `make bench-dev
# BENCH_DEV=D` builds libgk.so, libgkbench.so and libcubpeer.so and copies
# them with the scripts, ncu_cases.txt and the commit (D/COMMIT) into D;
# then run `sh D/device_run.sh [bench_gk.py options]` there.  If the carried
# libcubpeer.so does not load, it is built there with nvcc.  If D holds
# caches.tgz (the previous call's $OUT/caches.tgz: gk's kernel cache and
# Inductor's/Triton's caches) it is unpacked first, which spares the JIT time
# (never the timed part).  If D holds ncu_cases.txt (one case key a line, as
# bench_gk.py --only takes them), ncu then reads the hardware counters of those
# cases' gk kernels (tests/bench/ncu_gk.py) into ncu.csv.  $OUT gets bench.log,
# bench.json, bench.txt, ncu.csv, ncu.log, ncu_cases.log and a fresh caches.tgz.
cd "$(dirname "$0")" || exit 1
OUT=${OUT:-/tmp/bench_out}
mkdir -p "$OUT"
C=/tmp/bench_caches
mkdir -p $C
[ -f caches.tgz ] && tar xzf caches.tgz -C $C
export PYTHONUNBUFFERED=1 GK_LIB_DIR=$(pwd) GK_COMMIT=$(cat COMMIT 2>/dev/null)
export XDG_CACHE_HOME=$C/xdg TORCHINDUCTOR_CACHE_DIR=$C/inductor TRITON_CACHE_DIR=$C/triton
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
python3 -c "import ctypes; ctypes.CDLL('./libcubpeer.so')" ||
  nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -Xlinker -Bsymbolic -o libcubpeer.so cub_peer.cu
timeout "${BENCH_TIMEOUT:-420}" python3 bench_gk.py "$@" > "$OUT/bench.log" 2>&1
rc=$?
tail -c 11000 "$OUT/bench.log"
# hardware counters of chosen gk kernels (one line per case in ncu_cases.txt)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -f ncu_cases.txt ] && [ -n "$NCU" ]; then
  tr '\n' '\0' < ncu_cases.txt | xargs -0 timeout "${NCU_TIMEOUT:-150}" "$NCU" --clock-control none \
    -k regex:^gk_ --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats \
    --section Occupancy --csv --page details --log-file "$OUT/ncu.log" python3 ncu_gk.py > "$OUT/ncu.csv" 2> "$OUT/ncu_cases.log"
  echo "ncu: rc $?, $(grep -c '' "$OUT/ncu.csv") lines"
fi
if [ -z "$NO_CACHES" ]; then   # NO_CACHES=1: the last call, nothing to spare
  tar czf "$OUT/caches.tgz" -C $C . 2>/dev/null
  [ "$(stat -c %s "$OUT/caches.tgz")" -gt 15000000 ] && rm -f "$OUT/caches.tgz"
fi
exit $rc
