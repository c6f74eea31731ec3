#!/usr/bin/env bash
# Bad inputs for the scripts and the commands around them: scripts/nightly.sh, scripts/run.sh
# and the other scripts, mgpu-bench, `bench matmul`, and `campaign plan|submit|status|resume|
# run-task` -- each asserting the exit code of the one table (harness/exit_codes.h), a message
# naming the problem, no crash, and unchanged files where nothing was to be written.
# Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/scripts_cases.sh
. "$(dirname "$0")/lib.sh"

# mgpu-bench is mgpu-tune under that name (as in the device bundle): a folder holding both,
# for nightly.sh (MGPU_BIN) and for calling mgpu-bench directly.
mkdir -p "$ROOT/bin"
ln -s "$(realpath "$MGPU")" "$ROOT/bin/mgpu-tune"
ln -s "$(realpath "$MGPU")" "$ROOT/bin/mgpu-bench"
export MGPU_BIN="$ROOT/bin" BENCH="$ROOT/bin/mgpu-bench" NIGHTLY="$SRC/scripts/nightly.sh"
# scripts/run.sh builds (a no-op here) and runs the mgpu-tune under test.
export BUILD_DIR="$(dirname "$(realpath "$MGPU")")"
PY=/usr/bin/python3

# A planned campaign of one small model task, c.json in $W.
fixture_campaign() {
  "$MGPU" campaign plan --arch sm_90a --m 256 --n 256 --k 256 --trials 2 --strategy random --device model \
    -o "$W/c.json" > /dev/null || { echo "fixture_campaign: plan failed"; exit 1; }
}
# The same, hand-edited by a Python statement on the loaded file `c`.
campaign_with() {
  fixture_campaign
  "$PY" -c "import json, sys
c = json.load(open(sys.argv[1]))
$1
json.dump(c, open(sys.argv[1], 'w'), indent=2)" "$W/c.json" || { echo "campaign_with: edit failed"; exit 1; }
}
fixture_campaign_sm80() { campaign_with 'c["tasks"][0]["arch"] = "sm_80"'; }
fixture_campaign_strategy() { campaign_with 'c["tasks"][0]["strategy"] = "bogus"'; }
fixture_campaign_negative_k() { campaign_with 'c["tasks"][0]["problem"]["k"] = -64'; }
fixture_campaign_zero_trials() { campaign_with 'c["tasks"][0]["trials"] = 0'; }
fixture_campaign_huge_m() { campaign_with 'c["tasks"][0]["problem"]["m"] = 2**40'; }
fixture_campaign_float_trials() { campaign_with 'c["tasks"][0]["trials"] = 1e30'; }
fixture_campaign_device() { campaign_with 'c["tasks"][0]["device"] = "abacus"'; }
fixture_campaign_name() { campaign_with 'c["name"] = "x; rm -rf ~"'; }
fixture_campaign_budget() { campaign_with 'c["tasks"][0]["time_budget_s"] = -5'; }
fixture_campaign_negative_seed() { campaign_with 'c["tasks"][0]["seed"] = -1'; }
fixture_campaign_seed_2_32() { campaign_with 'c["tasks"][0]["seed"] = 2**32'; }
fixture_campaign_seed_2_64() { campaign_with 'c["tasks"][0]["seed"] = 2**64 - 1'; }
fixture_campaign_float_seed() { campaign_with 'c["tasks"][0]["seed"] = 1.5'; }
fixture_campaign_max_seed() { campaign_with 'c["tasks"][0]["seed"] = 2**32 - 1'; }
fixture_campaign_no_tasks() { campaign_with 'c["tasks"] = []'; }
fixture_campaign_tasks_object() { campaign_with 'c["tasks"] = {"0": c["tasks"][0]}'; }
fixture_campaign_format_float() { campaign_with 'c["format"] = 1.5'; }
fixture_campaign_huge_trials() { campaign_with 'c["tasks"][0]["trials"] = 2**31'; }
# Numbers as a hand edit writes them, which json.dump would respell (battery round 15, F5): each
# is quoted as written, and an exponent is refused for every key alike, "format" included.
campaign_sed() { fixture_campaign; sed -i "$1" "$W/c.json" || { echo "campaign_sed: edit failed"; exit 1; }; }
fixture_campaign_seed_1E2() { campaign_sed 's/"seed": 0/"seed": 1E2/'; }
fixture_campaign_trials_1e9() { campaign_sed 's/"trials": 2/"trials": 1e9/'; }
fixture_campaign_format_1e0() { campaign_sed 's/"format": 1/"format": 1e0/'; }
fixture_campaign_seed_20_digits() { campaign_sed 's/"seed": 0/"seed": 99999999999999999999/'; }
# Two tasks, task 0's seed 100 and task 1's 1E2: task 1's is quoted (round 16, F4); 60 digits too.
fixture_campaign_two_seeds() {
  campaign_with 'c["tasks"].append(dict(c["tasks"][0], index=1, seed=100)); c["tasks"][0]["seed"] = 100'
  "$PY" -c "import sys; p = sys.argv[1]; t = open(p).read(); i = t.rindex('\"seed\": 100'); open(p, 'w').write(t[:i] + '\"seed\": 1E2' + t[i + 11:])" "$W/c.json"
}
fixture_campaign_seed_60_digits() { campaign_sed "s/\"seed\": 0/\"seed\": $(printf '9%.0s' $(seq 60))/"; }
fixture_campaign_format_minus_0() { campaign_sed 's/"format": 1/"format": -0/'; }
# One past the tuners' --trials bound, which a hand edit passed (battery round 14, F4); the bound
# itself is taken.
fixture_campaign_trials_past_bound() { campaign_with 'c["tasks"][0]["trials"] = 1000000001'; }
fixture_attention_campaign_trials() {  # $1: the trials
  "$MGPU" campaign plan --arch sm_90a --op attention --problem b1_h2_kvh2_sq300_skv500_d128_bf16_noncausal \
    --device model --trials 3 -o "$W/c.json" > /dev/null || { echo "fixture_attention_campaign: plan failed"; exit 1; }
  sed -i "s/\"trials\": 3/\"trials\": $1/" "$W/c.json"
}
fixture_attention_campaign_trials_past_bound() { fixture_attention_campaign_trials 1000000001; }
fixture_attention_campaign_trials_at_bound() { fixture_attention_campaign_trials 1000000000; }
fixture_campaign_replay_missing() { campaign_with 'c["tasks"][0]["device"] = "replay:absent.db"'; }
fixture_campaign_replay_folder() { campaign_with 'c["tasks"][0]["device"] = "replay:d.db"'; mkdir "$W/d.db"; }
fixture_campaign_task_twice() { campaign_with 't = dict(c["tasks"][0]); t["index"] = 1; c["tasks"].append(t)'; }
fixture_campaign_two_strategies() {  # the same problem with two strategies: two studies, fine
  campaign_with 't = dict(c["tasks"][0]); t["index"] = 1; t["strategy"] = "tpe-native"; c["tasks"].append(t)'
}
# A key given twice, as a hand edit leaves it: in a task, at the top.
fixture_campaign_seed_twice() { fixture_campaign; sed -i 's/"seed": 0,/"seed": 0, "seed": 7,/' "$W/c.json"; }
fixture_campaign_name_twice() { fixture_campaign; sed -i 's/"name": "c",/"name": "c", "name": "d",/' "$W/c.json"; }
# An emulate task too large for the virtual device's 16 GiB, as a hand edit or an older plan leaves it.
fixture_campaign_emulate_huge() {
  campaign_with 'c["tasks"][0]["device"] = "emulate"; c["tasks"][0]["problem"].update(m=65536, n=65536, k=65536)'
}
fixture_campaign_submitted_task_huge() {
  campaign_with 'c["submissions"] = [{"job": "1", "merge_job": "2", "tasks": [2**32], "partition": "gpu", "submitted_at": "x"}]'
}
# A campaign submitted as job 1, and a fake sacct (first on PATH) answering for it.
fixture_campaign_sacct() {  # fixture_campaign_sacct 'SACCT LINE'
  campaign_with 'c["submissions"] = [{"job": "1", "merge_job": "2", "tasks": [0], "partition": "gpu", "submitted_at": "x"}]'
  mkdir -p "$W/bin"
  printf '#!/bin/sh\necho "%s"\n' "$1" > "$W/bin/sacct"
  chmod +x "$W/bin/sacct"
}
# A submission whose job id is shell text (a shared or hand-edited file): never run.
fixture_campaign_job_injection() {
  campaign_with 'c["submissions"] = [{"job": "12;touch INJECTED;echo", "merge_job": "13", "tasks": [0], "partition": "gpu", "submitted_at": "x"}]'
}
fixture_campaign_merge_job_injection() {
  campaign_with 'c["submissions"] = [{"job": "12", "merge_job": "$(touch INJECTED)", "tasks": [0], "partition": "gpu", "submitted_at": "x"}]'
}
fixture_campaign_sacct_all_ints() { fixture_campaign_sacct '1_[0-2147483647]|PENDING'; }
fixture_campaign_sacct_pending() { fixture_campaign_sacct '1_[0-3]|PENDING'; }
# lib.sh's model-run database (predictions only) in SQLite's rollback-journal mode: what is
# checked here is that the scripts write nothing, not how read-only opens treat a WAL database
# (the store's own cases test that).
fixture_predicted() {
  fixture_good
  "$PY" -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode=DELETE')" "$W/t.db" ||
    { echo "fixture_predicted: cannot convert the database"; exit 1; }
}
fixture_text() { echo "not a database, not JSON" > "$W/t.db"; cp "$W/t.db" "$W/c.json"; }
# The H200 lease's measured trials (a template version older than this build's).
fixture_measured_earlier() { gunzip -c "$SRC/results/leases/2026-11-26-h200-lease2.db.gz" > "$W/t.db"; }
fixture_measured_earlier_and_predicted() {
  fixture_good
  mv "$W/t.db" "$W/pred.db"
  gunzip -c "$SRC/results/leases/2026-11-26-h200-lease2.db.gz" > "$W/old.db"
  "$MGPU" merge "$W/old.db" "$W/pred.db" -o "$W/t.db" > /dev/null || { echo "fixture: merge failed"; exit 1; }
}
fixture_measured_nothing() {
  fixture_good
  "$PY" -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('delete from trials'); c.commit()" "$W/t.db" ||
    { echo "fixture_measured_nothing: cannot empty the database"; exit 1; }
}
fixture_suite() { printf 'm,n,k\n256,256,256\n512,256,256\n' > "$W/suite.csv"; }
# Shape suites as spreadsheets save them: a UTF-8 byte order mark, CR LF line ends; or UTF-16.
fixture_suite_bom() { printf '\xef\xbb\xbfm,n,k\n256,256,256\n512,256,256\n' > "$W/suite.csv"; }
fixture_suite_bom_no_header() { printf '\xef\xbb\xbf256,256,256\n512,256,256\n' > "$W/suite.csv"; }
fixture_suite_crlf() { printf 'm,n,k\r\n256,256,256\r\n512,256,256 # wide\r\n\r\n' > "$W/suite.csv"; }
fixture_suite_bom_crlf() { printf '\xef\xbb\xbfm,n,k\r\n256,256,256\r\n512,256,256\r\n' > "$W/suite.csv"; }
fixture_suite_utf16() { printf '\xff\xfem\0,\0n\0,\0k\0\n\0' > "$W/suite.csv"; }
fixture_suite_deep_json() {
  "$PY" -c "import sys; open(sys.argv[1], 'w').write('[{\"m\": 256, \"n\": ' + '[' * 200000 + ']' * 200000 + ', \"k\": 256}]')" "$W/suite.json"
}

