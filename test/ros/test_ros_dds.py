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


_PROBE = '''
import sys, time
import rclpy
from rclpy.node import Node
from sensor_msgs.msg import Image
role = sys.argv[1]
rclpy.init()
node = Node('dds_probe_' + role)
if role == 'sub':
    got = []
    node.create_subscription(Image, 'dds_probe_big', lambda m: got.append(len(m.data)), 10)
    t0 = time.time()
    while time.time() - t0 < 30 and len(got) < 3:
        rclpy.spin_once(node, timeout_sec=0.1)
    print('received', len(got), got[:1], flush=True)
else:
    pub = node.create_publisher(Image, 'dds_probe_big', 10)
    img = Image(width=1920, height=1080, encoding='bgra8', step=7680)
    img.data = bytes(1920 * 1080 * 4)
    t0 = time.time()
    while time.time() - t0 < 30 and pub.get_subscription_count() == 0:
        time.sleep(0.05)
    for _ in range(100):
        pub.publish(img)
        time.sleep(0.05)
rclpy.shutdown()
'''


def test_large_frames_profile_carries_an_8_mb_image_between_processes(tmp_path):
    """config/fastdds_large_frames.xml (64 MiB shared memory + the 100 ms heartbeat) is a
    profile Fast DDS accepts: a 1920×1080 bgra Image crosses from one process to another
    whole, and Fast DDS reports no profile error."""
    import os
    import subprocess
    import sys
    path = os.path.join(os.path.dirname(dds.packaged_fastdds_profile()),
                        'fastdds_large_frames.xml')
    root = ET.parse(path).getroot()
    shm = root.find('f:profiles/f:transport_descriptors/f:transport_descriptor', NS)
    assert shm.find('f:type', NS).text == 'SHM'
    assert int(shm.find('f:segment_size', NS).text) >= 1920 * 1080 * 4
    script = tmp_path / 'probe.py'
    script.write_text(_PROBE)
    env = dict(os.environ, FASTDDS_DEFAULT_PROFILES_FILE=path)
    pub = subprocess.Popen([sys.executable, str(script), 'pub'], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        sub = subprocess.run([sys.executable, str(script), 'sub'], env=env,
                             capture_output=True, text=True, timeout=90)
    finally:
        pub.kill()
        pub_out = pub.communicate()[0]
    out = sub.stdout + sub.stderr + pub_out
    assert 'received 3 [8294400]' in sub.stdout, out
    assert 'XMLPARSER' not in out and 'Error' not in out, out
