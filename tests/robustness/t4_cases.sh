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
t4v() {  # t4v FILE VERSION-JSON: a one-result T4 document of that schema_version ('' leaves it out)
  printf '{%s"results": [%s]}\n' "${2:+\"schema_version\": $2, }" "$(ok_result 1)" > "$W/$1"
}
fixture_t4_v2() { fixture_good; t4v r.json '"2.0.0"'; }
fixture_t4_v9() { fixture_good; t4v r.json '"9.1.0"'; }
fixture_t4_v_number() { fixture_good; t4v r.json 1; }
fixture_t4_v_words() { fixture_good; t4v r.json '"latest"'; }
fixture_t4_v_missing() { fixture_good; t4v r.json ''; }
fixture_t4_v12() { fixture_good; t4v r.json '"1.2.0"'; }
# gzip framing: what gunzip would say of the file comes before anything about its JSON.
fixture_t4_gz() { fixture_t4; gzip -nc "$W/r.json" > "$W/r.json.gz"; rm "$W/r.json"; }
fixture_t4_gz_garbage() { fixture_t4_gz; printf 'garbage' >> "$W/r.json.gz"; }
fixture_t4_gz_zeros() { fixture_t4_gz; head -c 512 /dev/zero >> "$W/r.json.gz"; }
fixture_t4_gz_plain() { fixture_t4; mv "$W/r.json" "$W/r.json.gz"; }
fixture_t4_gz_text() { fixture_good; echo "x,y,time" > "$W/r.json.gz"; }
fixture_t4_gz_empty() { fixture_good; : > "$W/r.json.gz"; }
fixture_t4_gz_bad_crc() {  # the CRC-32 in the trailer (8 bytes from the end) flipped
  fixture_t4_gz
  python3 -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[-8] ^= 0xff; open(sys.argv[1], 'wb').write(b)" "$W/r.json.gz"
}
fixture_t4_gz_bad_block() {  # the first deflate block's header made a reserved block type
  fixture_t4_gz
  python3 -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[10] |= 0x06; open(sys.argv[1], 'wb').write(b)" "$W/r.json.gz"
}
fixture_t4_gz_members() {  # two gzip members, as `cat a.gz b.gz` makes: one file to gunzip
  fixture_t4
  head -c 30 "$W/r.json" | gzip -c > "$W/r.json.gz"
  tail -c +31 "$W/r.json" | gzip -c >> "$W/r.json.gz"
  rm "$W/r.json"
}
# Gzip bombs: N MiB of blanks inside a valid document, then (optionally) the same blanks again
# as extra gzip members, which cost nothing to make.
bomb() {  # bomb FILE MIB MEMBERS
  python3 - "$W/$1" "$2" "${3:-0}" <<'EOF'
import sys, zlib
path, mib, members = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def gz(chunks):
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    return b"".join([c.compress(x) for x in chunks] + [c.flush()])
blanks = b" " * (1 << 20)
doc = [b'{"schema_version": "1.0.0", "results": '] + [blanks] * mib + [b'[{"configuration": {"x": 1}, "times": {"runtimes": [1]}}]}']
with open(path, "wb") as f:
    f.write(gz(doc))
    extra = gz([blanks] * 64)
    for _ in range(members): f.write(extra)
EOF
}
fixture_t4_bomb() { fixture_good; bomb r.json.gz 640; }
fixture_t4_bomb_over() { fixture_good; bomb r.json.gz 1 17; }
fixture_t4_deep() {
  fixture_good
  python3 -c "import sys; open(sys.argv[1], 'w').write('{\"schema_version\": \"1.0.0\", \"results\": [{\"configuration\": {\"x\": ' + '[' * 200000 + ']' * 200000 + '}}]}')" "$W/r.json"
}
fixture_t4_measurement_name() {
  fixture_good
  t4 r.json '[{"configuration": {"x": 1}, "times": {"runtimes": [1]}, "measurements": [{"name": 5, "value": 1}]}]'
}
fixture_t4_negative_runtime() { fixture_good; t4 r.json '[{"configuration": {"x": 1}, "times": {"runtimes": [1, -2]}}]'; }
fixture_t4_huge_runtime() { fixture_good; t4 r.json '[{"configuration": {"x": 1}, "times": {"runtimes": [1e308]}}]' seconds; }
fixture_t4_negative_time() {
  fixture_good
  t4 r.json '[{"configuration": {"x": 1}, "measurements": [{"name": "time", "value": -1}]}]'
}
fixture_t4_unit_number() { fixture_good; printf '{"schema_version": "1.0.0", "metadata": {"timeunit": 5}, "results": [%s]}' "$(ok_result 1)" > "$W/r.json"; }
fixture_t4_long_value() {
  fixture_good
  t4 r.json "[{\"configuration\": {\"x\": 1}, \"times\": {\"runtimes\": [\"$(head -c 100000 /dev/zero | tr '\0' x)\"]}}]"
}
# No database yet: a refused import must not leave a new, empty one behind.
fixture_t4_text_no_db() { echo "x,y,time" > "$W/r.json"; }
fixture_t4_unnamed_no_db() { t4 _d.json "[$(ok_result 1)]"; }  # the kernel name is the file's, up to its '_'

