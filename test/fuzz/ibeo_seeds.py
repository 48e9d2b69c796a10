"""Valid ibeo messages for the fuzz suite: bodies written here from the interface spec's tables
(§3 scan, §4 objects, §5 vehicle state, §6 errors/warnings, §7 commands/replies; all
little-endian bodies behind the big-endian §2.4 header), the ECU types' hand-written golden
bodies (big-endian, the ECU document's tables; the 0x2205/0x2281 builders of
test/ibeo/test_ibeo_ecu_codec.py are reused), bodies harvested from a small synthetic ECU
recording (ibeo/ecu_recording.py), and every seed re-encoded by the project's encoders."""
from __future__ import annotations

import importlib.util
import struct
import tempfile
from pathlib import Path

import numpy as np

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ibeo import codec as ibeo, ecu_recording
from ros_sim_bridge.ibeo.codec import (commands, errors_warnings, objects, registry, scan,
                                       set_filter, vehicle_state)
from ros_sim_bridge.ibeo.idc import IdcReader

#: The LUX types (their encoder seeds come from records()).
LUX_TYPES = {registry.COMMAND, registry.REPLY, registry.ERRORS_WARNINGS, registry.SCAN,
             registry.OBJECTS, registry.VEHICLE_STATE}


def hand_header(data_type: int, size: int, ntp: int = 0) -> bytes:
    """§2.4: magic, previous size, size, reserved, device id, data type, NTP64 (big-endian)."""
    return struct.pack('>IIIBBHQ', 0xAFFEC0C2, 0, size, 0, 7, data_type, ntp)


def hand_bodies() -> dict[int, list[bytes]]:
    # 0x2202 scan (§3): 44-byte header, then 10-byte points.
    scan_head = struct.pack('<HHHQQHhhHhhhhhhH', 42, 0x0001, 0, 1 << 32, (1 << 32) + 85899345,
                            11520, 1600, -1920, 2, 0, 0, 0, 150, 0, 120, 0x0400)
    pts = struct.pack('<BBhHHH', 0x01, 0x00, 100, 1234, 40, 0) \
        + struct.pack('<BBhHHH', 0x13, 0x04, -100, 2500, 55, 0)
    # 0x2221 objects (§4): scan start NTP, count; object 58 bytes + contour points.
    obj = bytearray(58)
    struct.pack_into('<HHHH', obj, 0, 5, 10, 0, 20)
    struct.pack_into('<hh', obj, 8, 1000, -250)              # reference point, cm
    struct.pack_into('<hh', obj, 38, 150, -20)               # absolute velocity, cm/s
    struct.pack_into('<hh', obj, 46, -0x8000, -0x8000)       # relative velocity invalid
    struct.pack_into('<HHHH', obj, 50, 5, 3, 80, 2)          # class car, 2 contour points
    objects_body = struct.pack('<QH', 1 << 32, 1) + bytes(obj) + struct.pack('<4h', 990, -260,
                                                                            1010, -240)
    # 0x2805 vehicle state (§5), 46 bytes.
    vs = struct.pack('<QHHhhhHiihHhhhHhI', 1 << 32, 42, 0, 1000, 100, 50, 0, 12345, -678, 1000,
                     40, 400, 0, 10, 0, 300, 0)
    # 0x2030 errors and warnings (§6), 16 bytes.
    ew = struct.pack('<8H', 0x0100, 0, 0x0008, 0, 0, 0, 0, 0)
    return {
        ibeo.registry.SCAN: [scan_head + pts],
        ibeo.registry.OBJECTS: [objects_body],
        ibeo.registry.VEHICLE_STATE: [vs],
        ibeo.registry.ERRORS_WARNINGS: [ew],
        ibeo.registry.COMMAND: [struct.pack('<HH', 0x0001, 0),                    # GetStatus
                                struct.pack('<HHHI', 0x0010, 0, 0x1100, 0x1234),  # SetParameter
                                struct.pack('<HHHII', 0x0034, 0, 0, 3, 4)],       # NTP sync
        ibeo.registry.REPLY: [struct.pack('<HHHHIHHHH3H3H', 0x0001, 0x1230, 0x2340, 0, 0, 300,
                                          0x0740, 12, 0, 0x2009, 0x0814, 0x1230, 0x2009,
                                          0x0814, 0x1230),
                              struct.pack('<HHI', 0x0011, 0x1100, 0x0A000001),
                              struct.pack('<H', 0x8020)],
    }


def _put(buf, offset, fmt, *values):
    struct.pack_into('>' + fmt, buf, offset, *values)


