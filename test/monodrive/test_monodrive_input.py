"""The installed monodrive_client against hostile input over real TCP (issue 26): numbers
beyond float range (and over Python's 4,300-digit int limit), lone surrogates in JSON strings,
and float32 overflow.  Values are replaced (text: U+FFFD; optional report numbers: NaN) or
refused as CodecError naming the field; the node never dies and answers every service."""
import json
import math

from conftest import free_tcp_port, wait_until
from monodrive_support import (NODE, ScriptedServer, command, params, read_request,
                               sensor_header, sensors_file, sim)  # noqa: F401 (fixture)
from ros_sim_bridge.monodrive.codec import control
from ros_sim_bridge.monodrive.ros.node import MonoDriveClientNode, service_name
from ros_sim_bridge.msg import (MonoDriveCollision, MonoDriveRadarTargets, MonoDriveRaw,
                                MonoDriveUltrasonic)
from ros_sim_bridge.srv import MonoDriveCommand
from ros_sim_bridge.tools.session import call_service

HUGE = '1' * 4301                   # over Python's 4,300-digit int-string limit
WIDE = '1' + '0' * 400              # beyond float range


def raw_command(ros, msg_type, text, timeout=10.0):
    """Call the service for ``msg_type`` with the body text as given (not via json.dumps)."""
    return call_service(ros.probe, MonoDriveCommand, f'{NODE}/{service_name(msg_type)}',
                        MonoDriveCommand.Request(json=text), timeout)


def test_lone_surrogate_in_a_reply_answers_with_replacement(ros):
    """A reply whose ``message`` holds "\\ud800" (legal JSON) answers the call with U+FFFD;
    before, rclpy's send_response raised UnicodeEncodeError and the node died."""
    def replies(conn, stop):
        while not stop.is_set():
            req = read_request(conn)
            conn.sendall(control.encode_frame(
                b'{"type": "%s", "reference": %d, "message": "v\\ud800 1\\udc00", "x": %s}'
                % (req.type.encode(), req.reference, WIDE.encode()))
                + control.encode_frame(b'{"type": "\\ud800Note", "message": {"y": 1e400}}'))
    server = ScriptedServer(replies)
    try:
        raw = ros.collect(MonoDriveRaw, f'{NODE}/raw', matched=False)
        ros.start(MonoDriveClientNode, params(server.port))
        for _ in range(2):                       # the node is still there for the second
            res = command(ros, 'GetVersion', {})
            assert res is not None and res.success and res.message == 'v\ufffd 1\ufffd'
            assert '"x":null' in res.reply_json and '\\ufffd' in res.reply_json
        r = raw.wait_for(1, 10.0, where=lambda m: m.source == 'control')[0]
        assert r.type == '\ufffdNote' and json.loads(r.json)['message'] == {'y': None}
    finally:
        server.stop()


def test_service_bodies_with_huge_integers_refused_with_the_field(ros, sim):
    """A 400-digit integer in a checked field (OverflowError from math.isfinite before) and a
    4,301-digit integer anywhere (ValueError from int() before): refused, field named; the
    node answers the next call."""
    node = ros.start(MonoDriveClientNode, params(sim.port))
    res = raw_command(ros, 'EgoControl_ID', '{"forward_amount": %s, "right_amount": 0, '
                      '"brake_amount": 0, "drive_mode": 1}' % WIDE)
    assert res is not None and not res.success and 'forward_amount' in res.message
    res = raw_command(ros, 'GetVersion', '{"x": %s}' % HUGE)
    assert res is not None and not res.success and 'x is not a finite number' in res.message
    res = raw_command(ros, 'REPLAY_StepSimulationCommand_ID', '{"amount": -%s}' % HUGE)
    assert res is not None and not res.success and 'amount' in res.message
    res = raw_command(ros, 'GetVersion', '{"name": "\\ud800"}')     # sent, encodable
    assert res is not None and res.success
    assert sim.received[-1].message == {'name': '\ufffd'}
    assert node.control.connected


