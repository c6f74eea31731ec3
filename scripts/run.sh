#!/usr/bin/env bash
# Set up and build mgpu-tune if needed, then run it with the given arguments, e.g.
#   scripts/run.sh matmul --arch sm_90a --db results.db
# Relative paths in the arguments (--db, -o, --shapes, ...) mean what they mean where you call
# it from: the script runs mgpu-tune in your current directory. Setup and build messages go
# to stderr so that stdout is mgpu-tune's alone. Exit: mgpu-tune's (see its --help); setup
# failing: 1.
# Environment: BUILD_DIR, the build folder (default: build/ of the repository; a relative one
# is taken relative to the repository, as scripts/setup.sh does).
set -euo pipefail
case "${1:-}" in
  # The script's own usage, without building: mgpu-tune's commands are `scripts/run.sh --help-tool`
  # or `scripts/run.sh COMMAND --help` (both build first).
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
             echo "mgpu-tune's own help (builds first): scripts/run.sh --help-tool, or scripts/run.sh COMMAND --help"; exit 0 ;;
  --help-tool) shift; set -- --help "$@" ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-build}"
[[ "$build" = /* ]] || build="$root/$build"
BUILD_DIR="$build" "$root/scripts/setup.sh" mgpu-tune >&2 || exit 1
exec "$build/mgpu-tune" "$@"
