#!/usr/bin/env bash
# Bad inputs of `emulate`: launch descriptions (types, values that would wrap modulo 2^32, grids
# beyond CUDA's limits), folders given as --ptx/--launch, and an endless kernel ended by the step
# limit. Run: MGPU=build/harness/mgpu-tune SRC=. bash tests/robustness/emulate_cases.sh
. "$(dirname "$0")/lib.sh"

# k.ptx: store(out, v) writes v to out[0] from thread 0 of CTA 0; the other modules each have the
# one property a case needs.
ptx_head() { printf '.version 8.0\n.target sm_90a\n.address_size 64\n'; }
fixture_ptx() {
  { ptx_head; cat <<'EOF'
.visible .entry store(.param .u64 out, .param .u32 v)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [out];
  ld.param.u32 %r0, [v];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  or.b32 %r3, %r1, %r2;
  setp.ne.u32 %p0, %r3, 0;
  @%p0 bra DONE;
  cvta.to.global.u64 %rd1, %rd0;
  st.global.u32 [%rd1], %r0;
DONE:
  ret;
}
EOF
  } > "$W/k.ptx"
  { ptx_head; cat <<'EOF'
.visible .entry spin()
{
  .reg .b32 %r<2>;
  mov.u32 %r0, 0;
LOOP:
  add.u32 %r0, %r0, 1;
  bra LOOP;
}
EOF
  } > "$W/endless.ptx"
  { ptx_head; printf '.visible .entry a()\n{\n  ret;\n}\n.visible .entry b()\n{\n  ret;\n}\n'; } > "$W/two.ptx"
  { ptx_head; printf '.shared .align 4 .b8 tile[4096];\n.visible .entry s()\n{\n  ret;\n}\n'; } > "$W/smem.ptx"
  { ptx_head; printf '.visible .entry r() .reqntid 64\n{\n  ret;\n}\n'; } > "$W/reqntid.ptx"
  { ptx_head; printf '.visible .entry h(.param .u16 x)\n{\n  ret;\n}\n'; } > "$W/u16.ptx"
  ptx_head > "$W/none.ptx"
  echo "this is not PTX" > "$W/text.ptx"
  mkdir "$W/folder"
}
fixture_fifo() { fixture_ptx; mkfifo "$W/pipe"; }
# The launch description of store(): its two arguments, plus the fields given.
lj() { echo "{${1:-}${1:+, }\"args\": [{\"buffer\": {\"bytes\": 4, \"name\": \"out\", \"print\": \"i32\", \"print_count\": 1}}, {\"u32\": 7}]}"; }
# store() launched with the arguments given.
la() { echo "{\"args\": [$1]}"; }
E=(emulate --ptx k.ptx --launch)
BUF='{"buffer": {"bytes": 4}}'

# --- what runs: the store kernel, and every limit at its largest legal value ---
bad store_runs 0 "out = \[7\]" --fixture ptx -- "${E[@]}" "$(lj)"
bad limits_largest_legal 0 "1 of 1 schedules clean" --fixture ptx -- "${E[@]}" "$(lj '"grid": [16, 2, 2], "block": [1024], "dynamic_smem": 232448, "cluster": [16]')"
bad block_z_64 0 "1 of 1 schedules clean" --fixture ptx -- "${E[@]}" "$(lj '"block": [1, 16, 64]')"
bad u32_largest 0 "1 of 1 schedules clean" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"u32\": 4294967295}")"
bad i64_that_fits_u32 0 "out = \[5\]" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "name": "out", "print": "i32"}}, {"i64": 5}]}'
bad i32_minus_one_fits 0 "out = \[-1\]" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "name": "out", "print": "i32"}}, {"i32": -1}]}'

# --- wrong JSON types: each names the field (kernel null was `terminate called`) ---
bad kernel_null 2 "launch description: 'kernel' must be a name .*not null" --fixture ptx -- "${E[@]}" "$(lj '"kernel": null')"
bad kernel_number 2 "'kernel' must be a name .*not 5" --fixture ptx -- "${E[@]}" "$(lj '"kernel": 5')"
bad kernel_empty 2 "'kernel' must be a name .*not \"\"" --fixture ptx -- "${E[@]}" "$(lj '"kernel": ""')"
bad kernel_list 2 "'kernel' must be a name .*not a list of 1" --fixture ptx -- "${E[@]}" "$(lj '"kernel": ["store"]')"
bad kernel_unknown 2 "no kernel named \"stor\"" --fixture ptx -- "${E[@]}" "$(lj '"kernel": "stor"')"
bad grid_string 2 "'grid' must be a whole number in 1..2147483647, not \"4\"" --fixture ptx -- "${E[@]}" "$(lj '"grid": "4"')"
bad grid_four_entries 2 "'grid' must be a whole number or a list of 1 to 3, not a list of 4" --fixture ptx -- "${E[@]}" "$(lj '"grid": [1, 1, 1, 1]')"
bad grid_empty_list 2 "'grid' must be a whole number or a list of 1 to 3, not a list of 0" --fixture ptx -- "${E[@]}" "$(lj '"grid": []')"
bad grid_negative 2 "'grid\[0\]' = -1 is out of range \(1..2147483647\)" --fixture ptx -- "${E[@]}" "$(lj '"grid": [-1]')"
bad grid_zero 2 "'grid' = 0 is out of range" --fixture ptx -- "${E[@]}" "$(lj '"grid": 0')"
bad grid_float 2 "'grid' must be a whole number in 1..2147483647, not 1.5" --fixture ptx -- "${E[@]}" "$(lj '"grid": 1.5')"
bad grid_float_whole 2 "'grid\[1\]' must be a whole number in 1..65535, not 2.0" --fixture ptx -- "${E[@]}" "$(lj '"grid": [1, 2.0]')"
bad grid_nested 2 "'grid\[0\]' must be a whole number in 1..2147483647, not a list of 1" --fixture ptx -- "${E[@]}" "$(lj '"grid": [[1]]')"
bad grid_null 2 "'grid' must be a whole number .*not null" --fixture ptx -- "${E[@]}" "$(lj '"grid": null')"
bad block_bool 2 "'block' must be a whole number in 1..1024, not true" --fixture ptx -- "${E[@]}" "$(lj '"block": true')"
bad block_object 2 "'block' must be a whole number .*not an object of 1 keys" --fixture ptx -- "${E[@]}" "$(lj '"block": {"x": 1}')"
bad cluster_string_entry 2 "'cluster\[2\]' must be a whole number in 1..16, not \"1\"" --fixture ptx -- "${E[@]}" "$(lj '"cluster": [1, 1, "1"]')"
bad dynamic_smem_string 2 "'dynamic_smem' must be a whole number in 0..232448, not \"1024\"" --fixture ptx -- "${E[@]}" "$(lj '"dynamic_smem": "1024"')"
bad dynamic_smem_fraction 2 "'dynamic_smem' must be a whole number in 0..232448, not 0.5" --fixture ptx -- "${E[@]}" "$(lj '"dynamic_smem": 0.5')"
bad dynamic_smem_bool 2 "'dynamic_smem' must be a whole number .*not false" --fixture ptx -- "${E[@]}" "$(lj '"dynamic_smem": false')"
bad unknown_key 2 "unknown key \"dynamic_smen\" in the launch description \(it takes kernel, grid, block, cluster, dynamic_smem, args\)" \
  --fixture ptx -- "${E[@]}" "$(lj '"dynamic_smen": 1024')"
