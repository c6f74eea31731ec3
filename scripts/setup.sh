#!/usr/bin/env bash
# Set up a Debian 12 machine for mgpu-tune and build it into build/. Idempotent: packages are
# installed only when missing (after `apt-get update`), and the build is incremental.
#   scripts/setup.sh            install what is missing, configure, build everything
#   scripts/setup.sh TARGET...  the same, building only those targets (e.g. mgpu-tune)
#   scripts/setup.sh --deps-only install what is missing and check CUDA; build nothing
# Exit: 0 ready; 1 setup or the build failed; 2 bad input (--help: 0).
# Environment: CUDA_HOME (default /usr/local/cuda) picks the CUDA toolkit; BUILD_DIR (build).
set -euo pipefail
deps_only=0
case "${1:-}" in
  -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --deps-only) deps_only=1; shift ;;
  -*) echo "setup: error: unknown option $1 (run with --help for usage)" >&2; exit 2 ;;
esac
targets=("$@")
trap 'exit 1' ERR  # whatever failed (apt-get, cmake, ...): the table's 1
cd "$(dirname "$0")/.."

# The exact Debian packages (bookworm + bookworm-security for LLVM/MLIR 22).
PACKAGES=(
  cmake ninja-build g++                  # build
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools  # MLIR/LLVM 22 (+ FileCheck, mlir-runner for the emu tests)
  libsqlite3-dev libsqlitecpp-dev        # results store
  zlib1g-dev                             # T4 files (gzip-compressed tuning results)
  pkgconf                                # kernel packs: the test builds a consumer with pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3.11-dev python3-optuna  # Optuna, embedded (Debian's Python 3.11)
  python3-matplotlib python3-sklearn     # the HTML report: pictures, parameter importance (fANOVA)
  slurm-wlm munge                        # campaigns: the single-node Slurm the slurm-labelled test starts
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The CUDA toolkit is not a Debian package here: it must already be installed.
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$CUDA_HOME/bin/ptxas" ] || [ ! -f "$CUDA_HOME/include/cuda.h" ]; then
  echo "setup: no CUDA toolkit at $CUDA_HOME (need bin/ptxas and include/cuda.h)." >&2
  echo "setup: install CUDA 12.8 or newer and set CUDA_HOME to it." >&2
  exit 1
fi
cuda_version=$("$CUDA_HOME/bin/ptxas" --version | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')
if [ -z "$cuda_version" ] || [ "$(printf '%s\n12.8\n' "$cuda_version" | sort -V | head -n1)" != "12.8" ]; then
  echo "setup: CUDA toolkit at $CUDA_HOME is ${cuda_version:-unknown}; sm_100a needs 12.8 or newer." >&2
  exit 1
fi

# nvdisasm/cuobjdump for `compile --sass` (the toolkit here lacks them): pinned PyPI wheels
# into .tools/cuda. Without them everything else works; --sass says what is missing.
if ! ./scripts/cuda_tools.sh >/dev/null; then
  echo "setup: warning: could not install nvdisasm (scripts/cuda_tools.sh); 'compile --sass' will not work" >&2
fi

((deps_only)) && exit 0

BUILD_DIR="${BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$CUDA_HOME"
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" ${targets[@]+--target "${targets[@]}"}
