#!/usr/bin/env bash
# Bad inputs of the tuning run: numeric options of matmul / space / compile matmul / bench,
# hand-written configs (overflow, types, unknown keys), a run where every trial fails, and an
# unusable compile cache. Run: MGPU=build/mgpu-tune SRC=. bash tests/robustness/run_cases.sh
. "$(dirname "$0")/lib.sh"

M=(--arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile)
C=(compile matmul --arch sm_90a --m 256 --n 256 --k 256 --no-cache)
# A full, valid config with one field set (replaced or added): cfg FIELD JSON-VALUE
BASE='{"cluster_dimension":"none","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"M","grid_tile_width":1,"max_concurrent_steps":4,"tile_k":64,"tile_m":128,"tile_n":128,"wg_dimension":"M"}'
cfg() {
  local rest="${BASE/\"$1\":/}"
  if [ "$rest" != "$BASE" ]; then
    echo "$BASE" | sed -E "s/\"$1\":(\"[^\"]*\"|[^,}]*)/\"$1\":${2//\//\\/}/"
  else
    echo "${BASE%\}},\"$1\":$2}"
  fi
}

# --- matmul: numeric options (finite, whole, in range), the good database untouched ---
for v in 0 -3 2.5 1e3 lots "" 99999999999999999999 0x10 2147483648 1000000001; do
  bad "matmul_trials_${v:-empty}" 2 "error: --trials.*must be a whole number between 1 and 1000000000, got '$v'" --fixture good -- matmul "${M[@]}" --trials "$v" --db '$DB'
done
for v in nan inf -inf -1 soon 1e400 0x10 NaN; do
  bad "matmul_time_budget_$v" 2 "error: --time-budget.*must be a finite number of at least 0, got '$v'" --fixture good -- matmul "${M[@]}" --time-budget "$v" --db '$DB'
done
# Optuna's samplers (numpy) take 32-bit seeds: a larger one crashed inside Python before.
for v in -1 1.5 x 18446744073709551616 4294967296 9223372036854775807; do
  bad "matmul_seed_$v" 2 "error: --seed.*must be a whole number between 0 and 4294967295, got '$v'" --fixture good -- matmul "${M[@]}" --seed "$v" --db '$DB'
done
for s in tpe cmaes random tpe-native; do
  bad "matmul_seed_2pow32_$s" 2 "error: --seed.*between 0 and 4294967295" --fixture good -- matmul "${M[@]}" --strategy $s --seed 4294967296 --db '$DB'
  bad "matmul_seed_largest_$s" 0 "#1 " --writes -- matmul "${M[@]}" --strategy $s --seed 4294967295 --trials 3 --db '$DB'
done
for v in 0 -2 1001 nan; do
  bad "matmul_top_$v" 2 "error: --top.*must be a whole number between 1 and 1000, got '$v'" --fixture good -- matmul "${M[@]}" --top "$v" --db '$DB'
done
for v in -1 nan 2.5; do
  bad "matmul_warm_start_$v" 2 "error: --warm-start.*must be a whole number between 0 and 1000, got '$v'" --fixture good -- matmul "${M[@]}" --warm-start "$v" --db '$DB'
done
bad matmul_quiet_and_verbose 2 "excludes" --fixture good -- matmul "${M[@]}" --quiet --verbose --db '$DB'
bad matmul_m_nan 2 "error: --m: must be a whole number between 1 and 2147483647, got 'nan'" --fixture good -- matmul --arch sm_90a --m nan --db '$DB'
bad matmul_shapes_with_trials_zero 2 "error: --trials" --fixture good -- matmul --arch sm_90a --shapes llama3-8b --trials 0 --db '$DB'

# --- matmul where every trial fails: exit 1 with a summary saying none succeeded ---
# (a replay of a database where every config of the problem failed; a replay database holding
# nothing for the problem is refused up front, exit 2: store_cases.sh)
fixture_good_all_failed() {
  fixture_good
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE trials SET status = '"'compile_error'"', median_ms = NULL, min_ms = NULL, mean_ms = NULL, noise = NULL WHERE source = '"'model'"'"); c.commit()' "$W/t.db"
}
bad matmul_every_trial_failed 1 "none of the trials succeeded" --fixture good_all_failed --writes -- \
  matmul --arch sm_90a --m 256 --n 256 --k 256 --device 'replay:$DB' --trials 3 --strategy random --db '$W/other.db'

# A budget spent before the first trial is said as such, not "none of the trials succeeded" (round 4, O02).
bad matmul_time_budget_before_any_trial 1 "the time budget \(1e-09 s\) ended before any trial ran" --writes -- \
  matmul --arch sm_90a --m 64 --n 64 --k 64 --device model --no-compile --strategy random --trials 50 --time-budget 1e-9 --db '$DB'
# A suite tuned on the virtual device reports its verdicts (it has no times) and exits 0 when
# every config verified: it said "replayed" and exited 1 (round 4, AB03).
bad matmul_emulate_suite_verified 0 "verified 1, failed 0.*results VERIFIED on the virtual device" --writes -- sh: \
  "printf 'm,n,k\n128,128,128\n' > s.csv && '$MGPU' matmul --arch sm_90a --shapes s.csv --device emulate --strategy random --trials 1 --db t.db 2>&1 | tr -d '\n'; exit \${PIPESTATUS[0]}"
# A resumed emulate run with nothing left to do failed nothing: exit 0, as --device model does
# (round 9, F2: exit 1 without a word, for a suite and for one shape).
bad matmul_emulate_resumed_with_nothing_left 0 "0 passed, 0 failed" --writes -- sh: \
  "for i in 1 2; do '$MGPU' matmul --arch sm_90a --m 128 --n 128 --k 128 --device emulate --strategy random --trials 1 --db t.db --quiet > o.txt 2>&1 || exit \$?; done; tr -d '\n' < o.txt"
bad matmul_emulate_suite_resumed_with_nothing_left 0 "verified 0, failed 0" --writes -- sh: \
  "printf 'm,n,k\n128,128,128\n' > s.csv && for i in 1 2; do '$MGPU' matmul --arch sm_90a --shapes s.csv --device emulate --strategy random --trials 1 --db t.db > o.txt 2>&1 || exit \$?; done; tr -d '\n' < o.txt"
# --- --device emulate runs the problem itself: one beyond its memory is the problem's limit, said
# before anything is written (every trial was recorded as its config's failure before) ---
for mnk in "2147483647 256 256" "256 2147483640 256" "65536 65536 65536"; do
  set -- $mnk
  bad "matmul_emulate_too_big_m$1_n$2_k$3" 2 "--device emulate runs the problem itself, and m$1_n$2_k$3_.* needs [0-9.]+ GiB of device memory; the virtual device has 16 GiB" \
    -- matmul --arch sm_90a --m "$1" --n "$2" --k "$3" --device emulate --trials 1 --db '$DB'
done
bad matmul_emulate_too_big_keeps_db 2 "needs [0-9.]+ GiB" --fixture good -- matmul --arch sm_90a --m 2147483647 --n 256 --k 256 --device emulate --trials 1 --db '$DB'
# A suite: every shape checked up front, before the first is tuned (round 4, AB01: the first shape
# ran, the second was an env_error after paging, exit 1). Nothing is written.
bad matmul_emulate_suite_second_too_big 2 "--device emulate runs the problem itself, and m65536_n65536_k65536_.* needs 24.0 GiB of device memory; the virtual device has 16 GiB" --writes -- \
  sh: "printf 'm,n,k\n128,128,128\n65536,65536,65536\n' > s.csv && '$MGPU' matmul --arch sm_90a --shapes s.csv --device emulate --trials 1 --db t.db; r=\$?; test -e t.db && { echo 't.db written'; exit 99; }; exit \$r"
bad matmul_emulate_suite_too_big_keeps_db 2 "m65536_n65536_k65536_.* needs 24.0 GiB" --fixture good -- \
  sh: "printf 'm,n,k\n128,128,128\n65536,65536,65536\n' > s.csv && '$MGPU' matmul --arch sm_90a --shapes s.csv --device emulate --trials 1 --db t.db; r=\$?; rm s.csv; exit \$r"
# Its float64 reference counts too: 65536 x 65536 x 8192 fits the virtual device (10 GiB) but
# needs 60 GiB in all. Checked where this machine has less (a larger one would run it).
if [ "$(awk '/^MemTotal:/ { print int($2 / 1048576) }' /proc/meminfo)" -lt 60 ]; then
  bad matmul_emulate_reference_too_big 2 "m65536_n65536_k8192_.* needs 60.0 GiB of memory: 10.0 GiB on the virtual device and 50.0 GiB on the host \(the float64 reference its result is checked against, 32.0 GiB, .*this machine has" --writes -- \
    sh: "printf 'm,n,k\n128,128,128\n65536,65536,8192\n' > s.csv && ulimit -v 8000000 && '$MGPU' matmul --arch sm_90a --shapes s.csv --device emulate --trials 1 --db t.db; r=\$?; test -e t.db && { echo 't.db written'; exit 99; }; exit \$r"
  bad matmul_emulate_one_reference_too_big 2 "needs 60.0 GiB of memory: 10.0 GiB on the virtual device" -- \
    sh: "ulimit -v 8000000 && '$MGPU' matmul --arch sm_90a --m 65536 --n 65536 --k 8192 --device emulate --trials 1 --db t.db; r=\$?; test -e t.db && { echo 't.db written'; exit 99; }; exit \$r"
