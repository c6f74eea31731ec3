#!/usr/bin/env bash
# Side by side: the main loop's SASS of our sm_90a attention kernel and of a Triton fused-attention
# forward kernel (FlashAttention-2 style, scripts/triton_attention_fwd.py), both compiled here for
# sm_90a without a GPU. Idempotent; everything it installs stays in the source tree's .tools/.
#   scripts/attention_sass_compare.sh [--out DIR] [--build DIR] [--head-dim 64|128]
#                                     [--triton-block-n 64|128] [--triton-stages N]
# Steps: installs triton==3.3.1 (PyPI wheel, pip --target .tools/triton, run by Debian's
# /usr/bin/python3 3.11; no torch, no driver) and nvdisasm/cuobjdump (scripts/cuda_tools.sh);
# builds and runs attention_sass (ours: block_kv 128, 2 stages, non-causal, bf16); compiles the
# Triton kernel (BLOCK_M 128, BLOCK_N 64, 8 warps, 3 stages, bf16, non-causal) with
# triton.compile and GPUTarget("cuda", 90, 32), and assembles its PTX with the toolkit's ptxas
# (-arch=sm_90a -O3 -v, as ours) so one assembler makes both; Triton's own cubin (its bundled
# ptxas) is profiled beside it. Then scripts/attention_sass_count.py counts each main loop (the
# innermost loop holding HGMMAs) per compute warp, normalised to 64 keys x 128 query rows.
# Output: a markdown table on stdout and in DIR/attention-sass.md (default DIR:
# build/attention-sass), with the PTX, cubins, ptxas logs and SASS listings beside it.
# Example: scripts/attention_sass_compare.sh --out /tmp/attn && less /tmp/attn/attention-sass.md
# Exit: 0 the table was written; 1 an install, build, compile or tool failed; 2 bad input
# (--help: 0).
set -euo pipefail
TRITON_VERSION=3.3.1  # pinned: its PTX, and so the SASS compared, changes from release to release
PY=/usr/bin/python3    # Debian's Python 3.11, for which the wheel is cp311

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
bad() { echo "attention_sass_compare: error: $*" >&2; echo "(run with --help for usage)" >&2; exit 2; }
die() { echo "attention_sass_compare: error: $*" >&2; exit 1; }

here="$(cd "$(dirname "$0")/.." && pwd)"
out="" build="$here/build" head_dim=128 tri_block_n=64 tri_stages=3
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --out|--build|--head-dim|--triton-block-n|--triton-stages)
      [ $# -ge 2 ] && [ -n "$2" ] || bad "$1 needs a value"
      case "$1" in
        --out) out="$2" ;;
        --build) build="$2" ;;
        --head-dim) head_dim="$2" ;;
        --triton-block-n) tri_block_n="$2" ;;
        --triton-stages) tri_stages="$2" ;;
      esac
      shift 2 ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
case "$head_dim" in 64|128) ;; *) bad "--head-dim: must be 64 or 128, got '$head_dim'" ;; esac
case "$tri_block_n" in 64|128) ;; *) bad "--triton-block-n: must be 64 or 128, got '$tri_block_n'" ;; esac
case "$tri_stages" in 1|2|3|4|5) ;; *) bad "--triton-stages: must be 1 to 5, got '$tri_stages'" ;; esac
[ -f "$build/CMakeCache.txt" ] || bad "--build: $build is no configured CMake build folder (configure it first)"
[ -x "$PY" ] || bad "no $PY (Debian's python3 3.11; the Triton $TRITON_VERSION wheel used is cp311)"
pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$pyver" = "3.11" ] || bad "$PY is Python $pyver; the pinned Triton wheel is for 3.11"
out="${out:-$build/attention-sass}"
mkdir -p "$out" || bad "--out: cannot create $out"
out="$(cd "$out" && pwd)"
ptxas="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -x "$ptxas" ] || die "no ptxas at $ptxas (set CUDA_HOME)"

# 1. Triton, project-local: .tools/triton holds only the wheel's files (no dependencies are
#    needed to compile ahead of time). Installed into a temporary folder, then renamed into place.
tri_dir="$here/.tools/triton"
if ! PYTHONPATH="$tri_dir" "$PY" -c "import sys, triton; sys.exit(triton.__version__ != '$TRITON_VERSION')" 2>/dev/null; then
  echo "attention_sass_compare: installing triton==$TRITON_VERSION into $tri_dir" >&2
  tmp="$here/.tools/triton.tmp.$$"
  rm -rf "$tmp"
  "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --target "$tmp" "triton==$TRITON_VERSION" >&2 \
    || { rm -rf "$tmp"; die "pip could not install triton==$TRITON_VERSION"; }
  rm -rf "$tri_dir" && mv "$tmp" "$tri_dir"
