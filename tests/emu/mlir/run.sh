#!/usr/bin/env bash
# Runs one conformance program of tests/emu/mlir the way its RUN line says:
#   mlir-opt FILE -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa"
#   | mlir-runner --shared-libs=RUNTIME,runner_utils,c_runner_utils --entry-point-result=void
#   | FileCheck FILE
# on the driver that MGPU_CUDA_DRIVER names (the virtual device under ctest). The runtime
# library exits non-zero when a driver call fails or the virtual device's checkers report
# anything, and this script fails then, whatever the output. A program marked
# "// EXPECT-FINDINGS" is a faulty kernel: it must make the runner fail, and its stderr must
# match its FINDING: lines.
# Usage: run.sh MLIR_BIN_DIR MLIR_LIB_DIR RUNTIME_LIB FILE
set -u -o pipefail
bin=$1 lib=$2 runtime=$3 file=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin/mlir-opt" "$file" -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
  -o "$work/lowered.mlir" || { echo "run.sh: mlir-opt failed" >&2; exit 1; }
"$bin/mlir-runner" "$work/lowered.mlir" --entry-point-result=void \
  --shared-libs="$runtime,$lib/libmlir_runner_utils.so,$lib/libmlir_c_runner_utils.so" >"$work/out" 2>"$work/err"
rc=$?
cat "$work/out"
cat "$work/err" >&2

if grep -q '^// EXPECT-FINDINGS' "$file"; then
  if [ "$rc" -eq 0 ]; then echo "run.sh: the faulty program ran without a failure" >&2; exit 1; fi
  "$bin/FileCheck" "$file" --check-prefix=FINDING --input-file="$work/err" || exit 1
  exit 0
fi
if [ "$rc" -ne 0 ]; then echo "run.sh: mlir-runner exited with $rc" >&2; exit 1; fi
"$bin/FileCheck" "$file" --input-file="$work/out"
