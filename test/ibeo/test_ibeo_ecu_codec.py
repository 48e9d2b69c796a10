"""Ibeo ECU data types: golden bytes written from the spec tables (struct.pack_into at the
documented offsets, big-endian; never via our encoders), then round trips through the
encoders, then bad input (absurd counts, truncation) → CodecError naming field and offset."""
import math
import struct
import sys

import numpy as np
import pytest

from ros_sim_bridge.core.binary import BAD_VALUE, TRUNCATED, UNKNOWN_LAYOUT, CodecError
from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.ibeo.codec import can_message as CAN
from ros_sim_bridge.ibeo.codec import carriage_way as CW
from ros_sim_bridge.ibeo.codec import frame_end as FE
from ros_sim_bridge.ibeo.codec import frame_index as FI
from ros_sim_bridge.ibeo.codec import meta_information as MI
from ros_sim_bridge.ibeo.codec import object_association as OA
from ros_sim_bridge.ibeo.codec import point_cloud_plane as PCP
from ros_sim_bridge.ibeo.codec import time_record as TR
from ros_sim_bridge.ibeo.codec import gps_imu as G
from ros_sim_bridge.ibeo.codec import image as IM
from ros_sim_bridge.ibeo.codec import measurement_list as ML
from ros_sim_bridge.ibeo.codec import objects_ecu as O
from ros_sim_bridge.ibeo.codec import odometry as OD
from ros_sim_bridge.ibeo.codec import scan_ecu as S
from ros_sim_bridge.ibeo.codec import set_filter as SF
from ros_sim_bridge.ibeo.codec import system_monitoring as SM
from ros_sim_bridge.ibeo.codec import vehicle_state_ecu as V


def put(buf, offset, fmt, *values):
    struct.pack_into('>' + fmt, buf, offset, *values)


def f32(x):
    return struct.unpack('>f', struct.pack('>f', x))[0]


# --- §9 scan data 0x2205 ----------------------------------------------------------------------

def golden_2205() -> bytes:
    """Two scanner infos (148 B) and three points (28 B), written from the §9 tables."""
    body = bytearray(24 + 2 * 148 + 3 * 28)
    put(body, 0, 'Q', (3_900_000_000 << 32) | 0x80000000)   # scan start NTP
    put(body, 8, 'I', 80_000)                                # end time offset µs
    put(body, 12, 'I', 0x0A00)                               # fused (bit 9) + vehicle (bit 11)
    put(body, 16, 'H', 4242)
    put(body, 18, 'H', 3)
    body[20] = 2
    for k, dev in enumerate((7, 9)):
        at = 24 + 148 * k
        body[at] = dev
        body[at + 1] = 6                                      # ibeo LUX
        put(body, at + 2, 'H', 100 + k)
        put(body, at + 8, 'f', 0.8)
        put(body, at + 12, 'f', -0.8)
        put(body, at + 16, 'Q', 11 + k)
        put(body, at + 24, 'Q', 21 + k)
        put(body, at + 32, 'Q', 31 + k)
        put(body, at + 40, 'Q', 41 + k)
        put(body, at + 48, 'f', 12.5)
        put(body, at + 52, 'f', 0.01)
        put(body, at + 56, 'I', 0x0403)
        put(body, at + 60, 'ffffff', 0.1, 0.2, 0.3, 3.5, -0.5 + k, 0.4)
        put(body, at + 84, 'ff', 0.8, 0.0025)                 # resolution 1
        put(body, at + 92, 'ff', 0.2, 0.005)                  # resolution 2
        put(body, at + 140, 'ff', -0.7, 0.125)                # resolution 8
    at = 24 + 2 * 148
    for i in range(3):
        p = at + 28 * i
        put(body, p, 'ffff', 10.0 + i, -2.0 * i, 0.25, 0.5)
        body[p + 16] = (7, 9, 7)[i]
        body[p + 17] = i                                      # layer
        body[p + 18] = 2 - i                                  # echo
        body[p + 19] = 0xEE                                   # reserved
        put(body, p + 20, 'I', (70_000, 0x00012345, 0xFFFFFFFE)[i])   # UINT32 µs
        put(body, p + 24, 'H', (0x1000, 0x0088, 0x1001)[i])   # UINT16 flags
        put(body, p + 26, 'H', 0xBEEF)                        # reserved
    return bytes(body)


def test_scan_2205_golden_every_field():
    head, scan = ibeo.decode_message(0x2205, golden_2205()), None
    scan = head
    assert isinstance(scan, S.EcuScan) and scan.DATA_TYPE == 0x2205
    assert scan.start_ntp >> 32 == 3_900_000_000 and scan.end_offset_us == 80_000
    assert scan.scan_number == 4242 and scan.fused and scan.vehicle_coordinates
    assert scan.mirror_side == 0
    info = scan.scanners
    assert list(info['device_id']) == [7, 9] and list(info['scanner_type']) == [6, 6]
    assert list(info['scan_number']) == [100, 101]
    assert info['start_angle'][0] == f32(0.8) and info['end_angle'][1] == f32(-0.8)
    assert list(info['start_ntp']) == [11, 12] and list(info['end_ntp']) == [21, 22]
    assert list(info['device_start_ntp']) == [31, 32] and list(info['device_end_ntp']) == [41, 42]
    assert info['frequency'][0] == 12.5 and info['beam_tilt'][0] == f32(0.01)
    assert info['scan_flags'][1] == 0x0403
    assert info['mounting_yaw'][0] == f32(0.1) and info['mounting_roll'][0] == f32(0.3)
    assert info['mounting_x'][1] == 3.5 and info['mounting_y'][1] == 0.5
    assert info['mounting_z'][0] == f32(0.4)
    res = info['resolutions']
    assert res.shape == (2, 8)
    assert res['start_angle'][0, 0] == f32(0.8) and res['resolution'][0, 0] == f32(0.0025)
    assert res['start_angle'][1, 1] == f32(0.2) and res['resolution'][1, 1] == f32(0.005)
    assert res['start_angle'][0, 7] == f32(-0.7) and res['resolution'][0, 7] == 0.125
    assert np.all(res['resolution'][:, 2:7] == 0)
    p = scan.points
    assert list(p['x']) == [10.0, 11.0, 12.0] and list(p['y']) == [0.0, -2.0, -4.0]
    assert list(p['device_id']) == [7, 9, 7] and list(p['layer']) == [0, 1, 2]
    assert list(p['echo']) == [2, 1, 0] and p['echo_width'][0] == 0.5
    # SUPPLEMENT §3.3: time offset is UINT32 µs, flags UINT16 (astuff reads both too narrow)
    assert list(p['time_offset_us']) == [70_000, 0x12345, 0xFFFFFFFE]
    assert list(p['flags']) == [0x1000, 0x0088, 0x1001]
    assert p.dtype == S.POINT_DTYPE and p.dtype.itemsize == 28


def test_scan_points_compiled_and_numpy_swaps_agree_byte_for_byte():
    # colcon build compiles ecu_points.c beside scan_ecu.py; only big-endian hosts go without
    assert sys.byteorder != 'little' or S.KERNEL is not None
    rng = np.random.default_rng(5)
    noise = rng.integers(0, 256, 28 * 5000, dtype=np.uint8).tobytes()   # NaNs and all
    finite = bytearray(noise)
    for i in range(5000):                               # x, y, z finite; the rest noise
        finite[28 * i:28 * i + 12] = struct.pack('>fff', *rng.normal(0, 50, 3))
    variants = [(bytes(finite), 0), (golden_2205()[24 + 2 * 148:], 0)]
    for field, bits in [(0, 0x7FC00000), (1, 0x7F800000), (2, 0xFF800000), (3, 0x7FC00000)]:
        bad = bytearray(finite)                         # NaN / ±Inf in x, y, z, echo width
        bad[28 * 77 + 4 * field:28 * 77 + 4 * field + 4] = struct.pack('>I', bits)
        variants.append((bytes(bad), int(field != 3)))  # a NaN echo width keeps it dense
    words = np.frombuffer(noise, '>u4').reshape(-1, 7)[:, :3]    # x, y, z: exponent all ones
    variants.append((noise, int(((words & 0x7F800000) == 0x7F800000).any(axis=1).sum())))
    for data, non_finite in variants:
        points = np.frombuffer(data, S.WIRE_POINT_DTYPE)
        native, count = S.host_points(points)
        slow, slow_count = S.host_points(points, native=False)
        assert native.tobytes() == slow.tobytes()
        assert not native.view(np.uint8).reshape(-1, 28)[:, [19, 26, 27]].any()  # reserved: 0
        assert count == slow_count == non_finite
    assert variants[-1][1] > 0                          # the noise has some
    scan = S.decode_scan_2205(golden_2205())
    assert scan.non_finite == 0 and scan.dense is True


