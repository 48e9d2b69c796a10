"""Real SICK LD-MRS captures (../shared/samples/ibeo/raulexposito-ldmrs, see PROVENANCE.md)
decode completely, with the counts and values SUPPLEMENT §3.1 measured.  Skipped when absent;
no sample bytes live in the project."""
import math
import random
from pathlib import Path

import numpy as np
import pytest

from ros_sim_bridge.ibeo import codec as ibeo
from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.ibeo.codec import commands as C
from ros_sim_bridge.ibeo.codec import errors_warnings as E
from ros_sim_bridge.ibeo.codec import scan as S
from ros_sim_bridge.ibeo.codec import units
from ros_sim_bridge.ibeo import geometry as G
from ros_sim_bridge.ibeo.codec.framing import make_framer
from ros_sim_bridge.ibeo.codec.header import decode_header
from ros_sim_bridge.core.framer import Frame

SAMPLES = Path(__file__).resolve().parents[2].parent / 'shared' / 'samples' / 'ibeo' / \
    'raulexposito-ldmrs'
LOGS = ('20120921-200352_record.hexlog', '20120921-200644_record.hexlog')


def sample(name: str) -> Path:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f'{path} not present (../shared is optional)')
    return path


def hexlog(name: str) -> list[bytes]:
    return [bytes.fromhex(line.strip()) for line in sample(name).read_text().splitlines()
            if line.strip()]


def decode_line(msg: bytes):
    header = decode_header(msg)
    assert header.size == len(msg) - 24
    return header, ibeo.decode_message(header.data_type, msg[24:], header)


@pytest.fixture(scope='module')
def decoded():
    out = {}
    for name in LOGS:
        out[name] = [decode_line(m) for m in hexlog(name)]
    return out


def test_every_message_decodes_with_expected_counts(decoded):
    per_file = {name: (sum(isinstance(r, S.LuxScan) for _, r in msgs),
                       sum(isinstance(r, E.LuxErrorsWarnings) for _, r in msgs))
                for name, msgs in decoded.items()}
    assert per_file == {LOGS[0]: (51, 49), LOGS[1]: (20, 80)}
    assert sum(s for s, _ in per_file.values()) == 71
    assert sum(w for _, w in per_file.values()) == 129


def scans_of(decoded, complete_only=True):
    """Scans; the first scan of each log is zero-filled by the recorder after ~1,400 bytes."""
    out = []
    for msgs in decoded.values():
        scans = [r for _, r in msgs if isinstance(r, S.LuxScan)]
        out += scans[1:] if complete_only else scans
    return out


def test_scan_headers(decoded):
    for scan in scans_of(decoded, complete_only=False):
        assert len(scan.points) == 740
        assert scan.ticks_per_rotation == 11520
        assert (scan.start_angle_ticks, scan.end_angle_ticks) == (1600, -1600)
        assert units.ticks_to_rad(scan.start_angle_ticks, scan.ticks_per_rotation) == \
            pytest.approx(math.radians(50))
        assert scan.scanner_status == 0x030B
        assert scan.flags in (0x0002, 0x0402)
        assert 0.0 < scan.duration_s < 0.08


def test_complete_scans_layers_echoes_flags_distances(decoded):
    scans = scans_of(decoded)
    assert len(scans) == 69
    for scan in scans:
        p = scan.points
        assert np.bincount(p['layer'], minlength=4).tolist() == [200, 200, 170, 170]
        assert (p['echo'] == 0).all()
        assert set(np.unique(p['flags']).tolist()) <= {0x00, 0x02}   # 0x40/0x50 masked off
        assert 31 <= p['distance_cm'].min() and p['distance_cm'].max() <= 187
        for layer, top, bottom in ((0, 1600, -1584), (1, 1600, -1584), (2, 1112, -1592),
                                   (3, 1112, -1592)):
            a = p['angle_ticks'][p['layer'] == layer]
            assert (a.max(), a.min()) == (top, bottom)
            steps = np.diff(a)
            # 0.5 deg per layer; one real scan (3221) repeats one angle and skips the next.
            assert (steps <= 0).all() and np.count_nonzero(steps != -16) <= 2


def test_clutter_flag_seen_somewhere(decoded):
    flags = np.concatenate([s.points['flags'] for s in scans_of(decoded)])
    assert (flags == S.POINT_FLAG_CLUTTER).any()


