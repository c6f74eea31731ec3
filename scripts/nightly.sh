#!/usr/bin/env bash
# Nightly perf-regression run, ready for a CI job:
#   scripts/nightly.sh DB [BASELINE_RUN] [--out DIR] [--candidate RUN] [-- MGPU_BENCH_FLAGS...]
# 1. measures the suite -- DB's best verified configs -- with mgpu-bench into a new "bench" run
#    of DB (Google Benchmark's JSON in DIR/nightly.json);
# 2. compares that run with BASELINE_RUN (an id or uuid prefix; default: the latest earlier
#    bench run that measured something) through `mgpu-tune regress`;
# 3. writes DIR/report.md (DIR defaults to nightly-report/), whatever the outcome but bad input.
# --candidate RUN compares an existing run instead of measuring (to re-report a night).
# `-- --pack PACK` measures a kernel pack as shipped instead of DB's best configs (export
# --format pack's folder, or its built libmgpu_pack.so; each entry through the pack's C ABI),
# recorded in DB and compared the same way: the regression gate for what production runs.
# A run that measured nothing (predictions, every benchmark failed) is never a baseline, and
# predictions (-- --device model) are reported as such: never a pass.
# Exit codes: 0 no regression; 1 a config got slower or a benchmark failed; 2 bad input;
# 3 nothing measured (no GPU, predictions only, or runs that share only predictions): no
# verdict; 4 no trustworthy verdict (too noisy, or the runs share no config); 129/130/143
# mgpu-bench was stopped by a signal. Paths are taken relative to the current directory.
# Environment: MGPU_BIN, the folder holding mgpu-tune and mgpu-bench (default: build/).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${MGPU_BIN:-$here/build}"
TUNE="$BIN/mgpu-tune"
BENCH="$BIN/mgpu-bench"
PY="$(command -v python3 || echo /usr/bin/python3)"  # any Python 3: it only reads JSON

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "nightly: error: $*" >&2; exit 2; }
db="" baseline="" candidate="" out="nightly-report"
bench_flags=()
while (($#)); do
  case "$1" in
    --out|--candidate)
      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (run with --help for usage)"
      if [ "$1" = --out ]; then out="$2"; else candidate="$2"; fi
      shift 2 ;;
    --help|-h) usage; exit 0 ;;
    --) shift; bench_flags=("$@"); break ;;
    -*) die "unknown option $1 (run with --help for usage)" ;;
    *) if [ -z "$db" ]; then db="$1"; elif [ -z "$baseline" ]; then baseline="$1"
       else die "unexpected argument '$1': give DB and at most one BASELINE_RUN"; fi
       shift ;;
  esac
done
[ -n "$db" ] || { usage >&2; die "give the results database DB"; }
[ -f "$db" ] || die "no results database at $db"
for exe in "$TUNE" "$BENCH"; do
  [ -x "$exe" ] || die "$exe is missing: build first (scripts/setup.sh) or set MGPU_BIN"
done
[ -z "$candidate" ] || [ ${#bench_flags[@]} -eq 0 ] || die "--candidate re-reports a run: it measures nothing, so takes no mgpu-bench flags"
# The verdict compares tonight's recorded run with a baseline: measuring without recording
# would spend the GPU time and leave nothing to compare.
for flag in "${bench_flags[@]}"; do
  case "$flag" in
    --no-record|--no-record=*) die "$flag: nightly.sh compares the run mgpu-bench records, so it cannot run without recording (call mgpu-bench directly to measure without recording)" ;;
    --benchmark_list_tests|--benchmark_list_tests=*) die "$flag: nightly.sh measures and compares a night; to list the suite, call mgpu-bench directly" ;;
  esac
done

