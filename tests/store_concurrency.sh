#!/usr/bin/env bash
# The store under concurrency, through the real executable (issue 15):
#  1. 12 tuning runs started together on a database path that does not exist yet all succeed:
#     schema creation is one exclusive transaction ("table environments already exists" and
#     "duplicate column name: timer" before);
#  2. a writer holding the write lock of a WAL database makes a tuning run stop with the
#     one-line "locked by another process" error (exit 2) instead of crashing, and nothing is
#     lost: the holder commits afterwards, the database passes integrity_check, every trial
#     is still there.
# Run: MGPU=build/mgpu-tune bash tests/store_concurrency.sh
set -uo pipefail
MGPU="${MGPU:?set MGPU to the mgpu-tune executable}"
T="$(mktemp -d /tmp/mgpu-store-conc.XXXXXX)"
trap 'rm -rf "$T"' EXIT
export MGPU_CACHE_DIR="$T/cache"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
RUN="matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile"
failed=0
fail() { echo "FAIL: $*"; failed=1; }
q() { "$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute(sys.argv[2]).fetchone()[0])' "$@"; }

# 1. Many processes creating one new database.
pids=()
for i in $(seq 12); do "$MGPU" $RUN --trials 2 --seed "$i" --db "$T/new.db" > "$T/run$i.log" 2>&1 & pids+=($!); done
for i in $(seq 12); do
  wait "${pids[$((i - 1))]}"; rc=$?
  [ "$rc" = 0 ] || fail "run $i exited $rc: $(tail -3 "$T/run$i.log")"
done
[ "$(q "$T/new.db" "PRAGMA integrity_check")" = ok ] || fail "integrity_check of new.db"
want_version="$(sed -n 's/.*kSchemaVersion = \([0-9]*\);.*/\1/p' "$(dirname "$0")/../results/schema.h")"
[ "$(q "$T/new.db" "PRAGMA user_version")" = "$want_version" ] || fail "schema version of new.db (want $want_version)"
[ "$(q "$T/new.db" "SELECT count(*) FROM runs")" = 12 ] || fail "expected 12 runs in new.db"
echo "concurrent creation: 12 runs, $(q "$T/new.db" "SELECT count(*) FROM trials") trials"

# 2. A writer holds the write lock (WAL mode): the run stops cleanly, nothing is lost.
"$MGPU" $RUN --trials 2 --seed 1 --db "$T/w.db" > "$T/first.log" 2>&1 || fail "first run: $(tail -3 "$T/first.log")"
before="$(q "$T/w.db" "SELECT count(*) FROM trials")"
"$PY" - "$T/w.db" "$T/holder-ready" "$T/release" <<'PY' &
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT INTO runs(uuid, kind, arguments, started_at, tool_version) VALUES ('holder', 'tune', '', 'now', 'x')")
open(sys.argv[2], "w").close()
t0 = time.time()
while not os.path.exists(sys.argv[3]) and time.time() - t0 < 60:
    time.sleep(0.05)
c.execute("COMMIT")
PY
holder=$!
for _ in $(seq 200); do [ -f "$T/holder-ready" ] && break; sleep 0.05; done
MGPU_DB_BUSY_TIMEOUT_MS=300 "$MGPU" $RUN --seed 7 --trials 4 --db "$T/w.db" > "$T/locked.log" 2>&1; rc=$?
touch "$T/release"; wait "$holder"
[ "$rc" = 2 ] || fail "locked run exited $rc, expected 2"
grep -q "w.db is locked by another process" "$T/locked.log" || fail "no 'locked' message: $(cat "$T/locked.log")"
[ "$(grep -c "error" "$T/locked.log")" = 1 ] || fail "expected one error line: $(cat "$T/locked.log")"
grep -Eq "terminate called|Aborted" "$T/locked.log" && fail "crashed: $(cat "$T/locked.log")"
[ "$(q "$T/w.db" "PRAGMA integrity_check")" = ok ] || fail "integrity_check of w.db"
[ "$(q "$T/w.db" "SELECT count(*) FROM runs WHERE uuid = 'holder'")" = 1 ] || fail "the holder's commit was lost"
after="$(q "$T/w.db" "SELECT count(*) FROM trials")"
[ "$after" -ge "$before" ] || fail "trials went from $before to $after"
echo "locked: exit $rc, $(cat "$T/locked.log" | tail -1)"
[ "$failed" = 0 ] && echo "store concurrency: ok"
exit "$failed"