def test_sensor_reports_with_bad_numbers_and_surrogates_published(ros, tmp_path):
    """Radar: the targets with a non-finite or beyond-float32 value are left out and counted,
    the others published.  Collision and ultrasonic: a 400-digit or 1e300 distance/range is
    NaN, the report is published; lone surrogates in names and ids are U+FFFD."""
    radar_port, col_port, us_port = free_tcp_port(), free_tcp_port(), free_tcp_port()
    path, _ = sensors_file(tmp_path, (), extra=[
        {'type': 'Radar', 'listen_port': radar_port, 'description': 'radar'},
        {'type': 'Collision', 'listen_port': col_port, 'description': 'col'},
        {'type': 'Ultrasonic', 'listen_port': us_port, 'description': 'us'}])
    radar = (b'{"target_list": [{"range": 500, "aoa": 1e400, "velocity": 0, "rcs": 1},'
             b' {"range": %s, "aoa": 0, "velocity": 0, "rcs": 1},'
             b' {"range": 1e300, "aoa": 0, "velocity": 0, "rcs": 1},'
             b' {"range": 1000, "aoa": 10, "velocity": 2, "rcs": 3,'
             b' "target_ids": ["car\\ud800"]}]}' % HUGE.encode())
    col = (b'{"name": "ego\\udfff", "collision": false, "distance": %s, "forward_velocity":'
           b' 1e300, "time_to_collision": 2, "targets": [{"name": "\\ud800", "distance": -%s}]}'
           % (WIDE.encode(), WIDE.encode()))
    us = b'{"targets": [{"range": %s}, {"range": 1e300}, {"range": 250}]}' % WIDE.encode()

    def stream(body):
        def handler(conn, stop):
            conn.sendall(sensor_header(len(body), 1.0, 1) + body)
            stop.wait(2.0)
        return handler
    servers = [ScriptedServer(stream(b), p) for b, p in
               ((radar, radar_port), (col, col_port), (us, us_port))]
    got = {k: ros.collect(t, f'monodrive/{k}/{n}', matched=False) for k, t, n in (
        ('radar', MonoDriveRadarTargets, 'targets'), ('col', MonoDriveCollision, 'collision'),
        ('us', MonoDriveUltrasonic, 'ultrasonic'))}
    try:
        node = ros.start(MonoDriveClientNode, params(free_tcp_port(), sensors_config=str(path)))
        r = got['radar'].wait_for(1, 15.0)[0]
        assert len(r.targets) == 1 and r.targets[0].range == 10.0
        assert r.targets[0].target_ids == ['car\ufffd']
        link = [s for s in node.sensors if s.kind == 'Radar'][0]
        assert wait_until(lambda: sum(link.stats.errors.values()) == 3, 5.0)
        c = got['col'].wait_for(1, 15.0)[0]
        assert c.name == 'ego\ufffd' and c.target_names == ['\ufffd']
        assert math.isnan(c.distance) and math.isnan(c.forward_velocity)
        assert c.time_to_collision == 2.0 and math.isnan(c.target_distances[0])
        u = got['us'].wait_for(1, 15.0)[0]
        assert math.isnan(u.ranges[0]) and math.isnan(u.ranges[1]) and u.ranges[2] == 2.5
    finally:
        for s in servers:
            s.stop()


def test_reply_with_an_odd_digit_reference_counted_as_bad_value(ros):
    """A reference "²" ('²'.isdigit() is true, int() refuses it) and a 4,301-digit integer in
    a reply: each is a CodecError counted as ``bad_value``, not a ValueError; the right reply
    after them answers the call."""
    def replies(conn, stop):
        while not stop.is_set():
            req = read_request(conn)
            conn.sendall(control.encode_frame(
                '{"type": "%s", "reference": "\u00b2"}' % req.type)
                + control.encode_frame(b'{"type": "%s", "reference": %s}'
                                       % (req.type.encode(), HUGE.encode()))
                + control.encode_frame(b'{"type": "%s", "reference": %d, "message": "ok"}'
                                       % (req.type.encode(), req.reference)))
    server = ScriptedServer(replies)
    try:
        node = ros.start(MonoDriveClientNode, params(server.port))
        res = command(ros, 'GetVersion', {})
        assert res is not None and res.success and res.message == 'ok'
        errors = node.control_stats.errors
        assert errors.get('bad_value') == 2 and 'ValueError' not in errors, errors
    finally:
        server.stop()