fixture_t4_imported_twice() {
  fixture_t4
  "$MGPU" import --t4 "$W/r.json" --db "$W/t.db" --kernel a --device d > /dev/null
  "$MGPU" import --t4 "$W/r.json" --db "$W/t.db" --kernel b --device d > /dev/null
}

bad import_not_json 2 "r.json is not a T4 file: not valid JSON \\(parse error at line 1, column 1" --fixture t4_text -- import --t4 r.json --db t.db
# Round 6: where the JSON breaks is said; "not a JSON object" is for JSON that is something else.
fixture_t4_nan() { fixture_good; printf '{"schema_version": "1.0.0",\n "results": [{"configuration": {"x": 1}, "times": {"runtimes": [NaN]}}]}' > "$W/r.json"; }
fixture_t4_cut() { fixture_good; printf '{"schema_version": "1.0.0", "results": [{"configuration"' > "$W/r.json"; }
fixture_t4_array() { fixture_good; echo '[{"configuration": {"x": 1}}]' > "$W/r.json"; }
bad import_nan_is_no_json 2 "r.json is not a T4 file: not valid JSON \\(parse error at line 2, column 64: .*invalid literal" --fixture t4_nan -- import --t4 r.json --db t.db
bad import_cut_json 2 "r.json is not a T4 file: not valid JSON \\(parse error at line 1, column 57: .*unexpected end of input" --fixture t4_cut -- import --t4 r.json --db t.db
bad import_json_array 2 "r.json is not a T4 file: not a JSON object" --fixture t4_array -- import --t4 r.json --db t.db
# Round 3: a byte that is not UTF-8 is said as such, with where it is (it is a JSON object).
fixture_t4_not_utf8() { fixture_good; printf '{"schema_version":"1.0.0","results":[{"configuration":{"x":"\xff"},"times":{"runtimes":[1]}}]}' > "$W/r.json"; }
bad import_not_utf8 2 "r.json is not a T4 file: invalid UTF-8 at byte offset 60 of its JSON text" --fixture t4_not_utf8 -- import --t4 r.json --db t.db
bad import_missing_file 2 "cannot read T4 file nowhere.json" --fixture good -- import --t4 nowhere.json --db t.db
bad import_no_results 2 "r.json has no results" --fixture t4_empty -- import --t4 r.json --db t.db
bad import_no_configuration 2 "result 0: no \"configuration\" object" --fixture t4_no_config -- import --t4 r.json --db t.db
# Round 20, F55: a parameter value that is no integer or string was stored changed (1.5 as the
# text "1.5", true as 1) and exported back so. Refused; 2.0 is the integer 2 (the twin).
fixture_t4_float_param() { fixture_good; t4 r.json "[$(ok_result 1.5)]"; }
fixture_t4_bool_param() { fixture_good; t4 r.json "[$(ok_result true)]"; }
fixture_t4_whole_float_param() { fixture_good; t4 r.json "[$(ok_result 2.0)]"; }
bad import_float_param 2 "the parameter value 1.5 is not a whole number: .*would store it changed .*nothing was imported" --fixture t4_float_param -- import --t4 r.json --db t.db
bad import_bool_param 2 "the parameter value true is a boolean: .*would store it changed \\(as 1\\)" --fixture t4_bool_param -- import --t4 r.json --db t.db
bad import_whole_float_param 0 "imported 1 trials" --fixture t4_whole_float_param --writes -- import --t4 r.json --db t.db
bad import_runtime_not_number 2 "runtime: \"fast\" is not a number" --fixture t4_bad_runtime -- import --t4 r.json --db t.db
bad import_unknown_time_unit 2 "unknown time unit 'fortnights'" --fixture t4_bad_unit -- import --t4 r.json --db t.db
bad import_valid_without_time 2 "a valid result without runtimes or a time measurement" --fixture t4_no_time -- import --t4 r.json --db t.db
bad import_truncated_gzip 2 "T4 file r.json.gz is a truncated gzip file" --fixture t4_truncated_gz -- import --t4 r.json.gz --db t.db
bad replay_truncated_gzip 2 "T4 file r.json.gz is a truncated gzip file" --fixture t4_truncated_gz -- $REPLAY --device replay:r.json.gz
bad import_gzip_trailing_garbage 2 "r.json.gz is a damaged gzip file: garbage follows its compressed data" \
  --fixture t4_gz_garbage -- import --t4 r.json.gz --db t.db
