"""Ibeo FUSION SYSTEM / ECU scan data, data types 0x2204 and 0x2205 (spec §8, §9; big-endian).

Body = 24-byte scan header + scanner infos (40 B each in 0x2204, 148 B each in 0x2205, the
latter with eight resolution sectors) + 28-byte scan points.  Points carry the device id of the
scanner that measured them; they are decoded in one go into :data:`POINT_DTYPE` (host byte
order, same 28-byte layout as the wire, reserved bytes not named).

Fields other drivers get wrong (SUPPLEMENT §3.3): the point flags are UINT16 at offset 24 and
the point time offset UINT32 µs at offset 20; scan flag bits 9/10/11 are 0x200/0x400/0x800.
A message can hold up to 65,535 points (≈1.84 MB): nothing here assumes 64 KiB.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Optional

import numpy as np

from ros_sim_bridge.core.binary import CodecError, pack, records, to_host_order, unpack_from
from ros_sim_bridge.core.native import address, beside, load_kernel, load_kernel_on
from ros_sim_bridge.core.ntp import ntp64_to_unix_ns
from . import registry
from .body_sizes import SCAN_HEADER, SCAN_POINT_SIZE, SCANNER_INFO_SIZE, scan_body_size

SCAN_2204 = 0x2204
SCAN_2205 = 0x2205
NAME = 'ibeo_ecu_scan'

_HEADER = SCAN_HEADER                  # start, end offset, flags, number, points, infos
HEADER_SIZE = _HEADER.size            # 24
assert HEADER_SIZE == 24

# Scan flags (header, §8/§9).
SCAN_FLAG_GROUND_LABELED = 0x0001
SCAN_FLAG_DIRT_LABELED = 0x0002
SCAN_FLAG_RAIN_LABELED = 0x0004
SCAN_FLAG_FUSED = 0x0200              # bit 9
SCAN_FLAG_MIRROR_REAR = 0x0400        # bit 10
SCAN_FLAG_VEHICLE_COORDINATES = 0x0800  # bit 11: 0 = scanner, 1 = vehicle coordinates

# Point flags (§9 "Scan point", UINT16).
POINT_FLAG_GROUND = 0x0001
POINT_FLAG_DIRT = 0x0002
POINT_FLAG_RAIN = 0x0004
POINT_FLAG_ROAD_MARKING = 0x0008
POINT_FLAG_CURBSTONE = 0x0080
POINT_FLAG_GUARD_RAIL = 0x0088
POINT_FLAG_TRANSPARENT = 0x1000

SCANNER_TYPES = {3: 'alasca_xt', 4: 'ecu', 5: 'lux_prototype', 6: 'lux'}


def _layout(fields, itemsize: int, order: str) -> np.dtype:
    """A structured dtype with explicit offsets (reserved bytes left unnamed)."""
    names = [f[0] for f in fields]
    formats = [np.dtype(f[1]).newbyteorder(order) if not isinstance(f[1], list)
               else np.dtype([(n, np.dtype(t).newbyteorder(order)) for n, t in f[1]])
               for f in fields]
    formats = [(fmt, f[3]) if len(f) > 3 else fmt for fmt, f in zip(formats, fields)]
    return np.dtype({'names': names, 'formats': formats, 'offsets': [f[2] for f in fields],
                     'itemsize': itemsize})


_POINT_FIELDS = [('x', 'f4', 0), ('y', 'f4', 4), ('z', 'f4', 8), ('echo_width', 'f4', 12),
                 ('device_id', 'u1', 16), ('layer', 'u1', 17), ('echo', 'u1', 18),
                 ('time_offset_us', 'u4', 20), ('flags', 'u2', 24)]
#: Wire layout of a scan point (§8/§9, 28 B, big-endian): x/y/z/echo width in m, device id,
#: layer, echo, time offset (µs after the scan start), flags (POINT_FLAG_*).
WIRE_POINT_DTYPE = _layout(_POINT_FIELDS, 28, '>')
#: Decoded points: the same fields in host byte order (what :class:`EcuScan` holds).
POINT_DTYPE = _layout(_POINT_FIELDS, 28, '=')

_MOUNTING = [('yaw', 'f4'), ('pitch', 'f4'), ('roll', 'f4'), ('x', 'f4'), ('y', 'f4'),
             ('z', 'f4')]
_INFO_2204 = ([('device_id', 'u1', 0), ('scanner_type', 'u1', 1), ('scan_number', 'u2', 2),
               ('start_angle', 'f4', 8), ('end_angle', 'f4', 12)]
              + [(f'mounting_{n}', t, 16 + 4 * i) for i, (n, t) in enumerate(_MOUNTING)])
_INFO_2205 = ([('device_id', 'u1', 0), ('scanner_type', 'u1', 1), ('scan_number', 'u2', 2),
               ('start_angle', 'f4', 8), ('end_angle', 'f4', 12),
               ('start_ntp', 'u8', 16), ('end_ntp', 'u8', 24),
               ('device_start_ntp', 'u8', 32), ('device_end_ntp', 'u8', 40),
               ('frequency', 'f4', 48), ('beam_tilt', 'f4', 52), ('scan_flags', 'u4', 56)]
              + [(f'mounting_{n}', t, 60 + 4 * i) for i, (n, t) in enumerate(_MOUNTING)]
              + [('resolutions', [('start_angle', 'f4'), ('resolution', 'f4')], 84, (8,))])
#: Scanner info of 0x2204 (§8, 40 B): angles rad, mounting rad / m.
WIRE_INFO_2204_DTYPE = _layout(_INFO_2204, 40, '>')
INFO_2204_DTYPE = _layout(_INFO_2204, 40, '=')
#: Scanner info of 0x2205 (§9, 148 B): also the scanner's own start/end times (host and
#: device clocks, NTP64), frequency Hz, beam tilt rad, scan flags and 8 resolution sectors
#: (start angle rad, resolution rad; valid only where resolution > 0).
WIRE_INFO_2205_DTYPE = _layout(_INFO_2205, 148, '>')
INFO_2205_DTYPE = _layout(_INFO_2205, 148, '=')
assert WIRE_POINT_DTYPE.itemsize == 28 and WIRE_INFO_2205_DTYPE.itemsize == 148

_INFO = {SCAN_2204: (WIRE_INFO_2204_DTYPE, INFO_2204_DTYPE),
         SCAN_2205: (WIRE_INFO_2205_DTYPE, INFO_2205_DTYPE)}


@dataclass(frozen=True, eq=False)
class EcuScan:
    """One 0x2205 scan (the 0x2204 one is :class:`EcuScan2204`).  ``scanners`` is an array of
    :data:`INFO_2205_DTYPE` (or INFO_2204_DTYPE), ``points`` of :data:`POINT_DTYPE`."""
    start_ntp: int
    end_offset_us: int
    flags: int
    scan_number: int
    scanners: np.ndarray = field(default_factory=lambda: np.zeros(0, INFO_2205_DTYPE))
    points: np.ndarray = field(default_factory=lambda: np.zeros(0, POINT_DTYPE))
    #: how many points have a NaN or infinite x, y or z (counted while decoding: by the
    #: compiled kernel in its one pass); None when not known (a record made, not decoded)
    non_finite: Optional[int] = None
    #: ((device id, start, end), ...) when ``points`` are grouped by device id (ascending, each
    #: group in the wire's order: :func:`decode_scan_grouped` of a scan in scanner
    #: coordinates); None when they are in the wire's order
    groups: Optional[tuple] = None

    DATA_TYPE = SCAN_2205

    @property
    def dense(self) -> Optional[bool]:
        """True when no point has a NaN or infinite x, y or z; None when not known."""
        return None if self.non_finite is None else self.non_finite == 0

    @property
    def vehicle_coordinates(self) -> bool:
        """True when the points are in vehicle coordinates (flag bit 11), else scanner's."""
        return bool(self.flags & SCAN_FLAG_VEHICLE_COORDINATES)

    @property
    def fused(self) -> bool:
        return bool(self.flags & SCAN_FLAG_FUSED)

    @property
    def mirror_side(self) -> int:
        return 1 if self.flags & SCAN_FLAG_MIRROR_REAR else 0

    @property
    def start_ns(self) -> int:
        return ntp64_to_unix_ns(self.start_ntp)

    @property
    def device_ids(self) -> list[int]:
        return [int(d) for d in self.scanners['device_id']]

    def __len__(self) -> int:
        return len(self.points)


