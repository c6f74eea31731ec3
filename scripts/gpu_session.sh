#!/usr/bin/env bash
# One lease of a Hopper GPU, used in full: unpack the bundle (scripts/bundle.sh), then run the
# gpu-labelled tests, `bench matmul` against cuBLASLt and a short measured tuning run, each
# step bounded by its own timeout so that one hung kernel cannot eat the lease.
#   scripts/gpu_session.sh [OUTDIR] [STEP...]    steps: tests bench tune sanitize ragged assembler tiles ab profile models splitk lease attention pack (default: tests bench tune)
# sanitize: compute-sanitizer's memcheck and racecheck over the gpu tests' kernels; ragged: 40
# random configs measured and verified at a shape ragged in M, N and K (f16 -> f32, B as N x K);
# assembler: two configs at 4096^3 assembled by nvJitLink (setmaxnreg dropped) and by ptxas
# (kept), alternately, twice each (A B A B), so the spread of one version is seen beside the gap;
# tiles: the default config beside the 192-register accumulators setmaxnreg made valid, at 4096^3;
# ab: each .bundle/bin/mgpu-tune-BASE (the same harness built with an older kernel builder, see
# the README under "scripts/bundle.sh --tests gpu") beside the bundle's own mgpu-tune, alternately (A B A B), for
# two configs at 4096^3 and the same two at 8192x8192x512 (where the epilogue is a large share),
# or the lines of AB_CONFIGS;
# profile: Nsight Compute (ncu, clocks left alone) over one launch each of the default config and
# its 2-CTA clusters along M and N at 4096^3: OUTDIR/ncu-*.ncu-rep, their details and raw pages
# as text beside them (ncu-*.details.txt, ncu-*.raw.csv).
# models: the shapes models run (the decode baseline): the default config beside cuBLASLt at each
# llama3-8b projection (QKV, output, gate+up, down, lm_head; B as N x K) for M = 1, 16, 32, 64, 128
# (decode) and 2048, 8192 (prefill), decode first, one OUTDIR/models/bench-MxNxK.json each
# (MODELS_SECONDS bounds the whole sweep, 200 by default), then random configs measured and
# verified at three decode shapes (MODELS_TRIALS per shape, 25 by default) into OUTDIR/lease.db.
# splitk: split-K and stream-K at decode shapes where few tiles meet a long K (M = 1
# and 16 against 4096 x 14336, 4096 x 4096, 6144 x 4096; B as N x K): the swap_ab data-parallel
# kernel (16 x 64 tiles, 6 stages), the same split 4 and 8 ways, and stream-K, each beside
# cuBLASLt, alternately (A B C D A B C D), one OUTDIR/splitk/bench-TAG-MxNxK-REP.json each
# (SPLITK_SECONDS bounds it, 300 by default; SPLITK_SHAPES replaces the shapes, "M N K" per line).
# Its benches use the lease rule below (BENCH_RULE).
# lease: the decode and prefill table. Every shape of the llama3-8b suite (LEASE_M picks the Ms, decode first:
# "1 16 32 64 128 2048 8192" by default; LEASE_NK the projections, "N K" per line) is tuned with a fixed budget (LEASE_TRIALS trials, by
# default 6; LEASE_STRATEGY, by default model: the cost model's best first, warm-started from the shapes tuned
# before it; top 2 re-timed for 5 s at most) into OUTDIR/lease.db, then its winner and cuBLASLt are
# measured A B A B (two `bench --repeat 1` runs under BENCH_RULE, "--min-time 0.05 --max-time 1.5"
# by default: nvbench's 0.5 s rule costs ~7 s per measurement of a 20 us kernel). OUTDIR/lease/ holds
# each shape's tune and bench JSON and logs, OUTDIR/lease-table.md the table (scripts/lease_table.py:
# geo-mean, worst shape, HBM roofline shares). Sized for one 30-minute lease: on an H200 a decode
# shape took 44 s (27-32 s tuning 6 trials with the warm start and the re-timing, 12-18 s for the
# two benches), so 35 shapes take ~26 min; LEASE_SECONDS (1500 by default) bounds it, shapes past
# it are counted as skipped.
# attention: the attention kernel's every valid config at head dims 64/128/256, seq 512..16k (16k
# tokens, 2048 wide), causal and not, each checked at a small ragged problem then timed beside the
# cost model (mgpu-tests GpuAttention.*): OUTDIR/attention.tsv, a line per config as measured,
# OUTDIR/attention.md the best per shape (scripts/attention_table.py); ATTENTION_SECONDS bounds it
# (600 by default); then `mgpu-tune attention --device cuda` at head dim 128, seq 8192, batch 4 x
# 16 heads into OUTDIR/attention.db (ATTENTION_TUNE_SECONDS, 300); then `bench attention` of the
# serial and the intra-warpgroup-overlap schedules, A B A B, non-causal and causal, into
# OUTDIR/attention_bench.log (ATTENTION_BENCH_SECONDS, 60 each).
# pack: a kernel pack as production ships it: exported from the lease's database (OUTDIR/h100.db,
# the tune step's; tuned here at 4096^3 when there is none), built as a shared library with its
# example (cmake, else cc directly), the example run on this GPU unchanged, then mgpu-bench over
# the pack's 4096^3 entries through its C ABI beside mgpu-bench over the database's own configs,
# A B A B (OUTDIR/pack-bench*.json, OUTDIR/suite-bench*.json; both recorded in the database).
# The models, splitk and lease folders are packed into OUTDIR/NAME.tgz at the end (a lease brings
# back only a few files).
# Logs and the results database go to OUTDIR (default $OUT, else ./gpu-session); the last lines
# printed are a one-line verdict per step. Exit: 0 every step passed; 1 a step failed; 2 bad input;
# 3 no GPU here (nothing was run).
set -uo pipefail
# The header comment above is the usage: --help prints it.
usage_text() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
case "${1:-}" in
  --help|-h) usage_text; exit 0 ;;
  # An option where OUTDIR goes is a mistyped flag, not a folder to create and fill with a lease's logs.
  -*) echo "gpu_session: error: OUTDIR '$1' starts with '-': no such option (run with --help for usage)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-session}}"; shift || true
