"""REP-103 frame conversions and quaternion helpers (pure numpy, no rclpy).

Quaternions here are w-x-y-z (the order the sources use); ROS messages take x-y-z-w, which the
message builders handle.  Every function accepts a single vector/quaternion or an (N, k) array.

NED (north-east-down) → ENU (east-north-up): (n, e, d) → (e, n, −d).
FRD (front-right-down) → FLU (front-left-up): (f, r, d) → (f, −r, −d).
"""
from __future__ import annotations

import math

import numpy as np

_S = math.sqrt(0.5)
# Rotation taking NED coordinates to ENU coordinates (180° about (1, 1, 0)/√2), w-x-y-z.
Q_ENU_FROM_NED = np.array([0.0, _S, _S, 0.0])
# Rotation taking FLU coordinates to FRD coordinates (180° about x), w-x-y-z.
Q_FRD_FROM_FLU = np.array([0.0, 1.0, 0.0, 0.0])


def ned_to_enu(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return np.stack([v[..., 1], v[..., 0], -v[..., 2]], axis=-1)


def frd_to_flu(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return np.stack([v[..., 0], -v[..., 1], -v[..., 2]], axis=-1)


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product a ⊗ b of w-x-y-z quaternions."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack([
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ], axis=-1)


def quat_normalize(q) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(n > 0, q / np.where(n > 0, n, 1.0), np.array([1.0, 0.0, 0.0, 0.0]))


def quat_from_euler(roll, pitch, yaw) -> np.ndarray:
    """Z-Y-X (yaw, then pitch, then roll) Euler angles in rad → w-x-y-z quaternion."""
    if (isinstance(roll, float) and isinstance(pitch, float) and isinstance(yaw, float)
            and math.isfinite(roll + pitch + yaw)):    # one rotation: math, a fifth of the time
        return np.array(_wxyz(math.cos(roll * 0.5), math.sin(roll * 0.5),
                              math.cos(pitch * 0.5), math.sin(pitch * 0.5),
                              math.cos(yaw * 0.5), math.sin(yaw * 0.5)))
    return np.stack(_wxyz(np.cos(np.multiply(roll, 0.5)), np.sin(np.multiply(roll, 0.5)),
                          np.cos(np.multiply(pitch, 0.5)), np.sin(np.multiply(pitch, 0.5)),
                          np.cos(np.multiply(yaw, 0.5)), np.sin(np.multiply(yaw, 0.5))),
                    axis=-1)


def _wxyz(cr, sr, cp, sp, cy, sy) -> list:
    """w, x, y, z of the Z-Y-X rotation from the cosines and sines of the half angles
    (floats or arrays alike)."""
    return [cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy]


def quat_from_yaw(yaw) -> np.ndarray:
    """:func:`quat_from_euler` with roll and pitch 0 (a rotation about z), in fewer steps."""
    half = np.multiply(yaw, 0.5)
    q = np.zeros(np.shape(half) + (4,))
    q[..., 0], q[..., 3] = np.cos(half), np.sin(half)
    return q


def quat_positive_w(q) -> np.ndarray:
    """The same rotation with w ≥ 0 (q and −q are one rotation; w ≥ 0 reads better)."""
    q = np.asarray(q, dtype=np.float64)
    return np.where(q[..., :1] < 0, -q, q)


def quat_to_euler(q) -> np.ndarray:
    """w-x-y-z quaternion → (roll, pitch, yaw) rad, Z-Y-X convention."""
    q = np.asarray(q, dtype=np.float64)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)


def quat_conjugate(q) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_rotate(q, v) -> np.ndarray:
    """Rotate vector(s) v by unit quaternion(s) q (w-x-y-z)."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * _cross(u, v)
    return v + w * t + _cross(u, t)


def _cross(a, b) -> np.ndarray:
    """``np.cross`` of 3-vectors, the same products and differences (bit for bit) without its
    per-call axis handling (the cost for a few rows)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def quat_ned_frd_to_enu_flu(q_ned_frd) -> np.ndarray:
    """Attitude of an FRD body in NED → attitude of the FLU body in ENU (both w-x-y-z)."""
    return quat_multiply(quat_multiply(Q_ENU_FROM_NED, q_ned_frd), Q_FRD_FROM_FLU)


def euler_ned_frd_to_enu_flu(roll, pitch, yaw):
    """(roll, pitch, yaw) of FRD in NED → (roll, pitch, yaw) of FLU in ENU."""
    yaw_enu = np.mod(np.pi / 2 - np.asarray(yaw) + np.pi, 2 * np.pi) - np.pi
    return np.asarray(roll), -np.asarray(pitch), yaw_enu
