#!/usr/bin/env bash
# Bad-input cases for mgpu-tune, run through the real executable (ctest label `robustness`).
# An area file sources this, declares cases with `bad`, and ends with `finish`.
#
#   bad NAME EXIT REGEX [--fixture F] [--writes] [--stdin FILE] -- ARGS...
#
# Each case runs in a fresh directory $W (its current directory) holding the fixture's files;
# the text `$DB` in ARGS (single-quoted at the call) becomes $W/t.db, `$W` the directory. It asserts:
#   - the exit code is EXIT;
#   - stdout+stderr match the extended regex REGEX (the message names the problem);
#   - no crash: not killed by a signal, no "terminate called", "Aborted", "core dumped";
#   - unless --writes: every file of the fixture is byte-identical afterwards (sha256), and no
#     new file appears beside the database (-wal/-shm or a replacement).
# Fixtures are functions named fixture_NAME that fill $W (default: fixture_none, an empty dir);
# the area file defines the ones it needs. `fixture_good` (a small model-run database) is here.
# The command is $MGPU (the mgpu-tune under test) unless the case's first ARG is `sh:`, in which
# case the rest is run by bash -c (for scripts: nightly.sh, run.sh, ...).
set -uo pipefail
MGPU="${MGPU:?set MGPU to the mgpu-tune executable}"
case "$MGPU" in /*) ;; *) MGPU="$PWD/$MGPU" ;; esac  # each case runs in a folder of its own
SRC="${SRC:?set SRC to the source directory}"
ROOT="$(mktemp -d /tmp/mgpu-robust.XXXXXX)"
trap 'chmod -R u+w "$ROOT" 2>/dev/null; rm -rf "$ROOT"' EXIT
export MGPU_CACHE_DIR="$ROOT/cache"
CASES=0
FAILED=()

fixture_none() { :; }
# A database from a short model run (built once, copied per case).
fixture_good() {
  if [ ! -f "$ROOT/good.db" ]; then
    "$MGPU" matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile \
      --trials 4 --seed 1 --db "$ROOT/good.db" > "$ROOT/good.log" 2>&1 ||
      { echo "fixture_good: the model run failed:"; cat "$ROOT/good.log"; exit 1; }
  fi
  cp "$ROOT/good.db" "$W/t.db"
}

# Seconds since an $EPOCHREALTIME reading, to 0.01: each case says what it cost, so a slow
# area shows which cases to make cheaper.
_seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
_hash_dir() { (cd "$1" && find . -type f ! -name '.out' -print0 | sort -z | xargs -0 -r sha256sum); }

bad() {
  local name="$1" want="$2" regex="$3"; shift 3
  local fixture=none writes=0 stdin=/dev/null
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case "$1" in
      --fixture) fixture="$2"; shift 2 ;;
      --writes) writes=1; shift ;;
      --stdin) stdin="$2"; shift 2 ;;
      *) echo "lib.sh: bad option '$1' in case $name"; exit 2 ;;
    esac
  done
  shift  # --
  CASES=$((CASES + 1))
  W="$ROOT/case-$CASES"; mkdir -p "$W"; DB="$W/t.db"
  "fixture_$fixture"
  local before; before="$(_hash_dir "$W")"
  local args=() a
  for a in "$@"; do a="${a//\$DB/$DB}"; args+=("${a//\$W/$W}"); done
  local rc t0="$EPOCHREALTIME"
  if [ "${args[0]}" = "sh:" ]; then
    (cd "$W" && bash -c "${args[*]:1}") < "$stdin" > "$W/.out" 2>&1; rc=$?
  else
    (cd "$W" && "$MGPU" "${args[@]}") < "$stdin" > "$W/.out" 2>&1; rc=$?
  fi
  local why=""
  [ "$rc" = "$want" ] || why="exit $rc, expected $want"
  grep -Eq -e "$regex" "$W/.out" || why="${why:+$why; }output does not match /$regex/"
  grep -Eq "terminate called|Aborted|core dumped|Segmentation fault|internal error" "$W/.out" && why="${why:+$why; }crashed"
  [ "$rc" -ge 128 ] && [ "$rc" != 129 ] && [ "$rc" != 130 ] && [ "$rc" != 143 ] && why="${why:+$why; }killed by signal $((rc - 128))"
  if [ "$writes" = 0 ]; then
    local after; after="$(_hash_dir "$W")"
    [ "$before" = "$after" ] || why="${why:+$why; }files changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"
  fi
  if [ -n "$why" ]; then
    FAILED+=("$name")
    echo "FAIL $name: $why"; echo "  command: ${args[*]}"; sed 's/^/  | /' "$W/.out" | head -20
  else
    echo "ok   $name ($(_seconds_since "$t0") s)"
  fi
  chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"
}

finish() {
  echo "${CASES} cases, ${#FAILED[@]} failed${FAILED:+: ${FAILED[*]}}"
  [ ${#FAILED[@]} -eq 0 ]
}
