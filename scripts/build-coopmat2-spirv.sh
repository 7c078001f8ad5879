#!/usr/bin/env bash
# Rebuilds kernels/vulkan/matmul_f16_coopmat2.spv from matmul_f16_coopmat2.comp, and its stamp
# (.spv.txt: the SHA-256 of the source and of the module, the compiler, the flags), which a test
# compares with both files, so that an edit of either without a rebuild fails.
#
# GL_NV_cooperative_matrix2 needs glslang 15 and SPIR-V 1.6; Debian 12 ships glslang 11.13.
# This script takes glslang and spirv-val from Debian 13 (trixie), extracted (not installed)
# into a cache folder with the C and C++ runtimes they need, and runs them through trixie's own
# dynamic loader, so nothing on the machine changes. Needs curl, xz and dpkg-deb, and
# deb.debian.org (or DEBIAN_MIRROR).
#   scripts/build-coopmat2-spirv.sh          # rebuild the module and its stamp
#   TRIXIE_DIR=/tmp/trixie scripts/...       # where the extracted tools live (default below)
set -euo pipefail
cd "$(dirname "$0")/.."

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
dir=${TRIXIE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/libtune/trixie}
root=$dir/root
packages=(glslang-tools spirv-tools libc6 libstdc++6 libgcc-s1)

fetch_tools() {
  mkdir -p "$dir"
  [[ -s $dir/Packages.xz ]] ||
    curl -sSfo "$dir/Packages.xz" "$mirror/dists/trixie/main/binary-amd64/Packages.xz"
  for p in "${packages[@]}"; do
    local file
    file=$(xz -dc "$dir/Packages.xz" |
      awk -v want="$p" '/^Package: /{p=$2} /^Filename: /{if (p == want) print $2}' | head -1)
    [[ -n $file ]] || { echo "no package $p in trixie's index" >&2; exit 1; }
    [[ -s $dir/$(basename "$file") ]] || curl -sSfo "$dir/$(basename "$file")" "$mirror/$file"
    dpkg-deb -x "$dir/$(basename "$file")" "$root"
  done
}

[[ -x $root/usr/bin/glslang && -x $root/usr/bin/spirv-val ]] || fetch_tools
run() {  # a trixie program through trixie's loader and libraries
  local lib=$root/usr/lib/x86_64-linux-gnu
  "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$root/usr/bin/$1" "${@:2}"
}

src=kernels/vulkan/matmul_f16_coopmat2.comp
out=kernels/vulkan/matmul_f16_coopmat2.spv
flags=(-V --target-env vulkan1.3)
run glslang "${flags[@]}" -o "$out" "$src" >/dev/null
run spirv-val --target-env vulkan1.3 "$out"
version=$(run glslang --version | awk -F': ' '/^Glslang Version/{print $2; exit}')
{
  echo "source-sha256 $(sha256sum "$src" | cut -d' ' -f1)"
  echo "spirv-sha256 $(sha256sum "$out" | cut -d' ' -f1)"
  echo "compiler glslang $version (Debian trixie glslang-tools)"
  echo "flags ${flags[*]}"
} >"$out.txt"
echo "$out: $(stat -c %s "$out") bytes, spirv-val ok; $(head -1 "$out.txt")"
