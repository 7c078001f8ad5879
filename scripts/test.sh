#!/usr/bin/env bash
# Builds and tests libtune the way CI does: installs dependencies, then runs every workflow
# preset (every backend together, core alone, each backend alone, ASan+UBSan), the install +
# find_package consumer test (inside CTest) and a bounded fuzz run. Fails on any failure.
#   scripts/test.sh            # everything
#   scripts/test.sh core vulkan  # only these workflow presets
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
# Vulkan tests run on Mesa's lavapipe unless a device is asked for.
export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
# Tests must never write the user's tuning cache.
export TUNE_CACHE_DIR=${TUNE_CACHE_DIR:-$(mktemp -d)}

presets=("$@")
[[ ${#presets[@]} -eq 0 ]] && presets=(all core vulkan cuda hip asan)

for p in "${presets[@]}"; do
  echo "=== workflow preset: $p"
  start=$SECONDS
  if [[ $p == asan ]]; then
    # Mesa and the Vulkan loader keep allocations alive until exit: leak checks off there.
    ASAN_OPTIONS=detect_leaks=0 cmake --workflow --preset "$p"
  else
    cmake --workflow --preset "$p"
  fi
  echo "=== $p: $((SECONDS - start)) s"
done

if [[ -x fuzz/run.sh ]]; then
  echo "=== fuzz (bounded)"
  fuzz/run.sh
fi
