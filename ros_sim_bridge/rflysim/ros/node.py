"""RflySim ground-truth receiver (executable ``rflysim_truth``).

| direction | topic | type | frame |
|---|---|---|---|
| pub | rflysim/vehicle_<id>/truth | ros_sim_bridge/RflySimTruth | NED / FRD, as sent |
| pub | rflysim/vehicle_<id>/odom | nav_msgs/Odometry | map (ENU) → vehicle_<id>/base_link (FLU) |
| pub | rflysim/vehicle_<id>/imu | sensor_msgs/Imu | vehicle_<id>/base_link (FLU) |
| pub | rflysim/vehicle_<id>/fix | sensor_msgs/NavSatFix | vehicle_<id>/base_link |
| pub | rflysim/vehicle_<id>/collision | ros_sim_bridge/RflySimCollision | vehicle_<id>/base_link |
| pub | rflysim/map_origin | sensor_msgs/NavSatFix (latched) | map |
| pub | /tf | tf2_msgs/TFMessage | map → vehicle_<id>/base_link |
| pub | /diagnostics | diagnostic_msgs/DiagnosticArray | one status per vehicle port |

Transport: one UDP port per vehicle, ``base_port + 2·(id − 1)`` (SUPPLEMENT §2.1).
"""
from __future__ import annotations

import functools
import sys

from rclpy.node import Node
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix
from tf2_msgs.msg import TFMessage

from ros_sim_bridge.rflysim import codec as rflysim
from ros_sim_bridge.core.binary import CodecError, require_finite
from ros_sim_bridge.rflysim.ros import conversions as convert
from ros_sim_bridge.ros.stamps import ns_to_stamp, seconds_to_stamp
from ros_sim_bridge.ros.diagnostics import Diagnostics
from ros_sim_bridge.msg import RflySimCollision, RflySimTruth
from ros_sim_bridge.ros.runner import run_node
from ros_sim_bridge.ros.params import common_parameters, declare_parameters, positive_int
from ros_sim_bridge.ros.qos import DATA, LATCHED, TF
from ros_sim_bridge.core.udp import UdpEndpoint, UdpReceiver

PARAMETERS = {
    'copter_ids': ([1], 'CopterIDs to receive; one UDP port each',
                   lambda ids: None if ids else 'must name at least one CopterID'),
    'bind_address': ('127.0.0.1', 'local address the UDP ports bind to (0.0.0.0: all)'),
    'base_port': (rflysim.TRUTH_BASE_PORT, 'port of CopterID 1; ID n uses base_port + 2·(n − 1)'),
    'receive_buffer_bytes': (4 << 20, 'SO_RCVBUF per port', positive_int),
    'topic_prefix': ('rflysim', 'namespace of the per-vehicle topics'),
    'map_frame': ('map', 'ENU world frame (origin = RflySim map centre)'),
    'base_frame': ('vehicle_{id}/base_link', 'FLU body frame; {id} is the CopterID'),
    'publish_tf': (True, 'publish map → base_frame on /tf'),
    'gps_order': ('lat_lon_alt', "order of PosGPS: 'lat_lon_alt' (document) or 'lon_lat_alt'"),
    **common_parameters(stamp_sources={'receive': 'host clock at reception',
                                       'sim': 'runnedTime, the simulation time'},
                        stamp_default='receive', stale_after=1.0, stale_what='a vehicle'),
}


def _relative(prefix: str, name: str) -> str:
    """``prefix/name``, or ``name`` alone for an empty prefix (the node's namespace then says
    it, as in the launch files); relative either way, so a namespace applies."""
    prefix = prefix.strip('/')
    return f'{prefix}/{name}' if prefix else name


class Vehicle:
    """Publishers and counters of one CopterID."""

    def __init__(self, node: 'RflySimTruthNode', copter_id: int, p):
        ns = _relative(p.topic_prefix, f'vehicle_{copter_id}')
        self.copter_id = copter_id
        self.frame = p.base_frame.format(id=copter_id)
        self.cdr = convert.VehicleCdr(p.map_frame, self.frame, p.gps_order)
        self.truth = node.create_publisher(RflySimTruth, f'{ns}/truth', DATA)
        self.odom = node.create_publisher(Odometry, f'{ns}/odom', DATA)
        self.imu = node.create_publisher(Imu, f'{ns}/imu', DATA)
        self.fix = node.create_publisher(NavSatFix, f'{ns}/fix', DATA)
        self.collision = node.create_publisher(RflySimCollision, f'{ns}/collision', DATA)
        self.port = rflysim.truth_port(copter_id, p.base_port)
        self.last_target = None  # collision target of the previous truth packet
        self.stats = node.diagnostics.stream(f'vehicle {copter_id} (udp {self.port})',
                                             f'rflysim copter {copter_id}',
                                             stale_after=p.stale_after)