fi

# --- the virtual device's knobs set to what they do not take: refused before any work (every
# config was recorded as its launch error before, and MGPU_EMU_RACES=yes verified without races) ---
V=(verify matmul --arch sm_90a --m 256 --n 256 --k 256 --config '{}')
for kv in MGPU_EMU_STEP_LIMIT=abc MGPU_EMU_STEP_LIMIT=0 MGPU_EMU_STEP_LIMIT=-5 MGPU_EMU_RACES=yes MGPU_EMU_RACES=2 \
          MGPU_EMU_SEED=x MGPU_EMU_SEED=-1 MGPU_EMU_SEED=99999999999999999999 MGPU_EMU_REPORTS=loud; do
  bad "verify_env_${kv//=/_}" 2 "error: verify: ${kv%%=*}='.*': must be" -- sh: env "$kv" '"$MGPU"' "${V[@]}" --db '$DB'
done
bad matmul_emulate_env_races 2 "error: --device emulate.*MGPU_EMU_RACES='on': must be 1" -- sh: env MGPU_EMU_RACES=on '"$MGPU"' matmul --arch sm_90a --m 256 --n 256 --k 256 --device emulate --trials 1 --db '$DB'
bad matmul_model_env_step_limit 2 "MGPU_EMU_STEP_LIMIT='1e9': must be" --fixture good -- sh: env MGPU_EMU_STEP_LIMIT=1e9 '"$MGPU"' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --trials 6 --db '$DB'
bad verify_env_races_off_still_verifies 0 "1 verified" --writes -- sh: env MGPU_EMU_RACES=0 '"$MGPU"' "${V[@]}" --db '$DB'

# --- space: numeric problem options ---
bad space_m_negative 2 "error: --m: must be a whole number between 1 and 2147483647, got '-5'" -- space matmul --arch sm_90a --m -5
bad space_k_text 2 "error: --k: must be a whole number .*got 'big'" -- space matmul --arch sm_90a --k big
bad space_n_float 2 "error: --n: must be a whole number .*got '12.5'" -- space matmul --arch sm_90a --n 12.5

# --- compile matmul: -j and hand-written configs ---
for v in 0 -4 abc 1.5; do
  bad "compile_jobs_$v" 2 "error: --jobs.*must be a whole number between 1 and 4096, got '$v'" -- "${C[@]}" -j "$v" --config "$(cfg tile_m 128)"
done
bad compile_tile_m_2pow62 2 "tile_m = 4611686018427387904 is out of range" -- "${C[@]}" --config "$(cfg tile_m 4611686018427387904)"
bad compile_tile_m_2pow63 2 "'tile_m' is out of range" -- "${C[@]}" --config "$(cfg tile_m 9223372036854775808)"
bad compile_tile_m_2pow64 2 "'tile_m' is out of range: 18446744073709551616 \(beyond 64 bits\)" -- "${C[@]}" --config "$(cfg tile_m 18446744073709551616)"
bad compile_tile_m_20_digits 2 "'tile_m' is out of range: 99999999999999999999 \(beyond 64 bits\)" -- "${C[@]}" --config "$(cfg tile_m 99999999999999999999)"
bad compile_tile_m_below_int64 2 "'tile_m' is out of range: -9223372036854775809 \(beyond 64 bits\)" -- "${C[@]}" --config "$(cfg tile_m -9223372036854775809)"
# Quoted whole up to 80 characters, else cut there and marked: never another, shorter number.
bad compile_tile_m_46_digits 2 "'tile_m' is out of range: 1111111111111111111111111111111111111111111111 \(beyond 64 bits\)" -- "${C[@]}" --config "$(cfg tile_m 1111111111111111111111111111111111111111111111)"
bad compile_tile_m_90_digits 2 "'tile_m' is out of range: 99999999999999999999999999999999999999999999999999999999999999999999999999999999\.\.\. \(beyond 64 bits\)" -- "${C[@]}" --config "$(cfg tile_m 999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999)"
bad compile_tile_m_exponent_huge 2 "'tile_m' must be an integer or a string, got 1E20$" -- "${C[@]}" --config "$(cfg tile_m 1E20)"
bad compile_tile_m_2pow32 2 "tile_m = 4294967296 is out of range" -- "${C[@]}" --config "$(cfg tile_m 4294967296)"
bad compile_tile_m_2pow30 2 "invalid config" -- "${C[@]}" --config "$(cfg tile_m 1073741824)"
bad compile_tile_k_int_max 2 "invalid config" -- "${C[@]}" --config "$(cfg tile_k 2147483647)"
bad compile_tile_m_negative 2 "invalid config" -- "${C[@]}" --config "$(cfg tile_m -128)"
bad compile_tile_m_zero 2 "invalid config" -- "${C[@]}" --config "$(cfg tile_m 0)"
bad compile_tile_m_fraction 2 "'tile_m' must be an integer or a string" -- "${C[@]}" --config "$(cfg tile_m 128.5)"
bad compile_tile_m_float_whole 2 "'tile_m' must be written as an integer \(128\), got 128.0" -- "${C[@]}" --config "$(cfg tile_m 128.0)"
bad compile_tile_m_exponent 2 "'tile_m' must be written as an integer \(100\), got 1e2" -- "${C[@]}" --config "$(cfg tile_m 1e2)"
bad compile_tile_m_float_whole_long 2 "'tile_m' must be written as an integer \(64\), got 64\.0{77}\.\.\.$" -- "${C[@]}" --config "$(cfg tile_m 64.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001)"
bad compile_tile_m_string 2 "no integer 'tile_m'" -- "${C[@]}" --config "$(cfg tile_m '"128"')"
bad compile_tile_m_bool 2 "'tile_m' must be an integer or a string" -- "${C[@]}" --config "$(cfg tile_m true)"
bad compile_tile_m_null 2 "'tile_m' must be an integer or a string" -- "${C[@]}" --config "$(cfg tile_m null)"
bad compile_tile_m_array 2 "'tile_m' must be an integer or a string" -- "${C[@]}" --config "$(cfg tile_m '[128]')"
bad compile_tile_m_object 2 "'tile_m' must be an integer or a string" -- "${C[@]}" --config "$(cfg tile_m '{"v":128}')"
bad compile_unknown_key 2 "unknown matmul config parameter 'tile_q'" -- "${C[@]}" --config "$(cfg tile_q 64)"
bad compile_unknown_key_in_partial 2 "unknown matmul config parameter 'tilem'" -- "${C[@]}" --config '{"tilem":128}'
bad compile_grid_minor_dim_bad 2 'grid_minor_dim must be "M" or "N"' -- "${C[@]}" --config "$(cfg grid_minor_dim '"X"')"
bad compile_cluster_dimension_int 2 "no text value 'cluster_dimension'" -- "${C[@]}" --config "$(cfg cluster_dimension 2)"
bad compile_config_array 2 "config must be a JSON object" -- "${C[@]}" --config '[1,2]'
bad compile_config_not_json 2 "config is not valid JSON" -- "${C[@]}" --config '{tile_m:'
bad compile_config_empty_string 2 "error: --config: an empty value \\(''\\) is not taken" -- "${C[@]}" --config ''
bad compile_config_and_all 2 "exactly one of --config JSON and --all" -- "${C[@]}" --all --config '{}'

# --- bench matmul: --repeat and configs are checked before a GPU is looked for ---
for v in 0 -1 nan; do
  bad "bench_repeat_$v" 2 "error: --repeat.*must be a whole number between 1 and 1000, got '$v'" -- bench matmul --arch sm_90a --repeat "$v"
done
# --min-time / --max-time (the lease's cheaper rule): a positive number of seconds, the cap not below the least.
for v in 0 -1 nan 11; do
  bad "bench_min_time_$v" 2 "error: --min-time.*must be a finite number.*got '$v'" -- bench matmul --arch sm_90a --min-time "$v"
done
bad bench_max_time_below_min_time 2 "--max-time 0.1 is below --min-time 0.5: no measurement could gather its least time" -- bench matmul --arch sm_90a --max-time 0.1
bad bench_tile_m_2pow62 2 "tile_m = 4611686018427387904 is out of range" -- bench matmul --arch sm_90a --config "$(cfg tile_m 4611686018427387904)"
bad bench_unknown_key 2 "unknown matmul config parameter 'tile_q'" -- bench matmul --arch sm_90a --config '{"tile_q":1}'
bad bench_partial_bad_value 2 "no integer 'tile_n'" -- bench matmul --arch sm_90a --config '{"tile_n":"wide"}'

# --- an unusable compile cache: one warning, compiled without it, exit 0 (not a config's failure) ---
fixture_cache_file() { echo "not a folder" > "$W/cachefile"; }
# Round 19: a HOME that is no folder is not made for the default cache (it made /nonexistent/.cache).
bad compile_cache_home_not_made 0 "warning: the compile cache .*nohome/.cache/mgpu-tune cannot be used \\(HOME=.*nohome is no folder" -- \
  sh: "env -u MGPU_CACHE_DIR -u XDG_CACHE_HOME HOME=\$PWD/nohome '$MGPU' compile matmul --arch sm_90a --m 256 --n 256 --k 256 --config '{}'; r=\$?; test -e nohome && echo 'nohome made'; exit \$r"
