#!/usr/bin/env bash
# Install the CUDA binary tools the toolkit here lacks (nvdisasm, cuobjdump) from NVIDIA's PyPI
# wheels into a project-local folder, for the SASS evidence of `compile`. Idempotent.
#   scripts/cuda_tools.sh [DIR]      (default: .tools/cuda in the source tree)
# Prints DIR/bin on success. Exit: 0 ready; 1 the download failed; 2 bad input (--help: 0).
# Tools the CUDA toolkit already has (CUDA_HOME/bin) are used as they are; the wheels are
# pinned so that SASS counts stay comparable run to run.
set -euo pipefail
VERSION=13.2.86  # the oldest CUDA 13 release on PyPI; disassembles sm_90a/sm_100a cubins of CUDA 13.0
case "${1:-}" in
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "cuda_tools: error: unknown option $1 (run with --help for usage)" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$here/.tools/cuda}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
trap 'exit 1' ERR
mkdir -p "$dir/bin"
for tool in nvdisasm cuobjdump; do
  if [ -x "$CUDA_HOME/bin/$tool" ]; then ln -sf "$CUDA_HOME/bin/$tool" "$dir/bin/$tool"; continue; fi
  stamp="$dir/bin/.$tool-$VERSION"
  [ -x "$dir/bin/$tool" ] && [ -f "$stamp" ] && continue
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  # A wheel is a zip; the binary is all we need, so no Python environment is touched.
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 -d "$tmp" "nvidia-cuda-$tool==$VERSION" >&2
  python3 - "$tmp" "$dir/bin" "$tool" <<'PY'
import glob, os, sys, zipfile
tmp, bindir, tool = sys.argv[1:]
(wheel,) = glob.glob(os.path.join(tmp, "*.whl"))
with zipfile.ZipFile(wheel) as z:
    (member,) = [n for n in z.namelist() if n.endswith("/bin/" + tool)]
    target = os.path.join(bindir, tool)
    with z.open(member) as src, open(target + ".part", "wb") as dst:
        dst.write(src.read())
    os.chmod(target + ".part", 0o755)
    os.replace(target + ".part", target)
PY
  touch "$stamp"
done
"$dir/bin/nvdisasm" --version >/dev/null
echo "$dir/bin"
