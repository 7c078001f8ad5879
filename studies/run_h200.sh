#!/usr/bin/env bash
# Runs libtune's GPU tests and benches on the NVIDIA machine, from binaries built here with the
# `gpu` preset and packed into .gpu/bins.tar.xz (see bench/RESULTS.md for how). Logs go to $OUT.
#   studies/run_h200.sh tests|bench|vkbench|racing|study|record [PARTIAL.tsv]|record-and-racing|clock|
#                       clock-settle|final|final-quality|stability|slots|verify
# The phases named for a figure's section in bench/RESULTS.md re-run the call that measured it
# (each comment names that call's date and commit).
set -uo pipefail
phase=${1:-tests}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" / ; done
mkdir -p /opt/fallback && for f in .gpu/fallback/*.deb; do dpkg -x "$f" /opt/fallback; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}:/opt/fallback/usr/lib/x86_64-linux-gnu
export TUNE_CACHE_DIR=/tmp/tune-cache
B=/tmp/bins
mkdir -p $B && tar -xJf .gpu/bins.tar.xz -C $B
run() {  # run <log> <timeout s> <cmd...>
  local log=$1 t=$2; shift 2
  echo "### $(date -u +%FT%TZ) $*" | tee -a "$OUT/$log"
  local start=$SECONDS
  timeout "$t" "$@" >>"$OUT/$log" 2>&1
  echo "### exit $? after $((SECONDS - start)) s" | tee -a "$OUT/$log"
}
clocks_log() {  # clocks_log <interval ms>: nvidia-smi clocks to $OUT/clocks.csv; sets $smi
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw \
    --format=csv -lms "$1" >"$OUT/clocks.csv" 2>&1 &
  smi=$!
}
vulkan_cases() {  # each vulkan_tests case in its own process: a skip _Exit(77)s the binary
  $B/vulkan_tests --list-test-cases --no-version | grep -v "^\[doctest\]\|^=\+$" |
    while IFS= read -r name; do
      [ -n "$name" ] || continue
      run tests.log 90 $B/vulkan_tests --no-version --test-case="${name//,/*}"
    done
}
final_suite() {  # the 2026-11-29 final-code check: GPU suites, bench_vulkan, fp16 tuning x3
  vulkan_cases
  run tests.log 90 $B/conformance_vulkan
  run tests.log 60 $B/conformance_cuda
  run tests.log 150 $B/cuda_gpu_tests --test-case-exclude="*illegal address*"
  run tests.log 40 $B/cuda_gpu_tests --test-case="*illegal address*"
  TUNE_PRINT_AUTOTUNING=1 TUNE_BENCH_LARGE=1 run bench_vulkan.log 100 $B/bench_vulkan
  for i in 1 2 3; do
    CUDA_CACHE_DISABLE=1 run study.log 40 $B/tuning_study racing --device cuda --large \
      --kernel matmul_f16 --out /tmp/study$i
  done
}
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv
  ldd $B/tune | grep -E "not found|sqlite|vulkan|nvrtc"
} >"$OUT/machine.txt" 2>&1
case $phase in
  vkprobe)
    ls -la /usr/local/nvidia/share/vulkan/icd.d/ /usr/share/vulkan/icd.d/ /etc/vulkan/icd.d/ 2>&1
    cat /usr/local/nvidia/share/vulkan/icd.d/*.json 2>&1
    VK_LOADER_DEBUG=error,warn,driver $B/tune devices 2>&1 | tail -30
    ;;
  tests)
    run tests.log 30 $B/tune devices
    # The illegal-address case poisons the process's CUDA context: it runs alone, last.
    run tests.log 180 $B/cuda_gpu_tests --test-case-exclude="*illegal address*"
    run tests.log 60 $B/cuda_gpu_tests --test-case="*illegal address*"
    run tests.log 150 $B/conformance_cuda
    run tests.log 120 $B/conformance_vulkan
    run tests.log 60 $B/vulkan_tests
    run tests.log 60 $B/cuda_tests
    run bench_core.log 120 $B/bench_core --benchmark_min_time=0.3 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
    ;;
  bench)
    run bench_cuda.log 330 $B/bench_cuda
    ;;
  vkbench)
    TUNE_BENCH_LARGE=1 run bench_vulkan.log 200 $B/bench_vulkan
    ;;
  racing)
    run study.log 200 $B/tuning_study racing --device cuda --large --out "$OUT"
    ;;
  record)
    # Issue 7: every config of the wide fp32 matmul space (1329 accepted on sm_90) at 2048^3,
    # verified once and timed (15 ms of reps), one TSV row each, flushed as it comes, to $OUT.
    # Estimated ~2 min: NVRTC ~0.7 s of CPU per variant on 15 threads, timing overlapped;
    # --max-seconds stops cleanly well inside the 600 s call. A cut-short run goes on from the
    # fetched file: bash studies/run_h200.sh record path/to/that.tsv (inside the working tree).
    TSV=replay_cuda_matmul_f32_2048x2048x2048_wide.tsv
    jobs=$(nproc); [ "$jobs" -gt 16 ] && jobs=16
    resume=()
    if [ -n "${2:-}" ]; then cp "$2" "$OUT/$TSV" && resume=(--resume "$OUT/$TSV"); fi
    run record.log 540 $B/tuning_study record --device cuda --kernel matmul_f32 --space wide \
      --size 2048x2048x2048 --max-seconds 420 --jobs "$jobs" --out "$OUT" ${resume[@]+"${resume[@]}"}
    ;;
  record-and-racing)
    # The H200 call of 2026-11-29 recorded in 1a4130b (device time left: ~7 min): the Vulkan
    # bandwidth diagnosis, the template-kernel GPU test, core overhead, fp16 tuning time (driver
    # compute cache off, so cold is cold), then the wide recording with whatever time is left of a
    # 270 s wall. Its first step, `vk_bandwidth_probe --ref-gbps 4183` beside clocks_log 250, ran a
    # raw Vulkan replica of the backend that was removed once clock_study replaced it (last in
    # commit 15279ce: git show 15279ce:bench/vk_bandwidth_probe.cpp).
    run tests.log 40 $B/cuda_gpu_tests --test-case="*template*,*CUBIN cache*"
    run bench.log 30 $B/bench_core --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true
    CUDA_CACHE_DISABLE=1 run study.log 60 $B/tuning_study racing --device cuda --large \
      --kernel matmul_f16 --out /tmp/study
    left=$((270 - SECONDS)); [ $left -lt 20 ] && left=20
    run record.log $((left + 15)) $B/tuning_study record --device cuda --kernel matmul_f32 \
      --space wide --size 2048x2048x2048 --max-seconds $left --jobs 16 --out "$OUT"
    ;;
  clock)
    # The first H200 call of 2026-11-29 recorded in 3f567cb: how the NVIDIA Vulkan driver's SM clock
    # follows libtune's load (clock_study beside an nvidia-smi clocks log; CUDA for comparison), the
    # template-kernel GPU test, the Vulkan suites, bench_vulkan with clock settling, fp16 tuning
    # time cold.
    clocks_log 100
    run clock.md 120 $B/clock_study --device vulkan --out "$OUT/clock_vulkan.tsv"
    run clock.md 90 $B/clock_study --device cuda --idle-s 2 --out "$OUT/clock_cuda.tsv"
    run tests.log 60 $B/cuda_gpu_tests --test-case="*template*"
    run tests.log 120 $B/conformance_vulkan
    run tests.log 60 $B/vulkan_tests
    TUNE_PRINT_AUTOTUNING=1 TUNE_BENCH_LARGE=1 run bench_vulkan.log 220 $B/bench_vulkan
    CUDA_CACHE_DISABLE=1 run study.log 90 $B/tuning_study racing --device cuda --large \
      --kernel matmul_f16 --out /tmp/study
    kill $smi 2>/dev/null
    ;;
  clock-settle)
    # The second H200 call of 2026-11-29 recorded in 3f567cb: Vulkan clock settling over a window
    # (clock_study settle phase, bench_vulkan), every vulkan_tests case in its own process (a skip
    # ends a doctest binary), fp16 tuning time again, the selection-quality study with the 1% racing
    # tolerance, and the CUDA conformance suite after the autotuner's completion-order change.
    clocks_log 100
    run clock.md 60 $B/clock_study --device vulkan --phases settle --out /tmp/clock_vulkan.tsv
    VK_LOADER_DEBUG=error,warn vulkan_cases
    TUNE_PRINT_AUTOTUNING=1 TUNE_BENCH_LARGE=1 run bench_vulkan.log 100 $B/bench_vulkan
    kill $smi 2>/dev/null
    CUDA_CACHE_DISABLE=1 run study.log 40 $B/tuning_study racing --device cuda --large \
      --kernel matmul_f16 --out /tmp/study
    run quality.log 210 $B/tuning_study quality --large --device cuda --out /tmp/q
    cp /tmp/q/*.tsv "$OUT/" 2>/dev/null
    run tests.log 100 $B/conformance_cuda
    ;;
  final)
    # The third H200 call of 2026-11-29 recorded in 3f567cb: the final code. Every vulkan_tests case
    # in its own process (the drivers now stay loaded across devices), both conformance suites, the
    # CUDA GPU tests, bench_vulkan, and the fp16 tuning time three times (racing now overlaps
    # compiles).
    final_suite
    ;;
  final-quality)
    # The H200 call of 2026-11-29 recorded in 4ff1b17: the same as `final` after the review fixes to
    # racing (rounds back to back while compiles run, re-settling after a pause), plus the
    # selection-quality study.
    final_suite
    run quality.log 150 $B/tuning_study quality --large --device cuda --out /tmp/q
    cp /tmp/q/*.tsv "$OUT/" 2>/dev/null
    ;;
  stability)
    # The wrong-pick figures (H200, 2026-12-03 at 7053a08, 71dd9f9 and e80058f): both fp16 matmuls,
    # 10 tunings per demo size after a 1 s heat, the end-of-key judge and one right after each run;
    # then the cold floor. Each under scripts/with-clocks.sh; the summaries are copied flat and the
    # sub-folders removed, because `run` returns only so many files. About 420 s, plus 20 s for the
    # cold floor.
    for kernel in matmul_f16 matmul_wgmma_f16; do
      rm -rf "$TUNE_CACHE_DIR"
      # $OUT/$kernel.log: the JSON between its first '{' and last '}', then the clock summary.
      run "$kernel.log" 330 scripts/with-clocks.sh "$OUT/$kernel" -- $B/tune-lab stability \
        --device cuda --kernel $kernel --runs 10 --quality --heat-ms 1000 --json \
        --judge-each-pairs 2
      cp "$OUT/$kernel/clocks-summary.txt" "$OUT/${kernel}_clocks.txt"
    done
    rm -rf "$TUNE_CACHE_DIR"
    CUDA_CACHE_DISABLE=1 run cold.log 150 scripts/with-clocks.sh "$OUT/cold" -- \
      $B/bench_cuda --cold-floor=5
    cp "$OUT/cold/clocks-summary.txt" "$OUT/cold_clocks.txt"
    rm -rf "$OUT"/*/
    # Picks, cost, tuner vs judge and the places table (eight files in $OUT with this one).
    python3 studies/stability_summary.py "$OUT/matmul_f16.log" "$OUT/matmul_wgmma_f16.log" \
      >"$OUT/summary.txt" 2>&1
    ;;
  verify)
    # Verification cost (H200, 2026-12-03, be32494's bench): the cost of verification at 256 MiB of
    # output, 40 configurations, on both backends of the H200 (CUDA, and Vulkan on NVIDIA's driver),
    # each under scripts/with-clocks.sh, five rounds each. About 40 s per backend.
    run verify_cuda.log 150 scripts/with-clocks.sh "$OUT/verify_cuda" -- $B/bench_cuda \
      --verify-cost --verify-rounds=5
    run verify_vulkan.log 300 scripts/with-clocks.sh "$OUT/verify_vulkan" -- \
      $B/bench_vulkan --verify-cost=256 --verify-rounds=5
    for b in cuda vulkan; do cp "$OUT/verify_$b/clocks-summary.txt" "$OUT/verify_${b}_clocks.txt"; done
    rm -rf "$OUT"/*/
    ;;
  slots)
    # The slots study (H200, 2026-12-03, recorded in 47c5b77): does a turn's place in a round of
    # sustained turns bias its time? tuning_study slots on matmul_f16 4096^3 (about 4 min), with the
    # clock summary and a fast clock/power/throttle-reason log beside it (every 20 ms,
    # xz-compressed).
    q=timestamp,clocks.sm,power.draw,clocks_event_reasons.active,temperature.gpu
    nvidia-smi --query-gpu=$q --format=csv,nounits -lms 20 >"$OUT/smi.csv" 2>&1 &
    smi=$!
    run slots.log 420 scripts/with-clocks.sh "$OUT/slots" -- $B/tuning_study slots \
      --device cuda --kernel matmul_f16 --size 4096x4096x4096 --rounds 8 --out "$OUT"
    kill $smi; wait $smi 2>/dev/null
    xz -9 "$OUT/smi.csv"
    cp "$OUT/slots/clocks-summary.txt" "$OUT/slots_clocks.txt"
    rm -rf "$OUT"/*/
    ;;
  study)
    run study.log 200 $B/tuning_study racing --device cuda --large --out "$OUT"
    run study.log 240 $B/tuning_study quality --large --device cuda --out "$OUT"
    run study.log 200 $B/tuning_study record --large --device cuda --kernel matmul_f32 --space wide --long-ms 10 --out "$OUT"
    ;;
esac
exit 0
