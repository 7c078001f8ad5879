#!/usr/bin/env bash
# The main job on a fresh machine: installs what the demo needs (scripts/install-deps.sh --demo),
# builds libtune and the tune program only (preset `demo`: no tests, benches, studies, Python or
# MPI) with the backends this machine can run (Vulkan always, on Mesa's lavapipe if nothing
# else; CUDA where an NVIDIA GPU and CUDA are present; HIP where an AMD GPU and hipcc are), and
# runs `tune demo` on the default device: the GPU if there is one, lavapipe otherwise. Extra
# arguments go to `tune demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --demo
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
backends="vulkan"
if { [[ -e /dev/nvidia0 ]] || nvidia-smi -L >/dev/null 2>&1; } && [[ -d /usr/local/cuda ]]; then
  backends="cuda;$backends"
fi
if [[ -e /dev/kfd ]] && command -v hipcc >/dev/null; then
  backends="hip;$backends"
fi
cmake --preset demo -DTUNE_BACKENDS="$backends" >/dev/null
cmake --build --preset demo
exec build/demo/tools/tune demo "$@"