## scripts/nightly.sh: bad input is exit 2, checked before anything is measured or written
bad nightly_no_db 2 "give the results database" -- sh: bash '$NIGHTLY'
bad nightly_missing_db 2 "no results database at" -- sh: bash '$NIGHTLY' absent.db
bad nightly_db_is_a_folder 2 "no results database at" -- sh: bash '$NIGHTLY' '$W'
bad nightly_not_a_database 2 "error: .*t.db" --fixture text -- sh: bash '$NIGHTLY' t.db --out '$W.out'
bad nightly_unknown_option 2 "unknown option --frobnicate" --fixture predicted -- sh: bash '$NIGHTLY' t.db --frobnicate
bad nightly_out_without_value 2 "error: --out needs a value" --fixture predicted -- sh: bash '$NIGHTLY' t.db --out
bad nightly_out_empty 2 "error: --out needs a value" --fixture predicted -- sh: bash '$NIGHTLY' t.db --out ''
bad nightly_candidate_without_value 2 "error: --candidate needs a value" --fixture predicted -- sh: bash '$NIGHTLY' t.db --candidate
bad nightly_no_such_candidate 2 "candidate run '999' is not in" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db --candidate 999 --out '$W.out'
bad nightly_no_such_candidate_uuid 2 "candidate run 'zzzz' is not in" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db --candidate zzzz --out '$W.out'
bad nightly_no_such_baseline 2 "baseline run '42' is not in" --fixture predicted -- sh: bash '$NIGHTLY' t.db 42 --out '$W.out'
bad nightly_predicted_baseline 2 "baseline run '1' measured nothing .*cannot be a baseline" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db 1 --out '$W.out'
bad nightly_three_arguments 2 "unexpected argument 'extra'" --fixture predicted -- sh: bash '$NIGHTLY' t.db 1 extra
bad nightly_candidate_takes_no_bench_flags 2 "error: --candidate re-reports a run" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db --candidate 1 -- --device model
bad nightly_missing_executables 2 "is missing: build first" --fixture predicted -- \
  sh: MGPU_BIN=/nonexistent bash '$NIGHTLY' t.db
bad nightly_unwritable_out 2 "cannot write the report folder /proc/nightly" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db --out /proc/nightly
bad nightly_bad_bench_flag 2 "unknown device 'abacus'" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db --out '$W.out' -- --device abacus
bad nightly_filter_matching_nothing 2 "matches none of the suite's 1 benchmarks" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db --out '$W.out' -- --device model --include-model --benchmark_filter=nomatch
# A database of predictions only: a report saying nothing was measured, exit 3, database untouched.
bad nightly_predictions_only_database 3 "NOT RUN.*" --fixture predicted -- \
  sh: 'bash $NIGHTLY t.db --out $W.out; rc=$?; cat $W.out/report.md; grep -q "only predicted" $W.out/report.md && exit $rc'
# --device model: predictions, never PASS, never a baseline (twice: the first is no baseline either).
bad nightly_model_is_no_verdict 3 "PREDICTIONS, NOT A VERDICT" --fixture predicted --writes -- \
  sh: 'for i in 1 2; do bash $NIGHTLY t.db --out $W.out -- --device model --include-model; rc=$?; done;
       cat $W.out/report.md; ! grep -q PASS $W.out/report.md && exit $rc'
bad nightly_help_lists_exit_codes 0 "3 nothing measured" -- sh: bash '$NIGHTLY' --help
# A kernel pack as the nightly's suite: a path that is no pack is bad input before anything runs.
bad nightly_pack_not_a_pack 2 "--pack .* is no kernel pack: it holds no pack's manifest.json.*nothing left" --fixture predicted -- \
  sh: "bash '$NIGHTLY' t.db --out '\$W.out' -- --pack '\$W' 2>&1 | tr -d '\\n'; r=\${PIPESTATUS[0]}; test -e '\$W.out' || echo ' nothing left'; exit \$r"
bad nightly_refuses_listing 2 "--benchmark_list_tests: nightly.sh measures and compares a night" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db --out '$W.out' -- --benchmark_list_tests
bad nightly_help_names_pack 0 "-- --pack PACK. measures a kernel pack as shipped" -- sh: bash '$NIGHTLY' --help
# --help does no work: run.sh and test.sh built (and test.sh ran the suite) before answering.
bad run_help_builds_nothing 0 "^nothing built$" -- sh: "BUILD_DIR='$W/b' bash '$SRC/scripts/run.sh' --help > /dev/null && \
  { ls -A '$W/b' 2>/dev/null | grep -q . && echo built || echo 'nothing built'; }"
