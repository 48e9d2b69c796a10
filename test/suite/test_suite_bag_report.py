"""The demo picture draws each panel in one frame: what a source records in another frame is
moved with the bag's own TF (at the message's stamp), or reported as not drawn."""
from __future__ import annotations

import math
from types import SimpleNamespace as NS

import numpy as np

from ros_sim_bridge.tools import bag_report


def _header(frame: str, t_ns: int):
    return NS(frame_id=frame, stamp=NS(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000))


def _tf(parent: str, child: str, t_ns: int, x: float, y: float, yaw: float):
    rot = NS(x=0.0, y=0.0, z=math.sin(yaw / 2), w=math.cos(yaw / 2))
    return NS(header=_header(parent, t_ns), child_frame_id=child,
              transform=NS(translation=NS(x=x, y=y, z=0.0), rotation=rot))


def _cloud(frame: str, t_ns: int, xy):
    pts = np.zeros(len(xy), dtype=[('x', '<f4'), ('y', '<f4'), ('z', '<f4')])
    pts['x'], pts['y'] = np.array(xy, dtype=np.float32).T
    fields = [NS(name=n, offset=4 * i, datatype=7, count=1) for i, n in enumerate('xyz')]
    return NS(header=_header(frame, t_ns), fields=fields, is_bigendian=False, point_step=12,
              width=len(xy), height=1, data=np.frombuffer(pts.tobytes(), np.uint8))


def _odom(frame: str, t_ns: int, x: float, y: float):
    return NS(header=_header(frame, t_ns),
              pose=NS(pose=NS(position=NS(x=x, y=y, z=0.0))))


S = 1_000_000_000


def _bag(tf_until_s: int = 10):
    # ego drives along x at 1 m/s, turned +90° (facing north); the lidar sits 2 m ahead of it
    tf = [(t * S, NS(transforms=[_tf('map', 'ego', t * S, float(t), 0.0, math.pi / 2)]))
          for t in range(tf_until_s + 1)]
    static = [(0, NS(transforms=[_tf('ego', 'lidar', 0, 2.0, 0.0, 0.0)]))]
    return {
        '/tf': ('tf2_msgs/msg/TFMessage', tf),
        '/tf_static': ('tf2_msgs/msg/TFMessage', static),
        '/sim/lidar/points': ('sensor_msgs/msg/PointCloud2',
                              [(t * S, _cloud('lidar', t * S, [(1.0, 0.0)])) for t in (3, 9)]),
        '/sim/odom': ('nav_msgs/msg/Odometry', [(t * S, _odom('map', t * S, t, 0.0))
                                                for t in range(10)]),
        '/other/points': ('sensor_msgs/msg/PointCloud2', [(0, _cloud('nowhere', 0, [(1, 1)]))]),
        '/other/odom': ('nav_msgs/msg/Odometry', [(0, _odom('map', 0, 0.0, 0.0))]),
    }


def test_lookup_composes_the_chain_at_the_stamp():
    tf = bag_report.BagTransforms(_bag())
    m = tf.lookup('map', 'lidar', 4 * S)
    # lidar origin: ego at (4, 0) facing north, 2 m ahead → (4, 2)
    assert np.allclose(m @ [0, 0, 0, 1], [4, 2, 0, 1])
    back = tf.lookup('lidar', 'map', 4 * S)
    assert np.allclose(back @ m, np.eye(4))
    assert tf.lookup('map', 'nowhere', 4 * S) is None


def test_clouds_are_moved_into_the_panel_frame():
    panels = bag_report.drawables(_bag())
    sim = panels['sim']
    assert sim['frame'] == 'map' and not sim['skipped']
    pts = np.concatenate(sim['clouds'])
    # a point 1 m ahead of the lidar: t=9 → (9, 3); t=3 → (3, 3) (newest first)
    assert np.allclose(np.c_[pts['x'], pts['y']], [[9, 3], [3, 3]], atol=1e-5)
    assert np.allclose(sim['tracks']['/sim/odom'][-1], [9, 0])


def test_what_has_no_transform_is_reported_not_drawn_wrong():
    panels = bag_report.drawables(_bag(tf_until_s=5))          # /tf stops at 5 s
    pts = np.concatenate(panels['sim']['clouds'])
    assert np.allclose(np.c_[pts['x'], pts['y']], [[3, 3]], atol=1e-5)   # t=9 not drawn
    assert panels['other']['skipped'] == ['cloud in nowhere']
    assert not panels['other']['clouds']


def test_the_demo_warns_only_of_topics_that_should_have_data():
    """monoDrive's ~/raw (replies nobody waited for, unknown sensors) and the collision topics
    are empty in a healthy run: the demo warned 'no messages on /monodrive/.../raw'."""
    from ros_sim_bridge.tools.demo import unexpectedly_empty
    bag = {'/monodrive/monodrive_client/raw': ('ros_sim_bridge/msg/MonoDriveRaw', []),
           '/rflysim/vehicle_1/collision': ('ros_sim_bridge/msg/RflySimCollision', []),
           '/parameter_events': ('rcl_interfaces/msg/ParameterEvent', []),
           '/morai/odom': ('nav_msgs/msg/Odometry', []),
           '/ibeo/points': ('sensor_msgs/msg/PointCloud2', [(1, object())])}
    assert unexpectedly_empty(bag) == ['/morai/odom']
