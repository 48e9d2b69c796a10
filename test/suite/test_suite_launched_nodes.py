"""Launch files started for real (issue #26): each launch file is evaluated as ``ros2 launch``
would (the stand-ins of test_suite_launch.py, no ``launch`` on PyPI), then every node it builds
is started as launch_ros starts it: its params files in order, its overrides as one more file,
its namespace. What is checked is what users meet: topic names, ports, /tf_static.

Layering: config/<source>.yaml first, the user's ``params_file`` on top (only the keys it
holds change), then the launch arguments given.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from conftest import free_tcp_port, free_udp_ports, wait_until
from test_suite_launch import _install_stand_ins, evaluate, node_parameters

PACKAGE = 'ros_sim_bridge'


@pytest.fixture
def stand_ins(monkeypatch):
    _install_stand_ins(monkeypatch)


@pytest.fixture
def launched(tmp_path):
    """``start(nodes)``: this package's nodes of an evaluated launch file, as processes."""
    from ros_sim_bridge.tools.launcher import NodeProcess
    processes = []

    def start(nodes):
        for k, node in enumerate(n for n in nodes if n.kwargs['package'] == PACKAGE):
            files, overrides = node_parameters(node)
            if overrides:      # launch_ros writes a parameter dict to a params file too
                path = tmp_path / f'overrides_{k}.yaml'
                path.write_text(yaml.safe_dump(
                    {f'/**/{node.kwargs["name"]}': {'ros__parameters': overrides}}))
                files.append(str(path))
            args = node.kwargs.get('arguments', [])
            if files:          # a driver: its --ros-args (log level) come from ros_args here
                processes.append(NodeProcess(node.kwargs['executable'], params_file=files,
                                             namespace=node.kwargs['namespace'],
                                             log_level=args[args.index('--log-level') + 1]))
            else:              # an emulator: its command line
                processes.append(NodeProcess(node.kwargs['executable'], args=args))
        return processes

    yield start
    for p in processes:
        p.stop()


def user_file(tmp_path, node_name: str, params: dict) -> str:
    path = tmp_path / f'my_{node_name}.yaml'
    path.write_text(yaml.safe_dump({f'/**/{node_name}': {'ros__parameters': params}}))
    return str(path)


def topics(ros, prefix: str) -> set[str]:
    return {t for t, _ in ros.probe.get_topic_names_and_types() if t.startswith(prefix)}


def test_morai_user_file_with_one_key_keeps_topics_and_sim_ports(stand_ins, launched, ros,
                                                                  tmp_path):
    """A file holding only ``object_labels: true``: topics stay /morai/ego_status (not
    /morai/morai/…), sim:=true still moves Ego Status to 9091, and the labels are there."""
    from visualization_msgs.msg import Marker, MarkerArray
    from ros_sim_bridge.msg import MoraiEgoVehicleStatus
    mine = user_file(tmp_path, 'morai_bridge', {'object_labels': True})
    _, nodes = evaluate('morai.launch.py', {'params_file': mine, 'sim': 'true'})
    args = next(n for n in nodes if n.kwargs['executable'] == 'morai_sim').kwargs['arguments']
    assert args[args.index('--ego-status-port') + 1] == '9091'
    launched(nodes)
    ego = ros.collect(MoraiEgoVehicleStatus, '/morai/ego_status', matched=False)
    markers = ros.collect(MarkerArray, '/morai/object_markers', matched=False)
    ego.wait_for(1, timeout=30.0)            # the emulator sends to 9091, the node hears it
    labelled = markers.wait_for(1, timeout=15.0, where=lambda m: any(
        mk.type == Marker.TEXT_VIEW_FACING for mk in m.markers))
    assert labelled
    assert not topics(ros, '/morai/morai')


def test_rflysim_user_file_with_ids_and_port_only(stand_ins, launched, ros, tmp_path):
    """``copter_ids`` and ``base_port`` alone: topics /rflysim/vehicle_<id>/… (the package's
    topic_prefix still meets the namespace), the emulator plays those vehicles there."""
    from nav_msgs.msg import Odometry
    base = free_udp_ports(4, 2)
    mine = user_file(tmp_path, 'rflysim_truth', {'copter_ids': [2, 3], 'base_port': base})
    _, nodes = evaluate('rflysim.launch.py', {'params_file': mine, 'sim': 'true'})

    def publishing(prefix: str) -> set[str]:
        return {t for t in topics(ros, prefix) if ros.probe.count_publishers(t)}
    # what is asked below is this node's: the nodes of earlier tests (vehicle 1 by default)
    # have left the graph first
    assert wait_until(lambda: not publishing('/rflysim/'), 30.0), publishing('/rflysim/')
    launched(nodes)
    for vid in (2, 3):
        ros.collect(Odometry, f'/rflysim/vehicle_{vid}/odom', matched=False).wait_for(
            1, timeout=30.0)
    assert not topics(ros, '/rflysim/rflysim')
    assert '/rflysim/vehicle_1/odom' not in publishing('/rflysim/')