bad compile_cache_dir_is_a_file 0 "warning: the compile cache .*cachefile cannot be used.*compiling without it" \
  --fixture cache_file -- compile matmul --arch sm_90a --m 256 --n 256 --k 256 --cache-dir '$W/cachefile' --config "$(cfg tile_m 128)"
bad compile_partial_config_is_filled 0 "defaults are used: .*epi_tile_n=" -- "${C[@]}" --config '{"tile_m":128,"tile_n":128}'


# --- a second battery: configs that divided by zero, inputs that blocked or were overwritten,
# paths the system refuses, the virtual device taken for a GPU ---
for v in 0 -64 -8; do
  bad "compile_epi_tile_m_$v" 2 "invalid config \\(epilogue\\): epi_tile_m $v" -- "${C[@]}" --config "$(cfg epi_tile_m $v)"
  bad "compile_epi_tile_n_$v" 2 "invalid config \\(epilogue\\): epi_tile_n $v" -- "${C[@]}" --config "$(cfg epi_tile_n $v)"
done
bad verify_epi_tile_n_0 2 "invalid config" -- verify matmul --arch sm_90a --m 256 --n 256 --k 256 --config '{"epi_tile_n":0}' --db '$DB'
bad bench_epi_tile_m_0 2 "invalid config" -- bench matmul --arch sm_90a --config '{"epi_tile_m":0}'
fixture_mlir() {
  printf 'module {\n gpu.module @k {\n gpu.func @f() kernel { gpu.return } } }\n' > "$W/k.mlir"
  ln -s k.mlir "$W/link.mlir"; echo "module {}" > "$W/empty.mlir"; mkdir "$W/folder.mlir"; mkfifo "$W/pipe.mlir"
}
bad compile_output_is_the_input 2 "refusing to write .*k.mlir: it is the input MLIR file" --fixture mlir -- compile --mlir '$W/k.mlir' --arch sm_90a --emit ptx -o '$W/k.mlir'
bad compile_output_is_the_input_by_link 2 "refusing to write .*k.mlir: it is the input MLIR file" --fixture mlir -- compile --mlir '$W/link.mlir' --arch sm_90a --emit cubin -o '$W/k.mlir'
bad compile_output_to_full_disk 1 "cannot write /dev/full: .*No space left on device" --fixture mlir -- compile --mlir '$W/k.mlir' --arch sm_90a --emit ptx -o /dev/full
bad compile_mlir_fifo 2 "MLIR file .*pipe.mlir is a FIFO" --fixture mlir -- sh: timeout -s KILL 30 '"$MGPU"' compile --mlir '$W/pipe.mlir' --arch sm_90a
bad compile_mlir_folder 2 "MLIR file .*folder.mlir is a folder" --fixture mlir -- compile --mlir '$W/folder.mlir' --arch sm_90a
bad compile_mlir_dev_zero 2 "MLIR file /dev/zero is a character device" -- sh: timeout -s KILL 30 '"$MGPU"' compile --mlir /dev/zero --arch sm_90a
bad compile_mlir_without_kernels 2 "the module holds no gpu.module to compile" --fixture mlir -- compile --mlir '$W/empty.mlir' --arch sm_90a --no-cache
bad sass_fifo 2 "cubin .*pipe.mlir is a FIFO" --fixture mlir -- sh: timeout -s KILL 30 '"$MGPU"' sass '$W/pipe.mlir'
bad sass_folder 2 "cubin .*folder.mlir is a folder" --fixture mlir -- sass '$W/folder.mlir'
bad suite_fifo 2 "shape suite file .*p.csv is a FIFO" -- sh: mkfifo p.csv '&&' timeout -s KILL 30 '"$MGPU"' matmul --arch sm_90a --shapes p.csv --device model --no-compile --db t.db
LONG="$ROOT/$(printf 'd%.0s' $(seq 250))/$(printf 'e%.0s' $(seq 250))"; LONG="$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/x.db"
bad matmul_db_path_too_long 2 "cannot use .*: File name too long" -- matmul "${M[@]}" --trials 1 --db "$LONG"
bad merge_into_symlink_loop 2 "Too many levels of symbolic links" --fixture good -- sh: ln -s l1 l2 '&&' ln -s l2 l1 '&&' '"$MGPU"' merge '$DB' -o l1/x.db
bad verify_db_symlink_loop 2 "Too many levels of symbolic links" -- sh: ln -s l1 l2 '&&' ln -s l2 l1 '&&' '"$MGPU"' verify matmul --arch sm_90a --config "'{}'" --db l1/x.db
bad sample_seed_negative 2 "error: --sample-seed.*must be a whole number at least 0 \\(at most 9223372036854775807\\), got '-1'" -- verify matmul --arch sm_90a --all --sample 2 --sample-seed -1 --db '$DB'
# Round 6 (V16): a seed beyond 2^63-1 is refused with the upper end said, not only "at least 0".
bad sample_seed_beyond_int64 2 "error: --sample-seed.*at most 9223372036854775807\\), got '18446744073709551615'" -- verify matmul --arch sm_90a --all --sample 2 --sample-seed 18446744073709551615 --db '$DB'
bad sample_seed_2pow64 2 "error: --sample-seed.*got '18446744073709551616'" -- verify matmul --arch sm_90a --all --sample 2 --sample-seed 18446744073709551616 --db '$DB'
bad space_sample_seed_negative 2 "error: --sample-seed" -- space matmul --arch sm_90a --lints --sample 1 --sample-seed -1
VCUDA="${MGPU_CUDA_DRIVER:-}"  # else where mgpu-tune itself looks: beside it, or the build's core/emu
for c in "$(dirname "$MGPU")/libmgpu_vcuda.so" "$(dirname "$MGPU")/core/emu/libmgpu_vcuda.so"; do
  [ -z "$VCUDA" ] && [ -f "$c" ] && VCUDA="$c"
done
bad matmul_cuda_on_the_virtual_device 2 "--device cuda: the CUDA driver loaded is the virtual device" -- sh: env MGPU_CUDA_DRIVER="$VCUDA" '"$MGPU"' matmul --arch sm_90a --m 256 --n 256 --k 256 --device cuda --trials 1 --db '$DB'
bad matmul_auto_on_the_virtual_device_predicts 0 "the CUDA driver loaded is the virtual device.*labelled 'model'" --writes -- sh: env MGPU_CUDA_DRIVER="$VCUDA" '"$MGPU"' matmul --arch sm_90a --m 256 --n 256 --k 256 --device auto --no-compile --trials 1 --db '$DB'
bad bench_on_the_virtual_device_measures_nothing 3 "the CUDA driver loaded is the virtual device" -- sh: env MGPU_CUDA_DRIVER="$VCUDA" '"$MGPU"' bench matmul --arch sm_90a
bad mgpu_bench_on_the_virtual_device_measures_nothing 3 "mgpu-bench: no GPU to run the suite on \(the CUDA driver loaded is the virtual device" --fixture good -- sh: env MGPU_CUDA_DRIVER="$VCUDA" "$(dirname "$MGPU")/mgpu-bench" --db '$DB' --include-model
# --- bench attention: the same contract, through the op's template ---
bad bench_attention_on_the_virtual_device_measures_nothing 3 "the CUDA driver loaded is the virtual device" -- sh: env MGPU_CUDA_DRIVER="$VCUDA" '"$MGPU"' bench attention --arch sm_90a --heads 2 --seq-q 300
bad bench_attention_config_over_smem 2 "invalid config \(smem\)" -- bench attention --arch sm_90a --config '{"block_kv":128,"block_q":64,"consumer_schedule":"serial","max_concurrent_steps":4}'
bad bench_attention_unknown_key 2 "tile_m" -- bench attention --arch sm_90a --config '{"tile_m":64}'
bad bench_attention_repeat_0 2 "error: --repeat.*must be a whole number between 1 and 1000, got '0'" -- bench attention --arch sm_90a --repeat 0
bad bench_attention_max_below_min 2 "--max-time 0.1 is below --min-time 0.5" -- bench attention --arch sm_90a --max-time 0.1
bad bench_attention_no_template 2 "there is no attention template for sm_100a \(only sm_90a\)" -- bench attention --arch sm_100a
bad bench_attention_bad_problem 2 "error: --heads: must be a whole number" -- bench attention --arch sm_90a --heads 0
fixture_deep_mlir() { python3 -c "print('module {' + 'gpu.module @m {' * 5000 + '}' * 5000 + '}')" > "$W/deep.mlir"; }
bad compile_mlir_nested_too_deep 2 "the MLIR module nests 5001 levels deep; at most 256 are read" --fixture deep_mlir -- compile --mlir '$W/deep.mlir' --arch sm_90a --no-cache
bad matmul_db_under_a_file 2 "cannot use the database .*t.db/x.db: .*t.db is a file, not a folder, so nothing can be under it" --fixture good -- matmul "${M[@]}" --trials 1 --db '$DB/x.db'

