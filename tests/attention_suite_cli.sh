#!/usr/bin/env bash
# `mgpu-tune attention --shapes FILE|NAME` (harness/op/op_suite.h): a suite of attention problems
# tuned in turn with one set of options -- CSV and JSON files whose columns are the problem
# flags ('-' or '_'), a problem flag on the command line filling what rows leave out, switch
# cells, duplicates dropped, the built-in suites; a second run resumes (nothing measured twice);
# bad suites are exit 2, named by file and line, before any database is written.
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
  '[ $rc = 0 ] && grep -q "^suite s: 3 problems, 3 tuned (1 duplicates dropped)" "$T/out"'
check "csv: each problem its own row, as the rows and the flag say" \
  '[ "$(q "$T/a.db" "SELECT group_concat(key, '"' '"') FROM (SELECT DISTINCT p.key FROM trials t JOIN problems p ON p.id = t.problem_id WHERE t.source = '"'model'"' ORDER BY p.key)")" = "b1_h2_kvh2_sq300_skv500_d64_bf16_causal b1_h2_kvh2_sq300_skv500_d64_bf16_noncausal b1_h4_kvh4_sq256_skv256_d64_bf16_causal" ]'
"$MGPU" attention --arch sm_90a --head-dim 64 --shapes "$T/s.csv" --device model --trials 1 --db "$T/a.db" > "$T/out" 2>&1; rc=$?
check "a second run resumes: nothing measured twice" \
  '[ $rc = 0 ] && [ "$(grep -c "0 trials this run, 1 from earlier runs" "$T/out")" = 3 ]'
# A switch the command line sets is turned off by a row that says false.
"$MGPU" attention --arch sm_90a --causal --head-dim 64 --shapes "$T/s.csv" --device model --trials 1 --db "$T/c.db" --json > "$T/out" 2>&1; rc=$?
check "json output: one document, the suite and each problem's report; a row's false beats --causal" \
  '[ $rc = 0 ] && [ "$("$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print(j[\"suite\"], j[\"problems\"], j[\"tuned\"], [r[\"problem\"].endswith(\"noncausal\") for r in j[\"reports\"]])" "$T/out")" = "s 3 3 [True, False, False]" ]'

printf '{"name": "mine", "problems": [{"heads": 2, "seq_q": 300, "seq_kv": 500, "causal": true}, {"heads": 2, "seq-q": 130, "head_dim": 64}]}' > "$T/j.json"
"$MGPU" attention --arch sm_90a --shapes "$T/j.json" --device model --trials 1 --db "$T/j.db" > "$T/out" 2>&1; rc=$?
check "json file: its name, both problems" '[ $rc = 0 ] && grep -q "^suite mine: 2 problems, 2 tuned" "$T/out"'

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
bad unknown_name "'bogus' is no attention suite (built in: fa3, llama3-8b-prefill)" '' bogus
exit $((fails > 0))