bad test_help_runs_nothing 0 "^nothing built$" -- sh: "BUILD_DIR='$W/b' bash '$SRC/scripts/test.sh' --help > /dev/null && \
  { ls -A '$W/b' 2>/dev/null | grep -q . && echo built || echo 'nothing built'; }"
# User-facing text names no internal issue numbers: every script's --help, and the README.
bad script_helps_name_no_issue 0 "^ok$" --writes -- sh: "for f in '$SRC'/scripts/*.sh; do bash \$f --help; done > all.txt 2>&1; \
  if grep -En '[Ii]ssues? [0-9]' all.txt; then echo bad; else echo ok; fi"
bad readme_names_no_issue 0 "^ok$" -- sh: "grep -En '[Ii]ssues? [0-9]' '$SRC/README.md' && echo bad || echo ok"

## mgpu-bench
bad bench_suite_filter_matching_nothing 2 "matches none of the suite's 1 benchmarks: nothing was measured" \
  --fixture predicted -- sh: '$BENCH' --db t.db --device model --include-model --benchmark_filter=nomatch
bad bench_suite_list_matching_nothing 2 "matches none" --fixture predicted -- \
  sh: '$BENCH' --db t.db --include-model --benchmark_list_tests --benchmark_filter=nomatch
bad bench_suite_predictions_only 3 "holds only predicted .*nothing was measured" --fixture predicted -- sh: '$BENCH' --db t.db
# Measured rows only of an earlier template version: said as such, not as "only predicted".
bad bench_suite_measured_by_earlier_versions 2 "holds measured configs only of earlier template versions" \
  --fixture measured_earlier -- sh: '$BENCH' --db t.db
bad bench_suite_measured_earlier_and_predicted 2 "only of earlier template versions .*and only predictions of the current" \
  --fixture measured_earlier_and_predicted -- sh: '$BENCH' --db t.db
bad bench_suite_include_model_not_advised_again 2 "holds no verified config of the current templates, measured or predicted \\(tune first\\)" \
  --fixture measured_nothing -- sh: '$BENCH' --db t.db --include-model
bad bench_suite_no_input 2 "give --db FILE" -- sh: '$BENCH'
bad bench_suite_missing_db 2 "error: .*absent.db" -- sh: '$BENCH' --db absent.db
bad bench_suite_not_a_database 2 "error: .*t.db" --fixture text -- sh: '$BENCH' --db t.db
bad bench_suite_missing_export 2 "cannot read .*absent.json" -- sh: '$BENCH' --configs absent.json
bad bench_suite_bad_device 2 "unknown device 'abacus'" --fixture predicted -- sh: '$BENCH' --db t.db --device abacus
bad bench_suite_bad_timer 2 "unknown timer 'stopwatch'" --fixture predicted -- sh: '$BENCH' --db t.db --timer stopwatch
bad bench_suite_unknown_flag 2 "frobnicate" --fixture predicted -- sh: '$BENCH' --db t.db --frobnicate
bad bench_suite_help_lists_exit_codes 0 "Exit codes: 0 success" -- sh: '$BENCH' --help
# Output that cannot be written is no silent success (as mgpu-tune's); a --benchmark_out left
# incomplete is removed; Ctrl-C / SIGTERM commit the trial under way, close the run, exit 130/143
# (also when started by a script with '&', where SIGINT comes ignored).
B=(--db t.db --device model --include-model)
bad bench_suite_stdout_full 1 "mgpu-bench: error: cannot write the output to stdout" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --no-record '>' /dev/full
bad bench_suite_stdout_closed 1 "cannot write the output to stdout \(Bad file descriptor\)" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --no-record '>&-'
bad bench_suite_out_too_big_is_removed 1 "could not write --benchmark_out b.json .*the incomplete file was removed.*gone" \
  --fixture predicted -- sh: "(trap '' XFSZ; ulimit -f 0; exec '$BENCH' ${B[*]} --no-record --benchmark_out=b.json) 2>&1 >/dev/null | tr -d '\\n'; r=\${PIPESTATUS[0]}; test -e b.json || echo ' gone'; exit \$r"
for sig in INT TERM; do
  bad "bench_suite_sig$sig" $([ $sig = INT ] && echo 130 || echo 143) "stopped by SIG$sig: [0-9]+ trials of this run are committed.*closed" \
    --fixture predicted --writes -- sh: "(trap '' INT; exec '$BENCH' ${B[*]} --benchmark_repetitions=10000 --benchmark_out=b.json) >/dev/null 2>e & p=\$!;
      sleep 2; kill -$sig \$p; wait \$p; r=\$?; tr -d '\\n' < e; '$MGPU' best --db t.db --runs | grep -q unfinished || ls t.db-wal t.db-shm b.json 2>/dev/null || echo ' closed'; exit \$r"
done

## mgpu-tune bench matmul (no B200 here: nothing can be measured, exit 3 like mgpu-bench)
bad bench_without_a_gpu 3 "bench needs a sm_100a GPU: .*nothing was measured" -- \
  bench matmul --arch sm_100 --m 256 --n 256 --k 256
bad bench_bad_timer 2 "unknown timer 'stopwatch'" -- bench matmul --arch sm_90a --timer stopwatch
bad bench_zero_repeat 2 "error: --repeat: must be a whole number between 1 and 1000, got '0'" -- bench matmul --arch sm_90a --repeat 0
bad bench_bad_arch 2 "unknown arch 'sm_80'" -- bench matmul --arch sm_80
bad bench_bad_config 2 "not valid JSON" -- bench matmul --arch sm_90a --config '{tile_m'
bad bench_help_lists_exit_codes 0 "3 nothing could be measured" -- bench matmul --help

## campaign plan: the tuning command's own checks, at plan time
bad plan_unknown_strategy 2 "unknown strategy 'bogus'" -- campaign plan --arch sm_90a --strategy bogus -o c.json
bad plan_arch_sm80 2 "unknown arch 'sm_80'" -- campaign plan --arch sm_80 -o c.json
bad plan_under_a_file 2 "cannot write f\.txt/c\.json: .*/f\.txt is a file, not a folder, so nothing can be under it" --writes -- \
  sh: "echo keep > f.txt && '$MGPU' campaign plan --arch sm_90a --m 256 --n 256 --k 256 -o f.txt/c.json"
bad plan_negative_k 2 "error: --k" -- campaign plan --arch sm_90a --k=-64 -o c.json
bad plan_zero_trials 2 "error: --trials: must be a whole number between 1 and 1000000000, got '0'" -- campaign plan --arch sm_90a --trials 0 -o c.json
bad plan_nan_budget 2 "error: --time-budget: must be a finite number of at least 0, got 'nan'" -- campaign plan --arch sm_90a --time-budget nan -o c.json
bad plan_bad_device 2 "unknown device 'abacus'" -- campaign plan --arch sm_90a --device abacus -o c.json
bad plan_bad_name 2 "no campaign name" -- campaign plan --arch sm_90a --name 'a b' -o c.json
bad plan_stem_with_a_space 2 "'my camp' is no campaign name" -- campaign plan --arch sm_90a -o 'my camp.json'
bad plan_newline_in_folder 2 "control character" -- sh: 'mkdir "$W/a
b" && $MGPU campaign plan --arch sm_90a -o "$W/a
b/c.json"; rc=$?; rmdir "$W/a
b"; exit $rc'
bad plan_file_exists 2 "exists: choose another file" --fixture campaign -- campaign plan --arch sm_90a -o c.json
bad plan_shapes_and_m 2 "error: --shapes gives the shapes: drop --m" -- campaign plan --arch sm_90a --shapes llama3-8b --m 64 -o c.json
bad plan_help_lists_exit_codes 0 "Exit codes: 0 success" -- campaign plan --help