@dataclass(frozen=True, eq=False)
class EcuScan2204(EcuScan):
    """One 0x2204 scan (FUSION SYSTEM ≤ 2.1): 40-byte scanner infos, same points."""
    scanners: np.ndarray = field(default_factory=lambda: np.zeros(0, INFO_2204_DTYPE))
    DATA_TYPE = SCAN_2204


def _decode(data_type: int, body, grouped: bool = False,
            points_out: Optional[Callable[[int], np.ndarray]] = None) -> EcuScan:
    start, end_off, flags, number, n_points, n_infos = unpack_from(_HEADER, body, 0, NAME,
                                                                   'scan_header')
    wire_info, info = _INFO[data_type]
    infos = records(wire_info, body, HEADER_SIZE, n_infos, NAME, 'scanner_infos')
    at = HEADER_SIZE + n_infos * wire_info.itemsize
    wire = records(WIRE_POINT_DTYPE, body, at, n_points, NAME, 'points')
    cls = EcuScan if data_type == SCAN_2205 else EcuScan2204
    if grouped and not flags & SCAN_FLAG_VEHICLE_COORDINATES and n_points:
        points, non_finite, groups = host_points_grouped(wire)
        return cls(start, end_off, flags, number, _host_infos(infos, info), points, non_finite,
                   tuple(groups))
    out = points_out(n_points) if points_out is not None and \
        flags & SCAN_FLAG_VEHICLE_COORDINATES else None
    return cls(start, end_off, flags, number, _host_infos(infos, info), *host_points(wire, out=out))


