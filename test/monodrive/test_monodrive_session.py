"""ClientSession: pairing by reference else in order, one request outstanding, deadlines,
configuration re-sent after reconnect in monoDrive's client order, unknown replies surfaced."""
import json

import pytest

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.monodrive import session as s
from ros_sim_bridge.monodrive.codec import control


def reply(msg_type, reference=None, message='complete', magic=control.LEGACY_REPLY_MAGIC,
          success=True):
    body = {'type': msg_type, 'success': success, 'message': message}
    if reference is not None:
        body['reference'] = reference
    return control.encode_frame(body, magic)


def sent(session):
    data = session.data_to_send()
    return control.decode_message(data[8:]) if data else None


def connected():
    sess = s.ClientSession()
    sess.connection_made(0.0)
    return sess


def test_one_outstanding_and_pairing_by_reference():
    sess = connected()
    a = sess.request('GetVersion', {}, 0.0, 5.0)
    b = sess.request('REPLAY_StepSimulationCommand_ID', {'amount': 1}, 0.0, 5.0)
    first = sent(sess)
    assert first.reference == a.reference and sess.data_to_send() == b''   # b waits
    (ev,) = sess.receive_data(reply('GetVersion', a.reference, 'v'))
    assert isinstance(ev, s.Reply) and ev.request is a and ev.message.message == 'v'
    assert sent(sess).reference == b.reference


def test_reply_without_reference_pairs_in_order():
    sess = connected()
    a = sess.request('EgoControl_ID', {'forward_amount': 0.5, 'right_amount': 0,
                                       'brake_amount': 0, 'drive_mode': 1}, 0.0, 5.0)
    sent(sess)
    (ev,) = sess.receive_data(reply('EgoControl_ID'))
    assert isinstance(ev, s.Reply) and ev.request is a


def test_unknown_reference_and_other_type_is_unsolicited():
    sess = connected()
    a = sess.request('GetVersion', {}, 0.0, 5.0)
    sent(sess)
    events = sess.receive_data(reply('Status_ID', 999) + reply('GetVersion', a.reference))
    assert isinstance(events[0], s.Unsolicited) and events[0].message.reference == 999
    assert isinstance(events[1], s.Reply)


def test_timeout_then_late_reply():
    sess = connected()
    a = sess.request('GetMap', {}, 0.0, 1.0)
    q = sess.request('GetVersion', {}, 0.0, 0.5)   # never leaves the queue in time
    sent(sess)
    assert sess.tick(0.4) == []
    events = sess.tick(1.0)
    assert {type(e) for e in events} == {s.Timeout}
    assert {(e.request.reference, e.sent) for e in events} == {(a.reference, True),
                                                                (q.reference, False)}
    (late,) = sess.receive_data(reply('GetMap', a.reference))
    assert isinstance(late, s.LateReply) and late.request is a


def test_link_loss_fails_outstanding_and_queue_waits_for_connection():
    sess = connected()
    a = sess.request('GetVersion', {}, 0.0, 5.0)
    sent(sess)
    (ev,) = sess.connection_lost('peer closed')
    assert isinstance(ev, s.Failed) and ev.request is a
    b = sess.request('GetVersion', {}, 0.0, 5.0)
    assert sess.data_to_send() == b''                    # not connected
    sess.connection_made(1.0)
    assert sent(sess).reference == b.reference


def test_configuration_resent_in_client_order_after_reconnect():
    sess = connected()
    sensors = [{'type': 'Lidar', 'listen_port': 8200}, {'type': 'IMU', 'listen_port': 8500}]
    sess.request('REPLAY_ConfigureSensorsCommand_ID', sensors[0], 0, 5)
    sess.request('REPLAY_ConfigureSensorsCommand_ID', sensors[1], 0, 5)
    sess.request('WeatherConfig', {'set_profile': 'a', 'profiles': [{'id': 'a'}]}, 0, 5)
    sess.request('SimulatorConfig_ID', {'simulation_mode': 0, 'map': 'Straightaway5k'}, 0, 5)
    sess.request('EgoVehicleConfig_ID', {'body': {}}, 0, 5)
    sess.request('GetVersion', {}, 0, 5)                 # not configuration: not replayed
    while sess.outstanding or sess.pending:              # answer everything
        msg = sent(sess)
        sess.receive_data(reply(msg.type, msg.reference))
    sess.connection_lost('simulator restarted')
    replays = sess.connection_made(10.0)
    assert [r.type for r in replays] == ['SimulatorConfig_ID', 'WeatherConfig',
                                         'EgoVehicleConfig_ID',
                                         'REPLAY_ConfigureSensorsCommand_ID',
                                         'REPLAY_ConfigureSensorsCommand_ID']
    order = []
    while sess.pending:
        msg = sent(sess)
        order.append((msg.type, msg.message))
        sess.receive_data(reply(msg.type, msg.reference))
    assert order[0] == ('SimulatorConfig_ID', {'simulation_mode': 0, 'map': 'Straightaway5k'})
    assert [m for t, m in order[3:]] == sensors


