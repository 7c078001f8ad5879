#!/usr/bin/env bash
# 128x192 tiles, lean: f16 configurations checked against the CPU (TMA shapes, TMA store),
# then the f16 space screened at 3001x4104x2056 with cuBLAS interleaved.
# From the repository root, with .gpu/bin: stripped bench_cuda and cuda_gpu_tests built with
# the patch applied, .gpu/lib: Debian's libraries.
cd "$(dirname "$0")/../.."
set -u
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
export TUNE_CACHE_DIR=$(mktemp -d)
SECONDS=0
timeout 80 .gpu/bin/cuda_gpu_tests -tc="*correct at TMA shapes: fp16*,*TMA-store*fp16*" > $O/tests.txt 2>&1; echo "tests rc $? in $SECONDS s"
grep -v "^matmul_wgmma" $O/tests.txt | tail -4
SECONDS=0
timeout 75 scripts/with-clocks.sh $O/clk -- .gpu/bin/bench_cuda --matmul-hopper --types=f16 --no-mma-sync --no-tuning-time --screen --shapes=3001x4104x2056 > $O/bench.txt 2>&1
echo "bench rc $? in $SECONDS s"; grep -E "^f16 " $O/bench.txt; grep "BN=192\|CLUSTER" $O/bench.txt | sort -k4 -nr | head -8; tail -4 $O/clk/clocks-summary.txt
