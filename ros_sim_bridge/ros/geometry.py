"""geometry_msgs transforms, poses and vectors from numpy values (quaternions w-x-y-z)."""
from __future__ import annotations

from geometry_msgs.msg import Point, Quaternion, TransformStamped, Vector3


def vector3(v) -> Vector3:
    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def point(v) -> Point:
    return Point(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def quaternion(q_wxyz) -> Quaternion:
    return Quaternion(w=float(q_wxyz[0]), x=float(q_wxyz[1]), y=float(q_wxyz[2]),
                      z=float(q_wxyz[3]))


def transform(stamp, parent: str, child: str, translation, q_wxyz) -> TransformStamped:
    t = TransformStamped()
    t.header.stamp = stamp
    t.header.frame_id = parent
    t.child_frame_id = child
    t.transform.translation = vector3(translation)
    t.transform.rotation = quaternion(q_wxyz)
    return t
