#!/usr/bin/env bash
# Nightly perf-regression run, ready for a CI job:
#   scripts/nightly.sh DB [BASELINE_RUN] [--out DIR] [--candidate RUN] [-- MGPU_BENCH_FLAGS...]
# 1. measures the suite -- DB's best verified configs -- with mgpu-bench into a new "bench" run
#    of DB (Google Benchmark's JSON in DIR/nightly.json);
# 2. compares that run with BASELINE_RUN (an id or uuid prefix; default: the previous bench run)
#    through `mgpu-tune regress`;
# 3. writes DIR/report.md (DIR defaults to nightly-report/).
# --candidate RUN compares an existing run instead of measuring (to re-report a night).
# Exit codes: 0 no regression; 1 a config got slower or a benchmark failed; 2 bad input;
# 3 no GPU: nothing was measured, no verdict; 4 no trustworthy verdict (too noisy, or the runs
# share no config). A pass is only ever reported for what was measured.
# Environment: MGPU_BIN, the folder holding mgpu-tune and mgpu-bench (default: build/).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${MGPU_BIN:-$here/build}"
TUNE="$BIN/mgpu-tune"
BENCH="$BIN/mgpu-bench"
PY="$(command -v python3 || echo /usr/bin/python3)"  # any Python 3: it only reads JSON

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
db="" baseline="" candidate="" out="nightly-report"
bench_flags=()
while (($#)); do
  case "$1" in
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --candidate) candidate="${2:?--candidate needs a run}"; shift 2 ;;
    --help|-h) usage ;;
    --) shift; bench_flags=("$@"); break ;;
    -*) echo "nightly: unknown option $1" >&2; usage ;;
    *) if [ -z "$db" ]; then db="$1"; elif [ -z "$baseline" ]; then baseline="$1"; else usage; fi; shift ;;
  esac
done
[ -n "$db" ] || usage
[ -f "$db" ] || { echo "nightly: no results database at $db" >&2; exit 2; }
for exe in "$TUNE" "$BENCH"; do
  [ -x "$exe" ] || { echo "nightly: $exe is missing: build first (scripts/setup.sh) or set MGPU_BIN" >&2; exit 2; }
done
mkdir -p "$out" || exit 2
report="$out/report.md"

# The bench runs in the database, oldest first: "id uuid" per line.
bench_runs() {
  "$TUNE" best --db "$db" --runs --json |
    "$PY" -c 'import json,sys; [print(r["id"], r["uuid"]) for r in json.load(sys.stdin) if r["kind"] == "bench"]'
}

if [ -z "$candidate" ]; then
  "$BENCH" --db "$db" --benchmark_out="$out/nightly.json" --benchmark_out_format=json "${bench_flags[@]}"
  rc=$?
  if [ $rc -eq 3 ]; then
    printf '# Nightly perf run: NOT RUN\n\nNo GPU for the suite on this machine: nothing was measured, so there is no verdict.\n' > "$report"
    echo "nightly: no GPU: nothing measured (exit 3)" >&2
    exit 3
  fi
  [ $rc -eq 2 ] && exit 2
  bench_failed=$rc
  candidate="$(bench_runs | tail -n 1 | cut -d' ' -f1)"
  [ -n "$candidate" ] || { echo "nightly: mgpu-bench recorded no run" >&2; exit 1; }
else
  bench_failed=0
fi

if [ -z "$baseline" ]; then
  # The bench run before the candidate.
  # A number names a run by id, anything else by uuid prefix (as mgpu-tune does).
  field=2; [[ "$candidate" =~ ^[0-9]+$ ]] && field=1
  baseline="$(bench_runs | awk -v c="$candidate" -v f="$field" \
    '(f == 1 && $1 == c) || (f == 2 && index($2, c) == 1) { print prev; exit } { prev = $1 }')"
  if [ -z "$baseline" ]; then
    printf '# Nightly perf run\n\nRun %s is the first bench run: it becomes the baseline; nothing to compare yet.\n' \
      "$candidate" > "$report"
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
  4) verdict="NO VERDICT: too noisy, or nothing in common with the baseline" ;;
  *) verdict="ERROR (mgpu-tune regress exit $rc)" ;;
esac
printf '\n**%s**\n' "$verdict" >> "$report"
echo "nightly: $verdict (report: $report)" >&2
if [ $rc -eq 0 ] && [ "$bench_failed" -ne 0 ]; then exit 1; fi
exit $rc