# --- a third battery: numbers reported as typed, empty values, JSON keys given twice, the
# environment's tools (MGPU_PYTHON_HOME, MGPU_NVDISASM), a --ptx that is not PTX ---
# Every integer option says what was typed: CLI11 read "" as 0 and 99999999999999999999 as 2^63-1.
EMPTY_RE="an empty value \\(''\\) is not taken"
for v in "" 99999999999999999999 -99999999999999999999 0x100 1e3 " 256" 2147483648; do
  tag="$(echo "${v:-empty}" | tr -c 'a-z0-9\n' '_')"
  bad "space_m_as_typed_$tag" 2 "error: --m: must be a whole number between 1 and 2147483647, got '$v'" -- space matmul --arch sm_90a --m "$v"
done
bad verify_n_empty 2 "error: --n: must be a whole number between 1 and 2147483647, got ''" -- verify matmul --arch sm_90a --all --n '' --db '$DB'
bad compile_k_huge 2 "error: --k: must be a whole number .*got '99999999999999999999'" -- compile matmul --arch sm_90a --k 99999999999999999999 --all
bad bench_m_empty 2 "error: --m: must be a whole number .*got ''" -- bench matmul --arch sm_90a --m ''
bad matmul_k_huge_keeps_db 2 "error: --k: .*got '99999999999999999999'" --fixture good -- matmul --arch sm_90a --m 256 --n 256 --k 99999999999999999999 --device model --db '$DB'
bad plan_m_empty 2 "error: --m: .*got ''" -- campaign plan --arch sm_90a --m '' -o c.json
bad trials_limit_empty 2 "error: --limit: must be a whole number .*got ''" --fixture good -- trials --db '$DB' --limit ''
bad trials_limit_huge 2 "error: --limit: .*got '99999999999999999999'" --fixture good -- trials --db '$DB' --limit 99999999999999999999
bad verify_seeds_empty 2 "error: --seeds: .*got ''" -- verify matmul --arch sm_90a --all --seeds '' --db '$DB'
bad verify_sample_huge 2 "error: --sample: .*got '99999999999999999999'" -- verify matmul --arch sm_90a --all --sample 99999999999999999999 --db '$DB'
bad compile_opt_level_empty 2 "error: --opt-level: " --fixture mlir -- compile --mlir k.mlir --arch sm_90a -O ''
# A leading zero is decimal: CLI11 read "010" as octal 8.
bad matmul_trials_leading_zero 0 "^10 trials" --writes -- sh: '"$MGPU"' matmul "${M[@]}" --strategy random --trials 010 --db t.db '>' /dev/null '&&' '"$MGPU"' trials --db t.db '|' tail -1
bad matmul_trials_plus_sign 0 "^3 trials" --writes -- sh: '"$MGPU"' matmul "${M[@]}" --strategy random --trials +3 --db t.db '>' /dev/null '&&' '"$MGPU"' trials --db t.db '|' tail -1

# An empty value is refused by name: it meant the default (--emit-dir '' wrote nowhere, --out-dtype
# '' the input's dtype), or everything.
bad compile_emit_dir_empty 2 "error: --emit-dir: $EMPTY_RE" -- "${C[@]}" --config '{}' --emit-dir ''
bad compile_cache_dir_empty 2 "error: --cache-dir: $EMPTY_RE" -- "${C[@]}" --config '{}' --cache-dir ''
bad compile_mlir_empty 2 "error: --mlir: $EMPTY_RE" -- compile --mlir '' --arch sm_90a
bad compile_output_empty 2 "error: --output: $EMPTY_RE" --fixture mlir -- compile --mlir k.mlir --arch sm_90a --emit ptx -o ''
bad compile_dump_empty 2 "error: --dump: $EMPTY_RE" --fixture mlir -- compile --mlir k.mlir --arch sm_90a --dump ''
bad matmul_shapes_empty 2 "error: --shapes: $EMPTY_RE" -- matmul --arch sm_90a --shapes '' --device model --db '$DB'
bad matmul_out_dtype_empty 2 "error: --out-dtype: $EMPTY_RE" -- matmul "${M[@]}" --out-dtype '' --db '$DB'
bad matmul_strategy_empty 2 "error: --strategy: $EMPTY_RE" -- matmul "${M[@]}" --strategy '' --db '$DB'
bad matmul_device_empty 2 "error: --device: $EMPTY_RE" -- matmul --arch sm_90a --device '' --db '$DB'
bad matmul_arch_empty 2 "error: --arch: $EMPTY_RE" -- matmul --arch '' --db '$DB'
bad verify_db_empty 2 "error: --db: $EMPTY_RE" -- verify matmul --arch sm_90a --config '{}' --db ''
bad emulate_launch_empty 2 "error: --launch: $EMPTY_RE" --fixture mlir -- emulate --mlir k.mlir --arch sm_90a --launch ''
bad sass_cubin_empty 2 "error: cubin: an empty value \\(''\\) is not taken: give one$" -- sass ''
bad plan_output_empty 2 "error: --output: $EMPTY_RE" -- campaign plan --arch sm_90a -o ''
bad plan_name_empty 2 "error: --name: $EMPTY_RE" -- campaign plan --arch sm_90a --name '' -o c.json

# JSON keys given twice: nlohmann kept the last one without a word.
bad compile_config_key_twice 2 "error: config: the key \"tile_m\" is given twice in one object" -- "${C[@]}" --config '{"tile_m":64,"tile_m":128}'
bad compile_config_key_twice_same_value 2 "the key \"tile_n\" is given twice" -- "${C[@]}" --config '{"tile_n":128,"tile_k":64,"tile_n":128}'
bad compile_full_config_key_twice 2 "the key \"epi_tile_m\" is given twice" -- "${C[@]}" --config "${BASE%\}},\"epi_tile_m\":32}"
bad bench_config_key_twice 2 "the key \"tile_m\" is given twice" -- bench matmul --arch sm_90a --config '{"tile_m":64,"tile_m":128}'
bad verify_config_key_twice 2 "the key \"wg_dimension\" is given twice" -- verify matmul --arch sm_90a --config '{"wg_dimension":"M","wg_dimension":"N"}' --db '$DB'
bad compile_config_other_objects_fine 2 "'tile_m' must be an integer or a string" -- "${C[@]}" --config '{"tile_m":{"v":1},"tile_n":{"v":2}}'
fixture_suites_twice() {
  echo '{"shapes": [{"m": 256, "n": 256, "k": 256, "m": 512}]}' > "$W/shape.json"
  echo '{"name": "a", "shapes": [{"m": 256, "n": 256, "k": 256}], "name": "b"}' > "$W/top.json"
  echo '{"shapes": [{"m": 256, "n": 256, "k": 256}, {"m": 512, "n": 256, "k": 256}]}' > "$W/fine.json"
}
bad suite_json_shape_key_twice 2 "shape.json: the key \"m\" is given twice in one object" --fixture suites_twice -- \
  matmul --arch sm_90a --shapes shape.json --device model --no-compile --trials 1 --db t.db
bad suite_json_top_key_twice 2 "top.json: the key \"name\" is given twice" --fixture suites_twice -- \
  matmul --arch sm_90a --shapes top.json --device model --no-compile --trials 1 --db t.db
bad verify_suite_key_twice 2 "shape.json: the key \"m\" is given twice" --fixture suites_twice -- \
  verify matmul --arch sm_90a --all --shapes shape.json --db t.db
bad plan_suite_key_twice 2 "shape.json: the key \"m\" is given twice" --fixture suites_twice -- \
  campaign plan --arch sm_90a --shapes shape.json -o c.json
bad suite_json_same_keys_in_two_shapes 0 "suite fine: 2 shapes" --fixture suites_twice --writes -- \
  matmul --arch sm_90a --shapes fine.json --device model --no-compile --trials 1 --db t.db

# MGPU_PYTHON_HOME naming no Python: one line, exit 1 (the environment), before any file is
# written (CPython printed its whole path configuration, then "Fatal Python error").
one_line() {  # one_line COMMAND...: runs it; its output must be one line
  local log rc lines; log="$(mktemp)"
  "$@" > "$log" 2>&1; rc=$?; cat "$log"; lines="$(wc -l < "$log")"; rm -f "$log"
  [ "$lines" = 1 ] || { echo "(not one line: $lines)"; return 99; }
  return $rc
}
export -f one_line
PYHOME_RE="error: MGPU_PYTHON_HOME=.* is no Python 3\.[0-9]+ home: "
bad matmul_python_home_folder 1 "${PYHOME_RE}it has no lib/python3\.[0-9]+/encodings" -- \
  sh: one_line env MGPU_PYTHON_HOME='$W' '"$MGPU"' matmul "${M[@]}" --strategy tpe --db t.db
bad matmul_python_home_missing 1 "${PYHOME_RE}it does not exist" -- \
  sh: one_line env MGPU_PYTHON_HOME=/nonexistent '"$MGPU"' matmul "${M[@]}" --strategy cmaes --db t.db
bad matmul_python_home_file 1 "${PYHOME_RE}it is not a folder" --fixture mlir -- \
  sh: one_line env MGPU_PYTHON_HOME='$W/k.mlir' '"$MGPU"' matmul "${M[@]}" --strategy tpe --db t.db