bad import_gzip_trailing_zeros 2 "r.json.gz is a damaged gzip file: garbage follows" --fixture t4_gz_zeros -- import --t4 r.json.gz --db t.db
bad import_gzip_bad_crc 2 "r.json.gz is a damaged gzip file: incorrect data check" --fixture t4_gz_bad_crc -- import --t4 r.json.gz --db t.db
bad import_gzip_bad_block 2 "r.json.gz is a damaged gzip file: invalid block type" --fixture t4_gz_bad_block -- import --t4 r.json.gz --db t.db
bad import_gz_not_gzip 2 "T4 file r.json.gz is not a gzip file" --fixture t4_gz_text -- import --t4 r.json.gz --db t.db
bad import_gz_plain_json 2 "T4 file r.json.gz is not a gzip file" --fixture t4_gz_plain -- import --t4 r.json.gz --db t.db
bad import_gz_empty 2 "T4 file r.json.gz is empty" --fixture t4_gz_empty -- import --t4 r.json.gz --db t.db
bad import_folder 2 "T4 file sub is a folder" --fixture good -- sh: 'mkdir sub && $MGPU import --t4 sub --db t.db; rc=$?; rmdir sub; exit $rc'
bad import_gzip_members 0 "imported 2 trials" --fixture t4_gz_members --writes -- import --t4 r.json.gz --db t.db --kernel k --device d
# 640 MiB of blanks in a 3 MB file: read as it decompresses, it fits in 1 GB of address space
# (reading it whole took 1.8 GB); past 1 GiB of text the file is refused.
bad import_gzip_bomb_streams 0 "imported 1 trials" --fixture t4_bomb --writes -- \
  sh: 'ulimit -v 1000000 && $MGPU import --t4 r.json.gz --db t.db --kernel k --device d'
bad import_gzip_bomb_refused 2 "r.json.gz holds more than 1 GiB of text once decompressed" --fixture t4_bomb_over -- \
  sh: 'ulimit -v 1000000 && $MGPU import --t4 r.json.gz --db t.db --kernel k --device d'
