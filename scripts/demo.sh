#!/usr/bin/env bash
# The main job on a fresh machine: installs what the demo needs (scripts/install-deps.sh --demo),
# builds libtune (every backend whose toolchain is found) and the tune program only (preset
# `demo`: no tests, benches, studies, Python or MPI), and runs `tune demo` on the default
# device: the GPU if there is one, Mesa's lavapipe otherwise. Extra arguments go to `tune demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --demo
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake --preset demo >/dev/null
cmake --build --preset demo
exec build/demo/tools/tune demo "$@"