bad description_list 2 "launch description: must be a JSON object, not a list of 2" --fixture ptx --writes -- sh: 'echo "[1, 2]" > l.json && "$MGPU" emulate --ptx k.ptx --launch l.json'
bad description_null 2 "launch description: must be a JSON object, not null" --fixture ptx --writes -- sh: 'echo null > l.json && "$MGPU" emulate --ptx k.ptx --launch l.json'
bad args_object 2 "'args' must be a list, not an object of 0 keys" --fixture ptx -- "${E[@]}" '{"args": {}}'
bad args_entry_string 2 "'args\[0\]' must be an object of one key, i32, u32, i64, u64, f32 or buffer.*not \"u32\"" --fixture ptx -- "${E[@]}" '{"args": ["u32", 1]}'
bad args_entry_two_keys 2 "'args\[1\]' must be an object of one key.*not an object of 2 keys" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"u32\": 1, \"i32\": 2}")"
bad args_entry_empty 2 "'args\[1\]' must be an object of one key.*not an object of 0 keys" --fixture ptx -- "${E[@]}" "$(la "$BUF, {}")"
bad args_unknown_type 2 "'args\[1\]' has an unknown type \"u16\"" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"u16\": 1}")"
bad args_u32_string 2 "'args\[1\].u32' must be a whole number in 0..4294967295, not \"7\"" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"u32\": \"7\"}")"
bad args_u32_float 2 "'args\[1\].u32' must be a whole number in 0..4294967295, not 7.5" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"u32\": 7.5}")"
bad args_f32_string 2 "'args\[1\].f32' must be a number, not \"1\"" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"f32\": \"1\"}")"
bad args_buffer_number 2 "'args\[0\].buffer' must be an object such as \{\"bytes\": 1024\}, not 4" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": 4}, {"u32": 1}]}'
bad args_buffer_no_bytes 2 "'args\[0\].buffer' needs \"bytes\"" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"name": "x"}}, {"u32": 1}]}'
bad args_buffer_bytes_float 2 "'args\[0\].buffer.bytes' must be a whole number in 1..8589934592, not 1.5" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 1.5}}, {"u32": 1}]}'
bad args_buffer_name_number 2 "'args\[0\].buffer.name' must be a name .*not 3" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "name": 3}}, {"u32": 1}]}'
bad args_buffer_fill_null 2 "'args\[0\].buffer.fill' must be a name .*not null" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "fill": null}}, {"u32": 1}]}'
bad args_buffer_fill_unknown 2 "unknown fill 'lots' in 'args\[0\].buffer.fill': zero, poison, iota-i32" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "fill": "lots"}}, {"u32": 1}]}'
bad args_buffer_print_unknown 2 "unknown print 'f64' in 'args\[0\].buffer.print': i32, f32, bf16, f16" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "print": "f64"}}, {"u32": 1}]}'
bad args_buffer_print_count_string 2 "'args\[0\].buffer.print_count' must be a whole number in 1..1048576, not \"4\"" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "print": "i32", "print_count": "4"}}, {"u32": 1}]}'
bad args_buffer_print_count_negative 2 "'args\[0\].buffer.print_count' = -4 is out of range" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "print": "i32", "print_count": -4}}, {"u32": 1}]}'
bad args_buffer_seed_negative 2 "'args\[0\].buffer.seed' = -1 is out of range \(0..18446744073709551615\)" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "seed": -1}}, {"u32": 1}]}'
bad args_buffer_unknown_key 2 "unknown key \"byte\" in args\[0\].buffer" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "byte": 4}}, {"u32": 1}]}'
bad args_buffer_names_twice 2 "two buffers are named \"x\"" --fixture ptx -- "${E[@]}" '{"kernel": "store", "args": [{"buffer": {"bytes": 4, "name": "x"}}, {"buffer": {"bytes": 4, "name": "x"}}]}'
bad buffer_for_u32_parameter 2 "parameter 1 of store is 4 bytes; a buffer is an 8-byte address" --fixture ptx -- "${E[@]}" "$(la "$BUF, $BUF")"
bad scalar_for_u64_parameter 2 "parameter 0 of store is 8 bytes; the argument gives 4" --fixture ptx -- "${E[@]}" '{"args": [{"u32": 1}, {"u32": 1}]}'
# A description nested a million deep: parsed and refused without recursion.
bad args_nested_deep 2 "'args\[0\]' must be an object of one key.*not a list of 1" --fixture ptx --writes -- \
  sh: 'python3 -c "print(\"{\\\"args\\\": [\" + \"[\" * 1000000 + \"]\" * 1000000 + \"]}\")" > l.json && "$MGPU" emulate --ptx k.ptx --launch l.json'

