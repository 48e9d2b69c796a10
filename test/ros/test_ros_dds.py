"""ros/dds.py: node executables start Fast DDS with the package's profile (heartbeat 100 ms)
unless the environment names its own profile file or another RMW (issue #12: service replies
lost under stream load were repaired only at Fast DDS's 3 s heartbeat)."""
import xml.etree.ElementTree as ET

from ros_sim_bridge.ros import dds

NS = {'f': 'http://www.eprosima.com'}


def test_packaged_profile_sets_a_100_ms_heartbeat_for_every_writer():
    path = dds.packaged_fastdds_profile()
    assert path is not None and path.endswith('config/fastdds.xml')
    root = ET.parse(path).getroot()
    writer = root.find('f:profiles/f:data_writer', NS)
    assert writer.get('is_default_profile') == 'true'
    hb = writer.find('f:times/f:heartbeat_period', NS)
    assert (hb.find('f:sec', NS).text, hb.find('f:nanosec', NS).text) == ('0', '100000000')


def test_profile_used_only_when_the_environment_has_none():
    env = {}
    assert dds.use_packaged_fastdds_profile(env) == dds.packaged_fastdds_profile()
    assert env['FASTDDS_DEFAULT_PROFILES_FILE'] == dds.packaged_fastdds_profile()
    env = {'RMW_IMPLEMENTATION': 'rmw_fastrtps_cpp'}
    assert dds.use_packaged_fastdds_profile(env) and 'FASTDDS_DEFAULT_PROFILES_FILE' in env
    for own in ({'FASTDDS_DEFAULT_PROFILES_FILE': '/x.xml'},
                {'FASTRTPS_DEFAULT_PROFILES_FILE': '/y.xml'},
                {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}):
        env = dict(own)
        assert dds.use_packaged_fastdds_profile(env) is None and env == own