bad import_schema_2 2 "r.json has schema_version 2.0.0: this reader supports T4 schema 1.x only" --fixture t4_v2 -- import --t4 r.json --db t.db
bad import_schema_9 2 "has schema_version 9.1.0: this reader supports T4 schema 1.x" --fixture t4_v9 -- import --t4 r.json --db t.db
bad import_schema_number 2 "schema_version 1 is no version \(a string like \"1.0.0\"\)" --fixture t4_v_number -- import --t4 r.json --db t.db
bad import_schema_words 2 "schema_version \"latest\" is no version" --fixture t4_v_words -- import --t4 r.json --db t.db
bad import_schema_missing 2 "r.json is not a T4 file: no \"schema_version\"" --fixture t4_v_missing -- import --t4 r.json --db t.db
bad import_schema_1_2 0 "imported 1 trials" --fixture t4_v12 --writes -- import --t4 r.json --db t.db --kernel k --device d
# Round 19, F48: the summary names the landscape replayed, not the default matmul problem.
bad replay_summary_names_the_landscape 0 "^t4:r on replay:r.json: [0-9]+ new trials" --fixture t4 --writes -- $REPLAY --device replay:r.json
# Round 19, F29: a number beyond a double is bad input, said as such.
fixture_t4_huge() { fixture_good; t4 r.json '[{"configuration": {"x": 1}, "times": {"runtimes": [1e999]}, "invalidity": "correct"}]'; }
bad replay_number_beyond_a_double 2 "not valid JSON \\(number overflow parsing '1e999' \\(a number beyond a double's range\\)\\)" --fixture t4_huge -- $REPLAY --device replay:r.json
bad replay_schema_2 2 "has schema_version 2.0.0: this reader supports T4 schema 1.x only" --fixture t4_v2 -- $REPLAY --device replay:r.json
bad import_deeply_nested 2 "r.json is not a T4 file: nested more than 64 levels deep" --fixture t4_deep -- import --t4 r.json --db t.db
bad import_measurement_name_number 0 "imported 1 trials" --fixture t4_measurement_name --writes -- import --t4 r.json --db t.db --kernel k --device d
bad import_negative_runtime 2 "result 0 runtime: -2 is not a time \(a finite number, above 0\)" --fixture t4_negative_runtime -- import --t4 r.json --db t.db
bad import_overflowing_runtime 2 "runtime: 1e\+308 is not a time" --fixture t4_huge_runtime -- import --t4 r.json --db t.db
bad import_negative_time_measurement 2 "time measurement: -1 is not a time" --fixture t4_negative_time -- import --t4 r.json --db t.db
bad import_time_unit_number 2 "the time unit 5 is not a name" --fixture t4_unit_number -- import --t4 r.json --db t.db
bad import_long_value_message_is_short 2 "^mgpu-tune: error: .{1,200}\.\.\. is not a number$" --fixture t4_long_value -- import --t4 r.json --db t.db
bad import_refused_creates_no_database 2 "r.json is not a T4 file: not valid JSON" --fixture t4_text_no_db -- \
  import --t4 r.json --db new.db
bad import_unnamed_creates_no_database 2 "import --t4 needs a kernel, a problem and a device name" --fixture t4_unnamed_no_db -- \
  import --t4 _d.json --db new.db
bad replay_config_twice 2 "is recorded twice" --fixture t4_twice -- $REPLAY --device replay:r.json
bad replay_mixed_parameters 2 "does not have the parameters of" --fixture t4_mixed -- $REPLAY --device replay:r.json
bad replay_not_json 2 "not valid JSON" --fixture t4_text -- $REPLAY --device replay:r.json
bad export_t4_nothing_measured 2 "has no trials to export" --fixture good -- export --db t.db --format t4 -o out.json
bad export_t4_two_studies 2 "holds one study and .* has 2: 'a/t4/d' \\(2 configs\\), 'b/t4/d' \\(2 configs\\); pick one with --study" \
  --fixture t4_imported_twice -- export --db t.db --format t4 -o out.json
bad export_t4_unknown_study 2 "has no trials of study 'c/t4/d'" --fixture t4_imported_twice -- export --db t.db --format t4 -o out.json --study c/t4/d
bad export_t4_onto_database 2 "t.db" --fixture t4_imported_twice -- export --db t.db --format t4 -o t.db --study a/t4/d
bad export_t4_with_shapes 2 "--shapes goes with --format json or cpp" --fixture good -- export --db t.db --format t4 -o out.json --shapes llama3-8b

# --- import: one transaction, idempotent; configs filed under our templates; values kept as they are ---
fixture_t4_big() {  # 10000 results: long enough to stop half-way (one commit per row took 25 s)
  fixture_good
  python3 -c "import json, sys; json.dump({'schema_version': '1.0.0', 'results': [{'configuration': {'x': i}, 'times': {'runtimes': [1, 2]}} for i in range(10000)]}, open(sys.argv[1], 'w'))" "$W/r.json"
}
COUNT_TRIALS="python3 -c \"import sqlite3; print(sqlite3.connect('t.db').execute(\\\"SELECT count(*) FROM trials t JOIN runs r ON r.id = t.run_id WHERE t.source = 'imported'\\\").fetchone()[0])\""
# Round 8 (F9): a stop used to wait for the whole import (33 s for 200,000 results) and commit it;
# it rolls the one transaction back at the next result.
bad import_stopped_is_all_or_nothing 0 "^rc=143 rows=0 mgpu-tune: stopped by SIGTERM (during the import, which was rolled back|while the file was read): nothing was imported$" \
  --fixture t4_big --writes -- \
  sh: '$MGPU import --t4 r.json --db t.db --kernel k --device d > /dev/null 2> err.txt & p=$!; sleep 0.3; kill -TERM $p; wait $p; rc=$?; echo "rc=$rc rows=$('"$COUNT_TRIALS"') $(cat err.txt)"'
