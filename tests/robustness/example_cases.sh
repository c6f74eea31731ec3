#!/usr/bin/env bash
# Bad inputs: (example area; replace). Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/example_cases.sh
. "$(dirname "$0")/lib.sh"
bad arch_unknown 2 "unknown arch 'sm_42'" -- matmul --arch sm_42
bad best_on_good_db_is_fine 0 "matmul" --fixture good -- best --db '$DB' --include-model
finish
