#!/usr/bin/env bash
# Rebuilds the two precompiled modules of kernels/vulkan/matmul_coopmat2.comp:
# matmul_f16_coopmat2.spv and matmul_bf16_coopmat2.spv (the same source with TUNE_BF16), each
# with its stamp (<module>.spv.txt: the SHA-256 of the source and of the module, the compiler,
# the flags), which a test compares with the files, so that an edit without a rebuild fails.
#
# GL_NV_cooperative_matrix2 needs glslang 15 and SPIR-V 1.6; Debian 12 ships glslang 11.13. The
# f16 module is built with Debian 13 (trixie)'s glslang 15.2; GL_EXT_bfloat16 needs glslang 16,
# which Debian 14 (forky, testing) has: the bf16 module is built with forky's glslang and
# spirv-tools on trixie's C and C++ runtimes. The tools are extracted (not installed) into cache
# folders and run through trixie's dynamic loader, so nothing on the machine changes. Forky
# moves: its stamp records the glslang version that built the module. Needs curl, xz and
# dpkg-deb, and deb.debian.org (or DEBIAN_MIRROR).
#   scripts/build-coopmat2-spirv.sh          # rebuild both modules and their stamps
#   TRIXIE_DIR=... FORKY_DIR=... scripts/... # where the extracted tools live (defaults below)
set -euo pipefail
cd "$(dirname "$0")/.."

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/libtune
trixie=${TRIXIE_DIR:-$cache/trixie}
forky=${FORKY_DIR:-$cache/forky}
libs=usr/lib/x86_64-linux-gnu

# fetch DIR SUITE PACKAGE...: downloads each package of Debian's SUITE into DIR (once) and
# extracts it into DIR/root.
fetch() {
  local dir=$1 suite=$2
  shift 2
  mkdir -p "$dir"
  # The index afresh each time: a suite moves (forky every day), and an old index names
  # packages the mirror no longer has.
  curl -sSfo "$dir/Packages.xz" "$mirror/dists/$suite/main/binary-amd64/Packages.xz"
  for p in "$@"; do
    local file
    file=$(xz -dc "$dir/Packages.xz" |
      awk -v want="$p" '/^Package: /{p=$2} /^Filename: /{if (p == want) print $2}' | head -1)
    [[ -n $file ]] || { echo "no package $p in $suite's index" >&2; exit 1; }
    [[ -s $dir/$(basename "$file") ]] || curl -sSfo "$dir/$(basename "$file")" "$mirror/$file"
    dpkg-deb -x "$dir/$(basename "$file")" "$dir/root"
  done
}

tools_ready() { [[ -x $1/root/usr/bin/glslang && -x $1/root/usr/bin/spirv-val ]]; }
tools_ready "$trixie" || fetch "$trixie" trixie glslang-tools spirv-tools libc6 libstdc++6 libgcc-s1
tools_ready "$forky" || fetch "$forky" forky glslang-tools spirv-tools

# run DIR PROGRAM ARGS...: DIR's program through trixie's loader, DIR's libraries first.
run() {
  local dir=$1
  "$trixie/root/$libs/ld-linux-x86-64.so.2" --library-path "$dir/root/$libs:$trixie/root/$libs" \
    "$dir/root/usr/bin/$2" "${@:3}"
}

src=kernels/vulkan/matmul_coopmat2.comp

# build MODULE DIR SUITE [FLAG...]: kernels/vulkan/MODULE.spv and its stamp, with DIR's tools.
build() {
  local out=kernels/vulkan/$1.spv dir=$2 suite=$3
  local flags=(-V --target-env vulkan1.3 "${@:4}")
  run "$dir" glslang "${flags[@]}" -o "$out" "$src" >/dev/null
  run "$dir" spirv-val --target-env vulkan1.3 "$out"
  local version
  version=$(run "$dir" glslang --version | awk -F': ' '/^Glslang Version/{print $2; exit}')
  {
    echo "source-sha256 $(sha256sum "$src" | cut -d' ' -f1)"
    echo "spirv-sha256 $(sha256sum "$out" | cut -d' ' -f1)"
    echo "compiler glslang $version (Debian $suite glslang-tools)"
    echo "flags ${flags[*]}"
  } >"$out.txt"
  echo "$out: $(stat -c %s "$out") bytes, spirv-val ok; $(head -1 "$out.txt")"
}

build matmul_f16_coopmat2 "$trixie" trixie
build matmul_bf16_coopmat2 "$forky" forky -DTUNE_BF16