steps=("${@:-tests bench tune}"); steps=(${steps[*]})
for s in "${steps[@]}"; do
  case "$s" in tests|bench|tune|sanitize|ragged|assembler|tiles|ab|profile|models|splitk|lease|attention|pack) ;; *) echo "gpu_session: unknown step '$s' (tests bench tune sanitize ragged assembler tiles ab profile models splitk lease attention pack)" >&2; exit 2;; esac
done
command -v nvidia-smi >/dev/null || { echo "gpu_session: no NVIDIA GPU here (nvidia-smi not found): run it on a GPU machine" >&2; exit 3; }
[ -f .bundle.tar.xz ] || { echo "gpu_session: no .bundle.tar.xz here: run scripts/bundle.sh and carry it" >&2; exit 2; }
mkdir -p "$out"
[ -d .bundle ] || tar xJf .bundle.tar.xz
run=.bundle/run.sh
declare -A verdict
step() {  # step NAME SECONDS CMD...: run with a timeout, log to $out/NAME.log, remember the exit code
  local name=$1 secs=$2; shift 2
  echo "=== $name: $*" | tee -a "$out/$name.log"
  local t0=$SECONDS
  timeout --kill-after=10 "$secs" "$@" >>"$out/$name.log" 2>&1
  local rc=$?
  verdict[$name]="rc=$rc in $((SECONDS - t0)) s"
  tail -n 25 "$out/$name.log"
  return $rc
}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv; $run mgpu-tune devices; } \
  >"$out/machine.log" 2>&1
