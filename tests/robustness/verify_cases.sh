#!/usr/bin/env bash
# Bad input to 'mgpu-tune verify matmul' (issue 17): every case exits 2 with a one-line reason
# before anything is compiled, run or written (and --help says what --sample goes with).
# Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/verify_cases.sh
. "$(dirname "$0")/lib.sh"

fixture_not_a_db() { printf 'not a database\n' > "$W/t.db"; }
fixture_dir_db() { mkdir "$W/t.db"; }
fixture_shapes() { printf 'm,n,k\n256,256,256\n' > "$W/s.csv"; }

bad neither           2 "give exactly one of --config JSON and --all" -- verify matmul --arch sm_90a --db '$DB'
bad both              2 "give exactly one of --config JSON and --all" -- verify matmul --arch sm_90a --all --config '{}' --db '$DB'
bad no_arch           2 "--arch is required"                           -- verify matmul --all --db '$DB'
bad no_subcommand     2 "subcommand"                                   -- verify
bad arch_unknown      2 "unknown arch .sm_42."                          -- verify matmul --arch sm_42 --all --db '$DB'
bad bad_json          2 "config"                                       -- verify matmul --arch sm_90a --config '{"tile_m":' --db '$DB'
bad unknown_field     2 "tile_q"                                       -- verify matmul --arch sm_90a --config '{"tile_q":64}' --db '$DB'
bad invalid_config    2 "invalid config \(shape\)"                     -- verify matmul --arch sm_90a --config '{"tile_m":96}' --db '$DB'
bad seeds_zero        2 "--seeds"                                      -- verify matmul --arch sm_90a --all --seeds 0 --db '$DB'
bad seeds_text        2 "--seeds"                                      -- verify matmul --arch sm_90a --all --seeds many --db '$DB'
bad jobs_zero         2 "--jobs"                                       -- verify matmul --arch sm_90a --all --jobs 0 --db '$DB'
bad bad_problem       2 "--k"                                          -- verify matmul --arch sm_90a --all --k 0 --db '$DB'
bad unaligned_problem 2 "not a multiple of 16 as TMA requires"                 -- verify matmul --arch sm_90a --all --n 100 --db '$DB'
bad shapes_and_m      2 "--shapes gives the shapes"                    --fixture shapes -- verify matmul --arch sm_90a --all --shapes '$W/s.csv' --m 256 --db '$DB'
bad shapes_missing    2 "nope.csv"                                     -- verify matmul --arch sm_90a --all --shapes '$W/nope.csv' --db '$DB'
bad db_not_sqlite     2 "not an SQLite database|not a database|file is not a database" --fixture not_a_db -- verify matmul --arch sm_90a --config '{}' --db '$DB'
bad db_is_a_folder    2 "t.db"                                         --fixture dir_db -- verify matmul --arch sm_90a --config '{}' --db '$DB'
# --sample picks among --all's configs: with --config it was ignored without a word.
bad verify_sample_with_config 2 "error: --sample has no effect with --config \(one config\)" -- verify matmul --arch sm_90a --config '{}' --sample 3 --db '$DB'
bad verify_sample_seed_with_config 2 "error: --sample-seed has no effect with --config" -- verify matmul --arch sm_90a --config '{}' --sample-seed 5 --db '$DB'
bad verify_sample_and_seed_with_config 2 "error: --sample has no effect with --config" -- verify matmul --arch sm_90a --config '{}' --sample 2 --sample-seed 5 --db '$DB'
bad verify_help_sample_needs_all 0 "With --all: only this many configs.*Not with --config" -- verify matmul --help
# Round 19, F40: verify's database is the one matmul and attention write by default.
bad verify_default_db_is_the_tuners 0 "--db TEXT=mgpu-tune.db" -- verify matmul --help
# --only NAME=VALUE narrows --all to one part of the space (issue 32: the split_k schedule): a
# typo in the name or the value, a missing '=', or nothing left is named, never an empty run.
bad only_unknown_param 2 "--only schedul=split_k: matmul_sm90 has no parameter schedul \(tile_m, " -- verify matmul --arch sm_90a --all --only schedul=split_k --db '$DB'
bad only_unknown_value 2 "--only schedule=splitk: schedule takes data_parallel, split_k" -- verify matmul --arch sm_90a --all --only schedule=splitk --db '$DB'
bad only_no_equals     2 "--only schedule: expected NAME=VALUE" -- verify matmul --arch sm_90a --all --only schedule --db '$DB'
bad only_without_all   2 "--only picks among --all's configs: add --all" -- verify matmul --arch sm_90a --config '{}' --only schedule=split_k --db '$DB'
bad only_leaves_none   2 "no valid config of the space has those values" -- verify matmul --arch sm_90a --all --only schedule=data_parallel --only split_k=8 --db '$DB'
# Round 6 (U01, U02): with --shapes a config is judged at the suite's shapes, not at 4096^3 --
# a split config valid at every decode row was refused with 4096^3's workspace, and
# `--all --only schedule=split_k` found no config.
fixture_decode_suite() { printf 'm,n,k\n16,256,1024\n1,256,1024\n' > "$W/dec.csv"; }
bad shapes_split_config_judged_at_suite 0 "1 of 1 .*pairs checked \\(1 verified\\)|2 of 2 .*pairs checked \\(2 verified\\)" --fixture decode_suite --writes -- \
  verify matmul --arch sm_90a --db t.db --shapes dec.csv --config '{"schedule":"split_k","split_k":2,"tile_m":64,"tile_n":64}' --seeds 1 -q
