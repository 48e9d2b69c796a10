"""Valid ibeo messages for the fuzz suite: bodies written here from the interface spec's tables
(§3 scan, §4 objects, §5 vehicle state, §6 errors/warnings, §7 commands/replies; all
little-endian bodies behind the big-endian §2.4 header), and records encoded by the project."""
from __future__ import annotations

import struct

import numpy as np

from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.ibeo.codec import commands, errors_warnings, objects, scan, vehicle_state


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
    """Per registered data type: hand-written bodies, then the project encoder's bodies."""
    out = hand_bodies()
    for rec in records():
        data_type, body = ibeo.encode_record(rec)
        out.setdefault(data_type, []).append(body)
    return out


def messages() -> list[bytes]:
    """Complete messages (header + body): hand-written headers and encode_record_message."""
    out = []
    for data_type, group in hand_bodies().items():
        out += [hand_header(data_type, len(b), ntp=5 << 32) + b for b in group]
    out += [ibeo.encode_record_message(r, device_id=3, ntp=6 << 32) for r in records()]
    return out
