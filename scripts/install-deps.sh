#!/usr/bin/env bash
# Installs libtune's build and test dependencies from Debian's packages. Idempotent and quiet:
# only missing packages are installed. CUDA 13 is expected at /usr/local/cuda (not from apt).
#   scripts/install-deps.sh          # everything: every backend, tests, docs, MPI, Python
#   scripts/install-deps.sh --demo   # only what scripts/demo.sh builds: the library with its
#                                    # Vulkan backend (Mesa's lavapipe as the CPU device) and tune
set -euo pipefail

# The library, the tune program and the Vulkan backend on lavapipe.
demo_packages=(
  cmake ninja-build g++ ccache libsqlite3-dev nlohmann-json3-dev libcli11-dev
  libvulkan-dev mesa-vulkan-drivers libshaderc-dev glslang-dev spirv-tools
)
packages=(
  cmake ninja-build g++ clang clang-format ccache libclang-rt-14-dev
  doctest-dev libbenchmark-dev libsqlite3-dev sqlite3 nlohmann-json3-dev libcli11-dev libfmt-dev
  libvulkan-dev mesa-vulkan-drivers glslc libshaderc-dev glslang-dev spirv-tools
  vulkan-validationlayers
  python3-jsonschema  # tests only: T4 export checked against its JSON schema
  zlib1g-dev  # studies only: search_eval reads the benchmark hub's gzip T4 files
  chromium  # tests only: the HTML report rendered headless (DOM and screenshot checked)
  libpq-dev  # the optional tune::postgresql component (TUNE_POSTGRESQL)
  postgresql  # tests only: the postgres label starts a server of its own (initdb + pg_ctl)
  mkdocs  # the user guide's static site (scripts/docs.sh, CTest docs.site)
  libopenmpi-dev openmpi-bin  # for the optional tune::mpi component and its tests
  python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest  # the Python module
)
# HIP (Debian's ROCm 5.2) without the recommends (~350 MB instead of ~650 MB).
hip_packages=(hipcc libamdhip64-dev)

missing() {
  local out=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
  done
  echo "${out[@]:-}"
}

if [[ ${1:-} == --demo ]]; then
  packages=("${demo_packages[@]}")
  hip_packages=()
elif [[ $# -gt 0 ]]; then
  echo "install-deps: unknown argument '$1' (expected --demo or nothing)" >&2
  exit 2
fi

need=$(missing "${packages[@]}")
need_hip=$(missing "${hip_packages[@]}")
if [[ -n "$need" || -n "$need_hip" ]]; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "install-deps: installing:${need:+ $need}${need_hip:+ $need_hip}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  [[ -n "$need" ]] && $sudo apt-get install -y -qq $need >/dev/null
  [[ -n "$need_hip" ]] && $sudo apt-get install -y -qq --no-install-recommends $need_hip >/dev/null
fi
if [[ ! -x /usr/local/cuda/bin/nvcc && ! -f /usr/local/cuda/include/nvrtc.h ]]; then
  echo "install-deps: note: CUDA toolkit not found at /usr/local/cuda; the cuda backend is skipped" >&2
fi
echo "install-deps: ok"
