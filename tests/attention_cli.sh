#!/usr/bin/env bash
# The op-generic commands end to end for attention (harness/op/): 'space attention' ranks the
# valid configs; 'mgpu-tune attention --device model' proves each config on the virtual device
# at its three classes before predicting it, records everything, and a second run resumes
# (nothing measured twice, verdicts reused); best and export carry the problem's own fields and
# the 'virtual' label, the C++ header declares the op's own problem struct; 'compile attention'
# reports each config's kernel; 'verify attention' answers from the store; '--device emulate' verifies at
# the problem itself; bad problem values are exit 2 and leave the database as it was.
set -uo pipefail
MGPU="${MGPU:?}"
T="$(mktemp -d /tmp/mgpu-attention.XXXXXX)"; trap 'rm -rf "$T"' EXIT
export MGPU_CACHE_DIR="$T/cache"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); sed 's/^/  | /' "$T/out" | tail -8; fi; }
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
q() { "$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }
P="--arch sm_90a --heads 4 --kv-heads 2 --seq-q 300 --seq-kv 500 --head-dim 64 --causal"

"$MGPU" space attention $P --json > "$T/out" 2>&1; rc=$?
check "space: every config, the valid ones ranked by the model" \
  '[ $rc = 0 ] && [ "$("$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print(j[\"total\"], j[\"valid\"], len(j[\"ranking\"]), j[\"problem\"])" "$T/out")" = "16 14 14 b1_h4_kvh2_sq300_skv500_d64_bf16_causal" ]'

"$MGPU" attention $P --device model --trials 3 --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "model: three configs proven at three classes, then predicted" \
  '[ $rc = 0 ] && grep -q "3 trials this run, 0 from earlier runs; 0 failed" "$T/out" && grep -q "3 passed, 0 failed (0 class verdicts reused" "$T/out"'
check "each class verdict is one keyed emulate trial" \
  '[ "$(q "$T/a.db" "SELECT count(*) FROM trials WHERE source = '"'emulate'"' AND status = '"'ok'"' AND kernel_hash != '"''"' AND problem_class LIKE '"'attention_d64_bf16_causal_%'"'")" = 9 ]'
check "a prediction names its three classes" \
  '[ "$(q "$T/a.db" "SELECT count(*) FROM trials WHERE source = '"'model'"' AND problem_class LIKE '"'%;%;%'"'")" = 3 ]'
check "the problem row keeps the op's fields and flops" \
  '[ "$(q "$T/a.db" "SELECT kernel || '"' '"' || json_extract(fields, '"'$.kv_heads'"') || '"' '"' || (flops > 0) FROM problems WHERE key = '"'b1_h4_kvh2_sq300_skv500_d64_bf16_causal'"'")" = "attention 2 1" ]'

"$MGPU" attention $P --device model --trials 5 --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "a second run resumes: two more configs, nothing measured twice" \
  '[ $rc = 0 ] && grep -q "2 trials this run, 3 from earlier runs" "$T/out"'

"$MGPU" best --db "$T/a.db" --include-model > "$T/out" 2>&1; rc=$?
check "best: the fastest prediction, labelled virtual" \
  '[ $rc = 0 ] && grep -q "attention_sm90 | b1_h4_kvh2_sq300_skv500_d64_bf16_causal | model:H100 SXM | model | virtual" "$T/out"'
"$MGPU" export --db "$T/a.db" --include-model --format json -o "$T/json" > "$T/out" 2>&1; rc=$?
check "export: the problem by its fields" \
  '[ $rc = 0 ] && "$PY" -c "import json,glob,sys; d=json.load(open(glob.glob(sys.argv[1]+\"/*.json\")[0])); p=next(iter(d[\"entries\"].values()))[\"problem\"]; sys.exit(0 if p[\"op\"]==\"attention\" and p[\"kv_heads\"]==2 and p[\"causal\"] is True else 1)" "$T/json"'

"$MGPU" export --db "$T/a.db" --include-model --format cpp -o "$T/tuned.h" > "$T/out" 2>&1; rc=$?
printf '#include "tuned.h"\nstatic_assert(mgpu_tuned::lookup_attention_sm90("sm_90a", {1, 4, 2, 300, 500, 64, "bf16", true})->verification == "virtual");\nstatic_assert(mgpu_tuned::lookup_attention_sm90("sm_90a", {1, 4, 2, 300, 500, 128, "bf16", true}) == nullptr);\nint main() {}\n' > "$T/use.cc"
check "export cpp: the attention problem's own struct and lookup, compiled" \
  '[ $rc = 0 ] && ${CXX:-c++} -std=c++17 -Wall -Werror -fsyntax-only -I "$T" "$T/use.cc" >> "$T/out" 2>&1'

"$MGPU" verify attention $P --config '{"block_kv":64,"max_concurrent_steps":2}' --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "verify: a config the tuner proved is answered by the store" \
  '[ $rc = 0 ] && grep -q "0 class runs on the virtual device, 3 verdicts reused" "$T/out"'

"$MGPU" attention --arch sm_90a --heads 2 --seq-q 130 --seq-kv 200 --head-dim 64 --device emulate --trials 2 --db "$T/e.db" > "$T/out" 2>&1; rc=$?
check "emulate: verified at the problem itself, no times" \
  '[ $rc = 0 ] && grep -q "virtual device: 2 verified at the problem itself, 0 failed" "$T/out"'

"$MGPU" compile attention $P --all --json --sass > "$T/out" 2>&1; rc=$?
check "compile --all: the problem's valid configs, each its own kernel, none spilling" \
  '[ $rc = 0 ] && [ "$("$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); c=j[\"configs\"]; print(len(c), j[\"kernels\"], all(r[\"ok\"] and r[\"spill_store_bytes\"] == 0 for r in c), j[\"problem\"])" "$T/out")" = "14 14 True b1_h4_kvh2_sq300_skv500_d64_bf16_causal" ]'
# The KV loop's fences and waits are what its PTX asks for (softmax needs S before P.V): the
# assembler added none, so no serialised-mma lint -- nor any other.
check "compile --all --sass: no lint on any kernel, the PTX's main-loop count beside the SASS's" \
  '[ "$("$PY" -c "import json,sys; c=json.load(open(sys.argv[1]))[\"configs\"]; print(all(r[\"sass\"][\"lints\"] == [] and r[\"sass\"][\"main_loop\"][\"warpgroup_sync\"] == r[\"sass\"][\"ptx_main_loop_warpgroup_sync\"] for r in c))" "$T/out")" = True ]'
# `sass` of one schedule's cubin: without --ptx the loop's count is not judged (no lint, said);
# with its own PTX no lint; with the other schedule's PTX (another wgmma count) exit 2.
for s in serial intra_wg_overlap; do
  "$MGPU" compile attention $P --config "{\"consumer_schedule\":\"$s\"}" --emit-dir "$T/k_$s" > /dev/null 2>&1
done
C1=$(ls "$T"/k_serial/*.cubin); P1=$(ls "$T"/k_serial/*.ptx); P2=$(ls "$T"/k_intra_wg_overlap/*.ptx)
"$MGPU" sass "$C1" > "$T/out" 2>&1; rc=$?
check "sass without --ptx: no serialised-mma, the loop's count said not judged" \
  '[ $rc = 0 ] && grep -q "lints: none" "$T/out" && grep -q "without --ptx the main loop.s [0-9]* warpgroup arrive/wait are not judged" "$T/out"'
"$MGPU" sass "$C1" --ptx "$P1" > "$T/out" 2>&1; rc=$?
check "sass with its own PTX: no lint" '[ $rc = 0 ] && grep -q "lints: none" "$T/out"'
"$MGPU" sass "$C1" --ptx "$P2" > "$T/out" 2>&1; rc=$?
check "sass with another schedule's PTX: exit 2, the shapes named" \
  '[ $rc = 2 ] && grep -q "is not this cubin.s: its kernel .attention. has wgmma.mma_async .* where the cubin has HGMMA [0-9]* x 64x" "$T/out"'
# The same count of MMAs of another shape (round 13, F1): a serial d128 kernel, an overlapped d64 PTX.
"$MGPU" compile attention --arch sm_90a --config '{"block_kv":128,"block_q":64,"consumer_schedule":"serial","max_concurrent_steps":2}' --emit-dir "$T/s128" > /dev/null 2>&1
"$MGPU" compile attention --arch sm_90a --head-dim 64 --config '{"block_kv":64,"block_q":64,"consumer_schedule":"intra_wg_overlap","max_concurrent_steps":2}' --emit-dir "$T/o64" > /dev/null 2>&1
"$MGPU" sass "$(ls "$T"/s128/*.cubin)" --ptx "$(ls "$T"/o64/*.ptx)" > "$T/out" 2>&1; rc=$?
check "sass with a PTX of as many MMAs of another shape: exit 2" \
  '[ $rc = 2 ] && [ "$(grep -c wgmma.mma_async "$T"/s128/*.ptx)" = "$(grep -c wgmma.mma_async "$T"/o64/*.ptx)" ] && grep -q "16 x 64x64x16 where the cubin has HGMMA 16 x 64x128x16" "$T/out"'
"$MGPU" compile attention --arch sm_90a --config '{"block_kv":96}' > "$T/out" 2>&1; rc=$?
check "compile: a config out of the space is exit 2, named" '[ $rc = 2 ] && grep -q "block_kv" "$T/out"'
"$MGPU" compile attention --arch sm_90a --all --config '{}' > "$T/out" 2>&1; rc=$?
check "compile: --all and --config together is exit 2" '[ $rc = 2 ] && grep -q "exactly one of --config JSON and --all" "$T/out"'

"$MGPU" attention --arch sm_90a --heads 2 --seq-q 130 --seq-kv 200 --head-dim 64 --device emulate --trials 2 --db "$T/e.db" > "$T/out" 2>&1; rc=$?
check "emulate resumed with nothing left to do: exit 0, nothing run" '[ $rc = 0 ] && grep -q "0 trials this run, 2 from earlier runs" "$T/out"'

# A stop while a trial runs: that trial is not recorded (the signal broke it, not the config).
S="--arch sm_90a --heads 2 --seq-q 700 --seq-kv 900 --head-dim 128 --device emulate --trials 3 --db $T/s.db"
"$MGPU" attention $S > "$T/out" 2>&1 & pid=$!
for _ in $(seq 600); do grep -q '^\[1/' "$T/out" && break; sleep 0.1; done
kill -INT $pid; wait $pid; rc=$?
check "a stop mid-trial: exit 130, the broken trial not stored" \
  '[ $rc = 130 ] && [ "$(q "$T/s.db" "SELECT count(*) FROM trials WHERE status != '"'ok'"'")" = 0 ] && ! grep -q "fault" "$T/out"'

cp "$T/a.db" "$T/before.db"
for bad in "--seq-q 0" "--head-dim 96" "--dtype f32" "--heads 6 --kv-heads 4" "--seq-q 1x"; do
  "$MGPU" attention --arch sm_90a $bad --device model --db "$T/a.db" > "$T/out" 2>&1; rc=$?
  check "bad problem ($bad): exit 2, named" '[ $rc = 2 ] && grep -q "error:" "$T/out"'
done
"$MGPU" attention --arch sm_90a --device emulat --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "an unknown device: exit 2, named" '[ $rc = 2 ] && grep -q "unknown device .emulat." "$T/out"'
"$MGPU" verify attention --arch sm_90a --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "verify without --config or --all: exit 2" '[ $rc = 2 ] && grep -q "exactly one of --config JSON and --all" "$T/out"'
"$MGPU" verify attention --arch sm_90a --all --batch 70000 --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "verify --all where no config is valid: exit 2, not a pass on nothing" '[ $rc = 2 ] && grep -q "nothing to verify" "$T/out"'
"$MGPU" attention --arch sm_100a --device model --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "a target the op has no template for: exit 2" '[ $rc = 2 ] && grep -q "only sm_90a" "$T/out"'
check "bad input left the database as it was" 'cmp -s "$T/a.db" "$T/before.db"'
exit $((fails > 0))
