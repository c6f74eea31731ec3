#!/usr/bin/env bash
# Look at the HTML report as a person would: write it for DB and render the page to a PNG with
# headless Chromium (installed from Debian if missing).
#   scripts/report_screenshot.sh DB OUT.png [REPORT_DIR]
# Exit: 0 written; 1 rendering failed; 2 bad input (mgpu-tune report's own codes otherwise).
set -euo pipefail
# The header comment above is the usage: --help prints it.
usage_text() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
case "${1:-}" in --help|-h) usage_text; exit 0 ;; esac
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "report_screenshot: error: usage: report_screenshot.sh DB OUT.png [REPORT_DIR]" >&2
  exit 2
fi
db="$1"
png="$2"
dir="${3:-$(mktemp -d)}"
if ! command -v chromium >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium
fi
"${MGPU_BIN:-$here/build}/mgpu-tune" report --db "$db" -o "$dir"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,2600 \
  --screenshot="$(realpath -m "$png")" "file://$(realpath "$dir")/index.html" 2>/dev/null
echo "report: $dir/index.html, screenshot: $png"
