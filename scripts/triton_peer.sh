#!/usr/bin/env bash
# Install Triton (PyPI) into a project-local virtual environment, for the side-by-side benchmark
# of our Hopper matmul and Triton's (scripts/triton_peer.py). Idempotent.
#   scripts/triton_peer.sh [DIR]      (default: .venv-triton in the source tree)
# Prints DIR on success. Exit: 0 ready; 1 the install failed; 2 bad input (--help: 0).
# The version is pinned: its PTX, and so the SASS compared, changes from release to release.
set -euo pipefail
TRITON_VERSION=3.9.0
case "${1:-}" in
  -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "triton_peer: error: unknown option $1 (run with --help for usage)" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$here/.venv-triton}"
trap 'exit 1' ERR
if [ ! -x "$dir/bin/python" ]; then
  # Debian's Python 3.11 (python3-venv), as for the other project-local venvs. Triton's wheel
  # needs nothing else to compile: no torch, no GPU, no driver.
  /usr/bin/python3 -m venv "$dir" >&2
fi
if ! "$dir/bin/python" -c "import triton, sys; sys.exit(triton.__version__ != '$TRITON_VERSION')" 2>/dev/null; then
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "triton==$TRITON_VERSION" >&2
fi
echo "$dir"
