#!/bin/sh
# tests/device.sh -- one call on the GPU machine: the GPU suites, a few
# checks of caching and edge semantics, and the benchmark, within ~9 minutes.
# Prepare here (the device has no re2c/lemon):
#   make && make build/libgkbench.so build/libcubpeer.so build/tests/api_device && mkdir -p build/dev &&
#     cp build/gk build/libgk.so build/libgkbench.so build/libcubpeer.so build/tests/api_device build/dev/
#   nvcc -arch=sm_90 -std=c++17 -O2 -Ikernels tests/kernels/test_kernels.cu -o build/dev/tk
# then run `sh tests/device.sh` with carry: ["build/dev"].  Logs come back
# in $OUT as one tarball plus bench.log and bench.json.
export B=$(pwd)/build/dev
ROOT=$(pwd)
L=$(mktemp -d)
OUT=${OUT:-$L}
nvidia-smi -L
echo "== gpu suites"
OUT=$L/gpu GPU_NUMPY_ARGS=--quick GPU_SAN_N=1 timeout ${GPU_T:-400} sh tests/run_gpu.sh > "$L/gpu.log" 2>&1
grep -E '^\[|passed, .* failed$' "$L/gpu.log"
echo "== kernel primitives"
[ -x build/dev/tk ] && timeout 90 build/dev/tk 2>&1 | tail -3
echo "== cache reuse"
GK_DEBUG=cache ./build/dev/gk -e 'x = rand(100); print(sum(x)); y = rand(100); print(sum(y))' 2>&1 | grep -iE "hit|miss|compil" | head -6
echo "== edge semantics cpu vs cuda"
for src in 'softmax([1/0, 1.0])' 'logsumexp([1/0, 1.0])' 'logsumexp(f32([-1/0, -1/0]))' 'x = randn(1000001); print(hist(x, 256), hist(x, 10, -1, 1))' 'x = [1.0, 2.0, 3.0]; y = x / (x - 2.0) * 0.0; hist(y, 2)' 'x = randn(1000003); print(logsumexp(x), sum(exp(x - max(x))))' 'x = rand(100000); print(scan(x * x) * 2)' 'm = rand(300, 200); print(exp(scan(rows(m)) * 0.01))'; do
  a=$(./build/dev/gk --backend cpu -e "$src" 2>&1); b=$(./build/dev/gk --backend cuda -e "$src" 2>&1)
  if [ "$a" = "$b" ]; then echo "same: $src"; else echo "DIFF: $src"; echo "  cpu: $a" | head -3; echo "  gpu: $b" | head -3; fi
done
echo "== bench"
GK_LIB_DIR=$B OUT=$L timeout ${BENCH_T:-150} python3 tests/bench/bench_gk.py --quick --budget 100 > "$L/bench.log" 2>&1
tail -45 "$L/bench.log"
cp "$L/bench.log" "$L/bench.json" "$OUT/" 2>/dev/null
tar czf "$OUT/logs.tgz" -C "$L" . 2>/dev/null
