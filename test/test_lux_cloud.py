"""The driver's float32 point builder agrees with the codec's float64 formula (4 and 8 layers)."""
import math

import numpy as np
import pytest

from ros_sim_bridge.codec.ibeo import scan as S
from ros_sim_bridge.conversions.lux import CLOUD_DTYPE, CloudBuilder, drop_mask


def random_scan(n, mirror_side=0, upside_down=False, seed=0):
    rng = np.random.default_rng(seed)
    p = np.zeros(n, S.POINT_DTYPE)
    p['layer'] = rng.integers(0, 4, n)
    p['echo'] = rng.integers(0, 3, n)
    p['flags'] = rng.choice([0, 1, 2, 4, 8], n)
    p['angle_ticks'] = rng.integers(-5760, 5760, n)
    p['distance_cm'] = rng.integers(1, 65535, n)
    p['echo_width_cm'] = rng.integers(0, 500, n)
    flags = (0x400 if mirror_side else 0) | (0x100 if upside_down else 0)
    return S.LuxScan(7, 0, 0, 0, 0, 11520, 5759, -5760, flags=flags, points=p)


@pytest.mark.parametrize('n', [5000, 3 * CloudBuilder.CHUNK + 7])   # one chunk, four chunks
@pytest.mark.parametrize('mirror_side', [0, 1])
@pytest.mark.parametrize('eight_layer', [False, True])
def test_builder_geometry_matches_the_codec_formula(mirror_side, eight_layer, n):
    scan = random_scan(n, mirror_side)
    assert scan.mirror_side == mirror_side
    tilt = math.radians(1.6)
    got = CloudBuilder().build(scan, eight_layer=eight_layer, beam_tilt=tilt)
    want = S.scan_cloud(scan, eight_layer=eight_layer, beam_tilt_rad=tilt)
    assert got.dtype == CLOUD_DTYPE
    for f in ('x', 'y', 'z'):
        np.testing.assert_allclose(got[f], want[f], rtol=1e-5, atol=2e-4)  # float32: < 0.2 mm
    np.testing.assert_allclose(got['horizontal_angle'], want['angle'], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got['echo_width'], want['echo_width'], rtol=1e-6)
    np.testing.assert_array_equal(got['layer'], want['layer'])
    np.testing.assert_array_equal(got['echo'], want['echo'])
    np.testing.assert_array_equal(got['flags'], want['flags'])
    assert not got.view(np.uint8).reshape(-1, 24)[:, 23].any()


def test_known_point_by_hand():
    # layer 3 (+1.2°), 90° left (2880 ticks of 11520), 12.34 m
    p = np.zeros(1, S.POINT_DTYPE)
    p['layer'], p['angle_ticks'], p['distance_cm'], p['echo_width_cm'] = 3, 2880, 1234, 56
    cloud = CloudBuilder().build(S.LuxScan(1, 0, 0, 0, 0, 11520, 0, 0, points=p))[0]
    e = math.radians(1.2)
    assert cloud['x'] == pytest.approx(0.0, abs=1e-5)
    assert cloud['y'] == pytest.approx(12.34 * math.cos(e), rel=1e-6)
    assert cloud['z'] == pytest.approx(12.34 * math.sin(e), rel=1e-6)
    assert cloud['horizontal_angle'] == pytest.approx(math.pi / 2)
    assert cloud['echo_width'] == pytest.approx(0.56)


def test_layer_beyond_the_table_is_nan_and_filters_drop_points():
    scan = random_scan(2000, seed=3)
    scan.points['layer'][:10] = 9
    cloud = CloudBuilder().build(scan)
    assert np.isnan(cloud['x'][:10]).all() and np.isfinite(cloud['x'][10:]).all()
    kept = CloudBuilder(drop_flags=drop_mask(ground=True, clutter=True), first_echo_only=True
                        ).build(scan)
    expect = ((scan.points['flags'] & (S.POINT_FLAG_GROUND | S.POINT_FLAG_CLUTTER)) == 0) \
        & (scan.points['echo'] == 0)
    assert len(kept) == int(expect.sum()) and (kept['echo'] == 0).all()
