"""The driver's float32 point builder agrees with the float64 formula of ibeo/geometry.py
(4 and 8 layers).

Both of its paths: the compiled kernel (ibeo/ros/lux_cloud.c, installed by the build) and numpy.
"""
import math
import shutil
import struct
import subprocess
import sys
from dataclasses import replace as dataclass_replace

import numpy as np
import pytest

from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo import geometry as G
from ros_sim_bridge.ibeo.ros import lux_native
from ros_sim_bridge.ibeo.ros.conversions import CLOUD_DTYPE, CloudBuilder, drop_mask, is_dense
from unreadable_pages import runs_in_own_interpreter

PATHS = [pytest.param(True, id='kernel'), pytest.param(False, id='numpy')]


def test_the_build_installed_the_kernel():
    # colcon build compiles src/lux_cloud.c next to lux_native.py; only a big-endian host
    # goes without it (the kernel writes host floats into the little-endian layout).
    assert sys.byteorder != 'little' or lux_native.KERNEL is not None
    assert CloudBuilder().native == (lux_native.KERNEL is not None)


@pytest.mark.skipif(shutil.which('cc') is None or sys.byteorder != 'little',
                    reason='no C compiler to build stand-in libraries')
def test_a_kernel_of_another_interface_is_not_loaded(tmp_path):
    # lux_cloud.c gained an argument (m_per_cm from codec/units.py): a library built from an
    # older lux_cloud.c, or one answering another interface version, must not be called with
    # the new argument list; the builder then uses numpy
    sources = {'old': 'unsigned long sim_bridge_lux_cloud(void) { return 0; }\n',
               'other': 'int sim_bridge_lux_cloud_abi(void) { return 1; }\n'
                        'unsigned long sim_bridge_lux_cloud(void) { return 0; }\n',
               'same': f'int sim_bridge_lux_cloud_abi(void) {{ return {lux_native.ABI}; }}\n'
                       'unsigned long sim_bridge_lux_cloud(void) { return 0; }\n'}
    loaded = {}
    for name, code in sources.items():
        (tmp_path / f'{name}.c').write_text(code)
        lib = tmp_path / f'lib{name}.so'
        subprocess.run(['cc', '-shared', '-fPIC', '-o', str(lib), str(tmp_path / f'{name}.c')],
                       check=True)
        loaded[name] = lux_native._load(str(lib))
    assert loaded['old'] is None and loaded['other'] is None
    assert loaded['same'] is not None
    broken = tmp_path / 'libbroken.so'              # not a library at all: numpy, no error
    broken.write_bytes(b'\x7fELF cut short')
    assert lux_native._load(str(broken)) is None


def random_scan(n, mirror_side=0, upside_down=False, seed=0):
    rng = np.random.default_rng(seed)
    p = np.zeros(n, S.POINT_DTYPE)
    p['layer'] = rng.integers(0, 4, n)
    p['echo'] = rng.integers(0, 3, n)
    p['flags'] = rng.choice([0, 1, 2, 4, 8], n)
    p['angle_ticks'] = rng.integers(-5760, 5760, n)
    p['distance_cm'] = rng.integers(1, 65535, n)
    p['echo_width_cm'] = rng.integers(0, 500, n)
    status = S.STATUS_UPSIDE_DOWN if upside_down else 0
    return S.LuxScan(7, status, 0, 0, 0, 11520, 5759, -5760,
                     flags=S.SCAN_FLAG_MIRROR_SIDE if mirror_side else 0, points=p)


