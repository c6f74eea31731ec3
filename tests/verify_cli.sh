#!/usr/bin/env bash
# 'mgpu-tune verify matmul' end to end on the virtual device: a config is verified once per
# problem class and the store answers the second time; --json carries every verdict; a model
# tuning run at a problem of a verified class reuses the verdict instead of running again.
set -uo pipefail
MGPU="${MGPU:?}"
T="$(mktemp -d /tmp/mgpu-verify.XXXXXX)"; trap 'rm -rf "$T"' EXIT
export MGPU_CACHE_DIR="$T/cache"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); sed 's/^/  | /' "$T/out" | tail -8; fi; }
CFG='{"tile_m":64,"tile_n":64,"tile_k":64,"max_concurrent_steps":2,"epi_tile_m":64,"epi_tile_n":32}'

"$MGPU" verify matmul --arch sm_90a --config "$CFG" --db "$T/v.db" > "$T/out" 2>&1; rc=$?
check "three standard classes verified" '[ $rc = 0 ] && grep -q "3 of 3 (config, problem class) pairs checked (3 verified); 0 from earlier" "$T/out"'
"$MGPU" verify matmul --arch sm_90a --config "$CFG" --db "$T/v.db" --json > "$T/out" 2> /dev/null; rc=$?
keys="$(/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['reused'], d['verified'], d['failed'], len(d['results']), ','.join(sorted(d['results'][0])))" "$T/out")"
check "the second run is answered by the store" '[ $rc = 0 ] && [ "$keys" = "3 3 0 3 config,equivalent_to,kernel_hash,message,problem_class,proxy,reused,status,target,verification_error,wall_s" ]'
n="$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM trials WHERE source='emulate' AND kernel_hash != '' AND problem_class != ''\").fetchone()[0])" "$T/v.db")"
check "each verification is one keyed trial" '[ "$n" = 3 ]'
# The class of 300x264x200 on 132 SMs: ragged in M, N and K, one tile per CTA.
"$MGPU" verify matmul --arch sm_90a --config "$CFG" --m 300 --n 264 --k 200 --db "$T/v.db" -v > "$T/out" 2>&1; rc=$?
check "a problem's class" '[ $rc = 0 ] && grep -q "ragged_m+ragged_n+k_tail" "$T/out" && grep -q "1 of 1 .* (1 verified)" "$T/out"'
"$MGPU" verify matmul --arch sm_90a --config "$CFG" --m 1000 --n 1000 --k 1000 --db "$T/v.db" > "$T/out" 2>&1; rc=$?
check "another problem of that class reuses it" '[ $rc = 0 ] && grep -q "1 from earlier verifications" "$T/out"'
exit $((fails > 0))
