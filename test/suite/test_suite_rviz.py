"""config/ros_sim_bridge.rviz is an RViz 2 file RViz can load (RViz is not installable here).

Checked statically: the YAML shape RViz 2 writes, every class one that rviz_common or
rviz_default_plugins ships (the lists below are those packages' plugin descriptions, Humble …
Kilted), every display topic absolute, in a namespace of the suite table, and of the message type
its display class reads. That each topic really exists is checked against a recorded suite run
in test_suite_bags.py.
"""
from pathlib import Path

import yaml

from ros_sim_bridge.tools import suite

RVIZ = Path(__file__).resolve().parents[2] / 'config' / 'ros_sim_bridge.rviz'

#: display classes of rviz_default_plugins (plugins_description.xml), with the message they read
DISPLAYS = {
    'Axes': None, 'Camera': 'sensor_msgs/msg/Image', 'DepthCloud': 'sensor_msgs/msg/Image',
    'Effort': 'sensor_msgs/msg/JointState', 'FluidPressure': 'sensor_msgs/msg/FluidPressure',
    'Grid': None, 'GridCells': 'nav_msgs/msg/GridCells',
    'Illuminance': 'sensor_msgs/msg/Illuminance', 'Image': 'sensor_msgs/msg/Image',
    'InteractiveMarkers': None, 'LaserScan': 'sensor_msgs/msg/LaserScan',
    'Map': 'nav_msgs/msg/OccupancyGrid', 'Marker': 'visualization_msgs/msg/Marker',
    'MarkerArray': 'visualization_msgs/msg/MarkerArray', 'Odometry': 'nav_msgs/msg/Odometry',
    'Path': 'nav_msgs/msg/Path', 'PointCloud': 'sensor_msgs/msg/PointCloud',
    'PointCloud2': 'sensor_msgs/msg/PointCloud2',
    'PointStamped': 'geometry_msgs/msg/PointStamped', 'Polygon': 'geometry_msgs/msg/PolygonStamped',
    'Pose': 'geometry_msgs/msg/PoseStamped', 'PoseArray': 'geometry_msgs/msg/PoseArray',
    'PoseWithCovariance': 'geometry_msgs/msg/PoseWithCovarianceStamped',
    'Range': 'sensor_msgs/msg/Range', 'RelativeHumidity': 'sensor_msgs/msg/RelativeHumidity',
    'RobotModel': None, 'TF': None, 'Temperature': 'sensor_msgs/msg/Temperature',
    'Wrench': 'geometry_msgs/msg/WrenchStamped',
}
PANELS = {'rviz_common/Displays', 'rviz_common/Views', 'rviz_common/Time',
          'rviz_common/Selection', 'rviz_common/Tool Properties'}
TOOLS = {f'rviz_default_plugins/{t}' for t in (
    'Interact', 'MoveCamera', 'Select', 'FocusCamera', 'Measure', 'SetInitialPose',
    'SetGoal', 'PublishPoint')}
VIEWS = {f'rviz_default_plugins/{v}' for v in (
    'Orbit', 'XYOrbit', 'TopDownOrtho', 'ThirdPersonFollower', 'FPS')}
QOS = {'Reliability Policy': {'Reliable', 'Best Effort', 'System Default'},
       'Durability Policy': {'Volatile', 'Transient Local', 'System Default'},
       'History Policy': {'Keep Last', 'Keep All', 'System Default'}}


def load():
    return yaml.safe_load(RVIZ.read_text())


def displays(items=None):
    """Every display, groups (rviz_common/Group) flattened."""
    for d in items if items is not None else load()['Visualization Manager']['Displays']:
        if d['Class'] == 'rviz_common/Group':
            yield from displays(d['Displays'])
        else:
            yield d


def display_topics() -> dict[str, str]:
    """topic → message type the display reads."""
    out = {}
    for d in displays():
        kind = d['Class'].split('/', 1)[1]
        if 'Topic' in d:
            out[d['Topic']['Value']] = DISPLAYS[kind]
    return out


def test_shape_and_classes():
    doc = load()
    assert {p['Class'] for p in doc['Panels']} <= PANELS
    manager = doc['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'map'
    assert {t['Class'] for t in manager['Tools']} <= TOOLS
    assert manager['Views']['Current']['Class'] in VIEWS
    kinds = set()
    for d in displays():
        package, _, kind = d['Class'].partition('/')
        assert package == 'rviz_default_plugins' and kind in DISPLAYS, d['Class']
        assert d['Name'] and isinstance(d['Enabled'], bool)
        kinds.add(kind)
        if DISPLAYS[kind] is not None:
            topic = d['Topic']
            for key, allowed in QOS.items():
                assert topic[key] in allowed, (d['Name'], key)
    # what issue #14 asks to see: clouds, markers, ego odometry, TF
    assert {'PointCloud2', 'MarkerArray', 'Odometry', 'TF'} <= kinds


def test_cloud_coloured_by_layer():
    clouds = [d for d in displays() if d['Class'].endswith('/PointCloud2')]
    assert clouds and all(d['Color Transformer'] == 'Intensity' for d in clouds)
    assert {d['Channel Name'] for d in clouds} <= {'layer', 'intensity'}


def test_topics_are_in_suite_namespaces():
    for topic in display_topics():
        assert topic.startswith('/'), topic
        assert topic.split('/')[1] in suite.SOURCES, f'{topic}: not a namespace of the suite'


def test_every_source_of_the_suite_has_a_display():
    """all.launch.py rviz:=true starts every source: each shows something (issue #26)."""
    assert {topic.split('/')[1] for topic in display_topics()} == set(suite.SOURCES)
