"""A recorder string that is not UTF-8 (one flipped byte, its length intact) costs that string
only: the actor of the EventAdd record holding it is still created (U+FFFD in the string), every
other actor of the packet too, and the damage is named (frame, packet, record, field) by the
codec, ``carla_log`` (every subcommand) and the replayer's /diagnostics.  On generated
recordings and the real one in ../shared (SUPPLEMENT §5.3)."""
import io
import json

import pytest
from nav_msgs.msg import Odometry

from conftest import shared_path
from ros_sim_bridge.carla.cli import main
from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.codec.header import encode_header
from ros_sim_bridge.carla.codec.records import UE4, PacketDecoder, PacketEncoder, WalkerBones
from ros_sim_bridge.carla.emulator.scene import LAYOUTS, Scene
from ros_sim_bridge.carla.emulator.writer import write
from ros_sim_bridge.carla.ros.node import CarlaReplayerNode
from ros_sim_bridge.carla.world import World
from ros_sim_bridge.core.binary import BAD_VALUE, CodecError
from ros_sim_bridge.msg import CarlaActorList

SCENE = Scene(seconds=3.0, rate=20.0, vehicles=4, walkers=2, traffic_lights=2)
KEY = b'number_of_wheels'   # an attribute id of every vehicle, generated and real


def generated(layout: str = 'ue4-0.9.13') -> bytes:
    out = io.BytesIO()
    write(out, SCENE, layout)
    return out.getvalue()


def real() -> bytes:
    return shared_path('samples', 'carla', 'scenario_runner-metrics',
                       'DistanceToLaneCenter.log').read_bytes()


def flipped(data: bytes) -> tuple[bytes, int]:
    """``data`` with the first byte of the first ``number_of_wheels`` attribute id of the
    first EventAdd packet made 0xFF (never UTF-8), and that byte's offset."""
    rec = Recording(data)
    start, size = next((start, size) for _, pid, start, size in rec.events if pid == 2)
    at = start + bytes(data[start:start + size]).index(KEY)
    return data[:at] + b'\xff' + data[at + 1:], at


def world_at(rec: Recording, i: int) -> World:
    world = World(rec)
    world.advance(i, jump=True)
    return world


def check_actors_kept(intact: bytes):
    damaged, at = flipped(intact)
    ra, rd = Recording(intact), Recording(damaged)
    first = next(i for i, pid, _, _ in ra.events if pid == 2)
    wa, wd = world_at(ra, first), world_at(rd, first)
    assert sorted(wd.actors) == sorted(wa.actors) and len(wa.actors) > 2
    changed = [i for i in wa.actors if repr(wa.actors[i]) != repr(wd.actors[i])]  # NaN == NaN
    assert len(changed) == 1           # the actor with the flipped byte: only that string
    a, d = wa.actors[changed[0]], wd.actors[changed[0]]
    assert [k for _, k, _ in d.attributes] == [
        '\ufffd' + k[1:] if k == KEY.decode() else k for _, k, _ in a.attributes]
    assert repr((d.id, d.type, d.blueprint, d.spawn_location, d.spawn_rotation, d.role_name)) \
        == repr((a.id, a.type, a.blueprint, a.spawn_location, a.spawn_rotation, a.role_name))
    assert wd.hero() == wa.hero()
    err, = wd.errors
    assert isinstance(err, CodecError) and err.kind == BAD_VALUE and err.offset == at
    assert err.field.endswith('attribute.id') and 'not utf-8' in err.detail
    assert f'frame {int(rd.frame_ids[first])} packet 2 (EventAdd).[' in str(err)
    assert list(rd.decode_errors.values()) == [err]


@pytest.mark.parametrize('layout', list(LAYOUTS))
def test_a_string_not_utf8_costs_that_string_not_the_packet(layout):
    check_actors_kept(generated(layout))


def test_a_string_not_utf8_in_a_real_recording():
    check_actors_kept(real())