bad shapes_split_part_of_suite 0 "(1 of 1 .*pairs checked \\(1 verified\\)|2 of 2 .*pairs checked \\(2 verified\\))" --fixture decode_suite --writes -- \
  verify matmul --arch sm_90a --db t.db --shapes dec.csv --all --only schedule=split_k --sample 1 --seeds 1 -q
bad shapes_config_valid_nowhere 2 "tile" --fixture decode_suite -- \
  verify matmul --arch sm_90a --db t.db --shapes dec.csv --config '{"tile_m":256,"tile_n":256,"max_concurrent_steps":8}' -q

# Round 6 (ST01): a step limit lowered below the default is no verdict on the kernel: env_error
# (retried), never a stored deadlock that a later run without it would trust.
bad step_limit_lowered_is_no_verdict 0 "env_error.*below the default 20000000: not a verdict.*1 of 1 .*\\(1 verified\\); 0 from earlier" --writes -- sh: \
  "MGPU_EMU_STEP_LIMIT=100 '$MGPU' verify matmul --arch sm_90a --db t.db --config '{\"tile_m\":64,\"tile_n\":64}' --m 256 --n 256 --k 256 -q 2>&1 | tr -d '\n'; [ \${PIPESTATUS[0]} = 1 ] || exit 9; '$MGPU' verify matmul --arch sm_90a --db t.db --config '{\"tile_m\":64,\"tile_n\":64}' --m 256 --n 256 --k 256 -q 2>&1 | tr -d '\n'; exit \${PIPESTATUS[0]}"

# --sample N too small to show every value of every parameter names what it left out (was silent).
bad sample_names_values_left_out 0 "note: --sample 3 does not show every value of every parameter .*left out: .*tile_m=" --writes -- verify matmul --arch sm_90a --all --sample 3 --sample-seed 5 --m 128 --n 128 --k 256 --db '$DB' -q

# Round 6 (SE01): a pass under fewer schedules than asked for is not reused -- --seeds 1, then
# --seeds 2 runs again (0 from earlier), then --seeds 2 and --seeds 1 reuse the stronger pass.
V1="verify matmul --arch sm_90a --db t.db --config '{\"tile_m\":64,\"tile_n\":64}' --m 256 --n 256 --k 256 -q"
bad more_schedules_than_stored_runs_again 0 "\\(1 verified\\); 0 from earlier.*\\(1 verified\\); 0 from earlier.*\\(1 verified\\); 1 from earlier.*\\(1 verified\\); 1 from earlier" --writes -- sh: \
  "for s in 1 2 2 1; do '$MGPU' $V1 --seeds \$s 2>&1 | tr -d '\n'; [ \${PIPESTATUS[0]} = 0 ] || exit 9; done"

finish