cat "$out/machine.log"
shape=(--m 4096 --n 4096 --k 4096)
read -r -a bench_rule <<<"${BENCH_RULE:---min-time 0.05 --max-time 1.5}"
# The first config of a tuning run's --json "top" list, as one line of JSON (no jq or Python needed).
top_config() { awk '/"top": \[/{t=1} t&&/"config": \{/{c=1; s="{"; next} c&&/^ *\}/{print s "}"; exit} c{gsub(/^ +/,""); s=s $0}' "$1"; }
# The ab step's problems and configs, one per line ("--mxM--nxN--kxK CONFIG"); AB_CONFIGS replaces them.
ab_default='--mx4096x--nx4096x--kx4096 {}
--mx4096x--nx4096x--kx4096 {"tile_m":64,"tile_n":128,"max_concurrent_steps":6}
--mx8192x--nx8192x--kx512 {}
--mx8192x--nx8192x--kx512 {"tile_m":64,"tile_n":128,"max_concurrent_steps":6}'
for s in "${steps[@]}"; do
  case "$s" in
    tests) step tests 300 $run mgpu-tests --gtest_filter='GpuKernels.*:*GpuMatmul*:GpuMeasure.*' --gtest_brief=0 ;;
    bench) step bench 180 $run mgpu-tune bench matmul --arch sm_90a "${shape[@]}" --repeat 50 ;;
    tune) step tune 300 $run mgpu-tune matmul --arch sm_90a "${shape[@]}" --device cuda --strategy random \
            --trials 60 --seed 1 --db "$out/h100.db" --top 10 ;;
    sanitize)
      step memcheck 200 $run compute-sanitizer --tool memcheck --error-exitcode 9 \
        .bundle/bin/mgpu-tests --gtest_filter='GpuKernels.*:*GpuMatmul*'
      step racecheck 150 $run compute-sanitizer --tool racecheck --error-exitcode 9 \
        .bundle/bin/mgpu-tests --gtest_filter='*GpuMatmul*/2:*GpuMatmul*/8' ;;
    assembler)
      for cfg in '{}' '{"epi_tile_n":32,"grid_minor_dim":"M","max_concurrent_steps":3,"tile_m":64,"tile_n":256,"wg_dimension":"N"}'; do
        for round in 1 2; do
          step "nvjitlink$round" 120 env MGPU_PTXAS=/nonexistent $run mgpu-tune bench matmul --arch sm_90a "${shape[@]}" --repeat 5 --config "$cfg"
          step "ptxas$round" 120 $run mgpu-tune bench matmul --arch sm_90a "${shape[@]}" --repeat 5 --config "$cfg"
        done
      done ;;
    tiles)
      i=0
      for cfg in '{}' '{"tile_m":128,"tile_n":192,"max_concurrent_steps":3}' \
                 '{"tile_m":192,"tile_n":128,"wg_dimension":"N","max_concurrent_steps":3}' \
                 '{"tile_m":128,"tile_n":192,"max_concurrent_steps":3,"cluster_dimension":"M"}' \
                 '{"tile_m":192,"tile_n":128,"wg_dimension":"N","max_concurrent_steps":3,"cluster_dimension":"N"}' '{}'; do
        i=$((i + 1))
        step "tiles$i" 120 $run mgpu-tune bench matmul --arch sm_90a "${shape[@]}" --repeat 5 --config "$cfg"
      done ;;
    ab)
      # Each binary runs its own workers (MGPU_TUNE_EXE) and its own compile cache, so neither
      # measures the other's kernels.
      bases=(.bundle/bin/mgpu-tune-*)
      [ -x "${bases[0]}" ] || { echo "ab: no .bundle/bin/mgpu-tune-BASE to compare with"; verdict[ab]="rc=2 no base binary"; continue; }
      i=0
      while read -r shp cfg; do
        for round in 1 2; do
          for exe in "${bases[@]}" .bundle/bin/mgpu-tune; do
            i=$((i + 1)); tag=$(basename "$exe")
            step "ab$i-$tag" 90 $run env MGPU_TUNE_EXE="$PWD/$exe" MGPU_CACHE_DIR="/tmp/cache-$tag" "$exe" bench matmul \
              --arch sm_90a ${shp//x/ } --repeat 3 --config "$cfg"
          done
        done
      done <<<"${AB_CONFIGS:-$ab_default}"
      ;;
    profile)
      # --timer events: CUPTI's activity API and ncu's profiler cannot both hold the device.
      for named in 'default {}' 'clusterM {"cluster_dimension":"M"}' 'clusterN {"cluster_dimension":"N"}'; do
        tag=${named%% *} cfg=${named#* }
        step "ncu-$tag" 170 $run ncu --clock-control none --target-processes all -k 'regex:^matmul$' \
          --launch-skip 3 --launch-count 1 --set full -f -o "$out/ncu-$tag" \
          .bundle/bin/mgpu-tune bench matmul --arch sm_90a "${shape[@]}" --repeat 1 --timer events --config "$cfg"
        ncu -i "$out/ncu-$tag.ncu-rep" --page details >"$out/ncu-$tag.details.txt" 2>&1
        ncu -i "$out/ncu-$tag.ncu-rep" --page raw --csv >"$out/ncu-$tag.raw.csv" 2>&1
      done ;;
    models)
      mkdir -p "$out/models"
      t0=$SECONDS failed=0 done=0 skipped=0
      for m in 1 16 32 64 128 2048 8192; do
        for nk in "6144 4096" "4096 4096" "28672 4096" "4096 14336" "128256 4096"; do
          set -- $nk
          if (( SECONDS - t0 > ${MODELS_SECONDS:-200} )); then skipped=$((skipped + 1)); continue; fi
          f="$out/models/bench-${m}x$1x$2"
          timeout --kill-after=5 60 $run mgpu-tune bench matmul --arch sm_90a --m "$m" --n "$1" --k "$2" --layout nk \
            --repeat 3 --json >"$f.json" 2>"$f.log" && done=$((done + 1)) || failed=$((failed + 1))
          grep -h -E '"(median_ms|cublas_ms|percent_of_cublas)"' "$f.json" | tr -d ' \n'; echo " ${m}x$1x$2"
        done
      done
      verdict[models-bench]="rc=$((failed > 0)) $done measured, $failed failed, $skipped past the time bound, in $((SECONDS - t0)) s"
      printf '%s\n' 16,6144,4096,bf16,bf16,nk 16,28672,4096,bf16,bf16,nk 16,4096,14336,bf16,bf16,nk >"$out/decode.csv"
      step models-tune 240 $run mgpu-tune matmul --arch sm_90a --shapes "$out/decode.csv" --device cuda --strategy random \
        --trials "${MODELS_TRIALS:-25}" --seed 3 --db "$out/lease.db" --top 3 ;;
    splitk)
      mkdir -p "$out/splitk"
      t0=$SECONDS failed=0 done=0 skipped=0
      swap='"swap_ab":"yes","tile_m":16,"tile_n":64,"wg_dimension":"N","max_concurrent_steps":6'
      while read -r shp; do
        [ -n "$shp" ] || continue
        set -- $shp
        for r in 1 2; do
          for named in "swap {$swap}" "split4 {$swap,\"schedule\":\"split_k\",\"split_k\":4}" \
                       "split8 {$swap,\"schedule\":\"split_k\",\"split_k\":8}" \
                       "stream {$swap,\"schedule\":\"stream_k\"}"; do
            tag=${named%% *} cfg=${named#* }
            if (( SECONDS - t0 > ${SPLITK_SECONDS:-300} )); then skipped=$((skipped + 1)); continue; fi
            f="$out/splitk/bench-$tag-$1x$2x$3-$r"
            timeout --kill-after=5 60 $run mgpu-tune bench matmul --arch sm_90a --m "$1" --n "$2" --k "$3" --layout nk \
              --config "$cfg" --repeat 1 "${bench_rule[@]}" --json </dev/null >"$f.json" 2>"$f.log" && done=$((done + 1)) || failed=$((failed + 1))
            grep -h -E '"(median_ms|cublas_ms|percent_of_cublas)"' "$f.json" | tr -d ' \n'; echo " $tag $1x$2x$3"
          done
        done
      done <<<"${SPLITK_SHAPES:-1 4096 14336
16 4096 14336
1 4096 4096
1 6144 4096}"
      verdict[splitk]="rc=$((failed > 0)) $done measured, $failed failed, $skipped past the time bound, in $((SECONDS - t0)) s" ;;
    attention)
      t0=$SECONDS
      MGPU_ATTENTION_SWEEP="$out/attention.tsv" timeout --kill-after=10 "${ATTENTION_SECONDS:-600}" $run mgpu-tests \
        --gtest_filter='GpuAttention.*' --gtest_output="xml:$out/attention.xml" >"$out/attention.log" 2>&1
      rc=$?
      python3 scripts/attention_table.py "$out/attention.tsv" >"$out/attention.md" 2>>"$out/attention.log" || rc=1
      # The same kernel tuned by the command users run: each config proven on the virtual device
      # at its classes, checked on the GPU at them, then timed at head dim 128, seq 8192.
      timeout --kill-after=10 "${ATTENTION_TUNE_SECONDS:-300}" $run mgpu-tune attention --arch sm_90a --batch 4 \
        --heads 16 --seq-q 8192 --head-dim 128 --device cuda --db "$out/attention.db" >"$out/attention_tune.log" 2>&1 || rc=1
      # Which consumer schedule the default should be: the two, A B A B, at the goal problem
      # (head dim 128, seq 8192, non-causal, then causal), by `bench attention`.
      for causal in "" --causal; do
        for sched in serial intra_wg_overlap serial intra_wg_overlap; do
          timeout --kill-after=10 "${ATTENTION_BENCH_SECONDS:-60}" $run mgpu-tune bench attention --arch sm_90a \
            --batch 4 --heads 16 --seq-q 8192 --head-dim 128 $causal --repeat 3 --min-time 0.1 \
            --config "{\"consumer_schedule\":\"$sched\"}" >>"$out/attention_bench.log" 2>&1 || rc=1
        done
      done
      verdict[attention]="rc=$rc $(($(wc -l <"$out/attention.tsv" 2>/dev/null || echo 1) - 1)) configs measured, then tuned ($(grep -m1 ' 1\. ' "$out/attention_tune.log" | sed 's/^ *//')) in $((SECONDS - t0)) s" ;;
    lease)
      mkdir -p "$out/lease"
      t0=$SECONDS failed=0 done=0 skipped=0
      for m in ${LEASE_M:-1 16 32 64 128 2048 8192}; do
        while read -r nk; do
          [ -n "$nk" ] || continue
          set -- $nk
          if (( SECONDS - t0 > ${LEASE_SECONDS:-1500} )); then skipped=$((skipped + 1)); continue; fi
          f="$out/lease/${m}x$1x$2" s0=$SECONDS
          timeout --kill-after=10 150 $run mgpu-tune matmul --arch sm_90a --m "$m" --n "$1" --k "$2" --layout nk \
            --device cuda --strategy "${LEASE_STRATEGY:-model}" --trials "${LEASE_TRIALS:-6}" --warm-start 3 --top 2 --confirm-budget 5 \
            --seed 5 --db "$out/lease.db" --json </dev/null >"$f.tune.json" 2>"$f.tune.log"
          rc=$? cfg=$(top_config "$f.tune.json") s1=$SECONDS
          if [ -z "$cfg" ]; then failed=$((failed + 1)); echo "lease ${m}x$1x$2: tuning gave no winner (rc=$rc)"; continue; fi
          for r in 1 2; do  # winner, cuBLASLt, winner, cuBLASLt
            timeout --kill-after=5 60 $run mgpu-tune bench matmul --arch sm_90a --m "$m" --n "$1" --k "$2" --layout nk \
              --config "$cfg" --repeat 1 "${bench_rule[@]}" --json </dev/null >"$f.bench-$r.json" 2>"$f.bench-$r.log" || rc=$?
          done
          [ "$rc" = 0 ] && done=$((done + 1)) || failed=$((failed + 1))
          echo "lease ${m}x$1x$2: rc=$rc, tuned in $((s1 - s0)) s, benched in $((SECONDS - s1)) s: $cfg"
          grep -h -E '"(median_ms|cublas_ms)"' "$f.bench-1.json" "$f.bench-2.json" 2>/dev/null | tr -d ' \n'; echo
        done <<<"${LEASE_NK:-6144 4096
