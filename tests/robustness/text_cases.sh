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
           "compile matmul" "space matmul" "bench matmul" "verify matmul" attention "space attention" "verify attention"; do
    # shellcheck disable=SC2086
    "$MGPU" $c --help || echo "FAILED: $c --help"
  done
}
bad help_texts_name_no_issue 0 "^ok$" --writes -- sh: "$(declare -f helps); MGPU='$MGPU'; helps > all.txt 2>&1; \
  if grep -n 'FAILED' all.txt || grep -En '[Ii]ssues? [0-9]' all.txt; then echo bad; else echo ok; fi"
bad readme_headings_name_no_issue 0 "^ok$" -- sh: "grep -En '^#+ .*[Ii]ssues? [0-9]' '$SRC/README.md' && echo bad || echo ok"
bad report_names_no_issue 0 "^ok$" --fixture good --writes -- sh: "'$MGPU' report --db t.db -o rep > log.txt 2>&1 || { cat log.txt; echo failed; }; \
  grep -Eno '.{30}[Ii]ssues? [0-9].{10}' rep/*.html && echo bad || echo ok"
# Round 20, F54: a report folder named in UTF-8 was a Python UnicodeEncodeError traceback, exit 1
# (the embedded interpreter read file names as ASCII).
bad report_folder_not_ascii 0 "wrote rép ☃/index.html" --fixture good --writes -- report --db '$DB' -o 'rép ☃'
# A 2^65-byte split-K workspace wrapped to "needs 0 bytes": saturated, said as more than 2^63-1.
bad split_k_workspace_no_wrap 2 "needs more than 9223372036854775807 bytes of workspace" -- compile matmul --arch sm_90a --m 2147483632 --n 2147483632 --k 2147483632 --config '{"swap_ab":"yes","tile_m":16,"tile_n":64,"schedule":"split_k","split_k":2}'

# --- Round 7 (F4, F10): CSV shape suites. A header naming a column twice took its last value
# without a word (a JSON key given twice is refused); a header is told by its content, not by a
# first column "m"; an unknown column is refused even where its fields are empty; a row's number
# out of range names the file, line and column, never a flag the user did not give. Each refusal
# has its twin that is read. ---
csv() { printf "$2" > "$W/$1"; }  # csv FILE TEXT (printf escapes)
fixture_csv_column_twice() { csv s.csv 'm,m,n,k\n128,256,512,512\n'; }
fixture_csv_column_twice_case() { csv s.csv 'M,n,k,m\n128,256,512,512\n'; }
fixture_csv_columns_distinct() { csv s.csv 'm,n,k\n128,256,512\n'; }
fixture_csv_unknown_empty() { csv s.csv 'm,n,k,foo\n128,256,512,\n'; }
fixture_csv_note_empty() { csv s.csv 'm,n,k,note\n128,256,512,\n'; }
fixture_csv_reordered() { csv s.csv 'n,k,m\n256,256,512\n'; }
fixture_csv_reordered_unknown() { csv s.csv 'n,k,q\n256,256,512\n'; }
fixture_csv_first_x() { csv s.csv 'x,m,n,k\n1,512,256,256\n'; }
fixture_csv_first_name() { csv s.csv 'name,m,n,k\nproj,512,256,256\n'; }
fixture_csv_k_2pow31() { csv s.csv 'm,n,k\n128,256,2147483648\n'; }
fixture_csv_k_large() { csv s.csv 'm,n,k\n128,256,65536\n'; }
fixture_csv_nul() { csv s.csv 'm,n,k\n128,256,5\0x\n'; }
PLAN=(campaign plan --arch sm_90a --shapes s.csv --trials 1 -o c.json)
bad csv_header_column_twice 2 "s\.csv line 1: the header names the column 'm' twice \(columns 1 and 2\)" --fixture csv_column_twice -- "${PLAN[@]}"
bad csv_header_column_twice_any_case 2 "s\.csv line 1: the header names the column 'm' twice \(columns 1 and 4\)" \
  --fixture csv_column_twice_case -- "${PLAN[@]}"
bad csv_header_columns_distinct 0 "\"m128_n256_k512_bf16_bf16_kn\"" --fixture csv_columns_distinct --writes -- sh: \
  "'$MGPU' campaign plan --arch sm_90a --shapes s.csv --trials 1 -o c.json > /dev/null && grep -o '\"m128_n256_k512_bf16_bf16_kn\"' c.json"
bad csv_header_unknown_column_empty_fields 2 "s\.csv line 1: unknown column 'foo' in the header" --fixture csv_unknown_empty -- "${PLAN[@]}"
bad csv_header_note_column_empty_fields 0 "wrote c\.json: 1 tasks" --fixture csv_note_empty --writes -- "${PLAN[@]}"
bad csv_header_reordered 0 "\"m512_n256_k256_bf16_bf16_kn\"" --fixture csv_reordered --writes -- sh: \
  "'$MGPU' campaign plan --arch sm_90a --shapes s.csv --trials 1 -o c.json > /dev/null && grep -o '\"m512_n256_k256_bf16_bf16_kn\"' c.json"
bad csv_header_reordered_unknown 2 "s\.csv line 1: unknown column 'q' in the header" --fixture csv_reordered_unknown -- "${PLAN[@]}"
bad csv_header_first_column_unknown 2 "s\.csv line 1: unknown column 'x' in the header" --fixture csv_first_x -- "${PLAN[@]}"
bad csv_header_first_column_name 0 "\"m512_n256_k256_bf16_bf16_kn\"" --fixture csv_first_name --writes -- sh: \
  "'$MGPU' campaign plan --arch sm_90a --shapes s.csv --trials 1 -o c.json > /dev/null && grep -o '\"m512_n256_k256_bf16_bf16_kn\"' c.json"
