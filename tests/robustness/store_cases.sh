#!/usr/bin/env bash
# Bad inputs for the results store and the commands over it (issue 15): damaged, truncated,
# foreign, read-only and locked databases; in-memory and URI paths; outputs that would land on
# the database; numeric options out of range; trials filters that cannot match. Every case
# asserts the exit code, the message, no crash, and (unless --writes) the database and its
# folder unchanged -- so a read-only command that leaves -wal/-shm behind fails here too.
# Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/store_cases.sh
. "$(dirname "$0")/lib.sh"
export MGPU_DB_BUSY_TIMEOUT_MS=300  # locked cases give up after 0.3 s, not the default 10 s
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
MODEL_RUN="matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 2 --seed 2"

sql() { "$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.close()' "$@"; }

# Pages 3 and 4 overwritten with 0xFF: the header is fine, the b-trees are not.
fixture_corrupt() {
  fixture_good
  head -c 8192 /dev/zero | tr '\0' '\377' | dd of="$W/t.db" bs=4096 seek=2 count=2 conv=notrunc status=none
}
# The schema page itself damaged (past the 100-byte header).
fixture_corrupt_schema() {
  fixture_good
  # Page 1 after its 100-byte file header: the schema b-tree, wherever on the page its cells are.
  head -c 3996 /dev/zero | tr '\0' '\377' | dd of="$W/t.db" bs=1 seek=100 count=3996 conv=notrunc status=none
}
fixture_truncated() { fixture_good; truncate -s 6000 "$W/t.db"; }
fixture_no_trials() { fixture_good; sql "$W/t.db" "DROP TABLE trials;"; }
fixture_no_runs() { fixture_good; sql "$W/t.db" "PRAGMA foreign_keys=OFF; DROP TABLE runs;"; }
fixture_no_column() { fixture_good; sql "$W/t.db" "ALTER TABLE trials DROP COLUMN median_ms;"; }
fixture_text() { printf 'not a database, just text long enough to have a header\n%.0s' 1 2 3 > "$W/t.db"; }
fixture_empty_file() { : > "$W/t.db"; }
fixture_foreign() { sql "$W/t.db" "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('mine');"; }
fixture_future() { fixture_good; sql "$W/t.db" "PRAGMA user_version = 99;"; }
# A good database plus a file that is not one, for merges.
fixture_good_and_bad() { fixture_corrupt; mv "$W/t.db" "$W/bad.db"; fixture_good; }
fixture_foreign_out() { fixture_good; mv "$W/t.db" "$W/u.db"; fixture_foreign; }
fixture_locked_out() { fixture_locked; cp "$W/t.db" "$W/u.db"; }
fixture_good_and_blank() { fixture_good; : > "$W/blank.db"; }
fixture_good_into_bad() { fixture_good; mv "$W/t.db" "$W/u.db"; fixture_corrupt; }
# A FIFO with a reader: an export into it must write through, not rename a file over it.
fixture_fifo() {
  fixture_good; mkfifo "$W/pipe"
  (cat "$W/pipe" > /dev/null &)
}
fixture_two_good() { fixture_good; cp "$W/t.db" "$W/u.db"; }
fixture_existing_outputs() {
  fixture_good
  echo "an older export" > "$W/out.json"; echo "old header" > "$W/out.h"; mkdir "$W/dir"
}
fixture_links() { fixture_good; ln -s t.db "$W/link.db"; ln "$W/t.db" "$W/hard.db"; ln -s t.db-wal "$W/wal-link"; }
fixture_report_over_db() { mkdir -p "$W/rep"; W0="$W"; W="$W/rep"; fixture_good; mv "$W/t.db" "$W/index.html"; W="$W0"; }
# Another process holds an exclusive lock (rollback journal, so readers are locked out too);
# it lets go when the case's folder is removed.
fixture_locked() {
  fixture_good
  sql "$W/t.db" "PRAGMA journal_mode=DELETE;"
  (cd "$W" && exec "$PY" -c '
import os, sqlite3, time
c = sqlite3.connect("t.db", isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open("holder-ready", "w").close()
t0 = time.time()
while os.path.exists("t.db") and time.time() - t0 < 120:
    time.sleep(0.05)
' >/dev/null 2>&1 &)
  for _ in $(seq 200); do [ -f "$W/holder-ready" ] && break; sleep 0.05; done
}

# unwritable PATH CMD...: runs CMD while PATH cannot be written, even by root (chattr +i);
# without chattr as root the case fails (exit 99) rather than pretending.
unwritable() {
  local p="$1" rc; shift
  if chattr +i "$p" 2>/dev/null; then
    "$@"; rc=$?; chattr -i "$p"; return $rc
  elif [ "$(id -u)" != 0 ]; then
    chmod a-w "$p"; "$@"; rc=$?; chmod u+w "$p"; return $rc
  fi
  echo "unwritable: cannot make $p unwritable here"; return 99
}
export -f unwritable

# --- In-memory, empty and URI paths: refused by every command that takes a database --------
for db in "" ":memory:" "file::memory:" "file:t.db?mode=memory&cache=shared"; do
  tag="${db:-empty}"; tag="${tag//[^a-z]/_}"
  re="(--db|--output|inputs): an empty value \\(''\\) is not taken|in-memory database|SQLite URI, not a file path"
  bad "matmul_db_$tag" 2 "$re" -- $MODEL_RUN --db "$db"
  bad "best_db_$tag" 2 "$re" -- best --db "$db"
  bad "export_db_$tag" 2 "$re" -- export --db "$db" --format csv -o out.csv
  bad "trials_db_$tag" 2 "$re" -- trials --db "$db"
  bad "regress_db_$tag" 2 "$re" -- regress --db "$db" --baseline 1 --candidate 1
  bad "report_db_$tag" 2 "$re" -- report --db "$db" -o rep
  bad "merge_out_$tag" 2 "$re" --fixture good -- merge '$DB' -o "$db"
  bad "merge_in_$tag" 2 "$re" -- merge "$db" -o out.db
done

# --- Damaged databases: one line naming the file and the problem, nothing written ----------
dmg="t.db is damaged \((quick_check: Page [0-9]+|database disk image is malformed)"
for f in corrupt truncated; do
  bad "matmul_$f" 2 "$dmg" --fixture $f -- $MODEL_RUN --db '$DB'
  bad "best_$f" 2 "$dmg" --fixture $f -- best --db '$DB'
  bad "best_runs_$f" 2 "$dmg" --fixture $f -- best --db '$DB' --runs
  bad "trials_$f" 2 "$dmg" --fixture $f -- trials --db '$DB'
  bad "export_json_$f" 2 "$dmg" --fixture $f -- export --db '$DB' --format json -o out
  bad "export_cpp_$f" 2 "$dmg" --fixture $f -- export --db '$DB' --format cpp -o out.h
  bad "export_csv_$f" 2 "$dmg" --fixture $f -- export --db '$DB' --format csv -o out.csv
  bad "report_$f" 2 "$dmg" --fixture $f -- report --db '$DB' -o rep
  bad "regress_$f" 2 "$dmg" --fixture $f -- regress --db '$DB' --baseline 1 --candidate 1
done
bad merge_damaged_input 2 "bad.db is damaged" --fixture good_and_bad -- merge '$DB' '$W/bad.db' -o out.db
bad merge_damaged_output 2 "t.db is damaged" --fixture good_into_bad -- merge '$W/u.db' -o '$DB'
bad matmul_corrupt_schema 2 "t.db is damaged \(database disk image is malformed" --fixture corrupt_schema -- $MODEL_RUN --db '$DB'
bad best_corrupt_schema 2 "t.db is damaged \(database disk image is malformed" --fixture corrupt_schema -- best --db '$DB'
for f in no_trials no_runs no_column; do
  re="t.db is damaged: no such (table|column)"
  bad "matmul_$f" 2 "$re" --fixture $f -- $MODEL_RUN --db '$DB'
  bad "best_$f" 2 "$re" --fixture $f -- best --db '$DB'
  bad "trials_$f" 2 "$re" --fixture $f -- trials --db '$DB'
  bad "export_$f" 2 "$re" --fixture $f -- export --db '$DB' --format csv -o out.csv
  bad "merge_$f" 2 "$re" --fixture $f -- merge '$DB' -o out.db
done
bad report_no_trials 2 "t.db is damaged: no such table: trials" --fixture no_trials -- report --db '$DB' -o rep
bad regress_no_trials 2 "t.db is damaged: no such table: trials" --fixture no_trials -- regress --db '$DB' --baseline 1 --candidate 1
bad matmul_text_file 2 "cannot use .*t.db as a results database: it is not an SQLite database" --fixture text -- $MODEL_RUN --db '$DB'
bad best_text_file 2 "not an SQLite database" --fixture text -- best --db '$DB'
bad trials_empty_file 2 "t.db holds no results: it is blank" --fixture empty_file -- trials --db '$DB'
# A shard a killed task left blank holds nothing: the merge of the others goes on and says so.
bad merge_blank_shard 0 "skipped .*blank\.db: it is blank" --fixture good_and_blank --writes -- merge '$W/blank.db' '$DB' -o out.db
bad matmul_foreign_sqlite 2 "t.db is (an SQLite database of something else|not an mgpu-tune results database)" --fixture foreign -- $MODEL_RUN --db '$DB'
bad merge_into_foreign_sqlite 2 "t.db is an SQLite database of something else" --fixture foreign_out -- merge '$W/u.db' -o '$DB'
bad best_foreign_sqlite 2 "not an mgpu-tune results database" --fixture foreign -- best --db '$DB'
bad matmul_future_schema 2 "schema version 99, newer than" --fixture future -- $MODEL_RUN --db '$DB'
bad trials_future_schema 2 "schema version 99, newer than" --fixture future -- trials --db '$DB'
bad best_db_is_folder 2 "is a folder, not a results database" -- best --db '$W'
# Round 19, F41: a path the system refuses is said as such (not "does not exist", not SQLite's words).
bad best_db_symlink_loop 2 "cannot use the database l1: Too many levels of symbolic links: it is a loop of symbolic links" -- \
  sh: "ln -s l2 l1 && ln -s l1 l2 && '$MGPU' best --db l1; r=\$?; rm -f l1 l2; exit \$r"
bad matmul_db_name_too_long 2 "its name \\(or the path\\) is longer than this system takes" -- $MODEL_RUN --db "\$W/$(printf 'a%.0s' $(seq 1 300)).db"
bad matmul_db_in_missing_folder 2 "cannot create .*: the folder .*nowhere does not exist" -- $MODEL_RUN --db '$W/nowhere/t.db'

# --- Read-only databases (chattr +i: unwritable even for root) -----------------------------
ro="t.db is read-only .*read-only commands \(best, trials, export, regress, report, merge inputs\) still work on it"
bad matmul_readonly_file 2 "$ro" --fixture good -- sh: unwritable '$DB' '"$MGPU"' $MODEL_RUN --db '$DB'
bad matmul_readonly_folder 2 "t.db is read-only \(its folder .* cannot be written" --fixture good -- sh: unwritable '$W' '"$MGPU"' $MODEL_RUN --db '$DB'
bad merge_into_readonly_file 2 "$ro" --fixture two_good -- sh: unwritable '$DB' '"$MGPU"' merge '$W/u.db' -o '$DB'
bad best_readonly_file_works 0 "\| matmul_sm90|no measured, verified results" --fixture good -- sh: unwritable '$DB' '"$MGPU"' best --db '$DB' --include-model
bad trials_readonly_file_works 0 "4 trials" --fixture good -- sh: unwritable '$DB' '"$MGPU"' trials --db '$DB'
bad trials_readonly_folder_works 0 "4 trials" --fixture good -- sh: unwritable '$W' '"$MGPU"' trials --db '$DB'
bad best_runs_readonly_folder_works 0 "run 1 " --fixture good -- sh: unwritable '$W' '"$MGPU"' best --db '$DB' --runs
bad regress_readonly_folder_works 3 "\| SAME \(PREDICTED\) \|" --fixture good -- sh: unwritable '$W' '"$MGPU"' regress --db '$DB' --baseline 1 --candidate 1 --max-noise 100
bad export_from_readonly_file_works 0 "wrote [0-9]+ trials to .*elsewhere.csv" --writes --fixture good -- sh: unwritable '$DB' '"$MGPU"' export --db '$DB' --format csv --include-model -o '$W/elsewhere.csv'
bad merge_from_readonly_input_works 0 "trials added" --writes --fixture good -- sh: unwritable '$DB' '"$MGPU"' merge '$DB' -o '$W/m.db'
# Reading a writable database leaves no -wal/-shm (lib.sh fails a case on any new file).
bad best_leaves_no_wal 0 "\| matmul_sm90" --fixture good -- best --db '$DB' --include-model
bad trials_leaves_no_wal 0 '"matching": 4' --fixture good -- trials --db '$DB' --json
bad regress_leaves_no_wal 3 "0 slower" --fixture good -- regress --db '$DB' --baseline 1 --candidate 1

# --- Locked by another process ---------------------------------------------------------------
lk="t.db is locked by another process \(waited 0.3 s, MGPU_DB_BUSY_TIMEOUT_MS\)"
bad matmul_locked 2 "$lk" --fixture locked -- $MODEL_RUN --db '$DB'
bad best_locked 2 "$lk" --fixture locked -- best --db '$DB'
bad trials_locked 2 "$lk" --fixture locked -- trials --db '$DB'
bad merge_into_locked 2 "$lk" --fixture locked_out -- merge '$W/u.db' -o '$DB'
bad busy_timeout_not_a_number 2 "MGPU_DB_BUSY_TIMEOUT_MS='soon' must be a whole number" --fixture good -- sh: MGPU_DB_BUSY_TIMEOUT_MS=soon '"$MGPU"' best --db '$DB'

# --- Outputs that would land on the database, or on what is not a file ------------------------
for fmt in json cpp csv; do
  bad "export_${fmt}_onto_db" 2 "refusing to write .*t.db: it is the results database" --fixture good -- export --db '$DB' --format $fmt -o '$DB'
  bad "export_${fmt}_onto_symlink" 2 "refusing to write .*link.db: it is the results database" --fixture links -- export --db '$DB' --format $fmt -o '$W/link.db'
  bad "export_${fmt}_onto_hardlink" 2 "refusing to write .*hard.db: it is the results database" --fixture links -- export --db '$DB' --format $fmt -o '$W/hard.db'
done
# An export to a FIFO nobody reads is refused, not an endless wait (round 4, J05).
bad export_to_fifo_no_reader 2 "is a FIFO \(named pipe\) that no program is reading" --writes --fixture good -- sh: \
  "mkfifo f && timeout -k 2 20 '$MGPU' export --db '\$DB' --format cpp --include-model -o f; r=\$?; rm -f f; exit \$r"
bad export_onto_wal 2 "it is the -wal file of the results database" --fixture good -- export --db '$DB' --format csv -o '$DB-wal'
bad export_onto_shm 2 "it is the -shm file of the results database" --fixture good -- export --db '$DB' --format cpp -o '$DB-shm'
bad export_onto_wal_link 2 "it is the -wal file of the results database" --fixture links -- export --db '$DB' --format csv -o '$W/wal-link'
bad export_db_via_symlink_onto_db 2 "refusing to write .*t.db: it is the results database" --fixture links -- export --db '$W/link.db' --format csv -o '$DB'
bad export_json_onto_existing_file 2 "out.json is a file, but --format json writes a folder" --fixture existing_outputs -- export --db '$DB' --format json -o '$W/out.json'
bad export_cpp_onto_folder 2 "dir is a folder: give a file path" --fixture existing_outputs -- export --db '$DB' --format cpp -o '$W/dir'
bad export_csv_into_missing_folder 2 "cannot write .*: the folder .*nowhere does not exist" --fixture good -- export --db '$DB' --format csv -o '$W/nowhere/x.csv'
bad export_csv_under_a_file 2 "cannot write f\.txt/x\.csv: .*/f\.txt is a file, not a folder, so nothing can be under it" --fixture good --writes -- \
  sh: "echo keep > f.txt && '$MGPU' export --db t.db --format csv -o f.txt/x.csv; r=\$?; [ \"\$(cat f.txt)\" = keep ] || exit 99; exit \$r"
bad export_cpp_over_existing_file 0 "wrote 0 entries to .*out.h" --writes --fixture existing_outputs -- export --db '$DB' --format cpp -o '$W/out.h'
bad report_onto_db 2 "refusing to write .*t.db: it is the results database" --fixture good -- report --db '$DB' -o '$DB'
bad report_over_db_named_index 2 "refusing to write .*index.html: it is the results database" --fixture report_over_db -- report --db '$W/rep/index.html' -o '$W/rep'
bad merge_onto_input_symlink 2 "refusing to write .*link.db: it is the input database" --fixture links -- merge '$DB' -o '$W/link.db'
bad merge_onto_input_hardlink 2 "refusing to write .*hard.db: it is the input database" --fixture links -- merge '$DB' -o '$W/hard.db'
bad merge_onto_input_wal 2 "it is the -wal file of the input database" --fixture good -- merge '$DB' -o '$DB-wal'
EMPTY_RE="an empty value \\(''\\) is not taken"
bad export_json_empty_output 2 "error: --output: $EMPTY_RE" --fixture good -- export --db '$DB' --format json -o ""
bad export_csv_empty_output 2 "error: --output: $EMPTY_RE" --fixture good -- export --db '$DB' --format csv -o ""
bad report_empty_output 2 "error: --output: $EMPTY_RE" --fixture good -- report --db '$DB' -o ""
# An empty run is no run: as a uuid prefix it matched every run (with one run, that one).
bad trials_run_empty 2 "error: --run: $EMPTY_RE" --fixture good -- trials --db '$DB' --run ''
bad regress_baseline_empty 2 "error: --baseline: $EMPTY_RE" --fixture good -- regress --db '$DB' --baseline '' --candidate 1
bad regress_candidate_empty 2 "error: --candidate: $EMPTY_RE" --fixture good -- regress --db '$DB' --baseline 1 --candidate ''
bad trials_template_empty 2 "error: --template: $EMPTY_RE" --fixture good -- trials --db '$DB' --template ''
bad export_study_empty 2 "error: --study: $EMPTY_RE" --fixture good -- export --db '$DB' --format t4 --study '' -o '$W/x.json'
bad export_shapes_empty 2 "error: --shapes: $EMPTY_RE" --fixture good -- export --db '$DB' --format json --shapes '' -o '$W/x'
bad merge_input_empty 2 "error: inputs: an empty value \\(''\\) is not taken: give one$" --fixture good -- merge '$DB' '' -o '$W/out.db'
bad import_t4_empty 2 "error: --t4: $EMPTY_RE" -- import --t4 '' --db '$DB'
bad import_kernel_empty 2 "error: --kernel: $EMPTY_RE" -- import --t4 r.json --kernel '' --db '$DB'
bad trials_run_zero_padded 0 "^4 trials$" --fixture good -- trials --db '$DB' --run 01
bad export_csv_to_stdout 0 "^trial,run,created_at" --fixture good -- export --db '$DB' --format csv --include-model -o /dev/stdout
bad export_csv_into_fifo 0 "wrote 4 trials" --fixture fifo -- sh: '"$MGPU"' export --db '$DB' --format csv --include-model -o '$W/pipe' '&&' test -p '$W/pipe'

# --- Numeric options: finite and in range ----------------------------------------------------
for v in 0 -1 nan inf -inf 101 1e309; do
  bad "regress_threshold_$v" 2 "error: --threshold: must be a finite number greater than 0 and at most 100, got '$v'" --fixture good -- regress --db '$DB' --baseline 1 --candidate 1 --threshold "$v"
done
bad regress_threshold_text 2 "error: --threshold: must be a finite number greater than 0 and at most 100, got 'lots'" --fixture good -- regress --db '$DB' --baseline 1 --candidate 1 --threshold lots
for v in -1 nan inf 150; do
  bad "regress_max_noise_$v" 2 "error: --max-noise: must be a finite number between 0 and 100, got '$v'" --fixture good -- regress --db '$DB' --baseline 1 --candidate 1 --max-noise "$v"
done
for v in 0 -3 nan 1e12 2.5; do
  bad "trials_limit_$v" 2 "error: .*--limit" --fixture good -- trials --db '$DB' --limit "$v"
done

# --- trials filters that cannot match ----------------------------------------------------------
bad trials_unknown_status 2 "error: --status: .*wonderful" --fixture good -- trials --db '$DB' --status wonderful
bad trials_unknown_source 2 "error: --source: .*gpu" --fixture good -- trials --db '$DB' --source gpu
bad trials_unknown_arch 2 "unknown arch 'sm_42'" --fixture good -- trials --db '$DB' --arch sm_42
bad trials_unknown_template 2 "no template 'matmul_sm70' in .*t.db \(it has: matmul_sm90" --fixture good -- trials --db '$DB' --template matmul_sm70
bad trials_unknown_run 2 "no run '999' in .*t.db" --fixture good -- trials --db '$DB' --run 999
bad trials_missing_db 2 "database .*absent.db does not exist" -- trials --db '$W/absent.db'
bad trials_needs_db 2 "error: --db is required" -- trials
bad trials_filters_match_nothing_is_fine 0 "^0 trials$" --fixture good -- trials --db '$DB' --status timeout --limit 5
bad trials_limit_says_so 0 "showing the newest 1 of 4 matching trials" --fixture good -- trials --db '$DB' --arch sm_90 --source model --limit 1

# --- a database path that is no regular file: refused at once (a FIFO without a writer hung in
# open(), and Ctrl-C could not end it; /dev/null swallowed every row and exited 1) ---
fixture_db_fifo() { mkfifo "$W/t.db"; }
fixture_db_fifo_link() { mkfifo "$W/p"; ln -s p "$W/t.db"; }
fixture_db_socket() { "$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/t.db"; }
fixture_good_and_fifo() { fixture_good; mkfifo "$W/p.db"; }
NOHANG="timeout -s KILL 30"  # a regression hangs: killed, the case fails as "killed by signal 9"
FIFO_MSG="t.db is a FIFO \\(named pipe\\), not a results database"
bad matmul_db_fifo 2 "$FIFO_MSG" --fixture db_fifo -- sh: $NOHANG '"$MGPU"' $MODEL_RUN --db '$DB'
bad matmul_db_fifo_through_symlink 2 "$FIFO_MSG" --fixture db_fifo_link -- sh: $NOHANG '"$MGPU"' $MODEL_RUN --db '$DB'
bad best_db_fifo 2 "$FIFO_MSG" --fixture db_fifo -- sh: $NOHANG '"$MGPU"' best --db '$DB'
bad trials_db_fifo 2 "$FIFO_MSG" --fixture db_fifo -- sh: $NOHANG '"$MGPU"' trials --db '$DB'
bad export_db_fifo 2 "$FIFO_MSG" --fixture db_fifo -- sh: $NOHANG '"$MGPU"' export --db '$DB' --format csv -o '$W/x.csv'
bad regress_db_fifo 2 "$FIFO_MSG" --fixture db_fifo -- sh: $NOHANG '"$MGPU"' regress --db '$DB' --baseline 1 --candidate 1
bad report_db_fifo 2 "$FIFO_MSG" --fixture db_fifo -- sh: $NOHANG '"$MGPU"' report --db '$DB' -o '$W/rep'
bad verify_db_fifo 2 "$FIFO_MSG" --fixture db_fifo -- sh: $NOHANG '"$MGPU"' verify matmul --arch sm_90a --config "'{}'" --db '$DB'
bad merge_input_fifo 2 "p.db is a FIFO \\(named pipe\\)" --fixture good_and_fifo -- sh: $NOHANG '"$MGPU"' merge '$DB' '$W/p.db' -o '$W/out.db'
bad merge_output_fifo 2 "p.db is a FIFO \\(named pipe\\)" --fixture good_and_fifo -- sh: $NOHANG '"$MGPU"' merge '$DB' -o '$W/p.db'
bad matmul_db_socket 2 "t.db is a socket, not a results database" --fixture db_socket -- $MODEL_RUN --db '$DB'
bad matmul_db_dev_null 2 "/dev/null is a character device, not a results database" -- $MODEL_RUN --db /dev/null
bad best_db_dev_null 2 "/dev/null is a character device, not a results database" -- best --db /dev/null
bad merge_into_dev_null 2 "/dev/null is a character device" --fixture good -- merge '$DB' -o /dev/null
fixture_t4_file() { echo '{"schema_version": "1.0.0", "results": [{"configuration": {"x": 1}, "times": {"runtimes": [1]}}]}' > "$W/r.json"; }
bad import_into_dev_null 2 "/dev/null is a character device" --fixture t4_file -- import --t4 '$W/r.json' --db /dev/null


# --- output that cannot be written is a failure, not a silent success (exit 0 before) ---
bad best_stdout_full 1 "cannot write the output to stdout \\(No space left on device\\)" --fixture good -- sh: '"$MGPU"' best --db '$DB' --include-model '>' /dev/full
bad trials_stdout_closed 1 "cannot write the output to stdout \\(Bad file descriptor\\)" --fixture good -- sh: '"$MGPU"' trials --db '$DB' '>&-'
bad space_json_stdout_full 1 "cannot write the output to stdout" -- sh: '"$MGPU"' space matmul --arch sm_90a --json '>' /dev/full
bad help_stdout_full 1 "cannot write the output to stdout" -- sh: '"$MGPU"' --help '>' /dev/full
# Round 20, F57: a report lost to a full stdout is the work failing (1), whatever verdict it held
# (regress of predictions: 3, "no verdict").
bad regress_predictions_to_dev_full 1 "cannot write the output to stdout" --fixture good -- sh: '"$MGPU"' regress --db t.db --baseline 1 --candidate 1 '>' /dev/full
bad export_csv_to_dev_full 1 "cannot write /dev/full: .*No space left on device" --fixture good -- export --db '$DB' --format csv --include-model -o /dev/full

# --- damaged rows are refused where rows are read; the C++ header holds database text as literals ---
fixture_median() { fixture_good; sql "$W/t.db" "UPDATE trials SET median_ms = $1, min_ms = $1, mean_ms = $1 WHERE id = 1;"; }
fixture_median_negative() { fixture_median -1; }
fixture_median_text() { fixture_median "'abc'"; }
fixture_median_nan() { fixture_median "'nan'"; }
fixture_median_zero() { fixture_median 0; }
fixture_problem_sizes() { fixture_good; sql "$W/t.db" "UPDATE problems SET m = 9223372036854775807, n = -5, k = 0;"; }
DAMAGED_TIME="t.db is damaged: trial 1 has median_ms"
bad best_negative_median 2 "$DAMAGED_TIME -1 \\(a time must be a positive finite number\\)" --fixture median_negative -- best --db '$DB' --include-model
bad best_text_median 2 "$DAMAGED_TIME 'abc' \\(a time must be" --fixture median_text -- best --db '$DB' --include-model
bad best_nan_median 2 "$DAMAGED_TIME 'nan' \\(a time must be" --fixture median_nan -- best --db '$DB' --include-model
bad best_zero_median 2 "$DAMAGED_TIME 0 \\(a time must be" --fixture median_zero -- best --db '$DB' --include-model
# Round 20, F52: a json or cpp export with every timed row of a template this binary does not
# build wrote "0 entries", unsaid why.
fixture_foreign_template() { fixture_good; sql "$W/t.db" "UPDATE templates SET name = 'foo';"; }
bad export_json_foreign_template_said 0 "wrote 0 entries to .*its [0-9]+ timed trials are of templates this mgpu-tune does not build -- foo \\([0-9]+\\)" \
  --fixture foreign_template --writes -- export --db '$DB' --format json -o '$W/x' --include-model
# Round 20, F45 (rest): text no writer could produce. A message of a NUL and half characters went
# into the CSV raw (a binary file); it is written \xNN, the file valid UTF-8. A template name of
# 5000 characters (or empty) was printed whole by every table: a damaged row.
fixture_raw_message() { fixture_good; sql "$W/t.db" "UPDATE trials SET message = X'41FFFE00C042' || 'tail' WHERE id = 1;"; }
fixture_long_template() { fixture_good; sql "$W/t.db" "UPDATE templates SET name = printf('%.5000c', 'x');"; }
fixture_empty_template() { fixture_good; sql "$W/t.db" "UPDATE templates SET name = '';"; }
bad export_csv_raw_message_escaped 0 "^A.xff.xfe.x00.xc0Btail valid$" --fixture raw_message --writes -- \
  sh: "'$MGPU' export --db t.db --format csv --include-model -o x.csv > /dev/null && grep -ao 'A[^,]*tail' x.csv | tr -d '\\n'; '$PY' -c 'open(\"x.csv\", encoding=\"utf-8\").read(); print(\" valid\")'"
bad best_long_template_name 2 "t.db is damaged: trial 1 has a template named 'x{40}' \\(5000 bytes; a name is 1 to 200 printable characters\\)" \
  --fixture long_template -- best --db '$DB' --include-model
bad trials_empty_template_name 2 "t.db is damaged: trial 1 has a template named '' \\(0 bytes" --fixture empty_template -- trials --db '$DB'
# Round 20, F61: an ok model (or GPU) trial with no time -- best dropped its problem without a
# word, csv listed it timeless, a tuner resumed over it. Only the virtual device's verdicts
# (source emulate, no clock) are ok without a time: the emulate case below stays readable.
fixture_median_null() { fixture_median NULL; }
NULL_TIME="t.db is damaged: trial 1 is an ok model trial with no median_ms \\(only the virtual device's verdicts have no time\\)"
bad best_null_median 2 "$NULL_TIME" --fixture median_null -- best --db '$DB' --include-model
bad trials_null_median 2 "$NULL_TIME" --fixture median_null -- trials --db '$DB'
bad export_csv_null_median 2 "$NULL_TIME" --fixture median_null -- export --db '$DB' --format csv -o '$W/x.csv' --include-model
bad resume_null_median 2 "$NULL_TIME" --fixture median_null -- \
  matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 6 --seed 1 --db '$DB'
bad export_cpp_negative_median 2 "$DAMAGED_TIME -1 " --fixture median_negative -- export --db '$DB' --format cpp -o '$W/x.h' --include-model
bad export_json_negative_median 2 "$DAMAGED_TIME -1 " --fixture median_negative -- export --db '$DB' --format json -o '$W/x' --include-model
bad trials_problem_sizes 2 "t.db is damaged: trial 1 has a problem with m = 9223372036854775807 \\(a size is 1 to 2147483647\\)" \
  --fixture problem_sizes -- trials --db '$DB'
fixture_config_quote() {
  fixture_good
  sql "$W/t.db" "UPDATE configs SET json = replace(json, '\"cluster_dimension\":\"', '\"cluster_dimension\":\"M\\\"; } int evil() { return 1; } //');"
}
fixture_arch_quote() { fixture_good; sql "$W/t.db" "UPDATE environments SET arch = 'sm_90a\"';"; }
fixture_dtype_quote() { fixture_good; sql "$W/t.db" "UPDATE problems SET dtype = 'f64\"';"; }
fixture_config_null() { fixture_good; sql "$W/t.db" "UPDATE configs SET json = json_set(json, '\$.tile_k', json('null'));"; }
fixture_config_object() { fixture_good; sql "$W/t.db" "UPDATE configs SET json = json_set(json, '\$.tile_k', json('{}'));"; }
CPP_COMPILES='"$MGPU" export --db "$DB" --format cpp -o x.h --include-model --all-versions > /dev/null && printf "#include \"x.h\"\nint main() {}\n" > use.cc && ${CXX:-c++} -std=c++17 -Wall -Werror -fsyntax-only use.cc && echo "compiles: $(grep -c evil x.h) evil"'
# A config value no template accepts is a damaged row (results/stored_config.h), refused before
# any header text is made.
bad export_cpp_config_quote 2 "t.db is damaged: trial 1 has a config its template matmul_sm90 does not accept .*cluster_dimension must be" \
  --fixture config_quote --writes -- sh: "$CPP_COMPILES"
bad export_cpp_arch_quote 0 "^compiles: 0 evil$" --fixture arch_quote --writes -- sh: "$CPP_COMPILES"
# A dtype no matmul has (here with a quote that once escaped the header's literal) is a damaged
# row (round 8, F18), refused before any header text is made.
bad export_cpp_dtype_quote 2 "t.db is damaged: trial [0-9]+ has a problem of dtype" --fixture dtype_quote -- \
  export --db '$DB' --format cpp -o '$W/x.h' --include-model --all-versions
bad export_cpp_config_null 2 "t.db is damaged: trial [0-9]+ has an unreadable config .*'tile_k' must be an integer or a string" \
  --fixture config_null -- export --db '$DB' --format cpp -o '$W/x.h' --include-model
bad export_cpp_config_object 2 "t.db is damaged: trial [0-9]+ has an unreadable config .*'tile_k' must be an integer or a string" \
  --fixture config_object -- export --db '$DB' --format cpp -o '$W/x.h' --include-model
# --- round 3: a stored config is judged by one rule (results/stored_config.h) wherever it is read;
# a trial whose config or environment row is missing is damaged, never dropped without a word ---
fixture_cfg() { fixture_good; sql "$W/t.db" "UPDATE configs SET json = '$1' WHERE id = (SELECT config_id FROM trials WHERE id = 1);"; }
fixture_cfg_not_json() { fixture_cfg '{not json'; }
fixture_cfg_array() { fixture_cfg '[1,2]'; }
fixture_cfg_unknown_key() { fixture_good; sql "$W/t.db" "UPDATE configs SET json = json_set(json, '\$.zzz', 1) WHERE id = (SELECT config_id FROM trials WHERE id = 1);"; }
fixture_cfg_tile_huge() { fixture_good; sql "$W/t.db" "UPDATE configs SET json = json_set(json, '\$.tile_m', 9223372036854775807) WHERE id = (SELECT config_id FROM trials WHERE id = 1);"; }
UNREADABLE_CFG="t.db is damaged: trial 1 has an unreadable config"
NOT_ACCEPTED_CFG="t.db is damaged: trial 1 has a config its template matmul_sm90 does not accept"
bad best_cfg_not_json 2 "$UNREADABLE_CFG \\(\\{not json\\)" --fixture cfg_not_json -- best --db '$DB' --include-model
bad best_cfg_array 2 "$UNREADABLE_CFG \\(\\[1,2\\]\\)" --fixture cfg_array -- best --db '$DB' --include-model
bad trials_json_cfg_not_json 2 "$UNREADABLE_CFG \\(\\{not json\\)" --fixture cfg_not_json -- trials --db '$DB' --json
bad best_json_cfg_array 2 "$UNREADABLE_CFG" --fixture cfg_array -- best --db '$DB' --include-model --json
bad best_cfg_unknown_key 2 "$NOT_ACCEPTED_CFG .*zzz" --fixture cfg_unknown_key -- best --db '$DB' --include-model
bad best_cfg_tile_huge 2 "$NOT_ACCEPTED_CFG .*tile_m" --fixture cfg_tile_huge -- best --db '$DB' --include-model
bad export_cpp_cfg_tile_huge 2 "$NOT_ACCEPTED_CFG" --fixture cfg_tile_huge -- export --db '$DB' --format cpp --include-model -o '$W/x.h'
bad export_json_cfg_not_json 2 "$UNREADABLE_CFG" --fixture cfg_not_json -- export --db '$DB' --format json --include-model -o '$W/x'
bad report_cfg_not_json 2 "$UNREADABLE_CFG" --fixture cfg_not_json -- report --db '$DB' -o '$W/rep'
bad report_cfg_unknown_key 2 "$NOT_ACCEPTED_CFG" --fixture cfg_unknown_key -- report --db '$DB' -o '$W/rep'
bad matmul_resume_cfg_not_json 2 "t.db is damaged: trial 1 has an unreadable config" --fixture cfg_not_json --writes -- \
  matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 6 --seed 1 --db '$DB'
fixture_trial_dangling_config() { fixture_good; sql "$W/t.db" "PRAGMA foreign_keys=OFF; UPDATE trials SET config_id = 9999 WHERE id = 2;"; }
fixture_trial_dangling_env() { fixture_good; sql "$W/t.db" "PRAGMA foreign_keys=OFF; UPDATE trials SET environment_id = 9999 WHERE id = 2;"; }
DANGLING="t.db is damaged: trial 2 refers to a"
bad trials_json_dangling_config 2 "$DANGLING config row that is not there" --fixture trial_dangling_config -- trials --db '$DB' --json
bad trials_dangling_env 2 "$DANGLING environment row that is not there" --fixture trial_dangling_env -- trials --db '$DB'
bad best_dangling_config 2 "$DANGLING config row" --fixture trial_dangling_config -- best --db '$DB' --include-model
bad merge_dangling_config 2 "$DANGLING config row that is not there" --fixture trial_dangling_config -- merge '$DB' -o m.db
# --- round 3: text that is not UTF-8 (a path is any bytes; a row may hold anything) reaches every
# JSON writer as U+FFFD, never as an "internal error" after the work is done ---
FF=$'\xff'; REPL=$'\xef\xbf\xbd'  # U+FFFD, as the JSON shows the byte
fixture_good_ff() { fixture_good; mv "$W/t.db" "$W/$FF.db"; }
fixture_device_ff() { fixture_good; sql "$W/t.db" "UPDATE environments SET device_name = CAST(device_name || x'ff' AS TEXT);"; }
fixture_created_ff() { fixture_good; sql "$W/t.db" "UPDATE trials SET created_at = CAST(x'ff00ff' AS TEXT) WHERE id = 1;"; }
fixture_good_t4() { fixture_good; fixture_t4_file; }
bad matmul_json_db_not_utf8 0 "\"db\": \"$REPL\\.db\"" --writes -- $MODEL_RUN --json --db "$FF.db"
bad trials_json_db_not_utf8 0 "\"db\": \"$REPL\\.db\"" --fixture good_ff -- trials --json --db "$FF.db"
bad best_runs_json_db_not_utf8 0 "--db=\\\\\"$REPL\\.db" --writes -- \
  sh: '"$MGPU"' $MODEL_RUN --db "$FF.db" '>' /dev/null '2>&1' '&&' '"$MGPU"' best --runs --json --db "$FF.db"
bad merge_json_input_not_utf8 0 "\"$REPL\\.db\"" --fixture good_ff --writes -- merge "$FF.db" --json -o m.db
bad export_json_flag_output_not_utf8 0 "\"$REPL\\.csv\"" --fixture good --writes -- export --db '$DB' --format csv --include-model --json -o "$FF.csv"
# (A kernel name is a template name, so one not UTF-8 is refused; a device's name is free text.)
bad import_kernel_not_utf8 2 "is not a template name: up to 64 letters" --fixture good_t4 -- import --t4 r.json --kernel "k$FF" --json --db u.db
bad import_json_device_not_utf8 0 "\"d$REPL\"" --fixture good_t4 --writes -- import --t4 r.json --device "d$FF" --json --db '$DB'
bad best_json_device_not_utf8 0 "H100 SXM$REPL" --fixture device_ff -- best --db '$DB' --json --include-model
bad export_json_device_not_utf8 0 "wrote [0-9]+ entries" --fixture device_ff --writes -- \
  sh: '"$MGPU"' export --db '"$DB"' --format json --include-model -o j '&&' grep -c "'"H100 SXM$REPL"'" j/*.json
bad report_device_not_utf8 0 "wrote .*index.html" --fixture device_ff --writes -- report --db '$DB' -o '$W/rep'
bad trials_json_created_at_not_utf8 0 "\"created_at\": \"$REPL" --fixture created_ff -- trials --db '$DB' --json
# The embedded Python gets a path as bytes (surrogateescape), writes where it was told.
bad report_output_not_utf8 0 "^ok index$" --fixture good --writes -- \
  sh: '"$MGPU"' report --db '"$DB"' --json -o "$FF"rep '>' /dev/null '&&' test -s "$FF"rep/index.html '&&' echo ok index
# MPLBACKEND is not report's business: it draws with Agg, which it chooses itself.
bad report_mplbackend_garbage 0 "wrote .*index.html" --fixture good --writes -- sh: MPLBACKEND=nonsense '"$MGPU"' report --db '"$DB"' -o rep
# A finite number that underflows to a denormal is still a finite number (strtod's ERANGE).
bad regress_max_noise_denormal 3 "\| (SAME|UNSTABLE) \(PREDICTED\) \|" --fixture good -- regress --db '$DB' --baseline 1 --candidate 1 --max-noise 4.9e-324
bad matmul_time_budget_denormal 1 "the time budget \(4.94066e-324 s\) ended before any trial ran" --writes -- $MODEL_RUN --time-budget 4.9e-324 --db '$DB'
# Two merges of the same input into one new output at once: both succeed (the second adds what
# the first has not), never "UNIQUE constraint failed: trials.uuid". Five tries: the race was
# hit in 2 of 5.
bad merge_twice_at_once_into_a_new_output 0 "tries ok" --fixture good --writes -- sh: \
  "for i in 1 2 3 4 5; do rm -f o.db o.db-wal o.db-shm; '$MGPU' merge t.db -o o.db 2>a.err & a=\$!;
     '$MGPU' merge t.db -o o.db 2>b.err || { cat b.err; exit 1; }; wait \$a || { cat a.err; exit 1; }; done; echo tries ok"
# --- round 4: --device replay:DB with a results database (battery r4 A16-A24). A replay answers
# from rows that hold a result (a time, or a config's failure) and searches only the configs it
# answers; virtual-device rows (no time) are no answer -- replayed as ok trials of 0 ms they
# made the target database "damaged" for every reader (A23, DATA-LOSS) ---
fixture_good_emulated() {  # e.db: the good rows as a --device emulate run stores them (ok, no time)
  fixture_good; mv "$W/t.db" "$W/e.db"
  sql "$W/e.db" "UPDATE trials SET source = 'emulate', median_ms = NULL, min_ms = NULL, mean_ms = NULL, noise = NULL;"
}
fixture_good_and_emulated() { fixture_good_emulated; fixture_good; }
REPLAY_RUN="matmul --arch sm_90a --m 256 --n 256 --k 256 --strategy random --seed 7 --trials 3"
MODEL_RUN6="matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --seed 2 --trials 6"  # 2 beyond the fixture's 4
bad replay_emulate_rows_into_existing_db 2 "replay:e.db: nothing to replay: its [0-9]+ trials of matmul_sm90 at m256_n256_k256_bf16_bf16_kn hold no result.*nothing was written" \
  --fixture good_and_emulated -- $REPLAY_RUN --device replay:e.db --db t.db
bad replay_emulate_rows_into_new_db 2 "replay:e.db: nothing to replay" --fixture good_emulated -- $REPLAY_RUN --device replay:e.db --db r.db
bad replay_into_itself 2 "replay:t.db is the results database \(--db t.db\).*nothing was written" --fixture good -- $REPLAY_RUN --device replay:t.db --db t.db
bad replay_into_itself_other_name 2 "is the results database" --fixture good -- $REPLAY_RUN --device 'replay:$DB' --db ./t.db
bad replay_other_problem 2 "replay:t.db: nothing to replay: it holds no trial of matmul_sm90 at m64_n64_k64_bf16_bf16_kn; it has results for m256_n256_k256_bf16_bf16_kn" \
  --fixture good -- matmul --arch sm_90a --m 64 --n 64 --k 64 --device replay:t.db --trials 2 --db r.db
# The search runs over the configs the database answers: no fake "not in the replay database"
# invalid_config rows counted against the budget; every trial of the 4 answered, none failed.
for s in random tpe-native exhaustive; do
  bad "replay_results_db_answers_$s" 0 "^ok invalid=0 replay=4$" --fixture good --writes -- sh: \
    '"$MGPU"' matmul --arch sm_90a --m 256 --n 256 --k 256 --strategy $s --trials 10 --device replay:t.db --db r.db -q '>' /dev/null '&&' \
    "$PY" -c "'import sqlite3; c = sqlite3.connect(\"r.db\"); q = lambda s: c.execute(s).fetchone()[0]; print(\"ok invalid=%d replay=%d\" % (q(\"SELECT count(*) FROM trials WHERE status = \\\"invalid_config\\\"\"), q(\"SELECT count(*) FROM trials WHERE source = \\\"replay\\\" AND status = \\\"ok\\\" AND median_ms > 0\")))'"
done
# Replayed predictions are said to be predictions (A24).
bad replay_predictions_labelled 0 "note: replay:t.db holds cost-model predictions \(source model\).*the replayed times are predictions, nothing was measured" \
  --fixture good --writes -- $REPLAY_RUN --device replay:t.db --db r.db
# --- round 4: trials --status/--source take every status and source the store records (A01-A04) ---
for st in hazard deadlock unsupported env_error; do
  bad "trials_status_$st" 0 "^0 trials$" --fixture good -- trials --db '$DB' --status "$st"
done
bad trials_source_emulate 0 "^4 trials$" --fixture good_emulated -- trials --db e.db --source emulate
bad trials_source_imported 0 "^0 trials$" --fixture good -- trials --db '$DB' --source imported
bad trials_status_typo_still_refused 2 "--status: haz not in \{ok,.*hazard,deadlock,unsupported\}" --fixture good -- trials --db '$DB' --status haz
# --- round 4: errors on the claims connection name the database as given, never the SQLite
# URI (file:/abs/t.db?mode=rwc) it is opened by (AL01, B14, E09) ---
fixture_claims_trigger() { fixture_good; sql "$W/t.db" "CREATE TRIGGER nope BEFORE INSERT ON claims BEGIN SELECT raise(abort, 'claims are off'); END;"; }
bad claims_error_names_the_path 2 "^mgpu-tune: error: cannot use t\.db as a results database: claims are off$" --fixture claims_trigger --writes -- \
  $MODEL_RUN6 --db t.db
# A run whose trials are committed and whose run row cannot be closed: the write failed (exit 1), said so (B13).
fixture_run_end_trigger() { fixture_good; sql "$W/t.db" "CREATE TRIGGER nope BEFORE UPDATE OF ended_at ON runs BEGIN SELECT raise(abort, 'nope'); END;"; }
bad run_end_refused_is_exit_1 1 "cannot record the end of run [0-9]+ in t\.db: nope; the trials it committed stay" --fixture run_end_trigger --writes -- \
  $MODEL_RUN6 --db t.db
# A file-size limit mid-run: exit 1 naming t.db, not its URI (E09).
bad efbig_mid_run_names_the_path 1 "error: (I/O error on|the disk holding) t\.db[: ]" --fixture good --writes -- \
  sh: "trap '' XFSZ; ulimit -f \$(( \$(stat -c %s t.db) / 1024 + 8 )); '$MGPU' matmul --arch sm_90a --m 512 --n 512 --k 512 --device model --no-compile --strategy random --trials 400 -q --db t.db 2>&1 | grep -v 'file:' ; exit \${PIPESTATUS[0]}"
# --- round 4: a hot rollback journal (a writer killed mid-transaction) is rolled back, as any
# SQLite client does, not reported as a read-only file (B16, B17, B19) ---
fixture_hot_journal() {
  fixture_good
  "$PY" - "$W/t.db" <<'PY'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.isolation_level = None
c.execute("PRAGMA journal_mode=DELETE"); c.execute("PRAGMA cache_size=1"); c.execute("BEGIN")
c.execute("UPDATE trials SET median_ms = 999, message = hex(randomblob(2000))")
c.execute("CREATE TABLE filler(x)")
c.execute("INSERT INTO filler SELECT randomblob(4000) FROM (WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 200) SELECT i FROM r)")
os._exit(0)
PY
  [ -s "$W/t.db-journal" ] || { echo "fixture_hot_journal: no hot journal"; exit 1; }
}
bad hot_journal_trials 0 "^4 trials$" --fixture hot_journal --writes -- trials --db t.db
bad hot_journal_best 0 "\| matmul_sm90 .* model " --fixture hot_journal --writes -- best --db t.db --include-model
bad hot_journal_matmul 0 "2 new trials \(4 resumed" --fixture hot_journal --writes -- $MODEL_RUN6 --db t.db
bad hot_journal_times_rolled_back 0 "^999 0$" --fixture hot_journal --writes -- sh: \
  '"$MGPU"' trials --db t.db '>' /dev/null '&&' "$PY" -c "'import sqlite3; print(999, sqlite3.connect(\"t.db\").execute(\"SELECT count(*) FROM trials WHERE median_ms = 999\").fetchone()[0])'"
# --- round 4: a reader of a database with a foreign -wal leaves no -shm behind (B15) ---
fixture_foreign_wal() {  # the -wal of another SQLite database (a table of notes) beside t.db
  fixture_good
  "$PY" - "$W" <<'PY'
import os, shutil, sqlite3, sys
w = sys.argv[1]
c = sqlite3.connect(os.path.join(w, "o.db")); c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE notes(x)"); c.execute("INSERT INTO notes VALUES('mine')"); c.commit()
shutil.copy(os.path.join(w, "o.db-wal"), os.path.join(w, "t.db-wal")); os._exit(0)
PY
  rm -f "$W"/o.db*
}
for c in trials best; do
  bad "foreign_wal_${c}_leaves_no_shm" 2 "t\.db is not an mgpu-tune results database" --fixture foreign_wal -- $c --db t.db
done
# --- round 4: an unreadable database says why (S03); root reads anything, so as nobody ---
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  bad unreadable_db_says_why 2 "cannot open the database t\.db: cannot read it \(Permission denied\)" --fixture good -- \
    sh: chmod 600 t.db '&&' chmod 755 . '&&' chmod o+x .. '&&' setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent MGPU_CACHE_DIR=/nonexistent '"$MGPU"' best --db t.db
fi
# --- round 4: merge refuses an input row with an unreadable config before it writes (W_deepcfg) ---
fixture_bad_config_json() { fixture_good; sql "$W/t.db" "UPDATE configs SET json = '{not json' WHERE id = (SELECT config_id FROM trials ORDER BY id LIMIT 1);"; }
bad merge_unreadable_config 2 "t\.db is damaged: trial 1 has an unreadable config \(\{not json\)" --fixture bad_config_json -- merge t.db -o m.db
# --- round 4: regress between predictions says so, and is no verdict: exit 3, as nightly.sh
# reports predictions (P03: "SAME", exit 0 -- a pass) ---
bad regress_predictions_labelled 3 "^\| SAME \(PREDICTED\) \| matmul_sm90 " --fixture good -- regress --db '$DB' --baseline 1 --candidate 1
bad regress_predictions_no_verdict 3 "no verdict: all [0-9]+ comparisons are of cost-model predictions \(both runs predicted\): nothing was measured, and predictions are never a pass" \
  --fixture good -- regress --db '$DB' --baseline 1 --candidate 1
bad regress_predictions_not_counted 3 "^\*\*0 slower, 0 faster, 0 same, 0 unstable\*\* \(measured comparisons\)" --fixture good -- regress --db '$DB' --baseline 1 --candidate 1
bad regress_predictions_json 3 '"both_predicted": [1-9]' --fixture good -- regress --db '$DB' --baseline 1 --candidate 1 --json
# --- round 4: a merge into a new output that fails (file-size limit, full disk) leaves no
# schema-less database behind (E11, E14) ---
bad merge_new_output_efbig_leaves_nothing 1 "error: (I/O error on|the disk holding) m\.db" --fixture good -- \
  sh: "trap '' XFSZ; ulimit -f \$(( \$(stat -c %s t.db) / 2048 )); '$MGPU' merge t.db -o m.db"
# --- round 4: a v5 database whose source CHECK is spaced otherwise is the same constraint:
# migrated, not refused as exit 1 without a file name (B11) ---
fixture_v5_respaced() {
  "$PY" - "$SRC/results/schema.cc" "$W/t.db" <<'PY'
import re, sqlite3, sys
steps = re.findall(r'R"sql\((.*?)\)sql"', open(sys.argv[1]).read(), re.S)[:5]
c = sqlite3.connect(sys.argv[2]); c.isolation_level = None
for s in steps: c.executescript(s)
c.execute("PRAGMA user_version = 5")
sql = c.execute("SELECT sql FROM sqlite_schema WHERE name = 'trials'").fetchone()[0]
assert "'emulate')" in sql, "the v5 trials table has no 'emulate') to respace"
c.execute("PRAGMA writable_schema = 1")
c.execute("UPDATE sqlite_schema SET sql = replace(sql, \"'emulate')\", \"'emulate' )\") WHERE name = 'trials'")
c.execute("PRAGMA writable_schema = 0"); c.close()
PY
}
bad v5_check_respaced_migrates 0 "2 new trials" --fixture v5_respaced --writes -- $MODEL_RUN --db t.db
# --- round 4: report on a plateau (every prediction equal) writes its report; the importance
# picture it cannot compute is a note, not "Python render failed" (AE04) ---
fixture_plateau() {
  "$MGPU" matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --strategy random --seed 3 --trials 9 -q --db "$W/t.db" > /dev/null 2>&1
  sql "$W/t.db" "UPDATE trials SET median_ms = 0.005, min_ms = 0.005, mean_ms = 0.005, samples_json = '[0.005]' WHERE status = 'ok';"
}
bad report_plateau 0 "note: parameter importance: every trial has the same time \(a plateau\)" --fixture plateau --writes -- report --db t.db -o rep
# --- round 5: one input given twice was read by two connections, which left its -wal/-shm ---
bad merge_same_input_twice 2 "the input database .*t.db is given twice: give each input once" --fixture good -- merge '$DB' '$DB' -o '$W/m.db'
fixture_good_and_link() { fixture_good; ln -s t.db "$W/l.db"; }
bad merge_same_file_by_symlink 2 "the input databases .*t.db and .*l.db are the same file" --fixture good_and_link -- merge '$DB' '$W/l.db' -o '$W/m.db'
# A database whose results are all of an earlier template version was "no results in t.db".
fixture_good_earlier_version() { fixture_good; sqlite3 "$W/t.db" "update templates set source_hash = '0000000000000000'"; }
bad best_only_earlier_versions 0 "no results of the current template versions in .*t.db: --all-versions shows what it holds" \
  --fixture good_earlier_version -- best --db '$DB' --include-model
# Round 8 (F10): for a database of imported results each message named a flag that alone showed
# nothing, and one said "only of earlier ones" of rows that are no version of ours.
fixture_imported_only() {
  printf '{"schema_version": "1.0.0", "results": [{"configuration": {"bx": 32}, "times": {"runtimes": [1.5]}, "invalidity": "correct", "correctness": 1}]}\n' > "$W/k_T4.json"
  "$MGPU" import --t4 "$W/k_T4.json" --db "$W/t.db" > /dev/null
}
bad best_imported_only_names_both_flags 0 "no measured, verified results of the current template versions in .*t.db: --include-model --all-versions shows what it holds" \
  --fixture imported_only -- best --db '$DB'
bad best_imported_only_include_model 0 "no results of the current template versions in .*t.db: --all-versions shows what it holds" \
  --fixture imported_only -- best --db '$DB' --include-model
bad best_imported_only_both_flags_show_it 0 "\| k \| [^|]* \| t4 \|" --fixture imported_only -- best --db '$DB' --include-model --all-versions
# --- model-check: the cost model against measured trials (read-only; the kept H200 lease) ---
fixture_lease() { gunzip -c "$SRC/results/leases/2026-11-26-h200-decode.db.gz" > "$W/t.db"; cp "$W/t.db" "$W/u.db"; }
bad model_check_lease 0 "\\| m1_n4096_k14336_bf16_bf16_nk \\| NVIDIA H200 \\(H200 SXM\\) \\| 14 \\| -?[01]\\.[0-9]{2} \\| [0-9.]+ \\| data_parallel 14, " \
  --fixture lease -- model-check --db '$DB'
# The same trials in two databases: each config counts once (at the median of its medians).
bad model_check_config_counts_once 0 "\\| m1_n4096_k14336_bf16_bf16_nk \\| NVIDIA H200 \\(H200 SXM\\) \\| 14 \\|" \
  --fixture lease -- model-check --db '$DB' --db '$W/u.db'
# Every config measured equally fast: no order to correlate, "-" rather than a number.
fixture_lease_flat() { fixture_lease; sqlite3 "$W/t.db" "update trials set median_ms = 0.05"; }
bad model_check_flat_times 0 "\\| m1_n4096_k14336_bf16_bf16_nk \\| NVIDIA H200 \\(H200 SXM\\) \\| 14 \\| - \\|" --fixture lease_flat -- model-check --db '$DB'
fixture_lease_bad_config() { fixture_lease; sqlite3 "$W/t.db" "update configs set json = replace(json, '\"tile_k\":', '\"tile_k\":1')"; }
bad model_check_rejected_config_left_out 0 "^38 measured trial\\(s\\) left out:" --fixture lease_bad_config -- model-check --db '$DB'
bad model_check_predictions_only 0 "no measured trial: the databases hold no ok trial with source cuda" --fixture good -- model-check --db '$DB'
bad model_check_json 0 "\"weighted_spearman\": 0\\.[0-9]+" --fixture lease -- model-check --db '$DB' --json
bad model_check_damaged 2 "t.db is damaged" --fixture corrupt -- model-check --db '$DB'
bad model_check_no_db 2 "--db is required" -- model-check
# --- round 7: a database's side files (-journal, -wal, -shm) that are no regular files are
# refused before SQLite opens anything, naming the file (F1: a FIFO -journal blocked every
# command in SQLite's open, and one SIGTERM did not end it; F8: a FIFO -shm or -wal, or a
# -journal folder, was "disk I/O error", exit 1, and a reader left a new -wal) ---
fixture_side() {  # fixture_side SUFFIX fifo|dir|fifo_link|devnull_link
  fixture_good
  case "$2" in
    fifo) mkfifo "$W/t.db$1" ;;
    dir) mkdir "$W/t.db$1" ;;
    fifo_link) mkfifo "$W/p"; ln -s p "$W/t.db$1" ;;
    devnull_link) ln -s /dev/null "$W/t.db$1" ;;
  esac
}
fixture_journal_fifo() { fixture_side -journal fifo; }
fixture_wal_fifo() { fixture_side -wal fifo; }
fixture_shm_fifo() { fixture_side -shm fifo; }
fixture_journal_dir() { fixture_side -journal dir; }
fixture_wal_fifo_link() { fixture_side -wal fifo_link; }
fixture_shm_devnull_link() { fixture_side -shm devnull_link; }
SIDE_RE() { echo "t\\.db$1 is $2, not a file SQLite can use beside the database t\\.db \\(its [^)]+\\): nothing was opened"; }
FIFO_NAME="a FIFO \\(named pipe\\)"
for c in "best --include-model" trials "export --format csv -o x.csv" "regress --baseline 1 --candidate 1" "report -o rep" "model-check" "merge t.db -o"; do
  tag="${c%% *}"; tag="${tag//-/_}"
  args="--db t.db"; [ "$tag" = merge ] && args="m.db"
  bad "side_journal_fifo_$tag" 2 "$(SIDE_RE -journal "$FIFO_NAME")" --fixture journal_fifo -- sh: $NOHANG '"$MGPU"' $c $args
done
bad side_journal_fifo_matmul 2 "$(SIDE_RE -journal "$FIFO_NAME")" --fixture journal_fifo -- sh: $NOHANG '"$MGPU"' $MODEL_RUN --db t.db
bad side_journal_fifo_import 2 "$(SIDE_RE -journal "$FIFO_NAME")" --fixture journal_fifo -- sh: \
  "echo '{\"schema_version\": \"1.0.0\", \"results\": [{\"configuration\": {\"x\": 1}, \"times\": {\"runtimes\": [1]}}]}' > r.json && $NOHANG '$MGPU' import --t4 r.json --db t.db; r=\$?; rm -f r.json; exit \$r"
bad side_journal_fifo_verify 2 "$(SIDE_RE -journal "$FIFO_NAME")" --fixture journal_fifo -- sh: $NOHANG '"$MGPU"' verify matmul --arch sm_90a --config "'{}'" --db t.db
bad side_shm_fifo_trials 2 "$(SIDE_RE -shm "$FIFO_NAME")" --fixture shm_fifo -- sh: $NOHANG '"$MGPU"' trials --db t.db
bad side_shm_fifo_best 2 "$(SIDE_RE -shm "$FIFO_NAME")" --fixture shm_fifo -- sh: $NOHANG '"$MGPU"' best --db t.db
bad side_wal_fifo_trials 2 "$(SIDE_RE -wal "$FIFO_NAME")" --fixture wal_fifo -- sh: $NOHANG '"$MGPU"' trials --db t.db
# matmul refuses it before the search-space walk (seconds): well inside 5 s.
bad side_wal_fifo_matmul_before_walk 2 "$(SIDE_RE -wal "$FIFO_NAME")" --fixture wal_fifo -- sh: timeout -s KILL 120 '"$MGPU"' $MODEL_RUN --db t.db
bad side_journal_dir_matmul 2 "$(SIDE_RE -journal "a folder")" --fixture journal_dir -- sh: $NOHANG '"$MGPU"' $MODEL_RUN --db t.db
bad side_journal_dir_best 2 "$(SIDE_RE -journal "a folder")" --fixture journal_dir -- best --db t.db
bad side_wal_fifo_through_symlink 2 "$(SIDE_RE -wal "$FIFO_NAME")" --fixture wal_fifo_link -- sh: $NOHANG '"$MGPU"' trials --db t.db
bad side_shm_dev_null_link 2 "$(SIDE_RE -shm "a character device")" --fixture shm_devnull_link -- trials --db t.db
# Beside a database reached through a symlink, the side file is the real file's: named so.
fixture_link_to_journal_fifo() { fixture_journal_fifo; ln -s t.db "$W/l.db"; }
bad side_journal_fifo_of_symlinked_db 2 "/t\\.db-journal is $FIFO_NAME, not a file SQLite can use beside the database l\\.db" \
  --fixture link_to_journal_fifo -- sh: $NOHANG '"$MGPU"' best --db l.db
# Their twins: regular side files are used as before.
fixture_empty_journal() { fixture_good; : > "$W/t.db-journal"; }
bad side_empty_journal_file_works 0 "^4 trials$" --fixture empty_journal -- trials --db t.db
bad side_empty_journal_file_matmul_works 0 "2 new trials" --fixture empty_journal --writes -- $MODEL_RUN6 --db t.db
# A -shm without its -wal (what a crash leaves): the reader reads the file as it is and creates
# no -wal beside it (lib.sh fails the case on a new file).
fixture_stray_shm() { fixture_good; head -c 32768 /dev/zero > "$W/t.db-shm"; }
bad stray_shm_trials_creates_no_wal 0 "^4 trials$" --fixture stray_shm -- trials --db t.db
bad stray_shm_best_creates_no_wal 0 "\\| matmul_sm90" --fixture stray_shm -- best --db t.db --include-model
bad stray_shm_matmul_works 0 "2 new trials" --fixture stray_shm --writes -- $MODEL_RUN6 --db t.db

# --- round 7: run ids match a uuid prefix as text (F3: LIKE made '%' and '_' wildcards, and
# '%9a1b' matched in the middle of a uuid) ---
fixture_run_uuids() {  # run 1 0a1b2c3d-..., run 2 0a1b9999-...: "0a1b" names both
  fixture_good
  sql "$W/t.db" "UPDATE runs SET uuid = '0a1b2c3d-0000-4000-8000-000000000001' WHERE id = 1;
    INSERT INTO runs(uuid, kind, arguments, started_at, tool_version) VALUES ('0a1b9999-0000-4000-8000-000000000002', 'tune', '', '2026-11-26T00:00:00Z', '0.1.0');"
}
for r in '%' '_' '*' '0a1%' '0a1b_c' '%2c3d' '2c3d' '0000-000000000001'; do
  tag="${r//%/pct}"; tag="${tag//_/us}"; tag="${tag//\*/star}"
  bad "trials_run_literal_$tag" 2 "no run '$(printf '%s' "$r" | sed 's/[*]/\\*/g')' in t\\.db" --fixture run_uuids -- trials --db t.db --run "$r"
done
bad regress_run_wildcards 2 "no run '%' in t\\.db" --fixture run_uuids -- regress --db t.db --baseline '%' --candidate '%'
bad trials_run_prefix_ambiguous 2 "run '0a1b' is ambiguous: 2 runs match" --fixture run_uuids -- trials --db t.db --run 0a1b
# Their twins: a real prefix, in either case, and the whole uuid.
bad trials_run_prefix_works 0 "^4 trials$" --fixture run_uuids -- trials --db t.db --run 0a1b2
bad trials_run_prefix_upper_case_works 0 "^4 trials$" --fixture run_uuids -- trials --db t.db --run 0A1B2C
bad trials_run_whole_uuid_works 0 "^4 trials$" --fixture run_uuids -- trials --db t.db --run 0a1b2c3d-0000-4000-8000-000000000001
bad trials_run_other_prefix_works 0 "^0 trials$" --fixture run_uuids -- trials --db t.db --run 0a1b9

# --- round 7: a reader whose stdout closes early (| head) is no SIGPIPE death leaving -wal/-shm
# (F7): the command stops, closes the database and exits 1 quietly ---
fixture_big() {  # 20,000 imported trials: a listing far beyond a pipe's 64 KiB
  if [ ! -f "$ROOT/big.db" ]; then
    "$PY" -c 'import json, sys; json.dump({"schema_version": "1.0.0", "metadata": {"timeunit": "seconds"}, "results": [{"configuration": {"bx": i}, "times": {"runtimes": [0.001]}, "invalidity": "correct", "correctness": 1} for i in range(20000)]}, open(sys.argv[1], "w"))' "$ROOT/big_T4.json"
    "$MGPU" import --t4 "$ROOT/big_T4.json" --db "$ROOT/big.db" > "$ROOT/big.log" 2>&1 || { echo "fixture_big: import failed:"; cat "$ROOT/big.log"; exit 1; }
  fi
  cp "$ROOT/big.db" "$W/t.db"
}
HEAD_CLOSED() {  # HEAD_CLOSED 'HEAD ARGS' MGPU-ARGS...: exit code and stderr size of mgpu-tune ... | head
  local h="$1"; shift
  echo "'$MGPU' $* 2> err | head $h > /dev/null; r=\${PIPESTATUS[0]}; echo \"exit \$r, stderr \$(wc -c < err) bytes\"; cat err; rm -f err; exit \$r"
}
bad trials_stdout_closed_early 1 "^exit 1, stderr 0 bytes$" --fixture big -- sh: "$(HEAD_CLOSED '-n 1' trials --db t.db)"
bad trials_json_stdout_closed_early 1 "^exit 1, stderr 0 bytes$" --fixture big -- sh: "$(HEAD_CLOSED '-c 100' trials --db t.db --json)"
# export -o /dev/stdout writes the pipe itself: a write that fails is exit 1, said (it was 141).
bad export_to_stdout_closed_early 1 "^mgpu-tune: error: cannot write /dev/stdout: writing failed \\(Broken pipe\\)$" --fixture big -- sh: "$(HEAD_CLOSED '-c 10' export --db t.db --format csv --include-model --all-versions -o /dev/stdout)"
# Twins: a reader that takes everything, and output that fits before head leaves.
bad trials_stdout_read_whole 0 "^exit 0, stderr 0 bytes$" --fixture big -- sh: "$(HEAD_CLOSED '-n 100000' trials --db t.db)"
bad trials_small_stdout_head 0 "^exit 0, stderr 0 bytes$" --fixture good -- sh: "$(HEAD_CLOSED '-n 1' trials --db t.db)"

# --- round 7: regress of two runs with no config in common is nothing to compare: exit 2, not a
# silent "0 slower, 0 faster, 0 same" pass (F11); nightly.sh's --fail-on-unstable keeps exit 4 ---
fixture_lease1() { gunzip -c "$SRC/results/leases/2026-11-26-h200-decode.db.gz" > "$W/t.db"; }
NOTHING_RE="nothing to compare: runs 1 and 2 have no config in common .*the baseline has 14 such configs, the candidate 14\\)"
bad regress_nothing_in_common 2 "$NOTHING_RE" --fixture lease1 -- regress --db t.db --baseline 1 --candidate 2
bad regress_nothing_in_common_json 2 "$NOTHING_RE" --fixture lease1 -- regress --db t.db --baseline 1 --candidate 2 --json
bad regress_nothing_in_common_prints_nothing 2 "^stdout 0 bytes$" --fixture lease1 -- sh: \
  "'$MGPU' regress --db t.db --baseline 1 --candidate 2 > o 2>/dev/null; r=\$?; echo \"stdout \$(wc -c < o) bytes\"; rm -f o; exit \$r"
bad regress_nothing_in_common_fail_on_unstable 4 "no verdict: the runs share no measured config" --fixture lease1 -- \
  regress --db t.db --baseline 1 --candidate 2 --fail-on-unstable
# The twin: runs with configs in common are compared as before.
bad regress_measured_runs_in_common 0 "^\\*\\*0 slower, 0 faster, 14 same, 0 unstable\\*\\*" --fixture lease1 -- regress --db t.db --baseline 2 --candidate 2 --max-noise 100

# --- round 7: --db path problems say what they are, before matmul's search-space walk (F15) ---
fixture_dangling() { ln -s nowhere/x.db "$W/dang.db"; }
fixture_dangling_into_file() { : > "$W/f"; ln -s f/x.db "$W/dang.db"; }
DANGLING_RE="cannot use the database dang\\.db: it is a symbolic link to nowhere/x\\.db, whose folder .*/nowhere does not exist"
bad matmul_db_dangling_symlink_before_walk 2 "$DANGLING_RE" --fixture dangling -- sh: timeout -s KILL 120 '"$MGPU"' $MODEL_RUN --db dang.db
bad best_db_dangling_symlink 2 "$DANGLING_RE" --fixture dangling -- best --db dang.db
bad matmul_db_symlink_into_file 2 "it is a symbolic link to f/x\\.db, whose folder .*/f is a file, not a folder" --fixture dangling_into_file -- $MODEL_RUN --db dang.db
bad best_db_trailing_slash 2 "cannot use the database t\\.db/: the trailing '/' makes it a folder's path, but .*/t\\.db is a file \\(give it without the '/'\\)" --fixture good -- best --db t.db/
bad matmul_db_trailing_slash 2 "the trailing '/' makes it a folder's path, but .*/t\\.db is a file" --fixture good -- sh: timeout -s KILL 120 '"$MGPU"' $MODEL_RUN --db t.db/
bad trials_db_under_file 2 "cannot use the database t\\.db/x\\.db: .*/t\\.db is a file, not a folder, so nothing can be under it" --fixture good -- trials --db t.db/x.db
bad matmul_new_db_trailing_slash 2 "cannot use the database new\\.db/: a path ending in '/' names a folder" -- $MODEL_RUN --db new.db/
# --- round 8 (F4): the shape suite is an input too: an export refuses to write over it -- by
# name, through a symlink, as a hard link, or as a file of a json export's folder -- exit 2,
# nothing written ---
SUITE='[{"m":256,"n":256,"k":256}]'
fixture_shapes() {
  fixture_good; printf '%s' "$SUITE" > "$W/s.json"; ln -s s.json "$W/sl.h"; ln "$W/s.json" "$W/hl.h"
  mkdir "$W/ej"; printf '%s' "$SUITE" > "$W/ej/model_h100_sxm__matmul_sm90.json"
}
bad export_cpp_onto_shapes 2 "refusing to write s.json: it is the shape suite s.json" --fixture shapes -- \
  export --db '$DB' --format cpp --include-model --shapes s.json -o s.json
bad export_cpp_onto_shapes_symlink 2 "refusing to write sl.h: it is the shape suite s.json" --fixture shapes -- \
  export --db '$DB' --format cpp --include-model --shapes s.json -o sl.h
bad export_cpp_onto_shapes_hardlink 2 "refusing to write hl.h: it is the shape suite s.json" --fixture shapes -- \
  export --db '$DB' --format cpp --include-model --shapes s.json -o hl.h
bad export_json_onto_shapes_in_folder 2 "refusing to write ej/model_h100_sxm__matmul_sm90.json: it is the shape suite" --fixture shapes -- \
  export --db '$DB' --format json --include-model --shapes ej/model_h100_sxm__matmul_sm90.json -o ej
# --- round 8 (F6, F14): outputs past a file-size limit (`ulimit -f`, with SIGXFSZ as the shell
# has it: the tool ignores it itself) are a full disk: exit 1 in one line naming the file, not
# a kill (153) or a Python traceback; nothing left behind -- no database, -wal/-shm or
# temporary file, no empty folder (without --writes the case also asserts no new file). The
# database is in rollback-journal mode where a reader under a limit below 32 KiB could not make
# its -shm (and merge, which reads WAL databases, is given 48 KiB).
fixture_good_journal() { fixture_good; sql "$W/t.db" "PRAGMA journal_mode=DELETE;"; }
bad merge_past_file_size_limit 1 "^mgpu-tune: error: (the disk holding|I/O error on) .*m\.db.* nothing left$" --fixture two_good -- sh: \
  "(ulimit -f 48; exec '$MGPU' merge t.db u.db -o m.db) 2>&1 | tr -d '\\n'; r=\${PIPESTATUS[0]}; ls -A | grep -q '^m\\.db' || echo ' nothing left'; exit \$r"
bad export_json_past_file_size_limit 1 "^mgpu-tune: error: cannot write out/.*File too large\) nothing left$" --fixture good_journal -- sh: \
  "(ulimit -f 1; exec '$MGPU' export --db t.db --include-model --format json -o out) 2>&1 | tr -d '\\n'; r=\${PIPESTATUS[0]}; test -e out || echo ' nothing left'; exit \$r"
bad export_cpp_past_file_size_limit 1 "^mgpu-tune: error: cannot write out\.h: writing failed \(File too large\)$" --fixture good_journal -- sh: \
  "ulimit -f 1; exec '$MGPU' export --db t.db --include-model --format cpp -o out.h"
bad report_past_file_size_limit 1 "^mgpu-tune: error: cannot write the report in rep: File too large \(a file-size limit, ulimit -f\): no report was written nothing left$" --fixture good_journal -- sh: \
  "(ulimit -f 4; exec '$MGPU' report --db t.db -o rep) 2>&1 | tr -d '\\n'; r=\${PIPESTATUS[0]}; test -e rep || echo ' nothing left'; exit \$r"
# Out of memory (ulimit -v) while drawing: the report, or one line -- out of memory, or the
# Python module that could not load -- and no folder; never Python's traceback. Where memory
# runs out moves with the machine, so a range of limits, each taking either way.
bad report_out_of_memory_one_line 0 "^limits tried$" --fixture good -- sh: \
  "for v in 350000 420000 480000 520000 560000 620000 700000; do rm -rf rep; (ulimit -v \$v; exec '$MGPU' report --db t.db -o rep) > o 2>&1; r=\$?; \
   if [ \$r = 0 ]; then test -s rep/index.html || { echo \"limit \$v: exit 0 without index.html\"; exit 97; }; \
   elif [ \$r = 1 ]; then [ \$(wc -l < o) = 1 ] && grep -Eq '^mgpu-tune: error: (out of memory: this process may use at most [0-9]+ MiB \(ulimit -v\)|the embedded Python .* cannot import)' o || { echo \"limit \$v: exit 1 but not one line:\"; head -5 o; exit 98; }; \
     test -e rep && { echo \"limit \$v: rep left behind\"; exit 96; }; \
   else echo \"limit \$v: exit \$r\"; head -5 o; exit 99; fi; done; rm -rf rep o; echo 'limits tried'"
# Twins: a symlink into a folder that is there is created through; the file without its '/' reads.
fixture_symlink_into_folder() { mkdir "$W/d"; ln -s d/y.db "$W/l.db"; }
bad matmul_db_symlink_into_folder_works 0 "2 new trials" --fixture symlink_into_folder --writes -- sh: '"$MGPU"' $MODEL_RUN --db l.db '&&' test -f d/y.db
bad best_db_without_trailing_slash_works 0 "\\| matmul_sm90" --fixture good -- best --db t.db --include-model
# Round 8 (F18): a problem row whose key disagrees with its sizes was exported and benchmarked as
# either shape, and a tuning run then failed with exit 1 "could not store a row in problems"; an
# unknown dtype likewise; a negative noise reached the report's plotting as a Python ValueError.
fixture_key_vs_sizes() { fixture_good; sql "$W/t.db" "UPDATE problems SET m = 512;"; }
fixture_unknown_dtype() { fixture_good; sql "$W/t.db" "UPDATE problems SET dtype = 'int4', key = replace(key, '_bf16_bf16_', '_int4_bf16_');"; }
fixture_negative_noise() { fixture_good; sql "$W/t.db" "UPDATE trials SET noise = -5 WHERE id = 1;"; }
# A status the tool never writes (battery round 15, F1: read as a failed verification by some,
# it stopped a tuner that copied it after the tuner had written): damage for every reader and
# for the tuner before it writes.
fixture_unknown_status() { fixture_good; sql "$W/t.db" "UPDATE trials SET status = 'Ok' WHERE id = 1;"; }
bad best_unknown_status 2 "t\.db is damaged: trial 1 has an unknown status 'Ok' \(ok, compile_error" \
  --fixture unknown_status -- best --db '$DB' --include-model
bad trials_row_unknown_status 2 "t\.db is damaged: trial 1 has an unknown status 'Ok'" --fixture unknown_status -- trials --db '$DB'
bad tuner_unknown_status 2 "t\.db is damaged: trial 1 has an unknown status 'Ok'" --fixture unknown_status -- \
  $MODEL_RUN --db '$DB'
bad replay_from_unknown_status 2 "t\.db is damaged: trial 1 has an unknown status 'Ok'" --fixture unknown_status -- \
  matmul --arch sm_90a --m 256 --n 256 --k 256 --device 'replay:$DB' --no-compile --trials 4 --seed 1 --db u.db
bad best_problem_key_vs_sizes 2 "t\.db is damaged: trial 1 has the problem key 'm256_n256_k256_bf16_bf16_kn', which disagrees with its sizes and types \(m512_n256_k256_bf16_bf16_kn\)" \
  --fixture key_vs_sizes -- best --db '$DB' --include-model
bad export_problem_key_vs_sizes 2 "which disagrees with its sizes and types" --fixture key_vs_sizes -- export --db '$DB' --include-model --format json -o out
bad tune_problem_key_vs_sizes 2 "is damaged: .*(disagrees with its sizes and types|has sizes or types other than the key says)" \
  --fixture key_vs_sizes -- $MODEL_RUN --db '$DB'
bad best_unknown_dtype 2 "is damaged: trial 1 has a problem of dtype 'int4'" --fixture unknown_dtype -- best --db '$DB' --include-model
bad report_negative_noise 2 "is damaged: trial 1 has noise -5 \(a relative spread: 0 or more, finite\)" \
  --fixture negative_noise -- report --db '$DB' -o rep

# Battery round 14. A kernel name is a template name (F1): one with "../" was imported, and the
# json export wrote its file outside -o, over a file there; nothing is created for the refusal.
bad import_kernel_name_climbs_out 2 "the kernel name '\.\./\.\./keep' is not a template name" --fixture imported_only -- \
  import --t4 k_T4.json --db u.db --kernel ../../keep
bad import_kernel_name_with_slash 2 "the kernel name 'my/kern' is not a template name" --fixture imported_only -- \
  import --t4 k_T4.json --db u.db --kernel my/kern
bad import_kernel_name_dot 2 "the kernel name '\.hidden' is not a template name" --fixture imported_only -- \
  import --t4 k_T4.json --db u.db --kernel .hidden
bad import_kernel_name_plain 0 "imported 1 trials of my-kern\.v2 on k" --fixture imported_only --writes -- \
  import --t4 k_T4.json --db u.db --kernel my-kern.v2
# Such names already in a database (older tool, hand edit): the file's name is made of slugs, in -o.
fixture_climbing_template() {
  fixture_imported_only
  sql "$W/t.db" "UPDATE templates SET name = '../../keep';"
  echo '{"precious": 1}' > "$W/keep.json"
}
bad export_json_names_stay_in_the_folder 0 "^\./keep\.json \./out/k________keep\.json$" --fixture climbing_template --writes -- \
  sh: "'$MGPU' export --db t.db --format json --all-versions --include-model -o out > /dev/null && grep -q precious keep.json && echo \$(find . -name '*.json' ! -name k_T4.json | sort)"
# Two templates whose names make one file name: refused, nothing written over.
fixture_two_templates_one_slug() {
  fixture_imported_only
  "$MGPU" import --t4 "$W/k_T4.json" --db "$W/t.db" --kernel kk > /dev/null
  sql "$W/t.db" "UPDATE templates SET name = 'a/b' WHERE name = 'k'; UPDATE templates SET name = 'a_b' WHERE name = 'kk';"
}
bad export_json_two_templates_one_file 2 "would be written to one file, k__a_b\.json" --fixture two_templates_one_slug -- \
  export --db '$DB' --format json --all-versions --include-model -o out

# A table too long for stdout's buffer, to a full disk (F3): the write fails inside the printing,
# said as the short table's is at the last flush.
fixture_many_trials() {
  "$MGPU" matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 40 --seed 1 \
    --db "$W/t.db" > /dev/null || { echo "fixture_many_trials: the model run failed"; exit 1; }
}
bad trials_long_table_to_full_disk 1 "^mgpu-tune: error: cannot write the output to stdout \(No space left on device\)$" \
  --fixture many_trials -- sh: "'$MGPU' trials --db t.db > /dev/full"
bad help_to_full_disk 1 "^mgpu-tune: error: cannot write the output to stdout \(No space left on device\)$" \
  -- sh: "'$MGPU' --help > /dev/full"
bad trials_short_table_to_full_disk 1 "^mgpu-tune: error: cannot write the output to stdout \(No space left on device\)$" \
  --fixture many_trials -- sh: "'$MGPU' trials --db t.db --limit 2 > /dev/full"

# best --all-versions tells a template's versions apart (F8): the source hash, stale marked.
fixture_two_versions() {
  fixture_good
  sql "$W/t.db" "INSERT INTO templates(name, source_hash, backend_hash) SELECT name, '0ld0ld0ld0ld0ld0', backend_hash FROM templates WHERE id = 1;
                 UPDATE trials SET template_id = (SELECT max(id) FROM templates) WHERE id = 1;"
}
bad best_all_versions_shows_the_version 0 "^\| matmul_sm90 \| 0ld0ld0ld0ld \(stale\) \| m256.*" \
  --fixture two_versions -- best --db '$DB' --include-model --all-versions
bad best_all_versions_names_the_column 0 "^\| template \| version \| problem \|" --fixture two_versions -- \
  best --db '$DB' --include-model --all-versions
bad best_all_versions_imported_is_not_stale 0 "^\| k \| t4 \| t4 \| " --fixture imported_only -- \
  best --db '$DB' --include-model --all-versions
bad best_current_versions_has_no_version_column 0 "^\| template \| problem \|" --fixture two_versions -- \
  best --db '$DB' --include-model

finish