# --- CUDA's launch limits, checked before anything is allocated (a 2^31 grid was bad_alloc) ---
bad grid_2pow31 2 "'grid' = 2147483648 is out of range \(1..2147483647\)" --fixture ptx -- "${E[@]}" "$(lj '"grid": 2147483648')"
bad grid_y_65536 2 "'grid\[1\]' = 65536 is out of range \(1..65535\)" --fixture ptx -- "${E[@]}" "$(lj '"grid": [1, 65536]')"
bad grid_z_65536 2 "'grid\[2\]' = 65536 is out of range \(1..65535\)" --fixture ptx -- "${E[@]}" "$(lj '"grid": [1, 1, 65536]')"
bad grid_largest_legal 2 "'grid' \[2147483647,65535,65535\] is 9223090559730712575 CTAs; the virtual device runs at most 1048576 per launch" \
  --fixture ptx -- "${E[@]}" "$(lj '"grid": [2147483647, 65535, 65535]')"
bad grid_2pow31_minus_1 2 "is 2147483647 CTAs; the virtual device runs at most 1048576" --fixture ptx -- "${E[@]}" "$(lj '"grid": 2147483647')"
bad grid_2pow20_runs 0 "1 of 1 schedules clean" --fixture ptx -- "${E[@]}" "$(lj '"grid": [1024, 32, 32]')"
bad grid_2pow20_plus_1 2 "is 1048577 CTAs; the virtual device runs at most 1048576" --fixture ptx -- "${E[@]}" "$(lj '"grid": [1048577]')"
bad block_1025 2 "'block' = 1025 is out of range \(1..1024\)" --fixture ptx -- "${E[@]}" "$(lj '"block": 1025')"
bad block_z_65 2 "'block\[2\]' = 65 is out of range \(1..64\)" --fixture ptx -- "${E[@]}" "$(lj '"block": [1, 1, 65]')"
bad block_2048_threads 2 "'block' \[32,32,2\] is 2048 threads; a block holds at most 1024" --fixture ptx -- "${E[@]}" "$(lj '"block": [32, 32, 2]')"
bad block_2pow20_threads 2 "'block' \[1024,1024,1\] is 1048576 threads" --fixture ptx -- "${E[@]}" "$(lj '"block": [1024, 1024]')"
bad block_zero 2 "'block\[1\]' = 0 is out of range \(1..1024\)" --fixture ptx -- "${E[@]}" "$(lj '"block": [32, 0]')"
bad cluster_17 2 "'cluster' = 17 is out of range \(1..16\)" --fixture ptx -- "${E[@]}" "$(lj '"grid": 34, "cluster": 17')"
bad cluster_32_ctas 2 "'cluster' \[4,4,2\] is 32 CTAs; a cluster holds at most 16 \(8 portable\)" --fixture ptx -- "${E[@]}" "$(lj '"grid": [4, 4, 2], "cluster": [4, 4, 2]')"
bad cluster_not_dividing 2 "'grid' \[4,1,1\] is not a whole number of 'cluster' \[3,1,1\] in dimension x" --fixture ptx -- "${E[@]}" "$(lj '"grid": 4, "cluster": 3')"
bad dynamic_smem_over_optin 2 "'dynamic_smem' = 232449 is out of range \(0..232448\)" --fixture ptx -- "${E[@]}" "$(lj '"dynamic_smem": 232449')"
# What the device refuses for the kernel it is (static shared memory, .reqntid) is bad input too.
bad smem_static_plus_dynamic 2 "the virtual device refuses this launch: 236544 bytes of shared memory per block" \
  --fixture ptx -- emulate --ptx smem.ptx --launch '{"dynamic_smem": 232448}'
bad reqntid_mismatch 2 "the virtual device refuses this launch: the kernel requires 64 threads in dimension 0" \
  --fixture ptx -- emulate --ptx reqntid.ptx --launch '{"block": 32}'
bad buffers_over_8gib 2 "the buffers hold 10737418240 bytes together; at most 8589934592" --fixture ptx -- \
  "${E[@]}" '{"kernel": "store", "args": [{"buffer": {"bytes": 5368709120}}, {"buffer": {"bytes": 5368709120, "name": "b"}}]}'
bad buffer_zero_bytes 2 "'args\[0\].buffer.bytes' = 0 is out of range \(1..8589934592\)" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 0}}, {"u32": 1}]}'