bad csv_row_k_out_of_range_names_no_flag 2 "^mgpu-tune: error: s\.csv line 2: k must be between 1 and 2147483647, got 2147483648$" \
  --fixture csv_k_2pow31 -- "${PLAN[@]}"
bad csv_row_k_in_range 0 "wrote c\.json: 1 tasks" --fixture csv_k_large --writes -- "${PLAN[@]}"
bad csv_row_nul_byte_said 2 "s\.csv line 2: k must be a positive integer, got '5\\\\x00x'" --fixture csv_nul -- "${PLAN[@]}"

# --- Round 7 (F16): an MLIR file that does not parse is named by its own name, not "-"; a
# gzip-compressed one is said to be. ---
fixture_mlir_garbage() { { cat "$SRC/tests/data/saxpy.mlir"; printf '\0garbage'; } > "$W/bad.mlir"; }
fixture_mlir_good() { cp "$SRC/tests/data/saxpy.mlir" "$W/good.mlir"; }
fixture_mlir_gzip() { gzip -nc "$SRC/tests/data/saxpy.mlir" > "$W/z.mlir"; }
bad mlir_parse_error_names_the_file 2 "MLIR parse failed:.*loc\(\"bad\.mlir\":[0-9]+:[0-9]+\): custom op 'garbage' is unknown" \
  --fixture mlir_garbage -- sh: "'$MGPU' compile --mlir bad.mlir --arch sm_90a --emit ptx -o o.ptx 2>&1 | tr '\n' ' '; exit \${PIPESTATUS[0]}"
bad mlir_parses_twin 0 "compiled good\.mlir for sm_90a" --fixture mlir_good --writes -- compile --mlir good.mlir --arch sm_90a --emit ptx -o o.ptx
bad mlir_emulate_gzip_named 2 "loc\(\"z\.mlir\":1:1\): unexpected character.*z\.mlir is gzip-compressed: gunzip it first" \
  --fixture mlir_gzip -- sh: "'$MGPU' emulate --mlir z.mlir 2>&1 | tr '\n' ' '; exit \${PIPESTATUS[0]}"

# Round 8 (F17): a mistyped command was "A subcommand is required", and `bogus --help` showed the
# top-level help with exit 0; a NUL in a value (F16) cut the message off before it.
bad unknown_command_named 2 "unknown command 'matmull' \(the commands: .*matmul.*attention" -- matmull --arch sm_90a
bad unknown_command_with_help 2 "unknown command 'bogus'" -- bogus --help
# Round 9 (F16): one level down the same: `bench attention` was "A subcommand is required",
# `compile bogus` "The following argument was not expected".
bad unknown_subcommand_of_bench 2 "'bench' has no 'bogus' \(its commands: matmul, attention\)" -- bench bogus --arch sm_90a
bad unknown_subcommand_of_space 2 "'space' has no 'bogus' \(its commands: matmul, attention\)" -- space bogus
bad unknown_subcommand_of_compile 2 "'compile' has no 'bogus'" -- compile bogus --arch sm_90a
bad unknown_subcommand_of_campaign 2 "'campaign' has no 'plann' \(its commands: plan," -- campaign plann
bad nul_in_config_value_shown 2 'got "data_parallel\\x00x"' -- compile matmul --arch sm_90a --m 256 --n 256 --k 256 --config '{"schedule":"data_parallel\u0000x"}'

# Round 19, F42: CLI11's own texts ("At Most 1 required but received 2", "Could not convert",
# "inputs is required", "The following argument was not expected") said in the tool's words.
bad option_given_twice 2 "error: --trials was given twice: give it once" -- matmul --arch sm_90a --trials 1 --trials 2
bad switch_given_a_word 2 "error: --causal is a switch: give it alone, or as --causal=true or --causal=false \(not 'maybe'\)" -- attention --arch sm_90a --causal=maybe
bad positional_missing 2 "error: no inputs given: Databases to merge" -- merge -o m.db
bad argument_not_expected 2 "error: not an option or value this command takes: --bogus" -- best --db t.db --bogus
# Round 20, F60: in the order typed (CLI11 joined them last first: "x --bogus").
bad arguments_not_expected_in_order 2 "error: not an option or value this command takes: --bogus x a$" -- best --db t.db --bogus x a
# Round 19, F43: Google Benchmark (linked for mgpu-bench) read `V` as its --v flag's default in
# every command; V is hidden from it, and still there for the programs mgpu-tune starts.
bad v_in_environment_ignored 2 "^mgpu-tune: error: database nothing.db does not exist$" -- \
  sh: "V=abc '$MGPU' best --db nothing.db 2>&1 | tr -d '\n'; exit \${PIPESTATUS[0]}"
bad v_in_environment_kept_for_children 0 "^V=abc seen$" --writes -- \
  sh: "printf '#!/bin/sh\necho V=\$V seen >&2\nexit 1\n' > fake_ptxas && chmod +x fake_ptxas && \
       V=abc MGPU_CACHE_DIR=cache MGPU_PTXAS=./fake_ptxas '$MGPU' compile matmul --arch sm_90a --m 256 --n 256 --k 256 --config '{}' 2>&1 | grep -o 'V=abc seen' | head -1"

finish