# The runs of the database, oldest first: "id uuid kind trials measured predicted" per line.
runs_table() {
  local json
  json="$("$TUNE" best --db "$db" --runs --json)" || exit 2  # mgpu-tune said why (not a database, ...)
  "$PY" -c 'import json,sys
for r in json.load(sys.stdin):
    print(r["id"], r["uuid"], r["kind"], r["trials"], r["measured"], r["predicted"])' <<< "$json"
}
# The table's line of a run named by id or uuid prefix, or exit 2 -- read as mgpu-tune reads it
# (results/store.cc, Store::run): a uuid prefix is compared from the uuid's start, ASCII case
# ignored; digits alone are an id first when shorter than the 8 characters `best --runs` shows of
# a uuid, a uuid prefix first from 8 on (one uuid in 40 starts with 8 digits).
resolve() {
  local spec="$1" what="$2" hits by_id="" by_uuid
  by_uuid="$(awk -v s="$(tr 'A-Z' 'a-z' <<< "$spec")" 'index(tolower($2), s) == 1' <<< "$table")"
  if [[ "$spec" =~ ^[0-9]+$ ]]; then
    by_id="$(awk -v s="$spec" '$1 == s' <<< "$table")"
    if [ "${#spec}" -lt 8 ]; then hits="${by_id:-$by_uuid}"; else hits="${by_uuid:-$by_id}"; fi
  else
    hits="$by_uuid"
  fi
  [ -n "$hits" ] || die "$what run '$spec' is not in $db (see: mgpu-tune best --db $db --runs)"
  [ "$(wc -l <<< "$hits")" -eq 1 ] || die "$what run '$spec' is ambiguous in $db: give more of its uuid"
  echo "$hits"
}
field() { cut -d' ' -f"$2" <<< "$1"; }  # field LINE N: 1 id, 3 kind, 4 trials, 5 measured, 6 predicted

# Everything named is checked before anything is measured or written.
table="$(runs_table)" || exit 2
if [ -n "$baseline" ]; then
  base_line="$(resolve "$baseline" baseline)" || exit 2
  [ "$(field "$base_line" 5)" -gt 0 ] ||
    die "baseline run '$baseline' measured nothing ($(field "$base_line" 6) predictions, $(field "$base_line" 4) trials): it cannot be a baseline"
fi
if [ -n "$candidate" ]; then
  cand_line="$(resolve "$candidate" candidate)" || exit 2
fi
out_existed=0; [ -d "$out" ] && out_existed=1
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || die "cannot write the report folder $out"
report="$out/report.md"

bench_failed=0
if [ -z "$candidate" ]; then
  last_id="$(tail -n 1 <<< "$table" | cut -d' ' -f1)"
  # mgpu-bench's messages go to the terminal and into its log, for the report.
  # Logged beside the folder first: bad input leaves nothing behind (no log, no folder it made).
  log="$(mktemp "${TMPDIR:-/tmp}/nightly-bench.XXXXXX")" || die "cannot make a temporary file for mgpu-bench's log"
  # A stop of this script (Ctrl-C, timeout's SIGTERM, a hangup) is passed on to mgpu-bench, which
  # says what it stopped and ends with 128+N; this script then reports STOPPED and exits with it
  # (round 19, F30: mgpu-bench ran on orphaned, the log was left in TMPDIR). tee ignores the stop
  # signals, so mgpu-bench's last words still reach the terminal and the log when a whole
  # process group is stopped (Slurm). mgpu-bench runs in the background only so that the
  # script's traps run while it does; it takes SIGINT, which bash hands background jobs ignored.
  "$BENCH" --db "$db" --benchmark_out="$out/nightly.json" --benchmark_out_format=json "${bench_flags[@]}" \
      2> >(trap '' INT TERM HUP; exec tee "$log" >&2) &
  bench_pid=$!
  for sig in INT TERM HUP; do trap "kill -$sig $bench_pid 2>/dev/null" "$sig"; done
  while :; do
    wait "$bench_pid"; rc=$?
    kill -0 "$bench_pid" 2>/dev/null || break  # a trap interrupted the wait: wait again
  done
  trap - INT TERM HUP
  wait  # tee, until mgpu-bench's last line is in the log
  if [ "$rc" = 2 ]; then  # bad input: mgpu-bench said what
    rm -f "$log"
    [ "$out_existed" = 1 ] || rmdir "$out" 2>/dev/null
    exit 2
  fi
  mv "$log" "$out/mgpu-bench.log" 2>/dev/null || cp "$log" "$out/mgpu-bench.log"
  case $rc in
    0) ;;
    1) bench_failed=1 ;;
    3) { printf '# Nightly perf run: NOT RUN\n\nNothing was measured, so there is no verdict:\n\n'
         sed -n 's/^mgpu-bench: /- /p' "$out/mgpu-bench.log"; } > "$report"
       echo "nightly: nothing measured, no verdict (exit 3; report: $report)" >&2
       exit 3 ;;
    *) printf '# Nightly perf run: STOPPED\n\nmgpu-bench ended with exit %s (signal or crash): no verdict. What it measured is in %s.\n' \
         "$rc" "$db" > "$report"
       echo "nightly: mgpu-bench ended with exit $rc: no verdict (report: $report)" >&2
       [ "$rc" -ge 128 ] && exit "$rc"
       exit 1 ;;
  esac
  table="$(runs_table)" || exit 2
  cand_line="$(awk -v last="${last_id:-0}" '$1 > last && $3 == "bench"' <<< "$table" | tail -n 1)"
  if [ -z "$cand_line" ]; then
    printf '# Nightly perf run: FAILED\n\nmgpu-bench recorded no run in %s: nothing was measured.\n' "$db" > "$report"
    echo "nightly: mgpu-bench recorded no run (report: $report)" >&2
    exit 1
  fi
  candidate="$(field "$cand_line" 1)"
