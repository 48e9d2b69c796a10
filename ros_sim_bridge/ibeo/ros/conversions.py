"""ibeo LUX / SICK LD-MRS records → the numbers of their ROS messages.

* :class:`CloudBuilder`: a 0x2202 scan's points → :data:`CLOUD_DTYPE` (x, y, z,
  horizontal_angle, echo_width, layer, echo, flags) in the scanner frame, vectorised
  (the compiled kernel of :mod:`.lux_native`, or numpy), with the point filters, straight into
  the message's bytes (:class:`~ros_sim_bridge.ros.pointcloud_cdr.CloudCdr`).  Geometry as
  :func:`ros_sim_bridge.ibeo.geometry.points_xyz` (layer table, 8-layer mirror tilt), in
  single precision, with the codec's ticks and cm turned to rad and m by
  :mod:`ros_sim_bridge.ibeo.codec.units`.
* :func:`cap_objects`: at most :class:`ObjectCaps` objects and contour points per message,
  converted from the codec's cm, cm/s, ms, deg to SI with
  :mod:`ros_sim_bridge.ibeo.codec.units`; the messages (scan info, object list, markers,
  vehicle state, twist) are made from these as CDR bytes by :mod:`.lux_cdr`.
* :func:`errors_statuses`: 0x2030 registers → ``diagnostic_msgs/DiagnosticStatus`` (ERROR for
  the error registers, WARN for the warning registers, every named bit a key).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional, Sequence

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue


from ros_sim_bridge.core.native import address
from ros_sim_bridge.ibeo.codec import commands as lux_commands
from ros_sim_bridge.ibeo.codec import objects as lux_objects
from ros_sim_bridge.ibeo.codec import scan as lux_scan
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo import geometry
from ros_sim_bridge.ibeo.ros import lux_native

# --- point cloud ---------------------------------------------------------------------------

#: Published point layout (``ibeo/geometry.py``'s, one definition): x, y, z (m, scanner frame),
#: horizontal_angle (rad), echo_width (m), layer, echo, flags, one zero pad byte; 24 bytes.
CLOUD_DTYPE = geometry.CLOUD_DTYPE


def drop_mask(*, ground: bool = False, dirt: bool = False, clutter: bool = False,
              transparent: bool = False) -> int:
    """The flag bits whose points a filter drops."""
    return ((lux_scan.POINT_FLAG_GROUND if ground else 0)
            | (lux_scan.POINT_FLAG_DIRT if dirt else 0)
            | (lux_scan.POINT_FLAG_CLUTTER if clutter else 0)
            | (lux_scan.POINT_FLAG_TRANSPARENT if transparent else 0))


class CloudBuilder:
    """Scan points → CLOUD_DTYPE, with the layer geometry cached per scan layout.

    ``layer_elevations_deg`` (layer 0 first, SUPPLEMENT §3.2); ``drop_flags`` a
    :func:`drop_mask`; ``first_echo_only`` keeps echo 0.  Layers beyond the table get NaN
    coordinates.  ``native`` picks the compiled kernel (:mod:`.lux_native`, the default where it
    is installed) or numpy.  Not thread-safe: one builder per receive thread (it keeps work
    arrays and trigonometry tables so that a scan costs no fresh allocations).
    """

    def __init__(self, layer_elevations_deg: Sequence[float] =
                 lux_scan.DEFAULT_LAYER_ELEVATIONS_DEG, *, drop_flags: int = 0,
                 first_echo_only: bool = False, native: Optional[bool] = None):
        el = np.radians(np.asarray(layer_elevations_deg, np.float64))
        if len(el) > 16:
            raise ValueError('at most 16 layer elevations (the layer is a 4-bit field)')
        if native and lux_native.KERNEL is None:
            raise RuntimeError(f'the compiled point kernel ({lux_native.LIBRARY}) is not '
                               'installed beside ros_sim_bridge/ibeo/ros/lux_native.py')
        #: True: the compiled kernel builds the points (one loop); False: numpy array passes.
        self.native = lux_native.KERNEL is not None if native is None else bool(native)
        self.elevations_deg = tuple(float(v) for v in layer_elevations_deg)
        # cos/sin of each layer's elevation, indexed by the 4-bit layer; NaN beyond the table
        self._layer_trig = lux_native.layer_table(el)
        self._layer_at = self._layer_trig.ctypes.data
        self._cos_e, self._sin_e = self._layer_trig.T     # views for the numpy path
        self._trig_tables: dict = {}    # kernel tables by scan layout
        #: points of the last cloud built whose coordinates are NaN (layer beyond the table)
        self.nan_points = 0
        self.drop_flags = int(drop_flags) & lux_scan.POINT_FLAG_MASK
        self.first_echo_only = bool(first_echo_only)
        # layer | echo << 8 | flags << 16 (the cloud's bytes 20..23, little-endian) for every
        # value of the wire word's low 12 bits (layer, echo, flag nibbles); and with the layer
        # raised by 4 (rear mirror side of an 8-layer unit)
        word = np.arange(4096, dtype=np.uint32)
        base = (word & 0xF) | ((word >> 4) & 0xF) << 8 | ((word >> 8) & 0xF) << 16
        self._tail = {0: base.astype('<u4'), 4: (base + 4).astype('<u4')}
        self._capacity = 0

    def _work(self, n: int):
        if n > self._capacity:
            cap = max(n, int(self._capacity * 1.5), 1024)
            self._idx = np.empty(cap, np.intp)
            self._a = np.empty(cap, np.float32)
            self._h = np.empty(cap, np.float32)
            self._r = np.empty(cap, np.float32)
            self._p = np.empty(cap, '<u4')
            self._capacity = cap
        return self._idx[:n], self._a[:n], self._h[:n], self._r[:n], self._p[:n]

    CHUNK = 12288  # points per pass at most: the work arrays of a chunk stay in the CPU cache

    def _chunk(self, scan, cols, cloud, k, m_per_cm, tilt, down, lift) -> None:
        f4 = np.float32
        idx, a, h, r, p = self._work(len(cols))
        word, angle, distance, width = cols[:, 0], cols[:, 1].view('<i2'), cols[:, 2], cols[:, 3]
        np.multiply(angle, k, out=h, dtype=f4)
        cloud['horizontal_angle'] = h
        np.multiply(width, m_per_cm, out=cloud['echo_width'], dtype=f4)
        np.multiply(distance, m_per_cm, out=r, dtype=f4)
        np.bitwise_and(word, 0x0F, out=idx, dtype=np.intp)             # layer
        if tilt:
            e = geometry.layer_elevations(idx, h, layer_elevations_deg=self.elevations_deg,
                                          mirror_side=scan.mirror_side, beam_tilt_rad=tilt,
                                          upside_down=down).astype(f4)
            np.multiply(r, np.sin(e), out=cloud['z'])
            np.multiply(r, np.cos(e), out=a)                          # a = r·cos(e)
        else:
            np.take(self._sin_e, idx, out=a, mode='clip')
            np.multiply(r, a, out=cloud['z'])
            np.take(self._cos_e, idx, out=a, mode='clip')
            np.multiply(r, a, out=a)                                  # a = r·cos(e)
        np.cos(h, out=r)
        np.multiply(a, r, out=cloud['x'])
        np.sin(h, out=r)
        np.multiply(a, r, out=cloud['y'])
        np.bitwise_and(word, 0x0FFF, out=idx, dtype=np.intp)          # layer, echo, flags
        np.take(self._tail[lift], idx, out=p, mode='clip')
        cloud.view('<u4').reshape(len(cols), 6)[:, 5] = p

    #: kernel tables kept per scan layout at most (a handful of layouts occur in practice)
    TRIG_CACHE = 8

    def _trig(self, key, make) -> tuple:
        """A kernel table and its address, made on first use and cached by scan layout.

        Returns the array with its address: the caller holds the array for the whole kernel
        call, because making another table may clear the cache (issue #10, defect 1).
        """
        entry = self._trig_tables.get(key)
        if entry is None:
            if len(self._trig_tables) >= self.TRIG_CACHE:
                self._trig_tables.clear()
            table = make()
            entry = self._trig_tables[key] = (table, table.ctypes.data)
        return entry

    def _native(self, scan, wire, cloud, k, m_per_cm, tilt, down, lift) -> int:
        # the kernel writes len(wire) points into cloud's memory: refuse anything else
        if wire.dtype != lux_scan.WIRE_POINT_DTYPE or cloud.dtype != CLOUD_DTYPE \
                or len(cloud) != len(wire) or not cloud.flags.c_contiguous \
                or not cloud.flags.writeable:
            raise TypeError('the kernel needs WIRE_POINT_DTYPE points and a writable, '
                            'contiguous CLOUD_DTYPE output of the same length')
        tpr = scan.ticks_per_rotation
        # every table the kernel reads is a local reference until the call returns: a table
        # evicted from the cache meanwhile stays alive (and its memory valid) until then
        ticks, ticks_at = self._trig(tpr, lambda: lux_native.tick_table(tpr))
        tilt_trig = tilt_at = None
        if tilt:
            side = scan.mirror_side
            # the offset's sign depends on the side, flipped when upside down: one table each
            rear_up = bool(side) != bool(down)
            tilt_trig, tilt_at = self._trig((tpr, tilt, rear_up),
                                            lambda: lux_native.tilt_table(tpr, side, tilt, down))
        # ticks and tilt_trig (held here) keep the memory at ticks_at and tilt_at alive
        return lux_native.KERNEL(address(wire), len(wire), address(cloud), ticks_at,
                                 tilt_at, self._layer_at, k, m_per_cm, lift)

    def select(self, wire: np.ndarray) -> np.ndarray:
        """The wire points the filters keep (the same array when nothing is filtered)."""
        keep = None
        if self.drop_flags:
            keep = (wire['flags'] & np.uint8(self.drop_flags)) == 0
        if self.first_echo_only:
            first = wire['layer_echo'] < 16          # echo = high nibble
            keep = first if keep is None else keep & first
        return wire if keep is None else wire[keep]

    def build(self, scan: lux_scan.LuxScan, **kwargs) -> np.ndarray:
        """:meth:`build_wire` for a scan decoded by ``decode_scan`` (POINT_DTYPE points)."""
        pts = scan.points
        wire = np.zeros(len(pts), lux_scan.WIRE_POINT_DTYPE)
        wire['layer_echo'] = (pts['layer'] & 0x0F) | (pts['echo'] << 4)
        wire['flags'] = pts['flags']
        wire['angle'] = pts['angle_ticks']
        wire['distance'] = pts['distance_cm']
        wire['echo_width'] = pts['echo_width_cm']
        return self.build_wire(scan, wire, **kwargs)

    def build_wire(self, scan: lux_scan.LuxScan, wire: np.ndarray, *, eight_layer: bool = False,
                   beam_tilt: float = 0.0, upside_down: Optional[bool] = None,
                   alloc: Optional[Callable[[int], np.ndarray]] = None,
                   selected: bool = False) -> np.ndarray:
        """CLOUD_DTYPE points from the wire points of ``scan`` (decode_scan_wire), filtered.

        8-layer scans: elevation tilted per mirror side as geometry.layer_elevations, layer
        field = layer + 4 · mirror side (0..3 front, 4..7 rear).  Every step is one numpy
        operation into a reused work array or straight into the output fields; ``alloc(n)``
        gives the output array (e.g. :meth:`~ros_sim_bridge.ros.pointcloud_cdr.CloudCdr.points`,
        inside the message's own bytes), np.empty by default.  ``selected``: ``wire`` is what
        :meth:`select` kept already.
        """
        wire = np.ascontiguousarray(wire if selected else self.select(wire))
        n = len(wire)
        cloud = alloc(n) if alloc is not None else np.empty(n, CLOUD_DTYPE)
        self.nan_points = 0
        if n == 0:
            return cloud
        # the codec's ticks and cm to rad and m: the factors of codec/units.py, in float32
        k = np.float32(units.rad_per_tick(scan.ticks_per_rotation))
        m_per_cm = np.float32(units.CM)
        down = scan.upside_down if upside_down is None else upside_down
        lift = 4 if eight_layer and scan.mirror_side else 0
        tilt = beam_tilt if eight_layer else 0.0
        if self.native:
            self.nan_points = self._native(scan, wire, cloud, k, m_per_cm, tilt, down, lift)
            return cloud
        cols = wire.view('<u2').reshape(n, 5)   # layer|echo|flags<<8, angle, distance, epw, reserved
        parts = -(-n // self.CHUNK)               # equal chunks that stay in the CPU cache
        bounds = [n * i // parts for i in range(parts + 1)]
        for start, stop in zip(bounds[:-1], bounds[1:]):
            self._chunk(scan, cols[start:stop], cloud[start:stop], k, m_per_cm, tilt, down,
                        lift)
        self.nan_points = len(cloud) - int(np.count_nonzero(np.isfinite(cloud['z'])))
        return cloud


def is_dense(cloud: np.ndarray) -> bool:
    """No NaN coordinates (a layer beyond the elevation table makes them); when the cloud came
    from a builder, ``not builder.nan_points`` says the same without reading the points."""
    return not len(cloud) or bool(np.isfinite(cloud['z']).all())


def concatenate(*clouds: np.ndarray) -> np.ndarray:
    """CLOUD_DTYPE arrays joined byte for byte (np.concatenate would drop the pad byte)."""
    return np.concatenate([np.ascontiguousarray(c).view(np.uint8) for c in clouds]).view(
        CLOUD_DTYPE)


# --- objects -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ObjectCaps:
    """Bounds on what one 0x2221 turns into (issue #10 defect 7): at most ``max_objects``
    objects (the first ones of the list) and ``max_contour_points`` points per contour (the
    first ones).  A legal list holds up to 65,535 objects with up to 65,534 points each; a LUX
    tracks tens of objects with ≤ 34 contour points (SUPPLEMENT §3.4)."""
    max_objects: int = 256
    max_contour_points: int = 64


@dataclass(frozen=True)
class CappedObjects:
    """An object list cut to the caps, in SI (m, m/s, s, rad): ``objects`` (OBJECT_DTYPE
    layout), ``contours`` (each (k, 2) m),
    and what was cut: ``dropped_objects`` and ``dropped_points`` (contour points beyond the cap,
    of the objects kept)."""
    scan_start_ntp: int
    objects: np.ndarray
    contours: Sequence[np.ndarray]
    dropped_objects: int = 0
    dropped_points: int = 0

    @property
    def truncated(self) -> bool:
        return bool(self.dropped_objects or self.dropped_points)


def cap_objects(lst: lux_objects.LuxObjectList, caps: ObjectCaps = ObjectCaps()
                ) -> CappedObjects:
    """The first ``caps.max_objects`` objects of ``lst``, each contour cut to
    ``caps.max_contour_points`` points, converted to SI (:data:`units.OBJECT_TO_SI`), and the
    counts of what was cut (arrays, no loop over the dropped objects)."""
    n = len(lst.objects)
    keep = min(n, max(int(caps.max_objects), 0))
    limit = max(int(caps.max_contour_points), 0)
    objects = _scaled(lst.objects[:keep], units.OBJECT_TO_SI)
    contours = _contours_to_si(lst.contours, keep)
    if isinstance(contours, lux_objects.Contours):       # cut in its one array
        contours, dropped_points = contours.capped(keep, limit)
    else:
        dropped_points = cut_contours(contours, limit)
    return CappedObjects(lst.scan_start_ntp, objects, contours, n - keep, dropped_points)


@lru_cache(maxsize=None)
def _slot_factors(dtype: np.dtype, factors: tuple) -> Optional[tuple]:
    """Records of ``dtype`` as rows of 8-byte slots: each slot's factor (1 where none) and the
    (start, stop) runs of slots without one (their bytes copied back as they were); None
    unless every field of ``factors`` ((name, factor) pairs) is a float64 on a slot."""
    if dtype.itemsize % 8:
        return None
    row = np.ones(dtype.itemsize // 8)
    scaled = np.zeros(len(row), bool)
    for name, factor in factors:
        t, at = dtype.fields[name][:2]
        if t != np.dtype('<f8') or at % 8:
            return None
        row[at // 8], scaled[at // 8] = factor, True
    edges = np.flatnonzero(np.diff(np.concatenate(([1], scaled, [1])).astype(np.int8)))
    return row, tuple(zip(edges[::2].tolist(), edges[1::2].tolist()))


def _scaled(records: np.ndarray, factors: dict) -> np.ndarray:
    """:func:`units.scaled` (a copy, each field of ``factors`` times its factor).  Where every
    such field is a float64 on an 8-byte slot of the record (the objects' aligned
    OBJECT_DTYPE): the records as rows of slots multiplied by one row of factors (1 elsewhere)
    into the copy, the slots of no such field then copied back as they were (bytes, whatever
    they hold); else :func:`units.scaled` itself."""
    slots = _slot_factors(records.dtype, tuple(factors.items())) \
        if len(records) and records.flags.c_contiguous else None
    if slots is None:
        return units.scaled(records, factors)
    row, kept = slots
    out = np.empty(len(records), records.dtype)
    src = records.view(np.float64).reshape(len(records), -1)
    dst = out.view(np.float64).reshape(src.shape)
    with np.errstate(all='ignore'):         # (the kept slots' bytes as numbers)
        np.multiply(src, row, out=dst)
    for a, b in kept:
        dst[:, a:b] = src[:, a:b]
    return out


def cut_contours(contours: list, limit: int) -> int:
    """Cut each contour of ``contours`` (in place) to its first ``limit`` points; how many
    points were cut (the LUX and the ECU object caps)."""
    over = np.maximum(np.fromiter(map(len, contours), np.int64, len(contours)) - limit, 0)
    for i in np.flatnonzero(over).tolist():
        contours[i] = contours[i][:limit]
    return int(over.sum())


def objects_to_si(lst: lux_objects.LuxObjectList) -> CappedObjects:
    """All of ``lst`` in SI, nothing cut (offline tools, e.g. ``.idc`` → bag)."""
    return cap_objects(lst, ObjectCaps(max_objects=len(lst.objects),
                                       max_contour_points=0xFFFF))


def _contours_to_si(contours, keep: int):
    """The first ``keep`` contours in m: decoded :class:`~ros_sim_bridge.ibeo.codec.contours.
    Contours` share one
    (total, 2) array, scaled once (a Contours again); other sequences are scaled per contour
    (a list)."""
    if isinstance(contours, lux_objects.Contours):
        kept = contours.head(keep)
        return lux_objects.Contours(kept.points * units.CONTOUR_TO_SI, kept.counts)
    return [np.asarray(c, np.float64) * units.CONTOUR_TO_SI for c in contours[:keep]]


# --- command parameters (services) ---------------------------------------------------------

def parameter_request_raw(p: lux_commands.Parameter, value: float = 0.0, text: str = '',
                          raw: bool = False) -> int:
    """The 32-bit wire value of a SetParameter service request, which is in SI (rad, m, Hz):
    ``value`` or a number in ``text`` goes to the table's unit (:func:`units.parameter_from_si`)
    and then to the wire (``commands.raw_from_request``); an IP address in ``text`` and a
    ``raw`` wire value go through unchanged.  CodecError or ValueError as raw_from_request."""
    if raw:
        return lux_commands.raw_from_request(p, value, raw=True)
    text = text.strip()
    if text and p.kind != 'ip':
        value, text = float(text), ''
    if not text:
        value = units.parameter_from_si(p, value)
    return lux_commands.raw_from_request(p, value, text)


def parameter_reply_value(p: lux_commands.Parameter, value) -> tuple[float, str, str]:
    """(value in SI, as text, its unit) of a GetParameter reply's value (in the table's unit):
    NaN and the dotted quad for IP addresses; the unit from :func:`units.parameter_si_unit`."""
    si = units.parameter_to_si(p, value)
    if isinstance(si, str):
        return float('nan'), si, ''
    return float(si), f'{si:g}', units.parameter_si_unit(p)


# --- errors and warnings -------------------------------------------------------------------

def errors_statuses(ew, *, name_prefix: str, hardware_id: str, age_s: Optional[float] = None,
                    hold_s: float = 1.0, seen: Optional[dict] = None) -> list[DiagnosticStatus]:
    """Two statuses for the last 0x2030 (``ew`` None: none received yet): '<prefix>sensor
    errors' (ERROR while error bits are set) and '<prefix>sensor warnings' (WARN while warning
    bits are set).  Each set bit is a key (its name) with its description; registers in hex.
    A report older than ``hold_s`` counts as cleared (the sensor repeats 0x2030 every 80 ms
    while a condition lasts).  ``seen`` (name → count) adds how often each bit was reported."""
    out = []
    # age unknown (None): the report is taken as current; NaN compares false: not fresh
    fresh = ew is not None and (age_s is None or age_s <= hold_s)
    for kind, level in (('errors', DiagnosticStatus.ERROR), ('warnings', DiagnosticStatus.WARN)):
        st = DiagnosticStatus(name=f'{name_prefix}sensor {kind}', hardware_id=hardware_id)
        bits = (ew.errors if kind == 'errors' else ew.warnings) if ew is not None else []
        values = []
        if ew is None:
            st.level, st.message = DiagnosticStatus.OK, 'no 0x2030 received'
        elif fresh and bits:
            st.level = level
            st.message = ', '.join(n for n, _ in bits)
            values += [KeyValue(key=n, value=d) for n, d in bits]
        else:
            st.level = DiagnosticStatus.OK
            st.message = (f'none reported for {age_s:.1f} s' if not fresh else f'no {kind}')
        if ew is not None:
            regs = (('error_register_1', ew.error_register_1),
                    ('error_register_2', ew.error_register_2)) if kind == 'errors' else \
                (('warning_register_1', ew.warning_register_1),
                 ('warning_register_2', ew.warning_register_2))
            values += [KeyValue(key=k, value=f'0x{v:04X}') for k, v in regs]
            values.append(KeyValue(key='age_s', value='unknown' if age_s is None
                                   else f'{age_s:.2f}'))
        for n, count in sorted((seen or {}).get(kind, {}).items()):
            values.append(KeyValue(key=f'seen.{n}', value=str(count)))
        st.values = values
        out.append(st)
    return out


__all__ = ['CLOUD_DTYPE', 'drop_mask', 'CloudBuilder', 'is_dense', 'concatenate',
           'ObjectCaps', 'CappedObjects', 'cap_objects', 'cut_contours', 'objects_to_si',
           'parameter_request_raw', 'parameter_reply_value', 'errors_statuses']
