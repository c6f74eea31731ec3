#!/usr/bin/env bash
# `mgpu-tune attention --shapes FILE|NAME` (harness/op/op_suite.h): a suite of attention problems
# tuned in turn with one set of options -- CSV and JSON files whose columns are the problem
# flags ('-' or '_'), a problem flag on the command line filling what rows leave out, switch
# cells, duplicates dropped, the built-in suites; a second run resumes (nothing measured twice);
# bad suites are exit 2, named by file and line, before any database is written. Campaigns of
# attention tasks: planned from a suite or keys, run by run-task into shards, their status.
set -uo pipefail
MGPU="${MGPU:?}"
T="$(mktemp -d /tmp/mgpu-attention-suite.XXXXXX)"; trap 'rm -rf "$T"' EXIT
export MGPU_CACHE_DIR="$T/cache"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); sed 's/^/  | /' "$T/out" | tail -8; fi; }
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
q() { "$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }

printf '\xEF\xBB\xBFheads,seq_q,seq-kv,causal,note\r\n2,300,500,0,small\r\n# a comment\n\n2,300,500,true,\n4,256,,1,self\n2,300,500,false,again\n' > "$T/s.csv"
"$MGPU" attention --arch sm_90a --head-dim 64 --shapes "$T/s.csv" --device model --trials 1 --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "csv: three problems tuned (a duplicate dropped), --head-dim filling the rows" \
  '[ $rc = 0 ] && grep -q "^suite s: 3 problems, 3 tuned (1 duplicates dropped) (1 line beginning with .#. skipped as a comment: .*s.csv line 3)" "$T/out"'
check "csv: each problem its own row, as the rows and the flag say" \
  '[ "$(q "$T/a.db" "SELECT group_concat(key, '"' '"') FROM (SELECT DISTINCT p.key FROM trials t JOIN problems p ON p.id = t.problem_id WHERE t.source = '"'model'"' ORDER BY p.key)")" = "b1_h2_kvh2_sq300_skv500_d64_bf16_causal b1_h2_kvh2_sq300_skv500_d64_bf16_noncausal b1_h4_kvh4_sq256_skv256_d64_bf16_causal" ]'
"$MGPU" attention --arch sm_90a --head-dim 64 --shapes "$T/s.csv" --device model --trials 1 --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "a second run resumes: nothing measured twice" \
  '[ $rc = 0 ] && [ "$(grep -c "0 trials this run, 1 from earlier runs" "$T/out")" = 3 ]'
# A flag that every row gives fills nothing: refused, not dropped without a word (round 19, F46).
"$MGPU" attention --arch sm_90a --causal --head-dim 64 --shapes "$T/s.csv" --device model --trials 1 --db "$T/c.db" > "$T/out" 2>&1; rc=$?
check "--causal with a suite whose every row gives causal: exit 2, nothing written" \
  '[ $rc = 2 ] && grep -q "causal fills nothing: every problem of the suite s gives causal itself" "$T/out" && [ ! -e "$T/c.db" ]'
"$MGPU" attention --arch sm_90a --shapes fa3 --heads 4 --device model --trials 1 --db "$T/c.db" > "$T/out" 2>&1; rc=$?
check "--heads with fa3, whose rows give heads: exit 2" '[ $rc = 2 ] && grep -q "heads fills nothing: every problem of the suite fa3" "$T/out" && [ ! -e "$T/c.db" ]'
"$MGPU" attention --arch sm_90a --head-dim 64 --shapes "$T/s.csv" --device model --trials 1 --db "$T/c.db" --json > "$T/out" 2>&1; rc=$?
check "json output: one document, the suite and each problem's report" \
  '[ $rc = 0 ] && [ "$("$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print(j[\"suite\"], j[\"problems\"], j[\"tuned\"], [r[\"problem\"].endswith(\"noncausal\") for r in j[\"reports\"]])" "$T/out")" = "s 3 3 [True, False, False]" ]'

# export --op attention --shapes: each problem of the suite served as the header's lookup serves
# it -- exact, the nearest of the same head dim, or none (nullptr) for a head dim never tuned.
printf 'heads,seq_q,seq_kv,head_dim\n2,300,500,64\n2,600,500,64\n2,300,500,256\n' > "$T/e.csv"
"$MGPU" export --db "$T/a.db" --include-model --format json -o "$T/ex" --op attention --shapes "$T/e.csv" > "$T/out" 2>&1; rc=$?
check "export --op attention --shapes: exact, nearest, none" \
  '[ $rc = 0 ] && grep -q "suite e (3 shapes), attention_sm90 on model:H100 SXM: 1 exact, 1 nearest, 1 none (nullptr)" "$T/out" && [ "$("$PY" -c "import json,glob,sys; d=json.load(open(glob.glob(sys.argv[1]+\"/*attention_sm90.json\")[0])); print(*[v[\"how\"] for k, v in sorted(d[\"coverage\"][\"shapes\"].items())])" "$T/ex")" = "none exact nearest" ]'
"$MGPU" export --db "$T/a.db" --include-model --format cpp -o "$T/ex.h" --op attention --shapes fa3 > "$T/out" 2>&1; rc=$?
check "export --op attention --shapes fa3 (a built-in suite)" '[ $rc = 0 ] && grep -q "suite fa3 (36 shapes), attention_sm90 on sm_90a: 0 exact, [0-9]* nearest, [0-9]* none (nullptr)" "$T/out"'
"$MGPU" export --db "$T/a.db" --include-model --format json -o "$T/ex3" --op attention --shapes llama3-8b > "$T/out" 2>&1; rc=$?
check "export --op attention --shapes naming a matmul suite: exit 2, nothing written" \
  '[ $rc = 2 ] && grep -q "no attention suite" "$T/out" && [ ! -e "$T/ex3" ]'
"$MGPU" export --db "$T/a.db" --format cpp -o "$T/none.h" --op attention --shapes "$T/e.csv" > "$T/out" 2>&1; rc=$?
check "export --shapes with no entry of the op: said, every problem served none" \
  '[ $rc = 0 ] && grep -q "suite e (3 shapes): no attention entry was exported (predictions need --include-model), so none is served" "$T/out"'
"$MGPU" export --db "$T/a.db" --include-model --format json -o "$T/ex4" --op conv --shapes "$T/e.csv" > "$T/out" 2>&1; rc=$?
check "export --op of no op: exit 2, nothing written" '[ $rc = 2 ] && grep -q "there is no op .conv." "$T/out" && [ ! -e "$T/ex4" ]'
"$MGPU" export --db "$T/a.db" --include-model --format json -o "$T/ex5" --op attention > "$T/out" 2>&1; rc=$?
check "export --op without --shapes: exit 2" '[ $rc = 2 ] && grep -q "give --shapes too" "$T/out" && [ ! -e "$T/ex5" ]'

printf '{"name": "mine", "problems": [{"heads": 2, "seq_q": 300, "seq_kv": 500, "causal": true}, {"heads": 2, "seq-q": 130, "head_dim": 64}]}' > "$T/j.json"
"$MGPU" attention --arch sm_90a --shapes "$T/j.json" --device model --trials 1 --db "$T/j.db" > "$T/out" 2>&1; rc=$?
check "json file: its name, both problems" '[ $rc = 0 ] && grep -q "^suite mine: 2 problems, 2 tuned" "$T/out"'

# An empty cell leaves its column out: the command line's value (a switch's too), else the default.
printf 'heads,seq_q,seq_kv,causal\n2,300,,\n' > "$T/empty.csv"
"$MGPU" attention --arch sm_90a --causal --seq-kv 400 --shapes "$T/empty.csv" --device model --trials 1 --db "$T/e.db" > "$T/out" 2>&1; rc=$?
check "an empty cell takes the command line's value (--causal, --seq-kv)" \
  '[ $rc = 0 ] && grep -q "problem b1_h2_kvh2_sq300_skv400_d128_bf16_causal" "$T/out"'
printf '[{"seq_q": 300, "seq-q": 400}]' > "$T/twice.json"
"$MGPU" attention --arch sm_90a --shapes "$T/twice.json" --device model --db "$T/t.db" > "$T/out" 2>&1; rc=$?
check "a JSON row naming one flag twice (seq_q, seq-q): exit 2" '[ $rc = 2 ] && grep -q "name one flag (seq-q): give it once" "$T/out" && [ ! -e "$T/t.db" ]'
# A number is quoted as the file writes it (battery rounds 14 F7, 15 F5): 1E+2, -0.
printf '[{"heads": 2, "seq_q": 1E+2}, {"heads": 2, "seq_q": -0}]' > "$T/written.json"
"$MGPU" attention --arch sm_90a --shapes "$T/written.json" --device model --db "$T/w.db" > "$T/out" 2>&1; rc=$?
check "a JSON row's 1E+2: exit 2, quoted as written" '[ $rc = 2 ] && grep -q "problem #1: .seq_q. must be a whole number, text or true/false, got 1E+2" "$T/out" && [ ! -e "$T/w.db" ]'
printf '{"problems": [{"heads": 2, "seq_q": 100}, {"heads": 2, "seq_q": 1e2}]}' > "$T/second.json"
"$MGPU" attention --arch sm_90a --shapes "$T/second.json" --device model --db "$T/w.db" > "$T/out" 2>&1; rc=$?
check "the second row's 1e2 is quoted, not the first row's 100" '[ $rc = 2 ] && grep -q "problem #2: .seq_q. must be a whole number, text or true/false, got 1e2$" "$T/out" && [ ! -e "$T/w.db" ]'
printf '[{"heads": 2, "seq_q": -0}]' > "$T/minus0.json"
"$MGPU" attention --arch sm_90a --shapes "$T/minus0.json" --device model --db "$T/w.db" > "$T/out" 2>&1; rc=$?
check "a JSON row's -0: exit 2, quoted as written" '[ $rc = 2 ] && grep -q "problem #1: --seq-q must be a whole number from 1 to 2147483647, got .-0.$" "$T/out" && [ ! -e "$T/w.db" ]'
# A stop in the second problem: it is stopped partway (its trials committed), none left unreached.
printf 'heads,seq_q,seq_kv\n1,64,64\n2,700,900\n' > "$T/stop.csv"
"$MGPU" attention --arch sm_90a --shapes "$T/stop.csv" --device emulate --trials 4 --db "$T/s.db" > "$T/out" 2>&1 & pid=$!
for _ in $(seq 900); do grep -q "problem 2/2" "$T/out" && break; sleep 0.1; done
kill -INT $pid; wait $pid; rc=$?
check "a suite stopped in its second problem: exit 130, 1 tuned, 1 stopped partway, 0 not reached" \
  '[ $rc = 130 ] && grep -q "^suite stop: 2 problems, 1 tuned, 1 stopped partway ([0-9]* new trials committed), 0 not reached" "$T/out" && grep -q "interrupted: [0-9]* trials of this run committed" "$T/out"'

"$MGPU" attention --arch sm_90a --help > "$T/out" 2>&1
check "--help lists the built-in suites" 'grep -q "fa3: FlashAttention-3" "$T/out" && grep -q "llama3-8b-prefill" "$T/out"'

bad() {  # name, expected message, suite file contents (or a name)
  if [ -n "$3" ]; then printf '%b' "$3" > "$T/bad.csv"; spec="$T/bad.csv"; else spec="$4"; fi
  local says=$2
  "$MGPU" attention --arch sm_90a --shapes "$spec" --device model --db "$T/bad.db" > "$T/out" 2>&1; local rc=$?
  check "bad suite ($1): exit 2, named, nothing written" '[ $rc = 2 ] && grep -q "$says" "$T/out" && [ ! -e "$T/bad.db" ]'
}
bad unknown_column "bad.csv line 1: unknown column .tile_m." 'heads,tile_m\n2,64\n'
bad column_twice "the column .seq-q. is named twice" 'seq_q,seq-q\n2,3\n'
bad cell_count "bad.csv line 3: 1 cells where the header names 2 columns" 'heads,seq_q\n2,300\n4\n'
bad bad_value "bad.csv line 2: .*heads" 'heads,seq_q\nabc,300\n'
bad bad_switch "bad.csv line 2: causal is true or false" 'heads,causal\n2,maybe\n'
bad no_valid_config "bad.csv line 3: no config of attention_sm90 is valid" 'heads,seq_q\n2,300\n1,2147483647\n'
bad header_only "the problem suite .* is empty" 'heads,seq_q\n'
bad only_comments "is empty (1 line beginning with '#' skipped as a comment: .*bad.csv line 2)" 'name,heads\n#1 prefill,2\n'
bad unknown_name "'bogus' is no attention suite (built in: fa3, llama3-8b-prefill)" '' bogus
# --- campaigns of attention tasks (harness/campaign): planned from a suite or keys, each task
# run by run-task as `mgpu-tune attention` runs it, into its own shard ---
printf 'heads,seq_q,seq_kv\n2,300,500\n2,130,200\n' > "$T/c.csv"
"$MGPU" campaign plan --op attention --arch sm_90a --shapes "$T/c.csv" --device model --trials 2 --strategy model \
  -o "$T/camp.json" > "$T/out" 2>&1; rc=$?
check "campaign plan --op attention: one task per problem" \
  '[ $rc = 0 ] && grep -q "wrote .*camp.json: 2 tasks" "$T/out" && [ "$("$PY" -c "import json,sys; t=json.load(open(sys.argv[1]))[\"tasks\"]; print(t[0][\"op\"], t[1][\"problem\"])" "$T/camp.json")" = "attention b1_h2_kvh2_sq130_skv200_d128_bf16_noncausal" ]'
"$MGPU" campaign run-task "$T/camp.json" 1 > "$T/out" 2>&1; rc=$?
check "run-task: the attention task tuned into its shard, its exit recorded" \
  '[ $rc = 0 ] && grep -q "task 1 attention b1_h2_kvh2_sq130_skv200_d128_bf16_noncausal: 2 new trials" "$T/out" && [ "$(cat "$T/camp-shards/task-1.status")" = 0 ] && [ "$(q "$T/camp-shards/task-1.db" "SELECT count(*) FROM trials WHERE source = '"'model'"'")" = 2 ]'
"$MGPU" campaign status "$T/camp.json" > "$T/out" 2>&1; rc=$?
check "status: the done task and the one never submitted, by key" \
  '[ $rc = 0 ] && grep -q "task   1  done .*b1_h2_kvh2_sq130_skv200_d128_bf16_noncausal" "$T/out" && grep -q "task   0  not submitted" "$T/out"'
"$MGPU" campaign plan --op attention --arch sm_90a --problem b1_h4_kvh2_sq256_skv256_d64_bf16_causal --device model \
  -o "$T/keys.json" > "$T/out" 2>&1; rc=$?
check "campaign plan --op attention --problem KEY" '[ $rc = 0 ] && grep -q ": 1 tasks" "$T/out"'
# An emulate task holds its problem in the node's memory: submit asks Slurm for a node that has
# it (10 x 6.1 GiB of Q, K, V and O, plus 4 GiB for the tuner), a model task asks for nothing.
"$MGPU" campaign plan --op attention --arch sm_90a --problem b1_h32_kvh32_sq200000_skv200000_d128_bf16_noncausal \
  --device emulate -o "$T/big.json" > /dev/null 2>&1 && "$MGPU" campaign submit "$T/big.json" --partition p --dry-run > "$T/out" 2>&1; rc=$?
check "campaign submit of a big emulate task asks for its memory (--mem)" '[ $rc = 0 ] && grep -q "^#SBATCH --mem=66G$" "$T/out"'
"$MGPU" campaign submit "$T/keys.json" --partition p --dry-run > "$T/out" 2>&1; rc=$?
check "campaign submit of a model task asks for no memory" '[ $rc = 0 ] && ! grep -q -- "--mem" "$T/out"'
cbad() {  # name, expected message, plan arguments...
  local name=$1 says=$2; shift 2
  "$MGPU" campaign plan --arch sm_90a "$@" -o "$T/bad.json" > "$T/out" 2>&1; local rc=$?
  check "campaign plan ($name): exit 2, named, no file" '[ $rc = 2 ] && grep -q -- "$says" "$T/out" && [ ! -e "$T/bad.json" ]'
}
cbad matmul_flag "--m is a matmul's" --op attention --m 256 --shapes "$T/c.csv"
cbad time_budget "an attention task has no time budget" --op attention --time-budget 60 --shapes "$T/c.csv"
cbad no_problems "exactly one of --shapes SUITE and --problem KEY" --op attention
cbad bad_key "bad attention key" --op attention --problem m256_n256_k256_bf16_bf16_kn
cbad replay "device is auto, cuda, model or emulate" --op attention --device replay:x.db --shapes "$T/c.csv"
cbad no_op "there is no op 'conv'" --op conv --shapes "$T/c.csv"
cbad key_for_matmul "--problem KEY is for another op's tasks" --m 256 --n 256 --k 256 --problem x
"$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); d['tasks'][0]['op']='conv'; json.dump(d, open(sys.argv[2], 'w'))" "$T/camp.json" "$T/edited.json"
"$MGPU" campaign status "$T/edited.json" > "$T/out" 2>&1; rc=$?
check "a campaign file naming an op there is not: exit 2" '[ $rc = 2 ] && grep -q "\"op\" .conv. is no op" "$T/out"'
exit $((fails > 0))
