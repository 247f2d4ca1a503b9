#!/bin/sh
# tests/bench/knob_checks.sh -- one device call that checks and times the
# opt-in speed knobs waiting for a GPU (NOTES.md, sessions 17-19), so that
# the next session can decide their defaults from one run.  Prepare here:
#   make && make bench-dev BENCH_DEV=.dev/d1 && cp build/gk .dev/d1/ &&
#     (cd build && tar cJf ../.dev/d1/kernels.txz gk-kernels)
# (.dev ignored through .git/info/exclude), then on the device, with carry
# [".dev/d1"]:  OUT=$OUT sh tests/bench/knob_checks.sh .dev/d1
# Each step has its own timeout (T_* variables, seconds); the whole is about
# 9 minutes.  Logs and ab tables land in $OUT (res.tgz holds the ab folders).
# Ran once (session 20, H100): NOTES.md has the tables.
#   1. numpy_check on cuda under tt=32,ol=2 (gk_row_tile for rows of <= 32,
#      ONLINE_B softmax): the row, softmax, norm and matrix checks
#   2. A/B gk_row_tile: tt=16 / tt=32 / tt=32,tb=128 on short-row shapes
#   3. gkdiff on cuda under ol=2,tt=32
#   4. A/B ONLINE_B (the default since session 20) against ol=1 (off) over the softmax row family
#   5. A/B rp=2 (f32 pack sums in pass A) on the row sums
#   6. A/B column-reduce knobs (cu: rows in flight; rp=2) on colsum / colmax / sum_axis1
D=$(cd "${1:-.dev/d1}" && pwd) || exit 2
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/knob_out}; mkdir -p "$OUT"
[ -f "$D/kernels.txz" ] && (cd "$D" && tar xJf kernels.txz)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/gpu.txt"
export PYTHONUNBUFFERED=1 GK_LIB_DIR=$D XDG_CACHE_HOME=/tmp/xdg B=${D#$(pwd)/}
AB="python3 $D/ab.py"
NC="--no-compile --reps 20"
echo "== 1 numpy_check cuda tt=32,ol=2"
GK_ROWS_VARIANT=tt=32,ol=2 timeout ${T_NPC:-100} python3 tests/numpy_check.py --backend cuda --quick -j 16 \
  -k rows -k softmax -k norm -k mat/ > "$OUT/npc.log" 2>&1
grep -E 'FAIL|passed' "$OUT/npc.log" | tail -8
echo "== 2 ab gk_row_tile"
timeout ${T_TILE:-130} $AB --variants ',tt=16,tt=32,tt=32:tb=128,' --out /tmp/ab_tile -- $NC \
  --rows 2000000x10,262144x32,1000000x16,3000000x7 --only softmax --only layernorm --only rmsnorm --only rowsum > "$OUT/ab_tile.txt" 2>&1
tail -22 "$OUT/ab_tile.txt"
echo "== 3 gkdiff cuda ol=2,tt=32"
GK_ROWS_VARIANT=ol=2,tt=32 timeout ${T_DIFF:-110} python3 tests/diff/gkdiff.py --backend cuda -j 16 --seed 1901 -n 20000 \
  --budget $(( ${T_DIFF:-110} - 40 )) --no-minimise > "$OUT/gkdiff.log" 2>&1
tail -3 "$OUT/gkdiff.log"
echo "== 4 ab ONLINE_B off"
timeout ${T_OL:-90} $AB --variants ',ol=1,' --out /tmp/ab_ol -- $NC \
  --rows 65536x1024,4096x50257,8192x8192,1024x65536,4096x20000 --only softmax > "$OUT/ab_ol.txt" 2>&1
tail -14 "$OUT/ab_ol.txt"
echo "== 5 ab rp=2 row sums"
timeout ${T_RP:-45} $AB --variants ',rp=2,' --out /tmp/ab_rp -- $NC --rows 4096x50257,1024x65536,65536x1024,1048576x128 \
  --only rowsum > "$OUT/ab_rp.txt" 2>&1
tail -8 "$OUT/ab_rp.txt"
echo "== 6 ab columns"
timeout ${T_COL:-60} $AB --variants ',cu=8,cu=16,rp=2,' --out /tmp/ab_col -- $NC --only colsum --only colmax --only sum_axis1 \
  > "$OUT/ab_col.txt" 2>&1
tail -10 "$OUT/ab_col.txt"
tar czf "$OUT/res.tgz" -C /tmp ab_tile ab_ol ab_rp ab_col 2>/dev/null