def test_walker_bone_name_and_map_name_not_utf8():
    """The other recorder strings: a bone name costs itself (the walker's bones kept), a map
    name is read with U+FFFD and reported as a problem of the recording."""
    bones = [('root', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), ('head', (1.0, 2.0, 3.0),
                                                          (0.0, 0.0, 0.0))]
    packet = bytearray(PacketEncoder(UE4).walker_bones([WalkerBones(7, bones)]))
    body = packet[5:]
    body[body.index(b'head')] = 0xC3       # a lead byte without its continuation
    bad = []
    walker, = PacketDecoder(UE4).decode('WalkerBones', bytes(body), 'WalkerBones', 0, bad)
    assert [b[0] for b in walker.bones] == ['root', '\ufffdead'] and walker.bones[1][1] == \
        (1.0, 2.0, 3.0)
    assert bad[0].field == '[0].bone.name' and 'not utf-8' in bad[0].detail
    with pytest.raises(CodecError, match='not utf-8'):   # without a list: strict, as before
        PacketDecoder(UE4).decode('WalkerBones', bytes(body), 'WalkerBones')
    data = generated()
    header = encode_header(0, 'Town01')
    head = bytearray(header)
    head[head.index(b'Town01')] = 0xFF
    rec = Recording(bytes(head) + data[len(header):])
    assert rec.header.map_name == '\ufffdown01' and len(rec) == len(Recording(data))
    assert 'InfoHeader.map' in str(rec.problems[0]) and 'not utf-8' in str(rec.problems[0])


def run(*argv):
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


@pytest.mark.parametrize('source', ['generated', 'real'])
def test_carla_log_names_the_string_and_keeps_the_actor(tmp_path, capsys, source):
    intact = generated() if source == 'generated' else real()
    damaged, at = flipped(intact)
    good, bad = tmp_path / 'intact.log', tmp_path / 'flipped.log'
    good.write_bytes(intact)
    bad.write_bytes(damaged)
    _, text_a = run('info', str(good))
    code, text_d = run('info', str(bad))
    err = capsys.readouterr().err
    assert code == 0
    creates = [line for line in text_a.splitlines() if line.startswith(' Create')]
    assert [line for line in text_d.splitlines() if line.startswith(' Create')] == creates
    bang = [line for line in text_d.splitlines() if line.startswith(' !')]
    assert len(bang) == 1 and f'attribute.id @{at}: not utf-8' in bang[0]
    assert bang[0][3:] in err
    for command in ('collisions', 'blocked'):
        code, text = run(command, '--json', str(bad))
        err = capsys.readouterr().err
        errors = json.loads(text)['errors']
        assert code == 0 and len(errors) == 1 and f'attribute.id @{at}: not utf-8' in errors[0]
        assert f'carla_log {command}: {bad}: {errors[0]}' in err
        assert 'errors' not in json.loads(run(command, '--json', str(good))[1])
    code, text = run('to-bag', '--json', str(bad), str(tmp_path / 'bag'), '--no-progress')
    err = capsys.readouterr().err
    errors = json.loads(text)['errors']
    assert code == 0 and len(errors) == 1 and f'@{at}: not utf-8' in errors[0] and \
        errors[0] in err


def test_replayer_creates_every_actor_and_counts_the_string(ros, tmp_path):
    intact = generated()
    damaged, at = flipped(intact)
    path = tmp_path / 'flipped.log'
    path.write_bytes(damaged)
    expected = sorted(world_at(Recording(intact), 0).actors)
    ros.start(CarlaReplayerNode, {'file': str(path), 'start_paused': True})
    actors = ros.collect(CarlaActorList, 'carla/actor_list')
    odom = ros.collect(Odometry, 'carla/hero/odometry')
    msg = actors.wait_for(1, 10.0)[-1]
    assert sorted(a.id for a in msg.actors) == expected
    odom.wait_for(1, 10.0)                 # the hero is there
    values = ros.diagnostics('carla_replayer',
                             lambda v: int(v.get('errors.bad_value', 0)) >= 1, timeout=10.0)
    assert f'@{at}: not utf-8' in values['last_error']