bad import_twice_adds_nothing 0 "^imported 0 trials of k on d into t.db \(2 already there, skipped\) rows=2$" \
  --fixture t4 --writes -- \
  sh: '$MGPU import --t4 r.json --db t.db --kernel k --device d > /dev/null && echo "$($MGPU import --t4 r.json --db t.db --kernel k --device d) rows=$('"$COUNT_TRIALS"')"'
bad import_foreign_params_into_template 2 "T4 file r.json, result 0: parameter 'x' is not one of matmul_sm90's" --fixture t4 -- \
  import --t4 r.json --db t.db --kernel matmul_sm90 --problem m256_n256_k256_bf16_bf16_kn --device 'model:H100 SXM'
# Round 19, F39: an export that leaves out imported trials says so, and which flag brings them in.
bad export_csv_of_imported_says_why_none 0 "wrote 0 trials to c.csv \\(it holds .*[0-9]+ imported.*which --include-model adds" --fixture t4 --writes -- \
  sh: "'$MGPU' import --t4 r.json --db t.db --kernel conv --problem p --device d > /dev/null && '$MGPU' export --db t.db --format csv -o c.csv"
# Round 19, F45: the problem and device are one printable line (they go into tables).
bad import_problem_with_a_newline 2 "--problem must be one line of at most 200 printable characters" --fixture t4 -- \
  import --t4 r.json --db t.db --kernel conv --problem $'a\nb' --device d
bad import_device_with_a_tab 2 "--device must be one line of at most 200 printable characters" --fixture t4 -- \
  import --t4 r.json --db t.db --kernel conv --problem p --device $'A\t100'
bad import_template_needs_its_problem 2 "--kernel matmul_sm90 is one of our templates: give the problem its results belong to with --problem KEY" --fixture t4 -- \
  import --t4 r.json --db t.db --kernel matmul_sm90 --device 'model:H100 SXM'
# Round 8 (F11): names and types alone let a config the template cannot have (tile_m -5 or 7) in.
fixture_t4_bad_tile() {
  fixture_good
  "$MGPU" space matmul --arch sm_90a --m 256 --n 256 --k 256 --json | python3 -c "
import json, sys
c = json.load(sys.stdin)['default_config']; c['tile_m'] = 7
json.dump({'schema_version': '1.0.0', 'results': [{'configuration': c, 'times': {'runtimes': [1]}}]}, open(sys.argv[1], 'w'))" "$W/r.json"
}
bad import_config_the_template_cannot_have 2 "T4 file r.json, result 0: not a config of matmul_sm90 at m256_n256_k256_bf16_bf16_kn: " \
  --fixture t4_bad_tile -- import --t4 r.json --db t.db --kernel matmul_sm90 --problem m256_n256_k256_bf16_bf16_kn --device d
bad import_template_problem_out_of_range 2 "--problem m0_n256_k256_bf16_bf16_kn is not a problem of matmul_sm90: --m must be" \
  --fixture t4 -- import --t4 r.json --db t.db --kernel matmul_sm90 --problem m0_n256_k256_bf16_bf16_kn --device d
fixture_t4_huge_int() { fixture_good; t4 r.json "[$(ok_result 1), $(ok_result 1180591620717411303424)]"; }
bad import_integer_beyond_int64 2 "T4 file r.json, result 1: parameter x is 1.1805916207174113e\+21, an integer beyond the 64-bit range" \
  --fixture t4_huge_int -- import --t4 r.json --db t.db --kernel k --device d
fixture_t4_zero_runtime() { fixture_good; t4 r.json '[{"configuration": {"x": 1}, "times": {"runtimes": [0, 1, 2]}}]'; }
bad import_zero_runtime 2 "result 0 runtime: 0 is not a time \\(a finite number, above 0\\)" --fixture t4_zero_runtime -- \
  import --t4 r.json --db t.db --kernel k --device d
# A landscape of another kernel cannot be declared in the C++ header ('::k_good' has not been declared).
fixture_landscape_only() { t4 good.json "[$(ok_result 1)]"; "$MGPU" import --t4 "$W/good.json" --db "$W/t.db" > /dev/null; }
bad export_cpp_landscape_only 2 "t.db holds no results of a template the C\+\+ header declares, only of good \(1 rows\)" \
  --fixture landscape_only -- export --db t.db --format cpp -o ci.h --all-versions --include-model