def _golden_module():
    """test/ibeo/test_ibeo_ecu_codec.py (its golden builders), loaded under its own name."""
    path = Path(__file__).resolve().parents[1] / 'ibeo' / 'test_ibeo_ecu_codec.py'
    spec = importlib.util.spec_from_file_location('_ibeo_ecu_golden_for_fuzz', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ecu_hand_bodies() -> dict[int, list[bytes]]:
    """ECU data types, written from the ECU document's tables (big-endian), as in the golden
    tests of test/ibeo/test_ibeo_ecu_codec.py."""
    golden = _golden_module()
    out: dict[int, list[bytes]] = {0x2205: [golden.golden_2205()],
                                   0x2281: [golden.golden_2281()]}
    b = bytearray(24 + 40 + 28)                                  # 0x2204: 40-byte scanner info
    _put(b, 0, 'QIIHHB', 77, 5, 0x0800, 9, 1, 1)
    b[24], b[25] = 3, 4
    _put(b, 26, 'H', 55)
    _put(b, 32, 'ffffffff', 1.0, -1.0, 0.5, 0.0, 0.0, 1.5, 0.25, 0.75)
    _put(b, 64, 'ffff', 1.0, 2.0, 3.0, 0.5)
    b[80], b[81], b[82] = 3, 1, 0
    _put(b, 84, 'IH', 123456, 0x0004)
    out[0x2204] = [bytes(b)]
    b = bytearray(10 + 132 + 8)                                  # 0x2225, one object
    _put(b, 0, 'QH', 5, 1)
    _put(b, 10, 'H', 12)
    _put(b, 14, 'IQHBBI', 40, 7, 2, 3, 90, 11)
    _put(b, 34, 'ffff', 1.0, 2.0, 0.5, 0.6)
    _put(b, 50, 'ffffff', 3.0, 4.0, 0.1, 0.2, 1.2, 0.7)
    _put(b, 90, 'ffffffff', 5, 6, 0.5, 0.5, 7, 8, 0.25, 0.25)
    b[140] = 1                                                   # one contour point
    _put(b, 142, 'ff', 2.5, 3.5)
    out[0x2225] = [bytes(b)]
    b = bytearray(golden.golden_2281())                          # 0x2291: 0x2281's layout
    b[8] = 0
    out[0x2291] = [bytes(b)]
    v = bytearray(90)                                            # 0x2806 / 0x2807
    _put(v, 4, 'Qii', 555, 123456, -20000)
    _put(v, 20, 'fffff', 0.5, 13.0, 0.1, 0.2, 0.0)
    _put(v, 40, 'f', 0.03)
    _put(v, 46, 'f', 1.9)
    _put(v, 54, 'fff', 0.9, 2.7, 1.0)
    _put(v, 70, 'ffff', 0.0, 1.0, 2.0, 3.0)
    _put(v, 86, 'f', -1.5)
    out[0x2806], out[0x2807] = [bytes(v[:86])], [bytes(v)]
    v = bytearray(204)                                           # 0x2808
    _put(v, 4, 'QH', 9, 0x0006)
    _put(v, 16, 'd', 48.1)
    _put(v, 28, 'd', 11.5)
    _put(v, 40, 'f', 520.0)
    _put(v, 92, 'ffff', 1.0, 0.1, 1.5, 0.2)
    _put(v, 124, 'ffffffffff', 10, 0.1, 0.2, 0.01, 0.5, 0.05, -0.25, 0.02, 0.04, 0.6)
    _put(v, 172, 'fff', 0.8, 2.6, 1.1)
    out[0x2808] = [bytes(v)]
    g = bytearray(127)                                           # 0x2604 GPS
    _put(g, 0, 'IQB', 1000, 77, 3)
    _put(g, 13, 'dddddddddd', 0.84, 0.2, 500.0, 1.0, 2.0, 3.0, 0.5, 0.01, 0.6, 0.02)
    _put(g, 125, 'H', 8)
    out[0x2604] = [bytes(g)]
    g = bytearray(413)                                           # 0x9001 GpsImu
    _put(g, 0, '39d', *[i + 0.5 for i in range(39)])
    g[312] = 11
    _put(g, 313, '5d', 1.1, 1.2, 1.3, 1.4, 1.5)
    _put(g, 353, '5Q', 10, 20, 30, 40, 50)
    g[393:397] = bytes([4, 5, 1, 3])
    out[0x9001] = [bytes(g)]
    o = bytearray(146)                                           # 0x9002 odometry
    _put(o, 0, '11d', *[0.25 * i for i in range(11)])
    _put(o, 88, '5QBB', 1, 2, 3, 4, 5, 6, 7)
    out[0x9002] = [bytes(o)]
    out[0x2821] = [struct.pack('>III', 5, 3_900_000_000, 1 << 31) + b'CAN\0grp\0'
                   + struct.pack('>H', 3) + struct.pack('>HBf', 1, 1, 12.5)
                   + struct.pack('>HBh', 70, 5, -3) + struct.pack('>HB', 9, 12) + b'ok\0']
    jpeg = b'\xff\xd8\xff\xe0JFIF\xff\xd9'                          # 0x2403 image
    h = bytearray(63)
    _put(h, 0, 'HIQB', 0, 42, 99, 8)
    _put(h, 15, 'ffffff', 0.1, 0.0, 0.0, 1.5, 0.0, 1.2)
    _put(h, 39, 'dd', 1.0, 0.5)
    _put(h, 55, 'HHI', 640, 480, len(jpeg))
    out[0x2403] = [bytes(h) + jpeg]
    out[0x1100] = [struct.pack('>IIIQ6H', 17, 5000, 0, 123, 0, 0, 0, 0, 0, 0)]
    out[0x6120] = [b'']
    out[0x6701] = [bytes([4, 1, 100, 3]) + struct.pack('>HQ', 0x81, 1700)]
    out[0x6700] = [struct.pack('>BIBHQ', 2, 0x123, 2, 0x10, 5)]
    out[0x6705] = [struct.pack('>Q', 99) + bytes([2, 0x08, 40, 81, 12, 80, 95])]
    for level, t in enumerate((0x6400, 0x6410, 0x6420, 0x6430)):  # §19 trace: level, text
        out[t] = [bytes([level]) + b'IbeoLUX3: DSP warning\x00']
    fi = bytearray(128 + 2 * 17)                                 # 0x6130 frame index
    fi[0], fi[1] = 1, 2
    fi[2:19] = b'FRAMEINDEX_HEADER'
    _put(fi, 19, 'QQ', 2, 999)
    fi[35] = 1
    _put(fi, 36, 'H', 2)
    _put(fi, 38, 'HBHB', 0x2205, 1, 0x2280, 1)
    _put(fi, 128, 'QQB', 0, 100, 1)
    _put(fi, 145, 'QQB', 4096, 200, 2)
    out[0x6130] = [bytes(fi)]
    pc = bytearray(48 + 2 * 20)                                  # 0x7510 point cloud plane
    _put(pc, 0, 'HHddf', 1, 3, 0.2, 0.9, 35.0)
    _put(pc, 24, 'fff', 0.5, 0.0, 0.0)
    _put(pc, 44, 'I', 2)
    _put(pc, 48, 'ffffI', 1.0, 2.0, 3.0, 0.5, 0x10)
    _put(pc, 68, 'ffffI', -1.0, -2.0, -3.0, 1.5, 0x20)
    out[0x7510] = [bytes(pc)]
    version = struct.pack('>HI', 2, 5_007_003) + struct.pack('>H', 3) + b'abc'
    ecu = struct.pack('>H', 4) + b'ECU1'
    out[0x7110] = [struct.pack('>I', 3) + struct.pack('>HQI', 1, 7, len(version)) + version
                   + struct.pack('>HQI', 4, 8, len(ecu)) + ecu + struct.pack('>HQI', 3, 9, 2)
                   + b'\x00\x01']
    out[0x1002] = [bytes([0x30, 0xAA, 0xBB, 0xCC, 0x00]) + struct.pack('>HIQB', 0x8123, 500,
                                                                       77, 4)]
    out[0x4001] = [bytes([1, 2]) + struct.pack('>H', 3) + bytes([4, 5])
                   + struct.pack('>HI', 6, 2) + b'\xff' * 8
                   + struct.pack('>IIQQf', 10, 20, 30, 40, 0.5)
                   + struct.pack('>IIQQf', 11, 21, 31, 41, 1.0)]
    head = bytes([1, 5, 2, 2]) + struct.pack('>I', 2) + struct.pack('>QQQQ', 100, 200, 110, 210)
    out[0x9000] = [head + bytes([3, 2]) + bytes(16),                 # both fix-mode widths
                   head + struct.pack('>QQ', 3, 2) + bytes(16)]

    def lane_segment(k):
        b = bytearray(86)
        _put(b, 0, 'QQQQQ', 100 + k, 101 + k, 99 + k, 0, 7)
        b[40:46] = bytes([1, 2, 3, 4, 1, 0])
        _put(b, 46, 'ddd', 13.4 + k, 52.5, 90.0)
        _put(b, 70, 'ffff', 0.0, 1.75, 0.0, -1.75)
        return bytes(b)
    out[0x6970] = [struct.pack('>Q', 1) + struct.pack('>QHBQ', 555, 255, 1, 1)
                   + struct.pack('>QBQQ', 9, 2, 10, 8)
                   + struct.pack('>BQBBBBBQ', 0, 4000, 1, 0, 0, 0, 1, 1) + lane_segment(0)
                   + struct.pack('>BQBBBBBQ', 1, 4001, 4, 1, 1, 0, 0, 2) + lane_segment(1)
                   + lane_segment(2)]
    # §20 Set Filter rides in 0x2010 (big-endian, told apart from the LUX commands)
    out[ibeo.registry.COMMAND] = [
        bytes.fromhex('00050002 0000ffff'.replace(' ', '')),
        set_filter.encode_set_filter(set_filter.SetFilter(((0x2202, 0x220F),
                                                          (0x2280, 0x2281))))]
    return out


def recording_bodies() -> dict[int, list[bytes]]:
    """One frame of the synthetic ECU recording (ibeo/ecu_recording.py), written with the
    project's IdcWriter and read back with its IdcReader: one body per data type."""
    out: dict[int, list[bytes]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'ecu.idc'
        ecu_recording.write_recording(path, seconds=0.08, scanners=2, points=24)
        with IdcReader(path) as reader:
            for entry in reader:
                group = out.setdefault(entry.data_type, [])
                if not group:
                    group.append(bytes(reader.body(entry)))
    return out


def records() -> list:
    pts = np.zeros(5, scan.POINT_DTYPE)
    pts['layer'] = [0, 1, 2, 3, 1]
    pts['echo'] = [0, 0, 1, 2, 0]
    pts['flags'] = [0, 1, 2, 4, 8]
    pts['angle_ticks'] = [-1920, -100, 0, 100, 1600]
    pts['distance_cm'] = [100, 2000, 30000, 65535, 1]
    pts['echo_width_cm'] = [10, 20, 30, 40, 50]
    s = scan.LuxScan(7, 0x8000, 3, 1 << 32, (1 << 32) + 1000, 11520, 1600, -1920, flags=0x0400,
                     points=pts)
    o = objects.make_objects(2)
    o['id'] = [1, 2]
    o['reference_x'] = [5.0, -3.0]
    o['classification'] = [5, 3]
    lst = objects.LuxObjectList(1 << 32, o, [np.array([[1.0, 2.0], [3.0, 4.0]]),
                                             np.array([[0.5, 0.5]])])
    vs = vehicle_state.LuxVehicleState(1 << 32, 9, 0, 10.0, 0.1, 0.01, 123.45, -6.78, 0.5, 40,
                                       0.4, 0.0, 0.001, 0.03)
    return [s, lst, vs, errors_warnings.errors_from_names('W-Sync'),
            commands.LuxCommand(commands.GET_STATUS),
            commands.LuxCommand(commands.SET_PARAMETER, parameter_index=0x1100,
                                parameter_raw=0x0A000001),
            commands.status_reply(commands.LuxStatus(0x1230, 0x2340, 0)),
            commands.parameter_reply(0x1100, 0x0A000001), commands.failure(0x20)]


def bodies() -> dict[int, list[bytes]]:
    """Per registered data type: hand-written bodies (LUX and ECU), bodies of the synthetic ECU
    recording, then the project encoder's bodies (the LUX records, and every decoded ECU seed
    encoded again where its type has an encoder)."""
    out = hand_bodies()
    for source in (ecu_hand_bodies(), recording_bodies()):
        for data_type, group in source.items():
            out.setdefault(data_type, []).extend(group)
    for rec in records():
        data_type, body = ibeo.encode_record(rec)
        out.setdefault(data_type, []).append(body)
    for data_type, group in list(out.items()):
        if data_type in LUX_TYPES:
            continue
        for body in list(group):
            try:
                again = ibeo.encode_record(registry.decode_message(data_type, body))
            except CodecError:           # no encoder (trace types, set filter)
                continue
            if again[0] == data_type:
                group.append(again[1])
    return {t: list(dict.fromkeys(group)) for t, group in out.items()}   # no duplicates


def messages() -> list[bytes]:
    """Complete messages (header + body): hand-written headers and encode_record_message."""
    out = []
    for data_type, group in hand_bodies().items():
        out += [hand_header(data_type, len(b), ntp=5 << 32) + b for b in group]
    out += [ibeo.encode_record_message(r, device_id=3, ntp=6 << 32) for r in records()]
    return out
