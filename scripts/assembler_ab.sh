#!/usr/bin/env bash
# Compile time per kernel with each assembler: ptxas (whole-program; setmaxnreg
# survives) against nvJitLink (relocatable; drops it), over a grid of sm_90a configs, no compile
# cache, one thread, alternating the two per config so a loaded machine slows both alike.
#   scripts/assembler_ab.sh [MGPU_TUNE]      (default: build/mgpu-tune)
# Prints the median, mean and range per assembler. Exit: 0 done; 1 a compile failed to run;
# 2 bad input (--help: 0). A benchmark: it asserts nothing.
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "assembler_ab: error: unknown option $1 (run with --help for usage)" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")/.." && pwd)"
mgpu="${1:-$here/build/mgpu-tune}"
[ -x "$mgpu" ] || { echo "assembler_ab: error: no mgpu-tune at $mgpu (build first, or pass its path)" >&2; exit 2; }
out=$(mktemp); trap 'rm -f "$out"' EXIT
n=0
for tm in 64 128 192; do for tn in 64 128 256; do for tk in 32 64; do for cl in none M; do
  cfg="{\"tile_m\":$tm,\"tile_n\":$tn,\"tile_k\":$tk,\"cluster_dimension\":\"$cl\",\"max_concurrent_steps\":3}"
  for a in ptxas nvjitlink; do
    # Configs the validity rules reject exit 2 with a reason: skipped, as no kernel exists.
    "$mgpu" compile matmul --arch sm_90a --config "$cfg" --no-cache --assembler "$a" -j1 --json 2>/dev/null \
      | python3 -c "import json,sys; [print('$a', r['compile_ms']) for r in json.load(sys.stdin)['configs'] if r.get('ok')]" \
      >> "$out" 2>/dev/null || true
  done
  n=$((n + 1)); printf '\rassembler_ab: %d/36 configs' "$n" >&2
done; done; done; done
echo >&2
python3 - "$out" <<'PY'
import statistics as st, sys
d = {}
for line in open(sys.argv[1]):
    a, v = line.split()
    d.setdefault(a, []).append(float(v))
if not d:
    sys.exit("assembler_ab: no kernel compiled")
for a, v in sorted(d.items()):
    print(f"{a:10s} {len(v):3d} kernels: median {st.median(v):.0f} ms, mean {st.mean(v):.0f} ms, "
          f"range {min(v):.0f}-{max(v):.0f} ms per kernel (MLIR -> PTX -> cubin, no cache, 1 thread)")
PY
