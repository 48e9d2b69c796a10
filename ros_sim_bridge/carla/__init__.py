"""CARLA recorder ``.log`` files: codec, generator, offline CLI and the ROS replayer.

:data:`SOURCE` is this source's entry in the suite's table (core/source.py); with ``sim:=true``
and no file it replays :func:`demo_recording`."""
import os
from pathlib import Path

from ros_sim_bridge.core.source import Argument, Source

DEMO_VERSION = 'ue4-0.9.13'


def write_demo_scene(f) -> None:
    """The generator's scripted scene (vehicles, walkers, lights, a collision, a destroyed
    actor) as a ``DEMO_VERSION`` recording into the binary file ``f``: what ``sim:=true``
    replays."""
    from .emulator.scene import Scene
    from .emulator.writer import write
    write(f, Scene(), DEMO_VERSION)


def demo_recording() -> str:
    """A recording of the generator's scripted scene, written once to the user's cache
    (``$XDG_CACHE_HOME/ros_sim_bridge``): what ``sim:=true`` replays."""
    folder = Path(os.environ.get('XDG_CACHE_HOME', Path.home() / '.cache')) / 'ros_sim_bridge'
    path = folder / f'carla_demo_scene_{DEMO_VERSION}.log'
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f'.{os.getpid()}.tmp')
        with open(tmp, 'wb') as f:
            write_demo_scene(f)
        os.replace(tmp, path)
    return str(path)


def _sim_parameters(params: dict, args: dict) -> dict:
    if params.get('file'):
        return {}
    return {'file': demo_recording(), 'loop': True}


SOURCE = Source(
    'carla', 'CARLA recorder replayer', 'carla_replayer', 'carla_replayer', None,
    lambda params, args: [],
    (Argument('file', 'CARLA recorder .log file to replay (default: the params file; '
              'with sim:=true and none given, a generated recording)', 'str', 'file'),
     Argument('rate_factor', 'replay speed, recording seconds per wall second (default: '
              'the params file)', 'float', 'rate_factor'),
     Argument('start_time', 'recording time to start at, s; negative: from the end '
              '(default: the params file)', 'float', 'start_time'),
     Argument('end_time', 'recording time to stop at, s; 0: the end; negative: from '
              'the end (default: the params file)', 'float', 'end_time'),
     Argument('loop', "'true': start again after the end (default: the params file)",
              'bool', 'loop'),
     Argument('start_paused', "'true': wait for the resume service (default: the "
              'params file)', 'bool', 'start_paused'),
     Argument('follow_actor', 'TF rooted on an actor: -1 none, 0 the hero, > 0 an actor '
              'id (default: the params file)', 'int', 'follow_actor'),
     Argument('map_frame', 'world frame (default: the params file)', 'str', 'map_frame')),
    sim_parameters=_sim_parameters, required='file', order=50, docs='carla.md',
    demo_check='carla')