# The compiled kernel works on blocks of points (SIMD where the CPU has it) and one point at
# a time for the rest: sizes around the block sizes, inputs at any byte offset (the wire array
# is a view into a file's mmap), against the numpy path with the count worked out from its x, y, z.
needs_kernel = pytest.mark.skipif(sys.byteorder != 'little', reason='no kernel on big-endian')
KERNEL_SIZES = (0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 1000, 60_001)


def kernel_points(wire: np.ndarray) -> tuple[bytes, int, bytes]:
    """(the kernel's points, its non-finite count, the 64 bytes after its output, which it
    must leave as they were)."""
    out = np.full(28 * len(wire) + 64, 0xA5, np.uint8)
    count = S.KERNEL(wire.ctypes.data, len(wire), out.ctypes.data)
    return out[:28 * len(wire)].tobytes(), count, out[28 * len(wire):].tobytes()


def numpy_points(wire: np.ndarray) -> tuple[bytes, int]:
    """(the numpy path's points, how many of them have an x, y or z that is not finite)."""
    points, _ = S.host_points(wire, native=False)
    finite = np.isfinite(points['x']) & np.isfinite(points['y']) & np.isfinite(points['z'])
    return points.tobytes(), int(np.count_nonzero(~finite))


def assert_kernel_equals_numpy(wire: np.ndarray):
    points, count, after = kernel_points(wire)
    assert (points, count) == numpy_points(wire)
    assert after == b'\xA5' * 64                          # nothing written past the end
    assert S.host_points(wire)[1] == count


@needs_kernel
@pytest.mark.parametrize('n', KERNEL_SIZES)
def test_scan_points_kernel_equals_numpy_on_random_bytes_at_any_offset(n):
    assert S.KERNEL is not None
    rng = np.random.default_rng(n)
    raw = rng.integers(0, 256, 28 * n + 32, dtype=np.uint8).tobytes()  # a few NaN, ±Inf
    for offset in range(33) if n < 1000 else (0, 1, 2, 3, 5, 16, 31):
        assert_kernel_equals_numpy(np.frombuffer(raw, S.WIRE_POINT_DTYPE, n, offset))
    if n == 60_001:                                 # random bytes do hold non-finite points
        assert numpy_points(np.frombuffer(raw, S.WIRE_POINT_DTYPE, n))[1] > 0


