#!/usr/bin/env bash
# Bad inputs around T4 files (issue 20): `import --t4`, `export --format t4` and
# `matmul --device replay:FILE` given files that are not T4, damaged, empty, inconsistent, or
# outputs that would land on the database. Every case: exit 2, a message naming the problem, no
# crash, and the database and its folder unchanged.
# Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/t4_cases.sh
. "$(dirname "$0")/lib.sh"
REPLAY="matmul --arch sm_90a --strategy random --trials 3 --db t.db"

t4() {  # t4 FILE RESULTS-JSON [TIMEUNIT]: a T4 document with those results
  printf '{"schema_version": "1.0.0", "metadata": {"timeunit": "%s"}, "results": %s}\n' "${3:-miliseconds}" "$2" > "$W/$1"
}
ok_result() {  # ok_result X: one valid result with parameter x = X
  printf '{"configuration": {"x": %s}, "times": {"compilation": 10, "runtimes": [1, 2, 3]}, "invalidity": "correct", "correctness": 1}' "$1"
}
fixture_t4() { fixture_good; t4 r.json "[$(ok_result 1), $(ok_result 2)]"; }
fixture_t4_text() { fixture_good; echo "x,y,time" > "$W/r.json"; }
fixture_t4_empty() { fixture_good; t4 r.json "[]"; }
fixture_t4_no_config() { fixture_good; t4 r.json '[{"times": {"runtimes": [1]}}]'; }
fixture_t4_bad_runtime() { fixture_good; t4 r.json '[{"configuration": {"x": 1}, "times": {"runtimes": [1, "fast"]}}]'; }
fixture_t4_bad_unit() { fixture_good; t4 r.json "[$(ok_result 1)]" fortnights; }
fixture_t4_no_time() { fixture_good; t4 r.json '[{"configuration": {"x": 1}, "times": {"compilation": 1}, "invalidity": "correct"}]'; }
fixture_t4_twice() { fixture_good; t4 r.json "[$(ok_result 1), $(ok_result 1)]"; }
fixture_t4_mixed() {
  fixture_good
  t4 r.json "[$(ok_result 1), {\"configuration\": {\"y\": 2}, \"times\": {\"runtimes\": [1]}}]"
}
fixture_t4_truncated_gz() {
  fixture_good
  t4 full.json "[$(ok_result 1), $(ok_result 2), $(ok_result 3)]"
  gzip -c "$W/full.json" | head -c 40 > "$W/r.json.gz"
  rm "$W/full.json"
}
fixture_t4_imported_twice() {
  fixture_t4
  "$MGPU" import --t4 "$W/r.json" --db "$W/t.db" --kernel a --device d > /dev/null
  "$MGPU" import --t4 "$W/r.json" --db "$W/t.db" --kernel b --device d > /dev/null
}

bad import_not_json 2 "r.json is not a T4 file: not a JSON object" --fixture t4_text -- import --t4 r.json --db t.db
bad import_missing_file 2 "cannot read T4 file nowhere.json" --fixture good -- import --t4 nowhere.json --db t.db
bad import_no_results 2 "r.json has no results" --fixture t4_empty -- import --t4 r.json --db t.db
bad import_no_configuration 2 "result 0: no \"configuration\" object" --fixture t4_no_config -- import --t4 r.json --db t.db
bad import_runtime_not_number 2 "runtime: \"fast\" is not a number" --fixture t4_bad_runtime -- import --t4 r.json --db t.db
bad import_unknown_time_unit 2 "unknown time unit 'fortnights'" --fixture t4_bad_unit -- import --t4 r.json --db t.db
bad import_valid_without_time 2 "a valid result without runtimes or a time measurement" --fixture t4_no_time -- import --t4 r.json --db t.db
bad import_truncated_gzip 2 "r.json.gz (is not readable|is not a T4 file)" --fixture t4_truncated_gz -- import --t4 r.json.gz --db t.db
bad replay_config_twice 2 "is recorded twice" --fixture t4_twice -- $REPLAY --device replay:r.json
bad replay_mixed_parameters 2 "does not have the parameters of" --fixture t4_mixed -- $REPLAY --device replay:r.json
bad replay_not_json 2 "not a JSON object" --fixture t4_text -- $REPLAY --device replay:r.json
bad export_t4_nothing_measured 2 "has no trials to export" --fixture good -- export --db t.db --format t4 -o out.json
bad export_t4_two_studies 2 "holds one study and .* has 2: 'a/t4/d' \\(2 configs\\), 'b/t4/d' \\(2 configs\\); pick one with --study" \
  --fixture t4_imported_twice -- export --db t.db --format t4 -o out.json
bad export_t4_unknown_study 2 "has no trials of study 'c/t4/d'" --fixture t4_imported_twice -- export --db t.db --format t4 -o out.json --study c/t4/d
bad export_t4_onto_database 2 "t.db" --fixture t4_imported_twice -- export --db t.db --format t4 -o t.db --study a/t4/d
bad export_t4_with_shapes 2 "--shapes goes with --format json or cpp" --fixture good -- export --db t.db --format t4 -o out.json --shapes llama3-8b
finish
