#!/usr/bin/env bash
# with-venv.sh VENV CMD...: run CMD with the PyPI ROS 2 venv acting as the ROS install
# (what `source /opt/ros/<distro>/setup.bash` does on a robot), plus this package's colcon
# install space when it exists. DDS stays on this machine unless the caller says otherwise.
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
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
install_base=${INSTALL_BASE:-install}
case "$install_base" in /*) ;; *) install_base="$here/$install_base" ;; esac
if [ -f "$install_base/setup.bash" ]; then
  # shellcheck disable=SC1091
  COLCON_TRACE= source "$install_base/setup.bash"
fi
exec "$@"
