#!/usr/bin/env bash
# Builds and tests libtune the way CI does: installs dependencies, then runs every workflow
# preset (every backend together, core alone, each backend alone, ASan+UBSan), the install +
# find_package consumer test (inside CTest) and a bounded fuzz run. Fails on any failure.
#   scripts/test.sh            # everything
#   scripts/test.sh core vulkan  # only these workflow presets
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

# Disk: the presets build with line tables only (-g1), and on CI (or with TUNE_TEST_PRUNE=1)
# each preset's build folder is removed once its tests pass, so the run needs the largest
# preset's folder at a time, not the sum of all six. Say so up front when the disk is short,
# rather than only through the compiler's "No space left on device" halfway in.
prune=${TUNE_TEST_PRUNE:-${CI:+1}}
need_gib=$([[ $prune == 1 ]] && echo 4 || echo 10)  # folders 0.7-2.7 GB each, 9 GB together
avail_gib=$(df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }')
if [[ $# -eq 0 && ! -d build/asan && ${avail_gib:-99} -lt $((need_gib + 2)) ]]; then
  echo "warning: ${avail_gib} GiB free under $PWD; a full run from a fresh clone needs about ${need_gib} GiB" >&2
fi

if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  # The presets compile the same core sources with the same flags in different build folders:
  # paths relative to the checkout and the build folder left out of the hash let each preset
  # reuse what an earlier one compiled (on a fresh CI machine, core/vulkan/cuda/hip after all).
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
fi
# Vulkan tests run on Mesa's lavapipe unless a device is asked for.
export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
# Tests must never write the user's tuning cache.
export TUNE_CACHE_DIR=${TUNE_CACHE_DIR:-$(mktemp -d)}
# Files tests keep for CI to upload (the HTML report and its headless-Chromium screenshot).
export TUNE_TEST_ARTIFACTS=${TUNE_TEST_ARTIFACTS:-$PWD/build/test-artifacts}

# Formatting: every C++/CUDA source must match the repo's .clang-format.
if command -v clang-format >/dev/null; then
  git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' | xargs clang-format --dry-run -Werror
  echo "=== clang-format: clean"
fi

presets=("$@")
[[ ${#presets[@]} -eq 0 ]] && presets=(all core vulkan cuda hip asan)

for p in "${presets[@]}"; do
  echo "=== workflow preset: $p"
  start=$SECONDS
  if [[ $p == asan ]]; then
    # Mesa and the Vulkan loader keep allocations alive until exit: leak checks off there.
    # Lavapipe allocates and frees its device memory on the host heap, tens of MB a buffer: with
    # ASan's default 256 MB quarantine every allocation maps fresh pages (`tune demo --kernel
    # vector_add --quick`: 50 s against 11 s with 16 MB, 2026-12-06). A freed block still stays
    # poisoned until 16 MB more have been freed after it.
    ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=16 cmake --workflow --preset "$p"
  else
    cmake --workflow --preset "$p"
  fi
  echo "=== $p: $((SECONDS - start)) s, build/$p $(du -sh "build/$p" | cut -f1)"
  if [[ $prune == 1 ]]; then
    rm -rf "build/$p"
  fi
done

# A bounded libFuzzer run over the parsers of stored and imported data (config text, JSON).
echo "=== fuzz: fuzz_cache_import, ${TUNE_FUZZ_SECONDS:-30} s"
cmake -S . -B build/fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DTUNE_BACKENDS= -DTUNE_FUZZ=ON -DTUNE_WERROR=ON -DTUNE_BUILD_TESTS=OFF -DTUNE_BUILD_BENCH=OFF \
  -DTUNE_BUILD_STUDIES=OFF -DTUNE_BUILD_TOOLS=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build build/fuzz --target fuzz_cache_import
build/fuzz/fuzz/fuzz_cache_import -max_total_time="${TUNE_FUZZ_SECONDS:-30}" -rss_limit_mb=2048 \
  -print_final_stats=0 -dict=fuzz/cache_import.dict build/fuzz/fuzz/corpus fuzz/corpus/cache_import \
  2>&1 | tail -n 3
echo "=== fuzz: no crash"
