"""Each source's page under docs/ names what its node really has.

* every parameter of the node's declaration table (``PARAMETERS`` of ``<source>/ros/node.py``,
  the table ``declare_parameters`` declares from and ``--help`` prints) appears in the page as
  `` `name` ``;
* every topic and service the installed node creates at start-up — read from the ROS graph as
  ``ros2 node info`` reads it, with the node started as ``ros2 run`` starts it (no namespace,
  its defaults, only ports moved to free ones and optional inputs switched on so that every
  topic that can exist at start does) — matches a name the page writes in backticks: the
  absolute name (`` `/tf` ``), the name relative to the node's namespace (`` `points` ``,
  `` `morai/ego_status` ``), a private name (`` `~/reset` ``), with ``<placeholders>``
  (`` `<p>/<s>/image` ``, `` `rflysim/vehicle_<id>/odom` ``) standing for one path segment;
* ibeo's table of ECU topics (``ibeo/ros/ecu_conversions.TOPICS``, the topics its ECU types
  are published on, some only once such data arrives) appears in ``docs/ibeo.md`` too.

A name removed from a page fails its test, naming the page and what is missing.
"""
from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import free_tcp_port, free_udp_ports, wait_until
from ros_sim_bridge.tools import suite

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / 'docs'

def executable_modules() -> dict[str, str]:
    """CMakeLists' executables: name → module."""
    text = (REPO / 'CMakeLists.txt').read_text()
    block = re.search(r'set\(SIM_BRIDGE_EXECUTABLES(.*?)\)', text, re.S).group(1)
    return dict(pair.split('=', 1) for pair in block.split() if '=' in pair)


#: executable → (page, module holding its ``PARAMETERS`` table): every node of the suite
#: table (each source's ``SOURCE`` and ``EXTRA_SOURCES``: its ``docs`` page)
NODES = {s.executable: (s.docs, executable_modules()[s.executable])
         for s in (*suite.SOURCES.values(), *suite.EXTRA_SOURCES.values())}


def test_every_node_has_its_page():
    """Every node executable (a module under a source's ros/, its demo aside) is a source's."""
    nodes = {exe for exe, module in executable_modules().items()
             if re.fullmatch(r'ros_sim_bridge\.\w+\.ros\.\w*node', module)}
    assert set(NODES) == nodes and len(nodes) >= 6
    assert NODES['ibeo_ecu'] == ('ibeo.md', 'ros_sim_bridge.ibeo.ros.ecu_node')
    for page_name, _ in NODES.values():
        assert (DOCS / page_name).exists(), page_name


#: what every node has from rclpy, not from this package
INFRA_TOPICS = {'/rosout', '/parameter_events'}
INFRA_SERVICE_SUFFIXES = ('/describe_parameters', '/get_parameter_types', '/get_parameters',
                          '/list_parameters', '/set_parameters', '/set_parameters_atomically',
                          '/get_type_description')


def page(name: str) -> str:
    return (DOCS / name).read_text()


def backticked(text: str) -> set[str]:
    """Every `` `…` `` span of a page (code blocks too: their lines are not spans)."""
    return set(re.findall(r'`([^`\n]+)`', text))


def patterns(text: str) -> list[re.Pattern]:
    """A regular expression per backticked span: ``<anything>`` is one path segment.  A span
    of placeholders alone (`` `<p>/<s>` ``) names nothing in particular and is left out."""
    out = []
    for span in backticked(text):
        parts = re.split(r'(<[^<>]+>)', span.strip())
        if not re.sub(r'<[^<>]+>|[/~]', '', span).strip():
            continue
        regex = ''.join('[^/]+' if p.startswith('<') and p.endswith('>') else re.escape(p)
                        for p in parts)
        out.append(re.compile(regex))
    return out


def written(text: str, *candidates: str) -> bool:
    """Whether one of ``candidates`` is, whole, a backticked name of the page."""
    regexes = patterns(text)
    return any(r.fullmatch(c) for r in regexes for c in candidates if c)


def ways_to_write(name: str, node_fqn: str, prefix: str = '') -> tuple[str, ...]:
    """The forms a page may give a graph name of a node started in namespace ``/``: whole,
    relative, private (``~/``) or relative to the node's ``topic_prefix``."""
    forms = [name, name.lstrip('/')]
    if prefix and name.startswith(f'/{prefix}/'):
        forms.append(name[len(prefix) + 2:])
    if name.startswith(node_fqn + '/'):
        forms.append('~/' + name[len(node_fqn) + 1:])
    return tuple(forms)


# -- parameters ------------------------------------------------------------------------------

@pytest.mark.parametrize('exe', sorted(NODES))
def test_every_declared_parameter_is_in_the_page(exe):
    page_name, module = NODES[exe]
    table = importlib.import_module(module).PARAMETERS
    assert len(table) >= 5, table
    spans = backticked(page(page_name))
    missing = sorted(name for name in table if name not in spans)
    assert not missing, f'docs/{page_name} does not name parameter(s) {missing} of {exe}'


