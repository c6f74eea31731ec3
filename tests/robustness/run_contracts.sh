#!/usr/bin/env bash
# The tuning run's contracts, through the real executable (no GPU: --device model):
#   signals    SIGTERM / SIGHUP / SIGINT mid-run: exit 143 / 129 / 130, the summary printed,
#              the committed trials intact, and the run resumes to its budget without repeats
#   small budget four runs at --trials 2 on one database: the ones the others' claims left
#                   nothing to do exit 0 and say so
#   concurrent three runs on one database share the study's --trials budget: total == budget,
#              no config measured twice
#   cache      an unusable compile cache is one warning, the configs compile without it and
#              no trial is recorded as the config's failure
#   env_error  trials that failed for the machine's sake do not count: a resumed run retries them
#   progress   plain lines per trial when stderr is not a terminal; --quiet, --verbose; a
#              redrawn line no wider than the terminal
#   warm start --trials not above the warm-start count says the strategy searches nothing
# Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/run_contracts.sh
. "$(dirname "$0")/contracts_lib.sh"
distinct() { q "$1" "SELECT count(DISTINCT problem_id || ':' || config_id) FROM trials"; }
RUN=(matmul --arch sm_90a --m 2048 --n 2048 --k 2048 --device model --no-compile --warm-start 0)

# --- signals: each like Ctrl-C, with its own exit code ---
for sig in TERM HUP INT; do
  db="$T/sig-$sig.db" out="$T/sig-$sig.out"
  "$MGPU" "${RUN[@]}" --strategy exhaustive --trials 100000 --db "$db" > "$out" 2>&1 &
  pid=$!
  for _ in $(seq 600); do [ "$(trials "$db" 2>/dev/null || echo 0)" -ge 5 ] && break; sleep 0.05; done
  kill "-$sig" "$pid"; wait "$pid"; rc=$?
  want=$((128 + $(kill -l "$sig")))
  n="$(trials "$db")"
  if [ "$rc" != "$want" ]; then fail "signal_$sig: exit $rc, expected $want"; sed 's/^/  | /' "$out" | tail -5
  elif ! grep -q "stopped by SIG$sig" "$out" || ! grep -q "new trials" "$out" || ! grep -q "run the same command again" "$out"; then
    fail "signal_$sig: no summary"; sed 's/^/  | /' "$out" | tail -5
  elif [ "$(q "$db" 'PRAGMA integrity_check')" != ok ] || [ "$n" -lt 5 ] || [ "$(q "$db" 'SELECT count(*) FROM claims')" != 0 ]; then
    fail "signal_$sig: database not intact ($n trials, claims left: $(q "$db" 'SELECT count(*) FROM claims'))"
  elif ! "$MGPU" "${RUN[@]}" --strategy exhaustive --trials $((n + 4)) --db "$db" > "$out" 2>&1 ||
       [ "$(trials "$db")" != $((n + 4)) ] || [ "$(distinct "$db")" != $((n + 4)) ]; then
    fail "signal_$sig: resume to $((n + 4)) gave $(trials "$db") trials, $(distinct "$db") distinct"
  else ok "signal_$sig (exit $rc, $n trials kept, resumed)"; fi
done

# --- concurrency: three runs, one budget, no config twice (same seed: they want the same configs) ---
for seeds in "1 2 3" "7 7 7"; do
  db="$T/conc-${seeds// /}.db"
  # The schema exists before the race (creating it concurrently is the store's business).
"$MGPU" matmul --arch sm_90a --m 512 --n 512 --k 512 --device model --no-compile --trials 1 --db "$db" > /dev/null 2>&1 ||
  fail "could not create $db"
  pids=()
  for s in $seeds; do "$MGPU" "${RUN[@]}" --strategy random --seed "$s" --trials 60 --db "$db" > "$T/conc.$s.out" 2>&1 & pids+=($!); done
  rcs=""; for p in "${pids[@]}"; do wait "$p"; rcs+="$? "; done
  n="$(q "$db" "SELECT count(*) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE p.m = 2048")"
  d="$(q "$db" "SELECT count(DISTINCT config_id) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE p.m = 2048")"
  if [ "$rcs" != "0 0 0 " ] || [ "$n" != 60 ] || [ "$d" != 60 ]; then
    fail "concurrent_seeds_${seeds// /}: exits $rcs, $n trials, $d distinct (want 60, 60)"; cat "$T"/conc.*.out | tail -8
  else ok "concurrent_seeds_${seeds// /} (60 trials, 60 configs)"; fi
done

# --- a budget smaller than the runs (round 20, F53): four runs at --trials 2 on one database. A
# run that finds the budget held by the others' claims had nothing to do: exit 0, said so -- it
# exited 1 with "none of the trials succeeded". Repeated: which run is left out is a race. ---
bad_rcs=""
for round in 1 2 3; do
  db="$T/small-budget-$round.db"
  pids=()
  for s in 1 2 3 4; do
    "$MGPU" matmul --arch sm_90a --m 128 --n 128 --k 128 --device model --no-compile --strategy random --seed "$s" \
      --trials 2 --db "$db" > "$T/sb.$s.out" 2>&1 & pids+=($!)
  done
  rcs=""; for p in "${pids[@]}"; do wait "$p"; rcs+="$? "; done
  [ "$rcs" = "0 0 0 0 " ] && [ "$(trials "$db")" = 2 ] && ! grep -q "none of the trials succeeded" "$T"/sb.*.out || bad_rcs+="round $round: exits $rcs, $(trials "$db") trials; "
