"""Synthetic Ibeo ECU recordings (ROS-free): a drive past a few objects as the ECU data types,
written to an ``.idc`` file for tests, the demo and the benchmark (``ibeo_idc make-demo``).

Per frame (``rate_hz``): one 0x2205 scan from ``scanners`` LUX units (in vehicle coordinates,
in each scanner's own, or alternating frame by frame: ``coordinates``)
(``points`` points in all, each with its device id, layer, echo, UINT32 time offset and
UINT16 flags), a 0x2280 object list, a 0x2807 vehicle state, a 0x2604 GPS fix, a 0x9001 GpsImu,
a 0x9002 odometry, and a 0x1100 frame end; once a second a 0x2808, a 0x6701 device status per
scanner and a 0x2403 JPEG image.  Everything is deterministic (seeded).  :class:`EcuFrames`
gives the same frames one at a time (the emulator's ECU mode streams them).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Union

import numpy as np

from ros_sim_bridge.core.ntp import unix_ns_to_ntp64
from .codec import frame_end as fe
from .codec import registry
from .codec import gps_imu as gi
from .codec import image as im
from .codec import objects_ecu as oe
from .codec import odometry as od
from .codec import scan_ecu as se
from .codec import system_monitoring as sm
from .codec import vehicle_state_ecu as ve
from .idc import IdcWriter

ECU_DEVICE = 1
MAX_SCANNERS = 245          # scanner k has the device id 10 + k (a byte)
MAX_POINTS = 65_535         # a 0x2205 counts its points in 16 bits
#: A minimal JPEG-framed payload (SOI … EOI); not a decodable picture, the bytes go through as is.
FAKE_JPEG = b'\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9'


def mounting(k: int, n: int) -> tuple:
    """(yaw, x, y) of scanner ``k`` of ``n`` placed around the car, facing outwards."""
    yaw = 2 * math.pi * k / n
    return yaw, 2.0 * math.cos(yaw) + 1.5, 1.0 * math.sin(yaw)


#: where a scan's points are given (``EcuFrames(coordinates=...)``); 'both': even frames in
#: vehicle coordinates, odd ones in scanner coordinates
COORDINATES = ('vehicle', 'scanner', 'both')


def scan_points(rng: np.random.Generator, n: int, scanners: int, t: float,
                vehicle: bool = True) -> np.ndarray:
    """The points of one scan, in vehicle coordinates or (``vehicle`` false) each in its
    scanner's own (the scanner at the origin, looking along x)."""
    pts = np.zeros(n, se.POINT_DTYPE)
    dev = np.arange(n) % scanners
    ang = rng.uniform(-math.pi / 3, math.pi / 3, n).astype(np.float32)
    yaw = (2 * np.pi * dev / scanners).astype(np.float32) if vehicle else np.float32(0)
    r = (10.0 + 5.0 * np.sin(3 * ang + t) + rng.normal(0, 0.05, n)).astype(np.float32)
    pts['x'] = r * np.cos(ang + yaw)
    pts['y'] = r * np.sin(ang + yaw)
    pts['layer'] = np.arange(n) % 4
    pts['z'] = r * np.sin(np.radians(-1.2 + 0.8 * pts['layer'].astype(np.float32)))
    pts['echo_width'] = rng.uniform(0.1, 2.0, n).astype(np.float32)
    pts['device_id'] = dev + 10
    pts['echo'] = (np.arange(n) // 7) % 3
    pts['time_offset_us'] = (np.arange(n) * 80_000 // max(n, 1)).astype(np.uint32)
    pts['flags'] = np.where(pts['z'] < -0.15, se.POINT_FLAG_GROUND, 0) \
        | np.where(np.arange(n) % 97 == 0, se.POINT_FLAG_TRANSPARENT, 0)
    return pts


def scanners_info(scanners: int, start_ntp: int) -> np.ndarray:
    info = se.make_scanners(scanners)
    for k in range(scanners):
        yaw, x, y = mounting(k, scanners)
        info[k]['device_id'] = 10 + k
        info[k]['scanner_type'] = 6
        info[k]['start_angle'], info[k]['end_angle'] = math.pi / 3, -math.pi / 3
        info[k]['start_ntp'] = info[k]['device_start_ntp'] = start_ntp
        info[k]['end_ntp'] = info[k]['device_end_ntp'] = start_ntp + (80 << 32) // 1000
        info[k]['frequency'], info[k]['beam_tilt'] = 12.5, 0.0
        info[k]['mounting_yaw'], info[k]['mounting_x'], info[k]['mounting_y'] = yaw, x, y
        info[k]['mounting_z'] = 0.5
        info[k]['resolutions']['start_angle'][0] = math.pi / 3
        info[k]['resolutions']['resolution'][0] = math.radians(0.25)
    return info


def objects(t: float, ntp: int) -> oe.EcuObjectList2280:
    o = oe.make_objects(3, oe.OBJECTS_2280)
    o['id'] = [1, 2, 3]
    o['flags'] = oe.FLAG_MOBILE_DETECTED | oe.FLAG_MOTION_VALIDATED
    o['age'] = int(t * 12.5)
    o['timestamp_ntp'] = ntp
    o['classification'] = [5, 3, 6]
    o['classification_quality'] = [90, 70, 80]
    o['box_center_x'] = [15.0 - 2 * t, 8.0, -12.0 + t]
    o['box_center_y'] = [3.5, -4.0 + 0.5 * t, -3.5]
    o['box_size_x'], o['box_size_y'] = [4.5, 0.6, 9.0], [1.8, 0.6, 2.5]
    o['course_angle'] = [math.pi, math.pi / 2, 0.0]
    o['absolute_velocity_x'] = [-2.0, 0.0, 1.0]
    o['absolute_velocity_y'] = [0.0, 0.5, 0.0]
    o['reference_point_location'] = 9
    o['reference_point_x'], o['reference_point_y'] = o['box_center_x'], o['box_center_y']
    contours = []
    for k in range(3):
        cx, cy, lx, ly = o['box_center_x'][k], o['box_center_y'][k], o['box_size_x'][k], \
            o['box_size_y'][k]
        contours.append(np.array([[cx - lx / 2, cy - ly / 2], [cx + lx / 2, cy - ly / 2],
                                  [cx + lx / 2, cy + ly / 2]], np.float32))
    return oe.EcuObjectList2280(ntp, o, contours)


class EcuFrames:
    """The recording's frames one at a time (what the emulator's ECU mode streams and
    :func:`write_recording` writes): :meth:`frame` gives the messages of frame ``f`` as
    (data type, body, device id, NTP64 time) tuples, in the order an ECU sends them."""

    def __init__(self, *, rate_hz: float = 12.5, scanners: int = 3, points: int = 6000,
                 start_unix_ns: int = 1_700_000_000_000_000_000, seed: int = 7,
                 coordinates: str = 'vehicle'):
        if coordinates not in COORDINATES:
            raise ValueError(f'coordinates must be one of {", ".join(COORDINATES)}, '
                             f'not {coordinates!r}')
        if not rate_hz > 0:                  # (also NaN)
            raise ValueError(f'rate must be > 0 Hz, not {rate_hz}')
        if not 1 <= scanners <= MAX_SCANNERS:
            raise ValueError(f'scanners must be 1..{MAX_SCANNERS} (device ids 10..'
                             f'{9 + MAX_SCANNERS}), not {scanners}')
        if not 0 <= points <= MAX_POINTS:
            raise ValueError(f'points must be 0..{MAX_POINTS} (a 0x2205 scan holds at most '
                             f'{MAX_POINTS:,}), not {points}')
        self.rng = np.random.default_rng(seed)
        self.rate_hz, self.scanners, self.points = rate_hz, scanners, points
        self.coordinates = coordinates
        self.start_unix_ns = start_unix_ns
        self.dt_ns = int(1e9 / rate_hz)
        self.lat0, self.lon0 = math.radians(52.52), math.radians(13.40)

    def frame(self, f: int) -> list:
        out = []

        def record(rec, device_id: int, ntp: int) -> None:
            data_type, body = registry.encode_record(rec)
            out.append((data_type, body, device_id, ntp))
        rate_hz, scanners, lat0, lon0 = self.rate_hz, self.scanners, self.lat0, self.lon0
        t = f / rate_hz
        ns = self.start_unix_ns + f * self.dt_ns
        ntp = unix_ns_to_ntp64(ns)
        vehicle = self.coordinates == 'vehicle' or (self.coordinates == 'both' and f % 2 == 0)
        scan = se.EcuScan(ntp, 80_000,
                          se.SCAN_FLAG_FUSED | (se.SCAN_FLAG_VEHICLE_COORDINATES * vehicle),
                          f & 0xFFFF, scanners_info(scanners, ntp),
                          scan_points(self.rng, self.points, scanners, t, vehicle))
        out.append((se.SCAN_2205, se.encode_scan(scan), ECU_DEVICE, ntp))
        out.append((oe.OBJECTS_2280, oe.encode_objects(objects(t, ntp)), ECU_DEVICE, ntp + 1))
        speed, yaw_rate = 10.0, 0.05
        record(ve.EcuVehicleState2807(
            ntp, int(speed * t * 1e4), 0, yaw_rate * t, speed, yaw_rate, 0.3, 0.02, 1.9,
            0.9, 2.7, 1.0, 0.0, 16.0, 0.0, 0.0, 0.1), ECU_DEVICE, ntp + 2)
        north = speed * t / 6_371_000.0
        record(gi.PositionWgs84(int(t * 1e6), ntp, 20, lat0 + north, lon0, 34.0,
                                0.5, 0.5, 1.0, 0.0, 0.01, 0.0, 0.02, 8), 20, ntp + 3)
        record(gi.GpsImu(latitude=lat0 + north, latitude_sigma=0.3, longitude=lon0,
                         longitude_sigma=0.3, altitude=34.0, altitude_sigma=0.8,
                         yaw_angle=0.0, yaw_angle_sigma=0.01, pitch_angle=0.01,
                         roll_angle=-0.01, longitudinal_acceleration=0.1,
                         velocity_north=speed, yaw_rate=yaw_rate, satellites=12,
                         measurement_time_ecu_ntp=ntp, source=1, ins_quality=3), 21, ntp + 4)
        record(od.EcuOdometry(0.02, 0.3, 0.0, speed, speed, speed, speed, 2.0,
                              speed, 0.1, yaw_rate, ntp, ntp, ntp, ntp, ntp, 2, 3),
               ECU_DEVICE, ntp + 5)
        if f % max(1, int(rate_hz)) == 0:
            record(ve.EcuVehicleState2808(
                timestamp_ntp=ntp, sources=ve.SOURCE_GPS | ve.SOURCE_CAN,
                latitude_deg=math.degrees(lat0 + north), longitude_deg=math.degrees(lon0),
                altitude=34.0, sigma_x=0.5, sigma_y=0.5, longitudinal_velocity=speed,
                yaw_rate=yaw_rate), ECU_DEVICE, ntp + 6)
            for k in range(scanners):
                record(sm.DeviceStatus(10 + k, 1, 1, 1, 0, ns // 1_000_000), ECU_DEVICE, ntp + 7)
            record(im.EcuImage(im.JPEG, int(t * 1e6), ntp, 30, 0.0, 0.0, 0.0, 1.8,
                               0.0, 1.3, 1.0, 0.6, 640, 480, FAKE_JPEG), 30, ntp + 8)
        record(fe.FrameEndSeparator(frame_id=f, creation_ntp=ntp), ECU_DEVICE, ntp + 9)
        return out


def write_recording(path: Union[str, Path], *, seconds: float = 2.0, rate_hz: float = 12.5,
                    scanners: int = 3, points: int = 6000, start_unix_ns: int =
                    1_700_000_000_000_000_000, seed: int = 7,
                    coordinates: str = 'vehicle') -> int:
    """Write the recording; returns the number of messages (trailer included)."""
    frames = EcuFrames(rate_hz=rate_hz, scanners=scanners, points=points,
                       start_unix_ns=start_unix_ns, seed=seed, coordinates=coordinates)
    with IdcWriter(path) as w:
        for f in range(max(1, int(round(seconds * rate_hz)))):
            for data_type, body, device_id, ntp in frames.frame(f):
                w.write(data_type, body, device_id=device_id, ntp=ntp)
        return w.messages + 1
