#!/usr/bin/env bash
# Set up and build if needed, then run mgpu-tune with the given arguments, e.g.
#   scripts/run.sh matmul --arch sm_90a
# Setup and build messages go to stderr so that stdout is mgpu-tune's alone.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >&2
exec "${BUILD_DIR:-build}/mgpu-tune" "$@"
