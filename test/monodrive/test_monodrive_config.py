"""monoDrive's own JSON files (../shared/samples/monodrive) load, classified by kind, with all
three trajectory layouts; the one file shipped as invalid JSON is refused naming file and line."""
from pathlib import Path

import pytest

from conftest import shared_path
from ros_sim_bridge.monodrive.codec import config, messages

NOT_CONFIGS = {  # recorded sensor output, not a configuration file
    'uut__fixtures__sample_reports__sample_AEB_10_0_CCRS_Collision.json'}
INVALID = 'examples__matlab__configurations__trajectories__scenario_multi_vehicle.json'


def sample_files():
    root = shared_path('samples', 'monodrive')
    return sorted(p for p in Path(root).glob('*/*.json'))


def test_every_configuration_file_loads():
    kinds, layouts = {}, set()
    files = sample_files()
    assert len(files) >= 75
    for path in files:
        if path.name in NOT_CONFIGS or path.name == INVALID:
            continue
        cfg = config.load_config(path)
        kinds.setdefault(cfg.kind, []).append(path.name)
        if cfg.kind == 'trajectory':
            layouts.add(cfg.layout)
            assert cfg.frames()
        for msg_type, body in cfg.messages():
            assert msg_type in messages.MESSAGE_TYPES
    assert set(kinds) == set(config.KINDS)
    assert layouts == {'vehicle_map', 'frame_list', 'state_frames'}


@pytest.mark.parametrize('name,kind,layout', [
    ('monodrive-python-client/examples__scenarios__replay_lane_change.json', 'trajectory',
     'vehicle_map'),
    ('monodrive-client/examples__config__scenario_short.json', 'trajectory', 'frame_list'),
    ('monodrive-client/examples__config__trajectories__Car-to-Car-Rear-Stationary.json',
     'trajectory', 'state_frames'),
    ('monodrive-client/examples__config__simulator.json', 'simulator', None),
    ('monodrive-client/examples__config__weather.json', 'weather', None),
    ('monodrive-client/examples__ros__src__simulator_control__config__weather.json', 'weather',
     None),
    ('monodrive-client/examples__config__vehicle.json', 'vehicle', None),
    ('monodrive-client/examples__config__scenarios__Car-to-Car-Cut-In.json', 'scenario', None),
    ('monodrive-python-client/sensors__Lidar16.json', 'sensors', None),
])
def test_kinds_and_layouts(name, kind, layout):
    cfg = config.load_config(shared_path('samples', 'monodrive', *name.split('/')), kind)
    assert (cfg.kind, cfg.layout) == (kind, layout)


def test_invalid_file_refused_naming_file_and_line():
    path = shared_path('samples', 'monodrive', 'monodrive-client', INVALID)
    with pytest.raises(config.ConfigError) as err:
        config.load_config(path)
    assert INVALID in str(err.value) and 'line 242' in str(err.value)
    assert err.value.line == 242


def test_wrong_kind_and_bad_sensor_refused(tmp_path):
    path = shared_path('samples', 'monodrive', 'monodrive-client', 'examples__config__weather.json')
    with pytest.raises(config.ConfigError, match='expected a simulator file'):
        config.load_config(path, 'simulator')
    bad = tmp_path / 'sensors.json'
    bad.write_text('[{"type": "Lidar", "listen_port": null}]')
    with pytest.raises(config.ConfigError, match=r'sensors.json.*listen_port'):
        config.load_config(bad)


def test_sensor_list_becomes_one_message_per_sensor():
    cfg = config.load_config(shared_path('samples', 'monodrive', 'monodrive-python-client',
                                         'uut__sensor_config.json'))
    msgs = cfg.messages()
    assert len(msgs) == 9 and {m[0] for m in msgs} == {'REPLAY_ConfigureSensorsCommand_ID'}
    assert [s['type'] for s in cfg.sensors()][-1] == 'Ultrasonic'


def test_nan_in_a_configuration_file_refused_naming_file_and_line(tmp_path):
    bad = tmp_path / 'simulator.json'
    bad.write_text('{"simulation_mode": 0,\n "map": "Straightaway5k",\n "server_port": NaN}')
    with pytest.raises(config.ConfigError, match=r'simulator.json, line 3: non-standard JSON '
                                                 r'constant NaN') as err:
        config.load_config(bad)
    assert err.value.line == 3