# --- values that wrapped modulo 2^32 (and ran "clean") ---
bad dynamic_smem_2pow32 2 "launch description: 'dynamic_smem' = 4294967296 is out of range \(0..232448\)" --fixture ptx -- "${E[@]}" "$(lj '"dynamic_smem": 4294967296')"
bad dynamic_smem_minus_1 2 "'dynamic_smem' = -1 is out of range \(0..232448\)" --fixture ptx -- "${E[@]}" "$(lj '"dynamic_smem": -1')"
bad dynamic_smem_2pow64 2 "'dynamic_smem' must be a whole number in 0..232448, not 18446744073709551616" --fixture ptx -- "${E[@]}" "$(lj '"dynamic_smem": 18446744073709551616')"
bad block_2pow32_plus_1 2 "'block' = 4294967297 is out of range \(1..1024\)" --fixture ptx -- "${E[@]}" "$(lj '"block": 4294967297')"
bad grid_2pow32_plus_1 2 "'grid\[0\]' = 4294967297 is out of range \(1..2147483647\)" --fixture ptx -- "${E[@]}" "$(lj '"grid": [4294967297]')"
bad cluster_2pow32_plus_1 2 "'cluster' = 4294967297 is out of range \(1..16\)" --fixture ptx -- "${E[@]}" "$(lj '"cluster": 4294967297')"
bad grid_2pow63 2 "'grid' = 9223372036854775808 is out of range" --fixture ptx -- "${E[@]}" "$(lj '"grid": 9223372036854775808')"
bad u32_2pow32 2 "'args\[1\].u32' = 4294967296 is out of range \(0..4294967295\)" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"u32\": 4294967296}")"
bad u32_minus_1 2 "'args\[1\].u32' = -1 is out of range \(0..4294967295\)" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"u32\": -1}")"
bad i32_2pow31 2 "'args\[1\].i32' = 2147483648 is out of range \(-2147483648..2147483647\)" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"i32\": 2147483648}")"
bad i32_below_min 2 "'args\[1\].i32' = -2147483649 is out of range" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"i32\": -2147483649}")"
bad i64_2pow63 2 "'args\[1\].i64' = 9223372036854775808 is out of range" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"i64\": 9223372036854775808}")"
bad u64_minus_1 2 "'args\[0\].u64' = -1 is out of range \(0..18446744073709551615\)" --fixture ptx -- "${E[@]}" '{"args": [{"u64": -1}, {"u32": 1}]}'
bad u64_2pow64 2 "'args\[0\].u64' must be a whole number in 0..18446744073709551615" --fixture ptx -- "${E[@]}" '{"args": [{"u64": 18446744073709551616}, {"u32": 1}]}'
bad f32_beyond_range 2 "'args\[1\].f32' = 1e\+39 is beyond the f32 range" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"f32\": 1e39}")"
# A scalar wider than its parameter: the launch copies the parameter's bytes only.
bad i64_2pow32_for_u32 2 "parameter 1 of store is 4 bytes; the argument gives 8 holding a value that does not fit" --fixture ptx -- "${E[@]}" "$(la "$BUF, {\"i64\": 4294967296}")"
bad u64_for_u16 2 "parameter 0 of h is 2 bytes; the argument gives 8 holding a value that does not fit" --fixture ptx -- emulate --ptx u16.ptx --launch '{"args": [{"u64": 65536}]}'
bad u32_that_fits_u16 0 "1 of 1 schedules clean" --fixture ptx -- emulate --ptx u16.ptx --launch '{"args": [{"u32": 65535}]}'

# --- files: folders, missing files, FIFOs and devices named by the option ---
bad ptx_folder 2 "error: --ptx folder is a folder, not a file" --fixture ptx -- emulate --ptx folder --launch "$(lj)"
bad launch_folder 2 "error: --launch folder is a folder, not a file" --fixture ptx -- emulate --ptx k.ptx --launch folder
bad mlir_folder 2 "error: --mlir folder is a folder, not a file" --fixture ptx -- emulate --mlir folder
bad ptx_missing 2 "error: --ptx nowhere.ptx: no such file" --fixture ptx -- emulate --ptx nowhere.ptx
bad launch_missing 2 "error: --launch nowhere.json: no such file" --fixture ptx -- emulate --ptx k.ptx --launch nowhere.json
bad mlir_missing 2 "error: --mlir nowhere.mlir: no such file" --fixture ptx -- emulate --mlir nowhere.mlir
bad ptx_under_a_file 2 "error: --ptx k.ptx/x.ptx: no such file" --fixture ptx -- emulate --ptx k.ptx/x.ptx
bad ptx_fifo 2 "error: --ptx pipe is a FIFO \(named pipe\): give a regular file" --fixture fifo -- emulate --ptx pipe
bad launch_fifo 2 "error: --launch pipe is a FIFO \(named pipe\): give a regular file" --fixture fifo -- emulate --ptx k.ptx --launch pipe
bad ptx_dev_zero 2 "error: --ptx /dev/zero is a character device: give a regular file" -- emulate --ptx /dev/zero
bad launch_dev_zero 2 "error: --launch /dev/zero is a character device" --fixture ptx -- emulate --ptx k.ptx --launch /dev/zero
if [ "$(id -u)" != 0 ]; then  # root reads any file
  bad ptx_unreadable 2 "error: --ptx k.ptx: cannot read it \(Permission denied\)" --fixture ptx --writes -- sh: 'chmod 000 k.ptx && "$MGPU" emulate --ptx k.ptx'
fi
bad ptx_not_ptx 2 "the PTX does not parse" --fixture ptx -- emulate --ptx text.ptx
bad ptx_no_kernel 2 "launch description: the module defines no kernel \(.entry\)" --fixture ptx -- emulate --ptx none.ptx
bad ptx_two_kernels_unnamed 2 "the module has several kernels: name one with \"kernel\"" --fixture ptx -- emulate --ptx two.ptx
bad ptx_two_kernels_named 0 "1 of 1 schedules clean" --fixture ptx -- emulate --ptx two.ptx --launch '{"kernel": "b"}'

# --- the step limit: an endless loop ends in seconds, with the limit and how to raise it ---
STEP="step-limit: no end after 100000 warp-instructions of this cluster \(the step limit; raise it with --step-limit or MGPU_EMU_STEP_LIMIT\): an endless loop.*PTX line (9|10)\]"
bad endless_step_limit_option 1 "$STEP" --fixture ptx -- emulate --ptx endless.ptx --step-limit 100000
bad endless_step_limit_env 1 "$STEP" --fixture ptx -- sh: 'MGPU_EMU_STEP_LIMIT=100000 "$MGPU" emulate --ptx endless.ptx'
bad endless_option_over_env 1 "$STEP" --fixture ptx -- sh: 'MGPU_EMU_STEP_LIMIT=5 "$MGPU" emulate --ptx endless.ptx --step-limit 100000'
bad endless_json 1 "\"kind\": \"step-limit\"" --fixture ptx -- emulate --ptx endless.ptx --step-limit 1000 --json
# The default: a hang is a finding (it was 2,000,000,000 steps, minutes per schedule); the limit
# is the default the device reports. How fast it ends is a benchmark's business, not a test's: the
# timeout only guards against a hang (60 s failed under a loaded CI machine).
bad endless_default_is_a_finding 1 "no end after 20000000 warp-instructions of this cluster \(the step limit" --fixture ptx -- \
  sh: 'timeout 600 "$MGPU" emulate --ptx endless.ptx'
