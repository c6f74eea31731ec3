#!/usr/bin/env bash
# What the contract files (run_contracts.sh, stop_contracts.sh) share: the executable, a scratch
# folder $T removed at exit (the compile cache in it), `fail`/`ok` that count, and SQLite
# helpers. A contract file sources this and ends with `contracts_done`.
set -uo pipefail
MGPU="${MGPU:?set MGPU to the mgpu-tune executable}"
case "$MGPU" in /*) ;; *) MGPU="$PWD/$MGPU" ;; esac
T="$(mktemp -d "/tmp/mgpu-$(basename "$0" .sh).XXXXXX")"
trap 'rm -rf "$T"' EXIT
export MGPU_CACHE_DIR="$T/cache"
FAILED=0
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
ok() { echo "ok   $*"; }
q() { sqlite3 -cmd ".timeout 10000" "$1" "$2"; }
trials() { q "$1" "SELECT count(*) FROM trials"; }
contracts_done() {
  echo "$FAILED failed"
  [ "$FAILED" = 0 ]
}