fixture_landscape_and_tuned() { fixture_good; t4 good.json "[$(ok_result 1)]"; "$MGPU" import --t4 "$W/good.json" --db "$W/t.db" > /dev/null; }
bad export_cpp_leaves_out_landscapes 0 "^compiles, leaving out //   good: 1 rows$" --fixture landscape_and_tuned --writes -- \
  sh: '$MGPU export --db t.db --format cpp -o ci.h --all-versions --include-model && printf "#include \"ci.h\"\nint main() {}\n" > use.cc && ${CXX:-c++} -std=c++17 -fsyntax-only use.cc && echo "compiles, leaving out $(grep "good: 1 rows" ci.h)"'

# A key given twice: nlohmann kept the last one without a word (which value was measured?).
fixture_t4_version_twice() {
  fixture_good; printf '{"schema_version": "1.0.0", "results": [%s], "schema_version": "1.0.0"}\n' "$(ok_result 1)" > "$W/r.json"
}
fixture_t4_parameter_twice() {
  fixture_good
  t4 r.json '[{"configuration": {"x": 1, "x": 2}, "times": {"runtimes": [1]}, "invalidity": "correct", "correctness": 1}]'
}
fixture_t4_times_twice() {
  fixture_good
  t4 r.json '[{"configuration": {"x": 1}, "times": {"runtimes": [1]}, "invalidity": "correct", "times": {"runtimes": [9]}}]'
}
fixture_t4_parameter_twice_gz() { fixture_t4_parameter_twice; gzip -nc "$W/r.json" > "$W/r.json.gz"; rm "$W/r.json"; }
# The same key in different objects (every result has "configuration" and "x") is no repeat.
fixture_t4_keys_in_two_results() { fixture_good; t4 r.json "[$(ok_result 1), $(ok_result 2)]"; }
bad import_schema_version_twice 2 "r.json: the key \"schema_version\" is given twice in one object" --fixture t4_version_twice -- \
  import --t4 r.json --db t.db
bad import_parameter_twice 2 "r.json: the key \"x\" is given twice in one object" --fixture t4_parameter_twice -- import --t4 r.json --db t.db
bad import_times_twice 2 "r.json: the key \"times\" is given twice" --fixture t4_times_twice -- import --t4 r.json --db t.db
bad import_parameter_twice_gz 2 "r.json.gz: the key \"x\" is given twice" --fixture t4_parameter_twice_gz -- import --t4 r.json.gz --db t.db
bad replay_parameter_twice 2 "r.json: the key \"x\" is given twice" --fixture t4_parameter_twice -- $REPLAY --device replay:r.json
bad import_keys_in_two_results 0 "imported 2 trials" --fixture t4_keys_in_two_results --writes -- import --t4 r.json --db t.db --kernel k --device d
# --- round 4: virtual-device verifications (source emulate: ok, no time) are no T4 study: never
# offered, never exported as a "measurement" read from nothing (L03, L06: 6.95e-310, a heap
# pointer's bits, written as the time and then imported as an ok trial) ---
fixture_good_emulated() {
  fixture_good
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE trials SET source = '"'emulate'"', median_ms = NULL, min_ms = NULL, mean_ms = NULL, noise = NULL"); c.commit()' "$W/t.db"
}
fixture_good_plus_emulated() {  # the model rows, and each again as a virtual-device verification
  fixture_good
  python3 - "$W/t.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
env = c.execute("INSERT INTO environments(device_name, arch, compute_capability, sm_count, driver_version, cuda_version, sm_clock_mhz) SELECT 'mgpu-tune virtual sm_90a (emulated)', arch, compute_capability, sm_count, driver_version, cuda_version, sm_clock_mhz FROM environments LIMIT 1").lastrowid
cols = [r[1] for r in c.execute("PRAGMA table_info(trials)") if r[1] not in ("id", "uuid", "environment_id", "source", "median_ms", "min_ms", "mean_ms", "noise")]
c.execute(f"INSERT INTO trials(uuid, environment_id, source, {', '.join(cols)}) SELECT lower(hex(randomblob(16))), {env}, 'emulate', {', '.join(cols)} FROM trials")
c.commit()
PY
}
bad export_t4_emulate_rows_only 2 "t\.db has no trials to export \(4 virtual-device verifications, which hold no times\)" --fixture good_emulated -- \
  export --db t.db --format t4 -o x.json