bad plan_negative_seed 2 "error: --seed: must be a whole number between 0 and 4294967295, got '-1'" -- \
  campaign plan --arch sm_90a --seed=-1 -o c.json
bad plan_seed_2_32 2 "error: --seed: must be a whole number between 0 and 4294967295, got '4294967296'" -- \
  campaign plan --arch sm_90a --seed 4294967296 -o c.json
bad plan_seed_2_64 2 "error: --seed: must be a whole number between 0 and 4294967295" -- \
  campaign plan --arch sm_90a --seed 18446744073709551615 -o c.json
bad plan_largest_seed 0 "wrote c.json: 1 tasks" --writes -- campaign plan --arch sm_90a --seed 4294967295 -o c.json

## campaign submit: a hand-edited plan is checked again, the Slurm options before they become #SBATCH lines
bad submit_arch_sm80 2 "task 0 .*unknown arch 'sm_80'" --fixture campaign_sm80 -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_unknown_strategy 2 "task 0 .*unknown strategy 'bogus'" --fixture campaign_strategy -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_negative_k 2 "task 0 .*k" --fixture campaign_negative_k -- campaign submit c.json --partition gpu --dry-run
bad submit_zero_trials 2 "task 0 .*--trials must be at least 1" --fixture campaign_zero_trials -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_trials_past_bound 2 "task 0 .*--trials must be at most 1000000000" --fixture campaign_trials_past_bound -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_attention_trials_past_bound 2 "task 0 \(sm_90a b1_h2_kvh2_sq300_skv500_d128_bf16_noncausal\): trials 1000000001 \(at most 1000000000\)" \
  --fixture attention_campaign_trials_past_bound -- campaign submit c.json --partition gpu --dry-run
bad run_task_attention_trials_past_bound 2 "trials 1000000001 \(at most 1000000000\)" \
  --fixture attention_campaign_trials_past_bound --writes -- campaign run-task c.json 0
bad submit_attention_trials_at_bound 0 "#SBATCH --array=0$" --fixture attention_campaign_trials_at_bound --writes -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_huge_m 2 "\"m\" .* is out of range" --fixture campaign_huge_m -- campaign submit c.json --partition gpu --dry-run
bad submit_float_trials 2 "\"trials\" must be an integer" --fixture campaign_float_trials -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_bad_device 2 "task 0 .*unknown device 'abacus'" --fixture campaign_device -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_negative_budget 2 "task 0 .*--time-budget" --fixture campaign_budget -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_negative_seed 2 "c.json: task 0: \"seed\" -1 is out of range \(0..4294967295\)" --fixture campaign_negative_seed -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_seed_2_32 2 "task 0: \"seed\" 4294967296 is out of range \(0..4294967295\)" --fixture campaign_seed_2_32 -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_seed_2_64 2 "\"seed\" 18446744073709551615 is out of range" --fixture campaign_seed_2_64 -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_float_seed 2 "\"seed\" must be an integer written in digits, not 1.5" --fixture campaign_float_seed -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_largest_seed 0 "#SBATCH --array=0$" --fixture campaign_max_seed --writes -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_no_tasks 2 "c.json has no tasks: nothing to submit" --fixture campaign_no_tasks -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_tasks_not_a_list 2 "\"tasks\" must be a list" --fixture campaign_tasks_object -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_format_not_1 2 "\"format\" must be an integer written in digits, not 1.5" --fixture campaign_format_float -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_seed_1E2 2 "c.json: task 0: \"seed\" must be an integer written in digits, not 1E2$" --fixture campaign_seed_1E2 -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_trials_1e9 2 "\"trials\" must be an integer written in digits, not 1e9$" --fixture campaign_trials_1e9 -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_format_1e0 2 "\"format\" must be an integer written in digits, not 1e0$" --fixture campaign_format_1e0 -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_second_task_seed_1E2 2 "c.json: task 1: \"seed\" must be an integer written in digits, not 1E2$" --fixture campaign_two_seeds -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_seed_60_digits 2 "\"seed\" 9{60} is out of range \(0..4294967295\)" --fixture campaign_seed_60_digits -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_format_minus_0 2 "campaign format -0 is not 1" --fixture campaign_format_minus_0 -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_seed_20_digits 2 "\"seed\" 99999999999999999999 is out of range \(0..4294967295\)" --fixture campaign_seed_20_digits -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_trials_beyond_int 2 "\"trials\" 2147483648 is out of range" --fixture campaign_huge_trials -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_bad_name 2 "'x; rm -rf ~' is no campaign name" --fixture campaign_name -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_time_in_words 2 "error: --time '1 hour' is no Slurm time limit" --fixture campaign -- \
  campaign submit c.json --partition gpu --time '1 hour' --dry-run
bad submit_time_injection 2 "is no Slurm time limit" --fixture campaign -- \
  sh: '$MGPU campaign submit c.json --partition gpu --dry-run --time "01:00:00
#SBATCH --wrap=reboot"'
bad submit_partition_injection 2 "error: --partition 'gpu --wrap=reboot' is no Slurm partition" --fixture campaign -- \
  campaign submit c.json --partition 'gpu --wrap=reboot' --dry-run
bad submit_partition_empty 2 "error: --partition: an empty value \\(''\\) is not taken" --fixture campaign -- \
  campaign submit c.json --partition '' --dry-run
bad submit_negative_gpus 2 "error: --gpus-per-task: must be a whole number between 0 and 2147483647, got '-1'" --fixture campaign -- \
  campaign submit c.json --partition gpu --gpus-per-task=-1 --dry-run
bad submit_missing_campaign 2 "no campaign file absent.json" -- campaign submit absent.json --partition gpu --dry-run
bad submit_not_json 2 "c.json is not a campaign file" --fixture text -- campaign submit c.json --partition gpu --dry-run
bad submit_needs_partition 2 "error: --partition is required" --fixture campaign -- campaign submit c.json --dry-run
bad submit_without_sbatch 1 "sbatch is not on PATH" --fixture campaign --writes -- \
  sh: 'PATH=/nonexistent $MGPU campaign submit c.json --partition gpu'
# A folder with a space, quotes and a % in its path: the generated scripts parse, and run as
# Slurm would run them (the task, then the merge) into the right files.
bad submit_quotes_every_path 0 "merged: 1 task" --writes -- sh: 'd="$W/night shift '"'"'q\" 100%"; mkdir -p "$d" &&
  $MGPU campaign plan --arch sm_90a --m 256 --n 256 --k 256 --trials 2 --strategy random --device model -o "$d/c.json" &&
  $MGPU campaign submit "$d/c.json" --partition gpu --time 1-00:00 --dry-run > /dev/null &&
  bash -n "$d/c-slurm/array.sbatch" && bash -n "$d/c-slurm/merge.sbatch" &&
  grep -qF -- "--output=\"$W/night shift '"'"'q\\\" 100%%/c-logs/task-%a.out\"" "$d/c-slurm/array.sbatch" &&
  SLURM_ARRAY_TASK_ID=0 bash "$d/c-slurm/array.sbatch" > /dev/null && bash "$d/c-slurm/merge.sbatch" &&
  test -f "$d/c.db" && test "$(cat "$d/c-shards/task-0.status")" = 0 && echo "merged: 1 task"'

## campaign status / resume / run-task
bad status_missing_campaign 2 "no campaign file absent.json" -- campaign status absent.json
bad status_not_json 2 "c.json is not a campaign file" --fixture text -- campaign status c.json
bad status_bad_name 2 "is no campaign name" --fixture campaign_name -- campaign status c.json
bad resume_bad_time 2 "error: --time '90 minutes' is no Slurm time limit" --fixture campaign -- \
  campaign resume c.json --partition gpu --time '90 minutes' --dry-run
bad resume_bad_partition 2 "error: --partition 'a/b' is no Slurm partition" --fixture campaign -- \
  campaign resume c.json --partition a/b --dry-run
