#!/usr/bin/env bash
# What users read speaks to users: no internal issue numbers ("(issue 19)") in any command's
# --help, in the README's headings, or in the HTML report of a results database.
# Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/text_cases.sh
. "$(dirname "$0")/lib.sh"

helps() {  # every command's --help, one after the other
  local c
  "$MGPU" --help
  for c in devices compile space best trials export import merge regress report bench matmul emulate verify sass \
           campaign "campaign plan" "campaign submit" "campaign status" "campaign resume" "campaign run-task" \
           "compile matmul" "space matmul" "bench matmul" "verify matmul"; do
    # shellcheck disable=SC2086
    "$MGPU" $c --help || echo "FAILED: $c --help"
  done
}
bad help_texts_name_no_issue 0 "^ok$" --writes -- sh: "$(declare -f helps); MGPU='$MGPU'; helps > all.txt 2>&1; \
  if grep -n 'FAILED' all.txt || grep -En '[Ii]ssues? [0-9]' all.txt; then echo bad; else echo ok; fi"
bad readme_headings_name_no_issue 0 "^ok$" -- sh: "grep -En '^#+ .*[Ii]ssues? [0-9]' '$SRC/README.md' && echo bad || echo ok"
bad report_names_no_issue 0 "^ok$" --fixture good --writes -- sh: "'$MGPU' report --db t.db -o rep > log.txt 2>&1 || { cat log.txt; echo failed; }; \
  grep -Eno '.{30}[Ii]ssues? [0-9].{10}' rep/*.html && echo bad || echo ok"
# A 2^65-byte split-K workspace wrapped to "needs 0 bytes": saturated, said as more than 2^63-1.
bad split_k_workspace_no_wrap 2 "needs more than 9223372036854775807 bytes of workspace" -- compile matmul --arch sm_90a --m 2147483632 --n 2147483632 --k 2147483632 --config '{"swap_ab":"yes","tile_m":16,"tile_n":64,"schedule":"split_k","split_k":2}'

finish