def test_scan_rate_and_mirror_side(decoded):
    for msgs in decoded.values():
        scans = [r for _, r in msgs if isinstance(r, S.LuxScan)][1:]
        for a, b in zip(scans, scans[1:]):
            gap = b.scan_number - a.scan_number
            dt = (b.start_ntp - a.start_ntp) / 2**32
            assert dt == pytest.approx(0.080 * gap, abs=0.002)      # 12.5 Hz
            if gap == 1:
                assert a.mirror_side != b.mirror_side               # toggles on a 4-layer unit


def test_sensor_clock_is_not_ntp_1900(decoded):
    seconds = [h.ntp_seconds for msgs in decoded.values() for h, _ in msgs]
    assert 141 <= min(seconds) and max(seconds) < 283


def test_xyz_plausible(decoded):
    for scan in scans_of(decoded)[:5]:
        xyz, h = G.scan_xyz(scan)
        r = np.linalg.norm(xyz, axis=1)
        assert np.allclose(r, scan.points['distance_cm'] / 100.0, rtol=1e-5)
        assert (np.abs(xyz[:, 2]) <= r * math.sin(math.radians(1.2)) + 1e-6).all()
        assert (np.abs(h) <= math.radians(50) + 1e-6).all()
        assert (xyz[:, 0] > 0).all()                                 # ±50°: all in front


def test_warnings(decoded):
    for msgs in decoded.values():
        for _, r in msgs:
            if isinstance(r, E.LuxErrorsWarnings):
                assert not r.has_error and r.warning_register_1 == 0
                assert r.warning_register_2 in (0x0002, 0x0003)
                assert 'E-IF_ETH' in r.warning_names


def test_whole_logs_through_the_framer_in_random_chunks():
    stream = b''.join(m for name in LOGS for m in hexlog(name))
    rnd = random.Random(7)
    f = make_framer()
    events, pos = [], 0
    while pos < len(stream):
        n = rnd.randint(1, 5000)
        events += f.feed(stream[pos:pos + n])
        pos += n
    assert not [e for e in events if isinstance(e, CodecError)]
    kinds = [ibeo.decode_frame(e)[0].data_type for e in events if isinstance(e, Frame)]
    assert len(kinds) == 200 and kinds.count(0x2202) == 71 and kinds.count(0x2030) == 129
    assert f.buffered == 0


def annotated(name: str) -> tuple[bytes, bytes]:
    header = body = None
    for line in sample(name).read_text().splitlines():
        line = line.strip()
        if line.startswith('RAW header:'):
            header = bytes.fromhex(line.split(':', 1)[1])
        elif line.startswith('RAW body:'):
            body = bytes.fromhex(line.split(':', 1)[1])
    return header, body


def test_real_get_parameter_ip_address_reply():
    header, body = annotated('mensajes_getParameterIPAddress.txt')
    h = decode_header(header)
    assert (h.data_type, h.size) == (0x2020, len(body))
    r = ibeo.decode_message(h.data_type, body, h)
    assert r.success and r.command_id == C.GET_PARAMETER
    assert r.parameter.index == 0x1000 and r.parameter.name == 'IP address'
    assert r.parameter.raw == 0xA37596DD and r.parameter.value == '163.117.150.221'


def test_real_get_parameter_tcp_port_reply():
    header, body = annotated('mensajes_getParameterTCPPort.txt')
    r = ibeo.decode_message(decode_header(header).data_type, body)
    assert r.success and r.parameter.name == 'TCP Port' and r.parameter.value == 0x50


def test_real_stop_measure_reply():
    header, body = annotated('mensajes_stopMeasure.txt')
    r = ibeo.decode_message(decode_header(header).data_type, body)
    assert r.success and r.command_id == C.STOP_MEASURE and r.name == 'stop_measure'


def test_real_errors_and_warnings_message():
    header, body = annotated('mensajes_errorsAndWarnings.txt')
    h = decode_header(header)
    m = ibeo.decode_message(h.data_type, body, h)
    assert isinstance(m, E.LuxErrorsWarnings)
    assert m.warning_names == ['W-IF_CAN'] and not m.has_error
    assert 0x00054700 <= h.ntp >> 32 < 0x00054800   # not an NTP-1900 clock either
