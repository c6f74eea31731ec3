#!/usr/bin/env bash
# The HTML report (issue 15): numeric parameter axes in numeric order (32, 64, 128 -- not
# 128, 32, 64 as text sorts them), and pictures that leave runs or configs out say so on the
# page ("Showing 10 of 13 ..."); --json names what was written.
# Run: MGPU=build/mgpu-tune SRC=. bash tests/report_pictures.sh
set -uo pipefail
MGPU="${MGPU:?set MGPU to the mgpu-tune executable}"
SRC="${SRC:?set SRC to the source directory}"
T="$(mktemp -d /tmp/mgpu-report-test.XXXXXX)"
trap 'rm -rf "$T"' EXIT
export MGPU_CACHE_DIR="$T/cache"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The axis order, straight from report.py.
"$PY" - "$SRC/harness/report" <<'PY' || fail "axis order"
import sys
sys.path.insert(0, sys.argv[1])
import report
trials = [{"config": {"tile_n": v, "wg": w}} for v, w in [(128, "M"), (32, "N"), (64, "M"), (256, "N")]]
got = report._varying(trials)
assert got["tile_n"] == [32, 64, 128, 256], got
assert got["wg"] == ["M", "N"], got
print("axis order ok:", got)
PY

# 13 tuning runs of 13 problems: more than the convergence picture (10 lines) and the
# history picture (12 configs) draw.
for m in 128 256 384 512 640 768 896 1024 1152 1280 1408 1536 1664; do
  "$MGPU" matmul --arch sm_90a --m "$m" --n 256 --k 256 --device model --no-compile --trials 3 --seed 1 \
    --db "$T/t.db" > "$T/run.log" 2>&1 || { fail "model run m=$m: $(tail -3 "$T/run.log")"; break; }
done
"$MGPU" report --db "$T/t.db" -o "$T/out" --json > "$T/report.json" 2> "$T/report.err"; rc=$?
[ "$rc" = 0 ] || fail "report exited $rc: $(cat "$T/report.err")"
"$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); assert "convergence.png" in j["pictures"] and "history.png" in j["pictures"], j; assert j["index"].endswith("index.html"), j' "$T/report.json" || fail "report --json: $(cat "$T/report.json")"
grep -q "Showing 10 of 13 run and problem lines" "$T/out/index.html" || fail "the convergence caption does not say 10 of 13"
grep -q "Showing 12 of 13 exported configs" "$T/out/index.html" || fail "the history caption does not say 12 of 13"
ls "$T" | grep -Eq 't.db-(wal|shm)' && fail "the report left -wal/-shm beside the database"
[ "$failed" = 0 ] && echo "report pictures: ok"
exit "$failed"
