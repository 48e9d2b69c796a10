"""Damage in the middle of a CARLA recording (garbage written over it): the codec reads up to the
damage, resynchronises on the next plausible FrameStart, reports the region once (offset, bytes
skipped, why) and indexes everything after it exactly as in the undamaged file.  Checked on
generated recordings of each layout and on the real ones in ../shared (SUPPLEMENT §5.2, §5.6),
against the undamaged file's own index and decode, and on a small file written by hand."""
import dataclasses
import io
import mmap
import struct

import numpy as np
import pytest

from conftest import shared_path
from ros_sim_bridge.carla.cli import main
from ros_sim_bridge.carla.codec import Recording
from ros_sim_bridge.carla.codec.frame_index import FRAME_START_HEADER
from ros_sim_bridge.carla.emulator.scene import LAYOUTS, Scene
from ros_sim_bridge.carla.emulator.writer import write
from ros_sim_bridge.core.binary import BAD_VALUE, OVERSIZED, TRUNCATED

SCENE = Scene(seconds=6.0, rate=20.0, vehicles=6, walkers=2, traffic_lights=2)
REAL = [('scenario_runner-metrics', 'DistanceToLaneCenter.log'),
        ('scenario_runner-versions', 'v0.9.10__DistanceBetweenVehicles.log'),
        ('scenario_runner-versions', 'v0.9.10__DistanceToLaneCenter.log'),
        ('scenario_runner-versions', 'v0.9.13__DistanceBetweenVehicles.log')]


def generated(layout: str = 'ue4-0.9.13', scene: Scene = SCENE) -> bytes:
    out = io.BytesIO()
    write(out, scene, layout)
    return out.getvalue()


def real(parts) -> bytes:
    with open(shared_path('samples', 'carla', *parts), 'rb') as f:
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return bytes(m)


def headers(rec: Recording) -> np.ndarray:
    """File offsets of every packet header of an intact recording (FrameStarts included)."""
    out = []
    for i in range(len(rec)):
        out.append(int(rec.offsets[i]))
        out += [start - 5 for _, start, _ in rec.packets(i)]
    return np.array(out, np.int64)


def overwrite(data: bytes, at: int, garbage: bytes) -> bytes:
    return data[:at] + garbage + data[at + len(garbage):]