class RflySimTruthNode(Node):
    NODE_NAME = 'rflysim_truth'   # also the logger of start-up failures (ros/runner.py)
    PARAMETERS = PARAMETERS

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.p = p = declare_parameters(self, self.PARAMETERS)
        if p.gps_order not in convert.GPS_ORDERS:
            raise ValueError(f'gps_order must be one of {sorted(convert.GPS_ORDERS)}')
        self._origin_fix = convert.fix_template(p.map_frame)
        self.diagnostics = Diagnostics(self, period=p.diagnostics_period)
        self.tf = self.create_publisher(TFMessage, '/tf', TF)
        self.map_origin = self.create_publisher(NavSatFix, _relative(p.topic_prefix, 'map_origin'), LATCHED)
        self.vehicles: dict[int, Vehicle] = {}
        self.receiver = UdpReceiver('rflysim-udp', on_error=self.diagnostics.receive_failed)
        for copter_id in dict.fromkeys(int(i) for i in p.copter_ids):
            vehicle = Vehicle(self, copter_id, p)
            endpoint = UdpEndpoint(p.bind_address, vehicle.port, name=f'copter {copter_id}',
                                   receive_buffer=p.receive_buffer_bytes)
            self.receiver.add(endpoint, functools.partial(self._on_datagram, vehicle, endpoint))
            self.vehicles[copter_id] = vehicle
        self.receiver.start()
        self.get_logger().info(
            f'listening on {p.bind_address} for CopterIDs '
            + ', '.join(f'{v.copter_id} (udp {v.port})' for v in self.vehicles.values()))

    # transport → codec
    def _on_datagram(self, vehicle: Vehicle, endpoint: UdpEndpoint, data: bytes, now_ns: int):
        vehicle.stats.packet(len(data), now_ns)
        vehicle.stats.set_drops(endpoint.kernel_drops)
        try:
            record = rflysim.decode(data, expected_copter_id=vehicle.copter_id)
            if isinstance(record, rflysim.TruthState):
                stamp = self._truth_stamp(record, now_ns)
            if isinstance(record, (rflysim.TruthState, rflysim.GpsOrigin)):
                # NaN/Inf would reach /tf, odometry, the IMU and the fixes
                require_finite(record, f'RflySim {type(record).__name__}')
        except CodecError as err:   # bad bytes, a runnedTime no stamp can hold, NaN or ±Inf
            self.diagnostics.bad_input(vehicle.stats, err, now_ns)
            return
        if isinstance(record, rflysim.TruthState):
            self._publish_truth(vehicle, record, stamp)
        elif isinstance(record, rflysim.CrashNotice):
            vehicle.collision.publish(vehicle.cdr.collision(record, ns_to_stamp(now_ns)))
            vehicle.stats.publish()
        elif isinstance(record, rflysim.GpsOrigin):
            self.map_origin.publish(convert.fix_cdr(self._origin_fix, record.pos_gps,
                                                    ns_to_stamp(now_ns), self.p.gps_order))
            vehicle.stats.publish()
        else:  # known forms that carry nothing we publish (outCopterStruct)
            key = 'ignored_' + type(record).__name__
            vehicle.stats.count(key)

    # codec → conversions → publishers
    def _truth_stamp(self, state, now_ns: int):
        """The header stamp: runnedTime (stamp_source sim; StampError when NaN, ±Inf, negative
        or beyond int32 seconds) or the receive time."""
        if self.p.stamp_source == 'sim':
            return seconds_to_stamp(state.runned_time, source='RflySim', field='runnedTime')
        return ns_to_stamp(now_ns)

    def _publish_truth(self, vehicle: Vehicle, state, stamp) -> None:
        cdr, stamp = vehicle.cdr, (stamp.sec, stamp.nanosec)
        enu = convert.EnuState.from_truth(state)
        vehicle.truth.publish(cdr.truth(state, stamp))
        vehicle.odom.publish(cdr.odometry(enu, stamp))
        vehicle.imu.publish(cdr.imu(enu, stamp))
        vehicle.fix.publish(cdr.nav_sat_fix(state, stamp))
        published = 4
        if self.p.publish_tf:
            self.tf.publish(cdr.transform(enu, stamp))
            published += 1
        if state.collision_target != vehicle.last_target:  # publish changes, not every packet
            vehicle.last_target = state.collision_target
            if state.collision_target is not None:
                vehicle.collision.publish(cdr.collision(
                    rflysim.CrashNotice(state.copter_id, state.collision_target), stamp))
                published += 1
        vehicle.stats.publish(published)

    def close(self) -> None:
        self.receiver.stop()


def main(argv=None) -> int:
    return run_node(RflySimTruthNode, argv)


if __name__ == '__main__':
    sys.exit(main())