bad resume_arch_sm80 2 "task 0 .*unknown arch 'sm_80'" --fixture campaign_sm80 -- \
  campaign resume c.json --partition gpu --dry-run
bad run_task_no_such_task 2 "has no task 5 \\(0..0\\)" --fixture campaign -- campaign run-task c.json 5
bad run_task_negative_index 2 "error: index: must be a whole number between 0 and 2147483647, got '-1'" --fixture campaign -- campaign run-task c.json -1
bad run_task_arch_sm80 2 "unknown arch 'sm_80'" --fixture campaign_sm80 --writes -- campaign run-task c.json 0
# A seed numpy refuses is refused before the task starts: no blank shard, no status file.
bad run_task_seed_2_32 2 "\"seed\" 4294967296 is out of range" --fixture campaign_seed_2_32 -- campaign run-task c.json 0
bad run_task_no_tasks 2 "c.json has no tasks: no task 0 to run" --fixture campaign_no_tasks -- campaign run-task c.json 0
bad resume_no_tasks 0 "nothing to resume" --fixture campaign_no_tasks -- campaign resume c.json --partition gpu --dry-run
bad status_no_tasks 0 "0 tasks" --fixture campaign_no_tasks -- campaign status c.json
# A job id goes into sacct/scontrol command lines: shell text is refused, never run.
bad status_job_id_shell_text 2 "\"job\" is \"12;touch INJECTED;echo\", not a Slurm job id" --fixture campaign_job_injection -- \
  sh: '$MGPU campaign status c.json; r=$?; ls INJECTED 2>/dev/null && echo RAN; exit $r'
bad resume_merge_job_shell_text 2 "\"merge_job\" is .*not a Slurm job id" --fixture campaign_merge_job_injection -- \
  sh: '$MGPU campaign resume c.json --partition gpu --dry-run; r=$?; ls INJECTED 2>/dev/null && echo RAN; exit $r'
bad status_submitted_task_beyond_int 2 "\"tasks\" 4294967296 is out of range" --fixture campaign_submitted_task_huge -- \
  campaign status c.json
# sacct's array ranges: one as wide as an int is no answer of Slurm's (looping over it never ended).
bad status_sacct_range_of_every_int 0 "task +0 +lost" --fixture campaign_sacct_all_ints -- \
  sh: 'PATH="$W/bin:$PATH" timeout 60 $MGPU campaign status c.json'
bad status_sacct_pending_range 0 "task +0 +pending" --fixture campaign_sacct_pending -- \
  sh: 'PATH="$W/bin:$PATH" timeout 60 $MGPU campaign status c.json'

## campaign: a replay file that is not there, a target given twice, a task or a key repeated
bad plan_replay_missing 2 "error: --device replay: file absent.db does not exist" -- \
  campaign plan --arch sm_90a --m 256 --n 256 --k 256 --device replay:absent.db -o c.json
bad plan_replay_folder 2 "error: --device replay: file d.db is a folder" -- \
  sh: mkdir d.db '&&' '$MGPU' campaign plan --arch sm_90a --m 256 --n 256 --k 256 --device replay:d.db -o c.json
bad plan_replay_fifo 2 "--device replay: file p.db is a FIFO" -- \
  sh: mkfifo p.db '&&' timeout -s KILL 30 '$MGPU' campaign plan --arch sm_90a --device replay:p.db -o c.json '; rc=$?; rm -f p.db; exit $rc'
bad plan_replay_present 0 "wrote c.json: 1 tasks" --fixture good --writes -- \
  campaign plan --arch sm_90a --m 256 --n 256 --k 256 --device 'replay:$DB' -o c.json
bad plan_arch_twice 2 "error: --arch sm_90a is given twice: give each target once" -- \
  campaign plan --arch sm_90a --arch sm_90a --m 256 --n 256 --k 256 -o c.json
bad plan_arch_twice_short_form 2 "error: --arch sm_90 and --arch sm_90a are the same target \(sm_90a\)" -- \
  campaign plan --arch sm_90 --arch sm_90a --m 256 --n 256 --k 256 -o c.json
bad plan_arch_twice_among_others 2 "error: --arch sm_100a and --arch sm_100 are the same target \(sm_100a\)" -- \
  campaign plan --arch sm_100a --arch sm_90a --arch sm_100 --m 256 --n 256 --k 256 -o c.json
bad plan_arch_twice_with_shapes 2 "--arch sm_90a is given twice" --fixture suite -- \
  campaign plan --arch sm_90a --shapes suite.csv --arch sm_90a -o c.json
bad plan_two_archs 0 "wrote c.json: 2 tasks" --writes -- campaign plan --arch sm_90a --arch sm_100a --m 256 --n 256 --k 256 -o c.json
bad submit_replay_missing 2 "c.json task 0 .*--device replay: file absent.db does not exist" --fixture campaign_replay_missing -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_replay_folder 2 "task 0 .*--device replay: file d.db is a folder" --fixture campaign_replay_folder -- \
  campaign submit c.json --partition gpu --dry-run
bad resume_replay_missing 2 "task 0 .*replay: file absent.db does not exist" --fixture campaign_replay_missing -- \
  campaign resume c.json --partition gpu --dry-run
bad submit_task_twice 2 "c.json: task 1 repeats task 0 \(sm_90a m256_n256_k256_bf16_bf16_kn\): remove one" --fixture campaign_task_twice -- \
  campaign submit c.json --partition gpu --dry-run
bad resume_task_twice 2 "task 1 repeats task 0" --fixture campaign_task_twice -- campaign resume c.json --partition gpu --dry-run
bad submit_two_strategies 0 "#SBATCH --array=0-1$" --fixture campaign_two_strategies --writes -- \
  campaign submit c.json --partition gpu --dry-run
bad submit_seed_twice 2 "c.json: the key \"seed\" is given twice in one object" --fixture campaign_seed_twice -- \
  campaign submit c.json --partition gpu --dry-run
bad status_seed_twice 2 "c.json: the key \"seed\" is given twice" --fixture campaign_seed_twice -- campaign status c.json
bad run_task_seed_twice 2 "c.json: the key \"seed\" is given twice" --fixture campaign_seed_twice -- campaign run-task c.json 0
bad submit_name_twice 2 "c.json: the key \"name\" is given twice" --fixture campaign_name_twice -- \
  campaign submit c.json --partition gpu --dry-run
# Campaign numbers and paths as typed: run-task '' ran task 0, --max-parallel 2^64 said "Could not convert".
bad run_task_empty_index 2 "error: index: must be a whole number between 0 and 2147483647, got ''" --fixture campaign -- \
  campaign run-task c.json ''
bad run_task_index_huge 2 "error: index: .*got '99999999999999999999'" --fixture campaign -- campaign run-task c.json 99999999999999999999
bad submit_max_parallel_huge 2 "error: --max-parallel: must be a whole number between 0 and 2147483647, got '99999999999999999999'" \
  --fixture campaign -- campaign submit c.json --partition gpu --max-parallel 99999999999999999999 --dry-run
bad submit_gpus_empty 2 "error: --gpus-per-task: .*got ''" --fixture campaign -- campaign submit c.json --partition gpu --gpus-per-task '' --dry-run
bad submit_time_empty 2 "error: --time: an empty value" --fixture campaign -- campaign submit c.json --partition gpu --time '' --dry-run
bad submit_campaign_empty 2 "error: campaign: an empty value \(''\) is not taken: give one$" -- campaign submit '' --partition gpu --dry-run
bad plan_trials_empty 2 "error: --trials: .*got ''" -- campaign plan --arch sm_90a --trials '' -o c.json
bad plan_time_budget_empty 2 "error: --time-budget: .*got ''" -- campaign plan --arch sm_90a --time-budget '' -o c.json

## mgpu-bench: an export's key given twice, empty values
bad bench_configs_key_twice 2 "e.json: the key \"problem\" is given twice in one object" --fixture predicted -- \
  sh: '$MGPU export --db t.db --format json -o ex --include-model > /dev/null && f=$(ls ex/*.json) &&
       sed -i "0,/\"problem\": {/s//\"problem\": {}, \"problem\": {/" "$f" && mv "$f" ex/e.json &&
       $BENCH --configs ex --device model --no-record; rc=$?; rm -rf ex; exit $rc'