@pytest.mark.parametrize('native', PATHS)
@pytest.mark.parametrize('n', [5000, 3 * CloudBuilder.CHUNK + 7])   # one chunk, four chunks
@pytest.mark.parametrize('mirror_side, upside_down', [(0, False), (1, False), (0, True)])
@pytest.mark.parametrize('eight_layer', [False, True])
def test_builder_geometry_matches_the_codec_formula(mirror_side, upside_down, eight_layer, n,
                                                     native):
    scan = random_scan(n, mirror_side, upside_down)
    assert scan.mirror_side == mirror_side and scan.upside_down == upside_down
    tilt = math.radians(1.6)
    builder = CloudBuilder(native=native)
    got = builder.build(scan, eight_layer=eight_layer, beam_tilt=tilt)
    want = G.scan_cloud(scan, eight_layer=eight_layer, beam_tilt_rad=tilt)
    assert builder.nan_points == 0
    assert got.dtype == CLOUD_DTYPE
    for f in ('x', 'y', 'z'):
        np.testing.assert_allclose(got[f], want[f], rtol=1e-5, atol=2e-4)  # float32: < 0.2 mm
    np.testing.assert_allclose(got['horizontal_angle'], want['horizontal_angle'], rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(got['echo_width'], want['echo_width'], rtol=1e-6)
    np.testing.assert_array_equal(got['layer'], want['layer'])
    np.testing.assert_array_equal(got['echo'], want['echo'])
    np.testing.assert_array_equal(got['flags'], want['flags'])
    assert not got.view(np.uint8).reshape(-1, 24)[:, 23].any()


@pytest.mark.parametrize('native', PATHS)
def test_known_point_by_hand(native):
    # layer 3 (+1.2°), 90° left (2880 ticks of 11520), 12.34 m
    p = np.zeros(1, S.POINT_DTYPE)
    p['layer'], p['angle_ticks'], p['distance_cm'], p['echo_width_cm'] = 3, 2880, 1234, 56
    cloud = CloudBuilder(native=native).build(S.LuxScan(1, 0, 0, 0, 0, 11520, 0, 0,
                                                        points=p))[0]
    e = math.radians(1.2)
    assert cloud['x'] == pytest.approx(0.0, abs=1e-5)
    assert cloud['y'] == pytest.approx(12.34 * math.cos(e), rel=1e-6)
    assert cloud['z'] == pytest.approx(12.34 * math.sin(e), rel=1e-6)
    assert cloud['horizontal_angle'] == pytest.approx(math.pi / 2)
    assert cloud['echo_width'] == pytest.approx(0.56)


def wire_point(layer_echo, flags, angle, distance, width):
    """One scan point as spec §3 lays it out: u8 layer|echo<<4, u8 flags, i16 angle (ticks),
    u16 distance (cm), u16 echo pulse width (cm), u16 reserved; little-endian."""
    return struct.pack('<BBhHHH', layer_echo, flags, angle, distance, width, 0xBEEF)


def cloud_records(cloud):
    """The published bytes, read by the point-field table of docs/ibeo.md (offsets 0..23)."""
    raw = np.ascontiguousarray(cloud).tobytes()
    return [struct.unpack_from('<5f4B', raw, 24 * i) for i in range(len(cloud))]


@pytest.mark.parametrize('native', PATHS)
def test_wire_bytes_written_from_the_spec_table(native):
    # tick 11520 of a rotation: 1/32°.  -1440 ticks = 45° right; 0x61 = echo 6, layer 1;
    # flags 0x4C: reserved bit 0x40 (real LD-MRS) masked, ground|dirt kept.
    body = (wire_point(0x61, 0x4C, -1440, 2000, 123) + wire_point(0x00, 0x01, 0, 100, 0)
            + wire_point(0x23, 0x00, 5760, 65535, 65535))
    wire = np.frombuffer(body, S.WIRE_POINT_DTYPE)
    scan = S.LuxScan(1, 0, 0, 0, 0, 11520, 5760, -1440)
    recs = cloud_records(CloudBuilder(native=native).build_wire(scan, wire))
    e = [math.radians(d) for d in S.DEFAULT_LAYER_ELEVATIONS_DEG]
    c45 = math.cos(math.pi / 4)
    want = [(20 * math.cos(e[1]) * c45, -20 * math.cos(e[1]) * c45, 20 * math.sin(e[1]),
             -math.pi / 4, 1.23, 1, 6, 0x0C, 0),
            (math.cos(e[0]), 0.0, math.sin(e[0]), 0.0, 0.0, 0, 0, 0x01, 0),
            (-655.35 * math.cos(e[3]), 0.0, 655.35 * math.sin(e[3]), math.pi, 655.35, 3, 2, 0, 0)]
    for got, exp in zip(recs, want):
        assert got[:5] == pytest.approx(exp[:5], rel=1e-6, abs=1e-4)
        assert got[5:] == exp[5:]


@pytest.mark.parametrize('native', PATHS)
def test_each_scan_layout_gets_its_own_tables(native):
    # the kernel caches trigonometry per ticks-per-rotation and tilt direction (mirror side,
    # flipped when upside down): switching between layouts must not reuse a wrong table
    builder = CloudBuilder(native=native)
    tilt = math.radians(1.6)
    for tpr, side, down in [(11520, 0, False), (5760, 0, False), (11520, 1, False),
                            (11520, 0, False), (5760, 1, False), (11520, 1, True),
                            (11520, 0, True), (11520, 1, False)]:
        scan = dataclass_replace(random_scan(500, side, down, seed=tpr + side),
                                 ticks_per_rotation=tpr)
        got = builder.build(scan, eight_layer=True, beam_tilt=tilt)
        want = G.scan_cloud(scan, eight_layer=True, beam_tilt_rad=tilt)
        for f in ('x', 'y', 'z'):
            np.testing.assert_allclose(got[f], want[f], rtol=1e-5, atol=2e-4)


def test_kernel_refuses_an_output_of_another_length():
    scan = random_scan(100)
    builder = CloudBuilder(native=True)
    with pytest.raises(TypeError, match='same length'):
        builder.build(scan, alloc=lambda n: np.empty(n - 1, CLOUD_DTYPE))
    assert len(builder.build(scan, alloc=lambda n: np.empty(n, CLOUD_DTYPE))) == 100


@pytest.mark.parametrize('native', PATHS)
def test_layer_beyond_the_table_is_nan_and_filters_drop_points(native):
    scan = random_scan(2000, seed=3)
    scan.points['layer'][:10] = 9
    builder = CloudBuilder(native=native)
    cloud = builder.build(scan)
    assert np.isnan(cloud['x'][:10]).all() and np.isfinite(cloud['x'][10:]).all()
    assert builder.nan_points == 10
    assert not is_dense(cloud) and is_dense(cloud[10:])
    kept = CloudBuilder(drop_flags=drop_mask(ground=True, clutter=True), first_echo_only=True,
                        native=native).build(scan)
    expect = ((scan.points['flags'] & (S.POINT_FLAG_GROUND | S.POINT_FLAG_CLUTTER)) == 0) \
        & (scan.points['echo'] == 0)
    assert len(kept) == int(expect.sum()) and (kept['echo'] == 0).all()


# --- issue #10, defect 1: the kernel must never read a table the cache has freed -------------

#: The issue's trigger: 8 layers, mirror sides alternating, ticks per rotation creeping up, so
#: that the tables of nine scan layouts pass through a cache of eight.
TRIGGER = [(11520, 0), (11520, 1), (11521, 0), (11521, 1), (11522, 0), (11522, 1)]


def trigger_scans(repeat=2, n=3000):
    for r in range(repeat):
        for i, (tpr, side) in enumerate(TRIGGER):
            yield dataclass_replace(random_scan(n, side, seed=100 * r + i),
                                    ticks_per_rotation=tpr, scan_number=6 * r + i)


def test_issue_trigger_gives_the_codec_formula_points_numpy():
    # the kernel path runs the same comparison in its own process (below): before the fix it
    # crashed with SIGSEGV, which would take the whole test session down in-process
    builder = CloudBuilder(native=False)
    tilt = math.radians(1.6)
    for scan in trigger_scans():
        got = builder.build(scan, eight_layer=True, beam_tilt=tilt)
        want = G.scan_cloud(scan, eight_layer=True, beam_tilt_rad=tilt)
        for f in ('x', 'y', 'z'):
            np.testing.assert_allclose(got[f], want[f], rtol=1e-5, atol=2e-4,
                                       err_msg=f'scan {scan.scan_number} field {f}')


@pytest.mark.parametrize('cache', [1, 2, 8])
def test_kernel_is_only_given_live_tables(monkeypatch, cache):
    # every table made is tracked by a weak reference: at each kernel call, every table address
    # handed over must belong to a table that is still alive (not freed by a cache clear)
    import weakref
    made = []                                   # (weakref, address)

    def tracked(make):
        def wrapper(*args):
            table = make(*args)
            made.append((weakref.ref(table), table.ctypes.data))
            return table
        return wrapper

    real_kernel = lux_native.KERNEL
    calls = []

    def checking_kernel(wire, n, out, tick_trig, tilt_trig, layer_trig, k, m_per_cm, lift):
        live = {addr for ref, addr in made if ref() is not None}
        for name, addr in (('tick', tick_trig), ('tilt', tilt_trig)):
            if addr is not None:
                assert addr in live, f'{name} table at 0x{addr:x} was freed before the call'
        calls.append(tilt_trig is not None)
        return real_kernel(wire, n, out, tick_trig, tilt_trig, layer_trig, k, m_per_cm, lift)

    monkeypatch.setattr(lux_native, 'tick_table', tracked(lux_native.tick_table))
    monkeypatch.setattr(lux_native, 'tilt_table', tracked(lux_native.tilt_table))
    monkeypatch.setattr(lux_native, 'KERNEL', checking_kernel)
    builder = CloudBuilder(native=True)
    builder.TRIG_CACHE = cache
    for scan in trigger_scans(n=200):
        builder.build(scan, eight_layer=True, beam_tilt=math.radians(1.6))
    assert len(calls) == 2 * len(TRIGGER) and all(calls)


def test_issue_trigger_in_a_fresh_process_with_a_one_table_cache(tmp_path):
    # a crash (SIGSEGV) must not take pytest down: the kernel runs in its own interpreter with
    # every table evicted at once, and the points are compared with the codec formula there
    import subprocess
    code = '''
import math, sys
from dataclasses import replace
import numpy as np
sys.path += %r
from test_lux_cloud import trigger_scans
from ros_sim_bridge.ibeo import geometry as G
from ros_sim_bridge.ibeo.ros.conversions import CloudBuilder
b = CloudBuilder(native=True)
b.TRIG_CACHE = 1
worst = 0.0
for scan in trigger_scans(repeat=4):
    got = b.build(scan, eight_layer=True, beam_tilt=math.radians(1.6))
    want = G.scan_cloud(scan, eight_layer=True, beam_tilt_rad=math.radians(1.6))
    for f in 'xyz':
        worst = max(worst, float(np.max(np.abs(got[f] - want[f]))))
print(worst)
''' % ([str(__import__('pathlib').Path(__file__).parent)],)
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)   # not the source tree: the built package
    assert run.returncode == 0, run.stderr[-2000:]
    assert float(run.stdout.split()[-1]) < 1e-2     # float32 over 655 m: well below 1 cm


