"""rosbag2 folders (``metadata.yaml`` + MCAP) written with ``rosbags``, from CDR bytes or rclpy
messages: the one bag writer of the suite (demo recorder, CARLA ``to-bag``, ``.idc`` ``to-bag``).

Type definitions go into the bag with each connection, so ``ros2 bag info/play`` and Foxglove
read it without this package: standard types come from the rosbags type store of the running
distribution (``ROS_DISTRO``, Kilted by default), this package's own from its ``msg/*.msg``.
rosbags computes the RIHS01 type hashes, which match the ones rosidl generates.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Optional, Union

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

PACKAGE = 'ros_sim_bridge'


def _store_for(distro: str) -> Stores:
    return getattr(Stores, f'ROS2_{distro.upper()}', Stores.ROS2_KILTED)


def package_msg_dirs() -> list[Path]:
    """Where this package's ``.msg`` files are: the install share folder, else the source tree."""
    dirs = []
    try:
        from ament_index_python.packages import get_package_share_directory
        dirs.append(Path(get_package_share_directory(PACKAGE)) / 'msg')
    except Exception:  # not installed (running from a source checkout)
        pass
    dirs.append(Path(__file__).resolve().parents[2] / 'msg')
    return [d for d in dirs if d.is_dir()][:1]


def typestore(msg_dirs: Optional[Iterable[Path]] = None, distro: Optional[str] = None):
    """A rosbags type store: the distribution's standard types plus this package's messages."""
    store = get_typestore(_store_for(distro or os.environ.get('ROS_DISTRO', 'kilted')))
    types: dict = {}
    for folder in (package_msg_dirs() if msg_dirs is None else msg_dirs):
        for path in sorted(Path(folder).glob('*.msg')):
            types.update(get_types_from_msg(path.read_text(), f'{PACKAGE}/msg/{path.stem}'))
    store.register(types)
    return store


def type_name(msg_or_class) -> str:
    """``pkg/msg/Name`` of an rclpy message instance or class."""
    cls = msg_or_class if isinstance(msg_or_class, type) else type(msg_or_class)
    package = cls.__module__.split('.')[0]
    return f'{package}/msg/{cls.__name__}'


class BagWriter:
    """Write messages to a new rosbag2 folder; use as a context manager (``close`` finishes it).

    ``write(topic, t_ns, cdr)`` takes serialised CDR (e.g. from a ``raw=True`` subscription);
    ``write_msg`` serialises an rclpy message first.  A topic's type is fixed by its first write
    (or :meth:`add_topic`); per-topic message counts are kept in :attr:`counts`.
    """

    def __init__(self, path: Union[str, Path], *, store=None, msg_dirs=None):
        self.path = Path(path)
        if self.path.exists():
            raise FileExistsError(f'{self.path} exists: a bag is written to a new folder')
        self.store = store or typestore(msg_dirs)
        version = 9 if os.environ.get('ROS_DISTRO', 'kilted') not in ('humble', 'iron', 'jazzy') \
            else 8
        self._writer = Writer(self.path, version=version, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict = {}
        self.counts: dict[str, int] = {}

    def add_topic(self, topic: str, msgtype: str):
        """Declare ``topic`` with type ``msgtype`` (``pkg/msg/Name``); idempotent."""
        conn = self._connections.get(topic)
        if conn is None:
            if msgtype not in self.store.types:
                raise KeyError(f'{topic}: type {msgtype} is not known to the bag type store')
            conn = self._writer.add_connection(topic, msgtype, typestore=self.store)
            self._connections[topic] = conn
            self.counts[topic] = 0
        elif conn.msgtype != msgtype:
            raise ValueError(f'{topic}: recorded as {conn.msgtype}, now given {msgtype}')
        return conn

    def write(self, topic: str, t_ns: int, cdr: bytes, msgtype: Optional[str] = None) -> None:
        conn = self._connections.get(topic) if msgtype is None else self.add_topic(topic, msgtype)
        if conn is None:
            raise KeyError(f'{topic}: no type given (add_topic first)')
        self._writer.write(conn, int(t_ns), cdr)
        self.counts[topic] += 1

    def write_msg(self, topic: str, t_ns: int, msg) -> None:
        from rclpy.serialization import serialize_message
        self.write(topic, t_ns, serialize_message(msg), type_name(msg))

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> 'BagWriter':
        return self

    def __exit__(self, *exc) -> None:
        self.close()