bad suite_python_home_folder 1 "${PYHOME_RE}" -- \
  sh: one_line env MGPU_PYTHON_HOME='$W' '"$MGPU"' matmul --arch sm_90a --shapes llama3-8b --device model --no-compile --trials 1 --db t.db
bad report_python_home_folder 1 "${PYHOME_RE}" --fixture good -- \
  sh: one_line env MGPU_PYTHON_HOME='$W' '"$MGPU"' report --db t.db -o rep
bad matmul_python_home_unused_by_random 0 "#1 " --writes -- \
  sh: env MGPU_PYTHON_HOME=/nonexistent '"$MGPU"' matmul "${M[@]}" --strategy random --trials 2 --db t.db

# sass --ptx: a file that is not PTX, or not this cubin's, was taken as "asks for no setmaxnreg".
fixture_sass() {
  fixture_mlir
  { "$MGPU" compile --mlir "$W/k.mlir" --arch sm_90a --emit cubin -o "$W/k.cubin" &&
    "$MGPU" compile --mlir "$W/k.mlir" --arch sm_90a --emit ptx -o "$W/k.ptx"; } > /dev/null 2>&1 ||
    { echo "fixture_sass: compile failed"; exit 1; }
  python3 -c "import random, sys; random.seed(1); open(sys.argv[1], 'wb').write(bytes(random.randrange(256) for _ in range(4096)))" "$W/random.ptx"
  echo "hello" > "$W/text.ptx"; : > "$W/empty.ptx"; printf '// a comment, nothing more\n' > "$W/comment.ptx"
  sed 's/\.entry f(/.entry g(/' "$W/k.ptx" > "$W/other.ptx"
  { printf '/* a block comment\n   first */\n'; cat "$W/k.ptx"; } > "$W/block.ptx"
}
S=(sass k.cubin --ptx)
bad sass_ptx_random_bytes 2 "error: 'random.ptx' is not PTX: it holds binary bytes" --fixture sass -- "${S[@]}" random.ptx
bad sass_ptx_is_the_cubin 2 "error: 'k.cubin' is not PTX: it holds binary bytes" --fixture sass -- "${S[@]}" k.cubin
bad sass_ptx_text 2 "error: 'text.ptx' is not PTX: it does not begin with a .version directive" --fixture sass -- "${S[@]}" text.ptx
bad sass_ptx_empty_file 2 "'empty.ptx' is not PTX: it does not begin" --fixture sass -- "${S[@]}" empty.ptx
bad sass_ptx_only_a_comment 2 "'comment.ptx' is not PTX: it does not begin" --fixture sass -- "${S[@]}" comment.ptx
bad sass_ptx_the_mlir 2 "'k.mlir' is not PTX" --fixture sass -- "${S[@]}" k.mlir
bad sass_ptx_other_kernel 2 "the PTX file 'other.ptx' declares no kernel 'f' \(.entry f\)" --fixture sass -- "${S[@]}" other.ptx
bad sass_ptx_folder 2 "PTX file .* is a folder" --fixture sass -- "${S[@]}" '$W'
bad sass_ptx_empty_value 2 "error: --ptx: $EMPTY_RE" --fixture sass -- "${S[@]}" ''
bad sass_ptx_its_own 0 "the PTX asks for no setmaxnreg" --fixture sass -- "${S[@]}" k.ptx
bad sass_ptx_block_comment_first 0 "the PTX asks for no setmaxnreg" --fixture sass -- "${S[@]}" block.ptx

# MGPU_NVDISASM naming no tool: said, exit 1 (the environment), never another nvdisasm in its place.
NVD_RE="\(set it to nvdisasm's path or to off, or unset it to use the toolkit's\)"
bad sass_nvdisasm_word 1 "error: sass needs nvdisasm: MGPU_NVDISASM=garbage names no file" --fixture sass -- \
  sh: MGPU_NVDISASM=garbage '"$MGPU"' sass k.cubin
bad sass_nvdisasm_missing_path 1 "MGPU_NVDISASM=/nonexistent/nvdisasm names no file" --fixture sass -- \
  sh: MGPU_NVDISASM=/nonexistent/nvdisasm '"$MGPU"' sass k.cubin
bad sass_nvdisasm_not_executable 1 "MGPU_NVDISASM=.*k.ptx is not executable $NVD_RE" --fixture sass -- \
  sh: MGPU_NVDISASM='$W/k.ptx' '"$MGPU"' sass k.cubin
bad sass_nvdisasm_folder 1 "MGPU_NVDISASM=.* is not a file $NVD_RE" --fixture sass -- sh: MGPU_NVDISASM='$W' '"$MGPU"' sass k.cubin
bad compile_sass_nvdisasm_bad 1 "error: --sass needs nvdisasm: MGPU_NVDISASM=garbage names no file" -- \
  sh: MGPU_NVDISASM=garbage '"$MGPU"' "${C[@]}" --config "'{}'" --sass
bad space_lints_nvdisasm_bad 1 "error: --lints needs nvdisasm: MGPU_NVDISASM=garbage names no file" -- \
  sh: MGPU_NVDISASM=garbage '"$MGPU"' space matmul --arch sm_90a --lints --sample 1
bad matmul_nvdisasm_bad_is_noted 0 "SASS lints not available: MGPU_NVDISASM=garbage names no file" --writes -- \
  sh: MGPU_NVDISASM=garbage '"$MGPU"' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --strategy random --trials 1 --no-verify --db t.db
bad sass_nvdisasm_off 2 "sass needs nvdisasm: no nvdisasm \(MGPU_NVDISASM=off\)" --fixture sass -- \
  sh: MGPU_NVDISASM=off '"$MGPU"' sass k.cubin
# --- a fourth battery: symbol names LLVM's NVPTX back end aborts on, compile-cache entries that
# are no regular file (a FIFO blocked open() forever, /dev/zero read for a minute) ---
fixture_bad_symbols() {
  printf 'module {\n gpu.module @"k\xc3\xab" {\n gpu.func @"f\xc3\xa9"() kernel { gpu.return } } }\n' > "$W/utf8.mlir"
  printf 'module {\n gpu.module @k {\n gpu.func @"a b"() kernel { gpu.return } } }\n' > "$W/space.mlir"
  printf 'module {\n gpu.module @k {\n gpu.func @"f@x"() kernel { gpu.return } } }\n' > "$W/at.mlir"
  printf 'module {\n gpu.module @k {\n gpu.func @"f$x"() kernel { gpu.return } } }\n' > "$W/dollar.mlir"
}
SYM_RE='symbol name @".*" \(gpu.func\) in gpu.module @.* is not allowed'
bad compile_mlir_utf8_symbol_json 2 "$SYM_RE" --fixture bad_symbols -- compile --mlir '$W/utf8.mlir' --arch sm_90a --json --no-cache
bad compile_mlir_space_symbol_ptx 2 "symbol name @\"a b\"" --fixture bad_symbols -- compile --mlir '$W/space.mlir' --arch sm_90a --emit ptx -o '$W/k.ptx' --no-cache
bad compile_mlir_at_symbol 2 "symbol name @\"f@x\"" --fixture bad_symbols -- compile --mlir '$W/at.mlir' --arch sm_90a --no-cache
bad compile_mlir_dollar_symbol_is_fine 0 "compiled .*dollar.mlir" --fixture bad_symbols -- compile --mlir '$W/dollar.mlir' --arch sm_90a --no-cache
bad emulate_mlir_utf8_symbol 2 "$SYM_RE" --fixture bad_symbols -- emulate --mlir '$W/utf8.mlir' --arch sm_90a --launch '{"kernel":"f","grid":[1,1,1],"block":[32,1,1]}'
# A cache entry replaced by a FIFO or a link to /dev/zero: recompiled at once, the entry replaced
# by a regular file. The entry's name is found by a first compile.
CC=(compile matmul --arch sm_90a --m 64 --n 64 --k 64 --config '{}' --cache-dir cache)
for kind in fifo devzero; do
  case $kind in fifo) mk='mkfifo "$e"' ;; devzero) mk='ln -s /dev/zero "$e"' ;; esac
  bad "compile_cache_entry_$kind" 0 "1 kernels \(0 from cache, 0 failed\).*regular" --writes -- sh: \
    "'$MGPU' ${CC[*]@Q} >/dev/null 2>&1 && e=\$(ls cache/*/*.mgpu) && rm \"\$e\" && $mk && timeout -s KILL 20 '$MGPU' ${CC[*]@Q} 2>&1 | tail -1 | tr -d '\\n' && test -f \"\$e\" && ! test -L \"\$e\" && echo ' regular'"
done
# Output files on a full disk or past a size limit: exit 1 (the environment) with the reason,
# and nothing half-written left (campaign plan left c.json.tmp). compile --emit-dir
# on a full disk (exit 2 before) needs a full file system: checked by hand on a small tmpfs.
NOFILE="trap '' XFSZ; ulimit -f 0; exec"
bad plan_past_file_size_limit 1 "cannot write c.json: .*File too large.* nothing left" -- sh: \
  "($NOFILE '$MGPU' campaign plan --arch sm_90a --shapes llama3-8b -o c.json) 2>&1 | tr -d '\\n'; r=\${PIPESTATUS[0]}; ls -A | grep -qv '^.out\$' || echo ' nothing left'; exit \$r"