bad bench_db_empty 2 "--db: an empty value" -- sh: '$BENCH' --db "''"
bad bench_configs_empty 2 "--configs: an empty value" -- sh: '$BENCH' --configs "''"

## matmul --shapes FILE: suite files as other tools write them
bad suite_csv_byte_order_mark 0 "suite suite: 2 shapes" --fixture suite_bom --writes -- \
  matmul --arch sm_90a --shapes suite.csv --device model --no-compile --trials 2 --db t.db
bad suite_csv_byte_order_mark_no_header 0 "suite suite: 2 shapes" --fixture suite_bom_no_header --writes -- \
  matmul --arch sm_90a --shapes suite.csv --device model --no-compile --trials 2 --db t.db
bad suite_csv_crlf 0 "suite suite: 2 shapes" --fixture suite_crlf --writes -- \
  matmul --arch sm_90a --shapes suite.csv --device model --no-compile --trials 2 --db t.db
bad suite_csv_byte_order_mark_crlf 0 "suite suite: 2 shapes" --fixture suite_bom_crlf --writes -- \
  matmul --arch sm_90a --shapes suite.csv --device model --no-compile --trials 2 --db t.db
bad plan_suite_byte_order_mark 0 "wrote c.json: 2 tasks" --fixture suite_bom --writes -- \
  campaign plan --arch sm_90a --shapes suite.csv -o c.json
bad suite_csv_utf16 2 "suite.csv is UTF-16 text: save it as UTF-8" --fixture suite_utf16 -- \
  matmul --arch sm_90a --shapes suite.csv --device model --no-compile --trials 2 --db t.db
bad suite_json_deeply_nested 2 "suite.json shape #1: 'n' must be a number or a string" --fixture suite_deep_json -- \
  matmul --arch sm_90a --shapes suite.json --device model --no-compile --trials 2 --db t.db

## scripts/run.sh: relative paths are the caller's (it runs in the current directory)
bad run_sh_relative_paths 0 "both here" --fixture suite --writes -- sh: 'mkdir elsewhere && cd elsewhere &&
  $SRC/scripts/run.sh matmul --arch sm_90a --shapes ../suite.csv --device model --no-compile --trials 2 --db rel.db > /dev/null &&
  $SRC/scripts/run.sh export --db rel.db --format csv -o rel.csv --include-model > /dev/null &&
  test -f rel.db && test -f rel.csv && echo "both here"'
bad run_sh_passes_exit_codes 2 "unknown arch 'sm_80'" -- sh: '$SRC/scripts/run.sh matmul --arch sm_80'
bad run_sh_missing_relative_db 2 "absent.db" -- sh: '$SRC/scripts/run.sh best --db absent.db'

## the other scripts
bad setup_unknown_option 2 "unknown option --frobnicate" -- sh: bash '$SRC/scripts/setup.sh' --frobnicate
bad slurm_local_no_arguments 2 "usage: slurm_local.sh start\|stop DIR" -- sh: bash '$SRC/scripts/slurm_local.sh'
bad slurm_local_bad_command 2 "usage: slurm_local.sh" -- sh: bash '$SRC/scripts/slurm_local.sh' restart '$W/s'
bad report_screenshot_no_arguments 2 "usage: report_screenshot.sh DB OUT.png" -- \
  sh: bash '$SRC/scripts/report_screenshot.sh'

## mgpu-bench and the scripts: outside-battery findings
# --benchmark_out over the database (by name, -wal, hard link, symlink) is refused before
# Google Benchmark truncates it; with --no-record too.
bad bench_out_is_the_database 2 "--benchmark_out: refusing to write t.db: it is the results database" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --benchmark_out=t.db
bad bench_out_is_the_database_no_record 2 "refusing to write t.db" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_out=t.db
bad bench_out_is_the_wal 2 "it is the -wal file of the results database" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_out=t.db-wal
bad bench_out_is_a_hard_link 2 "refusing to write .*h.db: it is the results database" --fixture predicted -- \
  sh: 'ln t.db ../h.db && $BENCH --db t.db --device model --include-model --benchmark_out=../h.db; rc=$?; rm -f ../h.db; exit $rc'
bad bench_out_is_a_symlink 2 "refusing to write .*s.db: it is the results database" --fixture predicted -- \
  sh: 'ln -s "$PWD/t.db" ../s.db && $BENCH --db t.db --device model --include-model --benchmark_out=../s.db; rc=$?; rm -f ../s.db; exit $rc'
# Google Benchmark's numeric and format flags are checked before they reach it (it aborted on a
# negative repetition count, took nan, and ended a bad format with its usage and exit 0).
bad bench_negative_repetitions 2 "--benchmark_repetitions must be a whole number between 1 and 10000, got '-5'" \
  --fixture predicted -- sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_repetitions=-5
bad bench_zero_repetitions 2 "--benchmark_repetitions must be .*got '0'" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_repetitions=0
bad bench_repetitions_from_environment 2 "BENCHMARK_REPETITIONS must be .*got '-1'" --fixture predicted -- \
  sh: 'BENCHMARK_REPETITIONS=-1 $BENCH --db t.db --device model --include-model --no-record'
bad bench_negative_min_time 2 "--benchmark_min_time must be a positive number of seconds.*got '-1'" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_min_time=-1
bad bench_nan_min_time 2 "--benchmark_min_time must be .*got 'nan'" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_min_time=nan
bad bench_negative_min_warmup_time 2 "--benchmark_min_warmup_time must be 0 \\(or left out\\).*got '-1'" \
  --fixture predicted -- sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_min_warmup_time=-1
bad bench_bad_format 2 "--benchmark_format must be console, json or csv, got 'bogus'" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_format=bogus
bad bench_bad_out_format 2 "--benchmark_out_format must be console, json or csv, got 'bogus'" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_out=o.json --benchmark_out_format=bogus
bad bench_repetitions_in_range 0 "manual_time_median" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_repetitions=2
# An output Google Benchmark could not write is a failure, not a success.
bad bench_out_unwritable 1 "could not write --benchmark_out /dev/full" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_out=/dev/full
bad bench_out_unwritable_csv 1 "could not write --benchmark_out /dev/full" --fixture predicted -- \
  sh: '$BENCH' --db t.db --device model --include-model --no-record --benchmark_out=/dev/full --benchmark_out_format=csv
bad bench_out_written 0 "\"benchmarks\"" --fixture predicted --writes -- \
  sh: '$BENCH --db t.db --device model --include-model --no-record --benchmark_out=o.json > /dev/null && cat o.json'
# --configs that is no regular file: a FIFO waited for a writer forever, /dev/zero never ends.
bad bench_configs_fifo 2 "--configs export p is a FIFO" -- sh: 'mkfifo p && timeout 20 $BENCH --configs p; rc=$?; rm -f p; exit $rc'
bad bench_configs_device 2 "--configs export /dev/zero is a character device" -- sh: timeout 20 '$BENCH' --configs /dev/zero
bad bench_configs_fifo_in_folder 2 "--configs export .*x.json is a FIFO" -- \
  sh: 'mkdir d && mkfifo d/x.json && timeout 20 $BENCH --configs d; rc=$?; rm -rf d; exit $rc'
# A bad value in an export is named by file and entry, not as a flag the user never gave.
bad bench_configs_bad_stored_value 2 "e.json: entry '[^']*': m must be between 1 and" --fixture predicted -- \
  sh: '$MGPU export --db t.db --format json -o ex --include-model > /dev/null && f=$(ls ex/*.json) &&
       sed -i "s/\"m\": *256/\"m\": -3/" "$f" && mv "$f" ex/e.json &&
       $BENCH --configs ex --device model --no-record; rc=$?; rm -rf ex; exit $rc'
