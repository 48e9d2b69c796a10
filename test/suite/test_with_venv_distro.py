"""Kilted and Jazzy side by side (make ... ROS_DISTRO=jazzy): each distro has its own
requirements, venv and build/install folders; the venv and the install space record their
distro (``ros_distro``), ``with-venv.sh`` exports the venv's as ROS_DISTRO (what bags are
written for) and refuses an install space built for another.
"""
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WRAPPER = ROOT / 'scripts' / 'with-venv.sh'
SETUP = ROOT / 'scripts' / 'setup-venv.sh'
#: the rclpy major version of each distro's wheels
RCLPY_MAJOR = {'jazzy': 7, 'kilted': 9}


def fake_venv(tmp_path: Path, distro: str) -> Path:
    venv = tmp_path / f'venv-{distro}'
    (venv / 'bin').mkdir(parents=True)
    (venv / 'ros_distro').write_text(f'{distro}\n')
    return venv


def plain_env(**extra) -> dict:
    """This environment without what make and with-venv.sh set, plus ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('ROS_DISTRO', 'INSTALL_BASE', 'BUILD_BASE', 'VENV', 'MAKEFLAGS',
                        'MAKELEVEL', 'MFLAGS')}
    return {**env, **extra}


def test_this_run_is_one_distro_throughout():
    """The tests' own environment: the venv's distro is ROS_DISTRO, the install space was
    built for it, and the rclpy imported is that distro's."""
    marker = Path(sys.prefix) / 'ros_distro'
    if not marker.exists():
        pytest.skip('not run from a venv made by scripts/setup-venv.sh')
    distro = marker.read_text().strip()
    assert os.environ['ROS_DISTRO'] == distro
    install = Path(os.environ.get('INSTALL_BASE', 'install'))
    install = install if install.is_absolute() else ROOT / install
    assert (install / 'ros_distro').read_text().strip() == distro
    assert int(version('ros-rclpy').split('.')[0]) == RCLPY_MAJOR[distro]


@pytest.mark.parametrize('distro', ['jazzy', 'kilted'])
def test_with_venv_exports_the_venv_distro(tmp_path, distro):
    venv = fake_venv(tmp_path, distro)
    install = tmp_path / 'install'
    install.mkdir()
    (install / 'ros_distro').write_text(f'{distro}\n')
    out = subprocess.run(['bash', str(WRAPPER), str(venv), 'sh', '-c', 'echo "$ROS_DISTRO"'],
                         env=plain_env(ROS_DISTRO='humble', INSTALL_BASE=str(install)),
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f'{distro}\n'


def test_with_venv_refuses_an_install_space_of_another_distro(tmp_path):
    venv = fake_venv(tmp_path, 'jazzy')
    install = tmp_path / 'install'
    install.mkdir()
    (install / 'ros_distro').write_text('kilted\n')
    (install / 'setup.bash').write_text(f'touch {tmp_path}/sourced\n')
    ran = tmp_path / 'ran'
    out = subprocess.run(['bash', str(WRAPPER), str(venv), 'touch', str(ran)],
                         env=plain_env(INSTALL_BASE=str(install)), capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 2
    assert 'kilted' in out.stderr and 'jazzy' in out.stderr, out.stderr
    assert not ran.exists() and not (tmp_path / 'sourced').exists()


def test_setup_refuses_a_venv_of_another_distro_and_an_unknown_distro(tmp_path):
    venv = fake_venv(tmp_path, 'kilted')
    out = subprocess.run(['bash', str(SETUP), str(venv), 'jazzy'], env=plain_env(),
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and 'kilted, not jazzy' in out.stderr, out.stderr
    assert (venv / 'ros_distro').read_text() == 'kilted\n'
    assert sorted(venv.iterdir()) == [venv / 'bin', venv / 'ros_distro']   # nothing installed
    out = subprocess.run(['bash', str(SETUP), str(tmp_path / 'new'), 'rolling'],
                         env=plain_env(), capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and 'ROS_DISTRO=rolling' in out.stderr, out.stderr
    assert 'jazzy' in out.stderr and 'kilted' in out.stderr
    assert not (tmp_path / 'new').exists()


@pytest.mark.parametrize('distro,suffix', [('kilted', ''), ('jazzy', '-jazzy')])
def test_make_keeps_each_distro_in_its_own_folders(distro, suffix):
    """What ``make clean`` / ``distclean`` would remove names each distro's own folders."""
    out = subprocess.run(['make', '--no-print-directory', '-n', 'distclean',
                          f'ROS_DISTRO={distro}'], cwd=ROOT, env=plain_env(HOME='/home/u'),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split('\n')[:2] == [
        f'rm -rf build{suffix} install{suffix} log build{suffix}.log',
        f'rm -rf /home/u/.cache/ros_sim_bridge/venv{suffix} '
        f'/home/u/.cache/ros_sim_bridge/venv{suffix}.setup.log']
    assert (ROOT / 'scripts' / f'requirements-{distro}.txt').exists()


def test_make_names_a_distro_it_has_no_requirements_for():
    out = subprocess.run(['make', '--no-print-directory', '-n', 'build', 'ROS_DISTRO=humble'],
                         cwd=ROOT, env=plain_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and out.stdout == ''
    assert 'ROS_DISTRO=humble: no scripts/requirements-humble.txt' in out.stderr, out.stderr


def test_with_venv_runs_the_package_executables_by_name_and_says_its_usage(tmp_path):
    """``with-venv.sh VENV ibeo_idc --help`` as ``ros2 run`` would find it (was: "exec:
    ibeo_idc: not found"); without a command: its usage, exit 2 (was: exit 0, nothing run)."""
    venv = fake_venv(tmp_path, 'kilted')
    install = tmp_path / 'install'
    bin_dir = install / 'ros_sim_bridge' / 'lib' / 'ros_sim_bridge'
    bin_dir.mkdir(parents=True)
    (install / 'ros_distro').write_text('kilted\n')
    (install / 'setup.bash').write_text('')
    tool = bin_dir / 'sim_bridge_probe_tool'
    tool.write_text('#!/bin/sh\necho "probe $1"\n')
    tool.chmod(0o755)
    env = plain_env(INSTALL_BASE=str(install))
    out = subprocess.run(['bash', str(WRAPPER), str(venv), 'sim_bridge_probe_tool', 'x'],
                         env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout == 'probe x\n', out.stderr
    out = subprocess.run(['bash', str(WRAPPER), str(venv)], env=env, capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 2 and 'usage' in out.stderr