def _scalars(dtype: np.dtype, base: int = 0) -> list:
    """(offset, size) of every number in a record of ``dtype`` (nested records, arrays)."""
    if dtype.names is None:
        if dtype.subdtype is not None:
            sub, shape = dtype.subdtype
            return [p for k in range(int(np.prod(shape)))
                    for p in _scalars(sub, base + k * sub.itemsize)]
        return [(base, dtype.itemsize)]
    return [p for name in dtype.names
            for p in _scalars(dtype.fields[name][0], base + dtype.fields[name][1])]


@lru_cache(maxsize=16)
def _swap_plan(wire: np.dtype, host: np.dtype, n: int) -> Optional[tuple]:
    """(byte indices of ``n`` host records in the ``n`` wire records, the byte indices of
    their padding) when ``host`` is ``wire`` with every number's bytes swapped; None
    otherwise."""
    if wire.newbyteorder('S') != host:
        return None
    size = host.itemsize
    one = np.arange(size)
    covered = np.zeros(size, bool)
    for offset, width in _scalars(host):
        one[offset:offset + width] = one[offset:offset + width][::-1]
        covered[offset:offset + width] = True
    records = np.arange(n)[:, None] * size
    return (records + one).reshape(-1), (records + np.flatnonzero(~covered)).reshape(-1)


def _host_infos(infos: np.ndarray, host: np.dtype) -> np.ndarray:
    """``infos.astype(host)`` of the few scanner infos of a scan, by one byte gather (numpy's
    field-by-field cast costs several µs even for three records); padding bytes zero."""
    plan = _swap_plan(infos.dtype, host, len(infos))
    if plan is None or not infos.flags.c_contiguous:
        return infos.astype(host)
    index, padding = plan
    out = np.frombuffer(infos, np.uint8).take(index)    # (frombuffer: no dtype checks of a
    if len(padding):                                    # view, 1 µs each)
        out[padding] = 0
    return np.frombuffer(out, host)


#: The compiled point swap (``ecu_points.c``, built by CMake beside this module) and the
#: interface version of it that :data:`KERNEL` calls
LIBRARY, ABI = 'libsim_bridge_ecu_points.so', 1
#: ``KERNEL(wire, n, out)`` → how many points have a non-finite x, y or z (addresses as ints);
#: None where the library is missing (a source tree) or the host is big-endian
KERNEL = load_kernel(beside(__file__, LIBRARY), 'sim_bridge_ecu_points',
                     [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p], ctypes.c_size_t,
                     abi=ABI)
#: The paths of ``ecu_points.c``, narrowest first: :data:`KERNEL` takes the widest this CPU has.
PATHS = ('scalar', 'avx2')


def kernel_on(path: str) -> Optional[Callable[..., int]]:
    """:data:`KERNEL` held to one of :data:`PATHS` (``sim_bridge_ecu_points_on``,
    :func:`~ros_sim_bridge.core.native.load_kernel_on`); None where this CPU lacks it."""
    p = ctypes.c_void_p
    return load_kernel_on(path, PATHS, beside(__file__, LIBRARY), 'sim_bridge_ecu_points_on',
                          [p, ctypes.c_size_t, p], ctypes.c_size_t, ABI,
                          'sim_bridge_ecu_points_abi')


