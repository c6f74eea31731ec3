#!/usr/bin/env bash
# Install Kernel Tuner (PyPI only, not in Debian) into a project-local virtual environment, for
# the strategy benchmark's peer (tests/bench_strategies --peer DIR). Idempotent.
#   scripts/kernel_tuner.sh [DIR]      (default: .venv-kernel-tuner in the source tree)
# Prints DIR on success. Exit: 0 ready; 1 the install failed; 2 bad input (--help: 0).
# The version is pinned: scores are only comparable run to run with the same strategies.
set -euo pipefail
KERNEL_TUNER_VERSION=1.5.0
case "${1:-}" in
  -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "kernel_tuner: error: unknown option $1 (run with --help for usage)" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$here/.venv-kernel-tuner}"
trap 'exit 1' ERR
if [ ! -x "$dir/bin/python" ]; then
  # Debian's Python 3.11 (python3-venv), the one the tuner embeds; numpy/scipy come from PyPI
  # with Kernel Tuner so its pinned requirements resolve.
  /usr/bin/python3 -m venv "$dir" >&2
fi
if ! "$dir/bin/python" -c "import kernel_tuner, sys; sys.exit(kernel_tuner.__version__ != '$KERNEL_TUNER_VERSION')" 2>/dev/null; then
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "kernel_tuner==$KERNEL_TUNER_VERSION" >&2
fi
echo "$dir"
