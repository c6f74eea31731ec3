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
#
# Directives a program may carry (LLVM's integration programs, tests/emu/mlir/llvm, need them;
# each is one comment line, in the program's own RUN order):
#   // MGPU-PIPELINE: ARGS        one mlir-opt stage (several lines: a pipe of stages), instead
#                                 of the default one above; ARGS are shell words
#   // MGPU-RUNNER-ARGS: ARGS     more mlir-runner arguments (e.g. -O0)
#   // MGPU-SHARED-LIB: NAME      one more library of MLIR_LIB_DIR (libNAME.so) for mlir-runner
#   // MGPU-ENV: VAR=VALUE        set in the environment of mlir-runner
#   // MGPU-COMPILE-ONLY: PREFIX  a compiler test: FileCheck every stage's output in turn (stdout
#                                 and stderr; the PTX of a gpu.binary unescaped) with
#                                 --check-prefix=PREFIX; nothing runs on a device
#   // MGPU-COMPILE-CHECK: PREFIX the same check of the compiled program, before it runs
#   // MGPU-EXPECT-COMPILE-ERROR: PREFIX  a program MLIR refuses for a bug of its own: a stage must
#                                 fail, and its errors must match the PREFIX lines
#   // MGPU-CHECK-OUTPUT          with EXPECT-FINDINGS: also FileCheck the CHECK lines against
#                                 the program's stdout and stderr together
#   // MGPU-REQUIRES: COMMAND      a shell condition ($bin is MLIR_BIN_DIR) the program needs, and
#   // MGPU-REQUIRES-WHY: TEXT     why; when it fails (or unconditionally for MGPU-UNSUPPORTED), the
#   // MGPU-UNSUPPORTED: WHY       program is not run: run.sh prints why and exits 77, which ctest
#                                 shows as skipped (SKIP_RETURN_CODE)
#   // MGPU-XFAIL: WHY             the program runs cleanly but its output does not match its CHECK
#                                 lines, for a bug of its own that no device can see (say which);
#                                 the test fails if the output ever matches
# A program without CHECK lines passes when it runs cleanly.
# Usage: run.sh MLIR_BIN_DIR MLIR_LIB_DIR RUNTIME_LIB FILE
set -u -o pipefail
bin=$1 lib=$2 runtime=$3 file=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

directive() { sed -n "s|^// $1: \{0,1\}||p" "$file"; }

if why=$(directive MGPU-UNSUPPORTED) && [ -n "$why" ]; then echo "run.sh: not run: $why"; exit 77; fi
while IFS= read -r req; do
  [ -z "$req" ] && continue
  if ! (eval "$req") >/dev/null 2>&1; then echo "run.sh: not run: $req is false: $(directive MGPU-REQUIRES-WHY)"; exit 77; fi
done < <(directive MGPU-REQUIRES)

stages=()
while IFS= read -r line; do stages+=("$line"); done < <(directive MGPU-PIPELINE)
[ ${#stages[@]} -eq 0 ] &&
  stages=('-gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa"')

input=$file
i=0
for stage in "${stages[@]}"; do
  eval "args=($stage)" || { echo "run.sh: bad MGPU-PIPELINE line: $stage" >&2; exit 1; }
  i=$((i + 1))
  if ! "$bin/mlir-opt" "$input" "${args[@]}" -o "$work/stage$i.mlir" 2>"$work/stage$i.err"; then
    cat "$work/stage$i.err" >&2
    if prefix=$(directive MGPU-EXPECT-COMPILE-ERROR) && [ -n "$prefix" ]; then
      "$bin/FileCheck" "$file" --check-prefix="$prefix" --input-file="$work/stage$i.err" || exit 1
      echo "run.sh: mlir-opt refused the program, as expected"
      exit 0
    fi
    echo "run.sh: mlir-opt failed (stage $i: $stage)" >&2
    exit 1
  fi
  input=$work/stage$i.mlir
done
if [ -n "$(directive MGPU-EXPECT-COMPILE-ERROR)" ]; then echo "run.sh: mlir-opt accepted a program marked MGPU-EXPECT-COMPILE-ERROR" >&2; exit 1; fi

# What a compiler check reads: every stage's output in order (the IR after each), as upstream's
# dumps of intermediate IR did, with the PTX that cubin-format=isa embeds unescaped (newlines and
# tabs written out), which reads as the PTX -debug-only=serialize-to-isa would dump.
for j in $(seq 1 "$i"); do cat "$work/stage$j.mlir" "$work/stage$j.err"; done | sed 's/\\0A/\n/g; s/\\09/\t/g' >"$work/compiled"
if prefix=$(directive MGPU-COMPILE-ONLY) && [ -n "$prefix" ]; then
  "$bin/FileCheck" "$file" --check-prefix="$prefix" --input-file="$work/compiled"
  exit
fi
if prefix=$(directive MGPU-COMPILE-CHECK) && [ -n "$prefix" ]; then
  "$bin/FileCheck" "$file" --check-prefix="$prefix" --input-file="$work/compiled" || exit 1
fi

libs="$runtime,$lib/libmlir_runner_utils.so,$lib/libmlir_c_runner_utils.so"
while IFS= read -r name; do [ -n "$name" ] && libs="$libs,$lib/lib$name.so"; done < <(directive MGPU-SHARED-LIB)
runner_args=()
while IFS= read -r line; do eval "runner_args+=($line)"; done < <(directive MGPU-RUNNER-ARGS)
envs=()
while IFS= read -r line; do [ -n "$line" ] && envs+=("$line"); done < <(directive MGPU-ENV)

env "${envs[@]}" "$bin/mlir-runner" "$input" --entry-point-result=void --shared-libs="$libs" "${runner_args[@]}" \
  >"$work/out" 2>"$work/err"
rc=$?
cat "$work/out"
cat "$work/err" >&2

if grep -q '^// EXPECT-FINDINGS' "$file"; then
  if [ "$rc" -eq 0 ]; then echo "run.sh: the faulty program ran without a failure" >&2; exit 1; fi
  "$bin/FileCheck" "$file" --check-prefix=FINDING --input-file="$work/err" || exit 1
  if grep -q '^// MGPU-CHECK-OUTPUT' "$file"; then
    cat "$work/out" "$work/err" >"$work/all"
    "$bin/FileCheck" "$file" --input-file="$work/all" || exit 1
  fi
  exit 0
fi
if [ "$rc" -ne 0 ]; then echo "run.sh: mlir-runner exited with $rc" >&2; exit 1; fi
# A program with no CHECK line (upstream has some) only has to run cleanly.
grep -qE '^[[:space:]]*//[[:space:]]*CHECK(-[A-Z]+)?:' "$file" || exit 0
if why=$(directive MGPU-XFAIL) && [ -n "$why" ]; then
  if "$bin/FileCheck" "$file" --input-file="$work/out" 2>/dev/null; then
    echo "run.sh: the program ran and its output matched, but it is marked MGPU-XFAIL: $why" >&2
    exit 1
  fi
  echo "run.sh: the program ran cleanly and its output does not match, as expected: $why"
  exit 0
fi
"$bin/FileCheck" "$file" --input-file="$work/out"
