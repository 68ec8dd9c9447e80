#!/usr/bin/env bash
# Installs what rbfpde needs from Debian's registry (when missing) and builds it in ./build.
# Used by README's two commands and by CI. Run as root on a fresh Debian 12 machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# libvtk9-dev conflicts with Debian's python3-paraview, which CI's ParaView stage installs (and so
# removes libvtk9-dev and python3-vtk9): installing it again here removes python3-paraview.
packages=(build-essential cmake pkg-config libeigen3-dev libyaml-cpp-dev libvtk9-dev libcli11-dev
          libgtest-dev libmuparser-dev libplplot-dev plplot-driver-cairo libopenmpi-dev openmpi-bin)
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
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# nvcc (if installed) builds the CUDA backend too; the CPU backend is always built.
if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${RBFPDE_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"${RBFPDE_JOBS:-2}"