bad bench_db_bad_stored_dtype 2 "u.db is damaged: trial [0-9]+ has a problem of dtype 'q8'" \
  --fixture predicted -- sh: 'cp t.db u.db && sqlite3_set() { python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()" "$@"; } &&
       sqlite3_set u.db "update problems set dtype = '"'"'q8'"'"'" &&
       $BENCH --db u.db --device model --include-model --no-record; rc=$?; rm -f u.db*; exit $rc'
# nightly.sh compares recorded runs: --no-record is bad input, refused before anything is measured.
bad nightly_no_record 2 "--no-record: nightly.sh compares the run mgpu-bench records" --fixture predicted -- \
  sh: bash '$NIGHTLY' t.db --out '$W.out' -- --device model --include-model --no-record
# --help of every script: its header comment, exit 0; gpu_session.sh took --help as its OUTDIR.
bad bundle_help 0 "Build a self-contained bundle" -- sh: bash '$SRC/scripts/bundle.sh' --help
bad slurm_local_help 0 "A real single-node Slurm" -- sh: bash '$SRC/scripts/slurm_local.sh' --help
bad report_screenshot_help 0 "scripts/report_screenshot.sh DB OUT.png" -- sh: bash '$SRC/scripts/report_screenshot.sh' --help
bad gpu_session_help 0 "One lease of a Hopper GPU" -- sh: bash '$SRC/scripts/gpu_session.sh' --help
bad gpu_session_option_as_outdir 2 "OUTDIR '-o' starts with '-'" -- sh: bash '$SRC/scripts/gpu_session.sh' -o
# --benchmark_out that Google Benchmark cannot open (a folder, a FIFO no program reads): exit 2 before
# measuring, named -- it said a bare "invalid file name" after the suite, or blocked forever (round 4, Z06, J02).
bad bench_out_folder 2 "--benchmark_out out is a folder" --fixture predicted -- \
  sh: 'mkdir out && $BENCH --db t.db --device model --include-model --no-record --benchmark_out=out; rc=$?; rmdir out; exit $rc'
bad bench_out_fifo_no_reader 2 "--benchmark_out p is a FIFO \(named pipe\) that no program is reading" --fixture predicted -- \
  sh: 'mkfifo p && timeout 20 $BENCH --db t.db --device model --include-model --no-record --benchmark_out=p; rc=$?; rm -f p; exit $rc'
# An export whose config cannot work (out of range, a field missing) is bad input (exit 2) before
# anything runs, not a benchmark that failed (round 4, Z02, Z03).
bad bench_configs_config_out_of_range 2 "e.json: entry '[^']*': tile_m = 9223372036854775807 is out of range" --fixture predicted -- \
  sh: '$MGPU export --db t.db --format json -o ex --include-model > /dev/null && f=$(ls ex/*.json) &&
       sed -i "s/\"tile_m\": *[0-9]*/\"tile_m\": 9223372036854775807/" "$f" && mv "$f" ex/e.json &&
       $BENCH --configs ex --device model --no-record; rc=$?; rm -rf ex; exit $rc'
bad bench_configs_config_missing_field 2 "e.json: entry '[^']*': the config lacks 'tile_k'" --fixture predicted -- \
  sh: '$MGPU export --db t.db --format json -o ex --include-model > /dev/null && f=$(ls ex/*.json) &&
       sed -i "s/\"tile_k\": *[0-9]*,//" "$f" && mv "$f" ex/e.json &&
       $BENCH --configs ex --device model --no-record; rc=$?; rm -rf ex; exit $rc'
# A replay task `matmul` would refuse is refused at plan time, not on the cluster (nothing written).
fixture_replay_db() { fixture_good; printf 'm,n,k\n256,256,256\n1,256,1024\n' > "$W/dec.csv"; echo hello > "$W/r.db"; }
bad plan_replay_db_without_the_shape 2 "--device replay:t.db: nothing to replay: it holds no trial of matmul_sm90 at m1_n256_k1024" --fixture replay_db -- campaign plan --arch sm_90a --shapes dec.csv --trials 2 --device replay:t.db -o c.json
bad plan_replay_text_file 2 "r.db is not a T4 file" --fixture replay_db -- campaign plan --arch sm_90a --m 16 --n 256 --k 1024 --device replay:r.db -o c.json
bad plan_replay_db_other_arch 2 "nothing to replay: it holds no trial of matmul_sm100" --fixture replay_db -- campaign plan --arch sm_100a --m 256 --n 256 --k 256 --device replay:t.db -o c.json

## round 8: mgpu-bench's warm-up, time unit and empty values; --benchmark_out over a --configs
## folder's export; a task status file that is a FIFO; an emulate plan too large for the device
# Google Benchmark's warm-up called the benchmark, with ever more iterations, until its time was
# spent: each iteration a whole measurement recorded as a trial (0.5 s on the model: 100,000
# trials, ten minutes; 1e300 never ended). Refused before anything runs; the database unchanged.
bad bench_min_warmup_time_refused 2 "--benchmark_min_warmup_time must be 0 \\(or left out\\): each benchmark iteration is a whole measurement.*got '0.5'" \
  --fixture predicted -- sh: timeout 120 '$BENCH' "${B[@]}" --benchmark_min_warmup_time=0.5
bad bench_min_warmup_time_endless 2 "--benchmark_min_warmup_time must be 0 .*got '1e300'" --fixture predicted -- \
  sh: timeout 120 '$BENCH' "${B[@]}" --benchmark_min_warmup_time=1e300
bad bench_min_warmup_time_from_environment 2 "BENCHMARK_MIN_WARMUP_TIME must be 0 .*got '0.5'" --fixture predicted -- \
  sh: 'BENCHMARK_MIN_WARMUP_TIME=0.5 timeout 120 $BENCH --db t.db --device model --include-model'
bad bench_min_warmup_time_zero 0 "manual_time" --fixture predicted -- \
  sh: timeout 120 '$BENCH' "${B[@]}" --no-record --benchmark_min_warmup_time=0
# A time unit Google Benchmark does not know ended it with its usage and exit 0, nothing measured;
# a known one was overridden by each benchmark's own microseconds.
bad bench_time_unit_unknown 2 "--benchmark_time_unit must be ns, us, ms or s, got 'xs'" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --benchmark_time_unit=xs
# Round 19, F47: a database the measurements cannot be recorded in is refused before anything is
# measured (it ran the whole suite, then refused). chattr +i: unwritable even for root.
bad bench_readonly_db_refused_first 2 "t.db is read-only" --fixture predicted -- \
  sh: "chattr +i t.db || exit 77; '$BENCH' --db t.db --device model --include-model > o 2>&1; r=\$?; chattr -i t.db; cat o; grep -q manual_time o && exit 9; rm -f o; exit \$r"
# Round 19, F42: Google Benchmark's and CLI11's own errors came bare ("The following argument was
# not expected: --version", "is expected to be a double"), and every run began with Debian
# libbenchmark's "Library was built as DEBUG" (its own timing loop; every time here is measured
# by the harness). F43: its --v flag read `V` from the environment.
bad bench_version 0 "^mgpu-tune [0-9.]+ .*Google Benchmark [0-9.]+$" -- sh: "'$BENCH' --version"
bad bench_unknown_option_prefixed 2 "^mgpu-bench: error: not an option or value this command takes: --bogus" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --bogus
bad bench_min_time_suffix_said_first 2 "^mgpu-bench: error: --benchmark_min_time must be a positive number of seconds.*got '1x'$" --fixture predicted -- \
  sh: "'$BENCH' --db t.db --device model --include-model --benchmark_min_time=1x 2>&1"
bad bench_v_not_a_number 2 "^mgpu-bench: error: --v must be a whole number .*got 'abc'$" --fixture predicted -- \
  sh: "'$BENCH' --db t.db --device model --include-model --v=abc 2>&1"
bad bench_no_debug_banner_no_v 0 "^clean$" --fixture predicted --writes -- \
  sh: "V=abc '$BENCH' --db t.db --device model --include-model --no-record > o 2>&1; r=\$?; grep -q manual_time o || { cat o; exit 9; }; \
       grep -E 'DEBUG|Environment variable' o || echo clean; exit \$r"