def host_points(wire: np.ndarray, native: bool = True, out: Optional[np.ndarray] = None
                ) -> tuple[np.ndarray, int]:
    """(points in :data:`POINT_DTYPE`, how many have a NaN or infinite x, y or z) of the wire
    points: ``wire.astype`` with the padding bytes zero (the clouds carry the array's bytes as
    they are, and a cloud must be the same bytes each time it is made from the same message).
    The hot path: one pass of the compiled kernel, which counts them on the way; else numpy's
    word swaps and a count of its own.  ``out``: a contiguous POINT_DTYPE array of
    ``len(wire)`` points to write them to (e.g. inside a message being built), else a new one."""
    if out is not None and (out.dtype != POINT_DTYPE or len(out) != len(wire)
                            or not out.flags.c_contiguous or not out.flags.writeable):
        raise ValueError('out must be a writable, contiguous POINT_DTYPE array of the same '
                         'length')
    if KERNEL is None or not native or not wire.flags.c_contiguous:
        points = to_host_order(wire, POINT_DTYPE)
        finite = np.isfinite(points['x']) & np.isfinite(points['y']) & np.isfinite(points['z'])
        if out is not None:
            out[...] = points
            points = out
        return points, len(points) - int(np.count_nonzero(finite))
    if out is None:
        out = np.empty(len(wire), POINT_DTYPE)
    return out, KERNEL(address(wire), len(wire), address(out)) if len(wire) else 0


#: ``GROUP(points, n, out, counts)``: the points grouped by device id (``ecu_points.c``); None
#: where :data:`KERNEL`'s library is missing
GROUP = load_kernel(beside(__file__, LIBRARY), 'sim_bridge_ecu_group',
                    [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p], None,
                    abi=1)


