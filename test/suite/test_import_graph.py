"""The house's layering, computed from the source: every module under ros_sim_bridge/ is parsed
(imports inside functions included, relative imports resolved) and its arrows checked.

Layers, bottom up:  core/  <  ros/  <  <source>/ (ROS-free)  <  <source>/ros/  <  tools/
- no import cycle between modules;
- core/ imports nothing of ros/, a source or tools/;
- ros/ imports nothing of a source or tools/;
- a source imports nothing of another source or tools/; its ROS-free part nothing of ros/ or
  of its own ros/; its ros/ never a CLI of its source (the executables of CMakeLists outside
  ros/, and ``cli.py`` / ``*_cli.py``);
- tools/ reaches a source only through the source's package (``ros_sim_bridge.<source>``,
  whose ``__init__.py`` publishes what tools/ needs), never its modules, but for the demo's
  checks: each source's ``ros/demo.py``, loaded by name (tools/demo.py ``CHECKS``);
- no ROS import (rclpy, rosidl, message and service packages, ros_sim_bridge.msg/srv, rosbag2,
  ament_index, launch) outside ros/, <source>/ros/ and tools/.
A CLI is the top of its source: it may load its own ``ros/to_bag`` inside a function, the only
way its ROS command (``carla_log to-bag``, ``ibeo_idc to-bag``) is reached; its other commands
need no ROS.

Rule (c): nothing under <source>/ros/ imports its source's CLI (``cli.py``, ``*_cli.py``, an
executable outside ros/) or its ``emulator/`` (the demo starts the installed emulator).

Every module under ros/ has at least two users, else it lives with its user.  A user is a
source: one whose modules import the module, directly or through other ros/ modules (ros/bag.py
is used by whoever uses ros/pointcloud_cdr.py through it).  tools/ and the tests are not users:
ros/ is what the nodes share, and a harness reaching a module does not make it shared.

Every source has the shape of issue #29 (:data:`SHAPE`, :func:`shape_problems`): a codec
package with ``units.py``, ``session.py`` where the protocol has state, ``emulator/`` split into
scene, server (or writer) and cli, ``cli.py`` for its offline tool, ``ros/`` with conversions,
``node.py`` and ``to_bag.py`` where it has an offline to-bag; every executable of the source is
a node under ros/, its emulator's cli or its cli.

Today's exceptions are listed in ALLOWED with the reason; an entry that no longer occurs fails
too, so the list only shrinks.  :data:`PENDING` names the sources not yet in that shape.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / 'ros_sim_bridge'
PKG = 'ros_sim_bridge'
LAYERS = {'core', 'ros', 'tools'}
# The demo harness of tools/ that each source's ros/demo.py drives its demo with.
DEMO_HARNESS = {f'{PKG}.tools.{m}' for m in ('launcher', 'listener', 'session', 'ports')}

#: Sources not yet in the shape of :data:`SHAPE`: helpers shape rflysim, morai, monodrive and
#: carla on branches of their own, merged by the lead, who empties this set as each lands (a
#: source listed here that has the shape fails the test, so the set only shrinks).  Until then
#: a pending source's ros/demo.py may still import its emulator (it starts scene and server
#: in-process; a shaped source's demo starts the installed emulator).
PENDING = {'monodrive'}

# (importer, imported): why it stays for now.  A new violation is not added here but fixed.
ALLOWED = {
    # <source>/ros/demo.py runs its demo through the shared harness of tools/ (launcher,
    # listener, session, ports); the harness moving down into ros/ is its own change.
    **{(f'{PKG}.{s}.ros.demo', h): 'demo uses the tools/ demo harness'
       for s, hs in (('carla', ('launcher', 'listener', 'session')),
                     ('ibeo', ('launcher', 'listener', 'session', 'ports')),
                     ('monodrive', ('launcher', 'listener', 'session', 'ports')),
                     ('morai', ('launcher', 'listener', 'session', 'ports')),
                     ('rflysim', ('launcher', 'listener')))
       for h in (f'{PKG}.tools.{x}' for x in hs)},
}


def module_files() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted(ROOT.rglob('*.py')):
        parts = list(path.relative_to(REPO).with_suffix('').parts)
        package = parts[-1] == '__init__'
        out['.'.join(parts[:-1] if package else parts)] = (path, package)
    return out


MODULES = module_files()
SOURCES = sorted(p.name for p in ROOT.iterdir()
                 if (p / '__init__.py').exists() and p.name not in LAYERS)


def imports_of(name: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every import statement of ``name``; a
    ``from X import y`` names ``X.y`` when that is a module, else ``X``.  A string that is the
    full name of one of the package's modules is an import by name (importlib)."""
    path, package = MODULES[name]
    here = name if package else name.rpartition('.')[0]
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend((a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = here.split('.')
                    base = base[:len(base) - child.level + 1]
                    target = '.'.join(base + ([child.module] if child.module else []))
                else:
                    target = child.module
                for a in child.names:
                    full = f'{target}.{a.name}'
                    out.append((full if full in MODULES else target, child.lineno, in_function))
            elif (isinstance(child, ast.Constant) and isinstance(child.value, str)
                  and child.value in MODULES and child.value != name):
                out.append((child.value, child.lineno, True))   # a module imported by name
            visit(child, nested)
    visit(ast.parse(path.read_text(), str(path)), False)
    return out


GRAPH = {m: imports_of(m) for m in MODULES}


def executable_modules() -> set[str]:
    text = (REPO / 'CMakeLists.txt').read_text()
    block = re.search(r'set\(SIM_BRIDGE_EXECUTABLES(.*?)\)', text, re.S).group(1)
    return {pair.split('=', 1)[1] for pair in block.split() if '=' in pair}


def where(name: str) -> tuple[str, str]:
    """(layer, part): layer is core/ros/tools, a source's name or 'top'; part for a source is
    'ros' (its ros/ folder), 'cli' or 'lib'."""
    parts = name.split('.')
    if len(parts) < 2 or parts[1] not in LAYERS | set(SOURCES):
        return 'top', ''
    if parts[1] in LAYERS:
        return parts[1], ''
    if len(parts) > 2 and parts[2] == 'ros':
        return parts[1], 'ros'
    last = parts[-1]
    if name in CLIS or last == 'cli' or last.endswith('_cli'):
        return parts[1], 'cli'
    return parts[1], 'lib'


CLIS = {m for m in executable_modules() if '.ros.' not in m and m.split('.')[1] not in LAYERS}


def is_ros(imported: str) -> bool:
    top = imported.split('.')[0]
    return (top in ('rclpy', 'rpyutils', 'rosbag2_py', 'ament_index_python', 'launch',
                    'launch_ros', 'rcl_interfaces', 'builtin_interfaces', 'std_srvs')
            or top.startswith('rosidl') or top.endswith(('_msgs', '_srvs', '_interfaces'))
            or imported.split('.')[:2] in ([PKG, 'msg'], [PKG, 'srv']))


def rule_broken(importer: str, imported: str, lazy: bool) -> str | None:
    """Why the arrow importer -> imported is not allowed (None when it is)."""
    layer, part = where(importer)
    ros_side = layer in ('ros', 'tools') or part == 'ros'
    if is_ros(imported):
        return None if ros_side or layer == 'top' else 'ROS import outside ros/ and tools/'
    if not imported.startswith(PKG + '.') or imported.split('.')[1] in ('msg', 'srv'):
        return None
    to, to_part = where(imported)
    if to == 'top':
        return None
    if layer == 'core' and to != 'core':
        return f'core/ imports {to}'
    if layer == 'ros' and to not in ('core', 'ros'):
        return f'ros/ imports {to}'
    if layer == 'tools' and to in SOURCES and imported != f'{PKG}.{to}' \
            and not (lazy and imported == f'{PKG}.{to}.ros.demo'):
        return f'tools/ reaches into {to} (only the package {PKG}.{to} is its registry)'
    if layer in SOURCES:
        if to in SOURCES and to != layer:
            return f'{layer} imports another source, {to}'
        if to == 'tools':
            return f'{layer} imports tools/'
        if part == 'ros' and to_part == 'cli':
            return f'{layer}/ros imports a CLI'
        if part == 'ros' and to == layer and imported.split('.')[2] == 'emulator':
            return f'{layer}/ros imports its emulator'
        if part != 'ros' and (to == 'ros' or to_part == 'ros'):
            if part == 'cli' and lazy and imported == f'{PKG}.{layer}.ros.to_bag':
                return None
            return f'the ROS-free part of {layer} imports ROS code'
    return None


def violations() -> dict[tuple[str, str], str]:
    out = {}
    for importer, edges in GRAPH.items():
        for imported, line, lazy in edges:
            why = rule_broken(importer, imported, lazy)
            if why:
                out[(importer, imported)] = f'{importer}:{line} -> {imported}: {why}'
    return out


def test_the_graph_sees_every_layer_and_source():
    assert set(SOURCES) == {'carla', 'ibeo', 'monodrive', 'morai', 'rflysim'}
    assert len(MODULES) > 100
    edges = {(a, b) for a, es in GRAPH.items() for b, _, _ in es}
    # a relative import inside a function is resolved and seen
    assert (f'{PKG}.carla.cli', f'{PKG}.carla.ros.to_bag') in edges
    assert (f'{PKG}.ibeo.cli', f'{PKG}.ibeo.ros.to_bag') in edges
    assert CLIS >= {f'{PKG}.carla.cli', f'{PKG}.ibeo.cli', f'{PKG}.ibeo.emulator.cli'}


def test_rules_catch_upward_arrows():
    """The rules themselves, on arrows that would break them."""
    assert rule_broken(f'{PKG}.carla.ros.node', f'{PKG}.carla.cli', False)
    assert rule_broken(f'{PKG}.core.udp', f'{PKG}.ros.qos', False)
    assert rule_broken(f'{PKG}.ros.qos', f'{PKG}.morai.codec', False)
    assert rule_broken(f'{PKG}.tools.suite', f'{PKG}.carla.emulator.writer', True)
    assert rule_broken(f'{PKG}.morai.codec', f'{PKG}.ibeo.codec', False)
    assert rule_broken(f'{PKG}.morai.emulator', 'rclpy.node', True)
    assert rule_broken(f'{PKG}.ibeo.session', 'sensor_msgs.msg', False)
    assert rule_broken(f'{PKG}.carla.cli', f'{PKG}.carla.ros.to_bag', False)  # not lazy
    assert rule_broken(f'{PKG}.carla.world', f'{PKG}.carla.ros.to_bag', True)  # not a CLI
    assert not rule_broken(f'{PKG}.carla.cli', f'{PKG}.carla.ros.to_bag', True)
    assert not rule_broken(f'{PKG}.tools.suite', f'{PKG}.carla', True)
    assert not rule_broken(f'{PKG}.tools.demo', f'{PKG}.carla.ros.demo', True)
    assert rule_broken(f'{PKG}.tools.demo', f'{PKG}.carla.ros.demo', False)
    assert not rule_broken(f'{PKG}.carla.ros.node', f'{PKG}.carla.recording_file', False)
    # rule (c): a source's ros/ imports neither its cli.py nor anything of its emulator/
    assert rule_broken(f'{PKG}.ibeo.ros.node', f'{PKG}.ibeo.cli', True)
    assert rule_broken(f'{PKG}.ibeo.ros.demo', f'{PKG}.ibeo.emulator.scene', True)
    assert rule_broken(f'{PKG}.ibeo.ros.demo', f'{PKG}.ibeo.emulator', True)
    assert rule_broken(f'{PKG}.morai.ros.node', f'{PKG}.morai.emulator.server', False)
    assert not rule_broken(f'{PKG}.ibeo.ros.node', f'{PKG}.ibeo.session', False)
    assert pending_excuse(f'{PKG}.morai.ros.demo', f'{PKG}.morai.emulator') == ('morai' in PENDING)
    assert not pending_excuse(f'{PKG}.ibeo.ros.demo', f'{PKG}.ibeo.emulator.scene')
    assert not pending_excuse(f'{PKG}.morai.ros.node', f'{PKG}.morai.emulator')


def pending_excuse(importer: str, imported: str) -> bool:
    """A source of :data:`PENDING` whose ros/demo.py still starts its emulator in-process."""
    parts = importer.split('.')
    return (len(parts) == 4 and parts[1] in PENDING and parts[2:] == ['ros', 'demo']
            and imported.split('.')[:3] == [PKG, parts[1], 'emulator'])


def test_no_upward_or_ros_import_beyond_the_allowed_list():
    found = violations()
    new = [why for key, why in sorted(found.items())
           if key not in ALLOWED and not pending_excuse(*key)]
    assert not new, 'imports against the layering:\n' + '\n'.join(new)
    stale = sorted(k for k in ALLOWED if k not in found)
    assert not stale, f'allowed exceptions that no longer occur (remove them): {stale}'


def import_cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan, iterative)."""
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def strong(v):
        work = [(v, iter(graph[v]))]
        index[v] = low[v] = len(index)
        stack.append(v), on.add(v)
        while work:
            node, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w), on.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        part.append(w)
                        if w == node:
                            break
                    if len(part) > 1:
                        cycles.append(sorted(part))

    for m in graph:
        if m not in index:
            strong(m)
    return cycles


def test_cycle_finder_reports_the_cycle():
    assert import_cycles({'a': ['b'], 'b': ['c'], 'c': ['a', 'd'], 'd': []}) == [['a', 'b', 'c']]
    assert import_cycles({'a': ['b'], 'b': [], 'c': ['a']}) == []


def test_no_import_cycle():
    graph = {m: sorted({b for b, _, _ in es if b in MODULES and b != m})
             for m, es in GRAPH.items()}
    cycles = import_cycles(graph)
    assert not cycles, 'import cycles: ' + '; '.join(' <-> '.join(c) for c in cycles)


# --- every ros/ module has two users -----------------------------------------------------------

def ros_users(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """ros/ module → the sources that use it: whose modules import it, or import a ros/ module
    that uses it (through ros/, transitively).  tools/ and tests are not users."""
    shared = sorted(m for m in graph if where(m)[0] == 'ros' and m != f'{PKG}.ros')
    users = {m: {where(i)[0] for i, imported in graph.items() if m in imported
                 and where(i)[0] in SOURCES} for m in shared}
    changed = True
    while changed:              # a ros/ module's users use what it imports
        changed = False
        for m in shared:
            for below in graph[m]:
                if below in users and below != m and not users[m] <= users[below]:
                    users[below] |= users[m]
                    changed = True
    return users


def test_ros_users_counts_sources_through_ros_modules():
    a, b, r1, r2, r3, t = (f'{PKG}.ibeo.ros.node', f'{PKG}.carla.ros.node', f'{PKG}.ros.x',
                           f'{PKG}.ros.y', f'{PKG}.ros.z', f'{PKG}.tools.run')
    graph = {a: {r1, r3}, b: {r1}, r1: {r2}, r2: set(), r3: set(), t: {r3}}
    users = ros_users(graph)
    assert users[r1] == users[r2] == {'ibeo', 'carla'}
    assert users[r3] == {'ibeo'}            # tools/ does not count


def test_every_ros_module_has_two_users():
    graph = {m: {b for b, _, _ in es} for m, es in GRAPH.items()}
    lonely = {m: sorted(u) for m, u in ros_users(graph).items() if len(u) < 2}
    assert not lonely, f'ros/ modules with fewer than two user sources (move them to it): {lonely}'


# --- the shape of every source (issue #29) -----------------------------------------------------

#: What each source has beside the common shape: ``session`` (a ROS-free session.py: the
#: protocol has state), ``emulator`` ('server': it listens/sends on sockets; 'writer': it writes
#: files), ``cli`` (an offline command-line tool in cli.py), ``to_bag`` (that tool converts to
#: a bag through ros/to_bag.py).  A new source adds its row.
SHAPE = {
    'rflysim': dict(session=False, emulator='server', cli=False, to_bag=False),
    'morai': dict(session=True, emulator='server', cli=False, to_bag=False),
    'ibeo': dict(session=True, emulator='server', cli=True, to_bag=True),
    'monodrive': dict(session=True, emulator='server', cli=False, to_bag=False),
    'carla': dict(session=True, emulator='writer', cli=True, to_bag=True),
}
#: imports that make a module more than a sans-IO codec / a pure scene: sockets, threads,
#: processes, argv
IO_MODULES = ('socket', 'selectors', 'threading', 'asyncio', 'subprocess', 'multiprocessing',
              'argparse')


def shape_problems(source: str, modules=None, graph=None, executables=None) -> list[str]:
    """What ``ros_sim_bridge/<source>/`` lacks or has against the shape of issue #29
    (``modules``: name → is a package; ``graph``: name → imported names; ``executables``:
    the modules of CMakeLists' executables; default: the tree's)."""
    modules = {m: pkg for m, (_, pkg) in MODULES.items()} if modules is None else modules
    graph = {m: {b for b, _, _ in es} for m, es in GRAPH.items()} if graph is None else graph
    executables = executable_modules() if executables is None else executables
    want = SHAPE[source]
    base = f'{PKG}.{source}'
    has = lambda rel: f'{base}.{rel}' in modules      # noqa: E731
    problems = []

    def need(rel: str, why: str) -> None:
        if not has(rel):
            path = rel.replace('.', '/') + ('/' if rel in ('codec', 'emulator', 'ros') else '.py')
            problems.append(f'{source}/{path} missing: {why}')

    need('codec', 'the sans-IO codec is a package, codec/')
    need('codec.units', "the protocol's units and scale factors (may be short)")
    if want['session']:
        need('session', 'ROS-free protocol state driven by explicit calls')
    for part in ('emulator', 'emulator.scene', 'emulator.cli', f'emulator.{want["emulator"]}'):
        need(part, 'the emulator is split into scene, ' + want['emulator'] + ' and cli')
    if has('emulator') and not modules[f'{base}.emulator']:
        problems.append(f'{source}/emulator.py: a module, not the emulator/ package')
    if want['cli']:
        need('cli', 'the offline command-line tool')
    elif has('cli'):
        problems.append(f'{source}/cli.py: not in SHAPE (add cli=True)')
    need('ros', "the source's ROS side")
    need('ros.node', 'the node: a table of what it publishes, subscribes and serves')
    if not (has('ros.conversions') or any(m.startswith(f'{base}.ros.') and m.endswith('_cdr')
                                          for m in modules)):
        problems.append(f'{source}/ros/conversions.py (or ros/*_cdr.py) missing')
    if want['to_bag']:
        need('ros.to_bag', 'the offline to-bag of its CLI')
    for m in modules:
        if not m.startswith(base + '.'):
            continue
        rel = m[len(base) + 1:]
        last = rel.split('.')[-1]
        if last.endswith('_cli'):
            problems.append(f'{m}: a CLI is cli.py (or emulator/cli.py)')
        if last == 'units' and rel != 'codec.units':
            problems.append(f'{m}: units live in codec/units.py')
        pure = rel.split('.')[0] == 'codec' or rel in ('session', 'emulator.scene')
        io = sorted({i.split('.')[0] for i in graph.get(m, ())} & set(IO_MODULES))
        if pure and io:
            problems.append(f'{m} imports {", ".join(io)}: no I/O, threads or argv there')
        if rel == f'emulator.{want["emulator"]}' and 'argparse' in io:
            problems.append(f'{m} imports argparse: the command line is emulator/cli.py')
    allowed = {f'{base}.cli', f'{base}.emulator.cli'}
    for module in executables:
        if module.startswith(base + '.') and module not in allowed \
                and not module.startswith(f'{base}.ros.'):
            problems.append(f'executable module {module}: a node under ros/, emulator/cli.py '
                            'or cli.py')
    return problems


def test_shape_check_reports_what_is_missing():
    assert set(SHAPE) == set(SOURCES), 'every source has its row in SHAPE'
    assert shape_problems('ibeo') == [] or 'ibeo' in PENDING
    assert any('codec/units.py' in p or 'emulator' in p for p in shape_problems('rflysim')) \
        or 'rflysim' not in PENDING


@pytest.mark.parametrize('source', sorted(SHAPE))
def test_source_has_the_shape(source):
    problems = shape_problems(source)
    if source in PENDING:
        assert problems, f'{source} has the shape: remove it from PENDING'
        pytest.xfail(f'{source} is PENDING: ' + '; '.join(problems[:3]))
    assert not problems, f'{source} is not in the shape of issue #29:\n' + '\n'.join(problems)