def test_invalid_body_refused_before_sending():
    sess = connected()
    with pytest.raises(CodecError) as err:
        sess.request('EgoControl_ID', {'forward_amount': 2}, 0, 5)
    assert err.value.field == 'forward_amount' and sess.pending == 0


def test_bad_input_events_and_recovery():
    sess = connected()
    a = sess.request('GetVersion', {}, 0, 5)
    sent(sess)
    garbage = b'\x01\x02' + control.encode_frame(b'{"type": "GetVersion", "reference": ') + \
        control.encode_frame("{'type': 'GetVersion', 'reference': %d}" % a.reference)
    events = sess.receive_data(garbage)
    assert any(isinstance(e, s.BadInput) for e in events)
    assert isinstance(events[-1], s.Reply) and events[-1].request is a


def test_frames_carry_the_client_magic_and_json():
    sess = connected()
    sess.request('GetVersion', {}, 0, 5)
    data = sess.data_to_send()
    assert data[:4] == bytes.fromhex('6d6f6e6f') and int.from_bytes(data[4:8], 'big') == len(data)
    assert json.loads(data[8:])['type'] == 'GetVersion'


def test_reply_with_nan_is_refused_and_answers_its_request():
    """A reply holding NaN is counted as bad input and answers its request with the reason
    at once (the caller does not wait for its timeout); a NaN body is never queued."""
    ss = connected()
    req = ss.request('GetVersion', {}, 0.0, 5.0)
    ss.data_to_send()
    body = b'{"type":"GetVersion","reference":%d,"message":NaN}' % req.reference
    events = ss.receive_data(control.encode_frame(body))
    assert [type(e) for e in events] == [s.BadInput, s.Refused]
    assert events[0].error.kind == control.NON_STANDARD_JSON
    assert events[1].request is req and ss.outstanding is None
    with pytest.raises(CodecError):
        ss.request('GetMap', {'point_delta': float('inf')}, 0.0, 5.0)
    with pytest.raises(CodecError):
        ss.remember('WeatherConfig', {'set_profile': 'a', 'profiles': [{'id': float('nan')}]})
    assert ss.pending == 0


def test_the_newest_ego_control_replaces_one_not_sent_yet():
    sess = connected()
    step = sess.request('GetVersion', {}, 0.0, 5.0)
    assert sent(sess).reference == step.reference         # outstanding: controls wait
    body = {'forward_amount': 0.1, 'right_amount': 0.0, 'brake_amount': 0.0, 'drive_mode': 1}
    sess.ego_control(body, 0.0, 1.0)
    newest = sess.ego_control({**body, 'forward_amount': 0.9}, 0.0, 1.0)
    assert sess.pending == 2                              # the first control was dropped
    sess.receive_data(reply('GetVersion', step.reference))
    out = sent(sess)
    assert (out.reference, out.message['forward_amount']) == (newest.reference, 0.9)
    later = sess.ego_control(body, 0.0, 1.0)              # the sent one is kept
    assert sess.pending == 2 and later.reference != newest.reference
    with pytest.raises(CodecError):
        sess.ego_control({**body, 'brake_amount': 2.0}, 0.0, 1.0)


def test_validation_per_request_and_the_ports_a_sensor_configuration_opens():
    sess = connected()
    with pytest.raises(CodecError):
        sess.request('EgoControl_ID', {'forward_amount': 5}, 0.0, 1.0)
    raw = sess.request('EgoControl_ID', {'forward_amount': 5}, 0.0, 1.0, validate=False)
    assert sess.validate and raw.body == {'forward_amount': 5}
    many = sess.request('REPLAY_ConfigureSensorsCommand_ID',
                        [{'type': 'IMU', 'listen_port': 8101},
                         {'type': 'GPS', 'listen_port': 8102}], 0.0, 1.0)
    one = sess.request('AttachSensorCommand_ID', {'type': 'IMU', 'listen_port': 8103}, 0.0, 1.0,
                       validate=False)
    assert s.ClientSession.configured_ports(many) == {8101, 8102}
    assert s.ClientSession.configured_ports(one) == {8103}
    assert s.ClientSession.configured_ports(raw) == set()


def test_trajectory_steps_walk_the_frames_once_each_acknowledged():
    steps = s.TrajectorySteps([{'a': 1}, {'a': 2}], validate=True)
    assert steps.next_frame() == {'a': 1} and steps.next_frame() == {'a': 1}   # not taken yet
    steps.acknowledged()
    assert (steps.next_frame(), steps.cursor) == ({'a': 2}, 1)
    steps.acknowledged()
    assert steps.next_frame() is None and steps.cursor == 2
    assert steps.MESSAGE == 'REPLAY_StateStepSimulationCommand_ID'
