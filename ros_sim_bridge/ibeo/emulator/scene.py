"""ibeo LUX / SICK LD-MRS and Ibeo ECU scenes: what the emulator's sensor sees and sends,
pure (no sockets, no clock, no argv).

:class:`LuxScene`: every :meth:`LuxScene.step` advances one scan period and returns the Ibeo
messages a LUX would send for it — a 0x2202 scan (4 layers, or 8 layers as alternating mirror
sides), a 0x2221 object list with contours (12.5 Hz only, as on the real sensor), a 0x2805
vehicle state and, now and then, a 0x2030 warning.  It also answers 0x2010 commands
(:meth:`LuxScene.handle_command`) from a parameter table (spec §7.2).

:class:`EcuScene` is an Ibeo ECU / FUSION SYSTEM instead: every step one frame of the synthetic
ECU drive of :mod:`~ros_sim_bridge.ibeo.ecu_recording` (a 0x2205 fused scan of several
scanners, 60,000 points by default, 0x2280 objects, 0x2807/0x2808 vehicle states, 0x2604 GPS,
0x9001 GpsImu, 0x9002 odometry, 0x6701 device status, 0x2403 image, 0x1100 frame end); LUX
commands get their failure reply (Set Filter, spec §20, is the server's).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ros_sim_bridge.ibeo import geometry
from ros_sim_bridge.ibeo.codec import commands as cmd
from ros_sim_bridge.ibeo.codec import errors_warnings as err
from ros_sim_bridge.ibeo.codec import objects as obj
from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.codec import scan as sc
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo.codec.header import encode_message
from ros_sim_bridge.ibeo.codec.vehicle_state import LuxVehicleState, encode_vehicle_state
from ros_sim_bridge.core.ntp import ntp_to_unix_ns, unix_ns_to_ntp64

DEFAULT_HOST = '127.0.0.1'
DEFAULT_PORT = 12002
RATES_HZ = (12.5, 25.0, 50.0)
TICKS = sc.TICKS_PER_ROTATION
MAX_RANGE_M = 200.0

# Output-disable bits of parameter 0x1012 (Data Output Flag).
OUT_SCAN, OUT_OBJECTS, OUT_VEHICLE, OUT_ERRORS = 0x0001, 0x0004, 0x0008, 0x0010

FIRMWARE_VERSION = 0x2750      # "2.7.5"
FPGA_VERSION = 0x9604
STATUS_MEASURING = 0x030B      # motor, laser, set frequency reached, epw + system compensation
STATUS_STOPPED = 0x0309        # laser off


def default_parameters(layers: int = 4, rate_hz: float = 12.5, port: int = DEFAULT_PORT) -> dict:
    """Raw (wire) values of every §7.2 parameter for an emulated unit (``raw``: from SI)."""
    def raw(name, value):
        p = cmd.parameter(name)
        return cmd.parameter_to_raw(p, units.parameter_from_si(p, value))
    p = {
        0x1000: raw('IP address', DEFAULT_HOST), 0x1001: port,
        0x1002: raw('Subnet Mask', '255.0.0.0'), 0x1003: raw('Standard gateway', '0.0.0.0'),
        0x1004: 0, 0x1010: 0x500, 0x1011: 500, 0x1012: 0, 0x1013: 65, 0x1014: 2, 0x1015: 0,
        0x1016: 0, 0x1017: 0, 0x1018: 5, 0x1019: 0,
        0x1100: 1600 & 0xFFFF, 0x1101: -1920 & 0xFFFF, 0x1102: int(rate_hz * 256),
        0x1103: 0, 0x1104: 1, 0x1105: TICKS,
        0x1200: 150, 0x1201: 0, 0x1202: 50, 0x1203: 0, 0x1204: 0, 0x1205: 0,
        0x1206: 90, 0x1207: 270, 0x1208: 100, 0x1209: 180, 0x120A: 1,
        0x120C: raw('SteerRatioPoly0', 0.0), 0x120D: raw('SteerRatioPoly1', 1 / 16.0),
        0x120E: raw('SteerRatioPoly2', 0.0), 0x120F: raw('SteerRatioPoly3', 0.0), 0x1210: 1,
        0x3301: 0x18 if layers == 8 else 0x10,
        0x3302: raw('BeamTilt', sc.DEFAULT_8_LAYER_BEAM_TILT_RAD if layers == 8 else 0.0),
    }
    return p


READ_ONLY = (0x1105, 0x3301, 0x3302)


def validate_parameter(index: int, raw: int) -> bool:
    """The validity rules of the §7.2 table (what the emulator refuses with id | 0x8000)."""
    if index not in cmd.PARAMETERS or index in READ_ONLY:
        return False
    v16 = raw & 0xFFFF
    s16 = _s16(raw)
    rules = {
        0x1010: lambda: raw <= 0x7F0,
        0x1012: lambda: v16 != 0xFFFF,
        0x1013: lambda: v16 <= 65,
        0x1014: lambda: v16 < 3,
        0x1015: lambda: v16 < 2,
        0x1100: lambda: -1919 <= s16 <= 1600,
        0x1101: lambda: -1920 <= s16 <= 1599,
        0x1102: lambda: v16 in (3200, 6400, 12800),
        0x1104: lambda: v16 < 2,
    }
    return rules.get(index, lambda: True)()


# --- scene ---------------------------------------------------------------------------------

@dataclass
class Mover:
    """A box moving back and forth between ``a`` and ``b`` (m, sensor frame) at ``speed``."""
    name: str
    classification: int
    length: float
    width: float
    a: tuple
    b: tuple
    speed: float
    epw_cm: float                 # echo pulse width near range

    def state(self, t: float):
        """(center xy, velocity xy, heading) at time t."""
        a, b = np.asarray(self.a, float), np.asarray(self.b, float)
        d = b - a
        dist = float(np.hypot(*d))
        period = 2.0 * dist / self.speed
        phase = (t % period) / period
        unit = d / dist
        if phase < 0.5:
            c, v = a + d * (2 * phase), unit * self.speed
        else:
            c, v = b - d * (2 * phase - 1), -unit * self.speed
        return c, v, math.atan2(v[1], v[0])

    def corners(self, t: float) -> np.ndarray:
        c, _, yaw = self.state(t)
        cy, sy = math.cos(yaw), math.sin(yaw)
        local = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]]) * [self.length / 2, self.width / 2]
        return c + local @ np.array([[cy, sy], [-sy, cy]])


WALLS = np.array([  # x0, y0, x1, y1 (m): a yard in front of the sensor
    [-5.0, 9.0, 70.0, 9.0], [-5.0, -9.0, 70.0, -9.0], [70.0, -9.0, 70.0, 9.0],
    [30.0, 3.0, 30.0, 9.0],   # a short wall sticking out on the left
])
GLASS = np.array([[12.0, 4.0, 12.0, 8.0]])   # a glass pane: transparent first echo
EPW_WALL, EPW_GLASS, EPW_GROUND, EPW_CLUTTER = 140.0, 40.0, 60.0, 25.0

DEFAULT_MOVERS = (
    Mover('car', 5, 4.5, 1.8, (10.0, -4.0), (50.0, -4.0), 6.0, 220.0),
    Mover('pedestrian', 3, 0.5, 0.6, (7.0, -8.0), (7.0, 3.0), 1.4, 90.0),
    Mover('bike', 4, 1.8, 0.6, (26.0, 3.0), (14.0, -1.0), 4.0, 110.0),
    Mover('cart', 12, 1.2, 0.8, (55.0, -7.0), (55.0, 7.0), 0.8, 120.0),  # class 12: "bicycle" id
)


@dataclass
class Track:
    id: int
    first_seen: int
    last_seen: int
    class_since: int


@dataclass
class Message:
    data_type: int
    body: bytes
    ntp: int
    device_id: Optional[int] = None     # None: the server's device id

    def to_bytes(self, device_id: int = 0) -> bytes:
        return encode_message(self.data_type, self.body, ntp=self.ntp,
                              device_id=device_id if self.device_id is None else self.device_id)


class LuxScene:
    """A pure, steppable LUX scene (walls, a glass pane, moving boxes; ground for low layers).

    ``layers`` 4 or 8 (8 = two mirror sides, alternating per scan, tilted by the beam tilt);
    ``rate_hz`` 12.5 / 25 / 50 (objects only at 12.5 Hz, else W-CalcFrequency warnings);
    ``start_unix_ns`` the sensor clock at t = 0; ``warning_period_s`` how often a warning
    (3 scans long) is raised; ``seed`` makes noise and clutter reproducible.
    """

    def __init__(self, layers: int = 4, rate_hz: float = 12.5, *, seed: int = 0,
                 start_unix_ns: int = 1_700_000_000_000_000_000, warning_period_s: float = 8.0,
                 movers: Sequence[Mover] = DEFAULT_MOVERS, clutter_probability: float = 0.004,
                 port: int = DEFAULT_PORT):
        if layers not in (4, 8):
            raise ValueError('layers must be 4 or 8')
        if rate_hz not in RATES_HZ:
            raise ValueError(f'rate must be one of {RATES_HZ}')
        self.layers = layers
        self.rng = np.random.default_rng(seed)
        self.movers = list(movers)
        self.clutter_probability = clutter_probability
        self.warning_period_s = warning_period_s
        self.params = default_parameters(layers, rate_hz, port)
        self.saved_params = dict(self.params)
        self.measuring = True
        self.time_s = 0.0
        self.clock_offset_ns = start_unix_ns
        self.scan_number = 0
        self.scan_count = 0
        self.tracks: dict[int, Track] = {}
        self._next_track_id = 1
        self.pending_warnings: set[str] = set()
        self.temperature_c = 38.0
        self.last_scan_time = 0.0   # time the movers were sampled for the last scan

    # --- parameters ----------------------------------------------------------------------
    def param(self, name_or_index):
        """A parameter's value in the unit of its §7.2 table (deg, cm, Hz, ...)."""
        p = cmd.parameter(name_or_index)
        return cmd.parameter_from_raw(p, self.params[p.index])

    @property
    def rate_hz(self) -> float:
        return (self.params[0x1102] & 0xFFFF) / 256.0

    @property
    def period_s(self) -> float:
        return 1.0 / self.rate_hz

    @property
    def eight_layer(self) -> bool:
        return self.params[0x3301] in cmd.EIGHT_LAYER_DEVICE_TYPES

    @property
    def beam_tilt_rad(self) -> float:
        return units.parameter_to_si(cmd.parameter('BeamTilt'), self.param('BeamTilt'))

    def ntp_at(self, t_s: float) -> int:
        return unix_ns_to_ntp64(self.clock_offset_ns + int(round(t_s * 1e9)))

    # --- commands ------------------------------------------------------------------------
    def handle_command(self, command: cmd.LuxCommand) -> Optional[cmd.LuxReply]:
        """The reply to a command (None for Reset, which gets no reply, §7.1.1)."""
        c = command.command_id
        if c == cmd.RESET:
            self.params = dict(self.saved_params)   # reboot: saved configuration, measuring
            self.measuring = True
            self.scan_number = 0
            return None
        if c == cmd.GET_STATUS:
            return cmd.status_reply(self.status())
        if c == cmd.SAVE_CONFIG:
            self.saved_params = dict(self.params)
            return cmd.ack(c)
        if c == cmd.SET_PARAMETER:
            if validate_parameter(command.parameter_index, command.parameter_raw):
                self._set_param(command.parameter_index, command.parameter_raw)
                return cmd.ack(c)
            self.pending_warnings.add('W-Command')
            return cmd.failure(c)
        if c == cmd.GET_PARAMETER:
            raw = self.params.get(command.parameter_index)
            if raw is None:
                return cmd.failure(c)
            return cmd.parameter_reply(command.parameter_index, raw)
        if c == cmd.RESET_DEFAULTS:
            port = self.params[0x1001]
            self.params = default_parameters(self.layers, 12.5, port)
            return cmd.ack(c)
        if c == cmd.START_MEASURE:
            self.measuring = True
            return cmd.ack(c)
        if c == cmd.STOP_MEASURE:
            self.measuring = False
            return cmd.ack(c)
        if c in (cmd.SET_NTP_TIMESTAMP_SYNC, cmd.SET_NTP_SECONDS, cmd.SET_NTP_FRACTION):
            sec, frac = divmod(self.ntp_at(self.time_s), 1 << 32)
            if command.ntp_seconds is not None:
                sec = command.ntp_seconds
            if command.ntp_fraction is not None:
                frac = command.ntp_fraction
            self.clock_offset_ns = ntp_to_unix_ns(sec, frac) - int(round(self.time_s * 1e9))
            return cmd.ack(c)
        self.pending_warnings.add('W-Command')
        return cmd.failure(c)

    def _set_param(self, index: int, raw: int) -> None:
        p = cmd.parameter(index)
        self.params[index] = raw & cmd.KIND_MASK.get(p.kind, 0xFFFFFFFF)

    def status(self) -> cmd.LuxStatus:
        return cmd.LuxStatus(
            firmware_version=FIRMWARE_VERSION, fpga_version=FPGA_VERSION,
            scanner_status=STATUS_MEASURING if self.measuring else STATUS_STOPPED,
            temperature_raw=cmd.temperature_raw(self.temperature_c),
            serial_number_0=0x1240, serial_number_1=1234,
            fpga_timestamp=(0x2012, 0x0921, 0x1530), dsp_timestamp=(0x2013, 0x0211, 0x0900))

    # --- simulation ----------------------------------------------------------------------
    def idle(self, dt: Optional[float] = None) -> None:
        """Let time pass without measuring (stream stopped)."""
        self.time_s += self.period_s if dt is None else dt

    def step(self) -> list[Message]:
        """One scan period: the messages the sensor sends for it (output flags respected)."""
        t0 = self.time_s
        out_flags = self.params[0x1012]
        scan, hits = self._scan(t0)
        msgs = []
        if not out_flags & OUT_SCAN:
            msgs.append(Message(registry.SCAN, sc.encode_scan(scan), scan.start_ntp))
        objects_ok = self.rate_hz == 12.5
        if objects_ok and not out_flags & OUT_OBJECTS:
            lst = self._objects(t0, scan, hits)
            msgs.append(Message(registry.OBJECTS, obj.encode_objects(
                lst, single_point_as_ffff=self.scan_count % 2 == 1), scan.end_ntp))
        if not out_flags & OUT_VEHICLE:
            vs = LuxVehicleState(scan.start_ntp, scan.scan_number, 0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                 0.0, self.period_s * units.VEHICLE_STATE_FROM_SI[
                                     'time_difference'], 0.0, 0.0, 0.0, 0.0)
            msgs.append(Message(registry.VEHICLE_STATE, encode_vehicle_state(vs), scan.end_ntp))
        warnings = self._warnings(t0, objects_ok)
        if warnings and not out_flags & OUT_ERRORS:
            body = err.encode_errors(err.errors_from_names(*sorted(warnings)))
            msgs.append(Message(registry.ERRORS_WARNINGS, body, scan.end_ntp))
        self.scan_number = (self.scan_number + 1) & 0xFFFF
        self.scan_count += 1
        self.time_s = t0 + self.period_s
        self.temperature_c = 38.0 + 2.0 * math.sin(t0 / 300.0)
        return msgs

    def step_bytes(self, device_id: int = 0) -> bytes:
        return b''.join(m.to_bytes(device_id) for m in self.step())

    def _warnings(self, t: float, objects_ok: bool) -> set:
        w = set(self.pending_warnings)
        self.pending_warnings.clear()
        period = self.warning_period_s
        if period > 0:
            k = int(t // period)
            if k > 0 and t - k * period < 3 * self.period_s - 1e-9:   # 3 scans per episode
                w.add(('W-Sync', 'W-high_temperature', 'W-ETHdata')[k % 3])
                if not objects_ok:
                    w.add('W-CalcFrequency')
        return w

    def segments(self, t: float):
        """All segments (S, 4), owner per segment (-1 wall, -2 glass, k mover), epw per owner."""
        segs, owners = [WALLS, GLASS], [np.full(len(WALLS), -1), np.full(len(GLASS), -2)]
        for k, m in enumerate(self.movers):
            c = m.corners(t)
            segs.append(np.hstack([c, np.roll(c, -1, axis=0)]))
            owners.append(np.full(4, k))
        return np.vstack(segs), np.concatenate(owners)

    def _scan(self, t0: float):
        """One scan at time ``t0``: rays cast into the scene, returns per layer (ground,
        glass, clutter), echoes numbered as the sensor does; and the hits on movers."""
        p = self.params
        start, end = _s16(p[0x1100]), _s16(p[0x1101])
        step_ticks = {12.5: 8, 25.0: 16, 50.0: 32}[self.rate_hz]
        ticks = np.arange(start, end - 1, -step_ticks, dtype=np.int64)
        h = ticks * (2 * math.pi / TICKS)
        mirror = self.scan_count % 2                      # toggles on 4-layer units too
        # Time of each ray along the sweep (for moving targets: evaluated at the scan middle).
        t_mid = t0 + self.period_s * (start - end) / TICKS / 2
        mz = _s16(p[0x1202])
        returns = self._layer_returns(h, *self._cast_rays(h, t_mid), mirror,
                                      height=max(mz, 1) * units.CM)
        ray, lay, rng, flg, own, epw, echo = self._echoes(*returns)
        keep = echo < 3                                   # the LUX reports up to 3 echoes
        pts = np.zeros(int(keep.sum()), sc.POINT_DTYPE)
        pts['layer'] = lay[keep]
        pts['echo'] = echo[keep]
        pts['flags'] = flg[keep]
        pts['angle_ticks'] = ticks[ray[keep]]
        pts['distance_cm'] = np.clip(np.rint(rng[keep] * units.CM_PER_M), 1, 0xFFFF)
        pts['echo_width_cm'] = np.clip(np.rint(epw[keep]), 1, 0xFFFF)
        t_start = t0
        t_end = t0 + self.period_s * (start - end) / TICKS
        scan = sc.LuxScan(
            scan_number=self.scan_number,
            scanner_status=STATUS_MEASURING, sync_phase_offset=0,
            start_ntp=self.ntp_at(t_start), end_ntp=self.ntp_at(t_end),
            ticks_per_rotation=TICKS, start_angle_ticks=start, end_angle_ticks=end,
            mounting_yaw_ticks=_s16(p[0x1203]), mounting_pitch_ticks=_s16(p[0x1204]),
            mounting_roll_ticks=_s16(p[0x1205]), mounting_x_cm=_s16(p[0x1200]),
            mounting_y_cm=_s16(p[0x1201]), mounting_z_cm=mz,
            flags=sc.SCAN_FLAG_MIRROR_SIDE * mirror | 0x0001, points=pts)
        # Hits on movers, for the tracker: (mover index, x, y, angle ticks).
        on = keep & (own >= 0)
        hx = rng[on] * np.cos(ticks[ray[on]] * 2 * math.pi / TICKS)
        hy = rng[on] * np.sin(ticks[ray[on]] * 2 * math.pi / TICKS)
        return scan, (own[on], hx, hy, t_mid)

    def _cast_rays(self, h: np.ndarray, t_mid: float):
        """Horizontal distance to the first opaque segment along each ray (inf: none), its
        owner, and the distance to the nearest glass segment (all rays × segments at once)."""
        segs, owners = self.segments(t_mid)
        self.last_scan_time = t_mid
        d = np.stack([np.cos(h), np.sin(h)], axis=1)     # (A, 2)
        p0, e = segs[:, :2], segs[:, 2:] - segs[:, :2]   # (S, 2)
        denom = d[:, None, 0] * e[None, :, 1] - d[:, None, 1] * e[None, :, 0]
        with np.errstate(divide='ignore', invalid='ignore'):
            tt = (p0[None, :, 0] * e[None, :, 1] - p0[None, :, 1] * e[None, :, 0]) / denom
            ss = (p0[None, :, 0] * d[:, None, 1] - p0[None, :, 1] * d[:, None, 0]) / denom
        ok = (np.abs(denom) > 1e-12) & (tt > 0.05) & (ss >= 0) & (ss <= 1)
        tt = np.where(ok, tt, np.inf)
        opaque = owners != -2
        t_op = np.where(opaque[None, :], tt, np.inf)
        first = np.argmin(t_op, axis=1)
        t_first = t_op[np.arange(len(h)), first]
        t_glass = np.where(~opaque[None, :], tt, np.inf).min(axis=1)
        return t_first, owners[first], t_glass

    def _layer_returns(self, h, t_first, owner_first, t_glass, mirror: int, *, height: float):
        """Returns of each of the 4 layers: the first opaque hit or the ground (sensor at
        ``height`` m), glass in front of it, random clutter; as concatenated (ray, layer,
        range m, flags, owner) arrays."""
        tilt = self.beam_tilt_rad if self.eight_layer else 0.0
        rows = []          # (ray indices, layer, range m, flags, owner)
        n_rays = len(h)
        ray_idx = np.arange(n_rays)
        for layer in range(4):
            elev = geometry.layer_elevations(np.full(n_rays, layer), h,
                                             mirror_side=mirror if tilt else None,
                                             beam_tilt_rad=tilt)
            cos_e = np.cos(elev)
            horiz = t_first.copy()
            owner = owner_first.copy()
            flags = np.zeros(n_rays, np.uint8)
            with np.errstate(divide='ignore'):
                t_ground = np.where(elev < 0, height / np.tan(-elev), np.inf)
            ground = t_ground < horiz
            horiz = np.where(ground, t_ground, horiz)
            owner = np.where(ground, -3, owner)
            flags[ground] = sc.POINT_FLAG_GROUND
            rng = horiz / cos_e
            keep = np.isfinite(rng) & (rng < MAX_RANGE_M)
            rows.append((ray_idx[keep], layer, rng[keep], flags[keep], owner[keep]))
            g = np.isfinite(t_glass) & (t_glass < horiz)
            rows.append((ray_idx[g], layer, (t_glass / cos_e)[g],
                         np.full(g.sum(), sc.POINT_FLAG_TRANSPARENT, np.uint8),
                         np.full(g.sum(), -2)))
            cl = self.rng.random(n_rays) < self.clutter_probability
            rows.append((ray_idx[cl], layer, self.rng.uniform(0.5, 4.0, cl.sum()),
                         np.full(cl.sum(), sc.POINT_FLAG_CLUTTER, np.uint8), np.full(cl.sum(), -4)))
        ray = np.concatenate([r[0] for r in rows])
        lay = np.concatenate([np.full(len(r[0]), r[1]) for r in rows]).astype(np.uint8)
        rng = np.concatenate([r[2] for r in rows])
        flg = np.concatenate([r[3] for r in rows]).astype(np.uint8)
        own = np.concatenate([r[4] for r in rows])
        return ray, lay, rng, flg, own

    def _echoes(self, ray, lay, rng, flg, own):
        """Range noise and echo pulse widths added, sorted as the sensor sends them (by angle,
        layer, then range) with each return's echo number within its ray and layer."""
        rng = np.maximum(rng + self.rng.normal(0.0, 0.02, len(rng)), 0.01)
        base = np.select([own == -1, own == -2, own == -3, own == -4],
                         [EPW_WALL, EPW_GLASS, EPW_GROUND, EPW_CLUTTER],
                         np.array([m.epw_cm for m in self.movers] + [0.0])[np.clip(own, 0, None)])
        epw = base * (0.6 + 0.4 * np.exp(-rng / 30.0)) + self.rng.normal(0, 4, len(rng))
        order = np.lexsort((rng, lay, ray))
        ray, lay, rng, flg, own, epw = (a[order] for a in (ray, lay, rng, flg, own, epw))
        group = ray * 16 + lay
        new = np.r_[True, group[1:] != group[:-1]]
        starts = np.flatnonzero(new)
        echo = np.arange(len(group)) - np.repeat(starts, np.diff(np.r_[starts, len(group)]))
        return ray, lay, rng, flg, own, epw, echo

    def _objects(self, t0: float, scan: sc.LuxScan, hits) -> obj.LuxObjectList:
        owner, hx, hy, t_mid = hits
        n = self.scan_count
        rows, contours = [], []
        for k, m in enumerate(self.movers):
            mine = owner == k
            track = self.tracks.get(k)
            if mine.any():
                if track is None:
                    track = Track(self._next_track_id, n, n, n)
                    self._next_track_id = self._next_track_id % 0xFFFF + 1
                    self.tracks[k] = track
                track.last_seen = n
            elif track is None or n - track.last_seen > 5:
                self.tracks.pop(k, None)
                continue
            c, v, yaw = m.state(t_mid)
            corners = m.corners(t_mid)
            age = n - track.first_seen
            if mine.any():
                xy = np.stack([hx[mine], hy[mine]], axis=1)
                xy = np.unique(np.round(xy, 2), axis=0)
                ang = np.arctan2(xy[:, 1], xy[:, 0])
                xy = xy[np.argsort(-ang)]
                if len(xy) > 16:
                    xy = xy[np.linspace(0, len(xy) - 1, 16).round().astype(int)]
            else:
                xy = corners[np.argmin(np.hypot(corners[:, 0], corners[:, 1]))][None, :]
            closest = xy[np.argmin(np.hypot(xy[:, 0], xy[:, 1]))]
            rel_ticks = math.atan2(c[1], c[0]) * TICKS / (2 * math.pi)
            rel_time = (scan.start_angle_ticks - rel_ticks) / TICKS * self.period_s
            sigma = 0.5 / (1 + age / 5.0)
            rows.append(dict(
                id=track.id, age=age, prediction_age=n - track.last_seen,
                relative_time=min(max(rel_time, 0.0), 0.065),
                reference_x=c[0], reference_y=c[1], reference_sigma_x=sigma,
                reference_sigma_y=sigma, closest_x=closest[0], closest_y=closest[1],
                bbox_center_x=(corners[:, 0].max() + corners[:, 0].min()) / 2,
                bbox_center_y=(corners[:, 1].max() + corners[:, 1].min()) / 2,
                bbox_size_x=np.ptp(corners[:, 0]), bbox_size_y=np.ptp(corners[:, 1]),
                box_center_x=c[0], box_center_y=c[1], box_size_x=m.length, box_size_y=m.width,
                box_orientation=yaw, abs_velocity_valid=age >= 3,
                abs_velocity_x=v[0] if age >= 3 else np.nan,
                abs_velocity_y=v[1] if age >= 3 else np.nan,
                abs_velocity_sigma_x=sigma, abs_velocity_sigma_y=sigma,
                rel_velocity_valid=True, rel_velocity_x=v[0], rel_velocity_y=v[1],
                classification=m.classification if age >= 2 else 0,
                classification_age=max(age - 2, 0), classification_certainty=min(20 * age, 100)))
            contours.append(xy)
        arr = obj.make_objects(len(rows))
        for i, r in enumerate(rows):
            for key, value in r.items():
                arr[key][i] = value
        # The scene is SI; the record takes the spec's units (cm, cm/s, ms, deg).
        return obj.LuxObjectList(scan.start_ntp, units.scaled(arr, units.OBJECT_FROM_SI),
                                 [xy * units.CONTOUR_FROM_SI for xy in contours])

    # --- ground truth for tests ----------------------------------------------------------
    def truth(self, t: Optional[float] = None) -> list[dict]:
        t = self.time_s if t is None else t
        out = []
        for m in self.movers:
            c, v, yaw = m.state(t)
            out.append(dict(name=m.name, center=c, velocity=v, heading=yaw,
                            corners=m.corners(t), classification=m.classification))
        return out


class EcuScene:
    """A pure, steppable Ibeo ECU / FUSION SYSTEM: each :meth:`step` is one frame of
    :class:`~ros_sim_bridge.ibeo.ecu_recording.EcuFrames` (``scanners`` LUX units fused into
    one 0x2205 of ``points`` points, objects, vehicle states, GPS/IMU, odometry, status, image).
    The Set Filter is per connection (the server keeps it); LUX commands are refused."""

    ecu = True

    def __init__(self, rate_hz: float = 12.5, *, scanners: int = 4, points: int = 60_000,
                 seed: int = 7, start_unix_ns: int = 1_700_000_000_000_000_000):
        from ros_sim_bridge.ibeo.ecu_recording import EcuFrames
        self.frames = EcuFrames(rate_hz=rate_hz, scanners=scanners, points=points, seed=seed,
                                start_unix_ns=start_unix_ns)
        self.rate_hz = float(rate_hz)
        self.measuring = True
        self.frame_number = 0
        self.time_s = 0.0
        self.params = {0x1001: DEFAULT_PORT}
        self.saved_params = dict(self.params)
        self.pending_warnings: set[str] = set()

    @property
    def period_s(self) -> float:
        return 1.0 / self.rate_hz

    def ntp_at(self, t_s: float) -> int:
        return unix_ns_to_ntp64(self.frames.start_unix_ns + int(round(t_s * 1e9)))

    def idle(self, dt: Optional[float] = None) -> None:
        """A frame period without output (frame numbers and times go on)."""
        self.time_s += self.period_s if dt is None else dt
        self.frame_number = int(round(self.time_s * self.rate_hz))

    def step(self) -> list[Message]:
        """One frame: its messages, each with the device id of its source."""
        out = [Message(dt, body, ntp, dev) for dt, body, dev, ntp in
               self.frames.frame(self.frame_number)]
        self.frame_number += 1
        self.time_s += self.period_s
        return out

    def handle_command(self, command: cmd.LuxCommand) -> Optional[cmd.LuxReply]:
        """An ECU knows Set Filter only (handled by the server): LUX commands fail."""
        return cmd.failure(command.command_id)


def _s16(v: int) -> int:
    v &= 0xFFFF
    return v - 0x10000 if v & 0x8000 else v