bad export_t4_emulate_study_refused 2 "t\.db has no trials of study 'matmul_sm90/m256_n256_k256_bf16_bf16_kn/mgpu-tune virtual sm_90a \(emulated\)'" \
  --fixture good_plus_emulated -- export --db t.db --format t4 --study 'matmul_sm90/m256_n256_k256_bf16_bf16_kn/mgpu-tune virtual sm_90a (emulated)' -o x.json
# Predictions never leave in a T4 file: it cannot label them, and its readers (our import
# included) would take them for measurements (round 9, F10).
bad export_t4_include_model_refused 2 "--include-model goes with --format json, cpp or csv: a T4 file holds measurements" \
  --fixture good_plus_emulated -- export --db t.db --format t4 --include-model -o x.json
bad export_t4_predictions_said_so 2 "t\.db has no trials to export \(4 predictions, which T4 cannot label: export them with --format json or csv; 4 virtual-device verifications" \
  --fixture good_plus_emulated -- export --db t.db --format t4 -o x.json
# --- round 4: an import into a new database that fails (file-size limit) leaves nothing (E15) ---
fixture_t4_big() {
  python3 -c 'import json; json.dump({"schema_version": "1.0.0", "results": [{"configuration": {"x": i, "pad": "p" * 200}, "times": {"runtimes": [1.0 + i]}} for i in range(3000)]}, open("'"$W"'/big.json", "w"))'
}
bad import_new_db_efbig_leaves_nothing 1 "error: (I/O error on|the disk holding) n\.db" --fixture t4_big -- \
  sh: "trap '' XFSZ; ulimit -f 200; '$MGPU' import --t4 big.json --kernel k --device d --db n.db"
# A subnormal runtime (5e-324 ms) was imported and shown as "inf TFLOP/s": below 1e-9 ms is no time.
fixture_t4_denorm() { fixture_good; t4 r.json '[{"configuration": {"x": 1}, "times": {"runtimes": [5e-324]}, "invalidity": "correct"}]'; }
bad import_denormal_runtime 2 "result 0 runtime: 5e-324 is not a time: .* below 1e-09 ms" --fixture t4_denorm -- import --t4 r.json --db t.db
# A T4 document through a pipe or FIFO is refused by name, as every input file is (was "not a JSON object").
bad import_t4_from_pipe 2 "T4 file /dev/stdin is a FIFO \(named pipe\), not a file" --fixture t4 -- sh: "cat r.json | '$MGPU' import --t4 /dev/stdin --db t.db"
# Round 6 (IM11): a FIFO no program writes blocked open() forever; it is refused before opening.
bad import_t4_fifo_no_writer 2 "T4 file f is a FIFO \(named pipe\), not a file.*nothing left" --writes -- sh: \
  "mkfifo f && timeout -k 2 20 '$MGPU' import --t4 f --db t.db 2>&1 | tr -d '\n'; r=\${PIPESTATUS[0]}; test -e t.db || echo ' nothing left'; exit \$r"

# Round 7 (F5): a measurement's own "unit" was ignored: 2.1 "ms" in a file of seconds was stored
# as 2100 ms, and 0.0021 "s" in a file without metadata as 0.0021 ms. Its unit is honoured, the
# file's is the default for a measurement naming none, and an unknown one is refused.
measured() {  # measured FILE METADATA MEASUREMENT: one valid result whose time is that measurement
  printf '{"schema_version": "1.0.0", %s"results": [{"configuration": {"bx": 32}, "times": {"compilation": 0.5}, "invalidity": "correct", "correctness": 1, "measurements": [%s]}]}\n' \
    "$2" "$3" > "$W/$1"
}
fixture_t4_unit_ms_in_seconds() { measured u.json '"metadata": {"timeunit": "seconds"}, ' '{"name": "time", "value": 2.1, "unit": "ms"}'; }
fixture_t4_unit_default_seconds() { measured u.json '"metadata": {"timeunit": "seconds"}, ' '{"name": "time", "value": 0.0021}'; }
fixture_t4_unit_s_no_metadata() { measured u.json '' '{"name": "time", "value": 0.0021, "unit": "s"}'; }
fixture_t4_unit_ns() { measured u.json '' '{"name": "time", "value": 2100000, "unit": "ns"}'; }
fixture_t4_unit_unknown() { fixture_good; measured u.json '"metadata": {"timeunit": "seconds"}, ' '{"name": "time", "value": 2.1, "unit": "fortnights"}'; }
fixture_t4_unit_not_name() { fixture_good; measured u.json '' '{"name": "time", "value": 2.1, "unit": 1000}'; }
MEDIAN="python3 -c \"import sqlite3; print('median_ms=%g' % sqlite3.connect('u.db').execute('SELECT median_ms FROM trials').fetchone()[0])\""
bad import_measurement_unit_ms_in_seconds_file 0 "^median_ms=2\.1$" --fixture t4_unit_ms_in_seconds --writes -- \
  sh: '$MGPU import --t4 u.json --db u.db --kernel k --device d > /dev/null && '"$MEDIAN"
