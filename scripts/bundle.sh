#!/usr/bin/env bash
# Build a self-contained bundle of mgpu-tune for the GPU machines, which have CUDA but no
# MLIR, no Debian packages and another Python:
#   scripts/bundle.sh              -> .bundle/ and .bundle.tar.xz (carry the archive)
#   scripts/bundle.sh --tests gpu  the same, but mgpu-tests holds only the gpu-labelled tests
#                                  (built in far less time: for a short lease)
# Contents: bin/mgpu-tune (and bin/mgpu-bench, a link to it: the nightly suite, for
# scripts/nightly.sh with MGPU_BIN=.bundle/bin) and bin/mgpu-tests (every GoogleTest test in
# one binary), both
# linked statically against MLIR/LLVM and the C++ runtime (MGPU_STATIC=ON) and stripped;
# lib/ with the shared libraries they and the embedded Python still need (libpython3.11,
# sqlite, zlib, zstd, BLAS for numpy, ...); python/ as the embedded Python's home (the
# standard library and the packages Optuna imports); data/ (test inputs); run.sh, which
# sets LD_LIBRARY_PATH, MGPU_PYTHON_HOME and MGPU_TEST_DATA and runs a command.
# On the GPU machine:
#   tar xJf .bundle.tar.xz && .bundle/run.sh mgpu-tests --gtest_filter='GpuKernels.*'
# Exit: 0 built; 1 something failed; 2 bad input.
set -euo pipefail
# The header comment above is the usage: --help prints it.
usage_text() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
tests=all
case "${1:-}" in
  --help|-h) usage_text; exit 0 ;;
  --tests) tests="${2:-}"; [[ "$tests" == all || "$tests" == gpu ]] ||
             { echo "bundle: error: --tests takes all or gpu" >&2; exit 2; } ;;
  "") ;;
  *) echo "bundle: error: unknown argument $1 (usage: scripts/bundle.sh [--tests all|gpu])" >&2; exit 2 ;;
esac
trap 'exit 1' ERR
cd "$(dirname "$0")/.."
./scripts/setup.sh --deps-only >/dev/null  # the static build below is the only one it needs
if ! dpkg-query -W -f='${Status}' libzstd-dev 2>/dev/null | grep -q "install ok installed"; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libzstd-dev
fi

BUILD=build-static
OUT=.bundle
[ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMGPU_STATIC=ON \
  -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}"
cmake -S . -B "$BUILD" -DMGPU_BUNDLE_TESTS="$tests" >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target mgpu-tune mgpu-tests

rm -rf "$OUT" && mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/python" "$OUT/data"
strip -o "$OUT/bin/mgpu-tune" "$BUILD/mgpu-tune"
strip -o "$OUT/bin/mgpu-tests" "$BUILD/tests/mgpu-tests"
ln -s mgpu-tune "$OUT/bin/mgpu-bench"  # mgpu-tune runs the nightly suite under this name
mkdir -p "$OUT/scripts" && cp scripts/nightly.sh "$OUT/scripts/"
cp -r tests/data/. "$OUT/data/"

extensions=$(/usr/bin/python3.11 scripts/bundle_python.py "$OUT/python")

# Shared libraries the binaries and Python extensions load, except the C runtime and the
# CUDA driver, which the GPU machine provides.
is_system() { case "$(basename "$1")" in
  libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libcuda.so*|libnvidia-*) return 0;;
  *) return 1;; esac; }
for f in "$OUT/bin/mgpu-tune" "$OUT/bin/mgpu-tests" $extensions; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3}' | while read -r lib; do
    is_system "$lib" || cp -nL "$lib" "$OUT/lib/"
  done
done

cat > "$OUT/run.sh" <<'RUN'
#!/usr/bin/env bash
# Run a bundled program (mgpu-tune, mgpu-tests) or any command with the bundle's environment.
here="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MGPU_PYTHON_HOME="$here/python" MGPU_TEST_DATA="$here/data" MGPU_TUNE_EXE="$here/bin/mgpu-tune"
cmd="$1"; shift
[ -x "$here/bin/$cmd" ] && cmd="$here/bin/$cmd"
exec "$cmd" "$@"
RUN
chmod +x "$OUT/run.sh"
tar cf - "$OUT" | xz -T"$(nproc)" -6 > .bundle.tar.xz
echo "bundle: $(du -sh "$OUT" | cut -f1) in $OUT, $(du -h .bundle.tar.xz | cut -f1) compressed in .bundle.tar.xz"