@needs_kernel
def test_scan_points_kernel_counts_a_non_finite_point_once_wherever_it_is():
    rng = np.random.default_rng(9)
    n = 17                                          # every place in a block of 8, and a tail
    base = bytearray(rng.integers(0, 256, 28 * n, dtype=np.uint8).tobytes())
    for i in range(n):                              # x, y, z finite; the rest random
        base[28 * i:28 * i + 12] = struct.pack('>fff', *rng.normal(0, 50, 3))
    specials = (0x7FC00000, 0xFFC00001, 0x7F800000, 0xFF800000)  # NaNs, +Inf, -Inf

    def check(data: bytearray, non_finite: int):
        for offset in (0, 3):
            wire = np.frombuffer(bytes(offset) + data, S.WIRE_POINT_DTYPE, n, offset)
            assert_kernel_equals_numpy(wire)
            assert kernel_points(wire)[1] == non_finite

    check(base, 0)
    for i in range(n):
        for word in range(7):                       # x, y, z count; echo width .. flags not
            for bits in specials:
                data = bytearray(base)
                put(data, 28 * i + 4 * word, 'I', bits)
                check(data, 1 if word < 3 else 0)
        data = bytearray(base)                      # x, y and z of one point: still one
        put(data, 28 * i, 'III', *specials[:3])
        check(data, 1)
    data = bytearray(base)
    for i in range(0, n, 2):                        # every other point, one word each
        put(data, 28 * i + 4 * (i % 3), 'I', specials[i % 4])
    check(data, (n + 1) // 2)



# ecu_points.c has a path of blocks (8 points a step with AVX2, the first 0-7 points one at a
# time until its stores are aligned) and one point at a time: every path this CPU has gives
# the bytes and count of the one-point-at-a-time path.
PATH_SIZES = (1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 16 * 40 + 13)
SPECIALS = (0x7FC00000, 0xFFC00001, 0x7F800001, 0x7F800000, 0xFF800000,    # NaNs, ±Inf
            0x00000001, 0x807FFFFF, 0x80000000, 0x7F7FFFFF, 0xFF7FFFFF)    # denormals, -0.0,
                                                                           # ±largest finite


def path_wire(n: int, seed: int) -> bytes:
    """n wire points of random bytes (reserved bytes too), and specials in x, y, z and echo
    width of about every fifth point."""
    rng = np.random.default_rng(seed)
    data = bytearray(rng.integers(0, 256, 28 * n, dtype=np.uint8).tobytes())
    for i in rng.choice(n, max(1, n // 5), replace=False):
        for word in rng.choice(4, int(rng.integers(1, 4)), replace=False):
            put(data, 28 * int(i) + 4 * int(word), 'I', int(rng.choice(SPECIALS)))
    return bytes(data)


def path_points(kernel, wire: np.ndarray, out_offset: int) -> tuple[bytes, int]:
    """(the points kernel writes at out_offset of a buffer, its count); the bytes around them
    left as they were."""
    n = len(wire)
    out = np.full(out_offset + 28 * n + 64, 0xA5, np.uint8)
    count = kernel(wire.ctypes.data, n, out[out_offset:].ctypes.data)
    assert not (out[:out_offset] != 0xA5).any() and not (out[out_offset + 28 * n:] != 0xA5).any()
    return out[out_offset:out_offset + 28 * n].tobytes(), count


@needs_kernel
@pytest.mark.parametrize('path', S.PATHS)
@pytest.mark.parametrize('n', PATH_SIZES)
def test_every_kernel_path_gives_the_bits_of_the_scalar_path(path, n):
    kernel = S.kernel_on(path)
    if kernel is None:
        pytest.skip(f'no {path} path on this CPU')
    scalar = S.kernel_on('scalar')
    raw = path_wire(n, n) + bytes(64)
    for wire_offset in (0, 1, 4, 28, 60):
        wire = np.frombuffer(raw, S.WIRE_POINT_DTYPE, n, wire_offset)
        alone = [path_points(scalar, wire[i:i + 1], 0) for i in range(n)]
        want = (b''.join(p for p, _ in alone), sum(c for _, c in alone))
        for out_offset in range(0, 64, 1 if wire_offset == 0 else 3):  # the aligned-store
            assert path_points(kernel, wire, out_offset) == want       # lead: 0-7 points
        assert want[0] == numpy_points(wire)[0] and want[1] == numpy_points(wire)[1]
        if path == [p for p in S.PATHS if S.kernel_on(p) is not None][-1]:
            assert path_points(S.KERNEL, wire, 0) == want   # KERNEL takes the widest
    if n > 600:                             # specials and random bytes: some of each
        assert 0 < want[1] < n


@needs_kernel
@pytest.mark.parametrize('path', S.PATHS)
def test_every_kernel_path_counts_a_non_finite_point_once_wherever_it_is(path):
    # every place in a block and around it: one special word in x, y or z counts once,
    # in echo width .. flags not; all three of a point once
    kernel = S.kernel_on(path)
    if kernel is None:
        pytest.skip(f'no {path} path on this CPU')
    rng = np.random.default_rng(3)
    n = 16 * 3 + 5
    base = bytearray(rng.integers(0, 256, 28 * n, dtype=np.uint8).tobytes())
    for i in range(n):
        base[28 * i:28 * i + 12] = struct.pack('>fff', *rng.normal(0, 50, 3))
    for i in range(n):
        for word, bits in [(w, b) for w in range(7) for b in (0x7FC00000, 0xFF800000)] + [
                (w, b) for w in range(3) for b in (0x00000001, 0x80000000)]:
            data = bytearray(base)
            put(data, 28 * i + 4 * word, 'I', bits)
            wire = np.frombuffer(bytes(data), S.WIRE_POINT_DTYPE)
            special = word < 3 and bits & 0x7F800000 == 0x7F800000
            assert path_points(kernel, wire, 4)[1] == int(special)
        data = bytearray(base)
        put(data, 28 * i, 'III', 0x7FC00000, 0x7F800000, 0xFF800000)
        assert path_points(kernel, np.frombuffer(bytes(data), S.WIRE_POINT_DTYPE), 0)[1] == 1


def test_every_kernel_path_this_cpu_has_is_tested():
    # the tests above skip a path the CPU lacks: on x86-64 with AVX2 (the CI machines), at
    # least the AVX2 path and the one-point-at-a-time path run
    import platform
    if sys.byteorder != 'little':
        assert S.KERNEL is None and S.kernel_on('scalar') is None
        return
    have = [p for p in S.PATHS if S.kernel_on(p) is not None]
    assert have[0] == 'scalar'
    flags = set()
    if sys.platform == 'linux' and platform.machine() == 'x86_64':
        with open('/proc/cpuinfo') as info:
            flags = {f for line in info if line.startswith('flags') for f in line.split()}
    if 'avx2' in flags:
        assert 'avx2' in have
        assert have == list(S.PATHS)
    assert S.kernel_on('no such path') is None


GUARDED = '''
import numpy as np
from test_ibeo_ecu_codec import path_wire
from unreadable_pages import guarded
from ros_sim_bridge.ibeo.codec import scan_ecu as S
runs = 0
for path in S.PATHS:
    kernel = S.kernel_on(path)
    if kernel is None:
        continue
    for n in (1, 7, 8, 15, 16, 17, 8 * 60, 8 * 60 + 1, 8 * 60 + 5, 8 * 60 + 7):
        wire = guarded(28 * n)
        wire[:] = np.frombuffer(path_wire(n, n), np.uint8)
        for spare in (0, 1, 4, 28):        # the output ends at the page, or 1-28 bytes before
            out = guarded(28 * n + spare)
            kernel(wire.ctypes.data, n, out.ctypes.data)
            runs += 1
print(runs)
'''


@pytest.mark.skipif(S.KERNEL is None or not sys.platform.startswith('linux'),
                    reason='the kernel is not built, or no mprotect')
def test_kernel_paths_touch_nothing_past_the_wire_and_the_output(tmp_path):
    # each path's loads stay inside the n * 28 wire bytes and its stores inside the output:
    # both end at a page that cannot be read or written (SIGSEGV: in its own interpreter)
    # (imported here: the fuzz seeds load this module by its path, test/ibeo not importable)
    from unreadable_pages import runs_in_own_interpreter
    runs = runs_in_own_interpreter(GUARDED, tmp_path)
    have = [p for p in S.PATHS if S.kernel_on(p) is not None]
    assert runs == len(have) * 10 * 4


def test_scan_2204_golden_40_byte_scanner_info():
    body = bytearray(24 + 40 + 28)
    put(body, 0, 'QIIHHB', 77, 5, 0x0800, 9, 1, 1)
    body[24], body[25] = 3, 4
    put(body, 26, 'H', 55)
    put(body, 32, 'ffffffff', 1.0, -1.0, 0.5, 0.0, 0.0, 1.5, 0.25, 0.75)
    put(body, 64, 'ffff', 1.0, 2.0, 3.0, 0.5)
    body[80], body[81], body[82] = 3, 1, 0
    put(body, 84, 'IH', 123456, 0x0004)
    scan = ibeo.decode_message(0x2204, bytes(body))
    assert isinstance(scan, S.EcuScan2204) and scan.vehicle_coordinates
    i = scan.scanners[0]
    assert (i['device_id'], i['scanner_type'], i['scan_number']) == (3, 4, 55)
    assert (i['start_angle'], i['end_angle'], i['mounting_yaw']) == (1.0, -1.0, 0.5)
    assert (i['mounting_x'], i['mounting_y'], i['mounting_z']) == (1.5, 0.25, 0.75)
    pt = scan.points[0]
    assert (pt['x'], pt['z'], pt['device_id'], pt['layer']) == (1.0, 3.0, 3, 1)
    assert (pt['time_offset_us'], pt['flags']) == (123456, 4)


def test_scan_2205_round_trip_far_beyond_64k():
    n = 65_535                                    # the 16-bit maximum: 1.84 MB message
    pts = np.zeros(n, S.POINT_DTYPE)
    pts['x'] = np.arange(n, dtype=np.float32)
    pts['device_id'] = np.arange(n) % 6
    pts['time_offset_us'] = np.arange(n) * 100_000   # beyond 16 bits
    pts['flags'] = 0x1000
    infos = S.make_scanners(6)
    infos['device_id'] = np.arange(6)
    body = S.encode_scan(S.EcuScan(1, 2, 0x200, 3, infos, pts))
    assert len(body) == 24 + 6 * 148 + n * 28 > 1_800_000
    back = S.decode_scan_2205(body)
    assert np.array_equal(back.points, pts) and np.array_equal(back.scanners, infos)
    msg = ibeo.encode_message(0x2205, body)
    frames, errors = ibeo.split_messages(msg)
    assert not errors and len(frames) == 1 and len(frames[0].body) == len(body)


def test_scan_bad_counts_and_truncation():
    good = golden_2205()
    bad = bytearray(good)
    put(bad, 18, 'H', 0xFFFF)                     # absurd point count
    with pytest.raises(CodecError) as e:
        S.decode_scan_2205(bytes(bad))
    assert e.value.kind == TRUNCATED and e.value.field == 'points' and e.value.offset == 320
    bad = bytearray(good)
    bad[20] = 200                                  # absurd scanner info count
    with pytest.raises(CodecError) as e:
        S.decode_scan_2205(bytes(bad))
    assert e.value.field == 'scanner_infos' and e.value.offset == 24
    with pytest.raises(CodecError) as e:
        S.decode_scan_2205(good[:-1])
    assert e.value.kind == TRUNCATED
    with pytest.raises(CodecError) as e:
        S.decode_scan_2205(good[:10])
    assert e.value.field == 'scan_header'


# --- §10–§12 objects ----------------------------------------------------------------------

def test_objects_2280_golden_every_field():
    body = bytearray(10 + 170 + 2 * 8)
    put(body, 0, 'QH', 0x1122334455667788, 1)
    o = 10
    put(body, o + 0, 'HHI', 501, 0x01C0, 77)
    put(body, o + 8, 'Q', 99)
    put(body, o + 16, 'HBBI', 3, 5, 87, 1500)
    put(body, o + 40, 'ffffff', 12.0, -3.0, 0.5, 0.25, 4.5, 1.75)
    put(body, o + 72, 'ff', 0.3, 0.01)
    put(body, o + 80, 'ffffffff', 1.0, 2.0, 0.1, 0.2, 3.0, 4.0, 0.3, 0.4)
    body[o + 130], body[o + 131] = 2, 1
    put(body, o + 132, 'H', 7)
    put(body, o + 134, 'ffff', 10.0, -3.0, 0.05, 0.06)
    put(body, o + 150, 'f', -0.5)
    put(body, o + 162, 'Hf', 9, 0.75)
    put(body, o + 170, 'ffff', 11.0, -2.0, 13.0, -4.0)
    lst = ibeo.decode_message(0x2280, bytes(body))
    assert isinstance(lst, O.EcuObjectList2280) and lst.mid_scan_ntp == 0x1122334455667788
    x = lst.objects[0]
    assert (x['id'], x['flags'], x['age'], x['timestamp_ntp']) == (501, 0x01C0, 77, 99)
    assert (x['prediction_age'], x['classification'], x['classification_quality'],
            x['classification_age_ms']) == (3, 5, 87, 1500)
    assert (x['box_center_x'], x['box_center_y'], x['box_size_x'], x['box_size_y']) == \
        (12.0, -3.0, 4.5, 1.75)
    assert (x['box_center_sigma_x'], x['box_center_sigma_y']) == (0.5, 0.25)
    assert x['course_angle'] == f32(0.3) and x['course_angle_sigma'] == f32(0.01)
    assert (x['relative_velocity_x'], x['absolute_velocity_y']) == (1.0, 4.0)
    assert x['relative_velocity_sigma_y'] == f32(0.2) and x['absolute_velocity_sigma_x'] == f32(0.3)
    assert (x['contour_count'], x['closest_point_index'], x['reference_point_location']) == \
        (2, 1, 7)
    assert (x['reference_point_x'], x['reference_point_sigma_y']) == (10.0, f32(0.06))
    assert x['reference_point_correlation'] == -0.5
    assert (x['priority'], x['existence_measurement']) == (9, 0.75)
    assert lst.contours[0].tolist() == [[11.0, -2.0], [13.0, -4.0]]
    assert lst.box_centers().tolist() == [[12.0, -3.0]]
    assert O.classification_name(x['classification']) == 'car'


def test_objects_2225_golden():
    body = bytearray(10 + 132 + 8)
    put(body, 0, 'QH', 5, 1)
    o = 10
    put(body, o, 'H', 12)
    put(body, o + 4, 'IQHBBI', 40, 7, 2, 3, 90, 11)
    put(body, o + 24, 'ffff', 1.0, 2.0, 0.5, 0.6)
    put(body, o + 40, 'ffffff', 3.0, 4.0, 0.1, 0.2, 1.2, 0.7)
    put(body, o + 72, 'f', -1.0)
    put(body, o + 80, 'ffffffff', 5, 6, 0.5, 0.5, 7, 8, 0.25, 0.25)
    body[o + 130], body[o + 131] = 1, 0
    put(body, o + 132, 'ff', 2.5, 3.5)
    lst = ibeo.decode_message(0x2225, bytes(body))
    x = lst.objects[0]
    assert (x['id'], x['age'], x['timestamp_ntp'], x['prediction_age']) == (12, 40, 7, 2)
    assert (x['classification'], x['classification_certainty'], x['classification_age']) == \
        (3, 90, 11)
    assert (x['bounding_box_center_x'], x['bounding_box_size_y']) == (1.0, f32(0.6))
    assert (x['box_center_y'], x['box_size_x'], x['course_angle']) == (4.0, f32(1.2), -1.0)
    assert (x['relative_velocity_x'], x['absolute_velocity_y'], x['absolute_velocity_sigma_x']) \
        == (5.0, 8.0, 0.25)
    assert lst.contours[0].tolist() == [[2.5, 3.5]]


def golden_2281() -> bytes:
    """One 0x2281 object with two contour points and two properties (§12 tables)."""
    props = struct.pack('>HBB', 300, 4, 32) + struct.pack('>HBd', 7, 2, 1.5)
    body = bytearray(16 + 164 + 16 + 2 + len(props))
    put(body, 0, 'QBBHB', 1234, 255, 1, 99, 0x10)
    put(body, 14, 'H', 1)
    o = 16
    put(body, o, 'IHIQHBBI', 0x01020304, 0x0100, 8, 55, 1, 6, 100, 250)
    put(body, o + 26, 'ffff', 4.0, 2.0, 0.1, 0.1)
    put(body, o + 42, 'ff', math.pi / 2, 0.02)
    put(body, o + 50, 'ffffffff', 1, 2, 3, 4, 5, 6, 7, 8)
    put(body, o + 82, 'ff', 1.6, 0.2)
    put(body, o + 90, 'ffff', 9, 10, 11, 12)
    put(body, o + 106, 'ffff', 0.5, 0.05, 0.1, 0.01)
    body[o + 122], body[o + 123] = 2, 1
    put(body, o + 124, 'H', 1)                    # front/left
    put(body, o + 126, 'ffff', 20.0, 5.0, 0.3, 0.4)
    put(body, o + 142, 'f', 0.9)
    put(body, o + 146, 'ff', 19.0, 4.0)
    put(body, o + 154, 'Hf', 4, 0.5)
    put(body, o + 164, 'ffff', 1, 1, 2, 2)
    put(body, o + 180, 'H', 2)
    body[o + 182:] = props
    return bytes(body)


def test_objects_2281_golden_with_properties():
    lst = ibeo.decode_message(0x2281, golden_2281())
    assert isinstance(lst, O.EcuObjectList2281)
    assert (lst.mid_scan_ntp, lst.object_list_id, lst.device_type,
            lst.device_interface_version, lst.post_processed) == (1234, 255, 1, 99, True)
    x = lst.objects[0]
    assert (x['id'], x['flags'], x['age'], x['timestamp_ntp']) == (0x01020304, 0x100, 8, 55)
    assert (x['classification'], x['classification_quality'], x['classification_age_ms']) == \
        (6, 100, 250)
    assert (x['box_size_x'], x['box_size_y'], x['course_angle']) == (4.0, 2.0, f32(math.pi / 2))
    assert (x['relative_velocity_x'], x['absolute_velocity_sigma_y']) == (1.0, 8.0)
    assert (x['height'], x['motion_reference_point_x'], x['yaw_rate']) == (f32(1.6), 9.0, f32(0.1))
    assert (x['reference_point_location'], x['reference_point_x'], x['reference_point_y']) == \
        (1, 20.0, 5.0)
    assert x['reference_point_correlation'] == f32(0.9)
    assert (x['center_of_gravity_x'], x['priority'], x['existence_measurement']) == (19.0, 4, 0.5)
    assert lst.contours[0].tolist() == [[1, 1], [2, 2]]
    assert lst.properties[0] == [(300, 4, 32), (7, 2, 1.5)]
    # front/left reference point of a 4 × 2 m box heading +y: centre 2 m behind (−y), 1 m right
    assert np.allclose(lst.box_centers(), [[21.0, 3.0]], atol=1e-5)


def test_box_centres_of_objects_sent_with_inf_or_nan_are_nan_without_warnings():
    """An object sent with an infinite course angle or box size, or a NaN reference point,
    has no centre (NaN, which the node counts); numpy raises no RuntimeWarning on the way,
    and the objects beside it keep theirs."""
    import warnings
    o = O.make_objects(4, 0x2281)              # the type whose centre is computed
    o['reference_point_location'] = 1                    # front left: the centre is moved
    o['box_size_x'], o['box_size_y'] = [4, np.inf, 4, 4], 2
    o['course_angle'] = [0, 0, np.inf, 0]
    o['reference_point_x'] = [10, 10, 10, np.nan]
    lst = O.EcuObjectList2281(1, o, [np.zeros((0, 2), np.float32)] * 4, [[]] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        centres = lst.box_centers()
    assert np.allclose(centres[0], [8.0, o['reference_point_y'][0] - 1.0])
    assert np.isnan(centres[1:]).any(axis=1).all()


@pytest.mark.parametrize('data_type', [0x2225, 0x2280, 0x2281])
def test_objects_round_trip(data_type):
    cls = {0x2225: O.EcuObjectList2225, 0x2280: O.EcuObjectList2280,
           0x2281: O.EcuObjectList2281}[data_type]
    o = O.make_objects(3, data_type)
    o['id'] = [1, 2, 3]
    o['course_angle'] = [0.1, 0.2, 0.3]
    o['classification'] = [5, 3, 12]
    o['contour_count'] = [1, 0, 3]            # the encoder writes the contours' lengths
    contours = [np.array([[1, 2]], np.float32), np.zeros((0, 2), np.float32),
                np.arange(6, dtype=np.float32).reshape(3, 2)]
    extra = ([[(300, 4, 22)], [], [(1, 12, 'x')]],) if data_type == 0x2281 else ()
    lst = cls(77, o, contours, *extra)
    back = ibeo.decode_message(data_type, O.encode_objects(lst))
    assert np.array_equal(back.objects, o)
    assert all(np.array_equal(a, b) for a, b in zip(back.contours, contours))
    if extra:
        assert back.properties == extra[0]


def test_objects_absurd_counts_and_truncation():
    body = bytearray(golden_2281())
    put(body, 14, 'H', 60_000)                     # absurd object count
    with pytest.raises(CodecError) as e:
        O.decode_objects_2281(bytes(body))
    assert e.value.kind == TRUNCATED and e.value.field == 'objects' and e.value.offset == 16
    body = bytearray(golden_2281())
    body[16 + 122] = 250                            # contour count past the end
    with pytest.raises(CodecError) as e:
        O.decode_objects_2281(bytes(body))
    assert e.value.field == 'objects[0].contour' and e.value.offset == 180
    body = bytearray(golden_2281())
    put(body, 16 + 180, 'H', 40_000)                # property count past the end
    with pytest.raises(CodecError) as e:
        O.decode_objects_2281(bytes(body))
    assert e.value.field == 'objects[0].properties' and e.value.kind == TRUNCATED
    body = bytearray(golden_2281())
    body[16 + 182 + 2] = 13                         # unknown property type id
    with pytest.raises(CodecError) as e:
        O.decode_objects_2281(bytes(body))
    assert e.value.kind == BAD_VALUE and e.value.offset == 16 + 182 + 2
    with pytest.raises(CodecError):
        O.decode_objects_2281(golden_2281()[:-1])


# --- §15–§17 vehicle states ---------------------------------------------------------------

def test_vehicle_state_2806_2807_golden():
    body = bytearray(90)
    put(body, 4, 'Qii', 555, 123456, -20000)
    put(body, 20, 'fffff', 0.5, 13.0, 0.1, 0.2, 0.0)
    put(body, 40, 'f', 0.03)
    put(body, 46, 'f', 1.9)
    put(body, 54, 'fff', 0.9, 2.7, 1.0)
    put(body, 70, 'ffff', 0.0, 1.0, 2.0, 3.0)
    put(body, 86, 'f', -1.5)
    v6 = ibeo.decode_message(0x2806, bytes(body[:86]))
    v7 = ibeo.decode_message(0x2807, bytes(body))
    for v in (v6, v7):
        assert (v.timestamp_ntp, v.distance_x, v.distance_y) == (555, 123456, -20000)
        # 1/10 mm as the table states; in m: test_ibeo_ecu_conversions (odometry)
        assert not hasattr(v, 'distance_x_m')
        assert (v.course_angle, v.longitudinal_velocity) == (0.5, 13.0)
        assert v.yaw_rate == f32(0.1) and v.steering_wheel_angle == f32(0.2)
        assert v.front_wheel_angle == f32(0.03) and v.vehicle_width == f32(1.9)
        assert (v.front_axle_to_front, v.rear_axle_to_front_axle, v.rear_axle_to_rear) == \
            (f32(0.9), f32(2.7), 1.0)
        assert (v.steer_ratio_s1, v.steer_ratio_s3) == (1.0, 3.0)
    assert v7.longitudinal_acceleration == -1.5
    with pytest.raises(CodecError) as e:
        ibeo.decode_message(0x2807, bytes(body[:86]))
    assert e.value.kind == TRUNCATED


def test_vehicle_state_2808_golden():
    body = bytearray(204)
    put(body, 4, 'QH', 9, 0x0006)
    put(body, 16, 'd', 48.1)
    put(body, 28, 'd', 11.5)
    put(body, 40, 'f', 520.0)
    put(body, 56, 'f', 0.5)
    put(body, 68, 'f', 0.75)
    put(body, 80, 'f', 0.125)
    put(body, 92, 'ffff', 1.0, 0.1, 1.5, 0.2)
    put(body, 124, 'ffffffffff', 10, 0.1, 0.2, 0.01, 0.5, 0.05, -0.25, 0.02, 0.04, 0.6)
    put(body, 164, 'f', 1.8)
    put(body, 172, 'fff', 0.8, 2.6, 1.1)
    put(body, 188, 'ffff', 0.0, 15.0, 0.0, 0.0)
    v = ibeo.decode_message(0x2808, bytes(body))
    assert (v.timestamp_ntp, v.sources, v.latitude_deg, v.longitude_deg) == (9, 6, 48.1, 11.5)
    assert (v.altitude, v.sigma_x, v.sigma_y, v.position_correlation_xy) == (520, .5, .75, .125)
    assert (v.course_angle, v.heading_angle) == (1.0, 1.5)
    assert (v.longitudinal_velocity, v.cross_acceleration) == (10.0, -0.25)
    assert v.steer_angle == f32(0.04) and v.steering_wheel_angle == f32(0.6)
    assert (v.vehicle_width, v.rear_axle_to_rear, v.steer_ratio_s1) == (f32(1.8), f32(1.1), 15.0)


# --- §22 GPS, §33 GpsImu, §34 odometry ----------------------------------------------------

def test_gps_2604_golden():
    body = bytearray(127)
    put(body, 0, 'IQB', 1000, 77, 3)
    put(body, 13, 'dddddddddd', 0.84, 0.2, 500.0, 1.0, 2.0, 3.0, 0.5, 0.01, 0.6, 0.02)
    put(body, 125, 'H', 8)
    g = ibeo.decode_message(0x2604, bytes(body))
    assert (g.us_since_startup, g.timestamp_ntp, g.device_id) == (1000, 77, 3)
    assert (g.latitude, g.longitude, g.altitude) == (0.84, 0.2, 500.0)
    assert (g.latitude_sigma, g.longitude_sigma, g.altitude_sigma) == (1.0, 2.0, 3.0)
    assert (g.course_angle, g.yaw_angle_sigma, g.source_type) == (0.5, 0.02, 8)
    assert not hasattr(g, 'latitude_deg')      # rad as the table states; deg: ecu_conversions


def test_gps_imu_9001_golden():
    body = bytearray(413)
    values = [float(i) + 0.5 for i in range(39)]
    put(body, 0, '39d', *values)
    body[312] = 11
    put(body, 313, '5d', 1.1, 1.2, 1.3, 1.4, 1.5)
    put(body, 353, '5Q', 10, 20, 30, 40, 50)
    body[393], body[394], body[395], body[396] = 4, 5, 1, 3
    g = ibeo.decode_message(0x9001, bytes(body))
    assert g.latitude == 0.5 and g.longitude == 2.5 and g.altitude == 4.5
    assert g.yaw_angle == 8.5 and g.pitch_angle == 10.5 and g.roll_angle == 12.5
    assert g.longitudinal_acceleration == 16.5 and g.velocity_north == 20.5
    assert g.velocity_west == 22.5 and g.roll_rate == 32.5 and g.yaw_rate == 34.5
    assert g.pitch_rate == 36.5 and g.gps_status == 38.5
    assert g.satellites == 11 and (g.dop_x, g.dop_position) == (1.1, 1.5)
    assert (g.measurement_time_ecu_ntp, g.received_time_ntp) == (10, 50)
    assert (g.clock_id, g.clock_name, g.source, g.ins_quality) == (4, 5, 1, 3)


def test_odometry_9002_golden():
    body = bytearray(146)
    put(body, 0, '11d', *[0.25 * i for i in range(11)])
    put(body, 88, '5QBB', 1, 2, 3, 4, 5, 6, 7)
    o = ibeo.decode_message(0x9002, bytes(body))
    assert (o.steering_angle, o.wheel_speed_fl, o.wheel_speed_rr) == (0.0, 0.75, 1.5)
    assert (o.velocity, o.acceleration, o.yaw_rate) == (2.0, 2.25, 2.5)
    assert (o.measurement_time_ecu_ntp, o.received_time_ntp, o.clock_id, o.clock_name) == \
        (1, 5, 6, 7)


# --- §21 measurement list, §14 image, §23 frame end, §35–§37 monitoring, §19 trace --------

def test_measurement_list_2821_golden():
    body = struct.pack('>III', 5, 3_900_000_000, 1 << 31) + b'CAN\0' + b'grp\0' \
        + struct.pack('>H', 3) + struct.pack('>HBf', 1, 1, 12.5) \
        + struct.pack('>HBh', 70, 5, -3) + struct.pack('>HB', 9, 12) + b'ok\0'
    ml = ibeo.decode_message(0x2821, body)
    assert (ml.microseconds, ml.ntp_seconds, ml.ntp_fraction) == (5, 3_900_000_000, 1 << 31)
    assert (ml.list_name, ml.group_name) == ('CAN', 'grp')
    assert ml.measurements == [(1, 1, 12.5), (70, 5, -3), (9, 12, 'ok')]
    assert ml.key_name(1) == 'longitudinal_velocity' and ml.key_name(9) == 'key_9'
    assert ML.encode_measurement_list(ml) == body
    with pytest.raises(CodecError) as e:
        ML.decode_measurement_list(body[:12] + b'CAN')       # name without its NUL
    assert e.value.field == 'list_name' and e.value.offset == 12


def test_image_2403_golden_and_truncated():
    jpeg = b'\xff\xd8\xff\xe0JFIF\xff\xd9'
    head = bytearray(63)
    put(head, 0, 'HIQB', 0, 42, 99, 8)
    put(head, 15, 'ffffff', 0.1, 0.0, 0.0, 1.5, 0.0, 1.2)
    put(head, 39, 'dd', 1.0, 0.5)
    put(head, 55, 'HHI', 640, 480, len(jpeg))
    img = ibeo.decode_message(0x2403, bytes(head) + jpeg)
    assert (img.format_name, img.us_since_power_on, img.timestamp_ntp, img.device_id) == \
        ('jpeg', 42, 99, 8)
    assert (img.mounting_x, img.mounting_z, img.horizontal_opening_angle) == (1.5, f32(1.2), 1.0)
    assert (img.width, img.height, img.data) == (640, 480, jpeg)
    with pytest.raises(CodecError) as e:
        IM.decode_image(bytes(head) + jpeg[:-1])
    assert e.value.field == 'compressed_size' and e.value.offset == 59


def test_frame_end_and_trailer_golden():
    body = struct.pack('>IIIQ6H', 17, 5000, 0, 123, 0, 0, 0, 0, 0, 0)
    fe = ibeo.decode_message(0x1100, body)
    assert (fe.frame_id, fe.size_of_this_frame, fe.size_of_next_frame, fe.creation_ntp) == \
        (17, 5000, 0, 123)
    assert FE.LAYOUT_1100.encode(fe) == body
    assert isinstance(ibeo.decode_message(0x6120, b''), FE.IdcTrailer)


def test_system_monitoring_and_trace_golden():
    d = ibeo.decode_message(0x6701, bytes([4, 1, 100, 3]) + struct.pack('>HQ', 0x81, 1700))
    assert (d.device_id, d.device_type, d.type_information, d.state) == (4, 1, 100, 3)
    assert SM.bit_names(d.state_information, SM.STATE_INFO_BITS) == ['initializing', 'timeout']
    assert d.update_missing_ms == 1700
    c = ibeo.decode_message(0x6700, struct.pack('>BIBHQ', 2, 0x123, 2, 0x10, 5))
    assert (c.device_id, c.message_id, c.state, c.state_information) == (2, 0x123, 2, 0x10)
    s = ibeo.decode_message(0x6705, struct.pack('>Q', 99) + bytes([2, 0x08, 40, 81, 12, 80, 95]))
    assert (s.last_update_ms, s.state, s.cpu_usage, s.ram_usage, s.hdd_usage) == (99, 2, 40, 81, 12)
    assert (s.memory_warning_level, s.memory_error_level) == (80, 95)
    t = ibeo.decode_message(0x6410, b'\x02IbeoLUX3: DSP warning\x00')
    assert (t.data_type, t.level, t.text) == (0x6410, 2, 'IbeoLUX3: DSP warning')
    assert SM.encode_trace(t) == b'\x02IbeoLUX3: DSP warning\x00'


# --- §20 Set Filter -----------------------------------------------------------------------

def test_set_filter_matches_the_documents_examples():
    example1 = bytes.fromhex('affec0c2 00000000 00000008 0000 2010 0000000000000000'
                             '0005 0002 0000 ffff'.replace(' ', ''))
    assert SF.set_filter_message(SF.SetFilter(SF.ALL_TYPES)) == example1
    assert SF.encode_set_filter(SF.SetFilter(SF.SCAN_TYPES)) == bytes.fromhex('000500022202220f')
    two = SF.SetFilter(((0x2202, 0x220F), (0x2280, 0x2281)))
    body = SF.encode_set_filter(two)
    assert body == bytes.fromhex('0005 0004 2202 220f 2280 2281'.replace(' ', ''))
    assert SF.is_set_filter(body) and SF.decode_set_filter(body) == two
    assert two.accepts(0x2205) and two.accepts(0x2281) and not two.accepts(0x2221)
    assert SF.is_set_filter_ack(b'\x00\x05')
    # a LUX command in the same data type is little-endian and not taken for Set Filter
    assert not SF.is_set_filter(struct.pack('<HH', 0x0020, 0))


def test_set_filter_ranges_from_text_and_replies():
    assert SF.parse_ranges('') == ()
    assert SF.parse_ranges('all') == ((0, 0xFFFF),)
    assert SF.parse_ranges('0x2205, 0x2280-0x2281 36865 0x2202..0x220F') == (
        (0x2205, 0x2205), (0x2280, 0x2281), (0x9001, 0x9001), (0x2202, 0x220F))
    assert SF.format_ranges(((0x2205, 0x2205), (0x2280, 0x2281))) == '0x2205, 0x2280-0x2281'
    for bad in ('0x2281-0x2280', 'scans', '0x10000', '-5'):
        with pytest.raises(ValueError):
            SF.parse_ranges(bad)
    assert SF.encode_set_filter_reply() == b'\x00\x05'
    assert SF.encode_set_filter_reply(False) == b'\x80\x05'
    assert SF.is_set_filter_reply(b'\x80\x05') and SF.is_set_filter_reply(b'\x00\x05\x00')
    assert not SF.is_set_filter_reply(b'\x05\x00')          # a little-endian LUX id
    assert SF.set_filter_reply_id(b'\x80\x05') == 0x8005


def test_set_filter_bad_input():
    for body, field, kind in [(bytes.fromhex('000500032202'), 'count', BAD_VALUE),
                              (bytes.fromhex('0005000422022205'), 'ranges', TRUNCATED),
                              (bytes.fromhex('000500022205 2202'.replace(' ', '')),
                               'ranges[0]', BAD_VALUE),
                              (bytes.fromhex('0006000222052205'), 'command_id', BAD_VALUE),
                              (b'\x00', 'header', TRUNCATED)]:
        with pytest.raises(CodecError) as e:
            SF.decode_set_filter(body)
        assert (e.value.field, e.value.kind) == (field, kind)
    with pytest.raises(CodecError):
        SF.encode_set_filter(SF.SetFilter(((5, 4),)))


def test_undocumented_types_are_unknown_layout_not_fatal():
    for data_type in (0x2209, 0x7100, 0x2850):
        with pytest.raises(CodecError) as e:
            ibeo.decode_message(data_type, b'\x00' * 40)
        assert e.value.kind == UNKNOWN_LAYOUT


@pytest.mark.parametrize('record', [
    V.EcuVehicleState2807(1, 2, 3, 0.5, 1.0, 0.25, 0.5, 0.125, 1.5, 1.0, 2.0, 1.0, 0, 1, 0, 0, 2),
    V.EcuVehicleState2808(timestamp_ntp=5, latitude_deg=48.0, steer_ratio_s3=2.0),
    G.PositionWgs84(1, 2, 3, 0.5, 0.25), G.GpsImu(latitude=0.5, satellites=7, source=2),
    OD.EcuOdometry(velocity=3.5, clock_name=5), SM.DeviceStatus(1, 2, 3, 1, 0x80, 9),
    SM.SystemStatus(1, 2, 3, 4, 5, 6, 7, 8), SM.CanStatus(1, 2, 3, 4, 5),
    FE.FrameEndSeparator(1, 2, 3, 4)])
def test_fixed_records_round_trip(record):
    data_type, body = ibeo.encode_record(record)
    assert ibeo.decode_message(data_type, body) == record


# --- §25 frame index, §28 point cloud plane, §29 meta information, §30 CAN, §31, §32 ------

def test_frame_index_6130_golden():
    body = bytearray(128 + 2 * 17)
    body[0], body[1] = 1, 2
    body[2:19] = b'FRAMEINDEX_HEADER'
    put(body, 19, 'QQ', 2, 999)
    body[35] = 1
    put(body, 36, 'H', 2)
    put(body, 38, 'HBHB', 0x2205, 1, 0x2280, 1)
    put(body, 128, 'QQB', 0, 100, 1)
    put(body, 145, 'QQB', 4096, 200, 2)
    fi = ibeo.decode_message(0x6130, bytes(body))
    assert (fi.major_version, fi.minor_version, fi.last_timestamp) == (1, 2, 999)
    assert fi.trigger_belongs_to_new_frame and fi.triggers == ((0x2205, 1), (0x2280, 1))
    assert fi.entries.tolist() == [(0, 100, 1), (4096, 200, 2)]
    assert FI.encode_frame_index(fi) == bytes(body)
    bad = bytearray(body)
    put(bad, 19, 'Q', 10 ** 12)                            # absurd frame count
    with pytest.raises(CodecError) as e:
        FI.decode_frame_index(bytes(bad))
    assert (e.value.field, e.value.offset, e.value.kind) == ('frame_indices', 128, TRUNCATED)
    bad = bytearray(body)
    bad[2:5] = b'XXX'
    with pytest.raises(CodecError):
        FI.decode_frame_index(bytes(bad))


def test_point_cloud_plane_7510_golden():
    body = bytearray(48 + 2 * 20)
    put(body, 0, 'HHddf', 1, 3, 0.2, 0.9, 35.0)
    put(body, 24, 'fff', 0.5, 0.0, 0.0)
    put(body, 44, 'I', 2)
    put(body, 48, 'ffffI', 1.0, 2.0, 3.0, 0.5, 0x10)
    put(body, 68, 'ffffI', -1.0, -2.0, -3.0, 1.5, 0x20)
    pc = ibeo.decode_message(0x7510, bytes(body))
    assert (pc.points_kind, pc.points_type, pc.reference_longitude, pc.reference_latitude) == \
        (1, 3, 0.2, 0.9)
    assert (pc.reference_altitude, pc.plane_yaw) == (35.0, 0.5)
    assert pc.points.tolist() == [(1, 2, 3, 0.5, 0x10), (-1, -2, -3, 1.5, 0x20)]
    assert PCP.encode_point_cloud_plane(pc) == bytes(body)
    put(body, 2, 'H', 9)
    with pytest.raises(CodecError) as e:
        PCP.decode_point_cloud_plane(bytes(body))
    assert e.value.field == 'points_type'


def test_meta_information_7110_golden():
    version = struct.pack('>HI', 2, 5_007_003) + struct.pack('>H', 3) + b'abc'
    ecu = struct.pack('>H', 4) + b'ECU1'
    body = struct.pack('>I', 3) + struct.pack('>HQI', 1, 7, len(version)) + version \
        + struct.pack('>HQI', 4, 8, len(ecu)) + ecu + struct.pack('>HQI', 3, 9, 2) + b'\x00\x01'
    ml = ibeo.decode_message(0x7110, body)
    v, e, s = ml.elements
    assert (v.info_type, v.timestamp_ntp) == (1, 7)
    assert v.value == {'software_type': 2, 'version': 5_007_003, 'major': 5, 'minor': 7,
                       'patch': 3, 'extra': 'abc'}
    assert (e.value, s.value) == ('ECU1', 1)
    assert MI.encode_meta_information(ml) == body
    with pytest.raises(CodecError) as err:
        MI.decode_meta_information(body[:-1])
    assert err.value.field == 'elements[2].payload'


def test_can_message_1002_golden():
    body = bytes([0x30, 0xAA, 0xBB, 0xCC, 0x00]) + struct.pack('>HIQB', 0x8123, 500, 77, 4)
    m = ibeo.decode_message(0x1002, body)
    assert (m.data, m.can_id, m.device_time_us, m.receive_ntp, m.device_id) == \
        (b'\xaa\xbb\xcc', 0x123, 500, 77, 4)
    assert CAN.encode_can_message(m) == body
    with pytest.raises(CodecError) as e:
        CAN.decode_can_message(bytes([0x90]) + body[1:])
    assert e.value.field == 'length'
    with pytest.raises(CodecError) as e:
        CAN.decode_can_message(body[:-1])
    assert e.value.kind == TRUNCATED


def test_object_association_4001_golden():
    body = bytes([1, 2]) + struct.pack('>H', 3) + bytes([4, 5]) + struct.pack('>HI', 6, 2) \
        + b'\xff' * 8 + struct.pack('>IIQQf', 10, 20, 30, 40, 0.5) \
        + struct.pack('>IIQQf', 11, 21, 31, 41, 1.0)
    a = ibeo.decode_message(0x4001, body)
    assert (a.reference_object_list_id, a.reference_device_interface_version,
            a.dut_device_type, a.dut_device_interface_version) == (1, 3, 5, 6)
    assert a.associations.tolist() == [(10, 20, 30, 40, 0.5), (11, 21, 31, 41, 1.0)]
    assert OA.encode_object_association(a) == body
    with pytest.raises(CodecError) as e:
        OA.decode_object_association(body[:-1])
    assert (e.value.field, e.value.offset) == ('associations', 20)


def test_time_record_9000_golden_both_fix_mode_widths():
    ext, internal = struct.pack('>QQ', 100, 200), struct.pack('>QQ', 110, 210)
    head = bytes([1, 5, 2, 2]) + struct.pack('>I', 2)
    one = head + ext + internal + bytes([3, 2]) + bytes(16)
    eight = head + ext + internal + struct.pack('>QQ', 3, 2) + bytes(16)
    for body in (one, eight):
        t = ibeo.decode_message(0x9000, body)
        assert (t.external_clock_id, t.external_clock_name, t.internal_clock_name) == (1, 5, 2)
        assert t.external_ntp.tolist() == [100, 200] and t.internal_ntp.tolist() == [110, 210]
        assert t.fix_modes.tolist() == [3, 2]
    assert TR.encode_time_record(ibeo.decode_message(0x9000, one)) == one
    with pytest.raises(CodecError) as e:
        TR.decode_time_record(head[:4] + struct.pack('>I', 10 ** 6) + bytes(40))
    assert e.value.kind == TRUNCATED and e.value.field == 'vector_size'


def test_carriage_way_6970_golden():
    """One carriage way, one segment, two lanes (the second with two lane segments), §26."""
    def lane_segment(k):
        b = bytearray(86)
        put(b, 0, 'QQQQQ', 100 + k, 101 + k, 99 + k, 0, 7)
        b[40:46] = bytes([1, 2, 3, 4, 1, 0])
        put(b, 46, 'ddd', 13.4 + k, 52.5, 90.0)
        put(b, 70, 'ffff', 0.0, 1.75, 0.0, -1.75)
        return bytes(b)
    body = struct.pack('>Q', 1) + struct.pack('>QHBQ', 555, 255, 1, 1) \
        + struct.pack('>QBQQ', 9, 2, 10, 8) \
        + struct.pack('>BQBBBBBQ', 0, 4000, 1, 0, 0, 0, 1, 1) + lane_segment(0) \
        + struct.pack('>BQBBBBBQ', 1, 4001, 4, 1, 1, 0, 0, 2) + lane_segment(1) + lane_segment(2)
    cw = ibeo.decode_message(0x6970, body)
    (way,) = cw.ways
    assert (way.id, way.national_id, way.type) == (555, 255, 1)
    (seg,) = way.segments
    assert (seg.id, seg.next_id, seg.previous_id, len(seg.lanes)) == (9, 10, 8, 2)
    a, b = seg.lanes
    assert (a.id, a.lane_id, a.type, a.right_lane, len(a.segments)) == (0, 4000, 1, 1, 1)
    assert (b.lane_id, b.type, b.next_lane, len(b.segments)) == (4001, 4, 1, 2)
    ls = b.segments[1]
    assert (ls['id'], ls['next_id'], ls['previous_id'], ls['right_id']) == (102, 103, 101, 7)
    assert (ls['marking_left'], ls['marking_right'], ls['border_left'], ls['border_right'],
            ls['next_in_new_segment']) == (1, 2, 3, 4, 1)
    assert (ls['longitude_deg'], ls['latitude_deg'], ls['course_angle_deg']) == (15.4, 52.5, 90.0)
    assert (ls['offset_left_y'], ls['offset_right_y']) == (1.75, -1.75)
    assert CW.encode_carriage_ways(cw) == body
    bad = bytearray(body)
    put(bad, 0, 'Q', 2 ** 60)                                 # absurd way count
    with pytest.raises(CodecError) as e:
        CW.decode_carriage_ways(bytes(bad))
    assert (e.value.field, e.value.offset, e.value.kind) == ('carriage_ways', 8, TRUNCATED)
    with pytest.raises(CodecError) as e:
        CW.decode_carriage_ways(body[:-1])
    assert e.value.kind == TRUNCATED and 'lanes[1].segments' in e.value.field


@needs_kernel
@pytest.mark.parametrize('n', (0, 1, 2, 7, 1000, 60_001))
def test_points_grouped_by_device_compiled_and_numpy_agree(n):
    # a scan in scanner coordinates goes out as one cloud per device id: the points of each
    # id together, ids ascending, each group in the scan's order (a stable sort)
    assert S.GROUP is not None
    rng = np.random.default_rng(n)
    points = np.frombuffer(rng.integers(0, 256, 28 * n, dtype=np.uint8).tobytes(),
                           S.POINT_DTYPE).copy()
    points['device_id'] = rng.choice([200, 3, 0, 255, 17], n)
    native, groups = S.group_by_device(points)
    slow, slow_groups = S.group_by_device(points, native=False)
    assert native.tobytes() == slow.tobytes() and groups == slow_groups
    ids, rows = points['device_id'], points.view(np.uint8).reshape(n, 28)   # every byte
    expected = [(int(d), rows[ids == d]) for d in sorted(set(ids.tolist()))]
    assert [d for d, _, _ in groups] == [d for d, _ in expected]
    for (d, a, b), (_, want) in zip(groups, expected):
        assert native[a:b].tobytes() == want.tobytes()
    assert sum(b - a for _, a, b in groups) == n


@needs_kernel
@pytest.mark.parametrize('n', KERNEL_SIZES)
def test_points_swapped_and_grouped_in_one_pass_equal_the_two_passes(n):
    # to-bag decodes a scan in scanner coordinates grouped at once: the bytes, counts and
    # groups of host_points then group_by_device, at any offset of the body (NaNs and all)
    assert S.GROUPED is not None
    rng = np.random.default_rng(n + 1)
    raw = rng.integers(0, 256, 28 * n + 8, dtype=np.uint8)
    for offset in (0, 1, 5):
        body = bytearray(raw.tobytes())
        body[offset + 16:offset + 28 * n:28] = bytes(rng.choice([200, 3, 0, 255, 17], n).tolist())
        wire = np.frombuffer(body, S.WIRE_POINT_DTYPE, n, offset)
        points, count, groups = S.host_points_grouped(wire)
        slow, slow_count = S.host_points(wire, native=False)
        slow, slow_groups = S.group_by_device(slow, native=False)
        assert points.tobytes() == slow.tobytes()
        assert (count, groups) == (slow_count, slow_groups)
        assert S.host_points_grouped(wire, native=False)[2] == groups


def test_scan_in_scanner_coordinates_decoded_grouped_keeps_every_field():
    infos = S.make_scanners(2)
    infos['device_id'] = [4, 2]
    p = np.zeros(5, S.POINT_DTYPE)
    p['x'] = [1, 2, 3, 4, math.nan]
    p['device_id'] = [4, 2, 4, 9, 2]
    scan = S.EcuScan(1 << 40, 80, 0, 7, infos, p)           # flag bit 11 clear: scanner
    body = S.encode_scan(scan)
    grouped = S.decode_scan_grouped(S.SCAN_2205, body)
    assert grouped.groups == ((2, 0, 2), (4, 2, 4), (9, 4, 5))
    x = grouped.points['x'].tolist()                         # ids 2, 2, 4, 4, 9
    assert x[0] == 2 and math.isnan(x[1]) and x[2:] == [1, 3, 4]
    assert grouped.non_finite == 1
    plain = S.decode_scan_2205(body)
    assert plain.groups is None and plain.points['x'][0] == 1
    assert all(np.array_equal(grouped.scanners[k], plain.scanners[k])
               for k in S.INFO_2205_DTYPE.names)
    vehicle = S.encode_scan(S.EcuScan(1, 2, S.SCAN_FLAG_VEHICLE_COORDINATES, 3, infos, p))
    assert S.decode_scan_grouped(S.SCAN_2205, vehicle).groups is None   # one cloud: as sent


@pytest.mark.parametrize('wire, host', [(S.WIRE_INFO_2205_DTYPE, S.INFO_2205_DTYPE),
                                        (S.WIRE_INFO_2204_DTYPE, S.INFO_2204_DTYPE)])
@pytest.mark.parametrize('n', [0, 1, 3])
def test_scanner_infos_to_host_order_by_bytes_as_astype(wire, host, n):
    # a scan's few scanner infos go to host order by one byte gather: every field's bytes as
    # numpy's astype gives them (any bit pattern: NaN payloads too), padding zero
    raw = np.random.default_rng(n).integers(0, 256, n * wire.itemsize, np.uint8).tobytes()
    infos = np.frombuffer(raw, wire)
    got, want = S._host_infos(infos, host), infos.astype(host)
    assert got.dtype == host and len(got) == n
    for name in host.names:
        assert got[name].tobytes() == want[name].tobytes(), name
    named = np.zeros(n, host)
    for name in host.names:
        named[name] = want[name]
    assert got.tobytes() == named.tobytes()            # the bytes no field covers are zero


def test_box_centers_given_are_the_float32_centres_as_float64():
    """Types with a box centre (0x2280): box_centers is those float32 numbers cast to float64,
    bit for bit as numpy's cast gives them (NaN, ±Inf and a signalling NaN included)."""
    o = O.make_objects(4, O.OBJECTS_2280)
    snan = np.frombuffer(np.uint32(0x7F80_0001).tobytes(), np.float32)[0]
    o['box_center_x'] = [1.5, np.nan, -np.inf, snan]
    o['box_center_y'] = [f32(0.1), -0.0, 3e38, 2.0]
    with np.errstate(invalid='ignore'):             # (the signalling NaN, quieted)
        centres = O.EcuObjectList2280(0, o, [np.zeros((0, 2), np.float32)] * 4).box_centers()
        want = np.stack([o['box_center_x'], o['box_center_y']], 1).astype(np.float64)
    assert centres.dtype == np.float64 and centres.shape == (4, 2)
    assert centres.tobytes() == want.tobytes()
