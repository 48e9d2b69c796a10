"""CARLA recorder ``.log`` files: codec, generator, offline CLI and the ROS replayer.

What tools/ (the suite) needs from this source is published here, so that it never reaches into
the source's modules: :func:`write_demo_scene`."""

DEMO_VERSION = 'ue4-0.9.13'


def write_demo_scene(f) -> None:
    """The generator's scripted scene (vehicles, walkers, lights, a collision, a destroyed
    actor) as a ``DEMO_VERSION`` recording into the binary file ``f``: what ``sim:=true``
    replays."""
    from .emulator.scene import Scene
    from .emulator.writer import write
    write(f, Scene(), DEMO_VERSION)
