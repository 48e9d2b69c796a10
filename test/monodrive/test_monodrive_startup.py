"""monodrive_client and monodrive_sim as a new user starts them: the installed executables
(subprocess), their parameter services, values refused at start, and the names of docs/monodrive.md."""
import re
import socket
from pathlib import Path

import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters, ListParameters

from conftest import assert_refused_at_start, free_tcp_port, one_line_naming, wait_until
from conftest import run_installed as run
from ros_sim_bridge.tools import suite
from ros_sim_bridge.tools.launcher import NodeProcess, config_file
from ros_sim_bridge.tools.session import call_service

REPO = Path(__file__).resolve().parents[2]


# -- parameter services (ros2 param list / get / set) ------------------------------------------

def call_soon(node, srv_type, name, request, within=30.0):
    """``call_service``, again while no answer came (a reply can be lost when it is sent just
    as the client is discovered: rmw "failed to send response"); None after ``within`` s."""
    import time
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        answer = call_service(node, srv_type, name, request, timeout=5.0)
        if answer is not None:
            return answer
    return None


def test_parameter_services_answer_and_header_size_takes_an_integer(ros):
    """The node's own command-service list once replaced rclpy's ``Node._services``, which
    holds the parameter services: ``ros2 param list/get`` got no answer.  Started as a user
    would, with ``-p header_size:=12`` (an integer to rcl; once a crash)."""
    with NodeProcess('monodrive_client', parameters={'port': free_tcp_port(),
                                                     'header_size': 12}) as node:
        listed = call_soon(ros.probe, ListParameters, '/monodrive_client/list_parameters',
                           ListParameters.Request())
        assert node.running()
        assert listed is not None, 'no answer from /monodrive_client/list_parameters'
        assert {'port', 'header_size', 'annotation_depth'} <= set(listed.result.names)
        got = call_soon(ros.probe, GetParameters, '/monodrive_client/get_parameters',
                        GetParameters.Request(names=['header_size', 'port']))
        assert got is not None, 'no answer from /monodrive_client/get_parameters'
        size, _ = got.values
        assert (size.type, size.integer_value) == (ParameterType.PARAMETER_INTEGER, 12)
        assert node.stop() == 0


# -- values refused at start -------------------------------------------------------------------

@pytest.mark.parametrize('name, value', [
    ('port', 70000), ('port', 0), ('max_sample_bytes', 0), ('max_message_bytes', -1),
    ('annotation_depth', -1.0), ('annotation_depth', 0.0), ('lidar_max_packets', 0),
    ('min_backoff', 0.0), ('header_size', 13), ('header_size', '8'),
    ('header_byte_order', 'middle')])
def test_a_bad_value_stops_the_client_with_one_line(name, value):
    assert_refused_at_start('monodrive_client', name, value)


# -- monodrive_sim arguments -------------------------------------------------------------------

@pytest.mark.parametrize('args, option', [
    (['--port', '70000'], '--port'), (['--port', '-1'], '--port'),
    (['--rate', '0'], '--rate'), (['--rate', 'nan'], '--rate'),
    (['--duration', '-1'], '--duration'), (['--duration', 'inf'], '--duration')])
def test_sim_bad_argument_is_one_line_and_exit_2(args, option):
    code, out = run('monodrive_sim', *args, timeout=30)
    assert code == 2, out
    one_line_naming(out, 'monodrive_sim', option)


def test_sim_busy_port_is_named_and_exit_1():
    with socket.socket() as holder:
        holder.bind(('127.0.0.1', 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        code, out = run('monodrive_sim', '--port', str(port), '--duration', '5', timeout=30)
    assert code == 1, out
    one_line_naming(out, 'monodrive_sim', f'127.0.0.1:{port}', '--port', 'in use')


# -- docs/monodrive.md ------------------------------------------------------------------------

def page_intro() -> str:
    """docs/monodrive.md up to its first section: the example commands."""
    text = (REPO / 'docs' / 'monodrive.md').read_text()
    return text[:text.index('\n## ')]


def test_readme_names_are_those_of_the_launched_node(ros):
    """Every service, topic and node the monoDrive page's commands name after
    ``ros2 launch ros_sim_bridge monodrive.launch.py`` exists on the node started as that launch
    file starts it (its namespace and parameter overrides from the same plan)."""
    section = page_intro()
    block = section[section.index('```bash'):]
    block = block[:block.index('```', 7)]
    services = re.findall(r'ros2 service call (\S+)', block)
    topics = re.findall(r'ros2 topic pub -1 (\S+)', block)
    nodes = re.findall(r'ros2 param get (\S+)', block)
    assert services and topics and nodes
    plan = suite.plan(suite.SOURCES['monodrive'], {}, config_file('monodrive.yaml'))
    assert plan.namespace == 'monodrive'
    overrides = {**plan.overrides, 'port': free_tcp_port(), 'connect_sensors': False}
    with NodeProcess('monodrive_client', params_file=plan.params_files, parameters=overrides,
                     namespace=plan.namespace) as node:
        probe = ros.probe

        def present():
            have = {n for n, _ in probe.get_service_names_and_types()}
            subs = {n for n, _ in probe.get_topic_names_and_types()}
            full = {f'{ns.rstrip("/")}/{n}' for n, ns in probe.get_node_names_and_namespaces()}
            return set(services) <= have and set(topics) <= subs and set(nodes) <= full
        assert wait_until(present, 30.0), (services, topics, nodes)
        assert node.stop() == 0


def test_readme_pip_paragraph_lists_every_console_script():
    """``pip install .`` installs each console script of setup.py; docs/development.md says
    which."""
    scripts = re.findall(r"'(\w+) = ros_sim_bridge\.[\w.]+:\w+'",
                         (REPO / 'setup.py').read_text())
    assert len(scripts) >= 5
    text = (REPO / 'docs' / 'development.md').read_text()
    paragraph = text[text.index('**setup.py.**'):]
    paragraph = paragraph[:paragraph.index('\n\n')]
    missing = [s for s in scripts if f'`{s}`' not in paragraph]
    assert not missing, f'docs/development.md setup.py paragraph does not name {missing}'


@pytest.mark.parametrize('fov', [0.0, 180.0])
def test_a_camera_fov_outside_0_to_180_degrees_stops_the_client_naming_it(tmp_path, fov):
    """A sensor list whose camera has ``fov`` 0 or 180 (no pinhole camera): exit 1, one FATAL
    line naming the sensor's port and ``fov``, before anything is published."""
    import json
    from ros_sim_bridge.tools.launcher import ros_args
    path = tmp_path / 'sensors.json'
    path.write_text(json.dumps([{'type': 'Camera', 'listen_port': 45999, 'fov': fov,
                                 'stream_dimensions': {'x': 64, 'y': 48}}]))
    code, out = run('monodrive_client', *ros_args(parameters={
        'port': free_tcp_port(), 'sensors_config': str(path), 'simulator_config': '',
        'weather_config': '', 'vehicle_config': ''}))
    assert code == 1, out
    line = one_line_naming(out, 'cannot start', 'fov')
    assert 'FATAL' in line and '45999' in line and '180' in line, line
