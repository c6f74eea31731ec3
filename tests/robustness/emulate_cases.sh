#!/usr/bin/env bash
# Bad inputs of `emulate`: launch descriptions (types, values that would wrap modulo 2^32, grids
# beyond CUDA's limits), folders given as --ptx/--launch, and an endless kernel ended by the step
# limit. Run: MGPU=build/harness/mgpu-tune SRC=. bash tests/robustness/emulate_cases.sh
. "$(dirname "$0")/lib.sh"
finish