# The driver library reads the variable too: verification reports the limit as a hang.
bad driver_step_limit_env 1 "CUDA_ERROR_LAUNCH_TIMEOUT .*step-limit: no end after 1000 warp-instructions of this cluster" --writes -- \
  sh: 'MGPU_EMU_STEP_LIMIT=1000 "$MGPU" verify matmul --arch sm_90a --m 256 --n 256 --k 256 --config "{}" --seeds 1 -j 1 --db t.db'
for v in 0 -1 abc 1.5 "" 18446744073709551616; do
  bad "step_limit_option_${v:-empty}" 2 "error: --step-limit.*must be a whole number at least 1 \\(at most 9223372036854775807\\), got '$v'" --fixture ptx -- emulate --ptx endless.ptx --step-limit "$v"
done
for v in 0 -5 abc 1.5 " 7" 99999999999999999999999; do
  bad "step_limit_env_${v// /_}" 2 "error: MGPU_EMU_STEP_LIMIT='$v': must be a whole number of warp-instructions, at least 1" --fixture ptx -- \
    sh: "MGPU_EMU_STEP_LIMIT='$v' \"\$MGPU\" emulate --ptx endless.ptx"
done
# A key given twice: the last one was taken without a word.
bad kernel_twice 2 "launch description: the key \"kernel\" is given twice in one object" --fixture ptx -- "${E[@]}" "$(lj '"kernel": "store", "kernel": "stor"')"
bad grid_twice_same_value 2 "launch description: the key \"grid\" is given twice" --fixture ptx -- "${E[@]}" "$(lj '"grid": [1], "grid": [1]')"
bad buffer_bytes_twice 2 "launch description: the key \"bytes\" is given twice" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "bytes": 8}}, {"u32": 1}]}'
bad launch_file_key_twice 2 "launch description: the key \"args\" is given twice" --fixture ptx -- \
  sh: "echo '{\"args\": [], \"args\": []}' > l.json && \$MGPU emulate --ptx k.ptx --launch l.json; rc=\$?; rm -f l.json; exit \$rc"
bad buffers_with_same_keys 0 "out = \[7\]" --fixture ptx -- "${E[@]}" '{"args": [{"buffer": {"bytes": 4, "name": "out", "print": "i32", "print_count": 1}}, {"u32": 7}]}'
bad launch_empty_value 2 "error: --launch: an empty value \(''\) is not taken" --fixture ptx -- emulate --ptx k.ptx --launch ''

# --- round 4: the virtual device's knobs, read by emulate as verify and matmul read them (G01,
# G07, G09, G11, G13: emulate ignored MGPU_EMU_RACES/SEED/REPORTS, and ran a racy kernel "clean"
# with MGPU_EMU_RACES=yes or =1) ---
fixture_race() {
  { ptx_head; cat <<'EOF2'
.visible .entry race(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 s[32];
  mov.u32 %r1, %tid.x;
  st.shared.u32 [s], %r1;
  ld.shared.u32 %r2, [s];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r2;
  ret;
}
EOF2
  } > "$W/race.ptx"
}
R=(emulate --ptx race.ptx --launch '{"kernel":"race","grid":[1,1,1],"block":[64,1,1],"args":[{"buffer":{"bytes":4}}]}')
SEED_TAKES="must be a whole number from 0 to 18446744073709551615"
for v in 0x10 18446744073709551616 banana -1 1.5 " 7"; do
  bad "env_seed_${v// /_}" 2 "error: MGPU_EMU_SEED='$v': $SEED_TAKES" --fixture race -- sh: "MGPU_EMU_SEED='$v' \"\$MGPU\" ${R[*]@Q}"
done
for v in yes 2 on true; do
  bad "env_races_$v" 2 "error: MGPU_EMU_RACES='$v': must be 1 \(detect data races\) or 0" --fixture race -- sh: "MGPU_EMU_RACES='$v' \"\$MGPU\" ${R[*]@Q}"
done
bad env_reports_loud 2 "error: MGPU_EMU_REPORTS='loud': must be stderr or off" --fixture race -- sh: "MGPU_EMU_REPORTS=loud \"\$MGPU\" ${R[*]@Q}"
# A bad knob is refused even where an option would win over it: a typo is said, never ignored.
bad env_seed_bad_with_option 2 "error: MGPU_EMU_SEED='banana'" --fixture race -- sh: "MGPU_EMU_SEED=banana \"\$MGPU\" ${R[*]@Q} --seed 3"
# Good values are honoured as README says; an option given on the command line wins.
bad env_races_1_finds_the_race 1 "race: write of shared bytes .*0 of 1 schedules clean \(races checked\)" --fixture race -- \
  sh: "MGPU_EMU_RACES=1 \"\$MGPU\" ${R[*]@Q} | tr -d '\n'; exit \${PIPESTATUS[0]}"
bad env_races_1_no_races_option_wins 0 "1 of 1 schedules clean$" --fixture race -- sh: "MGPU_EMU_RACES=1 \"\$MGPU\" ${R[*]@Q} --no-races"
bad env_races_0_races_option_wins 1 "race: write of shared bytes" --fixture race -- sh: "MGPU_EMU_RACES=0 \"\$MGPU\" ${R[*]@Q} --races"
bad env_races_json 1 '"races_checked": true' --fixture race -- sh: "MGPU_EMU_RACES=1 \"\$MGPU\" ${R[*]@Q} --json"
bad env_seed_16 0 "schedule 1 \(seed 16\).*schedule 2 \(seed 17\)" --fixture race -- \
  sh: "MGPU_EMU_SEED=16 \"\$MGPU\" ${R[*]@Q} --schedules 2 | tr -d '\n'; exit \${PIPESTATUS[0]}"
bad env_seed_option_wins 0 "schedule 1 \(seed 3\)" --fixture race -- sh: "MGPU_EMU_SEED=16 \"\$MGPU\" ${R[*]@Q} --seed 3"
bad env_seed_largest 0 "schedule 1 \(seed 18446744073709551615\)" --fixture race -- sh: "MGPU_EMU_SEED=18446744073709551615 \"\$MGPU\" ${R[*]@Q}"
bad env_seed_past_the_largest 2 "MGPU_EMU_SEED=18446744073709551615 with --schedules 2: the seeds would run past 18446744073709551615" \
  --fixture race -- sh: "MGPU_EMU_SEED=18446744073709551615 \"\$MGPU\" ${R[*]@Q} --schedules 2"
