#!/usr/bin/env bash
# Performance lints end to end (issue 19): a model tuning run records each kernel's SASS
# evidence once (nvdisasm), predicts with its lints' penalties and says so in each trial;
# best (text and JSON) and the report show each config's lints; a second run whose kernel was
# recorded before reuses the record; without nvdisasm the run says lints were not available.
# Run: MGPU=build/mgpu-tune bash tests/lints_cli.sh   (needs nvdisasm: scripts/cuda_tools.sh)
set -uo pipefail
MGPU="${MGPU:?}"
T="$(mktemp -d /tmp/mgpu-lints.XXXXXX)"; trap 'rm -rf "$T"' EXIT
export MGPU_CACHE_DIR="$T/cache"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); sed 's/^/  | /' "$T/out" | tail -12; fi; }
sql() { "$PY" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"; }
P="--arch sm_90a --n 256 --k 256 --strategy random --seed 1 --device model"

"$MGPU" matmul $P --m 256 --trials 2 --db "$T/l.db" > "$T/out" 2>&1; rc=$?
check "a model run records SASS evidence" '[ $rc = 0 ] && grep -Eq "SASS evidence: [12] kernels disassembled, 0 found in .*configs predicted with lint penalties" "$T/out"'
kernels="$(sql "$T/l.db" "SELECT count(DISTINCT kernel_hash) FROM trials WHERE source = 'model'")"
rows="$(sql "$T/l.db" "SELECT count(*) FROM kernel_evidence")"
check "one evidence record per kernel binary" '[ "$kernels" -ge 1 ] && [ "$rows" = "$kernels" ]'
unexplained="$(sql "$T/l.db" "SELECT count(*) FROM trials WHERE source = 'model' AND status = 'ok' AND message NOT LIKE 'lint%'")"
check "each prediction says what its lints cost" '[ "$unexplained" = 0 ]'

"$MGPU" best --db "$T/l.db" --include-model > "$T/out" 2>&1; rc=$?
check "best shows a lints column" '[ $rc = 0 ] && grep -q "| noise | lints | config |" "$T/out" && grep "| model |" "$T/out" | grep -Eq "\| (none|[a-z-]+( \([0-9.]+-way\))?(, [a-z-]+( \([0-9.]+-way\))?)*) \| \`"'
"$MGPU" best --db "$T/l.db" --include-model --json > "$T/out" 2> /dev/null; rc=$?
check "best --json carries the lints and their evidence" '[ $rc = 0 ] && "$PY" -c "import json,sys; r = json.load(open(sys.argv[1]))[0]; assert isinstance(r[\"lints\"], list), r; assert r[\"lints_from\"] == {\"sass\": True, \"verification\": True}, r" "$T/out"'

# The winner's kernel again (warm start at a neighbouring shape): its evidence is reused.
"$MGPU" matmul $P --m 512 --trials 1 --no-verify --db "$T/l.db" > "$T/out" 2>&1; rc=$?
check "a kernel recorded before is not disassembled again" '[ $rc = 0 ] && grep -q "SASS evidence: 0 kernels disassembled, 1 found in" "$T/out"'

MGPU_NVDISASM=off "$MGPU" matmul $P --m 256 --trials 1 --no-verify --db "$T/none.db" > "$T/out" 2>&1; rc=$?
check "without nvdisasm the run says lints were not available" '[ $rc = 0 ] && grep -q "SASS lints not available: no nvdisasm" "$T/out" && [ "$(sql "$T/none.db" "SELECT count(*) FROM kernel_evidence")" = 0 ]'
"$MGPU" best --db "$T/none.db" --include-model > "$T/out" 2>&1; rc=$?
check "best says when nothing was recorded" '[ $rc = 0 ] && grep -q "| not recorded |" "$T/out"'

if "$PY" -c "import matplotlib" 2> /dev/null; then
  "$MGPU" report --db "$T/l.db" -o "$T/report" > "$T/out" 2>&1; rc=$?
  check "the report has a lints column and section" '[ $rc = 0 ] && grep -q "<th>lints</th>" "$T/report/index.html" && grep -q "<h2>Performance lints</h2>" "$T/report/index.html"'
else
  echo "skip the report (no matplotlib)"
fi
exit $((fails > 0))
