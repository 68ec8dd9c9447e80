# Sourced by the GPU machine's scripts (tools/gpu-check.sh and the others). That machine has no
# muParser: the Debian packages carried in .mu/ (`apt-get download libmuparser2v5
# libmuparser-dev`) are unpacked into /opt/mu; its library directory, then CUDA's, go on
# LD_LIBRARY_PATH.
# gpu_cmake_opts holds the options every build there is configured with: no VTK (the machine has
# none), muParser from /opt/mu, sm_90, the benchmarks, Release.
if [ -d .mu ]; then
  mkdir -p /opt/mu
  for f in .mu/*.deb; do dpkg -x "$f" /opt/mu; done
fi
export LD_LIBRARY_PATH="/opt/mu/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
gpu_cmake_opts=(-DRBFPDE_WITH_VTK=OFF -DCMAKE_PREFIX_PATH=/opt/mu/usr -DCMAKE_CUDA_ARCHITECTURES=90
                -DRBFPDE_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE=Release)
