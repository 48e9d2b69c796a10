#!/usr/bin/env bash
# with-venv.sh VENV CMD...: run CMD with the PyPI ROS 2 venv acting as the ROS install
# (what `source /opt/ros/<distro>/setup.bash` does on a robot), plus this package's colcon
# install space when it exists (its executables on PATH, as `ros2 run` finds them). DDS stays
# on this machine unless the caller says otherwise.
# ROS_DISTRO is the venv's (VENV/ros_distro, written by setup-venv.sh), as a ROS install's
# setup.bash sets it; an install space built against another distro (INSTALL_BASE/ros_distro)
# is refused rather than mixed in.
set -eo pipefail
# Ctrl-C / SIGTERM before CMD runs (while the install space is sourced): a clean stop, exit 0
# as CMD itself does; exec hands CMD the default dispositions back.
trap 'exit 0' INT TERM
venv=$(cd "$1" && pwd); shift
here=$(cd "$(dirname "$0")/.." && pwd)
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"
export CMAKE_PREFIX_PATH="$venv${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export AMENT_PREFIX_PATH="$venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
if [ -f "$venv/ros_distro" ]; then
  ROS_DISTRO=$(cat "$venv/ros_distro")
  export ROS_DISTRO
fi
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
install_base=${INSTALL_BASE:-install}
case "$install_base" in /*) ;; *) install_base="$here/$install_base" ;; esac
if [ -f "$install_base/ros_distro" ] && [ -n "${ROS_DISTRO:-}" ] &&
   [ "$(cat "$install_base/ros_distro")" != "$ROS_DISTRO" ]; then
  echo "error: $install_base was built for ROS 2 $(cat "$install_base/ros_distro"), but $venv is" \
       "$ROS_DISTRO (build for it, e.g. make build ROS_DISTRO=$ROS_DISTRO)" >&2
  exit 2
fi
if [ -f "$install_base/setup.bash" ]; then
  # shellcheck disable=SC1091
  COLCON_TRACE= source "$install_base/setup.bash"
  # the package's executables by name (ibeo_idc, rflysim_truth, …): what `ros2 run` would find
  export PATH="$install_base/ros_sim_bridge/lib/ros_sim_bridge:$PATH"
fi
if [ $# -eq 0 ]; then
  echo "usage: $0 VENV CMD [ARG...]   (e.g. $0 $venv ibeo_idc --help)" >&2
  exit 2
fi
exec "$@"