def test_ros2_run_without_params_file_names_topics_as_launch_does(ros):
    """Node defaults and config/rflysim.yaml agree: ``ros2 run`` (no params file, no
    namespace) publishes the topic names the launch file's node does."""
    from ros_sim_bridge.tools.launcher import NodeProcess
    with NodeProcess('rflysim_truth', parameters={'base_port': free_udp_ports(1)}):
        assert wait_until(lambda: '/rflysim/vehicle_1/odom' in topics(ros, '/rflysim/'), 30.0)


def test_ibeo_sim_places_the_scanner_in_map_on_tf_static(stand_ins, launched, ros):
    """sim:=true: the node itself publishes map → laser, latched (no tf2_ros process)."""
    from tf2_msgs.msg import TFMessage
    from ros_sim_bridge.ros.qos import LATCHED
    _, nodes = evaluate('ibeo.launch.py', {'sim': 'true', 'port': str(free_tcp_port())})
    assert {n.kwargs['package'] for n in nodes} == {PACKAGE}
    launched(nodes)
    tf = ros.collect(TFMessage, '/tf_static', LATCHED, matched=False)
    got = tf.wait_for(1, timeout=30.0, where=lambda m: any(
        t.header.frame_id == 'map' and t.child_frame_id == 'laser' for t in m.transforms))
    mount = next(t for t in got[0].transforms if t.child_frame_id == 'laser')
    assert mount.transform.rotation.w == 1.0 and mount.transform.translation.x == 0.0


@pytest.mark.parametrize('source, executable', [('ibeo', 'ibeo_lux'), ('ibeo_ecu', 'ibeo_ecu')])
def test_ibeo_ros2_run_without_params_file_names_topics_as_launch_does(stand_ins, launched, ros,
                                                                       source, executable):
    """The installed node started without a params file (as ``ros2 run``: root namespace,
    the node's defaults; only the port moved to a free one) and the node of
    ``<source>.launch.py`` (namespace /<source>, config/<source>.yaml) publish the same topic
    names: /ibeo/points … for ibeo_lux, /ibeo_ecu/points … for ibeo_ecu, never twice the
    prefix."""
    from ros_sim_bridge.tools.launcher import NodeProcess
    infra = {'/diagnostics', '/rosout', '/parameter_events', '/tf_static'}

    def node_topics(namespace: str) -> set[str]:
        try:
            return {t for t, _ in ros.probe.get_publisher_names_and_types_by_node(
                executable, namespace)} - infra
        except Exception:      # the node is not in the graph (yet)
            return set()

    _, nodes = evaluate(f'{source}.launch.py', {'port': str(free_tcp_port())})
    with NodeProcess(executable, parameters={'port': free_tcp_port()}, quiet=True) as proc:
        launched(nodes)

        def alike() -> bool:
            run, launch = node_topics('/'), node_topics(f'/{source}')
            return f'/{source}/points' in run and run == launch
        assert wait_until(alike, 30.0), (node_topics('/'), node_topics(f'/{source}'))
        time.sleep(1.0)                 # late discoveries, if any, would show below
        run, launch = node_topics('/'), node_topics(f'/{source}')
        assert run == launch
        assert {f'/{source}/points', f'/{source}/objects/markers'} <= run
        assert not any(t.startswith(f'/{source}/{source}/') for t in run)
        assert proc.running()


def test_ibeo_empty_topic_prefix_as_docs_ibeo_writes_it(ros):
    """docs/ibeo.md: ``-p "topic_prefix:=''"`` (what a shell passes for it) names the topics
    after the namespace alone; ``-p topic_prefix:=`` is refused by ROS argument parsing."""
    import re
    from ros_sim_bridge.tools.launcher import NodeProcess
    page = (Path(__file__).resolve().parents[2] / 'docs' / 'ibeo.md').read_text()
    shown = re.search(r'`-p "(topic_prefix:=[^"]*)"`', page).group(1)
    args = ['--ros-args', '-r', '__ns:=/scanner', '-p', shown, '-p', f'port:={free_tcp_port()}']
    with NodeProcess('ibeo_lux', args=args, quiet=True) as proc:
        assert wait_until(lambda: '/scanner/points' in topics(ros, '/scanner/'), 30.0), \
            (topics(ros, '/scanner/'), proc.last_lines())
        assert not any(t.startswith('/scanner/ibeo') for t in topics(ros, '/scanner/'))
