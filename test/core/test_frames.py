"""REP-103 conversions on known poses, and consistency on random ones."""
import math

import numpy as np
import pytest

from ros_sim_bridge.core import frames

D = math.radians


def test_vectors():
    assert frames.ned_to_enu([1.0, 2.0, 3.0]).tolist() == [2.0, 1.0, -3.0]
    assert frames.frd_to_flu([1.0, 2.0, 3.0]).tolist() == [1.0, -2.0, -3.0]
    many = frames.ned_to_enu(np.array([[1, 2, 3], [4, 5, 6]]))
    assert many.tolist() == [[2, 1, -3], [5, 4, -6]]


@pytest.mark.parametrize('yaw_ned_deg, yaw_enu_deg', [(0, 90), (90, 0), (180, -90), (-90, 180),
                                                       (45, 45), (30, 60)])
def test_heading(yaw_ned_deg, yaw_enu_deg):
    q_ned = frames.quat_from_euler(0.0, 0.0, D(yaw_ned_deg))
    q_enu = frames.quat_ned_frd_to_enu_flu(q_ned)
    roll, pitch, yaw = frames.quat_to_euler(q_enu)
    assert roll == pytest.approx(0, abs=1e-12) and pitch == pytest.approx(0, abs=1e-12)
    assert math.cos(yaw - D(yaw_enu_deg)) == pytest.approx(1.0)
    yaw_direct = frames.euler_ned_frd_to_enu_flu(0, 0, D(yaw_ned_deg))[2]
    assert -math.pi <= yaw_direct <= math.pi
    assert math.cos(yaw_direct - D(yaw_enu_deg)) == pytest.approx(1.0)


def test_nose_up_heading_north():
    # NED pitch +10° is nose up; in ENU/FLU nose up is a negative pitch about the left axis.
    q_enu = frames.quat_ned_frd_to_enu_flu(frames.quat_from_euler(0.0, D(10), 0.0))
    nose = frames.quat_rotate(q_enu, [1.0, 0.0, 0.0])
    assert nose == pytest.approx([0.0, math.cos(D(10)), math.sin(D(10))])  # north and up
    roll, pitch, yaw = frames.quat_to_euler(q_enu)
    assert (roll, pitch, yaw) == pytest.approx((0.0, -D(10), D(90)))


def test_right_wing_down_is_positive_roll_in_both():
    q_enu = frames.quat_ned_frd_to_enu_flu(frames.quat_from_euler(D(20), 0.0, 0.0))
    left_wing = frames.quat_rotate(q_enu, [0.0, 1.0, 0.0])
    assert left_wing[2] > 0  # right wing down = left wing up
    assert frames.quat_to_euler(q_enu)[0] == pytest.approx(D(20))


def test_random_attitudes_agree_with_vector_conversions():
    rng = np.random.default_rng(7)
    q_ned = frames.quat_normalize(rng.normal(size=(200, 4)))
    v_frd = rng.normal(size=(200, 3))
    q_enu = frames.quat_ned_frd_to_enu_flu(q_ned)
    lhs = frames.ned_to_enu(frames.quat_rotate(q_ned, v_frd))
    rhs = frames.quat_rotate(q_enu, frames.frd_to_flu(v_frd))
    np.testing.assert_allclose(lhs, rhs, atol=1e-12)


def test_euler_round_trip():
    rng = np.random.default_rng(3)
    e = np.stack([rng.uniform(-3, 3, 100), rng.uniform(-1.5, 1.5, 100),
                  rng.uniform(-3, 3, 100)], axis=-1)
    back = frames.quat_to_euler(frames.quat_from_euler(e[:, 0], e[:, 1], e[:, 2]))
    np.testing.assert_allclose(back, e, atol=1e-9)


def test_quat_rotate_is_the_cross_product_formula_bit_for_bit():
    """quat_rotate spells np.cross out (its cost is per call); results must not change."""
    rng = np.random.default_rng(7)
    q = frames.quat_normalize(rng.normal(size=(50, 4)))
    v = rng.normal(size=(50, 3)) * 100
    w, u = q[:, :1], q[:, 1:]
    t = 2.0 * np.cross(u, v)
    expected = v + w * t + np.cross(u, t)
    assert np.array_equal(frames.quat_rotate(q, v), expected)
    # broadcasting as np.cross: one quaternion for many vectors, and a single vector
    assert np.array_equal(frames.quat_rotate(q[0], v),
                          v + q[0, :1] * (2.0 * np.cross(q[0, 1:], v))
                          + np.cross(q[0, 1:], 2.0 * np.cross(q[0, 1:], v)))
    assert frames.quat_rotate(q[0], v[0]).shape == (3,)


def test_quat_from_yaw_is_quat_from_euler_about_z():
    """The short form equals the general one for yaws of every quadrant, arrays and scalars;
    a non-finite yaw gives NaN components as the general form does."""
    yaw = np.array([-7.0, -math.pi, -1.0, -0.0, 0.0, 0.3, math.pi / 2, 3.0, 12.5])
    np.testing.assert_array_equal(frames.quat_from_yaw(yaw),
                                  frames.quat_from_euler(0.0, 0.0, yaw))
    np.testing.assert_array_equal(frames.quat_from_yaw(0.7),
                                  frames.quat_from_euler(0.0, 0.0, 0.7))
    with np.errstate(invalid='ignore'):
        q = frames.quat_from_yaw(np.array([np.nan, np.inf]))
    assert np.isnan(q[:, [0, 3]]).all() and (q[:, 1:3] == 0).all()


def test_quat_from_euler_of_one_rotation_is_its_array_form():
    """Three floats take a path of their own (math, not numpy): the same quaternion as the
    same angles as arrays, NaN and ±Inf alike."""
    rng = np.random.default_rng(3)
    angles = np.concatenate([rng.uniform(-10, 10, (200, 3)),
                             [[np.nan, 0.0, 1.0], [np.inf, 0.5, 0.0], [0.0, 0.0, 0.0]]])
    with np.errstate(invalid='ignore'):                 # cos(±Inf): NaN
        arrays = frames.quat_from_euler(angles[:, 0], angles[:, 1], angles[:, 2])
    for (roll, pitch, yaw), want in zip(angles.tolist()[:-3], arrays):
        np.testing.assert_allclose(frames.quat_from_euler(roll, pitch, yaw), want,
                                   rtol=0, atol=4e-16)
    with np.errstate(invalid='ignore'):
        for (roll, pitch, yaw), want in zip(angles.tolist()[-3:], arrays[-3:]):
            np.testing.assert_array_equal(frames.quat_from_euler(roll, pitch, yaw), want)
