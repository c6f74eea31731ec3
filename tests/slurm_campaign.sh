#!/usr/bin/env bash
# A campaign through a real single-node Slurm (scripts/slurm_local.sh): plan, submit as a job
# array with a dependent merge job, wait, check that the merged database is exactly the union
# of the shards; then a campaign with a failing task: status reports it, resume resubmits only
# it, and after the fix it completes; then a task killed at its --time limit: status says so,
# resume continues it without repeating a trial. Exit 77 (skipped) when Slurm cannot be started
# here. Takes several minutes (the time-limit part alone 3 to 5).
#   tests/slurm_campaign.sh MGPU_TUNE SOURCE_DIR
set -uo pipefail
TUNE="$1"
SRC="$2"
work="$(mktemp -d /tmp/mgpu-slurm-test.XXXXXX)"
export SLURM_LOCAL_PORT=$((20000 + $$ % 20000))
out="$(bash "$SRC/scripts/slurm_local.sh" start "$work/slurm")"
rc=$?
[ $rc -eq 3 ] && rc=77  # Slurm cannot start here: ctest's "skipped"
if [ $rc -ne 0 ]; then rm -rf "$work"; exit $rc; fi
eval "$out"
cleanup() { bash "$SRC/scripts/slurm_local.sh" stop "$work/slurm"; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*/*-logs/*.out "$work"/*/*/*-logs/*.out; do echo "--- $f"; cat "$f"; done >&2; exit 1; }

wait_idle() {  # until Slurm runs and queues nothing (at most 10 minutes)
  for _ in $(seq 1 300); do [ -z "$(squeue -h)" ] && return 0; sleep 2; done
  fail "jobs still queued after 10 minutes: $(squeue)"
}
uuids() {  # trial uuids of a database, sorted
  "$TUNE" export --db "$1" --format csv --include-model -o "$work/x.csv" > /dev/null || fail "export of $1"
  tail -n +2 "$work/x.csv" | cut -d, -f1 | sort
}

# 1. A campaign of 4 model tasks, two at a time.
mkdir -p "$work/a"
"$TUNE" campaign plan --arch sm_90a --arch sm_100 --m 512 --n 512 --k 256 --trials 3 --strategy random \
  --device model -o "$work/a/night.json" || fail "plan"
"$TUNE" campaign plan --arch sm_90a --shapes "$SRC/tests/data/small_suite.csv" --trials 3 --strategy random \
  --device model -o "$work/a/suite.json" || fail "plan of a suite"
"$TUNE" campaign submit "$work/a/suite.json" --partition debug --gpus-per-task 0 --max-parallel 2 || fail "submit"
wait_idle
status="$("$TUNE" campaign status "$work/a/suite.json")"
echo "$status"
echo "$status" | grep -q "4 tasks: 4 done" || fail "not every task is done"
[ -f "$work/a/suite.db" ] || fail "the merge job wrote no database"
cat "$work/a"/suite-shards/task-*.db > /dev/null
for i in 0 1 2 3; do uuids "$work/a/suite-shards/task-$i.db"; done | sort > "$work/union.txt"
uuids "$work/a/suite.db" > "$work/merged.txt"
[ -s "$work/union.txt" ] || fail "the shards hold no trials"
cmp -s "$work/union.txt" "$work/merged.txt" || fail "merged database != union of the shards"
echo "merged $(wc -l < "$work/merged.txt") trials = the union of 4 shards"
"$TUNE" merge "$work"/a/suite-shards/task-*.db -o "$work/a/suite.db" | grep -q "0 trials added" || fail "merge is not idempotent"
again="$("$TUNE" campaign submit "$work/a/suite.json" --partition debug --gpus-per-task 0 2>&1)"
[ $? -eq 2 ] && echo "$again" | grep -q "submitted already" || fail "a second submit was not refused: $again"

# 2. A failing task (cuda on a machine whose GPU does not match): reported, then resumed alone.
mkdir -p "$work/b"
"$TUNE" campaign plan --arch sm_100 --m 256 --n 256 --k 256 --trials 2 --strategy random --device model \
  -o "$work/b/mixed.json" || fail "plan"
/usr/bin/python3 - "$work/b/mixed.json" <<'PY' || fail "editing the campaign"
import json, sys
c = json.load(open(sys.argv[1]))
t = dict(c["tasks"][0]); t["index"] = 1; t["device"] = "cuda"   # no B200 here: this task fails
c["tasks"].append(t)
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
"$TUNE" campaign submit "$work/b/mixed.json" --partition debug --gpus-per-task 0 || fail "submit"
wait_idle
status="$("$TUNE" campaign status "$work/b/mixed.json")"
echo "$status"
echo "$status" | grep -q "task   0  done" || fail "task 0 should be done"
echo "$status" | grep -q "task   1  failed .*exit code 2" || fail "task 1 should be failed with exit code 2"
/usr/bin/python3 - "$work/b/mixed.json" <<'PY' || fail "fixing the campaign"
import json, sys
c = json.load(open(sys.argv[1])); c["tasks"][1]["device"] = "model"
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
resumed="$("$TUNE" campaign resume "$work/b/mixed.json" --partition debug --gpus-per-task 0)" || fail "resume"
echo "$resumed"
echo "$resumed" | grep -q "submitted 1 tasks as array job [0-9]* (1)" || fail "resume should resubmit task 1 only"
wait_idle
"$TUNE" campaign status "$work/b/mixed.json" | grep -q "2 tasks: 2 done" || fail "after resume every task is done"
"$TUNE" campaign resume "$work/b/mixed.json" --partition debug | grep -q "nothing to resume" || fail "nothing left"

# 3. A task killed at its time limit, in a folder whose path has a space, quotes and a %: status
#    says it timed out, resume continues its shard without repeating a committed trial, and it
#    completes. Each trial compiles its kernel (the cache is fresh) and runs and verifies it on
#    the virtual device -- about 0.5 s of CPU work per trial at 512^3 on 2026-11-23, about 2 s
#    since swap_ab and split_k (2026-11-26: the random configs are often small swapped tiles,
#    many CTAs to emulate; 32 trials in the first minute on CI's 2 cores, and 400 no longer
#    finished within wait_idle's 10 minutes). Slurm kills a task at its shortest limit, 1 minute,
#    plus its grace: 36 trials in on 2026-11-28 (2.5 s each). 80 trials outlast that on a machine
#    twice as fast, and a resume on one twice as slow (this test runs beside the others) finishes
#    within wait_idle's 10 minutes. (200 trials took 515 s, the CI's longest test, run alone.)
export MGPU_CACHE_DIR="$work/cache"
c="$work/c/night shift 'q\" 100%"
mkdir -p "$c"
shard="$c/long-shards/task-0.db"
trials_in() {  # "ROWS DISTINCT_CONFIGS" of a shard
  /usr/bin/python3 -c 'import sqlite3, sys, urllib.parse
db = sqlite3.connect("file:" + urllib.parse.quote(sys.argv[1]) + "?mode=ro", uri=True)
print(*db.execute("SELECT COUNT(*), COUNT(DISTINCT config_id) FROM trials").fetchone())' "$1"
}
started=$SECONDS
N=80
"$TUNE" campaign plan --arch sm_90a --m 512 --n 512 --k 512 --trials $N --strategy random --device emulate \
  -o "$c/long.json" || fail "plan in a folder with a space and quotes"
"$TUNE" campaign submit "$c/long.json" --partition debug --gpus-per-task 0 --time 1 || fail "submit with --time 1"
wait_idle
status="$("$TUNE" campaign status "$c/long.json")"
echo "$status"
echo "$status" | grep -q "task   0  timed out" || fail "the task killed at its time limit is not shown as timed out"
[ -f "$c/long-logs/task-0.out" ] || fail "no log where #SBATCH --output said (quoting of the path)"
read -r before distinct < <(trials_in "$shard") || fail "no shard after the time-out"
echo "timed out after $before trials"
[ "$before" -gt 0 ] && [ "$before" -lt $N ] || fail "expected a partial shard, got $before trials"
resumed="$("$TUNE" campaign resume "$c/long.json" --partition debug --gpus-per-task 0)" || fail "resume"
echo "$resumed"
echo "$resumed" | grep -q "submitted 1 tasks" || fail "resume should resubmit the timed-out task"
wait_idle
"$TUNE" campaign status "$c/long.json" | grep -q "1 tasks: 1 done" || fail "the resumed task did not complete"
grep -q "($before resumed" "$c/long-logs/task-0.out" || fail "the resumed task did not continue from its $before trials"
read -r after distinct < <(trials_in "$shard")
[ "$after" -eq $N ] && [ "$distinct" -eq $N ] || fail "after resume: $after trials, $distinct configs (want $N, no repeat)"
read -r merged _ < <(trials_in "$c/long.db")
[ "$merged" -eq $N ] || fail "the merge job after resume holds $merged trials, not $N"
echo "time-limit kill and resume: $before + $((after - before)) trials, no repeat ($((SECONDS - started)) s)"
echo "PASS"