done
if [ -n "$bad_rcs" ]; then fail "budget_held_by_concurrent_runs: $bad_rcs"; cat "$T"/sb.*.out | tail -6
else ok "budget_held_by_concurrent_runs (3 rounds of 4 runs at --trials 2: every exit 0, 2 trials each)"; fi

# --- an unusable compile cache: MGPU_CACHE_DIR naming a file, XDG_CACHE_HOME under a file ---
echo file > "$T/afile"
for how in "MGPU_CACHE_DIR=$T/afile" "XDG_CACHE_HOME=$T/afile/sub"; do
  db="$T/cache.db"; rm -f "$db"*
  env -u MGPU_CACHE_DIR "$how" "$MGPU" matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --trials 2 \
    --strategy random --seed 1 --db "$db" > "$T/cache.out" 2>&1; rc=$?
  warnings="$(grep -c "warning: the compile cache .* cannot be used" "$T/cache.out")"
  bad="$(q "$db" "SELECT count(*) FROM trials WHERE status != 'ok'")"
  if [ "$rc" != 0 ] || [ "$warnings" != 1 ] || [ "$bad" != 0 ]; then
    fail "cache_unusable ${how%%=*}: exit $rc, $warnings warnings, $bad failed trials"; sed 's/^/  | /' "$T/cache.out" | tail -5
  else ok "cache_unusable ${how%%=*} (one warning, every trial ok)"; fi
done

# --- env_error trials do not count: a resumed run measures them again ---
db="$T/env.db"
"$MGPU" "${RUN[@]}" --strategy exhaustive --trials 4 --db "$db" > /dev/null 2>&1
q "$db" "UPDATE trials SET status = 'env_error', median_ms = NULL WHERE id IN (SELECT id FROM trials ORDER BY id LIMIT 2)"
"$MGPU" "${RUN[@]}" --strategy exhaustive --trials 4 --db "$db" > "$T/env.out" 2>&1; rc=$?
counted="$(q "$db" "SELECT count(DISTINCT config_id) FROM trials WHERE status != 'env_error'")"
if [ "$rc" != 0 ] || [ "$(trials "$db")" != 6 ] || [ "$counted" != 4 ] || ! grep -q "2 new trials (2 resumed" "$T/env.out"; then
  fail "env_error_retried: exit $rc, $(trials "$db") trials, $counted counted"; sed 's/^/  | /' "$T/env.out"
else ok "env_error_retried (the 2 env_error configs measured again)"; fi

# --- progress ---
db="$T/progress.db"
"$MGPU" "${RUN[@]}" --strategy random --trials 5 --db "$db" > "$T/p.out" 2> "$T/p.err"
lines="$(grep -cE '^\[[0-9]+:[0-9]{2}\] [0-9]+/5 trials' "$T/p.err")"
[ "$lines" = 5 ] && ok "progress_lines_when_not_a_terminal" || { fail "progress_lines: $lines lines, want 5"; cat "$T/p.err"; }
"$MGPU" "${RUN[@]}" --strategy random --trials 8 --quiet --db "$db" > "$T/p.out" 2> "$T/p.err"
if [ -s "$T/p.err" ] || ! grep -q "new trials" "$T/p.out"; then fail "progress_quiet"; cat "$T/p.err"; else ok "progress_quiet"; fi
"$MGPU" "${RUN[@]}" --strategy random --trials 10 --verbose --db "$db" > "$T/p.out" 2> "$T/p.err"
v="$(grep -cE '^trial [0-9]+: \{.*\} [0-9.]+ ms \(measured in' "$T/p.err")"
[ "$v" = 2 ] && ok "progress_verbose" || { fail "progress_verbose: $v trial lines, want 2"; cat "$T/p.err"; }
if command -v script > /dev/null; then
  COLUMNS=40 script -qec "stty cols 40 2>/dev/null; '$MGPU' ${RUN[*]} --strategy random --trials 14 --db '$db' > /dev/null" /dev/null > "$T/tty.out" 2>&1
  widest="$(tr '\r' '\n' < "$T/tty.out" | sed 's/\x1b\[K//g' | grep trials | awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }')"
  if [ "$widest" -ge 1 ] && [ "$widest" -le 40 ]; then ok "progress_fits_the_terminal ($widest columns)"
  else fail "progress_fits_the_terminal: a line of $widest columns on a 40-column terminal"; cat -v "$T/tty.out" | head; fi
fi

# --- warm start vs --trials ---
db="$T/warm.db"
for m in 1024 4096; do "$MGPU" matmul --arch sm_90a --m $m --n 1024 --k 1024 --device model --no-compile --trials 3 --db "$db" > /dev/null 2>&1; done
"$MGPU" matmul --arch sm_90a --m 2048 --n 1024 --k 1024 --device model --no-compile --trials 2 --warm-start 2 --strategy random --db "$db" > "$T/w.out" 2>&1
if grep -q "leaves room for 2 trials, all taken by the 2 warm-start configs, and the random strategy searches nothing" "$T/w.out"; then ok "warm_start_uses_the_budget_says_so"
else fail "warm_start_uses_the_budget_says_so"; cat "$T/w.out"; fi

contracts_done
