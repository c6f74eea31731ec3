#!/usr/bin/env bash
# Set up and build if needed, then run the test suite; extra arguments go to ctest, e.g.
#   scripts/test.sh -L unit        only the unit tests (labels: unit, compile, e2e, gpu, slurm)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
