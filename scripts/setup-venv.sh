#!/usr/bin/env bash
# setup-venv.sh VENV [DISTRO]: creates the virtual environment that stands in for a ROS 2
# install on a machine without ROS: the PyPI ROS 2 wheels of DISTRO (kilted, the default, or
# jazzy; scripts/requirements-DISTRO.txt), colcon, cmake, and the tf2_msgs interface package
# built from compat/tf2_msgs (PyPI has none). The venv records its distro in VENV/ros_distro
# (scripts/with-venv.sh exports it as ROS_DISTRO) and the requirements it was installed from in
# VENV/requirements.txt: a ready venv whose copy matches is reused as it is. Run by `make setup`
# (and so by build/test/demo).
set -euo pipefail
venv=${1:-.venv}
distro=${2:-kilted}
here=$(cd "$(dirname "$0")/.." && pwd)
log="$venv.setup.log"
reqs="$here/scripts/requirements-$distro.txt"
if [ ! -f "$reqs" ]; then
  echo "error: no requirements for ROS_DISTRO=$distro (have: $(cd "$here/scripts" &&
        ls requirements-*.txt | sed 's/requirements-//; s/\.txt//' | tr '\n' ' '))" >&2
  exit 1
fi
if [ -f "$venv/ros_distro" ] && [ "$(cat "$venv/ros_distro")" != "$distro" ]; then
  echo "error: $venv holds ROS 2 $(cat "$venv/ros_distro"), not $distro: one venv per distro" >&2
  echo "       (make ROS_DISTRO=$distro uses its own; or remove $venv)" >&2
  exit 1
fi

say() { printf '[setup] %s\n' "$*"; }

# 1. A CPython 3.11: the only version the PyPI ROS 2 wheels are built for.
py=""
for cand in "${PYTHON:-}" python3.11 python3; do
  [ -n "$cand" ] || continue
  if command -v "$cand" >/dev/null 2>&1 &&
     "$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    py=$(command -v "$cand"); break
  fi
done
if [ -z "$py" ]; then
  echo "error: the ROS 2 wheels on PyPI need CPython 3.11 (python3.11 not found)." >&2
  echo "       Debian 12 ships it as python3; elsewhere install python3.11 and python3.11-venv," >&2
  echo "       or build with colcon against your ROS 2 install instead (see README)." >&2
  exit 1
fi

# 2. A C compiler and Python headers: the message build compiles C extension modules.
need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$inc/Python.h" ] || need_apt+=(python3-dev)
"$py" -c 'import ensurepip, venv' 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing system packages: ${need_apt[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# 3. The venv and the wheels.
if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv with $py"
  "$py" -m venv "$venv"
fi
if [ -f "$venv/.ready" ] && cmp -s "$reqs" "$venv/requirements.txt"; then
  say "reusing $venv (ROS 2 $distro, installed from the same $(basename "$reqs"))"
else
  rm -f "$venv/.ready"
  say "installing ROS 2 $distro wheels, colcon and cmake into $venv (about a minute, log: $log)"
  if ! "$venv/bin/python" -m pip install -q -r "$reqs" >"$log" 2>&1; then
    grep -v 'is ignored: it is neither' "$log" | tail -20 >&2
    echo "error: pip install failed (full log: $log)" >&2
    exit 1
  fi
fi
printf '%s\n' "$distro" >"$venv/ros_distro"

# 4. The wheels' exported CMake files name the wheel build host's Python and numpy include
#    directories; point them at this venv's (a contained fix inside the venv).
numpy_inc=$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')
{ grep -rlF /opt/python/cp311-cp311/ "$venv/share" --include='*.cmake' 2>/dev/null || true; } |
while read -r f; do
  sed -i -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$numpy_inc#g" \
         -e "s#/opt/python/cp311-cp311/include/python3.11#$inc#g" "$f"
done

# 5. tf2_msgs is not on PyPI: build the same interface (compat/tf2_msgs) into the venv only.
if ! "$venv/bin/python" -c 'import tf2_msgs.msg' >/dev/null 2>&1; then
  say "building tf2_msgs/msg/TFMessage into $venv (compat/tf2_msgs)"
  # the venv alone: the project's install space (perhaps of another distro) plays no part
  export INSTALL_BASE="$venv/no-install-space"
  "$here/scripts/with-venv.sh" "$venv" cmake -S "$here/compat/tf2_msgs" -B "$venv/build/tf2_msgs" \
      -DCMAKE_INSTALL_PREFIX="$(cd "$venv" && pwd)" -DCMAKE_BUILD_TYPE=Release \
      -DPython3_EXECUTABLE="$(cd "$venv" && pwd)/bin/python" -DBUILD_TESTING=OFF >>"$log" 2>&1 &&
  "$here/scripts/with-venv.sh" "$venv" cmake --build "$venv/build/tf2_msgs" -j2 >>"$log" 2>&1 &&
  "$here/scripts/with-venv.sh" "$venv" cmake --install "$venv/build/tf2_msgs" >>"$log" 2>&1 || {
    tail -30 "$log" >&2; echo "error: tf2_msgs build failed (log: $log)" >&2; exit 1; }
fi
cp "$reqs" "$venv/requirements.txt"
touch "$venv/.ready"
say "ready: $venv"
