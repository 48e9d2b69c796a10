"""The generator's scene (:mod:`.scene`) written as a CARLA recorder file (SUPPLEMENT §5):
header, then per frame its packets in the order CARLA's recorder writes them, through the
codec's encoders."""
from __future__ import annotations

from typing import BinaryIO

import numpy as np

from ..codec.header import encode_header
from ..codec.records import DTYPES, WHEEL_ANIM, PacketEncoder, WalkerBones, WheelAnimation
from .scene import LAYOUTS, SENSOR_OFFSET, SPECTATOR, Scene, physics, physics_ue5, vehicle_box


def write(out: BinaryIO, scene: Scene, layout: str = 'ue4-0.9.13', progress=None) -> int:
    """Write the whole recording of ``scene`` to ``out``; returns the bytes written."""
    lay, newer = LAYOUTS[layout]
    enc = PacketEncoder(lay)
    dt = DTYPES[lay.vector]
    written = out.write(encode_header(scene.date, scene.map_name))
    n_v, n_w, n_l = scene.vehicles, scene.walkers, scene.traffic_lights
    pos = np.zeros(1 + n_v + n_w, dt['Position'])
    pos['id'][0] = SPECTATOR
    pos['location'][0] = (0.0, 0.0, 1000.0)
    pos['rotation'][0] = (0.0, -30.0, 0.0)
    pos['id'][1:1 + n_v] = scene.vehicle_ids
    pos['id'][1 + n_v:] = scene.walker_ids
    anim = np.zeros(n_v, dt['AnimVehicle'])
    anim['id'] = scene.vehicle_ids
    anim['gear'] = 1
    walk = np.zeros(n_w, dt['AnimWalker'])
    walk['id'] = scene.walker_ids
    lights = np.zeros(n_v, dt['VehicleLight'])
    lights['id'] = scene.vehicle_ids
    state = np.zeros(n_l, dt['State'])
    state['id'] = scene.light_ids
    kin = np.zeros(n_v + n_w, dt['Kinematics'])
    kin['id'][:n_v] = scene.vehicle_ids
    kin['id'][n_v:] = scene.walker_ids
    empty = {name: enc.array(name, np.zeros(0, dt[name]))
             for name in ('EventDel', 'EventParent', 'Collision')}
    empty_add = enc.event_add([])
    coll_frames = scene.collision_frames()
    frames = scene.frames
    for f in range(frames):
        t = f / scene.rate
        duration = 1.0 / scene.rate if f < frames - 1 else -1.0
        parts = [enc.frame_start(f + 1, duration, t)]
        if newer:
            parts.append(enc.scalar('FrameCounter', 1000 + f))
            parts.append(enc.scalar('VisualTime', t))
        alive = scene.alive_vehicles(f)
        parts.append(enc.event_add(scene.additions(lay.vector)) if f == 0 else empty_add)
        if f == scene.destroy_frame and scene.destroyed >= 0:
            parts.append(enc.array('EventDel', [(scene.destroyed,)]))
        else:
            parts.append(empty['EventDel'])
        parts.append(enc.array('EventParent', [(scene.hero + SENSOR_OFFSET, scene.hero)])
                     if f == 0 else empty['EventParent'])
        if f in coll_frames and n_v >= 2:
            parts.append(enc.array('Collision', [(f, scene.hero, int(scene.vehicle_ids[1]), 1, 0),
                                                 (f + 10000, scene.hero, 0xFFFFFFFF, 1, 0)]))
        else:
            parts.append(empty['Collision'])
        if newer and lay.ids == '0.9.16' and f == 1:
            parts.append(enc.array('VehicleDoor', [(scene.hero, 5, 1)]))
        vloc, vrot, vvel, vyaw = scene.vehicle_state(t)
        wloc, wrot, wspeed = scene.walker_state(t)
        pos['location'][1:1 + n_v] = vloc
        pos['rotation'][1:1 + n_v] = vrot
        pos['location'][1 + n_v:] = wloc
        pos['rotation'][1 + n_v:] = wrot
        keep = np.concatenate([[True], alive, np.ones(n_w, bool)])
        parts.append(enc.array('Position', pos[keep]))
        state['state'], state['elapsed'] = scene.light_state(t)
        parts.append(enc.array('State', state))
        anim['throttle'] = np.where(vyaw > 0, 0.5, 0.0)
        anim['steering'] = np.where(vyaw > 0, 0.1, 0.0)
        anim['brake'] = 0.0
        anim['brake'][0] = 1.0 if f in coll_frames else 0.0
        parts.append(enc.array('AnimVehicle', anim[alive]))
        walk['speed'] = wspeed * 100.0       # cm/s, as CARLA records FWalkerControl.Speed
        parts.append(enc.array('AnimWalker', walk))
        lights['state'] = 1 | 2
        lights['state'][0] = 1 | 2 | (8 if f in coll_frames else 0)
        parts.append(enc.array('VehicleLight', lights[alive]))
        if newer:
            wheels = np.zeros(4, WHEEL_ANIM)
            wheels['location'] = np.arange(4)
            parts.append(enc.wheels([WheelAnimation(int(v), wheels) for v in
                                     scene.vehicle_ids[alive]]))
        if f > 0:
            kin['linear'][:n_v] = vvel
            kin['angular'][:n_v] = np.stack([np.zeros(n_v), np.zeros(n_v), vyaw], axis=1)
            kin['linear'][n_v:, 0] = np.where(wrot[:, 2] == 0, wspeed, -wspeed)
            parts.append(enc.array('Kinematics', kin[np.concatenate([alive,
                                                                     np.ones(n_w, bool)])]))
        if f == 0:
            boxes = [(int(v),) + vehicle_box(i) for i, v in enumerate(scene.vehicle_ids)]
            boxes += [(int(w), (0.0, 0.0, 0.0), (18.0, 18.0, 90.0)) for w in scene.walker_ids]
            parts.append(enc.array('BoundingBox', boxes))
            parts.append(enc.array('TriggerVolume', [
                (int(lid), (0.0, 0.0, 0.0), (100.0, 300.0, 100.0)) for lid in scene.light_ids]))
        else:
            parts.append(enc.array('BoundingBox', np.zeros(0, dt['BoundingBox'])))
        parts.append(enc.scalar('PlatformTime', 1000.0 + t * 1.02))
        if f == 0:
            make_physics = physics if lay.vector == '<f4' else physics_ue5
            parts.append(enc.physics_control([make_physics(int(v)) for v in scene.vehicle_ids]))
        if f == 0:
            parts.append(enc.array('TrafficLightTime',
                                   [(int(lid), 10.0, 3.0, 2.0) for lid in scene.light_ids]))
            if newer:
                parts.append(enc.walker_bones([WalkerBones(int(w), [
                    ('crl_root', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
                    ('crl_head__C', (0.0, 0.0, 160.0), (0.0, 0.0, 0.0))])
                    for w in scene.walker_ids]))
        parts.append(enc.frame_end())
        written += out.write(b''.join(parts))
        if progress is not None:
            progress(f + 1, frames)
    return written