def test_one_cloud_dtype_and_star_import_of_the_conversions():
    # issue #9: the codec and the conversions had two CLOUD_DTYPEs, and __all__ named things
    # that were not there (``from … import *`` failed)
    namespace = {}
    exec('from ros_sim_bridge.ibeo.ros.conversions import *', namespace)
    from ros_sim_bridge.ibeo.ros import conversions
    assert set(conversions.__all__) <= set(namespace)
    assert namespace['CLOUD_DTYPE'] is G.CLOUD_DTYPE
    assert G.CLOUD_DTYPE.itemsize == 24 and G.CLOUD_DTYPE.names == (
        'x', 'y', 'z', 'horizontal_angle', 'echo_width', 'layer', 'echo', 'flags')
    assert [G.CLOUD_DTYPE.fields[n][1] for n in G.CLOUD_DTYPE.names] == [0, 4, 8, 12, 16, 20,
                                                                        21, 22]


def block_wire(n, ticks, seed=3):
    """n wire points with every byte random except the angle (``ticks``): all layer and echo
    nibbles (layers beyond the table), all flag bits, all distances and widths."""
    rng = np.random.default_rng(seed)
    wire = np.zeros(n, S.WIRE_POINT_DTYPE)
    for name, high in (('layer_echo', 256), ('flags', 256), ('distance', 65536),
                       ('echo_width', 65536), ('reserved', 65536)):
        wire[name] = rng.integers(0, high, n)
    wire['angle'] = ticks
    return wire