# Round 20, F58: a --benchmark_out that cannot be created was Google Benchmark's bare "invalid file
# name", exit 1, after the suite ran; a filter that is no regular expression "matched nothing".
bad bench_out_name_too_long 2 "^mgpu-bench: error: --benchmark_out o+\\.json: cannot create it \\(File name too long\\)" --fixture predicted -- \
  sh: "'$BENCH' --db t.db --device model --include-model --no-record --benchmark_out=\$(printf 'o%.0s' \$(seq 300)).json 2>&1"
bad bench_out_under_a_file 2 "^mgpu-bench: error: --benchmark_out t.db/x.json: .*t.db is a file, not a folder" --fixture predicted -- \
  sh: "'$BENCH' --db t.db --device model --include-model --no-record --benchmark_out=t.db/x.json 2>&1"
bad bench_filter_not_a_regex 2 "^mgpu-bench: error: --benchmark_filter must be a regular expression \\(POSIX extended; .*got '\\('" --fixture predicted -- \
  sh: "'$BENCH' --db t.db --device model --include-model --no-record '--benchmark_filter=(' 2>&1"
bad bench_filter_negative_regex_taken 0 "manual_time" --fixture predicted -- \
  sh: "'$BENCH' --db t.db --device model --include-model --no-record '--benchmark_filter=-^nothing' 2>&1"
# Round 19, F44: a switch's value Google Benchmark would take as true whatever it says.
bad bench_list_tests_maybe 2 "--benchmark_list_tests must be true or false \\(or yes/no, on/off, 1/0\\), got 'maybe'" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --benchmark_list_tests=maybe
bad bench_color_purple 2 "--benchmark_color must be auto, true or false, got 'purple'" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --no-record --benchmark_color=purple
bad bench_list_tests_no 0 "" --fixture predicted -- sh: '$BENCH' "${B[@]}" --no-record --benchmark_list_tests=false
bad bench_time_unit_upper_case 2 "--benchmark_time_unit must be ns, us, ms or s, got 'MS'" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --benchmark_time_unit=MS
bad bench_time_unit_from_environment 2 "BENCHMARK_TIME_UNIT must be ns, us, ms or s, got 'xs'" --fixture predicted -- \
  sh: 'BENCHMARK_TIME_UNIT=xs $BENCH --db t.db --device model --include-model'
bad bench_time_unit_ms_is_used 0 "manual_time +[0-9.]+ ms" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --no-record --benchmark_time_unit=ms
bad bench_time_unit_default_us 0 "manual_time +[0-9.]+ us" --fixture predicted -- sh: '$BENCH' "${B[@]}" --no-record
# An empty value was taken as none (--benchmark_out= wrote no file, exit 0); an empty color
# ended Google Benchmark with its usage and exit 0.
bad bench_out_empty 2 "--benchmark_out: an empty value \\(''\\) is not taken" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --no-record --benchmark_out=
bad bench_time_unit_empty 2 "--benchmark_time_unit: an empty value \\(''\\) is not taken" --fixture predicted -- \
  sh: '$BENCH' "${B[@]}" --no-record --benchmark_time_unit=
bad bench_color_empty_in_environment 2 "BENCHMARK_COLOR must be auto, true or false, got ''" --fixture predicted -- \
  sh: 'BENCHMARK_COLOR= $BENCH --db t.db --device model --include-model --no-record'
# --benchmark_out over an export of a --configs folder (by name or hard link) overwrote the suite
# it measured; a new .json file there would be read as an export by the next run. The export is
# intact afterwards.
bad bench_out_is_an_export_of_the_configs_folder 2 "--benchmark_out: refusing to write ex/[^ ]*\\.json: it is the --configs export ex/.* intact" \
  --fixture predicted -- sh: '$MGPU export --db t.db --format json -o ex --include-model > /dev/null && f=$(ls ex/*.json) &&
       $BENCH --configs ex --device model --benchmark_out=$f 2>&1 | tr -d "\n"; rc=${PIPESTATUS[0]};
       $BENCH --configs $f --device model --no-record > /dev/null 2>&1 && echo " intact"; rm -rf ex; exit $rc'
bad bench_out_is_a_hard_link_to_an_export 2 "refusing to write h.json: it is the --configs export ex/" --fixture predicted -- \
  sh: '$MGPU export --db t.db --format json -o ex --include-model > /dev/null && ln $(ls ex/*.json) h.json &&
       $BENCH --configs ex --device model --benchmark_out=h.json; rc=$?; rm -rf ex h.json; exit $rc'
bad bench_out_new_json_in_the_configs_folder 2 "refusing to write ex/nightly.json: it is in the --configs folder ex, whose .json files are the suite's exports" \
  --fixture predicted -- sh: '$MGPU export --db t.db --format json -o ex --include-model > /dev/null &&
       $BENCH --configs ex --device model --benchmark_out=ex/nightly.json; rc=$?; ls ex/nightly.json 2>/dev/null; rm -rf ex; exit $rc'
# A task's status file that is a FIFO (or a symlink to one) blocked status and resume in open()
# for good; now the task is "unreadable", named, as for a folder (timeouts only guard a hang).
bad status_task_status_fifo 0 "task +0 +unreadable .*task-0.status is a FIFO \\(named pipe\\), not the exit code the task writes" \
  --fixture campaign -- sh: 'mkdir -p c-shards && mkfifo c-shards/task-0.status && timeout 120 $MGPU campaign status c.json;
       rc=$?; rm -rf c-shards; exit $rc'
bad status_json_task_status_fifo 0 "\"state\": \"unreadable\"" --fixture campaign -- \
  sh: 'mkdir -p c-shards && mkfifo c-shards/task-0.status && timeout 120 $MGPU campaign status c.json --json;
       rc=$?; rm -rf c-shards; exit $rc'
bad status_task_status_symlink_to_fifo 0 "task +0 +unreadable .*task-0.status is a FIFO" --fixture campaign -- \
  sh: 'mkdir -p c-shards && mkfifo p && ln -s "$PWD/p" c-shards/task-0.status && timeout 120 $MGPU campaign status c.json;
       rc=$?; rm -rf c-shards p; exit $rc'
bad resume_task_status_fifo 0 "#SBATCH --array=0" --fixture campaign --writes -- \
  sh: 'mkdir -p c-shards && mkfifo c-shards/task-0.status && timeout 120 $MGPU campaign resume c.json --partition gpu --dry-run'
# An emulate task too large for the virtual device is refused at plan and submit time (as
# `matmul` refuses it), not by every task on the cluster after GPUs were allocated.
bad plan_emulate_too_big 2 "--device emulate runs the problem itself, and m65536_n65536_k65536_.* needs 24.0 GiB of device memory; the virtual device has 16 GiB" -- \
  campaign plan --arch sm_90a --m 65536 --n 65536 --k 65536 --device emulate --trials 1 -o c.json
bad plan_emulate_suite_one_too_big 2 "m65536_n65536_k65536_.* needs 24.0 GiB of device memory" -- \
  sh: 'printf "m,n,k\n256,256,256\n65536,65536,65536\n" > s.csv && $MGPU campaign plan --arch sm_90a --shapes s.csv --device emulate --trials 1 -o c.json; rc=$?; rm -f s.csv; exit $rc'
bad submit_emulate_too_big 2 "c.json task 0 \\(sm_90a m65536_n65536_k65536_.*\\): --device emulate runs the problem itself.*the virtual device has 16 GiB" \
  --fixture campaign_emulate_huge -- campaign submit c.json --partition gpu --dry-run
bad resume_emulate_too_big 2 "c.json task 0 .*needs 24.0 GiB of device memory" --fixture campaign_emulate_huge -- \
  campaign resume c.json --partition gpu --dry-run
bad plan_emulate_fits 0 "wrote c.json: 1 tasks" --writes -- \
  campaign plan --arch sm_90a --m 256 --n 256 --k 256 --device emulate --trials 1 -o c.json

finish