# Round 8 (F6): the same limit with SIGXFSZ left as the shell has it (Slurm passes `ulimit -f` on
# to jobs, and nobody there traps the signal): the tool ignores it itself, so the write fails
# (EFBIG) as on a full disk -- exit 1, not killed by SIGXFSZ (153) with files half-written.
LIMIT0="ulimit -f 0; exec"
bad plan_past_file_size_limit_untrapped 1 "cannot write c.json: .*File too large.* nothing left" -- sh: \
  "($LIMIT0 '$MGPU' campaign plan --arch sm_90a --m 256 --n 256 --k 256 --trials 1 -o c.json) 2>&1 | tr -d '\\n'; r=\${PIPESTATUS[0]}; ls -A | grep -qv '^.out\$' || echo ' nothing left'; exit \$r"
bad compile_past_file_size_limit_untrapped 1 "cannot write (k\\.ptx:|a temporary file for ptxas) .*File too large.* nothing left" --fixture mlir -- sh: \
  "($LIMIT0 '$MGPU' compile --mlir k.mlir --arch sm_90a --emit ptx -o k.ptx) 2>&1 | tr -d '\\n'; r=\${PIPESTATUS[0]}; ls -A | grep -Eq 'k\\.ptx' || echo ' nothing left'; exit \$r"
bad matmul_past_file_size_limit_untrapped 1 "^mgpu-tune: error: (the disk holding|I/O error on) n\\.db" --writes -- sh: \
  "ulimit -f 100; exec '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 3000 --strategy random --db n.db --quiet"
# Round 19, F37: a limit SQLite's files cannot live under. A reader under one below the -shm's
# 32 KiB read the file but left a -shm cut at the limit for every later reader (the case checks
# no -wal/-shm appears); a writer is told before anything is opened (it failed mid-run and left a
# -wal and -shm cut at the limit). The file-size note names the file that reached it.
bad reader_under_tiny_file_size_limit 0 "m256_n256_k256" --fixture good -- sh: "ulimit -f 20; exec '$MGPU' best --db t.db --include-model"
bad writer_under_tiny_file_size_limit 1 "file-size limit \(ulimit -f\) of 20480 bytes is too small to write n\.db: SQLite's index beside it \(n\.db-shm\) takes 32768 bytes; nothing was written.* nothing left" -- sh: \
  "(ulimit -f 20; exec '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 2 --db n.db) 2>&1 | tr -d '\\n'; r=\${PIPESTATUS[0]}; ls n.db* 2> /dev/null || echo ' nothing left'; exit \$r"
bad writer_under_limit_below_database 1 "file-size limit \(ulimit -f\) of 40960 bytes is too small to write t\.db: the database is [0-9]+ bytes already; nothing was written" --fixture good -- sh: \
  "test \$(stat -c %s t.db) -gt 40960 || { echo 'fixture too small'; exit 9; }; ulimit -f 40; exec '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 20 --db t.db"
# An assembler that hangs, writes nothing or writes garbage (round 4, H01-H11): a time limit
# (MGPU_TOOL_TIMEOUT) kills it with its children, exit 1 with the reason; no cubin is written.
fixture_fake_ptxas() {
  printf '#!/bin/sh\nsleep 100000\n' > "$W/ps_sleep"
  printf '#!/bin/sh\nexit 0\n' > "$W/ps_nothing"
  printf '#!/bin/sh\nout=""; while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; esac; shift; done; [ -n "$out" ] && head -c 5000 /dev/urandom > "$out"; exit 0\n' > "$W/ps_garbage"
  chmod +x "$W"/ps_*
  printf 'module attributes {gpu.container_module} {\n gpu.module @k {\n gpu.func @f() kernel { gpu.return } } }\n' > "$W/k.mlir"
}
PCM=(compile matmul --arch sm_90a --m 128 --n 128 --k 128 --config '{"tile_k":32,"tile_n":64}' --no-cache)
bad ptxas_hangs_is_killed 1 "ps_sleep did not finish in 2 s and was killed" --fixture fake_ptxas -- sh: \
  "MGPU_TOOL_TIMEOUT=2 MGPU_PTXAS=\$PWD/ps_sleep timeout -k 5 60 '$MGPU' ${PCM[*]@Q}; r=\$?; sleep 0.5; pgrep -f 'sleep 100000' -P \$\$ >/dev/null && echo 'left running'; exit \$r"
bad ptxas_writes_nothing_matmul 1 "exited 0 but wrote no cubin" --fixture fake_ptxas -- sh: "MGPU_PTXAS=\$PWD/ps_nothing '$MGPU' ${PCM[*]@Q}"
bad ptxas_writes_garbage_matmul 1 "is no cubin \(5000 bytes, not an ELF file" --fixture fake_ptxas -- sh: "MGPU_PTXAS=\$PWD/ps_garbage '$MGPU' ${PCM[*]@Q}"
# Round 8 (F3): a temporary file for ptxas cut short (a file-size limit here, a full TMPDIR on a
# cluster) is the machine's failure, said as such (exit 1): ptxas was given a truncated PTX and
# blamed the config ("Parsing error"), and in a tuning run the config was stored as compile_error.
bad ptxas_temp_file_past_size_limit 1 "cannot write a temporary file for ptxas in .*File too large; TMPDIR picks the folder" --fixture fake_ptxas -- sh: \
  "ulimit -f 4; MGPU_PTXAS=\$PWD/ps_nothing exec '$MGPU' ${PCM[*]@Q}"
bad ptxas_writes_nothing_mlir 1 "exited 0 but wrote no cubin" --fixture fake_ptxas -- sh: \
  "MGPU_PTXAS=\$PWD/ps_nothing '$MGPU' compile --mlir k.mlir --arch sm_90a --no-cache --emit cubin -o k.cubin; r=\$?; test -e k.cubin && echo 'k.cubin written'; exit \$r"
bad tool_timeout_garbage 2 "MGPU_TOOL_TIMEOUT='soon' is no positive number" --fixture fake_ptxas -- sh: \
  "MGPU_TOOL_TIMEOUT=soon MGPU_PTXAS=\$PWD/ps_nothing '$MGPU' compile --mlir k.mlir --arch sm_90a --no-cache"
