#!/usr/bin/env bash
# Installs what rbfpde needs from Debian's registry (when missing) and builds it in ./build.
# Used by README's two commands and by CI. Run as root on a fresh Debian 12 machine.
#
#   bash tools/build.sh            the rbfpde command (and the CUDA backend when nvcc is present)
#   bash tools/build.sh --tests    every target: rbfpde, the test programs and the benchmarks
#
# RBFPDE_CMAKE_ARGS adds CMake options (e.g. -DRBFPDE_NATIVE_ARCH=OFF); RBFPDE_JOBS sets the
# number of parallel compile jobs (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(--target rbfpde)
case "${1:-}" in
  "") ;;
  --tests) targets=() ;;
  *) echo "usage: bash tools/build.sh [--tests]" >&2; exit 2 ;;
esac

# libvtk9-dev conflicts with Debian's python3-paraview, which CI's ParaView stage installs (and so
# removes libvtk9-dev and python3-vtk9): installing it again here removes python3-paraview.
packages=(build-essential cmake ninja-build pkg-config libeigen3-dev libyaml-cpp-dev libvtk9-dev
          libcli11-dev libgtest-dev libmuparser-dev libplplot-dev plplot-driver-cairo
          libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "rbfpde: installing ${missing[*]}"
  # apt does not remove python3-paraview by itself to make room for libvtk9-dev: the trailing
  # '-' asks for its removal in the same transaction.
  if [[ " ${missing[*]} " == *" libvtk9-dev "* ]] &&
     dpkg-query -W -f='${Status}' python3-paraview 2>/dev/null | grep -q "install ok installed"; then
    missing+=(python3-paraview-)
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # force-unsafe-io: dpkg skips its fsync after each unpacked file, which on a fresh machine is
  # most of the install's time; an interrupted install is simply run again.
  apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
    "${missing[@]}" >/dev/null
fi

# nvcc (if installed) builds the CUDA backend too; the CPU backend is always built.
if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
# Ninja compiles the objects of every library at once (Make waits for a library before the
# objects of those that link it). A build/ configured earlier keeps its own generator.
generator=()
if [ ! -f build/CMakeCache.txt ]; then generator=(-G Ninja); fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${RBFPDE_CMAKE_ARGS:-} >/dev/null
cmake --build build "${targets[@]}" -j"${RBFPDE_JOBS:-$(nproc)}"