def scan_ticks(n, top, per_tick=17, ascending=False):
    """A real scan's angles: sorted (descending as the LUX sends them), ~per_tick points a
    tick, from ``top`` down."""
    t = top - np.arange(n) // per_tick
    return t[::-1] if ascending else t


#: n = 413: 25 blocks of 16 (AVX-512), then one of 8 (AVX2), then 5 alone.  Angles: random
#: over all int16 (16-point blocks spanning many ticks: the gather), a scan's sorted runs (a
#: block spans 1-2 ticks: the table rows by two loads), sparser runs (4 points a tick: up to 4
#: ticks), ascending, and runs at both ends of the int16 range (the rows' loads stay inside the
#: table).
BLOCK_TICKS = {
    'random': lambda n: np.random.default_rng(5).integers(-32768, 32768, n),
    'scan': lambda n: scan_ticks(n, 1600),
    'sparse': lambda n: scan_ticks(n, 1600, per_tick=4),
    'ascending': lambda n: scan_ticks(n, 1600, per_tick=3, ascending=True),
    'top': lambda n: scan_ticks(n, 32767, per_tick=2),
    'bottom': lambda n: scan_ticks(n, -32768 + 413 // 2, per_tick=2),
}


@pytest.mark.skipif(lux_native.KERNEL is None, reason='the kernel is not built')
@pytest.mark.parametrize('path', lux_native.PATHS)
@pytest.mark.parametrize('angles', sorted(BLOCK_TICKS))
@pytest.mark.parametrize('tilt, lift', [(0.0, 0), (0.03, 4), (0.03, 255)])
def test_kernel_blocks_give_the_bits_of_one_point_at_a_time(path, angles, tilt, lift):
    # lux_cloud.c builds 16 points a step where the CPU has AVX-512, 8 where it has AVX2, and
    # the rest one at a time: a point built in a block of any path this CPU has has the same
    # bytes as the same point built alone (every wire value, layers beyond the table)
    kernel = lux_native.kernel_on(path)
    if kernel is None:
        pytest.skip(f'no {path} path on this CPU')
    n = 16 * 25 + 8 + 5
    wire = block_wire(n, BLOCK_TICKS[angles](n))
    ticks = lux_native.tick_table(11520)
    tilt_trig = lux_native.tilt_table(11520, 1, tilt, False) if tilt else None
    layers = lux_native.layer_table(np.radians([-1.2, -0.4, 0.4, 1.2, 2.0]))
    args = (ticks.ctypes.data, None if tilt_trig is None else tilt_trig.ctypes.data,
            layers.ctypes.data, np.float32(2 * np.pi / 11520), np.float32(0.01), lift)
    whole = np.zeros(n, CLOUD_DTYPE)
    nan = kernel(wire.ctypes.data, n, whole.ctypes.data, *args)
    alone = np.ones(n, CLOUD_DTYPE)
    scalar = lux_native.kernel_on('scalar')
    nan_alone = sum(scalar(wire[i:i + 1].ctypes.data, 1, alone[i:i + 1].ctypes.data, *args)
                    for i in range(n))
    assert whole.tobytes() == alone.tobytes()
    assert nan == nan_alone == int(np.count_nonzero(np.isnan(whole['x'])))
    assert 0 < nan < n
    widest = [p for p in lux_native.PATHS if lux_native.kernel_on(p) is not None][-1]
    if path == widest:                  # KERNEL, what the node calls, takes that path
        default = np.ones(n, CLOUD_DTYPE)
        assert lux_native.KERNEL(wire.ctypes.data, n, default.ctypes.data, *args) == nan
        assert default.tobytes() == whole.tobytes()


@pytest.mark.skipif(lux_native.KERNEL is None, reason='the kernel is not built')
@pytest.mark.parametrize('path', lux_native.PATHS)
@pytest.mark.parametrize('n', [16 * 25 + 8 + 5, 5])
def test_kernel_output_at_any_alignment_same_bits_and_nothing_written_outside(path, n):
    # the AVX-512 path builds the first points (up to 7) by the narrower paths so that its
    # 64-byte stores are aligned: the cloud starting at every 8-byte offset within 64 bytes
    # (and at one not a multiple of 8) has the bits of the scalar path, and the 64 bytes
    # before and after it stay as they were
    kernel = lux_native.kernel_on(path)
    if kernel is None:
        pytest.skip(f'no {path} path on this CPU')
    wire = block_wire(n, BLOCK_TICKS['scan'](n))
    ticks = lux_native.tick_table(11520)
    tilt_trig = lux_native.tilt_table(11520, 1, 0.03, False)
    layers = lux_native.layer_table(np.radians([-1.2, -0.4, 0.4, 1.2, 2.0]))
    args = (ticks.ctypes.data, tilt_trig.ctypes.data, layers.ctypes.data,
            np.float32(2 * np.pi / 11520), np.float32(0.01), 3)
    expected = np.zeros(n, CLOUD_DTYPE)
    nan = lux_native.kernel_on('scalar')(wire.ctypes.data, n, expected.ctypes.data, *args)
    raw = np.zeros(24 * n + 256, np.uint8)
    for offset in [*range(0, 64, 8), 4]:
        start = 64 + (-raw.ctypes.data) % 64 + offset
        raw[:] = 0xA5
        assert kernel(wire.ctypes.data, n, raw[start:].ctypes.data, *args) == nan
        assert raw[start:start + 24 * n].tobytes() == expected.tobytes(), offset
        assert not np.any(raw[start - 64:start] != 0xA5), offset
        assert not np.any(raw[start + 24 * n:start + 24 * n + 64] != 0xA5), offset


def test_every_path_this_cpu_has_is_tested():
    # the tests above skip a path the CPU lacks: on x86-64 with AVX2 (the CI machines), at
    # least the AVX2 path and the one-point-at-a-time path run
    import platform
    have = [p for p in lux_native.PATHS if lux_native.kernel_on(p) is not None]
    assert have[0] == 'scalar'
    flags = set()
    if sys.platform == 'linux' and platform.machine() == 'x86_64':
        with open('/proc/cpuinfo') as info:
            flags = {f for line in info if line.startswith('flags') for f in line.split()}
    if 'avx2' in flags:
        assert 'avx2' in have
    if flags >= {'avx512f', 'avx512bw', 'avx512vl', 'avx512dq', 'avx512vbmi'}:
        assert have == list(lux_native.PATHS)
    assert lux_native.kernel_on('no such path') is None


GUARDED = '''
import numpy as np
from test_lux_cloud import BLOCK_TICKS, block_wire
from unreadable_pages import guarded
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo.ros import lux_native


def table(make):
    t = guarded(65536 * 8).view(np.float32).reshape(65536, 2)
    t[:] = make
    return t


ticks = table(lux_native.tick_table(11520))
tilt = table(lux_native.tilt_table(11520, 1, 0.03, False))
layers = lux_native.layer_table(np.radians([-1.2, -0.4, 0.4, 1.2]))
runs = 0
for path in lux_native.PATHS:
    kernel = lux_native.kernel_on(path)
    if kernel is None:
        continue
    for n in (16 * 30, 16 * 30 + 8, 16 * 30 + 13, 1):
        for angles in ('top', 'bottom', 'scan', 'random'):
            wire = guarded(10 * n).view(S.WIRE_POINT_DTYPE)
            wire[:] = block_wire(n, BLOCK_TICKS[angles](n))
            out = np.empty(n, [('b', 'V24')])
            for trig in (None, tilt):
                kernel(wire.ctypes.data, n, out.ctypes.data, ticks.ctypes.data,
                       None if trig is None else trig.ctypes.data, layers.ctypes.data,
                       2 * np.pi / 11520, 0.01, 0)
                runs += 1
print(runs)
'''


@pytest.mark.skipif(lux_native.KERNEL is None or not sys.platform.startswith('linux'),
                    reason='the kernel is not built, or no mprotect')
def test_kernel_reads_nothing_past_the_wire_and_the_tables(tmp_path):
    # each path's loads stay inside the n * 10 wire bytes and the 65536-row tables: the wire
    # ends at, and the tables end at and start after, a page that cannot be read (a read there
    # is SIGSEGV: run in its own interpreter); angles at both ends of the int16 range
    runs = runs_in_own_interpreter(GUARDED, tmp_path)
    have = [p for p in lux_native.PATHS if lux_native.kernel_on(p) is not None]
    assert runs == len(have) * 4 * 4 * 2