def group_by_device(points: np.ndarray, native: bool = True) -> tuple[np.ndarray, list]:
    """(the points of :data:`POINT_DTYPE` grouped by device id, ascending, each group in the
    points' own order; [(device id, start, end)] of each group): one counting pass and one
    copy in the compiled kernel, else a stable numpy sort of whole rows."""
    if GROUP is not None and native and points.dtype == POINT_DTYPE \
            and points.flags.c_contiguous:
        out = np.empty(len(points), POINT_DTYPE)
        if not len(points):
            return out, []
        counts = np.empty(256, np.uintp)            # the kernel sets every count
        GROUP(points.ctypes.data, len(points), out.ctypes.data, counts.ctypes.data)
        return out, _groups(counts)
    ids = points['device_id']
    order = np.argsort(ids, kind='stable')
    rows = np.ascontiguousarray(points).view(np.uint8).reshape(len(points), POINT_DTYPE.itemsize)
    out = np.take(rows, order, axis=0).reshape(-1).view(points.dtype)
    ids = ids[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(ids) else np.zeros(0, int)
    ends = np.r_[starts[1:], len(ids)]
    return out, [(int(ids[a]), int(a), int(b)) for a, b in zip(starts, ends)]


#: ``GROUPED(wire, n, out, counts)`` → how many points have a non-finite x, y or z: the
#: points to host order and grouped by device id in one pass (``ecu_points.c``: the bytes of
#: :data:`KERNEL` then :data:`GROUP`); None where :data:`KERNEL`'s library is missing
GROUPED = load_kernel(beside(__file__, LIBRARY), 'sim_bridge_ecu_points_grouped',
                      [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p],
                      ctypes.c_size_t, abi=1)


def host_points_grouped(wire: np.ndarray, native: bool = True) -> tuple:
    """(points, non-finite count, groups): :func:`host_points` then :func:`group_by_device`
    of the wire points, in one pass of the compiled kernel where there is one."""
    if GROUPED is None or not native or not wire.flags.c_contiguous:
        points, non_finite = host_points(wire, native)
        points, groups = group_by_device(points, native)
        return points, non_finite, groups
    out = np.empty(len(wire), POINT_DTYPE)
    if not len(wire):
        return out, 0, []
    # not np.zeros: the kernel sets every count, and calloc of the 2 kB here (with the scans'
    # freed arrays in the heap) cost up to 0.35 ms, 10 ms a conversion of the benchmark's file
    counts = np.empty(256, np.uintp)
    non_finite = GROUPED(wire.ctypes.data, len(wire), out.ctypes.data, counts.ctypes.data)
    return out, non_finite, _groups(counts)


def _groups(counts: np.ndarray) -> list:
    """[(device id, start, end)] of the groups of a counting sort's ``counts`` (Python ints:
    numpy's cumsum and scalar indexing cost 15 µs a scan)."""
    sizes = counts.tolist()
    out, at = [], 0
    for d in np.flatnonzero(counts).tolist():
        out.append((d, at, at + sizes[d]))
        at += sizes[d]
    return out


#: the body size a scan header's counts need (:func:`.body_sizes.scan_body_size`, numpy-free)
declared_body_size = scan_body_size
# it knows the same layouts
assert SCAN_POINT_SIZE == WIRE_POINT_DTYPE.itemsize
assert all(SCANNER_INFO_SIZE[t] == _INFO[t][0].itemsize for t in (SCAN_2204, SCAN_2205))


def decode_scan_2205(body, header=None) -> EcuScan:
    """Decode a 0x2205 body (§9); TRUNCATED (field ``scanner_infos`` / ``points``, with the
    offset) when the counts need more bytes than the body has."""
    return _decode(SCAN_2205, body)


def decode_scan_2204(body, header=None) -> EcuScan2204:
    """Decode a 0x2204 body (§8)."""
    return _decode(SCAN_2204, body)


def decode_scan_into(data_type: int, body, points_out: Callable[[int], np.ndarray]
                     ) -> EcuScan:
    """Decode a 0x2205 or 0x2204 body; a scan in vehicle coordinates gets its n host-order
    points written to ``points_out(n)`` (e.g. :meth:`~ros_sim_bridge.ros.pointcloud_cdr.
    CloudCdr.points`: inside the message that publishes them), one in scanner coordinates a
    new array as :func:`decode_scan_2205` gives."""
    return _decode(data_type, body, points_out=points_out)


def decode_scan_grouped(data_type: int, body) -> EcuScan:
    """Decode a 0x2205 or 0x2204 body; a scan in scanner coordinates gets its points grouped
    by device id (:attr:`EcuScan.groups`, one pass: :func:`host_points_grouped`), for a
    converter that makes one cloud per scanner."""
    return _decode(data_type, body, grouped=True)


def encode_scan(scan: EcuScan) -> bytes:
    """The body of ``scan`` (0x2205, or 0x2204 for an :class:`EcuScan2204`)."""
    wire_info, _ = _INFO[scan.DATA_TYPE]
    infos, pts = np.asarray(scan.scanners), np.asarray(scan.points)
    if len(pts) > 0xFFFF:
        raise CodecError(NAME, f'{len(pts)} points do not fit the 16-bit count', field='points')
    if len(infos) > 0xFF:
        raise CodecError(NAME, f'{len(infos)} scanner infos do not fit the 8-bit count',
                         field='scanner_infos')
    head = pack(_HEADER, (scan.start_ntp, scan.end_offset_us, scan.flags, scan.scan_number,
                          len(pts), len(infos)), NAME)
    w_info = np.zeros(len(infos), wire_info)
    for name in wire_info.names:
        w_info[name] = infos[name]
    w_pts = np.zeros(len(pts), WIRE_POINT_DTYPE)
    for name in WIRE_POINT_DTYPE.names:
        w_pts[name] = pts[name]
    return head + w_info.tobytes() + w_pts.tobytes()


def make_scanners(count: int, data_type: int = SCAN_2205) -> np.ndarray:
    """A zeroed scanner-info array to fill in before encoding."""
    return np.zeros(count, _INFO[data_type][1])


registry.register(SCAN_2205, 'ecu_scan_2205', decode_scan_2205, record=EcuScan,
                  encode=encode_scan, min_size=HEADER_SIZE,
                  max_size=HEADER_SIZE + 0xFF * 148 + 0xFFFF * 28)
registry.register(SCAN_2204, 'ecu_scan_2204', decode_scan_2204, record=EcuScan2204,
                  encode=encode_scan, min_size=HEADER_SIZE,
                  max_size=HEADER_SIZE + 0xFF * 40 + 0xFFFF * 28)