bad import_measurement_without_unit_takes_files 0 "^median_ms=2\.1$" --fixture t4_unit_default_seconds --writes -- \
  sh: '$MGPU import --t4 u.json --db u.db --kernel k --device d > /dev/null && '"$MEDIAN"
bad import_measurement_unit_s_without_metadata 0 "^median_ms=2\.1$" --fixture t4_unit_s_no_metadata --writes -- \
  sh: '$MGPU import --t4 u.json --db u.db --kernel k --device d > /dev/null && '"$MEDIAN"
bad import_measurement_unit_ns 0 "^median_ms=2\.1$" --fixture t4_unit_ns --writes -- \
  sh: '$MGPU import --t4 u.json --db u.db --kernel k --device d > /dev/null && '"$MEDIAN"
bad import_measurement_unit_unknown 2 "T4 file u\.json, result 0 time measurement: unknown time unit \"fortnights\" \(s, ms, us or ns\)" \
  --fixture t4_unit_unknown -- import --t4 u.json --db t.db --kernel k --device d
bad import_measurement_unit_not_a_name 2 "T4 file u\.json, result 0 time measurement: the unit 1000 is not a name" \
  --fixture t4_unit_not_name -- import --t4 u.json --db t.db --kernel k --device d

# Round 8 (F12): two "time" measurements kept the last without a word; a time given as text was
# reported as no time at all.
fixture_t4_two_times() { fixture_good; measured u.json '' '{"name": "time", "value": 2.1, "unit": "ms"}, {"name": "time", "value": 3.0, "unit": "ms"}'; }
fixture_t4_time_text() { fixture_good; measured u.json '' '{"name": "time", "value": "2.1", "unit": "ms"}'; }
bad import_two_time_measurements 2 "T4 file u\.json, result 0: two \"time\" measurements: which one is meant\?" \
  --fixture t4_two_times -- import --t4 u.json --db t.db --kernel k --device d
bad import_time_measurement_as_text 2 "T4 file u\.json, result 0: the time measurement's value \"2\.1\" is not a number" \
  --fixture t4_time_text -- import --t4 u.json --db t.db --kernel k --device d

# A status T4 holds comes back from its own export: a wrong result is "correct" with correctness
# 0, which import reads as one (it came back as a launch error: battery round 16, F5); a timeout,
# which T4 has no word for, is written as a runtime failure and the export says so.
fixture_t4_statuses() {
  fixture_t4
  t4 r.json "[$(ok_result 1), $(ok_result 2), $(ok_result 3)]"
  "$MGPU" import --t4 "$W/r.json" --db "$W/s.db" --kernel k --problem p --device d > /dev/null
  python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1])
c.execute(\"UPDATE trials SET status = 'wrong_result', message = 'off by 1' WHERE config_id IN (SELECT id FROM configs WHERE json LIKE '%2}')\")
c.execute(\"UPDATE trials SET status = 'timeout', median_ms = NULL, min_ms = NULL, mean_ms = NULL, samples_json = '[]', sample_count = 0 WHERE config_id IN (SELECT id FROM configs WHERE json LIKE '%3}')\")
c.commit()" "$W/s.db" || { echo "fixture_t4_statuses: edit failed"; exit 1; }
}
bad export_t4_statuses_round_trip 0 "^T4 has no word for 1 timeout: written as runtime failures.*(import reads them back as launch_error)" \
  --fixture t4_statuses --writes -- sh: "'$MGPU' export --db s.db --format t4 -o back.json && '$MGPU' import --t4 back.json --db b.db --kernel k --problem p --device d > /dev/null && python3 -c \"import sqlite3; print(sorted(sqlite3.connect('b.db').execute('SELECT status FROM trials').fetchall()))\" | grep -x \"\\[('launch_error',), ('ok',), ('wrong_result',)\\]\""

finish
