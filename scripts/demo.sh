#!/usr/bin/env bash
# The main job on a fresh machine: installs dependencies, builds libtune (every backend whose
# toolchain is found) and runs `tune demo` on the default device: the GPU if there is one,
# Mesa's lavapipe otherwise. Extra arguments go to `tune demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake --preset default >/dev/null
cmake --build --preset default
exec build/default/tools/tune demo "$@"