fi
tri_ptxas="$tri_dir/triton/backends/nvidia/bin/ptxas"

# 2. nvdisasm and cuobjdump.
bin=$("$here/scripts/cuda_tools.sh" | tail -n 1) || die "scripts/cuda_tools.sh could not install nvdisasm"

# 3. Ours: build the tool (a no-op when up to date) and compile the kernel.
if command -v flock >/dev/null; then
  flock /tmp/mgpu-build.lock nice cmake --build "$build" -j2 --target attention_sass >&2 || die "building attention_sass failed"
else
  nice cmake --build "$build" -j2 --target attention_sass >&2 || die "building attention_sass failed"
fi
"$build/tests/attention_sass" --out "$out/ours" --head-dim "$head_dim" --block-kv 128 --stages 2 >&2 \
  || die "attention_sass failed"

# 4. Triton: compile, then assemble its PTX with our ptxas; log its own ptxas run too.
TRITON_CACHE_DIR="$out/triton/triton-cache" PYTHONPATH="$tri_dir" "$PY" "$here/scripts/triton_attention_fwd.py" \
  --out "$out/triton" --head-dim "$head_dim" --block-m 128 --block-n "$tri_block_n" --num-warps 8 \
  --num-stages "$tri_stages" >&2 || die "compiling the Triton kernel failed"
"$ptxas" -arch=sm_90a -O3 -v "$out/triton/triton_attention.ptx" -o "$out/triton/triton_attention.cubin" \
  > "$out/triton/triton_attention.ptxas.log" 2>&1 || die "ptxas failed on Triton's PTX (see $out/triton/triton_attention.ptxas.log)"
# The flags Triton's make_cubin passes (-lineinfo -v --gpu-name), for its log; the cubin itself is Triton's.
"$tri_ptxas" -lineinfo -v --gpu-name=sm_90a "$out/triton/triton_attention.ptx" -o "$out/triton/own-ptxas-check.cubin" \
  > "$out/triton/triton_attention.triton.ptxas.log" 2>&1 || die "Triton's bundled ptxas failed"
rm -f "$out/triton/own-ptxas-check.cubin"

# 5. Count.
tri_ver=$("$tri_ptxas" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
our_ver=$("$ptxas" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
{
  echo "# Attention main loop SASS: ours vs Triton $TRITON_VERSION (sm_90a, head_dim $head_dim, bf16, non-causal)"
  echo
  echo "- **ours**: build_attention_sm90, block_kv 128, 2 K/V stages, 2 consumer warpgroups x 64 rows + 1 TMA producer warpgroup (384 threads); ptxas $our_ver -O3."
  echo "- **Triton**: scripts/triton_attention_fwd.py, BLOCK_M 128, BLOCK_N $tri_block_n, 8 warps (2 warpgroups x 64 rows), num_stages $tri_stages (cp.async pipelining); its PTX assembled by the same ptxas $our_ver -O3."
  echo "- **Triton (own ptxas)**: the cubin triton.compile made with its bundled ptxas $tri_ver (-lineinfo)."
  echo "- Counts: static SASS instructions in the main loop (innermost loop holding HGMMAs), which every compute warp issues once per iteration; \"/64 keys\" scales by 64 / keys-per-iteration, i.e. instructions per compute warp per 64 keys x 128 query rows (both CTAs give 128 rows to 8 compute warps). Ours' producer warpgroup runs its own loop (\"other loops\" below), not counted in the table."
  echo
  "$PY" "$here/scripts/attention_sass_count.py" --nvdisasm "$bin/nvdisasm" --cuobjdump "$bin/cuobjdump" \
    --head-dim "$head_dim" --keep-sass "$out" \
    --kernel "ours=$out/ours/attention.cubin,$out/ours/attention.assembler.log" \
    --kernel "Triton=$out/triton/triton_attention.cubin,$out/triton/triton_attention.ptxas.log" \
    --kernel "Triton (own ptxas)=$out/triton/triton_attention.triton.cubin,$out/triton/triton_attention.triton.ptxas.log" \
    || exit 1
} > "$out/attention-sass.md.part" || die "counting failed"
mv "$out/attention-sass.md.part" "$out/attention-sass.md"
cat "$out/attention-sass.md"