# MGPU_EMU_REPORTS says where the driver library prints findings: emulate's are its output.
bad env_reports_off_still_reports 1 "race: write of shared bytes" --fixture race -- sh: "MGPU_EMU_REPORTS=off \"\$MGPU\" ${R[*]@Q} --races"
bad help_says_option_wins 0 "the option wins over the variable.*the flag wins over the variable" -- \
  sh: '"$MGPU" emulate --help | tr -d "\n" | tr -s " "'

# --- round 4: MGPU_EMU_ARCH set to what the virtual device does not present (G05, G12: "no usable
# GPU (cuInit: CUDA_ERROR_INVALID_VALUE)", exit 0, and a tuning run predicting instead) ---
ARCH_RE="error: the virtual device \(.*libmgpu_vcuda.so\) cannot start: MGPU_EMU_ARCH='%s': must be sm_90a, sm_90, sm_100a or sm_100"
for v in garbage sm100a sm_80; do
  # shellcheck disable=SC2059
  bad "arch_${v}_devices" 2 "$(printf "$ARCH_RE" "$v")" -- sh: "MGPU_EMU_ARCH=$v \"\$MGPU\" devices"
done
bad arch_typo_devices_json 2 "MGPU_EMU_ARCH='sm100a'" -- sh: 'MGPU_EMU_ARCH=sm100a "$MGPU" devices --json'
bad arch_typo_matmul_auto 2 "$(printf "$ARCH_RE" sm100a)" --fixture good -- \
  sh: 'MGPU_EMU_ARCH=sm100a "$MGPU" matmul --arch sm_100a --m 128 --n 128 --k 128 --trials 1 --no-compile --db t.db'
bad arch_typo_matmul_cuda 2 "$(printf "$ARCH_RE" sm100a)" -- \
  sh: 'MGPU_EMU_ARCH=sm100a "$MGPU" matmul --arch sm_100a --m 128 --n 128 --k 128 --trials 1 --device cuda --db t.db'
bad arch_typo_bench 2 "$(printf "$ARCH_RE" sm100a)" -- sh: 'MGPU_EMU_ARCH=sm100a "$MGPU" bench matmul --arch sm_100a --m 256 --n 256 --k 256'
bad arch_long_value_cut 2 "MGPU_EMU_ARCH='x{40}\.\.\.'" -- sh: 'MGPU_EMU_ARCH=$(printf "x%.0s" $(seq 1000)) "$MGPU" devices'
bad arch_sm_100a_devices 0 "virtual sm_100a" -- sh: 'MGPU_EMU_ARCH=sm_100a "$MGPU" devices'
# --device emulate sets the arch itself: a user's MGPU_EMU_ARCH does not reach it.
bad arch_typo_emulate_device_unaffected 0 "results VERIFIED on the virtual device" --writes -- \
  sh: 'MGPU_EMU_ARCH=sm100a "$MGPU" matmul --arch sm_90a --m 128 --n 128 --k 128 --trials 1 --device emulate --strategy random --db t.db 2>&1 | tr -d "\n"; exit ${PIPESTATUS[0]}'

