"""The registry entry of a source: what the suite's tools (launch files, ``ros_sim_bridge_run``,
``sim_bridge_demo``) need to know of it, declared by the source itself as ``SOURCE`` (and
``EXTRA_SOURCES``, sources with a launch file of their own that the whole suite does not start)
in its ``ros_sim_bridge/<source>/__init__.py``.  ``tools/suite.py`` collects them.

Plain Python, standard library only: the launch files import it inside ``ros2 launch``, the
runner and the tests anywhere, a source's package at no cost.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

NOT_GIVEN = ''   # default of every overriding launch argument: "the params file decides"


@dataclass(frozen=True)
class Argument:
    """A launch argument of a source: overrides ``parameter`` when given (``''``: not given);
    with ``parameter`` None it only feeds the emulator (a ``default`` then applies).  ``kind``
    names how its text becomes a value (tools/suite.py ``CONVERTERS``: int, float, str, bool,
    int_list)."""
    name: str
    description: str
    kind: str = 'str'
    parameter: Optional[str] = None
    default: str = NOT_GIVEN


@dataclass(frozen=True)
class Source:
    """One driver of the suite and its built-in emulator."""
    name: str                       # namespace, config/<name>.yaml, launch/<name>.launch.py
    title: str
    executable: str                 # installed driver executable (CMakeLists)
    node_name: str                  # node name = section of config/<name>.yaml
    emulator: Optional[str]         # installed emulator executable (None: sim:=true sets
                                    # parameters only, e.g. a generated recording to replay)
    #: (node parameters in effect, argument values) → emulator command line
    emulator_args: Callable[[dict, dict], list[str]]
    arguments: tuple[Argument, ...] = ()
    #: (node parameters in effect, argument values) → parameters the driver needs with sim:=true
    sim_parameters: Callable[[dict, dict], dict] = field(default=lambda params, args: {})
    #: (node parameters in effect, free-port picker, config file resolver) → port parameters
    #: moved off their defaults, so a local suite can run beside others on one machine (runner
    #: --free-ports, tests); the resolver finds a file a parameter names (ros/params.py
    #: ``resolve_config_path``)
    free_ports: Callable[[dict, Callable, Callable], dict] = \
        field(default=lambda params, pick, resolve: {})
    #: a parameter without which the node cannot run (CARLA: the recording): the whole suite
    #: (all.launch.py, ros_sim_bridge_run) leaves the source out while it is empty
    required: Optional[str] = None
    #: place in the suite's table (launch order, the runner's and the demo's listings)
    order: int = 100
    #: its page under docs/
    docs: str = ''
    #: the demo's per-driver check of this source (``sim_bridge_demo --only <name>``): run by
    #: ``<source package>/ros/demo.py`` ``run(node, seconds) -> lines``; '' none
    demo_check: str = ''
    #: ``--set`` values (parameter → YAML text) of this source in the demo's recorded suite run
    demo_set: tuple[tuple[str, str], ...] = ()
    #: a name in ``<source package>/ros/demo.py``: a class whose instance, called with the
    #: seconds elapsed, drives the source while the demo records the suite (``close()`` at the
    #: end); '' none
    demo_driver: str = ''

    @property
    def config(self) -> str:
        return f'{self.name}.yaml'

    @property
    def launch_file(self) -> str:
        return f'{self.name}.launch.py'