def garbage(n: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def over_a_header(rec: Recording, near: int, n: int) -> int:
    """An offset near ``near`` such that ``n`` bytes from it cover a packet header (garbage
    inside one packet's data would leave the file's structure intact)."""
    h = headers(rec)
    return int(h[np.searchsorted(h, near)]) - n // 2


def same(a, b) -> bool:
    """Decoded values equal (numpy arrays byte for byte, dataclasses field by field)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and a.tobytes() == b.tobytes())
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(same(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)


def check_resync(intact: bytes, damaged: bytes, regions: list, decode_window: int = 6):
    """Every frame outside the garbage ``regions`` ((start, length) pairs) indexed and decoded
    as in the undamaged file; one Damage per region covering its end, resuming at the first
    intact frame after it.  Returns the damaged Recording."""
    ra, rd = Recording(intact), Recording(damaged)
    spans = [(a, a + n) for a, n in regions]
    untouched = [i for i in range(len(ra))
                 if all(ra.ends[i] <= a or ra.offsets[i] >= b for a, b in spans)]
    assert len(rd.damage) == len(regions), rd.damage
    where = {int(off): j for j, off in enumerate(rd.offsets)}
    near = set()
    for (a, b), d in zip(spans, rd.damage):
        first = int(np.searchsorted(ra.offsets, a, side='right')) - 1   # frame hit first
        start = int(ra.offsets[first])       # nothing before the frame hit is lost, nor its
        assert d.offset >= (start + 29 if a >= start + 29 else start)   # intact FrameStart
        after = ra.offsets[ra.offsets >= b]
        if len(after):
            assert d.resumed == after[0] and d.skipped == d.resumed - d.offset
        else:
            assert d.resumed is None and d.skipped == len(damaged) - d.offset
        assert f'@{d.offset}' in str(d.error)
        k = int(np.searchsorted(ra.offsets, b))
        near |= set(range(max(first - decode_window, 0), min(k + decode_window, len(ra))))
    for i in untouched:
        j = where.get(int(ra.offsets[i]))
        assert j is not None, f'intact frame {i} @{ra.offsets[i]} lost'
        assert (rd.frame_ids[j], rd.durations[j], rd.elapsed[j], rd.ends[j]) == \
            (ra.frame_ids[i], ra.durations[i], ra.elapsed[i], ra.ends[i])
        assert list(rd.packets(j)) == list(ra.packets(i))
        if i in near or i in (0, len(ra) - 1):
            fa, fd = ra.frame(i), rd.frame(j)
            assert not fd.truncated and fd.errors == fa.errors == []
            assert same(fd.packets, fa.packets) and fd.unknown == fa.unknown
    # the frame the damage hit keeps its packets that lie wholly before the garbage
    for a, _ in spans:
        i = int(np.searchsorted(ra.offsets, a, side='right')) - 1
        j = where.get(int(ra.offsets[i])) if i >= 0 else None
        if j is not None and i not in untouched:
            assert rd.frame(j).truncated
            before = [p for p in ra.packets(i) if p[1] + p[2] <= a]
            assert list(rd.packets(j))[:len(before)] == before
    assert len(rd) >= len(untouched)
    return rd


# -- generated and real recordings ---------------------------------------------------------
@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_garbage_in_the_middle_of_a_generated_recording(layout):
    data = generated(layout)
    at = over_a_header(Recording(data), len(data) // 2, 300)
    rd = check_resync(data, overwrite(data, at, garbage(300, 1)), [(at, 300)])
    assert rd.cut is None and len(rd.problems) == 1 and rd.problems[0] is rd.damage[0].error


@pytest.mark.parametrize('parts', REAL, ids=[p[1] for p in REAL])
def test_garbage_in_the_middle_of_a_real_recording(parts):
    data = real(parts)
    ra = Recording(data)
    for seed, n in ((7, 300), (8, 40), (9, 5000)):
        at = over_a_header(ra, len(data) // 2 + 1000 * seed, n)
        rd = check_resync(data, overwrite(data, at, garbage(n, seed)), [(at, n)])
        assert rd.cut is None


def test_the_attack_of_last_session_loses_one_frame_not_569():
    """300 random bytes over the middle of the 847-frame 0.9.13 recording (the attack that lost
    569 frames): at most the frame hit is cut short, every other frame is there."""
    data = real(REAL[3])
    mid = len(data) // 2
    damaged = overwrite(data, mid, garbage(300, 1))
    rd = check_resync(data, damaged, [(mid, 300)])
    assert len(rd) == 847 and len(rd.damage) == 1 and rd.damage[0].resumed is not None


def test_garbage_holding_a_valid_looking_packet_header_and_frame_start():
    """Garbage that starts with a plausible Position header (id 6, a size that lands inside the
    garbage) and holds a FrameStart header with plausible times but no packets leading to a
    FrameEnd: neither fools the resync."""
    data = generated()
    ra = Recording(data)
    i = len(ra) // 2
    pos = [start - 5 for pid, start, _ in ra.packets(i) if pid == 6][0]
    fake_start = FRAME_START_HEADER + struct.pack('<Qdd', ra.frame_ids[i] + 1, 0.05,
                                                  ra.elapsed[i] + 0.05)
    junk = bytearray(garbage(400, 3))
    junk[0:5] = struct.pack('<BI', 6, 2 + 28 * 3)      # a Position of 3 records, in the junk
    junk[100:129] = fake_start
    junk[129:134] = struct.pack('<BI', 7, 10_000)       # its first packet runs far away
    rd = check_resync(data, overwrite(data, pos, bytes(junk)), [(pos, len(junk))])
    assert rd.damage[0].resumed > pos + 129


def test_damage_inside_the_first_frames_header():
    """The first FrameStart overwritten: nothing before it to keep, reading resumes at the
    second frame, the damage starts right after the info header."""
    data = generated()
    ra = Recording(data)
    at = ra.header.size + 1                     # the FrameStart's size and frame id
    rd = check_resync(data, overwrite(data, at, garbage(20, 4)), [(at, 20)])
    d = rd.damage[0]
    assert (d.offset, d.resumed, d.frame) == (ra.header.size, ra.offsets[1], -1)
    assert len(rd) == len(ra) - 1 and rd.frame_ids[0] == ra.frame_ids[1]


def test_damage_in_the_last_frame_cuts_the_recording_there():
    data = generated()
    ra = Recording(data)
    at = over_a_header(ra, int(ra.offsets[-1]) + 60, 30)
    damaged = overwrite(data, at, garbage(30, 5))
    rd = check_resync(data, damaged, [(at, 30)])
    d = rd.damage[0]
    assert d.resumed is None and rd.cut is d.error and rd.cut.kind == TRUNCATED
    assert 'cut here' in str(rd.cut) and d.skipped == len(damaged) - d.offset
    assert len(rd) == len(ra) and rd.frame(-1).truncated and rd.end == d.offset


def test_two_damaged_regions():
    data = generated('ue5')
    ra = Recording(data)
    a = over_a_header(ra, len(data) // 3, 200)
    b = over_a_header(ra, 2 * len(data) // 3, 700)
    damaged = overwrite(overwrite(data, a, garbage(200, 6)), b, garbage(700, 7))
    rd = check_resync(data, damaged, [(a, 200), (b, 700)])
    assert rd.skipped_bytes == sum(d.skipped for d in rd.damage) > 0
    assert rd.summary()['damage'] == [{'offset': d.offset, 'skipped': d.skipped,
                                       'reason': d.reason, 'resumed': d.resumed}
                                      for d in rd.damage]


def test_compiled_and_python_walks_find_the_same_damage():
    data = generated('ue4-0.9.15')
    ra = Recording(data)
    a = over_a_header(ra, len(data) // 4, 90)
    b = over_a_header(ra, 3 * len(data) // 4, 90)
    damaged = overwrite(overwrite(data, a, garbage(90, 8)), b, garbage(90, 9))
    native, python = Recording(damaged), Recording(damaged, native=False)
    assert native.damage == python.damage and len(native.damage) == 2
    assert np.array_equal(native.offsets, python.offsets)
    assert np.array_equal(native.ends, python.ends) and native.events == python.events


def test_frame_times_going_back_or_jumping_are_damage():
    """A FrameStart whose elapsed time goes back, or jumps far past the previous elapsed +
    duration (SUPPLEMENT §5.6: they are equal in every real file), is not a frame: skipped
    with its packets, reading resumes at the next frame."""
    data = generated()
    ra = Recording(data)
    i = len(ra) // 2
    for elapsed, word in ((ra.elapsed[i] - 1.0, 'goes back'),
                          (ra.elapsed[i] + 1e5, 'frames missing')):
        damaged = bytearray(data)
        struct.pack_into('<d', damaged, int(ra.offsets[i]) + 5 + 16, elapsed)
        rd = Recording(bytes(damaged))
        d, = rd.damage
        assert (d.offset, d.resumed, d.frame) == (ra.offsets[i], ra.offsets[i + 1], -1)
        assert word in d.reason and d.error.kind == BAD_VALUE and len(rd) == len(ra) - 1
        assert np.array_equal(rd.elapsed, np.delete(ra.elapsed, i))


# -- a file written by hand (SUPPLEMENT §5.2: u8 id, u32 size, data) --------------------------
def pk(pid: int, body: bytes) -> bytes:
    return struct.pack('<BI', pid, len(body)) + body


HEADER = b'\x01\x00\x0e\x00CARLA_RECORDER' + struct.pack('<q', 0) + b'\x06\x00Town06'  # 34 B
DEL = pk(3, struct.pack('<HI', 1, 9))                                                  # 11 B


def hand_frame(fid: int, elapsed: float, duration: float = 0.05) -> bytes:
    return pk(0, struct.pack('<Qdd', fid, duration, elapsed)) + DEL + pk(1, b'')       # 45 B


def test_hand_written_file_with_a_damaged_packet_header():
    """Frames of 45 B from byte 34: frame 2's EventDel header (byte 34 + 90 + 29 = 153) reads
    as id 6 with a size past the end of the file; the damage is at 153, 16 B (to frame 3's
    FrameStart at 169) are skipped, frame 2 keeps its FrameStart."""
    frames = b''.join(hand_frame(k + 1, 0.05 * k) for k in range(5))
    data = bytearray(HEADER + frames)
    data[153:158] = struct.pack('<BI', 6, 0x7FFFFFFF)
    rec = Recording(bytes(data))
    d, = rec.damage
    assert (d.offset, d.skipped, d.resumed, d.frame) == (153, 16, 169, 2)
    assert d.error.kind == OVERSIZED and 'overruns the file' in d.reason
    assert rec.frame_ids.tolist() == [1, 2, 3, 4, 5] and rec.cut is None
    assert rec.ends.tolist() == [79, 124, 153, 214, 259]
    assert rec.frame(2).truncated and not rec.frame(2).packets
    assert [rec.frame(k).get('EventDel')['id'].tolist() for k in (0, 1, 3, 4)] == [[9]] * 4


@pytest.mark.parametrize('body', [b'', struct.pack('<BI', 0, 0x7FFFFFFF) + b'x' * 40],
                         ids=['header only', 'first frame damaged'])
def test_a_recording_without_a_readable_frame_is_an_empty_world(body):
    """No frame to replay: the world stays empty at any target, replay or jump (an index past
    an empty frame table was an IndexError in the replayer's timer)."""
    from ros_sim_bridge.carla.world import World
    rec = Recording(HEADER + body)
    assert len(rec) == 0 and len(rec.damage) == (1 if body else 0)
    world = World(rec)
    for target, jump in ((0, False), (5, False), (3, True), (-1, True)):
        changes = world.advance(target, jump=jump)
        assert not (changes.added or changes.removed or changes.collisions)
        assert world.actors == {}


def test_hand_written_file_with_a_size_swallowing_the_next_frame_start():
    """Frame 2's EventDel header (byte 153) reads as id 6 with 40 B, which ends exactly at frame
    3's EventDel (byte 198): the walk sees a well-formed frame 2 and misses frame 3's
    FrameStart (byte 169).  Frame 4's elapsed time (0.15 s) is not frame 2's 0.1 s + 0.05 s,
    so frame 2 is searched again: frame 3 is found inside it and read, frame 2 is cut short
    after its FrameStart, 16 B are skipped."""
    frames = b''.join(hand_frame(k + 1, 0.05 * k) for k in range(5))
    data = bytearray(HEADER + frames)
    data[153:158] = struct.pack('<BI', 6, 40)
    rec = Recording(bytes(data))
    d, = rec.damage
    assert (d.offset, d.skipped, d.resumed, d.frame) == (153, 16, 169, 2)
    assert 'frames missing' in d.reason and d.error.kind == BAD_VALUE
    assert rec.frame_ids.tolist() == [1, 2, 3, 4, 5] and rec.frame(2).truncated
    assert rec.ends.tolist() == [79, 124, 153, 214, 259] and rec.packet_counts[3] == 4


def test_hand_written_file_with_the_last_frame_start_swallowed():
    """The same in the last frame (its duration −1, as CARLA leaves it): frame 3's EventDel
    header (byte 198) reads as id 6 with 40 B, ending at frame 4's EventDel; the walk ends
    cleanly at the end of the file, but frame 3's duration (0.05 s, not −1) says a frame
    followed: its FrameStart (byte 214, elapsed 0.15 + 0.05 s) is found inside frame 3."""
    frames = b''.join(hand_frame(k + 1, 0.05 * k, -1.0 if k == 4 else 0.05) for k in range(5))
    data = bytearray(HEADER + frames)
    data[198:203] = struct.pack('<BI', 6, 40)
    rec = Recording(bytes(data))
    d, = rec.damage
    assert (d.offset, d.skipped, d.resumed, d.frame) == (198, 16, 214, 3)
    assert 'runs over the next frame' in d.reason and rec.cut is None
    assert rec.frame_ids.tolist() == [1, 2, 3, 4, 5] and rec.frame(3).truncated
    assert rec.durations[-1] == -1.0 and rec.frame(4).get('EventDel')['id'].tolist() == [9]
    assert Recording(HEADER + frames).damage == []     # undamaged: nothing searched, found


def test_hand_written_file_with_a_frame_end_overwritten():
    """Frame 2's FrameEnd (bytes 164..168) replaced by a packet of id 7 and size 0: frame 3's
    FrameStart then comes inside frame 2; frame 2 is cut short after its EventDel and
    nothing is skipped (0 B), frame 3 reads on."""
    frames = b''.join(hand_frame(k + 1, 0.05 * k) for k in range(5))
    data = bytearray(HEADER + frames)
    data[164:169] = struct.pack('<BI', 7, 0)
    rec = Recording(bytes(data))
    d, = rec.damage
    assert (d.offset, d.skipped, d.resumed, d.frame) == (169, 0, 169, 2)
    assert 'before the FrameEnd' in d.reason and len(rec) == 5
    assert rec.frame(2).get('EventDel')['id'].tolist() == [9] and rec.frame(2).truncated


# -- carla_log info / to-bag on a damaged file ---------------------------------------------
def run(*argv):
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_info_and_to_bag_of_a_damaged_file(tmp_path, capsys):
    data = generated()
    ra = Recording(data)
    at = over_a_header(ra, len(data) // 2, 300)
    path = tmp_path / 'damaged.log'
    path.write_bytes(overwrite(data, at, garbage(300, 11)))
    rd = Recording(path.read_bytes())
    d, = rd.damage
    code, text = run('info', '--all', str(path))
    err = capsys.readouterr().err
    assert code == 0
    lines = text.splitlines()
    bang = [line for line in lines if line.startswith('! Damage')]
    j = int(np.searchsorted(rd.offsets, d.resumed))
    assert bang == [f'! Damage at byte {d.offset}: {d.reason}; {d.skipped} B skipped, resumed at '
                    f'byte {d.resumed} (frame {rd.frame_ids[j]} at {rd.elapsed[j]:g} seconds)']
    k = lines.index(bang[0])      # between the frame it hit and the one it resumed at
    assert lines[k + 1] == f'Frame {rd.frame_ids[j]} at {rd.elapsed[j]:g} seconds'
    assert f'Damage: 1 damaged region, {d.skipped} B skipped (at byte {d.offset})' in text
    assert lines[-2] == f'Frames: {ra.frame_ids[-1]}'
    assert f'@{d.offset}' in err and '1 damaged region' in err
    out = tmp_path / 'bag'
    code, text = run('to-bag', str(path), str(out), '--no-progress')
    err = capsys.readouterr().err
    assert code == 0 and f'/clock {len(rd)}' in text
    assert f'holds the {len(rd)} frames readable around the damage ({d.skipped} B skipped)' \
        in err