4096 4096
28672 4096
4096 14336
128256 4096}"
      done
      python3 scripts/lease_table.py "$out/lease" >"$out/lease-table.md" 2>&1 && cat "$out/lease-table.md"
      verdict[lease]="rc=$((failed > 0)) $done tuned and benched, $failed failed, $skipped past the time bound, in $((SECONDS - t0)) s" ;;
    pack)
      t0=$SECONDS rc=0 db="$out/h100.db" lib="$(realpath -m "$out/pack-build/libmgpu_pack.so")"
      [ -f "$db" ] || step pack-tune 300 $run mgpu-tune matmul --arch sm_90a "${shape[@]}" --device cuda --strategy random \
        --trials 20 --seed 1 --db "$db" --top 3 || rc=1
      step pack-export 300 $run mgpu-tune export --db "$db" --format pack -o "$out/pack" || rc=1
      if command -v cmake >/dev/null; then
        step pack-build 300 bash -c "cmake -S '$out/pack' -B '$out/pack-build' -DBUILD_SHARED_LIBS=ON -DMGPU_PACK_EXAMPLE=ON \
          -DCMAKE_BUILD_TYPE=Release && cmake --build '$out/pack-build' -j" || rc=1
      else  # the pack needs only a C compiler and the CUDA headers
        step pack-build 300 bash -c "mkdir -p '$out/pack-build' && cc -O2 -std=c11 -shared -fPIC -I'$out/pack/include' \
          -I'$out/pack/src' -I/usr/local/cuda/include '$out'/pack/src/*.c '$out'/pack/src/kernels/*.c -o '$lib' -ldl -lpthread &&
          c++ -std=c++17 -O2 -I'$out/pack/include' -I/usr/local/cuda/include '$out/pack/example/mgpu_pack_example.cpp' \
          '$lib' -ldl -o '$out/pack-build/mgpu_pack_example'" || rc=1
      fi
      step pack-example 300 "$out/pack-build/mgpu_pack_example" || rc=1
      for r in 1 2; do
        step "pack-bench$r" 300 $run mgpu-bench --pack "$lib" --db "$db" --benchmark_filter=m4096_n4096_k4096 \
          --benchmark_out="$out/pack-bench$r.json" || rc=1
        step "suite-bench$r" 300 $run mgpu-bench --db "$db" --benchmark_filter=m4096_n4096_k4096 \
          --benchmark_out="$out/suite-bench$r.json" || rc=1
      done
      verdict[pack]="rc=$rc in $((SECONDS - t0)) s" ;;
    ragged) step ragged 200 $run mgpu-tune matmul --arch sm_90a --m 1000 --n 776 --k 264 --dtype f16 --out-dtype f32 \
              --layout nk --device cuda --strategy random --trials 40 --seed 2 --db "$out/h100.db" --top 3 ;;
  esac
done
# A lease brings back only a few files: each step's folder of per-shape files leaves as one archive.
for d in models splitk lease; do
  [ -d "$out/$d" ] && tar czf "$out/$d.tgz" -C "$out" "$d" && rm -rf "${out:?}/$d"
done
echo "--- verdicts"
rc=0
for s in "${!verdict[@]}"; do
  echo "$s: ${verdict[$s]}"
  [[ "${verdict[$s]}" == rc=0* ]] || rc=1
done
exit $rc
