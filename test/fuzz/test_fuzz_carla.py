"""Fuzz: the CARLA recorder codec (carla/codec) and the world it feeds (carla/world.py).

Seeds: short recordings of the project's generator in its three layouts (UE4 0.9.13, UE4
0.9.15 with ids >= 18, UE5 f64 vectors), plus each packet body on its own.  Whatever the bytes,
``Recording`` either refuses the file header with a CodecError or indexes it; after the header
nothing raises: damage is skipped up to the next plausible frame (``damage``) or ends the
readable part (``cut``), and is listed in ``problems`` and in each frame's ``errors``; every
frame decodes, the world builds frame by frame and by seeking, and nothing hangs.  Each packet decoder on its own returns or raises CodecError.
"""
from __future__ import annotations

import io
import time

from hypothesis import example, given, strategies as st

from ros_sim_bridge.carla.emulator import scene as generator_scene, writer as generator_writer
from ros_sim_bridge.carla.codec import PacketDecoder, Recording
from ros_sim_bridge.carla.codec.records import PACKET_HEADER
from ros_sim_bridge.carla.world import World
from ros_sim_bridge.core.binary import CodecError

import fuzz_support as fz

#: Seconds one whole pass over a (small) fuzzed recording may take before it counts as a hang.
PASS_SECONDS = 5.0


def _recording(layout: str) -> bytes:
    out = io.BytesIO()
    generator_writer.write(out, generator_scene.Scene(seconds=0.2, rate=20.0, vehicles=2, walkers=1,
                                         traffic_lights=1), layout)
    return out.getvalue()


SEEDS = [_recording(layout) for layout in sorted(generator_scene.LAYOUTS)]


def _packets(data: bytes) -> list[tuple[int, bytes]]:
    """(id, body) of every packet of an intact recording."""
    rec = Recording(data)
    out = []
    for i in range(len(rec)):
        out += [(pid, data[s:s + n]) for pid, s, n in rec.packets(i)]
    return out, rec.layout


PACKETS = []
for _seed in SEEDS:
    _found, _layout = _packets(_seed)
    PACKETS += [(_layout, pid, body) for pid, body in _found]


def _read_all(data: bytes) -> None:
    t0 = time.perf_counter()
    try:
        rec = Recording(data)
    except CodecError as err:                # only the file header may be refused
        fz.check_codec_error(err)
        return
    for err in rec.problems:
        fz.check_codec_error(err)
        fz.check_error_has_offset(err)
    # a cut is the last damage, with nothing readable after it; the readable part ends there
    assert (rec.cut is None) == (not rec.damage or rec.damage[-1].resumed is not None)
    assert rec.end == (len(data) if rec.cut is None else rec.cut.offset), (rec.cut, rec.end)
    for d in rec.damage:
        fz.check_codec_error(d.error)
        assert d.skipped >= 0 and d.offset + d.skipped == (d.resumed or len(data))
    rec.summary()
    world = World(rec)
    for i in range(len(rec)):
        frame = rec.frame(i)
        for err in frame.errors:
            fz.check_codec_error(err)
        world.advance(i)
        world.poses(frame.elapsed)
    for frame in rec.event_frames():
        for err in frame.errors:
            fz.check_codec_error(err)
    if len(rec):
        world.advance(0)                     # a seek back rebuilds from the index
        world.advance(len(rec) - 1)
    assert time.perf_counter() - t0 < PASS_SECONDS


@given(st.binary(max_size=400) | fz.mutated(SEEDS, max_mutations=6))
@example(SEEDS[0][:len(SEEDS[0]) // 2])     # cut in the middle of a packet
@example(SEEDS[0] + b'\x00\x07\x00\x00\x00garbage')
@example(b'')
def test_recording(data):
    """Random and mutated recordings index, decode and replay into a World without raising
    anything but a header CodecError, in bounded time."""
    fz.tried('carla.codec.Recording+World')
    _read_all(data)


@given(st.sampled_from(SEEDS), st.integers(0, 1 << 20), st.binary(min_size=1, max_size=64))
def test_recording_keeps_frames_before_and_after_damage(seed, where, garbage):
    """Garbage written over a recording: every frame that starts and ends before the damage
    is still indexed with its FrameStart fields, and so is every frame after it (the codec
    resynchronises on the next plausible FrameStart)."""
    fz.tried('carla.codec.Recording(frames before and after damage)')
    intact = Recording(seed)
    at = intact.header.size + where % (len(seed) - intact.header.size)
    damaged = seed[:at] + garbage + seed[at + len(garbage):]
    rec = Recording(damaged)
    before = [i for i in range(len(intact)) if intact.ends[i] <= at]
    assert len(rec) >= len(before)
    for i in before:
        assert rec.offsets[i] == intact.offsets[i]
        assert rec.elapsed[i] == intact.elapsed[i]
    found = dict(zip(rec.offsets.tolist(), rec.elapsed.tolist()))
    for i in range(len(intact)):
        if intact.offsets[i] >= at + len(garbage):
            assert found.get(int(intact.offsets[i])) == intact.elapsed[i], (i, rec.damage)


@given(st.sampled_from(PACKETS).flatmap(
    lambda p: st.tuples(st.just(p), fz.inputs([p[2]], max_random=200))))
def test_packet_decoders(case):
    """Each known packet body, random or mutated, through the decoder of its id: a value or a
    CodecError (the layout's own packet names; unknown ids are skipped by the recording)."""
    (layout, pid, _), body = case
    name = layout.packet_name(pid)
    if name is None:
        return
    fz.tried(f'carla.codec.PacketDecoder({name})')
    decoder = PacketDecoder(layout)
    fz.check_decoder(lambda b: decoder.decode(name, memoryview(b), f'packet {pid}', 0), body)


def test_every_packet_name_is_seeded():
    """The seeds cover every packet the generator writes in every layout: a new packet in the
    generator without a fuzz seed would fail here."""
    names = {layout.packet_name(pid) for layout, pid, _ in PACKETS}
    assert {'FrameEnd', 'EventAdd', 'EventDel', 'EventParent', 'Collision',
            'Position', 'State', 'BoundingBox', 'PhysicsControl'} <= names, names
    assert PACKET_HEADER.size == 5