# --- round 4: PTX nested past any compiler's output (M_ptx_nest: 20,000 { } blocks segfaulted
# the recursive parser) and declarations no GPU holds (M_ptx_shared_4gib_wraps, M_ptx_localbig,
# M_ptx_regs) ---
fixture_deep() {
  python3 - "$W" <<'EOF2'
import sys
w = sys.argv[1]
head = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry f()\n{\n"
for n in (256, 257, 20000, 100000):
    open(f"{w}/n{n}.ptx", "w").write(head + "{" * n + "\nret;\n" + "}" * n + "\n}\n")
open(f"{w}/neg.ptx", "w").write(head + ".reg .pred %p;\nnot.pred %p, " + "!" * 100000 + "%p;\nret;\n}\n")
open(f"{w}/vec.ptx", "w").write(head + "mov.u32 " + "{" * 100000 + "1;\nret;\n}\n")
many = "".join(f"mov.u32 %r{i}, 0;\n" for i in range(65537))
open(f"{w}/many_regs.ptx", "w").write(head + ".reg .b32 %r<65537>;\n" + many + "ret;\n}\n")
EOF2
}
for n in 257 20000 100000; do
  bad "ptx_nested_$n" 2 "error: the PTX does not parse: PTX line 6: \{ \} blocks nested deeper than 256 levels in kernel f" \
    --fixture deep -- emulate --ptx "n$n.ptx" --launch '{"kernel":"f"}'
done
bad ptx_nested_256_runs 0 "1 of 1 schedules clean" --fixture deep -- emulate --ptx n256.ptx --launch '{"kernel":"f"}'
bad ptx_operand_negations 2 "PTX line 7: an operand nested deeper than 256 levels" --fixture deep -- emulate --ptx neg.ptx
bad ptx_operand_vectors 2 "PTX line 6: an operand nested deeper than 256 levels" --fixture deep -- emulate --ptx vec.ptx
# decl.ptx, l*.ptx, ...: kernel f declaring what the case names (at PTX line 7).
decl() { printf '.version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry f()\n{\n.reg .b32 %%r<3>;\n%s\nret;\n}\n' "$1"; }
fixture_decls() {
  local n
  for n in 4294967295 4294967296 232449 18446744073709551617 99999999999999999999; do
    decl ".shared .align 4 .b8 s[$n];" > "$W/s$n.ptx"
  done
  decl ".local .align 4 .b8 l[2147483647];" > "$W/l2gib.ptx"
  decl ".local .align 4 .b8 l[524288];" > "$W/l512kib.ptx"
  decl ".local .align 4 .b8 a[300000];
.local .align 4 .b8 b[300000];" > "$W/l600k.ptx"
  decl ".reg .b32 %q<100000000>;
mov.u32 %q99999999, 1;" > "$W/regs.ptx"
}
for n in 4294967295 4294967296 232449; do
  bad "ptx_shared_$n" 2 "cannot run this PTX: unsupported: '.shared s' is $n bytes: more than a block's shared memory on any GPU the virtual device presents \(232448 bytes on sm_90a and sm_100a\) PTX line 7" \
    --fixture decls -- emulate --ptx "s$n.ptx"
done
for n in 18446744073709551617 99999999999999999999; do
  bad "ptx_shared_$n" 2 "the PTX does not parse: PTX line 7: the size of 's' must be a whole number from 0 to 18446744073709551615, not '$n'" \
    --fixture decls -- emulate --ptx "s$n.ptx"
done
bad ptx_local_2gib 2 "'.local l' is 2147483647 bytes per thread: CUDA allows at most 524288 bytes \(512 KiB\) of local memory per thread PTX line 7" \
  --fixture decls -- emulate --ptx l2gib.ptx
bad ptx_local_512kib_runs 0 "1 of 1 schedules clean" --fixture decls -- emulate --ptx l512kib.ptx
bad ptx_locals_together 2 "the virtual device refuses this launch: 600000 bytes of local memory per thread \(CUDA allows 524288, 512 KiB\)" \
  --fixture decls -- emulate --ptx l600k.ptx
# 10^8 registers declared, one used: the register file holds what is used (it took 88 s and ~6 GB).
bad ptx_regs_declared_1e8 0 "1 of 1 schedules clean" --fixture decls -- sh: 'ulimit -v 2000000; timeout 20 "$MGPU" emulate --ptx regs.ptx'
bad ptx_regs_used_65537 2 "the PTX does not parse: PTX line 65543: kernel f uses more than 65536 registers: the virtual device keeps every register a kernel uses in each of its threads" \
  --fixture deep -- emulate --ptx many_regs.ptx
# --- round 5: module memory, initializers, directive numbers, and texts that made the parser big ---
fixture_mem() {
  { ptx_head; printf '.global .align 4 .b8 g[1099511627776];\n.visible .entry f()\n{\n  ret;\n}\n'; } > "$W/g1tib.ptx"
  { ptx_head; printf '.global .b8 a[17179869184];\n.global .b8 b[1];\n.visible .entry f()\n{\n  ret;\n}\n'; } > "$W/g16g1.ptx"
  { ptx_head; printf '.global .align 4 .b8 g[18446744073709551615];\n.visible .entry f()\n{\n  ret;\n}\n'; } > "$W/gmax.ptx"
  { ptx_head; printf '.const .align 4 .b8 c[65536];\n.const .b8 d[1];\n.visible .entry f()\n{\n  ret;\n}\n'; } > "$W/c64k1.ptx"
  { ptx_head; printf '.global .align 4 .b8 g[1] = {1, 2, 3, 4, 5};\n.visible .entry f()\n{\n  ret;\n}\n'; } > "$W/init5.ptx"
  { ptx_head; printf '.global .align 4 .b8 g[] = {1, 2, 3};\n.visible .entry f()\n{\n  ret;\n}\n'; } > "$W/unsized.ptx"
  { ptx_head; printf '.visible .entry f() .reqntid 4294967297\n{\n  ret;\n}\n'; } > "$W/reqntid.ptx"
  { ptx_head; printf '.visible .entry f() .maxnreg 4294967295\n{\n  ret;\n}\n'; } > "$W/maxnreg.ptx"
  { ptx_head; printf '.shared .align 3 .b8 s[16];\n.visible .entry f()\n{\n  ret;\n}\n'; } > "$W/align3.ptx"
}
# A 1 TiB .global was std::bad_alloc, exit 1 "out of memory"; 2^64-1 bytes likewise.
bad ptx_global_1tib 2 "cannot run this PTX: unsupported: the module's .global variables take 1099511627776 bytes with 'g': more than the virtual device's memory \(17179869184 bytes\) PTX line 4" \
  --fixture mem -- emulate --ptx g1tib.ptx
bad ptx_globals_together 2 "the module's .global variables take more than 17179869184 bytes with 'b'" --fixture mem -- emulate --ptx g16g1.ptx
bad ptx_global_2pow64 2 "take 18446744073709551615 bytes with 'g'" --fixture mem -- emulate --ptx gmax.ptx
bad ptx_const_beyond_64kib 2 "the module's .const variables take more than 65536 bytes with 'd': CUDA's constant memory holds 65536 bytes" \
  --fixture mem -- emulate --ptx c64k1.ptx
# More initial values than elements were copied past the variable (SIGSEGV).
bad ptx_initializer_too_long 2 "the PTX does not parse: PTX line 4: 'g' has 5 initial values for 1 elements" --fixture mem -- emulate --ptx init5.ptx
bad ptx_unsized_takes_initializer 0 "1 of 1 schedules clean" --fixture mem -- emulate --ptx unsized.ptx
# Directive numbers wrapped into 32 bits: .reqntid 4294967297 was "requires 1 threads".
bad ptx_reqntid_wraps 2 "PTX line 4: .reqntid 4294967297 is out of range \(1..1024\)" --fixture mem -- emulate --ptx reqntid.ptx
bad ptx_maxnreg_huge 2 "PTX line 4: .maxnreg 4294967295 is out of range \(1..255\)" --fixture mem -- emulate --ptx maxnreg.ptx
bad ptx_align_not_power_of_two 2 "PTX line 4: .align 3 is not a power of two" --fixture mem -- emulate --ptx align3.ptx
# The parser held every token of the file (55 bytes a character: 60 MB of ';' took 3.3 GB) and
# a scope per `{ }` (20 MB of them took 11 GB); under 1 GB now, and said at once.
bad ptx_punctuation_60mb 2 "PTX line 4: unexpected ';' at module scope" --writes -- sh: \
  'ptx_head() { printf ".version 8.0\n.target sm_90a\n.address_size 64\n"; }; { ptx_head; head -c 60000000 /dev/zero | tr "\0" ";"; } > p.ptx; ulimit -v 1000000; timeout 60 "$MGPU" emulate --ptx p.ptx'
bad ptx_empty_blocks_20mb 2 "PTX line 5: the module has more than 1048576 statements, operands and values" --writes -- sh: \
  'printf ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry f()\n{" > p.ptx; head -c 20000000 /dev/zero | sed "s/\x0\x0/{}/g" >> p.ptx; ulimit -v 1000000; timeout 60 "$MGPU" emulate --ptx p.ptx'
bad ptx_instructions_flood 2 "the module has more than 1048576 statements" --writes -- sh: \
  'printf ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry f()\n{\n" > p.ptx; yes "ret;" | head -c 20000000 >> p.ptx; ulimit -v 1000000; timeout 60 "$MGPU" emulate --ptx p.ptx'
# A 60 MB token was quoted whole: a 60 MB error message.
bad ptx_long_token_short_message 2 "directive '\.{40}\.\.\.'  bytes [0-9]{2,3}$" --writes -- sh: \
  'printf ".version 8.0\n.target sm_90a\n.address_size 64\n" > p.ptx; head -c 60000000 /dev/zero | tr "\0" "." >> p.ptx; timeout 60 "$MGPU" emulate --ptx p.ptx > o 2>&1; r=$?; head -c 300 o | tr -d "\n"; echo "  bytes $(wc -c < o)"; exit $r'
# A byte-order mark or a NUL was quoted raw into the message.
bad ptx_byte_order_mark_said_as_bytes 2 "PTX line 1: unexpected '\\\\xef' at module scope" --writes -- sh: \
  'printf "\xef\xbb\xbf.version 8.0\n.target sm_90a\n" > b.ptx; "$MGPU" emulate --ptx b.ptx'
# Round 7 (F13): a module for another target or a newer PTX ISA ran as sm_90a and was called
# clean. The virtual device implements sm_90a and sm_100a and the plain targets a driver JIT-compiles
# for them (sm_50 .. sm_90, sm_100: PTX for sm_80 runs on an H100), PTX ISA up to 9.0; each refusal
# has its twin that runs.
fixture_directive() {  # fixture_directive VERSION TARGET: k.ptx with those directives
  fixture_ptx
  sed -i "s/^\.version 8\.0$/.version $1/; s/^\.target sm_90a$/.target $2/" "$W/k.ptx"
}
fixture_target_sm120a() { fixture_directive 8.0 sm_120a; }
fixture_target_sm80() { fixture_directive 8.0 sm_80; }
fixture_target_sm120() { fixture_directive 8.0 sm_120; }
fixture_version_sm80_old() { fixture_directive 6.0 sm_80; }
fixture_target_sm100a() { fixture_directive 8.6 sm_100a; }
fixture_target_sm90() { fixture_directive 8.0 sm_90; }
fixture_version_99() { fixture_directive 99.9 sm_90a; }
fixture_version_91() { fixture_directive 9.1 sm_90a; }
fixture_version_90() { fixture_directive 9.0 sm_90a; }
fixture_version_old() { fixture_directive 7.0 sm_90a; }
fixture_version_sm100a_old() { fixture_directive 8.0 sm_100a; }
fixture_version_words() { fixture_directive latest sm_90a; }
fixture_no_target() { fixture_ptx; sed -i '/^\.target /d' "$W/k.ptx"; }
fixture_no_version() { fixture_ptx; sed -i '/^\.version /d' "$W/k.ptx"; }
bad target_sm120a_refused 2 "k\.ptx: \.target sm_120a is not a target the virtual device implements: it implements sm_90a and sm_100a" \
  --fixture target_sm120a -- "${E[@]}" "$(lj)"
bad target_sm80_runs 0 "out = \[7\]" --fixture target_sm80 -- "${E[@]}" "$(lj)"
bad target_sm120_refused 2 "k\.ptx: \.target sm_120 is not a target the virtual device implements" --fixture target_sm120 -- "${E[@]}" "$(lj)"
bad version_too_old_for_sm80 2 "k\.ptx: \.version 6\.0 has no \.target sm_80: that target needs PTX ISA 7\.0 or later" \
  --fixture version_sm80_old -- "${E[@]}" "$(lj)"
bad target_sm100a_runs 0 "out = \[7\]" --fixture target_sm100a -- "${E[@]}" "$(lj)"
bad target_sm90_runs 0 "out = \[7\]" --fixture target_sm90 -- "${E[@]}" "$(lj)"
bad target_missing_refused 2 "k\.ptx: no \.target directive: the virtual device implements sm_90a and sm_100a" \
  --fixture no_target -- "${E[@]}" "$(lj)"
bad version_99_refused 2 "k\.ptx: \.version 99\.9 is newer than the virtual device implements: it reads PTX ISA up to 9\.0" \
  --fixture version_99 -- "${E[@]}" "$(lj)"
bad version_9_1_refused 2 "k\.ptx: \.version 9\.1 is newer than the virtual device implements" --fixture version_91 -- "${E[@]}" "$(lj)"
bad version_9_0_runs 0 "out = \[7\]" --fixture version_90 -- "${E[@]}" "$(lj)"
bad version_too_old_for_target 2 "k\.ptx: \.version 7\.0 has no \.target sm_90a: that target needs PTX ISA 8\.0 or later" \
  --fixture version_old -- "${E[@]}" "$(lj)"
bad version_too_old_for_sm100a 2 "k\.ptx: \.version 8\.0 has no \.target sm_100a: that target needs PTX ISA 8\.6 or later" \
  --fixture version_sm100a_old -- "${E[@]}" "$(lj)"
bad version_words_refused 2 "k\.ptx: \.version latest is no PTX ISA version" --fixture version_words -- "${E[@]}" "$(lj)"
bad version_missing_refused 2 "k\.ptx: no \.version directive" --fixture no_version -- "${E[@]}" "$(lj)"
finish