# The MLIR nesting guard counts < > too: 30000 nested tuple<...> types crashed the parser (139).
fixture_type_nest() { python3 -c "
open('$W/n.mlir','w').write('module attributes {gpu.container_module} {\n gpu.module @k {\n gpu.func @f(%a: '+'tuple<'*30000+'i32'+'>'*30000+') kernel { gpu.return } } }\n')"; }
bad mlir_type_nest_compile 2 "nests [0-9]+ levels deep; at most 256" --fixture type_nest -- compile --mlir '$W/n.mlir' --arch sm_90a --no-cache
bad mlir_type_nest_emulate 2 "nests [0-9]+ levels deep; at most 256" --fixture type_nest -- emulate --mlir '$W/n.mlir' --arch sm_90a --launch '{"kernel":"f","grid":[1,1,1],"block":[32,1,1]}'
# Arrows and affine comparisons are no nesting: a module with them compiles.
bad mlir_arrow_not_nesting 0 "compiled" --fixture fake_ptxas --writes -- sh: \
  "printf 'module attributes {gpu.container_module} {\n gpu.module @k {\n func.func @g(%%a: index) -> index { %%b = affine.apply affine_map<(d0) -> (d0 + 1)>(%%a) return %%b : index }\n gpu.func @f() kernel { gpu.return } } }\n' > a.mlir && '$MGPU' compile --mlir a.mlir --arch sm_90a --no-cache"
# Workgroup attributions larger than a block's shared memory: refused, not "0 B static SMEM".
bad mlir_workgroup_too_big 2 "asks 4294967296 bytes of shared memory in its workgroup attributions" --writes -- sh: \
  "printf 'module attributes {gpu.container_module} {\n gpu.module @k {\n gpu.func @f() workgroup(%%w : memref<1073741824xf32, #gpu.address_space<workgroup>>) kernel { gpu.return } } }\n' > w.mlir && '$MGPU' compile --mlir w.mlir --arch sm_90a --no-cache"
# An output FIFO no program reads: refused at once (the open blocked forever); with a reader it is written.
bad compile_ptx_to_fifo_no_reader 2 "-o p is a FIFO \(named pipe\) that no program is reading" --fixture fake_ptxas --writes -- sh: \
  "mkfifo p && timeout 20 '$MGPU' compile --mlir k.mlir --arch sm_90a --emit ptx -o p; r=\$?; rm -f p; exit \$r"
bad compile_ptx_to_fifo_reader 0 "^[0-9]+ got$" --fixture fake_ptxas --writes -- sh: \
  "mkfifo p && (cat p > got &) && sleep 0.3 && timeout 20 '$MGPU' compile --mlir k.mlir --arch sm_90a --emit ptx -o p && sleep 0.3 && rm -f p && echo \"\$(grep -c entry got) got\""
# -O is a whole number 0-3, said with its range as typed.
bad opt_level_float 2 "--opt-level: must be a whole number between 0 and 3, got '3.0'" --fixture fake_ptxas -- compile --mlir '$W/k.mlir' --arch sm_90a -O 3.0
bad opt_level_space 2 "--opt-level: must be a whole number between 0 and 3, got ' 3'" --fixture fake_ptxas -- compile --mlir '$W/k.mlir' --arch sm_90a -O ' 3'
# sass of a cubin whose symbol table nvdisasm refuses: bad input naming the file (exit 2).
bad sass_symtab_entsize_zero 2 "bad.cubin' is not a cubin: its symbol table .* has entries of 0 bytes" --fixture fake_ptxas --writes -- sh: \
  "'$MGPU' compile --mlir k.mlir --arch sm_90a --emit cubin -o k.cubin > /dev/null && python3 -c \"
import struct
d=bytearray(open('k.cubin','rb').read()); o=struct.unpack_from('<Q',d,0x28)[0]; es,n,sx=struct.unpack_from('<HHH',d,0x3A)
for i in range(1,n):
    if struct.unpack_from('<I',d,o+i*es+4)[0]==2: struct.pack_into('<Q',d,o+i*es+0x38,0)
open('bad.cubin','wb').write(d)\" && '$MGPU' sass bad.cubin"
# Campaigns (round 4, K06, K16, V05, Y08).
bad campaign_task_unknown_key 2 "task 0: the task has an unknown key \"tile_m\"" --writes -- sh: \
  "'$MGPU' campaign plan --arch sm_90a --m 128 --n 128 --k 128 --device model --trials 2 -o c.json > /dev/null && python3 -c \"import json;c=json.load(open('c.json'));c['tasks'][0]['tile_m']=64;json.dump(c,open('c.json','w'))\" && '$MGPU' campaign run-task c.json 0"
bad campaign_status_file_garbage 0 "task +0 +unreadable .*task-0.status holds no exit code" --writes -- sh: \
  "'$MGPU' campaign plan --arch sm_90a --m 128 --n 128 --k 128 --device model --trials 2 -o c.json > /dev/null && mkdir -p c-shards && echo banana > c-shards/task-0.status && '$MGPU' campaign status c.json"
bad campaign_name_too_long 2 "the campaign name is 300 characters" --writes -- sh: \
  "'$MGPU' campaign plan --arch sm_90a --m 128 --n 128 --k 128 --device model --trials 1 --name \$(printf 'n%.0s' \$(seq 300)) -o d.json; r=\$?; test -e d.json && echo 'd.json written'; exit \$r"
bad campaign_plan_suite_row_unaligned 2 "s.csv line 3: A \(M x K\) rows are 14 bytes.*make k a multiple of 8" --writes -- sh: \
  "printf 'm,n,k\n128,128,128\n128,128,7\n' > s.csv && '$MGPU' campaign plan --arch sm_90a --shapes s.csv --device model --trials 1 -o c.json; r=\$?; test -e c.json && echo 'c.json written'; exit \$r"
# verify --shapes and matmul --shapes name the row too (round 4, Y02, Y07).
bad verify_suite_row_unaligned 2 "s.csv line 3: A \(M x K\) rows are 14 bytes.*make k a multiple of 8" -- sh: \
  "printf 'm,n,k\n128,128,128\n128,128,7\n' > s.csv && '$MGPU' verify matmul --arch sm_90a --shapes s.csv --config '{}' --db t.db; r=\$?; rm -f s.csv; exit \$r"
bad matmul_suite_row_unaligned 2 "s.csv line 3: A \(M x K\) rows are 14 bytes.*make k a multiple of 8" -- sh: \
  "printf 'm,n,k\n128,128,128\n128,128,7\n' > s.csv && '$MGPU' matmul --arch sm_90a --shapes s.csv --device model --no-compile --trials 1 --db t.db; r=\$?; rm -f s.csv; exit \$r"
# sbatch that warns on stderr (the job id on stdout), or accepts the array job and refuses the merge job:
# the accepted job is recorded (status follows it; resume would submit every task again).
fixture_fake_sbatch() {
  mkdir -p "$W/fb"
  printf '#!/bin/sh\necho "sbatch: warning: cannot honor --gpus-per-task, ignoring" >&2\necho 2002\n' > "$W/fb/sbatch"
  printf '#!/bin/sh\nfor a; do last="$a"; done\ncase "$last" in *merge.sbatch) echo "sbatch: error: QOSMaxSubmitJobPerUserLimit" >&2; exit 1;; esac\necho 1001\n' > "$W/fb/sbatch_mergefails"
  chmod +x "$W"/fb/*
}
bad campaign_submit_sbatch_warning 0 "\"job\": \"2002\"" --fixture fake_sbatch --writes -- sh: \
  "'$MGPU' campaign plan --arch sm_90a --m 128 --n 128 --k 128 --device model --trials 2 -o c.json > /dev/null && PATH=\$PWD/fb:\$PATH '$MGPU' campaign submit c.json --partition p && grep '\"job\"' c.json"
bad campaign_submit_merge_refused 1 "array job 1001 .*WAS submitted.*\"job\": \"1001\"" --fixture fake_sbatch --writes -- sh: \
  "'$MGPU' campaign plan --arch sm_90a --m 128 --n 128 --k 128 --device model --trials 2 -o c.json > /dev/null && cp fb/sbatch_mergefails fb/sbatch && PATH=\$PWD/fb:\$PATH '$MGPU' campaign submit c.json --partition p 2>&1 | tr -d '\n'; r=\${PIPESTATUS[0]}; grep '\"job\"' c.json; exit \$r"
# A tuning run with such an assembler: every trial is env_error (the machine's failure, never a
# kernel ranked as built), exit 1; a hung one is killed at the time limit, no child left running.
bad ptxas_writes_nothing_tuning 1 "env_error.*none of the trials succeeded" --fixture fake_ptxas --writes -- sh: \
  "MGPU_PTXAS=\$PWD/ps_nothing '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-verify --trials 2 --seed 9 --db t.db 2>&1 | tr -d '\n'; exit \${PIPESTATUS[0]}"
bad ptxas_hangs_tuning 1 "env_error.*none of the trials succeeded" --fixture fake_ptxas --writes -- sh: \
  "MGPU_TOOL_TIMEOUT=1 MGPU_PTXAS=\$PWD/ps_sleep timeout -k 5 100 '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-verify --trials 1 --seed 9 --db t.db 2>&1 | tr -d '\n'; r=\${PIPESTATUS[0]}; sleep 0.5; pgrep -f 'sleep 100000' -P \$\$ >/dev/null && echo ' left running'; exit \$r"
# One SIGTERM stops a tuning run whose assembler hangs: the tool is killed at once (not at
# MGPU_TOOL_TIMEOUT), its children with it, and the run exits 143 (round 4, H02).
bad ptxas_hangs_tuning_one_sigterm 143 "stopped by SIGTERM" --fixture fake_ptxas --writes -- sh: \
  "MGPU_TOOL_TIMEOUT=300 MGPU_PTXAS=\$PWD/ps_sleep '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-verify --trials 1 --seed 9 --db t.db > o.txt 2>&1 & p=\$!; sleep 3; kill -TERM \$p; t0=\$(date +%s); wait \$p; r=\$?; tr -d '\n' < o.txt; [ \$((\$(date +%s) - t0)) -lt 30 ] || { echo ' waited for the tool'; exit 99; }; sleep 0.5; pgrep -f 'sleep 100000' -P \$\$ >/dev/null && { echo ' left running'; exit 98; }; exit \$r"
# Round 6: a stop reaches the tool wherever it runs. The orphan check looks for the fake
# assembler's sleep anywhere (a killed parent leaves its tool to init, so `pgrep -P` never saw it).
# Ctrl-C of `compile` (no deferred stop) takes the tool with it at once.
bad ptxas_hangs_compile_sigint 130 "^0 left$" --fixture fake_ptxas -- sh: \
  "MGPU_PTXAS=\$PWD/ps_sleep timeout -s INT 3 '$MGPU' ${PCM[*]@Q} > /dev/null 2>&1; r=\$?; [ \$r = 124 ] && r=130; sleep 0.5; echo \"\$(pgrep -f 'sleep 10000[0]' | wc -l) left\"; exit \$r"
# A SIGINT to the tuning process alone (not its worker's group) while the worker's assembler hangs:
# the stop is passed to the worker, which kills its tool; 130 within seconds, nothing left. (Sent
# by kill, once the assembler runs: GNU timeout signals the process and then its group, and a
# second signal ends mgpu-tune at once, without its summary -- under load the case failed so.)
bad ptxas_hangs_emulate_sigint 130 "stopped by SIGINT.* 0 left$" --fixture fake_ptxas --writes -- sh: \
  "MGPU_PTXAS=\$PWD/ps_sleep MGPU_TOOL_TIMEOUT=300 '$MGPU' matmul --arch sm_90a --m 128 --n 128 --k 128 --device emulate --trials 1 --seed 9 --db t.db > o.txt 2>&1 & p=\$!; for i in \$(seq 1200); do pgrep -f \"\$PWD/ps_sleep\" > /dev/null && break; sleep 0.1; done; kill -INT \$p; wait \$p; r=\$?; tr -d '\n' < o.txt; sleep 0.5; echo \" \$(pgrep -f 'sleep 10000[0]' | wc -l) left\"; exit \$r"
# MGPU_PTXAS that names no program: said, exit 2, before any database (it fell back to nvJitLink
# silently, compiling other kernels).
for v in folder missing plain; do
  bad "mgpu_ptxas_$v" 2 "MGPU_PTXAS='.*' cannot be the assembler: (it is a folder|there is no such file|it is not executable).*nothing left" --fixture fake_ptxas --writes -- sh: \
    "mkdir -p folder && touch plain && MGPU_PTXAS=\$PWD/$v '$MGPU' matmul --arch sm_90a --m 128 --n 128 --k 128 --device model --trials 1 --db t.db 2>&1 | tr -d '\n'; r=\${PIPESTATUS[0]}; test -e t.db || echo ' nothing left'; exit \$r"
done

# Round 8 (F19): a CUDA_HOME naming nothing, a file or an empty folder fell back to nvJitLink (which
# drops setmaxnreg) without a word.
for v in nonexistent plain folder; do
  bad "cuda_home_$v" 2 "CUDA_HOME='.*' is no CUDA toolkit: (there is no such folder|it is a file, not a folder|it has no executable bin/ptxas).*nothing left" --fixture fake_ptxas --writes -- sh: \
    "mkdir -p folder && touch plain && env -u MGPU_PTXAS -u MGPU_CUDA_HOME CUDA_HOME=\$PWD/$v '$MGPU' matmul --arch sm_90a --m 128 --n 128 --k 128 --device model --trials 1 --db t.db 2>&1 | tr -d '\n'; r=\${PIPESTATUS[0]}; test -e t.db || echo ' nothing left'; exit \$r"
done
# A shape suite this user may not read: said so, not "is empty" / "not valid JSON" (round 4, S04, S08).
# Root reads every file: the case runs as nobody where setpriv can (else it is skipped as ok).
for f in s.csv s.json; do
  bad "shape_suite_unreadable_${f#s.}" 2 "shape suite file $f: cannot read it \(Permission denied\)|skipped" --writes -- sh: \
    "printf '64,64,64\n' > s.csv && printf '[{\"m\":64,\"n\":64,\"k\":64}]' > s.json && chmod 600 s.csv s.json && chmod 777 . &&
     if [ \$(id -u) = 0 ] && command -v setpriv >/dev/null; then setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent MGPU_CACHE_DIR=\$PWD/c '$MGPU' matmul --arch sm_90a --shapes $f --device model --no-compile --trials 1 -q --db n.db; else echo skipped; exit 2; fi"
done
# A Python home without optuna is the environment's fault: exit 1 in one line, before any work
# (round 4, E20; it was exit 2, bad input). The home: the system's standard library, no dist-packages.
bad python_home_without_optuna 1 "cannot import optuna: ModuleNotFoundError: No module named 'optuna' \(install it with: apt-get install python3-optuna" --writes -- sh: \
  "mkdir -p ph/lib && ln -s /usr/lib/python3.11 ph/lib/python3.11 && MGPU_PYTHON_HOME=\$PWD/ph '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 8 --strategy tpe -q --db e.db; r=\$?; test -e e.db && echo 'e.db written'; exit \$r"
# Optuna there but failing to load -- as under 'ulimit -v 400000', where its numpy cannot map
# liblapack (round 4, E18: exit 2, bad input, with a 10-line traceback): the environment's fault,
# exit 1, one line; Python's traceback with -v. The home: the system's standard library and an
# optuna whose import fails as that one did (Python may write its __pycache__ there).
fixture_failing_optuna() {
  mkdir -p "$W/ph/lib/python3/dist-packages/optuna" && ln -s /usr/lib/python3.11 "$W/ph/lib/python3.11" &&
    echo 'raise ImportError("liblapack.so.3: failed to map segment from shared object")' > "$W/ph/lib/python3/dist-packages/optuna/__init__.py"
}
bad python_optuna_fails_to_load 1 "^mgpu-tune: error: the embedded Python [0-9.]+ \(home .*/ph\) cannot import optuna: ImportError: liblapack.so.3: failed to map segment from shared object \(it is installed, but failed to load: a limit on the process's memory \(ulimit -v\)" \
  --fixture failing_optuna --writes -- sh: "one_line env MGPU_PYTHON_HOME=\$PWD/ph '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 8 --strategy tpe -q --db e.db; r=\$?; test -e e.db && { echo 'e.db written'; exit 99; }; exit \$r"
bad python_optuna_fails_to_load_verbose 1 "the embedded Python's error importing optuna:.*At:.*optuna/__init__.py\(1\).*cannot import optuna: ImportError" \
  --fixture failing_optuna --writes -- sh: "MGPU_PYTHON_HOME=\$PWD/ph '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-compile --trials 8 --strategy tpe -v --db e.db 2>&1 | tr -d '\n'; r=\${PIPESTATUS[0]}; test -e e.db && { echo 'e.db written'; exit 99; }; exit \$r"
# --- round 5: the compile environment is checked before anything is written; memory limits ---
# MGPU_TOOL_TIMEOUT / MGPU_DUMP_TO that cannot work were stored as every config's compile_error
# (and its failed verification), exit 1; now exit 2, the database untouched.
bad tool_timeout_nan_matmul_keeps_db 2 "MGPU_TOOL_TIMEOUT='nan' is no positive number of seconds" --fixture good -- sh: \
  "MGPU_TOOL_TIMEOUT=nan '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --trials 2 --db t.db"
bad tool_timeout_negative_compile 2 "MGPU_TOOL_TIMEOUT='-5' is no positive number" -- sh: \
  "MGPU_TOOL_TIMEOUT=-5 '$MGPU' ${C[*]@Q} --config '{}'"
# verify created the database and an unfinished run row before the compile environment was read.
bad tool_timeout_verify_creates_nothing 2 "MGPU_TOOL_TIMEOUT='-5' is no positive number" -- sh: \
  "MGPU_TOOL_TIMEOUT=-5 '$MGPU' verify matmul --arch sm_90a --config '{}' --m 256 --n 256 --k 256 --db v.db"
fixture_good_and_file() { fixture_good; touch "$W/f"; }
bad dump_to_a_file_matmul_keeps_db 2 "MGPU_DUMP_TO='f' cannot be the folder for compile dumps: Not a directory" --fixture good_and_file -- sh: \
  "MGPU_DUMP_TO=f '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --trials 2 --db t.db"
bad dump_to_under_a_device_compile 2 "MGPU_DUMP_TO='/dev/full/x' cannot be the folder for compile dumps" -- sh: \
  "MGPU_DUMP_TO=/dev/full/x '$MGPU' ${C[*]@Q} --config '{}'"
# Under a memory limit every command ends in success or one "out of memory" line with exit 1
# (or Optuna's import failing, exit 1): a thread that could not start was "internal error:
# Resource temporarily unavailable", MLIR's unchecked malloc a SIGSEGV (exit 139), and a compile
# out of memory was stored as the config's compile_error.
bad memory_limits_end_cleanly 0 "^limits ok$" --writes -- sh: \
  "for v in 640000 900000 980000 1000000; do rm -f e.db*; (ulimit -v \$v; exec '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device emulate --trials 2 --db e.db -q) > o 2>&1; r=\$?; \
   if [ \$r = 1 ]; then grep -Eq '^mgpu-tune: error: (out of memory: this process may use at most [0-9]+ MiB \(ulimit -v\)|the embedded Python .* cannot import optuna)' o || { echo \"limit \$v: exit 1 without the line\"; cat o; exit 98; }; \
   elif [ \$r != 0 ]; then echo \"limit \$v: exit \$r\"; cat o; exit 99; fi; \
   test -e e.db && sqlite3 e.db \"select status from trials where status = 'compile_error'\" | grep -q . && { echo \"limit \$v: compile_error stored\"; exit 97; }; done; echo 'limits ok'"
# A run stopped before its first trial finished said "none of the trials succeeded" (none had run).
# The stop is sent once the first trial's assembler runs (its space walked, its database made):
# a stop during the walk is another case (stop_contracts.sh early_stop), which a fixed sleep
# reached on a loaded machine. The wait is a hang guard (120 s), not a timing.
bad stopped_before_any_trial 130 "(stopped before any trial ran: no config produced a result.*stopped by SIGINT: 0 trials|stopped by SIGINT: 0 trials.*stopped before any trial ran: no config produced a result)" --fixture fake_ptxas --writes -- sh: \
  "MGPU_TOOL_TIMEOUT=300 MGPU_PTXAS=\$PWD/ps_sleep '$MGPU' matmul --arch sm_90a --m 256 --n 256 --k 256 --device model --no-verify --trials 1 --seed 9 --db t.db > o.txt 2>&1 & p=\$!; for i in \$(seq 1200); do pgrep -f \"\$PWD/ps_sleep\" > /dev/null && break; sleep 0.1; done; kill -INT \$p; wait \$p; r=\$?; tr -d '\n' < o.txt; grep -q 'none of the trials succeeded' o.txt && exit 97; exit \$r"
finish
