#!/usr/bin/env bash
# A kernel pack end to end (issue 34): `export --format pack` from a database tuned for both
# archs; the pack built with CMake in a clean folder, as a user builds it; its example runs every
# entry through the C ABI on the virtual device (MGPU_CUDA_DRIVER), as sm_90a and as sm_100a, against a
# CPU reference, and mgpu_matmul() serves each tuned problem; the C11 consumer lists the
# entries; the installed package is found by find_package from a C++17 program and by
# pkg-config from a C11 one. Refusals: a folder that is no pack, a file, stale options, a kernel
# hash other than the one recorded -- each exit 2 with what was there left as it was.
set -uo pipefail
MGPU="$(realpath "${MGPU:?}")"
VCUDA="${VCUDA:?}"
T="$(mktemp -d /tmp/mgpu-pack.XXXXXX)"; [ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT; echo "scratch $T"
export MGPU_CACHE_DIR="$T/cache"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); sed 's/^/  | /' "$T/out" | tail -15; fi; }
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
sql() { "$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' "$@"; }

# Two tuned problems on Hopper (bf16 kn; f16 -> f32 nk), one on Blackwell (bf16 nk).
"$MGPU" matmul --arch sm_90a --m 256 --n 256 --k 128 --device model --trials 2 --seed 1 --db "$T/t.db" --quiet > "$T/out" 2>&1 &&
  "$MGPU" matmul --arch sm_90a --m 128 --n 192 --k 256 --dtype f16 --out-dtype f32 --layout nk --device model --trials 2 \
    --seed 1 --db "$T/t.db" --quiet >> "$T/out" 2>&1 &&
  "$MGPU" matmul --arch sm_100a --m 256 --n 128 --k 128 --layout nk --device model --trials 2 --seed 1 --db "$T/t.db" \
    --quiet >> "$T/out" 2>&1; rc=$?
check "the database: three problems tuned (model)" '[ $rc = 0 ]'

"$MGPU" export --db "$T/t.db" --format pack -o "$T/pack" --include-model > "$T/out" 2>&1; rc=$?
check "export --format pack: written, its summary" \
  '[ $rc = 0 ] && grep -q "wrote a kernel pack to $T/pack: 3 tuned entries and [0-9]* defaults, [0-9]* kernels, for sm_100a and sm_90a" "$T/out" && [ -f "$T/pack/include/mgpu_pack.h" ] && [ -f "$T/pack/manifest.json" ]'
entries=$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$T/pack/manifest.json" 2>/dev/null)

cmake -S "$T/pack" -B "$T/build" -G Ninja -DMGPU_PACK_EXAMPLE=ON -DCMAKE_BUILD_TYPE=Release > "$T/out" 2>&1 &&
  cmake --build "$T/build" -j2 >> "$T/out" 2>&1; rc=$?
check "the pack builds with CMake in a clean folder (C11 library, -Werror example and consumer)" '[ $rc = 0 ]'

for arch in sm_90a sm_100a; do
  MGPU_CUDA_DRIVER="$VCUDA" MGPU_EMU_ARCH=$arch "$T/build/mgpu_pack_example" 136 88 64 > "$T/out" 2>&1; rc=$?
  ran=$(grep -c ": ok: " "$T/out")
  check "example on the virtual device as $arch: every $arch entry and each tuned problem match the CPU reference" \
    '[ $rc = 0 ] && grep -q " 0 failed" "$T/out" && [ "$ran" -ge 2 ] && ! grep -q FAILED "$T/out"'
done
MGPU_CUDA_DRIVER="$VCUDA" MGPU_EMU_ARCH=sm_90a "$T/build/mgpu_pack_example" > "$T/out" 2>&1; rc=$?
check "example at each entry's own problem: the tuned problems are exact" \
  '[ $rc = 0 ] && grep -q "mgpu_matmul 256x256x128: entry [0-9]* (exact): ok" "$T/out" && grep -q "mgpu_matmul 128x192x256: entry [0-9]* (exact): ok" "$T/out"'

"$T/build/mgpu_pack_consumer_c" > "$T/out" 2>&1; rc=$?
check "the C11 consumer lists every entry, with its template, arch and provenance" \
  '[ $rc = 0 ] && [ "$(wc -l < "$T/out")" = "$entries" ] && grep -q "matmul_sm100 sm_100a m256_n128_k128_bf16_bf16_nk model" "$T/out"'

cmake --install "$T/build" --prefix "$T/prefix" > "$T/out" 2>&1; rc=$?
mkdir -p "$T/user"
cat > "$T/user/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(user LANGUAGES CXX)
find_package(mgpu_pack REQUIRED)
add_executable(user main.cpp)
set_target_properties(user PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
target_compile_options(user PRIVATE -Wall -Wextra -pedantic -Werror)
target_link_libraries(user PRIVATE mgpu_pack::mgpu_pack)
EOF
cat > "$T/user/main.cpp" <<'EOF'
#include <cstdio>
#include "mgpu_pack.h"
int main() {
  std::size_t bytes = 0;  // no driver here: the call says so, it does not crash
  const mgpu_status s = mgpu_matmul_workspace_size(256, 256, 128, MGPU_BF16, MGPU_BF16, MGPU_B_KN, &bytes);
  std::printf("%d entries; %s: %s\n", mgpu_pack_entry_count(), mgpu_status_name(s), mgpu_last_error());
  return 0;
}
EOF
cmake -S "$T/user" -B "$T/user/build" -DCMAKE_PREFIX_PATH="$T/prefix" > "$T/out" 2>&1 && cmake --build "$T/user/build" >> "$T/out" 2>&1 &&
  MGPU_CUDA_DRIVER="$T/no-such-driver.so" "$T/user/build/user" > "$T/out" 2>&1; rc=$?
check "installed: find_package(mgpu_pack) from a C++17 program; no driver is a status, not a crash" \
  '[ $rc = 0 ] && grep -q "^$entries entries; MGPU_ERR_DRIVER_UNAVAILABLE: cannot load the CUDA driver .*no-such-driver.so" "$T/out"'
cp "$T/pack/example/consumer.c" "$T/user/consumer.c"
PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" cc -std=c11 -Wall -Wextra -pedantic -Werror "$T/user/consumer.c" -o "$T/user/c" \
  $(PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" pkg-config --cflags --libs --static mgpu_pack) > "$T/out" 2>&1 &&
  "$T/user/c" > "$T/out" 2>&1; rc=$?
check "installed: pkg-config builds a C11 consumer" '[ $rc = 0 ] && [ "$(wc -l < "$T/out")" = "$entries" ]'

# Refusals.
mkdir -p "$T/mine" && echo keep > "$T/mine/notes.txt"
"$MGPU" export --db "$T/t.db" --format pack -o "$T/mine" --include-model > "$T/out" 2>&1; rc=$?
check "a folder that holds other files is refused, untouched" \
  '[ $rc = 2 ] && grep -q "holds files and is no kernel pack" "$T/out" && [ "$(ls "$T/mine")" = notes.txt ]'
echo x > "$T/file"
"$MGPU" export --db "$T/t.db" --format pack -o "$T/file" --include-model > "$T/out" 2>&1; rc=$?
check "a file is refused" '[ $rc = 2 ] && grep -q "is a file, but --format pack writes a folder" "$T/out" && [ "$(cat "$T/file")" = x ]'
"$MGPU" export --db "$T/t.db" --format pack -o "$T/p2" --include-model --all-versions > "$T/out" 2>&1; rc=$?
check "--all-versions does not go with a pack" '[ $rc = 2 ] && grep -q "all-versions does not go with --format pack" "$T/out" && [ ! -e "$T/p2" ]'
"$MGPU" export --db "$T/t.db" --format pack -o "$T/p2" > "$T/out" 2>&1; rc=$?
check "predictions only, without --include-model: nothing to pack" \
  '[ $rc = 2 ] && grep -q "holds no measured, verified matmul result.*predictions need --include-model" "$T/out" && [ ! -e "$T/p2" ]'
before=$(cat "$T/pack/src/matmul_table.c" | md5sum)
cp "$T/t.db" "$T/h.db"
sql "$T/h.db" "UPDATE trials SET kernel_hash = '0123456789abcdef' WHERE source = 'model'"
"$MGPU" export --db "$T/h.db" --format pack -o "$T/pack" --include-model > "$T/out" 2>&1; rc=$?
check "a recorded kernel hash this mgpu-tune does not build: refused, the earlier pack left whole" \
  '[ $rc = 2 ] && grep -q "was recorded as 0123456789abcdef, but this mgpu-tune builds" "$T/out" && [ "$(cat "$T/pack/src/matmul_table.c" | md5sum)" = "$before" ] && [ -z "$(ls -A "$T" | grep partial)" ]'
"$MGPU" export --db "$T/t.db" --format pack -o "$T/pack" --include-model --json > "$T/out" 2>/dev/null; rc=$?
check "an earlier pack is replaced; --json says what was written" \
  '[ $rc = 0 ] && "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); assert j[\"entries\"] == 3 and j[\"archs\"] == [\"sm_100a\", \"sm_90a\"], j" "$T/out" && [ -z "$(ls -A "$T" | grep -e partial -e "\.old-")" ]'

# Round 17: the folder as written with a trailing '/' (F1); a symbolic link to a pack replaces
# the pack it names and keeps the link (F3); the database inside the folder, and the current
# folder, refused before anything is built (F2); --op other than matmul refused (F5);
# --require-verified ships no unproved defaults (F6); a folder name with a space is quoted in the
# hint (F13).
"$MGPU" export --db "$T/t.db" --format pack -o "$T/pack/" --include-model > "$T/out" 2>&1; rc=$?
check "-o DIR/ is DIR: replaced" '[ $rc = 0 ] && [ -f "$T/pack/manifest.json" ] && [ -z "$(ls -A "$T" | grep -e partial -e "\.old-")" ]'
ln -s "$T/pack" "$T/link"
"$MGPU" export --db "$T/t.db" --format pack -o "$T/link" --include-model > "$T/out" 2>&1; rc=$?
check "-o LINK replaces the pack it names; the link stays" '[ $rc = 0 ] && [ -L "$T/link" ] && [ -f "$T/pack/manifest.json" ]'
cp "$T/t.db" "$T/pack/results.db"
"$MGPU" export --db "$T/pack/results.db" --format pack -o "$T/pack" --include-model > "$T/out" 2>&1; rc=$?
check "a database inside the pack folder: refused, kept" \
  '[ $rc = 2 ] && grep -q "is inside .*which a pack replaces whole" "$T/out" && [ -f "$T/pack/results.db" ] && ! grep -q "pack: building" "$T/out"'
rm "$T/pack/results.db"
(cd "$T/pack" && "$MGPU" export --db "$T/t.db" --format pack -o . --include-model) > "$T/out" 2>&1; rc=$?
check "-o . (the current folder): refused" '[ $rc = 2 ] && grep -q "is the current folder or holds it" "$T/out" && [ -f "$T/pack/manifest.json" ]'
"$MGPU" export --db "$T/t.db" --format pack -o "$T/p3" --include-model --op attention > "$T/out" 2>&1; rc=$?
check "--op attention does not go with a pack" '[ $rc = 2 ] && grep -q "op attention does not go with --format pack" "$T/out" && [ ! -e "$T/p3" ]'
"$MGPU" export --db "$T/t.db" --format pack -o "$T/my pack" --include-model --require-verified > "$T/out" 2>&1; rc=$?
check "--require-verified: the verified tuned entries, no defaults; the hint quoted" \
  '[ $rc = 0 ] && grep -q "3 tuned entries and 0 defaults" "$T/out" && grep -qF "cmake -S '"'$T/my pack'"' -B '"'$T/my pack-build'"'" "$T/out"'

# mgpu-bench --pack: the pack measured as shipped. On the virtual device nothing is timed (it has
# no clock: exit 3, as for any suite, no run recorded); what CI shows is that the pack folder
# builds as a shared library and loads, and lists its entries as the benchmarks -- the same from
# the folder and from a library built apart -- and each refusal.
BENCH="$(dirname "$MGPU")/mgpu-bench"
mkdir -p "$T/tmp" && export TMPDIR="$T/tmp"  # where the pack is built: nothing may be left there
"$BENCH" --pack "$T/my pack" --benchmark_list_tests > "$T/out" 2>&1; rc=$?
check "mgpu-bench --pack FOLDER: built, loaded, its three entries listed" \
  '[ $rc = 0 ] && grep -q "^pack/matmul_sm90/m256_n256_k128_bf16_bf16_kn/" "$T/out" && grep -q "^pack/matmul_sm90/m128_n192_k256_f16_f32_nk/" "$T/out" && grep -q "^pack/matmul_sm100/m256_n128_k128_bf16_bf16_nk/" "$T/out" && [ "$(grep -c "^pack/" "$T/out")" = 3 ] && [ -z "$(ls -A "$T/tmp")" ]'
cmake -S "$T/my pack" -B "$T/shared" -DBUILD_SHARED_LIBS=ON > "$T/out" 2>&1 && cmake --build "$T/shared" -j2 >> "$T/out" 2>&1 &&
  "$BENCH" --pack "$T/shared/libmgpu_pack.so" --benchmark_list_tests > "$T/out" 2>&1; rc=$?
check "mgpu-bench --pack LIBRARY: the same entries" '[ $rc = 0 ] && [ "$(grep -c "^pack/" "$T/out")" = 3 ]'
cp "$T/t.db" "$T/bench.db"
runs_before=$("$MGPU" best --db "$T/bench.db" --runs 2>/dev/null | wc -l)
MGPU_CUDA_DRIVER="$VCUDA" "$BENCH" --pack "$T/shared/libmgpu_pack.so" --db "$T/bench.db" > "$T/out" 2>&1; rc=$?
check "on the virtual device: exit 3, nothing measured, no run recorded" \
  '[ $rc = 3 ] && grep -q "virtual device (MGPU_CUDA_DRIVER), which has no clock" "$T/out" && [ "$("$MGPU" best --db "$T/bench.db" --runs 2>/dev/null | wc -l)" = "$runs_before" ]'
"$BENCH" --pack "$T/mine" > "$T/out" 2>&1; rc=$?
check "--pack of a folder that is no pack: refused" '[ $rc = 2 ] && grep -q "is no kernel pack: it holds no pack.s manifest.json" "$T/out"'
"$BENCH" --pack "$VCUDA" > "$T/out" 2>&1; rc=$?
check "--pack of a library without the ABI: refused by name" '[ $rc = 2 ] && grep -q "is no kernel pack library .*it has no mgpu_pack_entry_count" "$T/out"'
"$BENCH" --pack "$T/file" > "$T/out" 2>&1; rc=$?
check "--pack of a file that is no library: refused" '[ $rc = 2 ] && grep -q "cannot be loaded as a library" "$T/out"'
cp -r "$T/my pack" "$T/broken" && echo "this is not C" >> "$T/broken/src/tables.c"
"$BENCH" --pack "$T/broken" > "$T/out" 2>&1; rc=$?
check "--pack of a pack that does not build: refused with the end of its build log" \
  '[ $rc = 2 ] && grep -q "does not build (cmake exit" "$T/out" && grep -q "tables.c" "$T/out" && [ -z "$(ls -A "$T/tmp")" ]'
env PATH=/nonexistent "$BENCH" --pack "$T/my pack" > "$T/out" 2>&1; rc=$?
check "--pack FOLDER without cmake on PATH: said, with what to give instead" '[ $rc != 0 ] && [ $rc != 2 ] && grep -q "needs cmake, which is not on PATH" "$T/out"'
for extra in "--configs x.json" "--device model" "--include-model" "--db $T/absent.db"; do
  "$BENCH" --pack "$T/my pack" $extra > "$T/out" 2>&1; rc=$?
  check "--pack with $extra: refused before anything is built" '[ $rc = 2 ] && ! grep -q "building the pack" "$T/out"'
done

# Battery round 18: --benchmark_out inside the pack folder refused, the pack untouched (F16); an
# unusable TMPDIR said, no crash (F15); a FIFO manifest.json no hang (F18); a library whose entry
# has a NULL string refused, no crash (F19); a missing kernel file named as such (F24); a
# re-export over a pack holding a build folder refused, the folder kept (F25).
before=$(md5sum < "$T/my pack/manifest.json")
"$BENCH" --pack "$T/my pack" --benchmark_out="$T/my pack/manifest.json" --benchmark_list_tests > "$T/out" 2>&1; rc=$?
check "--benchmark_out inside the pack: refused, the manifest untouched" \
  '[ $rc = 2 ] && grep -q "inside the --pack folder" "$T/out" && [ "$(md5sum < "$T/my pack/manifest.json")" = "$before" ]'
# Round 19, F26: through a hard link outside the folder as well.
ln "$T/my pack/manifest.json" "$T/hardman.json"
"$BENCH" --pack "$T/my pack" --benchmark_out="$T/hardman.json" --benchmark_list_tests > "$T/out" 2>&1; rc=$?
check "--benchmark_out a hard link to a pack file: refused, the manifest untouched" \
  '[ $rc = 2 ] && grep -q "is a hard link to .*manifest.json, a file of the --pack folder" "$T/out" && [ "$(md5sum < "$T/my pack/manifest.json")" = "$before" ]'
rm -f "$T/hardman.json"
TMPDIR="$T/no-such-tmp" "$BENCH" --pack "$T/my pack" --benchmark_list_tests > "$T/out" 2>&1; rc=$?
check "an unusable TMPDIR: said, no crash" '[ $rc = 1 ] && grep -q "TMPDIR=.*no-such-tmp. is no folder" "$T/out" && ! grep -q terminate "$T/out"'
# Round 19, F35: a full TMPDIR (a 200 KiB tmpfs, filled; in a mount namespace of this test's own)
# was "the pack does not build", exit 2, with an empty log: it is the temporary folder, exit 1.
if unshare -rm true 2> /dev/null; then
  mkdir -p "$T/tfs"
  unshare -rm bash -c 'mount -t tmpfs -o size=200k tmpfs "$1" || exit 97; head -c 1M /dev/zero > "$1/fill" 2> /dev/null
    TMPDIR=$1 exec "$2" --pack "$3" --benchmark_list_tests' _ "$T/tfs" "$BENCH" "$T/my pack" > "$T/out" 2>&1; rc=$?
  check "a full TMPDIR: the temporary folder named, exit 1, the pack not blamed" \
    '[ $rc = 1 ] && grep -q "could not be built here: the temporary folder .*tfs is full" "$T/out" && ! grep -q "does not build" "$T/out"'
else
  echo "skip: a full TMPDIR (no mount namespace here)"
fi
mkdir -p "$T/fifo" && mkfifo "$T/fifo/manifest.json"
timeout 20 "$BENCH" --pack "$T/fifo" > "$T/out" 2>&1; rc=$?
check "a FIFO manifest.json: no pack, at once" '[ $rc = 2 ] && grep -q "is no kernel pack" "$T/out" && ! grep -q "building the pack" "$T/out"'
timeout 20 "$MGPU" export --db "$T/t.db" --format pack -o "$T/fifo" --include-model > "$T/out" 2>&1; rc=$?
check "export over a folder with a FIFO manifest.json: refused at once" '[ $rc = 2 ] && grep -q "is no kernel pack" "$T/out"'
cp -r "$T/my pack" "$T/nulls" && sed -i '0,/{"matmul", "matmul_sm[0-9]*", "sm_[0-9a]*"/s//{"matmul", NULL, "sm_90a"/' "$T/nulls/src/tables.c"
"$BENCH" --pack "$T/nulls" --benchmark_list_tests > "$T/out" 2>&1; rc=$?
check "an entry with a NULL template name: refused, no crash" '[ $rc = 2 ] && grep -q "entry 0 has no template_name (NULL)" "$T/out"'
cp -r "$T/my pack" "$T/missing" && rm "$T/missing/src/kernels/kernel_001.c"
"$BENCH" --pack "$T/missing" --benchmark_list_tests > "$T/out" 2>&1; rc=$?
check "a kernel file missing: the library does not load, said without a temporary path" \
  '[ $rc = 2 ] && grep -q "builds, but its library does not load: libmgpu_pack.so: undefined symbol" "$T/out" && ! grep -q "mgpu-bench-pack-" "$T/out"'
mkdir -p "$T/my pack/build" && echo notes > "$T/my pack/NOTES.txt"
"$MGPU" export --db "$T/t.db" --format pack -o "$T/my pack" --include-model --require-verified > "$T/out" 2>&1; rc=$?
check "a re-export over a pack holding a build folder and notes: refused, both kept" \
  '[ $rc = 2 ] && grep -q "also holds what no pack writes (NOTES.txt, build)" "$T/out" && [ -f "$T/my pack/NOTES.txt" ] && [ -d "$T/my pack/build" ]'

echo "$fails failed"
[ "$fails" = 0 ]
