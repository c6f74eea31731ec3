#!/usr/bin/env bash
# Soak: SIGKILL and SIGTERM at random (seeded) moments of a tuning run, a suite run and a
# merge. After every round the database passes PRAGMA integrity_check and its committed trial
# count never went down; resumed to completion, each study holds exactly its budget with no
# config twice. Then three concurrent writers (one of them killed) keep the concurrency
# contract: the study ends at its budget, no config twice. No GPU (--device model).
# Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/soak.sh [SEED] [ROUNDS]
set -uo pipefail
MGPU="${MGPU:?set MGPU to the mgpu-tune executable}"
SEED="${1:-${SOAK_SEED:-15}}" ROUNDS="${2:-${SOAK_ROUNDS:-20}}"
RANDOM="$SEED"
T="$(mktemp -d /tmp/mgpu-soak.XXXXXX)"
trap 'rm -rf "$T"' EXIT
export MGPU_CACHE_DIR="$T/cache"
FAILED=0
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
q() { sqlite3 -cmd ".timeout 10000" "$1" "$2"; }
count() { [ -f "$1" ] && q "$1" "SELECT count(*) FROM trials" || echo 0; }
dups() { q "$1" "SELECT count(*) - count(DISTINCT problem_id || ':' || config_id) FROM trials"; }
# A random pause of 0.02 .. 0.6 s (model trials take milliseconds: a few to a few hundred die with it).
pause() { sleep "0.$(printf '%02d' $((2 + RANDOM % 58)))"; }

# round NAME DB SIGNAL -- COMMAND...: start, kill at a random moment, check the database.
LAST=()
round() {
  local name="$1" db="$2" sig="$3"; shift 4
  local before; before="$(count "$db")"
  "$@" > "$T/round.out" 2>&1 &
  local pid=$!
  pause
  kill "-$sig" "$pid" 2>/dev/null; wait "$pid"; local rc=$?
  local after; after="$(count "$db")"
  case "$sig:$rc" in KILL:137 | KILL:0 | TERM:143 | TERM:0) ;; *) fail "$name: exit $rc after SIG$sig"; sed 's/^/  | /' "$T/round.out" | tail -3 ;; esac
  if [ -f "$db" ] && [ "$(q "$db" 'PRAGMA integrity_check')" != ok ]; then fail "$name: integrity_check failed after SIG$sig"; fi
  [ "$after" -ge "$before" ] || fail "$name: trials went from $before to $after after SIG$sig"
  # A tuning run stopped by SIGTERM summarizes (unless the signal came before it started: no
  # output at all); merge has no handler of its own.
  if [ "$sig:$rc" = TERM:143 ] && [ "${name%%#*}" != merge ] && [ -s "$T/round.out" ] &&
     ! grep -q "run the same command again" "$T/round.out"; then
    fail "$name: no summary after SIGTERM"; sed 's/^/  | /' "$T/round.out" | tail -3
  fi
}

RUN=(matmul --arch sm_90a --m 2048 --n 2048 --k 2048 --device model --no-compile --strategy random --seed 3 --warm-start 0)
BUDGET=400

# --- a tuning run ---
db="$T/tune.db"
for i in $(seq "$ROUNDS"); do
  round "tune#$i" "$db" KILL -- "$MGPU" "${RUN[@]}" --trials $BUDGET --db "$db"
  round "tune#$i" "$db" TERM -- "$MGPU" "${RUN[@]}" --trials $BUDGET --db "$db"
done
"$MGPU" "${RUN[@]}" --trials $BUDGET --db "$db" > "$T/final.out" 2>&1 || fail "tune: the resumed run failed: $(tail -2 "$T/final.out")"
[ "$(count "$db")" = $BUDGET ] && [ "$(dups "$db")" = 0 ] && echo "ok   tune: $BUDGET trials, no config twice, after $((2 * ROUNDS)) kills" ||
  fail "tune: $(count "$db") trials ($(dups "$db") repeats), want $BUDGET"

# --- a suite run (3 shapes, the budget per shape) ---
printf 'm,n,k\n1024,1024,1024\n2048,1024,1024\n4096,1024,2048\n' > "$T/suite.csv"
SUITE=(matmul --arch sm_90a --shapes "$T/suite.csv" --device model --no-compile --strategy random --seed 5 --trials 120)
db="$T/suite.db"
for i in $(seq "$ROUNDS"); do
  round "suite#$i" "$db" KILL -- "$MGPU" "${SUITE[@]}" --db "$db"
  round "suite#$i" "$db" TERM -- "$MGPU" "${SUITE[@]}" --db "$db"
done
"$MGPU" "${SUITE[@]}" --db "$db" > "$T/final.out" 2>&1 || fail "suite: the resumed run failed: $(tail -2 "$T/final.out")"
per="$(q "$db" "SELECT group_concat(n) FROM (SELECT count(*) n FROM trials GROUP BY problem_id ORDER BY problem_id)")"
[ "$per" = "120,120,120" ] && [ "$(dups "$db")" = 0 ] && echo "ok   suite: 120 trials per shape, no config twice" ||
  fail "suite: trials per shape $per ($(dups "$db") repeats), want 120 each"

# --- a merge (into an existing database: what was there stays) ---
out="$T/merged.db"
q "$T/tune.db" ".backup '$out'"
for i in $(seq "$ROUNDS"); do
  round "merge#$i" "$out" KILL -- "$MGPU" merge "$T/suite.db" -o "$out"
  round "merge#$i" "$out" TERM -- "$MGPU" merge "$T/suite.db" -o "$out"
done
"$MGPU" merge "$T/suite.db" -o "$out" > "$T/final.out" 2>&1 || fail "merge: the last merge failed: $(tail -2 "$T/final.out")"
[ "$(count "$out")" = $((BUDGET + 360)) ] && [ "$(dups "$out")" = 0 ] && echo "ok   merge: $((BUDGET + 360)) trials, none twice" ||
  fail "merge: $(count "$out") trials ($(dups "$out") repeats), want $((BUDGET + 360))"

# --- three concurrent writers, one of them killed, then resumed ---
db="$T/conc.db"
"$MGPU" matmul --arch sm_90a --m 512 --n 512 --k 512 --device model --no-compile --trials 1 --db "$db" > /dev/null 2>&1 ||
  fail "could not create $db"  # the schema first
for i in $(seq 3); do
  pids=()
  for s in 1 2 3; do "$MGPU" "${RUN[@]}" --seed "$s" --trials 150 --db "$db" > /dev/null 2>&1 & pids+=($!); done
  pause
  kill -KILL "${pids[$((RANDOM % 3))]}" 2>/dev/null
  for p in "${pids[@]}"; do wait "$p"; done
  [ "$(q "$db" 'PRAGMA integrity_check')" = ok ] || fail "concurrent#$i: integrity_check failed"
  [ "$(dups "$db")" = 0 ] || fail "concurrent#$i: $(dups "$db") configs measured twice"
done
"$MGPU" "${RUN[@]}" --trials 150 --db "$db" > /dev/null 2>&1
n="$(q "$db" "SELECT count(*) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE p.m = 2048")"
[ "$n" = 150 ] && [ "$(dups "$db")" = 0 ] && echo "ok   concurrent: 150 trials, none twice, after kills" ||
  fail "concurrent: $n trials ($(dups "$db") repeats), want 150"

echo "seed $SEED: $FAILED failed"
[ "$FAILED" = 0 ]