def test_ecu_topic_table_is_in_the_ibeo_page():
    from ros_sim_bridge.ibeo.ros.ecu_conversions import TOPICS
    text = page('ibeo.md')
    missing = sorted(t for t in set(TOPICS.values()) if not written(text, t, t.lstrip('/')))
    assert not missing, f'docs/ibeo.md does not name ECU topic(s) {missing}'


# -- topics and services of the started node -------------------------------------------------

def carla_recording(tmp_path) -> Path:
    out = tmp_path / 'docs.log'
    subprocess.run([sys.executable, '-m', 'ros_sim_bridge.carla.emulator.cli', str(out),
                    '--seconds', '2'], check=True, capture_output=True, timeout=120)
    return out


def start_parameters(exe: str, tmp_path) -> dict:
    """Ports moved to free ones (other runs share the machine), every optional input on."""
    if exe == 'rflysim_truth':
        return {'base_port': free_udp_ports(4, 2), 'copter_ids': [1, 2]}
    if exe == 'morai_bridge':
        from ros_sim_bridge.morai.ros.node import INBOUND
        base = free_udp_ports(len(INBOUND))
        return {f'listen_port.{n}': base + k for k, n in enumerate(INBOUND)}
    if exe in ('ibeo_lux', 'ibeo_ecu'):
        return {'port': free_tcp_port(), 'parent_frame_id': 'map'}
    if exe == 'monodrive_client':      # the packaged sensor list, on ports where nothing listens
        import json
        from ros_sim_bridge.tools.launcher import config_file
        text = config_file('monodrive/sensors.json').read_text()
        sensors = json.loads(text)
        for s in sensors:
            if isinstance(s.get('listen_port'), int) and s['listen_port'] > 0:
                s['listen_port'] = free_tcp_port()
        path = tmp_path / 'sensors.json'
        path.write_text(json.dumps(sensors))
        return {'port': free_tcp_port(), 'sensors_config': str(path)}
    if exe == 'carla_replayer':
        return {'file': str(carla_recording(tmp_path)), 'start_paused': True}
    raise KeyError(exe)


def graph_names(ros, exe: str) -> tuple[set, set]:
    """(topics, services) of node ``exe`` in namespace ``/``, as the graph reports them."""
    probe = ros.probe
    if (exe, '/') not in probe.get_node_names_and_namespaces():
        return set(), set()
    try:
        pubs = probe.get_publisher_names_and_types_by_node(exe, '/')
        subs = probe.get_subscriber_names_and_types_by_node(exe, '/')
        services = probe.get_service_names_and_types_by_node(exe, '/')
    except Exception:     # NodeNameNonExistentError: it left (or is not yet fully) in the graph
        return set(), set()
    topics = {n for n, _ in pubs} | {n for n, _ in subs}
    return (topics - INFRA_TOPICS,
            {n for n, _ in services if not n.endswith(INFRA_SERVICE_SUFFIXES)})


@pytest.mark.parametrize('exe', sorted(NODES))
def test_every_topic_and_service_of_the_node_is_in_the_page(ros, tmp_path, exe):
    from ros_sim_bridge.tools.launcher import NodeProcess
    page_name = NODES[exe][0]
    text = page(page_name)
    parameters = start_parameters(exe, tmp_path)
    declared = getattr(importlib.import_module(NODES[exe][1]), 'PARAMETERS', {})
    prefix = parameters.get('topic_prefix', declared.get('topic_prefix', ('',))[0])
    with NodeProcess(exe, parameters=parameters, quiet=True) as node:
        found = {}

        def settled():
            now = graph_names(ros, exe)
            settled_ = bool(now[0]) and now == found.get('last')
            found['last'] = now
            return settled_ and '/diagnostics' in now[0]
        assert wait_until(settled, 40.0, interval=1.0), (found.get('last'), node.last_lines())
        assert node.running(), node.last_lines()
        topics, services = found['last']
    fqn = f"/{exe}"
    missing = sorted(n for n in topics | services if not written(text, *ways_to_write(n, fqn, prefix)))
    assert not missing, f'docs/{page_name} does not name {missing} of {exe}'
    assert len(topics) >= 2, topics


# -- the check itself ------------------------------------------------------------------------

def test_a_name_removed_from_a_page_is_missed():
    text = page('rflysim.md')
    assert written(text, 'rflysim/vehicle_2/odom')
    assert not written(text.replace('`rflysim/vehicle_<id>/odom`', 'odom'),
                       'rflysim/vehicle_2/odom')
    assert not written('`<p>/<s>`', 'monodrive/state')
    assert written('`~/reset`', *ways_to_write('/ibeo_lux/reset', '/ibeo_lux'))
    assert not written('`~/reset`', *ways_to_write('/ibeo_lux/reset_defaults', '/ibeo_lux'))
    assert written('`points`', *ways_to_write('/ibeo/points', '/ibeo_lux', 'ibeo'))
    assert not written('`points`', *ways_to_write('/ibeo/points', '/ibeo_lux'))
