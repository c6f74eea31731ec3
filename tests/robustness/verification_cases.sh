#!/usr/bin/env bash
# Bad inputs around verification in best / export (issue 17): --require-verified with csv, with
# a bad value, onto the database, onto a file where a folder goes; unverified rows refused with
# exit 1 and every output untouched; a database whose best config failed on the virtual device
# (skipped, and said so); an older schema (no verification key: every row "none").
# Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/verification_cases.sh
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3

sql() { "$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.close()' "$@"; }

# Every prediction keyed as the virtual device keys its trials (one kernel per config).
KEYED="UPDATE trials SET kernel_hash = 'kernel' || config_id, problem_class = 'aligned';"
# A virtual-device trial of the given status copying the key of the given trials.
emulated() {
  echo "INSERT INTO trials (uuid, run_id, template_id, problem_id, config_id, environment_id, status, source,
          message, created_at, kernel_hash, problem_class)
        SELECT uuid || '-emulated', run_id, template_id, problem_id, config_id, environment_id, '$1', 'emulate',
          CASE '$1' WHEN 'ok' THEN '' ELSE '$1: a stage refilled while wgmma still reads it' END, created_at,
          kernel_hash, problem_class FROM trials WHERE source = 'model' AND $2;"
}
FASTEST="id = (SELECT id FROM trials WHERE source = 'model' AND status = 'ok' ORDER BY median_ms LIMIT 1)"

fixture_with_header() { fixture_good; printf '// yesterday\n' > "$W/out.h"; }
fixture_with_file() { fixture_good; printf 'a file, not a folder\n' > "$W/out"; }
# Every prediction verified on the virtual device.
fixture_verified() { fixture_good; sql "$W/t.db" "$KEYED $(emulated ok 1)"; }
# The fastest prediction's kernel has a hazard; the others are verified.
fixture_failed() { fixture_good; sql "$W/t.db" "$KEYED $(emulated ok "NOT ($FASTEST)") $(emulated hazard "$FASTEST")"; }
# Schema 4: before trials carried the verification key.
fixture_schema4() {
  fixture_good
  sql "$W/t.db" "DROP TABLE kernel_evidence; DROP INDEX trials_by_kernel; ALTER TABLE trials DROP COLUMN problem_class;
                 ALTER TABLE trials DROP COLUMN kernel_hash; ALTER TABLE problems DROP COLUMN fields; ALTER TABLE problems DROP COLUMN flops; PRAGMA user_version = 4;"
}

bad export_require_verified_csv 2 "--require-verified goes with --format json, cpp or pack" --fixture good \
  -- export --db '$DB' --format csv -o out.csv --require-verified
bad export_require_verified_value 2 "require-verified" --fixture good \
  -- export --db '$DB' --format cpp -o out.h --require-verified=maybe
bad export_require_verified_unverified_cpp 1 \
  "error: --require-verified: [0-9]+ of [0-9]+ rows are not verified on hardware or on the virtual device, nothing was written: matmul_sm90 .*\(none\)" \
  --fixture with_header -- export --db '$DB' --format cpp -o out.h --include-model --require-verified
bad export_require_verified_unverified_json 1 "rows are not verified .*nothing was written" --fixture good \
  -- sh: '$MGPU export --db t.db --format json -o out --include-model --require-verified; rc=$?; [ ! -e out ] || echo "out was made"; exit $rc'
bad export_require_verified_onto_database 2 "database" --fixture good \
  -- export --db '$DB' --format cpp -o '$DB' --include-model --require-verified
bad export_require_verified_folder_is_a_file 2 "is a file, but --format json writes a folder" --fixture with_file \
  -- export --db '$DB' --format json -o out --include-model --require-verified
bad export_require_verified_schema4 1 "rows are not verified" --fixture schema4 \
  -- export --db '$DB' --format cpp -o out.h --include-model --require-verified
bad best_schema4_rows_are_unverified 0 "\| model \| none \|" --fixture schema4 \
  -- best --db '$DB' --include-model
bad best_skips_a_failed_config 0 "1 rows skipped: failed verification on the virtual device \(1 configs: .* at aligned: hazard\)" \
  --fixture failed -- best --db '$DB' --include-model
bad best_json_stays_one_document 0 "^\[" --fixture failed \
  -- sh: '$MGPU best --db t.db --include-model --json 2>/dev/null | head -c 1'
bad export_require_verified_all_virtual 0 "wrote [1-9][0-9]* entries" --writes --fixture verified \
  -- export --db '$DB' --format cpp -o out.h --include-model --require-verified
bad export_skips_a_failed_config 0 "^1 rows skipped: failed verification" --writes \
  --fixture failed -- export --db '$DB' --format cpp -o out.h --include-model --require-verified
finish
