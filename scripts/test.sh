#!/usr/bin/env bash
# Set up and build if needed, then run the test suite; extra arguments go to ctest, e.g.
#   scripts/test.sh -L unit        only the unit tests (labels: unit, compile, e2e, gpu, robustness, slurm)
# Exit: 0 every test passed; 1 setup, the build or a test failed.
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;  # no build, no suite
esac
cd "$(dirname "$0")/.."
./scripts/setup.sh || exit 1
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@" || exit 1
