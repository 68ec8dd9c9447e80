# Sourced by the GPU machine's scripts (tools/gpu-check.sh and the others): that machine has no
# muParser, so the Debian packages carried in .mu/ (`apt-get download libmuparser2v5
# libmuparser-dev`) are unpacked into /opt/mu, the prefix the builds are configured with
# (-DCMAKE_PREFIX_PATH=/opt/mu/usr), and its library directory goes on LD_LIBRARY_PATH.
if [ -d .mu ]; then
  mkdir -p /opt/mu
  for f in .mu/*.deb; do dpkg -x "$f" /opt/mu; done
fi
export LD_LIBRARY_PATH="/opt/mu/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