fi

# A candidate that measured nothing gets no comparison: predictions are not a verdict.
if [ "$(field "$cand_line" 5)" -eq 0 ]; then
  if [ "$(field "$cand_line" 6)" -gt 0 ]; then
    printf '# Nightly perf run: PREDICTIONS, NOT A VERDICT\n\nRun %s holds %s predictions of the cost model (--device model): nothing was measured on a GPU, so nothing passed or failed, and the run will never be a baseline.\n' \
      "$candidate" "$(field "$cand_line" 6)" > "$report"
    echo "nightly: run $candidate holds predictions, not measurements: no verdict (exit 3; report: $report)" >&2
    exit 3
  fi
  if [ "$(field "$cand_line" 4)" -gt 0 ]; then
    printf '# Nightly perf run: FAILED\n\nEvery benchmark of run %s failed (fault, wrong result or launch error)%s: nothing was measured.\n' \
      "$candidate" "$([ -f "$out/nightly.json" ] && echo ": see $out/nightly.json")" > "$report"
    echo "nightly: every benchmark of run $candidate failed (report: $report)" >&2
    exit 1
  fi
  printf '# Nightly perf run: NOT RUN\n\nRun %s holds no trial: nothing was measured, so there is no verdict.\n' "$candidate" > "$report"
  echo "nightly: run $candidate measured nothing: no verdict (exit 3; report: $report)" >&2
  exit 3
fi

if [ -z "$baseline" ]; then
  # The latest bench run before the candidate that measured something.
  baseline="$(awk -v c="$(field "$cand_line" 1)" '$1 < c && $3 == "bench" && $5 > 0 { b = $1 } END { print b }' <<< "$table")"
  if [ -z "$baseline" ]; then
    printf '# Nightly perf run\n\nRun %s is the first bench run that measured something: it becomes the baseline; nothing to compare yet.\n' \
      "$candidate" > "$report"
    [ "$bench_failed" -ne 0 ] && printf '\n**Some benchmarks failed** (fault, wrong result or launch error): see %s.\n' "$out/nightly.json" >> "$report"
    echo "nightly: no earlier bench run: $candidate is the baseline from now on" >&2
    exit $((bench_failed ? 1 : 0))
  fi
fi

{
  printf '# Nightly perf run\n\nBaseline run %s, candidate run %s, database %s.\n\n' "$baseline" "$candidate" "$db"
  [ "$bench_failed" -ne 0 ] && printf '**Some benchmarks failed** (fault, wrong result or launch error): see %s.\n\n' "$out/nightly.json"
} > "$report"
"$TUNE" regress --db "$db" --baseline "$baseline" --candidate "$candidate" --fail-on-unstable >> "$report"
rc=$?
cat "$report"
case $rc in
  0) verdict="PASS: nothing slower" ;;
  1) verdict="REGRESSION: a config got slower" ;;
  3) verdict="NO VERDICT: the runs share only predictions, nothing measured" ;;
  4) verdict="NO VERDICT: too noisy, or nothing in common with the baseline" ;;
  *) verdict="ERROR (mgpu-tune regress exit $rc)" ;;
esac
printf '\n**%s**\n' "$verdict" >> "$report"
echo "nightly: $verdict (report: $report)" >&2
# A failed benchmark is a failure whatever the comparison of the others said.
if [ "$bench_failed" -ne 0 ] && { [ $rc -eq 0 ] || [ $rc -eq 3 ] || [ $rc -eq 4 ]; }; then exit 1; fi
exit $rc
